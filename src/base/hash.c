/*
 * hash.c - byte hashing, the index hash table and string interning.
 *
 * Profiles are mostly tables of small records that must be deduplicated
 * (strings, functions, locations, stacks). tf_htab stores only indices into
 * the caller's arrays, so every key lives exactly once in memory.
 */
#include "testflame/common.h"

#include <stdlib.h>
#include <string.h>

static inline uint64_t read64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

uint64_t tf_hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);

	while (len >= 8) {
		h = (h ^ tf_hash_u64(read64(p))) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	if (len) {
		uint64_t tail = 0;
		memcpy(&tail, p, len);
		h = (h ^ tf_hash_u64(tail ^ ((uint64_t)len << 56))) * 0xbf58476d1ce4e5b9ULL;
	}
	return tf_hash_u64(h);
}

static inline uint32_t slot_hash(uint64_t s) { return (uint32_t)(s >> 32); }
static inline uint32_t slot_index(uint64_t s) { return (uint32_t)s - 1; }

uint32_t tf_htab_find(const tf_htab *h, uint64_t hash, tf_htab_eq_fn eq,
		      const void *ctx, const void *key)
{
	if (!h->cap)
		return TF_HTAB_NONE;
	uint32_t h32 = (uint32_t)(hash ^ (hash >> 32));
	size_t mask = h->cap - 1, i = h32 & mask;
	for (;;) {
		uint64_t s = h->slots[i];
		if (!s)
			return TF_HTAB_NONE;
		if (slot_hash(s) == h32 && eq(ctx, slot_index(s), key))
			return slot_index(s);
		i = (i + 1) & mask;
	}
}

static void place(uint64_t *slots, size_t cap, uint64_t s)
{
	size_t mask = cap - 1, i = slot_hash(s) & mask;
	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = s;
}

void tf_htab_insert(tf_htab *h, uint64_t hash, uint32_t index)
{
	if ((h->count + 1) * 4 > h->cap * 3) {
		size_t ncap = h->cap ? h->cap * 2 : 64;
		uint64_t *ns = tf_xcalloc(ncap, sizeof(uint64_t));
		for (size_t i = 0; i < h->cap; i++)
			if (h->slots[i])
				place(ns, ncap, h->slots[i]);
		free(h->slots);
		h->slots = ns;
		h->cap = ncap;
	}
	uint32_t h32 = (uint32_t)(hash ^ (hash >> 32));
	place(h->slots, h->cap, ((uint64_t)h32 << 32) | ((uint64_t)index + 1));
	h->count++;
}

void tf_htab_remove(tf_htab *h, uint64_t hash, uint32_t index)
{
	uint32_t h32 = (uint32_t)(hash ^ (hash >> 32));
	uint64_t want = ((uint64_t)h32 << 32) | ((uint64_t)index + 1);
	size_t mask = h->cap - 1, i, j;

	if (!h->cap)
		return;
	for (i = h32 & mask;; i = (i + 1) & mask) {
		if (!h->slots[i])
			return;
		if (h->slots[i] == want)
			break;
	}
	h->slots[i] = 0;
	h->count--;
	/* backward shift: no tombstones, so a table that sees entries come and
	 * go by the thousand (threads of a traced tree) keeps short probes.
	 * An entry moves into the hole unless its home lies cyclically in
	 * (hole, its slot]. */
	for (j = i;;) {
		j = (j + 1) & mask;
		if (!h->slots[j])
			return;
		size_t home = slot_hash(h->slots[j]) & mask;
		bool stays = j > i ? (home > i && home <= j) : (home > i || home <= j);
		if (!stays) {
			h->slots[i] = h->slots[j];
			h->slots[j] = 0;
			i = j;
		}
	}
}

void tf_htab_clear(tf_htab *h)
{
	if (h->slots)
		memset(h->slots, 0, h->cap * sizeof(uint64_t));
	h->count = 0;
}

void tf_htab_free(tf_htab *h)
{
	free(h->slots);
	h->slots = NULL;
	h->cap = h->count = 0;
}

struct str_key {
	const char *s;
	size_t len;
};

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_strtab *t = ctx;
	const struct str_key *k = key;
	return t->lens.v[idx] == k->len && memcmp(t->strs.v[idx], k->s, k->len) == 0;
}

void tf_strtab_init(tf_strtab *t)
{
	memset(t, 0, sizeof(*t));
	t->arena = tf_arena_new();
	tf_strtab_intern(t, "", 0);
}

uint32_t tf_strtab_push(tf_strtab *t, const char *s, size_t len)
{
	uint32_t id = (uint32_t)t->strs.n;
	tf_vec_push(&t->strs, tf_arena_strndup(t->arena, s, len));
	tf_vec_push(&t->lens, (uint32_t)len);
	/* keep the index complete only if it is in use */
	if (t->index.count)
		tf_htab_insert(&t->index, tf_hash_bytes(s, len, 0), id);
	return id;
}

static void index_all(tf_strtab *t)
{
	if (t->index.count == t->strs.n)
		return;
	tf_htab_clear(&t->index);
	for (size_t i = 0; i < t->strs.n; i++)
		tf_htab_insert(&t->index, tf_hash_bytes(t->strs.v[i], t->lens.v[i], 0),
			       (uint32_t)i);
}

uint32_t tf_strtab_lookup(tf_strtab *t, const char *s, size_t len)
{
	struct str_key k = { s, len };
	index_all(t);
	return tf_htab_find(&t->index, tf_hash_bytes(s, len, 0), str_eq, t, &k);
}

uint32_t tf_strtab_intern(tf_strtab *t, const char *s, size_t len)
{
	struct str_key k = { s, len };
	uint64_t h = tf_hash_bytes(s, len, 0);
	uint32_t id;

	index_all(t);
	id = tf_htab_find(&t->index, h, str_eq, t, &k);
	if (id != TF_HTAB_NONE)
		return id;
	id = (uint32_t)t->strs.n;
	tf_vec_push(&t->strs, tf_arena_strndup(t->arena, s, len));
	tf_vec_push(&t->lens, (uint32_t)len);
	tf_htab_insert(&t->index, h, id);
	return id;
}

void tf_strtab_free(tf_strtab *t)
{
	tf_vec_free(&t->strs);
	tf_vec_free(&t->lens);
	tf_htab_free(&t->index);
	tf_arena_free(t->arena);
	t->arena = NULL;
}
