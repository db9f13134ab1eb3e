/*
 * store_pyroscope.c - the "pyroscope:URL" store: the git store (the
 * repository stays the source of truth) with Grafana Pyroscope beside it
 * as the organisation-wide mirror, behind the one table of store
 * operations. Its baselines are git's; beyond them it pushes every run's
 * per-test profiles, labelled from the run's context (tf_store_mirror),
 * looks in Pyroscope for a baseline git does not hold
 * (tf_store_find_elsewhere), and links each test of a report to Grafana's
 * comparison of the two commits (tf_store_links_new). Pyroscope is a
 * mirror: whatever it answers, the verdict is made and the report written
 * as without it, and each of these says what it did in one notice.
 * The client itself (the Connect API, the scan for pushed commits) is
 * pyroscope.c.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static void log_request(const char *line, void *payload)
{
	tf_store_notice(payload, TF_NOTICE_VERBOSE, "%s", line);
}

int tf_store_pyroscope_open(tf_store *s, const char *url, const tf_config *cfg)
{
	tf_pyroscope_opts po;
	int rc;

	tf_pyroscope_opts_init(&po);
	po.url = url;
	po.log = log_request;
	po.payload = s;
	if ((rc = tf_pyroscope_opts_env(&po, environ)) || (rc = tf_pyroscope_open(&s->pyro, &po)))
		return tf_error_wrap(rc, "store '%s'", "pyroscope:...");
	if (!cfg)
		return 0;
	/* the config's credentials, under the environment's */
	tf_pyroscope_default_credentials(s->pyro, cfg->pyroscope.user, cfg->pyroscope.password,
					 cfg->pyroscope.token, cfg->pyroscope.tenant);
	if (cfg->pyroscope.grafana_url)
		s->grafana_url = tf_xstrdup(cfg->pyroscope.grafana_url);
	if (cfg->pyroscope.grafana_datasource)
		s->grafana_datasource = tf_xstrdup(cfg->pyroscope.grafana_datasource);
	return 0;
}

/* ---- the baseline fetched from Pyroscope, read as git's are ------------ */

char *tf_store_pyroscope_key(const char *commit, const char *suite, const char *kind)
{
	tf_buf se = TF_BUF_INIT, fe = TF_BUF_INIT;
	char *key;

	tf_store_encode_pair(&se, &fe, suite, kind);
	key = tf_xasprintf("%s\x1f%s\x1f%s", commit, se.ptr ? se.ptr : "", fe.ptr ? fe.ptr : "");
	tf_buf_free(&se);
	tf_buf_free(&fe);
	return key;
}

int tf_store_pyroscope_get(tf_buf *out, tf_store *s, const char *commit, const char *suite_enc,
			   const char *file_enc)
{
	char *key = tf_xasprintf("%s\x1f%s\x1f%s", commit, suite_enc, file_enc);
	bool hit = s->pyro_key && strcmp(s->pyro_key, key) == 0;
	free(key);
	if (!hit)
		return TF_ENOTFOUND;
	if (out)
		tf_buf_put(out, s->pyro_bytes.ptr, s->pyro_bytes.len);
	return 0;
}

/* ---- the series' labels, from the run's context ------------------------ */

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

/* service_name: the one asked for, else the repository ("owner/name",
 * from CI or the remote's URL), else the name of the remote's path (a
 * clone of a local repository), else of the work tree (without a context:
 * of this directory), else the suite. Caller frees. */
static char *service_name(tf_store *s, const tf_store_run *r)
{
	const tf_context *ctx = r->ctx;
	char *name = NULL;
	if (r->service)
		return tf_xstrdup(r->service);
	if (ctx && ctx->repository && *ctx->repository)
		return tf_xstrdup(ctx->repository);
	if (tf_store_remote_url(s))
		name = last_component(tf_store_remote_url(s));
	if (!name && ctx && ctx->git && ctx->git->workdir)
		name = last_component(ctx->git->workdir);
	if (!name && !ctx) {
		char cwd[4096];
		if (getcwd(cwd, sizeof(cwd)))
			name = last_component(cwd);
	}
	return name ? name : tf_xstrdup(r->suite);
}

/* The commit the run's series are labelled with: the PR's head (what a
 * reviewer knows, and what Grafana's source view can open), else HEAD. */
static const char *labelled_commit(const tf_context *ctx)
{
	return ctx->head_sha ? ctx->head_sha : ctx->commit;
}

/* ---- the operations beyond git's ---------------------------------------- */

static int find_elsewhere(tf_store_match *m, tf_store *s, const char *start,
			  const tf_store_run *r)
{
	char *git_why, *service;
	tf_pyroscope_query q;
	int rc;

	git_why = tf_xstrdup(tf_error_last());
	service = service_name(s, r);
	memset(&q, 0, sizeof(q));
	q.service = service;
	q.suite = r->suite;
	q.kind = r->kind;
	q.max_depth = r->depth;
	tf_store_notice(s, TF_NOTICE_VERBOSE, "no baseline in git; looking in Pyroscope at '%s'",
			tf_pyroscope_url(s->pyro));
	rc = tf_store_resolve_pyroscope(m, s, start, &q);
	if (rc == TF_ENOTFOUND) {
		char *py_why = tf_xstrdup(tf_error_last());
		if (strcmp(py_why, git_why) == 0) /* the walk's own problem, said once */
			tf_error_set(rc, "%s", git_why);
		else
			tf_error_set(rc, "%s; %s", git_why, py_why);
		free(py_why);
	} else if (rc) {
		tf_store_notice(s, TF_NOTICE_WARN, "cannot look for a baseline in Pyroscope: %s",
				tf_error_last());
		tf_error_set(TF_ENOTFOUND, "%s", git_why);
		rc = TF_ENOTFOUND;
	}
	free(git_why);
	free(service);
	return rc;
}

static int mirror(tf_store *s, const tf_store_run *r, const tf_profile *const *runs, size_t n)
{
	const tf_context *ctx = r->ctx;
	TF_VEC(const tf_profile *) ps = { 0 };
	tf_pyroscope_labels l;
	tf_pyroscope_push_result res;
	char *service, *repo_url = NULL;
	int rc;

	if (!labelled_commit(ctx)) {
		tf_store_notice(s, TF_NOTICE_WARN,
				"not pushing to Pyroscope: no commit to label the profiles with");
		return TF_EUSAGE;
	}
	service = service_name(s, r);
	if (ctx->ci && ctx->ci->server_url && ctx->repository)
		repo_url = tf_xasprintf("%s/%s", ctx->ci->server_url, ctx->repository);
	else if (tf_store_remote_url(s) && strstr(tf_store_remote_url(s), "://"))
		repo_url = tf_xstrdup(tf_store_remote_url(s));
	memset(&l, 0, sizeof(l));
	l.service = service;
	l.repository_url = repo_url;
	l.commit = labelled_commit(ctx);
	l.branch = ctx->branch;
	l.pr = ctx->pr;
	l.ci = ctx->ci ? tf_ci_provider_name(ctx->ci->provider) : NULL;
	l.suite = r->suite;
	l.kind = r->kind;
	l.shard = tf_profile_meta(runs[0], "shard");
	for (size_t i = 0; i < n; i++)
		tf_vec_push(&ps, runs[i]);
	rc = tf_pyroscope_push(&res, s->pyro, &l, ps.v, ps.n, 0);
	if (rc)
		tf_store_notice(s, TF_NOTICE_WARN, "could not push the profiles to Pyroscope (the "
				"verdict stands): %s", tf_error_last());
	else
		tf_store_notice(s, TF_NOTICE_INFO, "pushed %zu test%s (%zu run%s, %zu profile%s) to "
				"Pyroscope at '%s'%s", res.tests, res.tests == 1 ? "" : "s", ps.n,
				ps.n == 1 ? "" : "s", res.profiles, res.profiles == 1 ? "" : "s",
				tf_pyroscope_url(s->pyro), res.ingest ? " through /ingest" : "");
	tf_vec_free(&ps);
	free(service);
	free(repo_url);
	return rc;
}

typedef struct {
	tf_store_links base;
	tf_pyroscope_link link;
	char *profile_type, *service;
} grafana_links;

static char *grafana_link(const tf_store_links *l, const char *test)
{
	return tf_pyroscope_grafana_url(&((const grafana_links *)l)->link, test);
}

static void grafana_free(tf_store_links *l)
{
	grafana_links *g = (grafana_links *)l;
	free(g->profile_type);
	free(g->service);
	free(g);
}

static void links(tf_store_links **out, tf_store *s, const tf_store_run *r,
		  const char *base_commit)
{
	grafana_links *g;
	tf_baseline b;
	int64_t now = (int64_t)time(NULL) * 1000;
	char *profile_type = NULL;

	if (!s->grafana_url || !base_commit || !r->kind || !labelled_commit(r->ctx))
		return;
	if (tf_pyroscope_kind_types(NULL, &profile_type, NULL, r->kind) != 0) {
		tf_error_clear();
		return;
	}
	g = tf_xcalloc(1, sizeof(*g));
	g->base.text = "compare in Grafana";
	g->base.link = grafana_link;
	g->base.free = grafana_free;
	g->profile_type = profile_type;
	g->service = service_name(s, r);
	g->link.grafana_url = s->grafana_url;
	g->link.datasource = s->grafana_datasource;
	g->link.service = g->service;
	g->link.suite = r->suite;
	g->link.profile_type = g->profile_type;
	g->link.base_commit = base_commit;
	g->link.head_commit = labelled_commit(r->ctx);
	g->link.head_ms = now;
	/* the base side was pushed when its baseline was saved (or fetched) */
	g->link.base_ms = now;
	memset(&b, 0, sizeof(b));
	if (tf_store_show(&b, s, base_commit) == 0 && b.record_time > 0)
		g->link.base_ms = b.record_time * 1000;
	tf_baseline_clear(&b);
	tf_error_clear();
	*out = &g->base;
}

/* ---- git's baselines, and the one fetched from Pyroscope ---------------- */

static int save(tf_store *s, const char *commit, const char *suite_enc, const char *file_enc,
		const void *data, size_t len)
{
	return tf_store_git_backend.save(s, commit, suite_enc, file_enc, data, len);
}

static int get(tf_buf *out, tf_store *s, const char *commit, const char *suite_enc,
	       const char *file_enc)
{
	int rc = tf_store_git_backend.get(out, s, commit, suite_enc, file_enc);
	if (rc == TF_ENOTFOUND)
		rc = tf_store_pyroscope_get(out, s, commit, suite_enc, file_enc);
	return rc;
}

static int list(tf_baseline_list *out, tf_store *s)
{
	return tf_store_git_backend.list(out, s);
}

static int show(tf_baseline *out, tf_store *s, const char *commit)
{
	return tf_store_git_backend.show(out, s, commit);
}

static int remove_one(tf_store *s, const tf_baseline *b)
{
	return tf_store_git_backend.remove(s, b);
}

const tf_store_backend tf_store_pyroscope_backend = {
	.name = "pyroscope",
	.git = true,
	.save = save,
	.get = get,
	.list = list,
	.show = show,
	.remove = remove_one,
	.find_elsewhere = find_elsewhere,
	.mirror = mirror,
	.links = links,
};
