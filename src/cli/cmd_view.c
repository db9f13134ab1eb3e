/*
 * cmd_view.c - `testflame view FILE`: look at any profile (our run files,
 * pprof from Go, Pyroscope or other tools, folded stacks) as a top table,
 * an interactive HTML page or an SVG flame graph, or convert it to folded
 * stacks, pprof or speedscope JSON. Optionally narrowed to one test and one
 * value column.
 */
#include "cli_int.h"
#include "testflame/aggregate.h"
#include "testflame/profile.h"
#include "testflame/report.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const view_usage[] = {
	"testflame view FILE [--format FMT] [-o OUT] [--top N] [--test NAME] [--value TYPE]",
	NULL,
};

static const char *const view_formats[] = {
	"text", "folded", "pprof", "speedscope", "html", "svg", NULL,
};

struct view_opts {
	const char *format, *output, *test, *value;
	long top;
	bool cum, top_seen, cum_seen, value_seen;
};

static bool known_format(const char *f)
{
	for (const char *const *k = view_formats; *k; k++)
		if (strcmp(*k, f) == 0)
			return true;
	return false;
}

/* Names of a few tests of the profile, for "did you mean" messages. */
static char *some_tests(const tf_profile *p)
{
	tf_label_groups *g;
	tf_buf b = TF_BUF_INIT;
	size_t shown = 0;

	if (tf_label_groups_new(&g, p, "test", NULL, 0) == 0) {
		for (size_t i = 0; i < g->n && shown < 8; i++) {
			if (!g->groups[i].value)
				continue;
			tf_buf_puts(&b, shown++ ? ", '" : "'");
			tf_buf_put_printable(&b, g->groups[i].value);
			tf_buf_putc(&b, '\'');
		}
		if (g->n > shown + 1)
			tf_buf_puts(&b, ", ...");
		tf_label_groups_free(g);
	}
	if (!shown)
		tf_buf_puts(&b, "none: its samples carry no 'test' label");
	return tf_buf_detach(&b);
}

static bool test_in_meta(const tf_profile *p, const char *test)
{
	char *key = tf_xasprintf("test.%s", test);
	bool found = tf_profile_meta(p, key) != NULL;
	free(key);
	return found;
}

static int write_output(const char *path, const tf_buf *b)
{
	int rc;

	if (path && strcmp(path, "-") != 0) {
		rc = tf_file_write_atomic(path, b->ptr ? b->ptr : "", b->len);
		return rc ? tf_fail(rc) : TF_EXIT_OK;
	}
	if ((b->len && fwrite(b->ptr, 1, b->len, stdout) != b->len) || fflush(stdout) != 0) {
		tf_errorf("cannot write to standard output");
		return TF_EXIT_ERROR;
	}
	return TF_EXIT_OK;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s && s[1] ? s + 1 : path;
}

static int render(tf_buf *out, const tf_profile *p, const char *file, const struct view_opts *o,
		  size_t vi, const uint8_t *mask)
{
	const char *f = o->format;
	int rc = 0;

	if (strcmp(f, "text") == 0) {
		char *sel = o->test ? tf_xasprintf("test '%s'", o->test) : NULL;
		tf_top_options to = { vi, mask, sel, (size_t)o->top, o->cum };
		rc = tf_top_write(out, p, &to);
		free(sel);
	} else if (strcmp(f, "folded") == 0) {
		rc = tf_folded_write(out, p, vi, o->test ? "test" : NULL, o->test);
	} else if (strcmp(f, "speedscope") == 0) {
		rc = tf_speedscope_write(out, p, vi, o->test, base_name(file));
	} else if (strcmp(f, "html") == 0) {
		rc = tf_report_profile_html(out, p, vi, o->test, base_name(file), NULL);
	} else if (strcmp(f, "svg") == 0) {
		rc = tf_report_profile_svg(out, p, vi, o->test, base_name(file), NULL);
	} else if (strcmp(f, "pprof") == 0) {
		tf_profile *sel = NULL;
		if (mask)
			tf_profile_select(&sel, p, mask);
		rc = tf_pprof_encode(out, sel ? sel : p, 6);
		tf_profile_free(sel);
	}
	return rc;
}

int cmd_view(int argc, char **argv)
{
	struct view_opts o = { "text", NULL, NULL, NULL, 50, false, false, false, false };
	const tf_option opts[] = {
		TF_OPT_STRING('f', "format", &o.format, "FMT",
			      "text (the default), folded, pprof, speedscope, html (an interactive page) "
			      "or svg (a flame graph)"),
		TF_OPT_STRING('o', "output", &o.output, "OUT",
			      "write OUT (atomically) instead of standard output"),
		TF_OPT_STRING(0, "test", &o.test, "NAME",
			      "only the samples of test NAME (shares are of its total)"),
		TF_OPT_STRING(0, "value", &o.value, "TYPE",
			      "sample type to show (cpu, samples, ...; default: the profile's default)",
			      .seen = &o.value_seen),
		TF_OPT_GROUP("text format"),
		TF_OPT_INT(0, "top", &o.top, "N", "show the N costliest functions (0: all; 50)",
			   0, 1000000000, .seen = &o.top_seen),
		TF_OPT_FLAG(0, "cum", &o.cum, "sort by cumulative cost (pprof -cum)", .seen = &o.cum_seen),
		TF_OPTS_END,
	};
	tf_profile *p = NULL;
	uint8_t *mask = NULL;
	tf_buf out = TF_BUF_INIT;
	size_t vi;
	int n, rc, ret = TF_EXIT_ERROR;

	n = tf_parse_options(argc, argv, opts, view_usage, 0, NULL);
	if (n == -2)
		return TF_EXIT_OK;
	if (n < 0)
		return TF_EXIT_USAGE;
	if (n != 2)
		return tf_usage_error(view_usage, n < 2 ? "which profile? (view needs one FILE)"
				      : "view takes one FILE, not %d", n - 1);
	if (!known_format(o.format))
		return tf_usage_error(view_usage, "invalid value '%s' for --format (expected one "
				      "of: text, folded, pprof, speedscope, html, svg)", o.format);
	if (strcmp(o.format, "text") != 0 && (o.top_seen || o.cum_seen))
		tf_warnf("--top and --cum only apply to --format text");
	if (strcmp(o.format, "pprof") == 0 && o.value_seen)
		tf_warnf("--value does not apply to --format pprof, which keeps every sample type");
	if (strcmp(o.format, "pprof") == 0 && (!o.output || strcmp(o.output, "-") == 0) &&
	    tf_cli_isatty(STDOUT_FILENO)) {
		tf_errorf("refusing to write binary pprof to a terminal; use -o FILE");
		return TF_EXIT_ERROR;
	}

	rc = tf_profile_load(&p, argv[1]);
	if (rc)
		return tf_fail(rc);
	rc = tf_profile_value_index(&vi, p, o.value);
	if (rc) {
		tf_errorf("'%s': %s", argv[1], tf_error_last());
		goto done;
	}
	if (o.test) {
		bool any = false;
		mask = tf_profile_label_mask(p, "test", o.test);
		for (size_t i = 0; i < p->samples.n && !any; i++)
			any = mask[i];
		if (!any && !test_in_meta(p, o.test)) {
			char *tests = some_tests(p);
			tf_errorf("'%s' has no test '%s' (tests: %s)", argv[1], o.test, tests);
			free(tests);
			goto done;
		}
	}
	rc = render(&out, p, argv[1], &o, vi, mask);
	if (rc) {
		tf_fail(rc);
		goto done;
	}
	ret = write_output(o.output, &out);
done:
	tf_buf_free(&out);
	free(mask);
	tf_profile_free(p);
	return ret;
}
