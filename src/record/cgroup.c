/*
 * cgroup.c - a cgroup (v2) of the command's own (see record_int.h).
 *
 * It lives under this process's own cgroup, named after testflame's pid,
 * and holds the command and everything it spawns: children are born in
 * their parent's cgroup. Leaving it empty and removing it is the caller's
 * last step; the launcher's guard removes it too when testflame dies
 * (launch.c).
 */

#include "record_int.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct tf_cgroup {
	char *path;
	int fd;
};

bool tf_cgroup_parse_mount(const char *mountinfo, char *out, size_t len)
{
	const char *line = mountinfo;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		char buf[4096];
		tf_mount_line m;

		if (n < sizeof(buf)) {
			memcpy(buf, line, n);
			buf[n] = '\0';
			/* the whole hierarchy: its root is "/" */
			if (tf_procfs_parse_mountinfo_line(buf, &m) && strcmp(m.type, "cgroup2") == 0 &&
			    strcmp(m.root, "/") == 0 && strlen(m.mount) < len) {
				strcpy(out, m.mount);
				return true;
			}
		}
		line = end ? end + 1 : NULL;
	}
	return false;
}

bool tf_cgroup_parse_own(const char *cgroup, char *out, size_t len)
{
	const char *line = cgroup;

	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		/* the unified hierarchy's line: "0::/path" */
		if (n >= 4 && strncmp(line, "0::/", 4) == 0 && n - 3 < len) {
			memcpy(out, line + 3, n - 3);
			out[n - 3] = '\0';
			return true;
		}
		line = end ? end + 1 : NULL;
	}
	return false;
}

int tf_cgroup_create(tf_cgroup **out)
{
	tf_buf mi = TF_BUF_INIT, own = TF_BUF_INIT;
	char mount[1024], path[1024];
	tf_cgroup *cg = NULL;
	int rc;

	*out = NULL;
	if (tf_file_read(&mi, "/proc/self/mountinfo") || tf_file_read(&own, "/proc/self/cgroup")) {
		rc = tf_error_set(TF_EUNSUPPORTED, "cannot read /proc/self/mountinfo or /proc/self/cgroup");
		goto done;
	}
	if (!tf_cgroup_parse_mount(mi.ptr, mount, sizeof(mount))) {
		rc = tf_error_set(TF_EUNSUPPORTED, "no cgroup2 hierarchy is mounted");
		goto done;
	}
	if (!tf_cgroup_parse_own(own.ptr, path, sizeof(path))) {
		rc = tf_error_set(TF_EUNSUPPORTED, "this process has no cgroup2 cgroup");
		goto done;
	}
	cg = tf_xcalloc(1, sizeof(*cg));
	cg->fd = -1;
	cg->path = tf_xasprintf("%s%s%stestflame-%ld", mount, path,
				path[strlen(path) - 1] == '/' ? "" : "/", (long)getpid());
	if (mkdir(cg->path, 0755) != 0) {
		rc = tf_error_set_errno(TF_EUNSUPPORTED, "cannot make the cgroup '%s'", cg->path);
		free(cg->path);
		free(cg);
		cg = NULL;
		goto done;
	}
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0) {
		rc = tf_error_set_errno(TF_EUNSUPPORTED, "cannot open the cgroup '%s'", cg->path);
		tf_cgroup_free(cg);
		cg = NULL;
		goto done;
	}
	*out = cg;
	rc = 0;
done:
	tf_buf_free(&mi);
	tf_buf_free(&own);
	return rc;
}

const char *tf_cgroup_path(const tf_cgroup *cg)
{
	return cg->path;
}

int tf_cgroup_fd(const tf_cgroup *cg)
{
	return cg->fd;
}

uint64_t tf_cgroup_memory_peak(const tf_cgroup *cg)
{
	char *file = tf_xasprintf("%s/memory.peak", cg->path);
	tf_buf b = TF_BUF_INIT;
	uint64_t v = 0;
	if (tf_file_read(&b, file) == 0 && b.len)
		v = strtoull(b.ptr, NULL, 10);
	tf_error_clear();
	tf_buf_free(&b);
	free(file);
	return v;
}

/* Write a pid into a cgroup.procs file. */
static int write_pid(const char *dir, pid_t pid)
{
	char *file = tf_xasprintf("%s/cgroup.procs", dir);
	char num[32];
	int fd, n, rc = 0;

	fd = open(file, O_WRONLY | O_CLOEXEC);
	n = snprintf(num, sizeof(num), "%ld", (long)pid);
	if (fd < 0 || write(fd, num, (size_t)n) != n)
		rc = tf_error_set_errno(TF_EUNSUPPORTED, "cannot move process %ld into '%s'",
					(long)pid, dir);
	if (fd >= 0)
		close(fd);
	free(file);
	return rc;
}

int tf_cgroup_add(tf_cgroup *cg, pid_t pid)
{
	return write_pid(cg->path, pid);
}

void tf_cgroup_free(tf_cgroup *cg)
{
	if (!cg)
		return;
	if (cg->fd >= 0)
		close(cg->fd);
	if (rmdir(cg->path) != 0 && errno == EBUSY) {
		/* still inhabited: hand them to the parent, then remove it */
		tf_buf procs = TF_BUF_INIT;
		char *file = tf_xasprintf("%s/cgroup.procs", cg->path);
		char *parent = tf_xstrdup(cg->path);
		char *slash = strrchr(parent, '/');
		if (slash)
			*slash = '\0';
		for (int tries = 0; tries < 3 && tf_file_read(&procs, file) == 0 && procs.len;
		     tries++) {
			for (char *p = procs.ptr; *p;) {
				char *e;
				long pid = strtol(p, &e, 10);
				if (e == p)
					break;
				write_pid(parent, (pid_t)pid);
				p = *e ? e + 1 : e;
			}
			tf_buf_free(&procs);
		}
		tf_buf_free(&procs);
		tf_error_clear();
		rmdir(cg->path);
		free(file);
		free(parent);
	}
	free(cg->path);
	free(cg);
}
