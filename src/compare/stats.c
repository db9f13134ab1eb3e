/*
 * stats.c - the statistical model behind every verdict. A false alarm costs
 * more than a missed 5% (teams switch off a gate that cries wolf, while a
 * real regression keeps showing up in later runs), so every choice below
 * errs on the side of "not proven".
 *
 * What is measured. A test's cost on a side is the mean over that side's
 * runs of the summed value column (ns of CPU, instructions, ...). Two kinds
 * of noise move it:
 *
 *  1. Sampling noise. The profiler sees a test through N samples. Modelling
 *     them as Poisson counts gives Var(log cost) = 1/N: exact for randomised
 *     sampling, pessimistic for strictly periodic sampling of a test that
 *     runs alone. It is what makes a 20-sample test untestable.
 *  2. Run-to-run noise. The work itself varies between runs (frequency
 *     scaling, caches, neighbours on a shared runner): a multiplicative
 *     error with a coefficient of variation c per run. Time events (cpu-clock,
 *     wall) wander by a few percent on CI runners; cycles a bit less;
 *     retired instructions hardly at all. tf_stats_event_noise() holds the
 *     defaults (--noise overrides), so instruction profiles get tight
 *     intervals from the same sample counts.
 *
 * Two tests, picked by how much the data can say about noise 2:
 *
 *  - Fewer than 3 runs on a side (the usual "one run against a stored
 *    baseline"): a z test on the log ratio with both noises modelled:
 *        log r = log(mean head cost / mean base cost)
 *        Var(log r) = s_base + s_head + c^2 (1/n_base + 1/n_head)
 *        z = log r / sqrt(Var),  p = 1 - Phi(|z|)  (or t, below)
 *    s is the sampling term. For profiles of unknown origin it is the
 *    Poisson 1/N (with c = 0 the large-sample conditional binomial test of
 *    two Poisson rates). testflame's own run files sample on counter
 *    overflow (every `period` ns of CPU, every `period` instructions), so a
 *    test's total is its true count to within a sample or two per process
 *    and attribution boundary: s = 1/N^2, and the run-to-run noise c is
 *    what limits a single run. N is the count the unchanged hypothesis
 *    expects (the pooled rate), not the one observed, and the interval is
 *    the set of ratios the same test would not reject (sampling_var()).
 *    c is the event's floor (tf_stats_event_noise) doubled until at least
 *    5 stored runs have measured the test, and always at least the spread
 *    its own stored history shows (the run files of earlier commits): a memory-bound
 *    test on a shared runner may wander by 20% where a CPU-bound one stays
 *    within 1%, and one number for both would either cry wolf or go blind.
 *    A spread over k runs is itself uncertain (k - 1 degrees of freedom),
 *    so when it raises c, the part of c^2 above the floor is treated as
 *    estimated and the others as known: the test becomes a t test with
 *    Satterthwaite's degrees of freedom, close to z for a test as quiet as
 *    the floor, and an honest t(k - 1) for one far noisier. Below 5 runs
 *    all of c^2 counts as estimated (3 runs that happen to agree say
 *    little), so a suite's first baselines catch only gross slowdowns.
 *    The change under test never feeds its own noise estimate, so a change
 *    that slows every test is still seen.
 *    Runs of one job (a baseline saved from --repeat, a PR's confirmation
 *    runs) share the job's moment, so against a stored baseline part of c
 *    is the job's and more runs of a side cannot average it away; see
 *    between_jobs() below.
 *  - At least 3 runs per side (repeats, `--against` A B A B): the data
 *    measure both noises at once. Welch's t test on the per-run log costs
 *    (log: run noise is multiplicative; Welch: the sides may differ in
 *    variance), its degrees of freedom by Welch-Satterthwaite. Three runs
 *    say little about a variance, so each side's is moderated with a prior
 *    (Smyth's moderated t, as limma does), weighted as 4 degrees of freedom,
 *    plus one sample's worth: the test's history when stored, else what
 *    limma does too, the spread borrowed from the other tests of the same
 *    comparison (the median of the suite's per-run spreads, never below
 *    half the event's floor; the event's floor itself when fewer than 3
 *    tests can say). A fixed floor would call every quiet suite as noisy
 *    as the floor assumes: runs of the two sides interleaved on one
 *    machine (`--against`) agree far better than that. Three runs that
 *    agree then tighten the interval; runs that scatter widen it past the
 *    prior. Against a stored baseline the sides are two jobs, and the
 *    job-to-job part of the noise (between_jobs()) is added to Welch's
 *    variance with the history's degrees of freedom. A run where the test
 *    has no sample counts as half a sample.
 *
 * p is one-sided, in the direction the cost moved: the question a gate asks
 * is "slower?", and a verdict names a direction, so a false "regressed"
 * happens at rate alpha and a false "improved" at rate alpha (a two-sided
 * p would hold the gate's false alarms at alpha / 2 and give away power).
 *
 * Across tests, p-values are adjusted (Holm by default: the gate fails the
 * build if any test regresses, so the family-wise error rate is what must
 * stay at alpha; a suite of 50 unchanged tests then false-alarms no more
 * often than one). alpha defaults to 0.001: the gate runs on every push, and
 * 1 in 1000 is the rate at which a team starts doubting it.
 *
 * The verdict adds the minimum effect (--threshold, default 5%): a change
 * must be significant and may reach the threshold to count:
 *
 *   regressed/improved  significant, and the 95% interval reaches the
 *                       threshold (a true change of exactly the threshold
 *                       is caught as often as the noise allows, not half
 *                       the time)
 *   unchanged           not significant, |delta| < threshold and enough
 *                       samples that one sample is worth less than the
 *                       threshold; or significant, and the whole 95%
 *                       interval short of the threshold
 *   inconclusive        the rest: a threshold-sized change within the noise,
 *                       a real change whose interval reaches past the
 *                       threshold, or too few samples to claim anything
 *
 * "Unchanged" does not require the interval itself to be inside the
 * threshold when nothing was seen: with one run per side and a 3% run noise,
 * no interval is ever narrower than +-8%, and calling every test
 * "inconclusive" would teach users to ignore the column. The interval is
 * reported next to the verdict, so the resolution stays visible.
 *
 * Distributions are computed here (normal through erfc, Student's t through
 * the regularised incomplete beta function) and checked against scipy in
 * tests/unit/test_stats.c.
 */
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double tf_stats_norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

double tf_stats_norm_sf(double x)
{
	return 0.5 * erfc(x / M_SQRT2);
}

/* Acklam's rational approximation, polished by one Halley step against
 * erfc, which brings it to full double precision. */
double tf_stats_norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02,
				    -2.759285104469687e+02, 1.383577518672690e+02,
				    -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02,
				    -1.556989798598866e+02, 6.680131188771972e+01,
				    -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01,
				    -2.400758277161838e+00, -2.549732539343734e+00,
				    4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01,
				    2.445134137142996e+00, 3.754408661907416e+00 };
	const double plow = 0.02425;
	double q, r, x;

	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	if (p < plow) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p <= 1 - plow) {
		q = p - 0.5;
		r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	} else {
		q = sqrt(-2 * log1p(-p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	/* Halley refinement; the tail form keeps precision for small p */
	double e = x < 0 ? tf_stats_norm_cdf(x) - p : (1 - p) - tf_stats_norm_sf(x);
	double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

/* One step of the modified Lentz algorithm: fold the term `aa` into the
 * running c and d, and return the factor the fraction changes by. */
static double lentz_step(double aa, double *c, double *d)
{
	const double tiny = 1e-300;
	*d = 1 + aa * *d;
	if (fabs(*d) < tiny)
		*d = tiny;
	*c = 1 + aa / *c;
	if (fabs(*c) < tiny)
		*c = tiny;
	*d = 1 / *d;
	return *d * *c;
}

/* Continued fraction of the incomplete beta function. */
static double betacf(double a, double b, double x)
{
	const double tiny = 1e-300, eps = 1e-16;
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap, h;

	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 1000; m++) {
		int m2 = 2 * m;
		h *= lentz_step(m * (b - m) * x / ((qam + m2) * (a + m2)), &c, &d);
		double del = lentz_step(-(a + m) * (qab + m) * x / ((a + m2) * (qap + m2)), &c, &d);
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

double tf_stats_incbeta(double a, double b, double x)
{
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lbt = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	double bt = exp(lbt);
	if (x < (a + 1) / (a + b + 2))
		return bt * betacf(a, b, x) / a;
	return 1 - bt * betacf(b, a, 1 - x) / b;
}

double tf_stats_t_sf(double t, double df)
{
	if (isnan(t) || isnan(df) || df <= 0)
		return NAN;
	if (isinf(df) || df > 1e7)
		return tf_stats_norm_sf(t);
	if (isinf(t))
		return t > 0 ? 0 : 1;
	/* P(T > |t|) = I_{df/(df+t^2)}(df/2, 1/2) / 2, evaluated in the
	 * direct branch for large |t| so tiny p-values keep their digits */
	double x = df / (df + t * t);
	double tail = 0.5 * tf_stats_incbeta(df / 2, 0.5, x);
	return t >= 0 ? tail : 1 - tail;
}

double tf_stats_t_isf(double q, double df)
{
	double lo, hi;

	if (q <= 0)
		return INFINITY;
	if (q >= 1)
		return -INFINITY;
	if (q > 0.5)
		return -tf_stats_t_isf(1 - q, df);
	if (isinf(df) || df > 1e7)
		return -tf_stats_norm_quantile(q);
	/* the t quantile is at least the normal one; bracket, then bisect */
	lo = -tf_stats_norm_quantile(q);
	hi = lo + 1;
	while (tf_stats_t_sf(hi, df) > q && hi < 1e12)
		hi *= 2;
	for (int i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (tf_stats_t_sf(mid, df) > q)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

static void mean_var(const double *x, size_t n, double *mean, double *var)
{
	double s = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	*mean = s / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - *mean) * (x[i] - *mean);
	*var = n > 1 ? ss / (double)(n - 1) : 0;
}

void tf_stats_welch_moderated(tf_welch *out, const double *x, size_t n, const double *y,
			      size_t m, double prior_var, double d0)
{
	double mx, vx, my, vy;

	mean_var(x, n, &mx, &vx);
	mean_var(y, m, &my, &vy);
	double dx = d0 + (double)n - 1, dy = d0 + (double)m - 1;
	vx = (d0 * prior_var + ((double)n - 1) * vx) / dx;
	vy = (d0 * prior_var + ((double)m - 1) * vy) / dy;
	double ax = vx / (double)n, ay = vy / (double)m;
	out->diff = my - mx;
	out->se = sqrt(ax + ay);
	if (out->se == 0) {
		out->t = out->diff == 0 ? 0 : copysign(INFINITY, out->diff);
		out->df = dx + dy;
		out->p = out->diff == 0 ? 1 : 0;
		return;
	}
	out->t = out->diff / out->se;
	out->df = (ax + ay) * (ax + ay) / (ax * ax / dx + ay * ay / dy);
	out->p = TF_MIN(1.0, 2 * tf_stats_t_sf(fabs(out->t), out->df));
}

void tf_stats_welch(tf_welch *out, const double *x, size_t n, const double *y, size_t m,
		    double var_floor_x, double var_floor_y)
{
	double mx, vx, my, vy;

	mean_var(x, n, &mx, &vx);
	mean_var(y, m, &my, &vy);
	vx = TF_MAX(vx, var_floor_x);
	vy = TF_MAX(vy, var_floor_y);
	double ax = vx / (double)n, ay = vy / (double)m;
	out->diff = my - mx;
	out->se = sqrt(ax + ay);
	if (out->se == 0) {
		out->t = out->diff == 0 ? 0 : copysign(INFINITY, out->diff);
		out->df = (double)(n + m - 2);
		out->p = out->diff == 0 ? 1 : 0;
		return;
	}
	out->t = out->diff / out->se;
	out->df = (ax + ay) * (ax + ay) /
		  (ax * ax / (double)(n - 1) + ay * ay / (double)(m - 1));
	out->p = TF_MIN(1.0, 2 * tf_stats_t_sf(fabs(out->t), out->df));
}

typedef struct {
	double p;
	size_t i;
} ranked;

static int by_p(const void *a, const void *b)
{
	const ranked *x = a, *y = b;
	if (x->p != y->p)
		return x->p < y->p ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

void tf_stats_adjust(double *adj, const double *p, size_t n, tf_correction how)
{
	ranked *r;

	if (how == TF_CORRECTION_NONE || n == 0) {
		if (n)
			memmove(adj, p, n * sizeof(*p));
		return;
	}
	r = tf_xmalloc(n * sizeof(*r));
	for (size_t i = 0; i < n; i++)
		r[i] = (ranked){ p[i], i };
	qsort(r, n, sizeof(*r), by_p);
	if (how == TF_CORRECTION_HOLM) {
		/* step-down: the k-th smallest is multiplied by n - k, and an
		 * adjusted p-value never falls below an earlier one */
		double run = 0;
		for (size_t k = 0; k < n; k++) {
			double v = TF_MIN(1.0, (double)(n - k) * r[k].p);
			run = TF_MAX(run, v);
			adj[r[k].i] = run;
		}
	} else {
		/* Benjamini-Hochberg step-up: n/k times the k-th smallest,
		 * made monotone from the largest down */
		double run = 1;
		for (size_t k = n; k-- > 0;) {
			double v = TF_MIN(1.0, (double)n / (double)(k + 1) * r[k].p);
			run = TF_MIN(run, v);
			adj[r[k].i] = run;
		}
	}
	free(r);
}

double tf_stats_event_noise(const char *event)
{
	/* floors, raised per test by what the test's stored history shows
	 * (tf_compare_opts.history): CPU time of a CPU-bound test varied by
	 * 1-1.3% between runs on a 2-core machine with the other core busy */
	if (!event)
		return 0.03;
	if (strstr(event, "instructions"))
		return 0.005;
	if (strstr(event, "cycles"))
		return 0.01; /* CPU time without the clock frequency's wander */
	if (strstr(event, "wall"))
		return 0.03;
	/* the bytes and allocations a test asks for: the same from run to run
	 * of the same program (jansson's 213 tests, 3 runs: every one to the
	 * byte), but for what the environment moves (paths, the locale) */
	if (strstr(event, "alloc_") || strstr(event, "inuse_"))
		return 0.01;
	/* cpu-clock, task-clock, cpu, samples of unknown origin: CPU time */
	return 0.015;
}



/* Per-run log costs of a side; a run without samples counts as half a
 * sample, the usual continuity value for a zero count. */
static double *log_costs(const double *c, size_t n, double half)
{
	double *l = tf_xmalloc(n * sizeof(*l));
	for (size_t i = 0; i < n; i++)
		l[i] = log(c[i] > 0 ? c[i] : half);
	return l;
}

static double sum(const double *x, size_t n)
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += x[i];
	return s;
}

double tf_stats_side_squares(const double *c, size_t n, double *df)
{
	double m = 0, ss = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (c[i] > 0) {
			m += log(c[i]);
			k++;
		}
	if (k < 2)
		return 0;
	m /= (double)k;
	for (size_t i = 0; i < n; i++)
		if (c[i] > 0)
			ss += (log(c[i]) - m) * (log(c[i]) - m);
	*df += (double)(k - 1);
	return ss;
}

/*
 * The runs of a side come from one job and share its moment (the runner's
 * other tenants, its clock), so one run's noise c^2 has two parts: w^2
 * within a job and c^2 - w^2 between jobs. Comparing two jobs' mean costs,
 *     Var(log r) = 2 (c^2 - w^2) + w^2 (1/n_base + 1/n_head):
 * more runs of one job average only w^2 away. Runs alternated within one
 * job (--against) share the between part, which cancels; so do runs of
 * unknown origin (`compare` of files), taken as independent draws.
 *
 * w^2 is measured where a job has several runs: the stored baselines saved
 * from --repeat (history.c) and this comparison's own sides (a PR's
 * confirmation runs, a baseline of several runs). Those are pooled by
 * degrees of freedom and capped at c^2; with nothing measured, runs are
 * taken as independent (w^2 = c^2). The pooled spread is not moderated
 * towards independence: three runs that happen to agree then make the
 * comparison cautious, the side to err on (a prior worth 4 degrees of
 * freedom let test_sim_job_noise_calibrated's false regressions rise from
 * 7 to 8 of 3000 where 3 are expected). Returns the between part,
 * c^2 - w^2, and w^2 in *w2.
 */
static double between_jobs(const tf_stats_input *in, double c2, double *w2)
{
	*w2 = c2;
	if (c2 <= 0 || !in->separate_jobs || (in->nbase < 2 && in->nhead < 2))
		return 0;
	double df = in->within_df, ss = in->within2 * in->within_df;
	ss += tf_stats_side_squares(in->base, in->nbase, &df);
	ss += tf_stats_side_squares(in->head, in->nhead, &df);
	double w = df > 0 ? ss / df : c2;
	*w2 = w < c2 ? w : c2;
	return c2 - *w2;
}

/*
 * The sampling term of Var(log head/base) when the head truly costs
 * exp(u) times the base (u = 0: no change), one or two runs a side.
 *
 * Periodic sampling (testflame's run files) quantises a count to within a
 * sample or so: its variance is about 1 whatever the count, and never more
 * than a Poisson count's (a sum of phases, each a Bernoulli trial), so the
 * log of an expected count e varies by 1/(e max(e, 1)). That is a property
 * of what the count is expected to be, not of what it came out as: the
 * counts are taken at what the ratio exp(u) makes of them (the pooled rate
 * split by it), as a score test does and as Wilson's interval does for a
 * proportion. Taken at the observed counts instead (Wald's way), a base of
 * one sample put 1/1^2 = 1 into the variance and no head could ever tell
 * (go-cmp's TestOptions, 1 sample against 78 in two runs: p = 1e-4 and "too
 * few to tell", where a quantised count of 1 says the base cost under 2
 * periods). A quantised count's error is bounded, so the log's curvature
 * adds no tail: over 400,000 simulated unchanged pairs per count with 3%
 * run noise, one-sided at z = 3.09, the score form false-alarmed exactly as
 * often as Wald's (none below 30 samples, 2e-5 at 30, 6.4e-4 at 100, 9.1e-4
 * at 300).
 *
 * Randomised (Poisson) counts keep Wald's form: the log of a small Poisson
 * count has a heavy lower tail, and the score form false-alarmed at 6x
 * alpha for 5 samples a side (6.3e-3 at z = 3.09) where Wald's stayed
 * under it. A measured cost has the measurement's own variance.
 */
static double sampling_var(const tf_stats_input *in, double nb, double nh, double lr, double u)
{
	if (in->exact)
		return in->meas_var;
	if (!in->periodic)
		return 1 / nb + 1 / nh;
	/* the count ratio beyond the cost ratio (the runner's shift taken out
	 * of the head, a run without samples counted as one period) stays */
	double k = (nh / (double)in->nhead) / (nb / (double)in->nbase) / exp(lr);
	double rho = exp(u) * k;
	double lam = (nb + nh / rho) / (double)(in->nbase + in->nhead);
	double eb = lam * (double)in->nbase, eh = rho * lam * (double)in->nhead;
	return 1 / (eb * TF_MAX(eb, 1.0)) + 1 / (eh * TF_MAX(eh, 1.0));
}

/* Whether the ratio exp(u) lies outside the score interval of `lr`:
 * (lr - u)^2 > crit^2 Var(u), `rest` the variance beyond sampling. */
static bool score_rejects(const tf_stats_input *in, double nb, double nh, double lr, double u,
			  double rest, double crit)
{
	return (lr - u) * (lr - u) > crit * crit * (sampling_var(in, nb, nh, lr, u) + rest);
}

/* The end of the score interval on side `dir` (-1 low, +1 high). Var(u)
 * is bounded as u runs off either way, so the end exists: bracket it by
 * doubling the distance from lr, then bisect. */
static double score_bound(const tf_stats_input *in, double nb, double nh, double lr,
			  double rest, double crit, int dir)
{
	double lo = 0, hi = crit * sqrt(sampling_var(in, nb, nh, lr, lr) + rest) + 1e-9;
	for (int i = 0; i < 200 && !score_rejects(in, nb, nh, lr, lr + dir * hi, rest, crit); i++)
		hi *= 2;
	for (int i = 0; i < 100 && hi - lo > 1e-12 * (1 + hi); i++) {
		double mid = 0.5 * (lo + hi);
		if (score_rejects(in, nb, nh, lr, lr + dir * mid, rest, crit))
			hi = mid;
		else
			lo = mid;
	}
	return lr + dir * 0.5 * (lo + hi);
}

/*
 * Pairs of runs made at the same time (a duet's two sides at once): what
 * the moment did to a run (a neighbour, the CPU's clock) it did to its
 * pair too, and the ratio of the two cancels it. A t test on the pairs'
 * log ratios, n - 1 degrees of freedom, moderated (with a prior) as
 * Welch's spreads are. The floor is the sides' sampling (or measurement)
 * floor, as Welch's has. Under a CPU neighbour that
 * comes and goes, a test of 0.22 s alone and 5% slower on one side:
 * paired t 32 to 36 over 20 pairs at once, against Welch's 13 and a
 * paired t of 16 over the same number run one after the other, in 60%
 * of their time (bench/measures.sh TOGETHER=1).
 */
static void paired_test(tf_stats_result *out, const tf_stats_input *in, double nb, double nh)
{
	size_t n = in->nbase;
	double base = sum(in->base, n) / (double)n, head = sum(in->head, n) / (double)n;
	double pb = base * (double)n / nb, ph = head * (double)n / nh;
	double *lb = log_costs(in->base, n, pb / 2), *lh = log_costs(in->head, n, ph / 2);
	double m = 0, ss = 0;
	for (size_t i = 0; i < n; i++)
		m += lh[i] - lb[i];
	m /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (lh[i] - lb[i] - m) * (lh[i] - lb[i] - m);
	free(lb);
	free(lh);
	double floor = in->exact ? 2 * in->meas_var
				 : 1 / ((nb / (double)n) * (nb / (double)n)) +
					   1 / ((nh / (double)n) * (nh / (double)n));
	double var = TF_MAX(ss / (double)(n - 1), floor + 1e-12), df = (double)(n - 1);
	if (in->prior_df > 0) {
		/* the prior is a run's noise twice over: what a pair's ratio
		 * varies by when its two runs share nothing, more than when they
		 * share their moment, so it errs only toward "not proven", and
		 * many pairs that agree still narrow it. Three pairs alone (2
		 * degrees of freedom) left a test that doubled at p 0.004
		 * (meson's, t0931) */
		double pv = 2 * in->prior_noise * in->prior_noise + floor;
		var = (in->prior_df * pv + df * var) / (in->prior_df + df);
		df += in->prior_df;
	}
	out->method = TF_METHOD_PAIRED;
	out->delta = exp(m) - 1;
	out->df = df;
	out->se = sqrt(var / (double)n + TF_MAX(in->extra_var, 0.0));
	out->p = TF_MIN(1.0, tf_stats_t_sf(fabs(m) / out->se, out->df));
	double crit = tf_stats_t_isf(0.025, out->df);
	out->ci_low = exp(m - crit * out->se) - 1;
	out->ci_high = exp(m + crit * out->se) - 1;
}

void tf_stats_test(tf_stats_result *out, const tf_stats_input *in)
{
	const double z975 = 1.959963984540054;
	double base = sum(in->base, in->nbase) / (double)in->nbase;
	double head = sum(in->head, in->nhead) / (double)in->nhead;
	double nb = TF_MAX(in->base_samples, 1.0), nh = TF_MAX(in->head_samples, 1.0);
	double lr = log(head / base), crit;

	memset(out, 0, sizeof(*out));
	out->delta = head / base - 1;
	if (in->paired && in->nbase == in->nhead && in->nbase >= 3) {
		paired_test(out, in, nb, nh);
		return;
	}
	if (in->nbase >= 3 && in->nhead >= 3) {
		/* mean cost of one sample on each side, for the zero runs */
		double pb = base * (double)in->nbase / nb, ph = head * (double)in->nhead / nh;
		double *lb = log_costs(in->base, in->nbase, pb / 2);
		double *lh = log_costs(in->head, in->nhead, ph / 2);
		double fb = 1 / ((nb / (double)in->nbase) * (nb / (double)in->nbase)) + 1e-6;
		double fh = 1 / ((nh / (double)in->nhead) * (nh / (double)in->nhead)) + 1e-6;
		if (in->exact) /* a measured cost: the measurement's own floor */
			fb = fh = in->meas_var + 1e-6;
		tf_welch w;

		if (in->prior_df > 0) {
			/* the spread of a few runs is a rough estimate: moderate it
			 * with what is known of the event's noise, and add the
			 * sampling floor (one sample's worth) to the prior */
			double pv = in->prior_noise * in->prior_noise + TF_MAX(fb, fh);
			tf_stats_welch_moderated(&w, lb, in->nbase, lh, in->nhead, pv, in->prior_df);
		} else {
			tf_stats_welch(&w, lb, in->nbase, lh, in->nhead, fb, fh);
		}
		free(lb);
		free(lh);
		out->method = TF_METHOD_WELCH;
		out->p = w.p;
		out->df = w.df;
		out->se = w.se;
		/* two jobs: the job-to-job noise comes on top of the runs' own,
		 * with the history's degrees of freedom (the floor's: known) */
		double w2, b2 = between_jobs(in, in->noise * in->noise, &w2);
		if (b2 > 0) {
			double v = w.se * w.se, e = 2 * b2, bdf = in->noise_df > 0 ? in->noise_df : INFINITY;
			out->se = sqrt(v + e);
			out->df = (v + e) * (v + e) / (v * v / w.df + (isinf(bdf) ? 0 : e * e / bdf));
			out->p = TF_MIN(1.0, 2 * tf_stats_t_sf(fabs(lr) / out->se, out->df));
		}
		if (in->extra_var > 0) {
			/* known, as far as the degrees of freedom go */
			double v = out->se * out->se, e = in->extra_var;
			out->df = (v + e) * (v + e) / (v * v / out->df);
			out->se = sqrt(v + e);
			out->p = TF_MIN(1.0, 2 * tf_stats_t_sf(fabs(lr) / out->se, out->df));
		}
		crit = tf_stats_t_isf(0.025, out->df);
	} else {
		double c2 = in->noise * in->noise;
		double w2, b2 = between_jobs(in, c2, &w2);
		double runs = 1 / (double)in->nbase + 1 / (double)in->nhead;
		/* c^2 * runs when nothing separates the parts (b2 = 0) */
		double rest = 2 * b2 + w2 * runs + in->extra_var;
		double var = sampling_var(in, nb, nh, lr, 0) + rest;
		if (c2 > 0)
			runs = (2 * b2 + w2 * runs) / c2; /* the share of c^2 below */
		out->method = TF_METHOD_POISSON;
		out->se = sqrt(var);
		out->df = INFINITY;
		if (in->noise_excess2 > 0 && in->noise_df > 0) {
			/* Satterthwaite: only the estimated part of the variance
			 * is uncertain, the rest is known */
			double e = in->noise_excess2 * runs;
			out->df = var * var / (e * e / in->noise_df);
		}
		out->p = TF_MIN(1.0, 2 * tf_stats_t_sf(fabs(lr) / out->se, out->df));
		crit = isinf(out->df) ? z975 : tf_stats_t_isf(0.025, out->df);
		/* the interval: the ratios this test would not reject */
		out->ci_low = exp(score_bound(in, nb, nh, lr, rest, crit, -1)) - 1;
		out->ci_high = exp(score_bound(in, nb, nh, lr, rest, crit, 1)) - 1;
		out->p /= 2;
		return;
	}
	/* one-sided, in the direction the cost moved: a false "regressed"
	 * (the verdict that fails a build) then happens at the rate alpha
	 * says, not at half of it, and so does a false "improved" */
	out->p /= 2;
	/* the interval is centred on the reported ratio of mean costs */
	out->ci_low = exp(lr - crit * out->se) - 1;
	out->ci_high = exp(lr + crit * out->se) - 1;
}

tf_verdict tf_stats_verdict(const tf_stats_result *r, double p_adjusted, double threshold,
			    double alpha, double base_samples, double head_samples,
			    char *reason, size_t reason_len)
{
	bool sig = p_adjusted < alpha;
	double d = r->delta * 100, lo = r->ci_low * 100, hi = r->ci_high * 100;
	double thr = threshold * 100;
	/* below this many samples a single sample moves the cost by more than
	 * the threshold, so "unchanged" would be a guess */
	double min_samples = threshold > 0 ? ceil(1 / threshold - 1e-9) : 0;

	/* A significant change counts when it may reach the threshold: its
	 * interval does. Demanding the point estimate itself to reach it would
	 * miss half of all changes of exactly the threshold's size; a change
	 * surely smaller than the threshold is not one to fail a build on. */
	if (sig && r->delta > 0 && r->ci_high >= threshold) {
		snprintf(reason, reason_len, "slower by %.1f%% (95%% CI %+.1f%% to %+.1f%%, p=%.2g)",
			 d, lo, hi, p_adjusted);
		return TF_VERDICT_REGRESSED;
	}
	if (sig && r->delta < 0 && r->ci_low <= -threshold) {
		snprintf(reason, reason_len, "faster by %.1f%% (95%% CI %+.1f%% to %+.1f%%, p=%.2g)",
			 -d, lo, hi, p_adjusted);
		return TF_VERDICT_IMPROVED;
	}
	if (sig) {
		snprintf(reason, reason_len,
			 "a significant %+.1f%%, surely below the %g%% threshold (95%% CI %+.1f%% to %+.1f%%)",
			 d, thr, lo, hi);
		return TF_VERDICT_UNCHANGED;
	}
	/* undecided: say why in the reader's words, and what decides it. An
	 * interval wholly past the threshold is not "too few to tell": it
	 * is short of the gate's alpha, which corrects for every test */
	if ((r->ci_low >= threshold || r->ci_high <= -threshold) && isfinite(p_adjusted)) {
		snprintf(reason, reason_len, "%+.1f%% (95%% CI %+.1f%% to %+.1f%%), but p=%.2g "
			 "across the suite's tests, short of alpha %g; run with --freq 999 or "
			 "--repeat 3 to decide", d, lo, hi, p_adjusted, alpha);
		return TF_VERDICT_INCONCLUSIVE;
	}
	if (fabs(r->delta) >= threshold && TF_MIN(base_samples, head_samples) < 100) {
		snprintf(reason, reason_len, "%+.1f%% from %.0f samples against %.0f, too few to tell "
			 "from chance (95%% CI %+.1f%% to %+.1f%%); run with --freq 999 or --repeat 3 "
			 "to decide", d, head_samples, base_samples, lo, hi);
		return TF_VERDICT_INCONCLUSIVE;
	}
	if (fabs(r->delta) >= threshold) {
		snprintf(reason, reason_len, "%+.1f%%, but this test varies as much from run to run "
			 "(95%% CI %+.1f%% to %+.1f%%, p=%.2g); run with --repeat 3 to decide", d, lo,
			 hi, p_adjusted);
		return TF_VERDICT_INCONCLUSIVE;
	}
	if (base_samples < min_samples || head_samples < min_samples) {
		snprintf(reason, reason_len,
			 "%.0f samples against %.0f, too few to call a %g%% change unchanged (%.0f "
			 "needed); run with --freq 999 or --repeat 3 to decide",
			 head_samples, base_samples, thr, min_samples);
		return TF_VERDICT_INCONCLUSIVE;
	}
	snprintf(reason, reason_len, "no significant change (95%% CI %+.1f%% to %+.1f%%)", lo, hi);
	return TF_VERDICT_UNCHANGED;
}
