/*
 * tap.c - fuzz target: the TAP reader of src/attribute/runner.c ("ok N -
 * description", "not ok", "# SKIP"). Seeds written by Perl's Test::More,
 * node's test runner and cmocka; rules in runner.h.
 */
#include "runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_runner_read(data, size);
}
