#!/usr/bin/env bash
# t0930-offcpu.sh - off-CPU time: where perf allows it, every switch-out of
# the command's threads is recorded with its stack, and the time each
# thread waited becomes off-cpu samples and a wall column (CPU + off-CPU).
# A suite of three tests (the waits fixture, one program per test) where
# the middle one starts to wait (a nanosleep, a contended mutex, an fsync,
# a poll on a pipe fed late, a waitpid on a slow child): compare calls it
# regressed by its waiting, naming the blocking call and the test's own
# function, while its CPU-only verdict (--measure cpu) stays unchanged; a
# suite whose tests only burn CPU gets the same verdicts either way.
. "$(dirname "$0")/lib.sh"

if ! offcpu_works; then
	test_skip "off-CPU time" "perf refuses the context-switch event here (see testflame doctor)"
	test_done
	exit 0
fi

mkdir suite && for t in test_a test_b test_c; do ln -s "$FIX/waits" suite/$t; done
# no command substitution: the shell's read of $(dirname) waits on a pipe
# for its child's whole life (11 to 34 ms at a load of 1.4), outside the
# tests, and that moved by 10 ms between two runs at a load of 2
cat >suite/run.sh <<\EOF
#!/bin/sh
cd "${0%/*}" &&
./test_a none 30 30 && ./test_b "${KIND:-none}" "${MS:-30}" "${CPU:-60}" && ./test_c none 30 30
EOF
chmod +x suite/run.sh

rec() { # NAME [VAR=VALUE...]: record the suite into NAME.pb.gz
	local name=$1
	shift
	env "$@" "$TF" record -q -o "$name.pb.gz" -- suite/run.sh >/dev/null 2>"$name.err" ||
		{ cat "$name.err"; return 1; }
}
# a test's verdict in a report.json (jq: this script reads many)
verdict() { # REPORT_JSON TEST
	jq -r ".tests[] | select(.name == \"$2\") | .verdict" "$1"
}
meta() { # RUNFILE TEST FIELD
	go tool pprof -comments "$1" 2>/dev/null | sed -n "s/^testflame\.test\.$2=.* $3=\([0-9]*\).*/\1/p"
}

test_expect_success 'the run file has off-cpu and wall columns, and each test its time waited' '
	rec base &&
	"$TF" show base.pb.gz >show.txt &&
	expect_contains show.txt "samples/count, cpu/nanoseconds (default), off-cpu/nanoseconds, wall/nanoseconds" &&
	{ grep -Eq "^  offcpu +switches$" show.txt || fail "show does not say offcpu switches"; } &&
	test "$(meta base.pb.gz test_b offcpu_ns)" -lt 5000000
'

# many short waits (3,000 naps of 20 us, no computing to be preempted
# in): a test's CPU and its waits are its wall time, each moment once,
# less the time it was preempted (the machine's) and the recorder's work
# on the switch-outs it sampled (7-9 us each: 7-11 ms under it at a load
# of 7); counted from the switch-out's stack, which the kernel takes before
# the thread's CPU time ends, they were 24-40 ms over it. At default
# settings: 3,000 switch-outs in half a second are above the cap, whose
# unsampled waits count by their switch records, not as N times a sample
test_expect_success 'many short sleeps: the test'"'"'s CPU and waits add up to its wall time' '
	rec naps KIND=naps CPU=0 &&
	cpu=$(meta naps.pb.gz test_b count) && waited=$(meta naps.pb.gz test_b offcpu_ns) &&
	apart=$(meta naps.pb.gz test_b offcpu_apart_ns) && wall=$(meta naps.pb.gz test_b wall_ns) &&
	waits=$(meta naps.pb.gz test_b offcpu_waits) &&
	sum=$((cpu + waited + apart)) &&
	{ test "$waits" -ge 2900 || fail "test_b waited $waits times, not 3,000"; } &&
	{ { test "$sum" -le $((wall + 1000000)) && test "$sum" -ge $((wall * 8 / 10)); } ||
		fail "test_b: CPU $cpu + waits $waited + apart $apart = $sum ns, wall $wall ns"; }
'

# each kind: the blocking call and its caller, where the wait grew by the
# 30 ms the fixture waits there (less 10%), whatever else waited more on a
# busy machine (a thread's start, a woken thread's wait for a CPU)
for case in "sleep:__nanosleep:nap:sleep" "mutex:pthread_mutex_lock:wait_mutex:lock" \
	    "poll:__poll:wait_poll:poll" "waitpid:__nanosleep:nap:sleep"; do
	IFS=: read -r kind call caller why <<<"$case"
	test_expect_success "a $kind: regressed by waiting, $call called from $caller ($why)" '
		rec '"$kind"' KIND='"$kind"' &&
		{ "$TF" compare --report r-'"$kind"' base.pb.gz '"$kind"'.pb.gz >out 2>err; rc=$?; } &&
		test $rc = 3 || { cat out err; exit 1; }
		expect_contains out "test_b (waiting)" &&
		j=r-'"$kind"'/report.json &&
		expect_eq "$(verdict $j test_b)" regressed &&
		expect_eq "$(jq -r ".tests[] | select(.name == \"test_b\") | .decided_by" $j)" waiting &&
		test "$(jq -r ".tests[] | select(.name == \"test_b\") | .cpu_verdict" $j)" != regressed &&
		site=$(jq -r "[.tests[] | select(.name == \"test_b\") | .waits.sites[] | select((.call | startswith(\"'"$call"'\")) and .caller == \"'"$caller"'\" and .reason == \"'"$why"'\") | .delta_ns] | add // 0 | floor" $j) &&
		{ test "$site" -ge 27000000 ||
			fail "'"$call"' from '"$caller"' ('"$why"') waited $site ns more, not 30 ms: $(jq -c ".tests[] | select(.name == \"test_b\") | .waits.sites" $j)"; } &&
		waited=$(jq -r ".tests[] | select(.name == \"test_b\") | .waits.delta_ns | floor" $j) &&
		{ { test "$waited" -gt 15000000 && test "$waited" -lt 150000000; } ||
			fail "test_b waited $waited ns more"; } &&
		{ ! printf "%s\n" "$(verdict $j test_a)" "$(verdict $j test_c)" | grep -qx regressed ||
			fail "a neighbour regressed: test_a $(verdict $j test_a), test_c $(verdict $j test_c)"; } &&
		{ grep -q "test_waits" r-'"$kind"'/test_b.offcpu.folded ||
			fail "no test_waits in test_b.offcpu.folded"; } &&
		"$TF" compare --measure cpu --report c-'"$kind"' base.pb.gz '"$kind"'.pb.gz >cpu.out 2>&1 &&
		cpu=$(verdict c-'"$kind"'/report.json test_b) &&
		case $cpu in unchanged|inconclusive) ;; *) fail "CPU alone: test_b $cpu" ;; esac
	'
done

# a waitpid is the child'"'"'s time: the parent'"'"'s wait is left apart, not counted twice.
# A 30 ms wait counts at least 27 ms, and no more than the fixture says
# its thread was off CPU while it waited, and 10 ms of the test's other
# waits (its start, its exit): a woken thread waits for a CPU on a busy
# machine, and that is time off CPU too (a 30 ms sleep counted 60 ms at a
# load of 9, when the fixed bound of 55 ms failed); a child's wait counts
# while the test's thread waits for it (the fixture's child sleeps once
# the parent is about to wait); another 30 ms counted (the wait counted
# twice, an idle worker's) is not.
# The parent's wait apart is the child's whole life, its start included:
# its 30 ms sleep at least, and as many wake-ups (the child's to start, to
# exit, the parent's) as a busy machine delays (149 ms seen at a load of 7).
test_expect_success 'a waitpid on a slow child: the parent'"'"'s wait apart, the child'"'"'s counted' '
	apart=$(meta waitpid.pb.gz test_b offcpu_apart_ns) && counted=$(meta waitpid.pb.gz test_b offcpu_ns) &&
	{ { test "$apart" -ge 27000000 && test "$apart" -lt 500000000; } ||
		fail "the waitpid, apart: $apart ns, not the child'"'"'s life (27 to 500 ms)"; } &&
	off=$(sed -n "s/^waits: waitpid off CPU \([0-9]*\) ns$/\1/p" waitpid.err) &&
	{ { test "$counted" -ge 27000000 && test "$counted" -le $((off + 10000000)); } ||
		fail "the child'"'"'s sleep counted $counted ns, the parent off CPU $off ns"; } &&
	grep -q "wait_child" r-waitpid/test_b.offcpu.folded
'

# an fsync: the fixture syncs until its thread has been blocked 30 ms (its
# schedstat) and says how long it was off CPU then (blocked, or woken and
# waiting for a CPU: on a busy machine, most of it). The waiting grows by
# no less than the first (less 10%) and no more than the second (and
# 10 ms of the test's other waits: 5 ms failed by 0.2 ms at a load of 7),
# on any disk that makes an fsync wait at all;
# what the syncs cost in CPU is the disk's, so either may lead the verdict.
# At default settings: where the cap samples one switch-out in N, the
# waits no sample saw still count by their switch records
test_expect_success 'an fsync: regressed, waiting as long as the fixture was off CPU, fsync called from wait_fsync' '
	if [ "$(stat -f -c %T .)" = tmpfs ]; then echo "# skipped: fsync on tmpfs does not wait"; exit 0; fi
	rec fsync KIND=fsync MS=30 &&
	read -r blocked off < <(sed -n "s/^waits: fsync blocked \([0-9]*\) ns, off CPU \([0-9]*\) ns$/\1 \2/p" fsync.err) &&
	{ "$TF" compare --report r-fsync base.pb.gz fsync.pb.gz >out 2>err; rc=$?; } &&
	test $rc = 3 || { cat out err; exit 1; }
	j=r-fsync/report.json &&
	expect_eq "$(verdict $j test_b)" regressed &&
	jq -r ".tests[] | select(.name == \"test_b\") | .grew[]" $j >grew && expect_contains grew waiting &&
	expect_contains out "test_b: waiting +" &&
	waited=$(jq -r ".tests[] | select(.name == \"test_b\") | .waits.delta_ns | floor" $j) &&
	{ { test "$waited" -ge $((blocked * 9 / 10)) && test "$waited" -le $((off + 10000000)); } ||
		fail "test_b waited $waited ns more; the fixture was blocked $blocked ns, off CPU $off ns"; } &&
	jq -r ".tests[] | select(.name == \"test_b\") | .waits.sites[] | select(.call == \"fsync\" and .caller == \"wait_fsync\" and .reason == \"io\") | .delta_ns | floor" $j >site &&
	site=$(awk "{ s += \$1 } END { printf \"%d\", s }" site) &&
	{ test "$site" -ge $((waited / 2)) || fail "fsync from wait_fsync (io): $site ns of $waited"; }
'

# four idle workers of a pool while the test sleeps: the sleep is the
# test'"'"'s wait, the workers'"'"' 4 x 30 ms are shown apart (the sleep
# starts once all four are idle: a worker a busy machine started late was
# idle less than the sleep)
test_expect_success 'idle pool threads are left apart, the test'"'"'s own sleep counted' '
	rec cond KIND=cond &&
	counted=$(meta cond.pb.gz test_b offcpu_ns) && apart=$(meta cond.pb.gz test_b offcpu_apart_ns) &&
	off=$(sed -n "s/^waits: cond off CPU \([0-9]*\) ns$/\1/p" cond.err) &&
	{ { test "$counted" -ge 27000000 && test "$counted" -le $((off + 10000000)); } ||
		fail "the sleep counted $counted ns, the test off CPU $off ns"; } &&
	{ test "$apart" -gt 90000000 || fail "the idle workers apart: $apart ns, not over 90 ms"; }
'

# an unchanged suite whose test_b reads a file (64 MiB, through a mapping)
# that the page cache held in the base's run and not in the head's, as a
# build, a checkout or a neighbour's memory pressure drops a program's
# pages: its wait for the disk is measured, labelled page-in, and fails
# nothing (a README-only branch of t0920's suite failed on one, 60 ms in
# _start). How long the fixture was blocked is only a sign that the disk
# was read: its wall time less its CPU and run-queue time also holds the
# time a busy host took the VM's CPU away (1.1-11 ms blocked beside
# 0.7-10.7 ms counted at a load of 7). A test regressed by its CPU alone is
# the CPU gate's, one run a side on a busy machine (test_c +29.2%, 32.8 ->
# 42.4 ms in exec's elf_load and _start, at a load of 3.8), not a page-in's
test_expect_success 'a file read from disk once: a page-in, shown, not a regression' '
	if [ "$(stat -f -c %T suite)" = tmpfs ]; then echo "# skipped: tmpfs has no disk"; exit 0; fi
	head -c 64M /dev/zero | tr "\0" x >suite/waits-pagein.data && sync suite/waits-pagein.data &&
	rec warm KIND=pagein &&
	dd if=suite/waits-pagein.data iflag=nocache count=0 2>/dev/null &&
	rec cold KIND=pagein &&
	blocked=$(sed -n "s/^waits: pagein blocked \([0-9]*\) ns$/\1/p" cold.err) &&
	{ test "$blocked" -gt 2000000 ||
		{ echo "# skipped: the disk paged 64 MiB in, blocked $blocked ns"; exit 0; }; } &&
	{ "$TF" compare --report r-pagein warm.pb.gz cold.pb.gz >out 2>err; rc=$?; } ;
	grew=$(jq -r "[.tests[] | select(.verdict == \"regressed\") | .grew[]] | unique | join(\",\")" r-pagein/report.json) &&
	{ test $rc = 0 || { test $rc = 3 && test "$grew" = cpu; } ||
		{ cat out err; fail "an unchanged suite failed on $blocked ns of page-ins (exit $rc, grew: $grew)"; }; } &&
	w=$(jq -r ".tests[] | select(.name == \"test_b\") | .waits.verdict" r-pagein/report.json) &&
	{ test "$w" = unchanged || fail "test_b by its waits: $w"; } &&
	pagein=$(meta cold.pb.gz test_b offcpu_pagein_ns) && waited=$(meta cold.pb.gz test_b offcpu_ns) &&
	{ { test "${pagein:-0}" -gt 0 && test "$pagein" -ge $((waited * 9 / 10)); } ||
		fail "test_b waited $waited ns, ${pagein:-none} of them page-ins"; } &&
	go tool pprof -sample_index=off-cpu -tagfocus=wait=page-in -traces cold.pb.gz 2>/dev/null >traces &&
	expect_contains traces wait_pagein
'

# CPU alone: test_b computes 40 ms more, nothing waits; both gates agree
# on every test they judge
test_expect_success 'a suite that only burns CPU: the same verdicts with and without the waits' '
	rec cpu CPU=100 &&
	{ "$TF" compare --json base.pb.gz cpu.pb.gz >both.json 2>/dev/null; test $? = 3; } &&
	{ "$TF" compare --json --measure cpu base.pb.gz cpu.pb.gz >cpu.json 2>/dev/null; test $? = 3; } &&
	jq -r ".tests[] | select(.gated) | \"\(.name) \(.verdict)\"" both.json | sort >v-both &&
	jq -r ".tests[] | select(.gated) | \"\(.name) \(.verdict)\"" cpu.json | sort >v-cpu &&
	diff v-both v-cpu && expect_contains v-cpu "test_b regressed" &&
	expect_eq "$(jq -r ".tests[] | select(.name == \"test_b\") | .grew | join(\",\")" both.json)" cpu
'

# a suite that switches ten thousands of times a second: above the cap,
# one switch-out in N is recorded with its stack, and the recording says
# so once the command has ended, never inside a line the command is
# writing to the same stderr (cargo writes "warning" and ": unexpected
# `cfg`..." apart: testflame's line landed between them)
test_expect_success 'above --off-cpu-max, one switch-out in N has its stack, and the run says so' '
	test -x "$BUILD/bench/pingpong" || { echo "# skipped: no bench/pingpong built"; exit 0; }
	"$TF" record --off-cpu-max 500 -o pp.pb.gz -- sh -c "printf warning >&2; \"$BUILD/bench/pingpong\" threads 20000; echo : the rest >&2" 2>err &&
	expect_contains err "above --off-cpu-max 500: one in" &&
	{ grep -qx "warning: the rest" err || fail "the command'"'"'s line was split: $(cat err)"; } &&
	"$TF" show pp.pb.gz >show.txt &&
	period=$(sed -n "s/^ *offcpu_period_max *//p" show.txt) && test "$period" -gt 1
'

test_expect_success '--off-cpu off: no off-CPU columns; --off-cpu on where refused fails' '
	"$TF" record -q --off-cpu off -o off.pb.gz -- true &&
	"$TF" show off.pb.gz >show.txt && expect_not_contains show.txt "off-cpu/nanoseconds"
'

test_done
