/*
 * ctest_log.c - fuzz target: the reader of ctest's
 * Testing/Temporary/LastTest.log in src/attribute/runner.c, with the lines
 * of its programs' output that name their own tests (GoogleTest's
 * "[       OK ] Suite.Name (3 ms)", cmocka's, Unity's "file.c:12:test:PASS"),
 * read as tests inside the ctest test. Seeds written by ctest running
 * GoogleTest, cmocka and Unity programs; rules in runner.h.
 */
#include "runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_runner_read(data, size);
}
