/*
 * pprof_read.c - decoding pprof profiles straight from the protobuf wire
 * format into our model, without protobuf-c.
 *
 * protobuf-c's unpack allocates one C struct per sample, label, location and
 * line (millions for a large run) and the model then copies them all again.
 * This decoder walks the bytes once and writes into the model's flat arrays.
 * The one complication is that profile.proto lets the tables come in any
 * order (Go writes the samples first and the string table last), so the
 * first pass decodes every table but the samples, whose byte ranges it only
 * notes; ids and string indices are checked once everything is known, and
 * the second pass decodes the samples, resolving location ids by index when
 * they are dense (1..N, as Go, Pyroscope and we write them) and through a
 * hash table otherwise. Encoding still goes through protobuf-c (pprof.c).
 */
#include "testflame/profile.h"

#include <stdlib.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

typedef struct {
	const uint8_t *p, *end;
} reader;

#define BAD_STR UINT32_MAX

struct span {
	size_t off, len;
};

/* What the first pass keeps for later: raw ids, byte ranges of samples. */
typedef struct {
	const uint8_t *base;
	TF_VEC(uint64_t) fn_ids, loc_ids, map_ids;
	TF_VEC(uint64_t) loc_map_ids;  /* per location */
	TF_VEC(uint64_t) line_fn_ids;  /* per line */
	TF_VEC(struct span) samples;
	int64_t scalars[16];            /* top-level varint fields by number */
	bool has_period_type, has_strings;
} decoder;

static int truncated(const decoder *d, const uint8_t *at)
{
	return tf_error_set(TF_EINVAL, "not a valid pprof profile (truncated or corrupt "
			    "protobuf at byte %zu)", (size_t)(at - d->base));
}

static inline bool rd_varint(reader *r, uint64_t *out)
{
	const uint8_t *p = r->p;
	uint64_t v;

	if (TF_LIKELY(p < r->end && *p < 0x80)) {
		*out = *p;
		r->p = p + 1;
		return true;
	}
	v = 0;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (p >= r->end)
			return false;
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (b < 0x80) {
			*out = v;
			r->p = p;
			return true;
		}
	}
	return false;
}

/* A length-delimited field's contents as a sub-reader. */
static inline bool rd_len(reader *r, reader *sub)
{
	uint64_t n;
	if (!rd_varint(r, &n) || n > (uint64_t)(r->end - r->p))
		return false;
	sub->p = r->p;
	sub->end = r->p + n;
	r->p += n;
	return true;
}

static bool rd_skip(reader *r, unsigned wt)
{
	uint64_t v;
	reader sub;

	switch (wt) {
	case WT_VARINT:
		return rd_varint(r, &v);
	case WT_I64:
		if (r->end - r->p < 8)
			return false;
		r->p += 8;
		return true;
	case WT_LEN:
		return rd_len(r, &sub);
	case WT_I32:
		if (r->end - r->p < 4)
			return false;
		r->p += 4;
		return true;
	default: /* groups (3, 4) were never part of profile.proto */
		return false;
	}
}

/* Read one key; false at the end of the message or on a bad key. */
static inline bool rd_key(reader *r, uint32_t *field, unsigned *wt, bool *bad)
{
	uint64_t k;
	*bad = false;
	if (r->p >= r->end)
		return false;
	if (!rd_varint(r, &k) || (k >> 3) == 0 || (k >> 3) > UINT32_MAX) {
		*bad = true;
		return false;
	}
	*field = (uint32_t)(k >> 3);
	*wt = (unsigned)(k & 7);
	return true;
}

/* String indices narrow to tf_strid; anything out of range is caught later. */
static inline tf_strid str_index(uint64_t v)
{
	return v >= BAD_STR ? BAD_STR : (tf_strid)v;
}

/*
 * Decode a message made of varint fields 1..nfields into out[]; other fields
 * are skipped. Returns false on malformed input.
 */
static bool rd_varints(reader *r, uint64_t *out, uint32_t nfields)
{
	uint32_t f;
	unsigned wt;
	bool bad;

	while (rd_key(r, &f, &wt, &bad)) {
		if (f <= nfields && wt == WT_VARINT) {
			if (!rd_varint(r, &out[f - 1]))
				return false;
		} else if (!rd_skip(r, wt)) {
			return false;
		}
	}
	return !bad;
}

static int read_value_type(decoder *d, reader *r, tf_value_type *vt)
{
	uint64_t v[2] = { vt->type, vt->unit };
	if (!rd_varints(r, v, 2))
		return truncated(d, r->p);
	vt->type = str_index(v[0]);
	vt->unit = str_index(v[1]);
	return 0;
}

static int read_function(decoder *d, tf_profile *p, reader *r)
{
	uint64_t v[5] = { 0 };
	if (!rd_varints(r, v, 5))
		return truncated(d, r->p);
	tf_function f = { str_index(v[1]), str_index(v[2]), str_index(v[3]), (int64_t)v[4] };
	tf_vec_push(&p->functions, f);
	tf_vec_push(&d->fn_ids, v[0]);
	return 0;
}

static int read_mapping(decoder *d, tf_profile *p, reader *r)
{
	uint64_t v[10] = { 0 };
	if (!rd_varints(r, v, 10))
		return truncated(d, r->p);
	tf_mapping m = { v[1], v[2], v[3], str_index(v[4]), str_index(v[5]),
			 (v[6] ? TF_MAPPING_HAS_FUNCTIONS : 0u) |
			 (v[7] ? TF_MAPPING_HAS_FILENAMES : 0u) |
			 (v[8] ? TF_MAPPING_HAS_LINE_NUMBERS : 0u) |
			 (v[9] ? TF_MAPPING_HAS_INLINE_FRAMES : 0u) };
	tf_vec_push(&p->mappings, m);
	tf_vec_push(&d->map_ids, v[0]);
	return 0;
}

static int read_location(decoder *d, tf_profile *p, reader *r)
{
	tf_location loc = { TF_NO_MAPPING, 0, (uint32_t)p->lines.n, 0, false };
	uint64_t id = 0, mapping_id = 0, v;
	uint32_t f;
	unsigned wt;
	bool bad;

	while (rd_key(r, &f, &wt, &bad)) {
		bool ok = true;
		if (wt == WT_VARINT && f <= 3) {
			ok = rd_varint(r, f == 1 ? &id : f == 2 ? &mapping_id : &loc.address);
		} else if (wt == WT_VARINT && f == 5) {
			ok = rd_varint(r, &v);
			loc.is_folded = v != 0;
		} else if (wt == WT_LEN && f == 4) {
			reader sub;
			uint64_t lv[3] = { 0 };
			ok = rd_len(r, &sub) && rd_varints(&sub, lv, 3);
			if (ok) {
				tf_line ln = { 0, (int64_t)lv[1], (int64_t)lv[2] };
				tf_vec_push(&p->lines, ln);
				tf_vec_push(&d->line_fn_ids, lv[0]);
				loc.nlines++;
			}
		} else {
			ok = rd_skip(r, wt);
		}
		if (!ok)
			return truncated(d, r->p);
	}
	if (bad)
		return truncated(d, r->p);
	tf_vec_push(&p->locations, loc);
	tf_vec_push(&d->loc_ids, id);
	tf_vec_push(&d->loc_map_ids, mapping_id);
	return 0;
}

/* Pass 1: everything but the samples' contents. */
static int read_profile(decoder *d, tf_profile *p, reader *r)
{
	uint32_t f;
	unsigned wt;
	bool bad;
	int rc;

	while (rd_key(r, &f, &wt, &bad)) {
		const uint8_t *at = r->p;
		reader sub;
		uint64_t v;

		if (f <= 6 && wt == WT_LEN) {
			if (!rd_len(r, &sub))
				return truncated(d, at);
			switch (f) {
			case 1: {
				tf_value_type vt = { 0, 0 };
				if ((rc = read_value_type(d, &sub, &vt)))
					return rc;
				tf_vec_push(&p->sample_types, vt);
				break;
			}
			case 2: {
				struct span s = { (size_t)(sub.p - d->base), (size_t)(sub.end - sub.p) };
				tf_vec_push(&d->samples, s);
				break;
			}
			case 3:
				if ((rc = read_mapping(d, p, &sub)))
					return rc;
				break;
			case 4:
				if ((rc = read_location(d, p, &sub)))
					return rc;
				break;
			case 5:
				if ((rc = read_function(d, p, &sub)))
					return rc;
				break;
			case 6:
				if (!d->has_strings) {
					/* our table starts with "", so must the file's */
					if (sub.end != sub.p)
						return tf_error_set(TF_EINVAL, "not a valid pprof profile "
								    "(string table does not start with "
								    "the empty string)");
					d->has_strings = true;
					break;
				}
				tf_strtab_push(&p->strings, (const char *)sub.p, (size_t)(sub.end - sub.p));
				break;
			}
		} else if (f == 11 && wt == WT_LEN) {
			if (!rd_len(r, &sub))
				return truncated(d, at);
			if ((rc = read_value_type(d, &sub, &p->period_type)))
				return rc;
			d->has_period_type = true;
		} else if (f == 13 && wt == WT_LEN) {
			if (!rd_len(r, &sub))
				return truncated(d, at);
			while (sub.p < sub.end) {
				if (!rd_varint(&sub, &v))
					return truncated(d, sub.p);
				tf_vec_push(&p->comments, str_index(v));
			}
		} else if (f == 13 && wt == WT_VARINT) {
			if (!rd_varint(r, &v))
				return truncated(d, at);
			tf_vec_push(&p->comments, str_index(v));
		} else if (f >= 7 && f <= 15 && wt == WT_VARINT) {
			if (!rd_varint(r, &v))
				return truncated(d, at);
			d->scalars[f] = (int64_t)v;
		} else if (f <= 15 && f != 0) {
			return tf_error_set(TF_EINVAL, "not a valid pprof profile (field %u has "
					    "wire type %u at byte %zu)", f, wt,
					    (size_t)(at - d->base));
		} else if (!rd_skip(r, wt)) {
			return truncated(d, at);
		}
	}
	if (bad)
		return truncated(d, r->p);
	if (!d->has_strings)
		return tf_error_set(TF_EINVAL, "not a valid pprof profile (no string table)");
	return 0;
}

/*
 * Id resolution: dense tables (ids 1..N in order) resolve by arithmetic;
 * others through a hash table from id to index.
 */
typedef struct {
	bool dense;
	size_t n;
	tf_htab index;
	const uint64_t *ids;
} id_map;

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	const id_map *m = ctx;
	return m->ids[idx] == *(const uint64_t *)key;
}

static int id_map_init(id_map *m, const uint64_t *ids, size_t n, const char *what)
{
	memset(m, 0, sizeof(*m));
	m->n = n;
	m->ids = ids;
	m->dense = true;
	for (size_t i = 0; i < n; i++)
		if (ids[i] != i + 1) {
			m->dense = false;
			break;
		}
	if (m->dense)
		return 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t h = tf_hash_u64(ids[i]);
		if (ids[i] == 0)
			return tf_error_set(TF_EINVAL, "not a valid pprof profile (%s with id 0)", what);
		if (tf_htab_find(&m->index, h, id_eq, m, &ids[i]) != TF_HTAB_NONE)
			return tf_error_set(TF_EINVAL, "not a valid pprof profile (two %ss with "
					    "id %llu)", what, (unsigned long long)ids[i]);
		tf_htab_insert(&m->index, h, (uint32_t)i);
	}
	return 0;
}

static inline uint32_t id_map_get(const id_map *m, uint64_t id)
{
	if (TF_LIKELY(m->dense))
		return (id >= 1 && id <= m->n) ? (uint32_t)(id - 1) : UINT32_MAX;
	return tf_htab_find(&m->index, tf_hash_u64(id), id_eq, m, &id);
}

/* Pass 2: one sample, from its byte range. */
static int read_sample(decoder *d, tf_profile *p, const id_map *locs, size_t i,
		       reader *r)
{
	size_t nv = p->sample_types.n, nstr = p->strings.strs.n, values0 = p->values.n;
	tf_sample s = { (uint32_t)p->stack.n, 0, (uint32_t)p->labels.n, 0 };
	uint32_t f;
	unsigned wt;
	bool bad;
	uint64_t v;

	while (rd_key(r, &f, &wt, &bad)) {
		if (f == 1 || f == 2) {
			reader sub;
			if (wt == WT_LEN) {
				if (!rd_len(r, &sub))
					return truncated(d, r->p);
			} else if (wt == WT_VARINT) {
				sub.p = r->p;
				if (!rd_varint(r, &v))
					return truncated(d, r->p);
				sub.end = r->p;
			} else {
				return truncated(d, r->p);
			}
			if (f == 1) {
				/* every id takes at least one byte: reserve once */
				tf_vec_reserve(&p->stack, p->stack.n + (size_t)(sub.end - sub.p));
				while (sub.p < sub.end) {
					if (!rd_varint(&sub, &v))
						return truncated(d, sub.p);
					uint32_t li = id_map_get(locs, v);
					if (TF_UNLIKELY(li == UINT32_MAX))
						return tf_error_set(TF_EINVAL, "not a valid pprof profile "
								    "(sample %zu refers to missing "
								    "location %llu)", i,
								    (unsigned long long)v);
					p->stack.v[p->stack.n++] = li;
				}
			} else {
				tf_vec_reserve(&p->values, p->values.n + (size_t)(sub.end - sub.p));
				while (sub.p < sub.end) {
					if (!rd_varint(&sub, &v))
						return truncated(d, sub.p);
					p->values.v[p->values.n++] = (int64_t)v;
				}
			}
		} else if (f == 3 && wt == WT_LEN) {
			reader sub;
			uint64_t lv[4] = { 0 };
			if (!rd_len(r, &sub) || !rd_varints(&sub, lv, 4))
				return truncated(d, r->p);
			if (lv[0] >= nstr || lv[1] >= nstr || lv[3] >= nstr)
				return tf_error_set(TF_EINVAL, "not a valid pprof profile (sample %zu "
						    "has a label naming a missing string)", i);
			tf_label lb = { (tf_strid)lv[0], (tf_strid)lv[1], (int64_t)lv[2],
					(tf_strid)lv[3] };
			tf_vec_push(&p->labels, lb);
		} else if (!rd_skip(r, wt)) {
			return truncated(d, r->p);
		}
	}
	if (bad)
		return truncated(d, r->p);
	if (p->values.n - values0 != nv)
		return tf_error_set(TF_EINVAL, "not a valid pprof profile (sample %zu has %zu "
				    "values for %zu sample types)", i, p->values.n - values0, nv);
	s.nlocs = (uint32_t)(p->stack.n - s.locs_off);
	s.nlabels = (uint32_t)(p->labels.n - s.labels_off);
	p->samples.v[p->samples.n++] = s;
	return 0;
}

/* Between the passes: every string index and id must name something. */
static int check_tables(decoder *d, tf_profile *p, id_map *fns, id_map *maps)
{
	size_t nstr = p->strings.strs.n;
#define STR_OK(x) ((size_t)(x) < nstr)

	for (size_t i = 0; i < p->sample_types.n; i++)
		if (!STR_OK(p->sample_types.v[i].type) || !STR_OK(p->sample_types.v[i].unit))
			return tf_error_set(TF_EINVAL, "not a valid pprof profile (sample type "
					    "%zu names a missing string)", i);
	for (size_t i = 0; i < p->functions.n; i++) {
		const tf_function *f = &p->functions.v[i];
		if (!STR_OK(f->name) || !STR_OK(f->system_name) || !STR_OK(f->filename))
			return tf_error_set(TF_EINVAL, "not a valid pprof profile (function %llu "
					    "names a missing string)",
					    (unsigned long long)d->fn_ids.v[i]);
	}
	for (size_t i = 0; i < p->mappings.n; i++)
		if (!STR_OK(p->mappings.v[i].filename) || !STR_OK(p->mappings.v[i].build_id))
			return tf_error_set(TF_EINVAL, "not a valid pprof profile (mapping %llu "
					    "names a missing string)",
					    (unsigned long long)d->map_ids.v[i]);
	for (size_t i = 0; i < p->comments.n; i++)
		if (!STR_OK(p->comments.v[i]))
			return tf_error_set(TF_EINVAL, "not a valid pprof profile (comment %zu "
					    "names a missing string)", i);
	if (d->has_period_type && (!STR_OK(p->period_type.type) || !STR_OK(p->period_type.unit)))
		return tf_error_set(TF_EINVAL, "not a valid pprof profile (period type names "
				    "a missing string)");
#undef STR_OK

	for (size_t i = 0; i < p->locations.n; i++) {
		tf_location *l = &p->locations.v[i];
		uint64_t mid = d->loc_map_ids.v[i];
		if (mid) {
			l->mapping = id_map_get(maps, mid);
			if (l->mapping == UINT32_MAX)
				return tf_error_set(TF_EINVAL, "not a valid pprof profile (location "
						    "%llu refers to missing mapping %llu)",
						    (unsigned long long)d->loc_ids.v[i],
						    (unsigned long long)mid);
		}
		for (uint32_t j = 0; j < l->nlines; j++) {
			uint64_t fid = d->line_fn_ids.v[l->lines_off + j];
			uint32_t fi = id_map_get(fns, fid);
			if (fi == UINT32_MAX)
				return tf_error_set(TF_EINVAL, "not a valid pprof profile (location "
						    "%llu refers to missing function %llu)",
						    (unsigned long long)d->loc_ids.v[i],
						    (unsigned long long)fid);
			p->lines.v[l->lines_off + j].function = fi;
		}
	}
	return 0;
}

/* The optional scalar fields, checked the way protobuf-c's callers did. */
static void set_scalars(decoder *d, tf_profile *p)
{
	size_t nstr = p->strings.strs.n;
	int64_t *s = d->scalars;
#define STR_OR_0(x) ((x) >= 0 && (size_t)(x) < nstr ? (x) : 0)
	p->drop_frames = STR_OR_0(s[7]);
	p->keep_frames = STR_OR_0(s[8]);
	p->time_nanos = s[9];
	p->duration_nanos = s[10];
	p->period = s[12];
	p->default_sample_type = (tf_strid)STR_OR_0(s[14]);
	p->doc_url = (tf_strid)STR_OR_0(s[15]);
#undef STR_OR_0
}

static int decode_raw(tf_profile *p, const uint8_t *data, size_t len)
{
	decoder d;
	reader r = { data, data + len };
	id_map fns, locs, maps;
	int rc;

	memset(&d, 0, sizeof(d));
	memset(&fns, 0, sizeof(fns));
	memset(&locs, 0, sizeof(locs));
	memset(&maps, 0, sizeof(maps));
	d.base = data;
	rc = read_profile(&d, p, &r);
	if (rc)
		goto done;
	if ((rc = id_map_init(&fns, d.fn_ids.v, d.fn_ids.n, "function")) ||
	    (rc = id_map_init(&locs, d.loc_ids.v, d.loc_ids.n, "location")) ||
	    (rc = id_map_init(&maps, d.map_ids.v, d.map_ids.n, "mapping")))
		goto done;
	if ((rc = check_tables(&d, p, &fns, &maps)))
		goto done;
	tf_vec_reserve(&p->samples, d.samples.n);
	/* the samples' arrays reserved once rather than doubled (copied, and
	 * faulted in again) as they fill: a valid sample has a value per
	 * sample type, and a location id takes a byte at least, so the
	 * samples' bytes bound the stack (pages past its end are never
	 * touched) */
	size_t sample_bytes = 0;
	for (size_t i = 0; i < d.samples.n; i++)
		sample_bytes += d.samples.v[i].len;
	tf_vec_reserve(&p->stack, p->stack.n + sample_bytes);
	tf_vec_reserve(&p->values, p->values.n + d.samples.n * p->sample_types.n);
	for (size_t i = 0; i < d.samples.n; i++) {
		reader sr = { data + d.samples.v[i].off,
			      data + d.samples.v[i].off + d.samples.v[i].len };
		if ((rc = read_sample(&d, p, &locs, i, &sr)))
			goto done;
	}
	set_scalars(&d, p);
	rc = tf_profile_check_totals(p);
done:
	tf_htab_free(&fns.index);
	tf_htab_free(&locs.index);
	tf_htab_free(&maps.index);
	tf_vec_free(&d.fn_ids);
	tf_vec_free(&d.loc_ids);
	tf_vec_free(&d.map_ids);
	tf_vec_free(&d.loc_map_ids);
	tf_vec_free(&d.line_fn_ids);
	tf_vec_free(&d.samples);
	return rc;
}

int tf_pprof_decode(tf_profile **out, const void *data, size_t len)
{
	tf_buf raw = TF_BUF_INIT;
	tf_profile *p = NULL;
	int rc;

	*out = NULL;
	if (tf_is_gzip(data, len)) {
		rc = tf_gunzip(&raw, data, len, "pprof");
		if (rc) {
			tf_buf_free(&raw);
			return rc;
		}
		data = raw.ptr;
		len = raw.len;
	}
	tf_profile_new(&p);
	tf_profile_set_merge(p, false);
	rc = decode_raw(p, data, len);
	tf_buf_free(&raw);
	if (rc) {
		tf_profile_free(p);
		return rc;
	}
	tf_profile_set_merge(p, true);
	*out = p;
	return 0;
}
