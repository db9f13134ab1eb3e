/*
 * messages.c - how testflame talks to its user: one line per message on
 * stderr, prefixed "testflame: ", quiet and verbose levels. Engine modules
 * never print; they return errors the commands pass to tf_fail().
 */
#include "cli.h"

#include <unistd.h>

int tf_cli_verbosity;

static void emit(const char *prefix, const char *fmt, va_list ap)
{
	char line[4096];
	vsnprintf(line, sizeof(line), fmt, ap);
	/* one message, one line: never let a newline in a name split it */
	for (char *c = line; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	fprintf(stderr, "testflame: %s%s\n", prefix, line);
}

void tf_errorf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

void tf_warnf(const char *fmt, ...)
{
	va_list ap;
	/* -q is "only errors", but for publish: a warning is not one */
	if (tf_cli_verbosity < TF_CLI_WARNINGS)
		return;
	va_start(ap, fmt);
	emit("warning: ", fmt, ap);
	va_end(ap);
}

void tf_notef(const char *fmt, ...)
{
	va_list ap;
	if (tf_cli_verbosity < 0)
		return;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

void tf_verbosef(const char *fmt, ...)
{
	va_list ap;
	if (tf_cli_verbosity < 1)
		return;
	va_start(ap, fmt);
	emit("", fmt, ap);
	va_end(ap);
}

int tf_fail(int rc)
{
	tf_errorf("%s", tf_error_last());
	return rc == TF_EUSAGE ? TF_EXIT_USAGE : TF_EXIT_ERROR;
}

bool tf_cli_isatty(int fd)
{
	return isatty(fd) == 1;
}
