/*
 * shift.c - the runner's shift: how much slower or faster the machine of
 * the head ran than the baseline's, measured on the tests that ran no
 * changed code, and taken out of every test's verdict.
 *
 * A stored baseline was recorded by another job, often on another machine
 * and under other neighbours; a history of one runner's noise cannot undo
 * a job that ran on a slower one, and a gate that fails unchanged PRs for
 * it gets switched off. The tests whose samples never ran changed code are
 * a control group: whatever moved them together moved every test, and it
 * was the runner, not the code. So is the own work of a program that
 * holds tests (a Go package's test binary: the runtime, GC, the testing
 * package), which ran no changed code: a suite of a few Go tests, most
 * too short for a sample, has fewer than five tests to measure by, and
 * its package binaries moved with the machine (go-cmp's README branch at
 * a load of 20: cmp.test +32%, [outside tests] +20%, TestDifferenceFuzz
 * +50% by its CPU, alone flagged). Their median log ratio is the shift; a
 * test is judged on what it moved beyond that, with the shift's own
 * uncertainty (a median of n values with spread s has variance about
 * pi/2 s^2 / n) added to its variance.
 *
 * "Ran changed code": a frame of the test, on either side, in a changed
 * file, at or after a changed line of its function (a changed line between
 * the function's first line and the frame's line). A test never sampled
 * counts as not having run changed code: a change that made it slower
 * would have given it samples there. No control group: when the change
 * touches what builds the code (Makefiles, CMake, meson, a package
 * manifest), when fewer than five tests are left, or without the head's
 * changes in its run file (profiles from other tools). The verdicts then
 * stand as they are, and the summary says why.
 */
#include "compare/compare_int.h"
#include "testflame/context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A changed file that builds or configures the code: every test may move. */
static bool build_file(const char *path)
{
	static const char *const names[] = {
		"Makefile", "GNUmakefile", "makefile", "CMakeLists.txt", "meson.build",
		"meson_options.txt", "configure", "configure.ac", "configure.in", "Makefile.am",
		"Makefile.in", "setup.py", "setup.cfg", "pyproject.toml", "go.mod", "go.sum",
		"Cargo.toml", "Cargo.lock", "package.json", "package-lock.json", "build.gradle",
		"pom.xml", "BUILD", "BUILD.bazel", "WORKSPACE", "SConstruct", "tox.ini",
		".testflame.yml", NULL,
	};
	const char *base = strrchr(path, '/');
	size_t n;
	base = base ? base + 1 : path;
	for (const char *const *p = names; *p; p++)
		if (strcmp(base, *p) == 0)
			return true;
	n = strlen(base);
	return (n > 6 && strcmp(base + n - 6, ".cmake") == 0) ||
	       (n > 3 && strcmp(base + n - 3, ".mk") == 0) ||
	       (n > 4 && strncmp(base, "requirements", 12) == 0 && strcmp(base + n - 4, ".txt") == 0);
}

/* Whether a frame at `line` of `fn` (starting at `start`) in `file` ran
 * changed code: a changed line of the file in [start, line]. */
static bool frame_changed(const tf_changes *ch, const char *file, int64_t start, int64_t line)
{
	const tf_changed_file *f = *file ? tf_changes_find(ch, file) : NULL;
	if (!f)
		return false;
	if (start <= 0 || line <= 0 || start > line)
		start = line; /* no first line: the frame's own line only */
	for (size_t i = 0; i < f->lines.n; i++) {
		int64_t a = f->lines.v[i].start, b = a + f->lines.v[i].count; /* [a, b) */
		if (a <= line && b > start)
			return true;
	}
	return false;
}

/* Mark the internal tests with a sample that ran changed code. */
static void mark_touched(const struct tf_compare_priv *pv, const tf_changes *ch, bool *touched)
{
	for (size_t r = 0; r < pv->nruns; r++) {
		const tf_profile *p = pv->runs[r].p;
		uint8_t *loc = tf_xcalloc(p->locations.n + 1, 1); /* 0 unknown, 1 no, 2 yes */
		for (size_t i = 0; i < p->samples.n; i++) {
			uint32_t t = pv->runs[r].sample_test[i];
			if (t == NO_ID || touched[t])
				continue;
			const tf_sample *s = &p->samples.v[i];
			for (uint32_t k = 0; k < s->nlocs && !touched[t]; k++) {
				uint32_t li = p->stack.v[s->locs_off + k];
				if (!loc[li]) {
					const tf_location *l = &p->locations.v[li];
					bool yes = false;
					for (uint32_t j = 0; j < l->nlines && !yes; j++) {
						const tf_line *ln = &p->lines.v[l->lines_off + j];
						const tf_function *fn = &p->functions.v[ln->function];
						yes = frame_changed(ch, tf_profile_str(p, fn->filename),
								    fn->start_line, ln->line);
					}
					loc[li] = yes ? 2 : 1;
				}
				if (loc[li] == 2)
					touched[t] = true;
			}
		}
		free(loc);
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void tf_cmp_runner_shift(tf_comparison *c, double *shift, double *shift_var)
{
	struct tf_compare_priv *pv = c->priv;
	tf_compare_summary *s = &c->summary;
	const char *json = tf_comparison_meta(c, true, "changes");
	tf_changes ch;
	char why[256] = "";

	*shift = 0;
	*shift_var = 0;
	s->shift_pct = NAN;
	s->control_tests = 0;
	if (!json || tf_changes_from_json(&ch, json) != 0) {
		tf_error_clear();
		s->shift_note = "the head's run file does not say what changed";
		return;
	}
	for (size_t i = 0; i < ch.files.n && !why[0]; i++)
		if (build_file(ch.files.v[i].path) ||
		    (ch.files.v[i].old_path && build_file(ch.files.v[i].old_path)))
			snprintf(why, sizeof(why), "no control group: '%.120s' changed, which builds "
				 "the code, so every test may have moved", ch.files.v[i].path);
	if (why[0]) {
		s->shift_note = tf_arena_strdup(pv->arena, why);
		tf_changes_free(&ch);
		return;
	}
	tf_changes_free(&ch);

	double *d = tf_xcalloc(c->ntests + 1, sizeof(double));
	size_t n = 0, touching = 0;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		/* a program's own work beside the tests it holds is one more
		 * measure of the runner ("[outside tests]", the command's and
		 * its build's, is not: a build redoes what changed) */
		if (!strcmp(t->name, TF_OUTSIDE_TEST) || !t->base.ran || !t->head.ran ||
		    t->base.cost <= 0 || t->head.cost <= 0)
			continue;
		if (t->ran_changed) {
			touching++;
			continue;
		}
		/* a sampled test without samples says nothing of its cost */
		if (t->measure == TF_MEASURE_SAMPLES && (!t->base.samples || !t->head.samples))
			continue;
		d[n++] = log(t->head.cost / t->base.cost);
	}
	s->control_tests = n;
	s->touching_tests = touching;
	if (n < 5) {
		snprintf(why, sizeof(why), "no control group: %zu test%s ran no changed code, "
			 "too few to measure the runner by", n, n == 1 ? "" : "s");
		s->shift_note = tf_arena_strdup(pv->arena, why);
	} else {
		double m = median(d, n);
		for (size_t i = 0; i < n; i++)
			d[i] = fabs(d[i] - m);
		double sd = 1.4826 * median(d, n);
		*shift = m;
		*shift_var = M_PI / 2 * sd * sd / (double)n;
		s->shift_pct = (exp(m) - 1) * 100;
		s->shift_ci_pct = 1.959963984540054 * sqrt(*shift_var) * 100;
	}
	free(d);
}

void tf_cmp_mark_changed(tf_comparison *c)
{
	struct tf_compare_priv *pv = c->priv;
	const char *json = tf_comparison_meta(c, true, "changes");
	tf_changes ch;

	if (!json || tf_changes_from_json(&ch, json) != 0) {
		tf_error_clear();
		return;
	}
	bool *touched = tf_xcalloc(pv->ninternal + 1, sizeof(bool));
	mark_touched(pv, &ch, touched);
	for (size_t i = 0; i < c->ntests; i++)
		c->tests[i].ran_changed = touched[pv->test_id[i]];
	/* a test ran what its nested tests ran (a ctest test whose samples
	 * are its Unity tests'): cJSON's json_patch_tests */
	tf_htab by_name;
	tf_cmp_index_tests(c, &by_name);
	for (size_t i = 0; i < c->ntests; i++) {
		if (!touched[pv->test_id[i]])
			continue;
		const char *parent = c->tests[i].parent;
		/* bounded: a cycle in hostile metadata ends the walk */
		for (size_t depth = 0; parent && depth < 16; depth++) {
			uint32_t j = tf_cmp_find_test(c, &by_name, parent);
			if (j == TF_HTAB_NONE || j == i)
				break;
			c->tests[j].ran_changed = true;
			parent = c->tests[j].parent;
		}
	}
	tf_htab_free(&by_name);
	free(touched);
	tf_changes_free(&ch);
}
