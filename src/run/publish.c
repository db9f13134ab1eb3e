/*
 * publish.c - the CI-side end of a report, shared by `run`, `merge` and
 * `publish` (run.h): workflow annotations (stdout, where the runner reads them),
 * the step summary, the step's outputs, and the comment. Each part that is
 * skipped says why in one line; tokens never reach a message (the engine
 * scrubs them, and requests are logged by path only).
 */
#include "run/run_int.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

static void log_line(const char *line, void *payload)
{
	tf_run_verbose(payload, "%s", line);
}

/* report.md without its marker line: the step summary of a run that had
 * nothing to compare. */
static const char *without_marker(const tf_buf *md)
{
	const char *p = md->ptr ? md->ptr : "";
	if (strncmp(p, "<!--", 4) == 0 && strchr(p, '\n'))
		p = strchr(p, '\n') + 1;
	return p;
}

static const char *kind_of(const tf_publish_target *t)
{
	return t->host == TF_PUBLISH_GITLAB ? "merge request !" : "pull request #";
}

static void say_result(const tf_run_io *io, const tf_publish_target *t,
		       const tf_publish_result *r)
{
	const char *where = r->comment_url ? r->comment_url : "";
	if (r->comment_created)
		tf_run_note(io, "posted the comment on %s%ld %s", kind_of(t), t->number, where);
	else if (r->comment_updated)
		tf_run_note(io, "updated the comment on %s%ld %s", kind_of(t), t->number, where);
	else if (r->comment_unchanged)
		tf_run_note(io, "the comment on %s%ld is up to date %s", kind_of(t), t->number,
			    where);
	if (r->review_targets || r->review_elsewhere)
		tf_run_note(io, "review comments on changed lines: %zu new, %zu edited, %zu "
			    "unchanged, %zu refused; %zu grown function%s on no changed line "
			    "(in the main comment only)", r->review_created, r->review_updated,
			    r->review_unchanged, r->review_refused, r->review_elsewhere,
			    r->review_elsewhere == 1 ? "" : "s");
	for (size_t i = 0; i < r->notes.n; i++)
		tf_run_note(io, "%s", r->notes.v[i]);
	if (r->retries)
		tf_run_verbose(io, "%u request%s, %u retr%s", r->requests,
			       r->requests == 1 ? "" : "s", r->retries,
			       r->retries == 1 ? "y" : "ies");
}

static void write_outputs(const tf_run_publish_in *in, const char *path, const char *comment_url)
{
	char reg[32], imp[32];
	snprintf(reg, sizeof(reg), "%zu", in->c ? in->c->summary.count[TF_VERDICT_REGRESSED] : 0);
	snprintf(imp, sizeof(imp), "%zu", in->c ? in->c->summary.count[TF_VERDICT_IMPROVED] : 0);
	const char *names[] = { "regressions", "improvements", "report", "baseline", "comment-url" };
	const char *values[] = { reg, imp, in->report_dir, in->baseline ? in->baseline : "",
				 comment_url ? comment_url : "" };
	if (tf_publish_github_output(path, names, values, TF_ARRAY_SIZE(names)))
		tf_run_warn(in->io, "could not write the step's outputs: %s", tf_error_last());
}

int tf_run_publish(const tf_run_publish_in *in, bool warn_only)
{
	bool github = in->ci->provider == TF_CI_GITHUB;
	const char *summary_path = github ? getenv("GITHUB_STEP_SUMMARY") : NULL;
	const char *output_path = github ? getenv("GITHUB_OUTPUT") : NULL;
	tf_buf b = TF_BUF_INIT, md = TF_BUF_INIT;
	tf_publish_target t;
	tf_publish_result res;
	char *md_path = tf_xasprintf("%s/report.md", in->report_dir);
	bool have_md = tf_file_read(&md, md_path) == 0 && md.len;
	int status = 0, rc;

	memset(&res, 0, sizeof(res));
	memset(&t, 0, sizeof(t));
	if (github && in->annotations && in->c) {
		/* stdout, where the runner reads them */
		if (tf_report_github_annotations(&b, in->c, in->ro) == 0 && b.len && in->io &&
		    in->io->print)
			in->io->print(in->io->ctx, b.ptr, b.len);
	}
	if (summary_path && in->step_summary) {
		tf_buf_clear(&b);
		rc = 0;
		if (in->c)
			rc = tf_report_step_summary(&b, in->c, in->ro);
		else
			tf_buf_puts(&b, without_marker(&md));
		if (!rc && b.len)
			rc = tf_publish_append(summary_path, b.ptr, b.len);
		if (rc)
			tf_run_warn(in->io, "could not write the step summary: %s",
				    tf_error_last());
	}

	bool want_comment = in->comment && have_md;
	bool want_review = in->annotations && in->c && in->changes;
	if (in->comment && !have_md)
		tf_run_warn(in->io, "no comment: '%s' is missing or empty", md_path);
	if (want_comment || want_review) {
		rc = tf_publish_target_detect(&t, in->ci, in->cfg, environ);
		if (rc) {
			tf_run_warn(in->io, "not publishing: %s", tf_error_last());
		} else if (t.skip) {
			tf_run_note(in->io, "nothing posted: %s", t.skip);
		} else {
			tf_publish_opts po;
			tf_publish_opts_init(&po);
			po.target = &t;
			po.suite = in->suite;
			po.body = want_comment ? md.ptr : NULL;
			po.comment = want_comment;
			po.review = want_review;
			po.c = in->c;
			po.report = in->ro;
			po.changes = in->changes;
			po.http.log = log_line;
			po.http.payload = (void *)in->io;
			tf_run_verbose(in->io, "publishing to %s (%s, %s) with the token in %s",
				    tf_publish_host_name(t.host), t.api_url,
				    t.repository ? t.repository : t.project_id, t.token_var);
			rc = tf_publish_post(&res, &po);
			say_result(in->io, &t, &res);
			if (rc && res.forbidden) {
				tf_run_warn(in->io, "nothing posted: %s", tf_error_last());
			} else if (rc) {
				if (warn_only)
					tf_run_warn(in->io, "could not publish: %s",
						    tf_error_last());
				else
					tf_run_error(in->io, "could not publish: %s",
						     tf_error_last());
				status = 1;
			}
		}
	}
	if (output_path)
		write_outputs(in, output_path, res.comment_url);

	tf_publish_result_clear(&res);
	tf_publish_target_clear(&t);
	tf_buf_free(&b);
	tf_buf_free(&md);
	free(md_path);
	return status;
}
