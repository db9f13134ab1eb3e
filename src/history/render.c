/*
 * render.c - a history's analysis for people and scripts: the terminal
 * table (changes newest first, then drifts, then what was left out), the
 * JSON document (docs/history-json.md) and the short Markdown note a run
 * on the default branch adds to its report. Every name from the profiled
 * code or the repository (tests, functions, subjects) is escaped for its
 * format: JSON by tf_buf_put_json, Markdown by a backslash before every
 * character Markdown or HTML would read, terminal text made printable.
 */
#include "testflame/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const measure_names[] = { "samples", "count", "cpu", "runner" };

static const char *short_id(const tf_history_data *d, size_t i)
{
	static char buf[4][13];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%.10s", d->commits[i].commit);
	return buf[k];
}

static void put_pct(tf_buf *b, double v)
{
	if (!isfinite(v))
		tf_buf_puts(b, "?");
	else
		tf_buf_printf(b, "%+.1f%%", v);
}

static size_t nfun(const tf_history_render *r)
{
	return r->max_functions ? r->max_functions : 3;
}

/* The functions that moved, as "name +1.2 ms (file:line)". */
static void put_functions(tf_buf *b, const tf_history_explained *w, const char *unit, size_t max,
			  const char *indent)
{
	if (!w || !w->cmp || !w->nfunctions) {
		if (w && w->cmp)
			tf_buf_printf(b, "%sfunctions: none moved beyond the sampling noise\n", indent);
		return;
	}
	for (size_t i = 0; i < w->nfunctions && i < max; i++) {
		const tf_func_delta *f = &w->functions[i].d;
		const char *caller = w->functions[i].caller;
		char c[32];
		tf_compare_format_cost(c, sizeof(c), fabs(f->delta_self), unit);
		tf_buf_printf(b, "%s%s ", indent, i ? "          " : "functions:");
		tf_buf_put_printable(b, f->name);
		tf_buf_printf(b, " %c%s self", f->delta_self < 0 ? '-' : '+', c);
		if (f->file && *f->file) {
			const char *base = strrchr(f->file, '/');
			tf_buf_puts(b, " (");
			tf_buf_put_printable(b, base ? base + 1 : f->file);
			if (f->line > 0)
				tf_buf_printf(b, ":%lld", (long long)f->line);
			tf_buf_puts(b, ")");
		}
		if (caller) {
			tf_buf_puts(b, ", from ");
			tf_buf_put_printable(b, caller);
		}
		tf_buf_putc(b, '\n');
	}
}

int tf_history_render_table(tf_buf *out, const tf_history_render *r)
{
	const tf_history_data *d = r->data;
	const tf_history_result *res = r->result;

	tf_buf_puts(out, "history of suite '");
	tf_buf_put_printable(out, d->suite);
	tf_buf_printf(out, "' (%s): %zu commit%s with stored runs of %zu walked, %zu test%s\n",
		      d->kind, d->ncommits, d->ncommits == 1 ? "" : "s", d->walked, d->ntests,
		      d->ntests == 1 ? "" : "s");
	if (!res->nchanges && !res->ndrifts)
		tf_buf_puts(out, "no change and no drift beyond the noise\n");
	if (res->nchanges)
		tf_buf_printf(out, "\nchanges, newest first (%zu in %zu place%s):\n", res->nchanges,
			      res->ngroups, res->ngroups == 1 ? "" : "s");
	for (size_t i = 0; i < res->nchanges; i++) {
		const tf_history_change *c = &res->changes[i];
		bool first = i == 0 || res->changes[i - 1].group != c->group;
		if (first) {
			tf_buf_printf(out, "  %s..%s", short_id(d, c->prev), short_id(d, c->at));
			if (c->at - c->prev > 1)
				tf_buf_printf(out, " (%zu stored commits)", c->at - c->prev);
			if (d->commits[c->at].subject) {
				tf_buf_puts(out, "  ");
				tf_buf_put_printable(out, d->commits[c->at].subject);
			}
			tf_buf_putc(out, '\n');
		}
		char a[32], b[32];
		tf_compare_format_cost(a, sizeof(a), c->before, d->unit);
		tf_compare_format_cost(b, sizeof(b), c->after, d->unit);
		if (c->test >= d->ntests) /* the suite's own series: a ratio, no cost */
			snprintf(a, sizeof(a), "every test"), snprintf(b, sizeof(b), "moved");
		tf_buf_puts(out, "    ");
		tf_buf_put_printable(out, tf_history_test_name(d, c->test));
		tf_buf_puts(out, "  ");
		put_pct(out, c->size_pct);
		tf_buf_puts(out, " [");
		put_pct(out, c->ci_low_pct);
		tf_buf_puts(out, ", ");
		put_pct(out, c->ci_high_pct);
		tf_buf_printf(out, "]  %s -> %s  q %.2g\n", a, b, c->p_adjusted);
		put_functions(out, r->change_why ? &r->change_why[i] : NULL, d->unit, nfun(r), "      ");
	}
	if (res->ndrifts)
		tf_buf_printf(out, "\ndrifts, newest first (%zu):\n", res->ndrifts);
	for (size_t i = 0; i < res->ndrifts; i++) {
		const tf_history_drift *x = &res->drifts[i];
		tf_buf_puts(out, "  ");
		tf_buf_put_printable(out, tf_history_test_name(d, x->test));
		tf_buf_puts(out, "  ");
		put_pct(out, x->total_pct);
		tf_buf_printf(out, " over %s..%s (", short_id(d, x->from), short_id(d, x->to));
		put_pct(out, x->slope_pct);
		tf_buf_puts(out, " a commit; latest against the best level ");
		put_pct(out, x->latest_vs_best_pct);
		tf_buf_printf(out, ")  q %.2g\n", x->p_adjusted);
		if (x->ntop) {
			tf_buf_puts(out, "      most from:");
			for (size_t k = 0; k < x->ntop; k++) {
				tf_buf_printf(out, "%s %s ", k ? "," : "", short_id(d, x->top[k]));
				put_pct(out, x->top_pct[k]);
			}
			tf_buf_putc(out, '\n');
		}
		put_functions(out, r->drift_why ? &r->drift_why[i] : NULL, d->unit, nfun(r), "      ");
	}
	size_t outl = 0, failed = 0;
	for (size_t t = 0; t < d->ntests; t++) {
		outl += res->outliers[t];
		failed += d->tests[t].failed;
	}
	if (d->nskipped || outl || failed || res->classes_apart || d->nclasses > 1)
		tf_buf_puts(out, "\n");
	for (size_t i = 0; i < d->nskipped; i++)
		tf_buf_printf(out, "left out: %.10s, %s\n", d->skipped[i].commit, d->skipped[i].why);
	if (failed)
		tf_buf_printf(out, "left out: %zu point%s of tests that failed there\n", failed,
			      failed == 1 ? "" : "s");
	if (outl)
		tf_buf_printf(out, "set aside: %zu lone outlier%s (a single run far off both sides)\n",
			      outl, outl == 1 ? "" : "s");
	if (d->nclasses > 1 && !res->classes_apart)
		tf_buf_printf(out, "machines: %zu classes, levelled by the suite's shift where the "
			      "runner changed\n", d->nclasses);
	if (res->classes_apart)
		tf_buf_printf(out, "machines: %zu classes with too few tests to level them: only the "
			      "newest commit's machine was analysed\n", d->nclasses);
	return 0;
}

/* ---- JSON ------------------------------------------------------------------ */

static void jnum(tf_buf *b, double v)
{
	if (isfinite(v))
		tf_buf_printf(b, "%.6g", v);
	else
		tf_buf_puts(b, "null");
}

static void jfunctions(tf_buf *b, const tf_history_explained *w)
{
	tf_buf_puts(b, ",\"functions\":");
	if (!w || !w->cmp) {
		tf_buf_puts(b, "null");
		return;
	}
	tf_buf_putc(b, '[');
	for (size_t i = 0; i < w->nfunctions; i++) {
		const tf_func_delta *f = &w->functions[i].d;
		tf_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		tf_buf_put_json(b, f->name);
		tf_buf_puts(b, ",\"file\":");
		tf_buf_put_json(b, f->file ? f->file : "");
		tf_buf_printf(b, ",\"line\":%lld,\"before_self\":", (long long)f->line);
		jnum(b, f->base_self);
		tf_buf_puts(b, ",\"after_self\":");
		jnum(b, f->head_self);
		tf_buf_puts(b, ",\"delta_self\":");
		jnum(b, f->delta_self);
		tf_buf_puts(b, ",\"delta_total\":");
		jnum(b, f->delta_total);
		tf_buf_puts(b, ",\"caller\":");
		if (w->functions[i].caller)
			tf_buf_put_json(b, w->functions[i].caller);
		else
			tf_buf_puts(b, "null");
		tf_buf_putc(b, '}');
	}
	tf_buf_putc(b, ']');
}

int tf_history_to_json(tf_buf *b, const tf_history_render *r)
{
	const tf_history_data *d = r->data;
	const tf_history_result *res = r->result;
	tf_history_opts o;

	if (r->opts)
		o = *r->opts;
	else
		tf_history_opts_init(&o);
	tf_buf_puts(b, "{\"schema\":\"testflame-history/1\",\"suite\":");
	tf_buf_put_json(b, d->suite);
	tf_buf_puts(b, ",\"kind\":");
	tf_buf_put_json(b, d->kind);
	tf_buf_puts(b, ",\"unit\":");
	tf_buf_put_json(b, d->unit);
	tf_buf_puts(b, ",\"store\":");
	tf_buf_put_json(b, d->store ? d->store : "");
	tf_buf_printf(b, ",\"walked\":%zu,\"options\":{\"window\":%zu,\"min_segment\":%zu,"
		      "\"p_weak\":%g,\"p_strong\":%g,\"fdr\":%g,\"min_change_pct\":%g,"
		      "\"drift_window\":%zu,\"drift_pct\":%g}", d->walked, o.window, o.min_segment,
		      o.p_weak, o.p_strong, o.fdr, o.min_change_pct, o.drift_window, o.drift_pct);
	tf_buf_puts(b, ",\"classes\":[");
	for (size_t k = 0; k < d->nclasses; k++) {
		if (k)
			tf_buf_putc(b, ',');
		tf_buf_put_json(b, d->classes[k]);
	}
	tf_buf_puts(b, "],\"commits\":[");
	for (size_t i = 0; i < d->ncommits; i++) {
		const tf_history_commit *c = &d->commits[i];
		tf_buf_puts(b, i ? ",{\"commit\":" : "{\"commit\":");
		tf_buf_put_json(b, c->commit);
		tf_buf_puts(b, ",\"subject\":");
		if (c->subject)
			tf_buf_put_json(b, c->subject);
		else
			tf_buf_puts(b, "null");
		tf_buf_printf(b, ",\"class\":%u,\"runs\":%zu,\"class_shift_pct\":", c->klass, c->runs);
		jnum(b, res->class_shift_pct ? res->class_shift_pct[i] : 0);
		tf_buf_puts(b, ",\"suite_shift_pct\":");
		jnum(b, res->common_shift_pct ? res->common_shift_pct[i] : NAN);
		tf_buf_putc(b, '}');
	}
	tf_buf_puts(b, "],\"tests\":[");
	for (size_t t = 0; t < d->ntests; t++) {
		tf_buf_puts(b, t ? ",{\"name\":" : "{\"name\":");
		tf_buf_put_json(b, d->tests[t].name);
		tf_buf_printf(b, ",\"measure\":\"%s\",\"failed\":%zu,\"outliers\":%zu,\"costs\":[",
			      measure_names[d->tests[t].measure], d->tests[t].failed, res->outliers[t]);
		for (size_t i = 0; i < d->ncommits; i++) {
			if (i)
				tf_buf_putc(b, ',');
			jnum(b, d->cost[t * d->ncommits + i]);
		}
		tf_buf_puts(b, "]}");
	}
	tf_buf_puts(b, "],\"changes\":[");
	for (size_t i = 0; i < res->nchanges; i++) {
		const tf_history_change *c = &res->changes[i];
		tf_buf_printf(b, "%s{\"group\":%zu,\"test\":", i ? "," : "", c->group);
		tf_buf_put_json(b, tf_history_test_name(d, c->test));
		tf_buf_printf(b, ",\"commit\":\"%s\",\"previous\":\"%s\",\"index\":%zu,"
			      "\"size_pct\":", d->commits[c->at].commit, d->commits[c->prev].commit, c->at);
		jnum(b, c->size_pct);
		tf_buf_puts(b, ",\"ci_pct\":[");
		jnum(b, c->ci_low_pct);
		tf_buf_putc(b, ',');
		jnum(b, c->ci_high_pct);
		tf_buf_puts(b, "],\"p\":");
		jnum(b, c->p);
		tf_buf_puts(b, ",\"q\":");
		jnum(b, c->p_adjusted);
		tf_buf_puts(b, ",\"before\":");
		jnum(b, c->before);
		tf_buf_puts(b, ",\"after\":");
		jnum(b, c->after);
		jfunctions(b, r->change_why ? &r->change_why[i] : NULL);
		tf_buf_putc(b, '}');
	}
	tf_buf_puts(b, "],\"drifts\":[");
	for (size_t i = 0; i < res->ndrifts; i++) {
		const tf_history_drift *x = &res->drifts[i];
		tf_buf_puts(b, i ? ",{\"test\":" : "{\"test\":");
		tf_buf_put_json(b, tf_history_test_name(d, x->test));
		tf_buf_printf(b, ",\"from\":\"%s\",\"to\":\"%s\",\"from_index\":%zu,\"to_index\":%zu,"
			      "\"slope_pct\":", d->commits[x->from].commit, d->commits[x->to].commit,
			      x->from, x->to);
		jnum(b, x->slope_pct);
		tf_buf_puts(b, ",\"total_pct\":");
		jnum(b, x->total_pct);
		tf_buf_puts(b, ",\"latest_vs_best_pct\":");
		jnum(b, x->latest_vs_best_pct);
		tf_buf_puts(b, ",\"p\":");
		jnum(b, x->p);
		tf_buf_puts(b, ",\"q\":");
		jnum(b, x->p_adjusted);
		tf_buf_puts(b, ",\"contributors\":[");
		for (size_t k = 0; k < x->ntop; k++) {
			tf_buf_printf(b, "%s{\"commit\":\"%s\",\"pct\":", k ? "," : "",
				      d->commits[x->top[k]].commit);
			jnum(b, x->top_pct[k]);
			tf_buf_putc(b, '}');
		}
		tf_buf_putc(b, ']');
		jfunctions(b, r->drift_why ? &r->drift_why[i] : NULL);
		tf_buf_putc(b, '}');
	}
	tf_buf_puts(b, "],\"skipped\":[");
	for (size_t i = 0; i < d->nskipped; i++) {
		tf_buf_printf(b, "%s{\"commit\":\"%s\",\"why\":", i ? "," : "", d->skipped[i].commit);
		tf_buf_put_json(b, d->skipped[i].why);
		tf_buf_putc(b, '}');
	}
	tf_buf_printf(b, "],\"classes_apart\":%s}\n", res->classes_apart ? "true" : "false");
	return 0;
}

/* ---- the run's note ---------------------------------------------------------- */

static void md_text(tf_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < ' ' || c == 0x7f)
			tf_buf_putc(b, ' ');
		else if (c == '<')
			tf_buf_puts(b, "&lt;");
		else if (c == '>')
			tf_buf_puts(b, "&gt;");
		else if (c == '&')
			tf_buf_puts(b, "&amp;");
		else if (strchr("\\`*_{}[]()#+-.!|~\"'", c))
			tf_buf_printf(b, "\\%c", c);
		else
			tf_buf_putc(b, (char)c);
	}
}

void tf_history_note_markdown(tf_buf *out, const tf_history_render *r, size_t recent)
{
	const tf_history_data *d = r->data;
	const tf_history_result *res = r->result;
	tf_history_opts o;
	size_t from = d->ncommits > recent ? d->ncommits - recent : 0;
	bool any = false;

	if (r->opts)
		o = *r->opts;
	else
		tf_history_opts_init(&o);
	/* a change is completed when its new level has min_segment points: it
	 * was completed by the newest `recent` commits when that point is among
	 * them */
	for (size_t i = 0; i < res->nchanges; i++) {
		const tf_history_change *c = &res->changes[i];
		size_t done = c->at + o.min_segment - 1;
		if (done < from)
			continue;
		if (!any)
			tf_buf_puts(out, "### history\n\n");
		any = true;
		tf_buf_puts(out, "- `");
		tf_buf_printf(out, "%.10s", d->commits[c->at].commit);
		tf_buf_puts(out, "` ");
		md_text(out, tf_history_test_name(d, c->test));
		tf_buf_puts(out, ": ");
		put_pct(out, c->size_pct);
		tf_buf_puts(out, " since ");
		tf_buf_printf(out, "%.10s", d->commits[c->prev].commit);
		tf_buf_puts(out, " (a step)\n");
	}
	for (size_t i = 0; i < res->ndrifts; i++) {
		const tf_history_drift *x = &res->drifts[i];
		if (x->to < from)
			continue;
		if (!any)
			tf_buf_puts(out, "### history\n\n");
		any = true;
		tf_buf_puts(out, "- ");
		md_text(out, tf_history_test_name(d, x->test));
		tf_buf_puts(out, ": ");
		put_pct(out, x->total_pct);
		tf_buf_printf(out, " over the last %zu stored commits (a drift)\n", x->to - x->from + 1);
	}
	if (any)
		tf_buf_puts(out, "\n`testflame history` shows what moved.\n");
}
