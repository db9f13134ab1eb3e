/*
 * baseline.c - the stored baseline of a run: the one nearest to the
 * merge-base on its first-parent history (from git, fetched in CI, or
 * from where the store mirrors runs), the noise its history teaches, the
 * line that introduces it, and this run kept as HEAD's baseline where it
 * belongs (the default branch, a clean tree), pushed in CI.
 */
#include "run/run_int.h"

#include <stdlib.h>
#include <string.h>

long tf_run_head_distance(const tf_context *ctx, const char *commit)
{
	tf_repo *repo = NULL;
	long d = -1;

	if (ctx->commit && tf_repo_open(&repo, NULL) == 0)
		d = tf_repo_distance(repo, ctx->commit, commit, 10000);
	tf_repo_free(repo);
	tf_error_clear();
	return d;
}

/* Each test's run-to-run noise, from the baseline `first` (of `from`) and
 * up to --history - 1 baselines before it. */
static void learn_noise(tf_run_opts *o, tf_store *st, const tf_profile *first, const char *from,
			const char *kind, const tf_store_resolve_opts *ro)
{
	TF_VEC(const tf_profile *) runs = { 0 };
	tf_profile **earlier;
	size_t n = tf_store_history(&earlier, st, from, o->rec.suite_name, kind,
				    (size_t)o->set.history - 1, ro), draws = 0;

	tf_vec_push(&runs, first);
	for (size_t i = 0; i < n; i++)
		tf_vec_push(&runs, earlier[i]);
	for (size_t i = 0; i < runs.n; i++)
		draws += tf_profile_count_runs(runs.v[i]);
	if (draws >= 3 &&
	    tf_compare_history_noise(&o->noise, &o->nnoise, runs.v, runs.n, NULL) == 0) {
		size_t shifted = 0;
		for (size_t i = 0; i < o->nnoise; i++)
			shifted += o->noise[i].shifted;
		tf_run_verbose(o->rec.io, "learned the run-to-run noise of %zu tests from %zu runs "
			       "in %zu baselines (of %zu also with each run's shift taken out)",
			       o->nnoise, draws, runs.n, shifted);
		/* a run far off all the others met a neighbour, not the test's
		 * noise: say which tests' spreads left one out (history.c) */
		for (size_t i = 0; i < o->nnoise; i++) {
			const tf_test_noise *tn = &o->noise[i];
			bool plain = tn->set_aside > 0;
			size_t aside = plain ? tn->set_aside : tn->shifted_set_aside;
			if (aside)
				tf_run_verbose(o->rec.io, "%s: %zu of its %zu stored runs set aside as "
					       "disturbed (the farthest %+.0f%% off the others%s); its "
					       "noise is learned from the rest", tn->test, aside, tn->runs,
					       plain ? tn->aside_pct : tn->shifted_aside_pct,
					       plain ? "" : ", each run's shift taken out");
		}
	}
	for (size_t i = 0; i < n; i++)
		tf_profile_free(earlier[i]);
	free(earlier);
	tf_vec_free(&runs);
}

bool tf_run_find_baseline(tf_run_opts *o, tf_store *st, const char *start, const char *kind,
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
		tf_run_warn(o->rec.io, "%s; looking at local baselines only", m->remote_error);
		ro.fetch = false;
	}
	if (rc == TF_ENOTFOUND && !m->commit[0]) { /* git holds none: Pyroscope may */
		tf_store_match pm;
		tf_store_run sr = { .ctx = ctx, .suite = o->rec.suite_name, .kind = kind };
		if ((rc = tf_store_find_elsewhere(&pm, st, start, &sr)) == 0)
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
		if (o->set.history > 1)
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
		tf_run_warn(o->rec.io, "%s", tf_error_last());
		*why = tf_xasprintf("the baseline of %.12s cannot be read", m->commit);
	} else if (rc == TF_ENOTFOUND) {
		char *none = tf_xstrdup(tf_error_last());
		char *others = tf_store_others(st, start, o->rec.suite_name, kind);
		*why = others ? tf_xasprintf("%s; %s", none, others) : tf_xstrdup(none);
		tf_run_note(o->rec.io, "%s", none);
		free(none);
		if (others)
			tf_run_note(o->rec.io, "%s", others);
		free(others);
	} else {
		tf_run_warn(o->rec.io, "no baseline: %s", tf_error_last());
		*why = tf_xstrdup(tf_error_last());
	}
	tf_store_found_clear(&f);
	return rc == 0;
}

bool tf_run_will_save(const tf_run_opts *o)
{
	const tf_context *ctx = o->rec.ctx;
	return ctx->commit && !o->no_save && (o->save || (ctx->on_default_branch && !ctx->dirty));
}

void tf_run_save_baseline(tf_run_opts *o, tf_store *st, const tf_run_side *head,
			  const char *kind)
{
	const tf_context *ctx = o->rec.ctx;
	TF_VEC(const tf_profile *) ps = { 0 };
	tf_store_sync_list sl = { 0 };
	const char *revs[1] = { ctx->commit };
	bool in_ci = ctx->ci && ctx->ci->provider != TF_CI_LOCAL;
	int rc;

	for (size_t i = 0; i < head->runs.n && !head->runs.v[i].info.interrupted; i++)
		tf_vec_push(&ps, head->runs.v[i].profile);
	rc = tf_store_save_runs(st, ctx->commit, o->rec.suite_name, kind, ps.v, ps.n);
	if (rc)
		tf_run_warn(o->rec.io, "could not save the baseline: %s", tf_error_last());
	else if (ps.n > 1)
		tf_run_note(o->rec.io, "saved the baseline of '%s' for %.12s (%s, %zu runs) in the "
			    "%s", o->rec.suite_name, ctx->commit, kind, ps.n,
			    tf_store_describe(st));
	else
		tf_run_note(o->rec.io, "saved the baseline of '%s' for %.12s (%s) in the %s",
			    o->rec.suite_name, ctx->commit, kind, tf_store_describe(st));
	tf_vec_free(&ps);
	if (rc || !tf_store_is_git(st) || o->no_push || !(o->push || in_ci))
		return;
	if (tf_store_push(&sl, st, revs, 1))
		tf_run_warn(o->rec.io, "could not push the baseline: %s", tf_error_last());
	else
		tf_run_note(o->rec.io, "pushed the baseline of '%s' for %.12s to '%s'",
			    o->rec.suite_name, ctx->commit,
			    tf_store_remote_url(st) ? tf_store_remote_url(st) : "the remote");
	tf_store_sync_list_free(&sl);
}

/* Outside CI (--fetch): bring the remote's baseline nearest to `start`, so
 * that a fresh clone knows what CI recorded. */
static void fetch_nearest(const tf_run_io *io, tf_store *st, const char *start)
{
	char got[TF_STORE_ID_HEX + 1];
	int rc = tf_store_fetch_nearest(got, st, start);

	if (rc == 0)
		tf_run_note(io, "fetched the baseline of %.12s from '%s'", got,
			 tf_store_remote_url(st) ? tf_store_remote_url(st) : "the remote");
	else if (rc != TF_ENOTFOUND)
		tf_run_warn(io, "%s", tf_error_last());
}

/*
 * --or-against-merge-base: the walk start (the merge-base, or HEAD^ on the
 * target branch) when no baseline is stored for this suite near it, so
 * the base gets built and run here instead; NULL when one is stored (or
 * there is no history to build from).
 */
char *tf_run_against_if_none(tf_run_opts *o)
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
	if (tf_run_store_open(&st, o->flags.store, o->rec.cfg, o->remote, o->rec.io) == 0) {
		if (o->fetch && !o->no_fetch && tf_store_is_git(st))
			fetch_nearest(o->rec.io, st, start);
		stored = tf_store_resolve_suite(&m, st, start, o->rec.suite_name, &ro) == 0;
	}
	tf_store_free(st);
	tf_error_clear();
	if (stored) {
		free(start);
		return NULL;
	}
	tf_run_note(o->rec.io, "no stored baseline of '%s' before %.12s: building it beside this "
		    "tree to compare", o->rec.suite_name, start);
	return start;
}
