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
 *                  organisation-wide mirror: `run` pushes every run's
 *                  per-test profiles there (tf_pyroscope_push), and a
 *                  baseline git does not hold is looked for there
 *                  (tf_store_resolve_pyroscope), then read with
 *                  tf_store_get like any other
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
 * of the spec: the config's `store:` and tf_store_open() both use it.
 * TF_EUSAGE, with a message saying what was expected, for a bad one.
 */
int tf_store_spec_parse(tf_store_spec *out, const char *spec);

/*
 * Open the store named by `spec` (NULL means "git"). `repo` is a path in
 * (or of) a git repository, NULL for the current directory; the git store
 * requires one, the dir store uses it when present to resolve revisions and
 * walk history.
 */
int tf_store_open(tf_store **out, const char *spec, const char *repo);
void tf_store_free(tf_store *s);
/* For messages: "git store in '/repo/.git/'", "dir store '/abs/path'". */
const char *tf_store_describe(const tf_store *s);
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

/* ---- Grafana Pyroscope (pyroscope.c) ----------------------------------
 *
 * A client of Pyroscope's Connect API (binary protobuf over HTTP POST) on
 * publish/'s libcurl session: pushes go to /push.v1.PusherService/Push,
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
/* Where the request lines go (-v); NULL: nowhere. */
void tf_pyroscope_set_log(tf_pyroscope *py, void (*log)(const char *line, void *payload),
			  void *payload);
/* The Pyroscope client of a "pyroscope:URL" store, NULL for other stores. */
tf_pyroscope *tf_store_pyroscope(tf_store *s);

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

/* Path components (exposed for tests and reports). `out` gets the encoded
 * name; TF_EINVAL for an empty one. */
int tf_store_encode_name(tf_buf *out, const char *name);
/* The reverse; TF_EINVAL for a malformed %XX or hash suffix. */
int tf_store_decode_name(tf_buf *out, const char *enc, size_t len);

#endif
