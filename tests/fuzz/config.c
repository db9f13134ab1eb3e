/*
 * config.c - fuzz target: the `.testflame.yml` loader (tf_config_parse,
 * over libyaml), which reads whatever a repository holds, a pull request's
 * included.
 *
 * Beyond not crashing: a file that is refused is refused in one line that
 * names the file (SPEC §6: file:line:column), and a file that loads can be
 * merged onto another config (what flags over the file do) and freed.
 */
#include "fuzz.h"
#include "testflame/config.h"

#define NAME ".testflame.yml"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_config *cfg, *base;

	if (tf_config_parse(&cfg, (const char *)data, size, NAME) != 0) {
		const char *m = tf_error_last();
		FUZZ_CHECK(strncmp(m, NAME ":", strlen(NAME) + 1) == 0, "message: '%s'", m);
		FUZZ_CHECK(!strchr(m, '\n'), "a message of several lines: '%s'", m);
		return 0;
	}
	base = tf_config_new();
	tf_config_merge(base, cfg);
	tf_config_merge(base, cfg);
	tf_config_free(cfg);
	tf_config_free(base);
	return 0;
}
