/*
 * detect_suite.c - the workload of bench/detection.sh: one program that is
 * four tests, chosen by the name it runs under (bench/detection.sh links
 * parse, hash, sorting and victim to it), each burning CPU in its own
 * function. victim_work() is made slower by the percentage in the file
 * `slowdown` of the current directory (a change committed to the suite's
 * repository, so both a stored baseline and --against see it as code):
 * it stands for the function a change slowed down. Hog spins forever: the
 * noisy neighbour.
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
	else if (!strcmp(name, "hog"))
		for (;;)
			spin(1000000000ULL);
	else {
		fprintf(stderr, "run me as parse, hash, sorting, victim or hog\n");
		return 2;
	}
	return 0;
}
