# common.sh - helpers for the benchmarks in bench/: build what is measured,
# time commands alternately (so drift and a noisy machine hit every variant
# alike), and print medians and ratios from one run.
set -eu
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# TESTFLAME_BIN: another build of testflame to measure (an A/B of two commits)
TF=${TESTFLAME_BIN:-$TOP/build/testflame}
WORK=$(mktemp -d /tmp/testflame-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

bench_build() {
	make -s -C "$TOP" all fixtures bench >/dev/null
	make -s -C "$TOP/examples" all >/dev/null
}

# now_ns: monotonic-ish wall clock in ns
now_ns() { date +%s%N; }

# time_once CMD...: run once, print the wall time in seconds
time_once() {
	local t0 t1
	t0=$(now_ns)
	"$@" >/dev/null 2>&1 || true
	t1=$(now_ns)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f\n", (b - a) / 1e9 }'
}

# median of numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# $WORK/suite.sh (which times itself into $OUT) under each variant of
# "${order[@]}", prefixed by its "${cmd[$v]}", ROUNDS alternating rounds:
# $WORK/VARIANT.times, a run per line
alternate_rounds() {
	OUT=/dev/null "$WORK/suite.sh" # warm the page cache
	for r in $(seq "$ROUNDS"); do
		for v in "${order[@]}"; do
			OUT="$WORK/$v.times" ${cmd[$v]} "$WORK/suite.sh" >/dev/null 2>&1
		done
	done
}

machine() {
	echo "machine: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(uname -r), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
	echo "date: $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
}
