/*
 * confirm.c - what `run` does before it fails a build on one run
 * against a stored baseline.
 *
 * One run against a stored baseline is the cheap, usual case, and the
 * noisiest: the baseline was recorded by another job, often on another
 * machine, and a single run of the PR cannot tell a real slowdown from a
 * moment, or a machine, that was slow. When a test looks slower (its 95%
 * interval is above zero and reaches the threshold), the slowdown must
 * hold on this runner before the build fails (--confirm, gate.confirm):
 *   alone    the merge-base checked out beside this tree, built with the
 *            config's `build`, and run alternately with this tree until
 *            the verdict is decided: both sides meet the same machine and
 *            its moment, and only what the code changed stays. Where each
 *            suspect's runner can run it alone (tf_attribute_select), only
 *            the suspects run (a duet: three to twenty rounds, each test
 *            until it is decided, within gate.confirm_budget, their
 *            verdicts standing for the first run's); else the whole suite.
 *            Tests that ran changed code and that one run cannot clear
 *            are confirmed by a duet too (duet.c).
 *            The default where `build` is set.
 *   against  the same with the whole suite, three rounds and at most
 *            eight.
 *   rerun    this tree run again (N times, default 2) and judged on those
 *            runs, not on the one that raised the suspicion: that run was
 *            chosen for looking slow. Only the tests that looked slower in
 *            it, or ran changed code, can fail: among hundreds of tests a
 *            few look slower by chance in any run, the reruns too. The default without
 *            `build`, and what `alone` and `against` fall back to when
 *            the merge-base cannot be built; the report then says why.
 *   none     the first run's verdict.
 * An unchanged PR whose tests look as they did pays nothing for it; about
 * one in five, by chance, pays for a confirmation that clears it.
 *
 * The alternating rounds themselves (tf_run_alternate) are also what
 * `run --against` runs, and what it runs again, judged alone, when its
 * first rounds would fail the build (against.c).
 */
#include "run/run_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

extern char **environ;

bool tf_run_alternate(tf_run_opts *o, const tf_worktree *wt, const char *label, long min,
		      long max, tf_run_side *b, tf_run_side *h, int *exit_status, int *status,
		      char **why_not)
{
	const char *commit = tf_worktree_commit(wt);

	*status = TF_EXIT_OK;
	if (max < min)
		max = min;
	for (long round = 1; round <= max; round++) {
		int st;
		if (min == max)
			tf_run_note(o->rec.io, "round %ld of %ld: %.12s, then this tree", round,
				    max, commit);
		else
			tf_run_note(o->rec.io, "round %ld (%ld to %ld): %.12s, then this tree",
				    round, min, max, commit);
		if (!tf_run_record(b, o, tf_worktree_cwd(wt), label, &st)) {
			*status = st ? st : TF_EXIT_ERROR;
			return false;
		}
		/* the base ran from REV's tree: say so in its metadata */
		tf_profile *bp = b->runs.v[b->runs.n - 1].profile;
		tf_profile_set_meta(bp, "commit", commit);
		if (o->against)
			tf_profile_set_meta(bp, "branch", o->against);
		tf_profile_set_meta(bp, "dirty", "false");
		if (b->runs.v[b->runs.n - 1].info.interrupted) {
			*status = 130;
			return false;
		}
		if (st && why_not) {
			/* a failing suite is no baseline: its tests stopped early */
			*why_not = tf_xasprintf("the merge-base's suite exited %d on this runner",
						st);
			return false;
		}
		if (st)
			tf_run_warn(o->rec.io, "the suite failed on %.12s (exit status %d)", commit,
				    st);
		if (!tf_run_record(h, o, NULL, "head", &st)) {
			*status = st ? st : TF_EXIT_ERROR;
			return false;
		}
		if (st && !*exit_status)
			*exit_status = st;
		if (h->runs.v[h->runs.n - 1].info.interrupted) {
			*status = 130;
			return false;
		}
		if (round >= min && (round == max || !tf_run_undecided(o, b, h)))
			break;
	}
	return true;
}

/*
 * Confirm against the merge-base `start`: check it out, build it, and run
 * the suspects alone, it and this tree in turn, until each is decided
 * (duet: the sides stay, o->decided holds the verdicts, *duet_note says
 * how); where they cannot be run alone, the whole suite alternately
 * until the verdict is decided: on success `base` and `head` then hold
 * the alternating runs (the stored baseline and the run that raised the
 * suspicion set aside) and *commit the merge-base. False when it could
 * not be built or run, with the reason in *why_not (then rerun), or when
 * a run failed to record (*status says why).
 */
static bool confirm_against(tf_run_opts *o, const char *start, tf_run_side *base,
			    tf_run_side *head, char commit[TF_STORE_ID_HEX + 1], int *exit_status,
			    int *status, char **why_not, char **duet_note, char **why_whole)
{
	tf_worktree *wt = NULL;
	tf_run_side b = { 0 }, h = { 0 };
	bool ok = false;
	int rc;

	*status = TF_EXIT_OK;
	if ((rc = tf_worktree_create(&wt, start, NULL))) {
		*why_not = tf_xasprintf("the merge-base %.12s could not be checked out: %s", start,
					tf_error_last());
		goto done;
	}
	tf_run_note(o->rec.io, "confirming on this runner: %.12s (the merge-base) checked out into "
		    "'%s'", tf_worktree_commit(wt), tf_worktree_root(wt));
	tf_run_note(o->rec.io, "building %.12s: %s", tf_worktree_commit(wt), o->rec.cfg->build);
	uint64_t built = tf_now_ns();
	if ((rc = tf_worktree_run(wt, o->rec.cfg->build, false)) != 0) {
		*why_not = tf_xasprintf("the merge-base %.12s did not build (`%s` exited %d)",
					start, o->rec.cfg->build,
					WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc));
		goto done;
	}
	/* the suspects alone first: the rest of the suite only adds its time
	 * and its noise */
	built = tf_now_ns() - built;
	if (o->confirm_alone &&
	    tf_run_duet(o, wt, head, built, exit_status, status, why_whole, duet_note)) {
		ok = true;
		goto done;
	}
	if (*status)
		goto done;
	if (*why_whole)
		tf_run_note(o->rec.io, "running the whole suite to confirm: %s", *why_whole);
	/* B H B H B H: three rounds, and more while a test is undecided, or
	 * one that looked slower still is and may reach the threshold. A
	 * 10% slowdown under a neighbour that comes and goes was still
	 * undecided after five rounds in 1 trial of 15 (p 0.0023 against the
	 * gate's 0.001), where eight narrow its interval by a fifth. As after
	 * a rerun, only the tests that looked slower, or ran changed code,
	 * may fail on these rounds, and only they are the family the gate
	 * corrects for (compare.c) */
	o->only_suspects = true;
	if (!tf_run_alternate(o, wt, "merge-base", 3, TF_CONFIRM_ROUNDS_MAX, &b, &h, exit_status,
			      status, why_not))
		goto done;
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
		tf_run_warn(o->rec.io, "could not remove the checkout: %s", tf_error_last());
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

void tf_run_resolve_confirm(tf_run_opts *o)
{
	const tf_config *cfg = o->rec.cfg;
	const char *how = o->set.confirm; /* checked when read */

	o->confirm_runs = 2;
	o->confirm_asked = how != NULL;
	o->confirm_alone = false;
	if (!how) {
		o->confirm = cfg->build ? TF_CONFIRM_AGAINST : TF_CONFIRM_RERUN;
		o->confirm_alone = cfg->build != NULL;
	} else if (!strcmp(how, "against"))
		o->confirm = TF_CONFIRM_AGAINST;
	else if (!strcmp(how, "alone")) {
		o->confirm = TF_CONFIRM_AGAINST;
		o->confirm_alone = true;
	}
	else if (!strcmp(how, "none") || !strcmp(how, "0"))
		o->confirm = TF_CONFIRM_NONE;
	else if (!strcmp(how, "rerun"))
		o->confirm = TF_CONFIRM_RERUN;
	else {
		o->confirm = TF_CONFIRM_RERUN;
		o->confirm_runs = strtol(how, NULL, 10);
	}
}

bool tf_run_confirm(tf_run_opts *o, const char *start, tf_run_side *base, tf_run_side *head,
		    char commit[TF_STORE_ID_HEX + 1], int *exit_status, int *status)
{
	char *why_confirm = NULL, *why_not = NULL, *more = NULL, *duet_note = NULL;
	char *why_whole = NULL;

	*status = TF_EXIT_OK;
	if (o->confirm == TF_CONFIRM_NONE)
		return true;
	why_confirm = tf_run_looks_slower(o, base, head);
	/* the tests that ran changed code, where the duet can settle them,
	 * beside any that looked slower */
	if (o->confirm == TF_CONFIRM_AGAINST && o->confirm_alone && o->rec.cfg->build) {
		char *changed = tf_run_changed_unsettled(o, base, head);
		if (!why_confirm)
			why_confirm = changed;
		else
			free(changed);
	}
	if (!why_confirm)
		return true;
	/*
	 * A run that saves a baseline (the default branch) where nothing can
	 * fail the build (--no-fail, gate.fail_on_regression: false) is
	 * recording history: confirming would only cost the runs. A PR's
	 * report under --no-fail is still confirmed, since its comment is
	 * what people read; --confirm or gate.confirm asks for it anyway.
	 */
	if (!o->set.fail_on_regression && !o->confirm_asked && tf_run_will_save(o)) {
		tf_run_note(o->rec.io, "%s against the stored baseline %.12s; not confirmed: this "
			    "run saves a baseline and nothing fails it (--no-fail; "
			    "--confirm would)", why_confirm, commit);
		o->confirmation = tf_xasprintf("no (this run saves a baseline and nothing fails it "
					       "under --no-fail); against the stored baseline, %s",
					       why_confirm);
		free(why_confirm);
		return true;
	}
	if (o->confirm == TF_CONFIRM_AGAINST && !o->rec.cfg->build)
		why_not = tf_xstrdup("no `build:` in .testflame.yml to build the merge-base with");
	if (o->confirm == TF_CONFIRM_AGAINST && !why_not) {
		tf_run_note(o->rec.io, "%s against the stored baseline %.12s; confirming against "
			    "the merge-base on this runner", why_confirm, commit);
		if (confirm_against(o, start, base, head, commit, exit_status, status, &why_not,
				    &duet_note, &why_whole) && duet_note) {
			more = tf_xasprintf("against the stored baseline, %s; so the merge-base was "
					    "built here and %s", why_confirm, duet_note);
		} else if (!*status && !why_not) {
			o->interleaved = true;
			more = tf_xasprintf("against the stored baseline, %s; so the merge-base "
					    "%.12s was built and run here, alternately with this "
					    "tree, %zu runs each%s%s%s", why_confirm, commit,
					    head->runs.n, why_whole ? " (the whole suite: " : "",
					    why_whole ? why_whole : "", why_whole ? ")" : "");
		} else if (*status) {
			goto done;
		}
	}
	if (!more) {
		long runs = o->confirm == TF_CONFIRM_RERUN ? o->confirm_runs : 2;
		if (why_not)
			tf_run_warn(o->rec.io, "cannot confirm against the merge-base: %s; running "
				    "this tree %ld more times instead", why_not, runs);
		else
			tf_run_note(o->rec.io, "%s; running the suite %ld more time%s to confirm",
				    why_confirm, runs, runs == 1 ? "" : "s");
		if (!confirm_rerun(o, head, runs, exit_status, status))
			goto done;
		o->only_suspects = true;
		/* say what would have made it certain: the merge-base run here */
		more = tf_xasprintf("against the stored baseline, %s; so this tree was run %ld "
				    "more time%s and judged on those%s%s%s", why_confirm, runs,
				    runs == 1 ? "" : "s",
				    why_not ? ", not against the merge-base: " : "",
				    why_not ? why_not : "",
				    o->rec.cfg->build || why_not ? "" : " (a `build:` in .testflame.yml "
				    "would let the merge-base be built and run here beside it, which "
				    "the runner's speed cannot sway)");
	}
	o->confirmation = more;
done:
	free(why_confirm);
	free(why_not);
	free(duet_note);
	free(why_whole);
	return *status == TF_EXIT_OK;
}
