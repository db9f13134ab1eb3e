/*
 * error.c - the thread-local last-error message behind tf_error_set().
 *
 * Engine code never prints; it leaves one sentence here and returns a code.
 * The cli layer reads the sentence and decides how to show it. Messages are
 * lowercase, without a full stop, and quote the names they mention.
 */
#include "testflame/common.h"

#include <errno.h>
#include <string.h>

static _Thread_local char last_error[2048];

static void set_message(const char *fmt, va_list ap, const char *suffix)
{
	int n = vsnprintf(last_error, sizeof(last_error), fmt, ap);
	if (n < 0)
		n = 0;
	if (suffix && (size_t)n < sizeof(last_error))
		snprintf(last_error + n, sizeof(last_error) - (size_t)n, ": %s", suffix);
}

int tf_error_set(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	set_message(fmt, ap, NULL);
	va_end(ap);
	return code;
}

int tf_error_set_errno(int code, const char *fmt, ...)
{
	int saved = errno;
	va_list ap;
	va_start(ap, fmt);
	set_message(fmt, ap, strerror(saved));
	va_end(ap);
	errno = saved;
	return code;
}

int tf_error_wrap(int code, const char *fmt, ...)
{
	char old[sizeof(last_error)];
	va_list ap;

	memcpy(old, last_error, sizeof(old));
	va_start(ap, fmt);
	set_message(fmt, ap, old[0] ? old : NULL);
	va_end(ap);
	return code;
}

const char *tf_error_last(void)
{
	return last_error[0] ? last_error : "unknown error";
}

void tf_error_clear(void)
{
	last_error[0] = '\0';
}
