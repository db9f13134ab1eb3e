/*
 * memory.c - checked allocation, vectors, byte buffers and arenas.
 *
 * All of testflame allocates through these so that an out-of-memory
 * condition ends the process with one clear line instead of a crash later.
 */
#include "testflame/common.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Large blocks in transparent huge pages where the system leaves that to
 * the program (THP "madvise", Debian's default; glibc does the same only
 * when GLIBC_TUNABLES asks): a 2 MiB page is one fault and one TLB entry
 * where 512 small pages are 512 of each. compare --report of two
 * 120,000-stack profiles fills ~300 MB of arrays once; in small pages that
 * was 95,700 faults and a quarter of its CPU on a paravirtualised AMD EPYC.
 * The advice covers the block's own pages only; the kernel backs just the
 * aligned 2 MiB ranges in them, when first touched.
 */
#define SMALL_PAGE ((uintptr_t)4096)
#define BIG_BLOCK ((size_t)4 << 20)

static void big_pages(void *p, size_t n)
{
#ifdef MADV_HUGEPAGE
	if (n < BIG_BLOCK)
		return;
	/* the block's whole pages: a block malloc() mapped by itself is then
	 * advised whole, one mapping still, which realloc() can move without
	 * a copy (mremap() refuses a range that spans two mappings) */
	uintptr_t lo = (uintptr_t)p & ~(SMALL_PAGE - 1);
	uintptr_t hi = ((uintptr_t)p + malloc_usable_size(p) + SMALL_PAGE - 1) & ~(SMALL_PAGE - 1);
	(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#else
	(void)p;
	(void)n;
#endif
}

/*
 * The heap below those blocks in huge pages too. A profile is built of
 * thousands of blocks under 4 MiB (its vectors, libdw's units, the
 * strings), each page of them faulted in alone: on the same EPYC guest a
 * small page's first touch costs 10-19 us, a tenth of a page of its huge
 * ones, and the post-processing of a 30,000-sample run took 1,000 of them
 * (a third of its CPU). The heap is grown once by HEAP_RESERVE (address
 * space: only what is touched is backed) and that range advised whole;
 * it is not given back as blocks are freed, so the next blocks reuse its
 * pages instead of faulting them in again. Blocks from BIG_BLOCK up keep
 * their own mappings (big_pages). Past the reserve the heap grows as
 * before, in small pages.
 */
#define HUGE_PAGE ((uintptr_t)2 << 20)
#define HEAP_RESERVE ((size_t)64 << 20)
#define GROW ((size_t)256 << 10)

static void *volatile heap_aside; /* the heap's bytes below its first huge page */

void tf_heap_huge_pages(void)
{
#if defined(__GLIBC__) && defined(MADV_HUGEPAGE)
	static bool done;
	if (done)
		return;
	done = true;
	if (!mallopt(M_MMAP_THRESHOLD, (int)BIG_BLOCK) ||
	    !mallopt(M_TRIM_THRESHOLD, (int)(2 * HEAP_RESERVE)) ||
	    !mallopt(M_TOP_PAD, (int)HEAP_RESERVE))
		return;
	uintptr_t lo = (uintptr_t)sbrk(0);
	char *volatile p = malloc(GROW); /* more than the heap holds yet: it grows */
	uintptr_t hi = (uintptr_t)sbrk(0);
	free(p);
	mallopt(M_TOP_PAD, 128 << 10); /* glibc's default, past the reserve */
	if (!p || lo == (uintptr_t)-1 || hi == (uintptr_t)-1 || hi < lo + HEAP_RESERVE)
		return; /* a malloc() of another kind (a sanitizer's, valgrind's) */
	/* p's block went back to the top of the heap, where the next blocks
	 * come from: they start at a huge page, the bytes before it (never
	 * touched, so never backed) set aside, or a command that allocates
	 * less than 2 MiB would have all of it in the small pages below. Past
	 * the header malloc() wrote after p's block, and advised before the
	 * next one is written: a page touched before the advice is a small
	 * one, and so are the 2 MiB around it for good */
	uintptr_t top = (uintptr_t)p - 2 * sizeof(size_t);
	uintptr_t start = ((uintptr_t)p + GROW + 2 * sizeof(size_t) + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	hi &= ~(HUGE_PAGE - 1);
	if (hi <= start || madvise((void *)start, hi - start, MADV_HUGEPAGE) != 0)
		return;
	if (start - top >= 1024)
		heap_aside = malloc(start - top - 2 * sizeof(size_t));
#endif
}

static void oom(size_t n)
{
	fprintf(stderr, "testflame: out of memory (allocating %zu bytes)\n", n);
	abort();
}

void *tf_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	big_pages(p, n);
	return p;
}

void *tf_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	big_pages(p, n * size);
	return p;
}

void *tf_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	big_pages(q, n);
	return q;
}

char *tf_xstrdup(const char *s)
{
	return tf_xstrndup(s, strlen(s));
}

char *tf_xstrndup(const char *s, size_t n)
{
	char *p = tf_xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *tf_xasprintf(const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (!b.ptr)
		return tf_xstrdup("");
	return tf_buf_detach(&b);
}

void tf_vec_grow_(void **v, size_t *cap, size_t need, size_t elem)
{
	size_t ncap;

	if (need <= *cap)
		return;
	ncap = *cap ? *cap * 2 : 8;
	while (ncap < need)
		ncap *= 2;
	if (ncap > SIZE_MAX / elem)
		oom(SIZE_MAX);
	*v = tf_xrealloc(*v, ncap * elem);
	*cap = ncap;
}

void tf_buf_grow(tf_buf *b, size_t extra)
{
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return;
	size_t ncap = b->cap ? b->cap * 2 : 64;
	while (ncap < need)
		ncap *= 2;
	b->ptr = tf_xrealloc(b->ptr, ncap);
	b->cap = ncap;
}

void tf_buf_put(tf_buf *b, const void *data, size_t len)
{
	tf_buf_grow(b, len);
	if (len)
		memcpy(b->ptr + b->len, data, len);
	b->len += len;
	b->ptr[b->len] = '\0';
}

void tf_buf_puts(tf_buf *b, const char *s)
{
	tf_buf_put(b, s, strlen(s));
}

void tf_buf_putc(tf_buf *b, char c)
{
	tf_buf_grow(b, 1);
	b->ptr[b->len++] = c;
	b->ptr[b->len] = '\0';
}

void tf_buf_put_int(tf_buf *b, int64_t v)
{
	char d[24], *e = d + sizeof(d), *p = e;
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;

	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	tf_buf_put(b, p, (size_t)(e - p));
}

void tf_buf_vprintf(tf_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	tf_buf_grow(b, 64);
	va_copy(cp, ap);
	n = vsnprintf(b->ptr + b->len, b->cap - b->len, fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	if ((size_t)n >= b->cap - b->len) {
		tf_buf_grow(b, (size_t)n);
		vsnprintf(b->ptr + b->len, b->cap - b->len, fmt, ap);
	}
	b->len += (size_t)n;
}

void tf_buf_printf(tf_buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tf_buf_vprintf(b, fmt, ap);
	va_end(ap);
}

void tf_buf_clear(tf_buf *b)
{
	b->len = 0;
	if (b->ptr)
		b->ptr[0] = '\0';
}

char *tf_buf_detach(tf_buf *b)
{
	char *p = b->ptr;
	if (!p)
		p = tf_xstrdup("");
	b->ptr = NULL;
	b->len = b->cap = 0;
	return p;
}

void tf_buf_free(tf_buf *b)
{
	free(b->ptr);
	b->ptr = NULL;
	b->len = b->cap = 0;
}

/* Arena: a chain of blocks; big requests get a block of their own. */
struct arena_block {
	struct arena_block *next;
	size_t used, size;
	max_align_t data[];
};

struct tf_arena {
	struct arena_block *head;
};

#define ARENA_BLOCK (64 * 1024)

tf_arena *tf_arena_new(void)
{
	return tf_xcalloc(1, sizeof(tf_arena));
}

void *tf_arena_alloc(tf_arena *a, size_t n)
{
	struct arena_block *b = a->head;
	const size_t align = sizeof(max_align_t);

	n = (n + align - 1) & ~(align - 1);
	if (!b || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;
		struct arena_block *nb = tf_xmalloc(sizeof(*nb) + size);
		nb->used = 0;
		nb->size = size;
		if (b && size != ARENA_BLOCK) {
			/* keep the partly used block current */
			nb->next = b->next;
			b->next = nb;
			nb->used = n;
			return nb->data;
		}
		nb->next = b;
		a->head = b = nb;
	}
	void *p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

char *tf_arena_strndup(tf_arena *a, const char *s, size_t n)
{
	char *p = tf_arena_alloc(a, n + 1);
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *tf_arena_strdup(tf_arena *a, const char *s)
{
	return tf_arena_strndup(a, s, strlen(s));
}

void tf_arena_free(tf_arena *a)
{
	if (!a)
		return;
	struct arena_block *b = a->head;
	while (b) {
		struct arena_block *n = b->next;
		free(b);
		b = n;
	}
	free(a);
}
