/*
 * cli_int.h - what the command files share: the declarative option
 * parser, the message functions and the comparison's table (the only code
 * that prints to the user), the engine's callbacks over them, and the
 * command entry points.
 *
 * Exit statuses (SPEC §7): 0 fine, 1 testflame failed, 2 usage error,
 * 3 regression found; `record` and `run` pass the command's own status
 * through (a signal death as 128+N).
 */
#ifndef TESTFLAME_CLI_INT_H
#define TESTFLAME_CLI_INT_H

#include "testflame/run.h" /* the engine the commands drive; TF_EXIT_* */

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
/* A copy of a table built on the stack (`size` bytes), for a function that
 * returns one for other tables to include; the caller frees it. */
tf_option *tf_cli_options_dup(const tf_option *opts, size_t size);
void tf_usage_print(FILE *fp, const char *const *usage, const tf_option *opts);
/* When set, tf_usage_print() hands its usage and table here instead of
 * printing them: how manual.c reads every command's options. */
extern void (*tf_usage_hook)(const char *const *usage, const tf_option *opts);
/* Print "testflame: MESSAGE" plus the usage hint; returns TF_EXIT_USAGE. */
int tf_usage_error(const char *const *usage, const char *fmt, ...) TF_PRINTF(2, 3);

/* Messages, on stderr, one line each: errors always print; warnings unless
 * -q means only errors (TF_CLI_ERRORS); notes unless -q; verbose ones
 * need -v. */
enum { TF_CLI_ERRORS = -2, TF_CLI_WARNINGS = -1, TF_CLI_NORMAL = 0 };
extern int tf_cli_verbosity; /* TF_CLI_ERRORS .. TF_CLI_NORMAL, 1+ verbose */
void tf_errorf(const char *fmt, ...) TF_PRINTF(1, 2);
void tf_warnf(const char *fmt, ...) TF_PRINTF(1, 2);
void tf_notef(const char *fmt, ...) TF_PRINTF(1, 2);
void tf_verbosef(const char *fmt, ...) TF_PRINTF(1, 2);
/* An engine's notices (tf_notice_fn), printed as the functions above do. */
void tf_cli_notice(void *ctx, tf_notice_level level, const char *msg);

/* The engine's voice for commands that print nothing else: notices only. */
extern const tf_run_io tf_cli_notices;

/* How the commands that drive the run engine print: the flags they share. */
typedef struct {
	int verbose;                /* -v */
	bool quiet;                 /* -q */
	const char *quiet_help;     /* what -q means for the command ("only errors") */
	const char *colour;         /* --color: the table's */
	bool all;                   /* --all: unchanged tests in the table too */
	/* the progress line of a recording */
	bool tty, shown;
	uint64_t last_line_ns;
} tf_cli_out;
/*
 * The engine's callbacks (tf_run_io over `out`, which must outlive it):
 * notices on stderr by the message functions, output on stdout, the table
 * as `compare` shows it, the progress of a recording as one line on a
 * terminal or a heartbeat in a log (not with -q or $TESTFLAME_NO_PROGRESS).
 * Sets the verbosity from -q and -v.
 */
void tf_cli_io(tf_run_io *io, tf_cli_out *out);
/* Print the engine's last error; returns TF_EXIT_ERROR (or USAGE for TF_EUSAGE). */
int tf_fail(int rc);
/* Whether stdout / stderr is a terminal (colour, progress lines). */
bool tf_cli_isatty(int fd);

/* The command table (main.c), and the manual and completion generated
 * from it and the commands' option tables (manual.c, man_roff.c,
 * man_completion.c): argv[0] "--man" [CMD] or "--completion". */
typedef struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
} tf_cli_command;
int tf_cli_manual(int argc, char **argv, const tf_cli_command *cmds, size_t n);

/* A command's page as its --help gives it (manual.c): the options of each
 * table rendered while the table lives (commands keep theirs on the
 * stack), as roff (man_roff.c) and as completion lines (man_completion.c). */
typedef struct {
	const char *const *usage;
	char *roff;              /* NULL: no options */
	char *complete;          /* "WORDS|KIND|CHOICES|help" lines */
} tf_cli_collected;

typedef struct {
	char *sub;               /* NULL: the command itself */
	tf_cli_collected c;
} tf_cli_section;

typedef struct {
	const char *name, *summary;
	TF_VEC(tf_cli_section) sections;
	char *text;              /* what --help printed besides the usage */
} tf_cli_page;

/* Run the command's --help, and each subcommand's its usage lines name. */
void tf_cli_page_load(tf_cli_page *pg, const tf_cli_command *c);
void tf_cli_page_free(tf_cli_page *pg);
/* The subcommand a usage line names ("testflame baseline list [...]":
 * "list"), allocated; NULL when it names none. */
char *tf_cli_usage_sub(const char *line, const char *cmd);

static inline bool tf_cli_takes_arg(const tf_option *o)
{
	return o->type == TF_OPT_STRING || o->type == TF_OPT_INT ||
	       o->type == TF_OPT_DOUBLE || o->type == TF_OPT_LIST;
}

/* man_roff.c: an option table as roff, testflame-CMD(1), testflame(1),
 * testflame.yml(5) (without docs/config.md's example, which the build adds). */
void tf_cli_roff_options(tf_buf *fp, const tf_option *opts);
void tf_cli_man_command(tf_buf *fp, const tf_cli_page *pg);
void tf_cli_man_overview(tf_buf *fp, const tf_cli_command *cmds, size_t n);
void tf_cli_man_config(tf_buf *fp);

/* man_completion.c: an option table as completion lines; the whole table. */
void tf_cli_complete_options(tf_buf *fp, const tf_option *opts);
void tf_cli_completion(tf_buf *fp, const tf_cli_command *cmds, size_t n);

/* --color's values. */
extern const char *const tf_cli_colour_choices[];

/*
 * Print the table of `c` ending with a link to `report_dir`/index.html
 * (table.c): coloured with --color `colour` (auto: on a terminal, unless
 * NO_COLOR is set or TERM is dumb), as wide as the terminal within the 72
 * to 100 columns it is laid out for (100 in a log), unchanged tests too
 * with `all`. Returns 0 or the engine's error, not printed.
 */
struct tf_comparison;
int tf_cli_print_table(const struct tf_comparison *c, const char *report_dir,
		       const char *colour, bool all);

/* What -q means for run and merge, the gates: errors, and a regression
 * when there is one (tf_cli_print_regressions), nothing else. */
#define TF_RUN_QUIET_HELP "only errors, and the regressed tests when a test got slower"
/* -q: one line per regressed test and where the report is; nothing when
 * none regressed. */
void tf_cli_print_regressions(const struct tf_comparison *c, const char *report_dir);

/* The table's callback of tf_run_io (table.c); `ctx` is a tf_cli_out: the
 * table, or with -q only the regressions. */
int tf_cli_table(void *ctx, const struct tf_comparison *c, const char *report_dir);
/* The same followed by the memory comparison's section (run.h's
 * memory_table). */
int tf_cli_memory_table(void *ctx, const struct tf_comparison *c,
			const struct tf_comparison *memory, bool gated, const char *report_dir);

/*
 * The option tables `run` and `merge` include (each malloc'd; the caller
 * frees it): the recording's, over `s` (cmd_record.c, `record`'s own), and
 * the baseline's, the gate's, the report's and publishing's, over `o`
 * (cmd_run.c); -q, -v, --color and --all go to `out`.
 */
tf_option *tf_cli_record_options(tf_run_suite *s, tf_cli_out *out);
tf_option *tf_cli_run_options(tf_run_opts *o, tf_cli_out *out);
/*
 * Check what follows the options of `record` or `run` (`name`), parsed
 * with TF_PARSE_STOP_AT_NONOPT: nothing, or "--" and the command. Returns
 * 0, or TF_EXIT_USAGE after printing what is wrong.
 */
int tf_cli_record_args(const char *const *usage, const char *name, char **argv, int nargs,
		       int dashdash);

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
