/*
 * pyroscope.h - what `run` does with a "pyroscope:URL" store, in a
 * few calls so that the command keeps one line for each: the config's
 * credentials, the baseline git does not hold, the Grafana links of the
 * report, and the push of the run's profiles. Each prints its own one-line
 * note or warning; none of them changes the exit status.
 */
#ifndef TESTFLAME_RUN_PYROSCOPE_H
#define TESTFLAME_RUN_PYROSCOPE_H

#include "cli/cli.h"
#include "run/record.h"
#include "testflame/report.h"
#include "testflame/store.h"

/* After tf_store_open(): the config's credentials under the
 * environment's, and -v's request lines. Nothing for other stores. */
void tf_cli_pyroscope_setup(tf_store *st, const tf_config *cfg);

/*
 * Git holds no baseline for `kind` near `start`: look in Pyroscope (a
 * pyroscope:URL store only; TF_ENOTFOUND otherwise, the error message
 * untouched). 0 with `m` filled and the baseline readable with
 * tf_store_get(); TF_ENOTFOUND with the reason in tf_error_last(); a
 * failing server is a warning and TF_ENOTFOUND.
 */
int tf_cli_pyroscope_resolve(tf_store_match *m, tf_store *st, const char *start,
			     const tf_record_cli *rec, const char *kind);

/* What the report's Grafana links need; filled by tf_cli_pyroscope_links. */
typedef struct {
	tf_pyroscope_link link;
	char *profile_type, *service;
} tf_cli_pyroscope_link;

/*
 * With pyroscope.grafana_url configured and a pyroscope:URL store, make
 * report.md link each regressed test to Grafana's comparison of
 * `base_commit` with this run; `l` must live until the report is written,
 * then tf_cli_pyroscope_link_free().
 */
void tf_cli_pyroscope_links(tf_report_opts *ro, tf_cli_pyroscope_link *l, tf_store *st,
			    const tf_record_cli *rec, const char *base_commit, const char *kind);
void tf_cli_pyroscope_link_free(tf_cli_pyroscope_link *l);

/* Push this run's profiles (all of its runs); a failure is one warning. */
void tf_cli_pyroscope_push(tf_store *st, const tf_record_cli *rec, const char *kind,
			   const tf_record_result *runs, size_t n);

#endif
