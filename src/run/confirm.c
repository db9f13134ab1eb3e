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
 *            are confirmed by a duet too (changed_unsettled()).
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

/* ---- the duet: the suspects alone, the merge-base and this tree in turn ---- */

typedef TF_VEC(char *) name_vec;

/* The first run's wall time (the suite's own time), 0 when unknown. */
static uint64_t suite_time(const tf_run_side *head)
{
	const tf_record_info *first = &head->runs.v[0].info;
	return first->end_ns > first->start_ns ? first->end_ns - first->start_ns : 0;
}

/* What a duet may spend (gate.confirm_budget) on a suite that took
 * `suite_ns` once; 0: no limit known. */
static uint64_t duet_budget(const tf_run_opts *o, uint64_t suite_ns)
{
	return o->set.confirm_budget_pct > 0
		       ? (uint64_t)((double)suite_ns * o->set.confirm_budget_pct / 100)
		       : (uint64_t)o->set.confirm_budget_ns;
}

/* A test's time when run alone, as its first run took it. */
static double alone_time(const tf_test_delta *t)
{
	return isfinite(t->head.wall_ns) && t->head.wall_ns > 0 ? t->head.wall_ns : t->head.cost;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
	const tf_test_delta *t;
	double z; /* the first run's evidence of a slowdown */
} unsettled;

static int by_evidence(const void *a, const void *b)
{
	double x = ((const unsettled *)a)->z, y = ((const unsettled *)b)->z;
	int k = (x < y) - (x > y);
	return k ? k : strcmp(((const unsettled *)a)->t->name, ((const unsettled *)b)->t->name);
}

/*
 * The tests that ran changed code and that one run against the stored
 * baseline can neither clear nor convict: not faster by half the
 * threshold, their interval reaching it. tf_comparison_suspect's rule
 * (slower by half the threshold) lets about a third of the slowdowns of
 * the threshold's own size through: in bench/detection.sh (CODE=1, a
 * neighbour that comes and goes) the first run put 6 of 20 true 5%
 * slowdowns at +2.5% or less, and none was confirmed. A test whose code
 * changed is where a slowdown can come from, so it gets the duet, and
 * only where the duet can run it alone within gate.confirm_budget: taken
 * from the strongest evidence of a slowdown down while the duet's fewest
 * rounds of them fit the budget, beside the suspects o->suspects already
 * names (a test that looked slower raised them). A PR that changes no
 * code a test ran pays nothing for this. A line saying why (to free),
 * o->suspects naming them too; NULL when there are none.
 */
static char *changed_unsettled(tf_run_opts *o, const tf_run_side *base,
			       const tf_run_side *head)
{
	tf_comparison *c = NULL;
	tf_selection *sel = NULL;
	TF_VEC(unsettled) cand = { 0 };
	name_vec names = { 0 };
	char *why = NULL;

	if (tf_run_compare(&c, o, base, head, false)) {
		tf_error_clear();
		return NULL;
	}
	uint64_t budget = duet_budget(o, suite_time(head));
	double planned = 0;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		double thr = tf_test_threshold(t, o->set.threshold);
		bool suspect = false;
		for (size_t k = 0; k < o->suspects.n && !suspect; k++)
			suspect = strcmp(o->suspects.v[k], t->name) == 0;
		if (suspect) {
			planned += 2.0 * TF_DUET_ROUNDS_MIN * alone_time(t);
			continue;
		}
		if (!t->ran_changed || (t->outside && !c->summary.gate_outside) ||
		    (t->verdict != TF_VERDICT_UNCHANGED && t->verdict != TF_VERDICT_INCONCLUSIVE) ||
		    !(t->ci_high_pct >= thr) || !(t->delta_pct > -thr / 2) ||
		    (t->verdict == TF_VERDICT_UNCHANGED && t->p_adjusted < c->summary.alpha))
			continue;
		double half = t->ci_high_pct - t->delta_pct;
		unsettled u = { t, half > 0 ? t->delta_pct / half : 0 };
		tf_vec_push(&cand, u);
	}
	if (cand.n)
		qsort(cand.v, cand.n, sizeof(*cand.v), by_evidence);
	size_t first = 0;
	for (size_t i = 0; i < cand.n; i++) {
		const tf_test_delta *t = cand.v[i].t;
		double cost = 2.0 * TF_DUET_ROUNDS_MIN * alone_time(t);
		if (budget && planned + cost > (double)budget)
			continue;
		if (!names.n)
			first = i;
		planned += cost;
		tf_vec_push(&names, tf_xstrdup(t->name));
	}
	if (names.n && tf_attribute_select(&sel, (const char *const *)o->rec.cmd, environ,
					   head->runs.v[0].profile, (const char *const *)names.v,
					   names.n) == 0) {
		const tf_test_delta *t = cand.v[first].t;
		why = tf_xasprintf("%s ran changed code and one run cannot rule out a %g%% "
				   "slowdown (%+.1f%%, 95%% CI %+.1f%% to %+.1f%%)%s",
				   t->name, tf_test_threshold(t, o->set.threshold), t->delta_pct,
				   t->ci_low_pct, t->ci_high_pct,
				   names.n > 1 ? ", nor of the other tests that did" : "");
		for (size_t i = 0; i < names.n; i++) {
			tf_run_verbose(o->rec.io, "ran changed code, undecided: %s", names.v[i]);
			tf_vec_push(&o->suspects, names.v[i]);
		}
		names.n = 0;
		qsort(o->suspects.v, o->suspects.n, sizeof(*o->suspects.v), by_name);
	}
	tf_error_clear();
	tf_selection_free(sel);
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	tf_vec_free(&names);
	tf_vec_free(&cand);
	tf_comparison_free(c);
	return why;
}

/* Keep test `t`'s verdict of the duet as decided in `runs` rounds. */
static void decide(tf_run_opts *o, const tf_test_delta *t, size_t runs, const char *why_stopped)
{
	tf_test_decided d;
	memset(&d, 0, sizeof(d));
	d.test = tf_xstrdup(t->name);
	d.verdict = t->verdict;
	d.delta_pct = t->delta_pct;
	d.ci_low_pct = t->ci_low_pct;
	d.ci_high_pct = t->ci_high_pct;
	d.p_value = t->p_value;
	d.p_adjusted = t->p_adjusted;
	d.runs = runs;
	if (why_stopped)
		d.reason = tf_xasprintf("%s; %s", t->reason ? t->reason : "", why_stopped);
	else
		d.reason = tf_xstrdup(t->reason ? t->reason : "");
	tf_vec_push(&o->decided, d);
}

/* The duet's rounds so far compared as the gate judges, its alpha spent
 * over the `looks` it may take (a sequential test at the gate's error
 * rate: each look at most alpha / looks). */
static tf_comparison *duet_compare(tf_run_opts *o, const tf_run_side *b, const tf_run_side *h,
				   long looks)
{
	tf_comparison *c = NULL;
	double alpha = o->set.alpha;
	bool was = o->interleaved;

	o->set.alpha = alpha / (double)looks;
	o->interleaved = true;
	/* the suspects alone: what moved them all was the change, not the
	 * runner (jansson's json_pack slowed 65-fold: taking the median of
	 * its seven suspects' moves out of each left test_pack inconclusive) */
	o->picked = true;
	if (tf_run_compare(&c, o, b, h, false)) {
		tf_run_warn(o->rec.io, "the duet's rounds could not be compared: %s", tf_error_last());
		tf_error_clear();
		c = NULL;
	}
	o->set.alpha = alpha;
	o->interleaved = was;
	o->picked = false;
	return c;
}

/* Whether the duet runs test `t` again: undecided as the whole suite's
 * rounds would be (tf_run_test_open), or neither convicted nor cleared,
 * its interval still reaching the threshold. A true 5% slowdown measured
 * +3.5% (-1.2% to +8.4%) in three rounds was "unchanged" by the verdict's
 * rule and stopped there, with most of its budget left. */
static bool duet_open(const tf_run_opts *o, const tf_comparison *c, const tf_test_delta *t)
{
	if (tf_run_test_open(o, c, t))
		return true;
	if (t->outside && !c->summary.gate_outside)
		return false;
	return (t->verdict == TF_VERDICT_UNCHANGED || t->verdict == TF_VERDICT_INCONCLUSIVE) &&
	       !(t->p_adjusted < c->summary.alpha) &&
	       t->ci_high_pct >= tf_test_threshold(t, o->set.threshold);
}

/* One round: the merge-base's tests in `wt`, then this tree's, each
 * narrowed to `sel`. False when a run failed to record (*status) or the
 * merge-base's tests failed (*why_not). */
static bool duet_round(tf_run_opts *o, const tf_worktree *wt, const tf_selection *sel,
		       tf_run_side *b, tf_run_side *h, int *exit_status, int *status,
		       char **why_not)
{
	int st;
	bool ok = false;

	o->rec.only = sel;
	if (!tf_run_record(b, o, tf_worktree_cwd(wt), "merge-base alone", &st)) {
		*status = st ? st : TF_EXIT_ERROR;
		goto done;
	}
	if (b->runs.v[b->runs.n - 1].info.interrupted) {
		*status = 130;
		goto done;
	}
	if (st) {
		*why_not = tf_xasprintf("the merge-base's tests exited %d when run alone (%s)", st,
					sel->how);
		goto done;
	}
	if (!tf_run_record(h, o, NULL, "head alone", &st)) {
		*status = st ? st : TF_EXIT_ERROR;
		goto done;
	}
	if (st && !*exit_status)
		*exit_status = st;
	if (h->runs.v[h->runs.n - 1].info.interrupted) {
		*status = 130;
		goto done;
	}
	ok = true;
done:
	o->rec.only = NULL;
	return ok;
}

/* The first test of `open` a run of the duet does not list, or NULL. */
static const char *missing(const name_vec *open, const tf_run_side *s)
{
	const tf_profile *p = s->runs.v[s->runs.n - 1].profile;
	for (size_t i = 0; i < open->n; i++) {
		char *key = tf_xasprintf("test.%s", open->v[i]);
		bool listed = tf_profile_meta(p, key) != NULL;
		free(key);
		if (!listed)
			return open->v[i];
	}
	return NULL;
}

/*
 * Confirm the suspects (o->suspects) by running only them, the merge-base
 * checked out in `wt` and this tree in turn (ABAB), as many rounds as it
 * takes each to be decided (tf_run_test_open), from TF_DUET_ROUNDS_MIN to
 * TF_DUET_ROUNDS_MAX and within gate.confirm_budget of the suite's own
 * time (`suite_ns`, the first run's; the merge-base's build, `build_ns`,
 * apart, and said). A test decided stops running; the
 * verdicts go to o->decided and stand for the first run's. True when the
 * duet ran, *note saying how; false when the suspects cannot be run alone
 * or did not run when asked (*why_not: then the whole suite is), or when a
 * run failed to record (*status).
 */
static bool duet(tf_run_opts *o, const tf_worktree *wt, const tf_run_side *head,
		 uint64_t suite_ns, uint64_t build_ns, int *exit_status, int *status,
		 char **why_not, char **note)
{
	const tf_run_suite *rs = &o->rec;
	tf_run_side b = { 0 }, h = { 0 };
	name_vec open = { 0 };
	tf_selection *sel = NULL;
	char *first_how = NULL;
	const char *stopped = NULL;
	uint64_t spent = 0, last = 0, budget;
	size_t rounds = 0, ndecided = 0;
	/* the rounds the budget allows, and so the looks alpha is spent over:
	 * fixed by the time the fewest rounds took, before any look, so that
	 * a look the budget would never reach takes no share of it */
	long most = TF_DUET_ROUNDS_MAX, looks = TF_DUET_ROUNDS_MAX - TF_DUET_ROUNDS_MIN + 1;
	bool ok = false;

	budget = duet_budget(o, suite_ns);
	for (size_t i = 0; i < o->suspects.n; i++)
		tf_vec_push(&open, tf_xstrdup(o->suspects.v[i]));
	tf_run_decided_free(o);
	while (open.n) {
		if (rounds >= (size_t)most) {
			stopped = most < TF_DUET_ROUNDS_MAX ? "undecided after the rounds "
							      "gate.confirm_budget allows"
							    : "undecided after the most rounds a duet runs";
			break;
		}
		/* a round that would overrun the budget is not started */
		if (rounds >= TF_DUET_ROUNDS_MIN && budget && spent + last > budget) {
			stopped = "undecided when gate.confirm_budget was spent";
			break;
		}
		if (tf_attribute_select(&sel, (const char *const *)rs->cmd, environ,
					head->runs.v[0].profile, (const char *const *)open.v,
					open.n)) {
			*why_not = tf_xstrdup(tf_error_last());
			tf_error_clear();
			goto done;
		}
		if (!first_how)
			first_how = tf_xstrdup(sel->how);
		tf_run_note(o->rec.io, "duet round %zu: %zu test%s alone (%s), the merge-base %.12s "
			    "then this tree", rounds + 1, open.n, open.n == 1 ? "" : "s", sel->how,
			    tf_worktree_commit(wt));
		uint64_t t0 = tf_now_ns();
		if (!duet_round(o, wt, sel, &b, &h, exit_status, status, why_not))
			goto done;
		last = tf_now_ns() - t0;
		spent += last;
		rounds++;
		const char *gone = rounds == 1 ? missing(&open, &h) : NULL;
		if (!gone && rounds == 1)
			gone = missing(&open, &b);
		if (gone) {
			*why_not = tf_xasprintf("'%s' did not run when asked alone (%s)", gone,
						sel->how);
			goto done;
		}
		tf_selection_free(sel);
		sel = NULL;
		if (rounds < TF_DUET_ROUNDS_MIN)
			continue;
		if (rounds == TF_DUET_ROUNDS_MIN && budget) {
			double each = (double)spent / (double)rounds;
			double more = budget > spent ? (double)(budget - spent) / each : 0;
			most = TF_DUET_ROUNDS_MIN + (long)TF_MIN(more, (double)(TF_DUET_ROUNDS_MAX -
									 TF_DUET_ROUNDS_MIN));
			looks = most - TF_DUET_ROUNDS_MIN + 1;
		}
		tf_comparison *c = duet_compare(o, &b, &h, looks);
		for (size_t i = 0; c && i < open.n;) {
			const tf_test_delta *t = tf_comparison_find(c, open.v[i]);
			if (!t || duet_open(o, c, t)) {
				i++;
				continue;
			}
			decide(o, t, rounds, NULL);
			ndecided++;
			free(open.v[i]);
			open.v[i] = open.v[--open.n];
		}
		tf_comparison_free(c);
	}
	if (open.n) {
		/* what is left keeps its last verdict, undecided as it is */
		tf_comparison *c = rounds >= TF_DUET_ROUNDS_MIN ? duet_compare(o, &b, &h, looks)
								 : NULL;
		for (size_t i = 0; c && i < open.n; i++) {
			const tf_test_delta *t = tf_comparison_find(c, open.v[i]);
			if (t)
				decide(o, t, rounds, stopped);
		}
		tf_comparison_free(c);
	}
	char limit[64] = "none: the suite's own time is not known here";
	if (budget)
		snprintf(limit, sizeof(limit), "%.1f s", (double)budget / 1e9);
	*note = tf_xasprintf("%zu test%s run alone (%s), alternately with the merge-base %.12s: "
			     "%zu decided in %zu round%s, %.1f s (gate.confirm_budget %s), after "
			     "%.1f s building the merge-base",
			     o->suspects.n, o->suspects.n == 1 ? "" : "s", first_how,
			     tf_worktree_commit(wt), ndecided, rounds, rounds == 1 ? "" : "s",
			     (double)spent / 1e9, limit, (double)build_ns / 1e9);
	ok = true;
done:
	if (!ok)
		tf_run_decided_free(o);
	tf_selection_free(sel);
	for (size_t i = 0; i < open.n; i++)
		free(open.v[i]);
	tf_vec_free(&open);
	free(first_how);
	tf_run_side_free(&b);
	tf_run_side_free(&h);
	return ok;
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
	    duet(o, wt, head, suite_time(head), built, exit_status, status, why_whole, duet_note)) {
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
		char *changed = changed_unsettled(o, base, head);
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
