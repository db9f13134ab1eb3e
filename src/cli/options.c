/*
 * options.c - the declarative option parser, after git's parse-options: a
 * command describes its options in one table, and the same table parses
 * argv, validates values and prints --help, so the three never drift apart.
 */
#include "cli_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const tf_option *find_long(const tf_option *opts, const char *name, size_t len)
{
	for (const tf_option *o = opts; o->type != TF_OPT_END; o++) {
		const tf_option *in = o->type == TF_OPT_INCLUDE ? find_long(o->include, name, len) : NULL;
		if (in)
			return in;
		if (o->type != TF_OPT_GROUP && o->type != TF_OPT_INCLUDE && o->long_name &&
		    strlen(o->long_name) == len && strncmp(o->long_name, name, len) == 0)
			return o;
	}
	return NULL;
}

static const tf_option *find_short(const tf_option *opts, char c)
{
	for (const tf_option *o = opts; o->type != TF_OPT_END; o++) {
		const tf_option *in = o->type == TF_OPT_INCLUDE ? find_short(o->include, c) : NULL;
		if (in)
			return in;
		if (o->type != TF_OPT_GROUP && o->type != TF_OPT_INCLUDE && o->short_name == c)
			return o;
	}
	return NULL;
}

static bool takes_arg(const tf_option *o)
{
	return o->type == TF_OPT_STRING || o->type == TF_OPT_INT ||
	       o->type == TF_OPT_DOUBLE || o->type == TF_OPT_LIST;
}

static void opt_name(char *buf, size_t n, const tf_option *o)
{
	if (o->long_name)
		snprintf(buf, n, "--%s", o->long_name);
	else
		snprintf(buf, n, "-%c", o->short_name);
}

static int set_value(const tf_option *o, const char *arg, const char *const *usage)
{
	char name[64];
	opt_name(name, sizeof(name), o);

	switch (o->type) {
	case TF_OPT_FLAG:
		*(bool *)o->value = true;
		break;
	case TF_OPT_COUNT:
		(*(int *)o->value)++;
		break;
	case TF_OPT_STRING:
		if (o->choices) {
			bool ok = false;
			for (const char *const *c = o->choices; *c; c++)
				if (strcmp(*c, arg) == 0)
					ok = true;
			if (!ok) {
				tf_buf b = TF_BUF_INIT;
				for (const char *const *c = o->choices; *c; c++)
					tf_buf_printf(&b, "%s%s", c == o->choices ? "" : ", ", *c);
				tf_usage_error(usage, "invalid value '%s' for %s (expected one of: %s)",
					       arg, name, b.ptr);
				tf_buf_free(&b);
				return -1;
			}
		}
		*(const char **)o->value = arg;
		break;
	case TF_OPT_INT: {
		char *end;
		errno = 0;
		long v = strtol(arg, &end, 10);
		if (errno || end == arg || *end) {
			tf_usage_error(usage, "%s expects a whole number, not '%s'", name, arg);
			return -1;
		}
		if (o->min < o->max && (v < o->min || v > o->max)) {
			tf_usage_error(usage, "%s must be between %ld and %ld, not %ld", name,
				       o->min, o->max, v);
			return -1;
		}
		*(long *)o->value = v;
		break;
	}
	case TF_OPT_DOUBLE: {
		char *end;
		errno = 0;
		double v = strtod(arg, &end);
		if (errno || end == arg || *end) {
			tf_usage_error(usage, "%s expects a number, not '%s'", name, arg);
			return -1;
		}
		*(double *)o->value = v;
		break;
	}
	case TF_OPT_LIST: {
		struct tf_strlist *l = o->value;
		tf_vec_push(&l->items, arg);
		break;
	}
	default:
		break;
	}
	if (o->seen)
		*o->seen = true;
	return 0;
}

int tf_parse_options(int argc, char **argv, const tf_option *opts,
		     const char *const *usage, int flags, int *dashdash)
{
	int out = 1, i;

	if (dashdash)
		*dashdash = -1;
	for (i = 1; i < argc; i++) {
		char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			if (dashdash)
				*dashdash = out;
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (flags & TF_PARSE_STOP_AT_NONOPT) {
				if (flags & TF_PARSE_REQUIRE_DASHDASH)
					return tf_usage_error(usage,
						"missing '--' before the command (try: %s [options] -- %s ...)",
						argv[0], a), -1;
				break;
			}
			argv[out++] = a;
			continue;
		}
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			tf_usage_print(stdout, usage, opts);
			return -2;
		}
		if (a[1] == '-') {
			const char *name = a + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const tf_option *o = find_long(opts, name, len);
			if (!o) {
				tf_usage_error(usage, "unknown option '--%.*s'", (int)len, name);
				return -1;
			}
			if (takes_arg(o)) {
				const char *arg = eq ? eq + 1 : NULL;
				if (!arg) {
					if (i + 1 >= argc) {
						tf_usage_error(usage, "option '--%s' needs a value (%s)",
							       o->long_name, o->argh ? o->argh : "VALUE");
						return -1;
					}
					arg = argv[++i];
				}
				if (set_value(o, arg, usage))
					return -1;
			} else {
				if (eq) {
					tf_usage_error(usage, "option '--%s' takes no value", o->long_name);
					return -1;
				}
				set_value(o, NULL, usage);
			}
			continue;
		}
		/* short options, possibly bundled: -qv, -oFILE, -o FILE */
		for (char *c = a + 1; *c; c++) {
			const tf_option *o = find_short(opts, *c);
			if (!o) {
				tf_usage_error(usage, "unknown option '-%c'", *c);
				return -1;
			}
			if (takes_arg(o)) {
				const char *arg = c[1] ? c + 1 : NULL;
				if (!arg) {
					if (i + 1 >= argc) {
						tf_usage_error(usage, "option '-%c' needs a value (%s)",
							       *c, o->argh ? o->argh : "VALUE");
						return -1;
					}
					arg = argv[++i];
				}
				if (set_value(o, arg, usage))
					return -1;
				break;
			}
			set_value(o, NULL, usage);
		}
	}
	if ((flags & TF_PARSE_REQUIRE_DASHDASH) && (!dashdash || *dashdash < 0)) {
		tf_usage_error(usage, "missing '--' and the command to run (try: %s [options] -- make test)",
			       argv[0]);
		return -1;
	}
	for (; i < argc; i++)
		argv[out++] = argv[i];
	argv[out] = NULL;
	return out;
}

static void print_options(FILE *fp, const tf_option *opts)
{
	for (const tf_option *o = opts; o->type != TF_OPT_END; o++) {
		char left[96];
		int n = 0;
		if (o->type == TF_OPT_INCLUDE) {
			print_options(fp, o->include);
			continue;
		}
		if (o->type == TF_OPT_GROUP) {
			fprintf(fp, "\n%s\n", o->help);
			continue;
		}
		if (o->short_name && o->long_name)
			n = snprintf(left, sizeof(left), "-%c, --%s", o->short_name, o->long_name);
		else if (o->short_name)
			n = snprintf(left, sizeof(left), "-%c", o->short_name);
		else
			n = snprintf(left, sizeof(left), "    --%s", o->long_name);
		if (takes_arg(o) && n > 0 && (size_t)n < sizeof(left))
			snprintf(left + n, sizeof(left) - (size_t)n, " %s", o->argh ? o->argh : "VALUE");
		fprintf(fp, "    %-26s %s", left, o->help ? o->help : "");
		if (o->choices) {
			fputs(" (", fp);
			for (const char *const *c = o->choices; *c; c++)
				fprintf(fp, "%s%s", c == o->choices ? "" : "|", *c);
			fputc(')', fp);
		}
		fputc('\n', fp);
	}
}

void (*tf_usage_hook)(const char *const *usage, const tf_option *opts);

void tf_usage_print(FILE *fp, const char *const *usage, const tf_option *opts)
{
	if (tf_usage_hook) {
		tf_usage_hook(usage, opts);
		return;
	}
	/* git's layout: alternative forms ("or:"), then after a blank line
	 * the description, as is */
	bool described = false;
	for (const char *const *u = usage; *u; u++) {
		if (!**u)
			described = true;
		fprintf(fp, "%s%s\n", u == usage ? "usage: " : (**u && !described ? "   or: " : ""), *u);
	}
	if (!opts || opts->type == TF_OPT_END)
		return;
	fputc('\n', fp);
	print_options(fp, opts);
}

int tf_usage_error(const char *const *usage, const char *fmt, ...)
{
	va_list ap;
	fputs("testflame: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (usage && usage[0])
		fprintf(stderr, "usage: %s\n", usage[0]);
	return TF_EXIT_USAGE;
}

tf_option *tf_cli_options_dup(const tf_option *opts, size_t size)
{
	tf_option *copy = tf_xmalloc(size);
	memcpy(copy, opts, size);
	return copy;
}
