/*
 * pprof.c - encoding our profile model as profile.proto through protobuf-c,
 * and the gzip layer (zlib) that pprof files wear. Decoding does not use
 * protobuf-c: pprof_read.c walks the wire format directly, for speed.
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

struct label_key {
	const PbLabel *labels;
	const tf_label *l;
};

static bool label_eq(const void *ctx, uint32_t idx, const void *key)
{
	const PbLabel *a = &((const struct label_key *)ctx)->labels[idx];
	const tf_label *b = key;
	return a->key == b->key && a->str == b->str && a->num == b->num && a->num_unit == b->num_unit;
}

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
	PbLabel *labels = tf_xmalloc((p->labels.n + 1) * sizeof(*labels)); /* only the distinct ones are touched */
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
	/* Samples repeat a few hundred distinct labels (a test, a pid, a tid):
	 * one message each, shared by pointer, not one per sample's label
	 * (that was most of the time of writing a large run file, in page
	 * faults on the array) */
	tf_htab seen = { 0 };
	size_t nunique = 0;
	for (size_t i = 0; i < p->labels.n; i++) {
		const tf_label *l = &p->labels.v[i];
		uint64_t h = tf_hash_combine(tf_hash_combine(tf_hash_combine(
			(uint64_t)l->key, (uint64_t)l->str), (uint64_t)l->num), (uint64_t)l->num_unit);
		struct label_key k = { labels, l };
		uint32_t u = tf_htab_find(&seen, h, label_eq, &k, l);
		if (u == TF_HTAB_NONE) {
			u = (uint32_t)nunique++;
			perftools__profiles__label__init(&labels[u]);
			labels[u].key = l->key;
			labels[u].str = l->str;
			labels[u].num = l->num;
			labels[u].num_unit = l->num_unit;
			tf_htab_insert(&seen, h, u);
		}
		labelp[i] = &labels[u];
	}
	tf_htab_free(&seen);
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
	/* level 1, as Go's runtime/pprof writes its profiles: on the run files
	 * of a test suite (what `record` waits for at the end) it takes half
	 * the time of level 4 for about 17% more bytes */
	int rc = tf_pprof_encode(&b, p, 1);
	if (!rc)
		rc = tf_file_write_atomic(path, b.ptr, b.len);
	tf_buf_free(&b);
	return rc;
}
