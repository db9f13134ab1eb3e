/*
 * test_ci.c - CI detection from environments shaped the way each provider
 * documents them: GitHub Actions push and pull_request runs (with event
 * payloads in tests/fixtures/ci/), GitLab branch, merge request, merged
 * results and tag pipelines, CircleCI branch and PR builds, generic CI,
 * local runs, and the TESTFLAME_* overrides.
 */
#include "unit.h"
#include "testflame/context.h"

static char *fixture(const char *name)
{
	const char *top = getenv("TESTFLAME_TOP");
	char *p;
	assert_true(asprintf(&p, "%s/tests/fixtures/ci/%s", top ? top : ".", name) > 0);
	assert_int_equal(access(p, R_OK), 0);
	return p;
}

static tf_ci *detect(char *const *envp)
{
	tf_ci *ci = NULL;
	assert_int_equal(tf_ci_detect(&ci, envp), 0);
	assert_non_null(ci);
	return ci;
}

static void test_local(void **state)
{
	(void)state;
	char *envp[] = { "HOME=/root", "PATH=/usr/bin", NULL };
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->provider, TF_CI_LOCAL);
	assert_string_equal(tf_ci_provider_name(ci->provider), "local");
	assert_null(ci->commit);
	assert_null(ci->branch);
	assert_int_equal(ci->pr, 0);
	tf_ci_free(ci);

	/* CI=false is not CI; an empty NULL environment is local */
	char *envp2[] = { "CI=false", NULL };
	ci = detect(envp2);
	assert_int_equal(ci->provider, TF_CI_LOCAL);
	tf_ci_free(ci);
	assert_int_equal(tf_ci_detect(&ci, NULL), 0);
	assert_int_equal(ci->provider, TF_CI_LOCAL);
	tf_ci_free(ci);
}

static void test_generic(void **state)
{
	(void)state;
	char *envp[] = { "CI=true", "TESTFLAME_BRANCH=release", "TESTFLAME_RUN_URL=https://ci.example/b/9", NULL };
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->provider, TF_CI_GENERIC);
	assert_string_equal(ci->branch, "release");
	assert_string_equal(ci->run_url, "https://ci.example/b/9");
	tf_ci_free(ci);
}

static void test_github_pull_request(void **state)
{
	(void)state;
	char *payload = fixture("github-pull_request.json"), *ev;
	assert_true(asprintf(&ev, "GITHUB_EVENT_PATH=%s", payload) > 0);
	/* GITHUB_SHA of a pull_request run is the merge commit of refs/pull/42/merge */
	char *envp[] = {
		"CI=true", "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=pull_request", ev,
		"GITHUB_SHA=e5bd3914e2e596debea16f433f57875b5b90bcd6",
		"GITHUB_REF=refs/pull/42/merge", "GITHUB_REF_NAME=42/merge", "GITHUB_REF_TYPE=branch",
		"GITHUB_HEAD_REF=faster-parser", "GITHUB_BASE_REF=main",
		"GITHUB_REPOSITORY=acme/widget", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_API_URL=https://api.github.com", "GITHUB_RUN_ID=9087654321",
		"GITHUB_RUN_ATTEMPT=1", NULL,
	};
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->provider, TF_CI_GITHUB);
	assert_string_equal(ci->event, "pull_request");
	assert_int_equal(ci->pr, 42);
	assert_string_equal(ci->commit, "e5bd3914e2e596debea16f433f57875b5b90bcd6");
	assert_string_equal(ci->head_sha, "4f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c");
	assert_string_equal(ci->branch, "faster-parser");
	assert_string_equal(ci->base_branch, "main");
	assert_string_equal(ci->base_sha, "9c8b7a6f5e4d3c2b1a09f8e7d6c5b4a392817065");
	assert_string_equal(ci->default_branch, "main");
	assert_string_equal(ci->repository, "acme/widget");
	assert_string_equal(ci->api_url, "https://api.github.com");
	assert_string_equal(ci->run_url, "https://github.com/acme/widget/actions/runs/9087654321");
	assert_int_equal(ci->warnings.n, 0);
	tf_ci_free(ci);
	free(ev);
	free(payload);
}

static void test_github_push(void **state)
{
	(void)state;
	char *payload = fixture("github-push.json"), *ev;
	assert_true(asprintf(&ev, "GITHUB_EVENT_PATH=%s", payload) > 0);
	/* GITHUB_BASE_REF and GITHUB_HEAD_REF exist but are empty on a push */
	char *envp[] = {
		"GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=push", ev,
		"GITHUB_SHA=0d1e2f3a4b5c6d7e8f9012a3b4c5d6e7f8091a2b",
		"GITHUB_REF=refs/heads/main", "GITHUB_REF_NAME=main", "GITHUB_REF_TYPE=branch",
		"GITHUB_HEAD_REF=", "GITHUB_BASE_REF=",
		"GITHUB_REPOSITORY=acme/widget", "GITHUB_SERVER_URL=https://github.example.com",
		"GITHUB_RUN_ID=77", NULL,
	};
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->provider, TF_CI_GITHUB);
	assert_int_equal(ci->pr, 0);
	assert_null(ci->head_sha);
	assert_null(ci->base_branch);
	assert_string_equal(ci->branch, "main");
	assert_string_equal(ci->default_branch, "main");
	assert_string_equal(ci->run_url, "https://github.example.com/acme/widget/actions/runs/77");
	tf_ci_free(ci);
	free(ev);
	free(payload);
}

static void test_github_bad_payload(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), path[4200], ev[4300];
	snprintf(path, sizeof(path), "%s/event.json", dir);
	FILE *fp = fopen(path, "w");
	fputs("{\n  \"pull_request\": {\n    \"number\": 5,\n  }\n}\n", fp);
	fclose(fp);
	snprintf(ev, sizeof(ev), "GITHUB_EVENT_PATH=%s", path);
	char *envp[] = { "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=pull_request",
			 "GITHUB_REF=refs/pull/5/merge", "GITHUB_BASE_REF=main", ev, NULL };
	tf_ci *ci = detect(envp);
	/* not fatal: the number still comes from GITHUB_REF, and a warning says why head is unknown */
	assert_int_equal(ci->pr, 5);
	assert_string_equal(ci->base_branch, "main");
	assert_null(ci->head_sha);
	assert_int_equal(ci->warnings.n, 1);
	assert_non_null(strstr(ci->warnings.v[0], "event.json':4:"));
	tf_ci_free(ci);

	char *envp2[] = { "GITHUB_ACTIONS=true", "GITHUB_EVENT_PATH=/nonexistent/event.json", NULL };
	ci = detect(envp2);
	assert_int_equal(ci->warnings.n, 1);
	assert_non_null(strstr(ci->warnings.v[0], "cannot read GitHub event payload '/nonexistent/event.json'"));
	tf_ci_free(ci);

	/* jansson quotes the bad token, a line break and a terminal escape
	 * included: the warning stays one printable line (found by fuzzing) */
	fp = fopen(path, "w");
	fputs("{\"an\":\"e\",\"m\\ud8\n\x1b[31m", fp);
	fclose(fp);
	ci = detect(envp);
	assert_int_equal(ci->warnings.n, 1);
	assert_null(strchr(ci->warnings.v[0], '\n'));
	assert_null(strchr(ci->warnings.v[0], '\x1b'));
	assert_non_null(strstr(ci->warnings.v[0], "\\n"));
	tf_ci_free(ci);
	unit_rmtree(dir);
}

static void test_github_merge_group(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), path[4200], ev[4300];
	snprintf(path, sizeof(path), "%s/event.json", dir);
	FILE *fp = fopen(path, "w");
	fputs("{\"action\":\"checks_requested\",\"merge_group\":{"
	      "\"head_sha\":\"ec26c3e57ca3a959ca5aad62de7213c562f8c821\","
	      "\"head_ref\":\"refs/heads/gh-readonly-queue/main/pr-42-9c8b7a6f5e4d3c2b1a09f8e7d6c5b4a392817065\","
	      "\"base_sha\":\"9c8b7a6f5e4d3c2b1a09f8e7d6c5b4a392817065\",\"base_ref\":\"refs/heads/main\"},"
	      "\"repository\":{\"full_name\":\"acme/widget\",\"default_branch\":\"main\"}}", fp);
	fclose(fp);
	snprintf(ev, sizeof(ev), "GITHUB_EVENT_PATH=%s", path);
	char *envp[] = { "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=merge_group", ev,
			 "GITHUB_SHA=ec26c3e57ca3a959ca5aad62de7213c562f8c821",
			 "GITHUB_REF=refs/heads/gh-readonly-queue/main/pr-42-9c8b7a6f5e4d3c2b1a09f8e7d6c5b4a392817065",
			 NULL };
	tf_ci *ci = detect(envp);
	assert_string_equal(ci->base_branch, "main");
	assert_string_equal(ci->base_sha, "9c8b7a6f5e4d3c2b1a09f8e7d6c5b4a392817065");
	assert_string_equal(ci->head_sha, ci->commit);
	assert_int_equal(ci->pr, 0);
	tf_ci_free(ci);
	unit_rmtree(dir);
}

static void test_gitlab_merge_request(void **state)
{
	(void)state;
	char *envp[] = {
		"CI=true", "GITLAB_CI=true", "CI_PIPELINE_SOURCE=merge_request_event",
		"CI_COMMIT_SHA=2b7f0e4bd6c5a3918f7e6d5c4b3a29180f7e6d5c",
		"CI_COMMIT_REF_NAME=faster-parser", "CI_DEFAULT_BRANCH=main",
		"CI_MERGE_REQUEST_IID=17", "CI_MERGE_REQUEST_ID=88001",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=faster-parser",
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME=develop",
		"CI_MERGE_REQUEST_DIFF_BASE_SHA=a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
		"CI_MERGE_REQUEST_EVENT_TYPE=detached",
		"CI_PROJECT_PATH=acme/tools/widget", "CI_PROJECT_ID=4242",
		"CI_PROJECT_URL=https://gitlab.example.com/acme/tools/widget",
		"CI_PIPELINE_URL=https://gitlab.example.com/acme/tools/widget/-/pipelines/1234",
		"CI_JOB_URL=https://gitlab.example.com/acme/tools/widget/-/jobs/5678",
		"CI_SERVER_URL=https://gitlab.example.com",
		"CI_API_V4_URL=https://gitlab.example.com/api/v4", NULL,
	};
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->provider, TF_CI_GITLAB);
	assert_string_equal(ci->event, "merge_request_event");
	assert_int_equal(ci->pr, 17);
	assert_string_equal(ci->branch, "faster-parser");
	assert_string_equal(ci->base_branch, "develop");
	assert_string_equal(ci->base_sha, "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678");
	assert_null(ci->head_sha); /* a detached MR pipeline builds the head itself */
	assert_string_equal(ci->commit, "2b7f0e4bd6c5a3918f7e6d5c4b3a29180f7e6d5c");
	assert_string_equal(ci->default_branch, "main");
	assert_string_equal(ci->repository, "acme/tools/widget");
	assert_string_equal(ci->project_id, "4242");
	assert_string_equal(ci->run_url, "https://gitlab.example.com/acme/tools/widget/-/pipelines/1234");
	assert_string_equal(ci->job_url, "https://gitlab.example.com/acme/tools/widget/-/jobs/5678");
	assert_string_equal(ci->api_url, "https://gitlab.example.com/api/v4");
	tf_ci_free(ci);
}

static void test_gitlab_merged_results(void **state)
{
	(void)state;
	/* merged results: CI_COMMIT_SHA is the merge result, the MR head is SOURCE_BRANCH_SHA */
	char *envp[] = {
		"GITLAB_CI=true", "CI_PIPELINE_SOURCE=merge_request_event",
		"CI_COMMIT_SHA=ffff0e4bd6c5a3918f7e6d5c4b3a29180f7e6d5c",
		"CI_MERGE_REQUEST_IID=3", "CI_MERGE_REQUEST_EVENT_TYPE=merged_result",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME=fix",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_SHA=1111222233334444555566667777888899990000",
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME=main", NULL,
	};
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->pr, 3);
	assert_string_equal(ci->commit, "ffff0e4bd6c5a3918f7e6d5c4b3a29180f7e6d5c");
	assert_string_equal(ci->head_sha, "1111222233334444555566667777888899990000");
	tf_ci_free(ci);
}

static void test_gitlab_branch_and_tag(void **state)
{
	(void)state;
	char *envp[] = {
		"GITLAB_CI=true", "CI_PIPELINE_SOURCE=push", "CI_COMMIT_SHA=abc",
		"CI_COMMIT_BRANCH=main", "CI_COMMIT_REF_NAME=main", "CI_DEFAULT_BRANCH=main",
		"CI_JOB_URL=https://gitlab.com/a/b/-/jobs/1", NULL,
	};
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->pr, 0);
	assert_string_equal(ci->branch, "main");
	assert_null(ci->base_branch);
	/* no pipeline URL: the job's */
	assert_string_equal(ci->run_url, "https://gitlab.com/a/b/-/jobs/1");
	tf_ci_free(ci);

	char *tag[] = { "GITLAB_CI=true", "CI_COMMIT_TAG=v1.2", "CI_COMMIT_REF_NAME=v1.2", NULL };
	ci = detect(tag);
	assert_null(ci->branch);
	tf_ci_free(ci);
}

static void test_circleci(void **state)
{
	(void)state;
	char *envp[] = {
		"CI=true", "CIRCLECI=true", "CIRCLE_BRANCH=faster-parser",
		"CIRCLE_SHA1=4f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c",
		"CIRCLE_PULL_REQUEST=https://github.com/acme/widget/pull/42",
		"CIRCLE_PULL_REQUESTS=https://github.com/acme/widget/pull/42",
		"CIRCLE_PROJECT_USERNAME=acme", "CIRCLE_PROJECT_REPONAME=widget",
		"CIRCLE_BUILD_URL=https://circleci.com/gh/acme/widget/1234",
		"CIRCLE_BUILD_NUM=1234", "CIRCLE_REPOSITORY_URL=git@github.com:acme/widget.git", NULL,
	};
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->provider, TF_CI_CIRCLECI);
	assert_int_equal(ci->pr, 42);
	assert_string_equal(ci->event, "pull_request");
	assert_string_equal(ci->branch, "faster-parser");
	assert_string_equal(ci->commit, "4f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c");
	assert_string_equal(ci->repository, "acme/widget");
	assert_string_equal(ci->run_url, "https://circleci.com/gh/acme/widget/1234");
	assert_null(ci->base_branch); /* CircleCI does not say */
	tf_ci_free(ci);

	/* forked PRs also get CIRCLE_PR_NUMBER; a branch build has neither */
	char *fork[] = { "CIRCLECI=true", "CIRCLE_PR_NUMBER=7",
			 "CIRCLE_PULL_REQUEST=https://github.com/acme/widget/pull/7", NULL };
	ci = detect(fork);
	assert_int_equal(ci->pr, 7);
	tf_ci_free(ci);
	char *branch[] = { "CIRCLECI=true", "CIRCLE_BRANCH=main", NULL };
	ci = detect(branch);
	assert_int_equal(ci->pr, 0);
	assert_string_equal(ci->event, "push");
	tf_ci_free(ci);
	char *odd[] = { "CIRCLECI=true", "CIRCLE_PULL_REQUEST=https://github.com/acme/widget/pull/x", NULL };
	ci = detect(odd);
	assert_int_equal(ci->pr, 0);
	tf_ci_free(ci);
}

/* Parallel copies of a job: GitLab counts from 1, CircleCI from 0; one
 * copy, or values that name no copy, are no shard. */
static void test_parallel_nodes(void **state)
{
	(void)state;
	char *gl[] = { "GITLAB_CI=true", "CI_NODE_INDEX=2", "CI_NODE_TOTAL=3", NULL };
	tf_ci *ci = detect(gl);
	assert_int_equal(ci->shard_index, 2);
	assert_int_equal(ci->shard_total, 3);
	tf_ci_free(ci);
	char *cc[] = { "CIRCLECI=true", "CIRCLE_NODE_INDEX=0", "CIRCLE_NODE_TOTAL=3", NULL };
	ci = detect(cc);
	assert_int_equal(ci->shard_index, 1);
	assert_int_equal(ci->shard_total, 3);
	tf_ci_free(ci);
	char *cc_last[] = { "CIRCLECI=true", "CIRCLE_NODE_INDEX=2", "CIRCLE_NODE_TOTAL=3", NULL };
	ci = detect(cc_last);
	assert_int_equal(ci->shard_index, 3);
	tf_ci_free(ci);
	/* not parallel: GitLab sets CI_NODE_TOTAL=1, CircleCI 1 and index 0 */
	char *one[] = { "GITLAB_CI=true", "CI_NODE_TOTAL=1", NULL };
	ci = detect(one);
	assert_int_equal(ci->shard_total, 0);
	assert_int_equal(ci->warnings.n, 0);
	tf_ci_free(ci);
	char *cc_one[] = { "CIRCLECI=true", "CIRCLE_NODE_INDEX=0", "CIRCLE_NODE_TOTAL=1", NULL };
	ci = detect(cc_one);
	assert_int_equal(ci->shard_total, 0);
	tf_ci_free(ci);
	/* GitLab's index is never 0, CircleCI's never N; nor a word */
	char *bad[] = { "GITLAB_CI=true", "CI_NODE_INDEX=0", "CI_NODE_TOTAL=3", NULL };
	ci = detect(bad);
	assert_int_equal(ci->shard_total, 0);
	assert_int_equal(ci->warnings.n, 1);
	assert_non_null(strstr(ci->warnings.v[0], "CI_NODE_INDEX=0"));
	tf_ci_free(ci);
	char *bad2[] = { "CIRCLECI=true", "CIRCLE_NODE_INDEX=3", "CIRCLE_NODE_TOTAL=3", NULL };
	ci = detect(bad2);
	assert_int_equal(ci->shard_total, 0);
	tf_ci_free(ci);
	char *bad3[] = { "GITLAB_CI=true", "CI_NODE_INDEX=two", "CI_NODE_TOTAL=3", NULL };
	ci = detect(bad3);
	assert_int_equal(ci->shard_total, 0);
	tf_ci_free(ci);
	/* another CI's variables mean nothing on GitHub */
	char *gh[] = { "GITHUB_ACTIONS=true", "CI_NODE_INDEX=2", "CI_NODE_TOTAL=3", NULL };
	ci = detect(gh);
	assert_int_equal(ci->shard_total, 0);
	tf_ci_free(ci);
}

static void test_overrides(void **state)
{
	(void)state;
	char *envp[] = {
		"GITLAB_CI=true", "CI_MERGE_REQUEST_IID=17", "CI_COMMIT_SHA=aaa",
		"CI_MERGE_REQUEST_TARGET_BRANCH_NAME=develop",
		"TESTFLAME_COMMIT=bbb", "TESTFLAME_PR=99", "TESTFLAME_BASE_BRANCH=main",
		"TESTFLAME_REPOSITORY=me/mine", "TESTFLAME_BRANCH=topic",
		"TESTFLAME_DEFAULT_BRANCH=trunk", "TESTFLAME_HEAD_SHA=ccc", NULL,
	};
	tf_ci *ci = detect(envp);
	assert_int_equal(ci->provider, TF_CI_GITLAB);
	assert_string_equal(ci->commit, "bbb");
	assert_true(ci->commit_forced);
	assert_true(ci->default_branch_forced);
	assert_int_equal(ci->pr, 99);
	assert_string_equal(ci->base_branch, "main");
	assert_string_equal(ci->repository, "me/mine");
	assert_string_equal(ci->branch, "topic");
	assert_string_equal(ci->default_branch, "trunk");
	assert_string_equal(ci->head_sha, "ccc");
	tf_ci_free(ci);

	char *forced[] = { "GITHUB_ACTIONS=true", "TESTFLAME_CI=local", "TESTFLAME_PR=none",
			   "GITHUB_REF=refs/pull/3/merge", NULL };
	ci = detect(forced);
	assert_int_equal(ci->provider, TF_CI_LOCAL);
	assert_int_equal(ci->pr, 0);
	tf_ci_free(ci);
}

static void test_bad_overrides(void **state)
{
	(void)state;
	tf_ci *ci = (tf_ci *)1;
	char *pr[] = { "TESTFLAME_PR=abc", NULL };
	assert_int_equal(tf_ci_detect(&ci, pr), TF_EUSAGE);
	assert_null(ci);
	assert_string_equal(tf_error_last(), "TESTFLAME_PR must be a pull request number or 'none', not 'abc'");
	char *prov[] = { "TESTFLAME_CI=jenkins", NULL };
	assert_int_equal(tf_ci_detect(&ci, prov), TF_EUSAGE);
	assert_non_null(strstr(tf_error_last(), "not 'jenkins'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_local),
		cmocka_unit_test(test_generic),
		cmocka_unit_test(test_github_pull_request),
		cmocka_unit_test(test_github_push),
		cmocka_unit_test(test_github_bad_payload),
		cmocka_unit_test(test_github_merge_group),
		cmocka_unit_test(test_gitlab_merge_request),
		cmocka_unit_test(test_gitlab_merged_results),
		cmocka_unit_test(test_gitlab_branch_and_tag),
		cmocka_unit_test(test_circleci),
		cmocka_unit_test(test_parallel_nodes),
		cmocka_unit_test(test_overrides),
		cmocka_unit_test(test_bad_overrides),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
