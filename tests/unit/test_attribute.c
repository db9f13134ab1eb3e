/*
 * test_attribute.c - the rules that name tests: frame presets (Go, gtest,
 * cmocka, Check, Criterion, Unity, clar, pytest) and custom patterns on
 * synthetic stacks, the marker line protocol, ctest's CTestTestfile
 * parsing, the lists of Go, libtest, Catch2, doctest and Boost.Test
 * binaries, and --split parsing; a program holding its runner's tests,
 * attributed and compared. Real suites are in tests/e2e/t0900.
 */
#include "unit.h"
#include "attribute/attribute_int.h"
#include "record/record_int.h"
#include "testflame/compare.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

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

/* A stack of "name@file.py" Python frames and native "module!name" ones,
 * root first, as pyframes.c splices them (leaf first into `locs`). */
static uint32_t py_stack_of(tf_profile *p, const char *const *frames, size_t n, uint32_t *locs)
{
	for (size_t i = 0; i < n; i++) {
		const char *at = strchr(frames[i], '@');
		if (!at) {
			stack_of(p, &frames[i], 1, &locs[n - 1 - i]);
			continue;
		}
		char name[256];
		snprintf(name, sizeof(name), "%.*s", (int)(at - frames[i]), frames[i]);
		/* the qualified name is the system name of a Python function */
		uint32_t fn = tf_profile_add_function(p, tf_profile_intern(p, name),
						      tf_profile_intern(p, name),
						      tf_profile_intern(p, at + 1), 1);
		tf_line ln = { fn, 1, 0 };
		locs[n - 1 - i] = tf_profile_add_location(p, TF_NO_MAPPING, 0, &ln, 1);
	}
	return (uint32_t)n;
}

/* A stack of Python frames ("module.qualname@file", or native "name"), root
 * first: the test pytest's runner calls, by its node id, past the C frames
 * of the interpreter between. */
static const char *match_py(const char *const *frames, size_t n, const char *cwd)
{
	static char out[256];
	tf_attribute_opts o;
	tf_profile *p;
	tf_frame_rules *r;
	uint32_t locs[64];

	tf_attribute_opts_init(&o);
	tf_profile_new(&p);
	assert_int_equal(tf_frame_rules_new(&r, p, &o), 0);
	py_stack_of(p, frames, n, locs);
	tf_frame_rules_set_cwd(r, cwd);
	tf_strid id = tf_frame_rules_match(r, locs, (uint32_t)n);
	snprintf(out, sizeof(out), "%s", id ? tf_profile_str(p, id) : "(none)");
	tf_frame_rules_free(r);
	tf_profile_free(p);
	return out;
}

static void test_pytest_frames(void **state)
{
	(void)state;
	/* the function pytest_pyfunc_call calls, named as pytest does */
	const char *const plain[] = {
		"_pytest.main.pytest_runtestloop@/usr/lib/python3/dist-packages/_pytest/main.py",
		"pytest_pyfunc_call@/usr/lib/python3/dist-packages/_pytest/python.py",
		"_PyFunction_Vectorcall",
		"test_parse_empty@/src/proj/tests/test_p.py",
		"parse@/src/proj/p.py",
	};
	assert_string_equal(match_py(plain, TF_ARRAY_SIZE(plain), "/src/proj"),
			    "tests/test_p.py::test_parse_empty");
	/* a method: Class::method; no working directory: the path as it is */
	const char *const method[] = {
		"pytest_pyfunc_call@/usr/lib/python3/dist-packages/_pytest/python.py",
		"TestP.test_a@/nowhere/t/test_q.py",
	};
	assert_string_equal(match_py(method, TF_ARRAY_SIZE(method), NULL),
			    "/nowhere/t/test_q.py::TestP::test_a");
	/* unittest's TestCase under pytest: the node id too */
	const char *const ut[] = {
		"_pytest.runner.pytest_runtest_call@/usr/lib/python3/dist-packages/_pytest/runner.py",
		"TestCase.run@/usr/lib/python3.11/unittest/case.py",
		"TestCase._callTestMethod@/usr/lib/python3.11/unittest/case.py",
		"T.test_b@/src/proj/test_r.py",
	};
	assert_string_equal(match_py(ut, TF_ARRAY_SIZE(ut), "/src/proj"), "test_r.py::T::test_b");
	/* plain unittest: unittest's id, module.Class.method */
	const char *const plain_ut[] = {
		"unittest.main.TestProgram.runTests@/usr/lib/python3.11/unittest/main.py",
		"unittest.case.TestCase._callTestMethod@/usr/lib/python3.11/unittest/case.py",
		"test_r.T.test_b@/src/proj/test_r.py",
	};
	assert_string_equal(match_py(plain_ut, TF_ARRAY_SIZE(plain_ut), "/src/proj"),
			    "test_r.T.test_b");
	/* testflame's own wrappers the runner calls (its loader's startTest,
	 * its markers) are no test, and the test past them is its own */
	const char *const own[] = {
		"unittest.main.TestProgram.runTests@/usr/lib/python3.11/unittest/main.py",
		"unittest.suite.TestSuite.run@/usr/lib/python3.11/unittest/suite.py",
		"unittest.case.TestCase.run@/usr/lib/python3.11/unittest/case.py",
		"testflame_loader._patch_unittest.<locals>.startTest@/tmp/tf.1/py/testflame_loader.py",
		"testflame_markers.mark@/tmp/tf.1/py/testflame_markers.py",
	};
	assert_string_equal(match_py(own, TF_ARRAY_SIZE(own), "/src/proj"), "(none)");
	const char *const own_call[] = {
		"unittest.main.TestProgram.runTests@/usr/lib/python3.11/unittest/main.py",
		"testflame_loader._patch_unittest_case.<locals>.__call__@/tmp/tf.1/py/testflame_loader.py",
		"unittest.case.TestCase.run@/usr/lib/python3.11/unittest/case.py",
		"unittest.case.TestCase._callTestMethod@/usr/lib/python3.11/unittest/case.py",
		"test_r.T.test_b@/src/proj/test_r.py",
	};
	assert_string_equal(match_py(own_call, TF_ARRAY_SIZE(own_call), "/src/proj"),
			    "test_r.T.test_b");
	/* no runner frame: no test */
	const char *const none[] = { "main@/src/proj/m.py", "test_x@/src/proj/test_x.py" };
	assert_string_equal(match_py(none, TF_ARRAY_SIZE(none), "/src/proj"), "(none)");
}

/* How many frames of the stack (root first) are its thread's own, under
 * the rules of `o` (NULL: the defaults); `whole` and `mine` (64 bytes, or
 * NULL) get the test the rules name on the whole stack and on those. */
static size_t own(const tf_attribute_opts *o, const char *const *frames, size_t n, char *whole,
		  char *mine)
{
	tf_attribute_opts d;
	tf_profile *p;
	tf_frame_rules *r;
	uint32_t locs[64];

	tf_attribute_opts_init(&d);
	tf_profile_new(&p);
	assert_int_equal(tf_frame_rules_new(&r, p, o ? o : &d), 0);
	uint32_t nl = stack_of(p, frames, n, locs);
	size_t k = tf_frame_rules_own(r, locs, nl);
	tf_strid w = tf_frame_rules_match(r, locs, nl), m = tf_frame_rules_match(r, locs, k);
	if (whole)
		snprintf(whole, 64, "%s", w ? tf_profile_str(p, w) : "(none)");
	if (mine)
		snprintf(mine, 64, "%s", m ? tf_profile_str(p, m) : "(none)");
	tf_frame_rules_free(r);
	tf_profile_free(p);
	return k;
}

#define OWN(...) ({ \
	static const char *const fr_[] = { __VA_ARGS__ }; \
	own(NULL, fr_, TF_ARRAY_SIZE(fr_), NULL, NULL); })

/* A Go thread in the scheduler runs no goroutine: the frames below
 * mcall's are the goroutine that left it (Go 1.19 keeps the frame
 * pointer), a new thread's below mstart its creator's; they name no
 * test of a wait (the thread's own frames, leaf first, do not reach them) */
static void test_go_thread_own_frames(void **state)
{
	(void)state;
	/* a goroutine parked on a channel: its thread idles in the scheduler;
	 * the goroutine's test on the whole stack (its CPU), none on the
	 * thread's own part (its wait) */
	const char *const parked[] = { "testing.tRunner", "example.com/m/pkg.TestParse",
				       "runtime.chanrecv", "runtime.mcall", "runtime.park_m",
				       "runtime.findRunnable", "runtime.stopm", "runtime.futex" };
	char whole[64], mine[64];
	assert_int_equal(own(NULL, parked, TF_ARRAY_SIZE(parked), whole, mine), 4);
	assert_string_equal(whole, "TestParse");
	assert_string_equal(mine, "(none)");
	/* preempted by its stack check, then the scheduler */
	assert_int_equal(OWN("testing.tRunner", "example.com/m/pkg.TestParse", "runtime.morestack",
			     "runtime.newstack", "runtime.gopreempt_m", "runtime.schedule",
			     "runtime.stealWork", "runtime.usleep"), 2);
	/* sysmon's thread, started under a test's allocation */
	assert_int_equal(OWN("testing.tRunner", "example.com/m/pkg.TestParse", "runtime.mallocgc",
			     "runtime.mstart", "runtime.mstart0", "runtime.sysmon",
			     "runtime.usleep"), 3);
	/* a goroutine's own wait: a system call, a stop of the world on its
	 * behalf (systemstack), the stack growing: all its own */
	assert_int_equal(OWN("testing.tRunner", "example.com/m/pkg.TestParse", "runtime.mallocgc",
			     "runtime.systemstack", "runtime.stopTheWorldWithSema",
			     "runtime.futexsleep"), 6);
	assert_int_equal(OWN("testing.tRunner", "example.com/m/pkg.TestParse", "syscall.Syscall",
			     "runtime.entersyscall"), 4);
	assert_int_equal(OWN("testing.tRunner", "example.com/m/pkg.TestParse", "runtime.morestack",
			     "runtime.newstack", "runtime.copystack"), 5);
	/* without the Go preset nothing is cut */
	const char *const presets[] = { "gtest", NULL };
	tf_attribute_opts o;
	tf_attribute_opts_init(&o);
	o.frame_presets = presets;
	assert_int_equal(own(&o, parked, TF_ARRAY_SIZE(parked), NULL, NULL), TF_ARRAY_SIZE(parked));
}

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
	/* TYPED_TEST (GoogleTest 1.10 on): the class template Suite_Name_Test,
	 * its type argument kept for the instance; TYPED_TEST_P: Name in
	 * namespace gtest_suite_Suite_ */
	assert_string_equal(MATCH(&o, "testing::Test::Run()",
				  "yaml::Typed_Sized_Test<std::pair<int, char> >::TestBody()", "f"),
			    "Typed.Sized<std::pair<int, char> >");
	assert_string_equal(MATCH(&o, "testing::Test::Run()",
				  "(anonymous namespace)::gtest_suite_Typed_::Works<int>::TestBody()"),
			    "Typed.Works<int>");
	/* a TestBody of a class that is no test of GoogleTest's */
	assert_string_equal(MATCH(&o, "main", "Helper<int>::TestBody()", "f"), "(none)");
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
	char l8[] = "begin pkg.T.test_x @pid=5 @runner=unittest";
	char l9[] = "begin x @runner=two words";
	char l10[] = "begin x @runner=";
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
	assert_null(m.runner);

	/* the runner that wrote it: one word */
	assert_true(tf_marker_parse(l8, &m));
	assert_string_equal(m.name, "pkg.T.test_x");
	assert_string_equal(m.runner, "unittest");
	assert_int_equal(m.pid, 5);
	assert_true(tf_marker_parse(l9, &m)); /* "words" is no field: part of the name */
	assert_string_equal(m.name, "x @runner=two words");
	assert_null(m.runner);
	assert_false(tf_marker_parse(l10, &m));
}

/* ctest's log of a run in `dir` (Testing/Temporary/LastTest.log). */
static void put_log(const char *dir, const char *text)
{
	char path[4300];
	snprintf(path, sizeof(path), "%s/Testing/Temporary", dir);
	assert_int_equal(tf_mkdir_p(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/Testing/Temporary/LastTest.log", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* `text` as the CTestTestfile.cmake of `dir`. */
static void put_testfile(const char *dir, const char *text)
{
	char path[4300];
	snprintf(path, sizeof(path), "%s/CTestTestfile.cmake", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
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

	tf_ctest *c = tf_ctest_load(dir, 0);
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
	/* a shared program without its arguments cannot be told apart, and
	 * without ctest's log nothing says which ran first */
	static const char a6[] = "/b/t_args";
	assert_null(tf_ctest_lookup(c, a6, sizeof(a6), "/"));
	assert_null(tf_ctest_lookup(c, NULL, 0, "/"));
	assert_null(tf_ctest_next(c, "t_args"));
	tf_ctest_free(c);
	assert_null(tf_ctest_load("/nonexistent-testflame-dir", 0));

	/* with the log of the run, its order (the order tests ended) names
	 * processes whose arguments were gone before they could be read; its
	 * times and the Unity and GoogleTest lines of the output come along */
	put_log(dir, "Start testing: Nov 25 13:46 UTC\n"
		     "----------------------------------------------------------\n"
		     "1/3 Testing: two\n1/3 Test: two\n"
		     "Command: \"/b/t_args\" \"--case\" \"two\"\n"
		     "Directory: /b\n\"two\" start time: Nov 25 13:46 UTC\nOutput:\n"
		     "----------------------------------------------------------\n"
		     "t.c:12:test_alpha:PASS\nt.c:20:test_beta:FAIL: expected 1\n"
		     "<end of output>\nTest time =   0.03 sec\n"
		     "----------------------------------------------------------\n"
		     "Test Failed.\n\"two\" end time: Nov 25 13:46 UTC\n"
		     "2/3 Testing: with space\n2/3 Test: with space\n"
		     "Command: \"/b/t_args\" \"--case\" \"one\"\nOutput:\n"
		     "----------------------------------------------------------\n"
		     "[ RUN      ] Suite.Name_With_Underscores\n"
		     "[       OK ] Suite.Name_With_Underscores (12 ms)\n"
		     "[  FAILED  ] 1 test, listed below:\n"
		     "<end of output>\nTest time =   0.01 sec\n"
		     "----------------------------------------------------------\n"
		     "Test Passed.\n"
		     "3/3 Testing: plain\n3/3 Test: plain\nCommand: \"/b/t_plain\"\nOutput:\n"
		     "<end of output>\nTest time =   0.00 sec\nTest Passed.\n");
	c = tf_ctest_load(dir, 0);
	assert_non_null(c);
	assert_true(tf_ctest_ran(c, "t_args"));
	assert_false(tf_ctest_ran(c, "t_deep"));
	assert_string_equal(tf_ctest_next(c, "t_args"), "two");
	assert_string_equal(tf_ctest_next(c, "t_args"), "with space");
	assert_null(tf_ctest_next(c, "t_args"));
	const tf_runner_tests *log = tf_ctest_log(c);
	assert_int_equal(log->v.n, 6);
	assert_string_equal(log->v.v[0].name, "two");
	assert_int_equal(log->v.v[0].status, TF_TEST_FAILED);
	assert_true(fabs(log->v.v[0].duration_ns - 3e7) < 1);
	assert_true(fabs(log->v.v[0].quantum_ns - 1e7) < 1);
	assert_string_equal(log->v.v[1].name, "test_alpha");
	assert_string_equal(log->v.v[1].parent, "two");
	assert_string_equal(log->v.v[1].runner, "unity");
	assert_int_equal(log->v.v[2].status, TF_TEST_FAILED);
	assert_string_equal(log->v.v[4].name, "Suite.Name_With_Underscores");
	assert_string_equal(log->v.v[4].parent, "with space");
	assert_true(fabs(log->v.v[4].duration_ns - 12e6) < 1);
	assert_string_equal(log->v.v[5].name, "plain");
	assert_true(log->v.v[5].duration_ns == 0);
	tf_ctest_free(c);
	/* a log older than the run is not the run's */
	c = tf_ctest_load(dir, (uint64_t)time(NULL) * 1000000000ULL + 60000000000ULL);
	assert_int_equal(tf_ctest_log(c)->v.n, 0);
	tf_ctest_free(c);
	unit_rmtree(dir);
}

static tf_rec_event ev_of(tf_rec_type type, uint32_t pid, uint32_t tid, uint64_t time)
{
	tf_rec_event e;
	memset(&e, 0, sizeof(e));
	e.type = type;
	e.pid = pid;
	e.tid = tid;
	e.time = time;
	return e;
}

/* An attributor of process tests for a time event, into a new profile
 * (it keeps a pointer to its options). */
static tf_attributor *process_attributor(tf_profile **p)
{
	static tf_attribute_opts o;
	tf_attributor *a;
	tf_profile_new(p);
	tf_attribute_opts_init(&o);
	o.sources = TF_SOURCE_PROCESSES;
	assert_int_equal(tf_attributor_new(&a, *p, &o), 0);
	tf_attributor_set_time_event(a, true);
	return a;
}

/* A driver (`driver`, pid dpid, exec'd at 0) that forks pid tpid at t0,
 * which execs test program `name` at t0 + 10. */
static void driver_and_test(tf_attributor *a, const char *driver, uint32_t dpid,
			    uint32_t tpid, uint64_t t0, const char *name)
{
	tf_rec_event e = ev_of(TF_REC_COMM, dpid, dpid, 0);
	e.comm.comm = driver;
	e.comm.exec = true;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_FORK, tpid, tpid, t0);
	e.fork.ppid = dpid;
	e.fork.ptid = dpid;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_COMM, tpid, tpid, t0 + 10);
	e.comm.comm = name;
	e.comm.exec = true;
	tf_attributor_event(a, &e);
}

/* The exact cost the profile's comments give test `name`. */
static double count_of(tf_profile *p, const char *name)
{
	char key[128];
	const char *line = NULL;
	tf_test_meta m;
	snprintf(key, sizeof(key), "testflame.test.%s=", name);
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]);
		if (strstr(c, key))
			line = c;
	}
	assert_non_null(line);
	assert_int_equal(tf_test_meta_parse(&m, line), 0);
	double count = m.count;
	assert_int_equal(m.samples, 0);
	assert_string_equal(m.source, "process");
	tf_test_meta_clear(&m);
	return count;
}

/*
 * A test's exact cost from its threads' context switches: a test process
 * on and off a CPU twice (50 + 60 ns), with a second thread (30), under a
 * driver that execs it; a test that never got a sample is still a test
 * with its cost; the driver's work is outside the tests.
 */
/* Why a thread waited, from a stack root first whose last `nkernel`
 * frames are the kernel's. */
static const char *reason_of(const char *const *frames, size_t n, size_t nkernel)
{
	tf_profile *p;
	uint32_t locs[64];

	tf_profile_new(&p);
	uint32_t nl = stack_of(p, frames, n, locs);
	const char *r = tf_wait_name(tf_waits_reason(p, locs, nl, nkernel));
	tf_profile_free(p);
	return r;
}

#define REASON(nkernel, ...) ({ \
	static const char *const fr_[] = { __VA_ARGS__ }; \
	reason_of(fr_, TF_ARRAY_SIZE(fr_), (nkernel)); })

static void test_wait_reasons(void **state)
{
	(void)state;
	/* a read on a pipe: pipe_read in older kernels, anon_pipe_read (and
	 * fifo_pipe_read for a FIFO's) in newer ones (6.18) */
	assert_string_equal(REASON(6, "main", "libc.so.6!__read", "entry_SYSCALL_64_after_hwframe",
				   "do_syscall_64", "ksys_read", "vfs_read", "anon_pipe_read", "schedule"),
			    "pipe");
	assert_string_equal(REASON(5, "main", "libc.so.6!__read", "do_syscall_64", "ksys_read",
				   "vfs_read", "pipe_read", "schedule"),
			    "pipe");
	assert_string_equal(REASON(4, "main", "libc.so.6!__read", "do_syscall_64", "vfs_read",
				   "fifo_pipe_read", "schedule"),
			    "pipe");
	assert_string_equal(REASON(4, "main", "libc.so.6!__write", "do_syscall_64", "vfs_write",
				   "anon_pipe_write", "schedule"),
			    "pipe");
	/* the kernel's sleep; a futex that the user's frames call a lock */
	assert_string_equal(REASON(4, "main", "libc.so.6!__nanosleep", "do_syscall_64",
				   "hrtimer_nanosleep", "do_nanosleep", "schedule"),
			    "sleep");
	assert_string_equal(REASON(3, "worker", "libc.so.6!pthread_mutex_lock",
				   "libc.so.6!__lll_lock_wait", "do_syscall_64", "futex_wait",
				   "schedule"),
			    "lock");
	/* Go's runtime waiting for its other threads to stop for the GC, or
	 * to run a function each: a wait for its own threads (not counted);
	 * a goroutine's own futex (a note it sleeps on) is a futex */
	assert_string_equal(REASON(4, "testing.tRunner", "example.com/m.TestX", "runtime.mallocgc",
				   "runtime.systemstack", "runtime.stopTheWorldWithSema",
				   "runtime.notetsleep", "runtime.notetsleep_internal",
				   "runtime.futexsleep", "runtime.futex", "do_syscall_64",
				   "__x64_sys_futex", "futex_wait", "schedule"),
			    "join");
	assert_string_equal(REASON(3, "runtime.gcMarkTermination.func4", "runtime.forEachP",
				   "runtime.notetsleep", "runtime.futexsleep", "runtime.futex",
				   "do_syscall_64", "futex_wait", "schedule"),
			    "join");
	assert_string_equal(REASON(3, "testing.tRunner", "example.com/m.TestX",
				   "runtime.notetsleepg", "runtime.futexsleep", "runtime.futex",
				   "do_syscall_64", "futex_wait", "schedule"),
			    "futex");
	/* no kernel frames: the wrapper says what it can */
	assert_string_equal(REASON(0, "main", "libc.so.6!__nanosleep"), "sleep");
	assert_string_equal(REASON(0, "main", "libc.so.6!__read"), "other");
	/* the disk for a page the cache did not hold, as this 6.18 kernel
	 * gives it: a fault in the program's own code (a binary read from
	 * disk once, t0920's case_036 in _start), a read(), an exec's read
	 * of the binary; a page-in, not an io like an fsync's */
	assert_string_equal(REASON(10, "_start", "asm_exc_page_fault", "exc_page_fault",
				   "handle_mm_fault", "__handle_mm_fault", "do_fault", "__do_fault",
				   "filemap_fault", "folio_wait_bit_common", "io_schedule",
				   "schedule"),
			    "page-in");
	assert_string_equal(REASON(9, "main", "use_read", "libc.so.6!__read",
				   "entry_SYSCALL_64_after_hwframe", "do_syscall_64", "ksys_read",
				   "vfs_read", "filemap_read", "filemap_get_pages",
				   "folio_wait_bit_common", "io_schedule", "schedule"),
			    "page-in");
	assert_string_equal(REASON(8, "__x64_sys_execve", "do_execveat_common.isra.0",
				   "bprm_execve", "__kernel_read", "filemap_read",
				   "filemap_get_pages", "folio_wait_bit_common", "io_schedule",
				   "schedule"),
			    "page-in");
	assert_string_equal(REASON(8, "main", "wait_fsync", "libc.so.6!fsync", "do_syscall_64",
				   "__x64_sys_fsync", "do_fsync", "file_write_and_wait_range",
				   "filemap_fdatawait_range", "folio_wait_bit_common", "io_schedule",
				   "schedule"),
			    "io");
	/* a file's mapping lock (an rwsem) while an exec or the dynamic
	 * loader maps the program and its libraries: another process's
	 * mapping of the same file held it (the C library's, the loader's);
	 * a load, not the test's code. A test's own mmap waiting on the lock
	 * is the test's */
	assert_string_equal(REASON(11, "__x64_sys_execve", "do_execveat_common.isra.0",
				   "bprm_execve", "load_elf_binary", "elf_load", "vm_mmap_pgoff",
				   "do_mmap", "__mmap_region", "down_write",
				   "rwsem_down_write_slowpath", "schedule_preempt_disabled",
				   "schedule"),
			    "load");
	assert_string_equal(REASON(8, "_start", "ld-linux-x86-64.so.2!_dl_start",
				   "ld-linux-x86-64.so.2!_dl_relocate_object",
				   "ld-linux-x86-64.so.2!_dl_protect_relro",
				   "ld-linux-x86-64.so.2!mprotect", "do_syscall_64",
				   "__x64_sys_mprotect", "do_mprotect_pkey", "mprotect_fixup",
				   "vma_prepare", "down_write", "rwsem_down_write_slowpath", "schedule"),
			    "load");
	assert_string_equal(REASON(5, "main", "worker", "libc.so.6!mmap64", "do_syscall_64",
				   "vm_mmap_pgoff", "down_write_killable", "rwsem_down_write_slowpath",
				   "schedule"),
			    "other");
}

static void test_costs_from_switches(void **state)
{
	(void)state;
	tf_profile *p;
	tf_attributor *a = process_attributor(&p);
	driver_and_test(a, "make", 10, 11, 100, "test_a");
	tf_rec_event e = ev_of(TF_REC_SWITCH, 11, 11, 120);
	tf_attributor_event(a, &e);
	e.time = 170;
	e.cswitch.out = true;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_FORK, 11, 12, 180); /* a thread */
	e.fork.ppid = 11;
	e.fork.ptid = 11;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_SWITCH, 11, 12, 185);
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_EXIT, 11, 12, 215);
	e.fork.ppid = 11;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_SWITCH, 11, 11, 200);
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_EXIT, 11, 11, 260);
	e.fork.ppid = 10;
	tf_attributor_event(a, &e);
	/* the driver: off a CPU at 300, on it since it began */
	e = ev_of(TF_REC_SWITCH, 10, 10, 300);
	e.cswitch.out = true;
	tf_attributor_event(a, &e);
	assert_int_equal(tf_attributor_write_meta(a, 400), 2);
	assert_true(count_of(p, "test_a") == 140);
	tf_attributor_free(a);
	tf_profile_free(p);
}

/* Whether the profile's comments name a test `name`. */
static bool has_test(tf_profile *p, const char *name)
{
	char key[128];
	snprintf(key, sizeof(key), "testflame.test.%s=", name);
	for (size_t i = 0; i < p->comments.n; i++)
		if (strstr(tf_profile_str(p, p->comments.v[i]), key))
			return true;
	return false;
}

static void exec_mapped(tf_attributor *a, uint32_t pid, uint64_t t, const char *bin)
{
	tf_rec_event e = ev_of(TF_REC_MMAP, pid, pid, t);
	e.mmap.filename = bin;
	e.mmap.prot = 5; /* PROT_READ | PROT_EXEC */
	tf_attributor_event(a, &e);
}

/* `ctest -j 2` (pid 10), started in `dir`. */
static void ctest_j2(tf_attributor *a, const char *dir)
{
	static const char ctest_argv[] = "ctest\0-j\0" "2";
	tf_rec_event e = ev_of(TF_REC_COMM, 10, 10, 0);
	e.comm.comm = "ctest";
	e.comm.exec = true;
	tf_attributor_event(a, &e);
	exec_mapped(a, 10, 1, "/usr/bin/ctest");
	e = ev_of(TF_REC_CMDLINE, 10, 10, 2);
	e.cmdline.argv = ctest_argv;
	e.cmdline.len = sizeof(ctest_argv);
	e.cmdline.cwd = dir;
	tf_attributor_event(a, &e);
}

/* A process ctest (pid 10) forked at `t`, which execs /b/PROG. */
static void ctest_child(tf_attributor *a, uint32_t pid, uint64_t t, const char *prog)
{
	char bin[64];
	tf_rec_event e = ev_of(TF_REC_FORK, pid, pid, t);
	e.fork.ppid = 10;
	e.fork.ptid = 10;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_COMM, pid, pid, t + 10);
	e.comm.comm = prog;
	e.comm.exec = true;
	tf_attributor_event(a, &e);
	snprintf(bin, sizeof(bin), "/b/%s", prog);
	exec_mapped(a, pid, t + 11, bin); /* decided now */
}

/* Process `pid` of ctest (pid 10) ends at `t`. */
static void ctest_child_exit(tf_attributor *a, uint32_t pid, uint64_t t)
{
	tf_rec_event e = ev_of(TF_REC_EXIT, pid, pid, t);
	e.fork.ppid = 10;
	tf_attributor_event(a, &e);
}

/* A process ctest (pid 10, in `dir`) forked at `t`: `step N`, its
 * arguments read or not, on a CPU from t + 20 to `end` (its exact cost),
 * then gone. */
static void ctest_step(tf_attributor *a, uint32_t pid, uint64_t t, const char *argv, size_t len,
		       const char *dir, uint64_t end)
{
	tf_rec_event e;
	ctest_child(a, pid, t, "step");
	if (argv) {
		e = ev_of(TF_REC_CMDLINE, pid, pid, t + 12);
		e.cmdline.argv = argv;
		e.cmdline.len = (uint32_t)len;
		e.cmdline.cwd = dir;
		tf_attributor_event(a, &e);
	}
	e = ev_of(TF_REC_SWITCH, pid, pid, t + 20);
	tf_attributor_event(a, &e);
	ctest_child_exit(a, pid, end);
}

/*
 * ctest -j 2: step_1, whose arguments were gone before they were read,
 * starts first and ends last; step_2, read, ends first; step_3's were
 * read but do not say (ctest ran the program by a name of its own).
 * LastTest.log is in the order tests ended (step_2, step_3, step_1):
 * once step_2 took its own name, step_3 and step_1 are the log's others
 * in the order they ended, whatever the order they started in. By its
 * position at its start, step_1 took step_2's, and step_1 was not named
 * at all.
 */
static void test_ctest_parallel_unread(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	put_testfile(dir, "add_test(step_1 \"/b/step\" \"1\")\nadd_test(step_2 \"/b/step\" \"2\")\n"
			  "add_test(step_3 \"/b/step\" \"3\")\n");
	put_log(dir, "2/2 Testing: step_2\n2/2 Test: step_2\nCommand: \"/b/step\" \"2\"\n"
		     "Output:\n<end of output>\nTest time =   0.01 sec\nTest Passed.\n"
		     "3/3 Testing: step_3\n3/3 Test: step_3\nCommand: \"/b/step\" \"3\"\n"
		     "Output:\n<end of output>\nTest time =   0.01 sec\nTest Passed.\n"
		     "1/2 Testing: step_1\n1/2 Test: step_1\nCommand: \"/b/step\" \"1\"\n"
		     "Output:\n<end of output>\nTest time =   0.03 sec\nTest Passed.\n");
	static const char step2[] = "/b/step\0" "2", step3[] = "step\0" "3";
	tf_profile *p;
	tf_attributor *a = process_attributor(&p);
	ctest_j2(a, dir);
	ctest_step(a, 11, 100, NULL, 0, dir, 400);                  /* 280 */
	ctest_step(a, 12, 150, step2, sizeof(step2), dir, 250);     /* 80 */
	/* read, but not as the file has them (ctest found the program) */
	ctest_step(a, 13, 260, step3, sizeof(step3), dir, 300);     /* 20 */
	tf_rec_event e = ev_of(TF_REC_SWITCH, 10, 10, 500);
	e.cswitch.out = true;
	tf_attributor_event(a, &e);
	/* the three tests, and ctest's own work */
	assert_int_equal(tf_attributor_write_meta(a, 600), 4);
	assert_true(count_of(p, "step_1") == 280);
	assert_true(count_of(p, "step_2") == 80);
	assert_true(count_of(p, "step_3") == 20);
	tf_attributor_free(a);
	tf_profile_free(p);
	unit_rmtree(dir);
}

/*
 * `sh -c ./suite.sh`: the script's exec is named suite.sh before its
 * interpreter's mapping says it is a shell's (a driver). A thread that
 * left its CPU in between (an off-CPU stack, which asks its test) decided
 * suite.sh a test program, the test of every program it ran.
 */
static void test_exec_undecided_until_mapped(void **state)
{
	(void)state;
	tf_profile *p;
	tf_attributor *a = process_attributor(&p);
	int src;
	driver_and_test(a, "sh", 30, 31, 100, "suite.sh");
	exec_mapped(a, 30, 1, "/usr/bin/dash");
	tf_rec_event e = ev_of(TF_REC_OFFCPU, 31, 31, 112);
	tf_attributor_test(a, &e, NULL, 0, &src);
	exec_mapped(a, 31, 120, "/usr/bin/dash");
	e = ev_of(TF_REC_FORK, 32, 32, 200);
	e.fork.ppid = 31;
	e.fork.ptid = 31;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_COMM, 32, 32, 210);
	e.comm.comm = "alloc10x";
	e.comm.exec = true;
	tf_attributor_event(a, &e);
	exec_mapped(a, 32, 215, "/tmp/memsuite");
	e = ev_of(TF_REC_SAMPLE, 32, 32, 230);
	assert_string_equal(tf_profile_str(p, tf_attributor_test(a, &e, NULL, 0, &src)),
			    "alloc10x");
	tf_attributor_write_meta(a, 400);
	assert_true(has_test(p, "alloc10x"));
	assert_false(has_test(p, "suite.sh"));
	tf_attributor_free(a);
	tf_profile_free(p);
}

/*
 * The switch records of a CPU (events that follow a cgroup) also see a
 * thread leave the CPU after its exit: that last one adds nothing. Counted
 * from the thread's start, it doubled every process's time.
 */
static void test_costs_from_cpu_switches(void **state)
{
	(void)state;
	tf_profile *p;
	tf_attributor *a = process_attributor(&p);
	driver_and_test(a, "sh", 20, 21, 100, "test_b");
	tf_rec_event e = ev_of(TF_REC_SWITCH, 21, 21, 110); /* on */
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_SWITCH, 21, 21, 150); /* off: 40 */
	e.cswitch.out = true;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_SWITCH, 21, 21, 170); /* on again */
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_EXIT, 21, 21, 200); /* ends: 30 more */
	e.fork.ppid = 20;
	tf_attributor_event(a, &e);
	e = ev_of(TF_REC_SWITCH, 21, 21, 205); /* the CPU sees it go */
	e.cswitch.out = true;
	tf_attributor_event(a, &e);
	assert_int_equal(tf_attributor_write_meta(a, 400), 2);
	assert_true(count_of(p, "test_b") == 70);
	tf_attributor_free(a);
	tf_profile_free(p);
}

/* The waits a tf_waits gave, summed. */
typedef struct {
	double counted, apart, weight;
	int n;
} wait_sum;

static void sum_wait(void *ctx, const tf_wait_done *d)
{
	wait_sum *s = ctx;
	s->counted += d->counted;
	s->apart += d->apart;
	s->weight += d->weight;
	s->n++;
}

/* A record to the attributor and the waits, as build.c gives it. */
static void feed(tf_attributor *a, tf_waits *w, tf_rec_type type, uint32_t tid, uint64_t time,
		 bool out, bool preempt)
{
	tf_rec_event e = ev_of(type, tid, tid, time);
	e.cswitch.out = out;
	e.cswitch.preempt = preempt;
	if (type == TF_REC_EXIT)
		e.fork.ppid = 40;
	tf_waits_event(w, &e);
	tf_attributor_event(a, &e);
}

/* A switch-out sample, its stack taken just before the switch record;
 * rwsem: in a kernel rwsem's slow path, else a nanosleep. */
static void sampled_out_on(tf_attributor *a, tf_waits *w, uint32_t tid, uint64_t time, bool rwsem)
{
	int src;
	tf_rec_event e = ev_of(TF_REC_OFFCPU, tid, tid, time);
	tf_strid test = tf_attributor_test(a, &e, NULL, 0, &src);
	tf_attributor_switch_sampled(a, tid, time);
	tf_waits_out(w, &e, test, 0, rwsem ? TF_WAIT_OTHER : TF_WAIT_SLEEP, rwsem, NULL, 0);
}

static void sampled_out(tf_attributor *a, tf_waits *w, uint32_t tid, uint64_t time)
{
	sampled_out_on(a, w, tid, time, false);
}

/* Process test test_w (pid 41, on a CPU from 115) and its waits. */
static tf_attributor *waits_attributor(tf_profile **p, tf_waits **w, wait_sum *s)
{
	tf_attributor *a = process_attributor(p);
	driver_and_test(a, "sh", 40, 41, 100, "test_w");
	exec_mapped(a, 41, 111, "/tmp/test_w");
	assert_int_equal(tf_waits_new(w, a, sum_wait, s), 0);
	feed(a, *w, TF_REC_SWITCH, 41, 115, false, false);
	return a;
}

/*
 * A wait runs from the thread's switch-out record to its switch-in, and
 * its CPU time from a switch-in to the switch-out's sample, so that its
 * CPU and its waits add up to its wall time less its preemptions (the
 * machine's) and the recorder's work on the sampled switch-outs (the
 * stack unwound and copied, 7-9 us, between the sample and the record).
 * Waits counted from the sample came out 10-16 ms over the test's wall
 * time in 2,000 naps; the CPU time to the record moved with the share of
 * switch-outs the cap sampled.
 */
static void test_waits_from_switch_records(void **state)
{
	(void)state;
	tf_profile *p;
	tf_waits *w;
	wait_sum s = { 0 };
	tf_attributor *a = waits_attributor(&p, &w, &s);
	sampled_out(a, w, 41, 150);
	feed(a, w, TF_REC_SWITCH, 41, 157, true, false);
	feed(a, w, TF_REC_SWITCH, 41, 300, false, false); /* waited 143 */
	sampled_out(a, w, 41, 320);                        /* preempted: no wait */
	feed(a, w, TF_REC_SWITCH, 41, 322, true, true);
	feed(a, w, TF_REC_SWITCH, 41, 330, false, false);
	sampled_out(a, w, 41, 360);
	feed(a, w, TF_REC_SWITCH, 41, 366, true, false);
	feed(a, w, TF_REC_SWITCH, 41, 400, false, false); /* waited 34 */
	feed(a, w, TF_REC_EXIT, 41, 420, false, false);
	tf_waits_finish(w, 500);
	assert_int_equal(tf_attributor_write_meta(a, 500), 2);
	assert_int_equal(s.n, 2);
	assert_true(s.counted == 177);
	/* on a CPU 35 + 20 + 30 + 20: with the waits, the preemption's 8
	 * and the samples' 7 + 2 + 6, the test's whole time from 115 to 420 */
	assert_true(count_of(p, "test_w") == 105);
	assert_true(count_of(p, "test_w") + s.counted + 8 + 15 == 420 - 115);
	tf_waits_free(w);
	tf_attributor_free(a);
	tf_profile_free(p);
}

/*
 * Above the cap one switch-out in N is sampled, but every switch has its
 * records: the waits no sample saw are carried to the thread's next
 * sampled one (or its last, when it ends), so a test's waits are its time
 * off CPU exactly, not N times the waits that were sampled (a 30 ms fsync
 * was missed by up to 23 ms); the count of waits too.
 */
static void test_waits_carried_under_cap(void **state)
{
	(void)state;
	tf_profile *p;
	tf_waits *w;
	wait_sum s = { 0 };
	tf_attributor *a = waits_attributor(&p, &w, &s);
	int src;
	feed(a, w, TF_REC_SWITCH, 41, 120, true, false);  /* no sample: 30 */
	feed(a, w, TF_REC_SWITCH, 41, 150, false, false);
	feed(a, w, TF_REC_SWITCH, 41, 160, true, true);   /* preempted */
	feed(a, w, TF_REC_SWITCH, 41, 170, false, false);
	tf_rec_event e = ev_of(TF_REC_OFFCPU, 41, 41, 180);
	e.sample.period = 3;
	tf_waits_out(w, &e, tf_attributor_test(a, &e, NULL, 0, &src), 0, TF_WAIT_SLEEP, false,
		     NULL, 0);
	feed(a, w, TF_REC_SWITCH, 41, 181, true, false);
	feed(a, w, TF_REC_SWITCH, 41, 201, false, false); /* sampled: 20 */
	assert_int_equal(s.n, 1);
	assert_true(s.counted == 50 && s.weight == 2);
	feed(a, w, TF_REC_SWITCH, 41, 210, true, false);  /* no sample: 5 */
	feed(a, w, TF_REC_SWITCH, 41, 215, false, false);
	feed(a, w, TF_REC_EXIT, 41, 230, false, false);
	feed(a, w, TF_REC_SWITCH, 41, 231, true, false);  /* the CPU sees it go */
	tf_waits_finish(w, 500);
	assert_true(s.counted == 55 && s.apart == 0 && s.weight == 3);
	tf_waits_free(w);
	tf_attributor_free(a);
	tf_profile_free(p);
}

/* A switch-out sample of `tid` in `test`, and its switch: out, in at `back`. */
static void wait_in(tf_attributor *a, tf_waits *w, uint32_t tid, tf_strid test, uint64_t time,
		    uint64_t back)
{
	tf_rec_event e = ev_of(TF_REC_OFFCPU, tid, tid, time);
	e.sample.period = 3;
	tf_waits_out(w, &e, test, 0, TF_WAIT_LOCK, false, NULL, 0);
	feed(a, w, TF_REC_SWITCH, tid, time + 1, true, false);
	feed(a, w, TF_REC_SWITCH, tid, back, false, false);
}

/*
 * One thread runs one test after another (Catch2, doctest, GoogleTest:
 * tests named by their frames). A wait no sample saw is carried while the
 * thread's samples say it runs the same test; where they say it runs
 * another, it fell in the one, the other or one between, which nothing
 * tells: it counts for none, and the run says how long it was (spdlog's
 * 250 ms wait of dequeue-empty-wait, no sample of it, went to bad_queue's
 * next sampled wait: bad_queue "regressed" on a README-only branch). So
 * do the waits after the last sample of a thread that ran several tests
 * (dup_filter_test2, the last sampled, got 230 ms of its successors').
 */
static void test_waits_carried_within_a_test(void **state)
{
	(void)state;
	tf_profile *p;
	tf_waits *w;
	wait_sum s = { 0 };
	tf_attributor *a = waits_attributor(&p, &w, &s);
	tf_strid ta = tf_profile_intern(p, "nowait"), tb = tf_profile_intern(p, "bad_queue");
	tf_strid outside = tf_attributor_fallback(a);
	tf_rec_event e = ev_of(TF_REC_SAMPLE, 41, 41, 0);
	uint64_t n;

	wait_in(a, w, 41, ta, 150, 160);                   /* A: 9 */
	e.time = 170;
	tf_waits_running(w, &e, ta);
	feed(a, w, TF_REC_SWITCH, 41, 180, true, false);   /* no sample: 250 */
	feed(a, w, TF_REC_SWITCH, 41, 430, false, false);
	e.time = 440;
	tf_waits_running(w, &e, outside);                  /* the runner's: says nothing */
	wait_in(a, w, 41, tb, 500, 510);                   /* B: 9, not 259 */
	assert_int_equal(s.n, 2);
	assert_true(s.counted == 18);
	assert_true(tf_waits_unplaced(w, &n) == 250 && n == 1);
	feed(a, w, TF_REC_SWITCH, 41, 520, true, false);   /* no sample: 10, B's */
	feed(a, w, TF_REC_SWITCH, 41, 530, false, false);
	e.time = 535;
	tf_waits_running(w, &e, tb);
	wait_in(a, w, 41, tb, 540, 550);                   /* B: 9 + 10 */
	assert_true(s.counted == 37);
	feed(a, w, TF_REC_SWITCH, 41, 560, true, false);   /* no sample: 5, ... */
	feed(a, w, TF_REC_SWITCH, 41, 565, false, false);
	e.time = 570;
	tf_waits_running(w, &e, ta);                       /* ... then A's sample */
	assert_true(tf_waits_unplaced(w, &n) == 255 && n == 2);
	wait_in(a, w, 41, ta, 575, 578);                   /* A: 2 */
	feed(a, w, TF_REC_SWITCH, 41, 580, true, false);   /* no sample: 10, and */
	feed(a, w, TF_REC_SWITCH, 41, 590, false, false);  /* no sample after it */
	feed(a, w, TF_REC_EXIT, 41, 600, false, false);    /* (A's? the next test's?) */
	tf_waits_finish(w, 700);
	assert_true(s.counted == 39);
	assert_true(tf_waits_unplaced(w, &n) == 265 && n == 3);
	tf_waits_free(w);
	tf_attributor_free(a);
	tf_profile_free(p);
}

/*
 * testflame reads a new process's arguments through /proc, holding the
 * process's mmap lock: where it is preempted with it held, the dynamic
 * loader's mmap waits on the lock (an rwsem) until it runs again. Such a
 * wait, one that starts while testflame reads, is testflame's and counts
 * for no test (a test that only burns CPU was "regressed by waiting" on
 * 2.6 ms of them); a wait on anything else then, or on the lock at
 * another time, is the test's.
 */
static void test_waits_on_recorders_read(void **state)
{
	(void)state;
	tf_profile *p;
	tf_waits *w;
	wait_sum s = { 0 };
	uint64_t n;
	tf_attributor *a = waits_attributor(&p, &w, &s);
	tf_rec_event e = ev_of(TF_REC_PEEK, 41, 41, 150);
	e.peek.end = 300;
	tf_waits_event(w, &e);
	sampled_out_on(a, w, 41, 160, true); /* the loader's mmap, behind the read */
	feed(a, w, TF_REC_SWITCH, 41, 161, true, false);
	feed(a, w, TF_REC_SWITCH, 41, 400, false, false);
	assert_int_equal(s.n, 0);
	e = ev_of(TF_REC_PEEK, 41, 41, 500);
	e.peek.end = 600;
	tf_waits_event(w, &e);
	sampled_out_on(a, w, 41, 510, false); /* a sleep while testflame reads */
	feed(a, w, TF_REC_SWITCH, 41, 511, true, false);
	feed(a, w, TF_REC_SWITCH, 41, 560, false, false);
	sampled_out_on(a, w, 41, 700, true); /* the lock, after the read */
	feed(a, w, TF_REC_SWITCH, 41, 701, true, false);
	feed(a, w, TF_REC_SWITCH, 41, 750, false, false);
	feed(a, w, TF_REC_EXIT, 41, 800, false, false);
	tf_waits_finish(w, 900);
	assert_int_equal(s.n, 2);
	assert_true(s.counted == 98 && s.apart == 0);
	assert_true(tf_waits_peeked(w, &n) == 239 && n == 1);
	tf_waits_free(w);
	tf_attributor_free(a);
	tf_profile_free(p);
}

/* What the runners write, as they write it. */
static void test_runner_reports(void **state)
{
	tf_runner_tests t = { 0 };
	(void)state;

	/* GoogleTest's XML: Suite.Name, parameterised and typed names kept as
	 * GoogleTest prints them, entities decoded, a failure and a skip */
	static const char gtest[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites tests=\"4\" name=\"AllTests\">\n"
		"  <testsuite name=\"ParserTest\" tests=\"2\">\n"
		"    <testcase name=\"CVE_2017_5950\" status=\"run\" result=\"completed\" "
		"time=\"0.004\" timestamp=\"2026-11-25T13:46:20.123\" classname=\"ParserTest\" />\n"
		"    <testcase name=\"Fails&amp;&lt;x&gt;\" status=\"run\" result=\"completed\" time=\"0\" "
		"classname=\"ParserTest\">\n      <failure message=\"boom\"><![CDATA[a <b>]]></failure>\n"
		"    </testcase>\n  </testsuite>\n"
		"  <!-- a comment <testcase name=\"no\"/> -->\n"
		"  <testsuite name=\"Inst/ParamTest\">\n"
		"    <testcase name=\"Works/0\" value_param=\"1\" status=\"run\" result=\"completed\" "
		"time=\"0.001\" classname=\"Inst/ParamTest\" />\n"
		"    <testcase name=\"Off\" status=\"notrun\" result=\"suppressed\" time=\"0\" "
		"classname=\"TypedTest/0\" type_param=\"int\" />\n"
		"  </testsuite>\n</testsuites>\n";
	assert_int_equal(tf_runner_read_text(&t, gtest, sizeof(gtest) - 1, "g.xml", NULL), 0);
	assert_int_equal(t.v.n, 4);
	assert_string_equal(t.v.v[0].name, "ParserTest.CVE_2017_5950");
	assert_string_equal(t.v.v[0].runner, "gtest");
	assert_true(fabs(t.v.v[0].duration_ns - 4e6) < 1);
	assert_true(fabs(t.v.v[0].quantum_ns - 1e6) < 1);
	assert_true(t.v.v[0].start_realtime_ns > 0);
	assert_string_equal(t.v.v[1].name, "ParserTest.Fails&<x>");
	assert_int_equal(t.v.v[1].status, TF_TEST_FAILED);
	assert_string_equal(t.v.v[2].name, "Inst/ParamTest.Works/0");
	assert_string_equal(t.v.v[3].name, "TypedTest/0.Off");
	assert_string_equal(t.v.v[3].type_param, "int");
	assert_int_equal(t.v.v[3].status, TF_TEST_SKIPPED);
	tf_runner_tests_free(&t);

	/* pytest's and ctest's JUnit; a truncated file keeps what it read */
	static const char junit[] =
		"<testsuites><testsuite name=\"pytest\"><testcase classname=\"tests.test_a\" "
		"name=\"test_x[1-2]\" time=\"0.123\"><skipped/></testcase>"
		"<testcase classname=\"t_plain\" name=\"t_plain\" time=\"1.5\"/>"
		"<testcase classname=\"c\" name=\"cut\" time=\"1";
	assert_int_equal(tf_runner_read_text(&t, junit, sizeof(junit) - 1, "j.xml", NULL),
			 TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "j.xml:1: malformed XML"));
	assert_int_equal(t.v.n, 2);
	assert_string_equal(t.v.v[0].name, "tests.test_a.test_x[1-2]");
	assert_string_equal(t.v.v[0].runner, "junit");
	assert_int_equal(t.v.v[0].status, TF_TEST_SKIPPED);
	assert_string_equal(t.v.v[1].name, "t_plain");
	tf_runner_tests_free(&t);

	/* go test -json: subtests, Elapsed at 10 ms */
	static const char go[] =
		"{\"Time\":\"2026-11-25T13:46:20Z\",\"Action\":\"run\",\"Package\":\"x\",\"Test\":\"TestA\"}\n"
		"{\"Action\":\"output\",\"Test\":\"TestA\",\"Output\":\"ok\\n\"}\n"
		"{\"Action\":\"pass\",\"Package\":\"x\",\"Test\":\"TestA/sub_\\u0031\",\"Elapsed\":0.02}\n"
		"{\"Action\":\"fail\",\"Package\":\"x\",\"Test\":\"TestA\",\"Elapsed\":0.03}\n"
		"{\"Action\":\"pass\",\"Package\":\"x\",\"Elapsed\":0.05}\n";
	assert_int_equal(tf_runner_read_text(&t, go, sizeof(go) - 1, "go.json", NULL), 0);
	assert_int_equal(t.v.n, 2);
	assert_string_equal(t.v.v[0].name, "TestA/sub_1");
	assert_true(fabs(t.v.v[0].duration_ns - 2e7) < 1);
	assert_int_equal(t.v.v[1].status, TF_TEST_FAILED);
	assert_true(t.v.v[1].start_realtime_ns == 1795614380000000000ULL);
	tf_runner_tests_free(&t);

	/* when a test began: zones hh:mm and hhmm, nanoseconds; a zone out of
	 * the day, an exponent, a year past 2286 are no time (the fuzzer's
	 * "+1855618" overflowed an int) */
	static const char go_times[] =
		"{\"Time\":\"2026-11-25T15:46:20.123456789+02:00\",\"Action\":\"run\",\"Test\":\"A\"}\n"
		"{\"Time\":\"2026-11-25T12:46:20.5-0100\",\"Action\":\"run\",\"Test\":\"B\"}\n"
		"{\"Time\":\"2026-11-25T13:46:20+1855618\",\"Action\":\"run\",\"Test\":\"C\"}\n"
		"{\"Time\":\"2026-11-25T13:46:20.5e99Z\",\"Action\":\"run\",\"Test\":\"D\"}\n"
		"{\"Time\":\"9999-11-25T13:46:20Z\",\"Action\":\"run\",\"Test\":\"E\"}\n"
		"{\"Action\":\"pass\",\"Test\":\"A\"}\n{\"Action\":\"pass\",\"Test\":\"B\"}\n"
		"{\"Action\":\"pass\",\"Test\":\"C\"}\n{\"Action\":\"pass\",\"Test\":\"D\"}\n"
		"{\"Action\":\"pass\",\"Test\":\"E\"}\n";
	assert_int_equal(tf_runner_read_text(&t, go_times, sizeof(go_times) - 1, "go.json", NULL), 0);
	assert_int_equal(t.v.n, 5);
	assert_true(t.v.v[0].start_realtime_ns == 1795614380123456789ULL);
	assert_true(t.v.v[1].start_realtime_ns == 1795614380500000000ULL);
	assert_true(t.v.v[2].start_realtime_ns == 0);
	assert_true(t.v.v[3].start_realtime_ns == 0);
	assert_true(t.v.v[4].start_realtime_ns == 0);
	tf_runner_tests_free(&t);

	/* TAP */
	static const char tap[] = "TAP version 13\n1..3\nok 1 - parses empty\n"
				  "not ok 2 - parses bad # TODO later\nnot ok 3 broken\n";
	assert_int_equal(tf_runner_read_text(&t, tap, sizeof(tap) - 1, "t.tap", "prog"), 0);
	assert_int_equal(t.v.n, 3);
	assert_string_equal(t.v.v[0].name, "parses empty");
	assert_string_equal(t.v.v[0].parent, "prog");
	assert_int_equal(t.v.v[1].status, TF_TEST_SKIPPED);
	assert_string_equal(t.v.v[2].name, "broken");
	assert_int_equal(t.v.v[2].status, TF_TEST_FAILED);
	tf_runner_tests_free(&t);
	/* a directive in place of the description (Test::More's skip,
	 * cmocka's) names no test; it was read as a test "# skip ..." */
	static const char tap_skip[] = "1..3\nok 1 - a\nok 2 # skip no network\n"
				       "not ok 3 # SKIP test_skip\n";
	assert_int_equal(tf_runner_read_text(&t, tap_skip, sizeof(tap_skip) - 1, "t.tap", NULL), 0);
	assert_int_equal(t.v.n, 1);
	assert_string_equal(t.v.v[0].name, "a");
	tf_runner_tests_free(&t);

	/* ctest's log: a block without a name is none of the tests (its
	 * output lines had an empty parent), a second command line does not
	 * replace (and leak) the first (both found by the fuzzer) */
	static const char ctlog[] =
		"1/2 Testing: \n1/2 Test: \nCommand: \"/b/x\"\nOutput:\n"
		"t.c:1:test_orphan:PASS\n<end of output>\nTest time =   0.01 sec\n"
		"2/2 Testing: two\nCommand: \"/b/first\"\nCommand: \"/b/second\" \"-v\"\n"
		"Output:\nt.c:2:test_in:PASS\n<end of output>\nTest time =   0.02 sec\n";
	assert_int_equal(tf_runner_read_text(&t, ctlog, sizeof(ctlog) - 1, "LastTest.log", NULL), 0);
	assert_int_equal(t.v.n, 2);
	assert_string_equal(t.v.v[0].name, "two");
	assert_int_equal(t.v.v[0].argv_len, sizeof("/b/first"));
	assert_string_equal(t.v.v[0].argv, "/b/first");
	assert_string_equal(t.v.v[1].name, "test_in");
	assert_string_equal(t.v.v[1].parent, "two");
	tf_runner_tests_free(&t);

	/* anything else is named as what it is not */
	static const char junk[] = "hello\n";
	assert_int_equal(tf_runner_read_text(&t, junk, sizeof(junk) - 1, "x.txt", NULL), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "'x.txt' is not a test report"));
	tf_runner_tests_free(&t);
}

/* The numbers of the metadata line are written without printf: they
 * read as printf's %.0f and %lld would write them, edges included. */
static void test_test_meta_numbers(void **state)
{
	static const double walls[] = { 0, 1, 9, 10, 1500, 123456789012, 0x1p53 - 1, 0x1p53,
					1e300, 2.5, 3.5, 0.49, -0.0, -7, -2.5 };
	static const int64_t values[] = { 0, -1, 42, INT64_MAX, INT64_MIN };
	(void)state;

	for (size_t i = 0; i < TF_ARRAY_SIZE(walls); i++) {
		for (size_t k = 0; k < TF_ARRAY_SIZE(values); k++) {
			tf_test_meta m;
			tf_buf b = TF_BUF_INIT;
			char *want;
			tf_test_meta_init(&m);
			m.samples = UINT64_MAX - k;
			m.value = values[k];
			m.wall_ns = walls[i];
			m.count = walls[TF_ARRAY_SIZE(walls) - 1 - i];
			m.source = "process";
			m.has_exit = true;
			m.exit_status = (int)k - 2;
			tf_test_meta_format(&b, &m);
			want = tf_xasprintf("samples=%llu value=%lld wall_ns=%.0f source=process "
					    "count=%.0f exit=%d",
					    (unsigned long long)m.samples, (long long)m.value,
					    m.wall_ns, m.count, m.exit_status);
			assert_string_equal(b.ptr, want);
			free(want);
			tf_buf_free(&b);
		}
	}
}

/* The per-test metadata line: one writer, one reader, both ways. */
static void test_test_meta(void **state)
{
	tf_test_meta m, back;
	tf_buf b = TF_BUF_INIT;
	size_t run;
	(void)state;

	tf_test_meta_init(&m);
	m.name = "a b=samples=c";
	m.samples = 3;
	m.value = 30303030;
	m.wall_ns = 1500;
	m.count = 1234567;
	m.runner_ns = 1e6;
	m.runner_q_ns = 1e6;
	m.runner = "gtest";
	m.source = "frames";
	m.parent = "yaml-cpp::test with = and %";
	m.nested = 7;
	m.status = TF_TEST_FAILED;
	m.allocs = 212;
	m.alloc_bytes = 28836;
	m.frees = 77;
	m.heap_peak = 21131;
	m.leaked = 15681;
	m.rss_peak = 2633728;
	m.alloc_samples = 23;
	tf_buf_puts(&b, "testflame.test.a b=samples=c=");
	tf_test_meta_format(&b, &m);
	assert_int_equal(tf_test_meta_parse(&back, b.ptr), 0);
	assert_string_equal(back.name, "a b=samples=c");
	assert_int_equal(back.samples, 3);
	assert_int_equal(back.value, 30303030);
	assert_true(back.count == 1234567);
	assert_true(isnan(back.cpu_ns));
	assert_true(back.runner_ns == 1e6);
	assert_string_equal(back.runner, "gtest");
	assert_string_equal(back.parent, "yaml-cpp::test with = and %");
	assert_int_equal(back.nested, 7);
	assert_int_equal(back.status, TF_TEST_FAILED);
	assert_true(back.allocs == 212 && back.alloc_bytes == 28836 && back.frees == 77);
	assert_true(back.heap_peak == 21131 && back.leaked == 15681 && back.rss_peak == 2633728);
	assert_true(back.alloc_samples == 23);
	tf_test_meta_clear(&back);
	tf_buf_free(&b);
	/* a run that measured no memory says nothing of it */
	tf_test_meta_init(&m);
	m.name = "t";
	tf_test_meta_format(&b, &m);
	assert_null(strstr(b.ptr, "alloc"));
	tf_buf_free(&b);

	/* older run files: units, fewer fields */
	assert_int_equal(tf_test_meta_parse(&back, "testflame.test.t=samples=2 value=9 wall=1.5ms "
					     "cpu=2us future=x"), 0);
	assert_true(back.wall_ns == 1.5e6);
	assert_true(back.cpu_ns == 2000);
	tf_test_meta_clear(&back);
	/* run 2 of a joined file is not run 1's */
	assert_int_equal(tf_test_meta_parse(&back, "testflame.run2.test.t=samples=1 value=1"),
			 TF_ENOTFOUND);
	assert_int_equal(tf_test_meta_parse_run(&back, &run,
						"testflame.run2.test.t=samples=1 value=1"), 0);
	assert_int_equal(run, 1);
	tf_test_meta_clear(&back);
	assert_int_equal(tf_test_meta_parse(&back, "testflame.test.t=value=1"), TF_EINVAL);
	assert_int_equal(tf_test_meta_parse(&back, "testflame.test.t=samples=x value=1"), TF_EINVAL);
	assert_int_equal(tf_test_meta_parse(&back, "testflame.commit=abc"), TF_ENOTFOUND);
	/* numbers beyond any run's are none: 1e30 samples made a uint64 of
	 * a double out of its range (the fuzzer), show an int64 of a wall */
	assert_int_equal(tf_test_meta_parse(&back, "testflame.test.t=samples=1e30 value=1"),
			 TF_EINVAL);
	assert_int_equal(tf_test_meta_parse(&back, "testflame.test.t=samples=1e18 value=1 "
					     "wall_ns=2e18 cpu=1e10s count=5e17"), 0);
	assert_true(back.samples == 1000000000000000000ULL);
	assert_true(isnan(back.wall_ns) && isnan(back.cpu_ns) && back.count == 5e17);
	tf_test_meta_clear(&back);
}

/* Each test's memory: counts summed, a live heap of the blocks it made,
 * its peak, and what it still held at its end (its marker's end, its
 * process's exit); a block freed after its test ended stays its leak. */
static void test_memory_accounting(void **state)
{
	(void)state;
	tf_memacc *m = tf_memacc_new();
	uint32_t sample;
	uint64_t bytes;

	tf_memacc_count(m, 1, 10, 1000, 4);
	tf_memacc_count(m, 1, 5, 500, 5);
	tf_memacc_alloc(m, 100, 0x1000, 1, 4096, 0);
	tf_memacc_alloc(m, 100, 0x2000, 1, 8192, 1);
	assert_true(tf_memacc_release(m, 100, 0x1000, &sample, &bytes));
	assert_int_equal(sample, 0);
	assert_int_equal(bytes, 4096);
	/* not a sampled block: nothing to lower */
	assert_false(tf_memacc_release(m, 100, 0x9000, &sample, &bytes));
	tf_memacc_alloc(m, 100, 0x3000, 1, 16384, 2);
	/* test 2 in another process, ended by its marker with a block held */
	tf_memacc_alloc(m, 200, 0x1000, 2, 1000, 3);
	tf_memacc_test_end(m, 2);
	/* freed after its test ended: still its leak, and still in use in
	 * the profile (what it left behind) */
	assert_false(tf_memacc_release(m, 200, 0x1000, &sample, &bytes));
	tf_memacc_rss(m, 1, 3000);
	tf_memacc_rss(m, 1, 2000);
	/* process 100 exits with 0x2000 and 0x3000 live */
	tf_memacc_exit(m, 100);

	const tf_mem_test *t1 = tf_memacc_test(m, 1), *t2 = tf_memacc_test(m, 2);
	assert_non_null(t1);
	assert_int_equal(t1->allocs, 15);
	assert_int_equal(t1->bytes, 1500);
	assert_int_equal(t1->frees, 9);
	assert_int_equal(t1->peak, 8192 + 16384);
	assert_int_equal(t1->leaked, 8192 + 16384);
	assert_int_equal(t1->samples, 3);
	assert_int_equal(t1->rss_kb, 3000);
	assert_int_equal(t2->leaked, 1000);
	assert_null(tf_memacc_test(m, 3));

	tf_test_meta meta;
	tf_test_meta_init(&meta);
	tf_memacc_meta(m, 1, &meta);
	assert_true(meta.allocs == 15 && meta.alloc_bytes == 1500 && meta.rss_peak == 3000 * 1024);
	tf_memacc_meta(m, 3, &meta);
	tf_memacc_free(m);
	tf_memacc_free(NULL);
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

/* The default suite name: what the command runs, not how. */
static void check_suite(const char *want, const char *const *argv)
{
	char *got = tf_attribute_suite_name(argv);
	assert_string_equal(got, want);
	free(got);
}

static void test_suite_name(void **state)
{
	(void)state;
	check_suite("make check", (const char *const[]){ "make", "-s", "check", NULL });
	check_suite("make check", (const char *const[]){ "make", "-j4", "check", NULL });
	check_suite("make check", (const char *const[]){ "make", "-j", "4", "V=1", "check", NULL });
	check_suite("make examples check",
		    (const char *const[]){ "make", "-s", "-C", "/home/u/src/examples", "check", NULL });
	check_suite("run-tests unit",
		    (const char *const[]){ "/bin/sh", "-c", "CFLAGS=-O2 ./run-tests --fast 'unit'", NULL });
	check_suite("pytest tests/", (const char *const[]){ "env", "PYTHONHASHSEED=0", "pytest",
							    "-x", "-q", "tests/", NULL });
	check_suite("ctest", (const char *const[]){ "ctest", "--output-on-failure", "-j", "2", NULL });
	check_suite("go test ./...", (const char *const[]){ "go", "test", "-count=1", "./...", NULL });
	check_suite("split7030", (const char *const[]){ "/x/y/split7030", "1", NULL });
	check_suite("sh suite.sh", (const char *const[]){ "sh", "suite.sh", NULL });
	check_suite("tests", (const char *const[]){ NULL });
	/* at most four words after the program, a name of at most 80 bytes */
	check_suite("prog a b c d", (const char *const[]){ "prog", "a", "b", "c", "d", "e", NULL });
}

static void go_list(tf_go_tests *t)
{
	static const char *const names[] = { "TestA", "TestAB", "TestB", "ExampleA", "FuzzC" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(names); i++)
		tf_vec_push(t, tf_xstrdup(names[i]));
}

static char *go_joined(const tf_go_tests *t)
{
	tf_buf b = TF_BUF_INIT;
	for (size_t i = 0; i < t->n; i++)
		tf_buf_printf(&b, "%s%s", i ? " " : "", t->v[i]);
	return b.ptr ? b.ptr : tf_xstrdup("");
}

/* libtest's list names its threads (libtest.c): the k-th thread of a
 * name cut at 15 characters runs the k-th test of the list that begins
 * with it and is not ignored. */
static void test_libtest_list(void **state)
{
	static const char *const names[] = { "tests::jaro_winkler_a", "tests::jaro_winkler_ab",
					      "tests::jaro_winkler_b", "tests::short", "x" };
	static const uint8_t runs[] = { 1, 0, 1, 1, 1 };
	tf_libtest_list l = { 0 };
	(void)state;

	assert_null(tf_libtest_list_name(&l, "x", 0)); /* no list */
	for (size_t i = 0; i < TF_ARRAY_SIZE(names); i++) {
		tf_vec_push(&l.names, tf_xstrdup(names[i]));
		tf_vec_push(&l.runs, runs[i]);
	}
	l.listed = true;
	assert_string_equal(tf_libtest_list_name(&l, "tests::jaro_win", 0), "tests::jaro_winkler_a");
	assert_string_equal(tf_libtest_list_name(&l, "tests::jaro_win", 1), "tests::jaro_winkler_b");
	assert_null(tf_libtest_list_name(&l, "tests::jaro_win", 2));
	assert_string_equal(tf_libtest_list_name(&l, "tests::short", 0), "tests::short");
	assert_null(tf_libtest_list_name(&l, "tests::shor", 0)); /* a whole name, not a prefix */
	assert_null(tf_libtest_list_name(&l, "worker", 0));     /* a test's own thread */
	/* by the order libtest's runner started the threads: the ignored
	 * one has none */
	assert_string_equal(tf_libtest_list_nth(&l, "tests::jaro_win", 1), "tests::jaro_winkler_b");
	assert_string_equal(tf_libtest_list_nth(&l, "tests::jaro_win", 0), "tests::jaro_winkler_a");
	assert_string_equal(tf_libtest_list_nth(&l, "x", 3), "x");
	assert_null(tf_libtest_list_nth(&l, "tests::jaro_win", 2)); /* not its name */
	assert_null(tf_libtest_list_nth(&l, "x", 4));
	tf_libtest_list_free(&l);
	assert_false(l.listed);
}

/* What binary `bin` run with `argv` ran, by its list: `want`, joined. */
static void assert_ran(tf_cxx_lists *l, int bin, const char *argv, size_t len, const char *want)
{
	tf_go_tests t = { 0 };
	assert_int_equal(tf_cxx_ran(l, bin, argv, len, NULL, &t), 0);
	char *got = go_joined(&t);
	assert_string_equal(got, want);
	free(got);
	tf_go_tests_free(&t);
}

/* The lists of C++ frameworks' binaries (cxxlist.c), as each prints
 * them: names with their source lines, suites, tests that do not run by
 * default; frames named by the line, filters of one test each. */
static void test_cxx_lists(void **state)
{
	static const char catch2[] =
		"hot in a\t@/src/p/tests/a.cpp:6\n"
		"quick, with a comma\t@/src/p/tests/a.cpp:7\n"
		"\"#hash\"\t@../tests/b.cpp:6\n"
		"not a test line\n"
		"other\t@/src/p/other/a.cpp:6\n";
	static const char doctest[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<doctest binary=\"./d\">\n"
		"  <TestCase name=\"a &amp; b\" filename=\"d.cpp\" line=\"5\" skipped=\"false\"/>\n"
		"  <TestCase name=\"in suite\" testsuite=\"s\" filename=\"d.cpp\" line=\"7\" skipped=\"false\"/>\n"
		"  <TestCase name=\"skipped\" filename=\"d.cpp\" line=\"9\" skipped=\"true\"/>\n</doctest>\n";
	static const char boost[] =
		"first*\nsuite*\n    inner*\n        deep*\n    off\n    case*\nlast*\noffsuite\n    x*\n";
	tf_cxx_lists *l = tf_cxx_lists_new();
	tf_go_tests t = { 0 };
	(void)state;

	int c = tf_cxx_lists_add(l, "/b/c", "catch2", catch2);
	int d = tf_cxx_lists_add(l, "/b/d", "doctest", doctest);
	int b = tf_cxx_lists_add(l, "/b/b", "boost", boost);
	assert_true(c > 0 && d > 0 && b > 0);
	assert_int_equal(tf_cxx_lists_add(l, "/b/x", "nunit", ""), 0);
	assert_string_equal(tf_cxx_framework(l, c), "catch2");

	/* a process whose arguments were not read: not known, said once */
	assert_int_equal(tf_cxx_ran(l, c, NULL, 0, NULL, &t), -1);
	assert_int_equal(tf_cxx_ran(l, c, NULL, 0, NULL, &t), -1);
	assert_int_equal(t.n, 0);
	assert_int_equal(tf_cxx_lists_notes(l)->n, 1);
	assert_non_null(strstr(tf_cxx_lists_notes(l)->v[0], "/b/c: the catch2 tests it ran are not known"));
	assert_ran(l, c, "c", 2, "hot in a quick, with a comma #hash other");
	/* ctest's one test a process, escaped; a list of nothing run */
	assert_ran(l, c, "c\0quick\\, with a comma", 23, "quick, with a comma");
	assert_ran(l, c, "c\0--list-tests", 15, "");

	assert_ran(l, d, "d", 2, "a & b in suite");
	assert_ran(l, d, "d\0-r=console\0--test-case=IN SUITE", 34, "in suite");

	assert_ran(l, b, "b", 2, "first suite/inner/deep suite/case last");
	assert_int_equal(tf_cxx_ran(l, b, "b\0--run_test=first", 19, NULL, &t), -1);

	/* frames: the line, then the path that agrees furthest */
	assert_string_equal(tf_cxx_frame_test(l, "catch2", "C_A_T_C_H_T_E_S_T_0()", "/src/p/tests/a.cpp", 6),
			    "hot in a");
	assert_string_equal(tf_cxx_frame_test(l, "catch2", "C_A_T_C_H_T_E_S_T_0()", "/src/p/other/a.cpp", 6),
			    "other");
	assert_string_equal(tf_cxx_frame_test(l, "catch2", "____C_A_T_C_H____T_E_S_T____0()",
					      "/x/tests/b.cpp", 6), "#hash");
	assert_null(tf_cxx_frame_test(l, "catch2", "C_A_T_C_H_T_E_S_T_0()", "/src/p/tests/a.cpp", 8));
	assert_null(tf_cxx_frame_test(l, "catch2", "helper()", "/src/p/tests/a.cpp", 6));
	assert_null(tf_cxx_frame_test(l, "doctest", "C_A_T_C_H_T_E_S_T_0()", "/src/p/tests/a.cpp", 6));
	assert_string_equal(tf_cxx_frame_test(l, "doctest", "DOCTEST_ANON_SUITE_2::DOCTEST_ANON_FUNC_3()",
					      "/w/d.cpp", 7), "in suite");
	assert_string_equal(tf_cxx_frame_test(l, "boost", "suite::inner::deep::test_method()", "", 0),
			    "suite/inner/deep");
	assert_string_equal(tf_cxx_frame_test(l, "boost", "ns::(anonymous namespace)::first::test_method()",
					      "", 0), "first");
	assert_null(tf_cxx_frame_test(l, "boost", "suite::nothere::test_method()", "", 0));
	tf_cxx_lists_free(l);
	tf_cxx_lists_free(NULL);
}

/* A Go test binary's list, as its -test.run and -test.skip select it
 * (golist.c): the top-level part of a pattern decides, unanchored. */
static void test_go_select(void **state)
{
	static const struct {
		const char argv[64];
		size_t len;
		int rc;
		const char *want;
	} cases[] = {
		{ "x.test\0-test.count=1", 21, 0, "TestA TestAB TestB ExampleA FuzzC" },
		{ "x.test\0-test.run=A", 19, 0, "TestA TestAB ExampleA" },
		{ "x.test\0-test.run\0^TestA$", 25, 0, "TestA" },
		{ "x.test\0-test.run=^TestA$/sub", 29, 0, "TestA" },
		{ "x.test\0-test.run=B\0-test.skip=AB", 33, 0, "TestB" },
		{ "x.test\0-test.skip=TestA/sub", 28, 0, "TestA TestAB TestB ExampleA FuzzC" },
		{ "x.test\0-test.run=(A|C)/x", 25, 0, "TestA TestAB ExampleA FuzzC" },
		{ "x.test\0-test.list=.", 20, -1, NULL },
		{ "", 0, -1, NULL },
	};
	(void)state;
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++) {
		tf_go_tests t = { 0 };
		go_list(&t);
		int rc = tf_go_tests_select(&t, cases[i].argv, cases[i].len);
		assert_int_equal(rc, cases[i].rc);
		if (cases[i].want) {
			char *got = go_joined(&t);
			assert_string_equal(got, cases[i].want);
			free(got);
		}
		tf_go_tests_free(&t);
	}
	char top[64];
	assert_true(tf_go_closure_test("TestX.func1.2", top, sizeof(top)));
	assert_string_equal(top, "TestX");
	assert_true(tf_go_closure_test("TestX/func1", top, sizeof(top)));
	assert_string_equal(top, "TestX");
	assert_false(tf_go_closure_test("TestX", top, sizeof(top)));
	assert_false(tf_go_closure_test("TestType.Method", top, sizeof(top)));
	assert_false(tf_go_closure_test("helper.func1", top, sizeof(top)));
}

/* What a go command chose for its test binaries (golist.c), for one whose
 * own arguments were not read: its -run/-skip/-list in each spelling, and
 * what follows -args as it is. */
static void test_go_flags_of_command(void **state)
{
	static const struct {
		const char argv[80];
		size_t len;
		const char *want; /* what the list keeps, NULL: unknown */
	} cases[] = {
		{ "go\0test\0-count=1\0./...", 23, "TestA TestAB TestB ExampleA FuzzC" },
		{ "/usr/bin/go\0test\0-run\0A|C\0./...", 32, "TestA TestAB ExampleA FuzzC" },
		{ "go\0test\0./...\0--run=^TestA$\0-v", 31, "TestA" },
		{ "go\0test\0-test.run=B\0-skip\0AB\0.", 31, "TestB" },
		{ "go\0test\0-list\0.\0.", 18, NULL },
		{ "go\0test\0.\0-args\0-test.run=^FuzzC$", 34, "FuzzC" },
	};
	tf_buf b = TF_BUF_INIT;
	(void)state;
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++) {
		tf_go_tests t = { 0 };
		go_list(&t);
		assert_true(tf_go_test_flags(&b, cases[i].argv, cases[i].len));
		int rc = tf_go_tests_select(&t, b.ptr, b.len);
		assert_int_equal(rc, cases[i].want ? 0 : -1);
		if (cases[i].want) {
			char *got = go_joined(&t);
			assert_string_equal(got, cases[i].want);
			free(got);
		}
		tf_go_tests_free(&t);
	}
	assert_false(tf_go_test_flags(&b, "go\0vet\0./...", 13));
	assert_false(tf_go_test_flags(&b, "gotest\0test", 12));
	assert_false(tf_go_test_flags(&b, "go", 3));
	assert_false(tf_go_test_flags(&b, "", 0));
	tf_buf_free(&b);
}

/* A run listing tests as the attribution writes them: NAME, runner,
 * parent (each may be NULL but the name). */
static tf_profile *listed_run(const char *const (*t)[3], size_t n)
{
	tf_profile *p;
	tf_profile_new(&p);
	for (size_t i = 0; i < n; i++) {
		tf_test_meta m;
		tf_test_meta_init(&m);
		m.name = (char *)t[i][0];
		m.runner = (char *)t[i][1];
		m.parent = (char *)t[i][2];
		m.samples = 1;
		m.runner_ns = m.runner_q_ns = 1e6; /* the runner is kept with its time */
		for (size_t k = 0; k < n; k++)
			m.nested += t[k][2] && !strcmp(t[k][2], t[i][0]);
		tf_test_meta_set(p, &m);
	}
	return p;
}

static char *joined(char *const *v)
{
	tf_buf b = TF_BUF_INIT;
	for (size_t i = 0; v && v[i]; i++) {
		if (i)
			tf_buf_putc(&b, '|');
		tf_buf_puts(&b, v[i]);
	}
	return b.ptr ? tf_buf_detach(&b) : tf_xstrdup("");
}

/* tf_attribute_select of the tests listed after `run`, up to a NULL. */
static int select_tests(tf_selection **out, const char *const *argv, char *const *envp,
			const tf_profile *run, ...)
{
	const char *t[16];
	size_t n = 0;
	va_list ap;
	va_start(ap, run);
	while (n < TF_ARRAY_SIZE(t) && (t[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	return tf_attribute_select(out, argv, envp, run, t, n);
}

static void check_selected(tf_selection *s, const char *argv, const char *env)
{
	char *a = joined(s->argv), *e = joined(s->env);
	assert_string_equal(a, argv);
	assert_string_equal(e, env);
	free(a);
	free(e);
	tf_selection_free(s);
}

static void test_select(void **state)
{
	(void)state;
	static const char *const tests[][3] = {
		{ "case.1+x (y)", "ctest", NULL },  /* a name with CMake's specials */
		{ "gshort", "ctest", NULL },
		{ "Rare_Suite.Uses_Rare", "gtest", "gshort" },
		{ "Inst/Params.Pick/1", "gtest", "gshort" },
		{ "test_rare", "cmocka", "ctail" },
		{ "ctail", "ctest", NULL },
		{ "Plain.Alone", "gtest", NULL },
		{ "TestTable/small", "go", NULL },
		{ "TestPlain", NULL, NULL },
		{ "test_a.py::TestX::test_y[a b]", NULL, NULL },
		{ "tests::tiny", NULL, NULL },
		{ "lonely", "tap", "nowhere" },
		{ "nowhere", NULL, NULL },
		{ "some_function_name", NULL, NULL },
		{ "prog", NULL, NULL },
		{ "InProg.Fast", "gtest", "prog" },
		{ "InProg.Slow", "gtest", "prog" },
		{ "tests.test_x.Case.test_y", "unittest", NULL },  /* the loader's markers */
		{ "pkg.double", "unittest", NULL },                 /* a doctest */
	};
	tf_profile *run = listed_run(tests, TF_ARRAY_SIZE(tests));
	char *const env[] = { "GOFLAGS=-mod=mod", "PATH=/bin", NULL };
	tf_selection *s;

	/* ctest's regex: every character but letters, digits and _ escaped */
	assert_int_equal(select_tests(&s, (const char *const[]){ "ctest", "-j2", NULL }, NULL, run,
				"case.1+x (y)", "gshort", NULL), 0);
	check_selected(s, "ctest|-j2|-R|^(case\\.1\\+x\\ \\(y\\)|gshort)$", "");
	/* a GoogleTest test inside a ctest test: its ctest test, filtered */
	assert_int_equal(select_tests(&s, (const char *const[]){ "nice", "-n", "10", "ctest", NULL },
				NULL, run, "Rare_Suite.Uses_Rare", "Inst/Params.Pick/1", NULL), 0);
	check_selected(s, "nice|-n|10|ctest|-R|^(gshort)$",
		       "GTEST_FILTER=Rare_Suite.Uses_Rare:Inst/Params.Pick/1");
	/* a ctest test whole beside another's GoogleTest test: its own pass
	 * the filter too */
	assert_int_equal(select_tests(&s, (const char *const[]){ "ctest", NULL }, NULL, run,
				"Plain.Alone", "gshort", NULL), 0);
	check_selected(s, "ctest|-R|^(gshort)$",
		       "GTEST_FILTER=Plain.Alone:Rare_Suite.Uses_Rare:Inst/Params.Pick/1");
	/* another runner's test inside a ctest test: its ctest test whole */
	assert_int_equal(select_tests(&s, (const char *const[]){ "ctest", NULL }, NULL, run,
				"test_rare", NULL), 0);
	check_selected(s, "ctest|-R|^(ctail)$", "");
	/* the last command of sh -c, quoted for the shell */
	assert_int_equal(select_tests(&s, (const char *const[]){ "sh", "-c", "cd build && ctest -j2", NULL },
				NULL, run, "case.1+x (y)", NULL), 0);
	check_selected(s, "sh|-c|cd build && ctest -j2 -R '^(case\\.1\\+x\\ \\(y\\))$'", "");
	/* ... but not one whose end is not ctest's, nor a redirection */
	assert_int_equal(select_tests(&s, (const char *const[]){ "sh", "-c", "ctest; echo done", NULL },
				NULL, run, "gshort", NULL), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "does not run ctest"));
	assert_int_equal(select_tests(&s, (const char *const[]){ "sh", "-c", "ctest >log", NULL }, NULL,
				run, "gshort", NULL), TF_ENOTFOUND);
	assert_int_equal(select_tests(&s, (const char *const[]){ "make", "check", NULL }, NULL, run,
				"gshort", NULL), TF_ENOTFOUND);
	/* GoogleTest, go test and pytest by the environment, whatever runs them */
	assert_int_equal(select_tests(&s, (const char *const[]){ "make", "check", NULL }, env, run,
				"Plain.Alone", "TestTable/small", "TestPlain",
				"test_a.py::TestX::test_y[a b]", NULL), 0);
	check_selected(s, "make|check",
		       "GTEST_FILTER=Plain.Alone|GOFLAGS=-mod=mod -run=^(TestTable|TestPlain)$ "
		       "-count=1|TESTFLAME_PYTEST_SELECT=test_a.py::TestX::test_y[a b]");
	/* a GoogleTest program the command runs: its filter reaches it; the
	 * program itself whole, no filter to hold its tests back */
	assert_int_equal(select_tests(&s, (const char *const[]){ "./prog", NULL }, NULL, run,
				"InProg.Slow", NULL), 0);
	check_selected(s, "./prog", "GTEST_FILTER=InProg.Slow");
	assert_int_equal(select_tests(&s, (const char *const[]){ "./prog", NULL }, NULL, run,
				"prog", NULL), 0);
	check_selected(s, "./prog", "");
	/* cargo test: libtest's exact names after the command's -- */
	assert_int_equal(select_tests(&s, (const char *const[]){ "cargo", "test", "-q", NULL }, NULL, run,
				"tests::tiny", NULL), 0);
	check_selected(s, "cargo|test|-q|--|--exact|tests::tiny", "");
	assert_int_equal(select_tests(&s, (const char *const[]){ "cargo", "test", "--", "--nocapture",
							   NULL }, NULL, run, "tests::tiny", NULL), 0);
	check_selected(s, "cargo|test|--|--nocapture|--exact|tests::tiny", "");
	/* unittest's ids, however the runner is started, beside pytest's */
	assert_int_equal(select_tests(&s, (const char *const[]){ "python3", "-m", "unittest", "discover",
							   NULL }, NULL, run, "tests.test_x.Case.test_y",
				"pkg.double", "test_a.py::TestX::test_y[a b]", NULL), 0);
	check_selected(s, "python3|-m|unittest|discover",
		       "TESTFLAME_PYTEST_SELECT=test_a.py::TestX::test_y[a b]|"
		       "TESTFLAME_UNITTEST_SELECT=tests.test_x.Case.test_y\npkg.double");
	/* no way known: the whole suite, and why */
	assert_int_equal(select_tests(&s, (const char *const[]){ "ctest", NULL }, NULL, run,
				"some_function_name", NULL), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "'some_function_name'"));
	assert_int_equal(select_tests(&s, (const char *const[]){ "ctest", NULL }, NULL, run, "lonely", NULL),
			 TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "which no ctest lists"));
	assert_int_equal(select_tests(&s, (const char *const[]){ "ctest", NULL }, NULL, run, "absent", NULL),
			 TF_ENOTFOUND);
	tf_error_clear();
	tf_profile_free(run);

	/* GoogleTest's specials can only widen the filter */
	char *f = tf_select_gtest_filter((const char *const[]){ "A.b:c*", "-X.y" }, 2);
	assert_string_equal(f, "A.b?c?:?X.y");
	free(f);
	f = tf_select_go_run((const char *const[]){ "TestA/sub", "TestB" }, 2);
	assert_string_equal(f, "^(TestA|TestB)$");
	free(f);
}

/* meson's tests by their commands, named as meson prints them; run alone
 * by PROJECT:NAME where the command is meson test. */
static void test_meson(void **state)
{
	(void)state;
	static const char json[] =
		"[{\"name\": \"parse\", \"suite\": [\"libfoo\"], \"cmd\": [\"/b/t\", \"parse\"]},"
		" {\"name\": \"big\", \"suite\": [\"libfoo:slow\", \"libfoo\"], \"cmd\": [\"/b/t\", \"big\"]},"
		" {\"name\": \"alone\", \"suite\": [\"libfoo\"], \"cmd\": [\"/b/solo\"]},"
		" {\"name\": \"bad\", \"cmd\": 3}]";
	tf_meson *m = tf_meson_parse(json);
	assert_non_null(m);
	/* argv as the process's command line has it: each NUL-ended */
	assert_string_equal(tf_meson_lookup(m, "/b/t\0parse", 11), "libfoo / parse");
	assert_string_equal(tf_meson_lookup(m, "/b/t\0big", 9), "libfoo:slow / big");
	assert_null(tf_meson_lookup(m, "/b/t\0other", 11));  /* two tests run /b/t */
	assert_string_equal(tf_meson_lookup(m, "/b/solo\0-v", 11), "libfoo / alone");
	assert_null(tf_meson_lookup(m, "t\0parse", 8));
	assert_true(tf_meson_runs(m, "solo"));
	assert_false(tf_meson_runs(m, "dpkg-architecture"));
	assert_non_null(tf_meson_log(m));
	tf_meson_free(m);
	assert_null(tf_meson_parse("[]"));
	assert_null(tf_meson_parse("{not json"));

	static const char *const tests[][3] = {
		{ "libfoo / parse", "meson", NULL },
		{ "libfoo:slow / big", "meson", NULL },
		{ "libfoo / odd: name", "meson", NULL },
	};
	tf_profile *run = listed_run(tests, TF_ARRAY_SIZE(tests));
	tf_selection *s;
	assert_int_equal(select_tests(&s, (const char *const[]){ "meson", "test", "-C", "build", NULL },
				NULL, run, "libfoo / parse", "libfoo:slow / big", NULL), 0);
	check_selected(s, "meson|test|-C|build|libfoo:parse|libfoo:big", "");
	assert_int_equal(select_tests(&s, (const char *const[]){ "sh", "-c", "meson test -C build",
							   NULL }, NULL, run, "libfoo:slow / big", NULL), 0);
	check_selected(s, "sh|-c|meson test -C build libfoo:big", "");
	assert_int_equal(select_tests(&s, (const char *const[]){ "ninja", "-C", "build", "test", NULL },
				NULL, run, "libfoo / parse", NULL), TF_ENOTFOUND);
	assert_int_equal(select_tests(&s, (const char *const[]){ "meson", "test", NULL }, NULL, run,
				"libfoo / odd: name", NULL), TF_ENOTFOUND);
	tf_profile_free(run);
}

/* The output of `argv` run with `env` added, from its program in the
 * build's fixtures; NULL when that fixture was not built. */
static char *run_fixture(char *const *argv, char *const *env)
{
	const char *build = getenv("TESTFLAME_BUILD");
	char *dir = tf_xasprintf("%s/fixtures/cxxforms", build ? build : "build");
	char *exe = tf_xasprintf("%s/%s", dir, argv[0]);
	tf_buf cmd = TF_BUF_INIT;
	char *out = NULL;
	if (access(exe, X_OK) == 0) {
		tf_buf_printf(&cmd, "cd '%s' && env", dir);
		for (size_t i = 0; env && env[i]; i++)
			tf_buf_printf(&cmd, " '%s'", env[i]);
		tf_buf_printf(&cmd, " ./%s", argv[0]);
		for (size_t i = 1; argv[i]; i++)
			tf_buf_printf(&cmd, " '%s'", argv[i]); /* no quote in these */
		tf_buf_puts(&cmd, " 2>&1");
		FILE *f = popen(cmd.ptr, "r");
		tf_buf o = TF_BUF_INIT;
		char line[4096];
		while (f && fgets(line, sizeof(line), f))
			tf_buf_puts(&o, line);
		if (f)
			pclose(f);
		out = tf_buf_detach(&o);
	}
	tf_buf_free(&cmd);
	free(exe);
	free(dir);
	return out;
}

/* C++ frameworks' tests alone: Catch2's and doctest's names on the line of
 * the program the command runs, Boost.Test's filter in the environment;
 * the real programs (the fixtures) then run those tests and no other. */
static void test_select_cxx(void **state)
{
	(void)state;
	static const char *const tests[][3] = {
		{ "catch2_tests", NULL, NULL },
		{ "hot in a", "catch2", "catch2_tests" },
		{ "a comma, in its name", "catch2", "catch2_tests" },
		{ "doctest_tests", NULL, NULL },
		{ "in a suite", "doctest", "doctest_tests" },
		{ "boost_tests", NULL, NULL },
		{ "suite/quick_boost", "boost", "boost_tests" },
		{ "odd:name", "boost", "boost_tests" },
		{ "ctest_prog", "ctest", NULL },
		{ "in ctest", "catch2", "ctest_prog" },
	};
	tf_profile *run = listed_run(tests, TF_ARRAY_SIZE(tests));
	tf_selection *s;
	char *out;

	assert_int_equal(select_tests(&s, (const char *const[]){ "./catch2_tests", NULL }, NULL, run,
				"a comma, in its name", NULL), 0);
	out = run_fixture(s->argv, s->env);
	if (out) /* the one test, though its name holds Catch2's ',' */
		assert_non_null(strstr(out, "test cases: 1 | 1 passed"));
	free(out);
	check_selected(s, "./catch2_tests|a comma\\, in its name", "");
	/* the last command of sh -c, quoted */
	assert_int_equal(select_tests(&s, (const char *const[]){ "sh", "-c", "cd src && ./catch2_tests",
							   NULL }, NULL, run, "hot in a",
				"a comma, in its name", NULL), 0);
	check_selected(s, "sh|-c|cd src && ./catch2_tests 'hot in a' 'a comma\\, in its name'", "");
	assert_int_equal(select_tests(&s, (const char *const[]){ "./doctest_tests", "-s", NULL }, NULL,
				run, "in a suite", NULL), 0);
	out = run_fixture(s->argv, s->env);
	if (out)
		assert_non_null(strstr(out, "test cases: 1 | 1 passed"));
	free(out);
	check_selected(s, "./doctest_tests|-s|-tc=in a suite", "");
	assert_int_equal(select_tests(&s, (const char *const[]){ "./boost_tests", NULL }, NULL, run,
				"suite/quick_boost", NULL), 0);
	char *const log[] = { "BOOST_TEST_LOG_LEVEL=test_suite", s->env[0], NULL };
	out = run_fixture(s->argv, log);
	if (out) {
		assert_non_null(strstr(out, "Entering test case \"quick_boost\""));
		assert_null(strstr(out, "Entering test case \"hot_boost\""));
	}
	free(out);
	check_selected(s, "./boost_tests", "BOOST_TEST_RUN_FILTERS=suite/quick_boost");
	/* not when the command runs another program, nor a name Boost's
	 * filter cannot spell; inside a ctest test: that test whole */
	assert_int_equal(select_tests(&s, (const char *const[]){ "make", "check", NULL }, NULL, run,
				"hot in a", NULL), TF_ENOTFOUND);
	assert_int_equal(select_tests(&s, (const char *const[]){ "./boost_tests", NULL }, NULL, run,
				"odd:name", NULL), TF_ENOTFOUND);
	assert_int_equal(select_tests(&s, (const char *const[]){ "ctest", NULL }, NULL, run, "in ctest",
				NULL), 0);
	check_selected(s, "ctest|-R|^(ctest_prog)$", "");
	tf_profile_free(run);
}

/* ctest's files in `dir` for one ctest test, PROG ("/b/PROG"), whose
 * output in ctest's log is `output`. */
static void holder_ctest_files(const char *dir, const char *prog, const char *output)
{
	char *file = tf_xasprintf("add_test(%s \"/b/%s\")\n", prog, prog);
	put_testfile(dir, file);
	free(file);
	tf_buf log = TF_BUF_INIT;
	tf_buf_printf(&log, "Start testing: Dec 06 13:00 UTC\n"
			    "----------------------------------------------------------\n"
			    "1/1 Testing: %s\n1/1 Test: %s\nCommand: \"/b/%s\"\n"
			    "Directory: /b\n\"%s\" start time: Dec 06 13:00 UTC\nOutput:\n"
			    "----------------------------------------------------------\n"
			    "%s<end of output>\nTest time =   0.10 sec\n"
			    "----------------------------------------------------------\n"
			    "Test Passed.\n\"%s\" end time: Dec 06 13:00 UTC\n",
		      prog, prog, prog, prog, output, prog);
	put_log(dir, log.ptr);
	tf_buf_free(&log);
}

#define HOLDER_PERIOD 4000000 /* ns of CPU a sample */

/* Process `pid` (forked by `ppid`) ends at `t`, and so does the run: its
 * tests into the profile's metadata. */
static void end_run(tf_attributor *a, uint32_t pid, uint32_t ppid, uint64_t t)
{
	tf_rec_event e = ev_of(TF_REC_EXIT, pid, pid, t);
	e.fork.ppid = ppid;
	tf_attributor_event(a, &e);
	tf_attributor_write_meta(a, t + 1000);
	tf_attributor_free(a);
}

/* `n` samples of process `pid` from `t`, root first, each into `a` and
 * `p`. */
static uint64_t samples_of(tf_attributor *a, tf_profile *p, uint32_t pid, uint64_t t, int64_t n,
			   const char *const *frames, size_t nf)
{
	uint32_t locs[16];
	tf_label lab = { tf_profile_intern(p, "test"), 0, 0, 0 };
	stack_of(p, frames, nf, locs);
	for (int64_t i = 0; i < n; i++, t += HOLDER_PERIOD) {
		tf_rec_event e = ev_of(TF_REC_SAMPLE, pid, pid, t);
		int src;
		e.sample.period = HOLDER_PERIOD;
		lab.str = tf_attributor_sample(a, &e, locs, nf, HOLDER_PERIOD, &src);
		int64_t v[2] = { 1, HOLDER_PERIOD };
		tf_profile_add_sample(p, locs, (uint32_t)nf, v, &lab, 1);
	}
	return t;
}

static uint64_t holder_samples(tf_attributor *a, tf_profile *p, uint64_t t, int64_t n,
			       const char *const *frames, size_t nf)
{
	return samples_of(a, p, 11, t, n, frames, nf);
}

/* A profile and an attributor of every source, as `testflame run` has
 * them for a CPU clock (it keeps a pointer to its options). */
static tf_attributor *holder_attributor(tf_profile **out, const tf_runner_tests *rt)
{
	static tf_attribute_opts o;
	tf_profile *p;
	tf_attributor *a;

	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu-clock", "nanoseconds");
	p->period = HOLDER_PERIOD;
	p->period_type.type = tf_profile_intern(p, "cpu-clock");
	p->period_type.unit = tf_profile_intern(p, "nanoseconds");
	tf_profile_set_meta(p, "event", "cpu-clock");
	tf_profile_set_meta(p, "sampler", "perf");
	tf_attribute_opts_init(&o);
	o.runner_tests = rt;
	assert_int_equal(tf_attributor_new(&a, p, &o), 0);
	tf_attributor_set_time_event(a, true);
	*out = p;
	return a;
}

/*
 * One run of `ctest` (in `dir`) running PROG, whose runner reported `rt`
 * (NULL: nothing but ctest's log): `in_tests` samples of the stack
 * `frames` (n of them, root first) inside its tests, `own` in its main
 * outside them; the kernel counted all of them.
 */
static tf_profile *holder_run_read(const char *dir, const char *prog, const tf_runner_tests *rt,
				   const char *const *frames, size_t n, int64_t in_tests,
				   int64_t own, bool read)
{
	static const char ctest_argv[] = "ctest";
	char argv[64], mainf[64], setupf[64];
	tf_profile *p;
	tf_attributor *a = holder_attributor(&p, rt);

	driver_and_test(a, "ctest", 10, 11, 100, prog);
	/* each exec decided once its main binary is mapped, as recorded */
	exec_mapped(a, 10, 1, "/usr/bin/ctest");
	tf_rec_event e = ev_of(TF_REC_CMDLINE, 10, 10, 1);
	e.cmdline.argv = ctest_argv;
	e.cmdline.len = sizeof(ctest_argv);
	e.cmdline.cwd = dir;
	tf_attributor_event(a, &e);
	snprintf(argv, sizeof(argv), "/b/%s", prog);
	exec_mapped(a, 11, 111, argv);
	e = ev_of(TF_REC_CMDLINE, 11, 11, 111);
	e.cmdline.argv = argv;
	e.cmdline.len = (uint32_t)strlen(argv) + 1;
	e.cmdline.cwd = dir;
	if (read) /* else it ended before they were read */
		tf_attributor_event(a, &e);
	snprintf(mainf, sizeof(mainf), "/b/%s!main", prog);
	snprintf(setupf, sizeof(setupf), "/b/%s!setup", prog);
	const char *const in_main[] = { mainf, setupf };
	uint64_t t = holder_samples(a, p, 1000, own, in_main, TF_ARRAY_SIZE(in_main));
	t = holder_samples(a, p, t, in_tests, frames, n);
	e = ev_of(TF_REC_THREAD_COST, 11, 11, t);
	e.thread_cost.count = (uint64_t)(own + in_tests + 1) * HOLDER_PERIOD;
	tf_attributor_event(a, &e);
	end_run(a, 11, 10, t);
	return p;
}

static tf_profile *holder_run(const char *dir, const char *prog, const tf_runner_tests *rt,
			      const char *const *frames, size_t n, int64_t in_tests, int64_t own)
{
	return holder_run_read(dir, prog, rt, frames, n, in_tests, own, true);
}

/* ctail: cmocka's tests built with -O2, which tail-call their helpers:
 * `helper` samples where cmocka's runner calls check_rare. */
/* What ctail prints, in ctest's log: its three tests. */
static const char ctail_output[] = "[==========] tests: Running 3 test(s).\n"
				   "[ RUN      ] test_rare\n[       OK ] test_rare\n"
				   "[ RUN      ] test_common\n[       OK ] test_common\n"
				   "[ RUN      ] test_plain\n[       OK ] test_plain\n"
				   "[==========] tests: 3 test(s) run.\n[  PASSED  ] 3 test(s).\n";

static const char *const ctail_helper[] = {
	"/b/ctail!main", "/usr/lib/libcmocka.so.0!_cmocka_run_group_tests",
	"/usr/lib/libcmocka.so.0!cmocka_run_one_test_or_fixture", "/b/ctail!check_rare",
	"/b/ctail!lib_rare",
};

static tf_profile *ctail_run(const char *dir, int64_t helper, int64_t own)
{
	return holder_run(dir, "ctail", NULL, ctail_helper, TF_ARRAY_SIZE(ctail_helper), helper,
			  own);
}

/* Test `name`'s metadata in run `p` (false: it has none). */
static bool meta_of(tf_profile *p, const char *name, tf_test_meta *m)
{
	char key[128];
	snprintf(key, sizeof(key), "testflame.test.%s=", name);
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]);
		if (strncmp(c, key, strlen(key)) == 0) {
			assert_int_equal(tf_test_meta_parse(m, c), 0);
			return true;
		}
	}
	return false;
}

static tf_comparison *compare_runs(tf_profile *b, tf_profile *h)
{
	tf_comparison *c = NULL;
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	tf_compare_side bs = { (const tf_profile *const *)&b, NULL, 1 };
	tf_compare_side hs = { (const tf_profile *const *)&h, NULL, 1 };
	if (tf_compare(&c, &bs, &hs, &o))
		fail_msg("tf_compare: %s", tf_error_last());
	return c;
}

/*
 * A program that runs its runner's tests holds them on both sides,
 * whichever of them got samples: ctail (cmocka, -O2) tail-calls its
 * helpers, so no sample's frame names test_rare, test_common or
 * test_plain, which ctest's log lists. The work under cmocka's runner is
 * inside one of them all the same: "ctail [unnamed tests]", nested in
 * ctail, gated, never ctail's own. ctail holds its 3 listed tests in a
 * run that sampled that work and in one that did not (too short for a
 * sample); its own work (main's setup) is outside its tests, not gated.
 * Given to ctail itself, a 12-fold slowdown of check_rare's work failed
 * ctail by its count in one run and passed as the setup's noise in
 * another.
 */
static void test_holder_of_unnamed_tests(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	tf_test_meta m;
	holder_ctest_files(dir, "ctail", ctail_output);

	tf_profile *base = ctail_run(dir, 5, 20), *quiet = ctail_run(dir, 0, 20),
		   *head = ctail_run(dir, 60, 20);
	/* the attributor: the helper's samples are the unnamed tests', the
	 * listed tests ctail's nested ones, which that row is not */
	tf_test_meta_init(&m);
	assert_true(meta_of(head, "ctail [unnamed tests]", &m));
	assert_int_equal(m.samples, 60);
	assert_string_equal(m.parent, "ctail");
	assert_string_equal(m.source, "frames");
	tf_test_meta_clear(&m);
	assert_true(meta_of(head, "ctail", &m));
	assert_int_equal(m.samples, 20);
	assert_int_equal(m.nested, 3);
	tf_test_meta_clear(&m);
	for (size_t i = 0; i < 3; i++) {
		static const char *const listed[] = { "test_rare", "test_common", "test_plain" };
		assert_true(meta_of(quiet, listed[i], &m));
		assert_string_equal(m.parent, "ctail");
		assert_int_equal(m.samples, 0);
		tf_test_meta_clear(&m);
	}
	assert_false(meta_of(quiet, "ctail [unnamed tests]", &m));
	assert_true(meta_of(quiet, "ctail", &m));
	assert_int_equal(m.nested, 3);
	tf_test_meta_clear(&m);

	/* compared, with the unnamed work sampled in the base or not */
	tf_profile *bases[] = { base, quiet };
	for (size_t k = 0; k < 2; k++) {
		tf_comparison *c = compare_runs(bases[k], head);
		const tf_test_delta *prog = tf_comparison_find(c, "ctail");
		const tf_test_delta *un = tf_comparison_find(c, "ctail [unnamed tests]");
		assert_non_null(prog);
		assert_true(prog->outside);
		assert_int_equal(prog->measure, TF_MEASURE_SAMPLES);
		assert_int_not_equal(prog->verdict, TF_VERDICT_REGRESSED);
		assert_int_equal(prog->nested, 3);
		assert_non_null(un);
		assert_false(un->outside);
		assert_string_equal(un->parent, "ctail");
		assert_true(un->base.ran && un->head.ran);
		assert_int_equal(un->verdict, TF_VERDICT_REGRESSED);
		assert_string_equal(un->functions[0].name, "lib_rare");
		assert_true(tf_comparison_regressed(c));
		tf_comparison_free(c);
	}
	/* the same short work, one sample on one side: ran on both, nothing
	 * new, nothing to gate */
	tf_profile *one = ctail_run(dir, 1, 20);
	tf_comparison *c = compare_runs(quiet, one);
	const tf_test_delta *un = tf_comparison_find(c, "ctail [unnamed tests]");
	assert_non_null(un);
	assert_true(un->base.ran);
	assert_int_not_equal(un->verdict, TF_VERDICT_NEW);
	assert_true(tf_comparison_find(c, "ctail")->outside);
	assert_false(tf_comparison_regressed(c));
	tf_comparison_free(c);
	tf_profile_free(one);

	tf_profile_free(base);
	tf_profile_free(quiet);
	tf_profile_free(head);
	unit_rmtree(dir);
}

/* Run `p` has test `name` with `samples` samples, nested in `parent`
 * (NULL: in none), `nested` tests nested in it. */
static void assert_test(tf_profile *p, const char *name, uint64_t samples, const char *parent,
			uint32_t nested)
{
	tf_test_meta m;
	if (!meta_of(p, name, &m))
		fail_msg("no test '%s'", name);
	assert_int_equal(m.samples, samples);
	if (parent)
		assert_string_equal(m.parent, parent);
	else
		assert_null(m.parent);
	assert_int_equal(m.nested, nested);
	tf_test_meta_clear(&m);
}

/*
 * ctail's arguments gone before they were read (t0920 #3, 2 runs in 7):
 * ctest's log has one test that runs ctail, its test, with the three
 * tests the log lists in it; the work under cmocka's runner that no
 * listed test's frame names is "ctail [unnamed tests]"'s, as when they
 * were read. Named at the end by the log's order, the process was in a
 * test nested in nothing known until then: its helpers' frames
 * (check_rare, the kernel's asm_exc_page_fault) were tests of ctail.
 */
static void test_ctest_unread_holder(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	tf_test_meta m;
	holder_ctest_files(dir, "ctail", ctail_output);
	tf_profile *p = holder_run_read(dir, "ctail", NULL, ctail_helper,
					TF_ARRAY_SIZE(ctail_helper), 30, 5, false);
	assert_false(meta_of(p, "check_rare", &m));
	assert_test(p, "ctail [unnamed tests]", 30, "ctail", 0);
	assert_test(p, "ctail", 5, NULL, 3);
	tf_profile_free(p);
	unit_rmtree(dir);
}

/* Entry `i` of `n` of ctest's log: test `name` ran `cmd` and printed
 * `output`. */
static void log_entry(tf_buf *log, int i, int n, const char *name, const char *cmd,
		      const char *output)
{
	tf_buf_printf(log, "%d/%d Testing: %s\n%d/%d Test: %s\nCommand: %s\nDirectory: /b\n"
			   "\"%s\" start time: Dec 06 13:00 UTC\nOutput:\n"
			   "----------------------------------------------------------\n"
			   "%s<end of output>\nTest time =   0.10 sec\n"
			   "----------------------------------------------------------\n"
			   "Test Passed.\n\"%s\" end time: Dec 06 13:00 UTC\n",
		      i, n, name, i, n, name, cmd, name, output, name);
}

/*
 * ctest -j 2 runs ctail twice (tail_a: `ctail a`, tail_b: `ctail b`), the
 * arguments of neither read: which is which is known at the end, by the
 * order they ended (tail_b's process first, as the log has it). Until
 * then the tests either may nest are theirs: tail_a's process, in a
 * helper no listed test's frame names (check_rare), is in "tail_a
 * [unnamed tests]"; tail_b's, in test_plain, which tail_b's output
 * lists, is in test_plain, nested in tail_b. Nested in a placeholder
 * that nests nothing, check_rare was a test.
 */
static void test_ctest_unread_nested(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	put_testfile(dir, "add_test(tail_a \"/b/ctail\" \"a\")\nadd_test(tail_b \"/b/ctail\" \"b\")\n");
	tf_buf log = TF_BUF_INIT;
	tf_buf_printf(&log, "Start testing: Dec 06 13:00 UTC\n"
			    "----------------------------------------------------------\n");
	log_entry(&log, 2, 2, "tail_b", "\"/b/ctail\" \"b\"",
		  "[==========] tests: Running 1 test(s).\n"
		  "[ RUN      ] test_plain\n[       OK ] test_plain\n"
		  "[==========] tests: 1 test(s) run.\n[  PASSED  ] 1 test(s).\n");
	log_entry(&log, 1, 2, "tail_a", "\"/b/ctail\" \"a\"",
		  "[==========] tests: Running 2 test(s).\n"
		  "[ RUN      ] test_rare\n[       OK ] test_rare\n"
		  "[ RUN      ] test_common\n[       OK ] test_common\n"
		  "[==========] tests: 2 test(s) run.\n[  PASSED  ] 2 test(s).\n");
	put_log(dir, log.ptr);
	tf_buf_free(&log);

	static const char *const in_plain[] = {
		"/b/ctail!main", "/usr/lib/libcmocka.so.0!_cmocka_run_group_tests",
		"/usr/lib/libcmocka.so.0!cmocka_run_one_test_or_fixture", "/b/ctail!test_plain",
	};
	tf_profile *p;
	tf_attributor *a = holder_attributor(&p, NULL);
	ctest_j2(a, dir);
	/* tail_a's starts first and ends last; no CMDLINE of either */
	ctest_child(a, 11, 100, "ctail");
	ctest_child(a, 12, 150, "ctail");
	uint64_t t = samples_of(a, p, 11, 1000, 20, ctail_helper, TF_ARRAY_SIZE(ctail_helper));
	t = samples_of(a, p, 12, t, 10, in_plain, TF_ARRAY_SIZE(in_plain));
	ctest_child_exit(a, 12, t);
	ctest_child_exit(a, 11, t + 100);
	tf_attributor_write_meta(a, t + 1000);
	tf_attributor_free(a);

	tf_test_meta m;
	assert_false(meta_of(p, "check_rare", &m));
	assert_test(p, "tail_a [unnamed tests]", 20, "tail_a", 0);
	assert_test(p, "test_plain", 10, "tail_b", 0);
	assert_test(p, "tail_a", 0, NULL, 2);
	assert_test(p, "tail_b", 0, NULL, 1);
	/* no placeholder is left, nor its unnamed tests */
	for (size_t i = 0; i < p->comments.n; i++)
		assert_null(strstr(tf_profile_str(p, p->comments.v[i]), "\x1f"));
	tf_profile_free(p);
	unit_rmtree(dir);
}

/*
 * A name the runner's own report gives is a listed test, whatever ctest's
 * log of the program's output says: GoogleTest with GTEST_BRIEF=1 prints
 * only its failed tests, and the samples of every test that passed, named
 * by their TestBody frames and GoogleTest's XML, went to "gbrief [unnamed
 * tests]" (145 of 152 of a real run's).
 */
static void test_holder_of_reported_tests(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	tf_runner_tests rt = { 0 };
	tf_test_meta m;
	static const char xml[] =
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites tests=\"2\" name=\"AllTests\">\n"
		"  <testsuite name=\"Plain\" tests=\"1\">\n"
		"    <testcase name=\"Common\" status=\"run\" result=\"completed\" time=\"0.16\" "
		"classname=\"Plain\" />\n  </testsuite>\n"
		"  <testsuite name=\"Maybe\" tests=\"1\">\n"
		"    <testcase name=\"Fails\" status=\"run\" result=\"completed\" time=\"0.01\" "
		"classname=\"Maybe\">\n      <failure message=\"asked to\"/>\n    </testcase>\n"
		"  </testsuite>\n</testsuites>\n";
	static const char *const in_test[] = {
		"/b/gbrief!main", "/usr/lib/libgtest.so.1.12.1!testing::Test::Run()",
		"/b/gbrief!(anonymous namespace)::Plain_Common_Test::TestBody()",
		"/b/gbrief!burn_units(int)",
	};
	holder_ctest_files(dir, "gbrief",
			   "g.cc:27: Failure\nFailed\nasked to\n[  FAILED  ] Maybe.Fails (10 ms)\n"
			   "[==========] 2 tests from 2 test suites ran. (170 ms total)\n"
			   "[  PASSED  ] 1 test.\n[  FAILED  ] 1 test, listed below:\n"
			   "[  FAILED  ] Maybe.Fails\n");
	assert_int_equal(tf_runner_read_text(&rt, xml, sizeof(xml) - 1, "gbrief.xml", NULL), 0);
	tf_profile *p = holder_run(dir, "gbrief", &rt, in_test, TF_ARRAY_SIZE(in_test), 40, 3);
	tf_test_meta_init(&m);
	assert_true(meta_of(p, "Plain.Common", &m));
	assert_int_equal(m.samples, 40);
	assert_string_equal(m.parent, "gbrief");
	tf_test_meta_clear(&m);
	assert_false(meta_of(p, "gbrief [unnamed tests]", &m));
	assert_true(meta_of(p, "gbrief", &m));
	assert_int_equal(m.samples, 3);
	tf_test_meta_clear(&m);
	tf_profile_free(p);
	tf_runner_tests_free(&rt);
	unit_rmtree(dir);
}

/*
 * `sh -c 'python3 -m pytest -p no:pytest_testflame tests'` in /src/proj
 * (`script`: `sh -c 'pytest ...'`, which runs as `python3 -X dev
 * /usr/bin/pytest ...` by its #! line): pytest without testflame's
 * plugin, whose tests its frames name. `own` samples of pytest's own work
 * (collection), then `in_test` in tests/test_p.py::test_a; `python`
 * false: an interpreter whose frames were not read (native frames only).
 * The profile with its metadata.
 */
static tf_profile *refused_pytest_run(bool script, int64_t own, int64_t in_test, bool python)
{
	static tf_attribute_opts o;
	static const char by_m[] = "python3\0-m\0pytest\0-p\0no:pytest_testflame\0tests";
	static const char by_script[] = "/usr/bin/python3\0-X\0dev\0/usr/bin/pytest\0-p\0"
					"no:pytest_testflame\0tests";
	static const char *const collect[] = {
		"/usr/bin/python3.11!main",
		"runpy._run_module_as_main@/usr/lib/python3.11/runpy.py",
		"_pytest.main.pytest_collection@/usr/lib/python3/dist-packages/_pytest/main.py",
	};
	static const char *const in_a[] = {
		"/usr/bin/python3.11!main",
		"_pytest.main.pytest_runtestloop@/usr/lib/python3/dist-packages/_pytest/main.py",
		"pytest_pyfunc_call@/usr/lib/python3/dist-packages/_pytest/python.py",
		"test_a@/src/proj/tests/test_p.py",
	};
	static const char *const native[] = {
		"/usr/bin/python3.11!main",
		"/usr/bin/python3.11!_PyEval_EvalFrameDefault",
	};
	tf_profile *p;
	tf_attributor *a;
	uint32_t locs[16];
	uint64_t t = 1000;
	int src;

	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu-clock", "nanoseconds");
	tf_attribute_opts_init(&o);
	o.suite = "pytest tests";
	assert_int_equal(tf_attributor_new(&a, p, &o), 0);
	driver_and_test(a, "sh", 20, 21, 100, "python3");
	exec_mapped(a, 20, 1, "/usr/bin/dash");
	exec_mapped(a, 21, 111, "/usr/bin/python3.11");
	tf_rec_event e = ev_of(TF_REC_CMDLINE, 21, 21, 111);
	e.cmdline.argv = script ? by_script : by_m;
	e.cmdline.len = script ? sizeof(by_script) : sizeof(by_m);
	e.cmdline.cwd = "/src/proj";
	tf_attributor_event(a, &e);
	for (int64_t i = 0; i < own + in_test; i++, t += HOLDER_PERIOD) {
		uint32_t n = !python ? stack_of(p, native, TF_ARRAY_SIZE(native), locs)
			     : i < own ? py_stack_of(p, collect, TF_ARRAY_SIZE(collect), locs)
				       : py_stack_of(p, in_a, TF_ARRAY_SIZE(in_a), locs);
		e = ev_of(TF_REC_SAMPLE, 21, 21, t);
		e.sample.period = HOLDER_PERIOD;
		tf_label lab = { tf_profile_intern(p, "test"), 0, 0, 0 };
		lab.str = tf_attributor_sample(a, &e, locs, n, HOLDER_PERIOD, &src);
		int64_t v[2] = { 1, HOLDER_PERIOD };
		tf_profile_add_sample(p, locs, n, v, &lab, 1);
	}
	end_run(a, 21, 20, t);
	return p;
}

/*
 * A Python test runner whose frames name its tests has tests whether or
 * not a sample landed in one: a suite of a few milliseconds gets none in
 * some runs. Its own work is outside them in both, never a test named
 * after the command in one run and "[outside tests]" in the next; pytest
 * run by its script too. An interpreter whose frames were not read names
 * no test: the command is the test, as for any command without tests.
 */
static void test_python_runner_without_test_samples(void **state)
{
	(void)state;
	tf_test_meta m;
	for (int k = 0; k < 4; k++) {
		int in_test = k & 1;
		tf_profile *p = refused_pytest_run(k >= 2, 20, in_test, true);
		assert_true(meta_of(p, "[outside tests]", &m));
		assert_string_equal(m.source, "outside");
		assert_int_equal(m.samples, 20);
		tf_test_meta_clear(&m);
		assert_false(meta_of(p, "pytest tests", &m));
		assert_int_equal(meta_of(p, "tests/test_p.py::test_a", &m), in_test == 1);
		if (in_test) {
			assert_string_equal(m.source, "frames");
			tf_test_meta_clear(&m);
		}
		tf_profile_free(p);
	}
	tf_profile *p = refused_pytest_run(false, 20, 0, false);
	assert_true(meta_of(p, "pytest tests", &m));
	assert_string_equal(m.source, "command");
	assert_int_equal(m.samples, 20);
	tf_test_meta_clear(&m);
	assert_false(meta_of(p, "[outside tests]", &m));
	tf_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets),
		cmocka_unit_test(test_go_thread_own_frames),
		cmocka_unit_test(test_pytest_frames),
		cmocka_unit_test(test_runner_reports),
		cmocka_unit_test(test_costs_from_switches),
		cmocka_unit_test(test_wait_reasons),
		cmocka_unit_test(test_exec_undecided_until_mapped),
		cmocka_unit_test(test_costs_from_cpu_switches),
		cmocka_unit_test(test_waits_from_switch_records),
		cmocka_unit_test(test_waits_carried_under_cap),
		cmocka_unit_test(test_waits_carried_within_a_test),
		cmocka_unit_test(test_waits_on_recorders_read),
		cmocka_unit_test(test_test_meta),
		cmocka_unit_test(test_test_meta_numbers),
		cmocka_unit_test(test_presets_limited_and_custom),
		cmocka_unit_test(test_marker_lines),
		cmocka_unit_test(test_ctest_names),
		cmocka_unit_test(test_sources),
		cmocka_unit_test(test_memory_accounting),
		cmocka_unit_test(test_suite_name),
		cmocka_unit_test(test_ctest_parallel_unread),
		cmocka_unit_test(test_go_select),
		cmocka_unit_test(test_go_flags_of_command),
		cmocka_unit_test(test_cxx_lists),
		cmocka_unit_test(test_libtest_list),
		cmocka_unit_test(test_select),
		cmocka_unit_test(test_select_cxx),
		cmocka_unit_test(test_meson),
		cmocka_unit_test(test_holder_of_unnamed_tests),
		cmocka_unit_test(test_holder_of_reported_tests),
		cmocka_unit_test(test_python_runner_without_test_samples),
		cmocka_unit_test(test_ctest_unread_holder),
		cmocka_unit_test(test_ctest_unread_nested),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
