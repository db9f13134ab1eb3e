/*
 * history_synth.c - the synthetic benchmark of `testflame history`'s
 * analysis (bench/history.sh runs it; BENCHMARKS.md has the figures).
 *
 * Suites of 20 tests over 100 commits, each test's cost log-normal around
 * its level with the runner noise the gate's benchmark measured between
 * jobs (2% CV by default), then one scenario per suite:
 *
 *   flat      nothing changes
 *   step S    5 of the 20 tests step by S% at a random commit (20..89)
 *   drift     5 tests grow 0.5% a commit over 20 commits (start 20..79)
 *   outliers  every test, 2% of its runs 30-100% slower
 *   classes   the runs alternate between two machines in blocks of 5-20
 *             commits, the second 15% slower on every test
 *
 * A step is found when a change of its test is reported within 5 commits
 * of it, in its direction (the dating error says how close: at 2% noise a
 * 5% step is 2.5 SDs, and the best estimate of its place misses by 2 or
 * more about one time in ten); a drift when a drift or a change of its
 * direction is reported inside it (+-5). Everything else reported is a false
 * change: per 1,000 series. The dating error is |reported - true| of the
 * steps found. Then the speed: 1,000 commits x 1,000 tests analysed (CPU
 * seconds), and the tracker's cost of appending one commit of 1,000
 * tests after histories of 100, 1,000 and 10,000 commits.
 *
 *   history_synth [--suites N] [--noise PCT] [--seed S] [--speed-only]
 *
 * Deterministic for a seed.
 */
#include "testflame/history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double unif(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (double)((rng * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}
static double gauss(void)
{
	double u = unif(), v = unif();
	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define NT 20
#define NC 100

typedef struct {
	size_t series, found, dating_sum, dating_max, within1, false_changes, false_series;
} tally;

static void run_scenario(const char *name, double size, size_t suites, double noise, tally *tl)
{
	double *cost = malloc(sizeof(double) * NT * NC);
	uint32_t klass[NC];
	tf_history_opts o;
	tf_history_opts_init(&o);

	memset(tl, 0, sizeof(*tl));
	for (size_t s = 0; s < suites; s++) {
		int kind_at[NT];   /* true event commit per test, -1 none */
		int span[NT];
		memset(klass, 0, sizeof(klass));
		if (strcmp(name, "classes") == 0) {
			uint32_t k = 0;
			for (size_t i = 0; i < NC;) {
				size_t len = 5 + (size_t)(unif() * 16);
				for (size_t j = 0; j < len && i < NC; j++)
					klass[i++] = k;
				k ^= 1;
			}
		}
		for (size_t t = 0; t < NT; t++) {
			double level = log(1e6 * (1 + 100 * unif()));
			kind_at[t] = -1;
			span[t] = 0;
			if (strcmp(name, "step") == 0 && t < 5)
				kind_at[t] = 20 + (int)(unif() * 70);
			if (strcmp(name, "drift") == 0 && t < 5) {
				kind_at[t] = 20 + (int)(unif() * 60);
				span[t] = 20;
			}
			for (size_t i = 0; i < NC; i++) {
				double y = level + noise / 100 * gauss();
				if (kind_at[t] >= 0 && !span[t] && (int)i >= kind_at[t])
					y += log1p(size / 100);
				if (span[t] && (int)i >= kind_at[t])
					y += log1p(0.005) * (double)TF_MIN((int)i - kind_at[t] + 1, span[t]);
				if (strcmp(name, "outliers") == 0 && unif() < 0.02)
					y += log1p(0.3 + 0.7 * unif());
				if (klass[i])
					y += log1p(0.15);
				cost[t * NC + i] = exp(y);
			}
		}
		tf_history_input in = { NC, NT, cost, strcmp(name, "classes") == 0 ? klass : NULL };
		tf_history_result *r;
		if (tf_history_analyze(&r, &in, &o) != 0) {
			fprintf(stderr, "history_synth: %s\n", tf_error_last());
			exit(1);
		}
		for (size_t t = 0; t < NT; t++) {
			bool hit = false, bad = false;
			tl->series++;
			for (size_t c = 0; c < r->nchanges; c++) {
				const tf_history_change *ch = &r->changes[c];
				if (ch->test != t)
					continue;
				int at = (int)ch->at;
				if (kind_at[t] >= 0 && !span[t] && !hit && abs(at - kind_at[t]) <= 5 &&
				    (ch->size_pct > 0) == (size > 0)) {
					hit = true;
					size_t e = (size_t)abs(at - kind_at[t]);
					tl->dating_sum += e;
					if (e > tl->dating_max)
						tl->dating_max = e;
					tl->within1 += e <= 1;
				} else if (span[t] && at + 5 >= kind_at[t] && at <= kind_at[t] + span[t] + 5 &&
					   ch->size_pct > 0) {
					hit = true;
				} else {
					bad = true;
					tl->false_changes++;
					if (getenv("HS_DEBUG"))
						fprintf(stderr, "%s %g: test %zu true %d at %d size %.1f%% p %.2g\n",
							name, size, t, kind_at[t], at, ch->size_pct, ch->p_adjusted);
				}
			}
			for (size_t d = 0; d < r->ndrifts; d++) {
				const tf_history_drift *dr = &r->drifts[d];
				if (dr->test != t)
					continue;
				if (span[t] && (int)dr->to + 5 >= kind_at[t] &&
				    (int)dr->from <= kind_at[t] + span[t] + 5 && dr->total_pct > 0)
					hit = true;
				else {
					bad = true;
					tl->false_changes++;
					if (getenv("HS_DEBUG"))
						fprintf(stderr, "%s %g: test %zu true %d drift %zu-%zu total %.1f%% "
							"p %.2g\n", name, size, t, kind_at[t], dr->from, dr->to,
							dr->total_pct, dr->p_adjusted);
				}
			}
			if (kind_at[t] >= 0 && hit)
				tl->found++;
			tl->false_series += bad;
		}
		tf_history_result_free(r);
	}
	free(cost);
}

static void speed(void)
{
	size_t nt = 1000, nc = 1000;
	double *cost = malloc(sizeof(double) * nt * nc);
	for (size_t t = 0; t < nt; t++) {
		double level = log(1e6 * (1 + 100 * unif()));
		size_t step = t % 10 == 0 ? 100 + (size_t)(unif() * 800) : nc;
		for (size_t i = 0; i < nc; i++)
			cost[t * nc + i] = exp(level + 0.02 * gauss() + (i >= step ? log(1.05) : 0));
	}
	tf_history_input in = { nc, nt, cost, NULL };
	tf_history_result *r;
	double t0 = cpu_seconds();
	tf_history_analyze(&r, &in, NULL);
	double t1 = cpu_seconds();
	printf("speed: %zu commits x %zu tests analysed in %.3f s CPU (%zu changes)\n", nc, nt,
	       t1 - t0, r->nchanges);
	tf_history_result_free(r);

	/* the tracker: one more commit of 1,000 tests after N */
	double *row = malloc(sizeof(double) * nt);
	size_t lengths[] = { 100, 1000, 10000 };
	for (size_t k = 0; k < 3; k++) {
		tf_history_tracker *tr;
		tf_history_tracker_new(&tr, nt, NULL);
		for (size_t i = 0; i < lengths[k]; i++) {
			for (size_t t = 0; t < nt; t++)
				row[t] = cost[t * nc + i % nc];
			tf_history_tracker_append(tr, row);
		}
		double a0 = cpu_seconds();
		size_t reps = 20;
		for (size_t i = 0; i < reps; i++) {
			for (size_t t = 0; t < nt; t++)
				row[t] = cost[t * nc + (lengths[k] + i) % nc];
			tf_history_tracker_append(tr, row);
		}
		double a1 = cpu_seconds();
		printf("append: after %zu commits, one commit of %zu tests costs %.2f ms CPU\n",
		       lengths[k], nt, (a1 - a0) / (double)reps * 1000);
		tf_history_tracker_free(tr);
	}
	free(row);
	free(cost);
}

int main(int argc, char **argv)
{
	size_t suites = 50;
	double noise = 2;
	bool speed_only = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--suites") == 0 && i + 1 < argc)
			suites = (size_t)atol(argv[++i]);
		else if (strcmp(argv[i], "--noise") == 0 && i + 1 < argc)
			noise = atof(argv[++i]);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			rng ^= (uint64_t)atoll(argv[++i]) * 0x9E3779B97F4A7C15ULL;
		else if (strcmp(argv[i], "--speed-only") == 0)
			speed_only = true;
		else {
			fprintf(stderr, "usage: history_synth [--suites N] [--noise PCT] [--seed S] "
				"[--speed-only]\n");
			return 2;
		}
	}
	if (!speed_only) {
		static const struct { const char *name; double size; } sc[] = {
			{ "flat", 0 }, { "step", 2 }, { "step", 5 }, { "step", 10 }, { "step", -5 },
			{ "drift", 0 }, { "outliers", 0 }, { "classes", 0 },
		};
		printf("%zu suites of %d tests x %d commits a scenario, noise %.1f%% CV\n", suites, NT,
		       NC, noise);
		printf("%-10s %6s %8s %14s %16s  %s\n", "scenario", "size", "series", "found",
		       "false/1000 ser.", "dating error (mean, share within 1 commit, max)");
		for (size_t k = 0; k < TF_ARRAY_SIZE(sc); k++) {
			tally tl;
			run_scenario(sc[k].name, sc[k].size, suites, noise, &tl);
			size_t events = strcmp(sc[k].name, "step") == 0 || strcmp(sc[k].name, "drift") == 0
						? suites * 5 : 0;
			char found[32] = "-", dating[32] = "-";
			if (events)
				snprintf(found, sizeof(found), "%zu/%zu %.1f%%", tl.found, events,
					 100.0 * (double)tl.found / (double)events);
			if (events && tl.found && strcmp(sc[k].name, "step") == 0)
				snprintf(dating, sizeof(dating), "%.2f, %.0f%% <= 1, max %zu",
					 (double)tl.dating_sum / (double)tl.found,
					 100.0 * (double)tl.within1 / (double)tl.found, tl.dating_max);
			printf("%-10s %5.0f%% %8zu %14s %16.2f  %s\n", sc[k].name, sc[k].size, tl.series,
			       found, 1000.0 * (double)tl.false_changes / (double)tl.series, dating);
		}
	}
	speed();
	return 0;
}
