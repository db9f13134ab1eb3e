#!/usr/bin/env bash
# record-overhead.sh - what recording costs the measured suite: wall time of
# the example project's test suite (`make -C examples check`: CPU-bound,
# several processes, a multi-threaded test, forked helpers) bare, under
# `testflame record` (frame pointers, DWARF, auto) and under `perf record`
# (-g, and --call-graph dwarf) at the same frequency. Runs alternate, ROUNDS
# times; medians and ratios to bare come from this one run.
#
#   bench/record-overhead.sh [ROUNDS] [FREQ]
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-15}
FREQ=${2:-99}
bench_build
SUITE=(make -s -C "$TOP/examples" check)

declare -A cmd
cmd[bare]="${SUITE[*]}"
cmd[tf_fp]="$TF record -q --freq $FREQ --call-graph fp -o $WORK/fp.pb.gz -- ${SUITE[*]}"
cmd[tf_dwarf]="$TF record -q --freq $FREQ --call-graph dwarf -o $WORK/dw.pb.gz -- ${SUITE[*]}"
cmd[tf_auto]="$TF record -q --freq $FREQ -o $WORK/auto.pb.gz -- ${SUITE[*]}"
cmd[perf_fp]="perf record -q -F $FREQ -g -o $WORK/perf.data -- ${SUITE[*]}"
cmd[perf_dwarf]="perf record -q -F $FREQ --call-graph dwarf -o $WORK/perfdw.data -- ${SUITE[*]}"
order=(bare tf_fp perf_fp tf_dwarf perf_dwarf tf_auto)

for v in "${order[@]}"; do : >"$WORK/$v.times"; done
${SUITE[*]} >/dev/null 2>&1 # warm the page cache
for r in $(seq "$ROUNDS"); do
	for v in "${order[@]}"; do
		time_once ${cmd[$v]} >>"$WORK/$v.times"
	done
done

machine
echo "workload: make -C examples check; $ROUNDS alternating rounds at $FREQ Hz"
bare=$(median <"$WORK/bare.times")
printf '%-12s %10s %8s\n' variant "median s" "÷ bare"
for v in "${order[@]}"; do
	m=$(median <"$WORK/$v.times")
	printf '%-12s %10.3f %8.3f\n' "$v" "$m" "$(awk -v a="$m" -v b="$bare" 'BEGIN { print a / b }')"
done
