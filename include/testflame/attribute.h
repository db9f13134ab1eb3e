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
/* The test name of the work that belongs to no test once tests were
 * found: the command's own, the harness's (ctest, pytest's collection).
 * Reported apart; gated only when the config asks. */
#define TF_OUTSIDE_TEST "[outside tests]"
/* What ends the name of the work inside a program's tests whose frames
 * name none of the tests the runner listed there (a tail call replaced
 * the test's frame: cmocka, Unity): "PROGRAM [unnamed tests]", a test
 * nested in the program, gated like its listed ones. */
#define TF_UNNAMED_TESTS " [unnamed tests]"

/* What the test runners reported (below). */
typedef struct tf_runner_tests tf_runner_tests;

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
	const char *suite;       /* suite name (metadata; the test when none is found) */
	/* What the runners reported (may be NULL): tests that ran, with their
	 * durations, even those no sample saw. */
	const tf_runner_tests *runner_tests;
	const char *command;     /* the command line, for metadata */
	bool no_injection;       /* attribution.inject: false: testflame gave the
				  * runners nothing (no note of what stepped aside) */
	tf_callgraph callgraph;  /* how to build user stacks */
	unsigned max_depth;      /* frames kept per sample (default 512) */
} tf_attribute_opts;

void tf_attribute_opts_init(tf_attribute_opts *o);

/*
 * The default name of the suite that `argv` runs (NULL-terminated): the
 * program's base name and the words that say what it runs, without
 * options, VAR=value words, numbers, wrappers (env, nice, timeout) or the
 * shell of `sh -c STRING`: `make -s -j4 check` is "make check",
 * `sh -c 'CFLAGS=-O2 ./run-tests --fast unit'` is "run-tests unit". So a
 * flag changed on the command line keeps the suite and its baselines. The
 * caller frees.
 */
char *tf_attribute_suite_name(const char *const *argv);

typedef struct {
	uint64_t samples;        /* samples in the profile */
	uint64_t frames, unresolved; /* frames, and frames with no symbol */
	uint64_t truncated;      /* stacks cut short (depth limit, failed unwind) */
	/* Of those, the samples outside every test (the harness's own work,
	 * build steps): what no change to the tests' builds would fix. */
	uint64_t samples_outside, frames_outside, unresolved_outside, truncated_outside;
	/* The modules (base names) with the most frames without a symbol in
	 * the tests' samples, most first; "" after the last. */
	char missing_symbols[3][64];
	uint64_t fp_stacks, dwarf_stacks;
	uint64_t processes, threads;
	uint64_t tests;
	uint64_t by_source[4];   /* samples attributed by markers, frames,
				    processes, command */
	uint64_t helper_samples; /* frames named a function a test tail-called,
				    not the test: given to the program's test */
	uint64_t offcpu_samples; /* switch-outs with their stacks (perf) */
	uint64_t offcpu_truncated; /* ... cut short */
	uint64_t offcpu_waits;   /* samples of waiting threads (ptrace's wall),
				    among `samples` */
	uint64_t alloc_samples;  /* sampled allocations in the profile */
} tf_attribute_stats;

/*
 * The per-test line of a run file's metadata ("testflame.test.NAME=..."):
 * one writer and one reader (testmeta.c). Every field but samples and
 * value is optional; NAN or 0 when absent.
 */
typedef enum {
	TF_TEST_STATUS_UNKNOWN = 0,
	TF_TEST_PASSED,
	TF_TEST_FAILED,
	TF_TEST_SKIPPED,
} tf_test_status;

/* What a test's cost can be judged by, best first in the comparison's
 * eyes: its exact event count (the kernel's counters of its processes),
 * its CPU time between its markers, the runner's own duration, and last
 * its samples. */
typedef enum {
	TF_MEASURE_SAMPLES = 0,
	TF_MEASURE_COUNT,
	TF_MEASURE_CPU,
	TF_MEASURE_RUNNER,
} tf_test_measure;

typedef struct {
	char *name;
	uint64_t samples;
	int64_t value;        /* summed sample values (event units) */
	double wall_ns;       /* wall time: its processes' lives, its markers' span */
	double count;         /* exact event count of its processes (event units) */
	double cpu_ns;        /* CPU time between its markers (the thread's clock) */
	double runner_ns;     /* the runner's own duration for it */
	double runner_q_ns;   /* ... and that duration's resolution */
	/* Off-CPU (recorded where the kernel allows it): the time the test
	 * waited (blocked, not preempted), exact, counted as offcpu.c says;
	 * and its threads' waits left apart: for its own child processes
	 * and threads (their time is there), and those of its threads off
	 * its critical path ("waiting on another thread of the test"). NAN
	 * when the run did not record off-CPU time. */
	double offcpu_ns;
	double offcpu_apart_ns;
	double offcpu_waits;  /* how many waits offcpu_ns is made of */
	/* of offcpu_ns, the page-ins: waits for the disk to bring a file's
	 * page into the page cache (a fault, a read): a cold cache */
	double offcpu_pagein_ns;
	char *runner;         /* "gtest", "junit", "ctest", "pytest", "go", "tap", "unity";
			       * or, without runner_ns, the runner that wrote its
			       * markers ("unittest"), or the C++ framework whose
			       * list named it ("catch2", "doctest", "boost") */
	char *source;         /* "markers", "frames", "process", "runner", "command", ... */
	char *parent;         /* the test it ran inside (a ctest test, a program) */
	uint32_t nested;      /* tests that ran inside it; its count includes theirs */
	int exit_status;
	bool has_exit;
	tf_test_status status;
	/* Memory (a run that measured it; NAN when not): the allocations its
	 * processes and threads made, counted exactly, their bytes asked for,
	 * and the frees; the most of its own allocations live at once (bytes,
	 * from the sampled ones: the live-heap peak); what of them was still
	 * live when it ended (bytes, sampled: a leak); the peak resident set
	 * of its processes (bytes) */
	double allocs, alloc_bytes, frees;
	double heap_peak, leaked;
	double rss_peak;
	double alloc_samples; /* its sampled allocations */
} tf_test_meta;

void tf_test_meta_init(tf_test_meta *m);
/* Free the strings and reset (safe on an initialised struct). */
void tf_test_meta_clear(tf_test_meta *m);
/* Parse one metadata comment. TF_ENOTFOUND when it is not a per-test line,
 * TF_EINVAL when malformed; on success the caller clears `out`. */
int tf_test_meta_parse(tf_test_meta *out, const char *comment);
/* The same for a file joining several runs (profile.h): the lines of run
 * R >= 2 are "testflame.run<R>.test.NAME=..."; *run gets the run's index
 * from 0. */
int tf_test_meta_parse_run(tf_test_meta *out, size_t *run, const char *comment);
/* The value part (after "testflame.test.NAME="). */
void tf_test_meta_format(tf_buf *out, const tf_test_meta *m);
/* Write (or replace) m's line in p's metadata. */
void tf_test_meta_set(tf_profile *p, const tf_test_meta *m);
const char *tf_test_status_name(tf_test_status s);
const char *tf_test_measure_name(tf_test_measure m);

/*
 * What the test runners themselves say ran (runner.c): JUnit XML
 * (GoogleTest, pytest, ctest, ...), go test -json, TAP, and ctest's
 * LastTest.log with the Unity/cmocka/GoogleTest lines of its programs'
 * output.
 */
typedef struct {
	char *name;              /* the runner's name for the test */
	const char *runner;      /* "gtest", "junit", "ctest", "go", "tap", "unity" */
	char *parent;            /* the runner's test it ran inside (ctest), or NULL */
	char *program;           /* the program that wrote the report, or NULL */
	char *suite, *test;      /* JUnit classname and name, when both */
	char *type_param;        /* GoogleTest typed tests */
	char *argv;              /* ctest: the test's command, NUL-separated */
	size_t argv_len;
	double duration_ns;      /* NAN when not given */
	double quantum_ns;       /* the duration's resolution */
	uint64_t start_realtime_ns; /* 0 when not given */
	tf_test_status status;
} tf_runner_test;

struct tf_runner_tests {
	TF_VEC(tf_runner_test) v;
	/* what testflame's helpers in the runners said of themselves (a
	 * plugin that stepped aside, and why): the run's notes */
	TF_VEC(char *) notes;
};

void tf_runner_tests_free(tf_runner_tests *t);
/* Read a report, its format recognised from its text. `parent` (may be
 * NULL): the runner test the report's tests ran inside. */
int tf_runner_read_text(tf_runner_tests *out, const char *text, size_t len, const char *file,
			const char *parent);
int tf_runner_read_file(tf_runner_tests *out, const char *path, const char *parent);
/* Every DIR/<program>.xml GoogleTest wrote (GTEST_OUTPUT=xml:DIR/) since
 * `not_before_realtime_ns`. */
int tf_runner_read_gtest_dir(tf_runner_tests *out, const char *dir,
			     uint64_t not_before_realtime_ns);

/*
 * Asking the runners testflame recognises to report (inject.c): with
 * `inject`, GTEST_OUTPUT into a private directory and the pytest plugin,
 * through environment variables to add to the command's (`env` of the
 * session, NULL-terminated); without, only what the user set
 * (GTEST_OUTPUT) is read back. `environ_in` is the command's environment.
 */
typedef struct tf_runner_session tf_runner_session;
int tf_runner_session_new(tf_runner_session **out, const char *const *environ_in, bool inject);
char *const *tf_runner_session_env(const tf_runner_session *s);
/* Whether Node's perf maps were turned on by the session (and so are
 * testflame's to remove: tf_symbolizer_remove_node_maps). */
bool tf_runner_session_node_maps(const tf_runner_session *s);
/* The directory the runners write into, removed by tf_runner_session_free()
 * (and by the recording's guard should testflame die during the run). */
const char *tf_runner_session_dir(const tf_runner_session *s);
/* After the run: what the runners wrote since `not_before_realtime_ns`,
 * and the user's `reports` (files or glob patterns, NULL-terminated). */
int tf_runner_session_collect(tf_runner_session *s, tf_runner_tests *out,
			      const char *const *reports, uint64_t not_before_realtime_ns);
/* Removes the session's directory. */
void tf_runner_session_free(tf_runner_session *s);

/*
 * The command that runs only some tests of a suite (select.c, SPEC §9b):
 * `argv` with each runner's own filter (ctest -R, cargo test -- --exact)
 * and `env` ("KEY=VALUE", added to the command's: GTEST_FILTER, GOFLAGS'
 * -run, the pytest plugin's node ids), each test's runner read from what
 * `run` (a run file of the suite) says of it. `how` says what was narrowed,
 * in one line. Filters only narrow: a runner that ignores one runs more.
 */
typedef struct {
	char **argv;   /* NULL-terminated */
	char **env;    /* NULL-terminated */
	char *how;
} tf_selection;

/* The selection of `tests` (n of them) from the suite run by `argv` in
 * the environment `envp`; TF_ENOTFOUND, the message saying why, when a
 * test has no way known to run it alone (then the whole suite runs). */
int tf_attribute_select(tf_selection **out, const char *const *argv, char *const *envp,
			const tf_profile *run, const char *const *tests, size_t n);
void tf_selection_free(tf_selection *s);
/* The filters themselves, for their tests: ctest's -R regex
 * "^(a|b\.c)$", GoogleTest's "A.B:C.D", go test's -run "^(TestA)$" of
 * the top-level names (caller frees). */
char *tf_select_ctest_regex(const char *const *names, size_t n);
char *tf_select_gtest_filter(const char *const *names, size_t n);
char *tf_select_go_run(const char *const *names, size_t n);

/* The frame presets, for `--help` and config validation. */
extern const char *const tf_frame_preset_names[];

/* Build the profile of a finished recording. `sym` must have been used as
 * the recording's live hook (tf_symbolizer_live) for deleted binaries and
 * JIT maps to resolve. */
int tf_attribute_build(tf_profile **out, tf_recording *rec, tf_symbolizer *sym,
		       const tf_attribute_opts *opts, tf_attribute_stats *stats);

#endif
