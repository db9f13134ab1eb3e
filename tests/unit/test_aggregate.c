/*
 * test_aggregate.c - per-function self/total (recursion, inlining, symbol-
 * less addresses, selections, granularities), per-label groups, the top
 * report's numbers and scales, value columns, units and tf_profile_select.
 */
#include "unit.h"
#include "testflame/aggregate.h"

/* A stack as names, root first ("main;a;b"); every frame its own location. */
static void add(tf_profile *p, const char *stack, int64_t n, const char *test,
		int64_t tid)
{
	uint32_t locs[32], nlocs = 0;
	char *s = strdup(stack), *save = NULL;
	tf_label lab[2];
	uint32_t nlab = 0;

	for (char *f = strtok_r(s, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		tf_line ln = { tf_profile_function(p, f, "x.c", 1), 0, 0 };
		locs[nlocs++] = tf_profile_add_location(p, TF_NO_MAPPING, 0, &ln, 1);
	}
	for (uint32_t i = 0; i < nlocs / 2; i++) {
		uint32_t t = locs[i];
		locs[i] = locs[nlocs - 1 - i];
		locs[nlocs - 1 - i] = t;
	}
	if (test)
		lab[nlab++] = (tf_label){ tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	if (tid)
		lab[nlab++] = (tf_label){ tf_profile_intern(p, "tid"), 0, tid, 0 };
	int64_t v[2] = { n, n * 10000000 };
	tf_profile_add_sample(p, locs, nlocs, v, lab, nlab);
	free(s);
}

static tf_profile *known(void)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	add(p, "main;parse;lex", 30, "t1", 1);
	add(p, "main;parse", 10, "t1", 2);
	add(p, "main;eval;hot", 50, "t2", 3);
	add(p, "main;eval;rec;rec;rec", 7, "t2", 3);
	add(p, "main;eval", 3, NULL, 0);
	return p;
}

static const tf_agg_entry *entry(const tf_aggregate *a, const char *name)
{
	const tf_agg_entry *e = tf_aggregate_find(a, name, NULL, 0);
	if (!e)
		fail_msg("no entry for %s", name);
	return e;
}

static void test_self_total(void **state)
{
	(void)state;
	tf_profile *p = known();
	tf_agg_options o = { 0, NULL, TF_AGG_FUNCTION };
	tf_aggregate *a;

	assert_int_equal(tf_aggregate_new(&a, p, &o), 0);
	tf_profile_free(p); /* the aggregate owns its names */
	assert_int_equal(a->total, 100);
	assert_int_equal(a->n, 6);
	assert_int_equal(entry(a, "hot")->self, 50);
	assert_int_equal(entry(a, "rec")->self, 7);
	assert_int_equal(entry(a, "rec")->total, 7); /* recursion counted once */
	assert_int_equal(entry(a, "eval")->total, 60);
	assert_int_equal(entry(a, "main")->self, 0);
	assert_int_equal(entry(a, "main")->total, 100);
	assert_string_equal(entry(a, "lex")->filename, "x.c");
	assert_null(tf_aggregate_find(a, "nope", NULL, 0));

	tf_aggregate_sort(a, TF_AGG_BY_SELF);
	assert_string_equal(a->entries[0].name, "hot");
	assert_string_equal(a->entries[1].name, "lex");
	assert_string_equal(a->entries[4].name, "eval");  /* 3, then the zeros by name */
	assert_string_equal(a->entries[5].name, "main");
	assert_int_equal(entry(a, "rec")->self, 7);        /* index rebuilt after sort */
	tf_aggregate_sort(a, TF_AGG_BY_TOTAL);
	assert_string_equal(a->entries[0].name, "main");
	assert_string_equal(a->entries[1].name, "eval");
	tf_aggregate_sort(a, TF_AGG_BY_NAME);
	assert_string_equal(a->entries[0].name, "eval");
	tf_aggregate_free(a);
}

static void test_mask_and_values(void **state)
{
	(void)state;
	tf_profile *p = known();
	uint8_t *mask = tf_profile_label_mask(p, "test", "t2");
	tf_agg_options o = { 1, mask, TF_AGG_FUNCTION };
	tf_aggregate *a;

	assert_int_equal(tf_aggregate_new(&a, p, &o), 0);
	assert_int_equal(a->total, 570000000);
	assert_int_equal(a->nsamples, 2);
	assert_null(tf_aggregate_find(a, "lex", NULL, 0));
	assert_int_equal(entry(a, "hot")->self, 500000000);
	tf_aggregate_free(a);
	free(mask);

	o.value = 2;
	assert_int_equal(tf_aggregate_new(&a, p, &o), TF_EINVAL);
	assert_null(a);
	tf_profile_free(p);
}

/* Inlined frames, symbol-less addresses, and the finer granularities. */
static void test_inline_and_granularity(void **state)
{
	(void)state;
	tf_profile *p;
	tf_aggregate *a;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	uint32_t f1 = tf_profile_function(p, "helper", "a.c", 1);
	uint32_t f2 = tf_profile_function(p, "helper", "b.c", 1);
	uint32_t fo = tf_profile_function(p, "outer", "a.c", 10);
	tf_line in[2] = { { f1, 3, 0 }, { fo, 12, 0 } }, l2 = { f2, 5, 0 }, l3 = { fo, 14, 0 };
	tf_mapping m = { 0, 0, 0, tf_profile_intern(p, "/lib/libc.so"), 0, 0 };
	uint32_t map = tf_profile_add_mapping(p, &m);
	uint32_t loc_in = tf_profile_add_location(p, TF_NO_MAPPING, 0x10, in, 2);
	uint32_t loc_b = tf_profile_add_location(p, TF_NO_MAPPING, 0x20, &l2, 1);
	uint32_t loc_o = tf_profile_add_location(p, TF_NO_MAPPING, 0x30, &l3, 1);
	uint32_t loc_x = tf_profile_add_location(p, map, 0xdead, NULL, 0);
	int64_t v = 4;
	uint32_t s1[] = { loc_in }, s2[] = { loc_b, loc_o }, s3[] = { loc_x, loc_o };
	tf_profile_add_sample(p, s1, 1, &v, NULL, 0);
	v = 2;
	tf_profile_add_sample(p, s2, 2, &v, NULL, 0);
	v = 1;
	tf_profile_add_sample(p, s3, 2, &v, NULL, 0);

	tf_agg_options o = { 0, NULL, TF_AGG_FUNCTION };
	assert_int_equal(tf_aggregate_new(&a, p, &o), 0);
	assert_int_equal(entry(a, "helper")->self, 6);   /* both files, one name */
	assert_int_equal(entry(a, "outer")->self, 0);
	assert_int_equal(entry(a, "outer")->total, 7);   /* the inlined-into frame */
	assert_int_equal(entry(a, "0xdead")->self, 1);
	assert_string_equal(entry(a, "0xdead")->filename, "/lib/libc.so");
	tf_aggregate_free(a);

	o.granularity = TF_AGG_FILE_FUNCTION;
	assert_int_equal(tf_aggregate_new(&a, p, &o), 0);
	assert_int_equal(tf_aggregate_find(a, "helper", "a.c", 0)->self, 4);
	assert_int_equal(tf_aggregate_find(a, "helper", "b.c", 0)->self, 2);
	tf_aggregate_free(a);

	o.granularity = TF_AGG_LINE;
	assert_int_equal(tf_aggregate_new(&a, p, &o), 0);
	assert_int_equal(tf_aggregate_find(a, "outer", "a.c", 12)->total, 4);
	assert_int_equal(tf_aggregate_find(a, "outer", "a.c", 14)->total, 3);
	assert_null(tf_aggregate_find(a, "outer", "a.c", 10));
	tf_aggregate_free(a);
	tf_profile_free(p);
}

static void test_label_groups(void **state)
{
	(void)state;
	tf_profile *p = known();
	tf_label_groups *g;
	static const char *const counts[] = { "tid" };

	assert_int_equal(tf_label_groups_new(&g, p, "test", counts, 1), 0);
	assert_true(g->any_labelled);
	assert_int_equal(g->n, 3);
	assert_string_equal(g->groups[0].value, "t2");  /* by the default column, cpu */
	assert_int_equal(g->groups[0].sums[0], 57);
	assert_int_equal(g->groups[0].records, 2);
	assert_int_equal(g->groups[0].distinct[0], 1);
	assert_string_equal(g->groups[1].value, "t1");
	assert_int_equal(g->groups[1].distinct[0], 2);
	assert_null(g->groups[2].value);                 /* unlabelled last */
	assert_int_equal(g->groups[2].sums[1], 30000000);
	tf_label_groups_free(g);

	assert_int_equal(tf_label_groups_new(&g, p, "process", NULL, 0), 0);
	assert_false(g->any_labelled);
	assert_int_equal(g->n, 1);
	tf_label_groups_free(g);
	tf_profile_free(p);
}

static void test_select(void **state)
{
	(void)state;
	tf_profile *p = known(), *q;
	uint8_t *mask = tf_profile_label_mask(p, "test", "t1");

	tf_profile_set_meta(p, "event", "cpu-clock");
	p->period = 10000000;
	assert_int_equal(tf_profile_select(&q, p, mask), 0);
	assert_int_equal(tf_profile_validate(q), 0);
	assert_int_equal(q->samples.n, 2);
	assert_int_equal(q->functions.n, 3);  /* main, parse, lex */
	assert_int_equal(tf_profile_total(q, 1), 400000000);
	assert_string_equal(tf_profile_meta(q, "event"), "cpu-clock");
	assert_int_equal(q->period, 10000000);
	assert_string_equal(tf_sample_label_str(q, &q->samples.v[0], "test"), "t1");
	for (size_t i = 0; i < q->strings.strs.n; i++)
		assert_string_not_equal(q->strings.strs.v[i], "hot");
	tf_profile_free(q);
	assert_int_equal(tf_profile_select(&q, p, NULL), 0);
	assert_int_equal(q->samples.n, p->samples.n);
	tf_profile_free(q);
	free(mask);
	tf_profile_free(p);
}

static void test_value_index(void **state)
{
	(void)state;
	tf_profile *p = known();
	size_t vi = 99;

	assert_int_equal(tf_profile_default_value(p), 1);
	p->default_sample_type = tf_profile_intern(p, "samples");
	assert_int_equal(tf_profile_default_value(p), 0);
	p->default_sample_type = tf_profile_intern(p, "bogus");
	assert_int_equal(tf_profile_default_value(p), 1);
	assert_int_equal(tf_profile_value_index(&vi, p, NULL), 0);
	assert_int_equal(vi, 1);
	assert_int_equal(tf_profile_value_index(&vi, p, "samples"), 0);
	assert_int_equal(vi, 0);
	assert_int_equal(tf_profile_value_index(&vi, p, "cpu/nanoseconds"), 0);
	assert_int_equal(vi, 1);
	assert_int_equal(tf_profile_value_index(&vi, p, "0"), 0);
	assert_int_equal(vi, 0);
	assert_int_equal(tf_profile_value_index(&vi, p, "cpu/count"), TF_EINVAL);
	assert_int_equal(tf_profile_value_index(&vi, p, "2"), TF_EINVAL);
	assert_int_equal(tf_profile_value_index(&vi, p, "wall"), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "it has: samples, cpu"));
	tf_profile_free(p);
}

static void test_units(void **state)
{
	(void)state;
	char b[64];
	assert_string_equal(tf_value_format(b, sizeof(b), 1850000000, "nanoseconds"), "1.85s");
	assert_string_equal(tf_value_format(b, sizeof(b), 10000000, "nanoseconds"), "10ms");
	assert_string_equal(tf_value_format(b, sizeof(b), 1500, "nanoseconds"), "1.50us");
	assert_string_equal(tf_value_format(b, sizeof(b), 999, "nanoseconds"), "999ns");
	assert_string_equal(tf_value_format(b, sizeof(b), 0, "nanoseconds"), "0");
	assert_string_equal(tf_value_format(b, sizeof(b), -20000000, "nanoseconds"), "-20ms");
	assert_string_equal(tf_value_format(b, sizeof(b), 7200000000000LL, "nanoseconds"), "2hrs");
	assert_string_equal(tf_value_format(b, sizeof(b), 3, "seconds"), "3s");
	assert_string_equal(tf_value_format(b, sizeof(b), 1536, "bytes"), "1.50kB");
	assert_string_equal(tf_value_format(b, sizeof(b), 1234567, "count"), "1234567");
	assert_string_equal(tf_value_format(b, sizeof(b), 42, ""), "42");
	assert_string_equal(tf_value_format_in(b, sizeof(b), 1080000000, "nanoseconds", "ms"), "1080ms");
	assert_string_equal(tf_value_format_in(b, sizeof(b), 10000000, "nanoseconds", "s"), "0.01s");
	assert_string_equal(tf_value_scale(80000000, "nanoseconds"), "ms");
	assert_null(tf_value_scale(5, "count"));
}

static char *top(const tf_profile *p, size_t value, size_t rows, const uint8_t *mask)
{
	tf_top_options o = { value, mask, mask ? "test 't2'" : NULL, rows, false };
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_top_write(&b, p, &o), 0);
	return tf_buf_detach(&b);
}

static void test_top(void **state)
{
	(void)state;
	tf_profile *p = known();
	char *t;

	t = top(p, 0, 0, NULL);
	assert_non_null(strstr(t, "Type: samples\nTotal: 100\nShowing all 6 functions\n"));
	assert_non_null(strstr(t, "\n        50  50.00%  50.00%         50  50.00%  hot\n"));
	assert_non_null(strstr(t, "\n         0   0.00% 100.00%        100 100.00%  main\n"));
	free(t);

	/* one scale for the table: the smallest shown (30ms of parse's 10 samples
	 * is 100ms; rec 70ms) against the total (1s): "ms" */
	t = top(p, 1, 2, NULL);
	assert_non_null(strstr(t, "Type: cpu (nanoseconds)\nTotal: 1000ms in 100 samples\n"));
	assert_non_null(strstr(t, "Showing top 2 of 6 functions, 80.00% of the total\n"));
	assert_non_null(strstr(t, "     500ms  50.00%  50.00%      500ms  50.00%  hot\n"));
	free(t);

	/* pprof's rule: a 10ms value under a 1.05s total reads as 0.01s */
	tf_profile *g;
	tf_profile_new(&g);
	tf_profile_add_sample_type(g, "samples", "count");
	tf_profile_add_sample_type(g, "cpu", "nanoseconds");
	add(g, "main;heavy", 79, NULL, 0);
	add(g, "main;light", 25, NULL, 0);
	add(g, "main;preempt", 1, NULL, 0);
	t = top(g, 1, 0, NULL);
	assert_non_null(strstr(t, "     0.79s  75.24%  75.24%      0.79s  75.24%  heavy\n"));
	assert_non_null(strstr(t, "     0.01s   0.95% 100.00%      0.01s   0.95%  preempt\n"));
	free(t);
	tf_profile_free(g);

	uint8_t *mask = tf_profile_label_mask(p, "test", "t2");
	t = top(p, 0, 0, mask);
	assert_non_null(strstr(t, "Selection: test 't2'\nTotal: 57\n"));
	assert_null(strstr(t, "lex"));
	free(t);
	free(mask);
	tf_profile_free(p);
}

static void test_top_escapes_names(void **state)
{
	(void)state;
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	add(p, "main;evil\x1b[2Jname", 3, NULL, 0);
	char *t = top(p, 0, 0, NULL);
	assert_null(strchr(t, '\x1b'));
	assert_non_null(strstr(t, "evil\\x1b[2Jname"));
	free(t);
	tf_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_total),
		cmocka_unit_test(test_mask_and_values),
		cmocka_unit_test(test_inline_and_granularity),
		cmocka_unit_test(test_label_groups),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_value_index),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_top),
		cmocka_unit_test(test_top_escapes_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
