/*
 * cmd_record.c - `testflame record [options] -- CMD [ARGS...]`: run a command
 * under the sampler and write one run file (gzip pprof); and the recording
 * options `run` shares.
 *
 * The command's stdin, stdout, stderr, environment and working directory
 * are its own; testflame speaks only on stderr, one line at a time, and
 * exits with the command's own exit status (128+N for a signal death), so
 * it can wrap any test command in a script or a CI step unnoticed.
 */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const record_usage[] = {
	"testflame record [options] [-- CMD [ARGS...]]",
	"",
	"Runs CMD (or the config's command) under the sampling profiler and writes",
	"one run file, attributed per test. Exits with CMD's exit status.",
	NULL,
};

tf_option *tf_cli_record_options(tf_run_suite *o, tf_cli_out *out)
{
	const tf_option opts[] = {
		TF_OPT_INT(0, "freq", &o->freq, "HZ",
			   "samples per second of CPU time (default 249)", 1, 100000),
		TF_OPT_STRING(0, "event", &o->event, "EVENT",
			      "what to sample (auto: instructions where a PMU exists, else cpu-clock)",
			      .choices = tf_event_names),
		TF_OPT_STRING(0, "sampler", &o->sampler, "KIND",
			      "perf_event, or ptrace where perf is refused", .choices = tf_sampler_names),
		TF_OPT_STRING(0, "follow", &o->follow, "HOW",
			      "how perf events reach every process: a cgroup of the command's "
			      "own where allowed (auto), only that (cgroup), or inherited, "
			      "as perf record does", .choices = tf_follow_names),
		TF_OPT_STRING(0, "off-cpu", &o->off_cpu, "WHEN",
			      "record the time threads wait, with where they wait (auto: "
			      "where the kernel allows it)", .choices = tf_offcpu_names),
		TF_OPT_INT(0, "off-cpu-max", &o->off_cpu_max, "RATE",
			   "switch-outs a second per CPU recorded with their stacks; beyond it "
			   "one in N, the others' time counted whole (default 2000)", 1, 1000000),
		TF_OPT_STRING(0, "call-graph", &o->callgraph, "MODE",
			      "frame pointers, DWARF unwinding, or auto (per sample)",
			      .choices = tf_callgraph_names),
		TF_OPT_INT(0, "stack-size", &o->stack_size, "BYTES",
			   "user stack copied per sample for DWARF unwinding (default 8192)", 512, 65000),
		TF_OPT_FLAG(0, "no-python-frames", &o->no_python_frames,
			    "keep CPython processes' samples native: do not read the interpreter's own frames"),
		TF_OPT_FLAG(0, "memory", &o->memory,
			    "measure each test's allocations and peak memory (testflame's allocation "
			    "sampler, preloaded; default: memory: in .testflame.yml, or gate.memory)"),
		TF_OPT_STRING(0, "memory-rate", &o->memory_rate, "BYTES",
			      "mean bytes allocated between two sampled allocations (default 512KiB)"),
		TF_OPT_STRING(0, "test", &o->test, "NAME",
			      "the test name of samples no other source attributes"),
		TF_OPT_LIST(0, "runner-report", &o->runner_reports, "PATH",
			    "a test report the suite writes (JUnit XML, go test -json, TAP; "
			    "a glob; repeatable): the tests that ran"),
		TF_OPT_STRING(0, "split", &o->split, "LIST",
			      "how to find tests: markers,frames,processes (default all; none)"),
		TF_OPT_STRING(0, "suite", &o->suite, "NAME",
			      "the suite's name, which keys its baselines (default: suite: in "
			      ".testflame.yml, else the program and its targets: 'make check')"),
		TF_OPT_STRING(0, "config", &o->config, "FILE",
			      "the config file (default: .testflame.yml at the repository root)"),
		TF_OPT_QUIET(&out->quiet, out->quiet_help ? out->quiet_help : "only errors"),
		TF_OPT_VERBOSE(&out->verbose, "say more (repeat for more)"),
		TF_OPTS_END,
	};

	return tf_cli_options_dup(opts, sizeof(opts));
}

int tf_cli_record_args(const char *const *usage, const char *name, char **argv, int nargs,
		       int dashdash)
{
	if (dashdash < 0 && nargs > 1)
		return tf_usage_error(usage, "missing '--' before the command (try: testflame %s -- %s ...)",
				      name, argv[1]);
	if (dashdash > 1)
		return tf_usage_error(usage, "unexpected argument '%s' before '--'", argv[1]);
	if (dashdash == 1 && nargs < 2)
		return tf_usage_error(usage, "no command after '--'");
	return 0;
}

int cmd_record(int argc, char **argv)
{
	tf_cli_out out = { 0 };
	tf_run_io io = { 0 };
	tf_run_suite s;
	tf_option *rec_opts;
	const char *output = "testflame-out/run.pb.gz";
	int dashdash, nargs, status, rc;
	tf_run_result res;

	tf_run_suite_init(&s, &io);
	rec_opts = tf_cli_record_options(&s, &out);
	const tf_option opts[] = {
		TF_OPT_STRING('o', "output", &output, "FILE",
			      "where to write the run file (default testflame-out/run.pb.gz)"),
		TF_OPT_INCLUDE(rec_opts),
		TF_OPTS_END,
	};

	nargs = tf_parse_options(argc, argv, opts, record_usage, TF_PARSE_STOP_AT_NONOPT,
				 &dashdash);
	status = nargs == -2 ? TF_EXIT_OK : nargs < 0 ? TF_EXIT_USAGE
		 : tf_cli_record_args(record_usage, "record", argv, nargs, dashdash);
	if (nargs < 0 || status)
		goto out;
	tf_cli_io(&io, &out);
	if ((rc = tf_run_prepare(&s, nargs > 1 ? argv + 1 : NULL))) {
		status = tf_fail(rc);
		goto out;
	}
	/* false: could not record, or could not start the command */
	if (tf_run_record_one(&res, &s, &status)) {
		if (tf_run_write(&res, &s, output))
			status = status ? status : TF_EXIT_ERROR;
		tf_run_result_free(&res);
	}
out:
	tf_run_suite_free(&s);
	free(rec_opts);
	return status;
}
