/*
 * ptrace.c - sampling a process tree with ptrace(2), where perf_event_open
 * is refused (Docker's default seccomp profile, perf_event_paranoid >= 3)
 * but a process may still trace its own descendants.
 *
 * The held command is seized before it execs, with fork, vfork, clone,
 * exec and exit tracing, so every process and thread of the tree is ours
 * from its first instruction. A timerfd ticks at --freq; on each tick:
 *
 *   cpu-clock  each thread of a process whose CPU clock moved since the
 *              last tick, and that is running now (/proc/.../syscall says
 *              "running"), is interrupted, read and resumed. The sample's
 *              period is the thread's CPU time since its previous sample,
 *              read from schedstat while it is stopped (exact then: the
 *              switch-out accounted it; while it runs schedstat lags by up
 *              to a scheduler tick), so a thread that ran half the interval
 *              weighs half and the shares are CPU shares. A thread found
 *              asleep is not touched: waking it could make its syscall fail
 *              with EINTR (epoll_wait, sigtimedwait), and its CPU time rides
 *              on its next sample.
 *   wall       every thread is sampled, running or not. A waiting thread's
 *              wait site comes from /proc/.../syscall without stopping it;
 *              it is interrupted only when the site changed, to read the
 *              stack once, and that sample is reused while the thread
 *              waits there: a thread that has not run has not moved. Such
 *              samples are TF_SPOOL_SAMPLE_EXT records naming the syscall.
 *
 * Interrupted threads are gathered as their stops arrive and handled in
 * batches: registers through PTRACE_GETREGSET, stacks of all threads of a
 * process in one process_vm_readv (split at page boundaries, so a stack
 * running into unmapped memory still yields its readable prefix; falls
 * back to /proc/PID/mem where a filter refuses process_vm_readv). The user
 * call chain is walked along the frame pointers here; for DWARF the copied
 * stack and registers go into the record as perf would write them.
 *
 * A thread that used a whole interval of CPU without ever being caught by
 * a tick (a busy machine delays the tracer) gets one sample at its exit
 * stop carrying that time, so no process of the tree goes missing; shorter
 * remainders are dropped, as perf drops a period that never completes.
 *
 * Side-band records are synthesized from what ptrace reports: FORK on
 * fork/clone, COMM (exec) and MMAP2 from /proc/PID/maps on exec, more
 * MMAP2 whenever a sample holds an address outside the known mappings
 * (and every few seconds, for libraries unloaded and replaced), EXIT per
 * thread, and TF_SPOOL_PROC_EXIT with a process's wait status.
 *
 * ptrace rules kept here: waits use __WALL (threads are not children);
 * a signal-delivery-stop resumes with the same signal, so the tree sees
 * every signal unchanged; a group-stop is left stopped with PTRACE_LISTEN
 * until SIGCONT; new tracees start in a PTRACE_EVENT_STOP that may arrive
 * before or after their creator's event; any ptrace-stop consumes a
 * pending PTRACE_INTERRUPT; an exec by a non-leader thread
 * renames it to the leader's tid and silently ends the other threads; a
 * thread may die at any point of a sample (ESRCH is never an error).
 *
 * The seams, each tested alone: procfs.c parses the /proc files read here,
 * stack.c copies stacks and walks frame pointers, synth.c writes the perf
 * records; threads and processes are found by pid through tf_htab.
 */

#include "record_int.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHAIN_MAX 127               /* user frames, as perf's default max_stack */
#define PAGE TF_STACK_PAGE
#define MAPS_RESCAN_NS 2000000000ULL /* re-read a sampled process's maps this often */
#define MAPS_UNKNOWN_NS 20000000ULL  /* at most this often for unknown addresses */
#define DETACH_NS 2000000000ULL

/* Syscall restart codes the kernel leaves in rax while a tracee is stopped
 * out of an interrupted wait (include/linux/errno.h); EINTR too. */
static bool interrupted_wait(int64_t rax)
{
	return rax == -4 || rax == -512 || rax == -513 || rax == -514 || rax == -516;
}

enum { T_NEW, T_RUN, T_GSTOP };                               /* thread state */
enum { W_NONE, W_CPU, W_WALL_ON, W_WALL_OFF, W_GSTOP };      /* why interrupted */
enum { FD_SCHEDSTAT, FD_STAT, FD_SYSCALL, NFD };

static const char *const task_files[NFD] = { "schedstat", "stat", "syscall" };

struct thread {
	pid_t tid, pid;
	uint32_t slot, proc;
	uint8_t state, want;
	bool interrupting;     /* PTRACE_INTERRUPT sent, its stop not seen yet */
	bool exit_emitted, cost_emitted, in_batch, regs_ok, compat;
	bool exit_after_sample; /* its last sample is taken at its exit */
	uint64_t samples;
	int fd[NFD];           /* cached /proc files, -1 when closed */
	uint64_t last_time;    /* wall: end of the time its last sample covered */
	uint64_t last_cpu;     /* cpu: its CPU time at its last sample */
	uint64_t stop_time;
	tf_wait_site key;      /* W_WALL_OFF: the site seen at the tick */
	tf_wait_site cache_key;
	bool cache_valid;
	tf_buf cache;          /* the off-CPU record taken at cache_key */
	struct user_regs_struct regs;
	size_t stack_len;
};

struct map {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
};

struct proc {
	pid_t pid, ppid;
	uint32_t slot;
	bool execed;           /* the root is sampled only after its exec */
	bool ran;
	clockid_t clk;
	bool has_clk;
	uint64_t last_clk;
	TF_VEC(struct map) maps;
	uint64_t maps_time;
	int mem_fd;
};

typedef struct {
	tf_recording *rec;
	const tf_record_opts *o;
	const tf_ptrace_loop *io;
	bool wall, copy_stack, detaching;
	size_t window;            /* stack bytes read per sample */
	uint64_t interval;        /* ns between ticks */
	/* slots of threads and processes, and their pid -> slot indexes
	 * (threads come and go by the thousand: freed slots are reused) */
	TF_VEC(struct thread *) threads;
	TF_VEC(uint32_t) free_threads;
	tf_htab tmap;
	TF_VEC(struct proc *) procs;
	TF_VEC(uint32_t) free_procs;
	tf_htab pmap;
	TF_VEC(struct thread *) batch;
	TF_VEC(tf_stack_req) reqs;
	uint8_t *stacks;
	size_t stacks_cap;
	tf_buf rb;                /* the record being built */
	uint64_t processes, live;
	bool schedstat;
	int cached_fds, max_cached_fds;
	long clk_tck;
	int err;
	uint64_t chain[CHAIN_MAX];
	uint64_t interrupts, dropped;
	tf_stack_reader stack;
} sampler;

/* records: made in s->rb (synth.c), counted and appended here */

static void append(sampler *s, const void *data, size_t len)
{
	int rc;
	if (s->err)
		return;
	rc = tf_spool_append(s->rec->spool, data, len);
	if (rc)
		s->err = rc;
}

static void rb_emit(sampler *s)
{
	struct perf_event_header *h = (void *)s->rb.ptr;
	tf_rec_event ev;

	s->rec->info.records++;
	if (h->type == PERF_RECORD_SAMPLE || h->type == TF_SPOOL_SAMPLE_EXT)
		s->rec->info.samples++;
	else if (s->io->live && h->type != TF_SPOOL_PROC_EXIT &&
		 tf_spool_decode(&s->rec->layout, h, &ev) > 0)
		s->io->live(s->io->live_ctx, &ev);
	append(s, s->rb.ptr, s->rb.len);
}

static void emit_task(sampler *s, uint32_t type, pid_t pid, pid_t ppid, pid_t tid, pid_t ptid,
		      uint64_t time)
{
	tf_synth_task(&s->rb, type, pid, ppid, tid, ptid, time);
	rb_emit(s);
}

static void emit_comm(sampler *s, pid_t pid, pid_t tid, const char *comm, uint64_t time)
{
	tf_synth_comm(&s->rb, pid, tid, comm, time);
	rb_emit(s);
}

static void emit_proc_exit(sampler *s, pid_t pid, pid_t tid, int status, uint64_t time)
{
	tf_synth_proc_exit(&s->rb, pid, tid, status, time);
	rb_emit(s);
}

/* threads and processes */

static struct proc *proc_of(const sampler *s, const struct thread *t)
{
	return s->procs.v[t->proc];
}

static uint64_t pid_hash(pid_t pid)
{
	return tf_hash_u64((uint32_t)pid);
}

static bool thread_is(const void *ctx, uint32_t slot, const void *key)
{
	const sampler *s = ctx;
	return s->threads.v[slot] && s->threads.v[slot]->tid == *(const pid_t *)key;
}

static bool proc_is(const void *ctx, uint32_t slot, const void *key)
{
	const sampler *s = ctx;
	return s->procs.v[slot] && s->procs.v[slot]->pid == *(const pid_t *)key;
}

static struct thread *find_thread(const sampler *s, pid_t tid)
{
	uint32_t i = tf_htab_find(&s->tmap, pid_hash(tid), thread_is, s, &tid);
	return i == TF_HTAB_NONE ? NULL : s->threads.v[i];
}

static struct proc *find_proc(const sampler *s, pid_t pid)
{
	uint32_t i = tf_htab_find(&s->pmap, pid_hash(pid), proc_is, s, &pid);
	return i == TF_HTAB_NONE ? NULL : s->procs.v[i];
}

/* A pid names one process at a time: a new one replaces a stale entry. */
static void unindex_proc(sampler *s, pid_t pid)
{
	struct proc *p = find_proc(s, pid);
	if (p)
		tf_htab_remove(&s->pmap, pid_hash(pid), p->slot);
}

static struct proc *proc_new(sampler *s, pid_t pid, pid_t ppid, const struct proc *parent)
{
	struct proc *p = tf_xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->ppid = ppid;
	p->mem_fd = -1;
	p->has_clk = clock_getcpuclockid(pid, &p->clk) == 0;
	if (parent) {
		/* a fork shares its parent's mappings until it execs */
		p->execed = parent->execed;
		p->maps_time = parent->maps_time;
		for (size_t i = 0; i < parent->maps.n; i++)
			tf_vec_push(&p->maps, parent->maps.v[i]);
	}
	if (s->free_procs.n) {
		p->slot = s->free_procs.v[--s->free_procs.n];
		s->procs.v[p->slot] = p;
	} else {
		p->slot = (uint32_t)s->procs.n;
		tf_vec_push(&s->procs, p);
	}
	unindex_proc(s, pid);
	tf_htab_insert(&s->pmap, pid_hash(pid), p->slot);
	return p;
}

static void proc_free(sampler *s, struct proc *p)
{
	unindex_proc(s, p->pid);
	s->procs.v[p->slot] = NULL;
	tf_vec_push(&s->free_procs, p->slot);
	if (p->mem_fd >= 0)
		close(p->mem_fd);
	tf_vec_free(&p->maps);
	free(p);
}

static struct thread *thread_new(sampler *s, pid_t tid, struct proc *p, uint8_t state,
				 uint64_t now)
{
	struct thread *t = tf_xcalloc(1, sizeof(*t));
	t->tid = tid;
	t->pid = p->pid;
	t->proc = p->slot;
	t->state = state;
	t->last_time = now;
	for (int i = 0; i < NFD; i++)
		t->fd[i] = -1;
	if (s->free_threads.n) {
		t->slot = s->free_threads.v[--s->free_threads.n];
		s->threads.v[t->slot] = t;
	} else {
		t->slot = (uint32_t)s->threads.n;
		tf_vec_push(&s->threads, t);
	}
	tf_htab_insert(&s->tmap, pid_hash(tid), t->slot);
	s->live++;
	return t;
}

static void close_fds(sampler *s, struct thread *t)
{
	for (int i = 0; i < NFD; i++)
		if (t->fd[i] >= 0) {
			close(t->fd[i]);
			t->fd[i] = -1;
			s->cached_fds--;
		}
}

static void thread_free(sampler *s, struct thread *t)
{
	if (t->in_batch)
		for (size_t i = 0; i < s->batch.n; i++)
			if (s->batch.v[i] == t)
				s->batch.v[i] = NULL;
	close_fds(s, t);
	tf_buf_free(&t->cache);
	tf_htab_remove(&s->tmap, pid_hash(t->tid), t->slot);
	s->threads.v[t->slot] = NULL;
	tf_vec_push(&s->free_threads, t->slot);
	s->live--;
	free(t);
}

static void resume(struct thread *t, int sig)
{
	/* a group-stopped thread stays stopped, but keeps reporting to us */
	if (t->state == T_GSTOP)
		ptrace(PTRACE_LISTEN, t->tid, 0, 0);
	else
		ptrace(PTRACE_CONT, t->tid, 0, (void *)(uintptr_t)sig);
}

/* /proc/PID/task/TID files, kept open while descriptors last (pread at 0
 * regenerates them: one syscall per look). */
static ssize_t read_task(sampler *s, struct thread *t, int which, char *buf, size_t len)
{
	int fd = t->fd[which];
	ssize_t n;

	if (fd < 0) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)t->pid, (int)t->tid,
			 task_files[which]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		if (s->cached_fds < s->max_cached_fds) {
			t->fd[which] = fd;
			s->cached_fds++;
		}
	}
	n = pread(fd, buf, len - 1, 0);
	if (t->fd[which] != fd)
		close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* CPU time of a thread in ns: schedstat's sum_exec_runtime, or utime +
 * stime in clock ticks where the kernel lacks schedstat. */
static bool thread_cpu(sampler *s, struct thread *t, uint64_t *out)
{
	char buf[512], *tok[40];

	if (s->schedstat) {
		if (read_task(s, t, FD_SCHEDSTAT, buf, sizeof(buf)) <= 0)
			return false;
		*out = strtoull(buf, NULL, 10);
		return true;
	}
	if (read_task(s, t, FD_STAT, buf, sizeof(buf)) <= 0 || tf_procfs_stat_fields(buf, tok, 14) < 14)
		return false;
	*out = (strtoull(tok[11], NULL, 10) + strtoull(tok[12], NULL, 10)) *
	       (1000000000ULL / (uint64_t)s->clk_tck);
	return true;
}

/* 1 running, 0 waiting (k filled), -1 gone. */
static int thread_wait(sampler *s, struct thread *t, tf_wait_site *k)
{
	char buf[256];

	if (read_task(s, t, FD_SYSCALL, buf, sizeof(buf)) <= 0)
		return -1;
	return tf_procfs_parse_syscall(buf, k);
}

/* Whether a thread seen waiting at `now` still waits where `cached` was
 * taken. A wait we interrupted to read the stack goes on, at the same
 * place, as restart_syscall. */
static bool key_eq(const tf_wait_site *now, const tf_wait_site *cached)
{
	if (now->sp != cached->sp || now->pc != cached->pc)
		return false;
	if (now->nr == __NR_restart_syscall)
		return true;
	return now->nr == cached->nr && memcmp(now->args, cached->args, sizeof(now->args)) == 0;
}

/* mappings */

static bool maps_has(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->maps.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (addr < p->maps.v[mid].start)
			hi = mid;
		else if (addr >= p->maps.v[mid].end)
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static bool maps_same(const struct proc *p, const tf_maps_line *m)
{
	size_t lo = 0, hi = p->maps.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct map *x = &p->maps.v[mid];
		if (m->start < x->start)
			hi = mid;
		else if (m->start > x->start)
			lo = mid + 1;
		else
			return x->end == m->end && x->pgoff == m->pgoff && x->ino == m->ino &&
			       x->maj == m->maj && x->min == m->min;
	}
	return false;
}

/*
 * Read /proc/PID/maps and emit an MMAP2 for every executable mapping not
 * known yet (after an exec: all of them, the program first, as the kernel
 * would). Records carry `time`, the time of the sample that needed them, so
 * replay puts them just before it.
 */
static void scan_maps(sampler *s, struct proc *p, pid_t tid, uint64_t time, bool exec)
{
	char path[64], exe[PATH_MAX + 1] = "";
	tf_buf b = TF_BUF_INIT;
	TF_VEC(tf_maps_line) lines = { 0 };

	p->maps_time = tf_now_ns();
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	if (tf_file_read(&b, path) != 0) {
		tf_buf_free(&b);
		return;
	}
	if (exec) {
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)p->pid);
		ssize_t n = readlink(path, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
	}
	for (char *line = b.ptr; line && *line;) {
		char *nl = strchr(line, '\n');
		tf_maps_line l;

		if (nl)
			*nl = '\0';
		if (tf_procfs_parse_maps_line(line, &l))
			tf_vec_push(&lines, l);
		line = nl ? nl + 1 : NULL;
	}
	/* the program first: the attribution names processes after it */
	for (int pass = exec ? 0 : 1; pass < 2; pass++)
		for (size_t i = 0; i < lines.n; i++) {
			bool is_exe = exe[0] && strcmp(lines.v[i].name, exe) == 0;
			if (pass == 0 ? !is_exe : (exec && is_exe))
				continue;
			if (exec || !maps_same(p, &lines.v[i])) {
				tf_synth_mmap2(&s->rb, p->pid, tid, &lines.v[i], time);
				rb_emit(s);
			}
		}
	p->maps.n = 0;
	for (size_t i = 0; i < lines.n; i++) {
		const tf_maps_line *l = &lines.v[i];
		struct map m = { l->start, l->end, l->pgoff, l->ino, l->maj, l->min };
		tf_vec_push(&p->maps, m);
	}
	tf_vec_free(&lines);
	tf_buf_free(&b);
}

static void check_maps(sampler *s, struct proc *p, pid_t tid, const uint64_t *chain, size_t n,
		       uint64_t time)
{
	uint64_t age = tf_now_ns() - p->maps_time;
	bool unknown = false;

	for (size_t i = 0; i < n && !unknown; i++)
		unknown = !maps_has(p, chain[i]);
	if ((unknown && age > MAPS_UNKNOWN_NS) || age > MAPS_RESCAN_NS)
		scan_maps(s, p, tid, time, false);
}

/* stacks (stack.c) */

/*
 * Copy the stacks of the batch's threads [from, to), all of process p, to
 * s->stacks (one window each).
 */
static void read_stacks(sampler *s, struct proc *p, size_t from, size_t to)
{
	size_t n = to - from;

	s->reqs.n = 0;
	tf_vec_reserve(&s->reqs, n);
	for (size_t i = from; i < to; i++) {
		const struct thread *t = s->batch.v[i];
		tf_stack_req r = { 0, s->stacks + i * s->window, true, 0 };
		if (t && t->regs_ok && !t->compat) {
			r.sp = t->regs.rsp;
			r.skip = false;
		}
		s->reqs.v[s->reqs.n++] = r;
	}
	tf_stack_read_many(&s->stack, p->pid, &p->mem_fd, s->reqs.v, n, s->window);
	for (size_t i = from; i < to; i++)
		if (s->batch.v[i])
			s->batch.v[i]->stack_len = s->reqs.v[i - from].len;
}

static uint64_t reg_value(const struct user_regs_struct *r, int reg)
{
	switch (reg) {
	case TF_REG_AX: return r->rax;
	case TF_REG_BX: return r->rbx;
	case TF_REG_CX: return r->rcx;
	case TF_REG_DX: return r->rdx;
	case TF_REG_SI: return r->rsi;
	case TF_REG_DI: return r->rdi;
	case TF_REG_BP: return r->rbp;
	case TF_REG_SP: return r->rsp;
	case TF_REG_IP: return r->rip;
	case TF_REG_FLAGS: return r->eflags;
	case TF_REG_CS: return r->cs;
	case TF_REG_SS: return r->ss;
	case TF_REG_DS: return r->ds;
	case TF_REG_ES: return r->es;
	case TF_REG_FS: return r->fs;
	case TF_REG_GS: return r->gs;
	case TF_REG_R8: return r->r8;
	case TF_REG_R9: return r->r9;
	case TF_REG_R10: return r->r10;
	case TF_REG_R11: return r->r11;
	case TF_REG_R12: return r->r12;
	case TF_REG_R13: return r->r13;
	case TF_REG_R14: return r->r14;
	default: return r->r15;
	}
}

/* Build a sample record in s->rb; returns the offset of its body. */
static size_t build_sample(sampler *s, const struct thread *t, const char *offcpu, uint64_t time,
			   uint64_t period, size_t nchain, const uint8_t *stack, size_t stack_len)
{
	uint64_t regs[TF_REG_COUNT];
	tf_synth_sample_in in = {
		t->pid, t->tid, time, period, offcpu, s->chain, nchain, s->copy_stack,
		t->compat ? NULL : regs, stack, stack_len,
	};

	if (s->copy_stack && !t->compat)
		for (int r = 0; r < TF_REG_COUNT; r++)
			regs[r] = reg_value(&t->regs, r);
	return tf_synth_sample(&s->rb, &in);
}

static void emit_exit(sampler *s, struct thread *t, uint64_t now)
{
	struct proc *p = proc_of(s, t);
	if (t->exit_emitted)
		return;
	t->exit_emitted = true;
	emit_task(s, PERF_RECORD_EXIT, p->pid, p->ppid, t->tid, p->ppid, now);
}

/* A thread about to end, stopped: its whole CPU time, exact (schedstat's
 * sum_exec_runtime is settled once the thread is off the CPU), which is
 * the cost of its test for cpu-clock; the attributor sums a process's
 * threads. Not for --event wall, whose cost is time, not CPU. */
static void emit_thread_cost(sampler *s, struct thread *t, uint64_t now)
{
	struct proc *p = proc_of(s, t);
	uint64_t cpu;
	if (s->wall || t->cost_emitted || !thread_cpu(s, t, &cpu))
		return;
	t->cost_emitted = true;
	tf_synth_thread_cost(&s->rb, p->pid, t->tid, cpu, now);
	rb_emit(s);
	s->rec->info.thread_costs++;
}

/* Emit the cached off-CPU sample of a thread still waiting where it was. */
static void emit_cached(sampler *s, struct thread *t, uint64_t now)
{
	uint64_t period = now - t->last_time;
	size_t body;

	/* the record is followed by the offset of its sample body */
	memcpy(&body, t->cache.ptr + t->cache.len - sizeof(size_t), sizeof(size_t));
	tf_synth_sample_retime(t->cache.ptr, body, now, period);
	t->last_time = now;
	t->samples++;
	s->rec->info.records++;
	s->rec->info.samples++;
	tf_pyread_sample(s->io->py, (uint32_t)t->pid, (uint32_t)t->tid, now);
	append(s, t->cache.ptr, t->cache.len - sizeof(size_t));
}

/* Turn one stopped thread of the batch into a sample, then resume it. */
static void take_sample(sampler *s, struct thread *t, const uint8_t *stack)
{
	struct proc *p = proc_of(s, t);
	uint64_t now = t->stop_time, period = 0;
	const char *offcpu = NULL;
	char namebuf[32];
	bool cache = false;
	size_t n, body;

	if (!t->regs_ok)
		goto resume;
	n = t->compat ? 1 : tf_stack_walk_fp(&s->stack, p->pid, &p->mem_fd, s->chain, CHAIN_MAX,
					     t->regs.rip, t->regs.rsp, t->regs.rbp, stack,
					     t->stack_len);
	switch (t->want) {
	case W_CPU: {
		uint64_t cpu;
		/* fell asleep between the tick and the stop: its CPU time rides on
		 * its next sample, not on the place it sleeps in */
		if (!t->compat && (int64_t)t->regs.orig_rax >= 0 &&
		    interrupted_wait((int64_t)t->regs.rax))
			goto resume;
		if (!thread_cpu(s, t, &cpu) || cpu <= t->last_cpu)
			goto resume;
		period = cpu - t->last_cpu;
		t->last_cpu = cpu;
		break;
	}
	case W_WALL_ON:
		period = now - t->last_time;
		t->last_time = now;
		break;
	case W_WALL_OFF:
		period = now - t->last_time;
		t->last_time = now;
		/* still where /proc said it waits: an off-CPU sample, reusable
		 * while it stays there */
		if (!t->compat && (int64_t)t->regs.orig_rax == t->key.nr &&
		    t->regs.rip == t->key.pc && t->regs.rsp == t->key.sp) {
			offcpu = tf_procfs_syscall_name(t->key.nr, namebuf, sizeof(namebuf));
			cache = true;
		}
		break;
	case W_GSTOP:
		offcpu = "stopped";
		cache = true;
		break;
	default:
		goto resume;
	}
	check_maps(s, p, t->tid, s->chain, n, now);
	body = build_sample(s, t, offcpu, now, period, n, stack, t->stack_len);
	if (cache) {
		/* keep the record, with its body offset at the end */
		tf_buf_clear(&t->cache);
		tf_buf_put(&t->cache, s->rb.ptr, s->rb.len);
		tf_buf_put(&t->cache, &body, sizeof(body));
		t->cache_key = t->want == W_GSTOP ? (tf_wait_site){ .nr = LONG_MIN } : t->key;
		t->cache_valid = true;
	}
	if (t->want != W_GSTOP) {
		tf_pyread_sample(s->io->py, (uint32_t)t->pid, (uint32_t)t->tid, now);
		rb_emit(s);
		t->samples++;
	}
resume:
	if (t->exit_after_sample)
		emit_thread_cost(s, t, now);
	if (t->exit_after_sample && t->tid != t->pid)
		emit_exit(s, t, now);
	t->want = W_NONE;
	resume(t, 0);
}

static int cmp_batch(const void *a, const void *b)
{
	const struct thread *x = *(struct thread *const *)a, *y = *(struct thread *const *)b;
	pid_t px = x ? x->pid : INT_MAX, py = y ? y->pid : INT_MAX;
	return px < py ? -1 : px > py;
}

/* Sample every thread stopped for it since the last flush. */
static void flush_batch(sampler *s)
{
	size_t n = s->batch.n;

	if (!n)
		return;
	if (n * s->window > s->stacks_cap) {
		s->stacks_cap = n * s->window * 2;
		free(s->stacks);
		s->stacks = tf_xmalloc(s->stacks_cap);
	}
	for (size_t i = 0; i < n; i++) {
		struct thread *t = s->batch.v[i];
		struct iovec iov = { &t->regs, sizeof(t->regs) };
		if (!t)
			continue;
		t->regs_ok = ptrace(PTRACE_GETREGSET, t->tid, (void *)NT_PRSTATUS, &iov) == 0;
		t->compat = t->regs_ok && iov.iov_len != sizeof(t->regs);
		if (!t->regs_ok) {
			/* a thread that died mid-sample is no loss; anything else is */
			s->dropped++;
			if (errno != ESRCH)
				s->rec->info.lost++;
		}
	}
	qsort(s->batch.v, n, sizeof(*s->batch.v), cmp_batch);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		if (!s->batch.v[i])
			break;
		while (j < n && s->batch.v[j] && s->batch.v[j]->pid == s->batch.v[i]->pid)
			j++;
		read_stacks(s, proc_of(s, s->batch.v[i]), i, j);
		i = j;
	}
	for (size_t i = 0; i < n; i++) {
		struct thread *t = s->batch.v[i];
		if (!t)
			continue;
		t->in_batch = false;
		if (t->compat) {
			/* a 32-bit task: struct user_regs_struct32, eip at 12 */
			uint32_t r32[17];
			memcpy(r32, &t->regs, sizeof(r32));
			s->chain[0] = r32[12];
		}
		take_sample(s, t, s->stacks + i * s->window);
	}
	s->batch.n = 0;
}

static void batch_add(sampler *s, struct thread *t)
{
	t->in_batch = true;
	tf_vec_push(&s->batch, t);
}

/* tree events */

/* "Tgid:" and "PPid:" of a task. */
static bool task_ids(pid_t tid, pid_t *tgid, pid_t *ppid)
{
	char path[64], tg[32], pp[32];
	tf_buf b = TF_BUF_INIT;
	bool ok = false;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	if (tf_file_read(&b, path) == 0 && tf_procfs_status_field(b.ptr, "Tgid", tg, sizeof(tg)) &&
	    tf_procfs_status_field(b.ptr, "PPid", pp, sizeof(pp))) {
		*tgid = (pid_t)atoi(tg);
		*ppid = (pid_t)atoi(pp);
		ok = *tgid > 0;
	}
	tf_buf_free(&b);
	return ok;
}

/* A new tracee stopped before its creator's event told us about it. */
static struct thread *adopt(sampler *s, pid_t tid, uint64_t now)
{
	pid_t tgid, ppid;
	struct proc *p;

	if (!task_ids(tid, &tgid, &ppid))
		return NULL;
	p = find_proc(s, tgid);
	if (tgid == tid || !p) {
		struct proc *parent = find_proc(s, ppid);
		p = proc_new(s, tgid, ppid, parent);
		s->processes++;
		thread_new(s, tid, p, T_NEW, now);
		emit_task(s, PERF_RECORD_FORK, tgid, ppid, tid, ppid, now);
	} else {
		thread_new(s, tid, p, T_NEW, now);
		emit_task(s, PERF_RECORD_FORK, tgid, tgid, tid, tgid, now);
	}
	return find_thread(s, tid);
}

static void on_new_child(sampler *s, struct thread *parent, pid_t tid, int event, uint64_t now)
{
	struct proc *pp = proc_of(s, parent), *p = pp;
	bool thread = false;

	if (find_thread(s, tid))
		return; /* its own stop came first */
	if (event == PTRACE_EVENT_CLONE) {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pp->pid, (int)tid);
		thread = access(path, F_OK) == 0;
	}
	if (!thread) {
		p = proc_new(s, tid, pp->pid, pp);
		s->processes++;
	}
	thread_new(s, tid, p, T_NEW, now);
	emit_task(s, PERF_RECORD_FORK, p->pid, pp->pid, tid, parent->tid, now);
}

static void on_exec(sampler *s, pid_t tid, uint64_t now)
{
	unsigned long former = (unsigned long)tid;
	struct thread *t, *old = NULL;
	struct proc *p;
	char path[64], comm[64] = "";
	tf_buf b = TF_BUF_INIT;

	ptrace(PTRACE_GETEVENTMSG, tid, 0, &former);
	t = find_thread(s, (pid_t)former);
	if ((pid_t)former != tid)
		old = find_thread(s, tid);
	if (!t)
		t = old ? old : adopt(s, tid, now);
	if (!t)
		return;
	p = proc_of(s, t);
	/* the exec ended every other thread; the old leader leaves no trace */
	for (size_t i = 0; i < s->threads.n; i++) {
		struct thread *u = s->threads.v[i];
		if (!u || u == t || u->proc != t->proc)
			continue;
		if (u != old)
			emit_exit(s, u, now);
		thread_free(s, u);
	}
	if (t->tid != tid) {
		tf_htab_remove(&s->tmap, pid_hash(t->tid), t->slot);
		t->tid = tid;
		tf_htab_insert(&s->tmap, pid_hash(tid), t->slot);
	}
	close_fds(s, t);
	t->cache_valid = false;
	t->state = T_RUN;
	t->interrupting = false; /* consumed by this stop */
	t->want = W_NONE;
	if (p->mem_fd >= 0) {
		close(p->mem_fd);
		p->mem_fd = -1;
	}
	p->maps.n = 0;
	p->execed = true;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)tid);
	if (tf_file_read(&b, path) == 0) {
		snprintf(comm, sizeof(comm), "%s", b.ptr);
		comm[strcspn(comm, "\n")] = '\0';
	}
	tf_buf_free(&b);
	emit_comm(s, p->pid, tid, comm, now);
	scan_maps(s, p, tid, now, true);
	/* CPU time before the exec belongs to the old program */
	if (!thread_cpu(s, t, &t->last_cpu))
		t->last_cpu = 0;
	t->last_time = now;
}

static void thread_gone(sampler *s, struct thread *t, int status, uint64_t now)
{
	struct proc *p = proc_of(s, t);

	if (s->detaching) {
		thread_free(s, t);
		return;
	}
	emit_exit(s, t, now);
	if (t->tid != p->pid) {
		thread_free(s, t);
		return;
	}
	/* the leader is reported last: the process is gone */
	emit_proc_exit(s, p->pid, t->tid, status, now);
	for (size_t i = 0; i < s->threads.n; i++) {
		struct thread *u = s->threads.v[i];
		if (u && u != t && u->proc == t->proc) {
			emit_exit(s, u, now);
			thread_free(s, u);
		}
	}
	thread_free(s, t);
	proc_free(s, p);
}

/* CPU (or wall) time of a thread not yet carried by a sample. */
static uint64_t unsampled_ns(sampler *s, struct thread *t, uint64_t now)
{
	uint64_t cpu;
	if (s->wall)
		return now - t->last_time;
	return thread_cpu(s, t, &cpu) && cpu > t->last_cpu ? cpu - t->last_cpu : 0;
}

static bool is_stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Detaching at the end: every stop is the last one we see of that thread. */
static void on_stop_detaching(sampler *s, struct thread *t, pid_t tid, int st)
{
	int event = (unsigned)st >> 16, sig = event ? 0 : WSTOPSIG(st);

	if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK ||
	    event == PTRACE_EVENT_CLONE) {
		/* the child is traced already: wait for its stop to let it go */
		unsigned long msg = 0;
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && msg && t &&
		    !find_thread(s, (pid_t)msg))
			thread_new(s, (pid_t)msg, proc_of(s, t), T_NEW, 0);
	}
	ptrace(PTRACE_DETACH, tid, 0, (void *)(uintptr_t)sig);
	if (t)
		thread_free(s, t);
}

static void on_wait(sampler *s, pid_t tid, int st)
{
	struct thread *t = find_thread(s, tid);
	uint64_t now = tf_now_ns();
	int sig, event;

	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		if (t)
			thread_gone(s, t, st, now);
		return; /* or the guard, our own child: launch.c tolerates that */
	}
	if (!WIFSTOPPED(st))
		return;
	if (s->detaching) {
		on_stop_detaching(s, t, tid, st);
		return;
	}
	sig = WSTOPSIG(st);
	event = (unsigned)st >> 16;
	if (event == PTRACE_EVENT_EXEC) {
		on_exec(s, tid, now);
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (!t)
		t = adopt(s, tid, now);
	if (!t) {
		ptrace(PTRACE_CONT, tid, 0, (void *)(uintptr_t)(event ? 0 : sig));
		return;
	}
	if (event != PTRACE_EVENT_STOP && t->interrupting) {
		/* any ptrace-stop consumes a pending PTRACE_INTERRUPT: no
		 * separate stop will come for it; the next tick tries again */
		t->interrupting = false;
		t->want = W_NONE;
	}
	switch (event) {
	case 0:
		/* signal-delivery-stop: deliver it, unchanged */
		resume(t, sig);
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
	case PTRACE_EVENT_CLONE: {
		unsigned long msg = 0;
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0 && msg)
			on_new_child(s, t, (pid_t)msg, event, now);
		resume(t, 0);
		break;
	}
	case PTRACE_EVENT_EXIT:
		if (!t->samples && t->state == T_RUN && proc_of(s, t)->execed && !t->in_batch &&
		    unsampled_ns(s, t, now) >= s->interval) {
			/* a thread that lived long enough to expect a sample but
			 * slipped between ticks (a busy tracer) still counts: one
			 * sample at its exit carries its whole CPU (or wall) time */
			t->want = s->wall ? W_WALL_ON : W_CPU;
			t->stop_time = now;
			t->exit_after_sample = true;
			batch_add(s, t);
			break;
		}
		emit_thread_cost(s, t, now);
		/* a process's end is its leader's, reported last; a leader may
		 * also die here only to be replaced by a thread that exec'd */
		if (t->tid != t->pid)
			emit_exit(s, t, now);
		resume(t, 0);
		break;
	case PTRACE_EVENT_STOP:
		if (is_stop_signal(sig)) {
			/* group-stop: stays stopped (LISTEN) until SIGCONT */
			bool capture = s->wall && t->state != T_NEW;
			t->interrupting = false;
			t->state = T_GSTOP;
			t->cache_valid = false;
			t->want = capture ? W_GSTOP : W_NONE;
			if (capture) {
				t->stop_time = now;
				if (!t->in_batch)
					batch_add(s, t);
			} else {
				resume(t, 0);
			}
			break;
		}
		if (t->state == T_NEW) {
			t->state = T_RUN;
			t->last_time = now;
		} else if (t->state == T_GSTOP) {
			t->state = T_RUN;
			t->cache_valid = false;
			t->last_time = now;
		}
		if (t->interrupting) {
			t->interrupting = false;
			if (t->want != W_NONE) {
				t->stop_time = now;
				if (!t->in_batch)
					batch_add(s, t);
				break;
			}
		}
		resume(t, 0);
		break;
	default:
		resume(t, 0);
		break;
	}
}

static void reap(sampler *s)
{
	for (;;) {
		int st;
		pid_t tid = waitpid(-1, &st, __WALL | WNOHANG);
		if (tid <= 0)
			break;
		on_wait(s, tid, st);
	}
	flush_batch(s);
}

/* ticks */

static void interrupt(sampler *s, struct thread *t, int want)
{
	if (ptrace(PTRACE_INTERRUPT, t->tid, 0, 0) == 0) {
		t->interrupting = true;
		t->want = (uint8_t)want;
		s->interrupts++;
	}
}

static void tick_cpu(sampler *s)
{
	for (size_t i = 0; i < s->procs.n; i++) {
		struct proc *p = s->procs.v[i];
		struct timespec ts;
		if (!p)
			continue;
		p->ran = true;
		if (p->has_clk && clock_gettime(p->clk, &ts) == 0) {
			uint64_t c = (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
			p->ran = c != p->last_clk;
			p->last_clk = c;
		}
	}
	for (size_t i = 0; i < s->threads.n; i++) {
		struct thread *t = s->threads.v[i];
		tf_wait_site k;
		if (!t || t->state != T_RUN || t->interrupting || t->in_batch)
			continue;
		struct proc *p = proc_of(s, t);
		if (!p->execed || !p->ran)
			continue;
		/* running now? A sleeper is not woken (see the top of the file);
		 * whether it ran since its last sample is told by its CPU time
		 * once it is stopped, exactly, where schedstat lags while it runs */
		if (thread_wait(s, t, &k) != 1)
			continue;
		interrupt(s, t, W_CPU);
	}
}

static void tick_wall(sampler *s, uint64_t now)
{
	for (size_t i = 0; i < s->threads.n; i++) {
		struct thread *t = s->threads.v[i];
		tf_wait_site k;
		int r;
		if (!t || t->interrupting || t->in_batch || t->state == T_NEW ||
		    !proc_of(s, t)->execed)
			continue;
		if (t->state == T_GSTOP) {
			if (t->cache_valid)
				emit_cached(s, t, now);
			continue;
		}
		r = thread_wait(s, t, &k);
		if (r < 0)
			continue;
		if (r == 1)
			interrupt(s, t, W_WALL_ON);
		else if (t->cache_valid && key_eq(&k, &t->cache_key))
			emit_cached(s, t, now);
		else {
			t->key = k;
			interrupt(s, t, W_WALL_OFF);
		}
	}
}

/* the run */

static void detach_all(sampler *s, int chldfd)
{
	uint64_t deadline = tf_now_ns() + DETACH_NS;

	flush_batch(s);
	s->detaching = true;
	for (size_t i = 0; i < s->threads.n; i++) {
		struct thread *t = s->threads.v[i];
		if (!t)
			continue;
		t->want = W_NONE;
		/* threads already on their way to a stop are let go there */
		if (!t->interrupting && t->state != T_NEW)
			ptrace(PTRACE_INTERRUPT, t->tid, 0, 0);
	}
	while (s->live && tf_now_ns() < deadline) {
		struct pollfd pfd = { chldfd, POLLIN, 0 };
		struct signalfd_siginfo si;
		int st;
		pid_t tid;
		while ((tid = waitpid(-1, &st, __WALL | WNOHANG)) > 0)
			on_wait(s, tid, st);
		if (!s->live)
			break;
		poll(&pfd, 1, 20);
		while (read(chldfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
			;
	}
	if (s->live)
		tf_record_notice(s->o->notice, s->o->notice_ctx, TF_NOTICE_WARN,
				 "%llu threads left behind by the command could not be released "
				 "from ptrace and will be killed", (unsigned long long)s->live);
}

static int pump(sampler *s, tf_launch *l, int chldfd, int timerfd)
{
	const tf_ptrace_loop *io = s->io;
	uint64_t last_progress = 0;
	tf_launch_state st = { 0 };
	int rc;

	for (;;) {
		struct pollfd fds[5] = {
			{ chldfd, POLLIN, 0 }, { timerfd, POLLIN, 0 },
			{ io->sigfd, POLLIN, 0 }, { tf_launch_fd(l), POLLIN, 0 },
			{ io->markers ? tf_markers_fd(io->markers) : -1, POLLIN, 0 },
		};
		struct signalfd_siginfo si[8];

		if (poll(fds, 5, 250) < 0 && errno != EINTR)
			return tf_error_set_errno(TF_ERROR, "poll failed");
		if (fds[0].revents & POLLIN) {
			/* SIGCHLDs coalesce into one: consume it before reaping, so
			 * a stop reported after the reap wakes the next poll */
			if (read(chldfd, si, sizeof(si)) < 0 && errno != EAGAIN)
				return tf_error_set_errno(TF_ERROR, "cannot read the signalfd");
			reap(s);
		}
		if ((fds[2].revents & POLLIN) && tf_launch_forward_signals(l, io->sigfd))
			s->rec->info.interrupted = true;
		if (fds[1].revents & POLLIN) {
			uint64_t ticks;
			if (read(timerfd, &ticks, sizeof(ticks)) == (ssize_t)sizeof(ticks)) {
				if (s->wall)
					tick_wall(s, tf_now_ns());
				else
					tick_cpu(s);
			}
		}
		if (!s->err && io->markers && (fds[4].fd < 0 || (fds[4].revents & POLLIN)))
			s->err = tf_markers_poll(io->markers, s->rec->spool, false);
		tf_alloc_poll(io->alloc);
		if (s->err)
			return s->err;
		if (fds[3].revents) {
			rc = tf_launch_poll(l, &st);
			if (rc)
				return rc;
			if (st.exited)
				break;
		}
		tf_record_report_progress(s->rec, s->o, s->processes, &last_progress);
	}
	reap(s);
	if (!s->err && io->markers)
		s->err = tf_markers_poll(io->markers, s->rec->spool, true);
	return s->err;
}

static void sampler_free(sampler *s)
{
	for (size_t i = 0; i < s->threads.n; i++)
		if (s->threads.v[i])
			thread_free(s, s->threads.v[i]);
	for (size_t i = 0; i < s->procs.n; i++)
		if (s->procs.v[i])
			proc_free(s, s->procs.v[i]);
	tf_vec_free(&s->threads);
	tf_vec_free(&s->free_threads);
	tf_vec_free(&s->procs);
	tf_vec_free(&s->free_procs);
	tf_vec_free(&s->batch);
	tf_vec_free(&s->reqs);
	tf_htab_free(&s->tmap);
	tf_htab_free(&s->pmap);
	free(s->stacks);
	tf_buf_free(&s->rb);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int tf_ptrace_record(tf_recording *rec, tf_launch *l, const tf_record_opts *o,
		     const tf_ptrace_loop *io)
{
	sampler s;
	pid_t pid = tf_launch_pid(l);
	long opts = PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL;
	sigset_t chld, saved_mask;
	struct rlimit nofile, saved_nofile;
	int chldfd = -1, timerfd = -1, rc;
	uint64_t cpu0;

	memset(&s, 0, sizeof(s));
	s.rec = rec;
	s.o = o;
	s.io = io;
	s.wall = o->event == TF_EVENT_WALL;
	s.copy_stack = o->callgraph != TF_CALLGRAPH_FP;
	/* frame-pointer walks need little; DWARF needs what perf would copy */
	s.window = s.copy_stack ? (o->stack_bytes + PAGE - 1) / PAGE * PAGE : PAGE;
	tf_stack_reader_init(&s.stack);
	s.interval = 1000000000ULL / (o->freq ? o->freq : TF_DEFAULT_FREQ);
	s.schedstat = access("/proc/self/schedstat", R_OK) == 0;
	s.clk_tck = sysconf(_SC_CLK_TCK);
	if (s.clk_tck <= 0)
		s.clk_tck = 100;

	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(uintptr_t)opts) != 0) {
		tf_record_caps caps;
		char why[512], fix[512];
		int err = errno;
		tf_record_probe(&caps, 0);
		caps.ptrace_errno = err;
		tf_record_ptrace_advice(&caps, why, sizeof(why), fix, sizeof(fix));
		return tf_error_set(TF_EPERM, "cannot trace the command: %s; fix: %s", why, fix);
	}

	rec->layout.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (s.copy_stack)
		rec->layout.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	rec->layout.regs_mask = TF_REGS_MASK;
	rec->layout.sample_id_all = true;
	rec->info.sampler = TF_SAMPLER_PTRACE;
	rec->info.kernel = false;
	if (o->event == TF_EVENT_INSTRUCTIONS || o->event == TF_EVENT_CYCLES)
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_WARN,
				 "the ptrace sampler cannot count %s: sampling cpu-clock instead",
				 tf_event_name(o->event));
	rec->info.event = s.wall ? TF_EVENT_WALL : TF_EVENT_CPU_CLOCK;
	rec->info.offcpu = s.wall;
	snprintf(rec->info.rung, sizeof(rec->info.rung), "ptrace");

	/* descriptors for /proc files of up to half the threads' worth */
	getrlimit(RLIMIT_NOFILE, &saved_nofile);
	nofile = saved_nofile;
	if (nofile.rlim_cur < nofile.rlim_max && nofile.rlim_cur < 65536) {
		nofile.rlim_cur = TF_MIN(nofile.rlim_max, (rlim_t)65536);
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	s.max_cached_fds = nofile.rlim_cur > 512 ? (int)TF_MIN(nofile.rlim_cur - 256, (rlim_t)60000) : 0;

	/* tracee stops arrive as SIGCHLD: poll them with everything else */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &saved_mask);
	chldfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
	timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (chldfd < 0 || timerfd < 0) {
		rc = tf_error_set_errno(TF_ERROR, "cannot create the sampler's descriptors");
		goto done;
	}
	{
		uint64_t ns = s.interval;
		struct itimerspec its = {
			{ (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
			{ (time_t)(ns / 1000000000ULL), (long)(ns % 1000000000ULL) },
		};
		timerfd_settime(timerfd, 0, &its, NULL);
	}
	{
		struct proc *root = proc_new(&s, pid, 0, NULL);
		thread_new(&s, pid, root, T_RUN, tf_now_ns());
		s.processes = 1;
	}
	cpu0 = thread_cpu_ns();
	rc = tf_launch_release(l);
	if (!rc)
		rc = pump(&s, l, chldfd, timerfd);
	detach_all(&s, chldfd);
	{
		uint64_t cpu = thread_cpu_ns() - cpu0;
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_VERBOSE,
				 "ptrace: %llu samples from %llu interrupts, %llu dropped, %.1f us of "
				 "tracer CPU per sample", (unsigned long long)rec->info.samples,
				 (unsigned long long)s.interrupts, (unsigned long long)s.dropped,
				 rec->info.samples ? (double)cpu / 1000.0 / (double)rec->info.samples
						   : 0.0);
	}
done:
	if (chldfd >= 0)
		close(chldfd);
	if (timerfd >= 0)
		close(timerfd);
	sampler_free(&s);
	sigprocmask(SIG_SETMASK, &saved_mask, NULL);
	setrlimit(RLIMIT_NOFILE, &saved_nofile);
	return rc;
}
