/*
 * test_stack.c - copying stacks and walking frame pointers
 * (src/record/stack.c) on this very process's memory: whole reads, the
 * readable prefix of a region that runs into an unmapped page, several
 * stacks in one batch, the /proc/PID/mem fallback a seccomp filter forces,
 * and frame chains inside and beyond the copied window.
 */
#include "unit.h"

#include "record/record_int.h"

#include <sys/mman.h>

#define PAGE TF_STACK_PAGE

/* `pages` readable pages followed by one that is not mapped. */
static uint8_t *region(size_t pages)
{
	uint8_t *p = mmap(NULL, (pages + 1) * PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(munmap(p + pages * PAGE, PAGE), 0);
	for (size_t i = 0; i < pages * PAGE; i++)
		p[i] = (uint8_t)(i * 13 + 1);
	return p;
}

static void check_reads(bool vm_readv)
{
	static tf_stack_reader r;
	uint8_t *mem = region(2), buf[3 * PAGE];
	int fd = -1;

	tf_stack_reader_init(&r);
	r.vm_readv = vm_readv;
	/* inside: everything */
	memset(buf, 0, sizeof(buf));
	assert_int_equal(tf_stack_read(&r, getpid(), &fd, (uintptr_t)mem + 100, buf, 5000), 5000);
	assert_memory_equal(buf, mem + 100, 5000);
	/* into the hole: the readable prefix only */
	assert_int_equal(tf_stack_read(&r, getpid(), &fd, (uintptr_t)mem + PAGE + 8, buf, 2 * PAGE),
			 PAGE - 8);
	assert_memory_equal(buf, mem + PAGE + 8, PAGE - 8);
	/* nothing readable at all */
	assert_int_equal(tf_stack_read(&r, getpid(), &fd, (uintptr_t)mem + 2 * PAGE, buf, 64), 0);
	/* /proc/PID/mem is opened only where process_vm_readv is refused */
	assert_true(vm_readv ? fd < 0 : fd >= 0);
	assert_int_equal(r.vm_readv, vm_readv);
	if (fd >= 0)
		close(fd);
	munmap(mem, 2 * PAGE);
}

static void test_read(void **state)
{
	(void)state;
	check_reads(true);
}

static void test_read_through_proc_mem(void **state)
{
	(void)state;
	check_reads(false);
}

static void check_batch(bool vm_readv)
{
	static tf_stack_reader r;
	enum { WIN = 2 * PAGE };
	uint8_t *a = region(4), *b = region(1), *out = calloc(4, WIN);
	tf_stack_req req[4] = {
		{ (uintptr_t)a + 64, out, false, 99 },               /* whole window */
		{ (uintptr_t)b + 512, out + WIN, false, 99 },        /* runs into the hole */
		{ 0, out + 2 * WIN, true, 99 },                      /* nothing to read */
		{ (uintptr_t)a + PAGE, out + 3 * WIN, false, 99 },   /* after the short one */
	};
	int fd = -1;

	tf_stack_reader_init(&r);
	r.vm_readv = vm_readv;
	tf_stack_read_many(&r, getpid(), &fd, req, 4, WIN);
	assert_int_equal(req[0].len, WIN);
	assert_memory_equal(out, a + 64, WIN);
	assert_int_equal(req[1].len, PAGE - 512);
	assert_memory_equal(out + WIN, b + 512, PAGE - 512);
	assert_int_equal(req[2].len, 0);
	assert_int_equal(req[3].len, WIN);
	assert_memory_equal(out + 3 * WIN, a + PAGE, WIN);
	if (fd >= 0)
		close(fd);
	munmap(a, 4 * PAGE);
	munmap(b, PAGE);
	free(out);
}

static void test_read_many(void **state)
{
	(void)state;
	check_batch(true);
	check_batch(false);
}

/* A frame record {saved fp, return address} at `at`. */
static void frame(uint8_t *at, uint64_t next_fp, uint64_t ret)
{
	memcpy(at, &next_fp, 8);
	memcpy(at + 8, &ret, 8);
}

static void test_walk_fp(void **state)
{
	static tf_stack_reader r;
	uint8_t *st = region(3);
	uint64_t base = (uintptr_t)st, chain[8];
	int fd = -1;
	size_t n;
	(void)state;

	tf_stack_reader_init(&r);
	/* sp at base; three frames, the last beyond a one-page window */
	frame(st + 64, base + 256, 0x401111);
	frame(st + 256, base + 5000, 0x402222);
	frame(st + 5000, 0, 0x403333);
	n = tf_stack_walk_fp(&r, getpid(), &fd, chain, 8, 0x400abc, base, base + 64, st, PAGE);
	assert_int_equal(n, 4);
	assert_int_equal(chain[0], 0x400abc);
	assert_int_equal(chain[1], 0x401111);
	assert_int_equal(chain[2], 0x402222);
	assert_int_equal(chain[3], 0x403333);

	/* at most `max` entries */
	assert_int_equal(tf_stack_walk_fp(&r, getpid(), &fd, chain, 2, 0x400abc, base, base + 64,
					  st, PAGE), 2);
	/* a frame pointer below the stack pointer, or misaligned: the ip only */
	assert_int_equal(tf_stack_walk_fp(&r, getpid(), &fd, chain, 8, 1, base + 128, base + 64,
					  st + 128, PAGE), 1);
	assert_int_equal(tf_stack_walk_fp(&r, getpid(), &fd, chain, 8, 1, base, base + 65, st,
					  PAGE), 1);
	/* a return address in the first page ends the chain */
	frame(st + 256, base + 5000, 0x100);
	assert_int_equal(tf_stack_walk_fp(&r, getpid(), &fd, chain, 8, 1, base, base + 64, st,
					  PAGE), 2);
	/* a frame pointer into unmapped memory: the frames before it */
	frame(st + 256, base + 3 * PAGE + 64, 0x402222);
	n = tf_stack_walk_fp(&r, getpid(), &fd, chain, 8, 1, base, base + 64, st, PAGE);
	assert_int_equal(n, 3);
	assert_int_equal(chain[2], 0x402222);
	munmap(st, 3 * PAGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_read_through_proc_mem),
		cmocka_unit_test(test_read_many),
		cmocka_unit_test(test_walk_fp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
