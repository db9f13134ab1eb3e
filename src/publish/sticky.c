/*
 * sticky.c - the one comment per suite that later runs edit instead of
 * adding another: list the PR's (MR's) comments page by page, take the
 * first whose body starts with our hidden marker (a comment quoting ours
 * starts with "> " and is left alone), edit it when its text differs, else
 * create it. GitHub and GitLab differ only in URLs, the edit verb and
 * GitLab's system notes, so both publishers use this.
 */
#include "publish/publish_int.h"

#include <stdlib.h>
#include <string.h>

char *pb_json_body(const char *text)
{
	tf_buf b = TF_BUF_INIT;
	tf_buf_puts(&b, "{\"body\":");
	tf_buf_put_json(&b, text);
	tf_buf_putc(&b, '}');
	return tf_buf_detach(&b);
}

bool pb_has_marker(const char *body, const char *marker)
{
	if (!body)
		return false;
	while (*body == ' ' || *body == '\n' || *body == '\r' || *body == '\t')
		body++;
	return strncmp(body, marker, strlen(marker)) == 0;
}

typedef struct {
	const char *marker;
	bool skip_system;
	json_int_t id;
	char *body;
	char *url;
} find_state;

static int find_one(json_t *item, void *payload)
{
	find_state *st = payload;
	json_t *id = json_object_get(item, "id");
	const char *body = json_string_value(json_object_get(item, "body"));
	if (st->skip_system && json_is_true(json_object_get(item, "system")))
		return 0;
	if (!json_is_integer(id) || !pb_has_marker(body, st->marker))
		return 0;
	st->id = json_integer_value(id);
	st->body = tf_xstrdup(body);
	const char *u = json_string_value(json_object_get(item, "html_url"));
	st->url = u ? tf_xstrdup(u) : NULL;
	return 1;
}

/* The marker line of a body, without its line break. */
static char *marker_of(const char *body)
{
	size_t n = strcspn(body, "\n");
	return tf_xstrndup(body, n);
}

int pb_sticky_post(tf_publish_result *res, tf_http *h, const pb_sticky *s, const char *body)
{
	find_state st = { 0 };
	tf_http_response r;
	char *marker = marker_of(body), *json = NULL, *url = NULL;
	const char *method;
	int rc;

	st.marker = marker;
	st.skip_system = s->skip_system;
	rc = tf_http_list_each(h, s->list_url, find_one, &st);
	if (rc)
		goto done;
	json = pb_json_body(body);
	if (st.body && strcmp(st.body, body) == 0) {
		res->comment_unchanged = true;
		res->comment_id = st.id;
		res->comment_url = st.url;
		st.url = NULL;
		goto done;
	}
	if (st.body) {
		method = s->update_method;
		url = tf_xasprintf("%s/%lld", s->update_base, (long long)st.id);
	} else {
		method = "POST";
		url = tf_xstrdup(s->create_url);
	}
	rc = tf_http_request(&r, h, method, url, json);
	if (!rc && r.status != 200 && r.status != 201)
		rc = tf_http_fail(h, &r, tf_http_status_code(r.status), method, url);
	if (!rc) {
		json_t *j = json_loadb(r.body.ptr ? r.body.ptr : "", r.body.len, 0, NULL);
		json_t *id = json_object_get(j, "id");
		const char *u = json_string_value(json_object_get(j, "html_url"));
		res->comment_id = json_is_integer(id) ? json_integer_value(id) : st.id;
		res->comment_url = u ? tf_xstrdup(u) : st.url ? tf_xstrdup(st.url) : NULL;
		if (st.body)
			res->comment_updated = true;
		else
			res->comment_created = true;
		json_decref(j);
	}
	tf_http_response_clear(&r);
done:
	free(marker);
	free(json);
	free(url);
	free(st.body);
	free(st.url);
	return rc;
}
