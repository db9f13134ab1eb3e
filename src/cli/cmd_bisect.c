/*
 * cmd_bisect.c - `testflame bisect TEST GOOD BAD`: the commit that made
 * TEST slower.
 *
 * The stored runs of the first-parent range answer first (history's
 * bisect.c): where they show the step between two neighbouring commits,
 * nothing is built. Otherwise the commits between the last stored one
 * before the step and the first after it (all of GOOD..BAD when nothing
 * is stored) are bisected as `git bisect run` would, each candidate
 * checked out into a temporary directory (the user's checkout is never
 * touched), built with the config's `build:`, and run with its `command:`
 * alternately with GOOD, checked out and built the same way, so that both
 * meet the same machine and moment (three rounds, up to eight while
 * undecided). A candidate is bad when its slowdown against GOOD is nearer
 * the step's size than nothing. A commit that does not build or whose
 * suite fails is skipped, as `git bisect skip` does, and named.
 */
#include "run_common.h"
#include "store_common.h"
#include "testflame/history.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static const char *const bisect_usage[] = {
	"testflame bisect [--rounds N] [--suite NAME] [--store SPEC] [record options] TEST GOOD BAD",
	NULL,
};

#define ROUNDS_MAX 8
#define BISECT_FUNCTIONS 5

typedef struct {
	tf_run_opts o;
	const char *test;
	tf_store *st;
	tf_bisect_range r;
	tf_worktree *good;
	tf_run_side good_runs;   /* GOOD's runs, all rounds of every candidate */
	long rounds;
	double size;             /* the step's size, percent; NAN until known */
	bool *skipped;
	char **skip_why;
} bisect;

/* The measured verdict of one commit against GOOD. */
typedef struct {
	double delta, lo, hi;    /* percent, 95% interval */
	size_t rounds;
	tf_history_fn *functions;
	size_t nfunctions;
} measured;

static int exit_code(int st)
{
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool checkout(tf_worktree **wt, bisect *b, const char *commit, char **why)
{
	const char *build = b->o.rec.cfg->build;
	int rc = tf_worktree_create(wt, commit, NULL);
	if (rc) {
		*why = tf_xasprintf("could not be checked out: %s", tf_error_last());
		return false;
	}
	if (build) {
		tf_notef("building %.10s: %s", commit, build);
		int st = tf_worktree_run(*wt, build, false);
		if (st) {
			*why = tf_xasprintf("did not build (`%s` exited %d)", build, exit_code(st));
			return false;
		}
	}
	return true;
}

static void side_profiles(const tf_run_side *s, size_t from, const tf_profile ***out)
{
	*out = tf_xcalloc(s->runs.n - from + 1, sizeof(**out));
	for (size_t i = from; i < s->runs.n; i++)
		(*out)[i - from] = s->runs.v[i].profile;
}

/* Compare the candidate's runs with GOOD's of the same rounds. */
static int judge(measured *m, bisect *b, const tf_run_side *cand, size_t good_from, bool functions)
{
	const tf_profile **gp, **cp;
	tf_comparison *c = NULL;
	tf_compare_opts co;
	size_t n = cand->runs.n;

	side_profiles(&b->good_runs, good_from, &gp);
	side_profiles(cand, 0, &cp);
	tf_compare_opts_init(&co);
	co.test = b->test;
	co.threshold = 0.5;
	co.alpha = 0.05;
	co.min_delta_ns = 0;
	co.keep_shift = true;
	tf_compare_side bs = { gp, NULL, n }, hs = { cp, NULL, n };
	int rc = tf_compare(&c, &bs, &hs, &co);
	free(gp);
	free(cp);
	if (rc)
		return rc;
	const tf_test_delta *t = tf_comparison_find(c, b->test);
	if (!t || !t->base.ran || !t->head.ran) {
		tf_comparison_free(c);
		return tf_error_set(TF_ENOTFOUND, "unknown test '%s': the suite's runs have no such "
				    "test (see `testflame show` of a run)", b->test);
	}
	m->delta = t->delta_pct;
	m->lo = t->ci_low_pct;
	m->hi = t->ci_high_pct;
	m->rounds = n;
	if (functions && tf_history_test_functions(&m->functions, &m->nfunctions, c, t,
						   BISECT_FUNCTIONS) != 0)
		tf_error_clear();
	tf_comparison_free(c);
	return 0;
}

/*
 * Run GOOD and commit `i` alternately and judge. Returns 1 when measured,
 * 0 when the commit is to be skipped (b->skip_why[i] says why), or an
 * error (printed) as a negative code.
 */
static int measure(measured *m, bisect *b, size_t i, bool functions)
{
	const char *commit = b->r.commits[i];
	tf_worktree *wt = NULL;
	tf_run_side cand = { 0 };
	char *why = NULL;
	int ret = 1, st;

	memset(m, 0, sizeof(*m));
	if (!checkout(&wt, b, commit, &why)) {
		b->skip_why[i] = why;
		ret = 0;
		goto done;
	}
	size_t good_from = b->good_runs.runs.n;
	for (long round = 1; round <= ROUNDS_MAX; round++) {
		tf_notef("round %ld: %.10s (good), then %.10s", round, b->r.commits[0], commit);
		if (!tf_run_record(&b->good_runs, &b->o, tf_worktree_cwd(b->good), "good", &st)) {
			ret = TF_ERROR;
			goto done;
		}
		if (st) {
			tf_errorf("the suite fails at GOOD %.10s (exit status %d): no baseline to "
				  "bisect against", b->r.commits[0], st);
			ret = TF_ERROR;
			goto done;
		}
		if (!tf_run_record(&cand, &b->o, tf_worktree_cwd(wt), "candidate", &st)) {
			ret = TF_ERROR;
			goto done;
		}
		if (st) {
			b->skip_why[i] = tf_xasprintf("its suite failed (exit status %d)", st);
			ret = 0;
			goto done;
		}
		if (round < b->rounds)
			continue;
		if (m->functions)
			tf_history_functions_free(m->functions, m->nfunctions);
		m->functions = NULL;
		if (judge(m, b, &cand, good_from, functions) != 0) {
			tf_errorf("%s", tf_error_last());
			ret = TF_ERROR;
			goto done;
		}
		/* decided: its interval on one side of half the step */
		if (isnan(b->size) || m->lo > b->size / 2 || m->hi < b->size / 2)
			break;
	}
done:
	if (wt && tf_worktree_root(wt) && tf_worktree_remove(wt))
		tf_warnf("could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(wt);
	tf_run_side_free(&cand);
	return ret;
}

static void print_functions(const tf_history_fn *fn, size_t n, const char *unit)
{
	for (size_t i = 0; i < n; i++) {
		const tf_func_delta *f = &fn[i].d;
		char c[32];
		tf_compare_format_cost(c, sizeof(c), fabs(f->delta_self), unit);
		tf_buf b = TF_BUF_INIT;
		tf_buf_put_printable(&b, f->name);
		printf("  %s %s %c%s self", i ? "          " : "functions:", b.ptr,
		       f->delta_self < 0 ? '-' : '+', c);
		tf_buf_clear(&b);
		if (f->file && *f->file) {
			const char *base = strrchr(f->file, '/');
			tf_buf_put_printable(&b, base ? base + 1 : f->file);
			printf(" (%s:%lld)", b.ptr, (long long)f->line);
			tf_buf_clear(&b);
		}
		if (fn[i].caller) {
			tf_buf_put_printable(&b, fn[i].caller);
			printf(", from %s", b.ptr);
		}
		tf_buf_free(&b);
		putchar('\n');
	}
}

static void print_found(bisect *b, size_t at, const measured *m, const char *how)
{
	const char *subject = b->r.subjects[at];
	tf_buf s = TF_BUF_INIT;
	tf_buf_put_printable(&s, subject ? subject : "");
	printf("first slower commit: %s %s\n", b->r.commits[at], s.ptr);
	tf_buf_free(&s);
	if (m) {
		printf("  %s %+.1f%% [%+.1f%%, %+.1f%%] against %.10s (%s)\n", b->test, m->delta,
		       m->lo, m->hi, b->r.commits[0], how);
		print_functions(m->functions, m->nfunctions, "nanoseconds");
	} else {
		printf("  %s %+.1f%% (%s)\n", b->test, b->size, how);
	}
	for (size_t i = 0; i < b->r.n; i++)
		if (b->skip_why[i])
			printf("skipped: %.10s %s\n", b->r.commits[i], b->skip_why[i]);
}

/* The stored runs found the step between neighbours: name what moved. */
static void explain_stored(bisect *b, size_t lo, size_t hi)
{
	tf_history_data d;
	tf_history_commit *commits = tf_xcalloc(b->r.n, sizeof(*commits));
	tf_history_test test;
	tf_history_explained e;

	memset(&d, 0, sizeof(d));
	memset(&test, 0, sizeof(test));
	for (size_t i = 0; i < b->r.n; i++)
		memcpy(commits[i].commit, b->r.commits[i], sizeof(commits[i].commit));
	test.name = (char *)b->test;
	d.commits = commits;
	d.ncommits = b->r.n;
	d.tests = &test;
	d.ntests = 1;
	d.suite = b->r.suite;
	d.kind = b->r.kind;
	if (tf_history_explain(&e, b->st, &d, 0, lo >= 4 ? lo - 4 : 0, lo, hi,
			       TF_MIN(hi + 4, b->r.n - 1), 5) == 0)
		print_functions(e.functions, e.nfunctions, "nanoseconds");
	tf_error_clear();
	tf_history_explained_clear(&e);
	free(commits);
}

int cmd_bisect(int argc, char **argv)
{
	bisect b;
	int status = TF_EXIT_ERROR, nargs, dashdash, rc;
	const char *store = NULL;
	measured m;

	memset(&b, 0, sizeof(b));
	memset(&m, 0, sizeof(m));
	b.size = NAN;
	tf_record_cli_init(&b.o.rec);
	b.o.rec.needs_git = true;
	const tf_option opts[] = {
		TF_OPT_INCLUDE(tf_record_cli_options(&b.o.rec)),
		TF_OPT_GROUP("bisect:"),
		TF_OPT_INT(0, "rounds", &b.rounds, "N",
			   "rounds of GOOD and a candidate, alternately (default 3; more, up to 8, while undecided)",
			   1, ROUNDS_MAX),
		TF_OPT_STRING(0, "store", &store, "SPEC",
			      "git, git:REMOTE, dir:PATH or pyroscope:URL (default: as run)"),
		TF_OPTS_END,
	};
	nargs = tf_parse_options(argc, argv, opts, bisect_usage, 0, &dashdash);
	if (nargs < 0) {
		status = nargs == -2 ? TF_EXIT_OK : TF_EXIT_USAGE;
		goto out;
	}
	if (nargs != 4) {
		status = tf_usage_error(bisect_usage, "expected TEST GOOD BAD");
		goto out;
	}
	b.test = argv[1];
	if (!b.rounds)
		b.rounds = 3;
	if ((status = tf_record_cli_prepare(&b.o.rec, bisect_usage, NULL)))
		goto out;
	status = TF_EXIT_ERROR;
	if ((rc = tf_cli_store_open(&b.st, store, b.o.rec.cfg, NULL))) {
		status = tf_fail(rc);
		goto out;
	}
	if ((rc = tf_history_bisect_range(&b.r, b.st, argv[2], argv[3], b.o.rec.suite_name, NULL,
					  b.test))) {
		status = tf_fail(rc);
		goto out;
	}
	b.skipped = tf_xcalloc(b.r.n, sizeof(bool));
	b.skip_why = tf_xcalloc(b.r.n, sizeof(char *));
	tf_notef("%zu commits from %.10s (good) to %.10s (bad), %zu with a stored run of '%s'",
		 b.r.n, b.r.commits[0], b.r.commits[b.r.n - 1], b.r.stored, b.test);

	/* the stored runs first */
	size_t lo = 0, hi = b.r.n - 1;
	double size;
	if (tf_history_bisect_stored(&lo, &hi, &size, &b.r)) {
		b.size = size;
		tf_notef("the stored runs show %+.1f%% between %.10s and %.10s", size,
			 b.r.commits[lo], b.r.commits[hi]);
		if (hi == lo + 1) {
			print_found(&b, hi, NULL, "from the stored runs of its neighbours");
			explain_stored(&b, lo, hi);
			status = TF_EXIT_OK;
			goto out;
		}
	}
	char *why = NULL;
	if (!checkout(&b.good, &b, b.r.commits[0], &why)) {
		tf_errorf("GOOD %.10s %s", b.r.commits[0], why);
		free(why);
		goto out;
	}
	/* the step's size against GOOD, when the stored runs did not give it */
	if (isnan(b.size)) {
		rc = measure(&m, &b, b.r.n - 1, true);
		if (rc < 0)
			goto out;
		if (rc == 0) {
			tf_errorf("BAD %.10s %s", b.r.commits[b.r.n - 1], b.skip_why[b.r.n - 1]);
			goto out;
		}
		if (!(m.lo > 0)) {
			tf_errorf("no difference beyond noise: '%s' at %.10s against %.10s is %+.1f%% "
				  "[%+.1f%%, %+.1f%%] in %zu rounds", b.test, b.r.commits[b.r.n - 1],
				  b.r.commits[0], m.delta, m.lo, m.hi, m.rounds);
			goto out;
		}
		b.size = m.delta;
	}
	/* halve (lo good, hi bad), skipping what does not build or fails */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, pick = SIZE_MAX;
		for (size_t d = 0; d < hi - lo && pick == SIZE_MAX; d++) {
			if (mid + d < hi && !b.skipped[mid + d])
				pick = mid + d;
			else if (mid >= d + 1 && mid - d > lo && !b.skipped[mid - d])
				pick = mid - d;
		}
		if (pick == SIZE_MAX)
			break;
		measured x;
		rc = measure(&x, &b, pick, true);
		if (rc < 0)
			goto out;
		if (rc == 0) {
			b.skipped[pick] = true;
			tf_notef("skipping %.10s: %s", b.r.commits[pick], b.skip_why[pick]);
			continue;
		}
		bool bad = x.delta >= b.size / 2;
		tf_notef("%.10s: %+.1f%% [%+.1f%%, %+.1f%%]: %s", b.r.commits[pick], x.delta, x.lo,
			 x.hi, bad ? "bad" : "good");
		if (bad) {
			hi = pick;
			tf_history_functions_free(m.functions, m.nfunctions);
			m = x;
		} else {
			lo = pick;
			tf_history_functions_free(x.functions, x.nfunctions);
		}
	}
	bool all_skipped = true;
	for (size_t i = lo + 1; i < hi; i++)
		all_skipped &= b.skipped[i];
	if (hi - lo > 1 && all_skipped) {
		printf("the first slower commit is one of %.10s..%.10s: the others did not build or "
		       "their suite failed\n", b.r.commits[lo], b.r.commits[hi]);
		for (size_t i = lo + 1; i <= hi; i++)
			printf("  %.10s%s\n", b.r.commits[i], b.skipped[i] ? " (skipped)" : "");
		status = TF_EXIT_OK;
		goto out;
	}
	if (m.rounds)
		print_found(&b, hi, &m, "measured here, alternating");
	else
		print_found(&b, hi, NULL, "from the stored runs");
	status = TF_EXIT_OK;
out:
	tf_history_functions_free(m.functions, m.nfunctions);
	if (b.good && tf_worktree_root(b.good) && tf_worktree_remove(b.good))
		tf_warnf("could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(b.good);
	tf_run_side_free(&b.good_runs);
	for (size_t i = 0; b.skip_why && i < b.r.n; i++)
		free(b.skip_why[i]);
	free(b.skip_why);
	free(b.skipped);
	tf_bisect_range_clear(&b.r);
	tf_store_free(b.st);
	tf_record_cli_free(&b.o.rec);
	return status;
}
