/*
 * test_execfiles.c - a program whose file is deleted as soon as it exits
 * (`go test`'s package binaries, any runner that cleans its temporary
 * directory) keeps its symbols: the recorder holds the file from the
 * exec on and hands it to the live hook with the exec's mapping.
 *
 * Real perf_event on a real process whose binary is really deleted; the
 * live hook is the symbolizer, as `record` and `run` wire it. The hook
 * stalls at its first record until the runner script has run the program
 * and removed it, so every record is read after the file is gone: what
 * a reader behind a loaded machine meets, here without any timing.
 */
#include "unit.h"
#include "symbolize_helpers.h"

#include "testflame/record.h"
#include "testflame/symbolize.h"

#include <fcntl.h>
#include <sys/fanotify.h>
#include <sys/mman.h>
#include <time.h>

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
		struct timespec ms = { 0, 1000000 };
		int i = 0;
		for (; i < 20000 && access(l->done, F_OK) != 0; i++)
			nanosleep(&ms, NULL);
		l->timed_out = i == 20000;
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
	tf_record_opts o;
	tf_record_opts_init(&o);
	o.argv = argv;
	o.sampler = TF_SAMPLER_PERF;
	o.live = on_live;
	o.live_ctx = &l;
	tf_recording *r = NULL;
	int rc = tf_record_run(&r, &o);
	if (rc == TF_EPERM || rc == TF_EUNSUPPORTED) {
		tf_symbolizer_free(l.sym);
		skip();
	}
	assert_int_equal(rc, 0);
	assert_int_equal(tf_recording_info(r)->exit_status, 0);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deleted_on_exit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
