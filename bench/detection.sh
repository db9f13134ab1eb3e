#!/usr/bin/env bash
# detection.sh - the gate's quality, measured: how often `testflame run`
# fails a PR that changed nothing (false positives), and how often it
# catches a slowdown of one test's function (detection), on this machine
# with its other core kept busy by a noisy neighbour.
#
# The suite (bench/detect_suite.c) has four tests, one process each:
# parse, hash, sorting and victim; a PR makes victim_work() 0, 2, 5, 10 or
# 20% slower by committing the file the victim reads. Each trial is a real
# repository step:
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
# runs the suite twice more before the verdict (run --confirm, default 2);
# the table counts how often that happened. PR_OPTS adds options to the
# PR's run (PR_OPTS=--confirm=0: the verdict of the first run alone).
#
# A trial counts a detection when victim is "regressed", and a false
# positive when any other test is, or victim at 0%.
#
#   bench/detection.sh [TRIALS] [UNITS] [MODES]    (defaults 30 2 "stored stored-3 against-3 against-5";
#                                                   SIZES="0 5" runs only those slowdowns)
#
# KEEP_REPORTS=DIR keeps every trial's report.json there, as MODE-SIZE-TRIAL.json.
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
bench_build

repo=$WORK/repo
mkdir -p "$repo" && cd "$repo"
git init -q -b main && git config user.email bench@example.com && git config user.name bench
for t in parse hash sorting victim hog; do ln -s "$TOP/build/bench/detect_suite" "$t"; done
cat >suite.sh <<EOF
./parse $UNITS && ./hash $UNITS && ./sorting $UNITS && ./victim $UNITS
EOF
cat >.testflame.yml <<EOF
suite: detect
command: "sh suite.sh"
build: "true"
freq: 999
EOF
printf 'testflame-report/\n' >.gitignore
echo 0 >slowdown
git add -A && git commit -qm "the suite"

./hog &
HOG=$!
trap 'kill $HOG 2>/dev/null; rm -rf "$WORK"' EXIT

# the history: a few commits on main with their baselines
for i in 1 2 3 4 5; do
	git commit -q --allow-empty -m "main $i"
	"$TF" run -q --no-fail --repeat "$HIST_REPEAT" >/dev/null 2>&1
done

verdicts() { # report.json RUNS -> "victim-verdict other-regressions confirmed"
	python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
v = "missing"; other = 0; runs = 0
for t in r["tests"]:
    runs = max(runs, t["head"]["runs"])
    if t["name"] == "victim": v = t["verdict"]
    elif t["verdict"] == "regressed": other += 1
print(v, other, 1 if runs > int(sys.argv[2]) else 0)' testflame-report/report.json "$1"
}

results=${RESULTS:-$WORK/results}
: >"$results"
for trial in $(seq "$TRIALS"); do
	for size in $SIZES; do
		for mode in $MODES; do
			git checkout -q main
			case $mode in
			stored | stored-*)
				rep=${mode#stored}; rep=${rep#-}; rep=${rep%%-*}
				git commit -q --allow-empty -m "main, trial $trial"
				"$TF" run -q --no-fail --repeat "${rep:-1}" >/dev/null 2>&1 ;;
			esac
			git checkout -q -B pr main
			echo "$size" >slowdown
			git commit -q --allow-empty -am "victim +$size%"
			rm -rf testflame-report
			prrep=1
			case $mode in
			stored | stored-*)
				case $mode in stored-*-*) prrep=${mode##*-} ;; esac
				# shellcheck disable=SC2086 # PR_OPTS: options, split
				"$TF" run -q --no-save --no-fail --repeat "$prrep" ${PR_OPTS:-} >/dev/null 2>&1 ;;
			against-*)
				prrep=${mode#against-}
				"$TF" run -q --no-save --no-fail --against main --repeat "$prrep" >/dev/null 2>&1 ;;
			esac
			echo "$mode $size $(verdicts "$prrep")" >>"$results"
			[ -z "${KEEP_REPORTS:-}" ] ||
				cp testflame-report/report.json "$KEEP_REPORTS/$mode-$size-$trial.json"
		done
	done
	echo "trial $trial of $TRIALS done" >&2
done

cd "$TOP"
machine
echo "suite: 4 tests (victim ~$((UNITS * 110)) ms of CPU), 999 Hz, other core busy (a spinning neighbour); $TRIALS trials per cell"
[ -z "${PR_OPTS:-}" ] || echo "PR runs with: $PR_OPTS"
printf '%-10s %6s %12s %12s %12s\n' mode slow "detected" "false pos." "confirmed"
for mode in $MODES; do
	for size in $SIZES; do
		awk -v m="$mode" -v s="$size" '
			$1 == m && $2 == s { n++; if ($3 == "regressed") d++; if ($4 > 0 || (s == 0 && $3 == "regressed")) f++; c += $5 }
			END { printf "%-10s %5s%% %8d/%-3d %8d/%-3d %8d/%-3d\n", m, s, (s == 0 ? 0 : d), n, f, n, c, n }' "$results"
	done
done
echo "instructions: not measured here (this machine has no hardware counters: perf_event_open of instructions is refused)"
