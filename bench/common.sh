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

# detect_suite_files SUITE "NAMES" UNITS THREADS: the suite of
# bench/detect_suite.c in the current directory, as bench/detection.sh and
# bench/measures.sh run it (serial: suite.sh, its tests one after another;
# ctest: the same tests one after another by ctest, which can run one
# alone; parallel: ctest -j2, each test THREADS threads); OTHER_UNITS in
# the environment makes the tests but victim that size instead of UNITS
# (a suite whose every test is a small share of it); prints the command
# that runs it
detect_suite_files() {
	local t u
	units() { if [ "$1" = victim ]; then echo "$2"; else echo "${OTHER_UNITS:-$2}"; fi; }
	case $1 in
	serial)
		for t in $2; do echo "./$t $(units "$t" "$3")"; done | paste -sd'&' - | sed 's/&/ \&\& /g' >suite.sh
		echo "sh suite.sh" ;;
	ctest)
		for t in $2; do u=$(units "$t" "$3"); echo "add_test($t \"./$t\" \"$u\")"; done >CTestTestfile.cmake
		echo "ctest" ;;
	parallel)
		for t in $2; do u=$(units "$t" "$3"); echo "add_test($t \"./$t\" \"$u\" \"$4\")"; done >CTestTestfile.cmake
		echo "ctest -j2" ;;
	*) echo "$(basename "$0"): unknown SUITE '$1'" >&2; return 2 ;;
	esac
}

# random_hog PROGRAM: PROGRAM (a hog) switched on and off at random, every
# 0.2-2 s, from a background loop of its own ($!: kill it to stop both)
random_hog() {
	( h=; trap '[ -z "$h" ] || kill "$h" 2>/dev/null; exit 0' TERM
	  while :; do
		if [ $((RANDOM % 2)) = 1 ] && [ -z "$h" ]; then "$1" & h=$!
		elif [ -n "$h" ]; then kill "$h" 2>/dev/null; wait "$h" 2>/dev/null; h=; fi
		sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 0.2 + 1.8 * r / 32767 }')"
	  done ) &
}
