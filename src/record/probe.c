/*
 * probe.c - what this machine lets testflame sample with, and why not.
 *
 * perf_event_open can be refused by three different gatekeepers, each with
 * its own fix: the kernel's perf_event_paranoid sysctl (Debian and Ubuntu
 * add level 3 and up, which refuses everything without CAP_PERFMON), a
 * seccomp filter (Docker's default profile answers EPERM unless the
 * container has CAP_PERFMON or CAP_SYS_ADMIN), or a kernel built without
 * perf events (ENOSYS, or ENOENT for a counter the machine lacks). The
 * probe opens the events testflame would use, on itself, and reads the
 * facts needed to tell these apart; the advice functions turn them into a
 * reason and the exact fix. The ptrace probe traces a throwaway child the
 * way the ptrace sampler does, so its verdict is the sampler's own.
 */

#include "record_int.h"
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define CAP_PERFMON_BIT 38
#define CAP_SYS_ADMIN_BIT 21
#define CAP_SYS_PTRACE_BIT 19

static int read_int_file(const char *path, int dflt)
{
	tf_buf b = TF_BUF_INIT;
	int v = dflt;
	if (tf_file_read(&b, path) == 0) {
		char *end;
		long x = strtol(b.ptr, &end, 10);
		if (end != b.ptr)
			v = (int)x;
	}
	tf_buf_free(&b);
	return v;
}

static const char *detect_container(void)
{
	tf_buf b = TF_BUF_INIT;
	const char *kind = NULL;

	if (access("/.dockerenv", F_OK) == 0)
		return "docker";
	if (access("/run/.containerenv", F_OK) == 0)
		return "podman";
	if (getenv("KUBERNETES_SERVICE_HOST"))
		return "kubernetes";
	if (tf_file_read(&b, "/proc/1/cgroup") == 0) {
		if (strstr(b.ptr, "kubepods"))
			kind = "kubernetes";
		else if (strstr(b.ptr, "docker"))
			kind = "docker";
		else if (strstr(b.ptr, "lxc"))
			kind = "lxc";
	}
	tf_buf_free(&b);
	if (!kind && getenv("container"))
		kind = "lxc";
	return kind;
}

static int try_perf(uint32_t type, uint64_t config, bool kernel)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = 1;
	a.exclude_kernel = !kernel;
	a.exclude_hv = 1;
	fd = syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

/* What --follow auto would get: a cgroup of the command's own, and a
 * CPU-wide cpu-clock event that follows it (perf.c). */
static void probe_follow(tf_record_caps *c)
{
	tf_cgroup *cg;
	struct perf_event_attr a;

	if (tf_cgroup_create(&cg) != 0) {
		snprintf(c->follow_why, sizeof(c->follow_why), "%s", tf_error_last());
		tf_error_clear();
		return;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	a.exclude_hv = 1;
	long fd = syscall(SYS_perf_event_open, &a, tf_cgroup_fd(cg), 0, -1,
			  PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);
	if (fd >= 0) {
		c->follow_cgroup = true;
		close((int)fd);
	} else {
		snprintf(c->follow_why, sizeof(c->follow_why),
			 "CPU-wide events on a cgroup are refused (%s)", strerror(errno));
	}
	tf_cgroup_free(cg);
}

/* Trace a child the way the ptrace sampler does: seize, interrupt, read
 * its registers and stack. Fills ptrace_errno and vm_readv_errno. */
static void probe_ptrace(tf_record_caps *c)
{
	int hold[2];
	pid_t pid;
	int st, err = 0;

	c->ptrace_errno = c->vm_readv_errno = 0;
	if (pipe2(hold, O_CLOEXEC) != 0) {
		c->ptrace_errno = c->vm_readv_errno = errno;
		return;
	}
	pid = fork();
	if (pid < 0) {
		c->ptrace_errno = c->vm_readv_errno = errno;
		close(hold[0]);
		close(hold[1]);
		return;
	}
	if (pid == 0) {
		char ch;
		close(hold[1]);
		while (read(hold[0], &ch, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(hold[0]);
	if (ptrace(PTRACE_SEIZE, pid, 0, PTRACE_O_EXITKILL) != 0) {
		err = errno;
		goto done;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) != 0) {
		err = errno;
		goto done;
	}
	for (int i = 0;; i++) {
		pid_t w = waitpid(pid, &st, __WALL | WNOHANG);
		if (w == pid)
			break;
		if (w < 0 || i > 2000) {
			err = w < 0 ? errno : ETIMEDOUT;
			goto done;
		}
		usleep(1000);
	}
	if (!WIFSTOPPED(st)) {
		err = ESRCH;
		goto done;
	}
	{
		struct user_regs_struct regs;
		struct iovec iov = { &regs, sizeof(regs) };
		char buf[64];
		struct iovec local = { buf, sizeof(buf) }, remote;
		if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) != 0) {
			err = errno;
			goto done;
		}
		remote.iov_base = (void *)(uintptr_t)regs.rsp;
		remote.iov_len = sizeof(buf);
		if (process_vm_readv(pid, &local, 1, &remote, 1, 0) < 0)
			c->vm_readv_errno = errno;
	}
done:
	c->ptrace_errno = err;
	if (err && !c->vm_readv_errno)
		c->vm_readv_errno = err;
	kill(pid, SIGKILL);
	close(hold[1]);
	while (waitpid(pid, &st, __WALL) < 0 && errno == EINTR)
		;
}

void tf_record_probe(tf_record_caps *c, int what)
{
	tf_buf st = TF_BUF_INIT;
	char v[64];

	memset(c, 0, sizeof(*c));
	c->seccomp = -1;
	c->ptrace_scope = read_int_file("/proc/sys/kernel/yama/ptrace_scope", -1);
	c->paranoid = access("/proc/sys/kernel/perf_event_paranoid", F_OK) == 0
			      ? tf_perf_paranoid() : INT_MIN;
	c->max_sample_rate = read_int_file("/proc/sys/kernel/perf_event_max_sample_rate", 0);
	if (tf_file_read(&st, "/proc/self/status") == 0) {
		if (tf_procfs_status_field(st.ptr, "Seccomp", v, sizeof(v)))
			c->seccomp = atoi(v);
		if (tf_procfs_status_field(st.ptr, "CapEff", v, sizeof(v))) {
			unsigned long long caps = strtoull(v, NULL, 16);
			c->cap_perfmon = caps >> CAP_PERFMON_BIT & 1;
			c->cap_sys_admin = caps >> CAP_SYS_ADMIN_BIT & 1;
			c->cap_sys_ptrace = caps >> CAP_SYS_PTRACE_BIT & 1;
		}
	}
	tf_buf_free(&st);
	c->container = detect_container();
	if (what & TF_PROBE_PERF) {
		c->perf_errno = try_perf(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, false);
		c->perf_kernel = !c->perf_errno &&
				 !try_perf(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, true);
		c->pmu_errno = c->perf_errno ? c->perf_errno
				: try_perf(PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, false);
	}
	if (what & TF_PROBE_PTRACE)
		probe_ptrace(c);
	if ((what & TF_PROBE_FOLLOW) && !c->perf_errno)
		probe_follow(c);
}

/* The kernel itself would let this process open a user-space event. */
static bool kernel_allows_perf(const tf_record_caps *c)
{
	return c->paranoid != INT_MIN && (c->paranoid <= 2 || c->cap_perfmon || c->cap_sys_admin);
}

static const char docker_perf_fix[] =
	"run the container with --cap-add PERFMON (Docker 20.10+; Podman and older Docker: "
	"--cap-add SYS_ADMIN) or --security-opt seccomp=unconfined; GitLab's docker "
	"executor: cap_add = [\"PERFMON\"] under [runners.docker] in config.toml";
/* A runtime's profile is made for the capabilities it grants: a process that
 * holds CAP_PERFMON and is refused gains nothing from another --cap-add
 * PERFMON (Podman's default profile allows perf_event_open only with
 * CAP_SYS_ADMIN). */
static const char sys_admin_perf_fix[] =
	"run the container with --cap-add SYS_ADMIN or --security-opt seccomp=unconfined "
	"(its seccomp profile refuses perf_event_open even with CAP_PERFMON, as Podman's "
	"does); GitLab's docker executor: privileged = true, or cap_add = [\"SYS_ADMIN\"], "
	"under [runners.docker] in config.toml";

void tf_record_perf_advice(const tf_record_caps *c, char *why, size_t whylen, char *fix,
			   size_t fixlen)
{
	const char *where = c->container ? "on the host: " : "";
	int e = c->perf_errno;

	if (!e) {
		snprintf(why, whylen, "perf_event_open is allowed");
		snprintf(fix, fixlen, "none needed");
	} else if (c->paranoid == INT_MIN || (e == ENOSYS && c->seccomp != 2)) {
		snprintf(why, whylen, "this kernel has no perf events (built without CONFIG_PERF_EVENTS)");
		snprintf(fix, fixlen, "use a kernel with CONFIG_PERF_EVENTS=y; the ptrace sampler "
			 "works meanwhile");
	} else if (c->seccomp == 2 && (e == ENOSYS || kernel_allows_perf(c))) {
		bool podman = c->container && strcmp(c->container, "podman") == 0;
		snprintf(why, whylen, "a seccomp filter refuses perf_event_open (%s)%s",
			 strerror(e), c->container && strcmp(c->container, "docker") == 0 &&
			 !c->cap_perfmon ? ", as Docker's default profile does"
			 : podman ? ", as Podman's default profile does without CAP_SYS_ADMIN" : "");
		snprintf(fix, fixlen, "%s",
			 c->cap_perfmon || podman ? sys_admin_perf_fix : docker_perf_fix);
	} else if ((e == EPERM || e == EACCES) && c->paranoid >= 3) {
		snprintf(why, whylen, "kernel.perf_event_paranoid=%d refuses perf events to "
			 "processes without CAP_PERFMON", c->paranoid);
		snprintf(fix, fixlen, "%ssudo sysctl kernel.perf_event_paranoid=2 (to keep it: "
			 "echo kernel.perf_event_paranoid=2 | sudo tee /etc/sysctl.d/99-perf.conf)%s",
			 where, c->container ? ", or give the container CAP_PERFMON (--cap-add PERFMON)" : "");
	} else if (e == EPERM || e == EACCES) {
		snprintf(why, whylen, "permission denied (%s) although perf_event_paranoid=%d allows it: "
			 "a security module (SELinux, AppArmor) or a seccomp filter refuses it",
			 strerror(e), c->paranoid);
		snprintf(fix, fixlen, "allow perf_event_open in the security policy, or grant CAP_PERFMON");
	} else {
		snprintf(why, whylen, "perf_event_open fails: %s", strerror(e));
		snprintf(fix, fixlen, "none known; the ptrace sampler works without it");
	}
}

void tf_record_ptrace_advice(const tf_record_caps *c, char *why, size_t whylen, char *fix,
			     size_t fixlen)
{
	int e = c->ptrace_errno;

	if (!e) {
		if (c->vm_readv_errno) {
			snprintf(why, whylen, "tracing children works; process_vm_readv is refused (%s), "
				 "so stacks are read through /proc/PID/mem", strerror(c->vm_readv_errno));
			snprintf(fix, fixlen, "none needed");
		} else {
			snprintf(why, whylen, "tracing children works");
			snprintf(fix, fixlen, "none needed");
		}
	} else if (c->ptrace_scope == 3) {
		snprintf(why, whylen, "kernel.yama.ptrace_scope=3 forbids ptrace entirely");
		snprintf(fix, fixlen, "ptrace_scope 3 cannot be lowered until reboot: boot with "
			 "kernel.yama.ptrace_scope=1 in /etc/sysctl.d/, or use the perf sampler");
	} else if (c->ptrace_scope == 2 && !c->cap_sys_ptrace) {
		snprintf(why, whylen, "kernel.yama.ptrace_scope=2 lets only CAP_SYS_PTRACE trace processes");
		snprintf(fix, fixlen, "sudo sysctl kernel.yama.ptrace_scope=1%s",
			 c->container ? " on the host, or --cap-add SYS_PTRACE for the container" : "");
	} else if (c->seccomp == 2) {
		snprintf(why, whylen, "a seccomp filter refuses ptrace (%s)", strerror(e));
		snprintf(fix, fixlen, "run the container with --cap-add SYS_PTRACE (Docker refuses "
			 "ptrace by default on kernels older than 4.8) or --security-opt seccomp=unconfined");
	} else {
		snprintf(why, whylen, "ptrace of a child fails: %s", strerror(e));
		snprintf(fix, fixlen, "check the security policy (SELinux deny_ptrace, AppArmor) "
			 "or grant CAP_SYS_PTRACE");
	}
}
