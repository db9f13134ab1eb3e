/*
 * refs.c - the store's baseline refs over libgit2: a commit's ref name,
 * reading a ref, and the one primitive all the store's writers rely on, a
 * compare-and-swap update of a baseline ref that fails instead of
 * clobbering a concurrent writer; the error after lost races, the
 * identity baseline commits are written with, and the backoff between
 * retries.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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
		return tf_git_error(rc, TF_EINVAL, "cannot read ref '%s'", refname);
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
		return tf_git_error(rc, TF_ECONFLICT, "another writer updated '%s'", refname);
	if (rc)
		return tf_git_error(rc, 0, "cannot update ref '%s'", refname);
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
	return rc ? tf_git_error(rc, 0, "cannot make a commit signature") : 0;
}

void tf_store_backoff(unsigned attempt)
{
	static _Thread_local unsigned seed;
	unsigned max_ms = attempt < 6 ? 1u << attempt : 64;

	if (!seed)
		seed = (unsigned)getpid() ^ (unsigned)time(NULL) ^ (unsigned)(uintptr_t)&seed;
	usleep((useconds_t)(1000 + rand_r(&seed) % (max_ms * 1000)));
}
