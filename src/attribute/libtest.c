/*
 * libtest.c - the tests of a Rust test binary, by the threads it runs them
 * in.
 *
 * cargo test builds each test target into target/.../deps/NAME-HASH (a
 * hash of its build, different on every change of its flags or
 * dependencies) and runs it; libtest, the harness inside, runs every test
 * in a thread of its own named after the test (`tests::parses`, without
 * the crate's name), whatever --test-threads says. The kernel keeps 15
 * characters of a thread's name; a longer one is completed from the
 * binary's own functions: the crate's function whose path, without the
 * crate, the 15 characters begin (the test function itself). A thread is
 * a test whether or not a sample saw it, and its time on a CPU is the
 * test's. Test names are the runner's (`cargo test -- --list`), the
 * binary's name is the target's without cargo's hash.
 */
#include "attribute_int.h"

#include <stdlib.h>
#include <string.h>

#define COMM_LEN 15

size_t tf_cargo_stem(const char *name)
{
	size_t n = strlen(name);
	if (n < 18 || name[n - 17] != '-')
		return 0;
	for (size_t i = n - 16; i < n; i++)
		if (!((name[i] >= '0' && name[i] <= '9') || (name[i] >= 'a' && name[i] <= 'f')))
			return 0;
	return n - 17;
}

typedef struct {
	const char *crate;
	size_t len;
	tf_go_tests *out;
} collect_ctx;

/* The crate's functions, named as libtest names tests: without the crate
 * (crab::tests::parses -> tests::parses); closures, impls and generic
 * instances are not tests. */
static void collect(void *ctx, const char *name)
{
	collect_ctx *c = ctx;
	if (strncmp(name, c->crate, c->len) != 0 || strncmp(name + c->len, "::", 2) != 0)
		return;
	const char *rest = name + c->len + 2;
	if (strpbrk(rest, "{<> ("))
		return;
	for (size_t i = 0; i < c->out->n; i++)
		if (strcmp(c->out->v[i], rest) == 0)
			return;
	tf_vec_push(c->out, tf_xstrdup(rest));
}

bool tf_libtest_read(tf_go_tests *out, tf_symbolizer *sym, uint32_t pid, uint64_t addr,
		     const char *binary)
{
	size_t stem = tf_cargo_stem(binary);
	if (!stem)
		return false;
	char *crate = tf_xstrndup(binary, stem);
	collect_ctx c = { crate, stem, out };
	if (sym)
		tf_symbolizer_functions(sym, pid, addr, collect, &c);
	free(crate);
	return true;
}

char *tf_libtest_name(const tf_go_tests *fns, const char *comm)
{
	const char *only = NULL;
	size_t n = strlen(comm), matches = 0;

	if (n < COMM_LEN)
		return tf_xstrdup(comm);
	for (size_t i = 0; i < fns->n; i++) {
		if (strncmp(fns->v[i], comm, n) == 0) {
			only = fns->v[i];
			matches++;
		}
	}
	return tf_xstrdup(matches == 1 ? only : comm);
}
