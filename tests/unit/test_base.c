/*
 * test_base.c - the toolbox of src/base that no other test exercises on
 * its own: the index hash table's removal (entries come and go by the
 * thousand in the ptrace sampler's pid indexes), rm -r, the sweep of what
 * killed writers left behind, the lists of strings modules hand to the
 * cli, a program's output captured within a time limit, and the heap in
 * huge pages.
 */
#include "unit.h"

#include <sys/wait.h>

#include "testflame/common.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
	uint32_t key[4096];
	bool live[4096];
} table;

static bool key_is(const void *ctx, uint32_t index, const void *key)
{
	const table *t = ctx;
	return t->live[index] && t->key[index] == *(const uint32_t *)key;
}

static uint32_t find(const tf_htab *h, const table *t, uint32_t key, uint64_t (*hash)(uint32_t))
{
	return tf_htab_find(h, hash(key), key_is, t, &key);
}

static uint64_t good_hash(uint32_t k) { return tf_hash_u64(k); }
/* Every key in one of four probe runs: removal must mend long chains. */
static uint64_t bad_hash(uint32_t k) { return k & 3; }

static void churn(uint64_t (*hash)(uint32_t), size_t n, unsigned rounds)
{
	static table t;
	tf_htab h = { 0 };
	unsigned seed = 42;
	size_t live = 0;

	memset(&t, 0, sizeof(t));
	for (uint32_t i = 0; i < n; i++)
		t.key[i] = i * 2654435761u;
	for (unsigned r = 0; r < rounds; r++) {
		uint32_t i = (uint32_t)(rand_r(&seed) % n);
		if (t.live[i]) {
			tf_htab_remove(&h, hash(t.key[i]), i);
			t.live[i] = false;
			live--;
		} else {
			tf_htab_insert(&h, hash(t.key[i]), i);
			t.live[i] = true;
			live++;
		}
		assert_int_equal(h.count, live);
		if (r % 97 == 0 || r + 1 == rounds)
			for (uint32_t j = 0; j < n; j++)
				assert_int_equal(find(&h, &t, t.key[j], hash),
						 t.live[j] ? j : TF_HTAB_NONE);
	}
	tf_htab_free(&h);
}

static void test_htab_remove(void **state)
{
	(void)state;
	churn(good_hash, 4096, 40000);
	churn(bad_hash, 300, 4000);
}

static bool index_is(const void *ctx, uint32_t index, const void *key)
{
	(void)ctx;
	return index == *(const uint32_t *)key;
}

static void test_htab_remove_edges(void **state)
{
	tf_htab h = { 0 };
	uint32_t zero = 0, one = 1;
	(void)state;

	/* nothing to remove in an empty table, nor an absent entry */
	tf_htab_remove(&h, 1, 0);
	assert_int_equal(h.count, 0);
	/* the same hash, two indices: only the one named goes */
	tf_htab_insert(&h, 7, 0);
	tf_htab_insert(&h, 7, 1);
	tf_htab_remove(&h, 7, 5);
	tf_htab_remove(&h, 8, 0);
	assert_int_equal(h.count, 2);
	tf_htab_remove(&h, 7, 0);
	assert_int_equal(h.count, 1);
	assert_int_equal(tf_htab_find(&h, 7, index_is, NULL, &zero), TF_HTAB_NONE);
	assert_int_equal(tf_htab_find(&h, 7, index_is, NULL, &one), 1);
	tf_htab_free(&h);
}

static void touch(const char *dir, const char *name)
{
	char *path = tf_xasprintf("%s/%s", dir, name);
	assert_int_equal(tf_file_write_atomic(path, "x", 1), 0);
	free(path);
}

static void test_rmtree(void **state)
{
	char *top = unit_tmpdir(), *keep = unit_tmpdir();
	char *tree = tf_xasprintf("%s/tree", top), *deep = tf_xasprintf("%s/a/b/c", tree);
	char *link = tf_xasprintf("%s/a/outside", tree), *kept = tf_xasprintf("%s/precious", keep);
	char *file = tf_xasprintf("%s/a/f", tree), *under_file = tf_xasprintf("%s/x", file);
	struct stat st;
	(void)state;

	assert_int_equal(tf_mkdir_p(deep, 0755), 0);
	touch(tree, "top");
	touch(deep, ".hidden");
	touch(tree, "a/f");
	touch(keep, "precious");
	/* a link out of the tree: removed, what it points at is not */
	assert_int_equal(symlink(keep, link), 0);
	/* a path below a file cannot be there to remove */
	assert_int_equal(tf_rmtree(under_file), TF_ERROR);
	assert_non_null(strstr(tf_error_last(), "cannot remove"));
	assert_int_equal(tf_rmtree(tree), 0);
	assert_int_equal(lstat(tree, &st), -1);
	assert_int_equal(stat(kept, &st), 0);
	/* gone already: nothing to do */
	assert_int_equal(tf_rmtree(tree), 0);
	free(tree);
	free(deep);
	free(link);
	free(kept);
	free(file);
	free(under_file);
	unit_rmtree(top);
	unit_rmtree(keep);
}

/* Sorted by key, equal keys in their order before: timestamps that share
 * their high bytes, addresses with few distinct values, already sorted
 * input, one element. */
/* fopen, not tf_file_write_atomic(), which sweeps itself */
static void make_file(const char *dir, const char *name)
{
	char *p = tf_xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
	free(p);
}

static bool exists(const char *dir, const char *name)
{
	char *p = tf_xasprintf("%s/%s", dir, name);
	bool e = access(p, F_OK) == 0;
	free(p);
	return e;
}

static void count_removed(const char *path, void *payload)
{
	(*(int *)payload)++;
	unlink(path);
}

/* Names PREFIX...PID of processes that are gone go, the rest stays: live
 * writers (this process, its parent), other names, a prefix alone. */
static void test_remove_stale(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), name[128];
	pid_t dead = fork();
	int removed = 0;

	assert_true(dead >= 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	snprintf(name, sizeof(name), "run.pb.gz.tmp.%ld", (long)dead);
	make_file(dir, name);
	snprintf(name, sizeof(name), ".pruned.0123abcd.%ld", (long)dead);
	make_file(dir, name);
	snprintf(name, sizeof(name), "run.pb.gz.tmp.%ld", (long)getpid());
	make_file(dir, name);
	snprintf(name, sizeof(name), "run.pb.gz.tmp.%ld", (long)getppid());
	make_file(dir, name);
	make_file(dir, "run.pb.gz");
	make_file(dir, "run.pb.gz.tmp.");
	make_file(dir, "run.pb.gz.tmp.12x");

	tf_remove_stale(dir, "run.pb.gz.tmp.", NULL, NULL);
	snprintf(name, sizeof(name), "run.pb.gz.tmp.%ld", (long)dead);
	assert_false(exists(dir, name));
	snprintf(name, sizeof(name), "run.pb.gz.tmp.%ld", (long)getpid());
	assert_true(exists(dir, name));
	snprintf(name, sizeof(name), "run.pb.gz.tmp.%ld", (long)getppid());
	assert_true(exists(dir, name));
	assert_true(exists(dir, "run.pb.gz"));
	assert_true(exists(dir, "run.pb.gz.tmp."));
	assert_true(exists(dir, "run.pb.gz.tmp.12x"));
	/* another prefix, the pid after the last dot, the caller's remover */
	snprintf(name, sizeof(name), ".pruned.0123abcd.%ld", (long)dead);
	assert_true(exists(dir, name));
	tf_remove_stale(dir, ".pruned.", count_removed, &removed);
	assert_int_equal(removed, 1);
	assert_false(exists(dir, name));
	unit_rmtree(dir);
}

static void test_sort_keyed(void **state)
{
	(void)state;
	enum { N = 20000 };
	tf_keyed *v = tf_xmalloc(N * sizeof(*v));
	uint64_t x = 88172645463325252ULL;
	for (int shape = 0; shape < 3; shape++) {
		for (size_t i = 0; i < N; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v[i].key = shape == 0 ? 0x1234567800000000ULL + (x & 0xffffffff)
				 : shape == 1 ? x % 37 : i * 3;
			v[i].val = i;
		}
		tf_sort_keyed(v, N);
		uint64_t sum = v[0].val;
		for (size_t i = 1; i < N; i++) {
			sum += v[i].val;
			assert_true(v[i - 1].key <= v[i].key);
			if (v[i - 1].key == v[i].key)
				assert_true(v[i - 1].val < v[i].val);
		}
		assert_int_equal(sum, (uint64_t)N * (N - 1) / 2); /* none lost */
	}
	v[0].key = 5;
	tf_sort_keyed(v, 1);
	assert_int_equal(v[0].key, 5);
	free(v);
}

/* A program's output, apart on its two streams and cut at `max`; one
 * that outlives its time is killed with its children, and is an error. */
static void test_spawn_capture(void **state)
{
	tf_buf out = TF_BUF_INIT, err = TF_BUF_INIT;
	const char *const both[] = { "sh", "-c", "echo one; echo two >&2; cd /tmp && pwd; exit 3", NULL };
	const char *const big[] = { "sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x", NULL };
	const char *const slow[] = { "sh", "-c", "sleep 30 & echo started; wait", NULL };
	const char *const none[] = { "/nonexistent/program", NULL };
	(void)state;

	int st = tf_spawn_capture(&out, &err, both, NULL, "/", 5000, 1 << 20);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 3);
	assert_string_equal(out.ptr, "one\n/tmp\n");
	assert_string_equal(err.ptr, "two\n");
	/* one buffer: both streams in order, with the environment given */
	const char *const envd[] = { "sh", "-c", "echo $TF_X; echo e >&2; echo o", NULL };
	const char *const env[] = { "TF_X=set", "PATH=/usr/bin:/bin", NULL };
	tf_buf_clear(&out);
	st = tf_spawn_capture(&out, &out, envd, env, NULL, 5000, 1000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_string_equal(out.ptr, "set\ne\no\n");
	tf_buf_clear(&out);
	st = tf_spawn_capture(&out, NULL, big, NULL, NULL, 5000, 1000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	assert_int_equal(out.len, 1000); /* the rest read and dropped */
	tf_buf_clear(&out);
	uint64_t t0 = tf_now_ns();
	assert_true(tf_spawn_capture(&out, NULL, slow, NULL, NULL, 300, 1000) < 0);
	assert_true(tf_now_ns() - t0 < 5000000000ULL);
	assert_string_equal(out.ptr, "started\n");
	assert_non_null(strstr(tf_error_last(), "did not end within 300 ms"));
	st = tf_spawn_capture(NULL, NULL, none, NULL, NULL, 5000, 1000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 127);
	/* in a scratch directory: empty, and gone with what was written there */
	const char *const scratch[] = { "sh", "-c", "ls -A | wc -l; pwd; touch left", NULL };
	tf_buf_clear(&out);
	st = tf_spawn_capture_scratch(&out, NULL, scratch, NULL, 5000, 1000);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	char *dir = strchr(out.ptr, '\n');
	assert_true(strncmp(out.ptr, "0\n", 2) == 0 && dir && strstr(dir, "testflame-list-"));
	dir[strlen(dir) - 1] = '\0';
	struct stat sb;
	assert_int_not_equal(stat(dir + 1, &sb), 0);
	tf_buf_free(&out);
	tf_buf_free(&err);
}

static void test_string_lists(void **state)
{
	tf_msglist l = { 0 };
	char *const src[] = { "make", "-j2", "", NULL };
	char **v;
	(void)state;

	tf_msglist_pushf(&l, "%s '%s' is %d", "file", "x y", 3);
	tf_msglist_pushf(&l, "plain");
	assert_int_equal(l.n, 2);
	assert_string_equal(l.v[0], "file 'x y' is 3");
	assert_string_equal(l.v[1], "plain");
	tf_msglist_free(&l);
	assert_int_equal(l.n, 0);
	assert_null(l.v);

	v = tf_strv_dup(src);
	assert_true(v != (char **)src && v[0] != src[0]);
	assert_string_equal(v[0], "make");
	assert_string_equal(v[2], "");
	assert_null(v[3]);
	tf_strv_free(v);
	tf_strv_free(NULL);
}

/* tf_buf_put_int writes what "%lld" writes, at both ends of the range */
static void test_buf_put_int(void **state)
{
	const int64_t v[] = { 0, 1, -1, 9, 10, -10, 99, 100, 4004004, -123456789, 999999999999999,
			      INT32_MAX, (int64_t)INT32_MIN - 1, INT64_MAX, INT64_MIN, INT64_MIN + 1 };
	tf_buf b = TF_BUF_INIT, want = TF_BUF_INIT;
	(void)state;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		tf_buf_puts(&b, "|");
		tf_buf_put_int(&b, v[i]);
		tf_buf_printf(&want, "|%lld", (long long)v[i]);
	}
	assert_string_equal(b.ptr, want.ptr);
	tf_buf_free(&b);
	tf_buf_free(&want);
}

/* The VmFlags of the mapping of /proc/self/smaps that holds `p`. */
static char *vm_flags_of(const void *p)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512], *flags = NULL;
	bool in = false;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) { /* a mapping's first line */
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			flags = tf_xstrdup(line + 8);
			break;
		}
	}
	fclose(f);
	assert_non_null(flags);
	return flags;
}

/* After tf_heap_huge_pages(), the heap's next blocks are in a mapping
 * advised into huge pages ("hg") from a huge page's first byte on, and
 * blocks of BIG_BLOCK and more keep their own advised mappings. */
static void test_heap_huge_pages(void **state)
{
	(void)state;
#if defined(__SANITIZE_ADDRESS__) || !defined(MADV_HUGEPAGE)
	print_message("skipped: a sanitizer's malloc (or no MADV_HUGEPAGE)\n");
	skip();
#endif
	tf_heap_huge_pages();
	tf_heap_huge_pages(); /* once */
	char *a = tf_xmalloc(100 << 10), *b = tf_xmalloc(300);
	char *fa = vm_flags_of(a), *fb = vm_flags_of(b);
	assert_non_null(strstr(fa, " hg"));
	assert_non_null(strstr(fb, " hg"));
	/* from the heap, not a mapping of their own */
	assert_true(b > a && b - a < (1 << 20));
	char *big = tf_xmalloc((size_t)8 << 20);
	char *fbig = vm_flags_of(big + ((size_t)4 << 20));
	assert_non_null(strstr(fbig, " hg"));
	free(fa);
	free(fb);
	free(fbig);
	free(a);
	free(b);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_heap_huge_pages),
		cmocka_unit_test(test_htab_remove),
		cmocka_unit_test(test_htab_remove_edges),
		cmocka_unit_test(test_rmtree),
		cmocka_unit_test(test_remove_stale),
		cmocka_unit_test(test_string_lists),
		cmocka_unit_test(test_spawn_capture),
		cmocka_unit_test(test_sort_keyed),
		cmocka_unit_test(test_buf_put_int),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
