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
#include <time.h>
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

/* Run a shell command, printf style; the test fails if it does. */
static inline void unit_sh(const char *fmt, ...) TF_PRINTF(1, 2);
static inline void unit_sh(const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	if (system(b.ptr) != 0)
		fail_msg("command failed: %s", b.ptr);
	tf_buf_free(&b);
}

/* Wait until `path` exists, for at most 20 s: what a live hook stalls on
 * while the command it reads goes on (the records pile up in the rings).
 * Returns false when it timed out. */
static inline bool unit_wait_for_file(const char *path)
{
	struct timespec ms = { 0, 1000000 };
	for (int i = 0; i < 20000; i++) {
		if (access(path, F_OK) == 0)
			return true;
		nanosleep(&ms, NULL);
	}
	return false;
}

/* For the tests that make git repositories: git and libgit2 read only
 * their own settings (HOME is `home`, no system config) and commit as a
 * fixed identity. */
static inline void unit_git_env(const char *home)
{
	setenv("HOME", home, 1);
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "Test", 1);
	setenv("GIT_AUTHOR_EMAIL", "test@example.com", 1);
	setenv("GIT_COMMITTER_NAME", "Test", 1);
	setenv("GIT_COMMITTER_EMAIL", "test@example.com", 1);
}

#endif
