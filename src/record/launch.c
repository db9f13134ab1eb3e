/*
 * launch.c - the guard process and the held command (see record_int.h).
 *
 * Messages from the guard to testflame travel over one pipe as fixed-size
 * {type, value} records, each written atomically: 'P' the command's pid,
 * 'E' the errno of a failed execve (written by the command itself), 'S' the
 * command's wait status. The guard learns of testflame's death through
 * PR_SET_PDEATHSIG and then kills every descendant it has: as a subreaper
 * it inherits the orphans, so even grandchildren of a dead shell are found.
 * It then removes what testflame would have removed after the command (the
 * markers' directory, the runners' reports, the command's cgroup): a
 * killed testflame leaves nothing in TMPDIR or in the cgroup hierarchy.
 */

#include "record_int.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct msg {
	char type;
	int32_t value;
};

struct tf_launch {
	pid_t guard, pid;
	int info_fd;  /* read end: guard and command report here */
	int go_fd;    /* write end: one byte releases the command */
	bool exited, released;
	int wait_status, exec_errno;
};

int tf_launch_resolve(char **out, const char *file)
{
	const char *path;

	*out = NULL;
	if (!file || !*file)
		return tf_error_set(TF_ENOTFOUND, "empty command");
	if (strchr(file, '/')) {
		struct stat st;
		if (stat(file, &st) != 0)
			return tf_error_set_errno(TF_ENOTFOUND, "'%s'", file);
		if (S_ISDIR(st.st_mode))
			return tf_error_set(TF_EPERM, "'%s': is a directory", file);
		if (access(file, X_OK) != 0)
			return tf_error_set_errno(TF_EPERM, "'%s'", file);
		*out = tf_xstrdup(file);
		return 0;
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	bool denied = false;
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *cand = n ? tf_xasprintf("%.*s/%s", (int)n, p, file) : tf_xasprintf("./%s", file);
		struct stat st;
		if (stat(cand, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(cand, X_OK) == 0) {
				*out = cand;
				return 0;
			}
			denied = true;
		}
		free(cand);
		if (!e)
			break;
		p = e + 1;
	}
	if (denied)
		return tf_error_set(TF_EPERM, "'%s': permission denied", file);
	return tf_error_set(TF_ENOTFOUND, "'%s': command not found", file);
}

static void send_msg(int fd, char type, int32_t value)
{
	struct msg m;
	memset(&m, 0, sizeof(m)); /* no uninitialised padding on the pipe */
	m.type = type;
	m.value = value;
	ssize_t n;
	do {
		n = write(fd, &m, sizeof(m));
	} while (n < 0 && errno == EINTR);
}

/* Kill every descendant of the calling process, until none is left. */
static void kill_descendants(void)
{
	pid_t self = getpid();

	for (int round = 0; round < 1000; round++) {
		TF_VEC(pid_t) pids = { 0 };
		TF_VEC(pid_t) parents = { 0 };
		DIR *d = opendir("/proc");
		struct dirent *de;
		bool any = false;

		if (!d)
			return;
		while ((de = readdir(d))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			pid_t pp = tf_procfs_ppid(de->d_name);
			if (pp < 0)
				continue;
			tf_vec_push(&pids, (pid_t)atoi(de->d_name));
			tf_vec_push(&parents, pp);
		}
		closedir(d);
		/* descendants: repeat marking until stable (the tree is shallow) */
		bool *mark = tf_xcalloc(pids.n + 1, 1);
		for (bool changed = true; changed;) {
			changed = false;
			for (size_t i = 0; i < pids.n; i++) {
				if (mark[i])
					continue;
				bool child = parents.v[i] == self;
				for (size_t j = 0; !child && j < pids.n; j++)
					child = mark[j] && pids.v[j] == parents.v[i];
				if (child) {
					mark[i] = changed = true;
					kill(pids.v[i], SIGKILL);
					any = true;
				}
			}
		}
		free(mark);
		tf_vec_free(&pids);
		tf_vec_free(&parents);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!any) {
			/* nothing visible; reap what remains and stop */
			while (waitpid(-1, NULL, WNOHANG) > 0)
				;
			return;
		}
		usleep(1000);
	}
}

/* A directory and the files in it. */
/* Remove `name` under `at` and what it holds, a few levels deep (the
 * runners' reports: gtest/, py/__pycache__/); symbolic links are removed,
 * not followed. */
static void remove_tree(int at, const char *name, int depth)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		unlinkat(at, name, 0);
		return;
	}
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			if (depth > 0 && de->d_type == DT_DIR)
				remove_tree(dirfd(d), de->d_name, depth - 1);
			else
				unlinkat(dirfd(d), de->d_name, 0);
		}
	closedir(d);
	unlinkat(at, name, AT_REMOVEDIR);
}

static volatile sig_atomic_t parent_died;

static void on_parent_death(int sig)
{
	(void)sig;
	parent_died = 1;
}

static const int guard_ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU };

/* The command: wait for the go byte, then become the command. */
static void run_command(const tf_launch_opts *o, int go_rd, int info_wr,
			const struct sigaction *saved)
{
	char c;
	ssize_t n;

	for (size_t i = 0; i < TF_ARRAY_SIZE(guard_ignored); i++)
		sigaction(guard_ignored[i], &saved[i], NULL);
	signal(SIGUSR1, SIG_DFL);
	sigprocmask(SIG_SETMASK, o->orig_mask, NULL);
	do {
		n = read(go_rd, &c, 1);
	} while (n < 0 && errno == EINTR);
	if (n != 1)
		_exit(127); /* testflame gave up before starting us */
	for (char *const *e = o->extra_env; e && *e; e++)
		putenv(*e);
	if (o->cwd && chdir(o->cwd) != 0) {
		send_msg(info_wr, 'E', errno);
		_exit(126);
	}
	execvp(o->argv[0], o->argv);
	send_msg(info_wr, 'E', errno);
	_exit(errno == ENOENT ? 127 : 126);
}

static void guard_main(const tf_launch_opts *o, pid_t parent, int go_rd, int info_wr)
{
	struct sigaction saved[TF_ARRAY_SIZE(guard_ignored)], sa;
	pid_t cmd;
	int st;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < TF_ARRAY_SIZE(guard_ignored); i++)
		sigaction(guard_ignored[i], &sa, &saved[i]);
	sa.sa_handler = on_parent_death; /* no SA_RESTART: interrupt waitpid */
	sigaction(SIGUSR1, &sa, NULL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_PDEATHSIG, SIGUSR1);
	{
		sigset_t m;
		sigemptyset(&m);
		sigaddset(&m, SIGUSR1);
		sigprocmask(SIG_UNBLOCK, &m, NULL);
	}
	if (getppid() != parent)
		_exit(1);

	cmd = fork();
	if (cmd < 0) {
		send_msg(info_wr, 'E', errno);
		send_msg(info_wr, 'S', 127 << 8);
		_exit(1);
	}
	if (cmd == 0)
		run_command(o, go_rd, info_wr, saved);
	close(go_rd);
	send_msg(info_wr, 'P', cmd);

	for (;;) {
		pid_t w = waitpid(-1, &st, __WALL);
		if (w == cmd) {
			send_msg(info_wr, 'S', st);
			_exit(0);
		}
		if (w < 0 && errno == ECHILD)
			_exit(0);
		if (parent_died || getppid() != parent) {
			kill_descendants();
			for (size_t i = 0; i < TF_ARRAY_SIZE(o->remove_dir); i++)
				if (o->remove_dir[i])
					remove_tree(AT_FDCWD, o->remove_dir[i], 4);
			/* its last processes may take a moment to leave it (a
			 * second at most) */
			for (int i = 0; o->cgroup_dir && i < 1000 && rmdir(o->cgroup_dir) != 0 &&
					errno == EBUSY; i++)
				usleep(1000);
			_exit(1);
		}
	}
}

int tf_launch_start(tf_launch **out, const tf_launch_opts *o)
{
	int go[2], info[2];
	pid_t parent = getpid(), guard;
	tf_launch *l;

	*out = NULL;
	if (pipe2(go, O_CLOEXEC) != 0)
		return tf_error_set_errno(TF_ERROR, "cannot create a pipe");
	if (pipe2(info, O_CLOEXEC) != 0) {
		close(go[0]);
		close(go[1]);
		return tf_error_set_errno(TF_ERROR, "cannot create a pipe");
	}
	fflush(NULL);
	guard = fork();
	if (guard < 0) {
		close(go[0]); close(go[1]); close(info[0]); close(info[1]);
		return tf_error_set_errno(TF_ERROR, "cannot fork");
	}
	if (guard == 0) {
		close(go[1]);
		close(info[0]);
		guard_main(o, parent, go[0], info[1]);
		_exit(1);
	}
	close(go[0]);
	close(info[1]);

	l = tf_xcalloc(1, sizeof(*l));
	l->guard = guard;
	l->go_fd = go[1];
	l->info_fd = info[0];
	l->pid = -1;
	/* wait for the command's pid */
	for (;;) {
		struct msg m;
		ssize_t n = read(l->info_fd, &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(m)) {
			tf_launch_free(l);
			return tf_error_set(TF_ERROR, "the launcher process failed");
		}
		if (m.type == 'P') {
			l->pid = m.value;
			break;
		}
		if (m.type == 'E')
			l->exec_errno = m.value;
		if (m.type == 'S') {
			l->exited = true;
			l->wait_status = m.value;
			tf_launch_free(l);
			return tf_error_set(TF_ERROR, "cannot fork the command");
		}
	}
	fcntl(l->info_fd, F_SETFL, fcntl(l->info_fd, F_GETFL) | O_NONBLOCK);
	*out = l;
	return 0;
}

pid_t tf_launch_pid(const tf_launch *l)
{
	return l->pid;
}

int tf_launch_fd(const tf_launch *l)
{
	return l->info_fd;
}

int tf_launch_release(tf_launch *l)
{
	char c = 'g';
	ssize_t n;
	do {
		n = write(l->go_fd, &c, 1);
	} while (n < 0 && errno == EINTR);
	close(l->go_fd);
	l->go_fd = -1;
	if (n != 1)
		return tf_error_set_errno(TF_ERROR, "cannot start the command");
	l->released = true;
	return 0;
}

int tf_launch_poll(tf_launch *l, tf_launch_state *st)
{
	for (;;) {
		struct msg m;
		ssize_t n = read(l->info_fd, &m, sizeof(m));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n == 0) {
			if (!l->exited) {
				st->exited = false;
				return tf_error_set(TF_ERROR, "the launcher process died unexpectedly");
			}
			break;
		}
		if (n != (ssize_t)sizeof(m))
			break;
		if (m.type == 'E')
			l->exec_errno = m.value;
		else if (m.type == 'S') {
			l->exited = true;
			l->wait_status = m.value;
		}
	}
	st->exited = l->exited;
	st->wait_status = l->wait_status;
	st->exec_errno = l->exec_errno;
	return 0;
}

void tf_launch_signal(tf_launch *l, int sig)
{
	if (l->pid > 0 && !l->exited)
		kill(l->pid, sig);
}

bool tf_launch_forward_signals(tf_launch *l, int sigfd)
{
	struct signalfd_siginfo si;
	bool got = false;

	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		got = true;
		if ((int)si.ssi_code != SI_KERNEL)
			tf_launch_signal(l, (int)si.ssi_signo);
	}
	return got;
}

void tf_launch_free(tf_launch *l)
{
	if (!l)
		return;
	if (l->go_fd >= 0)
		close(l->go_fd); /* an unreleased command exits on EOF */
	if (l->pid > 0 && !l->exited && l->released) {
		/* still running: tell the guard to take the tree down */
		kill(l->guard, SIGUSR1);
	}
	if (l->guard > 0) {
		int st;
		while (waitpid(l->guard, &st, 0) < 0 && errno == EINTR)
			;
	}
	close(l->info_fd);
	free(l);
}
