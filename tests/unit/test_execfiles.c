/*
 * test_execfiles.c - what the recorder's live hook is given while the
 * command runs.
 *
 * A program whose file is deleted as soon as it exits (`go test`'s
 * package binaries, any runner that cleans its temporary directory) keeps
 * its symbols: the recorder holds the file from the exec on and hands it
 * to the live hook with the exec's mapping. Real perf_event on a real
 * process whose binary is really deleted; the live hook is the
 * symbolizer, as `record` and `run` wire it.
 *
 * The side-band records of every CPU reach the hook in the order they
 * happened, whichever CPU's ring holds them: an exec before the mappings
 * it makes, a fork before its child's exec, an exit last. Real
 * perf_event on a real shell that runs a program alternately on each CPU.
 *
 * Each hook stalls at its first record until the command is done, so
 * every later record waits in the rings and is read after the fact (the
 * file gone; both CPUs' records in one drain): what a reader behind a
 * loaded machine meets, here without any timing.
 */
#include "unit.h"
#include "symbolize_helpers.h"

#include "testflame/record.h"
#include "testflame/symbolize.h"

#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/mman.h>

typedef struct {
	tf_symbolizer *sym;
	const char *done;      /* the runner creates it when it removed the program */
	bool stalled, timed_out;
	uint32_t pid;          /* the program's */
	size_t functions;      /* its functions the symbolizer read */
	bool hot;              /* sym_hot_loop among them */
} live_ctx;

static bool is_victim(const tf_rec_event *ev)
{
	const char *f = ev->mmap.filename;
	size_t n = f ? strlen(f) : 0;
	return ev->type == TF_REC_MMAP && n > 7 && strcmp(f + n - 7, "/victim") == 0 &&
	       (!ev->mmap.prot || (ev->mmap.prot & PROT_EXEC));
}

static void on_live(void *ctx, const tf_rec_event *ev)
{
	live_ctx *l = ctx;
	if (!l->stalled) {
		l->stalled = true;
		l->timed_out = !unit_wait_for_file(l->done);
	}
	tf_symbolizer_live(l->sym, ev);
}

static void keep_hot(void *ctx, const char *name)
{
	if (strcmp(name, "sym_hot_loop") == 0)
		*(bool *)ctx = true;
}

/* The replay, as attribution reads it: the program's functions while its
 * mapping is there (as tf_go_tests_read asks for a Go test binary's). */
static int on_event(void *ctx, const tf_rec_event *ev)
{
	live_ctx *l = ctx;
	tf_symbolizer_event(l->sym, ev);
	if (is_victim(ev) && !l->pid) {
		l->pid = ev->pid;
		l->functions = tf_symbolizer_functions(l->sym, ev->pid, ev->mmap.start, keep_hot,
						       &l->hot);
	}
	return 0;
}

/* Whether this machine lets the recorder hold exec'd files (fanotify's
 * exec events need CAP_SYS_ADMIN). */
static bool may_hold(void)
{
	int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC, O_RDONLY);
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* Record `argv` with perf, `live` its hook; NULL where perf is refused. */
static tf_recording *record_live(char **argv, tf_live_fn live, void *ctx)
{
	tf_record_opts o;
	tf_record_opts_init(&o);
	o.argv = argv;
	o.sampler = TF_SAMPLER_PERF;
	o.live = live;
	o.live_ctx = ctx;
	tf_recording *r = NULL;
	int rc = tf_record_run(&r, &o);
	if (rc == TF_EPERM || rc == TF_EUNSUPPORTED)
		return NULL;
	assert_int_equal(rc, 0);
	assert_int_equal(tf_recording_info(r)->exit_status, 0);
	return r;
}

static void test_deleted_on_exit(void **state)
{
	(void)state;
	if (!may_hold())
		skip();
	char *src = fixture_path("symbolize"), *dir = unit_tmpdir();
	char *victim = tf_xasprintf("%s/victim", dir), *done = tf_xasprintf("%s/done", dir);
	unit_sh("cp '%s' '%s'", src, victim);

	/* the runner: run the program, remove it as soon as it exits */
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
			 (char *)"\"$0\" </dev/null >/dev/null && rm -f \"$0\" && : >\"$1\"",
			 victim, done, NULL };
	live_ctx l = { .done = done };
	tf_symbolizer_opts so;
	tf_symbolizer_opts_init(&so);
	assert_int_equal(tf_symbolizer_new(&l.sym, &so), 0);
	tf_recording *r = record_live(argv, on_live, &l);
	if (!r) {
		tf_symbolizer_free(l.sym);
		skip();
	}
	assert_false(l.timed_out);
	assert_int_not_equal(access(victim, F_OK), 0);

	assert_int_equal(tf_recording_replay(r, on_event, &l), 0);
	assert_int_not_equal(l.pid, 0);
	assert_true(l.functions > 0);
	assert_true(l.hot);

	tf_recording_free(r);
	tf_symbolizer_free(l.sym);
	free(victim);
	free(done);
	free(src);
	unit_rmtree(dir);
}

typedef struct {
	const char *done;      /* the shell creates it when its programs ran */
	bool stalled, timed_out;
	uint64_t last;         /* the latest time the hook was given */
	size_t events, inversions, execs;
	unsigned cpus;         /* a bit for each CPU an exec was seen on */
} order_ctx;

static void on_order(void *ctx, const tf_rec_event *ev)
{
	order_ctx *l = ctx;
	if (!l->stalled) {
		l->stalled = true;
		l->timed_out = !unit_wait_for_file(l->done);
	}
	if (!ev->time)
		return;
	l->events++;
	if (ev->time < l->last)
		l->inversions++;
	else
		l->last = ev->time;
	if (ev->type == TF_REC_COMM && ev->comm.exec && ev->comm.comm &&
	    strcmp(ev->comm.comm, "true") == 0) {
		l->execs++;
		if (ev->cpu < 32)
			l->cpus |= 1u << ev->cpu;
	}
}

static void test_side_band_in_time_order(void **state)
{
	(void)state;
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2 || system("taskset -c 1 true 2>/dev/null") != 0)
		skip(); /* one CPU: one ring, nothing to merge */
	char *dir = unit_tmpdir(), *done = tf_xasprintf("%s/done", dir);
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
			 (char *)"i=0; while [ $i -lt 40 ]; do taskset -c $((i % 2)) true; "
				 "i=$((i + 1)); done; : >\"$0\"",
			 done, NULL };
	order_ctx l = { .done = done };
	tf_recording *r = record_live(argv, on_order, &l);
	if (!r) {
		free(done);
		unit_rmtree(dir);
		skip();
	}
	assert_false(l.timed_out);
	/* the programs ran on both CPUs, each exec seen */
	assert_int_equal(l.execs, 40);
	assert_int_equal(l.cpus & 3u, 3u);
	assert_true(l.events > 40 * 3);
	assert_int_equal(l.inversions, 0);

	tf_recording_free(r);
	free(done);
	unit_rmtree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deleted_on_exit),
		cmocka_unit_test(test_side_band_in_time_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
