#!/usr/bin/env bash
# t0929-go-package-outside.sh - a row that holds tests is judged through
# them. `go test ./...` runs each package's test binary (tfwork.test), the
# parent of that package's tests; its own work outside them (init, the
# runtime, GC) is reported like "[outside tests]": shown with its own
# cost, not gated unless gate.outside. A branch whose tests did not change
# but whose package does more outside them passes (gorilla/mux's
# README-only branch failed on mux.test at +17% under load); a slowed
# test still fails the gate, named with its function.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-go.sh"
# one build cache for the suite's Go tests (lib-go.sh's own is cold)
export GOCACHE=${TESTFLAME_CACHE_DIR:-$SCRATCH}/gocache

# lib-go.sh's package (tfwork.test: TestEncode, TestParse), and Parse
# SETUP rounds when the package initialises, outside any test
pkg() { # DIR SETUP FACTOR
	GO_ROUNDS=50000000 go_pkg "$1" "$3" &&
		printf 'package work\n\nvar ready = Parse(%s)\n' "$2" >"$1/setup.go"
}

rec() { # DIR OUT
	(cd "$1" && "$TF" record -q --freq 499 -o "../$2" -- go test -count=1 ./... >/dev/null 2>&1)
}

# about 0.2 s a 100M rounds on this machine
pkg base 100000000 1 && pkg outside 400000000 1 && pkg slow 100000000 4

test_expect_success 'more work outside the tests: tfwork.test is shown, not gated' '
	rec base base.pb.gz && rec outside outside.pb.gz &&
	"$TF" compare --json base.pb.gz outside.pb.gz >out.json &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("out.json"))["tests"]}
	p = t["tfwork.test"]
	assert p["nested"] == 2 and p["outside"] and not p["gated"], p
	assert p["measure"] == "samples", p
	assert p["delta_pct"] > 100, p
	e = t["TestEncode"]
	assert e["parent"] == "tfwork.test" and e["verdict"] != "regressed", e
	EOF
	grep -A2 "testcase name=\"tfwork.test\"" testflame-report/junit.xml >junit.row &&
	expect_contains junit.row "regressed (outside the tests, not gated)" &&
	expect_not_contains testflame-report/junit.xml "<failure"
'

test_expect_code 3 'gate.outside: the package binary'"'"'s own work fails the gate' '
	printf "gate:\n  outside: true\n" >gate.yml &&
	"$TF" compare -q --config gate.yml base.pb.gz outside.pb.gz
'

test_expect_success 'a slowed test fails the gate, named with its function; tfwork.test does not' '
	rec slow slow.pb.gz &&
	{ "$TF" compare --json base.pb.gz slow.pb.gz >slow.json; test $? = 3; } &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("slow.json"))["tests"]}
	e = t["TestEncode"]
	assert e["verdict"] == "regressed", e
	assert e["functions"][0]["name"] == "example.com/tfwork.Encode", e["functions"]
	assert t["tfwork.test"]["verdict"] != "regressed" or not t["tfwork.test"]["gated"], t["tfwork.test"]
	EOF
'

test_done
