/*
 * run.h - the run pipeline, the engine of `testflame record`, `run`,
 * `merge` and `bisect` (SPEC §2, §7, §9b, §13): record the suite under the
 * sampler, find the stored baseline of the merge-base (or build a revision
 * beside this tree and run both, --against), compare test by test with the
 * gate's settings, confirm a slowdown on this runner before failing the
 * build, merge a suite's shards, write the report directory, publish it in
 * CI, keep this tree's runs as HEAD's baseline where they belong, and find
 * the commit that made a test slower.
 *
 * The engine never prints and never exits: what it has to say goes
 * through the caller's callbacks (tf_run_io: one-line notices, the
 * command's own output, the comparison's table, the progress of a
 * recording), and every flow returns the exit status the command ends
 * with: the suite's own failure first, else TF_EXIT_REGRESSION when a test
 * got slower and the gate fails on it, else TF_EXIT_OK; TF_EXIT_ERROR
 * after an error notice.
 *
 * The settings come in two parts: the flags as given, which the cli's
 * option tables fill (NULL / 0 / false when not given), and what they
 * resolve to over .testflame.yml and the defaults (tf_run_prepare,
 * tf_run_resolve).
 */
#ifndef TESTFLAME_RUN_H
#define TESTFLAME_RUN_H

#include "testflame/attribute.h"
#include "testflame/compare.h"
#include "testflame/config.h"
#include "testflame/context.h"
#include "testflame/history.h"
#include "testflame/profile.h"
#include "testflame/publish.h"
#include "testflame/record.h"
#include "testflame/report.h"
#include "testflame/store.h"

/* Exit statuses (SPEC §7). `record`, `run` and `merge` pass the suite's
 * own status through (a signal death as 128+N). */
enum {
	TF_EXIT_OK = 0,
	TF_EXIT_ERROR = 1,
	TF_EXIT_USAGE = 2,
	TF_EXIT_REGRESSION = 3,
};

/* How the engine speaks: the caller's callbacks (any may be NULL). */
typedef struct {
	/* one-line messages: notes, warnings, errors, what -v shows */
	tf_notice_fn notice;
	/* the command's own output, in order with the notices: the baseline
	 * line, "no baseline yet", a shard's line, workflow annotations */
	void (*print)(void *ctx, const char *text, size_t len);
	/* the comparison's table, after the report is written */
	int (*table)(void *ctx, const tf_comparison *c, const char *report_dir);
	/* the same followed by the memory comparison's (judged by gate.memory
	 * when `gated`), in its place when the runs measured memory */
	int (*memory_table)(void *ctx, const tf_comparison *c, const tf_comparison *memory,
			    bool gated, const char *report_dir);
	/* a recording's figures while it runs */
	void (*progress)(void *ctx, const tf_record_progress *p);
	void *ctx;
	/* -1 quiet, 0, 1+ verbose: what is worth gathering for -v */
	int verbosity;
} tf_run_io;

/* ---- recording a suite (record.c) -------------------------------------- */

/* The suite and how it is recorded, for `record`, `run` and `merge`. */
typedef struct {
	/* flags; NULL / 0 when not given (the config or a default decides) */
	const char *event, *sampler, *callgraph, *follow, *test, *suite, *split, *config;
	const char *off_cpu;
	long freq, stack_size, off_cpu_max;
	bool no_python_frames;   /* --no-python-frames */
	bool memory;             /* --memory */
	const char *memory_rate; /* --memory-rate */
	bool needs_git;          /* run: git context problems are warnings */
	bool notes_said;         /* the run's notes were said (once per command) */
	const char *target_branch; /* run --target: the merge-base's other side */
	struct tf_strlist runner_reports; /* --runner-report */
	const tf_run_io *io;

	/* resolved by tf_run_prepare() */
	tf_config *cfg;
	tf_context *ctx;
	char **cmd;              /* the command, NULL-terminated */
	char *command;           /* the command as one string (metadata) */
	const char *suite_name;
	unsigned sources;
	tf_record_opts ro;
	tf_attribute_opts ao;
	TF_VEC(tf_frame_pattern) patterns;
	TF_VEC(char *) owned;    /* strings built for cmd */
	TF_VEC(const char *) reports; /* runner reports to read: flags, config */
	tf_runner_tests runner_tests; /* what the runners said ran */
	/* set by a confirmation: run only these tests (select.c), not cmd */
	const tf_selection *only;
} tf_run_suite;

/* One recorded run of the suite. */
typedef struct {
	tf_profile *profile;
	tf_record_info info;
	tf_attribute_stats stats;
} tf_run_result;

void tf_run_suite_init(tf_run_suite *s, const tf_run_io *io);
void tf_run_suite_free(tf_run_suite *s);
/*
 * Load the config (s->config, else .testflame.yml), detect the context,
 * resolve the command (`cmd`, the arguments after "--"; NULL or empty: the
 * config's) and every recording setting: flags over .testflame.yml over
 * defaults. 0, or the error (TF_EUSAGE for the user's to fix: a broken
 * config, no command) with its message.
 */
int tf_run_prepare(tf_run_suite *s, char **cmd);
/*
 * Run the command under the sampler and build its profile, tagged with the
 * context. True with `res` filled and *status the command's exit status;
 * false when nothing could be recorded, with an error notice and *status
 * the exit status to use (127/126 when the command could not be started,
 * else 1). Set s->ro.cwd to run the command elsewhere.
 */
bool tf_run_record_one(tf_run_result *res, tf_run_suite *s, int *status);
/* Write the run file (creating its directory) and say what it holds. */
int tf_run_write(const tf_run_result *res, const tf_run_suite *s, const char *path);
void tf_run_result_free(tf_run_result *res);
/* The runner kind of a result: "<event>-<sampler>-<arch>" (caller frees). */
char *tf_run_kind(const tf_run_result *res);

/* ---- run and merge ------------------------------------------------------ */

typedef enum { TF_CONFIRM_AGAINST, TF_CONFIRM_RERUN, TF_CONFIRM_NONE } tf_confirm_how;

typedef struct {
	tf_run_suite rec;
	/* flags */
	const char *against;        /* --against REV */
	const char *remote;         /* --remote */
	long repeat;                /* --repeat */
	tf_settings_flags flags;    /* the settings' flags (config.h) */
	bool save, no_save, fetch, no_fetch, push, no_push;
	bool no_publish, no_comment, no_annotations, no_step_summary;
	bool or_against_merge_base;
	const char *shard_flag;     /* --shard K/N, checked by tf_shard_parse() */
	bool no_shard;              /* --no-shard: not from the CI's parallel jobs */
	tf_shard shard;             /* total 0: the whole suite */

	/* resolved (tf_run_resolve) */
	tf_settings set;
	/* when a test looks slower than the stored baseline (gate.confirm):
	 * build and run the merge-base here, rerun this tree, or neither */
	tf_confirm_how confirm;
	long confirm_runs;          /* rerun: how many more runs */
	bool confirm_asked;         /* by --confirm or gate.confirm, not by default */
	bool confirm_alone;         /* against, the suspects alone first (confirm: alone) */

	/* the flow's state */
	bool interleaved;           /* the sides ran alternately in this job */
	bool picked;                /* only tests that looked slower ran (a duet) */
	bool together;              /* ... each run of the base at the same time as
				     * one of this tree (tf_compare_opts.paired) */
	char *confirmation;         /* how the verdict was confirmed (report) */
	/* the tests that looked slower before a rerun confirmed them, sorted:
	 * the reruns judge only these (tf_compare_opts.suspects) */
	TF_VEC(char *) suspects;
	bool only_suspects;
	/* the tests a duet decided (confirm.c): their verdicts stand */
	TF_VEC(tf_test_decided) decided;
	char *origin;               /* merge: where the head's runs came from (report) */
	char *against_owned;
	tf_test_noise *noise;       /* what the earlier baselines taught */
	size_t nnoise;
	tf_store *store;            /* the stored mode's store and runner kind */
	const char *kind;
} tf_run_opts;

void tf_run_opts_init(tf_run_opts *o, const tf_run_io *io);
void tf_run_opts_free(tf_run_opts *o);
/* Flags that contradict each other or are out of range: TF_EUSAGE with the
 * message naming them. */
int tf_run_check_flags(const tf_run_opts *o);
/* The settings both commands share (tf_settings, gate.confirm), flags over
 * o->rec.cfg over the environment over defaults. */
int tf_run_resolve(tf_run_opts *o);
/* After tf_run_prepare(): `run`'s own choices too (the shard from the CI's
 * parallel jobs, against from the config or --or-against-merge-base, the
 * runs per side), then tf_run_resolve(). */
int tf_run_resolve_run(tf_run_opts *o);
/*
 * `testflame run`: a shard (o->shard) recorded for `merge`, or the suite
 * run against the stored baseline (confirmed on this runner when a test
 * looks slower), or against o->against built here, interleaved. Returns
 * the exit status.
 */
int tf_run_main(tf_run_opts *o);

/* The run file of a shard in the report directory: "shard-K-of-N.pb.gz". */
char *tf_run_shard_file_name(tf_shard s);
/* Whether a file's name is one tf_run_shard_file_name() or the dir store
 * gives (what `merge` looks for in a directory). */
bool tf_run_is_shard_file_name(const char *name);

/* `merge`'s config and context, as `run` has them, with or without a
 * command to run (the config's `command:` lets it confirm). */
int tf_run_prepare_merge(tf_run_opts *o);
/*
 * The run files `merge` takes: `paths` (files, and directories searched
 * for shard files), else the report directory's, else the dir: store's of
 * HEAD. TF_EUSAGE with the reason when there are none. The caller frees
 * each path and the vector.
 */
typedef TF_VEC(char *) tf_run_paths;
int tf_run_merge_files(tf_run_paths *out, tf_run_opts *o, char *const *paths, size_t n);
/*
 * `testflame merge`: the shards' run files merged test by test (every
 * shard of one suite at one commit, exactly once: else TF_EXIT_USAGE),
 * then compared, confirmed, reported, published and kept as `run` does.
 * Returns the exit status.
 */
int tf_run_merge(tf_run_opts *o, char *const *files, size_t n);

/* ---- publishing a report in CI (publish.c) ------------------------------ */

typedef struct {
	const tf_comparison *c;     /* NULL when there was nothing to compare */
	const tf_report_opts *ro;   /* the report's options (suite, links, source root) */
	const char *report_dir;     /* holds report.md */
	const tf_ci *ci;
	const tf_config *cfg;
	const tf_changes *changes;  /* the PR's changed lines, NULL when unknown */
	const char *suite;
	const char *baseline;       /* the baseline's commit, for outputs */
	bool comment, annotations, step_summary;
	const tf_run_io *io;
} tf_run_publish_in;

/*
 * The CI-side end of a report: GitHub workflow annotations (the io's
 * print), the step summary, $GITHUB_OUTPUT, and the sticky comment with
 * its review comments, with one notice for each thing done or not done and
 * why. 0 when everything asked for was done or deliberately skipped (no
 * PR, no token, a fork's read-only token), else 1 after saying the
 * problem: as a warning when `warn_only` (run: publishing never changes
 * its exit status), else as an error.
 */
int tf_run_publish(const tf_run_publish_in *in, bool warn_only);

/* One publishing switch: the flag that turns it off, else the config's
 * tri-state, else on. */
static inline bool tf_run_publish_switch(bool off_flag, int config_value)
{
	return !off_flag && tf_config_bool(config_value, true);
}

/* ---- the config a command reads and the store it opens (store.c) ------- */

/* .testflame.yml (`path`, else the repository's; tf_config_load), with its
 * `store:` checked by the store: TF_EUSAGE naming FILE:LINE:COLUMN. */
int tf_run_config_load(tf_config **out, const char *path);
/*
 * Open the store every command that touches baselines uses: --store
 * (`flag`), else `store:` in `cfg`, else $TESTFLAME_STORE, else git; with
 * `remote` (NULL: the spec's, else origin) for fetch and push, the config's
 * Pyroscope credentials where the environment has none, and the store's
 * notices through `io`. `cfg` NULL loads .testflame.yml here first.
 */
int tf_run_store_open(tf_store **out, const char *flag, const tf_config *cfg,
		      const char *remote, const tf_run_io *io);

/* ---- bisect (bisect.c) -------------------------------------------------- */

/* Rounds of GOOD and a candidate at most (while undecided). */
#define TF_RUN_BISECT_ROUNDS_MAX 8

/* What `testflame bisect` found. */
typedef struct {
	tf_bisect_range r;        /* the first-parent range, GOOD first, BAD last */
	/* r.commits[hi] is the first slower commit; when `narrowed`, it is one
	 * of lo+1..hi, the others skipped */
	size_t lo, hi;
	bool narrowed;
	const char *how;          /* how it was found ("measured here, alternating") */
	double size;              /* the step's size, percent */
	/* measured here against GOOD; rounds 0 when it was not */
	double delta, ci_low, ci_high; /* percent, 95% interval */
	size_t rounds;
	const tf_history_fn *functions; /* what moved (measured, or the stored runs') */
	size_t nfunctions;
	bool *skipped;            /* per commit of r: did not build, or its suite failed */
	char **skip_why;          /* per commit of r: why it was skipped, or NULL */
	/* what `functions` points into */
	tf_history_fn *measured_functions;
	tf_history_explained stored;
} tf_run_bisect_result;

/*
 * `testflame bisect TEST GOOD BAD`: the commit of GOOD..BAD's first-parent
 * range that made `test` slower. The store's runs (`store`: the --store
 * flag, as tf_run_store_open) answer where they show the step between
 * neighbours; else commits are checked out beside this tree, built (the
 * config's `build:`) and run with `s`'s command alternately with GOOD,
 * `rounds` rounds each (0: 3; more, up to TF_RUN_BISECT_ROUNDS_MAX, while
 * undecided), halving as `git bisect run` does. `s` as tf_run_prepare()
 * left it. TF_EXIT_OK with `out` filled (free it with
 * tf_run_bisect_result_clear() either way), else the exit status after an
 * error notice.
 */
int tf_run_bisect(tf_run_bisect_result *out, tf_run_suite *s, const char *test, const char *good,
		  const char *bad, const char *store, long rounds);
void tf_run_bisect_result_clear(tf_run_bisect_result *out);

#endif
