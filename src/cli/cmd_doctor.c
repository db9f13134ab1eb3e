/*
 * cmd_doctor.c - `testflame doctor [PROGRAM...]`: what this machine allows
 * (perf_event_paranoid, hardware counters, seccomp, ptrace, sample rate
 * limits), whether the given test programs can be symbolized, and whether
 * the checkout and the CI have what comparing and publishing need; one
 * line per check, with the exact fix for each problem.
 *
 * Exit status 0 when testflame can sample here at all (with perf, or with
 * ptrace where perf is refused) and every program given can be profiled
 * (it exists, is ELF or a script, and is not stripped); 1 when not; 2 on
 * a usage error.
 */
#include "cli_int.h"
#include "testflame/doctor.h"

static const char *const doctor_usage[] = {
	"testflame doctor [options] [PROGRAM...]",
	NULL,
};

int cmd_doctor(int argc, char **argv)
{
	tf_doctor_opts o;
	tf_doctor_report *r = NULL;
	long freq = TF_DEFAULT_FREQ;
	const char *dir = NULL;
	const tf_option opts[] = {
		TF_OPT_INT(0, "freq", &freq, "HZ",
			   "the sampling rate to check the kernel's limits against (default 249)",
			   1, 100000),
		TF_OPT_STRING('C', "dir", &dir, "DIR",
			      "check the git repository of DIR (default: the current directory)"),
		TF_OPTS_END,
	};
	int nargs, rc;

	nargs = tf_parse_options(argc, argv, opts, doctor_usage, 0, NULL);
	if (nargs == -2)
		return TF_EXIT_OK;
	if (nargs < 0)
		return TF_EXIT_USAGE;
	tf_doctor_opts_init(&o);
	o.freq = (unsigned)freq;
	o.dir = dir;
	o.binaries = nargs > 1 ? argv + 1 : NULL;
	rc = tf_doctor_run(&r, &o);
	if (rc)
		return tf_fail(rc);
	for (size_t i = 0; i < r->checks.n; i++) {
		const tf_check *c = &r->checks.v[i];
		printf("%-8s %s: %s%s%s\n", tf_check_level_name(c->level), c->name, c->summary,
		       c->fix ? "; fix: " : "", c->fix ? c->fix : "");
	}
	if (r->can_sample)
		printf("testflame can sample here, with %s\n", tf_sampler_name(r->sampler));
	else
		printf("testflame cannot sample here: fix one of the problems above\n");
	if (r->program_problems)
		printf("%zu of the programs given cannot be profiled as they are: see the "
		       "problems above\n", r->program_problems);
	rc = r->can_sample && !r->program_problems ? TF_EXIT_OK : TF_EXIT_ERROR;
	tf_doctor_report_free(r);
	return rc;
}
