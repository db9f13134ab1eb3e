/*
 * memory.c - the memory part of every report: the comparison of the
 * runs' allocations (a second tf_comparison, of alloc_space, beside the
 * one of time) as a section of the terminal summary and of report.md,
 * and the notes each format shows with it:
 *
 *  - leaks: a test that ends with more of its blocks live than in the
 *    base (its allocations less its frees, counted exactly; the bytes
 *    from the sampled blocks still live when it ended);
 *  - peaks: a test whose live heap (sampled) or resident set peaks well
 *    above the base's, said plainly when its allocations did not grow
 *    (it holds them longer);
 *  - what the sampler could not measure (the head run's notes: static and
 *    Go programs, sanitizer builds, programs with an allocator of their own).
 *
 * The verdicts are the comparison's: allocations are judged like time,
 * with their own noise (compare.c); leaks and peaks are told, not judged.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A peak worth telling: half as high again as the base's, and by this much
 * (a live heap is sampled, a resident set moves with the allocator's and
 * the kernel's choices). */
#define PEAK_RATIO 1.5
#define PEAK_MIN_BYTES (1024.0 * 1024)

static void bytes(char *buf, size_t len, double v)
{
	rp_cost(buf, len, v, "bytes");
}

size_t rp_memory_notes(rp_mem_note **out, const tf_comparison *m)
{
	TF_VEC(rp_mem_note) v = { 0 };

	for (size_t i = 0; m && i < m->ntests; i++) {
		const tf_test_delta *t = &m->tests[i];
		const tf_test_side *b = &t->base, *h = &t->head;
		char x[32], y[32];
		if (!b->ran || !h->ran || t->outside)
			continue;
		double more = (h->allocs - h->frees) - (b->allocs - b->frees);
		if (more >= 1) {
			double grown = h->leaked - b->leaked;
			bytes(x, sizeof(x), grown);
			rp_mem_note n = { t->name, grown > 0
				? tf_xasprintf("ends with %.0f more block%s live than in the base (about "
					       "%s): a leak", more, more == 1 ? "" : "s", x)
				: tf_xasprintf("ends with %.0f more block%s live than in the base: a "
					       "leak", more, more == 1 ? "" : "s") };
			tf_vec_push(&v, n);
		}
		bool heap = h->heap_peak >= PEAK_RATIO * b->heap_peak &&
			    h->heap_peak - b->heap_peak >= PEAK_MIN_BYTES;
		bool rss = h->rss_peak >= PEAK_RATIO * b->rss_peak &&
			   h->rss_peak - b->rss_peak >= PEAK_MIN_BYTES;
		if (heap || rss) {
			double hv = heap ? h->heap_peak : h->rss_peak, bv = heap ? b->heap_peak : b->rss_peak;
			bytes(x, sizeof(x), hv);
			bytes(y, sizeof(y), bv);
			rp_mem_note n = { t->name, tf_xasprintf(
				"its %s peaks at %s, %s in the base%s", heap ? "live heap" : "resident set",
				x, y, t->verdict == TF_VERDICT_REGRESSED ? ""
				: ": no more allocations, it holds them longer") };
			tf_vec_push(&v, n);
		}
	}
	/* what the head run's sampler said of itself */
	for (size_t k = 1; m && m->head.n; k++) {
		char key[32];
		snprintf(key, sizeof(key), "note.%zu", k);
		const char *note = tf_comparison_meta(m, true, key);
		if (!note)
			break;
		rp_mem_note n = { NULL, tf_xstrdup(note) };
		tf_vec_push(&v, n);
	}
	*out = v.v;
	return v.n;
}

void rp_memory_notes_free(rp_mem_note *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].text);
	free(v);
}

/* What gate.memory says, in a line: the verdict that counts. */
static void gate_words(tf_buf *b, const tf_comparison *m, bool gated)
{
	size_t n = m->summary.count[TF_VERDICT_REGRESSED];
	char least[32];
	bytes(least, sizeof(least), m->summary.min_delta_bytes);
	if (n)
		tf_buf_printf(b, "%zu test%s allocate%s more, by at least %g%%%s%s", n,
			      n == 1 ? "" : "s", n == 1 ? "s" : "", m->summary.threshold,
			      m->summary.min_delta_bytes > 0 ? " and " : "",
			      m->summary.min_delta_bytes > 0 ? least : "");
	else
		tf_buf_printf(b, "no test allocates more (threshold %g%%%s%s)", m->summary.threshold,
			      m->summary.min_delta_bytes > 0 ? ", " : "",
			      m->summary.min_delta_bytes > 0 ? least : "");
	tf_buf_puts(b, gated ? "" : "; gate.memory is off: reported, not judged");
}

int tf_report_memory_terminal(tf_buf *out, const tf_comparison *m, bool gated,
			      const tf_table_opts *t)
{
	tf_table_opts to;
	rp_mem_note *notes;
	tf_buf line = TF_BUF_INIT;
	size_t n;
	int rc;

	if (!m)
		return 0;
	if (t)
		to = *t;
	else
		tf_table_opts_init(&to);
	tf_buf_putc(out, '\n');
	if ((rc = tf_comparison_render_table(out, m, &to)))
		return rc;
	if (!gated) {
		gate_words(&line, m, gated);
		tf_buf_puts(out, "  (");
		rp_put_text(out, line.ptr, 0);
		tf_buf_puts(out, ")\n");
	}
	n = rp_memory_notes(&notes, m);
	for (size_t i = 0; i < n; i++) {
		tf_buf_clear(&line);
		if (notes[i].test)
			tf_buf_printf(&line, "%s %s", notes[i].test, notes[i].text);
		else
			tf_buf_puts(&line, notes[i].text);
		tf_buf_puts(out, "  note: ");
		rp_put_text(out, line.ptr, 600);
		tf_buf_putc(out, '\n');
	}
	rp_memory_notes_free(notes, n);
	tf_buf_free(&line);
	return 0;
}

void rp_memory_headline(tf_buf *b, const rp_ctx *x)
{
	const tf_comparison *m = x->o.memory;
	if (!m)
		return;
	tf_buf_puts(b, m->summary.count[TF_VERDICT_REGRESSED] && x->o.memory_gated
		       ? "**\xf0\x9f\x94\xba Memory: " : "Memory: ");
	tf_buf line = TF_BUF_INIT;
	gate_words(&line, m, x->o.memory_gated);
	rp_put_md_text(b, line.ptr, 0);
	tf_buf_free(&line);
	tf_buf_puts(b, m->summary.count[TF_VERDICT_REGRESSED] && x->o.memory_gated ? "**\n\n" : "\n\n");
}

static void md_code(tf_buf *b, const char *s, size_t max)
{
	tf_buf_puts(b, "<code>");
	rp_put_md(b, s, max);
	tf_buf_puts(b, "</code>");
}

void rp_memory_markdown(tf_buf *b, const rp_ctx *x, size_t rows, size_t funcs, size_t name_max)
{
	const tf_comparison *m = x->o.memory;
	rp_mem_note *notes;
	size_t shown = 0, n;

	if (!m)
		return;
	tf_buf_puts(b, "#### Memory\n\n");
	for (size_t i = 0; i < m->ntests && shown < rows; i++) {
		const tf_test_delta *t = &m->tests[i];
		char base[32], head[32], d[32], da[48];
		if (!rp_changed(t) || t->outside)
			continue;
		if (!shown)
			tf_buf_puts(b, "| | Test | Allocated, base | Head | \xce\x94 | Allocations \xce\x94 |\n"
				       "|---|---|---:|---:|---:|---:|\n");
		shown++;
		bytes(base, sizeof(base), t->base.cost);
		bytes(head, sizeof(head), t->head.cost);
		rp_pct(d, sizeof(d), t->delta_pct);
		double dal = t->head.allocs - t->base.allocs;
		if (isfinite(dal))
			snprintf(da, sizeof(da), "%+.0f", dal);
		else
			snprintf(da, sizeof(da), "-");
		tf_buf_printf(b, "| %s | ", t->verdict == TF_VERDICT_REGRESSED
			      ? "\xf0\x9f\x94\xba more" : tf_verdict_name(t->verdict));
		md_code(b, t->name, name_max);
		tf_buf_printf(b, " | %s | %s | %s%s%s | %s |\n", t->base.ran ? base : "-",
			      t->head.ran ? head : "-", t->verdict == TF_VERDICT_REGRESSED ? "**" : "", d,
			      t->verdict == TF_VERDICT_REGRESSED ? "**" : "", da);
	}
	if (shown)
		tf_buf_putc(b, '\n');
	/* where each test that allocates more allocates it */
	for (size_t i = 0; i < m->ntests && funcs; i++) {
		const tf_test_delta *t = &m->tests[i];
		if (t->verdict != TF_VERDICT_REGRESSED || !t->nfunctions)
			continue;
		tf_buf_puts(b, "<details><summary>");
		md_code(b, t->name, name_max);
		tf_buf_puts(b, ": the functions that allocate more</summary>\n\n"
			       "| Function | Allocated \xce\x94 | Location | Called from |\n"
			       "|---|---:|---|---|\n");
		for (size_t k = 0; k < t->nfunctions && k < funcs; k++) {
			const tf_func_delta *f = &t->functions[k];
			char ds[48];
			rp_signed_cost(ds, sizeof(ds), f->delta_self, "bytes");
			tf_buf_puts(b, "| ");
			md_code(b, f->name, name_max);
			tf_buf_printf(b, " | %s | ", ds);
			rp_md_location(b, x, f->file, f->line, name_max);
			tf_buf_puts(b, " | ");
			if (f->caller) {
				md_code(b, f->caller, name_max);
				tf_buf_puts(b, " ");
				rp_md_location(b, x, f->caller_file ? f->caller_file : "",
					       f->caller_line, name_max);
			} else {
				tf_buf_puts(b, "-");
			}
			tf_buf_puts(b, " |\n");
		}
		tf_buf_puts(b, "\n</details>\n\n");
	}
	n = rp_memory_notes(&notes, m);
	for (size_t i = 0; i < n && i < rows; i++) {
		tf_buf_puts(b, "- ");
		if (notes[i].test) {
			md_code(b, notes[i].test, name_max);
			tf_buf_putc(b, ' ');
		}
		rp_put_md_text(b, notes[i].text, 600);
		tf_buf_putc(b, '\n');
	}
	if (n)
		tf_buf_putc(b, '\n');
	rp_memory_notes_free(notes, n);
}
