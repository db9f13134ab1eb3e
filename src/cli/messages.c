/*
 * messages.c - how testflame talks to its user: one line per message on
 * stderr, prefixed "testflame: ", quiet and verbose levels; and the run
 * engine's callbacks, which print through them. Engine modules never
 * print; they return errors the commands pass to tf_fail(), and say the
 * rest through callbacks.
 */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>
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

void tf_cli_notice(void *ctx, tf_notice_level level, const char *msg)
{
	(void)ctx;
	if (level == TF_NOTICE_ERROR)
		tf_errorf("%s", msg);
	else if (level == TF_NOTICE_WARN)
		tf_warnf("%s", msg);
	else if (level == TF_NOTICE_VERBOSE)
		tf_verbosef("%s", msg);
	else
		tf_notef("%s", msg);
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

const tf_run_io tf_cli_notices = { .notice = tf_cli_notice };

static void print_out(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	/* after what stderr said, before what it says next */
	fflush(stdout);
	fwrite(text, 1, len, stdout);
	fflush(stdout);
}

static void progress(void *ctx, const tf_record_progress *p)
{
	tf_cli_out *out = ctx;
	double secs;

	if (!p) { /* the recording ended: its line goes */
		if (out->shown)
			fputs("\r\033[K", stderr);
		out->shown = false;
		return;
	}
	secs = (double)p->elapsed_ns / 1e9;
	if (out->tty) {
		fprintf(stderr, "\r\033[Ktestflame: %.1fs  %llu samples  %llu processes%s",
			secs, (unsigned long long)p->samples, (unsigned long long)p->processes,
			p->lost ? "  (samples lost)" : "");
		out->shown = true;
	} else if (p->elapsed_ns - out->last_line_ns >= 15000000000ULL) {
		/* CI logs: a heartbeat, not a ticker */
		fprintf(stderr, "testflame: %.0fs, %llu samples, %llu processes\n", secs,
			(unsigned long long)p->samples, (unsigned long long)p->processes);
		out->last_line_ns = p->elapsed_ns;
	}
}

void tf_cli_io(tf_run_io *io, tf_cli_out *out)
{
	bool show = !out->quiet && !getenv("TESTFLAME_NO_PROGRESS");

	tf_cli_verbosity = out->quiet ? TF_CLI_ERRORS : out->verbose;
	memset(io, 0, sizeof(*io));
	io->notice = tf_cli_notice;
	io->print = print_out;
	io->table = tf_cli_table;
	io->memory_table = tf_cli_memory_table;
	io->progress = show ? progress : NULL;
	io->ctx = out;
	io->verbosity = out->quiet ? -1 : out->verbose;
	out->tty = show && tf_cli_isatty(2);
}
