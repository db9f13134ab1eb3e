/*
 * test_publish.c - the publisher's decisions that need no network: where
 * and as whom to post for each CI provider (tokens, API URLs, forks,
 * CI_JOB_TOKEN, CircleCI's PR URL), the retry policy (5xx, rate limits,
 * Retry-After, X-RateLimit-Reset), Link headers, token scrubbing, the
 * $GITHUB_OUTPUT format, review comment markers, and which changed lines a
 * regressed function's review comment goes on. Requests themselves are
 * tested end to end against the loopback API (t7000-t7020).
 */
#include "unit.h"
#include "testflame/publish.h"

#include <math.h>

static char *sdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static tf_ci *mkci(tf_ci_provider p, long pr, const char *repo, const char *api)
{
	tf_ci *ci = calloc(1, sizeof(*ci));
	assert_non_null(ci);
	ci->provider = p;
	ci->pr = pr;
	ci->repository = sdup(repo);
	ci->api_url = sdup(api);
	ci->commit = sdup("1111111111111111111111111111111111111111");
	ci->head_sha = sdup("2222222222222222222222222222222222222222");
	ci->event = sdup("pull_request");
	return ci;
}

static void test_target_github(void **state)
{
	(void)state;
	tf_ci *ci = mkci(TF_CI_GITHUB, 7, "acme/libmini", "https://api.github.com");
	tf_publish_target t;
	char *env1[] = { "GITHUB_TOKEN=ghs_abc\n", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env1), 0);
	assert_null(t.skip);
	assert_int_equal(t.host, TF_PUBLISH_GITHUB);
	assert_string_equal(t.api_url, "https://api.github.com");
	assert_string_equal(t.token, "ghs_abc"); /* trimmed */
	assert_string_equal(t.token_var, "GITHUB_TOKEN");
	assert_string_equal(t.repository, "acme/libmini");
	assert_int_equal(t.number, 7);
	assert_string_equal(t.commit, "2222222222222222222222222222222222222222"); /* the PR head */
	tf_publish_target_clear(&t);

	/* TESTFLAME_* wins over the config, which wins over GITHUB_API_URL */
	tf_config *cfg = tf_config_new();
	cfg->publish.github_api_url = strdup("https://ghe.example/api/v3");
	char *env2[] = { "GH_TOKEN=x1234", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, cfg, env2), 0);
	assert_string_equal(t.api_url, "https://ghe.example/api/v3");
	assert_string_equal(t.token_var, "GH_TOKEN");
	tf_publish_target_clear(&t);
	char *env3[] = { "TESTFLAME_GITHUB_API_URL=http://127.0.0.1:9/", "GITHUB_TOKEN=a",
			 "TESTFLAME_GITHUB_TOKEN=b", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, cfg, env3), 0);
	assert_string_equal(t.api_url, "http://127.0.0.1:9/");
	assert_string_equal(t.token, "b");
	tf_publish_target_clear(&t);
	tf_config_free(cfg);

	/* no token; a token with a line break inside is no token */
	char *env4[] = { "GITHUB_TOKEN=abc\ndef", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env4), 0);
	assert_null(t.token);
	assert_non_null(t.skip);
	assert_non_null(strstr(t.skip, "no GitHub token"));
	assert_non_null(strstr(t.skip, "pull-requests: write"));
	tf_publish_target_clear(&t);

	/* not a PR */
	ci->pr = 0;
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env1), 0);
	assert_non_null(strstr(t.skip, "not a pull request build"));
	tf_publish_target_clear(&t);
	tf_ci_free(ci);
}

static void test_target_github_fork(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), path[512], envv[600];
	snprintf(path, sizeof(path), "%s/event.json", dir);
	FILE *f = fopen(path, "w");
	fputs("{\"pull_request\":{\"number\":7,\"head\":{\"repo\":{\"full_name\":\"someone/libmini\",\"fork\":true}},"
	      "\"base\":{\"repo\":{\"full_name\":\"acme/libmini\"}}}}", f);
	fclose(f);
	snprintf(envv, sizeof(envv), "GITHUB_EVENT_PATH=%s", path);
	char *env[] = { envv, "GITHUB_TOKEN=ghs_ro", NULL };
	tf_ci *ci = mkci(TF_CI_GITHUB, 7, "acme/libmini", NULL);
	tf_publish_target t;
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env), 0);
	assert_non_null(t.skip);
	assert_non_null(strstr(t.skip, "fork 'someone/libmini'"));
	assert_non_null(strstr(t.skip, "read-only"));
	tf_publish_target_clear(&t);
	/* pull_request_target runs with a token that can write */
	free(ci->event);
	ci->event = strdup("pull_request_target");
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env), 0);
	assert_null(t.skip);
	tf_publish_target_clear(&t);
	tf_ci_free(ci);
	unit_rmtree(dir);
}

static void test_target_gitlab(void **state)
{
	(void)state;
	tf_ci *ci = mkci(TF_CI_GITLAB, 3, "group/sub/proj", "https://gitlab.example/api/v4");
	ci->project_id = strdup("42");
	tf_publish_target t;
	char *env1[] = { "CI_JOB_TOKEN=jt", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env1), 0);
	assert_non_null(t.skip);
	assert_non_null(strstr(t.skip, "CI_JOB_TOKEN cannot post merge request notes"));
	assert_non_null(strstr(t.skip, "TESTFLAME_GITLAB_TOKEN"));
	tf_publish_target_clear(&t);
	char *env2[] = { "CI_JOB_TOKEN=jt", "GITLAB_TOKEN=glpat-1", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env2), 0);
	assert_null(t.skip);
	assert_int_equal(t.host, TF_PUBLISH_GITLAB);
	assert_string_equal(t.api_url, "https://gitlab.example/api/v4");
	assert_string_equal(t.project_id, "42");
	assert_string_equal(t.token, "glpat-1");
	tf_publish_target_clear(&t);
	/* no API URL from CI: the server's */
	free(ci->api_url);
	ci->api_url = NULL;
	ci->server_url = strdup("https://gl.example");
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env2), 0);
	assert_string_equal(t.api_url, "https://gl.example/api/v4");
	tf_publish_target_clear(&t);
	tf_ci_free(ci);
}

static void test_target_circleci(void **state)
{
	(void)state;
	tf_ci *ci = mkci(TF_CI_CIRCLECI, 12, "someone/libmini", NULL);
	tf_publish_target t;
	char *env1[] = { "CIRCLE_PULL_REQUEST=https://github.com/upstream/libmini/pull/12",
			 "GITHUB_TOKEN=ghp_1", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env1), 0);
	assert_null(t.skip);
	assert_int_equal(t.host, TF_PUBLISH_GITHUB);
	assert_string_equal(t.repository, "upstream/libmini");
	assert_int_equal(t.number, 12);
	assert_string_equal(t.api_url, "https://api.github.com");
	tf_publish_target_clear(&t);

	char *env2[] = { "CIRCLE_PULL_REQUEST=https://ghe.example/org/repo/pull/5", "GITHUB_TOKEN=ghp_1", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env2), 0);
	assert_string_equal(t.api_url, "https://ghe.example/api/v3");
	assert_string_equal(t.repository, "org/repo");
	assert_int_equal(t.number, 5);
	tf_publish_target_clear(&t);

	char *env3[] = { "CIRCLE_PULL_REQUEST=https://gitlab.example/g/s/p/-/merge_requests/9",
			 "GITLAB_TOKEN=glpat-2", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env3), 0);
	assert_int_equal(t.host, TF_PUBLISH_GITLAB);
	assert_string_equal(t.api_url, "https://gitlab.example/api/v4");
	assert_string_equal(t.repository, "g/s/p");
	assert_int_equal(t.number, 9);
	tf_publish_target_clear(&t);

	char *env4[] = { "CIRCLE_PULL_REQUEST=https://github.com/upstream/libmini/pull/12", NULL };
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env4), 0);
	assert_non_null(strstr(t.skip, "no GitHub token"));
	tf_publish_target_clear(&t);
	tf_ci_free(ci);

	/* no CI: nothing to post to */
	ci = mkci(TF_CI_LOCAL, 0, NULL, NULL);
	assert_int_equal(tf_publish_target_detect(&t, ci, NULL, env1), 0);
	assert_int_equal(t.host, TF_PUBLISH_NOWHERE);
	assert_non_null(strstr(t.skip, "not a GitHub Actions, GitLab CI or CircleCI build"));
	tf_publish_target_clear(&t);
	tf_ci_free(ci);
}

static void test_post_refuses_without_target(void **state)
{
	(void)state;
	tf_publish_opts o;
	tf_publish_result r;
	tf_publish_target t = { 0 };
	tf_publish_opts_init(&o);
	assert_int_equal(tf_publish_post(&r, &o), TF_EUSAGE);
	o.target = &t;
	t.host = TF_PUBLISH_GITHUB;
	t.skip = strdup("no token");
	assert_int_equal(tf_publish_post(&r, &o), TF_EUSAGE);
	assert_string_equal(tf_error_last(), "no token");
	free(t.skip);
	tf_publish_result_clear(&r);
}

static void test_scrub(void **state)
{
	(void)state;
	char s[] = "Bearer tok123 and again tok123tok123!";
	tf_http_scrub(s, "tok123");
	assert_string_equal(s, "Bearer *** and again ******!");
	char t[] = "abc";
	tf_http_scrub(t, "ab"); /* too short to be a token */
	assert_string_equal(t, "abc");
	tf_http_scrub(NULL, "x");
}

static void test_retry_delay(void **state)
{
	(void)state;
	/* network failures and 5xx: 1, 2, 4, 8 ... capped at a minute */
	assert_true(tf_http_retry_delay(0, NULL, NULL, NULL, 1, 0) == 1);
	assert_true(tf_http_retry_delay(0, NULL, NULL, NULL, 3, 0) == 4);
	assert_true(tf_http_retry_delay(502, NULL, NULL, NULL, 2, 0) == 2);
	assert_true(tf_http_retry_delay(500, NULL, NULL, NULL, 20, 0) == 60);
	assert_true(tf_http_retry_delay(503, "7", NULL, NULL, 1, 0) == 7);
	assert_true(tf_http_retry_delay(503, "0", NULL, NULL, 1, 0) == 1);
	/* not retried: client errors, 501, a 403 that is not a rate limit */
	assert_true(tf_http_retry_delay(404, NULL, NULL, NULL, 1, 0) < 0);
	assert_true(tf_http_retry_delay(422, NULL, NULL, NULL, 1, 0) < 0);
	assert_true(tf_http_retry_delay(501, NULL, NULL, NULL, 1, 0) < 0);
	assert_true(tf_http_retry_delay(403, NULL, "12", NULL, 1, 0) < 0);
	assert_true(tf_http_retry_delay(200, NULL, NULL, NULL, 1, 0) < 0);
	/* rate limits: Retry-After, else until X-RateLimit-Reset, else a minute */
	assert_true(tf_http_retry_delay(403, "30", "0", "999", 1, 0) == 30);
	assert_true(tf_http_retry_delay(429, "2", NULL, NULL, 1, 0) == 2);
	assert_true(tf_http_retry_delay(403, NULL, "0", "1000", 1, 970) == 31);
	assert_true(tf_http_retry_delay(403, NULL, "0", "900", 1, 970) == 1);
	assert_true(tf_http_retry_delay(429, NULL, NULL, NULL, 1, 0) == 5);
	assert_true(tf_http_retry_delay(403, "soon", "0", NULL, 1, 0) == 60);
}

static void test_link_next(void **state)
{
	(void)state;
	char *n = tf_http_link_next(
		"<https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=2>; rel=\"next\", "
		"<https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=5>; rel=\"last\"");
	assert_string_equal(n, "https://api.github.com/repositories/1/issues/7/comments?per_page=100&page=2");
	free(n);
	n = tf_http_link_next("<https://x/a?page=1>; rel=\"first\", <https://x/a?page=3>; rel=\"next\"");
	assert_string_equal(n, "https://x/a?page=3");
	free(n);
	n = tf_http_link_next("<https://x/a?page=9>; rel=\"prev\"; type=\"x\"");
	assert_null(n);
	n = tf_http_link_next("<https://x/b>; rel=\"last next\"");
	assert_string_equal(n, "https://x/b");
	free(n);
	assert_null(tf_http_link_next("garbage"));
	assert_null(tf_http_link_next(""));
}

static void test_github_output(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), path[512];
	snprintf(path, sizeof(path), "%s/out", dir);
	const char *names[] = { "regressions", "report", "note" };
	const char *values[] = { "1", "testflame-report", "two\nlines" };
	assert_int_equal(tf_publish_github_output(path, names, values, 3), 0);
	assert_int_equal(tf_publish_github_output(path, names, values, 1), 0); /* appends */
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_file_read(&b, path), 0);
	assert_non_null(strstr(b.ptr, "regressions=1\nreport=testflame-report\nnote<<ghadelimiter_"));
	char *delim = strstr(b.ptr, "note<<") + 6;
	size_t dl = strcspn(delim, "\n");
	char expect[128];
	snprintf(expect, sizeof(expect), "\ntwo\nlines\n%.*s\nregressions=1\n", (int)dl, delim);
	assert_non_null(strstr(b.ptr, expect));
	tf_buf_free(&b);
	const char *bad[] = { "a b" };
	assert_int_equal(tf_publish_github_output(path, bad, values, 1), TF_EINVAL);
	unit_rmtree(dir);
}

static void test_review_marker(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	tf_publish_review_marker(&b, "unit tests", "00ff");
	assert_string_equal(b.ptr, "<!-- testflame:review suite=unit%20tests key=00ff -->");
	tf_buf_free(&b);
}

/* ---- review targets on a comparison built in memory ---------------------- */

#define PERIOD 10000000

static tf_profile *run(void)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period = PERIOD;
	tf_profile_set_meta(p, "event", "cpu-clock");
	return p;
}

/* n samples of test in main -> fn at file:line (fn starts at `start`) */
static void sample(tf_profile *p, const char *test, int64_t n, const char *fn, const char *file,
		   int64_t start, int64_t line)
{
	tf_line lm = { tf_profile_function(p, "main", "/work/repo/src/main.c", 1), 3, 0 };
	tf_line lf = { tf_profile_function(p, fn, file, start), line, 0 };
	uint32_t locs[2] = { tf_profile_add_location(p, TF_NO_MAPPING, 0, &lf, 1),
			     tf_profile_add_location(p, TF_NO_MAPPING, 0, &lm, 1) };
	int64_t v[2] = { n, n * PERIOD };
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	tf_profile_add_sample(p, locs, 2, v, &lab, 1);
}

static tf_comparison *hot_comparison(tf_profile **b, tf_profile **h)
{
	tf_comparison *c = NULL;
	*b = run();
	*h = run();
	sample(*b, "t_hot", 1000, "hot", "/work/repo/src/hot.c", 4, 5);
	sample(*b, "t_cold", 1000, "cold", "/work/repo/src/cold.c", 2, 3);
	sample(*h, "t_hot", 1000, "hot", "/work/repo/src/hot.c", 4, 5);
	sample(*h, "t_hot", 1500, "hot", "/work/repo/src/hot.c", 4, 12);
	sample(*h, "t_cold", 1000, "cold", "/work/repo/src/cold.c", 2, 3);
	tf_compare_side bs = { (const tf_profile *const *)b, NULL, 1 };
	tf_compare_side hs = { (const tf_profile *const *)h, NULL, 1 };
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	assert_int_equal(tf_compare(&c, &bs, &hs, &o), 0);
	assert_true(tf_comparison_regressed(c));
	return c;
}

static tf_review_targets targets_for(const tf_comparison *c, const char *changes_json)
{
	tf_changes ch;
	tf_review_targets t;
	memset(&ch, 0, sizeof(ch));
	assert_int_equal(tf_changes_from_json(&ch, changes_json), 0);
	assert_int_equal(tf_publish_review_targets(&t, c, &ch, "unit", 10), 0);
	tf_changes_free(&ch);
	return t;
}

static void test_review_targets(void **state)
{
	(void)state;
	tf_profile *b, *h;
	tf_comparison *c = hot_comparison(&b, &h);
	tf_review_targets t;

	/* the added lines 11-12 hold the line that grew: a comment on 11-12 */
	t = targets_for(c, "[{\"path\":\"src/hot.c\",\"status\":\"M\",\"lines\":[[11,12],[40,42]]}]");
	assert_int_equal(t.items.n, 1);
	assert_string_equal(t.items.v[0].path, "src/hot.c");
	assert_int_equal(t.items.v[0].start_line, 11);
	assert_int_equal(t.items.v[0].line, 12);
	assert_int_equal(t.items.v[0].refs.n, 1);
	assert_string_equal(c->tests[t.items.v[0].refs.v[0].test].name, "t_hot");
	assert_int_equal(strlen(t.items.v[0].key), 16);
	char *key = strdup(t.items.v[0].key);
	tf_review_targets_clear(&t);

	/* a change elsewhere in the function (lines 4..12): the nearest range,
	 * cut to the function; the key does not depend on the line */
	t = targets_for(c, "[{\"path\":\"src/hot.c\",\"status\":\"M\",\"lines\":[[1,5]]}]");
	assert_int_equal(t.items.n, 1);
	assert_int_equal(t.items.v[0].start_line, 4);
	assert_int_equal(t.items.v[0].line, 5);
	assert_string_equal(t.items.v[0].key, key);
	tf_review_targets_clear(&t);
	free(key);

	/* changed lines outside the function, or another file: main comment only */
	t = targets_for(c, "[{\"path\":\"src/hot.c\",\"status\":\"M\",\"lines\":[[40,42]]},"
			   "{\"path\":\"src/cold.c\",\"status\":\"M\",\"lines\":[[3,3]]}]");
	assert_int_equal(t.items.n, 0);
	assert_int_equal(t.elsewhere, 1);
	tf_review_targets_clear(&t);

	/* a deleted file never gets a comment */
	t = targets_for(c, "[{\"path\":\"src/hot.c\",\"status\":\"D\",\"lines\":[]}]");
	assert_int_equal(t.items.n, 0);
	tf_review_targets_clear(&t);

	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target_github),
		cmocka_unit_test(test_target_github_fork),
		cmocka_unit_test(test_target_gitlab),
		cmocka_unit_test(test_target_circleci),
		cmocka_unit_test(test_post_refuses_without_target),
		cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_retry_delay),
		cmocka_unit_test(test_link_next),
		cmocka_unit_test(test_github_output),
		cmocka_unit_test(test_review_marker),
		cmocka_unit_test(test_review_targets),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
