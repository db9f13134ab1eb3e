/*
 * test_shards.c - the shards of a suite (store/shards.c): the K/N spec, the
 * checks a merge makes before it trusts its files (one commit, one suite,
 * one kind, every shard once, no test twice), the merged runs themselves
 * (tests by name, shared work summed, a shard's repeats kept), and the dir
 * store's shard files.
 */
#include "unit.h"
#include "testflame/attribute.h"
#include "testflame/store.h"

#include <math.h>

static void test_shard_parse(void **state)
{
	(void)state;
	tf_shard s;
	char buf[32];

	assert_int_equal(tf_shard_parse(&s, "2/3"), 0);
	assert_int_equal(s.index, 2);
	assert_int_equal(s.total, 3);
	assert_string_equal(tf_shard_format(buf, sizeof(buf), s), "2/3");
	assert_int_equal(tf_shard_parse(&s, "1/1"), 0);
	assert_int_equal(tf_shard_parse(&s, "1000/1000"), 0);
	static const char *const bad[] = { "", "3", "0/3", "4/3", "2/", "/3", "2/3x", "-1/3",
					   "2 /3", "1/1001", "99999999999999999999/2", "a/b",
					   "2/3/4", "+2/3" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(bad); i++) {
		assert_int_equal(tf_shard_parse(&s, bad[i]), TF_EUSAGE);
		assert_non_null(strstr(tf_error_last(), "expected K/N"));
	}
	assert_int_equal(tf_shard_parse(&s, NULL), TF_EUSAGE);
}

/* A shard's run file: `tests` each with `ms` ms of samples in its own
 * function, an "[outside tests]" bucket, and the per-test lines. */
static tf_profile *make_shard(const char *spec, const char *commit, const char *const *tests,
			      const int *ms, size_t n)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period = 1000000;
	for (size_t t = 0; t <= n; t++) {
		const char *name = t < n ? tests[t] : TF_OUTSIDE_TEST;
		int count = t < n ? ms[t] : 5;
		char fn[64];
		snprintf(fn, sizeof(fn), "%s_work", t < n ? tests[t] : "main");
		uint32_t f = tf_profile_function(p, fn, "suite.c", 10);
		tf_line l = { f, 11, 0 };
		uint32_t loc = tf_profile_add_location(p, TF_NO_MAPPING, 0, &l, 1);
		tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, name), 0, 0 };
		int64_t v[2] = { count, (int64_t)count * 1000000 };
		tf_profile_add_sample(p, &loc, 1, v, &lab, 1);
		tf_test_meta m;
		tf_test_meta_init(&m);
		m.name = (char *)name;
		m.samples = (uint64_t)count;
		m.value = (int64_t)count * 1000000;
		m.wall_ns = count * 1e6;
		m.count = count * 1e6;
		m.source = (char *)(t < n ? "process" : "command");
		tf_test_meta_set(p, &m);
	}
	tf_profile_set_meta(p, "suite", "mini");
	tf_profile_set_meta(p, "commit", commit);
	tf_profile_set_meta(p, "event", "cpu-clock");
	tf_profile_set_meta(p, "sampler", "perf");
	tf_profile_set_meta(p, "arch", "x86_64");
	tf_profile_set_meta(p, "exit_status", "0");
	tf_profile_set_meta(p, "samples", "10");
	if (spec)
		tf_profile_set_meta(p, "shard", spec);
	return p;
}

#define C1 "1111111111111111111111111111111111111111"
#define C2 "2222222222222222222222222222222222222222"

typedef struct {
	tf_profile *p[4];
	const char *names[4];
} shard_set;

static void set_free(shard_set *s)
{
	for (size_t i = 0; i < 4; i++)
		tf_profile_free(s->p[i]);
}

/* Three shards of one suite, given out of order: tests by name. */
static void make_three(shard_set *s)
{
	static const char *const t1[] = { "parse", "hash" }, *const t2[] = { "victim" },
				 *const t3[] = { "sorting", "walk" };
	static const int m1[] = { 30, 20 }, m2[] = { 50 }, m3[] = { 10, 40 };
	memset(s, 0, sizeof(*s));
	s->p[0] = make_shard("3/3", C1, t3, m3, 2);
	s->p[1] = make_shard("1/3", C1, t1, m1, 2);
	s->p[2] = make_shard("2/3", C1, t2, m2, 1);
	s->names[0] = "c.pb.gz";
	s->names[1] = "a.pb.gz";
	s->names[2] = "b.pb.gz";
}

static int64_t test_total(const tf_profile *p, const char *test)
{
	int64_t sum = 0;
	for (size_t i = 0; i < p->samples.n; i++) {
		const char *t = tf_sample_label_str(p, &p->samples.v[i], "test");
		if (t && !strcmp(t, test))
			sum += tf_sample_values(p, i)[1];
	}
	return sum;
}

static void test_merge(void **state)
{
	(void)state;
	shard_set s;
	tf_shards_merged m;
	make_three(&s);

	assert_int_equal(tf_shards_merge(&m, (const tf_profile *const *)s.p, s.names, 3), 0);
	assert_int_equal(m.total, 3);
	assert_int_equal(m.nruns, 1);
	assert_string_equal(m.suite, "mini");
	assert_string_equal(m.commit, C1);
	assert_string_equal(m.kind, "cpu-clock-perf-x86_64");
	assert_string_equal(m.shards[0].name, "a.pb.gz"); /* sorted by index */
	assert_int_equal(m.shards[2].shard.index, 3);
	const tf_profile *p = m.runs[0];
	assert_int_equal(test_total(p, "victim"), 50000000);
	assert_int_equal(test_total(p, "walk"), 40000000);
	assert_int_equal(test_total(p, TF_OUTSIDE_TEST), 15000000); /* 5 ms in each shard */
	assert_null(tf_profile_meta(p, "shard"));
	assert_string_equal(tf_profile_meta(p, "shards"), "3");
	assert_string_equal(tf_profile_meta(p, "samples"), "30");
	/* one line per test; the shared bucket's summed */
	size_t lines = 0;
	for (size_t i = 0; i < p->comments.n; i++) {
		tf_test_meta tm;
		if (tf_test_meta_parse(&tm, tf_profile_str(p, p->comments.v[i])) != 0) {
			tf_error_clear();
			continue;
		}
		lines++;
		if (!strcmp(tm.name, TF_OUTSIDE_TEST)) {
			assert_int_equal(tm.samples, 15);
			assert_true(fabs(tm.count - 15e6) < 1);
		}
		tf_test_meta_clear(&tm);
	}
	assert_int_equal(lines, 6);
	tf_shards_merged_clear(&m);
	set_free(&s);
}

/* One line naming what is wrong, TF_EUSAGE, for every bad set of files. */
static void expect_refused(shard_set *s, size_t n, const char *what)
{
	tf_shards_merged m;
	assert_int_equal(tf_shards_merge(&m, (const tf_profile *const *)s->p, s->names, n),
			 TF_EUSAGE);
	if (!strstr(tf_error_last(), what))
		fail_msg("'%s' does not say '%s'", tf_error_last(), what);
	assert_null(strchr(tf_error_last(), '\n'));
	tf_shards_merged_clear(&m);
}

static void test_merge_checks(void **state)
{
	(void)state;
	shard_set s;
	static const char *const t[] = { "extra" }, *const again[] = { "victim" };
	static const int ms[] = { 5 };

	make_three(&s);
	expect_refused(&s, 2, "shard 2/3 of 'mini' missing: 2 of 3 run files given");
	expect_refused(&s, 1, "shards 1/3, 2/3 of 'mini' missing: 1 of 3 run files given");
	tf_profile_set_meta(s.p[0], "shard", "2/3");
	expect_refused(&s, 3, "shard 2/3 is doubled: 'c.pb.gz' and 'b.pb.gz'");
	tf_profile_set_meta(s.p[0], "shard", "3/4");
	expect_refused(&s, 3, "one suite split two ways");
	tf_profile_set_meta(s.p[0], "shard", NULL);
	expect_refused(&s, 3, "'c.pb.gz' is not a shard's run file");
	tf_profile_set_meta(s.p[0], "shard", "three");
	expect_refused(&s, 3, "bad testflame.shard 'three'");
	tf_profile_set_meta(s.p[0], "shard", "3/3");
	tf_profile_set_meta(s.p[2], "commit", C2);
	expect_refused(&s, 3, "not shards of one commit: commit '" C1 "' and '" C2 "'");
	tf_profile_set_meta(s.p[2], "commit", C1);
	tf_profile_set_meta(s.p[1], "suite", "other");
	expect_refused(&s, 3, "not shards of one suite");
	tf_profile_set_meta(s.p[1], "suite", "mini");
	tf_profile_set_meta(s.p[1], "event", "instructions");
	expect_refused(&s, 3, "not shards of one event");
	tf_profile_set_meta(s.p[1], "event", "cpu-clock");
	set_free(&s);

	/* a test two shards recorded: named, with both shards */
	make_three(&s);
	s.p[3] = make_shard("2/4", C1, again, ms, 1);
	s.names[3] = "d.pb.gz";
	tf_profile_set_meta(s.p[0], "shard", "4/4");
	tf_profile_set_meta(s.p[1], "shard", "1/4");
	tf_profile_set_meta(s.p[2], "shard", "3/4");
	expect_refused(&s, 4, "test 'victim' was recorded by two shards of one commit: 2/4 "
		       "('d.pb.gz') and 3/4 ('b.pb.gz')");
	tf_profile_free(s.p[3]);
	s.p[3] = make_shard("2/4", C1, t, ms, 1);
	tf_shards_merged m;
	assert_int_equal(tf_shards_merge(&m, (const tf_profile *const *)s.p, s.names, 4), 0);
	tf_shards_merged_clear(&m);
	set_free(&s);

	/* a failing shard is merged and said to have failed */
	make_three(&s);
	tf_profile_set_meta(s.p[2], "exit_status", "2");
	assert_int_equal(tf_shards_merge(&m, (const tf_profile *const *)s.p, s.names, 3), 0);
	assert_int_equal(m.shards[1].exit_status, 2);
	assert_int_equal(m.shards[0].exit_status, 0);
	assert_string_equal(tf_profile_meta(m.runs[0], "exit_status"), "2");
	tf_shards_merged_clear(&m);
	set_free(&s);
}

/* A shard that ran --repeat 2 keeps its runs: run r of the merge is every
 * shard's run r, as many as the fewest has. */
static void test_merge_repeats(void **state)
{
	(void)state;
	shard_set s;
	tf_shards_merged m;
	tf_profile *joined[3];

	make_three(&s);
	for (size_t i = 0; i < 3; i++) {
		const tf_profile *two[2] = { s.p[i], s.p[i] };
		assert_int_equal(tf_profile_join_runs(&joined[i], two, 2), 0);
	}
	assert_int_equal(tf_shards_merge(&m, (const tf_profile *const *)joined, s.names, 3), 0);
	assert_int_equal(m.nruns, 2);
	assert_int_equal(m.shards[0].runs, 2);
	assert_int_equal(test_total(m.runs[1], "victim"), 50000000);
	assert_null(tf_profile_meta(m.runs[1], "runs"));
	tf_shards_merged_clear(&m);
	/* one shard ran once: one run of the whole suite */
	tf_profile_free(joined[1]);
	joined[1] = s.p[1];
	s.p[1] = NULL;
	assert_int_equal(tf_shards_merge(&m, (const tf_profile *const *)joined, s.names, 3), 0);
	assert_int_equal(m.nruns, 1);
	tf_shards_merged_clear(&m);
	for (size_t i = 0; i < 3; i++)
		tf_profile_free(joined[i]);
	set_free(&s);
}

static void test_dir_store_shards(void **state)
{
	(void)state;
	char *tmp = unit_tmpdir(), *spec = tf_xasprintf("dir:%s/store", tmp), *dir = NULL;
	tf_store *st;
	tf_shard sh = { 2, 3 };
	tf_baseline_list l = { 0 };

	assert_int_equal(tf_store_open(&st, spec, tmp), 0);
	assert_int_equal(tf_store_save_shard(st, C1, "my suite", "cpu-clock-perf-x86_64", sh,
					     "x", 1), 0);
	assert_int_equal(tf_store_shard_dir(&dir, st, C1), 0);
	char *path = tf_xasprintf("%s/my%%20suite/cpu-clock-perf-x86_64.shard-2-of-3.pb.gz", dir);
	assert_int_equal(access(path, R_OK), 0);
	/* shards are no baseline */
	assert_int_equal(tf_store_list(&l, st), 0);
	assert_int_equal(l.items.n, 0);
	tf_baseline_list_free(&l);
	tf_store_free(st);
	free(path);
	free(dir);

	/* the git store keeps none */
	unit_sh("git init -q '%s/repo'", tmp);
	char *repo = tf_xasprintf("%s/repo", tmp);
	assert_int_equal(tf_store_open(&st, "git", repo), 0);
	assert_int_equal(tf_store_shard_dir(&dir, st, C1), TF_EUNSUPPORTED);
	tf_store_free(st);
	free(repo);
	free(spec);
	unit_rmtree(tmp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shard_parse),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_merge_checks),
		cmocka_unit_test(test_merge_repeats),
		cmocka_unit_test(test_dir_store_shards),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
