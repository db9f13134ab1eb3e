/*
 * shard.h - a suite split across CI jobs, from the command line:
 * `run --shard K/N` (or the CI's own parallel jobs) records one part of
 * the suite into a run file tagged with its shard, and `merge` finds those
 * files (named here) to merge and judge them as one run.
 */
#ifndef TESTFLAME_RUN_SHARD_H
#define TESTFLAME_RUN_SHARD_H

#include "run/run.h"

/* The run file of a shard in the report directory: "shard-K-of-N.pb.gz". */
char *tf_cli_shard_file_name(tf_shard s);
/* Whether a file's name is one tf_cli_shard_file_name() or the dir store
 * gives (what `merge` looks for in a directory). */
bool tf_cli_is_shard_file_name(const char *name);

/* --shard and --no-shard, checked against each other and against what a
 * shard does not do (--against, --save): TF_EXIT_USAGE after saying
 * what, else 0 with o->shard set. */
int tf_run_shard_flags(tf_run_opts *o, const char *const *usage);
/* No --shard: the CI's parallel jobs say which shard this is, if any. */
void tf_run_shard_from_ci(tf_run_opts *o);
/*
 * Record shard o->shard (the command sees TESTFLAME_SHARD_INDEX and
 * TESTFLAME_SHARD_TOTAL, so a suite can split itself), --repeat times,
 * into one run file tagged testflame.shard=K/N in the report directory
 * and, with a dir: store, in the store's shard files. Nothing is
 * compared, published, gated or saved as a baseline: `merge` does that
 * for the whole suite. Returns the suite's own exit status (1 when
 * nothing could be recorded or written).
 */
int tf_run_shard(tf_run_opts *o);

#endif
