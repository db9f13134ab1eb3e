/*
 * jit.c - fuzz target: the perf-map reader (src/symbolize/jit.c), the
 * /tmp/perf-PID.map files JITs write (Node, Python 3.12+, Java's agent):
 * "START SIZE name" lines in hex, read through tf_sym_jit_add(), the
 * reader apart from the file; then addresses looked up the way samples
 * in a JIT's anonymous memory are, through tf_symbolizer_lookup().
 *
 * Beyond not crashing: a lookup finds what a plain scan of the entries
 * finds, the last line whose range holds the address (the JIT reused the
 * memory), or none.
 */
#include "fuzz.h"
#include "symbolize/symbolize_int.h"

#define PID 4242
#define MAX_CHECKED 64

/* The entry a scan finds for addr: the highest rank holding it. */
static const tf_sym_ivl *scan(const tf_sym_ivls *x, uint64_t addr)
{
	const tf_sym_ivl *best = NULL;
	for (size_t i = 0; i < x->v.n; i++) {
		const tf_sym_ivl *e = &x->v.v[i];
		if (e->lo <= addr && addr < e->hi && (!best || e->rank > best->rank))
			best = e;
	}
	return best;
}

static void check(tf_symbolizer *s, const tf_sym_ivls *x, uint64_t addr)
{
	const tf_sym_ivl *want = scan(x, addr), *got = tf_sym_ivls_find(x, addr);
	const tf_symloc *l;

	FUZZ_CHECK(want == got, "0x%llx: the index finds rank %d, a scan rank %d",
		   (unsigned long long)addr, got ? (int)got->rank : -1,
		   want ? (int)want->rank : -1);
	if (tf_sym_is_vsyscall(addr))
		return; /* the [vsyscall] page, whatever the map says */
	l = tf_symbolizer_lookup(s, PID, 0, addr, false);
	FUZZ_CHECK(l && l->nframes == 1 && l->frames[0].function, "no frame");
	if (want)
		FUZZ_CHECK(l->resolved && strcmp(l->frames[0].function, s->strs.strs.v[want->val]) == 0,
			   "0x%llx: '%s', not '%s'", (unsigned long long)addr,
			   l->frames[0].function, s->strs.strs.v[want->val]);
	else
		FUZZ_CHECK(!l->resolved, "0x%llx: '%s' where no entry is",
			   (unsigned long long)addr, l->frames[0].function);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_symbolizer *s;
	tf_symbolizer_opts o;
	char *text = fuzz_cstr(data, size);
	uint32_t ji;

	tf_symbolizer_opts_init(&o);
	o.kernel = false;
	FUZZ_CHECK(tf_symbolizer_new(&s, &o) == 0, "%s", tf_error_last());
	ji = tf_sym_jit_add(s, PID, UINT64_MAX, text, size);
	/* a process with no mapping known: its addresses go to the JIT map */
	tf_sym_proc_get(s, PID, true);
	const tf_sym_ivls *x = &s->jits.v[ji].entries;
	for (size_t i = 0; i < x->v.n && i < MAX_CHECKED; i++) {
		const tf_sym_ivl e = x->v.v[i];
		check(s, x, e.lo);
		check(s, x, e.hi - 1);
		check(s, x, e.hi);
		check(s, x, e.lo + (e.hi - e.lo) / 2);
		if (e.lo)
			check(s, x, e.lo - 1);
	}
	check(s, x, 0);
	check(s, x, UINT64_MAX);
	tf_symbolizer_free(s);
	free(text);
	return 0;
}
