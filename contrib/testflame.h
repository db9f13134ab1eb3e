/*
 * testflame.h - test markers for C and C++ suites: tell testflame where each
 * test begins and ends, so its samples are attributed to it (SPEC §4).
 * Header-only; does nothing unless the suite runs under testflame.
 *
 *     #include "testflame.h"
 *     TESTFLAME_BEGIN("parser/empty_input");
 *     ... the test ...
 *     TESTFLAME_END("parser/empty_input");
 *
 * Markers are per thread (@tid) and carry a CLOCK_MONOTONIC timestamp, the
 * clock of the samples, and the thread's CPU clock, which gives testflame
 * the test's exact CPU time. Use testflame_mark_process() for a test that
 * runs in several threads or child processes (the process's CPU clock).
 */
#ifndef TESTFLAME_MARKERS_H
#define TESTFLAME_MARKERS_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline void testflame_write_marker(const char *what, const char *name, int thread)
{
	const char *path = getenv("TESTFLAME_MARKERS");
	char line[1024], clean[900];
	struct timespec ts, cpu;
	size_t i;
	int fd, n;

	if (!path || !*path)
		return;
	/* one line per marker: a newline in a name must not split it */
	for (i = 0; name[i] && i < sizeof(clean) - 1; i++)
		clean[i] = (name[i] == '\n' || name[i] == '\r') ? ' ' : name[i];
	clean[i] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &ts);
	clock_gettime(thread ? CLOCK_THREAD_CPUTIME_ID : CLOCK_PROCESS_CPUTIME_ID, &cpu);
	if (thread)
		n = snprintf(line, sizeof(line), "%s %s @tid=%ld @pid=%ld @t=%llu @cpu=%llu\n", what,
			     clean, (long)syscall(SYS_gettid), (long)getpid(),
			     (unsigned long long)ts.tv_sec * 1000000000ULL +
			     (unsigned long long)ts.tv_nsec,
			     (unsigned long long)cpu.tv_sec * 1000000000ULL +
			     (unsigned long long)cpu.tv_nsec);
	else
		n = snprintf(line, sizeof(line), "%s %s @pid=%ld @t=%llu @cpu=%llu\n", what, clean,
			     (long)getpid(),
			     (unsigned long long)ts.tv_sec * 1000000000ULL +
			     (unsigned long long)ts.tv_nsec,
			     (unsigned long long)cpu.tv_sec * 1000000000ULL +
			     (unsigned long long)cpu.tv_nsec);
	if (n <= 0)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	/* a single append: lines of concurrent writers never interleave */
	if (write(fd, line, (size_t)n) < 0) {
		/* markers are best effort: never fail the test for them */
	}
	close(fd);
}

#define TESTFLAME_BEGIN(name) testflame_write_marker("begin", (name), 1)
#define TESTFLAME_END(name) testflame_write_marker("end", (name), 1)
/* Process scope: this process and every thread and child it starts. */
#define testflame_mark_process(what, name) testflame_write_marker((what), (name), 0)

#endif
