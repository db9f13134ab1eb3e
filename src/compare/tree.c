/*
 * tree.c - diff call trees, what diff flame graphs are drawn from: the
 * stacks of one test in base and head merged into one tree by frame name
 * along the path from the root, with inlined functions expanded into their
 * own frames (a location's lines are innermost first, so they are walked
 * backwards). Built on demand, because a report draws few trees and a large
 * profile makes them big.
 *
 * The tree is built without looking a node up: the samples of both sides
 * are flattened into paths of name ranks (the names' order as strings),
 * sorted test by test, and walked in that order, so that a sample shares
 * its longest common prefix with the one before it and every frame past
 * that prefix is a new node (samples with that prefix and that next name
 * would sit next to each other). Nodes are thus made in preorder with
 * children in name order, and linked to their siblings as they are made. A
 * (parent, name) hash index cost a cache miss per frame of every sample;
 * a forest of forty tests and two million nodes spent most of the report
 * in it.
 */
#include "compare/compare_int.h"

#include <stdlib.h>
#include <string.h>

/* A sample as a path: callers first, inlined functions expanded; ranks
 * at `off` in the builder's `ranks`, the cmp_funcs in `funcs`. */
typedef struct {
	uint32_t off, len;
	uint32_t run, test;
	uint32_t order;     /* flattening order: ties keep it */
	double v;
} member;

typedef struct {
	TF_VEC(tf_diff_node) nodes;
	TF_VEC(uint32_t) ranks;    /* name ids, then their ranks as strings */
	TF_VEC(uint32_t) funcs;
	TF_VEC(member) members;
	TF_VEC(uint32_t) path;     /* node at each depth of the previous member */
	const struct tf_compare_priv *pv;
} builder;

static uint32_t new_node(builder *b, uint32_t parent, uint32_t name, const char *file,
			 int64_t line)
{
	tf_diff_node n;
	memset(&n, 0, sizeof(n));
	n.name = cmp_name(b->pv, name);
	n.file = file;
	n.line = line;
	n.parent = parent;
	n.first_child = n.next_sibling = TF_DIFF_NONE;
	n.depth = b->nodes.v[parent].depth + 1;
	uint32_t i = (uint32_t)b->nodes.n;
	tf_vec_push(&b->nodes, n);
	return i;
}

static void add_member(builder *b, const cmp_run *run, uint32_t r, size_t i)
{
	const struct tf_compare_priv *pv = b->pv;
	const tf_profile *p = run->p;
	double v = cmp_sample_value(run, i) / (double)(run->head ? pv->nhead : pv->nbase);
	if (v == 0)
		return;
	const tf_sample *s = &p->samples.v[i];
	member mb = { (uint32_t)b->ranks.n, 0, r, run->sample_test[i], (uint32_t)b->members.n, v };
	for (uint32_t k = s->nlocs; k-- > 0;) {
		uint32_t li = p->stack.v[s->locs_off + k];
		const tf_location *l = &p->locations.v[li];
		if (!l->nlines) {
			uint32_t f = run->loc_key[li];
			tf_vec_push(&b->funcs, f);
			tf_vec_push(&b->ranks, pv->funcs.v[f].name);
			continue;
		}
		for (uint32_t j = l->nlines; j-- > 0;) {
			uint32_t f = run->fn_key[p->lines.v[l->lines_off + j].function];
			tf_vec_push(&b->funcs, f);
			tf_vec_push(&b->ranks, pv->funcs.v[f].name);
		}
	}
	mb.len = (uint32_t)b->ranks.n - mb.off;
	tf_vec_push(&b->members, mb);
}

static int by_string(const void *x, const void *y, void *ctx)
{
	const struct tf_compare_priv *pv = ctx;
	const uint32_t *a = x, *b = y;
	return strcmp(cmp_name(pv, *a), cmp_name(pv, *b));
}

/* rank[id] for the name ids in `ids` (and the extra ones given), 1-based:
 * their order as strings. Distinct ids are distinct strings (interned). */
static uint32_t *name_ranks(const struct tf_compare_priv *pv, const uint32_t *ids, size_t n,
			    const uint32_t *more, size_t nmore)
{
	size_t nnames = pv->names.strs.n;
	uint32_t *rank = tf_xcalloc(nnames + 1, sizeof(uint32_t));
	TF_VEC(uint32_t) used = { 0 };

	for (size_t i = 0; i < n + nmore; i++) {
		uint32_t id = i < n ? ids[i] : more[i - n];
		if (!rank[id]) {
			rank[id] = 1;
			tf_vec_push(&used, id);
		}
	}
	if (used.n)
		qsort_r(used.v, used.n, sizeof(uint32_t), by_string, (void *)pv);
	for (size_t r = 0; r < used.n; r++)
		rank[used.v[r]] = (uint32_t)r + 1;
	tf_vec_free(&used);
	return rank;
}

static int by_path(const void *x, const void *y, void *ctx)
{
	const uint32_t *ranks = ctx;
	const member *a = x, *b = y;
	const uint32_t *p = ranks + a->off, *q = ranks + b->off;
	uint32_t n = a->len < b->len ? a->len : b->len;
	for (uint32_t k = 0; k < n; k++)
		if (p[k] != q[k])
			return p[k] < q[k] ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* Members [lo, hi) sorted and merged under `top`; `above` (the root over
 * a test's node, or TF_DIFF_NONE) gets their totals too. */
static void walk(builder *b, member *m, size_t lo, size_t hi, uint32_t top, uint32_t above)
{
	const struct tf_compare_priv *pv = b->pv;
	const uint32_t *prev = NULL;
	uint32_t prev_len = 0;

	if (hi - lo > 1)
		qsort_r(m + lo, hi - lo, sizeof(member), by_path, b->ranks.v);
	b->path.n = 0;
	tf_vec_push(&b->path, top);
	for (size_t i = lo; i < hi; i++) {
		const member *mb = &m[i];
		const uint32_t *ranks = b->ranks.v + mb->off;
		uint32_t c = 0;
		while (c < mb->len && c < prev_len && ranks[c] == prev[c])
			c++;
		/* the first new node follows the previous member's node at
		 * that depth, if it had one: a parent's children come one after
		 * the other, and a path's prefixes sort before it */
		uint32_t sib = c < prev_len ? b->path.v[c + 1] : TF_DIFF_NONE;
		b->path.n = c + 1;
		for (uint32_t d = c; d < mb->len; d++) {
			const cmp_func *f = &pv->funcs.v[b->funcs.v[mb->off + d]];
			uint32_t up = b->path.v[d];
			uint32_t node = new_node(b, up, f->name, cmp_name(pv, f->file), f->start_line);
			if (d == c && sib != TF_DIFF_NONE)
				b->nodes.v[sib].next_sibling = node;
			else
				b->nodes.v[up].first_child = node;
			tf_vec_push(&b->path, node);
		}
		prev = ranks;
		prev_len = mb->len;

		tf_diff_node *nodes = b->nodes.v;
		bool head = pv->runs[mb->run].head;
		if (above != TF_DIFF_NONE) {
			if (head)
				nodes[above].head_total += mb->v;
			else
				nodes[above].base_total += mb->v;
		}
		for (size_t d = 0; d < b->path.n; d++) {
			if (head)
				nodes[b->path.v[d]].head_total += mb->v;
			else
				nodes[b->path.v[d]].base_total += mb->v;
		}
		uint32_t leaf = b->path.v[b->path.n - 1];
		if (head)
			nodes[leaf].head_self += mb->v;
		else
			nodes[leaf].base_self += mb->v;
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

int tf_comparison_diff_tree(tf_diff_tree **out, const tf_comparison *c, size_t test)
{
	struct tf_compare_priv *pv = c->priv;
	builder b;
	uint32_t want = NO_ID;
	tf_diff_node root;

	*out = NULL;
	bool each = test == TF_EACH_TEST;
	if (test != TF_ALL_TESTS && !each) {
		if (test >= c->ntests)
			return tf_error_set(TF_EINVAL, "no test %zu in the comparison (it has %zu)",
					    test, c->ntests);
		want = pv->test_id[test];
	}
	tf_cmp_prepare_keys(pv);
	memset(&b, 0, sizeof(b));
	b.pv = pv;
	memset(&root, 0, sizeof(root));
	root.name = test == TF_ALL_TESTS || each ? "all" : c->tests[test].name;
	root.file = "";
	root.parent = root.first_child = root.next_sibling = TF_DIFF_NONE;
	tf_vec_push(&b.nodes, root);
	/* only the tests in the comparison (see --test) make up "all" */
	size_t nt = pv->ninternal + 1;
	bool *in = tf_xcalloc(nt, sizeof(bool));
	for (size_t i = 0; i < c->ntests; i++)
		in[pv->test_id[i]] = true;

	/* the vectors sized first: a large comparison's are hundreds of
	 * megabytes, which grown by doubling were copied (realloc within
	 * the heap) and faulted in twice; reserved once, only the pages
	 * used are touched, each once */
	size_t nmembers = 0, nframes = 0;
	for (size_t r = 0; r < pv->nruns; r++) {
		const cmp_run *run = &pv->runs[r];
		const tf_profile *p = run->p;
		for (size_t i = 0; i < p->samples.n; i++) {
			if (!(want != NO_ID ? run->sample_test[i] == want : in[run->sample_test[i]]))
				continue;
			const tf_sample *s = &p->samples.v[i];
			nmembers++;
			for (uint32_t k = 0; k < s->nlocs; k++) {
				uint32_t nl = p->locations.v[p->stack.v[s->locs_off + k]].nlines;
				nframes += nl ? nl : 1;
			}
		}
	}
	tf_vec_reserve(&b.members, nmembers);
	tf_vec_reserve(&b.ranks, nframes);
	tf_vec_reserve(&b.funcs, nframes);
	/* at most a node a frame, a test's node each, and the root */
	tf_vec_reserve(&b.nodes, nframes + nt + 1);

	/* the samples flattened, run by run in their order (the profile's
	 * arrays read front to back) */
	for (size_t r = 0; r < pv->nruns; r++) {
		const cmp_run *run = &pv->runs[r];
		for (size_t i = 0; i < run->p->samples.n; i++)
			if (want != NO_ID ? run->sample_test[i] == want : in[run->sample_test[i]])
				add_member(&b, run, (uint32_t)r, i);
	}
	uint32_t *tests = tf_xmalloc(nt * sizeof(uint32_t));
	size_t ntests = 0;
	for (size_t t = 0; t < nt; t++)
		if (want != NO_ID ? t == want : in[t])
			tests[ntests++] = (uint32_t)t;
	/* names as ranks; the tests' names ranked along, for the forest */
	uint32_t *tnames = tf_xmalloc((ntests + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < ntests; i++)
		tnames[i] = pv->test_name[tests[i]];
	uint32_t *rank = name_ranks(pv, b.ranks.v, b.ranks.n, tnames, each ? ntests : 0);
	for (size_t i = 0; i < b.ranks.n; i++)
		b.ranks.v[i] = rank[b.ranks.v[i]];

	if (!each) {
		walk(&b, b.members.v, 0, b.members.n, 0, TF_DIFF_NONE);
	} else {
		/* members grouped by test (a counting sort), tests in name order */
		uint32_t *start = tf_xcalloc(nt + 1, sizeof(uint32_t));
		member *m = tf_xmalloc((b.members.n + 1) * sizeof(member));
		for (size_t i = 0; i < b.members.n; i++)
			start[b.members.v[i].test + 1]++;
		for (size_t t = 0; t < nt; t++)
			start[t + 1] += start[t];
		uint32_t *at = tf_xmalloc((nt + 1) * sizeof(uint32_t));
		memcpy(at, start, (nt + 1) * sizeof(uint32_t));
		for (size_t i = 0; i < b.members.n; i++)
			m[at[b.members.v[i].test]++] = b.members.v[i];
		free(at);
		uint64_t *byname = tf_xmalloc((ntests + 1) * sizeof(uint64_t));
		for (size_t i = 0; i < ntests; i++)
			byname[i] = (uint64_t)rank[pv->test_name[tests[i]]] << 32 | tests[i];
		qsort(byname, ntests, sizeof(uint64_t), cmp_u64);
		uint32_t last = TF_DIFF_NONE;
		for (size_t i = 0; i < ntests; i++) {
			uint32_t t = (uint32_t)byname[i];
			if (start[t] == start[t + 1])
				continue;
			/* a test's node sits at depth 1, where no frame lives */
			uint32_t tn = new_node(&b, 0, pv->test_name[t], "", 0);
			if (last == TF_DIFF_NONE)
				b.nodes.v[0].first_child = tn;
			else
				b.nodes.v[last].next_sibling = tn;
			last = tn;
			walk(&b, m, start[t], start[t + 1], tn, 0);
		}
		free(byname);
		free(m);
		free(start);
	}
	free(rank);
	free(tnames);
	free(tests);
	free(in);

	tf_diff_tree *t = tf_xcalloc(1, sizeof(*t));
	t->nodes = b.nodes.v;
	t->n = b.nodes.n;
	tf_vec_free(&b.ranks);
	tf_vec_free(&b.funcs);
	tf_vec_free(&b.members);
	tf_vec_free(&b.path);
	*out = t;
	return 0;
}

void tf_diff_tree_free(tf_diff_tree *t)
{
	if (!t)
		return;
	free(t->nodes);
	free(t);
}
