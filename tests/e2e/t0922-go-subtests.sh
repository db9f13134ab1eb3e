#!/usr/bin/env bash
# t0922-go-subtests.sh - Go subtests under their own names. A table-driven
# test runs one closure for all its subtests, so its stacks cannot tell
# them apart; with the suite's `go test -json` read (--runner-report),
# each sample goes to the subtest that was running when it was taken:
# TestTable/small, /large and "/with_space" (Go's name for "with space")
# hold 2:6:4 of TestTable's samples.
. "$(dirname "$0")/lib.sh"
GOSUB=$TOP/tests/fixtures/suites/gosub

if ! need go; then
	test_skip 'Go subtests' 'go is not installed'
	test_done
	exit
fi

test_expect_shares 'subtests of one closure, told apart by the time go test -json gives' '
	mkdir mod && cp "$GOSUB"/*.go mod/ && cd mod &&
	printf "module gosub\n\ngo 1.19\n" >go.mod &&
	GOCACHE=$GO_CACHE GOPATH=$SCRATCH/gopath GOFLAGS=-mod=mod \
		"$TF" record -q --freq 999 --runner-report go.json -o ../go.pb.gz -- \
		sh -c "go test -json -count=1 . >go.json" &&
	cd .. && expect_shares go.pb.gz 8 TestTable/small:2 TestTable/large:6 TestTable/with_space:4 &&
	"$TF" show --json go.pb.gz >show.json &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("show.json"))["tests"]}
	for n in ("TestTable", "TestTable/small", "TestTable/large", "TestTable/with_space", "TestPlain"):
	    assert n in t and t[n]["runner_ns"] is not None, (n, sorted(t))
	assert "TestTable/func1" not in t, sorted(t)
	EOF
'

test_done
