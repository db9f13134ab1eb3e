/*
 * test_spool.c - replay hands a recording's records back in time order,
 * stable for equal times, whatever order the ring buffers were read in;
 * a sample the kernel could not name (a thread in its last moments) gets
 * the thread its CPU's switch records say was running.
 */
#include "unit.h"

#include "record/record_int.h"

#include <stdlib.h>
#include <string.h>

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_interleaved_rings),
		cmocka_unit_test(test_replay_stable_and_wide),
		cmocka_unit_test(test_replay_sorted_and_tiny),
		cmocka_unit_test(test_replay_names_samples_of_ending_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
