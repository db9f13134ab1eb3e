/*
 * test_profile.c - the profile model and its pprof / folded codecs:
 * deduplication, metadata, round trips, and refusal of corrupt input.
 */
#include "unit.h"
#include "testflame/profile.h"

static tf_profile *make_profile(void)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	uint32_t fmain = tf_profile_function(p, "main", "main.c", 10);
	uint32_t fhot = tf_profile_function(p, "hot", "hot.c", 3);
	tf_line lmain = { fmain, 12, 0 }, lhot = { fhot, 5, 0 };
	uint32_t locs[2];
	locs[0] = tf_profile_add_location(p, TF_NO_MAPPING, 0x1010, &lhot, 1);
	locs[1] = tf_profile_add_location(p, TF_NO_MAPPING, 0x2020, &lmain, 1);
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, "t1"), 0, 0 };
	int64_t v[2] = { 1, 10000000 };
	for (int i = 0; i < 7; i++)
		tf_profile_add_sample(p, locs, 2, v, &lab, 1);
	tf_profile_add_sample(p, locs + 1, 1, v, &lab, 1);
	tf_profile_set_meta(p, "event", "cpu-clock");
	tf_profile_set_meta(p, "event", "instructions");
	return p;
}

static void test_dedup_and_merge(void **state)
{
	(void)state;
	tf_profile *p = make_profile();
	assert_int_equal(p->functions.n, 2);
	assert_int_equal(p->locations.n, 2);
	assert_int_equal(p->samples.n, 2);            /* 7 equal samples merged */
	assert_int_equal(tf_sample_values(p, 0)[0], 7);
	assert_int_equal(tf_profile_total(p, 1), 80000000);
	assert_string_equal(tf_profile_meta(p, "event"), "instructions");
	assert_int_equal(p->comments.n, 1);
	assert_null(tf_profile_meta(p, "ev"));
	tf_profile_free(p);
}

/* Many keys at once: the same comments as setting them one by one, an
 * existing key (even a prefix of another) replaced in place, a key given
 * twice keeping its last value. */
/* Who made a run file: version, commit and dirty from its metadata; the
 * measure version, 1 for testflame's files from before it was kept. */
static void test_made_by(void **state)
{
	(void)state;
	tf_profile *p = make_profile();
	char buf[96];
	assert_null(tf_profile_made_by(buf, sizeof(buf), p));
	assert_int_equal(tf_profile_measure(p), 0);
	tf_profile_set_meta(p, "version", "0.1.0");
	assert_string_equal(tf_profile_made_by(buf, sizeof(buf), p), "testflame 0.1.0");
	assert_int_equal(tf_profile_measure(p), 1);
	tf_profile_set_meta(p, "build", "5b9f97c3a1b2c3d4e5f60718293a4b5c6d7e8f90-dirty");
	tf_profile_set_meta(p, "measure", "2");
	assert_string_equal(tf_profile_made_by(buf, sizeof(buf), p),
			    "testflame 0.1.0 (commit 5b9f97c3a1b2, dirty)");
	assert_int_equal(tf_profile_measure(p), 2);
	tf_profile_set_meta(p, "build", "not hex");
	tf_profile_set_meta(p, "measure", "x");
	assert_string_equal(tf_profile_made_by(buf, sizeof(buf), p), "testflame 0.1.0");
	assert_int_equal(tf_profile_measure(p), 0);
	tf_profile_free(p);
}

static void test_set_metas(void **state)
{
	(void)state;
	tf_profile *p = make_profile(), *q = make_profile();
	char *keys[2003], *values[2003];
	size_t n = 0;
	tf_profile_set_meta(p, "test.a", "old");
	tf_profile_set_meta(q, "test.a", "old");
	for (int i = 0; i < 2000; i++) {
		keys[n] = tf_xasprintf("test.t%d", i);
		values[n++] = tf_xasprintf("cpu=%d", i);
	}
	keys[n] = tf_xstrdup("test.a");
	values[n++] = tf_xstrdup("new");
	keys[n] = tf_xstrdup("event");
	values[n++] = tf_xstrdup("cpu-clock");
	keys[n] = tf_xstrdup("test.t7");
	values[n++] = tf_xstrdup("last");
	tf_profile_set_metas(p, keys, values, n);
	for (size_t i = 0; i < n; i++)
		tf_profile_set_meta(q, keys[i], values[i]);
	assert_int_equal(p->comments.n, q->comments.n);
	assert_int_equal(p->comments.n, 2002);
	for (size_t i = 0; i < p->comments.n; i++)
		assert_string_equal(tf_profile_str(p, p->comments.v[i]), tf_profile_str(q, q->comments.v[i]));
	assert_string_equal(tf_profile_meta(p, "test.a"), "new");
	assert_string_equal(tf_profile_meta(p, "event"), "cpu-clock");
	assert_string_equal(tf_profile_meta(p, "test.t7"), "last");
	assert_string_equal(tf_profile_meta(p, "test.t1999"), "cpu=1999");
	for (size_t i = 0; i < n; i++) {
		free(keys[i]);
		free(values[i]);
	}
	tf_profile_free(p);
	tf_profile_free(q);
}

static void test_pprof_round_trip(void **state)
{
	(void)state;
	tf_profile *p = make_profile(), *q;
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_pprof_encode(&b, p, 6), 0);
	assert_true(tf_is_gzip(b.ptr, b.len));
	assert_int_equal(tf_pprof_decode(&q, b.ptr, b.len), 0);
	assert_int_equal(tf_profile_validate(q), 0);
	assert_int_equal(q->samples.n, 2);
	assert_int_equal(q->sample_types.n, 2);
	assert_string_equal(tf_profile_str(q, q->sample_types.v[1].unit), "nanoseconds");
	assert_int_equal(tf_profile_total(q, 0), 8);
	assert_string_equal(tf_sample_label_str(q, &q->samples.v[0], "test"), "t1");
	const tf_location *l = &q->locations.v[q->stack.v[q->samples.v[0].locs_off]];
	assert_int_equal(l->address, 0x1010);
	assert_string_equal(tf_profile_str(q, q->functions.v[q->lines.v[l->lines_off].function].name), "hot");
	assert_string_equal(tf_profile_meta(q, "event"), "instructions");
	tf_buf_free(&b);
	tf_profile_free(p);
	tf_profile_free(q);
}

static void test_pprof_corrupt(void **state)
{
	(void)state;
	tf_profile *p = make_profile(), *q = NULL;
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_pprof_encode(&b, p, 6), 0);
	/* truncated gzip */
	assert_int_equal(tf_pprof_decode(&q, b.ptr, b.len / 2), TF_EINVAL);
	assert_null(q);
	assert_non_null(strstr(tf_error_last(), "truncated"));
	/* garbage protobuf */
	assert_int_equal(tf_pprof_decode(&q, "\x0a\xff\xff\xff\x0f", 5), TF_EINVAL);
	tf_buf_free(&b);
	tf_profile_free(p);
}

static void test_folded(void **state)
{
	(void)state;
	const char *text = "main;work;hot 70\nmain;work;cold 30\n\nmain;work;hot 5\n";
	tf_profile *p;
	tf_buf out = TF_BUF_INIT;
	assert_int_equal(tf_folded_decode(&p, text, strlen(text), "x.folded"), 0);
	assert_int_equal(p->samples.n, 2);
	assert_int_equal(tf_profile_total(p, 0), 105);
	assert_int_equal(tf_folded_write(&out, p, 0, NULL, NULL), 0);
	assert_non_null(strstr(out.ptr, "main;work;hot 75\n"));
	assert_non_null(strstr(out.ptr, "main;work;cold 30\n"));
	tf_buf_free(&out);
	tf_profile_free(p);

	/* the two-column diff form */
	const char *diff = "a;b 3 4\na;c 0 9\n";
	assert_int_equal(tf_folded_decode(&p, diff, strlen(diff), "d"), 0);
	assert_int_equal(p->sample_types.n, 2);
	assert_int_equal(tf_profile_total(p, 0), 3);
	assert_int_equal(tf_profile_total(p, 1), 13);
	tf_profile_free(p);

	/* bad lines name the file and line */
	const char *bad = "a;b 3\na;b x\n";
	assert_int_equal(tf_folded_decode(&p, bad, strlen(bad), "bad.folded"), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "bad.folded:2"));
}

/* A profile of one test whose "hot" frame has `n` samples of 1 ms. */
static tf_profile *make_run(int n, const char *test)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	uint32_t f = tf_profile_function(p, "hot", "hot.c", 3);
	tf_line l = { f, 5, 0 };
	uint32_t loc = tf_profile_add_location(p, TF_NO_MAPPING, 0x1010, &l, 1);
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	int64_t v[2] = { 1, 1000000 };
	for (int i = 0; i < n; i++)
		tf_profile_add_sample(p, &loc, 1, v, &lab, 1);
	tf_profile_set_meta(p, "event", "cpu-clock");
	p->duration_nanos = 1000;
	return p;
}

/* Runs joined into one file (a baseline of `run --repeat`) come apart
 * again, each with its own samples, after a trip through pprof. */
static void test_join_split_runs(void **state)
{
	(void)state;
	const int counts[3] = { 100, 103, 98 };
	tf_profile *runs[3], *joined, *back, **parts;
	size_t nparts;
	tf_buf b = TF_BUF_INIT;

	for (int i = 0; i < 3; i++)
		runs[i] = make_run(counts[i], "t1");
	assert_int_equal(tf_profile_count_runs(runs[0]), 1);
	assert_int_equal(tf_profile_join_runs(&joined, (const tf_profile *const *)runs, 3), 0);
	assert_int_equal(tf_profile_count_runs(joined), 3);
	assert_int_equal(joined->samples.n, 3);  /* one stack per run, kept apart */
	assert_int_equal(tf_profile_total(joined, 0), 301);
	assert_int_equal(joined->duration_nanos, 3000);
	assert_int_equal(tf_pprof_encode(&b, joined, 6), 0);
	assert_int_equal(tf_pprof_decode(&back, b.ptr, b.len), 0);
	assert_int_equal(tf_profile_split_runs(&parts, &nparts, back), 0);
	assert_int_equal(nparts, 3);
	for (size_t i = 0; i < nparts; i++) {
		assert_int_equal(tf_profile_total(parts[i], 0), counts[i]);
		assert_int_equal(tf_profile_count_runs(parts[i]), 1);
		assert_string_equal(tf_sample_label_str(parts[i], &parts[i]->samples.v[0], "test"), "t1");
		assert_string_equal(tf_profile_meta(parts[i], "event"), "cpu-clock");
		assert_int_equal(parts[i]->duration_nanos, 1000);
		tf_profile_free(parts[i]);
	}
	free(parts);
	/* an ordinary profile splits into a copy of itself */
	assert_int_equal(tf_profile_split_runs(&parts, &nparts, runs[0]), 0);
	assert_int_equal(nparts, 1);
	assert_int_equal(tf_profile_total(parts[0], 0), 100);
	tf_profile_free(parts[0]);
	free(parts);
	for (int i = 0; i < 3; i++)
		tf_profile_free(runs[i]);
	tf_profile_free(joined);
	tf_profile_free(back);
	tf_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dedup_and_merge),
		cmocka_unit_test(test_set_metas),
		cmocka_unit_test(test_made_by),
		cmocka_unit_test(test_pprof_round_trip),
		cmocka_unit_test(test_pprof_corrupt),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_join_split_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
