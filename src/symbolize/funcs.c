/*
 * funcs.c - a compilation unit's function index: the address ranges of
 * the functions with code in it and their DIEs' offsets, from which
 * resolve.c finds the function of an address.
 *
 * Building it means walking the CU's DIEs, and in a C++ CU most of them
 * are nothing the index needs (types, declarations, the inlined calls
 * inside functions), skipped whole through DW_AT_sibling. Through libdw
 * each DIE met costs a look-up of its abbreviation and a decode of its
 * attributes up to the one asked for (dwarf_tag, dwarf_hasattr,
 * dwarf_siblingof, dwarf_ranges of a function without code): about a
 * thousand instructions, 40 million for one unit of a generated C++ test
 * binary, the most of what a run met for a few new samples paid. Here the
 * unit is read directly: what each abbreviation says (its tag, children,
 * whether it declares, has pc attributes, where its DW_AT_sibling is, the
 * size of its attributes when that is fixed) is worked out once from
 * libdw's abbreviations, and a DIE costs a table look-up and a few adds.
 * libdw still reads the ranges of the functions with code. Anything this
 * reader does not know (a form, a unit type, a sibling that points
 * elsewhere than the end of the children) makes it give up, and the
 * index is built through libdw instead, as before: the same index either
 * way.
 */
#include "symbolize/symbolize_int.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

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

/* What the walk does with a DIE of a tag: nothing (skip it whole), enter
 * it, enter it only with `all`, or take it as a function. */
enum { SKIP, ENTER, ENTER_ALL, FUNCTION };

static int tag_role(unsigned tag)
{
	switch (tag) {
	case DW_TAG_subprogram:
		return FUNCTION;
	case DW_TAG_lexical_block:
	case DW_TAG_namespace:
	case DW_TAG_module:
		return ENTER;
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_interface_type:
		return ENTER_ALL;
	default:
		return SKIP;
	}
}

/*
 * The functions with code in `scope`: subprograms, and those in the
 * namespaces and modules it holds; with `all`, also those in classes and
 * in functions and their blocks (a lambda's operator() sits in a class
 * inside its function). A class's functions are first left out: C++
 * compilers give a member function's code a DIE of its own outside the
 * class, which names the member's declaration in it
 * (DW_AT_specification), and the members of the classes a C++ CU
 * instantiates (the standard library's containers above all) were two
 * thirds of the DIEs the walk met.
 */
static void walk_functions(Dwarf_Die *scope, tf_sym_cu *cu, bool all, int depth)
{
	Dwarf_Die child;

	if (depth > MAX_DEPTH || dwarf_child(scope, &child) != 0)
		return;
	do {
		switch (tag_role((unsigned)dwarf_tag(&child))) {
		case FUNCTION:
			/* a lambda's or a local class's member functions, and
			 * GNU C's nested functions, live inside their function;
			 * a declaration (a class's member) has neither code nor
			 * any of them, only its parameters: a third of the DIEs
			 * of a C++ CU */
			if (dwarf_hasattr(&child, DW_AT_declaration))
				break;
			collect_function(&child, cu);
			if (all && dwarf_haschildren(&child))
				walk_functions(&child, cu, all, depth + 1);
			break;
		case ENTER:
			if (dwarf_haschildren(&child))
				walk_functions(&child, cu, all, depth + 1);
			break;
		case ENTER_ALL:
			if (all && dwarf_haschildren(&child))
				walk_functions(&child, cu, all, depth + 1);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/* ---- the unit read directly ------------------------------------------- */

enum {
	AB_DECL = 1,     /* DW_AT_declaration */
	AB_PC = 2,       /* DW_AT_low_pc, high_pc or ranges: dwarf_ranges may give some */
};

typedef struct {
	uint32_t attr0, nattr;  /* its forms: reader.forms[attr0, attr0 + nattr) */
	int32_t fixed;          /* bytes of its attributes, -1 when not fixed */
	int32_t sib;            /* index of DW_AT_sibling among them, -1 none */
	int32_t sib_at;         /* where its value is, when the forms before it
				 * are of fixed size; else -1 */
	uint16_t tag;
	uint8_t children, flags;
	uint8_t role;           /* tag_role(tag) */
	bool known;
} abbrev;

typedef struct {
	const uint8_t *start, *end; /* the unit, from its header */
	Dwarf_Die cudie;
	uint8_t addr_size, off_size;
	uint16_t version;
	TF_VEC(abbrev) abbrevs; /* by code */
	TF_VEC(uint32_t) forms;
	bool bad;
} reader;

static uint64_t rd_uleb(reader *r, const uint8_t **pp)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	for (unsigned shift = 0; p < r->end; shift += 7) {
		uint8_t b = *p++;
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			return v;
		}
	}
	r->bad = true;
	*pp = r->end;
	return 0;
}

static uint64_t rd_n(reader *r, const uint8_t **pp, size_t n)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	if ((size_t)(r->end - p) < n) {
		r->bad = true;
		*pp = r->end;
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	*pp = p + n;
	return v;
}

/* The size of a form's value when it does not depend on the value; -1
 * when it does, -2 for a form this reader does not know. */
static int form_size(const reader *r, unsigned form)
{
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1:
	case DW_FORM_ref1:
	case DW_FORM_flag:
	case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2:
	case DW_FORM_ref2:
	case DW_FORM_strx2:
	case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3:
	case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4:
	case DW_FORM_ref4:
	case DW_FORM_strx4:
	case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		return 4;
	case DW_FORM_data8:
	case DW_FORM_ref8:
	case DW_FORM_ref_sig8:
	case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return r->addr_size;
	case DW_FORM_ref_addr:
		return r->version == 2 ? r->addr_size : r->off_size;
	case DW_FORM_strp:
	case DW_FORM_line_strp:
	case DW_FORM_sec_offset:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return r->off_size;
	case DW_FORM_string:
	case DW_FORM_block:
	case DW_FORM_block1:
	case DW_FORM_block2:
	case DW_FORM_block4:
	case DW_FORM_exprloc:
	case DW_FORM_sdata:
	case DW_FORM_udata:
	case DW_FORM_ref_udata:
	case DW_FORM_strx:
	case DW_FORM_addrx:
	case DW_FORM_loclistx:
	case DW_FORM_rnglistx:
	case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
	case DW_FORM_indirect:
		return -1;
	default:
		return -2;
	}
}

/* Past a value of `form` at p. */
static const uint8_t *skip_form(reader *r, const uint8_t *p, unsigned form)
{
	int n = form_size(r, form);
	if (n >= 0) {
		if ((size_t)(r->end - p) < (size_t)n)
			r->bad = true;
		return r->bad ? r->end : p + n;
	}
	uint64_t len = 0;
	switch (form) {
	case DW_FORM_string: {
		const uint8_t *z = memchr(p, 0, (size_t)(r->end - p));
		if (!z) {
			r->bad = true;
			return r->end;
		}
		return z + 1;
	}
	case DW_FORM_block1:
		len = rd_n(r, &p, 1);
		break;
	case DW_FORM_block2:
		len = rd_n(r, &p, 2);
		break;
	case DW_FORM_block4:
		len = rd_n(r, &p, 4);
		break;
	case DW_FORM_block:
	case DW_FORM_exprloc:
		len = rd_uleb(r, &p);
		break;
	case DW_FORM_indirect: {
		uint64_t f = rd_uleb(r, &p);
		if (r->bad || f == DW_FORM_indirect || f > UINT32_MAX) {
			r->bad = true;
			return r->end;
		}
		return skip_form(r, p, (unsigned)f);
	}
	default:
		if (form_size(r, form) == -2) {
			r->bad = true;
			return r->end;
		}
		/* the LEB128 forms */
		rd_uleb(r, &p);
		return p;
	}
	if (r->bad || len > (uint64_t)(r->end - p)) {
		r->bad = true;
		return r->end;
	}
	return p + len;
}

/* What each abbreviation of the unit's table (at `off` in .debug_abbrev)
 * says. */
static bool read_abbrevs(reader *r, Dwarf_Off off)
{
	reader t = *r; /* the table's bounds, for the LEB128 reads */
	if (!tf_sym_dwarf_section(dwarf_cu_getdwarf(r->cudie.cu), ".debug_abbrev", &t.start, &t.end) ||
	    off >= (uint64_t)(t.end - t.start))
		return false;
	const uint8_t *p = t.start + off;
	for (;;) {
		uint64_t code = rd_uleb(&t, &p);
		if (t.bad)
			return false;
		if (code == 0)
			return true;
		if (code > 1u << 16)
			return false;
		while (r->abbrevs.n <= code) {
			abbrev none;
			memset(&none, 0, sizeof(none));
			tf_vec_push(&r->abbrevs, none);
		}
		abbrev *ab = &r->abbrevs.v[code];
		if (ab->known)
			return false; /* a code given twice */
		ab->known = true;
		ab->tag = (uint16_t)rd_uleb(&t, &p);
		ab->role = (uint8_t)tag_role(ab->tag);
		ab->children = rd_n(&t, &p, 1) != 0;
		ab->attr0 = (uint32_t)r->forms.n;
		ab->fixed = 0;
		ab->sib = -1;
		ab->sib_at = -1;
		for (uint32_t i = 0;; i++) {
			uint64_t name = rd_uleb(&t, &p), form = rd_uleb(&t, &p);
			if (t.bad)
				return false;
			if (name == 0 && form == 0)
				break;
			if (form == DW_FORM_implicit_const)
				rd_uleb(&t, &p); /* its value, a signed LEB128 */
			int size = form > UINT32_MAX ? -2 : form_size(r, (unsigned)form);
			if (size == -2)
				return false;
			if (size < 0)
				ab->fixed = -1;
			else if (ab->fixed >= 0)
				ab->fixed += size;
			if (name == DW_AT_sibling) {
				if (form != DW_FORM_ref1 && form != DW_FORM_ref2 && form != DW_FORM_ref4 &&
				    form != DW_FORM_ref8 && form != DW_FORM_ref_udata)
					return false;
				ab->sib = (int32_t)i;
				ab->sib_at = ab->fixed >= 0 ? ab->fixed - size : -1;
			} else if (name == DW_AT_declaration) {
				ab->flags |= AB_DECL;
			} else if (name == DW_AT_low_pc || name == DW_AT_high_pc || name == DW_AT_ranges) {
				ab->flags |= AB_PC;
			}
			tf_vec_push(&r->forms, (uint32_t)form);
			ab->nattr = i + 1;
		}
	}
}

/* The DIE a DW_AT_sibling at *p names, for the DIE whose attributes
 * start at `die`. */
static const uint8_t *sibling_at(reader *r, const uint8_t *die, const uint8_t **p, unsigned form)
{
	uint64_t off;
	const uint8_t *q = *p;
	if (form == DW_FORM_ref4 && r->end - q >= 4)
		off = (uint64_t)q[0] | (uint64_t)q[1] << 8 | (uint64_t)q[2] << 16 | (uint64_t)q[3] << 24;
	else
		off = form == DW_FORM_ref_udata ? rd_uleb(r, p) : rd_n(r, p, (size_t)form_size(r, form));
	/* after this DIE, within the unit (libdw's check) */
	if (r->bad || off <= (uint64_t)(die - r->start) || off >= (uint64_t)(r->end - r->start)) {
		r->bad = true;
		return NULL;
	}
	return r->start + off;
}

/* A DIE at p: its abbreviation (NULL at a null entry, or bad) and where
 * its attributes start (past the null entry for one). */
static const abbrev *read_code(reader *r, const uint8_t *p, const uint8_t **attrs)
{
	uint64_t code;
	if (p < r->end && *p < 0x80) {
		code = *p++;
	} else {
		code = rd_uleb(r, &p);
		if (r->bad)
			return NULL;
	}
	*attrs = p;
	if (code == 0)
		return NULL;
	if (code >= r->abbrevs.n || !r->abbrevs.v[code].known) {
		r->bad = true;
		return NULL;
	}
	return &r->abbrevs.v[code];
}

/* Where the attributes of a DIE (starting at p) end. */
static const uint8_t *die_end(reader *r, const abbrev *ab, const uint8_t *p)
{
	if (ab->fixed >= 0) {
		if ((size_t)(r->end - p) < (size_t)ab->fixed) {
			r->bad = true;
			return r->end;
		}
		return p + ab->fixed;
	}
	for (uint32_t i = 0; i < ab->nattr && !r->bad; i++)
		p = skip_form(r, p, r->forms.v[ab->attr0 + i]);
	return p;
}

/* The DIE a DIE's DW_AT_sibling names (its attributes at p, ab->sib >= 0). */
static const uint8_t *die_sibling(reader *r, const abbrev *ab, const uint8_t *p)
{
	const uint8_t *die = p;
	if (ab->sib_at >= 0) {
		if ((size_t)(r->end - p) < (size_t)ab->sib_at) {
			r->bad = true;
			return NULL;
		}
		p += ab->sib_at;
	} else {
		for (int32_t i = 0; i < ab->sib && !r->bad; i++)
			p = skip_form(r, p, r->forms.v[ab->attr0 + (uint32_t)i]);
	}
	return sibling_at(r, die, &p, r->forms.v[ab->attr0 + (uint32_t)ab->sib]);
}

/* Past the null entry that ends the siblings from p. */
static const uint8_t *skip_list(reader *r, const uint8_t *p)
{
	size_t level = 0;
	while (!r->bad) {
		const uint8_t *a;
		const abbrev *ab = read_code(r, p, &a);
		if (r->bad)
			break;
		if (!ab) {
			if (level-- == 0)
				return a;
			p = a;
		} else if (ab->children && ab->sib >= 0) {
			p = die_sibling(r, ab, a); /* as libdw skips */
		} else {
			p = die_end(r, ab, a);
			level += ab->children;
		}
	}
	return r->end;
}

/* walk_functions over the DIEs from p, the first child of a scope:
 * returns where their list ends (past its null entry). */
static const uint8_t *scan_list(reader *r, const uint8_t *p, tf_sym_cu *cu, bool all, int depth)
{
	while (!r->bad) {
		const uint8_t *a;
		const abbrev *ab = read_code(r, p, &a);
		if (!ab)
			return r->bad ? r->end : a;
		int role = ab->role;
		bool enter = ab->children && (role == ENTER || (all && role != SKIP));
		if (role == FUNCTION) {
			if (ab->flags & AB_DECL) {
				enter = false;
			} else if (ab->flags & AB_PC) {
				Dwarf_Die d = r->cudie;
				d.addr = (void *)p;
				d.abbrev = NULL;
				collect_function(&d, cu);
			}
		}
		if (!enter && ab->children && ab->sib >= 0) {
			/* skipped whole, its attributes unread */
			p = die_sibling(r, ab, a);
			continue;
		}
		const uint8_t *q = die_end(r, ab, a);
		if (!ab->children) {
			p = q;
		} else if (!enter) {
			p = skip_list(r, q);
		} else {
			p = depth + 1 > MAX_DEPTH ? skip_list(r, q) : scan_list(r, q, cu, all, depth + 1);
			/* libdw goes on at the sibling: the same place where the
			 * DWARF is sound */
			if (ab->sib >= 0 && die_sibling(r, ab, a) != p)
				r->bad = true;
		}
	}
	return r->end;
}

/* A reader of the unit of `cudie`: its bounds and abbreviations; false
 * when this reader cannot read it. Freed with reader_close. */
static bool reader_open(reader *r, Dwarf_Die *cudie)
{
	Dwarf_Half version;
	uint8_t unit_type, addr_size, off_size;
	Dwarf_Off abbrev_off;
	Dwarf_Die die;

	memset(r, 0, sizeof(*r));
	if (dwarf_cu_info(cudie->cu, &version, &unit_type, NULL, NULL, NULL, &addr_size,
			  &off_size) != 0 ||
	    !dwarf_cu_die(cudie->cu, &die, NULL, &abbrev_off, NULL, NULL, NULL, NULL) ||
	    version < 2 || version > 5 || unit_type != DW_UT_compile ||
	    (addr_size != 4 && addr_size != 8) || (off_size != 4 && off_size != 8))
		return false;
	r->version = version;
	r->addr_size = addr_size;
	r->off_size = off_size;
	r->cudie = *cudie;
	/* the unit's header is before its DIE: its length says where it ends */
	r->start = (const uint8_t *)cudie->addr - dwarf_cuoffset(cudie);
	const uint8_t *h = r->start;
	r->end = h + 12;
	uint64_t len = rd_n(r, &h, 4);
	if (len == 0xffffffff)
		len = rd_n(r, &h, 8);
	if (r->bad || len > (uint64_t)1 << 40)
		return false;
	r->end = h + len;
	return (const uint8_t *)cudie->addr < r->end && read_abbrevs(r, abbrev_off);
}

static void reader_close(reader *r)
{
	tf_vec_free(&r->abbrevs);
	tf_vec_free(&r->forms);
}

/* The index through the unit read directly; false (the index left as it
 * was) when this reader cannot. */
static bool scan_functions(Dwarf_Die *cudie, tf_sym_cu *cu, bool all)
{
	reader r;
	size_t nfuncs = cu->funcs.v.n, noffs = cu->offs.n;
	bool ok = false;

	if (!reader_open(&r, cudie))
		goto done;
	const uint8_t *a;
	const abbrev *ab = read_code(&r, cudie->addr, &a);
	if (!ab)
		goto done;
	if (ab->children)
		scan_list(&r, die_end(&r, ab, a), cu, all, 0);
	ok = !r.bad;
done:
	if (!ok) {
		cu->funcs.v.n = nfuncs;
		cu->offs.n = noffs;
	}
	reader_close(&r);
	return ok;
}

/* count_nodes over the children from p, at most `cap`. */
static size_t count_list(reader *r, const uint8_t *p, size_t n, size_t cap)
{
	while (!r->bad && n < cap) {
		const uint8_t *a;
		const abbrev *ab = read_code(r, p, &a);
		if (!ab)
			return n;
		bool node = ab->tag == DW_TAG_inlined_subroutine || ab->tag == DW_TAG_lexical_block ||
			    ab->tag == DW_TAG_try_block || ab->tag == DW_TAG_catch_block;
		n += node;
		if (!ab->children) {
			p = die_end(r, ab, a);
		} else if (node) {
			const uint8_t *q = die_end(r, ab, a);
			n = count_list(r, q, n, cap);
			if (n >= cap)
				return n;
			p = ab->sib >= 0 ? die_sibling(r, ab, a) : skip_list(r, q);
		} else {
			p = ab->sib >= 0 ? die_sibling(r, ab, a) : skip_list(r, die_end(r, ab, a));
		}
	}
	return n;
}

size_t tf_sym_die_nodes(Dwarf_Die *cudie, Dwarf_Die *die, size_t cap)
{
	reader r;
	size_t n = SIZE_MAX;

	if (reader_open(&r, cudie)) {
		const uint8_t *a, *p = die->addr;
		const abbrev *ab = p >= r.start && p < r.end ? read_code(&r, p, &a) : NULL;
		if (ab) {
			size_t got = ab->children ? count_list(&r, die_end(&r, ab, a), 0, cap) : 0;
			if (!r.bad)
				n = got;
		}
	}
	reader_close(&r);
	return n;
}

bool tf_sym_cu_functions(Dwarf_Die *cudie, tf_sym_cu *cu, bool all)
{
	if (scan_functions(cudie, cu, all))
		return true;
	walk_functions(cudie, cu, all, 0);
	return false;
}

void tf_sym_cu_functions_libdw(Dwarf_Die *cudie, tf_sym_cu *cu, bool all)
{
	walk_functions(cudie, cu, all, 0);
}
