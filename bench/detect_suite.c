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
 * With THREADS above 1, a test is a multi-threaded one as parallel
 * runtimes make them: its work cut into CHUNKS pieces of uneven size,
 * which THREADS workers take in turn, and a worker that finds none left
 * spins until the last piece is done (a barrier that waits actively, as
 * OpenMP's and TBB's do by default for a while): its CPU time then
 * depends on what else runs, on its cores and beside it.
 *
 *   victim [UNITS [THREADS]]
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

#define CHUNKS 64

typedef void (*work_fn)(uint64_t n, double slowdown);

static struct {
	work_fn fn;
	uint64_t n;
	double slowdown;
	atomic_uint next, done;
} job;

/* a worker with nothing left to take, until every piece is done */
__attribute__((noinline)) static void barrier_wait(void)
{
	while (atomic_load_explicit(&job.done, memory_order_acquire) < CHUNKS)
		__asm__ volatile("" ::: "memory");
}

/* the pieces' sizes: uneven, the same in every run, summing to about n */
static uint64_t chunk_size(unsigned i)
{
	static const unsigned weight[8] = { 3, 1, 2, 5, 1, 4, 2, 6 };
	return job.n * weight[i % 8] / (CHUNKS / 8 * 24);
}

/* each thread's CPU time at its end, for DETECT_STATS */
static double thread_cpu[64];
static atomic_uint threads_done;

static double now_cpu(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	(void)arg;
	for (;;) {
		unsigned i = atomic_fetch_add(&job.next, 1);
		if (i >= CHUNKS)
			break;
		job.fn(chunk_size(i), job.slowdown);
		atomic_fetch_add_explicit(&job.done, 1, memory_order_release);
	}
	barrier_wait();
	unsigned k = atomic_fetch_add(&threads_done, 1);
	if (k < 64)
		thread_cpu[k] = now_cpu(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

static void run_threads(work_fn fn, uint64_t n, double slowdown, int threads)
{
	pthread_t t[64];
	job.fn = fn;
	job.n = n;
	job.slowdown = slowdown;
	for (int i = 1; i < threads; i++)
		if (pthread_create(&t[i], NULL, worker, NULL) != 0)
			exit(1);
	worker(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(t[i], NULL);
}

/* DETECT_STATS=FILE: a line "NAME WALL CPU BUSIEST" appended at the end
 * (seconds: the process's wall and CPU time, its busiest thread's CPU),
 * the measures bench/detection.sh's noise study compares */
static void write_stats(const char *name, double wall0)
{
	const char *path = getenv("DETECT_STATS");
	double busiest = 0;
	if (!path)
		return;
	for (unsigned i = 0; i < threads_done && i < 64; i++)
		if (thread_cpu[i] > busiest)
			busiest = thread_cpu[i];
	FILE *f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "%s %.6f %.6f %.6f\n", name, now_cpu(CLOCK_MONOTONIC) - wall0,
		now_cpu(CLOCK_PROCESS_CPUTIME_ID), busiest ? busiest : now_cpu(CLOCK_PROCESS_CPUTIME_ID));
	fclose(f);
}

#define FN2(name) static void name##_2(uint64_t n, double s) { (void)s; name(n); }
FN2(parse_work)
FN2(hash_work)
FN2(sort_work)
FN2(alloc_work)
FN2(walk_work)
FN2(mix_work)
FN2(copy_work)

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
	double wall0 = now_cpu(CLOCK_MONOTONIC);
	uint64_t n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 3) * 100000000ULL;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	double slow = 0;
	FILE *f = fopen("slowdown", "r");
	if (f) {
		if (fscanf(f, "%lf", &slow) != 1)
			slow = 0;
		fclose(f);
	}

	if (threads > 1 && threads <= 64) {
		static const struct { const char *name; work_fn fn; } tests[] = {
			{ "parse", parse_work_2 }, { "hash", hash_work_2 }, { "sorting", sort_work_2 },
			{ "alloc", alloc_work_2 }, { "walk", walk_work_2 }, { "mix", mix_work_2 },
			{ "copy", copy_work_2 }, { "victim", victim_work },
		};
		for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
			if (!strcmp(name, tests[i].name)) {
				run_threads(tests[i].fn, n, slow, threads);
				write_stats(name, wall0);
				return 0;
			}
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
	write_stats(name, wall0);
	return 0;
}
