/*
 * publish.h - the results leaving the machine: the sticky PR/MR comment,
 * review comments on the changed lines a regressed function occupies, and
 * the files a CI step hands to the CI system ($GITHUB_OUTPUT,
 * $GITHUB_STEP_SUMMARY). This module is the only one that speaks HTTP to
 * code hosts, over libcurl.
 *
 * Two steps, usable apart:
 *   tf_publish_target_detect()  where and as whom to post, from the CI
 *       environment (tf_ci), the config and the environment's tokens; says
 *       in one line why nothing can be posted (no PR, no token, a fork's
 *       read-only token, GitLab's CI_JOB_TOKEN) instead of failing;
 *   tf_publish_post()  post or edit: one comment per suite found again by
 *       the hidden marker of tf_report_marker() (GitHub: list the PR's
 *       comments, PATCH ours, else POST; GitLab: the MR's notes, PUT, else
 *       POST), then GitHub review comments, each with a marker of its own,
 *       edited in place when the same function regresses on the same line.
 *
 * Requests are retried on 5xx, on network failures and on rate limits
 * (403/429 with Retry-After or an exhausted X-RateLimit-Remaining), with
 * exponential backoff, within a bounded number of attempts and a bounded
 * total wait. Tokens go only to https:// URLs (or http:// on the loopback
 * interface, for tests and proxies on the same machine), never follow a
 * redirect, and never appear in any message: every error string is scrubbed.
 * The engine never prints: it returns results and one-line messages.
 */
#ifndef TESTFLAME_PUBLISH_H
#define TESTFLAME_PUBLISH_H

#include "testflame/common.h"
#include "testflame/compare.h"
#include "testflame/config.h"
#include "testflame/context.h"
#include "testflame/net.h"
#include "testflame/report.h"

typedef enum {
	TF_PUBLISH_NOWHERE = 0,
	TF_PUBLISH_GITHUB,
	TF_PUBLISH_GITLAB,
} tf_publish_host;

/* "github", "gitlab", "nowhere" */
const char *tf_publish_host_name(tf_publish_host h);

typedef struct {
	tf_publish_host host;
	char *api_url;        /* REST base without a trailing slash */
	char *token;          /* NULL when none was found */
	const char *token_var;/* the variable it came from, for messages */
	char *repository;     /* "owner/name"; GitLab "group/.../project" */
	char *project_id;     /* GitLab's numeric id (else the path is used) */
	long number;          /* the PR / MR number; 0 when not a PR build */
	char *commit;         /* the PR's head commit (review comments) */
	/* Why nothing will be posted, one line ("no pull request: ...",
	 * "no token: ..."); NULL when posting can be tried. */
	char *skip;
} tf_publish_target;

/*
 * Where to post, from what CI says (`ci`), the config's publish keys (may be
 * NULL) and `envp` (a NULL-terminated "NAME=VALUE" array, like environ):
 *
 *   GitHub Actions  the PR of the event; API TESTFLAME_GITHUB_API_URL, else
 *                   publish.github_api_url, else GITHUB_API_URL, else
 *                   https://api.github.com; token TESTFLAME_GITHUB_TOKEN,
 *                   GITHUB_TOKEN or GH_TOKEN. A pull_request event from a
 *                   fork gets a read-only token: skipped, with the reason.
 *   GitLab CI       the MR of the pipeline; API TESTFLAME_GITLAB_API_URL,
 *                   publish.gitlab_api_url, CI_API_V4_URL; token
 *                   TESTFLAME_GITLAB_TOKEN or GITLAB_TOKEN (sent as
 *                   PRIVATE-TOKEN). CI_JOB_TOKEN cannot post notes: skipped,
 *                   with what to set instead.
 *   CircleCI        the GitHub PR named by CIRCLE_PULL_REQUEST (its owner,
 *                   repository and number), when a GitHub token is set; the
 *                   API of the PR's host (api.github.com, else HOST/api/v3).
 *
 * Never fails for a missing piece: `skip` says what is missing. Returns
 * TF_EUSAGE only for a malformed API URL given by the user.
 */
int tf_publish_target_detect(tf_publish_target *out, const tf_ci *ci, const tf_config *cfg,
			     char *const *envp);
void tf_publish_target_clear(tf_publish_target *t);

typedef struct {
	const tf_publish_target *target;
	const char *suite;          /* the marker's suite name */
	const char *body;           /* the comment: report.md (starts with the marker) */
	bool comment;               /* post or edit the sticky comment */
	bool review;                /* GitHub: review comments on changed lines */
	const tf_comparison *c;     /* for review comments (NULL: none) */
	const tf_report_opts *report; /* wording and paths of review comments */
	const tf_changes *changes;  /* the PR's changed lines (NULL: no review comments) */
	size_t review_max;          /* review comments at most (default 10) */

	/* retries, timeouts, -v's log of requests, the network itself (net.h;
	 * the name is the host's API, set here) */
	tf_http_opts http;
} tf_publish_opts;

void tf_publish_opts_init(tf_publish_opts *o);

typedef struct {
	/* the sticky comment */
	bool comment_created, comment_updated, comment_unchanged;
	long long comment_id;
	char *comment_url;          /* its web page, when the host says */
	/* review comments */
	size_t review_targets;      /* functions on a changed line */
	size_t review_created, review_updated, review_unchanged;
	size_t review_refused;      /* the host refused the line (422: not in the diff) */
	size_t review_elsewhere;    /* regressed functions on no changed line: main comment only */
	unsigned requests, retries;
	/* one line each: what was not done and why (a refused review comment, a
	 * missing head commit); the call still succeeded */
	tf_msglist notes;
	/* The token cannot write here (403 on posting): a fork PR or missing
	 * permissions; the call returns TF_EPERM and the error says which. */
	bool forbidden;
} tf_publish_result;

/*
 * Post or edit. 0 when everything that was asked for is done (refused review
 * comments are notes, not errors); TF_EPERM when the token may not post;
 * TF_ENOTFOUND for an unknown PR / MR; TF_ERROR for other API and network
 * failures, with the status and the host's message. `out` is filled as far
 * as it got in every case; clear it with tf_publish_result_clear().
 */
int tf_publish_post(tf_publish_result *out, const tf_publish_opts *o);
void tf_publish_result_clear(tf_publish_result *r);

/* ---- review comments: which lines --------------------------------------- */

typedef struct {
	size_t test, func;          /* indices: c->tests[test].functions[func] */
} tf_review_ref;

typedef struct {
	char *path;                 /* repository-relative, as the diff names it */
	uint32_t line;              /* the line commented on */
	uint32_t start_line;        /* first line of a multi-line comment, else == line */
	char *key;                  /* stable across runs: suite, function and file */
	double growth;              /* self growth summed over its tests (ordering) */
	TF_VEC(tf_review_ref) refs; /* the regressed tests the function grew in */
} tf_review_target;

typedef struct {
	TF_VEC(tf_review_target) items;
	size_t elsewhere;           /* grown functions on no changed line */
} tf_review_targets;

/*
 * The review comments a comparison calls for: every function whose self
 * cost grew in a regressed test, whose file changed and whose lines (from its
 * first line to the last line sampled in the head runs) hold changed lines
 * of `changes`. The comment goes on the changed range holding the
 * function's line of change, else on the changed range nearest to it.
 * Functions match the changes by path (tf_changes_find: absolute paths
 * from debug info match by their repository-relative tail). One target per
 * function and file, biggest growth first, at most `max` (0: no limit).
 */
int tf_publish_review_targets(tf_review_targets *out, const tf_comparison *c,
			      const tf_changes *changes, const char *suite, size_t max);
void tf_review_targets_clear(tf_review_targets *t);

/* The marker a review comment starts with:
 * "<!-- testflame:review suite=SUITE key=KEY -->" (suite percent-encoded). */
void tf_publish_review_marker(tf_buf *out, const char *suite, const char *key);

/* ---- files for the CI system -------------------------------------------- */

/*
 * Append NAME=VALUE outputs to a GitHub Actions file command ($GITHUB_OUTPUT,
 * $GITHUB_ENV): a value with a line break is written with a random heredoc
 * delimiter, as the runner expects. Names must be [A-Za-z0-9_-]+.
 */
int tf_publish_github_output(const char *path, const char *const *names,
			     const char *const *values, size_t n);
/* Append `len` bytes to `path` (the step summary), creating it if needed. */
int tf_publish_append(const char *path, const void *data, size_t len);

#endif
