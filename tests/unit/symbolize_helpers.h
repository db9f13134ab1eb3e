/*
 * symbolize_helpers.h - what the symbolizer's unit tests share: starting a
 * fixture process (tests/fixtures/symbolize*.c) and reading the "KEY
 * VALUE..." lines it prints, and turning a live process's /proc/PID/maps
 * into the MMAP events perf would have recorded for it.
 */
#ifndef TESTFLAME_SYMBOLIZE_HELPERS_H
#define TESTFLAME_SYMBOLIZE_HELPERS_H

#include "unit.h"
#include "testflame/symbolize.h"

#include <libgen.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

typedef struct {
	pid_t pid;
	FILE *out;
	int in;           /* the child's stdin: closing it ends the child */
	char *lines[64];  /* what it printed before "ready" */
	int n;
} fixture;

/* build/fixtures/NAME, next to build/tests/ where this test runs from. */
static inline char *fixture_path(const char *name)
{
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	char *p = NULL;
	assert_true(asprintf(&p, "%s/../fixtures/%s", dirname(exe), name) > 0);
	if (access(p, X_OK) != 0)
		fail_msg("fixture '%s' is not built (make fixtures)", p);
	return p;
}

static inline void fixture_start(fixture *f, const char *path, const char *arg)
{
	int in[2], out[2];
	char line[65536];

	memset(f, 0, sizeof(*f));
	assert_int_equal(pipe(in), 0);
	assert_int_equal(pipe(out), 0);
	f->pid = fork();
	assert_true(f->pid >= 0);
	if (f->pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		execl(path, path, arg, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	f->in = in[1];
	f->out = fdopen(out[0], "r");
	assert_non_null(f->out);
	while (fgets(line, sizeof(line), f->out)) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "ready") == 0)
			return;
		assert_true(f->n < 64);
		f->lines[f->n++] = strdup(line);
	}
	fail_msg("fixture '%s' ended before it was ready", path);
}

/* The line starting with "KEY " (its rest), or fail. */
static inline const char *fixture_get(const fixture *f, const char *key)
{
	size_t k = strlen(key);
	for (int i = 0; i < f->n; i++)
		if (strncmp(f->lines[i], key, k) == 0 && f->lines[i][k] == ' ')
			return f->lines[i] + k + 1;
	fail_msg("fixture printed no '%s'", key);
	return NULL;
}

/* "KEY ADDR LINE": the address and the line. */
static inline uint64_t fixture_addr(const fixture *f, const char *key, int *line)
{
	unsigned long long a;
	int l = 0;
	assert_true(sscanf(fixture_get(f, key), "%llx %d", &a, &l) >= 1);
	if (line)
		*line = l;
	return a;
}

static inline int fixture_stop(fixture *f)
{
	int st = 0;
	close(f->in);
	fclose(f->out);
	assert_int_equal(waitpid(f->pid, &st, 0), f->pid);
	for (int i = 0; i < f->n; i++)
		free(f->lines[i]);
	return st;
}

/*
 * Feed the executable mappings of a live process as MMAP events: to
 * tf_symbolizer_live() (as the recorder does during the run) and/or to
 * tf_symbolizer_event() (as replay does afterwards). Returns how many.
 */
static inline int feed_maps(tf_symbolizer *s, pid_t pid, bool live, bool replay)
{
	char path[64], line[4600];
	int count = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *fp = fopen(path, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long start, end, off, ino;
		unsigned maj, min;
		char perms[8];
		int pos = 0;
		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off,
			   &maj, &min, &ino, &pos) < 7 || perms[2] != 'x')
			continue;
		tf_rec_event ev;
		memset(&ev, 0, sizeof(ev));
		ev.type = TF_REC_MMAP;
		ev.pid = ev.tid = (uint32_t)pid;
		ev.time = 1000 + (uint64_t)count;
		ev.mmap.start = start;
		ev.mmap.len = end - start;
		ev.mmap.pgoff = off;
		ev.mmap.maj = maj;
		ev.mmap.min = min;
		ev.mmap.ino = ino;
		ev.mmap.prot = PROT_READ | PROT_EXEC;
		ev.mmap.flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
		ev.mmap.filename = pos ? line + pos : "";
		if (live)
			tf_symbolizer_live(s, &ev);
		if (replay)
			tf_symbolizer_event(s, &ev);
		count++;
	}
	fclose(fp);
	return count;
}

static inline void send_simple(tf_symbolizer *s, tf_rec_type type, uint32_t pid, uint32_t tid,
			       uint32_t ppid, uint64_t time, bool live)
{
	tf_rec_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.pid = pid;
	ev.tid = tid;
	ev.time = time;
	ev.fork.ppid = ppid;
	ev.fork.ptid = ppid;
	if (live)
		tf_symbolizer_live(s, &ev);
	else
		tf_symbolizer_event(s, &ev);
}

static inline bool ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);
	return s && a >= b && strcmp(s + a - b, suffix) == 0;
}

#endif
