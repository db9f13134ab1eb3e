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

# lib-go.sh's package (tfwork.test: TestEncode, TestParse), built once:
# Encode loops TF_FACTOR times as long as Parse, and Parse runs TF_SETUP
# rounds when the package initialises, outside any test (about 0.2 s a
# 100M rounds on this machine)
GO_ROUNDS=50000000 go_pkg pkg factor &&
	cat >pkg/setup.go <<-\EOF
	package work

	import (
		"os"
		"strconv"
	)

	func envInt(k string, d int) int {
		if v, err := strconv.Atoi(os.Getenv(k)); err == nil {
			return v
		}
		return d
	}

	var factor = envInt("TF_FACTOR", 1)
	var ready = Parse(envInt("TF_SETUP", 0))
	EOF

rec() { # OUT SETUP FACTOR
	(cd pkg && TF_SETUP=$2 TF_FACTOR=$3 "$TF" record -q --freq 499 -o "../$1" -- \
		go test -count=1 ./... >/dev/null 2>&1)
}

test_expect_success 'more work outside the tests: tfwork.test is shown, not gated' '
	rec base.pb.gz 50000000 1 && rec outside.pb.gz 200000000 1 &&
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
	rec slow.pb.gz 50000000 4 &&
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
