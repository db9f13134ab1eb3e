/*
 * test_attribute.c - the rules that name tests: frame presets (Go, gtest,
 * cmocka, Check, Criterion, Unity, clar, pytest) and custom patterns on
 * synthetic stacks, the marker line protocol, ctest's CTestTestfile
 * parsing, and --split parsing. Real suites are in tests/e2e/t0900.
 */
#include "unit.h"
#include "attribute/attributor.h"
#include "record/markers.h"

#include <stdio.h>

/* A stack from root to leaf, each frame "module!function" or "function". */
static uint32_t stack_of(tf_profile *p, const char *const *frames, size_t n, uint32_t *locs)
{
	for (size_t i = 0; i < n; i++) {
		const char *f = frames[i], *bang = strchr(f, '!');
		uint32_t mapping = TF_NO_MAPPING;
		if (bang) {
			char mod[256];
			snprintf(mod, sizeof(mod), "%.*s", (int)(bang - f), f);
			tf_mapping m = { 0 };
			m.filename = tf_profile_intern(p, mod);
			mapping = tf_profile_add_mapping(p, &m);
			f = bang + 1;
		}
		tf_line ln = { tf_profile_function(p, f, "", 0), 0, 0 };
		/* leaf first */
		locs[n - 1 - i] = tf_profile_add_location(p, mapping, 0, &ln, 1);
	}
	return (uint32_t)n;
}

static const char *match(const tf_attribute_opts *o, const char *const *frames, size_t n)
{
	static char out[256];
	tf_profile *p;
	tf_frame_rules *r;
	uint32_t locs[64];

	tf_profile_new(&p);
	assert_int_equal(tf_frame_rules_new(&r, p, o), 0);
	uint32_t nl = stack_of(p, frames, n, locs);
	tf_strid id = tf_frame_rules_match(r, locs, nl);
	snprintf(out, sizeof(out), "%s", id ? tf_profile_str(p, id) : "(none)");
	tf_frame_rules_free(r);
	tf_profile_free(p);
	return out;
}

#define MATCH(o, ...) ({ \
	static const char *const fr_[] = { __VA_ARGS__ }; \
	match((o), fr_, TF_ARRAY_SIZE(fr_)); })

static void test_presets(void **state)
{
	tf_attribute_opts o;
	(void)state;
	tf_attribute_opts_init(&o);

	/* Go: the callee of testing.tRunner; package path dropped */
	assert_string_equal(MATCH(&o, "runtime.goexit", "testing.tRunner",
				  "example.com/m/pkg.TestParse", "pkg.helper"), "TestParse");
	/* Go: testing's own closures are skipped */
	assert_string_equal(MATCH(&o, "testing.tRunner", "testing.runTests.func1", "x.y"),
			    "(none)");
	/* GoogleTest */
	assert_string_equal(MATCH(&o, "main", "testing::Test::Run()",
				  "ParserTest_EmptyInput_Test::TestBody()", "parse(char const*)"),
			    "ParserTest.EmptyInput");
	/* cmocka, by its runner or by its library */
	assert_string_equal(MATCH(&o, "main", "_cmocka_run_group_tests",
				  "cmocka_run_one_test_or_fixture", "test_vec_push", "vec_push"),
			    "test_vec_push");
	assert_string_equal(MATCH(&o, "main", "/usr/lib/libcmocka.so.0!cmocka_run_group_tests",
				  "/usr/lib/libcmocka.so.0!0x1234", "/src/t!test_parse", "/src/t!parse"),
			    "test_parse");
	/* Check: START_TEST(name) defines name_fn */
	assert_string_equal(MATCH(&o, "main", "srunner_run_tagged", "burn_one_fn", "burn"),
			    "burn_one");
	/* Criterion: Test(suite, name) defines suite_name_impl, run from its library */
	assert_string_equal(MATCH(&o, "/usr/lib/libcriterion.so.3!run_test_child",
				  "/t/c!misc_basics_impl", "/t/c!work"), "misc_basics");
	/* Unity: RUN_TEST calls UnityDefaultTestRun */
	assert_string_equal(MATCH(&o, "main", "UnityDefaultTestRun", "test_ring_wraps",
				  "ring_push"), "test_ring_wraps");
	/* clar: test_<suite>__<name> */
	assert_string_equal(MATCH(&o, "main", "clar_run_test", "test_core_buffer__append",
				  "git_buf_put"), "core_buffer::append");
	/* pytest through Python 3.12's perf map names */
	assert_string_equal(MATCH(&o, "_start", "py::main:/usr/lib/python3.12/runpy.py",
				  "py::test_parse_empty:/src/test_p.py", "py::parse:/src/p.py"),
			    "test_parse_empty");
	/* nothing framework-like */
	assert_string_equal(MATCH(&o, "main", "run", "work"), "(none)");
	/* the outermost test frame wins */
	assert_string_equal(MATCH(&o, "UnityDefaultTestRun", "test_outer", "test_a__b"),
			    "test_outer");
}

static void test_presets_limited_and_custom(void **state)
{
	tf_attribute_opts o;
	(void)state;
	tf_attribute_opts_init(&o);
	static const char *const only_gtest[] = { "gtest", NULL };
	o.frame_presets = only_gtest;
	assert_string_equal(MATCH(&o, "UnityDefaultTestRun", "test_x"), "(none)");

	tf_frame_pattern pats[] = { { "^bench_([a-z]+)_([0-9]+)$", "\\1 #\\2" },
				    { "^check_(.*)$", NULL } };
	o.frame_presets = NULL;
	o.patterns = pats;
	o.npatterns = 2;
	assert_string_equal(MATCH(&o, "main", "bench_sort_42", "qsort"), "sort #42");
	assert_string_equal(MATCH(&o, "main", "check_limits"), "limits");

	tf_frame_pattern bad[] = { { "([unclosed", NULL } };
	o.patterns = bad;
	o.npatterns = 1;
	tf_profile *p;
	tf_frame_rules *r = NULL;
	tf_profile_new(&p);
	assert_int_equal(tf_frame_rules_new(&r, p, &o), TF_EUSAGE);
	assert_null(r);
	assert_non_null(strstr(tf_error_last(), "([unclosed"));
	tf_profile_free(p);
}

static void test_marker_lines(void **state)
{
	tf_marker_line m;
	char l1[] = "begin parser: empty input @tid=42 @pid=7 @t=123456789";
	char l2[] = "end";
	char l3[] = "end  name with  spaces  ";
	char l4[] = "begin x @bogus=1";
	char l5[] = "beginning";
	char l6[] = "begin ";
	char l7[] = "begin only-pid @pid=99";
	(void)state;

	assert_true(tf_marker_parse(l1, &m));
	assert_true(m.begin);
	assert_string_equal(m.name, "parser: empty input");
	assert_int_equal(m.tid, 42);
	assert_int_equal(m.pid, 7);
	assert_int_equal(m.time, 123456789);
	assert_int_equal(m.scope, TF_MARKER_THREAD);

	assert_true(tf_marker_parse(l2, &m));
	assert_false(m.begin);
	assert_string_equal(m.name, "");
	assert_int_equal(m.scope, TF_MARKER_GLOBAL);

	assert_true(tf_marker_parse(l3, &m));
	assert_string_equal(m.name, "name with  spaces");

	assert_false(tf_marker_parse(l4, &m)); /* unknown field */
	assert_false(tf_marker_parse(l5, &m));
	assert_false(tf_marker_parse(l6, &m)); /* begin needs a name */

	assert_true(tf_marker_parse(l7, &m));
	assert_int_equal(m.scope, TF_MARKER_PROCESS);
	assert_int_equal(m.pid, 99);
}

static void test_ctest_names(void **state)
{
	char *dir = unit_tmpdir(), path[4300];
	FILE *f;
	(void)state;

	snprintf(path, sizeof(path), "%s/CTestTestfile.cmake", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# generated\n"
		   "add_test(plain \"/b/t_plain\")\n"
		   "add_test([=[with space]=] \"/b/t_args\" \"--case\" \"one\")\n"
		   "add_test(two \"/b/t_args\" \"--case\" \"two\")\n"
		   "subdirs(\"sub\")\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/sub", dir);
	assert_int_equal(tf_mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/sub/CTestTestfile.cmake", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "add_test(deep \"/b/sub/t_deep\" \"a \\\"quoted\\\" arg\")\n");
	fclose(f);

	tf_ctest *c = tf_ctest_load(dir);
	assert_non_null(c);
	static const char a1[] = "/b/t_plain";
	static const char a2[] = "/b/t_args\0--case\0two";
	static const char a3[] = "/b/t_args\0--case\0one";
	static const char a4[] = "/b/sub/t_deep\0a \"quoted\" arg";
	static const char a5[] = "t_plain";
	assert_string_equal(tf_ctest_lookup(c, a1, sizeof(a1), "/"), "plain");
	assert_string_equal(tf_ctest_lookup(c, a2, sizeof(a2), "/"), "two");
	assert_string_equal(tf_ctest_lookup(c, a3, sizeof(a3), "/"), "with space");
	assert_string_equal(tf_ctest_lookup(c, a4, sizeof(a4), "/"), "deep");
	assert_string_equal(tf_ctest_lookup(c, a5, sizeof(a5), "/b"), "plain");
	/* a shared program without its arguments cannot be told apart */
	static const char a6[] = "/b/t_args";
	assert_null(tf_ctest_lookup(c, a6, sizeof(a6), "/"));
	tf_ctest_free(c);
	assert_null(tf_ctest_load("/nonexistent-testflame-dir"));
	unit_rmtree(dir);
}

static void test_sources(void **state)
{
	unsigned v;
	(void)state;
	assert_int_equal(tf_attribute_parse_sources("markers,frames", &v), 0);
	assert_int_equal(v, TF_SOURCE_MARKERS | TF_SOURCE_FRAMES);
	assert_int_equal(tf_attribute_parse_sources("processes", &v), 0);
	assert_int_equal(v, TF_SOURCE_PROCESSES);
	assert_int_equal(tf_attribute_parse_sources("all", &v), 0);
	assert_int_equal(v, TF_SOURCE_ALL);
	assert_int_equal(tf_attribute_parse_sources("none", &v), 0);
	assert_true(v != 0 && !(v & TF_SOURCE_ALL));
	assert_int_equal(tf_attribute_parse_sources("frames,bogus", &v), TF_EUSAGE);
	assert_non_null(strstr(tf_error_last(), "'bogus'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_presets_limited_and_custom),
		cmocka_unit_test(test_marker_lines),
		cmocka_unit_test(test_ctest_names),
		cmocka_unit_test(test_sources),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
