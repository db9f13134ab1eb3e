/*
 * store.h - where baselines live: one run file per (commit, suite, runner
 * kind), kept in a store chosen by a spec string.
 *
 *   "git"          the repository itself (default): the baseline of commit C
 *                  is the ref refs/testflame/runs/<C>, a commit whose tree
 *                  holds <suite>/<kind>.pb.gz; its parent is the ref's
 *                  previous value, never C, so fetching it is cheap
 *   "git:REMOTE"   the same, with REMOTE (a remote name or URL) as the
 *                  remote for fetch and push instead of "origin"
 *   "dir:PATH"     files PATH/<C>/<suite>/<kind>.pb.gz (CI caches, artifacts)
 *   "pyroscope:URL" the git store (the repository stays the source of
 *                  truth) with Grafana Pyroscope at URL as the
 *                  organisation-wide mirror: every run's per-test profiles
 *                  are pushed there (tf_store_mirror), a baseline git does
 *                  not hold is looked for there (tf_store_find_elsewhere),
 *                  then read with tf_store_get like any other, and the
 *                  report links each regressed test to Grafana's
 *                  comparison (tf_store_links_new)
 *
 * Each kind is a backend behind one table of operations (store_int.h), as
 * curl's TLS backends and git's ref backends are: callers never ask which
 * store they have, only what it can do.
 *
 * Suite and kind names become path components by percent-encoding every
 * byte outside [A-Za-z0-9._+-] (and a leading '.') as %XX, so any name is
 * stored safely and listed back unchanged. A name longer than 200 bytes
 * once encoded keeps its first 120 and gets "~" and a 64-bit FNV-1a hash
 * of the whole name (listed back as the prefix and "...").
 *
 * Writers never clobber each other: a git save re-reads the ref, merges its
 * tree and updates the ref with a compare-and-swap, retrying when another
 * writer won; a push that loses a race fetches the remote's baseline, merges
 * both trees and pushes again. Arguments named `rev` accept anything
 * git_revparse_single() accepts (a full hex id also works for commits the
 * repository does not have). Errors: 0 or a negative TF_E* code with a
 * message in tf_error_last(); tokens never appear in any message.
 */
#ifndef TESTFLAME_STORE_H
#define TESTFLAME_STORE_H

#include "testflame/common.h"
#include "testflame/config.h"
#include "testflame/context.h"
#include "testflame/profile.h"

#define TF_STORE_ID_HEX 40   /* a commit id in hex (SHA-1 repositories) */
#define TF_STORE_REF_PREFIX "refs/testflame/runs/"
#define TF_STORE_DEFAULT_REMOTE "origin"
#define TF_STORE_DEFAULT_DEPTH 1000

typedef struct tf_store tf_store;

typedef enum {
	TF_STORE_SPEC_GIT,
	TF_STORE_SPEC_DIR,
	TF_STORE_SPEC_PYROSCOPE,
} tf_store_spec_kind;

typedef struct {
	tf_store_spec_kind kind;
	/* into the spec: git, the remote (NULL: TF_STORE_DEFAULT_REMOTE);
	 * dir, the path; pyroscope, the server's URL */
	const char *arg;
} tf_store_spec;

/*
 * Check a store spec and split it; NULL or "" means "git". The one check
 * of the spec: tf_store_open() and the config's `store:` use it.
 * TF_EUSAGE, with a message saying what was expected, for a bad one.
 */
int tf_store_spec_parse(tf_store_spec *out, const char *spec);
/* The config's `store:` checked by the same rule, the message at its place
 * in the file ("FILE:LINE:COLUMN: 'store': ..."); 0 when there is none. */
int tf_store_check_config(const tf_config *cfg);

/*
 * Open the store named by `spec` (NULL means "git"). `repo` is a path in
 * (or of) a git repository, NULL for the current directory; the git store
 * requires one, the dir store uses it when present to resolve revisions and
 * walk history.
 */
int tf_store_open(tf_store **out, const char *spec, const char *repo);

/* How a command opens its store (tf_store_open_with). */
typedef struct {
	const char *repo;          /* a path in the repository; NULL: here */
	const char *remote;        /* fetch and push (git): NULL, the spec's, else origin */
	/* the project's settings: Pyroscope's credentials where the
	 * environment gives none, Grafana's URL for the report's links
	 * (may be NULL) */
	const tf_config *cfg;
	/* what a backend says while it works: a mirror's warnings and notes,
	 * -v's request lines (NULL: nothing); never a secret */
	tf_notice_fn notice;
	void *notice_ctx;
} tf_store_open_opts;

/* The same as tf_store_open(), with those; `o->cfg`'s `store:` makes a
 * bad spec's message name its place in the file. */
int tf_store_open_with(tf_store **out, const char *spec, const tf_store_open_opts *o);
void tf_store_free(tf_store *s);
/* For messages: "git store in '/repo/.git/'", "dir store '/abs/path'". */
const char *tf_store_describe(const tf_store *s);
/* Whether baselines are refs in the repository, which fetch and push move
 * (the git store, and Pyroscope's, whose baselines git keeps). */
bool tf_store_is_git(const tf_store *s);
/* Remote for fetch and push (git store): a remote name or URL. */
void tf_store_set_remote(tf_store *s, const char *remote);
/* The remote's URL with any credentials removed (NULL if there is none). */
const char *tf_store_remote_url(tf_store *s);

/* Resolve `rev` to a full commit id. */
int tf_store_rev(char out[TF_STORE_ID_HEX + 1], tf_store *s, const char *rev);
/* The first line of commit `rev`'s message, to free; NULL when the
 * repository does not have it. */
char *tf_store_subject(tf_store *s, const char *rev);

/*
 * The runner kind "<event>-<sampler>-<arch>" (e.g. cpu-clock-perf-x86_64).
 * A NULL or empty `arch` means this machine's (uname). Returns NULL when
 * event or sampler is missing; the caller frees the string.
 */
char *tf_store_kind(const char *event, const char *sampler, const char *arch);

/* Store `data` (a gzip pprof run file) as the baseline of (rev, suite, kind),
 * replacing an earlier file of the same suite and kind. */
int tf_store_save(tf_store *s, const char *rev, const char *suite, const char *kind,
		  const void *data, size_t len);
/* The stored bytes; TF_ENOTFOUND when there is no such baseline. */
int tf_store_get(tf_buf *out, tf_store *s, const char *rev, const char *suite,
		 const char *kind);

typedef struct {
	char *suite, *kind; /* decoded names */
	char *path;         /* where it is in the store (tree path or file) */
	uint64_t size;      /* bytes */
} tf_baseline_file;

typedef struct {
	char commit[TF_STORE_ID_HEX + 1]; /* the source commit */
	int64_t commit_time;  /* its committer time (s); 0 if not in the repository */
	char *subject;        /* its first message line; NULL if not in the repository */
	char record[TF_STORE_ID_HEX + 1]; /* git: the baseline commit; dir: "" */
	int64_t record_time;  /* when the baseline was last written (s) */
	TF_VEC(tf_baseline_file) files;
	/* non-NULL when the baseline cannot be read (corrupt ref or object):
	 * why, without naming the baseline; files is then empty */
	char *problem;
} tf_baseline;

typedef struct {
	TF_VEC(tf_baseline) items;
} tf_baseline_list;

void tf_baseline_clear(tf_baseline *b);
void tf_baseline_list_free(tf_baseline_list *l);

/* Every baseline, newest source commit first (commit time, else record
 * time). Unreadable ones are listed with `problem` set. */
int tf_store_list(tf_baseline_list *out, tf_store *s);
/* One baseline; TF_ENOTFOUND if `rev` has none. */
int tf_store_show(tf_baseline *out, tf_store *s, const char *rev);
/* Keep the `keep` newest baselines (by the order of tf_store_list), delete
 * the rest; `removed` (may be NULL) receives what was deleted. A baseline
 * rewritten while pruning is kept. */
int tf_store_prune(tf_baseline_list *removed, tf_store *s, size_t keep);

typedef struct {
	unsigned max_depth; /* first-parent commits to look at; 0 = TF_STORE_DEFAULT_DEPTH */
	bool fetch;         /* git store: also list the remote's baselines and
			     * fetch, nearest first, those not here until one
			     * holds the suite and kind (a remote's listing
			     * names commits, not what their baselines hold) */
} tf_store_resolve_opts;

typedef struct {
	char commit[TF_STORE_ID_HEX + 1]; /* the commit whose baseline matched */
	unsigned distance;   /* first-parent steps from the start (0 = itself) */
	bool fetched;        /* it came from the remote during this call */
	unsigned walked;     /* commits looked at */
	bool history_ended;  /* the walk reached a root commit or the edge of a
			      * shallow clone before max_depth */
	char remote_error[256]; /* opts->fetch, but the remote could not be
				 * opened (no such remote, unreachable): why;
				 * the walk looked at local baselines only */
	/* Where a baseline from elsewhere came from and how old it is, for the
	 * baseline line (", from Pyroscope, pushed 2 hours ago"); "" for git. */
	char source[96];
	int64_t pushed_ms;   /* Pyroscope: when it was pushed (ms since the epoch) */
} tf_store_match;

/*
 * The nearest commit on the first-parent history of `start_rev` (itself
 * included) that has a baseline for `suite` and `kind`. TF_ENOTFOUND (with
 * `out` still describing the walk) when there is none; any other error
 * (corrupt baseline, a failed fetch) is returned as such. A remote that
 * cannot be opened at all is not an error: see out->remote_error.
 */
int tf_store_resolve(tf_store_match *out, tf_store *s, const char *start_rev,
		     const char *suite, const char *kind,
		     const tf_store_resolve_opts *opts);

/*
 * The nearest commit on the first-parent history of `start_rev` with a
 * baseline of `suite`, whatever its runner kind (before a run has told
 * which kind it is). TF_ENOTFOUND when there is none.
 */
int tf_store_resolve_suite(tf_store_match *out, tf_store *s, const char *start_rev,
			   const char *suite, const tf_store_resolve_opts *opts);

/*
 * The baseline of the nearest commit on the first-parent history of
 * `start_rev` (itself first, TF_STORE_DEFAULT_DEPTH commits at most) that
 * has one here, whatever suites and kinds it holds, and its distance:
 * what is stored near when no baseline matches a run's suite and kind, so
 * that the user can be told which suites exist. TF_ENOTFOUND when none;
 * the caller clears *out with tf_baseline_clear().
 */
int tf_store_nearest(tf_baseline *out, unsigned *distance, tf_store *s, const char *start_rev);

/*
 * When no baseline of `suite` and `kind` was found from `start_rev`: what
 * the nearest stored baseline holds instead, and how to pick it (--suite,
 * `suite:` in .testflame.yml, or the same event and sampler), as one line;
 * NULL when nothing is stored near. The caller frees.
 */
char *tf_store_others(tf_store *s, const char *start_rev, const char *suite, const char *kind);

/* ---- what a backend does beyond keeping baselines ----------------------
 *
 * Pyroscope's backend mirrors every run, finds baselines git does not
 * hold, and links a test to Grafana's comparison of two commits; the git
 * and dir stores do none of it, and say so by TF_ENOTFOUND (a baseline
 * elsewhere), 0 (a mirror: nothing to do) and no links.
 */

/* A run as a store sees it: who made it (the repository, commit, branch,
 * PR and CI of its context) and what it is. */
typedef struct {
	const tf_context *ctx;   /* NULL when looking only (find_elsewhere) */
	const char *suite, *kind;
	/* find_elsewhere: the Pyroscope service the runs were pushed under
	 * (NULL: as a run with `ctx` names it; without one, the remote's name,
	 * else this directory's), and the first-parent commits from start_rev
	 * looked at (0: TF_STORE_DEFAULT_DEPTH; 1: start_rev alone) */
	const char *service;
	unsigned depth;
} tf_store_run;

/*
 * No baseline of r->suite and r->kind is kept near `start_rev`
 * (tf_error_last() says why): look where the backend keeps copies.
 * 0 with `out` filled and the baseline readable with tf_store_get();
 * TF_ENOTFOUND with why in tf_error_last() (for other backends the message
 * is left as it was). A server that fails is a warning (the store's
 * notice) and TF_ENOTFOUND: a mirror never fails a run.
 */
int tf_store_find_elsewhere(tf_store_match *out, tf_store *s, const char *start_rev,
			    const tf_store_run *r);
/*
 * Mirror a run's runs (the caller leaves out those interrupted) where the
 * backend mirrors them; one note says what went where, one warning what failed (the
 * store's notice). 0 also for backends that mirror nothing.
 */
int tf_store_mirror(tf_store *s, const tf_store_run *r, const tf_profile *const *runs, size_t n);

/* Links from a report's tests to a comparison elsewhere (Grafana). */
typedef struct tf_store_links tf_store_links;
/* The links of `r` against `base_commit`; *out NULL when the backend has
 * none or is not configured for them. */
void tf_store_links_new(tf_store_links **out, tf_store *s, const tf_store_run *r,
			const char *base_commit);
/* The link of one test (caller frees); NULL when there is none. */
char *tf_store_link(const tf_store_links *l, const char *test);
/* What a link says: "compare in Grafana". */
const char *tf_store_links_text(const tf_store_links *l);
void tf_store_links_free(tf_store_links *l);

/* ---- run files as profiles (runs.c) ---- */

/* A baseline found for a run, read back as the runs it holds. */
typedef struct {
	tf_store_match match; /* where it was found, how far, whether fetched */
	char *subject;        /* its commit's first line; NULL when unknown */
	tf_profile *stored;   /* the run file as stored */
	tf_profile **runs;    /* it split into runs: one, or N when saved from
			       * `run --repeat N` */
	size_t nruns;
} tf_store_found;

/*
 * The baseline of `suite` and `kind` nearest to `start_rev` on its
 * first-parent history (tf_store_resolve), decoded and split into its
 * runs. TF_ENOTFOUND when there is none (out->match says how far the walk
 * went, and remote_error why the remote was not asked); TF_EINVAL when the
 * baseline found cannot be read (out->match.commit names it).
 */
int tf_store_find_runs(tf_store_found *out, tf_store *s, const char *start_rev, const char *suite,
		       const char *kind, const tf_store_resolve_opts *opts);
/* The same for a baseline found another way (`m`: Pyroscope's). */
int tf_store_read_runs(tf_store_found *out, tf_store *s, const tf_store_match *m,
		       const char *suite, const char *kind);
void tf_store_found_clear(tf_store_found *f);

/*
 * The suite's history before `before`: the run files of up to `max`
 * baselines on the first-parent history of `before`'s parent, newest
 * first, for learning how noisy each test is (tf_compare_history_noise).
 * The history ends at the first commit it cannot read or 50 commits
 * without a baseline (a history is a help, never a failure). Returns how
 * many; the caller frees each profile and the array.
 */
size_t tf_store_history(tf_profile ***out, tf_store *s, const char *before, const char *suite,
			const char *kind, size_t max, const tf_store_resolve_opts *opts);

/* Save `n` runs of one commit as its baseline: one run file, the runs
 * kept apart when there are several (tf_profile_join_runs). */
int tf_store_save_runs(tf_store *s, const char *rev, const char *suite, const char *kind,
		       const tf_profile *const *runs, size_t n);

/* ---- the shards of a suite (shards.c) ----
 *
 * A suite split across CI jobs: each job records shard K of N
 * (`run --shard K/N`, metadata testflame.shard=K/N) and one job merges
 * them into the runs of the whole suite.
 */

#define TF_SHARD_MAX 1000

typedef struct {
	unsigned index, total; /* shard `index` (from 1) of `total` */
} tf_shard;

/* "K/N" with 1 <= K <= N <= TF_SHARD_MAX; TF_EUSAGE saying so otherwise. */
int tf_shard_parse(tf_shard *out, const char *spec);
/* "K/N" into buf; returns buf. */
const char *tf_shard_format(char *buf, size_t size, tf_shard s);

/* One shard's run file, as the merge found it. */
typedef struct {
	const tf_profile *profile; /* borrowed */
	const char *name;          /* the file's name, for messages (borrowed) */
	tf_shard shard;
	int exit_status;           /* its suite's exit status */
	bool interrupted;
	size_t runs;               /* runs it holds (run --shard K/N --repeat R) */
} tf_shard_info;

typedef struct {
	tf_profile **runs;      /* the merged runs: run r holds every shard's run r */
	size_t nruns;           /* the fewest runs a shard holds */
	tf_shard_info *shards;  /* sorted by index */
	size_t nshards;
	unsigned total;
	const char *commit, *suite; /* the shards' (borrowed from them) */
	char *kind;             /* their runner kind (tf_store_kind), NULL if unknown */
} tf_shards_merged;

/*
 * Merge the run files of a sharded suite (borrowed; `names` say where each
 * came from). TF_EUSAGE, with one line naming the files, when they are not
 * every shard of one suite at one commit exactly once: a file without a
 * shard, two commits, suites, runner kinds or splits, a shard doubled or
 * missing, a test recorded by two shards (work that is no test of its own,
 * "[outside tests]", the build, is summed over the shards instead). The
 * merged runs' metadata are the first shard's, with "shards" = N, the
 * counters summed, exit_status the first failing shard's. `out` is to be
 * cleared whatever the result.
 */
int tf_shards_merge(tf_shards_merged *out, const tf_profile *const *files,
		    const char *const *names, size_t n);
void tf_shards_merged_clear(tf_shards_merged *m);

/* dir: store: where shard files of `rev` are kept, PATH/shards/<commit>
 * (caller frees); TF_EUNSUPPORTED for other stores, which keep none. */
int tf_store_shard_dir(char **out, tf_store *s, const char *rev);
/* Keep one shard's run file there, as <suite>/<kind>.shard-K-of-N.pb.gz. */
int tf_store_save_shard(tf_store *s, const char *rev, const char *suite, const char *kind,
			tf_shard shard, const void *data, size_t len);

/* Remote operations (git store only). */
typedef struct {
	char commit[TF_STORE_ID_HEX + 1];
	char oid[TF_STORE_ID_HEX + 1]; /* the remote ref's value */
} tf_remote_baseline;

typedef struct {
	TF_VEC(tf_remote_baseline) items;
} tf_remote_baseline_list;

/* The remote's refs/testflame/runs/ refs, in the remote's order. */
int tf_store_remote_list(tf_remote_baseline_list *out, tf_store *s);

typedef enum {
	TF_SYNC_UP_TO_DATE,   /* the other side already had all of it */
	TF_SYNC_CREATED,      /* the other side had no baseline for the commit */
	TF_SYNC_FAST_FORWARD, /* the other side's baseline was extended */
	TF_SYNC_MERGED,       /* both sides had files: merged, nothing lost */
	TF_SYNC_MISSING,      /* the source side has no baseline for it */
} tf_sync_status;

typedef struct {
	char commit[TF_STORE_ID_HEX + 1];
	tf_sync_status status;
	unsigned attempts;  /* push rounds (more than 1: lost a race, retried) */
	unsigned conflicts; /* files both sides had with different bytes: on
			     * fetch the local one is kept, on push the remote's
			     * (the first one published wins) */
} tf_store_sync;

typedef struct {
	TF_VEC(tf_store_sync) items;
} tf_store_sync_list;

const char *tf_sync_status_name(tf_sync_status st);
void tf_store_sync_list_free(tf_store_sync_list *l);

/* Fetch the remote baselines of `revs` (only those refs) and merge them
 * into the local ones. Missing ones are reported as TF_SYNC_MISSING. */
int tf_store_fetch(tf_store_sync_list *out, tf_store *s, const char *const *revs,
		   size_t n);
/*
 * Fetch the remote's baseline nearest to `start_rev` on its first-parent
 * history, so that a fresh clone knows what CI recorded; `out` gets its
 * commit. TF_ENOTFOUND when the remote has none on that line.
 */
int tf_store_fetch_nearest(char out[TF_STORE_ID_HEX + 1], tf_store *s, const char *start_rev);
/* Push the local baselines of `revs`. Never forced: when the remote has a
 * baseline this one lacks, it is fetched and merged into the local ref
 * (the remote's file wins where both have the same suite and kind), and
 * the merge is pushed; up to 30 rounds when other jobs keep winning. */
int tf_store_push(tf_store_sync_list *out, tf_store *s, const char *const *revs,
		  size_t n);

/* Path components (exposed for tests and reports). `out` gets the encoded
 * name; TF_EINVAL for an empty one. */
int tf_store_encode_name(tf_buf *out, const char *name);
/* The reverse; TF_EINVAL for a malformed %XX or hash suffix. */
int tf_store_decode_name(tf_buf *out, const char *enc, size_t len);

#endif
