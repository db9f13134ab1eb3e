/*
 * context.h - where a run happened: the git state of the tree (libgit2) and
 * the CI system that ran it (its environment and event payload), resolved
 * into the tags every run file carries (SPEC §5).
 *
 * Three layers, usable apart:
 *   tf_ci      what the CI environment says (provider, PR, base branch, head
 *              SHA, repository, run URL); reads an environment array, never
 *              getenv(), so tests and the lead control it.
 *   tf_repo    a thin handle over a libgit2 repository (resolve, parents,
 *              first-parent walk) for the modules that need history; this
 *              module and store/ are the only ones that touch libgit2, and
 *              share its boundary (testflame/git.h).
 *   tf_git     the git facts of one run: HEAD, branch, dirty, shallow,
 *              default branch, merge-base with the target branch, and the
 *              changed files and lines between them.
 * tf_context combines them and writes the metadata keys listed below.
 */
#ifndef TESTFLAME_CONTEXT_H
#define TESTFLAME_CONTEXT_H

#include "testflame/common.h"
#include "testflame/config.h"
#include "testflame/profile.h"

/* ---- CI environment ---------------------------------------------------- */

typedef enum {
	TF_CI_LOCAL = 0,  /* no CI detected: a developer's machine, a hook */
	TF_CI_GENERIC,    /* CI=true but none of the providers below */
	TF_CI_GITHUB,
	TF_CI_GITLAB,
	TF_CI_CIRCLECI,
} tf_ci_provider;

typedef struct {
	tf_ci_provider provider;
	char *event;          /* GITHUB_EVENT_NAME, CI_PIPELINE_SOURCE, ... */
	char *commit;         /* the commit CI checked out (for a GitHub PR: the merge commit) */
	char *head_sha;       /* the PR/MR head: the author's last commit */
	char *branch;         /* the source branch (PR head branch on PRs) */
	char *base_branch;    /* the PR/MR target branch */
	char *base_sha;       /* GitHub pull_request.base.sha; GitLab diff base SHA */
	char *default_branch; /* repository's default branch, when CI says */
	long pr;              /* PR/MR number, 0 when not a PR/MR build */
	char *repository;     /* owner/name (GitLab: group/.../project) */
	char *project_id;     /* GitLab's numeric project id */
	char *server_url;     /* https://github.com, CI_SERVER_URL, ... */
	char *api_url;        /* GITHUB_API_URL, CI_API_V4_URL */
	char *run_url;        /* the workflow run / pipeline / job page */
	char *job_url;        /* GitLab's job page (run_url is the pipeline) */
	/* Set by TESTFLAME_COMMIT / TESTFLAME_DEFAULT_BRANCH: these beat what
	 * git says; CI's own values only fill in where git knows nothing. */
	bool commit_forced, default_branch_forced;
	/* This job is copy `shard_index` (from 1) of `shard_total` > 1 that
	 * the CI runs in parallel (GitLab's parallel:, CircleCI's
	 * parallelism); 0 and 0 otherwise. */
	unsigned shard_index, shard_total;
	/* Problems met while reading (an unreadable event payload, ...): the
	 * context is still filled as far as possible. */
	tf_msglist warnings;
} tf_ci;

/*
 * Detect the CI provider from `envp` (a NULL-terminated "NAME=VALUE" array,
 * like environ) and read what it tells, including GitHub's event payload at
 * GITHUB_EVENT_PATH. TESTFLAME_CI, TESTFLAME_COMMIT, TESTFLAME_HEAD_SHA,
 * TESTFLAME_BRANCH, TESTFLAME_PR, TESTFLAME_BASE_BRANCH,
 * TESTFLAME_DEFAULT_BRANCH, TESTFLAME_REPOSITORY and TESTFLAME_RUN_URL
 * override anything detected. Returns TF_EUSAGE for a bad override value
 * (TESTFLAME_PR=abc, TESTFLAME_CI=jenkins).
 */
int tf_ci_detect(tf_ci **out, char *const *envp);
void tf_ci_free(tf_ci *ci);
/* "local", "generic", "github", "gitlab", "circleci" */
const char *tf_ci_provider_name(tf_ci_provider p);
/* Parse one of the names above; returns false if unknown. */
bool tf_ci_provider_parse(tf_ci_provider *out, const char *name);

/* ---- repositories (libgit2) ------------------------------------------- */

typedef struct tf_repo tf_repo;

/*
 * Open the repository containing `path` (NULL: the current directory),
 * searching upwards like git. TF_ENOTFOUND outside a repository; TF_EPERM
 * for a repository owned by someone else (the message names the
 * safe.directory fix).
 */
int tf_repo_open(tf_repo **out, const char *path);
void tf_repo_free(tf_repo *r);
/* The working tree ("/x/y/", with the slash), or NULL for a bare repository. */
const char *tf_repo_workdir(const tf_repo *r);
const char *tf_repo_gitdir(const tf_repo *r);
bool tf_repo_is_shallow(tf_repo *r);
/* Resolve a revision ("HEAD", "main", "origin/main~2", a SHA) to the full
 * hex id of a commit; the caller frees *out. */
int tf_repo_resolve(char **out, tf_repo *r, const char *rev);
/* The parents of `commit`, a NULL-terminated array the caller frees with
 * tf_strv_free(). Parents are listed even when their objects are missing
 * (a shallow boundary). */
int tf_repo_parents(char ***out, tf_repo *r, const char *commit);
/*
 * Write the tree of `rev` into the directory `dir` (created if missing): a
 * checkout that leaves the repository's HEAD, index and work tree alone,
 * for building and running another revision beside this one (--against).
 */
int tf_repo_export(tf_repo *r, const char *rev, const char *dir);

/*
 * Walk first-parent history from `start` (itself first, distance 0) for at
 * most `max` commits (0: no limit). `fn` returns 0 to continue, > 0 to stop
 * (the walk returns 0), < 0 to abort (the walk returns that). *truncated
 * (may be NULL) tells whether the walk stopped because the next parent is
 * not in the repository: a shallow clone's boundary.
 */
typedef int (*tf_repo_walk_fn)(const char *commit, unsigned distance, void *payload);
int tf_repo_walk_first_parent(tf_repo *r, const char *start, unsigned max,
			      tf_repo_walk_fn fn, void *payload, bool *truncated);

/* First-parent steps from `from` back to `to` (both revisions), looking at
 * `max` commits at most (0: no limit); -1 when `to` is not on that line (a
 * merge of the target into the branch) or either is unknown. */
long tf_repo_distance(tf_repo *r, const char *from, const char *to, unsigned max);

/*
 * A checkout of another revision beside this one (run --against): its
 * tree written into a new temporary directory, leaving this checkout's
 * HEAD, index and work tree alone, for building and running it here.
 */
typedef struct tf_worktree tf_worktree;

/* Export `rev` of the repository containing the current directory into a
 * new directory under `tmpdir` (NULL: $TMPDIR, else /tmp). TF_EUNSUPPORTED
 * for a bare repository, which has no work tree to build beside. */
int tf_worktree_create(tf_worktree **out, const char *rev, const char *tmpdir);
/* Remove the directory and everything in it (0, or why not). */
int tf_worktree_remove(tf_worktree *w);
/* Free the handle, removing the directory if that was not done. */
void tf_worktree_free(tf_worktree *w);
const char *tf_worktree_commit(const tf_worktree *w); /* rev's full id */
const char *tf_worktree_root(const tf_worktree *w);   /* the temporary directory */
/* The current directory's place in the checkout (its root when the
 * current directory is the work tree's root). */
const char *tf_worktree_cwd(const tf_worktree *w);
/* This repository's work tree, for building both sides alike. */
const char *tf_worktree_source(const tf_worktree *w);
/*
 * Run the shell command `cmd` (sh -c) in the checkout's root, or with
 * `here` in this repository's work tree, as system(3) would: testflame
 * ignores SIGINT and SIGQUIT while it runs. Returns the wait status, or
 * -1 when the command could not be started (the message says why).
 */
int tf_worktree_run(const tf_worktree *w, const char *cmd, bool here);
/* The same in directory `dir` (NULL: the current one). */
int tf_shell_run(const char *dir, const char *cmd);

/*
 * How to fetch the history a shallow or partial checkout lacks, for the
 * given CI provider and target branch (may be NULL): the git command plus,
 * in CI, the setting that makes the checkout complete ("fetch-depth: 0" for
 * actions/checkout, "GIT_DEPTH: 0" for GitLab). The caller frees it.
 */
char *tf_git_fetch_hint(tf_ci_provider provider, const char *target_branch, bool shallow);

/* ---- changed files and lines ------------------------------------------ */

typedef struct {
	uint32_t start, count; /* lines [start, start + count) of the new version */
} tf_line_range;

typedef struct {
	char *path;       /* in the new version (the old one for a deletion) */
	char *old_path;   /* the path before a rename or copy, else NULL */
	char status;      /* 'A' added, 'M' modified, 'D' deleted, 'R' renamed, 'C' copied, 'T' type change */
	bool binary;
	TF_VEC(tf_line_range) lines; /* added or changed lines, sorted */
} tf_changed_file;

typedef struct {
	TF_VEC(tf_changed_file) files;
} tf_changes;

void tf_changes_free(tf_changes *c);
/*
 * The compact JSON that goes into the run file:
 * [{"path":"src/a.c","status":"M","lines":[[3,5],[10,10]]},
 *  {"path":"b.c","old_path":"a_old.c","status":"R","lines":[]}]
 * Line ranges are inclusive [first, last]. At most `max_bytes` of output
 * (0: no limit): files that do not fit are left out and *truncated is set.
 */
int tf_changes_to_json(tf_buf *out, const tf_changes *c, size_t max_bytes, bool *truncated);
int tf_changes_from_json(tf_changes *out, const char *json);
/*
 * The changed file `path` refers to: equal, or `path` ends with "/" + its
 * repository-relative path (absolute paths from debug info match). NULL if
 * the file did not change.
 */
const tf_changed_file *tf_changes_find(const tf_changes *c, const char *path);
/* Whether line `line` of `path` is among the changed lines. */
bool tf_changes_touch(const tf_changes *c, const char *path, uint32_t line);

/* ---- git facts of a run ----------------------------------------------- */

typedef struct {
	bool untracked_dirty;            /* untracked files make the tree dirty */
	const char *target_branch;       /* NULL: the default branch */
	const char *default_branch_hint; /* CI's default branch, used after origin/HEAD */
	const char *base_sha_hint;       /* CI's base SHA, see tf_git.merge_base_source */
	tf_ci_provider provider;         /* to word the fetch hints */
} tf_git_opts;

typedef struct {
	char *workdir;        /* NULL for a bare repository */
	char *repository;     /* "owner/name" from the remote's URL, when it has a host */
	char *commit;         /* HEAD; NULL in a repository without commits */
	char *branch;         /* HEAD's branch (also when unborn); NULL when detached */
	bool detached, unborn, dirty, shallow;
	bool root;            /* HEAD has no parent: the repository's first commit */
	char *default_branch;
	const char *default_branch_source; /* "origin/HEAD", "ci", "init.defaultBranch", "main", "master", ... */
	char *target_branch;  /* what the merge-base was computed against */
	char *target_ref;     /* the ref that named it, NULL when not found */
	char *merge_base;     /* NULL when it could not be found */
	/* "git" (computed), "ci-merge-commit" (HEAD is CI's merge commit and its
	 * first parent is CI's base SHA), "ci" (GitLab's diff base SHA) */
	const char *merge_base_source;
	tf_changes changes;   /* merge_base..HEAD, valid when changes_known */
	bool changes_known;
	/* Why something above is missing, with the exact fix: one line each. */
	tf_msglist problems;
} tf_git;

/* Collect the git facts of `r`. Missing history is not an error: the
 * fields stay NULL and `problems` says why. */
int tf_git_collect(tf_git **out, tf_repo *r, const tf_git_opts *opts);
void tf_git_free(tf_git *g);

/* ---- the machine a run ran on (environment.c) ---------------------------- */

typedef struct {
	char *key, *value;
} tf_env_fact;
typedef TF_VEC(tf_env_fact) tf_env_facts;

/* The facts compared between two runs' environments (environment.c says
 * what each is), NULL-terminated; a run file keeps them as env.KEY. */
extern const char *const tf_environment_keys[];
/* Read this machine's facts (`envp` for what the CI says of its runner);
 * unreadable ones are left out. */
int tf_environment_detect(tf_env_facts *out, char *const *envp);
const char *tf_env_facts_get(const tf_env_facts *f, const char *key);
void tf_env_facts_free(tf_env_facts *f);
/* What differs between two run files' environments, as "cpu 'A' vs 'B';
 * cores '2' vs '4'", appended to `out` (nothing when they agree or do not
 * say). */
void tf_environment_diff(tf_buf *out, const tf_profile *base, const tf_profile *head);

/* ---- the run's context ------------------------------------------------ */

typedef struct {
	tf_ci *ci;            /* never NULL */
	tf_git *git;          /* NULL outside a git repository */
	/* Resolved values: TESTFLAME_* overrides, then git, then CI. */
	const char *commit;       /* what was measured (HEAD) */
	const char *head_sha;     /* the PR head when it differs from commit, else NULL */
	const char *branch;
	const char *default_branch;
	const char *base_branch;  /* the target the merge-base was computed against */
	const char *merge_base;
	const char *repository;
	const char *run_url;
	long pr;
	bool dirty, shallow;
	/* A build of the default branch that is not a PR: where CI saves the
	 * baseline. */
	bool on_default_branch;
	/* One line each, for the cli to print as warnings (shallow clone, not a
	 * repository, unreadable event payload), with the fix. */
	tf_msglist warnings;
	tf_env_facts env;     /* the machine (environment.c) */
} tf_context;

/*
 * Detect the context of a run in `path` (NULL: the current directory) under
 * the environment `envp`. `cfg` (may be NULL) supplies target_branch. Not
 * being in a repository, a shallow clone or a missing target branch are not
 * errors (see warnings); a bad TESTFLAME_* value is TF_EUSAGE.
 */
int tf_context_detect(tf_context **out, const char *path, char *const *envp,
		      const tf_config *cfg);
void tf_context_free(tf_context *ctx);

/* Where the walk for this run's baseline starts: the merge-base, or, on
 * the target branch itself (where HEAD is the merge-base), the commit
 * before HEAD. NULL without a commit to start from, or when HEAD is the
 * repository's first commit (tf_context_first_commit); the caller frees. */
char *tf_context_baseline_start(const tf_context *ctx);
/* Whether the commit measured is the repository's first: nothing before
 * it to compare with. */
bool tf_context_first_commit(const tf_context *ctx);

/*
 * Metadata keys written by tf_context_apply_meta() (the run file's
 * "testflame.KEY=VALUE" comments); keys without a value are not written.
 *   commit, branch, dirty ("true"/"false"), default_branch, base_branch,
 *   merge_base, pr, ci (provider name), repository, run_url,
 *   head_sha (only when it differs from commit), shallow ("true"/"false"),
 *   changes (tf_changes_to_json, at most 64 KiB), changes_truncated ("true"),
 *   env.KEY for each tf_environment_keys fact of the machine
 */
extern const char *const tf_context_meta_keys[];
void tf_context_apply_meta(tf_profile *p, const tf_context *ctx);

/*
 * JSON object of the context keys, typed: strings, "pr" a number, "dirty"
 * and "shallow" booleans, "changes" an array; absent keys are null (changes
 * and changes_truncated are left out when absent), indented by 2, appended
 * to `out`. From a detected context, or from a run file's metadata (what
 * `show --json` prints).
 */
int tf_context_to_json(tf_buf *out, const tf_context *ctx);
int tf_context_meta_to_json(tf_buf *out, const tf_profile *p);

#endif
