/*
 * record_common.h - what `record` and `run` share: the recording options
 * (one table, so both commands spell and document them alike), the
 * .testflame.yml defaults under them, the run's git/CI context, running the
 * command under the sampler with progress and notices, and writing the run
 * file with its one-line summary.
 */
#ifndef TESTFLAME_CLI_RECORD_COMMON_H
#define TESTFLAME_CLI_RECORD_COMMON_H

#include "cli.h"
#include "testflame/attribute.h"
#include "testflame/config.h"
#include "testflame/context.h"
#include "testflame/profile.h"
#include "testflame/record.h"

typedef struct {
	/* flags; NULL / 0 when not given (the config or a default decides) */
	const char *event, *sampler, *callgraph, *follow, *test, *suite, *split, *config;
	const char *off_cpu;
	long freq, stack_size, off_cpu_max;
	int verbose;
	bool quiet;
	bool no_python_frames;   /* --no-python-frames */
	bool needs_git;          /* run: git context problems are warnings */
	bool notes_said;         /* the run's notes were printed (once per command) */
	const char *target_branch; /* run --target: the merge-base's other side */
	struct tf_strlist runner_reports; /* --runner-report */

	/* resolved by tf_record_cli_prepare() */
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
	tf_option *options;      /* the table of tf_record_cli_options() */
	TF_VEC(const char *) reports; /* runner reports to read: flags, config */
	tf_runner_tests runner_tests; /* what the runners said ran */
} tf_record_cli;

typedef struct {
	tf_profile *profile;
	tf_record_info info;
	tf_attribute_stats stats;
} tf_record_result;

void tf_record_cli_init(tf_record_cli *o);
/* The recording options, a table over `o`'s flags for a command's own
 * table to include (TF_OPT_INCLUDE); it lives as long as `o`. */
const tf_option *tf_record_cli_options(tf_record_cli *o);
/*
 * Check what follows the options of `record` or `run` (`name`), parsed
 * with TF_PARSE_STOP_AT_NONOPT: nothing, or "--" and the command. Returns
 * 0, or TF_EXIT_USAGE after printing what is wrong.
 */
int tf_record_cli_args(const char *const *usage, const char *name, char **argv, int nargs,
		       int dashdash);
/*
 * Load the config, detect the context, resolve the command (`cmd`, the
 * arguments after "--", may be empty when the config names one) and every
 * setting: flags over .testflame.yml over defaults. Prints the problem and
 * returns the exit status to use (2 usage, 1 error), or 0.
 */
int tf_record_cli_prepare(tf_record_cli *o, const char *const *usage, char **cmd);
/*
 * Run the command under the sampler and build its profile, tagged with the
 * context. Returns true with `res` filled and *status the command's exit
 * status; false when nothing could be recorded, with the reason printed and
 * *status the exit status to use (127/126 when the command could not be
 * started, else 1). Set o->ro.cwd to run the command elsewhere.
 */
bool tf_record_cli_run(tf_record_result *res, tf_record_cli *o, int *status);
/* Write the run file (creating its directory) and print the summary. */
int tf_record_cli_write(tf_record_result *res, const char *path);
/* Encode the run file into memory (for stores). */
int tf_record_cli_encode(tf_buf *out, const tf_record_result *res);
void tf_record_result_free(tf_record_result *res);
void tf_record_cli_free(tf_record_cli *o);

/* The runner kind of a result: "<event>-<sampler>-<arch>" (caller frees). */
char *tf_record_kind(const tf_record_result *res);

#endif
