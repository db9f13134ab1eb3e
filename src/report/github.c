/*
 * github.c - the reports that go into a CI log: GitHub workflow commands
 * (annotations) and the terminal summary.
 *
 * GitHub shows at most 10 warning and 10 error annotations per step (and
 * 50 per job); the rest are dropped silently in the order they were
 * printed. So the annotations come most important first: one ::error that
 * sums up the regressions, then at most 10 ::warning lines for the
 * functions that grew most, each at its file and line when the file is in
 * the repository. Titles are cut to 255 characters and messages to 1000
 * characters (GitHub's check annotations take 255 and 64 KiB), and data
 * and properties are escaped the way the runner decodes them (%, CR, LF;
 * and ':' ',' in properties), so no name can start a command of its own.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void wf_escape(tf_buf *b, const char *s, size_t max, bool property)
{
	char *c = rp_clean(s, max);
	for (const char *p = c; *p; p++) {
		switch (*p) {
		case '%': tf_buf_puts(b, "%25"); break;
		case '\r': tf_buf_puts(b, "%0D"); break;
		case '\n': tf_buf_puts(b, "%0A"); break;
		case ':': tf_buf_puts(b, property ? "%3A" : ":"); break;
		case ',': tf_buf_puts(b, property ? "%2C" : ","); break;
		default: tf_buf_putc(b, *p);
		}
	}
	free(c);
}

typedef struct {
	const tf_test_delta *t;
	const tf_func_delta *f; /* NULL: the test as a whole */
	double grown;
} candidate;

static int by_growth(const void *a, const void *b)
{
	const candidate *x = a, *y = b;
	if (x->grown != y->grown)
		return x->grown < y->grown ? 1 : -1;
	return 0;
}

/* Functions of the regressed tests whose self cost grew (where the time
 * went, not the callers above it), biggest growth first; a regressed test
 * without one stands for itself. */
static size_t candidates(candidate **out, const tf_comparison *c)
{
	TF_VEC(candidate) v = { 0 };
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		size_t before = v.n;
		if (t->verdict != TF_VERDICT_REGRESSED)
			continue;
		for (size_t k = 0; k < t->nfunctions; k++) {
			const tf_func_delta *f = &t->functions[k];
			if (f->delta_self > 0) {
				candidate cd = { t, f, f->delta_self };
				tf_vec_push(&v, cd);
			}
		}
		if (v.n == before) {
			candidate cd = { t, NULL, t->head.cost - t->base.cost };
			tf_vec_push(&v, cd);
		}
	}
	if (v.n)
		qsort(v.v, v.n, sizeof(candidate), by_growth);
	*out = v.v;
	return v.n;
}

int tf_report_github_annotations(tf_buf *out, const tf_comparison *c, const tf_report_opts *o)
{
	rp_ctx x;
	candidate *cand;
	size_t nreg = c->summary.count[TF_VERDICT_REGRESSED], n;
	tf_buf text = TF_BUF_INIT;

	if (!nreg)
		return 0;
	rp_ctx_init(&x, c, o);
	n = candidates(&cand, c);
	size_t shown = TF_MIN(n, x.o.annotations_max);

	/* the summary */
	tf_buf_printf(&text, "testflame: %zu test%s regressed", nreg, nreg == 1 ? "" : "s");
	tf_buf_puts(out, "::error title=");
	wf_escape(out, text.ptr, 255, true);
	tf_buf_clear(&text);
	tf_buf_printf(&text, "%zu of %zu tests slower by at least %g%% (", nreg, c->summary.ntests,
		      c->summary.threshold);
	rp_put_text(&text, c->summary.event, 40);
	tf_buf_puts(&text, "):");
	for (size_t i = 0, listed = 0; i < c->ntests && listed < 10; i++) {
		char d[32];
		if (c->tests[i].verdict != TF_VERDICT_REGRESSED)
			continue;
		rp_pct(d, sizeof(d), c->tests[i].delta_pct);
		tf_buf_puts(&text, listed++ ? ", " : " ");
		rp_put_text(&text, c->tests[i].name, 80);
		tf_buf_printf(&text, " %s", d);
	}
	if (nreg > 10)
		tf_buf_printf(&text, " and %zu more", nreg - 10);
	if (n > shown)
		tf_buf_printf(&text, ". %zu more grown function%s than annotated here", n - shown,
			      n - shown == 1 ? "" : "s");
	if (x.o.artifact_url)
		tf_buf_printf(&text, ". Full report: %s", x.o.artifact_url);
	tf_buf_puts(out, "::");
	wf_escape(out, text.ptr, 1000, false);
	tf_buf_putc(out, '\n');

	for (size_t i = 0; i < shown; i++) {
		const candidate *cd = &cand[i];
		char d[32], base[48], head[48], ds[48], dt[48];
		rp_pct(d, sizeof(d), cd->t->delta_pct);
		rp_cost(base, sizeof(base), cd->t->base.cost, x.unit);
		rp_cost(head, sizeof(head), cd->t->head.cost, x.unit);
		tf_buf_puts(out, "::warning ");
		const char *path = cd->f ? rp_repo_path(&x, cd->f->file) : NULL;
		if (path) {
			tf_buf_puts(out, "file=");
			wf_escape(out, path, 1000, true);
			if (cd->f->line > 0)
				tf_buf_printf(out, ",line=%lld", (long long)cd->f->line);
			tf_buf_putc(out, ',');
		}
		tf_buf_clear(&text);
		tf_buf_puts(&text, "testflame: ");
		if (cd->f) {
			rp_signed_cost(ds, sizeof(ds), cd->grown, x.unit);
			rp_put_text(&text, cd->f->name, 100);
			tf_buf_printf(&text, " grew %s in ", ds);
		}
		rp_put_text(&text, cd->t->name, 100);
		if (!cd->f)
			tf_buf_printf(&text, " regressed %s", d);
		tf_buf_puts(out, "title=");
		wf_escape(out, text.ptr, 255, true);
		tf_buf_clear(&text);
		tf_buf_puts(&text, "Test ");
		rp_put_text(&text, cd->t->name, 300);
		tf_buf_printf(&text, " regressed %s (%s -> %s)", d, base, head);
		if (cd->f) {
			rp_signed_cost(ds, sizeof(ds), cd->f->delta_self, x.unit);
			rp_signed_cost(dt, sizeof(dt), cd->f->delta_total, x.unit);
			tf_buf_puts(&text, "; ");
			rp_put_text(&text, cd->f->name, 300);
			tf_buf_printf(&text, " grew by %s self, %s total", ds, dt);
			if (!path && *cd->f->file) {
				tf_buf_puts(&text, " (");
				rp_put_text(&text, cd->f->file, 200);
				if (cd->f->line > 0)
					tf_buf_printf(&text, ":%lld", (long long)cd->f->line);
				tf_buf_putc(&text, ')');
			}
		}
		tf_buf_puts(out, "::");
		wf_escape(out, text.ptr, 1000, false);
		tf_buf_putc(out, '\n');
	}
	free(cand);
	tf_buf_free(&text);
	rp_ctx_free(&x);
	return 0;
}

/* ---- terminal ----------------------------------------------------------- */

int tf_report_terminal(tf_buf *out, const tf_comparison *c, const tf_table_opts *t,
		       const char *html_path)
{
	tf_table_opts to;
	candidate *cand;
	size_t n;
	int rc;

	if (t)
		to = *t;
	else
		tf_table_opts_init(&to);
	if ((rc = tf_comparison_render_table(out, c, &to)))
		return rc;
	/* across tests: only worth a list when more than one test regressed */
	n = candidates(&cand, c);
	if (c->summary.count[TF_VERDICT_REGRESSED] > 1 && n) {
		size_t width = to.width < 72 ? 72 : to.width;
		tf_buf_printf(out, "\n%sfunctions that grew most across the regressed tests%s\n",
			      to.color ? "\033[1m" : "", to.color ? "\033[0m" : "");
		for (size_t i = 0; i < n && i < 8; i++) {
			char g[48];
			tf_buf line = TF_BUF_INIT;
			rp_signed_cost(g, sizeof(g), cand[i].grown, c->summary.unit);
			tf_buf_printf(out, "%14s   ", g);
			if (cand[i].f) {
				tf_buf_puts(&line, cand[i].f->name);
				if (*cand[i].f->file) {
					const char *b = strrchr(cand[i].f->file, '/');
					tf_buf_printf(&line, "  %s", b ? b + 1 : cand[i].f->file);
					if (cand[i].f->line > 0)
						tf_buf_printf(&line, ":%lld", (long long)cand[i].f->line);
				}
				tf_buf_puts(&line, "  in ");
			}
			tf_buf_puts(&line, cand[i].t->name);
			char *shown = rp_clean(line.ptr, width - 17);
			tf_buf_puts(out, shown);
			tf_buf_putc(out, '\n');
			free(shown);
			tf_buf_free(&line);
		}
	}
	free(cand);
	if (html_path) {
		tf_buf_puts(out, "\nreport: ");
		tf_buf_put_printable(out, html_path);
		tf_buf_putc(out, '\n');
	}
	return 0;
}
