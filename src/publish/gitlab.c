/*
 * gitlab.c - posting to a GitLab merge request through the notes API
 * (docs.gitlab.com/api/notes, REST v4):
 *
 *   GET  /projects/:id/merge_requests/:iid/notes?sort=asc&order_by=created_at
 *   PUT  /projects/:id/merge_requests/:iid/notes/:note_id   edit ours
 *   POST /projects/:id/merge_requests/:iid/notes            or create it
 *
 * `:id` is the numeric project id when CI gives it (CI_PROJECT_ID), else
 * the URL-encoded path ("group%2Fproject"). The token goes in the
 * PRIVATE-TOKEN header: a personal, group or project access token with the
 * `api` scope. GitLab does not let CI_JOB_TOKEN write notes, which the
 * target says before anything is sent. Line comments on MR diffs are left
 * to Code Quality (codequality.json), which GitLab shows in the diff.
 */
#include "publish/publish_int.h"

#include <stdlib.h>
#include <string.h>

int pb_gitlab_post(tf_publish_result *res, const tf_publish_opts *o)
{
	const tf_publish_target *t = o->target;
	tf_http *h = NULL;
	tf_buf base = TF_BUF_INIT;
	char *auth;
	int rc;

	auth = tf_xasprintf("PRIVATE-TOKEN: %s", t->token);
	rc = pb_open(&h, o, auth, t->token, "application/json", NULL);
	memset(auth, 0, strlen(auth));
	free(auth);
	if (rc)
		return rc;
	tf_buf_puts(&base, "/projects/");
	tf_http_put_segment(&base, t->project_id ? t->project_id : t->repository);
	tf_buf_printf(&base, "/merge_requests/%ld/notes", t->number);

	if (o->comment && o->body) {
		char *list = tf_xasprintf("%s?sort=asc&order_by=created_at&per_page=100", base.ptr);
		pb_sticky s = { list, base.ptr, base.ptr, "PUT", true };
		rc = pb_sticky_post(res, h, &s, o->body);
		if (rc == TF_EPERM) {
			res->forbidden = true;
			char *m = tf_xstrdup(tf_error_last());
			tf_error_set(rc, "%s; the token (%s) needs the 'api' scope and at least the "
				     "Reporter role in the project", m, t->token_var ? t->token_var : "");
			free(m);
		} else if (rc == TF_ENOTFOUND) {
			tf_error_wrap(rc, "merge request !%ld of '%s' (or a token that cannot see it)",
				      t->number, t->repository ? t->repository : t->project_id);
		}
		free(list);
	}
	tf_buf_free(&base);
	pb_close(h, res);
	return rc;
}
