/*
 * symcache.c - what a binary's addresses resolved to, kept in the user
 * cache by build-id, so that the next run of the same binary reads its
 * answers instead of opening the DWARF again.
 *
 * The cost of symbolizing a few samples of a big binary is the DWARF of
 * the compilation units they fall in (the CU's function index and line
 * table: tens of milliseconds for a C++ test file) and the symbol table,
 * paid again on every run although a build-id names the contents. A test
 * suite's samples mostly land on the same call sites run after run, so
 * each module with a build-id and DWARF keeps a file
 * <persist_dir>/sym/<build-id>-<options>: every address asked for so far
 * with its frames, and whether the binary keeps frame pointers. A run
 * whose addresses are all there never loads the DWARF or the symbol table;
 * new addresses are resolved as before and added when the symbolizer is
 * saved (tf_symbolizer_save: temp file, then rename, so a concurrent run
 * sees the old file or the new one). Binaries without DWARF are cheap to
 * resolve and have no file: their answers could change when a debug
 * package is installed.
 *
 * The file is keyed by testflame's version and the options that change
 * the frames (demangling, inlined frames); anything malformed is ignored
 * and written again.
 */
#include "symbolize/symbolize_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define PC_MAGIC "TFSYMC\001\n"
#define PC_FORMAT 1
#define PC_MAX_ENTRIES 500000 /* past this, new addresses are not kept */

typedef struct {
	uint32_t fn, sys, file; /* ids in s->strs; file: id + 1, 0 for none */
	int32_t line, start;
} pc_frame;

typedef struct {
	uint64_t vaddr;
	uint32_t off, n;        /* frames */
	bool ok;
} pc_entry;

struct tf_sym_pcache {
	char *path;
	TF_VEC(pc_entry) entries;
	TF_VEC(pc_frame) frames;
	tf_htab index;          /* vaddr -> entry */
	int8_t has_fp;          /* -1 unknown */
	bool dirty;
};

static bool entry_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct tf_sym_pcache *c = ctx;
	return c->entries.v[idx].vaddr == *(const uint64_t *)key;
}

static uint32_t intern(tf_symbolizer *s, const char *str)
{
	return tf_strtab_intern(&s->strs, str, strlen(str));
}

typedef struct {
	const uint8_t *p, *end;
	bool bad;
} rd;

static uint32_t rd32(rd *r)
{
	uint32_t v = 0;
	if (r->end - r->p < 4) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, 4);
	r->p += 4;
	return v;
}

static uint64_t rd64(rd *r)
{
	uint64_t v = 0;
	if (r->end - r->p < 8) {
		r->bad = true;
		return 0;
	}
	memcpy(&v, r->p, 8);
	r->p += 8;
	return v;
}

static void put32(tf_buf *b, uint32_t v)
{
	tf_buf_put(b, &v, 4);
}

static void put64(tf_buf *b, uint64_t v)
{
	tf_buf_put(b, &v, 8);
}

static void header(tf_buf *b, const tf_symbolizer *s)
{
	char version[24] = { 0 };
	snprintf(version, sizeof(version), "%s/%d", TF_VERSION, PC_FORMAT);
	tf_buf_put(b, PC_MAGIC, 8);
	tf_buf_put(b, version, sizeof(version));
	put32(b, (s->opts.demangle ? 1u : 0u) | (s->opts.inline_frames ? 2u : 0u));
}

/* Read the file into `c`; false (and `c` left empty) when it is absent or
 * not one of ours. */
static bool load(tf_symbolizer *s, struct tf_sym_pcache *c)
{
	tf_buf file = TF_BUF_INIT, want = TF_BUF_INIT;
	TF_VEC(uint32_t) ids = { 0 };
	bool ok = false;

	if (tf_file_read(&file, c->path) != 0) {
		tf_error_clear();
		goto done;
	}
	header(&want, s);
	if (file.len < want.len || memcmp(file.ptr, want.ptr, want.len) != 0)
		goto done;
	rd r = { (const uint8_t *)file.ptr + want.len, (const uint8_t *)file.ptr + file.len, false };
	int32_t has_fp = (int32_t)rd32(&r);
	uint32_t nstr = rd32(&r), strbytes = rd32(&r);
	if (r.bad || strbytes > (size_t)(r.end - r.p) || nstr > strbytes)
		goto done;
	const char *str = (const char *)r.p, *strend = str + strbytes;
	if (strbytes && strend[-1] != '\0')
		goto done;
	for (uint32_t i = 0; i < nstr; i++) {
		if (str >= strend)
			goto done;
		tf_vec_push(&ids, intern(s, str));
		str += strlen(str) + 1;
	}
	r.p += strbytes;
	uint32_t n = rd32(&r);
	if (r.bad || n > PC_MAX_ENTRIES)
		goto done;
	for (uint32_t i = 0; i < n; i++) {
		pc_entry e;
		e.vaddr = rd64(&r);
		uint32_t w = rd32(&r);
		e.ok = w >> 31;
		e.n = w & 0x7fffffff;
		e.off = (uint32_t)c->frames.n;
		if (r.bad || e.n > 64)
			goto done;
		for (uint32_t k = 0; k < e.n; k++) {
			uint32_t fn = rd32(&r), sys = rd32(&r), file_id = rd32(&r);
			pc_frame f;
			f.line = (int32_t)rd32(&r);
			f.start = (int32_t)rd32(&r);
			if (r.bad || fn >= nstr || sys >= nstr || file_id > nstr)
				goto done;
			f.fn = ids.v[fn];
			f.sys = ids.v[sys];
			f.file = file_id ? ids.v[file_id - 1] + 1 : 0;
			tf_vec_push(&c->frames, f);
		}
		uint64_t h = tf_hash_u64(e.vaddr);
		if (tf_htab_find(&c->index, h, entry_eq, c, &e.vaddr) != TF_HTAB_NONE)
			goto done;
		tf_vec_push(&c->entries, e);
		tf_htab_insert(&c->index, h, (uint32_t)c->entries.n - 1);
	}
	if (r.p != r.end)
		goto done;
	c->has_fp = has_fp < 0 ? -1 : has_fp > 0;
	ok = true;
done:
	if (!ok) {
		c->entries.n = 0;
		c->frames.n = 0;
		tf_htab_free(&c->index);
		c->has_fp = -1;
	}
	tf_vec_free(&ids);
	tf_buf_free(&file);
	tf_buf_free(&want);
	return ok;
}

void tf_sym_pcache_open(tf_symbolizer *s, tf_sym_module *m)
{
	if (!s->opts.persist_dir || !m->build_id || m->pc)
		return;
	struct tf_sym_pcache *c = tf_xcalloc(1, sizeof(*c));
	c->path = tf_xasprintf("%s/sym/%s-%c%c", s->opts.persist_dir, m->build_id,
			       s->opts.demangle ? 'd' : 'm', s->opts.inline_frames ? 'i' : 'n');
	c->has_fp = -1;
	if (load(s, c))
		s->stats.symcache_loaded++;
	m->pc = c;
}

bool tf_sym_pcache_get(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr, bool *ok)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || !c->entries.n)
		return false;
	uint32_t i = tf_htab_find(&c->index, tf_hash_u64(vaddr), entry_eq, c, &vaddr);
	if (i == TF_HTAB_NONE)
		return false;
	const pc_entry *e = &c->entries.v[i];
	s->scratch.n = 0;
	for (uint32_t k = 0; k < e->n; k++) {
		const pc_frame *pf = &c->frames.v[e->off + k];
		tf_frame f = { s->strs.strs.v[pf->fn], s->strs.strs.v[pf->sys],
			       pf->file ? s->strs.strs.v[pf->file - 1] : NULL, pf->line, pf->start };
		tf_vec_push(&s->scratch, f);
	}
	*ok = e->ok;
	s->stats.symcache_hits++;
	return true;
}

void tf_sym_pcache_put(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr, bool ok)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || c->entries.n >= PC_MAX_ENTRIES || s->scratch.n > 64)
		return;
	pc_entry e = { vaddr, (uint32_t)c->frames.n, (uint32_t)s->scratch.n, ok };
	for (size_t k = 0; k < s->scratch.n; k++) {
		const tf_frame *f = &s->scratch.v[k];
		pc_frame pf = { intern(s, f->function), intern(s, f->system_name),
				f->file ? intern(s, f->file) + 1 : 0, f->line, f->start_line };
		tf_vec_push(&c->frames, pf);
	}
	uint64_t h = tf_hash_u64(vaddr);
	if (tf_htab_find(&c->index, h, entry_eq, c, &vaddr) != TF_HTAB_NONE) {
		c->frames.n = e.off;
		return;
	}
	tf_vec_push(&c->entries, e);
	tf_htab_insert(&c->index, h, (uint32_t)c->entries.n - 1);
	c->dirty = true;
}

int8_t tf_sym_pcache_has_fp(const tf_sym_module *m)
{
	return m->pc ? m->pc->has_fp : -1;
}

void tf_sym_pcache_set_has_fp(tf_sym_module *m, bool has_fp)
{
	if (m->pc && m->pc->has_fp != (int8_t)has_fp) {
		m->pc->has_fp = has_fp;
		m->pc->dirty = true;
	}
}

/* The file's bytes: the strings the entries use, then the entries. */
static void encode(tf_buf *b, const tf_symbolizer *s, const struct tf_sym_pcache *c)
{
	size_t nstrs = s->strs.strs.n;
	uint32_t *local = tf_xcalloc(nstrs + 1, sizeof(uint32_t)); /* id + 1 */
	TF_VEC(uint32_t) order = { 0 };
	tf_buf strs = TF_BUF_INIT;

	for (size_t i = 0; i < c->frames.n; i++) {
		const pc_frame *f = &c->frames.v[i];
		uint32_t use[3] = { f->fn, f->sys, f->file ? f->file - 1 : UINT32_MAX };
		for (int k = 0; k < 3; k++) {
			if (use[k] == UINT32_MAX || local[use[k]])
				continue;
			tf_vec_push(&order, use[k]);
			local[use[k]] = (uint32_t)order.n;
			tf_buf_put(&strs, s->strs.strs.v[use[k]], s->strs.lens.v[use[k]] + 1);
		}
	}
	header(b, s);
	put32(b, (uint32_t)(int32_t)c->has_fp);
	put32(b, (uint32_t)order.n);
	put32(b, (uint32_t)strs.len);
	tf_buf_put(b, strs.ptr, strs.len);
	put32(b, (uint32_t)c->entries.n);
	for (size_t i = 0; i < c->entries.n; i++) {
		const pc_entry *e = &c->entries.v[i];
		put64(b, e->vaddr);
		put32(b, e->n | (e->ok ? 0x80000000u : 0));
		for (uint32_t k = 0; k < e->n; k++) {
			const pc_frame *f = &c->frames.v[e->off + k];
			put32(b, local[f->fn] - 1);
			put32(b, local[f->sys] - 1);
			put32(b, f->file ? local[f->file - 1] : 0);
			put32(b, (uint32_t)f->line);
			put32(b, (uint32_t)f->start);
		}
	}
	free(local);
	tf_vec_free(&order);
	tf_buf_free(&strs);
}

void tf_symbolizer_save(tf_symbolizer *s)
{
	tf_buf b = TF_BUF_INIT;
	char *dir = NULL;

	for (size_t i = 0; i < s->mods.n; i++) {
		tf_sym_module *m = s->mods.v[i];
		struct tf_sym_pcache *c = m->pc;
		/* no DWARF: cheap to resolve, and a debug package may come */
		if (!c || !c->dirty || m->dwarf_state != TF_SYM_DWARF_YES)
			continue;
		if (!dir) {
			dir = tf_xasprintf("%s/sym", s->opts.persist_dir);
			if (tf_mkdir_p(dir, 0700) != 0)
				break;
		}
		tf_buf_clear(&b);
		encode(&b, s, c);
		if (tf_file_write_atomic(c->path, b.ptr, b.len) == 0) {
			c->dirty = false;
			s->stats.symcache_saved++;
		}
	}
	tf_error_clear();
	free(dir);
	tf_buf_free(&b);
}

void tf_sym_pcache_free(struct tf_sym_pcache *c)
{
	if (!c)
		return;
	free(c->path);
	tf_vec_free(&c->entries);
	tf_vec_free(&c->frames);
	tf_htab_free(&c->index);
	free(c);
}
