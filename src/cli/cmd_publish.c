/*
 * cmd_publish.c - `testflame publish [options] REPORT_DIR`: post a report
 * directory that `testflame run` wrote in an earlier step (SPEC §2), for
 * CI setups where recording and publishing are separate steps or jobs.
 *
 * The directory holds everything needed: report.md is the comment;
 * report.json gives the comparison's settings, and the runs beside it
 * (base.pb.gz, head.pb.gz, ...) are compared again with them, so
 * annotations, review comments and the step summary come from the same
 * numbers; the head run's metadata names the PR, repository, commits and
 * changed lines where the environment of this step does not.
 *
 * Exit status: 0 when everything was posted, or deliberately not (no PR,
 * no token, a fork's read-only token: one line says why); 1 when the host
 * refused or could not be reached; 2 for usage errors.
 */
#include "cli_int.h"
#include "testflame/compare.h"
#include "testflame/context.h"
#include "testflame/report.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static const char *const publish_usage[] = {
	"testflame publish [options] REPORT_DIR",
	"",
	"Posts a report directory written by 'testflame run' from CI: the sticky",
	"PR/MR comment, review comments on changed lines, GitHub annotations, the",
	"step summary and the step's outputs. Tokens come from the environment:",
	"TESTFLAME_GITHUB_TOKEN, GITHUB_TOKEN or GH_TOKEN; TESTFLAME_GITLAB_TOKEN or",
	"GITLAB_TOKEN (CI_JOB_TOKEN cannot post notes).",
	NULL,
};

typedef TF_VEC(tf_profile *) profile_vec;
typedef TF_VEC(char *) name_vec;

static void profiles_free(profile_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		tf_profile_free(v->v[i]);
	tf_vec_free(v);
}

/* STEM.pb.gz, STEM-2.pb.gz, ... as tf_report_write() names them. */
static int load_side(profile_vec *out, name_vec *names, const char *dir, const char *stem)
{
	for (size_t i = 0;; i++) {
		char *path = i ? tf_xasprintf("%s/%s-%zu.pb.gz", dir, stem, i + 1)
			       : tf_xasprintf("%s/%s.pb.gz", dir, stem);
		tf_profile *p = NULL;
		if (access(path, F_OK) != 0) {
			free(path);
			return 0;
		}
		int rc = tf_profile_load(&p, path);
		if (rc) {
			free(path);
			return rc;
		}
		tf_vec_push(out, p);
		tf_vec_push(names, path);
	}
}

static bool parse_correction(tf_correction *out, const char *name)
{
	static const tf_correction all[] = { TF_CORRECTION_HOLM, TF_CORRECTION_BH, TF_CORRECTION_NONE };
	for (size_t i = 0; name && i < TF_ARRAY_SIZE(all); i++) {
		if (strcmp(tf_correction_name(all[i]), name) == 0) {
			*out = all[i];
			return true;
		}
	}
	return false;
}

/* The comparison's settings, as report.json recorded them. */
static int read_settings(tf_compare_opts *co, bool *regressed, const char *path)
{
	json_error_t e;
	json_t *j = json_load_file(path, 0, &e);
	json_t *v;

	if (!j)
		return tf_error_set(TF_EINVAL, "%s:%d: %s", path, e.line, e.text);
	if (!json_is_object(j) || !json_is_string(json_object_get(j, "schema")) ||
	    strncmp(json_string_value(json_object_get(j, "schema")), "testflame-report/", 17) != 0) {
		json_decref(j);
		return tf_error_set(TF_EINVAL, "'%s' is not a testflame report.json", path);
	}
	if (json_is_number(v = json_object_get(j, "threshold_pct")))
		co->threshold = json_number_value(v);
	if (json_is_number(v = json_object_get(j, "alpha")))
		co->alpha = json_number_value(v);
	/* a report from before gate.min_delta was judged without one */
	v = json_object_get(j, "min_delta_ns");
	co->min_delta_ns = json_is_number(v) ? json_number_value(v) : 0;
	if (json_is_number(v = json_object_get(j, "min_samples")))
		co->min_samples = json_number_value(v);
	if (json_is_number(v = json_object_get(j, "noise_pct")))
		co->noise = json_number_value(v);
	parse_correction(&co->correction, json_string_value(json_object_get(j, "correction")));
	/* a report from before gate.measure judged CPU time alone */
	v = json_object_get(j, "measure");
	co->measure = TF_GATE_CPU;
	if (json_is_string(v) && tf_gate_measure_parse(&co->measure, json_string_value(v)))
		tf_error_clear();
	co->separate_jobs = json_is_true(json_object_get(j, "separate_jobs"));
	*regressed = json_is_true(json_object_get(j, "regressed"));
	json_decref(j);
	return 0;
}

/* Fill what this step's environment does not say from the run's metadata. */
static void fill_ci(tf_ci *ci, const tf_profile *head)
{
	const char *v;
	if (!ci->pr && (v = tf_profile_meta(head, "pr")))
		ci->pr = strtol(v, NULL, 10);
	if (!ci->repository && (v = tf_profile_meta(head, "repository")))
		ci->repository = tf_xstrdup(v);
	if (!ci->head_sha && (v = tf_profile_meta(head, "head_sha")))
		ci->head_sha = tf_xstrdup(v);
	if (!ci->commit && (v = tf_profile_meta(head, "commit")))
		ci->commit = tf_xstrdup(v);
	if (!ci->run_url && (v = tf_profile_meta(head, "run_url")))
		ci->run_url = tf_xstrdup(v);
}

int cmd_publish(int argc, char **argv)
{
	const char *config = NULL, *suite = NULL, *dir;
	bool no_comment = false, no_annotations = false, no_step_summary = false, quiet = false;
	int verbose = 0, nargs, status = TF_EXIT_OK, rc;
	tf_config *cfg = NULL;
	tf_ci *ci = NULL;
	profile_vec base = { 0 }, head = { 0 };
	name_vec base_names = { 0 }, head_names = { 0 };
	tf_comparison *c = NULL;
	tf_changes changes;
	bool have_changes = false, recorded_regressed = false;
	char *json_path = NULL, *repo_url = NULL;
	tf_report_opts ro;
	tf_run_publish_in in;

	const tf_option opts[] = {
		TF_OPT_FLAG(0, "no-comment", &no_comment, "no PR/MR comment (publish.comment)"),
		TF_OPT_FLAG(0, "no-annotations", &no_annotations,
			    "no annotations or review comments (publish.annotations)"),
		TF_OPT_FLAG(0, "no-step-summary", &no_step_summary,
			    "no $GITHUB_STEP_SUMMARY (publish.step_summary)"),
		TF_OPT_STRING(0, "suite", &suite, "NAME", "the suite's name (default: from the run files)"),
		TF_OPT_STRING(0, "config", &config, "FILE", "the config file (default .testflame.yml)"),
		TF_OPT_VERBOSE(&verbose, "say more (every API request)"),
		TF_OPT_QUIET(&quiet, "only warnings and errors"),
		TF_OPTS_END,
	};

	memset(&changes, 0, sizeof(changes));
	nargs = tf_parse_options(argc, argv, opts, publish_usage, 0, NULL);
	if (nargs == -2)
		return TF_EXIT_OK;
	if (nargs < 0)
		return TF_EXIT_USAGE;
	if (nargs != 2)
		return tf_usage_error(publish_usage, nargs < 2 ? "no report directory given"
							       : "one report directory, please");
	/* what was posted is a note; what could not be, a warning, kept */
	tf_cli_verbosity = quiet ? TF_CLI_WARNINGS : verbose;
	dir = argv[1];

	rc = tf_run_config_load(&cfg, config);
	if (rc) {
		status = tf_fail(rc);
		goto out;
	}
	rc = tf_ci_detect(&ci, environ);
	if (rc) {
		status = tf_fail(rc);
		goto out;
	}
	for (size_t i = 0; i < ci->warnings.n; i++)
		tf_warnf("%s", ci->warnings.v[i]);

	rc = load_side(&head, &head_names, dir, "head");
	if (!rc && !head.n)
		rc = tf_error_set(TF_ENOTFOUND, "'%s' is not a report directory: no head.pb.gz "
				  "(testflame run writes one)", dir);
	if (!rc)
		rc = load_side(&base, &base_names, dir, "base");
	if (rc) {
		status = tf_fail(rc);
		goto out;
	}
	fill_ci(ci, head.v[0]);

	/* compare again with report.json's settings, when there was a baseline */
	json_path = tf_xasprintf("%s/report.json", dir);
	if (base.n && access(json_path, F_OK) == 0) {
		tf_compare_opts co;
		tf_compare_opts_init(&co);
		rc = read_settings(&co, &recorded_regressed, json_path);
		if (!rc) {
			tf_compare_side bs = { (const tf_profile *const *)base.v,
					       (const char *const *)base_names.v, base.n };
			tf_compare_side hs = { (const tf_profile *const *)head.v,
					       (const char *const *)head_names.v, head.n };
			rc = tf_compare(&c, &bs, &hs, &co);
		}
		if (rc) {
			status = tf_fail(rc);
			goto out;
		}
		if (tf_comparison_regressed(c) != recorded_regressed)
			tf_warnf("the runs in '%s' compare differently from its report.json "
				 "(regressed: %s there); publishing the comparison of the runs",
				 dir, recorded_regressed ? "yes" : "no");
	}
	const char *meta_changes = tf_profile_meta(head.v[0], "changes");
	if (meta_changes && tf_changes_from_json(&changes, meta_changes) == 0)
		have_changes = true;

	if (!suite)
		suite = tf_profile_meta(head.v[0], "suite");
	if (ci->server_url && ci->repository)
		repo_url = tf_xasprintf("%s/%s", ci->server_url, ci->repository);
	tf_report_opts_init(&ro);
	ro.suite = suite;
	ro.provider = tf_ci_provider_name(ci->provider);
	ro.repo_url = repo_url;
	ro.run_url = ci->run_url;

	memset(&in, 0, sizeof(in));
	in.c = c;
	in.ro = &ro;
	in.report_dir = dir;
	in.ci = ci;
	in.cfg = cfg;
	in.changes = have_changes ? &changes : NULL;
	in.suite = suite ? suite : "tests";
	in.baseline = c ? tf_comparison_meta(c, false, "commit") : NULL;
	in.comment = tf_run_publish_switch(no_comment, cfg->publish.comment);
	in.annotations = tf_run_publish_switch(no_annotations, cfg->publish.annotations);
	in.step_summary = tf_run_publish_switch(no_step_summary, cfg->publish.step_summary);
	in.io = &tf_cli_notices;
	if (tf_run_publish(&in, false))
		status = TF_EXIT_ERROR;
out:
	tf_comparison_free(c);
	profiles_free(&base);
	profiles_free(&head);
	for (size_t i = 0; i < base_names.n; i++)
		free(base_names.v[i]);
	for (size_t i = 0; i < head_names.n; i++)
		free(head_names.v[i]);
	tf_vec_free(&base_names);
	tf_vec_free(&head_names);
	if (have_changes)
		tf_changes_free(&changes);
	tf_ci_free(ci);
	tf_config_free(cfg);
	free(json_path);
	free(repo_url);
	return status;
}
