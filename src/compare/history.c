/*
 * history.c - how noisy each test is, learned from the suite's own past.
 *
 * One run against one stored baseline cannot measure run-to-run noise,
 * and tests differ wildly in it: on a shared runner a memory-bound test
 * wanders by tens of percent while a CPU-bound one stays within one. The
 * stored baselines of earlier commits are repeated runs of the same suite;
 * the spread of each test's cost across them is its noise, with real
 * changes between those commits only making the estimate more cautious.
 *
 * A test's cost is the one the gate judges it by: exact where the gate's
 * is (its processes' CPU, its runner's duration), else its samples.
 *
 * The spread is the sample standard deviation of the log costs, not a
 * robust one: over 3 to 10 runs the median absolute deviation is biased
 * low (over 3 runs it is the smaller of two deviations), and a noise
 * underestimated by half makes the gate cry wolf on every noisy test. The
 * estimate's own uncertainty (k - 1 degrees of freedom) is carried to the
 * test (compare.c, stats.c). A run far off all the others (one or two that
 * met a neighbour on the runner) is set aside first, by a test that a
 * normal noise fails at most twice in 1000 histories (set_aside()): kept,
 * its square alone made a 5% test's spread 19%.
 *
 * A run whose machine was slower for all of it moved every test alike;
 * a comparison with a control group takes such a move out (shift.c), so
 * the noise it judges by must not count it either. Each test's spread is
 * also learned with each run's shift taken out: the median, over the
 * run's other tests (5 or more, as the control group needs), of their
 * log cost less their own mean. Leaving the test out of its own shift
 * keeps the estimate from shrinking what the test alone did. Both spreads
 * overstate the test's own noise, the plain one by the runs' shifts, the
 * other by the noise of estimating them (a steady test among noisy ones),
 * so the comparison keeps the smaller (compare.c). Ten baselines of the
 * example suite at a load of 6, two runs 16% and 20% slower throughout:
 * test_sort's plain spread 9.9%, with the shifts out 2.4%; test_matrix's
 * 19.3% and 13.5%; test_threads' 2.9% and 8.6%.
 *
 * A baseline saved from `run --repeat N` holds N runs of one commit;
 * each counts as a run of its own here (their mean would understate one
 * run's noise by a factor of sqrt(N)).
 *
 * Runs of one job are not independent draws, though: they share the
 * machine and its moment (another tenant, the clock's state), and on a
 * shared runner that is often most of the noise. With such baselines the
 * noise is split into its two parts, as a one-way random-effects model:
 * within a job (the pooled spread of runs around their job's mean) and
 * between jobs (what the spread of the job means shows beyond that). One
 * run's noise is their sum; the within part goes to the comparison separately (stats.c), because extra
 * runs of one job only average the within part away.
 *
 * The same history read as a series (src/history/) needs each run's cost
 * of each test measured as the gate measures it: tf_compare_run_costs().
 */
#include "testflame/compare.h"
#include "testflame/attribute.h"
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The spread of k log costs, group[i] the job of logs[i] (groups are
 * contiguous): one run's noise, and the part within a job when some job
 * has several runs. `quant` is what sampling alone puts into a run's log
 * cost, on average over the k runs (the comparison counts it apart, by the
 * test's samples: stats.c): taken out of both, by the method of moments,
 * never below 0. Left in, a test of 1 or 2 samples a run measured its own
 * rounding as a noise of 40% (logs of 1, 1, 2) and was judged by it twice,
 * with the heavy tails of 2 degrees of freedom. The degrees of freedom stay k - 1: counted by jobs
 * (Satterthwaite's), two baselines of three runs would have about one,
 * and no slowdown, however gross, could fail a build until a suite had
 * stored a dozen baselines. Optimistic where jobs differ much more than
 * their runs; the unit test test_sim_job_noise_calibrated measures what
 * that costs (at alpha = 0.001, about 0.2% false regressions with
 * 5% between jobs and 1% within, ten baselines of three runs). */
static void spread(tf_test_noise *tn, const double *logs, const size_t *group, size_t k,
		   double quant)
{
	double m = 0, ss = 0;
	for (size_t i = 0; i < k; i++)
		m += logs[i];
	m /= (double)k;
	for (size_t i = 0; i < k; i++)
		ss += (logs[i] - m) * (logs[i] - m);
	tn->noise_pct = 100 * sqrt(TF_MAX(ss / (double)(k - 1) - quant, 0.0));
	tn->df = (double)k - 1;

	/* per job: mean; within: pooled squares around the job means */
	double ssw = 0, dfw = 0, sum_means = 0, sum_means2 = 0, inv_k = 0;
	size_t jobs = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		double gm = 0;
		while (j < k && group[j] == group[i])
			gm += logs[j++];
		gm /= (double)(j - i);
		for (size_t x = i; x < j; x++)
			ssw += (logs[x] - gm) * (logs[x] - gm);
		dfw += (double)(j - i - 1);
		sum_means += gm;
		sum_means2 += gm * gm;
		inv_k += 1 / (double)(j - i);
		jobs++;
		i = j;
	}
	if (dfw <= 0)
		return; /* single runs: the plain spread above is all there is */
	double w2 = ssw / dfw;
	tn->within_pct = 100 * sqrt(TF_MAX(w2 - quant, 0.0));
	tn->within_df = dfw;
	if (jobs < 2) {
		/* one job: nothing says how jobs differ; its within spread it is */
		tn->noise_pct = tn->within_pct;
		return;
	}
	double g = (double)jobs;
	double vm = (sum_means2 - sum_means * sum_means / g) / (g - 1); /* of job means */
	inv_k /= g;
	double between = vm - w2 * inv_k; /* the job-to-job variance */
	if (between <= 0) {
		tn->noise_pct = tn->within_pct;
		return;
	}
	/* one run: between + within = vm + w2 (1 - mean 1/k) */
	tn->noise_pct = 100 * sqrt(TF_MAX(vm + w2 * (1 - inv_k) - quant, 0.0));
}

/* How rarely a run of an undisturbed history is set aside (below). */
#define ASIDE_P 0.001

/* The mean and variance of the n values whose sum and sum of squares
 * are s and ss, but for the r values of x at skip[]: each try of
 * set_aside() in constant time (x centred, so the difference loses no
 * digits). */
static double rest_of(const double *x, size_t n, double s, double ss, const size_t *skip, size_t r,
		      double *var)
{
	for (size_t i = 0; i < r; i++) {
		s -= x[skip[i]];
		ss -= x[skip[i]] * x[skip[i]];
	}
	double c = (double)(n - r), m = s / c;
	*var = TF_MAX(ss - c * m * m, 0.0) / (c - 1);
	return m;
}

/*
 * Runs far off all the others, set aside as disturbed: a neighbour on the
 * runner for a moment slows a test by tens of percent in one run, and its
 * square dominates a spread over ten. Kept, one such baseline made the
 * gate learn a 20% noise for a test that wanders by 5%, and a 4.5x
 * slowdown of it went unproven for every change based on it for the next
 * ten commits. The head meeting such a neighbour is what a confirmation
 * rerun is for (run --confirm), not what every comparison must allow.
 *
 * The test is exact for a normal noise, so an undisturbed history loses a
 * run rarely: r runs (two from 10 runs, else one) are set aside when each
 * is off the mean of the n - r others by more than the others' spread
 * allows, as the prediction of one more draw (Student's t with n - r - 1
 * degrees of freedom), at p < 0.001 over the C(n, r) ways to choose them.
 * Pairs are tried first (one of two disturbed runs hides the other in the
 * spread), then single runs: each try sets aside runs of an undisturbed
 * history at most once in 1000, so a spread shrunk by chance that way adds
 * at most 0.002 to the gate's false alarms. Simulated (ten runs of a 5%
 * noise, one head run, alpha = 0.001, 300,000 histories), unchanged heads
 * were called regressed at 0.106% against 0.094% with every run kept, and
 * a doubling after one run 80% slower was caught 98% of the time against
 * never; after two, 80% and 60% slower, 41% (the pair's Bonferroni factor
 * of 45 is dear). A cut at k robust SDs (the MAD's) of the median was
 * measured too: over 10 runs that scale is rough, and it shrank undisturbed
 * spreads often enough to raise the false alarms to 0.47% at k = 3.5 and
 * 0.17% at k = 6, for about as many doublings caught. Never more than a
 * fifth of the runs is set aside: a test disturbed that often is that
 * noisy. A run within 1% of the others stays (the event's floor covers
 * that much), and a job of several runs (a baseline saved from --repeat)
 * is judged, and set aside, by its mean: the counts above are of jobs. `quant` (sampling's share of a run's variance) is the least
 * the others' spread is taken to be: a test of a sample or two a run has
 * identical counts in most of its runs.
 *
 * Marks the runs set aside in `aside`; returns how many, with the signed
 * move (a fraction) of the farthest job from the mean of the others in
 * *moved.
 */
static size_t set_aside(bool *aside, double *moved, const double *logs, const size_t *group,
			size_t k, double quant)
{
	double *jm = tf_xcalloc(k + 1, sizeof(double));
	size_t *start = tf_xcalloc(k + 2, sizeof(size_t)), n = 0, count = 0;

	memset(aside, 0, k * sizeof(*aside));
	*moved = 0;
	for (size_t i = 0; i < k;) {
		size_t j = i;
		while (j < k && group[j] == group[i])
			jm[n] += logs[j++];
		jm[n] /= (double)(j - i);
		start[n++] = i;
		i = j;
	}
	start[n] = k;
	double mean = 0, s1 = 0, s2 = 0;
	for (size_t i = 0; i < n; i++)
		mean += jm[i] / (double)n;
	for (size_t i = 0; i < n; i++) {
		jm[i] -= mean;
		s1 += jm[i];
		s2 += jm[i] * jm[i];
	}
	size_t most = TF_MIN(n / 5, (size_t)2);
	for (size_t r = most; r >= 1 && !count; r--) {
		double best = 1, tries = r == 1 ? (double)n : (double)n * (double)(n - 1) / 2;
		size_t pick[2] = { 0, 0 }, s[2];
		for (s[0] = 0; s[0] < n; s[0]++)
			for (s[1] = r == 1 ? s[0] : s[0] + 1; s[1] < (r == 1 ? s[0] + 1 : n); s[1]++) {
				double var, m = rest_of(jm, n, s1, s2, s, r, &var);
				double d = TF_MIN(fabs(jm[s[0]] - m), fabs(jm[s[1]] - m));
				if (d < log1p(0.01))
					continue;
				double others = (double)(n - r);
				var = TF_MAX(var, quant) * (1 + 1 / others);
				double p = var > 0 ? 2 * tf_stats_t_sf(d / sqrt(var), others - 1) : 0;
				if (p < best) {
					best = p;
					pick[0] = s[0];
					pick[1] = s[1];
				}
			}
		if (best * tries >= ASIDE_P)
			continue;
		double var, m = rest_of(jm, n, s1, s2, pick, r, &var);
		for (size_t x = 0; x < r; x++) {
			for (size_t i = start[pick[x]]; i < start[pick[x] + 1]; i++, count++)
				aside[i] = true;
			if (fabs(jm[pick[x]] - m) > fabs(*moved))
				*moved = jm[pick[x]] - m;
		}
		*moved = expm1(*moved);
	}
	free(start);
	free(jm);
	return count;
}

/* The spread of the runs of logs[] (per run: group[], the sampling share
 * q[]) that are not set aside, into tn; how many were, and the farthest
 * one's move in percent, into *aside and *aside_pct. */
static void learn(tf_test_noise *tn, size_t *aside, double *aside_pct, const double *logs,
		  const size_t *group, const double *q, size_t k)
{
	double quant = 0, moved;
	for (size_t i = 0; i < k; i++)
		quant += q[i];
	bool *out = tf_xcalloc(k + 1, sizeof(bool));
	*aside = set_aside(out, &moved, logs, group, k, quant / (double)k);
	*aside_pct = 100 * moved;
	double *kl = tf_xcalloc(k + 1, sizeof(double));
	size_t *kg = tf_xcalloc(k + 1, sizeof(size_t)), n = 0;
	quant = 0;
	for (size_t i = 0; i < k; i++)
		if (!out[i]) {
			kl[n] = logs[i];
			kg[n++] = group[i];
			quant += q[i];
		}
	spread(tn, kl, kg, n, quant / (double)n);
	free(kg);
	free(kl);
	free(out);
}

typedef TF_VEC(char *) tf_strlist_sorted;

typedef struct {
	tf_strtab names;
	TF_VEC(double) cost;  /* test id * nruns + run */
	TF_VEC(double) count; /* the same runs' samples, on counter overflow */
} table;

typedef struct {
	double dev;
	size_t id;
} dev_of;

static int by_dev(const void *a, const void *b)
{
	double x = ((const dev_of *)a)->dev, y = ((const dev_of *)b)->dev;
	return x < y ? -1 : x > y;
}

/* Each run's shift as each test sees it, into shift[id * nruns + run]:
 * the median, over the run's other tests seen in 3 runs or more, of their
 * log cost less their mean log cost; NAN where fewer than 5 others ran.
 * Removing one of n sorted values moves the median by at most one place,
 * so each test's is read off the run's sorted moves. */
static void run_shifts(double *shift, const table *t, size_t nruns)
{
	size_t ntests = t->names.strs.n;
	double *mean = tf_xcalloc(ntests + 1, sizeof(double));
	size_t *seen = tf_xcalloc(ntests + 1, sizeof(size_t));
	dev_of *d = tf_xcalloc(ntests + 1, sizeof(dev_of));

	for (size_t i = 0; i < ntests * nruns; i++)
		shift[i] = NAN;
	for (size_t id = 1; id < ntests; id++)
		for (size_t r = 0; r < nruns; r++) {
			size_t at = id * nruns + r;
			if (at < t->cost.n && t->cost.v[at] > 0) {
				mean[id] += log(t->cost.v[at]);
				seen[id]++;
			}
		}
	for (size_t r = 0; r < nruns; r++) {
		size_t n = 0;
		for (size_t id = 1; id < ntests; id++) {
			size_t at = id * nruns + r;
			if (seen[id] >= 3 && at < t->cost.n && t->cost.v[at] > 0)
				d[n++] = (dev_of){ log(t->cost.v[at]) - mean[id] / (double)seen[id], id };
		}
		if (n < 6) /* each test's shift is of the others */
			continue;
		qsort(d, n, sizeof(*d), by_dev);
		size_t m = n - 1;
		for (size_t i = 0; i < n; i++) {
#define OTHER(j) d[(j) < i ? (j) : (j) + 1].dev
			double med = m % 2 ? OTHER(m / 2) : (OTHER(m / 2 - 1) + OTHER(m / 2)) / 2;
#undef OTHER
			shift[d[i].id * nruns + r] = med;
		}
	}
	free(d);
	free(seen);
	free(mean);
}

/* The samples/count column of a run that samples on counter overflow
 * (testflame's own, not the allocation sampler's random distances), or
 * -1: its counts are what it rounds a test's cost to (stats.c). */
static int overflow_counts(const tf_profile *p, size_t col)
{
	const char *type = tf_profile_str(p, p->sample_types.v[col].type);
	if (!tf_profile_meta(p, "sampler") || !strncmp(type, "alloc_", 6) || !strncmp(type, "inuse_", 6))
		return -1;
	for (size_t i = 0; i < p->sample_types.n; i++)
		if (!strcmp(tf_profile_str(p, p->sample_types.v[i].type), "samples") &&
		    !strcmp(tf_profile_str(p, p->sample_types.v[i].unit), "count"))
			return (int)i;
	return -1;
}

/* A cell of the table, grown to hold test `id` of `total` runs. */
static size_t cell(table *t, uint32_t id, size_t total, size_t run)
{
	size_t need = ((size_t)id + 1) * total;
	while (t->cost.n < need) {
		tf_vec_push(&t->cost, 0.0);
		tf_vec_push(&t->count, 0.0);
	}
	return (size_t)id * total + run;
}

/* The runs of `p` (its repeats apart) from `first` on, each test's cost
 * put in as the gate measures it where that is exact: the CPU its
 * processes used, its runner's duration. Its spread is that measure's: a
 * test of one or two samples a run took its samples' spread for its own
 * (1 to 2%, as good as nothing after their rounding is taken out), while
 * the exact CPU of a 5 ms ctest test moved 20 to 30% between runs on a
 * loaded machine. Sampled tests keep their samples and counts. */
static void exact_costs(table *t, const tf_profile *p, size_t first, size_t total,
			const char *value)
{
	tf_profile **sub = NULL;
	size_t nsub = 0;

	if (tf_profile_split_runs(&sub, &nsub, p)) {
		tf_error_clear();
		return;
	}
	for (size_t x = 0; x < nsub; x++) {
		tf_run_cost *rc = NULL;
		size_t nrc = 0;
		if (tf_compare_run_costs(&rc, &nrc, NULL, sub[x], value)) {
			tf_error_clear();
			continue;
		}
		for (size_t i = 0; i < nrc; i++) {
			if (rc[i].measure == TF_MEASURE_SAMPLES || !(rc[i].cost > 0))
				continue;
			uint32_t id = tf_strtab_intern(&t->names, rc[i].test, strlen(rc[i].test));
			size_t at = cell(t, id, total, first + x);
			t->cost.v[at] = rc[i].cost;
			t->count.v[at] = 0; /* exact: nothing rounded */
		}
		tf_run_costs_free(rc, nrc);
	}
	for (size_t x = 0; x < nsub; x++)
		tf_profile_free(sub[x]);
	free(sub);
}

int tf_compare_history_noise(tf_test_noise **out, size_t *n, const tf_profile *const *runs,
			     size_t nruns, const char *value)
{
	table t;
	TF_VEC(tf_test_noise) res = { 0 };
	size_t total = 0, first = 0;

	/* a run file saved from --repeat holds several runs: each is one draw */
	for (size_t r = 0; r < nruns; r++)
		total += tf_profile_count_runs(runs[r]);
	double *logs = tf_xcalloc(total + 1, sizeof(double)), *moved = tf_xcalloc(total + 1, sizeof(double));
	size_t *job = tf_xcalloc(total + 1, sizeof(size_t)), *group = tf_xcalloc(total + 1, sizeof(size_t));
	double *quant = tf_xcalloc(total + 1, sizeof(double));

	*out = NULL;
	*n = 0;
	memset(&t, 0, sizeof(t));
	tf_strtab_init(&t.names);
	for (size_t r = 0; r < nruns; first += tf_profile_count_runs(runs[r]), r++) {
		const tf_profile *p = runs[r];
		size_t col, nsub = tf_profile_count_runs(p);
		for (size_t x = 0; x < nsub; x++)
			job[first + x] = r;
		if (value) {
			if (tf_profile_value_index(&col, p, value))
				continue;
		} else {
			int d = tf_profile_default_value(p);
			if (d < 0)
				continue;
			col = (size_t)d;
		}
		int cc = overflow_counts(p, col);
		for (size_t i = 0; i < p->samples.n; i++) {
			const char *test = tf_sample_label_str(p, &p->samples.v[i], "test");
			if (!test)
				continue;
			size_t sub = 0;
			if (nsub > 1) {
				const char *rl = tf_sample_label_str(p, &p->samples.v[i], TF_RUN_LABEL);
				unsigned long v = rl ? strtoul(rl, NULL, 10) : 0;
				if (v < 1 || v > nsub)
					continue;
				sub = v - 1;
			}
			uint32_t id = tf_strtab_intern(&t.names, test, strlen(test));
			size_t at = cell(&t, id, total, first + sub);
			t.cost.v[at] += (double)tf_sample_values(p, i)[col];
			if (cc >= 0)
				t.count.v[at] += (double)tf_sample_values(p, i)[cc];
		}
		exact_costs(&t, p, first, total, value);
	}
	nruns = total;
	double *shift = tf_xcalloc(t.names.strs.n * nruns + 1, sizeof(double));
	run_shifts(shift, &t, nruns);
	for (size_t id = 1; id < t.names.strs.n; id++) {
		size_t k = 0;
		bool shifted = true;
		for (size_t r = 0; r < nruns; r++) {
			size_t at = id * nruns + r;
			double c = at < t.cost.n ? t.cost.v[at] : 0;
			if (c > 0) {
				logs[k] = log(c);
				moved[k] = logs[k] - shift[at];
				shifted = shifted && !isnan(shift[at]);
				/* within a sample: Var(log N) = 1/N^2 (stats.c) */
				quant[k] = t.count.v[at] > 0 ? 1 / (t.count.v[at] * t.count.v[at]) : 0;
				group[k++] = job[r];
			}
		}
		if (k < 3)
			continue;
		tf_test_noise tn = { .test = tf_xstrdup(t.names.strs.v[id]), .runs = k };
		tf_test_noise sh = { 0 };
		learn(&tn, &tn.set_aside, &tn.aside_pct, logs, group, quant, k);
		if (shifted)
			learn(&sh, &sh.set_aside, &sh.aside_pct, moved, group, quant, k);
		else
			sh = tn;
		tn.shifted = shifted;
		tn.shifted_set_aside = sh.set_aside;
		tn.shifted_aside_pct = sh.aside_pct;
		tn.shifted_pct = sh.noise_pct;
		tn.shifted_df = sh.df;
		tn.shifted_within_pct = sh.within_pct;
		tn.shifted_within_df = sh.within_df;
		tf_vec_push(&res, tn);
	}
	free(shift);
	free(quant);
	free(moved);
	free(group);
	free(job);
	free(logs);
	tf_strtab_free(&t.names);
	tf_vec_free(&t.cost);
	tf_vec_free(&t.count);
	*out = res.v;
	*n = res.n;
	return 0;
}

void tf_test_noise_free(tf_test_noise *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].test);
	free(v);
}

/* The tests the run's metadata says failed, sorted (strcmp). */
static int by_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void failed_tests(tf_strlist_sorted *out, const tf_profile *p)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]);
		tf_test_meta m;
		if (strncmp(c, "testflame.test.", 15) != 0 || tf_test_meta_parse(&m, c) != 0) {
			tf_error_clear();
			continue;
		}
		if (m.status == TF_TEST_FAILED)
			tf_vec_push(out, tf_xstrdup(m.name));
		tf_test_meta_clear(&m);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_str);
}

int tf_compare_run_costs(tf_run_cost **out, size_t *n, char **unit, const tf_profile *run,
			 const char *value)
{
	tf_compare_opts o;
	tf_comparison *c = NULL;
	const tf_profile *one[1] = { run };
	tf_compare_side side = { one, NULL, 1 };
	tf_strlist_sorted failed;
	TF_VEC(tf_run_cost) res = { 0 };

	*out = NULL;
	*n = 0;
	if (unit)
		*unit = NULL;
	tf_compare_opts_init(&o);
	o.value = value;
	o.top_functions = 0;
	o.keep_shift = true;
	int rc = tf_compare(&c, &side, &side, &o);
	if (rc)
		return rc;
	failed_tests(&failed, run);
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (t->outside || !t->base.ran || t->name[0] == '[')
			continue;
		tf_run_cost rc1 = { tf_xstrdup(t->name), t->base.cost, t->measure, false };
		rc1.failed = failed.n && bsearch(&t->name, failed.v, failed.n, sizeof(*failed.v), by_str);
		tf_vec_push(&res, rc1);
	}
	if (unit)
		*unit = tf_xstrdup(c->summary.unit ? c->summary.unit : "");
	for (size_t i = 0; i < failed.n; i++)
		free(failed.v[i]);
	tf_vec_free(&failed);
	tf_comparison_free(c);
	*out = res.v;
	*n = res.n;
	return 0;
}

void tf_run_costs_free(tf_run_cost *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].test);
	free(v);
}
