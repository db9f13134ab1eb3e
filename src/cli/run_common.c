/*
 * run_common.c - the runs of `testflame run` (see run_common.h): what
 * happens to them whichever mode found the base side.
 */
#include "publish_common.h"
#include "pyroscope_common.h"
#include "report_common.h"
#include "run_common.h"

#include <stdlib.h>
#include <string.h>

void tf_run_side_free(tf_run_side *s)
{
	for (size_t i = 0; i < s->runs.n; i++)
		tf_record_result_free(&s->runs.v[i]);
	for (size_t i = 0; i < s->names.n; i++)
		free(s->names.v[i]);
	tf_vec_free(&s->runs);
	tf_vec_free(&s->names);
}

void tf_run_side_add(tf_run_side *s, tf_profile *p, char *name)
{
	tf_record_result r;
	memset(&r, 0, sizeof(r));
	r.profile = p;
	tf_vec_push(&s->runs, r);
	tf_vec_push(&s->names, name);
}

bool tf_run_record(tf_run_side *side, tf_run_opts *o, const char *cwd, const char *label,
		   int *status)
{
	tf_record_result res;
	o->rec.ro.cwd = cwd;
	if (!tf_record_cli_run(&res, &o->rec, status))
		return false;
	tf_vec_push(&side->runs, res);
	tf_vec_push(&side->names, tf_xasprintf("%s run %zu", label, side->runs.n));
	tf_verbosef("%s run %zu: %llu samples, exit status %d", label, side->runs.n,
		    (unsigned long long)res.stats.samples, *status);
	return true;
}

bool tf_run_record_head(tf_run_side *head, tf_run_opts *o, long count, int *exit_status,
			int *status)
{
	for (long i = 0; i < count; i++) {
		int s;
		if (!tf_run_record(head, o, NULL, "head", &s)) {
			*status = s;
			return false;
		}
		if (s && !*exit_status)
			*exit_status = s;
		if (head->runs.v[head->runs.n - 1].info.interrupted)
			break;
	}
	return true;
}

int tf_run_status(const tf_run_opts *o, int exit_status, bool regressed)
{
	if (exit_status)
		return exit_status;
	return regressed && !o->no_fail ? TF_EXIT_REGRESSION : TF_EXIT_OK;
}

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

/* Publishing, in CI: one call after the report is written. `c` is NULL
 * when there was nothing to compare (report.md then says why). */
void tf_run_publish(tf_run_opts *o, const tf_comparison *c, const tf_report_opts *ro,
		    const char *baseline)
{
	const tf_context *ctx = o->rec.ctx;
	const tf_config *cfg = o->rec.cfg;
	tf_cli_publish_in in;

	if (o->no_publish || !ctx->ci || ctx->ci->provider == TF_CI_LOCAL)
		return;
	memset(&in, 0, sizeof(in));
	in.c = c;
	in.ro = ro;
	in.report_dir = o->report_dir;
	in.ci = ctx->ci;
	in.cfg = cfg;
	in.changes = ctx->git && ctx->git->changes_known ? &ctx->git->changes : NULL;
	in.suite = o->rec.suite_name;
	in.baseline = baseline;
	in.comment = tf_cli_publish_switch(o->no_comment, cfg->publish.comment);
	in.annotations = tf_cli_publish_switch(o->no_annotations, cfg->publish.annotations);
	in.step_summary = tf_cli_publish_switch(o->no_step_summary, cfg->publish.step_summary);
	tf_cli_publish(&in, true);
}

/* Compare the two sides with the gate's settings. */
static int compare_sides(tf_comparison **c, const tf_run_opts *o, const tf_run_side *base,
			 const tf_run_side *head, bool named)
{
	TF_VEC(const tf_profile *) bp = { 0 }, hp = { 0 };
	tf_compare_opts co;
	int rc;

	for (size_t i = 0; i < base->runs.n; i++)
		tf_vec_push(&bp, base->runs.v[i].profile);
	for (size_t i = 0; i < head->runs.n; i++)
		tf_vec_push(&hp, head->runs.v[i].profile);
	tf_compare_side bs = { bp.v, named ? (const char *const *)base->names.v : NULL, bp.n };
	tf_compare_side hs = { hp.v, named ? (const char *const *)head->names.v : NULL, hp.n };
	tf_compare_opts_init(&co);
	co.threshold = o->threshold;
	if (o->rec.cfg->gate.alpha > 0)
		co.alpha = o->rec.cfg->gate.alpha;
	if (o->rec.cfg->gate.min_samples > 0)
		co.min_samples = (double)o->rec.cfg->gate.min_samples;
	co.history = o->noise;
	co.nhistory = o->nnoise;
	/* sides run alternately in this job share its moment: no job-to-job
	 * noise between them */
	co.separate_jobs = o->against == NULL && !o->interleaved;
	co.gate_outside = tf_config_bool(o->rec.cfg->gate.outside, false);
	co.confirmation = o->confirmation;
	rc = tf_compare(c, &bs, &hs, &co);
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	return rc;
}

char *tf_run_looks_slower(const tf_run_opts *o, const tf_run_side *base, const tf_run_side *head)
{
	tf_comparison *c = NULL;
	const tf_test_delta *t;
	char *why = NULL;

	if (compare_sides(&c, o, base, head, false) == 0 &&
	    (t = tf_comparison_looks_slower(c, o->threshold)))
		why = tf_xasprintf("%s looks %.1f%% slower (95%% CI %+.1f%% to %+.1f%%)", t->name,
				   t->delta_pct, t->ci_low_pct, t->ci_high_pct);
	tf_error_clear();
	tf_comparison_free(c);
	return why;
}

int tf_run_report(tf_run_opts *o, tf_run_side *base, tf_run_side *head, const char *note,
		  const char *base_commit, long distance)
{
	const tf_context *ctx = o->rec.ctx;
	tf_comparison *c = NULL;
	tf_report_opts ro;
	tf_cli_pyroscope_link pl = { 0 };
	char *repo_url = NULL;
	int rc, status = TF_EXIT_ERROR;

	/* where the sources were, so a later `publish` can make paths relative */
	for (size_t i = 0; i < head->runs.n && ctx->git && ctx->git->workdir; i++)
		tf_profile_set_meta(head->runs.v[i].profile, "workdir", ctx->git->workdir);
	if ((rc = compare_sides(&c, o, base, head, true))) {
		tf_fail(rc);
		goto done;
	}
	/* the repository's web page, for source links; else the report guesses */
	if (ctx->ci && ctx->ci->server_url && ctx->repository)
		repo_url = tf_xasprintf("%s/%s", ctx->ci->server_url, ctx->repository);
	tf_report_opts_init(&ro);
	ro.dir = o->report_dir;
	ro.suite = o->rec.suite_name;
	ro.provider = ctx->ci ? tf_ci_provider_name(ctx->ci->provider) : NULL;
	ro.repo_url = repo_url;
	ro.head_commit = ctx->head_sha ? ctx->head_sha : ctx->commit;
	ro.base_commit = base_commit;
	ro.base_distance = distance;
	ro.run_url = ctx->run_url;
	ro.source_root = ctx->git ? ctx->git->workdir : NULL;
	tf_cli_pyroscope_links(&ro, &pl, o->store, &o->rec, base_commit, o->kind);
	if ((rc = tf_report_write(c, &ro))) {
		tf_fail(rc);
		goto done;
	}
	if (note)
		printf("%s\n", note);
	if ((rc = tf_cli_print_table(c, o->report_dir, o->color, o->all))) {
		tf_fail(rc);
		goto done;
	}
	fflush(stdout);
	tf_run_publish(o, c, &ro, base_commit);
	status = tf_comparison_regressed(c) ? TF_EXIT_REGRESSION : TF_EXIT_OK;
done:
	tf_cli_pyroscope_link_free(&pl);
	tf_comparison_free(c);
	free(repo_url);
	return status;
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
		tf_warnf("could not save the baseline: %s", tf_error_last());
	else if (ps.n > 1)
		tf_notef("saved the baseline of '%s' for %.12s (%s, %zu runs) in the %s",
			 o->rec.suite_name, ctx->commit, kind, ps.n, tf_store_describe(st));
	else
		tf_notef("saved the baseline of '%s' for %.12s (%s) in the %s", o->rec.suite_name,
			 ctx->commit, kind, tf_store_describe(st));
	tf_vec_free(&ps);
	if (rc || !tf_store_is_git(st) || o->no_push || !(o->push || in_ci))
		return;
	if (tf_store_push(&sl, st, revs, 1))
		tf_warnf("could not push the baseline: %s", tf_error_last());
	else
		tf_notef("pushed the baseline of '%s' for %.12s to '%s'", o->rec.suite_name, ctx->commit,
			 tf_store_remote_url(st) ? tf_store_remote_url(st) : "the remote");
	tf_store_sync_list_free(&sl);
}

bool tf_run_will_save(const tf_run_opts *o)
{
	const tf_context *ctx = o->rec.ctx;
	return ctx->commit && !o->no_save && (o->save || (ctx->on_default_branch && !ctx->dirty));
}

