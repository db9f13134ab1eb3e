/*
 * resolve.c - from a module address to its frames: function, file, line,
 * and the chain of inlined calls, innermost first (what
 * `eu-addr2line -i -f` prints).
 *
 * The function is the ELF symbol (the name perf and the frame-pointer
 * stacks show), or the DWARF subprogram when there is no symbol. Inlined
 * frames come from the DW_TAG_inlined_subroutine scopes around the address:
 * the innermost gets the line table's file:line, each outer one the call
 * site (DW_AT_call_file/line) of the scope nested in it.
 *
 * Finding the subprogram by walking a CU's DIEs for every address would
 * cost as much as the CU is large, so each CU gets, on first use, a sorted
 * index of its functions' address ranges (funcs.c: from its top-level
 * DIEs and the namespaces among them, a function's insides and the
 * classes only when an address falls in none of those).
 */
#include "symbolize/symbolize_int.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INLINE_DEPTH 32
#define KEEP_MAX_NODES 256 /* inlined calls and blocks of a kept function */

static bool cu_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_sym_module *m = ctx;
	return m->cus.v[idx].cu_off == *(const uint64_t *)key;
}

static tf_sym_cu *cu_functions(tf_symbolizer *s, tf_sym_module *m, Dwarf_Die *cudie)
{
	uint64_t off = dwarf_dieoffset(cudie);
	uint32_t i = tf_htab_find(&m->cu_index, tf_hash_u64(off), cu_eq, m, &off);

	if (i != TF_HTAB_NONE)
		return &m->cus.v[i];
	tf_sym_cu cu;
	memset(&cu, 0, sizeof(cu));
	cu.cu_off = off;
	/* kept from an earlier run of the binary: no walk. Else the
	 * functions outside functions and classes first: the bodies, where
	 * the nested ones are (a third of the DIEs), and the classes only
	 * when an address is in none of them (nested functions have code of
	 * their own, never inside their parent's) */
	if (tf_sym_pcache_get_cu(m, &cu))
		s->stats.symcache_cus++;
	else
		tf_sym_cu_functions(cudie, &cu, false);
	tf_sym_ivls_build(&cu.funcs);
	i = (uint32_t)m->cus.n;
	tf_vec_push(&m->cus, cu);
	tf_htab_insert(&m->cu_index, tf_hash_u64(off), i);
	return &m->cus.v[i];
}

static bool has_pc_attrs(Dwarf_Die *d)
{
	return dwarf_hasattr(d, DW_AT_low_pc) || dwarf_hasattr(d, DW_AT_ranges) ||
	       dwarf_hasattr(d, DW_AT_entry_pc);
}

/* The inlined call directly inside `scope` (through any lexical blocks)
 * that contains pc. */
static bool find_inlined(Dwarf_Die *scope, Dwarf_Addr pc, Dwarf_Die *out, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(scope, &child) != 0)
		return false;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_inlined_subroutine) {
			if (dwarf_haspc(&child, pc) == 1) {
				*out = child;
				return true;
			}
		} else if (tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
			   tag == DW_TAG_catch_block) {
			if ((dwarf_haspc(&child, pc) == 1 || !has_pc_attrs(&child)) &&
			    find_inlined(&child, pc, out, depth + 1))
				return true;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return false;
}

static const char *die_string(Dwarf_Die *d, int at)
{
	Dwarf_Attribute mem, *a = dwarf_attr_integrate(d, at, &mem);
	return a ? dwarf_formstring(a) : NULL;
}

static int die_int(Dwarf_Die *d, int at, bool integrate)
{
	Dwarf_Attribute mem, *a = integrate ? dwarf_attr_integrate(d, at, &mem) : dwarf_attr(d, at, &mem);
	Dwarf_Word w;
	if (!a || dwarf_formudata(a, &w) != 0 || w > INT32_MAX)
		return 0;
	return (int)w;
}

static const char *die_linkage_name(Dwarf_Die *d)
{
	const char *n = die_string(d, DW_AT_linkage_name);
	return n ? n : die_string(d, DW_AT_MIPS_linkage_name);
}

static uint32_t intern(tf_symbolizer *s, const char *str)
{
	return tf_strtab_intern(&s->strs, str, strlen(str));
}

static const char *str(tf_symbolizer *s, uint32_t id)
{
	return s->strs.strs.v[id];
}

static const char *call_file(tf_symbolizer *s, tf_sym_cu *cu, Dwarf_Die *cudie, Dwarf_Die *scope)
{
	Dwarf_Files *files;
	size_t nfiles;
	Dwarf_Attribute mem, *a = dwarf_attr(scope, DW_AT_call_file, &mem);
	Dwarf_Word idx;

	if (!a || dwarf_formudata(a, &idx) != 0)
		return NULL;
	if (cu->lines_state > 0)
		return idx > UINT32_MAX / 2 ? NULL : tf_sym_lines_file(s, &cu->lines, (uint32_t)idx);
	if (dwarf_getsrcfiles(cudie, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	const char *name = dwarf_filesrc(files, idx, NULL, NULL);
	return name ? str(s, intern(s, name)) : NULL;
}

static bool resolve(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr);

bool tf_sym_resolve(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr)
{
	bool ok;

	if (tf_sym_pcache_get(s, m, vaddr, &ok))
		return ok;
	ok = resolve(s, m, vaddr);
	tf_sym_pcache_put(s, m, vaddr, ok);
	return ok;
}

/* One frame of an address's chain, the function first, then each inlined
 * call inside the one before: what a frame is made of, whether it came
 * from the DWARF or from a kept function. Strings are interned, or NULL. */
typedef struct {
	const char *name;    /* linkage name when `linkage`, else plain */
	bool linkage;
	int decl_line;
	const char *call_file; /* inlined calls: where the caller calls it */
	int call_line;
} link_item;

static link_item die_item(tf_symbolizer *s, tf_sym_cu *cu, Dwarf_Die *cudie, Dwarf_Die *d,
			  bool inlined)
{
	link_item it = { NULL, false, die_int(d, DW_AT_decl_line, true), NULL, 0 };
	const char *link = die_linkage_name(d), *name = die_string(d, DW_AT_name);
	if (link) {
		it.name = str(s, intern(s, link));
		it.linkage = true;
	} else if (name) {
		it.name = str(s, intern(s, name));
	}
	if (inlined) {
		it.call_file = call_file(s, cu, cudie, d);
		it.call_line = die_int(d, DW_AT_call_line, false);
	}
	return it;
}

/* The frames of a chain of `depth` items into s->scratch, innermost first;
 * `file`:`line` is the row of the address. */
static void push_frames(tf_symbolizer *s, const link_item *items, size_t depth,
			const char *symname, const char *file, int line)
{
	/* innermost first; each outer frame's line is its call of the inner */
	for (size_t k = depth; k-- > 0;) {
		tf_frame f = { NULL, NULL, file, line, items[k].decl_line };
		if (k == 0 && symname) {
			f.system_name = str(s, intern(s, symname));
			f.function = str(s, tf_sym_demangle(s, symname));
		} else if (items[k].linkage) {
			f.system_name = items[k].name;
			f.function = str(s, tf_sym_demangle(s, items[k].name));
		} else if (items[k].name) {
			f.function = f.system_name = items[k].name;
		} else {
			f.function = f.system_name = "[unknown]";
		}
		if (k > 0) {
			file = items[k].call_file;
			line = items[k].call_line;
		}
		/* without inlined frames, the function keeps the line of its
		 * own code: the call site of the outermost inlined call */
		if (s->opts.inline_frames || k == 0)
			tf_vec_push(&s->scratch, f);
	}
}

static const char *sid(tf_symbolizer *s, uint32_t idp1)
{
	return idp1 ? str(s, idp1 - 1) : NULL;
}

static bool kept_has(const tf_sym_kept_fn *f, const tf_sym_kept_node *d, uint64_t pc)
{
	for (uint32_t i = 0; i < d->nranges; i++) {
		const tf_sym_kept_range *g = &f->node_ranges.v[d->ranges_off + i];
		if (pc >= g->lo && pc < g->hi)
			return true;
	}
	return false;
}

/* find_inlined over a kept function's nodes: the first inlined call among
 * the children of `parent` (through blocks) that holds pc. */
static int kept_inlined(const tf_sym_kept_fn *f, int parent, uint64_t pc, int depth)
{
	if (depth > 64)
		return -1;
	for (size_t i = (size_t)(parent + 1); i < f->nodes.n; i++) {
		const tf_sym_kept_node *d = &f->nodes.v[i];
		if (d->parent != parent)
			continue;
		if (!d->block) {
			if (kept_has(f, d, pc))
				return (int)i;
		} else if (kept_has(f, d, pc) || !d->has_pc) {
			int r = kept_inlined(f, (int)i, pc, depth + 1);
			if (r >= 0)
				return r;
		}
	}
	return -1;
}

/* An address in a kept function, resolved from it alone. */
static bool resolve_kept(tf_symbolizer *s, const tf_sym_kept_fn *f, uint64_t pc)
{
	link_item items[MAX_INLINE_DEPTH];
	const char *symname = NULL, *file = NULL;
	int line = 0;

	for (size_t i = 0; i < f->ranges.n; i++)
		if (pc >= f->ranges.v[i].lo && pc < f->ranges.v[i].hi)
			symname = sid(s, f->ranges.v[i].sym);
	/* the last row at or before pc, unless it ends a sequence */
	size_t lo = 0, hi = f->rows.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->rows.v[mid].addr <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && !(f->rows.v[lo - 1].file & TF_SYM_ROW_END)) {
		file = sid(s, f->rows.v[lo - 1].file);
		line = (int)f->rows.v[lo - 1].line;
	}
	items[0] = (link_item){ sid(s, f->name), f->linkage, f->decl_line, NULL, 0 };
	size_t depth = 1;
	for (int at = -1; depth < MAX_INLINE_DEPTH;) {
		at = kept_inlined(f, at, pc, 0);
		if (at < 0)
			break;
		const tf_sym_kept_node *d = &f->nodes.v[at];
		items[depth++] = (link_item){ sid(s, d->name), d->linkage, d->decl_line,
					      sid(s, d->call_file), d->call_line };
	}
	push_frames(s, items, depth, symname, file, line);
	s->stats.symcache_hits++;
	return true;
}

static uint32_t id1(tf_symbolizer *s, const char *p)
{
	return p ? intern(s, p) + 1 : 0;
}

static int cmp_range(const void *x, const void *y)
{
	const tf_sym_kept_range *a = x, *b = y;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

static bool keep_ranges(Dwarf_Die *d, tf_sym_kept_ranges *out)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(d, off, &base, &lo, &hi)) > 0) {
		tf_sym_kept_range g = { lo, hi, 0 };
		tf_vec_push(out, g);
	}
	return off == 0;
}

/* The inlined calls and blocks under `scope`, in DIE order. */
static bool keep_nodes(tf_symbolizer *s, tf_sym_cu *cu, Dwarf_Die *cudie, Dwarf_Die *scope,
		       int parent, tf_sym_kept_fn *f, int depth)
{
	Dwarf_Die child;

	if (depth > 200)
		return false;
	if (dwarf_child(scope, &child) != 0)
		return true;
	do {
		/* a function with thousands of inlined calls (std::sort and a
		 * map inlined into a template) would cost more to keep than
		 * to find its next addresses through the CU's kept index */
		if (f->nodes.n >= KEEP_MAX_NODES)
			return false;
		int tag = dwarf_tag(&child);
		bool block = tag == DW_TAG_lexical_block || tag == DW_TAG_try_block ||
			     tag == DW_TAG_catch_block;
		if (tag != DW_TAG_inlined_subroutine && !block)
			continue;
		tf_sym_kept_node d;
		memset(&d, 0, sizeof(d));
		d.parent = parent;
		d.block = block;
		d.has_pc = has_pc_attrs(&child);
		d.ranges_off = (uint32_t)f->node_ranges.n;
		if (!keep_ranges(&child, &f->node_ranges))
			return false;
		d.nranges = (uint32_t)(f->node_ranges.n - d.ranges_off);
		if (!block) {
			link_item it = die_item(s, cu, cudie, &child, true);
			d.name = id1(s, it.name);
			d.linkage = it.linkage;
			d.decl_line = it.decl_line;
			d.call_file = id1(s, it.call_file);
			d.call_line = it.call_line;
		}
		int me = (int)f->nodes.n;
		tf_vec_push(&f->nodes, d);
		if (!keep_nodes(s, cu, cudie, &child, me, f, depth + 1))
			return false;
	} while (dwarf_siblingof(&child, &child) == 0);
	return true;
}

/* Keep the function `fn` of a CU whose line table we read, for the next
 * runs: its ranges and their symbols, its tree of inlined calls, the rows
 * over its ranges. Nothing is kept when a range's symbol is not one. */
static void keep_function(tf_symbolizer *s, tf_sym_module *m, tf_sym_cu *cu, Dwarf_Die *cudie,
			  Dwarf_Die *fn, const link_item *it)
{
	tf_sym_kept_fn f;

	memset(&f, 0, sizeof(f));
	f.name = id1(s, it->name);
	f.linkage = it->linkage;
	f.decl_line = it->decl_line;
	if (!keep_ranges(fn, &f.ranges) || !f.ranges.n)
		goto drop;
	/* by address, so that the rows over them come out in order (a
	 * function's .cold part often lies below its body) */
	qsort(f.ranges.v, f.ranges.n, sizeof(tf_sym_kept_range), cmp_range);
	for (size_t i = 0; i < f.ranges.n; i++) {
		tf_sym_kept_range *g = &f.ranges.v[i];
		if (g->hi <= g->lo)
			goto drop;
		const char *a = tf_sym_module_symbol(m, g->lo), *z = tf_sym_module_symbol(m, g->hi - 1),
			   *mid = tf_sym_module_symbol(m, g->lo + (g->hi - g->lo) / 2);
		if (a != z || a != mid)
			goto drop;
		g->sym = id1(s, a);
		/* rows from the last one at or before lo to the last before hi */
		const tf_sym_row *rows;
		size_t nrows = tf_sym_lines_span(&cu->lines, g->lo, g->hi, &rows);
		if (!nrows)
			goto drop;
		for (size_t r = 0; r < nrows; r++) {
			tf_sym_row w = rows[r];
			const char *file = tf_sym_lines_file(s, &cu->lines, w.file);
			w.file = id1(s, file) | (w.file & TF_SYM_ROW_END);
			if (!(f.rows.n && f.rows.v[f.rows.n - 1].addr > w.addr))
				tf_vec_push(&f.rows, w);
		}
	}
	/* a tree past the cap is not kept: counted first, cheaply, rather
	 * than read through libdw up to the cap and dropped */
	size_t nodes = tf_sym_die_nodes(cudie, fn, KEEP_MAX_NODES + 1);
	if ((nodes != SIZE_MAX && nodes > KEEP_MAX_NODES) || !keep_nodes(s, cu, cudie, fn, -1, &f, 0))
		goto drop;
	tf_sym_pcache_put_fn(s, m, &f);
	return;
drop:
	tf_sym_kept_fn_free(&f);
}

/* The run of `v` holding addr, found as libdwfl finds it. */
static const tf_sym_arange *arange_of(const tf_sym_arange *v, size_t n, uint64_t end, uint64_t addr)
{
	size_t l = 0, u = n;
	while (l < u) {
		size_t i = l + (u - l) / 2;
		if (addr < v[i].start) {
			u = i;
		} else if (addr > v[i].start && i + 1 < n && addr >= v[i + 1].start) {
			l = i + 1;
		} else {
			/* past the last run's end: in none */
			if (addr > v[i].start && i + 1 == n && addr >= end)
				return NULL;
			return &v[i];
		}
	}
	return NULL;
}

/*
 * dwfl_module_addrdie, with the CUs by address kept in the symbol cache:
 * libdw reads a module's whole .debug_aranges on its first question (its
 * every template instance's range: 4,800 entries and 12 million
 * instructions in the generated C++ binary, 7 million of a run of the
 * example suite's 1,600 samples), which the next runs of the binary need
 * not. The runs are libdwfl's: libdw's ranges in its order, those of one
 * CU one after the other merged from the first one's start.
 */
static Dwarf_Die *module_addrdie(tf_sym_module *m, uint64_t vaddr, Dwarf_Addr *bias,
				 Dwarf_Die *mem)
{
	size_t n;
	uint64_t end;
	if (!m->pc)
		return dwfl_module_addrdie(m->mod, vaddr, bias);
	Dwarf *dw = dwfl_module_getdwarf(m->mod, bias);
	if (!dw)
		return NULL;
	const tf_sym_arange *v = tf_sym_pcache_aranges(m, &n, &end);
	if (!v) {
		Dwarf_Aranges *ar;
		size_t nar;
		if (dwarf_getaranges(dw, &ar, &nar) != 0)
			return NULL;
		TF_VEC(tf_sym_arange) runs = { 0 };
		end = 0;
		for (size_t i = 0; i < nar; i++) {
			Dwarf_Addr a;
			Dwarf_Word len;
			Dwarf_Off cu;
			if (dwarf_getarangeinfo(dwarf_onearange(ar, i), &a, &len, &cu) != 0) {
				tf_vec_free(&runs);
				return NULL;
			}
			if (!runs.n || runs.v[runs.n - 1].cu != cu) {
				tf_sym_arange r = { a, cu };
				tf_vec_push(&runs, r);
			}
			end = a + len;
		}
		tf_sym_pcache_put_aranges(m, runs.v, runs.n, end);
		tf_vec_free(&runs);
		if (!(v = tf_sym_pcache_aranges(m, &n, &end)))
			return NULL;
	}
	const tf_sym_arange *r = arange_of(v, n, end, vaddr - *bias);
	return r ? dwarf_offdie(dw, r->cu, mem) : NULL;
}

static bool resolve(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr)
{
	Dwarf_Addr cubias = 0;
	Dwarf_Die cudie_mem;
	Dwarf_Die chain[MAX_INLINE_DEPTH];
	link_item items[MAX_INLINE_DEPTH];
	size_t depth = 0;
	const char *file = NULL;
	int line = 0;

	s->scratch.n = 0;
	const tf_sym_kept_fn *kept = tf_sym_pcache_find_fn(m, vaddr);
	if (kept)
		return resolve_kept(s, kept, vaddr);
	const char *symname = tf_sym_module_symbol(m, vaddr);
	Dwarf_Die *cudie = module_addrdie(m, vaddr, &cubias, &cudie_mem);
	tf_sym_cu *cu = NULL;
	if (m->dwarf_state == TF_SYM_DWARF_UNKNOWN) {
		Dwarf_Addr b;
		m->dwarf_state = cudie || dwfl_module_getdwarf(m->mod, &b) ? TF_SYM_DWARF_YES
									   : TF_SYM_DWARF_NO;
	}
	if (cudie) {
		Dwarf_Addr pc = vaddr - cubias;
		cu = cu_functions(s, m, cudie);
		if (!cu->lines_state)
			cu->lines_state = tf_sym_lines_read(&cu->lines, cudie) ? 1 : -1;
		if (!cu->kept && m->pc) {
			tf_sym_pcache_put_cu(m, cu);
			cu->kept = true;
		}
		if (cu->lines_state > 0) {
			const tf_sym_row *r = tf_sym_lines_find(&cu->lines, pc);
			if (r) {
				file = tf_sym_lines_file(s, &cu->lines, r->file);
				line = (int)r->line;
			}
		} else {
			Dwarf_Line *dl = dwarf_getsrc_die(cudie, pc);
			if (dl) {
				const char *f = dwarf_linesrc(dl, NULL, NULL);
				if (f)
					file = str(s, intern(s, f));
				dwarf_lineno(dl, &line);
			}
		}
		const tf_sym_ivl *e = tf_sym_ivls_find(&cu->funcs, pc);
		if (!e && !cu->bodies) {
			tf_sym_ivls_free(&cu->funcs);
			cu->offs.n = 0;
			tf_sym_cu_functions(cudie, cu, true);
			tf_sym_ivls_build(&cu->funcs);
			cu->bodies = true;
			if (m->pc && cu->kept)
				tf_sym_pcache_put_cu(m, cu); /* with the nested ones */
			e = tf_sym_ivls_find(&cu->funcs, pc);
		}
		if (e && dwarf_offdie(dwarf_cu_getdwarf(cudie->cu), cu->offs.v[e->val], &chain[0])) {
			depth = 1;
			while (depth < MAX_INLINE_DEPTH &&
			       find_inlined(&chain[depth - 1], pc, &chain[depth], 0))
				depth++;
		}
	}
	if (!symname && !depth)
		return false;
	int go_start = 0;
	if (!cudie && m->go) {
		/* no DWARF: Go's table knows the file and line */
		const char *gf;
		GElf_Addr gbias;
		dwfl_module_getelf(m->mod, &gbias);
		if (tf_sym_go_line(m->go, vaddr - gbias, &gf, &line, &go_start) && gf)
			file = str(s, intern(s, gf));
	}
	if (!depth) {
		tf_frame f = { NULL, NULL, file, line, go_start };
		f.system_name = str(s, intern(s, symname));
		f.function = str(s, tf_sym_demangle(s, symname));
		tf_vec_push(&s->scratch, f);
		return true;
	}
	for (size_t k = 0; k < depth; k++)
		items[k] = die_item(s, cu, cudie, &chain[k], k > 0);
	push_frames(s, items, depth, symname, file, line);
	/* the function kept whole, for addresses of it the next runs meet */
	if (m->pc && cu->lines_state > 0 && cubias == 0)
		keep_function(s, m, cu, cudie, &chain[0], &items[0]);
	return true;
}
