/*
 * memory.c - each test's memory, from the allocation sampler's events as
 * the attribution hands them over (see memory.h).
 *
 * Counts are exact: each thread's allocations between two of its counts
 * go to the test that ran then. The live heap is the sampled blocks not
 * yet freed, each standing for its weight in bytes: a test's live bytes are
 * those of the blocks it made, its peak their most at once, and what is
 * still live when it ends (its end marker, its process's exit) its leak.
 * A block freed after its test ended stays in that test's leak and in the
 * profile's inuse_space, which is what a test left behind.
 */
#include "attribute_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint32_t pid;
	uint64_t ptr;
	tf_strid test;
	uint64_t bytes;
	uint32_t sample;
	bool outlived;          /* its test ended with it live */
} block;

struct tf_memacc {
	TF_VEC(tf_mem_test) tests;   /* by test strid */
	TF_VEC(block) blocks;
	tf_htab index;               /* (pid, ptr) -> blocks */
	uint64_t rss_peak_any;
};

static uint64_t block_hash(uint32_t pid, uint64_t ptr)
{
	return tf_hash_u64(ptr ^ ((uint64_t)pid << 48) ^ pid);
}

struct key {
	uint32_t pid;
	uint64_t ptr;
};

static bool block_eq(const void *ctx, uint32_t idx, const void *k)
{
	const block *b = &((const block *)ctx)[idx];
	const struct key *key = k;
	return b->pid == key->pid && b->ptr == key->ptr;
}

tf_memacc *tf_memacc_new(void)
{
	return tf_xcalloc(1, sizeof(tf_memacc));
}

void tf_memacc_free(tf_memacc *m)
{
	if (!m)
		return;
	tf_vec_free(&m->tests);
	tf_vec_free(&m->blocks);
	tf_htab_free(&m->index);
	free(m);
}

static tf_mem_test *test_of(tf_memacc *m, tf_strid test)
{
	while (m->tests.n <= test) {
		tf_mem_test z;
		memset(&z, 0, sizeof(z));
		tf_vec_push(&m->tests, z);
	}
	return &m->tests.v[test];
}

const tf_mem_test *tf_memacc_test(const tf_memacc *m, tf_strid test)
{
	if (!m || test >= m->tests.n)
		return NULL;
	const tf_mem_test *t = &m->tests.v[test];
	return t->counted || t->sampled || t->rss_kb ? t : NULL;
}

void tf_memacc_count(tf_memacc *m, tf_strid test, uint64_t allocs, uint64_t bytes,
		     uint64_t frees)
{
	tf_mem_test *t = test_of(m, test);
	t->allocs += allocs;
	t->bytes += bytes;
	t->frees += frees;
	t->counted = true;
}

void tf_memacc_rss(tf_memacc *m, tf_strid test, uint64_t kb)
{
	tf_mem_test *t = test_of(m, test);
	if (kb > t->rss_kb)
		t->rss_kb = kb;
}

/* Remove block i, keeping the table's indices right. */
static void drop(tf_memacc *m, size_t i)
{
	block *b = &m->blocks.v[i];
	size_t last = m->blocks.n - 1;
	tf_htab_remove(&m->index, block_hash(b->pid, b->ptr), (uint32_t)i);
	if (i != last) {
		block *l = &m->blocks.v[last];
		tf_htab_remove(&m->index, block_hash(l->pid, l->ptr), (uint32_t)last);
		*b = *l;
		tf_htab_insert(&m->index, block_hash(b->pid, b->ptr), (uint32_t)i);
	}
	m->blocks.n--;
}

void tf_memacc_alloc(tf_memacc *m, uint32_t pid, uint64_t ptr, tf_strid test, uint64_t bytes,
		     uint32_t sample)
{
	struct key k = { pid, ptr };
	uint32_t i = tf_htab_find(&m->index, block_hash(pid, ptr), block_eq, m->blocks.v, &k);
	if (i != TF_HTAB_NONE)
		drop(m, i); /* its free was not seen: the block was reused */
	tf_mem_test *t = test_of(m, test);
	t->ended = false;
	t->sampled = true;
	t->samples++;
	t->live += bytes;
	if (t->live > t->peak)
		t->peak = t->live;
	block b = { pid, ptr, test, bytes, sample, false };
	tf_vec_push(&m->blocks, b);
	tf_htab_insert(&m->index, block_hash(pid, ptr), (uint32_t)m->blocks.n - 1);
}

bool tf_memacc_release(tf_memacc *m, uint32_t pid, uint64_t ptr, uint32_t *sample,
		       uint64_t *bytes)
{
	struct key k = { pid, ptr };
	uint32_t i = tf_htab_find(&m->index, block_hash(pid, ptr), block_eq, m->blocks.v, &k);
	if (i == TF_HTAB_NONE)
		return false;
	block *b = &m->blocks.v[i];
	bool inuse = !b->outlived;
	tf_mem_test *t = test_of(m, b->test);
	if (inuse && t->live >= b->bytes)
		t->live -= b->bytes;
	*sample = b->sample;
	*bytes = b->bytes;
	drop(m, i);
	return inuse;
}

void tf_memacc_test_end(tf_memacc *m, tf_strid test)
{
	if (test >= m->tests.n)
		return;
	tf_mem_test *t = &m->tests.v[test];
	for (size_t i = 0; i < m->blocks.n; i++) {
		block *b = &m->blocks.v[i];
		if (b->test == test && !b->outlived) {
			b->outlived = true;
			t->leaked += b->bytes;
		}
	}
	t->live = 0;
	t->ended = true;
}

void tf_memacc_exit(tf_memacc *m, uint32_t pid)
{
	for (size_t i = m->blocks.n; i-- > 0;) {
		block *b = &m->blocks.v[i];
		if (b->pid != pid)
			continue;
		tf_mem_test *t = test_of(m, b->test);
		if (!b->outlived) {
			/* live when its process ended, and so when its test did */
			t->leaked += b->bytes;
			if (t->live >= b->bytes)
				t->live -= b->bytes;
		}
		drop(m, i);
	}
}

void tf_memacc_merge(tf_memacc *m, tf_strid from, tf_strid to)
{
	if (from >= m->tests.n)
		return;
	tf_mem_test f = m->tests.v[from], *t = test_of(m, to);
	t->allocs += f.allocs;
	t->bytes += f.bytes;
	t->frees += f.frees;
	t->live += f.live;
	t->peak = TF_MAX(t->peak, f.peak);
	t->leaked += f.leaked;
	t->rss_kb = TF_MAX(t->rss_kb, f.rss_kb);
	t->samples += f.samples;
	t->counted |= f.counted;
	t->sampled |= f.sampled;
	t->ended |= f.ended;
	memset(&m->tests.v[from], 0, sizeof(tf_mem_test));
	for (size_t i = 0; i < m->blocks.n; i++)
		if (m->blocks.v[i].test == from)
			m->blocks.v[i].test = to;
}

void tf_memacc_meta(const tf_memacc *m, tf_strid test, tf_test_meta *out)
{
	const tf_mem_test *t = tf_memacc_test(m, test);
	if (!t)
		return;
	if (t->counted) {
		out->allocs = (double)t->allocs;
		out->alloc_bytes = (double)t->bytes;
		out->frees = (double)t->frees;
	}
	if (t->sampled || t->counted) {
		out->heap_peak = (double)t->peak;
		out->leaked = (double)t->leaked;
		out->alloc_samples = (double)t->samples;
	}
	if (t->rss_kb)
		out->rss_peak = (double)t->rss_kb * 1024;
}
