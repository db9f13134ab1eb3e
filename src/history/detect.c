/*
 * detect.c - steps and drifts in the series of a suite's tests.
 *
 * Every series is analysed on log costs, so a step is a ratio whatever the
 * test's size and noise is relative. Before that:
 *
 *  - Machine classes: where the runner changed between two commits, the
 *    suite's tests moved together. The shift is the median, over the tests
 *    measured on both sides, of the difference between their mean levels
 *    at the last (up to 5) commits of the old class and the first of the
 *    new; the median ignores the few tests a commit there changed. Every
 *    class is levelled to the newest commit's class. With fewer than 5
 *    tests to take a median of, nothing is levelled: only the newest
 *    commit's class is analysed, and the result says so.
 *  - Outliers: a lone point far off both its neighbours on each side (in
 *    the same direction, by outlier_sigmas robust SDs of the series' first
 *    differences) is set aside: one slow run is not a change, and a mean
 *    would feel it.
 *
 * Steps: E-Divisive means as Hunter (Apache Otava) runs it. Within a
 * window of `window` points, the split maximising the energy of the mean
 * shift, (n1 n2 / n) (mean1 - mean2)^2, is proposed, then judged by
 * Student's t test between the two segments it separates; the segments are
 * split again until a proposal fails (the weak pass, p_weak). Windows
 * advance by half their length, or to the last change found. The strong
 * pass then drops the weakest change (its p between its neighbouring
 * changes, at most `window` points a side) while one fails p_strong or
 * min_change_pct, and moves each change kept to where its two segments
 * put it. p_strong is 0.0002, not Hunter's 0.001: at 0.001 flat series
 * of 100 commits in 2% noise showed 0.5 false changes per 1,000, at
 * 0.0002 none in 2,000, and 5% steps were found as often. Since each proposal is the best of up to window - 2m + 1
 * positions, its p is multiplied by that number (Bonferroni for the
 * selection): without it a flat series of 1,000 commits shows a "change"
 * in most runs. Across the suite's tests the changes' p-values then go
 * through Benjamini-Hochberg at `fdr` (the family: every test, or every
 * change when there are more), and a test that lost one is merged again.
 *
 * Drift: windows of drift_window points ending at the newest commit, and
 * every half window before it. A window drifts when Mann-Kendall's test
 * says it trends (after BH across tests and windows, at fdr), its
 * Theil-Sen slope adds up to drift_pct or more over the window, and a slow
 * rise (a ramp of a quarter of the window or longer between two levels)
 * explains it clearly better than any single step (LINE_MARGIN of its
 * squared residuals): a step is a ramp one commit long;
 * changes inside a drift of the same direction are part of it and are not
 * reported as steps. A window of a step and no trend stays a step.
 *
 * Costs: every t test comes from prefix sums, so a window's pass is
 * O(window * changes); a suite's analysis is O(tests * commits), and the
 * tracker's append re-reads only the last two windows of each test.
 */
#include "testflame/history.h"
#include "testflame/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LOG_FLOOR_VAR 1e-8 /* (0.01%)^2: exact counts may not vary at all */
/* A drift's ramp (a rise over a quarter of the window or more) must leave
 * less than this share of what the best single step leaves unexplained. */
#define LINE_MARGIN 0.8

void tf_history_opts_init(tf_history_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->window = 50;
	o->min_segment = 5;
	o->p_weak = 0.01;
	o->p_strong = 0.0002;
	o->fdr = 0.05;
	o->min_change_pct = 1;
	o->drift_window = 20;
	o->drift_pct = 5;
	o->outlier_sigmas = 6;
	o->keep_common = false;
}

static int check_opts(const tf_history_opts *o)
{
	if (o->min_segment < 2 || o->window < 2 * o->min_segment + 1)
		return tf_error_set(TF_EUSAGE, "the window (%zu) must hold two segments of %zu points "
				    "and one more", o->window, o->min_segment);
	if (!(o->p_weak > 0 && o->p_weak < 1) || !(o->p_strong > 0 && o->p_strong <= o->p_weak))
		return tf_error_set(TF_EUSAGE, "the levels must satisfy 0 < strong (%g) <= weak (%g) < 1",
				    o->p_strong, o->p_weak);
	if (!(o->fdr > 0 && o->fdr < 1))
		return tf_error_set(TF_EUSAGE, "the false discovery rate must be in (0, 1), not %g",
				    o->fdr);
	if (!(o->min_change_pct >= 0) || !(o->drift_pct >= 0))
		return tf_error_set(TF_EUSAGE, "the least change and drift must be >= 0");
	if (o->drift_window < 6)
		return tf_error_set(TF_EUSAGE, "the drift window must be at least 6 commits, not %zu",
				    o->drift_window);
	return 0;
}

/* ---- one series --------------------------------------------------------- */

/* A test's points: log costs y[i] at commits at[i], with prefix sums. */
typedef struct {
	double *y;
	size_t *at;
	double *s1, *s2; /* s1[i] = sum of y[0..i), s2 the squares */
	size_t n, cap;
} series;

static void series_push(series *s, double y, size_t at)
{
	if (s->n + 1 >= s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->y = tf_xrealloc(s->y, s->cap * sizeof(double));
		s->at = tf_xrealloc(s->at, s->cap * sizeof(size_t));
		s->s1 = tf_xrealloc(s->s1, (s->cap + 1) * sizeof(double));
		s->s2 = tf_xrealloc(s->s2, (s->cap + 1) * sizeof(double));
		if (s->n == 0)
			s->s1[0] = s->s2[0] = 0;
	}
	/* sums relative to the first point keep the squares well conditioned */
	double d = s->n ? y - s->y[0] : 0;
	s->y[s->n] = y;
	s->at[s->n] = at;
	s->s1[s->n + 1] = s->s1[s->n] + d;
	s->s2[s->n + 1] = s->s2[s->n] + d * d;
	s->n++;
}

static void series_free(series *s)
{
	free(s->y);
	free(s->at);
	free(s->s1);
	free(s->s2);
	memset(s, 0, sizeof(*s));
}

static double seg_mean(const series *s, size_t a, size_t b)
{
	return (s->s1[b] - s->s1[a]) / (double)(b - a);
}

static double seg_ss(const series *s, size_t a, size_t b)
{
	double n = (double)(b - a), m = s->s1[b] - s->s1[a];
	double ss = s->s2[b] - s->s2[a] - m * m / n;
	return ss > 0 ? ss : 0;
}

/* Student's t test between [a, t) and [t, b); the p of the best of
 * `positions` places (Bonferroni); the difference of the means and its
 * standard error and degrees of freedom. */
typedef struct {
	double diff, se, df, t;
	size_t positions;
} ttest;

static const ttest NO_TEST = { 0, INFINITY, 1, 0, 1 };

static ttest t_between(const series *s, size_t a, size_t t, size_t b, size_t positions)
{
	ttest r = NO_TEST;
	size_t n1 = t - a, n2 = b - t;
	if (n1 < 2 || n2 < 2)
		return r;
	r.positions = positions ? positions : 1;
	r.diff = seg_mean(s, t, b) - seg_mean(s, a, t);
	r.df = (double)(n1 + n2 - 2);
	double var = (seg_ss(s, a, t) + seg_ss(s, t, b)) / r.df;
	if (var < LOG_FLOOR_VAR)
		var = LOG_FLOOR_VAR;
	r.se = sqrt(var * (1.0 / (double)n1 + 1.0 / (double)n2));
	r.t = fabs(r.diff) / r.se;
	return r;
}

/* The selection-corrected two-sided p. */
static double t_p(const ttest *r)
{
	if (!isfinite(r->se))
		return 1;
	return TF_MIN(1.0, 2 * tf_stats_t_sf(r->t, r->df) * (double)r->positions);
}

/*
 * Whether r's corrected p is at most `level` (p_weak or p_strong): |t|
 * against the critical value of its degrees of freedom and positions,
 * each computed once. The distribution's tail is what a suite's analysis
 * spends its time on otherwise.
 */
typedef struct {
	double level;
	size_t maxdf, maxpos;
	double *crit; /* [df * (maxpos + 1) + pos], NAN until needed */
} crit_table;

static void crit_init(crit_table *c, double level, size_t window)
{
	c->level = level;
	c->maxdf = 2 * window;
	c->maxpos = window;
	size_t n = (c->maxdf + 1) * (c->maxpos + 1);
	c->crit = tf_xmalloc(n * sizeof(double));
	for (size_t i = 0; i < n; i++)
		c->crit[i] = NAN;
}

static bool passes(crit_table *c, const ttest *r)
{
	if (!isfinite(r->se))
		return false;
	size_t df = (size_t)r->df;
	if (df > c->maxdf || r->positions > c->maxpos || (double)df != r->df)
		return t_p(r) <= c->level;
	double *v = &c->crit[df * (c->maxpos + 1) + r->positions];
	if (isnan(*v))
		*v = tf_stats_t_isf(c->level / 2 / (double)r->positions, r->df);
	return r->t >= *v;
}

/* The options and the critical values of the two passes. */
typedef struct {
	tf_history_opts o;
	crit_table weak, strong;
} ctx;

static void ctx_init(ctx *cx, const tf_history_opts *o)
{
	cx->o = *o;
	crit_init(&cx->weak, o->p_weak, o->window);
	crit_init(&cx->strong, o->p_strong, o->window);
}

static void ctx_free(ctx *cx)
{
	free(cx->weak.crit);
	free(cx->strong.crit);
}

static size_t positions_in(size_t len, size_t window, size_t m)
{
	size_t l = TF_MIN(len, window);
	return l >= 2 * m ? l - 2 * m + 1 : 1;
}

typedef TF_VEC(size_t) idxvec;

static void insert_sorted(idxvec *v, size_t x)
{
	size_t i = 0;
	while (i < v->n && v->v[i] < x)
		i++;
	if (i < v->n && v->v[i] == x)
		return;
	tf_vec_push(v, 0);
	memmove(v->v + i + 1, v->v + i, (v->n - 1 - i) * sizeof(size_t));
	v->v[i] = x;
}

/* E-Divisive means within [lo, hi): the proposals that pass p_weak,
 * added to `cps` (indices of the first point of a new level). */
static void edivisive(const series *s, size_t lo, size_t hi, ctx *cx, idxvec *cps)
{
	const tf_history_opts *o = &cx->o;
	size_t m = o->min_segment;
	idxvec local = { 0 };

	for (;;) {
		double best = -1;
		size_t bt = 0, ba = 0, bb = 0;
		for (size_t k = 0; k <= local.n; k++) {
			size_t a = k ? local.v[k - 1] : lo, b = k < local.n ? local.v[k] : hi;
			if (b - a < 2 * m)
				continue;
			double tot = s->s1[b] - s->s1[a], len = (double)(b - a);
			for (size_t t = a + m; t + m <= b; t++) {
				double n1 = (double)(t - a), n2 = (double)(b - t);
				double left = s->s1[t] - s->s1[a];
				double d = (tot - left) / n2 - left / n1;
				double q = n1 * n2 / len * d * d;
				if (q > best) {
					best = q;
					bt = t;
					ba = a;
					bb = b;
				}
			}
		}
		if (best < 0)
			break;
		ttest r = t_between(s, ba, bt, bb, positions_in(bb - ba, o->window, m));
		if (!passes(&cx->weak, &r))
			break;
		insert_sorted(&local, bt);
	}
	for (size_t i = 0; i < local.n; i++)
		insert_sorted(cps, local.v[i]);
	tf_vec_free(&local);
}

/* The weak pass over [lo, hi), window by window, Hunter's way. */
static void weak_pass(const series *s, size_t lo, size_t hi, ctx *cx, idxvec *cps)
{
	const tf_history_opts *o = &cx->o;
	size_t start = lo, step = TF_MAX(o->window / 2, 1);
	while (start < hi) {
		size_t end = TF_MIN(start + o->window, hi);
		size_t before = cps->n, last = start;
		edivisive(s, start, end, cx, cps);
		for (size_t i = 0; i < cps->n; i++)
			if (cps->v[i] >= start && cps->v[i] < end && cps->v[i] > last)
				last = cps->v[i];
		(void)before;
		if (end == hi)
			break;
		start = TF_MAX(last, start + step);
	}
}

/* The neighbours of change i: its segment each side, at most `window`
 * points of each. */
static ttest judge(const series *s, const idxvec *c, size_t i, size_t lo, size_t hi,
		   const tf_history_opts *o)
{
	size_t a = i ? c->v[i - 1] : lo, b = i + 1 < c->n ? c->v[i + 1] : hi, t = c->v[i];
	if (t - a > o->window)
		a = t - o->window;
	if (b - t > o->window)
		b = t + o->window;
	if (t - a < o->min_segment || b - t < o->min_segment)
		return NO_TEST;
	return t_between(s, a, t, b, positions_in(b - a, o->window, o->min_segment));
}

static bool too_small(const ttest *r, double min_pct)
{
	return fabs(expm1(r->diff)) * 100 < min_pct;
}

/* The strong pass: drop the weakest change while one fails, the series
 * running over [lo, hi) (the tracker's unsettled part starts after its
 * last settled change). */
static void strong_pass(const series *s, idxvec *c, size_t lo, size_t hi, ctx *cx)
{
	const tf_history_opts *o = &cx->o;
	size_t m = o->min_segment;
	/* two proposals closer than a segment (from overlapping windows) are
	 * one change: keep the one that separates their span better */
	for (size_t i = 0; i + 1 < c->n;) {
		if (c->v[i + 1] - c->v[i] >= m) {
			i++;
			continue;
		}
		size_t a = i ? c->v[i - 1] : lo, b = i + 2 < c->n ? c->v[i + 2] : hi;
		ttest x = t_between(s, a, c->v[i], b, 1), y = t_between(s, a, c->v[i + 1], b, 1);
		size_t drop = x.t >= y.t ? i + 1 : i;
		memmove(c->v + drop, c->v + drop + 1, (c->n - drop - 1) * sizeof(size_t));
		c->n--;
	}
	for (;;) {
		size_t worst = SIZE_MAX;
		double wp = -1, wd = INFINITY;
		for (size_t i = 0; i < c->n; i++) {
			ttest r = judge(s, c, i, lo, hi, o);
			bool fails = too_small(&r, o->min_change_pct) || !passes(&cx->strong, &r);
			if (!fails)
				continue;
			double p = t_p(&r);
			if (p > wp || (p == wp && fabs(r.diff) < wd)) {
				wp = p;
				wd = fabs(r.diff);
				worst = i;
			}
		}
		if (worst == SIZE_MAX)
			break;
		memmove(c->v + worst, c->v + worst + 1, (c->n - worst - 1) * sizeof(size_t));
		c->n--;
	}
	/* each change where its segments put it: the window it was proposed
	 * in may have cut one short */
	for (size_t i = 0; i < c->n; i++) {
		size_t a = i ? c->v[i - 1] : lo, b = i + 1 < c->n ? c->v[i + 1] : hi, t = c->v[i];
		if (t - a > o->window)
			a = t - o->window;
		if (b - t > o->window)
			b = t + o->window;
		double best = -1, tot = s->s1[b] - s->s1[a], len = (double)(b - a);
		for (size_t x = a + m; x + m <= b; x++) {
			double n1 = (double)(x - a), n2 = (double)(b - x), left = s->s1[x] - s->s1[a];
			double d = (tot - left) / n2 - left / n1, q = n1 * n2 / len * d * d;
			if (q > best) {
				best = q;
				c->v[i] = x;
			}
		}
	}
}

/* ---- outliers and classes ------------------------------------------------ */

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A robust SD of a series' noise: the MAD of its first differences (a
 * step moves one difference only), scaled for a normal and for the
 * difference of two points. */
static double robust_sd(const double *y, size_t n)
{
	if (n < 4)
		return NAN;
	double *d = tf_xmalloc((n - 1) * sizeof(double));
	for (size_t i = 1; i < n; i++)
		d[i - 1] = y[i] - y[i - 1];
	double m = median(d, n - 1);
	for (size_t i = 0; i < n - 1; i++)
		d[i] = fabs(d[i] - m);
	double mad = median(d, n - 1);
	free(d);
	return 1.4826 * mad / M_SQRT2;
}

/* Mark lone points far off both sides (3 neighbours each, at least 2). */
static size_t mark_outliers(const double *y, size_t n, double sigmas, double min_pct, bool *out)
{
	double sd = robust_sd(y, n), w[3];
	size_t count = 0;
	if (!(sd >= 0))
		return 0;
	double lim = TF_MAX(sigmas * sd, log1p(min_pct / 100));
	for (size_t i = 2; i + 2 < n; i++) {
		size_t k = 0;
		for (size_t j = i >= 3 ? i - 3 : 0; j < i; j++)
			w[k++] = y[j];
		double left = median(w, k);
		k = 0;
		for (size_t j = i + 1; j < n && j <= i + 3; j++)
			w[k++] = y[j];
		double right = median(w, k);
		double dl = y[i] - left, dr = y[i] - right;
		if ((dl > lim && dr > lim) || (dl < -lim && dr < -lim)) {
			out[i] = true;
			count++;
		}
	}
	return count;
}

/*
 * The offset of each class's log costs from the newest commit's class;
 * false when they cannot be levelled (too few tests, a class never next
 * to the newest's chain).
 */
static bool level_classes(double *offset, const tf_history_input *in, size_t nclasses)
{
	size_t nc = in->ncommits, nt = in->ntests;
	uint32_t ref = in->klass[nc - 1];
	/* sums of the estimates of o[b] - o[a], per ordered pair */
	double *est = tf_xcalloc(nclasses * nclasses, sizeof(double));
	size_t *cnt = tf_xcalloc(nclasses * nclasses, sizeof(size_t));
	double *d = tf_xmalloc((nt + 1) * sizeof(double));
	bool ok = true;

	for (size_t i = 1; i < nc && ok; i++) {
		uint32_t a = in->klass[i - 1], b = in->klass[i];
		if (a == b)
			continue;
		size_t k = 0;
		for (size_t t = 0; t < nt; t++) {
			const double *c = in->cost + t * nc;
			double sa = 0, sb = 0;
			size_t na = 0, nb = 0;
			for (size_t j = i; j-- > 0 && in->klass[j] == a && na < 5;)
				if (c[j] > 0) {
					sa += log(c[j]);
					na++;
				}
			for (size_t j = i; j < nc && in->klass[j] == b && nb < 5; j++)
				if (c[j] > 0) {
					sb += log(c[j]);
					nb++;
				}
			if (na && nb)
				d[k++] = sb / (double)nb - sa / (double)na;
		}
		if (k < 5) {
			ok = false;
			break;
		}
		double m = median(d, k);
		est[a * nclasses + b] += m;
		cnt[a * nclasses + b]++;
		est[b * nclasses + a] -= m;
		cnt[b * nclasses + a]++;
	}
	/* breadth first from the newest commit's class */
	bool *done = tf_xcalloc(nclasses, sizeof(bool));
	size_t *queue = tf_xmalloc(nclasses * sizeof(size_t)), qh = 0, qt = 0;
	for (size_t k = 0; k < nclasses; k++)
		offset[k] = 0;
	done[ref] = true;
	queue[qt++] = ref;
	while (ok && qh < qt) {
		size_t a = queue[qh++];
		for (size_t b = 0; b < nclasses; b++)
			if (!done[b] && cnt[a * nclasses + b]) {
				offset[b] = offset[a] + est[a * nclasses + b] / (double)cnt[a * nclasses + b];
				done[b] = true;
				queue[qt++] = b;
			}
	}
	for (size_t k = 0; k < nclasses && ok; k++)
		ok = done[k];
	free(done);
	free(queue);
	free(d);
	free(est);
	free(cnt);
	return ok;
}

/* ---- drift ---------------------------------------------------------------- */

double tf_history_mann_kendall(const double *x, size_t n)
{
	if (n < 3)
		return 1;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			s += (x[j] > x[i]) - (x[j] < x[i]);
	/* ties: the variance's correction per group of equal values */
	double *v = tf_xmalloc(n * sizeof(double));
	memcpy(v, x, n * sizeof(double));
	qsort(v, n, sizeof(double), cmp_dbl);
	double dn = (double)n, var = dn * (dn - 1) * (2 * dn + 5);
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && v[j] == v[i])
			j++;
		double t = (double)(j - i);
		var -= t * (t - 1) * (2 * t + 5);
		i = j;
	}
	free(v);
	var /= 18;
	if (var <= 0)
		return 1;
	double z = s > 0 ? (s - 1) / sqrt(var) : s < 0 ? (s + 1) / sqrt(var) : 0;
	return TF_MIN(1.0, 2 * tf_stats_norm_sf(fabs(z)));
}

double tf_history_theil_sen(const double *x, size_t n)
{
	if (n < 2)
		return 0;
	size_t k = 0;
	double *sl = tf_xmalloc(n * (n - 1) / 2 * sizeof(double));
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			sl[k++] = (x[j] - x[i]) / (double)(j - i);
	double m = median(sl, k);
	free(sl);
	return m;
}

/*
 * A step is a ramp one commit long. Over x[0..n): the squared residuals
 * of the best ramp (a level, a straight rise over at least `min_len`
 * commits, a level; the levels free) and of the best step. A drift is
 * what a long ramp explains clearly better than any step.
 */
static void ramp_vs_step(const double *x, size_t n, size_t min_len, double *rss_ramp,
			 double *rss_step)
{
	*rss_ramp = *rss_step = INFINITY;
	for (size_t a = 0; a + 1 < n; a++)
		for (size_t b = a + 1; b <= n; b++) {
			size_t len = b - a;
			if (len > 1 && len < min_len)
				continue;
			/* y = c + k f(i), f rising from 0 at a to 1 at b */
			double sf = 0, sff = 0, sy = 0, sfy = 0, syy = 0, dn = (double)n;
			for (size_t i = 0; i < n; i++) {
				double f = i <= a ? 0 : i >= b ? 1 : (double)(i - a) / (double)len;
				sf += f;
				sff += f * f;
				sy += x[i];
				sfy += f * x[i];
				syy += x[i] * x[i];
			}
			double vf = sff - sf * sf / dn, cfy = sfy - sf * sy / dn, vy = syy - sy * sy / dn;
			double rss = vf > 0 ? vy - cfy * cfy / vf : vy;
			if (len == 1 && rss < *rss_step)
				*rss_step = rss;
			if (len > 1 && rss < *rss_ramp)
				*rss_ramp = rss;
		}
}

static double window_median(const double *x, size_t from, size_t to)
{
	double w[8];
	size_t k = 0;
	for (size_t i = from; i < to && k < 8; i++)
		w[k++] = x[i];
	return median(w, k);
}

/* One window [lo, hi) of series `s` (points, not commits). */
static void drift_window(tf_history_drift *d, const series *s, size_t lo, size_t hi, double fdr)
{
	const double *x = s->y + lo;
	size_t n = hi - lo;
	d->from = s->at[lo];
	d->to = s->at[hi - 1];
	d->p = tf_history_mann_kendall(x, n);
	if (d->p > fdr)
		return; /* no trend: nothing to estimate (its p stays in the family) */
	double slope = tf_history_theil_sen(x, n);
	d->slope_pct = expm1(slope) * 100;
	d->total_pct = expm1(slope * (double)(n - 1)) * 100;
	double latest = window_median(x, n - 5, n), best = latest;
	for (size_t j = 0; j + 5 <= n - 5; j++) {
		double m = window_median(x, j, j + 5);
		if ((slope > 0 && m < best) || (slope < 0 && m > best))
			best = m;
	}
	d->latest_vs_best_pct = expm1(latest - best) * 100;
	/* what each commit added: the level of the 3 points from it against
	 * the 3 before it */
	d->ntop = 0;
	for (size_t i = 1; i < n; i++) {
		double after = window_median(x, i, TF_MIN(i + 3, n));
		double before = window_median(x, i >= 3 ? i - 3 : 0, i);
		double c = after - before;
		if ((slope > 0 && c <= 0) || (slope < 0 && c >= 0))
			continue;
		size_t k = d->ntop < 3 ? d->ntop++ : 2;
		if (k == 2 && d->ntop == 3 && fabs(c) <= fabs(log1p(d->top_pct[2] / 100)))
			continue;
		d->top[k] = s->at[lo + i];
		d->top_pct[k] = expm1(c) * 100;
		for (; k > 0 && fabs(d->top_pct[k]) > fabs(d->top_pct[k - 1]); k--) {
			size_t ta = d->top[k];
			double tp = d->top_pct[k];
			d->top[k] = d->top[k - 1];
			d->top_pct[k] = d->top_pct[k - 1];
			d->top[k - 1] = ta;
			d->top_pct[k - 1] = tp;
		}
	}
}

/* ---- the suite ------------------------------------------------------------ */

typedef struct {
	series s;
	idxvec cps;      /* indices into s */
	size_t outliers;
} test_state;

/* The test's points: log costs levelled by class, outliers set aside. */
static void build_series(test_state *ts, const tf_history_input *in, const double *c,
			 const double *offset, const double *common, bool only_ref,
			 const tf_history_opts *o)
{
	size_t nc = in->ncommits;
	double *y = tf_xmalloc((nc + 1) * sizeof(double));
	size_t *at = tf_xmalloc((nc + 1) * sizeof(size_t)), n = 0;
	for (size_t i = 0; i < nc; i++) {
		if (!(c[i] > 0) || !isfinite(c[i]))
			continue;
		if (only_ref && in->klass[i] != in->klass[nc - 1])
			continue;
		y[n] = log(c[i]) - (offset ? offset[in->klass[i]] : 0) -
		       (common && isfinite(common[i]) ? common[i] : 0);
		at[n++] = i;
	}
	bool *out = tf_xcalloc(n + 1, sizeof(bool));
	ts->outliers = mark_outliers(y, n, o->outlier_sigmas, o->min_change_pct, out);
	for (size_t i = 0; i < n; i++)
		if (!out[i])
			series_push(&ts->s, y[i], at[i]);
	free(out);
	free(y);
	free(at);
}

/*
 * What moved the whole suite at each commit: the median, over the tests
 * with a point there, of each test's log cost less its own median level;
 * NAN where fewer than COMMON_MIN tests ran. NULL when the suite has
 * fewer tests than that. A change to one test moves one of the values the
 * median is taken of, so it stays the test's; the machine's moment (a
 * runner busier than the last, another tenant) moves them all.
 */
#define COMMON_MIN 5
static double *common_mode(const tf_history_input *in, const double *offset, bool only_ref)
{
	size_t nc = in->ncommits, nt = in->ntests;
	if (nt < COMMON_MIN)
		return NULL;
	double *y = tf_xmalloc((nt * nc + 1) * sizeof(double)), *v = tf_xmalloc((nc + nt + 1) * sizeof(double));
	double *m = tf_xmalloc((nc + 1) * sizeof(double));
	for (size_t t = 0; t < nt; t++) {
		size_t k = 0;
		for (size_t i = 0; i < nc; i++) {
			double c = in->cost[t * nc + i];
			bool ok = c > 0 && isfinite(c) && !(only_ref && in->klass[i] != in->klass[nc - 1]);
			y[t * nc + i] = ok ? log(c) - (offset ? offset[in->klass[i]] : 0) : NAN;
			if (ok)
				v[k++] = y[t * nc + i];
		}
		double level = median(v, k);
		for (size_t i = 0; i < nc; i++)
			y[t * nc + i] -= level;
	}
	double ksum = 0;
	size_t kn = 0;
	for (size_t i = 0; i < nc; i++) {
		size_t k = 0;
		for (size_t t = 0; t < nt; t++)
			if (isfinite(y[t * nc + i]))
				v[k++] = y[t * nc + i];
		m[i] = k >= COMMON_MIN ? median(v, k) : NAN;
		if (k >= COMMON_MIN) {
			ksum += (double)k;
			kn++;
		}
	}
	/* Worth taking out only when the suite moves together beyond what
	 * the median of independent noises would: the median of k of them
	 * varies by pi/2 s^2 / k, and taking it out adds about that to every
	 * test. Here the spread of the moves is compared with twice that. */
	double *tsd = tf_xmalloc((nt + 1) * sizeof(double)), *mm = tf_xmalloc((nc + 1) * sizeof(double));
	size_t ns = 0, nm = 0;
	for (size_t t = 0; t < nt; t++) {
		size_t k = 0;
		for (size_t i = 0; i < nc; i++)
			if (isfinite(y[t * nc + i]))
				v[k++] = y[t * nc + i];
		double sd = robust_sd(v, k);
		if (sd >= 0)
			tsd[ns++] = sd * sd;
	}
	for (size_t i = 0; i < nc; i++)
		if (isfinite(m[i]))
			mm[nm++] = m[i];
	double s2 = median(tsd, ns), msd = robust_sd(mm, nm);
	bool worth = kn && ns && msd >= 0 && msd * msd > 2 * M_PI / 2 * s2 / (ksum / (double)kn);
	free(tsd);
	free(mm);
	free(y);
	free(v);
	if (!worth) {
		free(m);
		return NULL;
	}
	return m;
}

static tf_history_change make_change(const test_state *ts, size_t t, size_t i,
				     const tf_history_opts *o)
{
	const series *s = &ts->s;
	tf_history_change ch;
	memset(&ch, 0, sizeof(ch));
	ttest r = judge(s, &ts->cps, i, 0, s->n, o);
	size_t cp = ts->cps.v[i];
	size_t a = i ? ts->cps.v[i - 1] : 0, b = i + 1 < ts->cps.n ? ts->cps.v[i + 1] : s->n;
	a = cp - a > o->window ? cp - o->window : a;
	b = b - cp > o->window ? cp + o->window : b;
	ch.test = t;
	ch.at = s->at[cp];
	ch.prev = s->at[cp - 1];
	ch.size_pct = expm1(r.diff) * 100;
	double q = isfinite(r.se) ? tf_stats_t_isf(0.025, r.df) * r.se : INFINITY;
	ch.ci_low_pct = expm1(r.diff - q) * 100;
	ch.ci_high_pct = expm1(r.diff + q) * 100;
	ch.p = t_p(&r);
	ch.p_adjusted = ch.p;
	ch.before = exp(seg_mean(s, a, cp) + s->y[0]);
	ch.after = exp(seg_mean(s, cp, b) + s->y[0]);
	return ch;
}

static int by_newest(const void *x, const void *y)
{
	const tf_history_change *a = x, *b = y;
	if (a->at != b->at)
		return a->at > b->at ? -1 : 1;
	if (fabs(a->size_pct) != fabs(b->size_pct))
		return fabs(a->size_pct) > fabs(b->size_pct) ? -1 : 1;
	return a->test < b->test ? -1 : a->test > b->test;
}

static int drift_newest(const void *x, const void *y)
{
	const tf_history_drift *a = x, *b = y;
	if (a->to != b->to)
		return a->to > b->to ? -1 : 1;
	if (fabs(a->total_pct) != fabs(b->total_pct))
		return fabs(a->total_pct) > fabs(b->total_pct) ? -1 : 1;
	return a->test < b->test ? -1 : a->test > b->test;
}

/* Changes of several tests at one place (the same first commit at the new
 * level, or the next one) in the same direction: one group. Needs the
 * changes sorted newest first. */
static size_t group_changes(tf_history_change *c, size_t n)
{
	size_t g = 0;
	bool *done = tf_xcalloc(n + 1, sizeof(bool));
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		c[i].group = g;
		done[i] = true;
		for (size_t j = i + 1; j < n && c[i].at - c[j].at <= 1; j++)
			if (!done[j] && (c[j].size_pct > 0) == (c[i].size_pct > 0)) {
				c[j].group = g;
				done[j] = true;
			}
		g++;
	}
	free(done);
	return g;
}

/* Benjamini-Hochberg over the suite's changes; the family is at least the
 * tests. Returns how many fail `fdr`. */
static size_t fdr_changes(test_state *ts, size_t nt, const tf_history_opts *o, double **adj_out)
{
	size_t total = 0;
	for (size_t t = 0; t < nt; t++)
		total += ts[t].cps.n;
	size_t fam = TF_MAX(total, nt);
	double *p = tf_xmalloc((fam + 1) * sizeof(double)), *adj = tf_xmalloc((fam + 1) * sizeof(double));
	size_t k = 0, failing = 0;
	for (size_t t = 0; t < nt; t++)
		for (size_t i = 0; i < ts[t].cps.n; i++)
		{
			ttest r = judge(&ts[t].s, &ts[t].cps, i, 0, ts[t].s.n, o);
			p[k++] = t_p(&r);
		}
	for (; k < fam; k++)
		p[k] = 1;
	tf_stats_adjust(adj, p, fam, TF_CORRECTION_BH);
	for (size_t i = 0; i < total; i++)
		failing += adj[i] > o->fdr;
	free(p);
	*adj_out = adj;
	return failing;
}

int tf_history_analyze(tf_history_result **out, const tf_history_input *in,
		       const tf_history_opts *opts)
{
	tf_history_opts o;
	size_t nt = in->ntests, nc = in->ncommits;

	*out = NULL;
	if (opts)
		o = *opts;
	else
		tf_history_opts_init(&o);
	int rc = check_opts(&o);
	if (rc)
		return rc;
	tf_history_result *r = tf_xcalloc(1, sizeof(*r));
	r->ntests = nt;
	r->ncommits = nc;
	r->outliers = tf_xcalloc(nt + 1, sizeof(size_t));

	/* machine classes */
	double *offset = NULL;
	bool only_ref = false;
	size_t nclasses = 0;
	if (in->klass && nc) {
		for (size_t i = 0; i < nc; i++)
			nclasses = TF_MAX(nclasses, (size_t)in->klass[i] + 1);
		if (nclasses > 1) {
			offset = tf_xcalloc(nclasses, sizeof(double));
			if (!level_classes(offset, in, nclasses)) {
				free(offset);
				offset = NULL;
				only_ref = true;
				r->classes_apart = true;
			} else {
				r->class_shift_pct = tf_xcalloc(nc, sizeof(double));
				for (size_t i = 0; i < nc; i++)
					r->class_shift_pct[i] = expm1(offset[in->klass[i]]) * 100;
			}
		}
	}

	/* the whole suite's moves, taken out of every test and analysed as a
	 * series of their own (test index nt) */
	double *common = o.keep_common ? NULL : common_mode(in, offset, only_ref);
	double *suite_row = NULL;
	size_t nseries = nt;
	if (common) {
		suite_row = tf_xmalloc((nc + 1) * sizeof(double));
		r->common_shift_pct = tf_xmalloc((nc + 1) * sizeof(double));
		for (size_t i = 0; i < nc; i++) {
			suite_row[i] = isfinite(common[i]) ? exp(common[i]) : NAN;
			r->common_shift_pct[i] = isfinite(common[i]) ? expm1(common[i]) * 100 : NAN;
		}
		nseries = nt + 1;
	}
	test_state *ts = tf_xcalloc(nseries + 1, sizeof(test_state));
	ctx cx;
	ctx_init(&cx, &o);
	for (size_t t = 0; t < nseries; t++) {
		if (t < nt)
			build_series(&ts[t], in, in->cost + t * nc, offset, common, only_ref, &o);
		else
			build_series(&ts[t], in, suite_row, NULL, NULL, false, &o);
		if (t < nt)
			r->outliers[t] = ts[t].outliers;
		if (ts[t].s.n < 2 * o.min_segment)
			continue;
		weak_pass(&ts[t].s, 0, ts[t].s.n, &cx, &ts[t].cps);
		strong_pass(&ts[t].s, &ts[t].cps, 0, ts[t].s.n, &cx);
	}
	free(offset);
	free(common);
	free(suite_row);

	/* the suite's false discovery rate: drop what fails, merge those tests
	 * again, and judge once more */
	double *adj = NULL;
	for (int round = 0; round < 2; round++) {
		free(adj);
		if (!fdr_changes(ts, nseries, &o, &adj))
			break;
		size_t k = 0;
		for (size_t t = 0; t < nseries; t++) {
			size_t w = 0;
			bool lost = false;
			for (size_t i = 0; i < ts[t].cps.n; i++, k++) {
				if (adj[k] <= o.fdr)
					ts[t].cps.v[w++] = ts[t].cps.v[i];
				else
					lost = true;
			}
			ts[t].cps.n = w;
			if (lost && round == 0)
				strong_pass(&ts[t].s, &ts[t].cps, 0, ts[t].s.n, &cx);
		}
	}
	free(adj);
	fdr_changes(ts, nseries, &o, &adj);
	ctx_free(&cx);

	/* drift windows, with BH across tests and windows */
	TF_VEC(tf_history_drift) dr = { 0 };
	size_t dw = o.drift_window;
	for (size_t t = 0; t < nseries; t++) {
		const series *s = &ts[t].s;
		if (s->n < dw)
			continue;
		for (size_t end = s->n;; end -= dw / 2) {
			tf_history_drift d;
			memset(&d, 0, sizeof(d));
			d.test = t;
			drift_window(&d, s, end - dw, end, o.fdr);
			/* a step explains it as well as a slow rise does: no
			 * drift (p set to 1 keeps it in the family) */
			if (d.p <= o.fdr) {
				double rr, rs;
				ramp_vs_step(s->y + end - dw, dw, TF_MAX(dw / 4, 3), &rr, &rs);
				if (!(rr < LINE_MARGIN * rs))
					d.p = 1;
			}
			tf_vec_push(&dr, d);
			if (end < dw + dw / 2)
				break;
		}
	}
	double *dp = tf_xmalloc((dr.n + 1) * sizeof(double)), *dadj = tf_xmalloc((dr.n + 1) * sizeof(double));
	for (size_t i = 0; i < dr.n; i++)
		dp[i] = dr.v[i].p;
	tf_stats_adjust(dadj, dp, dr.n, TF_CORRECTION_BH);
	TF_VEC(tf_history_drift) keep = { 0 };
	for (size_t i = 0; i < dr.n; i++) {
		dr.v[i].p_adjusted = dadj[i];
		if (dadj[i] > o.fdr || fabs(dr.v[i].total_pct) < o.drift_pct)
			continue;
		/* one drift per stretch of a test: the larger of overlapping ones */
		bool dup = false;
		for (size_t j = 0; j < keep.n; j++) {
			tf_history_drift *k = &keep.v[j];
			if (k->test != dr.v[i].test || k->to < dr.v[i].from || dr.v[i].to < k->from)
				continue;
			dup = true;
			if (fabs(dr.v[i].total_pct) > fabs(k->total_pct))
				*k = dr.v[i];
		}
		if (!dup)
			tf_vec_push(&keep, dr.v[i]);
	}
	free(dp);
	free(dadj);
	tf_vec_free(&dr);

	/* the changes, less those a drift of the same direction explains */
	TF_VEC(tf_history_change) ch = { 0 };
	size_t k = 0;
	for (size_t t = 0; t < nseries; t++) {
		for (size_t i = 0; i < ts[t].cps.n; i++, k++) {
			tf_history_change c = make_change(&ts[t], t, i, &o);
			c.p_adjusted = adj[k];
			bool in_drift = false;
			for (size_t j = 0; j < keep.n && !in_drift; j++)
				in_drift = keep.v[j].test == t && c.at >= keep.v[j].from &&
					   c.at <= keep.v[j].to &&
					   (c.size_pct > 0) == (keep.v[j].total_pct > 0);
			if (!in_drift)
				tf_vec_push(&ch, c);
		}
	}
	free(adj);
	if (ch.n)
		qsort(ch.v, ch.n, sizeof(*ch.v), by_newest);
	if (keep.n)
		qsort(keep.v, keep.n, sizeof(*keep.v), drift_newest);
	r->changes = ch.v;
	r->nchanges = ch.n;
	r->ngroups = group_changes(r->changes, r->nchanges);
	r->drifts = keep.v;
	r->ndrifts = keep.n;
	for (size_t t = 0; t < nseries; t++) {
		series_free(&ts[t].s);
		tf_vec_free(&ts[t].cps);
	}
	free(ts);
	*out = r;
	return 0;
}

void tf_history_result_free(tf_history_result *r)
{
	if (!r)
		return;
	free(r->changes);
	free(r->drifts);
	free(r->outliers);
	free(r->class_shift_pct);
	free(r->common_shift_pct);
	free(r);
}

/* ---- the tracker ---------------------------------------------------------- */

struct tf_history_tracker {
	tf_history_opts o;
	ctx cx;
	size_t ntests, ncommits;
	test_state *ts;
	size_t *settled;   /* per test: points before it are settled */
	size_t *nsettled;  /* per test: changes among cps that are settled */
};

int tf_history_tracker_new(tf_history_tracker **out, size_t ntests, const tf_history_opts *o)
{
	tf_history_tracker *t;
	*out = NULL;
	t = tf_xcalloc(1, sizeof(*t));
	if (o)
		t->o = *o;
	else
		tf_history_opts_init(&t->o);
	int rc = check_opts(&t->o);
	if (rc) {
		free(t);
		return rc;
	}
	ctx_init(&t->cx, &t->o);
	t->ntests = ntests;
	t->ts = tf_xcalloc(ntests + 1, sizeof(test_state));
	t->settled = tf_xcalloc(ntests + 1, sizeof(size_t));
	t->nsettled = tf_xcalloc(ntests + 1, sizeof(size_t));
	*out = t;
	return 0;
}

void tf_history_tracker_append(tf_history_tracker *t, const double *cost)
{
	const tf_history_opts *o = &t->o;
	size_t commit = t->ncommits++;
	for (size_t i = 0; i < t->ntests; i++) {
		test_state *ts = &t->ts[i];
		if (!(cost[i] > 0) || !isfinite(cost[i]))
			continue;
		series_push(&ts->s, log(cost[i]), commit);
		size_t n = ts->s.n;
		/* settle what lies two windows back: the changes there keep */
		while (n - t->settled[i] > 2 * o->window) {
			size_t next = t->settled[i] + o->window / 2;
			for (size_t k = t->nsettled[i]; k < ts->cps.n && ts->cps.v[k] < next; k++)
				t->nsettled[i] = k + 1;
			if (t->nsettled[i] && ts->cps.v[t->nsettled[i] - 1] > t->settled[i])
				next = TF_MAX(next, ts->cps.v[t->nsettled[i] - 1]);
			t->settled[i] = next;
		}
		ts->cps.n = t->nsettled[i];
		size_t lo = t->settled[i];
		if (n - lo < 2 * o->min_segment)
			continue;
		idxvec tail = { 0 };
		weak_pass(&ts->s, lo, n, &t->cx, &tail);
		for (size_t k = 0; k < tail.n; k++)
			insert_sorted(&ts->cps, tail.v[k]);
		tf_vec_free(&tail);
		/* the strong pass over the unsettled changes only: a settled
		 * change is the left edge, as the start of the series is */
		size_t base = ts->cps.n ? t->nsettled[i] : 0;
		idxvec open = { ts->cps.v + base, ts->cps.n - base, 0 };
		size_t left = base ? ts->cps.v[base - 1] : 0;
		strong_pass(&ts->s, &open, left, n, &t->cx);
		ts->cps.n = base + open.n;
	}
}

int tf_history_tracker_changes(tf_history_result **out, const tf_history_tracker *t)
{
	tf_history_result *r = tf_xcalloc(1, sizeof(*r));
	TF_VEC(tf_history_change) ch = { 0 };
	double *adj = NULL;

	r->ntests = t->ntests;
	r->ncommits = t->ncommits;
	r->outliers = tf_xcalloc(t->ntests + 1, sizeof(size_t));
	fdr_changes(t->ts, t->ntests, &t->o, &adj);
	size_t k = 0;
	for (size_t i = 0; i < t->ntests; i++)
		for (size_t c = 0; c < t->ts[i].cps.n; c++, k++) {
			if (adj[k] > t->o.fdr)
				continue;
			tf_history_change x = make_change(&t->ts[i], i, c, &t->o);
			x.p_adjusted = adj[k];
			tf_vec_push(&ch, x);
		}
	free(adj);
	if (ch.n)
		qsort(ch.v, ch.n, sizeof(*ch.v), by_newest);
	r->changes = ch.v;
	r->nchanges = ch.n;
	r->ngroups = group_changes(r->changes, r->nchanges);
	*out = r;
	return 0;
}

void tf_history_tracker_free(tf_history_tracker *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ntests; i++) {
		series_free(&t->ts[i].s);
		tf_vec_free(&t->ts[i].cps);
	}
	ctx_free(&t->cx);
	free(t->ts);
	free(t->settled);
	free(t->nsettled);
	free(t);
}
