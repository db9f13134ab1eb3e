/*
 * test_synth.c - the perf records the ptrace sampler makes by hand
 * (src/record/synth.c), read back by the spool's decoder exactly as the
 * perf sampler's are: every field lands where the kernel's layout puts it,
 * an off-CPU sample names its wait, a reused sample takes its new time and
 * period, and a stack too big for a 16-bit record is trimmed to fit.
 */
#include "unit.h"

#include "record/record_int.h"

/* What tf_ptrace_record declares. */
static tf_spool_layout layout(bool copy_stack)
{
	tf_spool_layout l = { PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				      PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN,
			      TF_REGS_MASK, true, 0 };
	if (copy_stack)
		l.sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	return l;
}

static const struct perf_event_header *header(const tf_buf *b)
{
	const struct perf_event_header *h = (const void *)b->ptr;
	assert_int_equal(h->size, b->len);
	assert_int_equal(h->size % 8, 0);
	return h;
}

static void test_side_band(void **state)
{
	tf_spool_layout l = layout(false);
	tf_buf b = TF_BUF_INIT;
	tf_rec_event ev;
	tf_maps_line m = { 0x400000, 0x401000, 0x1000, 77, 8, 2, 5, 2, "/bin/true" };
	(void)state;

	tf_synth_task(&b, PERF_RECORD_FORK, 100, 1, 101, 100, 5000);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.type, TF_REC_FORK);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.tid, 101);
	assert_int_equal(ev.fork.ppid, 1);
	assert_int_equal(ev.fork.ptid, 100);
	assert_int_equal(ev.time, 5000);
	assert_int_equal(tf_spool_record_time(&l, header(&b)), 5000);

	tf_synth_task(&b, PERF_RECORD_EXIT, 100, 1, 101, 1, 6000);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.type, TF_REC_EXIT);
	assert_int_equal(ev.tid, 101);
	assert_int_equal(ev.time, 6000);

	/* "comm" of 4 bytes + NUL pads to 8; 7 + NUL needs no padding */
	tf_synth_comm(&b, 100, 100, "true", 7000);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.type, TF_REC_COMM);
	assert_string_equal(ev.comm.comm, "true");
	assert_true(ev.comm.exec);
	assert_int_equal(ev.time, 7000);
	tf_synth_comm(&b, 100, 100, "1234567", 7000);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_string_equal(ev.comm.comm, "1234567");

	tf_synth_mmap2(&b, 100, 102, &m, 8000);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.type, TF_REC_MMAP);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.tid, 102);
	assert_int_equal(ev.mmap.start, 0x400000);
	assert_int_equal(ev.mmap.len, 0x1000);
	assert_int_equal(ev.mmap.pgoff, 0x1000);
	assert_int_equal(ev.mmap.ino, 77);
	assert_int_equal(ev.mmap.maj, 8);
	assert_int_equal(ev.mmap.min, 2);
	assert_int_equal(ev.mmap.prot, 5);
	assert_int_equal(ev.mmap.flags, 2);
	assert_string_equal(ev.mmap.filename, "/bin/true");
	assert_int_equal(ev.time, 8000);

	tf_synth_proc_exit(&b, 100, 100, 3 << 8, 9000);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.type, TF_REC_PROC_EXIT);
	assert_int_equal(ev.proc_exit.wait_status, 3 << 8);
	assert_int_equal(ev.time, 9000);
	tf_buf_free(&b);
}

static void test_sample(void **state)
{
	tf_spool_layout l = layout(false);
	tf_buf b = TF_BUF_INIT;
	tf_rec_event ev;
	uint64_t chain[] = { 0x401000, 0x402000, 0x403000 };
	tf_synth_sample_in in = { 100, 101, 12345, 10101010, NULL, chain, 3, false, NULL, NULL, 0 };
	size_t body;
	(void)state;

	body = tf_synth_sample(&b, &in);
	assert_int_equal(body, sizeof(struct perf_event_header));
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.type, TF_REC_SAMPLE);
	assert_int_equal(ev.pid, 100);
	assert_int_equal(ev.tid, 101);
	assert_int_equal(ev.time, 12345);
	assert_int_equal(ev.sample.period, 10101010);
	assert_int_equal(ev.sample.ip, 0x401000);
	assert_int_equal(ev.sample.where, TF_SAMPLE_USER);
	assert_int_equal(ev.sample.nuser, 3);
	assert_int_equal(ev.sample.nkernel, 0);
	assert_int_equal(ev.sample.user_ips[2], 0x403000);
	assert_null(ev.sample.offcpu);

	/* reused later: only time and period change */
	tf_synth_sample_retime(b.ptr, body, 99999, 555);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.time, 99999);
	assert_int_equal(ev.sample.period, 555);
	assert_int_equal(ev.sample.user_ips[1], 0x402000);
	tf_buf_free(&b);
}

static void test_offcpu_sample(void **state)
{
	tf_spool_layout l = layout(false);
	tf_buf b = TF_BUF_INIT;
	tf_rec_event ev;
	uint64_t chain[] = { 0x7f0000001000 };
	tf_synth_sample_in in = { 7, 8, 100, 200, "epoll_wait", chain, 1, false, NULL, NULL, 0 };
	size_t body;
	(void)state;

	body = tf_synth_sample(&b, &in);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.type, TF_REC_SAMPLE);
	assert_string_equal(ev.sample.offcpu, "epoll_wait");
	assert_int_equal(ev.sample.period, 200);
	assert_int_equal(tf_spool_record_time(&l, header(&b)), 100);
	tf_synth_sample_retime(b.ptr, body, 300, 200);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_int_equal(ev.time, 300);
	assert_int_equal(tf_spool_record_time(&l, header(&b)), 300);
	assert_string_equal(ev.sample.offcpu, "epoll_wait");
	tf_buf_free(&b);
}

static void test_sample_with_stack(void **state)
{
	tf_spool_layout l = layout(true);
	tf_buf b = TF_BUF_INIT;
	tf_rec_event ev;
	uint64_t chain[] = { 0x401000 }, regs[TF_REG_COUNT], v;
	static uint8_t stack[70000];
	tf_synth_sample_in in = { 1, 1, 10, 20, NULL, chain, 1, true, regs, stack, 1001 };
	(void)state;

	for (int r = 0; r < TF_REG_COUNT; r++)
		regs[r] = 0x1000 + (uint64_t)r;
	for (size_t i = 0; i < sizeof(stack); i++)
		stack[i] = (uint8_t)(i * 7);
	tf_synth_sample(&b, &in);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_non_null(ev.sample.regs);
	assert_true(tf_regs_get(ev.sample.regs, ev.sample.regs_mask, TF_REG_SP, &v));
	assert_int_equal(v, 0x1000 + TF_REG_SP);
	assert_true(tf_regs_get(ev.sample.regs, ev.sample.regs_mask, TF_REG_R15, &v));
	assert_int_equal(v, 0x1000 + TF_REG_R15);
	/* the segment registers are not in the mask */
	assert_false(tf_regs_get(ev.sample.regs, ev.sample.regs_mask, TF_REG_FS, &v));
	/* the stack: its exact length, padded to 8 in the record */
	assert_int_equal(ev.sample.stack_size, 1001);
	assert_memory_equal(ev.sample.stack, stack, 1001);

	/* more stack than a record can carry: trimmed, still decodable */
	in.stack_len = sizeof(stack);
	tf_synth_sample(&b, &in);
	assert_true(b.len <= UINT16_MAX);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_true(ev.sample.stack_size > 60000);
	assert_int_equal(ev.sample.stack_size % 8, 0);
	assert_memory_equal(ev.sample.stack, stack, ev.sample.stack_size);

	/* a 32-bit task: ABI none, no registers and no stack */
	in.regs = NULL;
	in.stack_len = 1001;
	tf_synth_sample(&b, &in);
	assert_int_equal(tf_spool_decode(&l, header(&b), &ev), 1);
	assert_null(ev.sample.regs);
	assert_int_equal(ev.sample.stack_size, 0);
	assert_int_equal(ev.sample.ip, 0x401000);
	tf_buf_free(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_side_band),
		cmocka_unit_test(test_sample),
		cmocka_unit_test(test_offcpu_sample),
		cmocka_unit_test(test_sample_with_stack),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
