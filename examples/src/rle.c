/* rle.c - run-length coding: (count, byte) pairs, runs up to 255. */
#include "mini.h"

size_t rle_compress(const uint8_t *in, size_t n, uint8_t *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		uint8_t b = in[i];
		size_t run = 1;
		while (i + run < n && in[i + run] == b && run < 255)
			run++;
		out[o++] = (uint8_t)run;
		out[o++] = b;
		i += run;
	}
	return o;
}

size_t rle_expand(const uint8_t *in, size_t n, uint8_t *out)
{
	size_t o = 0;
	for (size_t i = 0; i + 1 < n; i += 2)
		for (uint8_t k = 0; k < in[i]; k++)
			out[o++] = in[i + 1];
	return o;
}
