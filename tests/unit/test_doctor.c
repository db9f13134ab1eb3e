/*
 * test_doctor.c - `testflame doctor`'s engine: debug info of real ELF
 * files (this test binary, and copies stripped or split with objcopy),
 * git checkouts made in temp dirs (branch, shallow, none), CI providers
 * and tokens from a given environment, and the sampling verdict, also
 * under a seccomp filter that refuses perf_event_open as Docker does.
 */
#include "unit.h"
#include "seccomp_helpers.h"

#include "testflame/doctor.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char self[4096];

static void run(const char *fmt, const char *a, const char *b)
{
	char cmd[9000];
	snprintf(cmd, sizeof(cmd), fmt, a, b);
	assert_int_equal(system(cmd), 0);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static const tf_check *find(const tf_doctor_report *r, const char *name, size_t nth)
{
	for (size_t i = 0; i < r->checks.n; i++)
		if (strcmp(r->checks.v[i].name, name) == 0 && nth-- == 0)
			return &r->checks.v[i];
	return NULL;
}

static void test_debuginfo(void **state)
{
	char *dir = unit_tmpdir(), path[4200], dbg[4200];
	tf_debuginfo d;
	(void)state;

	/* this test program: built with -g */
	assert_int_equal(tf_doctor_debuginfo(&d, self), 0);
	assert_true(d.elf && d.symtab && d.dwarf && !d.script);
	assert_int_equal(strlen(d.build_id), 40);
	tf_debuginfo_clear(&d);

	snprintf(path, sizeof(path), "%s/stripped", dir);
	run("objcopy --strip-all '%s' '%s'", self, path);
	assert_int_equal(tf_doctor_debuginfo(&d, path), 0);
	assert_true(d.elf && !d.symtab && !d.dwarf && d.dynsym_only && !d.debug_file);
	tf_debuginfo_clear(&d);

	snprintf(path, sizeof(path), "%s/nodwarf", dir);
	run("objcopy --strip-debug '%s' '%s'", self, path);
	assert_int_equal(tf_doctor_debuginfo(&d, path), 0);
	assert_true(d.symtab && !d.dwarf && !d.debug_file);
	tf_debuginfo_clear(&d);

	/* DWARF split off, found again through .gnu_debuglink */
	snprintf(dbg, sizeof(dbg), "%s/prog.debug", dir);
	snprintf(path, sizeof(path), "%s/prog", dir);
	run("objcopy --only-keep-debug '%s' '%s'", self, dbg);
	run("objcopy --strip-debug '%s' '%s'", self, path);
	{
		char cmd[9000];
		snprintf(cmd, sizeof(cmd), "cd '%s' && objcopy --add-gnu-debuglink=prog.debug prog", dir);
		assert_int_equal(system(cmd), 0);
	}
	assert_int_equal(tf_doctor_debuginfo(&d, path), 0);
	assert_true(!d.dwarf);
	assert_non_null(d.debug_file);
	assert_string_equal(d.debug_file, dbg);
	tf_debuginfo_clear(&d);

	snprintf(path, sizeof(path), "%s/script", dir);
	write_file(path, "#!/bin/sh\necho hi\n");
	assert_int_equal(tf_doctor_debuginfo(&d, path), 0);
	assert_true(d.script && !d.elf);
	tf_debuginfo_clear(&d);

	snprintf(path, sizeof(path), "%s/text", dir);
	write_file(path, "just some text\n");
	assert_int_equal(tf_doctor_debuginfo(&d, path), 0);
	assert_true(!d.elf && !d.script);
	tf_debuginfo_clear(&d);

	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(tf_doctor_debuginfo(&d, path), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "missing"));
	unit_rmtree(dir);
}

static void test_binaries_and_git(void **state)
{
	char *dir = unit_tmpdir(), stripped[4200], git[4200], sub[4300];
	char *bins[] = { self, stripped, NULL };
	char *env[] = { NULL };
	tf_doctor_opts o;
	tf_doctor_report *r;
	const tf_check *c;
	(void)state;

	snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
	run("objcopy --strip-all '%s' '%s'", self, stripped);
	tf_doctor_opts_init(&o);
	o.binaries = bins;
	o.dir = dir;
	o.envp = env;
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_non_null(c = find(r, "debug info", 0));
	assert_int_equal(c->level, TF_CHECK_OK);
	assert_non_null(c = find(r, "debug info", 1));
	assert_int_equal(c->level, TF_CHECK_PROBLEM);
	assert_non_null(strstr(c->summary, "stripped"));
	assert_non_null(c->fix);
	/* /tmp is no checkout */
	assert_non_null(c = find(r, "git repository", 0));
	assert_int_equal(c->level, TF_CHECK_WARN);
	assert_non_null(c->fix);
	assert_non_null(c = find(r, "CI", 0));
	assert_non_null(strstr(c->summary, "local"));
	assert_null(find(r, "CI token", 0));
	tf_doctor_report_free(r);

	/* a checkout, seen from a subdirectory; then made shallow */
	snprintf(git, sizeof(git), "%s/.git", dir);
	snprintf(sub, sizeof(sub), "%s/src/deep", dir);
	run("git init -q -b feature '%s' && mkdir -p '%s'", dir, sub);
	o.binaries = NULL;
	o.dir = sub;
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_non_null(c = find(r, "git repository", 0));
	assert_int_equal(c->level, TF_CHECK_OK);
	assert_non_null(strstr(c->summary, "branch 'feature'"));
	assert_non_null(strstr(c->summary, dir));
	assert_non_null(c = find(r, "debug info", 0));
	assert_non_null(strstr(c->summary, "not checked"));
	tf_doctor_report_free(r);
	snprintf(sub, sizeof(sub), "%s/shallow", git);
	write_file(sub, "0123456789012345678901234567890123456789\n");
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_non_null(c = find(r, "git repository", 0));
	assert_int_equal(c->level, TF_CHECK_WARN);
	assert_non_null(strstr(c->summary, "shallow"));
	assert_non_null(strstr(c->fix, "fetch-depth: 0"));
	tf_doctor_report_free(r);
	unit_rmtree(dir);
}

static void test_ci(void **state)
{
	char *gh[] = { (char *)"GITHUB_ACTIONS=true", NULL };
	char *gh_tok[] = { (char *)"GITHUB_ACTIONS=true", (char *)"GITHUB_TOKEN=x", NULL };
	char *gl[] = { (char *)"GITLAB_CI=true", (char *)"CI=true", NULL };
	char *other[] = { (char *)"CI=true", NULL };
	tf_doctor_opts o;
	tf_doctor_report *r;
	const tf_check *c;
	(void)state;

	tf_doctor_opts_init(&o);
	o.envp = gh;
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_string_equal(find(r, "CI", 0)->summary, "GitHub Actions");
	assert_non_null(c = find(r, "CI token", 0));
	assert_int_equal(c->level, TF_CHECK_WARN);
	assert_non_null(strstr(c->fix, "secrets.GITHUB_TOKEN"));
	tf_doctor_report_free(r);

	o.envp = gh_tok;
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_int_equal(find(r, "CI token", 0)->level, TF_CHECK_OK);
	assert_null(strstr(find(r, "CI token", 0)->summary, "=x"));
	tf_doctor_report_free(r);

	o.envp = gl;
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_string_equal(find(r, "CI", 0)->summary, "GitLab CI");
	assert_non_null(strstr(find(r, "CI token", 0)->fix, "GITLAB_TOKEN"));
	tf_doctor_report_free(r);

	o.envp = other;
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_non_null(strstr(find(r, "CI", 0)->summary, "no integration"));
	tf_doctor_report_free(r);
}

static void test_verdict_matches_probe(void **state)
{
	tf_doctor_opts o;
	tf_doctor_report *r;
	char *env[] = { NULL };
	(void)state;

	tf_doctor_opts_init(&o);
	o.envp = env;
	assert_int_equal(tf_doctor_run(&r, &o), 0);
	assert_int_equal(r->can_sample, !r->caps.perf_errno || !r->caps.ptrace_errno);
	assert_int_equal(find(r, "sampler", 0)->level,
			 r->can_sample ? TF_CHECK_OK : TF_CHECK_PROBLEM);
	for (size_t i = 0; i < r->checks.n; i++) {
		const tf_check *c = &r->checks.v[i];
		assert_non_null(c->summary);
		assert_null(strchr(c->summary, '\n'));
		/* every problem comes with its fix */
		if (c->level == TF_CHECK_PROBLEM)
			assert_non_null(c->fix);
	}
	tf_doctor_report_free(r);
}

/* In a child: refuse perf_event_open (and ptrace too when asked) like
 * Docker's default profile, then ask the doctor. */
static int doctor_under_filter(bool ptrace_too)
{
	tf_doctor_opts o;
	tf_doctor_report *r;
	char *env[] = { NULL };
	const tf_check *c;
	int rc = 0;

	if (!unit_refuse_perf(ptrace_too))
		return 90;
	tf_doctor_opts_init(&o);
	o.envp = env;
	tf_doctor_run(&r, &o);
	c = find(r, "perf_event_open", 0);
	if (r->caps.perf_errno != EPERM || r->caps.seccomp != 2 || !strstr(c->summary, "seccomp") ||
	    !c->fix || !strstr(c->fix, "PERFMON"))
		rc = 1;
	else if (!ptrace_too && (!r->can_sample || r->sampler != TF_SAMPLER_PTRACE ||
				 c->level != TF_CHECK_WARN))
		rc = 2;
	else if (ptrace_too && (r->can_sample || c->level != TF_CHECK_PROBLEM ||
				find(r, "ptrace", 0)->level != TF_CHECK_PROBLEM))
		rc = 3;
	tf_doctor_report_free(r);
	return rc;
}

static void test_under_seccomp(void **state)
{
	(void)state;
	for (int ptrace_too = 0; ptrace_too < 2; ptrace_too++) {
		int st;
		pid_t pid;
		fflush(NULL);
		pid = fork();
		if (pid == 0)
			_exit(doctor_under_filter(ptrace_too));
		assert_int_equal(waitpid(pid, &st, 0), pid);
		assert_true(WIFEXITED(st));
		assert_int_equal(WEXITSTATUS(st), 0);
	}
}

int main(void)
{
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 1;
	self[n] = '\0';
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_debuginfo),
		cmocka_unit_test(test_binaries_and_git),
		cmocka_unit_test(test_ci),
		cmocka_unit_test(test_verdict_matches_probe),
		cmocka_unit_test(test_under_seccomp),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
