/*
 * go_json.c - fuzz target: the `go test -json` reader of
 * src/attribute/runner.c (one event per line; subtests named from their
 * run events). Seeds written by go test; rules in runner.h.
 */
#include "runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_runner_read(data, size);
}
