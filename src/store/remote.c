/*
 * remote.c - baselines between repositories: list a remote's
 * baseline refs (refs/testflame/runs/<commit>), fetch just the refs needed, push new ones.
 *
 * Network remotes (HTTP(S), SSH, git://) go through libgit2's transports.
 * Pushes are never forced: when the remote has a baseline for the same
 * commit that this clone lacks (another CI job pushed first), it is fetched,
 * both trees are merged into a commit that descends from the remote's, and
 * the push is tried again, a bounded number of times. The server's own
 * old-value check catches a job that slips in between.
 *
 * Remotes on the local file system (file:// or a path) are opened directly:
 * libgit2's local transport updates the remote's refs without checking
 * their old value, so two jobs could overwrite each other there. Objects are
 * copied and the ref moved with the same compare-and-swap as a local save.
 *
 * Credentials: only for HTTP(S) URLs, only when the server asks, from
 * TESTFLAME_TOKEN (user TESTFLAME_TOKEN_USER, the URL's user, or
 * x-access-token), GITHUB_TOKEN (x-access-token) or GITLAB_TOKEN (oauth2),
 * offered once per request: a rejected token ends the operation with a
 * message instead of asking again. No message ever carries a token.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

#define PUSH_ROUNDS 30

struct rref {
	git_oid commit, value;
};

struct push_status {
	char *ref, *msg;
};

struct push_item {
	size_t index;         /* into the caller's list */
	git_oid commit, value;
	bool has_expected;
	git_oid expected;
	bool ok;
	char *msg;            /* why it was rejected */
};

struct tf_remote_session {
	tf_store *s;
	git_remote *remote;     /* network remotes */
	char *url_safe;         /* for messages */
	char *local_path;       /* local remotes */
	git_repository *rrepo;
	TF_VEC(struct rref) refs;
	bool listed;
	/* credentials, reset before each network operation */
	unsigned cred_calls;
	const char *token_var;
	bool auth_failed, auth_missing, auth_other;
	bool pushing;           /* for messages: what the token must allow */
	TF_VEC(struct push_status) statuses;
};

/* ---- credentials and callbacks ---- */

static const char *pick_token(const char **var, const char **user, const char *url_user)
{
	const char *v;

	if ((v = getenv("TESTFLAME_TOKEN")) && *v) {
		const char *u = getenv("TESTFLAME_TOKEN_USER");
		*var = "TESTFLAME_TOKEN";
		*user = u && *u ? u : url_user && *url_user ? url_user : "x-access-token";
		return v;
	}
	if ((v = getenv("GITHUB_TOKEN")) && *v) {
		*var = "GITHUB_TOKEN";
		*user = "x-access-token";
		return v;
	}
	if ((v = getenv("GITLAB_TOKEN")) && *v) {
		*var = "GITLAB_TOKEN";
		*user = "oauth2";
		return v;
	}
	return NULL;
}

static int cred_cb(git_credential **out, const char *url, const char *url_user,
		   unsigned int allowed, void *payload)
{
	tf_remote_session *rs = payload;
	const char *var = NULL, *user = NULL, *token;

	if (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0) {
		rs->auth_other = true; /* SSH and the like: not ours to answer */
		return GIT_PASSTHROUGH;
	}
	if (!(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT))
		return GIT_PASSTHROUGH;
	token = pick_token(&var, &user, url_user);
	if (!token && url_user) {
		/* libgit2 tried the URL's own user-info first, and it was refused */
		rs->auth_failed = true;
		rs->token_var = NULL;
		git_error_set_str(GIT_ERROR_NET, "the server refused the credentials");
		return GIT_EAUTH;
	}
	if (!token) {
		rs->auth_missing = true;
		git_error_set_str(GIT_ERROR_NET, "the server asks for credentials");
		return GIT_EAUTH;
	}
	rs->token_var = var;
	/* asked again within one request: the server refused what we sent */
	if (rs->cred_calls++ > 0) {
		rs->auth_failed = true;
		git_error_set_str(GIT_ERROR_NET, "the server refused the credentials");
		return GIT_EAUTH;
	}
	return git_credential_userpass_plaintext_new(out, user, token);
}

static int push_ref_cb(const char *refname, const char *status, void *payload)
{
	tf_remote_session *rs = payload;
	struct push_status ps = { tf_xstrdup(refname), status ? tf_xstrdup(status) : NULL };
	tf_vec_push(&rs->statuses, ps);
	return 0;
}

static void callbacks(git_remote_callbacks *cb, tf_remote_session *rs)
{
	git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb->credentials = cred_cb;
	cb->push_update_reference = push_ref_cb;
	tf_netwatch_callbacks(cb);
	cb->payload = rs;
	rs->cred_calls = 0;
	rs->auth_failed = rs->auth_missing = rs->auth_other = false;
}

static int net_error(tf_remote_session *rs, int gitrc, const char *what)
{
	if (tf_netwatch_expired())
		return tf_error_set(TF_ERROR, "%s '%s': no answer for %u s (TESTFLAME_NET_TIMEOUT)",
				    what, rs->url_safe, tf_netwatch_seconds());
	if (rs->auth_missing)
		return tf_error_set(TF_EPERM,
			"'%s' asks for credentials: set TESTFLAME_TOKEN (or GITHUB_TOKEN, GITLAB_TOKEN)",
			rs->url_safe);
	if (rs->auth_other)
		return tf_error_set(TF_EPERM,
			"'%s' asks for credentials testflame does not handle (only tokens over HTTPS): use an HTTPS remote and TESTFLAME_TOKEN",
			rs->url_safe);
	if (rs->auth_failed || gitrc == GIT_EAUTH)
		return tf_error_set(TF_EPERM,
			"authentication to '%s' was refused (credentials from %s); check that they are valid and may %s this repository",
			rs->url_safe, rs->token_var ? rs->token_var : "the URL",
			rs->pushing ? "push to" : "read");
	return tf_git_error(gitrc, 0, "%s '%s'", what, rs->url_safe);
}

/* ---- the session ---- */

static char *percent_decode(const char *s)
{
	tf_buf b = TF_BUF_INIT;
	for (; *s; s++) {
		unsigned v;
		if (s[0] == '%' && s[1] && s[2] && sscanf(s + 1, "%2x", &v) == 1) {
			tf_buf_putc(&b, (char)v);
			s += 2;
		} else {
			tf_buf_putc(&b, *s);
		}
	}
	tf_buf_puts(&b, "");
	return tf_buf_detach(&b);
}

/* The path of a remote on this file system, or NULL for a network one. */
static char *local_path_of(const char *url, git_repository *repo)
{
	const char *colon, *slash, *base;

	if (strncmp(url, "file://", 7) == 0)
		return percent_decode(url + 7);
	if (strstr(url, "://"))
		return NULL;
	colon = strchr(url, ':');
	slash = strchr(url, '/');
	if (colon && (!slash || colon < slash))
		return NULL; /* scp-like host:path */
	if (url[0] == '/')
		return tf_xstrdup(url);
	base = git_repository_workdir(repo) ? git_repository_workdir(repo)
					    : git_repository_commondir(repo);
	return tf_xasprintf("%s%s", base, url);
}

static int no_remote(const tf_store *s)
{
	return tf_error_set(TF_EUSAGE,
		"the %s has no remote (copy the directory instead: CI cache or artifact)",
		tf_store_describe(s));
}

/* `push`: talk to the remote's push URL when it has one, for the listing
 * and the merge fetch as well, so they see what the push will meet. */
static int session_open(tf_remote_session **out, tf_store *s, bool push)
{
	tf_remote_session *rs;
	const char *url;
	int rc;

	*out = NULL;
	if (!tf_store_is_git(s))
		return no_remote(s);
	rs = tf_xcalloc(1, sizeof(*rs));
	rs->s = s;
	rc = git_remote_lookup(&rs->remote, s->repo, s->remote);
	if (rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC) {
		git_error_clear();
		if (!strpbrk(s->remote, ":/")) {
			tf_remote_session_free(rs);
			return tf_error_set(TF_ENOTFOUND,
				"no remote named '%s' in this repository ('git remote -v' lists them)",
				s->remote);
		}
		rc = git_remote_create_anonymous(&rs->remote, s->repo, s->remote);
	}
	if (rc) {
		char *safe = tf_git_scrub(s->remote);
		rc = tf_git_error(rc, TF_EINVAL, "bad remote '%s'", safe);
		free(safe);
		tf_remote_session_free(rs);
		return rc;
	}
	if (push && git_remote_pushurl(rs->remote) && *git_remote_pushurl(rs->remote)) {
		git_remote *pr = NULL;
		rc = git_remote_create_anonymous(&pr, s->repo, git_remote_pushurl(rs->remote));
		if (rc) {
			rc = tf_git_error(rc, TF_EINVAL, "bad push URL of remote '%s'", s->remote);
			tf_remote_session_free(rs);
			return rc;
		}
		git_remote_free(rs->remote);
		rs->remote = pr;
	}
	rs->pushing = push;
	url = git_remote_url(rs->remote) ? git_remote_url(rs->remote) : "";
	rs->url_safe = tf_git_scrub(url);
	rs->local_path = local_path_of(url, s->repo);
	*out = rs;
	return 0;
}

int tf_remote_session_open(tf_remote_session **out, tf_store *s)
{
	return session_open(out, s, false);
}

void tf_remote_session_free(tf_remote_session *rs)
{
	if (!rs)
		return;
	if (rs->remote) {
		if (git_remote_connected(rs->remote))
			git_remote_disconnect(rs->remote);
		git_remote_free(rs->remote);
	}
	git_repository_free(rs->rrepo);
	for (size_t i = 0; i < rs->statuses.n; i++) {
		free(rs->statuses.v[i].ref);
		free(rs->statuses.v[i].msg);
	}
	tf_vec_free(&rs->statuses);
	tf_vec_free(&rs->refs);
	free(rs->url_safe);
	free(rs->local_path);
	free(rs);
	git_error_clear();
}

static int rref_cmp(const void *a, const void *b)
{
	return git_oid_cmp(&((const struct rref *)a)->commit, &((const struct rref *)b)->commit);
}

static const git_oid *remote_value(tf_remote_session *rs, const git_oid *commit)
{
	struct rref key, *hit;
	if (!rs->refs.n)
		return NULL;
	key.commit = *commit;
	hit = bsearch(&key, rs->refs.v, rs->refs.n, sizeof(*rs->refs.v), rref_cmp);
	return hit ? &hit->value : NULL;
}

static void add_rref(tf_remote_session *rs, const char *name, const git_oid *value)
{
	struct rref r;
	if (strncmp(name, TF_STORE_REF_PREFIX, strlen(TF_STORE_REF_PREFIX)) != 0 ||
	    !tf_git_parse_id(&r.commit, name + strlen(TF_STORE_REF_PREFIX)))
		return;
	r.value = *value;
	tf_vec_push(&rs->refs, r);
}

static int open_local(tf_remote_session *rs)
{
	int rc;
	if (rs->rrepo)
		return 0;
	rc = git_repository_open_ext(&rs->rrepo, rs->local_path, GIT_REPOSITORY_OPEN_NO_SEARCH,
				     NULL);
	if (rc)
		return tf_git_error(rc, 0, "cannot open the remote repository '%s'", rs->url_safe);
	return 0;
}

/* List the remote's baseline refs (again). A network remote stays connected
 * for a download. */
static int session_ls(tf_remote_session *rs)
{
	int rc;

	rs->refs.n = 0;
	if (rs->local_path) {
		git_reference_iterator *it = NULL;
		git_reference *ref;

		if ((rc = open_local(rs)))
			return rc;
		rc = git_reference_iterator_glob_new(&it, rs->rrepo, TF_STORE_REF_PREFIX "*");
		while (!rc && (rc = git_reference_next(&ref, it)) == 0) {
			if (git_reference_target(ref))
				add_rref(rs, git_reference_name(ref), git_reference_target(ref));
			git_reference_free(ref);
		}
		git_reference_iterator_free(it);
		if (rc != GIT_ITEROVER)
			return tf_git_error(rc, 0, "cannot list the baselines of '%s'", rs->url_safe);
		git_error_clear();
	} else {
		git_remote_callbacks cb;
		git_proxy_options proxy;
		const git_remote_head **heads;
		size_t n;

		git_proxy_options_init(&proxy, GIT_PROXY_OPTIONS_VERSION);
		proxy.type = GIT_PROXY_AUTO;
		callbacks(&cb, rs);
		if (git_remote_connected(rs->remote))
			git_remote_disconnect(rs->remote);
		tf_netwatch_begin();
		rc = git_remote_connect(rs->remote, GIT_DIRECTION_FETCH, &cb, &proxy, NULL);
		tf_netwatch_end();
		if (rc)
			return net_error(rs, rc, "cannot reach");
		rc = git_remote_ls(&heads, &n, rs->remote);
		if (rc)
			return net_error(rs, rc, "cannot list the refs of");
		for (size_t i = 0; i < n; i++)
			add_rref(rs, heads[i]->name, &heads[i]->oid);
	}
	if (rs->refs.n > 1)
		qsort(rs->refs.v, rs->refs.n, sizeof(*rs->refs.v), rref_cmp);
	rs->listed = true;
	return 0;
}

static void disconnect(tf_remote_session *rs)
{
	if (rs->remote && git_remote_connected(rs->remote))
		git_remote_disconnect(rs->remote);
}

/* Copy what `dst` lacks of the history of `tip` (a baseline commit) from
 * `src`. Parents and trees go first, so a commit present in `dst` always
 * comes with everything it needs. */
static int copy_tree(git_odb *dst, git_odb *src, git_repository *srepo, const git_oid *id);

static int copy_object(git_odb *dst, git_odb *src, const git_oid *id)
{
	git_odb_object *obj = NULL;
	git_oid written;
	int rc;

	if (git_odb_exists(dst, id))
		return 0;
	if ((rc = git_odb_read(&obj, src, id)))
		return rc;
	rc = git_odb_write(&written, dst, git_odb_object_data(obj), git_odb_object_size(obj),
			   git_odb_object_type(obj));
	git_odb_object_free(obj);
	return rc;
}

static int copy_tree(git_odb *dst, git_odb *src, git_repository *srepo, const git_oid *id)
{
	git_tree *t = NULL;
	int rc;

	if (git_odb_exists(dst, id))
		return 0;
	if ((rc = git_tree_lookup(&t, srepo, id)))
		return rc;
	for (size_t i = 0, n = git_tree_entrycount(t); i < n && !rc; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(t, i);
		rc = git_tree_entry_type(e) == GIT_OBJECT_TREE
			? copy_tree(dst, src, srepo, git_tree_entry_id(e))
			: copy_object(dst, src, git_tree_entry_id(e));
	}
	git_tree_free(t);
	return rc ? rc : copy_object(dst, src, id);
}

static int copy_commit(git_odb *dst, git_odb *src, git_repository *srepo, const git_oid *id,
		       unsigned depth)
{
	git_commit *c = NULL;
	int rc;

	if (git_odb_exists(dst, id))
		return 0;
	if (depth > 10000) {
		git_error_set_str(GIT_ERROR_INVALID, "baseline history too deep");
		return GIT_ERROR;
	}
	if ((rc = git_commit_lookup(&c, srepo, id)))
		return rc;
	for (unsigned i = 0, n = git_commit_parentcount(c); i < n && !rc; i++)
		rc = copy_commit(dst, src, srepo, git_commit_parent_id(c, i), depth + 1);
	if (!rc)
		rc = copy_tree(dst, src, srepo, git_commit_tree_id(c));
	git_commit_free(c);
	return rc ? rc : copy_object(dst, src, id);
}

static int copy_objects(git_repository *dst, git_repository *src, const git_oid *tip)
{
	git_odb *dodb = NULL, *sodb = NULL;
	int rc;

	if (!(rc = git_repository_odb(&dodb, dst)) && !(rc = git_repository_odb(&sodb, src)))
		rc = copy_commit(dodb, sodb, src, tip, 0);
	git_odb_free(dodb);
	git_odb_free(sodb);
	return rc;
}

/* Bring the remote's values of `commits` into the local object database
 * (nothing else: no ref changes). Disconnects a network remote. */
static int session_download(tf_remote_session *rs, const git_oid *commits, size_t n)
{
	git_repository *repo = rs->s->repo;
	TF_VEC(char *) specs = { 0 };
	git_odb *odb = NULL;
	int rc = 0;

	if ((rc = git_repository_odb(&odb, repo))) {
		disconnect(rs);
		return tf_git_error(rc, 0, "cannot open the object database");
	}
	for (size_t i = 0; i < n; i++) {
		const git_oid *v = remote_value(rs, &commits[i]);
		char hex[TF_STORE_ID_HEX + 1];

		if (!v || git_odb_exists(odb, v))
			continue;
		if (rs->local_path) {
			if ((rc = copy_objects(repo, rs->rrepo, v))) {
				tf_git_id_hex(hex, v);
				rc = tf_git_error(rc, 0, "cannot copy baseline %.12s from '%s'", hex,
						  rs->url_safe);
				break;
			}
			continue;
		}
		tf_git_id_hex(hex, &commits[i]);
		tf_vec_push(&specs, tf_xasprintf("%s%s", TF_STORE_REF_PREFIX, hex));
	}
	if (!rc && specs.n) {
		git_fetch_options fo;
		git_strarray arr = { specs.v, specs.n };

		git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
		callbacks(&fo.callbacks, rs);
		fo.proxy_opts.type = GIT_PROXY_AUTO;
		fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
		fo.update_fetchhead = 0;
		tf_netwatch_begin();
		rc = git_remote_download(rs->remote, &arr, &fo);
		tf_netwatch_end();
		if (rc)
			rc = net_error(rs, rc, "cannot fetch baselines from");
	}
	disconnect(rs);
	for (size_t i = 0; !rc && i < n; i++) {
		const git_oid *v = remote_value(rs, &commits[i]);
		char hex[TF_STORE_ID_HEX + 1];
		if (v && !git_odb_exists(odb, v)) {
			tf_git_id_hex(hex, &commits[i]);
			rc = tf_error_set(TF_ERROR, "'%s' did not send the baseline of %.12s",
					  rs->url_safe, hex);
		}
	}
	for (size_t i = 0; i < specs.n; i++)
		free(specs.v[i]);
	tf_vec_free(&specs);
	git_odb_free(odb);
	return rc;
}

/* Try to move the remote refs; each item ends up ok or with a reason. */
static int session_push(tf_remote_session *rs, struct push_item *items, size_t n)
{
	TF_VEC(char *) specs = { 0 };
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		struct push_item *it = &items[i];
		char *refname = tf_git_ref_name(&it->commit);

		free(it->msg);
		it->msg = NULL;
		it->ok = false;
		if (rs->local_path) {
			if ((rc = copy_objects(rs->rrepo, rs->s->repo, &it->value))) {
				rc = tf_git_error(rc, 0, "cannot copy the baseline to '%s'",
						  rs->url_safe);
				free(refname);
				break;
			}
			rc = tf_git_ref_cas(rs->rrepo, refname, &it->value,
					    it->has_expected ? &it->expected : NULL, "testflame: push");
			if (rc == TF_ECONFLICT) {
				it->msg = tf_xstrdup(tf_error_last());
				rc = 0;
			} else if (rc) {
				tf_error_wrap(rc, "'%s'", rs->url_safe);
				free(refname);
				break;
			} else {
				it->ok = true;
			}
			free(refname);
		} else {
			tf_vec_push(&specs, tf_xasprintf("%s:%s", refname, refname));
			free(refname);
		}
	}
	if (!rc && specs.n) {
		git_push_options po;
		git_strarray arr = { specs.v, specs.n };

		git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
		callbacks(&po.callbacks, rs);
		po.proxy_opts.type = GIT_PROXY_AUTO;
		for (size_t i = 0; i < rs->statuses.n; i++) {
			free(rs->statuses.v[i].ref);
			free(rs->statuses.v[i].msg);
		}
		rs->statuses.n = 0;
		tf_netwatch_begin();
		rc = git_remote_push(rs->remote, &arr, &po);
		tf_netwatch_end();
		if (rc == GIT_ENONFASTFORWARD) {
			/* the remote moved since it was listed: everyone tries again */
			const git_error *e = git_error_last();
			for (size_t i = 0; i < n; i++)
				items[i].msg = tf_git_scrub(e && e->message ? e->message
									  : "non-fast-forward");
			git_error_clear();
			rc = 0;
		} else if (rc) {
			rc = net_error(rs, rc, "cannot push to");
		} else {
			for (size_t i = 0; i < n; i++) {
				char *refname = tf_git_ref_name(&items[i].commit);
				items[i].ok = true;
				for (size_t j = 0; j < rs->statuses.n; j++)
					if (strcmp(rs->statuses.v[j].ref, refname) == 0 &&
					    rs->statuses.v[j].msg) {
						items[i].ok = false;
						items[i].msg = tf_git_scrub(rs->statuses.v[j].msg);
					}
				free(refname);
			}
		}
	}
	disconnect(rs);
	for (size_t i = 0; i < specs.n; i++)
		free(specs.v[i]);
	tf_vec_free(&specs);
	return rc;
}

/* ---- for resolve ---- */

bool tf_remote_session_has(tf_remote_session *rs, const git_oid *commit)
{
	const git_oid *v;
	git_oid local;
	char *refname;
	bool differs;

	if (!rs->listed && session_ls(rs) != 0)
		return false;
	v = remote_value(rs, commit);
	if (!v)
		return false;
	refname = tf_git_ref_name(commit);
	differs = tf_git_ref_get(&local, rs->s->repo, refname) != 0 || !git_oid_equal(&local, v);
	free(refname);
	return differs;
}

int tf_remote_session_fetch(tf_remote_session *rs, const git_oid *commit)
{
	tf_sync_status st;
	unsigned conflicts = 0;
	const git_oid *v = remote_value(rs, commit);
	int rc;

	if (!v)
		return tf_error_set(TF_ENOTFOUND, "the remote has no such baseline");
	if ((rc = session_download(rs, commit, 1)))
		return rc;
	return tf_git_integrate(&st, &conflicts, rs->s->repo, commit, v, false);
}

/* ---- public ---- */

static int open_listed(tf_remote_session **out, tf_store *s)
{
	int rc = tf_remote_session_open(out, s);
	if (!rc && (rc = session_ls(*out))) {
		tf_remote_session_free(*out);
		*out = NULL;
	}
	return rc;
}

int tf_store_remote_list(tf_remote_baseline_list *out, tf_store *s)
{
	tf_remote_session *rs;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = open_listed(&rs, s)))
		return rc;
	for (size_t i = 0; i < rs->refs.n; i++) {
		tf_remote_baseline b;
		tf_git_id_hex(b.commit, &rs->refs.v[i].commit);
		tf_git_id_hex(b.oid, &rs->refs.v[i].value);
		tf_vec_push(&out->items, b);
	}
	tf_remote_session_free(rs);
	return 0;
}

/* Resolve every rev to a commit id, into `out` (status MISSING for now),
 * once each. */
static int resolve_revs(tf_store_sync_list *out, git_oid **commits, tf_store *s,
			const char *const *revs, size_t n)
{
	memset(out, 0, sizeof(*out));
	*commits = NULL;
	if (!tf_store_is_git(s))
		return no_remote(s);
	*commits = tf_xcalloc(n ? n : 1, sizeof(**commits));
	for (size_t i = 0; i < n; i++) {
		git_oid id;
		tf_store_sync it;
		int rc = tf_git_rev(&id, s->repo, revs[i]);
		bool dup = false;

		if (rc) {
			free(*commits);
			*commits = NULL;
			tf_store_sync_list_free(out);
			return rc;
		}
		for (size_t j = 0; j < out->items.n; j++)
			dup |= git_oid_equal(&(*commits)[j], &id);
		if (dup)
			continue;
		(*commits)[out->items.n] = id;
		memset(&it, 0, sizeof(it));
		tf_git_id_hex(it.commit, &id);
		it.status = TF_SYNC_MISSING;
		tf_vec_push(&out->items, it);
	}
	return 0;
}

int tf_store_fetch(tf_store_sync_list *out, tf_store *s, const char *const *revs, size_t n)
{
	tf_remote_session *rs = NULL;
	git_oid *commits = NULL;
	int rc;

	if ((rc = resolve_revs(out, &commits, s, revs, n)))
		return rc;
	n = out->items.n;
	if ((rc = open_listed(&rs, s)) || (rc = session_download(rs, commits, n)))
		goto done;
	for (size_t i = 0; i < n; i++) {
		tf_store_sync *it = &out->items.v[i];
		const git_oid *v = remote_value(rs, &commits[i]);

		it->attempts = 1;
		if (!v)
			continue;
		rc = tf_git_integrate(&it->status, &it->conflicts, s->repo, &commits[i], v, false);
		if (rc)
			break;
	}
done:
	tf_remote_session_free(rs);
	free(commits);
	return rc;
}

/*
 * One round of a push for the pending items: list the remote, fetch and
 * merge what it has that we lack, then push what differs. Items the remote
 * accepted or already had are marked done.
 */
static int push_round(tf_remote_session *rs, tf_store_sync_list *out, const git_oid *commits,
		      bool *done, bool *merged, unsigned round)
{
	git_repository *repo = rs->s->repo;
	TF_VEC(git_oid) fetch = { 0 };
	TF_VEC(struct push_item) items = { 0 };
	int rc;

	if ((rc = session_ls(rs)))
		return rc;
	for (size_t i = 0; i < out->items.n; i++)
		if (!done[i] && remote_value(rs, &commits[i]))
			tf_vec_push(&fetch, commits[i]);
	rc = session_download(rs, fetch.v, fetch.n);
	tf_vec_free(&fetch);
	if (rc)
		return rc;
	for (size_t i = 0; i < out->items.n && !rc; i++) {
		tf_store_sync *it = &out->items.v[i];
		const git_oid *r = remote_value(rs, &commits[i]);
		char *refname;
		struct push_item pi;
		tf_sync_status st;

		if (done[i])
			continue;
		it->attempts = round;
		if (r) {
			rc = tf_git_integrate(&st, &it->conflicts, repo, &commits[i], r, true);
			if (rc)
				break;
			if (st == TF_SYNC_MERGED)
				merged[i] = true;
		}
		memset(&pi, 0, sizeof(pi));
		pi.index = i;
		pi.commit = commits[i];
		refname = tf_git_ref_name(&commits[i]);
		rc = tf_git_ref_get(&pi.value, repo, refname);
		free(refname);
		if (rc)
			break;
		if (r && git_oid_equal(r, &pi.value)) {
			done[i] = true;
			it->status = merged[i] ? TF_SYNC_MERGED : TF_SYNC_UP_TO_DATE;
			continue;
		}
		pi.has_expected = r != NULL;
		if (r)
			pi.expected = *r;
		tf_vec_push(&items, pi);
	}
	if (!rc && items.n)
		rc = session_push(rs, items.v, items.n);
	for (size_t k = 0; k < items.n; k++) {
		struct push_item *pi = &items.v[k];
		tf_store_sync *it = &out->items.v[pi->index];
		if (!rc && pi->ok) {
			done[pi->index] = true;
			it->status = merged[pi->index] ? TF_SYNC_MERGED
				   : pi->has_expected ? TF_SYNC_FAST_FORWARD : TF_SYNC_CREATED;
		} else if (!rc && round == PUSH_ROUNDS) {
			char *refname = tf_git_ref_name(&pi->commit);
			rc = tf_error_set(TF_ECONFLICT,
				"gave up pushing '%s' to '%s' after %u attempts: %s", refname,
				rs->url_safe, round, pi->msg ? pi->msg : "rejected");
			free(refname);
		}
		free(pi->msg);
	}
	tf_vec_free(&items);
	return rc;
}

int tf_store_push(tf_store_sync_list *out, tf_store *s, const char *const *revs, size_t n)
{
	tf_remote_session *rs = NULL;
	git_oid *commits = NULL;
	bool *done = NULL, *merged = NULL;
	size_t left = 0;
	int rc;

	if ((rc = resolve_revs(out, &commits, s, revs, n)))
		return rc;
	n = out->items.n;
	done = tf_xcalloc(n ? n : 1, sizeof(*done));
	merged = tf_xcalloc(n ? n : 1, sizeof(*merged));
	for (size_t i = 0; i < n; i++) {
		git_oid v;
		char *refname = tf_git_ref_name(&commits[i]);
		rc = tf_git_ref_get(&v, s->repo, refname);
		free(refname);
		if (rc == TF_ENOTFOUND) {
			done[i] = true; /* nothing here to push: stays MISSING */
			rc = 0;
		} else if (rc) {
			goto done;
		} else {
			out->items.v[i].status = TF_SYNC_UP_TO_DATE; /* until pushed */
			left++;
		}
	}
	if (!left)
		goto done;
	if ((rc = session_open(&rs, s, true)))
		goto done;
	for (unsigned round = 1; round <= PUSH_ROUNDS; round++) {
		if (round > 1)
			tf_store_backoff(round + 2);
		if ((rc = push_round(rs, out, commits, done, merged, round)))
			break;
		left = 0;
		for (size_t i = 0; i < n; i++)
			left += !done[i];
		if (!left)
			break;
	}
done:
	tf_remote_session_free(rs);
	free(commits);
	free(done);
	free(merged);
	return rc;
}
