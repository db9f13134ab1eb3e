/*
 * pingpong.c - a suite that does little but switch: a token passed back
 * and forth N times between two threads through a pair of pipes
 * ("threads"), or between two processes ("procs"), each pass a switch-out
 * of one side and a wake-up of the other. What recording every switch-out
 * costs is all this workload measures (bench/offcpu-overhead.sh); with
 * "mixed" the passes are spread over CPU work (a suite whose tests switch
 * a few hundred times a second).
 *
 *   pingpong threads|procs|mixed [N]      (default 100000 passes)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int ab[2], ba[2];
static long passes = 100000;
static long spin_per_pass;

static void spin(long n)
{
	volatile unsigned long x = 0;
	for (long i = 0; i < n; i++)
		x += (unsigned long)i * 2654435761u;
}

static void side(int in, int out, int first)
{
	char c = 'x';
	for (long i = 0; i < passes; i++) {
		if (!first || i) {
			if (read(in, &c, 1) != 1)
				exit(1);
		}
		spin(spin_per_pass);
		if (write(out, &c, 1) != 1)
			exit(1);
	}
}

static void *other(void *arg)
{
	(void)arg;
	side(ab[0], ba[1], 0);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";
	if (argc > 2)
		passes = atol(argv[2]);
	if (pipe(ab) || pipe(ba))
		return 1;
	if (strcmp(mode, "mixed") == 0) {
		/* a pass every ~2 ms of CPU: a few hundred switches a second */
		spin_per_pass = 2000000;
		mode = "threads";
	}
	if (strcmp(mode, "threads") == 0) {
		pthread_t t;
		if (pthread_create(&t, NULL, other, NULL))
			return 1;
		side(ba[0], ab[1], 1);
		char c;
		if (read(ba[0], &c, 1) != 1)
			return 1;
		pthread_join(t, NULL);
	} else if (strcmp(mode, "procs") == 0) {
		pid_t pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			side(ab[0], ba[1], 0);
			_exit(0);
		}
		side(ba[0], ab[1], 1);
		char c;
		if (read(ba[0], &c, 1) != 1)
			return 1;
		waitpid(pid, NULL, 0);
	} else {
		fprintf(stderr, "usage: pingpong threads|procs|mixed [N]\n");
		return 2;
	}
	return 0;
}
