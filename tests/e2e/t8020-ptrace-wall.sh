#!/usr/bin/env bash
# t8020-ptrace-wall.sh - `--event wall` with the ptrace sampler (where perf
# is refused): every thread is sampled whether it runs or waits; off-CPU
# samples end in a frame naming the syscall the thread waits in, so a test
# that sleeps shows where and how long, in the same sample types as perf's
# off-CPU recording (cpu, off-cpu, wall). With perf, --event wall is
# cpu-clock and every switch-out (t0930).
. "$(dirname "$0")/lib.sh"

# sleepy 40 20: 40 rounds of 20 ms of CPU in burn_cpu, then 20 ms asleep
# in take_a_nap (nanosleep): 800 ms asleep, whatever the CPU part takes.

test_expect_success '--event wall where perf is refused: ptrace, in the off-CPU sample types' '
	"$FIX/noperf" "$TF" record --event wall --freq 199 -o wall.pb.gz -- "$FIX/sleepy" 40 20 2>err &&
	expect_contains err "sampling with ptrace" &&
	go tool pprof -comments wall.pb.gz 2>/dev/null >c.txt &&
	expect_contains c.txt "testflame.event=wall" &&
	expect_contains c.txt "testflame.sampler=ptrace" &&
	expect_contains c.txt "testflame.offcpu=sampled" &&
	go tool pprof -raw wall.pb.gz 2>/dev/null |
		grep -q "samples/count cpu/nanoseconds off-cpu/nanoseconds wall/nanoseconds" &&
	expect_contains c.txt "offcpu_ns="
'

test_expect_success 'the sleep shows as an [off-cpu] frame under take_a_nap' '
	go tool pprof -traces wall.pb.gz 2>/dev/null >traces.txt &&
	grep -A4 "\[off-cpu\] clock_nanosleep" traces.txt >off.txt &&
	expect_contains off.txt take_a_nap &&
	! grep -B1 -A6 "\[off-cpu\]" traces.txt | grep -q burn_cpu
'

# take_a_nap's cum also holds the time the woken thread waits for a CPU on
# a busy machine (wall time, on-CPU side): the [off-cpu] frame is the sleep.
test_expect_success 'with the time it took: 800 ms of the run asleep' '
	go tool pprof -top -unit ms wall.pb.gz 2>/dev/null >top.txt &&
	off=$(awk "\$NF == \"clock_nanosleep\" && \$(NF-1) == \"[off-cpu]\" { sub(\"ms\", \"\", \$4); print \$4 }" top.txt) &&
	nap=$(awk "\$NF == \"take_a_nap\" { sub(\"ms\", \"\", \$4); print \$4 }" top.txt) &&
	expect_near "$off" 800 160 "[off-cpu] clock_nanosleep ms" &&
	awk -v o="$off" -v n="$nap" "BEGIN { exit !(n >= o) }" &&
	dur=$(go tool pprof -comments wall.pb.gz 2>/dev/null | sed -n "s/^testflame.duration_ns=//p") &&
	total=$(sed -n "s/.*of \([0-9.]*\)ms total.*/\1/p" top.txt) &&
	expect_near "$total" "$(awk -v d=$dur "BEGIN { print d / 1e6 }")" \
		"$(awk -v d=$dur "BEGIN { print d / 1e6 * 0.1 }")" "wall total vs the run duration (ms)"
'

test_expect_success 'a cpu-clock profile of the same test has no off-CPU time' '
	"$TF" record -q --sampler ptrace --freq 199 -o cpu.pb.gz -- "$FIX/sleepy" 20 20 &&
	go tool pprof -top cpu.pb.gz 2>/dev/null >top.txt &&
	expect_not_contains top.txt "[off-cpu]" &&
	expect_near "$(cum_share top.txt burn_cpu)" 100 5 "burn_cpu cum% of CPU"
'

test_expect_success 'a thread blocked reading a pipe shows [off-cpu] read' '
	{ sleep 1; echo done; } | "$FIX/noperf" "$TF" record -q --event wall --freq 99 \
		-o read.pb.gz -- sh -c "read x" &&
	go tool pprof -top read.pb.gz 2>/dev/null >top.txt &&
	expect_contains top.txt "[off-cpu] read" &&
	awk "/\[off-cpu\] read\$/ { sub(\"%\", \"\", \$2); exit !(\$2 + 0 > 80) }" top.txt
'

test_expect_success 'and one waiting for a FIFO writer shows [off-cpu] openat' '
	mkfifo fifo &&
	{ sleep 1; echo done >fifo; } &
	"$TF" record -q --sampler ptrace --event wall --freq 99 -o fifo.pb.gz -- sh -c "read x <fifo" &&
	go tool pprof -top fifo.pb.gz 2>/dev/null >top.txt &&
	expect_contains top.txt "[off-cpu] openat"
'

test_expect_success 'a sleep blocked by the sampler still sleeps its full time' '
	start=$(date +%s%N) &&
	"$TF" record -q --sampler ptrace --event wall --freq 999 -o nap.pb.gz -- sleep 0.5 &&
	end=$(date +%s%N) &&
	test $(( (end - start) / 1000000 )) -ge 500
'

test_expect_success '--sampler perf --event wall: cpu-clock and every switch-out' '
	if ! offcpu_works; then echo "# skipped: perf refuses the context-switch event"; exit 0; fi
	"$TF" record -q --sampler perf --event wall -o x.pb.gz -- "$FIX/sleepy" 5 20 &&
	go tool pprof -comments x.pb.gz 2>/dev/null >c.txt &&
	expect_contains c.txt "testflame.event=cpu-clock" && expect_contains c.txt "testflame.offcpu=switches" &&
	go tool pprof -sample_index=off-cpu -top x.pb.gz 2>/dev/null >top.txt &&
	expect_contains top.txt "[off-cpu] sleep"
'

test_done
