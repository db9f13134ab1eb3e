/*
 * bisect.c - the range `testflame bisect TEST GOOD BAD` halves, and what
 * the stored runs already say of it.
 *
 * The range is the first-parent history from BAD back to GOOD (a merge's
 * second parent is not walked: the default branch's commits are what its
 * baselines are stored for, and what a fix goes against). GOOD must be on
 * it; otherwise there is no range, and the caller says so.
 *
 * The stored runs answer first: where the range's stored commits show one
 * step of TEST's cost (the best split of their log costs, judged by
 * Student's t test at 0.001), the step lies between the last stored commit
 * before it and the first after it; when those are neighbours, that commit
 * is the answer and nothing needs building. Otherwise the caller builds
 * and runs what lies between, and the engine decides each commit by its
 * runs against GOOD's (tf_history_bisect_judge).
 */
#include "history_int.h"
#include "testflame/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RANGE_MAX 100000

void tf_bisect_range_clear(tf_bisect_range *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++)
		free(r->subjects[i]);
	free(r->subjects);
	free(r->commits);
	free(r->cost);
	free(r->suite);
	free(r->kind);
	memset(r, 0, sizeof(*r));
}

/* TEST's stored cost at `commit`, NAN when none is usable. */
static double stored_cost(tf_store *s, const char *commit, const char *suite, const char *kind,
			  const char *test, char **subject, bool *has_test)
{
	tf_store_match m;
	tf_store_resolve_opts ro = { 1, false };
	tf_store_found f;
	double sum = 0;
	size_t used = 0;

	if (tf_store_resolve(&m, s, commit, suite, kind, &ro) != 0 ||
	    tf_store_read_runs(&f, s, &m, suite, kind) != 0) {
		tf_error_clear();
		return NAN;
	}
	if (f.subject && !*subject)
		*subject = tf_xstrdup(f.subject);
	for (size_t r = 0; r < f.nruns; r++) {
		char *pr = tf_history_run_problem(f.runs[r]);
		tf_run_cost *rc;
		size_t n;
		if (pr) {
			free(pr);
			continue;
		}
		if (tf_compare_run_costs(&rc, &n, NULL, f.runs[r], NULL) != 0) {
			tf_error_clear();
			continue;
		}
		for (size_t i = 0; i < n; i++)
			if (strcmp(rc[i].test, test) == 0) {
				*has_test = true;
				if (!rc[i].failed) {
					sum += rc[i].cost;
					used++;
				}
			}
		tf_run_costs_free(rc, n);
	}
	tf_store_found_clear(&f);
	return used ? sum / (double)used : NAN;
}

int tf_history_bisect_range(tf_bisect_range *out, tf_store *s, const char *good, const char *bad,
			    const char *suite, const char *kind, const char *test)
{
	char g[TF_STORE_ID_HEX + 1], id[TF_STORE_ID_HEX + 1];
	TF_VEC(char *) ids = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = tf_store_rev(g, s, good)) != 0)
		return tf_error_set(TF_EINVAL, "unknown revision '%s'", good);
	if ((rc = tf_store_rev(id, s, bad)) != 0)
		return tf_error_set(TF_EINVAL, "unknown revision '%s'", bad);
	/* BAD back to GOOD along first parents */
	for (size_t k = 0;; k++) {
		tf_vec_push(&ids, tf_xstrdup(id));
		if (strcmp(id, g) == 0)
			break;
		char *parent = tf_xasprintf("%s^", id);
		rc = tf_store_rev(id, s, parent);
		free(parent);
		if (rc || k >= RANGE_MAX) {
			tf_error_clear();
			for (size_t i = 0; i < ids.n; i++)
				free(ids.v[i]);
			tf_vec_free(&ids);
			return tf_error_set(TF_EINVAL, "'%s' is not an ancestor of '%s' on its "
					    "first-parent history: nothing to bisect", good, bad);
		}
	}
	if (ids.n < 2) {
		free(ids.v[0]);
		tf_vec_free(&ids);
		return tf_error_set(TF_EINVAL, "'%s' and '%s' are the same commit: nothing to bisect",
				    good, bad);
	}
	tf_history_load_opts lo;
	memset(&lo, 0, sizeof(lo));
	lo.suite = suite;
	lo.kind = kind;
	out->n = ids.n;
	out->commits = tf_xcalloc(ids.n, sizeof(*out->commits));
	out->subjects = tf_xcalloc(ids.n, sizeof(char *));
	out->cost = tf_xmalloc(ids.n * sizeof(double));
	for (size_t i = 0; i < ids.n; i++) {
		memcpy(out->commits[i], ids.v[ids.n - 1 - i], TF_STORE_ID_HEX + 1);
		out->cost[i] = NAN;
		out->subjects[i] = tf_store_subject(s, out->commits[i]);
		free(ids.v[ids.n - 1 - i]);
	}
	tf_vec_free(&ids);
	/* the suite and kind: as given, else the nearest stored run's (none
	 * stored anywhere near: the caller measures everything) */
	if (tf_history_pick_suite(&out->suite, &out->kind, s, out->commits[out->n - 1], &lo) != 0) {
		tf_error_clear();
		free(out->suite);
		free(out->kind);
		out->suite = suite ? tf_xstrdup(suite) : NULL;
		out->kind = kind ? tf_xstrdup(kind) : NULL;
		return 0;
	}
	for (size_t i = 0; i < out->n; i++) {
		bool has = false;
		out->cost[i] = stored_cost(s, out->commits[i], out->suite, out->kind, test,
					   &out->subjects[i], &has);
		out->test_stored |= has;
		out->stored += !isnan(out->cost[i]);
	}
	return 0;
}

int tf_history_bisect_stored(size_t *lo, size_t *hi, double *size_pct, const tf_bisect_range *r)
{
	size_t n = 0, *at = tf_xmalloc((r->n + 1) * sizeof(size_t));
	double *y = tf_xmalloc((r->n + 1) * sizeof(double));
	int found = 0;

	for (size_t i = 0; i < r->n; i++)
		if (r->cost[i] > 0) {
			at[n] = i;
			y[n++] = log(r->cost[i]);
		}
	/* the best single split, two stored points a side at least */
	double best = -1, bd = 0, bt = 0, bdf = 0;
	size_t bk = 0;
	for (size_t k = 2; k + 2 <= n; k++) {
		double m1 = 0, m2 = 0, s1 = 0, s2 = 0;
		for (size_t i = 0; i < k; i++)
			m1 += y[i];
		for (size_t i = k; i < n; i++)
			m2 += y[i];
		m1 /= (double)k;
		m2 /= (double)(n - k);
		for (size_t i = 0; i < k; i++)
			s1 += (y[i] - m1) * (y[i] - m1);
		for (size_t i = k; i < n; i++)
			s2 += (y[i] - m2) * (y[i] - m2);
		double df = (double)n - 2, var = (s1 + s2) / df;
		if (var < 1e-8)
			var = 1e-8;
		double t = fabs(m2 - m1) / sqrt(var * (1.0 / (double)k + 1.0 / (double)(n - k)));
		double q = (double)k * (double)(n - k) / (double)n * (m2 - m1) * (m2 - m1);
		if (q > best) {
			best = q;
			bk = k;
			bd = m2 - m1;
			bt = t;
			bdf = df;
		}
	}
	if (best >= 0) {
		/* the best of n - 3 places: Bonferroni for the choice */
		double p = 2 * tf_stats_t_sf(bt, bdf) * (double)(n - 3);
		if (p <= 0.001 && bd > 0) {
			*lo = at[bk - 1];
			*hi = at[bk];
			*size_pct = expm1(bd) * 100;
			found = 1;
		}
	}
	free(at);
	free(y);
	return found;
}
