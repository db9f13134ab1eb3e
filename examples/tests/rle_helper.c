/* rle_helper.c - the helper test_spawn forks: round-trips a block through
 * run-length coding and exits 0 when it comes back intact. */
#include "check.h"
#include "mini.h"

#include <string.h>

int main(int argc, char **argv)
{
	static uint8_t in[1 << 20], packed[2 << 20], out[1 << 20];
	int seed = argc > 1 ? atoi(argv[1]) : 0;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)((i / (size_t)(3 + seed)) & 0xff);
	for (int round = 0; round < 40; round++) {
		size_t n = rle_compress(in, sizeof(in), packed);
		CHECK(rle_expand(packed, n, out) == sizeof(in));
	}
	CHECK(memcmp(in, out, sizeof(in)) == 0);
	return 0;
}
