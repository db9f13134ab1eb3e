/*
 * functions.c - where a test's change is: per function, its self cost (the
 * function is the innermost frame) and total cost (anywhere on the stack,
 * counted once per stack so recursion does not inflate it) in base and
 * head, for the regressed and improved tests, in one more pass over their
 * samples. Functions are matched across profiles by name and file name; the
 * reported line is the one whose self cost moved most in the test's
 * direction, which points a reader at the loop that got slower rather than
 * at the function's first line.
 *
 * The list leads with the culprit: functions whose own (self) cost moved,
 * by how much, with the total beside it; a function whose lines the change
 * touched (the head's "changes" metadata) first of all. Ancestors that
 * only pass the growth on (_start, __libc_start_main, main) and moves
 * within the sampling noise (a kernel function seen in two samples more)
 * are not listed: every test shares the first, and the second is chance.
 */
#include "compare/compare_int.h"
#include "testflame/context.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
	uint32_t name, file;
} func_key;

static const char *basename_of(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static uint64_t func_hash(uint32_t name, uint32_t file)
{
	return tf_hash_combine(tf_hash_u64(name), file);
}

static bool func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct tf_compare_priv *pv = ctx;
	const func_key *k = key;
	return pv->funcs.v[idx].name == k->name && pv->funcs.v[idx].key_file == k->file;
}

/*
 * Functions match across profiles by name and the base name of their file:
 * base and head are often built in different directories (a CI checkout, a
 * temporary worktree), while two static functions of one name usually live
 * in files of different names. The path shown is the head's when it has
 * the function, since that is the code a reader will open.
 */
static uint32_t func_intern(struct tf_compare_priv *pv, const char *name, const char *file,
			    int64_t start_line, bool head)
{
	const char *base = basename_of(file);
	func_key k = { tf_strtab_intern(&pv->names, name, strlen(name)),
		       tf_strtab_intern(&pv->names, base, strlen(base)) };
	uint64_t h = func_hash(k.name, k.file);
	uint32_t id = tf_htab_find(&pv->func_index, h, func_eq, pv, &k);

	if (id != TF_HTAB_NONE) {
		cmp_func *f = &pv->funcs.v[id];
		if (head && !f->from_head) {
			f->file = tf_strtab_intern(&pv->names, file, strlen(file));
			f->start_line = start_line;
			f->from_head = true;
		}
		if (!f->start_line)
			f->start_line = start_line;
		return id;
	}
	cmp_func f = { k.name, tf_strtab_intern(&pv->names, file, strlen(file)), k.file,
		       start_line, head };
	id = (uint32_t)pv->funcs.n;
	tf_vec_push(&pv->funcs, f);
	tf_htab_insert(&pv->func_index, h, id);
	return id;
}

void tf_cmp_prepare_keys(struct tf_compare_priv *pv)
{
	if (pv->keys_ready)
		return;
	for (size_t r = 0; r < pv->nruns; r++) {
		cmp_run *run = &pv->runs[r];
		const tf_profile *p = run->p;

		run->fn_key = tf_xmalloc((p->functions.n + 1) * sizeof(uint32_t));
		for (size_t i = 0; i < p->functions.n; i++) {
			const tf_function *f = &p->functions.v[i];
			const char *name = tf_profile_str(p, f->name);
			if (!*name)
				name = tf_profile_str(p, f->system_name);
			if (!*name)
				name = "??";
			run->fn_key[i] = func_intern(pv, name, tf_profile_str(p, f->filename),
						     f->start_line, run->head);
		}
		/* a frame without symbols is named by its binary and file offset,
		 * which (unlike the address) survives ASLR between runs */
		run->loc_key = tf_xmalloc((p->locations.n + 1) * sizeof(uint32_t));
		for (size_t i = 0; i < p->locations.n; i++) {
			const tf_location *l = &p->locations.v[i];
			char buf[512];
			run->loc_key[i] = NO_ID;
			if (l->nlines)
				continue;
			if (l->mapping != TF_NO_MAPPING) {
				const tf_mapping *m = &p->mappings.v[l->mapping];
				snprintf(buf, sizeof(buf), "%s+0x%llx",
					 basename_of(tf_profile_str(p, m->filename)),
					 (unsigned long long)(l->address - m->memory_start + m->file_offset));
			} else {
				snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)l->address);
			}
			run->loc_key[i] = func_intern(pv, buf, "", 0, run->head);
		}
	}
	pv->keys_ready = true;
}

/* Costs summed over runs per (test slot, function), with line == WHOLE,
 * and per (test slot, function, line) for the line to point at (self only). */
#define WHOLE INT64_MIN

typedef struct {
	uint32_t slot, func;
	int64_t line;
	double self[2], total[2];
	int64_t best_line;   /* WHOLE entries: the line that moved most */
	double best_delta;
	bool changed;        /* WHOLE entries: a sampled line was changed, or
			      * a line it called from */
	int64_t touched_call; /* ... that line (0 none) */
	uint32_t caller;     /* WHOLE entries: the call that moved most, NO_ID none */
	int64_t caller_line;
	double caller_delta;
} fstat;

typedef struct {
	TF_VEC(fstat) f;
	tf_htab index;
	/* self cost by (slot, leaf function, its caller, the call's line):
	 * caller_key(caller) in `func`, the leaf in best_line */
	TF_VEC(fstat) calls;
	tf_htab call_index;
} acc;

static bool call_eq(const void *ctx, uint32_t idx, const void *key)
{
	const acc *a = ctx;
	const fstat *k = key;
	const fstat *f = &a->calls.v[idx];
	return f->slot == k->slot && f->func == k->func && f->line == k->line &&
	       f->best_line == k->best_line;
}

static fstat *call_get(acc *a, uint32_t slot, uint32_t leaf, uint32_t caller, int64_t line)
{
	fstat k;
	uint64_t h = tf_hash_combine(tf_hash_combine(tf_hash_u64(slot), caller),
				     tf_hash_combine((uint64_t)line, leaf));
	memset(&k, 0, sizeof(k));
	k.slot = slot;
	k.func = caller;
	k.line = line;
	k.best_line = leaf;
	uint32_t i = tf_htab_find(&a->call_index, h, call_eq, a, &k);
	if (i == TF_HTAB_NONE) {
		i = (uint32_t)a->calls.n;
		tf_vec_push(&a->calls, k);
		tf_htab_insert(&a->call_index, h, i);
	}
	return &a->calls.v[i];
}

static bool fstat_eq(const void *ctx, uint32_t idx, const void *key)
{
	const acc *a = ctx;
	const fstat *k = key;
	return a->f.v[idx].slot == k->slot && a->f.v[idx].func == k->func &&
	       a->f.v[idx].line == k->line;
}

static fstat *fstat_get(acc *a, uint32_t slot, uint32_t func, int64_t line)
{
	fstat k;
	uint64_t h = tf_hash_combine(tf_hash_combine(tf_hash_u64(slot), func), (uint64_t)line);
	uint32_t i;

	memset(&k, 0, sizeof(k));
	k.slot = slot;
	k.func = func;
	k.line = line;
	k.best_delta = -INFINITY;
	k.caller = NO_ID;
	k.caller_delta = -INFINITY;
	i = tf_htab_find(&a->index, h, fstat_eq, a, &k);
	if (i == TF_HTAB_NONE) {
		i = (uint32_t)a->f.n;
		tf_vec_push(&a->f, k);
		tf_htab_insert(&a->index, h, i);
	}
	return &a->f.v[i];
}

static int sign_of(tf_verdict v)
{
	return v == TF_VERDICT_IMPROVED ? -1 : 1;
}

static int by_growth(const void *x, const void *y, void *ctx)
{
	const tf_func_delta *a = x, *b = y;
	int sort_sign = *(const int *)ctx;
	double da = sort_sign * a->delta_self, db = sort_sign * b->delta_self;
	if (a->changed != b->changed)
		return a->changed ? -1 : 1;
	if (da != db)
		return da > db ? -1 : 1;
	da = sort_sign * a->delta_total;
	db = sort_sign * b->delta_total;
	if (da != db)
		return da > db ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* One sample's value into the self cost of its leaf function (and line)
 * and the total of every function on its stack, once each, in `slot`. */
/* The function and line of entry `j` of location `li` (its inlined
 * frames first). */
static uint32_t frame_func(const cmp_run *run, uint32_t li, uint32_t j, int64_t *line)
{
	const tf_profile *p = run->p;
	const tf_location *l = &p->locations.v[li];
	*line = l->nlines ? p->lines.v[l->lines_off + j].line : 0;
	return l->nlines ? run->fn_key[p->lines.v[l->lines_off + j].function] : run->loc_key[li];
}

static void add_sample(acc *a, const cmp_run *run, const tf_sample *s, uint32_t slot, double v,
		       uint64_t *stamp, uint64_t gen)
{
	const tf_profile *p = run->p;
	int side = run->head;

	/* the leaf's caller: the frame it was inlined into, else the next
	 * location's innermost frame */
	if (s->nlocs) {
		uint32_t li = p->stack.v[s->locs_off];
		const tf_location *l = &p->locations.v[li];
		int64_t line, cline;
		uint32_t leaf = frame_func(run, li, 0, &line), caller = NO_ID;
		if (l->nlines > 1)
			caller = frame_func(run, li, 1, &cline);
		else if (s->nlocs > 1)
			caller = frame_func(run, p->stack.v[s->locs_off + 1], 0, &cline);
		if (caller != NO_ID)
			call_get(a, slot, leaf, caller, cline)->self[side] += v;
	}
	for (uint32_t k = 0; k < s->nlocs; k++) {
		uint32_t li = p->stack.v[s->locs_off + k];
		const tf_location *l = &p->locations.v[li];
		uint32_t nl = l->nlines ? l->nlines : 1;
		for (uint32_t j = 0; j < nl; j++) {
			uint32_t f = l->nlines ? run->fn_key[p->lines.v[l->lines_off + j].function]
					       : run->loc_key[li];
			if (k == 0 && j == 0) {
				fstat_get(a, slot, f, WHOLE)->self[side] += v;
				int64_t line = l->nlines ? p->lines.v[l->lines_off].line : 0;
				fstat_get(a, slot, f, line)->self[side] += v;
			}
			if (stamp[f] != gen) {
				stamp[f] = gen;
				fstat_get(a, slot, f, WHOLE)->total[side] += v;
			}
		}
	}
}

static bool test_name_eq(const void *ctx, uint32_t index, const void *key)
{
	const tf_comparison *c = ctx;
	return strcmp(c->tests[index].name, key) == 0;
}

/*
 * For each internal test id, the slot of the nearest test it ran inside
 * (its parent, that one's parent, ...) whose functions are listed and that
 * is judged by all it holds: a ctest test whose framework's tests got no
 * sample of their own is measured by its count, and "where it grew" must
 * include them. One judged through its tests (outside them, compare.c's
 * holding_tests) lists its own work only. NO_ID for none.
 */
void tf_cmp_index_tests(const tf_comparison *c, tf_htab *h)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < c->ntests; i++)
		tf_htab_insert(h, tf_hash_bytes(c->tests[i].name, strlen(c->tests[i].name), 0),
			       (uint32_t)i);
}

uint32_t tf_cmp_find_test(const tf_comparison *c, const tf_htab *h, const char *name)
{
	return tf_htab_find(h, tf_hash_bytes(name, strlen(name), 0), test_name_eq, c, name);
}

static uint32_t *ancestor_slots(const tf_comparison *c, const uint32_t *slot_of)
{
	const struct tf_compare_priv *pv = c->priv;
	uint32_t *up = tf_xmalloc((pv->ninternal + 1) * sizeof(uint32_t));
	tf_htab by_name;

	memset(up, 0xff, (pv->ninternal + 1) * sizeof(uint32_t));
	tf_cmp_index_tests(c, &by_name);
	for (size_t i = 0; i < c->ntests; i++) {
		const char *parent = c->tests[i].parent;
		/* bounded: a cycle in hostile metadata ends the walk */
		for (size_t depth = 0; parent && depth < 16; depth++) {
			uint32_t j = tf_cmp_find_test(c, &by_name, parent);
			if (j == TF_HTAB_NONE || j == i)
				break;
			if (c->tests[j].outside)
				break;
			if (slot_of[pv->test_id[j]] != NO_ID) {
				up[pv->test_id[i]] = slot_of[pv->test_id[j]];
				break;
			}
			parent = c->tests[j].parent;
		}
	}
	tf_htab_free(&by_name);
	return up;
}

/*
 * Whether a function's own cost moved the test's way beyond the sampling
 * noise: three standard deviations of the difference of two Poisson
 * counts of its samples, and at least 1% of the test's change. A function
 * whose changed lines ran only needs to have moved, itself or what it
 * called.
 */
static bool self_moved(const tf_func_delta *d, const tf_test_delta *t, int sg,
		       const struct tf_compare_priv *pv)
{
	double moved = sg * d->delta_self;
	if (d->changed)
		return moved > 0 || sg * d->delta_total > 0;
	if (moved <= 0)
		return false;
	if (moved < 0.01 * fabs(t->head.cost - t->base.cost))
		return false;
	/* the value of one sample, from the test's head (else base) side */
	const tf_test_side *s = t->head.samples > 0 ? &t->head : &t->base;
	size_t runs = s == &t->head ? pv->nhead : pv->nbase;
	if (s->samples <= 0)
		return true;
	double per = s->sampled * (double)runs / (double)s->samples;
	double var = per * (d->head_self / (double)pv->nhead + d->base_self / (double)pv->nbase);
	return moved > 3 * sqrt(var);
}

void tf_cmp_keep_functions(struct tf_compare_priv *pv, tf_test_delta *t, tf_func_delta *v,
			   size_t n, size_t top, int (*by)(const void *, const void *, void *), int sg)
{
	size_t keep_n = TF_MIN(top, n);
	if (n > 1) /* qsort_r() with no array is undefined */
		qsort_r(v, n, sizeof(tf_func_delta), by, &sg);
	tf_func_delta *keep = tf_arena_alloc(pv->arena, (keep_n + 1) * sizeof(*keep));
	if (keep_n)
		memcpy(keep, v, keep_n * sizeof(*keep));
	t->functions = keep;
	t->nfunctions = keep_n;
}

void tf_cmp_function_deltas(tf_comparison *c, size_t top)
{
	struct tf_compare_priv *pv = c->priv;
	uint32_t *slot_of = tf_xmalloc((pv->ninternal + 1) * sizeof(uint32_t));
	size_t *test_of_slot = tf_xmalloc((c->ntests + 1) * sizeof(size_t));
	uint32_t nslots = 0;
	uint64_t *stamp, gen = 0;
	acc a;

	memset(slot_of, 0xff, (pv->ninternal + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < c->ntests; i++) {
		tf_verdict v = c->tests[i].cpu.verdict;
		if (v == TF_VERDICT_REGRESSED || v == TF_VERDICT_IMPROVED) {
			slot_of[pv->test_id[i]] = nslots;
			test_of_slot[nslots++] = i;
		}
	}
	if (!nslots || !top) {
		free(slot_of);
		free(test_of_slot);
		return;
	}
	uint32_t *up_slot = ancestor_slots(c, slot_of);
	tf_cmp_prepare_keys(pv);
	memset(&a, 0, sizeof(a));
	stamp = tf_xcalloc(pv->funcs.n + 1, sizeof(uint64_t));

	for (size_t r = 0; r < pv->nruns; r++) {
		const cmp_run *run = &pv->runs[r];
		const tf_profile *p = run->p;

		for (size_t i = 0; i < p->samples.n; i++) {
			uint32_t own = slot_of[run->sample_test[i]], up = up_slot[run->sample_test[i]];
			if (own == NO_ID && up == NO_ID)
				continue;
			const tf_sample *s = &p->samples.v[i];
			double v = cmp_sample_value(run, i);
			if (v == 0 || s->nlocs == 0)
				continue;
			/* the sample counts for its test and for the changed test it ran inside */
			if (own != NO_ID)
				add_sample(&a, run, s, own, v, stamp, ++gen);
			if (up != NO_ID)
				add_sample(&a, run, s, up, v, stamp, ++gen);
		}
	}

	/* what the change touched, when the head's run file says */
	tf_changes ch;
	const char *json = tf_comparison_meta(c, true, "changes");
	bool have_changes = json && tf_changes_from_json(&ch, json) == 0;
	if (!have_changes)
		tf_error_clear();

	/* the line of each function whose self cost moved most the test's way */
	for (size_t i = 0, n = a.f.n; i < n; i++) {
		const fstat l = a.f.v[i];
		if (l.line == WHOLE || l.line <= 0)
			continue;
		fstat *f = fstat_get(&a, l.slot, l.func, WHOLE);
		const char *file = cmp_name(pv, pv->funcs.v[l.func].file);
		if (have_changes && *file && l.line <= UINT32_MAX &&
		    tf_changes_touch(&ch, file, (uint32_t)l.line))
			f->changed = true;
		int sg = sign_of(c->tests[test_of_slot[l.slot]].cpu.verdict);
		double d = sg * (l.self[1] / (double)pv->nhead - l.self[0] / (double)pv->nbase);
		if (d > f->best_delta || (d == f->best_delta && l.line < f->best_line)) {
			f->best_delta = d;
			f->best_line = l.line;
		}
	}

	/* the call of each function that moved most the test's way; a
	 * function that called from a line the change touched is changed
	 * too, its own cost or not: a loop added around a call spends its
	 * time in the callee (semver's VersionReq::matches, whose inserted
	 * loop's time was all core::hint::black_box's in a debug build, was
	 * not listed at all) */
	for (size_t i = 0; i < a.calls.n; i++) {
		const fstat *cl = &a.calls.v[i];
		const char *cfile = cmp_name(pv, pv->funcs.v[cl->func].file);
		if (have_changes && cl->self[1] > 0 && cl->line > 0 && cl->line <= UINT32_MAX &&
		    *cfile && tf_changes_touch(&ch, cfile, (uint32_t)cl->line)) {
			int64_t line = cl->line;
			fstat *cf = fstat_get(&a, cl->slot, cl->func, WHOLE);
			cf->changed = true;
			cf->touched_call = line;
			cl = &a.calls.v[i];
		}
		fstat *f = fstat_get(&a, cl->slot, (uint32_t)cl->best_line, WHOLE);
		int sg = sign_of(c->tests[test_of_slot[cl->slot]].verdict);
		double d = sg * (cl->self[1] / (double)pv->nhead - cl->self[0] / (double)pv->nbase);
		if (d > f->caller_delta) {
			f->caller_delta = d;
			f->caller = cl->func;
			f->caller_line = cl->line;
		}
	}

	/* per test: the functions, sorted by growth (or shrinkage), the top
	 * kept. A test judged by its exact time may have too few samples for
	 * any function to stand out (semver's test_pre, 0 samples against 2,
	 * named nothing): the functions its samples moved in are then named,
	 * marked within_noise, rather than none. */
	{
		TF_VEC(tf_func_delta) *lists = tf_xcalloc(nslots, sizeof(*lists));
		TF_VEC(tf_func_delta) *weak = tf_xcalloc(nslots, sizeof(*weak));
		for (size_t i = 0; i < a.f.n; i++) {
			const fstat *f = &a.f.v[i];
			if (f->line != WHOLE)
				continue;
			const cmp_func *cf = &pv->funcs.v[f->func];
			tf_func_delta d;
			memset(&d, 0, sizeof(d));
			d.name = cmp_name(pv, cf->name);
			d.file = cmp_name(pv, cf->file);
			d.base_self = f->self[0] / (double)pv->nbase;
			d.head_self = f->self[1] / (double)pv->nhead;
			d.base_total = f->total[0] / (double)pv->nbase;
			d.head_total = f->total[1] / (double)pv->nhead;
			d.delta_self = d.head_self - d.base_self;
			d.delta_total = d.head_total - d.base_total;
			d.line = f->best_delta > 0 ? f->best_line : f->touched_call ? f->touched_call
											: cf->start_line;
			d.changed = f->changed;
			d.caller = d.caller_file = NULL;
			d.caller_line = 0;
			if (f->caller != NO_ID && f->caller_delta > 0) {
				const cmp_func *cc = &pv->funcs.v[f->caller];
				d.caller = cmp_name(pv, cc->name);
				d.caller_file = cmp_name(pv, cc->file);
				d.caller_line = f->caller_line ? f->caller_line : cc->start_line;
			}
			const tf_test_delta *t = &c->tests[test_of_slot[f->slot]];
			int sg = sign_of(t->cpu.verdict);
			if (sg * d.delta_self <= 0 && sg * d.delta_total <= 0)
				continue;
			d.within_noise = !self_moved(&d, t, sg, pv);
			if (d.within_noise && sg * d.delta_self > 0)
				tf_vec_push(&weak[f->slot], d);
			else if (!d.within_noise)
				tf_vec_push(&lists[f->slot], d);
		}
		for (uint32_t s = 0; s < nslots; s++) {
			tf_test_delta *t = &c->tests[test_of_slot[s]];
			for (size_t k = 0, none = !lists[s].n; none && k < weak[s].n; k++)
				tf_vec_push(&lists[s], weak[s].v[k]);
			tf_cmp_keep_functions(pv, t, lists[s].v, lists[s].n, top, by_growth,
					      sign_of(t->cpu.verdict));
			tf_vec_free(&lists[s]);
			tf_vec_free(&weak[s]);
		}
		free(lists);
		free(weak);
	}

	if (have_changes)
		tf_changes_free(&ch);
	free(stamp);
	tf_vec_free(&a.f);
	tf_htab_free(&a.index);
	tf_vec_free(&a.calls);
	tf_htab_free(&a.call_index);
	free(slot_of);
	free(up_slot);
	free(test_of_slot);
}
