/*
 * pprof_gzip.c - fuzz target: the pprof reader on gzip-compressed input,
 * as run files and Go's profiles are written: the gunzip in front of the
 * protobuf decoder (truncated, corrupt and concatenated members, bombs),
 * then the same checks as pprof.c.
 */
#define FUZZ_GZIP 1
#include "pprof.c"
