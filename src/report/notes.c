/*
 * notes.c - the smaller Markdown texts the publisher posts besides
 * report.md: a review comment on the changed line of a function that grew
 * (what grew, by how much, in which regressed tests), and a comment for a
 * run that has nothing to compare with yet (with the report directory such
 * a run leaves), so a pull request still hears from testflame. Names are
 * escaped the way report.md escapes them.
 */
#include "report/report_int.h"

#include <stdlib.h>

static void code(tf_buf *b, const char *s, size_t max)
{
	tf_buf_puts(b, "<code>");
	rp_put_md(b, s, max);
	tf_buf_puts(b, "</code>");
}

int tf_report_review_note(tf_buf *out, const tf_comparison *c, const size_t *tests,
			  const size_t *funcs, size_t n, const tf_report_opts *o)
{
	rp_ctx x;
	const tf_func_delta *f0;
	double self = 0, total = 0;
	char ds[48], dt[48];

	if (!n)
		return tf_error_set(TF_EINVAL, "a review note needs a function");
	for (size_t i = 0; i < n; i++)
		if (tests[i] >= c->ntests || funcs[i] >= c->tests[tests[i]].nfunctions)
			return tf_error_set(TF_EINVAL, "no function %zu in test %zu", funcs[i], tests[i]);
	rp_ctx_init(&x, c, o);
	f0 = &c->tests[tests[0]].functions[funcs[0]];
	for (size_t i = 0; i < n; i++) {
		self += c->tests[tests[i]].functions[funcs[i]].delta_self;
		total += c->tests[tests[i]].functions[funcs[i]].delta_total;
	}
	rp_signed_cost(ds, sizeof(ds), self, x.unit);
	rp_signed_cost(dt, sizeof(dt), total, x.unit);

	tf_buf_puts(out, "\xf0\x9f\x94\xba **testflame** \xc2\xb7 ");
	code(out, f0->name, 200);
	tf_buf_printf(out, " grew by **%s** self (%s total) in ", ds, dt);
	tf_buf_printf(out, n == 1 ? "a regressed test:\n\n" : "%zu regressed tests:\n\n", n);
	for (size_t i = 0; i < n && i < 10; i++) {
		const tf_test_delta *t = &c->tests[tests[i]];
		const tf_func_delta *f = &t->functions[funcs[i]];
		char d[32], base[48], head[48], fs[48];
		rp_pct(d, sizeof(d), t->delta_pct);
		rp_cost(base, sizeof(base), t->base.cost, x.unit);
		rp_cost(head, sizeof(head), t->head.cost, x.unit);
		rp_signed_cost(fs, sizeof(fs), f->delta_self, x.unit);
		tf_buf_puts(out, "- ");
		code(out, t->name, 200);
		tf_buf_printf(out, " **%s** (%s \xe2\x86\x92 %s); this function %s\n", d, base, head, fs);
	}
	if (n > 10)
		tf_buf_printf(out, "- and %zu more\n", n - 10);
	tf_buf_puts(out, "\n<sub>");
	code(out, x.suite, 80);
	tf_buf_puts(out, " \xc2\xb7 the PR comment has the whole comparison");
	if (x.run_url)
		tf_buf_printf(out, " \xc2\xb7 [CI run](%s)", x.run_url);
	if (x.o.artifact_url)
		tf_buf_printf(out, " \xc2\xb7 [full report](%s)", x.o.artifact_url);
	tf_buf_puts(out, "</sub>\n");
	rp_ctx_free(&x);
	return 0;
}

void tf_report_markdown_message(tf_buf *out, const char *suite, const char *text)
{
	tf_report_marker(out, suite);
	tf_buf_puts(out, "### testflame \xc2\xb7 ");
	code(out, suite && *suite ? suite : "tests", 80);
	tf_buf_puts(out, "\n\n");
	rp_put_md_text(out, text, 2000);
	tf_buf_printf(out, "\n\n<sub>testflame %s</sub>\n", TF_VERSION);
}

int tf_report_write_no_baseline(const char *dir, const char *suite, const tf_profile *head,
				const char *why)
{
	tf_buf md = TF_BUF_INIT;
	char *path = NULL, *text;
	int rc = tf_mkdir_p(dir, 0755);

	if (!rc) {
		path = tf_xasprintf("%s/head.pb.gz", dir);
		rc = tf_pprof_write(head, path);
		free(path);
	}
	if (rc)
		return tf_error_wrap(rc, "cannot write the run into '%s'", dir);
	text = tf_xasprintf("No baseline to compare with yet: %s. A build of the default branch "
			    "saves one (testflame run there keeps the run of each commit); this "
			    "run's profile is in the report directory as head.pb.gz.",
			    why ? why : "none was found");
	tf_report_markdown_message(&md, suite, text);
	path = tf_xasprintf("%s/report.md", dir);
	rc = tf_file_write_atomic(path, md.ptr, md.len);
	if (rc)
		tf_error_wrap(rc, "cannot write '%s'", path);
	free(path);
	free(text);
	tf_buf_free(&md);
	return rc;
}
