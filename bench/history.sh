#!/usr/bin/env bash
# bench/history.sh - `testflame history` on known series (BENCHMARKS.md,
# "history: steps and drifts of the default branch").
#
#  1. synthetic: build/bench/history_synth (history_synth.c says what it
#     generates): detection, false changes per 1,000 series, dating error,
#     the speed of 1,000 commits x 1,000 tests and of one appended commit;
#  2. real: a suite of 8 process tests (about 50 ms of CPU each) run by
#     `testflame run` at 40 commits of a real repository's main, each
#     saving its baseline of 3 runs (baseline_repeat: 3), as main's CI does,
#     with a 5% step of victim_work() at commit 15 and a drift of
#     drift_work(), 0.5% more a commit from commit 21 to 40 (+10%). The
#     history must report the step at commit 15 (+-1) naming victim_work,
#     the drift naming drift_work, and nothing else;
#  3. bisect on that repository with the stored runs of commits 5 to 24
#     deleted (half the range): `testflame bisect victim` from commit 1 to
#     40 must name commit 15, building and running what is not stored.
#
#   bench/history.sh [SUITES]      (default 50 suites of 20 tests a scenario)
#   KEEP=1 keeps the real repository (its path is printed)
#
# Needs a built tree (make, make build/bench/history_synth). Takes about
# 2 minutes on a 2-core VM.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TF=${TF:-$TOP/build/testflame}
SUITES=${1:-50}
[ -n "${NO_MAKE:-}" ] || make -C "$TOP" -s build/testflame build/bench/history_synth >/dev/null

echo "== synthetic"
"$TOP/build/bench/history_synth" --suites "$SUITES"

echo "== real: 40 commits of a real suite"
W=$(mktemp -d /tmp/testflame-history.XXXXXX)
trap '[ -n "${KEEP:-}" ] && echo "kept $W" || rm -rf "$W"' EXIT
cd "$W" && git init -q -b main && git config user.email b@example.com && git config user.name b
cat >w.c <<\EOF
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin(unsigned long n)
{
	unsigned long x = sink;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1;
	sink = x;
}
#define UNIT 50000000UL
__attribute__((noinline)) void victim_work(double pct) { spin((unsigned long)(UNIT * (1 + pct / 100))); }
__attribute__((noinline)) void drift_work(double pct) { spin((unsigned long)(UNIT * (1 + pct / 100))); }
__attribute__((noinline)) void steady_work(void) { spin(UNIT); }
int main(int argc, char **argv)
{
	const char *n = strrchr(argv[0], '/');
	double step = 0, drift = 0;
	FILE *f = fopen("knobs", "r");
	(void)argc;
	n = n ? n + 1 : argv[0];
	if (f) {
		if (fscanf(f, "%lf %lf", &step, &drift) != 2)
			step = drift = 0;
		fclose(f);
	}
	if (!strcmp(n, "victim"))
		victim_work(step);
	else if (!strcmp(n, "drifter"))
		drift_work(drift);
	else
		steady_work();
	return 0;
}
EOF
cc -O1 -g -fno-omit-frame-pointer -o w w.c
TESTS="victim drifter alpha beta gamma delta epsilon zeta"
for t in $TESTS; do ln -s w "$t"; done
printf 'for t in %s; do ./$t || exit 1; done\n' "$TESTS" >suite.sh
printf 'w\n*.pb.gz\ntestflame-report/\n' >.gitignore
printf 'suite: real\ncommand: "sh suite.sh"\nbuild: "cc -O1 -g -fno-omit-frame-pointer -o w w.c"\nfreq: 999\nbaseline_repeat: 3\n' >.testflame.yml
git add -A && git commit -qm "the suite"
for i in $(seq 1 40); do
	step=0; drift=0
	[ "$i" -ge 15 ] && step=5
	[ "$i" -ge 21 ] && drift=$(awk "BEGIN { print ($i - 20) * 0.5 }")
	echo "$step $drift" >knobs
	git add knobs && git commit -q --allow-empty -m "commit $i: step $step, drift $drift"
	[ "$i" = 15 ] && git rev-parse HEAD >step_commit
	[ "$i" = 21 ] && git rev-parse HEAD >drift_commit
	# main's job: run, compare with the last commit's baseline, save three
	# runs as this commit's (baseline_repeat: 3)
	"$TF" run -q --no-fail --confirm none >/dev/null 2>&1
done
/usr/bin/time -f "history: %e s wall, %U s user" "$TF" history --suite real
"$TF" history --suite real --json >h.json
python3 - <<\PY
import json
h = json.load(open("h.json"))
def fns(x):
    # the first three functions that moved, each with the caller it was reached from
    return ["%s from %s" % (f["name"], f["caller"]) if f.get("caller") else f["name"]
            for f in (x.get("functions") or [])][:3]
commits = [c["commit"] for c in h["commits"]]
step = commits.index(open("step_commit").read().strip())
drift = commits.index(open("drift_commit").read().strip())
found_step = [c for c in h["changes"] if c["test"] == "victim" and abs(c["index"] - step) <= 1]
suite = [c for c in h["changes"] if c["test"] == "[whole suite]"]
others = [c for c in h["changes"] if c not in found_step and c not in suite and not (c["test"] == "drifter" and c["index"] >= drift - 1)]
drifts = [d for d in h["drifts"] if d["test"] == "drifter"]
print("step at commit %d: %s" % (step, ", ".join("%+.1f%% at %d, functions %s" % (c["size_pct"], c["index"], fns(c)) for c in found_step) or "NOT FOUND"))
print("drift from commit %d: %s" % (drift, ", ".join("%+.1f%% over %d..%d, functions %s" % (d["total_pct"], d["from_index"], d["to_index"], fns(d)) for d in drifts) or "not reported as a drift"))
steps_in_drift = [c for c in h["changes"] if c["test"] == "drifter"]
if steps_in_drift:
    print("drifter reported as steps: " + ", ".join("%+.1f%% at %d, functions %s" % (c["size_pct"], c["index"], fns(c)) for c in steps_in_drift))
print("whole-suite moves (the runner): %s" % [(c["index"], round(c["size_pct"], 1)) for c in suite])
print("other changes: %d %s" % (len(others), [(c["test"], c["index"], round(c["size_pct"], 1)) for c in others]))
other_drifts = [d for d in h["drifts"] if d["test"] != "drifter"]
print("other drifts: %d" % len(other_drifts))
named = lambda xs, fn: any(fn in " ".join(fns(x)) for x in xs)
bar = (named(found_step, "victim_work") and named(drifts + steps_in_drift, "drift_work")
       and not others and not other_drifts)
print("the bar (the step at its commit +-1 and the drift, both functions named, nothing else): %s"
      % ("met" if bar else "MISSED"))
PY

echo "== bisect: commits 5-24 not stored"
first=$(git rev-list --reverse HEAD | sed -n 2p)
for n in $(seq 5 24); do
	c=$(git rev-list --reverse HEAD | sed -n "$((n + 1))p")
	git update-ref -d "refs/testflame/runs/$c"
done
/usr/bin/time -f "bisect: %e s wall, %U s user" "$TF" bisect victim "$first" HEAD >bisect.out 2>bisect.err || cat bisect.err
cat bisect.out
grep "^bisect:" bisect.err
grep -q "^first slower commit: $(cat step_commit)" bisect.out && echo "bisect: the step's commit, found" ||
	echo "bisect: NOT the step's commit ($(cut -c1-10 step_commit))"
grep -E "^testflame: (building|skipping)" bisect.err | sed 's/^/  /' | head -20
