/*
 * files.c - the files a CI step hands back to its CI system. GitHub
 * Actions reads step outputs from $GITHUB_OUTPUT and the job summary from
 * $GITHUB_STEP_SUMMARY; both are files other steps append to, so they are
 * appended to (with O_APPEND, one write per record), never replaced.
 */
#include "publish/publish_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tf_publish_append(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	const char *p = data;
	if (fd < 0)
		return tf_error_set_errno(TF_ERROR, "cannot open '%s'", path);
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int rc = tf_error_set_errno(TF_ERROR, "cannot write '%s'", path);
			close(fd);
			return rc;
		}
		p += w;
		len -= (size_t)w;
	}
	if (close(fd) != 0)
		return tf_error_set_errno(TF_ERROR, "cannot write '%s'", path);
	return 0;
}

static bool valid_name(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return false;
	return true;
}

int tf_publish_github_output(const char *path, const char *const *names,
			     const char *const *values, size_t n)
{
	tf_buf b = TF_BUF_INIT;
	int rc;

	for (size_t i = 0; i < n; i++) {
		const char *v = values[i] ? values[i] : "";
		if (!valid_name(names[i])) {
			tf_buf_free(&b);
			return tf_error_set(TF_EINVAL, "'%s' is not a valid output name", names[i]);
		}
		if (!strpbrk(v, "\r\n")) {
			tf_buf_printf(&b, "%s=%s\n", names[i], v);
			continue;
		}
		/* NAME<<DELIM ... DELIM, with a delimiter the value cannot hold */
		char delim[48];
		do {
			snprintf(delim, sizeof(delim), "ghadelimiter_%016llx",
				 (unsigned long long)tf_hash_u64(tf_now_ns() ^ (uint64_t)getpid() ^ i));
		} while (strstr(v, delim));
		tf_buf_printf(&b, "%s<<%s\n%s\n%s\n", names[i], delim, v, delim);
	}
	rc = tf_publish_append(path, b.ptr ? b.ptr : "", b.len);
	tf_buf_free(&b);
	return rc;
}
