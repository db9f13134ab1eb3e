/*
 * test_stats.c - the statistics of the comparison: distribution functions
 * and Welch's test against values computed independently with scipy 1.10
 * (the snippets are next to the numbers), the multiple-comparison
 * corrections against hand-worked examples, the verdict rule, and seeded
 * simulations of Poisson sample counts: no false alarm when nothing changed,
 * calibrated p-values, and detection of a 10% slowdown given enough samples.
 */
#include "unit.h"
#include "compare/compare_int.h"

#include <math.h>

static void near(double got, double want, double rel)
{
	double tol = rel * fabs(want) + 1e-300;
	if (!(fabs(got - want) <= tol))
		fail_msg("got %.17g, expected %.17g (relative tolerance %g)", got, want, rel);
}

/* scipy.stats.norm.ppf(p) */
static void test_norm_quantile(void **state)
{
	(void)state;
	near(tf_stats_norm_quantile(1e-10), -6.361340902404056, 1e-12);
	near(tf_stats_norm_quantile(0.001), -3.090232306167813, 1e-12);
	near(tf_stats_norm_quantile(0.025), -1.9599639845400545, 1e-12);
	near(tf_stats_norm_quantile(0.3), -0.5244005127080409, 1e-12);
	assert_true(fabs(tf_stats_norm_quantile(0.5)) < 1e-15);
	near(tf_stats_norm_quantile(0.975), 1.959963984540054, 1e-12);
	near(tf_stats_norm_quantile(0.999999), 4.753424308817087, 1e-9);
	near(tf_stats_norm_sf(tf_stats_norm_quantile(0.975)), 0.025, 1e-12);
}

/* scipy.special.betainc(a, b, x) */
static void test_incbeta(void **state)
{
	(void)state;
	near(tf_stats_incbeta(0.5, 0.5, 0.3), 0.3690101195655454, 1e-12);
	near(tf_stats_incbeta(2, 3, 0.4), 0.5247999999999999, 1e-12);
	near(tf_stats_incbeta(10, 0.5, 0.9), 0.15164090963470997, 1e-12);
	near(tf_stats_incbeta(0.5, 50, 0.01), 0.6826956021258024, 1e-12);
	near(tf_stats_incbeta(100, 100, 0.55), 0.9216120672877778, 1e-10);
	near(tf_stats_incbeta(4, 0.5, 0.02), 4.410443847260075e-08, 1e-10);
	assert_true(tf_stats_incbeta(2, 2, 0) == 0);
	assert_true(tf_stats_incbeta(2, 2, 1) == 1);
}

/* scipy.stats.t.sf(t, df) and t.isf(q, df) */
static void test_student_t(void **state)
{
	(void)state;
	near(tf_stats_t_sf(2.0, 5), 0.05096973941492914, 1e-11);
	near(tf_stats_t_sf(3.5, 2.5), 0.026172773480160158, 1e-11);
	near(tf_stats_t_sf(10, 3), 0.0010641995292070747, 1e-11);
	near(tf_stats_t_sf(0.5, 30), 0.31036150244256366, 1e-11);
	near(tf_stats_t_sf(-1.2, 7), 0.8654140315863967, 1e-11);
	near(tf_stats_t_sf(50, 10), 1.2371551646513438e-13, 1e-9);
	near(tf_stats_t_sf(8, 4.2), 0.0005380586837255441, 1e-10);
	near(tf_stats_t_isf(0.025, 4), 2.7764451051977996, 1e-10);
	near(tf_stats_t_isf(0.0005, 8), 5.041305433388365, 1e-10);
	near(tf_stats_t_isf(0.025, 2.3), 3.8071632082582783, 1e-10);
	near(tf_stats_t_isf(0.1, 100), 1.2900747613398766, 1e-10);
	near(tf_stats_t_isf(0.025, 1e9), 1.9599639869123255, 1e-8);
	near(tf_stats_t_sf(1.959963984540054, INFINITY), 0.025, 1e-12);
}

/* r = scipy.stats.ttest_ind(y, x, equal_var=False) */
static void test_welch(void **state)
{
	(void)state;
	const double x[] = { 1.0, 1.2, 0.9, 1.1 }, y[] = { 1.5, 1.4, 1.7, 1.6, 1.5 };
	tf_welch w;

	tf_stats_welch(&w, x, 4, y, 5, 0, 0);
	near(w.t, 5.95674060377734, 1e-12);
	near(w.p, 0.0009301319154539877, 1e-9);
	near(w.df, 6.123786407766992, 1e-12);
	/* the floor takes over when the samples are tighter than it */
	tf_stats_welch(&w, x, 4, y, 5, 1.0, 1.0);
	near(w.se, sqrt(1.0 / 4 + 1.0 / 5), 1e-12);
	/* identical samples: no evidence at all */
	const double z[] = { 2, 2, 2 };
	tf_stats_welch(&w, z, 3, z, 3, 0, 0);
	assert_true(w.p == 1);
}

/*
 * Five runs per side, 10% slower: Welch on the log costs.
 *   lx, ly = np.log(base), np.log(head)
 *   ttest_ind(ly, lx, equal_var=False) -> t 8.22560097265728, p 3.762636525113542e-05
 *   df 7.929079232892587; ci = exp(log(mean(head)/mean(base)) -+ t.isf(.025, df) * se) - 1
 */
static void test_stats_welch_runs(void **state)
{
	(void)state;
	const double base[] = { 1.00e9, 1.03e9, 0.98e9, 1.01e9, 0.99e9 };
	const double head[] = { 1.10e9, 1.08e9, 1.13e9, 1.09e9, 1.11e9 };
	tf_stats_input in = { base, head, 5, 5, 5000, 5500, 0.03, false, 0, 0, 0, 0, 0, 0, false, false, 0, 0, false };
	tf_stats_result r;

	tf_stats_test(&r, &in);
	assert_int_equal(r.method, TF_METHOD_WELCH);
	near(r.p, 3.762636525113542e-05 / 2, 1e-8);
	near(r.df, 7.929079232892587, 1e-10);
	near(r.delta, 5.51e9 / 5.01e9 - 1, 1e-12);
	near(r.ci_low, 0.07080549829118388, 1e-8);
	near(r.ci_high, 0.12958041401004827, 1e-8);
}

/*
 * Five pairs of runs made at once, about 5% slower: a paired t test on the
 * pairs' log ratios (mpmath, 30 digits):
 *   d = log(head / base); t = mean(d) / (sd(d) / sqrt(5)) = 26.9961386
 *   p = t.sf(t, 4) = 5.596961661146e-06; ci = exp(mean -+ t.isf(.025, 4) * se) - 1
 * The same runs as two unpaired sides (Welch's) are far less sure: what
 * moved a pair moved both its runs.
 */
static void test_stats_paired(void **state)
{
	(void)state;
	const double base[] = { 1.00e9, 1.03e9, 0.98e9, 1.01e9, 0.99e9 };
	const double head[] = { 1.06e9, 1.08e9, 1.03e9, 1.065e9, 1.04e9 };
	tf_stats_input in;
	tf_stats_result r, w;

	memset(&in, 0, sizeof(in));
	in.base = base;
	in.head = head;
	in.nbase = in.nhead = 5;
	in.base_samples = 5000;
	in.head_samples = 5260;
	in.noise = 0.03;
	in.periodic = true;
	in.exact = true;
	in.paired = true;
	tf_stats_test(&r, &in);
	assert_int_equal(r.method, TF_METHOD_PAIRED);
	near(r.df, 4, 0);
	near(r.p, 5.596961661146e-06, 1e-12);
	near(r.delta, 0.0528972339278836, 1e-12);
	near(r.ci_low, 0.0473303178672645, 1e-9);
	near(r.ci_high, 0.0584937400365489, 1e-9);

	in.paired = false;
	tf_stats_test(&w, &in);
	assert_int_equal(w.method, TF_METHOD_WELCH);
	assert_true(w.p > 100 * r.p);

	/* sides of unequal runs are not pairs */
	in.paired = true;
	in.nhead = 4;
	tf_stats_test(&w, &in);
	assert_int_equal(w.method, TF_METHOD_WELCH);
}

/* z = log(1.25) / sqrt(1/2000 + 1/2500 + 2 * 0.03**2); p = norm.sf(z), one-sided
 * (the figures below are scipy's two-sided ones, halved) */
static void test_stats_poisson(void **state)
{
	(void)state;
	const double base[] = { 2000 }, head[] = { 2500 };
	tf_stats_input in = { base, head, 1, 1, 2000, 2500, 0.03, false, 0, 0, 0, 0, 0, 0, false, false, 0, 0, false };
	tf_stats_result r;
	char why[256];

	tf_stats_test(&r, &in);
	assert_int_equal(r.method, TF_METHOD_POISSON);
	near(r.p, 1.751666904913512e-05 / 2, 1e-9);
	near(r.delta, 0.25, 1e-15);
	assert_true(isinf(r.df));
	assert_int_equal(tf_stats_verdict(&r, r.p, 0.05, 0.001, 2000, 2500, why, sizeof(why)),
			 TF_VERDICT_REGRESSED);
	assert_non_null(strstr(why, "slower by 25.0%"));
	/* Without run noise it is the large-sample conditional binomial test:
	 * 2 * norm.sf(log(1.25) / sqrt(1/2000 + 1/2500)) = 1.0212952342390543e-13,
	 * exact binomtest(2500, 4500, 0.5) = 9.6e-14 */
	in.noise = 0;
	tf_stats_test(&r, &in);
	near(r.p, 1.0212952342390543e-13 / 2, 1e-6);
	/* two runs on a side is still the modelled test */
	const double b2[] = { 1000, 1000 };
	in.base = b2;
	in.nbase = 2;
	tf_stats_test(&r, &in);
	assert_int_equal(r.method, TF_METHOD_POISSON);
}

/* Holm and BH as R's p.adjust, worked by hand:
 * p = .01 .04 .03 .005 .5; sorted .005 .01 .03 .04 .5
 * Holm: 5*.005=.025, 4*.01=.04, 3*.03=.09, 2*.04=.08 -> .09, 1*.5=.5
 * BH:   5/1*.005=.025, 5/2*.01=.025, 5/3*.03=.05, 5/4*.04=.05, .5 */
static void test_adjust(void **state)
{
	(void)state;
	const double p[] = { 0.01, 0.04, 0.03, 0.005, 0.5 };
	const double holm[] = { 0.04, 0.09, 0.09, 0.025, 0.5 };
	const double bh[] = { 0.025, 0.05, 0.05, 0.025, 0.5 };
	double adj[5];

	tf_stats_adjust(adj, p, 5, TF_CORRECTION_HOLM);
	for (int i = 0; i < 5; i++)
		near(adj[i], holm[i], 1e-12);
	tf_stats_adjust(adj, p, 5, TF_CORRECTION_BH);
	for (int i = 0; i < 5; i++)
		near(adj[i], bh[i], 1e-12);
	tf_stats_adjust(adj, p, 5, TF_CORRECTION_NONE);
	for (int i = 0; i < 5; i++)
		near(adj[i], p[i], 0);
	/* capped at 1 */
	const double q[] = { 0.6, 0.7 };
	tf_stats_adjust(adj, q, 2, TF_CORRECTION_HOLM);
	near(adj[0], 1, 0);
	near(adj[1], 1, 0);
}

static tf_verdict verdict_of(double delta, double lo, double hi, double p, double nb, double nh)
{
	tf_stats_result r = { TF_METHOD_POISSON, delta, lo, hi, p, INFINITY, 0 };
	char why[256];
	return tf_stats_verdict(&r, p, 0.05, 0.001, nb, nh, why, sizeof(why));
}

static void test_verdict_rule(void **state)
{
	(void)state;
	/* significant and at least the threshold */
	assert_int_equal(verdict_of(0.10, 0.06, 0.14, 1e-6, 1e4, 1e4), TF_VERDICT_REGRESSED);
	assert_int_equal(verdict_of(-0.10, -0.14, -0.06, 1e-6, 1e4, 1e4), TF_VERDICT_IMPROVED);
	/* significant, below the threshold, tight interval */
	assert_int_equal(verdict_of(0.02, 0.01, 0.03, 1e-6, 1e6, 1e6), TF_VERDICT_UNCHANGED);
	/* significant, below the threshold, interval reaching past it: it may
	 * be a threshold-sized change, and a true one is caught this way */
	assert_int_equal(verdict_of(0.04, 0.01, 0.07, 1e-5, 1e4, 1e4), TF_VERDICT_REGRESSED);
	assert_int_equal(verdict_of(-0.04, -0.07, -0.01, 1e-5, 1e4, 1e4), TF_VERDICT_IMPROVED);
	/* significant, the whole interval short of the threshold */
	assert_int_equal(verdict_of(0.03, 0.015, 0.049, 1e-5, 1e4, 1e4), TF_VERDICT_UNCHANGED);
	/* a threshold-sized change within the noise */
	assert_int_equal(verdict_of(0.08, -0.05, 0.22, 0.2, 300, 300), TF_VERDICT_INCONCLUSIVE);
	/* nothing seen, enough samples */
	assert_int_equal(verdict_of(0.01, -0.08, 0.10, 0.8, 1000, 1000), TF_VERDICT_UNCHANGED);
	/* nothing seen, but one sample is worth more than the threshold */
	assert_int_equal(verdict_of(0.0, -0.6, 0.6, 1, 19, 19), TF_VERDICT_INCONCLUSIVE);
	assert_int_equal(verdict_of(0.0, -0.6, 0.6, 1, 20, 20), TF_VERDICT_UNCHANGED);
	/* exactly the threshold counts */
	assert_int_equal(verdict_of(0.05, 0.03, 0.07, 1e-9, 1e5, 1e5), TF_VERDICT_REGRESSED);
	/* significant before, not after the correction */
	assert_int_equal(verdict_of(0.30, 0.05, 0.6, 0.002, 100, 100), TF_VERDICT_INCONCLUSIVE);
	/* an interval wholly past the threshold, short of alpha: said so, not
	 * "too few to tell from chance" (go-cmp's TestOptions, +476% up) */
	tf_stats_result r = { TF_METHOD_POISSON, 40.7, 4.76, 300.9, 1e-4, INFINITY, 1 };
	char why[256];
	assert_int_equal(tf_stats_verdict(&r, 0.0013, 0.05, 0.001, 1, 78, why, sizeof(why)),
			 TF_VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(why, "but p=0.0013 across the suite's tests, short of alpha 0.001"));
	assert_null(strstr(why, "too few"));
}

static void test_event_noise(void **state)
{
	(void)state;
	assert_true(tf_stats_event_noise("instructions") < tf_stats_event_noise("cycles"));
	assert_true(tf_stats_event_noise("cycles") < tf_stats_event_noise("cpu-clock"));
	assert_true(tf_stats_event_noise("cpu-clock") < tf_stats_event_noise("wall"));
	near(tf_stats_event_noise(NULL), 0.03, 0);
}

/* ---- simulation ---- */

typedef struct {
	uint64_t s;
} rng;

static uint64_t next64(rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double uniform(rng *r)
{
	return ((double)(next64(r) >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(rng *r)
{
	return sqrt(-2 * log(uniform(r))) * cos(2 * M_PI * uniform(r));
}

/* Poisson variates: Knuth's product method for small means, Hormann's
 * PTRS transformed rejection (as numpy does) for large ones. */
static double poisson(rng *r, double lam)
{
	if (lam < 10) {
		double l = exp(-lam), p = 1;
		int k = 0;
		do {
			k++;
			p *= uniform(r);
		} while (p > l);
		return k - 1;
	}
	double slam = sqrt(lam), loglam = log(lam);
	double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
	double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
	for (;;) {
		double u = uniform(r) - 0.5, v = uniform(r), us = 0.5 - fabs(u);
		double k = floor((2 * a / us + b) * u + lam + 0.43);
		if (us >= 0.07 && v <= vr)
			return k;
		if (k < 0 || (us < 0.013 && v > us))
			continue;
		if (log(v) + log(invalpha) - log(a / (us * us) + b) <= -lam + k * loglam - lgamma(k + 1))
			return k;
	}
}

/* One simulated test: `runs` runs per side, `lam` expected samples per run,
 * run noise `cv` (lognormal), the head `ratio` times the base; each sample
 * costs one unit. Returns the verdict at the default settings. */
static tf_verdict simulate(rng *g, size_t runs, double lam, double cv, double ratio,
			   double model_noise, double *p_out)
{
	double b[16], h[16], nb = 0, nh = 0;
	tf_stats_result r;
	char why[256];

	for (size_t i = 0; i < runs; i++) {
		double sb = exp(cv * gauss(g) - cv * cv / 2), sh = exp(cv * gauss(g) - cv * cv / 2);
		b[i] = poisson(g, lam * sb);
		h[i] = poisson(g, lam * ratio * sh);
		nb += b[i];
		nh += h[i];
	}
	if (nb == 0 || nh == 0)
		return nb == 0 ? TF_VERDICT_NEW : TF_VERDICT_GONE;
	tf_stats_input in = { b, h, runs, runs, nb, nh, model_noise, false, 0, 0, 0, 0, 0, 0, false, false, 0, 0, false };
	tf_stats_test(&r, &in);
	if (p_out)
		*p_out = r.p;
	return tf_stats_verdict(&r, r.p, 0.05, 0.001, nb, nh, why, sizeof(why));
}

/*
 * The brief's simulation, literally: Poisson counts, nothing changed, the
 * default settings for a cpu-clock profile (3% modelled run noise, 5%
 * threshold, alpha 0.001). Tests of 1,000 samples and more (10 s at 99 Hz)
 * must never regress: the threshold and the modelled noise give them a
 * margin of 4.5 standard deviations and more.
 */
static void test_sim_no_false_alarm(void **state)
{
	(void)state;
	rng g = { 42 };
	const double sizes[] = { 1000, 3000, 10000, 100000 };
	for (size_t s = 0; s < TF_ARRAY_SIZE(sizes); s++) {
		int regressed = 0;
		for (int t = 0; t < 3000; t++)
			regressed += simulate(&g, 1, sizes[s], 0, 1.0, 0.03, NULL) == TF_VERDICT_REGRESSED;
		if (regressed)
			fail_msg("%d false regressions in 3000 trials of %.0f samples", regressed, sizes[s]);
	}
}

/*
 * Small tests are where the Poisson model alone decides, and there its
 * false-alarm rate is what alpha says: at most alpha regressions (p is
 * one-sided). 20,000 trials per size, 20 expected at most; the bound allows
 * the binomial spread around 0.001.
 */
static void test_sim_small_tests_calibrated(void **state)
{
	(void)state;
	rng g = { 7 };
	const double sizes[] = { 30, 100, 300 };
	for (size_t s = 0; s < TF_ARRAY_SIZE(sizes); s++) {
		int regressed = 0;
		for (int t = 0; t < 20000; t++)
			regressed += simulate(&g, 1, sizes[s], 0, 1.0, 0.03, NULL) == TF_VERDICT_REGRESSED;
		if (regressed > 35)
			fail_msg("%d false regressions in 20000 trials of %.0f samples", regressed, sizes[s]);
	}
}

/*
 * With run-to-run noise exactly as modelled (3% per run on top of Poisson
 * sampling) the p-value is calibrated: about 5% of no-change trials fall
 * below 0.05 on each side (p is one-sided: 10% in all), so the model
 * neither hides noise nor invents it.
 */
static void test_sim_p_calibrated(void **state)
{
	(void)state;
	rng g = { 1234 };
	const size_t runs[] = { 1, 5 };
	for (size_t k = 0; k < TF_ARRAY_SIZE(runs); k++) {
		int below = 0, n = 4000;
		for (int t = 0; t < n; t++) {
			double p = 1;
			simulate(&g, runs[k], 2000, 0.03, 1.0, 0.03, &p);
			below += p < 0.05;
		}
		double rate = (double)below / n / 2;
		/* Welch with a floored variance is a shade conservative */
		if (rate < (runs[k] == 1 ? 0.04 : 0.03) || rate > 0.06)
			fail_msg("%zu run(s): %.3f of p-values below 0.05 per side, expected about 0.05",
				 runs[k], rate);
	}
}

/*
 * Suites of 50 unchanged tests, noise as modelled, sizes from 50 to 50,000
 * samples: Holm keeps the chance that any test of a suite false-alarms at
 * alpha = 0.001 per suite. 2000 suites: expected 2; more than 9 would
 * happen with probability < 0.001 if the bound held.
 */
static void test_sim_suite_family_wise(void **state)
{
	(void)state;
	rng g = { 99 };
	int bad_suites = 0;
	for (int s = 0; s < 2000; s++) {
		double p[50], adj[50];
		tf_stats_result r[50];
		double nb[50], nh[50];
		for (int t = 0; t < 50; t++) {
			double lam = 50 * pow(1000, t / 49.0), cv = 0.03;
			double b = poisson(&g, lam * exp(cv * gauss(&g) - cv * cv / 2));
			double h = poisson(&g, lam * exp(cv * gauss(&g) - cv * cv / 2));
			b = b ? b : 1;
			h = h ? h : 1;
			tf_stats_input in = { &b, &h, 1, 1, b, h, 0.03, false, 0, 0, 0, 0, 0, 0, false, false, 0, 0, false };
			tf_stats_test(&r[t], &in);
			p[t] = r[t].p;
			nb[t] = b;
			nh[t] = h;
		}
		tf_stats_adjust(adj, p, 50, TF_CORRECTION_HOLM);
		bool any = false;
		for (int t = 0; t < 50; t++) {
			char why[256];
			any |= tf_stats_verdict(&r[t], adj[t], 0.05, 0.001, nb[t], nh[t], why,
						sizeof(why)) == TF_VERDICT_REGRESSED;
		}
		bad_suites += any;
	}
	if (bad_suites > 9)
		fail_msg("%d of 2000 unchanged suites had a regression", bad_suites);
}

/* Repeats: 5 runs per side with 3% run noise, nothing changed: the Welch
 * path must not false-alarm more than alpha either (5 expected at most). */
static void test_sim_runs_no_false_alarm(void **state)
{
	(void)state;
	rng g = { 5 };
	int regressed = 0;
	for (int t = 0; t < 5000; t++)
		regressed += simulate(&g, 5, 1000, 0.03, 1.0, 0.03, NULL) == TF_VERDICT_REGRESSED;
	if (regressed > 14)
		fail_msg("%d false regressions in 5000 trials of 5 runs", regressed);
}

/*
 * One run against a stored baseline, a test much noisier than the floor
 * (20% per run, periodic sampling so run noise is all there is), its noise
 * learned from the k stored runs the baseline is the last of, as
 * compare.c does: the floor doubled below 5 runs, raised to the history's
 * standard deviation, whose excess over the floor (all of it below 5
 * runs) has k - 1 degrees of freedom. Nothing changed: regressions must stay near alpha for every
 * k, where plugging the estimate in as if known false-alarmed in several
 * percent of the trials at k = 3.
 */
static void test_sim_history_noise_calibrated(void **state)
{
	(void)state;
	rng g = { 99 };
	const size_t ks[] = { 3, 5, 10 };
	for (size_t s = 0; s < TF_ARRAY_SIZE(ks); s++) {
		size_t k = ks[s];
		int regressed = 0;
		for (int t = 0; t < 20000; t++) {
			double logs[10], m = 0, ss = 0;
			for (size_t i = 0; i < k; i++)
				m += logs[i] = 0.2 * gauss(&g);
			m /= (double)k;
			for (size_t i = 0; i < k; i++)
				ss += (logs[i] - m) * (logs[i] - m);
			double sd = sqrt(ss / (double)(k - 1));
			double floor = k < 5 ? 0.03 : 0.015, noise = floor, ex = 0, df = 0;
			if (sd > floor) {
				ex = sd * sd - floor * floor;
				noise = sd;
			}
			if (k < 5)
				ex = noise * noise;
			if (ex > 0)
				df = (double)k - 1;
			double b = 1e4 * exp(logs[k - 1]), h = 1e4 * exp(0.2 * gauss(&g));
			tf_stats_input in = { &b, &h, 1, 1, b, h, noise, true, 0, 0, ex, df, 0, 0, false, false, 0, 0, false };
			tf_stats_result r;
			char why[256];
			tf_stats_test(&r, &in);
			regressed += tf_stats_verdict(&r, r.p, 0.05, 0.001, b, h, why, sizeof(why)) ==
				     TF_VERDICT_REGRESSED;
		}
		if (regressed > 35)
			fail_msg("%d false regressions in 20000 trials, noise from %zu runs", regressed, k);
	}
}

/*
 * Detection of a real 10% slowdown, given enough samples:
 *  - an instructions profile (0.5% run noise) of 20,000 samples per side;
 *  - a cpu-clock profile (3% run noise) with 10 runs of 10,000 samples per
 *    side (one run per side cannot: its modelled noise alone is +-8%);
 * and of 30% with one cpu-clock run of 10,000 samples.
 */
static void test_sim_detects_slowdown(void **state)
{
	(void)state;
	rng g = { 2024 };
	int hit = 0, n = 1000;

	for (int t = 0; t < n; t++)
		hit += simulate(&g, 1, 20000, 0.005, 1.10, 0.005, NULL) == TF_VERDICT_REGRESSED;
	if (hit < 0.95 * n)
		fail_msg("instructions, 10%%: detected %d of %d", hit, n);
	hit = 0;
	for (int t = 0; t < n; t++)
		hit += simulate(&g, 10, 10000, 0.03, 1.10, 0.03, NULL) == TF_VERDICT_REGRESSED;
	if (hit < 0.95 * n)
		fail_msg("cpu-clock x10 runs, 10%%: detected %d of %d", hit, n);
	hit = 0;
	for (int t = 0; t < n; t++)
		hit += simulate(&g, 1, 10000, 0.03, 1.30, 0.03, NULL) == TF_VERDICT_REGRESSED;
	if (hit < 0.95 * n)
		fail_msg("cpu-clock single run, 30%%: detected %d of %d", hit, n);
	/* and an improvement is never called a regression */
	for (int t = 0; t < n; t++)
		assert_int_not_equal(simulate(&g, 1, 20000, 0.005, 0.9, 0.005, NULL),
				     TF_VERDICT_REGRESSED);
}

/*
 * Tests of a few periods, sampled on counter overflow: a count is the
 * cost in periods rounded up or down by the sampling phase, and a run
 * without a sample is counted as one period (compare.c). One run a side,
 * no history yet (the floor of 1.5% doubled), a test that wanders by 30%
 * from run to run around 1.2 periods: its counts wobble between 0 and 3
 * (4%, 67%, 28%, 1%) and it is never called regressed beyond alpha; grown
 * 20 times, it is always caught (with the variance taken at the observed
 * counts: 70% of the time). go-cmp's TestOptions, 1 sample against 78 in
 * two runs (4 ms to 156 ms a run, 7% of runner's shift taken out, the
 * shift's variance 0.018), is regressed with Holm's worst factor for its
 * 12 tests, where it was "too few to tell from chance".
 */
static double quantised(rng *g, double periods)
{
	return floor(periods + uniform(g));
}

static tf_verdict tiny(rng *g, double ratio)
{
	double b = quantised(g, 1.2 * exp(0.3 * gauss(g)));
	double h = quantised(g, 1.2 * ratio * exp(0.3 * gauss(g)));
	double bc = b > 0 ? b : 1, hc = h > 0 ? h : 1;
	tf_stats_input in = { &bc, &hc, 1, 1, b, h, 0.03, true, 0, 0, 0, 0, 0, 0, false, false, 0, 0, false };
	tf_stats_result r;
	char why[256];

	if (b == 0 && h == 0)
		return TF_VERDICT_INCONCLUSIVE; /* compare.c's untestable() */
	tf_stats_test(&r, &in);
	return tf_stats_verdict(&r, r.p, 0.05, 0.001, b, h, why, sizeof(why));
}

static void test_sim_tiny_tests(void **state)
{
	(void)state;
	rng g = { 28 };
	int regressed = 0, caught = 0, n = 20000, seen[8] = { 0 };
	for (int t = 0; t < n; t++)
		seen[(int)TF_MIN(quantised(&g, 1.2 * exp(0.3 * gauss(&g))), 7)]++;
	/* the counts this test gives: 0 to 3 */
	assert_true(seen[0] > n / 50 && seen[1] > n / 5 && seen[2] > n / 5 && seen[3] > n / 200);
	for (int t = 0; t < n; t++)
		regressed += tiny(&g, 1) == TF_VERDICT_REGRESSED;
	for (int t = 0; t < n; t++)
		caught += tiny(&g, 20) == TF_VERDICT_REGRESSED;
	print_message("tiny tests: %d false regressions, 20x caught %d, of %d\n", regressed, caught, n);
	if (regressed > 35)
		fail_msg("%d false regressions in %d trials of a test of 0-3 samples", regressed, n);
	if (caught < n)
		fail_msg("a test of 0-3 samples grown 20x caught %d of %d times", caught, n);

	/* go-cmp's TestOptions as its report.json had it */
	const double base[] = { 4016064 }, head[] = { 156626496 * 0.93, 156626496 * 0.93 };
	tf_stats_input in = { base, head, 1, 2, 1, 78, 0.03, true, 0, 0, 0, 0, 0, 0, false, false, 0, 0.018, false };
	tf_stats_result r;
	char why[256];
	tf_stats_test(&r, &in);
	assert_true(r.p * 12 < 0.001);
	assert_int_equal(tf_stats_verdict(&r, r.p * 12, 0.249, 0.001, 1, 78, why, sizeof(why)),
			 TF_VERDICT_REGRESSED);
	/* the interval: the ratios the same test would not reject, from
	 * +1270% (Wald's, around the observed counts, from +476%) */
	assert_true(r.ci_low > 10);
	assert_true(r.ci_low < r.delta && r.delta < r.ci_high);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_norm_quantile),
		cmocka_unit_test(test_incbeta),
		cmocka_unit_test(test_student_t),
		cmocka_unit_test(test_welch),
		cmocka_unit_test(test_stats_welch_runs),
		cmocka_unit_test(test_stats_paired),
		cmocka_unit_test(test_stats_poisson),
		cmocka_unit_test(test_adjust),
		cmocka_unit_test(test_verdict_rule),
		cmocka_unit_test(test_event_noise),
		cmocka_unit_test(test_sim_no_false_alarm),
		cmocka_unit_test(test_sim_small_tests_calibrated),
		cmocka_unit_test(test_sim_p_calibrated),
		cmocka_unit_test(test_sim_suite_family_wise),
		cmocka_unit_test(test_sim_runs_no_false_alarm),
		cmocka_unit_test(test_sim_history_noise_calibrated),
		cmocka_unit_test(test_sim_detects_slowdown),
		cmocka_unit_test(test_sim_tiny_tests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
