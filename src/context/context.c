/*
 * context.c - one run's context: the CI environment and the git facts
 * resolved into the tags a run file carries (SPEC §5), and their JSON for
 * `show --json`.
 *
 * Precedence: TESTFLAME_* variables, then git (what was really measured),
 * then the CI's word. Two exceptions where CI knows better than the
 * checkout: the branch (CI checkouts are often a detached HEAD) and the
 * target branch of a PR/MR.
 */
#include "testflame/context.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The changed lines kept in a run file; a huge diff is cut, and says so. */
#define CHANGES_META_MAX (64 * 1024)

const char *const tf_context_meta_keys[] = {
	"ci", "repository", "commit", "head_sha", "branch", "dirty", "shallow",
	"default_branch", "base_branch", "merge_base", "pr", "run_url",
	"changes", "changes_truncated", NULL,
};

#define warn(ctx, ...) tf_msglist_pushf(&(ctx)->warnings, __VA_ARGS__)

static const char *first(const char *a, const char *b)
{
	return a ? a : b;
}

static void collect_git(tf_context *ctx, const char *path, const tf_config *cfg)
{
	tf_ci *ci = ctx->ci;
	tf_git_opts o = { 0 };
	tf_repo *repo;
	int rc = tf_repo_open(&repo, path);

	if (rc == TF_ENOTFOUND) {
		char cwd[4096];
		if (!path)
			path = getcwd(cwd, sizeof(cwd)) ? cwd : ".";
		warn(ctx, "'%s' is not in a git repository: the run carries no commit, and no "
			  "baseline is found or kept in git (run inside the project's git checkout, "
			  "or keep baselines with --store dir:PATH)", path);
		return;
	}
	if (rc < 0) {
		warn(ctx, "%s", tf_error_last());
		return;
	}
	o.provider = ci->provider;
	o.default_branch_hint = ci->default_branch;
	o.base_sha_hint = ci->base_sha;
	o.target_branch = ci->base_branch;
	if (!o.target_branch && cfg)
		o.target_branch = cfg->target_branch;
	if (!o.target_branch && ci->default_branch_forced)
		o.target_branch = ci->default_branch;
	rc = tf_git_collect(&ctx->git, repo, &o);
	if (rc < 0)
		warn(ctx, "%s", tf_error_last());
	else
		for (size_t i = 0; i < ctx->git->problems.n; i++)
			warn(ctx, "%s", ctx->git->problems.v[i]);
	tf_repo_free(repo);
}

int tf_context_detect(tf_context **out, const char *path, char *const *envp,
		      const tf_config *cfg)
{
	tf_context *ctx = tf_xcalloc(1, sizeof(*ctx));
	tf_ci *ci;
	tf_git *g;
	int rc;

	*out = NULL;
	rc = tf_ci_detect(&ctx->ci, envp);
	if (rc < 0) {
		free(ctx);
		return rc;
	}
	ci = ctx->ci;
	for (size_t i = 0; i < ci->warnings.n; i++)
		warn(ctx, "%s", ci->warnings.v[i]);
	collect_git(ctx, path, cfg);
	g = ctx->git;
	tf_environment_detect(&ctx->env, envp);

	ctx->commit = ci->commit_forced ? ci->commit : first(g ? g->commit : NULL, ci->commit);
	ctx->branch = first(ci->branch, g ? g->branch : NULL);
	ctx->default_branch = ci->default_branch_forced ? ci->default_branch
			      : first(g ? g->default_branch : NULL, ci->default_branch);
	if (g)
		ctx->base_branch = g->target_branch;
	else
		ctx->base_branch = first(ci->base_branch, first(cfg ? cfg->target_branch : NULL,
								ctx->default_branch));
	ctx->merge_base = g ? g->merge_base : NULL;
	ctx->repository = first(ci->repository, g ? g->repository : NULL);
	ctx->run_url = ci->run_url;
	ctx->pr = ci->pr;
	ctx->dirty = g && g->dirty;
	ctx->shallow = g && g->shallow;
	if (ci->head_sha && (!ctx->commit || strcmp(ci->head_sha, ctx->commit) != 0))
		ctx->head_sha = ci->head_sha;
	ctx->on_default_branch = !ctx->pr && ctx->branch && ctx->default_branch &&
				 strcmp(ctx->branch, ctx->default_branch) == 0;
	*out = ctx;
	return 0;
}

bool tf_context_first_commit(const tf_context *ctx)
{
	/* only HEAD's parents are known: a forced commit may be another */
	return ctx->git && ctx->git->root && ctx->commit && ctx->git->commit &&
	       strcmp(ctx->commit, ctx->git->commit) == 0;
}

char *tf_context_baseline_start(const tf_context *ctx)
{
	if (tf_context_first_commit(ctx))
		return NULL;
	if (ctx->merge_base && ctx->commit && strcmp(ctx->merge_base, ctx->commit) != 0)
		return tf_xstrdup(ctx->merge_base);
	if (ctx->commit)
		return tf_xasprintf("%s^", ctx->commit);
	return NULL;
}

void tf_context_free(tf_context *ctx)
{
	if (!ctx)
		return;
	tf_ci_free(ctx->ci);
	tf_git_free(ctx->git);
	tf_msglist_free(&ctx->warnings);
	tf_env_facts_free(&ctx->env);
	free(ctx);
}

/* ---- metadata ------------------------------------------------------------ */

static void meta(tf_profile *p, const char *key, const char *value)
{
	if (value && *value)
		tf_profile_set_meta(p, key, value);
}

void tf_context_apply_meta(tf_profile *p, const tf_context *ctx)
{
	char num[32];

	meta(p, "ci", tf_ci_provider_name(ctx->ci->provider));
	meta(p, "repository", ctx->repository);
	meta(p, "commit", ctx->commit);
	meta(p, "head_sha", ctx->head_sha);
	meta(p, "branch", ctx->branch);
	if (ctx->git) {
		meta(p, "dirty", ctx->dirty ? "true" : "false");
		meta(p, "shallow", ctx->shallow ? "true" : "false");
	}
	meta(p, "default_branch", ctx->default_branch);
	meta(p, "base_branch", ctx->base_branch);
	meta(p, "merge_base", ctx->merge_base);
	if (ctx->pr > 0) {
		snprintf(num, sizeof(num), "%ld", ctx->pr);
		meta(p, "pr", num);
	}
	meta(p, "run_url", ctx->run_url);
	for (size_t i = 0; i < ctx->env.n; i++) {
		char *key = tf_xasprintf("env.%s", ctx->env.v[i].key);
		meta(p, key, ctx->env.v[i].value);
		free(key);
	}
	if (ctx->git && ctx->git->changes_known) {
		tf_buf b = TF_BUF_INIT;
		bool cut = false;
		if (tf_changes_to_json(&b, &ctx->git->changes, CHANGES_META_MAX, &cut) == 0) {
			meta(p, "changes", b.ptr);
			if (cut)
				meta(p, "changes_truncated", "true");
		}
		tf_buf_free(&b);
	}
}

/* ---- JSON ---------------------------------------------------------------- */

static json_t *typed(const char *key, const char *v)
{
	if (!v)
		return json_null();
	if (strcmp(key, "dirty") == 0 || strcmp(key, "shallow") == 0 ||
	    strcmp(key, "changes_truncated") == 0)
		return json_boolean(strcmp(v, "true") == 0);
	if (strcmp(key, "pr") == 0) {
		char *end;
		long long n = strtoll(v, &end, 10);
		return *end || n <= 0 ? json_string(v) : json_integer(n);
	}
	if (strcmp(key, "changes") == 0) {
		json_t *arr = json_loads(v, 0, NULL);
		return arr && json_is_array(arr) ? arr : (json_decref(arr), json_null());
	}
	return json_string(v);
}

int tf_context_meta_to_json(tf_buf *out, const tf_profile *p)
{
	json_t *o = json_object();
	char *s;

	for (const char *const *k = tf_context_meta_keys; *k; k++) {
		const char *v = tf_profile_meta(p, *k);
		json_t *j;
		if (!v && (strcmp(*k, "changes") == 0 || strcmp(*k, "changes_truncated") == 0))
			continue;
		j = typed(*k, v);
		/* metadata from a foreign writer need not be UTF-8 */
		json_object_set_new(o, *k, j ? j : json_null());
	}
	s = json_dumps(o, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	json_decref(o);
	if (!s)
		return tf_error_set(TF_EINVAL, "cannot encode the run's context as JSON");
	tf_buf_puts(out, s);
	free(s);
	return 0;
}

int tf_context_to_json(tf_buf *out, const tf_context *ctx)
{
	tf_profile *p;
	int rc;

	tf_profile_new(&p);
	tf_context_apply_meta(p, ctx);
	rc = tf_context_meta_to_json(out, p);
	tf_profile_free(p);
	return rc;
}
