/*
 * module.c - one ELF binary, opened once through libdwfl however many
 * processes and paths map it.
 *
 * Each distinct binary (by build-id, or by file when it has none) gets its
 * own Dwfl, reported at its link-time addresses, so a module address is
 * the ELF vaddr the binary's symbols and DWARF use. A process address turns
 * into one through the mapping's file offset and the PT_LOAD segments: that
 * takes care of PIE and ASLR without trusting where libdwfl would place
 * the file. Separate debug info is found the standard way (build-id under
 * /usr/lib/debug/.build-id, then .gnu_debuglink).
 *
 * It also answers --call-graph auto's question, whether the binary keeps
 * frame pointers, from its functions' prologues.
 */
#include "symbolize/symbolize_int.h"

#include <elfutils/libdwelf.h>
#include <gelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static char *debuginfo_path;

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = tf_sym_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

static bool mod_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_symbolizer *s = ctx;
	const char *b = s->mods.v[idx]->build_id;
	return b && strcmp(b, key) == 0;
}

char *tf_sym_hex(const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *h = tf_xmalloc(2 * n + 1);
	for (size_t i = 0; i < n; i++) {
		h[2 * i] = digits[p[i] >> 4];
		h[2 * i + 1] = digits[p[i] & 15];
	}
	h[2 * n] = '\0';
	return h;
}

int tf_sym_module_open(tf_symbolizer *s, tf_sym_file *file, int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr ehdr;
	size_t nph = 0;
	tf_sym_module *m = NULL;
	char *bid = NULL;
	const void *bidp;
	uint32_t idx;

	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &ehdr) ||
	    (ehdr.e_type != ET_EXEC && ehdr.e_type != ET_DYN) ||
	    elf_getphdrnum(elf, &nph) != 0 || nph == 0)
		goto bad;
	ssize_t bidn = dwelf_elf_gnu_build_id(elf, &bidp);
	if (bidn > 0) {
		bid = tf_sym_hex(bidp, (size_t)bidn);
		idx = tf_htab_find(&s->mod_index, tf_hash_bytes(bid, strlen(bid), 0), mod_eq, s, bid);
		if (idx != TF_HTAB_NONE) {
			/* the same binary under another name: share its DWARF */
			free(bid);
			elf_end(elf);
			close(fd);
			file->module = idx;
			return 0;
		}
	}
	m = tf_xcalloc(1, sizeof(*m));
	m->has_fp = -1;
	m->build_id = bid;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		tf_sym_load l = { ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz, ph.p_flags };
		tf_vec_push(&m->loads, l);
	}
	elf_end(elf);
	elf = NULL;
	if (!m->loads.n)
		goto bad;

	m->dwfl = dwfl_begin(&offline_callbacks);
	if (!m->dwfl)
		goto bad;
	dwfl_report_begin(m->dwfl);
	/* base 0 with add_p_vaddr: module addresses are the ELF's own vaddrs */
	m->mod = dwfl_report_elf(m->dwfl, file->path, file->path, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod)
		goto bad;
	fd = -1; /* libdwfl owns it now */
	Dwarf_Addr lo, hi;
	void **userdata;
	dwfl_module_info(m->mod, &userdata, &lo, &hi, NULL, NULL, NULL, NULL);
	*userdata = s; /* for tf_sym_find_debuginfo */
	m->lo = lo;
	m->hi = hi;
	m->name = file->name;
	m->base = file->base;
	idx = (uint32_t)s->mods.n;
	tf_vec_push(&s->mods, m);
	if (m->build_id)
		tf_htab_insert(&s->mod_index, tf_hash_bytes(m->build_id, strlen(m->build_id), 0), idx);
	tf_sym_pcache_open(s, m);
	file->module = idx;
	s->stats.modules++;
	return 0;

bad:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (m)
		tf_sym_module_free(m);
	else
		free(bid);
	return tf_error_set(TF_EINVAL, "'%s' is not a usable ELF file", file->path);
}

static void free_symbols(tf_sym_module *m);

void tf_sym_module_free(tf_sym_module *m)
{
	if (!m)
		return;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	for (size_t i = 0; i < m->cus.n; i++) {
		tf_sym_ivls_free(&m->cus.v[i].funcs);
		tf_sym_lines_free(&m->cus.v[i].lines);
		tf_vec_free(&m->cus.v[i].offs);
	}
	tf_vec_free(&m->cus);
	tf_htab_free(&m->cu_index);
	tf_vec_free(&m->loads);
	free_symbols(m);
	tf_vec_free(&m->symnames);
	free(m->syms_path);
	tf_sym_go_free(m->go);
	tf_sym_pcache_free(m->pc);
	free(m->build_id);
	free(m);
}

static bool in_exec_section(Elf *elf, GElf_Word shndx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf && shndx != SHN_UNDEF && shndx < SHN_LORESERVE ? elf_getscn(elf, shndx) : NULL;
	return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

typedef struct {
	uint64_t addr, size;
	uint32_t name, rank;
} raw_sym;

static int cmp_raw_sym(const void *a, const void *b)
{
	const raw_sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* By address, then rank (the order tf_sym_ivls_build wants, so it need
 * not sort again): a radix sort of address and rank as one key, a test
 * binary holding a hundred thousand symbols and more. */
static void sort_symbols(raw_sym *v, size_t n)
{
	bool fits = true;
	if (n < 2)
		return;
	for (size_t i = 0; i < n && fits; i++)
		fits = v[i].addr < (UINT64_C(1) << 59) && v[i].rank < 16;
	if (!fits) {
		qsort(v, n, sizeof(raw_sym), cmp_raw_sym);
		return;
	}
	tf_keyed *k = tf_xmalloc((n + 1) * sizeof(*k));
	raw_sym *out = tf_xmalloc((n + 1) * sizeof(*out));
	for (size_t i = 0; i < n; i++) {
		k[i].key = v[i].addr << 4 | v[i].rank;
		k[i].val = i;
	}
	tf_sort_keyed(k, n);
	for (size_t i = 0; i < n; i++)
		out[i] = v[k[i].val];
	memcpy(v, out, n * sizeof(*v));
	free(out);
	free(k);
}

/*
 * libdwfl's own address-to-symbol search scans the whole table each time;
 * with thousands of symbols per library that is most of the cost of a
 * cold address. The function symbols are sorted once instead. Among
 * aliases, global beats weak beats local, and a sized symbol beats an
 * unsized one, which only reaches up to the next symbol.
 */
typedef TF_VEC(raw_sym) raw_syms;

static void add_symbol(tf_sym_module *m, raw_syms *raw, const char *name, uint64_t addr,
		       uint64_t size, int type, int bind)
{
	uint32_t rank = (bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1) + (size ? 4 : 0) +
			(type != STT_NOTYPE ? 8 : 0);
	raw_sym r = { addr, size, (uint32_t)m->symnames.n, rank };
	tf_vec_push(raw, r);
	tf_vec_push(&m->symnames, name);
}

/*
 * The main file's symbol table read in place, when it is the one libdwfl
 * would use as it is (64-bit, this machine's byte order): its .symtab,
 * or, in a stripped library, the .symtab of the separate debug file that
 * libdwfl found for it (same count), else its .dynsym when libdwfl found
 * nothing else (same file, same count). That is what
 * dwfl_module_getsym_info() answers symbol by symbol, at a tenth of the
 * cost (it looks up each symbol's section and file): a C++ test binary
 * holds tens of thousands of symbols, libstdc++ six thousand, libc's
 * debug file ten thousand, and a warm run that meets one new function
 * paid for all of them. False when the table is not of that kind:
 * libdwfl reads it then.
 */
static bool map_kept_symbols(tf_sym_module *m);

static bool has_section(Elf *elf, const char *want)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (name && strcmp(name, want) == 0)
			return true;
	}
	return false;
}

static bool load_symtab_fast(tf_sym_module *m, raw_syms *raw)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(m->mod, &bias);
	Elf_Scn *scn = NULL, *symscn = NULL;
	GElf_Shdr sh, symsh = { 0 };
	size_t nsec;
	char *ident;

	if (!elf || !(ident = elf_getident(elf, NULL)) || ident[EI_CLASS] != ELFCLASS64 ||
	    ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    elf_getshdrnum(elf, &nsec) != 0)
		return false;
	for (int pass = 0; pass < 2 && !symscn; pass++) {
		Elf64_Word want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		scn = NULL;
		while ((scn = elf_nextscn(elf, scn)))
			if (gelf_getshdr(scn, &sh) && sh.sh_type == want) {
				symscn = scn;
				symsh = sh;
				break;
			}
		if (symscn && want == SHT_DYNSYM && has_section(elf, ".gopclntab"))
			return false; /* a cgo Go binary: its runtime table names more */
		if (symscn && want == SHT_DYNSYM) {
			/* libdwfl's table is this one only if it has nothing
			 * better (a debug file's .symtab, a mini debuginfo) */
			GElf_Sym y;
			GElf_Word shndx;
			Elf *from = NULL;
			Dwarf_Addr b;
			GElf_Addr a;
			int n = dwfl_module_getsymtab(m->mod);
			if (n <= 1 || !dwfl_module_getsym_info(m->mod, 1, &y, &a, &shndx, &from, &b))
				return false;
			if (from != elf) {
				/* its separate debug file's .symtab (libc6-dbg's for
				 * libc and ld.so), read in place the same way */
				symscn = scn = NULL;
				if (!from || !(ident = elf_getident(from, NULL)) ||
				    ident[EI_CLASS] != ELFCLASS64 ||
				    ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
												 : ELFDATA2MSB) ||
				    elf_getshdrnum(from, &nsec) != 0)
					return false;
				while ((scn = elf_nextscn(from, scn)))
					if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB) {
						symscn = scn;
						symsh = sh;
						break;
					}
				if (!symscn)
					return false;
				elf = from;
				bias = b;
			}
			if (!symsh.sh_entsize || (size_t)n != symsh.sh_size / symsh.sh_entsize)
				return false;
		}
	}
	if (!symscn || symsh.sh_entsize != sizeof(Elf64_Sym))
		return false;
	Elf_Data *d = elf_getdata(symscn, NULL);
	Elf_Scn *strscn = elf_getscn(elf, symsh.sh_link);
	Elf_Data *sd = strscn ? elf_getdata(strscn, NULL) : NULL;
	if (!d || !d->d_buf || !sd || !sd->d_buf || !sd->d_size)
		return false;
	/* names by their offset in the table, which ends in a NUL; a run
	 * before kept the sorted index of this table: mapped, nothing read */
	if (((const char *)sd->d_buf)[sd->d_size - 1] != '\0')
		return false;
	m->symstr = sd->d_buf;
	m->symstr_len = sd->d_size;
	if (m->syms_path && map_kept_symbols(m))
		return true;
	/* which sections hold code */
	bool *exec = tf_xcalloc(nsec + 1, sizeof(bool));
	for (size_t i = 1; i < nsec; i++) {
		Elf_Scn *x = elf_getscn(elf, i);
		exec[i] = x && gelf_getshdr(x, &sh) && (sh.sh_flags & SHF_EXECINSTR);
	}
	const Elf64_Sym *syms = d->d_buf;
	const char *strs = sd->d_buf;
	size_t n = d->d_size / sizeof(Elf64_Sym);
	for (size_t i = 1; i < n; i++) {
		const Elf64_Sym *y = &syms[i];
		int type = ELF64_ST_TYPE(y->st_info), bind = ELF64_ST_BIND(y->st_info);
		if (!y->st_name || y->st_name >= sd->d_size || !strs[y->st_name] ||
		    y->st_shndx == SHN_UNDEF || y->st_shndx >= SHN_LORESERVE ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     !(type == STT_NOTYPE && y->st_shndx < nsec && exec[y->st_shndx])))
			continue;
		uint32_t rank = (bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1) +
				(y->st_size ? 4 : 0) + (type != STT_NOTYPE ? 8 : 0);
		raw_sym r = { y->st_value + bias, y->st_size, y->st_name, rank };
		tf_vec_push(raw, r);
	}
	free(exec);
	if (!raw->n) {
		m->symstr = NULL;
		raw->n = 0;
		return false;
	}
	return true;
}

/*
 * The sorted index of a binary's function symbols, kept by build-id beside
 * its answers (<build-id>.syms) and mapped by the next runs: a warm run
 * that meets one new function would otherwise read and sort every symbol
 * of the binary again (a fifth of its time on yaml-cpp's tests). Only for
 * a .symtab read in place: the index names symbols by their offset in its
 * string table, which the build-id fixes. Anything that does not fit is
 * ignored, and the index built again.
 */
#define SYMS_MAGIC "TFSYMX\001\n"

typedef struct {
	char magic[8];
	char version[24];
	uint64_t n, strsize;
} syms_header;

static void syms_header_init(syms_header *h, size_t n, size_t strsize)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, SYMS_MAGIC, 8);
	snprintf(h->version, sizeof(h->version), "%s/%zu", TF_VERSION, sizeof(tf_sym_ivl));
	h->n = n;
	h->strsize = strsize;
}

static void free_symbols(tf_sym_module *m)
{
	if (m->syms_map) {
		munmap(m->syms_map, m->syms_map_len);
		m->syms_map = NULL;
		memset(&m->syms, 0, sizeof(m->syms));
	} else {
		tf_sym_ivls_free(&m->syms);
	}
}

static bool map_kept_symbols(tf_sym_module *m)
{
	struct stat st;
	syms_header want, *h;
	void *map;
	int fd = open(m->syms_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < sizeof(*h) ||
	    (map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
		close(fd);
		return false;
	}
	close(fd);
	h = map;
	syms_header_init(&want, (size_t)h->n, m->symstr_len);
	const tf_sym_ivl *v = (const tf_sym_ivl *)(h + 1);
	/* the entries' name offsets are checked where they are used
	 * (tf_sym_module_symbol, tf_symbolizer_functions_named): checking
	 * them all here touched every page of the file, which a warm run of
	 * a C++ test binary otherwise reads a few of */
	bool ok = memcmp(h, &want, sizeof(want)) == 0 && h->n &&
		  h->n <= ((size_t)st.st_size - sizeof(*h)) / (sizeof(tf_sym_ivl) + 8) &&
		  (size_t)st.st_size == sizeof(*h) + h->n * (sizeof(tf_sym_ivl) + 8);
	if (!ok) {
		munmap(map, (size_t)st.st_size);
		return false;
	}
	m->syms_map = map;
	m->syms_map_len = (size_t)st.st_size;
	m->syms.v.v = (tf_sym_ivl *)v;
	m->syms.v.n = (size_t)h->n;
	m->syms.maxhi = (uint64_t *)(v + h->n);
	m->syms.built = true;
	return true;
}

static void keep_symbols(const tf_sym_module *m)
{
	tf_buf b = TF_BUF_INIT;
	syms_header h;
	char *dir = tf_xstrdup(m->syms_path), *slash = strrchr(dir, '/');

	if (slash)
		*slash = '\0';
	syms_header_init(&h, m->syms.v.n, m->symstr_len);
	tf_buf_grow(&b, sizeof(h) + m->syms.v.n * (sizeof(tf_sym_ivl) + 8));
	tf_buf_put(&b, &h, sizeof(h));
	tf_buf_put(&b, m->syms.v.v, m->syms.v.n * sizeof(tf_sym_ivl));
	tf_buf_put(&b, m->syms.maxhi, m->syms.v.n * 8);
	if (tf_mkdir_p(dir, 0700) != 0 || tf_file_write_atomic(m->syms_path, b.ptr, b.len) != 0)
		tf_error_clear(); /* a cache: the next run builds it again */
	free(dir);
	tf_buf_free(&b);
}

static void load_symbols(tf_sym_module *m, bool libdwfl)
{
	raw_syms raw = { 0 };
	bool in_place = !libdwfl && load_symtab_fast(m, &raw);
	int n = in_place ? 0 : dwfl_module_getsymtab(m->mod);

	m->syms_loaded = true;
	if (in_place && m->syms_map) {
		tf_vec_free(&raw);
		return;
	}
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, &bias);
		int type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
		if (!name || !name[0] || shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     !(type == STT_NOTYPE && in_exec_section(elf, shndx))))
			continue;
		add_symbol(m, &raw, name, addr, sym.st_size, type, bind);
	}
	/* no symbol table: a Go binary still has its runtime table, which
	 * names every function, where a cgo binary's .dynsym (what libdwfl
	 * gives without .symtab) names a handful (crosscall2, _cgo_panic):
	 * go test's binaries of packages that use cgo somewhere below */
	GElf_Addr gbias;
	Elf *gelf = !m->go && raw.n < 64 ? dwfl_module_getelf(m->mod, &gbias) : NULL;
	if (gelf)
		m->go = tf_sym_go_open(gelf);
	if (m->go && tf_sym_go_nfuncs(m->go) > raw.n) {
		dwfl_module_getelf(m->mod, &gbias);
		raw.n = 0;
		for (size_t i = 0; i < tf_sym_go_nfuncs(m->go); i++) {
			uint64_t lo, hi;
			const char *name;
			if (!tf_sym_go_func(m->go, i, &lo, &hi, &name))
				continue;
			raw_sym r = { lo + gbias, hi - lo, (uint32_t)m->symnames.n, 15 };
			tf_vec_push(&raw, r);
			tf_vec_push(&m->symnames, name);
		}
	}
	sort_symbols(raw.v, raw.n);
	for (size_t i = 0, next = 0; i < raw.n; i++) {
		uint64_t end = raw.v[i].addr + raw.v[i].size;
		if (!raw.v[i].size) {
			if (next <= i)
				for (next = i + 1; next < raw.n && raw.v[next].addr == raw.v[i].addr; next++)
					;
			end = next < raw.n ? raw.v[next].addr : m->hi;
		}
		tf_sym_ivls_add(&m->syms, raw.v[i].addr, end, raw.v[i].name, raw.v[i].rank);
	}
	tf_sym_ivls_build(&m->syms);
	tf_vec_free(&raw);
	if (in_place && m->syms_path && m->syms.v.n)
		keep_symbols(m);
}

void tf_sym_module_symbols(tf_sym_module *m)
{
	if (!m->syms_loaded)
		load_symbols(m, false);
}

void tf_sym_module_symbols_reload(tf_sym_module *m, bool libdwfl)
{
	free_symbols(m);
	memset(&m->syms, 0, sizeof(m->syms));
	m->symnames.n = 0;
	m->symstr = NULL;
	load_symbols(m, libdwfl);
}

const char *tf_sym_module_symbol(tf_sym_module *m, uint64_t vaddr)
{
	if (!m->syms_loaded)
		load_symbols(m, false);
	const tf_sym_ivl *e = tf_sym_ivls_find(&m->syms, vaddr);
	if (!e || (m->symstr && e->val >= m->symstr_len))
		return NULL; /* (a damaged index kept by an earlier run: no name) */
	return m->symstr ? m->symstr + e->val : m->symnames.v[e->val];
}

bool tf_sym_map_vaddr(tf_symbolizer *s, tf_sym_map *map, uint64_t addr, uint64_t *vaddr)
{
	if (TF_LIKELY(map->bias_state == TF_SYM_BIAS_OK)) {
		*vaddr = addr - map->bias;
		return true;
	}
	if (map->bias_state == TF_SYM_BIAS_NONE)
		return false;
	map->bias_state = TF_SYM_BIAS_NONE;
	if (map->file == UINT32_MAX || !tf_sym_file_module(s, map->file))
		return false;
	const tf_sym_module *m = s->mods.v[s->files.v[map->file].module];
	const tf_sym_load *best = NULL;
	/* the segment whose pages the mapping starts at; executable first,
	 * since a page can hold the end of one segment and the start of the
	 * next */
	for (size_t i = 0; i < m->loads.n; i++) {
		const tf_sym_load *l = &m->loads.v[i];
		uint64_t page = l->offset & ~(uint64_t)4095;
		if (map->pgoff < page || map->pgoff >= l->offset + TF_MAX(l->filesz, 1))
			continue;
		if (!best || ((l->flags & PF_X) && !(best->flags & PF_X)))
			best = l;
	}
	if (!best)
		return false;
	map->bias = map->start - map->pgoff + best->offset - best->vaddr;
	map->bias_state = TF_SYM_BIAS_OK;
	*vaddr = addr - map->bias;
	return true;
}

/* push %rbp; mov %rsp,%rbp (either encoding of the mov) */
static bool has_frame_setup(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (p[i] == 0x55 && p[i + 1] == 0x48 &&
		    ((p[i + 2] == 0x89 && p[i + 3] == 0xe5) || (p[i + 2] == 0x8b && p[i + 3] == 0xec)))
			return true;
	return false;
}

bool tf_sym_module_has_fp(tf_sym_module *m)
{
	GElf_Addr bias;
	Elf *elf;
	size_t checked = 0, with_fp = 0;

	if (m->has_fp >= 0)
		return m->has_fp;
	if ((m->has_fp = tf_sym_pcache_has_fp(m)) >= 0)
		return m->has_fp;
	m->has_fp = 0;
	elf = dwfl_module_getelf(m->mod, &bias);
	int nsyms = dwfl_module_getsymtab(m->mod);
	if (!elf || nsyms <= 0)
		return false;
	for (int i = 1; i < nsyms && checked < 4000; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *symelf;
		Dwarf_Addr symbias;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx,
							    &symelf, &symbias);
		/* tiny functions (thunks, trampolines) need no frame either way */
		if (!name || GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_size < 16 ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		uint64_t vaddr = addr - bias;
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR) || vaddr < sh.sh_addr ||
			    vaddr >= sh.sh_addr + sh.sh_size)
				continue;
			Elf_Data *d = elf_rawdata(scn, NULL);
			uint64_t off = vaddr - sh.sh_addr;
			if (!d || !d->d_buf || off >= d->d_size)
				break;
			size_t n = TF_MIN((size_t)TF_MIN(sym.st_size, 64), d->d_size - off);
			checked++;
			with_fp += has_frame_setup((const uint8_t *)d->d_buf + off, n);
			break;
		}
	}
	m->has_fp = checked > 0 && with_fp * 2 >= checked;
	tf_sym_pcache_set_has_fp(m, m->has_fp);
	return m->has_fp;
}
