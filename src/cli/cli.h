/*
 * cli.h - what the command files share: the declarative option parser, the
 * message functions (the only code that prints to the user), and the
 * command entry points.
 *
 * Exit statuses (SPEC §7): 0 fine, 1 testflame failed, 2 usage error,
 * 3 regression found; `record` and `run` pass the command's own status
 * through (a signal death as 128+N).
 */
#ifndef TESTFLAME_CLI_H
#define TESTFLAME_CLI_H

#include "testflame/common.h"

enum {
	TF_EXIT_OK = 0,
	TF_EXIT_ERROR = 1,
	TF_EXIT_USAGE = 2,
	TF_EXIT_REGRESSION = 3,
};

typedef enum {
	TF_OPT_END = 0,
	TF_OPT_FLAG,     /* bool *, set to true */
	TF_OPT_STRING,   /* const char **; with `choices`, must be one of them */
	TF_OPT_INT,      /* long * */
	TF_OPT_DOUBLE,   /* double * */
	TF_OPT_LIST,     /* appends to a TF_VEC(const char *) (struct tf_strlist *) */
	TF_OPT_COUNT,    /* int *, incremented (-v -v) */
	TF_OPT_GROUP,    /* a heading in --help */
	TF_OPT_INCLUDE,  /* another table's options, here (`include`) */
} tf_opt_type;

struct tf_strlist {
	TF_VEC(const char *) items;
};

typedef struct tf_option {
	tf_opt_type type;
	char short_name;
	const char *long_name;
	void *value;
	const char *argh;   /* argument placeholder in --help ("HZ") */
	const char *help;
	const char *const *choices; /* NULL-terminated */
	long min, max;      /* bounds for TF_OPT_INT when min < max */
	bool *seen;         /* set when given on the command line */
	const struct tf_option *include; /* TF_OPT_INCLUDE: the table */
} tf_option;

/*
 * Option tables, as git writes them: one macro per option, the table
 * ended by TF_OPTS_END, so that no command counts its options or sizes an
 * array for them. Optional fields go last as designated initializers:
 * .choices = a NULL-terminated list, .seen = &a_bool.
 *
 *   const tf_option opts[] = {
 *       TF_OPT_GROUP("output"),
 *       TF_OPT_STRING('o', "output", &out, "FILE", "where to write"),
 *       TF_OPT_INT(0, "top", &top, "N", "functions to show", 0, 1000, .seen = &top_seen),
 *       TF_OPT_INCLUDE(other_table),
 *       TF_OPTS_END,
 *   };
 */
#define TF_OPT_GROUP(h) { .type = TF_OPT_GROUP, .help = (h) }
#define TF_OPT_FLAG(s, l, v, h, ...) \
	{ .type = TF_OPT_FLAG, .short_name = (s), .long_name = (l), .value = (v), .help = (h), __VA_ARGS__ }
#define TF_OPT_COUNT(s, l, v, h, ...) \
	{ .type = TF_OPT_COUNT, .short_name = (s), .long_name = (l), .value = (v), .help = (h), __VA_ARGS__ }
#define TF_OPT_STRING(s, l, v, a, h, ...) \
	{ .type = TF_OPT_STRING, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), __VA_ARGS__ }
#define TF_OPT_INT(s, l, v, a, h, lo, hi, ...) \
	{ .type = TF_OPT_INT, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), .min = (lo), .max = (hi), __VA_ARGS__ }
#define TF_OPT_DOUBLE(s, l, v, a, h, ...) \
	{ .type = TF_OPT_DOUBLE, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), __VA_ARGS__ }
#define TF_OPT_LIST(s, l, v, a, h, ...) \
	{ .type = TF_OPT_LIST, .short_name = (s), .long_name = (l), .value = (v), .argh = (a), \
	  .help = (h), __VA_ARGS__ }
#define TF_OPT_INCLUDE(table) { .type = TF_OPT_INCLUDE, .include = (table) }
/* The options every command spells alike. */
#define TF_OPT_QUIET(v, h) TF_OPT_FLAG('q', "quiet", (v), (h))
#define TF_OPT_VERBOSE(v, h) TF_OPT_COUNT('v', "verbose", (v), (h))
#define TF_OPTS_END { .type = TF_OPT_END }

enum {
	/* Stop at the first non-option and keep the rest ("-- CMD ARGS"). */
	TF_PARSE_STOP_AT_NONOPT = 1,
	/* The command requires "--" before the command line. */
	TF_PARSE_REQUIRE_DASHDASH = 2,
};

/*
 * Parse argv[1..]; options may come anywhere before "--" unless
 * TF_PARSE_STOP_AT_NONOPT. On return argv holds the positional arguments
 * (argv[0] the command name); the count is returned. Returns -1 after
 * printing a usage error (the caller exits 2), -2 after printing --help
 * (the caller exits 0). `*dashdash` (may be NULL) tells whether "--" was seen
 * and where the arguments after it start.
 */
int tf_parse_options(int argc, char **argv, const tf_option *opts,
		     const char *const *usage, int flags, int *dashdash);
void tf_usage_print(FILE *fp, const char *const *usage, const tf_option *opts);
/* Print "testflame: MESSAGE" plus the usage hint; returns TF_EXIT_USAGE. */
int tf_usage_error(const char *const *usage, const char *fmt, ...) TF_PRINTF(2, 3);

/* Messages. error/warning always print; note respects --quiet; verbose
 * needs -v. They all go to stderr, one line each. */
extern int tf_cli_verbosity; /* -1 quiet, 0 normal, 1+ verbose */
void tf_errorf(const char *fmt, ...) TF_PRINTF(1, 2);
void tf_warnf(const char *fmt, ...) TF_PRINTF(1, 2);
void tf_notef(const char *fmt, ...) TF_PRINTF(1, 2);
void tf_verbosef(const char *fmt, ...) TF_PRINTF(1, 2);
/* Print the engine's last error; returns TF_EXIT_ERROR (or USAGE for TF_EUSAGE). */
int tf_fail(int rc);
/* Whether stdout / stderr is a terminal (colour, progress lines). */
bool tf_cli_isatty(int fd);

/* Command entry points, one file each (cmd_<name>.c). */
int cmd_record(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_publish(int argc, char **argv);
int cmd_hook(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_help(int argc, char **argv);

#endif
