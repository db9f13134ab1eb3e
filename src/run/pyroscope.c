/*
 * pyroscope.c - `run` with a "pyroscope:URL" store (see
 * pyroscope.h): the labels of the run's series from its context,
 * the baseline from Pyroscope when git holds none, Grafana's comparison
 * links in the report, and the push. Pyroscope is a mirror: whatever it
 * answers, the verdict is made and the report written as without it.
 */
#include "run/pyroscope.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void log_request(const char *line, void *payload)
{
	(void)payload;
	tf_verbosef("%s", line);
}

void tf_cli_pyroscope_setup(tf_store *st, const tf_config *cfg)
{
	tf_pyroscope *py = tf_store_pyroscope(st);
	if (!py)
		return;
	tf_pyroscope_default_credentials(py, cfg->pyroscope.user, cfg->pyroscope.password,
					 cfg->pyroscope.token, cfg->pyroscope.tenant);
	tf_pyroscope_set_log(py, log_request, NULL);
}

/* The last path component of `path`, without a ".git" suffix; NULL if
 * there is none. */
static char *last_component(const char *path)
{
	char *w = tf_xstrdup(path), *base, *out = NULL;
	size_t n = strlen(w);
	while (n > 1 && w[n - 1] == '/')
		w[--n] = '\0';
	if (n > 4 && strcmp(w + n - 4, ".git") == 0)
		w[n -= 4] = '\0';
	base = strrchr(w, '/');
	base = base ? base + 1 : strrchr(w, ':') ? strrchr(w, ':') + 1 : w;
	if (*base)
		out = tf_xstrdup(base);
	free(w);
	return out;
}

/* service_name: the repository ("owner/name", from CI or the remote's
 * URL), else the name of the remote's path (a clone of a local
 * repository), else of the work tree, else the suite. Caller frees. */
static char *service_name(tf_store *st, const tf_record_cli *rec)
{
	const tf_context *ctx = rec->ctx;
	char *name = NULL;
	if (ctx->repository && *ctx->repository)
		return tf_xstrdup(ctx->repository);
	if (tf_store_remote_url(st))
		name = last_component(tf_store_remote_url(st));
	if (!name && ctx->git && ctx->git->workdir)
		name = last_component(ctx->git->workdir);
	return name ? name : tf_xstrdup(rec->suite_name);
}

/* The commit the run's series are labelled with: the PR's head (what a
 * reviewer knows, and what Grafana's source view can open), else HEAD. */
static const char *labelled_commit(const tf_context *ctx)
{
	return ctx->head_sha ? ctx->head_sha : ctx->commit;
}

int tf_cli_pyroscope_resolve(tf_store_match *m, tf_store *st, const char *start,
			     const tf_record_cli *rec, const char *kind)
{
	tf_pyroscope *py = tf_store_pyroscope(st);
	char *git_why, *service;
	tf_pyroscope_query q;
	int rc;

	if (!py)
		return TF_ENOTFOUND;
	git_why = tf_xstrdup(tf_error_last());
	service = service_name(st, rec);
	memset(&q, 0, sizeof(q));
	q.service = service;
	q.suite = rec->suite_name;
	q.kind = kind;
	tf_verbosef("no baseline in git; looking in Pyroscope at '%s'", tf_pyroscope_url(py));
	rc = tf_store_resolve_pyroscope(m, st, start, &q);
	if (rc == TF_ENOTFOUND) {
		char *py_why = tf_xstrdup(tf_error_last());
		if (strcmp(py_why, git_why) == 0) /* the walk's own problem, said once */
			tf_error_set(rc, "%s", git_why);
		else
			tf_error_set(rc, "%s; %s", git_why, py_why);
		free(py_why);
	} else if (rc) {
		tf_warnf("cannot look for a baseline in Pyroscope: %s", tf_error_last());
		tf_error_set(TF_ENOTFOUND, "%s", git_why);
		rc = TF_ENOTFOUND;
	}
	free(git_why);
	free(service);
	return rc;
}

static char *link_for(const char *test, void *payload)
{
	tf_cli_pyroscope_link *l = payload;
	return tf_pyroscope_grafana_url(&l->link, test);
}

void tf_cli_pyroscope_links(tf_report_opts *ro, tf_cli_pyroscope_link *l, tf_store *st,
			    const tf_record_cli *rec, const char *base_commit, const char *kind)
{
	const tf_config *cfg = rec->cfg;
	tf_baseline b;
	int64_t now = (int64_t)time(NULL) * 1000;

	memset(l, 0, sizeof(*l));
	if (!tf_store_pyroscope(st) || !cfg->pyroscope.grafana_url || !base_commit || !kind ||
	    !labelled_commit(rec->ctx))
		return;
	if (tf_pyroscope_kind_types(NULL, &l->profile_type, NULL, kind) != 0) {
		tf_error_clear();
		return;
	}
	l->service = service_name(st, rec);
	l->link.grafana_url = cfg->pyroscope.grafana_url;
	l->link.datasource = cfg->pyroscope.grafana_datasource;
	l->link.service = l->service;
	l->link.suite = rec->suite_name;
	l->link.profile_type = l->profile_type;
	l->link.base_commit = base_commit;
	l->link.head_commit = labelled_commit(rec->ctx);
	l->link.head_ms = now;
	/* the base side was pushed when its baseline was saved (or fetched) */
	l->link.base_ms = now;
	memset(&b, 0, sizeof(b));
	if (tf_store_show(&b, st, base_commit) == 0 && b.record_time > 0)
		l->link.base_ms = b.record_time * 1000;
	tf_baseline_clear(&b);
	tf_error_clear();
	ro->test_link = link_for;
	ro->test_link_payload = l;
	ro->test_link_text = "compare in Grafana";
}

void tf_cli_pyroscope_link_free(tf_cli_pyroscope_link *l)
{
	free(l->profile_type);
	free(l->service);
	memset(l, 0, sizeof(*l));
}

void tf_cli_pyroscope_push(tf_store *st, const tf_record_cli *rec, const char *kind,
			   const tf_record_result *runs, size_t n)
{
	tf_pyroscope *py = tf_store_pyroscope(st);
	const tf_context *ctx = rec->ctx;
	TF_VEC(const tf_profile *) ps = { 0 };
	tf_pyroscope_labels l;
	tf_pyroscope_push_result res;
	char *service, *repo_url = NULL;
	int rc;

	if (!py || n == 0)
		return;
	if (!labelled_commit(ctx)) {
		tf_warnf("not pushing to Pyroscope: no commit to label the profiles with");
		return;
	}
	service = service_name(st, rec);
	if (ctx->ci && ctx->ci->server_url && ctx->repository)
		repo_url = tf_xasprintf("%s/%s", ctx->ci->server_url, ctx->repository);
	else if (tf_store_remote_url(st) && strstr(tf_store_remote_url(st), "://"))
		repo_url = tf_xstrdup(tf_store_remote_url(st));
	memset(&l, 0, sizeof(l));
	l.service = service;
	l.repository_url = repo_url;
	l.commit = labelled_commit(ctx);
	l.branch = ctx->branch;
	l.pr = ctx->pr;
	l.ci = ctx->ci ? tf_ci_provider_name(ctx->ci->provider) : NULL;
	l.suite = rec->suite_name;
	l.kind = kind;
	l.shard = tf_profile_meta(runs[0].profile, "shard");
	for (size_t i = 0; i < n; i++)
		if (!runs[i].info.interrupted)
			tf_vec_push(&ps, runs[i].profile);
	rc = tf_pyroscope_push(&res, py, &l, ps.v, ps.n, 0);
	if (rc)
		tf_warnf("could not push the profiles to Pyroscope (the verdict stands): %s",
			 tf_error_last());
	else
		tf_notef("pushed %zu test%s (%zu run%s, %zu profile%s) to Pyroscope at '%s'%s",
			 res.tests, res.tests == 1 ? "" : "s", ps.n, ps.n == 1 ? "" : "s",
			 res.profiles, res.profiles == 1 ? "" : "s", tf_pyroscope_url(py),
			 res.ingest ? " through /ingest" : "");
	tf_vec_free(&ps);
	free(service);
	free(repo_url);
}
