#!/usr/bin/env bash
# t6050-history.sh - `testflame history` on a real repository's stored
# runs: a small suite of six process tests (lib-history.sh) recorded at 10
# commits of main and saved as their baselines, then `testflame run` on
# the 11th. Commit 6 makes victim_work() 60% slower; commit 9's suite
# fails (its run is left out, and said so); commit 11 is the fifth stored
# commit at the new level, so its run completes the step and its report
# says so in a "history" note. The history must date
# the step at commit 9 (+-1), name victim_work, report nothing for the
# steady tests, and give one clear line and a non-zero exit for a suite
# nobody stored.
. "$(dirname "$0")/lib.sh"

. "$TOP/tests/e2e/lib-history.sh"
history_repo repo || exit 1
# 10 commits of main, each recorded and saved as its baseline
for i in $(seq 1 10); do
	slow=0; fail=0
	[ "$i" -ge 6 ] && slow=60
	[ "$i" = 9 ] && fail=1
	history_commit "$i" "$slow" "$fail" store || exit 1
	[ "$i" = 6 ] && git rev-parse HEAD >step_commit
	[ "$i" = 9 ] && git rev-parse HEAD >failed_commit
done
history_commit 11 60 0 || exit 1
cd "$SCRATCH"

test_expect_success 'run on main: the commit that completes the step adds a history note' '
	cd repo && "$TF" run --no-fail --confirm none >out 2>err || { cat out err; exit 1; }
	expect_contains out "history: this commit completed" &&
	expect_contains out "victim +" &&
	expect_contains testflame-report/report.md "### history" &&
	expect_contains testflame-report/report.md "victim: +" &&
	expect_contains testflame-report/report.md "$(cut -c1-10 step_commit)"
'

test_expect_success 'the step: victim slower at its commit, what moved, nothing else' '
	cd repo && "$TF" history --suite mini --json >h.json 2>err &&
	python3 - <<\PY
import json
h = json.load(open("h.json"))
assert h["schema"] == "testflame-history/1", h["schema"]
commits = [c["commit"] for c in h["commits"]]
assert len(commits) == 10, len(commits)  # 11 stored, one failed
step = open("step_commit").read().strip()
failed = open("failed_commit").read().strip()
assert [s["commit"] for s in h["skipped"]] == [failed], h["skipped"]
assert "failed" in h["skipped"][0]["why"], h["skipped"]
ch = h["changes"]
assert ch, "no change found"
tests = {c["test"] for c in ch}
assert tests == {"victim"}, ch
c = ch[0]
at = commits.index(c["commit"])
assert abs(at - commits.index(step)) <= 1, (at, commits.index(step))
assert 20 < c["size_pct"] < 80, c  # victim_work +60%, the process a little less
assert c["ci_pct"][0] < c["size_pct"] < c["ci_pct"][1], c
names = [f["name"] for f in c["functions"]]
assert names and names[0] in ("victim_work", "spin"), names
assert c["functions"][0]["caller"] in (None, "victim_work", "main"), c["functions"][0]
assert "victim_work" in names or "spin" in names, names
assert h["drifts"] == [], h["drifts"]
PY
'

test_expect_success 'the table: the step newest first, the run left out said' '
	cd repo && "$TF" history --suite mini >out 2>err &&
	expect_contains out "history of suite '\''mini'\''" &&
	expect_contains out "victim  +" &&
	expect_contains out "functions:" &&
	expect_contains out "left out: $(cut -c1-10 failed_commit), the suite failed (exit status 1)"
'

test_expect_success 'a dir: store: the same runs, the same step' '
	cd repo &&
	for ref in $(git for-each-ref --format="%(refname)" refs/testflame/runs/); do
		c=${ref#refs/testflame/runs/} &&
		path=$(git ls-tree -r --name-only "$ref" | head -1) &&
		git cat-file blob "$ref:$path" >stored.pb.gz &&
		"$TF" baseline save -q --store "dir:$SCRATCH/store" --commit "$c" --suite mini stored.pb.gz ||
			exit 1
	done &&
	"$TF" history --store "dir:$SCRATCH/store" --suite mini --json --no-report >d.json &&
	python3 -c "
import json
a, b = json.load(open(\"h.json\")), json.load(open(\"d.json\"))
assert [c[\"commit\"] for c in a[\"changes\"]] == [c[\"commit\"] for c in b[\"changes\"]], (a[\"changes\"], b[\"changes\"])
assert len(b[\"commits\"]) == len(a[\"commits\"]) and \"dir store\" in b[\"store\"], b[\"store\"]
"
'

test_expect_success '--commits 6: only the newest six, no complete step left in them' '
	cd repo && "$TF" history --suite mini --commits 6 --json >h6.json &&
	python3 -c "
import json
h = json.load(open(\"h6.json\"))
assert len(h[\"commits\"]) == 6 and h[\"changes\"] == [], h[\"changes\"]
"
'

NODE_DIR=$TOP/tests/node
if ! need node || [ ! -x /usr/bin/chromium ] || [ ! -d "$NODE_DIR/node_modules/playwright-core" ]; then
	test_skip "history.html in Chromium" "needs node, chromium and tests/node (make deps)"
else
	test_expect_success 'history.html in Chromium, offline: the step marked, each point a link to its commit' '
		cd repo && "$TF" history --suite mini --report hr >/dev/null &&
		node "$NODE_DIR/history-check.mjs" hr/history.html --click victim >facts 2>check.err ||
			{ cat check.err; exit 1; }
		cat facts &&
		expect_contains facts "summary 10 commits with stored runs" &&
		grep -E "^change $(cut -c1-10 step_commit) commit 6: slowdown 60 \| victim \| \+" facts &&
		expect_contains facts "plot victim | points 10 | links 10 | steps 1 | drifts 0" &&
		expect_contains facts "plot alpha | points 10 | links 10 | steps 0" &&
		expect_contains facts "clicked #c-$(git rev-parse HEAD) -> #c-$(git rev-parse HEAD)" &&
		expect_contains facts "target $(git rev-parse --short=10 HEAD)commit 11" &&
		python3 -c "import json; json.load(open(\"hr/history.json\"))"
	'
fi

test_expect_code 1 'a suite nobody stored: one line, exit 1' '
	cd repo && "$TF" history --suite nosuch >out 2>err; rc=$?
	cat err; expect_eq "$(wc -l <err)" 1 "lines" && expect_contains err "nosuch" && exit $rc
'

test_expect_code 2 'a bad option value: usage error' '
	cd repo && "$TF" history --commits 0
'

test_done
