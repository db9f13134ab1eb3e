/*
 * run_int.h - what the run engine's files share behind run.h: the two
 * sides of a comparison and how runs are added to them, the comparison
 * with the gate's settings and the questions asked of it (does a test
 * look slower, would the gate fail, is it still undecided), the report,
 * the baseline found, confirmed and saved, and the engine's voice (the
 * caller's tf_run_io).
 *
 *   record.c    a suite recorded under the sampler (run.h)
 *   run.c       the sides, the comparison, the report, the stored mode
 *   baseline.c  the stored baseline: found, its history, kept
 *   history.c   the history note of a run that kept its baseline
 *   bisect.c    bisect: the commit that made a test slower
 *   confirm.c   a slowdown confirmed on this runner: the suspects alone
 *               (a duet), else the whole suite in alternating rounds
 *   duet.c      the duet: the suspects alone, beside the merge-base's
 *   against.c   run --against REV, built and run here
 *   shard.c     run --shard K/N
 *   merge.c     merge: the shards' run files judged as one run
 *   publish.c   the report published in CI
 *   store.c     the config a command reads and the store it opens
 */
#ifndef TESTFLAME_RUN_INT_H
#define TESTFLAME_RUN_INT_H

#include "testflame/run.h"

/* ---- the engine's voice (record.c) ---- */

void tf_run_note(const tf_run_io *io, const char *fmt, ...) TF_PRINTF(2, 3);
void tf_run_warn(const tf_run_io *io, const char *fmt, ...) TF_PRINTF(2, 3);
void tf_run_verbose(const tf_run_io *io, const char *fmt, ...) TF_PRINTF(2, 3);
void tf_run_error(const tf_run_io *io, const char *fmt, ...) TF_PRINTF(2, 3);
/* The command's own output (io->print). */
void tf_run_print(const tf_run_io *io, const char *fmt, ...) TF_PRINTF(2, 3);
/* An error notice of tf_error_last(); returns TF_EXIT_USAGE for
 * TF_EUSAGE, else TF_EXIT_ERROR. */
int tf_run_fail(const tf_run_io *io, int rc);

/* ---- the sides (run.c) ---- */

/* The runs of one side, each with its name in the report. */
typedef struct {
	TF_VEC(tf_run_result) runs;
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
/* The same with the suite alone. */
bool tf_run_record_into(tf_run_side *side, tf_run_suite *s, const char *cwd, const char *label,
			int *status);
/* Record `count` more runs of this tree, stopping early when one is
 * interrupted; the first failing exit status goes to *exit_status. False
 * when a run could not be recorded (*status says why). */
bool tf_run_record_head(tf_run_side *head, tf_run_opts *o, long count, int *exit_status,
			int *status);

/* ---- the comparison and its questions (run.c) ---- */

/* Compare the two sides with the gate's settings (the runs named with
 * `named`, for the report). */
int tf_run_compare(tf_comparison **c, const tf_run_opts *o, const tf_run_side *base,
		   const tf_run_side *head, bool named);
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
/* Whether test `t` of `c` (the alternating runs' comparison) is still
 * undecided: slower by the threshold and not proven, or slower and may
 * yet reach it, standing out or a suspect; another round may decide it. */
bool tf_run_test_open(const tf_run_opts *o, const tf_comparison *c, const tf_test_delta *t);
/* Free o->suspects, o->decided. */
void tf_run_suspects_free(tf_run_opts *o);
void tf_run_decided_free(tf_run_opts *o);
/* Free what one flow left in `o` (confirmation, origin, suspects) and
 * forget its store. */
void tf_run_flow_clear(tf_run_opts *o);

/*
 * Compare, write the report directory, say `note` and show the table, and
 * publish in CI. `base_commit` and `distance` (< 0 unknown) head the
 * report. Returns TF_EXIT_ERROR after an error notice, else TF_EXIT_OK or
 * TF_EXIT_REGRESSION as the comparison says (before the gate's
 * fail_on_regression).
 */
int tf_run_report(tf_run_opts *o, tf_run_side *base, tf_run_side *head, const char *note,
		  const char *base_commit, long distance);
/* Publishing, in CI (`c` NULL: nothing was compared, report.md says why). */
void tf_run_publish_ci(tf_run_opts *o, const tf_comparison *c, const tf_report_opts *ro,
		       const char *baseline);
/* The exit status: the suite's own failure, else the gate's. */
int tf_run_status(const tf_run_opts *o, int exit_status, bool regressed);
/*
 * What follows the comparison's inputs: compare with `base` (NULL: there
 * is none, `why` says why) and report, or write the head alone; mirror
 * the runs where the store does (Pyroscope); keep `head` as HEAD's
 * baseline where it belongs (not of a failing or interrupted suite); and
 * return the exit status: the suite's `exit_status` first, else the
 * gate's (TF_EXIT_ERROR when the report could not be written).
 */
int tf_run_finish(tf_run_opts *o, tf_store *st, tf_run_side *base, tf_run_side *head,
		  const char *note, const char *why, const char *base_commit, const char *kind,
		  int exit_status);
/* The stored mode of `run`: record, find the baseline, confirm, finish. */
int tf_run_stored(tf_run_opts *o);

/* ---- the stored baseline (baseline.c) ---- */

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
/* Whether a run that succeeds will be kept as HEAD's baseline. */
bool tf_run_will_save(const tf_run_opts *o);
/* Keep this run (its completed runs, --repeat) as the baseline of HEAD,
 * and push it in CI or with --push. */
void tf_run_save_baseline(tf_run_opts *o, tf_store *st, const tf_run_side *head,
			  const char *kind);
/* After saving it: the "history" note when this commit completed a step
 * or a drift of a test's series (history.c). */
void tf_run_history_note(tf_run_opts *o, tf_store *st, const char *kind);
/* --or-against-merge-base: the walk's start when no baseline of the suite
 * is stored near it, so the base is built and run here instead (caller
 * frees); NULL when one is stored (or there is no history). */
char *tf_run_against_if_none(tf_run_opts *o);

/* ---- confirmation (confirm.c) ---- */

/* The most rounds a confirmation of the whole suite runs. */
#define TF_CONFIRM_ROUNDS_MAX 8
/* A duet's rounds (the suspects alone): the fewest that judge (Welch's
 * test needs three runs a side) and the most, within gate.confirm_budget;
 * the gate's alpha is spent over the looks between them. */
#define TF_DUET_ROUNDS_MIN 3
#define TF_DUET_ROUNDS_MAX 20
/*
 * Confirm the suspects (o->suspects) by running only them, the merge-base
 * checked out in `wt` and this tree, in turn or at the same time (duet.c),
 * as many rounds as it takes each to be decided, from TF_DUET_ROUNDS_MIN
 * to TF_DUET_ROUNDS_MAX and within gate.confirm_budget of the suite's own
 * time (the first run of `head`; the merge-base's build, `build_ns`, apart,
 * and said). A test decided stops running; the verdicts go to o->decided
 * and stand for the first run's. True when the duet ran, *note saying how;
 * false when the suspects cannot be run alone or did not run when asked
 * (*why_not: then the whole suite is), or when a run failed to record
 * (*status).
 */
bool tf_run_duet(tf_run_opts *o, const tf_worktree *wt, const tf_run_side *head,
		 uint64_t build_ns, int *exit_status, int *status, char **why_not, char **note);
/* The tests that ran changed code and that one run against the stored
 * baseline can neither clear nor convict, added to o->suspects where a
 * duet can run them alone within gate.confirm_budget (duet.c): a line
 * saying why (to free), or NULL when there are none. */
char *tf_run_changed_unsettled(tf_run_opts *o, const tf_run_side *base,
			       const tf_run_side *head);
/* o->confirm and o->confirm_runs from the settings' confirm (--confirm over
 * gate.confirm) over the default (against with `build:`, else 2 reruns). */
void tf_run_resolve_confirm(tf_run_opts *o);
/*
 * Rounds of the base checked out in `wt` (its runs named LABEL) and of
 * this tree, alternately, into `b` and `h`: `min` rounds, then more while
 * a test is undecided (tf_run_undecided), `max` at most (`min` when it is
 * more). The first failing exit status of this tree goes to *exit_status.
 * With `why_not`, a base whose suite fails is no baseline: false, *why_not
 * saying so; without, a warning. False too when a run could not be
 * recorded or was interrupted (*status says why).
 */
bool tf_run_alternate(tf_run_opts *o, const tf_worktree *wt, const char *label, long min,
		      long max, tf_run_side *b, tf_run_side *h, int *exit_status, int *status,
		      char **why_not);
/* Confirm a suspicion against a stored baseline: when a test of `head`
 * looks slower than in `base`, build and run the merge-base `start` here
 * alternately with this tree (the sides replaced, *commit the merge-base)
 * or rerun this tree (`head` replaced), per o->confirm; o->confirmation
 * then says how. False when a run could not be recorded or was
 * interrupted (*status says why). */
bool tf_run_confirm(tf_run_opts *o, const char *start, tf_run_side *base, tf_run_side *head,
		    char commit[TF_STORE_ID_HEX + 1], int *exit_status, int *status);

/* ---- the other modes ---- */

/* run --against REV (against.c). */
int tf_run_against(tf_run_opts *o);
/* No --shard: the CI's parallel jobs say which shard this is, if any
 * (shard.c). */
void tf_run_shard_from_ci(tf_run_opts *o);
/* Record shard o->shard for `merge` (shard.c): no comparison, gate or
 * baseline; the suite's own exit status. */
int tf_run_shard(tf_run_opts *o);

#endif
