/*
 * tree.c - diff call trees, what diff flame graphs are drawn from: the
 * stacks of one test in base and head merged into one tree by frame name
 * along the path from the root, with inlined functions expanded into their
 * own frames (a location's lines are innermost first, so they are walked
 * backwards). Built on demand, because a report draws few trees and a large
 * profile makes them big.
 */
#include "compare/compare_priv.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	tf_diff_tree *t;
	TF_VEC(tf_diff_node) nodes;
	TF_VEC(uint32_t) name_ids; /* per node: id in priv->names, for lookup */
	tf_htab index;             /* (parent, name) -> node */
	const struct tf_compare_priv *pv;
} builder;

struct node_key {
	uint32_t parent, name;
};

static bool node_eq(const void *ctx, uint32_t idx, const void *key)
{
	const builder *b = ctx;
	const struct node_key *k = key;
	return b->nodes.v[idx].parent == k->parent && b->name_ids.v[idx] == k->name;
}

static uint32_t child(builder *b, uint32_t parent, const cmp_func *f)
{
	struct node_key k = { parent, f->name };
	uint64_t h = tf_hash_combine(tf_hash_u64(parent), f->name);
	uint32_t i = tf_htab_find(&b->index, h, node_eq, b, &k);

	if (i != TF_HTAB_NONE)
		return i;
	tf_diff_node n;
	memset(&n, 0, sizeof(n));
	n.name = cmp_name(b->pv, f->name);
	n.file = cmp_name(b->pv, f->file);
	n.line = f->start_line;
	n.parent = parent;
	n.first_child = n.next_sibling = TF_DIFF_NONE;
	n.depth = b->nodes.v[parent].depth + 1;
	i = (uint32_t)b->nodes.n;
	tf_vec_push(&b->nodes, n);
	tf_vec_push(&b->name_ids, f->name);
	tf_htab_insert(&b->index, h, i);
	return i;
}

/*
 * The path of the previous sample, to walk down the next one without
 * hash lookups for as long as it goes the same way: samples of one test
 * share long prefixes (main, the test runner, the test), and the lookup
 * of a big tree's node is a cache miss.
 */
typedef struct {
	TF_VEC(uint32_t) path; /* node at each depth; path.v[0] is the root */
	TF_VEC(uint32_t) keys; /* the name at each depth */
	size_t valid;          /* leading entries that are the previous sample's */
} path_memo;

static uint32_t step(builder *b, path_memo *m, size_t d, const cmp_func *f)
{
	uint32_t node;

	if (d < m->valid && m->keys.v[d] == f->name)
		return m->path.v[d];
	if (m->valid > d)
		m->valid = d;
	node = child(b, m->path.v[d - 1], f);
	while (m->path.n <= d) {
		tf_vec_push(&m->path, 0);
		tf_vec_push(&m->keys, 0);
	}
	m->path.v[d] = node;
	m->keys.v[d] = f->name;
	return node;
}

static int by_string(const void *x, const void *y, void *ctx)
{
	const struct tf_compare_priv *pv = ctx;
	const uint32_t *a = x, *b = y;
	return strcmp(cmp_name(pv, *a), cmp_name(pv, *b));
}

/* Children lists sorted by name, so renderers draw the same picture for
 * the same data whatever the order of the samples. A tree has far fewer
 * distinct names than nodes, so the names are sorted once and the nodes
 * placed by a counting sort on their name's rank (stable: ties keep node
 * order), which keeps a million-node tree cheap. */
static void link_children(tf_diff_node *nodes, const uint32_t *name_ids, size_t n,
			  const struct tf_compare_priv *pv)
{
	size_t nnames = pv->names.strs.n;
	uint32_t *order = tf_xmalloc((n + 1) * sizeof(uint32_t));
	uint32_t *rank = tf_xcalloc(nnames + 1, sizeof(uint32_t));
	uint32_t *count = tf_xcalloc(nnames + 2, sizeof(uint32_t));
	TF_VEC(uint32_t) used = { 0 };

	for (size_t i = 1; i < n; i++)
		if (!count[name_ids[i]]++)
			tf_vec_push(&used, name_ids[i]);
	if (used.n)
		qsort_r(used.v, used.n, sizeof(uint32_t), by_string, (void *)pv);
	/* rank -> first slot in `order` */
	size_t at = 1;
	for (size_t r = 0; r < used.n; r++) {
		uint32_t id = used.v[r], c = count[id];
		rank[id] = (uint32_t)at;
		at += c;
	}
	order[0] = 0;
	for (size_t i = 1; i < n; i++)
		order[rank[name_ids[i]]++] = (uint32_t)i;
	free(rank);
	free(count);
	tf_vec_free(&used);
	/* walking the sorted order backwards and pushing to the front of each
	 * parent's list leaves every list in name order */
	for (size_t k = n; k-- > 1;) {
		uint32_t i = order[k];
		tf_diff_node *p = &nodes[nodes[i].parent];
		nodes[i].next_sibling = p->first_child;
		p->first_child = i;
	}
	free(order);
}

int tf_comparison_diff_tree(tf_diff_tree **out, const tf_comparison *c, size_t test)
{
	struct tf_compare_priv *pv = c->priv;
	builder b;
	uint32_t want = NO_ID;
	tf_diff_node root;
	path_memo m;

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
	tf_vec_push(&b.name_ids, NO_ID);
	memset(&m, 0, sizeof(m));
	tf_vec_push(&m.path, 0);
	tf_vec_push(&m.keys, NO_ID);
	/* only the tests in the comparison (see --test) make up "all" */
	bool *in = tf_xcalloc(pv->ninternal + 1, sizeof(bool));
	for (size_t i = 0; i < c->ntests; i++)
		in[pv->test_id[i]] = true;

	for (size_t r = 0; r < pv->nruns; r++) {
		const cmp_run *run = &pv->runs[r];
		const tf_profile *p = run->p;
		double scale = 1.0 / (double)(run->head ? pv->nhead : pv->nbase);
		int side = run->head;

		for (size_t i = 0; i < p->samples.n; i++) {
			if (want != NO_ID ? run->sample_test[i] != want : !in[run->sample_test[i]])
				continue;
			const tf_sample *s = &p->samples.v[i];
			double v = cmp_sample_value(run, i) * scale;
			if (v == 0)
				continue;
			uint32_t node = 0;
			size_t d = 1;
			if (each) {
				/* a test's node is keyed like a frame; no frame lives at depth 1 */
				cmp_func tf = { pv->test_name[run->sample_test[i]], 0, 0, 0, false };
				node = step(&b, &m, d++, &tf);
			}
			for (uint32_t k = s->nlocs; k-- > 0;) {
				uint32_t li = p->stack.v[s->locs_off + k];
				const tf_location *l = &p->locations.v[li];
				if (!l->nlines) {
					node = step(&b, &m, d++, &pv->funcs.v[run->loc_key[li]]);
					continue;
				}
				for (uint32_t j = l->nlines; j-- > 0;) {
					uint32_t f = run->fn_key[p->lines.v[l->lines_off + j].function];
					node = step(&b, &m, d++, &pv->funcs.v[f]);
				}
			}
			m.valid = d;
			for (size_t k = 0; k < d; k++) {
				if (side)
					b.nodes.v[m.path.v[k]].head_total += v;
				else
					b.nodes.v[m.path.v[k]].base_total += v;
			}
			if (side)
				b.nodes.v[node].head_self += v;
			else
				b.nodes.v[node].base_self += v;
		}
	}
	free(in);
	link_children(b.nodes.v, b.name_ids.v, b.nodes.n, pv);

	tf_diff_tree *t = tf_xcalloc(1, sizeof(*t));
	t->nodes = b.nodes.v;
	t->n = b.nodes.n;
	tf_vec_free(&b.name_ids);
	tf_htab_free(&b.index);
	tf_vec_free(&m.path);
	tf_vec_free(&m.keys);
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
