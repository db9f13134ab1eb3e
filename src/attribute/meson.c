/*
 * meson.c - meson's own test names for the processes `meson test` runs.
 *
 * Like ctest, meson does not tell its children which test they are; its
 * build directory does: meson-info/intro-tests.json lists every test with
 * its command (the program's path, then its arguments), its name and its
 * suites. A process `meson test` started is matched by its argv (the
 * whole command where several tests share a program). A test is named as
 * meson prints it, "SUITE / NAME" (the first suite, which is the project's
 * name when the test gave none: "libfoo / parse", "libfoo:slow / big"), so
 * two tests of one name in two suites stay two. meson's log of the run
 * (meson-logs/testlog.json, an object a line, under the same names) gives
 * each test's duration and result.
 */
#include "attribute_int.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
	char *name;     /* "SUITE / NAME" */
	char *argv;     /* NUL-separated */
	size_t len;
} meson_entry;

struct tf_meson {
	TF_VEC(meson_entry) tests;
	tf_runner_tests log;
};

/* One test of intro-tests.json; false when it is not one. */
static bool add_entry(tf_meson *m, json_t *t)
{
	const char *name = json_string_value(json_object_get(t, "name"));
	json_t *cmd = json_object_get(t, "cmd"), *suites = json_object_get(t, "suite");
	const char *suite = json_string_value(json_array_get(suites, 0));
	if (!name || !json_is_array(cmd) || !json_array_size(cmd))
		return false;
	tf_buf argv = TF_BUF_INIT;
	size_t i;
	json_t *a;
	json_array_foreach(cmd, i, a) {
		const char *s = json_string_value(a);
		if (!s) {
			tf_buf_free(&argv);
			return false;
		}
		tf_buf_put(&argv, s, strlen(s) + 1);
	}
	meson_entry e;
	e.len = argv.len;
	e.argv = tf_buf_detach(&argv);
	e.name = suite ? tf_xasprintf("%s / %s", suite, name) : tf_xstrdup(name);
	tf_vec_push(&m->tests, e);
	return true;
}

/* meson's log of a run: its tests, as it named them, with their times. */
static void read_log(tf_meson *m, const char *text)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		json_t *j = json_loadb(p, n, 0, NULL);
		const char *name = json_string_value(json_object_get(j, "name"));
		if (name) {
			tf_runner_test r;
			memset(&r, 0, sizeof(r));
			r.runner = "meson";
			r.name = tf_xstrdup(name);
			json_t *d = json_object_get(j, "duration");
			r.duration_ns = json_is_number(d) ? json_number_value(d) * 1e9 : NAN;
			r.quantum_ns = json_is_number(d) ? 1e3 : NAN; /* microseconds and finer */
			const char *res = json_string_value(json_object_get(j, "result"));
			r.status = !res ? TF_TEST_STATUS_UNKNOWN
				   : !strcmp(res, "OK") || !strcmp(res, "EXPECTEDFAIL") ? TF_TEST_PASSED
				   : !strcmp(res, "SKIP") ? TF_TEST_SKIPPED
							  : TF_TEST_FAILED;
			tf_vec_push(&m->log.v, r);
		}
		json_decref(j);
		p += n;
		if (*p)
			p++;
	}
}

tf_meson *tf_meson_parse(const char *text)
{
	tf_meson *m = tf_xcalloc(1, sizeof(*m));
	json_t *j = json_loads(text, 0, NULL), *t;
	size_t i;
	if (json_is_array(j))
		json_array_foreach(j, i, t)
			add_entry(m, t);
	json_decref(j);
	if (!m->tests.n) {
		tf_meson_free(m);
		return NULL;
	}
	return m;
}

tf_meson *tf_meson_load(const char *dir, uint64_t not_before_realtime_ns)
{
	tf_buf text = TF_BUF_INIT;
	char *path = tf_xasprintf("%s/meson-info/intro-tests.json", dir);
	tf_meson *m = tf_file_read(&text, path) == 0 ? tf_meson_parse(text.ptr) : NULL;
	tf_error_clear();
	free(path);
	if (m) {
		/* only a log this run wrote: an old one names tests that did not run */
		struct stat st;
		char *log = tf_xasprintf("%s/meson-logs/testlog.json", dir);
		tf_buf_clear(&text);
		if (stat(log, &st) == 0 &&
		    (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec >=
			    not_before_realtime_ns &&
		    tf_file_read(&text, log) == 0)
			read_log(m, text.ptr);
		tf_error_clear();
		free(log);
	}
	tf_buf_free(&text);
	return m;
}

const char *tf_meson_lookup(const tf_meson *m, const char *argv, size_t len)
{
	const char *only = NULL;
	size_t matches = 0;
	if (!m || !len)
		return NULL;
	for (size_t i = 0; i < m->tests.n; i++) {
		const meson_entry *e = &m->tests.v[i];
		if (strcmp(e->argv, argv) != 0)
			continue;
		/* the whole command line decides between tests sharing a program */
		if (e->len == len && memcmp(e->argv, argv, len) == 0)
			return e->name;
		only = e->name;
		matches++;
	}
	return matches == 1 ? only : NULL;
}

bool tf_meson_runs(const tf_meson *m, const char *program)
{
	for (size_t i = 0; m && i < m->tests.n; i++) {
		const char *slash = strrchr(m->tests.v[i].argv, '/');
		if (strcmp(slash ? slash + 1 : m->tests.v[i].argv, program) == 0)
			return true;
	}
	return false;
}

const tf_runner_tests *tf_meson_log(const tf_meson *m)
{
	return m ? &m->log : NULL;
}

void tf_meson_free(tf_meson *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->tests.n; i++) {
		free(m->tests.v[i].name);
		free(m->tests.v[i].argv);
	}
	tf_vec_free(&m->tests);
	tf_runner_tests_free(&m->log);
	free(m);
}
