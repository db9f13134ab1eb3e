/*
 * manytests.c - the workload of bench/resources.sh: a suite of N tests in
 * one process, each announced with test markers (contrib/testflame.h) and
 * burning UNITS of CPU in its own frame, so that what testflame keeps per
 * test (its markers in the spool, its row, its samples' label) can be
 * measured apart from what it keeps per sample.
 *
 *   manytests N [UNITS]
 */
#include "../contrib/testflame.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static volatile uint64_t sink;

__attribute__((noinline)) static void run_test(uint64_t units)
{
	uint64_t x = sink;
	for (uint64_t i = 0; i < units * 100000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	uint64_t units = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
	char name[64];

	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "suite/test_%06ld", i);
		TESTFLAME_BEGIN(name);
		run_test(units);
		TESTFLAME_END(name);
	}
	return 0;
}
