/* primes.c - the sieve of Eratosthenes. */
#include "mini.h"

#include <string.h>

size_t primes_sieve(uint8_t *composite, size_t limit)
{
	size_t count = 0;
	memset(composite, 0, limit);
	for (size_t i = 2; i < limit; i++) {
		if (composite[i])
			continue;
		count++;
		for (size_t j = i * i; j < limit; j += i)
			composite[j] = 1;
	}
	return count;
}
