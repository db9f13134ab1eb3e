#!/usr/bin/env bash
# t6050-history.sh - `testflame history` on a real repository's stored
# runs: a small suite of six process tests (lib-history.sh) recorded at 14
# commits of main and saved as their baselines. Commit 8 makes
# victim_work() 30% slower; commit 10's suite fails (its run is left out,
# and said so). The history must date
# the step at commit 9 (+-1), name victim_work, report nothing for the
# steady tests, and give one clear line and a non-zero exit for a suite
# nobody stored.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/lib-history.sh"
history_repo repo || exit 1
# 14 commits of main, each recorded and saved as its baseline
for i in $(seq 1 14); do
	slow=0; fail=0
	[ "$i" -ge 8 ] && slow=30
	[ "$i" = 10 ] && fail=1
	history_commit "$i" "$slow" "$fail" store || exit 1
	[ "$i" = 8 ] && git rev-parse HEAD >step_commit
	[ "$i" = 10 ] && git rev-parse HEAD >failed_commit
done
cd "$SCRATCH"

test_expect_success 'the step: victim +30% at its commit, what moved, nothing else' '
	cd repo && "$TF" history --suite mini --json >h.json 2>err &&
	python3 - <<\PY
import json
h = json.load(open("h.json"))
assert h["schema"] == "testflame-history/1", h["schema"]
commits = [c["commit"] for c in h["commits"]]
assert len(commits) == 13, len(commits)  # 14 stored, one failed
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
assert 20 < c["size_pct"] < 40, c
assert c["ci_pct"][0] < c["size_pct"] < c["ci_pct"][1], c
names = [f["name"] for f in c["functions"]]
assert names and names[0] in ("victim_work", "spin"), names
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

test_expect_success '--commits 6: only the newest six, no complete step left in them' '
	cd repo && "$TF" history --suite mini --commits 6 --json >h6.json &&
	python3 -c "
import json
h = json.load(open(\"h6.json\"))
assert len(h[\"commits\"]) == 6 and h[\"changes\"] == [], h[\"changes\"]
"
'

test_expect_code 1 'a suite nobody stored: one line, exit 1' '
	cd repo && "$TF" history --suite nosuch >out 2>err; rc=$?
	cat err; expect_eq "$(wc -l <err)" 1 "lines" && expect_contains err "nosuch" && exit $rc
'

test_expect_code 2 'a bad option value: usage error' '
	cd repo && "$TF" history --commits 0
'

test_done
