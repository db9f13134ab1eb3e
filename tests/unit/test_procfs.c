/*
 * test_procfs.c - the /proc parsers of src/record/procfs.c on the kernel's
 * own formats: stat lines whose command name holds spaces and parentheses,
 * status fields, the syscall file of a thread really blocked in read(2),
 * and the executable mappings of this very process.
 */
#include "unit.h"

#include "record/record_int.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>

static void test_stat_fields(void **state)
{
	char line[] = "4242 (a (b) c) S 17 4242 4242 0 -1 4194560 100 0 0 0 7 3 0 0\n";
	char *tok[20];
	(void)state;

	assert_int_equal(tf_procfs_stat_fields(line, tok, 20), 15);
	assert_int_equal(tok[0][0], 'S');
	assert_int_equal(strtol(tok[1], NULL, 10), 17);
	assert_int_equal(strtol(tok[11], NULL, 10), 7);  /* utime, field 14 */
	assert_int_equal(strtol(tok[12], NULL, 10), 3);  /* stime */
	/* at most `max`, and nothing without the command's ')' */
	assert_int_equal(tf_procfs_stat_fields(line, tok, 2), 2);
	char bad[] = "4242 no-parens S 1";
	assert_int_equal(tf_procfs_stat_fields(bad, tok, 20), 0);
}

static void test_ppid(void **state)
{
	char pid[32];
	(void)state;

	assert_int_equal(tf_procfs_ppid("self"), getppid());
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	assert_int_equal(tf_procfs_ppid(pid), getppid());
	assert_int_equal(tf_procfs_ppid("999999999"), -1);
}

static void test_status_field(void **state)
{
	const char *st = "Name:\tcat\nUmask:\t0022\nState:\tR (running)\nTgid:\t4242\n"
			 "Ngid:\t0\nPid:\t4243\nPPid:\t17\nCapEff:\t000001ffffffffff\n";
	char v[8];
	(void)state;

	assert_true(tf_procfs_status_field(st, "Tgid", v, sizeof(v)));
	assert_string_equal(v, "4242");
	assert_true(tf_procfs_status_field(st, "PPid", v, sizeof(v)));
	assert_string_equal(v, "17");
	assert_true(tf_procfs_status_field(st, "Name", v, sizeof(v)));
	assert_string_equal(v, "cat");
	/* "Pid" is not "PPid", nor a prefix of "Pidfoo" */
	assert_true(tf_procfs_status_field(st, "Pid", v, sizeof(v)));
	assert_string_equal(v, "4243");
	/* cut to the buffer */
	assert_true(tf_procfs_status_field(st, "CapEff", v, sizeof(v)));
	assert_string_equal(v, "000001f");
	assert_false(tf_procfs_status_field(st, "Seccomp", v, sizeof(v)));
	assert_false(tf_procfs_status_field("", "Tgid", v, sizeof(v)));
}

static void test_parse_syscall(void **state)
{
	tf_wait_site k;
	(void)state;

	assert_int_equal(tf_procfs_parse_syscall("running\n", &k), 1);
	assert_int_equal(tf_procfs_parse_syscall("-1 0x7ffd1000 0x401136\n", &k), 0);
	assert_int_equal(k.nr, -1);
	assert_int_equal(k.sp, 0x7ffd1000);
	assert_int_equal(k.pc, 0x401136);
	assert_int_equal(tf_procfs_parse_syscall("202 0x5 0x80 0x0 0x0 0x0 0x0 0x7ffe20 0x7f0010\n",
						 &k), 0);
	assert_int_equal(k.nr, 202);
	assert_int_equal(k.args[0], 5);
	assert_int_equal(k.args[1], 0x80);
	assert_int_equal(k.sp, 0x7ffe20);
	assert_int_equal(k.pc, 0x7f0010);
	/* neither running nor a wait site */
	assert_int_equal(tf_procfs_parse_syscall("", &k), -1);
	assert_int_equal(tf_procfs_parse_syscall("0 0x1 0x2 0x3\n", &k), -1);
}

static int pipe_fds[2];
static volatile pid_t reader_tid;

static void *block_in_read(void *arg)
{
	char c;
	(void)arg;
	reader_tid = (pid_t)syscall(SYS_gettid);
	return read(pipe_fds[0], &c, 1) == 1 ? NULL : arg;
}

/* A thread blocked in read(2): the kernel's own line names the syscall. */
static void test_syscall_of_a_waiting_thread(void **state)
{
	pthread_t th;
	char path[96], buf[256];
	tf_wait_site k = { 0 };
	int rc = -2;
	(void)state;

	assert_int_equal(pipe(pipe_fds), 0);
	assert_int_equal(pthread_create(&th, NULL, block_in_read, NULL), 0);
	while (!reader_tid)
		usleep(1000);
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)reader_tid);
	for (int i = 0; i < 2000 && rc != 0; i++) {
		tf_buf b = TF_BUF_INIT;
		if (tf_file_read(&b, path) == 0) {
			snprintf(buf, sizeof(buf), "%s", b.ptr);
			rc = tf_procfs_parse_syscall(buf, &k);
		}
		tf_buf_free(&b);
		if (rc != 0 || k.nr != SYS_read) {
			rc = -2;
			usleep(1000);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(k.nr, SYS_read);
	assert_int_equal(k.args[0], (uint64_t)pipe_fds[0]);
	assert_int_equal(write(pipe_fds[1], "x", 1), 1);
	pthread_join(th, NULL);
	close(pipe_fds[0]);
	close(pipe_fds[1]);
}

static void test_syscall_names(void **state)
{
	char buf[32];
	(void)state;

	assert_string_equal(tf_procfs_syscall_name(SYS_futex, buf, sizeof(buf)), "futex");
	assert_string_equal(tf_procfs_syscall_name(SYS_epoll_wait, buf, sizeof(buf)), "epoll_wait");
	assert_string_equal(tf_procfs_syscall_name(-1, buf, sizeof(buf)), "blocked");
	assert_string_equal(tf_procfs_syscall_name(9999, buf, sizeof(buf)), "syscall_9999");
}

static void test_maps_lines(void **state)
{
	tf_maps_line l;
	(void)state;

	assert_true(tf_procfs_parse_maps_line(
		"55d0c3a00000-55d0c3a21000 r-xp 00002000 fd:01 1310785                    /usr/bin/cat",
		&l));
	assert_int_equal(l.start, 0x55d0c3a00000);
	assert_int_equal(l.end, 0x55d0c3a21000);
	assert_int_equal(l.pgoff, 0x2000);
	assert_int_equal(l.maj, 0xfd);
	assert_int_equal(l.min, 1);
	assert_int_equal(l.ino, 1310785);
	assert_int_equal(l.prot, PROT_READ | PROT_EXEC);
	assert_int_equal(l.flags, MAP_PRIVATE);
	assert_string_equal(l.name, "/usr/bin/cat");
	/* a file name with spaces is kept whole */
	assert_true(tf_procfs_parse_maps_line("7f00-8f00 r-xs 0 08:02 12 /tmp/a b.so", &l));
	assert_string_equal(l.name, "/tmp/a b.so");
	assert_int_equal(l.flags, MAP_SHARED);
	/* anonymous code: perf's "//anon", its start as the offset */
	assert_true(tf_procfs_parse_maps_line("7f0012340000-7f0012350000 rwxp 00000000 00:00 0 ", &l));
	assert_string_equal(l.name, "//anon");
	assert_int_equal(l.pgoff, 0x7f0012340000);
	assert_int_equal(l.prot, PROT_READ | PROT_WRITE | PROT_EXEC);
	assert_true(tf_procfs_parse_maps_line("7f0012340000-7f0012350000 r-xp 00000000 00:00 0   [anon:v8 code]", &l));
	assert_string_equal(l.name, "//anon");
	assert_true(tf_procfs_parse_maps_line("7ffd8000-7ffda000 r-xp 00000000 00:00 0 [vdso]", &l));
	assert_string_equal(l.name, "[vdso]");
	/* not worth an MMAP2: data, the stack, vsyscall, junk */
	assert_false(tf_procfs_parse_maps_line("55d0c3c00000-55d0c3c01000 rw-p 0001f000 fd:01 1310785 /usr/bin/cat", &l));
	assert_false(tf_procfs_parse_maps_line("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0 [vsyscall]", &l));
	assert_false(tf_procfs_parse_maps_line("not a maps line", &l));
}

/* Our own maps: this program's text is an executable mapping of itself. */
/* mountinfo's lines: optional fields before " - ", escaped paths */
static void test_mountinfo_lines(void **state)
{
	(void)state;
	tf_mount_line m;
	char a[] = "36 35 98:0 /mnt1 /mnt\\040two rw,noatime master:1 shared:7 - ext3 /dev/root rw";
	assert_true(tf_procfs_parse_mountinfo_line(a, &m));
	assert_string_equal(m.dev, "98:0");
	assert_string_equal(m.root, "/mnt1");
	assert_string_equal(m.mount, "/mnt two");
	assert_string_equal(m.type, "ext3");
	char b[] = "30 1 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw";
	assert_true(tf_procfs_parse_mountinfo_line(b, &m));
	assert_string_equal(m.mount, "/sys/fs/cgroup");
	assert_string_equal(m.type, "cgroup2");
	char c[] = "36 35 98:0 /mnt1 /mnt2 rw,noatime";
	assert_false(tf_procfs_parse_mountinfo_line(c, &m));
	char d[] = "36 35 98:0 - ext3";
	assert_false(tf_procfs_parse_mountinfo_line(d, &m));
}

static void test_own_maps(void **state)
{
	char exe[4096];
	tf_buf b = TF_BUF_INIT;
	bool found = false;
	uintptr_t here = (uintptr_t)&test_own_maps;
	(void)state;

	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(tf_file_read(&b, "/proc/self/maps"), 0);
	for (char *line = b.ptr; line && *line;) {
		char *nl = strchr(line, '\n');
		tf_maps_line l;
		if (nl)
			*nl = '\0';
		if (tf_procfs_parse_maps_line(line, &l) && strcmp(l.name, exe) == 0 &&
		    l.start <= here && here < l.end)
			found = true;
		line = nl ? nl + 1 : NULL;
	}
	tf_buf_free(&b);
	assert_true(found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_fields),
		cmocka_unit_test(test_ppid),
		cmocka_unit_test(test_status_field),
		cmocka_unit_test(test_parse_syscall),
		cmocka_unit_test(test_syscall_of_a_waiting_thread),
		cmocka_unit_test(test_syscall_names),
		cmocka_unit_test(test_maps_lines),
		cmocka_unit_test(test_mountinfo_lines),
		cmocka_unit_test(test_own_maps),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
