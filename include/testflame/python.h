/*
 * python.h - CPython's own frames, read from a running interpreter's memory.
 *
 * A profile of a Python program made from native frames alone shows the
 * interpreter (_PyEval_EvalFrameDefault and friends) where the Python
 * functions should be. The interpreter keeps its frames in memory: each
 * thread state points at the innermost frame of its thread, each frame at
 * its caller and its code object, and a code object holds the function's
 * qualified name, file, first line and line table. This module (src/python,
 * on the ground floor beside base) knows where those fields are in each
 * CPython version (3.7 to 3.13; 3.13's own _Py_DebugOffsets where present)
 * and walks them through a memory reader given by the caller: the recorder
 * reads another process with process_vm_readv while the thread runs (perf)
 * or is stopped (ptrace); tests read canned memory.
 *
 * Finding an interpreter: tf_pybin_probe() reads a python executable or a
 * libpython from its file (symbols _PyRuntime, Py_Version, PyCode_Type and
 * 3.13's debug offsets, which are initialised data), so no byte of the
 * process needs reading until its first sample.
 */
#ifndef TESTFLAME_PYTHON_H
#define TESTFLAME_PYTHON_H

#include "testflame/common.h"

typedef enum {
	TF_PYBIN_OK = 0,
	TF_PYBIN_NOT_PYTHON,   /* no CPython runtime in it (another program) */
	TF_PYBIN_STRIPPED,     /* a CPython whose runtime symbol was stripped */
	TF_PYBIN_UNSUPPORTED,  /* a CPython whose layout is not known here */
	TF_PYBIN_UNREADABLE,   /* the file could not be opened or parsed */
} tf_pybin_status;

typedef struct {
	uint64_t vaddr, offset, filesz;
} tf_pybin_load;

/* What an interpreter binary says about itself. */
typedef struct {
	tf_pybin_status status;
	char why[160];          /* for a status other than OK: why, a phrase */
	unsigned version;       /* PY_VERSION_HEX (0x030b02f0 ...), 0 when unknown */
	uint64_t runtime;       /* ELF vaddr of _PyRuntime */
	uint64_t code_type;     /* ELF vaddr of PyCode_Type, 0 when unknown */
	tf_pybin_load loads[8]; /* PT_LOAD segments, to place the file in a process */
	unsigned nloads;
	const struct tf_pylayout *layout; /* offsets for `version` */
	struct tf_pylayout *own_layout;   /* 3.13+: built from _Py_DebugOffsets */
} tf_pybin;

/* Whether a mapped file's name is one of an interpreter's (python3.11,
 * libpython3.12.so.1.0, ...): only those are probed. */
bool tf_pybin_candidate(const char *path);
/* Read the interpreter facts of the ELF file at `path`. Returns 0 whenever
 * the file could be read (out->status says what it is), an error when it
 * could not be opened. Free with tf_pybin_clear(). */
int tf_pybin_probe(tf_pybin *out, const char *path);
void tf_pybin_clear(tf_pybin *b);
/* Process address minus ELF vaddr, from one mapping of the file (its start
 * and file offset); false when no segment holds that offset. */
bool tf_pybin_bias(const tf_pybin *b, uint64_t start, uint64_t pgoff, uint64_t *bias);
/* "3.11.2" (or "3.11" when only the minor version is known). */
void tf_py_version_format(unsigned version, char *buf, size_t n);

/* Reads `len` bytes at `addr` of the process; returns how many it got. */
typedef size_t (*tf_py_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);
/* Reads `n` ranges of `len` bytes, at addrs[i] into bufs + i * len, in as
 * few system calls as it can; returns how many leading ranges it read
 * whole. Optional: without it, ranges are read one by one. */
typedef size_t (*tf_py_readv_fn)(void *ctx, const uint64_t *addrs, uint8_t *bufs, size_t len,
				 size_t n);

/* A code object, as first seen: handed to the caller once per (process,
 * code object), before any stack that refers to it by `id`. */
typedef struct {
	uint32_t id;
	const char *name;       /* co_qualname (3.11+), else co_name */
	const char *file;       /* co_filename */
	int firstlineno;
	bool qualified;         /* name is the qualified name */
} tf_pycode;
typedef void (*tf_pycode_fn)(void *ctx, const tf_pycode *code);

/* One frame of a thread's Python stack. */
typedef struct {
	uint32_t code;          /* tf_pycode.id */
	int32_t line;           /* line of the current instruction, 0 unknown */
	/* the outermost frame run by one C-level call of the evaluation loop
	 * (_PyEval_EvalFrameDefault): 3.11+ run Python-to-Python calls in the
	 * same C call; before 3.11 every frame is its own */
	bool entry;
} tf_pyframe;

typedef struct tf_pyproc tf_pyproc;

typedef struct {
	uint32_t pid;            /* the process read */
	const tf_pybin *bin;    /* must outlive the tf_pyproc */
	uint64_t bias;          /* where the binary is loaded */
	tf_py_read_fn read;
	tf_py_readv_fn readv;   /* may be NULL */
	void *read_ctx;
	tf_pycode_fn on_code;
	void *code_ctx;
	uint32_t *next_code_id; /* shared by every process of a recording */
} tf_pyproc_opts;

int tf_pyproc_new(tf_pyproc **out, const tf_pyproc_opts *opts);
/* A forked child: the same interpreter at the same addresses, with the
 * parent's code objects known (and checked again before use). */
tf_pyproc *tf_pyproc_fork(const tf_pyproc *parent, uint32_t pid, void *read_ctx);
void tf_pyproc_free(tf_pyproc *p);

/*
 * The Python stack of thread `tid`, innermost frame first, into `out`
 * (at most `max`); *n gets the count and *cut whether frames were left
 * out (`max` reached). Returns 0; TF_ENOTFOUND when the thread runs no
 * Python (no thread state names it, the interpreter is not up yet);
 * TF_EINVAL when the memory read did not hold together (the thread moved
 * under the reader, or a layout mismatch), with what was read before.
 */
int tf_pyproc_stack(tf_pyproc *p, uint32_t tid, tf_pyframe *out, size_t max, size_t *n,
		    bool *cut);

/* Line of the instruction at `lasti` (code units from the start of the
 * bytecode, -1 before the first) from a code object's line table, in the
 * format of `version`; 0 when the table has no line there. */
int tf_py_line(unsigned version, const uint8_t *table, size_t len, int firstlineno, int lasti);

/*
 * The name a profile shows for a Python function: the module, found from
 * the file (packages are the directories with an __init__.py, read on the
 * filesystem), then the qualified name: "toolz.itertoolz.frequencies".
 * `cache` (may be NULL) keeps what the filesystem said per directory.
 */
typedef struct tf_pymodcache tf_pymodcache;
tf_pymodcache *tf_pymodcache_new(void);
void tf_pymodcache_free(tf_pymodcache *c);
/* The module of a file: "toolz.itertoolz"; "" when the file is no Python
 * source (e.g. "<string>"); frozen modules ("<frozen importlib._bootstrap>")
 * by their name. Appended to `out`. */
void tf_py_module_name(tf_buf *out, tf_pymodcache *cache, const char *file);
/* Before 3.11 code objects have no qualified name: find the classes and
 * functions that enclose the `def` of `name` at `firstlineno` in the source
 * file, "Class.method", "outer.<locals>.inner"; appended to `out`; false
 * (nothing appended) when the file cannot be read or does not match. */
bool tf_py_qualname_from_source(tf_buf *out, tf_pymodcache *cache, const char *file,
				const char *name, int firstlineno);

#endif
