/*
 * procfs.h - reading the /proc files the recorder looks at (private to
 * src/record): the fields of a stat line, a status field, where a thread
 * waits (its syscall file), an executable mapping of a maps file, and the
 * names of the syscalls a thread may wait in. Parsers take text and do no
 * I/O of their own, so each is tested on the kernel's exact formats;
 * the readers that open the files stay with their callers, which know how
 * long to keep them open.
 */
#ifndef TESTFLAME_RECORD_PROCFS_H
#define TESTFLAME_RECORD_PROCFS_H

#include "testflame/common.h"

#include <sys/types.h>

/*
 * The fields of /proc/.../stat after the command name, which may hold
 * spaces and parentheses: tok[0] is field 3 (the state), tok[1] the
 * parent's pid. Splits `buf` in place (fields end at a space, not a NUL:
 * read them with strtoull); returns how many were found, at most `max`.
 */
int tf_procfs_stat_fields(char *buf, char **tok, int max);

/* The parent pid of `pid` ("1234", or "self") from its stat file; -1 when
 * it cannot be read. */
pid_t tf_procfs_ppid(const char *pid);

/* The value of "Name:\tvalue" in a status file's text, into out (cut to
 * `len`); false when the field is absent. */
bool tf_procfs_status_field(const char *status, const char *name, char *out, size_t len);

/* Where a waiting thread waits: /proc/PID/task/TID/syscall. */
typedef struct {
	long nr;          /* the syscall; -1: blocked outside a syscall */
	uint64_t args[6];
	uint64_t sp, pc;
} tf_wait_site;

/* Parse a syscall file: 1 when the thread is running, 0 when it waits
 * (`out` filled), -1 for text that is neither. */
int tf_procfs_parse_syscall(const char *text, tf_wait_site *out);

/* "read", "futex", ..., "blocked" for -1, else "syscall_NR" in `buf`
 * (x86-64 numbers). */
const char *tf_procfs_syscall_name(long nr, char *buf, size_t len);

/* An executable mapping of a maps file, as perf's MMAP2 names it. */
typedef struct {
	uint64_t start, end, pgoff, ino;
	uint32_t maj, min;
	uint32_t prot, flags;   /* PROT_*, MAP_SHARED or MAP_PRIVATE */
	const char *name;       /* into the line; "//anon" for anonymous code */
} tf_maps_line;

/*
 * Parse one line of a maps file (without its newline). True for an
 * executable mapping worth an MMAP2: a file, anonymous code (named
 * "//anon" with its start as offset, perf's convention for JITs) or the
 * [vdso]; false for the rest ([stack], [vsyscall], data, bad lines).
 */
bool tf_procfs_parse_maps_line(const char *line, tf_maps_line *out);

#endif
