/*
 * pprof.c - fuzz target: the pprof reader (tf_pprof_decode) on raw
 * protobuf, the way `view`, `compare` and the store read any profile:
 * a run file, a Go -cpuprofile, a baseline fetched from a remote.
 * pprof_gzip.c builds this same target for gzip-compressed input.
 *
 * Beyond not crashing: a profile that decodes is consistent
 * (tf_profile_validate), and it round-trips: encoded and decoded again it
 * has the same sample types, samples and column totals.
 */
#include "fuzz.h"
#include "testflame/profile.h"

#ifndef FUZZ_GZIP
#define FUZZ_GZIP 0
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_profile *p, *q;
	tf_buf enc = TF_BUF_INIT;

	/* each target keeps to its own format, so that its corpus does */
	if (tf_is_gzip(data, size) != FUZZ_GZIP)
		return 0;
	if (tf_pprof_decode(&p, data, size) != 0)
		return 0;
	FUZZ_CHECK(tf_profile_validate(p) == 0, "%s", tf_error_last());
	FUZZ_CHECK(tf_pprof_encode(&enc, p, 1) == 0, "%s", tf_error_last());
	FUZZ_CHECK(tf_pprof_decode(&q, enc.ptr, enc.len) == 0, "re-reading: %s", tf_error_last());
	FUZZ_CHECK(q->sample_types.n == p->sample_types.n, "%zu sample types, then %zu",
		   p->sample_types.n, q->sample_types.n);
	FUZZ_CHECK(q->samples.n == p->samples.n, "%zu samples, then %zu", p->samples.n,
		   q->samples.n);
	for (size_t v = 0; v < p->sample_types.n; v++)
		FUZZ_CHECK(tf_profile_total(q, v) == tf_profile_total(p, v),
			   "column %zu: total %lld, then %lld", v,
			   (long long)tf_profile_total(p, v), (long long)tf_profile_total(q, v));
	tf_profile_free(q);
	tf_profile_free(p);
	tf_buf_free(&enc);
	return 0;
}
