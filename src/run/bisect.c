/*
 * bisect.c - `testflame bisect TEST GOOD BAD`: the commit that made TEST
 * slower (run.h).
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
 * suite fails is skipped, as `git bisect skip` does, and named; so is one
 * still undecided after the most rounds (its interval holds half the
 * step), and the answer is then the range the skipped commits leave.
 */
#include "run/run_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define ROUNDS_DEFAULT 3
#define BISECT_FUNCTIONS 5

typedef struct {
	tf_run_suite *s;
	const char *test;
	tf_store *st;
	tf_run_bisect_result *out; /* the range, the skipped commits */
	tf_worktree *good;
	tf_run_side good_runs;   /* GOOD's runs, all rounds of every candidate */
	long rounds;
	double size;             /* the step's size, percent; NAN until known */
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
	const char *build = b->s->cfg->build;
	int rc = tf_worktree_create(wt, commit, NULL);
	if (rc) {
		*why = tf_xasprintf("could not be checked out: %s", tf_error_last());
		return false;
	}
	if (build) {
		tf_run_note(b->s->io, "building %.10s: %s", commit, build);
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
 * 0 when the commit is to be skipped (skip_why[i] says why), or an error
 * (said) as a negative code.
 */
static int measure(measured *m, bisect *b, size_t i, bool functions)
{
	const tf_bisect_range *r = &b->out->r;
	const char *commit = r->commits[i];
	tf_worktree *wt = NULL;
	tf_run_side cand = { 0 };
	char *why = NULL;
	int ret = 1, st;

	memset(m, 0, sizeof(*m));
	if (!checkout(&wt, b, commit, &why)) {
		b->out->skip_why[i] = why;
		ret = 0;
		goto done;
	}
	size_t good_from = b->good_runs.runs.n;
	for (long round = 1; round <= TF_RUN_BISECT_ROUNDS_MAX; round++) {
		tf_run_note(b->s->io, "round %ld: %.10s (good), then %.10s", round, r->commits[0],
			    commit);
		if (!tf_run_record_into(&b->good_runs, b->s, tf_worktree_cwd(b->good), "good", &st)) {
			ret = TF_ERROR;
			goto done;
		}
		if (st) {
			tf_run_error(b->s->io, "the suite fails at GOOD %.10s (exit status %d): no "
				     "baseline to bisect against", r->commits[0], st);
			ret = TF_ERROR;
			goto done;
		}
		if (!tf_run_record_into(&cand, b->s, tf_worktree_cwd(wt), "candidate", &st)) {
			ret = TF_ERROR;
			goto done;
		}
		if (st) {
			b->out->skip_why[i] = tf_xasprintf("its suite failed (exit status %d)", st);
			ret = 0;
			goto done;
		}
		if (round < b->rounds)
			continue;
		if (m->functions)
			tf_history_functions_free(m->functions, m->nfunctions);
		m->functions = NULL;
		if (judge(m, b, &cand, good_from, functions) != 0) {
			tf_run_error(b->s->io, "%s", tf_error_last());
			ret = TF_ERROR;
			goto done;
		}
		/* decided: its interval on one side of half the step */
		if (isnan(b->size) || m->lo > b->size / 2 || m->hi < b->size / 2)
			break;
	}
done:
	if (wt && tf_worktree_root(wt) && tf_worktree_remove(wt))
		tf_run_warn(b->s->io, "could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(wt);
	tf_run_side_free(&cand);
	return ret;
}

/* The stored runs found the step between neighbours: what moved. */
static void explain_stored(bisect *b, size_t lo, size_t hi)
{
	const tf_bisect_range *r = &b->out->r;
	tf_history_data d;
	tf_history_commit *commits = tf_xcalloc(r->n, sizeof(*commits));
	tf_history_test test;
	tf_history_explained *e = &b->out->stored;

	memset(&d, 0, sizeof(d));
	memset(&test, 0, sizeof(test));
	for (size_t i = 0; i < r->n; i++)
		memcpy(commits[i].commit, r->commits[i], sizeof(commits[i].commit));
	test.name = (char *)b->test;
	d.commits = commits;
	d.ncommits = r->n;
	d.tests = &test;
	d.ntests = 1;
	d.suite = r->suite;
	d.kind = r->kind;
	if (tf_history_explain(e, b->st, &d, 0, lo >= 4 ? lo - 4 : 0, lo, hi,
			       TF_MIN(hi + 4, r->n - 1), 5) == 0) {
		b->out->functions = e->functions;
		b->out->nfunctions = e->nfunctions;
	}
	tf_error_clear();
	free(commits);
}

/* The found commit's figures: measured here (`m`), else the step's size. */
static void found(bisect *b, size_t hi, measured *m, const char *how)
{
	tf_run_bisect_result *out = b->out;
	out->hi = hi;
	out->how = how;
	out->size = b->size;
	if (m && m->rounds) {
		out->delta = m->delta;
		out->ci_low = m->lo;
		out->ci_high = m->hi;
		out->rounds = m->rounds;
		out->functions = out->measured_functions = m->functions;
		out->nfunctions = m->nfunctions;
		m->functions = NULL;
		m->nfunctions = 0;
	}
}

/* Halve (lo good, hi bad), skipping what does not build or fails; `m`:
 * the measure of `hi` (bad). 0, or an error (said). */
static int halve(bisect *b, size_t *lo, size_t *hi, measured *m)
{
	tf_run_bisect_result *out = b->out;
	const tf_bisect_range *r = &out->r;

	while (*hi - *lo > 1) {
		size_t mid = *lo + (*hi - *lo) / 2, pick = SIZE_MAX;
		for (size_t d = 0; d < *hi - *lo && pick == SIZE_MAX; d++) {
			if (mid + d < *hi && !out->skipped[mid + d])
				pick = mid + d;
			else if (mid >= d + 1 && mid - d > *lo && !out->skipped[mid - d])
				pick = mid - d;
		}
		if (pick == SIZE_MAX)
			break;
		measured x;
		int rc = measure(&x, b, pick, true);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			out->skipped[pick] = true;
			tf_run_note(b->s->io, "skipping %.10s: %s", r->commits[pick], out->skip_why[pick]);
			continue;
		}
		/* still undecided after the most rounds: its interval holds half
		 * the step, so the side its estimate falls on is the noise's
		 * choice. Skipped, as a commit git bisect cannot test, rather
		 * than named on a coin's toss: the answer may be a range */
		if (x.lo <= b->size / 2 && x.hi >= b->size / 2) {
			out->skipped[pick] = true;
			out->skip_why[pick] = tf_xasprintf(
				"undecided: %+.1f%% [%+.1f%%, %+.1f%%] in %zu rounds holds half the "
				"step (%+.1f%%)", x.delta, x.lo, x.hi, x.rounds, b->size / 2);
			tf_run_note(b->s->io, "skipping %.10s: %s", r->commits[pick], out->skip_why[pick]);
			tf_history_functions_free(x.functions, x.nfunctions);
			continue;
		}
		bool bad = x.delta >= b->size / 2;
		tf_run_note(b->s->io, "%.10s: %+.1f%% [%+.1f%%, %+.1f%%]: %s", r->commits[pick],
			    x.delta, x.lo, x.hi, bad ? "bad" : "good");
		if (bad) {
			*hi = pick;
			tf_history_functions_free(m->functions, m->nfunctions);
			*m = x;
		} else {
			*lo = pick;
			tf_history_functions_free(x.functions, x.nfunctions);
		}
	}
	return 0;
}

/* The step's size against GOOD, measured at BAD. 0, or an error (said). */
static int measure_bad(bisect *b, measured *m)
{
	const tf_bisect_range *r = &b->out->r;
	size_t last = r->n - 1;
	int rc = measure(m, b, last, true);

	if (rc < 0)
		return rc;
	if (rc == 0) {
		tf_run_error(b->s->io, "BAD %.10s %s", r->commits[last], b->out->skip_why[last]);
		return TF_ERROR;
	}
	if (!(m->lo > 0)) {
		tf_run_error(b->s->io, "no difference beyond noise: '%s' at %.10s against %.10s is "
			     "%+.1f%% [%+.1f%%, %+.1f%%] in %zu rounds", b->test, r->commits[last],
			     r->commits[0], m->delta, m->lo, m->hi, m->rounds);
		return TF_ERROR;
	}
	b->size = m->delta;
	return 0;
}

int tf_run_bisect(tf_run_bisect_result *out, tf_run_suite *s, const char *test, const char *good,
		  const char *bad, const char *store, long rounds)
{
	const tf_run_io *io = s->io;
	tf_bisect_range *r = &out->r;
	bisect b;
	measured m;
	int status = TF_EXIT_ERROR, rc;
	char *why = NULL;

	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	memset(&m, 0, sizeof(m));
	out->size = b.size = NAN;
	b.s = s;
	b.test = test;
	b.out = out;
	b.rounds = rounds > 0 ? rounds : ROUNDS_DEFAULT;
	if ((rc = tf_run_store_open(&b.st, store, s->cfg, NULL, io)) ||
	    (rc = tf_history_bisect_range(r, b.st, good, bad, s->suite_name, NULL, test))) {
		status = tf_run_fail(io, rc);
		goto out;
	}
	out->skipped = tf_xcalloc(r->n, sizeof(bool));
	out->skip_why = tf_xcalloc(r->n, sizeof(char *));
	tf_run_note(io, "%zu commits from %.10s (good) to %.10s (bad), %zu with a stored run of "
		    "'%s'", r->n, r->commits[0], r->commits[r->n - 1], r->stored, test);

	/* the stored runs first */
	size_t lo = 0, hi = r->n - 1;
	double size;
	if (tf_history_bisect_stored(&lo, &hi, &size, r)) {
		b.size = size;
		tf_run_note(io, "the stored runs show %+.1f%% between %.10s and %.10s", size,
			    r->commits[lo], r->commits[hi]);
		if (hi == lo + 1) {
			found(&b, hi, NULL, "from the stored runs of its neighbours");
			explain_stored(&b, lo, hi);
			status = TF_EXIT_OK;
			goto out;
		}
	}
	if (!checkout(&b.good, &b, r->commits[0], &why)) {
		tf_run_error(io, "GOOD %.10s %s", r->commits[0], why);
		goto out;
	}
	/* the step's size against GOOD, when the stored runs did not give it */
	if (isnan(b.size) && measure_bad(&b, &m) != 0)
		goto out;
	if (halve(&b, &lo, &hi, &m) != 0)
		goto out;
	bool all_skipped = true;
	for (size_t i = lo + 1; i < hi; i++)
		all_skipped &= out->skipped[i];
	out->lo = lo;
	if (hi - lo > 1 && all_skipped) {
		out->narrowed = true;
		out->hi = hi;
	} else {
		found(&b, hi, &m, m.rounds ? "measured here, alternating" : "from the stored runs");
	}
	status = TF_EXIT_OK;
out:
	free(why);
	tf_history_functions_free(m.functions, m.nfunctions);
	if (b.good && tf_worktree_root(b.good) && tf_worktree_remove(b.good))
		tf_run_warn(io, "could not remove the checkout: %s", tf_error_last());
	tf_worktree_free(b.good);
	tf_run_side_free(&b.good_runs);
	tf_store_free(b.st);
	return status;
}

void tf_run_bisect_result_clear(tf_run_bisect_result *out)
{
	for (size_t i = 0; out->skip_why && i < out->r.n; i++)
		free(out->skip_why[i]);
	free(out->skip_why);
	free(out->skipped);
	if (out->measured_functions)
		tf_history_functions_free(out->measured_functions, out->nfunctions);
	tf_history_explained_clear(&out->stored);
	tf_bisect_range_clear(&out->r);
	memset(out, 0, sizeof(*out));
}
