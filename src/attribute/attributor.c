/*
 * attributor.c - which test each sample belongs to (see attribute_int.h).
 *
 * Processes: the replay tells us every fork, exec and exit. At each exec a
 * process gets a program name (comm, widened with the main binary's or
 * argv[0]'s file name when comm was cut at 15 characters) and, when first
 * needed, a role: a driver (shells and shell scripts, make, ctest, env,
 * timeout, xargs, common utilities, test runners like pytest), a build
 * tool (compilers, assemblers, linkers, go's compile/link), or a program.
 * The outermost program below the root is a test, and everything it forks
 * or execs belongs to it (test_spawn's helpers stay in test_spawn).
 * Build tools make the "[build]" bucket. Under ctest a test is named by
 * ctest's own name for it.
 *
 * Markers: begin/end lines keep a stack of open tests per thread, per
 * process and for the whole tree; the innermost open one of the narrowest
 * scope wins. A process forked while its forking thread ran a marked test
 * (a test that runs the program it tests, `subprocess.run`) is that
 * test's work, not a test of its own: its exact cost adds to the test's.
 *
 * The inventory does not depend on samples: every process test is decided
 * when its process exits, every marker test when it begins, every thread
 * libtest names after its test when it is named (libtest.c), a Go test
 * binary's own list when it is mapped (golist.c), and what the runners
 * reported (runner.c) is merged in at the end, so a test of a
 * millisecond that no sample saw still has its row. Its cost is exact
 * where the system gives it: the kernel reports each thread's count of the
 * sampled event when the thread ends (TF_REC_THREAD_COST), which sums to
 * the exact cost of a process test; markers may carry the thread's CPU
 * clock; runners time their tests. Samples say where the cost went.
 *
 * What no test claims goes to "[outside tests]" once tests were found (the
 * command's own work, the harness's), or, when none was, to the suite: the
 * command is then the test. A Python test runner whose Python frames were
 * read ran tests whether or not a sample landed in one (frames name them):
 * its run keeps "[outside tests]" either way.
 */
#include "attribute_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const default_drivers[] = {
	/* shells and runners of other programs */
	"sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "busybox", "make", "gmake",
	"cmake", "ctest", "ninja", "meson", "env", "timeout", "xargs", "nice", "nohup",
	"time", "stdbuf", "taskset", "sudo", "su", "runuser", "flock", "chrt", "ionice",
	"setsid", "watch", "parallel", "go", "cargo", "npm", "npx", "yarn", "tox", "nox",
	"pytest", "py.test", "prove", "gtest-parallel", "valgrind", "strace", "ltrace",
	/* utilities a test script calls on the way */
	"cat", "echo", "printf", "test", "[", "true", "false", "sleep", "basename", "dirname",
	"tr", "cut", "sort", "uniq", "head", "tail", "wc", "tee", "touch", "chmod", "date",
	"expr", "seq", "mktemp", "readlink", "realpath", "uname", "id", "hostname", "rm",
	"mkdir", "rmdir", "cp", "mv", "ln", "ls", "find", "grep", "egrep", "fgrep", "sed",
	"awk", "gawk", "mawk", "diff", "cmp", "git", "tar", "gzip", "install", "which",
	"stat", "du", "df", "ps", "kill", "pkill", "pgrep", "sync", "yes", "pwd", "whoami",
	NULL,
};

static const char *const default_build_tools[] = {
	"cc", "gcc", "g++", "c++", "cpp", "clang", "clang++", "cc1", "cc1plus", "cc1obj",
	"lto1", "lto-wrapper", "collect2", "as", "ld", "ld.bfd", "ld.gold", "ld.lld", "lld",
	"ar", "ranlib", "strip", "objcopy", "nm", "compile", "link", "asm", "cgo", "vet",
	"buildid", "rustc", "rustdoc", "rust-lld", "mold", "javac", "protoc", "protoc-c",
	"pkg-config", "moc", "uic", "build-script-build", /* cargo's build scripts */ NULL,
};

static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", "busybox",
				      NULL };
static const char *const interpreters[] = { "python", "python3", "node", "nodejs", "perl",
					    "ruby", "php", "lua", NULL };

enum { ROLE_UNKNOWN, ROLE_DRIVER, ROLE_BUILD, ROLE_PROGRAM };

typedef TF_VEC(tf_strid) strid_stack;
typedef TF_VEC(struct name_count { tf_strid name; uint32_t n; }) name_counts;

struct proc {
	uint32_t pid, ppid;
	tf_strid name;
	tf_strid main_bin;     /* basename of the exec'd binary */
	bool exec_named, main_seen, execd, decided, below_root;
	int role;
	tf_strid test;         /* process-source test, 0 none */
	bool test_root;        /* this process made its test */
	uint64_t start;        /* exec (or fork) time */
	char *argv;            /* NUL-separated, from CMDLINE */
	size_t argv_len;
	char *cwd;
	strid_stack markers;   /* process-scoped markers */
	uint64_t cost;         /* exact event count of its ended threads */
	bool has_cost, cost_lost;
	bool shared;           /* some of its samples went to another test */
	bool exited;
	bool alloc_seen;       /* its program ran the allocation sampler (or its
				* absence is explained: a Go program, a note) */
	bool aside_said;       /* a note said why its next program will not */
	bool marked;           /* it, or a process below it, wrote @pid markers */
	bool own_markers;      /* it wrote @pid markers itself */
	int8_t py_runner;      /* a Python test runner by its arguments: 1 yes,
				* -1 no, 0 not asked since they were read */
	tf_go_tests go_tests;  /* a Go test binary's own list (golist.c) */
	int cxx_bin;           /* a C++ framework's test binary (cxxlist.c), 0 none */
	bool libtest;          /* a cargo test binary: its threads are tests */
	tf_go_tests rust_fns;  /* its crate's functions, as libtest names tests */
	bool rustdoc;          /* rustdoc running doc-tests, a thread each */
	char *exe;             /* the path of its main binary */
	tf_libtest_list ltlist;/* libtest's own list of it, once its first
				* thread is named (lt_tried) */
	bool lt_tried;
	name_counts named;     /* threads named so far, by name */
	uint32_t ptid;         /* the thread that forked it */
	tf_strid fork_marker;  /* the marked test its forking thread ran then */
};

struct test_acc {
	uint64_t samples;
	int64_t value;
	uint64_t first, last, wall;
	int source;
	int origin;           /* the source that created it before any sample */
	uint64_t claimed;     /* its process's samples another source took */
	int exit_status;
	bool has_exit;
	uint32_t processes;
	double count;         /* exact: the event count of its processes */
	bool has_count, count_bad;
	uint64_t mcpu;        /* exact: CPU time between its markers */
	uint64_t mbegin, mend; /* its last begin and end markers' times */
	bool has_mcpu;
	tf_strid parent;      /* the test it ran inside */
	uint32_t nested;
	bool listed;          /* a test that ran (not merely a name) */
	const tf_runner_test *runner; /* what its runner said of it */
	tf_strid via;         /* the runner that named it: its markers' @runner, a
			       * C++ framework's list ("catch2") */
	uint32_t lead;        /* the thread that runs it (offcpu.c), 0 unknown */
	double offcpu, apart; /* its waits, counted and left apart (offcpu.c) */
	double nwaits;        /* how many were counted */
	double pagein;        /* of `offcpu`, the page-ins (offcpu.c) */
};

struct thread {
	uint32_t tid, pid;
	tf_strid test;        /* the test libtest runs in it, 0 none */
	uint64_t test_start;
	bool exited, costed;
	bool switched;        /* a switch record of it was seen */
	uint64_t start;       /* when it began (fork, or first seen) */
	uint64_t on_since;    /* on a CPU since then; 0 off */
	uint64_t oncpu;       /* time on a CPU so far */
	uint64_t sampled_at;  /* its switch-out was sampled then; 0 not */
	bool named;           /* libtest named it after its test */
	uint64_t test_wall;   /* from its naming to its exit */
	uint32_t spawned;     /* threads it created so far */
	uint32_t sibling;     /* it was its creator's n-th (1-based), in a
			       * process that runs no test in that creator */
};

struct thread_markers {
	uint32_t tid;
	strid_stack stack;
};

struct ctest_cache {
	uint32_t pid;
	tf_ctest *c;
};

struct meson_cache {
	uint32_t pid;
	tf_meson *m;
};

/* A process ctest ran whose arguments do not name its test (not read, or
 * not as the test's file has them), a program several of the log's tests
 * run: its test is a placeholder until the end, when ctest's log names it
 * (ctest_hand_out). */
struct ctest_wait {
	uint32_t pid;
	tf_strid placeholder;
	tf_strid fallback;     /* its test if the log names none */
	tf_strid program;
	tf_ctest *c;
	uint64_t end;          /* when it ended; UINT64_MAX still running */
};

struct tf_attributor {
	tf_profile *p;
	const tf_attribute_opts *o;
	unsigned sources;
	tf_frame_rules *frames;
	TF_VEC(struct proc) procs;
	tf_htab proc_index;
	TF_VEC(struct thread) tids;
	tf_htab tid_index;
	uint64_t remainder;              /* the perf events' count no READ reported */
	bool has_remainder;
	bool time_event;                 /* the event counts time: CPU time is its count */
	bool switches;                   /* the recording has context switches */
	bool offcpu;                     /* the recording has off-CPU time */
	TF_VEC(struct thread_markers) tmarkers;
	tf_htab tmarker_index;
	strid_stack gmarkers;
	TF_VEC(struct test_acc) tests;   /* by test strid */
	TF_VEC(struct ctest_cache) ctests;
	TF_VEC(struct meson_cache) mesons;
	TF_VEC(struct ctest_wait) ctest_waits;
	TF_VEC(tf_strid) wait_group;     /* placeholder strid -> its group (ctest_wait) */
	TF_VEC(tf_strid) groups;         /* the groups whose nested tests are indexed */
	uint32_t root_pid;
	bool root_seen;
	tf_strid default_test, build_test, unknown;
	/* marker intervals per (scope key, name): start times of open tests,
	 * and their CPU clock at the start (+1; 0 unknown) */
	TF_VEC(uint64_t) open_key;
	TF_VEC(tf_strid) open_name;
	TF_VEC(uint64_t) open_start;
	TF_VEC(uint64_t) open_cpu;
	bool outside_default;            /* default_test is "[outside tests]" */
	bool py_rules;                   /* frames name Python tests */
	bool py_framed;                  /* a Python test runner's samples had
					  * Python frames: they named its tests */
	/* per-sample shortcuts: samples come in runs from one thread */
	uint32_t last_pid, last_proc;    /* procs index of last_pid, +1; 0 none */
	uint32_t last_tid;
	bool tid_noted;
	bool any_proc_markers;           /* a process-scope marker was seen */
	uint64_t start_realtime, start_mono;
	/* GoogleTest's own names, by the key a TestBody frame gives (see
	 * gtest_key): the runner tests under each key, chained by gnext */
	tf_strtab gkeys;
	TF_VEC(uint32_t) gfirst;         /* key -> first runner test + 1 */
	TF_VEC(uint32_t) gnext;          /* runner test -> next under its key + 1 */
	TF_VEC(uint32_t) gmemo;          /* frame test strid -> its test + 1, or
					  * GMEMO_TIMED when it depends on the time,
					  * GMEMO_UNREPORTED when no report names it */
	/* the framework tests ctest's log names inside each ctest test, as
	 * (parent << 32 | name) pairs of strids, and the parents that have any */
	TF_VEC(uint64_t) children;
	tf_htab child_index;
	TF_VEC(uint8_t) has_children;     /* by parent strid */
	TF_VEC(tf_strid) unnamed;         /* by parent strid: its TF_UNNAMED_TESTS */
	uint64_t helper_samples;          /* frames that named a helper, not a test */
	/* memory (the recording measured it): each test's, the run's notes,
	 * and the programs that ran without the allocation sampler */
	tf_memacc *mem;
	TF_VEC(char *) notes;
	TF_VEC(tf_strid) unsampled;
	size_t nunsampled;
	TF_VEC(tf_strid) go;             /* Go programs: their RSS only */
	size_t ngo;
	bool any_libtest;                 /* a thread runs a libtest test */
	tf_symbolizer *sym;
	tf_cxx_lists *cxx;                /* C++ frameworks' binaries and lists */
	TF_VEC(char *) list_notes;        /* the runners' lists that could not be read */
	TF_VEC(uint32_t) gotop;           /* frame test strid -> its Go top-level
					   * test + 1, UINT32_MAX when none */
};

static bool in_list(const char *const *list, const char *s)
{
	for (; list && *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static bool pid_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct proc *v = ctx;
	return v[idx].pid == *(const uint32_t *)key;
}

static bool tid_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct thread *v = ctx;
	return v[idx].tid == *(const uint32_t *)key;
}

static bool tm_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct thread_markers *v = ctx;
	return v[idx].tid == *(const uint32_t *)key;
}

static struct proc *proc_find(tf_attributor *a, uint32_t pid)
{
	if (a->last_proc && a->last_pid == pid)
		return &a->procs.v[a->last_proc - 1];
	uint32_t i = tf_htab_find(&a->proc_index, tf_hash_u64(pid), pid_eq, a->procs.v, &pid);
	if (i == TF_HTAB_NONE)
		return NULL;
	a->last_pid = pid;
	a->last_proc = i + 1;
	return &a->procs.v[i];
}

static struct proc *proc_get(tf_attributor *a, uint32_t pid)
{
	struct proc *pr = proc_find(a, pid);
	if (pr)
		return pr;
	struct proc z;
	memset(&z, 0, sizeof(z));
	z.pid = pid;
	z.name = a->unknown;
	tf_vec_push(&a->procs, z);
	tf_htab_insert(&a->proc_index, tf_hash_u64(pid), (uint32_t)a->procs.n - 1);
	return &a->procs.v[a->procs.n - 1];
}

static struct thread *thread_get(tf_attributor *a, uint32_t tid)
{
	uint32_t i = tf_htab_find(&a->tid_index, tf_hash_u64(tid), tid_eq, a->tids.v, &tid);
	if (i != TF_HTAB_NONE)
		return &a->tids.v[i];
	struct thread t;
	memset(&t, 0, sizeof(t));
	t.tid = tid;
	tf_vec_push(&a->tids, t);
	tf_htab_insert(&a->tid_index, tf_hash_u64(tid), (uint32_t)a->tids.n - 1);
	return &a->tids.v[a->tids.n - 1];
}

static void note_tid(tf_attributor *a, uint32_t tid)
{
	if (a->tid_noted && a->last_tid == tid)
		return;
	a->last_tid = tid;
	a->tid_noted = true;
	thread_get(a, tid);
}

static struct test_acc *acc(tf_attributor *a, tf_strid test)
{
	while (a->tests.n <= test) {
		struct test_acc z;
		memset(&z, 0, sizeof(z));
		z.source = -1;
		z.origin = SRC_MARKERS;
		tf_vec_push(&a->tests, z);
	}
	return &a->tests.v[test];
}

static void gtest_index(tf_attributor *a);

int tf_attributor_new(tf_attributor **out, tf_profile *p, const tf_attribute_opts *o)
{
	tf_attributor *a = tf_xcalloc(1, sizeof(*a));
	int rc;

	a->p = p;
	a->o = o;
	a->sources = o->sources ? o->sources : TF_SOURCE_ALL;
	a->outside_default = !(o->test_name && *o->test_name);
	a->default_test = tf_profile_intern(p, a->outside_default ? TF_OUTSIDE_TEST : o->test_name);
	a->build_test = tf_profile_intern(p, TF_BUILD_TEST);
	a->unknown = tf_profile_intern(p, "[unknown]");
	if (a->sources & TF_SOURCE_FRAMES) {
		rc = tf_frame_rules_new(&a->frames, p, o);
		if (rc) {
			free(a);
			return rc;
		}
		gtest_index(a);
		a->py_rules = tf_frame_rules_python(a->frames);
		a->cxx = tf_cxx_lists_new();
		tf_frame_rules_set_cxx(a->frames, a->cxx);
	}
	*out = a;
	return 0;
}

void tf_attributor_set_start(tf_attributor *a, uint64_t realtime_ns, uint64_t mono_ns)
{
	a->start_realtime = realtime_ns;
	a->start_mono = mono_ns;
}

void tf_attributor_set_time_event(tf_attributor *a, bool time_event)
{
	a->time_event = time_event;
}

void tf_attributor_set_memory(tf_attributor *a)
{
	if (!a->mem)
		a->mem = tf_memacc_new();
}

void tf_attributor_set_symbolizer(tf_attributor *a, tf_symbolizer *sym)
{
	a->sym = sym;
}

/* A Go closure's frame name no runner report settled (TestX.func1,
 * TestX/func1): its top-level test, which `go test` names. */
static tf_strid go_top(tf_attributor *a, tf_strid t)
{
	char top[256];
	while (a->gotop.n <= t)
		tf_vec_push(&a->gotop, 0);
	if (!a->gotop.v[t])
		a->gotop.v[t] = tf_go_closure_test(tf_profile_str(a->p, t), top, sizeof(top))
					? tf_profile_intern(a->p, top) + 1
					: UINT32_MAX;
	return a->gotop.v[t] == UINT32_MAX ? t : a->gotop.v[t] - 1;
}

/*
 * A thread's time on a CPU, from the moments it went on and off one. The
 * kernel's per-thread counters (inherit_stat) are exact for a process with
 * one thread, but mix up the counts of threads that share a parent when it
 * swaps their contexts (a multi-threaded harness such as ctest, forking a
 * test a moment apart: 2-8 ms counts for 5 ms tests here); the switch
 * records are the scheduler's own account, per thread, whatever it swaps.
 */
#define SAMPLED_SWITCH_NS 1000000ULL /* a sample this close is of the same switch */

static void on_switch(tf_attributor *a, const tf_rec_event *ev)
{
	struct thread *th = thread_get(a, ev->tid);
	a->switches = true;
	if (!th->pid)
		th->pid = ev->pid;
	if (!ev->cswitch.out) {
		if (!th->exited)
			th->on_since = ev->time;
	} else {
		/* off without on: it ran since it began, if this is its first
		 * switch; after its exit (records of a CPU, which see the dead
		 * thread leave it) or a lost record, nothing is known */
		uint64_t since = th->on_since ? th->on_since :
				 th->switched || th->exited ? 0 : th->start;
		uint64_t end = ev->time;
		/* a switch-out sampled (off-CPU time): the kernel takes the
		 * sample, then writes this record; between them it unwound and
		 * copied the thread's stack for the recorder, 7 to 9 us that
		 * the scheduler does not charge the thread for either, and
		 * that moved a test's CPU with the share the cap sampled (3,000
		 * naps: 25 ms more CPU recorded whole than one in 3 to 5) */
		if (th->sampled_at && th->sampled_at >= since && th->sampled_at < end &&
		    end - th->sampled_at < SAMPLED_SWITCH_NS)
			end = th->sampled_at;
		if (since && end > since)
			th->oncpu += end - since;
		th->on_since = 0;
	}
	th->sampled_at = 0;
	th->switched = true;
}

void tf_attributor_switch_sampled(tf_attributor *a, uint32_t tid, uint64_t time)
{
	thread_get(a, tid)->sampled_at = time;
}

#define GMEMO_TIMED UINT32_MAX
#define GMEMO_UNREPORTED (UINT32_MAX - 1)

/* The name a frame gives to GoogleTest's test of suite S and name N:
 * instances dropped ("Prefix/Suite/0" -> Suite, "Name/3" -> Name). With
 * `split`, Suite_Name split at its first underscore, as frames.c does. */
static void gtest_key(const char *suite, const char *name, bool split, tf_buf *out)
{
	const char *s = suite, *e = suite + strlen(suite);
	/* drop trailing /<digits> components, then take the last one */
	for (;;) {
		const char *sl = e > s ? memrchr(s, '/', (size_t)(e - s)) : NULL;
		bool digits = sl && sl + 1 < e;
		for (const char *q = sl ? sl + 1 : e; q < e && digits; q++)
			digits = *q >= '0' && *q <= '9';
		if (!digits)
			break;
		e = sl;
	}
	const char *sl = e > s ? memrchr(s, '/', (size_t)(e - s)) : NULL;
	if (sl)
		s = sl + 1;
	size_t nl = strcspn(name, "/");
	tf_buf_clear(out);
	if (!split) {
		tf_buf_printf(out, "%.*s.%.*s", (int)(e - s), s, (int)nl, name);
		return;
	}
	tf_buf_printf(out, "%.*s_%.*s", (int)(e - s), s, (int)nl, name);
	char *us = strchr(out->ptr + 1, '_');
	if (us)
		*us = '.';
}

static void gtest_index(tf_attributor *a)
{
	const tf_runner_tests *rt = a->o->runner_tests;
	tf_buf key = TF_BUF_INIT;

	tf_strtab_init(&a->gkeys);
	for (size_t i = 0; rt && i < rt->v.n; i++) {
		const tf_runner_test *r = &rt->v.v[i];
		tf_vec_push(&a->gnext, 0);
		const char *slash = strchr(r->name, '/');
		bool go = strcmp(r->runner, "go") == 0 && slash;
		if (!go && (strcmp(r->runner, "gtest") != 0 || !r->suite || !r->test))
			continue;
		uint32_t last = UINT32_MAX;
		for (int split = 0; split < 2; split++) {
			if (go) { /* a Go subtest, under its test's name and a slash */
				tf_buf_clear(&key);
				tf_buf_put(&key, r->name, (size_t)(slash - r->name + 1));
			} else {
				gtest_key(r->suite, r->test, split, &key);
			}
			uint32_t k = tf_strtab_intern(&a->gkeys, key.ptr, key.len);
			if (k == last)
				continue;
			last = k;
			while (a->gfirst.n <= k)
				tf_vec_push(&a->gfirst, 0);
			/* append, keeping the report's order */
			if (!a->gfirst.v[k]) {
				a->gfirst.v[k] = (uint32_t)i + 1;
			} else {
				uint32_t j = a->gfirst.v[k] - 1;
				while (a->gnext.v[j] && a->gnext.v[j] - 1 != i)
					j = a->gnext.v[j] - 1;
				if (j != i)
					a->gnext.v[j] = (uint32_t)i + 1;
			}
		}
	}
	tf_buf_free(&key);
}

static bool same_type(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ')
			a++;
		while (*b == ' ')
			b++;
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++, b++;
	}
}

/*
 * The runner's own name of the test a frame named. GoogleTest's TestBody:
 * the report settles where the underscores split, and which instance of a
 * parameterized or typed test ran (by its type, else by the time the
 * sample was taken, GoogleTest stamping each test's start). Go's
 * TestX/func1, the closure t.Run ran: which of TestX's subtests of
 * `go test -json` was running when the sample was taken (a table-driven
 * test runs one closure for all of them). `*reported`: whether the
 * runner's report named it (else the frame's name is the test's).
 */
static tf_strid gtest_resolve(tf_attributor *a, tf_strid ft, uint64_t time, bool *reported)
{
	const tf_runner_tests *rt = a->o->runner_tests;
	while (a->gmemo.n <= ft)
		tf_vec_push(&a->gmemo, 0);
	*reported = a->gmemo.v[ft] != GMEMO_UNREPORTED;
	if (!*reported)
		return ft;
	if (a->gmemo.v[ft] && a->gmemo.v[ft] != GMEMO_TIMED)
		return a->gmemo.v[ft] - 1;

	const char *name = tf_profile_str(a->p, ft);
	const char *lt = strchr(name, '<'), *slash = strchr(name, '/');
	char type[256] = "";
	size_t base_len = lt ? (size_t)(lt - name) : strlen(name);
	char gokey[256];
	const char *fn = strstr(name, ".func");
	if (slash && !lt) { /* Go: TestX/func1, a closure t.Run ran: one of TestX/'s subtests */
		base_len = (size_t)(slash - name + 1);
	} else if (fn && !lt && fn > name && (size_t)(fn - name) < sizeof(gokey) - 1) {
		/* Go: TestX.func1, the same run by a subtest's own goroutine */
		snprintf(gokey, sizeof(gokey), "%.*s/", (int)(fn - name), name);
		name = gokey;
		base_len = strlen(gokey);
	}
	if (lt)
		snprintf(type, sizeof(type), "%.*s", (int)TF_MIN(strlen(lt + 1) - 1, sizeof(type) - 1), lt + 1);
	uint32_t k = tf_strtab_lookup(&a->gkeys, name, base_len);
	if (k == TF_HTAB_NONE || k >= a->gfirst.n || !a->gfirst.v[k]) {
		a->gmemo.v[ft] = GMEMO_UNREPORTED; /* the frame's name */
		*reported = false;
		return ft;
	}
	uint32_t first = a->gfirst.v[k] - 1, pick = first, n = 0;
	for (uint32_t j = first + 1; j; j = a->gnext.v[j - 1])
		n++;
	if (n > 1 && type[0]) {
		for (uint32_t j = first + 1; j; j = a->gnext.v[j - 1]) {
			const tf_runner_test *r = &rt->v.v[j - 1];
			if (r->type_param && same_type(r->type_param, type)) {
				pick = j - 1;
				break;
			}
		}
	} else if (n > 1) {
		/* the instance that had started last when the sample was taken */
		uint64_t now = a->start_realtime + (time - a->start_mono) + 1000000;
		uint64_t best = 0;
		for (uint32_t j = first + 1; j; j = a->gnext.v[j - 1]) {
			const tf_runner_test *r = &rt->v.v[j - 1];
			if (r->start_realtime_ns && r->start_realtime_ns <= now &&
			    r->start_realtime_ns >= best) {
				best = r->start_realtime_ns;
				pick = j - 1;
			}
		}
	}
	tf_strid t = tf_profile_intern(a->p, rt->v.v[pick].name);
	a->gmemo.v[ft] = n > 1 && !type[0] ? GMEMO_TIMED : t + 1;
	return t;
}

void tf_attributor_free(tf_attributor *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->procs.n; i++) {
		free(a->procs.v[i].argv);
		free(a->procs.v[i].cwd);
		tf_vec_free(&a->procs.v[i].markers);
		tf_go_tests_free(&a->procs.v[i].go_tests);
		tf_go_tests_free(&a->procs.v[i].rust_fns);
		free(a->procs.v[i].exe);
		tf_libtest_list_free(&a->procs.v[i].ltlist);
		tf_vec_free(&a->procs.v[i].named);
	}
	for (size_t i = 0; i < a->tmarkers.n; i++)
		tf_vec_free(&a->tmarkers.v[i].stack);
	for (size_t i = 0; i < a->ctests.n; i++)
		tf_ctest_free(a->ctests.v[i].c);
	tf_vec_free(&a->ctests);
	for (size_t i = 0; i < a->mesons.n; i++)
		tf_meson_free(a->mesons.v[i].m);
	tf_vec_free(&a->mesons);
	tf_vec_free(&a->ctest_waits);
	tf_vec_free(&a->wait_group);
	tf_vec_free(&a->groups);
	tf_vec_free(&a->procs);
	tf_htab_free(&a->proc_index);
	tf_vec_free(&a->tids);
	tf_htab_free(&a->tid_index);
	tf_vec_free(&a->tmarkers);
	tf_htab_free(&a->tmarker_index);
	tf_vec_free(&a->gmarkers);
	tf_vec_free(&a->tests);
	tf_vec_free(&a->open_key);
	tf_vec_free(&a->open_name);
	tf_vec_free(&a->open_start);
	tf_vec_free(&a->open_cpu);
	tf_strtab_free(&a->gkeys);
	tf_vec_free(&a->gfirst);
	tf_vec_free(&a->gnext);
	tf_vec_free(&a->gmemo);
	tf_vec_free(&a->gotop);
	tf_vec_free(&a->children);
	tf_htab_free(&a->child_index);
	tf_vec_free(&a->has_children);
	tf_vec_free(&a->unnamed);
	tf_frame_rules_free(a->frames);
	tf_memacc_free(a->mem);
	for (size_t i = 0; i < a->notes.n; i++)
		free(a->notes.v[i]);
	tf_vec_free(&a->notes);
	tf_vec_free(&a->unsampled);
	tf_vec_free(&a->go);
	tf_cxx_lists_free(a->cxx);
	for (size_t i = 0; i < a->list_notes.n; i++)
		free(a->list_notes.v[i]);
	tf_vec_free(&a->list_notes);
	free(a);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Strip a cross-compiler triplet and a version: x86_64-linux-gnu-gcc-12 -> gcc. */
static void tool_name(const char *name, char *out, size_t n)
{
	const char *s = name;
	const char *gnu = strstr(name, "-linux-gnu-");
	if (gnu)
		s = gnu + 11;
	snprintf(out, n, "%s", s);
	char *dash = strrchr(out, '-');
	if (dash && dash[1] >= '0' && dash[1] <= '9')
		*dash = '\0';
}

static bool argv_has(const struct proc *pr, const char *word)
{
	for (size_t off = 0; pr->argv && off < pr->argv_len;) {
		const char *arg = pr->argv + off;
		if (strcmp(base_name(arg), word) == 0)
			return true;
		off += strlen(arg) + 1;
	}
	return false;
}

/* argv[i], or NULL. */
static const char *argv_at(const struct proc *pr, size_t i)
{
	size_t off = 0;
	for (size_t k = 0; pr->argv && off < pr->argv_len; k++) {
		if (k == i)
			return pr->argv + off;
		off += strlen(pr->argv + off) + 1;
	}
	return NULL;
}

static bool pytest_name(const char *path)
{
	const char *b = base_name(path);
	return strncmp(b, "pytest", 6) == 0 || strncmp(b, "py.test", 7) == 0;
}

/* Whether `pr` is a Python test runner: pytest, or python -m pytest or
 * unittest. pytest's script runs as `python3 /usr/bin/pytest ARGS` (its
 * #! line), the interpreter's options before the script. */
static bool is_py_runner(const struct proc *pr)
{
	const char *a0 = argv_at(pr, 0);
	if (!a0)
		return false;
	if (pytest_name(a0))
		return true;
	for (size_t i = 1; argv_at(pr, i); i++) {
		const char *arg = argv_at(pr, i);
		if (strcmp(arg, "-m") == 0 && argv_at(pr, i + 1))
			return strcmp(argv_at(pr, i + 1), "pytest") == 0 ||
			       strcmp(argv_at(pr, i + 1), "unittest") == 0;
		if (strcmp(arg, "-X") == 0 || strcmp(arg, "-W") == 0)
			i++; /* the option's value */
		else if (arg[0] != '-')
			return strncmp(base_name(a0), "python", 6) == 0 && pytest_name(arg);
		else if (strcmp(arg, "-c") == 0 || strcmp(arg, "-") == 0)
			return false;
	}
	return false;
}

static int classify(tf_attributor *a, struct proc *pr)
{
	const char *name = tf_profile_str(a->p, pr->name);
	const char *bin = pr->main_bin ? tf_profile_str(a->p, pr->main_bin) : "";
	char tool[256];

	if (!pr->execd)
		return ROLE_DRIVER; /* nothing exec'd here: the parent's program */
	tool_name(name, tool, sizeof(tool));
	if (in_list(default_build_tools, tool) || in_list(a->o->build_tools, name))
		return ROLE_BUILD;
	/* a driver's versioned name too (pytest-3), and a script whose
	 * interpreter is a driver: `#!/usr/bin/env bash` runs env under the
	 * script's name (pyenv's shims and their helpers) */
	if (in_list(default_drivers, name) || in_list(default_drivers, tool) ||
	    in_list(a->o->drivers, name) || in_list(shells, bin) || in_list(default_drivers, bin))
		return ROLE_DRIVER;
	if (in_list(interpreters, bin) || in_list(interpreters, name) ||
	    strncmp(bin, "python3", 7) == 0) {
		/* test runners: pytest, python -m X, node --test (whose files
		 * run in processes of their own) */
		if (argv_has(pr, "pytest") || argv_has(pr, "py.test") || argv_has(pr, "-m") ||
		    argv_has(pr, "--test"))
			return ROLE_DRIVER;
		/* a worker that reads its program from its runner (pytest-xdist's
		 * execnet: -c "import sys;exec(eval(sys.stdin.readline()))") runs
		 * the runner's tests, which name themselves */
		for (size_t i = 1; argv_at(pr, i); i++)
			if (strcmp(argv_at(pr, i), "-c") == 0 && argv_at(pr, i + 1) &&
			    strstr(argv_at(pr, i + 1), "sys.stdin"))
				return ROLE_DRIVER;
		/* a script of an installed package (tox's helpers, virtualenv's)
		 * is the tools' work, not a test of the project */
		const char *script = argv_at(pr, 1);
		if (script && (strstr(script, "/site-packages/") || strstr(script, "/dist-packages/")))
			return ROLE_DRIVER;
	}
	return ROLE_PROGRAM;
}

static bool pair_eq(const void *ctx, uint32_t idx, const void *key)
{
	const uint64_t *v = ctx;
	return v[idx] == *(const uint64_t *)key;
}

static void add_child(tf_attributor *a, tf_strid p, tf_strid n)
{
	uint64_t key = (uint64_t)p << 32 | n;
	if (tf_htab_find(&a->child_index, tf_hash_u64(key), pair_eq, a->children.v, &key) !=
	    TF_HTAB_NONE)
		return;
	tf_vec_push(&a->children, key);
	tf_htab_insert(&a->child_index, tf_hash_u64(key), (uint32_t)a->children.n - 1);
	while (a->has_children.n <= p)
		tf_vec_push(&a->has_children, 0);
	a->has_children.v[p] = 1;
}

/* Remember which framework tests ran inside which ctest test. */
static void index_children(tf_attributor *a, const tf_runner_tests *log)
{
	for (size_t i = 0; log && i < log->v.n; i++) {
		const tf_runner_test *r = &log->v.v[i];
		if (r->parent)
			add_child(a, tf_profile_intern(a->p, r->parent),
				  tf_profile_intern(a->p, r->name));
	}
}

/* The tests ctest's log nests in any of its tests that run `program`,
 * remembered as nested in `group` too. */
static void index_group_children(tf_attributor *a, const tf_runner_tests *log,
				 const char *program, tf_strid group)
{
	TF_VEC(uint8_t) runs = { 0 }; /* by strid: a test that runs it */
	for (size_t i = 0; log && i < log->v.n; i++) {
		if (!tf_ctest_runs(&log->v.v[i], program))
			continue;
		tf_strid t = tf_profile_intern(a->p, log->v.v[i].name);
		while (runs.n <= t)
			tf_vec_push(&runs, 0);
		runs.v[t] = 1;
	}
	for (size_t i = 0; log && i < log->v.n; i++) {
		const tf_runner_test *r = &log->v.v[i];
		tf_strid p = r->parent ? tf_profile_intern(a->p, r->parent) : 0;
		if (p && p < runs.n && runs.v[p])
			add_child(a, group, tf_profile_intern(a->p, r->name));
	}
	tf_vec_free(&runs);
}

/*
 * Whether a frame's name is a test of the ctest test `parent` ran: where
 * ctest's log lists the framework's tests of that program, a name not
 * among them is a helper a test tail-called (Unity's and cmocka's runners
 * then call the helper, the test's own frame gone), not a test.
 */
static bool frame_test_plausible(tf_attributor *a, tf_strid parent, tf_strid name)
{
	/* a process whose ctest test is named at the end: any of those its
	 * program may have run */
	if (parent < a->wait_group.n && a->wait_group.v[parent])
		parent = a->wait_group.v[parent];
	if (!parent || parent >= a->has_children.n || !a->has_children.v[parent])
		return true;
	uint64_t key = (uint64_t)parent << 32 | name;
	return tf_htab_find(&a->child_index, tf_hash_u64(key), pair_eq, a->children.v, &key) !=
	       TF_HTAB_NONE;
}

/* The test of the work inside `parent`'s tests that no listed test's
 * frame names: "PARENT [unnamed tests]", nested in it. */
static tf_strid unnamed_test(tf_attributor *a, tf_strid parent)
{
	while (a->unnamed.n <= parent)
		tf_vec_push(&a->unnamed, 0);
	if (!a->unnamed.v[parent]) {
		char *n = tf_xasprintf("%s%s", tf_profile_str(a->p, parent), TF_UNNAMED_TESTS);
		a->unnamed.v[parent] = tf_profile_intern(a->p, n);
		free(n);
	}
	return a->unnamed.v[parent];
}

static tf_ctest *ctest_for(tf_attributor *a, struct proc *ct)
{
	for (size_t i = 0; i < a->ctests.n; i++)
		if (a->ctests.v[i].pid == ct->pid)
			return a->ctests.v[i].c;
	const char *dir = ct->cwd && *ct->cwd ? ct->cwd : ".";
	char *owned = NULL;
	for (size_t i = 1; argv_at(ct, i); i++) {
		const char *arg = argv_at(ct, i);
		if (strcmp(arg, "--test-dir") == 0 && argv_at(ct, i + 1)) {
			const char *d = argv_at(ct, i + 1);
			owned = d[0] == '/' ? tf_xstrdup(d) : tf_xasprintf("%s/%s", dir, d);
		}
	}
	struct ctest_cache cc = { ct->pid, tf_ctest_load(owned ? owned : dir, a->start_realtime) };
	free(owned);
	tf_vec_push(&a->ctests, cc);
	index_children(a, tf_ctest_log(cc.c));
	return cc.c;
}

/* The tests of the build directory `meson test` ran in (its -C DIR). */
static tf_meson *meson_for(tf_attributor *a, struct proc *ms)
{
	for (size_t i = 0; i < a->mesons.n; i++)
		if (a->mesons.v[i].pid == ms->pid)
			return a->mesons.v[i].m;
	const char *dir = ms->cwd && *ms->cwd ? ms->cwd : ".";
	char *owned = NULL;
	for (size_t i = 1; argv_at(ms, i); i++) {
		const char *arg = argv_at(ms, i), *d = NULL;
		if (strcmp(arg, "-C") == 0)
			d = argv_at(ms, i + 1);
		else if (strncmp(arg, "-C", 2) == 0)
			d = arg + 2;
		if (d && *d) {
			free(owned);
			owned = d[0] == '/' ? tf_xstrdup(d) : tf_xasprintf("%s/%s", dir, d);
		}
	}
	struct meson_cache mc = { ms->pid, tf_meson_load(owned ? owned : dir, a->start_realtime) };
	free(owned);
	tf_vec_push(&a->mesons, mc);
	return mc.m;
}

static tf_strid own_test(tf_attributor *a, struct proc *pr);

/* A placeholder test for `pr`, a program ctest `c` ran whose arguments
 * do not name its test: under -j the log's order is the order tests
 * ended, so which of the log's tests it ran is known once every process
 * has ended and every process named by its arguments has taken its name
 * (ctest_hand_out). */
static tf_strid ctest_wait(tf_attributor *a, struct proc *pr, tf_ctest *c, tf_strid program)
{
	struct ctest_wait w = { pr->pid, 0, own_test(a, pr), program, c, UINT64_MAX };
	char *n = tf_xasprintf("\x1f" "ctest process %zu", a->ctest_waits.n);
	w.placeholder = tf_profile_intern(a->p, n);
	free(n);
	tf_vec_push(&a->ctest_waits, w);
	/* meanwhile the tests it nests are those the log nests in any test
	 * of its program (a group per ctest and program): its frames that
	 * name none of them are its unnamed tests' work, as they will be
	 * once it has its name */
	size_t ci = 0;
	while (ci < a->ctests.n && a->ctests.v[ci].c != c)
		ci++;
	n = tf_xasprintf("\x1f" "ctest %zu program %s", ci, tf_profile_str(a->p, program));
	tf_strid group = tf_profile_intern(a->p, n);
	free(n);
	size_t g = 0;
	while (g < a->groups.n && a->groups.v[g] != group)
		g++;
	if (g == a->groups.n) {
		tf_vec_push(&a->groups, group);
		index_group_children(a, tf_ctest_log(c), tf_profile_str(a->p, program), group);
	}
	while (a->wait_group.n <= w.placeholder)
		tf_vec_push(&a->wait_group, 0);
	a->wait_group.v[w.placeholder] = group;
	return w.placeholder;
}

/* The program's test name: its own, or ctest's or meson's name for it. */
static tf_strid program_test(tf_attributor *a, struct proc *pr)
{
	for (struct proc *anc = proc_find(a, pr->ppid); anc; anc = proc_find(a, anc->ppid)) {
		if (anc == proc_find(a, pr->ppid) && strcmp(tf_profile_str(a->p, anc->name), "meson") == 0) {
			/* a test meson ran: its own child, run as its command says */
			const char *n = tf_meson_lookup(meson_for(a, anc), pr->argv, pr->argv_len);
			if (n) {
				tf_strid t = tf_profile_intern(a->p, n);
				if (!acc(a, t)->via)
					acc(a, t)->via = tf_profile_intern(a->p, "meson");
				return t;
			}
			break;
		}
		if (strcmp(tf_profile_str(a->p, anc->name), "ctest") == 0) {
			tf_strid prog = pr->main_bin ? pr->main_bin : pr->name;
			tf_ctest *c = ctest_for(a, anc);
			const char *n = tf_ctest_lookup(c, pr->argv, pr->argv_len, pr->cwd);
			if (n)
				return tf_profile_intern(a->p, n);
			/* arguments not read, or not the file's (a command
			 * ctest found on its own): the one test of the log
			 * that runs its program, else by the log's order */
			size_t ran = tf_ctest_ran(c, tf_profile_str(a->p, prog));
			if (ran == 1 && (n = tf_ctest_next(c, tf_profile_str(a->p, prog))))
				return tf_profile_intern(a->p, n);
			if (ran > 1)
				return ctest_wait(a, pr, c, prog);
			break;
		}
		if (anc->ppid == anc->pid || anc->pid == a->root_pid)
			break;
	}
	return own_test(a, pr);
}

/* The program's test name by itself. */
static tf_strid own_test(tf_attributor *a, struct proc *pr)
{
	/* interpreters: name the test by the script */
	const char *bin = pr->main_bin ? tf_profile_str(a->p, pr->main_bin) : "";
	if ((in_list(interpreters, tf_profile_str(a->p, pr->name)) ||
	     strncmp(bin, "python3", 7) == 0) && argv_at(pr, 1) && argv_at(pr, 1)[0] != '-')
		return tf_profile_intern(a->p, base_name(argv_at(pr, 1)));
	/* rustdoc's doc-tests: the one the thread that started it runs, else
	 * the crate's, as cargo calls them */
	struct proc *parent = proc_find(a, pr->ppid);
	if (parent && parent != pr && parent->rustdoc && pr->ptid) {
		tf_strid t = thread_get(a, pr->ptid)->test;
		if (t)
			return t;
	}
	if (parent && parent != pr && strcmp(tf_profile_str(a->p, parent->name), "rustdoc") == 0) {
		for (size_t i = 1; argv_at(parent, i + 1); i++) {
			if (strcmp(argv_at(parent, i), "--crate-name") == 0) {
				char *n = tf_xasprintf("Doc-tests %s", argv_at(parent, i + 1));
				tf_strid t = tf_profile_intern(a->p, n);
				free(n);
				return t;
			}
		}
	}
	/* a cargo artifact: stable across builds without its hash */
	const char *name = tf_profile_str(a->p, pr->name);
	size_t stem = tf_cargo_stem(name);
	return stem ? tf_profile_intern_len(a->p, name, stem) : pr->name;
}

/* Whether `pr` is meson's own work: a program `meson test` started that
 * no test of its build directory runs (dpkg-architecture, asked about
 * the machine), which belongs to no test. */
static bool meson_own(tf_attributor *a, struct proc *pr)
{
	struct proc *parent = proc_find(a, pr->ppid);
	if (!parent || parent == pr || strcmp(tf_profile_str(a->p, parent->name), "meson") != 0)
		return false;
	tf_meson *m = meson_for(a, parent);
	const char *prog = tf_profile_str(a->p, pr->main_bin ? pr->main_bin : pr->name);
	return m && !tf_meson_lookup(m, pr->argv, pr->argv_len) && !tf_meson_runs(m, prog) &&
	       !tf_meson_runs(m, tf_profile_str(a->p, pr->name));
}

/* Decide a process's test (SPEC §4 rule 3), its parents first. */
static tf_strid proc_test(tf_attributor *a, struct proc *pr, int depth)
{
	struct proc *parent;
	tf_strid inherited = 0;

	if (pr->decided || depth > 256)
		return pr->test;
	parent = pr->pid == a->root_pid ? NULL : proc_find(a, pr->ppid);
	if (parent && parent != pr) {
		/* the parent may move in the array: keep an index */
		size_t idx = (size_t)(pr - a->procs.v);
		inherited = proc_test(a, parent, depth + 1);
		pr = &a->procs.v[idx];
	}
	pr->role = classify(a, pr);
	pr->decided = true;
	if (inherited && inherited != a->build_test) {
		pr->test = inherited;
	} else if (pr->fork_marker && pr->role != ROLE_BUILD) {
		pr->test = pr->fork_marker;
	} else if (pr->role == ROLE_BUILD) {
		pr->test = a->build_test;
	} else if (pr->role == ROLE_PROGRAM && pr->below_root && !meson_own(a, pr)) {
		pr->test = program_test(a, pr);
		pr->test_root = true;
		acc(a, pr->test)->lead = pr->pid;
		acc(a, pr->test)->processes++;
		acc(a, pr->test)->origin = SRC_PROCESSES;
		acc(a, pr->test)->listed = true;
	} else {
		pr->test = inherited;
	}
	return pr->test;
}

/* markers */

static strid_stack *thread_stack(tf_attributor *a, uint32_t tid, bool create)
{
	uint32_t i = tf_htab_find(&a->tmarker_index, tf_hash_u64(tid), tm_eq, a->tmarkers.v, &tid);
	if (i != TF_HTAB_NONE)
		return &a->tmarkers.v[i].stack;
	if (!create)
		return NULL;
	struct thread_markers tm;
	memset(&tm, 0, sizeof(tm));
	tm.tid = tid;
	tf_vec_push(&a->tmarkers, tm);
	tf_htab_insert(&a->tmarker_index, tf_hash_u64(tid), (uint32_t)a->tmarkers.n - 1);
	return &a->tmarkers.v[a->tmarkers.n - 1].stack;
}

static void open_interval(tf_attributor *a, uint64_t key, tf_strid name, uint64_t t,
			  uint64_t cpu1)
{
	tf_vec_push(&a->open_key, key);
	tf_vec_push(&a->open_name, name);
	tf_vec_push(&a->open_start, t);
	tf_vec_push(&a->open_cpu, cpu1);
	acc(a, name)->mbegin = t;
}

/* `cpu1`: the CPU clock at the end, +1 (0 unknown). */
static void close_interval(tf_attributor *a, uint64_t key, tf_strid name, uint64_t t,
			   uint64_t cpu1)
{
	for (size_t i = a->open_key.n; i-- > 0;) {
		if (a->open_key.v[i] == key && a->open_name.v[i] == name) {
			struct test_acc *ta = acc(a, name);
			size_t last = a->open_key.n - 1;
			ta->mend = t;
			if (t > a->open_start.v[i])
				ta->wall += t - a->open_start.v[i];
			if (cpu1 && a->open_cpu.v[i] && cpu1 >= a->open_cpu.v[i]) {
				ta->mcpu += cpu1 - a->open_cpu.v[i];
				ta->has_mcpu = true;
			}
			a->open_key.v[i] = a->open_key.v[last];
			a->open_name.v[i] = a->open_name.v[last];
			a->open_start.v[i] = a->open_start.v[last];
			a->open_cpu.v[i] = a->open_cpu.v[last];
			a->open_key.n--;
			a->open_name.n--;
			a->open_start.n--;
			a->open_cpu.n--;
			if (a->mem)
				tf_memacc_test_end(a->mem, name);
			return;
		}
	}
}

static void on_marker(tf_attributor *a, const tf_rec_event *ev)
{
	strid_stack *st;
	uint64_t key;

	if (!(a->sources & TF_SOURCE_MARKERS))
		return;
	switch (ev->marker.scope) {
	case TF_MARKER_THREAD:
		st = thread_stack(a, ev->tid, true);
		key = ((uint64_t)2 << 32) | ev->tid;
		break;
	case TF_MARKER_PROCESS:
		st = &proc_get(a, ev->pid)->markers;
		proc_get(a, ev->pid)->marked = true;
		proc_get(a, ev->pid)->own_markers = true;
		a->any_proc_markers = true;
		key = ((uint64_t)1 << 32) | ev->pid;
		break;
	default:
		st = &a->gmarkers;
		key = 0;
		break;
	}
	uint64_t cpu1 = ev->marker.has_cpu ? ev->marker.cpu + 1 : 0;
	if (ev->marker.begin) {
		tf_strid name = tf_profile_intern(a->p, ev->marker.name);
		tf_vec_push(st, name);
		open_interval(a, key, name, ev->time, cpu1);
		acc(a, name)->listed = true;
		/* the thread that runs it: a process's marker's is its main
		 * thread (Python's runners run their tests there) */
		acc(a, name)->lead = ev->tid ? ev->tid : ev->pid;
		if (ev->marker.runner)
			acc(a, name)->via = tf_profile_intern(a->p, ev->marker.runner);
		return;
	}
	if (!st->n)
		return;
	/* "end NAME" closes NAME and whatever was left open inside it */
	tf_strid name = ev->marker.name[0] ? tf_profile_intern(a->p, ev->marker.name)
					   : st->v[st->n - 1];
	for (size_t i = st->n; i-- > 0;) {
		if (st->v[i] == name) {
			while (st->n > i) {
				close_interval(a, key, st->v[st->n - 1], ev->time, cpu1);
				st->n--;
			}
			return;
		}
	}
}

static tf_strid marker_test(tf_attributor *a, const tf_rec_event *ev)
{
	strid_stack *st = a->tmarkers.n ? thread_stack(a, ev->tid, false) : NULL;
	if (st && st->n)
		return st->v[st->n - 1];
	/* @pid markers cover the process and everything below it */
	struct proc *pr = a->any_proc_markers ? proc_find(a, ev->pid) : NULL;
	for (int depth = 0; pr && depth < 64; depth++) {
		if (pr->markers.n)
			return pr->markers.v[pr->markers.n - 1];
		if (pr->pid == a->root_pid || pr->ppid == pr->pid)
			break;
		pr = proc_find(a, pr->ppid);
	}
	if (a->gmarkers.n)
		return a->gmarkers.v[a->gmarkers.n - 1];
	return 0;
}

/* side-band */

/* A name the kernel gave the exec that says nothing of the program: the
 * file's base name is "exe" when a program runs itself again through
 * /proc/self/exe, and a number for fexecve (/dev/fd/N). */
static bool comm_says_nothing(const char *comm)
{
	if (strcmp(comm, "exe") == 0)
		return true;
	if (!*comm)
		return false;
	for (const char *c = comm; *c; c++)
		if (*c < '0' || *c > '9')
			return false;
	return true;
}

/* Whether `name` (argv[0]'s or the main binary's base name) names the
 * process better than its comm: the comm cut at 15 characters from it, or
 * a comm that says nothing where `name` says something. */
static bool better_name(const char *comm, const char *name)
{
	size_t cl = strlen(comm);
	if (cl >= 15 && strlen(name) > cl && strncmp(name, comm, cl) == 0)
		return true;
	return comm_says_nothing(comm) && *name && !comm_says_nothing(name);
}

/* Whether what the process runs is still unknown: an exec whose main
 * binary's mapping is not yet seen. That mapping may replace its name (a
 * comm cut at 15 characters or saying nothing) and says whether a script's
 * interpreter is a shell, which makes the script a driver, not a test: a
 * switch-out recorded between the exec and the mapping (off-CPU time)
 * decided `sh -c ./suite.sh`'s suite.sh as the test of every program it
 * ran, in 9 of 15 recordings. */
static bool name_pending(const struct proc *pr)
{
	return pr->exec_named && !pr->main_seen;
}

/* The programs that ran without the allocation sampler (static, setuid)
 * and the Go programs: a few names for the notes, and how many. */
static void note_program(void *names_, size_t *count, tf_strid name)
{
	TF_VEC(tf_strid) *names = names_;
	for (size_t i = 0; i < names->n; i++)
		if (names->v[i] == name)
			return;
	(*count)++;
	if (names->n < 5)
		tf_vec_push(names, name);
}

/* A process image is over (its process exec'd another program, or
 * exited): its sampled blocks go, and a test program that did not run
 * the allocation sampler is noted. */
static void image_done(tf_attributor *a, struct proc *pr)
{
	if (!a->mem)
		return;
	tf_memacc_exit(a->mem, pr->pid);
	if (pr->execd && !pr->alloc_seen && pr->below_root && classify(a, pr) == ROLE_PROGRAM)
		note_program(&a->unsampled, &a->nunsampled, pr->name);
}

static void on_exec_name(tf_attributor *a, struct proc *pr, const char *comm, uint64_t t)
{
	image_done(a, pr);
	pr->alloc_seen = pr->aside_said;
	pr->aside_said = false;
	pr->name = tf_profile_intern(a->p, comm);
	pr->exec_named = true;
	pr->execd = true;
	pr->main_seen = false;
	pr->main_bin = 0;
	pr->decided = false;
	pr->test_root = false;
	pr->start = t;
	pr->libtest = false;
	pr->rustdoc = false;
	pr->lt_tried = false;
	pr->cxx_bin = 0;
	tf_go_tests_free(&pr->rust_fns);
	tf_libtest_list_free(&pr->ltlist);
	pr->named.n = 0;
}

/* A note of a list that could not be read (its text given), once. */
static void list_note(tf_attributor *a, char *note)
{
	for (size_t i = 0; i < a->list_notes.n; i++)
		if (strcmp(a->list_notes.v[i], note) == 0) {
			free(note);
			return;
		}
	tf_vec_push(&a->list_notes, note);
}

/* How many threads of `pr` were named `comm` before this one. */
static uint32_t named_before(tf_attributor *a, struct proc *pr, const char *comm)
{
	tf_strid id = tf_profile_intern(a->p, comm);
	for (size_t i = 0; i < pr->named.n; i++)
		if (pr->named.v[i].name == id)
			return pr->named.v[i].n++;
	struct name_count nc = { id, 1 };
	tf_vec_push(&pr->named, nc);
	return 0;
}

/*
 * A thread of a cargo test binary, or of rustdoc running doc-tests, named
 * after its test (libtest.c), by the binary's own list: libtest's runner
 * starts a thread per test it runs, in the list's order, so the n-th
 * thread its creator started is the n-th test that runs, when that test's
 * name begins with the thread's (threads name themselves once running, in
 * any order: tests::jaro_winkler_b's may be named before _a's); else the
 * k-th thread of a name is the k-th test beginning with it. A name no test
 * of the list has is a test's own thread, which stays in the test that
 * started it. Where
 * there is no list, a name cut at 15 characters is completed from the
 * crate's functions (rustdoc's doc-tests are then their crate's).
 */
static void on_libtest_thread(tf_attributor *a, struct proc *pr, const tf_rec_event *ev)
{
	if (!pr->lt_tried) {
		pr->lt_tried = true;
		int rc = -1;
		if (pr->rustdoc)
			rc = tf_libtest_list_rustdoc(&pr->ltlist, pr->argv, pr->argv_len, pr->cwd);
		else if (pr->exe)
			rc = tf_libtest_list_binary(&pr->ltlist, pr->exe, pr->argv, pr->argv_len, pr->cwd);
		if (rc)
			list_note(a, tf_xasprintf(
				"%s: its list of tests could not be read (%s): %s",
				pr->rustdoc ? "rustdoc's doc-tests" : pr->exe ? pr->exe : "a cargo test binary",
				pr->exe || pr->rustdoc ? tf_error_last() : "no binary",
				pr->rustdoc ? "they are counted as their crate's doc-tests"
					    : "its tests are named from their threads' names, cut at 15 characters"));
		tf_error_clear();
	}
	char *name = NULL;
	uint32_t sibling = thread_get(a, ev->tid)->sibling;
	if (pr->ltlist.listed) {
		uint32_t k = named_before(a, pr, ev->comm.comm);
		const char *n = sibling ? tf_libtest_list_nth(&pr->ltlist, ev->comm.comm, sibling - 1)
					: NULL;
		if (!n)
			n = tf_libtest_list_name(&pr->ltlist, ev->comm.comm, k);
		if (!n)
			return;
		name = tf_xstrdup(n);
	} else if (pr->rustdoc) {
		return;
	} else {
		name = tf_libtest_name(&pr->rust_fns, ev->comm.comm);
	}
	struct thread *th = thread_get(a, ev->tid);
	th->test = tf_profile_intern(a->p, name);
	th->test_start = ev->time;
	th->named = true;
	free(name);
	struct test_acc *ta = acc(a, th->test);
	if (!ta->listed)
		ta->origin = SRC_MARKERS;
	ta->listed = true;
	a->any_libtest = true;
}

static void on_memory(tf_attributor *a, const tf_rec_event *ev);

void tf_attributor_event(tf_attributor *a, const tf_rec_event *ev)
{
	struct proc *pr;

	switch (ev->type) {
	case TF_REC_COMM:
		note_tid(a, ev->tid);
		{
			struct thread *th = thread_get(a, ev->tid);
			if (!th->start)
				th->start = ev->time;
			if (!th->pid)
				th->pid = ev->pid;
		}
		pr = proc_get(a, ev->pid);
		if (!a->root_seen) {
			/* the first exec in the recording is the command itself */
			a->root_seen = true;
			a->root_pid = ev->pid;
		}
		if (ev->comm.exec)
			on_exec_name(a, pr, ev->comm.comm, ev->time);
		else if (!pr->exec_named && ev->pid == ev->tid)
			pr->name = tf_profile_intern(a->p, ev->comm.comm);
		else if (ev->pid != ev->tid && (pr->libtest || pr->rustdoc) &&
			 (a->sources & TF_SOURCE_MARKERS))
			on_libtest_thread(a, pr, ev);
		break;
	case TF_REC_FORK:
		note_tid(a, ev->tid);
		{
			struct thread *th = thread_get(a, ev->tid);
			th->pid = ev->pid;
			th->start = ev->time;
			/* a thread a libtest test started is that test's; one
			 * libtest's runner started is the next of its list */
			if (ev->pid == ev->fork.ppid && ev->fork.ptid != ev->tid) {
				struct thread *creator = thread_get(a, ev->fork.ptid);
				tf_strid t = creator->test;
				uint32_t n = creator->named ? 0 : ++creator->spawned;
				th = thread_get(a, ev->tid);
				if (a->any_libtest)
					th->test = t;
				th->sibling = n;
			}
		}
		if (ev->pid != ev->fork.ppid) {
			struct proc *parent = proc_find(a, ev->fork.ppid);
			size_t pidx = parent ? (size_t)(parent - a->procs.v) : 0;
			pr = proc_get(a, ev->pid);
			parent = parent ? &a->procs.v[pidx] : NULL;
			pr->ppid = ev->fork.ppid;
			pr->ptid = ev->fork.ptid;
			pr->name = parent ? parent->name : a->unknown;
			pr->main_bin = parent ? parent->main_bin : 0;
			pr->below_root = parent != NULL;
			pr->execd = false;
			pr->decided = false;
			pr->start = ev->time;
			pr->fork_marker = 0;
			if (parent) {
				tf_strid mt = tf_attributor_marked_now(a, ev->fork.ppid,
								       ev->fork.ptid);
				/* a process the test's process started started it */
				pr->fork_marker = mt ? mt : parent->fork_marker;
			}
		}
		break;
	case TF_REC_EXIT: {
		struct thread *th = thread_get(a, ev->tid);
		th->pid = ev->pid;
		th->exited = true;
		/* it ran until it ended: the exit's last moments are its own */
		if (th->on_since && ev->time > th->on_since)
			th->oncpu += ev->time - th->on_since;
		th->on_since = 0;
		if (th->named && ev->time > th->test_start)
			th->test_wall = ev->time - th->test_start;
	}
		if (ev->pid == ev->tid) {
			pr = proc_find(a, ev->pid);
			/* a process test exists whether or not a sample saw it */
			if (pr && (a->sources & TF_SOURCE_PROCESSES) && !pr->exited) {
				size_t idx = (size_t)(pr - a->procs.v);
				proc_test(a, pr, 0);
				pr = &a->procs.v[idx];
			}
			if (pr && !pr->exited)
				image_done(a, pr);
			if (pr)
				pr->exited = true;
			for (size_t i = 0; pr && pr->test_root && i < a->ctest_waits.n; i++)
				if (a->ctest_waits.v[i].placeholder == pr->test)
					a->ctest_waits.v[i].end = ev->time;
			if (pr && pr->test_root && pr->test) {
				struct test_acc *ta = acc(a, pr->test);
				if (ev->time > pr->start)
					ta->wall += ev->time - pr->start;
			}
		}
		break;
	case TF_REC_SWITCH:
		on_switch(a, ev);
		break;
	case TF_REC_THREAD_COST:
		if (ev->thread_cost.remainder) {
			a->remainder += ev->thread_cost.count;
			a->has_remainder = true;
			break;
		}
		thread_get(a, ev->tid)->costed = true;
		pr = proc_get(a, ev->pid);
		pr->cost += ev->thread_cost.count;
		pr->has_cost = true;
		break;
	case TF_REC_PROC_EXIT:
		pr = proc_find(a, ev->pid);
		if (pr && pr->test_root && pr->test) {
			struct test_acc *ta = acc(a, pr->test);
			int st = ev->proc_exit.wait_status;
			int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			if (!ta->has_exit || code)
				ta->exit_status = code;
			ta->has_exit = true;
		}
		break;
	case TF_REC_CMDLINE:
		pr = proc_get(a, ev->pid);
		free(pr->argv);
		free(pr->cwd);
		pr->argv = tf_xmalloc(ev->cmdline.len + 1);
		memcpy(pr->argv, ev->cmdline.argv, ev->cmdline.len);
		pr->argv[ev->cmdline.len] = '\0';
		pr->argv_len = ev->cmdline.len;
		if (ev->cmdline.len && pr->argv[ev->cmdline.len - 1] != '\0')
			pr->argv_len++; /* the kernel cut it: terminate the last arg */
		pr->cwd = tf_xstrdup(ev->cmdline.cwd);
		pr->py_runner = 0;
		{
			/* widen a comm cut at 15 characters with argv[0]'s name,
			 * or replace an exec's that says nothing */
			const char *comm = tf_profile_str(a->p, pr->name);
			const char *a0 = base_name(pr->argv);
			if (better_name(comm, a0) && (pr->exec_named || !comm_says_nothing(comm)))
				pr->name = tf_profile_intern(a->p, a0);
		}
		break;
	case TF_REC_MMAP:
		pr = proc_get(a, ev->pid);
		if (pr->exec_named && !pr->main_seen && ev->mmap.filename[0] == '/' &&
		    (ev->mmap.prot & 4 /* PROT_EXEC */)) {
			const char *bn = base_name(ev->mmap.filename);
			pr->main_bin = tf_profile_intern(a->p, bn);
			if (better_name(tf_profile_str(a->p, pr->name), bn))
				pr->name = pr->main_bin;
			pr->main_seen = true;
			/* a Go test binary: its list, while it is mapped; a
			 * cargo one: its crate's functions */
			tf_go_tests_free(&pr->go_tests);
			if (a->sources & TF_SOURCE_FRAMES)
				tf_go_tests_read(&pr->go_tests, a->sym, ev->pid, ev->mmap.start, bn);
			free(pr->exe);
			pr->exe = tf_xstrdup(ev->mmap.filename);
			if (a->sources & TF_SOURCE_MARKERS) {
				pr->libtest = tf_libtest_read(&pr->rust_fns, a->sym, ev->pid,
							      ev->mmap.start, bn);
				pr->rustdoc = strcmp(bn, "rustdoc") == 0 && argv_has(pr, "--test");
			}
			/* a Catch2, doctest or Boost.Test binary: its list */
			if (a->cxx && !pr->go_tests.n && !pr->libtest)
				pr->cxx_bin = tf_cxx_detect(a->cxx, a->sym, ev->pid, ev->mmap.start,
							    ev->mmap.filename, pr->cwd);
		}
		break;
	case TF_REC_MARKER:
		on_marker(a, ev);
		break;
	case TF_REC_ALLOC_COUNT:
	case TF_REC_ALLOC_PROC:
	case TF_REC_NOTE:
	case TF_REC_RSS:
		on_memory(a, ev);
		break;
	default:
		break;
	}
}

tf_strid tf_attributor_process(tf_attributor *a, uint32_t pid)
{
	struct proc *pr = proc_find(a, pid);
	return pr ? pr->name : a->unknown;
}

/*
 * Whether a sample of `pr` is a Python test runner's (pytest, python -m
 * pytest or unittest, by its arguments) with Python frames on its stack:
 * the frames name that runner's tests, so the run has tests even when no
 * sample landed in one (a suite of a few milliseconds), and what no frame
 * named is outside them.
 */
static bool py_runner_framed(tf_attributor *a, struct proc *pr, const uint32_t *locs, size_t n)
{
	const tf_profile *p = a->p;

	if (!pr->py_runner)
		pr->py_runner = is_py_runner(pr) ? 1 : -1;
	if (pr->py_runner < 0)
		return false;
	for (size_t k = 0; k < n; k++) {
		const tf_location *l = &p->locations.v[locs[k]];
		for (uint32_t j = 0; j < l->nlines; j++)
			if (tf_pyframes_is_python(p, p->lines.v[l->lines_off + j].function))
				return true;
	}
	return false;
}

/*
 * The test of an event of thread ev->tid of process ev->pid at ev->time,
 * by SPEC §4's sources in order; frames only when `locs` is given (a
 * sample's stack). `*src` gets the SRC_* that decided. A CPU sample
 * (`cpu`) also marks its process as shared when another source took it.
 */
static tf_strid decide(tf_attributor *a, const tf_rec_event *ev, const uint32_t *locs, size_t n,
		       bool cpu, int *src_out)
{
	tf_strid test = 0;
	int src = SRC_COMMAND;
	size_t own = n;

	note_tid(a, ev->tid);
	/* build steps stay apart whatever else is said about them */
	struct proc *pr = proc_find(a, ev->pid);
	tf_strid ptest = 0;
	if (pr && (a->sources & TF_SOURCE_PROCESSES)) {
		/* an exec whose binary is not yet known (it may correct the
		 * name, or make it a driver) is not decided: its first
		 * moments count for its parent's test */
		struct proc *named = pr;
		if (name_pending(pr))
			named = pr->pid == a->root_pid ? NULL : proc_find(a, pr->ppid);
		ptest = named ? proc_test(a, named, 0) : 0;
		if (ptest == a->build_test) {
			test = ptest;
			src = SRC_BUILD;
		}
	}
	if (!test && (a->sources & TF_SOURCE_MARKERS)) {
		test = marker_test(a, ev);
		if (!test && a->any_libtest)
			test = thread_get(a, ev->tid)->test;
		src = SRC_MARKERS;
	}
	/* a runner that marks its tests itself (testflame's Python loader
	 * and plugin) has said where they are: between them its frames name
	 * its own machinery, not a test (unittest's _addSkip) */
	if (!test && a->frames && locs && !(pr && pr->own_markers)) {
		tf_frame_rules_set_cwd(a->frames, pr ? pr->cwd : NULL);
		/* a thread waits with its own frames only, and runs a test
		 * when they name it (frames.c: a Go thread in its scheduler
		 * runs no goroutine) */
		bool waiting = !cpu || ev->sample.offcpu;
		if (waiting)
			own = tf_frame_rules_own(a->frames, locs, n);
		test = tf_frame_rules_match(a->frames, locs, own);
		if (test && !waiting)
			own = tf_frame_rules_own(a->frames, locs, n);
		src = SRC_FRAMES;
		if (cpu && !a->py_framed && a->py_rules && pr && py_runner_framed(a, pr, locs, n))
			a->py_framed = true;
		tf_strid framed = test;
		bool reported = false;
		if (test && a->gfirst.n)
			test = gtest_resolve(a, test, ev->time, &reported);
		if (test && test == framed)
			test = go_top(a, test);
		/* a frame rule's anchor is on the stack, its callee no test the
		 * runners listed (GoogleTest's report, ctest's log of the
		 * program's output): the sample is inside one of the program's
		 * tests (a tail call hid it), never its own work outside them */
		if (test && ptest && !reported && !frame_test_plausible(a, ptest, test)) {
			if (cpu)
				a->helper_samples++;
			test = unnamed_test(a, ptest);
		}
	}
	if (!test && ptest) {
		test = ptest;
		src = SRC_PROCESSES;
	}
	if (!test) {
		test = a->default_test;
		src = a->outside_default ? SRC_OUTSIDE : SRC_COMMAND;
	}
	if (ptest && test != ptest && ptest != a->build_test) {
		if (cpu)
			acc(a, ptest)->claimed++;
		if (!acc(a, test)->parent && test != a->default_test)
			acc(a, test)->parent = ptest;
	}
	if (cpu && pr && test != (ptest ? ptest : a->default_test) && !pr->shared) {
		size_t idx = (size_t)(pr - a->procs.v);
		a->procs.v[idx].shared = true;
	}
	struct test_acc *ta = acc(a, test);
	ta->listed = true;
	/* the stack names the test: this thread runs it (unless the frames
	 * that name it are another goroutine's); the command's own work is
	 * its main thread's */
	if (src == SRC_FRAMES && own == n)
		ta->lead = ev->tid;
	else if (!ta->lead && test == a->default_test)
		ta->lead = a->root_pid;
	if (ta->source < 0 || src < ta->source)
		ta->source = src;
	*src_out = src;
	return test;
}

tf_strid tf_attributor_sample(tf_attributor *a, const tf_rec_event *ev,
			      const uint32_t *locs, size_t n, int64_t value, int *source)
{
	tf_strid test = decide(a, ev, locs, n, true, source);
	struct test_acc *ta = acc(a, test);
	if (!ta->samples)
		ta->first = ev->time;
	ta->samples++;
	ta->value += value;
	ta->last = ev->time;
	return test;
}

tf_strid tf_attributor_test(tf_attributor *a, const tf_rec_event *ev, const uint32_t *locs,
			    size_t n, int *source)
{
	return decide(a, ev, locs, n, false, source);
}

uint64_t tf_attributor_marked_end(tf_attributor *a, tf_strid test, uint64_t since)
{
	const struct test_acc *ta = test < a->tests.n ? &a->tests.v[test] : NULL;
	return ta && ta->mend > ta->mbegin && ta->mbegin <= since ? ta->mend : 0;
}

tf_strid tf_attributor_marked_now(tf_attributor *a, uint32_t pid, uint32_t tid)
{
	if (!(a->sources & TF_SOURCE_MARKERS))
		return 0;
	tf_rec_event at;
	memset(&at, 0, sizeof(at));
	at.pid = pid;
	at.tid = tid;
	return marker_test(a, &at);
}

tf_strid tf_attributor_fork_test(tf_attributor *a, uint32_t pid)
{
	const struct proc *pr = proc_find(a, pid);
	return pr ? pr->fork_marker : 0;
}

tf_strid tf_attributor_fallback(const tf_attributor *a)
{
	return a->default_test;
}

uint32_t tf_attributor_lead(tf_attributor *a, tf_strid test)
{
	return test < a->tests.n ? a->tests.v[test].lead : 0;
}

void tf_attributor_add_wait(tf_attributor *a, tf_strid test, double counted, double apart,
			    double waits)
{
	struct test_acc *ta = acc(a, test);
	ta->offcpu += counted;
	ta->apart += apart;
	if (counted > 0)
		ta->nwaits += waits;
}

void tf_attributor_add_pagein(tf_attributor *a, tf_strid test, double counted)
{
	acc(a, test)->pagein += counted;
}

void tf_attributor_set_offcpu(tf_attributor *a, bool offcpu)
{
	a->offcpu = offcpu;
}

tf_strid tf_attributor_alloc(tf_attributor *a, const tf_rec_event *ev, const uint32_t *locs,
			     size_t n)
{
	int src;
	return decide(a, ev, locs, n, false, &src);
}

void tf_attributor_alloc_block(tf_attributor *a, const tf_rec_event *ev, tf_strid test,
			       uint64_t bytes, uint32_t sample)
{
	if (a->mem)
		tf_memacc_alloc(a->mem, ev->pid, ev->sample.alloc->ptr, test, bytes, sample);
}

bool tf_attributor_alloc_free(tf_attributor *a, const tf_rec_event *ev, uint32_t *sample,
			      uint64_t *bytes)
{
	return a->mem && tf_memacc_release(a->mem, ev->pid, ev->alloc_free.ptr, sample, bytes);
}

/* Memory side-band: counts, process images, notes. */
static void on_memory(tf_attributor *a, const tf_rec_event *ev)
{
	int src;

	if (!a->mem)
		return;
	switch (ev->type) {
	case TF_REC_ALLOC_COUNT:
		tf_memacc_count(a->mem, decide(a, ev, NULL, 0, false, &src), ev->alloc_count.allocs,
				ev->alloc_count.bytes, ev->alloc_count.frees);
		break;
	case TF_REC_ALLOC_PROC: {
		struct proc *pr = proc_get(a, ev->pid);
		pr->alloc_seen = true; /* when it counted nothing, a note says why */
		/* the resident set is a process's: its process test's (or the
		 * command's, or the harness's outside the tests) */
		tf_strid test = decide(a, ev, NULL, 0, false, &src);
		if (ev->alloc_proc.hwm_kb && src != SRC_MARKERS && src != SRC_FRAMES)
			tf_memacc_rss(a->mem, test, ev->alloc_proc.hwm_kb);
		break;
	}
	case TF_REC_RSS: {
		/* a program without the sampler: its peak, read while it ran */
		tf_strid test = decide(a, ev, NULL, 0, false, &src);
		if (src != SRC_MARKERS && src != SRC_FRAMES)
			tf_memacc_rss(a->mem, test, ev->rss.hwm_kb);
		if (ev->rss.go) {
			struct proc *pr = proc_get(a, ev->pid);
			pr->alloc_seen = true; /* the Go note says why */
			note_program(&a->go, &a->ngo, pr->name);
		}
		break;
	}
	case TF_REC_NOTE:
		/* the sampler stepped aside for the program the process execs
		 * next, and said so */
		if (ev->pid && ev->note.exec)
			proc_get(a, ev->pid)->aside_said = true;
		for (size_t i = 0; i < a->notes.n; i++)
			if (strcmp(a->notes.v[i], ev->note.text) == 0)
				return;
		if (a->notes.n < 16)
			tf_vec_push(&a->notes, tf_xstrdup(ev->note.text));
		break;
	default:
		break;
	}
}

static const char *const source_names[] = { "markers", "frames", "process", "command", "build",
					    "runner", "outside" };

/* The test of the program that wrote a runner's report (GoogleTest's XML
 * is named after its program), 0 when no process test ran it. */
static tf_strid program_test_of(tf_attributor *a, const char *program)
{
	for (size_t i = 0; i < a->procs.n; i++) {
		const struct proc *pr = &a->procs.v[i];
		if (!pr->test_root || !pr->test)
			continue;
		if ((pr->main_bin && strcmp(tf_profile_str(a->p, pr->main_bin), program) == 0) ||
		    strcmp(tf_profile_str(a->p, pr->name), program) == 0)
			return pr->test;
	}
	return 0;
}

/* What the runners said ran: a row for each, its duration and status, and
 * the test it ran inside. */
static void merge_runner_list(tf_attributor *a, const tf_runner_tests *rt)
{
	for (size_t i = 0; rt && i < rt->v.n; i++) {
		const tf_runner_test *r = &rt->v.v[i];
		if (!r->name || !*r->name)
			continue;
		tf_strid t = tf_profile_intern(a->p, r->name);
		tf_strid parent = 0;
		if (r->parent && *r->parent)
			parent = tf_profile_intern(a->p, r->parent);
		else if (r->program)
			parent = program_test_of(a, r->program);
		struct test_acc *ta = acc(a, t);
		if (!ta->listed)
			ta->origin = SRC_RUNNER;
		ta->listed = true;
		/* the first report with a duration wins (ctest's log and its
		 * JUnit file may both name a test) */
		if (!ta->runner || (isnan(ta->runner->duration_ns) && !isnan(r->duration_ns)))
			ta->runner = r;
		if (parent && parent != t && !ta->parent)
			ta->parent = parent;
	}
}

/* What Go test binaries ran of their own lists (golist.c): each test a
 * row, inside its package's process test. */
static void merge_go_lists(tf_attributor *a)
{
	tf_buf flags = TF_BUF_INIT;
	for (size_t i = 0; i < a->procs.n; i++) {
		struct proc *pr = &a->procs.v[i];
		const char *argv = pr->argv;
		size_t len = pr->argv_len;
		if (!pr->go_tests.n)
			continue;
		/* a binary that ended before its arguments were read (a quick
		 * package's) ran what its go command chose, whatever -exec
		 * wrapper ran it */
		for (struct proc *anc = len ? NULL : proc_find(a, pr->ppid); anc && anc != pr;
		     anc = proc_find(a, anc->ppid)) {
			if (tf_go_test_flags(&flags, anc->argv, anc->argv_len)) {
				argv = flags.ptr;
				len = flags.len;
				break;
			}
			if (anc->ppid == anc->pid || anc->pid == a->root_pid)
				break;
		}
		if (tf_go_tests_select(&pr->go_tests, argv, len) != 0)
			continue;
		tf_strid parent = pr->test;
		for (size_t k = 0; k < pr->go_tests.n; k++) {
			tf_strid t = tf_profile_intern(a->p, pr->go_tests.v[k]);
			struct test_acc *ta = acc(a, t);
			if (!ta->listed)
				ta->origin = SRC_FRAMES;
			ta->listed = true;
			if (parent && parent != t && !ta->parent)
				ta->parent = parent;
		}
	}
	tf_buf_free(&flags);
}

/* What C++ frameworks' binaries ran of their lists (cxxlist.c): each
 * test a row, inside its binary's process test. */
static void merge_cxx_lists(tf_attributor *a)
{
	tf_go_tests ran = { 0 };
	for (size_t i = 0; a->cxx && i < a->procs.n; i++) {
		struct proc *pr = &a->procs.v[i];
		if (!pr->cxx_bin)
			continue;
		for (size_t k = 0; k < ran.n; k++)
			free(ran.v[k]);
		ran.n = 0;
		if (tf_cxx_ran(a->cxx, pr->cxx_bin, pr->argv, pr->argv_len, pr->cwd, &ran) != 0)
			continue;
		pr = &a->procs.v[i];
		for (size_t k = 0; k < ran.n; k++) {
			tf_strid t = tf_profile_intern(a->p, ran.v[k]);
			struct test_acc *ta = acc(a, t);
			if (!ta->listed)
				ta->origin = SRC_FRAMES;
			ta->listed = true;
			if (pr->test && pr->test != t && !ta->parent)
				ta->parent = pr->test;
			const char *fw = tf_cxx_framework(a->cxx, pr->cxx_bin);
			if (fw && *fw && !ta->via)
				ta->via = tf_profile_intern(a->p, fw);
		}
	}
	tf_go_tests_free(&ran);
}

static int by_pair(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

/* The binary's test of a libtest process, 0 for rustdoc's. */
static tf_strid libtest_binary(const struct proc *pr)
{
	return pr && !pr->rustdoc ? pr->test : 0;
}

/* Whether `name` is one of the sorted names `c`. */
static bool in_names(const strid_stack *c, tf_strid name)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->v[mid] == name)
			return true;
		if (c->v[mid] < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static tf_strid qualified(tf_attributor *a, tf_strid binary, tf_strid name)
{
	char *q = tf_xasprintf("%s::%s", tf_profile_str(a->p, binary), tf_profile_str(a->p, name));
	tf_strid id = tf_profile_intern(a->p, q);
	free(q);
	return id;
}

/*
 * libtest's names are unique in their binary only: a test of the same
 * name in two of a crate's test binaries (semver's test_eq, in
 * test_identifier and test_version) is two tests, each named after its
 * binary as Rust names the function (test_version::test_eq). Which names
 * collide is known once every binary ran: the threads, their samples and
 * their lists are renamed then.
 */
static void qualify_libtest_names(tf_attributor *a, strid_stack *collide)
{
	TF_VEC(uint64_t) pairs = { 0 };  /* name << 32 | binary */
	for (size_t i = 0; i < a->procs.n; i++) {
		struct proc *pr = &a->procs.v[i];
		tf_strid bin = libtest_binary(pr);
		for (size_t k = 0; bin && pr->ltlist.listed && k < pr->ltlist.names.n; k++) {
			uint64_t key = (uint64_t)tf_profile_intern(a->p, pr->ltlist.names.v[k]) << 32 | bin;
			pr = &a->procs.v[i];
			tf_vec_push(&pairs, key);
		}
	}
	for (size_t i = 0; i < a->tids.n; i++) {
		const struct thread *th = &a->tids.v[i];
		tf_strid bin = th->named ? libtest_binary(proc_find(a, th->pid)) : 0;
		if (bin)
			tf_vec_push(&pairs, (uint64_t)th->test << 32 | bin);
	}
	if (pairs.n)
		qsort(pairs.v, pairs.n, sizeof(uint64_t), by_pair);
	for (size_t i = 1; i < pairs.n; i++) {
		tf_strid name = (tf_strid)(pairs.v[i] >> 32);
		if (name == (tf_strid)(pairs.v[i - 1] >> 32) && pairs.v[i] != pairs.v[i - 1] &&
		    (!collide->n || collide->v[collide->n - 1] != name))
			tf_vec_push(collide, name);
	}
	tf_vec_free(&pairs);
	if (!collide->n)
		return;
	/* the threads, then their samples */
	for (size_t i = 0; i < a->tids.n; i++) {
		struct thread *th = &a->tids.v[i];
		tf_strid bin = th->test && in_names(collide, th->test) ? libtest_binary(proc_find(a, th->pid)) : 0;
		if (!bin)
			continue;
		/* its row, sampled or not, whatever its list says */
		th->test = qualified(a, bin, th->test);
		struct test_acc *ta = acc(a, th->test);
		if (!ta->listed)
			ta->origin = SRC_MARKERS;
		ta->listed = true;
		if (!ta->parent)
			ta->parent = bin;
	}
	tf_profile *p = a->p;
	tf_strid k_test = tf_profile_intern(p, "test"), k_tid = tf_profile_intern(p, "tid");
	size_t nv = p->sample_types.n;
	for (size_t i = 0; i < p->samples.n; i++) {
		tf_label *lb = p->labels.v + p->samples.v[i].labels_off, *test = NULL;
		uint32_t tid = 0;
		for (uint32_t k = 0; k < p->samples.v[i].nlabels; k++) {
			if (lb[k].key == k_test && in_names(collide, lb[k].str))
				test = &lb[k];
			else if (lb[k].key == k_tid)
				tid = (uint32_t)lb[k].num;
		}
		if (!test || !tid)
			continue;
		tf_strid to = thread_get(a, tid)->test;
		if (!to || to == test->str)
			continue;
		const int64_t *v = p->values.v + i * nv;
		struct test_acc *from = acc(a, test->str);
		from->samples -= (uint64_t)v[0];
		from->value -= nv > 1 ? v[1] : 0;
		struct test_acc *ta = acc(a, to);
		ta->samples += (uint64_t)v[0];
		ta->value += nv > 1 ? v[1] : 0;
		ta->listed = true;
		ta->source = SRC_MARKERS;
		test->str = to;
	}
	tf_htab_clear(&p->sample_index); /* its labels changed */
	for (size_t i = 0; i < collide->n; i++)
		acc(a, collide->v[i])->listed = false;
}

/* What libtest's lists say ran (libtest.c): each test a row, inside its
 * binary's test (doc-tests are their own processes' tests), sampled or
 * not. */
static void merge_libtest_lists(tf_attributor *a)
{
	strid_stack collide = { 0 };
	qualify_libtest_names(a, &collide);
	for (size_t i = 0; i < a->procs.n; i++) {
		struct proc *pr = &a->procs.v[i];
		/* a process that ended before its arguments were read may have
		 * had filters: its tests are its threads' */
		for (size_t k = 0; pr->ltlist.listed && pr->argv && k < pr->ltlist.names.n; k++) {
			if (!pr->ltlist.runs.v[k])
				continue;
			tf_strid t = tf_profile_intern(a->p, pr->ltlist.names.v[k]);
			pr = &a->procs.v[i];
			if (libtest_binary(pr) && in_names(&collide, t))
				t = qualified(a, pr->test, t);
			pr = &a->procs.v[i];
			struct test_acc *ta = acc(a, t);
			if (!ta->listed)
				ta->origin = SRC_MARKERS;
			ta->listed = true;
			if (!pr->rustdoc && pr->test && pr->test != t && !ta->parent)
				ta->parent = pr->test;
		}
	}
	tf_vec_free(&collide);
}

/* Test `from`'s sums become `to`'s (a test named late). */
static void merge_acc(tf_attributor *a, tf_strid from, tf_strid to)
{
	acc(a, to > from ? to : from); /* neither moves below */
	struct test_acc *f = &a->tests.v[from], *t = &a->tests.v[to];
	t->samples += f->samples;
	t->value += f->value;
	if (f->first && (!t->first || f->first < t->first))
		t->first = f->first;
	t->last = TF_MAX(t->last, f->last);
	t->wall += f->wall;
	if (t->source < 0)
		t->source = f->source;
	if (!t->listed)
		t->origin = f->origin;
	t->claimed += f->claimed;
	if (f->has_exit && (!t->has_exit || f->exit_status))
		t->exit_status = f->exit_status;
	t->has_exit |= f->has_exit;
	t->processes += f->processes;
	t->count += f->count;
	t->has_count |= f->has_count;
	t->count_bad |= f->count_bad;
	t->mcpu += f->mcpu;
	t->has_mcpu |= f->has_mcpu;
	if (!t->parent)
		t->parent = f->parent;
	t->listed |= f->listed;
	if (!t->runner)
		t->runner = f->runner;
	if (!t->lead)
		t->lead = f->lead;
	t->offcpu += f->offcpu;
	t->apart += f->apart;
	t->nwaits += f->nwaits;
	t->pagein += f->pagein;
	memset(f, 0, sizeof(*f));
	f->source = -1;
	if (a->mem)
		tf_memacc_merge(a->mem, from, to);
}

/* Every test `t` with a non-zero `to[t]` (t < n) becomes that test: its
 * processes and threads, its samples, its sums, the tests nested in it. */
static void relabel_tests(tf_attributor *a, const tf_strid *to, size_t n)
{
#define TO(t) ((t) < n && to[t] ? to[t] : (t))
	for (size_t i = 0; i < a->procs.n; i++)
		a->procs.v[i].test = TO(a->procs.v[i].test);
	for (size_t i = 0; i < a->tids.n; i++)
		a->tids.v[i].test = TO(a->tids.v[i].test);
	tf_profile *p = a->p;
	tf_strid k_test = tf_profile_intern(p, "test");
	for (size_t i = 0; i < p->samples.n; i++) {
		tf_label *lb = p->labels.v + p->samples.v[i].labels_off;
		for (uint32_t k = 0; k < p->samples.v[i].nlabels; k++)
			if (lb[k].key == k_test)
				lb[k].str = TO(lb[k].str);
	}
	tf_htab_clear(&p->sample_index); /* its labels changed */
	for (size_t i = 0; i < a->tests.n; i++)
		a->tests.v[i].parent = TO(a->tests.v[i].parent);
	for (size_t t = 0; t < n; t++)
		if (to[t])
			merge_acc(a, (tf_strid)t, to[t]);
#undef TO
}

/* The processes ctest ran whose arguments were not read get the log's
 * tests that no other process took, in the order they ended, which is the
 * log's; one the log leaves without a name keeps its own. */
static int by_end(const void *x, const void *y)
{
	const struct ctest_wait *a = x, *b = y;
	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return a->placeholder < b->placeholder ? -1 : a->placeholder > b->placeholder;
}

static void ctest_hand_out(tf_attributor *a)
{
	TF_VEC(tf_strid) to = { 0 };
	if (a->ctest_waits.n > 1)
		qsort(a->ctest_waits.v, a->ctest_waits.n, sizeof(struct ctest_wait), by_end);
	for (size_t i = 0; i < a->ctest_waits.n; i++) {
		const struct ctest_wait *w = &a->ctest_waits.v[i];
		const char *n = tf_ctest_next(w->c, tf_profile_str(a->p, w->program));
		tf_strid name = n ? tf_profile_intern(a->p, n) : w->fallback;
		while (to.n <= w->placeholder)
			tf_vec_push(&to, 0);
		to.v[w->placeholder] = name;
		/* and its unnamed tests are those of its name */
		if (w->placeholder < a->unnamed.n && a->unnamed.v[w->placeholder]) {
			tf_strid from = a->unnamed.v[w->placeholder], un = unnamed_test(a, name);
			while (to.n <= from)
				tf_vec_push(&to, 0);
			to.v[from] = un;
		}
	}
	if (to.n)
		relabel_tests(a, to.v, to.n);
	tf_vec_free(&to);
	a->ctest_waits.n = 0;
	a->wait_group.n = 0;
}

static void merge_runner_tests(tf_attributor *a)
{
	merge_go_lists(a);
	merge_libtest_lists(a);
	merge_cxx_lists(a);
	merge_runner_list(a, a->o->runner_tests);
	for (size_t i = 0; i < a->ctests.n; i++)
		merge_runner_list(a, tf_ctest_log(a->ctests.v[i].c));
	for (size_t i = 0; i < a->mesons.n; i++)
		merge_runner_list(a, tf_meson_log(a->mesons.v[i].m));
}

/*
 * The perf events' count beyond the threads the kernel reported belongs to
 * the one thread that ended without a count (perf.c says why), or, when
 * every ended thread has one, to the command's main thread, still holding
 * our events at the end. With several threads unaccounted for (records
 * lost), nobody gets it and their processes have no exact cost.
 */
static void give_remainder(tf_attributor *a)
{
	struct thread *only = NULL;
	size_t missing = 0;

	if (!a->has_remainder)
		return;
	for (size_t i = 0; i < a->tids.n; i++) {
		struct thread *t = &a->tids.v[i];
		if (t->exited && !t->costed) {
			only = t;
			missing++;
		}
	}
	if (missing > 1) {
		for (size_t i = 0; i < a->tids.n; i++) {
			struct thread *t = &a->tids.v[i];
			struct proc *pr = t->exited && !t->costed ? proc_find(a, t->pid) : NULL;
			if (pr)
				pr->cost_lost = true;
		}
		return;
	}
	struct proc *pr = proc_get(a, only ? only->pid : a->root_pid);
	pr->cost += a->remainder;
	pr->has_cost = true;
}

/* Each process's CPU time, summed over its threads' times on a CPU: the
 * cost of a time event (cpu-clock) to the nanosecond. */
static void costs_from_switches(tf_attributor *a)
{
	for (size_t i = 0; i < a->procs.n; i++) {
		a->procs.v[i].cost = 0;
		a->procs.v[i].has_cost = false;
		a->procs.v[i].cost_lost = false;
	}
	for (size_t i = 0; i < a->tids.n; i++) {
		const struct thread *t = &a->tids.v[i];
		struct proc *pr = t->pid ? proc_find(a, t->pid) : NULL;
		if (!pr)
			continue;
		pr->cost += t->oncpu;
		pr->has_cost = true;
	}
}

static void rename_string(tf_profile *p, tf_strid id, const char *s)
{
	p->strings.strs.v[id] = tf_arena_strdup(p->strings.arena, s);
	p->strings.lens.v[id] = (uint32_t)strlen(s);
	tf_htab_clear(&p->strings.index); /* rebuilt when next needed */
}

typedef TF_VEC(char *) str_vec;

/*
 * The run's notes (meta note.N): what the runners' helpers said of
 * themselves, and the Python test runs that wrote no marker, nor did
 * anything below them (testflame's loader not found, or its plugin
 * refused): their tests are named from their frames.
 */
static void write_notes(tf_attributor *a, str_vec *keys, str_vec *values)
{
	const tf_runner_tests *rt = a->o->runner_tests;
	size_t n = 0, bare = 0;

	for (size_t i = 0; i < a->procs.n; i++) {
		if (!a->procs.v[i].marked)
			continue;
		struct proc *pr = &a->procs.v[i];
		for (int depth = 0; pr && depth < 256 && pr->pid != a->root_pid; depth++) {
			pr = proc_find(a, pr->ppid);
			if (!pr || pr->marked)
				break;
			pr->marked = true;
		}
	}
	for (size_t i = 0; i < a->procs.n; i++)
		if (a->procs.v[i].execd && !a->procs.v[i].marked && is_py_runner(&a->procs.v[i]))
			bare++;
	for (size_t i = 0; rt && i < rt->notes.n; i++) {
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xstrdup(rt->notes.v[i]));
	}
	/* go test replays a cached result without running its binary: the
	 * run measured no test (a run no baseline is made of) */
	size_t go_runs = 0, go_binaries = 0;
	for (size_t i = 0; i < a->procs.n; i++) {
		struct proc *pr = &a->procs.v[i];
		const char *a1 = argv_at(pr, 1);
		if (pr->execd && a1 && strcmp(a1, "test") == 0 &&
		    strcmp(tf_profile_str(a->p, pr->name), "go") == 0)
			go_runs++;
		const char *bin = pr->main_bin ? tf_profile_str(a->p, pr->main_bin) : "";
		size_t bl = strlen(bin);
		if (bl > 5 && strcmp(bin + bl - 5, ".test") == 0)
			go_binaries++;
	}
	if (go_runs && !go_binaries) {
		const char *why = "go test ran no test binary: its results came from go's test cache "
				  "(\"(cached)\"), so no test ran here (go test -count=1 runs them)";
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xstrdup(why));
		tf_vec_push(keys, tf_xstrdup("cached"));
		tf_vec_push(values, tf_xstrdup(why));
	}
	for (size_t i = 0; i < a->list_notes.n; i++) {
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xstrdup(a->list_notes.v[i]));
	}
	const tf_go_tests *cxn = a->cxx ? tf_cxx_lists_notes(a->cxx) : NULL;
	for (size_t i = 0; cxn && i < cxn->n; i++) {
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xstrdup(cxn->v[i]));
	}
	if (bare && (a->sources & TF_SOURCE_MARKERS) && !a->o->no_injection) {
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xasprintf(
			"%zu Python test run%s (pytest, python -m unittest) found neither "
			"testflame's loader nor its pytest plugin (a PYTHONPATH that replaced "
			"testflame's in a virtualenv, python -I or -S, -p no:pytest_testflame) "
			"or ran no test: %s named from frames", bare, bare == 1 ? "" : "s",
			bare == 1 ? "its tests are" : "their tests are"));
	}
}

/* "a, b, c and 4 more" of the names kept and how many there were. */
static void program_names(tf_attributor *a, tf_buf *out, const tf_strid *names, size_t kept,
			  size_t count)
{
	for (size_t i = 0; i < kept; i++)
		tf_buf_printf(out, "%s%s", i ? ", " : "", tf_profile_str(a->p, names[i]));
	if (count > kept)
		tf_buf_printf(out, " and %zu more", count - kept);
}

/* The run's notes (meta note.N, after those already there) of what the
 * allocation sampler could not measure, and why. */
static void memory_notes(tf_attributor *a, str_vec *keys, str_vec *values)
{
	size_t n = 0;
	char key[32];

	if (!a->mem)
		return;
	for (;;) {
		snprintf(key, sizeof(key), "note.%zu", n + 1);
		bool taken = tf_profile_meta(a->p, key) != NULL;
		for (size_t i = 0; i < keys->n && !taken; i++)
			taken = strcmp(keys->v[i], key) == 0;
		if (!taken)
			break;
		n++;
	}
	for (size_t i = 0; i < a->notes.n; i++) {
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xstrdup(a->notes.v[i]));
	}
	if (a->ngo) {
		tf_buf names = TF_BUF_INIT;
		program_names(a, &names, a->go.v, a->go.n, a->ngo);
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xasprintf(
			"%zu Go program%s (%s): the Go runtime allocates apart from malloc, so "
			"%s allocations are not counted; %s peak resident set is, read while "
			"%s ran (a Go allocation profile comes from go test -memprofile)",
			a->ngo, a->ngo == 1 ? "" : "s", names.ptr, a->ngo == 1 ? "its" : "their",
			a->ngo == 1 ? "its" : "their", a->ngo == 1 ? "it" : "they"));
		tf_buf_free(&names);
	}
	if (a->nunsampled) {
		tf_buf names = TF_BUF_INIT;
		program_names(a, &names, a->unsampled.v, a->unsampled.n, a->nunsampled);
		tf_vec_push(keys, tf_xasprintf("note.%zu", ++n));
		tf_vec_push(values, tf_xasprintf(
			"%zu test program%s ran without the allocation sampler (%s): static "
			"binaries, setuid programs, or programs started without LD_PRELOAD; "
			"%s allocations are not counted, %s peak resident set read while %s ran",
			a->nunsampled, a->nunsampled == 1 ? "" : "s", names.ptr,
			a->nunsampled == 1 ? "its" : "their", a->nunsampled == 1 ? "its" : "their",
			a->nunsampled == 1 ? "it" : "they"));
		tf_buf_free(&names);
	}
}

size_t tf_attributor_write_meta(tf_attributor *a, uint64_t end_time)
{
	size_t ntests = 0, found = 0;
	str_vec keys = { 0 }, values = { 0 };
	double outside = 0;
	bool outside_ok = true, outside_any = false;

	/* tests still open at the end ran until the end */
	while (a->open_key.n)
		close_interval(a, a->open_key.v[a->open_key.n - 1],
			       a->open_name.v[a->open_name.n - 1], end_time, 0);
	/* and so did the last images of processes still running */
	for (size_t i = 0; a->mem && i < a->procs.n; i++)
		if (!a->procs.v[i].exited)
			image_done(a, &a->procs.v[i]);
	/* every process has its test, those still running at the end too */
	if (a->sources & TF_SOURCE_PROCESSES)
		for (size_t i = 0; i < a->procs.n; i++)
			proc_test(a, &a->procs.v[i], 0);
	ctest_hand_out(a);
	merge_runner_tests(a);
	if (a->time_event && a->switches)
		costs_from_switches(a);
	else
		give_remainder(a);
	/* libtest's tests: each its thread's time on a CPU, inside its
	 * binary's test */
	for (size_t i = 0; a->any_libtest && i < a->tids.n; i++) {
		const struct thread *th = &a->tids.v[i];
		struct proc *pr = th->test ? proc_find(a, th->pid) : NULL;
		if (!th->test)
			continue;
		/* rustdoc's thread compiles its doc-test and waits for it: the
		 * build's and its program's */
		if (pr && pr->rustdoc)
			continue;
		struct test_acc *ta = acc(a, th->test);
		ta->wall += th->test_wall;
		if (a->switches) {
			ta->mcpu += th->oncpu;
			ta->has_mcpu = true;
		}
		if (pr && pr->test && pr->test != th->test && !ta->parent)
			ta->parent = pr->test;
	}

	/* exact costs: what the kernel counted for each process goes to its
	 * test; a test with a process it has no count for has none */
	for (size_t i = 0; i < a->procs.n; i++) {
		const struct proc *pr = &a->procs.v[i];
		tf_strid t = pr->test;
		if (!t || !(a->sources & TF_SOURCE_PROCESSES)) {
			outside_any = true;
			outside += (double)pr->cost;
			/* its samples went to tests too: not the harness's alone */
			if (!pr->has_cost || pr->cost_lost || pr->shared)
				outside_ok = false;
			continue;
		}
		struct test_acc *ta = acc(a, t);
		/* a process a marked test started: the test's CPU between its
		 * markers is its thread's; the process adds its own, whole,
		 * where the event counts CPU time (else the test has no exact
		 * cost: its thread's alone would leave the process out) */
		if (pr->fork_marker == t) {
			if (ta->has_mcpu && a->time_event && pr->has_cost && !pr->cost_lost)
				ta->mcpu += pr->cost;
			else {
				ta->has_mcpu = false;
				ta->count_bad = true;
			}
			continue;
		}
		if (!pr->has_cost || pr->cost_lost)
			ta->count_bad = true;
		ta->count += (double)pr->cost;
		ta->has_count = true;
	}
	for (size_t i = 0; i < a->tests.n; i++) {
		struct test_acc *ta = &a->tests.v[i];
		/* its unnamed tests' work is no test of the runner's list */
		bool unnamed = ta->parent < a->unnamed.n && a->unnamed.v[ta->parent] == i;
		if (ta->listed && ta->parent && ta->parent < a->tests.n && !unnamed)
			a->tests.v[ta->parent].nested++;
		if (ta->listed && i != a->default_test && i != a->build_test)
			found++;
	}
	/* a Python test runner whose frames were read ran tests, sampled
	 * or not: its work outside them stays outside them, as when a
	 * sample named one */
	bool tests_ran = found || a->py_framed;
	if (!tests_ran && a->outside_default) {
		/* no test at all: the command is the test */
		const char *suite = a->o->suite && *a->o->suite ? a->o->suite : "all";
		rename_string(a->p, a->default_test, suite);
		a->outside_default = false;
	}

	for (size_t i = 0; i < a->tests.n; i++) {
		struct test_acc *ta = &a->tests.v[i];
		bool outside_bucket = i == a->default_test;
		/* the work outside the tests has a row when it was sampled or
		 * counted, beside tests that were found */
		if (outside_bucket && a->outside_default && tests_ran && outside_any && outside_ok)
			ta->listed = true;
		if (!ta->listed)
			continue;
		if (ta->source < 0)
			ta->source = ta->origin;
		tf_test_meta m;
		tf_test_meta_init(&m);
		m.name = (char *)tf_profile_str(a->p, (tf_strid)i);
		m.samples = ta->samples;
		m.value = ta->value;
		uint64_t wall = ta->wall;
		if (!wall && ta->samples && (ta->source == SRC_FRAMES || ta->source == SRC_COMMAND))
			wall = ta->last - ta->first; /* the span of its samples */
		m.wall_ns = (double)wall;
		m.source = (char *)source_names[ta->source >= 0 ? ta->source : SRC_MARKERS];
		if (outside_bucket && !a->outside_default)
			m.source = (char *)source_names[SRC_COMMAND];
		if (outside_bucket && a->outside_default ? outside_any && outside_ok
							 : ta->has_count && !ta->count_bad)
			m.count = outside_bucket && a->outside_default ? outside : ta->count;
		if (ta->has_mcpu)
			m.cpu_ns = (double)ta->mcpu;
		if (a->offcpu) {
			m.offcpu_ns = ta->offcpu;
			m.offcpu_apart_ns = ta->apart;
			m.offcpu_waits = ta->nwaits;
			m.offcpu_pagein_ns = ta->pagein;
		}
		if (ta->runner) {
			m.runner_ns = ta->runner->duration_ns;
			m.runner_q_ns = ta->runner->quantum_ns;
			if (!isnan(m.runner_ns))
				m.runner = (char *)ta->runner->runner;
			m.status = ta->runner->status;
		}
		if (!m.runner && ta->via)
			m.runner = (char *)tf_profile_str(a->p, ta->via);
		if (ta->has_exit) {
			m.exit_status = ta->exit_status;
			m.has_exit = true;
			if (!m.status)
				m.status = ta->exit_status ? TF_TEST_FAILED : TF_TEST_PASSED;
		}
		m.nested = ta->nested;
		if (ta->parent)
			m.parent = (char *)tf_profile_str(a->p, ta->parent);
		if (a->mem)
			tf_memacc_meta(a->mem, (tf_strid)i, &m);
		/* set at once below: one by one, each would search the others */
		tf_buf v = TF_BUF_INIT;
		tf_test_meta_format(&v, &m);
		tf_vec_push(&keys, tf_xasprintf("test.%s", m.name));
		tf_vec_push(&values, tf_xstrdup(v.ptr ? v.ptr : ""));
		tf_buf_free(&v);
		ntests++;
	}
	write_notes(a, &keys, &values);
	memory_notes(a, &keys, &values);
	tf_profile_set_metas(a->p, keys.v, values.v, keys.n);
	for (size_t i = 0; i < keys.n; i++) {
		free(keys.v[i]);
		free(values.v[i]);
	}
	tf_vec_free(&keys);
	tf_vec_free(&values);
	return ntests;
}

uint64_t tf_attributor_helper_samples(const tf_attributor *a)
{
	return a->helper_samples;
}

uint64_t tf_attributor_processes(const tf_attributor *a)
{
	return a->procs.n;
}

uint64_t tf_attributor_threads(const tf_attributor *a)
{
	return a->tids.n;
}

int tf_attribute_parse_sources(const char *list, unsigned *out)
{
	unsigned v = 0;
	const char *p = list;

	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n == 7 && strncmp(p, "markers", 7) == 0)
			v |= TF_SOURCE_MARKERS;
		else if (n == 6 && strncmp(p, "frames", 6) == 0)
			v |= TF_SOURCE_FRAMES;
		else if ((n == 9 && strncmp(p, "processes", 9) == 0) ||
			 (n == 7 && strncmp(p, "process", 7) == 0))
			v |= TF_SOURCE_PROCESSES;
		else if (n == 3 && strncmp(p, "all", 3) == 0)
			v |= TF_SOURCE_ALL;
		else if (n == 4 && strncmp(p, "none", 4) == 0)
			v |= 0x100;
		else
			return tf_error_set(TF_EUSAGE,
				"unknown attribution source '%.*s' (expected markers, frames, "
				"processes, all or none)", (int)n, p);
		p += n;
		if (*p == ',')
			p++;
	}
	*out = v;
	return 0;
}
