/*
 * publish_priv.h - what the publishers share behind publish.h: a small
 * JSON-over-HTTPS client on libcurl (authentication header, retries with
 * backoff, pagination headers, token scrubbing), and the per-host posting
 * functions.
 */
#ifndef TESTFLAME_PUBLISH_PRIV_H
#define TESTFLAME_PUBLISH_PRIV_H

#include "testflame/publish.h"

#include <jansson.h>

typedef struct {
	long status;           /* HTTP status; 0 when no response arrived */
	tf_buf body;
	char *link_next;       /* Link: <...>; rel="next" */
	char *next_page;       /* GitLab's X-Next-Page */
	char *retry_after, *rl_remaining, *rl_reset;
	char *location;
} pb_response;

typedef struct pb_http pb_http;

/*
 * A session against one API base URL. `auth_header` (e.g. "Authorization:
 * Bearer T") carries `secret`, which is scrubbed from every message.
 * `accept` and `extra_header` (may be NULL) are sent with every request.
 * TF_EUSAGE when there is an `auth_header` and the URL is not https (or
 * http on loopback).
 */
int pb_http_open(pb_http **out, const char *api_url, const char *auth_header,
		 const char *secret, const char *accept, const char *extra_header,
		 const tf_publish_opts *o, tf_publish_result *res);
void pb_http_free(pb_http *h);
/* The name messages give the API ("Pyroscope"); `name` must outlive `h`. */
void pb_http_set_name(pb_http *h, const char *name);
/*
 * One more header for every request. With `secret` (the credential inside
 * the header), the session must be https or loopback http (TF_EUSAGE
 * otherwise) and `secret` is scrubbed from every message like the token.
 * A NULL header only adds `secret` to what is scrubbed (a value that is
 * not a credential but must not be printed, or a part of one).
 */
int pb_http_add_header(pb_http *h, const char *header, const char *secret);

/*
 * One request, retried as tf_publish_retry_delay() says. `url` is absolute
 * or a path under the API base ("/repos/o/r/..."); `json` is the body (NULL:
 * none). 0 when a response arrived (any status: the caller decides), else
 * the transport error with a scrubbed message.
 */
int pb_request(pb_response *out, pb_http *h, const char *method, const char *url,
	       const char *json);
/* The same with any body: `len` bytes of type `content_type`. */
int pb_request_body(pb_response *out, pb_http *h, const char *method, const char *url,
		    const void *body, size_t len, const char *content_type);
void pb_response_clear(pb_response *r);
/* Whether an absolute URL (a pagination link) points at this API's host. */
bool pb_same_origin(pb_http *h, const char *url);

/*
 * The error for a response that is not a success: "HOST API: METHOD PATH:
 * STATUS REASON: message (details)" from the JSON body's "message" /
 * "error" / "errors", scrubbed; returns `code`.
 */
int pb_fail(pb_http *h, const pb_response *r, int code, const char *method, const char *url);
/* The API's name for messages: "GitHub API", "GitLab API". */
const char *pb_http_name(const pb_http *h);

/* Percent-encode one path segment (everything but unreserved characters). */
void pb_put_segment(tf_buf *b, const char *s);
/* Set the error: one printable line with the session's secrets scrubbed
 * (what it quotes may come from the server: a URL, a body). Returns code. */
int pb_error(pb_http *h, int code, const char *fmt, ...) TF_PRINTF(3, 4);
/* Parse a JSON body; NULL (with an error set) when it is not JSON. */
json_t *pb_json(pb_http *h, const pb_response *r, const char *what);
/* A request body {"body": text}; caller frees. */
char *pb_json_body(const char *text);

/* Whether `body` starts with `marker` (after leading whitespace). */
bool pb_has_marker(const char *body, const char *marker);

/* HTTP status -> TF_EPERM (403), TF_ENOTFOUND (404, 410), TF_ERROR. */
int pb_status_code(long status);

/*
 * Walk a paginated JSON list from `first`: `fn` sees each object item and
 * returns 0 to go on, 1 to stop, < 0 to fail with that code.
 */
typedef int (*pb_item_fn)(json_t *item, void *payload);
int pb_list_each(pb_http *h, const char *first, pb_item_fn fn, void *payload);

/* A sticky comment's URLs (paths under the API base). */
typedef struct {
	const char *list_url;      /* GET: the PR's / MR's comments, first page */
	const char *create_url;    /* POST */
	const char *update_base;   /* + "/<id>" */
	const char *update_method; /* PATCH (GitHub), PUT (GitLab) */
	bool skip_system;          /* GitLab's system notes are never ours */
} pb_sticky;

/* Find our comment by the marker on `body`'s first line; edit or create. */
int pb_sticky_post(tf_publish_result *res, pb_http *h, const pb_sticky *s, const char *body);

int pb_github_post(tf_publish_result *res, const tf_publish_opts *o);
int pb_gitlab_post(tf_publish_result *res, const tf_publish_opts *o);

#endif
