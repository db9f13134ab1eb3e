/*
 * stats.h - the statistics behind the comparison verdicts (private to the
 * compare module and its unit tests): distributions, Welch's t test, the
 * Poisson-ratio model, multiple-comparison corrections and the verdict
 * rule. The model is explained at the top of stats.c.
 */
#ifndef TESTFLAME_COMPARE_STATS_H
#define TESTFLAME_COMPARE_STATS_H

#include "testflame/compare.h"
#include "testflame/stats.h" /* the distributions and tf_stats_adjust() */

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

#endif
