/*
 * test_store.c - the store's building blocks: suite and kind names as path
 * components, runner kinds, credential scrubbing, store specs, and the
 * union merge of two baseline trees (in a real repository made with
 * libgit2 in a temporary directory).
 */
#include "unit.h"
#include "store/store_int.h"
#include "testflame/context.h"

static void test_encode_names(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	static const struct { const char *in, *out; } cases[] = {
		{ "unit", "unit" },
		{ "cpu-clock-perf-x86_64", "cpu-clock-perf-x86_64" },
		{ "a b/c", "a%20b%2Fc" },
		{ ".hidden", "%2Ehidden" },
		{ "..", "%2E." },
		{ "v1.2+rc", "v1.2+rc" },
		{ "50%", "50%25" },
		{ "\xc3\xbc", "%C3%BC" },
		{ "a\nb", "a%0Ab" },
	};
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++) {
		assert_int_equal(tf_store_encode_name(&b, cases[i].in), 0);
		assert_string_equal(b.ptr, cases[i].out);
	}
	tf_buf_free(&b);
}

static void test_names_round_trip(void **state)
{
	(void)state;
	tf_buf enc = TF_BUF_INIT, dec = TF_BUF_INIT;

	/* every byte value but NUL, 60 at a time (at most 180 bytes encoded) */
	for (int start = 1; start < 256; start += 60) {
		char part[61];
		int n = 0;
		for (int c = start; c < start + 60 && c < 256; c++)
			part[n++] = (char)c;
		part[n] = '\0';
		assert_int_equal(tf_store_encode_name(&enc, part), 0);
		for (const char *c = enc.ptr; *c; c++)
			assert_true(strchr("%+-._", *c) || (*c >= '0' && *c <= '9') ||
				    (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z'));
		assert_false(enc.ptr[0] == '.');
		assert_int_equal(tf_store_decode_name(&dec, enc.ptr, enc.len), 0);
		assert_string_equal(dec.ptr, part);
	}
	tf_buf_free(&enc);
	tf_buf_free(&dec);
}

static void test_long_names(void **state)
{
	(void)state;
	char a[400], b[400];
	tf_buf ea = TF_BUF_INIT, eb = TF_BUF_INIT, dec = TF_BUF_INIT;

	/* 200 bytes encoded is the most kept whole */
	memset(a, 'a', 200);
	a[200] = '\0';
	assert_int_equal(tf_store_encode_name(&ea, a), 0);
	assert_string_equal(ea.ptr, a);
	/* longer: a prefix, '~' and the hash; same prefix, other name, other hash */
	memset(a, 'x', 300);
	a[300] = '\0';
	memcpy(b, a, 301);
	b[299] = 'y';
	assert_int_equal(tf_store_encode_name(&ea, a), 0);
	assert_int_equal(tf_store_encode_name(&eb, b), 0);
	assert_int_equal(ea.len, TF_STORE_NAME_PREFIX + 17);
	assert_int_equal(ea.ptr[TF_STORE_NAME_PREFIX], '~');
	assert_string_not_equal(ea.ptr, eb.ptr);
	assert_int_equal(strncmp(ea.ptr, eb.ptr, TF_STORE_NAME_PREFIX + 1), 0);
	/* stable across runs and versions, stored paths depend on it: FNV-1a
	 * of 300 'x', computed independently */
	assert_string_equal(ea.ptr + TF_STORE_NAME_PREFIX, "~e78ddf9f1ba85555");
	assert_int_equal(tf_store_decode_name(&dec, ea.ptr, ea.len), 0);
	assert_int_equal(dec.len, TF_STORE_NAME_PREFIX + 3);
	assert_string_equal(dec.ptr + TF_STORE_NAME_PREFIX, "...");
	/* the cut never splits an escape */
	for (int shift = 0; shift < 3; shift++) {
		memset(a, ' ', 300);
		memset(a, 'q', (size_t)shift);
		a[300] = '\0';
		assert_int_equal(tf_store_encode_name(&ea, a), 0);
		assert_true(ea.len <= TF_STORE_NAME_PREFIX + 17);
		assert_int_equal(tf_store_decode_name(&dec, ea.ptr, ea.len), 0);
		assert_int_equal(strncmp(dec.ptr, a, dec.len - 3), 0);
	}
	tf_buf_free(&ea);
	tf_buf_free(&eb);
	tf_buf_free(&dec);
}

static void test_bad_names(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;

	assert_int_equal(tf_store_encode_name(&b, ""), TF_EINVAL);
	assert_int_equal(tf_store_encode_name(&b, NULL), TF_EINVAL);
	assert_int_equal(tf_store_decode_name(&b, "%G1", 3), TF_EINVAL);
	assert_int_equal(tf_store_decode_name(&b, "ab%2", 4), TF_EINVAL);
	assert_int_equal(tf_store_decode_name(&b, "%00", 3), TF_EINVAL);
	assert_int_equal(tf_store_decode_name(&b, "", 0), TF_EINVAL);
	assert_int_equal(tf_store_decode_name(&b, "ab~12", 5), TF_EINVAL);
	assert_int_equal(tf_store_decode_name(&b, "~0123456789abcdef", 17), TF_EINVAL);
	assert_int_equal(tf_store_decode_name(&b, "a%2fb", 5), 0);
	assert_string_equal(b.ptr, "a/b");
	tf_buf_free(&b);
}

static void test_kind(void **state)
{
	(void)state;
	char *k = tf_store_kind("cpu-clock", "perf", "x86_64");
	assert_string_equal(k, "cpu-clock-perf-x86_64");
	free(k);
	assert_null(tf_store_kind(NULL, "perf", "x86_64"));
	assert_null(tf_store_kind("cpu-clock", "", "x86_64"));
	k = tf_store_kind("wall", "ptrace", NULL);
	assert_non_null(k);
	assert_true(strncmp(k, "wall-ptrace-", 12) == 0 && strlen(k) > 12);
	free(k);
}

static void test_scrub(void **state)
{
	(void)state;
	char *s;

	unsetenv("TESTFLAME_TOKEN");
	unsetenv("GITHUB_TOKEN");
	unsetenv("GITLAB_TOKEN");
	s = tf_git_scrub("failed to reach https://x-access-token:ghs_SECRET@github.com/o/r.git: 401");
	assert_string_equal(s, "failed to reach https://***@github.com/o/r.git: 401");
	free(s);
	s = tf_git_scrub("'http://a@h' and 'ssh://git@host:22/x' and http://plain.example/x");
	assert_string_equal(s, "'http://***@h' and 'ssh://***@host:22/x' and http://plain.example/x");
	free(s);
	/* an @ in the path is not user-info */
	s = tf_git_scrub("https://host/a@b");
	assert_string_equal(s, "https://host/a@b");
	free(s);
	setenv("GITLAB_TOKEN", "glpat-XYZ123", 1);
	setenv("TESTFLAME_TOKEN", "abc", 1); /* too short to scrub safely */
	s = tf_git_scrub("token glpat-XYZ123 glpat-XYZ123! abc");
	assert_string_equal(s, "token *** ***! abc");
	free(s);
	unsetenv("GITLAB_TOKEN");
	unsetenv("TESTFLAME_TOKEN");
	s = tf_git_scrub(NULL);
	assert_string_equal(s, "");
	free(s);
}

/* The one check of a spec, the config's and the store's. */
static void test_spec_parse(void **state)
{
	tf_store_spec sp;
	(void)state;

	assert_int_equal(tf_store_spec_parse(&sp, NULL), 0);
	assert_int_equal(sp.kind, TF_STORE_SPEC_GIT);
	assert_null(sp.arg);
	assert_int_equal(tf_store_spec_parse(&sp, "git"), 0);
	assert_null(sp.arg);
	assert_int_equal(tf_store_spec_parse(&sp, "git:upstream"), 0);
	assert_int_equal(sp.kind, TF_STORE_SPEC_GIT);
	assert_string_equal(sp.arg, "upstream");
	assert_int_equal(tf_store_spec_parse(&sp, "git:https://host/r.git"), 0);
	assert_string_equal(sp.arg, "https://host/r.git");
	assert_int_equal(tf_store_spec_parse(&sp, "dir:../cache"), 0);
	assert_int_equal(sp.kind, TF_STORE_SPEC_DIR);
	assert_string_equal(sp.arg, "../cache");
	assert_int_equal(tf_store_spec_parse(&sp, "pyroscope:https://pyro.example:4040"), 0);
	assert_int_equal(sp.kind, TF_STORE_SPEC_PYROSCOPE);
	assert_string_equal(sp.arg, "https://pyro.example:4040");
	assert_int_equal(tf_store_spec_parse(&sp, "pyroscope:pyro.example"), TF_EUSAGE);
	assert_string_equal(tf_error_last(), "store 'pyroscope:pyro.example' needs an http:// or "
					     "https:// URL after the colon");
	assert_int_equal(tf_store_spec_parse(&sp, "pyroscope:"), TF_EUSAGE);
	assert_string_equal(tf_error_last(), "store 'pyroscope:' needs a URL after the colon");
	assert_int_equal(tf_store_spec_parse(&sp, "dir:"), TF_EUSAGE);
	assert_int_equal(tf_store_spec_parse(&sp, "gitx"), TF_EUSAGE);
	assert_string_equal(tf_error_last(), "unknown store 'gitx' (expected git, git:REMOTE, "
					     "dir:PATH or pyroscope:URL)");
}

static void config_store_err(const char *text, const char *want)
{
	tf_config *cfg = NULL;
	tf_store *st = (tf_store *)1;
	tf_store_open_opts so = { 0 };

	/* the config keeps the spec as it was written, and where */
	assert_int_equal(tf_config_parse(&cfg, text, strlen(text), "t.yml"), 0);
	assert_int_equal(tf_store_check_config(cfg), TF_EUSAGE);
	assert_string_equal(tf_error_last(), want);
	/* opening the config's store says the same */
	so.cfg = cfg;
	assert_int_equal(tf_store_open_with(&st, cfg->store, &so), TF_EUSAGE);
	assert_null(st);
	assert_string_equal(tf_error_last(), want);
	tf_config_free(cfg);
}

/* The config's `store:` is checked by the store's rule, at its place in
 * the file. */
static void test_config_spec(void **state)
{
	tf_config *cfg = NULL;
	(void)state;

	config_store_err("store: s3://bucket\n", "t.yml:1:8: 'store': unknown store 's3://bucket' "
			 "(expected git, git:REMOTE, dir:PATH or pyroscope:URL)");
	config_store_err("suite: s\nstore: 'dir:'\n",
			 "t.yml:2:8: 'store': store 'dir:' needs a path after the colon");
	config_store_err("store: 'git:'\n", "t.yml:1:8: 'store': store 'git:' needs a remote after the colon");
	config_store_err("store: pyroscope:localhost:4040\n",
			 "t.yml:1:8: 'store': store 'pyroscope:localhost:4040' needs an http:// or "
			 "https:// URL after the colon");
	config_store_err("store: 'pyroscope:https://'\n",
			 "t.yml:1:8: 'store': store 'pyroscope:https://' needs an http:// or https:// "
			 "URL after the colon");
	assert_int_equal(tf_config_parse(&cfg, "store: dir:x\n", 13, "t.yml"), 0);
	assert_int_equal(tf_store_check_config(cfg), 0);
	tf_config_free(cfg);
	assert_int_equal(tf_store_check_config(NULL), 0);
}

/* The libgit2 boundary's errors: one line, no full stop, no credentials,
 * whichever module (store or context) meets them. */
static void test_git_error(void **state)
{
	tf_repo *r = NULL;
	git_repository *repo = NULL;
	char *id = NULL, *dir = unit_tmpdir();
	(void)state;

	tf_git_init();
	unsetenv("GITHUB_TOKEN");
	setenv("GITLAB_TOKEN", "glpat-SECRET42", 1);
	git_error_set_str(GIT_ERROR_NET, "failed to connect to https://u:glpat-SECRET42@host/x.git\n"
			  "second line glpat-SECRET42.\n");
	assert_int_equal(tf_git_error(GIT_EAUTH, 0, "cannot fetch from '%s'", "https://u:p@h/r"),
			 TF_EPERM);
	assert_string_equal(tf_error_last(), "cannot fetch from 'https://***@h/r': failed to "
			    "connect to https://***@host/x.git second line ***");
	assert_int_equal(tf_git_error(GIT_ENOTFOUND, TF_EINVAL, "x"), TF_EINVAL);
	assert_int_equal(tf_git_code(GIT_ENONFASTFORWARD), TF_ECONFLICT);
	assert_int_equal(tf_git_code(GIT_EOWNER), TF_EPERM);
	assert_int_equal(tf_git_code(GIT_EINVALIDSPEC), TF_EINVAL);
	/* the context's errors go through it too (they were never scrubbed) */
	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	git_repository_free(repo);
	assert_int_equal(tf_repo_open(&r, dir), 0);
	assert_int_not_equal(tf_repo_resolve(&id, r, "https://u:glpat-SECRET42@host/x"), 0);
	assert_null(strstr(tf_error_last(), "SECRET42"));
	assert_non_null(strstr(tf_error_last(), "cannot resolve 'https://***@host/x'"));
	tf_repo_free(r);
	unsetenv("GITLAB_TOKEN");
	unit_rmtree(dir);
}

static void test_git_open(void **state)
{
	char *dir = unit_tmpdir();
	git_repository *repo = NULL;
	(void)state;

	assert_int_equal(tf_git_open(&repo, dir), TF_ENOTFOUND);
	assert_null(repo);
	assert_non_null(strstr(tf_error_last(), "not a git repository"));
	assert_int_equal(git_repository_init(&repo, dir, 0), 0);
	git_repository_free(repo);
	repo = NULL;
	assert_int_equal(tf_git_open(&repo, dir), 0);
	assert_non_null(repo);
	git_repository_free(repo);
	unit_rmtree(dir);
}

static void test_specs(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	tf_store *s = NULL;

	/* the Pyroscope store is the git store with Pyroscope beside it */
	assert_int_equal(tf_store_open(&s, "pyroscope:http://x", dir), TF_ENOTFOUND);
	assert_null(s);
	assert_int_equal(tf_store_open(&s, "pyroscope:ftp://x", dir), TF_EUSAGE);
	assert_non_null(strstr(tf_error_last(), "http:// or https://"));
	assert_int_equal(tf_store_open(&s, "pyroscope:", dir), TF_EUSAGE);
	assert_int_equal(tf_store_open(&s, "s3://bucket", dir), TF_EUSAGE);
	assert_non_null(strstr(tf_error_last(), "unknown store 's3://bucket'"));
	assert_int_equal(tf_store_open(&s, "dir:", dir), TF_EUSAGE);
	assert_int_equal(tf_store_open(&s, "git:", dir), TF_EUSAGE);
	/* the git store needs a repository; the dir store does not */
	assert_int_equal(tf_store_open(&s, "git", dir), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "dir:PATH"));
	assert_int_equal(tf_store_open(&s, "dir:rel/cache", dir), 0);
	assert_false(tf_store_is_git(s));
	assert_non_null(strstr(tf_store_describe(s), "/rel/cache'"));
	assert_true(strstr(tf_store_describe(s), "dir store '/") != NULL);
	tf_store_free(s);
	assert_int_equal(tf_store_open(&s, "dir:/tmp/x/", dir), 0);
	assert_string_equal(tf_store_describe(s), "dir store '/tmp/x'");
	tf_store_free(s);
	unit_rmtree(dir);
}

/* ---- tree merge in a real repository ---- */

struct repo_fixture {
	char *dir;
	git_repository *repo;
};

static int repo_setup(void **state)
{
	struct repo_fixture *f = calloc(1, sizeof(*f));
	git_libgit2_init();
	f->dir = unit_tmpdir();
	assert_int_equal(git_repository_init(&f->repo, f->dir, 1), 0);
	*state = f;
	return 0;
}

static int repo_teardown(void **state)
{
	struct repo_fixture *f = *state;
	git_repository_free(f->repo);
	unit_rmtree(f->dir);
	free(f);
	git_libgit2_shutdown();
	return 0;
}

static git_oid blob(git_repository *repo, const char *text)
{
	git_oid id;
	assert_int_equal(git_blob_create_from_buffer(&id, repo, text, strlen(text)), 0);
	return id;
}

/* A tree from "path=content" pairs. */
static git_oid tree_of(git_repository *repo, const char *const *pairs, size_t n)
{
	git_oid t, next;
	bool have = false;
	for (size_t i = 0; i < n; i++) {
		char path[128];
		const char *eq = strchr(pairs[i], '=');
		snprintf(path, sizeof(path), "%.*s", (int)(eq - pairs[i]), pairs[i]);
		git_oid b = blob(repo, eq + 1);
		assert_int_equal(tf_tree_set(&next, repo, have ? &t : NULL, path, &b), 0);
		t = next;
		have = true;
	}
	return t;
}

/* The blob content at `path` in tree `t`, or NULL. */
static char *content_at(git_repository *repo, const git_oid *t, const char *path)
{
	git_tree *tree;
	git_tree_entry *e;
	git_blob *b;
	char *s;

	assert_int_equal(git_tree_lookup(&tree, repo, t), 0);
	if (git_tree_entry_bypath(&e, tree, path) != 0) {
		git_tree_free(tree);
		return NULL;
	}
	assert_int_equal(git_blob_lookup(&b, repo, git_tree_entry_id(e)), 0);
	s = strndup(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b));
	git_blob_free(b);
	git_tree_entry_free(e);
	git_tree_free(tree);
	return s;
}

static size_t count_files(git_repository *repo, const git_oid *t)
{
	git_tree *tree, *sub;
	size_t n = 0;
	assert_int_equal(git_tree_lookup(&tree, repo, t), 0);
	for (size_t i = 0; i < git_tree_entrycount(tree); i++) {
		assert_int_equal(git_tree_lookup(&sub, repo, git_tree_entry_id(git_tree_entry_byindex(tree, i))), 0);
		n += git_tree_entrycount(sub);
		git_tree_free(sub);
	}
	git_tree_free(tree);
	return n;
}

static void expect_content(git_repository *repo, const git_oid *t, const char *path, const char *want)
{
	char *got = content_at(repo, t, path);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_tree_set_keeps_others(void **state)
{
	struct repo_fixture *f = *state;
	static const char *const a[] = { "unit/k1.pb.gz=one", "unit/k2.pb.gz=two", "perf/k1.pb.gz=three" };
	git_oid t = tree_of(f->repo, a, 3), t2;
	git_oid b = blob(f->repo, "TWO");

	assert_int_equal(count_files(f->repo, &t), 3);
	assert_int_equal(tf_tree_set(&t2, f->repo, &t, "unit/k2.pb.gz", &b), 0);
	assert_int_equal(count_files(f->repo, &t2), 3);
	expect_content(f->repo, &t2, "unit/k2.pb.gz", "TWO");
	expect_content(f->repo, &t2, "unit/k1.pb.gz", "one");
	expect_content(f->repo, &t2, "perf/k1.pb.gz", "three");
}

static void test_tree_merge_union(void **state)
{
	struct repo_fixture *f = *state;
	static const char *const ours[] = { "unit/a.pb.gz=A", "unit/same.pb.gz=S", "bench/x.pb.gz=X" };
	static const char *const theirs[] = { "unit/b.pb.gz=B", "unit/same.pb.gz=S", "other/y.pb.gz=Y" };
	git_oid o = tree_of(f->repo, ours, 3), t = tree_of(f->repo, theirs, 3), m, m2;
	unsigned conflicts = 0;

	assert_int_equal(tf_tree_merge(&m, f->repo, &o, &t, false, &conflicts), 0);
	assert_int_equal(conflicts, 0);
	assert_int_equal(count_files(f->repo, &m), 5);
	expect_content(f->repo, &m, "unit/a.pb.gz", "A");
	expect_content(f->repo, &m, "unit/b.pb.gz", "B");
	expect_content(f->repo, &m, "other/y.pb.gz", "Y");
	expect_content(f->repo, &m, "bench/x.pb.gz", "X");
	/* the union does not depend on the side */
	assert_int_equal(tf_tree_merge(&m2, f->repo, &t, &o, false, &conflicts), 0);
	assert_true(git_oid_equal(&m, &m2));
	/* merging a tree with itself or with a subset changes nothing */
	assert_int_equal(tf_tree_merge(&m2, f->repo, &m, &o, true, &conflicts), 0);
	assert_true(git_oid_equal(&m, &m2));
	assert_int_equal(tf_tree_merge(&m2, f->repo, &o, &o, true, NULL), 0);
	assert_true(git_oid_equal(&o, &m2));
	assert_int_equal(conflicts, 0);
}

static void test_tree_merge_conflict(void **state)
{
	struct repo_fixture *f = *state;
	static const char *const ours[] = { "unit/k.pb.gz=mine", "unit/a.pb.gz=A" };
	static const char *const theirs[] = { "unit/k.pb.gz=yours", "unit/b.pb.gz=B" };
	git_oid o = tree_of(f->repo, ours, 2), t = tree_of(f->repo, theirs, 2), m;
	unsigned conflicts = 0;

	assert_int_equal(tf_tree_merge(&m, f->repo, &o, &t, false, &conflicts), 0);
	assert_int_equal(conflicts, 1);
	expect_content(f->repo, &m, "unit/k.pb.gz", "mine");
	assert_int_equal(count_files(f->repo, &m), 3);
	conflicts = 0;
	assert_int_equal(tf_tree_merge(&m, f->repo, &o, &t, true, &conflicts), 0);
	assert_int_equal(conflicts, 1);
	expect_content(f->repo, &m, "unit/k.pb.gz", "yours");
	expect_content(f->repo, &m, "unit/a.pb.gz", "A");
	expect_content(f->repo, &m, "unit/b.pb.gz", "B");
}

static void test_tree_merge_file_vs_dir(void **state)
{
	struct repo_fixture *f = *state;
	static const char *const ours[] = { "unit=flat file" };
	static const char *const theirs[] = { "unit/k.pb.gz=K" };
	git_oid o = tree_of(f->repo, ours, 1), t = tree_of(f->repo, theirs, 1), m;
	unsigned conflicts = 0;

	assert_int_equal(tf_tree_merge(&m, f->repo, &o, &t, false, &conflicts), 0);
	assert_int_equal(conflicts, 1);
	expect_content(f->repo, &m, "unit", "flat file");
	assert_int_equal(tf_tree_merge(&m, f->repo, &o, &t, true, &conflicts), 0);
	expect_content(f->repo, &m, "unit/k.pb.gz", "K");
}

static void test_ref_cas(void **state)
{
	struct repo_fixture *f = *state;
	static const char *const a[] = { "u/k.pb.gz=1" };
	git_oid tree = tree_of(f->repo, a, 1), src, c1, c2, got;
	const git_oid *parents[1] = { &c1 };
	const char *ref = "refs/testflame/runs/0123456789012345678901234567890123456789";

	assert_true(tf_git_parse_id(&src, "0123456789012345678901234567890123456789"));
	assert_int_equal(tf_git_commit_baseline(&c1, f->repo, &src, &tree, NULL, 0, "save u/k"), 0);
	assert_int_equal(tf_git_commit_baseline(&c2, f->repo, &src, &tree, parents, 1, "save u/k"), 0);
	/* create: only if absent */
	assert_int_equal(tf_git_ref_cas(f->repo, ref, &c1, NULL, "t"), 0);
	assert_int_equal(tf_git_ref_cas(f->repo, ref, &c2, NULL, "t"), TF_ECONFLICT);
	/* update: only from the expected value */
	assert_int_equal(tf_git_ref_cas(f->repo, ref, &c2, &c2, "t"), TF_ECONFLICT);
	assert_int_equal(tf_git_ref_get(&got, f->repo, ref), 0);
	assert_true(git_oid_equal(&got, &c1));
	assert_int_equal(tf_git_ref_cas(f->repo, ref, &c2, &c1, "t"), 0);
	assert_int_equal(tf_git_ref_get(&got, f->repo, ref), 0);
	assert_true(git_oid_equal(&got, &c2));
	assert_int_equal(tf_git_ref_get(&got, f->repo, "refs/testflame/runs/none"), TF_ENOTFOUND);
}

static void test_integrate(void **state)
{
	struct repo_fixture *f = *state;
	static const char *const a[] = { "u/a.pb.gz=A" };
	static const char *const b[] = { "u/b.pb.gz=B" };
	git_oid ta = tree_of(f->repo, a, 1), tb = tree_of(f->repo, b, 1), src, ca, cb, cab, got, tree;
	const git_oid *pa[1] = { &ca };
	const char *hex = "89abcdef0123456789abcdef0123456789abcdef";
	char ref[80];
	tf_sync_status st;
	unsigned conflicts = 0;

	snprintf(ref, sizeof(ref), "refs/testflame/runs/%s", hex);
	assert_true(tf_git_parse_id(&src, hex));
	assert_int_equal(tf_git_commit_baseline(&ca, f->repo, &src, &ta, NULL, 0, "a"), 0);
	assert_int_equal(tf_git_commit_baseline(&cb, f->repo, &src, &tb, NULL, 0, "b"), 0);
	assert_int_equal(tf_tree_merge(&tree, f->repo, &ta, &tb, false, NULL), 0);
	assert_int_equal(tf_git_commit_baseline(&cab, f->repo, &src, &tree, pa, 1, "a+b"), 0);

	assert_int_equal(tf_git_integrate(&st, &conflicts, f->repo, &src, &ca, false), 0);
	assert_int_equal(st, TF_SYNC_CREATED);
	assert_int_equal(tf_git_integrate(&st, &conflicts, f->repo, &src, &ca, false), 0);
	assert_int_equal(st, TF_SYNC_UP_TO_DATE);
	assert_int_equal(tf_git_integrate(&st, &conflicts, f->repo, &src, &cab, false), 0);
	assert_int_equal(st, TF_SYNC_FAST_FORWARD);
	/* an ancestor of what is here: nothing to do */
	assert_int_equal(tf_git_integrate(&st, &conflicts, f->repo, &src, &ca, false), 0);
	assert_int_equal(st, TF_SYNC_UP_TO_DATE);
	/* not in this history, though its file is: a merge with both parents */
	assert_int_equal(tf_git_integrate(&st, &conflicts, f->repo, &src, &cb, false), 0);
	assert_int_equal(st, TF_SYNC_MERGED);
	assert_int_equal(conflicts, 0);
	assert_int_equal(tf_git_ref_get(&got, f->repo, ref), 0);
	{
		git_commit *m;
		assert_int_equal(git_commit_lookup(&m, f->repo, &got), 0);
		assert_int_equal(git_commit_parentcount(m), 2);
		assert_true(git_oid_equal(git_commit_parent_id(m, 0), &cab));
		assert_true(git_oid_equal(git_commit_parent_id(m, 1), &cb));
		assert_true(git_oid_equal(git_commit_tree_id(m), &tree));
		git_commit_free(m);
	}
	assert_int_equal(tf_git_integrate(&st, &conflicts, f->repo, &src, &cb, false), 0);
	assert_int_equal(st, TF_SYNC_UP_TO_DATE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_encode_names),
		cmocka_unit_test(test_names_round_trip),
		cmocka_unit_test(test_long_names),
		cmocka_unit_test(test_bad_names),
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_scrub),
		cmocka_unit_test(test_git_error),
		cmocka_unit_test(test_git_open),
		cmocka_unit_test(test_spec_parse),
		cmocka_unit_test(test_config_spec),
		cmocka_unit_test(test_specs),
		cmocka_unit_test_setup_teardown(test_tree_set_keeps_others, repo_setup, repo_teardown),
		cmocka_unit_test_setup_teardown(test_tree_merge_union, repo_setup, repo_teardown),
		cmocka_unit_test_setup_teardown(test_tree_merge_conflict, repo_setup, repo_teardown),
		cmocka_unit_test_setup_teardown(test_tree_merge_file_vs_dir, repo_setup, repo_teardown),
		cmocka_unit_test_setup_teardown(test_ref_cas, repo_setup, repo_teardown),
		cmocka_unit_test_setup_teardown(test_integrate, repo_setup, repo_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
