/* test_threads.c - multi-threaded: four workers hash disjoint blocks and
 * must agree with a single-threaded pass. */
#include "check.h"
#include "mini.h"

#include <pthread.h>
#include <stdint.h>

#define WORKERS 4
#define BLOCK (4 << 20)

static uint8_t data[WORKERS][BLOCK];
static uint64_t result[WORKERS];

static void *worker(void *arg)
{
	size_t w = (size_t)(uintptr_t)arg;
	uint64_t h = 0;
	for (int round = 0; round < 6; round++)
		h ^= hash_fnv1a(data[w], BLOCK) + (uint64_t)round;
	result[w] = h;
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];
	for (size_t w = 0; w < WORKERS; w++)
		for (size_t i = 0; i < BLOCK; i++)
			data[w][i] = (uint8_t)(i ^ (w * 7));
	for (size_t w = 0; w < WORKERS; w++)
		CHECK(pthread_create(&t[w], NULL, worker, (void *)(uintptr_t)w) == 0);
	for (size_t w = 0; w < WORKERS; w++)
		CHECK(pthread_join(t[w], NULL) == 0);
	for (size_t w = 0; w < WORKERS; w++) {
		uint64_t h = 0;
		for (int round = 0; round < 6; round++)
			h ^= hash_fnv1a(data[w], BLOCK) + (uint64_t)round;
		CHECK(h == result[w]);
	}
	printf("test_threads: ok\n");
	return 0;
}
