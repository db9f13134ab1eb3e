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
 * whose addresses are all there never loads the DWARF or the symbol table.
 * Samples of the next run land elsewhere in the same functions and CUs,
 * so the file also keeps each function an address was resolved in whole
 * (its ranges, inlined calls and line rows: any address of it answered
 * without the DWARF) and each CU's indexes (its functions' ranges and DIE
 * offsets, its line table's sequences and checkpoints: no walk of its
 * DIEs, no scan of its line program, only the DIEs and rows asked for).
 * New addresses are resolved as before and added when the symbolizer is
 * saved (tf_symbolizer_save). The file is a header and segments, each
 * framed by its length and a checksum: a run appends one segment with what
 * it added (one write, O_APPEND: a C++ binary's file is megabytes, and
 * writing it whole again cost a warm run a fifth of its time), and every
 * 16 segments, or when one is torn (a run killed while it wrote, a full
 * disk), the file is written whole again (temp file, then rename, so a
 * concurrent run sees the old file or the new one). A torn segment and
 * what follows it are ignored. Binaries without DWARF are cheap to
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
#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define PC_MAGIC "TFSYMC\001\n"
#define PC_FORMAT 6
#define PC_SEGMENT 0x47455354u /* "TSEG" */
#define PC_SEGMENTS_MAX 16 /* then the file is written whole again */
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

/* A CU kept: its offset and its record (see tf_sym_pcache_put_cu), in
 * the mapped file as it was read, or in `own` when this run made it. */
typedef struct {
	uint64_t off;
	const uint8_t *rec;
	size_t len;
	tf_buf own;
	bool fresh;             /* made by this run, not saved yet */
} kept_cu;

struct tf_sym_pcache {
	char *path;
	TF_VEC(pc_entry) entries;
	TF_VEC(pc_frame) frames;
	tf_htab index;          /* vaddr -> entry */
	TF_VEC(tf_sym_kept_fn) fns;
	tf_sym_ivls fn_index;   /* pc -> fn, over fns[0, fn_indexed) */
	size_t fn_indexed;
	TF_VEC(kept_cu) cus;    /* CUs' indexes, each an encoded record */
	tf_htab cu_index;       /* cu offset -> cus */
	int8_t has_fp;          /* -1 unknown */
	bool dirty;
	void *map;              /* the file read, mapped: the CUs' records */
	size_t map_len;
	size_t segments;        /* in the file read (0: none, or none read) */
	bool torn;              /* a segment of it was not whole */
	size_t entries_saved, fns_saved; /* what the file has already */
	TF_VEC(tf_sym_arange) aranges; /* the DWARF's CUs by address, once known */
	uint64_t aranges_end;
	bool have_aranges, aranges_fresh;
	TF_VEC(uint64_t) no_names; /* sets of prefixes no function begins with */
	size_t no_names_saved;
};

static bool kept_cu_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct tf_sym_pcache *c = ctx;
	return c->cus.v[idx].off == *(const uint64_t *)key;
}

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

/* A field, copied in place while there is room: a binary's file is a
 * few megabytes of them, written again whenever a run adds to it. */
static inline void put32(tf_buf *b, uint32_t v)
{
	if (b->len + 4 < b->cap) {
		memcpy(b->ptr + b->len, &v, 4);
		b->len += 4;
		b->ptr[b->len] = '\0';
	} else {
		tf_buf_put(b, &v, 4);
	}
}

static inline void put64(tf_buf *b, uint64_t v)
{
	if (b->len + 8 < b->cap) {
		memcpy(b->ptr + b->len, &v, 8);
		b->len += 8;
		b->ptr[b->len] = '\0';
	} else {
		tf_buf_put(b, &v, 8);
	}
}

static void header(tf_buf *b, const tf_symbolizer *s)
{
	char version[24] = { 0 };
	snprintf(version, sizeof(version), "%s/%d", TF_VERSION, PC_FORMAT);
	tf_buf_put(b, PC_MAGIC, 8);
	tf_buf_put(b, version, sizeof(version));
	put32(b, (s->opts.demangle ? 1u : 0u) | (s->opts.inline_frames ? 2u : 0u));
}

/* A kept string field (local index + 1, 0 for none) as strtab id + 1. */
static uint32_t rd_sid(rd *r, const uint32_t *ids, uint32_t nstr)
{
	uint32_t v = rd32(r);
	if (v > nstr) {
		r->bad = true;
		return 0;
	}
	return v ? ids[v - 1] + 1 : 0;
}

static bool load_fns(rd *r, struct tf_sym_pcache *c, const uint32_t *ids, uint32_t nstr)
{
	uint32_t nfns = rd32(r);
	if (r->bad || nfns > PC_MAX_ENTRIES)
		return false;
	for (uint32_t i = 0; i < nfns && !r->bad; i++) {
		tf_sym_kept_fn f;
		memset(&f, 0, sizeof(f));
		f.name = rd_sid(r, ids, nstr);
		f.linkage = (uint8_t)rd32(r);
		f.decl_line = (int32_t)rd32(r);
		uint32_t n = rd32(r);
		for (uint32_t k = 0; k < n && !r->bad && r->p < r->end; k++) {
			tf_sym_kept_range g;
			g.lo = rd64(r);
			g.hi = rd64(r);
			g.sym = rd_sid(r, ids, nstr);
			tf_vec_push(&f.ranges, g);
		}
		n = rd32(r);
		for (uint32_t k = 0; k < n && !r->bad && r->p < r->end; k++) {
			tf_sym_kept_node d;
			memset(&d, 0, sizeof(d));
			d.parent = (int32_t)rd32(r);
			uint32_t flags = rd32(r);
			d.block = flags & 1;
			d.has_pc = (flags >> 1) & 1;
			d.linkage = (flags >> 2) & 1;
			d.ranges_off = rd32(r);
			d.nranges = rd32(r);
			d.name = rd_sid(r, ids, nstr);
			d.decl_line = (int32_t)rd32(r);
			d.call_file = rd_sid(r, ids, nstr);
			d.call_line = (int32_t)rd32(r);
			if (d.parent < -1 || d.parent >= (int32_t)k)
				r->bad = true;
			tf_vec_push(&f.nodes, d);
		}
		n = rd32(r);
		for (uint32_t k = 0; k < n && !r->bad && r->p < r->end; k++) {
			tf_sym_kept_range g = { 0, 0, 0 };
			g.lo = rd64(r);
			g.hi = rd64(r);
			tf_vec_push(&f.node_ranges, g);
		}
		for (size_t k = 0; k < f.nodes.n; k++)
			if ((uint64_t)f.nodes.v[k].ranges_off + f.nodes.v[k].nranges > f.node_ranges.n)
				r->bad = true;
		n = rd32(r);
		for (uint32_t k = 0; k < n && !r->bad && r->p < r->end; k++) {
			tf_sym_row w;
			w.addr = rd64(r);
			w.line = rd32(r);
			uint32_t file = rd32(r), end = file & TF_SYM_ROW_END;
			file &= ~TF_SYM_ROW_END;
			if (file > nstr)
				r->bad = true;
			w.file = (file ? ids[file - 1] + 1 : 0) | end;
			tf_vec_push(&f.rows, w);
		}
		tf_vec_push(&c->fns, f);
	}
	return !r->bad;
}

static void free_cus(struct tf_sym_pcache *c)
{
	for (size_t i = 0; i < c->cus.n; i++)
		tf_buf_free(&c->cus.v[i].own);
	tf_vec_free(&c->cus);
	tf_htab_free(&c->cu_index);
}

/* The kept CUs: their records, read when a CU is asked for. */
static bool load_cus(rd *r, struct tf_sym_pcache *c)
{
	uint32_t n = rd32(r);
	if (r->bad || n > PC_MAX_ENTRIES)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		kept_cu k = { rd64(r), NULL, 0, TF_BUF_INIT, false };
		uint32_t len = rd32(r);
		if (r->bad || len > (size_t)(r->end - r->p))
			return false;
		uint64_t h = tf_hash_u64(k.off);
		k.rec = r->p;
		k.len = len;
		r->p += len;
		/* a later segment's record of a CU (with its line table now) wins */
		uint32_t at = tf_htab_find(&c->cu_index, h, kept_cu_eq, c, &k.off);
		if (at != TF_HTAB_NONE) {
			c->cus.v[at] = k;
			continue;
		}
		tf_vec_push(&c->cus, k);
		tf_htab_insert(&c->cu_index, h, (uint32_t)c->cus.n - 1);
	}
	return true;
}

/* The CUs by address, when the segment has them (a later one's win). */
static bool load_aranges(rd *r, struct tf_sym_pcache *c)
{
	uint32_t n = rd32(r);
	if (r->bad)
		return false;
	if (n == UINT32_MAX)
		return true;
	if (n > (size_t)(r->end - r->p) / 16)
		return false;
	c->aranges.n = 0;
	for (uint32_t i = 0; i < n; i++) {
		tf_sym_arange a;
		a.start = rd64(r);
		a.cu = rd64(r);
		if (i && a.start < c->aranges.v[i - 1].start)
			r->bad = true;
		tf_vec_push(&c->aranges, a);
	}
	c->aranges_end = rd64(r);
	c->have_aranges = !r->bad;
	return !r->bad;
}

/*
 * A segment's checksum: its length, first and last 256 bytes. What it
 * guards against is a torn write (a run killed, a full disk), after which
 * the segment's length reaches past the end of the file or into the next
 * run's segment, whose bytes are not these; hashing megabytes on every
 * read cost a warm run a sixth of its time. Damage inside a segment is
 * the decoders' to catch, as before.
 */
static uint64_t segment_sum(const uint8_t *p, size_t len)
{
	size_t edge = TF_MIN(len, (size_t)256);
	return tf_hash_combine(tf_hash_bytes(p, edge, PC_SEGMENT ^ len),
			       tf_hash_bytes(p + len - edge, edge, PC_SEGMENT));
}

/* The sets of prefixes that no function of the binary begins with, by
 * their key (tf_sym_pcache_no_names). */
static bool load_no_names(rd *r, struct tf_sym_pcache *c)
{
	uint32_t n = rd32(r);
	if (r->bad || n > (size_t)(r->end - r->p) / 8)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t key = rd64(r);
		bool known = false;
		for (size_t k = 0; k < c->no_names.n && !known; k++)
			known = c->no_names.v[k] == key;
		if (!known)
			tf_vec_push(&c->no_names, key);
	}
	return !r->bad;
}

/* One segment's payload: its strings, then the entries, functions and CUs
 * it added. An entry already read (two runs resolved it at once) is
 * skipped. False when it is not one of ours. */
static bool load_segment(tf_symbolizer *s, struct tf_sym_pcache *c, rd *seg)
{
	TF_VEC(uint32_t) ids = { 0 };
	rd r = *seg;
	bool ok = false;

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
		if (tf_htab_find(&c->index, h, entry_eq, c, &e.vaddr) != TF_HTAB_NONE) {
			c->frames.n = e.off;
			continue;
		}
		if (c->entries.n >= PC_MAX_ENTRIES)
			goto done;
		tf_vec_push(&c->entries, e);
		tf_htab_insert(&c->index, h, (uint32_t)c->entries.n - 1);
	}
	if (!load_fns(&r, c, ids.v, nstr) || !load_cus(&r, c) || !load_aranges(&r, c) ||
	    !load_no_names(&r, c) || r.p != r.end)
		goto done;
	if (has_fp >= 0)
		c->has_fp = has_fp > 0;
	ok = true;
done:
	tf_vec_free(&ids);
	return ok;
}

/* Read the file into `c`: its segments, up to a torn one; false (and `c`
 * left empty) when it is absent or not one of ours. */
static bool load(tf_symbolizer *s, struct tf_sym_pcache *c)
{
	tf_buf want = TF_BUF_INIT;
	bool ok = false;
	struct stat st;

	/* mapped, not read: a C++ binary's file is megabytes, mostly CU
	 * records that a run asks few of; they are decoded from the map */
	int fd = open(c->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		goto done;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		c->map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (c->map == MAP_FAILED)
			c->map = NULL;
		else
			c->map_len = (size_t)st.st_size;
	}
	close(fd);
	if (!c->map)
		goto done;
	const uint8_t *file = c->map;
	header(&want, s);
	if (c->map_len < want.len || memcmp(file, want.ptr, want.len) != 0)
		goto done;
	rd r = { file + want.len, file + c->map_len, false };
	while (r.p < r.end) {
		uint32_t magic = rd32(&r), len = rd32(&r);
		uint64_t sum = rd64(&r);
		if (r.bad || magic != PC_SEGMENT || len > (size_t)(r.end - r.p) ||
		    segment_sum(r.p, len) != sum) {
			c->torn = true; /* and what follows it is not framed */
			break;
		}
		rd seg = { r.p, r.p + len, false };
		if (!load_segment(s, c, &seg))
			goto done;
		r.p += len;
		c->segments++;
	}
	ok = c->segments > 0;
done:
	if (!ok) {
		c->entries.n = 0;
		c->frames.n = 0;
		tf_htab_free(&c->index);
		for (size_t i = 0; i < c->fns.n; i++)
			tf_sym_kept_fn_free(&c->fns.v[i]);
		c->fns.n = 0;
		free_cus(c);
		c->aranges.n = 0;
		c->have_aranges = false;
		c->no_names.n = 0;
		c->has_fp = -1;
		c->segments = 0;
		if (c->map)
			munmap(c->map, c->map_len);
		c->map = NULL;
		c->map_len = 0;
	}
	c->entries_saved = c->entries.n;
	c->fns_saved = c->fns.n;
	c->no_names_saved = c->no_names.n;
	/* a torn segment goes when the file is next written whole */
	c->dirty = c->torn;
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
	free(m->syms_path);
	m->syms_path = tf_xasprintf("%s/sym/%s.syms", s->opts.persist_dir, m->build_id);
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

void tf_sym_kept_fn_free(tf_sym_kept_fn *f)
{
	tf_vec_free(&f->ranges);
	tf_vec_free(&f->nodes);
	tf_vec_free(&f->node_ranges);
	tf_vec_free(&f->rows);
}

void tf_sym_pcache_put_fn(tf_symbolizer *s, tf_sym_module *m, tf_sym_kept_fn *f)
{
	struct tf_sym_pcache *c = m->pc;
	(void)s;
	if (!c || c->fns.n >= PC_MAX_ENTRIES || !f->ranges.n) {
		tf_sym_kept_fn_free(f);
		return;
	}
	tf_vec_push(&c->fns, *f);
	memset(f, 0, sizeof(*f));
	c->dirty = true;
}

const tf_sym_kept_fn *tf_sym_pcache_find_fn(const tf_sym_module *m, uint64_t pc)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || !c->fns.n)
		return NULL;
	if (c->fn_indexed != c->fns.n) {
		tf_sym_ivls_free(&c->fn_index);
		for (size_t i = 0; i < c->fns.n; i++)
			for (size_t k = 0; k < c->fns.v[i].ranges.n; k++) {
				const tf_sym_kept_range *g = &c->fns.v[i].ranges.v[k];
				uint64_t size = g->hi - g->lo;
				uint32_t rank = size >= UINT32_MAX ? 0 : UINT32_MAX - (uint32_t)size;
				tf_sym_ivls_add(&c->fn_index, g->lo, g->hi, (uint32_t)i, rank);
			}
		tf_sym_ivls_build(&c->fn_index);
		c->fn_indexed = c->fns.n;
	}
	const tf_sym_ivl *e = tf_sym_ivls_find(&c->fn_index, pc);
	return e ? &c->fns.v[e->val] : NULL;
}

/*
 * A CU's record: its function index as built (ranges in order, each with
 * its rank and the index of its DIE offset), the DIE offsets, whether the
 * functions nested in functions are in it, then what
 * is known of its line table: 0 not read, 2 not kept (libdw's, or its
 * sequences overlap), 1 its sequences and checkpoints follow.
 */
void tf_sym_pcache_put_cu(tf_sym_module *m, const tf_sym_cu *cu)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || c->cus.n >= PC_MAX_ENTRIES)
		return;
	kept_cu k = { cu->cu_off, NULL, 0, TF_BUF_INIT, true };
	tf_buf *b = &k.own;
	put32(b, (uint32_t)cu->funcs.v.n);
	for (size_t i = 0; i < cu->funcs.v.n; i++) {
		const tf_sym_ivl *e = &cu->funcs.v.v[i];
		put64(b, e->lo);
		put64(b, e->hi);
		put32(b, e->val);
		put32(b, e->rank);
	}
	put32(b, (uint32_t)cu->offs.n);
	for (size_t i = 0; i < cu->offs.n; i++)
		put64(b, cu->offs.v[i]);
	put32(b, cu->bodies);
	const tf_sym_lines *l = &cu->lines;
	uint32_t lines = !cu->lines_state ? 0 : cu->lines_state > 0 && l->lazy ? 1 : 2;
	put32(b, lines);
	if (lines == 1) {
		put32(b, (uint32_t)l->seqs.n);
		for (size_t i = 0; i < l->seqs.n; i++) {
			const tf_sym_seq *q = &l->seqs.v[i];
			put64(b, q->lo);
			put64(b, q->hi);
			put32(b, q->off);
			put32(b, q->ck);
			put32(b, q->nck);
			put32(b, q->ordered);
		}
		put32(b, (uint32_t)l->cks.n);
		for (size_t i = 0; i < l->cks.n; i++) {
			const tf_sym_ck *q = &l->cks.v[i];
			put64(b, q->addr);
			put32(b, q->off);
			put32(b, q->file);
			put32(b, q->line);
		}
	}
	k.rec = (const uint8_t *)k.own.ptr;
	k.len = k.own.len;
	k.fresh = true;
	uint64_t h = tf_hash_u64(k.off);
	uint32_t at = tf_htab_find(&c->cu_index, h, kept_cu_eq, c, &k.off);
	if (at != TF_HTAB_NONE) {
		/* known before its line table was read: now with it */
		tf_buf_free(&c->cus.v[at].own);
		c->cus.v[at] = k;
	} else {
		tf_vec_push(&c->cus, k);
		tf_htab_insert(&c->cu_index, h, (uint32_t)c->cus.n - 1);
	}
	c->dirty = true;
}

bool tf_sym_pcache_get_cu(tf_sym_module *m, tf_sym_cu *cu)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || !c->cus.n)
		return false;
	uint32_t at = tf_htab_find(&c->cu_index, tf_hash_u64(cu->cu_off), kept_cu_eq, c, &cu->cu_off);
	if (at == TF_HTAB_NONE)
		return false;
	const kept_cu *k = &c->cus.v[at];
	tf_sym_lines *l = &cu->lines;
	rd r = { k->rec, k->rec + k->len, false };
	uint32_t n = rd32(&r);
	if (r.bad || n > (size_t)(r.end - r.p) / 24)
		goto bad;
	for (uint32_t i = 0; i < n; i++) {
		tf_sym_ivl e;
		e.lo = rd64(&r);
		e.hi = rd64(&r);
		e.val = rd32(&r);
		e.rank = rd32(&r);
		tf_vec_push(&cu->funcs.v, e);
	}
	uint32_t noffs = rd32(&r);
	if (r.bad || noffs > (size_t)(r.end - r.p) / 8)
		goto bad;
	for (uint32_t i = 0; i < noffs; i++)
		tf_vec_push(&cu->offs, rd64(&r));
	for (uint32_t i = 0; i < n; i++)
		if (cu->funcs.v.v[i].val >= noffs)
			goto bad;
	cu->bodies = rd32(&r) != 0;
	uint32_t lines = rd32(&r);
	if (lines == 1) {
		uint32_t nseqs = rd32(&r);
		if (r.bad || nseqs > (size_t)(r.end - r.p) / 32)
			goto bad;
		for (uint32_t i = 0; i < nseqs; i++) {
			tf_sym_seq q;
			q.lo = rd64(&r);
			q.hi = rd64(&r);
			q.off = rd32(&r);
			q.ck = rd32(&r);
			q.nck = rd32(&r);
			q.ordered = rd32(&r) != 0;
			tf_vec_push(&l->seqs, q);
		}
		uint32_t ncks = rd32(&r);
		if (r.bad || ncks > (size_t)(r.end - r.p) / 20)
			goto bad;
		for (uint32_t i = 0; i < ncks; i++) {
			tf_sym_ck q;
			q.addr = rd64(&r);
			q.off = rd32(&r);
			q.file = rd32(&r);
			q.line = rd32(&r);
			tf_vec_push(&l->cks, q);
		}
		l->scanned = true; /* checked against the program when read */
	}
	if (r.bad || r.p != r.end || lines > 2)
		goto bad;
	cu->kept = lines != 0;
	return true;
bad:
	tf_vec_free(&cu->funcs.v);
	tf_vec_free(&cu->offs);
	tf_vec_free(&l->seqs);
	tf_vec_free(&l->cks);
	l->scanned = false;
	return false;
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
/* A segment's payload: everything (`whole`), or what this run added. */
static void encode(tf_buf *b, const tf_symbolizer *s, const struct tf_sym_pcache *c, bool whole)
{
	size_t e0 = whole ? 0 : c->entries_saved, f0 = whole ? 0 : c->fns_saved;
	size_t nstrs = s->strs.strs.n;
	uint32_t *local = tf_xcalloc(nstrs + 1, sizeof(uint32_t)); /* id + 1 */
	TF_VEC(uint32_t) order = { 0 };
	tf_buf strs = TF_BUF_INIT;

#define USE(id) do { \
		uint32_t id_ = (id); \
		if (id_ != UINT32_MAX && !local[id_]) { \
			tf_vec_push(&order, id_); \
			local[id_] = (uint32_t)order.n; \
			tf_buf_put(&strs, s->strs.strs.v[id_], s->strs.lens.v[id_] + 1); \
		} \
	} while (0)
#define USE1(idp1) USE((idp1) ? (idp1) - 1 : UINT32_MAX)
	for (size_t i = e0; i < c->entries.n; i++) {
		for (uint32_t k = 0; k < c->entries.v[i].n; k++) {
			const pc_frame *f = &c->frames.v[c->entries.v[i].off + k];
			USE(f->fn);
			USE(f->sys);
			USE1(f->file);
		}
	}
	for (size_t i = f0; i < c->fns.n; i++) {
		const tf_sym_kept_fn *f = &c->fns.v[i];
		USE1(f->name);
		for (size_t k = 0; k < f->ranges.n; k++)
			USE1(f->ranges.v[k].sym);
		for (size_t k = 0; k < f->nodes.n; k++) {
			USE1(f->nodes.v[k].name);
			USE1(f->nodes.v[k].call_file);
		}
		for (size_t k = 0; k < f->rows.n; k++)
			USE1(f->rows.v[k].file & ~TF_SYM_ROW_END);
	}
#undef USE1
#undef USE
	put32(b, (uint32_t)(int32_t)c->has_fp);
	put32(b, (uint32_t)order.n);
	put32(b, (uint32_t)strs.len);
	tf_buf_put(b, strs.ptr, strs.len);
	put32(b, (uint32_t)(c->entries.n - e0));
	for (size_t i = e0; i < c->entries.n; i++) {
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
	/* string fields: local index + 1, 0 for none */
#define SID(idp1) ((idp1) ? local[(idp1) - 1] : 0)
	put32(b, (uint32_t)(c->fns.n - f0));
	for (size_t i = f0; i < c->fns.n; i++) {
		const tf_sym_kept_fn *f = &c->fns.v[i];
		put32(b, SID(f->name));
		put32(b, f->linkage);
		put32(b, (uint32_t)f->decl_line);
		put32(b, (uint32_t)f->ranges.n);
		for (size_t k = 0; k < f->ranges.n; k++) {
			put64(b, f->ranges.v[k].lo);
			put64(b, f->ranges.v[k].hi);
			put32(b, SID(f->ranges.v[k].sym));
		}
		put32(b, (uint32_t)f->nodes.n);
		for (size_t k = 0; k < f->nodes.n; k++) {
			const tf_sym_kept_node *d = &f->nodes.v[k];
			put32(b, (uint32_t)d->parent);
			put32(b, (uint32_t)(d->block | d->has_pc << 1 | d->linkage << 2));
			put32(b, d->ranges_off);
			put32(b, d->nranges);
			put32(b, SID(d->name));
			put32(b, (uint32_t)d->decl_line);
			put32(b, SID(d->call_file));
			put32(b, (uint32_t)d->call_line);
		}
		put32(b, (uint32_t)f->node_ranges.n);
		for (size_t k = 0; k < f->node_ranges.n; k++) {
			put64(b, f->node_ranges.v[k].lo);
			put64(b, f->node_ranges.v[k].hi);
		}
		put32(b, (uint32_t)f->rows.n);
		for (size_t k = 0; k < f->rows.n; k++) {
			const tf_sym_row *w = &f->rows.v[k];
			put64(b, w->addr);
			put32(b, w->line);
			put32(b, SID(w->file & ~TF_SYM_ROW_END) | (w->file & TF_SYM_ROW_END));
		}
	}
#undef SID
	size_t ncus = 0;
	for (size_t i = 0; i < c->cus.n; i++)
		ncus += whole || c->cus.v[i].fresh;
	put32(b, (uint32_t)ncus);
	for (size_t i = 0; i < c->cus.n; i++) {
		if (!whole && !c->cus.v[i].fresh)
			continue;
		put64(b, c->cus.v[i].off);
		put32(b, (uint32_t)c->cus.v[i].len);
		tf_buf_put(b, c->cus.v[i].rec, c->cus.v[i].len);
	}
	if (c->have_aranges && (whole || c->aranges_fresh)) {
		put32(b, (uint32_t)c->aranges.n);
		for (size_t i = 0; i < c->aranges.n; i++) {
			put64(b, c->aranges.v[i].start);
			put64(b, c->aranges.v[i].cu);
		}
		put64(b, c->aranges_end);
	} else {
		put32(b, UINT32_MAX);
	}
	size_t k0 = whole ? 0 : c->no_names_saved;
	put32(b, (uint32_t)(c->no_names.n - k0));
	for (size_t i = k0; i < c->no_names.n; i++)
		put64(b, c->no_names.v[i]);
	free(local);
	tf_vec_free(&order);
	tf_buf_free(&strs);
}

/* Frame a payload as a segment: magic, length, checksum, payload. */
static void segment(tf_buf *out, const tf_buf *payload)
{
	put32(out, PC_SEGMENT);
	put32(out, (uint32_t)payload->len);
	put64(out, segment_sum((const uint8_t *)payload->ptr, payload->len));
	tf_buf_put(out, payload->ptr, payload->len);
}

/* Append one segment with one write; false when it could not be (the
 * file is gone, or the write fell short: its segment is torn, and the
 * next run that reads it writes the file whole). */
static bool append_segment(const char *path, const tf_buf *seg)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return false;
	ssize_t w;
	do
		w = write(fd, seg->ptr, seg->len);
	while (w < 0 && errno == EINTR);
	bool ok = w == (ssize_t)seg->len;
	if (close(fd) != 0)
		ok = false;
	return ok;
}

void tf_symbolizer_save(tf_symbolizer *s)
{
	tf_buf payload = TF_BUF_INIT, b = TF_BUF_INIT;
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
		bool whole = !c->segments || c->torn || c->segments >= PC_SEGMENTS_MAX;
		bool ok;
		tf_buf_clear(&payload);
		tf_buf_clear(&b);
		encode(&payload, s, c, whole);
		if (whole) {
			tf_buf_grow(&b, payload.len + 64);
			header(&b, s);
			segment(&b, &payload);
			ok = tf_file_write_atomic(c->path, b.ptr, b.len) == 0;
		} else {
			segment(&b, &payload);
			ok = append_segment(c->path, &b);
		}
		if (!ok)
			continue;
		c->segments = whole ? 1 : c->segments + 1;
		c->torn = false;
		c->entries_saved = c->entries.n;
		c->fns_saved = c->fns.n;
		for (size_t k = 0; k < c->cus.n; k++)
			c->cus.v[k].fresh = false;
		c->aranges_fresh = false;
		c->no_names_saved = c->no_names.n;
		c->dirty = false;
		s->stats.symcache_saved++;
	}
	tf_error_clear();
	free(dir);
	tf_buf_free(&payload);
	tf_buf_free(&b);
}

void tf_sym_pcache_free(struct tf_sym_pcache *c)
{
	if (!c)
		return;
	free(c->path);
	for (size_t i = 0; i < c->fns.n; i++)
		tf_sym_kept_fn_free(&c->fns.v[i]);
	tf_vec_free(&c->fns);
	tf_sym_ivls_free(&c->fn_index);
	free_cus(c);
	if (c->map)
		munmap(c->map, c->map_len);
	tf_vec_free(&c->entries);
	tf_vec_free(&c->frames);
	tf_htab_free(&c->index);
	tf_vec_free(&c->aranges);
	tf_vec_free(&c->no_names);
	free(c);
}

const tf_sym_arange *tf_sym_pcache_aranges(const tf_sym_module *m, size_t *n, uint64_t *end)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || !c->have_aranges)
		return NULL;
	*n = c->aranges.n;
	*end = c->aranges_end;
	return c->aranges.v;
}

void tf_sym_pcache_put_aranges(tf_sym_module *m, const tf_sym_arange *v, size_t n, uint64_t end)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || c->have_aranges)
		return;
	c->aranges.n = 0;
	for (size_t i = 0; i < n; i++)
		tf_vec_push(&c->aranges, v[i]);
	c->aranges_end = end;
	c->have_aranges = c->aranges_fresh = c->dirty = true;
}

bool tf_sym_pcache_no_names(const tf_sym_module *m, uint64_t key)
{
	const struct tf_sym_pcache *c = m->pc;
	for (size_t i = 0; c && i < c->no_names.n; i++)
		if (c->no_names.v[i] == key)
			return true;
	return false;
}

void tf_sym_pcache_put_no_names(tf_sym_module *m, uint64_t key)
{
	struct tf_sym_pcache *c = m->pc;
	if (!c || tf_sym_pcache_no_names(m, key) || c->no_names.n >= 64)
		return;
	tf_vec_push(&c->no_names, key);
	c->dirty = true;
}
