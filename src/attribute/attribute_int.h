/*
 * attribute_int.h - what the files of src/attribute share behind
 * attribute.h: deciding each sample's test (attributor.c; the Go and Rust
 * test binaries' own lists, golist.c and libtest.c), each test's memory
 * (memory.c), and the Python frames spliced into its stack (pyframes.c).
 *
 * The attributor follows the recording's process tree and test markers as
 * they are replayed, and for each sample applies SPEC §4's sources in
 * order: markers, frames, processes, command. It also keeps the per-test
 * accounting (samples, value, wall time, exit status) that ends up in the
 * run file's metadata.
 */
#ifndef TESTFLAME_ATTRIBUTE_INT_H
#define TESTFLAME_ATTRIBUTE_INT_H

#include "testflame/attribute.h"

typedef struct tf_attributor tf_attributor;

/* The words of a command line (suite.c), for naming a suite and for
 * narrowing it to some tests (select.c): a VAR=value word, a shell, a
 * wrapper that runs the program after it (env, nice, timeout, ...), a
 * path's last element. */
bool tf_word_is_assignment(const char *w);
bool tf_word_is_shell(const char *prog);
bool tf_word_is_wrapper(const char *w);
const char *tf_word_base_name(const char *w);

enum { SRC_MARKERS, SRC_FRAMES, SRC_PROCESSES, SRC_COMMAND, SRC_BUILD, SRC_RUNNER, SRC_OUTSIDE };

int tf_attributor_new(tf_attributor **out, tf_profile *p, const tf_attribute_opts *o);
/* When the run started, on both clocks: to tell this run's files from
 * older ones, and a sample's moment on the runners' clock. */
void tf_attributor_set_start(tf_attributor *a, uint64_t realtime_ns, uint64_t mono_ns);
/* The recorded event counts time (cpu-clock): a process's cost is its
 * threads' time on a CPU, from the context switches, when recorded. */
void tf_attributor_set_time_event(tf_attributor *a, bool time_event);
/* The recording measured memory: account its events (memory.c). */
void tf_attributor_set_memory(tf_attributor *a);
/* The symbolizer of the replay: a Go test binary's own list of tests is
 * read from it (golist.c). */
void tf_attributor_set_symbolizer(tf_attributor *a, tf_symbolizer *sym);
void tf_attributor_free(tf_attributor *a);

/* Side-band in time order: COMM, FORK, EXIT, CMDLINE, MARKER, PROC_EXIT,
 * THREAD_COST, SWITCH, ALLOC_COUNT, ALLOC_PROC, NOTE. */
void tf_attributor_event(tf_attributor *a, const tf_rec_event *ev);

/* The program name of `pid` (the `process` label). */
tf_strid tf_attributor_process(tf_attributor *a, uint32_t pid);

/* The test of a sample whose stack (profile locations, leaf first) is
 * `locs`; `*source` gets the SRC_* that decided. Accounts the sample. */
tf_strid tf_attributor_sample(tf_attributor *a, const tf_rec_event *ev,
			      const uint32_t *locs, size_t n, int64_t value, int *source);

/* A switch-out of thread `tid` was sampled at `time` (its off-CPU stack):
 * its time on the CPU ends there, not at the switch record that follows
 * the recorder's work on the sample. */
void tf_attributor_switch_sampled(tf_attributor *a, uint32_t tid, uint64_t time);
/* The test of a sample, as tf_attributor_sample() decides it, without
 * counting the sample (an off-CPU stack). */
tf_strid tf_attributor_test(tf_attributor *a, const tf_rec_event *ev, const uint32_t *locs,
			    size_t n, int *source);
/* The thread that runs `test` as far as the replay has seen: the main
 * thread of its program, the thread that wrote its begin marker, the last
 * whose stack named it; 0 when none is known. */
uint32_t tf_attributor_lead(tf_attributor *a, tf_strid test);
/* When marked test `test`, begun by `since`, ended (its end marker may be
 * read after what followed it); 0 when it has not, or is no marked test. */
uint64_t tf_attributor_marked_end(tf_attributor *a, tf_strid test, uint64_t since);
/* The marked test thread `tid` of process `pid` runs now (the markers
 * read so far: the replay is in time order), 0 none. */
tf_strid tf_attributor_marked_now(tf_attributor *a, uint32_t pid, uint32_t tid);
/* The marked test that started process `pid` (its forking thread ran it
 * then), 0 none: the process is that test's work. */
tf_strid tf_attributor_fork_test(tf_attributor *a, uint32_t pid);
/* The test of what no source names ("[outside tests]", or --test's). */
tf_strid tf_attributor_fallback(const tf_attributor *a);
/* The recording has off-CPU time: every test's metadata says how long it
 * waited, counted and apart (tf_test_meta). */
void tf_attributor_set_offcpu(tf_attributor *a, bool offcpu);
/* `waits`: how many waits the times are (a switch-out stands for several
 * where the recording was capped) */
void tf_attributor_add_wait(tf_attributor *a, tf_strid test, double counted, double apart,
			    double waits);
/* ... and of the time counted, what was page-ins (TF_WAIT_PAGEIN) */
void tf_attributor_add_pagein(tf_attributor *a, tf_strid test, double counted);
/* The test of a sampled allocation (TF_REC_ALLOC) whose stack is `locs`;
 * then its block, once it is in the profile as sample `sample` standing
 * for `bytes`; and a freed block: true when it lowers that sample's
 * inuse_space (`*sample`) by `*bytes`. */
tf_strid tf_attributor_alloc(tf_attributor *a, const tf_rec_event *ev, const uint32_t *locs,
			     size_t n);
void tf_attributor_alloc_block(tf_attributor *a, const tf_rec_event *ev, tf_strid test,
			       uint64_t bytes, uint32_t sample);
bool tf_attributor_alloc_free(tf_attributor *a, const tf_rec_event *ev, uint32_t *sample,
			      uint64_t *bytes);

/* Write test.<NAME>=... metadata; returns the number of tests. */
size_t tf_attributor_write_meta(tf_attributor *a, uint64_t end_time);
uint64_t tf_attributor_processes(const tf_attributor *a);
/* Samples whose frames named a helper a test tail-called (attributor.c). */
uint64_t tf_attributor_helper_samples(const tf_attributor *a);
uint64_t tf_attributor_threads(const tf_attributor *a);

/* Off-CPU intervals (offcpu.c). */
typedef enum {
	TF_WAIT_OTHER = 0,
	TF_WAIT_SLEEP,   /* nanosleep and its kin */
	TF_WAIT_LOCK,    /* a futex under pthread_mutex_lock or a rwlock */
	TF_WAIT_FUTEX,   /* any other futex: a condition, a semaphore, ... */
	TF_WAIT_IO,      /* the block layer, fsync, a buffer being written */
	TF_WAIT_PAGEIN,  /* a file's page read into the page cache for a
			  * fault or a read(): a cold cache (offcpu.c) */
	TF_WAIT_LOAD,    /* a kernel lock, while a program or library loads:
			  * other processes' mappings of it (offcpu.c) */
	TF_WAIT_POLL,    /* poll, select, epoll */
	TF_WAIT_PIPE,
	TF_WAIT_SOCKET,
	TF_WAIT_CHILD,   /* wait4, waitid: the thread's own child processes */
	TF_WAIT_JOIN,    /* pthread_join: its own threads */
	TF_WAIT_SIGNAL,
	TF_WAIT_STOPPED, /* stopped by a signal or a tracer */
	TF_WAIT_EXIT,    /* the thread's end: no wait */
	TF_WAIT_COUNT
} tf_wait_reason;

const char *tf_wait_name(tf_wait_reason r);
/* Why a thread waits, from its stack (profile locations, leaf first, the
 * kernel's frames the first `nkernel`); from a system call's name. */
tf_wait_reason tf_waits_reason(const tf_profile *p, const uint32_t *locs, size_t n,
			       size_t nkernel);
tf_wait_reason tf_waits_syscall_reason(const char *syscall);

/* One interval done: its time counted for the test and left apart, in ns
 * (times the switch-outs it stands for). */
typedef struct {
	tf_strid test, process;
	uint32_t pid, tid;
	tf_wait_reason reason;
	const uint32_t *locs;
	size_t n;
	double counted, apart;
	double weight;        /* the switch-outs it stands for */
} tf_wait_done;

typedef void (*tf_wait_fn)(void *ctx, const tf_wait_done *d);
typedef struct tf_waits tf_waits;
int tf_waits_new(tf_waits **out, tf_attributor *a, tf_wait_fn emit, void *ctx);
void tf_waits_free(tf_waits *w);
/* A thread left its CPU (TF_REC_OFFCPU), in `test`, with this stack;
 * rwsem: on a kernel rwsem (tf_waits_on_rwsem). */
void tf_waits_out(tf_waits *w, const tf_rec_event *ev, tf_strid test, tf_strid process,
		  tf_wait_reason reason, bool rwsem, const uint32_t *locs, size_t n);
/* Whether a stack's kernel frames wait on an rwsem (an mmap lock). */
bool tf_waits_on_rwsem(const tf_profile *p, const uint32_t *locs, size_t nkernel);
/* A sample of a thread found waiting in `reason` for `period` ns, now
 * (ptrace's wall mode): the part counted for its test; *apart the rest. */
double tf_waits_sampled(tf_waits *w, const tf_rec_event *ev, tf_strid test,
			tf_wait_reason reason, double period, double *apart);
/* A CPU sample of `test`: its thread runs. */
void tf_waits_running(tf_waits *w, const tf_rec_event *ev, tf_strid test);
/* The waits testflame's own reads of a process caused (offcpu.c's head
 * comment): their time, left out of every test, and their number. */
double tf_waits_peeked(const tf_waits *w, uint64_t *n);
/* The waits no sample placed in one test (a thread's test changed while
 * they were carried, offcpu.c): counted for none. */
double tf_waits_unplaced(const tf_waits *w, uint64_t *n);
/* FORK, SWITCH, EXIT and PEEK records, in time order with the above. */
void tf_waits_event(tf_waits *w, const tf_rec_event *ev);
/* The recording ended: threads still waiting waited until `end_time`. */
void tf_waits_finish(tf_waits *w, uint64_t end_time);

/* Frame rules (frames.c). */
typedef struct tf_frame_rules tf_frame_rules;
int tf_frame_rules_new(tf_frame_rules **out, tf_profile *p, const tf_attribute_opts *o);
void tf_frame_rules_free(tf_frame_rules *r);
/* GoogleTest's test of a TestBody frame (Suite.Name, Typed.Name<T>);
 * false when `fn` is none. */
bool tf_gtest_frame_name(const char *fn, char *out, size_t n);
/* The test named by the stack's frames, or 0. */
tf_strid tf_frame_rules_match(tf_frame_rules *r, const uint32_t *locs, size_t n);
/* How many of the stack's frames (leaf first) are its thread's own: a Go
 * thread in the scheduler, or started by another, shows frames of the
 * goroutine or thread before it below its own; n when there are none. */
size_t tf_frame_rules_own(tf_frame_rules *r, const uint32_t *locs, size_t n);
/* The working directory of the sample's process (NULL: unknown): where
 * pytest's node ids start when no configuration file says. */
void tf_frame_rules_set_cwd(tf_frame_rules *r, const char *cwd);
/* Whether the rules name Python tests (the pytest preset is on): a Python
 * test runner's tests are then named from its frames. */
bool tf_frame_rules_python(const tf_frame_rules *r);

/* ctest's test names (ctest.c): CTestTestfile.cmake files under `dir`. */
typedef struct tf_ctest tf_ctest;
/* The tests of the build tree at `dir`, and ctest's log of a run that
 * ended after `not_before_realtime_ns`; NULL when there are none. */
tf_ctest *tf_ctest_load(const char *dir, uint64_t not_before_realtime_ns);
/* The tests of one CTestTestfile.cmake's text (subdirs still read under
 * `dir`), no log: the reader apart from the file, for the fuzzer. */
tf_ctest *tf_ctest_parse(const char *text, const char *dir);
/* The ctest name of a process with these NUL-separated args (len 0 when
 * unknown), taken; NULL when they do not say. */
const char *tf_ctest_lookup(tf_ctest *c, const char *argv, size_t len, const char *cwd);
/* How many of the log's tests run `program` (its base name). */
size_t tf_ctest_ran(const tf_ctest *c, const char *program);
/* Whether `r`, a test of ctest's log, is ctest's and runs `program`. */
bool tf_ctest_runs(const tf_runner_test *r, const char *program);
/* The log's first test running `program` that no process took yet,
 * taken: for the processes whose arguments were not read, asked in the
 * order they ended once every other process has taken its name (the
 * log's order is the order tests ended); NULL when none is left. */
const char *tf_ctest_next(tf_ctest *c, const char *program);
/* What ctest's log says ran (NULL or empty without a log). */
const tf_runner_tests *tf_ctest_log(const tf_ctest *c);
void tf_ctest_free(tf_ctest *c);

/* meson's test names (meson.c): meson-info/intro-tests.json of a build
 * directory. */
typedef struct tf_meson tf_meson;
/* The tests of the build directory `dir`, and meson's log of a run that
 * ended after `not_before_realtime_ns`; NULL when there are none. */
tf_meson *tf_meson_load(const char *dir, uint64_t not_before_realtime_ns);
/* The tests of one intro-tests.json's text, no log: for the fuzzer. */
tf_meson *tf_meson_parse(const char *text);
/* meson's name ("SUITE / NAME") of a process with these NUL-separated
 * args; NULL when none or several tests run it that way. */
const char *tf_meson_lookup(const tf_meson *m, const char *argv, size_t len);
/* Whether some test's command runs `program` (a base name). */
bool tf_meson_runs(const tf_meson *m, const char *program);
/* What meson's log says ran (NULL or empty without a log). */
const tf_runner_tests *tf_meson_log(const tf_meson *m);
void tf_meson_free(tf_meson *m);

/* Go test binaries' own lists (golist.c). */
typedef TF_VEC(char *) tf_go_tests;
/* The top-level tests, fuzz targets and examples with output of the Go
 * test binary `binary` (its base name, pkg.test) mapped at `addr` in
 * `pid`, appended to `out`; nothing for another binary. */
void tf_go_tests_read(tf_go_tests *out, tf_symbolizer *sym, uint32_t pid, uint64_t addr,
		      const char *binary);
/* Keep those its arguments (NUL-separated, -test.run, -test.skip) ran;
 * -1 when that is unknown (no arguments, -test.list, a pattern POSIX
 * cannot read): then none of them is known to have run. */
int tf_go_tests_select(tf_go_tests *tests, const char *argv, size_t len);
void tf_go_tests_free(tf_go_tests *t);
/* The arguments `go test` gives its test binaries that choose tests
 * (-test.run, -test.skip, -test.list, and what follows -args), from the
 * go command's own (NUL-separated "go\0test\0-run\0X\0./...\0"), into
 * `out` as a test binary's: for a binary that ended before its own were
 * read. false for a command that is not go test. */
bool tf_go_test_flags(tf_buf *out, const char *argv, size_t len);
/* The top-level test of a closure's name (TestX.func1.2, TestX/func1,
 * t.Run's subtest closures and goroutines): false for another name. */
bool tf_go_closure_test(const char *name, char *out, size_t n);

/* Rust test binaries (libtest.c). The length of a cargo artifact's name
 * without its "-HASH" (16 hex digits); 0 when it has none. */
size_t tf_cargo_stem(const char *name);
/* For a cargo test binary `binary` mapped at `addr` in `pid`: its crate's
 * functions named as libtest names its tests, appended to `out`; false
 * (and nothing) for another binary. */
bool tf_libtest_read(tf_go_tests *out, tf_symbolizer *sym, uint32_t pid, uint64_t addr,
		     const char *binary);
/* The test a libtest thread named `comm` (cut at 15 characters) runs,
 * completed from `fns` when it is cut and one of them begins with it. */
char *tf_libtest_name(const tf_go_tests *fns, const char *comm);

/* libtest's own list of a test binary or of rustdoc's doc-tests: the
 * tests selected, in the order it runs them (libtest.c). */
typedef struct {
	tf_go_tests names;
	TF_VEC(uint8_t) runs;  /* per name: its thread is started (not ignored) */
	bool listed;
} tf_libtest_list;
/* The list of the cargo test binary `path` run with these arguments
 * (NUL-separated, argv[0] first: their filters), in `cwd`; -1 when the
 * binary cannot say. */
int tf_libtest_list_binary(tf_libtest_list *out, const char *path, const char *argv, size_t len,
			   const char *cwd);
/* The doc-tests of rustdoc run with these arguments (its --test), in
 * `cwd`; -1 when it cannot say or runs none. */
int tf_libtest_list_rustdoc(tf_libtest_list *out, const char *argv, size_t len, const char *cwd);
/* The test the k-th thread named `comm` (the kernel's 15 characters of
 * its name) runs; NULL when the list has no k-th. */
const char *tf_libtest_list_name(const tf_libtest_list *l, const char *comm, uint32_t k);
/* The n-th test of the list that runs (0 the first), when its name is
 * the thread's `comm` (cut at 15 characters); NULL otherwise. */
const char *tf_libtest_list_nth(const tf_libtest_list *l, const char *comm, uint32_t n);
void tf_libtest_list_free(tf_libtest_list *l);

/* ---- cxxlist.c ----
 *
 * C++ frameworks' test binaries: Catch2 v2, doctest, Boost.Test.
 */
typedef struct tf_cxx_lists tf_cxx_lists;
tf_cxx_lists *tf_cxx_lists_new(void);
void tf_cxx_lists_free(tf_cxx_lists *l);
/* Whether the binary `path` mapped at `addr` in `pid` is a test binary of
 * one of them: its handle (> 0, its list read once, run in `cwd`), else 0. */
int tf_cxx_detect(tf_cxx_lists *l, tf_symbolizer *sym, uint32_t pid, uint64_t addr,
		  const char *path, const char *cwd);
/* A binary's list from its text, as the binary would print it (the unit
 * tests): `fw` "catch2", "doctest" or "boost"; its handle, 0 for another. */
int tf_cxx_lists_add(tf_cxx_lists *l, const char *path, const char *fw, const char *text);
/* The tests a process of binary `bin` with these arguments (NUL-separated,
 * argv[0] first) ran, appended to `out`: its list with the process's
 * filters; -1 when that cannot be known (no list, Boost's --run_test). */
int tf_cxx_ran(tf_cxx_lists *l, int bin, const char *argv, size_t len, const char *cwd,
	       tf_go_tests *out);
/* The test of framework `fw` ("catch2", ...) a frame of function `fn`
 * (declared at file:line) is, by the lists read so far; NULL for none. */
const char *tf_cxx_frame_test(const tf_cxx_lists *l, const char *fw, const char *fn,
			      const char *file, int line);
/* The lists that could not be read, a note each (why, and what then). */
const tf_go_tests *tf_cxx_lists_notes(const tf_cxx_lists *l);
/* The framework of binary `bin`: "catch2", "doctest", "boost". */
const char *tf_cxx_framework(const tf_cxx_lists *l, int bin);
/* XML's entities decoded, of s[0..n) (runner.c). */
char *tf_xml_text(const char *s, size_t n);
/* Frames name the tests of C++ frameworks by their lists (cxxlist.c). */
void tf_frame_rules_set_cxx(tf_frame_rules *r, const tf_cxx_lists *l);

/* ---- memory.c ----
 *
 * Each test's memory: its exact allocation counts, its sampled live heap
 * and leak, the peak resident set of its processes. The attributor decides
 * whose each event is and says when tests and processes end; this keeps
 * the sums.
 */
typedef struct {
	uint64_t allocs, bytes, frees;  /* exact (counted) */
	uint64_t live, peak, leaked;    /* bytes, from the sampled blocks */
	uint64_t rss_kb;                /* its processes' peak resident set */
	uint64_t samples;               /* its sampled allocations */
	bool counted, sampled, ended;
} tf_mem_test;

typedef struct tf_memacc tf_memacc;

tf_memacc *tf_memacc_new(void);
void tf_memacc_free(tf_memacc *m);

/* A thread's allocations since its previous count, for `test`. */
void tf_memacc_count(tf_memacc *m, tf_strid test, uint64_t allocs, uint64_t bytes,
		     uint64_t frees);
/* A process of `test` peaked at `kb`. */
void tf_memacc_rss(tf_memacc *m, tf_strid test, uint64_t kb);
/* A sampled block `ptr` of process `pid`, made by `test`, standing for
 * `bytes`, counted in profile sample `sample`. */
void tf_memacc_alloc(tf_memacc *m, uint32_t pid, uint64_t ptr, tf_strid test, uint64_t bytes,
		     uint32_t sample);
/* A block freed: true when it was a sampled one whose test still ran,
 * with its profile sample and bytes (the sample's inuse_space to lower). */
bool tf_memacc_release(tf_memacc *m, uint32_t pid, uint64_t ptr, uint32_t *sample,
		       uint64_t *bytes);
/* `test` ended (its end marker): what it made and still holds is its leak. */
void tf_memacc_test_end(tf_memacc *m, tf_strid test);
/* Process `pid` ended: its blocks go, live at their tests' end. */
void tf_memacc_exit(tf_memacc *m, uint32_t pid);

/* The sums of `test`, NULL when nothing was measured for it. */
const tf_mem_test *tf_memacc_test(const tf_memacc *m, tf_strid test);
/* What was measured for `from` is `to`'s now (a test named late). */
void tf_memacc_merge(tf_memacc *m, tf_strid from, tf_strid to);
/* Fill the memory fields of `out` for `test` (left NAN when unmeasured). */
void tf_memacc_meta(const tf_memacc *m, tf_strid test, tf_test_meta *out);

/* ---- pyframes.c ----
 *
 * Python frames in the profile: the stacks the recorder read from CPython
 * processes (record/pyread.c), spliced into each sample's native stack at
 * the evaluation loop's frames.
 */
typedef struct tf_pyframes tf_pyframes;

tf_pyframes *tf_pyframes_new(tf_profile *p);
void tf_pyframes_free(tf_pyframes *f);
/* TF_REC_PYCODE and TF_REC_PYSTACK, in replay order. */
void tf_pyframes_event(tf_pyframes *f, const tf_rec_event *ev);
/* A sample's stack, for tf_pyframes_splice(). */
typedef struct {
	uint32_t *locs;           /* profile locations, leaf first (rewritten) */
	const bool *unresolved;   /* per native location: it had no symbol */
	size_t user;              /* where the user frames start in locs */
	size_t n, max;            /* its length (updated), the room in locs */
	bool truncated;           /* cut short (updated) */
	uint32_t dropped, dropped_unresolved; /* native frames taken out */
} tf_pysplice;

/*
 * Put the Python frames of sample `ev`, read when it was taken, into its
 * stack, and take out what they stand for (the evaluation loop's frames,
 * the interpreter's own C functions, the perf-map trampolines of 3.12+).
 * A native stack cut short that the Python frames carry to the
 * interpreter's outermost frame is no longer truncated. False when the
 * sample has no Python frames (`s` untouched).
 */
bool tf_pyframes_splice(tf_pyframes *f, const tf_rec_event *ev, tf_pysplice *s);
/* testflame.python_* metadata: what was read and spliced. */
void tf_pyframes_write_meta(tf_pyframes *f, const tf_record_info *ri);
/* Whether function `fn` of the profile is a Python function (for the
 * frame rules: pytest's runner and the tests it calls). */
bool tf_pyframes_is_python(const tf_profile *p, uint32_t fn);

/*
 * pytest's tests from Python frames (frames.c's "pytest" preset): the
 * function a runner calls is the test. Anchors: pytest's
 * pytest_pyfunc_call, unittest's TestCase._callTestMethod (TestCase.run
 * before 3.8), which pytest also goes through for TestCase classes.
 */
enum { TF_PYTEST_ANCHOR_PYTEST = 1, TF_PYTEST_ANCHOR_UNITTEST = 2 };
int tf_pytest_anchor(const tf_profile *p, uint32_t fn);
/* A frame of pytest itself (a unittest test under pytest gets its node id). */
bool tf_pytest_runner_frame(const tf_profile *p, uint32_t fn);
typedef struct tf_pytest_names tf_pytest_names;
tf_pytest_names *tf_pytest_names_new(void);
void tf_pytest_names_free(tf_pytest_names *c);
/* The test's name: pytest's node id ("toolz/tests/test_itertoolz.py::
 * test_frequencies", "tests/test_x.py::TestA::test_b"), the same the
 * pytest plugin's markers give; with node_id false, unittest's own
 * ("tests.test_x.TestA.test_b"). `cwd` (may be NULL): the process's
 * working directory, pytest's rootdir when no configuration file says. */
tf_strid tf_pytest_test_name(tf_pytest_names *c, tf_profile *p, uint32_t fn, bool node_id,
			     const char *cwd);

#endif
