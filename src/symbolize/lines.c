/*
 * lines.c - a compilation unit's line table, read from .debug_line into
 * a flat array of rows sorted by address (DWARF 2 to 5).
 *
 * libdw's dwarf_getsrclines allocates a record per row and sorts all of
 * them with qsort: a C++ test file's CU holds hundreds of thousands of
 * rows (one sequence per template instance), and that sort was half the
 * cost of symbolizing a few samples in a 71 MB GoogleTest binary. Rows
 * within a sequence are already in address order, so here the sequences
 * are sorted by their first address and the rows only checked; a table
 * whose sequences overlap (none seen from gcc or clang) gets a stable
 * sort. A lookup answers as dwarf_getsrc_die does: the last row at or
 * before the address, unless that row ends a sequence.
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

/* A section's bytes, by name, from the ELF file libdw reads the DWARF
 * from (decompressed by libdw when it opened it). */
static bool section(Dwarf *dbg, const char *name, cursor *out)
{
	Elf *elf = dwarf_getelf(dbg);
	size_t shstrndx;

	memset(out, 0, sizeof(*out));
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
		out->p = d->d_buf;
		out->end = out->p + d->d_size;
		return true;
	}
	return false;
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
	if (!ordered) {
		/* overlapping sequences: a stable sort */
		struct pos_row *pr = tf_xmalloc((n + 1) * sizeof(*pr));
		for (size_t i = 0; i < n; i++) {
			pr[i].r = sorted[i];
			pr[i].pos = i;
		}
		qsort(pr, n, sizeof(*pr), cmp_row_stable);
		for (size_t i = 0; i < n; i++)
			sorted[i] = pr[i].r;
		free(pr);
	}
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

	/* the line number program */
	c.p = program;
	uint64_t addr = 0, seq_start = l->rows.n;
	uint32_t file = 1, line = 1;
	while (c.p < c.end && !c.bad) {
		unsigned op = *c.p++;
		bool emit = false, end = false;
		if (op >= opcode_base) {
			unsigned adj = op - opcode_base;
			addr += (uint64_t)(adj / line_range) * min_inst;
			line += (uint32_t)(line_base + (int)(adj % line_range));
			emit = true;
		} else if (op == 0) {
			uint64_t len = rd_uleb(&c);
			if (c.bad || !len || len > (uint64_t)(c.end - c.p))
				goto done;
			const uint8_t *next = c.p + len;
			unsigned ext = *c.p++;
			if (ext == DW_LNE_end_sequence) {
				emit = end = true;
			} else if (ext == DW_LNE_set_address) {
				size_t n = (size_t)(next - c.p);
				if (n != 4 && n != 8 && n != addr_size)
					goto done;
				addr = rd_u(&c, n);
			}
			c.p = next;
		} else {
			switch (op) {
			case DW_LNS_copy:
				emit = true;
				break;
			case DW_LNS_advance_pc:
				addr += rd_uleb(&c) * min_inst;
				break;
			case DW_LNS_advance_line:
				line += (uint32_t)rd_sleb(&c);
				break;
			case DW_LNS_set_file:
				file = (uint32_t)rd_uleb(&c);
				break;
			case DW_LNS_const_add_pc:
				addr += (uint64_t)((255 - opcode_base) / line_range) * min_inst;
				break;
			case DW_LNS_fixed_advance_pc:
				addr += rd_u(&c, 2);
				break;
			default:
				/* set_column, negate_stmt, set_basic_block,
				 * prologue/epilogue, set_isa, and any unknown one:
				 * skip their operands */
				for (unsigned i = 0; i < std_len[op]; i++)
					rd_uleb(&c);
				break;
			}
		}
		if (!emit)
			continue;
		tf_sym_row r = { addr, line, (file & ~TF_SYM_ROW_END) | (end ? TF_SYM_ROW_END : 0) };
		tf_vec_push(&l->rows, r);
		if (end) {
			uint64_t first = l->rows.v[seq_start].addr;
			if (first != 0) {
				tf_vec_push(&seqs, first);
				tf_vec_push(&seqs, seq_start);
				tf_vec_push(&seqs, (uint64_t)l->rows.n);
			}
			seq_start = l->rows.n;
			addr = 0;
			file = 1;
			line = 1;
		}
	}
	if (c.bad)
		goto done;
	order_rows(l, &seqs);
	ok = true;
done:
	if (!ok) {
		tf_vec_free(&l->rows);
		tf_vec_free(&l->files);
	}
	tf_vec_free(&dirs);
	tf_vec_free(&fnames);
	tf_vec_free(&fdirs);
	tf_vec_free(&seqs);
	return ok;
}

const tf_sym_row *tf_sym_lines_find(const tf_sym_lines *l, uint64_t pc)
{
	size_t lo = 0, hi = l->rows.n;
	/* the last row at or before pc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l->rows.v[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || (l->rows.v[lo - 1].file & TF_SYM_ROW_END))
		return NULL;
	return &l->rows.v[lo - 1];
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
	tf_vec_free(&l->files);
}
