/*
 * runner.h - what the fuzz targets of the test runners' reports share
 * (junit.c, go_json.c, tap.c, ctest_log.c): they all go through
 * tf_runner_read_text(), which recognises the format from the text as
 * testflame does with any file a runner left, and then hold what it read
 * to the same rules. Each target has its own seeds and dictionary, so that
 * the fuzzer spends its time inside one format.
 *
 * Beyond not crashing: a refusal is one line naming the file; every test
 * read has a name that is no longer than the input, a runner, a known
 * status; a duration and its resolution come together, finite, a duration
 * of at most the ten million seconds the reader accepts and a resolution
 * above zero; a command line ends with its NUL; a test read inside another
 * (ctest's programs' tests) names a test read before it as its parent.
 */
#ifndef TESTFLAME_FUZZ_RUNNER_H
#define TESTFLAME_FUZZ_RUNNER_H

#include "fuzz.h"
#include "testflame/attribute.h"

#include <math.h>

#define FUZZ_REPORT "fuzz-report"

static inline void fuzz_runner_check(const tf_runner_test *r, size_t size)
{
	FUZZ_CHECK(r->name && *r->name, "a test without a name");
	FUZZ_CHECK(strlen(r->name) <= size, "a name longer than the input");
	FUZZ_CHECK(r->runner && *r->runner, "'%s' has no runner", r->name);
	FUZZ_CHECK(r->status <= TF_TEST_SKIPPED, "'%s': status %d", r->name, (int)r->status);
	FUZZ_CHECK(isnan(r->duration_ns) == isnan(r->quantum_ns), "'%s': duration %g, resolution %g",
		   r->name, r->duration_ns, r->quantum_ns);
	if (!isnan(r->duration_ns))
		FUZZ_CHECK(r->duration_ns >= 0 && r->duration_ns <= 1e16 && isfinite(r->quantum_ns) &&
				   r->quantum_ns > 0,
			   "'%s': duration %g, resolution %g", r->name, r->duration_ns, r->quantum_ns);
	FUZZ_CHECK(!r->argv == !r->argv_len, "'%s': argv of %zu bytes", r->name, r->argv_len);
	if (r->argv)
		FUZZ_CHECK(r->argv[r->argv_len - 1] == '\0' && r->argv_len <= size,
			   "'%s': argv not terminated", r->name);
}

static inline int fuzz_runner_read(const uint8_t *data, size_t size)
{
	tf_runner_tests t;
	char *text = fuzz_cstr(data, size);

	memset(&t, 0, sizeof(t));
	if (tf_runner_read_text(&t, text, size, FUZZ_REPORT, NULL) != 0) {
		const char *m = tf_error_last();
		FUZZ_CHECK(strstr(m, FUZZ_REPORT), "a message without the file: '%s'", m);
		FUZZ_CHECK(!strchr(m, '\n'), "a message of several lines: '%s'", m);
	}
	/* a malformed report keeps the tests read before the fault */
	for (size_t i = 0; i < t.v.n; i++) {
		const tf_runner_test *r = &t.v.v[i];
		fuzz_runner_check(r, size);
		if (r->parent) {
			size_t j = 0;
			while (j < i && strcmp(t.v.v[j].name, r->parent) != 0)
				j++;
			FUZZ_CHECK(j < i, "'%s' inside '%s', which was not read", r->name, r->parent);
		}
	}
	tf_runner_tests_free(&t);
	free(text);
	return 0;
}

#endif
