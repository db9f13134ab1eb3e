/*
 * compare_int.h - what the files of the compare module share behind
 * compare.h: the runs as prepared for aggregation (value column, test of
 * every sample, functions mapped to comparison-wide keys), the string
 * table the comparison's names live in, and the statistics behind the
 * verdicts (stats.c).
 */
#ifndef TESTFLAME_COMPARE_INT_H
#define TESTFLAME_COMPARE_INT_H

#include "testflame/compare.h"
#include "testflame/stats.h" /* the distributions and tf_stats_adjust() */

#define NO_ID UINT32_MAX

/* A function as the comparison knows it, across profiles (every profile
 * numbers its functions its own way): keyed by name and file base name. */
typedef struct {
	uint32_t name, file;  /* ids in priv->names; file: the full path shown */
	uint32_t key_file;    /* the file's base name, part of the key */
	int64_t start_line;
	bool from_head;       /* file and start_line come from a head run */
} cmp_func;

typedef struct {
	const tf_profile *p;
	const char *name;
	bool head;
	size_t col;            /* the compared value column */
	size_t count_col;      /* where the sample counts come from: samples/count,
				* or the value column itself */
	double count_per_value;/* samples per unit of it (1 / a period) */
	uint32_t *sample_test; /* internal test id of every sample */
	uint32_t *fn_key;      /* profile function -> cmp_func, built lazily */
	uint32_t *loc_key;     /* symbol-less location -> cmp_func, NO_ID otherwise */
} cmp_run;

struct tf_compare_priv {
	tf_arena *arena;
	tf_strtab names;       /* test, function and file names */
	cmp_run *runs;         /* base runs first, then head runs */
	size_t nruns, nbase, nhead;
	uint32_t *test_id;     /* c->tests[i] -> internal test id */
	uint32_t *test_name;   /* internal test id -> id in names */
	size_t ninternal;
	TF_VEC(cmp_func) funcs;
	tf_htab func_index;
	bool keys_ready;
	size_t *columns;       /* value column per run, base then head */
	bool periodic;         /* every run is a testflame run file */
	/* a memory comparison, and the per-test field of the run metadata
	 * that measures its value exactly (allocs, alloc_bytes), or NULL */
	bool memory;
	const char *exact_field;
	bool noise_given;      /* --noise: the history does not override it */
	bool waits;            /* this comparison judges waits (waits.c) */
};

/* The memory fields of a test's run metadata a side's means are kept of. */
enum { MEM_ALLOCS, MEM_FREES, MEM_PEAK, MEM_LEAKED, MEM_RSS, MEM_FIELDS };

/* Per internal test, while aggregating. */
typedef struct {
	double *cost;      /* per run, base runs then head runs: sampled values */
	double *samples;
	double *exact;     /* per run and measure (run * 4 + measure): the
			    * exact measures the metadata gives, NAN without */
	double *quantum;   /* per run: the runner duration's resolution */
	bool *ran;         /* per run: named in the run's metadata */
	double wall[2], cpu[2], runner[2];  /* sums over runs that reported them */
	unsigned nwall[2], ncpu[2], nrunner[2];
	double off[2], apart[2], cputime[2];  /* waits, and CPU time as measured */
	unsigned noff[2], ncputime[2];
	double *run_cpu;   /* per run: its CPU time (the exact count, else its
			    * sampled cost); NAN when it did not run */
	double *run_waits; /* per run: how many waits its off-CPU time is; NAN */
	double *run_pagein; /* per run: of its off-CPU time, the page-ins; NAN */
	double mem[2][MEM_FIELDS];          /* memory's, as wall[] */
	unsigned nmem[2][MEM_FIELDS];
	bool listed[2];    /* named in a side's run metadata */
	uint32_t parent;   /* id in names, NO_ID */
	uint32_t nested;
	bool holds;        /* judged through its nested tests (holding_tests) */
	tf_test_measure measure;
	double *mcost;     /* per run: the cost under `measure` */
} agg_test;

typedef struct {
	tf_comparison *c;
	struct tf_compare_priv *pv;
	TF_VEC(agg_test) tests;
	TF_VEC(uint32_t) name_test; /* id in pv->names -> internal test */
	bool wall;                  /* the wall column: its exact measure is
				     * the CPU's count and the time waited */
} agg;

/* Map every function and symbol-less location of every run to a cmp_func
 * (once per comparison). */
void tf_cmp_prepare_keys(struct tf_compare_priv *pv);

static inline double cmp_sample_value(const cmp_run *r, size_t i)
{
	return (double)r->p->values.v[i * r->p->sample_types.n + r->col];
}

/* The runner's shift: the median log ratio of the tests that ran no
 * changed code, and its variance; 0 and 0 without a control group. Fills
 * the summary's shift fields (shift.c). */
void tf_cmp_runner_shift(tf_comparison *c, double *shift, double *shift_var);
/* Set each test's ran_changed from the head's "changes" metadata; needed
 * by tf_cmp_runner_shift (shift.c). */
void tf_cmp_mark_changed(tf_comparison *c);

/* Reset a test's verdict fields; true when it is new or gone (decided). */
bool tf_cmp_begin_verdict(tf_test_delta *t, double threshold);
/* Sort `v` (n entries) by `by` with sign `sg`, and keep the first `top` as
 * t's functions, in the comparison's arena (functions.c). */
void tf_cmp_keep_functions(struct tf_compare_priv *pv, tf_test_delta *t, tf_func_delta *v,
			   size_t n, size_t top, int (*by)(const void *, const void *, void *), int sg);
/* Function deltas of the regressed and improved tests (functions.c). */
void tf_cmp_function_deltas(tf_comparison *c, size_t top);
/* c->tests by name, into `h` (to free with tf_htab_free), and the index of
 * the test named `name` there, or TF_HTAB_NONE (functions.c). */
void tf_cmp_index_tests(const tf_comparison *c, tf_htab *h);
uint32_t tf_cmp_find_test(const tf_comparison *c, const tf_htab *h, const char *name);

static inline const char *cmp_name(const struct tf_compare_priv *pv, uint32_t id)
{
	return pv->names.strs.v[id];
}


/* ---- stats.c ----
 *
 * The statistics behind the comparison verdicts: distributions, Welch's t
 * test, the Poisson-ratio model, multiple-comparison corrections and the
 * verdict rule. The model is explained at the top of stats.c.
 */

typedef struct {
	double diff;   /* mean(y) - mean(x) */
	double se;     /* standard error of diff */
	double t, df;
	double p;      /* two-sided */
} tf_welch;

/* Welch's unequal-variances t test of y against x (n, m >= 2). `var_floor`
 * (0 for none) is the smallest variance each side is allowed to have. */
void tf_stats_welch(tf_welch *out, const double *x, size_t n, const double *y, size_t m,
		    double var_floor_x, double var_floor_y);
/* The same with each side's variance moderated by a prior (Smyth's
 * moderated t): (d0 * prior_var + (n - 1) * s^2) / (d0 + n - 1), with
 * d0 + n - 1 degrees of freedom per side. */
void tf_stats_welch_moderated(tf_welch *out, const double *x, size_t n, const double *y,
			      size_t m, double prior_var, double d0);

/* One test's data: per-run costs of each side (zero where the test had no
 * samples in a run) and the side's total sample counts. */
typedef struct {
	const double *base, *head;
	size_t nbase, nhead;
	double base_samples, head_samples;
	double noise;      /* modelled run-to-run CV of one run, a fraction */
	/* Counter-overflow sampling (testflame's run files): a test's total is
	 * its event count to within a sample or so, so sampling adds a
	 * quantisation error (1/N)^2 instead of a Poisson 1/N. */
	bool periodic;
	/* Repeats: the prior run-to-run noise (a fraction) the per-run spread
	 * is moderated with, and its weight in degrees of freedom. */
	double prior_noise, prior_df;
	/* Single runs: the part of noise^2 that was estimated (from a test's
	 * history) rather than known, and that estimate's degrees of freedom;
	 * 0 and 0 when all of `noise` is the event's floor. */
	double noise_excess2, noise_df;
	/* Single runs: the part of noise^2 between runs of one job, as the
	 * stored history measured it (a fraction squared), and its degrees of
	 * freedom; 0 and 0 when unknown. Pooled with the spread of this
	 * comparison's own runs of a side, when a side has several. */
	double within2, within_df;
	/* Each side is a job of its own: the job-to-job term applies. */
	bool separate_jobs;
	/* The costs are measured, not sampled (a kernel count, a CPU clock, a
	 * runner's timer): no sampling term; `meas_var` is the measurement's
	 * own variance of log(head/base) instead (a timer's tick), 0 for a
	 * count. */
	bool exact;
	double meas_var;
	/* Variance added to log(head/base) from elsewhere: the uncertainty of
	 * the runner's shift taken out of the head's costs (shift.c). */
	double extra_var;
	/* Run i of the head ran at the same time as run i of the base
	 * (tf_compare_opts.paired). */
	bool paired;
} tf_stats_input;

typedef struct {
	tf_compare_method method;
	double delta;           /* head/base - 1, a fraction */
	double ci_low, ci_high; /* 95% interval of delta */
	double p;               /* one-sided p-value of "no change", in the direction of delta */
	double df;              /* INFINITY for the z test */
	double se;              /* standard error of log(head/base) */
} tf_stats_result;

/* Test one test; both sides must have a positive total cost. */
void tf_stats_test(tf_stats_result *out, const tf_stats_input *in);

/* The squares of a side's per-run log costs around their mean (runs
 * without a cost left out); adds their degrees of freedom to *df. */
double tf_stats_side_squares(const double *c, size_t n, double *df);

/* The default run-to-run noise (CV of one run, a fraction) of an event. */
double tf_stats_event_noise(const char *event);



/*
 * The verdict of a tested test from its result, the adjusted p-value, the
 * threshold (a fraction), alpha and the side sample counts. `reason`
 * receives one line saying why.
 */
tf_verdict tf_stats_verdict(const tf_stats_result *r, double p_adjusted, double threshold,
			    double alpha, double base_samples, double head_samples,
			    char *reason, size_t reason_len);

/* A comparison of waits or of wall time: each test's page-ins (a cold
 * cache) out of its runs' costs, but for what every run of both sides
 * repeats (waits.c). */
void tf_cmp_waits_pageins(agg *a);
/* Judge every test of `c` by its waits (waits.c), as judge() does by CPU. */
void tf_cmp_judge_waits(tf_comparison *c, agg *a, const tf_compare_opts *o);
/* The places where the regressed and improved tests of a comparison of
 * waits waited more or less: its tests' functions (waits.c). */
void tf_cmp_wait_sites(tf_comparison *c, size_t top);
/* Fold the waits' comparison into `c`'s verdicts (waits.c). */
void tf_cmp_merge_waits(tf_comparison *c, tf_comparison *w, const tf_compare_opts *o);

#endif
