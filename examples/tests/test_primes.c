/* test_primes.c - CPU-heavy: the prime counting function at known points. */
#include "check.h"
#include "mini.h"

int main(void)
{
	size_t limit = 20000000;
	uint8_t *sieve = malloc(limit);
	CHECK(sieve);
	for (int round = 0; round < 3; round++)
		CHECK(primes_sieve(sieve, limit) == 1270607);
	CHECK(primes_sieve(sieve, 100) == 25);
	free(sieve);
	printf("test_primes: ok\n");
	return 0;
}
