/*
 * test_report.c - the report writers on comparisons built in memory: the
 * escapers and the name cleaner (invalid bytes, control and bidi
 * characters, shortening), safe file names, SHA-256 and base64 against
 * published vectors, source links per code host, colours, the Markdown
 * budget (trimming, the hard cut), GitHub annotations within GitHub's
 * limits, Code Quality, JUnit, folded diffs, the page's data (CSP hash,
 * pruning budget, no "</script" in the data), the directory writer and
 * the report of a run without a baseline.
 */
#include "unit.h"
#include "testflame/report.h"
#include "report/report_int.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <sys/stat.h>

#define PERIOD 10000000

static tf_profile *new_run(const char *commit)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period = PERIOD;
	tf_profile_set_meta(p, "event", "cpu-clock");
	if (commit)
		tf_profile_set_meta(p, "commit", commit);
	return p;
}

/* `n` samples of `test` with frames root first: names[i] in files[i]
 * (NULL: "src/<i>.c") at line 10 + i. Names may hold any bytes. */
static void add(tf_profile *p, const char *test, int64_t n, const char *const *names,
		const char *const *files, size_t depth)
{
	uint32_t locs[32];
	for (size_t i = 0; i < depth; i++) {
		char file[32];
		snprintf(file, sizeof(file), "src/%zu.c", i);
		tf_line l = { tf_profile_function(p, names[i], files ? files[i] : file, 5), 10 + (int64_t)i, 0 };
		locs[depth - 1 - i] = tf_profile_add_location(p, TF_NO_MAPPING, 0, &l, 1);
	}
	int64_t v[2] = { n, n * PERIOD };
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	tf_profile_add_sample(p, locs, (uint32_t)depth, v, &lab, 1);
}

static tf_comparison *compare(tf_profile *b, tf_profile *h)
{
	tf_comparison *c = NULL;
	const char *bn[1] = { "base.pb.gz" }, *hn[1] = { "head.pb.gz" };
	tf_compare_side bs = { (const tf_profile *const *)&b, bn, 1 };
	tf_compare_side hs = { (const tf_profile *const *)&h, hn, 1 };
	if (tf_compare(&c, &bs, &hs, NULL))
		fail_msg("tf_compare: %s", tf_error_last());
	return c;
}

/* `ntests` tests; the first `nreg` grow (their leaf doubles). */
static tf_comparison *suite(tf_profile **b, tf_profile **h, size_t ntests, size_t nreg,
			    const char *prefix)
{
	*b = new_run("1111111111111111");
	*h = new_run("2222222222222222");
	tf_profile_set_meta(*h, "ci", "github");
	tf_profile_set_meta(*h, "repository", "acme/widgets");
	for (size_t i = 0; i < ntests; i++) {
		char test[256], leaf[256];
		snprintf(test, sizeof(test), "%s%04zu", prefix, i);
		snprintf(leaf, sizeof(leaf), "leaf_%zu", i);
		const char *st[3] = { "main", "run", leaf };
		add(*b, test, 1000, st, NULL, 3);
		add(*h, test, i < nreg ? 2000 : 1000, st, NULL, 3);
	}
	return compare(*b, *h);
}

static void free_suite(tf_comparison *c, tf_profile *b, tf_profile *h)
{
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/* ---- names ---------------------------------------------------------- */

static void test_clean(void **state)
{
	(void)state;
	char *s = rp_clean("a\xff" "b\x1b[31m\xe2\x80\xae" "c\n", 0);
	assert_string_equal(s, "a\xef\xbf\xbd" "b\xef\xbf\xbd[31m\xef\xbf\xbd" "c\xef\xbf\xbd");
	free(s);
	/* 10 code points, 4 of them two bytes: cut to 7 in the middle */
	s = rp_clean("\xc3\xa9" "bcdefghi\xc3\xa9", 7);
	assert_string_equal(s, "\xc3\xa9" "b\xe2\x80\xa6" "ghi\xc3\xa9");
	free(s);
	s = rp_clean(NULL, 3);
	assert_string_equal(s, "");
	free(s);
	/* a C1 control (U+0085) and a BOM go too */
	s = rp_clean("x\xc2\x85y\xef\xbb\xbfz", 0);
	assert_string_equal(s, "x\xef\xbf\xbdy\xef\xbf\xbdz");
	free(s);
}

static void test_escapers(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	rp_put_html(&b, "<a href=\"x\">'&'</a>", 0);
	assert_string_equal(b.ptr, "&lt;a href=&quot;x&quot;&gt;&apos;&amp;&apos;&lt;/a&gt;");
	tf_buf_clear(&b);
	rp_put_md(&b, "a|b `c` @d [e](f) *g* h_i a/b-c", 0);
	assert_string_equal(b.ptr, "a&#124;b &#96;c&#96; &#64;d &#91;e](f) &#42;g&#42; h_i a/b-c");
	tf_buf_clear(&b);
	/* what reads as it is: file:line, C++ scopes, symbol versions, dots */
	rp_put_md(&b, "__libc_start_main@GLIBC_2.2.5 lib.c:30 YAML::Utils::WriteAlias(a, b) x.y", 0);
	assert_string_equal(b.ptr, "&#95;&#95;libc_start_main&#64;GLIBC_2.2.5 lib.c:30 "
				   "YAML::Utils::WriteAlias(a, b) x.y");
	tf_buf_clear(&b);
	/* what could act, where it could: emphasis, autolinks, mentions, math, HTML */
	rp_put_md(&b, "_u_ http://e.x www.e.x a@b.c @team $x$ ~y <i>&", 0);
	assert_string_equal(b.ptr, "&#95;u&#95; http&#58;//e.x www&#46;e.x a&#64;b.c &#64;team "
				   "&#36;x&#36; &#126;y &#60;i&#62;&#38;");
	tf_buf_clear(&b);
	rp_put_md_text(&b, "ask @team", 0);
	assert_string_equal(b.ptr, "ask @\xe2\x81\xa0team");
	tf_buf_clear(&b);
	rp_put_json_html(&b, "</script><!--\xe2\x80\xa8\"\\", 0);
	assert_string_equal(b.ptr, "\"\\u003c/script\\u003e\\u003c!--\\u2028\\\"\\\\\"");
	tf_buf_clear(&b);
	rp_put_url_path(&b, "src/a b(c).c");
	assert_string_equal(b.ptr, "src/a%20b%28c%29.c");
	tf_buf_free(&b);
}

static void test_file_names(void **state)
{
	(void)state;
	char *a = tf_report_file_name("TestEncode", ".svg");
	assert_string_equal(a, "TestEncode.svg");
	free(a);
	const char *bad[] = { "../../etc/passwd", "a/b", "a:b", ".hidden", "-rf", "", "x y",
			      "\xff\xfe", "<script>" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(bad); i++) {
		char *n = tf_report_file_name(bad[i], ".svg");
		assert_true(n[0] != '.' && n[0] != '-');
		for (char *p = n; *p; p++)
			assert_true(isalnum((unsigned char)*p) || strchr("._-", *p));
		assert_true(strlen(n) < 100);
		free(n);
	}
	/* names that clean up alike still get two files */
	char *x = tf_report_file_name("a/b", ".svg"), *y = tf_report_file_name("a:b", ".svg");
	assert_string_not_equal(x, y);
	free(x);
	free(y);
	char big[5000];
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	char *z = tf_report_file_name(big, ".folded");
	assert_true(strlen(z) < 100);
	assert_non_null(strstr(z, ".folded"));
	free(z);
}

static void hex(char *out, const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", d[i]);
}

static void test_sha256_base64(void **state)
{
	(void)state;
	uint8_t h[32];
	char x[65];
	rp_sha256(h, "", 0);
	hex(x, h, 32);
	assert_string_equal(x, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	rp_sha256(h, "abc", 3);
	hex(x, h, 32);
	assert_string_equal(x, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	rp_sha256(h, m, strlen(m));
	hex(x, h, 32);
	assert_string_equal(x, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	char *mil = malloc(1000000);
	memset(mil, 'a', 1000000);
	rp_sha256(h, mil, 1000000);
	free(mil);
	hex(x, h, 32);
	assert_string_equal(x, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");

	tf_buf b = TF_BUF_INIT;
	const char *in[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	const char *want[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(in); i++) {
		tf_buf_clear(&b);
		tf_buf_puts(&b, "");
		rp_base64(&b, (const uint8_t *)in[i], strlen(in[i]));
		assert_string_equal(b.ptr, want[i]);
	}
	tf_buf_free(&b);
}

static void test_links(void **state)
{
	(void)state;
	tf_profile *b, *h;
	tf_comparison *c = suite(&b, &h, 1, 1, "T");
	tf_report_opts o;
	rp_ctx x;
	tf_buf u = TF_BUF_INIT;

	tf_report_opts_init(&o);
	rp_ctx_init(&x, c, &o);
	assert_string_equal(x.repo_url, "https://github.com/acme/widgets");
	assert_true(rp_put_source_url(&u, &x, "src/a b.c", 12));
	assert_string_equal(u.ptr, "https://github.com/acme/widgets/blob/2222222222222222/src/a%20b.c#L12");
	assert_null(rp_repo_path(&x, "/abs/x.c"));
	assert_string_equal(rp_repo_path(&x, "./src/x.c"), "src/x.c");
	assert_null(rp_repo_path(&x, "../x.c"));
	rp_ctx_free(&x);

	o.repo_url = "https://gitlab.example.com/group/proj/";
	o.source_root = "/builds/proj/";
	o.head_commit = "abcdef1";
	rp_ctx_init(&x, c, &o);
	tf_buf_clear(&u);
	assert_string_equal(rp_repo_path(&x, "/builds/proj/src/x.c"), "src/x.c");
	assert_null(rp_repo_path(&x, "/builds/project/x.c"));
	assert_true(rp_put_source_url(&u, &x, "src/x.c", 0));
	assert_string_equal(u.ptr, "https://gitlab.example.com/group/proj/-/blob/abcdef1/src/x.c");
	tf_buf_clear(&u);
	assert_true(rp_put_commit_url(&u, &x, "1111111111111111"));
	assert_string_equal(u.ptr, "https://gitlab.example.com/group/proj/-/commit/1111111111111111");
	rp_ctx_free(&x);

	/* what could break out of a link is refused */
	o.repo_url = "https://github.com/a/b)<script>";
	rp_ctx_init(&x, c, &o);
	assert_null(x.repo_url);
	rp_ctx_free(&x);
	o.repo_url = "https://github.com/a/b";
	o.head_commit = "main; rm -rf";
	rp_ctx_init(&x, c, &o);
	tf_buf_clear(&u);
	assert_false(rp_put_source_url(&u, &x, "x.c", 1));
	rp_ctx_free(&x);
	o.artifact_url = "javascript:alert(1)";
	rp_ctx_init(&x, c, &o);
	assert_null(x.o.artifact_url);
	rp_ctx_free(&x);

	tf_buf_free(&u);
	free_suite(c, b, h);
}

static void test_colours(void **state)
{
	(void)state;
	char c[8];
	rp_diff_colour(c, 100, 103, 5, false);
	assert_string_equal(c, "#e0e0e0");
	rp_diff_colour(c, 0, 10, 5, false);
	assert_string_equal(c, "#ec4034");
	rp_diff_colour(c, 10, 0, 5, false);
	assert_string_equal(c, "#4078e4");
	rp_diff_colour(c, 0, 10, 5, true);
	assert_string_equal(c, "#f08010");
	rp_diff_colour(c, 20, 30, 5, false);
	assert_string_equal(c, "#ea564c");
	rp_name_colour(c, "main");
	assert_int_equal(strlen(c), 7);
	char d[8];
	rp_name_colour(d, "main");
	assert_string_equal(c, d);
}

/* ---- Markdown ---------------------------------------------------------- */

static void test_markdown_budget(void **state)
{
	(void)state;
	tf_profile *b, *h;
	tf_comparison *c = suite(&b, &h, 400, 200, "suite/a_fairly_long_package_name/Test_");
	tf_report_opts o;
	tf_buf md = TF_BUF_INIT;

	tf_report_opts_init(&o);
	assert_int_equal(tf_report_markdown(&md, c, &o), 0);
	assert_true(md.len <= 65000);
	assert_true(strncmp(md.ptr, "<!-- testflame:report suite=tests -->\n", 38) == 0);
	assert_non_null(strstr(md.ptr, "**\xf0\x9f\x94\xba 200 of 400 tests regressed**"));
	assert_non_null(strstr(md.ptr, "_Left out to keep this short: 150 changed tests"));

	/* a small budget: fewer rows, still whole */
	o.md_max_bytes = 4000;
	tf_buf_clear(&md);
	tf_report_markdown(&md, c, &o);
	assert_true(md.len <= 4000);
	assert_non_null(strstr(md.ptr, "_Left out to keep this short:"));
	assert_non_null(strstr(md.ptr, "<sub>testflame"));

	/* a budget nothing fits in: cut, marker kept, never longer */
	o.md_max_bytes = 300;
	tf_buf_clear(&md);
	tf_report_markdown(&md, c, &o);
	assert_true(md.len <= 300);
	assert_true(strncmp(md.ptr, "<!-- testflame:report", 21) == 0);
	assert_non_null(strstr(md.ptr, "(cut to fit the size limit)"));

	/* the step summary: no marker, its own budget */
	tf_report_opts_init(&o);
	tf_buf_clear(&md);
	tf_report_step_summary(&md, c, &o);
	assert_null(strstr(md.ptr, "<!-- testflame"));
	assert_true(strncmp(md.ptr, "### testflame", 13) == 0);
	/* every change listed; function blocks for the first 100 */
	size_t rows = 0;
	for (const char *p = md.ptr; (p = strstr(p, "\n| \xf0\x9f\x94\xba regressed |")); p++)
		rows++;
	assert_int_equal(rows, 200);
	assert_non_null(strstr(md.ptr, "_Left out to keep this short: the functions of 100 regressed tests;"));
	assert_non_null(strstr(md.ptr, "| \xf0\x9f\x94\xba regressed | <code>suite/a_fairly"));

	tf_buf_free(&md);
	free_suite(c, b, h);
}

/* The work outside the tests, not judged, takes no test's place among
 * the functions shown, however much more it grew. */
static void test_markdown_outside_last(void **state)
{
	(void)state;
	tf_profile *b = new_run("1111111111111111"), *h = new_run("2222222222222222");
	const char *st[3] = { "main", "run", "hash" }, *sh[2] = { "main", "spawn" };
	tf_report_opts o;
	tf_buf md = TF_BUF_INIT;

	add(b, "test_hash", 1000, st, NULL, 3);
	add(h, "test_hash", 1500, st, NULL, 3);
	add(b, TF_OUTSIDE_TEST, 100, sh, NULL, 2);
	add(h, TF_OUTSIDE_TEST, 400, sh, NULL, 2);
	tf_comparison *c = compare(b, h);
	tf_report_opts_init(&o);
	assert_int_equal(tf_report_markdown(&md, c, &o), 0);
	assert_non_null(strstr(md.ptr, "**\xf0\x9f\x94\xba 1 of 1 test regressed**"));
	assert_non_null(strstr(md.ptr, "<code>test_hash</code> +50.0%"));
	assert_non_null(strstr(md.ptr, "where it grew"));
	assert_null(strstr(md.ptr, "_Left out to keep this short"));
	/* its row says which way it moved, not a verdict, here and in the
	 * terminal's table */
	const tf_test_delta *out = NULL;
	for (size_t i = 0; i < c->ntests; i++)
		if (c->tests[i].outside)
			out = &c->tests[i];
	assert_non_null(out);
	assert_int_equal(out->verdict, TF_VERDICT_REGRESSED);
	assert_non_null(strstr(md.ptr, "\n| slower | <code>&#91;outside tests]</code> | "));
	assert_null(strstr(md.ptr, "regressed | <code>&#91;outside tests]"));
	tf_table_opts t;
	tf_table_opts_init(&t);
	t.color = false;
	tf_buf_clear(&md);
	assert_int_equal(tf_comparison_render_table(&md, c, &t), 0);
	assert_non_null(strstr(md.ptr, "\n  slower "));
	assert_non_null(strstr(md.ptr, "\n  regressed "));
	assert_non_null(strstr(md.ptr, "REGRESSION: 1 test slower by at least"));
	tf_buf_free(&md);
	free_suite(c, b, h);
}

static void test_marker(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	tf_report_marker(&b, "unit --> <b>x</b>");
	assert_string_equal(b.ptr, "<!-- testflame:report suite=unit%20%2D%2D%3E%20%3Cb%3Ex%3C/b%3E -->\n");
	tf_buf_free(&b);
}

/* ---- GitHub ------------------------------------------------------------ */

/* Undo the runner's escaping of data or a property. */
static char *unescape(const char *s, size_t n)
{
	char *o = malloc(n + 1), *q = o;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n) {
			unsigned v;
			sscanf(s + i + 1, "%2X", &v);
			*q++ = (char)v;
			i += 2;
		} else {
			*q++ = s[i];
		}
	}
	*q = '\0';
	return o;
}

static void test_annotations(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	char big[3000];
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	for (int i = 0; i < 15; i++) {
		char test[64], fn[64];
		snprintf(test, sizeof(test), "T%02d\n::error::fake, a:b %%0A", i);
		snprintf(fn, sizeof(fn), "fn%d", i);
		const char *st[3] = { "main", i == 0 ? big : "run", fn };
		const char *files[3] = { "src/main.c", "src/run.c", "src/dir,with:odd%.c" };
		add(b, test, 1000, st, files, 3);
		add(h, test, 1500 + 100 * i, st, files, 3);
	}
	/* most tests of a suite do not change: the suite's spread is noise */
	for (int i = 0; i < 30; i++) {
		char test[32];
		const char *st[2] = { "main", "steady" };
		const char *files[2] = { "src/main.c", "src/steady.c" };
		snprintf(test, sizeof(test), "U%02d", i);
		add(b, test, 1000, st, files, 2);
		add(h, test, 990 + i % 3 * 10, st, files, 2);
	}
	tf_comparison *c = compare(b, h);
	tf_report_opts o;
	tf_buf out = TF_BUF_INIT;

	tf_report_opts_init(&o);
	assert_int_equal(tf_report_github_annotations(&out, c, &o), 0);
	int errors = 0, warnings = 0, lines = 0;
	for (char *line = out.ptr, *nl; line && *line; line = nl ? nl + 1 : NULL) {
		nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		lines++;
		assert_true(len < 4096);
		assert_true(strncmp(line, "::", 2) == 0);
		assert_null(memchr(line, '\r', len));
		if (strncmp(line, "::error ", 8) == 0)
			errors++;
		if (strncmp(line, "::warning ", 10) == 0) {
			warnings++;
			/* file=... is the repository path, its ',' and ':' escaped */
			assert_true(strncmp(line, "::warning file=src/dir%2Cwith%3Aodd%25.c,line=12,title=", 55) == 0);
			const char *t = line + 55, *end = strstr(t, "::");
			char *title = unescape(t, (size_t)(end - t));
			assert_true(strlen(title) <= 255 * 3);
			assert_non_null(strstr(title, "testflame: fn"));
			free(title);
		}
	}
	assert_int_equal(errors, 1);
	assert_int_equal(warnings, 10);
	assert_int_equal(lines, 11);
	/* the biggest growth first: T14 grew most */
	assert_non_null(strstr(out.ptr, "title=testflame%3A fn14 grew"));
	assert_non_null(strstr(out.ptr, "5 more grown functions than annotated here"));
	tf_buf_free(&out);
	tf_comparison_free(c);

	/* nothing regressed: nothing to say */
	c = compare(b, b);
	assert_int_equal(tf_report_github_annotations(&out, c, &o), 0);
	assert_int_equal(out.len, 0);
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_terminal(void **state)
{
	(void)state;
	tf_profile *b, *h;
	tf_comparison *c = suite(&b, &h, 3, 2, "T");
	tf_table_opts t;
	tf_buf out = TF_BUF_INIT;

	tf_table_opts_init(&t);
	assert_int_equal(tf_report_terminal(&out, c, &t, "out/index.html"), 0);
	assert_non_null(strstr(out.ptr, "REGRESSION: 2 tests slower"));
	assert_non_null(strstr(out.ptr, "functions that grew most across the regressed tests\n"));
	assert_non_null(strstr(out.ptr, "+10.0 s   leaf_0  2.c:12  in T0000\n"));
	assert_non_null(strstr(out.ptr, "\nreport: out/index.html\n"));
	assert_null(strchr(out.ptr, '\033'));
	tf_buf_clear(&out);
	t.color = true;
	tf_report_terminal(&out, c, &t, NULL);
	assert_non_null(strchr(out.ptr, '\033'));
	assert_null(strstr(out.ptr, "report:"));
	tf_buf_free(&out);
	free_suite(c, b, h);
}

/* ---- JUnit, Code Quality, folded ----------------------------------------- */

static void test_junit_codequality(void **state)
{
	(void)state;
	tf_profile *b, *h;
	tf_comparison *c = suite(&b, &h, 3, 1, "T<&>\"'");
	tf_report_opts o;
	tf_buf out = TF_BUF_INIT;
	json_error_t err;

	tf_report_opts_init(&o);
	o.suite = "s&s";
	tf_report_junit(&out, c, &o);
	assert_non_null(strstr(out.ptr, "<testsuite name=\"s&amp;s\" tests=\"3\" failures=\"1\""));
	assert_non_null(strstr(out.ptr, "<testcase name=\"T&lt;&amp;&gt;&quot;&apos;0000\" classname=\"s&amp;s\" time=\"20.000\">"));
	assert_non_null(strstr(out.ptr, "<failure type=\"performance-regression\" message=\"regressed +100.0% cpu-clock: 10.0 s -&gt; 20.0 s"));
	tf_buf_clear(&out);

	tf_report_codequality(&out, c, &o);
	json_t *j = json_loads(out.ptr, 0, &err);
	assert_non_null(j);
	assert_int_equal(json_array_size(j), 1);
	json_t *i0 = json_array_get(j, 0);
	assert_string_equal(json_string_value(json_object_get(i0, "severity")), "critical");
	assert_string_equal(json_string_value(json_object_get(json_object_get(i0, "location"), "path")), "src/2.c");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(i0, "location"), "lines"), "begin")), 12);
	char fp[64];
	snprintf(fp, sizeof(fp), "%s", json_string_value(json_object_get(i0, "fingerprint")));
	assert_int_equal(strlen(fp), 32);
	json_decref(j);
	/* same issue, other suite: another fingerprint */
	o.suite = "other";
	tf_buf_clear(&out);
	tf_report_codequality(&out, c, &o);
	assert_null(strstr(out.ptr, fp));
	tf_buf_free(&out);
	free_suite(c, b, h);
}

static void test_folded(void **state)
{
	(void)state;
	tf_profile *b, *h;
	tf_comparison *c = suite(&b, &h, 2, 1, "T");
	tf_buf out = TF_BUF_INIT;

	assert_int_equal(tf_report_folded_diff(&out, c, TF_EACH_TEST), 0);
	assert_string_equal(out.ptr, "T0000;main;run;leaf_0 10000000000 20000000000\n"
				     "T0001;main;run;leaf_1 10000000000 10000000000\n");
	tf_buf_clear(&out);
	assert_int_equal(tf_report_folded_diff(&out, c, 0), 0);
	assert_string_equal(out.ptr, "main;run;leaf_0 10000000000 20000000000\n");
	tf_buf_clear(&out);
	assert_int_equal(tf_report_folded_diff(&out, c, TF_ALL_TESTS), 0);
	assert_string_equal(out.ptr, "main;run;leaf_0 10000000000 20000000000\n"
				     "main;run;leaf_1 10000000000 10000000000\n");
	tf_buf_free(&out);
	free_suite(c, b, h);

	/* ';' in a name would split a frame, a newline a line */
	tf_profile *p = new_run(NULL);
	const char *st[2] = { "a;b", "c\nd" };
	add(p, "T", 5, st, NULL, 2);
	c = compare(p, p);
	tf_report_folded_diff(&out, c, 0);
	assert_string_equal(out.ptr, "a:b;c\xef\xbf\xbd" "d 50000000 50000000\n");
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(p);
}

/* ---- the page ----------------------------------------------------------- */

static char *between(const char *s, const char *open, const char *close)
{
	const char *a = strstr(s, open), *b;
	if (!a)
		return NULL;
	a += strlen(open);
	b = strstr(a, close);
	return b ? strndup(a, (size_t)(b - a)) : NULL;
}

static void test_html(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	/* 300 leaves of one test; a budget of 60 frames */
	for (int i = 0; i < 300; i++) {
		char leaf[32];
		snprintf(leaf, sizeof(leaf), "leaf_%03d</script>", i);
		const char *st[3] = { "main", "run", leaf };
		add(b, "T", 10 + i, st, NULL, 3);
		add(h, "T", 10 + i + (i == 299 ? 500 : 0), st, NULL, 3);
	}
	tf_comparison *c = compare(b, h);
	tf_report_opts o;
	tf_buf out = TF_BUF_INIT;

	tf_report_opts_init(&o);
	o.html_max_nodes = 60;
	assert_int_equal(tf_report_html(&out, c, &o), 0);

	/* the CSP allows exactly the page's script and style */
	char *script = between(out.ptr, "</script>\n<script>", "</script>\n</body>");
	char *style = between(out.ptr, "<style>", "</style>");
	assert_non_null(script);
	assert_non_null(style);
	uint8_t hsh[32];
	tf_buf want = TF_BUF_INIT;
	rp_sha256(hsh, script, strlen(script));
	tf_buf_puts(&want, "script-src 'sha256-");
	rp_base64(&want, hsh, 32);
	assert_non_null(strstr(out.ptr, want.ptr));
	tf_buf_clear(&want);
	rp_sha256(hsh, style, strlen(style));
	tf_buf_puts(&want, "style-src 'sha256-");
	rp_base64(&want, hsh, 32);
	assert_non_null(strstr(out.ptr, want.ptr));

	/* the data: no "</script" before its end, pruned to the budget */
	char *data = between(out.ptr, "<script type=\"application/json\" id=\"tf-data\">", "</script>");
	assert_non_null(data);
	json_error_t err;
	json_t *d = json_loads(data, 0, &err);
	assert_non_null(d);
	json_t *pr = json_object_get(d, "pruned");
	assert_int_equal(json_integer_value(json_object_get(pr, "frames")), 304);
	assert_true(json_integer_value(json_object_get(pr, "kept")) + json_integer_value(json_object_get(pr, "others")) <= 60);
	assert_true(json_array_size(json_object_get(json_object_get(d, "tree"), "d")) <= 60);
	/* the function table is exact all the same: all 300 leaves (and main, run) */
	json_t *t0 = json_array_get(json_object_get(d, "tests"), 0);
	assert_int_equal(json_integer_value(json_object_get(t0, "fxn")), 302);
	assert_int_equal(json_array_size(json_object_get(t0, "fx")), 200);
	/* the grown leaf is kept (changed tests keep finer detail) */
	json_t *strs = json_object_get(d, "strings");
	bool found = false;
	for (size_t i = 0; i < json_array_size(strs); i++)
		found |= strcmp(json_string_value(json_array_get(strs, i)), "leaf_299</script>") == 0;
	assert_true(found);
	json_decref(d);
	free(data);
	free(script);
	free(style);
	tf_buf_free(&want);
	tf_buf_free(&out);
	tf_comparison_free(c);

	/* the single-profile page and SVG */
	assert_int_equal(tf_report_profile_html(&out, h, 1, NULL, "h.pb.gz", NULL), 0);
	assert_non_null(strstr(out.ptr, "\"mode\":\"single\""));
	assert_non_null(strstr(out.ptr, "<title>h.pb.gz</title>"));
	tf_buf_clear(&out);
	assert_int_equal(tf_report_profile_svg(&out, h, 1, "T", "h.pb.gz", NULL), 0);
	assert_non_null(strstr(out.ptr, "Flame graph: T</text>"));
	assert_non_null(strstr(out.ptr, "leaf_299&lt;/script&gt;"));
	assert_null(strstr(out.ptr, "</script>"));
	tf_buf_clear(&out);
	assert_int_equal(tf_report_profile_svg(&out, h, 7, NULL, NULL, NULL), TF_EINVAL);
	tf_buf_free(&out);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_write_dir(void **state)
{
	(void)state;
	tf_profile *b, *h;
	tf_comparison *c = suite(&b, &h, 3, 1, "T");
	tf_report_opts o;
	char *dir = unit_tmpdir(), path[512];
	struct stat sb;

	tf_report_opts_init(&o);
	assert_int_equal(tf_report_write(c, &o), TF_EUSAGE);
	snprintf(path, sizeof(path), "%s/deep/er", dir);
	o.dir = path;
	assert_int_equal(tf_report_write(c, &o), 0);
	const char *files[] = { "index.html", "report.md", "report.json", "junit.xml",
				"codequality.json", "T0000.svg", "T0000.folded", "base.pb.gz",
				"head.pb.gz" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(files); i++) {
		char f[600];
		snprintf(f, sizeof(f), "%s/%s", path, files[i]);
		assert_int_equal(stat(f, &sb), 0);
		assert_true(sb.st_size > 0);
	}
	char f[600];
	snprintf(f, sizeof(f), "%s/T0001.svg", path);
	assert_int_not_equal(stat(f, &sb), 0);
	/* the copies decode to the runs */
	tf_profile *back;
	snprintf(f, sizeof(f), "%s/head.pb.gz", path);
	assert_int_equal(tf_profile_load(&back, f), 0);
	assert_int_equal(back->samples.n, h->samples.n);
	tf_profile_free(back);

	/* a file where the directory should be: an error naming it */
	snprintf(path, sizeof(path), "%s/deep/er/index.html/x", dir);
	o.dir = path;
	assert_int_not_equal(tf_report_write(c, &o), 0);
	assert_non_null(strstr(tf_error_last(), "index.html"));
	unit_rmtree(dir);
	free_suite(c, b, h);
}

/* A run with nothing to compare with: the run and a report.md saying why. */
static void test_write_no_baseline(void **state)
{
	(void)state;
	const char *const names[] = { "main", "work" };
	tf_profile *h = new_run("abc"), *back;
	char *dir = unit_tmpdir(), path[512], f[600];
	tf_buf md = TF_BUF_INIT;

	add(h, "T", 7, names, NULL, 2);
	snprintf(path, sizeof(path), "%s/rep", dir);
	assert_int_equal(tf_report_write_no_baseline(path, "unit <b>", h, "no commit history here"), 0);
	snprintf(f, sizeof(f), "%s/head.pb.gz", path);
	assert_int_equal(tf_profile_load(&back, f), 0);
	assert_int_equal(back->samples.n, h->samples.n);
	tf_profile_free(back);
	snprintf(f, sizeof(f), "%s/report.md", path);
	assert_int_equal(tf_file_read(&md, f), 0);
	assert_non_null(strstr(md.ptr, "No baseline to compare with yet"));
	assert_non_null(strstr(md.ptr, "no commit history here"));
	assert_non_null(strstr(md.ptr, "head.pb.gz"));
	assert_null(strstr(md.ptr, "<b>")); /* the suite's name is escaped */
	tf_buf_free(&md);
	assert_int_equal(tf_report_write_no_baseline(path, "unit", h, NULL), 0);
	assert_int_equal(tf_file_read(&md, f), 0);
	assert_non_null(strstr(md.ptr, "none was found"));
	tf_buf_free(&md);
	/* a file where the directory should be: an error naming it */
	snprintf(path, sizeof(path), "%s/rep/report.md/x", dir);
	assert_int_not_equal(tf_report_write_no_baseline(path, "unit", h, NULL), 0);
	assert_non_null(strstr(tf_error_last(), "cannot write the run into"));
	tf_profile_free(h);
	unit_rmtree(dir);
}

/* A tree of six nodes, by (parent, first child, next sibling):
 * root 0 over A 1 (over a 2) and B 3 (over b 4 and c 5). */
static void six_nodes(tf_diff_node *nd)
{
	const uint32_t N = TF_DIFF_NONE;
	const uint32_t link[6][3] = { { N, 1, N }, { 0, 2, 3 }, { 1, N, N },
				      { 0, 4, N }, { 3, N, 5 }, { 3, N, N } };
	memset(nd, 0, 6 * sizeof(*nd));
	for (size_t i = 0; i < 6; i++) {
		nd[i].parent = link[i][0];
		nd[i].first_child = link[i][1];
		nd[i].next_sibling = link[i][2];
	}
}

static void check_order(const tf_diff_node *nd, const uint32_t *order, const uint32_t *end)
{
	tf_diff_tree t = { (tf_diff_node *)nd, 6 };
	uint32_t o[6], p[6], e[6];
	rp_tree_order(&t, o, p, e);
	for (uint32_t i = 0; i < 6; i++) {
		assert_int_equal(o[i], order[i]);
		assert_int_equal(p[o[i]], i);
		assert_int_equal(e[i], end[i]);
	}
}

/* compare's trees come in preorder and are taken as they are; a tree whose
 * sibling lists say otherwise is walked as the lists say. */
static void test_tree_order(void **state)
{
	(void)state;
	tf_diff_node nd[6];

	six_nodes(nd);
	check_order(nd, (const uint32_t[]){ 0, 1, 2, 3, 4, 5 },
		    (const uint32_t[]){ 6, 3, 3, 6, 5, 6 });
	/* B's children listed c first */
	nd[3].first_child = 5;
	nd[5].next_sibling = 4;
	nd[4].next_sibling = TF_DIFF_NONE;
	check_order(nd, (const uint32_t[]){ 0, 1, 2, 3, 5, 4 },
		    (const uint32_t[]){ 6, 3, 3, 6, 5, 6 });
	six_nodes(nd);
	/* made breadth first: root 0 over A 1 (over a 3) and B 2 (over b 4
	 * and c 5) */
	const uint32_t N = TF_DIFF_NONE;
	const uint32_t wide[6][3] = { { N, 1, N }, { 0, 3, 2 }, { 0, 4, N },
				      { 1, N, N }, { 2, N, 5 }, { 2, N, N } };
	for (size_t i = 0; i < 6; i++) {
		nd[i].parent = wide[i][0];
		nd[i].first_child = wide[i][1];
		nd[i].next_sibling = wide[i][2];
	}
	check_order(nd, (const uint32_t[]){ 0, 1, 3, 2, 4, 5 },
		    (const uint32_t[]){ 6, 3, 3, 6, 5, 6 });
}

/* rp_put_whole writes a whole number as "%.0f" does, negative zero too */
static void test_put_whole(void **state)
{
	const double v[] = { 0.0, -0.0, 1, -1, 1234567, -98765432101, 999999999999999, -999999999999999 };
	tf_buf b = TF_BUF_INIT, want = TF_BUF_INIT;
	(void)state;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		tf_buf_putc(&b, '|');
		rp_put_whole(&b, v[i]);
		tf_buf_printf(&want, "|%.0f", v[i]);
	}
	assert_string_equal(b.ptr, want.ptr);
	assert_non_null(strstr(b.ptr, "|-0|"));
	tf_buf_free(&b);
	tf_buf_free(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_clean),
		cmocka_unit_test(test_put_whole),
		cmocka_unit_test(test_escapers),
		cmocka_unit_test(test_file_names),
		cmocka_unit_test(test_sha256_base64),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_colours),
		cmocka_unit_test(test_markdown_budget),
		cmocka_unit_test(test_markdown_outside_last),
		cmocka_unit_test(test_marker),
		cmocka_unit_test(test_annotations),
		cmocka_unit_test(test_terminal),
		cmocka_unit_test(test_junit_codequality),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_write_dir),
		cmocka_unit_test(test_write_no_baseline),
		cmocka_unit_test(test_tree_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
