/*
 * git.c - libgit2 at the boundary (see testflame/git.h), for the store and
 * the context alike: error conversion (with every credential scrubbed out
 * of libgit2's messages, which may quote URLs that carry a token), opening
 * a repository, revision parsing and the first-parent walk. The store's
 * own use of refs is store/refs.c.
 */
#include "testflame/git.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t libgit2_load_once = PTHREAD_ONCE_INIT;
static struct tf_git_fns libgit2_fns;

/* TF_LIBGIT2_SONAME: the library the build was linked against (Makefile) */
#ifndef TF_LIBGIT2_SONAME
#define TF_LIBGIT2_SONAME "libgit2.so"
#endif

/* The functions' names, in the order of struct tf_git_fns's pointers (#
 * keeps each name from being expanded to its redefinition). */
#define TF_GIT_FN_NAME(f) #f,
static const char *const libgit2_names[] = { TF_GIT_FUNCTIONS(TF_GIT_FN_NAME) };
#undef TF_GIT_FN_NAME
_Static_assert(sizeof(struct tf_git_fns) == TF_ARRAY_SIZE(libgit2_names) * sizeof(void (*)(void)),
	       "struct tf_git_fns holds one pointer per name");

/* A library that cannot be loaded stops the process, as the dynamic
 * loader would have stopped it from starting, with its exit status. */
static void libgit2_load(void)
{
	void *so = dlopen(TF_LIBGIT2_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!so) {
		fprintf(stderr, "testflame: cannot load %s: %s\n", TF_LIBGIT2_SONAME, dlerror());
		exit(127);
	}
	for (size_t i = 0; i < TF_ARRAY_SIZE(libgit2_names); i++) {
		void *p = dlsym(so, libgit2_names[i]);
		if (!p) {
			fprintf(stderr, "testflame: %s has no %s\n", TF_LIBGIT2_SONAME,
				libgit2_names[i]);
			exit(127);
		}
		/* object pointer to function pointer, the i-th of the table */
		memcpy((char *)&libgit2_fns + i * sizeof(void (*)(void)), &p, sizeof(p));
	}
}

const struct tf_git_fns *tf_git_fns(void)
{
	pthread_once(&libgit2_load_once, libgit2_load);
	return &libgit2_fns;
}

static pthread_once_t libgit2_once = PTHREAD_ONCE_INIT;

static void libgit2_setup(void)
{
	git_libgit2_init();
}

void tf_git_init(void)
{
	pthread_once(&libgit2_once, libgit2_setup);
}

/* Variables whose values must never be printed. */
static const char *const token_vars[] = {
	"TESTFLAME_TOKEN", "GITHUB_TOKEN", "GITLAB_TOKEN", "CI_JOB_TOKEN",
	"TESTFLAME_PYROSCOPE_TOKEN", "TESTFLAME_PYROSCOPE_PASSWORD", "TESTFLAME_PYROSCOPE_TENANT",
};

int tf_git_code(int gitrc)
{
	switch (gitrc) {
	case 0:
		return 0;
	case GIT_ENOTFOUND:
		return TF_ENOTFOUND;
	case GIT_EEXISTS:
		return TF_EEXISTS;
	case GIT_EMODIFIED:
	case GIT_ELOCKED:
	case GIT_ENONFASTFORWARD:
		return TF_ECONFLICT;
	case GIT_EAUTH:
	case GIT_EOWNER:
	case GIT_ECERTIFICATE:
		return TF_EPERM;
	case GIT_EINVALIDSPEC:
	case GIT_EAMBIGUOUS:
		return TF_EINVAL;
	default:
		return TF_ERROR;
	}
}

/* The end of a URL's authority part (host, port and user-info). */
static size_t authority_len(const char *s)
{
	return strcspn(s, "/ \t\r\n'\"<>()[]");
}

/* Replace every occurrence of `secret` in `b` by "***". */
static void scrub_value(tf_buf *b, const char *secret)
{
	size_t n = strlen(secret);
	tf_buf out = TF_BUF_INIT;
	const char *p = b->ptr, *hit;

	if (n < 4 || !b->ptr || !strstr(b->ptr, secret))
		return;
	while ((hit = strstr(p, secret))) {
		tf_buf_put(&out, p, (size_t)(hit - p));
		tf_buf_puts(&out, "***");
		p = hit + n;
	}
	tf_buf_puts(&out, p);
	tf_buf_free(b);
	*b = out;
}

char *tf_git_scrub(const char *msg)
{
	tf_buf b = TF_BUF_INIT;
	const char *p = msg ? msg : "", *sep;

	/* the user-info of a URL becomes "***": scheme://USER:SECRET@host */
	while ((sep = strstr(p, "://"))) {
		const char *auth = sep + 3, *at = NULL;
		size_t alen = authority_len(auth);
		for (const char *q = auth; q < auth + alen; q++)
			if (*q == '@')
				at = q;
		tf_buf_put(&b, p, (size_t)(auth - p));
		if (at) {
			tf_buf_puts(&b, "***");
			p = at;
		} else {
			p = auth;
		}
	}
	tf_buf_puts(&b, p);
	for (size_t i = 0; i < TF_ARRAY_SIZE(token_vars); i++) {
		const char *v = getenv(token_vars[i]);
		if (v && *v)
			scrub_value(&b, v);
	}
	tf_buf_puts(&b, "");
	return tf_buf_detach(&b);
}

int tf_git_error(int gitrc, int code, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	char *what, *why;
	va_list ap;
	tf_buf b = TF_BUF_INIT;
	int rc;

	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	what = tf_git_scrub(b.ptr);
	tf_buf_free(&b);
	why = tf_git_scrub(e && e->message ? e->message : "unknown libgit2 error");
	/* one line, no full stop: libgit2's messages may end with either */
	for (size_t n = strlen(why); n && (why[n - 1] == '.' || why[n - 1] == '\n' ||
					   why[n - 1] == ' '); n--)
		why[n - 1] = '\0';
	for (char *c = why; *c; c++)
		if (*c == '\n')
			*c = ' ';
	if (!code)
		code = tf_git_code(gitrc);
	if (!code)
		code = TF_ERROR;
	rc = tf_error_set(code, "%s: %s", what, why);
	free(what);
	free(why);
	return rc;
}

/* The work tree (or git directory) at or above `path`: where git would
 * have found the repository, to name it in messages. */
static char *repo_dir_above(const char *path)
{
	char *dir = realpath(path, NULL), *slash;
	while (dir && *dir) {
		char *probe = tf_xasprintf("%s/.git", dir);
		bool found = access(probe, F_OK) == 0;
		free(probe);
		if (found)
			return dir;
		slash = strrchr(dir, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	free(dir);
	return NULL;
}

static int unsafe_repository(const char *path)
{
	char *dir = repo_dir_above(path);
	const char *d = dir ? dir : path;
	tf_error_set(TF_EPERM, "the repository at '%s' is owned by another user and git refuses "
		     "to use it; if you trust it, run 'git config --global --add safe.directory %s'",
		     d, d);
	free(dir);
	return TF_EPERM;
}

int tf_git_open(git_repository **out, const char *path)
{
	const git_error *e;
	int rc;

	*out = NULL;
	if (!path)
		path = ".";
	tf_git_init();
	rc = git_repository_open_ext(out, path, 0, NULL);
	if (rc == 0)
		return 0;
	*out = NULL;
	e = git_error_last();
	/* libgit2 1.5 reports a failed ownership check as "config value
	 * 'safe.directory' was not found" with GIT_ENOTFOUND */
	if (rc == GIT_EOWNER || (e && e->message && strstr(e->message, "safe.directory")))
		return unsafe_repository(path);
	if (rc == GIT_ENOTFOUND)
		return tf_error_set(TF_ENOTFOUND, "not a git repository (or any parent up to the "
				    "filesystem boundary): '%s'", path);
	return tf_git_error(rc, 0, "cannot open the repository at '%s'", path);
}

bool tf_git_parse_id(git_oid *out, const char *hex)
{
	if (!hex || strlen(hex) != GIT_OID_HEXSZ)
		return false;
	for (const char *c = hex; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
		      (*c >= 'A' && *c <= 'F')))
			return false;
	return git_oid_fromstr(out, hex) == 0;
}

void tf_git_id_hex(char out[GIT_OID_HEXSZ + 1], const git_oid *id)
{
	git_oid_tostr(out, GIT_OID_HEXSZ + 1, id);
}

int tf_git_rev(git_oid *out, git_repository *repo, const char *rev)
{
	git_object *obj = NULL, *peeled = NULL;
	git_oid full;
	int rc;

	if (!rev || !*rev)
		return tf_error_set(TF_EUSAGE, "empty revision");
	/* a full id names a commit even when this clone lacks it (a baseline
	 * fetched for a commit that was never fetched itself) */
	if (tf_git_parse_id(&full, rev)) {
		if (!repo || git_object_lookup(&obj, repo, &full, GIT_OBJECT_ANY) != 0) {
			git_error_clear();
			*out = full;
			return 0;
		}
	} else {
		if (!repo)
			return tf_error_set(TF_EUSAGE,
				"'%s' is not a full commit id, and there is no git repository to resolve it in",
				rev);
		rc = git_revparse_single(&obj, repo, rev);
		if (rc)
			return rc == GIT_ENOTFOUND || rc == GIT_EINVALIDSPEC || rc == GIT_EAMBIGUOUS
				? tf_git_error(rc, rc == GIT_ENOTFOUND ? TF_ENOTFOUND : TF_EINVAL,
					       "unknown revision '%s'", rev)
				: tf_git_error(rc, 0, "cannot resolve revision '%s'", rev);
	}
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc)
		return tf_git_error(rc, TF_EINVAL, "revision '%s' is not a commit", rev);
	*out = *git_object_id(peeled);
	git_object_free(peeled);
	return 0;
}

int tf_git_walk_first_parent(git_repository *repo, const git_oid *start, unsigned max,
			     tf_git_walk_fn fn, void *payload, tf_git_walk_end *end)
{
	git_commit *c = NULL, *next;
	tf_git_walk_end why = TF_GIT_WALK_STOPPED;
	unsigned d = 0;
	int rc = git_commit_lookup(&c, repo, start);

	if (rc) {
		rc = tf_git_error(rc, TF_ENOTFOUND, "commit %s is not in this repository",
				  git_oid_tostr_s(start));
		goto done;
	}
	for (;;) {
		rc = fn(git_commit_id(c), d, payload);
		if (rc)
			break;
		if (max && d + 1 >= max) {
			why = TF_GIT_WALK_MAX;
			break;
		}
		if (git_commit_parentcount(c) == 0) {
			why = TF_GIT_WALK_ROOT;
			break;
		}
		rc = git_commit_parent(&next, c, 0);
		if (rc == GIT_ENOTFOUND) {
			/* the parent is named but not here: a shallow boundary */
			git_error_clear();
			why = TF_GIT_WALK_SHALLOW;
			rc = 0;
			break;
		}
		if (rc) {
			rc = tf_git_error(rc, 0, "cannot read the parent of %s",
					  git_oid_tostr_s(git_commit_id(c)));
			break;
		}
		git_commit_free(c);
		c = next;
		d++;
	}
done:
	git_commit_free(c);
	if (end)
		*end = why;
	return rc > 0 ? 0 : rc;
}
