/*
 * cmd_record.c - `testflame record [options] -- CMD [ARGS...]`: run a command
 * under the sampler and write one run file (gzip pprof).
 *
 * The command's stdin, stdout, stderr, environment and working directory
 * are its own; testflame speaks only on stderr, one line at a time, and
 * exits with the command's own exit status (128+N for a signal death), so
 * it can wrap any test command in a script or a CI step unnoticed.
 */
#include "cli.h"
#include "run/record.h"

#include <stdlib.h>
#include <string.h>

static const char *const record_usage[] = {
	"testflame record [options] [-- CMD [ARGS...]]",
	"",
	"Runs CMD (or the config's command) under the sampling profiler and writes",
	"one run file, attributed per test. Exits with CMD's exit status.",
	NULL,
};

int cmd_record(int argc, char **argv)
{
	tf_record_cli rc_opts;
	const char *output = "testflame-out/run.pb.gz";
	int dashdash, nargs, status;
	tf_record_result res;

	tf_record_cli_init(&rc_opts);
	const tf_option opts[] = {
		TF_OPT_STRING('o', "output", &output, "FILE",
			      "where to write the run file (default testflame-out/run.pb.gz)"),
		TF_OPT_INCLUDE(tf_record_cli_options(&rc_opts)),
		TF_OPTS_END,
	};

	nargs = tf_parse_options(argc, argv, opts, record_usage, TF_PARSE_STOP_AT_NONOPT,
				 &dashdash);
	status = nargs == -2 ? TF_EXIT_OK : nargs < 0 ? TF_EXIT_USAGE
		 : tf_record_cli_args(record_usage, "record", argv, nargs, dashdash);
	if (nargs < 0 || status)
		goto out;
	status = tf_record_cli_prepare(&rc_opts, record_usage, nargs > 1 ? argv + 1 : NULL);
	/* false: could not record, or could not start the command */
	if (!status && tf_record_cli_run(&res, &rc_opts, &status)) {
		if (tf_record_cli_write(&res, output))
			status = status ? status : TF_EXIT_ERROR;
		tf_record_result_free(&res);
	}
out:
	tf_record_cli_free(&rc_opts);
	return status;
}
