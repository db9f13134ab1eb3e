/*
 * context_int.h - what the context's files share behind context.h and
 * config.h.
 */
#ifndef TESTFLAME_CONTEXT_INT_H
#define TESTFLAME_CONTEXT_INT_H

#include "testflame/common.h"

/* A finite decimal number (no hex), optionally followed by exactly
 * `suffix` ("%", "ms"); false when `s` is not one. */
bool tf_context_parse_number(const char *s, const char *suffix, double *out);

#endif
