/*
 * pprof.c - encoding our profile model as profile.proto through protobuf-c,
 * and the gzip layer (zlib) that pprof files wear. Decoding does not use
 * protobuf-c: pprof_read.c walks the wire format directly, for speed.
 */
#include "testflame/profile.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>


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

/* encoding
 *
 * profile.proto's wire format written directly, byte for byte what
 * protobuf-c packs (fields by number, proto3's zero scalars left out,
 * repeated scalars packed): its generic packing builds a message struct
 * per sample, label, location and line, and walks their descriptors
 * twice (sizes, then bytes), which was 60% of the CPU of writing a run
 * file of 30,000 samples. Each message's size is worked out from the
 * profile's own arrays before it is written. */

static inline size_t vsize(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *vput(uint8_t *o, uint64_t v)
{
	while (v >= 0x80) {
		*o++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*o++ = (uint8_t)v;
	return o;
}

/* A varint field (field numbers here are under 16: a one-byte key),
 * none when zero. */
static inline size_t int_size(uint64_t v)
{
	return v ? 1 + vsize(v) : 0;
}

static inline uint8_t *int_put(uint8_t *o, unsigned field, uint64_t v)
{
	if (!v)
		return o;
	*o++ = (uint8_t)(field << 3);
	return vput(o, v);
}

/* A length-delimited field's key and length, before its `len` bytes. */
static inline size_t len_size(size_t len)
{
	return 1 + vsize(len) + len;
}

static inline uint8_t *len_put(uint8_t *o, unsigned field, size_t len)
{
	*o++ = (uint8_t)(field << 3 | 2);
	return vput(o, len);
}

/* Room for `n` more bytes; where they go. */
static inline uint8_t *room(tf_buf *b, size_t n)
{
	tf_buf_grow(b, n);
	return (uint8_t *)b->ptr + b->len;
}

static inline void done(tf_buf *b, const uint8_t *o)
{
	b->len = (size_t)((const char *)o - b->ptr);
}

/* A message of varint fields 1..n alone, v[i] field i + 1's value. */
static size_t scalars_size(const uint64_t *v, size_t n)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += int_size(v[i]);
	return len;
}

static uint8_t *scalars_put(uint8_t *o, unsigned field, const uint64_t *v, size_t n)
{
	o = len_put(o, field, scalars_size(v, n));
	for (size_t i = 0; i < n; i++)
		o = int_put(o, (unsigned)i + 1, v[i]);
	return o;
}

static void put_scalars(tf_buf *b, unsigned field, const uint64_t *v, size_t n)
{
	uint8_t *o = room(b, len_size(scalars_size(v, n)));
	done(b, scalars_put(o, field, v, n));
}

/* Label, Line: their fields as scalars_put takes them. */
static void label_fields(uint64_t v[4], const tf_label *l)
{
	v[0] = l->key;
	v[1] = l->str;
	v[2] = (uint64_t)l->num;
	v[3] = l->num_unit;
}

static void line_fields(uint64_t v[3], const tf_line *ln)
{
	v[0] = (uint64_t)ln->function + 1;
	v[1] = (uint64_t)ln->line;
	v[2] = (uint64_t)ln->column;
}

static void put_sample(tf_buf *b, const tf_profile *p, const tf_sample *s, const int64_t *values,
		       size_t nv)
{
	const uint32_t *locs = p->stack.v + s->locs_off;
	const tf_label *labels = p->labels.v + s->labels_off;
	size_t nlocs = 0, nvals = 0, body = 0;
	uint64_t lv[4];

	for (uint32_t k = 0; k < s->nlocs; k++)
		nlocs += vsize((uint64_t)locs[k] + 1);
	for (size_t k = 0; k < nv; k++)
		nvals += vsize((uint64_t)values[k]);
	if (s->nlocs)
		body += len_size(nlocs);
	if (nv)
		body += len_size(nvals);
	for (uint32_t k = 0; k < s->nlabels; k++) {
		label_fields(lv, &labels[k]);
		body += len_size(scalars_size(lv, 4));
	}
	uint8_t *o = room(b, len_size(body));
	o = len_put(o, 2, body);
	if (s->nlocs) {
		o = len_put(o, 1, nlocs);
		for (uint32_t k = 0; k < s->nlocs; k++)
			o = vput(o, (uint64_t)locs[k] + 1);
	}
	if (nv) {
		o = len_put(o, 2, nvals);
		for (size_t k = 0; k < nv; k++)
			o = vput(o, (uint64_t)values[k]);
	}
	for (uint32_t k = 0; k < s->nlabels; k++) {
		label_fields(lv, &labels[k]);
		o = scalars_put(o, 3, lv, 4);
	}
	done(b, o);
}

static void put_location(tf_buf *b, const tf_profile *p, const tf_location *l, size_t id)
{
	const tf_line *lines = p->lines.v + l->lines_off;
	uint64_t head[3] = { id, l->mapping == TF_NO_MAPPING ? 0 : (uint64_t)l->mapping + 1,
			     l->address }, lv[3];
	size_t body = scalars_size(head, 3) + int_size(l->is_folded);

	for (uint32_t k = 0; k < l->nlines; k++) {
		line_fields(lv, &lines[k]);
		body += len_size(scalars_size(lv, 3));
	}
	uint8_t *o = room(b, len_size(body));
	o = len_put(o, 4, body);
	for (unsigned k = 0; k < 3; k++)
		o = int_put(o, k + 1, head[k]);
	for (uint32_t k = 0; k < l->nlines; k++) {
		line_fields(lv, &lines[k]);
		o = scalars_put(o, 4, lv, 3);
	}
	done(b, int_put(o, 5, l->is_folded));
}

/* The profile's bytes, unzipped, appended to `b`. */
static void encode(tf_buf *b, const tf_profile *p)
{
	size_t nv = p->sample_types.n;
	uint8_t *o;

	/* a guess at the size, from what a sample of a run file takes */
	tf_buf_grow(b, 64 + p->samples.n * (24 + nv * 3) + p->stack.n * 2 + p->labels.n * 8 +
			       p->locations.n * 24 + p->functions.n * 16 + p->strings.strs.n * 48);
	for (size_t i = 0; i < nv; i++) {
		uint64_t v[2] = { p->sample_types.v[i].type, p->sample_types.v[i].unit };
		put_scalars(b, 1, v, 2);
	}
	for (size_t i = 0; i < p->samples.n; i++)
		put_sample(b, p, &p->samples.v[i], p->values.v + i * nv, nv);
	for (size_t i = 0; i < p->mappings.n; i++) {
		const tf_mapping *m = &p->mappings.v[i];
		uint64_t v[10] = { i + 1, m->memory_start, m->memory_limit, m->file_offset,
				   m->filename, m->build_id, !!(m->flags & TF_MAPPING_HAS_FUNCTIONS),
				   !!(m->flags & TF_MAPPING_HAS_FILENAMES),
				   !!(m->flags & TF_MAPPING_HAS_LINE_NUMBERS),
				   !!(m->flags & TF_MAPPING_HAS_INLINE_FRAMES) };
		put_scalars(b, 3, v, 10);
	}
	for (size_t i = 0; i < p->locations.n; i++)
		put_location(b, p, &p->locations.v[i], i + 1);
	for (size_t i = 0; i < p->functions.n; i++) {
		const tf_function *f = &p->functions.v[i];
		uint64_t v[5] = { i + 1, f->name, f->system_name, f->filename, (uint64_t)f->start_line };
		put_scalars(b, 5, v, 5);
	}
	for (size_t i = 0; i < p->strings.strs.n; i++) {
		const char *str = p->strings.strs.v[i];
		size_t n = strlen(str);
		o = room(b, len_size(n));
		o = len_put(o, 6, n);
		memcpy(o, str, n);
		done(b, o + n);
	}
	o = room(b, 128); /* fields 7 to 12: 6 varints and a message of two */
	o = int_put(o, 7, (uint64_t)p->drop_frames);
	o = int_put(o, 8, (uint64_t)p->keep_frames);
	o = int_put(o, 9, (uint64_t)p->time_nanos);
	o = int_put(o, 10, (uint64_t)p->duration_nanos);
	if (p->period_type.type || p->period_type.unit) {
		uint64_t v[2] = { p->period_type.type, p->period_type.unit };
		o = scalars_put(o, 11, v, 2);
	}
	o = int_put(o, 12, (uint64_t)p->period);
	done(b, o);
	if (p->comments.n) {
		size_t n = 0;
		for (size_t i = 0; i < p->comments.n; i++)
			n += vsize((uint64_t)(int64_t)p->comments.v[i]);
		o = room(b, len_size(n));
		o = len_put(o, 13, n);
		for (size_t i = 0; i < p->comments.n; i++)
			o = vput(o, (uint64_t)(int64_t)p->comments.v[i]);
		done(b, o);
	}
	o = room(b, 32);
	o = int_put(o, 14, (uint64_t)(int64_t)p->default_sample_type);
	o = int_put(o, 15, (uint64_t)(int64_t)p->doc_url);
	done(b, o);
}

int tf_pprof_encode(tf_buf *out, const tf_profile *p, int gzip_level)
{
	if (gzip_level <= 0) {
		encode(out, p);
		return 0;
	}
	tf_buf raw = TF_BUF_INIT;
	encode(&raw, p);
	int rc = tf_gzip(out, raw.ptr, raw.len, gzip_level);
	tf_buf_free(&raw);
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
