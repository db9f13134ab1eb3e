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

int tf_cli_print_table(const tf_comparison *c, const char *report_dir, const char *colour,
		       bool all)
{
	tf_table_opts to;
	tf_buf out = TF_BUF_INIT;
	char *html = tf_xasprintf("%s/index.html", report_dir);
	int rc;

	tf_table_opts_init(&to);
	to.color = want_colour(colour);
	to.width = table_width();
	to.all = all;
	rc = tf_report_terminal(&out, c, &to, html);
	if (!rc)
		fwrite(out.ptr, 1, out.len, stdout);
	free(html);
	tf_buf_free(&out);
	return rc;
}

int tf_cli_table(void *ctx, const tf_comparison *c, const char *report_dir)
{
	const tf_cli_out *out = ctx;
	int rc = tf_cli_print_table(c, report_dir, out->colour, out->all);
	fflush(stdout);
	return rc;
}
