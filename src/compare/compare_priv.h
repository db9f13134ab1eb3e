/*
 * compare_priv.h - what the files of the compare module share behind
 * compare.h: the runs as prepared for aggregation (value column, test of
 * every sample, functions mapped to comparison-wide keys) and the string
 * table the comparison's names live in.
 */
#ifndef TESTFLAME_COMPARE_PRIV_H
#define TESTFLAME_COMPARE_PRIV_H

#include "testflame/compare.h"

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
	size_t count_col;      /* samples/count, or SIZE_MAX */
	double count_per_value;/* when there is no count column */
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
	bool noise_given;      /* --noise: the history does not override it */
	bool waits;            /* this comparison judges waits (waits.c) */
};


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
	bool listed[2];    /* named in a side's run metadata */
	uint32_t parent;   /* id in names, NO_ID */
	uint32_t nested;
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

/* Judge every test of `c` by its waits (waits.c), as judge() does by CPU. */
void tf_cmp_judge_waits(tf_comparison *c, agg *a, const tf_compare_opts *o);
/* The places where the regressed and improved tests of a comparison of
 * waits waited more or less: its tests' functions (waits.c). */
void tf_cmp_wait_sites(tf_comparison *c, size_t top);
/* Fold the waits' comparison into `c`'s verdicts (waits.c). */
void tf_cmp_merge_waits(tf_comparison *c, tf_comparison *w, const tf_compare_opts *o);

#endif
