/* sort.c - top-down merge sort. */
#include "mini.h"

#include <string.h>

void sort_merge(int *v, int *tmp, size_t n)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	sort_merge(v, tmp, h);
	sort_merge(v + h, tmp, n - h);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = v[i] <= v[j] ? v[i++] : v[j++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}
