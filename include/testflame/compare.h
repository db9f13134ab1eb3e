/*
 * compare.h - the comparison engine: the cost of every test in a base and a
 * head (one or more runs each), a noise-aware verdict per test, the
 * functions behind each change, diff call trees for flame graphs, and the
 * two renderings every consumer needs: report.json and the terminal table.
 *
 * Normalisation is absolute: a test's cost is the sum of the compared value
 * column (nanoseconds of CPU, instructions, ...) over its samples, averaged
 * over the runs of a side. Shares of the profile total never decide
 * anything, so a test does not "regress" because another one got faster.
 * The statistics (sampling noise, run-to-run noise, multiple tests) are
 * described in src/compare/stats.c.
 *
 * Ownership: tf_compare() borrows the profiles (they must outlive the
 * comparison) but copies the arrays listing them and their names; every string and array reachable from a tf_comparison is
 * owned by it and dies with tf_comparison_free(). Diff trees point into the
 * comparison's strings and must be freed before it.
 */
#ifndef TESTFLAME_COMPARE_H
#define TESTFLAME_COMPARE_H

#include "testflame/attribute.h"
#include "testflame/common.h"
#include "testflame/config.h"
#include "testflame/profile.h"

/* Verdicts, in the order reports list them (most urgent first). */
typedef enum {
	TF_VERDICT_REGRESSED = 0, /* significantly slower, by at least the threshold */
	TF_VERDICT_IMPROVED,      /* significantly faster, by at least the threshold */
	TF_VERDICT_NEW,           /* no cost in the base */
	TF_VERDICT_GONE,          /* no cost in the head */
	TF_VERDICT_INCONCLUSIVE,  /* too few samples / too much noise to tell */
	TF_VERDICT_UNCHANGED,     /* no change of at least the threshold */
	TF_VERDICT_COUNT
} tf_verdict;

/* "regressed", "improved", "new", "gone", "inconclusive", "unchanged". */
const char *tf_verdict_name(tf_verdict v);

/*
 * The order of attention: one ranking for every list of tests (the
 * terminal table, report.md, index.html, report.json), so what a reviewer
 * must look at is on the first screen whatever the verdict counts are.
 */
typedef enum {
	TF_ATTENTION_REGRESSED = 0, /* fails the gate */
	TF_ATTENTION_UNDECIDED,     /* a change of at least the threshold the noise
				     * does not yet tell from none */
	TF_ATTENTION_CHANGED_CODE,  /* ran code the change touched, and moved */
	TF_ATTENTION_IMPROVED,
	TF_ATTENTION_NEW_GONE,      /* ran on one side only */
	TF_ATTENTION_UNSURE,        /* undecided, smaller than the threshold */
	TF_ATTENTION_REST,          /* unchanged; the work outside tests */
} tf_attention;

/* Multiple-comparison correction across the tests of a comparison. */
typedef enum {
	TF_CORRECTION_HOLM = 0, /* family-wise error rate (default: the gate) */
	TF_CORRECTION_BH,       /* Benjamini-Hochberg false discovery rate */
	TF_CORRECTION_NONE,
} tf_correction;

/* How a test's p-value was obtained. */
typedef enum {
	TF_METHOD_NONE = 0,  /* new / gone: nothing to test */
	TF_METHOD_POISSON,   /* fewer than 3 runs on a side: Poisson counts + modelled run noise */
	TF_METHOD_WELCH,     /* >= 3 runs per side: Welch's t on the per-run log costs */
	TF_METHOD_PAIRED,    /* >= 3 pairs of runs made at once: a t test on their log ratios */
} tf_compare_method;

/* gate.measure (config.h): how its names parse, and read. */
int tf_gate_measure_parse(tf_gate_measure *out, const char *s);
const char *tf_gate_measure_name(tf_gate_measure m);

/* What grew in a test that got slower (tf_test_delta.grew). */
enum {
	TF_GREW_CPU = 1,
	TF_GREW_WAIT = 2,
};

const char *tf_correction_name(tf_correction c);
const char *tf_compare_method_name(tf_compare_method m);

/* A test decided by a confirmation of its own (a duet: the test run alone,
 * the merge-base and the head alternately), whose verdict stands for it
 * in the comparison of the runs that raised the suspicion. */
typedef struct {
	const char *test;
	tf_verdict verdict;
	double delta_pct, ci_low_pct, ci_high_pct, p_value, p_adjusted;
	size_t runs;          /* alternating runs per side that decided it */
	const char *reason;   /* the duet's reason for its verdict */
	bool together;        /* the sides ran at the same time, in pairs */
} tf_test_decided;

typedef struct {
	tf_gate_measure measure; /* default TF_GATE_BOTH */
	double threshold;     /* minimum effect, percent (default 5) */
	double alpha;         /* false-alarm rate across all tests (default 0.001) */
	double noise;         /* run-to-run CV of one run, percent; < 0: by event (default) */
	const char *value;    /* sample type to compare ("cpu", "cpu/nanoseconds",
			       * "samples"); NULL: the profile's event column */
	const char *test;     /* compare only this test; NULL: all */
	size_t top_functions; /* functions kept per regressed / improved test (default 10) */
	double min_samples;   /* fewer samples on a side: not "unchanged" but
			       * "inconclusive"; <= 0: one sample must be worth
			       * less than the threshold (the default) */
	/* The least change of a test's cost, per run, that counts, in
	 * nanoseconds, when the cost is a time (default 1 ms; 0: none): a
	 * test's threshold is raised to it. A test of a third of a
	 * millisecond moves by a tenth of one from one run to the next (an
	 * interrupt, a page fault, the interpreter's state the test before
	 * left), and the same in every run of the same tree. */
	double min_delta_ns;
	/* The same for costs in bytes (the memory comparison's): a test's
	 * threshold is raised to it (default 0: none) */
	double min_delta_bytes;
	tf_correction correction;
	/* Run-to-run noise of each test as its history shows it (see
	 * tf_compare_history_noise); raises the noise above the event's floor
	 * for those tests in single-run comparisons. NULL: none known. */
	const struct tf_test_noise *history;
	size_t nhistory;
	/* Judge "[outside tests]" (the command's and the harness's own work)
	 * like a test: it may then fail the gate (gate.outside). */
	bool gate_outside;
	/* Keep the runner's shift in: by default the median move of the tests
	 * that ran no changed code is taken out of every test (shift.c). */
	bool keep_shift;
	/* The tests compared ran because they looked slower (a confirmation's
	 * suspects, run alone, alternately with the base): none of them can
	 * stand for the runner, whose speed both sides shared, so neither the
	 * runner's shift nor the clock's jitter is read from their moves. */
	bool picked;
	/* Run i of the head ran at the same time as run i of the base (a
	 * duet's sides at once, on CPUs of their own): each test is judged on
	 * the pairs' log ratios (a paired t test), which cancel what the
	 * moment did to both. Sides of the same number of runs only. */
	bool paired;
	/* How the verdict was confirmed on this runner, for the reports
	 * ("the merge-base built and run here, 3 runs each"); NULL: not. */
	const char *confirmation;
	/* The tests that looked slower in the run that raised the suspicion
	 * when other runs confirm it (the head again, or the whole suite
	 * alternately with the merge-base): only these, and tests that ran
	 * changed code, may come out regressed, and only these are the
	 * family the gate's correction counts. Among many tests, a few look
	 * slower by chance in every run, so the new runs would raise
	 * suspicions of their own that nothing confirms. Sorted (strcmp);
	 * NULL: no limit. */
	const char *const *suspects;
	size_t nsuspects;
	/* Tests whose verdicts their own confirmation decided (run alone,
	 * alternately with the merge-base): these verdicts, deltas and
	 * intervals stand for theirs. NULL: none. */
	const tf_test_decided *decided;
	size_t ndecided;
	/* Where the head's runs come from when not from one job, for the
	 * reports ("merged from 3 shards, judged as recorded"); NULL: not. */
	const char *origin;
	/* Each side's runs are one job of its own (run against a stored
	 * baseline): the runs of a job share its moment (the runner, its other
	 * tenants), and more runs of a side cannot average that job-to-job
	 * noise away (stats.c). false (the default, and run --against, whose
	 * sides alternate within one job): runs are independent draws. */
	bool separate_jobs;
} tf_compare_opts;

/* One test's noise, learned from earlier runs of the same suite. */
typedef struct tf_test_noise {
	char *test;
	double noise_pct;   /* CV of one run's cost (SD of the log costs), percent */
	size_t runs;        /* how many runs it was learned from */
	double df;          /* the degrees of freedom of noise_pct */
	/* The part of it between runs of one job (a baseline saved from
	 * --repeat holds several): percent, and its degrees of freedom; 0 and
	 * 0 when every stored baseline is a single run. */
	double within_pct, within_df;
	/* The same spread with each run's shift taken out, as a comparison
	 * with a control group judges (shift.c): the median move of the run's
	 * other tests, from 5 of them on; such a comparison keeps the smaller
	 * of the two. false: some run of the test had fewer tests beside it,
	 * and the fields repeat the plain ones. */
	bool shifted;
	double shifted_pct, shifted_df, shifted_within_pct, shifted_within_df;
	/* Stored runs set aside as disturbed (history.c): how many, and how
	 * far the farthest was from the others (percent); the same with the
	 * shifts taken out. The spreads are of the runs kept. */
	size_t set_aside, shifted_set_aside;
	double aside_pct, shifted_aside_pct;
} tf_test_noise;

/*
 * The run-to-run noise of every test seen in at least 3 of `runs` (run
 * files of earlier commits, typically the stored baselines along the
 * first-parent history): the standard deviation of the log costs, with
 * runs - 1 degrees of freedom, of the runs kept: from 5 baselines on, one
 * (two from 10) far off all the others is set aside as disturbed. `value` as in
 * tf_compare_opts. The caller frees with tf_test_noise_free().
 */
int tf_compare_history_noise(tf_test_noise **out, size_t *n, const tf_profile *const *runs,
			     size_t nruns, const char *value);
void tf_test_noise_free(tf_test_noise *v, size_t n);

/*
 * The cost of each test in one run, measured as the gate measures it
 * (tf_compare on the run against itself: the exact count, the markers' CPU
 * time, the runner's duration, else the samples): what a series of stored
 * runs is made of. Tests only: not "[outside tests]", "[unattributed]" or
 * the build. `failed`: the run's metadata says the test failed. The caller
 * frees with tf_run_costs_free(), and `unit` (may be NULL) with free().
 */
typedef struct {
	char *test;
	double cost;              /* in the value's unit (`unit`) */
	tf_test_measure measure;
	bool failed;
} tf_run_cost;

int tf_compare_run_costs(tf_run_cost **out, size_t *n, char **unit, const tf_profile *run,
			 const char *value);
void tf_run_costs_free(tf_run_cost *v, size_t n);

void tf_compare_opts_init(tf_compare_opts *o);
/* The gate's settings (config.h): threshold, alpha, noise, the least
 * change, min_samples, outside. */
void tf_compare_opts_set(tf_compare_opts *o, const tf_settings *s);

/* The runs of one side. `names` (may be NULL) are shown in messages and in
 * the report, typically the files the profiles came from. */
typedef struct {
	const tf_profile *const *profiles;
	const char *const *names;
	size_t n;
} tf_compare_side;

/* A function's cost within one test, mean per run, in the summary's unit.
 * `self`: samples whose innermost frame is the function; `total`: samples
 * with the function anywhere on the stack (once per stack, even when it
 * recurses). Functions match across profiles by name and file base name
 * (base and head are often built in different directories); `file` is the
 * head's path when the head has the function. `line`: where the change is,
 * the line whose self cost moved most in the test's direction, else the
 * function's first line. */
typedef struct {
	const char *name;
	const char *file;  /* "" when unknown */
	int64_t line;      /* 0 when unknown */
	double base_self, head_self, base_total, head_total;
	double delta_self, delta_total; /* head - base */
	bool changed;      /* a sampled line of it changed (the head's "changes") */
	/* The function that called it where its self cost moved most the
	 * test's way, and that call's line: where a memory comparison's
	 * allocating function was called from (jsonp_malloc's growth came
	 * from json_object_set_new, value.c:665). NULL when its own frame was
	 * the outermost. */
	const char *caller;
	const char *caller_file;
	int64_t caller_line;
	/* A comparison of waits lists where they grew instead (its self and
	 * total are the time waited there): `name` is the blocking call (the
	 * outermost frame of the system's libraries the thread waited in, or
	 * its innermost own frame), `caller` the function that called it
	 * (NULL: none), `file` and `line` where (and caller_file and
	 * caller_line), and `reason` why the kernel
	 * kept the thread waiting ("sleep", "lock", "io", ...). NULL for a
	 * comparison of CPU time. */
	const char *reason;
	/* Of a test whose samples are too few for any function's growth to
	 * stand out from their noise (a test judged by its exact time, 0
	 * samples against 2): where its growth landed, the best there is. */
	bool within_noise;
} tf_func_delta;

/* One side of one test. */
typedef struct {
	double cost;       /* mean per run of the test's measure (summary's unit) */
	double sampled;    /* mean per run of its samples' values */
	int64_t samples;   /* sum over the runs of the side */
	size_t runs;       /* runs of the side in which the test ran */
	double wall_ns;    /* mean per run from the run metadata; NAN when unknown */
	double cpu_ns;     /* CPU between its markers; NAN when unknown */
	double runner_ns;  /* the runner's own duration; NAN when unknown */
	/* its waiting (off-CPU time), counted and left apart, and its CPU time
	 * as measured, mean per run; NAN when the runs did not record them */
	double offcpu_ns, offcpu_apart_ns, cpu_time_ns;
	bool ran;          /* it ran on this side (its runs name it) */
	/* Memory (a memory comparison; NAN when the runs do not say), means
	 * per run: the allocations and frees counted, the sampled live-heap
	 * peak and what of it was still live when the test ended (bytes),
	 * its processes' peak resident set (bytes) */
	double allocs, frees, heap_peak, leaked, rss_peak;
} tf_test_side;

typedef struct tf_test_delta {
	const char *name;
	tf_verdict verdict;
	const char *reason;        /* one line saying why this verdict */
	tf_test_side base, head;
	/* What the cost is: the exact event count of its processes (count),
	 * the CPU time between its markers (cpu), the runner's duration
	 * (runner), or its samples, as available on both sides. */
	tf_test_measure measure;
	const char *parent;        /* the test it ran inside, or NULL */
	uint32_t nested;           /* tests that ran inside it */
	bool outside;              /* "[outside tests]": gated only with gate_outside */
	bool ran_changed;          /* a sample on either side ran a changed line
				    * (the head's "changes" metadata; shift.c) */
	tf_attention attention;    /* its rank in the order of attention */
	double delta_pct;          /* (head - base) / base * 100 beyond the runner's
				    * shift; NAN for new / gone */
	double raw_delta_pct;      /* the same with the shift left in */
	double ci_low_pct;         /* 95% confidence interval of delta_pct; NAN for new / gone */
	double ci_high_pct;
	double p_value;            /* "no change", one-sided in the direction of delta; NAN for new / gone */
	double p_adjusted;         /* after the correction across tests */
	tf_compare_method method;
	double df;                 /* Welch's degrees of freedom; INFINITY for the z test */
	double noise_pct;          /* run-to-run noise assumed (single-run test), percent */
	double threshold_pct;      /* the change this test must reach to count:
				    * the gate's threshold, raised to min_delta
				    * of its base cost (the gate's for new / gone) */
	bool noise_from_history;   /* it came from the test's stored history */
	/* Confirmed alone (tf_compare_opts.decided): the alternating runs per
	 * side that decided it; 0 when it was not. */
	size_t confirm_runs;
	bool noise_from_suite;     /* from the spread of the suite's tests of its size */
	size_t noise_set_aside;    /* stored runs its history set aside as disturbed */
	/* Functions that moved most, for regressed and improved tests only:
	 * those whose self cost moved the test's way beyond the sampling noise
	 * (ancestors that only pass a change on are left out), the ones whose
	 * changed lines ran first, then by growth of self cost (regressed) or
	 * by shrinkage (improved). */
	const tf_func_delta *functions;
	size_t nfunctions;
	/* With gate.measure both: the CPU's own judgement (the fields above
	 * are the worse of it and the waiting's), the test in the waiting's
	 * comparison (tf_comparison.waits; its costs, deltas, functions and
	 * diff tree are the off-CPU time's, its deltas in percent of the
	 * base's wall time), and what grew (TF_GREW_*) when it regressed. */
	struct {
		tf_verdict verdict;
		double delta_pct, ci_low_pct, ci_high_pct, p_adjusted;
		const char *reason;
	} cpu;
	const struct tf_test_delta *wait;
	unsigned grew;
	bool waits_lead;           /* the verdict and its numbers are the waits' */
} tf_test_delta;

typedef struct {
	size_t ntests;
	size_t count[TF_VERDICT_COUNT];
	const char *event;       /* "cpu-clock", "instructions", ... (metadata), else value_type */
	const char *value_type;  /* the compared sample type: "cpu" */
	const char *unit;        /* its unit: "nanoseconds", "count" */
	double threshold;        /* percent */
	double alpha;
	double min_samples;      /* gate.min_samples; 0: by the threshold */
	double min_delta_ns;     /* gate.min_delta, 0 when none or the cost is no time */
	double min_delta_bytes;  /* gate.memory.min_bytes, 0 when none or the cost
				  * is no memory */
	/* The comparison is of memory (alloc_space, alloc_objects or
	 * inuse_space): costs are the exact counts where the runs have them
	 * (the bytes or allocations each test's threads asked for), else the
	 * sampled allocations; no runner shift, the allocations' own noise.
	 * Tests no run measured (programs the sampler could not enter) are
	 * left out, and counted. */
	bool memory;
	size_t unmeasured;
	double noise;            /* percent: the event's floor; tests without a
				  * stored history assume twice that */
	double prior_noise;      /* percent: with repeats, the spread tests are
				  * moderated with (the suite's, else noise) */
	double build_base_cost, build_head_cost; /* the "[build]" steps, apart from the tests */
	size_t measured[4];      /* tests judged by each tf_test_measure */
	/* How the machines of the two sides differ ("cpu 'A' vs 'B'; ..."),
	 * from their run files' env.* facts; NULL when they agree or do not
	 * say (tf_environment_diff). */
	const char *env_diff;
	/* Which testflame wrote each side's first run (tf_profile_made_by;
	 * NULL for another tool's profile), and, when the two measure
	 * differently (tf_profile_measure), what a reader should know. */
	const char *base_made_by, *head_made_by;
	const char *version_diff;
	/* The runner's shift (shift.c): how much slower (+) the head's machine
	 * ran, in percent, with the half-width of its 95% interval; NAN when
	 * there was no control group, and shift_note says why. Verdicts and
	 * deltas are beyond it. */
	double shift_pct, shift_ci_pct;
	size_t control_tests;    /* tests that ran no changed code */
	size_t touching_tests;   /* tests that ran changed code */
	const char *shift_note;
	const char *confirmation; /* tf_compare_opts.confirmation */
	const char *origin;       /* tf_compare_opts.origin */
	bool gate_outside;
	tf_correction correction;
	bool separate_jobs;      /* tf_compare_opts.separate_jobs */
	size_t base_runs, head_runs;
	double base_cost, head_cost;      /* the whole profile, mean per run */
	int64_t base_samples, head_samples;
	/* what the gate judged by (tf_gate_measure), and when it could not
	 * judge as asked, why ("the base has no off-CPU time"); NULL when it
	 * could */
	tf_gate_measure measure;
	const char *measure_note;
	/* the comparison of waits (tf_comparison.waits): the noise floor of
	 * a single run's waits its tests' decreases showed, ns; 0 none */
	double wait_floor_ns;
} tf_compare_summary;

typedef struct tf_comparison {
	/* Ordered by attention (tf_compare_attention), then by verdict
	 * (tf_verdict order), then by |delta_pct| (new and gone: by cost),
	 * largest first, then by name. */
	tf_test_delta *tests;
	size_t ntests;
	tf_compare_summary summary;
	/* The inputs (names always set: given, else "base run 1"...), and the
	 * value column compared in each run. */
	tf_compare_side base, head;
	const size_t *base_column, *head_column;
	/* gate.measure both, where the runs recorded off-CPU time: the same
	 * tests compared by their waiting alone (owned; NULL otherwise) */
	struct tf_comparison *waits;
	struct tf_compare_priv *priv;
} tf_comparison;

/*
 * Compare the runs of `base` with those of `head` (each side needs at least
 * one profile). Fails with TF_EINVAL when the sides measure different events
 * or value types (the message names both), when a requested value type or
 * test does not exist.
 */
int tf_compare(tf_comparison **out, const tf_compare_side *base,
	       const tf_compare_side *head, const tf_compare_opts *opts);
void tf_comparison_free(tf_comparison *c);

/* A test's rank in the order of attention, its verdict decided; the
 * threshold in percent. */
tf_attention tf_compare_attention(const tf_test_delta *t, double threshold, bool gate_outside);

/* Whether any test regressed (the gate). */
bool tf_comparison_regressed(const tf_comparison *c);
/* The test named `name`, or NULL. */
const tf_test_delta *tf_comparison_find(const tf_comparison *c, const char *name);
/* The threshold, percent, test `t` is judged by when the gate's is
 * `threshold`: the larger of the two (gate.min_delta raises a short
 * test's). Every `threshold` below is taken through it. */
double tf_test_threshold(const tf_test_delta *t, double threshold);
/* Whether test `t` of `c` looks slower, worth confirming before a build
 * fails on it: regressed, or undecided and tf_comparison_may_reach(); or
 * not significant, slower by half `threshold` or more, its interval
 * reaching `threshold` and above -`threshold`, and that slowdown half a
 * percent of the whole suite's cost. */
bool tf_comparison_suspect(const tf_comparison *c, const tf_test_delta *t, double threshold);
/* Whether undecided test `t` is slower (its 95% interval above zero) and
 * may reach `threshold` percent (the interval does), standing out of the
 * family of tests (its corrected p-value under 0.2): what more runs
 * would decide. */
bool tf_comparison_may_reach(const tf_comparison *c, const tf_test_delta *t, double threshold);
/* The test that looks slowest among those that look slower (run --confirm
 * runs the suite again for it). NULL if none. */
const tf_test_delta *tf_comparison_looks_slower(const tf_comparison *c, double threshold);
/* Metadata ("commit", "branch", ...) of the first run of a side, or NULL. */
const char *tf_comparison_meta(const tf_comparison *c, bool head, const char *key);

/* The runs' notes (testflame.note.N of each side's first run: a helper
 * that stepped aside, a go test whose results came from its cache), the
 * head's first; a note both sides have is given once, side "both". */
typedef struct {
	const char *side;   /* "head", "base" or "both" */
	const char *text;
} tf_comparison_note;
/* Up to `max` of them into `out`; returns how many there are. */
size_t tf_comparison_notes(const tf_comparison *c, tf_comparison_note *out, size_t max);

/*
 * Diff call trees, for diff flame graphs: the stacks of one test (or of all
 * tests: TF_ALL_TESTS) merged by frame name along the path from the root,
 * inlined frames expanded (the caller above the inlined callee). Values are
 * means per run in the summary's unit; a node's total includes its self.
 * nodes[0] is the root, named after the test; children are sorted by name,
 * and the nodes are in preorder (a subtree is a range of indices).
 */
#define TF_DIFF_NONE UINT32_MAX
#define TF_ALL_TESTS SIZE_MAX
/* Every test in one tree, in one pass over the samples: the root "all" has
 * one child per test (depth 1, named after the test, file ""), and below
 * each the stacks of that test. What a report that draws many tests uses. */
#define TF_EACH_TEST (SIZE_MAX - 1)

typedef struct {
	const char *name;
	const char *file;      /* the function's source file, "" when unknown */
	int64_t line;          /* the function's first line, 0 when unknown */
	uint32_t parent;       /* TF_DIFF_NONE for the root */
	uint32_t first_child;  /* TF_DIFF_NONE when a leaf */
	uint32_t next_sibling; /* TF_DIFF_NONE for the last child */
	uint32_t depth;        /* 0 for the root */
	double base_total, head_total, base_self, head_self;
} tf_diff_node;

typedef struct {
	tf_diff_node *nodes;
	size_t n;
} tf_diff_tree;

/* `test` indexes c->tests, or is TF_ALL_TESTS or TF_EACH_TEST. */
int tf_comparison_diff_tree(tf_diff_tree **out, const tf_comparison *c, size_t test);
void tf_diff_tree_free(tf_diff_tree *t);

/*
 * report.json: the whole comparison as one JSON document (schema in
 * docs/report-json.md, "schema": "testflame-report/1"). Every string is
 * escaped by jansson; invalid UTF-8 in names becomes U+FFFD.
 */
int tf_comparison_to_json(tf_buf *out, const tf_comparison *c);
/* The same with the memory comparison of the same runs (may be NULL)
 * under "memory": its tests, their allocations, peaks and leaks, and
 * whether gate.memory judged it (`memory_gated`: then its regressions
 * make the document's "regressed" true too). */
int tf_comparison_to_json_memory(tf_buf *out, const tf_comparison *c, const tf_comparison *memory,
				 bool memory_gated);

/* The terminal table. */
typedef struct {
	bool color;            /* ANSI colours (the CLI sets it on a TTY) */
	unsigned width;        /* columns to fit (default 100, minimum 72) */
	size_t max_tests;      /* rows listed; the rest summarised (default 30) */
	size_t max_functions;  /* functions per regressed test (default 5) */
	bool all;              /* list unchanged tests too (default: only changes) */
} tf_table_opts;

void tf_table_opts_init(tf_table_opts *o);
int tf_comparison_render_table(tf_buf *out, const tf_comparison *c, const tf_table_opts *o);

/* A cost in a unit, for humans: "1.23 s", "456 ms", "12.3 M" (count). */
void tf_compare_format_cost(char *buf, size_t len, double value, const char *unit);

#endif
