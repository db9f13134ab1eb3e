/*
 * spool.h - the samplers' side of a recording (private to src/record).
 *
 * A sampler appends records in the kernel's perf layout (struct
 * perf_event_header + body) to the spool, an unlinked temp file; replay
 * decodes them in time order. The perf sampler copies its ring buffers
 * verbatim; the ptrace sampler synthesizes the same records, plus the few
 * of testflame's own defined below.
 */
#ifndef TESTFLAME_RECORD_SPOOL_H
#define TESTFLAME_RECORD_SPOOL_H

#include "testflame/record.h"

#include <linux/perf_event.h>

/* testflame's own record types (perf leaves 64 and up to user space). */
enum {
	/* { u32 pid, tid; u64 time; s32 wait_status; u32 pad; } */
	TF_SPOOL_PROC_EXIT = 65,
	/* { u32 len; u32 pad; char offcpu[len] (NUL padded to 8);
	 *   then a PERF_RECORD_SAMPLE body } : a sample taken off-CPU */
	TF_SPOOL_SAMPLE_EXT = 66,
	/* { u32 pid, tid; u64 time; u32 begin, scope; u32 len; u32 pad;
	 *   u64 cpu + 1 (0: none); char name[len] (NUL padded to 8) } */
	TF_SPOOL_MARKER = 67,
	/* { u32 pid, tid; u64 time; u32 len, cwdlen;
	 *   char cwd[cwdlen] NUL, argv[len] } */
	TF_SPOOL_CMDLINE = 68,
	/* { u32 pid, tid; u64 time; u64 count; u32 remainder, pad } : a
	 * thread's exact cost, for threads the kernel does not report (the
	 * ptrace sampler's threads); with remainder set, what the perf events
	 * counted beyond every thread the kernel reported (see perf.c) */
	TF_SPOOL_THREAD_COST = 69,
	/* { u32 pid, tid; u64 time; u32 id; s32 firstlineno; u32 namelen,
	 *   qualified; char name[namelen] NUL, file[] (NUL padded to 8) } */
	TF_SPOOL_PYCODE = 70,
	/* { u32 pid, tid; u64 time; u32 nframes, flags; u64 delay_ns;
	 *   u32 frames[2 * nframes] } : the Python stack of the sample of
	 * `tid` at `time` (flags: 1 cut, 2 partial), written before it */
	TF_SPOOL_PYSTACK = 71,
	/* a PERF_RECORD_SAMPLE body written by the context-switch event (the
	 * perf sampler's off-CPU ring, perf.c): a thread leaving its CPU */
	TF_SPOOL_SWITCH_SAMPLE = 72,
	/* { u32 cpu, pad; u64 time; u64 period } : from `time` on, a
	 * switch sample of `cpu` stands for `period` switch-outs (perf.c's
	 * cap; the event's samples do not carry their period) */
	TF_SPOOL_OFFCPU_PERIOD = 73,
};


/* What the sample records contain. */
typedef struct {
	uint64_t sample_type;   /* PERF_SAMPLE_* bits */
	uint64_t regs_mask;     /* PERF_SAMPLE_REGS_USER mask */
	bool sample_id_all;     /* side-band records end in a sample_id */
	uint64_t switch_sample_type; /* ... of TF_SPOOL_SWITCH_SAMPLE records */
} tf_spool_layout;

typedef struct tf_spool tf_spool;

int tf_spool_open(tf_spool **out);
/* Append whole records. */
int tf_spool_append(tf_spool *s, const void *data, size_t len);
/* Append a record of testflame's own type: header, fixed fields, then a
 * variable part (NUL-terminated here, padded to 8 bytes). */
int tf_spool_append_own(tf_spool *s, uint16_t type, const void *fixed, size_t fixed_len,
			const void *var, size_t var_len);
/* Flush and map for reading; no appends after this. */
int tf_spool_finish(tf_spool *s);
const uint8_t *tf_spool_data(const tf_spool *s, size_t *len);
uint64_t tf_spool_size(const tf_spool *s);
void tf_spool_free(tf_spool *s);

/* Decode one record. Returns 1 if `out` was filled, 0 for a record type
 * replay does not hand out, negative for a malformed record. */
int tf_spool_decode(const tf_spool_layout *layout, const struct perf_event_header *h,
		    tf_rec_event *out);
/* The timestamp of a record (0 if it has none). */
uint64_t tf_spool_record_time(const tf_spool_layout *layout,
			      const struct perf_event_header *h);

/* Shared by the samplers: the recording they fill in. */
struct tf_recording {
	tf_record_info info;
	tf_spool_layout layout;
	tf_spool *spool;
};

#endif
