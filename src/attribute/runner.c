/*
 * runner.c - the test runners' own reports: which tests ran, under the
 * names the runner gives them, how long each took and whether it passed.
 *
 * Samples cannot say which tests ran: a test of a millisecond is missed by
 * a 99 Hz sampler more often than not. The runner knows. We read what the
 * runners write anyway, or what we ask them to write:
 *
 *   JUnit XML   GoogleTest (--gtest_output / GTEST_OUTPUT), pytest
 *               --junitxml, ctest --output-junit, Maven, ...
 *   go test -json, TAP, and ctest's Testing/Temporary/LastTest.log, whose
 *   captured output also names the tests of the Unity, cmocka and
 *   GoogleTest programs ctest ran ("file.c:12:test_x:PASS",
 *   "[       OK ] Suite.Name (3 ms)").
 *
 * Every reader takes untrusted text: a malformed report yields the tests
 * read so far and an error naming the file and line, never a crash.
 * Durations keep their resolution (a GoogleTest "0.001" is a millisecond
 * clock, ctest's "0.00 sec" a 10 ms one), which the comparison needs to
 * tell a 0 from a "less than one tick".
 */
#include "attribute_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

void tf_runner_tests_free(tf_runner_tests *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->v.n; i++) {
		tf_runner_test *r = &t->v.v[i];
		free(r->name);
		free(r->parent);
		free(r->suite);
		free(r->test);
		free(r->type_param);
		free(r->argv);
		free(r->program);
	}
	for (size_t i = 0; i < t->notes.n; i++)
		free(t->notes.v[i]);
	tf_vec_free(&t->notes);
	tf_vec_free(&t->v);
}

static tf_runner_test *add_test(tf_runner_tests *t, const char *runner, const char *parent)
{
	tf_runner_test r;
	memset(&r, 0, sizeof(r));
	r.runner = runner;
	r.duration_ns = NAN;
	r.quantum_ns = NAN;
	r.parent = parent && *parent ? tf_xstrdup(parent) : NULL;
	tf_vec_push(&t->v, r);
	return &t->v.v[t->v.n - 1];
}

/* Seconds as a runner wrote them ("0.001", "1.5e-3"); the resolution is
 * that of the last digit written. */
static bool parse_seconds(const char *s, double *ns, double *quantum)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || !(v >= 0) || v > 1e7)
		return false;
	const char *unit = end;
	while (*unit == ' ')
		unit++;
	if (*unit && strcmp(unit, "sec") != 0 && strcmp(unit, "s") != 0)
		return false;
	const char *dot = memchr(s, '.', (size_t)(end - s));
	int decimals = 0;
	if (dot && !memchr(s, 'e', (size_t)(end - s)) && !memchr(s, 'E', (size_t)(end - s)))
		for (const char *d = dot + 1; isdigit((unsigned char)*d); d++)
			decimals++;
	*ns = v * 1e9;
	*quantum = decimals >= 9 ? 1 : pow(10, 9 - decimals);
	/* "0" says less than the clock's tick, not which tick: runners that
	 * print seconds keep milliseconds at least */
	if (!decimals && v == 0)
		*quantum = 1e6;
	return true;
}

/* "2026-11-25T13:46:20.123" (GoogleTest: local time, no zone) or with a
 * trailing Z / +hh:mm; 0 when not a timestamp or not one between 1970
 * and 2286. */
static uint64_t parse_timestamp(const char *s)
{
	struct tm tm;
	memset(&tm, 0, sizeof(tm));
	char *end = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!end)
		return 0;
	/* the fraction's digits, to the nanosecond (go test writes nine;
	 * strtod would take ".5e99" as well) */
	uint64_t frac_ns = 0;
	if (*end == '.') {
		uint64_t scale = 100000000;
		for (end++; isdigit((unsigned char)*end); end++, scale /= 10)
			frac_ns += (uint64_t)(*end - '0') * scale;
	}
	if (*end && *end != 'Z' && *end != '+' && *end != '-')
		return 0;
	time_t secs;
	if (*end) {
		secs = timegm(&tm);
		if (*end == '+' || *end == '-') {
			/* a zone is hh, hh:mm or hhmm, within a day */
			unsigned hh, mm = 0;
			const char *z = end + 1;
			if (!isdigit((unsigned char)z[0]) || !isdigit((unsigned char)z[1]))
				return 0;
			hh = (unsigned)(z[0] - '0') * 10 + (unsigned)(z[1] - '0');
			z += 2 + (z[2] == ':');
			if (isdigit((unsigned char)z[0]) && isdigit((unsigned char)z[1])) {
				mm = (unsigned)(z[0] - '0') * 10 + (unsigned)(z[1] - '0');
				z += 2;
			}
			if (*z || hh > 23 || mm > 59)
				return 0;
			secs -= (*end == '+' ? 1 : -1) * (time_t)(hh * 3600 + mm * 60);
		}
	} else {
		tm.tm_isdst = -1;
		secs = mktime(&tm);
	}
	/* up to the year 2286, so that the nanoseconds fit */
	if (secs <= 0 || secs >= 10000000000)
		return 0;
	return (uint64_t)secs * 1000000000ULL + frac_ns;
}

/* The next line of `*text` as a new string (its newline and a CR before
 * it dropped), advancing *text; NULL at the end. */
static char *next_line(const char **text)
{
	const char *line = *text;
	if (!*line)
		return NULL;
	const char *nl = strchr(line, '\n');
	size_t len = nl ? (size_t)(nl - line) : strlen(line);
	*text = line + len + (nl ? 1 : 0);
	if (len && line[len - 1] == '\r')
		len--;
	return tf_xstrndup(line, len);
}

/* XML: a small pull tokenizer, enough for JUnit reports. */

typedef struct {
	const char *p, *end;
	const char *file;
	bool bad;
	size_t line0; /* for messages */
	const char *start;
} xml;

typedef struct {
	char name[64];
	bool close, empty;
	TF_VEC(char *) keys;
	TF_VEC(char *) vals;
} xml_tag;

static void tag_clear(xml_tag *t)
{
	for (size_t i = 0; i < t->keys.n; i++) {
		free(t->keys.v[i]);
		free(t->vals.v[i]);
	}
	t->keys.n = t->vals.n = 0;
	t->name[0] = '\0';
	t->close = t->empty = false;
}

static void tag_free(xml_tag *t)
{
	tag_clear(t);
	tf_vec_free(&t->keys);
	tf_vec_free(&t->vals);
}

static const char *tag_attr(const xml_tag *t, const char *key)
{
	for (size_t i = 0; i < t->keys.n; i++)
		if (strcmp(t->keys.v[i], key) == 0)
			return t->vals.v[i];
	return NULL;
}

/* Decode entities of s[0..n) into a new string. */
char *tf_xml_text(const char *s, size_t n)
{
	tf_buf b = TF_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '&') {
			tf_buf_putc(&b, s[i]);
			continue;
		}
		const char *semi = memchr(s + i, ';', TF_MIN(n - i, (size_t)12));
		if (!semi) {
			tf_buf_putc(&b, '&');
			continue;
		}
		size_t el = (size_t)(semi - (s + i)) + 1;
		const char *e = s + i + 1;
		if (el == 4 && !strncmp(e, "lt;", 3))
			tf_buf_putc(&b, '<');
		else if (el == 4 && !strncmp(e, "gt;", 3))
			tf_buf_putc(&b, '>');
		else if (el == 5 && !strncmp(e, "amp;", 4))
			tf_buf_putc(&b, '&');
		else if (el == 6 && !strncmp(e, "quot;", 5))
			tf_buf_putc(&b, '"');
		else if (el == 6 && !strncmp(e, "apos;", 5))
			tf_buf_putc(&b, '\'');
		else if (e[0] == '#') {
			char *ee;
			unsigned long cp = e[1] == 'x' || e[1] == 'X' ? strtoul(e + 2, &ee, 16)
								      : strtoul(e + 1, &ee, 10);
			if (ee != semi || cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
				tf_buf_putc(&b, '&');
				continue;
			}
			/* UTF-8 */
			if (cp < 0x80) {
				tf_buf_putc(&b, (char)cp);
			} else if (cp < 0x800) {
				tf_buf_putc(&b, (char)(0xC0 | (cp >> 6)));
				tf_buf_putc(&b, (char)(0x80 | (cp & 0x3F)));
			} else if (cp < 0x10000) {
				tf_buf_putc(&b, (char)(0xE0 | (cp >> 12)));
				tf_buf_putc(&b, (char)(0x80 | ((cp >> 6) & 0x3F)));
				tf_buf_putc(&b, (char)(0x80 | (cp & 0x3F)));
			} else {
				tf_buf_putc(&b, (char)(0xF0 | (cp >> 18)));
				tf_buf_putc(&b, (char)(0x80 | ((cp >> 12) & 0x3F)));
				tf_buf_putc(&b, (char)(0x80 | ((cp >> 6) & 0x3F)));
				tf_buf_putc(&b, (char)(0x80 | (cp & 0x3F)));
			}
		} else {
			tf_buf_putc(&b, '&');
			continue;
		}
		i += el - 1;
	}
	char *out = tf_xstrdup(b.ptr ? b.ptr : "");
	tf_buf_free(&b);
	return out;
}

static const char *find(const char *p, const char *end, const char *what)
{
	size_t n = strlen(what);
	while (p && p + n <= end) {
		const char *q = memchr(p, what[0], (size_t)(end - p));
		if (!q || q + n > end)
			return NULL;
		if (memcmp(q, what, n) == 0)
			return q;
		p = q + 1;
	}
	return NULL;
}

static size_t line_of(const xml *x, const char *at)
{
	size_t line = 1;
	for (const char *p = x->start; p < at && p < x->end; p++)
		line += *p == '\n';
	return line;
}

/* The next element tag; comments, declarations, CDATA and text are
 * skipped. Returns 1 with a tag, 0 at the end, -1 on malformed input. */
static int xml_next(xml *x, xml_tag *t)
{
	tag_clear(t);
	for (;;) {
		const char *lt = x->p < x->end ? memchr(x->p, '<', (size_t)(x->end - x->p)) : NULL;
		if (!lt)
			return 0;
		x->p = lt;
		if (x->end - lt >= 4 && !memcmp(lt, "<!--", 4)) {
			const char *e = find(lt + 4, x->end, "-->");
			if (!e)
				return -1;
			x->p = e + 3;
			continue;
		}
		if (x->end - lt >= 9 && !memcmp(lt, "<![CDATA[", 9)) {
			const char *e = find(lt + 9, x->end, "]]>");
			if (!e)
				return -1;
			x->p = e + 3;
			continue;
		}
		if (x->end - lt >= 2 && (lt[1] == '?' || lt[1] == '!')) {
			const char *e = memchr(lt, '>', (size_t)(x->end - lt));
			if (!e)
				return -1;
			x->p = e + 1;
			continue;
		}
		break;
	}
	const char *p = x->p + 1;
	if (p < x->end && *p == '/') {
		t->close = true;
		p++;
	}
	size_t n = 0;
	while (p < x->end && (isalnum((unsigned char)*p) || strchr("_-.:", *p))) {
		if (n < sizeof(t->name) - 1)
			t->name[n++] = *p;
		p++;
	}
	t->name[n] = '\0';
	if (!n)
		return -1;
	for (;;) {
		while (p < x->end && isspace((unsigned char)*p))
			p++;
		if (p >= x->end)
			return -1;
		if (*p == '>') {
			x->p = p + 1;
			return 1;
		}
		if (*p == '/' && p + 1 < x->end && p[1] == '>') {
			t->empty = true;
			x->p = p + 2;
			return 1;
		}
		const char *k = p;
		while (p < x->end && !isspace((unsigned char)*p) && *p != '=' && *p != '>' && *p != '/')
			p++;
		const char *ke = p;
		while (p < x->end && isspace((unsigned char)*p))
			p++;
		if (p >= x->end || *p != '=' || ke == k || t->close)
			return -1;
		p++;
		while (p < x->end && isspace((unsigned char)*p))
			p++;
		if (p >= x->end || (*p != '"' && *p != '\''))
			return -1;
		char q = *p++;
		const char *v = p;
		p = memchr(p, q, (size_t)(x->end - p));
		if (!p)
			return -1;
		if (t->keys.n < 64) {
			tf_vec_push(&t->keys, tf_xstrndup(k, (size_t)(ke - k)));
			tf_vec_push(&t->vals, tf_xml_text(v, (size_t)(p - v)));
		}
		p++;
	}
}

static bool is_tag(const xml_tag *t, const char *name)
{
	return strcmp(t->name, name) == 0;
}

/*
 * JUnit XML. A testcase's name: GoogleTest writes classname "Suite" (or
 * "Prefix/Suite", "Suite/0") and name "Name" (or "Name/0"), which it calls
 * Suite.Name; pytest writes the module path and the function; ctest writes
 * its test's name in both. We keep "classname.name" unless the classname is
 * the name itself or empty.
 */
static int read_junit(tf_runner_tests *out, const char *text, size_t len, const char *file,
		      const char *parent)
{
	xml x = { text, text + len, file, false, 0, text };
	xml_tag t;
	int rc = 0, depth_case = 0;
	tf_runner_test *cur = NULL;
	size_t cur_idx = 0;
	bool gtest = false;

	memset(&t, 0, sizeof(t));
	for (;;) {
		int k = xml_next(&x, &t);
		if (k == 0)
			break;
		if (k < 0) {
			rc = tf_error_set(TF_EINVAL, "%s:%zu: malformed XML", file, line_of(&x, x.p));
			break;
		}
		if (is_tag(&t, "testcase") && !t.close) {
			const char *name = tag_attr(&t, "name");
			const char *cls = tag_attr(&t, "classname");
			const char *time = tag_attr(&t, "time");
			if (!name || !*name)
				continue;
			cur = add_test(out, "junit", parent);
			cur_idx = out->v.n - 1;
			if (tag_attr(&t, "status") && tag_attr(&t, "result"))
				gtest = true;
			if (cls && *cls && strcmp(cls, name) != 0) {
				cur->name = tf_xasprintf("%s.%s", cls, name);
				cur->suite = tf_xstrdup(cls);
				cur->test = tf_xstrdup(name);
			} else {
				cur->name = tf_xstrdup(name);
			}
			if (time)
				parse_seconds(time, &cur->duration_ns, &cur->quantum_ns);
			/* GoogleTest prints whole milliseconds as seconds ("0.004", "0") */
			if (tag_attr(&t, "status") && tag_attr(&t, "result") && !isnan(cur->quantum_ns))
				cur->quantum_ns = 1e6;
			if (tag_attr(&t, "timestamp"))
				cur->start_realtime_ns = parse_timestamp(tag_attr(&t, "timestamp"));
			if (tag_attr(&t, "type_param"))
				cur->type_param = tf_xstrdup(tag_attr(&t, "type_param"));
			const char *st = tag_attr(&t, "status"), *res = tag_attr(&t, "result");
			cur->status = TF_TEST_PASSED;
			if ((st && strcmp(st, "notrun") == 0) || (res && strcmp(res, "skipped") == 0))
				cur->status = TF_TEST_SKIPPED;
			depth_case = t.empty ? 0 : 1;
			if (t.empty)
				cur = NULL;
			continue;
		}
		if (!cur)
			continue;
		cur = &out->v.v[cur_idx];
		if (is_tag(&t, "testcase") && t.close) {
			cur = NULL;
			depth_case = 0;
			continue;
		}
		if (depth_case && !t.close) {
			if (is_tag(&t, "failure") || is_tag(&t, "error"))
				cur->status = TF_TEST_FAILED;
			else if (is_tag(&t, "skipped") && cur->status != TF_TEST_FAILED)
				cur->status = TF_TEST_SKIPPED;
		}
	}
	if (gtest)
		for (size_t i = 0; i < out->v.n; i++)
			if (out->v.v[i].runner && strcmp(out->v.v[i].runner, "junit") == 0)
				out->v.v[i].runner = "gtest";
	tag_free(&t);
	return rc;
}

/* A JSON string field "Key":"value" of one line, unescaped enough for
 * test names (\" \\ \/ \uXXXX of ASCII); NULL when absent. */
static char *json_field(const char *line, const char *key)
{
	char pat[32];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(line, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (*p == ' ')
		p++;
	if (*p != '"') {
		const char *e = p;
		while (*e && *e != ',' && *e != '}' && *e != ' ')
			e++;
		return e > p ? tf_xstrndup(p, (size_t)(e - p)) : NULL;
	}
	tf_buf b = TF_BUF_INIT;
	for (p++; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1]) {
			p++;
			if (*p == 'u' && isxdigit((unsigned char)p[1]) && isxdigit((unsigned char)p[2]) &&
			    isxdigit((unsigned char)p[3]) && isxdigit((unsigned char)p[4])) {
				char hex[5] = { p[1], p[2], p[3], p[4], 0 };
				unsigned long cp = strtoul(hex, NULL, 16);
				tf_buf_putc(&b, cp > 0 && cp < 0x80 ? (char)cp : '?');
				p += 4;
			} else {
				tf_buf_putc(&b, *p == 'n' ? '\n' : *p == 't' ? '\t' : *p);
			}
		} else {
			tf_buf_putc(&b, *p);
		}
	}
	char *s = tf_xstrdup(b.ptr ? b.ptr : "");
	tf_buf_free(&b);
	return s;
}

/* go test -json: one event per line; a test ends with pass, fail or skip
 * and its Elapsed seconds (two decimals). Tests are "TestX" and
 * "TestX/sub", as `go test -run` takes them. A test begins at its "run"
 * event: the end events of subtests come out together when their parent
 * ends. */
static int read_go_json(tf_runner_tests *out, const char *text, const char *file,
			const char *parent)
{
	char *l;
	tf_strtab started;
	TF_VEC(uint64_t) start_at = { 0 };
	(void)file;
	tf_strtab_init(&started);
	while ((l = next_line(&text)) != NULL) {
		char *action = json_field(l, "Action");
		char *test = action ? json_field(l, "Test") : NULL;
		if (test && *test && !strcmp(action, "run")) {
			char *tm = json_field(l, "Time");
			uint32_t id = tf_strtab_intern(&started, test, strlen(test));
			while (start_at.n <= id)
				tf_vec_push(&start_at, 0);
			start_at.v[id] = tm ? parse_timestamp(tm) : 0;
			free(tm);
		}
		if (test && *test &&
		    (!strcmp(action, "pass") || !strcmp(action, "fail") || !strcmp(action, "skip"))) {
			tf_runner_test *r = add_test(out, "go", parent);
			r->name = test;
			test = NULL;
			char *el = json_field(l, "Elapsed");
			if (el)
				parse_seconds(el, &r->duration_ns, &r->quantum_ns);
			if (el && !isnan(r->duration_ns))
				r->quantum_ns = TF_MAX(r->quantum_ns, 1e7);
			/* when it began: which subtest a closure's samples belong to */
			uint32_t id = tf_strtab_lookup(&started, r->name, strlen(r->name));
			if (id != TF_HTAB_NONE && id < start_at.n)
				r->start_realtime_ns = start_at.v[id];
			free(el);
			r->status = !strcmp(action, "pass") ? TF_TEST_PASSED
				    : !strcmp(action, "fail") ? TF_TEST_FAILED : TF_TEST_SKIPPED;
		}
		free(test);
		free(action);
		free(l);
	}
	tf_strtab_free(&started);
	tf_vec_free(&start_at);
	return 0;
}

/* TAP: "ok N - description", "not ok N description # SKIP ...". */
static int read_tap(tf_runner_tests *out, const char *text, const char *parent)
{
	char *l;
	while ((l = next_line(&text)) != NULL) {
		char *p = l;
		bool ok = true;
		while (*p == ' ')
			p++;
		if (!strncmp(p, "not ok", 6)) {
			ok = false;
			p += 6;
		} else if (!strncmp(p, "ok", 2) && (p[2] == ' ' || !p[2])) {
			p += 2;
		} else {
			p = NULL;
		}
		if (p) {
			while (*p == ' ')
				p++;
			while (isdigit((unsigned char)*p))
				p++;
			while (*p == ' ' || *p == '-')
				p++;
			/* the directive after the description, or in its place
			 * ("ok 3 # skip no network", "not ok 3 # SKIP test_x" of
			 * cmocka): a test without a description has no name */
			char *hash = !strncmp(p, "# ", 2) ? p : strstr(p, " # ");
			bool skip = false;
			if (hash) {
				const char *d = hash + (*hash == ' ' ? 3 : 2);
				skip = !strncasecmp(d, "skip", 4) || !strncasecmp(d, "todo", 4);
				*hash = '\0';
			}
			size_t n = strlen(p);
			while (n && p[n - 1] == ' ')
				p[--n] = '\0';
			if (n) {
				tf_runner_test *r = add_test(out, "tap", parent);
				r->name = tf_xstrdup(p);
				r->status = skip ? TF_TEST_SKIPPED : ok ? TF_TEST_PASSED : TF_TEST_FAILED;
			}
		}
		free(l);
	}
	return 0;
}

/*
 * A line of a test program's output that names one of its tests, as
 * ctest keeps it in LastTest.log:
 *   Unity      "path/file.c:123:test_name:PASS" (or FAIL, IGNORE)
 *   GoogleTest "[       OK ] Suite.Name (3 ms)" / "[  FAILED  ] Suite.Name (3 ms)"
 *   cmocka     "[       OK ] test_name" / "[  FAILED  ] test_name"
 */
static void output_line(tf_runner_tests *out, const char *l, const char *parent)
{
	if (!strncmp(l, "[       OK ] ", 13) || !strncmp(l, "[  FAILED  ] ", 13) ||
	    !strncmp(l, "[  SKIPPED ] ", 13)) {
		const char *name = l + 13;
		const char *end = name;
		while (*end && *end != ' ' && *end != ',')
			end++;
		if (end == name)
			return;
		/* the summary lines ("[  FAILED  ] 2 tests, listed below:") */
		if (isdigit((unsigned char)*name) && !strncmp(end, " test", 5))
			return;
		/* GoogleTest says how long a test took; cmocka does not */
		tf_runner_test *r = add_test(out, "cmocka", parent);
		r->name = tf_xstrndup(name, (size_t)(end - name));
		r->status = l[3] == 'F' ? TF_TEST_FAILED : l[3] == 'S' ? TF_TEST_SKIPPED : TF_TEST_PASSED;
		const char *ms = strstr(end, " (");
		char *e;
		if (ms) {
			double v = strtod(ms + 2, &e);
			if (e != ms + 2 && !strncmp(e, " ms)", 4) && v >= 0 && v < 1e10) {
				r->duration_ns = v * 1e6;
				r->quantum_ns = 1e6;
				r->runner = "gtest";
			}
		}
		return;
	}
	/* Unity: FILE:LINE:NAME:RESULT[:message] */
	const char *c1 = strchr(l, ':');
	if (!c1 || c1 == l)
		return;
	const char *p = c1 + 1;
	if (!isdigit((unsigned char)*p))
		return;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p != ':')
		return;
	const char *name = p + 1, *c3 = strchr(name, ':');
	if (!c3 || c3 == name)
		return;
	for (const char *q = name; q < c3; q++)
		if (!isalnum((unsigned char)*q) && *q != '_')
			return;
	const char *res = c3 + 1;
	tf_test_status st;
	if (!strncmp(res, "PASS", 4) && (!res[4] || res[4] == ':' || res[4] == '\r'))
		st = TF_TEST_PASSED;
	else if (!strncmp(res, "FAIL", 4))
		st = TF_TEST_FAILED;
	else if (!strncmp(res, "IGNORE", 6))
		st = TF_TEST_SKIPPED;
	else
		return;
	tf_runner_test *r = add_test(out, "unity", parent);
	r->name = tf_xstrndup(name, (size_t)(c3 - name));
	r->status = st;
}

/*
 * ctest's Testing/Temporary/LastTest.log: per test, a block
 *   3/213 Testing: NAME
 *   3/213 Test: NAME
 *   Command: "/path/prog" "arg"
 *   ...
 *   Output:
 *   ----------------------------------------------------------
 *   (the program's output)
 *   <end of output>
 *   Test time =   0.00 sec
 *   ----------------------------------------------------------
 *   Test Passed.            (or Test Failed. / Test Not Run.)
 * Times have 10 ms resolution. The command line of each test is kept in
 * `parent` of an entry with runner "ctest-command" (a NUL-separated argv
 * after the name), for naming its process when /proc was too slow to read.
 */
static int read_ctest_log(tf_runner_tests *out, const char *text, const char *file)
{
	tf_runner_test *cur = NULL;
	size_t cur_idx = 0;
	bool in_output = false;
	char *l;
	(void)file;

	while ((l = next_line(&text)) != NULL) {
		const char *slash = strchr(l, '/');
		const char *testing = strstr(l, " Testing: ");
		if (cur)
			cur = &out->v.v[cur_idx];
		if (testing && slash && slash < testing && isdigit((unsigned char)l[0])) {
			/* a test has a name (ctest refuses an empty one): a
			 * block without one is none of the tests */
			cur = NULL;
			in_output = false;
			if (testing[10]) {
				cur = add_test(out, "ctest", NULL);
				cur_idx = out->v.n - 1;
				cur->name = tf_xstrdup(testing + 10);
				cur->status = TF_TEST_PASSED;
			}
		} else if (cur && !in_output && !cur->argv && !strncmp(l, "Command: ", 9)) {
			/* the block's first command line, ctest writes one */
			/* "a" "b c" -> a NUL b c NUL */
			tf_buf argv = TF_BUF_INIT;
			for (const char *p = l + 9; *p;) {
				while (*p == ' ')
					p++;
				if (*p != '"')
					break;
				const char *q = strchr(p + 1, '"');
				if (!q)
					break;
				tf_buf_put(&argv, p + 1, (size_t)(q - p - 1));
				tf_buf_putc(&argv, '\0');
				p = q + 1;
			}
			if (argv.len) {
				cur->argv = tf_xmalloc(argv.len);
				memcpy(cur->argv, argv.ptr, argv.len);
				cur->argv_len = argv.len;
			}
			tf_buf_free(&argv);
		} else if (cur && !strcmp(l, "Output:")) {
			in_output = true;
		} else if (cur && in_output && !strcmp(l, "<end of output>")) {
			in_output = false;
		} else if (cur && in_output) {
			if (strncmp(l, "----------", 10) != 0) {
				char *parent = tf_xstrdup(cur->name);
				output_line(out, l, parent);
				free(parent);
				cur = &out->v.v[cur_idx];
			}
		} else if (cur && !strncmp(l, "Test time = ", 12)) {
			const char *v = l + 12;
			while (*v == ' ')
				v++;
			parse_seconds(v, &cur->duration_ns, &cur->quantum_ns);
		} else if (cur && !strncmp(l, "Test Failed", 11)) {
			cur->status = TF_TEST_FAILED;
		} else if (cur && !strncmp(l, "Test Not Run", 12)) {
			cur->status = TF_TEST_SKIPPED;
		}
		free(l);
	}
	return 0;
}

int tf_runner_read_text(tf_runner_tests *out, const char *text, size_t len, const char *file,
			const char *parent)
{
	const char *p = text;
	if (memchr(text, '\0', len))
		return tf_error_set(TF_EINVAL, "'%s' is not a test report (it holds binary data)", file);
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	if (!strncmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	if (*p == '<')
		return read_junit(out, text, len, file, parent);
	if (*p == '{')
		return read_go_json(out, text, file, parent);
	if (strstr(text, " Testing: ") && strstr(text, "Test time ="))
		return read_ctest_log(out, text, file);
	if (!strncmp(p, "TAP version", 11) || !strncmp(p, "ok ", 3) || !strncmp(p, "not ok", 6) ||
	    !strncmp(p, "1..", 3))
		return read_tap(out, text, parent);
	return tf_error_set(TF_EINVAL,
			    "'%s' is not a test report testflame reads (JUnit XML, go test -json, "
			    "TAP or ctest's LastTest.log)", file);
}

int tf_runner_read_file(tf_runner_tests *out, const char *path, const char *parent)
{
	tf_buf b = TF_BUF_INIT;
	int rc = tf_file_read(&b, path);
	if (rc) {
		tf_buf_free(&b);
		return rc;
	}
	rc = tf_runner_read_text(out, b.ptr ? b.ptr : "", b.len, path, parent);
	tf_buf_free(&b);
	return rc;
}

/* GTEST_OUTPUT=xml:DIR/ writes DIR/<program>.xml, or <program>_1.xml when
 * that exists: the program is the parent of the tests in it. */
int tf_runner_read_gtest_dir(tf_runner_tests *out, const char *dir, uint64_t not_before_realtime_ns)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int rc = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n < 5 || strcmp(e->d_name + n - 4, ".xml") != 0)
			continue;
		char *prog = tf_xstrndup(e->d_name, n - 4);
		/* foo_test_1 -> foo_test (only the numbered copies) */
		char *us = strrchr(prog, '_');
		if (us && us[1]) {
			bool digits = true;
			for (char *q = us + 1; *q; q++)
				digits = digits && isdigit((unsigned char)*q);
			char *alt = tf_xasprintf("%s/%.*s.xml", dir, (int)(us - prog), prog);
			struct stat st;
			if (digits && stat(alt, &st) == 0)
				*us = '\0';
			free(alt);
		}
		char *path = tf_xasprintf("%s/%s", dir, e->d_name);
		struct stat fst;
		if (stat(path, &fst) != 0 ||
		    (uint64_t)fst.st_mtim.tv_sec * 1000000000ULL + (uint64_t)fst.st_mtim.tv_nsec <
			    not_before_realtime_ns) {
			free(path);
			free(prog);
			continue; /* an earlier run's */
		}
		size_t before = out->v.n;
		int r = tf_runner_read_file(out, path, NULL);
		for (size_t i = before; i < out->v.n; i++) {
			out->v.v[i].runner = "gtest";
			out->v.v[i].program = tf_xstrdup(prog);
		}
		if (r && !rc)
			rc = r;
		free(path);
		free(prog);
	}
	closedir(d);
	return rc;
}
