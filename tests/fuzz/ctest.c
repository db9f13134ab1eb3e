/*
 * ctest.c - fuzz target: the CTestTestfile.cmake reader
 * (src/attribute/ctest.c), which names the processes ctest runs after
 * ctest's own tests, from files in the build tree: one file's text through
 * tf_ctest_parse(), then a process looked up in what it read.
 *
 * The input is the file, FUZZ_SEP, the process's working directory,
 * FUZZ_SEP, its argv (arguments separated by NUL bytes; the last one ends
 * with the input, and is terminated as the attribution terminates a
 * command line the kernel cut). A subdirs() the file names is looked for
 * under a directory that does not exist.
 */
#include "fuzz.h"
#include "attribute/attribute_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_parts x;
	const uint8_t *part[3] = { NULL, NULL, NULL };
	size_t len[3] = { 0, 0, 0 };
	char *text, *cwd, *argv;
	tf_ctest *c;

	fuzz_parts_init(&x, data, size);
	for (int i = 0; i < 3 && fuzz_part_next(&x, &part[i], &len[i]); i++)
		;
	text = fuzz_cstr(part[0], len[0]);
	cwd = fuzz_cstr(part[1] ? part[1] : data, len[1]);
	argv = fuzz_cstr(part[2] ? part[2] : data, len[2]);
	c = tf_ctest_parse(text, "/nonexistent/testflame-fuzz");
	if (c) {
		const char *name = tf_ctest_lookup(c, argv, len[2] ? len[2] + 1 : 0, cwd);
		if (!name)
			name = tf_ctest_next(c, strrchr(argv, '/') ? strrchr(argv, '/') + 1 : argv);
		if (name)
			FUZZ_CHECK(strlen(name) <= len[0], "a name longer than the file");
		tf_ctest_free(c);
	}
	free(text);
	free(cwd);
	free(argv);
	return 0;
}
