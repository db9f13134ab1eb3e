#!/usr/bin/env bash
# offcpu-overhead.sh - what recording the time threads wait costs: every
# switch-out of the command's threads with its stack (testflame's default
# where perf allows it), against the CPU profile alone (--off-cpu off) and
# against perf's ways of recording the same: `perf record -e
# sched:sched_switch -g` (the off-CPU flame graph recipe) and `perf sched
# record`. Four suites: the example project's (CPU-bound, few switches),
# jansson's 213 test programs (process start-up), and two that do little
# but switch (bench/pingpong: a token passed between two threads, or two
# processes, through pipes). Runs alternate (bench/record-overhead.sh
# does the timing, from inside the suite); ratios are to the bare run of
# the same round. Then, per suite, what one default recording saw: the
# switch-outs a second, the stacks kept and the most switch-outs one of
# them stood for (--off-cpu-max).
#
#   bench/offcpu-overhead.sh [ROUNDS] [SUITE...]   examples jansson pingpong pipes
#
# JANSSON=DIR: jansson's build directory (default: WORK=/work/rw's, built
# by bench/realworld.sh; ctest is run in a copy, to leave its log alone).
# perf record -e sched:sched_switch needs tracefs mounted
# (mount -t tracefs nodev /sys/kernel/tracing).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TF=$TOP/build/testflame
ROUNDS=${1:-9}
shift || true
SUITES=${*:-examples jansson pingpong pipes}
VARIANTS=${VARIANTS:-bare tf_nooff tf_auto perf_switch perf_sched}
JANSSON=${JANSSON:-${WORK:-/work/rw}/jansson/build}
make -s -C "$TOP" all bench >/dev/null
make -s -C "$TOP/examples" all >/dev/null
TMP=$(mktemp -d /tmp/testflame-offcpu.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# A copy of jansson's build whose ctest log is its own.
jansson_copy() {
	[ -f "$JANSSON/CTestTestfile.cmake" ] || { echo "no jansson build in $JANSSON (bench/realworld.sh jansson builds one)" >&2; return 1; }
	cp -a "$JANSSON" "$TMP/jansson"
	grep -rl "$JANSSON" --include=CTestTestfile.cmake "$TMP/jansson" |
		xargs sed -i "s|$JANSSON|$TMP/jansson|g"
	echo "$TMP/jansson"
}

for s in $SUITES; do
	case $s in
	examples) dir=$TOP/examples cmd="make -s check" ;;
	jansson) dir=$(jansson_copy) cmd="ctest" ;;
	pingpong) dir=$TOP cmd="build/bench/pingpong threads 20000" ;;
	pipes) dir=$TOP cmd="build/bench/pingpong procs 20000" ;;
	mixed) dir=$TOP cmd="build/bench/pingpong mixed 300" ;;
	*) echo "unknown suite '$s'" >&2; exit 2 ;;
	esac
	echo "== $s: $cmd"
	SUITE_DIR=$dir SUITE_CMD=$cmd VARIANTS=$VARIANTS "$TOP/bench/record-overhead.sh" "$ROUNDS" 249 |
		grep -v '^workload:'
	(cd "$dir" && "$TF" record -q -o "$TMP/one.pb.gz" -- sh -c "$cmd" >/dev/null 2>"$TMP/one.err") || true
	"$TF" show "$TMP/one.pb.gz" >"$TMP/one.txt"
	awk '/^ *duration_ns /{ d = $2 } /^ *offcpu_stacks /{ n = $2 } /^ *offcpu_period_max /{ p = $2 }
	     END { printf "one run: %d switch-out stacks in %.2f s (%.0f a second), at most one in %d recorded\n", n, d / 1e9, n / (d / 1e9), p }' "$TMP/one.txt"
	grep "off-CPU:" "$TMP/one.err" || true
done
