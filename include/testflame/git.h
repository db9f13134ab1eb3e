/*
 * git.h - libgit2 at the boundary: the one place its errors become ours
 * (credentials scrubbed out of every message), repositories are opened,
 * revisions parsed and first-parent history walked. The store and the
 * context (context/git.c) are the two modules that use libgit2; both go
 * through this for what they share, so the two cannot drift apart again.
 */
#ifndef TESTFLAME_GIT_H
#define TESTFLAME_GIT_H

#include "testflame/common.h"

#include <git2.h>

/* Set libgit2 up, once per process, and leave it up: every init after a
 * full shutdown reloads its TLS certificates, which costs more than the
 * rest of a command's start. */
void tf_git_init(void);

/* TF_* code for a libgit2 error code. */
int tf_git_code(int gitrc);
/*
 * Set the message "<fmt>: <libgit2's last message>", on one line, without
 * a full stop and with credentials scrubbed (both parts), and return
 * `code`, or the code matching `gitrc` when `code` is 0.
 */
int tf_git_error(int gitrc, int code, const char *fmt, ...) TF_PRINTF(3, 4);
/* A copy of `msg` without credentials: the user-info of every URL and the
 * value of every token variable become "***" (caller frees). */
char *tf_git_scrub(const char *msg);

/*
 * Open the repository containing `path` (NULL: the current directory),
 * searching upwards like git. TF_ENOTFOUND outside a repository; TF_EPERM
 * for a repository owned by someone else (the message names the
 * safe.directory fix).
 */
int tf_git_open(git_repository **out, const char *path);

/* Parse a 40-hex id; false if `hex` is not one. */
bool tf_git_parse_id(git_oid *out, const char *hex);
void tf_git_id_hex(char out[GIT_OID_HEXSZ + 1], const git_oid *id);
/* Resolve a revision to a commit id; a full hex id is taken as is, even
 * for a commit this clone lacks (a baseline fetched without its commit). */
int tf_git_rev(git_oid *out, git_repository *repo, const char *rev);

/* Why a first-parent walk ended. */
typedef enum {
	TF_GIT_WALK_STOPPED, /* the callback said so */
	TF_GIT_WALK_MAX,     /* it looked at `max` commits */
	TF_GIT_WALK_ROOT,    /* it reached a commit without parents */
	TF_GIT_WALK_SHALLOW, /* the next parent is not here: a shallow clone's edge */
} tf_git_walk_end;

/* 0 to go on, > 0 to stop (the walk returns 0), < 0 to abort (the walk
 * returns that). */
typedef int (*tf_git_walk_fn)(const git_oid *commit, unsigned distance, void *payload);

/*
 * Walk the first-parent history from `start` (itself first, distance 0),
 * looking at `max` commits at most (0: no limit). TF_ENOTFOUND when
 * `start` is not in the repository; `end` (may be NULL) says why the walk
 * stopped.
 */
int tf_git_walk_first_parent(git_repository *repo, const git_oid *start, unsigned max,
			     tf_git_walk_fn fn, void *payload, tf_git_walk_end *end);

#endif
