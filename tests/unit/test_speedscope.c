/*
 * test_speedscope.c - the speedscope writer, read back with jansson: frame
 * table, root-first stacks, one profile per test, merged stacks, skipped
 * non-positive weights, escaping of hostile names; and the base library's
 * escaping helpers (UTF-8 repair, JSON strings, terminal-safe text).
 */
#include "unit.h"
#include "testflame/profile.h"

#include <jansson.h>

static uint32_t loc(tf_profile *p, const char *name, const char *file, int64_t line)
{
	tf_line ln = { tf_profile_function(p, name, file, line), line + 1, 0 };
	return tf_profile_add_location(p, TF_NO_MAPPING, 0, &ln, 1);
}

static void sample(tf_profile *p, const uint32_t *leaf_first, uint32_t n, int64_t v,
		   const char *test, int64_t tid)
{
	tf_label lab[2] = {
		{ tf_profile_intern(p, "tid"), 0, tid, 0 },
		{ tf_profile_intern(p, "test"), test ? tf_profile_intern(p, test) : 0, 0, 0 },
	};
	int64_t vals[2] = { v, v * 1000 };
	tf_profile_add_sample(p, leaf_first, n, vals, lab, test ? 2 : 1);
}

static json_t *write_and_parse(const tf_profile *p, size_t vi, const char *test)
{
	tf_buf b = TF_BUF_INIT;
	json_error_t err;
	json_t *j;

	assert_int_equal(tf_speedscope_write(&b, p, vi, test, "prof \"x\""), 0);
	assert_true(tf_utf8_valid(b.ptr, b.len));
	j = json_loadb(b.ptr, b.len, 0, &err);
	if (!j)
		fail_msg("invalid JSON: %s at %d: %s", err.text, err.position, b.ptr);
	tf_buf_free(&b);
	return j;
}

static const char *frame_name(json_t *doc, json_t *idx)
{
	json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
	return json_string_value(json_object_get(json_array_get(frames, json_integer_value(idx)), "name"));
}

static void test_profiles_per_test(void **state)
{
	(void)state;
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	uint32_t lmain = loc(p, "main", "m.c", 3), la = loc(p, "a", "a.c", 7), lb = loc(p, "b", "", 0);
	uint32_t s1[] = { la, lmain }, s2[] = { lb, lmain };
	sample(p, s1, 2, 5, "small", 1);
	sample(p, s1, 2, 2, "small", 2);   /* same stack, other thread: merged */
	sample(p, s2, 2, 20, "big", 1);
	sample(p, s2, 2, 0, "big", 3);     /* zero: skipped */
	sample(p, s1, 2, 4, NULL, 1);      /* no test label */

	json_t *doc = write_and_parse(p, 1, NULL);
	assert_string_equal(json_string_value(json_object_get(doc, "$schema")),
			    "https://www.speedscope.app/file-format-schema.json");
	assert_string_equal(json_string_value(json_object_get(doc, "name")), "prof \"x\"");
	json_t *profiles = json_object_get(doc, "profiles");
	assert_int_equal(json_array_size(profiles), 3);
	json_t *big = json_array_get(profiles, 0), *small = json_array_get(profiles, 1);
	assert_string_equal(json_string_value(json_object_get(big, "name")), "big");
	assert_string_equal(json_string_value(json_object_get(big, "type")), "sampled");
	assert_string_equal(json_string_value(json_object_get(big, "unit")), "nanoseconds");
	assert_int_equal(json_integer_value(json_object_get(big, "endValue")), 20000);
	assert_int_equal(json_array_size(json_object_get(big, "samples")), 1);
	json_t *stack = json_array_get(json_object_get(big, "samples"), 0);
	assert_string_equal(frame_name(doc, json_array_get(stack, 0)), "main"); /* root first */
	assert_string_equal(frame_name(doc, json_array_get(stack, 1)), "b");
	assert_string_equal(json_string_value(json_object_get(small, "name")), "small");
	assert_int_equal(json_array_size(json_object_get(small, "samples")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(small, "weights"), 0)), 7000);
	assert_string_equal(json_string_value(json_object_get(json_array_get(profiles, 2), "name")),
			    "(no test)");

	json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
	assert_int_equal(json_array_size(frames), 3);
	json_t *fa = json_array_get(frames, 1);
	assert_string_equal(json_string_value(json_object_get(fa, "file")), "a.c");
	assert_int_equal(json_integer_value(json_object_get(fa, "line")), 7);
	json_t *fb = json_array_get(frames, 2);
	assert_null(json_object_get(fb, "file"));
	assert_null(json_object_get(fb, "line"));
	json_decref(doc);

	doc = write_and_parse(p, 0, "small");
	profiles = json_object_get(doc, "profiles");
	assert_int_equal(json_array_size(profiles), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(profiles, 0), "unit")), "none");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(profiles, 0), "endValue")), 7);
	json_decref(doc);

	/* nothing selected: still one (empty) profile, still a valid file */
	doc = write_and_parse(p, 0, "absent");
	profiles = json_object_get(doc, "profiles");
	assert_int_equal(json_array_size(profiles), 1);
	assert_int_equal(json_array_size(json_object_get(json_array_get(profiles, 0), "samples")), 0);
	json_decref(doc);

	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_speedscope_write(&b, p, 2, NULL, "x"), TF_EINVAL);
	tf_buf_free(&b);
	tf_profile_free(p);
}

static void test_hostile_names(void **state)
{
	(void)state;
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	const char *evil = "q\"uote\\ \n\t\x01 \xff\xfe </script> \xc3\xa9";
	uint32_t l[] = { loc(p, evil, "dir/\"f\".c", 2) };
	tf_mapping m = { 0, 0, 0, tf_profile_intern(p, "/lib/\xffx.so"), 0, 0 };
	uint32_t addr = tf_profile_add_location(p, tf_profile_add_mapping(p, &m), 0xabc, NULL, 0);
	uint32_t s2[] = { addr, l[0] };
	sample(p, l, 1, 3, "t\"1\n", 1);
	sample(p, s2, 2, 1, "t\"1\n", 1);

	json_t *doc = write_and_parse(p, 0, NULL);
	json_t *frames = json_object_get(json_object_get(doc, "shared"), "frames");
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 0), "name")),
			    "q\"uote\\ \n\t\x01 \xef\xbf\xbd\xef\xbf\xbd </script> \xc3\xa9");
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 0), "file")),
			    "dir/\"f\".c");
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 1), "name")), "0xabc");
	assert_string_equal(json_string_value(json_object_get(json_array_get(frames, 1), "file")),
			    "/lib/\xef\xbf\xbdx.so");
	assert_string_equal(json_string_value(json_object_get(
				    json_array_get(json_object_get(doc, "profiles"), 0), "name")), "t\"1\n");
	json_decref(doc);
	tf_profile_free(p);
}

static void test_utf8(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		bool ok;
	} cases[] = {
		{ "plain", true }, { "\xc3\xa9", true }, { "\xe2\x82\xac", true },
		{ "\xf0\x9f\x94\xa5", true }, { "\xc3", false }, { "\xc0\xaf", false },
		{ "\xe0\x80\xaf", false }, { "\xed\xa0\x80", false }, { "\xf4\x90\x80\x80", false },
		{ "\xff", false }, { "\x80", false },
	};
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++)
		if (tf_utf8_valid(cases[i].s, strlen(cases[i].s)) != cases[i].ok)
			fail_msg("case %zu: expected %d", i, cases[i].ok);

	tf_buf b = TF_BUF_INIT;
	tf_buf_put_utf8(&b, "a\xffz\xc3\xa9\xc3", 7);
	assert_string_equal(b.ptr, "a\xef\xbf\xbdz\xc3\xa9\xef\xbf\xbd");
	tf_buf_clear(&b);
	tf_buf_put_json(&b, "q\"\\/\n\r\t\b\x1f\x7f\xe2\x82\xac\xfe");
	assert_string_equal(b.ptr, "\"q\\\"\\\\/\\n\\r\\t\\u0008\\u001f\x7f\xe2\x82\xac\\ufffd\"");
	tf_buf_clear(&b);
	tf_buf_put_json(&b, NULL);
	assert_string_equal(b.ptr, "\"\"");
	tf_buf_clear(&b);
	tf_buf_put_printable(&b, "ok \xc3\xa9\n\t\x1b[0m\x7f\xc2\x9b\xff");
	assert_string_equal(b.ptr, "ok \xc3\xa9\\n\\t\\x1b[0m\\x7f\\xc2\\x9b\\xff");
	tf_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profiles_per_test),
		cmocka_unit_test(test_hostile_names),
		cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
