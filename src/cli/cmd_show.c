/*
 * cmd_show.c - `testflame show [--json] FILE`: what a run file holds, at a
 * glance (report/show.c): its metadata, the totals with their units, what
 * was lost on the way, the per-test and per-process tables. Works on any
 * pprof or folded file.
 */
#include "cli_int.h"

#include <stdlib.h>

static const char *const show_usage[] = {
	"testflame show [--json] FILE",
	NULL,
};

int cmd_show(int argc, char **argv)
{
	bool as_json = false;
	const tf_option opts[] = {
		TF_OPT_FLAG(0, "json", &as_json, "print JSON instead of text"),
		TF_OPTS_END,
	};
	tf_profile *p = NULL;
	tf_buf out = TF_BUF_INIT;
	int n, rc, ret = TF_EXIT_OK;

	n = tf_parse_options(argc, argv, opts, show_usage, 0, NULL);
	if (n == -2)
		return TF_EXIT_OK;
	if (n < 0)
		return TF_EXIT_USAGE;
	if (n != 2)
		return tf_usage_error(show_usage, n < 2 ? "which run file? (show needs one FILE)"
				      : "show takes one FILE, not %d", n - 1);
	if ((rc = tf_profile_load(&p, argv[1])) || (rc = tf_report_show(&out, p, argv[1], as_json))) {
		ret = tf_fail(rc);
	} else {
		fwrite(out.ptr, 1, out.len, stdout);
		if (fflush(stdout) != 0) {
			tf_errorf("cannot write to standard output");
			ret = TF_EXIT_ERROR;
		}
	}
	tf_buf_free(&out);
	tf_profile_free(p);
	return ret;
}
