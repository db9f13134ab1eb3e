/*
 * memory.h - each test's memory (private to src/attribute): its exact
 * allocation counts, its sampled live heap and leak, the peak resident set
 * of its processes (memory.c). The attributor decides whose each event is
 * and says when tests and processes end; this keeps the sums.
 */
#ifndef TESTFLAME_ATTRIBUTE_MEMORY_H
#define TESTFLAME_ATTRIBUTE_MEMORY_H

#include "testflame/attribute.h"

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
/* Fill the memory fields of `out` for `test` (left NAN when unmeasured). */
void tf_memacc_meta(const tf_memacc *m, tf_strid test, tf_test_meta *out);

#endif
