/*
 * store_int.h - what the store's files share: the backend table behind
 * tf_store, baseline refs and the tree merge over libgit2 (whose
 * boundary is testflame/git.h) and the remote layer. libgit2 stays behind
 * these headers; the public store.h speaks only in hex ids and bytes.
 */
#ifndef TESTFLAME_STORE_INT_H
#define TESTFLAME_STORE_INT_H

#include "testflame/git.h"
#include "testflame/store.h"

typedef struct {
	const char *name;
	int (*save)(tf_store *s, const char *commit, const char *suite_enc,
		    const char *file_enc, const void *data, size_t len);
	/* TF_ENOTFOUND when absent */
	int (*get)(tf_buf *out, tf_store *s, const char *commit, const char *suite_enc,
		   const char *file_enc);
	/* Unsorted; the caller sorts. */
	int (*list)(tf_baseline_list *out, tf_store *s);
	int (*show)(tf_baseline *out, tf_store *s, const char *commit);
	/* Delete one baseline if it is still as listed; TF_ECONFLICT if not. */
	int (*remove)(tf_store *s, const tf_baseline *b);
} tf_store_backend;

struct tf_store {
	const tf_store_backend *be;
	char *desc;
	git_repository *repo; /* NULL: dir store outside a repository */
	char *repo_error;     /* why repo is NULL */
	char *dir;            /* dir store: absolute path */
	char *remote;         /* git store: remote name or URL */
	char *remote_url;     /* scrubbed, filled by tf_store_remote_url() */
	tf_pyroscope *pyro;   /* "pyroscope:URL": the mirror beside git */
	char *pyro_key;       /* "commit\x1fsuite\x1fkind" of pyro_bytes */
	tf_buf pyro_bytes;    /* the run file tf_store_resolve_pyroscope() fetched */
};

extern const tf_store_backend tf_store_git_backend;
extern const tf_store_backend tf_store_dir_backend;

/* Maximum length of an encoded path component (file systems allow 255);
 * longer names keep a prefix of TF_STORE_NAME_PREFIX bytes and a hash. */
#define TF_STORE_NAME_MAX 200
#define TF_STORE_NAME_PREFIX 120
#define TF_STORE_FILE_SUFFIX ".pb.gz"

/* ---- baseline refs (refs.c, over the libgit2 boundary of testflame/git.h) ---- */

/* The ref name of a commit's baseline (caller frees). */
char *tf_git_ref_name(const git_oid *commit);
/* The baseline ref's value: 0, TF_ENOTFOUND, or an error (corrupt ref). */
int tf_git_ref_get(git_oid *out, git_repository *repo, const char *refname);
/*
 * Compare-and-swap of a ref: set `refname` to `id` if it still holds
 * `expected` (NULL: if it does not exist). TF_ECONFLICT when another writer
 * got there first (value changed, or the ref is locked).
 */
int tf_git_ref_cas(git_repository *repo, const char *refname, const git_oid *id,
		   const git_oid *expected, const char *why);
/* Remove the lock of `refname` if a killed writer left it (older than a
 * writer ever holds one); true if it did (lockfile.c). */
bool tf_git_unlock_stale(git_repository *repo, const char *refname);
/* The error after `attempts` lost races for `refname`: names a stale lock
 * file when there is one. Returns TF_ECONFLICT. */
int tf_git_gave_up(git_repository *repo, const char *refname, unsigned attempts);
/* The identity baseline commits are written with. */
int tf_git_signature(git_signature **out);
/* Sleep a little before retrying a lost race (randomised, growing). */
void tf_store_backoff(unsigned attempt);

/* ---- a watchdog over network calls (netwatch.c) ---- */

/* Around a libgit2 call that talks to a remote: it fails (EINTR) after
 * tf_netwatch_seconds() without progress; tf_netwatch_expired() then says
 * so. The callbacks reset the clock on progress. */
void tf_netwatch_begin(void);
void tf_netwatch_end(void);
bool tf_netwatch_expired(void);
unsigned tf_netwatch_seconds(void);
void tf_netwatch_callbacks(git_remote_callbacks *cb);

/* ---- trees (tree.c) ---- */

/* The tree of `base` (may be NULL: empty) with `path` set to blob `blob`. */
int tf_tree_set(git_oid *out, git_repository *repo, const git_oid *base,
		const char *path, const git_oid *blob);
/*
 * Union of two trees, recursively; where both have a file (or a file and a
 * directory) of the same name with different content, the one of `ours` is
 * kept unless `prefer_theirs`. `conflicts` counts those (may be NULL).
 */
int tf_tree_merge(git_oid *out, git_repository *repo, const git_oid *ours,
		  const git_oid *theirs, bool prefer_theirs, unsigned *conflicts);
/* A baseline commit for `commit` with `tree` and parents; `what` goes into
 * the message. */
int tf_git_commit_baseline(git_oid *out, git_repository *repo, const git_oid *commit,
			   const git_oid *tree, const git_oid *const *parents,
			   size_t nparents, const char *what);
/* The tree of baseline commit `id`. */
int tf_git_commit_tree(git_oid *out, git_repository *repo, const git_oid *id);
/*
 * Merge the baseline `theirs` into the local ref of `commit`: create it,
 * fast-forward it, or make a merge commit (compare-and-swap, retried).
 * `status` says which; `conflicts` as for tf_tree_merge().
 */
int tf_git_integrate(tf_sync_status *status, unsigned *conflicts, git_repository *repo,
		     const git_oid *commit, const git_oid *theirs, bool prefer_theirs);

/* ---- Pyroscope (pyroscope.c) ---- */

/* The baseline tf_store_resolve_pyroscope() fetched for (commit, suite,
 * kind), copied into `out` (may be NULL); TF_ENOTFOUND for any other. */
int tf_store_pyroscope_get(tf_buf *out, tf_store *s, const char *commit, const char *suite,
			   const char *kind);

/* ---- remotes (remote.c) ---- */

/*
 * A conversation with the store's remote, for resolve: open it (this lists
 * the remote's baseline refs once), ask whether the remote has a baseline
 * for a commit that differs from the local one, fetch it (only that ref)
 * and merge it into the local ref.
 */
typedef struct tf_remote_session tf_remote_session;
int tf_remote_session_open(tf_remote_session **out, tf_store *s);
void tf_remote_session_free(tf_remote_session *rs);
bool tf_remote_session_has(tf_remote_session *rs, const git_oid *commit);
int tf_remote_session_fetch(tf_remote_session *rs, const git_oid *commit);

#endif
