/*
 * alloc.h - measuring the command's allocations (private to src/record):
 * the allocation sampler (preload/tfalloc.c) found or unpacked, the
 * environment that preloads it into the command's processes, and after
 * the run what their files say, into the spool (alloc.c).
 */
#ifndef TESTFLAME_RECORD_ALLOC_H
#define TESTFLAME_RECORD_ALLOC_H

#include "spool.h"

typedef struct tf_alloc tf_alloc;

/*
 * Prepare a run's measure of allocations: a directory for the processes'
 * files, the library to preload, and the variables that preload it, with
 * `rate` (mean bytes between samples; 0 the default) and `stack_bytes`
 * (copied a sample for DWARF unwinding; 0 none). `program` is the
 * command's path: a program the sampler must not enter (a sanitizer
 * build) runs without it, and so does everything it starts. A library
 * that cannot be had is no error: the command runs without it, and
 * tf_alloc_collect() says why in the run's notes.
 */
int tf_alloc_open(tf_alloc **out, unsigned rate, unsigned stack_bytes, const char *program);
/* "KEY=VALUE" to add to the command's environment, NULL-terminated. */
char *const *tf_alloc_env(const tf_alloc *a);
/* The directory (the launcher's guard removes it if testflame dies). */
const char *tf_alloc_dir(const tf_alloc *a);
/*
 * The programs the sampler does not enter (static ones, Go's, setuid
 * ones) have their peak resident set read from /proc while they live:
 * tf_alloc_watch() at each exec, tf_alloc_poll() at each turn of the
 * recording loop (at most every few milliseconds), which drops the images
 * whose sampler's file appeared (it tells their peak at their exit, to
 * the page). A lower bound: what a process reached after its last read.
 */
void tf_alloc_watch(tf_alloc *a, uint32_t pid, uint64_t time);
void tf_alloc_poll(tf_alloc *a);

/*
 * After the run: every process image's samples, frees, counts and peak
 * into the spool (TF_SPOOL_ALLOC*), and the notes of what stepped aside
 * (TF_SPOOL_NOTE). Files that do not read are counted in `info`, not
 * errors; only a spool that refuses a record is.
 */
int tf_alloc_collect(tf_alloc *a, tf_spool *s, tf_record_info *info);
/* Removes the directory. */
void tf_alloc_free(tf_alloc *a);

#endif
