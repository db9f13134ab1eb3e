/*
 * publish.c - where and as whom to post (the target), and the entry point
 * that hands a target to its host's publisher.
 *
 * The target comes from what the CI system says (tf_ci), the config's
 * publish keys and the environment's tokens. Anything missing is not an
 * error but a one-line reason in `skip`, because a build without a PR, a
 * fork's read-only token or a GitLab job token must still pass with its
 * report written: the caller prints the line and goes on.
 */
#include "publish/publish_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static const char *envv(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return (*envp)[n + 1] ? *envp + n + 1 : NULL;
	return NULL;
}

const char *tf_publish_host_name(tf_publish_host h)
{
	switch (h) {
	case TF_PUBLISH_GITHUB: return "github";
	case TF_PUBLISH_GITLAB: return "gitlab";
	default: return "nowhere";
	}
}

static void skip(tf_publish_target *t, const char *fmt, ...) TF_PRINTF(2, 3);
static void skip(tf_publish_target *t, const char *fmt, ...)
{
	va_list ap;
	tf_buf b = TF_BUF_INIT;
	if (t->skip)
		return; /* the first reason is the one that matters */
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	t->skip = tf_buf_detach(&b);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? tf_xstrdup(s) : NULL;
}

/*
 * The first of `vars` that is set, trimmed of surrounding white space (a
 * token read from a file ends with a newline). A value with a line break
 * inside could smuggle a header: refused.
 */
static char *pick_token(const char **name, char *const *envp, const char *const *vars)
{
	for (size_t i = 0; vars[i]; i++) {
		const char *v = envv(envp, vars[i]);
		if (!v)
			continue;
		while (isspace((unsigned char)*v))
			v++;
		size_t n = strlen(v);
		while (n && isspace((unsigned char)v[n - 1]))
			n--;
		if (!n)
			continue;
		bool bad = false;
		for (size_t k = 0; k < n; k++)
			if ((unsigned char)v[k] < 0x20 || v[k] == 0x7f)
				bad = true;
		if (bad)
			continue;
		*name = vars[i];
		return tf_xstrndup(v, n);
	}
	return NULL;
}

static const char *const github_tokens[] = { "TESTFLAME_GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN", NULL };
static const char *const gitlab_tokens[] = { "TESTFLAME_GITLAB_TOKEN", "GITLAB_TOKEN", NULL };

/* A pull_request event whose head lives in another repository: GitHub runs
 * it with a read-only GITHUB_TOKEN (pull_request_target is the exception).
 * Returns the fork's name, or NULL. */
static char *github_fork(const tf_ci *ci, char *const *envp)
{
	const char *path = envv(envp, "GITHUB_EVENT_PATH");
	json_t *root, *head, *base;
	char *fork = NULL;

	if (!path || !ci->event || strcmp(ci->event, "pull_request") != 0)
		return NULL;
	root = json_load_file(path, 0, NULL);
	head = json_object_get(json_object_get(json_object_get(root, "pull_request"), "head"), "repo");
	base = json_object_get(json_object_get(json_object_get(root, "pull_request"), "base"), "repo");
	if (json_is_object(head) && json_is_object(base)) {
		const char *h = json_string_value(json_object_get(head, "full_name"));
		const char *b = json_string_value(json_object_get(base, "full_name"));
		json_t *flag = json_object_get(head, "fork");
		if (h && b && strcmp(h, b) != 0)
			fork = tf_xstrdup(h);
		else if (json_is_true(flag) && h)
			fork = tf_xstrdup(h);
	}
	json_decref(root);
	return fork;
}

/* "https://HOST/OWNER/REPO/pull/N" (GitHub) or
 * "https://HOST/GROUP/.../PROJECT/-/merge_requests/N" (GitLab). */
static bool parse_pr_url(const char *url, tf_publish_target *t)
{
	const char *p, *host, *slash;
	if (!url || (strncmp(url, "https://", 8) != 0 && strncmp(url, "http://", 7) != 0))
		return false;
	host = strstr(url, "://") + 3;
	slash = strchr(host, '/');
	if (!slash)
		return false;
	char *h = tf_xstrndup(host, (size_t)(slash - host));
	char *scheme = tf_xstrndup(url, (size_t)(host - url));
	bool ok = false;
	if ((p = strstr(slash, "/-/merge_requests/"))) {
		t->host = TF_PUBLISH_GITLAB;
		t->repository = tf_xstrndup(slash + 1, (size_t)(p - slash - 1));
		t->number = strtol(p + 18, NULL, 10);
		t->api_url = tf_xasprintf("%s%s/api/v4", scheme, h);
		ok = true;
	} else if ((p = strstr(slash, "/pull/"))) {
		t->host = TF_PUBLISH_GITHUB;
		t->repository = tf_xstrndup(slash + 1, (size_t)(p - slash - 1));
		t->number = strtol(p + 6, NULL, 10);
		if (strcmp(h, "github.com") == 0 || strcmp(h, "www.github.com") == 0)
			t->api_url = tf_xstrdup("https://api.github.com");
		else
			t->api_url = tf_xasprintf("%s%s/api/v3", scheme, h);
		ok = true;
	}
	free(h);
	free(scheme);
	return ok && t->number > 0 && *t->repository;
}

static void set_api(tf_publish_target *t, const char *const *choices, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (choices[i] && *choices[i]) {
			free(t->api_url);
			t->api_url = tf_xstrdup(choices[i]);
			return;
		}
	}
}

int tf_publish_target_detect(tf_publish_target *out, const tf_ci *ci, const tf_config *cfg,
			     char *const *envp)
{
	tf_publish_target *t = out;
	const char *gh_api_cfg = cfg ? cfg->publish.github_api_url : NULL;
	const char *gl_api_cfg = cfg ? cfg->publish.gitlab_api_url : NULL;

	memset(t, 0, sizeof(*t));
	switch (ci->provider) {
	case TF_CI_GITHUB: {
		const char *c[] = { envv(envp, "TESTFLAME_GITHUB_API_URL"), gh_api_cfg, ci->api_url,
				    "https://api.github.com" };
		t->host = TF_PUBLISH_GITHUB;
		set_api(t, c, TF_ARRAY_SIZE(c));
		t->repository = dup_or_null(ci->repository);
		t->number = ci->pr;
		break;
	}
	case TF_CI_GITLAB: {
		char *from_server = ci->server_url ? tf_xasprintf("%s/api/v4", ci->server_url) : NULL;
		const char *c[] = { envv(envp, "TESTFLAME_GITLAB_API_URL"), gl_api_cfg, ci->api_url,
				    from_server };
		t->host = TF_PUBLISH_GITLAB;
		set_api(t, c, TF_ARRAY_SIZE(c));
		free(from_server);
		t->repository = dup_or_null(ci->repository);
		t->project_id = dup_or_null(ci->project_id);
		t->number = ci->pr;
		break;
	}
	case TF_CI_CIRCLECI: {
		const char *url = envv(envp, "CIRCLE_PULL_REQUEST");
		if (!parse_pr_url(url, t)) {
			t->host = TF_PUBLISH_GITHUB;
			t->repository = dup_or_null(ci->repository);
			t->number = ci->pr;
		}
		if (t->host == TF_PUBLISH_GITHUB) {
			const char *c[] = { envv(envp, "TESTFLAME_GITHUB_API_URL"), gh_api_cfg };
			set_api(t, c, TF_ARRAY_SIZE(c));
		} else {
			const char *c[] = { envv(envp, "TESTFLAME_GITLAB_API_URL"), gl_api_cfg };
			set_api(t, c, TF_ARRAY_SIZE(c));
		}
		break;
	}
	default:
		skip(t, "not a GitHub Actions, GitLab CI or CircleCI build: nothing to post a comment to "
		     "(TESTFLAME_CI=github|gitlab|circleci says which, with its variables)");
		return 0;
	}
	if (!t->commit)
		t->commit = dup_or_null(ci->head_sha ? ci->head_sha : ci->commit);

	if (!t->number) {
		skip(t, "not a %s build: no comment to post",
		     t->host == TF_PUBLISH_GITLAB ? "merge request" : "pull request");
		return 0;
	}
	if (!t->repository && !(t->host == TF_PUBLISH_GITLAB && t->project_id)) {
		skip(t, "the repository is unknown (set TESTFLAME_REPOSITORY=owner/name): no comment posted");
		return 0;
	}
	if (!t->api_url) {
		skip(t, "the API URL is unknown (set %s): no comment posted",
		     t->host == TF_PUBLISH_GITLAB ? "TESTFLAME_GITLAB_API_URL" : "TESTFLAME_GITHUB_API_URL");
		return 0;
	}
	if (t->host == TF_PUBLISH_GITHUB) {
		char *fork = ci->provider == TF_CI_GITHUB ? github_fork(ci, envp) : NULL;
		t->token = pick_token(&t->token_var, envp, github_tokens);
		if (fork) {
			skip(t, "pull request from the fork '%s': GitHub gives its workflow a read-only "
			     "token, so no comment is posted (the step summary and the report "
			     "artifact have the results)", fork);
			free(fork);
		} else if (!t->token) {
			skip(t, "no GitHub token (TESTFLAME_GITHUB_TOKEN, GITHUB_TOKEN or GH_TOKEN): "
			     "no comment posted; in GitHub Actions pass `github-token` to the action, "
			     "or set GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }} with "
			     "`permissions: pull-requests: write`");
		}
	} else {
		t->token = pick_token(&t->token_var, envp, gitlab_tokens);
		if (!t->token && envv(envp, "CI_JOB_TOKEN"))
			skip(t, "no GitLab token: CI_JOB_TOKEN cannot post merge request notes (GitLab "
			     "does not accept job tokens on the notes API); add a project access "
			     "token with the 'api' scope as the masked CI/CD variable "
			     "TESTFLAME_GITLAB_TOKEN");
		else if (!t->token)
			skip(t, "no GitLab token (TESTFLAME_GITLAB_TOKEN or GITLAB_TOKEN, a project "
			     "access token with the 'api' scope): no note posted");
	}
	return 0;
}

void tf_publish_target_clear(tf_publish_target *t)
{
	if (!t)
		return;
	if (t->token)
		memset(t->token, 0, strlen(t->token));
	free(t->token);
	free(t->api_url);
	free(t->repository);
	free(t->project_id);
	free(t->commit);
	free(t->skip);
	memset(t, 0, sizeof(*t));
}

void tf_publish_opts_init(tf_publish_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->comment = true;
	o->review = true;
	o->review_max = 10;
	tf_http_opts_init(&o->http);
}

int pb_open(tf_http **out, const tf_publish_opts *o, const char *auth_header, const char *secret,
	    const char *accept, const char *extra_header)
{
	tf_http_opts ho = o->http;

	ho.name = o->target->host == TF_PUBLISH_GITLAB ? "GitLab API" : "GitHub API";
	return tf_http_open(out, o->target->api_url, auth_header, secret, accept, extra_header, &ho);
}

void pb_close(tf_http *h, tf_publish_result *res)
{
	unsigned requests, retries;

	if (!h)
		return;
	tf_http_counts(h, &requests, &retries);
	res->requests += requests;
	res->retries += retries;
	tf_http_free(h);
}

int tf_publish_post(tf_publish_result *out, const tf_publish_opts *o)
{
	const tf_publish_target *t = o->target;

	memset(out, 0, sizeof(*out));
	if (!t || t->host == TF_PUBLISH_NOWHERE)
		return tf_error_set(TF_EUSAGE, "nowhere to publish to");
	if (t->skip)
		return tf_error_set(TF_EUSAGE, "%s", t->skip);
	if (!t->token)
		return tf_error_set(TF_EUSAGE, "no token to publish with");
	if (t->host == TF_PUBLISH_GITHUB)
		return pb_github_post(out, o);
	return pb_gitlab_post(out, o);
}

void tf_publish_result_clear(tf_publish_result *r)
{
	if (!r)
		return;
	free(r->comment_url);
	tf_msglist_free(&r->notes);
	memset(r, 0, sizeof(*r));
}
