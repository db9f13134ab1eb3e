/*
 * strlist.c - lists of strings every module hands around: tf_msglist, the
 * one-line messages (warnings, problems, notes) an engine module collects
 * for the cli to print, and tf_strv, a NULL-terminated vector of strings
 * (argv-like config lists, a commit's parents); and notices, the lines an
 * engine module hands its caller through a callback while it works.
 */
#include "testflame/common.h"

#include <stdlib.h>
#include <string.h>

const char *tf_env_get(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (; envp && *envp; envp++)
		if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
			return *envp + n + 1;
	return NULL;
}

void tf_vnotice(tf_notice_fn fn, void *ctx, tf_notice_level level, const char *fmt, va_list ap)
{
	char msg[1400];

	if (!fn)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	fn(ctx, level, msg);
}

void tf_notice(tf_notice_fn fn, void *ctx, tf_notice_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tf_vnotice(fn, ctx, level, fmt, ap);
	va_end(ap);
}

void tf_msglist_pushf(tf_msglist *l, const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT, line = TF_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	/* one line, whatever the values quoted (a payload's bytes, a branch
	 * name): line breaks and control characters escaped */
	tf_buf_put_printable(&line, b.ptr);
	if (!line.ptr)
		tf_buf_puts(&line, "");
	tf_buf_free(&b);
	tf_vec_push(l, tf_buf_detach(&line));
}

void tf_msglist_free(tf_msglist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	tf_vec_free(l);
}

char **tf_strv_dup(char *const *v)
{
	size_t n = 0;
	char **out;
	while (v[n])
		n++;
	out = tf_xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		out[i] = tf_xstrdup(v[i]);
	return out;
}

void tf_strv_free(char **v)
{
	if (!v)
		return;
	for (char **p = v; *p; p++)
		free(*p);
	free(v);
}
