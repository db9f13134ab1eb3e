#!/usr/bin/env bash
# t7075-circleci-orb-shards.sh - the orb's sharded form end to end: the
# example project with examples/.circleci/config.sharded.yml as its config
# (README's CircleCI section), on the stand-in for CircleCI's machine
# executor (tests/node/circleci-run.mjs): the three containers of
# testflame/shard (CIRCLE_NODE_INDEX 0-2 of the job's parallelism: 3) each
# record their part and persist the run file to the workflow's workspace;
# testflame/merge attaches it, merges the shards and judges the suite once.
#
#   build of main       three shards, one merged baseline pushed
#   PR build            the slowdown confirmed in the merge job (the
#                       config's build, then two reruns: the rounds against
#                       the merge-base are t7070's), one comment on the GitHub PR, the
#                       merge job fails with exit 3, the shards pass
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'the CircleCI orb sharded end to end'

TOKEN=ghp_t7075OrbToken0123456789
orb_project "libmini with testflame, sharded" config.sharded.yml || exit 1

circle() { # build job [node] -- env...: one job of workflow run BUILD
	local build=$1 job=$2 node=() name=$1-${2#testflame/}
	shift 2
	if [ "${1:-}" != -- ]; then node=(--node "$1"); name=$name-$1; shift; fi
	shift
	local envs=()
	for e in "$@"; do envs+=(--env "$e"); done
	node "$NODE_DIR/circleci-run.mjs" --config project/.circleci/config.yml --orb "$TOP/circleci/orb.yml" \
		--job "$job" "${node[@]}" --origin "$SCRATCH/origin.git" --workdir "$SCRATCH/ws-$name" \
		--workspace "$SCRATCH/workspace-$build" --out "$SCRATCH/out-$name" --result "$SCRATCH/$name.json" \
		--env CIRCLE_PROJECT_USERNAME=acme --env CIRCLE_PROJECT_REPONAME=libmini \
		--env CIRCLE_BUILD_URL=https://circleci.example/gh/acme/libmini/77 \
		--env "TESTFLAME_REPO=file://$SCRATCH/testflame" "${envs[@]}" >"$name.log" 2>&1
}
# the workflow: the shard job's three containers, then the merge job; the
# merge job's exit status
workflow() { # build -- env...
	local build=$1 k
	shift
	for k in 0 1 2; do
		circle "$build" testflame/shard $k "$@" || { tail -n 60 "$build-shard-$k.log"; return 100; }
	done
	circle "$build" testflame/merge "$@"
}
start_github_api 5 || exit 1

test_expect_success 'a build of main: three containers record their shards, the merge pushes one baseline' '
	workflow main -- "CIRCLE_SHA1=$MAIN" CIRCLE_BRANCH=main || { tail -n 60 main-merge.log; exit 1; }
	for k in 0 1 2; do
		expect_contains main-shard-$k.log "job $((k + 1)) of 3 that circleci runs in parallel: recording shard $((k + 1))/3" &&
		test -s workspace-main/shard-$((k + 1))-of-3.pb.gz || exit 1
	done &&
	expect_contains main-merge.log "merged 3 shards of '\''examples'\''" &&
	expect_eq "$(job_step main-merge.json "Push the baseline")" "success 0" &&
	git --git-dir=origin.git rev-parse -q --verify "refs/testflame/runs/$MAIN" >/dev/null
'

test_expect_success 'a PR build: the merge job confirms the slowdown, one comment, exit 3; the shards pass' '
	push_slow_branch 5 "gate_confirm 2" &&
	{ workflow pr -- "CIRCLE_SHA1=$HEAD_SHA" CIRCLE_BRANCH=slow \
		CIRCLE_PULL_REQUEST=https://github.com/acme/libmini/pull/5 "GITHUB_TOKEN=$TOKEN" \
		"TESTFLAME_GITHUB_API_URL=$API"; rc=$?; } &&
	expect_eq "$rc" 1 "the merge job" &&
	expect_eq "$(job_step pr-merge.json "Fail on regression")" "failure 3" &&
	expect_contains pr-merge.log "building this tree to confirm in the merge job" &&
	expect_contains pr-merge.log "posted the comment on pull request #5" &&
	test -s out-pr-merge/artifacts/testflame-report/index.html &&
	api_state | python3 -c "
import json, sys
pr = json.load(sys.stdin)[\"repos\"][\"acme/libmini\"][\"pulls\"][\"5\"]
assert len(pr[\"comments\"]) == 1 and \"matrix_multiply\" in pr[\"comments\"][0][\"body\"], pr[\"comments\"]
" && api_conforms && ! grep -F "$TOKEN" pr-*.log
'

test_done
