#!/usr/bin/env bash
# t8000-ptrace-record.sh - where perf_event_open is refused (a seccomp
# filter, as Docker's default profile), `record --sampler auto` falls back
# to the ptrace sampler, says so with the fix, and records the same
# profile: the 70/30 shares, and the cases every sampler passes
# (lib-record.sh: exit statuses, signal deaths, SIGINT, the command's stdio
# untouched). Nothing pretends: the filter makes the real perf_event_open
# syscall fail with EPERM.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-record.sh"

NOPERF=$FIX/noperf

test_expect_success 'the seccomp helper really refuses perf_event_open' '
	"$NOPERF" "$TF" record --sampler perf -o p.pb.gz -- true 2>err; rc=$?
	test $rc = 1 && expect_contains err "perf_event_open refused" && test ! -e p.pb.gz
'

test_expect_success 'auto falls back to ptrace and says why, with the fix' '
	"$NOPERF" "$TF" record --freq 999 -o run.pb.gz -- "$FIX/split7030" 12 2>err &&
	expect_contains err "sampling with ptrace: perf_event_open is refused" &&
	expect_contains err "seccomp" && expect_contains err "fix: " &&
	expect_contains err "--cap-add " &&
	test "$(grep -c "sampling with ptrace" err)" = 1 &&
	expect_contains err "wrote '\''run.pb.gz'\''"
'

test_expect_success 'the 70/30 workload shows 70/30 under ptrace' '
	go tool pprof -top run.pb.gz >top.txt 2>/dev/null &&
	expect_near "$(cum_share top.txt hot_seventy)" 70 5 "hot_seventy cum%" &&
	expect_near "$(cum_share top.txt cold_thirty)" 30 5 "cold_thirty cum%" &&
	expect_near "$(cum_share top.txt main)" 100 3 "main cum%"
'

test_expect_success 'and the same shares as perf gives, where perf is allowed' '
	"$TF" record -q --sampler perf --freq 999 -o perf.pb.gz -- "$FIX/split7030" 12 &&
	go tool pprof -top perf.pb.gz >ptop.txt 2>/dev/null &&
	h1=$(cum_share top.txt hot_seventy) && h2=$(cum_share ptop.txt hot_seventy) &&
	expect_near "$h1" "$h2" 5 "ptrace vs perf hot_seventy cum%"
'

test_expect_success 'the run file says sampler=ptrace and what was sampled' '
	go tool pprof -comments run.pb.gz >c.txt 2>/dev/null &&
	expect_contains c.txt "testflame.sampler=ptrace" &&
	expect_contains c.txt "testflame.rung=ptrace" &&
	expect_contains c.txt "testflame.event=cpu-clock" &&
	expect_contains c.txt "testflame.kernel=false" &&
	expect_contains c.txt "testflame.exit_status=0" &&
	go tool pprof -raw run.pb.gz >raw.txt 2>/dev/null &&
	expect_contains raw.txt "samples/count cpu/nanoseconds" &&
	grep -q "process:\[split7030\]" raw.txt
'

# Two runs of the workload, one recorded, one timed: a VM that takes time
# from one of them moves the ratio (77.8% in one CI run), so it gets the
# retry that measured shares get.
test_expect_shares 'the cpu time weights add up to the CPU the workload used' '
	"$NOPERF" "$TF" record -q --freq 99 -o w99.pb.gz -- "$FIX/threads8" 4 20 &&
	go tool pprof -comments w99.pb.gz >c.txt 2>/dev/null &&
	value=$(sed -n "s/.*=samples=[0-9]* value=\([0-9]*\) .*/\1/p" c.txt | head -1) &&
	/usr/bin/time -f "%U %S" -o cpu.txt "$FIX/threads8" 4 20 &&
	used=$(awk "{ printf \"%d\", (\$1 + \$2) * 1e9 }" cpu.txt) &&
	expect_near "$(awk -v v=$value -v u=$used "BEGIN { print 100 * v / u }")" 100 20 \
		"profile value as % of the CPU time the workload takes"
'

test_expect_success '--sampler ptrace works where perf is allowed too' '
	"$TF" record --sampler ptrace --freq 999 -o direct.pb.gz -- "$FIX/split7030" 5 2>err &&
	expect_not_contains err "sampling with ptrace" &&
	go tool pprof -comments direct.pb.gz 2>/dev/null | grep -q "testflame.sampler=ptrace" &&
	go tool pprof -top direct.pb.gz 2>/dev/null >top.txt &&
	expect_near "$(cum_share top.txt hot_seventy)" 70 7 "hot_seventy cum%"
'

SAMPLER=ptrace WITH=$NOPERF N=1
record_process_cases

test_expect_success 'a background process the command leaves behind keeps running, untraced' '
	"$NOPERF" "$TF" record -q -o bg.pb.gz -- sh -c "sleep 95.5 >/dev/null 2>&1 &" &&
	pid=$(pgrep -f "sleep 95.5") && test -n "$pid" &&
	grep -q "^TracerPid:[[:space:]]*0$" /proc/$pid/status &&
	kill $pid
'

test_expect_success 'job control: a stopped and continued child works as without testflame' '
	"$NOPERF" "$TF" record -q -o stop.pb.gz -- sh -c "
		sleep 0.3 & p=\$!
		kill -STOP \$p; sleep 0.2
		s=\$(sed \"s/.*) //\" /proc/\$p/stat | cut -c1)
		kill -CONT \$p; wait \$p; echo \$s" >out &&
	grep -Eq "^[Tt]$" out
'

test_expect_code 1 'where ptrace is refused too, one clear line and no run file' '
	"$NOPERF" --no-ptrace "$TF" record -o none.pb.gz -- true 2>err; rc=$?
	test $(wc -l <err) -le 2 && expect_contains err "cannot trace the command" &&
	expect_contains err "fix: " && test ! -e none.pb.gz && exit $rc
'

test_done
