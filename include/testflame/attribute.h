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

typedef struct {
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
} tf_attribute_stats;

/* Build the profile of a finished recording. `sym` must have been used as
 * the recording's live hook (tf_symbolizer_live) for deleted binaries and
 * JIT maps to resolve. */
int tf_attribute_build(tf_profile **out, tf_recording *rec, tf_symbolizer *sym,
		       const tf_attribute_opts *opts, tf_attribute_stats *stats);

#endif
