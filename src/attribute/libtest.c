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
 *
 * Where several tests share their first 15 characters (strsim's
 * tests::jaro_winkler_*), the functions cannot say which thread is which;
 * the binary's own list can: libtest sorts the tests it selected and
 * starts their threads in that order, one per test it does not skip as
 * ignored, so the k-th thread of a name is the k-th test that runs of the
 * list's tests that begin with it. The list is the binary's --list with
 * the process's own filters (and --list --ignored for those it skips).
 * rustdoc runs doc-tests the same way, a thread each, which compiles the
 * doc-test (rustc, the build) and runs it (rust_out, the test): its list
 * is rustdoc's own command with --test-args --list, names as libtest
 * prints them (`src/lib.rs - Version::new (line 385)`).
 */
#include "attribute_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

#define LIST_TIMEOUT_MS 20000
#define LIST_MAX (16u << 20)

void tf_libtest_list_free(tf_libtest_list *l)
{
	tf_go_tests_free(&l->names);
	tf_vec_free(&l->runs);
	l->listed = false;
}

/* The names of libtest's --list output ("NAME: test"; benchmarks are not
 * run as tests), in its order, appended. */
static void parse_list(tf_go_tests *out, const char *text)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		if (len > 6 && memcmp(p + len - 6, ": test", 6) == 0)
			tf_vec_push(out, tf_xstrndup(p, len - 6));
		p += len + (nl ? 1 : 0);
	}
}

/* Run a list (a test binary's in a scratch directory, `cwd` NULL;
 * rustdoc's in the crate's); -1 with the error set when it fails. */
static int run_list(tf_go_tests *out, const char *const *argv, const char *const *env,
		    const char *cwd)
{
	tf_buf o = TF_BUF_INIT;
	int st = cwd ? tf_spawn_capture(&o, NULL, argv, env, *cwd ? cwd : NULL, LIST_TIMEOUT_MS,
					LIST_MAX)
		     : tf_spawn_capture_scratch(&o, NULL, argv, env, LIST_TIMEOUT_MS, LIST_MAX);
	int rc = st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
	if (!rc) {
		tf_error_clear();
		parse_list(out, o.ptr ? o.ptr : "");
	} else if (st >= 0) {
		tf_error_set(TF_ERROR, "%s",
			     WIFEXITED(st) ? "its list ended with a non-zero status" : "its list was killed");
	}
	tf_buf_free(&o);
	return rc;
}

/* The arguments of a libtest binary that select tests: filters, --exact,
 * --skip NAME, --ignored, --include-ignored, --test, --bench; the rest
 * (and the values of --logfile, --test-threads, --color, --format, -Z,
 * --shuffle-seed) left out. */
typedef TF_VEC(const char *) arg_vec;

static void selecting_args(arg_vec *out, const char *argv, size_t len,
			   bool *ignored, bool *include_ignored)
{
	static const char *const with_value[] = { "--logfile", "--test-threads", "--color",
						  "--format", "-Z", "--shuffle-seed", NULL };
	static const char *const kept[] = { "--exact", "--ignored", "--include-ignored", "--test",
					    "--bench", NULL };
	size_t off = argv && len ? strlen(argv) + 1 : 0;
	*ignored = *include_ignored = false;
	for (; argv && off < len; off += strlen(argv + off) + 1) {
		const char *a = argv + off;
		bool takes = false, keep = false;
		for (size_t i = 0; with_value[i]; i++)
			takes = takes || strcmp(a, with_value[i]) == 0;
		for (size_t i = 0; kept[i]; i++)
			keep = keep || strcmp(a, kept[i]) == 0;
		if (takes) {
			off += strlen(a) + 1;
			if (off >= len)
				break;
		} else if (!strcmp(a, "--skip") && off + strlen(a) + 1 < len) {
			tf_vec_push(out, a);
			off += strlen(a) + 1;
			tf_vec_push(out, argv + off);
		} else if (keep || a[0] != '-' || !strncmp(a, "--skip=", 7)) {
			tf_vec_push(out, a);
		}
		*ignored = *ignored || !strcmp(a, "--ignored");
		*include_ignored = *include_ignored || !strcmp(a, "--include-ignored");
	}
}

int tf_libtest_list_binary(tf_libtest_list *out, const char *path, const char *argv, size_t len,
			   const char *cwd)
{
	arg_vec args = { 0 };
	bool ignored, include;
	tf_go_tests skipped = { 0 };
	int rc;

	tf_vec_push(&args, path);
	selecting_args(&args, argv, len, &ignored, &include);
	size_t base = args.n;
	tf_vec_push(&args, "--list");
	tf_vec_push(&args, NULL);
	(void)cwd; /* a list does not depend on it */
	rc = run_list(&out->names, args.v, NULL, NULL);
	/* which of them it skips: the ignored ones, unless asked to run them */
	if (!rc && !ignored && !include) {
		args.n = base;
		tf_vec_push(&args, "--list");
		tf_vec_push(&args, "--ignored");
		tf_vec_push(&args, NULL);
		rc = run_list(&skipped, args.v, NULL, NULL);
	}
	for (size_t i = 0; !rc && i < out->names.n; i++) {
		uint8_t runs = 1;
		for (size_t k = 0; k < skipped.n && runs; k++)
			runs = strcmp(skipped.v[k], out->names.v[i]) != 0;
		tf_vec_push(&out->runs, runs);
	}
	out->listed = !rc;
	if (rc)
		tf_libtest_list_free(out);
	tf_go_tests_free(&skipped);
	tf_vec_free(&args);
	return rc;
}

/* The value of `key = "..."` in the [package] table of a Cargo.toml's
 * text; NULL when absent or not a plain string. */
static char *manifest_value(const char *text, const char *key)
{
	bool in_package = false;
	size_t kl = strlen(key);
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		const char *q = p;
		while (q < p + len && (*q == ' ' || *q == '\t'))
			q++;
		if (*q == '[')
			in_package = !strncmp(q, "[package]", 9);
		else if (in_package && !strncmp(q, key, kl)) {
			const char *v = q + kl;
			while (*v == ' ' || *v == '\t')
				v++;
			if (*v == '=') {
				v++;
				while (*v == ' ' || *v == '\t')
					v++;
				const char *e = *v == '"' ? memchr(v + 1, '"', (size_t)(p + len - v - 1)) : NULL;
				if (e)
					return tf_xstrndup(v + 1, (size_t)(e - v - 1));
			}
		}
		p += len + (nl ? 1 : 0);
	}
	return NULL;
}

/*
 * The environment cargo gives rustdoc, as far as the package's manifest
 * says (a crate's env!("CARGO_PKG_VERSION") needs it to be read at all):
 * ours, with CARGO_PKG_NAME, CARGO_PKG_VERSION and its parts,
 * CARGO_CRATE_NAME, CARGO_MANIFEST_DIR, and the other CARGO_PKG_ fields
 * empty, where ours has none of them.
 */
static char **rustdoc_env(const char *cwd, const char *crate)
{
	extern char **environ;
	TF_VEC(char *) env = { 0 };
	tf_buf m = TF_BUF_INIT;
	char *path = tf_xasprintf("%s/Cargo.toml", cwd && *cwd ? cwd : ".");
	const char *text = tf_file_read(&m, path) == 0 && m.ptr ? m.ptr : "";
	char *name = manifest_value(text, "name"), *version = manifest_value(text, "version");
	static const char *const empty[] = { "AUTHORS", "DESCRIPTION", "HOMEPAGE", "REPOSITORY",
					     "LICENSE", "LICENSE_FILE", "RUST_VERSION", "README", NULL };
	unsigned maj = 0, min = 0, pat = 0;
	char pre[128] = "";

	tf_error_clear();
	for (char **e = environ; *e; e++)
		tf_vec_push(&env, tf_xstrdup(*e));
	if (!getenv("CARGO_PKG_NAME")) {
		tf_vec_push(&env, tf_xasprintf("CARGO_PKG_NAME=%s", name ? name : crate ? crate : ""));
		tf_vec_push(&env, tf_xasprintf("CARGO_PKG_VERSION=%s", version ? version : "0.0.0"));
		if (version)
			sscanf(version, "%u.%u.%u-%127s", &maj, &min, &pat, pre);
		tf_vec_push(&env, tf_xasprintf("CARGO_PKG_VERSION_MAJOR=%u", maj));
		tf_vec_push(&env, tf_xasprintf("CARGO_PKG_VERSION_MINOR=%u", min));
		tf_vec_push(&env, tf_xasprintf("CARGO_PKG_VERSION_PATCH=%u", pat));
		tf_vec_push(&env, tf_xasprintf("CARGO_PKG_VERSION_PRE=%s", pre));
		for (size_t i = 0; empty[i]; i++)
			tf_vec_push(&env, tf_xasprintf("CARGO_PKG_%s=", empty[i]));
		tf_vec_push(&env, tf_xasprintf("CARGO_CRATE_NAME=%s", crate ? crate : ""));
		tf_vec_push(&env, tf_xasprintf("CARGO_MANIFEST_DIR=%s", cwd ? cwd : "."));
		tf_vec_push(&env, tf_xasprintf("CARGO_MANIFEST_PATH=%s", path));
	}
	tf_vec_push(&env, NULL);
	free(name);
	free(version);
	free(path);
	tf_buf_free(&m);
	return env.v;
}

int tf_libtest_list_rustdoc(tf_libtest_list *out, const char *argv, size_t len, const char *cwd)
{
	arg_vec args = { 0 };
	const char *crate = NULL;
	bool test = false;

	for (size_t off = 0; argv && off < len; off += strlen(argv + off) + 1) {
		const char *a = argv + off;
		test = test || !strcmp(a, "--test");
		if (!strcmp(a, "--crate-name") && off + strlen(a) + 1 < len)
			crate = a + strlen(a) + 1;
		tf_vec_push(&args, a);
	}
	if (!test || !args.n) {
		tf_vec_free(&args);
		return tf_error_set(TF_EINVAL, "rustdoc runs no doc-tests"); /* documentation */
	}
	tf_vec_push(&args, "--test-args");
	tf_vec_push(&args, "--list");
	tf_vec_push(&args, NULL);
	char **env = rustdoc_env(cwd, crate);
	int rc = run_list(&out->names, args.v, (const char *const *)env, cwd ? cwd : "");
	for (size_t i = 0; env[i]; i++)
		free(env[i]);
	free(env);
	tf_vec_free(&args);
	/* an ignored doc-test is listed too: its thread is not started */
	for (size_t i = 0; !rc && i < out->names.n; i++)
		tf_vec_push(&out->runs, 1);
	out->listed = !rc;
	if (rc)
		tf_libtest_list_free(out);
	return rc;
}

const char *tf_libtest_list_name(const tf_libtest_list *l, const char *comm, uint32_t k)
{
	size_t n = strlen(comm);
	for (size_t i = 0; l->listed && i < l->names.n; i++) {
		const char *name = l->names.v[i];
		bool match = n < COMM_LEN ? strcmp(name, comm) == 0 : strncmp(name, comm, n) == 0;
		if (match && l->runs.v[i] && k-- == 0)
			return name;
	}
	return NULL;
}

const char *tf_libtest_list_nth(const tf_libtest_list *l, const char *comm, uint32_t n)
{
	for (size_t i = 0; l->listed && i < l->names.n; i++) {
		if (!l->runs.v[i] || n-- > 0)
			continue;
		const char *name = l->names.v[i];
		size_t len = strlen(comm);
		bool match = len < COMM_LEN ? strcmp(name, comm) == 0 : strncmp(name, comm, len) == 0;
		return match ? name : NULL;
	}
	return NULL;
}
