/*
 * seccomp_helpers.h - what the ptrace and doctor tests share: make this
 * process refuse perf_event_open with EPERM, as Docker's default seccomp
 * profile does (and ptrace too, for a machine where nothing can sample),
 * with a raw BPF filter: the real syscall fails, nothing is pretended.
 * Call it in a forked child; the filter cannot be removed.
 */
#ifndef TESTFLAME_UNIT_SECCOMP_HELPERS_H
#define TESTFLAME_UNIT_SECCOMP_HELPERS_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

/* Returns false if the filter could not be installed. */
static inline bool unit_refuse_perf(bool ptrace_too)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ptrace_too ? __NR_ptrace : 0xfffff, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

#endif
