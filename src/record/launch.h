/*
 * launch.h - starting the profiled command, held until the sampler is armed
 * (private to src/record).
 *
 * testflame -> guard -> command. The guard is a child subreaper: every
 * process the command leaves behind is re-parented to it, and if testflame
 * dies (even by SIGKILL) the guard kills the whole tree. The command itself
 * keeps testflame's process group, stdio, environment (plus the variables
 * testflame adds), working directory and signal dispositions, and waits on a
 * pipe until the sampler is attached, so not one instruction runs unseen.
 */
#ifndef TESTFLAME_RECORD_LAUNCH_H
#define TESTFLAME_RECORD_LAUNCH_H

#include "testflame/common.h"

#include <signal.h>
#include <sys/types.h>

typedef struct tf_launch tf_launch;

typedef struct {
	char *const *argv;
	char *const *extra_env;
	const char *cwd;           /* NULL: testflame's own */
	const sigset_t *orig_mask; /* the signal mask the command must get */
	const char *remove_dir[3]; /* directories (the markers', the runners'
				    * reports, the allocation sampler's), removed
				    * with what they hold by the guard when
				    * testflame dies before the command */
	const char *cgroup_dir;    /* the command's cgroup, removed (empty) then too */
} tf_launch_opts;

/*
 * Look `file` up in PATH as execvp() would. Returns 0 and the path, or
 * TF_ENOTFOUND ("command not found") / TF_EPERM (not executable).
 */
int tf_launch_resolve(char **out, const char *file);

/* Fork the guard and the command; the command waits until released. */
int tf_launch_start(tf_launch **out, const tf_launch_opts *o);
pid_t tf_launch_pid(const tf_launch *l);
/* The descriptor to poll: readable when the guard reports. */
int tf_launch_fd(const tf_launch *l);
/* Let the command exec. */
int tf_launch_release(tf_launch *l);

typedef struct {
	bool exited;       /* the command is gone; wait_status is valid */
	int wait_status;
	int exec_errno;    /* non-zero when execve failed */
} tf_launch_state;
/* Read what the guard reported (non-blocking). Returns 0, or an error if
 * the guard vanished without a word. */
int tf_launch_poll(tf_launch *l, tf_launch_state *st);
/* Forward a signal to the command. */
void tf_launch_signal(tf_launch *l, int sig);
/*
 * Read every signal pending on `sigfd` (a signalfd of SIGINT, SIGTERM, ...)
 * and forward those the command has not had already: a terminal's signal
 * (si_code SI_KERNEL) reached the whole process group, the command
 * included; one sent to testflame alone is passed on. Returns true if any
 * signal was read.
 */
bool tf_launch_forward_signals(tf_launch *l, int sigfd);
/* Reap the guard; if the command still runs, kill its whole tree first. */
void tf_launch_free(tf_launch *l);

#endif
