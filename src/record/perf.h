/*
 * perf.h - the perf_event sampler (private to src/record).
 */
#ifndef TESTFLAME_RECORD_PERF_H
#define TESTFLAME_RECORD_PERF_H

#include "pyread.h"
#include "spool.h"

#include <poll.h>

typedef struct tf_perf tf_perf;

typedef struct {
	pid_t pid;              /* the held command: events enable on its exec */
	tf_event event;
	tf_callgraph callgraph;
	unsigned freq;
	unsigned stack_bytes;
	tf_notice_fn notice;
	void *notice_ctx;
	tf_pyread *py;          /* Python stacks: read at every sample, or NULL */
	int cgroup_fd;          /* >= 0: the cgroup `pid` is in, which time events
				 * follow instead of inheriting (perf.c); -1 */
	tf_offcpu offcpu;       /* record switch-outs (perf.c); --event wall: on */
	unsigned offcpu_max;    /* their cap a second per CPU; 0: the default */
} tf_perf_opts;

/*
 * Open per-CPU inherited events on `pid`, walking the permission ladder.
 * Fills rec->layout, rec->info.event/kernel/rung. Returns TF_EPERM
 * when perf_event_open is refused outright (the message says why and how to
 * fix it), TF_EUNSUPPORTED when the kernel lacks what we need.
 */
int tf_perf_open(tf_perf **out, const tf_perf_opts *o, tf_recording *rec);
/* Have the kernel send `sig` to the calling thread when a side-band ring
 * is half full, instead of waking the pollers of the descriptors below
 * (perf.c says why). Returns 0, or an error when a descriptor refused:
 * then poll them. */
int tf_perf_signal(tf_perf *p, int sig);
/* Whether the events follow the command's cgroup rather than inherit. */
bool tf_perf_by_cgroup(const tf_perf *p);
/* Nanoseconds: the reader's timer must drain at least this often when it
 * does not poll the sampling rings (a quarter of what fills one). */
uint64_t tf_perf_drain_within(const tf_perf *p);
/* Descriptors to poll for data. Returns how many were written. */
size_t tf_perf_pollfds(const tf_perf *p, struct pollfd *fds, size_t max);
/* Copy everything the ring buffers hold into the spool; call `live` for
 * side-band records. Updates rec->info counters. */
int tf_perf_drain(tf_perf *p, tf_recording *rec, tf_live_fn live, void *live_ctx,
		  uint64_t *processes);
/* After the last drain: what the events counted beyond the threads the
 * kernel reported (one thread's exact count, see perf.c), as a
 * TF_SPOOL_THREAD_COST remainder record stamped `time`. */
int tf_perf_finish(tf_perf *p, tf_recording *rec, uint32_t root_pid, uint64_t time);
void tf_perf_close(tf_perf *p);

/* Why perf_event_open may be refused here, with the fix (for messages and
 * `testflame doctor`). Writes a sentence; returns the paranoid level. */
int tf_perf_paranoid(void);

#endif
