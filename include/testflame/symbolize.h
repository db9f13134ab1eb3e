/*
 * symbolize.h - from addresses in a process to functions, files and lines.
 *
 * The symbolizer follows each process's address space through the
 * recording's side-band events (mmap, exec, fork, exit) and resolves sample
 * addresses through elfutils' libdwfl: ELF symbol tables, DWARF line tables
 * and inlined frames, the kernel's symbols, the [vdso], and JIT perf maps
 * (/tmp/perf-PID.map). Binaries are keyed by build-id (or device+inode) and
 * cached across processes, so a suite that runs the same binary a thousand
 * times pays for its DWARF once.
 *
 * It also unwinds user stacks copied by the sampler (DWARF CFI through
 * libdw), for binaries built without frame pointers.
 *
 * Not thread-safe: one thread at a time (tf_symbolizer_live() during the
 * run, the rest after it). Mappings whose prot is known and not executable
 * are kept only as anonymous memory (they carry no code to resolve).
 */
#ifndef TESTFLAME_SYMBOLIZE_H
#define TESTFLAME_SYMBOLIZE_H

#include "testflame/common.h"
#include "testflame/record.h"

typedef struct tf_symbolizer tf_symbolizer;

typedef struct {
	bool demangle;        /* C++ and Rust names (default true) */
	bool inline_frames;   /* expand inlined calls (default true) */
	bool kernel;          /* resolve kernel addresses (/proc/kallsyms) */
	const char *cache_dir;/* where to keep copies of [vdso] etc.; NULL = temp */
	const char *persist_dir;/* the user cache: this boot's kallsyms, debug
				   info uncompressed (tf_user_cache_dir); NULL = none */
} tf_symbolizer_opts;

void tf_symbolizer_opts_init(tf_symbolizer_opts *o);
int tf_symbolizer_new(tf_symbolizer **out, const tf_symbolizer_opts *opts);
void tf_symbolizer_free(tf_symbolizer *s);

/*
 * During the run (tf_record_opts.live): pin the files behind new mappings
 * before the workload can delete them, and read a process's JIT perf map
 * when it exits, before anything cleans /tmp. Cheap; never blocks long.
 */
void tf_symbolizer_live(tf_symbolizer *s, const tf_rec_event *ev);
/* Node's perf maps (/tmp/perf-PID.map of a process that mapped node or
 * libnode), which testflame turned on, are removed once read at the
 * process's exit. */
void tf_symbolizer_remove_node_maps(tf_symbolizer *s, bool on);


/* After the run, in time order: MMAP, COMM (exec), FORK and EXIT events. */
void tf_symbolizer_event(tf_symbolizer *s, const tf_rec_event *ev);

typedef struct {
	const char *function;    /* demangled; never NULL ("[unknown]" at worst) */
	const char *system_name; /* the raw (mangled) symbol name */
	const char *file;        /* source file, or NULL */
	int line;                /* 0 when unknown */
	int start_line;          /* first line of the function, 0 if unknown */
} tf_frame;

/* One resolved address: its frames, innermost (inlined) first. */
typedef struct {
	uint32_t id;             /* dense per symbolizer: a cache key for callers */
	const tf_frame *frames;
	uint32_t nframes;
	const char *module;      /* binary path, "[kernel.kallsyms]", "[vdso]", "[jit]" */
	const char *build_id;    /* hex, or NULL */
	uint64_t module_addr;    /* address as in the binary (ELF vaddr) */
	uint64_t module_start, module_end; /* the module's ELF address range */
	bool resolved;           /* a symbol was found */
} tf_symloc;

/*
 * Resolve `addr` in process `pid` at `time`. For return addresses (every
 * frame but the leaf) pass addr - 1 so the call's line is found. Never
 * fails: unknown addresses give a frame named after the module or the
 * address. The result stays valid until the symbolizer is freed.
 */
const tf_symloc *tf_symbolizer_lookup(tf_symbolizer *s, uint32_t pid, uint64_t time,
				      uint64_t addr, bool kernel);

/*
 * DWARF CFI unwinding of a sample's copied user stack. Writes up to `max`
 * addresses (leaf first: the ip, then return addresses) to `ips`; returns
 * how many. `regs`/`mask` as in tf_rec_event.sample.
 */
size_t tf_symbolizer_unwind(tf_symbolizer *s, uint32_t pid, uint64_t time,
			    const uint64_t *regs, uint64_t regs_mask,
			    const uint8_t *stack, uint64_t stack_size,
			    uint64_t *ips, size_t max);
/* The same; `*truncated` (may be NULL) tells whether the unwind stopped
 * before an outermost frame (_start, a thread's start): end of the copied
 * stack, missing unwind information, or `max` reached. */
size_t tf_symbolizer_unwind_ex(tf_symbolizer *s, uint32_t pid, uint64_t time,
			       const uint64_t *regs, uint64_t regs_mask,
			       const uint8_t *stack, uint64_t stack_size,
			       uint64_t *ips, size_t max, bool *truncated);

/* Every function symbol of the binary mapped at `addr` in `pid` (its
 * symbol table, else Go's runtime table), demangled, to `fn`; returns how
 * many. A
 * deleted binary pinned while it ran still answers. */
size_t tf_symbolizer_functions(tf_symbolizer *s, uint32_t pid, uint64_t addr,
			       void (*fn)(void *ctx, const char *name), void *ctx);
/* The same for the functions whose names, demangled, begin with one of
 * `prefixes` (NULL-terminated, at most 16; "Catch::Session::run"): `fn`
 * gets each of those, and may get a few others (it checks the names it
 * needs); returns how many it got. Much cheaper than demangling every
 * name of a big C++ binary: a mangled name is demangled only where its
 * plain beginning (_ZN5Catch7Session...) cannot tell. A function
 * template's instance is known by its name, not by the return type
 * printed before it. */
size_t tf_symbolizer_functions_named(tf_symbolizer *s, uint32_t pid, uint64_t addr,
				     const char *const *prefixes,
				     void (*fn)(void *ctx, const char *name), void *ctx);

/* Whether the binary mapped at `addr` keeps frame pointers (for
 * --call-graph auto): known from its functions' prologues. */
bool tf_symbolizer_has_frame_pointers(tf_symbolizer *s, uint32_t pid, uint64_t time,
				      uint64_t addr);

typedef struct {
	uint64_t lookups, unresolved;   /* addresses with no symbol */
	uint64_t modules, missing_files;/* binaries we could not open */
	uint64_t unwinds, unwind_failed;
	uint64_t jit_maps;
	uint64_t symlocs;        /* distinct resolved addresses (tf_symloc ids) */
	uint64_t bad_files;      /* opened, but not a usable ELF file */
	uint64_t pinned;         /* files pinned live (deleted ones stay usable) */
	uint64_t unwind_truncated; /* stopped before an outermost frame */
	bool kallsyms_cached;    /* the kernel's symbols came from persist_dir */
	uint64_t debug_cached, debug_uncompressed; /* debug files: found there, put there */
	uint64_t symcache_loaded;  /* binaries whose kept answers were read */
	uint64_t symcache_hits;    /* addresses answered from them */
	uint64_t symcache_cus;     /* CUs indexed from them, not the DWARF */
	uint64_t symcache_saved;   /* binaries whose answers were written */
	uint64_t names_kept;       /* functions_named() answered from them */
} tf_symbolizer_stats;
void tf_symbolizer_stats_get(const tf_symbolizer *s, tf_symbolizer_stats *out);

/*
 * Keep what the binaries' addresses resolved to in persist_dir, by
 * build-id (binaries with DWARF only), for the next run of the same
 * binaries; a no-op without persist_dir. Call once the profile is built.
 */
void tf_symbolizer_save(tf_symbolizer *s);

#endif
