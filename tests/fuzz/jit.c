/*
 * jit.c - fuzz target: the perf-map reader (src/symbolize/jit.c), the
 * /tmp/perf-PID.map files JITs write (Node, Python 3.12+, Java's agent):
 * "START SIZE name" lines in hex, read through tf_sym_jit_add(), the
 * reader apart from the file; then addresses looked up the way samples
 * in a JIT's anonymous memory are, through tf_symbolizer_lookup().
 *
 * Beyond not crashing: a lookup finds what a plain scan of the entries
 * finds, the last line whose range holds the address (the JIT reused the
 * memory), or none; a CPython trampoline's name ("py::QUALNAME:FILE")
 * comes out as its function in its file.
 */
#include "fuzz.h"
#include "symbolize/symbolize_int.h"

#define PID 4242
#define MAX_CHECKED 16

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

/* The frame of an entry named `name`: that name, or for CPython's
 * trampolines ("py::QUALNAME:FILE") QUALNAME in FILE, shown under its
 * module (the frames read from the interpreter name it so). */
static void check_name(const tf_frame *f, bool resolved, uint64_t addr, const char *name)
{
	const char *colon = strncmp(name, "py::", 4) == 0 ? strchr(name + 4, ':') : NULL;
	FUZZ_CHECK(resolved, "0x%llx: not resolved, entry '%s'", (unsigned long long)addr, name);
	if (colon && colon != name + 4 && colon[1]) {
		size_t ql = (size_t)(colon - name - 4), fl = strlen(f->function);
		FUZZ_CHECK(f->system_name && strlen(f->system_name) == ql &&
				   !memcmp(f->system_name, name + 4, ql) && f->file &&
				   !strcmp(f->file, colon + 1) && fl >= ql &&
				   !memcmp(f->function + fl - ql, name + 4, ql),
			   "0x%llx: '%s' ('%s' in '%s') for '%s'", (unsigned long long)addr,
			   f->function, f->system_name ? f->system_name : "", f->file ? f->file : "",
			   name);
		return;
	}
	FUZZ_CHECK(strcmp(f->function, name) == 0, "0x%llx: '%s', not '%s'",
		   (unsigned long long)addr, f->function, name);
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
		check_name(&l->frames[0], l->resolved, addr, s->strs.strs.v[want->val]);
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
