/*
 * git.c - the store's boundary with libgit2: error conversion (with every
 * credential scrubbed out of libgit2's messages, which may quote URLs that
 * carry a token), revision parsing, and the one primitive all writers rely
 * on, a compare-and-swap update of a baseline ref that fails instead of
 * clobbering a concurrent writer.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

char *tf_store_scrub(const char *msg)
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

int tf_store_git_error(int gitrc, int code, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	char *what, *why;
	va_list ap;
	tf_buf b = TF_BUF_INIT;
	int rc;

	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	what = tf_store_scrub(b.ptr);
	tf_buf_free(&b);
	why = tf_store_scrub(e && e->message ? e->message : "unknown libgit2 error");
	/* libgit2 messages may end with a full stop or a newline */
	for (size_t n = strlen(why); n && (why[n - 1] == '.' || why[n - 1] == '\n'); n--)
		why[n - 1] = '\0';
	if (!code)
		code = tf_git_code(gitrc);
	if (!code)
		code = TF_ERROR;
	rc = tf_error_set(code, "%s: %s", what, why);
	free(what);
	free(why);
	return rc;
}

bool tf_git_parse_id(git_oid *out, const char *hex)
{
	if (!hex || strlen(hex) != TF_STORE_ID_HEX)
		return false;
	for (const char *c = hex; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f') ||
		      (*c >= 'A' && *c <= 'F')))
			return false;
	return git_oid_fromstr(out, hex) == 0;
}

void tf_git_id_hex(char out[TF_STORE_ID_HEX + 1], const git_oid *id)
{
	git_oid_tostr(out, TF_STORE_ID_HEX + 1, id);
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
				? tf_store_git_error(rc, rc == GIT_ENOTFOUND ? TF_ENOTFOUND : TF_EINVAL,
					       "unknown revision '%s'", rev)
				: tf_store_git_error(rc, 0, "cannot resolve revision '%s'", rev);
	}
	rc = git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT);
	git_object_free(obj);
	if (rc)
		return tf_store_git_error(rc, TF_EINVAL, "revision '%s' is not a commit", rev);
	*out = *git_object_id(peeled);
	git_object_free(peeled);
	return 0;
}

char *tf_git_ref_name(const git_oid *commit)
{
	char hex[TF_STORE_ID_HEX + 1];
	tf_git_id_hex(hex, commit);
	return tf_xasprintf("%s%s", TF_STORE_REF_PREFIX, hex);
}

int tf_git_ref_get(git_oid *out, git_repository *repo, const char *refname)
{
	git_reference *ref = NULL;
	int rc = git_reference_lookup(&ref, repo, refname);

	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		return tf_error_set(TF_ENOTFOUND, "no ref '%s'", refname);
	}
	if (rc)
		return tf_store_git_error(rc, TF_EINVAL, "cannot read ref '%s'", refname);
	if (git_reference_type(ref) != GIT_REFERENCE_DIRECT) {
		git_reference_free(ref);
		return tf_error_set(TF_EINVAL, "ref '%s' is symbolic, not a baseline", refname);
	}
	*out = *git_reference_target(ref);
	git_reference_free(ref);
	return 0;
}

int tf_git_ref_cas(git_repository *repo, const char *refname, const git_oid *id,
		   const git_oid *expected, const char *why)
{
	git_reference *ref = NULL;
	git_oid zero;
	int rc;

	/*
	 * force=1 with an expected value: libgit2 then checks the old value
	 * under the ref's lock. (force=0 would check existence before taking
	 * the lock, which two creators can both pass; a zero expected id means
	 * "must not exist" and is checked under the lock.)
	 */
	tf_git_unlock_stale(repo, refname);
	memset(&zero, 0, sizeof(zero));
	rc = git_reference_create_matching(&ref, repo, refname, id, 1,
					   expected ? expected : &zero, why);
	git_reference_free(ref);
	if (rc == GIT_EMODIFIED || rc == GIT_ELOCKED || rc == GIT_EEXISTS)
		return tf_store_git_error(rc, TF_ECONFLICT, "another writer updated '%s'", refname);
	if (rc)
		return tf_store_git_error(rc, 0, "cannot update ref '%s'", refname);
	return 0;
}

int tf_git_gave_up(git_repository *repo, const char *refname, unsigned attempts)
{
	char *lock = tf_xasprintf("%s%s.lock", git_repository_commondir(repo), refname);
	int rc;

	if (access(lock, F_OK) == 0)
		rc = tf_error_set(TF_ECONFLICT,
			"'%s' stays locked: remove '%s' if no testflame or git is running", refname, lock);
	else
		rc = tf_error_set(TF_ECONFLICT, "gave up after %u attempts: other writers keep updating '%s'",
				  attempts, refname);
	free(lock);
	return rc;
}

int tf_git_signature(git_signature **out)
{
	int rc = git_signature_now(out, "testflame", "testflame@localhost");
	return rc ? tf_store_git_error(rc, 0, "cannot make a commit signature") : 0;
}

void tf_store_backoff(unsigned attempt)
{
	static _Thread_local unsigned seed;
	unsigned max_ms = attempt < 6 ? 1u << attempt : 64;

	if (!seed)
		seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&seed;
	usleep((useconds_t)(1000 + rand_r(&seed) % (max_ms * 1000)));
}
