/*
 * history.c - the "history" note of a run that saved its baseline on
 * the default branch: when this commit completed a step of a test's
 * series (the fifth commit at its new level) or a drift reaching it, the
 * report says so in a short Markdown section (report.md, and in GitHub
 * Actions the step summary, where the team sees the default branch's
 * runs), and the terminal in a line each. The analysis is the history
 * module's, over the suite's newest stored runs; a history that cannot be
 * read is no failure of the run, only a verbose line.
 */
#include "run/run_int.h"
#include "testflame/history.h"

#include <stdlib.h>
#include <string.h>

/* Stored commits read: enough for a window of E-Divisive and two drifts. */
#define NOTE_COMMITS 100

static void append_file(const tf_run_io *io, const char *path, const tf_buf *b)
{
	FILE *f = fopen(path, "a");
	if (!f || fwrite(b->ptr, 1, b->len, f) != b->len)
		tf_run_warn(io, "could not add the history note to '%s'", path);
	if (f)
		fclose(f);
}

void tf_run_history_note(tf_run_opts *o, tf_store *st, const char *kind)
{
	const tf_context *ctx = o->rec.ctx;
	const tf_run_io *io = o->rec.io;
	tf_history_load_opts lo;
	tf_history_data *d = NULL;
	tf_history_result *res = NULL;
	tf_history_input in;
	tf_buf md = TF_BUF_INIT;

	memset(&lo, 0, sizeof(lo));
	lo.start = ctx->commit;
	lo.suite = o->rec.suite_name;
	lo.kind = kind;
	lo.max_commits = NOTE_COMMITS;
	if (tf_history_load(&d, st, &lo) != 0 || (tf_history_input_from(&in, d),
						  tf_history_analyze(&res, &in, NULL)) != 0) {
		tf_run_verbose(io, "no history note: %s", tf_error_last());
		tf_error_clear();
		goto done;
	}
	tf_history_render r;
	memset(&r, 0, sizeof(r));
	r.data = d;
	r.result = res;
	tf_history_note_markdown(&md, &r, 1);
	if (!md.len)
		goto done;
	/* the terminal: the list's lines, without their Markdown */
	tf_run_print(io, "\nhistory: this commit completed what `testflame history` shows:\n");
	for (size_t i = 0; i < res->nchanges; i++) {
		const tf_history_change *c = &res->changes[i];
		if (c->at + 5 < d->ncommits)
			continue;
		tf_buf line = TF_BUF_INIT;
		tf_buf_put_printable(&line, tf_history_test_name(d, c->test));
		tf_run_print(io, "  %s %+.1f%% since %.10s (a step at %.10s)\n", line.ptr,
			     c->size_pct, d->commits[c->prev].commit, d->commits[c->at].commit);
		tf_buf_free(&line);
	}
	for (size_t i = 0; i < res->ndrifts; i++) {
		const tf_history_drift *x = &res->drifts[i];
		if (x->to + 1 < d->ncommits)
			continue;
		tf_buf line = TF_BUF_INIT;
		tf_buf_put_printable(&line, tf_history_test_name(d, x->test));
		tf_run_print(io, "  %s %+.1f%% over the last %zu stored commits (a drift)\n",
			     line.ptr, x->total_pct, x->to - x->from + 1);
		tf_buf_free(&line);
	}
	char *path = tf_xasprintf("%s/report.md", o->set.report_dir);
	tf_buf sep = TF_BUF_INIT;
	tf_buf_puts(&sep, "\n");
	tf_buf_put(&sep, md.ptr, md.len);
	append_file(io, path, &sep);
	free(path);
	const char *summary = getenv("GITHUB_STEP_SUMMARY");
	if (summary && *summary && ctx->ci && ctx->ci->provider == TF_CI_GITHUB && !o->no_step_summary)
		append_file(io, summary, &sep);
	tf_buf_free(&sep);
done:
	tf_buf_free(&md);
	tf_history_result_free(res);
	tf_history_data_free(d);
}
