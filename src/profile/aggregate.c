/*
 * aggregate.c - per-function self/total costs and per-label totals.
 *
 * Large runs hold about a million samples over a hundred thousand distinct
 * stacks, so the work per frame must be an array lookup: every line record
 * (and every symbol-less location) of the profile is mapped once, lazily, to
 * its entry, and recursion is discounted with a per-entry stamp of the last
 * sample that counted it, instead of a set per sample.
 */
#include "testflame/aggregate.h"
#include "profile_int.h"

#include <stdlib.h>
#include <string.h>

#define UNSET UINT32_MAX

struct agg_key {
	const char *name, *file;
	int64_t line;
};

static uint64_t key_hash(tf_agg_granularity g, const struct agg_key *k)
{
	uint64_t h = tf_hash_bytes(k->name, strlen(k->name), 1);
	if (g >= TF_AGG_FILE_FUNCTION)
		h = tf_hash_combine(h, tf_hash_bytes(k->file, strlen(k->file), 2));
	if (g == TF_AGG_LINE)
		h = tf_hash_combine(h, (uint64_t)k->line);
	return h;
}

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_aggregate *a = ctx;
	const tf_agg_entry *e = &a->entries[idx];
	const struct agg_key *k = key;

	if (strcmp(e->name, k->name) != 0)
		return false;
	if (a->granularity >= TF_AGG_FILE_FUNCTION && strcmp(e->filename, k->file) != 0)
		return false;
	return a->granularity != TF_AGG_LINE || e->line == k->line;
}

static uint32_t entry_for(tf_aggregate *a, const struct agg_key *k)
{
	uint64_t h = key_hash(a->granularity, k);
	uint32_t idx = tf_htab_find(&a->index, h, key_eq, a, k), sid;
	tf_agg_entry *e;

	if (idx != TF_HTAB_NONE)
		return idx;
	if (a->n == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 256;
		a->entries = tf_xrealloc(a->entries, a->cap * sizeof(*a->entries));
	}
	idx = (uint32_t)a->n++;
	e = &a->entries[idx];
	/* intern first: interning may move strs.v */
	sid = tf_strtab_intern(&a->strings, k->name, strlen(k->name));
	e->name = a->strings.strs.v[sid];
	sid = tf_strtab_intern(&a->strings, k->file, strlen(k->file));
	e->filename = a->strings.strs.v[sid];
	e->line = k->line;
	e->self = e->total = 0;
	tf_htab_insert(&a->index, h, idx);
	return idx;
}

static void rebuild_index(tf_aggregate *a)
{
	tf_htab_clear(&a->index);
	for (size_t i = 0; i < a->n; i++) {
		struct agg_key k = { a->entries[i].name, a->entries[i].filename, a->entries[i].line };
		tf_htab_insert(&a->index, key_hash(a->granularity, &k), (uint32_t)i);
	}
}

/* Lazily built maps from the profile's records to entries. */
typedef struct {
	const tf_profile *p;
	tf_aggregate *a;
	uint32_t *by_fn;   /* function -> entry (function granularities) */
	uint32_t *by_line; /* line record -> entry */
	uint32_t *by_loc;  /* symbol-less location -> entry */
} mapper;

static uint32_t line_entry(mapper *m, uint32_t li)
{
	const tf_profile *p = m->p;
	const tf_line *ln;
	const tf_function *f;

	if (m->by_line[li] != UNSET)
		return m->by_line[li];
	ln = &p->lines.v[li];
	f = &p->functions.v[ln->function];
	if (m->a->granularity != TF_AGG_LINE && m->by_fn[ln->function] != UNSET) {
		m->by_line[li] = m->by_fn[ln->function];
		return m->by_line[li];
	}
	struct agg_key k = { tf_profile_str(p, f->name), tf_profile_str(p, f->filename),
			     m->a->granularity == TF_AGG_LINE ? ln->line : f->start_line };
	if (!*k.name)
		k.name = tf_profile_str(p, f->system_name);
	if (!*k.name)
		k.name = "??";
	m->by_line[li] = entry_for(m->a, &k);
	if (m->a->granularity != TF_AGG_LINE)
		m->by_fn[ln->function] = m->by_line[li];
	return m->by_line[li];
}

static uint32_t loc_entry(mapper *m, uint32_t loc)
{
	if (m->by_loc[loc] == UNSET) {
		const tf_location *l = &m->p->locations.v[loc];
		char name[32];
		snprintf(name, sizeof(name), "0x%llx", (unsigned long long)l->address);
		struct agg_key k = { name, l->mapping == TF_NO_MAPPING ? "" :
				     tf_profile_str(m->p, m->p->mappings.v[l->mapping].filename), 0 };
		m->by_loc[loc] = entry_for(m->a, &k);
	}
	return m->by_loc[loc];
}

int tf_aggregate_new(tf_aggregate **out, const tf_profile *p, const tf_agg_options *opts)
{
	tf_aggregate *a;
	mapper m;
	size_t nv = p->sample_types.n, vi = opts->value;
	uint32_t *seen = NULL;
	size_t seen_cap = 0;

	*out = NULL;
	if (vi >= nv)
		return tf_error_set(TF_EINVAL, "the profile has no value column %zu", vi);
	a = tf_xcalloc(1, sizeof(*a));
	tf_strtab_init(&a->strings);
	a->granularity = opts->granularity;
	m.p = p;
	m.a = a;
	m.by_fn = tf_xmalloc((p->functions.n + 1) * sizeof(uint32_t));
	m.by_line = tf_xmalloc((p->lines.n + 1) * sizeof(uint32_t));
	m.by_loc = tf_xmalloc((p->locations.n + 1) * sizeof(uint32_t));
	memset(m.by_fn, 0xff, (p->functions.n + 1) * sizeof(uint32_t));
	memset(m.by_line, 0xff, (p->lines.n + 1) * sizeof(uint32_t));
	memset(m.by_loc, 0xff, (p->locations.n + 1) * sizeof(uint32_t));

	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		int64_t v = p->values.v[i * nv + vi];
		uint32_t stamp = (uint32_t)(i + 1);
		bool leaf = true;

		if (v == 0 || (opts->mask && !opts->mask[i]))
			continue;
		a->total += v;
		a->nsamples++;
		for (uint32_t j = 0; j < s->nlocs; j++) {
			uint32_t loc = p->stack.v[s->locs_off + j];
			const tf_location *l = &p->locations.v[loc];
			uint32_t nl = l->nlines ? l->nlines : 1;
			for (uint32_t k = 0; k < nl; k++) {
				uint32_t e = l->nlines ? line_entry(&m, l->lines_off + k) : loc_entry(&m, loc);
				if (e >= seen_cap) {
					size_t ncap = TF_MAX(a->cap, (size_t)e + 1);
					seen = tf_xrealloc(seen, ncap * sizeof(*seen));
					memset(seen + seen_cap, 0, (ncap - seen_cap) * sizeof(*seen));
					seen_cap = ncap;
				}
				if (leaf) {
					a->entries[e].self += v;
					leaf = false;
				}
				if (seen[e] != stamp) {
					seen[e] = stamp;
					a->entries[e].total += v;
				}
			}
		}
	}
	free(seen);
	free(m.by_fn);
	free(m.by_line);
	free(m.by_loc);
	*out = a;
	return 0;
}

static int cmp_name(const tf_agg_entry *x, const tf_agg_entry *y)
{
	int c = strcmp(x->name, y->name);
	if (!c)
		c = strcmp(x->filename, y->filename);
	if (!c)
		c = (x->line > y->line) - (x->line < y->line);
	return c;
}

/* pprof's FlatNameOrder and CumNameOrder: the value, then the name. */
static int cmp_self(const void *a, const void *b)
{
	const tf_agg_entry *x = a, *y = b;
	int c;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return cmp_name(x, y);
}

static int cmp_total(const void *a, const void *b)
{
	const tf_agg_entry *x = a, *y = b;
	int c;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if ((c = strcmp(x->name, y->name)) != 0)
		return c;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return cmp_name(x, y);
}

static int cmp_names(const void *a, const void *b)
{
	return cmp_name(a, b);
}

void tf_aggregate_sort(tf_aggregate *a, tf_agg_order order)
{
	if (a->n > 1)
		qsort(a->entries, a->n, sizeof(*a->entries),
		      order == TF_AGG_BY_TOTAL ? cmp_total : order == TF_AGG_BY_NAME ? cmp_names : cmp_self);
	rebuild_index(a);
}

const tf_agg_entry *tf_aggregate_find(const tf_aggregate *a, const char *name,
				      const char *filename, int64_t line)
{
	struct agg_key k = { name, filename ? filename : "", line };
	uint32_t idx = tf_htab_find(&a->index, key_hash(a->granularity, &k), key_eq, a, &k);
	return idx == TF_HTAB_NONE ? NULL : &a->entries[idx];
}

void tf_aggregate_free(tf_aggregate *a)
{
	if (!a)
		return;
	free(a->entries);
	tf_strtab_free(&a->strings);
	tf_htab_free(&a->index);
	free(a);
}

/* label groups */

struct distinct_key {
	uint32_t group, which;
	uint64_t value;
};

static bool distinct_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct distinct_key *v = ctx, *k = key;
	return v[idx].group == k->group && v[idx].which == k->which && v[idx].value == k->value;
}

/* A label's value as one number: numeric labels as they are, string
 * labels by a hash of their text (the top bit keeps the two apart). */
static bool label_value(const tf_profile *p, const tf_sample *s, const uint8_t *key_flags,
			uint64_t *out)
{
	const tf_label *l = p->labels.v + s->labels_off;
	for (uint32_t j = 0; j < s->nlabels; j++) {
		if (!key_flags[l[j].key])
			continue;
		if (l[j].str) {
			const char *t = tf_profile_str(p, l[j].str);
			*out = tf_hash_bytes(t, strlen(t), 3) | (1ULL << 63);
		} else {
			*out = (uint64_t)l[j].num & ~(1ULL << 63);
		}
		return true;
	}
	return false;
}

static int cmp_group(const void *a, const void *b, void *column)
{
	const tf_label_group *x = a, *y = b;
	size_t c = *(const size_t *)column;
	if (!x->value || !y->value)
		return !x->value - !y->value; /* unlabelled last */
	if (x->sums[c] != y->sums[c])
		return x->sums[c] > y->sums[c] ? -1 : 1;
	return strcmp(x->value, y->value);
}

static bool group_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_label_group *g = ctx;
	return g[idx].value && strcmp(g[idx].value, key) == 0;
}

int tf_label_groups_new(tf_label_groups **out, const tf_profile *p, const char *key,
			const char *const *count_keys, size_t ncount)
{
	tf_label_groups *lg;
	size_t nv = p->sample_types.n, nstr = p->strings.strs.n;
	uint8_t *kf, *cf[TF_GROUP_MAX_COUNTS];
	uint32_t *by_str, none = UNSET;
	TF_VEC(tf_label_group) groups = { 0 };
	TF_VEC(struct distinct_key) seen = { 0 };
	tf_htab names = { 0 }, seen_index = { 0 };
	size_t column;
	int dv;

	*out = NULL;
	if (ncount > TF_GROUP_MAX_COUNTS)
		return tf_error_set(TF_EUSAGE, "at most %d distinct counts per group",
				    TF_GROUP_MAX_COUNTS);
	lg = tf_xcalloc(1, sizeof(*lg));
	lg->arena = tf_arena_new();
	kf = tf_profile_string_flags(p, key);
	for (size_t c = 0; c < ncount; c++)
		cf[c] = tf_profile_string_flags(p, count_keys[c]);
	by_str = tf_xmalloc((nstr + 1) * sizeof(uint32_t));
	memset(by_str, 0xff, (nstr + 1) * sizeof(uint32_t));

	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		tf_strid sv = tf_sample_label_flagged(p, s, kf);
		uint32_t gi = sv ? by_str[sv] : none;

		if (gi == UNSET) {
			const char *name = sv ? tf_profile_str(p, sv) : NULL;
			uint64_t h = name ? tf_hash_bytes(name, strlen(name), 0) : 0;
			gi = name ? tf_htab_find(&names, h, group_eq, groups.v, name) : TF_HTAB_NONE;
			if (gi == TF_HTAB_NONE) {
				tf_label_group g = { 0 };
				g.value = name ? tf_arena_strdup(lg->arena, name) : NULL;
				g.sums = tf_arena_alloc(lg->arena, (nv + 1) * sizeof(int64_t));
				memset(g.sums, 0, (nv + 1) * sizeof(int64_t));
				gi = (uint32_t)groups.n;
				tf_vec_push(&groups, g);
				if (name)
					tf_htab_insert(&names, h, gi);
			}
			if (sv)
				by_str[sv] = gi;
			else
				none = gi;
		}
		if (sv)
			lg->any_labelled = true;
		tf_label_group *g = &groups.v[gi];
		const int64_t *v = tf_sample_values(p, i);
		for (size_t k = 0; k < nv; k++)
			g->sums[k] += v[k];
		g->records++;
		for (size_t c = 0; c < ncount; c++) {
			struct distinct_key dk = { gi, (uint32_t)c, 0 };
			if (!label_value(p, s, cf[c], &dk.value))
				continue;
			uint64_t h = tf_hash_combine(tf_hash_combine(tf_hash_u64(gi), c), dk.value);
			if (tf_htab_find(&seen_index, h, distinct_eq, seen.v, &dk) != TF_HTAB_NONE)
				continue;
			tf_htab_insert(&seen_index, h, (uint32_t)seen.n);
			tf_vec_push(&seen, dk);
			g->distinct[c]++;
		}
	}

	dv = tf_profile_default_value(p);
	column = dv < 0 ? 0 : (size_t)dv;
	if (groups.n > 1)
		qsort_r(groups.v, groups.n, sizeof(*groups.v), cmp_group, &column);
	lg->groups = groups.v;
	lg->n = groups.n;

	free(kf);
	for (size_t c = 0; c < ncount; c++)
		free(cf[c]);
	free(by_str);
	tf_vec_free(&seen);
	tf_htab_free(&names);
	tf_htab_free(&seen_index);
	*out = lg;
	return 0;
}

void tf_label_groups_free(tf_label_groups *g)
{
	if (!g)
		return;
	free(g->groups);
	tf_arena_free(g->arena);
	free(g);
}
