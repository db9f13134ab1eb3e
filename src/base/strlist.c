/*
 * strlist.c - lists of strings every module hands around: tf_msglist, the
 * one-line messages (warnings, problems, notes) an engine module collects
 * for the cli to print, and tf_strv, a NULL-terminated vector of strings
 * (argv-like config lists, a commit's parents).
 */
#include "testflame/common.h"

#include <stdlib.h>

void tf_msglist_pushf(tf_msglist *l, const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	tf_vec_push(l, tf_buf_detach(&b));
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
