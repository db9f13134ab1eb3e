/*
 * publish.h - what `run` (in CI) and `publish REPORT_DIR` share: the
 * CI-side end of a report. GitHub workflow annotations on stdout, the step
 * summary, $GITHUB_OUTPUT, and the sticky comment with its review comments,
 * with one line for each thing done or not done and why.
 */
#ifndef TESTFLAME_RUN_PUBLISH_H
#define TESTFLAME_RUN_PUBLISH_H

#include "cli/cli.h"
#include "testflame/publish.h"

typedef struct {
	const tf_comparison *c;     /* NULL when there was nothing to compare */
	const tf_report_opts *ro;   /* the report's options (suite, links, source root) */
	const char *report_dir;     /* holds report.md */
	const tf_ci *ci;
	const tf_config *cfg;
	const tf_changes *changes;  /* the PR's changed lines, NULL when unknown */
	const char *suite;
	const char *baseline;       /* the baseline's commit, for outputs */
	bool comment, annotations, step_summary;
} tf_cli_publish_in;

/*
 * Do it. Returns 0 when everything asked for was done or deliberately
 * skipped (no PR, no token, a fork's read-only token: one note says why),
 * else 1 after printing the problem: as a warning when `warn_only` (run:
 * publishing never changes its exit status), else as an error.
 */
int tf_cli_publish(const tf_cli_publish_in *in, bool warn_only);

/* Resolve one switch: the flag that turns it off, else the config's
 * tri-state, else on. */
static inline bool tf_cli_publish_switch(bool off_flag, int config_value)
{
	return !off_flag && tf_config_bool(config_value, true);
}

#endif
