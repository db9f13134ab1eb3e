/* test_sort.c - merge sort of pseudo-random data, checked sorted. */
#include "check.h"
#include "mini.h"

#include <stdint.h>

int main(void)
{
	size_t n = 1 << 20;
	int *v = malloc(n * sizeof(int)), *tmp = malloc(n * sizeof(int));
	uint32_t x = 12345;
	CHECK(v && tmp);
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < n; i++) {
			x = x * 1664525u + 1013904223u;
			v[i] = (int)(x >> 1);
		}
		sort_merge(v, tmp, n);
		for (size_t i = 1; i < n; i++)
			CHECK(v[i - 1] <= v[i]);
	}
	free(v);
	free(tmp);
	printf("test_sort: ok\n");
	return 0;
}
