/*
 * synth.c - perf records made by hand, for the ptrace sampler (see
 * record_int.h). The layouts are the kernel's (include/uapi/linux/perf_event.h)
 * under the sample_type the ptrace sampler declares; spool.c decodes them
 * with the same code that decodes the perf sampler's ring buffers.
 */

#include "record_int.h"
#include <string.h>

/* Offsets of time and period in a sample body (IP, TID, TIME, CPU, PERIOD). */
#define BODY_TIME 16
#define BODY_PERIOD 32

static void begin(tf_buf *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };
	tf_buf_clear(b);
	tf_buf_put(b, &h, sizeof(h));
}

/* A record's size is 16 bits: the callers keep within it. */
static void end(tf_buf *b)
{
	((struct perf_event_header *)b->ptr)->size = (uint16_t)b->len;
}

static void put_u64(tf_buf *b, uint64_t v)
{
	tf_buf_put(b, &v, 8);
}

static void put_u32x2(tf_buf *b, uint32_t x, uint32_t y)
{
	uint32_t v[2] = { x, y };
	tf_buf_put(b, v, 8);
}

/* A NUL-terminated string padded with NULs to 8 bytes, as perf writes. */
static void put_str(tf_buf *b, const char *str)
{
	static const char zero[8];
	size_t n = strlen(str) + 1;
	tf_buf_put(b, str, n);
	tf_buf_put(b, zero, (8 - n % 8) % 8);
}

/* sample_id_all trailer: TID, TIME, CPU (see spool.c decode_sample_id) */
static void put_trailer(tf_buf *b, pid_t pid, pid_t tid, uint64_t time)
{
	put_u32x2(b, (uint32_t)pid, (uint32_t)tid);
	put_u64(b, time);
	put_u32x2(b, 0, 0);
}

void tf_synth_task(tf_buf *b, uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid,
		   uint64_t time)
{
	begin(b, type, 0);
	put_u32x2(b, (uint32_t)pid, (uint32_t)ppid);
	put_u32x2(b, (uint32_t)tid, (uint32_t)ptid);
	put_u64(b, time);
	if (type == PERF_RECORD_FORK)
		put_trailer(b, ppid, ptid, time);
	else
		put_trailer(b, pid, tid, time);
	end(b);
}

void tf_synth_comm(tf_buf *b, pid_t pid, pid_t tid, const char *comm, uint64_t time)
{
	begin(b, PERF_RECORD_COMM, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_COMM_EXEC);
	put_u32x2(b, (uint32_t)pid, (uint32_t)tid);
	put_str(b, comm);
	put_trailer(b, pid, tid, time);
	end(b);
}

void tf_synth_mmap2(tf_buf *b, pid_t pid, pid_t tid, const tf_maps_line *m, uint64_t time)
{
	begin(b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put_u32x2(b, (uint32_t)pid, (uint32_t)tid);
	put_u64(b, m->start);
	put_u64(b, m->end - m->start);
	put_u64(b, m->pgoff);
	put_u32x2(b, m->maj, m->min);
	put_u64(b, m->ino);
	put_u64(b, 0);
	put_u32x2(b, m->prot, m->flags);
	put_str(b, m->name);
	put_trailer(b, pid, tid, time);
	end(b);
}

void tf_synth_thread_cost(tf_buf *b, pid_t pid, pid_t tid, uint64_t cpu_ns, uint64_t time)
{
	begin(b, TF_SPOOL_THREAD_COST, 0);
	put_u32x2(b, (uint32_t)pid, (uint32_t)tid);
	put_u64(b, time);
	put_u64(b, cpu_ns);
	put_u32x2(b, 0, 0); /* not a remainder: this thread's own */
	end(b);
}

void tf_synth_proc_exit(tf_buf *b, pid_t pid, pid_t tid, int status, uint64_t time)
{
	begin(b, TF_SPOOL_PROC_EXIT, 0);
	put_u32x2(b, (uint32_t)pid, (uint32_t)tid);
	put_u64(b, time);
	put_u32x2(b, (uint32_t)status, 0);
	end(b);
}

size_t tf_synth_sample(tf_buf *b, const tf_synth_sample_in *in)
{
	size_t body, stack_len = in->stack_len;

	if (in->offcpu) {
		size_t len = strlen(in->offcpu) + 1;
		begin(b, TF_SPOOL_SAMPLE_EXT, PERF_RECORD_MISC_USER);
		put_u32x2(b, (uint32_t)((len + 7) & ~(size_t)7), 0);
		put_str(b, in->offcpu);
	} else {
		begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	}
	body = b->len;
	put_u64(b, in->chain[0]);
	put_u32x2(b, (uint32_t)in->pid, (uint32_t)in->tid);
	put_u64(b, in->time);
	put_u32x2(b, 0, 0); /* the CPU is not known without stopping it first */
	put_u64(b, in->period);
	put_u64(b, in->nchain + 1);
	put_u64(b, (uint64_t)PERF_CONTEXT_USER);
	tf_buf_put(b, in->chain, in->nchain * 8);
	if (in->copy_stack) {
		if (!in->regs) {
			put_u64(b, PERF_SAMPLE_REGS_ABI_NONE);
			stack_len = 0;
		} else {
			put_u64(b, PERF_SAMPLE_REGS_ABI_64);
			for (int r = 0; r < TF_REG_COUNT; r++)
				if (TF_REGS_MASK >> r & 1)
					put_u64(b, in->regs[r]);
		}
		/* a record's size is 16 bits: trim the stack to fit */
		size_t room = (UINT16_MAX - b->len - 16) & ~(size_t)7;
		stack_len = TF_MIN(stack_len, room);
		size_t padded = (stack_len + 7) & ~(size_t)7;
		put_u64(b, padded);
		if (padded) {
			static const uint8_t zero[8];
			tf_buf_put(b, in->stack, stack_len);
			tf_buf_put(b, zero, padded - stack_len);
			put_u64(b, stack_len);
		}
	}
	end(b);
	return body;
}

void tf_synth_sample_retime(void *record, size_t body, uint64_t time, uint64_t period)
{
	memcpy((char *)record + body + BODY_TIME, &time, 8);
	memcpy((char *)record + body + BODY_PERIOD, &period, 8);
}
