/*
 * kernel.c - kernel addresses through /proc/kallsyms, and the legacy
 * [vsyscall] page.
 *
 * Only symbols, no lines: the kernel's DWARF is rarely installed and a
 * profile of a test suite wants to see "in the kernel, doing read", not
 * which line of it. kallsyms is read once, on the first kernel address.
 * When kptr_restrict hides the addresses (they all read as zero), kernel
 * frames are shown as "[kernel]".
 *
 * Reading /proc/kallsyms costs about 50 ms of the kernel formatting 120k
 * lines, more than symbolizing a whole run of a test suite. So its sorted
 * function symbols are kept in the user cache (tf_user_cache_dir), in one
 * file that stands for this boot with this set of modules: the boot id
 * (KASLR picks the addresses once per boot) and a hash of /proc/modules'
 * names and load addresses. Any difference, or a file that does not add
 * up, and kallsyms is read again and the file replaced. perf keeps its
 * copy of kallsyms in ~/.debug for the same reason.
 */
#include "symbolize/symbolize_int.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
	uint64_t addr;
	uint32_t name, module; /* offsets into the names; module 0 = vmlinux */
} ksym;

struct tf_sym_kernel {
	tf_buf text;           /* the names: kallsyms' text, or a mapped cache */
	TF_VEC(ksym) syms;
	const char *names;     /* text.ptr, or inside map */
	const ksym *sv;        /* syms.v, or inside map */
	size_t sn;
	size_t names_len;      /* bounds the offsets of a mapped cache */
	void *map;
	size_t map_len;
	bool cached;           /* came from the cache file */
	uint32_t kname;        /* strtab id of "[kernel.kallsyms]" */
	bool kname_set;
};

/* The cache file: this header, sn ksyms, then names_len bytes of names. */
#define KCACHE_MAGIC "TFKSYM01"
typedef struct {
	char magic[8];
	uint32_t ksym_size;    /* sizeof(ksym): another layout is another format */
	uint32_t pad;
	uint64_t nsyms, names_len, modules;
	char boot_id[48];
} kcache_hdr;

static int cmp_ksym(const void *a, const void *b)
{
	const ksym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* What the cache file must match: the boot and the loaded modules. */
static bool kcache_key(kcache_hdr *h)
{
	tf_buf b = TF_BUF_INIT;
	uint64_t hash = 0;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, KCACHE_MAGIC, 8);
	h->ksym_size = sizeof(ksym);
	if (tf_file_read(&b, "/proc/sys/kernel/random/boot_id") != 0 || b.len < 8) {
		tf_buf_free(&b);
		tf_error_clear();
		return false;
	}
	memcpy(h->boot_id, b.ptr, b.len < sizeof(h->boot_id) - 1 ? b.len : sizeof(h->boot_id) - 1);
	b.len = 0;
	/* "name size refs deps state address": name and address, not the refs */
	if (tf_file_read(&b, "/proc/modules") == 0) {
		for (char *line = b.ptr; line && *line;) {
			char *nl = strchr(line, '\n'), *f[6];
			int n = 0;
			if (nl)
				*nl = '\0';
			for (char *t = strtok(line, " "); t && n < 6; t = strtok(NULL, " "))
				f[n++] = t;
			if (n == 6) {
				hash = tf_hash_bytes(f[0], strlen(f[0]), hash);
				hash = tf_hash_bytes(f[5], strlen(f[5]), hash);
			}
			line = nl ? nl + 1 : NULL;
		}
	} else {
		tf_error_clear(); /* a kernel without modules */
	}
	h->modules = hash;
	tf_buf_free(&b);
	return true;
}

static bool kcache_load(tf_sym_kernel *k, const char *path, const kcache_hdr *want)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	void *map;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(kcache_hdr) ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return false;
	}
	close(fd);
	const kcache_hdr *h = map;
	size_t len = (size_t)st.st_size;
	bool ok = memcmp(h, want, offsetof(kcache_hdr, nsyms)) == 0 &&
		  h->modules == want->modules && memcmp(h->boot_id, want->boot_id, sizeof(h->boot_id)) == 0 &&
		  h->nsyms < len / sizeof(ksym) && h->names_len > 0 &&
		  sizeof(*h) + h->nsyms * sizeof(ksym) + h->names_len == len;
	const ksym *sv = (const ksym *)(h + 1);
	const char *names = (const char *)(sv + (ok ? h->nsyms : 0));
	/* the entries' offsets are checked when they are used: checking all
	 * 120k here would touch every page, half the time the cache saves */
	if (ok)
		ok = names[0] == '\0' && names[h->names_len - 1] == '\0';
	if (!ok) {
		munmap(map, len);
		return false;
	}
	k->map = map;
	k->map_len = len;
	k->sv = sv;
	k->sn = h->nsyms;
	k->names = names;
	k->names_len = h->names_len;
	k->cached = true;
	return true;
}

/* Best effort: a cache we cannot write costs the next run time, nothing else. */
static void kcache_save(const tf_sym_kernel *k, const char *dir, const char *path, kcache_hdr *h)
{
	tf_buf names = TF_BUF_INIT;
	ksym *out = tf_xmalloc((k->sn ? k->sn : 1) * sizeof(ksym));
	const char *last_mod = NULL;
	uint32_t last_off = 0;

	tf_buf_put(&names, "", 1); /* offset 0: vmlinux's empty module */
	for (size_t i = 0; i < k->sn; i++) {
		const char *n = k->names + k->sv[i].name;
		out[i].addr = k->sv[i].addr;
		out[i].name = (uint32_t)names.len;
		tf_buf_put(&names, n, strlen(n) + 1);
		out[i].module = 0;
		if (k->sv[i].module) {
			const char *m = k->names + k->sv[i].module;
			/* a module's symbols come together: keep one copy of its name */
			if (!last_mod || strcmp(last_mod, m) != 0) {
				last_mod = m;
				last_off = (uint32_t)names.len;
				tf_buf_put(&names, m, strlen(m) + 1);
			}
			out[i].module = last_off;
		}
	}
	h->nsyms = k->sn;
	h->names_len = names.len;
	tf_atomic_file f;
	if (tf_mkdir_p(dir, 0700) == 0 && tf_atomic_open(&f, path) == 0) {
		if (fwrite(h, sizeof(*h), 1, f.fp) == 1 &&
		    (!k->sn || fwrite(out, sizeof(ksym), k->sn, f.fp) == k->sn) &&
		    fwrite(names.ptr, 1, names.len, f.fp) == names.len)
			tf_atomic_commit(&f);
		else
			tf_atomic_abort(&f);
	}
	tf_error_clear();
	free(out);
	tf_buf_free(&names);
}

static void kallsyms_parse(tf_sym_kernel *k)
{
	bool nonzero = false;

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
	if (!nonzero)
		k->syms.n = 0; /* kptr_restrict: all addresses read as 0 */
	else
		qsort(k->syms.v, k->syms.n, sizeof(ksym), cmp_ksym);
	k->sv = k->syms.v;
	k->sn = k->syms.n;
	k->names = k->text.ptr;
	k->names_len = k->text.len + 1;
}

tf_sym_kernel *tf_sym_kernel_read(const char *cache_dir)
{
	tf_sym_kernel *k = tf_xcalloc(1, sizeof(*k));
	kcache_hdr key;
	char *path = NULL;
	bool keyed = cache_dir && kcache_key(&key);

	if (keyed) {
		path = tf_xasprintf("%s/kallsyms", cache_dir);
		if (kcache_load(k, path, &key)) {
			free(path);
			return k;
		}
	}
	if (tf_file_read(&k->text, "/proc/kallsyms") == 0) {
		kallsyms_parse(k);
		if (keyed && k->sn)
			kcache_save(k, cache_dir, path, &key);
	} else {
		tf_error_clear();
	}
	free(path);
	return k;
}

bool tf_sym_kernel_cached(const tf_sym_kernel *k)
{
	return k && k->cached;
}

bool tf_sym_kernel_lookup(tf_symbolizer *s, uint64_t addr, uint32_t *name, uint32_t *module)
{
	if (!s->kernel_loaded) {
		s->kernel_loaded = true;
		s->kernel = tf_sym_kernel_read(s->opts.persist_dir);
	}
	tf_sym_kernel *k = s->kernel;
	if (!k->kname_set) {
		k->kname = tf_strtab_intern(&s->strs, "[kernel.kallsyms]", 17);
		k->kname_set = true;
	}
	size_t lo = 0, hi = k->sn;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->sv[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* nothing below, or past the last symbol by more than a big function */
	if (lo == 0 || (lo == k->sn && addr - k->sv[lo - 1].addr > (1u << 20)))
		return false;
	const ksym *e = &k->sv[lo - 1];
	if (e->name >= k->names_len || e->module >= k->names_len)
		return false; /* a damaged cache file: no name rather than a wild read */
	const char *n = k->names + e->name;
	*name = tf_strtab_intern(&s->strs, n, strlen(n));
	if (e->module) {
		const char *m = k->names + e->module;
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
	if (k->map)
		munmap(k->map, k->map_len);
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
