/*
 * git.c - the git side of a run's context, through libgit2: HEAD, branch,
 * dirty flag, default branch, the merge-base with the target branch and the
 * lines changed since, plus a small repository handle (resolve, parents,
 * first-parent walk) for the modules that look for baselines in history.
 *
 * CI checkouts are often shallow and fetch one ref only, so every piece of
 * history may be missing. Nothing here fails for that: what cannot be
 * found stays NULL and a one-line problem says what is missing and the exact
 * command or CI setting that fetches it. libgit2's errors stop at this file,
 * through the boundary the store shares (testflame/git.h: tf_git_error turns
 * them into ours, credentials scrubbed).
 */
#include "testflame/git.h"
#include "testflame/context.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tf_repo {
	git_repository *repo;
	char *remote; /* "origin", or the only remote there is */
};

/* ---- repository handle ------------------------------------------------- */

static char *oid_hex(const git_oid *oid)
{
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof(hex), oid);
	return tf_xstrdup(hex);
}

/*
 * Remotes are read from the configuration directly: git_remote_list() and
 * git_remote_lookup() of libgit2 1.5 leak their regex match data (pcre2)
 * on every call.
 */
struct remotes {
	bool origin;
	unsigned count;
	char *first;
};

static int on_config(const git_config_entry *e, void *payload)
{
	struct remotes *r = payload;
	size_t n = strlen(e->name);
	if (strncmp(e->name, "remote.", 7) == 0 && n > 11 && strcmp(e->name + n - 4, ".url") == 0) {
		if (n - 11 == 6 && strncmp(e->name + 7, "origin", 6) == 0)
			r->origin = true;
		if (r->count++ == 0)
			r->first = tf_xstrndup(e->name + 7, n - 11);
	}
	return 0;
}

/* "origin", or the only remote there is. */
static char *pick_remote(git_repository *repo)
{
	struct remotes r = { 0 };
	git_config *cfg;

	if (git_repository_config_snapshot(&cfg, repo) < 0)
		return NULL;
	git_config_foreach(cfg, on_config, &r);
	git_config_free(cfg);
	if (r.origin) {
		free(r.first);
		return tf_xstrdup("origin");
	}
	if (r.count == 1)
		return r.first;
	free(r.first);
	return NULL;
}

static char *remote_url(tf_repo *r)
{
	git_config *cfg;
	git_buf buf = { 0 };
	char *key, *url = NULL;

	if (!r->remote || git_repository_config_snapshot(&cfg, r->repo) < 0)
		return NULL;
	key = tf_xasprintf("remote.%s.url", r->remote);
	if (git_config_get_string_buf(&buf, cfg, key) == 0 && buf.ptr)
		url = tf_xstrdup(buf.ptr);
	git_buf_dispose(&buf);
	free(key);
	git_config_free(cfg);
	return url;
}

int tf_repo_open(tf_repo **out, const char *path)
{
	git_repository *repo = NULL;
	tf_repo *r;
	int rc;

	*out = NULL;
	if ((rc = tf_git_open(&repo, path)))
		return rc;
	r = tf_xcalloc(1, sizeof(*r));
	r->repo = repo;
	r->remote = pick_remote(repo);
	*out = r;
	return 0;
}

void tf_repo_free(tf_repo *r)
{
	if (!r)
		return;
	git_repository_free(r->repo);
	free(r->remote);
	free(r);
}

const char *tf_repo_workdir(const tf_repo *r)
{
	return git_repository_workdir(r->repo);
}

const char *tf_repo_gitdir(const tf_repo *r)
{
	return git_repository_path(r->repo);
}

bool tf_repo_is_shallow(tf_repo *r)
{
	return git_repository_is_shallow(r->repo) == 1;
}

static int lookup_commit(git_commit **out, tf_repo *r, const char *rev)
{
	git_object *obj = NULL, *peeled = NULL;
	int rc = git_revparse_single(&obj, r->repo, rev);
	if (rc < 0)
		return tf_git_error(rc, 0, "cannot resolve '%s'", rev);
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc < 0)
		return tf_git_error(rc, 0, "'%s' does not name a commit", rev);
	*out = (git_commit *)peeled;
	return 0;
}

int tf_repo_resolve(char **out, tf_repo *r, const char *rev)
{
	git_commit *c;
	int rc = lookup_commit(&c, r, rev);
	*out = NULL;
	if (rc < 0)
		return rc;
	*out = oid_hex(git_commit_id(c));
	git_commit_free(c);
	return 0;
}

int tf_repo_parents(char ***out, tf_repo *r, const char *commit)
{
	git_commit *c;
	unsigned n;
	int rc = lookup_commit(&c, r, commit);

	*out = NULL;
	if (rc < 0)
		return rc;
	n = git_commit_parentcount(c);
	*out = tf_xcalloc(n + 1, sizeof(char *));
	for (unsigned i = 0; i < n; i++)
		(*out)[i] = oid_hex(git_commit_parent_id(c, i));
	git_commit_free(c);
	return 0;
}

int tf_repo_export(tf_repo *r, const char *rev, const char *dir)
{
	git_checkout_options co;
	git_commit *c;
	git_tree *tree = NULL;
	int rc = lookup_commit(&c, r, rev);

	if (rc < 0)
		return rc;
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	rc = git_commit_tree(&tree, c);
	if (rc < 0) {
		rc = tf_git_error(rc, 0, "cannot read the tree of '%s'", rev);
		goto done;
	}
	/* a plain copy of the tree: the repository's index and HEAD stay as they are */
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX;
	co.target_directory = dir;
	rc = git_checkout_tree(r->repo, (git_object *)tree, &co);
	if (rc < 0)
		rc = tf_git_error(rc, 0, "cannot check '%s' out into '%s'", rev, dir);
done:
	git_tree_free(tree);
	git_commit_free(c);
	return rc;
}

struct walk_hex {
	tf_repo_walk_fn fn;
	void *payload;
};

static int walk_hex(const git_oid *commit, unsigned distance, void *payload)
{
	struct walk_hex *w = payload;
	char hex[GIT_OID_HEXSZ + 1];
	git_oid_tostr(hex, sizeof(hex), commit);
	return w->fn(hex, distance, w->payload);
}

int tf_repo_walk_first_parent(tf_repo *r, const char *start, unsigned max,
			      tf_repo_walk_fn fn, void *payload, bool *truncated)
{
	struct walk_hex w = { fn, payload };
	tf_git_walk_end end = TF_GIT_WALK_STOPPED;
	git_commit *c;
	int rc = lookup_commit(&c, r, start);

	if (truncated)
		*truncated = false;
	if (rc < 0)
		return rc;
	rc = tf_git_walk_first_parent(r->repo, git_commit_id(c), max, walk_hex, &w, &end);
	git_commit_free(c);
	if (truncated)
		*truncated = end == TF_GIT_WALK_SHALLOW;
	return rc;
}

struct walk_to {
	const char *commit;
	long found;
};

static int walk_to(const char *commit, unsigned distance, void *payload)
{
	struct walk_to *w = payload;
	if (strcmp(commit, w->commit) != 0)
		return 0;
	w->found = distance;
	return 1;
}

long tf_repo_distance(tf_repo *r, const char *from, const char *to, unsigned max)
{
	struct walk_to w = { NULL, -1 };
	char *target = NULL;

	if (!from || !to || tf_repo_resolve(&target, r, to) != 0) {
		tf_error_clear();
		return -1;
	}
	w.commit = target;
	if (tf_repo_walk_first_parent(r, from, max, walk_to, &w, NULL) != 0)
		tf_error_clear();
	free(target);
	return w.found;
}

/* ---- hints ------------------------------------------------------------- */

char *tf_git_fetch_hint(tf_ci_provider provider, const char *target, bool shallow)
{
	tf_buf b = TF_BUF_INIT;

	tf_buf_puts(&b, "run 'git fetch");
	if (shallow)
		tf_buf_puts(&b, " --unshallow");
	tf_buf_puts(&b, " origin");
	if (target)
		tf_buf_printf(&b, " +refs/heads/%s:refs/remotes/origin/%s", target, target);
	tf_buf_puts(&b, "'");
	if (shallow)
		tf_buf_puts(&b, " (or 'git fetch --deepen=N origin' for N more commits)");
	switch (provider) {
	case TF_CI_GITHUB:
		tf_buf_puts(&b, ", or set 'fetch-depth: 0' on actions/checkout");
		break;
	case TF_CI_GITLAB:
		tf_buf_puts(&b, ", or set the CI/CD variable 'GIT_DEPTH: 0'");
		break;
	default:
		break;
	}
	return tf_buf_detach(&b);
}

/* ---- collecting the facts ---------------------------------------------- */

#define problem(g, ...) tf_msglist_pushf(&(g)->problems, __VA_ARGS__)

static bool ref_oid(git_oid *out, git_repository *repo, const char *name)
{
	return git_reference_name_to_id(out, repo, name) == 0;
}

/*
 * The ref naming branch `name`: the remote-tracking branch first (what the
 * target really is, even when a stale local branch exists), then the local
 * branch, then anything git can resolve (a tag, a SHA, "origin/main").
 */
static char *find_branch(git_oid *oid, tf_repo *r, const char *name)
{
	char *ref;
	git_object *obj;

	if (strncmp(name, "refs/", 5) == 0)
		return ref_oid(oid, r->repo, name) ? tf_xstrdup(name) : NULL;
	if (r->remote) {
		ref = tf_xasprintf("refs/remotes/%s/%s", r->remote, name);
		if (ref_oid(oid, r->repo, ref))
			return ref;
		free(ref);
	}
	ref = tf_xasprintf("refs/heads/%s", name);
	if (ref_oid(oid, r->repo, ref))
		return ref;
	free(ref);
	if (git_revparse_single(&obj, r->repo, name) == 0) {
		git_object *c;
		if (git_object_peel(&c, obj, GIT_OBJECT_COMMIT) == 0) {
			git_oid_cpy(oid, git_object_id(c));
			git_object_free(c);
			git_object_free(obj);
			return tf_xstrdup(name);
		}
		git_object_free(obj);
	}
	return NULL;
}

static bool branch_exists(tf_repo *r, const char *name)
{
	git_oid oid;
	char *ref = find_branch(&oid, r, name);
	bool ok = ref && strncmp(ref, "refs/", 5) == 0;
	free(ref);
	return ok;
}

static void find_default_branch(tf_git *g, tf_repo *r, const char *hint)
{
	git_reference *ref;
	git_config *cfg;
	git_buf buf = { 0 };
	git_branch_iterator *it;

	if (r->remote) {
		char *name = tf_xasprintf("refs/remotes/%s/HEAD", r->remote);
		if (git_reference_lookup(&ref, r->repo, name) == 0) {
			const char *t = git_reference_symbolic_target(ref);
			size_t plen = strlen(name) - 4; /* "refs/remotes/origin/" */
			if (t && strncmp(t, name, plen) == 0 && t[plen]) {
				g->default_branch = tf_xstrdup(t + plen);
				g->default_branch_source = "origin/HEAD";
			}
			git_reference_free(ref);
		}
		free(name);
		if (g->default_branch)
			return;
	}
	if (hint) {
		g->default_branch = tf_xstrdup(hint);
		g->default_branch_source = "ci";
		return;
	}
	if (git_repository_config_snapshot(&cfg, r->repo) == 0) {
		if (git_config_get_string_buf(&buf, cfg, "init.defaultBranch") == 0 &&
		    buf.ptr && branch_exists(r, buf.ptr)) {
			g->default_branch = tf_xstrdup(buf.ptr);
			g->default_branch_source = "init.defaultBranch";
		}
		git_buf_dispose(&buf);
		git_config_free(cfg);
		if (g->default_branch)
			return;
	}
	static const char *const usual[] = { "main", "master" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(usual); i++) {
		if (branch_exists(r, usual[i])) {
			g->default_branch = tf_xstrdup(usual[i]);
			g->default_branch_source = usual[i];
			return;
		}
	}
	/* A purely local repository with a single branch: that one. Not with a
	 * remote: a CI clone's only branch is the one being built. */
	if (!r->remote && git_branch_iterator_new(&it, r->repo, GIT_BRANCH_LOCAL) == 0) {
		git_branch_t type;
		const char *name = NULL;
		int count = 0;
		char *only = NULL;
		while (git_branch_next(&ref, &type, it) == 0) {
			if (count++ == 0 && git_branch_name(&name, ref) == 0)
				only = tf_xstrdup(name);
			git_reference_free(ref);
		}
		git_branch_iterator_free(it);
		if (count == 1) {
			g->default_branch = only;
			g->default_branch_source = "only branch";
		} else {
			free(only);
		}
	}
}

/*
 * "owner/name" from a remote URL with a host: "https://host/owner/name.git",
 * "ssh://git@host:22/owner/name", "git@host:owner/name.git". Local paths
 * and file:// URLs name no repository.
 */
static char *repository_from_url(const char *url)
{
	const char *p = strstr(url, "://"), *path;
	size_t n;

	if (p) {
		if (strncmp(url, "file:", 5) == 0)
			return NULL;
		path = strchr(p + 3, '/');
	} else {
		/* scp-like: a colon before any slash */
		const char *colon = strchr(url, ':'), *slash = strchr(url, '/');
		if (!colon || (slash && slash < colon))
			return NULL;
		path = colon;
	}
	if (!path)
		return NULL;
	while (*path == '/' || *path == ':')
		path++;
	n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	if (n > 4 && strncmp(path + n - 4, ".git", 4) == 0)
		n -= 4;
	return n && memchr(path, '/', n) ? tf_xstrndup(path, n) : NULL;
}

static void read_repository(tf_git *g, tf_repo *r)
{
	char *url = remote_url(r);
	if (url)
		g->repository = repository_from_url(url);
	free(url);
}

static int read_head(tf_git *g, tf_repo *r)
{
	git_reference *head;
	int rc;

	g->detached = git_repository_head_detached(r->repo) == 1;
	rc = git_repository_head(&head, r->repo);
	if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
		g->unborn = true;
		if (git_reference_lookup(&head, r->repo, "HEAD") == 0) {
			const char *t = git_reference_symbolic_target(head);
			if (t && strncmp(t, "refs/heads/", 11) == 0)
				g->branch = tf_xstrdup(t + 11);
			git_reference_free(head);
		}
		return 0;
	}
	if (rc < 0)
		return tf_git_error(rc, 0, "cannot read HEAD");
	if (git_reference_target(head)) {
		git_commit *c;
		g->commit = oid_hex(git_reference_target(head));
		if (git_commit_lookup(&c, r->repo, git_reference_target(head)) == 0) {
			g->root = git_commit_parentcount(c) == 0;
			git_commit_free(c);
		}
	}
	if (!g->detached && git_reference_is_branch(head))
		g->branch = tf_xstrdup(git_reference_shorthand(head));
	git_reference_free(head);
	return 0;
}

static int read_dirty(tf_git *g, tf_repo *r, bool untracked)
{
	git_status_options opts;
	git_status_list *list;
	int rc;

	git_status_options_init(&opts, GIT_STATUS_OPTIONS_VERSION);
	if (git_repository_is_bare(r->repo))
		return 0;
	opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
	opts.flags = GIT_STATUS_OPT_EXCLUDE_SUBMODULES;
	if (untracked)
		opts.flags |= GIT_STATUS_OPT_INCLUDE_UNTRACKED;
	rc = git_status_list_new(&list, r->repo, &opts);
	if (rc < 0)
		return tf_git_error(rc, 0, "cannot read the status of the work tree");
	g->dirty = git_status_list_entrycount(list) > 0;
	git_status_list_free(list);
	return 0;
}

/* ---- the diff merge-base..HEAD ------------------------------------------ */

static tf_changed_file *last_file(tf_changes *c)
{
	return c->files.n ? &c->files.v[c->files.n - 1] : NULL;
}

static int on_file(const git_diff_delta *d, float progress, void *payload)
{
	tf_changes *c = payload;
	tf_changed_file f = { 0 };
	(void)progress;

	f.status = git_diff_status_char(d->status);
	if (d->status == GIT_DELTA_DELETED) {
		f.path = tf_xstrdup(d->old_file.path);
	} else {
		f.path = tf_xstrdup(d->new_file.path);
		if ((d->status == GIT_DELTA_RENAMED || d->status == GIT_DELTA_COPIED) &&
		    d->old_file.path)
			f.old_path = tf_xstrdup(d->old_file.path);
	}
	f.binary = (d->flags & GIT_DIFF_FLAG_BINARY) != 0;
	tf_vec_push(&c->files, f);
	return 0;
}

static int on_binary(const git_diff_delta *d, const git_diff_binary *bin, void *payload)
{
	tf_changed_file *f = last_file(payload);
	(void)d;
	(void)bin;
	if (f)
		f->binary = true;
	return 0;
}

static int on_hunk(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	tf_changed_file *f = last_file(payload);
	tf_line_range *prev;
	(void)d;

	if (!f || h->new_lines <= 0)
		return 0; /* a pure deletion leaves no line in the new version */
	prev = f->lines.n ? &f->lines.v[f->lines.n - 1] : NULL;
	if (prev && prev->start + prev->count >= (uint32_t)h->new_start) {
		uint32_t end = TF_MAX(prev->start + prev->count,
				      (uint32_t)(h->new_start + h->new_lines));
		prev->count = end - prev->start;
	} else {
		tf_line_range lr = { (uint32_t)h->new_start, (uint32_t)h->new_lines };
		tf_vec_push(&f->lines, lr);
	}
	return 0;
}

static int diff_commits(tf_changes *out, tf_repo *r, const git_oid *base, const git_oid *head)
{
	git_commit *cb = NULL, *ch = NULL;
	git_tree *tb = NULL, *th = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	git_diff_find_options fopts;
	int rc;

	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&fopts, GIT_DIFF_FIND_OPTIONS_VERSION);
	/* changed lines only: no context, no merging of nearby hunks */
	opts.context_lines = 0;
	opts.interhunk_lines = 0;
	if ((rc = git_commit_lookup(&cb, r->repo, base)) < 0 ||
	    (rc = git_commit_lookup(&ch, r->repo, head)) < 0 ||
	    (rc = git_commit_tree(&tb, cb)) < 0 ||
	    (rc = git_commit_tree(&th, ch)) < 0 ||
	    (rc = git_diff_tree_to_tree(&diff, r->repo, tb, th, &opts)) < 0) {
		rc = tf_git_error(rc, 0, "cannot diff the merge-base with HEAD");
		goto done;
	}
	fopts.flags = GIT_DIFF_FIND_RENAMES;
	if ((rc = git_diff_find_similar(diff, &fopts)) < 0 ||
	    (rc = git_diff_foreach(diff, on_file, on_binary, on_hunk, NULL, out)) < 0) {
		rc = tf_git_error(rc, 0, "cannot diff the merge-base with HEAD");
		goto done;
	}
	rc = 0;
done:
	git_diff_free(diff);
	git_tree_free(tb);
	git_tree_free(th);
	git_commit_free(cb);
	git_commit_free(ch);
	return rc;
}

/* ---- merge-base ---------------------------------------------------------- */

static bool has_commit(tf_repo *r, const git_oid *oid)
{
	git_commit *c;
	if (git_commit_lookup(&c, r->repo, oid) < 0)
		return false;
	git_commit_free(c);
	return true;
}

/* HEAD is CI's merge commit of the PR into base: its first parent is the
 * base's tip, the exact point HEAD's changes apply to. Readable from HEAD's
 * own object even when the parent itself was never fetched. */
static bool first_parent_is(tf_repo *r, const git_oid *head, const char *sha)
{
	git_commit *c;
	git_oid want;
	bool yes = false;

	if (git_oid_fromstr(&want, sha) < 0 || git_commit_lookup(&c, r->repo, head) < 0)
		return false;
	if (git_commit_parentcount(c) >= 2)
		yes = git_oid_equal(git_commit_parent_id(c, 0), &want);
	git_commit_free(c);
	return yes;
}

static void find_merge_base(tf_git *g, tf_repo *r, const tf_git_opts *o)
{
	git_oid head, target, base;
	char *hint;
	bool have_base = false;
	int rc;

	if (!g->commit || git_oid_fromstr(&head, g->commit) < 0)
		return;
	if (!g->target_branch) {
		if (g->shallow)
			problem(g, "shallow clone without the default branch: no target branch to "
				   "compare with; set TESTFLAME_BASE_BRANCH or 'target_branch' in "
				   TF_CONFIG_FILE " and fetch it with 'git fetch --unshallow origin "
				   "+refs/heads/BRANCH:refs/remotes/origin/BRANCH'");
		else
			problem(g, "no target branch to compare with: the default branch is unknown "
				   "(no 'origin/HEAD', 'main' or 'master'); set 'target_branch' in "
				   TF_CONFIG_FILE ", TESTFLAME_BASE_BRANCH, or run 'git remote set-head "
				   "origin --auto'");
		return;
	}
	g->target_ref = find_branch(&target, r, g->target_branch);
	if (g->target_ref) {
		rc = git_merge_base(&base, r->repo, &head, &target);
		if (rc == 0) {
			have_base = true;
			g->merge_base_source = "git";
		}
	}
	if (!have_base && o->base_sha_hint) {
		if (first_parent_is(r, &head, o->base_sha_hint)) {
			have_base = git_oid_fromstr(&base, o->base_sha_hint) == 0;
			g->merge_base_source = "ci-merge-commit";
		} else if (o->provider == TF_CI_GITLAB) {
			have_base = git_oid_fromstr(&base, o->base_sha_hint) == 0;
			g->merge_base_source = "ci";
		}
	}
	if (have_base)
		g->merge_base = oid_hex(&base);

	if (!g->target_ref && !have_base) {
		hint = tf_git_fetch_hint(o->provider, g->target_branch, g->shallow);
		if (g->shallow)
			problem(g, "shallow clone without the target branch '%s': the merge-base, "
				   "changed lines and baseline are unknown; %s", g->target_branch, hint);
		else
			problem(g, "target branch '%s' not found (no 'refs/remotes/%s/%s' or "
				   "'refs/heads/%s'): the merge-base, changed lines and baseline are "
				   "unknown; %s", g->target_branch, r->remote ? r->remote : "origin",
				g->target_branch, g->target_branch, hint);
		free(hint);
		return;
	}
	if (!have_base) {
		if (g->shallow) {
			hint = tf_git_fetch_hint(o->provider, g->target_branch, true);
			problem(g, "shallow clone: the merge-base of HEAD and '%s' is not in the "
				   "fetched history, so changed lines and the baseline are unknown; %s",
				g->target_branch, hint);
			free(hint);
		} else {
			problem(g, "HEAD and '%s' have no common history: no merge-base, "
				   "changed lines or baseline", g->target_branch);
		}
		return;
	}
	if (!has_commit(r, &base)) {
		hint = tf_git_fetch_hint(o->provider, g->target_branch, g->shallow);
		problem(g, "%sthe merge-base %.12s (from CI) is not in the fetched history, "
			   "so changed lines are unknown; %s", g->shallow ? "shallow clone: " : "",
			g->merge_base, hint);
		free(hint);
		return;
	}
	if (diff_commits(&g->changes, r, &base, &head) < 0) {
		problem(g, "%s", tf_error_last());
		tf_changes_free(&g->changes);
		return;
	}
	g->changes_known = true;
}

int tf_git_collect(tf_git **out, tf_repo *r, const tf_git_opts *opts)
{
	static const tf_git_opts none = { 0 };
	tf_git *g = tf_xcalloc(1, sizeof(*g));
	int rc;

	*out = NULL;
	if (!opts)
		opts = &none;
	if (tf_repo_workdir(r))
		g->workdir = tf_xstrdup(tf_repo_workdir(r));
	g->shallow = tf_repo_is_shallow(r);
	if ((rc = read_head(g, r)) < 0 || (rc = read_dirty(g, r, opts->untracked_dirty)) < 0) {
		tf_git_free(g);
		return rc;
	}
	read_repository(g, r);
	find_default_branch(g, r, opts->default_branch_hint);
	if (opts->target_branch)
		g->target_branch = tf_xstrdup(opts->target_branch);
	else if (g->default_branch)
		g->target_branch = tf_xstrdup(g->default_branch);
	find_merge_base(g, r, opts);
	*out = g;
	return 0;
}

void tf_git_free(tf_git *g)
{
	if (!g)
		return;
	free(g->workdir);
	free(g->repository);
	free(g->commit);
	free(g->branch);
	free(g->default_branch);
	free(g->target_branch);
	free(g->target_ref);
	free(g->merge_base);
	tf_changes_free(&g->changes);
	tf_msglist_free(&g->problems);
	free(g);
}
