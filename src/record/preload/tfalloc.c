/*
 * tfalloc.c - the allocation sampler, a library testflame preloads into
 * the command's processes (LD_PRELOAD) when memory is measured. It wraps
 * the C allocator (malloc, calloc, realloc, reallocarray, free and the
 * aligned forms), and in each process image writes one file (format.h):
 *
 *  - every thread's exact counts of allocations, bytes asked for and
 *    frees, kept in a slot of a shared mapping of the file: two adds a
 *    call, and a process killed at any moment leaves them complete;
 *  - a sample of the allocations, by bytes: each thread draws the distance
 *    to its next sample from an exponential distribution of mean RATE
 *    bytes (512 KiB, as tcmalloc's and jemalloc's heap profilers), so the
 *    chance a block is sampled grows with its size and every sample
 *    stands for a known number of bytes (the reader's weight). A sample
 *    carries the caller's frame-pointer chain, and for DWARF unwinding
 *    its registers and a copy of the top of its stack, as perf's samples;
 *  - the frees of sampled blocks, which give the live heap and its peak;
 *  - the counts at moments a test may begin or end: every millisecond of
 *    allocating, a thread's end, the process's exit or exec.
 *
 * Records are written whole with write(2) (O_APPEND), so what was written
 * stays in the file whatever becomes of the process.
 *
 * It must never break the program. So: symbols resolve through dlsym at
 * the first call, and the allocations dlsym itself makes come from a
 * static buffer; a re-entered call (a signal handler's malloc during a
 * sample, the calls a sample makes) passes straight through; counters are
 * single instructions on the thread's own memory; locks are taken only on
 * the sampled path, never by a re-entered call; fork gives the child a
 * file of its own; the records' descriptor is checked before each write
 * (a program may close it and reuse the number). It steps aside, counting
 * nothing and saying why in the file's notes, where it cannot wrap the
 * allocator: the program has its own malloc (an allocator or a sanitizer
 * linked in), a sanitizer's runtime is loaded. Before an exec it reads the
 * new program (execcheck.c) and removes itself from LD_PRELOAD for those it
 * must not enter: a dynamic sanitizer runtime (which aborts when another
 * library comes first) and another ABI. After a process forbids itself new
 * privileges (a seccomp sandbox comes next), it makes no more system calls:
 * its counts go on, its records stop.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "execcheck.h"
#include "format.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LIB_NAME "libtestflame-alloc.so"

extern char **environ;
extern void *__libc_stack_end;
/* glibc's own entry points: the allocator when dlsym cannot say which */
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

/* the allocator wrapped: the next definitions after this library */
static void *(*next_malloc)(size_t);
static void (*next_free)(void *);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_valloc)(size_t);
static void *(*next_pvalloc)(size_t);
static int (*next_execve)(const char *, char *const[], char *const[]);
static int (*next_execvpe)(const char *, char *const[], char *const[]);
static int (*next_execveat)(int, const char *, char *const[], char *const[], int);
static int (*next_fexecve)(int, char *const[], char *const[]);
static int (*next_posix_spawn)(pid_t *, const char *, const posix_spawn_file_actions_t *,
			       const posix_spawnattr_t *, char *const[], char *const[]);
static int (*next_posix_spawnp)(pid_t *, const char *, const posix_spawn_file_actions_t *,
				const posix_spawnattr_t *, char *const[], char *const[]);
static int (*next_prctl)(int, unsigned long, unsigned long, unsigned long, unsigned long);

enum { STATE_NONE, STATE_RESOLVING, STATE_READY };
static int g_state;
/* sampling: the environment asked for it and nothing stands against it */
static int g_active;
/* no more system calls (a sandbox may follow) */
static int g_quiet;
static uint32_t g_flags;        /* TF_ALLOC_ASIDE_* */
static uint64_t g_rate = TF_ALLOC_RATE_DEFAULT;
static uint32_t g_stack_bytes = 8192;
static char g_dir[TF_ALLOC_DIR_MAX];
static pthread_key_t g_key;
static int g_key_ok;

/* this process image's file (created at its first allocation) */
static int g_lock;
static char g_path[TF_ALLOC_DIR_MAX + 48]; /* DIR/PID.N */
static pid_t g_pid;
static struct tf_alloc_header *g_hdr;
static struct tf_alloc_slot *g_slots;

struct tstate {
	struct tf_alloc_slot *slot;   /* the thread's counts; NULL until claimed */
	struct tf_alloc_slot own;     /* ... when no file slot was left */
	uint32_t tid;
	int in_hook;                  /* inside the sampler: calls pass through */
	int resolving;                /* this thread resolves the symbols */
	int64_t until;                /* bytes to the next look (a sample, the clock) */
	uint64_t sample_at;           /* the thread's bytes at its next sample */
	uint64_t rate;                /* the mean distance it was drawn at */
	uint64_t last_mark;
	uint64_t rng;
	uintptr_t stack_hi;           /* the top of the thread's stack, 0 unknown */
};
static __thread struct tstate ts __attribute__((tls_model("initial-exec")));

/* -- small helpers, no allocation, no stdio ------------------------------ */

static void lock(int *l)
{
	while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(l, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
}

static void unlock(int *l)
{
	__atomic_store_n(l, 0, __ATOMIC_RELEASE);
}

/* An add a signal handler on the same thread cannot split: one
 * instruction (the slot is the thread's own, so no lock prefix). */
static inline void add(uint64_t *v, uint64_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("addq %1, %0" : "+m"(*v) : "r"(n));
#else
	*v += n;
#endif
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

static size_t put_str(char *buf, size_t at, size_t cap, const char *s)
{
	while (*s && at + 1 < cap)
		buf[at++] = *s++;
	buf[at] = '\0';
	return at;
}

static size_t put_uint(char *buf, size_t at, size_t cap, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && at + 1 < cap)
		buf[at++] = tmp[--n];
	buf[at] = '\0';
	return at;
}

static uint64_t parse_uint(const char *s, uint64_t dflt)
{
	uint64_t v = 0;
	if (!s || *s < '0' || *s > '9')
		return dflt;
	for (; *s >= '0' && *s <= '9'; s++)
		v = v * 10 + (uint64_t)(*s - '0');
	return *s ? dflt : v;
}

/* -- the allocations made before the allocator is known ------------------- */

/* dlsym may allocate (calloc) before it can say where malloc is: those
 * blocks come from here and are never given back. */
#define BOOT_SIZE (64 * 1024)
static char boot_buf[BOOT_SIZE] __attribute__((aligned(64)));
static size_t boot_used;

static int is_boot(const void *p)
{
	return (const char *)p >= boot_buf && (const char *)p < boot_buf + BOOT_SIZE;
}

static void *boot_alloc(size_t n, size_t align)
{
	size_t at, start;
	if (align < 16)
		align = 16;
	do {
		start = __atomic_load_n(&boot_used, __ATOMIC_RELAXED);
		at = (start + 16 + align - 1) & ~(align - 1); /* room for the size before it */
		if (at + n > BOOT_SIZE)
			return NULL;
	} while (!__atomic_compare_exchange_n(&boot_used, &start, at + n, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	memcpy(boot_buf + at - sizeof(size_t), &n, sizeof(size_t));
	return boot_buf + at; /* static memory: zeroed */
}

static size_t boot_size(const void *p)
{
	size_t n;
	memcpy(&n, (const char *)p - sizeof(size_t), sizeof(size_t));
	return n;
}

/* -- start-up -------------------------------------------------------------- */

#define RESOLVE(var, name, fallback) do { \
		*(void **)&(var) = dlsym(RTLD_NEXT, name); \
		if (!(var)) { *(void **)&(var) = (void *)(fallback); } \
	} while (0)

static void write_note(const char *text, int about_self);

static void configure(void);

static void atfork_child(void);

static void resolve(void)
{
	int expected = STATE_NONE;
	if (!__atomic_compare_exchange_n(&g_state, &expected, STATE_RESOLVING, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* another thread resolves: wait for it */
		while (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != STATE_READY)
			__builtin_ia32_pause();
		return;
	}
	ts.resolving = 1;
	RESOLVE(next_malloc, "malloc", __libc_malloc);
	RESOLVE(next_free, "free", __libc_free);
	RESOLVE(next_calloc, "calloc", __libc_calloc);
	RESOLVE(next_realloc, "realloc", __libc_realloc);
	RESOLVE(next_memalign, "memalign", __libc_memalign);
	RESOLVE(next_posix_memalign, "posix_memalign", NULL);
	RESOLVE(next_aligned_alloc, "aligned_alloc", NULL);
	RESOLVE(next_valloc, "valloc", NULL);
	RESOLVE(next_pvalloc, "pvalloc", NULL);
	RESOLVE(next_execve, "execve", NULL);
	RESOLVE(next_execvpe, "execvpe", NULL);
	RESOLVE(next_execveat, "execveat", NULL);
	RESOLVE(next_fexecve, "fexecve", NULL);
	RESOLVE(next_posix_spawn, "posix_spawn", NULL);
	RESOLVE(next_posix_spawnp, "posix_spawnp", NULL);
	RESOLVE(next_prctl, "prctl", NULL);
	configure();
	ts.resolving = 0;
	__atomic_store_n(&g_state, STATE_READY, __ATOMIC_RELEASE);
}

/* The sampler's own malloc, whatever the symbol resolves to. */
static void *tfa_malloc(size_t n);

static void thread_end(void *arg);

static int have_file(void);

static int sanitizer_loaded(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	return info->dlpi_name && tf_exec_is_sanitizer_lib(info->dlpi_name);
}

static void configure(void)
{
	const char *dir = getenv(TF_ALLOC_ENV_DIR);
	struct rlimit rl;

	if (!dir || !*dir || strlen(dir) >= sizeof(g_dir))
		return; /* not asked: a plain wrapper */
	put_str(g_dir, 0, sizeof(g_dir), dir);
	g_rate = parse_uint(getenv(TF_ALLOC_ENV_RATE), TF_ALLOC_RATE_DEFAULT);
	if (g_rate < 1)
		g_rate = 1;
	g_stack_bytes = (uint32_t)parse_uint(getenv(TF_ALLOC_ENV_STACK), 8192);
	if (g_stack_bytes > 65536)
		g_stack_bytes = 65536;
	g_stack_bytes &= ~7u;
	/* a file size limit would kill the process with SIGXFSZ for our writes */
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		return;
	/* A sanitizer's runtime is a library loaded (the names), or linked
	 * into the program, which then exports malloc: its symbols are looked
	 * up only then. A lookup that finds nothing takes the loader's error
	 * path, some 15 us each: five of them were a sixth of what the
	 * sampler cost a short process. */
	if (dl_iterate_phdr(sanitizer_loaded, NULL))
		g_flags |= TF_ALLOC_ASIDE_SANITIZER;
	else if (dlsym(RTLD_DEFAULT, "malloc") != (void *)tfa_malloc)
		g_flags |= dlsym(RTLD_DEFAULT, "__asan_init") || dlsym(RTLD_DEFAULT, "__tsan_init") ||
			   dlsym(RTLD_DEFAULT, "__msan_init") || dlsym(RTLD_DEFAULT, "__hwasan_init") ||
			   dlsym(RTLD_DEFAULT, "__lsan_init")
			   ? TF_ALLOC_ASIDE_SANITIZER : TF_ALLOC_ASIDE_FOREIGN;
	if (g_flags) {
		write_note(g_flags & TF_ALLOC_ASIDE_SANITIZER
			   ? "a sanitizer's runtime owns malloc: allocations not counted"
			   : "the program has its own malloc (an allocator or a sanitizer linked "
			     "in): allocations not counted", 1);
		return;
	}
	g_key_ok = pthread_key_create(&g_key, thread_end) == 0;
	pthread_atfork(NULL, NULL, atfork_child);
	g_active = 1;
	/* the file now, so that a program that allocates nothing is known
	 * to have run the sampler */
	have_file();
}

/* -- the file ------------------------------------------------------------- */

static void read_exe(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	out[n > 0 ? n : 0] = '\0';
}

/* Give the file room on disk up to `size`: fallocate, so a full disk is
 * an error here and never a SIGBUS when a record's page is touched. By
 * path, not by a descriptor kept open, which the program could close and
 * reuse for a file of its own. */
static int g_sparse;

static int back(const char *path, uint64_t from, uint64_t size)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = g_sparse ? ftruncate(fd, (off_t)size)
			  : fallocate(fd, 0, (off_t)from, (off_t)(size - from));
	close(fd);
	return rc;
}

#define BACK_STEP (1ULL << 20)
_Static_assert(TF_ALLOC_POOL_SIZE == TF_ALLOC_RECORDS + BACK_STEP, "a pooled file is a new one");

/* The records' pages are mapped ahead of the writes, POPULATE_AHEAD at a
 * time in one call: each page's first write would be a page fault of its
 * own (10-15 us on a VM's guest), and a short process's first samples,
 * each with a copy of its stack, fill several pages. */
#define POPULATE_AHEAD (64 * 1024)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; older C libraries lack the name */
#endif
static uint64_t g_populated; /* the file's bytes mapped so far */

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1 /* renameat2's flag (<stdio.h>, <linux/fs.h>) */
#endif

/* g_path: the name of this process image's file, the n-th tried. */
static void name_file(pid_t pid, unsigned n)
{
	size_t at = put_str(g_path, 0, sizeof(g_path), g_dir);
	at = put_str(g_path, at, sizeof(g_path), "/");
	at = put_uint(g_path, at, sizeof(g_path), (uint64_t)pid);
	at = put_str(g_path, at, sizeof(g_path), ".");
	put_uint(g_path, at, sizeof(g_path), n);
}

/* Take a file of the pool (format.h) as this image's, renamed to its
 * name (g_path): its descriptor, or -1 when the pool has none ready. No
 * mapping: a page where the process has no page table yet costs some
 * 50 us more than a fault on a VM, a few system calls less. */
static int take_pooled(pid_t pid)
{
	char path[PATH_MAX];

	size_t dir = put_str(path, 0, sizeof(path), g_dir);
	put_str(path, dir, sizeof(path), "/" TF_ALLOC_POOL_CTL);
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -1; /* no pool */
	off_t end = write(fd, "", 1) == 1 ? lseek(fd, 0, SEEK_CUR) : -1;
	close(fd);
	if (end <= 0)
		return -1;
	size_t at = put_str(path, dir, sizeof(path), "/p.");
	put_uint(path, at, sizeof(path), (uint64_t)(end - 1));
	for (unsigned n = 0; n < 1000; n++) {
		name_file(pid, n);
		/* never over another image's file */
		if (syscall(SYS_renameat2, AT_FDCWD, path, AT_FDCWD, g_path, RENAME_NOREPLACE) == 0)
			return open(g_path, O_RDWR | O_CLOEXEC);
		if (errno != EEXIST)
			return -1; /* not made in time: spent */
	}
	return -1;
}

/* Take or create this process image's file; g_lock held. */
static int open_file(void)
{
	pid_t pid = getpid();
	int fd = take_pooled(pid);
	int pooled = fd >= 0;

	for (unsigned n = 0; n < 1000 && fd < 0; n++) {
		name_file(pid, n);
		fd = open(g_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			return -1;
	}
	if (fd < 0)
		return -1;
	void *m = MAP_FAILED;
	/* a file system without fallocate: room as the file grows */
	if (pooled || fallocate(fd, 0, 0, TF_ALLOC_RECORDS + BACK_STEP) == 0 ||
	    (errno == EOPNOTSUPP && (g_sparse = 1) && ftruncate(fd, TF_ALLOC_RECORDS + BACK_STEP) == 0))
		m = mmap(NULL, TF_ALLOC_FILE_MAX, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE,
			 fd, 0);
	close(fd);
	/* no read-around: a fault on the file's first page would zero (read)
	 * a large folio of pages nobody wrote, the most of a short process's
	 * cost of the sampler */
	if (m != MAP_FAILED)
		madvise(m, TF_ALLOC_FILE_MAX, MADV_RANDOM);
	if (m == MAP_FAILED) {
		unlink(g_path);
		return -1;
	}
	struct tf_alloc_header *h = m;
	h->version = TF_ALLOC_VERSION;
	h->header_size = TF_ALLOC_HEADER;
	h->pid = (uint32_t)pid;
	h->flags = g_flags | (pooled ? TF_ALLOC_POOLED : 0);
	h->start_ns = now_ns();
	h->rate = g_rate;
	h->nslots = TF_ALLOC_SLOTS;
	h->backed = TF_ALLOC_RECORDS + BACK_STEP;
	memcpy(h->magic, TF_ALLOC_MAGIC, 8);
	g_hdr = h;
	g_populated = TF_ALLOC_RECORDS & ~(uint64_t)4095;
	g_slots = (struct tf_alloc_slot *)((char *)m + TF_ALLOC_HEADER);
	__atomic_store_n(&g_pid, pid, __ATOMIC_RELEASE);
	return 0;
}

static int have_file(void)
{
	if (LIKELY(__atomic_load_n(&g_pid, __ATOMIC_ACQUIRE) != 0))
		return 1;
	if (g_quiet)
		return 0;
	lock(&g_lock);
	int ok = g_pid != 0 || open_file() == 0;
	if (!ok)
		g_quiet = 1; /* no file to be had: counts go on in memory */
	unlock(&g_lock);
	return ok;
}

/* Map the records' pages up to `end` and a little beyond (POPULATE_AHEAD),
 * within what is backed. Where the kernel cannot (before Linux 5.14), the
 * writes fault their pages in as before. */
static void populate(uint64_t end)
{
	int saved = errno;
	lock(&g_lock);
	uint64_t from = g_populated, backed = g_hdr->backed;
	if (end > from) {
		uint64_t to = (end + POPULATE_AHEAD - 1) & ~(uint64_t)(POPULATE_AHEAD - 1);
		if (to > backed)
			to = backed;
		if (to > from && madvise((char *)g_hdr + from, to - from,
					 MADV_POPULATE_WRITE) != 0)
			to = TF_ALLOC_FILE_MAX;
		__atomic_store_n(&g_populated, to, __ATOMIC_RELEASE);
	}
	unlock(&g_lock);
	errno = saved;
}

/* Append a record made of `iov` (the first holds its tf_alloc_rec, whose
 * type is set last, once the rest is in place). */
static void write_rec(const struct iovec *iov, int n)
{
	if (g_quiet || !have_file())
		return;
	uint64_t len = 0;
	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	uint64_t at = __atomic_fetch_add(&g_hdr->tail, len, __ATOMIC_RELAXED) + TF_ALLOC_RECORDS;
	if (at + len > TF_ALLOC_FILE_MAX) {
		g_quiet = 1;
		return;
	}
	if (at + len > __atomic_load_n(&g_hdr->backed, __ATOMIC_ACQUIRE)) {
		int saved = errno;
		lock(&g_lock);
		uint64_t backed = g_hdr->backed;
		if (at + len > backed) {
			uint64_t want = (at + len + BACK_STEP - 1) & ~(BACK_STEP - 1);
			if (back(g_path, backed, want) == 0) {
				/* its pages mapped at once, not a fault at a time */
				if (madvise((char *)g_hdr + backed, want - backed,
					    MADV_POPULATE_WRITE) == 0 && g_populated == backed)
					__atomic_store_n(&g_populated, want, __ATOMIC_RELEASE);
				__atomic_store_n(&g_hdr->backed, want, __ATOMIC_RELEASE);
			} else
				g_quiet = 1; /* a full disk: the counts go on in the slots */
		}
		unlock(&g_lock);
		errno = saved;
		if (g_quiet)
			return;
	}
	if (at + len > __atomic_load_n(&g_populated, __ATOMIC_ACQUIRE))
		populate(at + len);
	char *dst = (char *)g_hdr + at;
	struct tf_alloc_rec *r = (struct tf_alloc_rec *)dst;
	const struct tf_alloc_rec *src = iov[0].iov_base;
	__atomic_store_n(&r->size, (uint32_t)len, __ATOMIC_RELAXED);
	memcpy(dst + 4, (const char *)iov[0].iov_base + 4, iov[0].iov_len - 4);
	dst += iov[0].iov_len;
	for (int i = 1; i < n; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
	uint32_t head = (uint32_t)src->type | (uint32_t)src->pad << 16;
	__atomic_store_n((uint32_t *)r, head, __ATOMIC_RELEASE);
}

static uint32_t gettid_cached(void)
{
	if (!ts.tid)
		ts.tid = (uint32_t)syscall(SYS_gettid);
	return ts.tid;
}

static void write_note(const char *text, int about_self)
{
	struct tf_alloc_note n;
	char buf[600];
	size_t len = put_str(buf, 0, sizeof(buf), text) + 1;
	size_t padded = (len + 7) & ~(size_t)7;
	static const char zeros[8];

	if (!g_dir[0])
		return;
	memset(&n, 0, sizeof(n));
	n.h.type = TF_ALLOC_REC_NOTE;
	n.h.pad = (uint16_t)about_self;
	n.pid = (uint32_t)syscall(SYS_getpid);
	n.h.size = (uint32_t)(sizeof(n) + padded);
	n.h.tid = gettid_cached();
	n.h.time = now_ns();
	struct iovec iov[3] = { { &n, sizeof(n) }, { buf, len }, { (void *)zeros, padded - len } };
	write_rec(iov, 3);
	/* the program's name is for the notes about it alone: read then (a
	 * link of /proc is some tens of microseconds) */
	if (about_self && g_hdr && !g_hdr->program[0] && g_pid == getpid())
		read_exe(g_hdr->program, sizeof(g_hdr->program));
}

/* -- threads -------------------------------------------------------------- */

/*
 * The mean distance to the next sample: finer for a thread that has
 * allocated little, so that a short test's few allocations are seen too,
 * and coarser as it allocates more, down to g_rate (512 KiB) from 512
 * times that allocated: a sixty-fourth of what the thread allocated so far,
 * at least g_rate / 512. A thread of 30 KiB is sampled every KiB (about
 * 30 samples), one of a GiB gets some 400 samples on the way to 256 MiB
 * and then one per 512 KiB. The sampling stays a Poisson process in bytes
 * (its intensity changes only at a sample), so each sample with the mean
 * it was drawn at is an unbiased estimate.
 */
#define RAMP 64
#define RATE_FLOOR 512

static uint64_t mean_distance(const struct tstate *t)
{
	uint64_t d = t->slot->bytes / RAMP, lo = g_rate / RATE_FLOOR;
	if (lo < 1)
		lo = 1;
	return d < lo ? lo : d > g_rate ? g_rate : d;
}

/* ln(u) for u in (0, 1], without libm (a program that does not link it
 * would load it for this alone): u = m 2^e with m in [sqrt(1/2), sqrt(2)),
 * ln m = 2 atanh(s), s = (m - 1) / (m + 1), |s| < 0.172: its series to
 * s^15 is within 1e-14 */
static double ln01(double u)
{
	union { double d; uint64_t b; } v = { .d = u };
	int e = (int)((v.b >> 52) & 0x7ff) - 1023;
	v.b = (v.b & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL; /* [1, 2) */
	double m = v.d;
	if (m > 1.4142135623730951) {
		m /= 2;
		e++;
	}
	double s = (m - 1) / (m + 1), s2 = s * s;
	double sum = 1.0 / 15;
	for (int k = 13; k >= 1; k -= 2)
		sum = 1.0 / k + s2 * sum;
	return 2 * s * sum + e * 0.6931471805599453;
}

static int64_t draw(struct tstate *t)
{
	t->rate = mean_distance(t);
	/* xorshift64*, then an exponential of mean t->rate */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	uint64_t r = t->rng * 0x2545F4914F6CDD1DULL;
	double u = ((double)(r >> 11) + 1.0) / 9007199254740993.0; /* (0, 1] */
	double d = -ln01(u) * (double)t->rate;
	return d > 9e18 ? INT64_MAX : (int64_t)d + 1;
}

/* The clock is read every TICK_BYTES allocated, and the counts are written
 * when a millisecond or more passed since they last were. */
#define TICK_BYTES (64 * 1024)

static void next_look(struct tstate *t)
{
	uint64_t at = t->slot->bytes, left = t->sample_at > at ? t->sample_at - at : 0;
	t->until = (int64_t)(left < TICK_BYTES ? left : TICK_BYTES);
}

static struct tf_alloc_slot *claim(struct tstate *t)
{
	if (!g_active) {
		t->until = INT64_MAX;
		t->slot = &t->own;
		return t->slot;
	}
	t->in_hook++;
	t->tid = (uint32_t)syscall(SYS_gettid);
	if (!t->rng)
		t->rng = ((uint64_t)t->tid * 0x9E3779B97F4A7C15ULL) ^ now_ns() ^ (uintptr_t)t;
	if (!t->rng)
		t->rng = 1;
	t->last_mark = now_ns();
	t->slot = &t->own;
	if (have_file()) {
		uint32_t i = __atomic_fetch_add(&g_hdr->slots_used, 1, __ATOMIC_RELAXED);
		if (i < TF_ALLOC_SLOTS) {
			struct tf_alloc_slot *s = &g_slots[i];
			/* what this thread counted before it had a slot */
			s->allocs = t->own.allocs;
			s->bytes = t->own.bytes;
			s->frees = t->own.frees;
			s->tid = t->tid;
			__atomic_store_n(&s->state, 1, __ATOMIC_RELEASE);
			t->slot = s;
		}
	}
	if (g_key_ok)
		pthread_setspecific(g_key, (void *)1);
	t->sample_at = t->slot->bytes + (uint64_t)draw(t);
	next_look(t);
	t->in_hook--;
	return t->slot;
}

static void mark(struct tstate *t, uint32_t kind, uint64_t time)
{
	struct tf_alloc_mark m;
	memset(&m, 0, sizeof(m));
	m.h.type = TF_ALLOC_REC_MARK;
	m.h.size = sizeof(m);
	m.h.tid = t->tid;
	m.h.time = time;
	m.counts.allocs = t->slot->allocs;
	m.counts.bytes = t->slot->bytes;
	m.counts.frees = t->slot->frees;
	m.kind = kind;
	t->last_mark = time;
	struct iovec iov = { &m, sizeof(m) };
	write_rec(&iov, 1);
}

static void thread_end(void *arg)
{
	(void)arg;
	struct tstate *t = &ts;
	if (!t->slot || !g_active)
		return;
	t->in_hook++;
	uint64_t now = now_ns();
	mark(t, TF_ALLOC_MARK_THREAD_END, now);
	if (t->slot != &t->own) {
		t->slot->end_ns = now;
		__atomic_store_n(&t->slot->state, 2, __ATOMIC_RELEASE);
	}
	t->in_hook--;
}

/* The top of the thread's stack: what a frame pointer or a stack copy may
 * reach. */
static uintptr_t stack_top(struct tstate *t)
{
	if (t->stack_hi)
		return t->stack_hi;
	if (t->tid == (uint32_t)g_pid) {
		t->stack_hi = (uintptr_t)__libc_stack_end;
	} else {
		pthread_attr_t a;
		void *addr;
		size_t size;
		if (pthread_getattr_np(pthread_self(), &a) == 0) {
			if (pthread_attr_getstack(&a, &addr, &size) == 0)
				t->stack_hi = (uintptr_t)addr + size;
			pthread_attr_destroy(&a);
		}
	}
	return t->stack_hi;
}

/* -- the live sampled blocks ---------------------------------------------- */

/* Open addressing over the sampled blocks still live; a byte per hash
 * bucket counts them, so a free that is not of one (nearly all) costs one
 * load. Both are small while few blocks are: a page each, the table
 * growing (a mapping of its own) as it fills, and the filter with it,
 * FILTER_PER_ENTRY buckets an entry, so that a free of another block
 * still finds its bucket empty (a page of filter for a thousand live
 * blocks sent a fifth of all frees to the lock). A short process's first
 * touch of each page is a page fault (10-15 us on a VM's guest), and
 * every free reads the filter: at 64 KiB of filter and 256 KiB of table a
 * two-millisecond test program took a fault at each of its first samples
 * and frees all over the filter. */
#define LIVE_FIRST 512            /* a page of table */
#define LIVE_MAX (1u << 15)
#define FILTER_PER_ENTRY 8
struct filter {
	uint8_t *count;           /* mask + 1 buckets */
	uint32_t mask;
};
static uintptr_t live_first[LIVE_FIRST] __attribute__((aligned(4096)));
static uint8_t live_counts_first[LIVE_FIRST * FILTER_PER_ENTRY] __attribute__((aligned(4096)));
static struct filter live_filter_first = { live_counts_first,
						LIVE_FIRST * FILTER_PER_ENTRY - 1 };
/* Read by frees without the lock: a new filter is published whole, and
 * one replaced is never unmapped (a free may be reading it) */
static struct filter *live_filter = &live_filter_first;
static uintptr_t *live_tab = live_first;
static uint32_t live_cap = LIVE_FIRST;
static uint32_t live_n, live_tombs;
static int live_lock;
#define TOMB ((uintptr_t)1)

static inline uint32_t hash_ptr(const void *p)
{
	uint64_t x = (uintptr_t)p;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (uint32_t)x;
}

/* The filter's bucket of a block: blocks are 16-byte aligned, and a shift
 * and an xor spread them well enough for a filter (cheaper than the
 * table's hash on every free) */
static inline uint8_t *filter_of(const struct filter *f, const void *p)
{
	uintptr_t x = (uintptr_t)p;
	return &f->count[(uint32_t)((x >> 4) ^ (x >> 16)) & f->mask];
}

/* A filter of `buckets` (a power of two) counting the table's blocks;
 * live_lock held. NULL when no memory is to be had: the one in use
 * stays, only slower. */
static struct filter *filter_new(uint32_t buckets)
{
	size_t head = (sizeof(struct filter) + 63) & ~(size_t)63;
	void *m = mmap(NULL, head + buckets, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct filter *f = m;
	f->count = (uint8_t *)m + head;
	f->mask = buckets - 1;
	for (uint32_t i = 0; i < live_cap; i++)
		if (live_tab[i] > TOMB) {
			uint8_t *c = filter_of(f, (const void *)live_tab[i]);
			if (*c < 255)
				(*c)++;
		}
	return f;
}

/* Into `tab` of `cap` (a power of two) entries; live_lock held. */
static int live_put(uintptr_t *tab, uint32_t cap, uintptr_t p)
{
	uint32_t h = hash_ptr((const void *)p);
	for (uint32_t i = 0; i < cap; i++) {
		uint32_t k = (h + i) & (cap - 1);
		if (tab[k] == 0 || tab[k] == TOMB) {
			live_tombs -= tab[k] == TOMB;
			tab[k] = p;
			return 1;
		}
	}
	return 0;
}

/* The table again at `cap` entries, its live entries moved over and its
 * tombstones dropped; live_lock held. The old one is unmapped unless it
 * is the first. */
static int live_rebuild(uint32_t cap)
{
	void *m = mmap(NULL, (size_t)cap * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 0;
	uintptr_t *tab = m;
	for (uint32_t i = 0; i < live_cap; i++)
		if (live_tab[i] > TOMB)
			live_put(tab, cap, live_tab[i]);
	if (live_tab != live_first)
		munmap(live_tab, (size_t)live_cap * sizeof(uintptr_t));
	live_tab = tab;
	live_cap = cap;
	live_tombs = 0;
	struct filter *f = live_filter;
	if (cap * FILTER_PER_ENTRY > f->mask + 1 && (f = filter_new(cap * FILTER_PER_ENTRY)))
		__atomic_store_n(&live_filter, f, __ATOMIC_RELEASE);
	return 1;
}

/* Room for one more below three quarters full: when the blocks fill
 * half of that, twice the table (up to LIVE_MAX); else the same, its
 * tombstones swept. live_lock held. */
static int live_room(void)
{
	if (live_n + live_tombs < live_cap * 3 / 4)
		return 1;
	uint32_t cap = live_n >= live_cap * 3 / 8 && live_cap < LIVE_MAX ? live_cap * 2 : live_cap;
	if (cap == live_cap && live_tombs == 0)
		return 0;
	return live_rebuild(cap) && live_n + live_tombs < live_cap * 3 / 4;
}

static int live_insert(const void *p)
{
	int ok = 0;
	lock(&live_lock);
	if (live_room())
		ok = live_put(live_tab, live_cap, (uintptr_t)p);
	live_n += (uint32_t)ok;
	uint8_t *c = filter_of(live_filter, p);
	if (ok && *c < 255)
		__atomic_fetch_add(c, 1, __ATOMIC_RELAXED);
	unlock(&live_lock);
	return ok;
}

static int live_remove(const void *p)
{
	uint32_t h = hash_ptr(p);
	int found = 0;
	lock(&live_lock);
	for (uint32_t i = 0; i < live_cap; i++) {
		uint32_t k = (h + i) & (live_cap - 1);
		if (live_tab[k] == 0)
			break;
		if (live_tab[k] == (uintptr_t)p) {
			live_tab[k] = TOMB;
			live_n--;
			live_tombs++;
			found = 1;
			break;
		}
	}
	uint8_t *c = filter_of(live_filter, p);
	if (found && *c < 255)
		__atomic_fetch_sub(c, 1, __ATOMIC_RELAXED);
	unlock(&live_lock);
	return found;
}

static inline int maybe_sampled(const void *p)
{
	const struct filter *f = __atomic_load_n(&live_filter, __ATOMIC_ACQUIRE);
	return __atomic_load_n(filter_of(f, p), __ATOMIC_RELAXED) != 0;
}

/* -- sampling -------------------------------------------------------------- */

/* A sample of the block `p` of `n` bytes; `fp` is the frame of the
 * wrapper the program called, whose return address is the program's. */
static void sample(struct tstate *t, size_t n, void *p, void *const *fp)
{
	struct {
		struct tf_alloc_sample s;
		uint64_t ips[TF_ALLOC_MAX_FRAMES];
	} r;
	uintptr_t hi = stack_top(t), lo = (uintptr_t)__builtin_frame_address(0);
	uintptr_t ret = (uintptr_t)fp[1];
	uint32_t nips = 0;
	static const char zeros[8];

	memset(&r.s, 0, sizeof(r.s));
	r.s.h.type = TF_ALLOC_REC_SAMPLE;
	r.s.h.tid = t->tid;
	r.s.h.time = now_ns();
	r.s.size = n;
	r.s.ptr = (uintptr_t)p;
	r.s.rate = t->rate;
	r.s.counts.allocs = t->slot->allocs;
	r.s.counts.bytes = t->slot->bytes;
	r.s.counts.frees = t->slot->frees;
	/* the caller's pc is its call (the return address less one) */
	r.ips[nips++] = ret - 1;
	uintptr_t f = (uintptr_t)fp[0];
	while (hi && nips < TF_ALLOC_MAX_FRAMES && f > lo && (f & 7) == 0 && f + 16 <= hi) {
		uintptr_t next, ra;
		memcpy(&next, (void *)f, 8);
		memcpy(&ra, (void *)(f + 8), 8);
		if (ra < 4096)
			break;
		r.ips[nips++] = ra;
		if (next <= f)
			break;
		f = next;
	}
	r.s.nips = nips;
	/* the caller's registers at its call, and its stack from there */
	r.s.sp = (uintptr_t)fp + 16;
	r.s.bp = (uintptr_t)fp[0];
	r.s.ip = ret - 1;
	if (g_stack_bytes && hi > r.s.sp) {
		uintptr_t len = hi - r.s.sp;
		r.s.stack_len = (uint32_t)(len < g_stack_bytes ? len : g_stack_bytes);
	}
	size_t fixed = sizeof(r.s) + nips * 8;
	size_t pad = (8 - (r.s.stack_len & 7)) & 7;
	r.s.h.size = (uint32_t)(fixed + r.s.stack_len + pad);
	struct iovec iov[3] = {
		{ &r, fixed },
		{ (void *)r.s.sp, r.s.stack_len },
		{ (void *)zeros, pad },
	};
	if (!live_insert(p))
		__atomic_fetch_or(&g_hdr->flags, TF_ALLOC_LIVE_FULL, __ATOMIC_RELAXED);
	write_rec(iov, 3);
}

static __attribute__((noinline)) void slow(struct tstate *t, size_t n, void *p,
					   void *const *fp)
{
	if (t->in_hook)
		return;
	if (!g_active) {
		t->until = INT64_MAX;
		return;
	}
	t->in_hook++;
	uint64_t bytes = t->slot->bytes;
	if (bytes >= t->sample_at) {
		if (have_file())
			sample(t, n, p, fp);
		t->sample_at = bytes + (uint64_t)draw(t);
	}
	uint64_t now = now_ns();
	if (now - t->last_mark >= 1000000)
		mark(t, TF_ALLOC_MARK_TICK, now);
	next_look(t);
	t->in_hook--;
}

/* Count an allocation of `n` bytes (the block `p`), maybe sample it. */
static inline void account(size_t n, void *p, void *const *fp)
{
	struct tstate *t = &ts;
	/* the sampler's own (pthread_getattr_np's, a key's array): not the
	 * program's, and not to move the thread's next sample */
	if (UNLIKELY(t->in_hook))
		return;
	struct tf_alloc_slot *s = t->slot;
	if (UNLIKELY(!s))
		s = claim(t);
	add(&s->allocs, 1);
	add(&s->bytes, n);
	t->until -= (int64_t)(n < (size_t)INT64_MAX ? n : (size_t)INT64_MAX);
	if (UNLIKELY(t->until < 0))
		slow(t, n, p, fp);
}

/* Count a free of `p` (not NULL), before the allocator may reuse it. */
static __attribute__((noinline)) void free_sampled(struct tstate *t, void *p)
{
	if (t->in_hook || !g_active)
		return;
	t->in_hook++;
	if (live_remove(p)) {
		struct tf_alloc_free r;
		memset(&r, 0, sizeof(r));
		r.h.type = TF_ALLOC_REC_FREE;
		r.h.size = sizeof(r);
		r.h.tid = gettid_cached();
		r.h.time = now_ns();
		r.ptr = (uintptr_t)p;
		struct iovec iov = { &r, sizeof(r) };
		write_rec(&iov, 1);
	}
	t->in_hook--;
}

static inline void account_free(void *p)
{
	struct tstate *t = &ts;
	if (UNLIKELY(t->in_hook))
		return;
	struct tf_alloc_slot *s = t->slot;
	if (UNLIKELY(!s))
		s = claim(t);
	add(&s->frees, 1);
	if (UNLIKELY(maybe_sampled(p)))
		free_sampled(t, p);
}

/* -- the allocator's entry points ------------------------------------------ */

#define FRAME ((void *const *)__builtin_frame_address(0))

/* Before the symbols are known: the resolving thread's own calls (dlsym's)
 * are served from the static buffer, other threads wait. */
static inline int starting(void)
{
	if (LIKELY(__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == STATE_READY))
		return 0;
	if (ts.resolving)
		return 1;
	resolve();
	return 0;
}

static __attribute__((noinline, used)) void *tfa_malloc(size_t n)
{
	if (UNLIKELY(starting()))
		return next_malloc ? next_malloc(n) : boot_alloc(n, 16);
	void *p = next_malloc(n);
	if (LIKELY(p != NULL))
		account(n, p, FRAME);
	return p;
}
EXPORT void *malloc(size_t n) __attribute__((alias("tfa_malloc")));

/* (its last call may be a jump: free has no caller to sample; clang, as
 * the fuzzing build uses, has no per-function optimize attribute) */
#ifdef __clang__
#define SIBLING_CALLS
#else
#define SIBLING_CALLS __attribute__((optimize("optimize-sibling-calls")))
#endif
EXPORT __attribute__((noinline)) SIBLING_CALLS void free(void *p)
{
	if (UNLIKELY(!p))
		return;
	if (UNLIKELY(is_boot(p)))
		return;
	if (UNLIKELY(starting())) {
		if (next_free)
			next_free(p);
		return;
	}
	account_free(p);
	next_free(p);
}

EXPORT __attribute__((noinline)) void *calloc(size_t k, size_t n)
{
	size_t total;
	if (__builtin_mul_overflow(k, n, &total))
		total = SIZE_MAX;
	if (UNLIKELY(starting()))
		return next_calloc ? next_calloc(k, n) :
		       total == SIZE_MAX ? NULL : boot_alloc(total, 16);
	void *p = next_calloc(k, n);
	if (LIKELY(p != NULL))
		account(total, p, FRAME);
	return p;
}

static void *do_realloc(void *p, size_t n, void *const *fp)
{
	if (UNLIKELY(starting())) {
		if (next_realloc && !is_boot(p))
			return next_realloc(p, n);
		void *q = boot_alloc(n, 16);
		if (q && p)
			memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
		return q;
	}
	if (UNLIKELY(p && is_boot(p))) {
		/* a block from before the start: moved to the allocator */
		void *q = next_malloc(n ? n : 1);
		if (q) {
			memcpy(q, p, boot_size(p) < n ? boot_size(p) : n);
			account(n, q, fp);
		}
		return q;
	}
	if (!p) {
		void *q = next_realloc(NULL, n);
		if (q)
			account(n, q, fp);
		return q;
	}
	account_free(p);
	void *q = next_realloc(p, n);
	if (q && n)
		account(n, q, fp);
	return q;
}

EXPORT __attribute__((noinline)) void *realloc(void *p, size_t n)
{
	return do_realloc(p, n, FRAME);
}

EXPORT __attribute__((noinline)) void *reallocarray(void *p, size_t k, size_t n)
{
	size_t total;
	if (__builtin_mul_overflow(k, n, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc(p, total, FRAME);
}

EXPORT __attribute__((noinline)) int posix_memalign(void **out, size_t align, size_t n)
{
	if (UNLIKELY(starting())) {
		if (next_posix_memalign)
			return next_posix_memalign(out, align, n);
		*out = boot_alloc(n, align);
		return *out ? 0 : ENOMEM;
	}
	int rc = next_posix_memalign(out, align, n);
	if (rc == 0 && *out)
		account(n, *out, FRAME);
	return rc;
}

/* A block the allocator gave (or NULL), counted as made by the caller of
 * the wrapper whose frame is `fp`. */
static inline void *counted(void *p, size_t n, void *const *fp)
{
	if (p)
		account(n, p, fp);
	return p;
}

EXPORT __attribute__((noinline)) void *aligned_alloc(size_t align, size_t n)
{
	if (UNLIKELY(starting()))
		return next_aligned_alloc ? next_aligned_alloc(align, n) : boot_alloc(n, align);
	return counted(next_aligned_alloc(align, n), n, FRAME);
}

EXPORT __attribute__((noinline)) void *memalign(size_t align, size_t n)
{
	if (UNLIKELY(starting()))
		return next_memalign ? next_memalign(align, n) : boot_alloc(n, align);
	return counted(next_memalign(align, n), n, FRAME);
}

EXPORT __attribute__((noinline)) void *valloc(size_t n)
{
	if (UNLIKELY(starting()))
		return next_valloc ? next_valloc(n) : boot_alloc(n, 4096);
	return counted(next_valloc(n), n, FRAME);
}

EXPORT __attribute__((noinline)) void *pvalloc(size_t n)
{
	if (UNLIKELY(starting()))
		return next_pvalloc ? next_pvalloc(n) : boot_alloc((n + 4095) & ~(size_t)4095, 4096);
	return counted(next_pvalloc(n), n, FRAME);
}

/* -- the process's exit and its execs --------------------------------------- */

/* The process's peak resident set so far, from /proc/self/status. */
static uint64_t hwm_kb(void)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, r;
	if (fd < 0)
		return 0;
	while (n < (ssize_t)sizeof(buf) - 1 && (r = read(fd, buf + n, sizeof(buf) - 1 - (size_t)n)) > 0)
		n += r;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	const char *at = strstr(buf, "\nVmHWM:");
	if (!at)
		return 0;
	at += 7;
	while (*at == ' ' || *at == '\t')
		at++;
	uint64_t v = 0;
	while (*at >= '0' && *at <= '9')
		v = v * 10 + (uint64_t)(*at++ - '0');
	return v;
}

/* The counts of the calling thread and the process's peak, at its end. */
static void process_end(uint32_t kind)
{
	struct tstate *t = &ts;
	if (!g_active || g_quiet || !__atomic_load_n(&g_pid, __ATOMIC_ACQUIRE) ||
	    g_pid != getpid())
		return;
	t->in_hook++;
	uint64_t now = now_ns();
	if (t->slot)
		mark(t, kind, now);
	g_hdr->hwm_kb = hwm_kb();
	if (kind == TF_ALLOC_MARK_EXIT)
		g_hdr->end_ns = now;
	t->in_hook--;
}

__attribute__((destructor)) static void at_exit(void)
{
	process_end(TF_ALLOC_MARK_EXIT);
}

__attribute__((constructor)) static void at_start(void)
{
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != STATE_READY)
		resolve();
}

static void atfork_child(void)
{
	/* the parent's file, mapping and locks are the parent's */
	if (g_hdr)
		munmap(g_hdr, TF_ALLOC_FILE_MAX);
	g_hdr = NULL;
	g_slots = NULL;
	g_pid = 0;
	g_populated = 0;
	g_lock = 0;
	live_lock = 0;
	memset(&ts.own, 0, sizeof(ts.own));
	ts.slot = NULL;
	ts.tid = 0;
	ts.stack_hi = 0;
}

/* Whether `path` may start with the sampler; if not, `envp` without it in
 * `out` (room for `cap` pointers) and `buf`, and a note. Returns the
 * environment to exec with. */
static char *const *exec_env(const char *path, char *const *envp, char **out, size_t cap,
			     char *buf, size_t buflen)
{
	char why[64];
	int rc;

	if (!g_dir[0] || !path || !envp)
		return envp;
	rc = tf_exec_check(path, why, sizeof(why));
	if (rc != TF_EXEC_SANITIZER && rc != TF_EXEC_ABI)
		return envp;
	size_t n = 0, i = 0;
	for (char *const *e = envp; *e; e++)
		n++;
	if (n + 1 > cap || buflen < 12)
		return envp;
	for (char *const *e = envp; *e; e++) {
		if (strncmp(*e, "LD_PRELOAD=", 11) != 0) {
			out[i++] = *e;
			continue;
		}
		memcpy(buf, "LD_PRELOAD=", 11);
		int len = tf_exec_strip_preload(*e + 11, LIB_NAME, buf + 11, buflen - 11);
		if (len > 0)
			out[i++] = buf;
		else if (len < 0)
			out[i++] = *e;
	}
	out[i] = NULL;
	char note[600];
	size_t at = put_str(note, 0, sizeof(note), path);
	at = put_str(note, at, sizeof(note), rc == TF_EXEC_ABI ? " is built for " : " links ");
	at = put_str(note, at, sizeof(note), why);
	put_str(note, at, sizeof(note), ": it ran without the allocation sampler");
	write_note(note, 0);
	return out;
}

/* The program execvp() would run for `file`, into `buf`. */
static const char *find_in_path(const char *file, char *buf, size_t len)
{
	if (!file || strchr(file, '/'))
		return file;
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		const char *e = strchr(path, ':');
		size_t dl = e ? (size_t)(e - path) : strlen(path);
		if (dl + strlen(file) + 2 < len) {
			memcpy(buf, dl ? path : ".", dl ? dl : 1);
			size_t at = dl ? dl : 1;
			buf[at++] = '/';
			put_str(buf, at, len, file);
			if (access(buf, X_OK) == 0)
				return buf;
		}
		if (!e)
			break;
		path = e + 1;
	}
	return NULL;
}

/* A pointer the headers declare non-null, which a program may pass NULL
 * all the same: the compiler may not assume. */
static inline const char *unknown(const char *p)
{
	__asm__("" : "+r"(p));
	return p;
}

/* The environments and argument lists copied for an exec live on the
 * stack (no malloc: a vfork child may be calling); past these sizes the
 * environment is passed as it is. */
#define ENV_MAX 8192
#define ARGV_MAX 65536

static size_t env_count(char *const *envp)
{
	size_t n = 0;
	while (envp && envp[n] && n < ENV_MAX)
		n++;
	return n + 1;
}

static size_t preload_len(char *const *envp)
{
	for (size_t i = 0; envp && envp[i] && i < ENV_MAX; i++)
		if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0)
			return strlen(envp[i]) + 1;
	return 16;
}

/* Declares env[] and pre[] for `envp`, and `use`, the environment to
 * exec `check` with. */
#define EXEC_ENV(check, envp, use) \
	size_t nenv_ = env_count(envp), npre_ = preload_len(envp); \
	char *env_[nenv_]; \
	char pre_[npre_]; \
	char *const *use = exec_env(check, envp, env_, nenv_, pre_, npre_)

static void before_exec(void)
{
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != STATE_READY)
		resolve();
	process_end(TF_ALLOC_MARK_EXEC);
}

EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	before_exec();
	EXEC_ENV(path, envp, use);
	return next_execve(path, argv, use);
}

EXPORT int execv(const char *path, char *const argv[])
{
	return execve(path, argv, environ);
}

EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	char full[PATH_MAX];
	before_exec();
	EXEC_ENV(find_in_path(file, full, sizeof(full)), envp, use);
	return next_execvpe(file, argv, use);
}

EXPORT int execvp(const char *file, char *const argv[])
{
	return execvpe(file, argv, environ);
}

/* execl, execle, execlp: the arguments counted, then copied into an
 * array of that size */
static size_t count_args(const char *first, va_list ap)
{
	size_t n = 1;
	va_list aq;
	va_copy(aq, ap);
	while (first && n < ARGV_MAX && va_arg(aq, char *) != NULL)
		n++;
	va_end(aq);
	return n + 1;
}

static void copy_args(char **argv, size_t n, const char *first, va_list *ap)
{
	argv[0] = (char *)first;
	for (size_t i = 1; i < n; i++)
		argv[i] = first && i < n - 1 ? va_arg(*ap, char *) : NULL;
}

EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = count_args(arg, ap);
	char *argv[n];
	copy_args(argv, n, arg, &ap);
	va_end(ap);
	return execve(path, argv, environ);
}

EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = count_args(arg, ap);
	char *argv[n];
	copy_args(argv, n, arg, &ap);
	if (unknown(arg))
		(void)va_arg(ap, char *); /* the NULL that ends the arguments */
	char *const *envp = va_arg(ap, char *const *);
	va_end(ap);
	return execve(path, argv, envp);
}

EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	va_start(ap, arg);
	size_t n = count_args(arg, ap);
	char *argv[n];
	copy_args(argv, n, arg, &ap);
	va_end(ap);
	return execvpe(file, argv, environ);
}

EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	char path[64];
	size_t at = put_str(path, 0, sizeof(path), "/proc/self/fd/");
	put_uint(path, at, sizeof(path), (uint64_t)fd);
	before_exec();
	EXEC_ENV(path, envp, use);
	return next_fexecve(fd, argv, use);
}

EXPORT int execveat(int dirfd, const char *pathname, char *const argv[], char *const envp[],
		    int flags)
{
	char path[64];
	const char *check = NULL;
	if (unknown(pathname) && pathname[0] && (pathname[0] == '/' || dirfd == AT_FDCWD)) {
		check = pathname;
	} else if (flags & AT_EMPTY_PATH) {
		size_t at = put_str(path, 0, sizeof(path), "/proc/self/fd/");
		put_uint(path, at, sizeof(path), (uint64_t)dirfd);
		check = path;
	}
	before_exec();
	if (!next_execveat) {
		errno = ENOSYS;
		return -1;
	}
	EXEC_ENV(check, envp, use);
	return next_execveat(dirfd, pathname, argv, use, flags);
}

EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
		       const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != STATE_READY)
		resolve();
	EXEC_ENV(path, envp, use);
	return next_posix_spawn(pid, path, fa, attr, argv, use);
}

EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	char full[PATH_MAX];
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != STATE_READY)
		resolve();
	EXEC_ENV(find_in_path(file, full, sizeof(full)), envp, use);
	return next_posix_spawnp(pid, file, fa, attr, argv, use);
}

/* A process that forbids itself new privileges or installs a seccomp
 * filter may next refuse system calls, or die of one: no more of ours. */
EXPORT int prctl(int option, ...)
{
	va_list ap;
	unsigned long a[4];
	va_start(ap, option);
	for (int i = 0; i < 4; i++)
		a[i] = va_arg(ap, unsigned long);
	va_end(ap);
	if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != STATE_READY)
		resolve();
	if (option == PR_SET_NO_NEW_PRIVS || option == PR_SET_SECCOMP)
		g_quiet = 1;
	return next_prctl(option, a[0], a[1], a[2], a[3]);
}
