/*
 * markers.h - the test marker channel (private to src/record): a file the
 * suite appends "begin NAME" / "end NAME" lines to, read live by the
 * sampler loop so each line gets a timestamp on the samples' clock.
 */
#ifndef TESTFLAME_RECORD_MARKERS_H
#define TESTFLAME_RECORD_MARKERS_H

#include "spool.h"

typedef struct tf_markers tf_markers;

int tf_markers_open(tf_markers **out);
/* "TESTFLAME_MARKERS=<path>", for the command's environment. */
char *tf_markers_env(tf_markers *m);
/* The directory the file is in (for the launch guard to remove). */
const char *tf_markers_dir(const tf_markers *m);
/* Read the complete lines written since the last call into the spool;
 * with `final`, also a last line that lacks its newline. */
int tf_markers_poll(tf_markers *m, tf_spool *s, bool final);
/* A descriptor that becomes readable when the file is written to (inotify),
 * so lines without a timestamp are stamped as they arrive. */
int tf_markers_fd(tf_markers *m);
/* Lines that were not markers (reported once at the end). */
uint64_t tf_markers_bad_lines(const tf_markers *m);
/* Remove the file; after the call the pointer is invalid. */
void tf_markers_free(tf_markers *m);

/* Parse one line; exposed for the unit tests. Returns false if it is not
 * a marker. `name` points into `line`, which is modified. */
typedef struct {
	bool begin;
	char *name;
	uint32_t pid, tid;
	uint64_t cpu;         /* @cpu: the writer's CPU clock (ns); 0 when not given */
	bool has_cpu;
	uint64_t time; /* 0 when the line carries none */
	tf_marker_scope scope;
} tf_marker_line;
bool tf_marker_parse(char *line, tf_marker_line *out);

#endif
