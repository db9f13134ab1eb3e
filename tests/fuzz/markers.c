/*
 * markers.c - fuzz target: the test markers reader (src/record/markers.c),
 * the lines a suite appends to $TESTFLAME_MARKERS while it runs: the real
 * file, read by tf_markers_poll() into a real spool, then the spool's
 * marker records decoded as replay decodes them.
 *
 * The input is what the suite writes, in pieces separated by FUZZ_SEP: each
 * piece is appended, then the file polled, so lines arrive cut anywhere;
 * after the last, the final poll takes a line without its newline.
 *
 * Beyond not crashing: every non-empty line becomes one marker record or
 * one bad line, however the writes cut it; a record's name has no line
 * break, is at most 4000 bytes, and is not empty for a `begin`.
 */
#include "fuzz.h"
#include "record/record_int.h"

#include <fcntl.h>
#include <unistd.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* the markers file and the spool in memory, not on the disk */
	if (access("/dev/shm", W_OK) == 0)
		setenv("TMPDIR", "/dev/shm", 1);
	return 0;
}

/* Non-empty lines of the whole text that tf_marker_parse accepts. */
static size_t expected(const uint8_t *data, size_t size, size_t *lines)
{
	tf_buf all = TF_BUF_INIT;
	fuzz_parts x;
	const uint8_t *part;
	size_t len, good = 0;

	fuzz_parts_init(&x, data, size);
	while (fuzz_part_next(&x, &part, &len))
		tf_buf_put(&all, part, len);
	*lines = 0;
	for (char *p = all.ptr, *end = all.ptr + all.len; p && p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		tf_marker_line ml;
		if (nl)
			*nl = '\0';
		if (*p) {
			(*lines)++;
			good += tf_marker_parse(p, &ml);
		}
		p = nl ? nl + 1 : end;
	}
	tf_buf_free(&all);
	return good;
}

/*
 * One markers file serves many inputs: each input ends with the final
 * poll, which leaves nothing pending, so the next one starts on a line of
 * its own. (Closing the file's inotify descriptor waits for the kernel's
 * RCU grace period, milliseconds: once per input it would be most of the
 * time spent.) A new file every few thousand inputs bounds its size.
 */
static tf_markers *m;
static int fd = -1;
static unsigned uses;

static void markers_file(void)
{
	char *env;

	if (m && ++uses % 4096)
		return;
	if (fd >= 0)
		close(fd);
	tf_markers_free(m);
	FUZZ_CHECK(tf_markers_open(&m) == 0, "%s", tf_error_last());
	env = tf_markers_env(m);
	fd = open(strchr(env, '=') + 1, O_WRONLY | O_APPEND | O_CLOEXEC);
	FUZZ_CHECK(fd >= 0, "cannot open the markers file");
	free(env);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_spool *s;
	fuzz_parts x;
	const uint8_t *part, *rec;
	size_t len, lines, want, got = 0;
	uint64_t bad0;

	markers_file();
	bad0 = tf_markers_bad_lines(m);
	FUZZ_CHECK(tf_spool_open(&s) == 0, "%s", tf_error_last());
	fuzz_parts_init(&x, data, size);
	while (fuzz_part_next(&x, &part, &len)) {
		FUZZ_CHECK(!len || write(fd, part, len) == (ssize_t)len, "short write");
		FUZZ_CHECK(tf_markers_poll(m, s, false) == 0, "%s", tf_error_last());
	}
	FUZZ_CHECK(tf_markers_poll(m, s, true) == 0, "%s", tf_error_last());
	FUZZ_CHECK(tf_spool_finish(s) == 0, "%s", tf_error_last());

	rec = tf_spool_data(s, &len);
	for (size_t off = 0; off < len;) {
		const struct perf_event_header *h = (const void *)(rec + off);
		tf_spool_layout layout = { 0 };
		tf_rec_event ev;
		FUZZ_CHECK(off + sizeof(*h) <= len && h->size >= sizeof(*h) && off + h->size <= len,
			   "a record overruns the spool");
		FUZZ_CHECK(tf_spool_decode(&layout, h, &ev) == 1 && ev.type == TF_REC_MARKER,
			   "a marker record that does not decode");
		size_t n = strlen(ev.marker.name);
		FUZZ_CHECK(n <= 4000 && !memchr(ev.marker.name, '\n', n), "name of %zu bytes", n);
		FUZZ_CHECK(n || !ev.marker.begin, "a begin without a name");
		got++;
		off += h->size;
	}
	want = expected(data, size, &lines);
	FUZZ_CHECK(got == want && got + (tf_markers_bad_lines(m) - bad0) == lines,
		   "%zu records and %llu bad lines for %zu lines (%zu markers)", got,
		   (unsigned long long)(tf_markers_bad_lines(m) - bad0), lines, want);
	tf_spool_free(s);
	return 0;
}
