/*
 * github.c - posting to a GitHub pull request through the REST API
 * (docs.github.com/rest, version 2022-11-28):
 *
 *   GET   /repos/{owner}/{repo}/issues/{n}/comments       our sticky comment
 *   PATCH /repos/{owner}/{repo}/issues/comments/{id}      edit it
 *   POST  /repos/{owner}/{repo}/issues/{n}/comments       or create it
 *   GET   /repos/{owner}/{repo}/pulls/{n}/comments        our review comments
 *   PATCH /repos/{owner}/{repo}/pulls/comments/{id}       edit one in place
 *   POST  /repos/{owner}/{repo}/pulls/{n}/comments        or add one on a line
 *
 * Review comments use `line`/`side` (and `start_line`/`start_side` for a
 * range) at the PR's head commit. GitHub answers 422 for a line outside the
 * diff: such a function stays in the main comment, and the call goes on.
 * A 403 on posting means the token may not write here: a fork's read-only
 * token, or a workflow without `pull-requests: write`.
 */
#include "publish/publish_int.h"

#include <stdlib.h>
#include <string.h>

static int forbidden(tf_publish_result *res, int rc)
{
	if (rc != TF_EPERM)
		return rc;
	res->forbidden = true;
	char *m = tf_xstrdup(tf_error_last());
	tf_error_set(rc, "%s; the token may not write to this pull request (a pull request from a "
		     "fork gets a read-only token; otherwise the workflow needs `permissions: "
		     "pull-requests: write`)", m);
	free(m);
	return rc;
}

typedef struct {
	char *key, *path, *body;
	json_int_t id, line, start_line; /* 0 when null (an outdated comment) */
} ours;

typedef struct {
	const char *prefix; /* "<!-- testflame:review suite=S key=" */
	TF_VEC(ours) v;
} ours_list;

static int collect(json_t *item, void *payload)
{
	ours_list *l = payload;
	const char *body = json_string_value(json_object_get(item, "body"));
	json_t *id = json_object_get(item, "id");
	const char *k, *e;
	if (!json_is_integer(id) || !pb_has_marker(body, l->prefix))
		return 0;
	while (*body == ' ' || *body == '\n' || *body == '\r' || *body == '\t')
		body++;
	k = body + strlen(l->prefix);
	e = strstr(k, " -->");
	if (!e)
		return 0;
	ours o;
	memset(&o, 0, sizeof(o));
	o.key = tf_xstrndup(k, (size_t)(e - k));
	const char *path = json_string_value(json_object_get(item, "path"));
	o.path = tf_xstrdup(path ? path : "");
	o.body = tf_xstrdup(body);
	o.id = json_integer_value(id);
	json_t *line = json_object_get(item, "line"), *start = json_object_get(item, "start_line");
	o.line = json_is_integer(line) ? json_integer_value(line) : 0;
	o.start_line = json_is_integer(start) ? json_integer_value(start) : 0;
	tf_vec_push(&l->v, o);
	return 0;
}

static void ours_free(ours_list *l)
{
	for (size_t i = 0; i < l->v.n; i++) {
		free(l->v.v[i].key);
		free(l->v.v[i].path);
		free(l->v.v[i].body);
	}
	tf_vec_free(&l->v);
}

static char *review_body(const tf_publish_opts *o, const tf_review_target *tg)
{
	tf_buf b = TF_BUF_INIT;
	size_t *tests = tf_xcalloc(tg->refs.n, sizeof(size_t));
	size_t *funcs = tf_xcalloc(tg->refs.n, sizeof(size_t));
	for (size_t i = 0; i < tg->refs.n; i++) {
		tests[i] = tg->refs.v[i].test;
		funcs[i] = tg->refs.v[i].func;
	}
	tf_publish_review_marker(&b, o->suite, tg->key);
	tf_buf_putc(&b, '\n');
	if (tf_report_review_note(&b, o->c, tests, funcs, tg->refs.n, o->report) != 0)
		tf_buf_clear(&b);
	free(tests);
	free(funcs);
	return tf_buf_detach(&b);
}

static char *create_json(const char *body, const tf_publish_target *t, const tf_review_target *tg)
{
	tf_buf b = TF_BUF_INIT;
	tf_buf_puts(&b, "{\"body\":");
	tf_buf_put_json(&b, body);
	tf_buf_puts(&b, ",\"commit_id\":");
	tf_buf_put_json(&b, t->commit);
	tf_buf_puts(&b, ",\"path\":");
	tf_buf_put_json(&b, tg->path);
	tf_buf_printf(&b, ",\"line\":%u,\"side\":\"RIGHT\"", tg->line);
	if (tg->start_line && tg->start_line < tg->line)
		tf_buf_printf(&b, ",\"start_line\":%u,\"start_side\":\"RIGHT\"", tg->start_line);
	tf_buf_putc(&b, '}');
	return tf_buf_detach(&b);
}

static int review_comments(tf_publish_result *res, tf_http *h, const tf_publish_opts *o,
			   const char *base)
{
	const tf_publish_target *t = o->target;
	tf_review_targets tgs;
	ours_list have = { 0 };
	tf_buf prefix = TF_BUF_INIT;
	char *list = NULL;
	int rc = tf_publish_review_targets(&tgs, o->c, o->changes, o->suite, o->review_max);

	if (rc)
		return rc;
	res->review_targets = tgs.items.n;
	res->review_elsewhere = tgs.elsewhere;
	if (!tgs.items.n)
		goto done;
	if (!t->commit) {
		tf_msglist_pushf(&res->notes, "no review comments: the pull request's head commit is "
				 "unknown (set TESTFLAME_HEAD_SHA)");
		goto done;
	}
	tf_publish_review_marker(&prefix, o->suite, "");
	/* "<!-- testflame:review suite=S key= -->" -> "...key=" */
	prefix.len -= 4;
	prefix.ptr[prefix.len] = '\0';
	have.prefix = prefix.ptr;
	list = tf_xasprintf("%s/pulls/%ld/comments?per_page=100", base, t->number);
	if ((rc = forbidden(res, tf_http_list_each(h, list, collect, &have))))
		goto done;

	for (size_t i = 0; i < tgs.items.n; i++) {
		const tf_review_target *tg = &tgs.items.v[i];
		const ours *old = NULL;
		char *body = review_body(o, tg), *json = NULL, *url = NULL;
		const char *method;
		tf_http_response r;

		for (size_t k = 0; k < have.v.n; k++) {
			const ours *c = &have.v.v[k];
			json_int_t start = c->start_line ? c->start_line : c->line;
			if (strcmp(c->key, tg->key) == 0 && strcmp(c->path, tg->path) == 0 &&
			    c->line == tg->line && start == (json_int_t)tg->start_line)
				old = c;
		}
		if (old && strcmp(old->body, body) == 0) {
			res->review_unchanged++;
			free(body);
			continue;
		}
		if (old) {
			method = "PATCH";
			url = tf_xasprintf("%s/pulls/comments/%lld", base, (long long)old->id);
			json = pb_json_body(body);
		} else {
			method = "POST";
			url = tf_xasprintf("%s/pulls/%ld/comments", base, t->number);
			json = create_json(body, t, tg);
		}
		rc = tf_http_request(&r, h, method, url, json);
		if (!rc && r.status == 422 && !old) {
			tf_http_fail(h, &r, TF_EINVAL, method, url);
			res->review_refused++;
			tf_msglist_pushf(&res->notes, "no review comment on %s:%u (kept in the main "
					 "comment): %s", tg->path, tg->line, tf_error_last());
		} else if (!rc && r.status != 200 && r.status != 201) {
			rc = forbidden(res, tf_http_fail(h, &r, tf_http_status_code(r.status), method, url));
		} else if (!rc) {
			if (old)
				res->review_updated++;
			else
				res->review_created++;
		}
		tf_http_response_clear(&r);
		free(body);
		free(json);
		free(url);
		if (rc)
			break;
	}
done:
	tf_review_targets_clear(&tgs);
	ours_free(&have);
	tf_buf_free(&prefix);
	free(list);
	return rc;
}

int pb_github_post(tf_publish_result *res, const tf_publish_opts *o)
{
	const tf_publish_target *t = o->target;
	const char *slash = t->repository ? strchr(t->repository, '/') : NULL;
	tf_http *h = NULL;
	tf_buf base = TF_BUF_INIT;
	char *auth, *owner;
	int rc;

	if (!slash || !slash[1] || strchr(slash + 1, '/'))
		return tf_error_set(TF_EUSAGE, "the GitHub repository '%s' is not owner/name",
				    t->repository ? t->repository : "");
	auth = tf_xasprintf("Authorization: Bearer %s", t->token);
	rc = pb_open(&h, o, auth, t->token, "application/vnd.github+json",
		     "X-GitHub-Api-Version: 2022-11-28");
	memset(auth, 0, strlen(auth));
	free(auth);
	if (rc)
		return rc;
	owner = tf_xstrndup(t->repository, (size_t)(slash - t->repository));
	tf_buf_puts(&base, "/repos/");
	tf_http_put_segment(&base, owner);
	tf_buf_putc(&base, '/');
	tf_http_put_segment(&base, slash + 1);
	free(owner);

	if (o->comment && o->body) {
		char *list = tf_xasprintf("%s/issues/%ld/comments?per_page=100", base.ptr, t->number);
		char *create = tf_xasprintf("%s/issues/%ld/comments", base.ptr, t->number);
		char *update = tf_xasprintf("%s/issues/comments", base.ptr);
		pb_sticky s = { list, create, update, "PATCH", false };
		rc = forbidden(res, pb_sticky_post(res, h, &s, o->body));
		if (rc == TF_ENOTFOUND)
			tf_error_wrap(rc, "pull request #%ld of '%s' (or a token that cannot see it)",
				      t->number, t->repository);
		free(list);
		free(create);
		free(update);
	}
	if (!rc && o->review && o->c && o->changes)
		rc = review_comments(res, h, o, base.ptr);
	tf_buf_free(&base);
	pb_close(h, res);
	return rc;
}
