#!/usr/bin/env bash
# t0933-go-parked.sh - a Go test's goroutine parked is no thread's wait.
# When a goroutine blocks (a channel, t.Parallel, a subtest, a timer), its
# thread switches to the scheduler's stack (runtime.mcall) and looks for
# other work, then sleeps; Go 1.19's mcall keeps the frame pointer, so
# that thread's stack still shows the parked goroutine's frames above the
# scheduler's. Its time idle is the runtime's (an idle thread, or one that
# spins in runqgrab's usleep, for 1.08 s on a loaded machine under
# go-cmp's TestDiff, flagged on a README-only branch), not the test's: the
# frames above the switch name no test. Here TestPark waits on a channel
# that another goroutine fills after TF_NAP ms, the same code on both
# sides: it is not "regressed" by waiting, and its waits stay at what its
# own thread blocks on.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-go.sh"

if ! offcpu_works; then
	test_skip "a parked goroutine" "perf refuses the context-switch event here (see testflame doctor)"
	test_done
	exit 0
fi

GO_ROUNDS=10000000 go_pkg pkg 1 &&
	cat >pkg/park_test.go <<-\EOF
	package work

	import (
		"os"
		"strconv"
		"testing"
		"time"
	)

	func TestPark(t *testing.T) {
		nap, _ := strconv.Atoi(os.Getenv("TF_NAP"))
		for i := 0; i < 20; i++ {
			<-time.After(time.Duration(nap) * time.Millisecond)
		}
	}
	EOF

rec() { # OUT NAP
	(cd pkg && TF_NAP=$2 "$TF" record -q -o "../$1" -- go test -count=1 ./... >/dev/null 2>&1)
}

test_expect_success 'a goroutine parked 20 times for 20 ms instead of 1: not regressed, no wait of the test' '
	rec base.pb.gz 1 && rec head.pb.gz 20 &&
	{ "$TF" compare --json base.pb.gz head.pb.gz >cmp.json; echo $? >cmp.rc; } &&
	python3 - <<-\EOF
	import json
	t = {x["name"]: x for x in json.load(open("cmp.json"))["tests"]}
	p = t["TestPark"]
	assert p["parent"] == "tfwork.test", p
	assert p["verdict"] != "regressed", (p["verdict"], p["reason"])
	assert p["head"]["offcpu_ns"] < 100e6, p["head"]
	assert open("cmp.rc").read().strip() == "0", open("cmp.rc").read()
	EOF
'

test_done
