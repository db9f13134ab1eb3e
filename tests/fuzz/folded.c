/*
 * folded.c - fuzz target: the folded-stacks reader (tf_folded_decode),
 * which `view`, `compare` and `run --against` use on any text profile a
 * user hands them, then the folded writer on what it read.
 *
 * Beyond not crashing: a profile that decodes is consistent
 * (tf_profile_validate), and writing it back gives lines that each end in a
 * count, whose sum is the profile's total.
 */
#include "fuzz.h"
#include "testflame/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_profile *p;
	tf_buf out = TF_BUF_INIT;

	if (tf_folded_decode(&p, (const char *)data, size, "fuzz.folded") != 0)
		return 0;
	FUZZ_CHECK(tf_profile_validate(p) == 0, "%s", tf_error_last());
	for (size_t v = 0; v < p->sample_types.n; v++) {
		int64_t sum = 0;
		tf_buf_clear(&out);
		FUZZ_CHECK(tf_folded_write(&out, p, v, NULL, NULL) == 0, "%s", tf_error_last());
		for (char *line = out.ptr; line && *line;) {
			char *nl = strchr(line, '\n'), *sp;
			FUZZ_CHECK(nl, "a line without its newline");
			*nl = '\0';
			sp = strrchr(line, ' ');
			FUZZ_CHECK(sp && sp[1], "a line without a count: '%s'", line);
			sum += strtoll(sp + 1, NULL, 10);
			line = nl + 1;
		}
		FUZZ_CHECK(sum == tf_profile_total(p, v), "written %lld, total %lld",
			   (long long)sum, (long long)tf_profile_total(p, v));
	}
	tf_buf_free(&out);
	tf_profile_free(p);
	return 0;
}
