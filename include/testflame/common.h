/*
 * common.h - the small toolbox every testflame module uses: error codes and
 * the thread-local last-error message, checked allocation, growable vectors,
 * byte buffers, hashing and an index hash table.
 *
 * Conventions (libgit2's): functions return 0 or a negative TF_E* code and
 * leave a message for tf_error_last(); `out` parameters come first; whoever
 * receives a `**out` owns it and frees it with the matching _free(), which
 * accepts NULL. Allocation failure is not an error path: tf_xmalloc() and
 * friends abort, the way git's xmalloc does, because a profiler that runs out
 * of memory has nothing sensible left to report.
 */
#ifndef TESTFLAME_COMMON_H
#define TESTFLAME_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define TF_VERSION "0.1.0"
/*
 * What a run's numbers mean: bumped by a change that makes the same code
 * measure differently (the sampling, the attribution of samples to tests,
 * a value's unit). Every run file records it; a comparison of runs of two
 * measure versions warns that part of its difference may be testflame's.
 */
#define TF_MEASURE_VERSION 1

/* The commit this binary was built from (40 hex digits, "" when unknown)
 * and whether the tree had changes: build/gen/version.c, written by
 * packaging/version.sh. */
extern const char tf_build_commit[];
extern const int tf_build_dirty;
/* "0.1.0 (commit 5b9f97c3a1b2)", with ", dirty" when it was; into buf. */
const char *tf_version_describe(char *buf, size_t n);

#if defined(__GNUC__)
#define TF_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TF_UNUSED __attribute__((unused))
#define TF_LIKELY(x) __builtin_expect(!!(x), 1)
#define TF_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define TF_PRINTF(f, a)
#define TF_UNUSED
#define TF_LIKELY(x) (x)
#define TF_UNLIKELY(x) (x)
#endif

#define TF_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define TF_MIN(a, b) ((a) < (b) ? (a) : (b))
#define TF_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Error codes. Every failing function returns one of these (never 0). */
enum {
	TF_OK = 0,
	TF_ERROR = -1,       /* generic failure; the message says what */
	TF_ENOTFOUND = -2,   /* a file, ref, key or object does not exist */
	TF_EINVAL = -3,      /* bad input: corrupt file, bad value */
	TF_EPERM = -4,       /* the system refused (perf_event, ptrace, ...) */
	TF_EUNSUPPORTED = -5,/* the machine or the file lacks a feature */
	TF_EEXISTS = -6,     /* something is already there (a ref, a hook) */
	TF_ECONFLICT = -7,   /* a concurrent writer won a race */
	TF_EUSAGE = -8,      /* the caller asked for something meaningless */
};

/* Set the thread's last error and return `code`, so callers can write
 * `return tf_error_set(TF_EINVAL, "...")`. */
int tf_error_set(int code, const char *fmt, ...) TF_PRINTF(2, 3);
/* Like tf_error_set(), with ": strerror(errno)" appended. */
int tf_error_set_errno(int code, const char *fmt, ...) TF_PRINTF(2, 3);
/* Prefix the current message with more context ("reading 'x': <old>"). */
int tf_error_wrap(int code, const char *fmt, ...) TF_PRINTF(2, 3);
const char *tf_error_last(void);
void tf_error_clear(void);

/* The heap in transparent huge pages where the system leaves that to the
 * program (memory.c): once, first thing, in a command that allocates much. */
void tf_heap_huge_pages(void);

/* Checked allocation: abort with a message on failure. */
void *tf_xmalloc(size_t n);
void *tf_xcalloc(size_t n, size_t size);
void *tf_xrealloc(void *p, size_t n);
char *tf_xstrdup(const char *s);
char *tf_xstrndup(const char *s, size_t n);
char *tf_xasprintf(const char *fmt, ...) TF_PRINTF(1, 2);

/* Growable array. Declare with TF_VEC(type) name; zero-initialise. */
#define TF_VEC(type) struct { type *v; size_t n, cap; }
void tf_vec_grow_(void **v, size_t *cap, size_t need, size_t elem);
#define tf_vec_reserve(vec, need) \
	tf_vec_grow_((void **)&(vec)->v, &(vec)->cap, (need), sizeof(*(vec)->v))
#define tf_vec_push(vec, val) do { \
		if ((vec)->n == (vec)->cap) tf_vec_reserve((vec), (vec)->n + 1); \
		(vec)->v[(vec)->n++] = (val); \
	} while (0)
#define tf_vec_free(vec) do { free((vec)->v); (vec)->v = NULL; (vec)->n = (vec)->cap = 0; } while (0)

/* Byte buffer, always NUL-terminated when ptr != NULL. */
typedef struct {
	char *ptr;
	size_t len, cap;
} tf_buf;
#define TF_BUF_INIT { NULL, 0, 0 }
void tf_buf_grow(tf_buf *b, size_t extra);
void tf_buf_put(tf_buf *b, const void *data, size_t len);
void tf_buf_puts(tf_buf *b, const char *s);
void tf_buf_putc(tf_buf *b, char c);
/* `v` in decimal, as "%lld" prints it (a hot path's numbers, without printf) */
void tf_buf_put_int(tf_buf *b, int64_t v);
void tf_buf_printf(tf_buf *b, const char *fmt, ...) TF_PRINTF(2, 3);
void tf_buf_vprintf(tf_buf *b, const char *fmt, va_list ap);
void tf_buf_clear(tf_buf *b);
/* Hand the bytes to the caller (who frees them); the buffer is reset. */
char *tf_buf_detach(tf_buf *b);
void tf_buf_free(tf_buf *b);

/*
 * Escaping untrusted text (names from profiled code, paths, command lines).
 * Invalid UTF-8 never reaches an output: each bad byte becomes U+FFFD.
 */
bool tf_utf8_valid(const char *s, size_t len);
/* Append `len` bytes as valid UTF-8. */
void tf_buf_put_utf8(tf_buf *b, const char *s, size_t len);
/* Append a JSON string literal, quotes included (NULL is ""). */
void tf_buf_put_json(tf_buf *b, const char *s);
/* Append for a terminal: control characters and invalid bytes as \n, \t, \xNN. */
void tf_buf_put_printable(tf_buf *b, const char *s);
/* The value of a hexadecimal digit, -1 for any other character (for the
 * readers of percent-encoded names). */
int tf_hex_digit(char c);

/* One-line messages (warnings, problems, notes) for the cli to print, each
 * malloc'd; zero-initialise. */
typedef TF_VEC(char *) tf_msglist;
void tf_msglist_pushf(tf_msglist *l, const char *fmt, ...) TF_PRINTF(2, 3);
void tf_msglist_free(tf_msglist *l);

/*
 * Notices: the one-line messages an engine module hands its caller while
 * it works (a sampler's rung, a warning, what -v shows), through a callback
 * the caller gives it; the cli prints them, a test collects them. Engine
 * modules never print.
 */
typedef enum {
	TF_NOTICE_INFO,    /* said unless --quiet */
	TF_NOTICE_WARN,    /* "warning: ..." */
	TF_NOTICE_VERBOSE, /* only with -v */
	TF_NOTICE_ERROR,   /* always; the engine goes on or returns an error */
} tf_notice_level;
typedef void (*tf_notice_fn)(void *ctx, tf_notice_level level, const char *msg);
/* Format a notice and hand it to `fn` (nothing when fn is NULL). */
void tf_notice(tf_notice_fn fn, void *ctx, tf_notice_level level, const char *fmt, ...)
	TF_PRINTF(4, 5);
void tf_vnotice(tf_notice_fn fn, void *ctx, tf_notice_level level, const char *fmt, va_list ap);

/* A list of borrowed strings (repeatable flags, paths); zero-initialise. */
struct tf_strlist {
	TF_VEC(const char *) items;
};

/* The value of NAME in an environment of "NAME=VALUE" strings (`envp` may
 * be NULL), or NULL. */
const char *tf_env_get(char *const *envp, const char *name);

/* NULL-terminated string vectors, each string malloc'd. */
char **tf_strv_dup(char *const *v);
void tf_strv_free(char **v); /* accepts NULL */

/*
 * What compiling a POSIX extended regex from untrusted text would cost, in
 * copies of its pieces (repetitions multiply); refuse patterns above
 * TF_REGEX_MAX_COST rather than let regcomp() take gigabytes.
 */
#define TF_REGEX_MAX_COST 4096
size_t tf_regex_cost(const char *re);

/* Arena: many small allocations that die together. */
typedef struct tf_arena tf_arena;
tf_arena *tf_arena_new(void);
void *tf_arena_alloc(tf_arena *a, size_t n);
char *tf_arena_strndup(tf_arena *a, const char *s, size_t n);
char *tf_arena_strdup(tf_arena *a, const char *s);
void tf_arena_free(tf_arena *a);

/* Entries sorted by a 64-bit key, stably, in linear time (sort.c). */
typedef struct {
	uint64_t key, val;
} tf_keyed;
void tf_sort_keyed(tf_keyed *v, size_t n);

/* Hashing (64-bit, not cryptographic). */
uint64_t tf_hash_bytes(const void *data, size_t len, uint64_t seed);
static inline uint64_t tf_hash_u64(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
static inline uint64_t tf_hash_combine(uint64_t h, uint64_t v)
{
	return tf_hash_u64(h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)));
}

/*
 * Index hash table: maps a hash to indices of the caller's own array, so keys
 * are stored once (in the caller's array) and compared by a callback.
 */
typedef struct {
	uint64_t *slots; /* (hash32 << 32) | (index + 1); 0 = empty */
	size_t cap, count;
} tf_htab;
#define TF_HTAB_NONE UINT32_MAX
typedef bool (*tf_htab_eq_fn)(const void *ctx, uint32_t index, const void *key);
uint32_t tf_htab_find(const tf_htab *h, uint64_t hash, tf_htab_eq_fn eq,
		      const void *ctx, const void *key);
void tf_htab_insert(tf_htab *h, uint64_t hash, uint32_t index);
/* Remove the entry of `index` filed under `hash` (nothing if absent). */
void tf_htab_remove(tf_htab *h, uint64_t hash, uint32_t index);
void tf_htab_clear(tf_htab *h);
void tf_htab_free(tf_htab *h);

/* String interning table: strings get dense ids 0..n-1, id 0 is "". */
typedef struct {
	TF_VEC(const char *) strs;
	TF_VEC(uint32_t) lens;
	tf_htab index;
	tf_arena *arena;
} tf_strtab;
void tf_strtab_init(tf_strtab *t);
uint32_t tf_strtab_intern(tf_strtab *t, const char *s, size_t len);
/* Append without looking for a duplicate (decoders of foreign tables). */
uint32_t tf_strtab_push(tf_strtab *t, const char *s, size_t len);
/* Returns TF_HTAB_NONE when absent. */
uint32_t tf_strtab_lookup(tf_strtab *t, const char *s, size_t len);
void tf_strtab_free(tf_strtab *t);

/* Files. */
/* Read a whole file; the buffer is NUL-terminated. */
int tf_file_read(tf_buf *out, const char *path);
/*
 * Atomic replacement: write into a temporary file and rename it over `path`
 * on commit, so readers never see a half-written file. The temporary file
 * has no name until the commit (O_TMPFILE, where the file system has it),
 * so a process killed while writing leaves nothing behind; elsewhere it is
 * "<path>.tmp.<pid>".
 */
typedef struct {
	FILE *fp;
	char *path, *tmp;
	bool unnamed;  /* O_TMPFILE: named "<tmp>" only at the commit */
} tf_atomic_file;
int tf_atomic_open(tf_atomic_file *f, const char *path);
int tf_atomic_commit(tf_atomic_file *f);
void tf_atomic_abort(tf_atomic_file *f);
/* Write a buffer to `path` atomically. */
int tf_file_write_atomic(const char *path, const void *data, size_t len);
/*
 * What killed writers left in `dir`: each entry named PREFIX...PID (the
 * number after the last '.') whose process is gone, handed to `remove`
 * (NULL: unlinked). Those of live processes, and this one's, stay.
 */
void tf_remove_stale(const char *dir, const char *prefix,
		     void (*remove)(const char *path, void *payload), void *payload);
/* mkdir -p */
int tf_mkdir_p(const char *path, int mode);
/* rm -r: `path` and everything below it, symbolic links not followed;
 * 0 when it did not exist. */
int tf_rmtree(const char *path);
/*
 * The per-user cache of things that are slow to make and never change
 * under their key (the kernel's symbols of this boot, debug info without
 * compression): $TESTFLAME_CACHE_DIR, else $XDG_CACHE_HOME/testflame, else
 * $HOME/.cache/testflame. malloc'd; NULL when TESTFLAME_CACHE_DIR is "off"
 * or there is no home to put it in. Not created here.
 */
char *tf_user_cache_dir(void);

/*
 * Run `argv` (argv[0] looked up on PATH when it has no slash) in `dir`
 * (NULL: here) with the environment `env` (NULL: ours) and nothing on
 * stdin; its stdout into `out` and its stderr into `err` (either may be
 * NULL; the same buffer keeps both in the order written), at most `max`
 * bytes each. Its process group is killed after `timeout_ms`, which is
 * then an error. Returns the wait status (>= 0) or a negative error code.
 */
int tf_spawn_capture(tf_buf *out, tf_buf *err, const char *const *argv, const char *const *env,
		     const char *dir, unsigned timeout_ms, size_t max);
/* The same, in a new empty directory removed afterwards: a program asked
 * for a list, which must leave nothing behind where the suite runs even
 * if it ignores the question and runs its work. */
int tf_spawn_capture_scratch(tf_buf *out, tf_buf *err, const char *const *argv,
			     const char *const *env, unsigned timeout_ms, size_t max);

/* Monotonic clock in nanoseconds (CLOCK_MONOTONIC, the samples' clock). */
uint64_t tf_now_ns(void);

#endif
