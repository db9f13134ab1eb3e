/*
 * detect_suite.c - the workload of bench/detection.sh: one program that is
 * four tests, chosen by the name it runs under (bench/detection.sh links
 * parse, hash, sorting and victim to it), each burning CPU in its own
 * function. victim_work() is made slower by the percentage in the file
 * `slowdown` of the current directory (a change committed to the suite's
 * repository, so both a stored baseline and --against see it as code):
 * it stands for the function a change slowed down. alloc, walk, mix and
 * copy are four more tests of the same kind, so that the tests a change
 * does not touch can measure the runner. hog spins forever, and memhog
 * streams through 256 MiB forever: the noisy neighbours, one for the CPU,
 * one for the memory bus.
 *
 *   victim [UNITS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile uint64_t sink;

static void spin(uint64_t n)
{
	uint64_t x = sink;
	for (uint64_t i = 0; i < n; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	sink = x;
}

__attribute__((noinline)) void parse_work(uint64_t n) { spin(n); }
__attribute__((noinline)) void hash_work(uint64_t n) { spin(n * 3 / 4); }
__attribute__((noinline)) void sort_work(uint64_t n) { spin(n / 2); }
__attribute__((noinline)) void alloc_work(uint64_t n) { spin(n * 2 / 3); }
__attribute__((noinline)) void walk_work(uint64_t n) { spin(n * 5 / 6); }
__attribute__((noinline)) void mix_work(uint64_t n) { spin(n * 3 / 5); }
__attribute__((noinline)) void copy_work(uint64_t n) { spin(n * 4 / 5); }
__attribute__((noinline)) void victim_work(uint64_t n, double slowdown)
{
	spin((uint64_t)((double)n * (1.0 + slowdown / 100.0)));
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	uint64_t n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 3) * 100000000ULL;
	double slow = 0;
	FILE *f = fopen("slowdown", "r");
	if (f) {
		if (fscanf(f, "%lf", &slow) != 1)
			slow = 0;
		fclose(f);
	}

	if (!strcmp(name, "parse"))
		parse_work(n);
	else if (!strcmp(name, "hash"))
		hash_work(n);
	else if (!strcmp(name, "sorting"))
		sort_work(n);
	else if (!strcmp(name, "victim"))
		victim_work(n, slow);
	else if (!strcmp(name, "alloc"))
		alloc_work(n);
	else if (!strcmp(name, "walk"))
		walk_work(n);
	else if (!strcmp(name, "mix"))
		mix_work(n);
	else if (!strcmp(name, "copy"))
		copy_work(n);
	else if (!strcmp(name, "hog"))
		for (;;)
			spin(1000000000ULL);
	else if (!strcmp(name, "memhog")) {
		size_t len = (size_t)256 << 20;
		volatile uint64_t *buf = malloc(len);
		if (!buf)
			return 1;
		for (uint64_t round = 0;; round++)
			for (size_t i = 0; i < len / 8; i += 8)
				buf[i] += round;
	}
	else {
		fprintf(stderr, "run me as parse, hash, sorting, alloc, walk, mix, copy, victim, "
			"hog or memhog\n");
		return 2;
	}
	return 0;
}
