#!/usr/bin/env bash
# t3002-context-gitlab-circleci.sh - GitLab CI merge request and branch
# pipelines, and CircleCI branch and PR builds, on checkouts made the way
# their runners make them, with the variables their documentation lists.
. "$(dirname "$0")/lib.sh"
. "$TOP/tests/e2e/context-lib.sh"

test_expect_success 'upstream with a pipeline ref for the MR head' '
	make_upstream &&
	git -C up update-ref refs/pipelines/1234 feature &&
	git -C up update-ref refs/merge-requests/17/head feature
'
HEAD_SHA=$(git -C up rev-parse feature 2>/dev/null)
FORK=$(git -C up merge-base feature main 2>/dev/null)

# checkout DIR DEPTH: a GitLab runner's fetch for an MR pipeline (detached)
gl_checkout() {
	git init -q "$1" &&
	git -C "$1" remote add origin "file://$SCRATCH/up" &&
	git -C "$1" fetch -q --depth "$2" --prune origin \
		"+refs/pipelines/1234:refs/pipelines/1234" "+refs/heads/feature:refs/remotes/origin/feature" &&
	git -C "$1" checkout -q -f "$HEAD_SHA"
}

gl_mr_env() {
	clean CI=true GITLAB_CI=true CI_SERVER=yes CI_PIPELINE_SOURCE=merge_request_event \
		CI_PIPELINE_ID=1234 CI_JOB_ID=5678 \
		CI_COMMIT_SHA="$HEAD_SHA" CI_COMMIT_REF_NAME=feature CI_COMMIT_REF_SLUG=feature \
		CI_COMMIT_BEFORE_SHA=0000000000000000000000000000000000000000 \
		CI_DEFAULT_BRANCH=main CI_PROJECT_PATH=acme/tools/widget CI_PROJECT_ID=4242 \
		CI_PROJECT_URL=https://gitlab.example.com/acme/tools/widget \
		CI_PIPELINE_URL=https://gitlab.example.com/acme/tools/widget/-/pipelines/1234 \
		CI_JOB_URL=https://gitlab.example.com/acme/tools/widget/-/jobs/5678 \
		CI_SERVER_URL=https://gitlab.example.com CI_API_V4_URL=https://gitlab.example.com/api/v4 \
		CI_MERGE_REQUEST_IID=17 CI_MERGE_REQUEST_ID=88017 CI_MERGE_REQUEST_EVENT_TYPE=detached \
		CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=feature CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main \
		CI_MERGE_REQUEST_DIFF_BASE_SHA="$FORK" CI_MERGE_REQUEST_PROJECT_PATH=acme/tools/widget \
		"$@"
}

test_expect_success 'GitLab MR pipeline (GIT_DEPTH 20): MR number, target, merge-base' '
	gl_checkout mr 20 &&
	(cd mr && gl_mr_env "$TFC" context) > mr.json 2> mr.err &&
	expect_eq "$(jfield mr.json ci)" gitlab &&
	expect_eq "$(jfield mr.json pr)" 17 &&
	expect_eq "$(jfield mr.json commit)" "$HEAD_SHA" &&
	expect_eq "$(jfield mr.json head_sha)" null &&
	expect_eq "$(jfield mr.json branch)" feature &&
	expect_eq "$(jfield mr.json base_branch)" main &&
	expect_eq "$(jfield mr.json default_branch)" main &&
	expect_eq "$(jfield mr.json merge_base)" "$FORK" &&
	expect_eq "$(jfield mr.json repository)" acme/tools/widget &&
	expect_eq "$(jfield mr.json run_url)" https://gitlab.example.com/acme/tools/widget/-/pipelines/1234 &&
	python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))[\"changes\"]))" mr.json > n &&
	expect_eq "$(cat n)" 3 changed-files &&
	expect_not_contains mr.err warning
'

test_expect_success 'GitLab MR pipeline with GIT_DEPTH 1: the fix names GIT_DEPTH' '
	gl_checkout mr1 1 &&
	(cd mr1 && gl_mr_env "$TFC" context) > mr1.json 2> mr1.err &&
	expect_eq "$(jfield mr1.json merge_base)" "$FORK" &&
	expect_eq "$(jfield mr1.json shallow)" true &&
	expect_eq "$(jfield mr1.json changes)" null &&
	test "$(grep -c "^testflame: warning: " mr1.err)" = 1 &&
	expect_contains mr1.err "GIT_DEPTH: 0"
'

test_expect_success 'GitLab branch pipeline on the default branch' '
	git clone -q "file://$SCRATCH/up" br &&
	(cd br && clean CI=true GITLAB_CI=true CI_PIPELINE_SOURCE=push \
		CI_COMMIT_SHA="$(git rev-parse HEAD)" CI_COMMIT_BRANCH=main CI_COMMIT_REF_NAME=main \
		CI_DEFAULT_BRANCH=main CI_PROJECT_PATH=acme/widget \
		CI_PIPELINE_URL=https://gitlab.com/acme/widget/-/pipelines/9 "$TFC" context) > br.json 2> br.err &&
	expect_eq "$(jfield br.json pr)" null &&
	expect_eq "$(jfield br.json branch)" main &&
	expect_contains br.err on_default_branch=true
'

test_expect_success 'CircleCI PR build: number from CIRCLE_PULL_REQUEST, target = default branch' '
	git clone -q "file://$SCRATCH/up" circle && git -C circle checkout -q feature &&
	(cd circle && clean CI=true CIRCLECI=true CIRCLE_BRANCH=feature \
		CIRCLE_SHA1="$(git rev-parse HEAD)" CIRCLE_BUILD_NUM=321 \
		CIRCLE_BUILD_URL=https://circleci.com/gh/acme/widget/321 \
		CIRCLE_PROJECT_USERNAME=acme CIRCLE_PROJECT_REPONAME=widget \
		CIRCLE_REPOSITORY_URL=git@github.com:acme/widget.git \
		CIRCLE_PULL_REQUEST=https://github.com/acme/widget/pull/42 \
		CIRCLE_PULL_REQUESTS=https://github.com/acme/widget/pull/42 "$TFC" context) > c.json 2> c.err &&
	expect_eq "$(jfield c.json ci)" circleci &&
	expect_eq "$(jfield c.json pr)" 42 &&
	expect_eq "$(jfield c.json branch)" feature &&
	expect_eq "$(jfield c.json base_branch)" main &&
	expect_eq "$(jfield c.json merge_base)" "$FORK" &&
	expect_eq "$(jfield c.json repository)" acme/widget &&
	expect_eq "$(jfield c.json run_url)" https://circleci.com/gh/acme/widget/321
'

test_expect_success 'CircleCI: TESTFLAME_BASE_BRANCH names the target it cannot tell' '
	git -C up branch develop feature~2 &&
	git -C circle fetch -q origin &&
	(cd circle && clean CIRCLECI=true CIRCLE_BRANCH=feature TESTFLAME_BASE_BRANCH=develop \
		"$TFC" context) > d.json 2>/dev/null &&
	expect_eq "$(jfield d.json base_branch)" develop &&
	expect_eq "$(jfield d.json merge_base)" "$(git -C up rev-parse develop)"
'

test_done
