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
 * build fails (run_confirm.c).
 *
 * In CI the report then goes out (publish_common.c): annotations, step
 * summary, outputs and the PR/MR comment. Publishing problems are
 * warnings: they never change the exit status.
 *
 * Exit status: the command's own failure first; else 3 when a test
 * regressed (unless the gate is off); else 0. No baseline is not an error.
 * A shard (--shard K/N, or the CI's parallel jobs) only records its part of
 * the suite, for `merge` (shard_common.c), and exits with the suite's status.
 *
 * This file is the command and the flow of its two modes; the work is the
 * engine's: the baseline found, read and split into runs, and the history
 * behind it (store/runs.c), the checkout of REV (context/worktree.c), the
 * verdicts (compare/); what happens to the runs either way (recording,
 * comparing, the report and publishing, saving) is in run_common.c.
 */
#include "pyroscope_common.h"
#include "report_common.h"
#include "run_common.h"
#include "shard_common.h"
#include "store_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const run_usage[] = {
	"testflame run [options] [-- CMD [ARGS...]]",
	"",
	"Runs the suite under the profiler, compares every test with the baseline",
	"of the merge-base (or with --against REV, built and run here), writes the",
	"report directory and exits 3 when a test got slower beyond noise.",
	NULL,
};

/* Run the config's build in the checkout of REV (`here`: in this tree). */
static bool build(const tf_run_opts *o, const tf_worktree *wt, bool here)
{
	const char *cmd = o->rec.cfg->build;
	int st;

	if (here)
		tf_notef("building this tree: %s", cmd);
	else
		tf_notef("building %.12s: %s", tf_worktree_commit(wt), cmd);
	st = tf_worktree_run(wt, cmd, here);
	if (st == 0)
		return true;
	if (here)
		tf_errorf("the build of this tree failed: %s", cmd);
	else
		tf_errorf("the build of '%s' failed (exit status %d): %s", o->against,
			  WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), cmd);
	return false;
}

/*
 * --against REV: build REV beside us, run both sides interleaved, --repeat
 * rounds and more while a slowdown is undecided (eight in all). A test the
 * gate would fail on after those rounds must be slower again in as many
 * new rounds (three to eight, while undecided), judged on those alone:
 * the first rounds were picked for looking slow, and a neighbour that
 * came during one of them is no regression. Only what looked slower then,
 * or ran changed code, can fail. --confirm none: --repeat rounds, judged.
 */
static int run_against(tf_run_opts *o)
{
	tf_worktree *wt = NULL;
	tf_run_side base = { 0 }, head = { 0 };
	const char *commit;
	char *note = NULL, *why = NULL;
	int rc, st, status = TF_EXIT_ERROR, exit_status = 0;

	if ((rc = tf_worktree_create(&wt, o->against, NULL))) {
		status = tf_fail(rc);
		goto done;
	}
	commit = tf_worktree_commit(wt);
	tf_notef("checking out %.12s (%s) into '%s'", commit, o->against, tf_worktree_root(wt));
	if (o->rec.cfg->build && (!build(o, wt, false) || !build(o, wt, true)))
		goto done;

	/* A B A B: both sides meet the same machine, warm caches and noise;
	 * more rounds while a slowdown is undecided, unless --confirm none */
	if (!tf_run_alternate(o, wt, "base", o->repeat,
			      o->confirm == TF_CONFIRM_NONE ? o->repeat : TF_CONFIRM_ROUNDS_MAX,
			      &base, &head, &exit_status, &st, NULL))
		goto failed;
	size_t first = head.runs.n;
	if (o->confirm != TF_CONFIRM_NONE && !exit_status &&
	    (why = tf_run_would_fail(o, &base, &head))) {
		tf_run_side b = { 0 }, h = { 0 };
		long min = o->repeat < 3 ? 3 : o->repeat;
		tf_notef("%s in %zu rounds; running both again to confirm, judged on the new rounds",
			 why, first);
		if (!tf_run_alternate(o, wt, "base", min, TF_CONFIRM_ROUNDS_MAX, &b, &h,
				      &exit_status, &st, NULL)) {
			tf_run_side_free(&b);
			tf_run_side_free(&h);
			goto failed;
		}
		tf_run_side_free(&base);
		tf_run_side_free(&head);
		base = b;
		head = h;
		o->only_suspects = true;
		o->confirmation = tf_xasprintf("%s in the first %zu rounds; so both were run "
					       "alternately %zu more times and judged on those",
					       why, first, head.runs.n);
	}
	if (o->confirmation)
		note = tf_xasprintf("against %.12s (%s), %zu interleaved runs per side, then %zu "
				    "more to confirm", commit, o->against, first, head.runs.n);
	else
		note = tf_xasprintf("against %.12s (%s), %zu interleaved runs per side", commit,
				    o->against, first);
	status = tf_run_report(o, &base, &head, note, commit,
			       tf_run_head_distance(o->rec.ctx, commit));
	if (status != TF_EXIT_ERROR)
		status = tf_run_status(o, exit_status, status == TF_EXIT_REGRESSION);
	goto done;
failed:
	if (st == 130)
		tf_errorf("interrupted");
	status = st;
done:
	if (wt && tf_worktree_root(wt) && tf_worktree_remove(wt))
		tf_warnf("could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(wt);
	tf_run_side_free(&base);
	tf_run_side_free(&head);
	free(note);
	free(why);
	free((char *)o->confirmation);
	o->confirmation = NULL;
	tf_run_suspects_free(o);
	o->only_suspects = false;
	return status;
}

/* Against the stored baseline: record, find it, confirm, report, save. */
static int run_stored(tf_run_opts *o)
{
	const tf_context *ctx = o->rec.ctx;
	tf_run_side base = { 0 }, head = { 0 };
	tf_store *st = NULL;
	char *kind = NULL, *start = NULL, *note = NULL, *why = NULL;
	int exit_status = 0, status = TF_EXIT_OK, rc;
	bool have_base = false;
	char base_commit[TF_STORE_ID_HEX + 1] = "";

	if (!tf_run_record_head(&head, o, o->repeat, &exit_status, &status))
		goto done;
	kind = tf_record_kind(&head.runs.v[0]);
	if ((rc = tf_cli_store_open(&st, o->store_spec, o->rec.cfg, o->remote))) {
		/* outside a repository the context said it already */
		if (ctx->git || tf_cli_store_spec(o->store_spec, o->rec.cfg))
			tf_warnf("no baselines: %s", tf_error_last());
		why = tf_xstrdup(tf_error_last());
	} else {
		o->store = st;
		o->kind = kind;
		start = tf_context_baseline_start(ctx);
	}
	if (st && !start) {
		bool first = tf_context_first_commit(ctx);
		why = tf_xstrdup(first ? "this is the repository's first commit: nothing before "
					 "it to compare with"
				       : "no commit history here to find a baseline in");
		tf_notef("%s%s", first ? "" : "no baseline to compare with: ", why);
	} else if (st) {
		have_base = tf_run_find_baseline(o, st, start, kind, &base, base_commit, &note, &why);
	}

	/* a failing suite fails the build whatever its times: nothing to confirm */
	if (have_base && !exit_status && !head.runs.v[head.runs.n - 1].info.interrupted &&
	    !tf_run_confirm(o, start, &base, &head, base_commit, &exit_status, &status))
		goto done;
	status = tf_run_finish(o, st, have_base ? &base : NULL, &head, note, why, base_commit,
			       kind, exit_status);
done:
	free(why);
	tf_run_side_free(&base);
	tf_run_side_free(&head);
	tf_store_free(st);
	free(kind);
	free(start);
	free(note);
	free((char *)o->confirmation);
	o->confirmation = NULL;
	tf_run_suspects_free(o);
	o->only_suspects = false;
	return status;
}

/* Outside CI (--fetch): bring the remote's baseline nearest to `start`, so
 * that a fresh clone knows what CI recorded. */
static void fetch_nearest(tf_store *st, const char *start)
{
	char got[TF_STORE_ID_HEX + 1];
	int rc = tf_store_fetch_nearest(got, st, start);

	if (rc == 0)
		tf_notef("fetched the baseline of %.12s from '%s'", got,
			 tf_store_remote_url(st) ? tf_store_remote_url(st) : "the remote");
	else if (rc != TF_ENOTFOUND)
		tf_warnf("%s", tf_error_last());
}

/*
 * --or-against-merge-base: the walk start (the merge-base, or HEAD^ on the
 * target branch) when no baseline is stored for this suite near it, so
 * the base gets built and run here instead; NULL when one is stored (or
 * there is no history to build from).
 */
static char *against_if_none(tf_run_opts *o)
{
	char *start = tf_context_baseline_start(o->rec.ctx);
	tf_store_resolve_opts ro = { 0, false };
	tf_store *st = NULL;
	tf_store_match m;
	bool stored = false;

	if (!start)
		return NULL;
	/* the runner kind is known only after recording: any kind of this
	 * suite that the walk finds will do, run_stored() resolves the exact one */
	if (tf_cli_store_open(&st, o->store_spec, o->rec.cfg, o->remote) == 0) {
		if (o->fetch && !o->no_fetch && tf_store_is_git(st))
			fetch_nearest(st, start);
		stored = tf_store_resolve_suite(&m, st, start, o->rec.suite_name, &ro) == 0;
	}
	tf_store_free(st);
	tf_error_clear();
	if (stored) {
		free(start);
		return NULL;
	}
	tf_notef("no stored baseline of '%s' before %.12s: building it beside this tree to compare",
		 o->rec.suite_name, start);
	return start;
}

int cmd_run(int argc, char **argv)
{
	tf_run_opts o;
	int dashdash, nargs, status;

	memset(&o, 0, sizeof(o));
	tf_record_cli_init(&o.rec);
	o.rec.needs_git = true;
	o.rec.quiet_help = TF_RUN_QUIET_HELP;
	o.threshold = -1;

	const tf_option opts[] = {
		TF_OPT_INCLUDE(tf_record_cli_options(&o.rec)),
		TF_OPT_GROUP("baseline and gate:"),
		TF_OPT_STRING(0, "against", &o.against, "REV",
			      "build REV in a temporary checkout and run both here, interleaved"),
		TF_OPT_FLAG(0, "or-against-merge-base", &o.or_against_merge_base,
			    "when no baseline is stored, build the merge-base beside and run both (the pre-push hook)"),
		TF_OPT_INT(0, "repeat", &o.repeat, "N", "runs per side (default 1; 3 with --against)", 1, 1000),
		TF_OPT_STRING(0, "confirm", &o.confirm_flag, "HOW",
			      "when a test looks slower than its stored baseline: against (build the merge-base, run both here), rerun, N reruns, or none (default: against with build:, else 2 reruns)"),
		TF_OPT_STRING(0, "shard", &o.shard_flag, "K/N",
			      "record shard K of N and keep its run file for `testflame merge` (default: GitLab's and CircleCI's parallel jobs); no comparison, gate or baseline here"),
		TF_OPT_FLAG(0, "no-shard", &o.no_shard, "the whole suite, whatever the CI's parallel jobs say"),
		TF_OPT_INCLUDE(tf_run_cli_options(&o)),
		TF_OPTS_END,
	};

	nargs = tf_parse_options(argc, argv, opts, run_usage, TF_PARSE_STOP_AT_NONOPT, &dashdash);
	status = nargs == -2 ? TF_EXIT_OK : nargs < 0 ? TF_EXIT_USAGE
		 : tf_record_cli_args(run_usage, "run", argv, nargs, dashdash);
	if (!status)
		status = tf_run_check_flags(&o, run_usage);
	if (!status && (o.shard_flag || o.no_shard))
		status = tf_run_shard_flags(&o, run_usage);
	if (nargs < 0 || status ||
	    (status = tf_record_cli_prepare(&o.rec, run_usage, nargs > 1 ? argv + 1 : NULL)))
		goto out;

	/* flags over .testflame.yml over defaults */
	const tf_config *cfg = o.rec.cfg;
	if (!o.shard.total && !o.no_shard)
		tf_run_shard_from_ci(&o);
	if (!o.against && !o.shard.total)
		o.against = cfg->against;
	if (!o.against && o.or_against_merge_base)
		o.against = o.against_owned = against_if_none(&o);
	if (!o.repeat && !o.against && cfg->baseline_repeat && tf_run_will_save(&o))
		o.repeat = cfg->baseline_repeat;
	if (!o.repeat)
		o.repeat = cfg->repeat ? cfg->repeat : o.against ? 3 : 1;
	tf_run_resolve(&o);
	if ((status = tf_run_resolve_confirm(&o, run_usage)))
		goto out;

	status = o.shard.total ? tf_run_shard(&o) : o.against ? run_against(&o) : run_stored(&o);
out:
	tf_test_noise_free(o.noise, o.nnoise);
	tf_record_cli_free(&o.rec);
	free(o.against_owned);
	free(o.options);
	return status;
}
