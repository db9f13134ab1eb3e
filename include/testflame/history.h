/*
 * history.h - the default branch's stored runs read as one series per
 * test: the steps (change points) and the slow drifts no pull request's
 * gate sees, each dated to its commits, and what moved with them.
 *
 * The gate judges one change against its merge-base; twenty merges that
 * each make a test 1% slower pass twenty gates. The stored baselines of
 * the default branch are a series per test over its first-parent history,
 * and this module reads them as such:
 *
 *  - the series (load.c): one point per stored commit and test, the same
 *    exact measure the gate compares by (tf_compare_run_costs), runs of a
 *    failed or interrupted suite and failed tests left out and counted,
 *    and each commit's machine class (the environment fingerprint);
 *  - the analysis (detect.c), on log costs: machine classes levelled by
 *    the suite's own shift where they change, lone outliers set aside, then
 *    E-Divisive means in windows (Hunter/Otava: the split that maximises
 *    the mean-shift energy, judged by Student's t test, a weak pass that
 *    proposes and a strong pass that keeps), a minimum magnitude, and
 *    Benjamini-Hochberg across the suite's tests; drift as a Theil-Sen
 *    slope with a Mann-Kendall test over a window, kept where a line
 *    explains the window better than one step does;
 *  - the tracker (detect.c): the same analysis one appended commit at a
 *    time, at a cost independent of how long the history is;
 *  - the reasons (load.c): for each change, the functions that moved most
 *    between the runs before and after it, as `compare` finds them.
 *
 * Engine code: nothing here prints; errors are TF_E* codes with a message.
 */
#ifndef TESTFLAME_HISTORY_H
#define TESTFLAME_HISTORY_H

#include "testflame/common.h"
#include "testflame/compare.h"
#include "testflame/profile.h"
#include "testflame/store.h"

/* ---- the analysis of a cost matrix (detect.c) ---------------------------- */

typedef struct {
	size_t window;          /* points per E-Divisive window (default 50) */
	size_t min_segment;     /* points each side of a change needs (default 5) */
	double p_weak;          /* the weak pass's level (default 0.01) */
	double p_strong;        /* the strong pass's level (default 0.0002) */
	double fdr;             /* Benjamini-Hochberg q across tests (default 0.05) */
	double min_change_pct;  /* the least step reported, percent (default 1) */
	size_t drift_window;    /* commits a drift is judged over (default 20) */
	double drift_pct;       /* the least drift over the window reported (default 5) */
	double outlier_sigmas;  /* a lone point this many robust SDs off both
				 * sides is set aside (default 6) */
	/* Keep the whole suite's moves in each test's series. By default,
	 * with 5 tests or more, what moved every test at a commit (the median
	 * of their moves: the machine's moment, or a change to everything) is
	 * taken out of each test and analysed as a series of its own, whose
	 * steps are reported with `test` == the number of tests. */
	bool keep_common;
} tf_history_opts;

void tf_history_opts_init(tf_history_opts *o);

typedef struct {
	size_t ncommits, ntests;
	/* cost[test * ncommits + commit], oldest commit first; NAN or <= 0
	 * where the test has no point at that commit */
	const double *cost;
	/* the machine class of each commit's run; NULL: all one class */
	const uint32_t *klass;
} tf_history_input;

/* A step in one test's series. */
typedef struct {
	size_t test;            /* == ntests: the whole suite (keep_common) */
	size_t at;              /* the first commit (index) at the new level */
	size_t prev;            /* the last commit at the old level: the change
				 * happened in (prev, at] */
	double size_pct;        /* new level / old level - 1, percent */
	double ci_low_pct, ci_high_pct; /* its 95% interval */
	double p;               /* the strong pass's p (selection-corrected) */
	double p_adjusted;      /* after Benjamini-Hochberg across the suite */
	double before, after;   /* the levels (geometric means), cost units */
	size_t group;           /* changes of several tests at one place share it */
} tf_history_change;

/* A slow drift of one test over a window. */
typedef struct {
	size_t test;
	size_t from, to;        /* the window's first and last commit (index) */
	double slope_pct;       /* Theil-Sen slope, percent per commit */
	double total_pct;       /* that slope over the window */
	double latest_vs_best_pct; /* the newest level against the best level the
				    * window established */
	double p, p_adjusted;   /* Mann-Kendall (two-sided), after BH */
	size_t top[3];          /* the commits (index) that contributed most */
	double top_pct[3];      /* what each added, percent */
	size_t ntop;
} tf_history_drift;

typedef struct {
	tf_history_change *changes; /* newest first, then by |size| */
	size_t nchanges;
	size_t ngroups;
	tf_history_drift *drifts;   /* newest first, then by |total| */
	size_t ndrifts;
	size_t *outliers;           /* per test: points set aside as outliers */
	/* Per commit: the machine class's offset taken out, percent (0 for
	 * the newest commit's class); NULL when one class. */
	double *class_shift_pct;
	/* Per commit: the whole suite's move taken out, percent (NAN where
	 * too few tests ran); NULL when not taken out. */
	double *common_shift_pct;
	/* Set when classes could not be levelled (fewer than 5 tests beside
	 * each other): only the newest commit's class was analysed. */
	bool classes_apart;
	size_t ntests, ncommits;
} tf_history_result;

/*
 * Analyse every test's series of `in`; `o` NULL for the defaults.
 * TF_EUSAGE for options out of range.
 */
int tf_history_analyze(tf_history_result **out, const tf_history_input *in,
		       const tf_history_opts *o);
void tf_history_result_free(tf_history_result *r);

/*
 * The same analysis one commit at a time, for a history that grows: each
 * append re-examines only the window at the series' end, so it costs the
 * same after ten commits as after ten thousand. The changes it keeps are
 * those of tf_history_analyze() before the suite-wide FDR step (which needs
 * the whole suite's p-values; tf_history_tracker_changes applies it).
 * Machine classes are not levelled here: append costs of one class.
 */
typedef struct tf_history_tracker tf_history_tracker;
int tf_history_tracker_new(tf_history_tracker **out, size_t ntests, const tf_history_opts *o);
/* One commit: `cost[test]`, NAN or <= 0 where a test has no point. */
void tf_history_tracker_append(tf_history_tracker *t, const double *cost);
/* The changes known so far (tf_history_result with changes only). */
int tf_history_tracker_changes(tf_history_result **out, const tf_history_tracker *t);
void tf_history_tracker_free(tf_history_tracker *t);

/* The pieces, for the unit tests: Mann-Kendall's two-sided p of x[0..n)
 * and the Theil-Sen slope (per index). */
double tf_history_mann_kendall(const double *x, size_t n);
double tf_history_theil_sen(const double *x, size_t n);

/* ---- the series of a stored history (load.c) ---------------------------- */

typedef struct {
	char commit[TF_STORE_ID_HEX + 1];
	char *subject;          /* NULL when unknown */
	int64_t time;           /* committer time, 0 when unknown */
	uint32_t klass;         /* machine class: index into classes */
	size_t runs;            /* runs its baseline holds */
} tf_history_commit;

typedef struct {
	char commit[TF_STORE_ID_HEX + 1];
	char *why;              /* "the suite failed (exit status 2)", ... */
} tf_history_skipped;

typedef struct {
	char *name;
	tf_test_measure measure; /* the measure of its points */
	size_t failed;           /* points left out: the test failed there */
} tf_history_test;

typedef struct {
	char *suite, *kind;
	const char *unit;        /* "nanoseconds", "count" */
	tf_history_commit *commits; /* oldest first */
	size_t ncommits;
	tf_history_test *tests;
	size_t ntests;
	double *cost;            /* [test * ncommits + commit]; NAN: no point */
	uint32_t *klass;         /* per commit */
	char **classes;          /* their descriptions ("cpu 'X', cores 2") */
	size_t nclasses;
	tf_history_skipped *skipped; /* runs left out, newest first */
	size_t nskipped;
	size_t walked;           /* first-parent commits looked at */
	char *store;             /* the store described, for messages */
} tf_history_data;

typedef struct {
	const char *start;       /* where the first-parent walk starts (NULL: HEAD) */
	const char *suite;       /* NULL: the suite of the nearest baseline */
	const char *kind;        /* NULL: the nearest baseline's of the suite */
	size_t max_commits;      /* stored commits to read; 0: all */
	size_t max_walk;         /* first-parent commits to walk; 0: 100,000 */
	/* A commit git holds no baseline of is asked where the store keeps
	 * copies (tf_store_find_elsewhere: Pyroscope), under this service
	 * name; NULL: the remote's name, else this directory's. */
	const char *pyroscope_service;
	const char *value;       /* sample type (as tf_compare_opts.value) */
} tf_history_load_opts;

/*
 * Read the stored runs of one suite along the first-parent history of
 * opts->start, newest first, up to opts->max_commits stored commits; the
 * series come back oldest first. TF_ENOTFOUND (a message naming the suite
 * and how far the walk went) when no commit has a baseline of it.
 */
int tf_history_load(tf_history_data **out, tf_store *s, const tf_history_load_opts *opts);
void tf_history_data_free(tf_history_data *d);

/* A test's name, or "[whole suite]" for the suite's own series. */
const char *tf_history_test_name(const tf_history_data *d, size_t test);

/* The analysis input over `d` (borrows it). */
void tf_history_input_from(tf_history_input *out, const tf_history_data *d);

/*
 * What moved a change of test `test` between commits[before_lo..before_hi]
 * and commits[after_lo..after_hi] (inclusive indices into d->commits, the
 * runs of at most `max_runs` stored commits read from each side, those
 * nearest the change first): the stored runs of both sides compared as `compare` compares
 * them, at a threshold of 0.5%, so that the test's functions whose self
 * cost moved most in the change's direction are listed (t->functions).
 * `t` is NULL when the test is in neither side. Clear `out` whatever the
 * result.
 */
/* A function that moved, and the caller its moved time came most through
 * (NULL when unknown or when it has none): "spin, from victim_work" names
 * the function whose work grew as well as where the time went. */
typedef struct {
	tf_func_delta d;
	char *caller;
} tf_history_fn;

typedef struct {
	tf_comparison *cmp;
	const tf_test_delta *t;
	/* The functions that moved most in the change's direction: the
	 * comparison's (t->functions) where its verdict lists them, else the
	 * largest moves of self cost in the test's diff tree (few samples a
	 * side: the verdict may stay undecided while the tree still shows
	 * where the time went). */
	const tf_history_fn *functions;
	size_t nfunctions;
	struct tf_history_keep *keep; /* the runs cmp borrows, the functions */
} tf_history_explained;

int tf_history_explain(tf_history_explained *out, tf_store *s, const tf_history_data *d,
		       size_t test, size_t before_lo, size_t before_hi, size_t after_lo,
		       size_t after_hi, size_t max_runs);
void tf_history_explained_clear(tf_history_explained *e);
/*
 * Up to `max` functions of test `t` of `c` that moved most in its
 * direction: the comparison's list where its verdict made one, else the
 * largest moves of self cost in its diff tree (each function's nodes
 * summed; delta_total NAN), each with the caller most of its move came
 * through (from the diff tree in both cases). Copies the caller frees with
 * tf_history_functions_free().
 */
int tf_history_test_functions(tf_history_fn **out, size_t *n, const tf_comparison *c,
			      const tf_test_delta *t, size_t max);
void tf_history_functions_free(tf_history_fn *f, size_t n);

/* ---- bisect (bisect.c) ------------------------------------------------- */

/* The first-parent range of `testflame bisect`, GOOD first, BAD last. */
typedef struct {
	char (*commits)[TF_STORE_ID_HEX + 1];
	char **subjects;       /* where a stored run named them; else NULL */
	double *cost;          /* TEST's stored cost, NAN where none */
	size_t n;
	size_t stored;         /* commits with a stored cost of TEST */
	bool test_stored;      /* some stored run of the range has TEST */
	char *suite, *kind;    /* read (NULL when nothing is stored near) */
} tf_bisect_range;

/*
 * The first-parent history from `bad` back to `good`, with TEST's stored
 * costs. TF_EINVAL (one line) for an unknown revision, for GOOD not on
 * BAD's first-parent history, or GOOD = BAD. `suite` and `kind` NULL: the
 * nearest stored run's.
 */
int tf_history_bisect_range(tf_bisect_range *out, tf_store *s, const char *good, const char *bad,
			    const char *suite, const char *kind, const char *test);
void tf_bisect_range_clear(tf_bisect_range *r);
/*
 * What the stored runs say: 1 when their costs show one slowdown (the
 * best split of the stored points, two a side at least, t test at 0.001
 * after the choice's Bonferroni), with *lo the last stored commit before
 * it and *hi the first after (indices into r->commits) and its size; 0
 * when they do not.
 */
int tf_history_bisect_stored(size_t *lo, size_t *hi, double *size_pct, const tf_bisect_range *r);

/* ---- rendering (render.c) ---------------------------------------------- */

typedef struct tf_history_render {
	const tf_history_data *data;
	const tf_history_result *result;
	/* What moved, per change and per drift (result order); either may be
	 * NULL, and an entry's cmp NULL when it was not explained. */
	const tf_history_explained *change_why;
	const tf_history_explained *drift_why;
	const tf_history_opts *opts;
	size_t max_functions;             /* per change (default 3 when 0) */
	bool color;
} tf_history_render;

/* The terminal table: changes newest first, then drifts, then what was
 * left out. */
int tf_history_render_table(tf_buf *out, const tf_history_render *r);
/* The JSON document (docs/history-json.md, "schema": "testflame-history/1"). */
int tf_history_to_json(tf_buf *out, const tf_history_render *r);
/* The short "history" note of a run on the default branch: a line per
 * change or drift that the newest `recent` commits completed; "" when
 * none. Markdown, names escaped. */
void tf_history_note_markdown(tf_buf *out, const tf_history_render *r, size_t recent);

#endif
