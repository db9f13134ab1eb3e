/*
 * unit.h - what every cmocka unit test includes: cmocka's prerequisites in
 * the order it needs them, and small helpers shared by the test files.
 */
#ifndef TESTFLAME_UNIT_H
#define TESTFLAME_UNIT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testflame/common.h"

/* A fresh temporary directory for one test; removed by unit_rmtree(). */
static inline char *unit_tmpdir(void)
{
	char tmpl[] = "/tmp/testflame-unit.XXXXXX";
	char *d = mkdtemp(tmpl);
	assert_non_null(d);
	return strdup(d);
}

static inline void unit_rmtree(char *dir)
{
	assert_int_equal(tf_rmtree(dir), 0);
	free(dir);
}

#endif
