/*
 * compare.c - the comparison: check that the runs of both sides measure the
 * same thing, split every run's samples by test in one pass (the `test`
 * sample label; a foreign profile without one is a single test named after
 * its suite, else "all"), total each test per run, and hand the per-run
 * totals to the statistics (stats.c) for a verdict. Function deltas live in
 * functions.c, diff trees in tree.c, the renderings in json.c and table.c.
 */
#include "compare/compare_int.h"
#include "testflame/attribute.h"
#include "testflame/context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const verdict_names[TF_VERDICT_COUNT] = {
	"regressed", "improved", "new", "gone", "inconclusive", "unchanged",
};

const char *tf_verdict_name(tf_verdict v)
{
	return (unsigned)v < TF_VERDICT_COUNT ? verdict_names[v] : "?";
}

const char *tf_correction_name(tf_correction c)
{
	switch (c) {
	case TF_CORRECTION_HOLM: return "holm";
	case TF_CORRECTION_BH: return "bh";
	default: return "none";
	}
}

const char *tf_compare_method_name(tf_compare_method m)
{
	switch (m) {
	case TF_METHOD_POISSON: return "poisson";
	case TF_METHOD_WELCH: return "welch";
	case TF_METHOD_PAIRED: return "paired";
	default: return "none";
	}
}

void tf_compare_opts_init(tf_compare_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threshold = TF_THRESHOLD_DEFAULT;
	o->alpha = TF_ALPHA_DEFAULT;
	o->noise = -1;
	o->top_functions = 10;
	o->correction = TF_CORRECTION_HOLM;
	o->min_delta_ns = TF_MIN_DELTA_NS;
	o->measure = TF_GATE_BOTH;
}

void tf_compare_opts_set(tf_compare_opts *o, const tf_settings *s)
{
	o->threshold = s->threshold;
	o->alpha = s->alpha;
	o->noise = s->noise;
	o->min_delta_ns = s->min_delta_ns;
	o->min_samples = s->min_samples;
	o->gate_outside = s->outside;
	o->measure = s->measure;
}

static uint32_t test_intern(agg *a, const char *name, size_t len)
{
	struct tf_compare_priv *pv = a->pv;
	uint32_t nid = tf_strtab_intern(&pv->names, name, len);

	while (a->name_test.n <= nid)
		tf_vec_push(&a->name_test, NO_ID);
	if (a->name_test.v[nid] != NO_ID)
		return a->name_test.v[nid];
	a->name_test.v[nid] = (uint32_t)pv->ninternal;
	pv->test_name = tf_xrealloc(pv->test_name, (pv->ninternal + 1) * sizeof(uint32_t));
	pv->test_name[pv->ninternal] = nid;
	agg_test t;
	memset(&t, 0, sizeof(t));
	t.cost = tf_xcalloc(pv->nruns, sizeof(double));
	t.samples = tf_xcalloc(pv->nruns, sizeof(double));
	t.exact = tf_xmalloc(pv->nruns * 4 * sizeof(double));
	t.quantum = tf_xmalloc(pv->nruns * sizeof(double));
	t.mcost = tf_xcalloc(pv->nruns, sizeof(double));
	t.ran = tf_xcalloc(pv->nruns, sizeof(bool));
	t.run_cpu = tf_xmalloc(pv->nruns * sizeof(double));
	t.run_waits = tf_xmalloc(pv->nruns * sizeof(double));
	t.run_pagein = tf_xmalloc(pv->nruns * sizeof(double));
	for (size_t i = 0; i < pv->nruns * 4; i++)
		t.exact[i] = NAN;
	for (size_t i = 0; i < pv->nruns; i++)
		t.quantum[i] = t.run_cpu[i] = t.run_waits[i] = t.run_pagein[i] = NAN;
	t.parent = NO_ID;
	tf_vec_push(&a->tests, t);
	return (uint32_t)pv->ninternal++;
}

static const char *run_name(const tf_compare_side *s, size_t i, bool head, tf_arena *ar)
{
	if (s->names && s->names[i])
		return tf_arena_strdup(ar, s->names[i]);
	char buf[64];
	snprintf(buf, sizeof(buf), "%s run %zu", head ? "head" : "base", i + 1);
	return tf_arena_strdup(ar, buf);
}

static void list_types(tf_buf *b, const tf_profile *p)
{
	for (size_t i = 0; i < p->sample_types.n; i++)
		tf_buf_printf(b, "%s%s/%s", i ? ", " : "",
			      tf_profile_str(p, p->sample_types.v[i].type),
			      tf_profile_str(p, p->sample_types.v[i].unit));
}

/* The value column: --value (type or type/unit), else the profile's
 * default_sample_type, else its last sample type (pprof's convention). */
static int pick_column(cmp_run *r, const char *want)
{
	const tf_profile *p = r->p;

	if (p->sample_types.n == 0)
		return tf_error_set(TF_EINVAL, "'%s' has no sample types", r->name);
	if (want) {
		const char *slash = strchr(want, '/');
		size_t tlen = slash ? (size_t)(slash - want) : strlen(want);
		for (size_t i = 0; i < p->sample_types.n; i++) {
			const char *t = tf_profile_str(p, p->sample_types.v[i].type);
			const char *u = tf_profile_str(p, p->sample_types.v[i].unit);
			if (strlen(t) == tlen && strncmp(t, want, tlen) == 0 &&
			    (!slash || strcmp(u, slash + 1) == 0)) {
				r->col = i;
				return 0;
			}
		}
		tf_buf b = TF_BUF_INIT;
		list_types(&b, p);
		int rc = tf_error_set(TF_EINVAL, "'%s' has no sample type '%s' (it has: %s)",
				      r->name, want, b.ptr);
		tf_buf_free(&b);
		return rc;
	}
	r->col = p->sample_types.n - 1;
	if (p->default_sample_type) {
		const char *d = tf_profile_str(p, p->default_sample_type);
		for (size_t i = 0; i < p->sample_types.n; i++)
			if (strcmp(tf_profile_str(p, p->sample_types.v[i].type), d) == 0)
				r->col = i;
	}
	return 0;
}

/* The sample types of the allocation sampler's (pprof's heap profile's
 * names), and the per-test field that counts each exactly. */
static const struct { const char *type, *exact; } memory_types[] = {
	{ "alloc_space", "alloc_bytes" }, { "alloc_objects", "allocs" }, { "inuse_space", NULL },
};

static bool memory_type(const char *type, const char **exact)
{
	for (size_t i = 0; i < TF_ARRAY_SIZE(memory_types); i++)
		if (strcmp(type, memory_types[i].type) == 0) {
			*exact = memory_types[i].exact;
			return true;
		}
	return false;
}

/* Where the sample counts come from: a samples/count column, else the value
 * divided by the period when they share a unit, else the value itself (a
 * memory comparison's come from the run metadata: read_test_meta). */
static void pick_counts(cmp_run *r)
{
	const tf_profile *p = r->p;
	const char *unit = tf_profile_str(p, p->sample_types.v[r->col].unit);

	r->count_col = r->col;
	r->count_per_value = 1;
	for (size_t i = 0; i < p->sample_types.n; i++)
		if (strcmp(tf_profile_str(p, p->sample_types.v[i].type), "samples") == 0 &&
		    strcmp(tf_profile_str(p, p->sample_types.v[i].unit), "count") == 0) {
			r->count_col = i;
			return;
		}
	if (p->period > 0 && strcmp(tf_profile_str(p, p->period_type.unit), unit) == 0)
		r->count_per_value = 1 / (double)p->period;
}

static const char *run_event(const cmp_run *r)
{
	const char *e = tf_profile_meta(r->p, "event");
	return e && *e ? e : NULL;
}

/* Both sides must measure the same quantity: the same value type and unit,
 * and the same event where the metadata names one. */
static int check_events(struct tf_compare_priv *pv)
{
	const cmp_run *first = &pv->runs[0];
	const cmp_run *with_event = NULL;

	for (size_t i = 0; i < pv->nruns; i++) {
		const cmp_run *r = &pv->runs[i];
		const tf_value_type *a = &first->p->sample_types.v[first->col];
		const tf_value_type *b = &r->p->sample_types.v[r->col];
		const char *at = tf_profile_str(first->p, a->type), *au = tf_profile_str(first->p, a->unit);
		const char *bt = tf_profile_str(r->p, b->type), *bu = tf_profile_str(r->p, b->unit);
		if (strcmp(at, bt) != 0 || strcmp(au, bu) != 0)
			return tf_error_set(TF_EINVAL,
				"cannot compare '%s/%s' in '%s' with '%s/%s' in '%s': different events "
				"(choose a common sample type with --value)",
				at, au, first->name, bt, bu, r->name);
		const char *e = run_event(r);
		if (e && with_event && strcmp(e, run_event(with_event)) != 0)
			return tf_error_set(TF_EINVAL,
				"cannot compare event '%s' in '%s' with event '%s' in '%s'",
				run_event(with_event), with_event->name, e, r->name);
		if (e && !with_event)
			with_event = r;
	}
	return 0;
}

/* The ids of the strings equal to `s` (a decoded table may repeat one). */
static size_t find_strs(const tf_profile *p, const char *s, uint32_t *ids, size_t max)
{
	size_t n = 0;
	for (size_t i = 1; i < p->strings.strs.n && n < max; i++)
		if (strcmp(p->strings.strs.v[i], s) == 0)
			ids[n++] = (uint32_t)i;
	return n;
}

/* A memory comparison's measures of a test in one run: counted exactly,
 * or sampled (the sampler's distances vary: its samples are counted, not
 * derived), and the means of its memory fields. */
static void meta_memory(agg *a, agg_test *at, size_t run, const tf_test_meta *m)
{
	int side = a->pv->runs[run].head;
	const char *f = a->pv->exact_field;

	at->exact[run * 4 + TF_MEASURE_COUNT] =
		!f ? NAN : strcmp(f, "allocs") == 0 ? m->allocs : m->alloc_bytes;
	if (!isnan(m->alloc_samples))
		at->samples[run] = m->alloc_samples;
	double mf[MEM_FIELDS] = { m->allocs, m->frees, m->heap_peak, m->leaked, m->rss_peak };
	for (int k = 0; k < MEM_FIELDS; k++)
		if (!isnan(mf[k])) {
			at->mem[side][k] += mf[k];
			at->nmem[side][k]++;
		}
}

/* A comparison of time's exact measures of a test in one run, and its
 * waits: in a comparison of waits the exact measure is the time waited, of
 * wall time the CPU's count and it. */
static void meta_time(agg *a, agg_test *at, size_t run, const tf_test_meta *m)
{
	int side = a->pv->runs[run].head;

	at->exact[run * 4 + TF_MEASURE_COUNT] = m->count;
	if (a->pv->waits)
		at->exact[run * 4 + TF_MEASURE_COUNT] = m->offcpu_ns;
	else if (a->wall)
		at->exact[run * 4 + TF_MEASURE_COUNT] = m->count + m->offcpu_ns;
	at->exact[run * 4 + TF_MEASURE_CPU] = m->cpu_ns;
	at->exact[run * 4 + TF_MEASURE_RUNNER] = m->runner_ns;
	at->run_cpu[run] = !isnan(m->count) ? m->count : (double)m->value;
	at->run_waits[run] = m->offcpu_waits;
	if (!isnan(m->offcpu_ns))
		at->run_pagein[run] = isnan(m->offcpu_pagein_ns) ? 0 : m->offcpu_pagein_ns;
	if (!isnan(m->offcpu_ns)) {
		at->off[side] += m->offcpu_ns;
		at->apart[side] += isnan(m->offcpu_apart_ns) ? 0 : m->offcpu_apart_ns;
		at->noff[side]++;
	}
	if (!isnan(m->count)) {
		at->cputime[side] += m->count;
		at->ncputime[side]++;
	}
}

/*
 * The run's per-test metadata (attribute/testmeta.c reads it): lists the
 * tests that ran, so a test too short to be sampled is neither "new" nor
 * "gone", and carries what measured them exactly: the kernel's count of
 * their processes, the CPU time between their markers, the runner's own
 * duration; and their wall time.
 */
static void read_test_meta(agg *a, size_t run)
{
	const cmp_run *r = &a->pv->runs[run];
	int side = r->head;

	for (size_t i = 0; i < r->p->comments.n; i++) {
		const char *c = tf_profile_str(r->p, r->p->comments.v[i]);
		tf_test_meta m;
		if (strncmp(c, "testflame.test.", 15) != 0 || tf_test_meta_parse(&m, c) != 0) {
			tf_error_clear();
			continue;
		}
		uint32_t t = test_intern(a, m.name, strlen(m.name));
		agg_test *at = &a->tests.v[t];
		at->listed[side] = true;
		at->ran[run] = true;
		if (a->pv->memory)
			meta_memory(a, at, run, &m);
		else
			meta_time(a, at, run, &m);
		at->quantum[run] = m.runner_q_ns;
		if (!isnan(m.wall_ns) && m.wall_ns > 0) {
			at->wall[side] += m.wall_ns;
			at->nwall[side]++;
		}
		if (!isnan(m.cpu_ns)) {
			at->cpu[side] += m.cpu_ns;
			at->ncpu[side]++;
		}
		if (!isnan(m.runner_ns)) {
			at->runner[side] += m.runner_ns;
			at->nrunner[side]++;
		}
		if (m.parent && at->parent == NO_ID)
			at->parent = tf_strtab_intern(&a->pv->names, m.parent, strlen(m.parent));
		if (m.nested > at->nested)
			at->nested = m.nested;
		tf_test_meta_clear(&m);
	}
}

/*
 * The best measure every run of both sides has for a test: the exact
 * count, else (for a time event) the markers' CPU time, else the runner's
 * duration, else its samples. A test that ran on one side only is new or
 * gone whatever its measure.
 */
static tf_test_measure pick_measure(const agg_test *at, size_t nruns, bool time_event)
{
	static const tf_test_measure order[] = { TF_MEASURE_COUNT, TF_MEASURE_CPU,
						 TF_MEASURE_RUNNER };
	for (size_t k = 0; k < TF_ARRAY_SIZE(order); k++) {
		tf_test_measure m = order[k];
		bool all = true;
		if (m != TF_MEASURE_COUNT && !time_event)
			continue;
		for (size_t r = 0; r < nruns && all; r++)
			all = !isnan(at->exact[r * 4 + m]);
		if (all)
			return m;
	}
	return TF_MEASURE_SAMPLES;
}

/* One pass over a run's samples: the test of each, and its totals. */
static void aggregate_run(agg *a, size_t run)
{
	cmp_run *r = &a->pv->runs[run];
	const tf_profile *p = r->p;
	uint32_t keys[8];
	size_t nkeys = find_strs(p, "test", keys, TF_ARRAY_SIZE(keys));
	size_t nv = p->sample_types.n;
	uint32_t *str_test = NULL;
	uint32_t fallback = NO_ID, unlabelled = NO_ID;
	bool labelled = false;

	r->sample_test = tf_xmalloc((p->samples.n + 1) * sizeof(uint32_t));
	if (nkeys) {
		str_test = tf_xmalloc(p->strings.strs.n * sizeof(uint32_t));
		memset(str_test, 0xff, p->strings.strs.n * sizeof(uint32_t));
		for (size_t i = 0; i < p->labels.n && !labelled; i++)
			for (size_t k = 0; k < nkeys; k++)
				if (p->labels.v[i].key == keys[k] && p->labels.v[i].str)
					labelled = true;
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		const int64_t *v = p->values.v + i * nv;
		uint32_t t = NO_ID;

		for (uint32_t j = 0; labelled && j < s->nlabels && t == NO_ID; j++) {
			const tf_label *l = &p->labels.v[s->labels_off + j];
			if (!l->str)
				continue;
			for (size_t k = 0; k < nkeys; k++) {
				if (l->key != keys[k])
					continue;
				if (str_test[l->str] == NO_ID) {
					const char *nm = tf_profile_str(p, l->str);
					str_test[l->str] = test_intern(a, nm, strlen(nm));
				}
				t = str_test[l->str];
				break;
			}
		}
		if (t == NO_ID) {
			/* a labelled run keeps its unlabelled samples apart; a
			 * foreign profile is one test named after its suite */
			if (labelled) {
				if (unlabelled == NO_ID)
					unlabelled = test_intern(a, "[unattributed]", 14);
				t = unlabelled;
			} else {
				if (fallback == NO_ID) {
					const char *suite = tf_profile_meta(p, "suite");
					if (!suite || !*suite)
						suite = "all";
					fallback = test_intern(a, suite, strlen(suite));
				}
				t = fallback;
			}
		}
		r->sample_test[i] = t;
		agg_test *at = &a->tests.v[t];
		at->cost[run] += (double)v[r->col];
		if (!a->pv->memory)
			at->samples[run] += (double)v[r->count_col] * r->count_per_value;
	}
	free(str_test);
}

tf_attention tf_compare_attention(const tf_test_delta *t, double threshold, bool gate_outside)
{
	if (t->verdict == TF_VERDICT_REGRESSED)
		return TF_ATTENTION_REGRESSED;
	/* the command's own work is shown, not judged, unless the gate asks */
	if (t->outside && !gate_outside)
		return TF_ATTENTION_REST;
	if (t->verdict == TF_VERDICT_INCONCLUSIVE && fabs(t->delta_pct) >= threshold)
		return TF_ATTENTION_UNDECIDED;
	if (t->ran_changed && t->verdict != TF_VERDICT_UNCHANGED && t->verdict != TF_VERDICT_NEW &&
	    t->verdict != TF_VERDICT_GONE)
		return TF_ATTENTION_CHANGED_CODE;
	if (t->verdict == TF_VERDICT_IMPROVED)
		return TF_ATTENTION_IMPROVED;
	if (t->verdict == TF_VERDICT_NEW || t->verdict == TF_VERDICT_GONE)
		return TF_ATTENTION_NEW_GONE;
	if (t->verdict == TF_VERDICT_INCONCLUSIVE)
		return TF_ATTENTION_UNSURE;
	return TF_ATTENTION_REST;
}

static int by_report_order(const void *x, const void *y)
{
	const tf_test_delta *a = x, *b = y;
	if (a->attention != b->attention)
		return a->attention < b->attention ? -1 : 1;
	if (a->verdict != b->verdict)
		return a->verdict < b->verdict ? -1 : 1;
	double da = isnan(a->delta_pct) ? TF_MAX(a->base.cost, a->head.cost) : fabs(a->delta_pct);
	double db = isnan(b->delta_pct) ? TF_MAX(b->base.cost, b->head.cost) : fabs(b->delta_pct);
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

static void fill_side(tf_test_side *s, const agg_test *at, const struct tf_compare_priv *pv,
		      int side)
{
	size_t from = side ? pv->nbase : 0, n = side ? pv->nhead : pv->nbase;
	double cost = 0, sampled = 0, samples = 0;

	s->runs = 0;
	for (size_t i = from; i < from + n; i++) {
		cost += at->mcost[i];
		sampled += at->cost[i];
		samples += at->samples[i];
		if (at->samples[i] > 0 || at->cost[i] != 0 || at->ran[i])
			s->runs++;
	}
	s->cost = cost / (double)n;
	s->sampled = sampled / (double)n;
	s->samples = (int64_t)llround(samples);
	s->wall_ns = at->nwall[side] ? at->wall[side] / at->nwall[side] : NAN;
	s->cpu_ns = at->ncpu[side] ? at->cpu[side] / at->ncpu[side] : NAN;
	s->runner_ns = at->nrunner[side] ? at->runner[side] / at->nrunner[side] : NAN;
	s->offcpu_ns = at->noff[side] ? at->off[side] / at->noff[side] : NAN;
	s->offcpu_apart_ns = at->noff[side] ? at->apart[side] / at->noff[side] : NAN;
	s->cpu_time_ns = at->ncputime[side] ? at->cputime[side] / at->ncputime[side] : NAN;
	double *mem[MEM_FIELDS] = { &s->allocs, &s->frees, &s->heap_peak, &s->leaked, &s->rss_peak };
	for (int k = 0; k < MEM_FIELDS; k++)
		*mem[k] = at->nmem[side][k] ? at->mem[side][k] / at->nmem[side][k] : NAN;
	s->ran = s->runs > 0;
}

/* Whether a memory comparison has anything of a test: its counts or its
 * samples in some run. */
static bool memory_measured(const agg_test *at, size_t nruns)
{
	for (size_t r = 0; r < nruns; r++)
		if (!isnan(at->exact[r * 4 + TF_MEASURE_COUNT]) || at->samples[r] > 0 ||
		    at->cost[r] != 0)
			return true;
	return false;
}

/*
 * Each run's cost of a test under its measure. A run in which a test ran
 * but left no sample cost less than one sampling period, not nothing: its
 * sampled cost is bounded by one period, the side it errs on for a
 * slowdown seen against it (the ratio is at least that). A runner's
 * duration of 0 is below its clock's tick: half a tick.
 *
 * A test that holds tests (holding_tests) is measured by its own samples:
 * those are its work outside the tests it holds (their samples are
 * theirs), where its exact count holds them too and would judge them twice.
 */
static void measure_costs(agg_test *at, const struct tf_compare_priv *pv, bool time_event)
{
	at->measure = at->holds ? TF_MEASURE_SAMPLES : pick_measure(at, pv->nruns, time_event);
	for (size_t r = 0; r < pv->nruns; r++) {
		double v;
		if (at->measure == TF_MEASURE_SAMPLES) {
			v = at->cost[r];
			if (v <= 0 && at->ran[r] && pv->runs[r].p->period > 0 && !pv->memory)
				v = (double)pv->runs[r].p->period;
		} else {
			v = at->exact[r * 4 + at->measure];
			double q = at->quantum[r];
			if (at->measure == TF_MEASURE_RUNNER && !isnan(q) && v < q / 2)
				v = q / 2;
		}
		at->mcost[r] = v;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * With repeats on both sides, the prior a test's spread is moderated with:
 * the spread this comparison measured for the suite's tests, as limma
 * borrows it across genes (empirical Bayes). A fixed floor would call every
 * quiet suite as noisy as the floor assumes, and the interleaved runs of
 * `--against` are what they are because the runs are close in time. The
 * median of the tests' pooled per-run spreads of log cost, over tests seen
 * in every run with at least 1/threshold samples a run (fewer, and counting
 * one sample more or less is the spread); at least 3 such tests, else the
 * event's floor. Never below half that floor. In percent; 0 when it does
 * not apply.
 */
static double suite_prior(const tf_comparison *c, const agg *a, double floor_pct, double threshold)
{
	const struct tf_compare_priv *pv = c->priv;
	size_t nb = pv->nbase, nh = pv->nhead, n = 0;
	double *sd = tf_xcalloc(c->ntests + 1, sizeof(double));
	double need = threshold > 0 ? 1 / threshold : 20, prior = 0;

	if (nb < 3 || nh < 3 || !pv->periodic) {
		free(sd);
		return 0;
	}
	for (size_t i = 0; i < c->ntests; i++) {
		const agg_test *at = &a->tests.v[pv->test_id[i]];
		double ss = 0, m[2] = { 0, 0 };
		bool ok = true;
		for (size_t r = 0; r < nb + nh && ok; r++)
			ok = at->cost[r] > 0 && at->samples[r] >= need;
		if (!ok)
			continue;
		for (size_t r = 0; r < nb + nh; r++)
			m[r >= nb] += log(at->cost[r]) / (double)(r >= nb ? nh : nb);
		for (size_t r = 0; r < nb + nh; r++) {
			double d = log(at->cost[r]) - m[r >= nb];
			ss += d * d;
		}
		sd[n++] = sqrt(ss / (double)(nb + nh - 2)) * 100;
	}
	if (n >= 3) {
		qsort(sd, n, sizeof(*sd), cmp_double);
		prior = n % 2 ? sd[n / 2] : (sd[n / 2 - 1] + sd[n / 2]) / 2;
		prior = TF_MAX(prior, floor_pct / 2);
	}
	free(sd);
	return prior;
}

/*
 * How much tests of a given size wander, from this very comparison: the
 * suite's own prior for tests whose history cannot say yet (a suite's
 * first baselines). One run per side cannot measure a test's noise, and a
 * suite of short tests is far noisier than the event's floor: a process of
 * a millisecond varies by tens of percent from run to run (its start-up,
 * page faults, the neighbour), where a CPU-bound loop of a second varies by
 * one. The other tests of the suite are draws of the same noise, and the
 * tests nearest in cost (not the test itself) say how much:
 *
 *  - where a side has several runs (a PR's confirmation runs), the spread
 *    of each test's runs around their side's mean, pooled over its
 *    neighbours: a change between the sides does not enter it;
 *  - with one run per side, the spread of the neighbours' log ratios (the
 *    median absolute deviation around their median, which a minority of
 *    real changes does not move). When most tests changed, by different
 *    amounts, that spread is the changes' as much as the noise's, and the
 *    verdict errs towards "not proven" until the confirmation runs give
 *    the first estimate.
 *
 * It only ever raises a test's assumed noise, and only of tests measured
 * exactly (their processes' count, their markers' clock, their runner's
 * timer), whose costs are what wander: a sampled test's noise is its
 * sampling error first, which its samples already say. `noise` and `df`
 * receive, per test (NAN when not estimated), one run's noise (a fraction)
 * and its degrees of freedom.
 */
static int cmp_pair(const void *x, const void *y)
{
	const double *a = x, *b = y;
	return a[0] < b[0] ? -1 : a[0] > b[0];
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool spread_eligible(const tf_test_delta *t, const agg_test *at)
{
	if (t->outside || !t->base.ran || !t->head.ran || t->base.cost <= 0 || t->head.cost <= 0)
		return false;
	return at->measure != TF_MEASURE_SAMPLES;
}

#define SPREAD_APART 1000.0

static void suite_spread(const tf_comparison *c, const agg *a, bool separate_jobs, double *noise,
			 double *df)
{
	const struct tf_compare_priv *pv = c->priv;
	size_t n = 0, nb = pv->nbase, nh = pv->nhead;
	bool replicates = nb >= 2 || nh >= 2;
	/* per eligible test: size, then its log ratio (one run per side) or
	 * its replicate squares and their degrees of freedom; sizes are offset
	 * by measure (SPREAD_APART apart), so that only tests measured alike
	 * are neighbours: a runner's wall clock wanders more than a CPU count */
	double *pts = tf_xcalloc(3 * c->ntests + 3, sizeof(double));
	/* the neighbours are the tests that ran no changed code, where there
	 * are enough of them: the changed ones' ratios are the change's, not
	 * the runner's noise (semver's 11 slowed tests of 35, 300 to 3,000
	 * times slower, made their neighbours' noise 73%: test_basic's
	 * +165,156% was undecided) */
	size_t untouched = 0;
	for (size_t i = 0; i < c->ntests; i++)
		untouched += spread_eligible(&c->tests[i], &a->tests.v[pv->test_id[i]]) &&
			     !c->tests[i].ran_changed;
	bool only_untouched = untouched >= 9;

	for (size_t i = 0; i < c->ntests; i++) {
		noise[i] = df[i] = NAN;
		const tf_test_delta *t = &c->tests[i];
		const agg_test *at = &a->tests.v[pv->test_id[i]];
		if (!spread_eligible(t, at) || (only_untouched && t->ran_changed))
			continue;
		double *q = pts + 3 * n;
		/* the size before the change: a change must not move a test
		 * into the company of other changed tests */
		q[0] = log(t->base.cost) + SPREAD_APART * at->measure;
		if (replicates) {
			q[1] += tf_stats_side_squares(at->mcost, nb, &q[2]);
			q[1] += tf_stats_side_squares(at->mcost + nb, nh, &q[2]);
			if (q[2] <= 0)
				continue;
		} else {
			q[1] = log(t->head.cost / t->base.cost);
		}
		n++;
	}
	if (n < 9) {
		free(pts);
		return;
	}
	qsort(pts, n, 3 * sizeof(double), cmp_pair);
	/* the neighbours: every test within a factor of two in size, at least
	 * the k nearest, at most 400 */
	size_t k = TF_MIN(TF_MAX(n / 5, (size_t)8), (size_t)50), cap = TF_MIN(n, (size_t)400);
	double *win = tf_xcalloc(cap + 1, sizeof(double));
	/* one run per side: a log ratio's variance is c^2 (1/nb + 1/nh), or
	 * 2 c^2 between two jobs */
	double scale = separate_jobs ? 2 : 1 / (double)nb + 1 / (double)nh;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		const agg_test *at = &a->tests.v[pv->test_id[i]];
		if (!spread_eligible(t, at))
			continue;
		double x = log(t->base.cost) + SPREAD_APART * at->measure;
		size_t lo = 0;
		while (lo < n && pts[3 * lo] < x)
			lo++;
		size_t l = lo, r = lo, m = 0;
		bool skipped = false;
		double ss = 0, sdf = 0;
		while (m < cap && (l > 0 || r < n)) {
			double dl = l > 0 ? x - pts[3 * (l - 1)] : INFINITY;
			double dr = r < n ? pts[3 * r] - x : INFINITY;
			if (m >= k && TF_MIN(dl, dr) > M_LN2)
				break;
			size_t j = dl <= dr ? --l : r++;
			/* leave one entry of the test's own size and ratio out: itself */
			if (!skipped && pts[3 * j] == x &&
			    (replicates || pts[3 * j + 1] == log(t->head.cost / t->base.cost))) {
				skipped = true;
				continue;
			}
			win[m++] = pts[3 * j + 1];
			ss += pts[3 * j + 1];
			sdf += pts[3 * j + 2];
		}
		if (replicates) {
			if (sdf <= 0)
				continue;
			noise[i] = sqrt(ss / sdf);
			df[i] = sdf;
			continue;
		}
		double med = median_of(win, m);
		for (size_t j = 0; j < m; j++)
			win[j] = fabs(win[j] - med);
		double sd = 1.4826 * median_of(win, m);
		noise[i] = sd / sqrt(scale);
		df[i] = TF_MAX(2.0, 0.37 * (double)(m - 1));
	}
	free(win);
	free(pts);
}

/*
 * A runner's wall clock, rounded to its tick q, is off by up to q/2
 * (variance q^2/12), and counts the moments the test waited for a CPU: a
 * jitter J of absolute time, whatever the test's size. J is what this
 * comparison's runner-timed tests show: the spread (1.4826 MAD) of their
 * head-minus-base durations, most of them unchanged; with fewer than 5 such
 * tests, a tick. Per run, the variance of a log cost is (q^2/12 + J^2) /
 * cost^2: a test of a tick is judged only on what dwarfs the clock's
 * jitter, a test of a second on its relative noise.
 */
static double runner_jitter(const tf_comparison *c, const agg *a)
{
	const struct tf_compare_priv *pv = c->priv;
	double *d = tf_xcalloc(c->ntests + 1, sizeof(double)), q = 0, j;
	size_t n = 0;

	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		const agg_test *at = &a->tests.v[pv->test_id[i]];
		if (at->measure != TF_MEASURE_RUNNER || t->outside || !t->base.ran || !t->head.ran)
			continue;
		d[n++] = t->head.cost - t->base.cost;
		if (!isnan(at->quantum[0]) && at->quantum[0] > q)
			q = at->quantum[0];
	}
	if (n < 5) {
		free(d);
		return -1; /* a tick, per test */
	}
	double med = median_of(d, n);
	for (size_t i = 0; i < n; i++)
		d[i] = fabs(d[i] - med);
	j = 1.4826 * median_of(d, n);
	free(d);
	return j;
}

static double tick_variance(const agg_test *at, const struct tf_compare_priv *pv, double jitter)
{
	double v = 0;
	if (at->measure != TF_MEASURE_RUNNER)
		return 0;
	for (int side = 0; side < 2; side++) {
		size_t from = side ? pv->nbase : 0, n = side ? pv->nhead : pv->nbase;
		double sum = 0;
		for (size_t r = from; r < from + n; r++) {
			double q = at->quantum[r], c = at->mcost[r];
			double j = jitter >= 0 ? jitter : isnan(q) ? 0 : q;
			if (!isnan(q) && c > 0)
				sum += (q * q / 12 + j * j) / (c * c);
		}
		v += sum / ((double)n * (double)n);
	}
	return v;
}

static double side_min(const double *v, size_t n)
{
	double m = v[0];
	for (size_t i = 1; i < n; i++)
		m = TF_MIN(m, v[i]);
	return m;
}

static int by_suspect_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool was_suspect(const tf_compare_opts *o, const char *name)
{
	return bsearch(&name, o->suspects, o->nsuspects, sizeof(*o->suspects), by_suspect_name) != NULL;
}

double tf_test_threshold(const tf_test_delta *t, double threshold)
{
	return t->threshold_pct > threshold ? t->threshold_pct : threshold;
}

/* An unchanged verdict that only gate.min_delta made one says so: the
 * change in percent, and in time a run. */
static void under_min_delta(const tf_comparison *c, const tf_test_delta *t, char *reason,
			    size_t len)
{
	if (t->verdict != TF_VERDICT_UNCHANGED || !(t->threshold_pct > c->summary.threshold) ||
	    !(fabs(t->delta_pct) >= c->summary.threshold))
		return;
	if (c->summary.memory) {
		char d[32], m[32];
		tf_compare_format_cost(d, sizeof(d), fabs(t->delta_pct) / 100 * t->base.cost, "bytes");
		tf_compare_format_cost(m, sizeof(m), c->summary.min_delta_bytes, "bytes");
		snprintf(reason, len,
			 "%+.1f%%, %s%s a run: less than the %s a test must move by to count "
			 "(gate.memory.min_bytes; 95%% CI %+.1f%% to %+.1f%%)",
			 t->delta_pct, t->delta_pct < 0 ? "-" : "+", d, m, t->ci_low_pct,
			 t->ci_high_pct);
		return;
	}
	snprintf(reason, len,
		 "%+.1f%%, %+.2f ms a run: less than the %g ms a test must move by to count "
		 "(gate.min_delta; 95%% CI %+.1f%% to %+.1f%%)",
		 t->delta_pct, t->delta_pct / 100 * t->base.cost / 1e6,
		 c->summary.min_delta_ns / 1e6, t->ci_low_pct, t->ci_high_pct);
}

/* What judging a comparison keeps while it goes test by test (judge). */
typedef struct {
	tf_comparison *c;
	const agg *a;
	const tf_compare_opts *o;
	struct tf_compare_priv *pv;
	double jitter;               /* the tick's, for exact costs */
	double shift, shift_var;     /* the runner's, taken out of the head */
	double *shifted, *least;     /* one test's head costs; its base's quickest */
	double *local, *local_df;    /* each test's noise as the suite's spread says */
	tf_stats_result *res;        /* each test's */
	bool *by_cpu;                /* each test's: its samples decided (cpu_witness) */
	/* the family the gate corrects for: the p-values, adjusted */
	double *p, *adj;
	size_t *tested, ntested;
} judging;

/*
 * Under the suspects limit (o->suspects) only the suspects and the tests
 * that ran changed code may come out regressed, so the family the gate
 * corrects for is theirs: a test that cannot fail spends none of the
 * gate's alpha. The suspects were picked on another run than these, so
 * judging them alone keeps the family-wise rate: each false failure is a
 * suspect's. Eight tests confirmed together for one suspect made a 5%
 * slowdown measured +4.2% (+2.1% to +6.4%) over eight alternating rounds
 * miss alpha by its Holm factor of eight (p 0.0012). The others keep the
 * whole suite's correction (their verdicts can only be unchanged,
 * improved or inconclusive).
 */
static void suspects_family(judging *j, const tf_comparison *c, const tf_compare_opts *o)
{
	size_t n = 0;

	if (!o->suspects || j->ntested < 2)
		return;
	double *p = tf_xcalloc(j->ntested, sizeof(double)), *adj = tf_xcalloc(j->ntested, sizeof(double));
	size_t *at = tf_xcalloc(j->ntested, sizeof(size_t));
	for (size_t k = 0; k < j->ntested; k++) {
		const tf_test_delta *t = &c->tests[j->tested[k]];
		if (t->ran_changed || was_suspect(o, t->name)) {
			p[n] = j->p[k];
			at[n++] = k;
		}
	}
	if (n && n < j->ntested) {
		tf_stats_adjust(adj, p, n, o->correction);
		for (size_t i = 0; i < n; i++)
			j->adj[at[i]] = adj[i];
	}
	free(p);
	free(adj);
	free(at);
}

/* New, gone, or too brief on a side to test: the verdict said here. */
static bool untestable(tf_test_delta *t, const agg_test *at)
{
	if (!t->base.ran || !t->head.ran) {
		/* new and gone say one thing only: it did not run there */
		bool none = !t->base.ran;
		t->verdict = none ? TF_VERDICT_NEW : TF_VERDICT_GONE;
		t->reason = none ? "did not run in the base" : "did not run in the head";
		return true;
	}
	if (at->measure == TF_MEASURE_SAMPLES && t->base.samples == 0 && t->head.samples == 0) {
		t->verdict = TF_VERDICT_INCONCLUSIVE;
		t->reason = "ran too briefly for a sample on either side, and nothing timed "
			    "it exactly; run with --freq 999 or --repeat 3 to decide";
		return true;
	}
	if (t->base.cost <= 0 || t->head.cost <= 0) {
		t->verdict = TF_VERDICT_INCONCLUSIVE;
		t->reason = "ran too briefly on one side for a sample, and nothing timed "
			    "it exactly; run with --freq 999 or --repeat 3 to decide";
		return true;
	}
	return false;
}

/* One test's run-to-run noise: `in`'s noise, excess and within-job terms,
 * and t->noise_pct with where it came from. */
static void test_noise(judging *j, size_t i, tf_test_delta *t, tf_stats_input *in)
{
	const tf_comparison *c = j->c;
	const tf_compare_opts *o = j->o;
	/* a test whose noise nothing measured is assumed twice as noisy as
	 * the event's floor; its history, when stored, says better */
	double noise = c->summary.noise, excess2 = 0, noise_df = 0;
	double within2 = 0, within_df = 0;

	t->noise_from_history = false;
	t->noise_set_aside = 0;
	if (!j->pv->noise_given) {
		const tf_test_noise *known = NULL;
		tf_test_noise moved;
		for (size_t h = 0; h < o->nhistory && !known; h++)
			if (strcmp(o->history[h].test, t->name) == 0)
				known = &o->history[h];
		/* the runner's shift taken out here: its noise with each
		 * stored run's shift taken out too, where that is the smaller
		 * (history.c) */
		if (known && known->shifted && !isnan(c->summary.shift_pct) &&
		    known->shifted_pct < known->noise_pct) {
			moved = *known;
			moved.noise_pct = known->shifted_pct;
			moved.df = known->shifted_df;
			moved.within_pct = known->shifted_within_pct;
			moved.within_df = known->shifted_within_df;
			known = &moved;
		}
		/* a spread of fewer than 5 runs' worth (4 degrees of freedom:
		 * runs - 1 for single runs, fewer for jobs of several,
		 * history.c) is too rough to lower the guard; it may only raise
		 * it. Where it raises it, the excess over the floor is an
		 * estimate with those degrees of freedom; below 4, a spread that
		 * happens to be small proves nothing either, so all of the run
		 * noise is treated as estimated. */
		bool rough = !known || known->df < 4; /* fewer than 5 runs' worth */
		if (rough)
			noise *= 2;
		if (known && known->noise_pct > noise) {
			excess2 = (known->noise_pct * known->noise_pct - noise * noise) / 1e4;
			noise = known->noise_pct;
			t->noise_from_history = true;
			t->noise_set_aside = known == &moved ? known->shifted_set_aside : known->set_aside;
		}
		if (known && rough)
			excess2 = noise * noise / 1e4;
		if (known && excess2 > 0)
			noise_df = known->df;
		if (known && known->within_df > 0) {
			within2 = known->within_pct * known->within_pct / 1e4;
			within_df = known->within_df;
		}
		/* no history to trust yet, and the suite's tests of its size
		 * wander more than that (suite_spread) */
		double lp = j->local[i] * 100;
		if (rough && !isnan(lp) && lp > noise) {
			excess2 = (lp * lp - c->summary.noise * c->summary.noise) / 1e4;
			noise = lp;
			noise_df = j->local_df[i];
			t->noise_from_history = false;
			t->noise_set_aside = 0;
			t->noise_from_suite = true;
		}
	}
	t->noise_pct = noise;
	in->noise = noise / 100;
	in->noise_excess2 = excess2;
	in->noise_df = noise_df;
	in->within2 = within2;
	in->within_df = within_df;
}

/* What the statistics test of one test takes: its costs (the runner's
 * shift taken out of the head), its noise, its prior. */
static void test_input(judging *j, size_t i, tf_test_delta *t, const agg_test *at,
		       tf_stats_input *in)
{
	const tf_comparison *c = j->c;
	const struct tf_compare_priv *pv = j->pv;
	bool exact = at->measure != TF_MEASURE_SAMPLES;

	memset(in, 0, sizeof(*in));
	test_noise(j, i, t, in);
	/* gate.min_delta: a short test must move by that much time too;
	 * gate.memory.min_bytes, a small one by that many bytes */
	double smallest = c->summary.min_delta_ns > 0 ? c->summary.min_delta_ns
						      : c->summary.min_delta_bytes;
	if (smallest > 0)
		t->threshold_pct = fmax(j->o->threshold, 100 * smallest / t->base.cost);
	/* repeats: the prior is what the history showed, else the suite's
	 * spread in this comparison (suite_prior), else the floor */
	double prior = pv->noise_given ? c->summary.noise
		       : t->noise_from_history ? t->noise_pct : c->summary.prior_noise;
	/* sides that alternate in one job share its moment: of the history,
	 * what one job's runs showed among themselves is their prior, where
	 * baselines saved from several runs measured it (history.c). A
	 * run's whole noise, from one job to the next, held a duet's three
	 * rounds of a test to +-4% where they varied by 1.5% */
	if (!pv->noise_given && !j->o->separate_jobs && t->noise_from_history &&
	    in->within_df >= 4 && 100 * sqrt(in->within2) < prior)
		prior = TF_MAX(100 * sqrt(in->within2), c->summary.noise / 2);
	for (size_t r = 0; r < pv->nhead; r++)
		j->shifted[r] = at->mcost[pv->nbase + r] * exp(-j->shift);
	const double *bcost = at->mcost;
	if (at->measure == TF_MEASURE_RUNNER && (pv->nbase < 3 || pv->nhead < 3)) {
		/* a runner's duration is wall-clock time: a run descheduled for a
		 * moment adds to it, none takes from it. Too few runs for their
		 * spread to show it, the quickest of a side is its cost
		 * (yaml-cpp under load: a 0.5 ms test took 69 ms in one of two
		 * runs) */
		j->least[0] = side_min(at->mcost, pv->nbase);
		for (size_t r = 1; r < pv->nbase; r++)
			j->least[r] = j->least[0];
		bcost = j->least;
		double h = side_min(j->shifted, pv->nhead);
		for (size_t r = 0; r < pv->nhead; r++)
			j->shifted[r] = h;
	}
	in->base = bcost;
	in->head = j->shifted;
	in->nbase = pv->nbase;
	in->nhead = pv->nhead;
	in->base_samples = (double)t->base.samples;
	in->head_samples = (double)t->head.samples;
	in->periodic = pv->periodic;
	in->prior_noise = prior / 100;
	in->prior_df = pv->periodic || exact ? 4.0 : 0.0;
	in->separate_jobs = j->o->separate_jobs;
	in->paired = j->o->paired;
	in->exact = exact;
	in->meas_var = exact ? tick_variance(at, pv, j->jitter) : 0;
	in->extra_var = j->shift_var;
}

/* The verdict's words for a memory comparison: allocations grow or
 * shrink, and a lower sampling rate decides what the samples cannot. */
static void memory_words(char *reason, size_t len)
{
	static const struct { const char *from, *to; } words[] = {
		{ "slower by", "allocates more by" }, { "faster by", "allocates less by" },
		{ "--freq 999", "--memory-rate 64KiB" },
	};
	char out[512];
	size_t o = 0;
	for (const char *r = reason; *r && o + 1 < sizeof(out);) {
		size_t k = 0;
		while (k < TF_ARRAY_SIZE(words) && strncmp(r, words[k].from, strlen(words[k].from)))
			k++;
		if (k < TF_ARRAY_SIZE(words)) {
			o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", words[k].to);
			r += strlen(words[k].from);
		} else {
			out[o++] = *r++;
		}
		if (o >= sizeof(out))
			o = sizeof(out) - 1;
	}
	out[o] = '\0';
	size_t n = TF_MIN(o, len - 1);
	memcpy(reason, out, n);
	reason[n] = '\0';
}

/*
 * The verdict of one tested test from its adjusted p-value. One of the
 * family the gate corrects for (`family`) needs its samples to be called
 * unchanged (gate.min_samples too), and after a rerun, to have looked
 * slower first or run changed code; one outside it ("[outside tests]",
 * not gated) is judged on its interval alone.
 */
static void set_verdict(judging *j, tf_test_delta *t, const tf_stats_result *res,
			double p_adjusted, bool family)
{
	const tf_compare_opts *o = j->o;
	/* a measured cost needs no samples to be called unchanged */
	bool counted = family && t->measure == TF_MEASURE_SAMPLES;
	char reason[256];

	t->p_adjusted = p_adjusted;
	t->verdict = tf_stats_verdict(res, p_adjusted, t->threshold_pct / 100, o->alpha,
				      counted ? (double)t->base.samples : INFINITY,
				      counted ? (double)t->head.samples : INFINITY,
				      reason, sizeof(reason));
	under_min_delta(j->c, t, reason, sizeof(reason));
	/* gate.min_samples: a test seen this little is not called unchanged */
	if (counted && t->verdict == TF_VERDICT_UNCHANGED && o->min_samples > 0 &&
	    ((double)t->base.samples < o->min_samples ||
	     (double)t->head.samples < o->min_samples)) {
		t->verdict = TF_VERDICT_INCONCLUSIVE;
		snprintf(reason, sizeof(reason),
			 "%lld samples against %lld, fewer than gate.min_samples (%.0f); run "
			 "with --freq 999 or --repeat 3 to decide",
			 (long long)t->head.samples, (long long)t->base.samples, o->min_samples);
	}
	/* a slowdown only the confirming runs show, in a test that ran no
	 * changed code: chance among many. One whose samples reached a
	 * changed line may have been too noisy to decide on one run (half a
	 * suite slowed widens the spread every test is judged by) */
	if (family && t->verdict == TF_VERDICT_REGRESSED && o->suspects && !t->ran_changed &&
	    !was_suspect(o, t->name)) {
		t->verdict = TF_VERDICT_INCONCLUSIVE;
		snprintf(reason, sizeof(reason),
			 "%+.1f%% in the runs that confirmed another test, not in the first, and "
			 "it ran no changed code "
			 "(95%% CI %+.1f%% to %+.1f%%); run with --repeat 3 to decide",
			 t->delta_pct, t->ci_low_pct, t->ci_high_pct);
	}
	if (j->pv->memory)
		memory_words(reason, sizeof(reason));
	if (j->by_cpu[res - j->res] &&
	    (t->verdict == TF_VERDICT_REGRESSED || t->verdict == TF_VERDICT_IMPROVED)) {
		size_t n = strlen(reason);
		snprintf(reason + n, sizeof(reason) - n,
			 ", by its samples (%lld against %lld): its runner's wall-clock durations "
			 "could not tell", (long long)t->head.samples, (long long)t->base.samples);
	}
	t->reason = tf_arena_strdup(j->pv->arena, reason);
}

bool tf_cmp_begin_verdict(tf_test_delta *t, double threshold)
{
	t->delta_pct = t->ci_low_pct = t->ci_high_pct = t->raw_delta_pct = NAN;
	t->p_value = t->p_adjusted = NAN;
	t->df = NAN;
	t->method = TF_METHOD_NONE;
	t->threshold_pct = threshold;
	if (t->base.ran && t->head.ran)
		return false;
	/* new and gone say one thing only: it did not run there */
	bool none = !t->base.ran;
	t->verdict = none ? TF_VERDICT_NEW : TF_VERDICT_GONE;
	t->reason = none ? "did not run in the base" : "did not run in the head";
	return true;
}

/* A test its own confirmation decided: that verdict stands for the one
 * these runs give, with how many runs decided it. */
static void take_decided(tf_comparison *c, tf_test_delta *t, const tf_compare_opts *o)
{
	const tf_test_decided *d = NULL;
	for (size_t k = 0; k < o->ndecided && !d; k++)
		if (!strcmp(o->decided[k].test, t->name))
			d = &o->decided[k];
	if (!d || t->verdict == TF_VERDICT_NEW || t->verdict == TF_VERDICT_GONE)
		return;
	t->verdict = d->verdict;
	t->delta_pct = d->delta_pct;
	t->ci_low_pct = d->ci_low_pct;
	t->ci_high_pct = d->ci_high_pct;
	t->p_value = d->p_value;
	t->p_adjusted = d->p_adjusted;
	t->method = d->together ? TF_METHOD_PAIRED : TF_METHOD_WELCH;
	t->confirm_runs = d->runs;
	char *r = tf_xasprintf("run alone %zu times, %s the merge-base: %s", d->runs,
			       d->together ? "each at the same time as" : "alternately with",
			       d->reason ? d->reason : "");
	t->reason = tf_arena_strdup(c->priv->arena, r);
	free(r);
}

/*
 * A runner's duration is wall-clock time: a test descheduled on a busy
 * machine takes longer without costing more. With a base of a tick or
 * two, the clock's jitter, which the same load raises, swamps its log:
 * GoogleTest's Rare_Suite.Uses_Rare, 1 ms in the base run and 151 and
 * 187 ms in two head runs at load 6.8, its samples 0 against 20 and 20,
 * was +13552% (95% CI +1166% to +147157%) with p=0.0052 across 210 tests,
 * inconclusive: a base of 1 ms against a jitter of 1.1 ms (the unchanged
 * tests' moves) put 1.3 into the variance of the log. Its samples count
 * CPU time only, which waiting adds nothing to: they are a second witness
 * of the same test, judged as a sampled test is: by its sampling error
 * and the event's noise, not by the wall clocks of the runner's other
 * tests, which the load spreads (a make test run: noise 27% to far more).
 * Each witness is taken at half the test's alpha (Bonferroni): the test's
 * p is twice the smaller p of the two, its change and interval those of
 * that witness.
 */
static void cpu_witness(judging *j, size_t i, const agg_test *at, const tf_stats_input *in)
{
	const struct tf_compare_priv *pv = j->pv;
	tf_stats_result *res = &j->res[i], rs;
	tf_stats_input s = *in;

	if (at->measure != TF_MEASURE_RUNNER || pv->memory)
		return;
	double *cost = tf_xcalloc(pv->nruns + 1, sizeof(double));
	bool all = true;
	for (size_t r = 0; r < pv->nruns; r++) {
		/* a run without a sample cost less than a period (measure_costs) */
		cost[r] = at->cost[r] > 0 ? at->cost[r] : (double)pv->runs[r].p->period;
		if (r >= pv->nbase)
			cost[r] *= exp(-j->shift);
		all = all && cost[r] > 0;
	}
	s.base = cost;
	s.head = cost + pv->nbase;
	s.exact = false;
	s.meas_var = 0;
	/* test_noise's for a test nothing measured the noise of */
	s.noise = (pv->noise_given ? 1 : 2) * j->c->summary.noise / 100;
	s.noise_excess2 = s.noise_df = s.within2 = s.within_df = 0;
	if (all) {
		tf_stats_test(&rs, &s);
		double p = TF_MIN(1.0, 2 * TF_MIN(res->p, rs.p));
		if (rs.p < res->p) {
			*res = rs;
			j->by_cpu[i] = true;
		}
		res->p = p;
	}
	free(cost);
}

static void judge(tf_comparison *c, agg *a, const tf_compare_opts *o)
{
	struct tf_compare_priv *pv = c->priv;
	/* tests picked for looking slower moved by the change, not by the
	 * runner: their moves measure neither its shift nor its clock */
	double jitter = o->picked ? -1 : runner_jitter(c, a);
	judging j = { c, a, o, pv, jitter, 0, 0, NULL, NULL, NULL, NULL,
		      NULL, NULL, NULL, NULL, NULL, 0 };
	double borrowed = pv->noise_given ? 0 : suite_prior(c, a, c->summary.noise, o->threshold / 100);

	j.res = tf_xcalloc(c->ntests + 1, sizeof(*j.res));
	j.by_cpu = tf_xcalloc(c->ntests + 1, sizeof(bool));
	j.p = tf_xcalloc(c->ntests + 1, sizeof(double));
	j.adj = tf_xcalloc(c->ntests + 1, sizeof(double));
	j.tested = tf_xcalloc(c->ntests + 1, sizeof(size_t));
	j.local = tf_xcalloc(c->ntests + 1, sizeof(double));
	j.local_df = tf_xcalloc(c->ntests + 1, sizeof(double));
	j.shifted = tf_xcalloc(pv->nhead + 1, sizeof(double));
	j.least = tf_xcalloc(pv->nbase + 1, sizeof(double));

	tf_cmp_mark_changed(c);
	/* a machine that runs slower allocates no more */
	if (!o->keep_shift && !o->picked && !pv->memory)
		tf_cmp_runner_shift(c, &j.shift, &j.shift_var);
	else
		c->summary.shift_pct = NAN;
	if (!pv->noise_given)
		suite_spread(c, a, o->separate_jobs, j.local, j.local_df);
	else
		for (size_t i = 0; i < c->ntests; i++)
			j.local[i] = j.local_df[i] = NAN;
	c->summary.prior_noise = borrowed > 0 ? borrowed : c->summary.noise;
	for (size_t i = 0; i < c->ntests; i++) {
		tf_test_delta *t = &c->tests[i];
		const agg_test *at = &a->tests.v[pv->test_id[i]];
		tf_stats_input in;

		t->delta_pct = t->ci_low_pct = t->ci_high_pct = t->raw_delta_pct = NAN;
		t->p_value = t->p_adjusted = NAN;
		t->df = NAN;
		t->method = TF_METHOD_NONE;
		t->threshold_pct = o->threshold;
		if (untestable(t, at))
			continue;
		test_input(&j, i, t, at, &in);
		tf_stats_test(&j.res[i], &in);
		cpu_witness(&j, i, at, &in);
		t->method = j.res[i].method;
		t->df = j.res[i].df;
		t->delta_pct = j.res[i].delta * 100;
		t->raw_delta_pct = (t->head.cost / t->base.cost - 1) * 100;
		t->ci_low_pct = j.res[i].ci_low * 100;
		t->ci_high_pct = j.res[i].ci_high * 100;
		t->p_value = j.res[i].p;
		if (t->outside && !o->gate_outside) {
			/* not one of the family the gate corrects for */
			double one;
			tf_stats_adjust(&one, &j.res[i].p, 1, TF_CORRECTION_NONE);
			set_verdict(&j, t, &j.res[i], one, false);
			continue;
		}
		j.p[j.ntested] = j.res[i].p;
		j.tested[j.ntested++] = i;
	}
	tf_stats_adjust(j.adj, j.p, j.ntested, o->correction);
	suspects_family(&j, c, o);
	for (size_t k = 0; k < j.ntested; k++)
		set_verdict(&j, &c->tests[j.tested[k]], &j.res[j.tested[k]], j.adj[k], true);
	for (size_t i = 0; i < c->ntests; i++)
		take_decided(c, &c->tests[i], o);
	free(j.res);
	free(j.by_cpu);
	free(j.p);
	free(j.adj);
	free(j.tested);
	free(j.local);
	free(j.local_df);
	free(j.shifted);
	free(j.least);
}

static int check_opts(const tf_compare_side *base, const tf_compare_side *head,
		      const tf_compare_opts *o)
{
	int rc;

	if (!base || !head || base->n == 0 || head->n == 0)
		return tf_error_set(TF_EUSAGE, "a comparison needs at least one base and one head profile");
	/* the settings' own ranges (settings.c), for callers that fill the
	 * options themselves */
	if ((rc = tf_settings_check(TF_SETTING_THRESHOLD, "the threshold", o->threshold)) ||
	    (rc = tf_settings_check(TF_SETTING_ALPHA, "alpha", o->alpha)) ||
	    (o->noise >= 0 && (rc = tf_settings_check(TF_SETTING_NOISE, "the noise", o->noise))) ||
	    (rc = tf_settings_check(TF_SETTING_MIN_DELTA, "the least change (ns)", o->min_delta_ns)))
		return rc;
	for (size_t i = 0; i < base->n; i++)
		if (!base->profiles[i])
			return tf_error_set(TF_EUSAGE, "base profile %zu is missing", i + 1);
	for (size_t i = 0; i < head->n; i++)
		if (!head->profiles[i])
			return tf_error_set(TF_EUSAGE, "head profile %zu is missing", i + 1);
	return 0;
}

const char *tf_gate_measure_name(tf_gate_measure m)
{
	return m >= TF_GATE_BOTH && m <= TF_GATE_WALL ? tf_gate_measure_names[m] : "cpu";
}

int tf_gate_measure_parse(tf_gate_measure *out, const char *s)
{
	for (int i = 0; tf_gate_measure_names[i]; i++)
		if (strcmp(tf_gate_measure_names[i], s) == 0) {
			*out = (tf_gate_measure)i;
			return 0;
		}
	return tf_error_set(TF_EUSAGE, "unknown measure '%s' (cpu, wall or both)", s);
}

/* Whether every run of a side (of both: side < 0) has sample type `type`. */
static bool have(const tf_compare_side *base, const tf_compare_side *head, const char *type,
		 int side)
{
	for (int k = 0; k < 2; k++) {
		const tf_compare_side *s = k ? head : base;
		if (side >= 0 && k != side)
			continue;
		for (size_t i = 0; i < s->n; i++)
			if (!s->profiles[i] || tf_profile_find_sample_type(s->profiles[i], type) < 0)
				return false;
	}
	return true;
}

static bool all_have(const tf_compare_side *base, const tf_compare_side *head, const char *type)
{
	return have(base, head, type, -1);
}

/*
 * gate.measure against what the runs recorded: the value column the tests
 * are compared by, and whether their waits are judged apart. A --value
 * given is the user's choice of column, whatever the measure.
 */
static const char *measure_column(const tf_compare_side *base, const tf_compare_side *head,
				  const tf_compare_opts *o, tf_gate_measure *measure,
				  const char **note, bool *wall)
{
	bool off = all_have(base, head, TF_OFFCPU_TYPE);

	*measure = o->measure;
	*note = NULL;
	*wall = false;
	if (o->value)
		return o->value;
	if (*measure == TF_GATE_CPU)
		return NULL;
	if (!off) {
		/* runs that never do (foreign profiles, hardware the kernel
		 * refuses it on) are judged as before, silently; a side that
		 * lacks it (a baseline older than off-CPU time) is said */
		bool b = have(base, head, TF_OFFCPU_TYPE, 0), h = have(base, head, TF_OFFCPU_TYPE, 1);
		if (b || h)
			*note = b ? "the head's runs have no off-CPU time: judged by CPU time alone"
				  : "the base's runs have no off-CPU time: judged by CPU time alone";
		*measure = TF_GATE_CPU;
		return NULL;
	}
	if (*measure == TF_GATE_WALL) {
		if (all_have(base, head, TF_WALL_TYPE)) {
			*wall = true;
			return TF_WALL_TYPE;
		}
		*note = "the runs' event is no time (a hardware counter): tests are judged by it, "
			"and by their waits apart";
		*measure = TF_GATE_BOTH;
	}
	/* both: CPU time apart from the waits, also where wall time is the
	 * runs' default (ptrace's --event wall) */
	const tf_profile *p = base->profiles[0];
	int d = tf_profile_default_value(p);
	if (d >= 0 && strcmp(tf_profile_str(p, p->sample_types.v[d].type), TF_WALL_TYPE) == 0 &&
	    all_have(base, head, "cpu"))
		return "cpu";
	return NULL;
}

/* Who wrote each side, and a word when their numbers mean different things:
 * a run of another measure version moves every test a little or a lot. */
static void made_by(tf_compare_summary *s, struct tf_compare_priv *pv)
{
	const tf_profile *base = pv->runs[0].p, *head = pv->runs[pv->nbase].p;
	long mb = tf_profile_measure(base), mh = tf_profile_measure(head);
	char b[96], h[96];

	if (tf_profile_made_by(b, sizeof(b), base))
		s->base_made_by = tf_arena_strdup(pv->arena, b);
	if (tf_profile_made_by(h, sizeof(h), head))
		s->head_made_by = tf_arena_strdup(pv->arena, h);
	if (mb && mh && mb != mh) {
		char *d = tf_xasprintf("the base was measured by %s (measure %ld) and the head by %s "
				       "(measure %ld), which count differently: part of every "
				       "test's change may be testflame's", b, mb, h, mh);
		s->version_diff = tf_arena_strdup(pv->arena, d);
		free(d);
	}
}

/* A comparison of `base` and `head`: the profiles borrowed, the arrays
 * that list them and their names copied, one run each. */
static tf_comparison *comparison_new(const tf_compare_side *base, const tf_compare_side *head)
{
	tf_comparison *c = tf_xcalloc(1, sizeof(*c));
	struct tf_compare_priv *pv = c->priv = tf_xcalloc(1, sizeof(*pv));

	pv->arena = tf_arena_new();
	tf_strtab_init(&pv->names);
	for (int k = 0; k < 2; k++) {
		const tf_compare_side *in = k ? head : base;
		tf_compare_side *own = k ? &c->head : &c->base;
		const tf_profile **ps = tf_arena_alloc(pv->arena, (in->n + 1) * sizeof(*ps));
		const char **ns = tf_arena_alloc(pv->arena, (in->n + 1) * sizeof(*ns));
		for (size_t i = 0; i < in->n; i++) {
			ps[i] = in->profiles[i];
			ns[i] = run_name(in, i, k, pv->arena);
		}
		own->profiles = ps;
		own->names = ns;
		own->n = in->n;
	}
	pv->nbase = base->n;
	pv->nhead = head->n;
	pv->nruns = base->n + head->n;
	pv->runs = tf_xcalloc(pv->nruns, sizeof(cmp_run));
	pv->columns = tf_xcalloc(pv->nruns, sizeof(size_t));
	return c;
}

/* Each run's value column (`value`, NULL: its default) and counts (one
 * event on both sides), then its samples summed test by test. */
static int read_runs(agg *a, const char *value)
{
	tf_comparison *c = a->c;
	struct tf_compare_priv *pv = a->pv;
	int rc;

	for (size_t i = 0; i < pv->nruns; i++) {
		cmp_run *r = &pv->runs[i];
		bool h = i >= pv->nbase;
		const tf_compare_side *s = h ? &c->head : &c->base;
		size_t k = h ? i - pv->nbase : i;
		r->p = s->profiles[k];
		r->head = h;
		r->name = s->names[k];
		if ((rc = pick_column(r, value)))
			return rc;
		if (i == 0)
			pv->memory = memory_type(tf_profile_str(r->p, r->p->sample_types.v[r->col].type),
						 &pv->exact_field);
		pick_counts(r);
		pv->columns[i] = r->col;
	}
	c->base_column = pv->columns;
	c->head_column = pv->columns + pv->nbase;
	if ((rc = check_events(pv)))
		return rc;
	for (size_t i = 0; i < pv->nruns; i++) {
		read_test_meta(a, i);
		aggregate_run(a, i);
	}
	return 0;
}

/* The summary: what was compared, with which settings, and the whole
 * profiles' cost on each side. */
static void summarize(agg *a, const tf_compare_opts *opts)
{
	struct tf_compare_priv *pv = a->pv;
	tf_compare_summary *s = &a->c->summary;
	const cmp_run *r0 = &pv->runs[0];
	const tf_value_type *vt = &r0->p->sample_types.v[r0->col];
	const char *event = NULL;
	tf_buf diff = TF_BUF_INIT;

	for (size_t i = 0; i < pv->nruns && !event; i++)
		event = run_event(&pv->runs[i]);
	s->value_type = tf_arena_strdup(pv->arena, tf_profile_str(r0->p, vt->type));
	s->unit = tf_arena_strdup(pv->arena, tf_profile_str(r0->p, vt->unit));
	/* a memory comparison measures allocations, whatever the runs' event
	 * was */
	s->event = event && !pv->memory ? tf_arena_strdup(pv->arena, event) : s->value_type;
	s->memory = pv->memory;
	s->threshold = opts->threshold;
	s->alpha = opts->alpha;
	s->min_samples = opts->min_samples > 0 ? opts->min_samples : 0;
	/* a floor in time for costs that are times */
	s->min_delta_ns = strcmp(s->unit, "nanoseconds") == 0 ? opts->min_delta_ns : 0;
	s->min_delta_bytes = strcmp(s->unit, "bytes") == 0 ? opts->min_delta_bytes : 0;
	s->noise = opts->noise >= 0 ? opts->noise : 100 * tf_stats_event_noise(s->event);
	pv->noise_given = opts->noise >= 0;
	/* testflame's run files sample on counter overflow (not the
	 * allocation sampler: it draws its distances at random) */
	pv->periodic = !pv->memory;
	for (size_t i = 0; i < pv->nruns; i++)
		if (!tf_profile_meta(pv->runs[i].p, "sampler"))
			pv->periodic = false;
	s->correction = opts->correction;
	s->confirmation = opts->confirmation ? tf_arena_strdup(pv->arena, opts->confirmation) : NULL;
	s->origin = opts->origin ? tf_arena_strdup(pv->arena, opts->origin) : NULL;
	s->separate_jobs = opts->separate_jobs;
	s->base_runs = pv->nbase;
	s->head_runs = pv->nhead;
	for (size_t t = 0; t < pv->ninternal; t++)
		for (size_t i = 0; i < pv->nruns; i++) {
			const agg_test *at = &a->tests.v[t];
			if (i < pv->nbase) {
				s->base_cost += at->cost[i];
				s->base_samples += (int64_t)llround(at->samples[i]);
			} else {
				s->head_cost += at->cost[i];
				s->head_samples += (int64_t)llround(at->samples[i]);
			}
		}
	s->base_cost /= (double)pv->nbase;
	s->head_cost /= (double)pv->nhead;
	tf_environment_diff(&diff, pv->runs[0].p, pv->runs[pv->nbase].p);
	s->env_diff = diff.len ? tf_arena_strdup(pv->arena, diff.ptr) : NULL;
	tf_buf_free(&diff);
	made_by(s, pv);
}

/* Whether `name` is the work inside `parent`'s unnamed tests
 * (TF_UNNAMED_TESTS). */
static bool unnamed_of(const char *name, const char *parent)
{
	size_t np = strlen(parent), ns = strlen(TF_UNNAMED_TESTS);
	return strlen(name) == np + ns && strncmp(name, parent, np) == 0 &&
	       strcmp(name + np, TF_UNNAMED_TESTS) == 0;
}

/*
 * The tests that hold tests and are judged through them: a program the
 * runner's tests ran inside (a Go package's test binary, a ctest test
 * running GoogleTest's or cmocka's, a libtest binary) with tests nested in
 * it named by both sides' metadata, from the runner's lists or its frames.
 * That is decided by what ran, never by which samples fell where: a
 * parent of cmocka tests too short to be sampled on one side was a
 * holder in one run and a test by its count in the next.
 *
 * Its own samples are its work outside its tests (the runtime, setup, GC):
 * outside, shown as "[outside tests]" is. Work inside its tests that no
 * listed test's frame names (a tail call hid the test's frame) is not the
 * holder's: the attributor gave it to "PARENT [unnamed tests]", a nested
 * test gated like the others. That one ran wherever its parent ran, by
 * samples (none is one period at most), never new or gone because a side
 * sampled none.
 */
static void holding_tests(agg *a)
{
	struct tf_compare_priv *pv = a->pv;
	bool *kids = tf_xcalloc(2 * pv->ninternal + 2, sizeof(bool));

	for (size_t t = 0; t < pv->ninternal; t++) {
		agg_test *at = &a->tests.v[t];
		uint32_t p = at->parent < a->name_test.n ? a->name_test.v[at->parent] : NO_ID;
		if (p == NO_ID || p == t)
			continue;
		const agg_test *pt = &a->tests.v[p];
		if (unnamed_of(cmp_name(pv, pv->test_name[t]), cmp_name(pv, at->parent))) {
			for (size_t r = 0; r < pv->nruns; r++)
				if (pt->ran[r]) {
					at->ran[r] = true;
					at->listed[r >= pv->nbase] = true;
				}
			continue;
		}
		kids[2 * p] |= at->listed[0];
		kids[2 * p + 1] |= at->listed[1];
	}
	for (size_t t = 0; t < pv->ninternal; t++)
		a->tests.v[t].holds = a->tests.v[t].nested && kids[2 * t] && kids[2 * t + 1];
	free(kids);
}

/* Each test's cost by the best measure both sides have, and the tests
 * compared: all of them, or the one asked for (TF_ENOTFOUND when neither
 * side has it); build steps apart, never a test. */
static int list_tests(agg *a, const tf_compare_opts *opts)
{
	tf_comparison *c = a->c;
	struct tf_compare_priv *pv = a->pv;
	bool time_event = strcmp(c->summary.unit, "nanoseconds") == 0;

	holding_tests(a);
	for (size_t t = 0; t < pv->ninternal; t++)
		measure_costs(&a->tests.v[t], pv, time_event);
	pv->test_id = tf_xcalloc(pv->ninternal + 1, sizeof(uint32_t));
	c->tests = tf_xcalloc(pv->ninternal + 1, sizeof(tf_test_delta));
	for (size_t t = 0; t < pv->ninternal; t++) {
		const char *name = cmp_name(pv, pv->test_name[t]);
		const agg_test *at = &a->tests.v[t];
		if (opts->test && strcmp(opts->test, name) != 0)
			continue;
		if (strcmp(name, TF_BUILD_TEST) == 0) {
			/* build steps met on the way: reported apart, never a test */
			tf_test_side b, h;
			fill_side(&b, at, pv, 0);
			fill_side(&h, at, pv, 1);
			c->summary.build_base_cost = b.cost;
			c->summary.build_head_cost = h.cost;
			continue;
		}
		tf_test_delta *d = &c->tests[c->ntests];
		if (pv->memory && !memory_measured(at, pv->nruns)) {
			/* a program the sampler could not enter (the notes say why) */
			c->summary.unmeasured++;
			continue;
		}
		d->name = name;
		fill_side(&d->base, at, pv, 0);
		fill_side(&d->head, at, pv, 1);
		d->measure = at->measure;
		d->parent = at->parent != NO_ID ? cmp_name(pv, at->parent) : NULL;
		d->nested = at->nested;
		/* a parent's own work is outside its tests, which are judged:
		 * shown, not gated (gorilla/mux's mux.test failed a README-only
		 * branch at +17% under load, by the runtime's and GC's share) */
		d->outside = strcmp(name, TF_OUTSIDE_TEST) == 0 || at->holds;
		pv->test_id[c->ntests++] = (uint32_t)t;
	}
	if (opts->test && c->ntests == 0)
		return tf_error_set(TF_ENOTFOUND, "no test '%s' in the base or the head", opts->test);
	return 0;
}

/* Each test's verdict as its CPU time (or the comparison's one measure)
 * gave it, before its waits may take its place. */
static void keep_cpu_verdicts(tf_comparison *c)
{
	for (size_t i = 0; i < c->ntests; i++) {
		tf_test_delta *t = &c->tests[i];
		t->cpu.verdict = t->verdict;
		t->cpu.delta_pct = t->delta_pct;
		t->cpu.ci_low_pct = t->ci_low_pct;
		t->cpu.ci_high_pct = t->ci_high_pct;
		t->cpu.p_adjusted = t->p_adjusted;
		t->cpu.reason = t->reason;
	}
}

static int compare_impl(tf_comparison **out, const tf_compare_side *base,
			const tf_compare_side *head, const tf_compare_opts *opts, bool waits);

/* gate.measure both: the same tests judged by their waits, apart, and the
 * verdicts merged; where that cannot be, judged by CPU time alone and
 * said so. */
static void judge_waits_apart(tf_comparison *c, const tf_compare_side *base,
			      const tf_compare_side *head, const tf_compare_opts *opts)
{
	if (compare_impl(&c->waits, base, head, opts, true) == 0) {
		tf_cmp_merge_waits(c, c->waits, opts);
	} else {
		c->summary.measure = TF_GATE_CPU;
		c->summary.measure_note = tf_arena_strdup(c->priv->arena, tf_error_last());
		tf_error_clear();
	}
}

/* The judged tests in the report's order (their internal ids with them),
 * and the verdicts counted; the work outside the tests is shown, not
 * counted, unless the gate takes it. */
static void order_tests(tf_comparison *c, const tf_compare_opts *opts)
{
	struct tf_compare_priv *pv = c->priv;
	size_t n = c->ntests;
	struct pair { tf_test_delta d; uint32_t id; } *tmp = tf_xmalloc((n + 1) * sizeof(*tmp));

	for (size_t i = 0; i < n; i++) {
		c->tests[i].attention = tf_compare_attention(
			&c->tests[i], tf_test_threshold(&c->tests[i], opts->threshold),
			opts->gate_outside);
		tmp[i].d = c->tests[i];
		tmp[i].id = pv->test_id[i];
	}
	qsort(tmp, n, sizeof(*tmp), by_report_order);
	for (size_t i = 0; i < n; i++) {
		c->tests[i] = tmp[i].d;
		pv->test_id[i] = tmp[i].id;
	}
	free(tmp);
	c->summary.ntests = 0;
	c->summary.gate_outside = opts->gate_outside;
	for (size_t i = 0; i < n; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (t->outside && !opts->gate_outside)
			continue;
		c->summary.ntests++;
		c->summary.count[t->verdict]++;
		if (t->verdict != TF_VERDICT_NEW && t->verdict != TF_VERDICT_GONE)
			c->summary.measured[t->measure]++;
	}
}

static void agg_clear(agg *a)
{
	for (size_t t = 0; t < a->tests.n; t++) {
		free(a->tests.v[t].cost);
		free(a->tests.v[t].samples);
		free(a->tests.v[t].exact);
		free(a->tests.v[t].quantum);
		free(a->tests.v[t].mcost);
		free(a->tests.v[t].ran);
		free(a->tests.v[t].run_cpu);
		free(a->tests.v[t].run_waits);
		free(a->tests.v[t].run_pagein);
	}
	tf_vec_free(&a->tests);
	tf_vec_free(&a->name_test);
}

int tf_compare(tf_comparison **out, const tf_compare_side *base,
	       const tf_compare_side *head, const tf_compare_opts *opts)
{
	return compare_impl(out, base, head, opts, false);
}

/* A comparison by CPU time (or the one measure gate.measure and the runs
 * give), or with `waits` one by the time the tests waited (the part of
 * gate.measure both that judges waits apart). */
static int compare_impl(tf_comparison **out, const tf_compare_side *base,
			const tf_compare_side *head, const tf_compare_opts *opts, bool waits)
{
	tf_compare_opts defaults;
	tf_comparison *c;
	agg a;
	int rc;
	tf_gate_measure measure = TF_GATE_BOTH;
	const char *measure_note = NULL, *value = TF_OFFCPU_TYPE;
	bool wall = false;

	*out = NULL;
	if (!opts) {
		tf_compare_opts_init(&defaults);
		opts = &defaults;
	}
	if ((rc = check_opts(base, head, opts)))
		return rc;
	if (!waits)
		value = measure_column(base, head, opts, &measure, &measure_note, &wall);
	c = comparison_new(base, head);
	c->priv->waits = waits;
	memset(&a, 0, sizeof(a));
	a.c = c;
	a.pv = c->priv;
	a.wall = wall;
	if (!(rc = read_runs(&a, value))) {
		if (waits || wall)
			tf_cmp_waits_pageins(&a);
		/* allocations are a measure of their own: no waits, no wall */
		if (a.pv->memory) {
			measure = TF_GATE_CPU;
			measure_note = NULL;
		}
		summarize(&a, opts);
		c->summary.measure = measure;
		c->summary.measure_note = measure_note;
		rc = list_tests(&a, opts);
	}
	if (!rc) {
		if (waits)
			tf_cmp_judge_waits(c, &a, opts);
		else
			judge(c, &a, opts);
		keep_cpu_verdicts(c);
		if (!waits && measure == TF_GATE_BOTH)
			judge_waits_apart(c, base, head, opts);
		order_tests(c, opts);
		if (waits)
			tf_cmp_wait_sites(c, opts->top_functions);
		else
			tf_cmp_function_deltas(c, opts->top_functions);
	}
	agg_clear(&a);
	if (rc) {
		tf_comparison_free(c);
		return rc;
	}
	*out = c;
	return 0;
}

void tf_comparison_free(tf_comparison *c)
{
	if (!c)
		return;
	struct tf_compare_priv *pv = c->priv;
	if (pv) {
		for (size_t i = 0; i < pv->nruns; i++) {
			free(pv->runs[i].sample_test);
			free(pv->runs[i].fn_key);
			free(pv->runs[i].loc_key);
		}
		free(pv->runs);
		free(pv->columns);
		free(pv->test_id);
		free(pv->test_name);
		tf_vec_free(&pv->funcs);
		tf_htab_free(&pv->func_index);
		tf_strtab_free(&pv->names);
		tf_arena_free(pv->arena);
		free(pv);
	}
	tf_comparison_free(c->waits);
	free(c->tests);
	free(c);
}

bool tf_comparison_regressed(const tf_comparison *c)
{
	return c && c->summary.count[TF_VERDICT_REGRESSED] > 0;
}

const tf_test_delta *tf_comparison_find(const tf_comparison *c, const char *name)
{
	for (size_t i = 0; i < c->ntests; i++)
		if (strcmp(c->tests[i].name, name) == 0)
			return &c->tests[i];
	return NULL;
}

const char *tf_comparison_meta(const tf_comparison *c, bool head, const char *key)
{
	const tf_compare_side *s = head ? &c->head : &c->base;
	return s->n ? tf_profile_meta(s->profiles[0], key) : NULL;
}

/* Whether a side's first run has the note `text`. */
static bool has_note(const tf_comparison *c, bool head, const char *text)
{
	char key[32];
	for (size_t j = 1;; j++) {
		snprintf(key, sizeof(key), "note.%zu", j);
		const char *t = tf_comparison_meta(c, head, key);
		if (!t)
			return false;
		if (strcmp(t, text) == 0)
			return true;
	}
}

size_t tf_comparison_notes(const tf_comparison *c, tf_comparison_note *out, size_t max)
{
	size_t n = 0;
	char key[32];

	for (int side = 1; side >= 0; side--) {
		for (size_t i = 1;; i++) {
			snprintf(key, sizeof(key), "note.%zu", i);
			const char *text = tf_comparison_meta(c, side == 1, key);
			if (!text)
				break;
			/* the same note on both sides: once, with the head's */
			bool other = has_note(c, side != 1, text);
			if (side == 0 && other)
				continue;
			if (n < max)
				out[n] = (tf_comparison_note){ side ? (other ? "both" : "head") : "base", text };
			n++;
		}
	}
	return n;
}

/* A slowdown that is seen (the interval is above zero) and may be as big
 * as the threshold: not yet a verdict after one run, worth more runs. */
/* The corrected p-value below which an undecided slowdown is worth
 * confirming: about one unchanged suite in five pays for a confirmation
 * (more where a test's noise has heavy tails); at 0.05, one 10% slowdown
 * in fifteen of an 8-test suite went unconfirmed (+8.2%, p=0.062). */
#define TF_SUSPECT_P 0.2
#define TF_SUSPECT_SHARE 0.005

bool tf_comparison_suspect(const tf_comparison *c, const tf_test_delta *t, double threshold)
{
	/* what the gate does not judge needs no confirming */
	if (t->outside && !c->summary.gate_outside)
		return false;
	threshold = tf_test_threshold(t, threshold);
	/* A big test whose one run says it may be as slow as the threshold:
	 * slower by half the threshold or more, an interval that reaches the
	 * threshold and rules out a speed-up as large, and a slowdown that
	 * would add half a percent to the whole suite. Worth confirming,
	 * significant or not. Under a CPU neighbour that comes and goes, 6
	 * of 7 missed 10% slowdowns were undecided at the threshold (+5.4%
	 * to +11.0%, intervals from -3.5% up), and 2 of the 3 left were first
	 * runs at +4.9% and +4.3% (intervals -1.9% to +12.2%, -0.6% to
	 * +9.3%); about one unchanged run in six looks like those. A test of
	 * a millisecond among hundreds never adds that much, or has an
	 * interval far wider. */
	if ((t->verdict == TF_VERDICT_INCONCLUSIVE ||
	     (t->verdict == TF_VERDICT_UNCHANGED && !(t->p_adjusted < c->summary.alpha))) &&
	    t->delta_pct >= threshold / 2 && t->ci_high_pct >= threshold &&
	    t->ci_low_pct > -threshold && c->summary.base_cost > 0 &&
	    t->base.cost * t->delta_pct / 100 >= TF_SUSPECT_SHARE * c->summary.base_cost)
		return true;
	if (t->verdict == TF_VERDICT_REGRESSED)
		return t->ci_low_pct > 0 && t->ci_high_pct >= threshold;
	return t->verdict == TF_VERDICT_INCONCLUSIVE && tf_comparison_may_reach(c, t, threshold);
}

bool tf_comparison_may_reach(const tf_comparison *c, const tf_test_delta *t, double threshold)
{
	if (t->verdict == TF_VERDICT_REGRESSED || t->verdict == TF_VERDICT_IMPROVED ||
	    t->verdict == TF_VERDICT_NEW || t->verdict == TF_VERDICT_GONE)
		return false;
	if (t->outside && !c->summary.gate_outside)
		return false;
	threshold = tf_test_threshold(t, threshold);
	if (!(t->ci_low_pct > 0) || !(t->ci_high_pct >= threshold) ||
	    t->p_adjusted < c->summary.alpha)
		return false;
	/* Among many tests, some 95% intervals miss by chance in every run
	 * (one in forty): an undecided test counts only when it stands out
	 * of the family too, its corrected p-value small. */
	return t->p_adjusted < TF_SUSPECT_P;
}

const tf_test_delta *tf_comparison_looks_slower(const tf_comparison *c, double threshold)
{
	const tf_test_delta *worst = NULL;

	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (!tf_comparison_suspect(c, t, threshold))
			continue;
		if (!worst || t->delta_pct > worst->delta_pct)
			worst = t;
	}
	return worst;
}
