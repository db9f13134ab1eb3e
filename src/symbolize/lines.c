/*
 * lines.c - a compilation unit's line table, read from .debug_line
 * (DWARF 2 to 5) and answered a few rows at a time.
 *
 * libdw's dwarf_getsrclines allocates a record per row and sorts all of
 * them with qsort: a C++ test file's CU holds hundreds of thousands of
 * rows (one sequence per template instance, and one for all the file's
 * own functions), and that was half the cost of symbolizing a few samples
 * in a 71 MB GoogleTest binary. Here the program is run once without
 * keeping rows: each sequence is noted with its address range and a
 * checkpoint (the registers and the program offset) every CK_EVERY rows,
 * and a lookup decodes the few rows from the last checkpoint before the
 * address: the work per address is a few dozen rows, not the CU's table.
 * A table whose sequences overlap (none seen from gcc or clang) is decoded
 * whole and stably sorted instead. A lookup answers as dwarf_getsrc_die
 * does: the last row at or before the address, unless that row ends a
 * sequence.
 *
 * Sequences at address 0 are dropped: the linker leaves discarded COMDAT
 * copies there, and a module reported at its own vaddrs has no code at 0.
 * Anything this reader does not know (a form it cannot skip, a truncated
 * header) makes it give up on the CU, and resolve.c asks libdw instead.
 */
#include "symbolize/symbolize_int.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	const uint8_t *p, *end;
	bool bad;
} cursor;

static uint64_t rd_u(cursor *c, size_t n)
{
	uint64_t v = 0;
	if ((size_t)(c->end - c->p) < n) {
		c->bad = true;
		c->p = c->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)c->p[i] << (8 * i);
	c->p += n;
	return v;
}

static uint64_t rd_uleb(cursor *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0; c->p < c->end; shift += 7) {
		uint8_t b = *c->p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = true;
	return 0;
}

static int64_t rd_sleb(cursor *c)
{
	int64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0x80;
	while (c->p < c->end && (b & 0x80)) {
		b = *c->p++;
		if (shift < 64)
			v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
		shift += 7;
	}
	if (b & 0x80) {
		c->bad = true;
		return 0;
	}
	if (shift < 64 && (b & 0x40))
		v |= -((int64_t)1 << shift);
	return v;
}

static const char *rd_cstr(cursor *c)
{
	const uint8_t *z = memchr(c->p, 0, (size_t)(c->end - c->p));
	if (!z) {
		c->bad = true;
		c->p = c->end;
		return NULL;
	}
	const char *s = (const char *)c->p;
	c->p = z + 1;
	return s;
}

bool tf_sym_dwarf_section(Dwarf *dbg, const char *name, const uint8_t **start, const uint8_t **end)
{
	Elf *elf = dwarf_getelf(dbg);
	size_t shstrndx;

	*start = *end = NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *n;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(n = elf_strptr(elf, shstrndx, sh.sh_name)) || strcmp(n, name) != 0)
			continue;
		if (sh.sh_flags & SHF_COMPRESSED)
			return false;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return false;
		*start = d->d_buf;
		*end = *start + d->d_size;
		return true;
	}
	return false;
}

static bool section(Dwarf *dbg, const char *name, cursor *out)
{
	out->bad = false;
	return tf_sym_dwarf_section(dbg, name, &out->p, &out->end);
}

static const char *str_at(const cursor *sec, uint64_t off)
{
	if (!sec->p || off >= (uint64_t)(sec->end - sec->p))
		return NULL;
	const char *s = (const char *)sec->p + off;
	return memchr(s, 0, (size_t)(sec->end - sec->p) - off) ? s : NULL;
}

typedef TF_VEC(const char *) str_vec;
typedef TF_VEC(uint64_t) u64_vec;

typedef struct {
	cursor str, line_str;
	bool have_str, have_line_str;
	Dwarf *dbg;
	uint8_t offsize;
} strings;

/* One attribute value of a DWARF 5 entry format: a string for
 * DW_LNCT_path, a number for DW_LNCT_directory_index, skipped otherwise.
 * False for a form it cannot read or skip. */
static bool rd_form(cursor *c, strings *st, uint64_t form, const char **s, uint64_t *u)
{
	*s = NULL;
	*u = 0;
	switch (form) {
	case DW_FORM_string:
		*s = rd_cstr(c);
		return *s != NULL;
	case DW_FORM_line_strp:
		if (!st->have_line_str)
			st->have_line_str = section(st->dbg, ".debug_line_str", &st->line_str);
		*s = str_at(&st->line_str, rd_u(c, st->offsize));
		return *s != NULL && !c->bad;
	case DW_FORM_strp:
		if (!st->have_str)
			st->have_str = section(st->dbg, ".debug_str", &st->str);
		*s = str_at(&st->str, rd_u(c, st->offsize));
		return *s != NULL && !c->bad;
	case DW_FORM_udata:
		*u = rd_uleb(c);
		return !c->bad;
	case DW_FORM_data1:
		*u = rd_u(c, 1);
		return !c->bad;
	case DW_FORM_data2:
		*u = rd_u(c, 2);
		return !c->bad;
	case DW_FORM_data4:
		*u = rd_u(c, 4);
		return !c->bad;
	case DW_FORM_data8:
		*u = rd_u(c, 8);
		return !c->bad;
	case DW_FORM_data16:
		rd_u(c, 8);
		rd_u(c, 8);
		return !c->bad;
	case DW_FORM_block: {
		uint64_t n = rd_uleb(c);
		if (c->bad || n > (uint64_t)(c->end - c->p))
			return false;
		c->p += n;
		return true;
	}
	default:
		return false;
	}
}

/* The directory or file table of a DWARF 5 header: `paths[i]` and, for
 * files, `dirs[i]`. */
static bool rd_v5_table(cursor *c, strings *st, str_vec *paths, u64_vec *dirs)
{
	uint64_t fmt[32][2];
	unsigned nfmt = (unsigned)rd_u(c, 1);
	if (nfmt > 32)
		return false;
	for (unsigned i = 0; i < nfmt; i++) {
		fmt[i][0] = rd_uleb(c);
		fmt[i][1] = rd_uleb(c);
	}
	uint64_t n = rd_uleb(c);
	if (c->bad || n > (uint64_t)(c->end - c->p))
		return false;
	for (uint64_t k = 0; k < n; k++) {
		const char *path = NULL;
		uint64_t dir = 0;
		for (unsigned i = 0; i < nfmt; i++) {
			const char *s;
			uint64_t u;
			if (!rd_form(c, st, fmt[i][1], &s, &u))
				return false;
			if (fmt[i][0] == DW_LNCT_path)
				path = s;
			else if (fmt[i][0] == DW_LNCT_directory_index)
				dir = u;
		}
		if (!path)
			return false;
		tf_vec_push(paths, path);
		if (dirs)
			tf_vec_push(dirs, dir);
	}
	return !c->bad;
}

static int cmp_seq(const void *x, const void *y)
{
	const uint64_t *a = x, *b = y; /* first address, then first row */
	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

struct pos_row {
	tf_sym_row r;
	size_t pos;
};

static int cmp_row_stable(const void *x, const void *y)
{
	const struct pos_row *a = x, *b = y;
	if (a->r.addr != b->r.addr)
		return a->r.addr < b->r.addr ? -1 : 1;
	/* an end of sequence before a row at the same address (as libdw),
	 * else program order */
	bool ea = a->r.file & TF_SYM_ROW_END, eb = b->r.file & TF_SYM_ROW_END;
	if (ea != eb)
		return ea ? -1 : 1;
	return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Rows by address, stably (as libdw's merge puts them). */
static void sort_rows(tf_sym_row *rows, size_t n)
{
	struct pos_row *pr = tf_xmalloc((n + 1) * sizeof(*pr));
	for (size_t i = 0; i < n; i++) {
		pr[i].r = rows[i];
		pr[i].pos = i;
	}
	qsort(pr, n, sizeof(*pr), cmp_row_stable);
	for (size_t i = 0; i < n; i++)
		rows[i] = pr[i].r;
	free(pr);
}

/* The rows of every sequence, in address order. */
static void order_rows(tf_sym_lines *l, u64_vec *seqs)
{
	size_t nseq = seqs->n / 3; /* (first address, first row, end row) */
	if (!nseq)
		return;
	qsort(seqs->v, nseq, 3 * sizeof(uint64_t), cmp_seq);
	tf_sym_row *sorted = tf_xmalloc((l->rows.n + 1) * sizeof(tf_sym_row));
	size_t n = 0;
	bool ordered = true;
	for (size_t i = 0; i < nseq; i++) {
		uint64_t a = seqs->v[3 * i + 1], z = seqs->v[3 * i + 2];
		for (uint64_t r = a; r < z; r++) {
			if (n && sorted[n - 1].addr > l->rows.v[r].addr)
				ordered = false;
			sorted[n++] = l->rows.v[r];
		}
	}
	free(l->rows.v);
	l->rows.v = sorted;
	l->rows.n = n;
	l->rows.cap = n + 1;
	if (!ordered)
		sort_rows(sorted, n); /* overlapping sequences */
}

enum { SCAN, ALL, FROM };

#define CK_EVERY 32 /* rows between two checkpoints of a sequence */

static bool index_seqs(tf_sym_lines *l);

/* Where the program runs from, and the registers there. */
typedef struct {
	const uint8_t *p;
	uint64_t addr;
	uint32_t file, line;
} prog_state;

/*
 * Run the line number program from `at`. SCAN notes each sequence (its
 * first and end addresses, whether its rows go up, where it starts) in
 * l->seqs, with a checkpoint at every CK_EVERY-th row in l->cks; ALL
 * appends every row to l->rows and each sequence's (first address, first
 * row, end row) to `seqs`; FROM (`at` a checkpoint, its row already
 * emitted) appends the rows of the sequence below `stop` to l->rows, the
 * checkpoint's own row first, and stops at the first row at or past it.
 */
static bool run_program(tf_sym_lines *l, prog_state at, int mode, u64_vec *seqs, uint64_t stop)
{
	const tf_sym_prog *g = &l->prog;
	cursor c = { at.p, g->end, false };
	const uint8_t *seq_at = at.p;
	uint64_t addr = at.addr, first = 0, prev = 0, seq_start = l->rows.n;
	uint32_t file = at.file, line = at.line, nrows = 0, ck = (uint32_t)l->cks.n;
	bool ordered = true;

	if (mode == FROM) {
		if (addr >= stop)
			return true;
		tf_sym_row r = { addr, line, file & ~TF_SYM_ROW_END };
		tf_vec_push(&l->rows, r);
	}
	while (c.p < c.end && !c.bad) {
		unsigned op = *c.p++;
		bool emit = false, end = false;
		if (op >= g->opcode_base) {
			unsigned adj = op - g->opcode_base;
			addr += (uint64_t)(adj / g->line_range) * g->min_inst;
			line += (uint32_t)(g->line_base + (int)(adj % g->line_range));
			emit = true;
		} else if (op == 0) {
			uint64_t len = rd_uleb(&c);
			if (c.bad || !len || len > (uint64_t)(c.end - c.p))
				return false;
			const uint8_t *next = c.p + len;
			unsigned ext = *c.p++;
			if (ext == DW_LNE_end_sequence) {
				emit = end = true;
			} else if (ext == DW_LNE_set_address) {
				size_t n = (size_t)(next - c.p);
				if (n != 4 && n != 8 && n != g->addr_size)
					return false;
				addr = rd_u(&c, n);
			}
			c.p = next;
		} else {
			switch (op) {
			case DW_LNS_copy:
				emit = true;
				break;
			case DW_LNS_advance_pc:
				addr += rd_uleb(&c) * g->min_inst;
				break;
			case DW_LNS_advance_line:
				line += (uint32_t)rd_sleb(&c);
				break;
			case DW_LNS_set_file:
				file = (uint32_t)rd_uleb(&c);
				break;
			case DW_LNS_const_add_pc:
				addr += (uint64_t)((255 - g->opcode_base) / g->line_range) * g->min_inst;
				break;
			case DW_LNS_fixed_advance_pc:
				addr += rd_u(&c, 2);
				break;
			default:
				/* set_column, negate_stmt, set_basic_block,
				 * prologue/epilogue, set_isa, and any unknown one:
				 * skip their operands */
				for (unsigned i = 0; i < g->std_len[op]; i++)
					rd_uleb(&c);
				break;
			}
		}
		if (!emit)
			continue;
		if (mode == FROM && addr >= stop)
			return true;
		if (mode != SCAN) {
			tf_sym_row r = { addr, line, (file & ~TF_SYM_ROW_END) | (end ? TF_SYM_ROW_END : 0) };
			tf_vec_push(&l->rows, r);
		} else {
			if (!nrows)
				first = addr;
			else if (addr < prev)
				ordered = false;
			prev = addr;
			if (nrows % CK_EVERY == 0 && !end) {
				if ((uint64_t)(c.p - g->start) > UINT32_MAX)
					return false;
				tf_sym_ck k = { addr, (uint32_t)(c.p - g->start), file, line };
				tf_vec_push(&l->cks, k);
			}
			nrows++;
		}
		if (!end)
			continue;
		if (mode == FROM)
			return true;
		if (mode == SCAN) {
			/* sequences at 0: discarded COMDAT copies */
			if (first != 0 && (uint64_t)(seq_at - g->start) <= UINT32_MAX) {
				tf_sym_seq q = { first, addr, (uint32_t)(seq_at - g->start), ck,
						 (uint32_t)l->cks.n - ck, ordered };
				tf_vec_push(&l->seqs, q);
			}
			ck = (uint32_t)l->cks.n;
			nrows = 0;
			ordered = true;
		} else if (l->rows.v[seq_start].addr != 0) {
			tf_vec_push(seqs, l->rows.v[seq_start].addr);
			tf_vec_push(seqs, seq_start);
			tf_vec_push(seqs, (uint64_t)l->rows.n);
		}
		seq_start = l->rows.n;
		seq_at = c.p;
		addr = 0;
		file = 1;
		line = 1;
	}
	return !c.bad;
}

/* Whether a kept index can be this program's: sequences in order, each
 * one's checkpoints its own and within the program. */
static bool kept_fits(const tf_sym_lines *l)
{
	size_t len = (size_t)(l->prog.end - l->prog.start);
	for (size_t i = 0; i < l->seqs.n; i++) {
		const tf_sym_seq *q = &l->seqs.v[i];
		if ((i && l->seqs.v[i - 1].hi > q->lo) || q->hi < q->lo ||
		    (uint64_t)q->ck + q->nck > l->cks.n || (q->hi > q->lo && !q->nck))
			return false;
	}
	for (size_t i = 0; i < l->cks.n; i++)
		if (l->cks.v[i].off > len)
			return false;
	return true;
}

bool tf_sym_lines_read(tf_sym_lines *l, Dwarf_Die *cudie)
{
	Dwarf_Attribute mem, *a = dwarf_attr(cudie, DW_AT_stmt_list, &mem);
	Dwarf_Word off;
	strings st;
	cursor sec, c;
	str_vec dirs = { 0 }, fnames = { 0 };
	u64_vec fdirs = { 0 }, seqs = { 0 };
	bool ok = false;

	memset(&st, 0, sizeof(st));
	st.dbg = dwarf_cu_getdwarf(cudie->cu);
	if (!a || dwarf_formudata(a, &off) != 0 || !section(st.dbg, ".debug_line", &sec) ||
	    off >= (uint64_t)(sec.end - sec.p))
		return false;
	c.p = sec.p + off;
	c.end = sec.end;
	c.bad = false;

	uint64_t unit_len = rd_u(&c, 4);
	st.offsize = 4;
	if (unit_len == 0xffffffff) {
		unit_len = rd_u(&c, 8);
		st.offsize = 8;
	}
	if (c.bad || unit_len > (uint64_t)(c.end - c.p))
		return false;
	c.end = c.p + unit_len;
	unsigned version = (unsigned)rd_u(&c, 2);
	if (version < 2 || version > 5)
		return false;
	unsigned addr_size = 8;
	if (version >= 5) {
		addr_size = (unsigned)rd_u(&c, 1);
		rd_u(&c, 1); /* segment selector size */
	}
	uint64_t header_len = rd_u(&c, st.offsize);
	if (c.bad || header_len > (uint64_t)(c.end - c.p))
		return false;
	const uint8_t *program = c.p + header_len;
	unsigned min_inst = (unsigned)rd_u(&c, 1);
	if (version >= 4)
		rd_u(&c, 1); /* maximum operations per instruction (VLIW) */
	rd_u(&c, 1);         /* default is_stmt: libdw's lookup ignores it */
	int line_base = (int8_t)rd_u(&c, 1);
	unsigned line_range = (unsigned)rd_u(&c, 1);
	unsigned opcode_base = (unsigned)rd_u(&c, 1);
	uint8_t std_len[256];
	if (c.bad || !line_range || !opcode_base)
		return false;
	for (unsigned i = 1; i < opcode_base; i++)
		std_len[i] = (uint8_t)rd_u(&c, 1);

	if (version >= 5) {
		if (!rd_v5_table(&c, &st, &dirs, NULL) || !rd_v5_table(&c, &st, &fnames, &fdirs))
			goto done;
	} else {
		/* directory 0 is the CU's compilation directory; file 0 a
		 * placeholder, as libdw numbers them */
		Dwarf_Attribute cm, *ca = dwarf_attr(cudie, DW_AT_comp_dir, &cm);
		tf_vec_push(&dirs, ca ? dwarf_formstring(ca) : NULL);
		for (;;) {
			const char *d = rd_cstr(&c);
			if (!d || !*d)
				break;
			tf_vec_push(&dirs, d);
		}
		tf_vec_push(&fnames, "???");
		tf_vec_push(&fdirs, 0);
		for (;;) {
			const char *f = rd_cstr(&c);
			if (!f || !*f)
				break;
			tf_vec_push(&fnames, f);
			tf_vec_push(&fdirs, rd_uleb(&c));
			rd_uleb(&c); /* mtime */
			rd_uleb(&c); /* length */
		}
	}
	if (c.bad || program > c.end || !fnames.n)
		goto done;
	for (size_t i = 0; i < fnames.n; i++) {
		tf_sym_file_name fn = { fnames.v[i], NULL, UINT32_MAX };
		if (fnames.v[i][0] != '/' && fdirs.v[i] < dirs.n)
			fn.dir = dirs.v[fdirs.v[i]];
		tf_vec_push(&l->files, fn);
	}

	l->prog.end = c.end;
	l->prog.addr_size = addr_size;
	l->prog.min_inst = min_inst;
	l->prog.line_base = line_base;
	l->prog.line_range = line_range;
	l->prog.opcode_base = opcode_base;
	memcpy(l->prog.std_len, std_len, sizeof(std_len));
	l->prog.start = program;
	/* the sequences first, no rows: most CUs are met for one address or
	 * a few, and their rows are decoded one sequence at a time */
	prog_state at = { program, 0, 1, 1 };
	if (l->scanned && kept_fits(l)) {
		/* the index kept in the symbol cache from an earlier run */
		l->lazy = true;
		ok = true;
		goto done;
	}
	l->seqs.n = 0;
	l->cks.n = 0;
	if (!run_program(l, at, SCAN, NULL, 0))
		goto done;
	if (!index_seqs(l)) {
		/* overlapping sequences: every row, merged and sorted */
		l->seqs.n = 0;
		l->cks.n = 0;
		if (!run_program(l, at, ALL, &seqs, 0))
			goto done;
		order_rows(l, &seqs);
	}
	ok = true;
done:
	if (!ok) {
		tf_vec_free(&l->rows);
		tf_vec_free(&l->files);
		tf_vec_free(&l->seqs);
		tf_vec_free(&l->cks);
	}
	tf_vec_free(&dirs);
	tf_vec_free(&fnames);
	tf_vec_free(&fdirs);
	tf_vec_free(&seqs);
	return ok;
}

/* The sequences found by SCAN sorted by address; false when two overlap
 * (then only a merge of all rows answers as libdw does). A sequence of no
 * code (its end at its start) sorts before one starting there. */
static int cmp_lazy_seq(const void *x, const void *y)
{
	const tf_sym_seq *a = x, *b = y;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static bool index_seqs(tf_sym_lines *l)
{
	if (l->seqs.n) /* a CU may have no code */
		qsort(l->seqs.v, l->seqs.n, sizeof(tf_sym_seq), cmp_lazy_seq);
	for (size_t i = 1; i < l->seqs.n; i++)
		if (l->seqs.v[i - 1].hi > l->seqs.v[i].lo)
			return false;
	l->lazy = true;
	return true;
}

/* The last of rows[0, n) at or before pc: its index + 1, 0 if none. */
static size_t row_before(const tf_sym_row *rows, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (rows[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * Into l->rows (emptied), in address order: the rows of the sequence
 * holding pc from the last checkpoint at or before `from` up to the
 * last row below `stop` (a sequence going back: all its rows, sorted
 * as the merge would put them). False when no sequence holds `from`.
 */
static bool decode_rows(tf_sym_lines *l, uint64_t from, uint64_t stop)
{
	size_t lo = 0, hi = l->seqs.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->seqs.v[mid].lo <= from)
			lo = mid + 1;
		else
			hi = mid;
	}
	l->rows.n = 0;
	if (!lo || from >= l->seqs.v[lo - 1].hi)
		return false;
	const tf_sym_seq *q = &l->seqs.v[lo - 1];
	const tf_sym_ck *k = &l->cks.v[q->ck];
	if (!q->ordered) {
		stop = UINT64_MAX;
	} else {
		size_t a = 1, z = q->nck; /* the first is at q->lo, at or before */
		while (a < z) {
			size_t mid = a + (z - a) / 2;
			if (k[mid].addr <= from)
				a = mid + 1;
			else
				z = mid;
		}
		k += a - 1;
	}
	prog_state at = { l->prog.start + k->off, k->addr, k->file, k->line };
	if (!run_program(l, at, FROM, NULL, stop))
		return false;
	size_t n = l->rows.n;
	if (!q->ordered)
		sort_rows(l->rows.v, n);
	return true;
}

const tf_sym_row *tf_sym_lines_find(tf_sym_lines *l, uint64_t pc)
{
	if (l->lazy && !decode_rows(l, pc, pc + 1))
		return NULL;
	size_t at = row_before(l->rows.v, l->rows.n, pc);
	if (!at || (l->rows.v[at - 1].file & TF_SYM_ROW_END))
		return NULL;
	return &l->rows.v[at - 1];
}

size_t tf_sym_lines_span(tf_sym_lines *l, uint64_t lo, uint64_t hi, const tf_sym_row **out)
{
	if (l->lazy) {
		if (!decode_rows(l, lo, hi))
			return 0;
		/* the sequence ends before hi: not asked today */
		if (!l->rows.n || (l->rows.v[l->rows.n - 1].file & TF_SYM_ROW_END))
			return 0;
	}
	size_t a = row_before(l->rows.v, l->rows.n, lo), z = a;
	a = a ? a - 1 : 0;
	while (z < l->rows.n && l->rows.v[z].addr < hi)
		z++;
	*out = l->rows.v + a;
	return z - a;
}

const char *tf_sym_lines_file(tf_symbolizer *s, tf_sym_lines *l, uint32_t file)
{
	file &= ~TF_SYM_ROW_END;
	if (file >= l->files.n)
		return NULL;
	tf_sym_file_name *f = &l->files.v[file];
	if (f->id == UINT32_MAX) {
		if (f->dir) {
			char *full = tf_xasprintf("%s/%s", f->dir, f->name);
			f->id = tf_strtab_intern(&s->strs, full, strlen(full));
			free(full);
		} else {
			f->id = tf_strtab_intern(&s->strs, f->name, strlen(f->name));
		}
	}
	return s->strs.strs.v[f->id];
}

void tf_sym_lines_free(tf_sym_lines *l)
{
	tf_vec_free(&l->rows);
	tf_vec_free(&l->seqs);
	tf_vec_free(&l->cks);
	tf_vec_free(&l->files);
}
