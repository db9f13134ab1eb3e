/*
 * golist.c - the tests of a Go test binary, from the binary itself.
 *
 * `go test` prints nothing per test unless asked (-v, -json), and asking
 * would change its output; but its test binary (pkg.test, built in a
 * temporary directory and deleted when it exits: the symbolizer pins it
 * while it runs) holds its own list. _testmain.go names every test,
 * fuzz target and example with output of the package in tables the linker
 * keeps, and every function it names is kept with it: the package's
 * top-level TestXxx, FuzzXxx and ExampleXxx functions in the binary are
 * that list (`go test -list .` prints the same). Its -test.run and
 * -test.skip arguments say which of them ran; the top-level part of the
 * pattern (before the first '/') decides a top-level test, as Go's
 * matcher does. Subtests are named where -json says (runner.c), else a
 * closure's samples count for its top-level test.
 */
#include "attribute_int.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const char *stem;     /* the binary's name without ".test" */
	size_t stem_len;
	tf_go_tests *out;
} collect_ctx;

/* Whether `fn` is a name `go test` runs: Test, Fuzz or Example followed
 * by nothing or by a character that is not a lower-case letter. */
static bool runnable(const char *fn)
{
	static const char *const kinds[] = { "Test", "Fuzz", "Example" };
	if (strchr(fn, '.') || strcmp(fn, "TestMain") == 0)
		return false; /* a closure, a method; TestMain runs the others */
	for (size_t i = 0; i < TF_ARRAY_SIZE(kinds); i++) {
		size_t n = strlen(kinds[i]);
		if (strncmp(fn, kinds[i], n) == 0)
			return !(fn[n] >= 'a' && fn[n] <= 'z');
	}
	return false;
}

/* Whether the package path `pkg` is the one the binary `stem` tests: its
 * last element, its external test package (_test), or the element before
 * a major version suffix (example.com/foo/v2 builds foo.test). */
static bool tested_package(const char *pkg, size_t len, const collect_ctx *c)
{
	const char *last = memrchr(pkg, '/', len);
	const char *el = last ? last + 1 : pkg;
	size_t el_len = len - (size_t)(el - pkg);
	if (el_len >= 5 && memcmp(el + el_len - 5, "_test", 5) == 0)
		el_len -= 5;
	if (el_len == c->stem_len && memcmp(el, c->stem, el_len) == 0)
		return true;
	if (last && el_len >= 2 && el[0] == 'v' && el[1] >= '1' && el[1] <= '9') {
		const char *prev = last > pkg ? memrchr(pkg, '/', (size_t)(last - pkg)) : NULL;
		const char *p = prev ? prev + 1 : pkg;
		return (size_t)(last - p) == c->stem_len && memcmp(p, c->stem, c->stem_len) == 0;
	}
	return false;
}

static void collect(void *ctx, const char *name)
{
	collect_ctx *c = ctx;
	const char *slash = strrchr(name, '/');
	const char *dot = strchr(slash ? slash + 1 : name, '.');
	if (!dot || !runnable(dot + 1) || !tested_package(name, (size_t)(dot - name), c))
		return;
	for (size_t i = 0; i < c->out->n; i++)
		if (strcmp(c->out->v[i], dot + 1) == 0)
			return;
	tf_vec_push(c->out, tf_xstrdup(dot + 1));
}

void tf_go_tests_read(tf_go_tests *out, tf_symbolizer *sym, uint32_t pid, uint64_t addr,
		      const char *binary)
{
	size_t n = strlen(binary);
	if (!sym || n <= 5 || strcmp(binary + n - 5, ".test") != 0)
		return;
	collect_ctx c = { binary, n - 5, out };
	tf_symbolizer_functions(sym, pid, addr, collect, &c);
}

void tf_go_tests_free(tf_go_tests *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	tf_vec_free(t);
}

/* The top-level part of a -test.run/-test.skip pattern: up to the first
 * '/' outside brackets and parentheses. */
static char *top_level(const char *pat, bool *has_sub)
{
	int depth = 0;
	bool bracket = false;
	const char *p = pat;
	for (; *p; p++) {
		if (*p == '\\' && p[1]) {
			p++;
		} else if (bracket) {
			bracket = *p != ']';
		} else if (*p == '[') {
			bracket = true;
		} else if (*p == '(') {
			depth++;
		} else if (*p == ')') {
			depth--;
		} else if (*p == '/' && depth == 0) {
			break;
		}
	}
	*has_sub = *p == '/';
	return tf_xstrndup(pat, (size_t)(p - pat));
}

/* -test.NAME's value in a NUL-separated argv, or NULL. */
static const char *flag_value(const char *argv, size_t len, const char *flag)
{
	size_t fl = strlen(flag);
	for (size_t off = 0; off < len;) {
		const char *arg = argv + off;
		size_t al = strlen(arg);
		if (arg[0] == '-' && arg[1] == '-')
			arg++; /* --test.run as -test.run */
		if (strncmp(arg, flag, fl) == 0) {
			if (arg[fl] == '=')
				return arg + fl + 1;
			if (!arg[fl] && off + al + 1 < len)
				return argv + off + al + 1;
		}
		off += al + 1;
	}
	return NULL;
}

int tf_go_tests_select(tf_go_tests *tests, const char *argv, size_t len)
{
	const char *run = flag_value(argv, len, "-test.run");
	const char *skip = flag_value(argv, len, "-test.skip");
	const char *list = flag_value(argv, len, "-test.list");
	regex_t rr, sr;
	bool rsub, ssub, have_run = false, have_skip = false;
	int rc = 0;

	if (!len || list)
		return -1; /* what it ran is unknown, or it ran nothing */
	if (run && *run) {
		char *top = top_level(run, &rsub);
		have_run = regcomp(&rr, top, REG_EXTENDED | REG_NOSUB) == 0;
		rc = have_run ? 0 : -1;
		free(top);
	}
	if (!rc && skip && *skip) {
		char *top = top_level(skip, &ssub);
		/* a skip with a subtest part skips subtests, not the test */
		have_skip = !ssub && regcomp(&sr, top, REG_EXTENDED | REG_NOSUB) == 0;
		free(top);
	}
	size_t k = 0;
	for (size_t i = 0; !rc && i < tests->n; i++) {
		char *t = tests->v[i];
		bool keep = (!have_run || regexec(&rr, t, 0, NULL, 0) == 0) &&
			    (!have_skip || regexec(&sr, t, 0, NULL, 0) != 0);
		if (keep)
			tests->v[k++] = t;
		else
			free(t);
	}
	if (!rc)
		tests->n = k;
	if (have_run)
		regfree(&rr);
	if (have_skip)
		regfree(&sr);
	return rc;
}

/* Whether `arg` (-run, --run=X, -test.skip, ...) is one of go test's
 * flags that choose tests, as "-test.NAME": its length, else 0. */
static size_t choosing_flag(const char *arg, char *out, size_t n)
{
	static const char *const names[] = { "run", "skip", "list" };
	if (arg[0] != '-')
		return 0;
	arg += arg[1] == '-' ? 2 : 1;
	if (strncmp(arg, "test.", 5) == 0)
		arg += 5;
	size_t len = strcspn(arg, "=");
	for (size_t i = 0; i < TF_ARRAY_SIZE(names); i++)
		if (len == strlen(names[i]) && strncmp(arg, names[i], len) == 0)
			return (size_t)snprintf(out, n, "-test.%s", names[i]);
	return 0;
}

bool tf_go_test_flags(tf_buf *out, const char *argv, size_t len)
{
	if (!argv || !len)
		return false;
	const char *a1 = argv + strlen(argv) + 1, *b = strrchr(argv, '/');
	if (strcmp(b ? b + 1 : argv, "go") != 0 || (size_t)(a1 - argv) >= len ||
	    strcmp(a1, "test") != 0)
		return false;
	tf_buf_clear(out);
	tf_buf_put(out, "-test.paniconexit0", 19); /* as go passes it; never empty */
	bool verbatim = false;
	for (size_t off = (size_t)(a1 - argv) + strlen(a1) + 1; off < len;) {
		const char *arg = argv + off;
		off += strlen(arg) + 1;
		char flag[16];
		if (verbatim) {
			tf_buf_put(out, arg, strlen(arg) + 1);
		} else if (strcmp(arg, "-args") == 0 || strcmp(arg, "--args") == 0) {
			verbatim = true; /* the rest goes to the test binary as it is */
		} else if (choosing_flag(arg, flag, sizeof(flag))) {
			const char *eq = strchr(arg, '=');
			const char *val = eq ? eq + 1 : off < len ? argv + off : NULL;
			if (!eq && val)
				off += strlen(val) + 1;
			if (val) {
				tf_buf_printf(out, "%s=%s", flag, val);
				tf_buf_put(out, "", 1);
			}
		}
	}
	return true;
}

bool tf_go_closure_test(const char *name, char *out, size_t n)
{
	static const char *const kinds[] = { "Test", "Fuzz", "Example", "Benchmark" };
	size_t top = strcspn(name, "./");
	bool kind = false;
	for (size_t i = 0; i < TF_ARRAY_SIZE(kinds) && !kind; i++)
		kind = strncmp(name, kinds[i], strlen(kinds[i])) == 0;
	if (!kind || !name[top] || top >= n)
		return false;
	if (name[top] == '.' && strncmp(name + top, ".func", 5) != 0)
		return false; /* a method of a type named Test..., not a closure */
	memcpy(out, name, top);
	out[top] = '\0';
	return true;
}
