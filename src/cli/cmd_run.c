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
 * Exit status: the command's own failure first; else 3 when a test
 * regressed (unless the gate is off); else 0. No baseline is not an error.
 */
#include "cli.h"
#include "record_common.h"
#include "testflame/compare.h"
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
	double threshold;
	bool save, no_save, no_fail, no_fetch, push, no_push, all;
	const char *color;
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

static int write_profile(const tf_profile *p, const char *dir, const char *name)
{
	char *path = tf_xasprintf("%s/%s", dir, name);
	int rc = tf_pprof_write(p, path);
	free(path);
	return rc;
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

/*
 * Compare, write the report directory and print the table. Returns 0, or
 * an error (printed). *regressed tells the gate.
 */
static int compare_and_report(run_opts *o, side_runs *base, side_runs *head,
			      const char *baseline_note, bool *regressed)
{
	TF_VEC(const tf_profile *) bp = { 0 }, hp = { 0 };
	tf_compare_opts co;
	tf_comparison *c = NULL;
	tf_buf json = TF_BUF_INIT, table = TF_BUF_INIT;
	tf_table_opts to;
	int rc;

	for (size_t i = 0; i < base->runs.n; i++)
		tf_vec_push(&bp, base->runs.v[i].profile);
	for (size_t i = 0; i < head->runs.n; i++)
		tf_vec_push(&hp, head->runs.v[i].profile);
	tf_compare_side bs = { bp.v, (const char *const *)base->names.v, bp.n };
	tf_compare_side hs = { hp.v, (const char *const *)head->names.v, hp.n };
	tf_compare_opts_init(&co);
	co.threshold = o->threshold;
	if (o->rec.cfg->gate.alpha > 0)
		co.alpha = o->rec.cfg->gate.alpha;
	rc = tf_compare(&c, &bs, &hs, &co);
	if (rc) {
		tf_fail(rc);
		goto done;
	}
	*regressed = tf_comparison_regressed(c);

	rc = tf_mkdir_p(o->report_dir, 0755);
	if (!rc)
		rc = tf_comparison_to_json(&json, c);
	if (!rc) {
		char *path = tf_xasprintf("%s/report.json", o->report_dir);
		rc = tf_file_write_atomic(path, json.ptr, json.len);
		free(path);
	}
	if (!rc)
		rc = write_profile(hp.v[0], o->report_dir, "head.pb.gz");
	if (!rc)
		rc = write_profile(bp.v[0], o->report_dir, "base.pb.gz");
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
	tf_comparison_render_table(&table, c, &to);
	fwrite(table.ptr, 1, table.len, stdout);
	printf("report: %s/report.json\n", o->report_dir);
	fflush(stdout);
done:
	tf_buf_free(&json);
	tf_buf_free(&table);
	tf_vec_free(&bp);
	tf_vec_free(&hp);
	tf_comparison_free(c);
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
	if (compare_and_report(o, &base, &head, note, &regressed)) {
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

static void save_baseline(run_opts *o, tf_store *st, const tf_record_result *res,
			  const char *kind)
{
	const tf_context *ctx = o->rec.ctx;
	tf_buf bytes = TF_BUF_INIT;
	int rc = tf_record_cli_encode(&bytes, res);

	if (!rc)
		rc = tf_store_save(st, ctx->commit, o->rec.suite_name, kind, bytes.ptr, bytes.len);
	tf_buf_free(&bytes);
	if (rc) {
		tf_warnf("could not save the baseline: %s", tf_error_last());
		return;
	}
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

	for (long i = 0; i < o->repeat; i++) {
		int s;
		if (!record_into(&head, o, NULL, "head", &s)) {
			*status = s;
			goto done;
		}
		if (s && !exit_status)
			exit_status = s;
		if (head.runs.v[head.runs.n - 1].info.interrupted)
			break;
	}
	kind = tf_record_kind(&head.runs.v[0]);

	rc = tf_store_open(&st, spec, NULL);
	if (rc) {
		tf_warnf("no baselines: %s", tf_error_last());
	} else {
		if (o->remote)
			tf_store_set_remote(st, o->remote);
		start = walk_start(ctx);
	}
	if (st && start) {
		tf_store_resolve_opts ro = { 0, !o->no_fetch && tf_store_is_git(st) &&
					     ctx->ci && ctx->ci->provider != TF_CI_LOCAL };
		tf_store_match m;
		rc = tf_store_resolve(&m, st, start, o->rec.suite_name, kind, &ro);
		if (rc == 0) {
			rc = tf_store_get(&bytes, st, m.commit, o->rec.suite_name, kind);
			tf_record_result br;
			memset(&br, 0, sizeof(br));
			if (!rc)
				rc = tf_pprof_decode(&br.profile, bytes.ptr, bytes.len);
			if (rc) {
				tf_warnf("the baseline of %.12s cannot be read: %s", m.commit,
					 tf_error_last());
			} else {
				tf_vec_push(&base.runs, br);
				tf_vec_push(&base.names, tf_xasprintf("baseline %.12s", m.commit));
				have_base = true;
				tf_baseline b;
				memset(&b, 0, sizeof(b));
				bool shown = tf_store_show(&b, st, m.commit) == 0 && b.subject;
				const char *where = ctx->merge_base && strcmp(start, ctx->merge_base) == 0
						    ? "the merge-base" : "HEAD";
				unsigned dist = m.distance + (strcmp(where, "HEAD") == 0 ? 1 : 0);
				note = tf_xasprintf("baseline: %.12s%s%s%s, %u commit%s before %s%s",
						    m.commit, shown ? " (" : "", shown ? b.subject : "",
						    shown ? ")" : "", dist, dist == 1 ? "" : "s", where,
						    m.fetched ? ", fetched" : "");
				tf_baseline_clear(&b);
			}
		} else if (rc == TF_ENOTFOUND) {
			tf_notef("no baseline to compare with: %s", tf_error_last());
		} else {
			tf_warnf("no baseline: %s", tf_error_last());
		}
	} else if (st && !start) {
		tf_notef("no baseline to compare with: no commit history here");
	}

	if (have_base && compare_and_report(o, &base, &head, note, &regressed)) {
		*status = TF_EXIT_ERROR;
		goto done;
	}
	if (!have_base) {
		/* still leave the run where the report would be */
		if (tf_mkdir_p(o->report_dir, 0755) == 0 &&
		    write_profile(head.runs.v[0].profile, o->report_dir, "head.pb.gz") == 0)
			printf("no baseline yet; this run is in %s/head.pb.gz\n", o->report_dir);
	}

	/* keep this run as the baseline of HEAD where it belongs */
	if (st && ctx->commit && !exit_status && !o->no_save &&
	    !head.runs.v[0].info.interrupted &&
	    (o->save || (ctx->on_default_branch && !ctx->dirty))) {
		save_baseline(o, st, &head.runs.v[0], kind);
	} else if (st && o->save && exit_status) {
		tf_warnf("not saving a baseline of a failing suite (exit status %d)", exit_status);
	}
	*status = exit_status ? exit_status
		  : (regressed && !o->no_fail) ? TF_EXIT_REGRESSION : TF_EXIT_OK;
done:
	side_free(&base);
	side_free(&head);
	tf_store_free(st);
	tf_buf_free(&bytes);
	free(kind);
	free(start);
	free(note);
	return 0;
}

static const char *const color_choices[] = { "auto", "always", "never", NULL };

int cmd_run(int argc, char **argv)
{
	run_opts o;
	tf_option opts[TF_RECORD_MAX_OPTS + 20];
	size_t n = 0;
	int dashdash, nargs, status = 0;

	memset(&o, 0, sizeof(o));
	tf_record_cli_init(&o.rec);
	o.rec.needs_git = true;
	o.threshold = -1;
	o.repeat = 0;
	o.report_dir = NULL;
	n += tf_record_cli_options(&o.rec, opts + n);
	opts[n++] = (tf_option){ TF_OPT_GROUP, 0, NULL, NULL, NULL, "baseline and gate:", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "against", &o.against, "REV",
				 "build REV in a temporary checkout and run both here, interleaved",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_INT, 0, "repeat", &o.repeat, "N",
				 "runs per side (default 1; 3 with --against)", NULL, 1, 1000, NULL };
	opts[n++] = (tf_option){ TF_OPT_DOUBLE, 0, "threshold", &o.threshold, "PCT",
				 "smallest slowdown that fails the gate (default 5)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "target", &o.rec.target_branch, "BRANCH",
				 "the branch to compare with (default: the PR's base, else the default branch)",
				 NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "store", &o.store_spec, "SPEC",
				 "where baselines live: git (default), git:REMOTE, dir:PATH",
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
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-fetch", &o.no_fetch, NULL,
				 "do not fetch baselines from the remote", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "no-fail", &o.no_fail, NULL,
				 "report regressions but exit 0", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_GROUP, 0, NULL, NULL, NULL, "report:", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "report", &o.report_dir, "DIR",
				 "the report directory (default testflame-report)", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_FLAG, 0, "all", &o.all, NULL,
				 "list unchanged tests too", NULL, 0, 0, NULL };
	opts[n++] = (tf_option){ TF_OPT_STRING, 0, "color", &o.color, "WHEN",
				 "colour the table", color_choices, 0, 0, NULL };
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
	if (!o.repeat)
		o.repeat = o.rec.cfg->repeat ? o.rec.cfg->repeat : o.against ? 3 : 1;
	if (o.threshold < 0)
		o.threshold = o.rec.cfg->gate.threshold >= 0 ? o.rec.cfg->gate.threshold : 5.0;
	if (!o.no_fail && !tf_config_bool(o.rec.cfg->gate.fail_on_regression, true))
		o.no_fail = true;
	if (!o.report_dir)
		o.report_dir = o.rec.cfg->report.dir ? o.rec.cfg->report.dir : "testflame-report";

	if (o.against)
		run_against(&o, &status);
	else
		run_stored(&o, &status);
out:
	tf_record_cli_free(&o.rec);
	return status;
}
