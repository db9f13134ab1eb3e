/*
 * symbolizer.c - the symbolizer's front: options, the address cache, and
 * the lookup that routes an address to the kernel, the [vsyscall] page, a
 * module, a JIT map, or an honest "[unknown]".
 *
 * Every distinct (module, address) is resolved once and becomes a tf_symloc
 * with a dense id; later lookups of it are a process lookup, a binary
 * search over the process's mappings and one hash probe. Frames and their
 * strings live in an arena and the interning table, so the pointers handed
 * out stay valid until the symbolizer is freed.
 */
#include "symbolize/symbolize_int.h"
#include "testflame/python.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
	SPACE_MODULE = 1,   /* index = module, addr = ELF vaddr */
	SPACE_KERNEL,       /* addr = kernel address */
	SPACE_JIT,          /* index = jit map */
	SPACE_UNKNOWN,      /* index = strtab id of the mapping name */
	SPACE_FILE,         /* index = file that gave no module, addr = file offset */
	SPACE_VSYSCALL,
};

void tf_symbolizer_opts_init(tf_symbolizer_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->demangle = true;
	o->inline_frames = true;
	o->kernel = true;
}

int tf_symbolizer_new(tf_symbolizer **out, const tf_symbolizer_opts *opts)
{
	tf_symbolizer *s = tf_xcalloc(1, sizeof(*s));

	if (opts)
		s->opts = *opts;
	else
		tf_symbolizer_opts_init(&s->opts);
	/* the caller's string may not outlive this call */
	if (s->opts.cache_dir)
		s->opts.cache_dir = tf_xstrdup(s->opts.cache_dir);
	if (s->opts.persist_dir)
		s->opts.persist_dir = tf_xstrdup(s->opts.persist_dir);
	tf_strtab_init(&s->strs);
	s->arena = tf_arena_new();
	s->vdso_file = UINT32_MAX;
	elf_version(EV_CURRENT);
	*out = s;
	return 0;
}

void tf_symbolizer_free(tf_symbolizer *s)
{
	if (!s)
		return;
	tf_sym_procs_free(s);
	for (size_t i = 0; i < s->mods.n; i++)
		tf_sym_module_free(s->mods.v[i]);
	tf_vec_free(&s->mods);
	tf_vec_free(&s->node_pids);
	tf_htab_free(&s->mod_index);
	tf_sym_files_free(s);
	tf_sym_kernel_free(s->kernel);
	free(s->lookup_cache);
	tf_sym_jits_free(s);
	tf_pymodcache_free(s->pymods);
	tf_sym_cfi_cache_free(s->cfi);
	tf_vec_free(&s->locs);
	tf_vec_free(&s->keys);
	tf_htab_free(&s->loc_index);
	tf_vec_free(&s->scratch);
	tf_vec_free(&s->demangled);
	tf_strtab_free(&s->strs);
	tf_arena_free(s->arena);
	free((char *)s->opts.cache_dir);
	free((char *)s->opts.persist_dir);
	free(s);
}

void tf_symbolizer_stats_get(const tf_symbolizer *s, tf_symbolizer_stats *out)
{
	*out = s->stats;
	out->symlocs = s->locs.n;
	out->kallsyms_cached = tf_sym_kernel_cached(s->kernel);
}

/* Node's binary, or Debian's libnode.so.N that its node links. */
static bool is_node(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return strcmp(b, "node") == 0 || strcmp(b, "nodejs") == 0 || strncmp(b, "libnode.so", 10) == 0;
}

/* A process's JIT map, read as it exits; a Node process's, which only
 * testflame asked for, removed once read. */
static void jit_read_exit(tf_symbolizer *s, const tf_rec_event *ev)
{
	tf_sym_jit_read(s, ev->pid, ev->time);
	for (size_t i = 0; i < s->node_pids.n; i++) {
		if (s->node_pids.v[i] != ev->pid)
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/tmp/perf-%u.map", ev->pid);
		unlink(path);
		s->node_pids.v[i] = s->node_pids.v[--s->node_pids.n];
		break;
	}
}

void tf_symbolizer_remove_node_maps(tf_symbolizer *s, bool on)
{
	s->remove_node_maps = on;
}

void tf_symbolizer_live(tf_symbolizer *s, const tf_rec_event *ev)
{
	bool deleted;
	uint32_t file;


	switch (ev->type) {
	case TF_REC_MMAP:
		if (!ev->mmap.filename || tf_sym_classify(ev->mmap.filename) != TF_SYM_MAP_FILE ||
		    (ev->mmap.prot && !(ev->mmap.prot & PROT_EXEC)))
			break;
		file = tf_sym_file_for_event(s, ev, &deleted);
		if (ev->mmap.has_fd)
			tf_sym_file_adopt(s, file, ev->mmap.fd);
		tf_sym_file_pin(s, file, ev->pid, ev->mmap.start, ev->mmap.start + ev->mmap.len);
		if (s->remove_node_maps && is_node(ev->mmap.filename))
			tf_vec_push(&s->node_pids, ev->pid);
		break;
	case TF_REC_EXIT:
		if (ev->pid == ev->tid)
			jit_read_exit(s, ev);
		break;
	default:
		break;
	}
}

/* ---- the address cache ------------------------------------------------- */

static bool key_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_symbolizer *s = ctx;
	const tf_sym_key *a = &s->keys.v[idx], *b = key;
	return a->space == b->space && a->addr == b->addr;
}

static inline uint64_t key_hash(const tf_sym_key *k)
{
	return tf_hash_combine(tf_hash_u64(k->space), k->addr);
}

static const char *str(tf_symbolizer *s, uint32_t id)
{
	return s->strs.strs.v[id];
}

/* Make a symloc of s->scratch (one fallback frame named `fallback` when
 * scratch is empty). */
static const tf_symloc *add_loc(tf_symbolizer *s, const tf_sym_key *k, uint64_t h,
				const char *module, const char *build_id,
				uint64_t module_addr, uint64_t lo, uint64_t hi,
				bool resolved, const char *fallback)
{
	tf_symloc *l = tf_arena_alloc(s->arena, sizeof(*l));

	if (!s->scratch.n) {
		tf_frame f = { fallback, fallback, NULL, 0, 0 };
		tf_vec_push(&s->scratch, f);
	}
	tf_frame *frames = tf_arena_alloc(s->arena, s->scratch.n * sizeof(tf_frame));
	memcpy(frames, s->scratch.v, s->scratch.n * sizeof(tf_frame));
	l->id = (uint32_t)s->locs.n;
	l->frames = frames;
	l->nframes = (uint32_t)s->scratch.n;
	l->module = module;
	l->build_id = build_id;
	l->module_addr = module_addr;
	l->module_start = lo;
	l->module_end = hi;
	l->resolved = resolved;
	tf_vec_push(&s->locs, l);
	tf_vec_push(&s->keys, *k);
	tf_htab_insert(&s->loc_index, h, l->id);
	s->scratch.n = 0;
	return l;
}

static const char *intern_fmt(tf_symbolizer *s, const char *fmt, const char *a, uint64_t x)
{
	char buf[512];
	int n = snprintf(buf, sizeof(buf), fmt, a, (unsigned long long)x);
	if (n < 0)
		n = 0;
	return str(s, tf_strtab_intern(&s->strs, buf, TF_MIN((size_t)n, sizeof(buf) - 1)));
}

static const tf_symloc *lookup_module(tf_symbolizer *s, uint32_t mi, uint64_t vaddr)
{
	tf_sym_key k = { ((uint64_t)SPACE_MODULE << 32) | mi, vaddr };
	uint64_t h = key_hash(&k);
	uint32_t id = tf_htab_find(&s->loc_index, h, key_eq, s, &k);

	if (id != TF_HTAB_NONE)
		return s->locs.v[id];
	tf_sym_module *m = s->mods.v[mi];
	bool ok = tf_sym_resolve(s, m, vaddr);
	const char *fallback = ok ? NULL : intern_fmt(s, "%s+0x%llx", str(s, m->base), vaddr);
	return add_loc(s, &k, h, str(s, m->name), m->build_id, vaddr, m->lo, m->hi, ok, fallback);
}

static const tf_symloc *lookup_file(tf_symbolizer *s, uint32_t fi, uint64_t off)
{
	tf_sym_key k = { ((uint64_t)SPACE_FILE << 32) | fi, off };
	uint64_t h = key_hash(&k);
	uint32_t id = tf_htab_find(&s->loc_index, h, key_eq, s, &k);

	if (id != TF_HTAB_NONE)
		return s->locs.v[id];
	const tf_sym_file *f = &s->files.v[fi];
	s->scratch.n = 0;
	return add_loc(s, &k, h, str(s, f->name), NULL, off, 0, 0, false,
		       intern_fmt(s, "%s+0x%llx", str(s, f->base), off));
}

static const tf_symloc *lookup_kernel(tf_symbolizer *s, uint64_t addr)
{
	tf_sym_key k = { (uint64_t)SPACE_KERNEL << 32, addr };
	uint64_t h = key_hash(&k);
	uint32_t id = tf_htab_find(&s->loc_index, h, key_eq, s, &k);
	uint32_t name, module;

	if (id != TF_HTAB_NONE)
		return s->locs.v[id];
	s->scratch.n = 0;
	if (s->opts.kernel && tf_sym_kernel_lookup(s, addr, &name, &module)) {
		tf_frame f = { str(s, name), str(s, name), NULL, 0, 0 };
		tf_vec_push(&s->scratch, f);
		return add_loc(s, &k, h, str(s, module), NULL, addr, 0, 0, true, NULL);
	}
	return add_loc(s, &k, h, "[kernel.kallsyms]", NULL, addr, 0, 0, false, "[kernel]");
}

static const tf_symloc *lookup_vsyscall(tf_symbolizer *s, uint64_t addr)
{
	tf_sym_key k = { (uint64_t)SPACE_VSYSCALL << 32, addr };
	uint64_t h = key_hash(&k);
	uint32_t id = tf_htab_find(&s->loc_index, h, key_eq, s, &k);

	if (id != TF_HTAB_NONE)
		return s->locs.v[id];
	s->scratch.n = 0;
	const char *n = tf_sym_vsyscall_name(addr);
	return add_loc(s, &k, h, "[vsyscall]", NULL, addr, 0, 0, n[0] != '[', n);
}

/*
 * CPython 3.12+'s perf map names a trampoline "py::QUALNAME:FILE": shown as
 * the frames read from the interpreter name the function (module.qualname,
 * in its file; python.h), so that both agree and the file is known.
 */
static void py_jit_frame(tf_symbolizer *s, tf_frame *f)
{
	const char *name = f->function, *colon;
	tf_buf b = TF_BUF_INIT;

	if (strncmp(name, "py::", 4) != 0 || !(colon = strchr(name + 4, ':')) || colon == name + 4 ||
	    !colon[1])
		return;
	if (!s->pymods)
		s->pymods = tf_pymodcache_new();
	f->file = str(s, tf_strtab_intern(&s->strs, colon + 1, strlen(colon + 1)));
	f->system_name = str(s, tf_strtab_intern(&s->strs, name + 4, (size_t)(colon - name - 4)));
	tf_py_module_name(&b, s->pymods, f->file);
	if (b.len)
		tf_buf_putc(&b, '.');
	tf_buf_puts(&b, f->system_name);
	f->function = str(s, tf_strtab_intern(&s->strs, b.ptr, b.len));
	tf_buf_free(&b);
}

static const tf_symloc *lookup_anon(tf_symbolizer *s, tf_sym_proc *p, const tf_sym_map *map,
				    uint64_t addr)
{
	uint32_t ji = p ? tf_sym_jit_for(s, p) : UINT32_MAX;
	const tf_sym_ivl *e = ji != UINT32_MAX ? tf_sym_ivls_find(&s->jits.v[ji].entries, addr) : NULL;
	tf_sym_key k;

	if (e)
		k = (tf_sym_key){ ((uint64_t)SPACE_JIT << 32) | ji, addr };
	else
		k = (tf_sym_key){ ((uint64_t)SPACE_UNKNOWN << 32) | (map ? map->name : 0), addr };
	uint64_t h = key_hash(&k);
	uint32_t id = tf_htab_find(&s->loc_index, h, key_eq, s, &k);
	if (id != TF_HTAB_NONE)
		return s->locs.v[id];
	s->scratch.n = 0;
	if (e) {
		tf_frame f = { str(s, e->val), str(s, e->val), NULL, 0, 0 };
		py_jit_frame(s, &f);
		tf_vec_push(&s->scratch, f);
		return add_loc(s, &k, h, "[jit]", NULL, addr, 0, 0, true, NULL);
	}
	const char *module = map && map->name ? str(s, map->name) : "[unknown]";
	return add_loc(s, &k, h, module, NULL, addr, 0, 0, false, "[unknown]");
}

/*
 * A sample's frames repeat the addresses of the samples before it, so the
 * last answer for each (process, address) is kept in a direct-mapped table
 * in front of the process, mapping and module lookups. Any change to an
 * address space (tf_symbolizer_event) starts a new generation, which
 * empties the table at once.
 */

const tf_symloc *tf_symbolizer_lookup(tf_symbolizer *s, uint32_t pid, uint64_t time,
				      uint64_t addr, bool kernel)
{
	const tf_symloc *l;
	(void)time; /* events arrive in time order: the current state is right */

	s->stats.lookups++;
	uint32_t key = kernel ? UINT32_MAX : pid;
	/* sized to the run: a few dozen samples need no 256 KiB table, whose
	 * zeroed pages cost a short run a millisecond */
	if (TF_UNLIKELY(s->stats.lookups > 4 * (uint64_t)s->lookup_slots &&
			s->lookup_slots < TF_SYM_LOOKUP_SLOTS_MAX)) {
		free(s->lookup_cache);
		s->lookup_slots = s->lookup_slots ? TF_MIN(s->lookup_slots * 4, TF_SYM_LOOKUP_SLOTS_MAX)
						  : TF_SYM_LOOKUP_SLOTS_FIRST;
		s->lookup_cache = tf_xcalloc(s->lookup_slots, sizeof(*s->lookup_cache));
		s->lookup_gen = 1;
	}
	struct tf_sym_lookup_slot *slot =
		&s->lookup_cache[tf_hash_combine(key, addr) & (s->lookup_slots - 1)];
	if (slot->gen == s->lookup_gen && slot->addr == addr && slot->pid == key) {
		l = slot->loc;
		if (!l->resolved)
			s->stats.unresolved++;
		return l;
	}
	if (kernel) {
		l = lookup_kernel(s, addr);
	} else if (tf_sym_is_vsyscall(addr)) {
		l = lookup_vsyscall(s, addr);
	} else {
		tf_sym_proc *p = tf_sym_proc_get(s, pid, false);
		tf_sym_map *map = p ? tf_sym_proc_find_map(p, addr) : NULL;
		uint64_t vaddr;
		if (map && map->kind != TF_SYM_MAP_ANON) {
			if (tf_sym_map_vaddr(s, map, addr, &vaddr))
				l = lookup_module(s, s->files.v[map->file].module, vaddr);
			else
				l = lookup_file(s, map->file, addr - map->start + map->pgoff);
		} else {
			l = lookup_anon(s, p, map, addr);
		}
	}
	if (!l->resolved)
		s->stats.unresolved++;
	slot->addr = addr;
	slot->pid = key;
	slot->gen = s->lookup_gen;
	slot->loc = l;
	return l;
}

/* Whether a function's raw name may begin, demangled, with one of
 * `prefixes` (of lengths `lens`): its mangled name's plain beginning
 * settles most without demangling it (what 400,000 C++ names cost). */
static bool may_begin(const char *raw, bool demangle, const char *const *prefixes,
		      const size_t *lens, size_t nprefixes, size_t longest)
{
	char lead[256];
	size_t ln;

	if (demangle && raw[0] == '_' && (raw[1] == 'Z' || raw[1] == 'R')) {
		if (longest >= sizeof(lead))
			return true;
		ln = tf_sym_mangled_lead(raw, lead, longest + 1);
		for (size_t i = 0; i < nprefixes; i++)
			if (!ln || (lead[0] == prefixes[i][0] &&
				    memcmp(lead, prefixes[i], ln < lens[i] ? ln : lens[i]) == 0))
				return true;
		return false;
	}
	for (size_t i = 0; i < nprefixes; i++)
		if (strncmp(raw, prefixes[i], lens[i]) == 0)
			return true;
	return false;
}

/* Whether a string table read in place (`len` bytes) may name a function
 * beginning with one of `prefixes` at all: it then holds the prefix as it
 * is (a C name) or, mangled, its first part as a source name ("5Catch"
 * of "Catch::Session::run"), which a substitution can only repeat. One
 * search of the table where a binary of no test framework (the most)
 * would have every symbol's name decoded. The std names that mangling
 * abbreviates are not looked for: true. */
static bool table_may_name(const char *tab, size_t len, const char *const *prefixes,
			   const size_t *lens, size_t nprefixes)
{
	for (size_t i = 0; i < nprefixes; i++) {
		const char *end = strstr(prefixes[i], "::");
		size_t first = end ? (size_t)(end - prefixes[i]) : lens[i];
		char src[64];
		int n = snprintf(src, sizeof(src), "%zu%.*s", first, (int)first, prefixes[i]);
		if (n < 0 || (size_t)n >= sizeof(src) || first == 0 ||
		    (first == 3 && memcmp(prefixes[i], "std", 3) == 0))
			return true;
		if (memmem(tab, len, prefixes[i], lens[i]) || memmem(tab, len, src, (size_t)n))
			return true;
	}
	return false;
}

size_t tf_symbolizer_functions_named(tf_symbolizer *s, uint32_t pid, uint64_t addr,
				     const char *const *prefixes,
				     void (*fn)(void *ctx, const char *name), void *ctx)
{
	tf_sym_proc *p = tf_sym_proc_get(s, pid, false);
	tf_sym_map *map = p ? tf_sym_proc_find_map(p, addr) : NULL;
	size_t n = 0, nprefixes = 0, longest = 0;
	size_t lens[16];

	if (!map || map->kind != TF_SYM_MAP_FILE || map->file == UINT32_MAX ||
	    !tf_sym_file_module(s, map->file))
		return 0;
	for (; prefixes && prefixes[nprefixes] && nprefixes < TF_ARRAY_SIZE(lens); nprefixes++) {
		lens[nprefixes] = strlen(prefixes[nprefixes]);
		if (lens[nprefixes] > longest)
			longest = lens[nprefixes];
	}
	if (prefixes && prefixes[nprefixes]) /* more than we check: all of them */
		prefixes = NULL;
	tf_sym_module *m = s->mods.v[s->files.v[map->file].module];
	/* a binary of no test framework (the most) is known to be one from
	 * the run before: its symbol table is not read again (the search of
	 * a C++ test binary's names was a tenth of a warm run) */
	uint64_t key = 0;
	for (size_t i = 0; prefixes && i < nprefixes; i++)
		key = tf_hash_bytes(prefixes[i], lens[i] + 1, key + 1);
	if (key && tf_sym_pcache_no_names(m, key)) {
		s->stats.names_kept++;
		return 0;
	}
	tf_sym_module_symbols(m);
	if (prefixes && m->symstr && !table_may_name(m->symstr, m->symstr_len, prefixes, lens, nprefixes)) {
		tf_sym_pcache_put_no_names(m, key);
		return 0;
	}
	for (size_t i = 0; i < m->syms.v.n; i++) {
		if (m->symstr && m->syms.v.v[i].val >= m->symstr_len)
			continue; /* a damaged kept index */
		const char *name = m->symstr ? m->symstr + m->syms.v.v[i].val
					     : m->symnames.v[m->syms.v.v[i].val];
		if (prefixes && !may_begin(name, s->opts.demangle, prefixes, lens, nprefixes, longest))
			continue;
		char *d = s->opts.demangle ? tf_sym_demangle_dup(name) : NULL;
		fn(ctx, d ? d : name);
		free(d);
		n++;
	}
	if (key && !n)
		tf_sym_pcache_put_no_names(m, key);
	return n;
}

size_t tf_symbolizer_functions(tf_symbolizer *s, uint32_t pid, uint64_t addr,
			       void (*fn)(void *ctx, const char *name), void *ctx)
{
	return tf_symbolizer_functions_named(s, pid, addr, NULL, fn, ctx);
}

bool tf_symbolizer_has_frame_pointers(tf_symbolizer *s, uint32_t pid, uint64_t time,
				      uint64_t addr)
{
	tf_sym_proc *p = tf_sym_proc_get(s, pid, false);
	tf_sym_map *map = p ? tf_sym_proc_find_map(p, addr) : NULL;
	uint64_t vaddr;
	(void)time;

	/* JIT code and unknown memory: frame pointers are all there is */
	if (!map || map->kind == TF_SYM_MAP_ANON || !tf_sym_map_vaddr(s, map, addr, &vaddr))
		return true;
	return tf_sym_module_has_fp(s->mods.v[s->files.v[map->file].module]);
}
