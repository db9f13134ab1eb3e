#!/usr/bin/env bash
# measures.sh - which measure of a test is the steadiest: the suite of
# bench/detection.sh (bench/detect_suite.c) run ROUNDS times on each side,
# the two sides alternating (A: as it is; B: victim_work() SLOW% slower),
# each test reporting its own wall time, its CPU time and its busiest
# thread's CPU time (DETECT_STATS). For each measure: the tests' run-to-run
# spread (coefficient of variation, the median over the tests the change
# does not touch, and the victim's), and how far the victim's slowdown
# stands out of it (Welch's t, and the paired t of the rounds' log
# ratios, which takes out what a round's two runs share; the slowdown as
# each measure sees it).
#
#   bench/measures.sh [ROUNDS] [SLOW]        (defaults 20, 5)
#
# SUITE=serial|parallel, THREADS, UNITS and NEIGHBOUR=none|steady|random-cpu
# as in bench/detection.sh (defaults parallel, 4, 2, random-cpu);
# ALONE=TEST runs that test alone, as a confirmation does; TOGETHER=1 runs
# each round's two sides at once instead of one after the other. No
# profiler runs: this is the tests' own count of themselves, the floor of
# what any measure of them can be.
. "$(dirname "$0")/common.sh"
ROUNDS=${1:-20}
SLOW=${2:-5}
SUITE=${SUITE:-parallel}
THREADS=${THREADS:-4}
UNITS=${UNITS:-2}
NEIGHBOUR=${NEIGHBOUR:-random-cpu}
bench_build

names="parse hash sorting alloc walk mix copy victim"
for side in A B; do
	mkdir -p "$WORK/$side"
	for t in $names hog; do ln -s "$TOP/build/bench/detect_suite" "$WORK/$side/$t"; done
	cmd=$(cd "$WORK/$side" && detect_suite_files "$SUITE" "$names" "$UNITS" "$THREADS")
done
# ALONE=TEST: only that test, as a confirmation runs a suspect alone
[ -z "${ALONE:-}" ] || case $SUITE in
	serial) cmd="./$ALONE $UNITS" ;;
	ctest | parallel) cmd="ctest -R ^($ALONE)\$" ;;
	esac
echo 0 >"$WORK/A/slowdown"
echo "$SLOW" >"$WORK/B/slowdown"

TOGGLER= HOG=
trap '[ -z "$TOGGLER" ] || kill "$TOGGLER" 2>/dev/null; [ -z "$HOG" ] || kill "$HOG" 2>/dev/null; rm -rf "$WORK"' EXIT
case $NEIGHBOUR in
none) ;;
steady) "$WORK/A/hog" & HOG=$! ;;
random-cpu)
	random_hog "$WORK/A/hog"
	TOGGLER=$! ;;
*) echo "measures.sh: unknown NEIGHBOUR '$NEIGHBOUR'" >&2; exit 2 ;;
esac

# TOGETHER=1: each round runs the two sides at once, one beside the other
# (duet benchmarking: both meet the same neighbour at the same moment)
t0=$(now_ns)
for r in $(seq "$ROUNDS"); do
	pids=
	for side in A B; do
		if [ "${TOGETHER:-0}" = 1 ]; then
			(cd "$WORK/$side" && DETECT_STATS="$WORK/stats.$side.$r" $cmd >/dev/null 2>&1) &
			pids="$pids $!"
		else
			(cd "$WORK/$side" && DETECT_STATS="$WORK/stats.$side.$r" $cmd >/dev/null 2>&1)
		fi
	done
	# shellcheck disable=SC2086 # pids: a list
	[ -z "$pids" ] || wait $pids
done
secs=$(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')

machine
echo "suite: $SUITE ($cmd$([ "$SUITE" = parallel ] && echo ", $THREADS threads a test")), $UNITS units; neighbour: $NEIGHBOUR; $ROUNDS rounds a side, $([ "${TOGETHER:-0}" = 1 ] && echo "both sides at once" || echo alternating) ($secs s); victim_work() $SLOW% slower on side B"
python3 - "$WORK" "$ROUNDS" <<'PY'
import math, statistics as st, sys
work, rounds = sys.argv[1], int(sys.argv[2])
data = {}  # (side, test, measure) -> [values]
rnd = {}  # (side, test, measure) -> {round: value}
for side in "AB":
    for r in range(1, rounds + 1):
        try:
            lines = open(f"{work}/stats.{side}.{r}").read().split("\n")
        except OSError:
            continue
        for l in lines:
            p = l.split()
            if len(p) != 4:
                continue
            for m, v in zip(("wall", "cpu", "busiest"), map(float, p[1:])):
                data.setdefault((side, p[0], m), []).append(v)
                rnd.setdefault((side, p[0], m), {})[r] = v
tests = sorted({k[1] for k in data})
cv = lambda v: 100 * st.stdev(v) / st.mean(v) if len(v) > 1 and st.mean(v) > 0 else float("nan")
print("%-8s %18s %12s %14s %12s %10s" % ("measure", "CV, other tests", "CV, victim", "victim B/A", "Welch t", "paired t"))
for m in ("cpu", "wall", "busiest"):
    others = [cv(data[("A", t, m)]) for t in tests if t != "victim" and ("A", t, m) in data]
    a, b = data.get(("A", "victim", m), []), data.get(("B", "victim", m), [])
    if len(a) < 2 or len(b) < 2:
        continue
    d = 100 * (st.mean(b) / st.mean(a) - 1)
    t = (st.mean(b) - st.mean(a)) / math.sqrt(st.variance(a) / len(a) + st.variance(b) / len(b))
    ra, rb = rnd[("A", "victim", m)], rnd[("B", "victim", m)]
    ld = [math.log(rb[r] / ra[r]) for r in ra if r in rb and ra[r] > 0 and rb[r] > 0]
    pt = st.mean(ld) / (st.stdev(ld) / math.sqrt(len(ld))) if len(ld) > 2 and st.stdev(ld) > 0 else float("nan")
    print("%-8s %18s %11.1f%% %+13.1f%% %12.2f %10.2f" % (m, "%.1f%%" % st.median(others) if others else "-", cv(a), d, t, pt))
PY
