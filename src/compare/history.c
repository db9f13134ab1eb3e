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
 * The spread is the sample standard deviation of the log costs, not a
 * robust one: over 3 to 10 runs the median absolute deviation is biased
 * low (over 3 runs it is the smaller of two deviations), and a noise
 * underestimated by half makes the gate cry wolf on every noisy test. The
 * estimate's own uncertainty (k - 1 degrees of freedom) is carried to the
 * test (compare.c, stats.c). A baseline saved from `run --repeat N` holds
 * N runs of one commit; each counts as a run of its own here (their mean
 * would understate one run's noise by a factor of sqrt(N)).
 */
#include "testflame/compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	tf_strtab names;
	TF_VEC(double) cost; /* test id * nruns + run */
} table;

int tf_compare_history_noise(tf_test_noise **out, size_t *n, const tf_profile *const *runs,
			     size_t nruns, const char *value)
{
	table t;
	TF_VEC(tf_test_noise) res = { 0 };
	size_t total = 0, first = 0;

	/* a run file saved from --repeat holds several runs: each is one draw */
	for (size_t r = 0; r < nruns; r++)
		total += tf_profile_count_runs(runs[r]);
	double *logs = tf_xcalloc(total + 1, sizeof(double));

	*out = NULL;
	*n = 0;
	memset(&t, 0, sizeof(t));
	tf_strtab_init(&t.names);
	for (size_t r = 0; r < nruns; first += tf_profile_count_runs(runs[r]), r++) {
		const tf_profile *p = runs[r];
		size_t col, nsub = tf_profile_count_runs(p);
		if (value) {
			if (tf_profile_value_index(&col, p, value))
				continue;
		} else {
			int d = tf_profile_default_value(p);
			if (d < 0)
				continue;
			col = (size_t)d;
		}
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
			size_t need = ((size_t)id + 1) * total;
			while (t.cost.n < need)
				tf_vec_push(&t.cost, 0.0);
			t.cost.v[(size_t)id * total + first + sub] += (double)tf_sample_values(p, i)[col];
		}
	}
	nruns = total;
	for (size_t id = 1; id < t.names.strs.n; id++) {
		size_t k = 0;
		for (size_t r = 0; r < nruns; r++) {
			double c = id * nruns + r < t.cost.n ? t.cost.v[id * nruns + r] : 0;
			if (c > 0)
				logs[k++] = log(c);
		}
		if (k < 3)
			continue;
		double m = 0, ss = 0;
		for (size_t i = 0; i < k; i++)
			m += logs[i];
		m /= (double)k;
		for (size_t i = 0; i < k; i++)
			ss += (logs[i] - m) * (logs[i] - m);
		tf_test_noise tn = { tf_xstrdup(t.names.strs.v[id]), 100 * sqrt(ss / (double)(k - 1)), k };
		tf_vec_push(&res, tn);
	}
	free(logs);
	tf_strtab_free(&t.names);
	tf_vec_free(&t.cost);
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
