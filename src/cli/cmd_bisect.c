/*
 * cmd_bisect.c - `testflame bisect TEST GOOD BAD`: the commit that made
 * TEST slower. The search is the engine's (run/bisect.c: the stored runs
 * first, then commits built and run here, alternately with GOOD); this
 * file parses the options and prints what was found.
 */
#include "cli_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const bisect_usage[] = {
	"testflame bisect [--rounds N] [--suite NAME] [--store SPEC] [record options] TEST GOOD BAD",
	NULL,
};

static void print_functions(const tf_history_fn *fn, size_t n, const char *unit)
{
	for (size_t i = 0; i < n; i++) {
		const tf_func_delta *f = &fn[i].d;
		char c[32];
		tf_compare_format_cost(c, sizeof(c), fabs(f->delta_self), unit);
		tf_buf b = TF_BUF_INIT;
		tf_buf_put_printable(&b, f->name);
		printf("  %s %s %c%s self", i ? "          " : "functions:", b.ptr,
		       f->delta_self < 0 ? '-' : '+', c);
		tf_buf_clear(&b);
		if (f->file && *f->file) {
			const char *base = strrchr(f->file, '/');
			tf_buf_put_printable(&b, base ? base + 1 : f->file);
			printf(" (%s:%lld)", b.ptr, (long long)f->line);
			tf_buf_clear(&b);
		}
		if (fn[i].caller) {
			tf_buf_put_printable(&b, fn[i].caller);
			printf(", from %s", b.ptr);
		}
		tf_buf_free(&b);
		putchar('\n');
	}
}

static void print_found(const tf_run_bisect_result *f, const char *test)
{
	const tf_bisect_range *r = &f->r;
	tf_buf b = TF_BUF_INIT;

	if (f->narrowed) {
		printf("the first slower commit is one of %.10s..%.10s: the others were skipped\n",
		       r->commits[f->lo], r->commits[f->hi]);
		for (size_t i = f->lo + 1; i <= f->hi; i++)
			printf("  %.10s%s\n", r->commits[i], f->skipped[i] ? " (skipped)" : "");
		for (size_t i = 0; i < r->n; i++)
			if (f->skip_why[i])
				printf("skipped: %.10s %s\n", r->commits[i], f->skip_why[i]);
		return;
	}
	tf_buf_put_printable(&b, r->subjects[f->hi] ? r->subjects[f->hi] : "");
	printf("first slower commit: %s %s\n", r->commits[f->hi], b.ptr);
	tf_buf_clear(&b);
	tf_buf_put_printable(&b, test);
	if (f->rounds)
		printf("  %s %+.1f%% [%+.1f%%, %+.1f%%] against %.10s (%s)\n", b.ptr, f->delta,
		       f->ci_low, f->ci_high, r->commits[0], f->how);
	else
		printf("  %s %+.1f%% (%s)\n", b.ptr, f->size, f->how);
	tf_buf_free(&b);
	print_functions(f->functions, f->nfunctions, "nanoseconds");
	for (size_t i = 0; i < r->n; i++)
		if (f->skip_why[i])
			printf("skipped: %.10s %s\n", r->commits[i], f->skip_why[i]);
}

int cmd_bisect(int argc, char **argv)
{
	tf_cli_out out = { 0 };
	tf_run_io io = { 0 };
	tf_run_suite s;
	tf_run_bisect_result found;
	tf_option *rec_opts;
	const char *store = NULL;
	long rounds = 0;
	int status, nargs, rc;

	memset(&found, 0, sizeof(found));
	tf_run_suite_init(&s, &io);
	s.needs_git = true;
	rec_opts = tf_cli_record_options(&s, &out);
	const tf_option opts[] = {
		TF_OPT_INCLUDE(rec_opts),
		TF_OPT_GROUP("bisect:"),
		TF_OPT_INT(0, "rounds", &rounds, "N",
			   "rounds of GOOD and a candidate, alternately (default 3; more, up to 8, while undecided)",
			   1, TF_RUN_BISECT_ROUNDS_MAX),
		TF_OPT_STRING(0, "store", &store, "SPEC",
			      "git, git:REMOTE, dir:PATH or pyroscope:URL (default: as run)"),
		TF_OPTS_END,
	};
	nargs = tf_parse_options(argc, argv, opts, bisect_usage, 0, NULL);
	if (nargs < 0) {
		status = nargs == -2 ? TF_EXIT_OK : TF_EXIT_USAGE;
		goto out;
	}
	if (nargs != 4) {
		status = tf_usage_error(bisect_usage, "expected TEST GOOD BAD");
		goto out;
	}
	tf_cli_io(&io, &out);
	if ((rc = tf_run_prepare(&s, NULL))) {
		status = tf_fail(rc);
		goto out;
	}
	status = tf_run_bisect(&found, &s, argv[1], argv[2], argv[3], store, rounds);
	if (status == TF_EXIT_OK)
		print_found(&found, argv[1]);
out:
	tf_run_bisect_result_clear(&found);
	tf_run_suite_free(&s);
	free(rec_opts);
	return status;
}
