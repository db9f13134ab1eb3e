/*
 * kernel.c - kernel addresses through /proc/kallsyms, and the legacy
 * [vsyscall] page.
 *
 * Only symbols, no lines: the kernel's DWARF is rarely installed and a
 * profile of a test suite wants to see "in the kernel, doing read", not
 * which line of it. kallsyms is read once, on the first kernel address.
 * When kptr_restrict hides the addresses (they all read as zero), kernel
 * frames are shown as "[kernel]".
 */
#include "symbolize/symbolize_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	uint64_t addr;
	uint32_t name, module; /* offsets into the kallsyms text; module 0 = vmlinux */
} ksym;

struct tf_sym_kernel {
	tf_buf text;
	TF_VEC(ksym) syms;
	uint32_t kname;        /* strtab id of "[kernel.kallsyms]" */
	bool kname_set;
};

static int cmp_ksym(const void *a, const void *b)
{
	const ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

tf_sym_kernel *tf_sym_kernel_read(void)
{
	tf_sym_kernel *k = tf_xcalloc(1, sizeof(*k));
	bool nonzero = false;

	if (tf_file_read(&k->text, "/proc/kallsyms") != 0)
		return k;
	/* offset 0 of the text must not be a name: an empty module */
	for (char *p = k->text.ptr, *end = p + k->text.len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		*nl = '\0';
		char *q;
		uint64_t addr = strtoull(p, &q, 16);
		if (q != p && q[0] == ' ' && q[1] && q[2] == ' ') {
			char type = q[1];
			char *name = q + 3, *mod = strchr(name, '\t');
			if (mod) {
				*mod++ = '\0';
				char *close = strchr(mod, ']');
				if (close)
					close[1] = '\0';
			}
			if (type == 't' || type == 'T' || type == 'w' || type == 'W') {
				ksym e = { addr, (uint32_t)(name - k->text.ptr),
					   mod ? (uint32_t)(mod - k->text.ptr) : 0 };
				tf_vec_push(&k->syms, e);
				nonzero |= addr != 0;
			}
		}
		p = nl + 1;
	}
	if (!nonzero) {
		k->syms.n = 0; /* kptr_restrict: all addresses read as 0 */
		return k;
	}
	qsort(k->syms.v, k->syms.n, sizeof(ksym), cmp_ksym);
	return k;
}

bool tf_sym_kernel_lookup(tf_symbolizer *s, uint64_t addr, uint32_t *name, uint32_t *module)
{
	if (!s->kernel_loaded) {
		s->kernel_loaded = true;
		s->kernel = tf_sym_kernel_read();
	}
	tf_sym_kernel *k = s->kernel;
	if (!k->kname_set) {
		k->kname = tf_strtab_intern(&s->strs, "[kernel.kallsyms]", 17);
		k->kname_set = true;
	}
	size_t lo = 0, hi = k->syms.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->syms.v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* nothing below, or past the last symbol by more than a big function */
	if (lo == 0 || (lo == k->syms.n && addr - k->syms.v[lo - 1].addr > (1u << 20)))
		return false;
	const ksym *e = &k->syms.v[lo - 1];
	const char *n = k->text.ptr + e->name;
	*name = tf_strtab_intern(&s->strs, n, strlen(n));
	if (e->module) {
		const char *m = k->text.ptr + e->module;
		*module = tf_strtab_intern(&s->strs, m, strlen(m));
	} else {
		*module = k->kname;
	}
	return true;
}

void tf_sym_kernel_free(tf_sym_kernel *k)
{
	if (!k)
		return;
	tf_buf_free(&k->text);
	tf_vec_free(&k->syms);
	free(k);
}

#define VSYSCALL_START 0xffffffffff600000ULL

bool tf_sym_is_vsyscall(uint64_t addr)
{
	return addr >= VSYSCALL_START && addr < VSYSCALL_START + 4096;
}

const char *tf_sym_vsyscall_name(uint64_t addr)
{
	/* the page's three fixed entry points (arch/x86/entry/vsyscall) */
	switch ((addr - VSYSCALL_START) >> 10) {
	case 0: return "gettimeofday";
	case 1: return "time";
	case 2: return "getcpu";
	default: return "[vsyscall]";
	}
}
