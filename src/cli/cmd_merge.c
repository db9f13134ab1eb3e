/*
 * cmd_merge.c - `testflame merge [options] [FILE|DIR...]`, the fan-in job of
 * a suite split across parallel CI jobs (SPEC §2, §13): the shards' run
 * files (named here, else the report directory's, else the dir: store's)
 * merged test by test and judged as one run of the whole suite, as `run`
 * judges one, with the confirmation `run` makes when this job can run the
 * suite. The flow is the run engine's (run/merge.c).
 *
 * Exit status: a failing shard's own status first; else 3 on a regression
 * (unless the gate is off); else 0. Files that are not every shard exactly
 * once, of one commit and suite: 2, with one line saying which.
 */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const merge_usage[] = {
	"testflame merge [options] [FILE|DIR...]",
	"",
	"The fan-in job of a sharded suite: merges the run files of `testflame run",
	"--shard K/N` test by test (files, and directories searched for shard-*.pb.gz;",
	"default: the report directory, else the dir: store's shards of HEAD), then",
	"compares with the baseline of the merge-base, reports, publishes, keeps the",
	"baseline and exits 3 on a regression, as `run` does. A test that looks slower",
	"is confirmed here, as `run` confirms it, when .testflame.yml names the suite's",
	"command and build.",
	NULL,
};

int cmd_merge(int argc, char **argv)
{
	tf_cli_out out = { 0 };
	tf_run_io io = { 0 };
	tf_run_opts o;
	tf_run_paths files = { 0 };
	tf_option *run_opts;
	int nargs, status, rc;

	tf_run_opts_init(&o, &io);
	run_opts = tf_cli_run_options(&o, &out);
	const tf_option opts[] = {
		TF_OPT_GROUP("baseline and gate:"),
		TF_OPT_STRING(0, "confirm", &o.flags.confirm, "HOW",
			      "when a test looks slower and the config names the suite's command and build: alone (build the merge-base, run the tests that looked slower alone where their runner can, both sides in turn), against (the same with the whole suite), rerun, N reruns, or none (default: alone)"),
		TF_OPT_INCLUDE(run_opts),
		TF_OPT_GROUP("general:"),
		TF_OPT_STRING(0, "config", &o.rec.config, "FILE",
			      "the config file (default: .testflame.yml at the repository root)"),
		TF_OPT_QUIET(&out.quiet, TF_RUN_QUIET_HELP),
		TF_OPT_VERBOSE(&out.verbose, "say more (repeat for more)"),
		TF_OPTS_END,
	};

	nargs = tf_parse_options(argc, argv, opts, merge_usage, 0, NULL);
	status = nargs == -2 ? TF_EXIT_OK : nargs < 0 ? TF_EXIT_USAGE : 0;
	if (nargs < 0)
		goto out;
	if (tf_run_check_flags(&o)) {
		status = tf_usage_error(merge_usage, "%s", tf_error_last());
		goto out;
	}
	tf_cli_io(&io, &out);
	if ((rc = tf_run_prepare_merge(&o)) || (rc = tf_run_resolve(&o)) ||
	    (rc = tf_run_merge_files(&files, &o, argv + 1, (size_t)(nargs - 1)))) {
		status = tf_fail(rc);
		goto out;
	}
	status = tf_run_merge(&o, files.v, files.n);
out:
	for (size_t i = 0; i < files.n; i++)
		free(files.v[i]);
	tf_vec_free(&files);
	tf_run_opts_free(&o);
	free(run_opts);
	return status;
}
