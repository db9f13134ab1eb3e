/*
 * config.h - `.testflame.yml`, the project's settings (SPEC §6), read with
 * libyaml into a typed struct.
 *
 * Every key is optional; an unset field keeps its "unset" value (NULL, 0,
 * -1, TF_CONFIG_UNSET) so the caller can tell "not given" from a value and
 * apply its own default. Unknown keys, wrong types and bad values are
 * TF_EUSAGE errors whose message is one line,
 * "FILE:LINE:COLUMN: what is wrong", so the cli exits 2.
 *
 * Command-line flags win over the file: the cli fills a second tf_config
 * from its flags and calls tf_config_merge(file_cfg, flags_cfg).
 */
#ifndef TESTFLAME_CONFIG_H
#define TESTFLAME_CONFIG_H

#include "testflame/common.h"

#define TF_CONFIG_FILE ".testflame.yml"

/*
 * What the gate judges a test by (gate.measure, --measure), where the runs
 * recorded off-CPU time (attribute.h):
 *   both  its CPU time as `cpu` does, and its waiting judged on its own,
 *         with a noise model of its own (compare/waits.c): either can
 *         fail it (the default);
 *   cpu   its CPU time (or the event), as without off-CPU time;
 *   wall  its wall time, CPU plus waiting, as one cost.
 * Runs without off-CPU time are judged by `cpu`, and the summary says so.
 */
typedef enum {
	TF_GATE_BOTH = 0,
	TF_GATE_CPU,
	TF_GATE_WALL,
} tf_gate_measure;

/* Their names, in the enum's order, NULL-terminated. */
extern const char *const tf_gate_measure_names[];

/* Tri-state booleans: unset, false, true. */
enum { TF_CONFIG_UNSET = -1 };

typedef struct {
	char *regex;  /* POSIX extended; validated with regcomp() */
	/* The test name: NULL means the regex's first capture group, or the
	 * whole match without one (as tf_frame_pattern); otherwise a template
	 * where \1..\9 stand for capture groups. */
	char *name;
} tf_config_pattern;

typedef struct {
	char *path;           /* the file read, as shown in messages; NULL if none */

	char *suite;          /* the suite's name (baselines are per suite) */
	/* The test command: `command_argv` (NULL-terminated) for a YAML list,
	 * or a single string to run with `sh -c` (command_shell true). */
	char **command_argv;
	bool command_shell;
	char *build;          /* shell command that builds a checkout (--against) */
	char *event;          /* auto|cpu-clock|instructions|cycles|wall */
	long freq;            /* Hz, 1..10000; 0 unset */
	char *call_graph;     /* auto|fp|dwarf */
	char *sampler;        /* auto|perf|ptrace */
	char *follow;         /* auto|cgroup|inherit */
	char *off_cpu;        /* auto|on|off */
	long off_cpu_max;     /* switch-outs a second per CPU, 1..1000000; 0 unset */
	char *test;           /* default test name (--test) */
	char *target_branch;  /* what PR-less runs compare against */
	long repeat;          /* --repeat, 1..1000; 0 unset */
	long baseline_repeat; /* runs of a run that saves a baseline, 1..1000; 0 unset */
	char *against;        /* --against REV */
	char *store;          /* "git", "git:REMOTE", "dir:PATH", "pyroscope:URL" */

	struct {
		int markers;      /* TF_CONFIG_UNSET, 0, 1 */
		char **frames;    /* NULL-terminated preset names, NULL unset */
		TF_VEC(tf_config_pattern) patterns;
		char **drivers;      /* extra driver programs (not tests) */
		char **build_tools;  /* extra build tools (a build step, not tests) */
		char **runner_reports; /* test reports the suite writes (JUnit, ...) */
		int inject;       /* ask recognised runners to report (default on) */
	} attribution;

	struct {
		double threshold;       /* percent, >= 0; -1 unset */
		int fail_on_regression; /* TF_CONFIG_UNSET, 0, 1 */
		long min_samples;       /* >= 0; -1 unset */
		/* what a test that looks slower than a stored baseline takes to
		 * fail the build: "against" (the merge-base built and run here,
		 * interleaved), "rerun" (this tree run again), "none", or a
		 * number of reruns; NULL unset */
		char *confirm;
		int outside;            /* gate "[outside tests]" like a test (default off) */
		double alpha;           /* significance level in (0, 0.5]; -1 unset
					 * (`confidence: 0.95` is alpha 0.05) */
		double min_delta_ns;    /* the least change of a test's time a run
					 * that counts, >= 0; -1 unset */
		char *measure;          /* tf_gate_measure_names; NULL unset */
	} gate;

	struct {
		char *dir;
		char **formats;   /* NULL-terminated, NULL unset */
	} report;

	struct {
		int comment, annotations, step_summary; /* TF_CONFIG_UNSET, 0, 1 */
		char *github_api_url;
		char *gitlab_api_url;
	} publish;

	/* Grafana Pyroscope (store: pyroscope:URL). Credentials here are used
	 * where the environment's TESTFLAME_PYROSCOPE_* give none. */
	struct {
		char *grafana_url;        /* the PR comment links regressed tests to
					   * Grafana's comparison there */
		char *grafana_datasource; /* the Pyroscope data source's uid in Grafana */
		char *tenant;             /* X-Scope-OrgID */
		char *user, *password;    /* basic auth */
		char *token;              /* bearer token */
	} pyroscope;

	/* The pre-push hook (testflame hook install). */
	struct {
		/* The quick suite, like `command` (NULL: `command` itself); the
		 * shell flag follows the argv as at the top level. */
		char **command_argv;
		bool command_shell;
		char *suite;          /* its suite's name (baselines are per suite) */
		long repeat;          /* runs per side with --against, 1..1000; 0 unset */
	} hook;
} tf_config;

/* `attribution.frames` accepts tf_frame_preset_names (attribute.h). */
/* Report formats `report.formats` accepts, NULL-terminated. */
extern const char *const tf_config_report_formats[];

/* A duration as gate.min_delta and --min-delta take it: a number and
 * its unit (ns, us, ms, s), or 0; nanoseconds in `*ns`. false: not one. */
bool tf_config_parse_duration(const char *s, double *ns);

/* Whether `s` is a value gate.confirm takes (--confirm too). */
bool tf_config_confirm_ok(const char *s);

/* An empty config: every field unset. */
tf_config *tf_config_new(void);
void tf_config_free(tf_config *cfg);

/*
 * Load the config. With `path`, that file (missing: TF_EUSAGE). Without,
 * TF_CONFIG_FILE at the root of the git work tree containing `start_dir`
 * (NULL: the current directory), or in `start_dir` itself outside a
 * repository; no file there gives an empty config and 0.
 */
int tf_config_load(tf_config **out, const char *path, const char *start_dir);
/* Parse YAML text; `name` is the file name used in messages. */
int tf_config_parse(tf_config **out, const char *text, size_t len, const char *name);

/* Copy every field set in `over` onto `cfg` (lists replace lists). */
void tf_config_merge(tf_config *cfg, const tf_config *over);

/* Small helpers for tri-states and unset numbers. */
static inline bool tf_config_bool(int v, bool dflt)
{
	return v == TF_CONFIG_UNSET ? dflt : v != 0;
}

#endif
