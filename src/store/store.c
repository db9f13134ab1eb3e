/*
 * store.c - the store's front: parsing the spec, naming (suite and kind
 * become safe path components), the operations every backend shares, and
 * baseline resolution, a first-parent walk that does not care where the
 * baselines live. Each kind of store is a backend of one table of
 * operations (store_int.h): git (store_git.c), dir (store_dir.c) and
 * Pyroscope (store_pyroscope.c, the git store with Pyroscope beside it).
 */
#include "store_int.h"

#include <limits.h>
#include <stdlib.h>
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

int tf_store_encode_pair(tf_buf *suite_enc, tf_buf *file_enc, const char *suite,
			 const char *kind)
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
	int rc = tf_git_open(&s->repo, path);
	if (rc)
		s->repo_error = tf_xstrdup(tf_error_last());
	return rc;
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

/* "scheme://" and something after it */
static bool http_url(const char *s)
{
	return (strncmp(s, "http://", 7) == 0 && s[7]) || (strncmp(s, "https://", 8) == 0 && s[8]);
}

int tf_store_spec_parse(tf_store_spec *out, const char *spec)
{
	static const struct {
		const char *prefix;
		tf_store_spec_kind kind;
		const char *arg; /* what follows the colon, for messages */
	} kinds[] = {
		{ "git:", TF_STORE_SPEC_GIT, "remote" },
		{ "dir:", TF_STORE_SPEC_DIR, "path" },
		{ "pyroscope:", TF_STORE_SPEC_PYROSCOPE, "URL" },
	};

	memset(out, 0, sizeof(*out));
	if (!spec || !*spec || strcmp(spec, "git") == 0)
		return 0;
	for (size_t i = 0; i < TF_ARRAY_SIZE(kinds); i++) {
		size_t n = strlen(kinds[i].prefix);
		if (strncmp(spec, kinds[i].prefix, n) != 0)
			continue;
		if (!spec[n])
			return tf_error_set(TF_EUSAGE, "store '%s' needs a %s after the colon", spec,
					    kinds[i].arg);
		if (kinds[i].kind == TF_STORE_SPEC_PYROSCOPE && !http_url(spec + n))
			return tf_error_set(TF_EUSAGE,
				"store '%s' needs an http:// or https:// URL after the colon", spec);
		out->kind = kinds[i].kind;
		out->arg = spec + n;
		return 0;
	}
	return tf_error_set(TF_EUSAGE,
		"unknown store '%s' (expected git, git:REMOTE, dir:PATH or pyroscope:URL)", spec);
}

int tf_store_check_config(const tf_config *cfg)
{
	tf_store_spec sp;

	if (!cfg || !cfg->store || tf_store_spec_parse(&sp, cfg->store) == 0)
		return 0;
	if (cfg->store_at)
		return tf_error_wrap(TF_EUSAGE, "%s: 'store'", cfg->store_at);
	return TF_EUSAGE;
}

int tf_store_open_with(tf_store **out, const char *spec, const tf_store_open_opts *o)
{
	tf_store_spec sp;
	tf_store *s;
	int rc;

	*out = NULL;
	if ((rc = tf_store_spec_parse(&sp, spec))) {
		/* the config's: say where it is */
		if (o->cfg && o->cfg->store && spec && strcmp(spec, o->cfg->store) == 0)
			return tf_store_check_config(o->cfg);
		return rc;
	}

	tf_git_init();
	s = tf_xcalloc(1, sizeof(*s));
	s->notice = o->notice;
	s->notice_ctx = o->notice_ctx;
	if (sp.kind == TF_STORE_SPEC_PYROSCOPE && (rc = tf_store_pyroscope_open(s, sp.arg, o->cfg))) {
		tf_store_free(s);
		return rc;
	}
	rc = open_repo(s, o->repo);
	if (sp.kind != TF_STORE_SPEC_DIR) {
		if (rc) {
			tf_store_free(s);
			return tf_error_wrap(rc, "the git store needs a repository (or use --store dir:PATH)");
		}
		s->be = s->pyro ? &tf_store_pyroscope_backend : &tf_store_git_backend;
		s->remote = tf_xstrdup(sp.kind == TF_STORE_SPEC_GIT && sp.arg ? sp.arg
							: TF_STORE_DEFAULT_REMOTE);
		if (s->pyro)
			s->desc = tf_xasprintf("git store in '%s' with Pyroscope at '%s'",
					       git_repository_path(s->repo), tf_pyroscope_url(s->pyro));
		else
			s->desc = tf_xasprintf("git store in '%s'", git_repository_path(s->repo));
	} else {
		s->be = &tf_store_dir_backend;
		s->dir = absolute(sp.arg);
		s->desc = tf_xasprintf("dir store '%s'", s->dir);
	}
	if (o->remote)
		tf_store_set_remote(s, o->remote);
	tf_error_clear();
	*out = s;
	return 0;
}

int tf_store_open(tf_store **out, const char *spec, const char *repo)
{
	tf_store_open_opts o = { .repo = repo };
	return tf_store_open_with(out, spec, &o);
}

void tf_store_notice(tf_store *s, tf_notice_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tf_vnotice(s->notice, s->notice_ctx, level, fmt, ap);
	va_end(ap);
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
	free(s->grafana_url);
	free(s->grafana_datasource);
	free(s);
}

const char *tf_store_describe(const tf_store *s)
{
	return s->desc;
}

bool tf_store_is_git(const tf_store *s)
{
	return s->be->git;
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
		s->remote_url = tf_git_scrub(git_remote_url(r) ? git_remote_url(r) : "");
	else if (strpbrk(s->remote, ":/"))
		s->remote_url = tf_git_scrub(s->remote); /* a URL or path, not a name */
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

char *tf_store_subject(tf_store *s, const char *rev)
{
	tf_baseline b;
	memset(&b, 0, sizeof(b));
	if (tf_store_rev(b.commit, s, rev) != 0) {
		tf_error_clear();
		return NULL;
	}
	commit_info(&b, s);
	return b.subject;
}

int tf_store_save(tf_store *s, const char *rev, const char *suite, const char *kind,
		  const void *data, size_t len)
{
	char commit[TF_STORE_ID_HEX + 1];
	tf_buf se = TF_BUF_INIT, fe = TF_BUF_INIT;
	int rc = tf_store_rev(commit, s, rev);

	if (!rc && !(rc = tf_store_encode_pair(&se, &fe, suite, kind))) {
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

	if (!rc && !(rc = tf_store_encode_pair(&se, &fe, suite, kind))) {
		rc = s->be->get(out, s, commit, se.ptr, fe.ptr);
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

struct resolve_walk {
	tf_store *s;
	tf_store_match *out;
	tf_remote_session *rs;
	const char *suite_enc, *file_enc;
};

/* One commit of the walk: its baseline here, or fetched from the remote. */
static int resolve_step(const git_oid *commit, unsigned distance, void *payload)
{
	struct resolve_walk *w = payload;
	char hex[TF_STORE_ID_HEX + 1];
	int rc;

	tf_git_id_hex(hex, commit);
	w->out->walked++;
	w->out->distance = distance;
	rc = w->s->be->get(NULL, w->s, hex, w->suite_enc, w->file_enc);
	if (rc == TF_ENOTFOUND && w->rs && tf_remote_session_has(w->rs, commit)) {
		rc = tf_remote_session_fetch(w->rs, commit);
		if (!rc && !(rc = w->s->be->get(NULL, w->s, hex, w->suite_enc, w->file_enc)))
			w->out->fetched = true;
	}
	if (rc == 0) {
		memcpy(w->out->commit, hex, sizeof(w->out->commit));
		return 1;
	}
	return rc == TF_ENOTFOUND ? 0 : rc;
}

int tf_store_resolve(tf_store_match *out, tf_store *s, const char *start_rev,
		     const char *suite, const char *kind, const tf_store_resolve_opts *opts)
{
	unsigned max = opts && opts->max_depth ? opts->max_depth : TF_STORE_DEFAULT_DEPTH;
	tf_buf se = TF_BUF_INIT, fe = TF_BUF_INIT;
	struct resolve_walk w = { s, out, NULL, NULL, NULL };
	tf_git_walk_end end;
	git_oid start;
	const char *why = "";
	int rc;

	memset(out, 0, sizeof(*out));
	if (!s->repo)
		return tf_error_set(TF_EUSAGE, "finding a baseline walks git history: %s",
				    s->repo_error ? s->repo_error : "no repository");
	if ((rc = tf_store_encode_pair(&se, &fe, suite, kind)) ||
	    (rc = tf_git_rev(&start, s->repo, start_rev)))
		goto done;
	if (opts && opts->fetch && tf_store_is_git(s) && tf_remote_session_open(&w.rs, s)) {
		snprintf(out->remote_error, sizeof(out->remote_error), "%s", tf_error_last());
		w.rs = NULL;
	}
	w.suite_enc = se.ptr;
	w.file_enc = fe.ptr;
	rc = tf_git_walk_first_parent(s->repo, &start, max, resolve_step, &w, &end);
	if (rc == TF_ENOTFOUND && !out->walked)
		rc = tf_git_error(0, TF_ENOTFOUND, "commit '%s' is not in this repository", start_rev);
	if (rc || out->commit[0])
		goto done;
	switch (end) {
	case TF_GIT_WALK_MAX:
		why = ", the most it looks at";
		break;
	case TF_GIT_WALK_ROOT:
		out->history_ended = true;
		why = ", back to the first commit";
		break;
	case TF_GIT_WALK_SHALLOW:
		out->history_ended = true;
		why = ", back to where the history of this (shallow) clone ends";
		break;
	default:
		break;
	}
	rc = tf_error_set(TF_ENOTFOUND,
		"no baseline of the suite '%s' (%s) in the %u first-parent commit%s from %.12s%s",
		suite, kind, out->walked, out->walked == 1 ? "" : "s", git_oid_tostr_s(&start), why);
done:
	tf_remote_session_free(w.rs);
	tf_buf_free(&se);
	tf_buf_free(&fe);
	return rc;
}

int tf_store_resolve_suite(tf_store_match *out, tf_store *s, const char *start_rev,
			   const char *suite, const tf_store_resolve_opts *opts)
{
	TF_VEC(const char *) kinds = { 0 };
	tf_baseline_list l;
	bool found = false;
	int rc = tf_store_list(&l, s);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	/* the kinds of the suite stored anywhere: one walk each, nearest wins */
	for (size_t i = 0; i < l.items.n; i++)
		for (size_t k = 0; k < l.items.v[i].files.n; k++) {
			const tf_baseline_file *f = &l.items.v[i].files.v[k];
			bool seen = strcmp(f->suite, suite) != 0;
			for (size_t j = 0; j < kinds.n && !seen; j++)
				seen = strcmp(kinds.v[j], f->kind) == 0;
			if (!seen)
				tf_vec_push(&kinds, f->kind);
		}
	for (size_t j = 0; j < kinds.n; j++) {
		tf_store_match m;
		rc = tf_store_resolve(&m, s, start_rev, suite, kinds.v[j], opts);
		if (rc == TF_ENOTFOUND)
			continue;
		if (rc)
			break;
		if (!found || m.distance < out->distance)
			*out = m;
		found = true;
	}
	tf_vec_free(&kinds);
	tf_baseline_list_free(&l);
	if (found)
		return 0;
	if (!rc || rc == TF_ENOTFOUND)
		rc = tf_error_set(TF_ENOTFOUND, "no baseline of suite '%s' near '%s' in the %s", suite,
				  start_rev, s->desc);
	return rc;
}

struct nearest_walk {
	tf_baseline_list *l;
	size_t found;
	unsigned distance;
};

static int nearest_step(const git_oid *commit, unsigned distance, void *payload)
{
	struct nearest_walk *w = payload;
	char hex[TF_STORE_ID_HEX + 1];

	tf_git_id_hex(hex, commit);
	for (size_t i = 0; i < w->l->items.n; i++)
		if (strcmp(w->l->items.v[i].commit, hex) == 0 && w->l->items.v[i].files.n) {
			w->found = i;
			w->distance = distance;
			return 1;
		}
	return 0;
}

int tf_store_nearest(tf_baseline *out, unsigned *distance, tf_store *s, const char *start_rev)
{
	tf_baseline_list l;
	struct nearest_walk w = { &l, SIZE_MAX, 0 };
	git_oid start;
	int rc;

	memset(out, 0, sizeof(*out));
	*distance = 0;
	if (!s->repo)
		return tf_error_set(TF_EUSAGE, "finding a baseline walks git history: %s",
				    s->repo_error ? s->repo_error : "no repository");
	if ((rc = tf_store_list(&l, s)))
		return rc;
	if (l.items.n && !(rc = tf_git_rev(&start, s->repo, start_rev)))
		rc = tf_git_walk_first_parent(s->repo, &start, TF_STORE_DEFAULT_DEPTH, nearest_step,
					      &w, NULL);
	if (!rc && w.found == SIZE_MAX)
		rc = tf_error_set(TF_ENOTFOUND, "no baseline on the first-parent history of '%s' "
				  "in the %s", start_rev, s->desc);
	if (!rc) {
		*out = l.items.v[w.found];
		*distance = w.distance;
		memset(&l.items.v[w.found], 0, sizeof(*out));
	}
	tf_baseline_list_free(&l);
	return rc;
}

char *tf_store_others(tf_store *st, const char *start, const char *suite, const char *kind)
{
	tf_baseline b;
	unsigned dist;
	tf_buf line = TF_BUF_INIT, kinds = TF_BUF_INIT;
	TF_VEC(const char *) suites = { 0 };
	const char *one = NULL;

	if (tf_store_nearest(&b, &dist, st, start)) {
		tf_error_clear();
		return NULL;
	}
	for (size_t i = 0; i < b.files.n; i++) {
		const tf_baseline_file *f = &b.files.v[i];
		bool seen = false;
		if (strcmp(f->suite, suite) == 0) {
			tf_buf_printf(&kinds, "%s%s", kinds.len ? ", " : "", f->kind);
			continue;
		}
		for (size_t k = 0; k < suites.n && !seen; k++)
			seen = strcmp(suites.v[k], f->suite) == 0;
		if (!seen)
			tf_vec_push(&suites, f->suite);
	}
	tf_buf_printf(&line, "the nearest baseline, of %.12s%s%s%s, holds ", b.commit,
		      b.subject ? " (" : "", b.subject ? b.subject : "", b.subject ? ")" : "");
	if (kinds.len) {
		/* the suite is there, measured another way */
		tf_buf_printf(&line, "'%s' recorded as %s, and this run is %s (another event, "
			      "sampler or machine): run with the same --event and --sampler to "
			      "compare with it", suite, kinds.ptr, kind);
	} else {
		tf_buf_puts(&line, suites.n == 1 ? "the suite " : "the suites ");
		for (size_t k = 0; k < suites.n && k < 5; k++)
			tf_buf_printf(&line, "%s'%s'", k ? ", " : "", suites.v[k]);
		if (suites.n > 5)
			tf_buf_printf(&line, " and %zu more", suites.n - 5);
		one = suites.v[0];
		tf_buf_printf(&line, ", not '%s': to compare with %s, run with --suite '%s' or set "
			      "'suite: %s' in .testflame.yml", suite, suites.n == 1 ? "it" : "one",
			      one, one);
	}
	tf_vec_free(&suites);
	tf_buf_free(&kinds);
	tf_baseline_clear(&b);
	return tf_buf_detach(&line);
}

/* ---- what a backend does beyond keeping baselines ---- */

int tf_store_find_elsewhere(tf_store_match *out, tf_store *s, const char *start_rev,
			    const tf_store_run *r)
{
	memset(out, 0, sizeof(*out));
	if (!s->be->find_elsewhere)
		return TF_ENOTFOUND; /* the message is the walk's, as it was */
	return s->be->find_elsewhere(out, s, start_rev, r);
}

int tf_store_mirror(tf_store *s, const tf_store_run *r, const tf_profile *const *runs, size_t n)
{
	return s->be->mirror && n ? s->be->mirror(s, r, runs, n) : 0;
}

void tf_store_links_new(tf_store_links **out, tf_store *s, const tf_store_run *r,
			const char *base_commit)
{
	*out = NULL;
	if (s && s->be->links)
		s->be->links(out, s, r, base_commit);
}

char *tf_store_link(const tf_store_links *l, const char *test)
{
	return l ? l->link(l, test) : NULL;
}

const char *tf_store_links_text(const tf_store_links *l)
{
	return l ? l->text : NULL;
}

void tf_store_links_free(tf_store_links *l)
{
	if (l)
		l->free(l);
}

struct remote_walk {
	const tf_remote_baseline_list *have;
	char *found;
};

static int remote_has(const git_oid *commit, unsigned distance, void *payload)
{
	struct remote_walk *w = payload;
	char hex[TF_STORE_ID_HEX + 1];
	(void)distance;
	tf_git_id_hex(hex, commit);
	for (size_t i = 0; i < w->have->items.n; i++)
		if (strcmp(w->have->items.v[i].commit, hex) == 0) {
			memcpy(w->found, hex, sizeof(hex));
			return 1;
		}
	return 0;
}

int tf_store_fetch_nearest(char out[TF_STORE_ID_HEX + 1], tf_store *s, const char *start_rev)
{
	tf_remote_baseline_list have;
	struct remote_walk w = { &have, out };
	tf_store_sync_list sl = { 0 };
	const char *revs[1] = { out };
	git_oid start;
	int rc;

	out[0] = '\0';
	memset(&have, 0, sizeof(have));
	if (!s->repo)
		return tf_error_set(TF_EUSAGE, "fetching a baseline walks git history: %s",
				    s->repo_error ? s->repo_error : "no repository");
	if ((rc = tf_store_remote_list(&have, s)))
		return tf_error_wrap(rc, "cannot list the remote's baselines");
	if (have.items.n && !(rc = tf_git_rev(&start, s->repo, start_rev)))
		rc = tf_git_walk_first_parent(s->repo, &start, TF_STORE_DEFAULT_DEPTH, remote_has, &w,
					      NULL);
	tf_vec_free(&have.items);
	if (rc)
		return rc;
	if (!out[0])
		return tf_error_set(TF_ENOTFOUND, "the remote has no baseline on the first-parent "
				    "history of '%s'", start_rev);
	rc = tf_store_fetch(&sl, s, revs, 1);
	tf_store_sync_list_free(&sl);
	if (rc) {
		tf_error_wrap(rc, "cannot fetch the baseline of %.12s", out);
		out[0] = '\0';
	}
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
