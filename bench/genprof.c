/*
 * genprof.c - writes a large synthetic run file for the decoding benchmark
 * (bench/decode.sh): the shape of a testflame run (samples/count and
 * cpu/nanoseconds, test/process/pid/tid labels, testflame.* metadata,
 * symbolized functions with files and lines, one mapping with a build-id),
 * at the size of a long suite: by default 100,000 distinct stacks and
 * 1,000,000 sample records, over 50 MB of protobuf before gzip.
 *
 *   genprof [-o OUT] [--stacks N] [--samples N] [--functions N] [--raw]
 *
 * Deterministic (fixed seed), so every machine benchmarks the same bytes.
 */
#include "testflame/profile.h"

#include <stdlib.h>
#include <string.h>

/* xorshift64*: fast, deterministic, good enough to spread stacks around. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 2685821657736338717ULL;
}

static long arg_num(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v <= 0) {
		fprintf(stderr, "genprof: %s must be a positive number, not '%s'\n", what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	const char *out = "big.pb.gz";
	long nstacks = 100000, nsamples = 1000000, nfuncs = 20000;
	bool raw = false;
	tf_profile *p;
	tf_buf b = TF_BUF_INIT;
	uint32_t *locs, *stack_off, *stack_len;
	TF_VEC(uint32_t) pool = { 0 };
	const int ntests = 400, nprocs = 12;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "--stacks") == 0 && i + 1 < argc)
			nstacks = arg_num(argv[++i], "--stacks");
		else if (strcmp(argv[i], "--samples") == 0 && i + 1 < argc)
			nsamples = arg_num(argv[++i], "--samples");
		else if (strcmp(argv[i], "--functions") == 0 && i + 1 < argc)
			nfuncs = arg_num(argv[++i], "--functions");
		else if (strcmp(argv[i], "--raw") == 0)
			raw = true;
		else {
			fprintf(stderr, "usage: genprof [-o OUT] [--stacks N] [--samples N] "
				"[--functions N] [--raw]\n");
			return 2;
		}
	}

	tf_profile_new(&p);
	tf_profile_set_merge(p, false);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	p->default_sample_type = tf_profile_intern(p, "cpu");
	p->period_type = p->sample_types.v[1];
	p->period = 10101010;
	p->time_nanos = 1714564800000000000LL;
	p->duration_nanos = 600000000000LL;
	tf_mapping m = { 0x555555554000ULL, 0x555555954000ULL, 0,
			 tf_profile_intern(p, "/usr/lib/bench/libsuite.so"),
			 tf_profile_intern(p, "3f2a9c0de1b24a7781c6e0b54d1f9a3c07e5b2d1"),
			 TF_MAPPING_HAS_FUNCTIONS | TF_MAPPING_HAS_FILENAMES |
			 TF_MAPPING_HAS_LINE_NUMBERS };
	uint32_t map = tf_profile_add_mapping(p, &m);

	/* four call sites per function: ~80,000 locations by default */
	locs = tf_xmalloc((size_t)nfuncs * 4 * sizeof(uint32_t));
	for (long f = 0; f < nfuncs; f++) {
		char name[96], file[64];
		snprintf(name, sizeof(name), "suite::module%ld::Component%ld::operation_%ld",
			 f % 97, f % 1009, f);
		snprintf(file, sizeof(file), "src/module%ld/component%ld.cc", f % 97, f % 1009);
		uint32_t fi = tf_profile_function(p, name, file, 10 + (int64_t)(f % 500));
		for (int k = 0; k < 4; k++) {
			tf_line ln = { fi, 12 + (int64_t)(f % 500) + k * 3, 0 };
			locs[f * 4 + k] = tf_profile_add_location(p, map, 0x555555560000ULL +
								  (uint64_t)(f * 4 + k) * 16, &ln, 1);
		}
	}

	/* stacks: a shared trunk per test area, then random frames, 8..40 deep */
	stack_off = tf_xmalloc((size_t)nstacks * sizeof(uint32_t));
	stack_len = tf_xmalloc((size_t)nstacks * sizeof(uint32_t));
	for (long s = 0; s < nstacks; s++) {
		uint32_t depth = 8 + (uint32_t)(rnd() % 33);
		stack_off[s] = (uint32_t)pool.n;
		stack_len[s] = depth;
		for (uint32_t d = 0; d < depth; d++) {
			/* root frames come from few functions, leaves from many */
			uint64_t span = d < 4 ? 8 + d * 8 : (uint64_t)nfuncs * 4;
			tf_vec_push(&pool, locs[rnd() % span]);
		}
	}

	tf_strid k_test = tf_profile_intern(p, "test"), k_proc = tf_profile_intern(p, "process");
	tf_strid k_pid = tf_profile_intern(p, "pid"), k_tid = tf_profile_intern(p, "tid");
	tf_strid tests[400], procs[12];
	for (int t = 0; t < ntests; t++) {
		char name[64];
		snprintf(name, sizeof(name), "Suite%d.test_case_%d", t % 23, t);
		tests[t] = tf_profile_intern(p, name);
	}
	for (int i = 0; i < nprocs; i++) {
		char name[32];
		snprintf(name, sizeof(name), "suite_runner_%d", i);
		procs[i] = tf_profile_intern(p, name);
	}
	for (long i = 0; i < nsamples; i++) {
		/* skewed: a few stacks are hot, as in real suites */
		uint64_t r = rnd();
		long s = (long)((r % 4 == 0 ? r >> 8 : (r >> 8) % ((uint64_t)nstacks / 20 + 1)) %
				(uint64_t)nstacks);
		int t = (int)(s % ntests), proc = t % nprocs;
		/* stacks are leaf first: reverse the root-first pool */
		uint32_t st[48], n = stack_len[s];
		for (uint32_t d = 0; d < n; d++)
			st[d] = pool.v[stack_off[s] + n - 1 - d];
		tf_label lab[4] = {
			{ k_test, tests[t], 0, 0 },
			{ k_proc, procs[proc], 0, 0 },
			{ k_pid, 0, 20000 + proc, 0 },
			{ k_tid, 0, 20000 + proc * 100 + (int64_t)(rnd() % 8), 0 },
		};
		int64_t v[2] = { 1, 10101010 };
		tf_profile_add_sample(p, st, n, v, lab, 4);
	}
	tf_profile_set_meta(p, "version", TF_VERSION);
	tf_profile_set_meta(p, "command", "make check");
	tf_profile_set_meta(p, "event", "cpu-clock");
	tf_profile_set_meta(p, "sampler", "perf");
	tf_profile_set_meta(p, "unwinder", "fp");
	{
		char n[32];
		snprintf(n, sizeof(n), "%ld", nsamples);
		tf_profile_set_meta(p, "samples", n);
	}

	if (tf_pprof_encode(&b, p, raw ? 0 : 6) || tf_file_write_atomic(out, b.ptr, b.len)) {
		fprintf(stderr, "genprof: %s\n", tf_error_last());
		return 1;
	}
	fprintf(stderr, "genprof: wrote '%s': %zu bytes, %zu samples, %zu locations, %zu functions\n",
		out, b.len, p->samples.n, p->locations.n, p->functions.n);
	tf_buf_free(&b);
	tf_vec_free(&pool);
	free(locs);
	free(stack_off);
	free(stack_len);
	tf_profile_free(p);
	return 0;
}
