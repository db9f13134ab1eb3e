/*
 * test_context.c - the git side of the context on real repositories built
 * with the git CLI in temporary directories: branches and a fork point,
 * merges, renames, a dirty tree, a detached HEAD, an unborn branch, remote-
 * tracking branches, shallow clones (and the fetch that repairs them),
 * GitHub's pull_request merge commit; plus the changed-lines JSON, the
 * metadata a run file gets, where a run's baseline walk starts and the
 * checkout of another revision that run --against builds.
 */
#include "unit.h"
#include "testflame/context.h"

#include <stdarg.h>
#include <sys/wait.h>

static char *home;

/* Run shell commands in `dir`, quietly; they must succeed. */
static void sh(const char *dir, const char *fmt, ...) TF_PRINTF(2, 3);
static void sh(const char *dir, const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	unit_sh("set -e; cd '%s'; { %s; } >/dev/null 2>&1", dir, b.ptr);
	tf_buf_free(&b);
}

/* The first line a command prints. */
static char *out(const char *dir, const char *fmt, ...) TF_PRINTF(2, 3);
static char *out(const char *dir, const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT;
	char line[512] = "";
	va_list ap;
	FILE *fp;
	tf_buf_printf(&b, "cd '%s' && ", dir);
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	fp = popen(b.ptr, "r");
	assert_non_null(fp);
	if (!fgets(line, sizeof(line), fp))
		line[0] = '\0';
	assert_int_equal(pclose(fp), 0);
	tf_buf_free(&b);
	line[strcspn(line, "\n")] = '\0';
	return strdup(line);
}

static char *path_in(const char *dir, const char *name)
{
	char *p;
	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

/*
 * up/: main with three commits; `feature` forks after the second, edits
 * lines 3-4 of lib.c, adds new.c (3 lines), renames old.c to moved.c with
 * line 2 changed; main then gains one more commit.
 */
static char *make_upstream(const char *dir)
{
	char *up = path_in(dir, "up");
	sh(dir, "git init -q -b main up");
	sh(up, "printf '1\\n2\\n3\\n4\\n5\\n6\\n7\\n8\\n' > lib.c && "
	       "printf 'a\\nb\\nc\\nd\\ne\\nf\\ng\\nh\\ni\\nj\\n' > old.c && "
	       "git add . && git commit -qm one && "
	       "echo 9 >> lib.c && git commit -qam two && "
	       "git checkout -qb feature && "
	       "sed -i 's/^3$/three/; s/^4$/four/' lib.c && git commit -qam f1 && "
	       "printf 'x\\ny\\nz\\n' > new.c && git add new.c && git commit -qm f2 && "
	       "git mv old.c moved.c && sed -i 's/^b$/B/' moved.c && git commit -qam f3 && "
	       "git checkout -q main && echo main > other.c && git add other.c && git commit -qm three");
	return up;
}

static tf_git *collect(const char *dir, const tf_git_opts *o)
{
	tf_repo *r;
	tf_git *g;
	assert_int_equal(tf_repo_open(&r, dir), 0);
	assert_int_equal(tf_git_collect(&g, r, o), 0);
	tf_repo_free(r);
	return g;
}

static const tf_changed_file *file(const tf_git *g, const char *path)
{
	for (size_t i = 0; i < g->changes.files.n; i++)
		if (strcmp(g->changes.files.v[i].path, path) == 0)
			return &g->changes.files.v[i];
	fail_msg("'%s' not among the changed files", path);
	return NULL;
}

static void test_branch_fork_point_and_changes(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir);
	sh(up, "git checkout -q feature");
	char *fork = out(up, "git merge-base feature main"), *head = out(up, "git rev-parse HEAD");
	tf_git *g = collect(up, NULL);

	assert_string_equal(g->commit, head);
	assert_string_equal(g->branch, "feature");
	assert_false(g->detached);
	assert_false(g->dirty);
	assert_false(g->shallow);
	assert_string_equal(g->default_branch, "main");
	assert_string_equal(g->default_branch_source, "main");
	assert_string_equal(g->target_branch, "main");
	assert_string_equal(g->target_ref, "refs/heads/main");
	assert_string_equal(g->merge_base, fork);
	assert_string_equal(g->merge_base_source, "git");
	assert_int_equal(g->problems.n, 0);
	assert_true(g->changes_known);
	assert_int_equal(g->changes.files.n, 3);

	const tf_changed_file *f = file(g, "lib.c");
	assert_int_equal(f->status, 'M');
	assert_int_equal(f->lines.n, 1);
	assert_int_equal(f->lines.v[0].start, 3);
	assert_int_equal(f->lines.v[0].count, 2);
	f = file(g, "new.c");
	assert_int_equal(f->status, 'A');
	assert_int_equal(f->lines.v[0].start, 1);
	assert_int_equal(f->lines.v[0].count, 3);
	f = file(g, "moved.c");
	assert_int_equal(f->status, 'R');
	assert_string_equal(f->old_path, "old.c");
	assert_int_equal(f->lines.n, 1);
	assert_int_equal(f->lines.v[0].start, 2);
	assert_int_equal(f->lines.v[0].count, 1);
	/* main's own later commit (other.c) is not the branch's change */
	assert_true(tf_changes_touch(&g->changes, "/build/src/lib.c", 4));
	assert_false(tf_changes_touch(&g->changes, "/build/src/lib.c", 5));
	assert_null(tf_changes_find(&g->changes, "other.c"));
	tf_git_free(g);

	/* an explicit target: the same branch gives no changes */
	tf_git_opts o = { .target_branch = "feature" };
	g = collect(up, &o);
	assert_string_equal(g->merge_base, head);
	assert_int_equal(g->changes.files.n, 0);
	tf_git_free(g);
	free(fork);
	free(head);
	free(up);
	unit_rmtree(dir);
}

static void test_dirty_and_untracked(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir);
	tf_git_opts o = { 0 };
	tf_git *g;

	sh(up, "echo junk > untracked.txt");
	g = collect(up, &o);
	assert_false(g->dirty);
	tf_git_free(g);
	o.untracked_dirty = true;
	g = collect(up, &o);
	assert_true(g->dirty);
	tf_git_free(g);
	sh(up, "rm untracked.txt && echo 10 >> lib.c");
	o.untracked_dirty = false;
	g = collect(up, &o);
	assert_true(g->dirty);
	tf_git_free(g);
	sh(up, "git checkout -q lib.c && echo 10 >> lib.c && git add lib.c");
	g = collect(up, &o); /* staged only */
	assert_true(g->dirty);
	tf_git_free(g);
	free(up);
	unit_rmtree(dir);
}

static void test_detached_head(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir);
	sh(up, "git checkout -q --detach feature~1");
	char *want = out(up, "git rev-parse HEAD");
	tf_git *g = collect(up, NULL);
	assert_true(g->detached);
	assert_null(g->branch);
	assert_string_equal(g->commit, want);
	assert_non_null(g->merge_base);
	assert_int_equal(g->changes.files.n, 2); /* f1, f2 but not the rename */
	tf_git_free(g);
	free(want);
	free(up);
	unit_rmtree(dir);
}

static int collect_walk(const char *commit, unsigned distance, void *payload)
{
	tf_buf *b = payload;
	tf_buf_printf(b, "%u:%.7s ", distance, commit);
	return 0;
}

static int stop_at_two(const char *commit, unsigned distance, void *payload)
{
	(void)commit;
	(void)payload;
	return distance == 1 ? 1 : 0;
}

static void test_merge_and_first_parent_walk(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir);
	sh(up, "git merge -q --no-ff -m merge feature");
	tf_git *g = collect(up, NULL);
	char *head = out(up, "git rev-parse HEAD");
	assert_string_equal(g->branch, "main");
	assert_string_equal(g->merge_base, head); /* HEAD is on the target */
	assert_int_equal(g->changes.files.n, 0);
	tf_git_free(g);

	tf_repo *r;
	char **parents;
	assert_int_equal(tf_repo_open(&r, up), 0);
	assert_int_equal(tf_repo_parents(&parents, r, "HEAD"), 0);
	char *p1 = out(up, "git rev-parse HEAD^1"), *p2 = out(up, "git rev-parse HEAD^2");
	assert_string_equal(parents[0], p1);
	assert_string_equal(parents[1], p2);
	assert_null(parents[2]);
	tf_strv_free(parents);

	/* first parents only: merge, three, two, one; never the feature commits */
	tf_buf b = TF_BUF_INIT, want = TF_BUF_INIT;
	bool truncated = true;
	assert_int_equal(tf_repo_walk_first_parent(r, "main", 0, collect_walk, &b, &truncated), 0);
	assert_false(truncated);
	char *log = out(up, "git log --first-parent --format=%%h --abbrev=7 | awk '{printf \"%%d:%%s \", NR-1, $1}'");
	tf_buf_puts(&want, log);
	assert_string_equal(b.ptr, want.ptr);
	tf_buf_clear(&b);
	assert_int_equal(tf_repo_walk_first_parent(r, "main", 2, collect_walk, &b, NULL), 0);
	assert_int_equal(strlen(b.ptr), 2 * strlen("0:1234567 "));
	unsigned calls = 0;
	assert_int_equal(tf_repo_walk_first_parent(r, "main", 0, stop_at_two, &calls, NULL), 0);

	char *sha;
	assert_int_equal(tf_repo_resolve(&sha, r, "main~1"), 0);
	assert_string_equal(sha, p1);
	free(sha);
	assert_int_equal(tf_repo_resolve(&sha, r, "no-such-branch"), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "cannot resolve 'no-such-branch'"));
	assert_null(sha);
	tf_repo_free(r);
	tf_buf_free(&b);
	tf_buf_free(&want);
	free(log);
	free(p1);
	free(p2);
	free(head);
	free(up);
	unit_rmtree(dir);
}

static void test_remote_tracking_preferred(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir), *cl = path_in(dir, "cl");
	sh(dir, "git clone -q file://%s cl", up);
	/* a stale local main two commits behind origin/main */
	sh(cl, "git branch -q -f main HEAD~1 2>/dev/null || git update-ref refs/heads/main HEAD~1");
	sh(cl, "git checkout -q -b topic origin/feature");
	char *fork = out(cl, "git merge-base HEAD origin/main");
	tf_git *g = collect(cl, NULL);
	assert_string_equal(g->default_branch, "main");
	assert_string_equal(g->default_branch_source, "origin/HEAD");
	assert_string_equal(g->target_ref, "refs/remotes/origin/main");
	assert_string_equal(g->merge_base, fork);
	assert_null(g->repository); /* a file:// remote names no repository */
	tf_git_free(g);

	sh(cl, "git remote set-url origin git@github.com:acme/widget.git");
	g = collect(cl, NULL);
	assert_string_equal(g->repository, "acme/widget");
	tf_git_free(g);
	sh(cl, "git remote set-url origin https://gitlab.example.com/acme/tools/widget.git/");
	g = collect(cl, NULL);
	assert_string_equal(g->repository, "acme/tools/widget");
	tf_git_free(g);
	free(fork);
	free(cl);
	free(up);
	unit_rmtree(dir);
}

static void test_default_branch_sources(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *r = path_in(dir, "r");
	tf_git_opts o = { 0 };
	tf_git *g;

	sh(dir, "git init -q -b trunk r && cd r && git commit -q --allow-empty -m a && "
		"git branch dev && git branch side");
	/* trunk: no origin/HEAD, no main or master, three branches */
	g = collect(r, NULL);
	assert_null(g->default_branch);
	assert_null(g->merge_base);
	assert_int_equal(g->problems.n, 1);
	assert_non_null(strstr(g->problems.v[0], "no target branch to compare with"));
	tf_git_free(g);
	o.default_branch_hint = "dev"; /* CI says */
	g = collect(r, &o);
	assert_string_equal(g->default_branch, "dev");
	assert_string_equal(g->default_branch_source, "ci");
	tf_git_free(g);
	sh(r, "git config init.defaultBranch trunk");
	g = collect(r, NULL);
	assert_string_equal(g->default_branch, "trunk");
	assert_string_equal(g->default_branch_source, "init.defaultBranch");
	tf_git_free(g);
	sh(r, "git config --unset init.defaultBranch && git branch -D dev side");
	g = collect(r, NULL);
	assert_string_equal(g->default_branch, "trunk");
	assert_string_equal(g->default_branch_source, "only branch");
	tf_git_free(g);
	sh(r, "git branch master");
	g = collect(r, NULL);
	assert_string_equal(g->default_branch, "master");
	tf_git_free(g);
	free(r);
	unit_rmtree(dir);
}

static void test_unborn(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	sh(dir, "git init -q -b main .");
	tf_git *g = collect(dir, NULL);
	assert_true(g->unborn);
	assert_null(g->commit);
	assert_string_equal(g->branch, "main");
	assert_null(g->merge_base);
	tf_git_free(g);
	unit_rmtree(dir);
}

static void test_shallow_clone(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir), *sc = path_in(dir, "sc");
	char *fork = out(up, "git merge-base feature main");
	tf_git *g;

	/* what a default CI checkout looks like: one commit of one branch */
	sh(dir, "git clone -q --depth 1 --branch feature file://%s sc", up);
	g = collect(sc, NULL);
	assert_true(g->shallow);
	assert_null(g->default_branch); /* not 'feature', the only branch there is */
	assert_null(g->merge_base);
	assert_int_equal(g->problems.n, 1);
	assert_non_null(strstr(g->problems.v[0], "shallow clone without the default branch"));
	tf_git_free(g);
	tf_git_opts main_opts = { .target_branch = "main" };
	g = collect(sc, &main_opts);
	assert_true(g->shallow);
	assert_string_equal(g->branch, "feature");
	assert_non_null(g->commit);
	assert_null(g->merge_base);
	assert_false(g->changes_known);
	assert_int_equal(g->problems.n, 1);
	assert_non_null(strstr(g->problems.v[0], "shallow clone without the target branch 'main'"));
	assert_non_null(strstr(g->problems.v[0],
			       "'git fetch --unshallow origin +refs/heads/main:refs/remotes/origin/main'"));
	tf_git_free(g);

	/* the walk stops at the boundary and says so */
	tf_repo *r;
	tf_buf b = TF_BUF_INIT;
	bool truncated = false;
	assert_int_equal(tf_repo_open(&r, sc), 0);
	assert_true(tf_repo_is_shallow(r));
	assert_int_equal(tf_repo_walk_first_parent(r, "HEAD", 0, collect_walk, &b, &truncated), 0);
	assert_true(truncated);
	assert_int_equal(strlen(b.ptr), strlen("0:1234567 "));
	tf_repo_free(r);
	tf_buf_free(&b);

	/* the target is there but the fork point is beyond the boundary */
	sh(sc, "git fetch -q --depth 1 origin +refs/heads/main:refs/remotes/origin/main");
	tf_git_opts o = { .provider = TF_CI_GITLAB };
	g = collect(sc, &o);
	assert_string_equal(g->target_ref, "refs/remotes/origin/main");
	assert_null(g->merge_base);
	assert_int_equal(g->problems.n, 1);
	assert_non_null(strstr(g->problems.v[0], "shallow clone: the merge-base of HEAD and 'main' "
			       "is not in the fetched history"));
	assert_non_null(strstr(g->problems.v[0], "'GIT_DEPTH: 0'"));
	tf_git_free(g);

	/* the fix the message gave, verbatim, repairs it */
	sh(sc, "git fetch -q --unshallow origin +refs/heads/main:refs/remotes/origin/main");
	g = collect(sc, NULL);
	assert_false(g->shallow);
	assert_string_equal(g->merge_base, fork);
	assert_true(g->changes_known);
	assert_int_equal(g->changes.files.n, 3);
	assert_int_equal(g->problems.n, 0);
	tf_git_free(g);
	free(fork);
	free(sc);
	free(up);
	unit_rmtree(dir);
}

/*
 * GitHub's pull_request checkout: refs/pull/7/merge, a merge commit of the
 * PR head into the base tip, fetched alone at depth 1 (actions/checkout's
 * default), HEAD detached on it.
 */
static void make_pr_merge(const char *up)
{
	sh(up, "git checkout -q --detach main && git merge -q --no-ff -m 'Merge feature into main' feature && "
	       "git update-ref refs/pull/7/merge HEAD && git checkout -q main");
}

static char *make_pr_checkout(const char *dir, const char *up, int depth)
{
	char *co = path_in(dir, depth ? "co1" : "co0");
	sh(dir, "git init -q %s && cd %s && git remote add origin file://%s && "
		"git fetch -q --no-tags %s origin +refs/pull/7/merge:refs/remotes/pull/7/merge %s && "
		"git checkout -q --detach refs/remotes/pull/7/merge",
	   co, co, up, depth ? "--depth=1" : "",
	   depth ? "" : "'+refs/heads/*:refs/remotes/origin/*'");
	return co;
}

static char *write_payload(const char *dir, const char *up)
{
	char *head = out(up, "git rev-parse feature"), *base = out(up, "git rev-parse main");
	char *path = path_in(dir, "event.json");
	FILE *fp = fopen(path, "w");
	fprintf(fp, "{\"action\":\"synchronize\",\"number\":7,\"pull_request\":{\"number\":7,"
		    "\"head\":{\"ref\":\"feature\",\"sha\":\"%s\"},\"base\":{\"ref\":\"main\",\"sha\":\"%s\"}},"
		    "\"repository\":{\"full_name\":\"acme/widget\",\"default_branch\":\"main\"}}\n",
		head, base);
	fclose(fp);
	free(head);
	free(base);
	return path;
}

static void test_github_pr_merge_commit(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir);
	make_pr_merge(up);
	char *shallow = make_pr_checkout(dir, up, 1), *full = make_pr_checkout(dir, up, 0);
	char *payload = write_payload(dir, up), *ev, *sha_env;
	char *merge = out(up, "git rev-parse refs/pull/7/merge"), *head = out(up, "git rev-parse feature");
	char *base = out(up, "git rev-parse main");
	tf_context *ctx;

	assert_true(asprintf(&ev, "GITHUB_EVENT_PATH=%s", payload) > 0);
	assert_true(asprintf(&sha_env, "GITHUB_SHA=%s", merge) > 0);
	char *envp[] = {
		"CI=true", "GITHUB_ACTIONS=true", "GITHUB_EVENT_NAME=pull_request", ev, sha_env,
		"GITHUB_REF=refs/pull/7/merge", "GITHUB_HEAD_REF=feature", "GITHUB_BASE_REF=main",
		"GITHUB_REPOSITORY=acme/widget", "GITHUB_SERVER_URL=https://github.com",
		"GITHUB_RUN_ID=555", NULL,
	};

	/* depth 1: the merge-base is the merge commit's first parent, which
	 * the payload's base.sha confirms; the diff needs history we lack */
	assert_int_equal(tf_context_detect(&ctx, shallow, envp, NULL), 0);
	assert_string_equal(ctx->commit, merge);
	assert_string_equal(ctx->head_sha, head);
	assert_int_equal(ctx->pr, 7);
	assert_string_equal(ctx->base_branch, "main");
	assert_string_equal(ctx->branch, "feature");
	assert_string_equal(ctx->merge_base, base);
	assert_string_equal(ctx->git->merge_base_source, "ci-merge-commit");
	assert_true(ctx->shallow);
	assert_false(ctx->on_default_branch);
	assert_false(ctx->git->changes_known);
	assert_int_equal(ctx->warnings.n, 1);
	assert_non_null(strstr(ctx->warnings.v[0], "'fetch-depth: 0' on actions/checkout"));
	tf_context_free(ctx);

	/* fetch-depth: 0: git computes the same merge-base, and the diff is
	 * exactly the PR's changes */
	assert_int_equal(tf_context_detect(&ctx, full, envp, NULL), 0);
	assert_string_equal(ctx->commit, merge);
	assert_string_equal(ctx->merge_base, base);
	assert_string_equal(ctx->git->merge_base_source, "git");
	assert_false(ctx->shallow);
	assert_int_equal(ctx->warnings.n, 0);
	assert_true(ctx->git->changes_known);
	assert_int_equal(ctx->git->changes.files.n, 3);

	tf_profile *p;
	tf_profile_new(&p);
	tf_context_apply_meta(p, ctx);
	assert_string_equal(tf_profile_meta(p, "commit"), merge);
	assert_string_equal(tf_profile_meta(p, "head_sha"), head);
	assert_string_equal(tf_profile_meta(p, "pr"), "7");
	assert_string_equal(tf_profile_meta(p, "ci"), "github");
	assert_string_equal(tf_profile_meta(p, "base_branch"), "main");
	assert_string_equal(tf_profile_meta(p, "default_branch"), "main");
	assert_string_equal(tf_profile_meta(p, "merge_base"), base);
	assert_string_equal(tf_profile_meta(p, "branch"), "feature");
	assert_string_equal(tf_profile_meta(p, "dirty"), "false");
	assert_string_equal(tf_profile_meta(p, "repository"), "acme/widget");
	assert_string_equal(tf_profile_meta(p, "run_url"), "https://github.com/acme/widget/actions/runs/555");
	assert_non_null(strstr(tf_profile_meta(p, "changes"), "\"old_path\":\"old.c\""));

	tf_buf json = TF_BUF_INIT;
	assert_int_equal(tf_context_meta_to_json(&json, p), 0);
	assert_non_null(strstr(json.ptr, "\"pr\": 7,"));
	assert_non_null(strstr(json.ptr, "\"dirty\": false,"));
	tf_buf_free(&json);
	tf_profile_free(p);
	tf_context_free(ctx);

	free(ev);
	free(sha_env);
	free(payload);
	free(merge);
	free(head);
	free(base);
	free(shallow);
	free(full);
	free(up);
	unit_rmtree(dir);
}

static void test_context_local_and_overrides(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), *up = make_upstream(dir);
	char *head = out(up, "git rev-parse HEAD");
	tf_context *ctx;
	char *local[] = { "HOME=/nonexistent", NULL };

	assert_int_equal(tf_context_detect(&ctx, up, local, NULL), 0);
	assert_string_equal(ctx->commit, head);
	assert_string_equal(ctx->branch, "main");
	assert_true(ctx->on_default_branch);
	assert_null(ctx->head_sha);
	assert_int_equal(ctx->pr, 0);
	tf_profile *p;
	tf_profile_new(&p);
	tf_context_apply_meta(p, ctx);
	assert_string_equal(tf_profile_meta(p, "ci"), "local");
	assert_null(tf_profile_meta(p, "pr"));
	assert_null(tf_profile_meta(p, "head_sha"));
	assert_null(tf_profile_meta(p, "run_url"));
	assert_string_equal(tf_profile_meta(p, "changes"), "[]");
	tf_buf json = TF_BUF_INIT;
	assert_int_equal(tf_context_to_json(&json, ctx), 0);
	assert_non_null(strstr(json.ptr, "\"pr\": null"));
	assert_non_null(strstr(json.ptr, "\"ci\": \"local\""));
	tf_buf_free(&json);
	tf_profile_free(p);
	tf_context_free(ctx);

	/* TESTFLAME_* beat git; the config's target branch beats the default */
	tf_config *cfg = tf_config_new();
	cfg->target_branch = strdup("feature");
	char *forced[] = { "TESTFLAME_COMMIT=0123456789abcdef0123456789abcdef01234567",
			   "TESTFLAME_BRANCH=release", "TESTFLAME_PR=12", NULL };
	assert_int_equal(tf_context_detect(&ctx, up, forced, cfg), 0);
	assert_string_equal(ctx->commit, "0123456789abcdef0123456789abcdef01234567");
	assert_string_equal(ctx->branch, "release");
	assert_int_equal(ctx->pr, 12);
	assert_string_equal(ctx->base_branch, "feature");
	assert_false(ctx->on_default_branch);
	tf_context_free(ctx);
	tf_config_free(cfg);

	char *bad[] = { "TESTFLAME_PR=x", NULL };
	assert_int_equal(tf_context_detect(&ctx, up, bad, NULL), TF_EUSAGE);
	assert_null(ctx);
	free(head);
	free(up);
	unit_rmtree(dir);
}

static void test_not_a_repository(void **state)
{
	(void)state;
	char *dir = unit_tmpdir();
	tf_context *ctx;
	char *envp[] = { "CI=true", "TESTFLAME_COMMIT=abc", NULL };
	tf_repo *r;

	assert_int_equal(tf_repo_open(&r, dir), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "not a git repository"));
	assert_int_equal(tf_context_detect(&ctx, dir, envp, NULL), 0);
	assert_null(ctx->git);
	assert_string_equal(ctx->commit, "abc");
	assert_int_equal(ctx->warnings.n, 1);
	assert_non_null(strstr(ctx->warnings.v[0], "is not in a git repository"));
	tf_profile *p;
	tf_profile_new(&p);
	tf_context_apply_meta(p, ctx);
	assert_null(tf_profile_meta(p, "dirty"));
	assert_null(tf_profile_meta(p, "changes"));
	assert_string_equal(tf_profile_meta(p, "ci"), "generic");
	tf_profile_free(p);
	tf_context_free(ctx);
	unit_rmtree(dir);
}

static void test_changes_json(void **state)
{
	(void)state;
	tf_changes c = { 0 }, back;
	tf_changed_file f = { 0 };
	tf_line_range r1 = { 3, 2 }, r2 = { 10, 1 };
	tf_buf b = TF_BUF_INIT;
	bool cut;

	f.path = strdup("src/a \"quoted\".c");
	f.status = 'M';
	tf_vec_push(&f.lines, r1);
	tf_vec_push(&f.lines, r2);
	tf_vec_push(&c.files, f);
	memset(&f, 0, sizeof(f));
	f.path = strdup("b.c");
	f.old_path = strdup("old/b.c");
	f.status = 'R';
	tf_vec_push(&c.files, f);

	assert_int_equal(tf_changes_to_json(&b, &c, 0, &cut), 0);
	assert_false(cut);
	assert_string_equal(b.ptr,
			    "[{\"path\":\"src/a \\\"quoted\\\".c\",\"status\":\"M\",\"lines\":[[3,4],[10,10]]},"
			    "{\"path\":\"b.c\",\"old_path\":\"old/b.c\",\"status\":\"R\",\"lines\":[]}]");
	assert_int_equal(tf_changes_from_json(&back, b.ptr), 0);
	assert_int_equal(back.files.n, 2);
	assert_string_equal(back.files.v[0].path, "src/a \"quoted\".c");
	assert_int_equal(back.files.v[0].lines.v[0].start, 3);
	assert_int_equal(back.files.v[0].lines.v[0].count, 2);
	assert_string_equal(back.files.v[1].old_path, "old/b.c");
	assert_int_equal(back.files.v[1].status, 'R');
	assert_true(tf_changes_touch(&back, "/home/ci/w/src/a \"quoted\".c", 4));
	assert_false(tf_changes_touch(&back, "/home/ci/w/src/a \"quoted\".c", 5));
	assert_true(tf_changes_touch(&back, "src/a \"quoted\".c", 10));
	assert_null(tf_changes_find(&back, "/x/xb.c")); /* not a path boundary */
	assert_non_null(tf_changes_find(&back, "/x/b.c"));
	tf_changes_free(&back);

	/* cut to fit: the first file only, and it says so */
	tf_buf_clear(&b);
	assert_int_equal(tf_changes_to_json(&b, &c, 80, &cut), 0);
	assert_true(cut);
	assert_int_equal(tf_changes_from_json(&back, b.ptr), 0);
	assert_int_equal(back.files.n, 1);
	tf_changes_free(&back);

	assert_int_equal(tf_changes_from_json(&back, "{\"path\":1}"), TF_EINVAL);
	assert_int_equal(tf_changes_from_json(&back, "[{\"lines\":[]}]"), TF_EINVAL);
	assert_int_equal(tf_changes_from_json(&back, "[1,"), TF_EINVAL);
	tf_buf_free(&b);
	tf_changes_free(&c);
}

static void test_fetch_hints(void **state)
{
	(void)state;
	char *h = tf_git_fetch_hint(TF_CI_GITHUB, "main", true);
	assert_string_equal(h, "run 'git fetch --unshallow origin +refs/heads/main:refs/remotes/origin/main' "
			       "(or 'git fetch --deepen=N origin' for N more commits), or set "
			       "'fetch-depth: 0' on actions/checkout");
	free(h);
	h = tf_git_fetch_hint(TF_CI_LOCAL, "dev", false);
	assert_string_equal(h, "run 'git fetch origin +refs/heads/dev:refs/remotes/origin/dev'");
	free(h);
}

/* Where a run's baseline walk starts. */
static void test_baseline_start(void **state)
{
	tf_context ctx;
	char *s;
	(void)state;

	memset(&ctx, 0, sizeof(ctx));
	assert_null(tf_context_baseline_start(&ctx));
	/* on a branch: its merge-base with the target */
	ctx.commit = "head";
	ctx.merge_base = "base";
	s = tf_context_baseline_start(&ctx);
	assert_string_equal(s, "base");
	free(s);
	/* on the target itself HEAD is the merge-base: the commit before it */
	ctx.merge_base = "head";
	s = tf_context_baseline_start(&ctx);
	assert_string_equal(s, "head^");
	free(s);
	/* no merge-base known (no target branch): still HEAD's history */
	ctx.merge_base = NULL;
	s = tf_context_baseline_start(&ctx);
	assert_string_equal(s, "head^");
	free(s);
}

/* run --against's checkout of another revision: REV's files in a
 * temporary directory, the current directory's counterpart in it, builds
 * on either side, and nothing left behind. */
static void test_worktree(void **state)
{
	char *dir = unit_tmpdir(), *up = make_upstream(dir), *sub = path_in(up, "sub");
	char *tmp = path_in(dir, "tmp"), *two = out(up, "git rev-parse HEAD~1");
	char cwd[4096], *root;
	tf_worktree *wt;
	tf_buf b = TF_BUF_INIT;
	int st;
	(void)state;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	sh(up, "mkdir sub && touch sub/.keep && git add sub && git commit -qm sub && mkdir ../tmp");
	assert_int_equal(chdir(sub), 0);
	assert_int_equal(tf_worktree_create(&wt, "HEAD~2", tmp), 0);
	root = tf_xstrdup(tf_worktree_root(wt));
	assert_string_equal(tf_worktree_commit(wt), two);
	assert_int_equal(strncmp(root, tmp, strlen(tmp)), 0);
	/* HEAD~2 has no sub/ yet: its place is named all the same */
	assert_string_equal(tf_worktree_cwd(wt) + strlen(root), "/sub");
	char *f = path_in(root, "other.c"), *lib = path_in(root, "lib.c");
	assert_int_equal(tf_file_read(&b, lib), 0);
	assert_string_equal(b.ptr, "1\n2\n3\n4\n5\n6\n7\n8\n9\n");
	assert_int_not_equal(access(f, F_OK), 0); /* main's third commit is not there */
	/* builds run in the checkout, or in this work tree */
	assert_int_equal(tf_worktree_run(wt, "echo built > b.out", false), 0);
	assert_int_equal(tf_worktree_run(wt, "pwd > here.out", true), 0);
	char *bo = path_in(root, "b.out"), *ho = path_in(up, "here.out");
	assert_int_equal(access(bo, F_OK), 0);
	assert_int_equal(access(ho, F_OK), 0);
	st = tf_worktree_run(wt, "exit 7", false);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 7);
	/* the repository's own checkout was not touched */
	free(f);
	f = out(up, "git status --porcelain --untracked-files=no | wc -l");
	assert_string_equal(f, "0");
	assert_int_equal(tf_worktree_remove(wt), 0);
	assert_int_not_equal(access(root, F_OK), 0);
	tf_worktree_free(wt);
	/* an unknown revision; a bare repository has no work tree to build beside */
	assert_int_equal(tf_worktree_create(&wt, "nope", tmp), TF_ENOTFOUND);
	assert_null(wt);
	sh(dir, "git clone -q --bare up bare.git");
	char *bare = path_in(dir, "bare.git");
	assert_int_equal(chdir(bare), 0);
	assert_int_equal(tf_worktree_create(&wt, "HEAD", tmp), TF_EUNSUPPORTED);
	assert_non_null(strstr(tf_error_last(), "bare"));
	/* and nothing was left in the temporary directory */
	free(f);
	f = out(tmp, "ls | wc -l");
	assert_string_equal(f, "0");
	assert_int_equal(chdir(cwd), 0);
	free(f);
	free(lib);
	free(bo);
	free(ho);
	free(bare);
	free(root);
	free(two);
	free(tmp);
	free(sub);
	free(up);
	tf_buf_free(&b);
	unit_rmtree(dir);
}

/* The machine a run ran on: read from the kernel's files, kept as env.*,
 * and what differs between two runs said in one line. */
static void test_environment(void **state)
{
	(void)state;
	tf_env_facts f;
	char *envp[] = { (char *)"ImageOS=ubuntu24", (char *)"ImageVersion=20261101.1",
			 (char *)"CI_RUNNER_TAGS=", (char *)"RUNNER_NAME=GitHub Actions 7", NULL };
	assert_int_equal(tf_environment_detect(&f, envp), 0);
	assert_non_null(tf_env_facts_get(&f, "cpus"));
	assert_true(atoi(tf_env_facts_get(&f, "cpus")) >= 1);
	assert_non_null(tf_env_facts_get(&f, "kernel"));
	assert_non_null(tf_env_facts_get(&f, "memory"));
	/* the image, not the one machine's name */
	assert_string_equal(tf_env_facts_get(&f, "runner"), "ubuntu24 20261101.1");
	tf_env_facts_free(&f);

	tf_profile *a, *b;
	tf_profile_new(&a);
	tf_profile_new(&b);
	tf_profile_set_meta(a, "env.cpu", "AMD EPYC 7763");
	tf_profile_set_meta(b, "env.cpu", "Intel Xeon 8370C");
	tf_profile_set_meta(a, "env.cpus", "2");
	tf_profile_set_meta(b, "env.cpus", "2");
	tf_profile_set_meta(a, "env.cpu_flags", "1111");
	tf_profile_set_meta(b, "env.cpu_flags", "2222");
	tf_profile_set_meta(a, "env.cores", "2");     /* only one side says */
	tf_buf d = TF_BUF_INIT;
	tf_environment_diff(&d, a, b);
	assert_string_equal(d.ptr, "cpu 'AMD EPYC 7763' vs 'Intel Xeon 8370C'; CPU feature flags differ");
	tf_buf_clear(&d);
	tf_environment_diff(&d, a, a);
	assert_int_equal(d.len, 0);
	tf_buf_free(&d);
	tf_profile_free(a);
	tf_profile_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_branch_fork_point_and_changes),
		cmocka_unit_test(test_dirty_and_untracked),
		cmocka_unit_test(test_detached_head),
		cmocka_unit_test(test_merge_and_first_parent_walk),
		cmocka_unit_test(test_remote_tracking_preferred),
		cmocka_unit_test(test_default_branch_sources),
		cmocka_unit_test(test_unborn),
		cmocka_unit_test(test_shallow_clone),
		cmocka_unit_test(test_github_pr_merge_commit),
		cmocka_unit_test(test_context_local_and_overrides),
		cmocka_unit_test(test_not_a_repository),
		cmocka_unit_test(test_changes_json),
		cmocka_unit_test(test_fetch_hints),
		cmocka_unit_test(test_baseline_start),
		cmocka_unit_test(test_worktree),
		cmocka_unit_test(test_environment),
	};
	int rc;

	home = unit_tmpdir();
	unit_git_env(home);
	rc = cmocka_run_group_tests(tests, NULL, NULL);
	unit_rmtree(home);
	return rc;
}
