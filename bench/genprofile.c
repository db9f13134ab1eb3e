/*
 * genprofile.c - writes a pair of large, realistic run files for the
 * comparison benchmark (bench/compare.sh): a base and a head of the same
 * suite with at least NSTACKS distinct stacks each, test labels, file and
 * line for every frame, and a known change in the head (one test's hot leaf
 * 40% slower, another test's code slightly faster, a few stacks new).
 * Deterministic for a given seed, so timings compare like with like.
 *
 *   genprofile BASE.pb.gz HEAD.pb.gz [NSTACKS] [SEED]
 */
#include "testflame/profile.h"

#include <stdlib.h>
#include <string.h>

#define NFUNCS 6000
#define NTESTS 40
#define PERIOD 10101010 /* 99 Hz cpu-clock */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

typedef struct {
	uint16_t depth;
	uint16_t test;
	uint32_t count;
	uint32_t frames[40]; /* function index, root first */
	uint16_t lines[40];
} stack;

static void new_profile(tf_profile **p, const char *commit)
{
	tf_profile_new(p);
	tf_profile_add_sample_type(*p, "samples", "count");
	tf_profile_add_sample_type(*p, "cpu", "nanoseconds");
	(*p)->period = PERIOD;
	(*p)->period_type.type = tf_profile_intern(*p, "cpu");
	(*p)->period_type.unit = tf_profile_intern(*p, "nanoseconds");
	tf_profile_set_meta(*p, "event", "cpu-clock");
	tf_profile_set_meta(*p, "suite", "bench");
	tf_profile_set_meta(*p, "commit", commit);
}

static void add_stack(tf_profile *p, const stack *s, uint32_t count)
{
	uint32_t locs[40];
	char name[64], file[64];

	for (uint16_t k = 0; k < s->depth; k++) {
		uint32_t f = s->frames[k];
		snprintf(name, sizeof(name), "pkg%u.func%u", f % 97, f);
		snprintf(file, sizeof(file), "src/pkg%u/file%u.c", f % 97, f % 613);
		tf_line ln = { tf_profile_function(p, name, file, (int64_t)(f % 900) + 1),
			       s->lines[k], 0 };
		/* leaf first in the sample */
		locs[s->depth - 1 - k] = tf_profile_add_location(p, TF_NO_MAPPING, 0, &ln, 1);
	}
	char test[32];
	snprintf(test, sizeof(test), "Test%02u", s->test);
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	int64_t v[2] = { count, (int64_t)count * PERIOD };
	tf_profile_add_sample(p, locs, s->depth, v, &lab, 1);
}

int main(int argc, char **argv)
{
	size_t n;
	stack *stacks;
	tf_profile *base, *head;

	if (argc < 3) {
		fprintf(stderr, "usage: genprofile BASE.pb.gz HEAD.pb.gz [NSTACKS] [SEED]\n");
		return 2;
	}
	n = argc > 3 ? strtoul(argv[3], NULL, 10) : 120000;
	rng_state = argc > 4 ? strtoull(argv[4], NULL, 10) : 1;
	stacks = calloc(n, sizeof(*stacks));
	if (!stacks)
		return 1;
	for (size_t i = 0; i < n; i++) {
		stack *s = &stacks[i];
		s->test = (uint16_t)below(NTESTS);
		s->depth = (uint16_t)(8 + below(30));
		/* a shared spine (runner, the test's entry) then code of the test's
		 * own package area, so the call tree branches like a real one */
		s->frames[0] = 0;
		s->frames[1] = 1 + s->test;
		for (uint16_t k = 2; k < s->depth; k++)
			s->frames[k] = 100 + (s->test * 131 + below(NFUNCS - 100)) % (NFUNCS - 100);
		/* every function calls out from a handful of lines, as real code
		 * does: tens of thousands of locations, not millions */
		for (uint16_t k = 0; k < s->depth; k++)
			s->lines[k] = (uint16_t)(s->frames[k] % 900 + 2 + below(4));
		s->count = 1 + below(12);
	}

	new_profile(&base, "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0");
	new_profile(&head, "cafecafecafecafecafecafecafecafecafecafe");
	for (size_t i = 0; i < n; i++) {
		const stack *s = &stacks[i];
		uint32_t hc = s->count;
		/* Test07 got 40% slower in its leaves; Test11 10% faster */
		if (s->test == 7)
			hc = s->count * 14 / 10 + (s->count * 14 % 10 >= 5);
		else if (s->test == 11 && i % 10 == 0)
			hc = 0;
		add_stack(base, s, s->count);
		if (hc)
			add_stack(head, s, hc);
	}
	/* a few thousand stacks only the head has */
	for (size_t i = 0; i < n / 40; i++) {
		stack s = stacks[i];
		s.lines[s.depth - 1] = (uint16_t)(s.frames[s.depth - 1] % 900 + 6 + below(3));
		add_stack(head, &s, s.count);
	}
	fprintf(stderr, "genprofile: base %zu distinct stacks, %zu functions, %zu locations; "
		"head %zu stacks\n", base->samples.n, base->functions.n, base->locations.n,
		head->samples.n);
	if (tf_pprof_write(base, argv[1]) || tf_pprof_write(head, argv[2])) {
		fprintf(stderr, "genprofile: %s\n", tf_error_last());
		return 1;
	}
	tf_profile_free(base);
	tf_profile_free(head);
	free(stacks);
	return 0;
}
