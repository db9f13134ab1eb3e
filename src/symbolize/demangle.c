/*
 * demangle.c - C++ and Rust symbol names made readable, through libiberty
 * (the demangler of binutils and gdb, so names read the way c++filt and
 * perf show them).
 *
 * A function is demangled once per symbolizer however many addresses it
 * covers: results are cached by the interned raw name.
 */
#include "symbolize/symbolize_int.h"

#include <ctype.h>
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

/* Whether the `len` bytes at `id` are a source name the demangler prints
 * as it is spelled: all there, not an anonymous namespace, not Rust's
 * escapes ($LT$, ..) nor its hash (h and 16 hex digits). */
static bool plain_source_name(const char *id, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!id[i] || id[i] == '$' || id[i] == '.')
			return false;
	if (len >= 8 && id[0] == '_' && memcmp(id, "_GLOBAL_", 8) == 0)
		return false;
	if (len == 17 && id[0] == 'h') {
		size_t i = 1;
		while (i < len && isxdigit((unsigned char)id[i]))
			i++;
		return i < len;
	}
	return true;
}

/* "::" and `part` after the `*n` bytes of `buf`, as much as fits below
 * `cap`; false when not all of it did. */
static bool lead_append(char *buf, size_t cap, size_t *n, const char *part, size_t len)
{
	size_t room = cap - 1 - *n;
	size_t sep = *n ? 2 : 0, put_sep = sep < room ? sep : room;
	memcpy(buf + *n, "::", put_sep);
	*n += put_sep;
	room -= put_sep;
	size_t put = len < room ? len : room;
	memcpy(buf + *n, part, put);
	*n += put;
	buf[*n] = '\0';
	return put_sep == sep && put == len;
}

size_t tf_sym_mangled_lead(const char *name, char *buf, size_t cap)
{
	size_t n = 0;

	if (!cap)
		return 0;
	buf[0] = '\0';
	if (!name || name[0] != '_' || name[1] != 'Z')
		return 0;
	const char *p = name + 2;
	if (*p == 'Z') /* a local entity: its function's name comes first */
		p++;
	bool nested = *p == 'N';
	if (nested) {
		p++;
		while (*p == 'r' || *p == 'V' || *p == 'K')
			p++;
		if (*p == 'R' || *p == 'O')
			p++;
	}
	if (p[0] == 'S' && p[1] == 't') {
		if (!lead_append(buf, cap, &n, "std", 3))
			return n;
		p += 2;
	} else if (p[0] == 'S' && p[1] && strchr("abisod", p[1])) {
		/* std::allocator, std::basic_string, std::string, ... */
		lead_append(buf, cap, &n, "std", 3);
		return n;
	}
	/* source names, up to the first part printed otherwise: template
	 * arguments, a constructor, an operator, a substitution, an ABI tag;
	 * an unscoped name has one */
	for (;;) {
		if (*p == 'L' && p[1] >= '1' && p[1] <= '9') /* internal linkage */
			p++;
		if (*p < '1' || *p > '9')
			break;
		size_t len = 0;
		while (*p >= '0' && *p <= '9' && len < 1000000)
			len = len * 10 + (size_t)(*p++ - '0');
		if (!plain_source_name(p, len) || !lead_append(buf, cap, &n, p, len))
			break;
		p += len;
		if (!nested)
			break;
	}
	return n;
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
