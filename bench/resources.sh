#!/usr/bin/env bash
# resources.sh - what a big suite costs testflame in disk and memory: the
# spool (the recording's records, in TMPDIR) and testflame's peak resident
# memory, total and anonymous, as the samples grow (a CPU-bound program at
# a high frequency, frame pointers and copied stacks) and as the tests grow
# (bench/manytests: N tests announced with markers). Two sizes of each, so
# the growth per million samples and per thousand tests is the difference.
#
#   bench/resources.sh
#   FP_SECS="12 50" AUTO_SECS="6 12" TESTS="1000 10000" PROCS="1000 5000" bench/resources.sh
#
# *_SECS: CPU seconds of each of the two threads at 9999 Hz (50: about a
# million samples); copied stacks take 8 KB a sample, so their runs are
# shorter (12: about 2 GB of spool).
. "$(dirname "$0")/common.sh"
bench_build
FP_SECS=(${FP_SECS:-12 50})
AUTO_SECS=(${AUTO_SECS:-6 12})
TESTS=(${TESTS:-1000 10000})
PROCS=(${PROCS:-1000 5000})
export TMPDIR=$WORK TESTFLAME_NO_PROGRESS=1
# the spool's limit must not cut the bigger runs short
export TESTFLAME_SPOOL_MAX=64G

# run CMD...: testflame's peak RSS (getrusage, through time(1)) and its
# peak anonymous RSS, polled every 10 ms while it runs;
# "samples spool_bytes peak_kb anon_kb" on stdout.
run() {
	local tpid pid anon=0 a
	/usr/bin/time -f '%M' -o "$WORK/maxrss" "$@" >/dev/null 2>"$WORK/log" &
	tpid=$!
	while kill -0 "$tpid" 2>/dev/null; do
		pid=$(pgrep -P "$tpid" | head -n 1 || true)
		a=$(awk '/^RssAnon/ { print $2 }' "/proc/${pid:-0}/status" 2>/dev/null || true)
		[ "${a:-0}" -gt "$anon" ] && anon=$a
		sleep 0.01
	done
	wait "$tpid" || { cat "$WORK/log" >&2; return 1; }
	local build
	build=$(sed -n 's/.*built the profile in [0-9.]* ms, \([0-9.]*\) ms of CPU.*/\1/p' "$WORK/log")
	sed -n 's/.*recorded \([0-9]*\) samples.*, \([0-9]*\) bytes of records.*/\1 \2/p' "$WORK/log" |
		awk -v h="$(tail -n 1 "$WORK/maxrss")" -v a="$anon" -v b="${build:-0}" '{ print $1, $2, h, a, b }'
}

# wall seconds of a command run bare
bare() {
	local t0 t1
	t0=$(now_ns)
	"$@" >/dev/null 2>&1
	t1=$(now_ns)
	echo "($t1 - $t0) / 1000000000" | bc -l
}

machine
echo
echo "samples: threads8 (2 threads) at 9999 Hz"
printf '%-8s %8s %10s %12s %10s %10s %12s %12s\n' mode cpu_s samples spool_MB peak_MB anon_MB spool_B/smp anon_B/smp
for cg in fp auto; do
	if [ "$cg" = fp ]; then secs=("${FP_SECS[@]}"); else secs=("${AUTO_SECS[@]}"); fi
	for s in "${secs[@]}"; do
		units=$((s * 450)) # a unit is about 2.2 ms of CPU
		read -r n spool hwm anon _ < <(run "$TF" record -v --freq 9999 --call-graph "$cg" \
			-o "$WORK/run.pb.gz" -- "$TOP/build/fixtures/threads8" 2 "$units")
		printf '%-8s %8s %10s %12.1f %10.1f %10.1f %12.0f %12.0f\n' "$cg" "$s" "$n" \
			"$(echo "$spool / 1048576" | bc -l)" "$(echo "$hwm / 1024" | bc -l)" \
			"$(echo "$anon / 1024" | bc -l)" "$(echo "$spool / $n" | bc -l)" \
			"$(echo "$anon * 1024 / $n" | bc -l)"
	done
done
echo
echo "tests: bench/manytests N 1 (markers, about 0.2 ms of CPU a test) at 999 Hz, frame pointers"
echo "(seconds: testflame record in all; bare: the suite alone; build_ms: building the profile, CPU)"
printf '%-8s %10s %12s %10s %10s %10s %8s %10s\n' tests samples spool_MB peak_MB anon_MB seconds bare build_ms
for t in "${TESTS[@]}"; do
	b=$(bare "$TOP/build/bench/manytests" "$t" 1)
	t0=$(now_ns)
	read -r n spool hwm anon build < <(run "$TF" record -v --freq 999 --call-graph fp \
		-o "$WORK/run.pb.gz" -- "$TOP/build/bench/manytests" "$t" 1)
	t1=$(now_ns)
	printf '%-8s %10s %12.2f %10.1f %10.1f %10.2f %8.2f %10s\n' "$t" "$n" "$(echo "$spool / 1048576" | bc -l)" \
		"$(echo "$hwm / 1024" | bc -l)" "$(echo "$anon / 1024" | bc -l)" \
		"$(echo "($t1 - $t0) / 1000000000" | bc -l)" "$b" "$build"
	"$TF" show "$WORK/run.pb.gz" | grep -c 'suite/test_' | sed 's/^/  tests in the run file: /'
done
echo
echo "processes: a shell loop running N programs (one test each), at 999 Hz, frame pointers"
printf '%-8s %10s %12s %10s %10s %10s %8s %10s\n' procs samples spool_MB peak_MB anon_MB seconds bare build_ms
for t in "${PROCS[@]}"; do
	mkdir -p "$WORK/progs"
	printf '#!/bin/sh\ni=0\nwhile [ $i -lt %s ]; do "%s" 1 0; i=$((i + 1)); done\n' "$t" \
		"$TOP/build/fixtures/threads8" > "$WORK/procs.sh"
	b=$(bare sh "$WORK/procs.sh")
	t0=$(now_ns)
	read -r n spool hwm anon build < <(run "$TF" record -v --freq 999 --call-graph fp \
		-o "$WORK/run.pb.gz" -- sh "$WORK/procs.sh")
	t1=$(now_ns)
	printf '%-8s %10s %12.2f %10.1f %10.1f %10.2f %8.2f %10s\n' "$t" "$n" "$(echo "$spool / 1048576" | bc -l)" \
		"$(echo "$hwm / 1024" | bc -l)" "$(echo "$anon / 1024" | bc -l)" \
		"$(echo "($t1 - $t0) / 1000000000" | bc -l)" "$b" "$build"
	"$TF" show "$WORK/run.pb.gz" | sed -n 's/^Tests (\([0-9]*\)).*/  tests in the run file: \1/p'
done
