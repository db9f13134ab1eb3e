/*
 * record_common.h - what `record` and `run` share: the recording options
 * (one table, so both commands spell and document them alike), running the
 * command under the sampler with progress and notices, and writing the run
 * file with its one-line summary.
 */
#ifndef TESTFLAME_CLI_RECORD_COMMON_H
#define TESTFLAME_CLI_RECORD_COMMON_H

#include "cli.h"
#include "testflame/attribute.h"
#include "testflame/profile.h"
#include "testflame/record.h"

#define TF_RECORD_MAX_OPTS 16

typedef struct {
	const char *event, *sampler, *callgraph, *test, *suite, *split;
	long freq, stack_size;
	unsigned sources;
	int verbose;
	bool quiet;
	tf_record_opts ro;
} tf_record_cli;

typedef struct {
	tf_profile *profile;
	tf_record_info info;
	tf_attribute_stats stats;
} tf_record_result;

void tf_record_cli_init(tf_record_cli *o);
/* Append the recording options to a table; returns how many. */
size_t tf_record_cli_options(tf_record_cli *o, tf_option *out);
/* Validate and translate; prints a usage error and returns non-zero. */
int tf_record_cli_check(tf_record_cli *o, const char *const *usage);
/*
 * Run `cmd` under the sampler and build its profile. Returns true with
 * `res` filled and *status the command's exit status; false when nothing
 * could be recorded, with the reason printed and *status the exit status
 * to use (127/126 when the command could not be started, else 1).
 */
bool tf_record_cli_run(tf_record_result *res, tf_record_cli *o, char **cmd, int *status);
/* Write the run file (creating its directory) and print the summary. */
int tf_record_cli_write(tf_record_result *res, const char *path);
void tf_record_result_free(tf_record_result *res);

#endif
