#!/usr/bin/env bash
# t7020-publish-circleci.sh - CircleCI builds comment on the GitHub pull
# request named by CIRCLE_PULL_REQUEST (its owner, repository and number,
# which for a fork's PR are the upstream's) when a GitHub token is given,
# against the OpenAPI-checking stand-in; without a token or a PR they say
# why in one line; builds elsewhere do not try to post at all.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/lib-publish.sh"

need_node_modules 'publishing from CircleCI'

TOKEN=ghp_t7020SecretToken0123456789
setup_pr_repo || exit 1
cat >state.json <<EOF
{"token":"$TOKEN","repos":{"upstream/libmini":{"pulls":{"12":{"head_sha":"$HEAD_SHA","base_sha":"$BASE","diff_repo":"$SCRATCH/repo"}}}}}
EOF
start_api github "$SCRATCH/state.json" || exit 1

circle() { # a CircleCI build of a fork's branch with a PR upstream
	(cd "$SCRATCH/repo" && env CIRCLECI=true CI=true CIRCLE_SHA1="$HEAD_SHA" CIRCLE_BRANCH=pull/12 \
		CIRCLE_PROJECT_USERNAME=someone CIRCLE_PROJECT_REPONAME=libmini \
		CIRCLE_REPOSITORY_URL=git@github.com:someone/libmini.git \
		CIRCLE_BUILD_URL=https://circleci.example/gh/someone/libmini/77 \
		CIRCLE_PULL_REQUEST="${PR_URL-https://github.com/upstream/libmini/pull/12}" \
		TESTFLAME_GITHUB_API_URL="$API" GITHUB_TOKEN="${T-$TOKEN}" "$@")
}

test_expect_code 3 'a PR build on CircleCI with a token: the comment and a review comment on the upstream PR' '
	circle "$TF" run >out 2>err; rc=$?
	expect_contains err "posted the comment on pull request #12" &&
	api_state | python3 -c "
import json, sys
pr = json.load(sys.stdin)[\"repos\"][\"upstream/libmini\"][\"pulls\"][\"12\"]
assert len(pr[\"comments\"]) == 1 and \"matrix_multiply\" in pr[\"comments\"][0][\"body\"]
assert [(r[\"path\"], r[\"line\"]) for r in pr[\"review_comments\"]] == [(\"src/matrix.c\", 12)], pr[\"review_comments\"]
" && expect_not_contains out "::error" && api_conforms && exit $rc
'

test_expect_code 3 'no token: one line says so, exit 3 all the same' '
	T= circle "$TF" run --confirm none >out 2>err; rc=$?
	expect_contains err "nothing posted: no GitHub token" && exit $rc
'

test_expect_code 3 'a branch build without a PR: nothing to comment on' '
	PR_URL= circle "$TF" run --confirm none >out 2>err; rc=$?
	expect_contains err "nothing posted: not a pull request build" && exit $rc
'

test_expect_success 'a plain CI=true build does not try to post' '
	(cd repo && env CI=true GITHUB_TOKEN=$TOKEN "$TF" publish testflame-report) >out 2>err &&
	expect_contains err "not a GitHub Actions, GitLab CI or CircleCI build"
'

test_done
