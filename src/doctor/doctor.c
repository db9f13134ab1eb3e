/*
 * doctor.c - `testflame doctor`'s checks: can this machine sample (perf,
 * or ptrace where perf is refused), how well (kernel frames, hardware
 * counters, sample rate limits), can the test binaries be symbolized, and
 * is there what the comparison and the CI integration need (a git
 * repository with history, a CI token), and can the Python on PATH have
 * its own frames read (python.h).
 *
 * Each check states what it found and, when something is in the way, the
 * one command or setting that fixes it. The sampling verdicts come from
 * tf_record_probe(), which opens the same events and traces a child the
 * same way the samplers do, so the doctor cannot disagree with a run.
 */
#include "testflame/doctor.h"
#include "testflame/python.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

static const char *const level_names[] = { "ok", "warning", "problem" };

const char *tf_check_level_name(tf_check_level l)
{
	return (unsigned)l < TF_ARRAY_SIZE(level_names) ? level_names[l] : "?";
}

void tf_doctor_opts_init(tf_doctor_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->freq = TF_DEFAULT_FREQ;
}

static void add(tf_doctor_report *r, const char *name, tf_check_level level, const char *fix,
		const char *fmt, ...) TF_PRINTF(5, 6);
static void add(tf_doctor_report *r, const char *name, tf_check_level level, const char *fix,
		const char *fmt, ...)
{
	tf_check c = { name, level, NULL, fix ? tf_xstrdup(fix) : NULL };
	tf_buf b = TF_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	c.summary = tf_buf_detach(&b);
	tf_vec_push(&r->checks, c);
}

static const char *getenv_in(char *const *envp, const char *name)
{
	size_t n = strlen(name);
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* sampling */

static void check_perf(tf_doctor_report *r, const tf_doctor_opts *o)
{
	const tf_record_caps *c = &r->caps;
	char why[512], fix[600];

	tf_record_perf_advice(c, why, sizeof(why), fix, sizeof(fix));
	if (!c->perf_errno && c->perf_kernel)
		add(r, "perf_event_open", TF_CHECK_OK, NULL, "allowed, kernel and user space");
	else if (!c->perf_errno)
		add(r, "perf_event_open", TF_CHECK_WARN,
		    c->container ? "on the host: sudo sysctl kernel.perf_event_paranoid=1, or "
				   "--cap-add PERFMON for the container"
				 : "sudo sysctl kernel.perf_event_paranoid=1",
		    "allowed for user space only: stacks stop at the syscall, no kernel frames");
	else
		add(r, "perf_event_open", c->ptrace_errno ? TF_CHECK_PROBLEM : TF_CHECK_WARN, fix,
		    "refused: %s%s", why,
		    c->ptrace_errno ? "" : " (testflame samples with ptrace instead, at a higher cost)");

	if (c->paranoid == INT_MIN)
		add(r, "perf_event_paranoid", TF_CHECK_PROBLEM,
		    "use a kernel built with CONFIG_PERF_EVENTS=y",
		    "/proc/sys/kernel/perf_event_paranoid is missing: this kernel has no perf events");
	else if (c->paranoid <= 1)
		add(r, "perf_event_paranoid", TF_CHECK_OK, NULL, "%d: user and kernel samples allowed",
		    c->paranoid);
	else if (c->cap_perfmon || c->cap_sys_admin)
		add(r, "perf_event_paranoid", TF_CHECK_OK, NULL, "%d, overridden by %s", c->paranoid,
		    c->cap_perfmon ? "CAP_PERFMON" : "CAP_SYS_ADMIN");
	else if (c->paranoid == 2)
		add(r, "perf_event_paranoid", TF_CHECK_WARN,
		    c->container ? "on the host: sudo sysctl kernel.perf_event_paranoid=1"
				 : "sudo sysctl kernel.perf_event_paranoid=1",
		    "2: user-space samples only for processes without CAP_PERFMON");
	else
		add(r, "perf_event_paranoid", TF_CHECK_WARN,
		    c->container ? "on the host: sudo sysctl kernel.perf_event_paranoid=2, or "
				   "--cap-add PERFMON for the container"
				 : "sudo sysctl kernel.perf_event_paranoid=2 (persist it in "
				   "/etc/sysctl.d/99-perf.conf)",
		    "%d: perf events refused to processes without CAP_PERFMON (Debian and Ubuntu's "
		    "extra level)", c->paranoid);

	if (c->perf_errno)
		add(r, "hardware counters", TF_CHECK_WARN, NULL,
		    "unknown: perf_event_open is refused, cpu-clock (or wall) time is sampled");
	else if (!c->pmu_errno)
		add(r, "hardware counters", TF_CHECK_OK, NULL,
		    "instructions and cycles can be counted (--event auto counts instructions)");
	else
		add(r, "hardware counters", TF_CHECK_WARN,
		    "none needed for cpu-clock; to count instructions, run on bare metal or "
		    "give the VM its PMU (e.g. QEMU/KVM -cpu host, VMware \"virtualize CPU "
		    "performance counters\")",
		    "none (%s; a virtual machine without a virtual PMU?): --event auto samples "
		    "cpu-clock", c->pmu_errno == ENOENT || c->pmu_errno == EOPNOTSUPP
		    ? "the kernel has no instructions event" : strerror(c->pmu_errno));

	if (c->perf_errno || c->max_sample_rate <= 0)
		;
	else if ((unsigned)c->max_sample_rate < o->freq || c->max_sample_rate < 1000)
		add(r, "perf_event_max_sample_rate", TF_CHECK_WARN,
		    "sudo sysctl kernel.perf_event_max_sample_rate=100000",
		    "%d Hz: the kernel throttles sampling above it (it lowers this by itself "
		    "when interrupts run long)", c->max_sample_rate);
	else
		add(r, "perf_event_max_sample_rate", TF_CHECK_OK, NULL, "%d Hz", c->max_sample_rate);
}

static void check_seccomp(tf_doctor_report *r)
{
	const tf_record_caps *c = &r->caps;

	if (c->seccomp <= 0)
		add(r, "seccomp", TF_CHECK_OK, NULL, c->seccomp == 0 ? "no filter" : "unknown");
	else if (c->seccomp == 1)
		add(r, "seccomp", TF_CHECK_PROBLEM, "run testflame outside the strict-mode sandbox",
		    "strict mode: only read, write and exit are allowed");
	else if (c->perf_errno && (c->ptrace_errno || c->vm_readv_errno))
		add(r, "seccomp", c->ptrace_errno ? TF_CHECK_PROBLEM : TF_CHECK_WARN,
		    "run the container with --cap-add PERFMON --cap-add SYS_PTRACE, or "
		    "--security-opt seccomp=unconfined",
		    "a filter is active%s%s", c->perf_errno ? "; perf_event_open may be refused by it" : "",
		    c->ptrace_errno ? "; ptrace may be refused by it" : "");
	else if (c->perf_errno)
		add(r, "seccomp", TF_CHECK_WARN, NULL,
		    "a filter is active (a container's default profile?); see perf_event_open");
	else
		add(r, "seccomp", TF_CHECK_OK, NULL,
		    "a filter is active and allows what testflame needs");
}

static void check_ptrace(tf_doctor_report *r)
{
	const tf_record_caps *c = &r->caps;
	char why[512], fix[600], scope[48] = "";

	tf_record_ptrace_advice(c, why, sizeof(why), fix, sizeof(fix));
	if (c->ptrace_scope >= 0)
		snprintf(scope, sizeof(scope), " (yama ptrace_scope=%d)", c->ptrace_scope);
	if (!c->ptrace_errno)
		add(r, "ptrace", c->vm_readv_errno ? TF_CHECK_WARN : TF_CHECK_OK,
		    c->vm_readv_errno ? "allow process_vm_readv in the seccomp profile for "
					"cheaper stack reads" : NULL,
		    "%s%s", why, scope);
	else
		add(r, "ptrace", c->perf_errno ? TF_CHECK_PROBLEM : TF_CHECK_WARN, fix,
		    "refused: %s%s%s", why, scope,
		    c->perf_errno ? "" : " (only matters where perf is refused)");
}

static void check_sampler(tf_doctor_report *r)
{
	const tf_record_caps *c = &r->caps;

	if (!c->perf_errno) {
		r->can_sample = true;
		r->sampler = TF_SAMPLER_PERF;
		add(r, "sampler", TF_CHECK_OK, NULL, "perf: %s, %s", c->pmu_errno ? "cpu-clock"
		    : "instructions", c->perf_kernel ? "kernel and user stacks" : "user stacks");
	} else if (!c->ptrace_errno) {
		r->can_sample = true;
		r->sampler = TF_SAMPLER_PTRACE;
		add(r, "sampler", TF_CHECK_OK, NULL,
		    "ptrace, as --sampler auto falls back to (perf_event_open is refused): "
		    "cpu-clock and wall time, user stacks");
	} else {
		r->can_sample = false;
		r->sampler = TF_SAMPLER_AUTO;
		add(r, "sampler", TF_CHECK_PROBLEM, "apply one of the fixes above",
		    "none: testflame cannot sample on this machine (perf_event_open and ptrace "
		    "are both refused)");
	}
}

/* How the perf sampler reaches every process of the command (--follow). */
static void check_follow(tf_doctor_report *r)
{
	const tf_record_caps *c = &r->caps;

	if (c->perf_errno)
		return;
	if (c->follow_cgroup)
		add(r, "follow", TF_CHECK_OK, NULL,
		    "by a cgroup of the command's own: every program is sampled by its time, "
		    "however short");
	else
		add(r, "follow", TF_CHECK_WARN,
		    "run testflame as root, or with CAP_PERFMON (or perf_event_paranoid <= 0) "
		    "and a cgroup2 hierarchy it may write",
		    "inherited (%s): a program shorter than a sampling period (4 ms at 249 Hz) "
		    "is rarely sampled; its exact cost is still measured", c->follow_why);
}

/* debug info */

void tf_debuginfo_clear(tf_debuginfo *d)
{
	free(d->debug_file);
	memset(d, 0, sizeof(*d));
}

static bool exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A separate debug file, as gdb and libdwfl look for it. */
static char *find_debug_file(const char *path, const char *build_id, const char *debuglink)
{
	char *cand;

	if (build_id[0] && build_id[1]) {
		cand = tf_xasprintf("/usr/lib/debug/.build-id/%.2s/%s.debug", build_id, build_id + 2);
		if (exists(cand))
			return cand;
		free(cand);
	}
	if (debuglink && *debuglink) {
		char *dir = tf_xstrdup(path), *slash = strrchr(dir, '/');
		char real[PATH_MAX];
		if (slash)
			*slash = '\0';
		else
			strcpy(dir, ".");
		const char *fmts[] = { "%s/%s", "%s/.debug/%s", "/usr/lib/debug%s/%s" };
		for (size_t i = 0; i < TF_ARRAY_SIZE(fmts); i++) {
			const char *d = dir;
			if (i == 2 && realpath(dir, real))
				d = real;
			cand = tf_xasprintf(fmts[i], d, debuglink);
			/* the link names another file, never the binary itself */
			if (exists(cand) && !(i == 0 && strcmp(cand, path) == 0)) {
				free(dir);
				return cand;
			}
			free(cand);
		}
		free(dir);
	}
	return NULL;
}

int tf_doctor_debuginfo(tf_debuginfo *d, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const uint8_t *map;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const char *shstr, *debuglink = NULL;
	int rc = 0;

	memset(d, 0, sizeof(*d));
	if (fd < 0)
		return tf_error_set_errno(TF_ENOTFOUND, "cannot open '%s'", path);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 4) {
		close(fd);
		return tf_error_set(TF_EINVAL, "'%s' is not a program file", path);
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return tf_error_set_errno(TF_ERROR, "cannot read '%s'", path);
	if (map[0] == '#' && map[1] == '!') {
		d->script = true;
		goto done;
	}
	if ((size_t)st.st_size < sizeof(Elf64_Ehdr) || memcmp(map, ELFMAG, SELFMAG) != 0)
		goto done;
	d->elf = true;
	eh = (const void *)map;
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size) {
		rc = tf_error_set(TF_EINVAL, "'%s': not a 64-bit ELF file testflame can read", path);
		goto done;
	}
	sh = (const void *)(map + eh->e_shoff);
	if (sh[eh->e_shstrndx].sh_offset >= (uint64_t)st.st_size)
		goto done;
	shstr = (const char *)map + sh[eh->e_shstrndx].sh_offset;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		const char *name;
		if (sh[i].sh_name >= sh[eh->e_shstrndx].sh_size)
			continue;
		name = shstr + sh[i].sh_name;
		if (strcmp(name, ".symtab") == 0)
			d->symtab = true;
		else if (strcmp(name, ".debug_info") == 0 || strcmp(name, ".zdebug_info") == 0)
			d->dwarf = sh[i].sh_type != SHT_NOBITS;
		else if (strcmp(name, ".gnu_debuglink") == 0 && sh[i].sh_type != SHT_NOBITS &&
			 sh[i].sh_offset + sh[i].sh_size <= (uint64_t)st.st_size &&
			 memchr(map + sh[i].sh_offset, '\0', sh[i].sh_size))
			debuglink = (const char *)map + sh[i].sh_offset;
		else if (sh[i].sh_type == SHT_NOTE && strcmp(name, ".note.gnu.build-id") == 0 &&
			 sh[i].sh_offset + sh[i].sh_size <= (uint64_t)st.st_size &&
			 sh[i].sh_size >= sizeof(Elf64_Nhdr)) {
			const Elf64_Nhdr *nh = (const void *)(map + sh[i].sh_offset);
			size_t off = sizeof(*nh) + ((nh->n_namesz + 3) & ~3u);
			if (nh->n_type == NT_GNU_BUILD_ID && off + nh->n_descsz <= sh[i].sh_size)
				for (unsigned k = 0; k < nh->n_descsz && k < 20; k++)
					snprintf(d->build_id + 2 * k, 3, "%02x",
						 ((const uint8_t *)nh + off)[k]);
		}
	}
	d->dynsym_only = !d->symtab;
	if (!d->dwarf)
		d->debug_file = find_debug_file(path, d->build_id, debuglink);
done:
	munmap((void *)map, (size_t)st.st_size);
	return rc;
}

/* Look a program up in PATH as a shell would. */
static char *resolve_program(const char *name)
{
	const char *path = getenv("PATH");
	if (strchr(name, '/') || !path)
		return tf_xstrdup(name);
	for (const char *p = path;;) {
		const char *e = strchr(p, ':');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char *cand = tf_xasprintf("%.*s/%s", (int)n, n ? p : ".", name);
		if (exists(cand) && access(cand, X_OK) == 0)
			return cand;
		free(cand);
		if (!e)
			break;
		p = e + 1;
	}
	return tf_xstrdup(name);
}

static void check_binary(tf_doctor_report *r, const char *name)
{
	char *path = resolve_program(name);
	tf_debuginfo d;
	int rc = tf_doctor_debuginfo(&d, path);

	if (rc)
		add(r, "debug info", TF_CHECK_PROBLEM, "give the path of a test program",
		    "%s", tf_error_last());
	else if (d.script)
		add(r, "debug info", TF_CHECK_OK, NULL,
		    "'%s' is a script: its interpreter is profiled (for Python, see the "
		    "python check)", path);
	else if (!d.elf)
		add(r, "debug info", TF_CHECK_PROBLEM, "give the path of a test program",
		    "'%s' is not an ELF program", path);
	else if (d.dwarf || d.debug_file)
		add(r, "debug info", TF_CHECK_OK, NULL, "'%s': symbols and DWARF line info%s%s%s%s",
		    path, d.debug_file ? " in " : "", d.debug_file ? d.debug_file : "",
		    d.build_id[0] ? ", build-id " : "", d.build_id);
	else if (d.symtab)
		add(r, "debug info", TF_CHECK_WARN, "build it with -g (CFLAGS += -g) to get file:line "
		    "and inlined frames",
		    "'%s': function names, but no DWARF: no file:line, no inlined frames", path);
	else
		add(r, "debug info", TF_CHECK_PROBLEM,
		    "build with -g and do not strip it (no 'install -s', no 'strip'), or install "
		    "its debug symbols (Debian: the -dbgsym package, from the debian-debug archive)",
		    "'%s' is stripped: only exported functions have names, no file:line", path);
	if (r->checks.v[r->checks.n - 1].level == TF_CHECK_PROBLEM)
		r->program_problems++;
	tf_debuginfo_clear(&d);
	free(path);
}

/*
 * The python3 a suite would run: where its interpreter lives (the
 * executable, or libpython when it is built shared), asked of python3
 * itself, since PATH may hold a wrapper (pyenv's shims, a virtualenv),
 * then probed as the recorder probes it.
 */
static void check_python(tf_doctor_report *r)
{
	static const char script[] =
		"import sys, sysconfig\n"
		"v = sysconfig.get_config_var\n"
		"lib = v('LIBDIR') + '/' + (v('INSTSONAME') or '') if v('Py_ENABLE_SHARED') else ''\n"
		"print(sys.executable)\n"
		"print(lib)\n";
	char *prog = resolve_program("python3");
	char exe[PATH_MAX], lib[PATH_MAX], cmd[PATH_MAX + 64];
	tf_pybin b;
	FILE *f;

	if (!strchr(prog, '/')) {
		add(r, "python", TF_CHECK_OK, NULL, "no python3 on PATH: nothing to check");
		free(prog);
		return;
	}
	snprintf(cmd, sizeof(cmd), "'%s' -c \"$TESTFLAME_DOCTOR_PY\" 2>/dev/null", prog);
	setenv("TESTFLAME_DOCTOR_PY", script, 1);
	exe[0] = lib[0] = '\0';
	f = popen(cmd, "r");
	if (f) {
		if (fgets(exe, sizeof(exe), f) && fgets(lib, sizeof(lib), f)) {
			exe[strcspn(exe, "\n")] = '\0';
			lib[strcspn(lib, "\n")] = '\0';
		}
		pclose(f);
	}
	unsetenv("TESTFLAME_DOCTOR_PY");
	const char *interp = lib[0] && exists(lib) ? lib : exe;
	if (!interp[0]) {
		add(r, "python", TF_CHECK_WARN, "check that python3 runs",
		    "'%s' did not say where its interpreter is", prog);
		free(prog);
		return;
	}
	if (tf_pybin_probe(&b, interp) != 0)
		tf_error_clear();
	if (b.status == TF_PYBIN_OK) {
		char v[32];
		tf_py_version_format(b.version, v, sizeof(v));
		add(r, "python", TF_CHECK_OK, NULL,
		    "python3 is CPython %s ('%s'): Python functions and lines are read from "
		    "its frames", v, interp);
	} else {
		add(r, "python", TF_CHECK_WARN,
		    "use a CPython from 3.7 to 3.13 that keeps its symbols; with 3.12+, "
		    "PYTHONPERFSUPPORT=1 in the suite's environment names Python functions "
		    "(without lines) through perf maps",
		    "python3's interpreter '%s' %s: Python tests show the interpreter's C "
		    "functions", interp, b.why);
	}
	tf_pybin_clear(&b);
	free(prog);
}

/* the checkout and CI */

static void check_git(tf_doctor_report *r, const char *dir)
{
	char cwd[PATH_MAX], *at;
	struct stat st;
	tf_buf head = TF_BUF_INIT;

	if (!realpath(dir ? dir : ".", cwd)) {
		add(r, "git repository", TF_CHECK_PROBLEM, NULL, "cannot open '%s': %s",
		    dir ? dir : ".", strerror(errno));
		return;
	}
	for (at = cwd + strlen(cwd);;) {
		char *dotgit = tf_xasprintf("%.*s/.git", (int)(at - cwd), cwd);
		if (stat(dotgit, &st) == 0) {
			char *gitdir = NULL, *common = NULL;
			if (S_ISDIR(st.st_mode)) {
				gitdir = tf_xstrdup(dotgit);
			} else {
				/* a worktree or submodule: "gitdir: PATH" */
				tf_buf f = TF_BUF_INIT;
				if (tf_file_read(&f, dotgit) == 0 && strncmp(f.ptr, "gitdir: ", 8) == 0) {
					f.ptr[strcspn(f.ptr, "\n")] = '\0';
					gitdir = f.ptr[8] == '/' ? tf_xstrdup(f.ptr + 8)
						 : tf_xasprintf("%.*s/%s", (int)(at - cwd), cwd, f.ptr + 8);
				}
				tf_buf_free(&f);
			}
			if (gitdir) {
				tf_buf cd = TF_BUF_INIT;
				char *p = tf_xasprintf("%s/commondir", gitdir);
				if (tf_file_read(&cd, p) == 0) {
					cd.ptr[strcspn(cd.ptr, "\n")] = '\0';
					common = cd.ptr[0] == '/' ? tf_xstrdup(cd.ptr)
						 : tf_xasprintf("%s/%s", gitdir, cd.ptr);
				}
				free(p);
				tf_buf_free(&cd);
			}
			char *shallow = tf_xasprintf("%s/shallow", common ? common : gitdir ? gitdir : dotgit);
			char *headp = tf_xasprintf("%s/HEAD", gitdir ? gitdir : dotgit);
			char branch[200] = "a detached HEAD";
			if (tf_file_read(&head, headp) == 0 && strncmp(head.ptr, "ref: refs/heads/", 16) == 0) {
				head.ptr[strcspn(head.ptr, "\n")] = '\0';
				snprintf(branch, sizeof(branch), "branch '%s'", head.ptr + 16);
			}
			if (exists(shallow))
				add(r, "git repository", TF_CHECK_WARN,
				    "fetch the history: git fetch --unshallow (GitHub: actions/checkout "
				    "with fetch-depth: 0; GitLab: variables: GIT_DEPTH: 0)",
				    "'%.*s', %s, a shallow clone: baselines of older commits and the "
				    "merge-base may be out of reach", (int)(at - cwd), cwd, branch);
			else
				add(r, "git repository", TF_CHECK_OK, NULL, "'%.*s', %s",
				    (int)(at - cwd), cwd, branch);
			free(shallow);
			free(headp);
			free(gitdir);
			free(common);
			free(dotgit);
			tf_buf_free(&head);
			return;
		}
		free(dotgit);
		while (at > cwd && *--at != '/')
			;
		if (at == cwd)
			break;
	}
	add(r, "git repository", TF_CHECK_WARN,
	    "run testflame inside the project's git checkout (git clone, not a source archive)",
	    "'%s' is not in a git repository: runs carry no commit and baselines cannot be "
	    "stored in or found by git", cwd);
}

static void check_ci(tf_doctor_report *r, char *const *envp)
{
	struct ci {
		const char *var, *name, *token_fix;
		const char *tokens[3];
	};
	static const struct ci cis[] = {
		{ "GITHUB_ACTIONS", "GitHub Actions",
		  "give the step the token: env: GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }} "
		  "(with permissions: pull-requests: write, contents: write)",
		  { "GITHUB_TOKEN", "TESTFLAME_TOKEN", NULL } },
		{ "GITLAB_CI", "GitLab CI",
		  "add a masked CI/CD variable GITLAB_TOKEN holding a project access token "
		  "with the api and write_repository scopes",
		  { "GITLAB_TOKEN", "TESTFLAME_TOKEN", NULL } },
		{ "CIRCLECI", "CircleCI",
		  "add GITHUB_TOKEN (a token that may comment on pull requests) to the project's "
		  "environment variables or a context",
		  { "GITHUB_TOKEN", "TESTFLAME_TOKEN", NULL } },
	};
	const char *v;

	for (size_t i = 0; i < TF_ARRAY_SIZE(cis); i++) {
		const struct ci *c = &cis[i];
		const char *found = NULL;
		if (!(v = getenv_in(envp, c->var)) || strcmp(v, "true") != 0)
			continue;
		add(r, "CI", TF_CHECK_OK, NULL, "%s", c->name);
		for (size_t k = 0; c->tokens[k] && !found; k++)
			if ((v = getenv_in(envp, c->tokens[k])) && *v)
				found = c->tokens[k];
		if (found)
			add(r, "CI token", TF_CHECK_OK, NULL,
			    "%s is set: comments, annotations and baselines can be published", found);
		else
			add(r, "CI token", TF_CHECK_WARN, c->token_fix,
			    "no %s: the report is written but not posted, and baselines are not pushed",
			    c->tokens[0]);
		return;
	}
	if ((v = getenv_in(envp, "CI")) && (strcmp(v, "true") == 0 || strcmp(v, "1") == 0))
		add(r, "CI", TF_CHECK_OK, NULL,
		    "a CI system testflame has no integration for: reports are written, not posted");
	else
		add(r, "CI", TF_CHECK_OK, NULL, "none detected: a local run");
}

int tf_doctor_run(tf_doctor_report **out, const tf_doctor_opts *o)
{
	tf_doctor_report *r = tf_xcalloc(1, sizeof(*r));
	char *const *envp = o->envp ? o->envp : environ;

	tf_record_probe(&r->caps, TF_PROBE_PERF | TF_PROBE_PTRACE | TF_PROBE_FOLLOW);
	check_perf(r, o);
	check_seccomp(r);
	check_ptrace(r);
	check_sampler(r);
	check_follow(r);
	for (char *const *b = o->binaries; b && *b; b++)
		check_binary(r, *b);
	if (!o->binaries || !*o->binaries)
		add(r, "debug info", TF_CHECK_OK, NULL,
		    "not checked: name the test programs (testflame doctor PROGRAM...)");
	check_python(r);
	check_git(r, o->dir);
	check_ci(r, envp);
	*out = r;
	return 0;
}

void tf_doctor_report_free(tf_doctor_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->checks.n; i++) {
		free(r->checks.v[i].summary);
		free(r->checks.v[i].fix);
	}
	tf_vec_free(&r->checks);
	free(r);
}
