/*
 * mallocbench.c - a malloc-intensive micro benchmark for the allocation
 * sampler's cost (bench/memory-overhead.sh): N allocations of 16 B to
 * 1 KiB, each kept for 64 more (a ring), touched, then freed; nothing
 * else. About 8 ns an allocation and its free with glibc here: a program
 * that only allocates, the sampler's worst case.
 *
 *   mallocbench [N]   (default 5,000,000)
 */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static char *make(size_t n)
{
	char *p = malloc(n);
	if (p)
		p[0] = 1;
	return p;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 5000000;
	char *ring[64] = { 0 };
	unsigned long sum = 0;

	for (long i = 0; i < n; i++) {
		size_t size = 16 + (size_t)(i * 7919) % 1009;
		free(ring[i & 63]);
		ring[i & 63] = make(size);
		sum += ring[i & 63] ? (unsigned char)ring[i & 63][0] : 0;
	}
	for (int i = 0; i < 64; i++)
		free(ring[i]);
	printf("%lu\n", sum);
	return 0;
}
