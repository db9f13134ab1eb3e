/*
 * lockfile.c - a ref lock a killed writer left behind.
 *
 * libgit2 updates a ref through "<ref>.lock": it writes the new value
 * there and renames it over the ref. A writer killed in between (a
 * cancelled CI job) leaves the lock, and every later update of that ref
 * fails as if another writer held it: the next run could never save that
 * baseline. Writers hold a ref's lock for a few system calls, so a lock
 * older than STALE_SECONDS belongs to no one alive and is removed before
 * the update. (A younger one is waited for, then reported by
 * tf_git_gave_up() with the path to remove.)
 */
#include "store_int.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define STALE_SECONDS 10

bool tf_git_unlock_stale(git_repository *repo, const char *refname)
{
	char *lock = tf_xasprintf("%s%s.lock", git_repository_commondir(repo), refname);
	struct stat st;
	bool removed = false;

	if (stat(lock, &st) == 0 && S_ISREG(st.st_mode) &&
	    time(NULL) - st.st_mtime > STALE_SECONDS)
		removed = unlink(lock) == 0;
	free(lock);
	return removed;
}
