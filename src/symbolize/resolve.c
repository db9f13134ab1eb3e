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
 * index of its functions' address ranges (from its top-level DIEs and
 * the namespaces and classes among them, never a function's insides).
 */
#include "symbolize/symbolize_int.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_INLINE_DEPTH 32

static bool cu_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_sym_module *m = ctx;
	return m->cus.v[idx].cu_off == *(const uint64_t *)key;
}

static void collect_function(Dwarf_Die *die, tf_sym_cu *cu)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	uint32_t idx = (uint32_t)cu->offs.n;
	bool any = false;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		uint64_t size = hi - lo;
		/* nested functions: the smallest range containing the pc wins */
		uint32_t rank = size >= UINT32_MAX ? 0 : UINT32_MAX - (uint32_t)size;
		tf_sym_ivls_add(&cu->funcs, lo, hi, idx, rank);
		any = true;
	}
	if (any)
		tf_vec_push(&cu->offs, dwarf_dieoffset(die));
}

/*
 * The functions with code in `scope`: subprograms, and those in the
 * namespaces, classes, modules, functions and blocks it holds (a lambda's
 * operator() sits in a class inside its function). Everything else, the
 * inlined calls above all (most of an optimized C++ CU's DIEs), is skipped
 * whole, through DW_AT_sibling where the compiler gave one; dwarf_getfuncs
 * walks into every one of them, and that walk was most of the cost of
 * symbolizing a big C++ test binary.
 */
static void walk_functions(Dwarf_Die *scope, tf_sym_cu *cu, int depth)
{
	Dwarf_Die child;

	if (depth > 64 || dwarf_child(scope, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			collect_function(&child, cu);
			/* a lambda's or a local class's member functions, and
			 * GNU C's nested functions, live inside their function */
			if (dwarf_haschildren(&child))
				walk_functions(&child, cu, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_interface_type:
			if (dwarf_haschildren(&child))
				walk_functions(&child, cu, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static tf_sym_cu *cu_functions(tf_sym_module *m, Dwarf_Die *cudie)
{
	uint64_t off = dwarf_dieoffset(cudie);
	uint32_t i = tf_htab_find(&m->cu_index, tf_hash_u64(off), cu_eq, m, &off);

	if (i != TF_HTAB_NONE)
		return &m->cus.v[i];
	tf_sym_cu cu;
	memset(&cu, 0, sizeof(cu));
	cu.cu_off = off;
	walk_functions(cudie, &cu, 0);
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

/* function / system_name of a DWARF function or inlined scope */
static void die_names(tf_symbolizer *s, Dwarf_Die *d, tf_frame *f)
{
	const char *link = die_linkage_name(d), *name = die_string(d, DW_AT_name);

	if (link) {
		f->system_name = str(s, intern(s, link));
		f->function = str(s, tf_sym_demangle(s, link));
	} else if (name) {
		f->function = f->system_name = str(s, intern(s, name));
	} else {
		f->function = f->system_name = "[unknown]";
	}
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

static bool resolve(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr)
{
	Dwarf_Addr cubias = 0;
	Dwarf_Die chain[MAX_INLINE_DEPTH];
	size_t depth = 0;
	const char *file = NULL;
	int line = 0;

	s->scratch.n = 0;
	const char *symname = tf_sym_module_symbol(m, vaddr);
	Dwarf_Die *cudie = dwfl_module_addrdie(m->mod, vaddr, &cubias);
	tf_sym_cu *cu = NULL;
	if (m->dwarf_state == TF_SYM_DWARF_UNKNOWN) {
		Dwarf_Addr b;
		m->dwarf_state = cudie || dwfl_module_getdwarf(m->mod, &b) ? TF_SYM_DWARF_YES
									   : TF_SYM_DWARF_NO;
	}
	if (cudie) {
		Dwarf_Addr pc = vaddr - cubias;
		cu = cu_functions(m, cudie);
		if (!cu->lines_state)
			cu->lines_state = tf_sym_lines_read(&cu->lines, cudie) ? 1 : -1;
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
	/* innermost first; each outer frame's line is its call of the inner */
	for (size_t k = depth; k-- > 0;) {
		tf_frame f = { NULL, NULL, file, line, 0 };
		if (k == 0 && symname) {
			f.system_name = str(s, intern(s, symname));
			f.function = str(s, tf_sym_demangle(s, symname));
		} else {
			die_names(s, &chain[k], &f);
		}
		f.start_line = die_int(&chain[k], DW_AT_decl_line, true);
		if (k > 0) {
			file = call_file(s, cu, cudie, &chain[k]);
			line = die_int(&chain[k], DW_AT_call_line, false);
		}
		/* without inlined frames, the function keeps the line of its
		 * own code: the call site of the outermost inlined call */
		if (s->opts.inline_frames || k == 0)
			tf_vec_push(&s->scratch, f);
	}
	return true;
}
