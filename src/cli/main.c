/*
 * main.c - testflame's entry point and command table, git style: the first
 * argument names a command, each command lives in its own cmd_<name>.c and
 * parses its own options.
 */
#include "cli_int.h"

#include <string.h>

static const tf_cli_command commands[] = {
	{ "run", cmd_run, "record the suite, compare each test with its baseline, report, gate" },
	{ "merge", cmd_merge, "merge the shards of a suite run by parallel CI jobs, then compare, report, gate" },
	{ "record", cmd_record, "run a command under the sampling profiler and write a run file" },
	{ "view", cmd_view, "show or convert a profile (top table, page, flame graph, folded, pprof, speedscope)" },
	{ "show", cmd_show, "print a run file's metadata and per-test totals" },
	{ "compare", cmd_compare, "compare two profiles (or runs) test by test" },
	{ "history", cmd_history, "the default branch's stored runs as per-test series: steps and drifts, dated" },
	{ "bisect", cmd_bisect, "the commit that made a test slower: stored runs first, then built and run here" },
	{ "baseline", cmd_baseline, "list, show, save, fetch, push and prune stored baselines" },
	{ "publish", cmd_publish, "post a report directory to the PR/MR (comment, annotations, summary)" },
	{ "hook", cmd_hook, "install or uninstall the pre-push hook that refuses slower pushes" },
	{ "doctor", cmd_doctor, "what this machine allows testflame to do, with the fix for each problem" },
	{ "version", cmd_version, "print testflame's version and the commit it was built from" },
	{ "help", cmd_help, "show help for testflame or one of its commands" },
};

static const tf_cli_command *find_command(const char *name)
{
	for (size_t i = 0; i < TF_ARRAY_SIZE(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void print_overview(FILE *fp)
{
	fputs("usage: testflame <command> [options] [-- CMD ARGS...]\n\n"
	      "Runs a test suite under a sampling profiler, splits the samples per test,\n"
	      "compares each test with a baseline and reports what got slower.\n\n"
	      "commands:\n", fp);
	for (size_t i = 0; i < TF_ARRAY_SIZE(commands); i++)
		fprintf(fp, "   %-10s %s\n", commands[i].name, commands[i].summary);
	fputs("\n'testflame help <command>' shows a command's options.\n", fp);
}

int cmd_help(int argc, char **argv)
{
	const tf_cli_command *c;
	char *help_argv[3];

	if (argc < 2) {
		print_overview(stdout);
		return TF_EXIT_OK;
	}
	/* the manual pages and the completion table, made by the build */
	if (strcmp(argv[1], "--man") == 0 || strcmp(argv[1], "--completion") == 0)
		return tf_cli_manual(argc - 1, argv + 1, commands, TF_ARRAY_SIZE(commands));
	c = find_command(argv[1]);
	if (!c) {
		tf_errorf("no such command '%s' (see 'testflame help')", argv[1]);
		return TF_EXIT_USAGE;
	}
	if (c->fn == cmd_help) {
		print_overview(stdout);
		return TF_EXIT_OK;
	}
	help_argv[0] = argv[1];
	help_argv[1] = (char *)"--help";
	help_argv[2] = NULL;
	return c->fn(2, help_argv);
}

int cmd_version(int argc, char **argv)
{
	char buf[96];

	(void)argc;
	(void)argv;
	printf("testflame %s\n", tf_version_describe(buf, sizeof(buf)));
	return TF_EXIT_OK;
}

int main(int argc, char **argv)
{
	const tf_cli_command *c;

	tf_heap_huge_pages();
	if (argc < 2) {
		print_overview(stderr);
		return TF_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		print_overview(stdout);
		return TF_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(0, NULL);
	c = find_command(argv[1]);
	if (!c) {
		tf_errorf("'%s' is not a testflame command (see 'testflame help')", argv[1]);
		return TF_EXIT_USAGE;
	}
	return c->fn(argc - 1, argv + 1);
}
