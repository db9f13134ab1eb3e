/*
 * ptrace.h - the ptrace sampler (private to src/record): for machines that
 * refuse perf_event_open but let a process trace its own descendants.
 */
#ifndef TESTFLAME_RECORD_PTRACE_H
#define TESTFLAME_RECORD_PTRACE_H

#include "alloc.h"
#include "launch.h"
#include "markers.h"
#include "pyread.h"
#include "spool.h"

/* What the sampler loop serves besides the tree (record.c's). */
typedef struct {
	int sigfd;              /* SIGINT, SIGTERM, ...: forwarded as perf's loop does */
	tf_live_fn live;        /* side-band hook */
	void *live_ctx;
	tf_markers *markers;    /* test markers to read as they come, or NULL */
	tf_pyread *py;          /* Python stacks of the samples, or NULL */
	tf_alloc *alloc;        /* the programs without the allocation sampler's
				 * peaks to read, or NULL */
} tf_ptrace_loop;

/*
 * Seize the held command of `l`, release it, and sample it and every
 * process and thread it spawns until it exits; then detach from whatever
 * it left running. Writes the same records as the perf sampler into
 * rec->spool (and fills rec->layout, rec->info's sampler, event, rung and
 * counters), calls `io->live` for each side-band record, and reads the
 * markers into the spool; rec->info.wait_status is left to the caller
 * (the guard reports it).
 * Returns TF_EPERM, with the reason and the fix, when the command cannot
 * be traced; it is then still held and never ran.
 */
int tf_ptrace_record(tf_recording *rec, tf_launch *l, const tf_record_opts *o,
		     const tf_ptrace_loop *io);

#endif
