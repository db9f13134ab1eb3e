/*
 * history.c - history.html: the default branch's series of a suite as one
 * offline page. Per test (those with a change or a drift first), its cost
 * at every stored commit drawn as an SVG plot: each point a link to its
 * commit (the repository's web page of it when its URL is known, else the
 * page's own table of commits), the steps as vertical lines labelled with
 * their size, the drifts as shaded spans. No script and nothing fetched:
 * the Content-Security-Policy allows only the page's own style. Every name
 * from the repository or the profiled code (tests, subjects, functions) is
 * HTML-escaped.
 */
#include "report/report_int.h"
#include "testflame/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_W 760
#define PLOT_H 150
#define PAD_L 64
#define PAD_R 12
#define PAD_T 14
#define PAD_B 22
#define PLOTS_MAX 60 /* tests drawn; the rest listed by name */

static void esc(tf_buf *b, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&': tf_buf_puts(b, "&amp;"); break;
		case '<': tf_buf_puts(b, "&lt;"); break;
		case '>': tf_buf_puts(b, "&gt;"); break;
		case '"': tf_buf_puts(b, "&quot;"); break;
		case '\'': tf_buf_puts(b, "&#39;"); break;
		default:
			if ((unsigned char)*s < ' ')
				tf_buf_putc(b, ' ');
			else
				tf_buf_putc(b, *s);
		}
	}
}

/* The first three functions that moved, by name. */
static void fnames(tf_buf *b, const tf_history_explained *w)
{
	for (size_t k = 0; w && k < w->nfunctions && k < 3; k++) {
		if (k)
			tf_buf_puts(b, ", ");
		esc(b, w->functions[k].d.name);
		if (w->functions[k].caller) {
			tf_buf_puts(b, " (from ");
			esc(b, w->functions[k].caller);
			tf_buf_puts(b, ")");
		}
	}
}

/* The link of commit i: the web page, or the page's table row. */
static void commit_href(tf_buf *b, const char *url_prefix, const char *commit)
{
	if (url_prefix) {
		esc(b, url_prefix);
		tf_buf_puts(b, commit);
	} else {
		tf_buf_printf(b, "#c-%s", commit);
	}
}

static double xpos(size_t i, size_t n)
{
	double w = PLOT_W - PAD_L - PAD_R;
	return PAD_L + (n > 1 ? w * (double)i / (double)(n - 1) : w / 2);
}

static void plot(tf_buf *b, const tf_history_render *r, size_t t, const char *url_prefix)
{
	const tf_history_data *d = r->data;
	const tf_history_result *res = r->result;
	const double *c = d->cost + t * d->ncommits;
	double lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < d->ncommits; i++)
		if (c[i] > 0) {
			lo = TF_MIN(lo, c[i]);
			hi = TF_MAX(hi, c[i]);
		}
	if (!isfinite(lo))
		return;
	if (hi - lo < lo * 0.02) { /* a flat series: show +-1% */
		lo *= 0.99;
		hi *= 1.01;
	}
	double span = hi - lo, ph = PLOT_H - PAD_T - PAD_B;
#define YPOS(v) (PAD_T + ph * (1 - ((v) - lo) / span))
	tf_buf_printf(b, "<svg class=\"plot\" viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" "
		      "role=\"img\">", PLOT_W, PLOT_H, PLOT_W, PLOT_H);
	/* drifts under everything */
	for (size_t k = 0; k < res->ndrifts; k++) {
		const tf_history_drift *x = &res->drifts[k];
		if (x->test != t)
			continue;
		double x0 = xpos(x->from, d->ncommits), x1 = xpos(x->to, d->ncommits);
		tf_buf_printf(b, "<rect class=\"drift\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%.1f\">"
			      "<title>drift %+.1f%% over %.10s..%.10s</title></rect>", x0, PAD_T,
			      TF_MAX(x1 - x0, 2.0), ph, x->total_pct, d->commits[x->from].commit,
			      d->commits[x->to].commit);
		tf_buf_printf(b, "<text class=\"dlabel\" x=\"%.1f\" y=\"%d\">drift %+.1f%%</text>",
			      x0 + 2, PAD_T + 10, x->total_pct);
	}
	/* axis: the range of the costs */
	char a[32], z[32];
	tf_compare_format_cost(a, sizeof(a), lo, d->unit);
	tf_compare_format_cost(z, sizeof(z), hi, d->unit);
	tf_buf_printf(b, "<text class=\"axis\" x=\"2\" y=\"%d\">%s</text>", PAD_T + 4, z);
	tf_buf_printf(b, "<text class=\"axis\" x=\"2\" y=\"%.0f\">%s</text>", PAD_T + ph, a);
	tf_buf_printf(b, "<line class=\"frame\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>", PAD_L,
		      PAD_T + ph, PLOT_W - PAD_R, PAD_T + ph);
	/* the series */
	tf_buf_puts(b, "<polyline class=\"line\" points=\"");
	for (size_t i = 0; i < d->ncommits; i++)
		if (c[i] > 0)
			tf_buf_printf(b, "%.1f,%.1f ", xpos(i, d->ncommits), YPOS(c[i]));
	tf_buf_puts(b, "\"/>");
	/* the steps */
	for (size_t k = 0; k < res->nchanges; k++) {
		const tf_history_change *ch = &res->changes[k];
		if (ch->test != t)
			continue;
		double x = (xpos(ch->prev, d->ncommits) + xpos(ch->at, d->ncommits)) / 2;
		tf_buf_printf(b, "<line class=\"step\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\">"
			      "<title>step %+.1f%% [%+.1f%%, %+.1f%%] at %.10s</title></line>", x,
			      PAD_T, x, PAD_T + ph, ch->size_pct, ch->ci_low_pct, ch->ci_high_pct,
			      d->commits[ch->at].commit);
		tf_buf_printf(b, "<text class=\"slabel\" x=\"%.1f\" y=\"%d\">%+.1f%%</text>", x + 3,
			      PAD_T + ph > 30 ? (int)(PAD_T + ph - 4) : PAD_T + 10, ch->size_pct);
	}
	/* the points, each a link to its commit */
	for (size_t i = 0; i < d->ncommits; i++) {
		if (!(c[i] > 0))
			continue;
		char v[32];
		tf_compare_format_cost(v, sizeof(v), c[i], d->unit);
		tf_buf_puts(b, "<a href=\"");
		commit_href(b, url_prefix, d->commits[i].commit);
		tf_buf_printf(b, "\"><circle class=\"pt\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\"><title>%.10s ",
			      xpos(i, d->ncommits), YPOS(c[i]), d->commits[i].commit);
		esc(b, d->commits[i].subject);
		tf_buf_printf(b, ": %s</title></circle></a>", v);
	}
#undef YPOS
	tf_buf_puts(b, "</svg>\n");
}

static const char *const STYLE =
	"body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
	"h1{font-size:20px}h2{font-size:16px;margin:22px 0 4px}"
	".plot{display:block;max-width:100%;height:auto;border:1px solid #ddd}"
	".line{fill:none;stroke:#4a6fa5;stroke-width:1.2}.pt{fill:#4a6fa5}.pt:hover{fill:#e0651c}"
	".step{stroke:#c0392b;stroke-width:2;stroke-dasharray:4 3}.slabel{fill:#c0392b;font-size:11px}"
	".drift{fill:#f5b041;opacity:.25}.dlabel{fill:#a0620a;font-size:11px}"
	".axis{fill:#666;font-size:10px}.frame{stroke:#bbb}"
	"table{border-collapse:collapse;margin:8px 0}td,th{padding:2px 8px;border-bottom:1px solid #eee;"
	"text-align:left;font-variant-numeric:tabular-nums}.note{color:#666}";

int tf_report_history_html(tf_buf *out, const tf_history_render *r, const char *commit_url)
{
	const tf_history_data *d = r->data;
	const tf_history_result *res = r->result;
	tf_buf *b = out;

	tf_buf_puts(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		       "style-src 'unsafe-inline'; img-src data:\">"
		       "<title>history of ");
	esc(b, d->suite);
	tf_buf_printf(b, "</title><style>%s</style></head><body>\n<h1>History of suite '", STYLE);
	esc(b, d->suite);
	tf_buf_printf(b, "'</h1>\n<p class=\"summary\">%zu commits with stored runs (%zu walked), "
		      "%zu tests, %zu change%s, %zu drift%s. Runner kind ", d->ncommits, d->walked,
		      d->ntests, res->nchanges, res->nchanges == 1 ? "" : "s", res->ndrifts,
		      res->ndrifts == 1 ? "" : "s");
	esc(b, d->kind);
	tf_buf_puts(b, ".</p>\n");

	/* the changes and drifts, newest first */
	if (res->nchanges) {
		tf_buf_puts(b, "<h2>Changes</h2><table id=\"changes\"><tr><th>commit</th><th>test</th>"
			       "<th>size</th><th>95% interval</th><th>functions</th></tr>\n");
		for (size_t i = 0; i < res->nchanges; i++) {
			const tf_history_change *c = &res->changes[i];
			tf_buf_puts(b, "<tr class=\"change\"><td><a href=\"");
			commit_href(b, commit_url, d->commits[c->at].commit);
			tf_buf_printf(b, "\">%.10s</a> ", d->commits[c->at].commit);
			esc(b, d->commits[c->at].subject);
			tf_buf_puts(b, "</td><td>");
			esc(b, tf_history_test_name(d, c->test));
			tf_buf_printf(b, "</td><td>%+.1f%%</td><td>%+.1f%% to %+.1f%%</td><td>",
				      c->size_pct, c->ci_low_pct, c->ci_high_pct);
			const tf_history_explained *w = r->change_why ? &r->change_why[i] : NULL;
			fnames(b, w);
			tf_buf_puts(b, "</td></tr>\n");
		}
		tf_buf_puts(b, "</table>\n");
	}
	if (res->ndrifts) {
		tf_buf_puts(b, "<h2>Drifts</h2><table id=\"drifts\"><tr><th>test</th><th>over</th>"
			       "<th>total</th><th>a commit</th><th>functions</th></tr>\n");
		for (size_t i = 0; i < res->ndrifts; i++) {
			const tf_history_drift *x = &res->drifts[i];
			tf_buf_puts(b, "<tr class=\"drift-row\"><td>");
			esc(b, tf_history_test_name(d, x->test));
			tf_buf_printf(b, "</td><td>%.10s..%.10s</td><td>%+.1f%%</td><td>%+.2f%%</td><td>",
				      d->commits[x->from].commit, d->commits[x->to].commit, x->total_pct,
				      x->slope_pct);
			const tf_history_explained *w = r->drift_why ? &r->drift_why[i] : NULL;
			fnames(b, w);
			tf_buf_puts(b, "</td></tr>\n");
		}
		tf_buf_puts(b, "</table>\n");
	}

	/* the plots: tests that moved first */
	size_t drawn = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t t = 0; t < d->ntests; t++) {
			bool moved = false;
			for (size_t k = 0; k < res->nchanges && !moved; k++)
				moved = res->changes[k].test == t;
			for (size_t k = 0; k < res->ndrifts && !moved; k++)
				moved = res->drifts[k].test == t;
			if (moved != (pass == 0))
				continue;
			if (drawn++ >= PLOTS_MAX)
				continue;
			tf_buf_puts(b, "<h2 class=\"test\">");
			esc(b, d->tests[t].name);
			tf_buf_puts(b, "</h2>\n");
			plot(b, r, t, commit_url);
		}
	if (drawn > PLOTS_MAX)
		tf_buf_printf(b, "<p class=\"note\">%zu more tests without a plot (unchanged).</p>\n",
			      drawn - PLOTS_MAX);

	/* the commits, newest first: what the points link to */
	tf_buf_puts(b, "<h2>Commits</h2><table id=\"commits\"><tr><th>commit</th><th>subject</th>"
		       "<th>machine</th></tr>\n");
	for (size_t k = d->ncommits; k-- > 0;) {
		const tf_history_commit *c = &d->commits[k];
		tf_buf_printf(b, "<tr id=\"c-%s\"><td>", c->commit);
		if (commit_url) {
			tf_buf_puts(b, "<a href=\"");
			commit_href(b, commit_url, c->commit);
			tf_buf_printf(b, "\">%.10s</a>", c->commit);
		} else {
			tf_buf_printf(b, "%.10s", c->commit);
		}
		tf_buf_puts(b, "</td><td>");
		esc(b, c->subject);
		tf_buf_printf(b, "</td><td>%u</td></tr>\n", c->klass + 1);
	}
	tf_buf_puts(b, "</table>\n<p class=\"note\">machines: ");
	for (size_t k = 0; k < d->nclasses; k++) {
		tf_buf_printf(b, "%s%zu: ", k ? "; " : "", k + 1);
		esc(b, d->classes[k]);
	}
	tf_buf_puts(b, "</p>\n");
	for (size_t i = 0; i < d->nskipped; i++) {
		tf_buf_printf(b, "<p class=\"note\">left out: %.10s, ", d->skipped[i].commit);
		esc(b, d->skipped[i].why);
		tf_buf_puts(b, "</p>\n");
	}
	tf_buf_puts(b, "</body></html>\n");
	return 0;
}
