#!/usr/bin/env bash
# t0100-record.sh - `testflame record` on known workloads: shares of known
# hot functions, exit statuses, the command's stdio/env/cwd untouched,
# signals (the cases every sampler passes: lib-record.sh, as t8000 runs
# them under ptrace), and bad input.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-record.sh"

test_expect_success 'a 70/30 workload shows 70/30 in go tool pprof' '
	"$TF" record --freq 999 -o run.pb.gz -- "$FIX/split7030" 12 2>err &&
	test -s run.pb.gz &&
	expect_contains err "wrote '\''run.pb.gz'\''" &&
	go tool pprof -top run.pb.gz >top.txt 2>/dev/null &&
	hot=$(cum_share top.txt hot_seventy) && cold=$(cum_share top.txt cold_thirty) &&
	expect_near "$hot" 70 5 "hot_seventy cum%" &&
	expect_near "$cold" 30 5 "cold_thirty cum%"
'

test_expect_success 'the run file says what was sampled' '
	go tool pprof -raw run.pb.gz >raw.txt 2>/dev/null &&
	expect_contains raw.txt "samples/count cpu/nanoseconds" &&
	go tool pprof -comments run.pb.gz >comments.txt 2>/dev/null &&
	expect_contains comments.txt "testflame.event=cpu-clock" &&
	expect_contains comments.txt "testflame.sampler=perf" &&
	expect_contains comments.txt "testflame.exit_status=0" &&
	expect_contains comments.txt "testflame.lost=0"
'

test_expect_success 'samples carry test, process, pid and tid labels' '
	go tool pprof -raw run.pb.gz >raw.txt 2>/dev/null &&
	expect_contains raw.txt "test:[" &&
	grep -q "process:\[split7030\]" raw.txt &&
	grep -q "pid:\[[0-9]" raw.txt &&
	grep -q "tid:\[[0-9]" raw.txt
'

SAMPLER=perf WITH= N=0
record_process_cases

test_expect_code 127 'a missing command exits 127 with one clear line' '
	"$TF" record -o nope.pb.gz -- no-such-command-xyz 2>err; rc=$?
	test $(wc -l <err) = 1 && expect_contains err "no-such-command-xyz" &&
	expect_contains err "not found" && test ! -e nope.pb.gz && exit $rc
'

test_expect_code 126 'a command that is not executable exits 126' '
	printf "x\n" >notexec && "$TF" record -q -o n.pb.gz -- ./notexec
'

test_expect_code 2 'an unknown flag is a usage error naming the flag' '
	"$TF" record --bogus -- true 2>err; rc=$?
	expect_contains err "--bogus" && exit $rc
'

test_expect_code 2 'a missing -- is a usage error' '
	"$TF" record true 2>err; rc=$?
	expect_contains err "--" && exit $rc
'

test_expect_code 2 'a bad --freq value names the flag' '
	"$TF" record --freq abc -- true 2>err; rc=$?
	expect_contains err "--freq" && exit $rc
'

test_expect_success 'a signal ignored at start stays ignored by testflame and the command' '
	"$TF" record -q -o ign.pb.gz -- "$FIX/split7030" 4 &
	tf=$!
	wait_for_proc "^$FIX/split7030 4" &&
	kill -INT $tf && wait $tf
'

test_expect_success 'what testflame says while the suite runs waits for its end, never splitting a line of the suite' '
	"$TF" record --off-cpu-max 10 -o notes.pb.gz -- sh -c "printf start-; i=0; while [ \$i -lt 100 ]; do sleep 0.002; i=\$((i + 1)); done; printf \"end\\n\"" >both 2>&1 &&
	expect_contains both "above --off-cpu-max 10" &&
	test "$(head -n 1 both)" = start-end
'

test_done
