/*
 * run_common.c - the runs of `testflame run` (see run_common.h): what
 * happens to them whichever mode found the base side.
 */
#include "publish_common.h"
#include "pyroscope_common.h"
#include "report_common.h"
#include "run_common.h"
#include "store_common.h"

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
	co.min_delta_ns = o->min_delta_ns;
	co.measure = o->measure;
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
	if (o->only_suspects) {
		co.suspects = (const char *const *)o->suspects.v;
		co.nsuspects = o->suspects.n;
	}
	co.origin = o->origin;
	rc = tf_compare(c, &bs, &hs, &co);
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	return rc;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool tf_run_undecided(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head)
{
	tf_comparison *c = NULL;
	bool open = false, was = o->interleaved;

	/* judged as the verdict will be: the gate's settings, the history's
	 * noise, the sides alternating in this job */
	o->interleaved = true;
	if (compare_sides(&c, o, base, head, false) == 0)
		for (size_t i = 0; i < c->ntests && !open; i++) {
			const tf_test_delta *t = &c->tests[i];
			double thr = tf_test_threshold(t, o->threshold);
			if (t->outside && !c->summary.gate_outside)
				continue;
			open = t->verdict == TF_VERDICT_INCONCLUSIVE && t->delta_pct >= thr;
			/* a test still slower (its interval above zero) that may yet
			 * reach the threshold, standing out of the family or one
			 * that looked slower in the first run: under a neighbour that
			 * comes and goes, a true 10% measured +4.9% (+0.7% to +9.2%)
			 * in three rounds, and true 5%s +4.9% (+2.0% to +7.8%) and
			 * +4.1% (+1.5% to +6.8%) in confirmations another test had
			 * raised; all passed */
			if (!open && tf_comparison_may_reach(c, t, o->threshold))
				open = true;
			if (!open && t->verdict != TF_VERDICT_REGRESSED && t->ci_low_pct > 0 &&
			    t->ci_high_pct >= thr && !(t->p_adjusted < c->summary.alpha))
				for (size_t k = 0; k < o->suspects.n && !open; k++)
					open = strcmp(o->suspects.v[k], t->name) == 0;
		}
	o->interleaved = was;
	tf_error_clear();
	tf_comparison_free(c);
	return open;
}

void tf_run_suspects_free(tf_run_opts *o)
{
	for (size_t i = 0; i < o->suspects.n; i++)
		free(o->suspects.v[i]);
	tf_vec_free(&o->suspects);
}

/* The worst test that looks slower (with `failing`: of those the gate
 * would fail on), o->suspects naming them all. */
static char *slower(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head,
		    bool failing)
{
	tf_comparison *c = NULL;
	const tf_test_delta *t = NULL;
	char *why = NULL;

	tf_run_suspects_free(o);
	if (compare_sides(&c, o, base, head, false) == 0) {
		if (!failing)
			t = tf_comparison_looks_slower(c, o->threshold);
		else
			for (size_t i = 0; i < c->ntests; i++)
				if (c->tests[i].verdict == TF_VERDICT_REGRESSED &&
				    (!c->tests[i].outside || c->summary.gate_outside) &&
				    (!t || c->tests[i].delta_pct > t->delta_pct))
					t = &c->tests[i];
	}
	if (t) {
		why = tf_xasprintf("%s looks %.1f%% slower (95%% CI %+.1f%% to %+.1f%%)", t->name,
				   t->delta_pct, t->ci_low_pct, t->ci_high_pct);
		for (size_t i = 0; i < c->ntests; i++)
			if (tf_comparison_suspect(c, &c->tests[i], o->threshold))
				tf_vec_push(&o->suspects, tf_xstrdup(c->tests[i].name));
		qsort(o->suspects.v, o->suspects.n, sizeof(*o->suspects.v), by_name);
		for (size_t i = 0; i < o->suspects.n; i++)
			tf_verbosef("looks slower: %s", o->suspects.v[i]);
	}
	tf_error_clear();
	tf_comparison_free(c);
	return why;
}

char *tf_run_looks_slower(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head)
{
	return slower(o, base, head, false);
}

char *tf_run_would_fail(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head)
{
	return slower(o, base, head, true);
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


const tf_option *tf_run_cli_options(tf_run_opts *o)
{
	const tf_option opts[] = {
		TF_OPT_DOUBLE(0, "threshold", &o->threshold, "PCT",
			      "smallest slowdown that fails the gate (default 5)"),
		TF_OPT_STRING(0, "min-delta", &o->min_delta, "TIME",
			      "smallest change of a test's time a run that counts (default 1ms; 0: none)"),
		TF_OPT_STRING(0, "measure", &o->measure_flag, "WHAT",
			      "judge tests by their CPU time and their waits apart (both, the default), "
			      "by CPU alone, or by wall time", .choices = tf_gate_measure_names),
		TF_OPT_STRING(0, "target", &o->rec.target_branch, "BRANCH",
			      "the branch to compare with (default: the PR's base, else the default branch)"),
		TF_OPT_STRING(0, "store", &o->store_spec, "SPEC",
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
		TF_OPT_INT(0, "history", &o->history, "N",
			   "learn each test's noise from up to N stored baselines (default 10; 1 = off)",
			   1, 1000),
		TF_OPT_FLAG(0, "no-fail", &o->no_fail, "report regressions but exit 0"),
		TF_OPT_GROUP("report:"),
		TF_OPT_STRING(0, "report", &o->report_dir, "DIR",
			      "the report directory (default testflame-report)"),
		TF_OPT_FLAG(0, "all", &o->all, "list unchanged tests too"),
		TF_OPT_STRING(0, "color", &o->color, "WHEN", "colour the table",
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

	/* the table points into `o`, so it lives with it */
	free(o->options);
	o->options = tf_xmalloc(sizeof(opts));
	memcpy(o->options, opts, sizeof(opts));
	return o->options;
}

int tf_run_check_flags(const tf_run_opts *o, const char *const *usage)
{
	if (o->save && o->no_save)
		return tf_usage_error(usage, "--save and --no-save contradict each other");
	if (o->threshold != -1 && (o->threshold < 0 || o->threshold > 1000))
		return tf_usage_error(usage, "--threshold must be a percentage between 0 and 1000");
	if (o->min_delta && !tf_config_parse_duration(o->min_delta, &(double){ 0 }))
		return tf_usage_error(usage, "--min-delta must be a duration such as 1ms, 500us or 0, "
				      "not '%s'", o->min_delta);
	return 0;
}

void tf_run_resolve(tf_run_opts *o)
{
	const tf_config *cfg = o->rec.cfg;

	if (o->threshold < 0)
		o->threshold = cfg->gate.threshold >= 0 ? cfg->gate.threshold : 5.0;
	o->min_delta_ns = cfg->gate.min_delta_ns >= 0 ? cfg->gate.min_delta_ns : TF_MIN_DELTA_NS;
	if (o->min_delta)
		tf_config_parse_duration(o->min_delta, &o->min_delta_ns);
	/* parsed when given: the option's choices and the config's are one list */
	o->measure = TF_GATE_BOTH;
	if (o->measure_flag || cfg->gate.measure)
		tf_gate_measure_parse(&o->measure, o->measure_flag ? o->measure_flag : cfg->gate.measure);
	if (!o->no_fail && !tf_config_bool(cfg->gate.fail_on_regression, true))
		o->no_fail = true;
	if (!o->report_dir)
		o->report_dir = cfg->report.dir ? cfg->report.dir : "testflame-report";
	if (!o->history)
		o->history = 10;
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

int tf_run_finish(tf_run_opts *o, tf_store *st, tf_run_side *base, tf_run_side *head,
		  const char *note, const char *why, const char *base_commit, const char *kind,
		  int exit_status)
{
	const tf_context *ctx = o->rec.ctx;
	int status = TF_EXIT_OK;
	bool interrupted = head->runs.v[0].info.interrupted ||
			   tf_profile_meta(head->runs.v[0].profile, "interrupted");
	/* a run whose tests did not run (go test's cache) judges nothing and
	 * is no baseline: its tests are not gone */
	const char *cached = tf_profile_meta(head->runs.v[0].profile, "cached");

	if (base && cached) {
		base = NULL;
		why = cached;
	}
	if (base) {
		status = tf_run_report(o, base, head, note, base_commit,
				       tf_run_head_distance(ctx, base_commit));
		if (status == TF_EXIT_ERROR)
			return status;
	} else {
		/* still leave the run where the report would be */
		if (tf_report_write_no_baseline(o->report_dir, o->rec.suite_name,
						head->runs.v[0].profile, why) == 0)
			printf("no baseline yet; this run is in %s/head.pb.gz\n", o->report_dir);
		else
			tf_warnf("%s", tf_error_last());
		tf_run_publish(o, NULL, NULL, NULL);
	}

	if (!exit_status && !interrupted && !cached) /* as for saving */
		tf_cli_pyroscope_push(st, &o->rec, kind, head->runs.v, head->runs.n);
	/* keep this run as the baseline of HEAD where it belongs */
	if (st && !exit_status && !interrupted && !cached && tf_run_will_save(o)) {
		tf_run_save_baseline(o, st, head, kind);
		tf_run_history_note(o, st, kind);
	} else if (st && cached && tf_run_will_save(o))
		tf_warnf("not saving a baseline: %s", cached);
	else if (st && o->save && exit_status)
		tf_warnf("not saving a baseline of a failing suite (exit status %d)", exit_status);
	return tf_run_status(o, exit_status, status == TF_EXIT_REGRESSION);
}
