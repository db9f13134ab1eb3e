/*
 * top.c - the text report of `testflame view`: the functions that cost the
 * most, in the columns of `go tool pprof -top` (flat, flat%, sum%, cum,
 * cum%, name) with pprof's number formats and its choice of one scale for
 * the whole table, so a user can hold the two side
 * by side and find the same figures.
 */
#include "testflame/aggregate.h"

#include <string.h>

static double pct(int64_t v, int64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/*
 * One scale for the whole table, by pprof's rule (report.selectOutputUnit):
 * the scale of the smallest value shown (a row's flat, or its cum when flat
 * is 0), moved up when the total needs a larger one and the smallest would
 * still read at least 0.01.
 */
static const char *table_scale(const tf_aggregate *a, size_t rows, const char *unit)
{
	int64_t min = 0, max = a->total < 0 ? -a->total : a->total;
	const char *lo, *hi;

	for (size_t i = 0; i < rows; i++) {
		int64_t v = a->entries[i].self ? a->entries[i].self : a->entries[i].total;
		if (v < 0)
			v = -v;
		if (v > 0 && (!min || v < min))
			min = v;
	}
	if (!min)
		min = max;
	lo = tf_value_scale(min, unit);
	hi = tf_value_scale(max, unit);
	if (lo && hi && strcmp(lo, hi) != 0 && (double)min * 100 < (double)max)
		return tf_value_scale(100 * min, unit);
	return lo;
}

int tf_top_write(tf_buf *out, const tf_profile *p, const tf_top_options *o)
{
	tf_agg_options ao = { o->value, o->mask, TF_AGG_FUNCTION };
	tf_aggregate *a;
	const tf_value_type *vt;
	const char *unit, *suffix;
	char v1[64], v2[64];
	int64_t sum = 0, shown = 0;
	size_t rows;
	int si, rc;

	rc = tf_aggregate_new(&a, p, &ao);
	if (rc)
		return rc;
	tf_aggregate_sort(a, o->by_total ? TF_AGG_BY_TOTAL : TF_AGG_BY_SELF);
	vt = &p->sample_types.v[o->value];
	unit = tf_profile_str(p, vt->unit);
	rows = o->top && o->top < a->n ? o->top : a->n;
	suffix = table_scale(a, rows, unit);

	tf_buf_printf(out, "Type: %s", tf_profile_str(p, vt->type));
	if (*unit && strcmp(unit, "count") != 0)
		tf_buf_printf(out, " (%s)", unit);
	tf_buf_putc(out, '\n');
	if (o->selection) {
		tf_buf_puts(out, "Selection: ");
		tf_buf_put_printable(out, o->selection);
		tf_buf_putc(out, '\n');
	}
	tf_buf_printf(out, "Total: %s", tf_value_format_in(v1, sizeof(v1), a->total, unit, suffix));
	si = tf_profile_find_sample_type(p, "samples");
	if (si >= 0 && (size_t)si != o->value) {
		size_t nv = p->sample_types.n;
		int64_t n = 0;
		for (size_t i = 0; i < p->samples.n; i++)
			if (!o->mask || o->mask[i])
				n += p->values.v[i * nv + (size_t)si];
		tf_buf_printf(out, " in %lld samples", (long long)n);
	} else if (si < 0) {
		tf_buf_printf(out, " in %zu sample records", a->nsamples);
	}
	tf_buf_putc(out, '\n');
	for (size_t i = 0; i < rows; i++)
		shown += a->entries[i].self;

	if (rows < a->n)
		tf_buf_printf(out, "Showing top %zu of %zu functions, %.2f%% of the total\n", rows,
			      a->n, pct(shown, a->total));
	else
		tf_buf_printf(out, "Showing all %zu functions\n", a->n);

	tf_buf_printf(out, "%10s %7s %7s %10s %7s  %s\n", "flat", "flat%", "sum%", "cum", "cum%", "name");
	for (size_t i = 0; i < rows; i++) {
		const tf_agg_entry *e = &a->entries[i];
		sum += e->self;
		tf_buf_printf(out, "%10s %6.2f%% %6.2f%% %10s %6.2f%%  ",
			      tf_value_format_in(v1, sizeof(v1), e->self, unit, suffix),
			      pct(e->self, a->total), pct(sum, a->total),
			      tf_value_format_in(v2, sizeof(v2), e->total, unit, suffix),
			      pct(e->total, a->total));
		tf_buf_put_printable(out, e->name);
		tf_buf_putc(out, '\n');
	}
	tf_aggregate_free(a);
	return 0;
}
