#!/usr/bin/env bash
# history-jansson.sh - `testflame history` and `testflame bisect` on a real
# suite's series: jansson's 213 ctest tests (Debian's source package, built
# as bench/realworld.sh builds it), in a fresh git repository of its source,
# run by `testflame run` at 40 commits of main as main's CI would, each
# commit saving 3 runs as its baseline (baseline_repeat: 3).
#
# Every commit edits src/bench_knobs.h, which sets how many turns a spin
# loop makes in each call of json_vpack_ex (the victim) and of
# json_vunpack_ex (the drifter), so every commit changes code and is built
# again. From the first commit both spin a little; commit 15 makes the
# victim's spin enough longer that test_pack, the suite's test that packs
# the most, gets 5% slower; from commit 21 the drifter's spin grows so that
# test_unpack gets 0.5% slower a commit (+10% at commit 40). The sizes are
# set from test_pack's and test_unpack's own CPU time, measured with `perf
# stat` at the start, and the growth each commit really gave is measured
# the same way and printed. Other tests that pack or unpack move with them,
# by less; the 200 others never change.
#
# The bar (issue "History"): `testflame history` reports the step at commit
# 15 (+-1) and the drift, naming json_vpack_ex and json_vunpack_ex, and
# nothing else; `testflame bisect test_pack` from commit 1 to 40, with the
# stored runs of commits 5 to 24 deleted, names commit 15.
#
#   WORK=DIR bench/history-jansson.sh    (jansson's source in DIR/src, as
#                                         bench/realworld.sh fetches it)
#   SPIN=TURNS                           the turns a call both spin from the
#                                        first commit (default 200000: test_pack
#                                        and test_unpack take about 7 ms of CPU;
#                                        2000000: about 50 ms)
#
# Takes about 20 minutes on a 2-core VM (40 commits of three suite runs,
# then the bisect's builds).
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
TF=$TOP/build/testflame
WORK=${WORK:-/work/rw}
D=$WORK/history/jansson
M=$WORK/history/measured # outside the repository
export TESTFLAME_NO_PROGRESS=1 GIT_AUTHOR_NAME=bench GIT_AUTHOR_EMAIL=bench@example.com
export GIT_COMMITTER_NAME=bench GIT_COMMITTER_EMAIL=bench@example.com
export CCACHE_DIR=$WORK/ccache
say() { printf '%s\n' "$*" >&2; }

src=$(ls -d "$WORK"/src/jansson-*/ 2>/dev/null | head -n 1)
[ -n "$src" ] || { say "no jansson source in $WORK/src (WORK=$WORK bench/realworld.sh jansson fetches it)"; exit 2; }
command -v ccache >/dev/null || { say "ccache is needed (apt-get install ccache)"; exit 2; }
[ -n "${NO_MAKE:-}" ] || make -s -C "$TOP" all >/dev/null

rm -rf "$D" "$M" && mkdir -p "$M" && cp -a "$src" "$D" && cd "$D"
rm -rf .git build
# the spin and its knobs
printf '#define BENCH_VICTIM_TURNS 0UL\n#define BENCH_DRIFT_TURNS 0UL\n' >src/bench_knobs.h
sed -i '0,/^#include "jansson.h"$/s||&\n#include "bench_knobs.h"\nstatic void __attribute__((noinline)) bench_spin(unsigned long n) {\n    volatile unsigned long i;\n    for (i = 0; i < n; i++)\n        ;\n}|' src/pack_unpack.c
awk '
	/^json_t \*json_vpack_ex\(/ { f = "BENCH_VICTIM_TURNS" }
	/^int json_vunpack_ex\(/ { f = "BENCH_DRIFT_TURNS" }
	{ print }
	f && /^    jsonp_error_init\(error, NULL\);$/ { print "    bench_spin(" f ");"; f = "" }
' src/pack_unpack.c >src/pack_unpack.c.new && mv src/pack_unpack.c.new src/pack_unpack.c
[ "$(grep -c 'bench_spin(BENCH_' src/pack_unpack.c)" = 2 ] || { say "could not place the spin in src/pack_unpack.c"; exit 2; }

BUILD="cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DJANSSON_BUILD_DOCS=OFF -DCMAKE_C_COMPILER_LAUNCHER=ccache >/dev/null 2>&1 && make -s -C build -j2 >/dev/null 2>&1"
printf 'build/\ntestflame-report/\n' >.gitignore
cat >.testflame.yml <<EOF
suite: jansson
command: "ctest --test-dir build"
build: "$BUILD"
baseline_repeat: 3
EOF
git init -q -b main . && git add -A >/dev/null && git commit -qm "the package's source, with the bench's spin"
build() { sh -c "$BUILD"; }

# CPU ms of one test program, the mean of 30 plain runs
cpu_ms() { # PROGRAM
	local t=$1
	(cd build && perf stat -x, -e task-clock -r 30 "bin/$t" >/dev/null 2>"$M/stat.$t") || true
	awk -F, '/task-clock/ { print $1; exit }' "$M/stat.$t"
}
knobs() { # VICTIM DRIFT [COMMIT]
	printf '/* commit %s */\n#define BENCH_VICTIM_TURNS %sUL\n#define BENCH_DRIFT_TURNS %sUL\n' "${3:-0}" "$1" "$2" >src/bench_knobs.h
}

# the sizes: both spin S turns a call (test_pack and test_unpack then take
# tens of milliseconds, most of it the spin); then how much more of it makes
# 5% of test_pack and 0.5% of test_unpack
S=${SPIN:-200000}
say "calibrating on test_pack and test_unpack"
knobs 0 0 && build
p0=$(cpu_ms test_pack) u0=$(cpu_ms test_unpack)
knobs $S $S && build
p1=$(cpu_ms test_pack) u1=$(cpu_ms test_unpack)
read -r step_turns drift_turns < <(awk -v p0="$p0" -v p1="$p1" -v u0="$u0" -v u1="$u1" -v s=$S 'BEGIN {
	printf "%d %d\n", s * 0.05 * p1 / (p1 - p0), s * 0.005 * u1 / (u1 - u0) }')
[ "$step_turns" -gt 0 ] && [ "$drift_turns" -gt 0 ] ||
	{ say "the spin did not slow test_pack ($p0 -> $p1 ms) or test_unpack ($u0 -> $u1 ms)"; exit 2; }
say "test_pack $p0 ms bare, $p1 ms spinning $S turns a call; test_unpack $u0, $u1 ms"
say "step: +$step_turns turns a call of json_vpack_ex at commit 15; drift: +$drift_turns turns a call of json_vunpack_ex a commit from 21"

git add src/bench_knobs.h && git commit -qm "commit 0: both spin $S turns"
"$TF" run -q --no-fail --confirm none >/dev/null 2>&1
: >"$M/measured"
for i in $(seq 1 40); do
	v=$S d=$S
	[ "$i" -ge 15 ] && v=$((S + step_turns))
	[ "$i" -ge 21 ] && d=$((S + (i - 20) * drift_turns))
	knobs $v $d $i
	git add src/bench_knobs.h && git commit -q -m "commit $i: json_vpack_ex spins $v turns, json_vunpack_ex $d"
	[ "$i" = 15 ] && git rev-parse HEAD >"$M/step_commit"
	[ "$i" = 21 ] && git rev-parse HEAD >"$M/drift_commit"
	build
	"$TF" run -q --no-fail --confirm none >/dev/null 2>&1
	# what the commit really did, measured apart: every fifth commit
	[ $((i % 5)) = 0 ] && echo "$i $(cpu_ms test_pack) $(cpu_ms test_unpack)" >>"$M/measured"
done
say "plain CPU ms (commit, test_pack, test_unpack): $(tr '\n' ';' <"$M/measured")"

/usr/bin/time -f "history: %e s wall, %U s user" "$TF" history --suite jansson
"$TF" history --suite jansson --json >"$M/h.json"
M="$M" python3 - <<\PY
import json, os
M = os.environ["M"]
h = json.load(open(M + "/h.json"))
commits = [c["commit"] for c in h["commits"]]
step = commits.index(open(M + "/step_commit").read().strip())
drift = commits.index(open(M + "/drift_commit").read().strip())
def fns(x):
    return ["%s from %s" % (f["name"], f["caller"]) if f.get("caller") else f["name"]
            for f in (x.get("functions") or [])][:3]
def names(x, fn):
    return any(fn in f for f in fns(x))
steps = [c for c in h["changes"] if abs(c["index"] - step) <= 1 and names(c, "json_vpack_ex")]
drifted = [c for c in h["changes"] if c["index"] >= drift - 1 and names(c, "json_vunpack_ex")]
drifts = [d for d in h["drifts"] if names(d, "json_vunpack_ex")]
suite = [c for c in h["changes"] if c["test"] == "[whole suite]"]
others = [c for c in h["changes"] if c not in steps and c not in drifted and c not in suite]
other_drifts = [d for d in h["drifts"] if d not in drifts]
print("%d tests, %d commits" % (len(h.get("tests") or []), len(commits)))
print("step at commit %d: %s" % (step, "; ".join("%s %+.1f%% at %d, %s" % (c["test"], c["size_pct"], c["index"], fns(c)) for c in steps) or "NOT FOUND"))
print("drift from commit %d: %s" % (drift, "; ".join("%s %+.1f%% over %d..%d, %s" % (d["test"], d["total_pct"], d["from_index"], d["to_index"], fns(d)) for d in drifts) or "not reported as a drift"))
if drifted:
    print("the drifter's tests as steps: " + "; ".join("%s %+.1f%% at %d" % (c["test"], c["size_pct"], c["index"]) for c in drifted))
print("whole-suite moves (the runner): %s" % [(c["index"], round(c["size_pct"], 1)) for c in suite])
print("other changes: %d %s" % (len(others), [(c["test"], c["index"], round(c["size_pct"], 1), fns(c)) for c in others]))
print("other drifts: %d %s" % (len(other_drifts), [(d["test"], round(d["total_pct"], 1)) for d in other_drifts]))
bar = steps and (drifts or drifted) and not others and not other_drifts
print("the bar (the step at its commit +-1 and the drift, both functions named, nothing else): %s"
      % ("met" if bar else "MISSED"))
PY

say "bisect: commits 5-24 not stored"
first=$(git rev-list --reverse HEAD | sed -n 3p)
for n in $(seq 5 24); do
	c=$(git rev-list --reverse HEAD | sed -n "$((n + 2))p")
	git update-ref -d "refs/testflame/runs/$c"
done
/usr/bin/time -f "bisect: %e s wall, %U s user" "$TF" bisect test_pack "$first" HEAD >"$M/bisect.out" 2>"$M/bisect.err" || true
cat "$M/bisect.out"
# testflame's lines, not the suite's output
grep -E "^(testflame|bisect):" "$M/bisect.err" || true
grep -q "^first slower commit: $(cat "$M/step_commit")" "$M/bisect.out" && echo "bisect: the step's commit, found" ||
	echo "bisect: NOT the step's commit ($(cut -c1-10 "$M/step_commit"))"
