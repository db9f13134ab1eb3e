/*
 * review.c - which lines of a pull request get a review comment.
 *
 * A reviewer reads the diff, so a comment belongs on lines the PR changed
 * and nowhere else (GitHub refuses lines outside the diff's hunks anyway):
 * for every function whose self cost grew in a regressed test, its lines
 * are taken from the head profile (from the function's first line to the
 * last line a sample landed on); the changed ranges of its file in
 * merge-base..head that meet them are candidates, and the comment covers
 * the one that holds the function's line of change, else the nearest one. Functions
 * with no changed line stay in the main comment only.
 */
#include "publish/publish_int.h"

#include <stdlib.h>
#include <string.h>

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Lines [lo, hi] the function occupies in the head runs; false if unknown. */
static bool function_extent(const tf_comparison *c, const tf_func_delta *f, int64_t *lo,
			    int64_t *hi)
{
	bool found = false;
	*lo = INT64_MAX;
	*hi = 0;
	for (size_t r = 0; r < c->head.n; r++) {
		const tf_profile *p = c->head.profiles[r];
		uint8_t *mine = tf_xcalloc(p->functions.n ? p->functions.n : 1, 1);
		bool any = false;
		for (size_t i = 0; i < p->functions.n; i++) {
			const tf_function *fn = &p->functions.v[i];
			if (strcmp(tf_profile_str(p, fn->name), f->name) != 0)
				continue;
			if (*f->file && strcmp(base_name(tf_profile_str(p, fn->filename)),
					       base_name(f->file)) != 0)
				continue;
			mine[i] = 1;
			any = true;
			if (fn->start_line > 0 && fn->start_line < *lo)
				*lo = fn->start_line;
		}
		for (size_t i = 0; any && i < p->lines.n; i++) {
			const tf_line *l = &p->lines.v[i];
			if (l->function >= p->functions.n || !mine[l->function] || l->line <= 0)
				continue;
			found = true;
			if (l->line < *lo)
				*lo = l->line;
			if (l->line > *hi)
				*hi = l->line;
		}
		free(mine);
	}
	if (f->line > 0) {
		if (f->line < *lo)
			*lo = f->line;
		if (f->line > *hi)
			*hi = f->line;
		found = true;
	}
	return found && *hi >= *lo;
}

/*
 * The changed range of `cf` that meets [lo, hi], for a comment about
 * `line`. The function's first line is known (its declaration), its last
 * only as far as samples landed, so a range is cut at the start but kept
 * whole at the end.
 */
static bool pick_range(const tf_changed_file *cf, int64_t lo, int64_t hi, int64_t line,
		       uint32_t *start, uint32_t *end)
{
	int64_t best = INT64_MAX;
	for (size_t i = 0; i < cf->lines.n; i++) {
		int64_t a = cf->lines.v[i].start, b = a + (int64_t)cf->lines.v[i].count - 1;
		int64_t dist;
		if (cf->lines.v[i].count == 0 || b < lo || a > hi)
			continue;
		if (a < lo)
			a = lo;
		dist = line < a ? a - line : line > b ? line - b : 0;
		if (dist < best) {
			best = dist;
			*start = (uint32_t)a;
			*end = (uint32_t)b;
		}
	}
	return best != INT64_MAX;
}

static int by_growth(const void *a, const void *b)
{
	const tf_review_target *x = a, *y = b;
	if (x->growth != y->growth)
		return x->growth < y->growth ? 1 : -1;
	int d = strcmp(x->path, y->path);
	return d ? d : (x->line > y->line) - (x->line < y->line);
}

static char *target_key(const char *suite, const char *function, const char *path)
{
	uint64_t h = tf_hash_bytes(suite, strlen(suite), 0x7466);
	h = tf_hash_bytes(function, strlen(function) + 1, h);
	h = tf_hash_bytes(path, strlen(path) + 1, h);
	return tf_xasprintf("%016llx", (unsigned long long)h);
}

int tf_publish_review_targets(tf_review_targets *out, const tf_comparison *c,
			      const tf_changes *changes, const char *suite, size_t max)
{
	memset(out, 0, sizeof(*out));
	if (!suite)
		suite = "";
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *t = &c->tests[i];
		if (t->verdict != TF_VERDICT_REGRESSED)
			continue;
		for (size_t k = 0; k < t->nfunctions; k++) {
			const tf_func_delta *f = &t->functions[k];
			const tf_changed_file *cf;
			int64_t lo, hi;
			uint32_t a = 0, b = 0;
			if (!(f->delta_self > 0))
				continue;
			cf = *f->file && changes ? tf_changes_find(changes, f->file) : NULL;
			if (!cf || cf->status == 'D' || cf->binary || !function_extent(c, f, &lo, &hi) ||
			    !pick_range(cf, lo, hi, f->line > 0 ? f->line : lo, &a, &b)) {
				out->elsewhere++;
				continue;
			}
			char *key = target_key(suite, f->name, cf->path);
			tf_review_target *tg = NULL;
			for (size_t j = 0; j < out->items.n; j++)
				if (strcmp(out->items.v[j].key, key) == 0)
					tg = &out->items.v[j];
			if (!tg) {
				tf_review_target nt;
				memset(&nt, 0, sizeof(nt));
				nt.path = tf_xstrdup(cf->path);
				nt.line = b;
				nt.start_line = a;
				nt.key = key;
				tf_vec_push(&out->items, nt);
				tg = &out->items.v[out->items.n - 1];
			} else {
				free(key);
			}
			tf_review_ref ref = { i, k };
			tf_vec_push(&tg->refs, ref);
			tg->growth += f->delta_self;
		}
	}
	if (out->items.n > 1)
		qsort(out->items.v, out->items.n, sizeof(tf_review_target), by_growth);
	while (max && out->items.n > max) {
		tf_review_target *tg = &out->items.v[--out->items.n];
		out->elsewhere += tg->refs.n;
		free(tg->path);
		free(tg->key);
		tf_vec_free(&tg->refs);
	}
	return 0;
}

void tf_review_targets_clear(tf_review_targets *t)
{
	for (size_t i = 0; i < t->items.n; i++) {
		free(t->items.v[i].path);
		free(t->items.v[i].key);
		tf_vec_free(&t->items.v[i].refs);
	}
	tf_vec_free(&t->items);
	t->elsewhere = 0;
}

void tf_publish_review_marker(tf_buf *out, const char *suite, const char *key)
{
	/* the suite as report.md's marker spells it, then our key */
	tf_buf m = TF_BUF_INIT;
	tf_report_marker(&m, suite);
	/* "<!-- testflame:report suite=S -->\n" -> "<!-- testflame:review suite=S key=K -->" */
	const char *s = strstr(m.ptr, "suite=");
	const char *e = strstr(m.ptr, " -->");
	tf_buf_puts(out, "<!-- testflame:review ");
	if (s && e && e > s)
		tf_buf_put(out, s, (size_t)(e - s));
	tf_buf_printf(out, " key=%s -->", key ? key : "");
	tf_buf_free(&m);
}
