/*
 * against.c - `run --against REV`: REV exported into a temporary
 * directory beside this tree, built with the config's `build`, and run
 * interleaved with this tree (A B A B, --repeat rounds and more while a
 * slowdown is undecided) on this machine: the same noise for both sides,
 * the most reliable mode on shared runners. A test the gate would fail on
 * after those rounds must be slower again in as many new rounds, judged on
 * those alone.
 */
#include "run/run_int.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Run the config's build in the checkout of REV (`here`: in this tree). */
static bool build(const tf_run_opts *o, const tf_worktree *wt, bool here)
{
	const char *cmd = o->rec.cfg->build;
	int st;

	if (here)
		tf_run_note(o->rec.io, "building this tree: %s", cmd);
	else
		tf_run_note(o->rec.io, "building %.12s: %s", tf_worktree_commit(wt), cmd);
	st = tf_worktree_run(wt, cmd, here);
	if (st == 0)
		return true;
	if (here)
		tf_run_error(o->rec.io, "the build of this tree failed: %s", cmd);
	else
		tf_run_error(o->rec.io, "the build of '%s' failed (exit status %d): %s", o->against,
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
int tf_run_against(tf_run_opts *o)
{
	tf_worktree *wt = NULL;
	tf_run_side base = { 0 }, head = { 0 };
	const char *commit;
	char *note = NULL, *why = NULL;
	int rc, st, status = TF_EXIT_ERROR, exit_status = 0;

	if ((rc = tf_worktree_create(&wt, o->against, NULL))) {
		status = tf_run_fail(o->rec.io, rc);
		goto done;
	}
	commit = tf_worktree_commit(wt);
	tf_run_note(o->rec.io, "checking out %.12s (%s) into '%s'", commit, o->against,
		    tf_worktree_root(wt));
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
		tf_run_note(o->rec.io, "%s in %zu rounds; running both again to confirm, judged on "
			    "the new rounds", why, first);
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
		tf_run_error(o->rec.io, "interrupted");
	status = st;
done:
	if (wt && tf_worktree_root(wt) && tf_worktree_remove(wt))
		tf_run_warn(o->rec.io, "could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(wt);
	tf_run_side_free(&base);
	tf_run_side_free(&head);
	free(note);
	free(why);
	tf_run_flow_clear(o);
	return status;
}
