/*
 * run.c - the runs of `testflame run` and `merge`, whichever way the base
 * side was found (see run_int.h): the two sides and the runs recorded into
 * them, the comparison with the gate's settings and what is asked of it
 * before the verdict (does a test look slower, would the gate fail, is a
 * slowdown still undecided), the report and the table, publishing in CI,
 * and the end of every flow: mirror, keep, exit status. The stored mode
 * of `run` is here too; the others are against.c and shard.c.
 */
#include "run/run_int.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

void tf_run_opts_init(tf_run_opts *o, const tf_run_io *io)
{
	memset(o, 0, sizeof(*o));
	tf_run_suite_init(&o->rec, io);
}

void tf_run_flow_clear(tf_run_opts *o)
{
	free(o->confirmation);
	o->confirmation = NULL;
	free(o->origin);
	o->origin = NULL;
	tf_run_suspects_free(o);
	o->only_suspects = false;
	tf_run_decided_free(o);
	o->store = NULL; /* the flow's, freed by it */
	o->kind = NULL;
}

void tf_run_opts_free(tf_run_opts *o)
{
	tf_run_flow_clear(o);
	tf_test_noise_free(o->noise, o->nnoise);
	o->noise = NULL;
	o->nnoise = 0;
	free(o->against_owned);
	o->against_owned = NULL;
	tf_run_suite_free(&o->rec);
}

int tf_run_check_flags(const tf_run_opts *o)
{
	int rc;

	if (o->save && o->no_save)
		return tf_error_set(TF_EUSAGE, "--save and --no-save contradict each other");
	if ((rc = tf_settings_check_flags(&o->flags)))
		return rc;
	if (o->shard_flag && o->no_shard)
		return tf_error_set(TF_EUSAGE, "--shard and --no-shard contradict each other");
	if (!o->shard_flag)
		return 0;
	if (tf_shard_parse(&(tf_shard){ 0 }, o->shard_flag))
		return tf_error_wrap(TF_EUSAGE, "--shard");
	if (o->against || o->or_against_merge_base)
		return tf_error_set(TF_EUSAGE, "--shard records a part of the suite: it compares "
				    "with nothing (`testflame merge` compares the whole suite)");
	if (o->save)
		return tf_error_set(TF_EUSAGE, "--shard records a part of the suite: `testflame "
				    "merge` saves the baseline of the whole suite");
	return 0;
}

int tf_run_resolve(tf_run_opts *o)
{
	int rc = tf_settings_resolve(&o->set, &o->flags, o->rec.cfg, environ);
	if (!rc)
		tf_run_resolve_confirm(o);
	return rc;
}

int tf_run_resolve_run(tf_run_opts *o)
{
	const tf_config *cfg = o->rec.cfg;

	/* flags over .testflame.yml over defaults */
	if (o->shard_flag)
		tf_shard_parse(&o->shard, o->shard_flag);
	else if (!o->no_shard)
		tf_run_shard_from_ci(o);
	if (!o->against && !o->shard.total)
		o->against = cfg->against;
	if (!o->against && o->or_against_merge_base)
		o->against = o->against_owned = tf_run_against_if_none(o);
	if (!o->repeat && !o->against && cfg->baseline_repeat && tf_run_will_save(o))
		o->repeat = cfg->baseline_repeat;
	if (!o->repeat)
		o->repeat = cfg->repeat ? cfg->repeat : o->against ? 3 : 1;
	return tf_run_resolve(o);
}

int tf_run_main(tf_run_opts *o)
{
	if (o->shard.total)
		return tf_run_shard(o);
	return o->against ? tf_run_against(o) : tf_run_stored(o);
}

void tf_run_side_free(tf_run_side *s)
{
	for (size_t i = 0; i < s->runs.n; i++)
		tf_run_result_free(&s->runs.v[i]);
	for (size_t i = 0; i < s->names.n; i++)
		free(s->names.v[i]);
	tf_vec_free(&s->runs);
	tf_vec_free(&s->names);
}

void tf_run_side_add(tf_run_side *s, tf_profile *p, char *name)
{
	tf_run_result r;
	memset(&r, 0, sizeof(r));
	r.profile = p;
	tf_vec_push(&s->runs, r);
	tf_vec_push(&s->names, name);
}

bool tf_run_record_into(tf_run_side *side, tf_run_suite *s, const char *cwd, const char *label,
			int *status)
{
	tf_run_result res;
	s->ro.cwd = cwd;
	if (!tf_run_record_one(&res, s, status))
		return false;
	tf_vec_push(&side->runs, res);
	tf_vec_push(&side->names, tf_xasprintf("%s run %zu", label, side->runs.n));
	tf_run_verbose(s->io, "%s run %zu: %llu samples, exit status %d", label, side->runs.n,
		    (unsigned long long)res.stats.samples, *status);
	return true;
}

bool tf_run_record(tf_run_side *side, tf_run_opts *o, const char *cwd, const char *label,
		   int *status)
{
	return tf_run_record_into(side, &o->rec, cwd, label, status);
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
	return regressed && o->set.fail_on_regression ? TF_EXIT_REGRESSION : TF_EXIT_OK;
}

void tf_run_publish_ci(tf_run_opts *o, const tf_comparison *c, const tf_report_opts *ro,
		    const char *baseline)
{
	const tf_context *ctx = o->rec.ctx;
	const tf_config *cfg = o->rec.cfg;
	tf_run_publish_in in;

	if (o->no_publish || !ctx->ci || ctx->ci->provider == TF_CI_LOCAL)
		return;
	memset(&in, 0, sizeof(in));
	in.c = c;
	in.ro = ro;
	in.report_dir = o->set.report_dir;
	in.ci = ctx->ci;
	in.cfg = cfg;
	in.changes = ctx->git && ctx->git->changes_known ? &ctx->git->changes : NULL;
	in.suite = o->rec.suite_name;
	in.baseline = baseline;
	in.comment = tf_run_publish_switch(o->no_comment, cfg->publish.comment);
	in.annotations = tf_run_publish_switch(o->no_annotations, cfg->publish.annotations);
	in.step_summary = tf_run_publish_switch(o->no_step_summary, cfg->publish.step_summary);
	in.io = o->rec.io;
	tf_run_publish(&in, true);
}

int tf_run_compare(tf_comparison **c, const tf_run_opts *o, const tf_run_side *base,
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
	tf_compare_opts_set(&co, &o->set);
	co.history = o->noise;
	co.nhistory = o->nnoise;
	/* sides run alternately in this job share its moment: no job-to-job
	 * noise between them */
	co.separate_jobs = o->against == NULL && !o->interleaved;
	co.picked = o->picked;
	co.paired = o->together;
	co.confirmation = o->confirmation;
	if (o->only_suspects) {
		co.suspects = (const char *const *)o->suspects.v;
		co.nsuspects = o->suspects.n;
	}
	co.origin = o->origin;
	co.decided = o->decided.v;
	co.ndecided = o->decided.n;
	rc = tf_compare(c, &bs, &hs, &co);
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	return rc;
}

/* The allocations of the two sides, judged like time (compare.c's memory
 * comparison); NULL, and no error, when a side did not measure them. */
static tf_comparison *compare_memory(const tf_run_opts *o, const tf_run_side *base,
				     const tf_run_side *head)
{
	TF_VEC(const tf_profile *) bp = { 0 }, hp = { 0 };
	tf_comparison *m = NULL;
	tf_compare_opts co;
	bool measured = true;

	for (size_t i = 0; i < base->runs.n; i++) {
		tf_vec_push(&bp, base->runs.v[i].profile);
		measured = measured && tf_profile_find_sample_type(bp.v[i], "alloc_space") >= 0;
	}
	for (size_t i = 0; i < head->runs.n; i++) {
		tf_vec_push(&hp, head->runs.v[i].profile);
		measured = measured && tf_profile_find_sample_type(hp.v[i], "alloc_space") >= 0;
	}
	if (measured) {
		tf_compare_side bs = { bp.v, (const char *const *)base->names.v, bp.n };
		tf_compare_side hs = { hp.v, (const char *const *)head->names.v, hp.n };
		tf_compare_opts_init(&co);
		co.value = "alloc_space";
		co.threshold = o->set.memory_threshold;
		co.min_delta_bytes = o->set.memory_min_bytes;
		co.alpha = o->set.alpha;
		co.separate_jobs = o->against == NULL && !o->interleaved;
		co.origin = o->origin;
		if (tf_compare(&m, &bs, &hs, &co)) {
			tf_run_warn(o->rec.io, "memory: %s", tf_error_last());
			tf_error_clear();
			m = NULL;
		}
	} else if (o->set.memory_gated) {
		tf_run_note(o->rec.io, "memory: the %s did not measure allocations (gate.memory "
			    "records them from now on): not judged this time",
			    tf_profile_find_sample_type(bp.v[0], "alloc_space") < 0 ? "baseline"
										: "head run");
	}
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	return m;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

bool tf_run_test_open(const tf_run_opts *o, const tf_comparison *c, const tf_test_delta *t)
{
	double thr = tf_test_threshold(t, o->set.threshold);
	bool open;

	if (t->outside && !c->summary.gate_outside)
		return false;
	open = t->verdict == TF_VERDICT_INCONCLUSIVE && t->delta_pct >= thr;
	/* a test still slower (its interval above zero) that may yet
	 * reach the threshold, standing out of the family or one
	 * that looked slower in the first run: under a neighbour that
	 * comes and goes, a true 10% measured +4.9% (+0.7% to +9.2%)
	 * in three rounds, and true 5%s +4.9% (+2.0% to +7.8%) and
	 * +4.1% (+1.5% to +6.8%) in confirmations another test had
	 * raised; all passed */
	if (!open && tf_comparison_may_reach(c, t, o->set.threshold))
		open = true;
	if (!open && t->verdict != TF_VERDICT_REGRESSED && t->ci_low_pct > 0 &&
	    t->ci_high_pct >= thr && !(t->p_adjusted < c->summary.alpha))
		for (size_t k = 0; k < o->suspects.n && !open; k++)
			open = strcmp(o->suspects.v[k], t->name) == 0;
	return open;
}

bool tf_run_undecided(tf_run_opts *o, const tf_run_side *base, const tf_run_side *head)
{
	tf_comparison *c = NULL;
	bool open = false, was = o->interleaved;

	/* judged as the verdict will be: the gate's settings, the history's
	 * noise, the sides alternating in this job */
	o->interleaved = true;
	if (tf_run_compare(&c, o, base, head, false) == 0)
		for (size_t i = 0; i < c->ntests && !open; i++)
			open = tf_run_test_open(o, c, &c->tests[i]);
	o->interleaved = was;
	tf_error_clear();
	tf_comparison_free(c);
	return open;
}

void tf_run_decided_free(tf_run_opts *o)
{
	for (size_t i = 0; i < o->decided.n; i++) {
		free((char *)o->decided.v[i].test);
		free((char *)o->decided.v[i].reason);
	}
	tf_vec_free(&o->decided);
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
	if (tf_run_compare(&c, o, base, head, false) == 0) {
		if (!failing)
			t = tf_comparison_looks_slower(c, o->set.threshold);
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
			if (tf_comparison_suspect(c, &c->tests[i], o->set.threshold))
				tf_vec_push(&o->suspects, tf_xstrdup(c->tests[i].name));
		qsort(o->suspects.v, o->suspects.n, sizeof(*o->suspects.v), by_name);
		for (size_t i = 0; i < o->suspects.n; i++)
			tf_run_verbose(o->rec.io, "looks slower: %s", o->suspects.v[i]);
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

static char *store_link(const char *test, void *payload)
{
	return tf_store_link(payload, test);
}

int tf_run_report(tf_run_opts *o, tf_run_side *base, tf_run_side *head, const char *note,
		  const char *base_commit, long distance)
{
	const tf_context *ctx = o->rec.ctx;
	tf_comparison *c = NULL, *mem = NULL;
	tf_report_opts ro;
	tf_store_run sr = { .ctx = ctx, .suite = o->rec.suite_name, .kind = o->kind };
	tf_store_links *links = NULL;
	char *repo_url = NULL;
	int rc, status = TF_EXIT_ERROR;

	/* where the sources were, so a later `publish` can make paths relative */
	for (size_t i = 0; i < head->runs.n && ctx->git && ctx->git->workdir; i++)
		tf_profile_set_meta(head->runs.v[i].profile, "workdir", ctx->git->workdir);
	if ((rc = tf_run_compare(&c, o, base, head, true))) {
		tf_run_fail(o->rec.io, rc);
		goto done;
	}
	mem = compare_memory(o, base, head);
	/* the repository's web page, for source links; else the report guesses */
	if (ctx->ci && ctx->ci->server_url && ctx->repository)
		repo_url = tf_xasprintf("%s/%s", ctx->ci->server_url, ctx->repository);
	tf_report_opts_init(&ro);
	ro.dir = o->set.report_dir;
	ro.suite = o->rec.suite_name;
	ro.provider = ctx->ci ? tf_ci_provider_name(ctx->ci->provider) : NULL;
	ro.repo_url = repo_url;
	ro.head_commit = ctx->head_sha ? ctx->head_sha : ctx->commit;
	ro.base_commit = base_commit;
	ro.base_distance = distance;
	ro.run_url = ctx->run_url;
	ro.source_root = ctx->git ? ctx->git->workdir : NULL;
	ro.memory = mem;
	ro.memory_gated = o->set.memory_gated;
	/* the store's links from each test to a comparison elsewhere (Grafana) */
	tf_store_links_new(&links, o->store, &sr, base_commit);
	if (links) {
		ro.test_link = store_link;
		ro.test_link_payload = links;
		ro.test_link_text = tf_store_links_text(links);
	}
	if ((rc = tf_report_write(c, &ro))) {
		tf_run_fail(o->rec.io, rc);
		goto done;
	}
	/* -q: only the regressions (the table's callback), not the baseline's line */
	if (note && o->rec.io && o->rec.io->verbosity >= 0)
		tf_run_print(o->rec.io, "%s\n", note);
	if (mem && o->rec.io && o->rec.io->memory_table)
		rc = o->rec.io->memory_table(o->rec.io->ctx, c, mem, o->set.memory_gated,
					     o->set.report_dir);
	else if (o->rec.io && o->rec.io->table)
		rc = o->rec.io->table(o->rec.io->ctx, c, o->set.report_dir);
	if (rc) {
		tf_run_fail(o->rec.io, rc);
		goto done;
	}
	tf_run_publish_ci(o, c, &ro, base_commit);
	status = tf_comparison_regressed(c) ||
		 (o->set.memory_gated && tf_comparison_regressed(mem)) ? TF_EXIT_REGRESSION
								       : TF_EXIT_OK;
done:
	tf_store_links_free(links);
	tf_comparison_free(c);
	tf_comparison_free(mem);
	free(repo_url);
	return status;
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
		if (tf_report_write_no_baseline(o->set.report_dir, o->rec.suite_name,
						head->runs.v[0].profile, why) == 0) {
			if (o->rec.io && o->rec.io->verbosity >= 0)
				tf_run_print(o->rec.io, "no baseline yet; this run is in %s/head.pb.gz\n",
					     o->set.report_dir);
		} else
			tf_run_warn(o->rec.io, "%s", tf_error_last());
		tf_run_publish_ci(o, NULL, NULL, NULL);
	}

	if (st && !exit_status && !interrupted && !cached) { /* as for saving */
		TF_VEC(const tf_profile *) ps = { 0 };
		tf_store_run sr = { .ctx = ctx, .suite = o->rec.suite_name, .kind = kind };
		for (size_t i = 0; i < head->runs.n; i++)
			if (!head->runs.v[i].info.interrupted)
				tf_vec_push(&ps, head->runs.v[i].profile);
		tf_store_mirror(st, &sr, ps.v, ps.n);
		tf_vec_free(&ps);
	}
	/* keep this run as the baseline of HEAD where it belongs */
	if (st && !exit_status && !interrupted && !cached && tf_run_will_save(o)) {
		tf_run_save_baseline(o, st, head, kind);
		tf_run_history_note(o, st, kind);
	} else if (st && cached && tf_run_will_save(o))
		tf_run_warn(o->rec.io, "not saving a baseline: %s", cached);
	else if (st && o->save && exit_status)
		tf_run_warn(o->rec.io, "not saving a baseline of a failing suite (exit status %d)",
			    exit_status);
	return tf_run_status(o, exit_status, status == TF_EXIT_REGRESSION);
}

/* Against the stored baseline: record, find it, confirm, report, save. */
int tf_run_stored(tf_run_opts *o)
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
	kind = tf_run_kind(&head.runs.v[0]);
	if ((rc = tf_run_store_open(&st, o->flags.store, o->rec.cfg, o->remote, o->rec.io))) {
		/* outside a repository the context said it already */
		if (ctx->git || o->set.store)
			tf_run_warn(o->rec.io, "no baselines: %s", tf_error_last());
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
		tf_run_note(o->rec.io, "%s%s", first ? "" : "no baseline to compare with: ", why);
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
	tf_run_flow_clear(o);
	return status;
}
