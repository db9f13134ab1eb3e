/*
 * spool.c - where a recording's records wait for the end of the run, and
 * how they come back: decoded and in time order.
 *
 * Ring buffers are per CPU, so records reach us in per-CPU order only: a
 * process's mmap read from CPU 1 may arrive after its sample read from
 * CPU 0. Replay therefore indexes every record by timestamp and hands them
 * out sorted (stable for equal times), which is all the symbolizer and the
 * attribution need to see each process's state as it was at each sample.
 *
 * The spool grows with the run (about 8 KB a sample when user stacks are
 * copied for DWARF unwinding), so it has a limit, TESTFLAME_SPOOL_MAX
 * (default 4 GiB); past it, or when its file system is full, appends fail
 * with a message that says which and what to do, and the recording stops
 * (record.c) while the command runs on.
 */

#include "record_int.h"
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* the write buffer: small for a short recording, up to SPOOL_BUF */
#define SPOOL_BUF_FIRST (64 << 10)
#define SPOOL_BUF (1 << 20)
#define SPOOL_MAX_DEFAULT (4ULL << 30)

struct tf_spool {
	int fd;
	char *dir;
	uint64_t max;
	char *buf;
	size_t cap;
	size_t used;
	uint64_t size;
	uint8_t *map;
	size_t maplen;
};

/* TESTFLAME_SPOOL_MAX: bytes, or with a K, M or G suffix (powers of 1024). */
static int spool_max(uint64_t *out)
{
	const char *v = getenv("TESTFLAME_SPOOL_MAX");
	char *end;
	unsigned long long n;

	*out = SPOOL_MAX_DEFAULT;
	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtoull(v, &end, 10);
	switch (*end) {
	case 'k': case 'K': n <<= 10; end++; break;
	case 'm': case 'M': n <<= 20; end++; break;
	case 'g': case 'G': n <<= 30; end++; break;
	default: break;
	}
	if (errno || end == v || *end || n < (1 << 20) || v[0] == '-')
		return tf_error_set(TF_EUSAGE, "TESTFLAME_SPOOL_MAX='%s' is not a size of at least 1M "
				    "(bytes, or with K, M or G)", v);
	*out = n;
	return 0;
}

int tf_spool_open(tf_spool **out)
{
	const char *dir = getenv("TMPDIR");
	tf_spool *s;
	uint64_t max;
	int fd;

	if (spool_max(&max))
		return TF_EUSAGE;
	if (!dir || !*dir)
		dir = "/tmp";
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		char *path = tf_xasprintf("%s/testflame-spool.XXXXXX", dir);
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
		free(path);
	}
	if (fd < 0)
		return tf_error_set_errno(TF_ERROR, "cannot create a spool file in '%s'", dir);
	s = tf_xcalloc(1, sizeof(*s));
	s->fd = fd;
	s->dir = tf_xstrdup(dir);
	s->max = max;
	s->cap = SPOOL_BUF_FIRST;
	s->buf = tf_xmalloc(s->cap);
	*out = s;
	return 0;
}

static int flush(tf_spool *s)
{
	size_t off = 0;
	while (off < s->used) {
		ssize_t n = write(s->fd, s->buf + off, s->used - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return tf_error_set_errno(TF_ERROR, "cannot write the spool file in '%s' "
						  "(TMPDIR)", s->dir);
		}
		off += (size_t)n;
	}
	s->used = 0;
	return 0;
}

int tf_spool_append(tf_spool *s, const void *data, size_t len)
{
	const char *p = data;
	if (s->size + len > s->max) {
		char size[32];
		if (s->max >= (1ULL << 30))
			snprintf(size, sizeof(size), "%.1f GiB", (double)s->max / (1ULL << 30));
		else
			snprintf(size, sizeof(size), "%llu MiB", (unsigned long long)(s->max >> 20));
		return tf_error_set(TF_ERROR, "the recording reached the spool's limit, %s "
				    "(TESTFLAME_SPOOL_MAX): a lower --freq or --call-graph fp records "
				    "less", size);
	}
	while (len) {
		size_t room = s->cap - s->used, n = TF_MIN(room, len);
		memcpy(s->buf + s->used, p, n);
		s->used += n;
		s->size += n;
		p += n;
		len -= n;
		if (s->used == s->cap && s->cap < SPOOL_BUF) {
			s->cap *= 2;
			s->buf = tf_xrealloc(s->buf, s->cap);
		} else if (s->used == s->cap) {
			int rc = flush(s);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int tf_spool_append_own(tf_spool *s, uint16_t type, const void *fixed, size_t fixed_len,
			const void *var, size_t var_len)
{
	static const char zeros[8];
	size_t vpad = var ? ((var_len + 1 + 7) & ~(size_t)7) : 0;
	size_t total = sizeof(struct perf_event_header) + fixed_len + vpad;
	struct perf_event_header h = { type, 0, (uint16_t)total };
	int rc;

	if (total > 65528 || (fixed_len & 7))
		return tf_error_set(TF_EINVAL, "record too large for the spool");
	rc = tf_spool_append(s, &h, sizeof(h));
	if (!rc && fixed_len)
		rc = tf_spool_append(s, fixed, fixed_len);
	if (!rc && var) {
		rc = tf_spool_append(s, var, var_len);
		if (!rc)
			rc = tf_spool_append(s, zeros, vpad - var_len);
	}
	return rc;
}

int tf_spool_finish(tf_spool *s)
{
	int rc = flush(s);
	if (rc)
		return rc;
	free(s->buf);
	s->buf = NULL;
	if (s->size == 0)
		return 0;
	s->map = mmap(NULL, s->size, PROT_READ, MAP_PRIVATE, s->fd, 0);
	if (s->map == MAP_FAILED) {
		s->map = NULL;
		return tf_error_set_errno(TF_ERROR, "cannot map the spool file");
	}
	s->maplen = s->size;
	return 0;
}

const uint8_t *tf_spool_data(const tf_spool *s, size_t *len)
{
	*len = s->maplen;
	return s->map;
}

uint64_t tf_spool_size(const tf_spool *s)
{
	return s->size;
}

void tf_spool_free(tf_spool *s)
{
	if (!s)
		return;
	if (s->map)
		munmap(s->map, s->maplen);
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	free(s->dir);
	free(s);
}

/* decoding */

typedef struct {
	const uint8_t *p, *end;
	bool bad;
} cursor;

static inline uint64_t take64(cursor *c)
{
	uint64_t v = 0;
	if (c->end - c->p < 8) {
		c->bad = true;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static inline void take32x2(cursor *c, uint32_t *a, uint32_t *b)
{
	uint32_t v[2] = { 0, 0 };
	if (c->end - c->p < 8) {
		c->bad = true;
	} else {
		memcpy(v, c->p, 8);
		c->p += 8;
	}
	*a = v[0];
	*b = v[1];
}

static inline const void *take(cursor *c, uint64_t n)
{
	const void *p = c->p;
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

/* The rest of the record as a string, NULL when it holds no NUL. */
static const char *take_str(cursor *c)
{
	const char *s = (const char *)c->p;
	if (c->bad || !memchr(s, '\0', (size_t)(c->end - c->p)))
		return NULL;
	return s;
}

/* The sample_id trailer of side-band records (sample_id_all): time and
 * cpu. Records that name their own pid/tid keep them; the trailer's are
 * those of the task that caused the record (the parent, for a fork). */
/* The trailer's bytes from its TIME on (what follows TID). */
static size_t sample_id_from_time(uint64_t st)
{
	return ((st & PERF_SAMPLE_TIME) ? 8 : 0) + ((st & PERF_SAMPLE_ID) ? 8 : 0) +
	       ((st & PERF_SAMPLE_STREAM_ID) ? 8 : 0) + ((st & PERF_SAMPLE_CPU) ? 8 : 0) +
	       ((st & PERF_SAMPLE_IDENTIFIER) ? 8 : 0);
}

size_t tf_spool_id_time_back(const tf_spool_layout *l)
{
	if (!l->sample_id_all || !(l->sample_type & PERF_SAMPLE_TIME))
		return 0;
	return sample_id_from_time(l->sample_type);
}

static void decode_sample_id(const tf_spool_layout *l, const struct perf_event_header *h,
			     tf_rec_event *ev)
{
	uint32_t pid = 0, tid = 0;
	uint64_t st = l->sample_type;
	const uint8_t *end = (const uint8_t *)h + h->size;
	cursor c;
	uint32_t u;

	if (!l->sample_id_all)
		return;
	size_t n = ((st & PERF_SAMPLE_TID) ? 8 : 0) + sample_id_from_time(st);
	if (n > (size_t)h->size - sizeof(*h))
		return;
	c.p = end - n;
	c.end = end;
	c.bad = false;
	if (st & PERF_SAMPLE_TID)
		take32x2(&c, &pid, &tid);
	if (st & PERF_SAMPLE_TIME)
		ev->time = take64(&c);
	if (st & PERF_SAMPLE_ID)
		take64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		take64(&c);
	if (st & PERF_SAMPLE_CPU)
		take32x2(&c, &ev->cpu, &u);
	if (!ev->pid && !ev->tid) {
		ev->pid = pid;
		ev->tid = tid;
	}
}

/* Callchain storage for the decoded sample (valid until the next decode). */
static _Thread_local uint64_t chain_kernel[PERF_MAX_STACK_DEPTH + 1];
static _Thread_local uint64_t chain_user[PERF_MAX_STACK_DEPTH + 1];
static _Thread_local uint64_t alloc_regs[3];
static _Thread_local tf_alloc_info alloc_info;

/* An allocation the sampler took (alloc.c): a user-space sample whose
 * chain is the caller's frame pointers and whose registers (bp, sp, ip)
 * and stack are the caller's at its call. */
static int decode_alloc(cursor *c, tf_rec_event *ev)
{
	uint32_t nips, stack_len;

	ev->type = TF_REC_ALLOC;
	take32x2(c, &ev->pid, &ev->tid);
	ev->time = take64(c);
	alloc_info.size = take64(c);
	alloc_info.ptr = take64(c);
	alloc_info.rate = take64(c);
	take32x2(c, &nips, &stack_len);
	alloc_regs[1] = take64(c); /* sp */
	alloc_regs[0] = take64(c); /* bp */
	alloc_regs[2] = take64(c); /* ip */
	const uint8_t *ips = take(c, (uint64_t)nips * 8);
	const uint8_t *stack = take(c, stack_len);
	if (c->bad || !nips || nips > PERF_MAX_STACK_DEPTH)
		return -1;
	memcpy(chain_user, ips, (size_t)nips * 8);
	ev->sample.user_ips = chain_user;
	ev->sample.nuser = nips;
	ev->sample.kernel_ips = chain_kernel;
	ev->sample.ip = chain_user[0];
	ev->sample.where = TF_SAMPLE_USER;
	ev->sample.alloc = &alloc_info;
	if (stack_len) {
		ev->sample.regs = alloc_regs;
		ev->sample.regs_mask = (1ULL << TF_REG_BP) | (1ULL << TF_REG_SP) | (1ULL << TF_REG_IP);
		ev->sample.stack = stack;
		ev->sample.stack_size = stack_len;
	}
	return 1;
}

static int decode_sample(const tf_spool_layout *l, cursor *c, tf_rec_event *ev)
{
	uint64_t st = l->sample_type;
	uint32_t u;

	ev->type = TF_REC_SAMPLE;
	if (st & PERF_SAMPLE_IDENTIFIER)
		take64(c);
	if (st & PERF_SAMPLE_IP)
		ev->sample.ip = take64(c);
	if (st & PERF_SAMPLE_TID)
		take32x2(c, &ev->pid, &ev->tid);
	if (st & PERF_SAMPLE_TIME)
		ev->time = take64(c);
	if (st & PERF_SAMPLE_ADDR)
		take64(c);
	if (st & PERF_SAMPLE_ID)
		take64(c);
	if (st & PERF_SAMPLE_STREAM_ID)
		take64(c);
	if (st & PERF_SAMPLE_CPU)
		take32x2(c, &ev->cpu, &u);
	if (st & PERF_SAMPLE_PERIOD)
		ev->sample.period = take64(c);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = take64(c);
		const uint64_t *ips = take(c, nr * 8);
		int ctx = -1; /* 0 kernel, 1 user, -1 none yet */
		if (!ips || nr > 4 * PERF_MAX_STACK_DEPTH)
			return -1;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip;
			memcpy(&ip, ips + i, 8);
			if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
				if (ip == (uint64_t)PERF_CONTEXT_KERNEL)
					ctx = 0;
				else if (ip == (uint64_t)PERF_CONTEXT_USER)
					ctx = 1;
				else
					ctx = -2; /* hypervisor, guest: not ours */
				continue;
			}
			if (ctx == 0 && ev->sample.nkernel < PERF_MAX_STACK_DEPTH)
				chain_kernel[ev->sample.nkernel++] = ip;
			else if (ctx == 1 && ev->sample.nuser < PERF_MAX_STACK_DEPTH)
				chain_user[ev->sample.nuser++] = ip;
		}
		ev->sample.kernel_ips = chain_kernel;
		ev->sample.user_ips = chain_user;
		/* the kernel stops at sysctl perf_event_max_stack (127) */
		ev->sample.user_truncated = ev->sample.nuser >= 127;
	}
	if (st & PERF_SAMPLE_RAW) {
		const uint8_t *sz = take(c, 4);
		uint32_t size = 0;
		if (sz)
			memcpy(&size, sz, 4);
		take(c, size);
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		uint64_t abi = take64(c);
		if (abi != PERF_SAMPLE_REGS_ABI_NONE) {
			size_t n = (size_t)__builtin_popcountll(l->regs_mask);
			ev->sample.regs = take(c, n * 8);
			ev->sample.regs_mask = l->regs_mask;
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		uint64_t size = take64(c);
		if (size) {
			const uint8_t *data = take(c, size);
			uint64_t dyn = take64(c);
			ev->sample.stack = data;
			ev->sample.stack_size = TF_MIN(dyn, size);
		}
	}
	if (c->bad)
		return -1;
	ev->sample.where = ev->sample.nkernel > 0 && ev->sample.nuser == 0
				   ? TF_SAMPLE_KERNEL : TF_SAMPLE_USER;
	if (!(st & PERF_SAMPLE_CALLCHAIN) || ev->sample.nuser + ev->sample.nkernel == 0) {
		/* no chain: the sample ip alone, in user space when it looks like it */
		chain_user[0] = ev->sample.ip;
		ev->sample.user_ips = chain_user;
		ev->sample.nuser = 1;
		ev->sample.kernel_ips = chain_kernel;
	}
	return 1;
}

/* ---- the kernel's records (PERF_RECORD_*) ---- */

static int decode_mmap2(const tf_spool_layout *l, const struct perf_event_header *h, cursor *c,
			tf_rec_event *ev)
{
	ev->type = TF_REC_MMAP;
	take32x2(c, &ev->pid, &ev->tid);
	ev->mmap.start = take64(c);
	ev->mmap.len = take64(c);
	ev->mmap.pgoff = take64(c);
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		const uint8_t *b = take(c, 24);
		if (b) {
			ev->mmap.build_id_len = TF_MIN(b[0], 20);
			ev->mmap.build_id = b + 4;
		}
	} else {
		take32x2(c, &ev->mmap.maj, &ev->mmap.min);
		ev->mmap.ino = take64(c);
		ev->mmap.ino_generation = take64(c);
	}
	take32x2(c, &ev->mmap.prot, &ev->mmap.flags);
	ev->mmap.filename = (const char *)c->p;
	if (c->bad || !memchr(c->p, '\0', (size_t)(c->end - c->p)))
		return -1;
	decode_sample_id(l, h, ev);
	return 1;
}

static int decode_comm(const tf_spool_layout *l, const struct perf_event_header *h, cursor *c,
		       tf_rec_event *ev)
{
	ev->type = TF_REC_COMM;
	take32x2(c, &ev->pid, &ev->tid);
	ev->comm.comm = (const char *)c->p;
	ev->comm.exec = !!(h->misc & PERF_RECORD_MISC_COMM_EXEC);
	if (c->bad || !memchr(c->p, '\0', (size_t)(c->end - c->p)))
		return -1;
	decode_sample_id(l, h, ev);
	return 1;
}

/* PERF_RECORD_FORK and PERF_RECORD_EXIT share their layout. */
static int decode_fork_exit(const tf_spool_layout *l, const struct perf_event_header *h,
			    cursor *c, tf_rec_event *ev)
{
	ev->type = h->type == PERF_RECORD_FORK ? TF_REC_FORK : TF_REC_EXIT;
	take32x2(c, &ev->pid, &ev->fork.ppid);
	take32x2(c, &ev->tid, &ev->fork.ptid);
	ev->time = take64(c);
	if (c->bad)
		return -1;
	decode_sample_id(l, h, ev);
	return 1;
}

static int decode_switch(const tf_spool_layout *l, const struct perf_event_header *h, cursor *c,
			 tf_rec_event *ev)
{
	ev->type = TF_REC_SWITCH;
	ev->cswitch.out = (h->misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
	ev->cswitch.preempt = ev->cswitch.out &&
			      (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0;
	if (h->type == PERF_RECORD_SWITCH) {
		decode_sample_id(l, h, ev);
		return ev->tid ? 1 : -1;
	}
	/* PERF_RECORD_SWITCH_CPU_WIDE, of events that follow a cgroup
	 * (perf.c): the thread going on or off is the sample_id's, as above;
	 * the other one is named in the record (next or previous), and may
	 * not be ours */
	take64(c);
	if (c->bad)
		return -1;
	decode_sample_id(l, h, ev);
	return ev->tid ? 1 : 0;
}

/* PERF_RECORD_LOST, PERF_RECORD_LOST_SAMPLES and PERF_RECORD_THROTTLE:
 * what the kernel did not deliver. */
static int decode_lost(const tf_spool_layout *l, const struct perf_event_header *h, cursor *c,
		       tf_rec_event *ev)
{
	if (h->type == PERF_RECORD_THROTTLE) {
		ev->type = TF_REC_THROTTLE;
		ev->time = take64(c);
		ev->lost.count = 1;
	} else {
		ev->type = TF_REC_LOST;
		if (h->type == PERF_RECORD_LOST)
			take64(c); /* the event's id */
		ev->lost.count = take64(c);
	}
	decode_sample_id(l, h, ev);
	return c->bad ? -1 : 1;
}

/* ---- testflame's own records (TF_SPOOL_*) ---- */

/* A sample of the context-switch event (the perf sampler's off-CPU
 * ring, perf.c): a thread leaving its CPU, with its stack then. */
static int decode_switch_sample(const tf_spool_layout *l, cursor *c, tf_rec_event *ev)
{
	tf_spool_layout sl = *l;
	sl.sample_type = l->switch_sample_type;
	int rc = decode_sample(&sl, c, ev);
	ev->type = TF_REC_OFFCPU;
	return rc;
}

/* From its time on, a switch sample of the CPU stands for `period`
 * switch-outs (perf.c's cap). */
static int decode_offcpu_period(cursor *c, tf_rec_event *ev)
{
	uint32_t cpu, pad;
	take32x2(c, &cpu, &pad);
	ev->time = take64(c);
	ev->cpu = cpu;
	ev->sample.period = take64(c);
	ev->type = TF_REC_OFFCPU_PERIOD;
	return c->bad ? -1 : 1;
}

/* The head all of them but the extended sample open with: the thread and
 * the time. */
static void take_own_head(cursor *c, tf_rec_event *ev, tf_rec_type type)
{
	ev->type = type;
	take32x2(c, &ev->pid, &ev->tid);
	ev->time = take64(c);
}

/* A sample with the name of what its thread waited in (off-CPU). */
static int decode_sample_ext(const tf_spool_layout *l, cursor *c, tf_rec_event *ev)
{
	uint32_t len, pad;
	take32x2(c, &len, &pad);
	const char *name = take(c, len);
	if (!name || !len || name[len - 1] != '\0')
		return -1;
	int rc = decode_sample(l, c, ev);
	ev->sample.offcpu = name[0] ? name : NULL;
	return rc;
}

static int decode_thread_cost(cursor *c, tf_rec_event *ev)
{
	uint32_t rem, pad;
	take_own_head(c, ev, TF_REC_THREAD_COST);
	ev->thread_cost.count = take64(c);
	take32x2(c, &rem, &pad);
	ev->thread_cost.remainder = rem != 0;
	return c->bad ? -1 : 1;
}

static int decode_marker(cursor *c, tf_rec_event *ev)
{
	uint32_t begin, scope, len, rlen;
	take_own_head(c, ev, TF_REC_MARKER);
	take32x2(c, &begin, &scope);
	take32x2(c, &len, &rlen);
	uint64_t cpu = take64(c);
	const char *name = take(c, (uint64_t)len + 1);
	const char *runner = rlen && name ? take(c, (uint64_t)rlen + 1) : NULL;
	if (c->bad || !name || name[len] != '\0' || (rlen && runner[rlen] != '\0'))
		return -1;
	ev->marker.runner = runner;
	ev->marker.begin = begin != 0;
	ev->marker.scope = (tf_marker_scope)scope;
	ev->marker.name = name;
	ev->marker.has_cpu = cpu != 0;
	ev->marker.cpu = cpu ? cpu - 1 : 0;
	return 1;
}

static int decode_cmdline(cursor *c, tf_rec_event *ev)
{
	uint32_t len, cwdlen;
	take_own_head(c, ev, TF_REC_CMDLINE);
	take32x2(c, &len, &cwdlen);
	const char *cwd = take(c, (uint64_t)cwdlen + 1);
	const char *argv = take(c, len);
	if (c->bad || !cwd || !argv || cwd[cwdlen] != '\0')
		return -1;
	ev->cmdline.cwd = cwd;
	ev->cmdline.argv = argv;
	ev->cmdline.len = len;
	return 1;
}

static int decode_pycode(cursor *c, tf_rec_event *ev)
{
	uint32_t id, first, namelen, qualified;
	take_own_head(c, ev, TF_REC_PYCODE);
	take32x2(c, &id, &first);
	take32x2(c, &namelen, &qualified);
	const char *name = take(c, (uint64_t)namelen + 1);
	if (c->bad || !name || name[namelen] != '\0')
		return -1;
	const char *file = name + namelen + 1;
	if (!memchr(file, '\0', (size_t)((const char *)c->end - file)))
		return -1;
	ev->pycode.id = id;
	ev->pycode.firstlineno = (int)first;
	ev->pycode.qualified = qualified != 0;
	ev->pycode.name = name;
	ev->pycode.file = file;
	return 1;
}

static int decode_pystack(cursor *c, tf_rec_event *ev)
{
	uint32_t n, flags;
	take_own_head(c, ev, TF_REC_PYSTACK);
	take32x2(c, &n, &flags);
	ev->pystack.delay_ns = take64(c);
	const void *frames = take(c, (uint64_t)n * 8);
	if (c->bad || (n && !frames))
		return -1;
	ev->pystack.frames = frames;
	ev->pystack.nframes = n;
	ev->pystack.cut = flags & 1;
	ev->pystack.partial = (flags & 2) != 0;
	return 1;
}

static int decode_proc_exit(cursor *c, tf_rec_event *ev)
{
	uint32_t st, pad;
	take_own_head(c, ev, TF_REC_PROC_EXIT);
	take32x2(c, &st, &pad);
	ev->proc_exit.wait_status = (int)st;
	return c->bad ? -1 : 1;
}

/* A freed block the allocation sampler had sampled. */
static int decode_alloc_free(cursor *c, tf_rec_event *ev)
{
	take_own_head(c, ev, TF_REC_ALLOC_FREE);
	ev->alloc_free.ptr = take64(c);
	return c->bad ? -1 : 1;
}

/* A thread's allocations since its previous count, exact. */
static int decode_alloc_count(cursor *c, tf_rec_event *ev)
{
	uint32_t kind, pad;
	take_own_head(c, ev, TF_REC_ALLOC_COUNT);
	ev->alloc_count.allocs = take64(c);
	ev->alloc_count.bytes = take64(c);
	ev->alloc_count.frees = take64(c);
	take32x2(c, &kind, &pad);
	return c->bad ? -1 : 1;
}

/* A process image that ran the allocation sampler: why it counted
 * nothing (flags), its peak resident set and its program. */
static int decode_alloc_proc(cursor *c, tf_rec_event *ev)
{
	ev->type = TF_REC_ALLOC_PROC;
	take32x2(c, &ev->pid, &ev->alloc_proc.flags);
	ev->tid = ev->pid;
	ev->time = take64(c);
	ev->alloc_proc.hwm_kb = take64(c);
	take64(c); /* end */
	ev->alloc_proc.program = take_str(c);
	return ev->alloc_proc.program ? 1 : -1;
}

/* A sentence for the run's notes (exec: why the program the process
 * execs next runs without the allocation sampler). */
static int decode_note(cursor *c, tf_rec_event *ev)
{
	uint32_t exec, pad;
	take_own_head(c, ev, TF_REC_NOTE);
	take32x2(c, &exec, &pad);
	ev->note.exec = exec != 0;
	ev->note.text = take_str(c);
	return ev->note.text ? 1 : -1;
}

/* The peak resident set of a process image without the allocation
 * sampler, read from /proc (go: a Go program). */
static int decode_rss(cursor *c, tf_rec_event *ev)
{
	uint32_t go;
	ev->type = TF_REC_RSS;
	take32x2(c, &ev->pid, &go);
	ev->tid = ev->pid;
	ev->time = take64(c);
	ev->rss.hwm_kb = take64(c);
	ev->rss.go = go != 0;
	return c->bad ? -1 : 1;
}

static int decode_peek(cursor *c, tf_rec_event *ev)
{
	uint32_t pad;
	ev->type = TF_REC_PEEK;
	take32x2(c, &ev->pid, &pad);
	ev->tid = ev->pid;
	ev->time = take64(c);
	ev->peek.end = take64(c);
	return c->bad ? -1 : 1;
}

int tf_spool_decode(const tf_spool_layout *l, const struct perf_event_header *h,
		    tf_rec_event *ev)
{
	cursor c = { (const uint8_t *)(h + 1), (const uint8_t *)h + h->size, false };

	memset(ev, 0, sizeof(*ev));
	if (h->size < sizeof(*h))
		return -1;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		return decode_sample(l, &c, ev);
	case TF_SPOOL_SWITCH_SAMPLE:
		return decode_switch_sample(l, &c, ev);
	case TF_SPOOL_OFFCPU_PERIOD:
		return decode_offcpu_period(&c, ev);
	case PERF_RECORD_MMAP2:
		return decode_mmap2(l, h, &c, ev);
	case PERF_RECORD_COMM:
		return decode_comm(l, h, &c, ev);
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return decode_fork_exit(l, h, &c, ev);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return decode_switch(l, h, &c, ev);
	case PERF_RECORD_READ:
		/* inherit_stat: an inherited event's count when its thread
		 * exits (read_format 0: the value alone) */
		ev->type = TF_REC_THREAD_COST;
		take32x2(&c, &ev->pid, &ev->tid);
		ev->thread_cost.count = take64(&c);
		decode_sample_id(l, h, ev);
		return c.bad ? -1 : 1;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_THROTTLE:
		return decode_lost(l, h, &c, ev);
	case TF_SPOOL_SAMPLE_EXT:
		return decode_sample_ext(l, &c, ev);
	case TF_SPOOL_THREAD_COST:
		return decode_thread_cost(&c, ev);
	case TF_SPOOL_MARKER:
		return decode_marker(&c, ev);
	case TF_SPOOL_CMDLINE:
		return decode_cmdline(&c, ev);
	case TF_SPOOL_PYCODE:
		return decode_pycode(&c, ev);
	case TF_SPOOL_PYSTACK:
		return decode_pystack(&c, ev);
	case TF_SPOOL_PROC_EXIT:
		return decode_proc_exit(&c, ev);
	case TF_SPOOL_ALLOC:
		return decode_alloc(&c, ev);
	case TF_SPOOL_ALLOC_FREE:
		return decode_alloc_free(&c, ev);
	case TF_SPOOL_ALLOC_COUNT:
		return decode_alloc_count(&c, ev);
	case TF_SPOOL_ALLOC_PROC:
		return decode_alloc_proc(&c, ev);
	case TF_SPOOL_NOTE:
		return decode_note(&c, ev);
	case TF_SPOOL_RSS:
		return decode_rss(&c, ev);
	case TF_SPOOL_PEEK:
		return decode_peek(&c, ev);
	default:
		return 0;
	}
}

uint64_t tf_spool_record_time(const tf_spool_layout *l, const struct perf_event_header *h)
{
	const uint8_t *body = (const uint8_t *)(h + 1);
	size_t len = h->size - sizeof(*h), off = 0;
	uint64_t t = 0;

	switch (h->type) {
	case TF_SPOOL_SAMPLE_EXT: {
		uint32_t n;
		if (len < 8)
			return 0;
		memcpy(&n, body, 4);
		if ((size_t)n + 8 > len)
			return 0;
		body += 8 + n;
		len -= 8 + n;
	}
		/* fall through */
	case PERF_RECORD_SAMPLE:
	case TF_SPOOL_SWITCH_SAMPLE:
		if (!(l->sample_type & PERF_SAMPLE_TIME))
			return 0;
		off += (l->sample_type & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
		off += (l->sample_type & PERF_SAMPLE_IP) ? 8 : 0;
		off += (l->sample_type & PERF_SAMPLE_TID) ? 8 : 0;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		off = 16;
		break;
	case TF_SPOOL_PROC_EXIT:
	case TF_SPOOL_OFFCPU_PERIOD:
	case TF_SPOOL_MARKER:
	case TF_SPOOL_CMDLINE:
	case TF_SPOOL_THREAD_COST:
	case TF_SPOOL_PYCODE:
	case TF_SPOOL_PYSTACK:
	case TF_SPOOL_ALLOC:
	case TF_SPOOL_ALLOC_FREE:
	case TF_SPOOL_ALLOC_COUNT:
	case TF_SPOOL_ALLOC_PROC:
	case TF_SPOOL_NOTE:
	case TF_SPOOL_RSS:
		off = 8;
		break;
	default: {
		tf_rec_event ev;
		memset(&ev, 0, sizeof(ev));
		decode_sample_id(l, h, &ev);
		return ev.time;
	}
	}
	if (off + 8 > len)
		return 0;
	memcpy(&t, body + off, 8);
	return t;
}

/* replay */

/* The index: each record's time (key) and offset in the spool (val),
 * sorted by time, stably (equal times stay in spool order): the spool is
 * long runs of sorted records, one per ring buffer read. */
typedef tf_keyed index_entry;

/*
 * The thread each CPU runs, from the switch records, for the samples the
 * kernel could not name: a thread sampled in its last moments, after its
 * pid was released (the end of do_exit, a thread of a process that goes
 * on), is reported as pid and tid -1. Its switch onto the CPU said who it
 * was, and nothing else ran there in between.
 */
typedef struct {
	uint32_t pid, tid; /* tid 0: not known */
} on_cpu;

typedef TF_VEC(on_cpu) on_cpu_vec;

#define TF_NO_ID UINT32_MAX

static void track_cpu(on_cpu_vec *cpus, const tf_rec_event *ev)
{
	if (ev->cpu >= 4096)
		return; /* no CPU number a machine gives */
	while (cpus->n <= ev->cpu)
		tf_vec_push(cpus, ((on_cpu){ 0, 0 }));
	on_cpu *c = &cpus->v[ev->cpu];
	if (!ev->cswitch.out && ev->tid != TF_NO_ID)
		*c = (on_cpu){ ev->pid, ev->tid };
	else if (ev->cswitch.out && (c->tid == ev->tid || ev->tid == TF_NO_ID))
		*c = (on_cpu){ 0, 0 };
}

static void name_sample(const on_cpu_vec *cpus, tf_rec_event *ev)
{
	if (ev->cpu < cpus->n && cpus->v[ev->cpu].tid) {
		ev->pid = cpus->v[ev->cpu].pid;
		ev->tid = cpus->v[ev->cpu].tid;
	}
}

int tf_recording_replay(tf_recording *r, tf_rec_event_fn fn, void *ctx)
{
	size_t len, off = 0, n = 0;
	const uint8_t *data;
	index_entry *idx;
	int rc = 0;

	if (!r->spool)
		return 0;
	data = tf_spool_data(r->spool, &len);
	if (!data)
		return 0;
	/* count first, so the index is one allocation */
	while (off + sizeof(struct perf_event_header) <= len) {
		const struct perf_event_header *h = (const void *)(data + off);
		if (h->size < sizeof(*h) || off + h->size > len)
			break;
		n++;
		off += h->size;
	}
	idx = tf_xmalloc((n + 1) * sizeof(*idx));
	off = 0;
	for (size_t i = 0; i < n; i++) {
		const struct perf_event_header *h = (const void *)(data + off);
		idx[i].key = tf_spool_record_time(&r->layout, h);
		idx[i].val = off;
		off += h->size;
	}
	tf_sort_keyed(idx, n);
	on_cpu_vec cpus = { 0 };
	/* each CPU's off-CPU period, where the samples do not say it */
	TF_VEC(uint64_t) periods = { 0 };
	bool own_period = !(r->layout.switch_sample_type & PERF_SAMPLE_PERIOD);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct perf_event_header *h = (const void *)(data + idx[i].val);
		tf_rec_event ev;
		int d = tf_spool_decode(&r->layout, h, &ev);
		if (d <= 0)
			continue;
		if (ev.type == TF_REC_SWITCH) {
			track_cpu(&cpus, &ev);
		} else if (ev.type == TF_REC_SAMPLE && ev.tid == TF_NO_ID) {
			name_sample(&cpus, &ev);
		} else if (ev.type == TF_REC_OFFCPU_PERIOD) {
			while (periods.n <= ev.cpu && ev.cpu < 4096)
				tf_vec_push(&periods, 1);
			if (ev.cpu < periods.n)
				periods.v[ev.cpu] = ev.sample.period;
			continue;
		} else if (ev.type == TF_REC_OFFCPU && own_period) {
			ev.sample.period = ev.cpu < periods.n ? periods.v[ev.cpu] : 1;
		}
		rc = fn(ctx, &ev);
	}
	tf_vec_free(&cpus);
	tf_vec_free(&periods);
	free(idx);
	return rc;
}
