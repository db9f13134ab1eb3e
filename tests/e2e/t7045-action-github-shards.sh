#!/usr/bin/env bash
# t7045-action-github-shards.sh - the sharded GitHub workflow end to end: a
# new user copies examples/ and uses .github/workflows/testflame-sharded.yml
# (README's GitHub section). Each workflow run is its matrix jobs
# perf-shard (shard 1, 2, 3: every third test of `make check`, the action's
# `shard:`, the run file uploaded as an artifact), then the perf job, which
# downloads every shard's artifact and merges them (`merge: true`); all run
# as a hosted runner would (tests/node/gha-run.mjs: GitHub's parser and
# expression engine, the matrix context, artifacts kept for the workflow
# run), with the GitHub API played on loopback.
#
#   push to main        three shards recorded, one merged baseline pushed
#   PR slowing a test   the merge job confirms it on its runner (the
#                       config's build, then two reruns: the rounds against
#                       the merge-base are t7040's), one comment naming the
#                       test and the function, the merge step fails with 3
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'the sharded GitHub workflow end to end'

TOKEN=ghs_t7045ShardsToken0123456789
copy_testflame testflame
example_project "libmini with testflame, sharded" || exit 1

# gha EVENT SHA REF PAYLOAD RUN JOB [SHARD]: one job of workflow run RUN,
# in its own workspace, on a fresh runner of one image; the run's jobs
# share its artifacts, and every job the repository's Actions cache, as
# GitHub's do: the first job builds testflame (3-6 s) and the other seven
# restore it (building it on a miss and restoring it are t7040's to check)
gha() {
	local name=$5-$6${7:+-$7} matrix=()
	[ -z "${7:-}" ] || matrix=(--matrix "{\"shard\":$7}")
	rm -rf "$SCRATCH/toolcache"
	node "$NODE_DIR/gha-run.mjs" --workflow "$SCRATCH/project/.github/workflows/testflame-sharded.yml" \
		--job "$6" "${matrix[@]}" --event "$1" --sha "$2" --ref "$3" --payload "$4" \
		--origin "$SCRATCH/origin.git" --workspace "$SCRATCH/ws-$name" --testflame "$SCRATCH/testflame" \
		--artifacts "$SCRATCH/artifacts-$5" --result "$SCRATCH/$name.json" --api-url "$API" \
		--token "$TOKEN" --temp "$(mktemp -d "$SCRATCH/runner.XXXXXX")" --cache "$SCRATCH/cache" \
		--env "ImageOS=ubuntu24,ImageVersion=20261201.1,RUNNER_TOOL_CACHE=$SCRATCH/toolcache" >"$name.log" 2>&1
}
# workflow run RUN: the three shard jobs, then the merge job; the merge
# job's exit status
workflow() { # EVENT SHA REF PAYLOAD RUN
	local k
	for k in 1 2 3; do
		gha "$@" perf-shard $k || { tail -n 60 "$5-perf-shard-$k.log"; return 100; }
	done
	gha "$@" perf
}
start_github_api 7 || exit 1

test_expect_success 'a push to main: three shard jobs upload their parts, the merge job pushes one baseline' '
	cat >event-main.json <<-EOF &&
	{"ref":"refs/heads/main","before":"0000000000000000000000000000000000000000","after":"$MAIN",
	 "repository":{"full_name":"acme/libmini","default_branch":"main"},"pusher":{"name":"dev"}}
	EOF
	workflow push "$MAIN" refs/heads/main event-main.json main || { tail -n 60 main-perf.log; exit 1; }
	for k in 1 2 3; do
		expect_eq "$(job_step main-perf-shard-$k.json "Upload the shard")" "success 0" &&
		expect_eq "$(job_step main-perf-shard-$k.json "Push the baseline")" "skipped " &&
		test -s artifacts-main/testflame-shard-$k-of-3/shard-$k-of-3.pb.gz || exit 1
	done &&
	expect_eq "$(ls artifacts-main | grep -c "^testflame-shard-")" 3 "shard artifacts" &&
	expect_contains main-perf.log "downloaded artifact '\''testflame-shard-2-of-3'\''" &&
	expect_contains main-perf.log "merged 3 shards of '\''examples'\''" &&
	expect_eq "$(job_step main-perf.json "Push the baseline")" "success 0" &&
	git --git-dir=origin.git rev-parse -q --verify "refs/testflame/runs/$MAIN" >/dev/null
'

test_expect_code 3 'a PR that slows test_matrix: the merge job confirms it, one comment, exit 3' '
	git clone -q origin.git dev && (cd dev && git config user.email dev@example.com &&
		git config user.name dev && git checkout -q -b slow && slow_down_matrix && gate_confirm 2 &&
		git commit -qam "matrix: slower" && git push -q origin slow &&
		git checkout -q --detach origin/main &&
		git merge -q --no-ff slow -m "Merge slow into main" &&
		git push -q -f origin HEAD:refs/pull/7/merge slow:refs/pull/7/head) &&
	HEAD_SHA=$(git -C origin.git rev-parse slow) && MERGE=$(git -C origin.git rev-parse refs/pull/7/merge) &&
	api_patch "{\"repos\":{\"acme/libmini\":{\"pulls\":{\"7\":{\"head_sha\":\"$HEAD_SHA\"}}}}}" &&
	github_pr_event event-pr.json 7 "$HEAD_SHA" slow "$MAIN" main acme/libmini &&
	{ workflow pull_request "$MERGE" refs/pull/7/merge event-pr.json pr; rc=$?; } &&
	expect_eq "$rc" 1 "the merge job" &&
	expect_eq "$(job_step pr-perf.json "Profile and compare")" "success 0" &&
	expect_eq "$(job_step pr-perf.json "Fail on regression")" "failure 3" &&
	expect_contains pr-perf.log "building this tree to confirm in the merge job" &&
	api_state | python3 -c "
import json, sys
pr = json.load(sys.stdin)[\"repos\"][\"acme/libmini\"][\"pulls\"][\"7\"]
mine = [c for c in pr.get(\"comments\", []) if c[\"user\"] == \"github-actions[bot]\"]
assert len(mine) == 1, mine
assert \"test_matrix\" in mine[0][\"body\"] and \"matrix_multiply\" in mine[0][\"body\"], mine[0][\"body\"]
" &&
	python3 - <<-\PY &&
	import json
	r = json.load(open("pr-perf.json"))
	w = [a for a in r["annotations"] if a["level"] == "warning" and a.get("file") == "src/matrix.c"]
	assert len(w) == 1 and "matrix_multiply" in w[0]["title"], w
	PY
	for k in 1 2 3; do
		expect_eq "$(job_step pr-perf-shard-$k.json "Fail on regression")" "skipped " || exit 1
	done &&
	test -s artifacts-pr/testflame-report-perf/report.md &&
	expect_contains artifacts-pr/testflame-report-perf/report.md "merged from 3 shards" &&
	api_conforms && exit 3
'

test_expect_success 'the token never reached a log' '
	! grep -F "$TOKEN" main-*.log pr-*.log
'

test_done
