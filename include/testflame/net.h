/*
 * net.h - the HTTP client on libcurl, the one owner of libcurl: a session
 * against one API base URL, an authentication header that only ever goes
 * to that origin over https (or http on loopback), retries with backoff
 * inside bounds, and messages with every secret scrubbed out. The
 * publishers (GitHub, GitLab) speak JSON through it, the store's Pyroscope
 * backend protobuf and pprof; each keeps its own options and results, and
 * hands the session only these.
 */
#ifndef TESTFLAME_NET_H
#define TESTFLAME_NET_H

#include "testflame/common.h"

#include <jansson.h>

typedef void (*tf_http_sleep_fn)(double seconds, void *payload);
typedef void (*tf_http_log_fn)(const char *line, void *payload);
/*
 * In place of the network (the fuzz targets: millions of exchanges, where
 * a TCP connection each would be most of the time): the whole response to
 * one request, as a server sends it ("HTTP/1.1 STATUS ...", header lines,
 * an empty line, the body; 1xx responses before it), appended to `out`,
 * framed already (the body is what follows the head). Nothing appended:
 * the connection closed without an answer. What testflame reads of a
 * response goes through the same code as with libcurl.
 */
typedef void (*tf_http_exchange_fn)(const char *method, const char *url, const void *body,
				    size_t len, tf_buf *out, void *payload);

typedef struct {
	const char *name;           /* the API in messages ("GitHub API"); must outlive the session */
	unsigned max_attempts;      /* per request (default 5) */
	double max_wait;            /* seconds of waiting for retries in all (default 120) */
	double timeout;             /* seconds per request (default 60) */
	tf_http_sleep_fn sleep;     /* NULL: nanosleep */
	tf_http_log_fn log;         /* one line per request and retry (-v); never a secret */
	tf_http_exchange_fn exchange; /* NULL: HTTP with libcurl */
	void *payload;
} tf_http_opts;

void tf_http_opts_init(tf_http_opts *o);

typedef struct {
	long status;           /* HTTP status; 0 when no response arrived */
	tf_buf body;
	char *link_next;       /* Link: <...>; rel="next" */
	char *next_page;       /* GitLab's X-Next-Page */
	char *retry_after, *rl_remaining, *rl_reset;
	char *location;
} tf_http_response;

typedef struct tf_http tf_http;

/*
 * A session against one API base URL. `auth_header` (e.g. "Authorization:
 * Bearer T") carries `secret`, which is scrubbed from every message.
 * `accept` and `extra_header` (may be NULL) are sent with every request.
 * TF_EUSAGE when there is an `auth_header` and the URL is not https (or
 * http on loopback). The options are copied.
 */
int tf_http_open(tf_http **out, const char *api_url, const char *auth_header,
		 const char *secret, const char *accept, const char *extra_header,
		 const tf_http_opts *o);
void tf_http_free(tf_http *h);
/* The API's name for messages: "GitHub API", "Pyroscope". */
const char *tf_http_name(const tf_http *h);
/* Requests sent and retries made so far in this session. */
void tf_http_counts(const tf_http *h, unsigned *requests, unsigned *retries);
/*
 * One more header for every request. With `secret` (the credential inside
 * the header), the session must be https or loopback http (TF_EUSAGE
 * otherwise) and `secret` is scrubbed from every message like the token.
 * A NULL header only adds `secret` to what is scrubbed (a value that is
 * not a credential but must not be printed, or a part of one).
 */
int tf_http_add_header(tf_http *h, const char *header, const char *secret);

/*
 * One request, retried as tf_http_retry_delay() says. `url` is absolute or
 * a path under the API base ("/repos/o/r/..."); `json` is the body (NULL:
 * none). 0 when a response arrived (any status: the caller decides), else
 * the transport error with a scrubbed message.
 */
int tf_http_request(tf_http_response *out, tf_http *h, const char *method, const char *url,
		    const char *json);
/* The same with any body: `len` bytes of type `content_type`. */
int tf_http_request_body(tf_http_response *out, tf_http *h, const char *method,
			 const char *url, const void *body, size_t len, const char *content_type);
void tf_http_response_clear(tf_http_response *r);
/* Whether an absolute URL (a pagination link) points at this API's host. */
bool tf_http_same_origin(tf_http *h, const char *url);

/*
 * The error for a response that is not a success: "HOST API: METHOD PATH:
 * STATUS REASON: message (details)" from the JSON body's "message" /
 * "error" / "errors", scrubbed; returns `code`.
 */
int tf_http_fail(tf_http *h, const tf_http_response *r, int code, const char *method,
		 const char *url);
/* Set the error: one printable line with the session's secrets scrubbed
 * (what it quotes may come from the server: a URL, a body). Returns code. */
int tf_http_error(tf_http *h, int code, const char *fmt, ...) TF_PRINTF(3, 4);
/* Parse a JSON body; NULL (with an error set) when it is not JSON. */
json_t *tf_http_json(tf_http *h, const tf_http_response *r, const char *what);
/* HTTP status -> TF_EPERM (403), TF_ENOTFOUND (404, 410), TF_ERROR. */
int tf_http_status_code(long status);

/*
 * Walk a paginated JSON list from `first`: `fn` sees each object item and
 * returns 0 to go on, 1 to stop, < 0 to fail with that code.
 */
typedef int (*tf_http_item_fn)(json_t *item, void *payload);
int tf_http_list_each(tf_http *h, const char *first, tf_http_item_fn fn, void *payload);

/* Percent-encode one path segment (everything but unreserved characters). */
void tf_http_put_segment(tf_buf *b, const char *s);

/* ---- helpers exposed for tests ----------------------------------------- */

/* Replace every occurrence of `secret` (when at least 4 bytes) in `s` with
 * "***", in place. */
void tf_http_scrub(char *s, const char *secret);
/*
 * Seconds to wait before retrying a response with HTTP `status` (0: no
 * response, a network failure) at attempt `attempt` (1 for the first
 * retry), given the Retry-After, X-RateLimit-Remaining and X-RateLimit-Reset
 * headers (NULL when absent) and the time now; < 0 when the request must
 * not be retried.
 */
double tf_http_retry_delay(long status, const char *retry_after, const char *rl_remaining,
			   const char *rl_reset, unsigned attempt, int64_t now);
/* The URL of rel="next" in a Link header, or NULL (caller frees). */
char *tf_http_link_next(const char *link);

#endif
