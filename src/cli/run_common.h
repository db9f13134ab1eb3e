/*
 * run_common.h - the runs of `testflame run`, which its two modes (against
 * the stored baseline, --against REV built here) handle alike: recording
 * them, comparing two sides with the gate's settings, writing the report,
 * printing the table and publishing it, and keeping this tree's runs as
 * HEAD's baseline.
 */
#ifndef TESTFLAME_CLI_RUN_COMMON_H
#define TESTFLAME_CLI_RUN_COMMON_H

#include "record_common.h"
#include "testflame/compare.h"
#include "testflame/report.h"
#include "testflame/store.h"

/* run's options, resolved: flags over .testflame.yml over defaults. */
typedef struct {
	tf_record_cli rec;
	const char *against, *store_spec, *report_dir, *remote;
	long repeat;
	/* when a test looks slower than the stored baseline (gate.confirm):
	 * build and run the merge-base here, rerun this tree, or neither */
	const char *confirm_flag;   /* --confirm */
	enum { TF_CONFIRM_AGAINST, TF_CONFIRM_RERUN, TF_CONFIRM_NONE } confirm;
	long confirm_runs;          /* rerun: how many more runs */
	bool confirm_asked;         /* by --confirm or gate.confirm, not by default */
	bool interleaved;           /* the sides ran alternately in this job */
	const char *confirmation;   /* how the verdict was confirmed (report) */
	/* the tests that looked slower before a rerun confirmed them, sorted:
	 * the reruns judge only these (tf_compare_opts.suspects) */
	TF_VEC(char *) suspects;
	bool only_suspects;
	const char *origin;         /* merge: where the head's runs came from (report) */
	double threshold;
	const char *min_delta;      /* --min-delta, else gate.min_delta */
	double min_delta_ns;
	const char *measure_flag;   /* --measure, else gate.measure */
	tf_gate_measure measure;
	bool save, no_save, no_fail, fetch, no_fetch, push, no_push, all;
	bool no_publish, no_comment, no_annotations, no_step_summary;
	bool or_against_merge_base;
	char *against_owned;
	const char *color;
	long history;               /* earlier baselines to learn noise from */
	tf_test_noise *noise;       /* what they taught */
	size_t nnoise;
	tf_store *store;            /* run_stored: its store and runner kind (Pyroscope's links) */
	const char *kind;
	/* run --shard K/N: record shard K of N for `merge` (shard_common.c) */
	const char *shard_flag;     /* --shard */
	bool no_shard;              /* --no-shard: not from the CI's parallel jobs */
	tf_shard shard;             /* total 0: the whole suite */
	tf_option *options;         /* the table of tf_run_cli_options() */
} tf_run_opts;

/* The options `run` and `merge` share (the baseline, the gate, the report,
 * publishing), a table over `o` for a command's own table to include; it
 * lives as long as `o` (free o->options). */
const tf_option *tf_run_cli_options(tf_run_opts *o);
/* Flags that contradict each other or are out of range: TF_EXIT_USAGE
 * after saying which, else 0. */
int tf_run_check_flags(const tf_run_opts *o, const char *const *usage);
/* The shared settings, flags over .testflame.yml over defaults (needs
 * o->rec.cfg). */
void tf_run_resolve(tf_run_opts *o);

/* The runs of one side, each with its name in the report. */
typedef struct {
	TF_VEC(tf_record_result) runs;
	TF_VEC(char *) names;
} tf_run_side;

void tf_run_side_free(tf_run_side *s);
/* Add a run that was not recorded here (a stored baseline's); `name` is
 * the side's from now on. */
void tf_run_side_add(tf_run_side *s, tf_profile *p, char *name);
/* Record one run of the command in `cwd` (NULL: here) into `side`, named
 * "LABEL run N". False when nothing was recorded; *status is the
 * command's exit status either way. */
bool tf_run_record(tf_run_side *side, tf_run_opts *o, const char *cwd, const char *label,
		   int *status);
/* o->confirm and o->confirm_runs from --confirm over gate.confirm over
 * the default (against with `build:`, else 2 reruns); TF_EXIT_USAGE after
 * saying what is wrong with the setting. */
int tf_run_resolve_confirm(tf_run_opts *o, const char *const *usage);
/* Confirm a suspicion against a stored baseline (run_confirm.c): when a
 * test of `head` looks slower than in `base`, build and run the merge-base
 * `start` here alternately with this tree (the sides replaced, *commit
 * the merge-base) or rerun this tree (`head` replaced), per o->confirm;
 * o->confirmation then says how. False when a run could not be recorded
 * or was interrupted (*status says why). */
bool tf_run_confirm(tf_run_opts *o, const char *start, tf_run_side *base, tf_run_side *head,
		    char commit[TF_STORE_ID_HEX + 1], int *exit_status, int *status);
/* The most rounds a confirmation runs. */
#define TF_CONFIRM_ROUNDS_MAX 8
/*
 * Rounds of the base checked out in `wt` (its runs named LABEL) and of
 * this tree, alternately, into `b` and `h`: `min` rounds, then more while
 * a test is undecided (tf_run_undecided), `max` at most (`min` when it is
 * more). The first failing
 * exit status of this tree goes to *exit_status. With `why_not`, a base
 * whose suite fails is no baseline: false, *why_not saying so; without,
 * a warning. False too when a run could not be recorded or was
 * interrupted (*status says why).
 */
bool tf_run_alternate(tf_run_opts *o, const tf_worktree *wt, const char *label, long min,
		      long max, tf_run_side *b, tf_run_side *h, int *exit_status, int *status,
		      char **why_not);
/* Record `count` more runs of this tree, stopping early when one is
 * interrupted; the first failing exit status goes to *exit_status. False
 * when a run could not be recorded (*status says why). */
bool tf_run_record_head(tf_run_side *head, tf_run_opts *o, long count, int *exit_status,
			int *status);

/* A line naming the test that looks slowest of those that look slower
 * than the base (to free), or NULL when none does; o->suspects then names
 * them all. */
char *tf_run_looks_slower(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head);
/* The same for the tests the gate would fail the build on: a line naming
 * the one that regressed most, or NULL when none did. */
char *tf_run_would_fail(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head);
/* Whether comparing the alternating runs `base` and `head` with the gate's
 * settings (as the verdict will be made) leaves a slowdown the size of
 * the threshold undecided: another round of confirmation is worth it. */
bool tf_run_undecided(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head);
/* Free o->suspects. */
void tf_run_suspects_free(tf_run_opts *o);
/*
 * Compare, write the report directory, print `note` and the table, and
 * publish in CI. `base_commit` and `distance` (< 0 unknown) head the
 * report. Returns TF_EXIT_ERROR after printing why, else TF_EXIT_OK or
 * TF_EXIT_REGRESSION as the comparison says (before --no-fail).
 */
int tf_run_report(tf_run_opts *o, tf_run_side *base, tf_run_side *head, const char *note,
		  const char *base_commit, long distance);
/* Publishing, in CI, when nothing was compared (report.md says why). */
void tf_run_publish(tf_run_opts *o, const tf_comparison *c, const tf_report_opts *ro,
		    const char *baseline);
/* The exit status: the suite's own failure, else the gate's. */
int tf_run_status(const tf_run_opts *o, int exit_status, bool regressed);
/* First-parent steps from HEAD back to `commit`; -1 when it is not on that
 * line (a merge of the target into the branch) or unknown. */
long tf_run_head_distance(const tf_context *ctx, const char *commit);

/*
 * The stored baseline nearest to `start` into `base`, its commit into
 * `commit` and the line that introduces it into *note; learns the noise
 * history on the way. False when there is none, *why saying why (for
 * report.md).
 */
bool tf_run_find_baseline(tf_run_opts *o, tf_store *st, const char *start, const char *kind,
			  tf_run_side *base, char commit[TF_STORE_ID_HEX + 1], char **note,
			  char **why);
/*
 * What follows the comparison's inputs: compare with `base` (NULL: there
 * is none, `why` says why) and report, or write the head alone; push to
 * Pyroscope; keep `head` as HEAD's baseline where it belongs (not of a
 * failing or interrupted suite); and return the exit status: the suite's
 * `exit_status` first, else the gate's (TF_EXIT_ERROR when the report
 * could not be written).
 */
int tf_run_finish(tf_run_opts *o, tf_store *st, tf_run_side *base, tf_run_side *head,
		  const char *note, const char *why, const char *base_commit, const char *kind,
		  int exit_status);

/* Whether a run that succeeds will be kept as HEAD's baseline. */
bool tf_run_will_save(const tf_run_opts *o);
/* Keep this run (its completed runs, --repeat) as the baseline of HEAD,
 * and push it in CI or with --push. */
void tf_run_save_baseline(tf_run_opts *o, tf_store *st, const tf_run_side *head,
			  const char *kind);
/* After saving it: the "history" note when this commit completed a step
 * or a drift of a test's series (run_history.c). */
void tf_run_history_note(tf_run_opts *o, tf_store *st, const char *kind);

#endif
