/*
 * test_cgroup.c - the command's own cgroup (src/record/cgroup.c): finding
 * the cgroup2 mount and this process's cgroup in the kernel's formats, and
 * on this machine a real cgroup made, a real process moved into it, and
 * the cgroup removed, also while a process the suite left still lives in
 * it.
 */
#include "unit.h"

#include "record/record_int.h"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void test_parse_mount(void **state)
{
	char out[256];
	(void)state;

	/* a hybrid layout (v1 controllers, v2 under unified), as on Debian 12 VMs */
	const char *hybrid =
		"25 30 0:22 / /sys/fs/cgroup rw,relatime shared:9 - tmpfs tmpfs rw,mode=755\n"
		"26 25 0:23 / /sys/fs/cgroup/cpu rw,relatime shared:10 - cgroup cgroup rw,cpu\n"
		"27 25 0:24 / /sys/fs/cgroup/unified rw,relatime shared:11 - cgroup2 cgroup2 rw\n";
	assert_true(tf_cgroup_parse_mount(hybrid, out, sizeof(out)));
	assert_string_equal(out, "/sys/fs/cgroup/unified");

	/* systemd's unified layout, no optional fields, an escaped space */
	const char *unified = "35 24 0:30 / /sys/fs/my\\040cg rw,nosuid - cgroup2 cgroup2 rw,nsdelegate";
	assert_true(tf_cgroup_parse_mount(unified, out, sizeof(out)));
	assert_string_equal(out, "/sys/fs/my cg");

	/* a cgroup2 bind-mounted from inside the hierarchy is not the whole of it */
	const char *inner = "40 30 0:30 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
	assert_false(tf_cgroup_parse_mount(inner, out, sizeof(out)));
	assert_false(tf_cgroup_parse_mount("", out, sizeof(out)));
	/* too long for `out` */
	assert_false(tf_cgroup_parse_mount(unified, out, 5));
}

static void test_parse_own(void **state)
{
	char out[256];
	(void)state;

	assert_true(tf_cgroup_parse_own("9:name=systemd:/\n4:memory:/a/b\n0::/\n", out, sizeof(out)));
	assert_string_equal(out, "/");
	assert_true(tf_cgroup_parse_own("0::/user.slice/user-1000.slice/session-2.scope\n", out,
					sizeof(out)));
	assert_string_equal(out, "/user.slice/user-1000.slice/session-2.scope");
	/* v1 only: no unified line */
	assert_false(tf_cgroup_parse_own("4:memory:/a\n1:cpu:/\n", out, sizeof(out)));
}

/* Whether process `pid` is in a cgroup whose path holds `name`. */
static bool in_cgroup(pid_t pid, const char *name)
{
	char path[64];
	tf_buf b = TF_BUF_INIT;
	bool in;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	if (tf_file_read(&b, path) != 0)
		return false;
	in = strstr(b.ptr, name) != NULL;
	tf_buf_free(&b);
	return in;
}

static pid_t sleeper(void)
{
	pid_t pid = fork();
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void test_real_cgroup(void **state)
{
	tf_cgroup *cg;
	struct stat st;
	char *path, *name;
	(void)state;

	if (tf_cgroup_create(&cg) != 0) {
		/* not root, or no writable cgroup2: the recorder inherits then */
		print_message("skipped: %s\n", tf_error_last());
		skip();
	}
	path = tf_xstrdup(tf_cgroup_path(cg));
	name = tf_xstrdup(strrchr(path, '/') + 1);
	assert_true(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
	assert_true(tf_cgroup_fd(cg) >= 0);

	/* a process moved in, and its child born there */
	pid_t a = sleeper();
	assert_int_equal(tf_cgroup_add(cg, a), 0);
	assert_true(in_cgroup(a, name));
	assert_false(in_cgroup(getpid(), name));
	kill(a, SIGKILL);
	waitpid(a, NULL, 0);

	/* a process left behind goes back to the parent, and the cgroup goes */
	pid_t b = sleeper();
	assert_int_equal(tf_cgroup_add(cg, b), 0);
	tf_cgroup_free(cg);
	assert_true(stat(path, &st) != 0);
	assert_true(kill(b, 0) == 0);
	assert_false(in_cgroup(b, name));
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);

	/* nothing to move into: a clear error */
	assert_int_equal(tf_cgroup_create(&cg), 0);
	assert_int_not_equal(tf_cgroup_add(cg, 999999999), 0);
	assert_non_null(strstr(tf_error_last(), "cannot move process 999999999"));
	tf_cgroup_free(cg);
	free(path);
	free(name);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_mount),
		cmocka_unit_test(test_parse_own),
		cmocka_unit_test(test_real_cgroup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
