/*
 * ci.c - what the CI system tells about a run: provider, PR/MR number, base
 * and head, repository and run URL, read from an environment array (never
 * getenv(), so tests control every variable) and, for GitHub Actions, from
 * the event payload. TESTFLAME_* variables override anything detected so
 * other CI systems and odd setups can say it themselves.
 *
 * Variables follow each provider's documentation:
 * - GitHub Actions, "Variables reference" (docs.github.com/en/actions/
 *   reference/variables-reference): GITHUB_ACTIONS, GITHUB_EVENT_NAME,
 *   GITHUB_EVENT_PATH, GITHUB_SHA, GITHUB_REF, GITHUB_REF_NAME,
 *   GITHUB_REF_TYPE, GITHUB_HEAD_REF, GITHUB_BASE_REF, GITHUB_REPOSITORY,
 *   GITHUB_SERVER_URL, GITHUB_API_URL, GITHUB_RUN_ID. "Events that trigger
 *   workflows": for pull_request, GITHUB_SHA is the last merge commit of
 *   refs/pull/N/merge, the head is github.event.pull_request.head.sha.
 *   Webhook "pull_request" payload: number, pull_request.{number, head.{sha,
 *   ref}, base.{sha, ref}}, repository.{full_name, default_branch};
 *   "merge_group": merge_group.{head_sha, base_sha, base_ref}.
 * - GitLab CI, "Predefined CI/CD variables reference" (docs.gitlab.com/ee/
 *   ci/variables/predefined_variables.html): GITLAB_CI, CI_PIPELINE_SOURCE,
 *   CI_COMMIT_SHA, CI_COMMIT_BRANCH (branch pipelines only),
 *   CI_COMMIT_REF_NAME, CI_COMMIT_TAG, CI_DEFAULT_BRANCH, CI_PROJECT_PATH,
 *   CI_PROJECT_ID, CI_PROJECT_URL, CI_PIPELINE_URL, CI_JOB_URL,
 *   CI_SERVER_URL, CI_API_V4_URL; merge request pipelines:
 *   CI_MERGE_REQUEST_IID, CI_MERGE_REQUEST_SOURCE_BRANCH_NAME,
 *   CI_MERGE_REQUEST_TARGET_BRANCH_NAME, CI_MERGE_REQUEST_DIFF_BASE_SHA,
 *   CI_MERGE_REQUEST_SOURCE_BRANCH_SHA (merged results pipelines only, where
 *   CI_COMMIT_SHA is the merge result); external pull request pipelines:
 *   CI_EXTERNAL_PULL_REQUEST_IID, _SOURCE_BRANCH_NAME, _SOURCE_BRANCH_SHA,
 *   _TARGET_BRANCH_NAME.
 * - CircleCI, "Project values and variables" (circleci.com/docs/reference/
 *   variables): CIRCLECI, CIRCLE_SHA1, CIRCLE_BRANCH, CIRCLE_TAG,
 *   CIRCLE_PULL_REQUEST (the PR's URL, ".../pull/123"), CIRCLE_PR_NUMBER
 *   (forked PRs only), CIRCLE_PROJECT_USERNAME, CIRCLE_PROJECT_REPONAME,
 *   CIRCLE_BUILD_URL. CircleCI does not name a PR's base branch.
 * - Parallel copies of one job (the shards of a suite): GitLab's
 *   `parallel: N`, CI_NODE_INDEX (1..N) and CI_NODE_TOTAL ("CI/CD YAML
 *   syntax reference", parallel); CircleCI's `parallelism: N`,
 *   CIRCLE_NODE_INDEX (0..N-1) and CIRCLE_NODE_TOTAL.
 * - Any CI: CI=true.
 */
#include "testflame/context.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static const char *const provider_names[] = {
	[TF_CI_LOCAL] = "local",
	[TF_CI_GENERIC] = "generic",
	[TF_CI_GITHUB] = "github",
	[TF_CI_GITLAB] = "gitlab",
	[TF_CI_CIRCLECI] = "circleci",
};

const char *tf_ci_provider_name(tf_ci_provider p)
{
	return (size_t)p < TF_ARRAY_SIZE(provider_names) ? provider_names[p] : "local";
}

bool tf_ci_provider_parse(tf_ci_provider *out, const char *name)
{
	for (size_t i = 0; i < TF_ARRAY_SIZE(provider_names); i++) {
		if (strcmp(provider_names[i], name) == 0) {
			*out = (tf_ci_provider)i;
			return true;
		}
	}
	return false;
}

/* An empty value counts as unset: CI systems export empty variables for
 * things that do not apply (GITHUB_BASE_REF on a push). */
static const char *env(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	if (!envp)
		return NULL;
	for (; *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return (*envp)[n + 1] ? *envp + n + 1 : NULL;
	return NULL;
}

static bool env_true(char *const *envp, const char *name)
{
	const char *v = env(envp, name);
	return v && strcmp(v, "false") != 0 && strcmp(v, "0") != 0;
}

/* Replace *slot with a copy of v, unless v is NULL. */
static void set(char **slot, const char *v)
{
	if (!v)
		return;
	free(*slot);
	*slot = tf_xstrdup(v);
}

static void set_if_unset(char **slot, const char *v)
{
	if (!*slot)
		set(slot, v);
}

#define warn(ci, ...) tf_msglist_pushf(&(ci)->warnings, __VA_ARGS__)

/* A positive decimal number, or 0. */
static long parse_number(const char *s)
{
	char *end;
	long v;
	if (!s || !*s || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0)
		return 0;
	return v;
}

/* "https://github.com/o/r/pull/123" -> 123 (also GitLab's ".../merge_requests/7"). */
static long pr_from_url(const char *url)
{
	const char *slash;
	size_t n;
	if (!url)
		return 0;
	n = strlen(url);
	while (n > 0 && url[n - 1] == '/')
		n--;
	slash = memrchr(url, '/', n);
	if (!slash)
		return 0;
	char digits[32];
	size_t len = n - (size_t)(slash + 1 - url);
	if (len == 0 || len >= sizeof(digits))
		return 0;
	memcpy(digits, slash + 1, len);
	digits[len] = '\0';
	return parse_number(digits);
}

static const char *strip_prefix(const char *s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s && strncmp(s, prefix, n) == 0 ? s + n : NULL;
}

static const char *json_str(json_t *obj, const char *path)
{
	/* "a.b.c": nested objects */
	char key[64];
	const char *p = path, *dot;
	json_t *cur = obj;
	while (cur && (dot = strchr(p, '.'))) {
		size_t n = (size_t)(dot - p);
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, p, n);
		key[n] = '\0';
		cur = json_object_get(cur, key);
		p = dot + 1;
	}
	cur = cur ? json_object_get(cur, p) : NULL;
	return json_is_string(cur) && json_string_length(cur) ? json_string_value(cur) : NULL;
}

static void github_payload(tf_ci *ci, const char *path)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err), *pr, *num;

	if (!root) {
		if (err.line > 0)
			warn(ci, "GitHub event payload '%s':%d:%d: %s; PR number and head SHA are unknown",
			     path, err.line, err.column, err.text);
		else
			warn(ci, "cannot read GitHub event payload '%s': %s; PR number and head SHA are unknown",
			     path, err.text);
		return;
	}
	if (!json_is_object(root)) {
		warn(ci, "GitHub event payload '%s' is not a JSON object", path);
		json_decref(root);
		return;
	}
	/* pull_request, pull_request_target, pull_request_review[_comment] */
	pr = json_object_get(root, "pull_request");
	if (json_is_object(pr)) {
		num = json_object_get(pr, "number");
		if (!json_is_integer(num))
			num = json_object_get(root, "number");
		if (json_is_integer(num) && json_integer_value(num) > 0)
			ci->pr = (long)json_integer_value(num);
		set(&ci->head_sha, json_str(pr, "head.sha"));
		set_if_unset(&ci->branch, json_str(pr, "head.ref"));
		set_if_unset(&ci->base_branch, json_str(pr, "base.ref"));
		set(&ci->base_sha, json_str(pr, "base.sha"));
	}
	/* merge queues: the queue branch is built on top of the base */
	if (json_is_object(json_object_get(root, "merge_group"))) {
		set(&ci->head_sha, json_str(root, "merge_group.head_sha"));
		set(&ci->base_sha, json_str(root, "merge_group.base_sha"));
		set_if_unset(&ci->base_branch,
			     strip_prefix(json_str(root, "merge_group.base_ref"), "refs/heads/"));
	}
	set_if_unset(&ci->repository, json_str(root, "repository.full_name"));
	set(&ci->default_branch, json_str(root, "repository.default_branch"));
	json_decref(root);
}

static void detect_github(tf_ci *ci, char *const *envp)
{
	const char *ref, *path, *server, *run;

	set(&ci->event, env(envp, "GITHUB_EVENT_NAME"));
	set(&ci->commit, env(envp, "GITHUB_SHA"));
	set(&ci->repository, env(envp, "GITHUB_REPOSITORY"));
	server = env(envp, "GITHUB_SERVER_URL");
	set(&ci->server_url, server ? server : "https://github.com");
	set(&ci->api_url, env(envp, "GITHUB_API_URL"));
	/* Set only for pull_request and pull_request_target. */
	set(&ci->branch, env(envp, "GITHUB_HEAD_REF"));
	set(&ci->base_branch, env(envp, "GITHUB_BASE_REF"));
	ref = env(envp, "GITHUB_REF");
	if (!ci->branch && strip_prefix(ref, "refs/heads/"))
		set(&ci->branch, strip_prefix(ref, "refs/heads/"));
	if (!ci->branch) {
		const char *type = env(envp, "GITHUB_REF_TYPE");
		if (type && strcmp(type, "branch") == 0)
			set(&ci->branch, env(envp, "GITHUB_REF_NAME"));
	}
	/* refs/pull/N/merge also carries the number, should the payload be missing. */
	if (strip_prefix(ref, "refs/pull/"))
		ci->pr = parse_number(strndupa(ref + 10, strcspn(ref + 10, "/")));
	path = env(envp, "GITHUB_EVENT_PATH");
	if (path)
		github_payload(ci, path);
	run = env(envp, "GITHUB_RUN_ID");
	if (run && ci->repository)
		ci->run_url = tf_xasprintf("%s/%s/actions/runs/%s", ci->server_url,
					   ci->repository, run);
}

/*
 * The CI's own split of a job into parallel copies, when there are several:
 * GitLab's `parallel: N` counts its jobs from 1 (CI_NODE_INDEX, and
 * CI_NODE_TOTAL is 1 without `parallel:`), CircleCI's `parallelism: N`
 * from 0 (CIRCLE_NODE_INDEX, CIRCLE_NODE_TOTAL). Kept from 1 here.
 */
static void detect_nodes(tf_ci *ci, char *const *envp, const char *index_var,
			 const char *total_var, long first)
{
	const char *iv = env(envp, index_var), *tv = env(envp, total_var);
	long total = parse_number(tv), index = -1;
	char *end;

	if (!tv || total == 1)
		return;
	if (iv && *iv >= '0' && *iv <= '9') {
		errno = 0;
		index = strtol(iv, &end, 10);
		if (errno || *end)
			index = -1;
	}
	if (total < 1 || total > 1000 || index < first || index - first >= total) {
		warn(ci, "%s=%s and %s=%s do not name one job of several: not a shard", index_var,
		     iv ? iv : "", total_var, tv);
		return;
	}
	ci->shard_index = (unsigned)(index - first + 1);
	ci->shard_total = (unsigned)total;
}

static void detect_gitlab(tf_ci *ci, char *const *envp)
{
	set(&ci->event, env(envp, "CI_PIPELINE_SOURCE"));
	set(&ci->commit, env(envp, "CI_COMMIT_SHA"));
	set(&ci->default_branch, env(envp, "CI_DEFAULT_BRANCH"));
	set(&ci->repository, env(envp, "CI_PROJECT_PATH"));
	set(&ci->project_id, env(envp, "CI_PROJECT_ID"));
	set(&ci->server_url, env(envp, "CI_SERVER_URL"));
	set(&ci->api_url, env(envp, "CI_API_V4_URL"));
	set(&ci->run_url, env(envp, "CI_PIPELINE_URL"));
	set(&ci->job_url, env(envp, "CI_JOB_URL"));
	set_if_unset(&ci->run_url, ci->job_url);

	if (env(envp, "CI_MERGE_REQUEST_IID")) {
		ci->pr = parse_number(env(envp, "CI_MERGE_REQUEST_IID"));
		set(&ci->branch, env(envp, "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME"));
		set(&ci->base_branch, env(envp, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME"));
		set(&ci->base_sha, env(envp, "CI_MERGE_REQUEST_DIFF_BASE_SHA"));
		/* Merged results pipelines build a merge commit; this is the MR's head. */
		set(&ci->head_sha, env(envp, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"));
	} else if (env(envp, "CI_EXTERNAL_PULL_REQUEST_IID")) {
		ci->pr = parse_number(env(envp, "CI_EXTERNAL_PULL_REQUEST_IID"));
		set(&ci->branch, env(envp, "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_NAME"));
		set(&ci->base_branch, env(envp, "CI_EXTERNAL_PULL_REQUEST_TARGET_BRANCH_NAME"));
		set(&ci->head_sha, env(envp, "CI_EXTERNAL_PULL_REQUEST_SOURCE_BRANCH_SHA"));
	}
	set_if_unset(&ci->branch, env(envp, "CI_COMMIT_BRANCH"));
	/* CI_COMMIT_REF_NAME is a tag's name in tag pipelines: not a branch. */
	if (!env(envp, "CI_COMMIT_TAG"))
		set_if_unset(&ci->branch, env(envp, "CI_COMMIT_REF_NAME"));
	detect_nodes(ci, envp, "CI_NODE_INDEX", "CI_NODE_TOTAL", 1);
}

static void detect_circleci(tf_ci *ci, char *const *envp)
{
	const char *user = env(envp, "CIRCLE_PROJECT_USERNAME");
	const char *repo = env(envp, "CIRCLE_PROJECT_REPONAME");

	set(&ci->commit, env(envp, "CIRCLE_SHA1"));
	set(&ci->branch, env(envp, "CIRCLE_BRANCH"));
	set(&ci->run_url, env(envp, "CIRCLE_BUILD_URL"));
	if (user && repo)
		ci->repository = tf_xasprintf("%s/%s", user, repo);
	ci->pr = parse_number(env(envp, "CIRCLE_PR_NUMBER"));
	if (!ci->pr)
		ci->pr = pr_from_url(env(envp, "CIRCLE_PULL_REQUEST"));
	if (ci->pr)
		set(&ci->event, "pull_request");
	else if (env(envp, "CIRCLE_TAG"))
		set(&ci->event, "tag");
	else
		set(&ci->event, "push");
	detect_nodes(ci, envp, "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0);
}

static int apply_overrides(tf_ci *ci, char *const *envp)
{
	const char *v;

	ci->commit_forced = env(envp, "TESTFLAME_COMMIT") != NULL;
	ci->default_branch_forced = env(envp, "TESTFLAME_DEFAULT_BRANCH") != NULL;
	set(&ci->commit, env(envp, "TESTFLAME_COMMIT"));
	set(&ci->head_sha, env(envp, "TESTFLAME_HEAD_SHA"));
	set(&ci->branch, env(envp, "TESTFLAME_BRANCH"));
	set(&ci->base_branch, env(envp, "TESTFLAME_BASE_BRANCH"));
	set(&ci->default_branch, env(envp, "TESTFLAME_DEFAULT_BRANCH"));
	set(&ci->repository, env(envp, "TESTFLAME_REPOSITORY"));
	set(&ci->run_url, env(envp, "TESTFLAME_RUN_URL"));
	v = env(envp, "TESTFLAME_PR");
	if (v) {
		/* "none" says "this is not a PR build" when CI thinks otherwise */
		if (strcmp(v, "none") == 0)
			ci->pr = 0;
		else if (!(ci->pr = parse_number(v)))
			return tf_error_set(TF_EUSAGE,
					    "TESTFLAME_PR must be a pull request number or 'none', not '%s'", v);
	}
	return 0;
}

int tf_ci_detect(tf_ci **out, char *const *envp)
{
	tf_ci *ci = tf_xcalloc(1, sizeof(*ci));
	const char *forced = env(envp, "TESTFLAME_CI");
	int rc;

	*out = NULL;
	if (forced) {
		if (!tf_ci_provider_parse(&ci->provider, forced)) {
			tf_ci_free(ci);
			return tf_error_set(TF_EUSAGE,
					    "TESTFLAME_CI must be one of local, generic, github, gitlab, circleci, not '%s'",
					    forced);
		}
	} else if (env_true(envp, "GITHUB_ACTIONS")) {
		ci->provider = TF_CI_GITHUB;
	} else if (env_true(envp, "GITLAB_CI")) {
		ci->provider = TF_CI_GITLAB;
	} else if (env_true(envp, "CIRCLECI")) {
		ci->provider = TF_CI_CIRCLECI;
	} else if (env_true(envp, "CI")) {
		ci->provider = TF_CI_GENERIC;
	}

	switch (ci->provider) {
	case TF_CI_GITHUB: detect_github(ci, envp); break;
	case TF_CI_GITLAB: detect_gitlab(ci, envp); break;
	case TF_CI_CIRCLECI: detect_circleci(ci, envp); break;
	case TF_CI_GENERIC:
	case TF_CI_LOCAL: break;
	}
	rc = apply_overrides(ci, envp);
	if (rc < 0) {
		tf_ci_free(ci);
		return rc;
	}
	*out = ci;
	return 0;
}

void tf_ci_free(tf_ci *ci)
{
	if (!ci)
		return;
	free(ci->event);
	free(ci->commit);
	free(ci->head_sha);
	free(ci->branch);
	free(ci->base_branch);
	free(ci->base_sha);
	free(ci->default_branch);
	free(ci->repository);
	free(ci->project_id);
	free(ci->server_url);
	free(ci->api_url);
	free(ci->run_url);
	free(ci->job_url);
	tf_msglist_free(&ci->warnings);
	free(ci);
}
