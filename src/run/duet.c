/*
 * duet.c - a confirmation by the suspect tests alone (confirm.c): the
 * merge-base checked out beside this tree and its tests run with this
 * tree's, in turn or at the same time, round after round, each test until
 * its verdict is clear or gate.confirm_budget is spent.
 *
 * Three things decide how sure a duet gets within its budget: which tests
 * it runs (those that looked slower, and those that ran changed code and
 * that one run cannot clear), how its rounds are made (at once where the
 * tests leave a CPU for each side, a pair's runs then meeting the same
 * moment), and how its looks spend the gate's alpha (over the rounds the
 * budget allows, fixed before the first look).
 */
#include "run/run_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef TF_VEC(char *) name_vec;

/* The first run's wall time (the suite's own time), 0 when unknown. */
static uint64_t suite_time(const tf_run_side *head)
{
	const tf_record_info *first = &head->runs.v[0].info;
	return first->end_ns > first->start_ns ? first->end_ns - first->start_ns : 0;
}

/* What a duet may spend (gate.confirm_budget) on a suite that took
 * `suite_ns` once; 0: no limit known. */
static uint64_t duet_budget(const tf_run_opts *o, uint64_t suite_ns)
{
	return o->set.confirm_budget_pct > 0
		       ? (uint64_t)((double)suite_ns * o->set.confirm_budget_pct / 100)
		       : (uint64_t)o->set.confirm_budget_ns;
}

/* A test's time when run alone, as its first run took it. */
static double alone_time(const tf_test_delta *t)
{
	return isfinite(t->head.wall_ns) && t->head.wall_ns > 0 ? t->head.wall_ns : t->head.cost;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

typedef struct {
	const tf_test_delta *t;
	double z; /* the first run's evidence of a slowdown */
} unsettled;

static int by_evidence(const void *a, const void *b)
{
	double x = ((const unsettled *)a)->z, y = ((const unsettled *)b)->z;
	int k = (x < y) - (x > y);
	return k ? k : strcmp(((const unsettled *)a)->t->name, ((const unsettled *)b)->t->name);
}

/*
 * The tests that ran changed code and that one run against the stored
 * baseline can neither clear nor convict: not faster by half the
 * threshold, their interval reaching it. tf_comparison_suspect's rule
 * (slower by half the threshold) lets about a third of the slowdowns of
 * the threshold's own size through: in bench/detection.sh (CODE=1, a
 * neighbour that comes and goes) the first run put 6 of 20 true 5%
 * slowdowns at +2.5% or less, and none was confirmed. A test whose code
 * changed is where a slowdown can come from, so it gets the duet, and
 * only where the duet can run it alone within gate.confirm_budget: taken
 * from the strongest evidence of a slowdown down while the duet's fewest
 * rounds of them fit the budget, beside the suspects o->suspects already
 * names (a test that looked slower raised them). A PR that changes no
 * code a test ran pays nothing for this. A line saying why (to free),
 * o->suspects naming them too; NULL when there are none.
 */
char *tf_run_changed_unsettled(tf_run_opts *o, const tf_run_side *base,
				const tf_run_side *head)
{
	tf_comparison *c = NULL;
	tf_selection *sel = NULL;
	TF_VEC(unsettled) cand = { 0 };
	name_vec names = { 0 };
	char *why = NULL;

	if (tf_run_compare(&c, o, base, head, false)) {
		tf_error_clear();
		return NULL;
	}
	uint64_t budget = duet_budget(o, suite_time(head));
	double planned = 0;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		double thr = tf_test_threshold(t, o->set.threshold);
		bool suspect = false;
		for (size_t k = 0; k < o->suspects.n && !suspect; k++)
			suspect = strcmp(o->suspects.v[k], t->name) == 0;
		if (suspect) {
			planned += 2.0 * TF_DUET_ROUNDS_MIN * alone_time(t);
			continue;
		}
		if (!t->ran_changed || (t->outside && !c->summary.gate_outside) ||
		    (t->verdict != TF_VERDICT_UNCHANGED && t->verdict != TF_VERDICT_INCONCLUSIVE) ||
		    !(t->ci_high_pct >= thr) || !(t->delta_pct > -thr / 2) ||
		    (t->verdict == TF_VERDICT_UNCHANGED && t->p_adjusted < c->summary.alpha))
			continue;
		double half = t->ci_high_pct - t->delta_pct;
		unsettled u = { t, half > 0 ? t->delta_pct / half : 0 };
		tf_vec_push(&cand, u);
	}
	if (cand.n)
		qsort(cand.v, cand.n, sizeof(*cand.v), by_evidence);
	size_t first = 0;
	for (size_t i = 0; i < cand.n; i++) {
		const tf_test_delta *t = cand.v[i].t;
		double cost = 2.0 * TF_DUET_ROUNDS_MIN * alone_time(t);
		if (budget && planned + cost > (double)budget)
			continue;
		if (!names.n)
			first = i;
		planned += cost;
		tf_vec_push(&names, tf_xstrdup(t->name));
	}
	if (names.n && tf_attribute_select(&sel, (const char *const *)o->rec.cmd, environ,
					   head->runs.v[0].profile, (const char *const *)names.v,
					   names.n) == 0) {
		const tf_test_delta *t = cand.v[first].t;
		why = tf_xasprintf("%s ran changed code and one run cannot rule out a %g%% "
				   "slowdown (%+.1f%%, 95%% CI %+.1f%% to %+.1f%%)%s",
				   t->name, tf_test_threshold(t, o->set.threshold), t->delta_pct,
				   t->ci_low_pct, t->ci_high_pct,
				   names.n > 1 ? ", nor of the other tests that did" : "");
		for (size_t i = 0; i < names.n; i++) {
			tf_run_verbose(o->rec.io, "ran changed code, undecided: %s", names.v[i]);
			tf_vec_push(&o->suspects, names.v[i]);
		}
		names.n = 0;
		qsort(o->suspects.v, o->suspects.n, sizeof(*o->suspects.v), by_name);
	}
	tf_error_clear();
	tf_selection_free(sel);
	for (size_t i = 0; i < names.n; i++)
		free(names.v[i]);
	tf_vec_free(&names);
	tf_vec_free(&cand);
	tf_comparison_free(c);
	return why;
}

/* Keep test `t`'s verdict of the duet as decided in `runs` rounds. */
static void decide(tf_run_opts *o, const tf_test_delta *t, size_t runs, const char *why_stopped)
{
	tf_test_decided d;
	memset(&d, 0, sizeof(d));
	d.test = tf_xstrdup(t->name);
	d.verdict = t->verdict;
	d.delta_pct = t->delta_pct;
	d.ci_low_pct = t->ci_low_pct;
	d.ci_high_pct = t->ci_high_pct;
	d.p_value = t->p_value;
	d.p_adjusted = t->p_adjusted;
	d.runs = runs;
	d.together = o->together;
	if (why_stopped)
		d.reason = tf_xasprintf("%s; %s", t->reason ? t->reason : "", why_stopped);
	else
		d.reason = tf_xstrdup(t->reason ? t->reason : "");
	tf_vec_push(&o->decided, d);
}

/* The duet's rounds so far compared as the gate judges, with `share` of
 * its alpha (look_share()). */
static tf_comparison *duet_compare(tf_run_opts *o, const tf_run_side *b, const tf_run_side *h,
				   double share)
{
	tf_comparison *c = NULL;
	double alpha = o->set.alpha;
	bool was = o->interleaved;

	o->set.alpha = alpha * share;
	o->interleaved = true;
	/* the suspects alone: what moved them all was the change, not the
	 * runner (jansson's json_pack slowed 65-fold: taking the median of
	 * its seven suspects' moves out of each left test_pack inconclusive) */
	o->picked = true;
	if (tf_run_compare(&c, o, b, h, false)) {
		tf_run_warn(o->rec.io, "the duet's rounds could not be compared: %s", tf_error_last());
		tf_error_clear();
		c = NULL;
	}
	o->set.alpha = alpha;
	o->interleaved = was;
	o->picked = false;
	return c;
}

/*
 * The share of the gate's alpha the look after round `round` of `most`
 * (`looks` in all) may spend: half at the last, the other half spread
 * over the ones before, so that the shares sum to one (a weighted
 * Bonferroni bound: the duet's family-wise error stays at alpha however
 * the looks depend on each other). A slowdown near the threshold is
 * decided at the last look the budget allows, where an even split left a
 * true 5% undecided at p 0.00018 and 0.00026 against 1e-4 (ten looks,
 * bench/detection.sh OTHER_UNITS=8); a large one still stops early.
 */
static double look_share(size_t round, long most, long looks)
{
	if (looks <= 1)
		return 1;
	return (long)round >= most ? 0.5 : 0.5 / (double)(looks - 1);
}

/* How many CPUs test `name` kept busy in the run `p`: its CPU time over
 * its wall time; 0 when the run does not say (an event other than time). */
static double busy_cpus(const tf_profile *p, const char *name)
{
	char *key = tf_xasprintf("test.%s", name);
	const char *v = tf_profile_meta(p, key);
	double wall = 0, cpu = 0, sampled = 0;

	free(key);
	for (const char *s = v; s && *s;) {
		if (!strncmp(s, "wall_ns=", 8))
			wall = strtod(s + 8, NULL);
		else if (!strncmp(s, "count=", 6))
			cpu = strtod(s + 6, NULL);
		else if (!strncmp(s, "value=", 6))
			sampled = strtod(s + 6, NULL);
		if ((s = strchr(s, ' ')))
			s++;
	}
	if (!(cpu > 0))
		cpu = sampled;
	return wall > 0 && cpu > 0 ? cpu / wall : 0;
}

/*
 * Whether the duet runs the merge-base's tests and this tree's at the same
 * time rather than in turn: where each test of `open` kept at most about
 * one CPU busy in the first run (`first`), measured by CPU time, and the
 * machine has a CPU for each side. Both sides then meet the same moment,
 * and a pair's ratio cancels it: bench/measures.sh TOGETHER=1 measured a
 * paired t of 32-36 where one after the other gave 16, in 60% of the
 * time. A test whose threads fill the machine would take CPUs from its
 * pair: those run in turn, and so does all under ptrace's sampler.
 */
static bool at_once(const tf_profile *first, const name_vec *open)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	const char *ev = tf_profile_meta(first, "event");
	const char *sampler = tf_profile_meta(first, "sampler");

	/* ptrace's sampler reaps any child of this process: perf's only */
	if (cpus < 2 || !ev || (strcmp(ev, "cpu-clock") && strcmp(ev, "task-clock")) ||
	    !sampler || strcmp(sampler, "perf"))
		return false;
	for (size_t i = 0; i < open->n; i++) {
		double busy = busy_cpus(first, open->v[i]);
		if (!(busy > 0) || busy > 1.25)
			return false;
	}
	return true;
}

/* Whether the duet runs test `t` again: undecided as the whole suite's
 * rounds would be (tf_run_test_open), or neither convicted nor cleared,
 * its interval still reaching the threshold. A true 5% slowdown measured
 * +3.5% (-1.2% to +8.4%) in three rounds was "unchanged" by the verdict's
 * rule and stopped there, with most of its budget left. */
static bool duet_open(const tf_run_opts *o, const tf_comparison *c, const tf_test_delta *t)
{
	if (tf_run_test_open(o, c, t))
		return true;
	if (t->outside && !c->summary.gate_outside)
		return false;
	return (t->verdict == TF_VERDICT_UNCHANGED || t->verdict == TF_VERDICT_INCONCLUSIVE) &&
	       !(t->p_adjusted < c->summary.alpha) &&
	       t->ci_high_pct >= tf_test_threshold(t, o->set.threshold);
}

/* What a recording made in a child process sends back (record_apart). */
typedef struct {
	bool recorded;
	int status;
	tf_record_info info;
	tf_attribute_stats stats;
} apart_result;

/*
 * Record the merge-base's tests in `wt` in a child process of its own,
 * while this process records this tree's: the child writes its run file
 * to `path` and its result to `fd`. Both recordings follow a cgroup of
 * their own (named by their pid), so each sees only its own command.
 */
static pid_t record_apart(tf_run_opts *o, const tf_worktree *wt, const char *path, int fd[2])
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	close(fd[0]);
	apart_result r;
	tf_run_result res;
	memset(&r, 0, sizeof(r));
	o->rec.ro.cwd = tf_worktree_cwd(wt);
	r.recorded = tf_run_record_one(&res, &o->rec, &r.status);
	if (r.recorded) {
		r.info = res.info;
		r.stats = res.stats;
		if (tf_pprof_write(res.profile, path)) {
			tf_run_error(o->rec.io, "the merge-base's run file: %s", tf_error_last());
			r.recorded = false;
			r.status = TF_EXIT_ERROR;
		}
	}
	ssize_t n = write(fd[1], &r, sizeof(r));
	_exit(n == (ssize_t)sizeof(r) ? 0 : 1);
}

/* The child's run (record_apart) into `b`, as tf_run_record would have
 * put it; false when it could not be recorded (*st says why). */
static bool take_apart(tf_run_side *b, pid_t pid, int fd, const char *path, int *st)
{
	apart_result r;
	ssize_t n;
	int ws;

	do
		n = read(fd, &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	*st = TF_EXIT_ERROR;
	if (n != (ssize_t)sizeof(r) || !r.recorded) {
		if (n == (ssize_t)sizeof(r) && r.status)
			*st = r.status;
		return false;
	}
	tf_run_result res;
	memset(&res, 0, sizeof(res));
	if (tf_profile_load(&res.profile, path))
		return false;
	res.info = r.info;
	res.stats = r.stats;
	*st = r.status;
	tf_vec_push(&b->runs, res);
	tf_vec_push(&b->names, tf_xasprintf("merge-base alone run %zu", b->runs.n));
	return true;
}

/* A round of both sides at once: the merge-base's in a child process
 * (record_apart), this tree's here. */
static bool duet_round_together(tf_run_opts *o, const tf_worktree *wt, tf_run_side *b,
				tf_run_side *h, int *exit_status, int *status, char **why_not,
				const tf_selection *sel)
{
	const char *dir = getenv("TMPDIR");
	char *path = tf_xasprintf("%s/testflame-duet.XXXXXX", dir && *dir ? dir : "/tmp");
	int fd[2], tmp, st_b, st_h;
	bool ok = false, mine;

	if ((tmp = mkstemp(path)) < 0 || pipe(fd) < 0) {
		tf_run_error(o->rec.io, "a duet round at once: %s: %s", path, strerror(errno));
		*status = TF_EXIT_ERROR;
		if (tmp >= 0) {
			close(tmp);
			unlink(path);
		}
		free(path);
		return false;
	}
	close(tmp);
	pid_t pid = record_apart(o, wt, path, fd);
	close(fd[1]);
	if (pid < 0) {
		tf_run_error(o->rec.io, "a duet round at once: fork: %s", strerror(errno));
		*status = TF_EXIT_ERROR;
		close(fd[0]);
		unlink(path);
		free(path);
		return false;
	}
	mine = tf_run_record(h, o, NULL, "head alone", &st_h);
	bool theirs = take_apart(b, pid, fd[0], path, &st_b);
	close(fd[0]);
	unlink(path);
	free(path);
	if (!theirs) {
		*status = st_b ? st_b : TF_EXIT_ERROR;
		return false;
	}
	if (!mine) {
		*status = st_h ? st_h : TF_EXIT_ERROR;
		return false;
	}
	if (b->runs.v[b->runs.n - 1].info.interrupted || h->runs.v[h->runs.n - 1].info.interrupted) {
		*status = 130;
		return false;
	}
	if (st_b) {
		*why_not = tf_xasprintf("the merge-base's tests exited %d when run alone (%s)", st_b,
					sel->how);
		return false;
	}
	if (st_h && !*exit_status)
		*exit_status = st_h;
	ok = true;
	return ok;
}

/* One round: the merge-base's tests in `wt`, then this tree's, each
 * narrowed to `sel` (o->together: both at once). False when a run failed
 * to record (*status) or the merge-base's tests failed (*why_not). */
static bool duet_round(tf_run_opts *o, const tf_worktree *wt, const tf_selection *sel,
		       tf_run_side *b, tf_run_side *h, int *exit_status, int *status,
		       char **why_not)
{
	int st;
	bool ok = false;

	o->rec.only = sel;
	if (o->together) {
		if (!duet_round_together(o, wt, b, h, exit_status, status, why_not, sel))
			goto done;
		ok = true;
		goto done;
	}
	if (!tf_run_record(b, o, tf_worktree_cwd(wt), "merge-base alone", &st)) {
		*status = st ? st : TF_EXIT_ERROR;
		goto done;
	}
	if (b->runs.v[b->runs.n - 1].info.interrupted) {
		*status = 130;
		goto done;
	}
	if (st) {
		*why_not = tf_xasprintf("the merge-base's tests exited %d when run alone (%s)", st,
					sel->how);
		goto done;
	}
	if (!tf_run_record(h, o, NULL, "head alone", &st)) {
		*status = st ? st : TF_EXIT_ERROR;
		goto done;
	}
	if (st && !*exit_status)
		*exit_status = st;
	if (h->runs.v[h->runs.n - 1].info.interrupted) {
		*status = 130;
		goto done;
	}
	ok = true;
done:
	o->rec.only = NULL;
	return ok;
}

/* The first test of `open` a run of the duet does not list, or NULL. */
static const char *missing(const name_vec *open, const tf_run_side *s)
{
	const tf_profile *p = s->runs.v[s->runs.n - 1].profile;
	for (size_t i = 0; i < open->n; i++) {
		char *key = tf_xasprintf("test.%s", open->v[i]);
		bool listed = tf_profile_meta(p, key) != NULL;
		free(key);
		if (!listed)
			return open->v[i];
	}
	return NULL;
}

bool tf_run_duet(tf_run_opts *o, const tf_worktree *wt, const tf_run_side *head,
		 uint64_t build_ns, int *exit_status, int *status, char **why_not, char **note)
{
	uint64_t suite_ns = suite_time(head);
	const tf_run_suite *rs = &o->rec;
	tf_run_side b = { 0 }, h = { 0 };
	name_vec open = { 0 };
	tf_selection *sel = NULL;
	char *first_how = NULL;
	const char *stopped = NULL;
	uint64_t spent = 0, last = 0, budget;
	size_t rounds = 0, ndecided = 0;
	/* the rounds the budget allows, and so the looks alpha is spent over:
	 * fixed by the time the fewest rounds took, before any look, so that
	 * a look the budget would never reach takes no share of it */
	long most = TF_DUET_ROUNDS_MAX, looks = TF_DUET_ROUNDS_MAX - TF_DUET_ROUNDS_MIN + 1;
	double share = 1; /* of alpha, the last look's (look_share) */
	bool ok = false;

	budget = duet_budget(o, suite_ns);
	for (size_t i = 0; i < o->suspects.n; i++)
		tf_vec_push(&open, tf_xstrdup(o->suspects.v[i]));
	tf_run_decided_free(o);
	o->together = at_once(head->runs.v[0].profile, &open);
	while (open.n) {
		if (rounds >= (size_t)most) {
			stopped = most < TF_DUET_ROUNDS_MAX ? "undecided after the rounds "
							      "gate.confirm_budget allows"
							    : "undecided after the most rounds a duet runs";
			break;
		}
		/* a round that would overrun the budget is not started */
		if (rounds >= TF_DUET_ROUNDS_MIN && budget && spent + last > budget) {
			stopped = "undecided when gate.confirm_budget was spent";
			break;
		}
		if (tf_attribute_select(&sel, (const char *const *)rs->cmd, environ,
					head->runs.v[0].profile, (const char *const *)open.v,
					open.n)) {
			*why_not = tf_xstrdup(tf_error_last());
			tf_error_clear();
			goto done;
		}
		if (!first_how)
			first_how = tf_xstrdup(sel->how);
		tf_run_note(o->rec.io, "duet round %zu: %zu test%s alone (%s), the merge-base %.12s "
			    "%s this tree", rounds + 1, open.n, open.n == 1 ? "" : "s", sel->how,
			    tf_worktree_commit(wt), o->together ? "and at the same time" : "then");
		uint64_t t0 = tf_now_ns();
		if (!duet_round(o, wt, sel, &b, &h, exit_status, status, why_not))
			goto done;
		last = tf_now_ns() - t0;
		spent += last;
		rounds++;
		const char *gone = rounds == 1 ? missing(&open, &h) : NULL;
		if (!gone && rounds == 1)
			gone = missing(&open, &b);
		if (gone) {
			*why_not = tf_xasprintf("'%s' did not run when asked alone (%s)", gone,
						sel->how);
			goto done;
		}
		tf_selection_free(sel);
		sel = NULL;
		if (rounds < TF_DUET_ROUNDS_MIN)
			continue;
		if (rounds == TF_DUET_ROUNDS_MIN && budget) {
			double each = (double)spent / (double)rounds;
			double more = budget > spent ? (double)(budget - spent) / each : 0;
			most = TF_DUET_ROUNDS_MIN + (long)TF_MIN(more, (double)(TF_DUET_ROUNDS_MAX -
									 TF_DUET_ROUNDS_MIN));
			looks = most - TF_DUET_ROUNDS_MIN + 1;
		}
		share = look_share(rounds, most, looks);
		tf_comparison *c = duet_compare(o, &b, &h, share);
		for (size_t i = 0; c && i < open.n;) {
			const tf_test_delta *t = tf_comparison_find(c, open.v[i]);
			if (!t || duet_open(o, c, t)) {
				i++;
				continue;
			}
			decide(o, t, rounds, NULL);
			ndecided++;
			free(open.v[i]);
			open.v[i] = open.v[--open.n];
		}
		tf_comparison_free(c);
	}
	if (open.n) {
		/* what is left keeps its last verdict, undecided as it is */
		tf_comparison *c = rounds >= TF_DUET_ROUNDS_MIN ? duet_compare(o, &b, &h, share)
								 : NULL;
		for (size_t i = 0; c && i < open.n; i++) {
			const tf_test_delta *t = tf_comparison_find(c, open.v[i]);
			if (t)
				decide(o, t, rounds, stopped);
		}
		tf_comparison_free(c);
	}
	char limit[64] = "none: the suite's own time is not known here";
	if (budget)
		snprintf(limit, sizeof(limit), "%.1f s", (double)budget / 1e9);
	*note = tf_xasprintf("%zu test%s run alone (%s), %s the merge-base %.12s: "
			     "%zu decided in %zu round%s, %.1f s (gate.confirm_budget %s), after "
			     "%.1f s building the merge-base",
			     o->suspects.n, o->suspects.n == 1 ? "" : "s", first_how,
			     o->together ? "each run at the same time as" : "alternately with",
			     tf_worktree_commit(wt), ndecided, rounds, rounds == 1 ? "" : "s",
			     (double)spent / 1e9, limit, (double)build_ns / 1e9);
	ok = true;
done:
	o->together = false;
	if (!ok)
		tf_run_decided_free(o);
	tf_selection_free(sel);
	for (size_t i = 0; i < open.n; i++)
		free(open.v[i]);
	tf_vec_free(&open);
	free(first_how);
	tf_run_side_free(&b);
	tf_run_side_free(&h);
	return ok;
}
