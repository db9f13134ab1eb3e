/*
 * table.c - the terminal table: what a developer reads in a CI log or after
 * a local run. It fits 80-100 columns (long test names are shortened from
 * the left, where their least specific part is; long function names lose
 * their argument lists and template arguments, then their end, never
 * their file:line), lists the tests in the order of attention with their delta and 95% interval, then for each
 * regressed test the functions that grew most with file:line, and ends with
 * one line a person can grep for. Colour only when asked (a TTY), and
 * control characters in names are neutralised so a test name cannot drive
 * the terminal.
 */
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tf_table_opts_init(tf_table_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->width = 100;
	o->max_tests = 30;
	o->max_functions = 5;
}

/* Three significant digits, no exponent. */
static void sig3(char *buf, size_t len, double v, const char *suffix)
{
	double a = fabs(v);
	const char *fmt = a >= 99.95 ? "%.0f%s%s" : a >= 9.995 ? "%.1f%s%s" : "%.2f%s%s";
	snprintf(buf, len, fmt, v, *suffix ? " " : "", suffix);
}

/* Units people read, largest first: from `min` on, divide by `div`. The
 * last step prints whole numbers. Counts switch to "k" at 10,000 so that a
 * four-digit count stays exact. */
static const struct {
	const char *unit;
	struct { double min, div; const char *suffix; } steps[4];
} units[] = {
	{ "nanoseconds", { { 1e9, 1e9, "s" }, { 1e6, 1e6, "ms" }, { 1e3, 1e3, "us" }, { 0, 1, "ns" } } },
	{ "bytes", { { 1073741824.0, 1073741824.0, "GiB" }, { 1048576.0, 1048576.0, "MiB" },
		     { 1024, 1024, "KiB" }, { 0, 1, "B" } } },
	{ NULL, { { 1e9, 1e9, "G" }, { 1e6, 1e6, "M" }, { 1e4, 1e3, "k" }, { 0, 1, "" } } },
};

void tf_compare_format_cost(char *buf, size_t len, double v, const char *unit)
{
	double a = fabs(v);
	size_t u = 0;

	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	while (units[u].unit && !(unit && strcmp(unit, units[u].unit) == 0))
		u++;
	for (int k = 0; k < 3; k++) {
		if (a >= units[u].steps[k].min) {
			sig3(buf, len, v / units[u].steps[k].div, units[u].steps[k].suffix);
			return;
		}
	}
	if (a != floor(a) && !units[u].unit)
		sig3(buf, len, v, "");
	else
		snprintf(buf, len, "%.0f%s%s", v, *units[u].steps[3].suffix ? " " : "",
			 units[u].steps[3].suffix);
}

static void signed_cost(char *buf, size_t len, double v, const char *unit)
{
	char tmp[48];
	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	tf_compare_format_cost(tmp, sizeof(tmp), fabs(v), unit);
	snprintf(buf, len, "%s%s", v < 0 ? "-" : v > 0 ? "+" : "", tmp);
}

/* Display width of UTF-8 text (code points; wide characters are rare in
 * test and function names, so one column each). */
static size_t width_of(const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xc0) != 0x80)
			w++;
	return w;
}

/* Append `s` in at most `width` columns, control characters replaced, the
 * start elided ("...") when too long; padded to `width` when `pad`. */
static void put_fit(tf_buf *b, const char *s, size_t width, bool pad)
{
	size_t w = width_of(s);
	const unsigned char *p = (const unsigned char *)s;

	if (w > width) {
		size_t skip = w - (width > 3 ? width - 3 : 0);
		tf_buf_put(b, "...", width > 3 ? 3 : width);
		while (*p && skip) {
			p++;
			while ((*p & 0xc0) == 0x80)
				p++;
			skip--;
		}
		w = width;
	}
	for (; *p; p++)
		tf_buf_putc(b, (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p);
	if (pad)
		for (; w < width; w++)
			tf_buf_putc(b, ' ');
}

/* Append `s` wrapped at spaces into lines of at most `width` columns,
 * each after `indent` spaces; control characters replaced. */
static void put_wrapped(tf_buf *b, const char *s, size_t indent, size_t width)
{
	tf_buf word = TF_BUF_INIT;
	size_t col = 0;

	while (*s) {
		while (*s == ' ')
			s++;
		const char *e = s;
		while (*e && *e != ' ')
			e++;
		if (e == s)
			break;
		tf_buf_clear(&word);
		tf_buf_put(&word, s, (size_t)(e - s));
		size_t w = width_of(word.ptr);
		if (col && col + 1 + w > width) {
			tf_buf_putc(b, '\n');
			col = 0;
		}
		if (!col)
			for (size_t i = 0; i < indent; i++)
				tf_buf_putc(b, ' ');
		else
			tf_buf_putc(b, ' ');
		put_fit(b, word.ptr, w, false);
		col += (col ? 1 : 0) + w;
		s = e;
	}
	if (col)
		tf_buf_putc(b, '\n');
	tf_buf_free(&word);
}

/* Append `s` in at most `width` columns, the end elided ("...") when too
 * long: for lines whose start says what they are. */
static void put_fit_end(tf_buf *b, const char *s, size_t width)
{
	size_t w = width_of(s), keep = w > width ? (width > 3 ? width - 3 : 0) : w;
	const unsigned char *p = (const unsigned char *)s;

	for (size_t n = 0; *p && n < keep; n++) {
		tf_buf_putc(b, (*p < 0x20 || *p == 0x7f) ? '?' : (char)*p);
		for (p++; (*p & 0xc0) == 0x80; p++)
			tf_buf_putc(b, (char)*p);
	}
	if (w > width)
		tf_buf_put(b, "...", width > 3 ? 3 : width);
}

/*
 * A C++ (or Rust) name with its argument lists and template arguments
 * elided: "YAML::Utils::WriteAlias(YAML::ostream_wrapper&, ...)" is
 * "YAML::Utils::WriteAlias(…)", "std::vector<int>::push_back(int&&)" is
 * "std::vector<…>::push_back(…)". What names the function stays; the
 * operator of "operator<<" or "operator()" is part of the name.
 */
static void elide_args(tf_buf *out, const char *s)
{
	int depth = 0;
	for (const char *p = s; *p; p++) {
		if (depth == 0 && out->len >= 8 && memcmp(out->ptr + out->len - 8, "operator", 8) == 0) {
			/* the operator's own characters */
			while (*p && strchr("<>()[]=!+-*/%&|^~,", *p) && *p != '(' )
				tf_buf_putc(out, *p++);
			if (p[0] == '(' && p[1] == ')') {
				tf_buf_puts(out, "()");
				p += 2;
			}
			if (!*p)
				break;
		}
		char c = *p;
		if (c == '<' || c == '(') {
			if (depth++ == 0) {
				tf_buf_putc(out, c);
				tf_buf_puts(out, "\xe2\x80\xa6"); /* … */
			}
			continue;
		}
		if ((c == '>' || c == ')') && depth > 0) {
			if (--depth == 0)
				tf_buf_putc(out, c);
			continue;
		}
		if (depth == 0)
			tf_buf_putc(out, c);
	}
	/* unbalanced (a name cut short): closed */
	if (depth && out->len > 3)
		tf_buf_putc(out, out->ptr[out->len - 4] == '<' ? '>' : ')');
}

static void pad_left(tf_buf *b, const char *s, size_t width)
{
	for (size_t w = width_of(s); w < width; w++)
		tf_buf_putc(b, ' ');
	tf_buf_puts(b, s);
}

static const char *colour_of(tf_verdict v)
{
	switch (v) {
	case TF_VERDICT_REGRESSED: return "\033[1;31m";
	case TF_VERDICT_IMPROVED: return "\033[32m";
	case TF_VERDICT_INCONCLUSIVE: return "\033[33m";
	case TF_VERDICT_NEW:
	case TF_VERDICT_GONE: return "\033[36m";
	default: return "";
	}
}

static void short_rev(char *buf, size_t len, const char *rev)
{
	snprintf(buf, len, "%.12s", rev ? rev : "");
}

enum { W_VERDICT = 12, W_DELTA = 8, W_CI = 17, W_COST = 10 };

static void header(tf_buf *b, const tf_comparison *c, const tf_table_opts *o)
{
	const tf_compare_summary *s = &c->summary;
	static const tf_verdict order[] = {
		TF_VERDICT_REGRESSED, TF_VERDICT_IMPROVED, TF_VERDICT_NEW, TF_VERDICT_GONE,
		TF_VERDICT_INCONCLUSIVE, TF_VERDICT_UNCHANGED,
	};
	char br[16], hr[16];
	tf_buf line = TF_BUF_INIT;

	bool first = true;

	tf_buf_printf(&line, "testflame%s: %zu test%s", s->memory ? " memory" : "", s->ntests,
		      s->ntests == 1 ? "" : "s");
	for (size_t i = 0; i < TF_ARRAY_SIZE(order); i++) {
		if (!s->count[order[i]])
			continue;
		tf_buf_printf(&line, "%s %zu %s", first ? ":" : ",", s->count[order[i]],
			      tf_verdict_name(order[i]));
		first = false;
	}
	put_fit_end(b, line.ptr, o->width);
	tf_buf_putc(b, '\n');
	tf_buf_clear(&line);
	tf_buf_printf(&line, "  %s%s, threshold %g%%", s->event,
		      c->waits ? " and time waited" : s->measure == TF_GATE_WALL ? " as wall time" : "",
		      s->threshold);
	if (s->memory && s->min_delta_bytes > 0) {
		char m[32];
		tf_compare_format_cost(m, sizeof(m), s->min_delta_bytes, "bytes");
		tf_buf_printf(&line, " and %s", m);
	}
	tf_buf_printf(&line, ", %zu base run%s vs %zu head run%s", s->base_runs,
		      s->base_runs == 1 ? "" : "s", s->head_runs, s->head_runs == 1 ? "" : "s");
	short_rev(br, sizeof(br), tf_comparison_meta(c, false, "commit"));
	short_rev(hr, sizeof(hr), tf_comparison_meta(c, true, "commit"));
	if (*br || *hr)
		tf_buf_printf(&line, ", %s -> %s", *br ? br : "?", *hr ? hr : "?");
	put_fit_end(b, line.ptr, o->width);
	tf_buf_puts(b, "\n");
	if (s->origin) {
		tf_buf_puts(b, "  head: ");
		tf_buf_put_printable(b, s->origin);
		tf_buf_putc(b, '\n');
	}
	if (s->confirmation) {
		tf_buf_puts(b, "  confirmed: ");
		tf_buf_put_printable(b, s->confirmation);
		tf_buf_putc(b, '\n');
	}
	if (!isnan(s->shift_pct))
		tf_buf_printf(b, "  runner: %s%.1f%% (±%.1f%%) against the baseline's, the median of "
			      "the %zu tests that ran no changed code; taken out of every test\n",
			      s->shift_pct >= 0 ? "+" : "", s->shift_pct, s->shift_ci_pct,
			      s->control_tests);
	else if (s->shift_note && s->env_diff)
		tf_buf_printf(b, "  runner: its shift is not measured (%s)\n", s->shift_note);
	if (s->measure_note) {
		tf_buf_puts(b, "  ");
		tf_buf_put_printable(b, s->measure_note);
		tf_buf_putc(b, '\n');
	}
	if (s->env_diff) {
		/* the machines differ: every test may move with them */
		tf_buf_puts(b, "  the two sides ran on different machines: ");
		tf_buf_put_printable(b, s->env_diff);
		tf_buf_puts(b, "\n");
	}
	if (s->version_diff) {
		tf_buf_puts(b, "  warning: ");
		tf_buf_put_printable(b, s->version_diff);
		tf_buf_puts(b, "\n");
	}
	tf_buf_free(&line);
}

static void row(tf_buf *b, const tf_comparison *c, const tf_test_delta *t,
		const tf_table_opts *o, size_t wname)
{
	char delta[32], ci[48], base[32], head[32];
	const char *unit = c->summary.unit;

	if (isnan(t->delta_pct)) {
		snprintf(delta, sizeof(delta), "-");
		snprintf(ci, sizeof(ci), "-");
	} else {
		snprintf(delta, sizeof(delta), "%+.1f%%", t->delta_pct);
		snprintf(ci, sizeof(ci), "[%+.1f, %+.1f]", t->ci_low_pct, t->ci_high_pct);
	}
	/* a verdict of its waits: the time it waited, which the name says */
	const tf_test_side *bs = t->waits_lead ? &t->wait->base : &t->base;
	const tf_test_side *hs = t->waits_lead ? &t->wait->head : &t->head;
	if (t->waits_lead)
		unit = "nanoseconds";
	tf_compare_format_cost(base, sizeof(base), bs->cost, unit);
	tf_compare_format_cost(head, sizeof(head), hs->cost, unit);
	if (bs->cost <= 0)
		snprintf(base, sizeof(base), t->waits_lead ? "0" : "-");
	if (hs->cost <= 0)
		snprintf(head, sizeof(head), t->waits_lead ? "0" : "-");

	/* the work outside the tests is shown, not judged: which way it moved,
	 * without a verdict's word or colour */
	const char *word = tf_verdict_name(t->verdict), *colour = colour_of(t->verdict);
	if (t->outside && !c->summary.gate_outside &&
	    (t->verdict == TF_VERDICT_REGRESSED || t->verdict == TF_VERDICT_IMPROVED)) {
		word = t->verdict == TF_VERDICT_REGRESSED ? "slower" : "faster";
		colour = "";
	}
	tf_buf_puts(b, "  ");
	if (o->color && *colour)
		tf_buf_puts(b, colour);
	put_fit(b, word, W_VERDICT, !(o->color && *colour));
	if (o->color && *colour) {
		tf_buf_puts(b, "\033[0m");
		for (size_t w = strlen(word); w < W_VERDICT; w++)
			tf_buf_putc(b, ' ');
	}
	pad_left(b, delta, W_DELTA);
	tf_buf_putc(b, ' ');
	pad_left(b, ci, W_CI);
	tf_buf_putc(b, ' ');
	pad_left(b, base, W_COST);
	tf_buf_putc(b, ' ');
	pad_left(b, head, W_COST);
	tf_buf_puts(b, "  ");
	if (t->waits_lead) {
		static const char tag[] = " (waiting)";
		put_fit(b, t->name, wname > sizeof(tag) + 8 ? wname - (sizeof(tag) - 1) : wname, false);
		tf_buf_puts(b, tag);
	} else {
		put_fit(b, t->name, wname, false);
	}
	tf_buf_putc(b, '\n');
	/* undecided: why, and what would decide it; run alone: how often */
	if (t->reason && ((t->verdict == TF_VERDICT_INCONCLUSIVE &&
			   t->attention <= TF_ATTENTION_UNSURE) || t->confirm_runs))
		put_wrapped(b, t->reason, 16, o->width > 20 ? o->width - 16 : 60);
}

static void functions(tf_buf *b, const tf_comparison *c, const tf_test_delta *t,
		      const tf_table_opts *o)
{
	const char *unit = c->summary.unit;
	tf_buf line = TF_BUF_INIT;
	size_t n = TF_MIN(t->nfunctions, o->max_functions);

	if (!n)
		return;
	/* the name is shortened, never the words after it */
	if (c->summary.memory)
		tf_buf_printf(&line, " (%+.1f%%): functions that allocate %s", t->delta_pct,
			      t->verdict == TF_VERDICT_IMPROVED ? "less" : "more");
	else
		tf_buf_printf(&line, " (%+.1f%%): functions that %s most", t->delta_pct,
			      t->verdict == TF_VERDICT_IMPROVED ? "shrank" : "grew");
	tf_buf_puts(b, "\n  ");
	put_fit(b, t->name, o->width - 2 - TF_MIN(line.len, (size_t)o->width - 20), false);
	tf_buf_puts(b, line.ptr);
	tf_buf_putc(b, '\n');
	/* the cost is exact; where it went, only as exact as the samples */
	if (t->head.samples < 10 && t->measure != TF_MEASURE_SAMPLES)
		tf_buf_printf(b, "  (from %lld sample%s of the head: %s says more)\n",
			      (long long)t->head.samples, t->head.samples == 1 ? "" : "s",
			      c->summary.memory ? "a lower --memory-rate" : "a higher --freq or --repeat 3");
	pad_left(b, "self", 16);
	pad_left(b, "total", 12);
	tf_buf_puts(b, "   function\n");
	for (size_t i = 0; i < n; i++) {
		const tf_func_delta *f = &t->functions[i];
		char self[64], total[64];
		signed_cost(self, sizeof(self), f->delta_self, unit);
		signed_cost(total, sizeof(total), f->delta_total, unit);
		pad_left(b, self, 16);
		pad_left(b, total, 12);
		tf_buf_puts(b, "   ");
		/* the name from its start, then where it is: never cut the other way */
		size_t avail = o->width > 31 ? o->width - 31 : 20;
		tf_buf_clear(&line);
		if (*f->file) {
			const char *base = strrchr(f->file, '/');
			tf_buf_printf(&line, "  %s", base ? base + 1 : f->file);
			if (f->line > 0)
				tf_buf_printf(&line, ":%lld", (long long)f->line);
		}
		if (f->changed) /* its lines changed in this change: the likely culprit */
			tf_buf_puts(&line, " (changed)");
		size_t wloc = width_of(line.ptr);
		if (wloc > avail / 2)
			wloc = avail / 2;
		tf_buf name = TF_BUF_INIT;
		if (width_of(f->name) + wloc > avail)
			elide_args(&name, f->name);
		else
			tf_buf_puts(&name, f->name);
		put_fit_end(b, name.ptr, avail - wloc);
		if (line.len)
			put_fit(b, line.ptr, wloc, false);
		tf_buf_free(&name);
		tf_buf_putc(b, '\n');
		/* where the allocating function was called from */
		if (c->summary.memory && f->caller) {
			tf_buf_clear(&line);
			tf_buf_puts(&line, "from ");
			tf_buf_puts(&line, f->caller);
			if (f->caller_file && *f->caller_file) {
				const char *base = strrchr(f->caller_file, '/');
				tf_buf_printf(&line, "  %s", base ? base + 1 : f->caller_file);
				if (f->caller_line > 0)
					tf_buf_printf(&line, ":%lld", (long long)f->caller_line);
			}
			for (int k = 0; k < 33; k++)
				tf_buf_putc(b, ' ');
			put_fit_end(b, line.ptr, avail > 2 ? avail - 2 : avail);
			tf_buf_putc(b, '\n');
		}
	}
	tf_buf_free(&line);
}

/* The time a test waited and where it waited more: each place its
 * blocking call, the function that called it and where, why it waited
 * (the kernel's word for it), and how much longer a run. */
static void wait_sites(tf_buf *b, const tf_test_delta *t, const tf_table_opts *o)
{
	const tf_test_delta *w = t->wait;
	char d[48], bw[48], hw[48];
	tf_buf line = TF_BUF_INIT;
	size_t n = TF_MIN(w->nfunctions, o->max_functions);

	signed_cost(d, sizeof(d), w->head.cost - w->base.cost, "nanoseconds");
	tf_compare_format_cost(bw, sizeof(bw), w->base.cost, "nanoseconds");
	tf_compare_format_cost(hw, sizeof(hw), w->head.cost, "nanoseconds");
	tf_buf_printf(&line, ": waiting %s a run (%s to %s)", d, w->base.cost > 0 ? bw : "0", hw);
	if (!(t->grew & TF_GREW_CPU) && isfinite(t->cpu.delta_pct))
		tf_buf_printf(&line, ", CPU %+.1f%%", t->cpu.delta_pct);
	tf_buf_puts(&line, n ? ": where it waited more" : "");
	tf_buf_puts(b, "\n  ");
	put_fit(b, t->name, o->width - 2 - TF_MIN(line.len, (size_t)o->width - 20), false);
	tf_buf_puts(b, line.ptr);
	tf_buf_putc(b, '\n');
	if (n) {
		pad_left(b, "waited", 16);
		tf_buf_puts(b, "  why      blocking call <- caller\n");
	}
	for (size_t i = 0; i < n; i++) {
		const tf_func_delta *f = &w->functions[i];
		size_t avail = o->width > 37 ? o->width - 37 : 36;
		signed_cost(d, sizeof(d), f->delta_self, "nanoseconds");
		pad_left(b, d, 16);
		tf_buf_puts(b, "  ");
		/* the longest reasons: "page-in", "stopped" */
		put_fit(b, f->reason ? f->reason : "", 7, true);
		tf_buf_puts(b, "  ");
		tf_buf_clear(&line);
		tf_buf_puts(&line, f->name);
		if (f->caller) {
			tf_buf_puts(&line, " <- ");
			tf_buf_puts(&line, f->caller);
		}
		if (*f->file) {
			const char *base = strrchr(f->file, '/');
			tf_buf_printf(&line, "  %s", base ? base + 1 : f->file);
			if (f->line > 0)
				tf_buf_printf(&line, ":%lld", (long long)f->line);
		}
		put_fit_end(b, line.ptr, avail);
		tf_buf_putc(b, '\n');
	}
	tf_buf_free(&line);
}

static void column_heads(tf_buf *out)
{
	tf_buf_puts(out, "\n  ");
	put_fit(out, "verdict", W_VERDICT, true);
	pad_left(out, "delta", W_DELTA);
	tf_buf_putc(out, ' ');
	pad_left(out, "95% CI (%)", W_CI);
	tf_buf_putc(out, ' ');
	pad_left(out, "base", W_COST);
	tf_buf_putc(out, ' ');
	pad_left(out, "head", W_COST);
	tf_buf_puts(out, "  test\n");
}

int tf_comparison_render_table(tf_buf *out, const tf_comparison *c, const tf_table_opts *opts)
{
	tf_table_opts o;
	size_t fixed = 2 + W_VERDICT + W_DELTA + 1 + W_CI + 1 + W_COST + 1 + W_COST + 2;
	size_t shown = 0, hidden_unchanged = 0, hidden = 0;

	if (opts)
		o = *opts;
	else
		tf_table_opts_init(&o);
	if (o.width < 72)
		o.width = 72;
	size_t wname = o.width - fixed;

	header(out, c, &o);
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (t->verdict == TF_VERDICT_UNCHANGED && !o.all) {
			hidden_unchanged++;
			continue;
		}
		if (shown >= o.max_tests) {
			hidden++;
			continue;
		}
		if (!shown)
			column_heads(out);
		row(out, c, t, &o, wname);
		shown++;
	}
	if (!shown)
		tf_buf_putc(out, '\n');
	if (hidden)
		tf_buf_printf(out, "  ... and %zu more changed or uncertain test%s (see report.json)\n",
			      hidden, hidden == 1 ? "" : "s");
	if (hidden_unchanged)
		tf_buf_printf(out, "  %s%zu unchanged test%s%s\n", shown ? "+ " : "", hidden_unchanged,
			      hidden_unchanged == 1 ? "" : "s", shown ? " not listed" : "");
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (t->cpu.verdict == TF_VERDICT_REGRESSED ||
		    (o.all && t->cpu.verdict == TF_VERDICT_IMPROVED))
			functions(out, c, t, &o);
		if (t->outside && !c->summary.gate_outside)
			continue;
		if (t->wait && (t->grew & TF_GREW_WAIT || (o.all && t->waits_lead &&
							  t->verdict == TF_VERDICT_IMPROVED)))
			wait_sites(out, t, &o);
	}
	tf_buf_putc(out, '\n');
	if (tf_comparison_regressed(c)) {
		size_t n = c->summary.count[TF_VERDICT_REGRESSED];
		size_t nw = 0;
		for (size_t i = 0; i < c->ntests; i++)
			if (c->tests[i].verdict == TF_VERDICT_REGRESSED &&
			    !(c->tests[i].grew & TF_GREW_CPU) && c->tests[i].grew & TF_GREW_WAIT)
				nw++;
		tf_buf_printf(out, "%s%sREGRESSION%s: %zu test%s %s by at least %g%%",
			      o.color ? "\033[1;31m" : "", c->summary.memory ? "MEMORY " : "",
			      o.color ? "\033[0m" : "", n, n == 1 ? "" : "s",
			      c->summary.memory ? (n == 1 ? "allocates more" : "allocate more") : "slower",
			      c->summary.threshold);
		if (nw)
			tf_buf_printf(out, " (%zu by waiting longer)", nw);
		tf_buf_putc(out, '\n');
	} else {
		tf_buf_printf(out, "no %sregression (threshold %g%%)\n",
			      c->summary.memory ? "memory " : "", c->summary.threshold);
	}
	return 0;
}
