/*
 * test_store_resolve.c - baseline resolution on real histories made with
 * the git CLI in a temporary directory: first-parent walks across merges,
 * the distance reported, depth limits, the start of history and the edge of
 * a shallow clone, the dir store, and fetching the one baseline needed from
 * a file:// remote; the first-parent walk itself, which the context
 * (tf_repo) and the store share; and what `run` reads through them: a
 * baseline split into its runs, the history before it, any kind of a
 * suite, the remote's nearest baseline and a commit's distance from HEAD.
 *
 *   m1 - m2 - m3 - M - m5        (main; M merges side, first parent m3)
 *          \      /
 *           s1 - s2              (side)
 */
#include "unit.h"
#include "testflame/git.h"
#include "testflame/context.h"
#include "testflame/store.h"

#include <stdarg.h>

static char *top;

static char *path(const char *name)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", top, name) > 0);
	return p;
}

static int setup(void **state)
{
	(void)state;
	top = unit_tmpdir();
	unit_git_env(top);
	unit_sh("cd %s && git init -q -b main r && cd r && "
	   "c() { git commit -q --allow-empty -m $1 && git tag $1; } && "
	   "c m1 && c m2 && git branch side && c m3 && "
	   "git checkout -q side && c s1 && c s2 && git checkout -q main && "
	   "git merge -q --no-ff side -m M && git tag M && c m5", top);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unit_rmtree(top);
	return 0;
}

static tf_store *open_store(const char *spec, const char *repo)
{
	tf_store *s = NULL;
	char *p = path(repo);
	assert_int_equal(tf_store_open(&s, spec, p), 0);
	free(p);
	return s;
}

static void save(tf_store *s, const char *rev, const char *kind)
{
	assert_int_equal(tf_store_save(s, rev, "unit", kind, "bytes", 5), 0);
}

static void expect_at(tf_store *s, const tf_store_match *m, const char *rev)
{
	char id[TF_STORE_ID_HEX + 1];
	assert_int_equal(tf_store_rev(id, s, rev), 0);
	assert_string_equal(m->commit, id);
}

static void test_first_parent_across_merge(void **state)
{
	(void)state;
	tf_store *s = open_store("git", "r");
	tf_store_match m;

	save(s, "m2", "k");
	save(s, "s2", "k");  /* on the side branch: not on main's first-parent line */
	save(s, "m3", "other");

	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "k", NULL), 0);
	expect_at(s, &m, "m2");
	assert_int_equal(m.distance, 3);      /* m5 -> M -> m3 -> m2 */
	assert_int_equal(m.walked, 4);
	assert_false(m.fetched);

	assert_int_equal(tf_store_resolve(&m, s, "s2", "unit", "k", NULL), 0);
	expect_at(s, &m, "s2");
	assert_int_equal(m.distance, 0);

	assert_int_equal(tf_store_resolve(&m, s, "s1", "unit", "k", NULL), 0);
	expect_at(s, &m, "m2");
	assert_int_equal(m.distance, 1);

	/* same suite, other kind: a different baseline */
	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "other", NULL), 0);
	expect_at(s, &m, "m3");
	assert_int_equal(m.distance, 2);

	/* a baseline of the right kind but another suite does not count */
	assert_int_equal(tf_store_resolve(&m, s, "m5", "bench", "k", NULL), TF_ENOTFOUND);
	tf_store_free(s);
}

static void test_not_found(void **state)
{
	(void)state;
	tf_store *s = open_store("git", "r");
	tf_store_match m;
	tf_store_resolve_opts o = { 2, false };

	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "none", NULL), TF_ENOTFOUND);
	assert_int_equal(m.walked, 5);       /* m5 M m3 m2 m1 */
	assert_true(m.history_ended);
	assert_non_null(strstr(tf_error_last(), "no baseline of the suite 'unit' (none)"));
	assert_non_null(strstr(tf_error_last(), "back to the first commit"));

	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "k", &o), TF_ENOTFOUND);
	assert_int_equal(m.walked, 2);
	assert_false(m.history_ended);

	assert_int_equal(tf_store_resolve(&m, s, "nope", "unit", "k", NULL), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "unknown revision 'nope'"));
	assert_int_equal(tf_store_resolve(&m, s, "0123456789012345678901234567890123456789",
					  "unit", "k", NULL), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "not in this repository"));
	assert_int_equal(tf_store_resolve(&m, s, "m5", "", "k", NULL), TF_EINVAL);
	tf_store_free(s);
}

static void test_dir_store(void **state)
{
	(void)state;
	char *spec, *cache = path("cache");
	char id[TF_STORE_ID_HEX + 1];
	tf_store *s;
	tf_store_match m;
	tf_buf b = TF_BUF_INIT;

	assert_true(asprintf(&spec, "dir:%s", cache) > 0);
	s = open_store(spec, "r");
	save(s, "m1", "k");
	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "k", NULL), 0);
	expect_at(s, &m, "m1");
	assert_int_equal(m.distance, 4);
	assert_int_equal(tf_store_get(&b, s, m.commit, "unit", "k"), 0);
	assert_int_equal(b.len, 5);
	assert_memory_equal(b.ptr, "bytes", 5);
	tf_store_free(s);

	/* outside a repository the dir store still reads and writes by id,
	 * but cannot walk history */
	s = open_store(spec, ".");
	snprintf(id, sizeof(id), "%s", m.commit);
	assert_int_equal(tf_store_resolve(&m, s, id, "unit", "k", NULL), TF_EUSAGE);
	assert_int_equal(tf_store_get(&b, s, id, "unit", "k"), 0);
	tf_store_free(s);
	tf_buf_free(&b);
	free(spec);
	free(cache);
}

static void test_fetch_from_remote(void **state)
{
	(void)state;
	tf_store *s;
	tf_store_match m;
	tf_store_resolve_opts fetch = { 0, true };
	tf_buf b = TF_BUF_INIT;

	/* r's baselines (m2 and s2 of kind k, m3 of kind other) published */
	unit_sh("cd %s && git clone -q --bare r remote.git && "
	   "git -C r push -q ../remote.git 'refs/testflame/runs/*:refs/testflame/runs/*' && "
	   "git clone -q file://%s/remote.git c2", top, top);
	s = open_store("git", "c2");

	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "k", NULL), TF_ENOTFOUND);
	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "k", &fetch), 0);
	expect_at(s, &m, "m2");
	assert_int_equal(m.distance, 3);
	assert_true(m.fetched);
	assert_int_equal(tf_store_get(&b, s, "m2", "unit", "k"), 0);
	assert_memory_equal(b.ptr, "bytes", 5);
	/*
	 * A remote listing names commits, not what their baselines hold, so
	 * m3's (another kind) was fetched on the way and passed over; s2's,
	 * off the first-parent line, never came.
	 */
	assert_int_equal(tf_store_get(&b, s, "m3", "unit", "other"), 0);
	assert_int_equal(tf_store_get(&b, s, "s2", "unit", "k"), TF_ENOTFOUND);
	unit_sh("test \"$(git -C %s/c2 for-each-ref refs/testflame | wc -l)\" = 2", top);

	/* now it is here: found without the remote, no second fetch */
	assert_int_equal(tf_store_resolve(&m, s, "m5", "unit", "k", &fetch), 0);
	assert_false(m.fetched);
	tf_store_free(s);
	tf_buf_free(&b);
}

static void test_shallow_clone(void **state)
{
	(void)state;
	tf_store *s;
	tf_store_match m;

	unit_sh("cd %s && git clone -q --depth 2 file://%s/r shallow 2>/dev/null", top, top);
	s = open_store("git", "shallow");
	assert_int_equal(tf_store_resolve(&m, s, "HEAD", "unit", "k", NULL), TF_ENOTFOUND);
	assert_true(m.history_ended);
	assert_int_equal(m.walked, 2);
	assert_non_null(strstr(tf_error_last(), "shallow"));
	tf_store_free(s);
}

struct seen {
	char hex[8][GIT_OID_HEXSZ + 1];
	unsigned n, stop_at;
};

static int record_step(const git_oid *commit, unsigned distance, void *payload)
{
	struct seen *w = payload;
	assert_int_equal(distance, w->n);
	git_oid_tostr(w->hex[w->n++], GIT_OID_HEXSZ + 1, commit);
	return w->n == w->stop_at;
}

static int record_hex(const char *commit, unsigned distance, void *payload)
{
	struct seen *w = payload;
	assert_int_equal(distance, w->n);
	snprintf(w->hex[w->n++], GIT_OID_HEXSZ + 1, "%s", commit);
	return 0;
}

/* Walk from `rev` of repository `name`; returns how it ended. */
static tf_git_walk_end walk(struct seen *w, const char *name, const char *rev, unsigned max)
{
	git_repository *repo;
	git_oid start;
	tf_git_walk_end end;
	char *p = path(name);

	assert_int_equal(tf_git_open(&repo, p), 0);
	assert_int_equal(tf_git_rev(&start, repo, rev), 0);
	assert_int_equal(tf_git_walk_first_parent(repo, &start, max, record_step, w, &end), 0);
	git_repository_free(repo);
	free(p);
	return end;
}

static void expect_rev(const char *hex, const char *rev)
{
	char id[TF_STORE_ID_HEX + 1];
	tf_store *s = open_store("git", "r");
	assert_int_equal(tf_store_rev(id, s, rev), 0);
	assert_string_equal(hex, id);
	tf_store_free(s);
}

static void test_walk_first_parent(void **state)
{
	struct seen w = { .stop_at = 0 }, c = { .stop_at = 0 };
	static const char *const line[] = { "m5", "M", "m3", "m2", "m1" };
	tf_repo *r;
	char *p = path("r");
	bool truncated = true;
	(void)state;

	/* across the merge by its first parent, to the root */
	assert_int_equal(walk(&w, "r", "m5", 0), TF_GIT_WALK_ROOT);
	assert_int_equal(w.n, 5);
	for (unsigned i = 0; i < 5; i++)
		expect_rev(w.hex[i], line[i]);
	/* the context's walk is the same walk */
	assert_int_equal(tf_repo_open(&r, p), 0);
	assert_int_equal(tf_repo_walk_first_parent(r, "m5", 0, record_hex, &c, &truncated), 0);
	assert_false(truncated);
	assert_int_equal(c.n, 5);
	assert_memory_equal(c.hex, w.hex, sizeof(w.hex));
	tf_repo_free(r);
	free(p);
	/* at most max commits; or until the callback says stop */
	memset(&w, 0, sizeof(w));
	assert_int_equal(walk(&w, "r", "m5", 2), TF_GIT_WALK_MAX);
	assert_int_equal(w.n, 2);
	memset(&w, 0, sizeof(w));
	w.stop_at = 3;
	assert_int_equal(walk(&w, "r", "m5", 0), TF_GIT_WALK_STOPPED);
	assert_int_equal(w.n, 3);
	expect_rev(w.hex[2], "m3");
}

static void test_walk_shallow_edge(void **state)
{
	struct seen w = { .stop_at = 0 }, c = { .stop_at = 0 };
	tf_repo *r;
	char *p;
	bool truncated = false;
	(void)state;

	unit_sh("cd %s && rm -rf shallow3 && git clone -q --depth 3 file://%s/r shallow3 2>/dev/null",
	   top, top);
	assert_int_equal(walk(&w, "shallow3", "HEAD", 0), TF_GIT_WALK_SHALLOW);
	assert_int_equal(w.n, 3);
	p = path("shallow3");
	assert_int_equal(tf_repo_open(&r, p), 0);
	assert_int_equal(tf_repo_walk_first_parent(r, "HEAD", 0, record_hex, &c, &truncated), 0);
	assert_true(truncated);
	assert_int_equal(c.n, 3);
	tf_repo_free(r);
	free(p);
}

static tf_profile *folded(const char *text)
{
	tf_profile *p = NULL;
	assert_int_equal(tf_folded_decode(&p, text, strlen(text), "t.folded"), 0);
	return p;
}

static void free_history(tf_profile **h, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tf_profile_free(h[i]);
	free(h);
}

/* What run reads of its baseline: the nearest one split into its runs,
 * and the history before it. */
static void test_find_runs_and_history(void **state)
{
	tf_store *s = open_store("git", "r");
	tf_profile *a = folded("t;work 10\n"), *b = folded("t;work 20\n"), *c = folded("t;work 30\n");
	const tf_profile *three[] = { a, b, c }, *one[] = { a };
	tf_store_found f;
	tf_profile **hist;
	size_t n;
	(void)state;

	/* m1 and m2 one run each, M three runs of one job (run --repeat 3) */
	assert_int_equal(tf_store_save_runs(s, "m1", "runs", "k", one, 1), 0);
	assert_int_equal(tf_store_save_runs(s, "m2", "runs", "k", one, 1), 0);
	assert_int_equal(tf_store_save_runs(s, "M", "runs", "k", three, 3), 0);
	assert_int_equal(tf_store_save_runs(s, "m3", "runs", "k", one, 0), TF_EUSAGE);

	assert_int_equal(tf_store_find_runs(&f, s, "m5", "runs", "k", NULL), 0);
	expect_at(s, &f.match, "M");
	assert_int_equal(f.match.distance, 1);
	assert_string_equal(f.subject, "M");
	assert_int_equal(tf_profile_count_runs(f.stored), 3);
	assert_int_equal(f.nruns, 3);
	for (size_t i = 0; i < 3; i++)
		assert_int_equal(tf_profile_count_runs(f.runs[i]), 1);
	tf_store_found_clear(&f);
	assert_int_equal(tf_store_find_runs(&f, s, "m2", "runs", "k", NULL), 0);
	assert_int_equal(f.nruns, 1);
	tf_store_found_clear(&f);

	/* before M: m3 has none, m2 and m1 one each, newest first */
	n = tf_store_history(&hist, s, "M", "runs", "k", 10, NULL);
	assert_int_equal(n, 2);
	free_history(hist, n);
	n = tf_store_history(&hist, s, "M", "runs", "k", 1, NULL);
	assert_int_equal(n, 1);
	free_history(hist, n);
	n = tf_store_history(&hist, s, "m1", "runs", "k", 10, NULL);
	assert_int_equal(n, 0);
	free_history(hist, n);

	/* a baseline that cannot be read ends the history behind it... */
	assert_int_equal(tf_store_save(s, "m3", "runs", "k", "junk", 4), 0);
	n = tf_store_history(&hist, s, "m5", "runs", "k", 10, NULL);
	assert_int_equal(n, 1);
	free_history(hist, n);
	/* ...and found as the nearest, it is named, and not "no baseline" */
	assert_int_equal(tf_store_find_runs(&f, s, "M^", "runs", "k", NULL), TF_EINVAL);
	expect_at(s, &f.match, "m3");
	assert_non_null(strstr(tf_error_last(), "cannot be read"));
	assert_null(f.runs);
	assert_null(f.stored);
	tf_store_found_clear(&f);
	assert_int_equal(tf_store_find_runs(&f, s, "m5", "nothing", "k", NULL), TF_ENOTFOUND);
	assert_int_equal(f.match.commit[0], '\0');
	assert_int_equal(f.match.walked, 5);
	tf_store_found_clear(&f);
	tf_profile_free(a);
	tf_profile_free(b);
	tf_profile_free(c);
	tf_store_free(s);
}

/* Before a run knows its runner kind: any kind of the suite, nearest. */
static void test_resolve_suite(void **state)
{
	tf_store *s = open_store("git", "r");
	tf_store_match m;
	(void)state;

	assert_int_equal(tf_store_save(s, "m1", "sk", "k1", "x", 1), 0);
	assert_int_equal(tf_store_save(s, "m3", "sk", "k2", "x", 1), 0);
	assert_int_equal(tf_store_resolve_suite(&m, s, "m5", "sk", NULL), 0);
	expect_at(s, &m, "m3");
	assert_int_equal(m.distance, 2);
	assert_int_equal(tf_store_resolve_suite(&m, s, "m2", "sk", NULL), 0);
	expect_at(s, &m, "m1");
	assert_int_equal(tf_store_resolve_suite(&m, s, "m5", "absent", NULL), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "no baseline of suite 'absent'"));
	tf_store_free(s);
}

/* --fetch outside CI: the remote's nearest baseline comes, and only it. */
static void test_fetch_nearest(void **state)
{
	char got[TF_STORE_ID_HEX + 1];
	tf_store *s;
	tf_buf b = TF_BUF_INIT;
	(void)state;

	/* remote.git (test_fetch_from_remote) holds m2's, s2's and m3's */
	unit_sh("cd %s && git clone -q file://%s/remote.git c3 && git init -q --bare empty.git && "
	   "git clone -q file://%s/remote.git c4 2>/dev/null && "
	   "git -C c4 remote set-url origin file://%s/empty.git", top, top, top, top);
	s = open_store("git", "c3");
	assert_int_equal(tf_store_fetch_nearest(got, s, "m5"), 0);
	{
		char id[TF_STORE_ID_HEX + 1];
		assert_int_equal(tf_store_rev(id, s, "m3"), 0);
		assert_string_equal(got, id);
	}
	assert_int_equal(tf_store_get(&b, s, "m3", "unit", "other"), 0);
	assert_int_equal(tf_store_get(&b, s, "m2", "unit", "k"), TF_ENOTFOUND);
	tf_store_free(s);
	/* a remote without baselines on that line */
	s = open_store("git", "c4");
	assert_int_equal(tf_store_fetch_nearest(got, s, "m5"), TF_ENOTFOUND);
	assert_string_equal(got, "");
	tf_store_free(s);
	tf_buf_free(&b);
}

static void test_repo_distance(void **state)
{
	tf_repo *r;
	char *p = path("r");
	(void)state;

	assert_int_equal(tf_repo_open(&r, p), 0);
	assert_int_equal(tf_repo_distance(r, "m5", "m3", 0), 2);
	assert_int_equal(tf_repo_distance(r, "m5", "m5", 0), 0);
	assert_int_equal(tf_repo_distance(r, "m5", "m1", 0), 4);
	assert_int_equal(tf_repo_distance(r, "m5", "m1", 3), -1);  /* beyond max */
	assert_int_equal(tf_repo_distance(r, "m5", "s1", 0), -1);  /* off the first-parent line */
	assert_int_equal(tf_repo_distance(r, "m5", "nope", 0), -1);
	assert_int_equal(tf_repo_distance(r, "m1", "m5", 0), -1);
	tf_repo_free(r);
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_parent_across_merge),
		cmocka_unit_test(test_not_found),
		cmocka_unit_test(test_dir_store),
		cmocka_unit_test(test_fetch_from_remote),
		cmocka_unit_test(test_shallow_clone),
		cmocka_unit_test(test_walk_first_parent),
		cmocka_unit_test(test_walk_shallow_edge),
		cmocka_unit_test(test_find_runs_and_history),
		cmocka_unit_test(test_resolve_suite),
		cmocka_unit_test(test_fetch_nearest),
		cmocka_unit_test(test_repo_distance),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
