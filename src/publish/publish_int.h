/*
 * publish_int.h - what the publishers share behind publish.h: the sticky
 * comment, the JSON bodies they post, and the per-host posting functions.
 * They speak HTTP through the net module's session (testflame/net.h).
 */
#ifndef TESTFLAME_PUBLISH_INT_H
#define TESTFLAME_PUBLISH_INT_H

#include "testflame/net.h"
#include "testflame/publish.h"

#include <jansson.h>

/* A session with the host's API for `o->target`, on the publisher's
 * options (retries, -v's log, the fuzzers' exchange in place of HTTP). */
int pb_open(tf_http **out, const tf_publish_opts *o, const char *auth_header, const char *secret,
	    const char *accept, const char *extra_header);
/* Close it, adding its requests and retries to `res`'s. */
void pb_close(tf_http *h, tf_publish_result *res);

/* A request body {"body": text}; caller frees. */
char *pb_json_body(const char *text);

/* Whether `body` starts with `marker` (after leading whitespace). */
bool pb_has_marker(const char *body, const char *marker);

/* A sticky comment's URLs (paths under the API base). */
typedef struct {
	const char *list_url;      /* GET: the PR's / MR's comments, first page */
	const char *create_url;    /* POST */
	const char *update_base;   /* + "/<id>" */
	const char *update_method; /* PATCH (GitHub), PUT (GitLab) */
	bool skip_system;          /* GitLab's system notes are never ours */
} pb_sticky;

/* Find our comment by the marker on `body`'s first line; edit or create. */
int pb_sticky_post(tf_publish_result *res, tf_http *h, const pb_sticky *s, const char *body);

int pb_github_post(tf_publish_result *res, const tf_publish_opts *o);
int pb_gitlab_post(tf_publish_result *res, const tf_publish_opts *o);

#endif
