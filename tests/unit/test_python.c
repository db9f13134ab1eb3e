/*
 * test_python.c - CPython's side of the symbolizer (python.h): line tables
 * of every format against what each real interpreter computes (fixtures
 * made by tests/fixtures/python/mklines.py with CPython 3.7 to 3.13), the
 * names of modules and of functions before 3.11's qualified names, and
 * which files are interpreters. Reading a live interpreter is the e2e
 * test's (t0170-python-frames.sh), on the real ones.
 */
#include "unit.h"
#include "testflame/python.h"

#include <sys/stat.h>

static char *fixture(const char *name)
{
	const char *top = getenv("TESTFLAME_TOP");
	char *p;
	assert_true(asprintf(&p, "%s/tests/fixtures/python/%s", top ? top : ".", name) > 0);
	return p;
}

/* Every instruction's line, as the fixture's interpreter said it. */
static void check_lines(const char *file, unsigned minor)
{
	char *path = fixture(file), *line = NULL;
	size_t cap = 0, codes = 0, units = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	while (getline(&line, &cap, f) > 0) {
		unsigned version;
		int first, used = 0, want, n;
		char *hex = malloc(strlen(line) + 1);
		assert_true(sscanf(line, "%x %d %s %n", &version, &first, hex, &used) == 3);
		assert_int_equal((version >> 16) & 0xff, minor);
		size_t len = strcmp(hex, "-") ? strlen(hex) / 2 : 0;
		uint8_t *t = malloc(len + 1);
		for (size_t i = 0; i < len; i++)
			assert_int_equal(sscanf(hex + 2 * i, "%2hhx", &t[i]), 1);
		const char *p = line + used;
		for (int u = 0; sscanf(p, "%d%n", &want, &n) == 1; u++, p += n) {
			int got = tf_py_line(version, t, len, first, u);
			if (got != want)
				fail_msg("%s: code at line %d, unit %d: line %d, not %d", file, first, u,
					 got, want);
			units++;
		}
		codes++;
		free(t);
		free(hex);
	}
	fclose(f);
	free(line);
	free(path);
	assert_true(codes >= 8 && units >= 150);
}

static void test_line_tables(void **state)
{
	(void)state;
	check_lines("lines-3.7.txt", 7);   /* co_lnotab */
	check_lines("lines-3.8.txt", 8);
	check_lines("lines-3.9.txt", 9);
	check_lines("lines-3.10.txt", 10); /* co_linetable, -128 for no line */
	check_lines("lines-3.11.txt", 11); /* the location table */
	check_lines("lines-3.12.txt", 12);
	check_lines("lines-3.13.txt", 13);
	/* before the first instruction: the first line; no table: unknown */
	assert_int_equal(tf_py_line(0x030b0000, NULL, 0, 42, -1), 42);
	assert_int_equal(tf_py_line(0x030b0000, NULL, 0, 42, 3), 0);
	/* a truncated table says nothing rather than something wrong */
	const uint8_t cut[] = { 0xf0 | 0x8 | 1, 0x40 };
	assert_int_equal(tf_py_line(0x030c0000, cut, sizeof(cut), 10, 5), 0);
}

static void touch(const char *dir, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void mkdirs(const char *dir, const char *rel)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	assert_int_equal(mkdir(path, 0777), 0);
}

static char *module(tf_pymodcache *c, const char *dir, const char *rel)
{
	static char out[256];
	tf_buf b = TF_BUF_INIT;
	char path[512];
	snprintf(path, sizeof(path), "%s%s%s", dir ? dir : "", dir ? "/" : "", rel);
	tf_py_module_name(&b, c, path);
	snprintf(out, sizeof(out), "%s", b.ptr ? b.ptr : "");
	tf_buf_free(&b);
	return out;
}

static void test_module_names(void **state)
{
	char *dir = unit_tmpdir();
	tf_pymodcache *c = tf_pymodcache_new();
	(void)state;

	mkdirs(dir, "src");
	mkdirs(dir, "src/toolz");
	mkdirs(dir, "src/toolz/sub");
	mkdirs(dir, "src/ns");
	touch(dir, "src/toolz/__init__.py", "");
	touch(dir, "src/toolz/sub/__init__.py", "");
	touch(dir, "src/toolz/itertoolz.py", "");
	touch(dir, "src/toolz/sub/deep.py", "");
	touch(dir, "src/ns/plain.py", "");

	/* packages are the directories with an __init__.py */
	assert_string_equal(module(c, dir, "src/toolz/itertoolz.py"), "toolz.itertoolz");
	assert_string_equal(module(c, dir, "src/toolz/sub/deep.py"), "toolz.sub.deep");
	assert_string_equal(module(c, dir, "src/toolz/__init__.py"), "toolz");
	assert_string_equal(module(c, dir, "src/ns/plain.py"), "plain");
	/* asked again: the same (from the cache) */
	assert_string_equal(module(c, dir, "src/toolz/itertoolz.py"), "toolz.itertoolz");
	/* frozen modules by their name; no module for what is no source file */
	assert_string_equal(module(c, NULL, "<frozen importlib._bootstrap>"), "importlib._bootstrap");
	assert_string_equal(module(c, NULL, "<string>"), "");
	assert_string_equal(module(c, NULL, "relative/x.py"), "");
	assert_string_equal(module(c, dir, "src/toolz/not-a-name.py"), "");
	tf_pymodcache_free(c);
	unit_rmtree(dir);
}

static char *qualname(tf_pymodcache *c, const char *file, const char *name, int first)
{
	static char out[256];
	tf_buf b = TF_BUF_INIT;
	bool ok = tf_py_qualname_from_source(&b, c, file, name, first);
	snprintf(out, sizeof(out), "%s", ok ? b.ptr : "(none)");
	tf_buf_free(&b);
	return out;
}

static void test_qualnames_from_source(void **state)
{
	char *dir = unit_tmpdir(), path[512];
	tf_pymodcache *c = tf_pymodcache_new();
	(void)state;

	touch(dir, "m.py",
	      "import functools\n"                       /* 1 */
	      "\n"
	      "class TestA:\n"                           /* 3 */
	      "    def test_b(self):\n"                  /* 4 */
	      "        pass\n"
	      "\n"
	      "    class Inner:\n"                       /* 7 */
	      "        @functools.lru_cache(\n"          /* 8 */
	      "            maxsize=None)\n"
	      "        async def deep(self):\n"          /* 10 */
	      "            # a comment at another depth\n"
	      "            return [x for x in ()]\n"     /* 12 */
	      "\n"
	      "def outer():\n"                           /* 14 */
	      "    if True:\n"
	      "        def inner():\n"                   /* 16 */
	      "            return lambda: 1\n"           /* 17 */
	      "    return inner\n"
	      "\n"
	      "\tdef tabbed(): pass\n");                 /* 20 */
	snprintf(path, sizeof(path), "%s/m.py", dir);

	assert_string_equal(qualname(c, path, "test_b", 4), "TestA.test_b");
	assert_string_equal(qualname(c, path, "TestA", 3), "TestA");
	/* decorated: the code object's first line is the decorator's */
	assert_string_equal(qualname(c, path, "deep", 8), "TestA.Inner.deep");
	assert_string_equal(qualname(c, path, "<listcomp>", 12), "TestA.Inner.deep.<locals>.<listcomp>");
	/* blocks that are no scope (if) add nothing */
	assert_string_equal(qualname(c, path, "inner", 16), "outer.<locals>.inner");
	assert_string_equal(qualname(c, path, "<lambda>", 17), "outer.<locals>.inner.<locals>.<lambda>");
	assert_string_equal(qualname(c, path, "outer", 14), "outer");
	/* the source moved on: no guess */
	assert_string_equal(qualname(c, path, "gone", 4), "(none)");
	assert_string_equal(qualname(c, "/nonexistent/x.py", "f", 1), "(none)");
	tf_pymodcache_free(c);
	unit_rmtree(dir);
}

static void test_candidates(void **state)
{
	(void)state;
	assert_true(tf_pybin_candidate("/usr/bin/python3.11"));
	assert_true(tf_pybin_candidate("/x/lib/libpython3.12.so.1.0"));
	assert_true(tf_pybin_candidate("/opt/bin/python"));
	assert_true(tf_pybin_candidate("/root/.pyenv/versions/2.7.18/bin/python2.7"));
	assert_false(tf_pybin_candidate("/usr/bin/pythonista"));
	assert_false(tf_pybin_candidate("/usr/lib/libc.so.6"));
	assert_false(tf_pybin_candidate("/usr/bin/ipython3"));

	char v[32];
	tf_py_version_format(0x030b02f0, v, sizeof(v));
	assert_string_equal(v, "3.11.2");
	tf_py_version_format(0x03080000, v, sizeof(v));
	assert_string_equal(v, "3.8");
}

/* A file that is no interpreter: probed, said so, never an error. */
static void test_probe_not_python(void **state)
{
	tf_pybin b;
	(void)state;
	assert_int_equal(tf_pybin_probe(&b, "/bin/sh"), 0);
	assert_int_equal(b.status, TF_PYBIN_NOT_PYTHON);
	assert_null(b.layout);
	tf_pybin_clear(&b);
	assert_true(tf_pybin_probe(&b, "/nonexistent/python3.11") < 0);
	assert_int_equal(b.status, TF_PYBIN_UNREADABLE);
	tf_pybin_clear(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line_tables),
		cmocka_unit_test(test_module_names),
		cmocka_unit_test(test_qualnames_from_source),
		cmocka_unit_test(test_candidates),
		cmocka_unit_test(test_probe_not_python),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
