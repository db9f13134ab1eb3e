/*
 * compare.c - the comparison: check that the runs of both sides measure the
 * same thing, split every run's samples by test in one pass (the `test`
 * sample label; a foreign profile without one is a single test named after
 * its suite, else "all"), total each test per run, and hand the per-run
 * totals to the statistics (stats.c) for a verdict. Function deltas live in
 * functions.c, diff trees in tree.c, the renderings in json.c and table.c.
 */
#include "compare/compare_priv.h"
#include "compare/stats.h"
#include "testflame/attribute.h"

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
	default: return "none";
	}
}

void tf_compare_opts_init(tf_compare_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->threshold = 5;
	o->alpha = 0.001;
	o->noise = -1;
	o->top_functions = 10;
	o->correction = TF_CORRECTION_HOLM;
}

/* Per internal test, while aggregating. */
typedef struct {
	double *cost;      /* per run, base runs then head runs */
	double *samples;
	double wall[2], cpu[2];      /* sums over runs that reported them */
	unsigned nwall[2], ncpu[2];
	bool listed[2];    /* named in a side's run metadata */
} agg_test;

typedef struct {
	tf_comparison *c;
	struct tf_compare_priv *pv;
	TF_VEC(agg_test) tests;
	TF_VEC(uint32_t) name_test; /* id in pv->names -> internal test */
} agg;

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

/* Where the sample counts come from: a samples/count column, else the value
 * divided by the period when they share a unit, else the value itself. */
static void pick_counts(cmp_run *r)
{
	const tf_profile *p = r->p;
	const char *unit = tf_profile_str(p, p->sample_types.v[r->col].unit);

	r->count_col = SIZE_MAX;
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

static double parse_ns(const char *s, const char *end)
{
	char buf[64], *e;
	size_t n = TF_MIN((size_t)(end - s), sizeof(buf) - 1);
	memcpy(buf, s, n);
	buf[n] = 0;
	double v = strtod(buf, &e);
	if (e == buf || v < 0)
		return NAN;
	if (strcmp(e, "") == 0 || strcmp(e, "ns") == 0)
		return v;
	if (strcmp(e, "us") == 0)
		return v * 1e3;
	if (strcmp(e, "ms") == 0)
		return v * 1e6;
	if (strcmp(e, "s") == 0)
		return v * 1e9;
	return NAN;
}

/*
 * Run metadata "testflame.test.NAME=samples=N value=V wall_ns=W cpu_ns=C":
 * lists the tests that ran (so a test too short to be sampled is not
 * reported gone) and carries their wall and CPU time when the recorder
 * measured them ("wall"/"cpu" accepted as key, ns/us/ms/s as suffix).
 */
static void read_test_meta(agg *a, size_t run)
{
	static const char prefix[] = "testflame.test.";
	const cmp_run *r = &a->pv->runs[run];
	int side = r->head;

	for (size_t i = 0; i < r->p->comments.n; i++) {
		const char *c = tf_profile_str(r->p, r->p->comments.v[i]);
		if (strncmp(c, prefix, sizeof(prefix) - 1) != 0)
			continue;
		c += sizeof(prefix) - 1;
		const char *eq = strstr(c, "=samples=");
		if (!eq)
			eq = strchr(c, '=');
		if (!eq || eq == c)
			continue;
		uint32_t t = test_intern(a, c, (size_t)(eq - c));
		agg_test *at = &a->tests.v[t];
		at->listed[side] = true;
		for (const char *f = eq + 1; *f;) {
			const char *fe = strchr(f, ' ');
			if (!fe)
				fe = f + strlen(f);
			const char *kv = memchr(f, '=', (size_t)(fe - f));
			if (kv) {
				size_t kl = (size_t)(kv - f);
				double v = parse_ns(kv + 1, fe);
				bool wall = (kl == 4 && !strncmp(f, "wall", 4)) || (kl == 7 && !strncmp(f, "wall_ns", 7));
				bool cpu = (kl == 3 && !strncmp(f, "cpu", 3)) || (kl == 6 && !strncmp(f, "cpu_ns", 6));
				if (!isnan(v) && wall) {
					at->wall[side] += v;
					at->nwall[side]++;
				} else if (!isnan(v) && cpu) {
					at->cpu[side] += v;
					at->ncpu[side]++;
				}
			}
			f = *fe ? fe + 1 : fe;
		}
	}
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
		at->samples[run] += r->count_col != SIZE_MAX ? (double)v[r->count_col]
							      : (double)v[r->col] * r->count_per_value;
	}
	free(str_test);
}

static int by_report_order(const void *x, const void *y)
{
	const tf_test_delta *a = x, *b = y;
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
	double cost = 0, samples = 0;

	s->runs = 0;
	for (size_t i = from; i < from + n; i++) {
		cost += at->cost[i];
		samples += at->samples[i];
		if (at->samples[i] > 0 || at->cost[i] != 0)
			s->runs++;
	}
	s->cost = cost / (double)n;
	s->samples = (int64_t)llround(samples);
	s->wall_ns = at->nwall[side] ? at->wall[side] / at->nwall[side] : NAN;
	s->cpu_ns = at->ncpu[side] ? at->cpu[side] / at->ncpu[side] : NAN;
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

static void judge(tf_comparison *c, agg *a, const tf_compare_opts *o)
{
	struct tf_compare_priv *pv = c->priv;
	tf_stats_result *res = tf_xcalloc(c->ntests + 1, sizeof(*res));
	double *p = tf_xcalloc(c->ntests + 1, sizeof(double));
	double *adj = tf_xcalloc(c->ntests + 1, sizeof(double));
	size_t *tested = tf_xcalloc(c->ntests + 1, sizeof(size_t));
	size_t ntested = 0;
	char reason[256];
	double borrowed = pv->noise_given ? 0 : suite_prior(c, a, c->summary.noise, o->threshold / 100);

	c->summary.prior_noise = borrowed > 0 ? borrowed : c->summary.noise;
	for (size_t i = 0; i < c->ntests; i++) {
		tf_test_delta *t = &c->tests[i];
		const agg_test *at = &a->tests.v[pv->test_id[i]];

		t->delta_pct = t->ci_low_pct = t->ci_high_pct = NAN;
		t->p_value = t->p_adjusted = NAN;
		t->df = NAN;
		t->method = TF_METHOD_NONE;
		if (t->base.cost <= 0 && t->head.cost <= 0) {
			t->verdict = TF_VERDICT_INCONCLUSIVE;
			t->reason = "ran, but too briefly to be sampled on either side";
			continue;
		}
		if (t->base.cost <= 0 || t->head.cost <= 0) {
			bool none = t->base.cost <= 0;
			/* listed in the side's metadata: it ran, too briefly to be sampled */
			if (at->listed[none ? 0 : 1]) {
				t->verdict = TF_VERDICT_INCONCLUSIVE;
				snprintf(reason, sizeof(reason),
					 "no samples in the %s, where it ran too briefly to be sampled",
					 none ? "base" : "head");
			} else {
				t->verdict = none ? TF_VERDICT_NEW : TF_VERDICT_GONE;
				snprintf(reason, sizeof(reason), "%s", none ? "not in the base" : "not in the head");
			}
			t->reason = tf_arena_strdup(pv->arena, reason);
			continue;
		}
		/* a test whose noise nothing measured is assumed twice as noisy as
		 * the event's floor; its history, when stored, says better */
		double noise = c->summary.noise, excess2 = 0, noise_df = 0;
		double within2 = 0, within_df = 0;
		t->noise_from_history = false;
		if (!pv->noise_given) {
			const tf_test_noise *known = NULL;
			for (size_t h = 0; h < o->nhistory && !known; h++)
				if (strcmp(o->history[h].test, t->name) == 0)
					known = &o->history[h];
			/* a spread of fewer than 5 runs' worth (4 degrees of
			 * freedom: runs - 1 for single runs, fewer for jobs of
			 * several, history.c) is too rough to lower the guard; it
			 * may only raise it. Where it raises it, the excess over
			 * the floor is an estimate with those degrees of freedom;
			 * below 4, a spread that happens to be small proves
			 * nothing either, so all of the run noise is treated as
			 * estimated. */
			bool rough = !known || known->df < 4; /* fewer than 5 runs' worth */
			if (rough)
				noise *= 2;
			if (known && known->noise_pct > noise) {
				excess2 = (known->noise_pct * known->noise_pct - noise * noise) / 1e4;
				noise = known->noise_pct;
				t->noise_from_history = true;
			}
			if (known && rough)
				excess2 = noise * noise / 1e4;
			if (known && excess2 > 0)
				noise_df = known->df;
			if (known && known->within_df > 0) {
				within2 = known->within_pct * known->within_pct / 1e4;
				within_df = known->within_df;
			}
		}
		t->noise_pct = noise;
		/* repeats: the prior is what the history showed, else the
		 * suite's spread in this comparison (suite_prior), else the floor */
		double prior = pv->noise_given ? c->summary.noise
			       : t->noise_from_history ? noise : c->summary.prior_noise;
		tf_stats_input in = {
			at->cost, at->cost + pv->nbase, pv->nbase, pv->nhead,
			(double)t->base.samples, (double)t->head.samples, noise / 100,
			pv->periodic, prior / 100, pv->periodic ? 4.0 : 0.0,
			excess2, noise_df, within2, within_df, o->separate_jobs,
		};
		tf_stats_test(&res[i], &in);
		t->method = res[i].method;
		t->df = res[i].df;
		t->delta_pct = res[i].delta * 100;
		t->ci_low_pct = res[i].ci_low * 100;
		t->ci_high_pct = res[i].ci_high * 100;
		t->p_value = res[i].p;
		p[ntested] = res[i].p;
		tested[ntested++] = i;
	}
	tf_stats_adjust(adj, p, ntested, o->correction);
	for (size_t k = 0; k < ntested; k++) {
		tf_test_delta *t = &c->tests[tested[k]];
		t->p_adjusted = adj[k];
		t->verdict = tf_stats_verdict(&res[tested[k]], adj[k], o->threshold / 100, o->alpha,
					      (double)t->base.samples, (double)t->head.samples,
					      reason, sizeof(reason));
		/* gate.min_samples: a test seen this little is not called unchanged */
		if (t->verdict == TF_VERDICT_UNCHANGED && o->min_samples > 0 &&
		    ((double)t->base.samples < o->min_samples ||
		     (double)t->head.samples < o->min_samples)) {
			t->verdict = TF_VERDICT_INCONCLUSIVE;
			snprintf(reason, sizeof(reason),
				 "too few samples to tell (%lld base, %lld head; min_samples is %.0f)",
				 (long long)t->base.samples, (long long)t->head.samples, o->min_samples);
		}
		t->reason = tf_arena_strdup(pv->arena, reason);
	}
	free(res);
	free(p);
	free(adj);
	free(tested);
}

static int check_opts(const tf_compare_side *base, const tf_compare_side *head,
		      const tf_compare_opts *o)
{
	if (!base || !head || base->n == 0 || head->n == 0)
		return tf_error_set(TF_EUSAGE, "a comparison needs at least one base and one head profile");
	if (!(o->threshold >= 0 && o->threshold < 1000))
		return tf_error_set(TF_EUSAGE, "the threshold must be between 0 and 1000 percent, not %g",
				    o->threshold);
	if (!(o->alpha > 0 && o->alpha < 1))
		return tf_error_set(TF_EUSAGE, "alpha must be between 0 and 1, not %g", o->alpha);
	if (o->noise >= 100)
		return tf_error_set(TF_EUSAGE, "the noise must be below 100 percent, not %g", o->noise);
	for (size_t i = 0; i < base->n; i++)
		if (!base->profiles[i])
			return tf_error_set(TF_EUSAGE, "base profile %zu is missing", i + 1);
	for (size_t i = 0; i < head->n; i++)
		if (!head->profiles[i])
			return tf_error_set(TF_EUSAGE, "head profile %zu is missing", i + 1);
	return 0;
}

int tf_compare(tf_comparison **out, const tf_compare_side *base,
	       const tf_compare_side *head, const tf_compare_opts *opts)
{
	tf_compare_opts defaults;
	tf_comparison *c;
	struct tf_compare_priv *pv;
	agg a;
	int rc;

	*out = NULL;
	if (!opts) {
		tf_compare_opts_init(&defaults);
		opts = &defaults;
	}
	if ((rc = check_opts(base, head, opts)))
		return rc;

	c = tf_xcalloc(1, sizeof(*c));
	pv = c->priv = tf_xcalloc(1, sizeof(*pv));
	pv->arena = tf_arena_new();
	tf_strtab_init(&pv->names);
	/* the profiles are borrowed, the arrays that list them copied */
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
	memset(&a, 0, sizeof(a));
	a.c = c;
	a.pv = pv;

	for (size_t i = 0; i < pv->nruns; i++) {
		cmp_run *r = &pv->runs[i];
		bool h = i >= base->n;
		const tf_compare_side *s = h ? &c->head : &c->base;
		size_t k = h ? i - base->n : i;
		r->p = s->profiles[k];
		r->head = h;
		r->name = s->names[k];
		if ((rc = pick_column(r, opts->value)))
			goto done;
		pick_counts(r);
		pv->columns[i] = r->col;
	}
	c->base_column = pv->columns;
	c->head_column = pv->columns + pv->nbase;
	if ((rc = check_events(pv)))
		goto done;

	for (size_t i = 0; i < pv->nruns; i++) {
		read_test_meta(&a, i);
		aggregate_run(&a, i);
	}

	/* the summary */
	{
		tf_compare_summary *s = &c->summary;
		const cmp_run *r0 = &pv->runs[0];
		const tf_value_type *vt = &r0->p->sample_types.v[r0->col];
		const char *event = NULL;
		for (size_t i = 0; i < pv->nruns && !event; i++)
			event = run_event(&pv->runs[i]);
		s->value_type = tf_arena_strdup(pv->arena, tf_profile_str(r0->p, vt->type));
		s->unit = tf_arena_strdup(pv->arena, tf_profile_str(r0->p, vt->unit));
		s->event = event ? tf_arena_strdup(pv->arena, event) : s->value_type;
		s->threshold = opts->threshold;
		s->alpha = opts->alpha;
		s->min_samples = opts->min_samples > 0 ? opts->min_samples : 0;
		s->noise = opts->noise >= 0 ? opts->noise : 100 * tf_stats_event_noise(s->event);
		pv->noise_given = opts->noise >= 0;
		/* testflame's run files sample on counter overflow */
		pv->periodic = true;
		for (size_t i = 0; i < pv->nruns; i++)
			if (!tf_profile_meta(pv->runs[i].p, "sampler"))
				pv->periodic = false;
		s->correction = opts->correction;
		s->separate_jobs = opts->separate_jobs;
		s->base_runs = pv->nbase;
		s->head_runs = pv->nhead;
		for (size_t t = 0; t < pv->ninternal; t++)
			for (size_t i = 0; i < pv->nruns; i++) {
				const agg_test *at = &a.tests.v[t];
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
	}

	/* the tests: all of them, or the one asked for */
	pv->test_id = tf_xcalloc(pv->ninternal + 1, sizeof(uint32_t));
	c->tests = tf_xcalloc(pv->ninternal + 1, sizeof(tf_test_delta));
	for (size_t t = 0; t < pv->ninternal; t++) {
		const char *name = cmp_name(pv, pv->test_name[t]);
		if (opts->test && strcmp(opts->test, name) != 0)
			continue;
		if (strcmp(name, TF_BUILD_TEST) == 0) {
			/* build steps met on the way: reported apart, never a test */
			tf_test_side b, h;
			fill_side(&b, &a.tests.v[t], pv, 0);
			fill_side(&h, &a.tests.v[t], pv, 1);
			c->summary.build_base_cost = b.cost;
			c->summary.build_head_cost = h.cost;
			continue;
		}
		tf_test_delta *d = &c->tests[c->ntests];
		d->name = name;
		fill_side(&d->base, &a.tests.v[t], pv, 0);
		fill_side(&d->head, &a.tests.v[t], pv, 1);
		pv->test_id[c->ntests++] = (uint32_t)t;
	}
	if (opts->test && c->ntests == 0) {
		rc = tf_error_set(TF_ENOTFOUND, "no test '%s' in the base or the head", opts->test);
		goto done;
	}
	judge(c, &a, opts);
	/* sort tests and their internal ids together */
	{
		size_t n = c->ntests;
		struct pair { tf_test_delta d; uint32_t id; } *tmp = tf_xmalloc((n + 1) * sizeof(*tmp));
		for (size_t i = 0; i < n; i++) {
			tmp[i].d = c->tests[i];
			tmp[i].id = pv->test_id[i];
		}
		qsort(tmp, n, sizeof(*tmp), by_report_order);
		for (size_t i = 0; i < n; i++) {
			c->tests[i] = tmp[i].d;
			pv->test_id[i] = tmp[i].id;
		}
		free(tmp);
	}
	c->summary.ntests = c->ntests;
	for (size_t i = 0; i < c->ntests; i++)
		c->summary.count[c->tests[i].verdict]++;
	tf_cmp_function_deltas(c, opts->top_functions);

done:
	for (size_t t = 0; t < a.tests.n; t++) {
		free(a.tests.v[t].cost);
		free(a.tests.v[t].samples);
	}
	tf_vec_free(&a.tests);
	tf_vec_free(&a.name_test);
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

/* A slowdown that is seen (the interval is above zero) and may be as big
 * as the threshold: not yet a verdict after one run, worth more runs. */
const tf_test_delta *tf_comparison_looks_slower(const tf_comparison *c, double threshold)
{
	const tf_test_delta *worst = NULL;

	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (t->verdict != TF_VERDICT_REGRESSED && t->verdict != TF_VERDICT_INCONCLUSIVE)
			continue;
		if (!(t->ci_low_pct > 0) || !(t->ci_high_pct >= threshold))
			continue;
		if (!worst || t->delta_pct > worst->delta_pct)
			worst = t;
	}
	return worst;
}
