/*
 * ctest.c - ctest's own test names for processes run by ctest.
 *
 * ctest does not tell its children which test they are; the build tree
 * does: every CTestTestfile.cmake lists `add_test(NAME "command" "args"...)`
 * and `subdirs("dir")`. We read them from the directory ctest ran in and
 * match a process by its argv (the command, then its arguments too when
 * several tests share a program). ctest's log of the run
 * (Testing/Temporary/LastTest.log) lists the tests in the order they
 * ended (under -j too), which names the processes whose arguments were
 * gone before we could read them: by the one test that runs their
 * program, or in the order they ended once every process read has taken
 * its own; and gives each test's time and status.
 */
#include "attribute_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
	char *name;
	char *argv;     /* NUL-separated */
	size_t len;
} ctest_entry;

struct tf_ctest {
	TF_VEC(ctest_entry) tests;
	/* LastTest.log of this run: every test ctest ran, in order, with its
	 * command, time and status, and the tests its programs' output named */
	tf_runner_tests log;
	TF_VEC(bool) claimed;     /* per log entry: a process took its name */
};

/* Read one CMake argument: "quoted", [=[bracket]=] or bare. */
static const char *cmake_arg(const char *p, tf_buf *out)
{
	tf_buf_clear(out);
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1]) {
				p++;
				tf_buf_putc(out, *p == 'n' ? '\n' : *p == 't' ? '\t' : *p);
			} else {
				tf_buf_putc(out, *p);
			}
		}
		return *p ? p + 1 : p;
	}
	if (*p == '[') {
		const char *q = p + 1;
		size_t eq = 0;
		while (*q == '=')
			q++, eq++;
		if (*q == '[') {
			char close[64];
			if (eq > 60)
				return NULL;
			close[0] = ']';
			memset(close + 1, '=', eq);
			close[eq + 1] = ']';
			close[eq + 2] = '\0';
			const char *e = strstr(q + 1, close);
			if (!e) { /* unterminated: the rest of the file, as for a quote */
				tf_buf_puts(out, q + 1);
				return q + 1 + strlen(q + 1);
			}
			tf_buf_put(out, q + 1, (size_t)(e - q - 1));
			return e + eq + 2;
		}
	}
	if (*p == ')' || !*p)
		return NULL;
	while (*p && *p != ' ' && *p != '\t' && *p != ')' && *p != '\n')
		tf_buf_putc(out, *p++);
	return p;
}

static void load_file(tf_ctest *c, const char *dir, int depth);

/* One CTestTestfile.cmake's text; its subdirs are read from under `dir`. */
static void parse_file(tf_ctest *c, const char *text, const char *dir, int depth)
{
	tf_buf arg = TF_BUF_INIT, argv = TF_BUF_INIT;

	for (const char *line = text; line && *line;) {
		const char *next = strchr(line, '\n');
		if (strncmp(line, "add_test(", 9) == 0) {
			const char *p = cmake_arg(line + 9, &arg), *last = p;
			if (p) {
				ctest_entry e = { tf_xstrdup(arg.ptr ? arg.ptr : ""), NULL, 0 };
				tf_buf_clear(&argv);
				while ((p = cmake_arg(p, &arg))) {
					tf_buf_put(&argv, arg.ptr ? arg.ptr : "", arg.len + 1);
					last = p;
				}
				/* a quoted argument may span lines: go on after the
				 * command, not inside it (each line would otherwise
				 * rescan the rest of the file) */
				if (next && last > next)
					next = strchr(last, '\n');
				e.len = argv.len;
				e.argv = tf_xmalloc(argv.len + 1);
				if (argv.len)
					memcpy(e.argv, argv.ptr, argv.len);
				tf_vec_push(&c->tests, e);
			}
		} else if (strncmp(line, "subdirs(", 8) == 0) {
			const char *p = cmake_arg(line + 8, &arg);
			if (p && next && p > next)
				next = strchr(p, '\n');
			if (p && arg.len) {
				char *sub = arg.ptr[0] == '/' ? tf_xstrdup(arg.ptr)
							      : tf_xasprintf("%s/%s", dir, arg.ptr);
				load_file(c, sub, depth + 1);
				free(sub);
			}
		}
		line = next ? next + 1 : NULL;
	}
	tf_buf_free(&arg);
	tf_buf_free(&argv);
}

static void load_file(tf_ctest *c, const char *dir, int depth)
{
	char *path = tf_xasprintf("%s/CTestTestfile.cmake", dir);
	tf_buf text = TF_BUF_INIT;

	if (depth <= 32 && tf_file_read(&text, path) == 0)
		parse_file(c, text.ptr, dir, depth);
	free(path);
	tf_buf_free(&text);
}

tf_ctest *tf_ctest_parse(const char *text, const char *dir)
{
	tf_ctest *c = tf_xcalloc(1, sizeof(*c));
	parse_file(c, text, dir, 0);
	if (!c->tests.n) {
		tf_ctest_free(c);
		return NULL;
	}
	return c;
}

tf_ctest *tf_ctest_load(const char *dir, uint64_t not_before_realtime_ns)
{
	tf_ctest *c = tf_xcalloc(1, sizeof(*c));
	struct stat st;
	load_file(c, dir, 0);
	if (!c->tests.n) {
		tf_ctest_free(c);
		return NULL;
	}
	/* only a log this run wrote: an old one names tests that did not run */
	char *log = tf_xasprintf("%s/Testing/Temporary/LastTest.log", dir);
	if (stat(log, &st) == 0 &&
	    (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec >=
		    not_before_realtime_ns)
		tf_runner_read_file(&c->log, log, NULL);
	tf_error_clear();
	free(log);
	for (size_t i = 0; i < c->log.v.n; i++)
		tf_vec_push(&c->claimed, false);
	return c;
}

const tf_runner_tests *tf_ctest_log(const tf_ctest *c)
{
	return c ? &c->log : NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Claim the first unclaimed ctest entry of the log named `name`, or, with
 * name NULL, running `program`: ctest writes a test to its log when it
 * ends, so of the processes not named by their arguments, the k-th of a
 * program to end is the k-th test left that runs it. */
static const char *claim(tf_ctest *c, const char *name, const char *program)
{
	for (size_t i = 0; i < c->log.v.n; i++) {
		const tf_runner_test *r = &c->log.v.v[i];
		if (c->claimed.v[i] || strcmp(r->runner, "ctest") != 0)
			continue;
		if (name ? strcmp(r->name, name) == 0 : tf_ctest_runs(r, program)) {
			c->claimed.v[i] = true;
			return r->name;
		}
	}
	return NULL;
}

static bool same_program(const char *want, const char *got, const char *cwd)
{
	if (strcmp(want, got) == 0)
		return true;
	if (got[0] != '/' && cwd && *cwd) {
		char *abs = tf_xasprintf("%s/%s", cwd, got);
		bool eq = strcmp(abs, want) == 0;
		free(abs);
		return eq;
	}
	return false;
}

static const char *lookup_argv(const tf_ctest *c, const char *argv, size_t len, const char *cwd)
{
	const char *only = NULL;
	size_t matches = 0;

	if (!c || !len)
		return NULL;
	for (size_t i = 0; i < c->tests.n; i++) {
		const ctest_entry *e = &c->tests.v[i];
		if (!e->len || !same_program(e->argv, argv, cwd))
			continue;
		/* the whole command line decides between tests sharing a program */
		if (e->len == len && memcmp(e->argv, argv, len) == 0)
			return e->name;
		size_t a = strlen(e->argv) + 1, b = strlen(argv) + 1;
		if (e->len - a == len - b && memcmp(e->argv + a, argv + b, len - b) == 0)
			return e->name;
		only = e->name;
		matches++;
	}
	return matches == 1 ? only : NULL;
}

const char *tf_ctest_lookup(tf_ctest *c, const char *argv, size_t len, const char *cwd)
{
	const char *name = lookup_argv(c, argv, len, cwd);
	if (name)
		claim(c, name, NULL);
	return name;
}

bool tf_ctest_runs(const tf_runner_test *r, const char *program)
{
	return strcmp(r->runner, "ctest") == 0 && r->argv && strcmp(base_name(r->argv), program) == 0;
}

size_t tf_ctest_ran(const tf_ctest *c, const char *program)
{
	size_t n = 0;
	for (size_t i = 0; c && i < c->log.v.n; i++)
		n += tf_ctest_runs(&c->log.v.v[i], program);
	return n;
}

const char *tf_ctest_next(tf_ctest *c, const char *program)
{
	return c && program && *program ? claim(c, NULL, program) : NULL;
}

void tf_ctest_free(tf_ctest *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->tests.n; i++) {
		free(c->tests.v[i].name);
		free(c->tests.v[i].argv);
	}
	tf_vec_free(&c->tests);
	tf_runner_tests_free(&c->log);
	tf_vec_free(&c->claimed);
	free(c);
}
