/*
 * sticky.c - the one comment per suite that later runs edit instead of
 * adding another: list the PR's (MR's) comments page by page, take the
 * first whose body starts with our hidden marker (a comment quoting ours
 * starts with "> " and is left alone), edit it when its text differs, else
 * create it. GitHub and GitLab differ only in URLs, the edit verb and
 * GitLab's system notes, so both publishers use this.
 */
#include "publish/publish_priv.h"

#include <stdlib.h>
#include <string.h>

#define MAX_PAGES 200

/* The next page of a listing: the Link header's rel="next" (both hosts
 * send it), else GitLab's X-Next-Page on the first page's URL. *out is
 * NULL on the last page. */
static int next_url(char **out, pb_http *h, const pb_response *r, const char *first)
{
	*out = NULL;
	if (r->link_next) {
		if (!pb_same_origin(h, r->link_next))
			return pb_error(h, TF_ERROR, "%s: the next page '%s' is on another host; "
					    "not following it", pb_http_name(h), r->link_next);
		*out = tf_xstrdup(r->link_next);
	} else if (r->next_page && *r->next_page) {
		long page = strtol(r->next_page, NULL, 10);
		if (page > 1)
			*out = tf_xasprintf("%s%spage=%ld", first, strchr(first, '?') ? "&" : "?", page);
	}
	return 0;
}

int pb_list_each(pb_http *h, const char *first, pb_item_fn fn, void *payload)
{
	char *url = tf_xstrdup(first);
	int rc = 0;

	for (unsigned page = 0; url && page < MAX_PAGES; page++) {
		pb_response r;
		json_t *j;
		size_t i;
		json_t *item;
		int stop = 0;

		rc = pb_request(&r, h, "GET", url, NULL);
		if (rc) {
			pb_response_clear(&r);
			break;
		}
		if (r.status != 200) {
			rc = pb_fail(h, &r, pb_status_code(r.status), "GET", url);
			pb_response_clear(&r);
			break;
		}
		j = pb_json(h, &r, url);
		if (!j || !json_is_array(j)) {
			if (j)
				pb_error(h, TF_ERROR, "%s: GET %s: the reply is not a list", pb_http_name(h), url);
			rc = TF_ERROR;
			json_decref(j);
			pb_response_clear(&r);
			break;
		}
		json_array_foreach(j, i, item) {
			if (json_is_object(item) && (stop = fn(item, payload)) != 0)
				break;
		}
		json_decref(j);
		free(url);
		url = NULL;
		if (stop < 0)
			rc = stop;
		else if (!stop)
			rc = next_url(&url, h, &r, first);
		pb_response_clear(&r);
		if (rc)
			break;
	}
	free(url);
	return rc;
}

int pb_status_code(long status)
{
	/* 401 is a bad or expired token: an error to fix; 403 is a token that
	 * may not do this, which a fork's read-only token meets */
	if (status == 403)
		return TF_EPERM;
	if (status == 404 || status == 410)
		return TF_ENOTFOUND;
	return TF_ERROR;
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

int pb_sticky_post(tf_publish_result *res, pb_http *h, const pb_sticky *s, const char *body)
{
	find_state st = { 0 };
	pb_response r;
	char *marker = marker_of(body), *json = NULL, *url = NULL;
	const char *method;
	int rc;

	st.marker = marker;
	st.skip_system = s->skip_system;
	rc = pb_list_each(h, s->list_url, find_one, &st);
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
	rc = pb_request(&r, h, method, url, json);
	if (!rc && r.status != 200 && r.status != 201)
		rc = pb_fail(h, &r, pb_status_code(r.status), method, url);
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
	pb_response_clear(&r);
done:
	free(marker);
	free(json);
	free(url);
	free(st.body);
	free(st.url);
	return rc;
}
