/*
 * file.c - whole-file reads, atomic writes (temp file + rename), mkdir -p,
 * rm -r and the monotonic clock.
 *
 * Every output testflame writes goes through tf_atomic_*: an interrupted run
 * leaves either the old file or the new one, never half of one, and no
 * temporary file either: the new file is written unnamed (O_TMPFILE) and
 * only at the commit linked in under a temporary name and renamed over the
 * old one, a window of two system calls; a temporary file a killed process
 * left there (or where O_TMPFILE is missing) is removed by the next write
 * of the same file.
 */
#include "testflame/common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int tf_file_read(tf_buf *out, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return tf_error_set_errno(errno == ENOENT ? TF_ENOTFOUND : TF_ERROR,
					  "cannot open '%s'", path);
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return tf_error_set(TF_EINVAL, "'%s' is a directory", path);
	}
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		tf_buf_grow(out, (size_t)st.st_size);
	for (;;) {
		tf_buf_grow(out, 65536);
		ssize_t n = read(fd, out->ptr + out->len, out->cap - out->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return tf_error_set_errno(TF_ERROR, "cannot read '%s'", path);
		}
		if (n == 0)
			break;
		out->len += (size_t)n;
	}
	out->ptr[out->len] = '\0';
	close(fd);
	return 0;
}

/* The directory part of `path` (caller frees). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? tf_xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : tf_xstrdup(".");
}

void tf_remove_stale(const char *dir, const char *prefix,
		     void (*remove)(const char *path, void *payload), void *payload)
{
	size_t n = strlen(prefix);
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		char *end;
		if (strncmp(de->d_name, prefix, n) != 0 || !dot || dot < de->d_name + n - 1)
			continue;
		long pid = strtol(dot + 1, &end, 10);
		if (*end || !dot[1] || pid <= 0 || pid == (long)getpid() ||
		    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char *path = tf_xasprintf("%s/%s", dir, de->d_name);
		if (remove)
			remove(path, payload);
		else
			unlink(path);
		free(path);
	}
	closedir(d);
}

/* "<path>.tmp.<pid>" files of processes that are gone. */
static void remove_stale(const char *path)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	char *dir = dir_of(path), *prefix = tf_xasprintf("%s.tmp.", base);

	tf_remove_stale(dir, prefix, NULL, NULL);
	free(dir);
	free(prefix);
}

/* An unnamed file in the directory of `path`, or -1 where the file system
 * (or a missing /proc, which names it at the commit) does not allow it. */
static int open_unnamed(const char *path)
{
	char *dir = dir_of(path);
	int fd = -1;

	if (access("/proc/self/fd", X_OK) == 0)
		fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
	free(dir);
	return fd;
}

int tf_atomic_open(tf_atomic_file *f, const char *path)
{
	int fd;

	memset(f, 0, sizeof(*f));
	f->path = tf_xstrdup(path);
	f->tmp = tf_xasprintf("%s.tmp.%ld", path, (long)getpid());
	remove_stale(path);
	fd = open_unnamed(path);
	f->unnamed = fd >= 0;
	if (fd < 0)
		fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot create '%s'", path);
		free(f->path);
		free(f->tmp);
		f->path = f->tmp = NULL;
		return rc;
	}
	f->fp = fdopen(fd, "w");
	if (!f->fp) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot create '%s'", path);
		close(fd);
		if (!f->unnamed)
			unlink(f->tmp);
		free(f->path);
		free(f->tmp);
		f->path = f->tmp = NULL;
		return rc;
	}
	return 0;
}

/* Give the unnamed file its temporary name. */
static int link_unnamed(tf_atomic_file *f)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fileno(f->fp));
	for (int attempt = 0; attempt < 2; attempt++) {
		if (linkat(AT_FDCWD, proc, AT_FDCWD, f->tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			break;
		unlink(f->tmp); /* left by an earlier process with our pid */
	}
	return tf_error_set_errno(TF_ERROR, "cannot write '%s'", f->path);
}

int tf_atomic_commit(tf_atomic_file *f)
{
	bool linked = false;
	int rc = 0;

	if (!f->fp)
		return tf_error_set(TF_ERROR, "no file open");
	if (fflush(f->fp) != 0 || ferror(f->fp))
		rc = tf_error_set_errno(TF_ERROR, "cannot write '%s'", f->path);
	if (!rc && f->unnamed && (rc = link_unnamed(f)) == 0)
		linked = true;
	if (fclose(f->fp) != 0 && !rc)
		rc = tf_error_set_errno(TF_ERROR, "cannot write '%s'", f->path);
	f->fp = NULL;
	if (!rc && rename(f->tmp, f->path) != 0)
		rc = tf_error_set_errno(TF_ERROR, "cannot rename onto '%s'", f->path);
	if (rc && (!f->unnamed || linked))
		unlink(f->tmp);
	free(f->path);
	free(f->tmp);
	f->path = f->tmp = NULL;
	return rc;
}

void tf_atomic_abort(tf_atomic_file *f)
{
	if (f->fp) {
		fclose(f->fp);
		f->fp = NULL;
	}
	if (f->tmp && !f->unnamed)
		unlink(f->tmp);
	free(f->path);
	free(f->tmp);
	f->path = f->tmp = NULL;
}

int tf_file_write_atomic(const char *path, const void *data, size_t len)
{
	tf_atomic_file f;
	int rc = tf_atomic_open(&f, path);
	if (rc)
		return rc;
	if (len && fwrite(data, 1, len, f.fp) != len) {
		rc = tf_error_set_errno(TF_ERROR, "cannot write '%s'", path);
		tf_atomic_abort(&f);
		return rc;
	}
	return tf_atomic_commit(&f);
}

int tf_mkdir_p(const char *path, int mode)
{
	char *p = tf_xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;
			*s = '\0';
			if (mkdir(p, (mode_t)mode) != 0 && errno != EEXIST) {
				rc = tf_error_set_errno(TF_ERROR, "cannot create directory '%s'", p);
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	if (!rc) {
		struct stat st;
		if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
			rc = tf_error_set(TF_ERROR, "'%s' is not a directory", path);
	}
	free(p);
	return rc;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int tf_rmtree(const char *path)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : tf_error_set_errno(TF_ERROR, "cannot remove '%s'", path);
	/* children first, links never followed */
	if (nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
		return tf_error_set_errno(TF_ERROR, "cannot remove '%s'", path);
	return 0;
}

char *tf_user_cache_dir(void)
{
	const char *dir = getenv("TESTFLAME_CACHE_DIR"), *home;

	if (dir && strcmp(dir, "off") == 0)
		return NULL;
	if (dir && *dir)
		return tf_xstrdup(dir);
	if ((dir = getenv("XDG_CACHE_HOME")) && dir[0] == '/')
		return tf_xasprintf("%s/testflame", dir);
	if ((home = getenv("HOME")) && home[0] == '/')
		return tf_xasprintf("%s/.cache/testflame", home);
	return NULL;
}

uint64_t tf_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
