/*
 * store.c - the store's front: parsing the spec, naming (suite and kind
 * become safe path components), the operations every backend shares, and
 * baseline resolution, a first-parent walk that does not care where the
 * baselines live. "pyroscope:URL" is the git store with Pyroscope beside
 * it (pyroscope.c): reads fall back to what was fetched from there.
 */
#include "store_int.h"

#include <limits.h>
#include <stdlib.h>

extern char **environ;
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- names ---- */

static bool safe_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '+';
}

/* FNV-1a, spelled out here because stored paths depend on it: it must
 * never change with the rest of the code base. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

int tf_store_encode_name(tf_buf *out, const char *name)
{
	size_t cut;

	tf_buf_clear(out);
	if (!name || !*name)
		return tf_error_set(TF_EINVAL, "empty name");
	for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
		/* a leading dot would make ".", ".." or hidden names */
		if (safe_char(*c) && !(c == (const unsigned char *)name && *c == '.'))
			tf_buf_putc(out, (char)*c);
		else
			tf_buf_printf(out, "%%%02X", *c);
	}
	if (out->len <= TF_STORE_NAME_MAX)
		return 0;
	/*
	 * Too long for a path component (a suite named after a long command
	 * line): keep a readable prefix, whole %XX escapes only, and make it
	 * unique with a hash of the full name after a '~', which the escaping
	 * above never produces.
	 */
	cut = TF_STORE_NAME_PREFIX;
	if (out->ptr[cut - 1] == '%')
		cut -= 1;
	else if (out->ptr[cut - 2] == '%')
		cut -= 2;
	out->len = cut;
	out->ptr[cut] = '\0';
	tf_buf_printf(out, "~%016llx", (unsigned long long)name_hash(name));
	return 0;
}

int tf_store_decode_name(tf_buf *out, const char *enc, size_t len)
{
	const char *tilde = memchr(enc, '~', len);
	size_t end = tilde ? (size_t)(tilde - enc) : len;

	tf_buf_clear(out);
	if (len == 0 || end == 0)
		return tf_error_set(TF_EINVAL, "empty name");
	if (tilde && len - end != 17)
		return tf_error_set(TF_EINVAL, "bad stored name '%.*s'", (int)len, enc);
	for (size_t i = 0; i < end; i++) {
		if (enc[i] != '%') {
			tf_buf_putc(out, enc[i]);
			continue;
		}
		int hi = i + 2 < end ? tf_hex_digit(enc[i + 1]) : -1;
		int lo = hi >= 0 ? tf_hex_digit(enc[i + 2]) : -1;
		if (lo < 0 || (hi == 0 && lo == 0))
			return tf_error_set(TF_EINVAL, "bad escape in stored name '%.*s'", (int)len, enc);
		tf_buf_putc(out, (char)(hi * 16 + lo));
		i += 2;
	}
	if (tilde)
		tf_buf_puts(out, "...");
	return 0;
}

char *tf_store_kind(const char *event, const char *sampler, const char *arch)
{
	struct utsname u;

	if (!event || !*event || !sampler || !*sampler)
		return NULL;
	if (!arch || !*arch) {
		if (uname(&u) != 0)
			return NULL;
		arch = u.machine;
	}
	return tf_xasprintf("%s-%s-%s", event, sampler, arch);
}

/* "<suite_enc>" and "<kind_enc>.pb.gz" */
static int encode_pair(tf_buf *suite_enc, tf_buf *file_enc, const char *suite, const char *kind)
{
	int rc = tf_store_encode_name(suite_enc, suite);
	if (rc)
		return tf_error_wrap(rc, "suite '%s'", suite ? suite : "");
	rc = tf_store_encode_name(file_enc, kind);
	if (rc)
		return tf_error_wrap(rc, "runner kind '%s'", kind ? kind : "");
	tf_buf_puts(file_enc, TF_STORE_FILE_SUFFIX);
	return 0;
}

/* ---- opening ---- */

static int open_repo(tf_store *s, const char *path)
{
	int rc = git_repository_open_ext(&s->repo, path ? path : ".", 0, NULL);
	if (rc == 0)
		return 0;
	s->repo = NULL;
	if (rc == GIT_EOWNER)
		tf_store_git_error(rc, TF_EPERM,
			     "the repository at '%s' belongs to another user (git config --global --add safe.directory PATH)",
			     path ? path : ".");
	else if (rc == GIT_ENOTFOUND)
		tf_error_set(TF_ENOTFOUND, "'%s' is not in a git repository", path ? path : ".");
	else
		tf_store_git_error(rc, 0, "cannot open the git repository at '%s'", path ? path : ".");
	s->repo_error = tf_xstrdup(tf_error_last());
	return rc == GIT_ENOTFOUND ? TF_ENOTFOUND : tf_git_code(rc) ? tf_git_code(rc) : TF_ERROR;
}

static char *absolute(const char *path)
{
	char cwd[PATH_MAX];
	char *abs;
	size_t n;

	if (path[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		abs = tf_xstrdup(path);
	else
		abs = tf_xasprintf("%s/%s", cwd, path);
	n = strlen(abs);
	while (n > 1 && abs[n - 1] == '/')
		abs[--n] = '\0';
	return abs;
}

int tf_store_open(tf_store **out, const char *spec, const char *repo)
{
	tf_store *s;
	int rc;

	*out = NULL;
	if (!spec || !*spec)
		spec = "git";
	if (strcmp(spec, "git") != 0 && strncmp(spec, "git:", 4) != 0 &&
	    strncmp(spec, "dir:", 4) != 0 && strncmp(spec, "pyroscope:", 10) != 0)
		return tf_error_set(TF_EUSAGE,
			"unknown store '%s' (expected git, git:REMOTE, dir:PATH or pyroscope:URL)", spec);
	if ((strncmp(spec, "git:", 4) == 0 || strncmp(spec, "dir:", 4) == 0) && !spec[4])
		return tf_error_set(TF_EUSAGE, "store '%s' needs a %s after the colon", spec,
				    spec[0] == 'g' ? "remote" : "path");

	git_libgit2_init();
	s = tf_xcalloc(1, sizeof(*s));
	if (spec[0] == 'p') {
		/* the git store, with Pyroscope as the mirror; credentials from
		 * the environment (the cli adds the config's) */
		tf_pyroscope_opts po;
		tf_pyroscope_opts_init(&po);
		po.url = spec + 10;
		if ((rc = tf_pyroscope_opts_env(&po, environ)) ||
		    (rc = tf_pyroscope_open(&s->pyro, &po))) {
			tf_error_wrap(rc, "store '%s'", "pyroscope:...");
			tf_store_free(s);
			return rc;
		}
	}
	rc = open_repo(s, repo);
	if (spec[0] == 'g' || spec[0] == 'p') {
		if (rc) {
			tf_store_free(s);
			return tf_error_wrap(rc, "the git store needs a repository (or use --store dir:PATH)");
		}
		s->be = &tf_store_git_backend;
		s->remote = tf_xstrdup(spec[3] == ':' ? spec + 4 : TF_STORE_DEFAULT_REMOTE);
		if (s->pyro)
			s->desc = tf_xasprintf("git store in '%s' with Pyroscope at '%s'",
					       git_repository_path(s->repo), tf_pyroscope_url(s->pyro));
		else
			s->desc = tf_xasprintf("git store in '%s'", git_repository_path(s->repo));
	} else {
		s->be = &tf_store_dir_backend;
		s->dir = absolute(spec + 4);
		s->desc = tf_xasprintf("dir store '%s'", s->dir);
	}
	tf_error_clear();
	*out = s;
	return 0;
}

void tf_store_free(tf_store *s)
{
	if (!s)
		return;
	git_repository_free(s->repo);
	free(s->desc);
	free(s->repo_error);
	free(s->dir);
	free(s->remote);
	free(s->remote_url);
	tf_pyroscope_free(s->pyro);
	free(s->pyro_key);
	tf_buf_free(&s->pyro_bytes);
	free(s);
	git_libgit2_shutdown();
}

const char *tf_store_describe(const tf_store *s)
{
	return s->desc;
}

bool tf_store_is_git(const tf_store *s)
{
	return s->be == &tf_store_git_backend;
}

void tf_store_set_remote(tf_store *s, const char *remote)
{
	free(s->remote);
	s->remote = tf_xstrdup(remote && *remote ? remote : TF_STORE_DEFAULT_REMOTE);
	free(s->remote_url);
	s->remote_url = NULL;
}

const char *tf_store_remote_url(tf_store *s)
{
	git_remote *r = NULL;

	if (s->remote_url)
		return s->remote_url;
	if (!s->repo || !s->remote)
		return NULL;
	if (git_remote_lookup(&r, s->repo, s->remote) == 0)
		s->remote_url = tf_store_scrub(git_remote_url(r) ? git_remote_url(r) : "");
	else if (strpbrk(s->remote, ":/"))
		s->remote_url = tf_store_scrub(s->remote); /* a URL or path, not a name */
	git_error_clear();
	git_remote_free(r);
	return s->remote_url;
}

int tf_store_rev(char out[TF_STORE_ID_HEX + 1], tf_store *s, const char *rev)
{
	git_oid id;
	int rc = tf_git_rev(&id, s->repo, rev);
	if (rc)
		return rc;
	tf_git_id_hex(out, &id);
	return 0;
}

/* ---- operations ---- */

static void commit_info(tf_baseline *b, tf_store *s)
{
	git_commit *c = NULL;
	git_oid id;

	if (!s->repo || b->problem || !tf_git_parse_id(&id, b->commit))
		return;
	if (git_commit_lookup(&c, s->repo, &id) == 0) {
		const char *summary = git_commit_summary(c);
		b->commit_time = (int64_t)git_commit_time(c);
		b->subject = tf_xstrdup(summary ? summary : "");
	}
	git_error_clear();
	git_commit_free(c);
}

int tf_store_save(tf_store *s, const char *rev, const char *suite, const char *kind,
		  const void *data, size_t len)
{
	char commit[TF_STORE_ID_HEX + 1];
	tf_buf se = TF_BUF_INIT, fe = TF_BUF_INIT;
	int rc = tf_store_rev(commit, s, rev);

	if (!rc && !(rc = encode_pair(&se, &fe, suite, kind))) {
		rc = s->be->save(s, commit, se.ptr, fe.ptr, data, len);
		if (rc)
			tf_error_wrap(rc, "cannot save the baseline of %.12s (%s, %s)", commit, suite,
				      kind);
	}
	tf_buf_free(&se);
	tf_buf_free(&fe);
	return rc;
}

int tf_store_get(tf_buf *out, tf_store *s, const char *rev, const char *suite,
		 const char *kind)
{
	char commit[TF_STORE_ID_HEX + 1];
	tf_buf se = TF_BUF_INIT, fe = TF_BUF_INIT;
	int rc = tf_store_rev(commit, s, rev);

	if (!rc && !(rc = encode_pair(&se, &fe, suite, kind))) {
		rc = s->be->get(out, s, commit, se.ptr, fe.ptr);
		if (rc == TF_ENOTFOUND && s->pyro)
			rc = tf_store_pyroscope_get(out, s, commit, suite, kind);
		if (rc == TF_ENOTFOUND)
			tf_error_set(rc, "no baseline for suite '%s', kind '%s' at %.12s in the %s",
				     suite, kind, commit, s->desc);
	}
	tf_buf_free(&se);
	tf_buf_free(&fe);
	return rc;
}

void tf_baseline_clear(tf_baseline *b)
{
	for (size_t i = 0; i < b->files.n; i++) {
		free(b->files.v[i].suite);
		free(b->files.v[i].kind);
		free(b->files.v[i].path);
	}
	tf_vec_free(&b->files);
	free(b->subject);
	free(b->problem);
	memset(b, 0, sizeof(*b));
}

void tf_baseline_list_free(tf_baseline_list *l)
{
	if (!l)
		return;
	for (size_t i = 0; i < l->items.n; i++)
		tf_baseline_clear(&l->items.v[i]);
	tf_vec_free(&l->items);
}

static int64_t when(const tf_baseline *b)
{
	return b->commit_time ? b->commit_time : b->record_time;
}

static int newest_first(const void *x, const void *y)
{
	const tf_baseline *a = x, *b = y;
	int64_t ta = when(a), tb = when(b);
	if (ta != tb)
		return ta > tb ? -1 : 1;
	return strcmp(a->commit, b->commit);
}

static int by_suite_kind(const void *x, const void *y)
{
	const tf_baseline_file *a = x, *b = y;
	int c = strcmp(a->suite, b->suite);
	return c ? c : strcmp(a->kind, b->kind);
}

int tf_store_list(tf_baseline_list *out, tf_store *s)
{
	int rc;

	memset(out, 0, sizeof(*out));
	rc = s->be->list(out, s);
	if (rc) {
		tf_baseline_list_free(out);
		return rc;
	}
	for (size_t i = 0; i < out->items.n; i++) {
		tf_baseline *b = &out->items.v[i];
		commit_info(b, s);
		if (b->files.n > 1)
			qsort(b->files.v, b->files.n, sizeof(*b->files.v), by_suite_kind);
	}
	if (out->items.n > 1)
		qsort(out->items.v, out->items.n, sizeof(*out->items.v), newest_first);
	return 0;
}

int tf_store_show(tf_baseline *out, tf_store *s, const char *rev)
{
	char commit[TF_STORE_ID_HEX + 1];
	int rc = tf_store_rev(commit, s, rev);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	rc = s->be->show(out, s, commit);
	if (rc == TF_ENOTFOUND)
		return tf_error_set(rc, "no baseline for %.12s ('%s') in the %s", commit, rev, s->desc);
	if (rc)
		return rc;
	commit_info(out, s);
	if (out->files.n > 1)
		qsort(out->files.v, out->files.n, sizeof(*out->files.v), by_suite_kind);
	return 0;
}

int tf_store_prune(tf_baseline_list *removed, tf_store *s, size_t keep)
{
	tf_baseline_list all;
	int rc = tf_store_list(&all, s);

	if (removed)
		memset(removed, 0, sizeof(*removed));
	if (rc)
		return rc;
	for (size_t i = keep; i < all.items.n; i++) {
		tf_baseline *b = &all.items.v[i];
		int r = s->be->remove(s, b);
		if (r == TF_ECONFLICT)
			continue;
		if (r) {
			rc = r;
			break;
		}
		if (removed) {
			tf_vec_push(&removed->items, *b);
			memset(b, 0, sizeof(*b));
		}
	}
	tf_baseline_list_free(&all);
	return rc;
}

/* ---- resolution ---- */

int tf_store_resolve(tf_store_match *out, tf_store *s, const char *start_rev,
		     const char *suite, const char *kind, const tf_store_resolve_opts *opts)
{
	unsigned max = opts && opts->max_depth ? opts->max_depth : TF_STORE_DEFAULT_DEPTH;
	tf_buf se = TF_BUF_INIT, fe = TF_BUF_INIT;
	tf_remote_session *rs = NULL;
	git_commit *c = NULL;
	git_oid start;
	const char *why = "";
	int rc;

	memset(out, 0, sizeof(*out));
	if (!s->repo)
		return tf_error_set(TF_EUSAGE, "finding a baseline walks git history: %s",
				    s->repo_error ? s->repo_error : "no repository");
	if ((rc = encode_pair(&se, &fe, suite, kind)) || (rc = tf_git_rev(&start, s->repo, start_rev)))
		goto done;
	rc = git_commit_lookup(&c, s->repo, &start);
	if (rc) {
		rc = tf_store_git_error(rc, TF_ENOTFOUND, "commit '%s' is not in this repository", start_rev);
		goto done;
	}
	if (opts && opts->fetch && tf_store_is_git(s) && tf_remote_session_open(&rs, s)) {
		snprintf(out->remote_error, sizeof(out->remote_error), "%s", tf_error_last());
		rs = NULL;
	}
	for (;;) {
		char hex[TF_STORE_ID_HEX + 1];
		git_commit *parent = NULL;

		tf_git_id_hex(hex, git_commit_id(c));
		out->walked++;
		rc = s->be->get(NULL, s, hex, se.ptr, fe.ptr);
		if (rc == TF_ENOTFOUND && rs && tf_remote_session_has(rs, git_commit_id(c))) {
			rc = tf_remote_session_fetch(rs, git_commit_id(c));
			if (!rc && !(rc = s->be->get(NULL, s, hex, se.ptr, fe.ptr)))
				out->fetched = true;
		}
		if (rc == 0) {
			memcpy(out->commit, hex, sizeof(out->commit));
			goto done;
		}
		if (rc != TF_ENOTFOUND)
			goto done;
		if (out->walked >= max) {
			why = ", the most it looks at";
			break;
		}
		if (git_commit_parentcount(c) == 0) {
			out->history_ended = true;
			why = ", back to the first commit";
			break;
		}
		rc = git_commit_parent(&parent, c, 0);
		if (rc == GIT_ENOTFOUND) {
			git_error_clear();
			out->history_ended = true;
			why = ", back to where the history of this (shallow) clone ends";
			break;
		}
		if (rc) {
			rc = tf_store_git_error(rc, 0, "cannot walk the history of '%s'", start_rev);
			goto done;
		}
		git_commit_free(c);
		c = parent;
		out->distance++;
	}
	rc = tf_error_set(TF_ENOTFOUND,
		"no baseline for suite '%s', kind '%s' in the %u first-parent commit%s from %.12s%s",
		suite, kind, out->walked, out->walked == 1 ? "" : "s", git_oid_tostr_s(&start), why);
done:
	git_commit_free(c);
	tf_remote_session_free(rs);
	tf_buf_free(&se);
	tf_buf_free(&fe);
	return rc;
}

const char *tf_sync_status_name(tf_sync_status st)
{
	switch (st) {
	case TF_SYNC_UP_TO_DATE:
		return "up to date";
	case TF_SYNC_CREATED:
		return "created";
	case TF_SYNC_FAST_FORWARD:
		return "updated";
	case TF_SYNC_MERGED:
		return "merged";
	case TF_SYNC_MISSING:
		return "missing";
	}
	return "?";
}

void tf_store_sync_list_free(tf_store_sync_list *l)
{
	if (l)
		tf_vec_free(&l->items);
}
