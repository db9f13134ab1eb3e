/*
 * record.c - a suite recorded under the sampler, for `record`, `run` and
 * `merge` (run.h): its settings over the config over defaults, its
 * context, one run of it (the runners asked which tests ran, the profile
 * built per test and tagged), the run file with its summary; and the
 * engine's voice, the caller's callbacks.
 */
#include "run/run_int.h"
#include "testflame/symbolize.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- the engine's voice ---- */

static void say(const tf_run_io *io, tf_notice_level level, const char *fmt, va_list ap)
{
	if (io)
		tf_vnotice(io->notice, io->ctx, level, fmt, ap);
}

void tf_run_note(const tf_run_io *io, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(io, TF_NOTICE_INFO, fmt, ap);
	va_end(ap);
}

void tf_run_warn(const tf_run_io *io, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(io, TF_NOTICE_WARN, fmt, ap);
	va_end(ap);
}

void tf_run_verbose(const tf_run_io *io, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(io, TF_NOTICE_VERBOSE, fmt, ap);
	va_end(ap);
}

void tf_run_error(const tf_run_io *io, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(io, TF_NOTICE_ERROR, fmt, ap);
	va_end(ap);
}

void tf_run_print(const tf_run_io *io, const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT;
	va_list ap;

	if (!io || !io->print)
		return;
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	io->print(io->ctx, b.ptr ? b.ptr : "", b.len);
	tf_buf_free(&b);
}

int tf_run_fail(const tf_run_io *io, int rc)
{
	tf_run_error(io, "%s", tf_error_last());
	return rc == TF_EUSAGE ? TF_EXIT_USAGE : TF_EXIT_ERROR;
}

/* ---- the suite's settings ---- */

void tf_run_suite_init(tf_run_suite *s, const tf_run_io *io)
{
	memset(s, 0, sizeof(*s));
	s->io = io;
	tf_record_opts_init(&s->ro);
	tf_attribute_opts_init(&s->ao);
}

static const char *pick(const char *flag, const char *cfg, const char *dflt)
{
	return flag ? flag : cfg ? cfg : dflt;
}

static char *join_command(char **cmd)
{
	tf_buf b = TF_BUF_INIT;
	for (char **a = cmd; *a; a++) {
		if (a != cmd)
			tf_buf_putc(&b, ' ');
		tf_buf_puts(&b, *a);
	}
	return tf_buf_detach(&b);
}

int tf_run_prepare(tf_run_suite *o, char **cmd)
{
	tf_config *cfg = NULL;
	const char *event, *sampler, *callgraph, *follow, *off_cpu;
	int rc;

	rc = tf_run_config_load(&cfg, o->config);
	if (rc)
		return rc;
	o->cfg = cfg;
	/* --target is the documented override, above what CI says */
	if (o->target_branch)
		setenv("TESTFLAME_BASE_BRANCH", o->target_branch, 1);

	/* the command: after "--", else the config's */
	if (cmd && cmd[0]) {
		o->cmd = cmd;
	} else if (cfg->command_argv && cfg->command_shell) {
		char **v = tf_xcalloc(4, sizeof(char *));
		v[0] = tf_xstrdup("/bin/sh");
		v[1] = tf_xstrdup("-c");
		v[2] = tf_xstrdup(cfg->command_argv[0]);
		for (int i = 0; i < 3; i++)
			tf_vec_push(&o->owned, v[i]);
		tf_vec_push(&o->owned, (char *)v);
		o->cmd = v;
	} else if (cfg->command_argv && cfg->command_argv[0]) {
		o->cmd = cfg->command_argv;
	} else {
		return tf_error_set(TF_EUSAGE, "no command to run: give one after '--', or set "
				    "'command' in %s", cfg->path ? cfg->path : ".testflame.yml");
	}
	o->command = join_command(o->cmd);

	event = pick(o->event, cfg->event, "auto");
	sampler = pick(o->sampler, cfg->sampler, "auto");
	callgraph = pick(o->callgraph, cfg->call_graph, "auto");
	follow = pick(o->follow, cfg->follow, "auto");
	off_cpu = pick(o->off_cpu, cfg->off_cpu, "auto");
	if (tf_event_parse(&o->ro.event, event) || tf_sampler_parse(&o->ro.sampler, sampler) ||
	    tf_callgraph_parse(&o->ro.callgraph, callgraph) || tf_follow_parse(&o->ro.follow, follow) ||
	    tf_offcpu_parse(&o->ro.offcpu, off_cpu))
		return tf_error_set(TF_EUSAGE, "invalid event, sampler, follow, off-cpu or call graph "
				    "in the config");
	o->ro.offcpu_max = (unsigned)(o->off_cpu_max ? o->off_cpu_max : cfg->off_cpu_max);
	o->ro.freq = (unsigned)(o->freq ? o->freq : cfg->freq ? cfg->freq : TF_DEFAULT_FREQ);
	o->ro.stack_bytes = (unsigned)(o->stack_size ? o->stack_size : 8192);
	o->ro.python = !o->no_python_frames;
	o->ro.memory = o->memory || tf_config_bool(cfg->memory, false) ||
		       tf_config_bool(cfg->gate.memory, false);
	if (o->memory_rate) {
		double rate;
		if (!tf_config_parse_size(o->memory_rate, &rate) || rate < 1 || rate > 1e9)
			return tf_error_set(TF_EUSAGE, "--memory-rate must be a size from 1 byte to "
					    "1GiB, such as 512KiB, not '%s'", o->memory_rate);
		o->ro.alloc_rate = (unsigned)rate;
	}

	o->sources = TF_SOURCE_ALL;
	if (o->split && tf_attribute_parse_sources(o->split, &o->sources))
		return tf_error_wrap(TF_EUSAGE, "--split");
	if (!o->split && cfg->attribution.markers == 0)
		o->sources &= ~(unsigned)TF_SOURCE_MARKERS;
	o->ro.markers = (o->sources & TF_SOURCE_MARKERS) != 0;

	/* without a name, what the command runs: not its flags */
	char *derived = NULL;
	if (!o->suite && !cfg->suite) {
		derived = tf_attribute_suite_name((const char *const *)o->cmd);
		tf_vec_push(&o->owned, derived);
	}
	o->suite_name = pick(o->suite, cfg->suite, derived);
	/* without --test, work no test claims is "[outside tests]" */
	o->ao.test_name = pick(o->test, cfg->test, NULL);
	for (size_t i = 0; i < o->runner_reports.items.n; i++)
		tf_vec_push(&o->reports, o->runner_reports.items.v[i]);
	for (char **r = cfg->attribution.runner_reports; r && *r; r++)
		tf_vec_push(&o->reports, *r);
	tf_vec_push(&o->reports, NULL);
	o->ao.suite = o->suite_name;
	o->ao.command = o->command;
	o->ao.callgraph = o->ro.callgraph;
	o->ao.sources = o->sources;
	o->ao.frame_presets = (const char *const *)cfg->attribution.frames;
	o->ao.drivers = (const char *const *)cfg->attribution.drivers;
	o->ao.build_tools = (const char *const *)cfg->attribution.build_tools;
	for (size_t i = 0; i < cfg->attribution.patterns.n; i++) {
		tf_frame_pattern fp = { cfg->attribution.patterns.v[i].regex,
					cfg->attribution.patterns.v[i].name };
		tf_vec_push(&o->patterns, fp);
	}
	o->ao.patterns = o->patterns.v;
	o->ao.npatterns = o->patterns.n;

	rc = tf_context_detect(&o->ctx, NULL, environ, cfg);
	if (rc)
		return rc;
	/* record only tags the run with what git knows; run depends on it */
	for (size_t i = 0; i < o->ctx->warnings.n; i++) {
		if (o->needs_git)
			tf_run_warn(o->io, "%s", o->ctx->warnings.v[i]);
		else
			tf_run_verbose(o->io, "%s", o->ctx->warnings.v[i]);
	}
	return 0;
}

/* What the recorder says while the suite runs is said once it ended: a
 * line of testflame's in the middle of the suite's own output (a runner's
 * line of dots, a test's half-written line) would change what the suite
 * printed. Said in the order it came. */
typedef struct {
	tf_notice_level level;
	char *msg;
} held_notice;

typedef struct {
	const tf_run_io *io;
	TF_VEC(held_notice) held;
} notice_hold;

static void hold_notice(void *ctx, tf_notice_level level, const char *msg)
{
	notice_hold *h = ctx;
	held_notice n = { level, tf_xstrdup(msg) };
	tf_vec_push(&h->held, n);
}

static void say_held(notice_hold *h)
{
	for (size_t i = 0; i < h->held.n; i++) {
		if (h->io && h->io->notice)
			h->io->notice(h->io->ctx, h->held.v[i].level, h->held.v[i].msg);
		free(h->held.v[i].msg);
	}
	tf_vec_free(&h->held);
}

static void on_live(void *ctx, const tf_rec_event *ev)
{
	tf_symbolizer_live(ctx, ev);
}

bool tf_run_record_one(tf_run_result *res, tf_run_suite *o, int *status)
{
	const tf_run_io *io = o->io;
	tf_symbolizer *sym = NULL;
	tf_symbolizer_opts so;
	tf_recording *rec = NULL;
	int rc;

	memset(res, 0, sizeof(*res));
	*status = TF_EXIT_ERROR;
	tf_symbolizer_opts_init(&so);
	char *persist = tf_user_cache_dir();
	so.persist_dir = persist;
	rc = tf_symbolizer_new(&sym, &so);
	free(persist);
	if (rc) {
		tf_run_fail(io, rc);
		return false;
	}
	o->ro.argv = o->only ? o->only->argv : o->cmd;
	notice_hold held = { io, { 0 } };
	o->ro.notice = io && io->notice ? hold_notice : NULL;
	o->ro.notice_ctx = &held;
	o->ro.live = on_live;
	o->ro.live_ctx = sym;
	o->ro.progress = io ? io->progress : NULL;
	o->ro.progress_ctx = io ? io->ctx : NULL;

	/* the runners we know report which tests ran (inject.c) */
	tf_runner_session *runners = NULL;
	tf_runner_tests_free(&o->runner_tests); /* a repeat's are its own */
	struct timespec started;
	clock_gettime(CLOCK_REALTIME, &started);
	rc = tf_runner_session_new(&runners, (const char *const *)environ,
				   o->cfg->attribution.inject != 0);
	if (rc) {
		/* the runners' reports are a help, not the recording: without a
		 * place for them (a full or read-only TMPDIR) the suite runs
		 * as it is, and the spool in the same TMPDIR says what is wrong */
		tf_run_verbose(io, "the runners are not asked for their reports: %s",
			       tf_error_last());
		tf_error_clear();
		runners = NULL;
	}
	o->ro.extra_env = tf_runner_session_env(runners);
	/* a confirmation's filters (GTEST_FILTER, ...) after the session's */
	char **env = NULL;
	if (o->only && o->only->env && o->only->env[0]) {
		TF_VEC(char *) e = { 0 };
		for (char *const *v = o->ro.extra_env; v && *v; v++)
			tf_vec_push(&e, *v);
		for (char *const *v = o->only->env; *v; v++)
			tf_vec_push(&e, *v);
		tf_vec_push(&e, NULL);
		o->ro.extra_env = env = e.v;
	}
	o->ro.scratch_dir = tf_runner_session_dir(runners);
	/* Node's perf maps, where testflame turned them on, go once read */
	tf_symbolizer_remove_node_maps(sym, tf_runner_session_node_maps(runners));

	uint64_t t0 = tf_now_ns();
	rc = tf_record_run(&rec, &o->ro);
	if (o->ro.progress) /* the recording is over: its line may go */
		o->ro.progress(o->ro.progress_ctx, NULL);
	say_held(&held);
	o->ro.notice = io ? io->notice : NULL;
	o->ro.notice_ctx = io ? io->ctx : NULL;
	if (rc) {
		*status = tf_run_fail(io, rc);
		goto done;
	}
	res->info = *tf_recording_info(rec);
	if (res->info.exec_failed) {
		tf_run_error(io, "%s", tf_error_last());
		*status = res->info.exit_status;
		goto done;
	}
	if (res->info.stopped) {
		/* the suite's own failure first; else ours */
		tf_run_error(io, "%s; recording stopped, the command ran on to its end (exit "
			     "status %d)", tf_error_last(), res->info.exit_status);
		*status = res->info.exit_status ? res->info.exit_status : TF_EXIT_ERROR;
		goto done;
	}
	tf_run_verbose(io, "recorded %llu samples (%s), %llu bytes of records",
		    (unsigned long long)res->info.samples, res->info.rung,
		    (unsigned long long)res->info.spool_bytes);

	uint64_t t1 = tf_now_ns();
	{
		struct rusage ru;
		if (getrusage(RUSAGE_SELF, &ru) == 0)
			tf_run_verbose(io, "testflame's own CPU while recording: %.1f ms user, "
				       "%.1f ms system, woken %ld times",
				       (double)ru.ru_utime.tv_sec * 1e3 + (double)ru.ru_utime.tv_usec / 1e3,
				       (double)ru.ru_stime.tv_sec * 1e3 + (double)ru.ru_stime.tv_usec / 1e3,
				       ru.ru_nvcsw);
	}
	rc = tf_runner_session_collect(runners, &o->runner_tests, o->reports.v,
				       (uint64_t)started.tv_sec * 1000000000ULL +
					       (uint64_t)started.tv_nsec);
	/* read: their directory goes now, not after the profile is built, so
	 * that a testflame killed later leaves nothing in TMPDIR */
	tf_runner_session_free(runners);
	runners = NULL;
	o->ro.extra_env = NULL;
	o->ro.scratch_dir = NULL;
	if (rc) {
		*status = tf_run_fail(io, rc);
		goto done;
	}
	o->ao.runner_tests = &o->runner_tests;
	o->ao.no_injection = !o->cfg->attribution.inject;
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	rc = tf_attribute_build(&res->profile, rec, sym, &o->ao, &res->stats);
	tf_symbolizer_save(sym);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	tf_run_verbose(io, "ran the command in %.3f s; built the profile in %.1f ms, %.1f ms of "
		       "CPU (%llu samples, %llu frames)", (double)(t1 - t0) / 1e9,
		       (double)(tf_now_ns() - t1) / 1e6,
		       (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6,
		       (unsigned long long)res->stats.samples,
		       (unsigned long long)res->stats.frames);
	if (io && io->verbosity > 0) {
		tf_symbolizer_stats ss;
		tf_symbolizer_stats_get(sym, &ss);
		tf_run_verbose(io, "symbol cache: kernel symbols %s; %llu debug file(s) from the "
			       "cache, %llu uncompressed into it; %llu of %llu addresses "
			       "answered by the kept symbols of %llu binaries (%llu CUs' "
			       "indexes), %llu binaries' kept",
			       ss.kallsyms_cached ? "from the cache" : "read from /proc/kallsyms",
			       (unsigned long long)ss.debug_cached,
			       (unsigned long long)ss.debug_uncompressed,
			       (unsigned long long)ss.symcache_hits, (unsigned long long)ss.symlocs,
			       (unsigned long long)ss.symcache_loaded,
			       (unsigned long long)ss.symcache_cus,
			       (unsigned long long)ss.symcache_saved);
	}
	if (rc) {
		*status = tf_run_fail(io, rc);
		goto done;
	}
	if (o->ctx)
		tf_context_apply_meta(res->profile, o->ctx);
	*status = res->info.exit_status;
done:
	tf_recording_free(rec);
	tf_symbolizer_free(sym);
	tf_runner_session_free(runners);
	free(env); /* its strings are the session's and the selection's */
	o->ro.extra_env = NULL;
	o->ro.scratch_dir = NULL;
	return res->profile != NULL;
}

/*
 * Frames without a symbol and stacks cut short, counted apart for the tests
 * and for the work outside them (the harness: ctest, a stripped shell, the
 * runner's libraries). Only the tests' can be helped by rebuilding them,
 * so only theirs get advice; the harness's are one note, since they change
 * no test's profile.
 */
static void losses(const tf_run_io *io, const tf_attribute_stats *st)
{
	uint64_t frames = st->frames - st->frames_outside;
	uint64_t unres = st->unresolved - st->unresolved_outside;
	uint64_t samples = st->samples - st->samples_outside;
	uint64_t cut = st->truncated - st->truncated_outside;
	bool harness_unres = st->frames_outside && st->unresolved_outside * 10 > st->frames_outside;
	bool harness_cut = st->samples_outside && st->truncated_outside * 5 > st->samples_outside;

	if (frames && unres * 10 > frames) {
		char names[3 * 66] = "";
		for (size_t i = 0; i < TF_ARRAY_SIZE(st->missing_symbols) && st->missing_symbols[i][0]; i++)
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s'%s'",
				 i ? ", " : "", st->missing_symbols[i]);
		tf_run_warn(io, "%llu of the tests' %llu frames have no symbol, most in %s: build them "
			    "with -g, or install the -dbg/-dbgsym package ('testflame doctor PROGRAM' "
			    "checks one)", (unsigned long long)unres, (unsigned long long)frames, names);
	}
	if (samples && cut * 5 > samples)
		tf_run_warn(io, "%llu of the tests' %llu stacks were cut short (deeper than the stack "
			    "copied per sample: --stack-size, up to 65000; or code without unwind "
			    "information)", (unsigned long long)cut, (unsigned long long)samples);
	if (harness_unres || harness_cut) {
		char what[160] = "";
		if (harness_unres)
			snprintf(what, sizeof(what), "%llu of its %llu frames have no symbol",
				 (unsigned long long)st->unresolved_outside,
				 (unsigned long long)st->frames_outside);
		if (harness_cut)
			snprintf(what + strlen(what), sizeof(what) - strlen(what),
				 "%s%llu of its %llu stacks were cut short", harness_unres ? " and " : "",
				 (unsigned long long)st->truncated_outside,
				 (unsigned long long)st->samples_outside);
		tf_run_note(io, "the work outside the tests (the harness, build steps): %s; that "
			    "changes no test's profile", what);
	}
}

int tf_run_write(const tf_run_result *res, const tf_run_suite *s, const char *path)
{
	const tf_run_io *io = s->io;
	char *dir = tf_xstrdup(path);
	int rc = 0;

	if (strchr(path, '/'))
		rc = tf_mkdir_p(dirname(dir), 0755);
	free(dir);
	uint64_t t0 = tf_now_ns();
	struct timespec c0, c1;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	if (!rc)
		rc = tf_pprof_write(res->profile, path);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	tf_run_verbose(io, "wrote the run file in %.1f ms, %.1f ms of CPU",
		       (double)(tf_now_ns() - t0) / 1e6,
		       (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6);
	if (rc) {
		tf_run_fail(io, rc);
		return rc;
	}
	tf_run_note(io, "wrote '%s': %llu samples, %llu tests, %llu processes, %llu threads "
		 "(%s at %u Hz, %s)%s",
		 path, (unsigned long long)res->stats.samples, (unsigned long long)res->stats.tests,
		 (unsigned long long)res->stats.processes, (unsigned long long)res->stats.threads,
		 tf_event_name(res->info.event), res->info.freq, res->info.rung,
		 res->info.interrupted ? ", interrupted" : "");
	if (res->info.lost || res->info.throttled)
		tf_run_warn(io, "the kernel lost %llu and throttled %llu samples",
			    (unsigned long long)res->info.lost,
			    (unsigned long long)res->info.throttled);
	losses(io, &res->stats);
	if (res->info.markers_ignored)
		tf_run_warn(io, "%llu lines in $TESTFLAME_MARKERS were not markers "
			 "(expected 'begin NAME' or 'end NAME')",
			 (unsigned long long)res->info.markers_ignored);
	return 0;
}

char *tf_run_kind(const tf_run_result *res)
{
	struct utsname un;
	const char *arch = uname(&un) == 0 ? un.machine : "unknown";
	return tf_store_kind(tf_event_name(res->info.event), tf_sampler_name(res->info.sampler),
			     arch);
}

void tf_run_result_free(tf_run_result *res)
{
	tf_profile_free(res->profile);
	res->profile = NULL;
}

void tf_run_suite_free(tf_run_suite *o)
{
	tf_config_free(o->cfg);
	tf_context_free(o->ctx);
	free(o->command);
	for (size_t i = 0; i < o->owned.n; i++)
		free(o->owned.v[i]);
	tf_vec_free(&o->owned);
	tf_vec_free(&o->patterns);
	tf_vec_free(&o->reports);
	tf_vec_free(&o->runner_reports.items);
	tf_runner_tests_free(&o->runner_tests);
	o->cfg = NULL;
	o->ctx = NULL;
	o->command = NULL;
}
