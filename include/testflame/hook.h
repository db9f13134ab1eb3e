/*
 * hook.h - the pre-push hook: the script `testflame hook install` puts in
 * the repository's hooks directory, installing it without clobbering a hook
 * that is already there (it is kept and chained: run first, with the same
 * arguments and standard input), taking it out again, and reading what git
 * tells a pre-push hook on standard input.
 *
 * The script only hands over to `testflame hook run pre-push REMOTE URL`,
 * which profiles the quick suite with `testflame run`; all decisions are
 * made there, in C, so that the hook file itself never needs upgrading.
 */
#ifndef TESTFLAME_HOOK_H
#define TESTFLAME_HOOK_H

#include "testflame/common.h"

/* The line that marks a hook file as testflame's. */
#define TF_HOOK_MARKER "# testflame-hook: pre-push"
/* Where an existing hook goes when ours is chained in front of it. */
#define TF_HOOK_CHAINED_FILE "pre-push.testflame-chained"

/* The hook script; `testflame` is the binary to call (an absolute path,
 * with `testflame` from PATH as the fallback when it has gone). */
void tf_hook_script(tf_buf *out, const char *testflame);

/* Whether the file at `path` is a testflame hook. */
bool tf_hook_is_ours(const char *path);

typedef enum {
	TF_HOOK_INSTALLED,  /* there was no pre-push hook */
	TF_HOOK_UPDATED,    /* ours was there: rewritten */
	TF_HOOK_CHAINED,    /* another hook was there: kept as TF_HOOK_CHAINED_FILE, run first */
} tf_hook_action;

/*
 * Install the hook as `hooks_dir`/pre-push (the directory is created). A
 * pre-push hook that is not ours is refused with TF_EEXISTS (the message
 * says how to chain it) unless `chain`, which renames it to
 * TF_HOOK_CHAINED_FILE; a chained hook already there is never overwritten.
 */
int tf_hook_install(tf_hook_action *out, const char *hooks_dir, const char *testflame, bool chain);

/*
 * Remove our hook and put a chained hook back as pre-push (*restored).
 * TF_ENOTFOUND when there is no pre-push hook; TF_EEXISTS when the hook
 * there is not ours (left alone).
 */
int tf_hook_uninstall(bool *restored, const char *hooks_dir);

/* One line git writes to a pre-push hook's standard input. */
typedef struct {
	char *local_ref, *local_sha, *remote_ref, *remote_sha;
} tf_push_ref;

typedef struct {
	TF_VEC(tf_push_ref) items;
} tf_push_refs;

/* Parse "<local ref> SP <local sha> SP <remote ref> SP <remote sha> LF"
 * lines; TF_EINVAL names a malformed line. */
int tf_hook_parse_push(tf_push_refs *out, const char *text);
void tf_push_refs_clear(tf_push_refs *r);
/* An all-zero sha: a ref that is deleted (local) or new (remote). */
bool tf_hook_null_sha(const char *sha);

#endif
