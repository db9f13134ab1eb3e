/*
 * record.c - tf_record_run(): launch the command held, arm the sampler,
 * release the command, and pump the sampler's data into the spool until
 * the command exits.
 *
 * The sampler: perf_event (perf.c walks its own ladder of rungs), or, when
 * perf_event_open is refused or cannot sample what was asked (--event
 * wall) and --sampler is auto, the ptrace sampler (ptrace.c), announced
 * once with the reason and the fix.
 *
 * Signals: SIGINT, SIGTERM, SIGHUP and SIGQUIT are received through a
 * signalfd so that testflame survives them long enough to write the
 * profile. A signal sent by the terminal (si_code SI_KERNEL) already reached
 * the command, which shares our process group, so it is not sent twice;
 * one sent to testflame alone (kill(1), a CI runner) is forwarded.
 */

#include "record_int.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const int handled_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static int shell_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return 1;
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* The last rung of --sampler auto's ladder, announced once with why. */
static void ladder_notice(const tf_record_opts *o, int perf_rc)
{
	char why[512], fix[600];
	tf_record_caps caps;

	if (o->event == TF_EVENT_WALL && perf_rc != TF_EPERM) {
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_INFO,
				 "sampling with ptrace: --event wall needs the time threads "
				 "wait, and perf could not record it (%s)", tf_error_last());
		return;
	}
	tf_record_probe(&caps, TF_PROBE_PERF);
	if (!caps.perf_errno)
		caps.perf_errno = perf_rc == TF_EPERM ? EPERM : EOPNOTSUPP;
	tf_record_perf_advice(&caps, why, sizeof(why), fix, sizeof(fix));
	tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_INFO,
			 "sampling with ptrace: perf_event_open is refused: %s; fix: %s", why, fix);
}

/*
 * What every sampler does with the side-band it reads: remember each new
 * program's arguments (read from /proc while the process still exists;
 * attribution names tests by them), then hand the event to the caller's
 * live hook, an exec's mapping with the file the exec opened, held since
 * (execfiles.c).
 *
 * The kernel announces an exec (COMM) before the new program's arguments
 * are in place: /proc/PID/cmdline reads empty until the exec is done. So a
 * pid whose arguments did not read yet waits in `pending`, and is read
 * again at its next side-band record, at every turn of the loop (see the
 * pace below), and lastly when it exits.
 */
typedef struct {
	uint32_t pid, tid;
	uint64_t time;
} pending_exec;

typedef struct {
	tf_recording *rec;
	const tf_record_opts *o;
	tf_markers *markers;
	tf_alloc *alloc;
	tf_pyread *py;
	TF_VEC(pending_exec) pending;
	tf_execfiles *execs;  /* the files execs opened, held (NULL: not allowed) */
	TF_VEC(uint32_t) fresh; /* pids exec'd whose main mapping is still to come */
	uint64_t last_exec; /* when the reader last saw an exec */
	uint64_t drain_within; /* the sampling rings' own pace, when not polled */
} live_ctx;

/* Read and spool one process's arguments: CMDLINE_READ, CMDLINE_LATER
 * when they are not in place yet (the exec is not done, or the process
 * is a zombie), CMDLINE_GONE when the process is. The reader often learns
 * of a short program's exec after it ended: trying a gone pid again at
 * each of its later records cost testflame six failed opens a process
 * (3,000 for 500 processes of a millisecond, 36 ms of its CPU). */
enum { CMDLINE_GONE = -1, CMDLINE_LATER = 0, CMDLINE_READ = 1 };

/* The time testflame read a process's memory (its arguments, a Python
 * stack), in the spool: reading holds the process's mmap lock, and where
 * the reader is preempted with it held, a thread of the process that maps,
 * unmaps or protects memory meanwhile (the dynamic loader, just after the
 * exec) waits for the reader to run again (attribute/offcpu.c). */
void tf_record_peeked(tf_spool *s, uint32_t pid, uint64_t start, uint64_t end)
{
	struct {
		uint32_t pid, pad;
		uint64_t time, end;
	} fixed = { pid, 0, start, end };
	tf_spool_append_own(s, TF_SPOOL_PEEK, &fixed, sizeof(fixed), NULL, 0);
}

static int read_cmdline(live_ctx *lc, uint32_t pid, uint32_t tid, uint64_t time)
{
	char path[64], buf[8192];
	ssize_t cwdlen;
	size_t n = 0;
	uint64_t start;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CMDLINE_GONE;
	snprintf(path, sizeof(path), "/proc/%u/cwd", pid);
	cwdlen = readlink(path, buf, 4095);
	if (cwdlen < 0)
		cwdlen = 0;
	buf[cwdlen] = '\0';
	start = tf_now_ns();
	for (;;) {
		ssize_t r = read(fd, buf + cwdlen + 1 + n, sizeof(buf) - (size_t)cwdlen - 2 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	tf_record_peeked(lc->rec->spool, pid, start, tf_now_ns());
	close(fd);
	if (!n)
		return CMDLINE_LATER;
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint32_t len, cwdlen;
	} fixed = { pid, tid, time, (uint32_t)n, (uint32_t)cwdlen };
	tf_spool_append_own(lc->rec->spool, TF_SPOOL_CMDLINE, &fixed, sizeof(fixed), buf,
			    (size_t)cwdlen + 1 + n);
	return CMDLINE_READ;
}

static void retry_pending(live_ctx *lc, uint32_t only_pid, bool drop)
{
	for (size_t i = 0; i < lc->pending.n;) {
		pending_exec *pe = &lc->pending.v[i];
		if (only_pid && pe->pid != only_pid) {
			i++;
			continue;
		}
		if (read_cmdline(lc, pe->pid, pe->tid, pe->time) != CMDLINE_LATER || drop)
			lc->pending.v[i] = lc->pending.v[--lc->pending.n];
		else
			i++;
	}
}

/* Whether `pid` had an exec whose main mapping is still to come; it has
 * come now. */
static bool take_fresh(live_ctx *lc, uint32_t pid)
{
	for (size_t i = 0; i < lc->fresh.n; i++) {
		if (lc->fresh.v[i] == pid) {
			lc->fresh.v[i] = lc->fresh.v[--lc->fresh.n];
			return true;
		}
	}
	return false;
}

/* An exec's mapping of its file, with the file held since the exec
 * (execfiles.c) when the recorder has it: `*copy` filled and returned,
 * else `ev`. The exec's event is queued before its mapping is recorded,
 * so for the main mapping of a fresh exec the queue is read now. */
static const tf_rec_event *with_file(live_ctx *lc, const tf_rec_event *ev, tf_rec_event *copy)
{
	if (!lc->execs || ev->type != TF_REC_MMAP || !ev->mmap.filename ||
	    ev->mmap.filename[0] != '/' || (ev->mmap.prot && !(ev->mmap.prot & PROT_EXEC)))
		return ev;
	int fd = take_fresh(lc, ev->pid) ? tf_execfiles_find(lc->execs, ev->pid, ev->mmap.ino)
					  : tf_execfiles_held(lc->execs, ev->pid, ev->mmap.ino);
	if (fd < 0)
		return ev;
	*copy = *ev;
	copy->mmap.has_fd = true;
	copy->mmap.fd = fd;
	return copy;
}

static void on_live(void *ctx, const tf_rec_event *ev)
{
	live_ctx *lc = ctx;
	tf_rec_event copy;

	if (ev->type == TF_REC_COMM && ev->comm.exec && lc->alloc)
		tf_alloc_watch(lc->alloc, ev->pid, ev->time);
	if (ev->type == TF_REC_COMM && ev->comm.exec) {
		if (lc->execs) {
			take_fresh(lc, ev->pid);
			tf_vec_push(&lc->fresh, ev->pid);
		}
		lc->last_exec = tf_now_ns();
		retry_pending(lc, ev->pid, true); /* an exec again: the last one is gone */
		if (read_cmdline(lc, ev->pid, ev->tid, ev->time) == CMDLINE_LATER) {
			pending_exec pe = { ev->pid, ev->tid, ev->time };
			tf_vec_push(&lc->pending, pe);
		}
	} else if (lc->pending.n && ev->pid) {
		retry_pending(lc, ev->pid, ev->type == TF_REC_EXIT && ev->pid == ev->tid);
	}
	tf_pyread_event(lc->py, ev);
	if (ev->type == TF_REC_EXIT && ev->pid == ev->tid)
		take_fresh(lc, ev->pid);
	if (lc->o->live)
		lc->o->live(lc->o->live_ctx, with_file(lc, ev, &copy));
}

/*
 * The reader's pace: the kernel wakes it only for a half-full ring (perf.c
 * says why), not for each record, so it looks every 10 ms for a second
 * after it last saw an exec, which is about when a suite's processes come
 * and go, and every 100 ms otherwise (markers wake it too). That reads the
 * arguments of every interpreter (a Python, Ruby or Node program lives
 * 15 ms at least, and its script is its name), while a program of a few
 * milliseconds is named by its binary (the exec's mmap), and under ctest by
 * ctest's log. An exec whose arguments did not read yet is tried again
 * every millisecond, for at most 50 ms: a program that never has any (an
 * empty argv) is not polled for ever.
 */
#define PACE_IDLE_NS (100 * 1000 * 1000)
#define PACE_EXECS_NS (10 * 1000 * 1000)
#define PACE_EXECS_FOR_NS (1000ULL * 1000 * 1000)
#define PACE_PENDING_NS (1000 * 1000)
#define PACE_PY_NS (250 * 1000)
#define PENDING_FOR_NS (50 * 1000 * 1000)

static long pace_for(const live_ctx *lc)
{
	uint64_t now = tf_now_ns();
	/* Python stacks are read when their samples are drained: a quarter
	 * of a sampling period after them, 250 us at most (pyread.c) */
	if (tf_pyread_live(lc->py)) {
		long q = (long)(250000000ULL / (lc->o->freq ? lc->o->freq : 1));
		return TF_MAX(TF_MIN(q, PACE_PY_NS), 50 * 1000L);
	}
	for (size_t i = 0; i < lc->pending.n; i++)
		if (lc->pending.v[i].time + PENDING_FOR_NS > now)
			return PACE_PENDING_NS;
	if (lc->last_exec && lc->last_exec + PACE_EXECS_FOR_NS > now)
		return PACE_EXECS_NS;
	return PACE_IDLE_NS;
}

static long pace_ns(const live_ctx *lc)
{
	long pace = pace_for(lc);
	if (lc->drain_within && lc->drain_within < (uint64_t)pace)
		pace = (long)TF_MAX(lc->drain_within, 1000000ULL);
	return pace;
}

/* Read the ring signals that woke us (perf.c): the drain that follows
 * is what they asked for. */
static void drain_ring_signals(int iofd)
{
	struct signalfd_siginfo si;
	while (iofd >= 0 && read(iofd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
}

static int pump_perf(tf_recording *rec, tf_perf *perf, tf_launch *l, int sigfd, int iofd,
		     const tf_record_opts *o, live_ctx *lc)
{
	struct pollfd fds[1024];
	uint64_t processes = 1, last_progress = 0;
	tf_launch_state st = { 0 };
	int rc = 0;

	lc->last_exec = tf_now_ns(); /* the command starts: processes come */
	for (;;) {
		size_t n = 1;
		fds[0].fd = iofd;
		fds[0].events = POLLIN;
		if (iofd < 0)
			n = tf_perf_pollfds(perf, fds, TF_ARRAY_SIZE(fds) - 3);
		fds[n].fd = tf_launch_fd(l);
		fds[n].events = POLLIN;
		fds[n + 1].fd = sigfd;
		fds[n + 1].events = POLLIN;
		fds[n + 2].fd = lc->markers ? tf_markers_fd(lc->markers) : -1;
		fds[n + 2].events = POLLIN;
		struct timespec wait = { 0, pace_ns(lc) };
		if (ppoll(fds, n + 3, &wait, NULL) < 0 && errno != EINTR)
			return tf_error_set_errno(TF_ERROR, "poll failed");
		/* a descriptor poll found nothing on has nothing to read: a
		 * wake-up of the 10 ms pace is no longer five empty reads */
		if (fds[n + 1].revents && tf_launch_forward_signals(l, sigfd))
			rec->info.interrupted = true;
		if (iofd >= 0 && fds[0].revents)
			drain_ring_signals(iofd);
		/* the markers first: a line without @t= is stamped when it is read,
		 * and draining the rings first would stamp it later by their size */
		if (lc->markers)
			rc = tf_markers_poll(lc->markers, rec->spool, false);
		if (!rc)
			rc = tf_perf_drain(perf, rec, on_live, lc, &processes);
		if (rc)
			return rc;
		if (lc->pending.n)
			retry_pending(lc, 0, false);
		tf_execfiles_poll(lc->execs);
		tf_alloc_poll(lc->alloc);
		rc = fds[n].revents ? tf_launch_poll(l, &st) : 0;
		if (rc)
			return rc;
		if (st.exited)
			break;
		tf_record_report_progress(rec, o, processes, &last_progress);
	}
	/* everything the tree wrote until its end is in the buffers now */
	rc = tf_perf_drain(perf, rec, on_live, lc, &processes);
	if (!rc)
		rc = tf_perf_finish(perf, rec, (uint32_t)tf_launch_pid(l), tf_now_ns());
	if (!rc && lc->markers)
		rc = tf_markers_poll(lc->markers, rec->spool, true);
	rec->info.wait_status = st.wait_status;
	return rc;
}

/*
 * Recording failed while the command runs (the spool's disk is full, the
 * spool reached its limit): sampling stops, and the command runs on to its
 * end with its signals forwarded, so that a CI job still gets the suite's
 * own result. The message stays in *why.
 */
static void stop_recording(tf_recording *rec, tf_perf **perf, tf_launch *l, int sigfd,
			   char **why)
{
	tf_launch_state st = { 0 };

	*why = tf_xstrdup(tf_error_last());
	tf_perf_close(*perf);
	*perf = NULL;
	rec->info.stopped = true;
	while (tf_launch_poll(l, &st) == 0 && !st.exited) {
		struct pollfd fds[2] = { { tf_launch_fd(l), POLLIN, 0 }, { sigfd, POLLIN, 0 } };
		if (poll(fds, 2, 1000) < 0 && errno != EINTR)
			break;
		if (tf_launch_forward_signals(l, sigfd))
			rec->info.interrupted = true;
	}
}

/* The signal mask as it was, once the rings are closed: a SIGIO still
 * pending from them is dropped, not delivered (its default kills). */
static void restore_signals(int iofd, const sigset_t *orig)
{
	struct sigaction ign, old;

	if (iofd >= 0)
		close(iofd);
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGIO, &ign, &old);
	sigprocmask(SIG_SETMASK, orig, NULL);
	sigaction(SIGIO, &old, NULL);
}

/* --follow cgroup, and the cgroup could not be had: why, as the error. */
static int follow_refused(void)
{
	char *why = tf_xstrdup(tf_error_last());
	int rc = tf_error_set(TF_EUNSUPPORTED, "--follow cgroup: %s", why);
	free(why);
	return rc;
}

/* What one recording holds while the command runs, freed by session_end(). */
typedef struct {
	tf_record_opts o;     /* the caller's, with defaults filled in */
	tf_recording *rec;
	tf_launch *launch;
	tf_cgroup *cg;
	tf_perf *perf;
	live_ctx lc;
	TF_VEC(char *) env;   /* the command's added variables, NULL-terminated */
	char *marker_env;
	sigset_t orig;        /* the signal mask before the recording */
	bool blocked;
	int sigfd, iofd;      /* the signals we handle; SIGIO, the rings' own */
	int nice_before;      /* INT_MIN: not raised */
	char *stopped;        /* why the recording stopped before the command */
	char *path;           /* the command's program, found */
} session;

/* The options' defaults and bounds. */
static int session_opts(session *ss, const tf_record_opts *opts)
{
	tf_record_opts *o = &ss->o;

	*o = *opts;
	if (!o->argv || !o->argv[0])
		return tf_error_set(TF_EUSAGE, "no command to run");
	if (!o->freq)
		o->freq = TF_DEFAULT_FREQ;
	if (!o->stack_bytes)
		o->stack_bytes = 8192;
	o->stack_bytes = (o->stack_bytes + 7) & ~7u;
	if (o->stack_bytes > 65000)
		return tf_error_set(TF_EUSAGE, "stack size %u is too large (at most 65000 bytes)",
				    o->stack_bytes);
	return 0;
}

/* Whether the command can be run at all, its program's path in *path;
 * like a shell, 127 for a missing command and 126 for one we cannot run go
 * in the recording's info. */
static bool command_found(tf_recording *rec, const tf_record_opts *o, char **path)
{
	int rc;

	if (o->cwd && strchr(o->argv[0], '/') && o->argv[0][0] != '/') {
		char *abs = tf_xasprintf("%s/%s", o->cwd, o->argv[0]);
		rc = tf_launch_resolve(path, abs);
		free(abs);
	} else {
		rc = tf_launch_resolve(path, o->argv[0]);
	}
	if (rc) {
		rec->info.exec_failed = true;
		rec->info.exit_status = rc == TF_ENOTFOUND ? 127 : 126;
	}
	return rc == 0;
}

/* The spool, the marker channel, the allocation sampler, the Python
 * reader, and the variables they add to the command's environment. */
static int open_channels(session *ss)
{
	const tf_record_opts *o = &ss->o;
	int rc;

	if ((rc = tf_spool_open(&ss->rec->spool)))
		return rc;
	/* the allocation sampler, preloaded where the command lets it */
	ss->rec->info.alloc_rate = o->alloc_rate ? o->alloc_rate : TF_DEFAULT_ALLOC_RATE;
	if (o->memory && (rc = tf_alloc_open(&ss->lc.alloc, o->alloc_rate,
					     o->callgraph == TF_CALLGRAPH_FP ? 0 : o->stack_bytes,
					     ss->path)))
		return rc;
	ss->lc.rec = ss->rec;
	ss->lc.o = o;
	for (char *const *e = o->extra_env; e && *e; e++)
		tf_vec_push(&ss->env, *e);
	if (o->markers) {
		if ((rc = tf_markers_open(&ss->lc.markers)))
			return rc;
		ss->marker_env = tf_markers_env(ss->lc.markers);
		tf_vec_push(&ss->env, ss->marker_env);
	}
	for (char *const *e = ss->lc.alloc ? tf_alloc_env(ss->lc.alloc) : NULL; e && *e; e++)
		tf_vec_push(&ss->env, *e);
	if (o->python)
		tf_pyread_new(&ss->lc.py, ss->rec, o);
	/* before the command starts: its first exec is one */
	if (tf_execfiles_open(&ss->lc.execs) != 0)
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_VERBOSE,
				 "programs are held from their mappings, not their execs (%s): "
				 "one deleted as soon as it exits may go unnamed",
				 tf_error_last());
	tf_vec_push(&ss->env, NULL);
	return 0;
}

/* The signals we pass on to the command, read from a signalfd; and SIGIO,
 * the rings' own (perf.c), from one of its own. */
static int block_signals(session *ss)
{
	sigset_t set, ioset, both;

	/* signals ignored when we started (nohup, a shell's background job)
	 * stay ignored, for us as for the command */
	sigemptyset(&set);
	for (size_t i = 0; i < TF_ARRAY_SIZE(handled_signals); i++) {
		struct sigaction cur;
		if (sigaction(handled_signals[i], NULL, &cur) == 0 && cur.sa_handler == SIG_IGN)
			continue;
		sigaddset(&set, handled_signals[i]);
	}
	sigemptyset(&ioset);
	sigaddset(&ioset, SIGIO);
	both = set;
	sigaddset(&both, SIGIO);
	sigprocmask(SIG_BLOCK, &both, &ss->orig);
	ss->blocked = true;
	ss->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (ss->sigfd < 0)
		return tf_error_set_errno(TF_ERROR, "cannot create a signalfd");
	ss->iofd = signalfd(-1, &ioset, SFD_CLOEXEC | SFD_NONBLOCK);
	return 0;
}

/* Start the command, held, in a cgroup of its own where the events are to
 * follow one (perf.c); --follow inherit copies them into every process
 * instead, as perf record does. */
static int start_command(session *ss)
{
	const tf_record_opts *o = &ss->o;
	tf_launch_opts lo;
	int rc;

	memset(&lo, 0, sizeof(lo));
	lo.argv = o->argv;
	lo.extra_env = ss->env.v;
	lo.cwd = o->cwd;
	lo.orig_mask = &ss->orig;
	lo.remove_dir[0] = ss->lc.markers ? tf_markers_dir(ss->lc.markers) : NULL;
	lo.remove_dir[1] = o->scratch_dir;
	lo.remove_dir[2] = ss->lc.alloc ? tf_alloc_dir(ss->lc.alloc) : NULL;
	if (o->sampler != TF_SAMPLER_PTRACE && o->follow != TF_FOLLOW_INHERIT) {
		if (tf_cgroup_create(&ss->cg) == 0)
			lo.cgroup_dir = tf_cgroup_path(ss->cg);
		else if (o->follow == TF_FOLLOW_CGROUP)
			return follow_refused();
		else
			tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_VERBOSE,
					 "no cgroup for the command (%s): events are inherited",
					 tf_error_last());
	}
	if ((rc = tf_launch_start(&ss->launch, &lo)))
		return rc;
	ss->rec->info.root_pid = tf_launch_pid(ss->launch);
	if (ss->cg && tf_cgroup_add(ss->cg, tf_launch_pid(ss->launch)) != 0) {
		if (o->follow == TF_FOLLOW_CGROUP)
			return follow_refused();
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_VERBOSE,
				 "%s: events are inherited", tf_error_last());
		tf_cgroup_free(ss->cg);
		ss->cg = NULL;
	}
	return 0;
}

/*
 * The reader must run as soon as the kernel has news: a program of a
 * millisecond is gone before a reader that waits for the scheduler reads
 * its arguments. Where allowed (CAP_SYS_NICE), this thread alone, not the
 * command, runs at a higher priority while recording.
 */
static void raise_priority(session *ss)
{
	errno = 0;
	ss->nice_before = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && ss->nice_before > -10 && setpriority(PRIO_PROCESS, 0, -10) != 0)
		ss->nice_before = INT_MIN;
	else if (errno)
		ss->nice_before = INT_MIN;
}

static void restore_priority(session *ss)
{
	if (ss->nice_before != INT_MIN)
		setpriority(PRIO_PROCESS, 0, ss->nice_before);
	ss->nice_before = INT_MIN;
}

/* The perf sampler on the held command; the ptrace one (no ss->perf) where
 * perf is refused and the sampler is auto. */
static int open_perf(session *ss)
{
	const tf_record_opts *o = &ss->o;
	tf_recording *rec = ss->rec;
	tf_perf_opts po = { tf_launch_pid(ss->launch), o->event, o->callgraph, o->freq,
			    o->stack_bytes, o->notice, o->notice_ctx, ss->lc.py,
			    ss->cg ? tf_cgroup_fd(ss->cg) : -1, o->offcpu, o->offcpu_max };
	int rc = tf_perf_open(&ss->perf, &po, rec);

	if (ss->perf && ss->cg)
		tf_record_notice(o->notice, o->notice_ctx, TF_NOTICE_VERBOSE,
				 tf_perf_by_cgroup(ss->perf) ?
				 "events follow the command's cgroup '%s', not inherited" :
				 "events are inherited: CPU-wide events on the cgroup '%s' "
				 "were refused", tf_cgroup_path(ss->cg));
	if (!rc && ss->perf && o->follow == TF_FOLLOW_CGROUP && !tf_perf_by_cgroup(ss->perf))
		return tf_error_set(TF_EUNSUPPORTED,
				    "--follow cgroup: CPU-wide events on the cgroup were refused "
				    "(they need perf_event_paranoid <= 0 or CAP_PERFMON; "
				    "hardware events always inherit)");
	rec->info.by_cgroup = tf_perf_by_cgroup(ss->perf);
	if ((rc == TF_EPERM || rc == TF_EUNSUPPORTED) && o->sampler == TF_SAMPLER_AUTO) {
		ladder_notice(o, rc);
		rc = 0;
	}
	if (rc)
		return rc;
	/* a cgroup no event follows (perf refused, ptrace instead; or
	 * inherited events) is given back now, while the command is still
	 * held in it */
	if (ss->cg && !tf_perf_by_cgroup(ss->perf)) {
		tf_cgroup_free(ss->cg);
		ss->cg = NULL;
	}
	/* ptrace stops each exec: its mapping is read while the file is there */
	if (!ss->perf) {
		tf_execfiles_free(ss->lc.execs);
		ss->lc.execs = NULL;
	}
	/* where the rings cannot signal, the reader polls them */
	if (ss->perf && ss->iofd >= 0) {
		if (tf_perf_signal(ss->perf, SIGIO) == 0) {
			ss->lc.drain_within = tf_perf_drain_within(ss->perf);
		} else {
			close(ss->iofd);
			ss->iofd = -1;
		}
	}
	return 0;
}

/* Release the command and record it to its end. */
static int record_command(session *ss)
{
	tf_recording *rec = ss->rec;
	int rc;

	rec->info.start_ns = tf_now_ns();
	rec->info.start_realtime_ns = realtime_ns();
	if (ss->perf) {
		rc = tf_launch_release(ss->launch);
		if (!rc && (rc = pump_perf(rec, ss->perf, ss->launch, ss->sigfd, ss->iofd, &ss->o,
					   &ss->lc)) != 0) {
			stop_recording(rec, &ss->perf, ss->launch, ss->sigfd, &ss->stopped);
			rc = 0;
		}
	} else {
		tf_ptrace_loop pl = { ss->sigfd, on_live, &ss->lc, ss->lc.markers, ss->lc.py,
				      ss->lc.alloc };
		rc = tf_ptrace_record(rec, ss->launch, &ss->o, &pl);
	}
	rec->info.end_ns = tf_now_ns();
	restore_priority(ss);
	return rc ? rc : tf_pyread_error(ss->lc.py);
}

/* How the command ended, and what the recording holds. */
static void collect_results(session *ss)
{
	tf_recording *rec = ss->rec;
	tf_launch_state st;

	tf_launch_poll(ss->launch, &st);
	rec->info.wait_status = st.wait_status;
	rec->info.exit_status = shell_status(st.wait_status);
	if (st.exec_errno) {
		rec->info.exec_failed = true;
		tf_error_set(st.exec_errno == ENOENT ? TF_ENOTFOUND : TF_EPERM, "'%s': %s",
			     ss->o.argv[0], strerror(st.exec_errno));
	}
	tf_perf_close(ss->perf);
	ss->perf = NULL;
	tf_launch_free(ss->launch);
	ss->launch = NULL;
	if (ss->cg && ss->o.memory)
		rec->info.cgroup_peak = tf_cgroup_memory_peak(ss->cg);
	tf_cgroup_free(ss->cg);
	ss->cg = NULL;
	/* what the sampler's files say, before the spool closes */
	if (ss->lc.alloc && !ss->stopped &&
	    tf_alloc_collect(ss->lc.alloc, rec->spool, &rec->info) != 0) {
		ss->stopped = tf_xstrdup(tf_error_last());
		rec->info.stopped = true;
	}
	tf_alloc_free(ss->lc.alloc);
	ss->lc.alloc = NULL;
	if (!ss->stopped && tf_spool_finish(rec->spool) != 0) {
		/* the last records did not fit: the command has run, say how */
		ss->stopped = tf_xstrdup(tf_error_last());
		rec->info.stopped = true;
	}
	rec->info.spool_bytes = tf_spool_size(rec->spool);
	if (ss->lc.markers)
		rec->info.markers_ignored = tf_markers_bad_lines(ss->lc.markers);
}

static void session_end(session *ss)
{
	restore_priority(ss);
	tf_markers_free(ss->lc.markers);
	tf_alloc_free(ss->lc.alloc);
	tf_pyread_free(ss->lc.py);
	free(ss->path);
	tf_vec_free(&ss->env);
	tf_vec_free(&ss->lc.pending);
	tf_vec_free(&ss->lc.fresh);
	tf_execfiles_free(ss->lc.execs);
	free(ss->marker_env);
	tf_perf_close(ss->perf);
	tf_launch_free(ss->launch);
	tf_cgroup_free(ss->cg);
	if (ss->sigfd >= 0)
		close(ss->sigfd);
	if (ss->blocked)
		restore_signals(ss->iofd, &ss->orig);
	free(ss->stopped);
}

int tf_record_run(tf_recording **out, const tf_record_opts *opts)
{
	session ss;
	char *stopped;
	int rc;

	*out = NULL;
	memset(&ss, 0, sizeof(ss));
	ss.sigfd = ss.iofd = -1;
	ss.nice_before = INT_MIN;
	if ((rc = session_opts(&ss, opts)))
		return rc;
	ss.rec = tf_xcalloc(1, sizeof(*ss.rec));
	ss.rec->info.callgraph = ss.o.callgraph;
	ss.rec->info.freq = ss.o.freq;
	ss.rec->info.sampler = TF_SAMPLER_PERF;
	ss.rec->info.rung[0] = '\0';
	if (!command_found(ss.rec, &ss.o, &ss.path)) {
		*out = ss.rec;
		free(ss.path);
		return 0;
	}
	if ((rc = open_channels(&ss)) || (rc = block_signals(&ss)) || (rc = start_command(&ss)))
		goto fail;
	raise_priority(&ss);
	if ((ss.o.sampler != TF_SAMPLER_PTRACE && (rc = open_perf(&ss))) ||
	    (rc = record_command(&ss)))
		goto fail;
	collect_results(&ss);
	*out = ss.rec;
	stopped = ss.stopped;
	ss.stopped = NULL;
	session_end(&ss);
	if (stopped) /* the caller's to say, after the recording */
		tf_error_set(TF_ERROR, "%s", stopped);
	free(stopped);
	return 0;
fail:
	session_end(&ss);
	tf_recording_free(ss.rec);
	return rc;
}

void tf_recording_free(tf_recording *r)
{
	if (!r)
		return;
	tf_spool_free(r->spool);
	free(r);
}

const tf_record_info *tf_recording_info(const tf_recording *r)
{
	return &r->info;
}
