/*
 * junit.c - junit.xml and codequality.json: the two files CI systems read
 * without being told about testflame. JUnit gets one testcase per test
 * with its time, and a regression is a <failure> whose message carries the
 * numbers, so GitLab's test report and any JUnit viewer show which tests
 * got slower. Code Quality gets one issue per grown function of a
 * regressed test at its file and line, with a fingerprint that depends on
 * what the issue is about (suite, test, function, file) and not on the
 * numbers, so GitLab can tell a new issue from one it has seen before.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Seconds for the testcase: the head's wall time when the run recorded
 * it, else its CPU time, else its cost when that is a time. */
static double test_seconds(const tf_test_delta *t, const char *unit)
{
	if (isfinite(t->head.wall_ns) && t->head.wall_ns > 0)
		return t->head.wall_ns / 1e9;
	if (isfinite(t->head.cpu_ns) && t->head.cpu_ns > 0)
		return t->head.cpu_ns / 1e9;
	if (unit && strcmp(unit, "nanoseconds") == 0 && t->head.cost > 0)
		return t->head.cost / 1e9;
	return 0;
}

static void numbers(tf_buf *b, const rp_ctx *x, const tf_test_delta *t)
{
	char base[48], head[48], d[32], lo[32], hi[32];
	rp_cost(base, sizeof(base), t->base.cost, x->unit);
	rp_cost(head, sizeof(head), t->head.cost, x->unit);
	rp_pct(d, sizeof(d), t->delta_pct);
	if (isfinite(t->delta_pct))
		tf_buf_printf(b, "%s ", d);
	tf_buf_printf(b, "%s: %s -> %s", x->c->summary.event ? x->c->summary.event : "",
		      isfinite(t->base.cost) && t->base.cost > 0 ? base : "-",
		      isfinite(t->head.cost) && t->head.cost > 0 ? head : "-");
	if (isfinite(t->ci_low_pct)) {
		rp_pct(lo, sizeof(lo), t->ci_low_pct);
		rp_pct(hi, sizeof(hi), t->ci_high_pct);
		tf_buf_printf(b, ", 95%% CI %s..%s", lo, hi);
	}
	if (isfinite(t->p_adjusted))
		tf_buf_printf(b, ", p = %.3g", t->p_adjusted);
}

/* A failure's text after its reason: the functions that grew, with
 * file:line. */
static void failure_functions(tf_buf *out, const rp_ctx *x, const tf_test_delta *t,
			      const char *unit)
{
	for (size_t k = 0; k < t->nfunctions && k < 10; k++) {
		const tf_func_delta *f = &t->functions[k];
		char ds[48], dt[48];
		rp_signed_cost(ds, sizeof(ds), f->delta_self, unit);
		rp_signed_cost(dt, sizeof(dt), f->delta_total, unit);
		tf_buf_puts(out, "\n  ");
		rp_put_html(out, f->name, x->o.name_max);
		tf_buf_printf(out, ": self %s, total %s", ds, dt);
		if (*f->file) {
			tf_buf_puts(out, " at ");
			rp_put_html(out, f->file, 300);
			if (f->line > 0)
				tf_buf_printf(out, ":%lld", (long long)f->line);
		}
	}
}

/* gate.memory's tests, a testsuite of their own: a test that allocates
 * more is a failure there. */
static void memory_suite(tf_buf *out, const rp_ctx *x, const tf_comparison *m)
{
	size_t n = m->summary.count[TF_VERDICT_REGRESSED];
	tf_buf_puts(out, "  <testsuite name=\"");
	rp_put_html(out, x->suite, x->o.name_max);
	tf_buf_printf(out, " (memory)\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"0\" "
			   "time=\"0\">\n", m->ntests, n);
	for (size_t i = 0; i < m->ntests; i++) {
		const tf_test_delta *t = &m->tests[i];
		char base[32], head[32];
		rp_cost(base, sizeof(base), t->base.cost, "bytes");
		rp_cost(head, sizeof(head), t->head.cost, "bytes");
		tf_buf_puts(out, "    <testcase name=\"");
		rp_put_html(out, t->name, 1000);
		tf_buf_puts(out, "\" classname=\"");
		rp_put_html(out, x->suite, x->o.name_max);
		tf_buf_puts(out, " (memory)\" time=\"0\">\n");
		if (t->verdict == TF_VERDICT_REGRESSED) {
			tf_buf_printf(out, "      <failure type=\"memory-regression\" message=\"allocates "
					   "%s, %s in the base (%+.1f%%)\">", head, base, t->delta_pct);
			rp_put_html(out, t->reason, 500);
			failure_functions(out, x, t, "bytes");
			tf_buf_puts(out, "</failure>\n");
		} else {
			tf_buf_printf(out, "      <system-out>%s: %s, %s in the base</system-out>\n",
				      tf_verdict_name(t->verdict), head, base);
		}
		tf_buf_puts(out, "    </testcase>\n");
	}
	tf_buf_puts(out, "  </testsuite>\n");
}

int tf_report_junit(tf_buf *out, const tf_comparison *c, const tf_report_opts *o)
{
	rp_ctx x;
	double total = 0;
	size_t failures = c->summary.count[TF_VERDICT_REGRESSED];
	size_t skipped = c->summary.count[TF_VERDICT_GONE];
	const tf_comparison *mem = o && o->memory_gated ? o->memory : NULL;
	tf_buf msg = TF_BUF_INIT;

	rp_ctx_init(&x, c, o);
	for (size_t i = 0; i < c->ntests; i++)
		total += test_seconds(&c->tests[i], x.unit);
	tf_buf_puts(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"testflame\"");
	tf_buf_printf(out, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
		      c->ntests + (mem ? mem->ntests : 0),
		      failures + (mem ? mem->summary.count[TF_VERDICT_REGRESSED] : 0), skipped, total);
	tf_buf_puts(out, "  <testsuite name=\"");
	rp_put_html(out, x.suite, x.o.name_max);
	tf_buf_printf(out, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n",
		      c->ntests, failures, skipped, total);
	tf_buf_puts(out, "    <properties>\n");
	{
		const char *props[][2] = {
			{ "testflame.event", c->summary.event },
			{ "testflame.unit", c->summary.unit },
			{ "testflame.base_commit", x.base_commit },
			{ "testflame.head_commit", x.head_commit },
		};
		for (size_t i = 0; i < TF_ARRAY_SIZE(props); i++) {
			if (!props[i][1])
				continue;
			tf_buf_printf(out, "      <property name=\"%s\" value=\"", props[i][0]);
			rp_put_html(out, props[i][1], 100);
			tf_buf_puts(out, "\"/>\n");
		}
		tf_buf_printf(out, "      <property name=\"testflame.threshold_pct\" value=\"%g\"/>\n",
			      c->summary.threshold);
	}
	tf_buf_puts(out, "    </properties>\n");

	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		tf_buf_puts(out, "    <testcase name=\"");
		rp_put_html(out, t->name, 1000);
		tf_buf_puts(out, "\" classname=\"");
		rp_put_html(out, x.suite, x.o.name_max);
		tf_buf_printf(out, "\" time=\"%.3f\"", test_seconds(t, x.unit));
		tf_buf_clear(&msg);
		numbers(&msg, &x, t);
		if (t->verdict == TF_VERDICT_REGRESSED) {
			tf_buf_puts(out, ">\n      <failure type=\"performance-regression\" message=\"regressed ");
			rp_put_html(out, msg.ptr, 0);
			tf_buf_puts(out, "\">");
			rp_put_html(out, t->reason, 500);
			failure_functions(out, &x, t, x.unit);
			tf_buf_puts(out, "</failure>\n    </testcase>\n");
		} else if (t->verdict == TF_VERDICT_GONE) {
			tf_buf_puts(out, ">\n      <skipped message=\"gone: the test has no samples in the head\"/>\n"
					 "    </testcase>\n");
		} else {
			tf_buf_printf(out, ">\n      <system-out>%s: ", tf_verdict_name(t->verdict));
			rp_put_html(out, msg.ptr, 0);
			tf_buf_puts(out, "</system-out>\n    </testcase>\n");
		}
	}
	tf_buf_puts(out, "  </testsuite>\n");
	if (mem)
		memory_suite(out, &x, mem);
	tf_buf_puts(out, "</testsuites>\n");
	tf_buf_free(&msg);
	rp_ctx_free(&x);
	return 0;
}

/* ---- GitLab Code Quality ------------------------------------------------ */

static const char *severity(double share_pct)
{
	if (share_pct >= 50)
		return "critical";
	if (share_pct >= 20)
		return "major";
	if (share_pct >= 5)
		return "minor";
	return "info";
}

static void fingerprint(tf_buf *b, const char *suite, const char *test, const char *fn,
			const char *file)
{
	tf_buf key = TF_BUF_INIT;
	uint8_t h[32];
	const char *base = strrchr(file, '/');

	/* the file's base name: a checkout in another directory is the same issue */
	tf_buf_printf(&key, "testflame/1\n%s\n%s\n%s\n%s", suite, test, fn, base ? base + 1 : file);
	rp_sha256(h, key.ptr, key.len);
	for (int i = 0; i < 16; i++)
		tf_buf_printf(b, "%02x", h[i]);
	tf_buf_free(&key);
}

int tf_report_codequality(tf_buf *out, const tf_comparison *c, const tf_report_opts *o)
{
	rp_ctx x;
	tf_buf text = TF_BUF_INIT;
	bool first = true;

	rp_ctx_init(&x, c, o);
	tf_buf_puts(out, "[");
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (t->verdict != TF_VERDICT_REGRESSED)
			continue;
		for (size_t k = 0; k < t->nfunctions; k++) {
			const tf_func_delta *f = &t->functions[k];
			char ds[48], dt[48], d[32];
			/* where the time is spent: callers whose total grew only
			 * because of it would be issues at the wrong line */
			if (!*f->file || !(f->delta_self > 0))
				continue;
			const char *path = rp_repo_path(&x, f->file);
			double share = t->base.cost > 0 ? f->delta_self / t->base.cost * 100 : 100;
			rp_signed_cost(ds, sizeof(ds), f->delta_self, x.unit);
			rp_signed_cost(dt, sizeof(dt), f->delta_total, x.unit);
			rp_pct(d, sizeof(d), t->delta_pct);
			tf_buf_clear(&text);
			tf_buf_puts(&text, "Test ");
			rp_put_text(&text, t->name, x.o.name_max);
			tf_buf_printf(&text, " regressed %s; ", d);
			rp_put_text(&text, f->name, x.o.name_max);
			tf_buf_printf(&text, " grew by %s self, %s total (%s)", ds, dt,
				      x.c->summary.event ? x.c->summary.event : "");
			tf_buf_puts(out, first ? "\n  {" : ",\n  {");
			first = false;
			tf_buf_puts(out, "\"type\": \"issue\", \"check_name\": \"testflame-regression\", "
					 "\"description\": ");
			rp_put_json(out, text.ptr, 0);
			tf_buf_puts(out, ", \"categories\": [\"Performance\"], \"fingerprint\": \"");
			fingerprint(out, x.suite, t->name, f->name, f->file);
			tf_buf_printf(out, "\", \"severity\": \"%s\", \"location\": {\"path\": ", severity(share));
			/* GitLab wants a repository path; the recorded one is the best left */
			rp_put_json(out, path ? path : f->file + (*f->file == '/'), 1000);
			tf_buf_printf(out, ", \"lines\": {\"begin\": %lld}}}",
				      (long long)(f->line > 0 ? f->line : 1));
		}
	}
	tf_buf_puts(out, first ? "]\n" : "\n]\n");
	tf_buf_free(&text);
	rp_ctx_free(&x);
	return 0;
}
