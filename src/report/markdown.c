/*
 * markdown.c - report.md, the PR/MR comment, and the GitHub step summary.
 * What a reviewer sees first: a headline (how many tests regressed,
 * improved, stayed; against which baseline commit and how far back), the
 * table of changed tests, and for each regressed test the functions that
 * grew most with file:line, linked to the source at the head commit. It is
 * written when nothing changed too, so a silent run is never mistaken for
 * a green one.
 *
 * Hosts refuse comments over 65,536 characters, so the comment is rendered
 * against a byte budget: when it does not fit, the least important rows go
 * first (the tail of the table, then functions, then whole detail blocks,
 * then long names get shorter) and the comment says what it left out.
 * Names are put inside <code> with the characters that could act where
 * they stand as numeric references (markup.c): no pipe can split a cell,
 * no backtick or bracket can open markup, no "@name" can notify anyone, no
 * URL becomes a link; `lib.c:30` and `YAML::Emitter` stay as they are, for
 * whoever reads the raw text (notifications, the API, logs).
 */
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	size_t rows;      /* changed tests in the table */
	size_t details;   /* regressed tests with a function block */
	size_t funcs;     /* functions per block */
	size_t name_max;  /* code points of a name */
	size_t mem_rows;  /* the memory section's tests and notes */
} md_plan;

void tf_report_marker(tf_buf *out, const char *suite)
{
	static const char hex[] = "0123456789ABCDEF";
	tf_buf_puts(out, "<!-- testflame:report suite=");
	for (const unsigned char *p = (const unsigned char *)(suite ? suite : ""); *p; p++) {
		if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    *p == '.' || *p == '_' || *p == '/' || *p == '~') {
			tf_buf_putc(out, (char)*p);
		} else {
			tf_buf_putc(out, '%');
			tf_buf_putc(out, hex[*p >> 4]);
			tf_buf_putc(out, hex[*p & 15]);
		}
	}
	tf_buf_puts(out, " -->\n");
}

static void code(tf_buf *b, const char *s, size_t max)
{
	tf_buf_puts(b, "<code>");
	rp_put_md(b, s, max);
	tf_buf_puts(b, "</code>");
}

static const char *badge(tf_verdict v)
{
	switch (v) {
	case TF_VERDICT_REGRESSED: return "\xf0\x9f\x94\xba regressed";   /* red triangle */
	case TF_VERDICT_IMPROVED: return "\xe2\x9c\x85 improved";         /* check mark */
	case TF_VERDICT_NEW: return "\xf0\x9f\x86\x95 new";
	case TF_VERDICT_GONE: return "\xe2\x9e\x96 gone";
	default: return tf_verdict_name(v);
	}
}

/* A commit as short code, linked to its page when the host is known. */
static void commit_ref(tf_buf *b, const rp_ctx *x, const char *commit)
{
	tf_buf url = TF_BUF_INIT;
	char shortc[13];

	snprintf(shortc, sizeof(shortc), "%.12s", commit);
	if (rp_put_commit_url(&url, x, commit)) {
		tf_buf_puts(b, "[");
		code(b, shortc, 12);
		tf_buf_printf(b, "](%s)", url.ptr);
	} else {
		code(b, shortc, 12);
	}
	tf_buf_free(&url);
}

static void headline(tf_buf *b, rp_ctx *x)
{
	const tf_comparison *c = x->c;
	const tf_compare_summary *s = &c->summary;
	static const tf_verdict order[] = {
		TF_VERDICT_IMPROVED, TF_VERDICT_NEW, TF_VERDICT_GONE, TF_VERDICT_INCONCLUSIVE,
		TF_VERDICT_UNCHANGED,
	};
	size_t nreg = s->count[TF_VERDICT_REGRESSED];

	tf_buf_puts(b, "### testflame \xc2\xb7 ");
	code(b, x->suite, 80);
	tf_buf_puts(b, "\n\n");
	if (nreg)
		tf_buf_printf(b, "**\xf0\x9f\x94\xba %zu of %zu test%s regressed**", nreg, s->ntests,
			      s->ntests == 1 ? "" : "s");
	else
		tf_buf_printf(b, "**\xe2\x9c\x85 No regressions in %zu test%s**", s->ntests,
			      s->ntests == 1 ? "" : "s");
	for (size_t i = 0; i < TF_ARRAY_SIZE(order); i++)
		if (s->count[order[i]])
			tf_buf_printf(b, " \xc2\xb7 %zu %s", s->count[order[i]], tf_verdict_name(order[i]));
	tf_buf_puts(b, "\n\n");
	rp_memory_headline(b, x);

	/* against what */
	tf_buf_puts(b, "Baseline ");
	if (x->base_commit) {
		commit_ref(b, x, x->base_commit);
	} else {
		for (size_t i = 0; i < c->base.n && i < 3; i++) {
			if (i)
				tf_buf_puts(b, ", ");
			code(b, c->base.names[i], 60);
		}
	}
	if (x->o.base_distance == 0)
		tf_buf_puts(b, " (the head commit itself)");
	else if (x->o.base_distance > 0)
		tf_buf_printf(b, " (%ld commit%s behind)", x->o.base_distance,
			      x->o.base_distance == 1 ? "" : "s");
	if (x->head_commit) {
		tf_buf_puts(b, " \xe2\x86\x92 head ");
		commit_ref(b, x, x->head_commit);
	}
	tf_buf_puts(b, " \xc2\xb7 ");
	code(b, s->event, 40);
	if (x->c->waits)
		tf_buf_puts(b, " and time waited (judged apart)");
	else if (s->measure == TF_GATE_WALL)
		tf_buf_puts(b, " as wall time (CPU and waits)");
	tf_buf_printf(b, ", threshold %g%%", s->threshold);
	if (s->base_runs > 1 || s->head_runs > 1)
		tf_buf_printf(b, ", %zu vs %zu runs", s->base_runs, s->head_runs);
	if (x->run_url)
		tf_buf_printf(b, " \xc2\xb7 [CI run](%s)", x->run_url);
	if (x->o.artifact_url)
		tf_buf_printf(b, " \xc2\xb7 [full report](%s)", x->o.artifact_url);
	tf_buf_puts(b, "\n\n");
	if (s->measure_note) {
		tf_buf_puts(b, "_");
		rp_put_md_text(b, s->measure_note, 300);
		tf_buf_puts(b, "._\n\n");
	}
	if (s->origin) {
		tf_buf_puts(b, "_Head: ");
		rp_put_md(b, s->origin, 600);
		tf_buf_puts(b, "._\n\n");
	}
	if (s->confirmation) {
		tf_buf_puts(b, "_Confirmed: ");
		rp_put_md_text(b, s->confirmation, 600);
		tf_buf_puts(b, "._\n\n");
	}
	if (!isnan(s->shift_pct))
		tf_buf_printf(b, "_Runner: %s%.1f%% (±%.1f%%) against the baseline's, the median of "
			      "the %zu tests that ran no changed code; taken out of every test._\n\n",
			      s->shift_pct >= 0 ? "+" : "", s->shift_pct, s->shift_ci_pct,
			      s->control_tests);
	else if (s->shift_note && s->env_diff) {
		tf_buf_puts(b, "_Runner: its shift is not measured (");
		rp_put_md_text(b, s->shift_note, 300);
		tf_buf_puts(b, ")._\n\n");
	}
	if (s->env_diff) {
		/* every test may move with the machine */
		tf_buf_puts(b, "_The two sides ran on different machines: ");
		rp_put_md_text(b, s->env_diff, 600);
		tf_buf_puts(b, "._\n\n");
	}
	if (s->version_diff) {
		tf_buf_puts(b, "\xe2\x9a\xa0\xef\xb8\x8f _");
		rp_put_md_text(b, s->version_diff, 600);
		tf_buf_puts(b, "._\n\n");
	}
	/* the runs' notes, short: the whole of each is in report.json */
	tf_comparison_note notes[3];
	size_t nn = tf_comparison_notes(c, notes, TF_ARRAY_SIZE(notes));
	for (size_t i = 0; i < nn && i < TF_ARRAY_SIZE(notes); i++) {
		tf_buf_printf(b, "_Note (%s): ", notes[i].side);
		rp_put_md_text(b, notes[i].text, 300);
		tf_buf_puts(b, "._\n\n");
	}
	if (nn > TF_ARRAY_SIZE(notes))
		tf_buf_printf(b, "_%zu more notes in report.json._\n\n", nn - TF_ARRAY_SIZE(notes));
}

/* Which testflame measured each side, in the footer. */
static void made_by(tf_buf *b, const tf_compare_summary *s)
{
	if (!s->head_made_by)
		return;
	tf_buf_puts(b, " \xc2\xb7 head measured by ");
	rp_put_md_text(b, s->head_made_by, 120);
	if (s->base_made_by && strcmp(s->base_made_by, s->head_made_by) != 0) {
		tf_buf_puts(b, ", base by ");
		rp_put_md_text(b, s->base_made_by, 120);
	}
}

static void table(tf_buf *b, rp_ctx *x, const md_plan *pl, size_t *left_out)
{
	const tf_comparison *c = x->c;
	size_t shown = 0;

	*left_out = 0;
	if (!x->nchanged)
		return;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		char base[48], head[48], d[32], lo[32], hi[32];
		if (!rp_changed(t))
			continue;
		if (shown >= pl->rows) {
			(*left_out)++;
			continue;
		}
		if (!shown)
			tf_buf_puts(b, "| | Test | Base | Head | \xce\x94 | 95% CI |\n"
				       "|---|---|---:|---:|---:|---:|\n");
		shown++;
		/* a verdict of its waits: the time it waited */
		const tf_test_side *bs = t->waits_lead ? &t->wait->base : &t->base;
		const tf_test_side *hs = t->waits_lead ? &t->wait->head : &t->head;
		const char *unit = t->waits_lead ? "nanoseconds" : x->unit;
		rp_cost(base, sizeof(base), bs->cost, unit);
		rp_cost(head, sizeof(head), hs->cost, unit);
		if (!(bs->cost > 0))
			snprintf(base, sizeof(base), t->waits_lead ? "0" : "-");
		if (!(hs->cost > 0))
			snprintf(head, sizeof(head), t->waits_lead ? "0" : "-");
		rp_pct(d, sizeof(d), t->delta_pct);
		/* the work outside the tests is shown, not judged: which way it
		 * moved, without a verdict's badge */
		bool ungated = t->outside && !c->summary.gate_outside &&
			       (t->verdict == TF_VERDICT_REGRESSED || t->verdict == TF_VERDICT_IMPROVED);
		const char *word = !ungated ? badge(t->verdict)
				   : t->verdict == TF_VERDICT_REGRESSED ? "slower" : "faster";
		const char *bold = t->verdict == TF_VERDICT_REGRESSED && !ungated ? "**" : "";
		tf_buf_printf(b, "| %s | ", word);
		code(b, t->name, pl->name_max);
		if (t->waits_lead)
			tf_buf_puts(b, " (waiting)");
		tf_buf_printf(b, " | %s | %s | %s%s%s | ", base, head, bold, d, bold);
		if (isfinite(t->ci_low_pct)) {
			rp_pct(lo, sizeof(lo), t->ci_low_pct);
			rp_pct(hi, sizeof(hi), t->ci_high_pct);
			tf_buf_printf(b, "%s \xe2\x80\xa6 %s", lo, hi);
		} else {
			tf_buf_puts(b, "-");
		}
		tf_buf_puts(b, " |\n");
	}
	tf_buf_putc(b, '\n');
	/* the undecided rows: why, and what would decide them */
	bool first = true;
	for (size_t i = 0, row = 0; i < c->ntests && row < shown; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (!rp_changed(t))
			continue;
		row++;
		if (t->verdict != TF_VERDICT_INCONCLUSIVE || !t->reason || t->confirm_runs)
			continue;
		if (first)
			tf_buf_puts(b, "Undecided, so not failing the check:\n\n");
		first = false;
		tf_buf_puts(b, "- ");
		code(b, t->name, pl->name_max);
		tf_buf_puts(b, ": ");
		rp_put_md_text(b, t->reason, 400);
		tf_buf_putc(b, '\n');
	}
	if (!first)
		tf_buf_putc(b, '\n');
	/* the tests confirmed alone: their verdicts, and the runs that decided them */
	first = true;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (!t->confirm_runs || !t->reason)
			continue;
		if (first)
			tf_buf_puts(b, "Confirmed by running each alone beside the merge-base:\n\n");
		first = false;
		tf_buf_puts(b, "- ");
		code(b, t->name, pl->name_max);
		tf_buf_printf(b, ": %s, ", tf_verdict_name(t->verdict));
		rp_put_md_text(b, t->reason, 400);
		tf_buf_putc(b, '\n');
	}
	if (!first)
		tf_buf_putc(b, '\n');
}

void rp_md_location(tf_buf *b, const rp_ctx *x, const char *file, int64_t line, size_t name_max)
{
	const char *path = rp_repo_path(x, file);
	const char *shown = path ? path : strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	tf_buf url = TF_BUF_INIT, text = TF_BUF_INIT;

	if (!*file) {
		tf_buf_puts(b, "-");
		return;
	}
	tf_buf_puts(&text, shown);
	if (line > 0)
		tf_buf_printf(&text, ":%lld", (long long)line);
	if (path && rp_put_source_url(&url, x, path, line)) {
		tf_buf_puts(b, "[");
		code(b, text.ptr, name_max);
		tf_buf_printf(b, "](%s)", url.ptr);
	} else {
		code(b, text.ptr, name_max);
	}
	tf_buf_free(&url);
	tf_buf_free(&text);
}

/* The caller's link for a regressed test (Grafana's comparison), as a
 * Markdown link: the URL's parentheses and spaces percent-encoded, so it
 * cannot end the link early. */
static void test_link(tf_buf *b, const rp_ctx *x, const char *test)
{
	char *url = x->o.test_link ? x->o.test_link(test, x->o.test_link_payload) : NULL;
	if (!url)
		return;
	tf_buf_printf(b, "[%s](", x->o.test_link_text ? x->o.test_link_text : "compare");
	for (const char *c = url; *c; c++) {
		if (*c == '(' || *c == ')' || *c == ' ' || *c == '<' || *c == '>' ||
		    (unsigned char)*c < 0x20)
			tf_buf_printf(b, "%%%02X", (unsigned char)*c);
		else
			tf_buf_putc(b, *c);
	}
	tf_buf_puts(b, ")\n\n");
	free(url);
}

/*
 * Where a test waited more: each place the blocking call, the function
 * that called it (linked to the line), why the kernel kept the thread
 * waiting, and how much longer a run; the off-CPU diff flame graph is in
 * the report directory.
 */
static void wait_details(tf_buf *b, rp_ctx *x, const md_plan *pl, const tf_test_delta *t,
			 bool open)
{
	const tf_test_delta *w = t->wait;
	char d[48], base[48], head[48];

	rp_signed_cost(d, sizeof(d), w->head.cost - w->base.cost, "nanoseconds");
	rp_cost(base, sizeof(base), w->base.cost, "nanoseconds");
	rp_cost(head, sizeof(head), w->head.cost, "nanoseconds");
	tf_buf_printf(b, "<details%s><summary>\xe2\x8f\xb3 ", open ? " open" : "");
	code(b, t->name, pl->name_max);
	tf_buf_printf(b, " waiting %s a run (%s \xe2\x86\x92 %s): where it waited more</summary>\n\n",
		      d, w->base.cost > 0 ? base : "0", head);
	if (!(t->grew & TF_GREW_CPU) && isfinite(t->cpu.delta_pct)) {
		char cp[32];
		rp_pct(cp, sizeof(cp), t->cpu.delta_pct);
		tf_buf_printf(b, "Its CPU time moved by %s: it is slower because it waits.\n\n", cp);
	}
	if (!w->nfunctions) {
		tf_buf_puts(b, "No single place stands out.\n\n</details>\n\n");
		return;
	}
	tf_buf_puts(b, "| Blocking call | Called from | Why | Waited \xce\x94 | Base \xe2\x86\x92 head |\n"
		       "|---|---|---|---:|---:|\n");
	for (size_t k = 0; k < w->nfunctions && k < pl->funcs; k++) {
		const tf_func_delta *f = &w->functions[k];
		char ds[48], bs[48], hs[48];
		rp_signed_cost(ds, sizeof(ds), f->delta_self, "nanoseconds");
		rp_cost(bs, sizeof(bs), f->base_self, "nanoseconds");
		rp_cost(hs, sizeof(hs), f->head_self, "nanoseconds");
		tf_buf_puts(b, "| ");
		code(b, f->name, pl->name_max);
		tf_buf_puts(b, " | ");
		if (f->caller) {
			code(b, f->caller, pl->name_max);
			tf_buf_puts(b, " ");
			rp_md_location(b, x, f->file, f->line, pl->name_max);
		} else {
			tf_buf_puts(b, "-");
		}
		tf_buf_printf(b, " | %s | %s | %s \xe2\x86\x92 %s |\n", f->reason ? f->reason : "-",
			      ds, f->base_self > 0 ? bs : "0", hs);
	}
	char *svg = tf_report_file_name(t->name, ".offcpu.svg");
	tf_buf_puts(b, "\nOff-CPU diff flame graph: ");
	code(b, svg, pl->name_max);
	tf_buf_puts(b, " in the report.\n\n</details>\n\n");
	free(svg);
}

/* The functions of the regressed tests the gate judged, as many as the
 * plan has room for; the work outside the tests, not judged, has no
 * place of its own (its row is in the table), however much it grew. */
static void details(tf_buf *b, rp_ctx *x, const md_plan *pl, size_t *left_out)
{
	const tf_comparison *c = x->c;
	size_t shown = 0;

	*left_out = 0;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		char d[32], base[48], head[48];
		if (t->verdict != TF_VERDICT_REGRESSED || (t->outside && !c->summary.gate_outside))
			continue;
		if (shown >= pl->details || !pl->funcs) {
			(*left_out)++;
			continue;
		}
		if (rp_waits_shown(t))
			wait_details(b, x, pl, t, !shown);
		if (t->wait && !(t->grew & TF_GREW_CPU)) {
			shown++;
			continue;
		}
		rp_pct(d, sizeof(d), t->cpu.delta_pct);
		rp_cost(base, sizeof(base), t->base.cost, x->unit);
		rp_cost(head, sizeof(head), t->head.cost, x->unit);
		tf_buf_printf(b, "<details%s><summary>\xf0\x9f\x94\xba ", shown || t->wait ? "" : " open");
		code(b, t->name, pl->name_max);
		tf_buf_printf(b, " %s (%s \xe2\x86\x92 %s): where it grew</summary>\n\n", d, base, head);
		shown++;
		test_link(b, x, t->name);
		if (!t->nfunctions) {
			tf_buf_puts(b, "No single function stands out (the growth is spread thin).\n\n"
				       "</details>\n\n");
			continue;
		}
		tf_buf_puts(b, "| Function | Self \xce\x94 | Total \xce\x94 | Self, base \xe2\x86\x92 head | Location |\n"
			       "|---|---:|---:|---:|---|\n");
		for (size_t k = 0; k < t->nfunctions && k < pl->funcs; k++) {
			const tf_func_delta *f = &t->functions[k];
			char ds[48], dt[48], bs[48], hs[48];
			rp_signed_cost(ds, sizeof(ds), f->delta_self, x->unit);
			rp_signed_cost(dt, sizeof(dt), f->delta_total, x->unit);
			rp_cost(bs, sizeof(bs), f->base_self, x->unit);
			rp_cost(hs, sizeof(hs), f->head_self, x->unit);
			tf_buf_puts(b, "| ");
			code(b, f->name, pl->name_max);
			tf_buf_printf(b, " | %s | %s | %s \xe2\x86\x92 %s | ", ds, dt, bs, hs);
			rp_md_location(b, x, f->file, f->line, pl->name_max);
			tf_buf_puts(b, f->changed ? " (changed) |\n" : " |\n");
		}
		if (t->nfunctions > pl->funcs)
			tf_buf_printf(b, "\n_%zu more function%s in the full report._\n",
				      t->nfunctions - pl->funcs, t->nfunctions - pl->funcs == 1 ? "" : "s");
		tf_buf_puts(b, "\n</details>\n\n");
	}
}

static void render(tf_buf *b, rp_ctx *x, const md_plan *pl, bool marker, bool trimmed)
{
	size_t rows_left, details_left;

	if (marker)
		tf_report_marker(b, x->suite);
	headline(b, x);
	table(b, x, pl, &rows_left);
	details(b, x, pl, &details_left);
	rp_memory_markdown(b, x, pl->mem_rows, pl->mem_rows ? pl->funcs : 0, pl->name_max);
	if (rows_left || details_left || trimmed) {
		tf_buf_puts(b, "_Left out to keep this short: ");
		if (rows_left)
			tf_buf_printf(b, "%zu changed test%s%s", rows_left, rows_left == 1 ? "" : "s",
				      details_left ? " and " : "");
		if (details_left)
			tf_buf_printf(b, "the functions of %zu regressed test%s", details_left,
				      details_left == 1 ? "" : "s");
		if (!rows_left && !details_left)
			tf_buf_puts(b, "some functions (and long names are shortened)");
		tf_buf_puts(b, x->o.artifact_url ? "; the [full report](" : "; the full report");
		if (x->o.artifact_url)
			tf_buf_printf(b, "%s)", x->o.artifact_url);
		tf_buf_puts(b, " has everything._\n\n");
	}
	if (x->c->summary.count[TF_VERDICT_INCONCLUSIVE])
		tf_buf_printf(b, "%zu test%s could not be decided (too few samples or too noisy); "
				 "they do not fail the check.\n\n",
			      x->c->summary.count[TF_VERDICT_INCONCLUSIVE],
			      x->c->summary.count[TF_VERDICT_INCONCLUSIVE] == 1 ? "" : "s");
	tf_buf_printf(b, "<sub>testflame %s \xc2\xb7 a test regresses when it is slower by at least %g%% "
			 "and the change is significant (\xce\xb1 = %g, %s)",
		      TF_VERSION, x->c->summary.threshold, x->c->summary.alpha,
		      tf_correction_name(x->c->summary.correction));
	made_by(b, &x->c->summary);
	tf_buf_puts(b, "</sub>\n");
}

/* Cut at a UTF-8 boundary, closing what may be open: the last resort when
 * even the smallest plan does not fit (a gigantic suite name or URL). */
static void hard_cut(tf_buf *b, size_t limit)
{
	static const char tail[] = "\n\n</code></details>\n\n_(cut to fit the size limit)_\n";
	size_t keep = limit > sizeof(tail) ? limit - sizeof(tail) : 0;
	while (keep && (b->ptr[keep] & 0xc0) == 0x80)
		keep--;
	b->len = keep;
	b->ptr[keep] = '\0';
	if (limit > sizeof(tail))
		tf_buf_puts(b, tail);
}

/* The comment is read in a PR; the step summary has room (1 MiB) for
 * every change a person would scroll through. */
#define SUMMARY_MAX_TESTS 1000
#define SUMMARY_MAX_DETAILS 100

static int render_within(tf_buf *out, rp_ctx *x, size_t limit, bool comment)
{
	const tf_compare_summary *s = &x->c->summary;
	size_t nreg = s->count[TF_VERDICT_REGRESSED];
	md_plan pl = { TF_MIN(x->nchanged, comment ? x->o.md_max_tests : SUMMARY_MAX_TESTS),
		       TF_MIN(nreg, comment ? (size_t)20 : SUMMARY_MAX_DETAILS),
		       x->o.md_max_functions, TF_MIN(x->o.name_max, (size_t)120),
		       comment ? (size_t)20 : SUMMARY_MAX_DETAILS };
	bool marker = comment;
	tf_buf b = TF_BUF_INIT;
	bool trimmed = false;

	for (;;) {
		tf_buf_clear(&b);
		render(&b, x, &pl, marker, trimmed);
		if (!limit || b.len <= limit)
			break;
		trimmed = true;
		if (pl.mem_rows > 5)
			pl.mem_rows /= 2;
		else if (pl.rows > TF_MAX(nreg, (size_t)10))
			pl.rows = TF_MAX(TF_MAX(nreg, (size_t)10), pl.rows / 2);
		else if (pl.funcs > 3)
			pl.funcs = TF_MAX((size_t)3, pl.funcs / 2);
		else if (pl.details > 1)
			pl.details /= 2;
		else if (pl.rows > 1)
			pl.rows /= 2;
		else if (pl.name_max > 40)
			pl.name_max /= 2;
		else if (pl.details || pl.funcs)
			pl.details = pl.funcs = 0;
		else if (pl.rows)
			pl.rows = 0;
		else {
			hard_cut(&b, limit);
			break;
		}
	}
	tf_buf_put(out, b.ptr, b.len);
	tf_buf_free(&b);
	return 0;
}

int tf_report_markdown(tf_buf *out, const tf_comparison *c, const tf_report_opts *o)
{
	rp_ctx x;
	rp_ctx_init(&x, c, o);
	int rc = render_within(out, &x, x.o.md_max_bytes, true);
	rp_ctx_free(&x);
	return rc;
}

int tf_report_step_summary(tf_buf *out, const tf_comparison *c, const tf_report_opts *o)
{
	rp_ctx x;
	rp_ctx_init(&x, c, o);
	int rc = render_within(out, &x, x.o.summary_max_bytes, false);
	rp_ctx_free(&x);
	return rc;
}
