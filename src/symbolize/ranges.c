/*
 * ranges.c - an index of possibly overlapping address ranges.
 *
 * JIT perf maps list code regions that later entries may supersede, and
 * DWARF nests functions inside functions; both need "which range contains
 * this address, and if several, which one wins". Ranges are sorted by start
 * with a running maximum of their ends, so a query is one binary search and
 * a short walk back over the few ranges that can still reach the address.
 */
#include "symbolize/symbolize_int.h"

#include <stdlib.h>

void tf_sym_ivls_add(tf_sym_ivls *x, uint64_t lo, uint64_t hi, uint32_t val, uint32_t rank)
{
	if (hi <= lo)
		return;
	tf_sym_ivl e = { lo, hi, val, rank };
	tf_vec_push(&x->v, e);
	x->built = false;
}

static int cmp_ivl(const void *a, const void *b)
{
	const tf_sym_ivl *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return 0;
}

void tf_sym_ivls_build(tf_sym_ivls *x)
{
	if (x->built)
		return;
	bool sorted = true; /* as the symbol cache gives them back */
	for (size_t i = 1; i < x->v.n && sorted; i++)
		sorted = cmp_ivl(&x->v.v[i - 1], &x->v.v[i]) <= 0;
	if (!sorted)
		qsort(x->v.v, x->v.n, sizeof(tf_sym_ivl), cmp_ivl);
	free(x->maxhi);
	x->maxhi = tf_xmalloc((x->v.n ? x->v.n : 1) * sizeof(uint64_t));
	uint64_t m = 0;
	for (size_t i = 0; i < x->v.n; i++) {
		if (x->v.v[i].hi > m)
			m = x->v.v[i].hi;
		x->maxhi[i] = m;
	}
	x->built = true;
}

const tf_sym_ivl *tf_sym_ivls_find(const tf_sym_ivls *x, uint64_t addr)
{
	size_t lo = 0, hi = x->v.n;
	const tf_sym_ivl *best = NULL;

	if (!x->built)
		return NULL;
	/* first range starting after addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->v.v[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		if (x->maxhi[i] <= addr)
			break;
		const tf_sym_ivl *e = &x->v.v[i];
		if (addr < e->hi && (!best || e->rank > best->rank))
			best = e;
	}
	return best;
}

void tf_sym_ivls_free(tf_sym_ivls *x)
{
	tf_vec_free(&x->v);
	free(x->maxhi);
	x->maxhi = NULL;
	x->built = false;
}
