/*
 * perf.c - sampling a process tree with perf_event_open(2).
 *
 * One event per CPU, attached to the held command with inherit=1, so every
 * process and thread it ever spawns is sampled, and enable_on_exec=1, so
 * counting starts exactly at its execve. Each CPU's event has its own ring
 * buffer; the kernel also writes the side-band records (MMAP2, COMM, FORK,
 * EXIT) that make samples resolvable. Timestamps use CLOCK_MONOTONIC so
 * they line up with test markers written by the workload.
 *
 * The permission ladder, for machines that refuse part of it:
 *   hardware event, kernel+user -> hardware event, user only
 *   -> cpu-clock (software), kernel+user -> cpu-clock, user only.
 * Each rung taken is announced once with the reason and the fix.
 *
 * Where the command has a cgroup of its own (cgroup.c) and CPU-wide events
 * are allowed, time events follow that cgroup instead of inheriting
 * (--follow): one event per CPU counts whatever of the cgroup runs there.
 * An inherited event is copied into every new process and starts it on a
 * fresh sampling period, so a program shorter than one period is almost
 * never sampled (jansson's 213 test programs of about a millisecond: 2
 * samples at 249 Hz), while a CPU's event runs on from process to process
 * and samples each by its time (81). A new process also costs the kernel
 * nothing more than its side-band records (500 runs of /bin/true: 1.047
 * times as long by cgroup, 1.061 inherited). The context-switch records
 * are then the CPU's (PERF_RECORD_SWITCH_CPU_WIDE), written at the
 * switches of the cgroup's threads. Hardware events keep inheriting: their
 * per-thread counts at exit (inherit_stat) are what a test cost.
 *
 * Off-CPU (tf_offcpu): a third event per CPU, the software context-switch
 * event, samples every switch-out of the command's threads with the
 * thread's kernel and user stack at that moment (the kernel fires it in the
 * scheduler, in the context of the thread leaving). The switch records of
 * the side-band say when the thread came back and whether it left because
 * it was preempted (still runnable) or because it waited; the attribution
 * makes the intervals (attribute/offcpu.c). Measured against the
 * sched:sched_switch tracepoint, which gives the same stacks at the same
 * cost here, this event needs no tracefs and no tracepoint permission, and
 * its samples decode as the sampling event's (the same sample_type), with
 * a short user stack: a thread leaves its CPU in a system call, whose
 * wrapper's caller is the first words of the stack (bench/offcpu-overhead.sh).
 * Its cost is per switch, so a suite that switches thousands of times a
 * second pays for every one: above `offcpu_max` switch-outs a second of a
 * CPU, the reader raises the event's period (one in N recorded, each
 * sample's period saying N), and lowers it again when the rate falls;
 * the others' time still counts whole, from the switch records
 * (attribute/offcpu.c).
 * Inherited events cannot be re-armed from here; they sample at that rate
 * by the kernel's frequency mode instead, which is coarser.
 */

#include "record_int.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct ring {
	int fd;
	int cpu;
	bool sideband;
	bool offcpu;          /* the context-switch event's (see above) */
	uint64_t period;      /* offcpu: its sampling period now */
	uint64_t win_start, win_samples, win_bytes; /* offcpu: the rate's window */
	void *base;
	size_t len;   /* mapping length */
	size_t size;  /* data area size, a power of two */
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	uint64_t head;        /* data_head as this drain took it */
	uint8_t *copy;        /* side-band: its new records, when they wrap */
};

typedef TF_VEC(int) int_vec;

/* A side-band ring's new records in one drain, read in time order with the
 * other CPUs' (tf_perf_drain). */
struct sb_run {
	struct ring *r;
	uint8_t *recs;
	size_t len, off;
	uint64_t time;        /* of the record at off */
};

struct tf_perf {
	TF_VEC(struct ring) rings;
	uint64_t drain_within; /* ns: how soon a sampling ring must be read */
	bool thread_counts;   /* inherit_stat: the kernel reports each thread's count */
	bool cgroup;          /* the events follow the command's cgroup */
	uint64_t thread_sum;  /* counts of the threads the kernel reported */
	uint8_t *scratch;   /* linear copy of new records that wrap around a ring */
	size_t scratch_len;
	struct sb_run *runs;  /* the side-band rings' new records, merged by time */
	tf_pyread *py;
	unsigned offcpu_max;  /* switch-outs a second per CPU, the cap */
	struct perf_event_attr attr; /* the sampling event's, as opened */
	bool offcpu_freq;     /* inherited: capped by the kernel's freq mode */
	bool offcpu_capped;   /* said so */
	tf_notice_fn notice;
	void *notice_ctx;
};

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu,
			    int group_fd, unsigned long flags)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group_fd, flags);
}

int tf_perf_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = 2;
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = 2;
		fclose(f);
	}
	return v;
}

/* Online CPUs, from /sys (e.g. "0-3,5"). */
static void online_cpus(int_vec *cpus)
{
	tf_buf b = TF_BUF_INIT;
	if (tf_file_read(&b, "/sys/devices/system/cpu/online") == 0) {
		const char *p = b.ptr;
		while (*p) {
			char *end;
			long a = strtol(p, &end, 10), z;
			if (end == p)
				break;
			z = a;
			p = end;
			if (*p == '-') {
				z = strtol(p + 1, &end, 10);
				p = end;
			}
			for (long c = a; c <= z; c++)
				tf_vec_push(cpus, (int)c);
			if (*p == ',')
				p++;
			else
				break;
		}
	}
	tf_buf_free(&b);
	if (!cpus->n) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		for (long c = 0; c < (n > 0 ? n : 1); c++)
			tf_vec_push(cpus, (int)c);
	}
}

/*
 * Two events per CPU: the sampling event, and a dummy software event that
 * carries the side-band (mmap, comm, fork, exit). Neither wakes the reader
 * for a record (the side-band signals when half full, tf_perf_signal): a
 * wake-up is an interrupt to the reader's CPU, and one per exec and per
 * mmap cost a process of a millisecond a fifth of its time here. The
 * reader drains on a timer instead, every 10 ms while processes start
 * (record.c): reading an exec's record soon is what lets us read its
 * /proc/PID/cmdline before a short-lived process is gone, and pin its
 * binary before a runner deletes it (`go test` does) where the file
 * cannot be held from the exec itself (execfiles.c).
 */
static void fill_attr(struct perf_event_attr *a, const tf_perf_opts *o, bool hw,
		      tf_event ev, bool kernel, tf_spool_layout *layout)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (hw) {
		a->type = PERF_TYPE_HARDWARE;
		a->config = ev == TF_EVENT_CYCLES ? PERF_COUNT_HW_CPU_CYCLES
						  : PERF_COUNT_HW_INSTRUCTIONS;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = PERF_COUNT_SW_CPU_CLOCK;
	}
	a->freq = 1;
	a->sample_freq = o->freq;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	if (o->callgraph != TF_CALLGRAPH_FP) {
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = TF_REGS_MASK;
		a->sample_stack_user = o->stack_bytes;
	}
	a->sample_id_all = 1;
	a->inherit = 1;
	/* every inherited thread's exact count of a hardware event, in a
	 * PERF_RECORD_READ when it exits: what a test process cost, however
	 * few samples it got. A time event's cost comes from the switches
	 * below instead, so it does without (the counts cost every exit and
	 * every context swap between a parent and its child) */
	a->inherit_stat = hw;
	a->disabled = 1;
	a->enable_on_exec = 1;
	a->exclude_kernel = !kernel;
	a->exclude_callchain_kernel = !kernel;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* the reader drains on its own pace (record.c), which is quick while
	 * a Python process lives (see pyread.c); no wake-up per sample */
	a->watermark = 1;
	layout->sample_type = a->sample_type;
	layout->regs_mask = a->sample_regs_user;
	layout->sample_id_all = true;
}

static void fill_sideband_attr(struct perf_event_attr *a, const struct perf_event_attr *main)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_DUMMY;
	/* same sample_type: side-band records end in the same sample_id */
	a->sample_type = main->sample_type;
	a->sample_regs_user = main->sample_regs_user;
	a->sample_id_all = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	/* and every moment a thread goes on or off a CPU: its CPU time, to
	 * the nanosecond, whatever the kernel does with the counters of
	 * threads that share a parent (see the attributor). Here, not on the
	 * sampling event: its ring then holds samples alone, which come at
	 * most at the sampling rate (tf_perf_drain_within) */
	a->context_switch = 1;
	a->inherit = 1;
	a->disabled = 1;
	a->enable_on_exec = 1;
	a->exclude_kernel = main->exclude_kernel;
	a->exclude_hv = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* wake the reader when half full, like the sampling event's ring */
}

/* The user stack an off-CPU sample copies: a thread waits in a system
 * call, whose wrapper (and the few libc frames around it) are at the top
 * of the stack; the frame pointers go on from there (attribute/build.c). */
#define OFFCPU_STACK_BYTES 512
/* The ring of the off-CPU event: 1 MiB of 4 KiB pages, half a second of
 * samples at the cap */
#define OFFCPU_RING_PAGES 256

static void fill_offcpu_attr(struct perf_event_attr *a, const struct perf_event_attr *main,
			     const tf_perf_opts *o)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a->sample_period = 1;
	/* the sampling event's layout, so that one decoder reads both */
	a->sample_type = main->sample_type;
	a->sample_regs_user = main->sample_regs_user;
	/* a software event with PERF_SAMPLE_PERIOD and a fixed period
	 * samples every switch whatever the period (the kernel's
	 * perf_swevent_event): the reader says the period instead */
	if (!main->inherit)
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
	if (a->sample_type & PERF_SAMPLE_STACK_USER)
		a->sample_stack_user = TF_MIN(o->stack_bytes, (unsigned)OFFCPU_STACK_BYTES);
	a->sample_id_all = 1;
	a->inherit = main->inherit;
	a->disabled = 1;
	a->enable_on_exec = main->enable_on_exec;
	a->exclude_kernel = main->exclude_kernel;
	a->exclude_callchain_kernel = main->exclude_callchain_kernel;
	a->exclude_hv = 1;
	a->exclude_guest = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	/* read on the reader's timer, like the sampling ring: a ring that
	 * signals (O_ASYNC) does so at every sample, not at its watermark
	 * (the kernel's __perf_event_overflow) */
	a->watermark = 1;
}

static void close_rings(tf_perf *p)
{
	for (size_t i = 0; i < p->rings.n; i++) {
		struct ring *r = &p->rings.v[i];
		if (r->base)
			munmap(r->base, r->len);
		if (r->fd >= 0)
			close(r->fd);
		free(r->copy);
	}
	p->rings.n = 0;
}

/* Try one rung: open an event on every online CPU. Returns 0 or -errno of
 * the first refusal. */
static int open_events(tf_perf *p, const tf_perf_opts *o, bool hw, tf_event ev,
		       bool kernel, tf_spool_layout *layout, const int_vec *cpus, bool cg)
{
	struct perf_event_attr attr, side;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC | (cg ? PERF_FLAG_PID_CGROUP : 0);
	pid_t pid = cg ? o->cgroup_fd : o->pid;

	fill_attr(&attr, o, hw, ev, kernel, layout);
	fill_sideband_attr(&side, &attr);
	if (cg) {
		/* per CPU, enabled once open: the command is held until then.
		 * The switch records are then the CPU's (PERF_RECORD_SWITCH_CPU_WIDE),
		 * written at the switches of the cgroup's threads alone */
		attr.inherit = side.inherit = 0;
		attr.enable_on_exec = side.enable_on_exec = 0;
		attr.inherit_stat = 0;
	}
	p->thread_counts = attr.inherit_stat;
	p->cgroup = cg;
	p->attr = attr;
	for (size_t i = 0; i < cpus->n; i++) {
		long fd = perf_event_open(&attr, pid, cpus->v[i], -1, flags);
		if (fd < 0) {
			int err = errno;
			if (err == ENODEV && i > 0)
				continue; /* a CPU went offline */
			close_rings(p);
			return -err;
		}
		struct ring r = { .fd = (int)fd, .cpu = cpus->v[i] };
		tf_vec_push(&p->rings, r);
		fd = perf_event_open(&side, pid, cpus->v[i], -1, flags);
		if (fd < 0) {
			int err = errno;
			close_rings(p);
			return -err;
		}
		struct ring sr = { .fd = (int)fd, .cpu = cpus->v[i], .sideband = true };
		tf_vec_push(&p->rings, sr);
	}
	return 0;
}

/* Try one rung: by the command's cgroup where it has one and may (CPU-wide
 * events need perf_event_paranoid <= 0 or CAP_PERFMON), else inherited. */
static int open_rung(tf_perf *p, const tf_perf_opts *o, bool hw, tf_event ev,
		     bool kernel, tf_spool_layout *layout, const int_vec *cpus)
{
	if (o->cgroup_fd >= 0 && !hw && open_events(p, o, hw, ev, kernel, layout, cpus, true) == 0)
		return 0;
	return open_events(p, o, hw, ev, kernel, layout, cpus, false);
}

/* The off-CPU event on every CPU the sampling event is on, as it follows
 * the command (cgroup or inherited). Returns 0 or -errno of the first
 * refusal, with no off-CPU ring left open. */
static int open_offcpu(tf_perf *p, const tf_perf_opts *o, tf_spool_layout *layout)
{
	struct perf_event_attr a;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC | (p->cgroup ? PERF_FLAG_PID_CGROUP : 0);
	pid_t pid = p->cgroup ? o->cgroup_fd : o->pid;
	size_t n = p->rings.n;

	fill_offcpu_attr(&a, &p->attr, o);
	layout->switch_sample_type = a.sample_type;
	if (!p->cgroup) {
		/* inherited copies cannot be re-armed by the reader: the
		 * kernel keeps them near the cap itself */
		a.freq = 1;
		a.sample_freq = p->offcpu_max;
		p->offcpu_freq = true;
	}
	for (size_t i = 0; i < n; i++) {
		if (p->rings.v[i].sideband)
			continue;
		long fd = perf_event_open(&a, pid, p->rings.v[i].cpu, -1, flags);
		if (fd < 0) {
			int err = errno;
			while (p->rings.n > n) {
				close(p->rings.v[p->rings.n - 1].fd);
				p->rings.n--;
			}
			return -err;
		}
		struct ring r = { .fd = (int)fd, .cpu = p->rings.v[i].cpu, .offcpu = true,
				  .period = 1 };
		tf_vec_push(&p->rings, r);
	}
	return 0;
}

static const char *refusal(int err)
{
	switch (err) {
	case EACCES:
	case EPERM:
		return "permission denied";
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		return "not supported by this machine";
	case ENOSYS:
		return "perf_event_open is not available (blocked by seccomp or not built in)";
	default:
		return strerror(err);
	}
}

static bool is_perm(int err)
{
	return err == EACCES || err == EPERM || err == ENOSYS;
}

static bool is_unsupported(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == ENODEV;
}

/* The largest sample of a ring: its fixed fields, a callchain the kernel
 * cuts at 127 frames (plus its context markers), the registers and the
 * stack copy. */
static uint64_t sample_bytes(const tf_perf_opts *o, bool offcpu)
{
	uint64_t bytes = 64 + 8 * (127 + 8);
	if (o->callgraph != TF_CALLGRAPH_FP)
		bytes += 16 + 8 * (uint64_t)__builtin_popcountll(TF_REGS_MASK) +
			 (offcpu ? TF_MIN(o->stack_bytes, (unsigned)OFFCPU_STACK_BYTES) : o->stack_bytes);
	return bytes;
}

#define RING_PAGES_MAX 4096                  /* 16 MiB a CPU */
#define RINGS_BYTES_MAX (256ULL << 20)       /* over all CPUs */

static int map_rings(tf_perf *p, const tf_perf_opts *o)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), cpus = 0;
	/* room for ~1 s of samples per CPU between drains at the default
	 * rate, with stacks; at a higher rate, for a quarter of a second of
	 * the largest samples: the reader, woken when a ring is a quarter
	 * full, may itself wait that long on a busy machine (4999 Hz of
	 * Python stacks, 44 MB/s, lost 4% of the samples from 2 MiB rings) */
	size_t pages = o->callgraph == TF_CALLGRAPH_FP ? 128 : 512;
	uint64_t want = sample_bytes(o, false) * (o->freq ? o->freq : TF_DEFAULT_FREQ) / 4;

	for (size_t i = 0; i < p->rings.n; i++)
		cpus += !p->rings.v[i].sideband && !p->rings.v[i].offcpu;
	size_t most = TF_MAX((size_t)(RINGS_BYTES_MAX / page / TF_MAX(cpus, (size_t)1)), pages);
	while ((uint64_t)pages * page < want && pages * 2 <= TF_MIN(most, (size_t)RING_PAGES_MAX))
		pages *= 2;

	for (size_t i = 0; i < p->rings.n; i++) {
		struct ring *r = &p->rings.v[i];
		for (size_t n = r->sideband ? 64 : r->offcpu ? OFFCPU_RING_PAGES : pages;; n /= 2) {
			size_t len = (n + 1) * page;
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
			if (m != MAP_FAILED) {
				r->base = m;
				r->len = len;
				r->size = n * page;
				r->meta = m;
				r->data = (uint8_t *)m + page;
				break;
			}
			if ((errno != EPERM && errno != ENOMEM) || n <= 8)
				return tf_error_set_errno(TF_ERROR,
					"cannot map the perf ring buffer of cpu %d "
					"(see /proc/sys/kernel/perf_event_mlock_kb)", r->cpu);
		}
		if (r->size > p->scratch_len)
			p->scratch_len = r->size;
		/* a CPU samples at most `freq` times a second of its time:
		 * read its ring while it is a quarter full */
		if (!r->sideband) {
			uint64_t bytes = sample_bytes(o, r->offcpu);
			/* off-CPU: a burst above the cap comes before the
			 * reader re-arms the event: read at four times its pace */
			uint64_t rate = r->offcpu ? 4ULL * p->offcpu_max : o->freq ? o->freq : 1;
			uint64_t ns = r->size / 4 * 1000000000ULL / (bytes * rate);
			if (!p->drain_within || ns < p->drain_within)
				p->drain_within = ns;
		}
	}
	p->scratch = tf_xmalloc(p->scratch_len);
	p->runs = tf_xcalloc(p->rings.n, sizeof(*p->runs));
	return 0;
}

int tf_perf_open(tf_perf **out, const tf_perf_opts *o, tf_recording *rec)
{
	int_vec cpus = { 0 };
	tf_perf *p = tf_xcalloc(1, sizeof(*p));
	tf_event want = o->event;
	/* wall time is CPU time and the time waited: the CPU's clock and the
	 * off-CPU event, which it cannot do without */
	bool wall = want == TF_EVENT_WALL;
	tf_offcpu offcpu = wall ? TF_OFFCPU_ON : o->offcpu;

	p->py = o->py;
	p->offcpu_max = o->offcpu_max ? o->offcpu_max : TF_OFFCPU_MAX_RATE;
	p->notice = o->notice;
	p->notice_ctx = o->notice_ctx;
	if (wall)
		want = TF_EVENT_CPU_CLOCK;
	bool try_hw = want == TF_EVENT_AUTO || want == TF_EVENT_INSTRUCTIONS ||
		      want == TF_EVENT_CYCLES;
	tf_event hw_ev = want == TF_EVENT_CYCLES ? TF_EVENT_CYCLES : TF_EVENT_INSTRUCTIONS;
	int paranoid = tf_perf_paranoid();
	int err = 0, hw_err = 0, kern_err = 0;
	bool kernel = false;
	tf_event got = TF_EVENT_CPU_CLOCK;
	int rc = 0;

	*out = NULL;
	online_cpus(&cpus);
	if (try_hw) {
		err = open_rung(p, o, true, hw_ev, true, &rec->layout, &cpus);
		if (err && is_perm(-err)) {
			kern_err = -err;
			err = open_rung(p, o, true, hw_ev, false, &rec->layout, &cpus);
		} else if (!err) {
			kernel = true;
		}
		if (!err) {
			got = hw_ev;
			goto opened;
		}
		hw_err = -err;
	}
	err = open_rung(p, o, false, TF_EVENT_CPU_CLOCK, true, &rec->layout, &cpus);
	if (!err) {
		kernel = true;
	} else if (is_perm(-err) || is_unsupported(-err)) {
		if (!kern_err)
			kern_err = -err;
		err = open_rung(p, o, false, TF_EVENT_CPU_CLOCK, false, &rec->layout, &cpus);
	}
	if (err) {
		int e = -err;
		if (is_perm(e))
			rc = tf_error_set(TF_EPERM,
				"perf_event_open refused: %s (perf_event_paranoid=%d); fix: "
				"sudo sysctl kernel.perf_event_paranoid=1, or in Docker "
				"--cap-add PERFMON (or a seccomp profile allowing perf_event_open), "
				"or use --sampler ptrace", refusal(e), paranoid);
		else
			rc = tf_error_set(TF_EUNSUPPORTED, "perf_event_open failed: %s", refusal(e));
		goto fail;
	}
	got = TF_EVENT_CPU_CLOCK;

opened:
	rec->info.event = got;
	rec->info.kernel = kernel;
	snprintf(rec->info.rung, sizeof(rec->info.rung), "perf %s %s", tf_event_name(got),
		 kernel ? "kernel+user" : "user-only");
	if (hw_err && want != TF_EVENT_AUTO)
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_WARN,
				 "%s: %s; sampling cpu-clock instead", tf_event_name(hw_ev),
				 refusal(hw_err));
	else if (hw_err)
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_VERBOSE,
				 "no hardware counters (%s: %s): sampling cpu-clock",
				 tf_event_name(hw_ev), refusal(hw_err));
	if (!kernel && kern_err)
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_INFO,
				 "kernel samples refused (perf_event_paranoid=%d): recording user "
				 "space only; fix: sudo sysctl kernel.perf_event_paranoid=1", paranoid);
	if (offcpu != TF_OFFCPU_OFF) {
		err = open_offcpu(p, o, &rec->layout);
		rec->info.offcpu = err == 0;
		rec->info.offcpu_period_max = err == 0;
		if (err) {
			snprintf(rec->info.offcpu_why, sizeof(rec->info.offcpu_why),
				 "the context-switch event was refused: %s", refusal(-err));
			if (offcpu == TF_OFFCPU_ON) {
				rc = tf_error_set(is_perm(-err) ? TF_EPERM : TF_EUNSUPPORTED,
						  "off-CPU time: %s", rec->info.offcpu_why);
				goto fail;
			}
			tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_VERBOSE,
					 "no off-CPU time: %s", rec->info.offcpu_why);
		}
	}
	rc = map_rings(p, o);
	if (rc)
		goto fail;
	for (size_t i = 0; p->cgroup && i < p->rings.n; i++)
		if (ioctl(p->rings.v[i].fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
			rc = tf_error_set_errno(TF_EUNSUPPORTED, "cannot enable the events");
			goto fail;
		}
	tf_vec_free(&cpus);
	*out = p;
	return 0;
fail:
	tf_vec_free(&cpus);
	tf_perf_close(p);
	return rc;
}

/*
 * The reader does not poll the descriptors: the kernel wakes a perf fd's
 * pollers whenever one of the threads it follows exits (so that poll can
 * see the last one go), and a reader woken once per process was
 * scheduled onto a CPU the suite wanted at every exit (500 processes of a
 * millisecond: 1.20 times their bare time against perf record's 1.14).
 * A side-band ring, whose records come in bursts (a process is a dozen),
 * signals instead (O_ASYNC): the kernel sends it when the ring crosses its
 * watermark and not at an exit, to this thread alone. A sampling ring
 * would signal at every sample; it fills no faster than the sampling rate
 * allows, so the reader's timer reads it in time (tf_perf_drain_within).
 */
int tf_perf_signal(tf_perf *p, int sig)
{
	struct f_owner_ex owner = { F_OWNER_TID, (pid_t)syscall(SYS_gettid) };

	for (size_t i = 0; i < p->rings.n; i++) {
		if (!p->rings.v[i].sideband)
			continue;
		int fd = p->rings.v[i].fd, fl = fcntl(fd, F_GETFL);
		if (fl < 0 || fcntl(fd, F_SETOWN_EX, &owner) != 0 ||
		    fcntl(fd, F_SETSIG, sig) != 0 || fcntl(fd, F_SETFL, fl | O_ASYNC) != 0)
			return tf_error_set_errno(TF_ERROR, "cannot ask perf for a signal");
	}
	return 0;
}

bool tf_perf_by_cgroup(const tf_perf *p)
{
	return p && p->cgroup;
}

uint64_t tf_perf_drain_within(const tf_perf *p)
{
	return p->drain_within;
}

size_t tf_perf_pollfds(const tf_perf *p, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < p->rings.n && n < max; i++) {
		fds[n].fd = p->rings.v[i].fd;
		fds[n].events = POLLIN;
		fds[n].revents = 0;
		n++;
	}
	return n;
}

/* The Python stack of a sample's thread, read as the sample arrives. */
static void py_sample(tf_perf *p, tf_recording *rec, const struct perf_event_header *h)
{
	tf_rec_event ev;
	if (tf_spool_decode(&rec->layout, h, &ev) > 0 && ev.type == TF_REC_SAMPLE)
		tf_pyread_sample(p->py, ev.pid, ev.tid, ev.time);
}

/* Look at the records of one copied chunk: count, and pass side-band on. */
static void scan(tf_perf *p, tf_recording *rec, struct ring *r, uint8_t *buf, size_t len,
		 tf_live_fn live, void *live_ctx, uint64_t *processes)
{
	size_t off = 0;
	while (off + sizeof(struct perf_event_header) <= len) {
		struct perf_event_header *h = (void *)(buf + off);
		if (h->size < sizeof(*h) || off + h->size > len)
			break;
		rec->info.records++;
		if (r && r->offcpu && h->type == PERF_RECORD_SAMPLE) {
			/* the spool keeps it apart from the CPU's samples */
			h->type = TF_SPOOL_SWITCH_SAMPLE;
			rec->info.offcpu_samples++;
			r->win_samples++;
			r->win_bytes += h->size;
			off += h->size;
			continue;
		}
		switch (h->type) {
		case PERF_RECORD_SAMPLE:
			rec->info.samples++;
			if (p->py)
				py_sample(p, rec, h);
			break;
		case PERF_RECORD_READ: {
			tf_rec_event ev;
			if (tf_spool_decode(&rec->layout, h, &ev) > 0) {
				p->thread_sum += ev.thread_cost.count;
				rec->info.thread_costs++;
			}
			break;
		}
		case PERF_RECORD_LOST:
		case PERF_RECORD_LOST_SAMPLES:
		case PERF_RECORD_THROTTLE:
		case PERF_RECORD_MMAP2:
		case PERF_RECORD_EXIT:
		case PERF_RECORD_FORK:
		case PERF_RECORD_COMM: {
			tf_rec_event ev;
			if (tf_spool_decode(&rec->layout, h, &ev) <= 0)
				break;
			if (ev.type == TF_REC_LOST)
				rec->info.lost += ev.lost.count;
			else if (ev.type == TF_REC_THROTTLE)
				rec->info.throttled++;
			else if (ev.type == TF_REC_FORK && ev.pid != ev.fork.ppid && processes)
				(*processes)++;
			if (live && ev.type != TF_REC_LOST && ev.type != TF_REC_THROTTLE)
				live(live_ctx, &ev);
			break;
		}
		default:
			break;
		}
		off += h->size;
	}
}

/*
 * The cap (see the head comment): every 50 ms, the switch-outs a CPU saw
 * (samples times their period) against `offcpu_max` a second; the period
 * that brings them under it, changed when it doubles or halves, so that a
 * steady rate keeps one period.
 */
#define OFFCPU_WINDOW_NS (20 * 1000 * 1000ULL)
#define OFFCPU_PERIOD_MAX (1ULL << 20)

static void offcpu_pace(tf_perf *p, tf_recording *rec, struct ring *r)
{
	uint64_t now = tf_now_ns();

	if (p->offcpu_freq)
		return;
	if (!r->win_start) {
		r->win_start = now;
		return;
	}
	/* a window, or sooner a burst that filled a quarter of the ring */
	if (now - r->win_start < OFFCPU_WINDOW_NS &&
	    (now - r->win_start < OFFCPU_WINDOW_NS / 20 || r->win_bytes < r->size / 4))
		return;
	double rate = (double)r->win_samples * (double)r->period * 1e9 / (double)(now - r->win_start);
	uint64_t want = (uint64_t)(rate / p->offcpu_max) + 1;
	want = TF_MIN(want, OFFCPU_PERIOD_MAX);
	r->win_start = now;
	r->win_samples = 0;
	r->win_bytes = 0;
	if (want <= r->period && want * 2 > r->period)
		return;
	if (want > r->period && want < r->period * 2 && r->period > 1)
		return;
	/* the ring was read just now: what it gets from here on stands
	 * for `want` switch-outs a sample */
	struct {
		uint32_t cpu, pad;
		uint64_t time, period;
	} mark = { (uint32_t)r->cpu, 0, tf_now_ns(), want };
	if (ioctl(r->fd, PERF_EVENT_IOC_PERIOD, &want) != 0)
		return;
	tf_spool_append_own(rec->spool, TF_SPOOL_OFFCPU_PERIOD, &mark, sizeof(mark), NULL, 0);
	r->period = want;
	if (want > rec->info.offcpu_period_max)
		rec->info.offcpu_period_max = want;
	if (want > 1 && !p->offcpu_capped) {
		p->offcpu_capped = true;
		/* said when the command has ended (run/record.c holds what the
		 * recorder says): hence "from then on" */
		tf_record_notice(p->notice, p->notice_ctx, TF_NOTICE_INFO,
				 "off-CPU: %.0f switch-outs a second on cpu %d, above --off-cpu-max %u: "
				 "one in %llu recorded with its stack from then on (the others' time "
				 "counts whole)", rate, r->cpu, p->offcpu_max, (unsigned long long)want);
	}
}

/* The new records of a ring up to the head this drain took, in one piece:
 * in place, or copied to `*copy` (made the ring's size when NULL) where
 * they wrap around the ring's end. */
static uint8_t *ring_records(struct ring *r, uint8_t **copy, uint64_t *avail)
{
	uint64_t tail = r->meta->data_tail;
	size_t off, first;

	*avail = r->head - tail;
	if (*avail > r->size)
		*avail = r->size; /* cannot happen with a well-behaved kernel */
	off = (size_t)(tail & (r->size - 1));
	first = TF_MIN((size_t)*avail, r->size - off);
	if (first == *avail && !r->offcpu)
		return r->data + off;
	/* ... and the off-CPU ring's: scan marks its samples as such, which
	 * the ring's pages (read-only past its first: a write there is a
	 * SIGBUS) cannot take */
	if (!*copy)
		*copy = tf_xmalloc(r->size);
	memcpy(*copy, r->data + off, first);
	memcpy(*copy + first, r->data, (size_t)*avail - first);
	return *copy;
}

static void ring_release(struct ring *r, uint64_t avail)
{
	/* release: the kernel may reuse the space only once it is read */
	__atomic_store_n(&r->meta->data_tail, r->meta->data_tail + avail, __ATOMIC_RELEASE);
}

/* Step a run to its next whole record and take its time; a torn record
 * ends the run (scan stops at it too). */
static void sb_settle(struct sb_run *run, size_t back)
{
	const struct perf_event_header *h = (const void *)(run->recs + run->off);

	if (run->off + sizeof(*h) > run->len || h->size < sizeof(*h) ||
	    run->off + h->size > run->len) {
		run->off = run->len;
		return;
	}
	run->time = 0;
	if (back && h->size >= sizeof(*h) + back)
		memcpy(&run->time, (const uint8_t *)h + h->size - back, sizeof(run->time));
}

/*
 * Read every ring's new records. Each CPU has its own rings, so a process
 * that execs on one CPU and maps its interpreter on another has its
 * records in two rings; read one ring after the other, the mapping could
 * come before the exec it follows, and whatever acts on them as they come
 * (the Python reader, the pinning of executables, the cmdline of an exec)
 * would see a process forget what it had just mapped. So the side-band
 * records of all rings are passed on in time order, merged as perf's
 * ordered events are, and before any sample: the heads are taken first,
 * the sampling rings' before the side-band's, so that every sample read
 * here comes after whatever its process did before it. What the kernel
 * writes between two drains is in the next one; the one window left is a
 * record stamped before a head was taken and written after it (the
 * kernel's few instructions between the two).
 * The spool keeps each ring's records as they were (the replay sorts).
 */
int tf_perf_drain(tf_perf *p, tf_recording *rec, tf_live_fn live, void *live_ctx,
		  uint64_t *processes)
{
	size_t back = tf_spool_id_time_back(&rec->layout), nruns = 0;
	int rc = 0;

	/* the sampling rings' heads, then the side-band's; acquire pairs
	 * with the kernel's store of data_head */
	for (int sideband = 0; sideband < 2; sideband++)
		for (size_t i = 0; i < p->rings.n; i++)
			if (p->rings.v[i].sideband == sideband)
				p->rings.v[i].head = __atomic_load_n(&p->rings.v[i].meta->data_head,
								     __ATOMIC_ACQUIRE);

	for (size_t i = 0; i < p->rings.n; i++) {
		struct ring *r = &p->rings.v[i];
		uint64_t avail;
		if (!r->sideband || r->head == r->meta->data_tail)
			continue;
		struct sb_run *run = &p->runs[nruns++];
		run->r = r;
		run->recs = ring_records(r, &r->copy, &avail);
		run->len = (size_t)avail;
		run->off = 0;
		sb_settle(run, back);
	}
	for (;;) {
		struct sb_run *first = NULL;
		for (size_t i = 0; i < nruns; i++)
			if (p->runs[i].off < p->runs[i].len &&
			    (!first || p->runs[i].time < first->time))
				first = &p->runs[i];
		if (!first)
			break;
		struct perf_event_header *h = (void *)(first->recs + first->off);
		scan(p, rec, first->r, (uint8_t *)h, h->size, live, live_ctx, processes);
		first->off += h->size;
		sb_settle(first, back);
	}
	for (size_t i = 0; i < nruns; i++) {
		int arc = tf_spool_append(rec->spool, p->runs[i].recs, p->runs[i].len);
		ring_release(p->runs[i].r, p->runs[i].len);
		if (!rc)
			rc = arc;
	}
	if (rc)
		return rc;

	for (size_t i = 0; i < p->rings.n; i++) {
		struct ring *r = &p->rings.v[i];
		uint64_t avail;
		if (r->sideband || r->head == r->meta->data_tail)
			continue;
		/* the records are read in place, unless they wrap around the
		 * ring's end: a copy of every record first was a fifth of the
		 * reader's CPU while the suite runs (500 processes at 249 Hz) */
		uint8_t *recs = ring_records(r, &p->scratch, &avail);
		scan(p, rec, r, recs, (size_t)avail, live, live_ctx, processes);
		rc = tf_spool_append(rec->spool, recs, (size_t)avail);
		ring_release(r, avail);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < p->rings.n; i++)
		if (p->rings.v[i].offcpu)
			offcpu_pace(p, rec, &p->rings.v[i]);
	return 0;
}

int tf_perf_finish(tf_perf *p, tf_recording *rec, uint32_t root_pid, uint64_t time)
{
	uint64_t total = 0;

	if (!p->thread_counts)
		return 0; /* costs come from the context switches */
	/*
	 * An event's count includes what its inherited children handed back
	 * when they exited (each in a PERF_RECORD_READ): what is left is one
	 * thread's, the one that held the events we opened when it ended.
	 * That is the command's main thread, unless the kernel's context
	 * switch optimisation swapped contexts between a parent and a child
	 * (ctest and a test it waits for): then that child ended with our
	 * events and no READ, and the parent reported its own count in READs.
	 * The remainder is stamped with the root's pid; the reader gives it to
	 * the one ended thread that has no count (attributor.c).
	 */
	for (size_t i = 0; i < p->rings.n; i++) {
		const struct ring *r = &p->rings.v[i];
		uint64_t v;
		if (r->sideband || r->offcpu)
			continue;
		if (read(r->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return 0; /* no count: the main thread stays unmeasured */
		total += v;
	}
	if (total < p->thread_sum)
		return 0;
	struct {
		uint32_t pid, tid;
		uint64_t time, count;
		uint32_t remainder, pad;
	} fixed = { root_pid, root_pid, time, total - p->thread_sum, 1, 0 };
	rec->info.thread_costs++;
	return tf_spool_append_own(rec->spool, TF_SPOOL_THREAD_COST, &fixed, sizeof(fixed),
				   NULL, 0);
}

void tf_perf_close(tf_perf *p)
{
	if (!p)
		return;
	close_rings(p);
	tf_vec_free(&p->rings);
	free(p->scratch);
	free(p->runs);
	free(p);
}
