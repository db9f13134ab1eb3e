/*
 * gopclntab.c - function names and lines of Go binaries from Go's own
 * runtime table, .gopclntab.
 *
 * `go test` and `go run` link their binaries with -s -w: no symbol table,
 * no DWARF. What remains is the table the Go runtime itself uses for stack
 * traces: every function's entry, name, file and pc-to-line program. Reading
 * it is what lets testflame name Go test functions (and the testing.tRunner
 * frame that marks them) in a suite run with plain `go test`, where a
 * symbol-table-only profiler sees bare addresses.
 *
 * Layouts (the header's magic): 0xfffffffa Go 1.16-1.17, 0xfffffff0 Go
 * 1.18-1.19, 0xfffffff1 Go 1.20 and later (the function record grows a
 * start line). Older tables are left alone.
 */
#include "symbolize_int.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

struct tf_sym_go {
	const uint8_t *data;
	size_t size;
	int version;          /* 116, 118, 120 */
	unsigned ptrsize, quantum;
	uint64_t nfunc;
	uint64_t text_start;  /* 1.18+: entries are offsets from it */
	const uint8_t *funcnames, *cutab, *filetab, *pctab, *functab;
	size_t funcnames_len, cutab_len, filetab_len, pctab_len, functab_len;
};

static uint64_t rd(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	memcpy(&v, p, n); /* little-endian hosts and targets (x86-64) */
	return v;
}

static const char *section_named(Elf *elf, const char *want, size_t *len, uint64_t *addr)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, want) != 0)
			continue;
		if (addr)
			*addr = sh.sh_addr;
		if (sh.sh_type == SHT_NOBITS)
			return NULL;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return NULL;
		*len = d->d_size;
		return d->d_buf;
	}
	return NULL;
}

/* A sub-table at header offset `off`, bounded by the section. */
static bool sub(const tf_sym_go *g, uint64_t off, const uint8_t **p, size_t *len)
{
	if (off >= g->size)
		return false;
	*p = g->data + off;
	*len = g->size - off;
	return true;
}

tf_sym_go *tf_sym_go_open(Elf *elf)
{
	size_t size = 0, tl;
	uint64_t text = 0;
	const uint8_t *d = (const uint8_t *)section_named(elf, ".gopclntab", &size, NULL);

	if (!d)
		return NULL;
	/* a PIE's header holds the text address only after relocation */
	section_named(elf, ".text", &tl, &text);
	return tf_sym_go_parse(d, size, text);
}

tf_sym_go *tf_sym_go_parse(const uint8_t *d, size_t size, uint64_t text)
{
	tf_sym_go *g;
	uint32_t magic;

	if (size < 64)
		return NULL;
	magic = (uint32_t)rd(d, 4);
	g = tf_xcalloc(1, sizeof(*g));
	g->data = d;
	g->size = size;
	g->quantum = d[6];
	g->ptrsize = d[7];
	if (g->ptrsize != 8 || !g->quantum)
		goto bad;
	const uint8_t *h = d + 8;
	unsigned ps = g->ptrsize;
	switch (magic) {
	case 0xfffffff0u:
	case 0xfffffff1u:
		g->version = magic == 0xfffffff1u ? 120 : 118;
		if (size < 8 + 8 * ps)
			goto bad;
		g->nfunc = rd(h, ps);
		g->text_start = rd(h + 2 * ps, ps);
		if (!sub(g, rd(h + 3 * ps, ps), &g->funcnames, &g->funcnames_len) ||
		    !sub(g, rd(h + 4 * ps, ps), &g->cutab, &g->cutab_len) ||
		    !sub(g, rd(h + 5 * ps, ps), &g->filetab, &g->filetab_len) ||
		    !sub(g, rd(h + 6 * ps, ps), &g->pctab, &g->pctab_len) ||
		    !sub(g, rd(h + 7 * ps, ps), &g->functab, &g->functab_len))
			goto bad;
		if (!g->text_start)
			g->text_start = text;
		/* nfunc + 1 entries of 8 bytes (the count comes from the file:
		 * compared by division, it cannot overflow) */
		if (g->nfunc >= g->functab_len / 8)
			goto bad;
		break;
	case 0xfffffffau:
		g->version = 116;
		if (size < 8 + 7 * ps)
			goto bad;
		g->nfunc = rd(h, ps);
		if (!sub(g, rd(h + 2 * ps, ps), &g->funcnames, &g->funcnames_len) ||
		    !sub(g, rd(h + 3 * ps, ps), &g->cutab, &g->cutab_len) ||
		    !sub(g, rd(h + 4 * ps, ps), &g->filetab, &g->filetab_len) ||
		    !sub(g, rd(h + 5 * ps, ps), &g->pctab, &g->pctab_len) ||
		    !sub(g, rd(h + 6 * ps, ps), &g->functab, &g->functab_len))
			goto bad;
		if (g->nfunc >= g->functab_len / (2 * ps))
			goto bad;
		break;
	default:
		goto bad;
	}
	return g;
bad:
	free(g);
	return NULL;
}

void tf_sym_go_free(tf_sym_go *g)
{
	free(g);
}

size_t tf_sym_go_nfuncs(const tf_sym_go *g)
{
	return (size_t)g->nfunc;
}

/* Entry of function i (i == nfunc: the end of the last one). */
static uint64_t entry_of(const tf_sym_go *g, size_t i)
{
	if (g->version >= 118)
		return g->text_start + rd(g->functab + i * 8, 4);
	return rd(g->functab + i * 16, 8);
}

/* The function record of function i, or NULL. */
static const uint8_t *func_of(const tf_sym_go *g, size_t i)
{
	uint64_t off = g->version >= 118 ? rd(g->functab + i * 8 + 4, 4)
					 : rd(g->functab + i * 16 + 8, 8);
	if (g->functab_len < 48 || off > g->functab_len - 48) /* off + 48 may wrap */
		return NULL;
	return g->functab + off;
}

static const char *cstr(const uint8_t *base, size_t len, uint64_t off)
{
	if (off >= len || !memchr(base + off, '\0', len - off))
		return NULL;
	return (const char *)base + off;
}

bool tf_sym_go_func(const tf_sym_go *g, size_t i, uint64_t *entry, uint64_t *end,
		    const char **name)
{
	const uint8_t *f;
	if (i >= g->nfunc || !(f = func_of(g, i)))
		return false;
	*entry = entry_of(g, i);
	*end = entry_of(g, i + 1);
	/* nameOff follows the entry (u32 since 1.18, a pointer before) */
	int32_t nameoff = (int32_t)rd(f + (g->version >= 118 ? 4 : 8), 4);
	*name = nameoff >= 0 ? cstr(g->funcnames, g->funcnames_len, (uint64_t)nameoff) : NULL;
	return *name && *end > *entry;
}

static bool varint(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
	uint32_t v = 0;
	for (unsigned shift = 0; shift < 35; shift += 7) {
		if (*p >= end)
			return false;
		uint8_t b = *(*p)++;
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return true;
		}
	}
	return false;
}

/* Run a pc-value program from `off` for a function entered at `entry`;
 * the value in effect at `pc`, or -1. */
static int32_t pcvalue(const tf_sym_go *g, uint32_t off, uint64_t entry, uint64_t pc)
{
	const uint8_t *p, *end = g->pctab + g->pctab_len;
	uint64_t at = entry;
	int32_t val = -1;
	bool first = true;

	if (!off || off >= g->pctab_len)
		return -1;
	p = g->pctab + off;
	for (;;) {
		uint32_t uvdelta, pcdelta;
		if (!varint(&p, end, &uvdelta) || (uvdelta == 0 && !first))
			return -1;
		first = false;
		/* zig-zag delta, added modulo 2^32 as Go's own reader does (a
		 * corrupt table must not make it signed overflow) */
		val = (int32_t)((uint32_t)val + (-(uvdelta & 1) ^ (uvdelta >> 1)));
		if (!varint(&p, end, &pcdelta))
			return -1;
		at += (uint64_t)pcdelta * g->quantum;
		if (pc < at)
			return val;
	}
}

static size_t find_func(const tf_sym_go *g, uint64_t pc)
{
	size_t lo = 0, hi = (size_t)g->nfunc;
	if (!hi || pc < entry_of(g, 0) || pc >= entry_of(g, hi))
		return SIZE_MAX;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (entry_of(g, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

bool tf_sym_go_line(const tf_sym_go *g, uint64_t pc, const char **file, int *line,
		    int *start_line)
{
	size_t i = find_func(g, pc);
	const uint8_t *f;

	*file = NULL;
	*line = *start_line = 0;
	if (i == SIZE_MAX || !(f = func_of(g, i)))
		return false;
	uint64_t entry = entry_of(g, i);
	/* the record after the entry and name: args, deferreturn, pcsp,
	 * pcfile, pcln, npcdata, cuOffset[, startLine since 1.20] */
	const uint8_t *r = f + (g->version >= 118 ? 8 : 12);
	uint32_t pcfile = (uint32_t)rd(r + 12, 4);
	uint32_t pcln = (uint32_t)rd(r + 16, 4);
	uint32_t cuoff = (uint32_t)rd(r + 24, 4);
	if (g->version >= 120)
		*start_line = (int32_t)rd(r + 28, 4);
	int32_t ln = pcvalue(g, pcln, entry, pc);
	int32_t fno = pcvalue(g, pcfile, entry, pc);
	if (ln > 0)
		*line = ln;
	if (fno >= 0 && ((uint64_t)cuoff + (uint64_t)fno + 1) * 4 <= g->cutab_len) {
		uint32_t foff = (uint32_t)rd(g->cutab + ((size_t)cuoff + (size_t)fno) * 4, 4);
		if (foff != UINT32_MAX)
			*file = cstr(g->filetab, g->filetab_len, foff);
	}
	return *line > 0 || *file;
}

int tf_sym_go_spdelta(const tf_sym_go *g, uint64_t pc)
{
	size_t i = find_func(g, pc);
	const uint8_t *f;

	if (i == SIZE_MAX || !(f = func_of(g, i)))
		return -1;
	/* pcsp: the frame's size so far; at the entry 0, the return address
	 * then sits at the stack pointer */
	const uint8_t *r = f + (g->version >= 118 ? 8 : 12);
	if (pc == entry_of(g, i))
		return 0;
	return pcvalue(g, (uint32_t)rd(r + 8, 4), entry_of(g, i), pc);
}
