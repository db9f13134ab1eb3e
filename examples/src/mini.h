/*
 * mini.h - libmini, the example project profiled by `make demo`: a few
 * small, real algorithms (matrix product, prime sieve, merge sort, hashes,
 * run-length coding) whose tests have distinct hot functions.
 */
#ifndef MINI_H
#define MINI_H

#include <stddef.h>
#include <stdint.h>

void matrix_multiply(const double *a, const double *b, double *c, int n);
size_t primes_sieve(uint8_t *composite, size_t limit);
void sort_merge(int *v, int *tmp, size_t n);
uint32_t hash_crc32(const void *data, size_t len);
uint64_t hash_fnv1a(const void *data, size_t len);
size_t rle_compress(const uint8_t *in, size_t n, uint8_t *out);
size_t rle_expand(const uint8_t *in, size_t n, uint8_t *out);

#endif
