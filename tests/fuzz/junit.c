/*
 * junit.c - fuzz target: the JUnit XML reader of src/attribute/runner.c
 * (GoogleTest's --gtest_output, pytest --junitxml, ctest --output-junit,
 * cmocka's XML), which reads the reports the suite's runners write into
 * the build tree. Seeds written by those runners; rules in runner.h.
 */
#include "runner.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_runner_read(data, size);
}
