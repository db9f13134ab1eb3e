/*
 * stats.h - the distributions and the multiple-comparison correction that
 * more than one module judges by: the comparison's verdicts (compare) and
 * the default branch's series (history). Implemented in
 * src/compare/stats.c; the comparison's own model stays private to it.
 */
#ifndef TESTFLAME_STATS_H
#define TESTFLAME_STATS_H

#include "testflame/compare.h"

/* Distributions. sf = survival function (upper tail), isf its inverse. */
double tf_stats_norm_cdf(double x);
double tf_stats_norm_sf(double x);
double tf_stats_norm_quantile(double p);
/* Regularised incomplete beta I_x(a, b). */
double tf_stats_incbeta(double a, double b, double x);
/* Student's t with `df` degrees of freedom (df may be non-integer or
 * INFINITY, which is the normal distribution). */
double tf_stats_t_sf(double t, double df);
double tf_stats_t_isf(double q, double df);

/* Adjusted p-values (same order as `p`), monotone as in R's p.adjust. */
void tf_stats_adjust(double *adj, const double *p, size_t n, tf_correction how);

#endif
