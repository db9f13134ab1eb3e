/*
 * spawn.c - run a program and keep what it prints: the test runners' own
 * lists (a Catch2 binary's --list-test-names-only, libtest's --list, go
 * list), asked for after the suite ran, apart from it.
 *
 * The program gets nothing to read (stdin is /dev/null) and a process group
 * of its own, which is killed whole when it outlives its time (a list that
 * hangs, a program that ignores the flag and runs its work): testflame's
 * run must end whatever the program does. What it prints beyond `max` is
 * read and dropped, so it never blocks on a full pipe.
 */
#include "testflame/common.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void keep(tf_buf *b, const char *data, size_t n, size_t max)
{
	if (!b || b->len >= max)
		return;
	tf_buf_put(b, data, TF_MIN(n, max - b->len));
}

int tf_spawn_capture(tf_buf *out, tf_buf *err, const char *const *argv, const char *const *env,
		     const char *dir, unsigned timeout_ms, size_t max)
{
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st = -1;
	sigset_t chld, old_mask;
	pid_t pid;

	if (!argv || !argv[0])
		return tf_error_set(TF_EINVAL, "no program to run");
	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot run '%s'", argv[0]);
		for (int i = 0; i < 2; i++) {
			if (po[i] >= 0)
				close(po[i]);
			if (pe[i] >= 0)
				close(pe[i]);
		}
		return rc;
	}
	/* the child's exit is ours to wait for, whatever the caller's
	 * SIGCHLD disposition */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);
	pid = fork();
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a testflame killed takes it along */
		int in = open("/dev/null", O_RDONLY);
		/* one stream for both when the caller wants them in order */
		if (in < 0 || dup2(in, 0) < 0 || dup2(po[1], 1) < 0 ||
		    dup2(err == out && out ? po[1] : pe[1], 2) < 0)
			_exit(127);
		if (dir && chdir(dir) != 0)
			_exit(127);
		if (env)
			execvpe(argv[0], (char *const *)argv, (char *const *)env);
		else
			execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	if (pid < 0) {
		close(po[0]);
		close(pe[0]);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		return tf_error_set_errno(TF_ERROR, "cannot run '%s'", argv[0]);
	}
	setpgid(pid, pid); /* either side may do it first */

	uint64_t deadline = tf_now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	struct pollfd fds[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
	bool killed = false;
	char buf[65536];
	while (fds[0].fd >= 0 || fds[1].fd >= 0) {
		uint64_t now = tf_now_ns();
		if (now >= deadline) {
			kill(-pid, SIGKILL);
			killed = true;
			break;
		}
		int r = poll(fds, 2, (int)TF_MIN((deadline - now) / 1000000ULL + 1, 1000ULL));
		if (r < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2 && r > 0; i++) {
			if (fds[i].fd < 0 || !fds[i].revents)
				continue;
			ssize_t n = read(fds[i].fd, buf, sizeof(buf));
			if (n > 0) {
				keep(i && err != out ? err : out, buf, (size_t)n, max);
			} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
				close(fds[i].fd);
				fds[i].fd = -1;
			}
		}
	}
	for (int i = 0; i < 2; i++)
		if (fds[i].fd >= 0)
			close(fds[i].fd);
	/* the pipes closed: what is left of the group has its time too */
	while (waitpid(pid, &st, killed ? 0 : WNOHANG) == 0) {
		if (tf_now_ns() >= deadline) {
			kill(-pid, SIGKILL);
			killed = true;
			continue;
		}
		struct timespec ms = { 0, 1000000 };
		nanosleep(&ms, NULL);
	}
	kill(-pid, SIGKILL); /* what it left running in its group */
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	if (killed)
		return tf_error_set(TF_ERROR, "'%s' did not end within %u ms", argv[0], timeout_ms);
	return st < 0 ? tf_error_set_errno(TF_ERROR, "cannot wait for '%s'", argv[0]) : st;
}

int tf_spawn_capture_scratch(tf_buf *out, tf_buf *err, const char *const *argv,
			     const char *const *env, unsigned timeout_ms, size_t max)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = tf_xasprintf("%s/testflame-list-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot make a directory for '%s'", argv[0]);
		free(dir);
		return rc;
	}
	int st = tf_spawn_capture(out, err, argv, env, dir, timeout_ms, max);
	tf_rmtree(dir);
	free(dir);
	return st;
}
