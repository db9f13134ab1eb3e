/*
 * demangle.c - C++ and Rust symbol names made readable, through libiberty
 * (the demangler of binutils and gdb, so names read the way c++filt and
 * perf show them).
 *
 * A function is demangled once per symbolizer however many addresses it
 * covers: results are cached by the interned raw name.
 */
#include "symbolize/symbolize_int.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

char *tf_sym_demangle_dup(const char *name)
{
	/* Itanium C++ and legacy Rust start with _Z, Rust v0 with _R */
	if (!name || name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);
}

uint32_t tf_sym_demangle(tf_symbolizer *s, const char *name)
{
	uint32_t raw = tf_strtab_intern(&s->strs, name, strlen(name));

	if (!s->opts.demangle)
		return raw;
	if (raw < s->demangled.n && s->demangled.v[raw])
		return s->demangled.v[raw] - 1;
	char *d = tf_sym_demangle_dup(name);
	uint32_t id = d ? tf_strtab_intern(&s->strs, d, strlen(d)) : raw;
	free(d);
	if (raw >= s->demangled.n) {
		size_t old = s->demangled.n;
		tf_vec_reserve(&s->demangled, (size_t)raw + 1);
		memset(s->demangled.v + old, 0, (s->demangled.cap - old) * sizeof(uint32_t));
		s->demangled.n = s->demangled.cap;
	}
	s->demangled.v[raw] = id + 1;
	return id;
}
