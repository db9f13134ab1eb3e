/*
 * markers.c - test markers: how a suite tells testflame where its tests
 * begin and end (SPEC §4, first source of attribution).
 *
 * The suite appends lines to the file named by $TESTFLAME_MARKERS:
 *
 *     begin NAME [@tid=TID] [@pid=PID] [@t=NANOSECONDS] [@cpu=NANOSECONDS]
 *           [@runner=WORD]
 *     end [NAME] [@tid=TID] [@pid=PID] [@t=NANOSECONDS] [@cpu=NANOSECONDS]
 *
 * @tid scopes the marker to one thread, @pid to a process and everything
 * it runs, neither to the whole tree. @t is CLOCK_MONOTONIC, the clock of
 * the samples; a line without it is stamped when testflame reads it: the
 * recording loop watches the file (inotify) and reads new lines before it
 * drains the rings, so the stamp trails the write by the loop's wake-up,
 * not by its work. @cpu is the writer's CPU clock
 * (CLOCK_THREAD_CPUTIME_ID with @tid, CLOCK_PROCESS_CPUTIME_ID with @pid):
 * a begin and an end that both carry it give the test's exact CPU time,
 * which the comparison prefers to the sampled one. The C, pytest and Go
 * helpers in contrib/ write all four fields; the shell one, having no
 * clock to read, writes @pid only, as a plain
 * `echo "begin x" >> "$TESTFLAME_MARKERS"` may.
 * @runner names the runner that wrote the line (testflame's Python loader
 * writes `unittest`), which says how to run that test alone (select.c).
 * NAME may contain spaces: fields are taken from the end of the line.
 */

#include "record_int.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct tf_markers {
	char *dir, *path;
	int fd, ino;
	tf_buf pending;   /* an incomplete last line */
	uint64_t bad;
};

int tf_markers_open(tf_markers **out)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = tf_xasprintf("%s/testflame-markers.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	tf_markers *m;

	*out = NULL;
	if (!mkdtemp(dir)) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot create a directory for test markers");
		free(dir);
		return rc;
	}
	m = tf_xcalloc(1, sizeof(*m));
	m->ino = -1;
	m->dir = dir;
	m->path = tf_xasprintf("%s/markers", dir);
	m->fd = open(m->path, O_RDONLY | O_CREAT | O_CLOEXEC, 0666);
	if (m->fd < 0) {
		int rc = tf_error_set_errno(TF_ERROR, "cannot create '%s'", m->path);
		tf_markers_free(m);
		return rc;
	}
	/* anyone in the tree may write, whatever user it runs as */
	fchmod(m->fd, 0666);
	m->ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (m->ino >= 0 && inotify_add_watch(m->ino, m->path, IN_MODIFY) < 0) {
		close(m->ino);
		m->ino = -1;
	}
	*out = m;
	return 0;
}

char *tf_markers_env(tf_markers *m)
{
	return tf_xasprintf("TESTFLAME_MARKERS=%s", m->path);
}

const char *tf_markers_dir(const tf_markers *m)
{
	return m->dir;
}

static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end)
		return false;
	*out = v;
	return true;
}

/* A runner's name: 1-31 letters, digits, '-', '_' or '.'. */
static bool runner_word(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!(isalnum((unsigned char)s[n]) || s[n] == '-' || s[n] == '_' || s[n] == '.'))
			return false;
	return n > 0 && n < 32;
}

bool tf_marker_parse(char *line, tf_marker_line *out)
{
	char *end;
	size_t n;

	memset(out, 0, sizeof(*out));
	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, "begin", 5) == 0 && (line[5] == ' ' || line[5] == '\t')) {
		out->begin = true;
		line += 6;
	} else if (strncmp(line, "end", 3) == 0 &&
		   (line[3] == ' ' || line[3] == '\t' || line[3] == '\0')) {
		line += 3;
	} else {
		return false;
	}
	/* fields from the end */
	n = strlen(line);
	end = line + n;
	for (;;) {
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = '\0';
		char *tok = end;
		while (tok > line && tok[-1] != ' ' && tok[-1] != '\t')
			tok--;
		if (tok == end || tok[0] != '@')
			break;
		uint64_t v;
		if (strncmp(tok, "@tid=", 5) == 0 && parse_u64(tok + 5, &v))
			out->tid = (uint32_t)v;
		else if (strncmp(tok, "@pid=", 5) == 0 && parse_u64(tok + 5, &v))
			out->pid = (uint32_t)v;
		else if (strncmp(tok, "@t=", 3) == 0 && parse_u64(tok + 3, &v))
			out->time = v;
		else if (strncmp(tok, "@cpu=", 5) == 0 && parse_u64(tok + 5, &v))
			out->cpu = v, out->has_cpu = true;
		else if (strncmp(tok, "@runner=", 8) == 0 && runner_word(tok + 8))
			out->runner = tok + 8;
		else
			return false;
		*tok = '\0';
		end = tok;
	}
	while (*line == ' ' || *line == '\t')
		line++;
	out->name = line;
	if (out->begin && !*line)
		return false;
	out->scope = out->tid ? TF_MARKER_THREAD : out->pid ? TF_MARKER_PROCESS : TF_MARKER_GLOBAL;
	return true;
}

static int emit(tf_markers *m, tf_spool *s, char *line)
{
	tf_marker_line ml;
	struct {
		uint32_t pid, tid;
		uint64_t time;
		uint32_t begin, scope;
		uint32_t len, rlen; /* the name's, then the runner's after its NUL */
		uint64_t cpu; /* +1; 0 when not given */
	} fixed;
	char var[4096 + 32];

	if (!*line)
		return 0;
	if (!tf_marker_parse(line, &ml)) {
		m->bad++;
		return 0;
	}
	fixed.pid = ml.pid;
	fixed.tid = ml.tid;
	fixed.time = ml.time ? ml.time : tf_now_ns();
	fixed.begin = ml.begin;
	fixed.scope = ml.scope;
	fixed.len = (uint32_t)TF_MIN(strlen(ml.name), (size_t)4000);
	fixed.rlen = ml.runner ? (uint32_t)strlen(ml.runner) : 0;
	fixed.cpu = ml.has_cpu ? ml.cpu + 1 : 0;
	memcpy(var, ml.name, fixed.len);
	var[fixed.len] = '\0';
	if (fixed.rlen)
		memcpy(var + fixed.len + 1, ml.runner, fixed.rlen);
	return tf_spool_append_own(s, TF_SPOOL_MARKER, &fixed, sizeof(fixed), var,
				   fixed.len + (fixed.rlen ? fixed.rlen + 1 : 0));
}

int tf_markers_poll(tf_markers *m, tf_spool *s, bool final)
{
	char buf[65536];
	int rc = 0;

	if (m->ino >= 0)
		while (read(m->ino, buf, sizeof(buf)) > 0)
			; /* drain the notifications; the file says what is new */
	for (;;) {
		ssize_t n = read(m->fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		tf_buf_put(&m->pending, buf, (size_t)n);
	}
	if (!m->pending.len)
		return 0;
	char *p = m->pending.ptr, *nl;
	while (!rc && (nl = memchr(p, '\n', m->pending.len - (size_t)(p - m->pending.ptr)))) {
		*nl = '\0';
		rc = emit(m, s, p);
		p = nl + 1;
	}
	size_t rest = m->pending.len - (size_t)(p - m->pending.ptr);
	if (final && rest && !rc) {
		rc = emit(m, s, p);
		rest = 0;
	}
	memmove(m->pending.ptr, p, rest);
	m->pending.len = rest;
	m->pending.ptr[rest] = '\0';
	return rc;
}

int tf_markers_fd(tf_markers *m)
{
	return m->ino;
}

uint64_t tf_markers_bad_lines(const tf_markers *m)
{
	return m->bad;
}

void tf_markers_free(tf_markers *m)
{
	if (!m)
		return;
	if (m->fd >= 0)
		close(m->fd);
	if (m->ino >= 0)
		close(m->ino);
	if (m->path)
		unlink(m->path);
	if (m->dir)
		rmdir(m->dir);
	free(m->path);
	free(m->dir);
	tf_buf_free(&m->pending);
	free(m);
}
