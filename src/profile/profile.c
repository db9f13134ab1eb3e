/*
 * profile.c - building and querying the in-memory profile.
 *
 * The builder deduplicates functions, locations and samples through index
 * hash tables over the profile's own arrays, so a run of a million samples
 * over a few thousand distinct stacks stays a few thousand entries. Decoders
 * of foreign files push entries directly and leave the indices to be built
 * lazily the first time a deduplicating add needs them.
 */
#include "testflame/profile.h"

#include <stdlib.h>
#include <string.h>

int tf_profile_new(tf_profile **out)
{
	tf_profile *p = tf_xcalloc(1, sizeof(*p));
	tf_strtab_init(&p->strings);
	p->merge_samples = true;
	/* Readers take `v + off` for an entry's slice even when it is empty (a
	 * sample without frames or labels); that is only defined on an
	 * allocated array, so the pooled arrays never have a NULL base. */
	tf_vec_reserve(&p->lines, 1);
	tf_vec_reserve(&p->stack, 1);
	tf_vec_reserve(&p->values, 1);
	tf_vec_reserve(&p->labels, 1);
	*out = p;
	return 0;
}

void tf_profile_free(tf_profile *p)
{
	if (!p)
		return;
	tf_strtab_free(&p->strings);
	tf_vec_free(&p->sample_types);
	tf_vec_free(&p->functions);
	tf_vec_free(&p->lines);
	tf_vec_free(&p->locations);
	tf_vec_free(&p->mappings);
	tf_vec_free(&p->samples);
	tf_vec_free(&p->stack);
	tf_vec_free(&p->values);
	tf_vec_free(&p->labels);
	tf_vec_free(&p->comments);
	tf_htab_free(&p->fn_index);
	tf_htab_free(&p->loc_index);
	tf_htab_free(&p->sample_index);
	tf_buf_free(&p->source);
	free(p);
}

/* What tf_profile_source checks: the tables' sizes and the sums of the
 * values and labels, so that a profile added to or edited in place no
 * longer passes for the file it came from. */
static uint64_t source_print(const tf_profile *p)
{
	uint64_t h = tf_hash_combine(p->samples.n, p->stack.n);
	uint64_t v = 0, l = 0;
	h = tf_hash_combine(h, p->locations.n);
	h = tf_hash_combine(h, p->functions.n);
	h = tf_hash_combine(h, p->lines.n);
	h = tf_hash_combine(h, p->mappings.n);
	h = tf_hash_combine(h, p->strings.strs.n);
	h = tf_hash_combine(h, p->labels.n);
	h = tf_hash_combine(h, p->sample_types.n);
	h = tf_hash_combine(h, p->comments.n);
	for (size_t i = 0; i < p->values.n; i++)
		v = v * 31 + (uint64_t)p->values.v[i];
	for (size_t i = 0; i < p->labels.n; i++)
		l = l * 31 + ((uint64_t)p->labels.v[i].key << 32 ^ p->labels.v[i].str) +
		    (uint64_t)p->labels.v[i].num;
	for (size_t i = 0; i < p->samples.n; i++)
		l = l * 31 + p->samples.v[i].labels_off + p->samples.v[i].nlabels;
	return tf_hash_combine(tf_hash_combine(h, v), l);
}

void tf_profile_keep_source(tf_profile *p, tf_buf *gz)
{
	tf_buf_free(&p->source);
	p->source = *gz;
	*gz = (tf_buf)TF_BUF_INIT;
	p->source_print = source_print(p);
}

const tf_buf *tf_profile_source(const tf_profile *p)
{
	if (!p->source.len || source_print(p) != p->source_print)
		return NULL;
	return &p->source;
}

void tf_profile_set_merge(tf_profile *p, bool merge)
{
	p->merge_samples = merge;
}

tf_strid tf_profile_intern(tf_profile *p, const char *s)
{
	return tf_strtab_intern(&p->strings, s ? s : "", s ? strlen(s) : 0);
}

tf_strid tf_profile_intern_len(tf_profile *p, const char *s, size_t len)
{
	return tf_strtab_intern(&p->strings, s, len);
}

size_t tf_profile_add_sample_type(tf_profile *p, const char *type, const char *unit)
{
	tf_value_type vt = { tf_profile_intern(p, type), tf_profile_intern(p, unit) };
	tf_vec_push(&p->sample_types, vt);
	return p->sample_types.n - 1;
}

int tf_profile_find_sample_type(const tf_profile *p, const char *type)
{
	for (size_t i = 0; i < p->sample_types.n; i++)
		if (strcmp(tf_profile_str(p, p->sample_types.v[i].type), type) == 0)
			return (int)i;
	return -1;
}

/* functions */

static uint64_t fn_hash(const tf_function *f)
{
	uint64_t h = tf_hash_u64(f->name);
	h = tf_hash_combine(h, f->system_name);
	h = tf_hash_combine(h, f->filename);
	return tf_hash_combine(h, (uint64_t)f->start_line);
}

static bool fn_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_profile *p = ctx;
	const tf_function *a = &p->functions.v[idx], *b = key;
	return a->name == b->name && a->system_name == b->system_name &&
	       a->filename == b->filename && a->start_line == b->start_line;
}

static void fn_index_all(tf_profile *p)
{
	if (p->fn_index.count == p->functions.n)
		return;
	tf_htab_clear(&p->fn_index);
	for (size_t i = 0; i < p->functions.n; i++)
		tf_htab_insert(&p->fn_index, fn_hash(&p->functions.v[i]), (uint32_t)i);
}

uint32_t tf_profile_add_function(tf_profile *p, tf_strid name, tf_strid system_name,
				 tf_strid filename, int64_t start_line)
{
	tf_function f = { name, system_name, filename, start_line };
	uint64_t h = fn_hash(&f);
	uint32_t idx;

	fn_index_all(p);
	idx = tf_htab_find(&p->fn_index, h, fn_eq, p, &f);
	if (idx != TF_HTAB_NONE)
		return idx;
	idx = (uint32_t)p->functions.n;
	tf_vec_push(&p->functions, f);
	tf_htab_insert(&p->fn_index, h, idx);
	return idx;
}

uint32_t tf_profile_function(tf_profile *p, const char *name, const char *filename,
			     int64_t start_line)
{
	tf_strid n = tf_profile_intern(p, name);
	return tf_profile_add_function(p, n, n, tf_profile_intern(p, filename), start_line);
}

uint32_t tf_profile_add_mapping(tf_profile *p, const tf_mapping *m)
{
	for (size_t i = 0; i < p->mappings.n; i++) {
		const tf_mapping *o = &p->mappings.v[i];
		if (o->memory_start == m->memory_start && o->memory_limit == m->memory_limit &&
		    o->file_offset == m->file_offset && o->filename == m->filename &&
		    o->build_id == m->build_id)
			return (uint32_t)i;
	}
	tf_vec_push(&p->mappings, *m);
	return (uint32_t)p->mappings.n - 1;
}

/* locations */

struct loc_key {
	uint32_t mapping;
	uint64_t address;
	const tf_line *lines;
	uint32_t nlines;
};

static uint64_t loc_hash(uint32_t mapping, uint64_t address, const tf_line *lines,
			 uint32_t nlines)
{
	uint64_t h = tf_hash_combine(tf_hash_u64(mapping), address);
	if (address == 0)
		for (uint32_t i = 0; i < nlines; i++)
			h = tf_hash_combine(tf_hash_combine(h, lines[i].function),
					    (uint64_t)lines[i].line);
	return h;
}

static bool loc_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_profile *p = ctx;
	const tf_location *l = &p->locations.v[idx];
	const struct loc_key *k = key;

	if (l->mapping != k->mapping || l->address != k->address)
		return false;
	if (k->address != 0)
		return true;
	if (l->nlines != k->nlines)
		return false;
	for (uint32_t i = 0; i < k->nlines; i++) {
		const tf_line *a = &p->lines.v[l->lines_off + i];
		if (a->function != k->lines[i].function || a->line != k->lines[i].line)
			return false;
	}
	return true;
}

static void loc_index_all(tf_profile *p)
{
	if (p->loc_index.count == p->locations.n)
		return;
	tf_htab_clear(&p->loc_index);
	for (size_t i = 0; i < p->locations.n; i++) {
		const tf_location *l = &p->locations.v[i];
		tf_htab_insert(&p->loc_index,
			       loc_hash(l->mapping, l->address, p->lines.v + l->lines_off,
					l->nlines),
			       (uint32_t)i);
	}
}

uint32_t tf_profile_add_location(tf_profile *p, uint32_t mapping, uint64_t address,
				 const tf_line *lines, uint32_t nlines)
{
	struct loc_key k = { mapping, address, lines, nlines };
	uint64_t h = loc_hash(mapping, address, lines, nlines);
	uint32_t idx;
	tf_location l;

	loc_index_all(p);
	idx = tf_htab_find(&p->loc_index, h, loc_eq, p, &k);
	if (idx != TF_HTAB_NONE)
		return idx;
	l.mapping = mapping;
	l.address = address;
	l.lines_off = (uint32_t)p->lines.n;
	l.nlines = nlines;
	l.is_folded = false;
	if (nlines) {
		/* a location without symbols may come with lines == NULL */
		tf_vec_reserve(&p->lines, p->lines.n + nlines);
		memcpy(p->lines.v + p->lines.n, lines, nlines * sizeof(*lines));
		p->lines.n += nlines;
	}
	idx = (uint32_t)p->locations.n;
	tf_vec_push(&p->locations, l);
	tf_htab_insert(&p->loc_index, h, idx);
	return idx;
}

bool tf_location_same_functions(const tf_profile *p, const tf_location *a, const tf_location *b)
{
	if (a->nlines != b->nlines)
		return false;
	for (uint32_t j = 0; j < a->nlines; j++)
		if (p->lines.v[a->lines_off + j].function != p->lines.v[b->lines_off + j].function)
			return false;
	return true;
}

uint64_t tf_location_functions_hash(const tf_profile *p, const tf_location *l, uint64_t seed)
{
	uint64_t h = tf_hash_combine(seed, l->nlines);
	for (uint32_t j = 0; j < l->nlines; j++)
		h = tf_hash_combine(h, p->lines.v[l->lines_off + j].function);
	return h;
}

/* samples */

struct sample_key {
	const uint32_t *locs;
	uint32_t nlocs;
	const tf_label *labels;
	uint32_t nlabels;
};

/* The stack's hash with the labels folded in: one multiply per field and
 * one full mix at the end (a full mix per field was a tenth of the cost of
 * building a profile from a recording). */
static uint64_t sample_hash(uint64_t stack_hash, const tf_label *labels, uint32_t nlabels)
{
	uint64_t h = stack_hash;
	for (uint32_t i = 0; i < nlabels; i++) {
		h = (h ^ (((uint64_t)labels[i].key << 32) | labels[i].str)) * 0x9e3779b97f4a7c15ULL;
		h = (h ^ (uint64_t)labels[i].num) * 0xbf58476d1ce4e5b9ULL;
		h ^= h >> 31;
	}
	return tf_hash_u64(h);
}

static bool sample_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_profile *p = ctx;
	const tf_sample *s = &p->samples.v[idx];
	const struct sample_key *k = key;

	if (s->nlocs != k->nlocs || s->nlabels != k->nlabels)
		return false;
	if (k->nlocs && memcmp(p->stack.v + s->locs_off, k->locs, k->nlocs * sizeof(uint32_t)) != 0)
		return false;
	for (uint32_t i = 0; i < k->nlabels; i++) {
		const tf_label *a = &p->labels.v[s->labels_off + i], *b = &k->labels[i];
		if (a->key != b->key || a->str != b->str || a->num != b->num ||
		    a->num_unit != b->num_unit)
			return false;
	}
	return true;
}

static void sample_index_all(tf_profile *p)
{
	if (p->sample_index.count == p->samples.n)
		return;
	tf_htab_clear(&p->sample_index);
	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		tf_htab_insert(&p->sample_index,
			       sample_hash(tf_profile_stack_hash(p->stack.v + s->locs_off, s->nlocs),
					   p->labels.v + s->labels_off, s->nlabels),
			       (uint32_t)i);
	}
}

uint32_t tf_profile_add_sample(tf_profile *p, const uint32_t *locs, uint32_t nlocs,
			       const int64_t *values, const tf_label *labels,
			       uint32_t nlabels)
{
	return tf_profile_add_sample_hashed(p, p->merge_samples ? tf_profile_stack_hash(locs, nlocs) : 0,
					    locs, nlocs, values, labels, nlabels);
}

uint32_t tf_profile_add_sample_hashed(tf_profile *p, uint64_t stack_hash, const uint32_t *locs,
				      uint32_t nlocs, const int64_t *values,
				      const tf_label *labels, uint32_t nlabels)
{
	size_t nv = p->sample_types.n;
	uint64_t h = 0;
	uint32_t idx;
	tf_sample s;

	if (p->merge_samples) {
		struct sample_key k = { locs, nlocs, labels, nlabels };
		h = sample_hash(stack_hash, labels, nlabels);
		sample_index_all(p);
		idx = tf_htab_find(&p->sample_index, h, sample_eq, p, &k);
		if (idx != TF_HTAB_NONE) {
			int64_t *v = p->values.v + (size_t)idx * nv;
			for (size_t i = 0; i < nv; i++)
				v[i] += values[i];
			return idx;
		}
	}
	s.locs_off = (uint32_t)p->stack.n;
	s.nlocs = nlocs;
	s.labels_off = (uint32_t)p->labels.n;
	s.nlabels = nlabels;
	tf_vec_reserve(&p->stack, p->stack.n + nlocs);
	if (nlocs)
		memcpy(p->stack.v + p->stack.n, locs, nlocs * sizeof(*locs));
	p->stack.n += nlocs;
	tf_vec_reserve(&p->labels, p->labels.n + nlabels);
	if (nlabels)
		memcpy(p->labels.v + p->labels.n, labels, nlabels * sizeof(*labels));
	p->labels.n += nlabels;
	tf_vec_reserve(&p->values, p->values.n + nv);
	if (nv)
		memcpy(p->values.v + p->values.n, values, nv * sizeof(*values));
	p->values.n += nv;
	idx = (uint32_t)p->samples.n;
	tf_vec_push(&p->samples, s);
	if (p->merge_samples)
		tf_htab_insert(&p->sample_index, h, idx);
	return idx;
}

const char *tf_sample_label_str(const tf_profile *p, const tf_sample *s, const char *key)
{
	for (uint32_t i = 0; i < s->nlabels; i++) {
		const tf_label *l = &p->labels.v[s->labels_off + i];
		if (l->str && strcmp(tf_profile_str(p, l->key), key) == 0)
			return tf_profile_str(p, l->str);
	}
	return NULL;
}

bool tf_sample_label_num(const tf_profile *p, const tf_sample *s, const char *key,
			 int64_t *out)
{
	for (uint32_t i = 0; i < s->nlabels; i++) {
		const tf_label *l = &p->labels.v[s->labels_off + i];
		if (!l->str && strcmp(tf_profile_str(p, l->key), key) == 0) {
			*out = l->num;
			return true;
		}
	}
	return false;
}

/* metadata */

#define META_PREFIX "testflame."

static bool meta_match(const char *comment, const char *key, size_t klen)
{
	return strncmp(comment, META_PREFIX, sizeof(META_PREFIX) - 1) == 0 &&
	       strncmp(comment + sizeof(META_PREFIX) - 1, key, klen) == 0 &&
	       comment[sizeof(META_PREFIX) - 1 + klen] == '=';
}

void tf_profile_set_meta(tf_profile *p, const char *key, const char *value)
{
	size_t klen = strlen(key);
	char *c = tf_xasprintf(META_PREFIX "%s=%s", key, value ? value : "");
	tf_strid id = tf_profile_intern(p, c);

	free(c);
	for (size_t i = 0; i < p->comments.n; i++) {
		if (meta_match(tf_profile_str(p, p->comments.v[i]), key, klen)) {
			p->comments.v[i] = id;
			return;
		}
	}
	tf_vec_push(&p->comments, id);
}

struct meta_key {
	const tf_profile *p;
	const char *key;
	size_t klen;
};

static bool meta_key_eq(const void *ctx, uint32_t index, const void *key)
{
	const struct meta_key *k = key;
	(void)ctx;
	return meta_match(tf_profile_str(k->p, k->p->comments.v[index]), k->key, k->klen);
}

void tf_profile_set_metas(tf_profile *p, char *const *keys, char *const *values, size_t n)
{
	const size_t plen = sizeof(META_PREFIX) - 1;
	tf_htab index = { 0 };

	/* the keys there now, by hash of the key */
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]), *eq;
		if (strncmp(c, META_PREFIX, plen) != 0 || !(eq = strchr(c + plen, '=')))
			continue;
		struct meta_key k = { p, c + plen, (size_t)(eq - c - plen) };
		uint64_t h = tf_hash_bytes(k.key, k.klen, 0);
		/* the first of equal keys is the one set_meta replaces */
		if (tf_htab_find(&index, h, meta_key_eq, NULL, &k) == TF_HTAB_NONE)
			tf_htab_insert(&index, h, (uint32_t)i);
	}
	for (size_t i = 0; i < n; i++) {
		struct meta_key k = { p, keys[i], strlen(keys[i]) };
		uint64_t h = tf_hash_bytes(k.key, k.klen, 0);
		char *c = tf_xasprintf(META_PREFIX "%s=%s", keys[i], values[i] ? values[i] : "");
		tf_strid id = tf_profile_intern(p, c);
		free(c);
		uint32_t at = tf_htab_find(&index, h, meta_key_eq, NULL, &k);
		if (at != TF_HTAB_NONE) {
			p->comments.v[at] = id;
			continue;
		}
		tf_vec_push(&p->comments, id);
		tf_htab_insert(&index, h, (uint32_t)p->comments.n - 1);
	}
	tf_htab_free(&index);
}

const char *tf_profile_meta(const tf_profile *p, const char *key)
{
	size_t klen = strlen(key);
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]);
		if (meta_match(c, key, klen))
			return c + sizeof(META_PREFIX) - 1 + klen + 1;
	}
	return NULL;
}

const char *tf_profile_made_by(char *buf, size_t n, const tf_profile *p)
{
	const char *version = tf_profile_meta(p, "version"), *build = tf_profile_meta(p, "build");
	size_t hex = 0;

	if (!version)
		return NULL;
	while (build && build[hex] && strchr("0123456789abcdef", build[hex]))
		hex++;
	if (hex)
		snprintf(buf, n, "testflame %s (commit %.*s%s)", version, (int)TF_MIN(hex, 12), build,
			 strstr(build + hex, "dirty") ? ", dirty" : "");
	else
		snprintf(buf, n, "testflame %s", version);
	return buf;
}

long tf_profile_measure(const tf_profile *p)
{
	const char *m = tf_profile_meta(p, "measure");
	char *end;
	long v;

	if (!m)
		return tf_profile_meta(p, "version") ? 1 : 0;
	v = strtol(m, &end, 10);
	return end != m && !*end && v > 0 ? v : 0;
}

int64_t tf_profile_total(const tf_profile *p, size_t value_index)
{
	int64_t t = 0;
	size_t nv = p->sample_types.n;
	if (value_index >= nv)
		return 0;
	for (size_t i = 0; i < p->samples.n; i++)
		t += p->values.v[i * nv + value_index];
	return t;
}

int tf_profile_check_totals(const tf_profile *p)
{
	size_t nv = p->sample_types.n;

	for (size_t v = 0; v < nv; v++) {
		uint64_t t = 0;
		for (size_t i = 0; i < p->samples.n; i++) {
			int64_t x = p->values.v[i * nv + v];
			/* each magnitude at most 2^63, so t stays below 2^64 */
			t += x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
			if (t > (uint64_t)TF_PROFILE_TOTAL_MAX)
				return tf_error_set(TF_EINVAL, "the values of '%s' add up to more than "
						    "2^52: not a profile testflame can sum",
						    tf_profile_str(p, p->sample_types.v[v].type));
		}
	}
	return 0;
}

int tf_profile_validate(const tf_profile *p)
{
	size_t nstr = p->strings.strs.n;

#define STR_OK(id) ((size_t)(id) < nstr)
	for (size_t i = 0; i < p->sample_types.n; i++)
		if (!STR_OK(p->sample_types.v[i].type) || !STR_OK(p->sample_types.v[i].unit))
			return tf_error_set(TF_EINVAL, "sample type %zu names a string out of range", i);
	for (size_t i = 0; i < p->functions.n; i++) {
		const tf_function *f = &p->functions.v[i];
		if (!STR_OK(f->name) || !STR_OK(f->system_name) || !STR_OK(f->filename))
			return tf_error_set(TF_EINVAL, "function %zu names a string out of range", i);
	}
	for (size_t i = 0; i < p->lines.n; i++)
		if (p->lines.v[i].function >= p->functions.n)
			return tf_error_set(TF_EINVAL, "a line refers to a missing function");
	for (size_t i = 0; i < p->locations.n; i++) {
		const tf_location *l = &p->locations.v[i];
		if (l->mapping != TF_NO_MAPPING && l->mapping >= p->mappings.n)
			return tf_error_set(TF_EINVAL, "location %zu refers to a missing mapping", i);
		if ((size_t)l->lines_off + l->nlines > p->lines.n)
			return tf_error_set(TF_EINVAL, "location %zu has lines out of range", i);
	}
	for (size_t i = 0; i < p->mappings.n; i++)
		if (!STR_OK(p->mappings.v[i].filename) || !STR_OK(p->mappings.v[i].build_id))
			return tf_error_set(TF_EINVAL, "mapping %zu names a string out of range", i);
	for (size_t i = 0; i < p->stack.n; i++)
		if (p->stack.v[i] >= p->locations.n)
			return tf_error_set(TF_EINVAL, "a sample refers to a missing location");
	for (size_t i = 0; i < p->labels.n; i++)
		if (!STR_OK(p->labels.v[i].key) || !STR_OK(p->labels.v[i].str) ||
		    !STR_OK(p->labels.v[i].num_unit))
			return tf_error_set(TF_EINVAL, "a label names a string out of range");
	for (size_t i = 0; i < p->comments.n; i++)
		if (!STR_OK(p->comments.v[i]))
			return tf_error_set(TF_EINVAL, "a comment names a string out of range");
	if (p->values.n != p->samples.n * p->sample_types.n)
		return tf_error_set(TF_EINVAL, "sample values do not match the sample types");
#undef STR_OK
	return 0;
}
