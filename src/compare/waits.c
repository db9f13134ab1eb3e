/*
 * waits.c - judging a test by the time it waited (its off-CPU time,
 * attribute/offcpu.c), apart from its CPU time, and folding that verdict
 * into the CPU's (gate.measure both, the default).
 *
 * Waits are not CPU time and do not wander like it. A test that never
 * waited waits 0, and one that now sleeps 50 ms waits 50 ms in every run;
 * a ratio to the base's waits says nothing there, so a change is measured
 * in time and weighed against the test's wall time in the base (CPU plus
 * waits): it counts when it reaches the threshold of that (5%) and
 * gate.min_delta. What moves waits between runs of the same code:
 *
 *  - each wait ends with the thread's wake-up, and a woken thread waits for
 *    a CPU as long as the machine is busy: a few hundred microseconds a
 *    wait under load, more on a loaded 2-core runner (WAKE_NS per wait);
 *    and as the load moves between runs, every wait of a run waits more
 *    or less for its CPU alike, so a test of many short waits moves by
 *    its count times that (QUEUE_NS a wait): 3,000 naps of 20 us were off
 *    CPU 98 to 256 us a nap in nine runs at loads of 6 to 8 with 0, 2 or
 *    4 CPU burners beside them (a spread of 50 us), 293 to 767 ms in all,
 *    which without this term was "regressed by waiting" (p < 1e-10);
 *  - waits on the outside (a disk, a network) vary by a share of their
 *    length (SHARE);
 *  - rarely, and then by tens of milliseconds, a wait that was not there
 *    at all: a page the test reads was not in the page cache (jansson's
 *    suite, three runs on a shared machine: 14 to 67 of 213 tests waited
 *    for the disk in a run, 2 ms to 125 ms each, none of them in every
 *    run). No noise model of one run tells such a wait from a new one.
 *
 * The third has a name where the kernel's stack was recorded: a page-in
 * (attribute/offcpu.c), the disk read for a fault or a read() of a page
 * the cache did not hold, and, counted with them, a load: a kernel lock
 * that other processes' mappings of a file hold while a program or a
 * library loads. It says what the cache held, not what the code
 * does: the first run after a build, a checkout or a neighbour's memory
 * pressure reads a program's pages once (a README-only branch of t0920's
 * suite failed on case_036, 0 -> 60.2 ms in _start), the next run not at
 * all. So page-ins count only as far as they repeat: with two runs a
 * side or more, each side keeps the least of its runs' page-ins (what
 * every run read from disk: a test that drops its file from the cache, or
 * reads more than the cache holds), the rest of them are left out; with
 * one run on either side, no run says what repeats and they are left out
 * whole. Either way the page-ins stay in the profile, labelled, and in
 * the test's waits as measured; they decide nothing alone.
 *
 * The first two are a variance per run, Var = FLOOR^2 + waits * WAKE^2 +
 * (waits * QUEUE)^2 + (SHARE * waited)^2, and a z test. With three runs a side or more, the
 * runs say it themselves, but a wait's noise is one-sided and heavy: a
 * woken thread that met a busy CPU adds hundreds of milliseconds to one
 * run (the example suite's 50 ms sleep, 8 runs under a load of 15: 50.1
 * to 53.3 ms seven times, 304 ms once, which made a mean's t test of the
 * eight against eight runs of no wait at all p = 0.11). So the sides are
 * their medians, their spread the runs' median absolute deviation
 * (floored by the model), and the test Welch's t on log(waited + 1 ms),
 * which a run of six times the others moves little. The third is measured from
 * the comparison itself: among the other tests, how many waited at least
 * as much *less* in the head as this one waited more. A decrease is chance
 * (or a fix), and the same chance makes increases of its size: a test
 * whose increase others' decreases match is no more unusual than they
 * are, whatever the model says (and so are the waits the base's runs
 * counted for no test, match_decreases). Its p-value is at least that share of the
 * tests, so among 213 tests two decreases of 70 ms make an increase of
 * 70 ms a p of 0.01 before the correction for the family; in a suite whose
 * tests do not wait, nothing matches and the model decides. A slowdown a
 * single run cannot tell from the suite's own spikes is undecided, and
 * repeated runs (--repeat, the confirmation runs, --against) decide it.
 *
 * The waits of all tests are one family, corrected (Holm by default) apart
 * from the CPU's: a suite that never waits gets the same CPU verdicts as
 * with gate.measure cpu.
 */
#include "compare/compare_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLOOR_NS 300e3   /* a run's waits move by this much whatever they are */
#define WAKE_NS 500e3    /* ... and by this much more a wait (a woken thread's
			  * time waiting for a CPU on a busy runner) */
#define QUEUE_NS 50e3    /* ... and by this much a wait, all of a run's
			  * waits alike (the load's move, see above) */
#define SHARE 0.05       /* ... and by this share of their length */

static double run_var(double waited, double waits)
{
	double w = isnan(waits) ? 1 : waits;
	return FLOOR_NS * FLOOR_NS + w * WAKE_NS * WAKE_NS + w * w * QUEUE_NS * QUEUE_NS +
	       SHARE * SHARE * waited * waited;
}

void tf_cmp_waits_pageins(agg *a)
{
	const struct tf_compare_priv *pv = a->pv;
	bool repeated = pv->nbase >= 2 && pv->nhead >= 2;

	for (size_t t = 0; t < a->tests.n; t++) {
		agg_test *at = &a->tests.v[t];
		double keep[2] = { INFINITY, INFINITY };
		for (size_t r = 0; r < pv->nruns && repeated; r++) {
			int side = pv->runs[r].head;
			if (!isnan(at->run_pagein[r]))
				keep[side] = fmin(keep[side], at->run_pagein[r]);
		}
		for (size_t r = 0; r < pv->nruns; r++) {
			double p = at->run_pagein[r];
			if (isnan(p) || p <= 0)
				continue;
			double out = p - (repeated ? keep[pv->runs[r].head] : 0);
			double *exact = &at->exact[r * 4 + TF_MEASURE_COUNT];
			if (!isnan(*exact))
				*exact = fmax(0, *exact - out);
			at->cost[r] = fmax(0, at->cost[r] - out);
		}
	}
}

static double mean_of(const double *v, size_t n)
{
	double s = 0;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!isnan(v[i])) {
			s += v[i];
			k++;
		}
	return k ? s / (double)k : NAN;
}

typedef struct {
	double delta;     /* head - base, ns a run */
	double wall;      /* the base's wall time a run (CPU and waits) */
	double se;        /* of delta, by the model (or the runs) */
	double df;
	double p;         /* one-sided, of the model */
	double matched;   /* share of the other tests that fell as much */
	size_t nmatched;  /* ... their number */
	bool unplaced;    /* ... the waits in no test among them */
	bool tested;
} wstat;

static int cmp_asc(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* The median of v[0..n) and its median absolute deviation, scaled to a
 * normal's standard deviation. */
static double median_mad(const double *v, size_t n, double *mad)
{
	double *s = tf_xmalloc((n + 1) * sizeof(double)), m;
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_asc);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	for (size_t i = 0; i < n; i++)
		s[i] = fabs(s[i] - m);
	qsort(s, n, sizeof(double), cmp_asc);
	*mad = 1.4826 * (n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2);
	free(s);
	return m;
}

#define LOG_SHIFT_NS 1e6 /* log(waited + this): zero stays finite, noise small */

/* The sample variance of v[0..n), n >= 2. */
static double log_var(const double *v, size_t n)
{
	double m = 0, s = 0;
	for (size_t i = 0; i < n; i++)
		m += v[i] / (double)n;
	for (size_t i = 0; i < n; i++)
		s += (v[i] - m) * (v[i] - m);
	return s / (double)(n - 1);
}

static void test_waits(wstat *w, const agg_test *at, const struct tf_compare_priv *pv)
{
	size_t nb = pv->nbase, nh = pv->nhead;
	const double *off = at->mcost;
	double b = mean_of(off, nb), h = mean_of(off + nb, nh);
	double cpu = mean_of(at->run_cpu, nb), vb = 0, vh = 0;

	w->delta = h - b;
	w->wall = (isnan(cpu) ? 0 : cpu) + b;
	for (size_t r = 0; r < nb; r++)
		vb += run_var(off[r], at->run_waits[r]) / (double)nb;
	for (size_t r = nb; r < nb + nh; r++)
		vh += run_var(off[r], at->run_waits[r]) / (double)nh;
	if (nb >= 3 && nh >= 3) {
		/* medians, their spread no less than the model's, and the test
		 * on the logs (see the head comment) */
		double mb, mh, db, dh, *lg = tf_xmalloc((nb + nh) * sizeof(double));
		mb = median_mad(off, nb, &db);
		mh = median_mad(off + nb, nh, &dh);
		w->delta = mh - mb;
		w->wall = (isnan(cpu) ? 0 : cpu) + mb;
		w->se = sqrt(fmax(db * db, vb) / (double)nb + fmax(dh * dh, vh) / (double)nh);
		for (size_t r = 0; r < nb + nh; r++)
			lg[r] = log(fmax(off[r], 0) + LOG_SHIFT_NS);
		tf_welch t;
		double fb = vb / pow(mb + LOG_SHIFT_NS, 2), fh = vh / pow(mh + LOG_SHIFT_NS, 2);
		tf_stats_welch(&t, lg, nb, lg + nb, nh, fb, fh);
		/* a side whose runs agree closer than the model allows has the
		 * model's variance, known, not estimated from its few runs: it
		 * adds no doubt to the degrees of freedom (a base that never
		 * waited, three runs of 0, left a 50 ms sleep in three runs
		 * at 2 of them, p=0.002, undecided) */
		double ab = fmax(log_var(lg, nb), fb) / (double)nb;
		double ah = fmax(log_var(lg + nb, nh), fh) / (double)nh;
		double den = (log_var(lg, nb) > fb ? ab * ab / (double)(nb - 1) : 0) +
			     (log_var(lg + nb, nh) > fh ? ah * ah / (double)(nh - 1) : 0);
		w->df = den > 0 ? (ab + ah) * (ab + ah) / den : INFINITY;
		w->p = t.se > 0 ? tf_stats_t_sf(t.diff / t.se, w->df) : t.diff > 0 ? 0 : 1;
		free(lg);
		return;
	} else {
		w->se = sqrt(vb / (double)nb + vh / (double)nh);
		w->df = INFINITY;
	}
	w->p = w->se > 0 ? tf_stats_t_sf(w->delta / w->se, w->df) : w->delta > 0 ? 0 : 1;
}

static int cmp_desc(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a > b ? -1 : a < b;
}

/*
 * The waits a side's runs counted for no test, ns a run: those the cap
 * left unsampled while a thread went from one test to another
 * (attribute/offcpu.c, offcpu_unplaced_ns). NAN where no run of the
 * comparison has any.
 */
static double unplaced_fall(const struct tf_compare_priv *pv)
{
	double sum[2] = { 0, 0 };
	size_t n[2] = { 0, 0 };
	bool any = false;
	for (size_t r = 0; r < pv->nruns; r++) {
		const char *v = tf_profile_meta(pv->runs[r].p, "offcpu_unplaced_ns");
		int side = pv->runs[r].head;
		sum[side] += v ? strtod(v, NULL) : 0;
		n[side]++;
		any = any || v;
	}
	if (!any || !n[0] || !n[1])
		return NAN;
	return sum[0] / (double)n[0] - sum[1] / (double)n[1];
}

/* Per tested test, the share of the others whose waits fell by at least
 * its increase (see the head comment); the waits the runs counted for no
 * test are one of them: a wait of a test no sample saw in the base, and
 * one in the head, is as much longer in the head as the base's unplaced
 * waits were (spdlog's dequeue-empty-wait, 250 ms). */
static void match_decreases(wstat *w, size_t n, double unplaced)
{
	double *fall = tf_xcalloc(n + 2, sizeof(double));
	size_t nt = 0, nf = 0;

	for (size_t i = 0; i < n; i++) {
		if (!w[i].tested)
			continue;
		nt++;
		if (w[i].delta < 0)
			fall[nf++] = -w[i].delta;
	}
	if (!isnan(unplaced)) {
		nt++;
		if (unplaced > 0)
			fall[nf++] = unplaced;
	}
	qsort(fall, nf, sizeof(double), cmp_desc);
	for (size_t i = 0; i < n; i++) {
		w[i].matched = 0;
		if (!w[i].tested || w[i].delta <= 0 || nt < 2)
			continue;
		size_t k = 0;
		while (k < nf && fall[k] >= w[i].delta)
			k++;
		w[i].matched = (double)k / (double)(nt - 1);
		w[i].nmatched = k;
		w[i].unplaced = !isnan(unplaced) && unplaced >= w[i].delta;
	}
	free(fall);
}

/* A test's numbers in percent of its base's wall time, and its verdict. */
static void conclude(tf_comparison *c, tf_test_delta *t, const wstat *s, double p, double adj,
		     const tf_compare_opts *o)
{
	double wall = s->wall > 0 ? s->wall : 1;
	double z = isinf(s->df) ? 1.959964 : tf_stats_t_isf(0.025, s->df);
	char reason[320];

	t->method = isinf(s->df) ? TF_METHOD_POISSON : TF_METHOD_WELCH;
	t->df = s->df;
	t->delta_pct = t->raw_delta_pct = 100 * s->delta / wall;
	t->ci_low_pct = 100 * (s->delta - z * s->se) / wall;
	t->ci_high_pct = 100 * (s->delta + z * s->se) / wall;
	t->noise_pct = 100 * s->se / wall;
	t->p_value = p;
	t->p_adjusted = adj;
	/* gate.min_delta: the least change a run that counts */
	if (o->min_delta_ns > 0)
		t->threshold_pct = fmax(o->threshold, 100 * o->min_delta_ns / wall);
	tf_stats_result r = { t->method, s->delta / wall, t->ci_low_pct / 100, t->ci_high_pct / 100,
			      adj, t->df, 0 };
	t->verdict = tf_stats_verdict(&r, adj, t->threshold_pct / 100, o->alpha, INFINITY,
				      INFINITY, reason, sizeof(reason));
	if (t->verdict == TF_VERDICT_REGRESSED || t->verdict == TF_VERDICT_IMPROVED)
		snprintf(reason, sizeof(reason), "waited %s by %.1f ms a run (%+.1f%% of its time; "
			 "95%% CI %+.1f%% to %+.1f%%, p=%.2g)", s->delta > 0 ? "longer" : "less",
			 fabs(s->delta) / 1e6, t->delta_pct, t->ci_low_pct, t->ci_high_pct, adj);
	else if (s->matched > 0 && s->p < o->alpha && t->delta_pct >= t->threshold_pct &&
		 s->unplaced)
		snprintf(reason, sizeof(reason),
			 "waited %.1f ms longer a run, but the base's runs counted as much of their "
			 "waits for no test (a thread's waits the sampler missed while it went from "
			 "one test to another)%s: run with --repeat 3 to decide", s->delta / 1e6,
			 s->nmatched > 1 ? ", and other tests waited as much less" : "");
	else if (s->matched > 0 && s->p < o->alpha && t->delta_pct >= t->threshold_pct)
		snprintf(reason, sizeof(reason),
			 "waited %.1f ms longer a run, but %zu other tests waited as much less: "
			 "this suite's waits vary that much from run to run; run with --repeat 3 to "
			 "decide", s->delta / 1e6, s->nmatched);
	t->reason = tf_arena_strdup(c->priv->arena, reason);
}

void tf_cmp_judge_waits(tf_comparison *c, agg *a, const tf_compare_opts *o)
{
	struct tf_compare_priv *pv = c->priv;
	wstat *w = tf_xcalloc(c->ntests + 1, sizeof(*w));
	double *p = tf_xcalloc(c->ntests + 1, sizeof(double));
	double *adj = tf_xcalloc(c->ntests + 1, sizeof(double));
	size_t *idx = tf_xcalloc(c->ntests + 1, sizeof(size_t));
	size_t ntested = 0;

	for (size_t i = 0; i < c->ntests; i++) {
		tf_test_delta *t = &c->tests[i];
		if (tf_cmp_begin_verdict(t, o->threshold))
			continue;
		test_waits(&w[i], &a->tests.v[pv->test_id[i]], pv);
		w[i].tested = !(t->outside && !o->gate_outside);
	}
	match_decreases(w, c->ntests, unplaced_fall(pv));
	for (size_t i = 0; i < c->ntests; i++) {
		tf_test_delta *t = &c->tests[i];
		if (!t->base.ran || !t->head.ran)
			continue;
		if (!w[i].tested)
			continue; /* shown, not judged: the work outside the tests */
		c->summary.wait_floor_ns = fmax(c->summary.wait_floor_ns, -w[i].delta);
		p[ntested] = fmax(w[i].p, w[i].matched);
		idx[ntested++] = i;
	}
	tf_stats_adjust(adj, p, ntested, o->correction);
	for (size_t k = 0; k < ntested; k++)
		conclude(c, &c->tests[idx[k]], &w[idx[k]], p[k], adj[k], o);
	/* the work outside the tests: its numbers, not judged */
	for (size_t i = 0; i < c->ntests; i++)
		if (c->tests[i].base.ran && c->tests[i].head.ran && !w[i].tested)
			conclude(c, &c->tests[i], &w[i], w[i].p, w[i].p, o);
	free(w);
	free(p);
	free(adj);
	free(idx);
}

/* How urgent a verdict is, for the worse of the CPU's and the waits':
 * regressed, then a change of the threshold's size still undecided. */
static int urgency(const tf_test_delta *t)
{
	if (t->verdict == TF_VERDICT_REGRESSED)
		return 0;
	if (t->verdict == TF_VERDICT_INCONCLUSIVE && t->delta_pct >= tf_test_threshold(t, 0))
		return 1;
	return 2;
}

void tf_cmp_merge_waits(tf_comparison *c, tf_comparison *w, const tf_compare_opts *o)
{
	tf_htab index = { 0 };

	tf_cmp_index_tests(w, &index);
	for (size_t i = 0; i < c->ntests; i++) {
		tf_test_delta *t = &c->tests[i];
		uint32_t k = tf_cmp_find_test(w, &index, t->name);
		if (k == TF_HTAB_NONE)
			continue;
		const tf_test_delta *wt = &w->tests[k];
		t->wait = wt;
		t->grew = 0;
		if (t->verdict == TF_VERDICT_REGRESSED)
			t->grew |= TF_GREW_CPU;
		if (wt->verdict == TF_VERDICT_REGRESSED)
			t->grew |= TF_GREW_WAIT;
		/* the waits decide where they are the more urgent, or as
		 * urgent and grew more (a test that waits 46% more of its time
		 * while a busy runner adds 25% to every test's CPU regressed by
		 * waiting), and a CPU verdict that is no change gives way to a
		 * change in waiting: the verdict and its numbers are theirs then */
		bool waits_lead = urgency(wt) < urgency(t) ||
				  (urgency(wt) == urgency(t) && urgency(t) < 2 &&
				   wt->delta_pct > t->delta_pct) ||
				  (t->verdict == TF_VERDICT_UNCHANGED &&
				   wt->verdict == TF_VERDICT_IMPROVED);
		if (!waits_lead)
			continue;
		t->waits_lead = true;
		t->verdict = wt->verdict;
		t->reason = wt->reason;
		t->delta_pct = wt->delta_pct;
		t->raw_delta_pct = wt->raw_delta_pct;
		t->ci_low_pct = wt->ci_low_pct;
		t->ci_high_pct = wt->ci_high_pct;
		t->p_value = wt->p_value;
		t->p_adjusted = wt->p_adjusted;
		t->threshold_pct = wt->threshold_pct;
		t->method = wt->method;
		t->df = wt->df;
	}
	(void)o;
	tf_htab_free(&index);
}

/*
 * Where a thread waited, from its off-CPU stack (leaf first: the reason's
 * frame, the kernel's, then the user's): the blocking call is the
 * outermost frame of the run of the system's libraries the user stack
 * starts with (nanosleep in libc, not the system call's own wrapper it
 * calls), or the innermost user frame where the wait is the program's own
 * (a static binary, an inlined system call); its caller the frame above.
 */
static bool system_mapping(const char *path)
{
	static const char *const dirs[] = { "/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/",
					    "/usr/libexec/", "[vdso]", "[vsyscall]" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(dirs); i++)
		if (strncmp(path, dirs[i], strlen(dirs[i])) == 0)
			return true;
	return false;
}

typedef struct {
	const char *reason, *call, *caller, *file;
	int64_t line;
} wsite;

/* The function of a location's outermost line (the one not inlined). */
static const tf_line *outer_line(const tf_profile *p, const tf_location *l)
{
	return l->nlines ? &p->lines.v[l->lines_off + l->nlines - 1] : NULL;
}

static bool site_of(const tf_profile *p, const tf_sample *s, wsite *w)
{
	const uint32_t *locs = p->stack.v + s->locs_off;
	size_t n = s->nlocs, k = 0, call = SIZE_MAX;

	memset(w, 0, sizeof(*w));
	w->reason = tf_sample_label_str(p, s, "wait");
	/* past the reason's frame and the kernel's */
	while (k < n) {
		const tf_location *l = &p->locations.v[locs[k]];
		const char *map = l->mapping != TF_NO_MAPPING
					  ? tf_profile_str(p, p->mappings.v[l->mapping].filename) : "";
		if (l->mapping != TF_NO_MAPPING && strcmp(map, "[kernel.kallsyms]") != 0)
			break;
		k++;
	}
	for (size_t i = k; i < n; i++) {
		const tf_location *l = &p->locations.v[locs[i]];
		if (l->mapping == TF_NO_MAPPING ||
		    !system_mapping(tf_profile_str(p, p->mappings.v[l->mapping].filename)))
			break;
		call = i;
	}
	if (call == SIZE_MAX)
		call = k;
	if (call >= n)
		return false;
	const tf_line *ln = outer_line(p, &p->locations.v[locs[call]]);
	if (!ln)
		return false;
	w->call = tf_profile_str(p, p->functions.v[ln->function].name);
	if (call + 1 < n) {
		/* the caller's innermost line: where, in its own code, the call is */
		const tf_location *cl = &p->locations.v[locs[call + 1]];
		const tf_line *first = cl->nlines ? &p->lines.v[cl->lines_off] : NULL;
		if (first) {
			const tf_function *f = &p->functions.v[first->function];
			w->caller = tf_profile_str(p, f->name);
			w->file = tf_profile_str(p, f->filename);
			w->line = first->line;
		}
	}
	if (!w->reason)
		w->reason = "other";
	return true;
}

typedef struct {
	uint32_t slot, key;
	double v[2];
} site_acc;

static bool site_eq(const void *ctx, uint32_t idx, const void *key)
{
	const site_acc *v = ctx, *k = key;
	return v[idx].key == k->key && v[idx].slot == k->slot;
}

static int by_wait_growth(const void *x, const void *y, void *ctx)
{
	const tf_func_delta *a = x, *b = y;
	int sg = *(const int *)ctx;
	double da = sg * a->delta_self, db = sg * b->delta_self;
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

void tf_cmp_wait_sites(tf_comparison *c, size_t top)
{
	struct tf_compare_priv *pv = c->priv;
	uint32_t *slot_of = tf_xmalloc((pv->ninternal + 1) * sizeof(uint32_t));
	size_t *test_of_slot = tf_xmalloc((c->ntests + 1) * sizeof(size_t));
	uint32_t nslots = 0;
	tf_strtab keys;
	TF_VEC(site_acc) acc = { 0 };
	tf_htab index = { 0 };
	tf_buf k = TF_BUF_INIT;

	memset(slot_of, 0xff, (pv->ninternal + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < c->ntests; i++) {
		tf_verdict v = c->tests[i].verdict;
		if (v == TF_VERDICT_REGRESSED || v == TF_VERDICT_IMPROVED) {
			slot_of[pv->test_id[i]] = nslots;
			test_of_slot[nslots++] = i;
		}
	}
	tf_strtab_init(&keys);
	/* page-ins are a site where they may count (tf_cmp_waits_pageins) */
	bool pageins = pv->nbase >= 2 && pv->nhead >= 2;
	for (size_t r = 0; r < pv->nruns && nslots && top; r++) {
		const cmp_run *run = &pv->runs[r];
		const tf_profile *p = run->p;
		for (size_t i = 0; i < p->samples.n; i++) {
			uint32_t slot = slot_of[run->sample_test[i]];
			double v = cmp_sample_value(run, i);
			wsite w;
			if (slot == NO_ID || v == 0 || !site_of(p, &p->samples.v[i], &w) ||
			    (!pageins && (strcmp(w.reason, "page-in") == 0 ||
					  strcmp(w.reason, "load") == 0)))
				continue;
			/* a site is its reason, call, caller and line: a key of
			 * their strings, one accumulator per test */
			tf_buf_clear(&k);
			tf_buf_printf(&k, "%s%c%s%c%s%c%s%c%lld", w.reason, 0x1f, w.call, 0x1f,
				      w.caller ? w.caller : "", 0x1f, w.file ? w.file : "", 0x1f,
				      (long long)w.line);
			uint32_t key = tf_strtab_intern(&keys, k.ptr, k.len);
			uint64_t h = tf_hash_combine(tf_hash_u64(key), slot);
			site_acc z = { slot, key, { 0, 0 } };
			uint32_t at = tf_htab_find(&index, h, site_eq, acc.v, &z);
			if (at == TF_HTAB_NONE) {
				tf_vec_push(&acc, z);
				at = (uint32_t)acc.n - 1;
				tf_htab_insert(&index, h, at);
			}
			acc.v[at].v[run->head] += v;
		}
	}
	TF_VEC(tf_func_delta) *lists = tf_xcalloc(nslots + 1, sizeof(*lists));
	for (size_t i = 0; i < acc.n; i++) {
		const site_acc *a = &acc.v[i];
		const tf_test_delta *t = &c->tests[test_of_slot[a->slot]];
		int sg = t->verdict == TF_VERDICT_IMPROVED ? -1 : 1;
		tf_func_delta d;
		memset(&d, 0, sizeof(d));
		d.base_self = d.base_total = a->v[0] / (double)pv->nbase;
		d.head_self = d.head_total = a->v[1] / (double)pv->nhead;
		d.delta_self = d.delta_total = d.head_self - d.base_self;
		if (sg * d.delta_self <= 0)
			continue;
		/* the key's parts, as strings of the comparison */
		const char *ks = keys.strs.v[a->key];
		const char *part[5];
		for (int j = 0; j < 5; j++) {
			const char *e = strchr(ks, 0x1f);
			size_t len = e ? (size_t)(e - ks) : strlen(ks);
			part[j] = tf_arena_strndup(pv->arena, ks, len);
			ks += len + (e ? 1 : 0);
		}
		d.reason = part[0];
		d.name = part[1];
		d.caller = *part[2] ? part[2] : NULL;
		d.file = part[3];
		d.line = strtoll(part[4], NULL, 10);
		/* the call is the caller's, where it is: as a CPU delta's is */
		if (d.caller) {
			d.caller_file = d.file;
			d.caller_line = d.line;
		}
		tf_vec_push(&lists[a->slot], d);
	}
	for (uint32_t s = 0; s < nslots; s++) {
		tf_test_delta *t = &c->tests[test_of_slot[s]];
		int sg = t->verdict == TF_VERDICT_IMPROVED ? -1 : 1;
		tf_cmp_keep_functions(pv, t, lists[s].v, lists[s].n, top, by_wait_growth, sg);
		tf_vec_free(&lists[s]);
	}
	free(lists);
	tf_buf_free(&k);
	tf_vec_free(&acc);
	tf_htab_free(&index);
	tf_strtab_free(&keys);
	free(slot_of);
	free(test_of_slot);
}
