/*
 * test_alloc.c - the allocation sampler's two sides that need no process
 * of their own: which programs it must stay out of (execcheck.c, on real
 * binaries: a dynamic one, a script, a static one, an AddressSanitizer
 * build), how an LD_PRELOAD loses it, and how a process's file becomes
 * spool records (alloc.c): every thread's counts as deltas at their
 * moments, the slot's last word, samples, frees, notes, and a record a
 * killed process left half written.
 */
#include "unit.h"
#include "record/record_int.h"
#include "record/preload/execcheck.h"
#include "record/preload/format.h"

#include <fcntl.h>
#include <sys/stat.h>

static void test_exec_check(void **state)
{
	(void)state;
	char why[64], *dir = unit_tmpdir(), path[512];

	assert_int_equal(tf_exec_check("/bin/sh", why, sizeof(why)), TF_EXEC_OK);
	/* Go's allocations are its runtime's: RSS only (the toolchain's own
	 * binary is a Go program, where installed) */
	assert_false(tf_exec_is_go("/bin/sh"));
	if (access("/usr/lib/go/bin/go", X_OK) == 0)
		assert_true(tf_exec_is_go("/usr/lib/go/bin/go"));
	assert_int_equal(tf_exec_check("/nonexistent/program", why, sizeof(why)), TF_EXEC_UNKNOWN);
	/* a script: its interpreter */
	snprintf(path, sizeof(path), "%s/script", dir);
	unit_sh("printf '#!/bin/sh\\necho hi\\n' > %s", path);
	assert_int_equal(tf_exec_check(path, why, sizeof(why)), TF_EXEC_OK);
	snprintf(path, sizeof(path), "%s/prog.c", dir);
	unit_sh("printf 'int main(void) { return 0; }\\n' > %s", path);
	/* where the toolchain builds them: a static program, an ASan one */
	if (system("cd /tmp && cc -static -o /dev/null -x c - </dev/null 2>/dev/null; true") == 0) {
		char cmd[1200];
		snprintf(cmd, sizeof(cmd), "cc -static -o %s/static %s/prog.c 2>/dev/null", dir, dir);
		if (system(cmd) == 0) {
			snprintf(path, sizeof(path), "%s/static", dir);
			assert_int_equal(tf_exec_check(path, why, sizeof(why)), TF_EXEC_STATIC);
		}
		snprintf(cmd, sizeof(cmd), "cc -fsanitize=address -o %s/asan %s/prog.c 2>/dev/null", dir,
			 dir);
		if (system(cmd) == 0) {
			snprintf(path, sizeof(path), "%s/asan", dir);
			assert_int_equal(tf_exec_check(path, why, sizeof(why)), TF_EXEC_SANITIZER);
			assert_true(strncmp(why, "libasan.so", 10) == 0);
		}
	}
	unit_rmtree(dir);
}

static void test_strip_preload(void **state)
{
	(void)state;
	char out[256];
	assert_int_equal(tf_exec_strip_preload("/t/libtestflame-alloc.so", "libtestflame-alloc.so",
					       out, sizeof(out)), 0);
	assert_string_equal(out, "");
	assert_true(tf_exec_strip_preload("/t/libtestflame-alloc.so:/u/libjemalloc.so",
					  "libtestflame-alloc.so", out, sizeof(out)) > 0);
	assert_string_equal(out, "/u/libjemalloc.so");
	/* spaces separate too; another library of a similar name stays */
	assert_true(tf_exec_strip_preload("libx.so /t/libtestflame-alloc.so libtestflame-alloc.so.1",
					  "libtestflame-alloc.so", out, sizeof(out)) > 0);
	assert_string_equal(out, "libx.so:libtestflame-alloc.so.1");
	assert_int_equal(tf_exec_strip_preload("/a/very/long/library.so", "x.so", out, 8), -1);
}

/* A process's file as the sampler writes it, records appended by hand. */
typedef struct {
	tf_buf b;
} file;

static void rec(file *f, const void *r, size_t len)
{
	tf_buf_put(&f->b, r, len);
}

static void mark(file *f, uint32_t tid, uint64_t time, uint64_t allocs, uint64_t bytes,
		 uint64_t frees, uint32_t kind)
{
	struct tf_alloc_mark m;
	memset(&m, 0, sizeof(m));
	m.h.type = TF_ALLOC_REC_MARK;
	m.h.size = sizeof(m);
	m.h.tid = tid;
	m.h.time = time;
	m.counts.allocs = allocs;
	m.counts.bytes = bytes;
	m.counts.frees = frees;
	m.kind = kind;
	rec(f, &m, sizeof(m));
}

typedef struct {
	TF_VEC(tf_rec_event) ev;
	char notes[1024];
	uint64_t alloc_size, alloc_ptr, free_ptr, hwm;
	uint32_t nips;
} seen;

static int collect(void *ctx, const tf_rec_event *ev)
{
	seen *s = ctx;
	tf_vec_push(&s->ev, *ev);
	if (ev->type == TF_REC_NOTE)
		snprintf(s->notes + strlen(s->notes), sizeof(s->notes) - strlen(s->notes), "%s|",
			 ev->note.text);
	if (ev->type == TF_REC_ALLOC) {
		s->alloc_size = ev->sample.alloc->size;
		s->alloc_ptr = ev->sample.alloc->ptr;
		s->nips = ev->sample.nuser;
	}
	if (ev->type == TF_REC_ALLOC_FREE)
		s->free_ptr = ev->alloc_free.ptr;
	if (ev->type == TF_REC_ALLOC_PROC)
		s->hwm = ev->alloc_proc.hwm_kb;
	return 0;
}

static void test_reader(void **state)
{
	(void)state;
	tf_alloc *a = NULL;
	file f = { TF_BUF_INIT };
	struct tf_alloc_header h;
	struct tf_alloc_slot slot;

	assert_int_equal(tf_alloc_open(&a, 0, 0, NULL), 0);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TF_ALLOC_MAGIC, 8);
	h.version = TF_ALLOC_VERSION;
	h.header_size = TF_ALLOC_HEADER;
	h.pid = 4321;
	h.start_ns = 50;
	h.rate = 524288;
	h.nslots = TF_ALLOC_SLOTS;
	h.slots_used = 1;
	h.hwm_kb = 2048;
	snprintf(h.program, sizeof(h.program), "/bin/prog");
	tf_buf_put(&f.b, &h, sizeof(h));
	while (f.b.len < TF_ALLOC_HEADER)
		tf_buf_putc(&f.b, 0);
	/* the thread's last word, in its slot: 10 allocations, 1000 bytes,
	 * 7 frees, and its end */
	memset(&slot, 0, sizeof(slot));
	slot.tid = 4321;
	slot.state = 2;
	slot.allocs = 10;
	slot.bytes = 1000;
	slot.frees = 7;
	slot.end_ns = 900;
	tf_buf_put(&f.b, &slot, sizeof(slot));
	while (f.b.len < TF_ALLOC_RECORDS)
		tf_buf_putc(&f.b, 0);
	/* a sample at 100 (4 allocations so far), a tick at 200 (6) */
	struct {
		struct tf_alloc_sample s;
		uint64_t ips[2];
	} sm;
	memset(&sm, 0, sizeof(sm));
	sm.s.h.type = TF_ALLOC_REC_SAMPLE;
	sm.s.h.size = sizeof(sm);
	sm.s.h.tid = 4321;
	sm.s.h.time = 100;
	sm.s.size = 100;
	sm.s.ptr = 0xabc0;
	sm.s.rate = 1024;
	sm.s.counts.allocs = 4;
	sm.s.counts.bytes = 400;
	sm.s.counts.frees = 1;
	sm.s.nips = 2;
	sm.ips[0] = 0x401000;
	sm.ips[1] = 0x402000;
	rec(&f, &sm, sizeof(sm));
	mark(&f, 4321, 200, 6, 600, 3, TF_ALLOC_MARK_TICK);
	struct tf_alloc_free fr;
	memset(&fr, 0, sizeof(fr));
	fr.h.type = TF_ALLOC_REC_FREE;
	fr.h.size = sizeof(fr);
	fr.h.tid = 4321;
	fr.h.time = 300;
	fr.ptr = 0xabc0;
	rec(&f, &fr, sizeof(fr));
	/* a record its process died writing: type 0, skipped by its size */
	mark(&f, 4321, 400, 9, 900, 6, TF_ALLOC_MARK_TICK);
	memset(f.b.ptr + f.b.len - sizeof(struct tf_alloc_mark), 0, 2);
	struct {
		struct tf_alloc_note n;
		char text[16];
	} nt;
	memset(&nt, 0, sizeof(nt));
	nt.n.h.type = TF_ALLOC_REC_NOTE;
	nt.n.h.pad = 1;
	nt.n.h.size = sizeof(nt);
	nt.n.h.tid = 4321;
	nt.n.h.time = 500;
	snprintf(nt.text, sizeof(nt.text), "said so");
	rec(&f, &nt, sizeof(nt));
	/* the header's tail: the records' length */
	((struct tf_alloc_header *)f.b.ptr)->tail = f.b.len - TF_ALLOC_RECORDS;
	/* and the zeros fallocate leaves after them */
	for (int i = 0; i < 4096; i++)
		tf_buf_putc(&f.b, 0);
	char *path = tf_xasprintf("%s/d/4321.0", tf_alloc_dir(a));
	assert_int_equal(tf_file_write_atomic(path, f.b.ptr, f.b.len), 0);
	free(path);

	tf_recording *r = tf_xcalloc(1, sizeof(*r));
	tf_record_info info;
	memset(&info, 0, sizeof(info));
	assert_int_equal(tf_spool_open(&r->spool), 0);
	assert_int_equal(tf_alloc_collect(a, r->spool, &info), 0);
	assert_int_equal(tf_spool_finish(r->spool), 0);
	assert_int_equal(info.alloc_processes, 1);
	assert_int_equal(info.alloc_samples, 1);
	assert_true(info.memory);

	seen s;
	memset(&s, 0, sizeof(s));
	assert_int_equal(tf_recording_replay(r, collect, &s), 0);
	assert_int_equal(s.alloc_size, 100);
	assert_int_equal(s.alloc_ptr, 0xabc0);
	assert_int_equal(s.nips, 2);
	assert_int_equal(s.free_ptr, 0xabc0);
	assert_int_equal(s.hwm, 2048);
	assert_string_equal(s.notes, "/bin/prog: said so|");
	/* the counts, as deltas in time order: 4 by 100, 2 more by 200, the
	 * rest (the half-written record's too) at the thread's end */
	uint64_t want[3][4] = { { 100, 4, 400, 1 }, { 200, 2, 200, 2 }, { 900, 4, 400, 4 } };
	size_t k = 0;
	for (size_t i = 0; i < s.ev.n; i++) {
		const tf_rec_event *ev = &s.ev.v[i];
		if (ev->type != TF_REC_ALLOC_COUNT)
			continue;
		assert_true(k < 3);
		assert_int_equal(ev->pid, 4321);
		assert_int_equal(ev->time, want[k][0]);
		assert_int_equal(ev->alloc_count.allocs, want[k][1]);
		assert_int_equal(ev->alloc_count.bytes, want[k][2]);
		assert_int_equal(ev->alloc_count.frees, want[k][3]);
		k++;
	}
	assert_int_equal(k, 3);
	tf_vec_free(&s.ev);
	tf_buf_free(&f.b);
	tf_recording_free(r);
	tf_alloc_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exec_check),
		cmocka_unit_test(test_strip_preload),
		cmocka_unit_test(test_reader),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
