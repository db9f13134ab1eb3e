/*
 * test_config.c - `.testflame.yml`: every key read into its field, unset
 * keys left unset, each kind of mistake reported as one exact
 * "FILE:LINE:COLUMN: ..." line with TF_EUSAGE, discovery at the work
 * tree's root, and command-line flags merged over the file.
 */
#include "unit.h"
#include "testflame/config.h"
#include "testflame/record.h"

#include <math.h>

static tf_config *parse_ok(const char *text)
{
	tf_config *cfg = NULL;
	int rc = tf_config_parse(&cfg, text, strlen(text), "t.yml");
	if (rc != 0)
		fail_msg("unexpected error: %s", tf_error_last());
	assert_non_null(cfg);
	return cfg;
}

/* The text must fail with exactly this message. */
static void parse_err(const char *text, const char *want)
{
	tf_config *cfg = (tf_config *)1;
	int rc = tf_config_parse(&cfg, text, strlen(text), "t.yml");
	assert_int_equal(rc, TF_EUSAGE);
	assert_null(cfg);
	assert_string_equal(tf_error_last(), want);
}

static void test_full(void **state)
{
	(void)state;
	tf_config *c = parse_ok(
		"# the project's settings\n"
		"suite: unit\n"
		"command: [make, -j4, check]\n"
		"build: make -j4\n"
		"event: cpu-clock\n"
		"freq: 499\n"
		"call_graph: dwarf\n"
		"sampler: perf\n"
		"test: all\n"
		"target_branch: develop\n"
		"repeat: 5\n"
		"against: origin/main\n"
		"store: dir:/var/cache/tf\n"
		"attribution:\n"
		"  markers: no\n"
		"  frames: [gtest, cmocka]\n"
		"  patterns:\n"
		"    - '^test_([a-z_]+)$'\n"
		"    - regex: '^(Bench|Test)([A-Z][a-z]+)$'\n"
		"      name: 'go/\\2'\n"
		"    - { regex: '^main$', name: whole-program }\n"
		"  drivers: [tox, nox]\n"
		"  build_tools: bazel\n"
		"gate:\n"
		"  threshold: 2.5%\n"
		"  fail_on_regression: true\n"
		"  min_samples: 50\n"
		"  min_delta: 2.5ms\n"
		"  confirm: 4\n"
		"  confidence: 0.99\n"
		"report:\n"
		"  dir: out/report\n"
		"  formats:\n"
		"    - html\n"
		"    - junit\n"
		"publish:\n"
		"  comment: true\n"
		"  annotations: false\n"
		"  step_summary: on\n"
		"  github_api_url: https://ghe.example.com/api/v3\n"
		"  gitlab_api_url: \"https://gitlab.example.com/api/v4\"\n");
	assert_string_equal(c->path, "t.yml");
	assert_string_equal(c->suite, "unit");
	assert_false(c->command_shell);
	assert_string_equal(c->command_argv[0], "make");
	assert_string_equal(c->command_argv[1], "-j4");
	assert_string_equal(c->command_argv[2], "check");
	assert_null(c->command_argv[3]);
	assert_string_equal(c->build, "make -j4");
	assert_string_equal(c->event, "cpu-clock");
	assert_int_equal(c->freq, 499);
	assert_string_equal(c->call_graph, "dwarf");
	assert_string_equal(c->sampler, "perf");
	assert_string_equal(c->test, "all");
	assert_string_equal(c->target_branch, "develop");
	assert_int_equal(c->repeat, 5);
	assert_string_equal(c->against, "origin/main");
	assert_string_equal(c->store, "dir:/var/cache/tf");
	assert_int_equal(c->attribution.markers, 0);
	assert_string_equal(c->attribution.frames[0], "gtest");
	assert_string_equal(c->attribution.frames[1], "cmocka");
	assert_null(c->attribution.frames[2]);
	assert_int_equal(c->attribution.patterns.n, 3);
	assert_string_equal(c->attribution.patterns.v[0].regex, "^test_([a-z_]+)$");
	assert_null(c->attribution.patterns.v[0].name);
	assert_string_equal(c->attribution.patterns.v[1].name, "go/\\2");
	assert_string_equal(c->attribution.patterns.v[2].name, "whole-program");
	assert_string_equal(c->attribution.drivers[1], "nox");
	assert_string_equal(c->attribution.build_tools[0], "bazel");
	assert_null(c->attribution.build_tools[1]);
	assert_true(fabs(c->gate.threshold - 2.5) < 1e-9);
	assert_int_equal(c->gate.fail_on_regression, 1);
	assert_int_equal(c->gate.min_samples, 50);
	assert_true(c->gate.min_delta_ns == 2.5e6);
	assert_string_equal(c->gate.confirm, "4");
	assert_true(fabs(c->gate.alpha - 0.01) < 1e-9);
	assert_string_equal(c->report.dir, "out/report");
	assert_string_equal(c->report.formats[1], "junit");
	assert_int_equal(c->publish.comment, 1);
	assert_int_equal(c->publish.annotations, 0);
	assert_int_equal(c->publish.step_summary, 1);
	assert_string_equal(c->publish.github_api_url, "https://ghe.example.com/api/v3");
	assert_string_equal(c->publish.gitlab_api_url, "https://gitlab.example.com/api/v4");
	tf_config_free(c);
}

static void test_unset(void **state)
{
	(void)state;
	const char *texts[] = { "", "# nothing yet\n", "---\n", "~\n",
				"freq:\nsuite: ~\ngate:\n  threshold: null\n" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(texts); i++) {
		tf_config *c = parse_ok(texts[i]);
		assert_null(c->suite);
		assert_null(c->command_argv);
		assert_int_equal(c->freq, 0);
		assert_int_equal(c->repeat, 0);
		assert_int_equal(c->attribution.markers, TF_CONFIG_UNSET);
		assert_null(c->attribution.frames);
		assert_int_equal(c->attribution.patterns.n, 0);
		assert_true(c->gate.threshold < 0);
		assert_true(c->gate.alpha < 0);
		assert_int_equal(c->gate.min_samples, -1);
		assert_true(c->gate.min_delta_ns < 0);
		assert_null(c->gate.confirm);
		assert_int_equal(c->gate.fail_on_regression, TF_CONFIG_UNSET);
		assert_int_equal(c->publish.comment, TF_CONFIG_UNSET);
		assert_true(tf_config_bool(c->publish.comment, true));
		assert_false(tf_config_bool(c->publish.comment, false));
		tf_config_free(c);
	}
	tf_config *c = tf_config_new();
	assert_null(c->path);
	assert_int_equal(c->freq, 0);
	tf_config_free(c);
}

static void test_values(void **state)
{
	(void)state;
	tf_config *c = parse_ok("command: make test 'x y'\ngate:\n  threshold: 5\n  alpha: 0.1\n");
	assert_true(c->command_shell);
	assert_string_equal(c->command_argv[0], "make test 'x y'");
	assert_null(c->command_argv[1]);
	assert_true(fabs(c->gate.threshold - 5) < 1e-9);
	assert_true(fabs(c->gate.alpha - 0.1) < 1e-9);
	tf_config_free(c);
	c = parse_ok("gate: {confidence: 95%}\nstore: pyroscope:http://127.0.0.1:4040\n"
		     "attribution: {frames: go, markers: TRUE}\n");
	assert_true(fabs(c->gate.alpha - 0.05) < 1e-9);
	assert_string_equal(c->store, "pyroscope:http://127.0.0.1:4040");
	assert_string_equal(c->attribution.frames[0], "go");
	assert_int_equal(c->attribution.markers, 1);
	tf_config_free(c);
	/* a remote for the git store, as --store takes it */
	c = parse_ok("store: git:upstream\n");
	assert_string_equal(c->store, "git:upstream");
	tf_config_free(c);
	c = parse_ok("pyroscope:\n  grafana_url: https://grafana.example.com\n"
		     "  grafana_datasource: pyro\n  tenant: acme\n  user: '1234'\n"
		     "  password: pw\n  token: tk\n");
	assert_string_equal(c->pyroscope.grafana_url, "https://grafana.example.com");
	assert_string_equal(c->pyroscope.grafana_datasource, "pyro");
	assert_string_equal(c->pyroscope.tenant, "acme");
	assert_string_equal(c->pyroscope.user, "1234");
	assert_string_equal(c->pyroscope.password, "pw");
	assert_string_equal(c->pyroscope.token, "tk");
	tf_config_free(c);
	c = parse_ok("store: git\nfreq: 10000\nrepeat: 1\ncommand: ['./run tests', '']\n");
	assert_string_equal(c->command_argv[0], "./run tests");
	assert_string_equal(c->command_argv[1], "");
	tf_config_free(c);
}

/* Every name record knows is a value the config accepts, and parses back
 * to its value. */
static void test_names_match_record(void **state)
{
	(void)state;
	char text[128];
	for (int e = TF_EVENT_AUTO; e <= TF_EVENT_WALL; e++) {
		tf_event got;
		snprintf(text, sizeof(text), "event: %s\n", tf_event_name((tf_event)e));
		tf_config_free(parse_ok(text));
		assert_int_equal(tf_event_parse(&got, tf_event_names[e]), 0);
		assert_int_equal(got, e);
	}
	for (int v = TF_SAMPLER_AUTO; v <= TF_SAMPLER_PTRACE; v++) {
		tf_sampler got;
		assert_int_equal(tf_sampler_parse(&got, tf_sampler_names[v]), 0);
		assert_int_equal(got, v);
	}
	for (int v = TF_CALLGRAPH_AUTO; v <= TF_CALLGRAPH_DWARF; v++) {
		tf_callgraph got;
		assert_int_equal(tf_callgraph_parse(&got, tf_callgraph_names[v]), 0);
		assert_int_equal(got, v);
	}
	assert_null(tf_event_names[TF_EVENT_WALL + 1]);
	tf_sampler sv;
	assert_int_equal(tf_sampler_parse(&sv, "dtrace"), TF_EUSAGE);
	for (int v = TF_SAMPLER_AUTO; v <= TF_SAMPLER_PTRACE; v++) {
		snprintf(text, sizeof(text), "sampler: %s\n", tf_sampler_name((tf_sampler)v));
		tf_config_free(parse_ok(text));
	}
	for (int v = TF_CALLGRAPH_AUTO; v <= TF_CALLGRAPH_DWARF; v++) {
		snprintf(text, sizeof(text), "call_graph: %s\n", tf_callgraph_name((tf_callgraph)v));
		tf_config_free(parse_ok(text));
	}
}

/* The manual's list of keys: every key the parser takes, nested ones
 * with their parent, each with what its value is. */
static void test_describe(void **state)
{
	(void)state;
	tf_buf b = TF_BUF_INIT;
	tf_config_describe(&b);
	assert_non_null(strstr(b.ptr, "\ngate.threshold\ta percentage"));
	assert_non_null(strstr(b.ptr, "\nfreq\ta whole number from 1 to 10000\n"));
	assert_non_null(strstr(b.ptr, "\nevent\tone of: auto, cpu-clock, instructions, cycles, wall\n"));
	assert_non_null(strstr(b.ptr, "\nattribution.frames\ta list of: "));
	assert_null(strstr(b.ptr, "\ngate\t"));  /* a mapping is not a key of its own */
	/* a switch that is also a mapping: itself, then its keys (every kind
	 * has its words: gate.memory's was read past the end of the table) */
	assert_non_null(strstr(b.ptr, "\ngate.memory\ttrue or false, or a mapping"));
	assert_non_null(strstr(b.ptr, "\ngate.memory.min_bytes\ta size in bytes"));
	/* one key and what it is per line */
	for (const char *l = b.ptr; *l; l = strchr(l, '\n') + 1) {
		const char *tab = strchr(l, '\t');
		assert_non_null(tab);
		assert_true(tab > l);
	}
	tf_buf_free(&b);
}

static void test_unknown_keys(void **state)
{
	(void)state;
	parse_err("suite: a\n\nfrq: 99\n", "t.yml:3:1: unknown key 'frq' (did you mean 'freq'?)");
	parse_err("gate:\n  treshold: 5\n",
		  "t.yml:2:3: unknown key 'treshold' in 'gate' (did you mean 'threshold'?)");
	parse_err("gate:\n  colour: red\n", "t.yml:2:3: unknown key 'colour' in 'gate'");
	parse_err("pyroscope:\n  grafana_url: grafana.example.com\n",
		  "t.yml:2:16: 'pyroscope.grafana_url' must be an http:// or https:// URL, not 'grafana.example.com'");
	parse_err("publish: {comment: true, slack: true}\n",
		  "t.yml:1:26: unknown key 'slack' in 'publish'");
	parse_err("attribution:\n  patterns:\n    - {regex: '(x)', nam: y}\n",
		  "t.yml:3:22: unknown key 'nam' in 'attribution.patterns' (known: regex, name)");
	parse_err("suite: a\nsuite: b\n", "t.yml:2:1: duplicate key 'suite' (first at line 1)");
	parse_err("[a, b]: c\n", "t.yml:1:1: keys must be plain names, not a list");
}

/* gate.memory: a boolean, or a mapping of its thresholds (which turns it
 * on); memory: records without judging. */
static void test_memory_gate(void **state)
{
	(void)state;
	tf_config *c = parse_ok("gate:\n  memory: true\n");
	assert_int_equal(c->gate.memory, 1);
	assert_true(c->gate.memory_threshold < 0 && c->gate.memory_min_bytes < 0);
	assert_int_equal(c->memory, TF_CONFIG_UNSET);
	tf_config_free(c);
	c = parse_ok("memory: true\ngate:\n  memory:\n    threshold: 2.5%\n    min_bytes: 64KiB\n");
	assert_int_equal(c->gate.memory, 1);
	assert_int_equal(c->memory, 1);
	assert_true(c->gate.memory_threshold == 2.5);
	assert_true(c->gate.memory_min_bytes == 65536);
	tf_config_free(c);
	c = parse_ok("gate:\n  memory: false\n");
	assert_int_equal(c->gate.memory, 0);
	tf_config_free(c);
	c = parse_ok("suite: a\n");
	assert_int_equal(c->gate.memory, TF_CONFIG_UNSET);
	tf_config_free(c);
	parse_err("gate:\n  memory: maybe\n", "t.yml:2:11: 'gate.memory' must be true or false");
	parse_err("gate:\n  memory: [1]\n",
		  "t.yml:2:11: 'gate.memory' must be true, false or a mapping of threshold, min_bytes, "
		  "not a list");
	parse_err("gate:\n  memory:\n    min_bytes: lots\n",
		  "t.yml:3:16: 'gate.memory.min_bytes' must be a size such as 64KiB, 1MiB or 4096 "
		  "(bytes), not 'lots'");
	parse_err("gate:\n  memory:\n    threshhold: 5\n",
		  "t.yml:3:5: unknown key 'threshhold' in 'gate.memory' (did you mean 'threshold'?)");
	double b = -1;
	assert_true(tf_config_parse_size("4096", &b) && b == 4096);
	assert_true(tf_config_parse_size("1.5M", &b) && b == 1.5 * 1048576);
	assert_true(tf_config_parse_size("2GiB", &b) && b == 2.0 * 1073741824);
	assert_false(tf_config_parse_size("-1K", &b));
	assert_false(tf_config_parse_size("1 KB", &b));
	assert_false(tf_config_parse_size("", &b));
}

static void test_bad_values(void **state)
{
	(void)state;
	parse_err("freq: 0\n", "t.yml:1:7: 'freq' must be a whole number between 1 and 10000");
	parse_err("freq: 99999\n", "t.yml:1:7: 'freq' must be a whole number between 1 and 10000");
	parse_err("freq: 9.5\n", "t.yml:1:7: 'freq' must be a whole number between 1 and 10000");
	parse_err("freq: lots\n", "t.yml:1:7: 'freq' must be a whole number between 1 and 10000");
	parse_err("freq: [1]\n", "t.yml:1:7: 'freq' must be a whole number between 1 and 10000");
	parse_err("repeat: 0\n", "t.yml:1:9: 'repeat' must be a whole number between 1 and 1000");
	parse_err("gate:\n  min_samples: -3\n",
		  "t.yml:2:16: 'gate.min_samples' must be a whole number between 0 and 1000000000");
	parse_err("gate:\n  confirm: 101\n",
		  "t.yml:2:12: 'gate.confirm' must be alone, against, rerun, none or a number of runs between 0 and 100, not '101'");
	parse_err("gate:\n  confirm: sometimes\n",
		  "t.yml:2:12: 'gate.confirm' must be alone, against, rerun, none or a number of runs between 0 and 100, not 'sometimes'");
	parse_err("event: cycels\n",
		  "t.yml:1:8: 'event' must be one of auto, cpu-clock, instructions, cycles, wall, not 'cycels'");
	parse_err("call_graph: lbr\n", "t.yml:1:13: 'call_graph' must be one of auto, fp, dwarf, not 'lbr'");
	parse_err("publish:\n  comment: maybe\n", "t.yml:2:12: 'publish.comment' must be true or false");
	parse_err("suite: [a, b]\n", "t.yml:1:8: 'suite' must be a string, not a list");
	parse_err("suite: ''\n", "t.yml:1:8: 'suite' must not be empty");
	parse_err("gate: 5\n", "t.yml:1:7: 'gate' must be a mapping of settings, not a value");
	parse_err("gate:\n  min_delta: 5\n",
		  "t.yml:2:14: 'gate.min_delta' must be a duration such as 1ms, 500us or 0, not '5'");
	parse_err("gate:\n  min_delta: -1ms\n",
		  "t.yml:2:14: 'gate.min_delta' must be a duration such as 1ms, 500us or 0, not '-1ms'");
	parse_err("gate:\n  confirm_budget: 0%\n",
		  "t.yml:2:19: 'gate.confirm_budget' must be a share of the suite's own time above "
		  "0% and at most 1000%, such as 100%, or a time such as 90s, not '0%'");
	parse_err("gate:\n  confirm_budget: 90\n",
		  "t.yml:2:19: 'gate.confirm_budget' must be a share of the suite's own time above "
		  "0% and at most 1000%, such as 100%, or a time such as 90s, not '90'");
	{
		double ns = -1;
		assert_true(tf_config_parse_duration("0", &ns) && ns == 0);
		assert_true(tf_config_parse_duration("500us", &ns) && ns == 500e3);
		assert_true(tf_config_parse_duration("1.5s", &ns) && ns == 1.5e9);
		assert_true(tf_config_parse_duration("20ns", &ns) && ns == 20);
		assert_false(tf_config_parse_duration("1 ms", &ns));
		assert_false(tf_config_parse_duration("2h", &ns));
		assert_false(tf_config_parse_duration("0x10ms", &ns));
		assert_false(tf_config_parse_duration("", &ns));
		assert_false(tf_config_parse_duration("nan", &ns));
	}
	parse_err("gate:\n  threshold: -1\n", "t.yml:2:14: 'gate.threshold' must be a percentage "
		  "from 0 to below 1000, such as 5 or 2.5%, not '-1'");
	parse_err("gate:\n  threshold: 5 percent\n",
		  "t.yml:2:14: 'gate.threshold' must be a percentage from 0 to below 1000, such as 5 "
		  "or 2.5%, not '5 percent'");
	/* refused when the file is read, not when a comparison is made */
	parse_err("suite: s\ngate:\n  threshold: 2000\n",
		  "t.yml:3:14: 'gate.threshold' must be a percentage from 0 to below 1000, such as 5 "
		  "or 2.5%, not '2000'");
	parse_err("gate:\n  alpha: 0.7\n",
		  "t.yml:2:10: 'gate.alpha' must be a number above 0 and at most 0.5, such as 0.05, "
		  "not '0.7'");
	parse_err("gate:\n  confidence: 1\n",
		  "t.yml:2:15: 'gate.confidence' must be a number at least 0.5 and below 1, such as 0.95 or 95%");
	parse_err("gate:\n  alpha: 0.05\n  confidence: 0.95\n",
		  "t.yml:3:3: give 'gate.alpha' or 'gate.confidence', not both");
	parse_err("publish:\n  github_api_url: api.github.com\n",
		  "t.yml:2:19: 'publish.github_api_url' must be an http:// or https:// URL, not 'api.github.com'");
	parse_err("report:\n  formats: [html, pdf]\n",
		  "t.yml:2:19: unknown value 'pdf' in 'report.formats' (known: html, md, json, junit, codequality, svg, speedscope, folded)");
	parse_err("attribution:\n  frames:\n    - gtest\n    - gtset\n",
		  "t.yml:4:7: unknown value 'gtset' in 'attribution.frames' (known: go, gtest, cmocka, check, criterion, unity, clar, pytest, catch2, doctest, boost)");
	parse_err("attribution:\n  drivers: []\n", "t.yml:2:12: 'attribution.drivers' must not be an empty list");
	parse_err("attribution:\n  drivers: [tox, {a: b}]\n",
		  "t.yml:2:18: items of 'attribution.drivers' must be non-empty strings");
	parse_err("command: {run: make}\n",
		  "t.yml:1:10: 'command' must be a string (run by sh -c) or a list (program and arguments), not a mapping");
	parse_err("command: []\n", "t.yml:1:10: 'command' must not be an empty list");
	parse_err("command: ['', x]\n", "t.yml:1:10: 'command': the program name must not be empty");
	parse_err("- suite\n", "t.yml:1:1: the file must be a mapping of settings (key: value), not a list");
	parse_err("suite: a\n---\nsuite: b\n", "t.yml:3:1: only one YAML document is allowed");
	/* a pattern whose compiled form would take gigabytes is refused before
	 * regcomp() sees it (found by fuzzing: a hundred '+' ran out of memory) */
	parse_err("attribution:\n  patterns:\n    - 'a++++++++++++++++'\n",
		  "t.yml:3:7: regex 'a++++++++++++++++' in 'attribution.patterns' repeats too much to "
		  "compile (its repetitions multiply to over 4096 copies)");
	parse_err("attribution:\n  patterns:\n    - '((a{40}){40}){40}'\n",
		  "t.yml:3:7: regex '((a{40}){40}){40}' in 'attribution.patterns' repeats too much to "
		  "compile (its repetitions multiply to over 4096 copies)");
	tf_config_free(parse_ok("attribution:\n  patterns:\n    - '^test_([a-z]{1,64})+$'\n"));
	/* a value quoted in the message stays on its line (found by fuzzing) */
	parse_err("event: 'cyc\n\n  les'\n",
		  "t.yml:1:8: 'event' must be one of auto, cpu-clock, instructions, cycles, wall, not 'cyc\\nles'");
}

/* The settings the judging commands share: flags over the file over the
 * environment over the defaults, each flag checked as the file's key is. */
static void test_settings(void **state)
{
	(void)state;
	tf_settings s;
	tf_settings_flags f;
	char *env[] = { "TESTFLAME_STORE=dir:/env", NULL };
	tf_config *c = parse_ok("gate:\n  threshold: 7%\n  alpha: 0.01\n  min_delta: 2ms\n"
				"  min_samples: 30\n  fail_on_regression: false\n  outside: true\n"
				"  confirm: rerun\n  confirm_budget: 90s\nreport:\n  dir: out\n");
	tf_config *pct = parse_ok("gate:\n  confirm_budget: 50%\n");

	memset(&f, 0, sizeof(f));
	assert_int_equal(tf_settings_resolve(&s, &f, NULL, NULL), 0);
	assert_true(s.threshold == TF_THRESHOLD_DEFAULT && s.alpha == TF_ALPHA_DEFAULT);
	assert_true(s.noise == -1 && s.min_delta_ns == TF_MIN_DELTA_NS && s.min_samples == 0);
	assert_true(s.fail_on_regression && !s.outside && s.history == TF_HISTORY_DEFAULT);
	assert_null(s.confirm);
	assert_true(s.confirm_budget_pct == TF_CONFIRM_BUDGET_PCT && s.confirm_budget_ns == 0);
	assert_null(s.store);
	assert_string_equal(s.report_dir, TF_REPORT_DIR_DEFAULT);

	/* the config over the environment and the defaults */
	assert_int_equal(tf_settings_resolve(&s, &f, c, env), 0);
	assert_true(s.threshold == 7 && s.alpha == 0.01 && s.min_delta_ns == 2e6);
	assert_true(s.min_samples == 30 && !s.fail_on_regression && s.outside);
	assert_string_equal(s.confirm, "rerun");
	assert_true(s.confirm_budget_pct == 0 && s.confirm_budget_ns == 90e9);
	assert_string_equal(s.store, "dir:/env");
	assert_string_equal(s.report_dir, "out");

	/* flags over the config */
	f.threshold = "2.5";
	f.alpha = "0.05";
	f.noise = "3%";
	f.min_delta = "0";
	f.confirm = "none";
	f.store = "git:upstream";
	f.report_dir = "r";
	f.history = 3;
	assert_int_equal(tf_settings_resolve(&s, &f, c, env), 0);
	assert_true(s.threshold == 2.5 && s.alpha == 0.05 && s.noise == 3 && s.min_delta_ns == 0);
	assert_string_equal(s.confirm, "none");
	assert_string_equal(s.store, "git:upstream");
	assert_string_equal(s.report_dir, "r");
	assert_int_equal(s.history, 3);
	f.no_fail = true;
	c->gate.fail_on_regression = 1;
	assert_int_equal(tf_settings_resolve(&s, &f, c, env), 0);
	assert_false(s.fail_on_regression);

	/* a flag out of range is refused by the range the file has */
	f.threshold = "2000";
	assert_int_equal(tf_settings_resolve(&s, &f, c, env), TF_EUSAGE);
	assert_string_equal(tf_error_last(), "--threshold must be a percentage from 0 to below "
			    "1000, such as 5 or 2.5%, not '2000'");
	f.threshold = NULL;
	f.alpha = "0.7";
	assert_int_equal(tf_settings_check_flags(&f), TF_EUSAGE);
	assert_string_equal(tf_error_last(), "--alpha must be a number above 0 and at most 0.5, "
			    "such as 0.05, not '0.7'");
	f.alpha = NULL;
	f.noise = "100";
	assert_int_equal(tf_settings_check_flags(&f), TF_EUSAGE);
	f.noise = NULL;
	f.confirm = "often";
	assert_int_equal(tf_settings_check_flags(&f), TF_EUSAGE);
	assert_string_equal(tf_error_last(), "--confirm must be alone, against, rerun, none or a number of "
			    "runs between 0 and 100, not 'often'");
	f.confirm = NULL;
	assert_int_equal(tf_settings_check_flags(&f), 0);
	/* the engine's own guard says the same of a number */
	assert_int_equal(tf_settings_check(TF_SETTING_THRESHOLD, "the threshold", 1000), TF_EUSAGE);
	assert_int_equal(tf_settings_check(TF_SETTING_THRESHOLD, "the threshold", 999.5), 0);
	assert_int_equal(tf_settings_resolve(&s, &(tf_settings_flags){ 0 }, pct, NULL), 0);
	assert_true(s.confirm_budget_pct == 50 && s.confirm_budget_ns == 0);
	tf_config_free(pct);
	tf_config_free(c);
}

static void test_patterns(void **state)
{
	(void)state;
	parse_err("attribution:\n  patterns:\n    - '^test_([a-z'\n",
		  "t.yml:3:7: bad regex '^test_([a-z' in 'attribution.patterns': Unmatched [, [^, [:, [., or [=");
	tf_config *c = parse_ok("attribution:\n  patterns: ['^test_[a-z]+$']\n"); /* the whole match */
	assert_string_equal(c->attribution.patterns.v[0].regex, "^test_[a-z]+$");
	tf_config_free(c);
	parse_err("attribution:\n  patterns:\n    - regex: '^t_(.*)$'\n      name: 'x\\2'\n",
		  "t.yml:3:14: name 'x\\2' in 'attribution.patterns' uses group \\2 but regex '^t_(.*)$' has 1");
	parse_err("attribution:\n  patterns:\n    - {name: x}\n",
		  "t.yml:3:7: a pattern in 'attribution.patterns' needs 'regex'");
	parse_err("attribution:\n  patterns: '^t_(.*)'\n",
		  "t.yml:2:13: 'attribution.patterns' must be a list of regexes or {regex, name} mappings, not a value");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	parse_err("suite: a\n  freq: 3\n",
		  "t.yml:2:7: mapping values are not allowed in this context");
	parse_err("suite: 'unterminated\nfreq: 3\n",
		  "t.yml:3:1: found unexpected end of stream (while scanning a quoted scalar at line 1, column 8)");
	parse_err("gate:\n\tthreshold: 5\n",
		  "t.yml:2:1: found character that cannot start any token (while scanning for the next token at line 2, column 1)");
	parse_err("suite: *nowhere\n", "t.yml:1:8: found undefined alias");
	parse_err("suite: a\nfreq: \xff\n",
		  "t.yml:2:7: invalid leading UTF-8 octet (the file must be UTF-8 text)");
}

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_load(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), path[4300], sub[4300], cmd[4400];
	tf_config *c;

	/* outside a repository: the start directory itself; nothing there is fine */
	assert_int_equal(tf_config_load(&c, NULL, dir), 0);
	assert_null(c->path);
	assert_null(c->suite);
	tf_config_free(c);
	snprintf(path, sizeof(path), "%s/.testflame.yml", dir);
	write_file(path, "suite: here\n");
	assert_int_equal(tf_config_load(&c, NULL, dir), 0);
	assert_string_equal(c->suite, "here");
	assert_string_equal(c->path, path);
	tf_config_free(c);

	/* in a repository: the work tree's root, from any subdirectory */
	snprintf(cmd, sizeof(cmd), "git init -q '%s/repo' && mkdir -p '%s/repo/a/b'", dir, dir);
	assert_int_equal(system(cmd), 0);
	snprintf(path, sizeof(path), "%s/repo/.testflame.yml", dir);
	write_file(path, "suite: root\nfreq: nope\n");
	snprintf(sub, sizeof(sub), "%s/repo/a/b", dir);
	assert_int_equal(tf_config_load(&c, NULL, sub), TF_EUSAGE);
	char want[4500];
	snprintf(want, sizeof(want), "%s:2:7: 'freq' must be a whole number between 1 and 10000", path);
	assert_string_equal(tf_error_last(), want);
	/* shown relative to the current directory, as git shows paths */
	char *cwd = getcwd(NULL, 0);
	assert_int_equal(chdir(sub), 0);
	assert_int_equal(tf_config_load(&c, NULL, NULL), TF_EUSAGE);
	assert_string_equal(tf_error_last(),
			    "../../.testflame.yml:2:7: 'freq' must be a whole number between 1 and 10000");
	snprintf(sub, sizeof(sub), "%s/repo", dir);
	assert_int_equal(chdir(sub), 0);
	assert_int_equal(tf_config_load(&c, NULL, NULL), TF_EUSAGE);
	assert_string_equal(tf_error_last(), ".testflame.yml:2:7: 'freq' must be a whole number between 1 and 10000");
	assert_int_equal(chdir(cwd), 0);
	free(cwd);

	/* --config FILE: that file, and a missing one is the user's mistake */
	snprintf(path, sizeof(path), "%s/other.yml", dir);
	write_file(path, "suite: other\n");
	assert_int_equal(tf_config_load(&c, path, sub), 0);
	assert_string_equal(c->suite, "other");
	tf_config_free(c);
	snprintf(path, sizeof(path), "%s/missing.yml", dir);
	assert_int_equal(tf_config_load(&c, path, NULL), TF_EUSAGE);
	assert_null(c);
	assert_non_null(strstr(tf_error_last(), "missing.yml': No such file or directory"));
	unit_rmtree(dir);
}

static void test_merge_flags_over_file(void **state)
{
	(void)state;
	tf_config *file = parse_ok("suite: s\nfreq: 99\ncommand: make test\ntarget_branch: main\n"
				   "gate: {threshold: 5, fail_on_regression: true}\n"
				   "attribution: {frames: [go], drivers: [tox]}\n"
				   "publish: {comment: false}\n");
	tf_config *flags = tf_config_new();
	flags->freq = 997;
	flags->gate.threshold = 10;
	flags->publish.comment = 1;
	flags->target_branch = strdup("develop");
	flags->command_argv = calloc(3, sizeof(char *));
	flags->command_argv[0] = strdup("ctest");
	flags->command_argv[1] = strdup("-j2");
	flags->command_shell = false;
	flags->attribution.frames = calloc(2, sizeof(char *));
	flags->attribution.frames[0] = strdup("gtest");

	tf_config_merge(file, flags);
	tf_config_free(flags);
	assert_int_equal(file->freq, 997);
	assert_true(fabs(file->gate.threshold - 10) < 1e-9);
	assert_int_equal(file->publish.comment, 1);
	assert_string_equal(file->target_branch, "develop");
	assert_false(file->command_shell);
	assert_string_equal(file->command_argv[0], "ctest");
	assert_string_equal(file->command_argv[1], "-j2");
	assert_string_equal(file->attribution.frames[0], "gtest");
	assert_null(file->attribution.frames[1]);
	/* what the flags did not set stays from the file */
	assert_string_equal(file->suite, "s");
	assert_int_equal(file->gate.fail_on_regression, 1);
	assert_string_equal(file->attribution.drivers[0], "tox");

	/* merging an empty config changes nothing */
	tf_config *empty = tf_config_new();
	tf_config_merge(file, empty);
	tf_config_free(empty);
	assert_int_equal(file->freq, 997);
	assert_string_equal(file->suite, "s");

	/* patterns replace patterns */
	tf_config *pat = parse_ok("attribution:\n  patterns: ['^x_(.*)']\n");
	tf_config_merge(file, pat);
	tf_config_merge(file, pat);
	assert_int_equal(file->attribution.patterns.n, 1);
	tf_config_free(pat);
	tf_config_free(file);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_unset),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_names_match_record),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_memory_gate),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_load),
		cmocka_unit_test(test_merge_flags_over_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
