/*
 * procfs.c - the /proc formats the recorder reads (see record_int.h): the
 * ptrace sampler polls a thread's stat, schedstat and syscall files on
 * every tick and the maps of every process it samples, the guard reads
 * stat files to find the tree it must kill, and the probe reads its own
 * status. One parser for each format, whoever reads it.
 */

#include "record_int.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

int tf_procfs_stat_fields(char *buf, char **tok, int max)
{
	char *p = strrchr(buf, ')');
	int n = 0;
	if (!p)
		return 0;
	for (p++; n < max;) {
		while (*p == ' ')
			p++;
		if (!*p || *p == '\n')
			break;
		tok[n++] = p;
		while (*p && *p != ' ')
			p++;
	}
	return n;
}

pid_t tf_procfs_ppid(const char *pid)
{
	char path[300], buf[512], *tok[2], *end;
	int fd;
	ssize_t n;
	long ppid;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (tf_procfs_stat_fields(buf, tok, 2) < 2)
		return -1;
	ppid = strtol(tok[1], &end, 10);
	return end == tok[1] ? -1 : (pid_t)ppid;
}

bool tf_procfs_status_field(const char *status, const char *name, char *out, size_t len)
{
	size_t n = strlen(name);
	for (const char *p = status; p && *p;) {
		const char *nl = strchr(p, '\n');
		if (strncmp(p, name, n) == 0 && p[n] == ':') {
			const char *v = p + n + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t l = nl ? (size_t)(nl - v) : strlen(v);
			if (l >= len)
				l = len - 1;
			memcpy(out, v, l);
			out[l] = '\0';
			return true;
		}
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

int tf_procfs_parse_syscall(const char *text, tf_wait_site *k)
{
	const char *p;
	char *end;
	uint64_t v[8];
	int n = 0;

	if (strncmp(text, "running", 7) == 0)
		return 1;
	memset(k, 0, sizeof(*k));
	k->nr = strtol(text, &end, 10);
	if (end == text)
		return -1;
	for (p = end; n < 8; p = end) {
		v[n] = strtoull(p, &end, 16);
		if (end == p)
			break;
		n++;
	}
	/* "-1 SP PC" when blocked outside a syscall, else NR, six arguments,
	 * SP and PC */
	if (n == 2) {
		k->sp = v[0];
		k->pc = v[1];
	} else if (n == 8) {
		memcpy(k->args, v, sizeof(k->args));
		k->sp = v[6];
		k->pc = v[7];
	} else {
		return -1;
	}
	return 0;
}

/* Names of the syscalls a thread may wait in (x86-64 numbers). */
#define SC(n) [__NR_##n] = #n,
static const char *const syscall_names[] = {
	SC(read) SC(write) SC(open) SC(close) SC(stat) SC(fstat) SC(lstat) SC(poll)
	SC(lseek) SC(mmap) SC(mprotect) SC(munmap) SC(brk) SC(rt_sigaction) SC(ioctl)
	SC(pread64) SC(pwrite64) SC(readv) SC(writev) SC(access) SC(pipe) SC(select)
	SC(sched_yield) SC(msync) SC(madvise) SC(dup2) SC(pause) SC(nanosleep)
	SC(getitimer) SC(alarm) SC(sendfile) SC(socket) SC(connect) SC(accept)
	SC(sendto) SC(recvfrom) SC(sendmsg) SC(recvmsg) SC(shutdown) SC(bind)
	SC(listen) SC(clone) SC(fork) SC(vfork) SC(execve) SC(exit) SC(wait4)
	SC(kill) SC(semop) SC(msgsnd) SC(msgrcv) SC(fcntl) SC(flock) SC(fsync)
	SC(fdatasync) SC(truncate) SC(ftruncate) SC(getdents) SC(rename) SC(mkdir)
	SC(rmdir) SC(creat) SC(link) SC(unlink) SC(readlink) SC(chmod) SC(ptrace)
	SC(rt_sigtimedwait) SC(rt_sigsuspend) SC(sigaltstack) SC(mlock) SC(sync)
	SC(gettid) SC(tkill) SC(futex) SC(io_getevents) SC(getdents64)
	SC(semtimedop) SC(clock_nanosleep) SC(exit_group) SC(epoll_wait) SC(tgkill)
	SC(mq_timedsend) SC(mq_timedreceive) SC(waitid) SC(inotify_add_watch)
	SC(openat) SC(mkdirat) SC(newfstatat) SC(unlinkat) SC(renameat) SC(pselect6)
	SC(ppoll) SC(splice) SC(tee) SC(sync_file_range) SC(vmsplice) SC(epoll_pwait)
	SC(fallocate) SC(accept4) SC(eventfd2) SC(epoll_create1) SC(pipe2)
	SC(preadv) SC(pwritev) SC(recvmmsg) SC(syncfs) SC(sendmmsg) SC(getrandom)
	SC(execveat) SC(copy_file_range) SC(preadv2) SC(pwritev2) SC(statx)
	SC(io_pgetevents) SC(io_uring_enter) SC(openat2) SC(clone3) SC(faccessat2)
	SC(epoll_pwait2) SC(restart_syscall)
};

const char *tf_procfs_syscall_name(long nr, char *buf, size_t len)
{
	if (nr < 0)
		return "blocked";
	if ((size_t)nr < TF_ARRAY_SIZE(syscall_names) && syscall_names[nr])
		return syscall_names[nr];
	snprintf(buf, len, "syscall_%ld", nr);
	return buf;
}

bool tf_procfs_parse_maps_line(const char *line, tf_maps_line *l)
{
	char perms[8];
	unsigned long long start, end, off, ino;
	int name_at = 0;

	memset(l, 0, sizeof(*l));
	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &l->maj,
		   &l->min, &ino, &name_at) < 7 || perms[2] != 'x')
		return false;
	l->start = start;
	l->end = end;
	l->pgoff = off;
	l->ino = ino;
	l->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
	l->flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
	l->name = name_at ? line + name_at : "";
	if (!*l->name || strncmp(l->name, "[anon:", 6) == 0) {
		/* perf's name and offset for anonymous code (JITs) */
		l->name = "//anon";
		l->pgoff = start;
	}
	return l->name[0] != '[' || strcmp(l->name, "[vdso]") == 0;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

bool tf_procfs_parse_mountinfo_line(char *line, tf_mount_line *out)
{
	char *f[5], *save = NULL;
	int k = 0;

	/* the optional fields end at " - ", then the type */
	char *sep = strstr(line, " - ");
	if (!sep)
		return false;
	*sep = '\0';
	for (char *t = strtok_r(line, " ", &save); t && k < 5; t = strtok_r(NULL, " ", &save))
		f[k++] = t;
	char *type = strtok_r(sep + 3, " ", &save);
	if (k < 5 || !type)
		return false;
	unescape(f[3]);
	unescape(f[4]);
	out->dev = f[2];
	out->root = f[3];
	out->mount = f[4];
	out->type = type;
	return true;
}
