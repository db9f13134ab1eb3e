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
#include "cgroup.h"
#include "launch.h"
#include "markers.h"
#include "notice.h"
#include "perf.h"
#include "ptrace.h"
#include "pyread.h"
#include "spool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/resource.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
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
 * live hook.
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
	tf_pyread *py;
	TF_VEC(pending_exec) pending;
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

static int read_cmdline(live_ctx *lc, uint32_t pid, uint32_t tid, uint64_t time)
{
	char path[64], buf[8192];
	ssize_t cwdlen;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%u/cmdline", pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return CMDLINE_GONE;
	snprintf(path, sizeof(path), "/proc/%u/cwd", pid);
	cwdlen = readlink(path, buf, 4095);
	if (cwdlen < 0)
		cwdlen = 0;
	buf[cwdlen] = '\0';
	for (;;) {
		ssize_t r = read(fd, buf + cwdlen + 1 + n, sizeof(buf) - (size_t)cwdlen - 2 - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
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

static void on_live(void *ctx, const tf_rec_event *ev)
{
	live_ctx *lc = ctx;

	if (ev->type == TF_REC_COMM && ev->comm.exec) {
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
	if (lc->o->live)
		lc->o->live(lc->o->live_ctx, ev);
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
		if (tf_launch_forward_signals(l, sigfd))
			rec->info.interrupted = true;
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
		rc = tf_launch_poll(l, &st);
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

int tf_record_run(tf_recording **out, const tf_record_opts *opts)
{
	tf_record_opts o = *opts;
	tf_recording *rec;
	tf_launch *launch = NULL;
	tf_cgroup *cg = NULL;
	tf_perf *perf = NULL;
	tf_launch_opts lo;
	sigset_t set, ioset, orig;
	char *path = NULL;
	int sigfd = -1, iofd = -1, rc;
	bool blocked = false;
	live_ctx lc;
	TF_VEC(char *) env = { 0 };
	char *marker_env = NULL, *stopped = NULL;
	int nice_before = INT_MIN;

	*out = NULL;
	memset(&lc, 0, sizeof(lc));
	if (!o.argv || !o.argv[0])
		return tf_error_set(TF_EUSAGE, "no command to run");
	if (!o.freq)
		o.freq = TF_DEFAULT_FREQ;
	if (!o.stack_bytes)
		o.stack_bytes = 8192;
	o.stack_bytes = (o.stack_bytes + 7) & ~7u;
	if (o.stack_bytes > 65000)
		return tf_error_set(TF_EUSAGE, "stack size %u is too large (at most 65000 bytes)",
				    o.stack_bytes);

	rec = tf_xcalloc(1, sizeof(*rec));
	rec->info.callgraph = o.callgraph;
	rec->info.freq = o.freq;
	rec->info.sampler = TF_SAMPLER_PERF;
	rec->info.rung[0] = '\0';

	if (o.cwd && strchr(o.argv[0], '/') && o.argv[0][0] != '/') {
		char *abs = tf_xasprintf("%s/%s", o.cwd, o.argv[0]);
		rc = tf_launch_resolve(&path, abs);
		free(abs);
	} else {
		rc = tf_launch_resolve(&path, o.argv[0]);
	}
	free(path);
	if (rc) {
		/* like a shell: 127 for a missing command, 126 for one we cannot run */
		rec->info.exec_failed = true;
		rec->info.exit_status = rc == TF_ENOTFOUND ? 127 : 126;
		*out = rec;
		return 0;
	}
	rc = tf_spool_open(&rec->spool);
	if (rc)
		goto fail;
	lc.rec = rec;
	lc.o = &o;
	for (char *const *e = o.extra_env; e && *e; e++)
		tf_vec_push(&env, *e);
	if (o.markers) {
		rc = tf_markers_open(&lc.markers);
		if (rc)
			goto fail;
		marker_env = tf_markers_env(lc.markers);
		tf_vec_push(&env, marker_env);
	}
	if (o.python)
		tf_pyread_new(&lc.py, rec, &o);
	tf_vec_push(&env, NULL);

	/* signals ignored when we started (nohup, a shell's background job)
	 * stay ignored, for us as for the command */
	sigemptyset(&set);
	for (size_t i = 0; i < TF_ARRAY_SIZE(handled_signals); i++) {
		struct sigaction cur;
		if (sigaction(handled_signals[i], NULL, &cur) == 0 && cur.sa_handler == SIG_IGN)
			continue;
		sigaddset(&set, handled_signals[i]);
	}
	/* and SIGIO, the rings' own (perf.c), read from a signalfd of its own */
	sigemptyset(&ioset);
	sigaddset(&ioset, SIGIO);
	{
		sigset_t both = set;
		sigaddset(&both, SIGIO);
		sigprocmask(SIG_BLOCK, &both, &orig);
		blocked = true;
	}
	sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sigfd < 0) {
		rc = tf_error_set_errno(TF_ERROR, "cannot create a signalfd");
		goto fail;
	}
	iofd = signalfd(-1, &ioset, SFD_CLOEXEC | SFD_NONBLOCK);

	lo.argv = o.argv;
	lo.extra_env = env.v;
	lo.cwd = o.cwd;
	lo.orig_mask = &orig;
	lo.remove_dir[0] = lc.markers ? tf_markers_dir(lc.markers) : NULL;
	lo.remove_dir[1] = o.scratch_dir;
	/* a cgroup of the command's own, which the events follow (perf.c);
	 * --follow inherit copies them into every process instead, as perf
	 * record does */
	if (o.sampler != TF_SAMPLER_PTRACE && o.follow != TF_FOLLOW_INHERIT) {
		if (tf_cgroup_create(&cg) == 0) {
			lo.cgroup_dir = tf_cgroup_path(cg);
		} else if (o.follow == TF_FOLLOW_CGROUP) {
			rc = follow_refused();
			goto fail;
		} else {
			tf_record_notice(o.notice, o.notice_ctx, TF_NOTICE_VERBOSE,
					 "no cgroup for the command (%s): events are inherited",
					 tf_error_last());
		}
	}
	rc = tf_launch_start(&launch, &lo);
	if (rc)
		goto fail;
	rec->info.root_pid = tf_launch_pid(launch);
	if (cg && tf_cgroup_add(cg, tf_launch_pid(launch)) != 0) {
		if (o.follow == TF_FOLLOW_CGROUP) {
			rc = follow_refused();
			goto fail;
		}
		tf_record_notice(o.notice, o.notice_ctx, TF_NOTICE_VERBOSE,
				 "%s: events are inherited", tf_error_last());
		tf_cgroup_free(cg);
		cg = NULL;
	}
	/*
	 * The reader must run as soon as the kernel has news: a program of a
	 * millisecond is gone before a reader that waits for the scheduler
	 * reads its arguments. Where allowed (CAP_SYS_NICE), this thread
	 * alone, not the command, runs at a higher priority while recording.
	 */
	errno = 0;
	nice_before = getpriority(PRIO_PROCESS, 0);
	if (errno == 0 && nice_before > -10 && setpriority(PRIO_PROCESS, 0, -10) != 0)
		nice_before = INT_MIN;
	else if (errno)
		nice_before = INT_MIN;

	if (o.sampler != TF_SAMPLER_PTRACE) {
		tf_perf_opts po = { tf_launch_pid(launch), o.event, o.callgraph, o.freq,
				    o.stack_bytes, o.notice, o.notice_ctx, lc.py,
				    cg ? tf_cgroup_fd(cg) : -1, o.offcpu, o.offcpu_max };
		rc = tf_perf_open(&perf, &po, rec);
		if (perf && cg)
			tf_record_notice(o.notice, o.notice_ctx, TF_NOTICE_VERBOSE,
					 tf_perf_by_cgroup(perf) ?
					 "events follow the command's cgroup '%s', not inherited" :
					 "events are inherited: CPU-wide events on the cgroup '%s' "
					 "were refused", tf_cgroup_path(cg));
		if (!rc && perf && o.follow == TF_FOLLOW_CGROUP && !tf_perf_by_cgroup(perf)) {
			rc = tf_error_set(TF_EUNSUPPORTED,
					  "--follow cgroup: CPU-wide events on the cgroup were refused "
					  "(they need perf_event_paranoid <= 0 or CAP_PERFMON; "
					  "hardware events always inherit)");
			goto fail;
		}
		rec->info.by_cgroup = tf_perf_by_cgroup(perf);
		if ((rc == TF_EPERM || rc == TF_EUNSUPPORTED) && o.sampler == TF_SAMPLER_AUTO) {
			ladder_notice(&o, rc);
			rc = 0;
		}
		if (rc)
			goto fail;
		/* a cgroup no event follows (perf refused, ptrace instead; or
		 * inherited events) is given back now, while the command is
		 * still held in it */
		if (cg && !tf_perf_by_cgroup(perf)) {
			tf_cgroup_free(cg);
			cg = NULL;
		}
		/* where the rings cannot signal, the reader polls them */
		if (perf && iofd >= 0) {
			if (tf_perf_signal(perf, SIGIO) == 0) {
				lc.drain_within = tf_perf_drain_within(perf);
			} else {
				close(iofd);
				iofd = -1;
			}
		}
	}

	rec->info.start_ns = tf_now_ns();
	rec->info.start_realtime_ns = realtime_ns();
	if (perf) {
		rc = tf_launch_release(launch);
		if (!rc && (rc = pump_perf(rec, perf, launch, sigfd, iofd, &o, &lc)) != 0) {
			stop_recording(rec, &perf, launch, sigfd, &stopped);
			rc = 0;
		}
	} else {
		tf_ptrace_loop pl = { sigfd, on_live, &lc, lc.markers, lc.py };
		rc = tf_ptrace_record(rec, launch, &o, &pl);
	}
	rec->info.end_ns = tf_now_ns();
	if (nice_before != INT_MIN)
		setpriority(PRIO_PROCESS, 0, nice_before);
	nice_before = INT_MIN;
	if (!rc)
		rc = tf_pyread_error(lc.py);
	if (rc)
		goto fail;
	{
		tf_launch_state st;
		tf_launch_poll(launch, &st);
		rec->info.wait_status = st.wait_status;
		rec->info.exit_status = shell_status(st.wait_status);
		if (st.exec_errno) {
			rec->info.exec_failed = true;
			tf_error_set(st.exec_errno == ENOENT ? TF_ENOTFOUND : TF_EPERM,
				     "'%s': %s", o.argv[0], strerror(st.exec_errno));
		}
	}
	tf_perf_close(perf);
	perf = NULL;
	tf_launch_free(launch);
	launch = NULL;
	tf_cgroup_free(cg);
	cg = NULL;
	if (!stopped && tf_spool_finish(rec->spool) != 0) {
		/* the last records did not fit: the command has run, say how */
		stopped = tf_xstrdup(tf_error_last());
		rec->info.stopped = true;
	}
	rec->info.spool_bytes = tf_spool_size(rec->spool);
	if (lc.markers)
		rec->info.markers_ignored = tf_markers_bad_lines(lc.markers);
	tf_markers_free(lc.markers);
	tf_pyread_free(lc.py);
	tf_vec_free(&env);
	tf_vec_free(&lc.pending);
	free(marker_env);
	close(sigfd);
	restore_signals(iofd, &orig);
	if (stopped) {
		tf_error_set(TF_ERROR, "%s", stopped);
		free(stopped);
	}
	*out = rec;
	return 0;

fail:
	if (nice_before != INT_MIN)
		setpriority(PRIO_PROCESS, 0, nice_before);
	tf_markers_free(lc.markers);
	tf_pyread_free(lc.py);
	tf_vec_free(&env);
	tf_vec_free(&lc.pending);
	free(marker_env);
	tf_perf_close(perf);
	tf_launch_free(launch);
	tf_cgroup_free(cg);
	if (sigfd >= 0)
		close(sigfd);
	if (blocked)
		restore_signals(iofd, &orig);
	tf_recording_free(rec);
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
