/*
 * table.c - the comparison's table on stdout (see cli_int.h), drawn alike by
 * `compare`, `run` and `merge`.
 */
#include "cli_int.h"
#include "testflame/report.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

const char *const tf_cli_colour_choices[] = { "auto", "always", "never", NULL };

static bool want_colour(const char *mode)
{
	const char *term = getenv("TERM");
	if (mode && strcmp(mode, "always") == 0)
		return true;
	if (mode && strcmp(mode, "never") == 0)
		return false;
	return tf_cli_isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
	       !(term && strcmp(term, "dumb") == 0);
}

static unsigned table_width(void)
{
	struct winsize ws;
	/* a CI log has no width: 100 columns; a terminal: its own, within the
	 * 72 to 100 the table is laid out for */
	if (tf_cli_isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 &&
	    ws.ws_col > 0)
		return TF_MAX(72u, TF_MIN(100u, (unsigned)ws.ws_col));
	return 100;
}

void tf_cli_print_regressions(const tf_comparison *c, const char *report_dir)
{
	size_t n = 0;

	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		char base[48], head[48];
		/* the gate's regressions: the work outside tests only when gated */
		if (t->verdict != TF_VERDICT_REGRESSED || (t->outside && !c->summary.gate_outside))
			continue;
		tf_value_format(base, sizeof(base), t->base.cost, c->summary.unit);
		tf_value_format(head, sizeof(head), t->head.cost, c->summary.unit);
		printf("regressed: %s %+.1f%% (%s -> %s)\n", t->name, t->delta_pct, base, head);
		n++;
	}
	if (n)
		printf("REGRESSION: %zu test%s slower by at least %g%%; report: %s/index.html\n", n,
		       n == 1 ? "" : "s", c->summary.threshold, report_dir);
}

/* The table of `c`, then the memory comparison's (`memory` may be NULL). */
static int print_tables(const tf_comparison *c, const tf_comparison *memory, bool memory_gated,
			const char *report_dir, const char *colour, bool all)
{
	tf_table_opts to;
	tf_buf out = TF_BUF_INIT;
	char *html = tf_xasprintf("%s/index.html", report_dir);
	int rc;

	tf_table_opts_init(&to);
	to.color = want_colour(colour);
	to.width = table_width();
	to.all = all;
	rc = tf_report_terminal(&out, c, &to, memory ? NULL : html);
	if (!rc && memory && !(rc = tf_report_memory_terminal(&out, memory, memory_gated, &to))) {
		tf_buf_puts(&out, "\nreport: ");
		tf_buf_put_printable(&out, html);
		tf_buf_puts(&out, " (the allocations: index.html#memory)\n");
	}
	if (!rc)
		fwrite(out.ptr, 1, out.len, stdout);
	free(html);
	tf_buf_free(&out);
	return rc;
}

int tf_cli_print_table(const tf_comparison *c, const char *report_dir, const char *colour,
		       bool all)
{
	return print_tables(c, NULL, false, report_dir, colour, all);
}

int tf_cli_table(void *ctx, const tf_comparison *c, const char *report_dir)
{
	const tf_cli_out *out = ctx;
	int rc = 0;

	if (out->quiet)
		tf_cli_print_regressions(c, report_dir);
	else
		rc = tf_cli_print_table(c, report_dir, out->colour, out->all);
	fflush(stdout);
	return rc;
}

int tf_cli_memory_table(void *ctx, const tf_comparison *c, const tf_comparison *memory,
			bool gated, const char *report_dir)
{
	const tf_cli_out *out = ctx;
	int rc = print_tables(c, memory, gated, report_dir, out->colour, out->all);
	fflush(stdout);
	return rc;
}
