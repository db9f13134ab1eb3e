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

typedef struct tf_pyroscope tf_pyroscope; /* pyroscope.c, below */

typedef struct {
	const char *name;
	bool git;     /* baselines are refs in the repository (fetch, push) */
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
	/* What a backend does beyond keeping baselines (store.h); NULL when
	 * it does not. A baseline found elsewhere is what get() then reads. */
	int (*find_elsewhere)(tf_store_match *out, tf_store *s, const char *start_rev,
			      const tf_store_run *r);
	int (*mirror)(tf_store *s, const tf_store_run *r, const tf_profile *const *runs,
		      size_t n);
	void (*links)(tf_store_links **out, tf_store *s, const tf_store_run *r,
		      const char *base_commit);
} tf_store_backend;

struct tf_store {
	const tf_store_backend *be;
	char *desc;
	git_repository *repo; /* NULL: dir store outside a repository */
	char *repo_error;     /* why repo is NULL */
	char *dir;            /* dir store: absolute path */
	char *remote;         /* git store: remote name or URL */
	char *remote_url;     /* scrubbed, filled by tf_store_remote_url() */
	tf_notice_fn notice;  /* tf_store_open_opts' */
	void *notice_ctx;
	tf_pyroscope *pyro;   /* "pyroscope:URL": the mirror beside git */
	char *pyro_key;       /* "commit\x1fsuite_enc\x1ffile_enc" of pyro_bytes */
	tf_buf pyro_bytes;    /* the run file tf_store_resolve_pyroscope() fetched */
	char *grafana_url, *grafana_datasource; /* the config's, for links */
};

extern const tf_store_backend tf_store_git_backend;
extern const tf_store_backend tf_store_dir_backend;
extern const tf_store_backend tf_store_pyroscope_backend;

/* A backend's links (tf_store_links_new): the first member of its own. */
struct tf_store_links {
	const char *text;     /* "compare in Grafana" */
	char *(*link)(const tf_store_links *l, const char *test);
	void (*free)(tf_store_links *l);
};

/* A notice through the store's callback (tf_store_open_opts). */
void tf_store_notice(tf_store *s, tf_notice_level level, const char *fmt, ...) TF_PRINTF(3, 4);

/* Maximum length of an encoded path component (file systems allow 255);
 * longer names keep a prefix of TF_STORE_NAME_PREFIX bytes and a hash. */
#define TF_STORE_NAME_MAX 200
#define TF_STORE_NAME_PREFIX 120
#define TF_STORE_FILE_SUFFIX ".pb.gz"

/* A baseline file's path components: "<suite_enc>" and "<kind_enc>.pb.gz". */
int tf_store_encode_pair(tf_buf *suite_enc, tf_buf *file_enc, const char *suite,
			 const char *kind);

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

/* ---- Pyroscope's backend (store_pyroscope.c, over pyroscope.c) ---- */

/* Open the client of a "pyroscope:URL" store into s->pyro: credentials
 * from the environment, else the config's; -v's request lines through the
 * store's notice. */
int tf_store_pyroscope_open(tf_store *s, const char *url, const tf_config *cfg);
/* The baseline tf_store_resolve_pyroscope() fetched for (commit, suite,
 * kind), as the backend's get() is asked for it (encoded names), copied
 * into `out` (may be NULL); TF_ENOTFOUND for any other. */
int tf_store_pyroscope_get(tf_buf *out, tf_store *s, const char *commit, const char *suite_enc,
			   const char *file_enc);
/* The key of that run file. */
char *tf_store_pyroscope_key(const char *commit, const char *suite, const char *kind);

/* ---- the Grafana Pyroscope client (pyroscope.c) ------------------------
 *
 * A client of Pyroscope's Connect API (binary protobuf over HTTP POST) on
 * the net module's libcurl session: pushes go to /push.v1.PusherService/Push,
 * or to /ingest?format=pprof on servers without it; baselines come back
 * with /querier.v1.QuerierService/SelectSeries (which commits and tests
 * were pushed, when, and how many samples) and SelectMergeProfile (each
 * test's pprof, with files and lines). Credentials never appear in any
 * message; they go only to https:// URLs or to http:// on loopback.
 */

typedef struct tf_pyroscope tf_pyroscope;

typedef struct {
	const char *url;              /* http(s)://HOST[:PORT][/PREFIX]; user:password@ is basic auth */
	/* Credentials, NULL when absent (copied by tf_pyroscope_open). */
	const char *user, *password;  /* basic auth */
	const char *token;            /* Authorization: Bearer */
	const char *tenant;           /* X-Scope-OrgID (multi-tenant servers) */
	double timeout;               /* seconds per request (default 30) */
	unsigned max_attempts;        /* per request, retried on 429, 5xx, network errors (default 3) */
	double max_wait;              /* seconds of retry waits in all (default 30) */
	void (*log)(const char *line, void *payload); /* one line per request (-v); never a secret */
	void *payload;
} tf_pyroscope_opts;

void tf_pyroscope_opts_init(tf_pyroscope_opts *o);
/*
 * Fill what `o` leaves NULL from `envp` (NAME=VALUE strings):
 * TESTFLAME_PYROSCOPE_USER, _PASSWORD, _TOKEN, _TENANT and _TIMEOUT
 * (seconds). The pointers point into envp. TF_EUSAGE for a bad timeout.
 */
int tf_pyroscope_opts_env(tf_pyroscope_opts *o, char *const *envp);
/* TF_EUSAGE for a URL that is not http(s)://HOST... */
int tf_pyroscope_open(tf_pyroscope **out, const tf_pyroscope_opts *o);
void tf_pyroscope_free(tf_pyroscope *py);
/* The server's URL without credentials, for messages. */
const char *tf_pyroscope_url(const tf_pyroscope *py);
/* Fill credentials `py` has none of (the config's, under the environment's). */
void tf_pyroscope_default_credentials(tf_pyroscope *py, const char *user, const char *password,
				      const char *token, const char *tenant);

/* Pyroscope's documented defaults, which pushes respect. */
#define TF_PYROSCOPE_MAX_LABELS 30              /* label names per series */
#define TF_PYROSCOPE_MAX_SAMPLES 16000          /* samples per profile */
#define TF_PYROSCOPE_MAX_PROFILE_BYTES (4u << 20) /* per profile, uncompressed */
#define TF_PYROSCOPE_MAX_LABEL_VALUE 2048       /* bytes of a label value */
#define TF_PYROSCOPE_MAX_AGE_MS (50LL * 60 * 1000) /* profiles older than an hour are refused */
#define TF_PYROSCOPE_WINDOW_MS (24LL * 3600 * 1000)  /* one query's time range (max_query_length) */
#define TF_PYROSCOPE_LOOKBACK_MS (7 * TF_PYROSCOPE_WINDOW_MS) /* how far back baselines are looked for */

/* What a run's series are labelled with (NULL or 0: left out). */
typedef struct {
	const char *service;        /* service_name: the repository ("owner/name"); required */
	const char *repository_url; /* service_repository: its web or git URL */
	const char *commit;         /* service_git_ref; required */
	const char *branch;         /* branch */
	long pr;                    /* pr */
	const char *ci;             /* ci: the provider name */
	const char *suite;          /* suite; required */
	const char *kind;           /* runner: the runner kind of tf_store_kind(); required */
	const char *shard;          /* shard ("2/4") where the suite is sharded */
} tf_pyroscope_labels;

/*
 * The profile name (`__name__`) and Pyroscope's profile type ids of an
 * event ("cpu-clock" -> "process_cpu", its value type
 * "process_cpu:cpu:nanoseconds:cpu:nanoseconds" and its counts
 * "process_cpu:samples:count:cpu:nanoseconds"). Caller frees; TF_EINVAL for
 * an unknown event.
 */
int tf_pyroscope_profile_types(char **name, char **value_type, char **count_type,
			       const char *event);
/* The same for a runner kind ("cpu-clock-perf-x86_64"). */
int tf_pyroscope_kind_types(char **name, char **value_type, char **count_type,
			    const char *kind);

/* One series of a push: its labels and profiles (raw pprof, not gzip). */
typedef struct {
	TF_VEC(char *) names, values; /* the labels, in the same order */
	TF_VEC(tf_buf) profiles;      /* each within the limits above */
	TF_VEC(size_t) nsamples;      /* samples of each profile */
	char *test;
} tf_pyroscope_series;

typedef struct {
	TF_VEC(tf_pyroscope_series) items;
} tf_pyroscope_batch;

void tf_pyroscope_batch_clear(tf_pyroscope_batch *b);
/*
 * The series of one run: one per test (samples without a test label go to
 * "[unattributed]"), labelled with `l` and test=NAME, each test's samples
 * in profiles of at most TF_PYROSCOPE_MAX_SAMPLES samples and
 * TF_PYROSCOPE_MAX_PROFILE_BYTES bytes, without sample labels (Pyroscope
 * would turn pid and tid into series), '-' in sample type names made '_',
 * and timestamped `time_ns` (which the caller keeps inside Pyroscope's
 * ingestion window). Appended to `out`.
 */
int tf_pyroscope_prepare(tf_pyroscope_batch *out, const tf_pyroscope_labels *l,
			 const tf_profile *run, int64_t time_ns);
/* A PushRequest of series [from, from + n) of `b`, profiles gzipped. */
int tf_pyroscope_encode_push(tf_buf *out, const tf_pyroscope_batch *b, size_t from, size_t n);

typedef struct {
	size_t tests, series, profiles, samples, requests;
	size_t refused;   /* profiles the server would not take (413 alone, 400) */
	char refusal[256];/* why, the last time */
	bool ingest;      /* the server has no Push: /ingest took them */
} tf_pyroscope_push_result;

/*
 * Push runs (each a run file's profile) with labels `l`. Run i of n is
 * timestamped now - (n - 1 - i) seconds (`now_ns` 0: the clock), so each
 * run is told apart and the newest is the last. Requests hold up to 4 MiB;
 * a request refused as too large (413) is split; 401/403 stop at once;
 * 429 and 5xx are retried within the options' bounds. 0 when every profile
 * arrived, else the error (and `out` says how far it got).
 */
int tf_pyroscope_push(tf_pyroscope_push_result *out, tf_pyroscope *py,
		      const tf_pyroscope_labels *l, const tf_profile *const *runs, size_t n,
		      int64_t now_ns);

/* The label selector {k="v",...} of `n` label pairs, values escaped. */
void tf_pyroscope_selector(tf_buf *out, const char *const *names, const char *const *values,
			   size_t n);

typedef struct {
	const char *service, *suite, *kind; /* as pushed */
	unsigned max_depth;  /* first-parent commits to consider; 0: TF_STORE_DEFAULT_DEPTH */
	int64_t now_ms;      /* 0: the clock */
} tf_pyroscope_query;

/*
 * The nearest commit on the first-parent history of `start_rev` (itself
 * included) whose profiles of q->suite and q->kind were pushed to the
 * store's Pyroscope within TF_PYROSCOPE_LOOKBACK_MS, scanning a day at a
 * time from now back. Its profiles are fetched (each test's newest run)
 * and kept as a run file that tf_store_get() returns for that commit.
 * `out->source` says where it came from and how old it is. TF_ENOTFOUND
 * when Pyroscope has none; TF_EUNSUPPORTED for a store without Pyroscope.
 */
int tf_store_resolve_pyroscope(tf_store_match *out, tf_store *s, const char *start_rev,
			       const tf_pyroscope_query *q);

/*
 * Grafana's comparison of one test at two commits: the Profiles Drilldown
 * app's diff flame graph (explorationType=diff-flame-graph) with the
 * baseline and comparison filtered by service_git_ref, suite and test.
 */
typedef struct {
	const char *grafana_url;    /* https://grafana.example.com (no trailing slash needed) */
	const char *datasource;     /* the Pyroscope data source's uid; NULL: Grafana's default */
	const char *service, *suite, *profile_type;
	const char *base_commit, *head_commit;
	int64_t base_ms, head_ms;   /* when each side was pushed (ms) */
} tf_pyroscope_link;

/* The URL (caller frees), every parameter percent-encoded. */
char *tf_pyroscope_grafana_url(const tf_pyroscope_link *l, const char *test);

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
