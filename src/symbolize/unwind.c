/*
 * unwind.c - DWARF CFI unwinding of a copied user stack (x86-64).
 *
 * For binaries built without frame pointers the sampler copies the user
 * registers and the top of the stack; this walks it back frame by frame
 * with the binary's call frame information (.eh_frame, else .debug_frame),
 * through libdw. libdw tells the rules (where the CFA is, where each
 * register was saved); evaluating them against the copied registers and
 * stack is done here, including the DWARF expressions gcc and glibc emit
 * (the PLT's DW_CFA_def_cfa_expression, signal trampolines). Memory outside
 * the copy ends the walk. A frame without CFI (JIT code, a missing file)
 * falls back to the frame pointer; an undefined return address (_start, a
 * thread's entry) is the outermost frame. CPython 3.12+'s perf trampolines
 * (JIT code named "py::..." in its perf map) are known by shape instead.
 *
 * Rules are compiled once per distinct (module, pc) into a small row
 * struct, so unwinding a sample allocates nothing once the cache is warm.
 */
#include "symbolize/symbolize_int.h"

#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#define NREGS 17       /* DWARF x86-64: rax..r15 (0-15) and the return address (16) */
#define DW_RSP 7
#define DW_RBP 6
#define DW_RIP 16

enum {
	R_UNDEF,
	R_SAME,
	R_OFFSET,      /* saved at CFA + off */
	R_VAL_OFFSET,  /* value is CFA + off */
	R_REG,         /* value is in register `reg` */
	R_EXPR,        /* saved at the address the expression computes */
	R_VAL_EXPR,    /* value is what the expression computes */
};

typedef struct {
	uint8_t kind;
	uint8_t reg;
	uint16_t nops;
	int64_t off;
	const Dwarf_Op *ops;
} rule;

typedef struct {
	bool found;    /* CFI covers the pc */
	bool signal;   /* a signal trampoline: its caller's pc is exact */
	uint8_t ra;    /* return address column */
	rule cfa;      /* R_VAL_OFFSET (reg + off) or R_VAL_EXPR */
	rule regs[NREGS];
} row;

struct tf_sym_cfi_cache {
	TF_VEC(row) rows;
	TF_VEC(tf_sym_key) keys;
	tf_htab index;
	tf_arena *arena;   /* copies of expression ops */
};

/* perf_regs order -> DWARF register number */
static const int8_t dwarf_of_perf[TF_REG_COUNT] = {
	[TF_REG_AX] = 0, [TF_REG_BX] = 3, [TF_REG_CX] = 2, [TF_REG_DX] = 1,
	[TF_REG_SI] = 4, [TF_REG_DI] = 5, [TF_REG_BP] = 6, [TF_REG_SP] = 7,
	[TF_REG_IP] = 16, [TF_REG_FLAGS] = -1, [TF_REG_CS] = -1, [TF_REG_SS] = -1,
	[TF_REG_DS] = -1, [TF_REG_ES] = -1, [TF_REG_FS] = -1, [TF_REG_GS] = -1,
	[TF_REG_R8] = 8, [TF_REG_R9] = 9, [TF_REG_R10] = 10, [TF_REG_R11] = 11,
	[TF_REG_R12] = 12, [TF_REG_R13] = 13, [TF_REG_R14] = 14, [TF_REG_R15] = 15,
};

typedef struct {
	uint64_t r[NREGS];
	uint32_t valid;
	uint64_t cfa;
	const uint8_t *stack;
	uint64_t lo, hi;   /* the copied stack's addresses */
} state;

static bool mem_read(const state *st, uint64_t addr, unsigned size, uint64_t *out)
{
	uint64_t v = 0;
	if (addr < st->lo || addr >= st->hi || st->hi - addr < size || size > 8)
		return false;
	memcpy(&v, st->stack + (addr - st->lo), size); /* x86-64 is little-endian */
	*out = v;
	return true;
}

static bool reg_get(const state *st, unsigned reg, uint64_t *out)
{
	if (reg >= NREGS || !(st->valid & (1u << reg)))
		return false;
	*out = st->r[reg];
	return true;
}

static int find_op(const Dwarf_Op *ops, size_t n, uint64_t offset)
{
	for (size_t i = 1; i < n; i++) /* ops[0] may be libdw's synthetic CFA push */
		if (ops[i].offset == offset)
			return (int)i;
	return ops[0].offset == offset ? 0 : -1;
}

/* A DWARF expression over the current frame's registers and the copied
 * stack; `cfa_ok` says whether DW_OP_call_frame_cfa may be used. */
static bool eval(const state *st, const Dwarf_Op *ops, size_t n, bool cfa_ok, uint64_t *out)
{
	uint64_t stk[64], a, b;
	size_t sp = 0, steps = 0;

#define PUSH(v) do { uint64_t v_ = (v); if (sp == TF_ARRAY_SIZE(stk)) return false; stk[sp++] = v_; } while (0)
#define NEED(k) do { if (sp < (k)) return false; } while (0)
	for (size_t i = 0; i < n; i++) {
		const Dwarf_Op *op = &ops[i];
		uint8_t atom = op->atom;
		if (++steps > 1000)
			return false; /* a loop in a corrupt expression */
		if (atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			PUSH((uint64_t)(atom - DW_OP_lit0));
			continue;
		}
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			if (!reg_get(st, atom - DW_OP_breg0, &a))
				return false;
			PUSH(a + op->number);
			continue;
		}
		switch (atom) {
		case DW_OP_addr: case DW_OP_const1u: case DW_OP_const1s: case DW_OP_const2u:
		case DW_OP_const2s: case DW_OP_const4u: case DW_OP_const4s: case DW_OP_const8u:
		case DW_OP_const8s: case DW_OP_constu: case DW_OP_consts:
			PUSH(op->number);
			break;
		case DW_OP_bregx:
			if (!reg_get(st, (unsigned)op->number, &a))
				return false;
			PUSH(a + op->number2);
			break;
		case DW_OP_call_frame_cfa:
			if (!cfa_ok)
				return false;
			PUSH(st->cfa);
			break;
		case DW_OP_dup: NEED(1); PUSH(stk[sp - 1]); break;
		case DW_OP_drop: NEED(1); sp--; break;
		case DW_OP_over: NEED(2); PUSH(stk[sp - 2]); break;
		case DW_OP_pick:
			if (op->number >= sp)
				return false;
			PUSH(stk[sp - 1 - op->number]);
			break;
		case DW_OP_swap: NEED(2); a = stk[sp - 1]; stk[sp - 1] = stk[sp - 2]; stk[sp - 2] = a; break;
		case DW_OP_rot:
			NEED(3);
			a = stk[sp - 1];
			stk[sp - 1] = stk[sp - 2];
			stk[sp - 2] = stk[sp - 3];
			stk[sp - 3] = a;
			break;
		case DW_OP_deref:
			NEED(1);
			if (!mem_read(st, stk[sp - 1], 8, &stk[sp - 1]))
				return false;
			break;
		case DW_OP_deref_size:
			NEED(1);
			if (!mem_read(st, stk[sp - 1], (unsigned)op->number, &stk[sp - 1]))
				return false;
			break;
		case DW_OP_plus_uconst: NEED(1); stk[sp - 1] += op->number; break;
		case DW_OP_neg: NEED(1); stk[sp - 1] = -stk[sp - 1]; break;
		case DW_OP_not: NEED(1); stk[sp - 1] = ~stk[sp - 1]; break;
		case DW_OP_abs:
			NEED(1);
			if ((int64_t)stk[sp - 1] < 0)
				stk[sp - 1] = -stk[sp - 1];
			break;
		case DW_OP_plus: case DW_OP_minus: case DW_OP_mul: case DW_OP_and: case DW_OP_or:
		case DW_OP_xor: case DW_OP_shl: case DW_OP_shr: case DW_OP_shra: case DW_OP_div:
		case DW_OP_mod: case DW_OP_eq: case DW_OP_ne: case DW_OP_lt: case DW_OP_gt:
		case DW_OP_le: case DW_OP_ge:
			NEED(2);
			b = stk[--sp];
			a = stk[sp - 1];
			switch (atom) {
			case DW_OP_plus: a += b; break;
			case DW_OP_minus: a -= b; break;
			case DW_OP_mul: a *= b; break;
			case DW_OP_and: a &= b; break;
			case DW_OP_or: a |= b; break;
			case DW_OP_xor: a ^= b; break;
			case DW_OP_shl: a = b < 64 ? a << b : 0; break;
			case DW_OP_shr: a = b < 64 ? a >> b : 0; break;
			case DW_OP_shra: a = (uint64_t)((int64_t)a >> (b < 64 ? b : 63)); break;
			case DW_OP_div:
				if (b == 0 || ((int64_t)a == INT64_MIN && (int64_t)b == -1))
					return false;
				a = (uint64_t)((int64_t)a / (int64_t)b);
				break;
			case DW_OP_mod:
				if (b == 0)
					return false;
				a %= b;
				break;
			case DW_OP_eq: a = a == b; break;
			case DW_OP_ne: a = a != b; break;
			case DW_OP_lt: a = (int64_t)a < (int64_t)b; break;
			case DW_OP_gt: a = (int64_t)a > (int64_t)b; break;
			case DW_OP_le: a = (int64_t)a <= (int64_t)b; break;
			case DW_OP_ge: a = (int64_t)a >= (int64_t)b; break;
			}
			stk[sp - 1] = a;
			break;
		case DW_OP_skip:
		case DW_OP_bra: {
			if (atom == DW_OP_bra) {
				NEED(1);
				if (stk[--sp] == 0)
					break;
			}
			int t = find_op(ops, n, op->offset + 3 + op->number);
			if (t < 0)
				return false;
			i = (size_t)t - 1;
			break;
		}
		case DW_OP_nop:
			break;
		default:
			return false;
		}
	}
#undef PUSH
#undef NEED
	if (!sp)
		return false;
	*out = stk[sp - 1];
	return true;
}

/* ---- compiling libdw's rules into rows --------------------------------- */

static void compile_reg(tf_sym_cfi_cache *c, rule *r, Dwarf_Op *ops, size_t nops)
{
	memset(r, 0, sizeof(*r));
	if (nops == 0) {
		/* libdw: ops NULL = same value, ops_mem = undefined */
		r->kind = ops ? R_UNDEF : R_SAME;
		return;
	}
	bool value = ops[nops - 1].atom == DW_OP_stack_value;
	size_t n = value ? nops - 1 : nops;
	if (n >= 1 && n <= 2 && ops[0].atom == DW_OP_call_frame_cfa &&
	    (n == 1 || ops[1].atom == DW_OP_plus_uconst)) {
		r->kind = value ? R_VAL_OFFSET : R_OFFSET;
		r->off = n == 2 ? (int64_t)ops[1].number : 0;
		return;
	}
	if (n == 1 && !value && (ops[0].atom == DW_OP_regx ||
				 (ops[0].atom >= DW_OP_reg0 && ops[0].atom <= DW_OP_reg31))) {
		uint64_t reg = ops[0].atom == DW_OP_regx ? ops[0].number : (uint64_t)(ops[0].atom - DW_OP_reg0);
		r->kind = reg < NREGS ? R_REG : R_UNDEF;
		r->reg = (uint8_t)reg;
		return;
	}
	if (n == 0 || n > UINT16_MAX) {
		r->kind = R_UNDEF;
		return;
	}
	Dwarf_Op *copy = tf_arena_alloc(c->arena, n * sizeof(Dwarf_Op));
	memcpy(copy, ops, n * sizeof(Dwarf_Op));
	r->kind = value ? R_VAL_EXPR : R_EXPR;
	r->ops = copy;
	r->nops = (uint16_t)n;
}

static void compile_row(tf_sym_cfi_cache *c, row *rw, Dwarf_Frame *f)
{
	Dwarf_Op *ops, mem[3];
	size_t nops;
	bool signal = false;

	int ra = dwarf_frame_info(f, NULL, NULL, &signal);
	if (ra < 0 || ra >= NREGS || dwarf_frame_cfa(f, &ops, &nops) != 0 || nops == 0)
		return;
	rw->signal = signal;
	rw->ra = (uint8_t)ra;
	if (nops == 1 && (ops[0].atom == DW_OP_bregx ||
			  (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31))) {
		bool x = ops[0].atom == DW_OP_bregx;
		uint64_t reg = x ? ops[0].number : (uint64_t)(ops[0].atom - DW_OP_breg0);
		if (reg >= NREGS)
			return;
		rw->cfa.kind = R_VAL_OFFSET;
		rw->cfa.reg = (uint8_t)reg;
		rw->cfa.off = (int64_t)(x ? ops[0].number2 : ops[0].number);
	} else {
		if (nops > UINT16_MAX)
			return;
		Dwarf_Op *copy = tf_arena_alloc(c->arena, nops * sizeof(Dwarf_Op));
		memcpy(copy, ops, nops * sizeof(Dwarf_Op));
		rw->cfa.kind = R_VAL_EXPR;
		rw->cfa.ops = copy;
		rw->cfa.nops = (uint16_t)nops;
	}
	for (int reg = 0; reg < NREGS; reg++) {
		if (dwarf_frame_register(f, reg, mem, &ops, &nops) != 0)
			rw->regs[reg].kind = R_UNDEF;
		else
			compile_reg(c, &rw->regs[reg], ops, nops);
	}
	rw->found = true;
}

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_sym_cfi_cache *c = ctx;
	const tf_sym_key *a = &c->keys.v[idx], *b = key;
	return a->space == b->space && a->addr == b->addr;
}

static const row *cfi_row(tf_symbolizer *s, uint32_t mi, uint64_t vaddr)
{
	tf_sym_cfi_cache *c = s->cfi;
	tf_sym_key k = { mi, vaddr };
	uint64_t h = tf_hash_combine(tf_hash_u64(mi), vaddr);
	uint32_t i = tf_htab_find(&c->index, h, key_eq, c, &k);

	if (i != TF_HTAB_NONE)
		return &c->rows.v[i];
	tf_sym_module *m = s->mods.v[mi];
	row rw;
	Dwarf_Frame *f = NULL;

	memset(&rw, 0, sizeof(rw));
	if (!m->cfi_loaded) {
		m->cfi_loaded = true;
		m->eh_cfi = dwfl_module_eh_cfi(m->mod, &m->eh_bias);
	}
	if (m->eh_cfi && dwarf_cfi_addrframe(m->eh_cfi, vaddr - m->eh_bias, &f) == 0) {
		compile_row(c, &rw, f);
	} else {
		free(f);
		f = NULL;
		/* .debug_frame only where .eh_frame has nothing: it means
		 * opening the separate debug file */
		if (!m->dwarf_cfi_tried) {
			m->dwarf_cfi_tried = true;
			m->dwarf_cfi = dwfl_module_dwarf_cfi(m->mod, &m->dwarf_bias);
		}
		if (m->dwarf_cfi && dwarf_cfi_addrframe(m->dwarf_cfi, vaddr - m->dwarf_bias, &f) == 0)
			compile_row(c, &rw, f);
	}
	if (!rw.found) {
		/* Go binaries carry no CFI, but Go's table knows each pc's frame
		 * size: CFA = SP + size + 8, the return address just below */
		tf_sym_module_symbol(m, vaddr);
		if (m->go) {
			GElf_Addr gbias;
			dwfl_module_getelf(m->mod, &gbias);
			int d = tf_sym_go_spdelta(m->go, vaddr - gbias);
			if (d >= 0) {
				rw.found = true;
				rw.ra = DW_RIP;
				rw.cfa.kind = R_VAL_OFFSET;
				rw.cfa.reg = DW_RSP;
				rw.cfa.off = d + 8;
				for (int reg = 0; reg < NREGS; reg++)
					rw.regs[reg].kind = R_SAME;
				rw.regs[DW_RIP].kind = R_OFFSET;
				rw.regs[DW_RIP].off = -8;
				rw.regs[DW_RSP].kind = R_UNDEF;
				if (d >= 16) { /* the frame saved BP below the return address */
					rw.regs[DW_RBP].kind = R_OFFSET;
					rw.regs[DW_RBP].off = -16;
				}
			}
		}
	}
	free(f);
	i = (uint32_t)c->rows.n;
	tf_vec_push(&c->rows, rw);
	tf_vec_push(&c->keys, k);
	tf_htab_insert(&c->index, h, i);
	return &c->rows.v[i];
}

/* ---- the walk ---------------------------------------------------------- */

static bool rule_value(const state *st, const rule *r, unsigned reg, uint64_t *out)
{
	uint64_t a;

	switch (r->kind) {
	case R_SAME:
		return reg_get(st, reg, out);
	case R_OFFSET:
		return mem_read(st, st->cfa + (uint64_t)r->off, 8, out);
	case R_VAL_OFFSET:
		*out = st->cfa + (uint64_t)r->off;
		return true;
	case R_REG:
		return reg_get(st, r->reg, out);
	case R_EXPR:
		return eval(st, r->ops, r->nops, true, &a) && mem_read(st, a, 8, out);
	case R_VAL_EXPR:
		return eval(st, r->ops, r->nops, true, out);
	default:
		return false;
	}
}

enum { STEP_OK, STEP_END, STEP_FAIL };

static int step_cfi(state *st, const row *rw)
{
	state next;
	uint64_t v;

	if (rw->regs[rw->ra].kind == R_UNDEF)
		return STEP_END; /* the outermost frame */
	if (rw->cfa.kind == R_VAL_OFFSET) {
		if (!reg_get(st, rw->cfa.reg, &v))
			return STEP_FAIL;
		st->cfa = v + (uint64_t)rw->cfa.off;
	} else if (!eval(st, rw->cfa.ops, rw->cfa.nops, false, &st->cfa)) {
		return STEP_FAIL;
	}
	next = *st;
	next.valid = 0;
	for (unsigned reg = 0; reg < NREGS; reg++) {
		if (rule_value(st, &rw->regs[reg], reg, &v)) {
			next.r[reg] = v;
			next.valid |= 1u << reg;
		}
	}
	if (!(next.valid & (1u << rw->ra)))
		return STEP_FAIL;
	next.r[DW_RIP] = next.r[rw->ra];
	next.valid |= 1u << DW_RIP;
	/* the caller's stack pointer is the CFA unless the CFI says more */
	if (rw->regs[DW_RSP].kind == R_UNDEF || rw->regs[DW_RSP].kind == R_SAME) {
		next.r[DW_RSP] = st->cfa;
		next.valid |= 1u << DW_RSP;
	}
	*st = next;
	return STEP_OK;
}

static int step_fp(state *st)
{
	uint64_t fp, saved_fp, ra;

	if (!reg_get(st, DW_RBP, &fp) || fp < st->r[DW_RSP] ||
	    !mem_read(st, fp, 8, &saved_fp) || !mem_read(st, fp + 8, 8, &ra))
		return STEP_FAIL;
	st->r[DW_RBP] = saved_fp;
	st->r[DW_RSP] = fp + 16;
	st->r[DW_RIP] = ra;
	st->valid = (1u << DW_RBP) | (1u << DW_RSP) | (1u << DW_RIP);
	return STEP_OK;
}

/*
 * Whether `pc` is in one of CPython's perf trampolines (3.12+ with -X perf
 * or PYTHONPERFSUPPORT): a copy, per code object, of
 *
 *     sub $8, %rsp        or    push %rbp
 *     call *%rcx                mov %rsp, %rbp
 *     add $8, %rsp              call *%rcx
 *     ret                       pop %rbp ; ret
 *
 * (3.12.0-3.12.x, then with a frame pointer), in anonymous memory without
 * CFI, and named "py::qualname:file" in the perf map.
 */
static bool in_py_trampoline(tf_symbolizer *s, tf_sym_proc *p, uint64_t pc)
{
	uint32_t ji = p ? tf_sym_jit_for(s, p) : UINT32_MAX;
	const tf_sym_ivl *e = ji != UINT32_MAX ? tf_sym_ivls_find(&s->jits.v[ji].entries, pc) : NULL;
	return e && strncmp(s->strs.strs.v[e->val], "py::", 4) == 0;
}

/* Out of a trampoline, from its return address after the call: the
 * return address is above one word (the padding, or the saved frame
 * pointer, which the callee's rules restored as the trampoline's own
 * stack pointer when it is one). */
static int step_py_trampoline(state *st)
{
	uint64_t sp = st->r[DW_RSP], ra, saved_fp;
	bool with_fp = (st->valid & (1u << DW_RBP)) && st->r[DW_RBP] == sp;

	if (!mem_read(st, sp + 8, 8, &ra) || (with_fp && !mem_read(st, sp, 8, &saved_fp)))
		return STEP_FAIL;
	if (with_fp)
		st->r[DW_RBP] = saved_fp;
	st->r[DW_RSP] = sp + 16;
	st->r[DW_RIP] = ra;
	st->valid |= (1u << DW_RSP) | (1u << DW_RIP);
	return STEP_OK;
}

size_t tf_symbolizer_unwind_ex(tf_symbolizer *s, uint32_t pid, uint64_t time,
			       const uint64_t *regs, uint64_t regs_mask,
			       const uint8_t *stack, uint64_t stack_size,
			       uint64_t *ips, size_t max, bool *truncated)
{
	state st;
	size_t n = 0, k = 0;
	bool exact = true, complete = false;
	(void)time;

	s->stats.unwinds++;
	if (truncated)
		*truncated = true;
	if (!s->cfi) {
		s->cfi = tf_xcalloc(1, sizeof(*s->cfi));
		s->cfi->arena = tf_arena_new();
	}
	memset(&st, 0, sizeof(st));
	for (int r = 0; r < TF_REG_COUNT; r++) {
		if (!(regs_mask & (1ULL << r)))
			continue;
		if (dwarf_of_perf[r] >= 0) {
			st.r[dwarf_of_perf[r]] = regs[k];
			st.valid |= 1u << dwarf_of_perf[r];
		}
		k++;
	}
	if (!max || !(st.valid & (1u << DW_RIP)) || !(st.valid & (1u << DW_RSP))) {
		s->stats.unwind_failed++;
		return 0;
	}
	st.stack = stack;
	st.lo = st.r[DW_RSP];
	st.hi = stack && stack_size && st.lo + stack_size > st.lo ? st.lo + stack_size : st.lo;
	ips[n++] = st.r[DW_RIP];

	tf_sym_proc *p = tf_sym_proc_get(s, pid, false);
	while (n < max) {
		uint64_t pc = st.r[DW_RIP], sp = st.r[DW_RSP], vaddr;
		/* a return address points after the call, maybe past the
		 * function's end: look up the call itself */
		uint64_t look = exact ? pc : pc - 1;
		tf_sym_map *map = p ? tf_sym_proc_find_map(p, look) : NULL;
		const row *rw = NULL;
		int r;

		if (map && map->kind != TF_SYM_MAP_ANON && tf_sym_map_vaddr(s, map, look, &vaddr))
			rw = cfi_row(s, s->files.v[map->file].module, vaddr);
		if (rw && rw->found) {
			r = step_cfi(&st, rw);
			exact = rw->signal;
		} else if (!exact && (!map || map->kind == TF_SYM_MAP_ANON) &&
			   in_py_trampoline(s, p, look)) {
			r = step_py_trampoline(&st);
		} else {
			r = step_fp(&st);
			exact = false;
		}
		if (r == STEP_END) {
			complete = true;
			break;
		}
		/* the stack grows down: a caller's frame is above its callee's */
		if (r != STEP_OK || st.r[DW_RIP] == 0 || st.r[DW_RSP] <= sp)
			break;
		ips[n++] = st.r[DW_RIP];
	}
	if (n == 1 && !complete)
		s->stats.unwind_failed++;
	else if (!complete)
		s->stats.unwind_truncated++;
	if (truncated)
		*truncated = !complete;
	return n;
}

size_t tf_symbolizer_unwind(tf_symbolizer *s, uint32_t pid, uint64_t time,
			    const uint64_t *regs, uint64_t regs_mask,
			    const uint8_t *stack, uint64_t stack_size,
			    uint64_t *ips, size_t max)
{
	return tf_symbolizer_unwind_ex(s, pid, time, regs, regs_mask, stack, stack_size,
				       ips, max, NULL);
}

void tf_sym_cfi_cache_free(tf_sym_cfi_cache *c)
{
	if (!c)
		return;
	tf_vec_free(&c->rows);
	tf_vec_free(&c->keys);
	tf_htab_free(&c->index);
	tf_arena_free(c->arena);
	free(c);
}
