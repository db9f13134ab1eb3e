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
 * from its flags and calls tf_config_merge(file_cfg, flags_cfg). The
 * settings every judging command shares (the gate, where baselines live,
 * the report directory) are resolved once, into a tf_settings (below).
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
	char *store;          /* "git", "git:REMOTE", "dir:PATH", "pyroscope:URL":
			       * checked by the store (tf_store_check_config) */
	char *store_at;       /* where `store:` is, "FILE:LINE:COLUMN" */
	int memory;           /* measure each test's memory (the allocation
			       * sampler); TF_CONFIG_UNSET, 0, 1 */

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
		char *confirm_budget;   /* gate.confirm_budget, checked when read */
		int outside;            /* gate "[outside tests]" like a test (default off) */
		double alpha;           /* significance level in (0, 0.5]; -1 unset
					 * (`confidence: 0.95` is alpha 0.05) */
		double min_delta_ns;    /* the least change of a test's time a run
					 * that counts, >= 0; -1 unset */
		char *measure;          /* tf_gate_measure_names; NULL unset */
		/* gate.memory: judge each test's allocations too (true, or a
		 * mapping of its thresholds); TF_CONFIG_UNSET, 0, 1. Its
		 * threshold (percent) and the least change in bytes that
		 * counts; -1 unset */
		int memory;
		double memory_threshold, memory_min_bytes;
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

/* A size as gate.memory.min_bytes takes it: a number of bytes, or with K,
 * M or G (KiB, MiB, GiB: powers of 1024). false: not one. */
bool tf_config_parse_size(const char *s, double *bytes);

/* Whether `s` is a value gate.confirm takes (--confirm too). */
bool tf_config_confirm_ok(const char *s);

/* ---- the settings the judging commands share (settings.c) ----------------
 *
 * One object for `run`, `merge` and `compare` alike: each value from its
 * flag, else .testflame.yml, else the environment, else the default below
 * (the only place the defaults are written). Each value's range is checked
 * by one function, tf_settings_parse(), which the config reader calls at
 * the value's place in the file ("FILE:LINE:COLUMN: 'gate.threshold' must
 * be ...") and the commands for their flags ("--threshold must be ..."),
 * so that what one accepts the other accepts too, and a bad value is
 * refused when it is read, not when the comparison is made.
 */
#define TF_THRESHOLD_DEFAULT 5.0   /* percent */
#define TF_THRESHOLD_MAX 1000.0    /* percent, not included */
#define TF_ALPHA_DEFAULT 0.001     /* false alarms across all tests */
#define TF_ALPHA_MAX 0.5
#define TF_NOISE_MAX 100.0         /* percent, not included */
/* gate.min_delta's default: a millisecond of a test's cost a run */
#define TF_MIN_DELTA_NS 1e6
#define TF_MIN_DELTA_MAX_NS 3600e9
/* gate.confirm_budget's default: the suspect tests re-run alone may take
 * as long as the suite took once (a failing PR's CI at most twice) */
#define TF_CONFIRM_BUDGET_PCT 100.0
/* gate.memory's defaults: a test allocates 10% more, and 4 KiB more a
 * run, to count: its allocations repeat to the byte from run to run, so
 * a smaller change is real, but of no consequence */
#define TF_MEMORY_THRESHOLD 10.0
#define TF_MEMORY_MIN_BYTES 4096.0
#define TF_HISTORY_DEFAULT 10      /* baselines to learn each test's noise from */
#define TF_REPORT_DIR_DEFAULT "testflame-report"

typedef enum {
	TF_SETTING_THRESHOLD, /* a percentage in [0, TF_THRESHOLD_MAX): "5", "2.5%" */
	TF_SETTING_ALPHA,     /* a number in (0, TF_ALPHA_MAX] */
	TF_SETTING_NOISE,     /* a percentage in [0, TF_NOISE_MAX) */
	TF_SETTING_MIN_DELTA, /* a duration: "1ms", "500us", "0" (nanoseconds) */
	TF_SETTING_CONFIRM,   /* against, rerun, none or 0..100 runs (no number) */
	TF_SETTING_CONFIRM_BUDGET, /* "100%" of the suite's own time, or a duration
				    * ("90s"): percent, or minus nanoseconds */
} tf_setting;

/*
 * Parse and check one setting given as text, into *out (may be NULL; the
 * setting's number, 0 for TF_SETTING_CONFIRM). TF_EUSAGE with "NAME must
 * be ..., not 'TEXT'", where NAME is how the caller names it.
 */
int tf_settings_parse(tf_setting which, const char *name, const char *text, double *out);
/* The same check of a number already parsed (the engine's own guard). */
int tf_settings_check(tf_setting which, const char *name, double value);

/* The flags of the shared settings, as given (NULL, 0, false: not given). */
typedef struct {
	const char *threshold, *alpha, *noise, *min_delta; /* checked by tf_settings_parse */
	const char *measure;    /* --measure, one of tf_gate_measure_names */
	const char *confirm;
	const char *store;      /* --store */
	const char *report_dir; /* --report */
	long history;           /* --history */
	bool no_fail;           /* --no-fail */
} tf_settings_flags;

typedef struct {
	double threshold;       /* percent */
	double alpha;
	double noise;           /* one run's noise, percent; -1: by event */
	double min_delta_ns;
	double min_samples;     /* <= 0: compare's own rule */
	bool fail_on_regression;
	bool outside;           /* gate "[outside tests]" like a test */
	long history;
	const char *confirm;    /* NULL: not asked for (the command's default) */
	/* gate.confirm_budget: what a confirmation that re-runs only the
	 * suspect tests may spend, as a percentage of the suite's own time
	 * (confirm_budget_pct > 0), else in nanoseconds */
	double confirm_budget_pct, confirm_budget_ns;
	const char *store;      /* NULL: the git store */
	const char *report_dir;
	tf_gate_measure measure; /* gate.measure */
	/* gate.memory: each test's allocations judged too (a memory
	 * comparison whenever both sides measured them), with its threshold
	 * (percent) and least change (bytes) */
	bool memory_gated;
	double memory_threshold, memory_min_bytes;
} tf_settings;

/* The flags alone, before the config is read: 0, or TF_EUSAGE naming the
 * first bad one. */
int tf_settings_check_flags(const tf_settings_flags *f);
/*
 * Flags over `cfg` (NULL: none) over `envp` ($TESTFLAME_STORE; NULL: none)
 * over the defaults; checks the flags first (TF_EUSAGE). The strings point
 * into `f`, `cfg` and `envp`, which must outlive `out`.
 */
int tf_settings_resolve(tf_settings *out, const tf_settings_flags *f, const tf_config *cfg,
			char *const *envp);

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
/* Every key the file may have, one line each: "gate.threshold<TAB>what
 * its value is" (the manual, testflame.yml(5)). */
void tf_config_describe(tf_buf *out);

/* Small helpers for tri-states and unset numbers. */
static inline bool tf_config_bool(int v, bool dflt)
{
	return v == TF_CONFIG_UNSET ? dflt : v != 0;
}

#endif
