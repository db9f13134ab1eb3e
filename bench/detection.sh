#!/usr/bin/env bash
# detection.sh - the gate's quality, measured: how often `testflame run`
# fails a PR that changed nothing (false positives), and how often it
# catches a slowdown of one test's function (detection), on this machine
# under a neighbour (NEIGHBOUR, below).
#
# The suite (bench/detect_suite.c) has TESTS tests (4: parse, hash,
# sorting, victim; 8, the default: alloc, walk, mix and copy too, so that
# the tests a change does not touch can measure the runner), one process
# each; a PR makes victim_work() 0, 2, 5, 10 or 20% slower by committing
# the file the victim reads. Each trial is a real repository step:
#
#   stored      a new commit on main is run and its baseline saved (the
#               history of baselines grows as in real use), then the PR
#               branch is run against it: one run per side, per-test noise
#               learned from the stored history (run --history 10);
#   stored-N    the same, main's baseline saved from N runs (run --repeat N
#               on main, as its CI job would), the PR still run once;
#   stored-N-M  main's baseline from N runs, the PR run M times (--repeat M);
#   against-N   the PR branch is run with --against main --repeat N:
#               main exported and both sides run interleaved, N runs each.
#
# In the stored modes a PR run whose first run makes a test look slower
# is confirmed before the verdict (run --confirm; the suite's config has
# `build:`, so by default the merge-base is run here alternately with the
# PR, 3 to 8 rounds); the table counts how often that happened. PR_OPTS
# adds options to the PR's run (PR_OPTS=--confirm=2: two more runs of the
# PR judged instead; PR_OPTS=--confirm=none: the first run alone).
#
# SUITE, how the suite runs:
#   serial      its tests one after another, single-threaded (the default),
#               by a shell script: no runner can run one test alone, so a
#               confirmation runs the whole suite
#   ctest       the same tests one after another, run by ctest: a test is
#               re-run alone with ctest -R
#   parallel    run by ctest -j2, each test THREADS (default 4) threads
#               that spin while they wait for the last piece of work (see
#               detect_suite.c): a test's CPU time depends on what runs
#               beside it, the other tests of the suite included; a test
#               is re-run alone with ctest -R
#
# OTHER_UNITS=N makes every test but the victim N units (UNITS by default):
# with 8, the victim is 3% of the suite, as one test of thirty is.
#
# THRESHOLD=PCT sets the gate's threshold (gate.threshold), 5 by default;
# BUDGET=PCT what a confirmation of the suspects alone may spend
# (gate.confirm_budget), 100 (the suite's own time) by default.
#
# CODE=1 makes each PR a change of code as well: the suite's source is in
# the repository, built by the config's `build:` after every checkout
# (the merge-base's too, by the confirmation), and the PR edits the line
# of victim_work() that does its work (a comment giving the size), so the
# victim runs changed code as a slowed test of a real PR does.
#
# A trial counts a detection when victim is "regressed", and a false
# positive when any other test is, or victim at 0%.
#
#   bench/detection.sh [TRIALS] [UNITS] [MODES]    (defaults 30 2 "stored stored-3 against-3 against-5";
#                                                   SIZES="0 5" runs only those slowdowns)
#
# KEEP_REPORTS=DIR keeps every trial's report.json there, as MODE-SIZE-TRIAL.json.
#
# NEIGHBOUR, what else runs on the machine:
#   steady      a CPU hog on the other core all along (the default)
#   none        nothing
#   random-cpu  a CPU hog that comes and goes at random, 0.2-2 s on or
#               off, between and during runs
#   random-mem  the same with a hog of the memory bus (256 MiB streamed)
#   base-only   the CPU hog only while main's baselines are recorded: the
#               PR runs on a faster machine than its baseline's
#   pr-only     the CPU hog only while the PR runs: a slower machine
# The table adds the CI time the PR runs took, median and worst, and how
# many were confirmed (the extra runs or the merge-base built and run).
. "$(dirname "$0")/common.sh"
TRIALS=${1:-30}
UNITS=${2:-2}
MODES=${3:-stored stored-3 against-3 against-5}
# the repeat of the stored baselines the history starts with: the first stored mode's
HIST_REPEAT=1
for m in $MODES; do
	case $m in
	stored) break ;;
	stored-*) HIST_REPEAT=${m#stored-}; HIST_REPEAT=${HIST_REPEAT%%-*}; break ;;
	esac
done
SIZES=${SIZES:-0 2 5 10 20}
[ -z "${KEEP_REPORTS:-}" ] || mkdir -p "$KEEP_REPORTS"
bench_build

repo=$WORK/repo
mkdir -p "$repo" && cd "$repo"
git init -q -b main && git config user.email bench@example.com && git config user.name bench
TESTS=${TESTS:-8}
NEIGHBOUR=${NEIGHBOUR:-steady}
case $TESTS in
4) names="parse hash sorting victim" ;;
*) names="parse hash sorting alloc walk mix copy victim" ;;
esac
CODE=${CODE:-0}
if [ "$CODE" = 1 ]; then
	cp "$TOP/bench/detect_suite.c" .
	build="cc -O2 -g -fno-omit-frame-pointer -o detect_suite detect_suite.c -lpthread"
	for t in $names hog memhog; do ln -s detect_suite "$t"; done
else
	build=true
	for t in $names hog memhog; do ln -s "$TOP/build/bench/detect_suite" "$t"; done
fi
rebuild() { [ "$CODE" != 1 ] || sh -c "$build"; }
SUITE=${SUITE:-serial}
THREADS=${THREADS:-4}
command=$(detect_suite_files "$SUITE" "$names" "$UNITS" "$THREADS")
cat >.testflame.yml <<EOF
suite: detect
command: "$command"
build: "$build"
freq: 999
EOF
# THRESHOLD=PCT: the gate's threshold (default the config's default, 5);
# BUDGET=PCT: gate.confirm_budget (default 100, the suite's own time)
{ [ -z "${THRESHOLD:-}" ] && [ -z "${BUDGET:-}" ]; } || echo 'gate:' >>.testflame.yml
[ -z "${THRESHOLD:-}" ] || printf '  threshold: %s\n' "$THRESHOLD" >>.testflame.yml
[ -z "${BUDGET:-}" ] || printf '  confirm_budget: %s%%\n' "$BUDGET" >>.testflame.yml
printf 'testflame-report/\nTesting/\ndetect_suite\n' >.gitignore
echo 0 >slowdown
git add -A && git commit -qm "the suite"
rebuild

# the neighbour: hog_on / hog_off start and stop it; random modes toggle
# it from a loop of their own
HOG= TOGGLER=
hog_on() { [ -n "$HOG" ] || { ./"${1:-hog}" & HOG=$!; }; }
hog_off() { [ -z "$HOG" ] || { kill "$HOG" 2>/dev/null; wait "$HOG" 2>/dev/null || true; HOG=; }; }
trap 'hog_off; [ -z "$TOGGLER" ] || kill "$TOGGLER" 2>/dev/null; rm -rf "$WORK"' EXIT
case $NEIGHBOUR in
steady) hog_on ;;
none | base-only | pr-only) ;;
random-cpu | random-mem)
	kind=hog
	[ "$NEIGHBOUR" = random-mem ] && kind=memhog
	random_hog "./$kind"
	TOGGLER=$! ;;
*) echo "detection.sh: unknown NEIGHBOUR '$NEIGHBOUR'" >&2; exit 2 ;;
esac
main_side() { [ "$NEIGHBOUR" = base-only ] && hog_on; [ "$NEIGHBOUR" = pr-only ] && hog_off; :; }
pr_side() { [ "$NEIGHBOUR" = base-only ] && hog_off; [ "$NEIGHBOUR" = pr-only ] && hog_on; :; }
main_side

# the history: a few commits on main with their baselines
for i in 1 2 3 4 5; do
	git commit -q --allow-empty -m "main $i"
	# as the default branch's CI job runs: the gate on (a regression on main
	# is confirmed and would fail its job), the baseline saved either way
	"$TF" run -q --repeat "$HIST_REPEAT" >/dev/null 2>&1 || true
done

verdicts() { # RUNS SECONDS -> "victim-verdict other-regressions confirmed seconds"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = "missing"; other = 0; runs = 0
for t in r["tests"]:
    runs = max(runs, t["head"]["runs"])
    if t["name"] == "victim": v = t["verdict"]
    elif t["verdict"] == "regressed" and not t.get("outside"): other += 1
confirmed = 1 if r.get("confirmation") else 0
print(v, other, confirmed, sys.argv[3])' testflame-report/report.json "$1" "$2"
}

results=${RESULTS:-$WORK/results}
: >"$results"
for trial in $(seq "$TRIALS"); do
	for size in $SIZES; do
		for mode in $MODES; do
			git checkout -q main
			rebuild
			main_side
			case $mode in
			stored | stored-*)
				rep=${mode#stored}; rep=${rep#-}; rep=${rep%%-*}
				git commit -q --allow-empty -m "main, trial $trial"
				"$TF" run -q --repeat "${rep:-1}" >/dev/null 2>&1 || true ;;
			esac
			pr_side
			git checkout -q -B pr main
			echo "$size" >slowdown
			[ "$CODE" != 1 ] || sed -i '/^__attribute__((noinline)) void victim_work/,/^}/ s|^\(\tspin(.*);\).*$|\1 /* +'"$size"'% */|' detect_suite.c
			rebuild
			git commit -q --allow-empty -am "victim +$size%"
			rm -rf testflame-report
			prrep=1
			t0=$(date +%s%N)
			case $mode in
			stored | stored-*)
				case $mode in stored-*-*) prrep=${mode##*-} ;; esac
				# shellcheck disable=SC2086 # PR_OPTS: options, split
				"$TF" run -q --no-save --no-fail --repeat "$prrep" ${PR_OPTS:-} >/dev/null 2>&1 ;;
			against-*)
				prrep=${mode#against-}
				"$TF" run -q --no-save --no-fail --against main --repeat "$prrep" >/dev/null 2>&1 ;;
			esac
			secs=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
			echo "$mode $size $(verdicts "$prrep" "$secs")" >>"$results"
			[ -z "${KEEP_REPORTS:-}" ] ||
				cp testflame-report/report.json "$KEEP_REPORTS/$mode-$size-$trial.json"
		done
	done
	echo "trial $trial of $TRIALS done" >&2
done

cd "$TOP"
machine
echo "gate: threshold ${THRESHOLD:-5}% (gate.threshold), confirm_budget ${BUDGET:-100}%$([ "$CODE" = 1 ] && echo "; each PR a change of code (CODE=1)")"
echo "suite: $TESTS tests (victim ~$((UNITS * 110)) ms of CPU, the others ~$((${OTHER_UNITS:-$UNITS} * 110)) ms each), $SUITE ($command$([ "$SUITE" = parallel ] && echo ", $THREADS threads a test")), 999 Hz, neighbour: $NEIGHBOUR; $TRIALS trials per cell"
[ -z "${PR_OPTS:-}" ] || echo "PR runs with: $PR_OPTS"
python3 - "$results" "$MODES" "$SIZES" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("%-10s %6s %12s %12s %12s %14s" % ("mode", "slow", "detected", "false pos.", "confirmed", "PR s med/max"))
for m in sys.argv[2].split():
    for s in dict.fromkeys(sys.argv[3].split()):
        r = [x for x in rows if x[0] == m and x[1] == s]
        if not r:
            continue
        n = len(r)
        d = sum(1 for x in r if x[2] == "regressed") if s != "0" else 0
        f = sum(1 for x in r if int(x[3]) > 0 or (s == "0" and x[2] == "regressed"))
        c = sum(int(x[4]) for x in r)
        t = sorted(float(x[5]) for x in r)
        med = t[n // 2] if n % 2 else (t[n // 2 - 1] + t[n // 2]) / 2
        print("%-10s %5s%% %8d/%-3d %8d/%-3d %8d/%-3d %8.1f/%-5.1f" % (m, s, d, n, f, n, c, n, med, t[-1]))
PY
echo "instructions: not measured here (this machine has no hardware counters: perf_event_open of instructions is refused)"
