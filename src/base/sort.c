/*
 * sort.c - a stable sort of entries by a 64-bit key, for the big arrays
 * whose keys are addresses or timestamps: the spool's records by time, a
 * binary's function symbols by address.
 *
 * An LSD radix sort, one pass per byte of the keys that is not the same in
 * all of them (boot-relative nanoseconds of one run differ in 4 or 5
 * bytes, a binary's addresses in 3 or 4). qsort's merge sort spent a tenth
 * of a profile build on the spool, and most of a warm symbolization of a
 * 70 MB test binary on its 168,000 symbols.
 */
#include "testflame/common.h"

#include <stdlib.h>
#include <string.h>

void tf_sort_keyed(tf_keyed *v, size_t n)
{
	bool sorted = true;
	for (size_t i = 1; i < n && sorted; i++)
		sorted = v[i - 1].key <= v[i].key;
	if (sorted)
		return;
	tf_keyed *tmp = tf_xmalloc(n * sizeof(*tmp)), *src = v, *dst = tmp;
	size_t count[256];
	for (unsigned shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (size_t i = 0; i < n; i++)
			count[(src[i].key >> shift) & 0xff]++;
		if (count[(src[0].key >> shift) & 0xff] == n)
			continue; /* this byte is the same in all */
		for (size_t b = 0, sum = 0; b < 256; b++) {
			size_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & 0xff]++] = src[i];
		tf_keyed *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
}
