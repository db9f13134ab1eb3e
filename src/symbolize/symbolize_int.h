/*
 * symbolize_int.h - the symbolizer's private state, shared by the files of
 * src/symbolize/: process address spaces (maps.c), the files behind
 * mappings (files.c), ELF/DWARF modules (module.c, resolve.c), the kernel
 * and [vsyscall] (kernel.c), JIT perf maps (jit.c), the CFI unwinder
 * (unwind.c) and the interval index several of them use (ranges.c).
 *
 * Everything is addressed by dense indices into vectors owned by the
 * tf_symbolizer, so that per-sample work is a hash probe and a binary
 * search, never an allocation.
 */
#ifndef TESTFLAME_SYMBOLIZE_INT_H
#define TESTFLAME_SYMBOLIZE_INT_H

#include "testflame/symbolize.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>

/* ---- interval index (ranges.c) ---------------------------------------- */

/* Possibly overlapping ranges [lo, hi); a query returns, among the ranges
 * containing the address, the one with the highest rank. */
typedef struct {
	uint64_t lo, hi;
	uint32_t val, rank;
} tf_sym_ivl;

typedef struct {
	TF_VEC(tf_sym_ivl) v;
	uint64_t *maxhi; /* maxhi[i] = max(v[0..i].hi), after build */
	bool built;
} tf_sym_ivls;

void tf_sym_ivls_add(tf_sym_ivls *x, uint64_t lo, uint64_t hi, uint32_t val, uint32_t rank);
void tf_sym_ivls_build(tf_sym_ivls *x);
const tf_sym_ivl *tf_sym_ivls_find(const tf_sym_ivls *x, uint64_t addr);
void tf_sym_ivls_free(tf_sym_ivls *x);

/* ---- processes (maps.c) ------------------------------------------------ */

enum {
	TF_SYM_MAP_FILE,  /* a file (or memfd) we can open */
	TF_SYM_MAP_ANON,  /* anonymous, heap, stack: JIT code lives here */
	TF_SYM_MAP_VDSO,
};

enum {
	TF_SYM_BIAS_UNKNOWN,
	TF_SYM_BIAS_OK,
	TF_SYM_BIAS_NONE,  /* the module could not be loaded or has no segment */
};

typedef struct {
	uint64_t start, end, pgoff;
	uint64_t bias;     /* process address - ELF vaddr, when bias_state OK */
	uint32_t file;     /* index into s->files (FILE, VDSO) */
	uint32_t name;     /* strtab id of the mapping's name (ANON) */
	uint8_t kind;
	uint8_t bias_state;
} tf_sym_map;

typedef struct {
	uint32_t pid;
	bool alive;
	bool jit_looked;   /* jit resolved (or found absent) for this instance */
	uint64_t birth;    /* time of the fork that created this instance */
	uint32_t jit;      /* index into s->jits, or UINT32_MAX */
	TF_VEC(tf_sym_map) maps; /* sorted by start, non-overlapping */
} tf_sym_proc;

tf_sym_proc *tf_sym_proc_get(tf_symbolizer *s, uint32_t pid, bool create);
tf_sym_map *tf_sym_proc_find_map(tf_sym_proc *p, uint64_t addr);
void tf_sym_procs_free(tf_symbolizer *s);

/* ---- files behind mappings (files.c) ---------------------------------- */

enum {
	TF_SYM_FILE_UNTRIED,
	TF_SYM_FILE_OK,       /* module loaded */
	TF_SYM_FILE_MISSING,  /* could not be opened (or was another file) */
	TF_SYM_FILE_BAD,      /* opened, but not a usable ELF file */
};

typedef struct {
	char *path;          /* as mapped, without " (deleted)" */
	uint32_t maj, min;
	uint64_t ino, ino_gen;
	uint8_t build_id[32];
	uint32_t build_id_len; /* from the event, 0 if none */
	int fd;              /* pinned file, or -1 */
	bool deleted;        /* the mapping's name said " (deleted)" */
	bool is_vdso;
	uint8_t state;
	uint32_t module;     /* index into s->mods when state == OK */
	uint32_t name;       /* strtab id of path */
	uint32_t base;       /* strtab id of basename(path) */
} tf_sym_file;

/* TF_SYM_MAP_* kind of a mapping's name. */
int tf_sym_classify(const char *name);
/* Find or add the file behind an MMAP event; UINT32_MAX if it is no file. */
uint32_t tf_sym_file_for_event(tf_symbolizer *s, const tf_rec_event *ev, bool *deleted);
/* Pin the file by a descriptor the recorder holds (live): a copy of it,
 * if it is the mapping's file. */
void tf_sym_file_adopt(tf_symbolizer *s, uint32_t file, int fd);
/* Pin the file now (live): open it and keep the fd. */
void tf_sym_file_pin(tf_symbolizer *s, uint32_t file, uint32_t pid, uint64_t start, uint64_t end);
/* The [vdso] pseudo-file (a copy of our own vdso image in the cache dir). */
uint32_t tf_sym_vdso_file(tf_symbolizer *s);
/* Load the module behind a file; false if it cannot be. */
bool tf_sym_file_module(tf_symbolizer *s, uint32_t file);
void tf_sym_files_free(tf_symbolizer *s);

/* ---- modules (module.c, resolve.c) ------------------------------------ */

typedef struct {
	uint64_t vaddr, offset, filesz, memsz;
	uint32_t flags;
} tf_sym_load;

/* ---- line tables (lines.c) -------------------------------------------- */

#define TF_SYM_ROW_END 0x80000000u /* in tf_sym_row.file: ends a sequence */

typedef struct {
	uint64_t addr;
	uint32_t line;
	uint32_t file;       /* index into the table's files, | TF_SYM_ROW_END */
} tf_sym_row;

typedef struct {
	const char *name, *dir; /* dir NULL when name is absolute or has none */
	uint32_t id;            /* strtab id of dir/name, UINT32_MAX until used */
} tf_sym_file_name;

/* A sequence of a line table: its first and end addresses, where its
 * opcodes start in the program, its checkpoints, whether its rows go up. */
typedef struct {
	uint64_t lo, hi;
	uint32_t off;
	uint32_t ck, nck;         /* into the table's checkpoints */
	bool ordered;
} tf_sym_seq;

/* A row of a sequence and where the program goes on after it: its rows
 * can be decoded from there without the ones before. */
typedef struct {
	uint64_t addr;
	uint32_t off, file, line;
} tf_sym_ck;

typedef struct {
	const uint8_t *start, *end; /* the program, in the mapped section */
	unsigned addr_size, min_inst, line_range, opcode_base;
	int line_base;
	uint8_t std_len[256];
} tf_sym_prog;

typedef struct {
	/* lazy: the sequences by address and their checkpoints, the rows
	 * decoded from one for each question (rows: the last answer's);
	 * else (sequences overlap) every row, merged by address */
	TF_VEC(tf_sym_row) rows;
	TF_VEC(tf_sym_seq) seqs;
	TF_VEC(tf_sym_ck) cks;
	bool scanned;             /* seqs and cks given (symbol cache): no scan */
	bool lazy;
	tf_sym_prog prog;
	TF_VEC(tf_sym_file_name) files;   /* numbered as libdw numbers them */
} tf_sym_lines;

/* A section's bytes, by name, from the ELF file libdw reads the DWARF
 * from (decompressed by libdw when it opened it); false when it has none
 * or it is compressed. */
bool tf_sym_dwarf_section(Dwarf *dbg, const char *name, const uint8_t **start,
			  const uint8_t **end);
/* Read the line table of a CU; false (nothing kept) if it cannot be. */
bool tf_sym_lines_read(tf_sym_lines *l, Dwarf_Die *cudie);
/* The row for pc, as dwarf_getsrc_die finds it; NULL if none. Valid
 * until the next call on the table (it may decode a sequence). */
const tf_sym_row *tf_sym_lines_find(tf_sym_lines *l, uint64_t pc);
/* The rows over [lo, hi), from the last one at or before lo, in address
 * order: their number, 0 when none or when the range is not within one
 * sequence. Valid until the next call on the table. */
size_t tf_sym_lines_span(tf_sym_lines *l, uint64_t lo, uint64_t hi, const tf_sym_row **out);
/* A file of the table (dir/name, interned); NULL if out of range. */
const char *tf_sym_lines_file(tf_symbolizer *s, tf_sym_lines *l, uint32_t file);
void tf_sym_lines_free(tf_sym_lines *l);

typedef struct {
	uint64_t cu_off;
	tf_sym_ivls funcs;   /* function DIE ranges; val = index into offs */
	TF_VEC(uint64_t) offs; /* DIE offsets */
	int8_t lines_state;  /* 0 not read yet, 1 read, -1 libdw's instead */
	tf_sym_lines lines;
	bool kept;           /* in the symbol cache (from it, or put there) */
	bool bodies;         /* funcs has the functions in functions and classes */
} tf_sym_cu;

typedef struct {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	char *build_id;      /* hex, or NULL */
	uint32_t name;       /* strtab id of the path shown as module */
	uint32_t base;       /* strtab id of its basename */
	uint64_t lo, hi;     /* link-time address range */
	TF_VEC(tf_sym_load) loads;
	int8_t has_fp;       /* -1 not yet known */
	bool cfi_loaded, dwarf_cfi_tried;
	Dwarf_CFI *eh_cfi, *dwarf_cfi;
	Dwarf_Addr eh_bias, dwarf_bias;
	TF_VEC(tf_sym_cu) cus;
	tf_htab cu_index;
	bool syms_loaded;
	struct tf_sym_go *go;   /* Go's .gopclntab, when the binary has one */
	struct tf_sym_pcache *pc; /* answers kept in the user cache (symcache.c) */
	uint8_t dwarf_state;    /* TF_SYM_DWARF_*: whether it has DWARF */
	tf_sym_ivls syms;      /* function symbols; val = index into symnames, or
				* with symstr the name's offset in it */
	TF_VEC(const char *) symnames; /* into libdwfl's string tables */
	const char *symstr;    /* .symtab's string table, read in place */
	size_t symstr_len;
	char *syms_path;       /* the index of syms kept by build-id (symcache.c) */
	void *syms_map;        /* that index, mapped: syms points into it */
	size_t syms_map_len;
} tf_sym_module;

enum {
	TF_SYM_DWARF_UNKNOWN,
	TF_SYM_DWARF_YES,
	TF_SYM_DWARF_NO,
};

/* The functions with code in a CU into cu->funcs and cu->offs (the index
 * not built; funcs.c): those outside functions and classes, or with
 * `all` every one; true when the unit was read directly, false when
 * through libdw. The _libdw form walks the DIEs through libdw alone
 * (what the other falls back to; for tests). */
bool tf_sym_cu_functions(Dwarf_Die *cudie, tf_sym_cu *cu, bool all);
/* How many inlined calls and blocks the tree under `die` (a DIE of the
 * CU of `cudie`) holds, counted up to `cap`; SIZE_MAX when the unit
 * cannot be read directly. */
size_t tf_sym_die_nodes(Dwarf_Die *cudie, Dwarf_Die *die, size_t cap);
void tf_sym_cu_functions_libdw(Dwarf_Die *cudie, tf_sym_cu *cu, bool all);

/* Open `fd` (consumed) as the module for `file`. */
int tf_sym_module_open(tf_symbolizer *s, tf_sym_file *file, int fd);
void tf_sym_module_free(tf_sym_module *m);
/* Process address -> ELF vaddr for a mapping (computes the bias once). */
bool tf_sym_map_vaddr(tf_symbolizer *s, tf_sym_map *map, uint64_t addr, uint64_t *vaddr);
bool tf_sym_module_has_fp(tf_sym_module *m);
/* The function symbol containing vaddr (binary search), or NULL. */
/* The function symbols read again, by libdwfl or in place (tests). */
void tf_sym_module_symbols_reload(tf_sym_module *m, bool libdwfl);
const char *tf_sym_module_symbol(tf_sym_module *m, uint64_t vaddr);

/* Frames for (module, vaddr), appended to s->scratch; returns resolved. */
bool tf_sym_resolve(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr);

/* ---- the persistent answers (symcache.c) ------------------------------- */

struct tf_sym_pcache;
/* Load the module's file from persist_dir, if any (needs a build-id). */
void tf_sym_pcache_open(tf_symbolizer *s, tf_sym_module *m);
/* The kept frames of vaddr into s->scratch and *ok; false if not kept. */
bool tf_sym_pcache_get(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr, bool *ok);
/* Keep s->scratch as the answer for vaddr (saved by tf_symbolizer_save). */
void tf_sym_pcache_put(tf_symbolizer *s, tf_sym_module *m, uint64_t vaddr, bool ok);
/* Kept answer to has_fp: -1 unknown. */
int8_t tf_sym_pcache_has_fp(const tf_sym_module *m);
void tf_sym_pcache_set_has_fp(tf_sym_module *m, bool has_fp);
void tf_sym_pcache_free(struct tf_sym_pcache *c);

/*
 * A function as kept there, enough to resolve any address in it without
 * its DWARF: its ranges (with the ELF symbol over each), the tree of its
 * inlined calls and lexical blocks (in DIE order, as find_inlined walks
 * them) and the line table's rows over its ranges. String fields are
 * strtab ids + 1 (0: none).
 */
typedef struct {
	uint64_t lo, hi;
	uint32_t sym;
} tf_sym_kept_range;
typedef TF_VEC(tf_sym_kept_range) tf_sym_kept_ranges;

typedef struct {
	int32_t parent;           /* index among the function's nodes; -1: it */
	uint8_t block;            /* a lexical block, not an inlined call */
	uint8_t has_pc;           /* has pc attributes (a block without is open) */
	uint8_t linkage;          /* name is a linkage name, to demangle */
	uint32_t ranges_off, nranges; /* into the function's node ranges */
	uint32_t name;
	int32_t decl_line;
	uint32_t call_file;
	int32_t call_line;
} tf_sym_kept_node;

typedef struct {
	tf_sym_kept_ranges ranges;
	TF_VEC(tf_sym_kept_node) nodes;
	tf_sym_kept_ranges node_ranges; /* sym unused */
	TF_VEC(tf_sym_row) rows;  /* file: strtab id + 1 */
	uint32_t name;
	uint8_t linkage;
	int32_t decl_line;
} tf_sym_kept_fn;

/* Keep `f` (taken over, emptied) for the module. */
void tf_sym_pcache_put_fn(tf_symbolizer *s, tf_sym_module *m, tf_sym_kept_fn *f);
/* The kept function whose ranges hold pc, or NULL. */
const tf_sym_kept_fn *tf_sym_pcache_find_fn(const tf_sym_module *m, uint64_t pc);
void tf_sym_kept_fn_free(tf_sym_kept_fn *f);
/* A CU as kept there (its function index, its line table's sequences and
 * checkpoints) filled into `cu` (cu_off set): true when it was. */
bool tf_sym_pcache_get_cu(tf_sym_module *m, tf_sym_cu *cu);
/* Keep what is known of `cu` (its function index, and its line table's
 * index once read) for the next runs. */
void tf_sym_pcache_put_cu(tf_sym_module *m, const tf_sym_cu *cu);

/* A module's CUs by address, as libdwfl condenses libdw's aranges: each
 * run of address ranges of one CU from its first address (the gaps inside
 * the module count for the CU before them), the last run up to `end`. */
typedef struct {
	uint64_t start;
	uint64_t cu;              /* the CU's DIE offset */
} tf_sym_arange;

/* The kept CUs by address (NULL when not kept). */
const tf_sym_arange *tf_sym_pcache_aranges(const tf_sym_module *m, size_t *n, uint64_t *end);
/* Keep them (once). */
void tf_sym_pcache_put_aranges(tf_sym_module *m, const tf_sym_arange *v, size_t n, uint64_t end);

/* Whether a run found that no function of the binary begins with any of
 * a set of prefixes, the set named by `key` (symbolizer.c): the next runs
 * need not read its symbol table to know. Keep that. */
bool tf_sym_pcache_no_names(const tf_sym_module *m, uint64_t key);
void tf_sym_pcache_put_no_names(tf_sym_module *m, uint64_t key);

/* ---- demangling (demangle.c) ------------------------------------------ */

/* Interned demangled name, or the name itself when it is not mangled. */
uint32_t tf_sym_demangle(tf_symbolizer *s, const char *name);
/* malloc'd demangled name or NULL (for tests and callers outside). */
char *tf_sym_demangle_dup(const char *name);
/* The plain qualified name a mangled C++ (or legacy Rust) name begins
 * with, as the demangler prints it ("Catch::Session::run" of
 * _ZN5Catch7Session3runEv): its source names up to the first part printed
 * otherwise (template arguments, a constructor, an operator, a
 * substitution, an ABI tag, an anonymous namespace, Rust's escapes or
 * hash), at most cap - 1 bytes of it, NUL-terminated, into `buf`; its
 * length. 0 for a name with no such beginning: not mangled, a special
 * name (thunks, guard variables), Rust v0. Printed in full, the name of a
 * function template's instance comes after its return type. */
size_t tf_sym_mangled_lead(const char *name, char *buf, size_t cap);

/* ---- separate debug info (debugcache.c) ------------------------------ */

/* A build-id (or any bytes) as lower-case hex; malloc'd (module.c). */
char *tf_sym_hex(const uint8_t *p, size_t n);

/* libdwfl's find_debuginfo: the standard search, then an uncompressed copy
 * from the symbolizer's persist_dir (made there on first use). The module's
 * userdata is the symbolizer. */
int tf_sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			  GElf_Word debuglink_crc, char **debuginfo_file_name);

/* ---- kernel, [vsyscall] (kernel.c) ------------------------------------ */

typedef struct tf_sym_kernel tf_sym_kernel;
/* Name (strtab id) and module (strtab id) of a kernel address; false if
 * unknown (kernel symbols hidden, or no symbol). */
bool tf_sym_kernel_lookup(tf_symbolizer *s, uint64_t addr, uint32_t *name, uint32_t *module);
/* /proc/kallsyms read and sorted, or this boot's copy in cache_dir (NULL:
 * no cache); touches nothing of a symbolizer. */
tf_sym_kernel *tf_sym_kernel_read(const char *cache_dir);
/* Whether it came from the cache file. */
bool tf_sym_kernel_cached(const tf_sym_kernel *k);
/* The module's function symbols, sorted (once). */
void tf_sym_module_symbols(tf_sym_module *m);
void tf_sym_kernel_free(tf_sym_kernel *k);
bool tf_sym_is_vsyscall(uint64_t addr);
const char *tf_sym_vsyscall_name(uint64_t addr);

/* ---- JIT perf maps (jit.c) -------------------------------------------- */

typedef struct {
	uint32_t pid;
	uint32_t next;       /* next map of the same pid, or UINT32_MAX */
	uint64_t exit_time;  /* when read at exit; UINT64_MAX if read later */
	tf_sym_ivls entries; /* val = strtab id of the name */
} tf_sym_jit;

/* Read /tmp/perf-PID.map now; returns the jit index or UINT32_MAX. */
uint32_t tf_sym_jit_read(tf_symbolizer *s, uint32_t pid, uint64_t exit_time);
/* The same from the file's text (`len` bytes, NUL-terminated, modified):
 * the reader apart from the file, for the fuzzer. */
uint32_t tf_sym_jit_add(tf_symbolizer *s, uint32_t pid, uint64_t exit_time, char *text, size_t len);
/* The perf map of a process instance (reads the file if none was kept). */
uint32_t tf_sym_jit_for(tf_symbolizer *s, tf_sym_proc *p);
void tf_sym_jits_free(tf_symbolizer *s);

/* ---- unwinding (unwind.c) --------------------------------------------- */

typedef struct tf_sym_cfi_cache tf_sym_cfi_cache;
void tf_sym_cfi_cache_free(tf_sym_cfi_cache *c);

/* ---- the symbolizer ---------------------------------------------------- */

typedef struct {
	uint64_t space;      /* kind << 32 | index */
	uint64_t addr;
} tf_sym_key;

/* tf_symbolizer_lookup()'s memory of recent answers (symbolizer.c): a
 * table of FIRST slots, four times larger each time the lookups reach four
 * times its size, up to MAX. */
#define TF_SYM_LOOKUP_SLOTS_FIRST 256
#define TF_SYM_LOOKUP_SLOTS_MAX 8192
struct tf_sym_lookup_slot {
	uint64_t addr;
	uint32_t pid, gen;
	const tf_symloc *loc;
};

struct tf_symbolizer {
	tf_symbolizer_opts opts;
	char *cache_dir;
	bool own_cache_dir;
	tf_strtab strs;
	TF_VEC(uint32_t) demangled; /* raw strid -> demangled strid + 1 */
	tf_arena *arena;

	/* resolved addresses */
	TF_VEC(tf_symloc *) locs;
	TF_VEC(tf_sym_key) keys;
	tf_htab loc_index;
	TF_VEC(tf_frame) scratch; /* frames of the address being resolved */
	struct tf_sym_lookup_slot *lookup_cache; /* (pid, addr) -> symloc, recent */
	uint32_t lookup_slots;    /* of lookup_cache, a power of 2 */
	uint32_t lookup_gen;      /* bumped by every address-space change */

	/* processes */
	TF_VEC(tf_sym_proc *) procs;
	tf_htab proc_index;
	tf_sym_proc *last_proc;

	/* files and modules */
	TF_VEC(tf_sym_file) files;
	tf_htab file_index;
	TF_VEC(tf_sym_module *) mods;
	tf_htab mod_index;   /* by build-id */
	uint32_t vdso_file;  /* UINT32_MAX until needed */
	bool vdso_failed;
	bool rlimit_raised;
	bool remove_node_maps;        /* Node's perf maps are ours to remove */
	TF_VEC(uint32_t) node_pids;   /* live processes that mapped Node */

	tf_sym_kernel *kernel;
	bool kernel_loaded;

	TF_VEC(tf_sym_jit) jits;
	tf_htab jit_index;   /* pid -> first jit of that pid */

	tf_sym_cfi_cache *cfi;
	struct tf_pymodcache *pymods; /* Python modules of perf-map frames */

	tf_symbolizer_stats stats;
};

/* Go's runtime function table (gopclntab.c), for Go binaries linked
 * without symbols or DWARF (go test, go run). */
typedef struct tf_sym_go tf_sym_go;
tf_sym_go *tf_sym_go_open(Elf *elf);
/* The table itself, `size` bytes that must outlive the result; `text` is
 * the address of .text, for tables that leave it to relocation. (The
 * reader apart from the ELF file, for the fuzzer.) */
tf_sym_go *tf_sym_go_parse(const uint8_t *data, size_t size, uint64_t text);
void tf_sym_go_free(tf_sym_go *g);
size_t tf_sym_go_nfuncs(const tf_sym_go *g);
bool tf_sym_go_func(const tf_sym_go *g, size_t i, uint64_t *entry, uint64_t *end,
		    const char **name);
bool tf_sym_go_line(const tf_sym_go *g, uint64_t pc, const char **file, int *line,
		    int *start_line);
/* Bytes the function at `pc` has pushed on the stack there (its return
 * address is at SP + that), or -1. */
int tf_sym_go_spdelta(const tf_sym_go *g, uint64_t pc);

#endif
