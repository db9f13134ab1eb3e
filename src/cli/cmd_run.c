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
 * noisiest: a single run of the PR cannot tell a real slowdown from a
 * moment in which the runner was slow. When a test looks slower (its 95%
 * interval is above zero and reaches the threshold), the suite runs
 * --confirm more times (default 2) and the verdict is made on all of the
 * PR's runs, as a developer would re-run the job before believing it. The
 * first run alone never fails the build, so this screen costs no false
 * alarms; what it buys is the power of three runs, paid for only when
 * something looks wrong.
 *
 * In CI the report then goes out (publish_common.c): annotations, step
 * summary, outputs and the PR/MR comment. Publishing problems are
 * warnings: they never change the exit status.
 *
 * Exit status: the command's own failure first; else 3 when a test
 * regressed (unless the gate is off); else 0. No baseline is not an error.
 */
#include "cli.h"
#include "publish_common.h"
#include "pyroscope_common.h"
#include "record_common.h"
#include "testflame/compare.h"
#include "testflame/report.h"
#include "testflame/store.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static const char *const run_usage[] = {
	"testflame run [options] [-- CMD [ARGS...]]",
	"",
	"Runs the suite under the profiler, compares every test with the baseline",
	"of the merge-base (or with --against REV, built and run here), writes the",
	"report directory and exits 3 when a test got slower beyond noise.",
	NULL,
};

typedef struct {
	tf_record_cli rec;
	const char *against, *store_spec, *report_dir, *remote;
	long repeat;
	long confirm;               /* more runs when a test looks slower; -1 unset */
	double threshold;
	bool save, no_save, no_fail, fetch, no_fetch, push, no_push, all;
	bool no_publish, no_comment, no_annotations, no_step_summary;
	bool or_against_merge_base;
	char *against_owned;
	const char *color;
	long history;               /* earlier baselines to learn noise from */
	tf_test_noise *noise;       /* what they taught */
	size_t nnoise;
	tf_store *store;            /* run_stored: its store and runner kind (Pyroscope's links) */
	const char *kind;
} run_opts;

typedef struct {
	TF_VEC(tf_record_result) runs;
	TF_VEC(char *) names;
} side_runs;

static void side_free(side_runs *s)
{
	for (size_t i = 0; i < s->runs.n; i++)
		tf_record_result_free(&s->runs.v[i]);
	for (size_t i = 0; i < s->names.n; i++)
		free(s->names.v[i]);
	tf_vec_free(&s->runs);
	tf_vec_free(&s->names);
}

/* Record one run of the command (in `cwd`, NULL for here). Returns false
 * when nothing was recorded; *status is the command's exit status. */
static bool record_into(side_runs *side, run_opts *o, const char *cwd, const char *label,
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

/* Record `count` more runs of this tree, stopping early when one is
 * interrupted; the first failing exit status goes to *exit_status. False
 * when a run could not be recorded (*status says why). */
static bool record_head(side_runs *head, run_opts *o, long count, int *exit_status, int *status)
{
	for (long i = 0; i < count; i++) {
		int s;
		if (!record_into(head, o, NULL, "head", &s)) {
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

static bool want_colour(const char *mode)
{
	if (mode && strcmp(mode, "always") == 0)
		return true;
	if (mode && strcmp(mode, "never") == 0)
		return false;
	return tf_cli_isatty(1) && !getenv("NO_COLOR");
}

static unsigned terminal_width(void)
{
	struct winsize ws;
	if (tf_cli_isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 72)
		return ws.ws_col;
	return 100;
}

/* The repository's web page, for source links: CI's server and the
 * repository path; NULL lets the report guess from the provider. */
static char *repo_web_url(const tf_context *ctx)
{
	if (ctx->ci && ctx->ci->server_url && ctx->repository)
		return tf_xasprintf("%s/%s", ctx->ci->server_url, ctx->repository);
	return NULL;
}

struct walk_target {
	const char *commit;
	long found;
};

static int walk_to(const char *commit, unsigned distance, void *payload)
{
	struct walk_target *w = payload;
	if (strcmp(commit, w->commit) != 0)
		return 0;
	w->found = distance;
	return 1;
}

/* First-parent steps from HEAD back to `commit`; -1 when it is not on that
 * line (a merge of the target into the branch) or unknown. */
static long head_distance(const tf_context *ctx, const char *commit)
{
	struct walk_target w = { commit, -1 };
	tf_repo *repo = NULL;

	if (!commit || !ctx->commit || tf_repo_open(&repo, NULL) != 0)
		return -1;
	tf_repo_walk_first_parent(repo, ctx->commit, 10000, walk_to, &w, NULL);
	tf_repo_free(repo);
	return w.found;
}

/*
 * Publishing, in CI: one call after the report is written. `c` is NULL
 * when there was nothing to compare (report.md then says why).
 */
static void publish_report(run_opts *o, const tf_comparison *c, const tf_report_opts *ro,
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

/*
 * Compare, write the report directory, print the summary and publish.
 * Returns 0, or an error (printed). *regressed tells the gate.
 * `base_commit` and `distance` (< 0 unknown) head the report.
 */
static void gate_opts(tf_compare_opts *co, const run_opts *o)
{
	tf_compare_opts_init(co);
	co->threshold = o->threshold;
	if (o->rec.cfg->gate.alpha > 0)
		co->alpha = o->rec.cfg->gate.alpha;
	if (o->rec.cfg->gate.min_samples > 0)
		co->min_samples = (double)o->rec.cfg->gate.min_samples;
	co->history = o->noise;
	co->nhistory = o->nnoise;
	co->separate_jobs = o->against == NULL;
}

/* The test that looks slowest among those that look slower: regressed or
 * inconclusive, its 95% interval above zero and reaching the threshold.
 * Returns a line naming it (to free), or NULL when none does. */
static char *looks_slower(const run_opts *o, const side_runs *base, const side_runs *head)
{
	TF_VEC(const tf_profile *) bp = { 0 }, hp = { 0 };
	tf_compare_opts co;
	tf_comparison *c = NULL;
	char *why = NULL;

	for (size_t i = 0; i < base->runs.n; i++)
		tf_vec_push(&bp, base->runs.v[i].profile);
	for (size_t i = 0; i < head->runs.n; i++)
		tf_vec_push(&hp, head->runs.v[i].profile);
	tf_compare_side bs = { bp.v, NULL, bp.n };
	tf_compare_side hs = { hp.v, NULL, hp.n };
	gate_opts(&co, o);
	if (tf_compare(&c, &bs, &hs, &co) == 0) {
		const tf_test_delta *worst = NULL;
		for (size_t i = 0; i < c->ntests; i++) {
			const tf_test_delta *t = &c->tests[i];
			if (t->verdict != TF_VERDICT_REGRESSED && t->verdict != TF_VERDICT_INCONCLUSIVE)
				continue;
			if (!(t->ci_low_pct > 0) || !(t->ci_high_pct >= o->threshold))
				continue;
			if (!worst || t->delta_pct > worst->delta_pct)
				worst = t;
		}
		if (worst)
			why = tf_xasprintf("%s looks %.1f%% slower (95%% CI %+.1f%% to %+.1f%%)",
					   worst->name, worst->delta_pct, worst->ci_low_pct,
					   worst->ci_high_pct);
	}
	tf_comparison_free(c);
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	return why;
}

static int compare_and_report(run_opts *o, side_runs *base, side_runs *head,
			      const char *baseline_note, const char *base_commit, long distance,
			      bool *regressed)
{
	const tf_context *ctx = o->rec.ctx;
	TF_VEC(const tf_profile *) bp = { 0 }, hp = { 0 };
	tf_compare_opts co;
	tf_comparison *c = NULL;
	tf_buf table = TF_BUF_INIT;
	tf_table_opts to;
	tf_report_opts ro;
	char *repo_url = repo_web_url(ctx), *html = NULL;
	tf_cli_pyroscope_link pl = { 0 };
	int rc;

	for (size_t i = 0; i < base->runs.n; i++)
		tf_vec_push(&bp, base->runs.v[i].profile);
	for (size_t i = 0; i < head->runs.n; i++) {
		/* where the sources were, so a later `publish` can make paths relative */
		if (ctx->git && ctx->git->workdir)
			tf_profile_set_meta(head->runs.v[i].profile, "workdir", ctx->git->workdir);
		tf_vec_push(&hp, head->runs.v[i].profile);
	}
	tf_compare_side bs = { bp.v, (const char *const *)base->names.v, bp.n };
	tf_compare_side hs = { hp.v, (const char *const *)head->names.v, hp.n };
	gate_opts(&co, o);
	rc = tf_compare(&c, &bs, &hs, &co);
	if (rc) {
		tf_fail(rc);
		goto done;
	}
	*regressed = tf_comparison_regressed(c);

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
	rc = tf_report_write(c, &ro);
	if (rc) {
		tf_fail(rc);
		goto done;
	}

	tf_table_opts_init(&to);
	to.color = want_colour(o->color);
	to.width = terminal_width();
	to.all = o->all;
	if (baseline_note)
		printf("%s\n", baseline_note);
	html = tf_xasprintf("%s/index.html", o->report_dir);
	rc = tf_report_terminal(&table, c, &to, html);
	if (rc) {
		tf_fail(rc);
		goto done;
	}
	fwrite(table.ptr, 1, table.len, stdout);
	fflush(stdout);

	publish_report(o, c, &ro, base_commit);
done:
	tf_cli_pyroscope_link_free(&pl);
	tf_buf_free(&table);
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	tf_comparison_free(c);
	free(repo_url);
	free(html);
	return rc;
}

/* The directory of this checkout relative to the repository's work tree. */
static char *relative_cwd(const char *workdir)
{
	char cwd[4096];
	size_t n = strlen(workdir);
	if (!getcwd(cwd, sizeof(cwd)))
		return tf_xstrdup("");
	while (n && workdir[n - 1] == '/')
		n--;
	if (strncmp(cwd, workdir, n) == 0 && (cwd[n] == '/' || cwd[n] == '\0'))
		return tf_xstrdup(cwd[n] ? cwd + n + 1 : "");
	return tf_xstrdup("");
}

static int run_shell(const char *cmd, const char *cwd)
{
	char *line = tf_xasprintf("cd '%s' && %s", cwd, cmd);
	int st = system(line);
	free(line);
	return st;
}

static void remove_tree(const char *dir)
{
	char *cmd = tf_xasprintf("rm -rf '%s'", dir);
	if (system(cmd) != 0)
		tf_warnf("could not remove '%s'", dir);
	free(cmd);
}

/* --against REV: build REV beside us, run both sides interleaved. */
static int run_against(run_opts *o, int *status)
{
	tf_repo *repo = NULL;
	side_runs base = { 0 }, head = { 0 };
	char *commit = NULL, *tmp = NULL, *rel = NULL, *base_cwd = NULL, *note = NULL;
	const char *tmpdir = getenv("TMPDIR");
	bool regressed = false;
	int rc, exit_status = 0;

	rc = tf_repo_open(&repo, NULL);
	if (!rc)
		rc = tf_repo_resolve(&commit, repo, o->against);
	if (rc) {
		*status = tf_fail(rc);
		goto done;
	}
	if (!tf_repo_workdir(repo)) {
		tf_errorf("--against needs a work tree (this repository is bare)");
		*status = TF_EXIT_ERROR;
		goto done;
	}
	tmp = tf_xasprintf("%s/testflame-against.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(tmp)) {
		tf_errorf("cannot create a temporary directory: %s", strerror(errno));
		free(tmp);
		tmp = NULL;
		*status = TF_EXIT_ERROR;
		goto done;
	}
	tf_notef("checking out %.12s (%s) into '%s'", commit, o->against, tmp);
	rc = tf_repo_export(repo, commit, tmp);
	if (rc) {
		*status = tf_fail(rc);
		goto done;
	}
	rel = relative_cwd(tf_repo_workdir(repo));
	base_cwd = *rel ? tf_xasprintf("%s/%s", tmp, rel) : tf_xstrdup(tmp);
	if (o->rec.cfg->build) {
		tf_notef("building %.12s: %s", commit, o->rec.cfg->build);
		int st = run_shell(o->rec.cfg->build, tmp);
		if (st != 0) {
			tf_errorf("the build of '%s' failed (exit status %d): %s", o->against,
				  WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st),
				  o->rec.cfg->build);
			*status = TF_EXIT_ERROR;
			goto done;
		}
		char cwd[4096];
		if (getcwd(cwd, sizeof(cwd)) && tf_repo_workdir(repo)) {
			tf_notef("building this tree: %s", o->rec.cfg->build);
			st = run_shell(o->rec.cfg->build, tf_repo_workdir(repo));
			if (st != 0) {
				tf_errorf("the build of this tree failed: %s", o->rec.cfg->build);
				*status = TF_EXIT_ERROR;
				goto done;
			}
		}
	}

	/* A B A B: both sides meet the same machine, warm caches and noise */
	for (long i = 0; i < o->repeat; i++) {
		int st;
		tf_notef("round %ld of %ld: %.12s, then this tree", i + 1, o->repeat, commit);
		if (!record_into(&base, o, base_cwd, "base", &st)) {
			*status = st;
			goto done;
		}
		/* the base ran from REV's tree: say so in its metadata */
		tf_profile *bp = base.runs.v[base.runs.n - 1].profile;
		tf_profile_set_meta(bp, "commit", commit);
		tf_profile_set_meta(bp, "branch", o->against);
		tf_profile_set_meta(bp, "dirty", "false");
		if (st)
			tf_warnf("the suite failed on %.12s (exit status %d)", commit, st);
		if (!record_into(&head, o, NULL, "head", &st)) {
			*status = st;
			goto done;
		}
		if (st && !exit_status)
			exit_status = st;
		if (head.runs.v[head.runs.n - 1].info.interrupted) {
			tf_errorf("interrupted");
			*status = 130;
			goto done;
		}
	}
	note = tf_xasprintf("against %.12s (%s), %ld interleaved runs per side", commit,
			    o->against, o->repeat);
	if (compare_and_report(o, &base, &head, note, commit, head_distance(o->rec.ctx, commit),
			       &regressed)) {
		*status = TF_EXIT_ERROR;
		goto done;
	}
	*status = exit_status ? exit_status
		  : (regressed && !o->no_fail) ? TF_EXIT_REGRESSION : TF_EXIT_OK;
done:
	if (tmp) {
		remove_tree(tmp);
		free(tmp);
	}
	side_free(&base);
	side_free(&head);
	free(commit);
	free(rel);
	free(base_cwd);
	free(note);
	tf_repo_free(repo);
	return 0;
}

/*
 * A run with nothing to compare with still leaves a report directory: the
 * run itself, and a report.md that says why, so a pull request hears from
 * testflame on its first build too.
 */
static int write_without_baseline(run_opts *o, const tf_profile *head, const char *why)
{
	tf_buf md = TF_BUF_INIT;
	char *path = NULL, *text;
	int rc = tf_mkdir_p(o->report_dir, 0755);

	if (!rc) {
		path = tf_xasprintf("%s/head.pb.gz", o->report_dir);
		rc = tf_pprof_write(head, path);
		free(path);
	}
	if (rc) {
		tf_warnf("could not write the run into '%s': %s", o->report_dir, tf_error_last());
		return rc;
	}
	text = tf_xasprintf("No baseline to compare with yet: %s. A build of the default branch "
			    "saves one (testflame run there keeps the run of each commit); this "
			    "run's profile is in the report directory as head.pb.gz.",
			    why ? why : "none was found");
	tf_report_markdown_message(&md, o->rec.suite_name, text);
	path = tf_xasprintf("%s/report.md", o->report_dir);
	rc = tf_file_write_atomic(path, md.ptr, md.len);
	if (rc)
		tf_warnf("could not write '%s': %s", path, tf_error_last());
	free(path);
	free(text);
	tf_buf_free(&md);
	return rc;
}

/* Where the baseline walk starts: the merge-base, or, on the target branch
 * itself, the commit before HEAD. NULL when there is nothing to walk. */
static char *walk_start(const tf_context *ctx)
{
	if (ctx->merge_base && ctx->commit && strcmp(ctx->merge_base, ctx->commit) != 0)
		return tf_xstrdup(ctx->merge_base);
	if (ctx->commit)
		return tf_xasprintf("%s^", ctx->commit);
	return NULL;
}

static void save_baseline(run_opts *o, tf_store *st, const side_runs *head, const char *kind)
{
	const tf_context *ctx = o->rec.ctx;
	tf_buf bytes = TF_BUF_INIT;
	size_t n = 0;
	int rc;

	/* every completed run of --repeat, as one run file */
	while (n < head->runs.n && !head->runs.v[n].info.interrupted)
		n++;
	if (n > 1) {
		TF_VEC(const tf_profile *) ps = { 0 };
		tf_profile *joined = NULL;
		for (size_t i = 0; i < n; i++)
			tf_vec_push(&ps, head->runs.v[i].profile);
		rc = tf_profile_join_runs(&joined, ps.v, n);
		if (!rc)
			rc = tf_pprof_encode(&bytes, joined, 6);
		tf_profile_free(joined);
		tf_vec_free(&ps);
	} else {
		rc = tf_record_cli_encode(&bytes, &head->runs.v[0]);
	}

	if (!rc)
		rc = tf_store_save(st, ctx->commit, o->rec.suite_name, kind, bytes.ptr, bytes.len);
	tf_buf_free(&bytes);
	if (rc) {
		tf_warnf("could not save the baseline: %s", tf_error_last());
		return;
	}
	if (n > 1)
		tf_notef("saved the baseline of %.12s (%s, %zu runs) in the %s", ctx->commit, kind,
			 n, tf_store_describe(st));
	else
		tf_notef("saved the baseline of %.12s (%s) in the %s", ctx->commit, kind,
			 tf_store_describe(st));
	bool in_ci = ctx->ci && ctx->ci->provider != TF_CI_LOCAL;
	if (!tf_store_is_git(st) || o->no_push || !(o->push || in_ci))
		return;
	tf_store_sync_list sl = { 0 };
	const char *revs[1] = { ctx->commit };
	rc = tf_store_push(&sl, st, revs, 1);
	if (rc)
		tf_warnf("could not push the baseline: %s", tf_error_last());
	else
		tf_notef("pushed the baseline of %.12s to '%s'", ctx->commit,
			 tf_store_remote_url(st) ? tf_store_remote_url(st) : "the remote");
	tf_store_sync_list_free(&sl);
}

/*
 * Learn each test's run-to-run noise from the baselines before `from`
 * (itself included) on the first-parent history: up to o->history run
 * files of the same suite and kind.
 */
static void learn_noise(run_opts *o, tf_store *st, const tf_profile *first, const char *from,
			const char *kind, const tf_store_resolve_opts *ro)
{
	TF_VEC(tf_profile *) owned = { 0 };
	TF_VEC(const tf_profile *) runs = { 0 };
	char *next = tf_xasprintf("%s^", from);

	tf_vec_push(&runs, first);
	while ((long)runs.n < o->history) {
		tf_store_match m;
		tf_buf bytes = TF_BUF_INIT;
		tf_profile *p = NULL;
		tf_store_resolve_opts r = *ro;
		r.max_depth = 50;
		if (tf_store_resolve(&m, st, next, o->rec.suite_name, kind, &r) != 0 ||
		    tf_store_get(&bytes, st, m.commit, o->rec.suite_name, kind) != 0 ||
		    tf_pprof_decode(&p, bytes.ptr, bytes.len) != 0) {
			tf_buf_free(&bytes);
			break;
		}
		tf_buf_free(&bytes);
		tf_vec_push(&owned, p);
		tf_vec_push(&runs, p);
		free(next);
		next = tf_xasprintf("%s^", m.commit);
	}
	tf_error_clear();
	size_t draws = 0;
	for (size_t i = 0; i < runs.n; i++)
		draws += tf_profile_count_runs(runs.v[i]);
	if (draws >= 3 &&
	    tf_compare_history_noise(&o->noise, &o->nnoise, runs.v, runs.n, NULL) == 0)
		tf_verbosef("learned the run-to-run noise of %zu tests from %zu runs in %zu baselines",
			    o->nnoise, draws, runs.n);
	for (size_t i = 0; i < owned.n; i++)
		tf_profile_free(owned.v[i]);
	tf_vec_free(&owned);
	tf_vec_free(&runs);
	free(next);
}

/* Whether a run that succeeds will be kept as HEAD's baseline. */
static bool will_save(const run_opts *o)
{
	const tf_context *ctx = o->rec.ctx;
	return ctx->commit && !o->no_save && (o->save || (ctx->on_default_branch && !ctx->dirty));
}

static int run_stored(run_opts *o, int *status)
{
	const tf_context *ctx = o->rec.ctx;
	side_runs base = { 0 }, head = { 0 };
	tf_store *st = NULL;
	char *kind = NULL, *start = NULL, *note = NULL;
	tf_buf bytes = TF_BUF_INIT;
	const char *spec = o->store_spec ? o->store_spec
			   : o->rec.cfg->store ? o->rec.cfg->store : getenv("TESTFLAME_STORE");
	int exit_status = 0, rc;
	bool regressed = false, have_base = false;
	char base_commit[TF_STORE_ID_HEX + 1] = "";
	char *why = NULL; /* no baseline: the reason, for report.md */

	if (!record_head(&head, o, o->repeat, &exit_status, status))
		goto done;
	kind = tf_record_kind(&head.runs.v[0]);

	rc = tf_store_open(&st, spec, NULL);
	if (rc) {
		tf_warnf("no baselines: %s", tf_error_last());
		why = tf_xstrdup(tf_error_last());
	} else {
		if (o->remote)
			tf_store_set_remote(st, o->remote);
		start = walk_start(ctx);
		tf_cli_pyroscope_setup(st, o->rec.cfg);
		o->store = st;
		o->kind = kind;
	}
	if (st && start) {
		tf_store_resolve_opts ro = { 0, !o->no_fetch && tf_store_is_git(st) &&
					     (o->fetch || (ctx->ci && ctx->ci->provider != TF_CI_LOCAL)) };
		tf_store_match m;
		rc = tf_store_resolve(&m, st, start, o->rec.suite_name, kind, &ro);
		if (m.remote_error[0]) {
			tf_warnf("%s; looking at local baselines only", m.remote_error);
			ro.fetch = false;
		}
		if (rc == TF_ENOTFOUND) /* git holds none: Pyroscope may */
			rc = tf_cli_pyroscope_resolve(&m, st, start, &o->rec, kind);
		if (rc == 0) {
			rc = tf_store_get(&bytes, st, m.commit, o->rec.suite_name, kind);
			tf_profile *stored = NULL;
			if (!rc)
				rc = tf_pprof_decode(&stored, bytes.ptr, bytes.len);
			if (rc) {
				tf_warnf("the baseline of %.12s cannot be read: %s", m.commit,
					 tf_error_last());
				why = tf_xasprintf("the baseline of %.12s cannot be read", m.commit);
			} else {
				/* a baseline saved from --repeat holds its runs apart */
				tf_profile **parts;
				size_t nparts;
				tf_profile_split_runs(&parts, &nparts, stored);
				for (size_t i = 0; i < nparts; i++) {
					tf_record_result br;
					memset(&br, 0, sizeof(br));
					br.profile = parts[i];
					tf_vec_push(&base.runs, br);
					tf_vec_push(&base.names,
						    nparts > 1 ? tf_xasprintf("baseline %.12s run %zu", m.commit, i + 1)
							       : tf_xasprintf("baseline %.12s", m.commit));
				}
				free(parts);
				memcpy(base_commit, m.commit, sizeof(base_commit));
				have_base = true;
				if (o->history > 1)
					learn_noise(o, st, stored, m.commit, kind, &ro);
				tf_profile_free(stored);
				tf_baseline b;
				memset(&b, 0, sizeof(b));
				bool shown = tf_store_show(&b, st, m.commit) == 0 && b.subject;
				const char *where = ctx->merge_base && strcmp(start, ctx->merge_base) == 0
						    ? "the merge-base" : "HEAD";
				unsigned dist = m.distance + (strcmp(where, "HEAD") == 0 ? 1 : 0);
				char nr[32] = "";
				size_t nbr = base.runs.n;
				if (nbr > 1)
					snprintf(nr, sizeof(nr), ", %zu runs", nbr);
				note = tf_xasprintf("baseline: %.12s%s%s%s, %u commit%s before %s%s%s",
						    m.commit, shown ? " (" : "", shown ? b.subject : "",
						    shown ? ")" : "", dist, dist == 1 ? "" : "s", where,
						    nr, m.source[0] ? m.source : m.fetched ? ", fetched" : "");
				tf_baseline_clear(&b);
			}
		} else if (rc == TF_ENOTFOUND) {
			tf_notef("no baseline to compare with: %s", tf_error_last());
			why = tf_xstrdup(tf_error_last());
		} else {
			tf_warnf("no baseline: %s", tf_error_last());
			why = tf_xstrdup(tf_error_last());
		}
	} else if (st && !start) {
		tf_notef("no baseline to compare with: no commit history here");
		why = tf_xstrdup("no commit history here");
	}

	if (have_base && o->confirm > 0 && !head.runs.v[head.runs.n - 1].info.interrupted) {
		char *why_confirm = looks_slower(o, &base, &head);
		if (why_confirm) {
			size_t had = head.runs.n;
			tf_notef("%s; running the suite %ld more time%s to confirm", why_confirm,
				 o->confirm, o->confirm == 1 ? "" : "s");
			free(why_confirm);
			if (!record_head(&head, o, o->confirm, &exit_status, status))
				goto done;
			char *more = tf_xasprintf("%s\nthis tree: %zu runs (%zu to confirm)", note,
						  head.runs.n, head.runs.n - had);
			free(note);
			note = more;
		}
	}
	if (have_base && compare_and_report(o, &base, &head, note, base_commit,
					    head_distance(ctx, base_commit), &regressed)) {
		*status = TF_EXIT_ERROR;
		goto done;
	}
	if (!have_base) {
		/* still leave the run where the report would be */
		if (write_without_baseline(o, head.runs.v[0].profile, why) == 0)
			printf("no baseline yet; this run is in %s/head.pb.gz\n", o->report_dir);
		publish_report(o, NULL, NULL, NULL);
	}

	if (!exit_status && !head.runs.v[0].info.interrupted) /* as for saving */
		tf_cli_pyroscope_push(st, &o->rec, kind, head.runs.v, head.runs.n);
	/* keep this run as the baseline of HEAD where it belongs */
	if (st && !exit_status && !head.runs.v[0].info.interrupted && will_save(o)) {
		save_baseline(o, st, &head, kind);
	} else if (st && o->save && exit_status) {
		tf_warnf("not saving a baseline of a failing suite (exit status %d)", exit_status);
	}
	*status = exit_status ? exit_status
		  : (regressed && !o->no_fail) ? TF_EXIT_REGRESSION : TF_EXIT_OK;
done:
	free(why);
	side_free(&base);
	side_free(&head);
	tf_store_free(st);
	tf_buf_free(&bytes);
	free(kind);
	free(start);
	free(note);
	return 0;
}

struct remote_walk {
	const tf_remote_baseline_list *have;
	char found[TF_STORE_ID_HEX + 1];
};

static int remote_has(const char *commit, unsigned distance, void *payload)
{
	struct remote_walk *w = payload;
	(void)distance;
	for (size_t i = 0; i < w->have->items.n; i++) {
		if (strcmp(w->have->items.v[i].commit, commit) == 0) {
			snprintf(w->found, sizeof(w->found), "%s", commit);
			return 1;
		}
	}
	return 0;
}

/* Outside CI (--fetch): bring the remote's baseline nearest to `start` on
 * its first-parent history, so that a fresh clone knows what CI recorded. */
static void fetch_nearest(tf_store *st, const char *start)
{
	tf_remote_baseline_list have;
	struct remote_walk w = { &have, "" };
	tf_repo *repo = NULL;

	memset(&have, 0, sizeof(have));
	if (tf_store_remote_list(&have, st) != 0) {
		tf_warnf("cannot list the remote's baselines: %s", tf_error_last());
		return;
	}
	if (have.items.n && tf_repo_open(&repo, NULL) == 0)
		tf_repo_walk_first_parent(repo, start, TF_STORE_DEFAULT_DEPTH, remote_has, &w, NULL);
	tf_repo_free(repo);
	if (w.found[0]) {
		tf_store_sync_list sl = { 0 };
		const char *revs[1] = { w.found };
		if (tf_store_fetch(&sl, st, revs, 1) == 0)
			tf_notef("fetched the baseline of %.12s from '%s'", w.found,
				 tf_store_remote_url(st) ? tf_store_remote_url(st) : "the remote");
		else
			tf_warnf("cannot fetch the baseline of %.12s: %s", w.found, tf_error_last());
		tf_store_sync_list_free(&sl);
	}
	tf_vec_free(&have.items);
}

/*
 * --or-against-merge-base: the walk start (the merge-base, or HEAD^ on the
 * target branch) when no baseline is stored for this suite near it, so
 * the base gets built and run here instead; NULL when one is stored (or
 * there is no history to build from).
 */
static char *against_if_none(run_opts *o)
{
	const char *spec = o->store_spec ? o->store_spec
			   : o->rec.cfg->store ? o->rec.cfg->store : getenv("TESTFLAME_STORE");
	char *start = walk_start(o->rec.ctx);
	tf_store *st = NULL;
	tf_baseline_list l;
	bool stored = false;

	if (!start)
		return NULL;
	/* the runner kind is known only after recording: any kind of this
	 * suite that the walk finds will do, run_stored() resolves the exact one */
	memset(&l, 0, sizeof(l));
	if (tf_store_open(&st, spec, NULL) == 0 && o->remote)
		tf_store_set_remote(st, o->remote);
	if (st && o->fetch && !o->no_fetch && tf_store_is_git(st))
		fetch_nearest(st, start);
	if (st && tf_store_list(&l, st) == 0) {
		TF_VEC(const char *) kinds = { 0 };
		tf_store_resolve_opts ro = { 0, false };
		for (size_t i = 0; i < l.items.n; i++)
			for (size_t k = 0; k < l.items.v[i].files.n; k++) {
				const tf_baseline_file *f = &l.items.v[i].files.v[k];
				bool seen = strcmp(f->suite, o->rec.suite_name) != 0;
				for (size_t j = 0; j < kinds.n && !seen; j++)
					seen = strcmp(kinds.v[j], f->kind) == 0;
				if (!seen)
					tf_vec_push(&kinds, f->kind);
			}
		for (size_t j = 0; j < kinds.n && !stored; j++) {
			tf_store_match m;
			stored = tf_store_resolve(&m, st, start, o->rec.suite_name, kinds.v[j], &ro) == 0;
		}
		tf_vec_free(&kinds);
	}
	tf_baseline_list_free(&l);
	tf_store_free(st);
	if (stored) {
		free(start);
		return NULL;
	}
	tf_notef("no stored baseline of '%s' before %.12s: building it beside this tree to compare",
		 o->rec.suite_name, start);
	return start;
}

static const char *const color_choices[] = { "auto", "always", "never", NULL };

int cmd_run(int argc, char **argv)
{
	run_opts o;
	tf_option opts[TF_RECORD_MAX_OPTS + 28];
	size_t n = 0;
	int dashdash, nargs, status = 0;

	memset(&o, 0, sizeof(o));
	tf_record_cli_init(&o.rec);
	o.rec.needs_git = true;
	o.threshold = -1;
	o.repeat = 0;
	o.confirm = -1;
	o.report_dir = NULL;
	n += tf_record_cli_options(&o.rec, opts + n);
	opts[n++] = (tf_option){ TF_OPT_GROUP, 0, NULL, NULL, NULL, "baseline and gate:", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "against", &o.against, "REV",
				 "build REV in a temporary checkout and run both here, interleaved",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "or-against-merge-base", &o.or_against_merge_base, NULL,
				 "when no baseline is stored, build the merge-base beside and run both (the pre-push hook)",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_INT, 0, "repeat", &o.repeat, "N",
				 "runs per side (default 1; 3 with --against)", NULL, 1, 1000, NULL };
	opts[n++] = (tf_option){ TF_OPT_INT, 0, "confirm", &o.confirm, "N",
				 "when a test looks slower than its stored baseline, run N more times before judging (default 2; 0: never)",
				 NULL, 0, 100, NULL };
	opts[n++] = (tf_option){ TF_OPT_DOUBLE, 0, "threshold", &o.threshold, "PCT",
				 "smallest slowdown that fails the gate (default 5)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "target", &o.rec.target_branch, "BRANCH",
				 "the branch to compare with (default: the PR's base, else the default branch)",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "store", &o.store_spec, "SPEC",
				 "where baselines live: git (default), git:REMOTE, dir:PATH, pyroscope:URL",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "remote", &o.remote, "NAME",
				 "the git remote baselines are fetched from and pushed to (default origin)",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "save", &o.save, NULL,
				 "save this run as HEAD's baseline (default: on the default branch, clean tree)",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-save", &o.no_save, NULL,
				 "never save a baseline", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "push", &o.push, NULL,
				 "push a saved baseline to the remote (default in CI)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-push", &o.no_push, NULL,
				 "never push baselines", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "fetch", &o.fetch, NULL,
				 "fetch baselines from the remote outside CI too (default in CI)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-fetch", &o.no_fetch, NULL,
				 "do not fetch baselines from the remote", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_INT, 0, "history", &o.history, "N",
				 "learn each test's noise from up to N stored baselines (default 10; 1 = off)",
				 NULL, 1, 1000, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-fail", &o.no_fail, NULL,
				 "report regressions but exit 0", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_GROUP, 0, NULL, NULL, NULL, "report:", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "report", &o.report_dir, "DIR",
				 "the report directory (default testflame-report)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "all", &o.all, NULL,
				 "list unchanged tests too", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "color", &o.color, "WHEN",
				 "colour the table", color_choices, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_GROUP, 0, NULL, NULL, NULL, "publishing (in CI):", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-publish", &o.no_publish, NULL,
				 "no comment, annotations, step summary or outputs", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-comment", &o.no_comment, NULL,
				 "no PR/MR comment (publish.comment)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-annotations", &o.no_annotations, NULL,
				 "no annotations or review comments (publish.annotations)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-step-summary", &o.no_step_summary, NULL,
				 "no $GITHUB_STEP_SUMMARY (publish.step_summary)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option)TF_OPTS_END;

	nargs = tf_parse_options(argc, argv, opts, run_usage, TF_PARSE_STOP_AT_NONOPT, &dashdash);
	if (nargs == -2)
		return TF_EXIT_OK;
	if (nargs < 0)
		return TF_EXIT_USAGE;
	if (dashdash < 0 && nargs > 1)
		return tf_usage_error(run_usage,
				      "missing '--' before the command (try: testflame run -- %s ...)",
				      argv[1]);
	if (dashdash > 1)
		return tf_usage_error(run_usage, "unexpected argument '%s' before '--'", argv[1]);
	if (dashdash == 1 && nargs < 2)
		return tf_usage_error(run_usage, "no command after '--'");
	if (o.save && o.no_save)
		return tf_usage_error(run_usage, "--save and --no-save contradict each other");
	if (o.threshold != -1 && (o.threshold < 0 || o.threshold > 1000))
		return tf_usage_error(run_usage, "--threshold must be a percentage between 0 and 1000");

	status = tf_record_cli_prepare(&o.rec, run_usage, nargs > 1 ? argv + 1 : NULL);
	if (status)
		goto out;
	if (!o.against)
		o.against = o.rec.cfg->against;
	if (!o.against && o.or_against_merge_base)
		o.against = o.against_owned = against_if_none(&o);
	if (!o.repeat && !o.against && o.rec.cfg->baseline_repeat && will_save(&o))
		o.repeat = o.rec.cfg->baseline_repeat;
	if (!o.repeat)
		o.repeat = o.rec.cfg->repeat ? o.rec.cfg->repeat : o.against ? 3 : 1;
	if (o.threshold < 0)
		o.threshold = o.rec.cfg->gate.threshold >= 0 ? o.rec.cfg->gate.threshold : 5.0;
	if (!o.no_fail && !tf_config_bool(o.rec.cfg->gate.fail_on_regression, true))
		o.no_fail = true;
	if (!o.report_dir)
		o.report_dir = o.rec.cfg->report.dir ? o.rec.cfg->report.dir : "testflame-report";
	if (!o.history)
		o.history = 10;
	if (o.confirm < 0)
		o.confirm = o.rec.cfg->gate.confirm >= 0 ? o.rec.cfg->gate.confirm : 2;

	if (o.against)
		run_against(&o, &status);
	else
		run_stored(&o, &status);
out:
	tf_test_noise_free(o.noise, o.nnoise);
	tf_record_cli_free(&o.rec);
	free(o.against_owned);
	return status;
}
