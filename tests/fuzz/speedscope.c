/*
 * speedscope.c - fuzz target: any profile file `testflame view` opens
 * (tf_profile_load(): pprof, gzip or not, or folded stacks, sniffed),
 * written out in speedscope's JSON format.
 *
 * testflame has no speedscope reader; what reaches speedscope is what it
 * writes from profiles nobody vetted, so the property checked is the
 * writer's: whatever the names, files and labels, the output is JSON that
 * jansson (which rejects invalid UTF-8) parses, once per test label and
 * for the whole profile.
 */
#include "fuzz.h"
#include "testflame/profile.h"

#include <jansson.h>

static void check(const tf_profile *p, size_t v, const char *test)
{
	tf_buf out = TF_BUF_INIT;
	json_error_t e;
	json_t *j;

	FUZZ_CHECK(tf_speedscope_write(&out, p, v, test, "fuzz \"profile\"") == 0, "%s",
		   tf_error_last());
	j = json_loadb(out.ptr, out.len, 0, &e);
	FUZZ_CHECK(j, "not JSON: %s at line %d column %d", e.text, e.line, e.column);
	FUZZ_CHECK(json_is_array(json_object_get(j, "profiles")), "no profiles");
	json_decref(j);
	tf_buf_free(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_profile *p;
	int v;

	if (tf_profile_load(&p, fuzz_file(data, size)) != 0)
		return 0;
	if ((v = tf_profile_default_value(p)) >= 0) {
		check(p, (size_t)v, NULL);
		/* one test: the first sample's test label, whatever bytes it holds */
		const char *t = p->samples.n ? tf_sample_label_str(p, &p->samples.v[0], "test") : NULL;
		if (t)
			check(p, (size_t)v, t);
	}
	tf_profile_free(p);
	return 0;
}
