/*
 * attribute.h - from a recording to a per-test profile.
 *
 * tf_attribute_build() replays a recording in time order, feeds the
 * side-band to the symbolizer, unwinds and resolves every sample, decides
 * which test it belongs to, and adds it to a profile with the labels
 * `test`, `process`, `pid` and `tid`. The run's metadata (event, sampler,
 * unwinder, exit status, lost samples, per-test totals, ...) goes into the
 * profile's comments as testflame.KEY=VALUE.
 */
#ifndef TESTFLAME_ATTRIBUTE_H
#define TESTFLAME_ATTRIBUTE_H

#include "testflame/profile.h"
#include "testflame/record.h"
#include "testflame/symbolize.h"

/* Sources of a sample's test, in priority order (SPEC §4). */
enum {
	TF_SOURCE_MARKERS = 1,   /* the suite's own begin/end lines */
	TF_SOURCE_FRAMES = 2,    /* a frame on the stack names the test */
	TF_SOURCE_PROCESSES = 4, /* each non-driver program below the root */
	TF_SOURCE_ALL = 7,
};

/* The test name of the build steps met on the way (compilers, linkers):
 * reported apart, never compared as a test. */
#define TF_BUILD_TEST "[build]"

/* A custom frame rule: a POSIX extended regex matched against function
 * names; the test is `name` with \1..\9 replaced by capture groups, or
 * without a name capture group 1 (or the whole match). */
typedef struct {
	const char *regex;
	const char *name;
} tf_frame_pattern;

/* Parse "markers,frames,processes" (or "all", "none") into TF_SOURCE_*;
 * returns -1 and sets the error for an unknown word. */
int tf_attribute_parse_sources(const char *list, unsigned *out);

typedef struct {
	unsigned sources;        /* TF_SOURCE_*; 0 means all */
	const char *const *frame_presets; /* NULL-terminated names; NULL = all */
	const tf_frame_pattern *patterns;
	size_t npatterns;
	const char *const *drivers;     /* programs that only run others */
	const char *const *build_tools; /* programs that are build steps */
	const char *test_name;   /* --test NAME: the test of everything unattributed */
	const char *suite;       /* suite name (metadata) */
	const char *command;     /* the command line, for metadata */
	tf_callgraph callgraph;  /* how to build user stacks */
	unsigned max_depth;      /* frames kept per sample (default 512) */
} tf_attribute_opts;

void tf_attribute_opts_init(tf_attribute_opts *o);

typedef struct {
	uint64_t samples;        /* samples in the profile */
	uint64_t frames, unresolved; /* frames, and frames with no symbol */
	uint64_t truncated;      /* stacks cut short (depth limit, failed unwind) */
	uint64_t fp_stacks, dwarf_stacks;
	uint64_t processes, threads;
	uint64_t tests;
	uint64_t by_source[4];   /* samples attributed by markers, frames,
				    processes, command */
} tf_attribute_stats;

/* The frame presets, for `--help` and config validation. */
extern const char *const tf_frame_preset_names[];

/* Build the profile of a finished recording. `sym` must have been used as
 * the recording's live hook (tf_symbolizer_live) for deleted binaries and
 * JIT maps to resolve. */
int tf_attribute_build(tf_profile **out, tf_recording *rec, tf_symbolizer *sym,
		       const tf_attribute_opts *opts, tf_attribute_stats *stats);

#endif
