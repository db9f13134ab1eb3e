/*
 * cmd_run.c - `testflame run [options] [-- CMD...]`, the main job (SPEC §2,
 * §7): record the suite, find its baseline, compare test by test, write the
 * report directory, print the summary, keep the baseline where it belongs,
 * and set the exit status.
 *
 * Two ways to get a baseline:
 *   stored     the run file of the nearest commit on the first-parent
 *              history of the merge-base that has one for this suite and
 *              runner kind (the git repository's refs under refs/testflame/runs, or
 *              --store dir:PATH), fetched from the remote in CI;
 *   --against  REV exported into a temporary directory, built with the
 *              config's `build`, and run interleaved with this tree
 *              (A B A B, --repeat N times each) on this machine: the same
 *              noise for both sides, the most reliable mode on shared
 *              runners.
 *
 * One run against a stored baseline is the cheap, usual case, and the
 * noisiest; a test that looks slower is confirmed on this runner before the
 * build fails (run/confirm.c).
 *
 * In CI the report then goes out (run/publish.c): annotations, step
 * summary, outputs and the PR/MR comment. Publishing problems are
 * warnings: they never change the exit status.
 *
 * Exit status: the command's own failure first; else 3 when a test
 * regressed (unless the gate is off); else 0. No baseline is not an error.
 * A shard (--shard K/N, or the CI's parallel jobs) only records its part of
 * the suite, for `merge` (run/shard.c), and exits with the suite's status.
 *
 * This file is the command: its options (and the baseline, gate, report
 * and publishing options `merge` shares), and what it prints; the flow of
 * its modes is the run engine's (src/run, testflame/run.h).
 */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const run_usage[] = {
	"testflame run [options] [-- CMD [ARGS...]]",
	"",
	"Runs the suite under the profiler, compares every test with the baseline",
	"of the merge-base (or with --against REV, built and run here), writes the",
	"report directory and exits 3 when a test got slower beyond noise.",
	NULL,
};

tf_option *tf_cli_run_options(tf_run_opts *o, tf_cli_out *out)
{
	const tf_option opts[] = {
		TF_OPT_STRING(0, "threshold", &o->flags.threshold, "PCT",
			      "smallest slowdown that fails the gate (default 5)"),
		TF_OPT_STRING(0, "min-delta", &o->flags.min_delta, "TIME",
			      "smallest change of a test's time a run that counts (default 1ms; 0: none)"),
		TF_OPT_STRING(0, "measure", &o->flags.measure, "WHAT",
			      "judge tests by their CPU time and their waits apart (both, the default), "
			      "by CPU alone, or by wall time", .choices = tf_gate_measure_names),
		TF_OPT_STRING(0, "target", &o->rec.target_branch, "BRANCH",
			      "the branch to compare with (default: the PR's base, else the default branch)"),
		TF_OPT_STRING(0, "store", &o->flags.store, "SPEC",
			      "where baselines live: git (default), git:REMOTE, dir:PATH, pyroscope:URL"),
		TF_OPT_STRING(0, "remote", &o->remote, "NAME",
			      "the git remote baselines are fetched from and pushed to (default origin)"),
		TF_OPT_FLAG(0, "save", &o->save,
			    "save this run as HEAD's baseline (default: on the default branch, clean tree)"),
		TF_OPT_FLAG(0, "no-save", &o->no_save, "never save a baseline"),
		TF_OPT_FLAG(0, "push", &o->push, "push a saved baseline to the remote (default in CI)"),
		TF_OPT_FLAG(0, "no-push", &o->no_push, "never push baselines"),
		TF_OPT_FLAG(0, "fetch", &o->fetch,
			    "fetch baselines from the remote outside CI too (default in CI)"),
		TF_OPT_FLAG(0, "no-fetch", &o->no_fetch, "do not fetch baselines from the remote"),
		TF_OPT_INT(0, "history", &o->flags.history, "N",
			   "learn each test's noise from up to N stored baselines (default 10; 1 = off)",
			   1, 1000),
		TF_OPT_FLAG(0, "no-fail", &o->flags.no_fail, "report regressions but exit 0"),
		TF_OPT_GROUP("report:"),
		TF_OPT_STRING(0, "report", &o->flags.report_dir, "DIR",
			      "the report directory (default testflame-report)"),
		TF_OPT_FLAG(0, "all", &out->all, "list unchanged tests too"),
		TF_OPT_STRING(0, "color", &out->colour, "WHEN", "colour the table",
			      .choices = tf_cli_colour_choices),
		TF_OPT_GROUP("publishing (in CI):"),
		TF_OPT_FLAG(0, "no-publish", &o->no_publish,
			    "no comment, annotations, step summary or outputs"),
		TF_OPT_FLAG(0, "no-comment", &o->no_comment, "no PR/MR comment (publish.comment)"),
		TF_OPT_FLAG(0, "no-annotations", &o->no_annotations,
			    "no annotations or review comments (publish.annotations)"),
		TF_OPT_FLAG(0, "no-step-summary", &o->no_step_summary,
			    "no $GITHUB_STEP_SUMMARY (publish.step_summary)"),
		TF_OPTS_END,
	};

	return tf_cli_options_dup(opts, sizeof(opts));
}

int cmd_run(int argc, char **argv)
{
	tf_cli_out out = { 0 };
	tf_run_io io = { 0 };
	tf_run_opts o;
	tf_option *rec_opts, *run_opts;
	int dashdash, nargs, status, rc;

	tf_run_opts_init(&o, &io);
	o.rec.needs_git = true;
	out.quiet_help = TF_RUN_QUIET_HELP;
	rec_opts = tf_cli_record_options(&o.rec, &out);
	run_opts = tf_cli_run_options(&o, &out);
	const tf_option opts[] = {
		TF_OPT_INCLUDE(rec_opts),
		TF_OPT_GROUP("baseline and gate:"),
		TF_OPT_STRING(0, "against", &o.against, "REV",
			      "build REV in a temporary checkout and run both here, interleaved"),
		TF_OPT_FLAG(0, "or-against-merge-base", &o.or_against_merge_base,
			    "when no baseline is stored, build the merge-base beside and run both (the pre-push hook)"),
		TF_OPT_INT(0, "repeat", &o.repeat, "N", "runs per side (default 1; 3 with --against)", 1, 1000),
		TF_OPT_STRING(0, "confirm", &o.flags.confirm, "HOW",
			      "when a test looks slower than its stored baseline: alone (build the merge-base, run the suspect tests alone where their runner can, the two sides in pairs), against (the same with the whole suite), rerun, N reruns, or none (default: alone with build:, else 2 reruns)"),
		TF_OPT_STRING(0, "shard", &o.shard_flag, "K/N",
			      "record shard K of N and keep its run file for `testflame merge` (default: GitLab's and CircleCI's parallel jobs); no comparison, gate or baseline here"),
		TF_OPT_FLAG(0, "no-shard", &o.no_shard, "the whole suite, whatever the CI's parallel jobs say"),
		TF_OPT_INCLUDE(run_opts),
		TF_OPTS_END,
	};

	nargs = tf_parse_options(argc, argv, opts, run_usage, TF_PARSE_STOP_AT_NONOPT, &dashdash);
	status = nargs == -2 ? TF_EXIT_OK : nargs < 0 ? TF_EXIT_USAGE
		 : tf_cli_record_args(run_usage, "run", argv, nargs, dashdash);
	if (nargs < 0 || status)
		goto out;
	if (tf_run_check_flags(&o)) {
		status = tf_usage_error(run_usage, "%s", tf_error_last());
		goto out;
	}
	tf_cli_io(&io, &out);
	if ((rc = tf_run_prepare(&o.rec, nargs > 1 ? argv + 1 : NULL)) ||
	    (rc = tf_run_resolve_run(&o))) {
		status = tf_fail(rc);
		goto out;
	}
	status = tf_run_main(&o);
out:
	tf_run_opts_free(&o);
	free(rec_opts);
	free(run_opts);
	return status;
}
