/*
 * test_folded.c - the folded-stacks writer (stacks that render alike are
 * merged, labels select, names cannot break the line format, symbol-less
 * addresses) and the loader's sniffing (text with a stray control byte is
 * still text; binary garbage gets pprof's error).
 */
#include "unit.h"
#include "testflame/profile.h"

static char *folded(const tf_profile *p, size_t vi, const char *key, const char *value)
{
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_folded_write(&b, p, vi, key, value), 0);
	return tf_buf_detach(&b);
}

static void test_write(void **state)
{
	(void)state;
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	uint32_t fmain = tf_profile_function(p, "main", "m.c", 1);
	uint32_t fodd = tf_profile_function(p, "odd;name\nx", "o.c", 1);
	tf_line l1 = { fmain, 10, 0 }, l2 = { fmain, 20, 0 }, l3 = { fodd, 5, 0 };
	/* two call sites of main: different locations, the same line of text */
	uint32_t site1 = tf_profile_add_location(p, TF_NO_MAPPING, 0x10, &l1, 1);
	uint32_t site2 = tf_profile_add_location(p, TF_NO_MAPPING, 0x20, &l2, 1);
	uint32_t odd = tf_profile_add_location(p, TF_NO_MAPPING, 0x30, &l3, 1);
	uint32_t bare = tf_profile_add_location(p, TF_NO_MAPPING, 0xbeef, NULL, 0);
	tf_label ta = { tf_profile_intern(p, "test"), tf_profile_intern(p, "a"), 0, 0 };
	tf_label tb = { tf_profile_intern(p, "test"), tf_profile_intern(p, "b"), 0, 0 };
	uint32_t s1[] = { odd, site1 }, s2[] = { odd, site2 }, s3[] = { bare, site1 };
	int64_t v = 3;
	tf_profile_add_sample(p, s1, 2, &v, &ta, 1);
	v = 4;
	tf_profile_add_sample(p, s2, 2, &v, &tb, 1);
	v = 0;
	tf_profile_add_sample(p, s3, 2, &v, &ta, 1);
	v = 2;
	tf_profile_add_sample(p, s3, 2, &v, &tb, 1);
	tf_profile_add_sample(p, NULL, 0, &v, NULL, 0);

	char *t = folded(p, 0, NULL, NULL);
	assert_string_equal(t, "main;odd:name x 7\nmain;0xbeef 2\n[unknown] 2\n");
	free(t);
	t = folded(p, 0, "test", "a");
	assert_string_equal(t, "main;odd:name x 3\n");
	free(t);
	t = folded(p, 0, "test", "zzz");
	assert_string_equal(t, "");
	free(t);
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_folded_write(&b, p, 1, NULL, NULL), TF_EINVAL);
	tf_buf_free(&b);
	tf_profile_free(p);
}

static char *write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char *path = tf_xasprintf("%s/%s", dir, name);
	assert_int_equal(tf_file_write_atomic(path, data, len), 0);
	return path;
}

static void test_load_sniffing(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *path;
	tf_profile *p;

	path = write_file(dir, "ctl.folded", "a;b\x01" "c 5\na;d 2\n", 14);
	assert_int_equal(tf_profile_load(&p, path), 0);
	assert_int_equal(tf_profile_total(p, 0), 7);
	tf_profile_free(p);
	free(path);

	path = write_file(dir, "bad.folded", "a;b\x01 five\n", 10);
	assert_int_equal(tf_profile_load(&p, path), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "bad.folded' is not a pprof profile, nor folded stacks (line 1:"));
	free(path);

	path = write_file(dir, "bin", "\x0a\x00\x01\x02\xff", 5);
	assert_int_equal(tf_profile_load(&p, path), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "not a valid pprof profile"));
	assert_non_null(strstr(tf_error_last(), "/bin'"));
	free(path);

	tf_buf gz = TF_BUF_INIT;
	assert_int_equal(tf_gzip(&gz, "", 0, 6), 0);
	path = write_file(dir, "empty.gz", gz.ptr, gz.len);
	assert_int_equal(tf_profile_load(&p, path), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "empty once decompressed"));
	free(path);
	tf_buf_free(&gz);
	unit_rmtree(dir);
}

/* A gzip pprof file is kept as loaded, and given back only while the
 * profile is what was decoded: the report's copies of the runs. */
static void test_load_keeps_source(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *path;
	tf_profile *p, *q;
	tf_buf gz = TF_BUF_INIT, raw = TF_BUF_INIT;

	assert_int_equal(tf_folded_decode(&p, "main;work 5\nmain;idle 2\n", 24, "x"), 0);
	assert_int_equal(tf_pprof_encode(&gz, p, 1), 0);
	assert_int_equal(tf_pprof_encode(&raw, p, 0), 0);
	tf_profile_free(p);
	path = write_file(dir, "run.pb.gz", gz.ptr, gz.len);
	assert_int_equal(tf_profile_load(&q, path), 0);
	const tf_buf *src = tf_profile_source(q);
	assert_non_null(src);
	assert_int_equal(src->len, gz.len);
	assert_memory_equal(src->ptr, gz.ptr, gz.len);
	/* a value changed in place: no longer the file */
	q->values.v[0]++;
	assert_null(tf_profile_source(q));
	q->values.v[0]--;
	assert_non_null(tf_profile_source(q));
	/* a sample added */
	uint32_t loc = q->stack.v[0];
	int64_t v[2] = { 1, 1 };
	tf_profile_add_sample(q, &loc, 1, v, NULL, 0);
	assert_null(tf_profile_source(q));
	tf_profile_free(q);
	free(path);
	/* an uncompressed file has nothing to give back */
	path = write_file(dir, "run.pb", raw.ptr, raw.len);
	assert_int_equal(tf_profile_load(&q, path), 0);
	assert_null(tf_profile_source(q));
	tf_profile_free(q);
	free(path);
	tf_buf_free(&gz);
	tf_buf_free(&raw);
	unit_rmtree(dir);
}

/* Counts that would overflow when summed are refused, not summed (found
 * by fuzzing: totals past 2^63 were undefined behaviour). */
static void test_totals_bounded(void **state)
{
	(void)state;
	tf_profile *p;
	const char *ok = "a;b 4503599627370496\n";          /* 2^52 */
	const char *over = "a;b 4503599627370496\nc 1\n";
	const char *huge = "a;b 9223372036854775000\na;b 9223372036854775000\n";

	assert_int_equal(tf_folded_decode(&p, ok, strlen(ok), "t"), 0);
	assert_int_equal(tf_profile_total(p, 0), TF_PROFILE_TOTAL_MAX);
	tf_profile_free(p);
	assert_int_equal(tf_folded_decode(&p, over, strlen(over), "t"), TF_EINVAL);
	assert_string_equal(tf_error_last(), "t:2: the counts add up to more than 2^52");
	assert_int_equal(tf_folded_decode(&p, huge, strlen(huge), "t"), TF_EINVAL);
	assert_string_equal(tf_error_last(), "t:1: the counts add up to more than 2^52");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_load_sniffing),
		cmocka_unit_test(test_load_keeps_source),
		cmocka_unit_test(test_totals_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
