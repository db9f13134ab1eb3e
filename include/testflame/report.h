/*
 * report.h - every report testflame writes from a comparison: the report
 * directory of SPEC §6 in one call, and each format on its own for the
 * commands and CI steps that need one (the publisher posts report.md, turns
 * regressions into GitHub annotations and fills $GITHUB_STEP_SUMMARY).
 *
 *   index.html        one self-contained interactive page: per-test table, diff
 *                     flame graph (zoom, search, tooltips, flame/icicle,
 *                     sandwich view), top functions with file:line
 *   report.md         the PR/MR comment, under a size limit, with a hidden
 *                     marker naming the suite
 *   report.json       the comparison (tf_comparison_to_json)
 *   junit.xml         one testcase per test; regressions are failures
 *   codequality.json  GitLab Code Quality: regressed functions at file:line
 *   <test>.svg        a static diff flame graph per changed test
 *   <test>.folded     its stacks as "stack BASE HEAD" lines (the two-column
 *                     form of FlameGraph's difffolded.pl, for flamegraph.pl)
 *   base.pb.gz, head.pb.gz   the runs compared (base-2.pb.gz, ... with more
 *                     runs), which pprof and speedscope open directly
 *
 * Speedscope JSON of a profile comes from tf_speedscope_write() (profile.h,
 * `testflame view --format speedscope`); folded diffs of any test or of all
 * of them from tf_report_folded_diff().
 *
 * The engine builds bytes into a tf_buf or writes files atomically; it
 * never prints. Every name that comes from the profiled code (tests,
 * functions, files) is escaped for the format it lands in, trimmed when it
 * is absurdly long, and repaired when it is not UTF-8.
 *
 * Run metadata (commits, branch, provider, repository, run URL, suite) is
 * read from the run files (tf_comparison_meta()) wherever an option is left
 * NULL, so `testflame compare` on two run files gets links and headlines
 * without being told anything.
 */
#ifndef TESTFLAME_REPORT_H
#define TESTFLAME_REPORT_H

#include "testflame/common.h"
#include "testflame/compare.h"
#include "testflame/profile.h"

typedef struct {
	const char *dir;          /* report directory for tf_report_write() */
	const char *suite;        /* the suite's name (marker, JUnit); NULL: head meta
				   * "suite", else "tests" */
	const char *provider;     /* "github", "gitlab", "circleci", "local", ...;
				   * NULL: head meta "ci" */
	const char *repo_url;     /* web page of the repository, for source links:
				   * https://github.com/OWNER/REPO or GitLab's project
				   * URL; NULL: built from the provider and head meta
				   * "repository" (github.com / gitlab.com) */
	const char *head_commit;  /* commit the source links point at; NULL: head
				   * meta "head_sha", else "commit" */
	const char *base_commit;  /* the baseline's commit for the headline; NULL:
				   * base meta "commit" */
	long base_distance;       /* commits between baseline and head; < 0 unknown */
	const char *artifact_url; /* where the full report can be opened; NULL: none */
	const char *run_url;      /* the CI run; NULL: head meta "run_url" */
	const char *source_root;  /* the work tree's path when the profile was
				   * recorded: absolute file names under it become
				   * repository paths; NULL: head meta "workdir" */
	const char *title;        /* page title; NULL: "testflame: SUITE" */
	bool colorblind;          /* orange/blue instead of red/blue (the page can
				   * switch either way) */
	bool write_profiles;      /* copy the runs as head.pb.gz / base.pb.gz (default on) */
	/* The memory comparison of the same runs (tf_compare of their
	 * alloc_space; NULL: none): report.json holds it under "memory",
	 * report.md and the terminal summary get its section (the tests that
	 * allocate more and where, leaks, peaks), index.html its allocation
	 * diff flame graphs (index.html#memory). `memory_gated`: gate.memory
	 * judged it, and its regressions fail the check. */
	const tf_comparison *memory;
	bool memory_gated;
	/* report.md links each regressed test to `test_link(name, payload)`
	 * (a URL the caller's function allocates, or NULL for none) with the
	 * words `test_link_text`: Grafana's comparison of the two commits. */
	char *(*test_link)(const char *test, void *payload);
	void *test_link_payload;
	const char *test_link_text;

	/* Limits. */
	size_t md_max_bytes;      /* report.md (default 65000, under GitHub's and
				   * GitLab's 65,536 characters) */
	size_t md_max_tests;      /* rows in report.md's table of changes (default 50) */
	size_t md_max_functions;  /* functions per regressed test (default 10) */
	size_t summary_max_bytes; /* step summary (default 1000000: GitHub's 1 MiB) */
	size_t html_max_nodes;    /* frames kept in index.html (default 60000) */
	double html_min_share;    /* frames smaller than this share of their test
				   * merge into "(other)" (default 0.0001) */
	size_t html_max_functions;/* per test in the page's function table (default
				   * 200; unchanged tests of a big suite get fewer) */
	size_t svg_max_files;     /* SVG files written (default 100, most changed first) */
	unsigned svg_width;       /* pixels (default 1200) */
	size_t annotations_max;   /* GitHub warnings per step (default and maximum 10) */
	size_t name_max;          /* characters of a name before it is shortened in
				   * the middle (default 200; the page keeps 1000) */
} tf_report_opts;

void tf_report_opts_init(tf_report_opts *o);

/*
 * Write the whole report directory: the files listed at the top of this
 * header. `o->dir` must be set. The directory changes as a whole: a run
 * killed on the way leaves the old report or the new one, never a mix (an
 * older report's files go with it). A directory that also holds other
 * files keeps them: the report's files are replaced one by one there.
 * Per-test files are named by tf_report_file_name().
 */
int tf_report_write(const tf_comparison *c, const tf_report_opts *o);

/* index.html for a comparison. */
int tf_report_html(tf_buf *out, const tf_comparison *c, const tf_report_opts *o);

/*
 * A static SVG diff flame graph of one test (an index into c->tests, or
 * TF_ALL_TESTS), with <title> tooltips: width from the head, colour from
 * the change. No script, so it is safe to embed anywhere.
 */
int tf_report_svg(tf_buf *out, const tf_comparison *c, size_t test, const tf_report_opts *o);
/* A file name for a test's file with extension `ext` (".svg"): the name
 * when it is short and made of [A-Za-z0-9._-] only (not starting with '.'
 * or '-'), else a cleaned prefix plus a hash of the name, so different
 * tests never share a file and no name leaves the directory. Caller frees. */
char *tf_report_file_name(const char *test, const char *ext);

/*
 * report.md, the PR/MR comment: headline, the table of changed tests, the
 * top functions of each regressed test (linked to the source at the head
 * commit when the provider is known), a link to the full report, and the
 * hidden marker (tf_report_marker) first. Written when nothing changed too.
 * Never longer than o->md_max_bytes: the least important rows go first, and
 * the comment says what it left out.
 */
int tf_report_markdown(tf_buf *out, const tf_comparison *c, const tf_report_opts *o);
/* The same for $GITHUB_STEP_SUMMARY: no marker, o->summary_max_bytes. */
int tf_report_step_summary(tf_buf *out, const tf_comparison *c, const tf_report_opts *o);
/* The marker report.md starts with: "<!-- testflame:report suite=NAME -->"
 * (the name percent-encoded), so a later run finds and edits its comment. */
void tf_report_marker(tf_buf *out, const char *suite);

/* JUnit XML: one testsuite named after the suite, one testcase per test
 * with its time in seconds; regressions are <failure>s with the numbers. */
int tf_report_junit(tf_buf *out, const tf_comparison *c, const tf_report_opts *o);

/* GitLab Code Quality JSON: one issue per function of a regressed test
 * whose self cost grew and whose source file is known, at its path (made
 * relative to the source root) and line; fingerprints depend
 * on the suite, test, function and file only, so they are stable across
 * runs; severity from the growth as a share of the test's cost. */
int tf_report_codequality(tf_buf *out, const tf_comparison *c, const tf_report_opts *o);

/*
 * GitHub workflow commands, one per line, within GitHub's limits for a step
 * (10 warnings, 10 errors): one ::error summing up the regressions, then
 * ::warning file=...,line=...::... for the functions that grew most, most
 * important first. Properties and messages escaped as the runner expects;
 * titles at most 255 characters, messages at most 4 KiB. Nothing when no
 * test regressed.
 */
int tf_report_github_annotations(tf_buf *out, const tf_comparison *c, const tf_report_opts *o);

/* Folded stacks of one test (or TF_ALL_TESTS, or TF_EACH_TEST for every
 * test under a frame named after it) in the two-column form FlameGraph's
 * difffolded.pl writes: "frame;frame;... BASE HEAD", values in the
 * summary's unit. */
int tf_report_folded_diff(tf_buf *out, const tf_comparison *c, size_t test);

/*
 * The terminal summary: the comparison's table (tf_comparison_render_table),
 * the functions that grew most across all regressed tests, and the path of
 * the HTML report when `html_path` is set.
 */
int tf_report_terminal(tf_buf *out, const tf_comparison *c, const tf_table_opts *t,
		       const char *html_path);

/* The memory section of the terminal summary (`m` the memory comparison,
 * NULL: nothing): its table, and its leaks, peaks and notes. */
int tf_report_memory_terminal(tf_buf *out, const tf_comparison *m, bool gated,
			      const tf_table_opts *t);

/*
 * Single-profile versions for `testflame view`: the page and the SVG flame
 * graph of one profile (value column `value`, only test `test` when set,
 * `name` shown as the title: usually the file name).
 */
int tf_report_profile_html(tf_buf *out, const tf_profile *p, size_t value, const char *test,
			   const char *name, const tf_report_opts *o);
int tf_report_profile_svg(tf_buf *out, const tf_profile *p, size_t value, const char *test,
			  const char *name, const tf_report_opts *o);

/* For the publisher (publish.h). */
/*
 * A review comment on the changed line of a function that grew: the
 * function c->tests[tests[i]].functions[funcs[i]] (the same function in
 * each of the n regressed tests it grew in), its growth, and those tests.
 * No marker: the publisher adds its own.
 */
int tf_report_review_note(tf_buf *out, const tf_comparison *c, const size_t *tests,
			  const size_t *funcs, size_t n, const tf_report_opts *o);
/* A comment with no comparison behind it ("no baseline to compare with
 * yet: ..."): the marker of report.md, a heading and `text`, escaped. */
void tf_report_markdown_message(tf_buf *out, const char *suite, const char *text);
/*
 * The report directory of a run with nothing to compare with: the run
 * itself as `dir`/head.pb.gz and a report.md saying why (`why`, NULL: none
 * was found), so a pull request hears from testflame on its first build.
 */
int tf_report_write_no_baseline(const char *dir, const char *suite, const tf_profile *head,
				const char *why);

/*
 * A run file at a glance (`testflame show`): its metadata (sorted), the
 * totals with their units, what was lost on the way (lost, throttled,
 * unresolved, truncated), the per-test table (wall time, attribution
 * source and exit status where the run file records them; build steps
 * apart) and the per-process one; as text, or as JSON with `json`. `file`
 * names it. What a foreign profile does not say is left out.
 */
int tf_report_show(tf_buf *out, const tf_profile *p, const char *file, bool json);

/*
 * history.html: the history of a suite (testflame history) as one offline
 * page, a plot per test with its steps and drifts marked and each point a
 * link to its commit: `commit_url` followed by the commit id (a
 * repository's web page, "https://host/owner/repo/commit/"), or NULL for
 * the page's own table of commits.
 */
struct tf_history_render;
int tf_report_history_html(tf_buf *out, const struct tf_history_render *r, const char *commit_url);

#endif
