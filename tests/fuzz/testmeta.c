/*
 * testmeta.c - fuzz target: the per-test line of a run file's metadata
 * ("testflame.test.NAME=samples=N value=V ...", src/attribute/testmeta.c),
 * which compare and show read from run files of the store, as the baseline
 * of any commit left them.
 *
 * Beyond not crashing: a line that parses is written back by
 * tf_test_meta_format under the same name and run, and that line reads
 * back to the same test: the writer's output is a fixed point of the
 * reader (the name ends where it ended; no field is lost or changed); a
 * time or count read fits the int64 that show and compare make of it.
 */
#include "fuzz.h"
#include "testflame/attribute.h"

#include <math.h>

/* a time or count: absent, or one an int64 holds */
static bool fits(double v)
{
	return isnan(v) || (v >= 0 && v < 9.2e18);
}

static char *line_of(const tf_test_meta *m, size_t run)
{
	tf_buf b = TF_BUF_INIT;
	char *s;
	if (run)
		tf_buf_printf(&b, "testflame.run%zu.test.%s=", run + 1, m->name);
	else
		tf_buf_printf(&b, "testflame.test.%s=", m->name);
	tf_test_meta_format(&b, m);
	s = tf_xstrdup(b.ptr);
	tf_buf_free(&b);
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_test_meta m, again;
	size_t run, run2;
	char *text, *line, *line2;

	/* a comment is a pprof string: any bytes, read up to a NUL */
	text = fuzz_cstr(data, size);
	if (tf_test_meta_parse_run(&m, &run, text) != 0) {
		free(text);
		return 0;
	}
	FUZZ_CHECK(m.name && *m.name, "a test without a name");
	/* show and compare take the times and counts as int64 */
	FUZZ_CHECK(m.samples <= INT64_MAX, "samples %llu", (unsigned long long)m.samples);
	FUZZ_CHECK(fits(m.wall_ns) && fits(m.count) && fits(m.cpu_ns) && fits(m.runner_ns) &&
			   fits(m.runner_q_ns),
		   "wall %g count %g cpu %g runner %g/%g", m.wall_ns, m.count, m.cpu_ns, m.runner_ns,
		   m.runner_q_ns);
	line = line_of(&m, run);
	FUZZ_CHECK(tf_test_meta_parse_run(&again, &run2, line) == 0, "'%s' does not read back: %s",
		   line, tf_error_last());
	FUZZ_CHECK(run2 == run, "run %zu read back as %zu", run, run2);
	FUZZ_CHECK(strcmp(again.name, m.name) == 0, "name '%s' read back as '%s'", m.name, again.name);
	line2 = line_of(&again, run2);
	FUZZ_CHECK(strcmp(line, line2) == 0, "'%s' read back as '%s'", line, line2);
	free(line2);
	free(line);
	tf_test_meta_clear(&again);
	tf_test_meta_clear(&m);
	free(text);
	return 0;
}
