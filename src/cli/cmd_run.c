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
 * noisiest: the baseline was recorded by another job, often on another
 * machine, and a single run of the PR cannot tell a real slowdown from a
 * moment, or a machine, that was slow. When a test looks slower (its 95%
 * interval is above zero and reaches the threshold), the slowdown must
 * hold on this runner before the build fails (--confirm, gate.confirm):
 *   against  the merge-base checked out beside this tree, built with the
 *            config's `build`, and run alternately with this tree until
 *            the verdict is decided (three rounds, at most five): both
 *            sides meet the same machine and its moment, and only what
 *            the code changed stays. The default where `build` is set.
 *   rerun    this tree run again (N times, default 2) and judged on those
 *            runs, not on the one that raised the suspicion: that run was
 *            chosen for looking slow. The default without `build`, and
 *            what `against` falls back to when the merge-base cannot be
 *            built; the report then says what would make it certain.
 *   none     the first run's verdict.
 * An unchanged PR whose tests look as they did pays nothing for it.
 *
 * In CI the report then goes out (publish_common.c): annotations, step
 * summary, outputs and the PR/MR comment. Publishing problems are
 * warnings: they never change the exit status.
 *
 * Exit status: the command's own failure first; else 3 when a test
 * regressed (unless the gate is off); else 0. No baseline is not an error.
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

/* --against REV: build REV beside us, run both sides interleaved. */
static int run_against(tf_run_opts *o)
{
	tf_worktree *wt = NULL;
	tf_run_side base = { 0 }, head = { 0 };
	const char *commit;
	char *note = NULL;
	int rc, status = TF_EXIT_ERROR, exit_status = 0;

	if ((rc = tf_worktree_create(&wt, o->against, NULL))) {
		status = tf_fail(rc);
		goto done;
	}
	commit = tf_worktree_commit(wt);
	tf_notef("checking out %.12s (%s) into '%s'", commit, o->against, tf_worktree_root(wt));
	if (o->rec.cfg->build && (!build(o, wt, false) || !build(o, wt, true)))
		goto done;

	/* A B A B: both sides meet the same machine, warm caches and noise */
	for (long i = 0; i < o->repeat; i++) {
		int st;
		tf_notef("round %ld of %ld: %.12s, then this tree", i + 1, o->repeat, commit);
		if (!tf_run_record(&base, o, tf_worktree_cwd(wt), "base", &st)) {
			status = st;
			goto done;
		}
		/* the base ran from REV's tree: say so in its metadata */
		tf_profile *bp = base.runs.v[base.runs.n - 1].profile;
		tf_profile_set_meta(bp, "commit", commit);
		tf_profile_set_meta(bp, "branch", o->against);
		tf_profile_set_meta(bp, "dirty", "false");
		if (st)
			tf_warnf("the suite failed on %.12s (exit status %d)", commit, st);
		if (!tf_run_record(&head, o, NULL, "head", &st)) {
			status = st;
			goto done;
		}
		if (st && !exit_status)
			exit_status = st;
		if (head.runs.v[head.runs.n - 1].info.interrupted) {
			tf_errorf("interrupted");
			status = 130;
			goto done;
		}
	}
	note = tf_xasprintf("against %.12s (%s), %ld interleaved runs per side", commit,
			    o->against, o->repeat);
	status = tf_run_report(o, &base, &head, note, commit,
			       tf_run_head_distance(o->rec.ctx, commit));
	if (status != TF_EXIT_ERROR)
		status = tf_run_status(o, exit_status, status == TF_EXIT_REGRESSION);
done:
	if (wt && tf_worktree_root(wt) && tf_worktree_remove(wt))
		tf_warnf("could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(wt);
	tf_run_side_free(&base);
	tf_run_side_free(&head);
	free(note);
	return status;
}

/* Each test's run-to-run noise, from the baseline `first` (of `from`) and
 * up to --history - 1 baselines before it. */
static void learn_noise(tf_run_opts *o, tf_store *st, const tf_profile *first, const char *from,
			const char *kind, const tf_store_resolve_opts *ro)
{
	TF_VEC(const tf_profile *) runs = { 0 };
	tf_profile **earlier;
	size_t n = tf_store_history(&earlier, st, from, o->rec.suite_name, kind,
				    (size_t)o->history - 1, ro), draws = 0;

	tf_vec_push(&runs, first);
	for (size_t i = 0; i < n; i++)
		tf_vec_push(&runs, earlier[i]);
	for (size_t i = 0; i < runs.n; i++)
		draws += tf_profile_count_runs(runs.v[i]);
	if (draws >= 3 &&
	    tf_compare_history_noise(&o->noise, &o->nnoise, runs.v, runs.n, NULL) == 0)
		tf_verbosef("learned the run-to-run noise of %zu tests from %zu runs in %zu baselines",
			    o->nnoise, draws, runs.n);
	for (size_t i = 0; i < n; i++)
		tf_profile_free(earlier[i]);
	free(earlier);
	tf_vec_free(&runs);
}

/*
 * The stored baseline nearest to `start` into `base`, its commit into
 * `commit` and the line that introduces it into *note; learns the noise
 * history on the way. False when there is none, *why saying why (for
 * report.md).
 */
static bool find_baseline(tf_run_opts *o, tf_store *st, const char *start, const char *kind,
			  tf_run_side *base, char commit[TF_STORE_ID_HEX + 1], char **note,
			  char **why)
{
	const tf_context *ctx = o->rec.ctx;
	const bool in_ci = ctx->ci && ctx->ci->provider != TF_CI_LOCAL;
	tf_store_resolve_opts ro = { 0, !o->no_fetch && tf_store_is_git(st) && (o->fetch || in_ci) };
	tf_store_found f;
	const tf_store_match *m = &f.match;
	int rc = tf_store_find_runs(&f, st, start, o->rec.suite_name, kind, &ro);

	if (m->remote_error[0]) {
		tf_warnf("%s; looking at local baselines only", m->remote_error);
		ro.fetch = false;
	}
	if (rc == TF_ENOTFOUND && !m->commit[0]) { /* git holds none: Pyroscope may */
		tf_store_match pm;
		if ((rc = tf_cli_pyroscope_resolve(&pm, st, start, &o->rec, kind)) == 0)
			rc = tf_store_read_runs(&f, st, &pm, o->rec.suite_name, kind);
	}
	if (rc == 0) {
		/* a baseline saved from --repeat holds its runs apart */
		for (size_t i = 0; i < f.nruns; i++) {
			tf_run_side_add(base, f.runs[i],
					f.nruns > 1 ? tf_xasprintf("baseline %.12s run %zu", m->commit, i + 1)
						    : tf_xasprintf("baseline %.12s", m->commit));
			f.runs[i] = NULL;
		}
		memcpy(commit, m->commit, TF_STORE_ID_HEX + 1);
		if (o->history > 1)
			learn_noise(o, st, f.stored, m->commit, kind, &ro);
		bool at_head = !(ctx->merge_base && strcmp(start, ctx->merge_base) == 0);
		unsigned dist = m->distance + (at_head ? 1 : 0);
		char nr[32] = "";
		if (f.nruns > 1)
			snprintf(nr, sizeof(nr), ", %zu runs", f.nruns);
		char where[64];
		if (dist)
			snprintf(where, sizeof(where), "%u commit%s before %s", dist, dist == 1 ? "" : "s",
				 at_head ? "HEAD" : "the merge-base");
		else
			snprintf(where, sizeof(where), "the merge-base");
		*note = tf_xasprintf("baseline: %.12s%s%s%s, %s%s%s; suite '%s'", m->commit,
				     f.subject ? " (" : "", f.subject ? f.subject : "",
				     f.subject ? ")" : "", where, nr,
				     m->source[0] ? m->source : m->fetched ? ", fetched" : "",
				     o->rec.suite_name);
	} else if (m->commit[0]) {
		tf_warnf("%s", tf_error_last());
		*why = tf_xasprintf("the baseline of %.12s cannot be read", m->commit);
	} else if (rc == TF_ENOTFOUND) {
		char *none = tf_xstrdup(tf_error_last());
		char *others = tf_cli_store_others(st, start, o->rec.suite_name, kind);
		*why = others ? tf_xasprintf("%s; %s", none, others) : tf_xstrdup(none);
		tf_notef("%s", none);
		free(none);
		if (others)
			tf_notef("%s", others);
		free(others);
	} else {
		tf_warnf("no baseline: %s", tf_error_last());
		*why = tf_xstrdup(tf_error_last());
	}
	tf_store_found_clear(&f);
	return rc == 0;
}

/* Whether a comparison leaves a test undecided: a slowdown the size of the
 * threshold that the noise does not yet tell from none. */
static bool undecided(tf_run_opts *o, tf_run_side *base, tf_run_side *head)
{
	TF_VEC(const tf_profile *) bp = { 0 }, hp = { 0 };
	tf_compare_opts co;
	tf_comparison *c = NULL;
	bool open = false;

	for (size_t i = 0; i < base->runs.n; i++)
		tf_vec_push(&bp, base->runs.v[i].profile);
	for (size_t i = 0; i < head->runs.n; i++)
		tf_vec_push(&hp, head->runs.v[i].profile);
	tf_compare_side bs = { bp.v, NULL, bp.n }, hs = { hp.v, NULL, hp.n };
	tf_compare_opts_init(&co);
	co.threshold = o->threshold;
	if (tf_compare(&c, &bs, &hs, &co) == 0)
		for (size_t i = 0; i < c->ntests && !open; i++)
			open = c->tests[i].verdict == TF_VERDICT_INCONCLUSIVE &&
			       !c->tests[i].outside && c->tests[i].delta_pct >= o->threshold;
	tf_error_clear();
	tf_comparison_free(c);
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	return open;
}

/*
 * Confirm against the merge-base `start`: check it out, build it, and run
 * it and this tree alternately until the verdict is decided. On success
 * `base` and `head` hold the alternating runs (the stored baseline and the
 * run that raised the suspicion set aside) and *commit the merge-base.
 * False when it could not be built or run, with the reason in *why_not
 * (then rerun), or when a run failed to record (*status says why).
 */
static bool confirm_against(tf_run_opts *o, const char *start, tf_run_side *base,
			    tf_run_side *head, char commit[TF_STORE_ID_HEX + 1], int *exit_status,
			    int *status, char **why_not)
{
	tf_worktree *wt = NULL;
	tf_run_side b = { 0 }, h = { 0 };
	bool ok = false;
	long rounds = 0;
	int rc;

	*status = TF_EXIT_OK;
	if ((rc = tf_worktree_create(&wt, start, NULL))) {
		*why_not = tf_xasprintf("the merge-base %.12s could not be checked out: %s", start,
					tf_error_last());
		goto done;
	}
	tf_notef("confirming on this runner: %.12s (the merge-base) checked out into '%s'",
		 tf_worktree_commit(wt), tf_worktree_root(wt));
	tf_notef("building %.12s: %s", tf_worktree_commit(wt), o->rec.cfg->build);
	if ((rc = tf_worktree_run(wt, o->rec.cfg->build, false)) != 0) {
		*why_not = tf_xasprintf("the merge-base %.12s did not build (`%s` exited %d)", start,
					o->rec.cfg->build, WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc));
		goto done;
	}
	/* B H B H B H: three rounds, and up to five while a test is undecided */
	for (rounds = 1; rounds <= 5; rounds++) {
		int st;
		if (!tf_run_record(&b, o, tf_worktree_cwd(wt), "merge-base", &st)) {
			*status = st ? st : TF_EXIT_ERROR;
			goto done;
		}
		if (b.runs.v[b.runs.n - 1].info.interrupted) {
			*status = 130;
			goto done;
		}
		if (st) {
			/* a failing suite is no baseline: its tests stopped early */
			*why_not = tf_xasprintf("the merge-base's suite exited %d on this runner",
						st);
			goto done;
		}
		if (!tf_run_record(&h, o, NULL, "head", &st)) {
			*status = st ? st : TF_EXIT_ERROR;
			goto done;
		}
		if (st && !*exit_status)
			*exit_status = st;
		tf_profile *bp = b.runs.v[b.runs.n - 1].profile;
		tf_profile_set_meta(bp, "commit", tf_worktree_commit(wt));
		tf_profile_set_meta(bp, "dirty", "false");
		if (h.runs.v[h.runs.n - 1].info.interrupted) {
			*status = 130;
			goto done;
		}
		if (rounds >= 3 && !undecided(o, &b, &h))
			break;
	}
	if (rounds > 5)
		rounds = 5;
	memcpy(commit, tf_worktree_commit(wt), TF_STORE_ID_HEX);
	commit[TF_STORE_ID_HEX] = '\0';
	tf_run_side_free(base);
	tf_run_side_free(head);
	*base = b;
	*head = h;
	memset(&b, 0, sizeof(b));
	memset(&h, 0, sizeof(h));
	ok = true;
done:
	if (wt && tf_worktree_root(wt) && tf_worktree_remove(wt))
		tf_warnf("could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(wt);
	tf_run_side_free(&b);
	tf_run_side_free(&h);
	return ok;
}

/* Rerun this tree `runs` times and keep only those runs: the one that
 * raised the suspicion was chosen for looking slow. */
static bool confirm_rerun(tf_run_opts *o, tf_run_side *head, long runs, int *exit_status,
			  int *status)
{
	tf_run_side again = { 0 };
	if (!tf_run_record_head(&again, o, runs, exit_status, status)) {
		tf_run_side_free(&again);
		return false;
	}
	tf_run_side_free(head);
	*head = again;
	return true;
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
		have_base = find_baseline(o, st, start, kind, &base, base_commit, &note, &why);
	}

	char *why_confirm = NULL, *why_not = NULL;
	/* a failing suite fails the build whatever its times: nothing to confirm */
	if (have_base && o->confirm != TF_CONFIRM_NONE && !exit_status &&
	    !head.runs.v[head.runs.n - 1].info.interrupted)
		why_confirm = tf_run_looks_slower(o, &base, &head);
	if (why_confirm) {
		char *more = NULL;
		if (o->confirm == TF_CONFIRM_AGAINST && !o->rec.cfg->build)
			why_not = tf_xstrdup("no `build:` in .testflame.yml to build the merge-base "
					     "with");
		if (o->confirm == TF_CONFIRM_AGAINST && !why_not) {
			tf_notef("%s against the stored baseline %.12s; confirming against the "
				 "merge-base on this runner", why_confirm, base_commit);
			if (confirm_against(o, start, &base, &head, base_commit, &exit_status,
					    &status, &why_not)) {
				o->interleaved = true;
				more = tf_xasprintf("against the stored baseline, %s; so the "
						    "merge-base %.12s was built and run here, "
						    "alternately with this tree, %zu runs each",
						    why_confirm, base_commit, head.runs.n);
			} else if (status) {
				free(why_confirm);
				goto done;
			}
		}
		if (!more) {
			long runs = o->confirm == TF_CONFIRM_RERUN ? o->confirm_runs : 2;
			if (why_not)
				tf_warnf("cannot confirm against the merge-base: %s; running this "
					 "tree %ld more times instead", why_not, runs);
			else
				tf_notef("%s; running the suite %ld more time%s to confirm", why_confirm,
					 runs, runs == 1 ? "" : "s");
			if (!confirm_rerun(o, &head, runs, &exit_status, &status)) {
				free(why_confirm);
				free(why_not);
				goto done;
			}
			more = tf_xasprintf("against the stored baseline, %s; so this tree was "
					    "run %ld more time%s and judged on those%s%s", why_confirm, runs,
					    runs == 1 ? "" : "s", why_not ? ", not against the "
					    "merge-base: " : "", why_not ? why_not : "");
		}
		o->confirmation = more;
		free(why_confirm);
		free(why_not);
	}
	status = TF_EXIT_OK;
	if (have_base) {
		status = tf_run_report(o, &base, &head, note, base_commit,
				       tf_run_head_distance(ctx, base_commit));
		if (status == TF_EXIT_ERROR)
			goto done;
	} else {
		/* still leave the run where the report would be */
		if (tf_report_write_no_baseline(o->report_dir, o->rec.suite_name,
						head.runs.v[0].profile, why) == 0)
			printf("no baseline yet; this run is in %s/head.pb.gz\n", o->report_dir);
		else
			tf_warnf("%s", tf_error_last());
		tf_run_publish(o, NULL, NULL, NULL);
	}

	if (!exit_status && !head.runs.v[0].info.interrupted) /* as for saving */
		tf_cli_pyroscope_push(st, &o->rec, kind, head.runs.v, head.runs.n);
	/* keep this run as the baseline of HEAD where it belongs */
	if (st && !exit_status && !head.runs.v[0].info.interrupted && tf_run_will_save(o))
		tf_run_save_baseline(o, st, &head, kind);
	else if (st && o->save && exit_status)
		tf_warnf("not saving a baseline of a failing suite (exit status %d)", exit_status);
	status = tf_run_status(o, exit_status, status == TF_EXIT_REGRESSION);
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
		TF_OPT_DOUBLE(0, "threshold", &o.threshold, "PCT",
			      "smallest slowdown that fails the gate (default 5)"),
		TF_OPT_STRING(0, "target", &o.rec.target_branch, "BRANCH",
			      "the branch to compare with (default: the PR's base, else the default branch)"),
		TF_OPT_STRING(0, "store", &o.store_spec, "SPEC",
			      "where baselines live: git (default), git:REMOTE, dir:PATH, pyroscope:URL"),
		TF_OPT_STRING(0, "remote", &o.remote, "NAME",
			      "the git remote baselines are fetched from and pushed to (default origin)"),
		TF_OPT_FLAG(0, "save", &o.save,
			    "save this run as HEAD's baseline (default: on the default branch, clean tree)"),
		TF_OPT_FLAG(0, "no-save", &o.no_save, "never save a baseline"),
		TF_OPT_FLAG(0, "push", &o.push, "push a saved baseline to the remote (default in CI)"),
		TF_OPT_FLAG(0, "no-push", &o.no_push, "never push baselines"),
		TF_OPT_FLAG(0, "fetch", &o.fetch,
			    "fetch baselines from the remote outside CI too (default in CI)"),
		TF_OPT_FLAG(0, "no-fetch", &o.no_fetch, "do not fetch baselines from the remote"),
		TF_OPT_INT(0, "history", &o.history, "N",
			   "learn each test's noise from up to N stored baselines (default 10; 1 = off)",
			   1, 1000),
		TF_OPT_FLAG(0, "no-fail", &o.no_fail, "report regressions but exit 0"),
		TF_OPT_GROUP("report:"),
		TF_OPT_STRING(0, "report", &o.report_dir, "DIR",
			      "the report directory (default testflame-report)"),
		TF_OPT_FLAG(0, "all", &o.all, "list unchanged tests too"),
		TF_OPT_STRING(0, "color", &o.color, "WHEN", "colour the table",
			      .choices = tf_cli_colour_choices),
		TF_OPT_GROUP("publishing (in CI):"),
		TF_OPT_FLAG(0, "no-publish", &o.no_publish,
			    "no comment, annotations, step summary or outputs"),
		TF_OPT_FLAG(0, "no-comment", &o.no_comment, "no PR/MR comment (publish.comment)"),
		TF_OPT_FLAG(0, "no-annotations", &o.no_annotations,
			    "no annotations or review comments (publish.annotations)"),
		TF_OPT_FLAG(0, "no-step-summary", &o.no_step_summary,
			    "no $GITHUB_STEP_SUMMARY (publish.step_summary)"),
		TF_OPTS_END,
	};

	nargs = tf_parse_options(argc, argv, opts, run_usage, TF_PARSE_STOP_AT_NONOPT, &dashdash);
	status = nargs == -2 ? TF_EXIT_OK : nargs < 0 ? TF_EXIT_USAGE
		 : tf_record_cli_args(run_usage, "run", argv, nargs, dashdash);
	if (!status && o.save && o.no_save)
		status = tf_usage_error(run_usage, "--save and --no-save contradict each other");
	if (!status && o.threshold != -1 && (o.threshold < 0 || o.threshold > 1000))
		status = tf_usage_error(run_usage, "--threshold must be a percentage between 0 and 1000");
	if (nargs < 0 || status ||
	    (status = tf_record_cli_prepare(&o.rec, run_usage, nargs > 1 ? argv + 1 : NULL)))
		goto out;

	/* flags over .testflame.yml over defaults */
	const tf_config *cfg = o.rec.cfg;
	if (!o.against)
		o.against = cfg->against;
	if (!o.against && o.or_against_merge_base)
		o.against = o.against_owned = against_if_none(&o);
	if (!o.repeat && !o.against && cfg->baseline_repeat && tf_run_will_save(&o))
		o.repeat = cfg->baseline_repeat;
	if (!o.repeat)
		o.repeat = cfg->repeat ? cfg->repeat : o.against ? 3 : 1;
	if (o.threshold < 0)
		o.threshold = cfg->gate.threshold >= 0 ? cfg->gate.threshold : 5.0;
	if (!o.no_fail && !tf_config_bool(cfg->gate.fail_on_regression, true))
		o.no_fail = true;
	if (!o.report_dir)
		o.report_dir = cfg->report.dir ? cfg->report.dir : "testflame-report";
	if (!o.history)
		o.history = 10;
	{
		const char *how = o.confirm_flag ? o.confirm_flag : cfg->gate.confirm;
		if (how && !tf_config_confirm_ok(how)) {
			status = tf_usage_error(run_usage, "--confirm must be against, rerun, none or a "
						"number of runs between 0 and 100, not '%s'", how);
			goto out;
		}
		o.confirm_runs = 2;
		if (!how)
			o.confirm = cfg->build ? TF_CONFIRM_AGAINST : TF_CONFIRM_RERUN;
		else if (!strcmp(how, "against"))
			o.confirm = TF_CONFIRM_AGAINST;
		else if (!strcmp(how, "none") || !strcmp(how, "0"))
			o.confirm = TF_CONFIRM_NONE;
		else if (!strcmp(how, "rerun"))
			o.confirm = TF_CONFIRM_RERUN;
		else {
			o.confirm = TF_CONFIRM_RERUN;
			o.confirm_runs = strtol(how, NULL, 10);
		}
	}

	status = o.against ? run_against(&o) : run_stored(&o);
out:
	tf_test_noise_free(o.noise, o.nnoise);
	tf_record_cli_free(&o.rec);
	free(o.against_owned);
	return status;
}
