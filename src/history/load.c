/*
 * load.c - a suite's stored runs along the first-parent history, as one
 * cost series per test, and what moved between two stretches of it.
 *
 * The walk goes one first-parent commit at a time from the start, asking
 * the store for that commit's baseline of the suite and runner kind (and
 * Pyroscope, when it is the store, for a commit git holds none of). Each
 * baseline's runs are measured as the gate measures them
 * (tf_compare_run_costs), averaged when the baseline holds several runs
 * (`run --repeat N`). What is left out is said: a run whose suite failed
 * or was interrupted (its costs are of a suite that did not finish), and a
 * test's point where the test itself failed. A test's points keep the
 * measure the newest of them has; older points of another measure (an
 * older testflame, a runner's report missing) are left out of it.
 *
 * The machine class of a commit is its run's environment fingerprint, the
 * env.* facts the gate compares (tf_environment_keys).
 */
#include "history_int.h"
#include "testflame/context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WALK_DEFAULT 100000

typedef struct {
	TF_VEC(tf_history_commit) commits;  /* newest first while walking */
	TF_VEC(tf_history_skipped) skipped;
	tf_strtab names;                     /* test names; id 0 unused */
	TF_VEC(double) cost;                 /* [commit * cap_tests + test] while walking */
	TF_VEC(uint8_t) measure;             /* the same, the measure + 1 (0: none) */
	TF_VEC(size_t) failed;               /* per test id */
	size_t cap_tests;
	tf_strtab classes;
} walker;

static char *env_class(const tf_profile *p)
{
	tf_buf b = TF_BUF_INIT;
	for (const char *const *k = tf_environment_keys; *k; k++) {
		char key[40];
		snprintf(key, sizeof(key), "env.%s", *k);
		const char *v = tf_profile_meta(p, key);
		if (!v)
			continue;
		tf_buf_printf(&b, "%s%s %s", b.len ? ", " : "", *k,
			      strcmp(*k, "cpu_flags") == 0 ? "(hash)" : "");
		if (strcmp(*k, "cpu_flags") == 0)
			b.len -= 7, tf_buf_printf(&b, "#%.8s", v);
		else
			tf_buf_printf(&b, "'%s'", v);
	}
	if (!b.len)
		tf_buf_puts(&b, "unknown machine");
	return tf_buf_detach(&b);
}

/* Why a run is left out, or NULL. */
char *tf_history_run_problem(const tf_profile *p)
{
	const char *st = tf_profile_meta(p, "exit_status");
	if (tf_profile_meta(p, "interrupted"))
		return tf_xstrdup("the run was interrupted");
	if (st && strcmp(st, "0") != 0)
		return tf_xasprintf("the suite failed (exit status %s)", st);
	return NULL;
}

/* Grow the matrix to `ntests` columns (ids up to ntests - 1). */
static void widen(walker *w, size_t ntests)
{
	if (ntests <= w->cap_tests)
		return;
	size_t cap = TF_MAX(ntests, 2 * w->cap_tests), rows = w->commits.n + 1;
	double *c = tf_xmalloc(rows * cap * sizeof(double));
	uint8_t *m = tf_xcalloc(rows * cap, 1);
	for (size_t r = 0; r < rows; r++) {
		for (size_t t = 0; t < cap; t++)
			c[r * cap + t] = NAN;
		for (size_t t = 0; t < w->cap_tests && r * w->cap_tests + t < w->cost.n; t++) {
			c[r * cap + t] = w->cost.v[r * w->cap_tests + t];
			m[r * cap + t] = w->measure.v[r * w->cap_tests + t];
		}
	}
	free(w->cost.v);
	free(w->measure.v);
	w->cost.v = c;
	w->cost.n = w->cost.cap = rows * cap;
	w->measure.v = m;
	w->measure.n = w->measure.cap = rows * cap;
	w->cap_tests = cap;
}

/* A new row for the commit being added (row w->commits.n). */
static void add_row(walker *w)
{
	size_t need = (w->commits.n + 1) * w->cap_tests;
	while (w->cost.n < need) {
		tf_vec_push(&w->cost, NAN);
		tf_vec_push(&w->measure, 0);
	}
}

/* Add one stored commit's runs; returns 0, or a problem when none of its
 * runs could be used (then `*why` says why). */
static int add_commit(walker *w, const tf_store_found *f, const char *value, char **unit,
		      char **why)
{
	size_t used = 0;
	char *first_problem = NULL, *klass = NULL;
	*why = NULL;
	for (size_t r = 0; r < f->nruns; r++) {
		char *pr = tf_history_run_problem(f->runs[r]);
		if (pr) {
			if (!first_problem)
				first_problem = pr;
			else
				free(pr);
			continue;
		}
		tf_run_cost *rc;
		size_t n;
		char *u = NULL;
		if (tf_compare_run_costs(&rc, &n, &u, f->runs[r], value) != 0) {
			if (!first_problem)
				first_problem = tf_xstrdup(tf_error_last());
			tf_error_clear();
			continue;
		}
		if (!*unit)
			*unit = u;
		else
			free(u);
		if (!klass)
			klass = env_class(f->runs[r]);
		if (!used)
			add_row(w);
		for (size_t i = 0; i < n; i++) {
			uint32_t id = tf_strtab_intern(&w->names, rc[i].test, strlen(rc[i].test));
			widen(w, (size_t)id + 1);
			add_row(w);
			while (w->failed.n <= id)
				tf_vec_push(&w->failed, 0);
			size_t at = w->commits.n * w->cap_tests + id;
			if (rc[i].failed) {
				w->failed.v[id]++;
				continue;
			}
			/* several runs: their mean, as the gate's side */
			double prev = w->cost.v[at];
			w->cost.v[at] = isnan(prev) ? rc[i].cost / (double)f->nruns
						    : prev + rc[i].cost / (double)f->nruns;
			w->measure.v[at] = (uint8_t)(rc[i].measure + 1);
		}
		tf_run_costs_free(rc, n);
		used++;
	}
	if (!used) {
		*why = first_problem ? first_problem : tf_xstrdup("the baseline holds no run");
		free(klass);
		return TF_EINVAL;
	}
	/* some runs of several were left out: the mean is of those used */
	if (used < f->nruns)
		for (size_t t = 0; t < w->cap_tests; t++) {
			double *c = &w->cost.v[w->commits.n * w->cap_tests + t];
			if (!isnan(*c))
				*c *= (double)f->nruns / (double)used;
		}
	free(first_problem);
	tf_history_commit hc;
	memset(&hc, 0, sizeof(hc));
	memcpy(hc.commit, f->match.commit, sizeof(hc.commit));
	hc.subject = f->subject ? tf_xstrdup(f->subject) : NULL;
	hc.klass = tf_strtab_intern(&w->classes, klass, strlen(klass)) - 1;
	hc.runs = used;
	free(klass);
	tf_vec_push(&w->commits, hc);
	return 0;
}

int tf_history_pick_suite(char **suite, char **kind, tf_store *s, const char *start,
			  const tf_history_load_opts *o)
{
	tf_baseline b;
	unsigned dist;
	int rc;

	*suite = o->suite ? tf_xstrdup(o->suite) : NULL;
	*kind = o->kind ? tf_xstrdup(o->kind) : NULL;
	if (*suite && *kind)
		return 0;
	if (*suite) {
		tf_store_match m;
		tf_store_resolve_opts ro = { 0, false };
		rc = tf_store_resolve_suite(&m, s, start, *suite, &ro);
		if (rc)
			return tf_error_set(rc, "no stored run of suite '%s' on the first-parent history "
					    "of '%s' (%u commits looked at)", *suite, start, m.walked);
		rc = tf_store_show(&b, s, m.commit);
	} else {
		rc = tf_store_nearest(&b, &dist, s, start);
		if (rc)
			return tf_error_set(rc, "no stored run on the first-parent history of '%s'",
					    start);
	}
	if (rc)
		return rc;
	for (size_t i = 0; i < b.files.n; i++) {
		if (*suite && strcmp(b.files.v[i].suite, *suite) != 0)
			continue;
		if (!*suite)
			*suite = tf_xstrdup(b.files.v[i].suite);
		if (!*kind)
			*kind = tf_xstrdup(b.files.v[i].kind);
		break;
	}
	tf_baseline_clear(&b);
	if (!*suite || !*kind)
		return tf_error_set(TF_ENOTFOUND, "no stored run of suite '%s' near '%s'",
				    *suite ? *suite : "?", start);
	return 0;
}

static void walker_free(walker *w)
{
	for (size_t i = 0; i < w->commits.n; i++)
		free(w->commits.v[i].subject);
	tf_vec_free(&w->commits);
	for (size_t i = 0; i < w->skipped.n; i++)
		free(w->skipped.v[i].why);
	tf_vec_free(&w->skipped);
	tf_strtab_free(&w->names);
	tf_strtab_free(&w->classes);
	tf_vec_free(&w->cost);
	tf_vec_free(&w->measure);
	tf_vec_free(&w->failed);
}

/* The walk's result, oldest first; each test keeps the points of its
 * newest measure. */
static tf_history_data *finish(walker *w, char *suite, char *kind, char *unit)
{
	tf_history_data *d = tf_xcalloc(1, sizeof(*d));
	size_t nc = w->commits.n, nt = w->names.strs.n ? w->names.strs.n - 1 : 0;

	d->suite = suite;
	d->kind = kind;
	d->unit = unit ? unit : tf_xstrdup("");
	d->ncommits = nc;
	d->commits = tf_xcalloc(nc + 1, sizeof(*d->commits));
	d->klass = tf_xcalloc(nc + 1, sizeof(uint32_t));
	for (size_t i = 0; i < nc; i++) {
		d->commits[i] = w->commits.v[nc - 1 - i];
		d->klass[i] = d->commits[i].klass;
	}
	w->commits.n = 0; /* moved */
	d->ntests = nt;
	d->tests = tf_xcalloc(nt + 1, sizeof(*d->tests));
	d->cost = tf_xmalloc((nt * nc + 1) * sizeof(double));
	for (size_t t = 0; t < nt; t++) {
		uint32_t id = (uint32_t)t + 1;
		d->tests[t].name = tf_xstrdup(w->names.strs.v[id]);
		d->tests[t].failed = id < w->failed.n ? w->failed.v[id] : 0;
		uint8_t newest = 0;
		for (size_t r = 0; r < nc && !newest; r++)
			newest = w->measure.v[r * w->cap_tests + id];
		d->tests[t].measure = newest ? (tf_test_measure)(newest - 1) : TF_MEASURE_SAMPLES;
		for (size_t i = 0; i < nc; i++) {
			size_t r = nc - 1 - i, at = r * w->cap_tests + id;
			bool ok = at < w->cost.n && w->measure.v[at] == newest;
			d->cost[t * nc + i] = ok ? w->cost.v[at] : NAN;
		}
	}
	d->nclasses = w->classes.strs.n ? w->classes.strs.n - 1 : 0;
	d->classes = tf_xcalloc(d->nclasses + 1, sizeof(char *));
	for (size_t k = 0; k < d->nclasses; k++)
		d->classes[k] = tf_xstrdup(w->classes.strs.v[k + 1]);
	d->nskipped = w->skipped.n;
	d->skipped = w->skipped.v;
	w->skipped.v = NULL;
	w->skipped.n = 0;
	return d;
}

int tf_history_load(tf_history_data **out, tf_store *s, const tf_history_load_opts *o)
{
	const char *start = o->start ? o->start : "HEAD";
	char id[TF_STORE_ID_HEX + 1], *suite = NULL, *kind = NULL, *unit = NULL;
	size_t max_walk = o->max_walk ? o->max_walk : MAX_WALK_DEFAULT, walked = 0;
	walker w;
	int rc;

	*out = NULL;
	memset(&w, 0, sizeof(w));
	tf_strtab_init(&w.names);
	tf_strtab_init(&w.classes);
	rc = tf_store_rev(id, s, start);
	if (rc)
		return rc;
	rc = tf_history_pick_suite(&suite, &kind, s, id, o);
	if (rc) {
		free(suite);
		free(kind);
		walker_free(&w);
		return rc;
	}
	/* one commit at a time: a baseline of the suite, from git, else where
	 * the store keeps copies (Pyroscope) */
	while (walked < max_walk && (!o->max_commits || w.commits.n < o->max_commits)) {
		tf_store_match m;
		tf_store_resolve_opts ro = { 1, false };
		walked++;
		rc = tf_store_resolve(&m, s, id, suite, kind, &ro);
		if (rc == TF_ENOTFOUND) {
			tf_store_run r = { NULL, suite, kind, o->pyroscope_service, 1 };
			rc = tf_store_find_elsewhere(&m, s, id, &r);
		}
		if (rc == 0) {
			tf_store_found f;
			char *why = NULL;
			rc = tf_store_read_runs(&f, s, &m, suite, kind);
			if (rc == 0) {
				rc = add_commit(&w, &f, o->value, &unit, &why);
			} else {
				why = tf_xasprintf("cannot be read: %s", tf_error_last());
			}
			if (why) {
				tf_history_skipped sk;
				memcpy(sk.commit, m.commit, sizeof(sk.commit));
				sk.why = why;
				tf_vec_push(&w.skipped, sk);
			}
			tf_store_found_clear(&f);
		}
		tf_error_clear();
		/* the parent, or the end of the history */
		char *parent = tf_xasprintf("%s^", id);
		rc = tf_store_rev(id, s, parent);
		free(parent);
		if (rc) {
			tf_error_clear();
			break;
		}
	}
	if (!w.commits.n) {
		rc = tf_error_set(TF_ENOTFOUND, "no usable stored run of suite '%s' (kind '%s') in %zu "
				  "first-parent commits from '%s'%s", suite, kind, walked, start,
				  w.skipped.n ? ": every one found was left out" : "");
		free(suite);
		free(kind);
		free(unit);
		walker_free(&w);
		return rc;
	}
	tf_history_data *d = finish(&w, suite, kind, unit);
	d->walked = walked;
	d->store = tf_xstrdup(tf_store_describe(s));
	walker_free(&w);
	*out = d;
	return 0;
}

void tf_history_data_free(tf_history_data *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->ncommits; i++)
		free(d->commits[i].subject);
	free(d->commits);
	for (size_t i = 0; i < d->ntests; i++)
		free(d->tests[i].name);
	free(d->tests);
	free(d->cost);
	free(d->klass);
	for (size_t i = 0; i < d->nclasses; i++)
		free(d->classes[i]);
	free(d->classes);
	for (size_t i = 0; i < d->nskipped; i++)
		free(d->skipped[i].why);
	free(d->skipped);
	free(d->suite);
	free(d->kind);
	free((char *)d->unit);
	free(d->store);
	free(d);
}

const char *tf_history_test_name(const tf_history_data *d, size_t test)
{
	return test < d->ntests ? d->tests[test].name : "[whole suite]";
}

void tf_history_input_from(tf_history_input *out, const tf_history_data *d)
{
	out->ncommits = d->ncommits;
	out->ntests = d->ntests;
	out->cost = d->cost;
	out->klass = d->klass;
}

typedef TF_VEC(tf_profile *) profvec;
typedef TF_VEC(tf_store_found) foundvec;

/* The runs of commits [lo, hi], the end nearest the change first, of at
 * most `max` commits (every run a baseline holds: saved from --repeat N,
 * its N runs). */
static void side_runs(profvec *runs, foundvec *found, tf_store *s, const tf_history_data *d,
		      size_t lo, size_t hi, bool nearest_high, size_t max)
{
	size_t used = 0;
	for (size_t k = 0; k <= hi - lo && used < max; k++) {
		size_t i = nearest_high ? hi - k : lo + k;
		tf_store_match m;
		memset(&m, 0, sizeof(m));
		memcpy(m.commit, d->commits[i].commit, sizeof(m.commit));
		tf_store_found f;
		if (tf_store_read_runs(&f, s, &m, d->suite, d->kind) != 0) {
			tf_error_clear();
			continue;
		}
		size_t before = runs->n;
		for (size_t r = 0; r < f.nruns; r++) {
			char *pr = tf_history_run_problem(f.runs[r]);
			if (pr) {
				free(pr);
				continue;
			}
			tf_vec_push(runs, f.runs[r]);
		}
		if (runs->n > before) {
			tf_vec_push(found, f);
			used++;
		} else {
			tf_store_found_clear(&f);
		}
	}
}

/* The stored runs a comparison borrows, kept as long as it lives. */
struct tf_history_keep {
	foundvec found;
	profvec base, head;
	tf_history_fn *funcs;
	size_t nfuncs;
};

static void keep_free(struct tf_history_keep *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->found.n; i++)
		tf_store_found_clear(&k->found.v[i]);
	tf_vec_free(&k->found);
	tf_vec_free(&k->base);
	tf_vec_free(&k->head);
	tf_history_functions_free(k->funcs, k->nfuncs);
	free(k);
}

/* The functions listed for a change. */
#define TREE_FUNCTIONS 5

static int by_move(const void *a, const void *b)
{
	double x = fabs(((const tf_func_delta *)a)->delta_self);
	double y = fabs(((const tf_func_delta *)b)->delta_self);
	return x > y ? -1 : x < y;
}

/* The caller most of `name`'s move of self cost came through in `tree`
 * (in direction `dir`), or NULL. */
static char *main_caller(const tf_diff_tree *tree, const char *name, double dir)
{
	tf_strtab callers;
	TF_VEC(double) moved = { 0 };
	char *best = NULL;
	double bv = 0;
	tf_strtab_init(&callers);
	for (size_t i = 1; i < tree->n; i++) {
		const tf_diff_node *nd = &tree->nodes[i];
		if (strcmp(nd->name, name) != 0 || nd->parent == TF_DIFF_NONE || nd->parent == 0)
			continue;
		const char *pn = tree->nodes[nd->parent].name;
		if (strcmp(pn, name) == 0)
			continue;
		uint32_t id = tf_strtab_intern(&callers, pn, strlen(pn));
		while (moved.n < id)
			tf_vec_push(&moved, 0.0);
		moved.v[id - 1] += (nd->head_self - nd->base_self) * dir;
	}
	for (size_t k = 0; k < moved.n; k++)
		if (moved.v[k] > bv) {
			bv = moved.v[k];
			free(best);
			best = tf_xstrdup(callers.strs.v[k + 1]);
		}
	tf_vec_free(&moved);
	tf_strtab_free(&callers);
	return best;
}

int tf_history_test_functions(tf_history_fn **out, size_t *n, const tf_comparison *c,
			      const tf_test_delta *t, size_t max)
{
	tf_diff_tree *tree = NULL;
	*out = NULL;
	*n = 0;
	int rc = tf_comparison_diff_tree(&tree, c, (size_t)(t - c->tests));
	if (rc)
		return rc;
	double dir = t->head.cost >= t->base.cost ? 1 : -1;
	TF_VEC(tf_func_delta) f = { 0 };
	if (t->nfunctions) {
		for (size_t i = 0; i < t->nfunctions && f.n < max; i++)
			tf_vec_push(&f, t->functions[i]);
	} else {
		tf_strtab names;
		tf_strtab_init(&names);
		for (size_t i = 1; i < tree->n; i++) {
			const tf_diff_node *nd = &tree->nodes[i];
			uint32_t id = tf_strtab_intern(&names, nd->name, strlen(nd->name));
			while (f.n < id) {
				tf_func_delta z;
				memset(&z, 0, sizeof(z));
				tf_vec_push(&f, z);
			}
			tf_func_delta *x = &f.v[id - 1];
			if (!x->name) {
				x->name = nd->name;
				x->file = nd->file;
				x->line = nd->line;
				x->delta_total = NAN;
			}
			x->base_self += nd->base_self;
			x->head_self += nd->head_self;
			x->delta_self += nd->head_self - nd->base_self;
		}
		size_t w = 0;
		for (size_t i = 0; i < f.n; i++)
			if (f.v[i].name && f.v[i].delta_self * dir > 0)
				f.v[w++] = f.v[i];
		if (w)
			qsort(f.v, w, sizeof(*f.v), by_move);
		f.n = TF_MIN(w, max);
		tf_strtab_free(&names);
	}
	*n = f.n;
	*out = tf_xcalloc(f.n + 1, sizeof(**out));
	for (size_t i = 0; i < f.n; i++) {
		(*out)[i].d = f.v[i];
		(*out)[i].d.name = tf_xstrdup(f.v[i].name);
		(*out)[i].d.file = tf_xstrdup(f.v[i].file ? f.v[i].file : "");
		(*out)[i].caller = main_caller(tree, f.v[i].name, dir);
	}
	tf_vec_free(&f);
	tf_diff_tree_free(tree);
	return 0;
}

void tf_history_functions_free(tf_history_fn *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free((char *)f[i].d.name);
		free((char *)f[i].d.file);
		free(f[i].caller);
	}
	free(f);
}

int tf_history_explain(tf_history_explained *out, tf_store *s, const tf_history_data *d,
		       size_t test, size_t before_lo, size_t before_hi, size_t after_lo,
		       size_t after_hi, size_t max_runs)
{
	struct tf_history_keep *k = tf_xcalloc(1, sizeof(*k));
	tf_compare_opts o;
	int rc;

	memset(out, 0, sizeof(*out));
	if (test >= d->ntests) {
		free(k);
		return tf_error_set(TF_ENOTFOUND, "the whole suite moved: no one test to compare");
	}
	side_runs(&k->base, &k->found, s, d, before_lo, before_hi, true, max_runs);
	side_runs(&k->head, &k->found, s, d, after_lo, after_hi, false, max_runs);
	if (!k->base.n || !k->head.n) {
		keep_free(k);
		return tf_error_set(TF_ENOTFOUND, "no readable stored run on one side of the change");
	}
	tf_compare_opts_init(&o);
	/* every function that moved, not only past the gate's threshold */
	o.threshold = 0.5;
	o.alpha = 0.05;
	o.test = d->tests[test].name;
	o.keep_shift = true;
	o.min_delta_ns = 0;
	tf_compare_side bs = { (const tf_profile *const *)k->base.v, NULL, k->base.n };
	tf_compare_side hs = { (const tf_profile *const *)k->head.v, NULL, k->head.n };
	rc = tf_compare(&out->cmp, &bs, &hs, &o);
	if (rc) {
		keep_free(k);
		return rc;
	}
	out->keep = k;
	out->t = tf_comparison_find(out->cmp, d->tests[test].name);
	if (out->t && tf_history_test_functions(&k->funcs, &k->nfuncs, out->cmp, out->t,
						TREE_FUNCTIONS) == 0) {
		out->functions = k->funcs;
		out->nfunctions = k->nfuncs;
	}
	tf_error_clear();
	return 0;
}

void tf_history_explained_clear(tf_history_explained *e)
{
	if (!e)
		return;
	tf_comparison_free(e->cmp);
	keep_free(e->keep);
	memset(e, 0, sizeof(*e));
}
