/*
 * cxxlist.c - the tests of C++ frameworks' binaries (Catch2 v2, doctest,
 * Boost.Test), from the binaries' own lists.
 *
 * These frameworks run all their test cases in one process and print
 * nothing per test unless asked on the command line, which testflame must
 * not change; nor do they read a report's destination from the
 * environment (Boost.Test does, but its logger variable replaces the
 * command line's logging flags: the suite's output would change). What
 * they do have is a list, printed by the binary on request, apart from
 * the suite's run:
 *
 *   Catch2 v2  --list-test-names-only -v high   "name<TAB>@file:line"
 *   doctest    --list-test-cases --reporters=xml <TestCase name= filename= line=>
 *   Boost.Test --list_content                   the tree of suites and cases
 *
 * A binary is recognised by its functions (Catch::Session::run,
 * doctest::Context::run, boost::unit_test's), when it is mapped; its list
 * is read then, once per binary, with the process's own filters (Catch2's
 * test specs, doctest's -tc=/-ts=/-sf= and their exclusions) when it ends.
 * The list names the tests that ran, sampled or not; frames name where
 * their time went: Catch2's and doctest's test cases are anonymous
 * functions (C_A_T_C_H_T_E_S_T_4, DOCTEST_ANON_FUNC_7, numbered per
 * translation unit, so one name is many tests), told apart by the source
 * line their macro stands on, which both the list and the function's
 * DWARF declaration give; Boost's are Suite::Case::test_method, named
 * Suite/Case as Boost names them.
 */
#include "attribute_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define LIST_TIMEOUT_MS 10000
#define LIST_MAX (16u << 20)

enum { FW_NONE, FW_CATCH2, FW_DOCTEST, FW_BOOST };

static const char *const fw_names[] = { "", "catch2", "doctest", "boost" };

typedef struct {
	char *name;
	char *file;          /* as the framework wrote it; NULL for Boost */
	int line;
	bool runs;           /* run by default (Boost's enabled, doctest's not skipped) */
} cxx_test;

typedef TF_VEC(cxx_test) cxx_tests;

typedef struct {
	char *path;
	int fw;
	bool listed;         /* its list was read */
	cxx_tests tests;
} cxx_binary;

struct tf_cxx_lists {
	TF_VEC(cxx_binary) bins;
	bool any[4];         /* a binary of the framework was listed */
	tf_go_tests notes;   /* the lists that could not be read, and why */
};

tf_cxx_lists *tf_cxx_lists_new(void)
{
	return tf_xcalloc(1, sizeof(tf_cxx_lists));
}

static void tests_free(cxx_tests *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].name);
		free(t->v[i].file);
	}
	tf_vec_free(t);
}

void tf_cxx_lists_free(tf_cxx_lists *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->bins.n; i++) {
		free(l->bins.v[i].path);
		tests_free(&l->bins.v[i].tests);
	}
	tf_vec_free(&l->bins);
	tf_go_tests_free(&l->notes);
	free(l);
}

/* ---- the lists' texts ---------------------------------------------------- */

static void add(cxx_tests *out, char *name, char *file, int line, bool runs)
{
	cxx_test t = { name, file, line, runs };
	tf_vec_push(out, t);
}

/* Catch2 v2's --list-test-names-only -v high: a test a line, its source
 * after a tab and '@'; a name that begins with '#' is quoted. */
static void parse_catch2(cxx_tests *out, const char *text)
{
	const char *p = text;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char *l = tf_xstrndup(p, len);
		p += len + (nl ? 1 : 0);
		if (len && l[len - 1] == '\r')
			l[--len] = '\0';
		char *at = strstr(l, "\t@");
		char *colon = at ? strrchr(at, ':') : NULL;
		if (at && colon && isdigit((unsigned char)colon[1]) && at > l) {
			*at = '\0';
			*colon = '\0';
			char *name = l;
			size_t nl2 = strlen(name);
			if (name[0] == '"' && name[1] == '#' && nl2 > 2 && name[nl2 - 1] == '"') {
				name[nl2 - 1] = '\0';
				name++;
			}
			add(out, tf_xstrdup(name), tf_xstrdup(at + 2), atoi(colon + 1), true);
		}
		free(l);
	}
}

/* An attribute's value in one XML tag's text, decoded; NULL when absent. */
static char *xml_attr(const char *tag, const char *end, const char *key)
{
	size_t kl = strlen(key);
	for (const char *q = tag; q && q + kl + 2 < end; q++) {
		q = strstr(q, key);
		if (!q || q + kl + 2 >= end)
			return NULL;
		if ((q == tag || q[-1] != ' ') || q[kl] != '=' || q[kl + 1] != '"')
			continue;
		const char *v = q + kl + 2, *ve = memchr(v, '"', (size_t)(end - v));
		return ve ? tf_xml_text(v, (size_t)(ve - v)) : NULL;
	}
	return NULL;
}

/* doctest's --list-test-cases --reporters=xml: a <TestCase name=...
 * filename=... line=... skipped=.../> a test. */
static void parse_doctest(cxx_tests *out, const char *text)
{
	for (const char *p = strstr(text, "<TestCase "); p; p = strstr(p, "<TestCase ")) {
		const char *end = strchr(p, '>');
		if (!end)
			break;
		char *name = xml_attr(p, end, "name"), *file = xml_attr(p, end, "filename");
		char *line = xml_attr(p, end, "line"), *skipped = xml_attr(p, end, "skipped");
		if (name && *name && file && line)
			add(out, name, file, atoi(line), !skipped || strcmp(skipped, "true") != 0);
		else
			free(name), free(file);
		free(line);
		free(skipped);
		p = end;
	}
}

/* Boost.Test's --list_content: suites and cases, four spaces deeper a
 * level, a '*' after those that run by default; a case is a line the next
 * one is not deeper than. Names are the path below the master suite,
 * joined by '/'. */
static void parse_boost(cxx_tests *out, const char *text)
{
	typedef struct { size_t depth; char *name; bool on; } bline;
	TF_VEC(bline) lines = { 0 };
	TF_VEC(size_t) stack = { 0 }; /* the suites open, as line indexes */

	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p), ind = 0, e = len;
		while (ind < len && p[ind] == ' ')
			ind++;
		while (e > ind && (p[e - 1] == '\r' || p[e - 1] == ' '))
			e--;
		bool on = e > ind && p[e - 1] == '*';
		if (on)
			e--;
		if (e > ind && ind % 4 == 0) {
			bline bl = { ind / 4, tf_xstrndup(p + ind, e - ind), on };
			tf_vec_push(&lines, bl);
		}
		p += len + (nl ? 1 : 0);
	}
	for (size_t i = 0; i < lines.n; i++) {
		const bline *bl = &lines.v[i];
		if (stack.n > bl->depth)
			stack.n = bl->depth;
		if (stack.n < bl->depth)
			continue; /* deeper than any suite open: not a list */
		if (i + 1 < lines.n && lines.v[i + 1].depth > bl->depth) {
			tf_vec_push(&stack, i);
			continue;
		}
		tf_buf n = TF_BUF_INIT;
		bool runs = bl->on;
		for (size_t k = 0; k < stack.n; k++) {
			tf_buf_printf(&n, "%s/", lines.v[stack.v[k]].name);
			runs = runs && lines.v[stack.v[k]].on;
		}
		tf_buf_puts(&n, bl->name);
		add(out, tf_xstrdup(n.ptr), NULL, 0, runs);
		tf_buf_free(&n);
	}
	for (size_t i = 0; i < lines.n; i++)
		free(lines.v[i].name);
	tf_vec_free(&lines);
	tf_vec_free(&stack);
}

static void parse(cxx_tests *out, int fw, const char *text)
{
	if (fw == FW_CATCH2)
		parse_catch2(out, text);
	else if (fw == FW_DOCTEST)
		parse_doctest(out, text);
	else if (fw == FW_BOOST)
		parse_boost(out, text);
}

/* ---- which binaries, and what they ran ---------------------------------- */

typedef struct {
	int fw;
} detect_ctx;

/* The functions that tell each framework's binaries */
static const char *const fw_functions[] = {
	"Catch::Session::run", "doctest::Context::run",
	"boost::unit_test::make_test_case", "boost::unit_test::unit_test_main", NULL
};
static const int fw_of_function[] = { FW_CATCH2, FW_DOCTEST, FW_BOOST, FW_BOOST };

static void detect(void *ctx, const char *name)
{
	detect_ctx *d = ctx;
	for (size_t i = 0; !d->fw && fw_functions[i]; i++)
		if (strncmp(name, fw_functions[i], strlen(fw_functions[i])) == 0)
			d->fw = fw_of_function[i];
}

/* The list flags of each framework. */
static const char *const *list_flags(int fw)
{
	static const char *const catch2[] = { "--list-test-names-only", "-v", "high", NULL };
	static const char *const doctest[] = { "--list-test-cases", "--reporters=xml", NULL };
	static const char *const boost[] = { "--list_content", NULL };
	return fw == FW_CATCH2 ? catch2 : fw == FW_DOCTEST ? doctest : boost;
}

/* Run `path` with `filters` (NULL-terminated, may be NULL) and the list
 * flag, in a scratch directory (a list depends on no file; a binary that
 * ignores the flag and runs its tests writes nothing where the suite
 * runs); parse what it printed into `out`. -1 with the error set when it
 * printed no list. */
static int run_list(cxx_tests *out, int fw, const char *path, const char *const *filters)
{
	TF_VEC(const char *) argv = { 0 };
	tf_buf o = TF_BUF_INIT, e = TF_BUF_INIT;

	tf_vec_push(&argv, path);
	for (size_t i = 0; filters && filters[i]; i++)
		tf_vec_push(&argv, filters[i]);
	for (const char *const *f = list_flags(fw); *f; f++)
		tf_vec_push(&argv, *f);
	tf_vec_push(&argv, NULL);
	int st = tf_spawn_capture_scratch(&o, &e, argv.v, NULL, LIST_TIMEOUT_MS, LIST_MAX);
	tf_vec_free(&argv);
	size_t before = out->n;
	/* Catch2 v2 exits with the number of tests it listed */
	bool ok = st >= 0 && WIFEXITED(st) && (WEXITSTATUS(st) == 0 || fw == FW_CATCH2);
	if (ok) {
		/* Boost lists on stderr */
		const tf_buf *b = fw == FW_BOOST ? &e : &o;
		parse(out, fw, b->ptr ? b->ptr : "");
		/* an empty list is one only when the binary says it is done */
		ok = out->n > before || WEXITSTATUS(st) == 0;
	}
	tf_buf_free(&o);
	tf_buf_free(&e);
	if (ok) {
		tf_error_clear();
		return 0;
	}
	if (st >= 0)
		tf_error_set(TF_ERROR, "%s", WIFEXITED(st) ? "its list ended with a non-zero status"
							   : "its list was killed");
	return -1;
}

/* A note that what `path` ran is not known, with the error. */
static void note_failed(tf_cxx_lists *l, const char *path, const char *what)
{
	char *n = tf_xasprintf("%s: the %s tests it ran are not known (%s): only those its "
			       "samples name have a row", path, what, tf_error_last());
	for (size_t i = 0; i < l->notes.n; i++)
		if (strcmp(l->notes.v[i], n) == 0) {
			free(n);
			n = NULL;
			break;
		}
	if (n)
		tf_vec_push(&l->notes, n);
	tf_error_clear();
}

const tf_go_tests *tf_cxx_lists_notes(const tf_cxx_lists *l)
{
	return &l->notes;
}

int tf_cxx_detect(tf_cxx_lists *l, tf_symbolizer *sym, uint32_t pid, uint64_t addr,
		  const char *path, const char *cwd)
{
	static const char deleted[] = " (deleted)";
	size_t pl = strlen(path);
	for (size_t i = 0; i < l->bins.n; i++)
		if (strcmp(l->bins.v[i].path, path) == 0)
			return l->bins.v[i].fw ? (int)i + 1 : 0;
	cxx_binary b;
	memset(&b, 0, sizeof(b));
	b.path = tf_xstrdup(path);
	detect_ctx d = { FW_NONE };
	if (sym && path[0] == '/')
		tf_symbolizer_functions_named(sym, pid, addr, fw_functions, detect, &d);
	b.fw = d.fw;
	/* the list of a binary still there (a deleted one cannot be asked) */
	struct stat st;
	(void)cwd; /* a list does not depend on it */
	if (b.fw && ((pl > sizeof(deleted) - 1 && strcmp(path + pl - (sizeof(deleted) - 1), deleted) == 0) ||
		     stat(path, &st) != 0)) {
		tf_error_set(TF_ENOTFOUND, "the binary is gone");
		note_failed(l, path, fw_names[b.fw]);
	} else if (b.fw && run_list(&b.tests, b.fw, path, NULL) == 0) {
		b.listed = true;
		l->any[b.fw] = true;
	} else if (b.fw) {
		note_failed(l, path, fw_names[b.fw]);
	}
	tf_vec_push(&l->bins, b);
	return b.fw ? (int)l->bins.n : 0;
}

/* Whether `arg` starts with one of `prefixes` (doctest's also with "--dt-"
 * in front of the dashes' name). */
static bool doctest_filter(const char *arg)
{
	static const char *const filters[] = {
		"test-case=", "tc=", "test-case-exclude=", "tce=", "source-file=", "sf=",
		"source-file-exclude=", "sfe=", "test-suite=", "ts=", "test-suite-exclude=", "tse=",
		"no-skip", "ns", "first=", "last=", NULL,
	};
	const char *a = arg;
	if (a[0] != '-')
		return false;
	a += a[1] == '-' ? 2 : 1;
	if (strncmp(a, "dt-", 3) == 0)
		a += 3;
	for (size_t i = 0; filters[i]; i++) {
		size_t n = strlen(filters[i]);
		if (strncmp(a, filters[i], n) == 0 && (filters[i][n - 1] == '=' || !a[n] || a[n] == '='))
			return true;
	}
	return false;
}

/* Catch2's options that take a value (the next argument, or after '='). */
static bool catch2_takes_value(const char *arg)
{
	static const char *const opts[] = {
		"-o", "--out", "-r", "--reporter", "-n", "--name", "-w", "--warn", "-d",
		"--durations", "-D", "--min-duration", "-f", "--input-file", "-c", "--section",
		"-x", "--abortx", "-v", "--verbosity", "--order", "--rng-seed", "--use-colour",
		"--wait-for-keypress", "--benchmark-samples", "--benchmark-resamples",
		"--benchmark-confidence-interval", "--benchmark-warmup-time", "--shard-count",
		"--shard-index", "--colour-mode", NULL,
	};
	for (size_t i = 0; opts[i]; i++)
		if (strcmp(arg, opts[i]) == 0)
			return true;
	return false;
}

/* Whether an argument makes the binary list or explain, not run. */
static bool lists_only(int fw, const char *arg)
{
	if (!strcmp(arg, "-h") || !strcmp(arg, "-?") || !strcmp(arg, "--help"))
		return true;
	if (fw == FW_CATCH2)
		return !strcmp(arg, "-l") || !strcmp(arg, "-t") || !strncmp(arg, "--list", 6) ||
		       !strcmp(arg, "--libidentify");
	if (fw == FW_DOCTEST) {
		const char *a = arg + (arg[1] == '-' ? 2 : 1);
		if (strncmp(a, "dt-", 3) == 0)
			a += 3;
		return !strncmp(a, "list-", 5) || !strncmp(a, "ltc", 3) || !strncmp(a, "lts", 3) ||
		       !strncmp(a, "ltr", 3) || !strcmp(a, "count") || !strcmp(a, "c") ||
		       !strcmp(a, "version") || !strcmp(a, "v") || !strncmp(a, "help", 4);
	}
	return !strncmp(arg, "--list_", 7) || !strncmp(arg, "--help", 6) ||
	       !strcmp(arg, "--version");
}

/* The test name a filter names, when it names one without patterns
 * (Catch2's backslash escapes undone); NULL otherwise. */
static char *single_name(int fw, const char *f)
{
	const char *v = f;
	if (fw == FW_DOCTEST) {
		v += v[1] == '-' ? 2 : 1;
		if (strncmp(v, "dt-", 3) == 0)
			v += 3;
		if (strncmp(v, "test-case=", 10) == 0)
			v += 10;
		else if (strncmp(v, "tc=", 3) == 0)
			v += 3;
		else
			return NULL;
		return *v && !strpbrk(v, "*?,") ? tf_xstrdup(v) : NULL;
	}
	if (fw != FW_CATCH2 || !*v || *v == '~' || *v == '"' || strncmp(v, "exclude:", 8) == 0)
		return NULL;
	tf_buf b = TF_BUF_INIT;
	for (; *v; v++) {
		if (*v == '\\' && v[1]) {
			tf_buf_putc(&b, *++v);
			continue;
		}
		if (*v == '*' || *v == ',' || *v == '[') {
			tf_buf_free(&b);
			return NULL;
		}
		tf_buf_putc(&b, *v);
	}
	char *n = tf_xstrdup(b.ptr);
	tf_buf_free(&b);
	return n;
}

int tf_cxx_ran(tf_cxx_lists *l, int bin, const char *argv, size_t len, const char *cwd,
	       tf_go_tests *out)
{
	if (bin <= 0 || (size_t)bin > l->bins.n)
		return -1;
	cxx_binary *b = &l->bins.v[bin - 1];
	TF_VEC(const char *) filters = { 0 };
	tf_go_tests owned = { 0 };
	int rc = 0;

	if (!b->listed)
		return -1;
	if (!argv || !len) {
		/* it ended before its arguments were read: its filters are
		 * not known, its tests are those its samples name */
		tf_error_set(TF_ERROR, "it ended before its arguments could be read");
		note_failed(l, b->path, fw_names[b->fw]);
		return -1;
	}
	/* the arguments after argv[0] */
	size_t off = argv && len ? strlen(argv) + 1 : 0;
	for (; argv && off < len; off += strlen(argv + off) + 1) {
		const char *arg = argv + off;
		if (arg[0] == '-' && lists_only(b->fw, arg)) {
			tf_vec_free(&filters);
			tf_go_tests_free(&owned);
			return 0; /* it ran none */
		}
		if (b->fw == FW_CATCH2) {
			if (catch2_takes_value(arg)) {
				/* an input file of test names selects too */
				bool file = !strcmp(arg, "-f") || !strcmp(arg, "--input-file");
				bool shard = !strncmp(arg, "--shard-", 8);
				off += strlen(arg) + 1;
				if ((file || shard) && off < len) {
					tf_vec_push(&filters, arg);
					/* the list runs elsewhere: a file by its whole path */
					const char *v = argv + off;
					if (file && v[0] != '/' && cwd && *cwd) {
						char *abs = tf_xasprintf("%s/%s", cwd, v);
						tf_vec_push(&owned, abs);
						v = abs;
					}
					tf_vec_push(&filters, v);
				}
				if (off >= len)
					break;
			} else if (!strncmp(arg, "--input-file=", 13) && arg[13] != '/' && cwd && *cwd) {
				char *abs = tf_xasprintf("--input-file=%s/%s", cwd, arg + 13);
				tf_vec_push(&owned, abs);
				tf_vec_push(&filters, abs);
			} else if (arg[0] != '-' || !strcmp(arg, "-#") || !strcmp(arg, "--filenames-as-tags") ||
				   !strncmp(arg, "--input-file=", 13) || !strncmp(arg, "--shard-", 8)) {
				tf_vec_push(&filters, arg);
			}
		} else if (b->fw == FW_DOCTEST) {
			if (doctest_filter(arg))
				tf_vec_push(&filters, arg);
		} else if (!strncmp(arg, "--run_test", 10) || !strcmp(arg, "-t")) {
			/* Boost lists every case whatever it is to run */
			tf_vec_free(&filters);
			tf_go_tests_free(&owned);
			return -1;
		}
	}
	/* one test named alone (ctest's catch_discover_tests and
	 * doctest_discover_tests run a test a process): found in the list */
	const char *only = filters.n == 1 ? single_name(b->fw, filters.v[0]) : NULL;
	if (only) {
		const char *found = NULL;
		size_t hits = 0;
		for (size_t i = 0; i < b->tests.n; i++)
			if (strcasecmp(b->tests.v[i].name, only) == 0) {
				found = b->tests.v[i].name;
				hits++;
			}
		free((char *)only);
		if (hits == 1) {
			tf_vec_push(out, tf_xstrdup(found));
			tf_vec_free(&filters);
			tf_go_tests_free(&owned);
			return 0;
		}
	}
	cxx_tests ran = { 0 };
	cxx_tests *from = &b->tests;
	if (filters.n) {
		tf_vec_push(&filters, NULL);
		rc = run_list(&ran, b->fw, b->path, filters.v);
		if (rc)
			note_failed(l, b->path, fw_names[b->fw]);
		from = &ran;
	}
	for (size_t i = 0; !rc && i < from->n; i++)
		if (from->v[i].runs)
			tf_vec_push(out, tf_xstrdup(from->v[i].name));
	tests_free(&ran);
	tf_vec_free(&filters);
	tf_go_tests_free(&owned);
	return rc;
}

/* ---- frames -------------------------------------------------------------- */

/* How many trailing path components `a` and `b` share, both their base
 * names agreeing ("../tests/x.cpp" and "/src/p/tests/x.cpp": 2). */
static size_t common_tail(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = 0;
	for (;;) {
		const char *sa = la ? memrchr(a, '/', la) : NULL, *sb = lb ? memrchr(b, '/', lb) : NULL;
		const char *ca = sa ? sa + 1 : a, *cb = sb ? sb + 1 : b;
		size_t ka = la - (size_t)(ca - a), kb = lb - (size_t)(cb - b);
		if (ka != kb || memcmp(ca, cb, ka) != 0 || !ka || !strcmp(ca, "..") || !strcmp(ca, "."))
			return n;
		n++;
		if (!sa || !sb)
			return n;
		la = (size_t)(sa - a);
		lb = (size_t)(sb - b);
	}
}

/* Boost: "suite::case::test_method()" -> "suite/case" (anonymous
 * namespaces left out); false for another name. */
static bool boost_path(const char *fn, char *out, size_t n)
{
	static const char tm[] = "::test_method()";
	size_t len = strlen(fn), tl = sizeof(tm) - 1;
	if (len <= tl || strcmp(fn + len - tl, tm) != 0 || len - tl >= n)
		return false;
	size_t o = 0;
	for (size_t i = 0; i < len - tl;) {
		if (!strncmp(fn + i, "(anonymous namespace)::", 23)) {
			i += 23;
		} else if (fn[i] == ':' && fn[i + 1] == ':') {
			out[o++] = '/';
			i += 2;
		} else {
			out[o++] = fn[i++];
		}
	}
	out[o] = '\0';
	return o > 0;
}

/* Whether the Boost test `name` is `path`, or its tail after a '/' (the
 * frame has namespaces the suites do not). */
static bool path_tail(const char *path, const char *name)
{
	size_t lp = strlen(path), ln = strlen(name);
	return ln <= lp && strcmp(path + lp - ln, name) == 0 && (ln == lp || path[lp - ln - 1] == '/');
}

/* Boost: the listed case the frame's path ends with, the longest. */
static const char *boost_test(const tf_cxx_lists *l, const char *fn)
{
	char path[1024];
	const char *best = NULL;
	if (!boost_path(fn, path, sizeof(path)))
		return NULL;
	for (size_t i = 0; i < l->bins.n; i++) {
		const cxx_binary *b = &l->bins.v[i];
		for (size_t k = 0; b->fw == FW_BOOST && k < b->tests.n; k++)
			if (path_tail(path, b->tests.v[k].name) &&
			    (!best || strlen(b->tests.v[k].name) > strlen(best)))
				best = b->tests.v[k].name;
	}
	return best;
}

const char *tf_cxx_frame_test(const tf_cxx_lists *l, const char *fw, const char *fn,
			      const char *file, int line)
{
	int want = FW_NONE;
	for (int k = FW_CATCH2; k <= FW_BOOST; k++)
		if (fw && strcmp(fw, fw_names[k]) == 0)
			want = k;
	if (!l || !want || !l->any[want])
		return NULL;
	if (want == FW_BOOST)
		return boost_test(l, fn);
	bool anon = (strstr(fn, "C_A_T_C_H") && strstr(fn, "T_E_S_T")) ||
		    strstr(fn, "CATCH2_INTERNAL_TEST_") || strstr(fn, "DOCTEST_ANON_FUNC_") ||
		    strstr(fn, "DOCTEST_ANON_CLASS_");
	if (anon && file && *file && line > 0) {
		/* the test whose macro stands on the function's line, in the
		 * file whose path agrees with it furthest */
		const char *best = NULL;
		size_t best_tail = 0;
		for (size_t i = 0; i < l->bins.n; i++) {
			const cxx_binary *b = &l->bins.v[i];
			if (b->fw != want)
				continue;
			for (size_t k = 0; k < b->tests.n; k++) {
				const cxx_test *t = &b->tests.v[k];
				if (t->line != line || !t->file)
					continue;
				size_t tail = common_tail(t->file, file);
				if (tail > best_tail) {
					best = t->name;
					best_tail = tail;
				}
			}
		}
		return best;
	}
	return NULL;
}

int tf_cxx_lists_add(tf_cxx_lists *l, const char *path, const char *fw, const char *text)
{
	cxx_binary b;
	memset(&b, 0, sizeof(b));
	for (int k = FW_CATCH2; k <= FW_BOOST; k++)
		if (strcmp(fw, fw_names[k]) == 0)
			b.fw = k;
	if (!b.fw)
		return 0;
	b.path = tf_xstrdup(path);
	b.listed = true;
	l->any[b.fw] = true;
	parse(&b.tests, b.fw, text);
	tf_vec_push(&l->bins, b);
	return (int)l->bins.n;
}

const char *tf_cxx_framework(const tf_cxx_lists *l, int bin)
{
	return bin > 0 && (size_t)bin <= l->bins.n ? fw_names[l->bins.v[bin - 1].fw] : NULL;
}
