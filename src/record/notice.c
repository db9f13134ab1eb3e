/*
 * notice.c - notices and progress for the caller of a recording (see
 * record_int.h). Only the cli prints; the recorder hands it whole lines.
 */

#include "record_int.h"
#include <stdarg.h>
#include <stdio.h>

void tf_record_notice(tf_notice_fn fn, void *ctx, tf_notice_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tf_vnotice(fn, ctx, level, fmt, ap);
	va_end(ap);
}

void tf_record_report_progress(tf_recording *rec, const tf_record_opts *o, uint64_t processes,
			       uint64_t *last)
{
	uint64_t now;

	if (!o->progress)
		return;
	now = tf_now_ns();
	if (now - *last < 250000000ULL)
		return;
	tf_record_progress pr = { now - rec->info.start_ns, rec->info.samples, processes,
				  rec->info.lost };
	o->progress(o->progress_ctx, &pr);
	*last = now;
}
