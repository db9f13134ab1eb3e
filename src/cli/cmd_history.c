/*
 * cmd_history.c - `testflame history`: the default branch's stored runs of
 * one suite read as per-test series, and the steps and drifts in them,
 * each with its commits and the functions that moved. The work is the
 * history module's (load, analyse, explain, render); this file parses the
 * options, opens the store and prints.
 */
#include "cli_int.h"
#include "testflame/history.h"

#include <stdlib.h>
#include <string.h>

static const char *const history_usage[] = {
	"testflame history [--suite NAME] [--kind KIND] [--commits N] [--from REV] [--json] "
	"[-o FILE] [--report DIR] [--store SPEC]",
	NULL,
};

/* The stored runs read on each side of a change to name what moved. */
#define EXPLAIN_RUNS 5
/* Changes and drifts explained (newest first); the rest keep their sizes. */
#define EXPLAIN_MAX 20

/*
 * The web page of a commit, as a prefix the id follows: from the remote's
 * URL when it is a GitHub or GitLab one (https or scp-like); NULL else.
 */
static char *commit_url_from(const char *remote)
{
	const char *host, *path;
	char *h = NULL, *url = NULL;

	if (!remote)
		return NULL;
	if (strncmp(remote, "https://", 8) == 0 || strncmp(remote, "http://", 7) == 0) {
		host = strstr(remote, "://") + 3;
		path = strchr(host, '/');
		if (!path)
			return NULL;
		h = tf_xstrndup(host, (size_t)(path - host));
		path++;
	} else if (strncmp(remote, "git@", 4) == 0 && strchr(remote, ':')) {
		host = remote + 4;
		path = strchr(host, ':');
		h = tf_xstrndup(host, (size_t)(path - host));
		path++;
	} else {
		return NULL;
	}
	if (strchr(h, '@')) /* credentials in the URL: never into a page */
		memmove(h, strrchr(h, '@') + 1, strlen(strrchr(h, '@')));
	size_t n = strlen(path);
	if (n > 4 && strcmp(path + n - 4, ".git") == 0)
		n -= 4;
	if (strstr(h, "github"))
		url = tf_xasprintf("https://%s/%.*s/commit/", h, (int)n, path);
	else if (strstr(h, "gitlab"))
		url = tf_xasprintf("https://%s/%.*s/-/commit/", h, (int)n, path);
	free(h);
	return url;
}

/* The commits each side of change i of its test: up to EXPLAIN_RUNS back
 * from the last at the old level, forward from the first at the new,
 * never across the test's other changes. */
static void change_sides(const tf_history_result *r, size_t i, size_t *blo, size_t *bhi,
			 size_t *alo, size_t *ahi)
{
	const tf_history_change *c = &r->changes[i];
	size_t lo = 0, hi = r->ncommits - 1;
	for (size_t k = 0; k < r->nchanges; k++) {
		const tf_history_change *o = &r->changes[k];
		if (k == i || o->test != c->test)
			continue;
		if (o->at <= c->prev && o->at > lo)
			lo = o->at;
		if (o->at > c->at && o->prev < hi)
			hi = o->prev;
	}
	*bhi = c->prev;
	*blo = c->prev >= lo + EXPLAIN_RUNS ? c->prev - EXPLAIN_RUNS + 1 : lo;
	*alo = c->at;
	*ahi = TF_MIN(hi, c->at + EXPLAIN_RUNS - 1);
}

int cmd_history(int argc, char **argv)
{
	const char *suite = NULL, *kind = NULL, *from = NULL, *output = NULL, *store = NULL;
	const char *service = NULL, *report = NULL, *commit_url = NULL;
	bool no_report = false;
	long commits = 0, window = 0, drift_window = 0;
	double min_change = -1, drift = -1, fdr = -1;
	bool json = false, quiet = false, no_functions = false;
	int verbose = 0;
	const tf_option opts[] = {
		TF_OPT_GROUP("what to read"),
		TF_OPT_STRING(0, "suite", &suite, "NAME", "the suite (default: the nearest stored run's)"),
		TF_OPT_STRING(0, "kind", &kind, "KIND", "the runner kind (default: the suite's nearest)"),
		TF_OPT_INT(0, "commits", &commits, "N", "the newest N stored commits (default: all)",
			   1, 1000000),
		TF_OPT_STRING(0, "from", &from, "REV", "walk the first-parent history from REV (default: HEAD)"),
		TF_OPT_STRING(0, "store", &store, "SPEC",
			      "git, git:REMOTE, dir:PATH or pyroscope:URL (default: as run)"),
		TF_OPT_STRING(0, "service", &service, "NAME",
			      "Pyroscope's service name of the runs (default: the remote's name, "
			      "else this directory's)"),
		TF_OPT_GROUP("the analysis"),
		TF_OPT_DOUBLE(0, "min-change", &min_change, "PCT", "the least step reported (default 1)"),
		TF_OPT_DOUBLE(0, "drift", &drift, "PCT", "the least drift over the window reported (default 5)"),
		TF_OPT_INT(0, "drift-window", &drift_window, "N", "commits a drift is judged over (default 20)",
			   6, 100000),
		TF_OPT_INT(0, "window", &window, "N", "E-Divisive's window, in commits (default 50)",
			   11, 100000),
		TF_OPT_DOUBLE(0, "fdr", &fdr, "Q", "false discovery rate across the tests (default 0.05)"),
		TF_OPT_FLAG(0, "no-functions", &no_functions, "do not read the runs around each change "
			    "for the functions that moved"),
		TF_OPT_GROUP("output"),
		TF_OPT_FLAG(0, "json", &json, "print the JSON document (docs/history-json.md)"),
		TF_OPT_STRING('o', "output", &output, "FILE", "write the JSON document to FILE"),
		TF_OPT_STRING(0, "report", &report, "DIR",
			      "write history.html and history.json there (default: testflame-report)"),
		TF_OPT_FLAG(0, "no-report", &no_report, "write no history page"),
		TF_OPT_STRING(0, "commit-url", &commit_url, "URL",
			      "a commit's web page, the id appended (default: from a GitHub or GitLab remote)"),
		TF_OPT_QUIET(&quiet, "only errors"),
		TF_OPT_VERBOSE(&verbose, "say what is read"),
		TF_OPTS_END,
	};
	int n = tf_parse_options(argc, argv, opts, history_usage, 0, NULL);
	if (n < 0)
		return n == -2 ? TF_EXIT_OK : TF_EXIT_USAGE;
	if (n > 1)
		return tf_usage_error(history_usage, "unexpected argument '%s'", argv[1]);
	tf_cli_verbosity = quiet ? -1 : verbose;

	tf_history_opts ho;
	tf_history_opts_init(&ho);
	if (min_change >= 0)
		ho.min_change_pct = min_change;
	if (drift >= 0)
		ho.drift_pct = drift;
	if (fdr >= 0)
		ho.fdr = fdr;
	if (window)
		ho.window = (size_t)window;
	if (drift_window)
		ho.drift_window = (size_t)drift_window;

	tf_store *st = NULL;
	int rc = tf_run_store_open(&st, store, NULL, NULL, &tf_cli_notices);
	if (rc)
		return tf_fail(rc);
	tf_history_load_opts lo;
	memset(&lo, 0, sizeof(lo));
	lo.start = from;
	lo.suite = suite;
	lo.kind = kind;
	lo.max_commits = (size_t)commits;
	lo.pyroscope_service = service;
	tf_verbosef("reading %s", tf_store_describe(st));
	tf_history_data *d = NULL;
	rc = tf_history_load(&d, st, &lo);
	if (rc) {
		tf_store_free(st);
		return tf_fail(rc);
	}
	tf_history_input in;
	tf_history_input_from(&in, d);
	tf_history_result *res = NULL;
	rc = tf_history_analyze(&res, &in, &ho);
	if (rc) {
		tf_history_data_free(d);
		tf_store_free(st);
		return tf_fail(rc);
	}

	/* what moved: the runs each side of a change, compared */
	tf_history_explained *cw = tf_xcalloc(res->nchanges + 1, sizeof(*cw));
	tf_history_explained *dw = tf_xcalloc(res->ndrifts + 1, sizeof(*dw));
	for (size_t i = 0; !no_functions && i < res->nchanges && i < EXPLAIN_MAX; i++) {
		size_t blo, bhi, alo, ahi;
		change_sides(res, i, &blo, &bhi, &alo, &ahi);
		if (tf_history_explain(&cw[i], st, d, res->changes[i].test, blo, bhi, alo, ahi,
				       EXPLAIN_RUNS) != 0) {
			tf_verbosef("cannot compare the runs around a change: %s", tf_error_last());
			tf_error_clear();
		}
	}
	for (size_t i = 0; !no_functions && i < res->ndrifts && i < EXPLAIN_MAX; i++) {
		const tf_history_drift *x = &res->drifts[i];
		size_t third = TF_MAX((x->to - x->from + 1) / 3, 1);
		if (tf_history_explain(&dw[i], st, d, x->test, x->from, x->from + third - 1,
				       x->to - third + 1, x->to, EXPLAIN_RUNS) != 0) {
			tf_verbosef("cannot compare the runs of a drift: %s", tf_error_last());
			tf_error_clear();
		}
	}

	tf_history_render r;
	memset(&r, 0, sizeof(r));
	r.data = d;
	r.result = res;
	r.change_why = cw;
	r.drift_why = dw;
	r.opts = &ho;
	tf_buf b = TF_BUF_INIT;
	int ret = TF_EXIT_OK;
	if (json || output) {
		tf_history_to_json(&b, &r);
		if (output) {
			if (tf_file_write_atomic(output, b.ptr, b.len) != 0)
				ret = tf_fail(TF_ERROR);
		} else {
			fwrite(b.ptr, 1, b.len, stdout);
		}
		tf_buf_clear(&b);
	}
	if (!no_report && ret == TF_EXIT_OK) {
		const char *dir = report ? report : "testflame-report";
		char *url = commit_url ? tf_xstrdup(commit_url) : commit_url_from(tf_store_remote_url(st));
		char *html_path = tf_xasprintf("%s/history.html", dir);
		char *json_path = tf_xasprintf("%s/history.json", dir);
		tf_buf page = TF_BUF_INIT;
		tf_error_clear();
		rc = tf_mkdir_p(dir, 0755);
		if (!rc) {
			tf_report_history_html(&page, &r, url);
			rc = tf_file_write_atomic(html_path, page.ptr, page.len);
		}
		if (!rc) {
			tf_buf_clear(&page);
			tf_history_to_json(&page, &r);
			rc = tf_file_write_atomic(json_path, page.ptr, page.len);
		}
		if (rc)
			ret = tf_fail(rc);
		else
			tf_verbosef("wrote %s and %s", html_path, json_path);
		tf_buf_free(&page);
		free(url);
		free(html_path);
		free(json_path);
	}
	if (!json && ret == TF_EXIT_OK && !quiet) {
		tf_history_render_table(&b, &r);
		fwrite(b.ptr, 1, b.len, stdout);
	}
	tf_buf_free(&b);
	for (size_t i = 0; i < res->nchanges; i++)
		tf_history_explained_clear(&cw[i]);
	for (size_t i = 0; i < res->ndrifts; i++)
		tf_history_explained_clear(&dw[i]);
	free(cw);
	free(dw);
	tf_history_result_free(res);
	tf_history_data_free(d);
	tf_store_free(st);
	return ret;
}
