/*
 * execcheck.h - whether a program may be started with the allocation
 * sampler preloaded (execcheck.c). The preload asks before every exec of
 * its process, and testflame before it starts the command, since the
 * sampler's mere presence breaks one kind of program: a sanitizer build
 * with a dynamic runtime (gcc's -fsanitize=address links libasan.so, which
 * aborts when it is not the first library loaded). Static programs and
 * setuid ones are left alone by the dynamic loader anyway; saying why
 * helps the notes. Async-signal-safe (open, pread, close, no malloc): the
 * preload runs it in a vfork child.
 */
#ifndef TESTFLAME_RECORD_PRELOAD_EXECCHECK_H
#define TESTFLAME_RECORD_PRELOAD_EXECCHECK_H

#include <stddef.h>

enum {
	TF_EXEC_OK = 0,          /* dynamic, nothing against the sampler */
	TF_EXEC_SANITIZER,       /* links a sanitizer runtime: remove the sampler */
	TF_EXEC_ABI,             /* another ABI (32-bit): remove the sampler, whose
				  * loader would say it cannot preload it */
	TF_EXEC_STATIC,          /* no dynamic loader: the sampler cannot load */
	TF_EXEC_SETUID,          /* the loader ignores preloads: it will not load */
	TF_EXEC_UNKNOWN,         /* not readable, not ELF: left as it is */
};

/*
 * What `path` is, following one "#!" line to its interpreter. `why` gets
 * the runtime's name ("libasan.so.8") for TF_EXEC_SANITIZER, the ABI for
 * TF_EXEC_ABI, else "".
 */
int tf_exec_check(const char *path, char *why, size_t whylen);

/* Whether `path` is a Go program (a .go.buildinfo or .gopclntab section):
 * its runtime allocates apart from malloc. Not async-signal-safe work
 * needed here: testflame asks, not the preload. */
int tf_exec_is_go(const char *path);

/* Whether the library at `path` (a path or a base name) is a sanitizer's
 * runtime. */
int tf_exec_is_sanitizer_lib(const char *path);

/*
 * `value` (an LD_PRELOAD) without the entries whose base name is `lib`,
 * into `out` (outlen bytes); returns its length, or -1 when it does not
 * fit. An entry is a path; entries are separated by ':' or spaces.
 */
int tf_exec_strip_preload(const char *value, const char *lib, char *out, size_t outlen);

#endif
