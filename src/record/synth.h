/*
 * synth.h - perf records made by hand (private to src/record): the ptrace
 * sampler sees what the kernel would have written had perf_event been
 * allowed, and writes exactly that, so the spool, replay and everything
 * after them know one format. Each function starts `b` afresh with one
 * whole record (its header's size set), in the layout the ptrace sampler
 * declares: samples carry IP, TID, TIME, CPU, PERIOD and CALLCHAIN (then
 * REGS_USER and STACK_USER when stacks are copied), and side-band records
 * end in the sample_id trailer TID, TIME, CPU.
 */
#ifndef TESTFLAME_RECORD_SYNTH_H
#define TESTFLAME_RECORD_SYNTH_H

#include "procfs.h"
#include "spool.h"

/* PERF_RECORD_FORK or PERF_RECORD_EXIT of thread `tid` of `pid`; a fork's
 * trailer names the parent (ptid of ppid), as the kernel's does. */
void tf_synth_task(tf_buf *b, uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid,
		   uint64_t time);
/* PERF_RECORD_COMM of an exec. */
void tf_synth_comm(tf_buf *b, pid_t pid, pid_t tid, const char *comm, uint64_t time);
/* PERF_RECORD_MMAP2 of an executable mapping. */
void tf_synth_mmap2(tf_buf *b, pid_t pid, pid_t tid, const tf_maps_line *m, uint64_t time);
/* TF_SPOOL_THREAD_COST: a thread's exact CPU time when it ended. */
void tf_synth_thread_cost(tf_buf *b, pid_t pid, pid_t tid, uint64_t cpu_ns, uint64_t time);
/* TF_SPOOL_PROC_EXIT: a process ended with wait status `status`. */
void tf_synth_proc_exit(tf_buf *b, pid_t pid, pid_t tid, int status, uint64_t time);

typedef struct {
	pid_t pid, tid;
	uint64_t time, period;
	/* NULL: an on-CPU PERF_RECORD_SAMPLE; else a TF_SPOOL_SAMPLE_EXT
	 * taken off-CPU, naming what the thread waits in */
	const char *offcpu;
	const uint64_t *chain;  /* the ip, then return addresses */
	size_t nchain;          /* at least 1 */
	bool copy_stack;        /* the layout has REGS_USER and STACK_USER */
	/* every register by perf number (TF_REG_*); NULL: ABI none, no
	 * stack (a 32-bit task) */
	const uint64_t *regs;
	const uint8_t *stack;   /* the copied user stack, from the sp up */
	size_t stack_len;       /* trimmed to what a 16-bit record size leaves */
} tf_synth_sample_in;

/* A sample; returns the offset of its body (the IP) in `b`. */
size_t tf_synth_sample(tf_buf *b, const tf_synth_sample_in *in);
/* Stamp a sample made earlier with another time and period (an off-CPU
 * sample reused while its thread still waits where it was taken). */
void tf_synth_sample_retime(void *record, size_t body, uint64_t time, uint64_t period);

#endif
