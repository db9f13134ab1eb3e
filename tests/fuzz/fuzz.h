/*
 * fuzz.h - what the libFuzzer targets of tests/fuzz share: the entry point's
 * declaration, the input as a C string, and FUZZ_CHECK for the properties a
 * target asserts beyond "no crash" (an output that must parse, a name that
 * must stay inside its line). A failed check aborts, which libFuzzer
 * reports like a crash and saves the input for.
 *
 * A target is one file, tests/fuzz/NAME.c, with its seeds in tests/fuzz/NAME/
 * (see README.md there); it includes this header and defines
 * LLVMFuzzerTestOneInput. Everything a target allocates is freed before it
 * returns: the leak checker runs on every input.
 */
#ifndef TESTFLAME_FUZZ_H
#define TESTFLAME_FUZZ_H

#include "testflame/common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

#define FUZZ_CHECK(cond, ...) do { \
		if (!(cond)) { \
			fprintf(stderr, "fuzz check failed at %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
			abort(); \
		} \
	} while (0)

/* The input with a NUL after it (it may hold NULs of its own); free(). */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = tf_xmalloc(size + 1);
	if (size)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

/*
 * For readers that take a path: the input as a file, "/proc/self/fd/N" of
 * a memory file this process reuses for every input (no disk, nothing to
 * clean up). The path is valid until the next call.
 */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		FUZZ_CHECK(fd >= 0, "memfd_create failed");
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	FUZZ_CHECK(ftruncate(fd, 0) == 0 && (!size || pwrite(fd, data, size, 0) == (ssize_t)size),
		   "cannot write the input to its file");
	return path;
}

/*
 * Inputs made of several parts (a file and the lines a test appends, an
 * HTTP exchange of several responses) separate them by FUZZ_SEP, a line
 * "~~~"; fuzz_part_next() hands out the parts in order, then false.
 */
#define FUZZ_SEP "\n~~~\n"
typedef struct {
	const uint8_t *p, *end;
	bool done;
} fuzz_parts;

static inline void fuzz_parts_init(fuzz_parts *x, const uint8_t *data, size_t size)
{
	x->p = data;
	x->end = data + size;
	x->done = false;
}

static inline bool fuzz_part_next(fuzz_parts *x, const uint8_t **part, size_t *len)
{
	const size_t seplen = sizeof(FUZZ_SEP) - 1;
	const uint8_t *s;
	if (x->done)
		return false;
	s = x->p < x->end ? memmem(x->p, (size_t)(x->end - x->p), FUZZ_SEP, seplen) : NULL;
	*part = x->p;
	*len = (size_t)((s ? s : x->end) - x->p);
	if (s)
		x->p = s + seplen;
	else
		x->done = true;
	return true;
}

#endif
