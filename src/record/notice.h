/*
 * notice.h - what a recording tells its caller while it runs (private to
 * src/record): one-line notices and the figures of the progress line, both
 * through the callbacks of tf_record_opts. The samplers and record.c's
 * loop call these; none of them calls the others for it.
 */
#ifndef TESTFLAME_RECORD_NOTICE_H
#define TESTFLAME_RECORD_NOTICE_H

#include "spool.h"

/* Format a one-line notice and hand it to `fn` (nothing when fn is NULL). */
void tf_record_notice(tf_notice_fn fn, void *ctx, tf_notice_level level, const char *fmt, ...)
	TF_PRINTF(4, 5);

/* For the samplers' loops: call o->progress at most every 250 ms; `last`
 * keeps the time of the previous call. */
void tf_record_report_progress(tf_recording *rec, const tf_record_opts *o, uint64_t processes,
			       uint64_t *last);

#endif
