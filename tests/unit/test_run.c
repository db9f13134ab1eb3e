/*
 * test_run.c - the run engine (run.h) through its public API, the way
 * `testflame run` and `merge` drive it, on real git repositories made in a
 * temporary directory and a real suite recorded under the sampler: two
 * tests, alpha and beta, each a process of build/fixtures/forktree burning
 * the iterations its file `alpha.work` / `beta.work` names (10M, about
 * 15 ms). One run of that suite, recorded once, is what the tests keep as
 * the stored baselines they need, so each flow records only its own head.
 *
 *   baseline search  the stored baseline of the merge-base's first-parent
 *                    history is found (a nearer one on a merged side
 *                    branch is not), said and compared with; none found
 *                    says why (in report.md too) and writes the head
 *                    alone; a dir: store is searched and saved to instead
 *                    of git's
 *   confirmation     alpha made four times slower on a PR: the engine
 *                    reruns this tree and judges on the reruns alone
 *                    (gate.confirm N); confirm none judges the one run;
 *                    a run that saves a baseline under --no-fail does not
 *                    confirm, and says why
 *   shard merge      two shard jobs keep their files in a dir: store;
 *                    merge finds them there, compares the whole suite with
 *                    the merge-base's baseline, keeps the merged run as
 *                    HEAD's; a missing or doubled shard, or shards of
 *                    another commit, are refused with exit 2
 */
#include "unit.h"
#include "testflame/run.h"

#include <limits.h>

static char *top;           /* the group's temporary directory */
static char *forktree;      /* the fixture every test of the suite runs */
static char *kind;          /* the runner kind of the recorded suite */
static tf_profile *seed;    /* one run of the suite, for stored baselines */

/* ---- what the engine said ---------------------------------------------- */

typedef struct {
	char name[32];
	tf_verdict verdict;
	size_t base_runs, head_runs;
} seen_test;

typedef struct {
	tf_buf notices; /* "note: ...", "warning: ..." lines */
	tf_buf out;     /* the command's own output */
	int tables;     /* comparisons shown */
	char *confirmation, *origin, *base_name;
	size_t base_runs, head_runs;
	seen_test tests[8];
	size_t ntests;
} seen;

static void on_notice(void *ctx, tf_notice_level level, const char *msg)
{
	static const char *const names[] = { "note", "warning", "verbose", "error" };
	seen *s = ctx;
	tf_buf_printf(&s->notices, "%s: %s\n", names[level], msg);
}

static void on_print(void *ctx, const char *text, size_t len)
{
	tf_buf_put(&((seen *)ctx)->out, text, len);
}

static int on_table(void *ctx, const tf_comparison *c, const char *report_dir)
{
	seen *s = ctx;
	(void)report_dir;
	s->tables++;
	free(s->confirmation);
	free(s->origin);
	free(s->base_name);
	s->confirmation = c->summary.confirmation ? strdup(c->summary.confirmation) : NULL;
	s->origin = c->summary.origin ? strdup(c->summary.origin) : NULL;
	s->base_name = c->base.n && c->base.names ? strdup(c->base.names[0]) : NULL;
	s->base_runs = c->summary.base_runs;
	s->head_runs = c->summary.head_runs;
	s->ntests = 0;
	for (size_t i = 0; i < c->ntests && s->ntests < TF_ARRAY_SIZE(s->tests); i++) {
		seen_test *t = &s->tests[s->ntests++];
		snprintf(t->name, sizeof(t->name), "%s", c->tests[i].name);
		t->verdict = c->tests[i].verdict;
		t->base_runs = c->tests[i].base.runs;
		t->head_runs = c->tests[i].head.runs;
	}
	return 0;
}

static void seen_clear(seen *s)
{
	tf_buf_free(&s->notices);
	tf_buf_free(&s->out);
	free(s->confirmation);
	free(s->origin);
	free(s->base_name);
	memset(s, 0, sizeof(*s));
}

static const seen_test *seen_find(const seen *s, const char *name)
{
	for (size_t i = 0; i < s->ntests; i++)
		if (!strcmp(s->tests[i].name, name))
			return &s->tests[i];
	fail_msg("test '%s' not in the comparison", name);
	return NULL;
}

static void expect_has(const tf_buf *b, const char *want)
{
	if (!b->ptr || !strstr(b->ptr, want))
		fail_msg("wanted '%s' in:\n%s", want, b->ptr ? b->ptr : "(nothing)");
}

static void expect_lacks(const tf_buf *b, const char *unwanted)
{
	if (b->ptr && strstr(b->ptr, unwanted))
		fail_msg("did not want '%s' in:\n%s", unwanted, b->ptr);
}

/* ---- repositories ------------------------------------------------------ */

/*
 * A fresh repository `name` under the group's directory, its first commit
 * c1 on main holding the suite (alpha and beta at 10M iterations), and
 * the working directory in it.
 */
static void repo_new(const char *name)
{
	unit_sh("set -e; cd '%s'; git init -q -b %s %s; cd %s; "
		"ln -s '%s' alpha; ln -s '%s' beta; "
		"echo 10000000 >alpha.work; echo 10000000 >beta.work; "
		"printf '%%s\\n' 'n=${TESTFLAME_SHARD_TOTAL:-1} k=${TESTFLAME_SHARD_INDEX:-1}' "
		"'[ $n = 1 ] || [ $k = 1 ] && ./alpha 0 0 $(cat alpha.work)' "
		"'[ $n = 1 ] || [ $k = 2 ] && ./beta 0 0 $(cat beta.work)' 'exit 0' >suite.sh; "
		"printf 'suite: mini\\ncommand: \"sh suite.sh\"\\nfreq: 999\\n' >.testflame.yml; "
		"printf 'testflame-report/\\ns[12]/\\n' >.gitignore; "
		"git add -A; git commit -q -m c1",
		top, "main", name, name, forktree, forktree);
	char *dir = tf_xasprintf("%s/%s", top, name);
	assert_int_equal(chdir(dir), 0);
	free(dir);
}

static void repo_done(void)
{
	assert_int_equal(chdir(top), 0);
}

/* A commit of `rev` (HEAD, main, c1...), 40 hex digits. */
static void rev_of(char out[TF_STORE_ID_HEX + 1], const char *rev)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "git rev-parse --verify -q '%s^{commit}'", rev);
	FILE *f = popen(cmd, "r");
	assert_non_null(f);
	assert_non_null(fgets(out, TF_STORE_ID_HEX + 1, f));
	assert_int_equal(pclose(f), 0);
	assert_int_equal(strlen(out), TF_STORE_ID_HEX);
}

/* The recorded run of the suite kept in `spec`'s store (NULL: git) as the
 * baseline of `rev` for `suite`. */
static void keep_seed(const char *spec, const char *rev, const char *suite)
{
	tf_store *st = NULL;
	const tf_profile *runs[1] = { seed };
	assert_int_equal(tf_store_open(&st, spec, NULL), 0);
	assert_int_equal(tf_store_save_runs(st, rev, suite, kind, runs, 1), 0);
	tf_store_free(st);
}

/* The commits `spec`'s store (NULL: git) holds a baseline of, as the
 * first 12 hex digits of each, space-separated, sorted. */
static char *stored(const char *spec)
{
	tf_store *st = NULL;
	tf_baseline_list l;
	TF_VEC(char *) ids = { 0 };
	tf_buf b = TF_BUF_INIT;

	assert_int_equal(tf_store_open(&st, spec, NULL), 0);
	assert_int_equal(tf_store_list(&l, st), 0);
	for (size_t i = 0; i < l.items.n; i++)
		tf_vec_push(&ids, tf_xasprintf("%.12s", l.items.v[i].commit));
	for (size_t i = 0; i < ids.n; i++)
		for (size_t j = i + 1; j < ids.n; j++)
			if (strcmp(ids.v[j], ids.v[i]) < 0) {
				char *t = ids.v[i];
				ids.v[i] = ids.v[j];
				ids.v[j] = t;
			}
	for (size_t i = 0; i < ids.n; i++) {
		tf_buf_printf(&b, "%s%s", i ? " " : "", ids.v[i]);
		free(ids.v[i]);
	}
	tf_vec_free(&ids);
	tf_baseline_list_free(&l);
	tf_store_free(st);
	return b.ptr ? tf_buf_detach(&b) : tf_xstrdup("");
}

static char *short_ids(const char *a, const char *b)
{
	if (!b)
		return tf_xasprintf("%.12s", a);
	return strcmp(a, b) < 0 ? tf_xasprintf("%.12s %.12s", a, b)
				: tf_xasprintf("%.12s %.12s", b, a);
}

static void expect_stored(const char *spec, const char *a, const char *b)
{
	char *got = stored(spec), *want = short_ids(a, b);
	assert_string_equal(got, want);
	free(got);
	free(want);
}

/* ---- the commands, as the cli drives the engine ------------------------ */

typedef struct {
	const char *store, *confirm, *report, *shard;
	bool no_save, no_fail;
} run_args;

static tf_run_io io_for(seen *s)
{
	tf_run_io io = { .notice = on_notice, .print = on_print, .table = on_table, .ctx = s,
			  .verbosity = 1 };
	return io;
}

static void opts_fill(tf_run_opts *o, const run_args *a)
{
	o->flags.store = a->store;
	o->flags.confirm = a->confirm;
	o->flags.report_dir = a->report;
	o->flags.no_fail = a->no_fail;
	o->shard_flag = a->shard;
	o->no_save = a->no_save;
	assert_int_equal(tf_run_check_flags(o), 0);
}

/* `testflame run` with the config's command; its exit status. */
static int run(seen *s, const run_args *a)
{
	tf_run_io io = io_for(s);
	tf_run_opts o;
	int status;

	tf_run_opts_init(&o, &io);
	o.rec.needs_git = true;
	opts_fill(&o, a);
	assert_int_equal(tf_run_prepare(&o.rec, NULL), 0);
	assert_int_equal(tf_run_resolve_run(&o), 0);
	status = tf_run_main(&o);
	tf_run_opts_free(&o);
	return status;
}

/* `testflame merge FILES...` (none: where merge looks by itself); its
 * exit status, TF_EXIT_USAGE when no files were found. */
static int merge(seen *s, const run_args *a, char *const *files, size_t n)
{
	tf_run_io io = io_for(s);
	tf_run_opts o;
	tf_run_paths found = { 0 };
	int status;

	tf_run_opts_init(&o, &io);
	opts_fill(&o, a);
	assert_int_equal(tf_run_prepare_merge(&o), 0);
	assert_int_equal(tf_run_resolve(&o), 0);
	if (tf_run_merge_files(&found, &o, files, n) == 0)
		status = tf_run_merge(&o, found.v, found.n);
	else
		status = TF_EXIT_USAGE;
	for (size_t i = 0; i < found.n; i++)
		free(found.v[i]);
	tf_vec_free(&found);
	tf_run_opts_free(&o);
	return status;
}

/* ---- baseline search --------------------------------------------------- */

/*
 * main: c1 - c2 - c3 (merges side), the PR branched from c3. Baselines of
 * the suite at c1 and at side's s1 (one step nearer to c3, but on its
 * second parent): the PR's run takes c1's, the merge-base's nearest on
 * its first-parent line, compares with it, and keeps nothing.
 */
static void test_baseline_first_parent(void **state)
{
	(void)state;
	seen s = { 0 };
	char c1[TF_STORE_ID_HEX + 1], s1[TF_STORE_ID_HEX + 1], want[128];

	repo_new("first-parent");
	unit_sh("set -e; git commit -q --allow-empty -m c2; git checkout -q -b side; "
		"git commit -q --allow-empty -m s1; git checkout -q main; "
		"git merge -q --no-ff side -m c3; git checkout -q -b pr; "
		"git commit -q --allow-empty -m pr");
	rev_of(c1, "main~2");
	rev_of(s1, "side");
	keep_seed(NULL, c1, "mini");
	keep_seed(NULL, s1, "mini");

	assert_int_not_equal(run(&s, &(run_args){ .confirm = "none", .no_fail = true }),
			     TF_EXIT_ERROR);
	snprintf(want, sizeof(want), "baseline: %.12s (c1), 2 commits before the merge-base; "
		 "suite 'mini'\n", c1);
	expect_has(&s.out, want);
	assert_int_equal(s.tables, 1);
	snprintf(want, sizeof(want), "baseline %.12s", c1);
	assert_string_equal(s.base_name, want);
	assert_int_equal(s.base_runs, 1);
	assert_int_equal(s.head_runs, 1);
	assert_int_equal(seen_find(&s, "alpha")->base_runs, 1);
	assert_int_equal(seen_find(&s, "beta")->head_runs, 1);
	/* a PR's run is no baseline */
	expect_stored(NULL, c1, s1);
	assert_true(access("testflame-report/report.json", F_OK) == 0);
	seen_clear(&s);
	repo_done();
}

/*
 * None found: the nearest baseline holds another suite, and the suite's
 * own is on a branch main never merged. The run says so, writes the head
 * alone where the report goes (report.md saying why), compares with
 * nothing, and with --no-save keeps nothing.
 */
static void test_baseline_none(void **state)
{
	(void)state;
	seen s = { 0 };
	char c1[TF_STORE_ID_HEX + 1], off[TF_STORE_ID_HEX + 1], want[256];

	repo_new("none");
	unit_sh("set -e; git checkout -q -b off; git commit -q --allow-empty -m off; "
		"git checkout -q main; git commit -q --allow-empty -m c2");
	rev_of(c1, "main~1");
	rev_of(off, "off");
	keep_seed(NULL, c1, "other");
	keep_seed(NULL, off, "mini");

	assert_int_equal(run(&s, &(run_args){ .no_save = true }), TF_EXIT_OK);
	snprintf(want, sizeof(want), "note: no baseline of the suite 'mini' (%s) in the 1 "
		 "first-parent commit from %.12s, back to the first commit\n", kind, c1);
	expect_has(&s.notices, want);
	snprintf(want, sizeof(want), "note: the nearest baseline, of %.12s (c1), holds the suite "
		 "'other', not 'mini'", c1);
	expect_has(&s.notices, want);
	expect_has(&s.out, "no baseline yet; this run is in testflame-report/head.pb.gz\n");
	assert_int_equal(s.tables, 0);
	assert_true(access("testflame-report/head.pb.gz", F_OK) == 0);
	tf_buf md = TF_BUF_INIT;
	assert_int_equal(tf_file_read(&md, "testflame-report/report.md"), 0);
	expect_has(&md, "no baseline of the suite 'mini'");
	expect_has(&md, "holds the suite 'other'");
	tf_buf_free(&md);
	expect_stored(NULL, c1, off);
	seen_clear(&s);
	repo_done();
}

/*
 * --store dir:PATH: the baseline is looked for there, not in git (which
 * holds a nearer one), and the run on main keeps HEAD's there too.
 */
static void test_baseline_dir_store(void **state)
{
	(void)state;
	seen s = { 0 };
	char c1[TF_STORE_ID_HEX + 1], c2[TF_STORE_ID_HEX + 1], c3[TF_STORE_ID_HEX + 1];
	char want[128];
	char *spec = tf_xasprintf("dir:%s/dir-store", top);

	repo_new("dir");
	unit_sh("set -e; git commit -q --allow-empty -m c2; git commit -q --allow-empty -m c3");
	rev_of(c1, "HEAD~2");
	rev_of(c2, "HEAD~1");
	rev_of(c3, "HEAD");
	keep_seed(spec, c1, "mini");
	keep_seed(NULL, c2, "mini");

	assert_int_not_equal(run(&s, &(run_args){ .store = spec, .confirm = "none",
						  .no_fail = true }),
			     TF_EXIT_ERROR);
	snprintf(want, sizeof(want), "baseline: %.12s (c1), 2 commits before HEAD; suite 'mini'\n",
		 c1);
	expect_has(&s.out, want);
	snprintf(want, sizeof(want), "baseline %.12s", c1);
	assert_string_equal(s.base_name, want);
	expect_has(&s.notices, "in the dir store");
	/* on main, clean: HEAD's baseline kept in the dir store, git's untouched */
	expect_stored(spec, c1, c3);
	expect_stored(NULL, c2, NULL);
	seen_clear(&s);
	free(spec);
	repo_done();
}

/* ---- confirmation ------------------------------------------------------ */

/* A repository whose main has the suite's baseline at c1, and HEAD on
 * `branch` (a new one, unless "main") with alpha four times slower. */
static void repo_slow_alpha(const char *name, const char *branch, char c1[TF_STORE_ID_HEX + 1])
{
	repo_new(name);
	rev_of(c1, "HEAD");
	keep_seed(NULL, c1, "mini");
	if (strcmp(branch, "main"))
		unit_sh("git checkout -q -b %s", branch);
	unit_sh("set -e; echo 40000000 >alpha.work; git commit -q -am 'alpha: four times the work'");
}

/*
 * gate.confirm 2: alpha looks slower than the stored baseline after one
 * run, so the engine runs the suite twice more and judges on those two
 * runs alone (the one that raised the suspicion set aside: two head runs,
 * not three), and the verdict says how it was confirmed.
 */
static void test_confirm_rerun(void **state)
{
	(void)state;
	seen s = { 0 };
	char c1[TF_STORE_ID_HEX + 1];

	repo_slow_alpha("rerun", "pr", c1);
	assert_int_equal(run(&s, &(run_args){ .confirm = "2" }), TF_EXIT_REGRESSION);
	expect_has(&s.notices, "note: alpha looks ");
	expect_has(&s.notices, "; running the suite 2 more times to confirm\n");
	assert_int_equal(s.tables, 1);
	assert_non_null(s.confirmation);
	assert_true(strncmp(s.confirmation, "against the stored baseline, alpha looks ", 41) == 0);
	assert_non_null(strstr(s.confirmation, "so this tree was run 2 more times and judged on "
					      "those"));
	assert_int_equal(s.head_runs, 2);
	assert_int_equal(s.base_runs, 1);
	const seen_test *alpha = seen_find(&s, "alpha");
	assert_int_equal(alpha->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(alpha->head_runs, 2);
	assert_int_equal(alpha->base_runs, 1);
	expect_stored(NULL, c1, NULL);
	seen_clear(&s);
	repo_done();
}

/* gate.confirm none: the same slowdown judged on the one run, nothing rerun. */
static void test_confirm_none(void **state)
{
	(void)state;
	seen s = { 0 };
	char c1[TF_STORE_ID_HEX + 1];

	repo_slow_alpha("none-confirm", "pr", c1);
	assert_int_equal(run(&s, &(run_args){ .confirm = "none" }), TF_EXIT_REGRESSION);
	expect_lacks(&s.notices, "to confirm");
	assert_null(s.confirmation);
	assert_int_equal(s.head_runs, 1);
	assert_int_equal(seen_find(&s, "alpha")->verdict, TF_VERDICT_REGRESSED);
	seen_clear(&s);
	repo_done();
}

/*
 * On main under --no-fail, the run saves a baseline and nothing can fail
 * it: a slowdown is reported unconfirmed, the report says why, and the
 * run is kept as HEAD's baseline.
 */
static void test_confirm_not_when_saving(void **state)
{
	(void)state;
	seen s = { 0 };
	char c1[TF_STORE_ID_HEX + 1], c2[TF_STORE_ID_HEX + 1];

	repo_slow_alpha("saving", "main", c1);
	rev_of(c2, "HEAD");
	assert_int_equal(run(&s, &(run_args){ .no_fail = true }), TF_EXIT_OK);
	expect_has(&s.notices, "not confirmed: this run saves a baseline and nothing fails it");
	expect_lacks(&s.notices, "to confirm\n");
	assert_non_null(s.confirmation);
	assert_true(strncmp(s.confirmation, "no (this run saves a baseline and nothing fails it",
			    50) == 0);
	assert_int_equal(s.head_runs, 1);
	assert_int_equal(seen_find(&s, "alpha")->verdict, TF_VERDICT_REGRESSED);
	expect_stored(NULL, c1, c2);
	seen_clear(&s);
	repo_done();
}

/* ---- shard merge ------------------------------------------------------- */

/*
 * Two shard jobs at c2 keep their files in a dir: store (and in their own
 * report directories, s1 and s2); the merge job, given nothing, finds them
 * in the store, compares the whole suite with c1's baseline, says how the
 * head's runs came about, and keeps the merged run as c2's baseline.
 * Then what merge refuses: a shard missing, one given twice, shards of
 * another commit.
 */
static void test_merge_shards(void **state)
{
	(void)state;
	seen s = { 0 };
	char c1[TF_STORE_ID_HEX + 1], c2[TF_STORE_ID_HEX + 1], want[160];
	char *spec = tf_xasprintf("dir:%s/merge-store", top);

	repo_new("merge");
	unit_sh("git commit -q --allow-empty -m c2");
	rev_of(c1, "HEAD~1");
	rev_of(c2, "HEAD");
	keep_seed(spec, c1, "mini");

	assert_int_equal(run(&s, &(run_args){ .store = spec, .shard = "1/2", .report = "s1" }), 0);
	assert_int_equal(run(&s, &(run_args){ .store = spec, .shard = "2/2", .report = "s2" }), 0);
	expect_has(&s.out, "shard 1/2 of 'mini': ");
	expect_has(&s.out, "written to s2/shard-2-of-2.pb.gz");
	expect_has(&s.notices, "note: kept shard 2/2 in '");
	assert_int_equal(s.tables, 0);
	expect_stored(spec, c1, NULL); /* a shard keeps no baseline */
	seen_clear(&s);

	assert_int_not_equal(merge(&s, &(run_args){ .store = spec, .no_fail = true }, NULL, 0),
			     TF_EXIT_ERROR);
	snprintf(want, sizeof(want), "note: merged 2 shards of 'mini' at %.12s\n", c2);
	expect_has(&s.notices, want);
	snprintf(want, sizeof(want), "baseline: %.12s (c1), 1 commit before HEAD; suite 'mini'\n",
		 c1);
	expect_has(&s.out, want);
	assert_int_equal(s.tables, 1);
	/* each test from its own shard, one run each, against c1's */
	assert_int_equal(seen_find(&s, "alpha")->head_runs, 1);
	assert_int_equal(seen_find(&s, "beta")->head_runs, 1);
	assert_int_equal(seen_find(&s, "beta")->base_runs, 1);
	assert_non_null(s.origin);
	assert_true(strncmp(s.origin, "merged from 2 shards (one run each), judged on their runs "
			    "as recorded", 67) == 0);
	expect_stored(spec, c1, c2);
	tf_store *st = NULL;
	tf_store_found f;
	assert_int_equal(tf_store_open(&st, spec, NULL), 0);
	assert_int_equal(tf_store_find_runs(&f, st, c2, "mini", kind, NULL), 0);
	assert_string_equal(f.match.commit, c2);
	assert_string_equal(tf_profile_meta(f.stored, "shards"), "2");
	assert_null(tf_profile_meta(f.stored, "shard"));
	tf_store_found_clear(&f);
	tf_store_free(st);
	seen_clear(&s);

	char *one[] = { "s1/shard-1-of-2.pb.gz" };
	assert_int_equal(merge(&s, &(run_args){ 0 }, one, 1), TF_EXIT_USAGE);
	expect_has(&s.notices, "error: shard 2/2 of 'mini' missing");
	assert_int_equal(s.tables, 0);
	seen_clear(&s);

	char *twice[] = { "s1/shard-1-of-2.pb.gz", "s1/shard-1-of-2.pb.gz" };
	assert_int_equal(merge(&s, &(run_args){ 0 }, twice, 2), TF_EXIT_USAGE);
	expect_has(&s.notices, "error: shard 1/2 is doubled");
	seen_clear(&s);

	unit_sh("git commit -q --allow-empty -m c3");
	char *both[] = { "s1", "s2" };
	assert_int_equal(merge(&s, &(run_args){ 0 }, both, 2), TF_EXIT_USAGE);
	snprintf(want, sizeof(want), "error: the shards were recorded at %.12s, but this checkout "
		 "is ", c2);
	expect_has(&s.notices, want);
	assert_int_equal(s.tables, 0);
	expect_stored(spec, c1, c2);
	seen_clear(&s);
	free(spec);
	repo_done();
}

/* ---- the group --------------------------------------------------------- */

static char *fixture_path(void)
{
	const char *build = getenv("TESTFLAME_BUILD");
	char self[PATH_MAX];
	ssize_t n;

	if (build)
		return tf_xasprintf("%s/fixtures/forktree", build);
	/* build/tests/test_run -> build/fixtures/forktree */
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	*strrchr(self, '/') = '\0';
	*strrchr(self, '/') = '\0';
	return tf_xasprintf("%s/fixtures/forktree", self);
}

/* One run of the suite, recorded by the engine in a repository of its own. */
static int setup(void **state)
{
	(void)state;
	seen s = { 0 };
	tf_run_io io = io_for(&s);
	tf_run_suite rec;
	tf_run_result res;
	int status;

	top = unit_tmpdir();
	unit_git_env(top);
	unsetenv("TESTFLAME_STORE");
	forktree = fixture_path();
	assert_int_equal(access(forktree, X_OK), 0);
	repo_new("seed");
	tf_run_suite_init(&rec, &io);
	assert_int_equal(tf_run_prepare(&rec, NULL), 0);
	assert_true(tf_run_record_one(&res, &rec, &status));
	assert_int_equal(status, 0);
	kind = tf_run_kind(&res);
	seed = res.profile;
	res.profile = NULL;
	assert_non_null(kind);
	tf_run_result_free(&res);
	tf_run_suite_free(&rec);
	seen_clear(&s);
	repo_done();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tf_profile_free(seed);
	free(kind);
	free(forktree);
	unit_rmtree(top);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_baseline_first_parent),
		cmocka_unit_test(test_baseline_none),
		cmocka_unit_test(test_baseline_dir_store),
		cmocka_unit_test(test_confirm_rerun),
		cmocka_unit_test(test_confirm_none),
		cmocka_unit_test(test_confirm_not_when_saving),
		cmocka_unit_test(test_merge_shards),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
