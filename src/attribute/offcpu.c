/*
 * offcpu.c - the time each test waited, from the moments its threads left
 * a CPU (TF_REC_OFFCPU: the thread's stack then, perf.c) and came back
 * (the switch records).
 *
 * An interval is a thread's switch-out to its next switch-in, by the
 * switch records, the moments its time on a CPU is measured from and to
 * (attributor.c's on_switch): its CPU and its waits then add up to its
 * wall time. The switch-out sample, which the kernel takes just before
 * the record, gives the stack and the reason; the kernel's work on it in
 * between is the recorder's, neither the thread's CPU time (on_switch
 * ends that at the sample) nor a wait. One the
 * kernel marks as a preemption is no wait (the thread was runnable; the
 * time is the machine's, not the test's) and is dropped. Its reason is
 * read from the stack (tf_waits_reason): the kernel's frames where they
 * were recorded (do_nanosleep, futex_wait, io_schedule, do_wait, ...),
 * else the system call's wrapper in libc.
 *
 * A wait for the disk under a page fault or a read through the page cache
 * (filemap_fault, filemap_read, readahead, a swap-in) is a page-in: the
 * page was not in the cache. That is the cache's state more than the
 * test's code: the first run after a build, a checkout or another job's
 * memory pressure reads a program's pages from disk once (t0920's
 * case_036 waited 60 ms in _start on a README-only branch, 0 in the
 * base), the next run not at all. Its time is counted and labelled like
 * any wait, and said apart in the test's metadata (offcpu_pagein_ns), so
 * that the comparison can tell it from a wait the code makes
 * (compare/waits.c).
 *
 * A wait on a kernel lock (an rwsem) while a program or a library loads
 * (the kernel's exec, the dynamic loader's _dl_ functions) is much the
 * same: the lock is a file's, which every process that maps the file takes
 * (the C library's, the loader's), and the test waits while another
 * process, preempted on a busy machine, holds it; no code of the test has
 * run yet. In 1,600 starts of a program at a load of 12, the 5 waits of
 * the kind (0.09 to 10.4 ms, in elf_load, _dl_map_object and
 * _dl_protect_relro) were all on a file's mapping lock (i_mmap, under
 * __mmap_region and vma_prepare), and a base that waited 6.7 ms in one
 * made t0251's pipe test 34 ms slower, not its 40. Those are labelled
 * load and go with the page-ins (offcpu_pagein_ns).
 *
 * Waits are attributed by test like CPU samples, and counted so that a
 * test's wall time is its CPU time plus its waits, each moment once. A
 * wait that outlasts its marked test is the test's until its end marker
 * only (a pytest-xdist worker's last test of a batch waited a second more
 * for the next batch, its 54 ms test "regressed by waiting"); the rest is
 * left apart:
 *
 *  - a wait for the thread's own child processes or threads (waitpid,
 *    pthread_join, Go's runtime stopping its other threads for the GC) is
 *    not counted: their CPU and their waits are already there. So is any
 *    wait of the lead while a process the test started runs (a marked
 *    test's subprocess.run polls the pipes of the program it tests): that
 *    program's CPU and waits are the test's, and the lead's wait for it
 *    would count its time twice, and count the time a busy machine kept
 *    it from a CPU as the test's waiting;
 *  - the thread that runs the test (its lead: the program's main thread,
 *    the thread that wrote its begin marker, the thread whose stack names
 *    it) counts every other wait of its own: that is the test waiting;
 *  - any other thread of the test counts its waits only while the lead
 *    waits for its children or threads (or is gone): then the test's time
 *    is theirs. While the lead runs or waits on something of its own, the
 *    others' waits are off the test's critical path (a pool's idle
 *    workers, the thread that feeds a pipe the lead polls), and are left
 *    apart ("waiting on another thread of the test").
 *
 * A wait on a kernel lock (an rwsem) that starts while testflame reads the
 * process's memory through /proc (its arguments, TF_REC_PEEK) is
 * testflame's, and counts for no test: the read holds the process's mmap
 * lock, and a reader preempted with it held makes the dynamic loader's
 * mmap and mprotect wait until it runs again. In 40 recordings of 40
 * programs each at a load of 5 to 7, all 13 waits of the tests on their
 * process's own mmap lock (0.24 to 40 ms, under _dl_map_object and
 * _dl_protect_relro) started while testflame read that process's
 * arguments; a test that only burns CPU came out "regressed by waiting"
 * on one. Their time is said in the run's metadata (offcpu_recorder_ns).
 *
 * The lead's state over time is kept per test as the total time it spent
 * waiting for its own (S); another thread's wait from s to e counts
 * S(e) - S(s). Every interval's time is counted or apart, never both, and
 * a test's two totals go to its metadata (tf_attributor_add_wait).
 */
#include "attribute_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const reason_names[TF_WAIT_COUNT] = {
	[TF_WAIT_OTHER] = "other", [TF_WAIT_SLEEP] = "sleep", [TF_WAIT_LOCK] = "lock",
	[TF_WAIT_FUTEX] = "futex", [TF_WAIT_IO] = "io", [TF_WAIT_PAGEIN] = "page-in",
	[TF_WAIT_LOAD] = "load",
	[TF_WAIT_POLL] = "poll",
	[TF_WAIT_PIPE] = "pipe", [TF_WAIT_SOCKET] = "socket", [TF_WAIT_CHILD] = "child",
	[TF_WAIT_JOIN] = "join", [TF_WAIT_SIGNAL] = "signal", [TF_WAIT_STOPPED] = "stopped",
	[TF_WAIT_EXIT] = "exit",
};

const char *tf_wait_name(tf_wait_reason r)
{
	return (unsigned)r < TF_WAIT_COUNT ? reason_names[r] : "other";
}

typedef struct {
	const char *name;
	bool prefix;          /* a prefix of the function's name, else all of it */
	tf_wait_reason reason;
} name_rule;

/* Kernel functions a waiting thread's stack passes through, innermost
 * first in the order tested: the specific ones before the generic (a
 * poll's timeout sleeps in schedule_hrtimeout, a pipe read in a wait
 * queue). */
static const name_rule kernel_rules[] = {
	{ "do_task_dead", false, TF_WAIT_EXIT },
	{ "do_wait", false, TF_WAIT_CHILD }, { "kernel_wait", true, TF_WAIT_CHILD },
	{ "kernel_waitid", false, TF_WAIT_CHILD }, { "__do_sys_wait4", false, TF_WAIT_CHILD },
	/* a vfork's or posix_spawn's parent, held until its child execs */
	{ "wait_for_vfork_done", false, TF_WAIT_CHILD },
	{ "do_sys_poll", false, TF_WAIT_POLL }, { "do_poll", false, TF_WAIT_POLL },
	{ "do_select", false, TF_WAIT_POLL }, { "core_sys_select", false, TF_WAIT_POLL },
	{ "ep_poll", false, TF_WAIT_POLL }, { "do_epoll_wait", false, TF_WAIT_POLL },
	/* a pipe's read and write, which newer kernels (6.18) split by kind of pipe */
	{ "pipe_read", false, TF_WAIT_PIPE }, { "pipe_write", false, TF_WAIT_PIPE },
	{ "anon_pipe_read", false, TF_WAIT_PIPE }, { "anon_pipe_write", false, TF_WAIT_PIPE },
	{ "fifo_pipe_read", false, TF_WAIT_PIPE }, { "fifo_pipe_write", false, TF_WAIT_PIPE },
	{ "pipe_wait", true, TF_WAIT_PIPE }, { "wait_for_partner", false, TF_WAIT_PIPE },
	{ "unix_stream_", true, TF_WAIT_SOCKET }, { "unix_dgram_", true, TF_WAIT_SOCKET },
	{ "sk_wait_data", false, TF_WAIT_SOCKET }, { "tcp_recvmsg", true, TF_WAIT_SOCKET },
	{ "tcp_sendmsg", true, TF_WAIT_SOCKET }, { "inet_csk_accept", false, TF_WAIT_SOCKET },
	{ "sk_stream_wait", true, TF_WAIT_SOCKET }, { "__skb_wait_for_more", true, TF_WAIT_SOCKET },
	{ "io_schedule", true, TF_WAIT_IO }, { "folio_wait", true, TF_WAIT_IO },
	{ "wait_on_page", true, TF_WAIT_IO }, { "__wait_on_buffer", false, TF_WAIT_IO },
	{ "jbd2_", true, TF_WAIT_IO }, { "blk_", true, TF_WAIT_IO },
	{ "submit_bio_wait", false, TF_WAIT_IO }, { "file_write_and_wait", true, TF_WAIT_IO },
	{ "do_fsync", false, TF_WAIT_IO }, { "__x64_sys_fsync", false, TF_WAIT_IO },
	{ "__x64_sys_fdatasync", false, TF_WAIT_IO }, { "__x64_sys_sync", true, TF_WAIT_IO },
	{ "futex_wait", true, TF_WAIT_FUTEX }, { "__futex_wait", false, TF_WAIT_FUTEX },
	{ "futex_q_lock", false, TF_WAIT_FUTEX }, { "futex_lock_pi", false, TF_WAIT_FUTEX },
	{ "do_nanosleep", false, TF_WAIT_SLEEP }, { "hrtimer_nanosleep", false, TF_WAIT_SLEEP },
	{ "common_nsleep", false, TF_WAIT_SLEEP }, { "__x64_sys_nanosleep", false, TF_WAIT_SLEEP },
	{ "__x64_sys_clock_nanosleep", false, TF_WAIT_SLEEP }, { "msleep", true, TF_WAIT_SLEEP },
	{ "do_sigtimedwait", false, TF_WAIT_SIGNAL }, { "__x64_sys_pause", false, TF_WAIT_SIGNAL },
	{ "sigsuspend", false, TF_WAIT_SIGNAL }, { "__x64_sys_rt_sigsuspend", false, TF_WAIT_SIGNAL },
	{ "do_signal_stop", false, TF_WAIT_STOPPED }, { "ptrace_stop", false, TF_WAIT_STOPPED },
	{ NULL, false, TF_WAIT_OTHER },
};

/* Kernel functions that read a file's page into the page cache for a
 * fault or a read (or a page back from swap): an I/O wait under one of them
 * is a page-in (see the head comment). fsync's and writeback's waits go
 * through none of them. */
static const name_rule pagein_rules[] = {
	{ "filemap_fault", false, TF_WAIT_PAGEIN }, { "filemap_read", false, TF_WAIT_PAGEIN },
	{ "filemap_get_pages", false, TF_WAIT_PAGEIN },
	{ "filemap_update_page", false, TF_WAIT_PAGEIN },
	{ "filemap_splice_read", false, TF_WAIT_PAGEIN },
	{ "do_read_cache_", true, TF_WAIT_PAGEIN }, { "read_cache_", true, TF_WAIT_PAGEIN },
	{ "page_cache_sync_ra", false, TF_WAIT_PAGEIN },
	{ "page_cache_async_ra", false, TF_WAIT_PAGEIN },
	{ "page_cache_ra_", true, TF_WAIT_PAGEIN }, { "force_page_cache_ra", false, TF_WAIT_PAGEIN },
	{ "do_swap_page", false, TF_WAIT_PAGEIN }, { "swap_read_folio", false, TF_WAIT_PAGEIN },
	{ "swapin_readahead", false, TF_WAIT_PAGEIN }, { "swap_readpage", false, TF_WAIT_PAGEIN },
	{ "do_read_fault", false, TF_WAIT_PAGEIN }, { "__do_fault", false, TF_WAIT_PAGEIN },
	{ "exc_page_fault", false, TF_WAIT_PAGEIN },
	{ NULL, false, TF_WAIT_OTHER },
};

/* User functions: the system call wrappers of a libc (where no kernel
 * frame was recorded), and the calls whose futex is a wait for the
 * thread's own threads (pthread_join) or a lock. */
static const name_rule user_rules[] = {
	{ "pthread_join", true, TF_WAIT_JOIN }, { "__pthread_clockjoin", true, TF_WAIT_JOIN },
	{ "pthread_timedjoin", true, TF_WAIT_JOIN }, { "pthread_tryjoin", true, TF_WAIT_JOIN },
	{ "thrd_join", false, TF_WAIT_JOIN }, { "std::thread::join", true, TF_WAIT_JOIN },
	/* Go's runtime waiting for its other threads: to stop for the GC
	 * (stopTheWorldWithSema), to run a function each (forEachP), or to
	 * start the GC's workers; how long is how soon a busy machine gives
	 * them a CPU (go-cmp's TestDifferenceFuzz: 18 ms, then 59 ms a run on
	 * a README-only branch at a load of 20), and their time is theirs */
	{ "runtime.stopTheWorldWithSema", false, TF_WAIT_JOIN },
	{ "runtime.forEachP", false, TF_WAIT_JOIN },
	{ "runtime.gcBgMarkStartWorkers", false, TF_WAIT_JOIN },
	{ "pthread_mutex_lock", true, TF_WAIT_LOCK }, { "__pthread_mutex_lock", true, TF_WAIT_LOCK },
	{ "pthread_mutex_timedlock", true, TF_WAIT_LOCK }, { "__lll_lock_wait", true, TF_WAIT_LOCK },
	{ "pthread_rwlock_", true, TF_WAIT_LOCK }, { "__pthread_rwlock_", true, TF_WAIT_LOCK },
	{ "wait4", false, TF_WAIT_CHILD }, { "__wait4", false, TF_WAIT_CHILD },
	{ "waitpid", false, TF_WAIT_CHILD }, { "__waitpid", false, TF_WAIT_CHILD },
	{ "waitid", false, TF_WAIT_CHILD }, { "__waitid", false, TF_WAIT_CHILD },
	{ "vfork", false, TF_WAIT_CHILD }, { "__vfork", false, TF_WAIT_CHILD },
	{ "nanosleep", false, TF_WAIT_SLEEP }, { "__nanosleep", false, TF_WAIT_SLEEP },
	{ "clock_nanosleep", true, TF_WAIT_SLEEP }, { "__clock_nanosleep", true, TF_WAIT_SLEEP },
	{ "usleep", false, TF_WAIT_SLEEP }, { "sleep", false, TF_WAIT_SLEEP },
	{ "poll", false, TF_WAIT_POLL }, { "__poll", false, TF_WAIT_POLL },
	{ "ppoll", false, TF_WAIT_POLL }, { "select", false, TF_WAIT_POLL },
	{ "pselect", true, TF_WAIT_POLL }, { "epoll_wait", false, TF_WAIT_POLL },
	{ "epoll_pwait", true, TF_WAIT_POLL }, { "fsync", false, TF_WAIT_IO },
	{ "fdatasync", false, TF_WAIT_IO }, { "sync_file_range", false, TF_WAIT_IO },
	{ "syncfs", false, TF_WAIT_IO }, { "__futex_abstimed_wait", true, TF_WAIT_FUTEX },
	{ "futex_wait", true, TF_WAIT_FUTEX }, { "syscall", false, TF_WAIT_OTHER },
	{ NULL, false, TF_WAIT_OTHER },
};

static bool rule_match(const name_rule *r, const char *fn)
{
	return r->prefix ? strncmp(fn, r->name, strlen(r->name)) == 0 : strcmp(fn, r->name) == 0;
}

static const char *loc_function(const tf_profile *p, uint32_t loc, size_t line)
{
	const tf_location *l = &p->locations.v[loc];
	if (line >= l->nlines)
		return "";
	const tf_line *ln = &p->lines.v[l->lines_off + line];
	return tf_profile_str(p, p->functions.v[ln->function].name);
}

/* A stack of the kernel's exec or of the dynamic loader's (glibc's _dl_
 * functions, or a loader's file, ld-*: musl's). */
static bool loading(const tf_profile *p, const uint32_t *locs, size_t n, size_t nkernel)
{
	for (size_t i = 0; i < n; i++) {
		const tf_location *l = &p->locations.v[locs[i]];
		const char *fn = loc_function(p, locs[i], l->nlines ? l->nlines - 1 : 0);
		if (i < nkernel) {
			if (strcmp(fn, "load_elf_binary") == 0 || strcmp(fn, "bprm_execve") == 0)
				return true;
			continue;
		}
		if (strncmp(fn, "_dl_", 4) == 0)
			return true;
		if (l->mapping != TF_NO_MAPPING) {
			const char *f = tf_profile_str(p, p->mappings.v[l->mapping].filename);
			const char *base = strrchr(f, '/');
			if (strncmp(base ? base + 1 : f, "ld-", 3) == 0)
				return true;
		}
	}
	return false;
}

tf_wait_reason tf_waits_reason(const tf_profile *p, const uint32_t *locs, size_t n,
			       size_t nkernel)
{
	tf_wait_reason kernel = TF_WAIT_OTHER;

	for (size_t i = 0; i < nkernel && i < n && kernel == TF_WAIT_OTHER; i++) {
		const char *fn = loc_function(p, locs[i], 0);
		for (const name_rule *r = kernel_rules; r->name; r++)
			if (rule_match(r, fn)) {
				kernel = r->reason;
				break;
			}
	}
	/* the disk, for a page the cache did not hold */
	for (size_t i = 0; i < nkernel && i < n && kernel == TF_WAIT_IO; i++) {
		const char *fn = loc_function(p, locs[i], 0);
		for (const name_rule *r = pagein_rules; r->name; r++)
			if (rule_match(r, fn)) {
				kernel = TF_WAIT_PAGEIN;
				break;
			}
	}
	/* a kernel lock while the program or a library loads */
	if (kernel == TF_WAIT_OTHER && tf_waits_on_rwsem(p, locs, TF_MIN(nkernel, n)) &&
	    loading(p, locs, n, nkernel))
		return TF_WAIT_LOAD;
	/* the user frames say more of a futex (a join, a lock), and are all
	 * there is without kernel frames: the innermost that names a call */
	for (size_t i = nkernel; i < n; i++) {
		const tf_location *l = &p->locations.v[locs[i]];
		for (size_t k = 0; k < l->nlines; k++) {
			const char *fn = loc_function(p, locs[i], k);
			for (const name_rule *r = user_rules; r->name; r++) {
				if (!rule_match(r, fn))
					continue;
				if (r->reason == TF_WAIT_JOIN ||
				    (r->reason == TF_WAIT_LOCK && kernel == TF_WAIT_FUTEX))
					return r->reason;
				if (kernel == TF_WAIT_OTHER)
					return r->reason;
				if (kernel != TF_WAIT_FUTEX)
					return kernel;
				goto next; /* a futex: an outer frame may still say join */
			}
		}
next:
		if (i > nkernel + 8)
			break; /* a wait's cause is near its system call */
	}
	return kernel;
}

bool tf_waits_on_rwsem(const tf_profile *p, const uint32_t *locs, size_t nkernel)
{
	for (size_t i = 0; i < nkernel; i++)
		if (strncmp(loc_function(p, locs[i], 0), "rwsem_down_", 11) == 0)
			return true;
	return false;
}

tf_wait_reason tf_waits_syscall_reason(const char *syscall)
{
	static const struct {
		const char *name;
		tf_wait_reason reason;
	} calls[] = {
		{ "nanosleep", TF_WAIT_SLEEP }, { "clock_nanosleep", TF_WAIT_SLEEP },
		{ "futex", TF_WAIT_FUTEX }, { "wait4", TF_WAIT_CHILD }, { "waitid", TF_WAIT_CHILD },
		{ "vfork", TF_WAIT_CHILD },
		{ "poll", TF_WAIT_POLL }, { "ppoll", TF_WAIT_POLL }, { "select", TF_WAIT_POLL },
		{ "pselect6", TF_WAIT_POLL }, { "epoll_wait", TF_WAIT_POLL },
		{ "epoll_pwait", TF_WAIT_POLL }, { "epoll_pwait2", TF_WAIT_POLL },
		{ "fsync", TF_WAIT_IO }, { "fdatasync", TF_WAIT_IO }, { "sync", TF_WAIT_IO },
		{ "syncfs", TF_WAIT_IO }, { "sync_file_range", TF_WAIT_IO },
		{ "accept", TF_WAIT_SOCKET }, { "accept4", TF_WAIT_SOCKET },
		{ "recvfrom", TF_WAIT_SOCKET }, { "recvmsg", TF_WAIT_SOCKET },
		{ "connect", TF_WAIT_SOCKET }, { "pause", TF_WAIT_SIGNAL },
		{ "rt_sigsuspend", TF_WAIT_SIGNAL }, { "rt_sigtimedwait", TF_WAIT_SIGNAL },
		{ "stopped", TF_WAIT_STOPPED },
	};
	for (size_t i = 0; syscall && i < TF_ARRAY_SIZE(calls); i++)
		if (strcmp(syscall, calls[i].name) == 0)
			return calls[i].reason;
	return TF_WAIT_OTHER;
}

/* Waits for the thread's own children or threads: their time is theirs. */
static bool for_own(tf_wait_reason r)
{
	return r == TF_WAIT_CHILD || r == TF_WAIT_JOIN;
}

typedef struct {
	uint32_t tid, pid;
	bool open;             /* an interval is open */
	bool preempted;        /* ... and it is no wait */
	bool out_seen;         /* ... and its switch-out record was read */
	bool sampled;          /* a switch-out of it was sampled: test, process,
				* reason and locs are the last one's */
	bool records;          /* its switch records are seen */
	bool uopen, upreempted; /* an interval no sample saw is open, and
				 * it is no wait */
	uint64_t ustart;
	tf_strid umarked;      /* ... in this marked test (its markers say it
				* without a stack), 0 none */
	double us_start;       /* ... and that test's S at its start */
	double carry, ncarry;  /* the time and number of those since the last
				* interval given (close_unsampled) */
	tf_strid carry_test;   /* the test it ran when the first of those
				* began, where carry_known */
	bool carry_known;
	tf_strid known;        /* the test of its last sample (on a CPU or
				* a switch-out), where known_set */
	bool known_set;
	bool several;          /* its samples named more than one test */
	double frac;           /* the share counted of the last interval given */
	bool given;            /* ... and there was one */
	bool lead;             /* it ran its test when it left */
	bool exited;
	uint64_t exit_time;
	bool own;              /* the open interval waits for the test's own
				* (for_own, or the lead while a process the
				* test started runs) */
	tf_strid child_of;     /* a process's main thread: the test that
				* started the process, 0 none */
	bool peeked;           /* the open interval waits on testflame's read */
	uint64_t peek_start, peek_end; /* the last read of the process whose
				* pid this tid is (TF_REC_PEEK) */
	tf_wait_reason reason;
	tf_strid test, process;
	uint64_t start, weight;
	double s_start;        /* its test's S at the start */
	TF_VEC(uint32_t) locs;
} wthread;

typedef struct {
	uint32_t lead;         /* the lead its state is of; 0 none yet */
	bool known;            /* lead (and open) were set */
	bool open;             /* the lead waits for its own, or is gone */
	uint32_t children;     /* processes the test started, running */
	double acc;            /* S until `since` */
	uint64_t since;
} wtest;

struct tf_waits {
	tf_attributor *a;
	TF_VEC(wthread) threads;
	tf_htab index;
	TF_VEC(wtest) tests;
	tf_wait_fn emit;
	void *ctx;
	double peeked_ns;      /* waits testflame's reads caused */
	uint64_t peeked;
	double unplaced_ns;    /* waits no sample placed in one test */
	uint64_t unplaced;
};

/* A switch record this close to a switch-out sample is the same switch. */
#define SAME_SWITCH_NS 1000000ULL

static bool wt_eq(const void *ctx, uint32_t idx, const void *key)
{
	const wthread *v = ctx;
	return v[idx].tid == *(const uint32_t *)key;
}

static wthread *thread_of(tf_waits *w, uint32_t tid, bool create)
{
	uint32_t i = tf_htab_find(&w->index, tf_hash_u64(tid), wt_eq, w->threads.v, &tid);
	if (i != TF_HTAB_NONE)
		return &w->threads.v[i];
	if (!create)
		return NULL;
	wthread t;
	memset(&t, 0, sizeof(t));
	t.tid = tid;
	tf_vec_push(&w->threads, t);
	tf_htab_insert(&w->index, tf_hash_u64(tid), (uint32_t)w->threads.n - 1);
	return &w->threads.v[w->threads.n - 1];
}

static wtest *test_of(tf_waits *w, tf_strid test)
{
	while (w->tests.n <= test) {
		wtest z;
		memset(&z, 0, sizeof(z));
		tf_vec_push(&w->tests, z);
	}
	return &w->tests.v[test];
}

static double s_at(const wtest *t, uint64_t time)
{
	return t->acc + (t->open && time > t->since ? (double)(time - t->since) : 0);
}

static void set_open(wtest *t, bool open, uint64_t time)
{
	if (t->open == open)
		return;
	if (t->open && time > t->since)
		t->acc += (double)(time - t->since);
	t->open = open;
	t->since = time;
}

/* The lead the attributor knows now, and its state: a lead not seen
 * waiting is running; none yet, or gone, leaves the others' time to them. */
static wtest *sync_lead(tf_waits *w, tf_strid test, uint64_t time)
{
	wtest *t = test_of(w, test);
	uint32_t lead = tf_attributor_lead(w->a, test);
	if (!t->known || lead != t->lead) {
		const wthread *l = lead ? thread_of(w, lead, false) : NULL;
		bool open = !lead || (l && (l->exited || (l->open && !l->preempted && l->own)));
		if (!t->known) {
			t->open = open;
			t->since = time;
			t->known = true;
		} else {
			set_open(t, open, time);
		}
		t->lead = lead;
	}
	return t;
}

int tf_waits_new(tf_waits **out, tf_attributor *a, tf_wait_fn emit, void *ctx)
{
	tf_waits *w = tf_xcalloc(1, sizeof(*w));
	w->a = a;
	w->emit = emit;
	w->ctx = ctx;
	*out = w;
	return 0;
}

void tf_waits_free(tf_waits *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->threads.n; i++)
		tf_vec_free(&w->threads.v[i].locs);
	tf_vec_free(&w->threads);
	tf_htab_free(&w->index);
	tf_vec_free(&w->tests);
	free(w);
}

/* Give the thread's interval of `d` ns, `counted` of them its test's, and
 * the unsampled intervals it carries, counted in the same share. */
static void give(tf_waits *w, wthread *th, double d, double counted)
{
	/* without switch records, a sample stands for the switch-outs of
	 * its period (the cap's one in N) */
	double scale = th->records ? 1 : (double)th->weight;
	if (d > 0) {
		th->frac = counted / d;
		th->given = true;
	}
	double all = d + th->carry, in = counted + th->frac * th->carry;
	tf_wait_done done = {
		th->test, th->process, th->pid, th->tid, th->reason,
		th->locs.v, th->locs.n,
		in * scale, (all - in) * scale, (d > 0 ? 1 : 0) * scale + th->ncarry,
	};
	th->carry = th->ncarry = 0;
	w->emit(w->ctx, &done);
}

/* Whether a wait is for the test's own: its children or threads, or
 * any of the lead's while a process the test started runs. */
static bool waits_own(const wtest *t, bool lead, tf_wait_reason reason)
{
	return for_own(reason) || (lead && t->children);
}

/* The part of a wait from `start` to `time` its test counts: up to the
 * test's end marker where it ended first; none of a wait for its own;
 * the whole of the lead's; another thread's while the lead waited for
 * its own (its test's S from `s_start`). */
static double counted_of(tf_waits *w, const wtest *t, tf_strid test, uint64_t start,
			 uint64_t time, bool lead, bool own, double s_start)
{
	uint64_t ended = tf_attributor_marked_end(w->a, test, start);
	uint64_t until = ended ? TF_MAX(start, TF_MIN(ended, time)) : time;
	double in = (double)(until - start);
	if (own)
		return 0;
	if (lead)
		return in;
	return TF_MIN(in, TF_MAX(0.0, s_at(t, until) - s_start));
}

static void close_interval(tf_waits *w, wthread *th, uint64_t time)
{
	if (!th->open)
		return;
	th->open = false;
	if (th->preempted || time <= th->start)
		return;
	wtest *t = test_of(w, th->test);
	double d = (double)(time - th->start);
	if (th->peeked) {
		if (th->lead && t->lead == th->tid)
			set_open(t, false, time);
		w->peeked_ns += d;
		w->peeked++;
		return;
	}
	double counted = counted_of(w, t, th->test, th->start, time, th->lead, th->own,
				    th->s_start);
	if (th->lead && t->lead == th->tid)
		set_open(t, false, time);
	give(w, th, d, counted);
}

/* An interval no sample saw (the cap records one switch-out in N): its
 * time is known from the switch records, and carried to the thread's next
 * sampled wait, whose stack and share it takes, or to its last one when
 * it ends, while the thread runs the same test (known_test). A thread's waits are then its time off CPU to the nanosecond
 * whatever the cap, where one sample standing for N switch-outs of its
 * CPU, whoever's, missed a test's 30 ms of fsync by up to 23 ms; only
 * where the time went (the call, the reason) is sampled. */
static void give_marked(tf_waits *w, wthread *th, uint64_t time);

static void close_unsampled(tf_waits *w, wthread *th, uint64_t time)
{
	if (!th->uopen)
		return;
	th->uopen = false;
	if (th->upreempted || time <= th->ustart)
		return;
	if (th->umarked) {
		give_marked(w, th, time);
		return;
	}
	if (!th->ncarry) {
		th->carry_test = th->known;
		th->carry_known = th->known_set;
	}
	th->carry += (double)(time - th->ustart);
	th->ncarry++;
}

/*
 * An interval no sample saw in a marked test: the markers say whose it
 * is, no stack needed (a Python test's 50 ms sleep, unsampled where a
 * busy start-up made the cap record one switch-out in N, was carried to
 * the thread's next sampled wait, after the test: lost to it 3 times in
 * 5). Counted as a sampled one of its thread would be, up to the test's
 * end marker, with the thread's last sampled stack where it has one.
 */
static void give_marked(tf_waits *w, wthread *th, uint64_t time)
{
	wtest *t = sync_lead(w, th->umarked, th->ustart);
	bool lead = t->lead == th->tid;
	double d = (double)(time - th->ustart);
	double counted = counted_of(w, t, th->umarked, th->ustart, time, lead,
				    waits_own(t, lead, TF_WAIT_OTHER), th->us_start);
	tf_wait_done done = {
		th->umarked, th->process, th->pid, th->tid, TF_WAIT_OTHER,
		th->locs.v, th->sampled ? th->locs.n : 0, counted, d - counted, 1,
	};
	w->emit(w->ctx, &done);
}

/* What the thread carries counts for no test. */
static void unplace(tf_waits *w, wthread *th)
{
	w->unplaced_ns += th->carry;
	w->unplaced += (uint64_t)th->ncarry;
	th->carry = th->ncarry = 0;
}

/*
 * The thread's sample says it runs `test` now. What it carries began in
 * the test its sample before said: where that is another, the waits no
 * sample saw fell in the one, the other or a test between them, which
 * nothing tells (one thread runs one test after another in Catch2,
 * doctest, GoogleTest, tests named by their frames: spdlog's 250 ms
 * wait in dequeue-empty-wait, no sample of it, went to bad_queue's next
 * sampled one, "regressed" on a README-only branch). Those waits count
 * for no test; the run's metadata says how long they were.
 */
static void known_test(tf_waits *w, wthread *th, tf_strid test)
{
	/* a stack that names no test (the runner's own code between two
	 * tests, an unwinding cut short) says nothing of the change */
	if (test == tf_attributor_fallback(w->a))
		return;
	if (th->ncarry && th->carry_known && th->carry_test != test) {
		unplace(w, th);
	} else if (th->ncarry && !th->carry_known) {
		th->carry_test = test; /* none known before: its first test's */
		th->carry_known = true;
	}
	th->several = th->several || (th->known_set && th->known != test);
	th->known = test;
	th->known_set = true;
}

/* The thread ends, or the recording: what it carries goes with its last
 * sampled wait's stack (a thread never sampled has none, and its waits
 * are not known); where the thread ran one test after another, it went
 * on to the next ones after its last sample, waited in them and in its
 * end (a join, the runner's exit; spdlog's dup_filter_test2, the last
 * sampled, took 230 ms more that way): of none. */
static void give_carried(tf_waits *w, wthread *th)
{
	if (th->carry > 0 && th->several)
		unplace(w, th);
	else if (th->carry > 0 && th->sampled && !th->open)
		give(w, th, 0, 0);
}

/* A wait on a kernel lock while testflame reads the process's memory. */
static bool on_peek(tf_waits *w, const tf_rec_event *ev, bool rwsem)
{
	const wthread *p = rwsem ? thread_of(w, ev->pid, false) : NULL;
	return p && p->peek_end && ev->time >= p->peek_start && ev->time <= p->peek_end;
}

void tf_waits_out(tf_waits *w, const tf_rec_event *ev, tf_strid test, tf_strid process,
		  tf_wait_reason reason, bool rwsem, const uint32_t *locs, size_t n)
{
	wthread *th = thread_of(w, ev->tid, true);

	close_interval(w, th, ev->time); /* a switch-in was lost */
	close_unsampled(w, th, ev->time);
	/* a thread's last switch-out, after its exit, is no wait */
	if (reason == TF_WAIT_EXIT || (th->exited && th->exit_time <= ev->time))
		return;
	known_test(w, th, test);
	th->pid = ev->pid;
	th->sampled = true;
	th->open = true;
	th->exited = false;
	th->start = ev->time;
	th->weight = ev->sample.period ? ev->sample.period : 1;
	th->reason = reason;
	th->test = test;
	th->process = process;
	/* the switch record follows (the kernel writes the sample first) and
	 * says whether this was a preemption */
	th->preempted = false;
	th->out_seen = false;
	th->peeked = on_peek(w, ev, rwsem);
	th->locs.n = 0;
	for (size_t i = 0; i < n; i++)
		tf_vec_push(&th->locs, locs[i]);
	wtest *t = sync_lead(w, test, ev->time);
	th->lead = t->lead == ev->tid;
	th->own = waits_own(t, th->lead, reason);
	if (!th->given)
		th->frac = th->own ? 0 : 1; /* for what it carries */
	if (th->lead)
		set_open(t, !th->preempted && th->own, ev->time);
	th->s_start = s_at(t, ev->time);
}

/* ptrace's samples come at the end of the time they stand for; the lead's
 * state is what its own last sample said. */
double tf_waits_sampled(tf_waits *w, const tf_rec_event *ev, tf_strid test,
			tf_wait_reason reason, double period, double *apart)
{
	wtest *t = sync_lead(w, test, ev->time);
	bool lead = t->lead == ev->tid;
	bool own = waits_own(t, lead, reason);
	double counted = own ? 0 : lead || t->open ? period : 0;
	if (lead)
		set_open(t, own, ev->time);
	*apart = period - counted;
	return counted;
}

void tf_waits_running(tf_waits *w, const tf_rec_event *ev, tf_strid test)
{
	wthread *th = thread_of(w, ev->tid, false);
	if (th)
		known_test(w, th, test);
	wtest *t = sync_lead(w, test, ev->time);
	if (t->lead == ev->tid)
		set_open(t, false, ev->time);
}

void tf_waits_event(tf_waits *w, const tf_rec_event *ev)
{
	wthread *th;

	switch (ev->type) {
	case TF_REC_FORK:
		/* a tid used again: a new thread */
		th = thread_of(w, ev->tid, false);
		if (th) {
			th->exited = th->sampled = th->given = th->uopen = false;
			th->carry = th->ncarry = 0;
			th->known_set = th->carry_known = th->several = false;
			th->peek_start = th->peek_end = 0;
			th->child_of = 0;
		}
		if (ev->pid != ev->fork.ppid && ev->pid == ev->tid) {
			tf_strid by = tf_attributor_fork_test(w->a, ev->pid);
			if (by) {
				test_of(w, by)->children++;
				thread_of(w, ev->tid, true)->child_of = by;
			}
		}
		break;
	case TF_REC_PEEK:
		th = thread_of(w, ev->pid, true);
		th->peek_start = ev->time;
		th->peek_end = ev->peek.end;
		break;
	case TF_REC_SWITCH:
		th = thread_of(w, ev->tid, true);
		th->records = true;
		if (ev->cswitch.out) {
			if (!th->open) {
				/* one no sample saw; none after the thread's exit */
				if (!th->exited || th->exit_time > ev->time) {
					th->uopen = true;
					th->upreempted = ev->cswitch.preempt;
					th->ustart = ev->time;
					th->pid = ev->pid;
					th->umarked = tf_attributor_marked_now(w->a, ev->pid,
									       ev->tid);
					if (th->umarked)
						th->us_start = s_at(sync_lead(w, th->umarked,
									      ev->time),
								    ev->time);
				}
				return;
			}
			if (th->out_seen || ev->time < th->start ||
			    ev->time - th->start >= SAME_SWITCH_NS)
				return;
			th->out_seen = true;
			wtest *t = test_of(w, th->test);
			if (ev->cswitch.preempt) {
				/* not a wait: the lead runs on as far as the
				 * others are concerned */
				th->preempted = true;
				if (th->lead && t->lead == th->tid)
					set_open(t, false, ev->time);
				return;
			}
			/* the wait starts at the record, not at the sample,
			 * which the kernel takes first: its stack's unwinding
			 * and copy in between, 7.1 to 8.6 us a switch-out
			 * here, are no wait (2,000 naps: CPU + waits 10-16 ms
			 * over the test's wall time) */
			if (th->lead && t->lead == th->tid && t->open && t->since == th->start)
				t->since = ev->time;
			th->start = ev->time;
			th->s_start = s_at(t, ev->time);
			return;
		}
		close_interval(w, th, ev->time);
		close_unsampled(w, th, ev->time);
		break;
	case TF_REC_EXIT:
		th = thread_of(w, ev->tid, false);
		if (!th)
			return;
		close_interval(w, th, ev->time);
		close_unsampled(w, th, ev->time);
		give_carried(w, th);
		th->exited = true;
		th->exit_time = ev->time;
		if (th->child_of) {
			wtest *by = test_of(w, th->child_of);
			if (by->children)
				by->children--;
			th->child_of = 0;
		}
		/* a lead gone leaves the test's time to its other threads */
		for (size_t i = 0; i < w->tests.n; i++)
			if (w->tests.v[i].known && w->tests.v[i].lead == ev->tid)
				set_open(&w->tests.v[i], true, ev->time);
		break;
	default:
		break;
	}
}

double tf_waits_peeked(const tf_waits *w, uint64_t *n)
{
	*n = w->peeked;
	return w->peeked_ns;
}

double tf_waits_unplaced(const tf_waits *w, uint64_t *n)
{
	*n = w->unplaced;
	return w->unplaced_ns;
}

void tf_waits_finish(tf_waits *w, uint64_t end_time)
{
	for (size_t i = 0; i < w->threads.n; i++) {
		close_interval(w, &w->threads.v[i], end_time);
		close_unsampled(w, &w->threads.v[i], end_time);
		give_carried(w, &w->threads.v[i]);
	}
}
