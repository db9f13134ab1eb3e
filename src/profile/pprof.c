/*
 * pprof.c - the pprof codec: our profile model to and from profile.proto,
 * through protobuf-c, compressed with zlib.
 *
 * Decoding is where pprof transcoders usually spend their time: every sample
 * names its locations by id, every location its functions. Profiles written
 * by Go, Pyroscope and ourselves number ids densely 1..N in order, so the
 * decoder checks that once per table and then resolves an id by subtracting
 * one; only tables with sparse ids pay for a hash lookup.
 */
#include "testflame/profile.h"
#include "profile.pb-c.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Mapping PbMapping;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;

bool tf_is_gzip(const void *data, size_t len)
{
	const unsigned char *p = data;
	return len >= 2 && p[0] == 0x1f && p[1] == 0x8b;
}

int tf_gunzip(tf_buf *out, const void *data, size_t len, const char *what)
{
	z_stream zs;
	int zrc;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 32) != Z_OK)
		return tf_error_set(TF_ERROR, "cannot start zlib");
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	tf_buf_grow(out, len * 4 + 4096);
	do {
		tf_buf_grow(out, 65536);
		zs.next_out = (Bytef *)out->ptr + out->len;
		zs.avail_out = (uInt)(out->cap - out->len - 1);
		zrc = inflate(&zs, Z_NO_FLUSH);
		out->len = (size_t)((char *)zs.next_out - out->ptr);
		if (zrc == Z_STREAM_END && zs.avail_in > 0 && tf_is_gzip(zs.next_in, zs.avail_in)) {
			/* concatenated gzip members, as gzip(1) allows */
			inflateReset(&zs);
			zrc = Z_OK;
		}
	} while (zrc == Z_OK);
	inflateEnd(&zs);
	out->ptr[out->len] = '\0';
	if (zrc == Z_BUF_ERROR)
		return tf_error_set(TF_EINVAL, "%s: truncated gzip data", what);
	if (zrc != Z_STREAM_END)
		return tf_error_set(TF_EINVAL, "%s: corrupt gzip data (%s)", what,
				    zs.msg ? zs.msg : "zlib error");
	return 0;
}

int tf_gzip(tf_buf *out, const void *data, size_t len, int level)
{
	z_stream zs;
	int zrc;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return tf_error_set(TF_ERROR, "cannot start zlib");
	zs.next_in = (Bytef *)data;
	zs.avail_in = (uInt)len;
	tf_buf_grow(out, deflateBound(&zs, (uLong)len) + 1);
	do {
		tf_buf_grow(out, 65536);
		zs.next_out = (Bytef *)out->ptr + out->len;
		zs.avail_out = (uInt)(out->cap - out->len - 1);
		zrc = deflate(&zs, Z_FINISH);
		out->len = (size_t)((char *)zs.next_out - out->ptr);
	} while (zrc == Z_OK || zrc == Z_BUF_ERROR);
	deflateEnd(&zs);
	if (zrc != Z_STREAM_END)
		return tf_error_set(TF_ERROR, "gzip compression failed");
	out->ptr[out->len] = '\0';
	return 0;
}

/* encoding */

int tf_pprof_encode(tf_buf *out, const tf_profile *p, int gzip_level)
{
	PbProfile pb = PERFTOOLS__PROFILES__PROFILE__INIT;
	size_t nv = p->sample_types.n, nstr = p->strings.strs.n;
	PbValueType *vts = tf_xcalloc(nv + 1, sizeof(*vts));
	PbValueType **vtp = tf_xcalloc(nv + 1, sizeof(*vtp));
	PbFunction *fns = tf_xcalloc(p->functions.n + 1, sizeof(*fns));
	PbFunction **fnp = tf_xcalloc(p->functions.n + 1, sizeof(*fnp));
	PbLine *lines = tf_xcalloc(p->lines.n + 1, sizeof(*lines));
	PbLine **linep = tf_xcalloc(p->lines.n + 1, sizeof(*linep));
	PbLocation *locs = tf_xcalloc(p->locations.n + 1, sizeof(*locs));
	PbLocation **locp = tf_xcalloc(p->locations.n + 1, sizeof(*locp));
	PbMapping *maps = tf_xcalloc(p->mappings.n + 1, sizeof(*maps));
	PbMapping **mapp = tf_xcalloc(p->mappings.n + 1, sizeof(*mapp));
	PbSample *samples = tf_xcalloc(p->samples.n + 1, sizeof(*samples));
	PbSample **samplep = tf_xcalloc(p->samples.n + 1, sizeof(*samplep));
	PbLabel *labels = tf_xcalloc(p->labels.n + 1, sizeof(*labels));
	PbLabel **labelp = tf_xcalloc(p->labels.n + 1, sizeof(*labelp));
	uint64_t *stack = tf_xcalloc(p->stack.n + 1, sizeof(*stack));
	int64_t *comments = tf_xcalloc(p->comments.n + 1, sizeof(*comments));
	PbValueType period_type = PERFTOOLS__PROFILES__VALUE_TYPE__INIT;
	uint8_t *packed = NULL;
	size_t packed_len;
	int rc = 0;

	for (size_t i = 0; i < nv; i++) {
		perftools__profiles__value_type__init(&vts[i]);
		vts[i].type = p->sample_types.v[i].type;
		vts[i].unit = p->sample_types.v[i].unit;
		vtp[i] = &vts[i];
	}
	pb.n_sample_type = nv;
	pb.sample_type = vtp;

	for (size_t i = 0; i < p->functions.n; i++) {
		const tf_function *f = &p->functions.v[i];
		perftools__profiles__function__init(&fns[i]);
		fns[i].id = i + 1;
		fns[i].name = f->name;
		fns[i].system_name = f->system_name;
		fns[i].filename = f->filename;
		fns[i].start_line = f->start_line;
		fnp[i] = &fns[i];
	}
	pb.n_function = p->functions.n;
	pb.function = fnp;

	for (size_t i = 0; i < p->lines.n; i++) {
		perftools__profiles__line__init(&lines[i]);
		lines[i].function_id = p->lines.v[i].function + 1;
		lines[i].line = p->lines.v[i].line;
		lines[i].column = p->lines.v[i].column;
		linep[i] = &lines[i];
	}
	for (size_t i = 0; i < p->locations.n; i++) {
		const tf_location *l = &p->locations.v[i];
		perftools__profiles__location__init(&locs[i]);
		locs[i].id = i + 1;
		locs[i].mapping_id = l->mapping == TF_NO_MAPPING ? 0 : l->mapping + 1;
		locs[i].address = l->address;
		locs[i].n_line = l->nlines;
		locs[i].line = linep + l->lines_off;
		locs[i].is_folded = l->is_folded;
		locp[i] = &locs[i];
	}
	pb.n_location = p->locations.n;
	pb.location = locp;

	for (size_t i = 0; i < p->mappings.n; i++) {
		const tf_mapping *m = &p->mappings.v[i];
		perftools__profiles__mapping__init(&maps[i]);
		maps[i].id = i + 1;
		maps[i].memory_start = m->memory_start;
		maps[i].memory_limit = m->memory_limit;
		maps[i].file_offset = m->file_offset;
		maps[i].filename = m->filename;
		maps[i].build_id = m->build_id;
		maps[i].has_functions = !!(m->flags & TF_MAPPING_HAS_FUNCTIONS);
		maps[i].has_filenames = !!(m->flags & TF_MAPPING_HAS_FILENAMES);
		maps[i].has_line_numbers = !!(m->flags & TF_MAPPING_HAS_LINE_NUMBERS);
		maps[i].has_inline_frames = !!(m->flags & TF_MAPPING_HAS_INLINE_FRAMES);
		mapp[i] = &maps[i];
	}
	pb.n_mapping = p->mappings.n;
	pb.mapping = mapp;

	for (size_t i = 0; i < p->stack.n; i++)
		stack[i] = (uint64_t)p->stack.v[i] + 1;
	for (size_t i = 0; i < p->labels.n; i++) {
		const tf_label *l = &p->labels.v[i];
		perftools__profiles__label__init(&labels[i]);
		labels[i].key = l->key;
		labels[i].str = l->str;
		labels[i].num = l->num;
		labels[i].num_unit = l->num_unit;
		labelp[i] = &labels[i];
	}
	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		perftools__profiles__sample__init(&samples[i]);
		samples[i].n_location_id = s->nlocs;
		samples[i].location_id = stack + s->locs_off;
		samples[i].n_value = nv;
		samples[i].value = (int64_t *)p->values.v + i * nv;
		samples[i].n_label = s->nlabels;
		samples[i].label = labelp + s->labels_off;
		samplep[i] = &samples[i];
	}
	pb.n_sample = p->samples.n;
	pb.sample = samplep;

	pb.n_string_table = nstr;
	pb.string_table = (char **)p->strings.strs.v;
	pb.drop_frames = p->drop_frames;
	pb.keep_frames = p->keep_frames;
	pb.time_nanos = p->time_nanos;
	pb.duration_nanos = p->duration_nanos;
	if (p->period_type.type || p->period_type.unit) {
		period_type.type = p->period_type.type;
		period_type.unit = p->period_type.unit;
		pb.period_type = &period_type;
	}
	pb.period = p->period;
	for (size_t i = 0; i < p->comments.n; i++)
		comments[i] = p->comments.v[i];
	pb.n_comment = p->comments.n;
	pb.comment = comments;
	pb.default_sample_type = p->default_sample_type;
	pb.doc_url = p->doc_url;

	packed_len = perftools__profiles__profile__get_packed_size(&pb);
	packed = tf_xmalloc(packed_len + 1);
	perftools__profiles__profile__pack(&pb, packed);
	if (gzip_level > 0)
		rc = tf_gzip(out, packed, packed_len, gzip_level);
	else
		tf_buf_put(out, packed, packed_len);

	free(packed);
	free(vts); free(vtp); free(fns); free(fnp); free(lines); free(linep);
	free(locs); free(locp); free(maps); free(mapp); free(samples); free(samplep);
	free(labels); free(labelp); free(stack); free(comments);
	return rc;
}

int tf_pprof_write(const tf_profile *p, const char *path)
{
	tf_buf b = TF_BUF_INIT;
	int rc = tf_pprof_encode(&b, p, 6);
	if (!rc)
		rc = tf_file_write_atomic(path, b.ptr, b.len);
	tf_buf_free(&b);
	return rc;
}

/* decoding */

/*
 * Id resolution: dense tables (ids 1..N in order) resolve by arithmetic;
 * others through a hash table from id to index.
 */
typedef struct {
	bool dense;
	size_t n;
	tf_htab index;
	const uint64_t *ids; /* only for sparse tables */
} id_map;

static bool id_eq(const void *ctx, uint32_t idx, const void *key)
{
	const id_map *m = ctx;
	return m->ids[idx] == *(const uint64_t *)key;
}

static void id_map_init(id_map *m, const uint64_t *ids, size_t n)
{
	memset(m, 0, sizeof(*m));
	m->n = n;
	m->dense = true;
	for (size_t i = 0; i < n; i++)
		if (ids[i] != i + 1) {
			m->dense = false;
			break;
		}
	if (m->dense)
		return;
	m->ids = ids;
	for (size_t i = 0; i < n; i++)
		tf_htab_insert(&m->index, tf_hash_u64(ids[i]), (uint32_t)i);
}

/* Returns the index for `id`, or UINT32_MAX if unknown. */
static inline uint32_t id_map_get(const id_map *m, uint64_t id)
{
	if (m->dense)
		return (id >= 1 && id <= m->n) ? (uint32_t)(id - 1) : UINT32_MAX;
	return tf_htab_find(&m->index, tf_hash_u64(id), id_eq, m, &id);
}

static bool str_ok(const tf_profile *p, int64_t id)
{
	return id >= 0 && (size_t)id < p->strings.strs.n;
}

static int convert(tf_profile *p, const PbProfile *pb)
{
	id_map fn_ids, loc_ids, map_ids;
	uint64_t *ids;
	size_t nmax, nv = pb->n_sample_type;
	int rc = 0;

	if (pb->n_string_table == 0 || pb->string_table[0][0] != '\0')
		return tf_error_set(TF_EINVAL, "string table does not start with the empty string");
	for (size_t i = 1; i < pb->n_string_table; i++)
		tf_strtab_push(&p->strings, pb->string_table[i], strlen(pb->string_table[i]));

	for (size_t i = 0; i < nv; i++) {
		const PbValueType *vt = pb->sample_type[i];
		if (!str_ok(p, vt->type) || !str_ok(p, vt->unit))
			return tf_error_set(TF_EINVAL, "sample type %zu names a missing string", i);
		tf_value_type v = { (tf_strid)vt->type, (tf_strid)vt->unit };
		tf_vec_push(&p->sample_types, v);
	}

	nmax = TF_MAX(TF_MAX(pb->n_function, pb->n_location), pb->n_mapping);
	ids = tf_xmalloc((nmax + 1) * sizeof(uint64_t) * 3);
	uint64_t *fids = ids, *lids = ids + nmax + 1, *mids = ids + 2 * (nmax + 1);
	for (size_t i = 0; i < pb->n_function; i++)
		fids[i] = pb->function[i]->id;
	for (size_t i = 0; i < pb->n_location; i++)
		lids[i] = pb->location[i]->id;
	for (size_t i = 0; i < pb->n_mapping; i++)
		mids[i] = pb->mapping[i]->id;
	id_map_init(&fn_ids, fids, pb->n_function);
	id_map_init(&loc_ids, lids, pb->n_location);
	id_map_init(&map_ids, mids, pb->n_mapping);

	tf_vec_reserve(&p->functions, pb->n_function);
	for (size_t i = 0; i < pb->n_function; i++) {
		const PbFunction *f = pb->function[i];
		if (!str_ok(p, f->name) || !str_ok(p, f->system_name) || !str_ok(p, f->filename)) {
			rc = tf_error_set(TF_EINVAL, "function %llu names a missing string",
					  (unsigned long long)f->id);
			goto done;
		}
		tf_function fn = { (tf_strid)f->name, (tf_strid)f->system_name,
				   (tf_strid)f->filename, f->start_line };
		p->functions.v[p->functions.n++] = fn;
	}

	tf_vec_reserve(&p->mappings, pb->n_mapping);
	for (size_t i = 0; i < pb->n_mapping; i++) {
		const PbMapping *m = pb->mapping[i];
		if (!str_ok(p, m->filename) || !str_ok(p, m->build_id)) {
			rc = tf_error_set(TF_EINVAL, "mapping %llu names a missing string",
					  (unsigned long long)m->id);
			goto done;
		}
		tf_mapping mm = { m->memory_start, m->memory_limit, m->file_offset,
				  (tf_strid)m->filename, (tf_strid)m->build_id,
				  (m->has_functions ? TF_MAPPING_HAS_FUNCTIONS : 0u) |
				  (m->has_filenames ? TF_MAPPING_HAS_FILENAMES : 0u) |
				  (m->has_line_numbers ? TF_MAPPING_HAS_LINE_NUMBERS : 0u) |
				  (m->has_inline_frames ? TF_MAPPING_HAS_INLINE_FRAMES : 0u) };
		p->mappings.v[p->mappings.n++] = mm;
	}

	tf_vec_reserve(&p->locations, pb->n_location);
	for (size_t i = 0; i < pb->n_location; i++) {
		const PbLocation *l = pb->location[i];
		tf_location loc;
		loc.mapping = TF_NO_MAPPING;
		if (l->mapping_id) {
			loc.mapping = id_map_get(&map_ids, l->mapping_id);
			if (loc.mapping == UINT32_MAX) {
				rc = tf_error_set(TF_EINVAL, "location %llu refers to missing mapping %llu",
						  (unsigned long long)l->id,
						  (unsigned long long)l->mapping_id);
				goto done;
			}
		}
		loc.address = l->address;
		loc.lines_off = (uint32_t)p->lines.n;
		loc.nlines = (uint32_t)l->n_line;
		loc.is_folded = l->is_folded;
		tf_vec_reserve(&p->lines, p->lines.n + l->n_line);
		for (size_t j = 0; j < l->n_line; j++) {
			uint32_t fi = id_map_get(&fn_ids, l->line[j]->function_id);
			if (fi == UINT32_MAX) {
				rc = tf_error_set(TF_EINVAL, "location %llu refers to missing function %llu",
						  (unsigned long long)l->id,
						  (unsigned long long)l->line[j]->function_id);
				goto done;
			}
			tf_line ln = { fi, l->line[j]->line, l->line[j]->column };
			p->lines.v[p->lines.n++] = ln;
		}
		p->locations.v[p->locations.n++] = loc;
	}

	tf_vec_reserve(&p->samples, pb->n_sample);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const PbSample *s = pb->sample[i];
		tf_sample smp;
		if (s->n_value != nv) {
			rc = tf_error_set(TF_EINVAL, "sample %zu has %zu values for %zu sample types",
					  i, s->n_value, nv);
			goto done;
		}
		smp.locs_off = (uint32_t)p->stack.n;
		smp.nlocs = (uint32_t)s->n_location_id;
		tf_vec_reserve(&p->stack, p->stack.n + s->n_location_id);
		for (size_t j = 0; j < s->n_location_id; j++) {
			uint32_t li = id_map_get(&loc_ids, s->location_id[j]);
			if (li == UINT32_MAX) {
				rc = tf_error_set(TF_EINVAL, "sample %zu refers to missing location %llu",
						  i, (unsigned long long)s->location_id[j]);
				goto done;
			}
			p->stack.v[p->stack.n++] = li;
		}
		smp.labels_off = (uint32_t)p->labels.n;
		smp.nlabels = (uint32_t)s->n_label;
		tf_vec_reserve(&p->labels, p->labels.n + s->n_label);
		for (size_t j = 0; j < s->n_label; j++) {
			const PbLabel *l = s->label[j];
			if (!str_ok(p, l->key) || !str_ok(p, l->str) || !str_ok(p, l->num_unit)) {
				rc = tf_error_set(TF_EINVAL, "sample %zu has a label naming a missing string", i);
				goto done;
			}
			tf_label lb = { (tf_strid)l->key, (tf_strid)l->str, l->num, (tf_strid)l->num_unit };
			p->labels.v[p->labels.n++] = lb;
		}
		tf_vec_reserve(&p->values, p->values.n + nv);
		memcpy(p->values.v + p->values.n, s->value, nv * sizeof(int64_t));
		p->values.n += nv;
		p->samples.v[p->samples.n++] = smp;
	}

	for (size_t i = 0; i < pb->n_comment; i++) {
		if (!str_ok(p, pb->comment[i])) {
			rc = tf_error_set(TF_EINVAL, "comment %zu names a missing string", i);
			goto done;
		}
		tf_vec_push(&p->comments, (tf_strid)pb->comment[i]);
	}
	if (pb->period_type) {
		if (!str_ok(p, pb->period_type->type) || !str_ok(p, pb->period_type->unit)) {
			rc = tf_error_set(TF_EINVAL, "period type names a missing string");
			goto done;
		}
		p->period_type.type = (tf_strid)pb->period_type->type;
		p->period_type.unit = (tf_strid)pb->period_type->unit;
	}
	p->period = pb->period;
	p->time_nanos = pb->time_nanos;
	p->duration_nanos = pb->duration_nanos;
	p->drop_frames = str_ok(p, pb->drop_frames) ? pb->drop_frames : 0;
	p->keep_frames = str_ok(p, pb->keep_frames) ? pb->keep_frames : 0;
	p->default_sample_type = str_ok(p, pb->default_sample_type) ? (tf_strid)pb->default_sample_type : 0;
	p->doc_url = str_ok(p, pb->doc_url) ? (tf_strid)pb->doc_url : 0;

done:
	tf_htab_free(&fn_ids.index);
	tf_htab_free(&loc_ids.index);
	tf_htab_free(&map_ids.index);
	free(ids);
	return rc;
}

int tf_pprof_decode(tf_profile **out, const void *data, size_t len)
{
	tf_buf raw = TF_BUF_INIT;
	PbProfile *pb;
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
	pb = perftools__profiles__profile__unpack(NULL, len, data);
	tf_buf_free(&raw);
	if (!pb)
		return tf_error_set(TF_EINVAL, "not a valid pprof profile (protobuf decoding failed)");
	tf_profile_new(&p);
	tf_profile_set_merge(p, false);
	rc = convert(p, pb);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	if (rc) {
		tf_profile_free(p);
		return rc;
	}
	tf_profile_set_merge(p, true);
	*out = p;
	return 0;
}
