/*
 * test_spool.c - replay hands a recording's records back in time order,
 * stable for equal times, whatever order the ring buffers were read in;
 * a sample the kernel could not name (a thread in its last moments) gets
 * the thread its CPU's switch records say was running. The Python reader,
 * which takes the side-band as each CPU's ring is read, keeps a process's
 * interpreter when its exec or fork is read after its mapping.
 */
#include "unit.h"

#include "record/record_int.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
	uint64_t time;
	uint32_t seq; /* the order it was spooled in */
} rec;

typedef struct {
	rec *got;
	size_t n;
} seen;

static int on_event(void *ctx, const tf_rec_event *ev)
{
	seen *s = ctx;
	assert_int_equal(ev->type, TF_REC_PROC_EXIT);
	s->got[s->n].time = ev->time;
	s->got[s->n].seq = ev->pid;
	s->n++;
	return 0;
}

static int by_time_then_seq(const void *a, const void *b)
{
	const rec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : (x->seq > y->seq);
}

/* Spool `n` process-exit records with the given times (pid = spool order),
 * replay them, and compare with a reference sort. */
static void check_replay(const uint64_t *times, size_t n)
{
	tf_recording *r = calloc(1, sizeof(*r));
	rec *want = calloc(n + 1, sizeof(*want));
	seen s = { calloc(n + 1, sizeof(rec)), 0 };

	assert_non_null(r);
	r->layout.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	r->layout.sample_id_all = true;
	assert_int_equal(tf_spool_open(&r->spool), 0);
	for (size_t i = 0; i < n; i++) {
		struct { uint32_t pid, tid; uint64_t time; int32_t status; uint32_t pad; } f = {
			(uint32_t)i, (uint32_t)i, times[i], 0, 0
		};
		assert_int_equal(tf_spool_append_own(r->spool, TF_SPOOL_PROC_EXIT, &f, sizeof(f),
						     NULL, 0), 0);
		want[i] = (rec){ times[i], (uint32_t)i };
	}
	assert_int_equal(tf_spool_finish(r->spool), 0);
	assert_int_equal(tf_recording_replay(r, on_event, &s), 0);
	assert_int_equal(s.n, n);
	qsort(want, n, sizeof(*want), by_time_then_seq);
	for (size_t i = 0; i < n; i++) {
		assert_true(s.got[i].time == want[i].time);
		assert_int_equal(s.got[i].seq, want[i].seq);
	}
	free(want);
	free(s.got);
	tf_recording_free(r);
}

/* Two CPUs' ring buffers read in turns: runs of ordered records that
 * interleave in time, as the perf sampler spools them. */
static void test_replay_interleaved_rings(void **state)
{
	(void)state;
	size_t n = 20000, k = 0;
	uint64_t *t = calloc(n, sizeof(*t));
	uint64_t boot = 123456789012345ULL; /* ns since boot: high bytes all equal */
	for (size_t chunk = 0; k < n; chunk++) {
		for (unsigned cpu = 0; cpu < 2 && k < n; cpu++)
			for (size_t j = 0; j < 97 && k < n; j++)
				t[k++] = boot + chunk * 1000000 + j * 10000 + cpu * 3333;
	}
	check_replay(t, n);
	free(t);
}

/* Equal times keep the order they were spooled in; times that differ in
 * their highest byte sort too. */
static void test_replay_stable_and_wide(void **state)
{
	(void)state;
	size_t n = 5000;
	uint64_t *t = calloc(n, sizeof(*t));
	uint64_t x = 88172645463325252ULL;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* few distinct values, many ties, some with the top byte set */
		t[i] = (x % 7) * 1000 + ((x >> 20) % 3 == 0 ? (0xabULL << 56) : 0);
	}
	check_replay(t, n);
	free(t);
}

/* Already in order (the ptrace sampler, one CPU): handed out as spooled. */
static void test_replay_sorted_and_tiny(void **state)
{
	(void)state;
	uint64_t t[300];
	for (size_t i = 0; i < 300; i++)
		t[i] = 1000 + i / 3;
	check_replay(t, 300);
	uint64_t one[1] = { 42 };
	check_replay(one, 1);
	uint64_t two[2] = { 43, 42 };
	check_replay(two, 2);
}

/* The layout of the records below: TID, TIME and CPU in samples and in
 * every side-band record's trailer. */
struct ids {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

static void spool_switch(tf_spool *s, bool out, uint32_t cpu, uint32_t pid, uint32_t tid,
			 uint64_t time)
{
	struct {
		struct perf_event_header h;
		uint32_t other_pid, other_tid;
		struct ids id;
	} r = { { PERF_RECORD_SWITCH_CPU_WIDE, out ? PERF_RECORD_MISC_SWITCH_OUT : 0,
		  sizeof(r) },
		999, 999, { pid, tid, time, cpu, 0 } };
	assert_int_equal(tf_spool_append(s, &r, sizeof(r)), 0);
}

static void spool_sample(tf_spool *s, uint32_t cpu, uint32_t pid, uint32_t tid, uint64_t time)
{
	struct {
		struct perf_event_header h;
		struct ids id;
	} r = { { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL, sizeof(r) },
		{ pid, tid, time, cpu, 0 } };
	assert_int_equal(tf_spool_append(s, &r, sizeof(r)), 0);
}

typedef struct {
	uint32_t pid[8], tid[8];
	size_t n;
} samples_seen;

static int on_sample(void *ctx, const tf_rec_event *ev)
{
	samples_seen *s = ctx;
	if (ev->type == TF_REC_SAMPLE && s->n < 8) {
		s->pid[s->n] = ev->pid;
		s->tid[s->n++] = ev->tid;
	}
	return 0;
}

/* Two CPUs: a thread of process 10 exits on CPU 1 and is sampled there
 * after its pid is gone; CPU 0's samples of -1 come when nothing of ours
 * is known to run there, and a CPU never seen stays unknown too. */
static void test_replay_names_samples_of_ending_threads(void **state)
{
	(void)state;
	const uint32_t gone = UINT32_MAX;
	tf_recording *r = calloc(1, sizeof(*r));
	samples_seen s = { 0 };

	assert_non_null(r);
	r->layout.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	r->layout.sample_id_all = true;
	assert_int_equal(tf_spool_open(&r->spool), 0);
	/* CPU 1's ring, then CPU 0's: replay puts them in time order */
	spool_switch(r->spool, false, 1, 10, 11, 100);
	spool_sample(r->spool, 1, 10, 11, 110);
	spool_sample(r->spool, 1, gone, gone, 120);   /* 11 in do_exit */
	spool_switch(r->spool, true, 1, gone, gone, 130);
	spool_sample(r->spool, 1, gone, gone, 140);   /* nobody known: stays */
	spool_switch(r->spool, false, 0, 20, 20, 105);
	spool_sample(r->spool, 0, gone, gone, 115);   /* 20, on CPU 0 */
	spool_switch(r->spool, true, 0, 20, 20, 125);
	spool_sample(r->spool, 0, gone, gone, 135);   /* after 20 left */
	spool_sample(r->spool, 7, gone, gone, 145);   /* a CPU never seen */
	assert_int_equal(tf_spool_finish(r->spool), 0);
	assert_int_equal(tf_recording_replay(r, on_sample, &s), 0);

	const uint32_t pid[] = { 10, 20, 10, gone, gone, gone };
	const uint32_t tid[] = { 11, 20, 11, gone, gone, gone };
	assert_int_equal(s.n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(s.pid[i], pid[i]);
		assert_int_equal(s.tid[i], tid[i]);
	}
	tf_recording_free(r);
}

/* The executable mapping of the interpreter python `pid` runs, from its
 * maps, as an mmap event at `time`. */
static bool python_mapping(pid_t pid, uint64_t time, tf_rec_event *ev, char *file, size_t filesz)
{
	char path[64], line[1024];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	bool found = false;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8];
		int name = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &lo, &hi, perms, &off, &name) < 4 ||
		    !name || perms[2] != 'x' || !strstr(line + name, "python"))
			continue;
		snprintf(file, filesz, "%s", line + name);
		file[strcspn(file, "\n")] = 0;
		memset(ev, 0, sizeof(*ev));
		ev->type = TF_REC_MMAP;
		ev->time = time;
		ev->pid = ev->tid = (uint32_t)pid;
		ev->mmap.start = lo;
		ev->mmap.len = hi - lo;
		ev->mmap.pgoff = off;
		ev->mmap.prot = PROT_READ | PROT_EXEC;
		ev->mmap.filename = file;
		found = true;
	}
	if (f)
		fclose(f);
	return found;
}

static tf_rec_event side(tf_rec_type type, uint32_t pid, uint32_t ppid, uint64_t time)
{
	tf_rec_event ev;
	memset(&ev, 0, sizeof(ev));
	ev.type = type;
	ev.time = time;
	ev.pid = ev.tid = pid;
	if (type == TF_REC_COMM) {
		ev.comm.comm = "python3";
		ev.comm.exec = true;
	} else {
		ev.fork.ppid = ev.fork.ptid = ppid;
	}
	return ev;
}

/*
 * Each CPU's side-band ring is read in turn, so a process that exec'd on
 * one CPU and mapped its interpreter on another can be read mapping it
 * first. The exec read late is an earlier life: the interpreter stays, and
 * its samples are read (they were all left unread); an exec read in its
 * turn still forgets it. A child whose own exec was read before its fork
 * is not handed its parent's interpreter.
 */
static void test_pyread_side_band_out_of_order(void **state)
{
	(void)state;
	const char *py = "/usr/bin/python3";
	if (access(py, X_OK) != 0)
		skip();
	int ready[2];
	assert_int_equal(pipe(ready), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* a failed check leaves it to us */
		dup2(ready[1], 1);
		execl(py, py, "-c",
		      "import sys\ndef spin():\n    while True:\n        pass\n"
		      "sys.stdout.write('go\\n'); sys.stdout.flush(); spin()\n", (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	char go[4] = { 0 };
	assert_int_equal(read(ready[0], go, 3), 3);
	close(ready[0]);

	tf_recording *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	r->layout.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	r->layout.sample_id_all = true;
	assert_int_equal(tf_spool_open(&r->spool), 0);
	tf_record_opts o;
	tf_record_opts_init(&o);
	tf_pyread *pr = NULL;
	assert_int_equal(tf_pyread_new(&pr, r, &o), 0);

	char file[512];
	tf_rec_event map, ev;
	assert_true(python_mapping(pid, 2000, &map, file, sizeof(file)));
	uint32_t p = (uint32_t)pid, child = p + 4000000; /* no such pid */
	tf_pyread_event(pr, &map);
	ev = side(TF_REC_COMM, p, 0, 1000); /* its exec, read after the mapping */
	tf_pyread_event(pr, &ev);
	assert_true(tf_pyread_live(pr));
	uint64_t before = r->info.py_stacks;
	for (int i = 0; i < 20 && r->info.py_stacks == before; i++) {
		tf_pyread_sample(pr, p, p, 3000 + (uint64_t)i);
		usleep(1000);
	}
	assert_true(r->info.py_stacks > before);

	/* a child that exec'd (read first), then its fork: not a Python */
	ev = side(TF_REC_COMM, child, 0, 5000);
	tf_pyread_event(pr, &ev);
	ev = side(TF_REC_FORK, child, p, 4000);
	tf_pyread_event(pr, &ev);
	before = r->info.py_stacks;
	uint64_t unread = r->info.py_unread;
	tf_pyread_sample(pr, child, child, 6000);
	assert_true(r->info.py_stacks == before && r->info.py_unread == unread);

	/* an exec read in its turn: the interpreter is forgotten */
	ev = side(TF_REC_COMM, p, 0, 7000);
	tf_pyread_event(pr, &ev);
	assert_false(tf_pyread_live(pr));
	before = r->info.py_stacks;
	tf_pyread_sample(pr, p, p, 8000);
	assert_true(r->info.py_stacks == before);
	/* and its mapping, read after its exit, makes no live process */
	ev = side(TF_REC_EXIT, p, p, 9500);
	tf_pyread_event(pr, &ev);
	map.time = 9000;
	tf_pyread_event(pr, &map);
	assert_false(tf_pyread_live(pr));

	tf_pyread_free(pr);
	tf_spool_free(r->spool);
	free(r);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_interleaved_rings),
		cmocka_unit_test(test_replay_stable_and_wide),
		cmocka_unit_test(test_replay_sorted_and_tiny),
		cmocka_unit_test(test_replay_names_samples_of_ending_threads),
		cmocka_unit_test(test_pyread_side_band_out_of_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
