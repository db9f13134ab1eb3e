/*
 * report_common.h - what `compare` and `run` share at the end: the
 * comparison's table on stdout, coloured and sized for where it goes.
 */
#ifndef TESTFLAME_CLI_REPORT_COMMON_H
#define TESTFLAME_CLI_REPORT_COMMON_H

#include "cli.h"
#include "testflame/report.h"

/* --color's values. */
extern const char *const tf_cli_colour_choices[];

/*
 * Print the table of `c` ending with a link to `report_dir`/index.html:
 * coloured with --color `colour` (auto: on a terminal, unless NO_COLOR is
 * set or TERM is dumb), as wide as the terminal within the 72 to 100
 * columns it is laid out for (100 in a log), unchanged tests too with
 * `all`. Returns 0 or the engine's error, not printed.
 */
int tf_cli_print_table(const tf_comparison *c, const char *report_dir, const char *colour,
		       bool all);
/* The same followed by the memory comparison's section (`memory` may be
 * NULL: as tf_cli_print_table), judged by gate.memory when `memory_gated`. */
int tf_cli_print_tables(const tf_comparison *c, const tf_comparison *memory, bool memory_gated,
			const char *report_dir, const char *colour, bool all);

#endif
