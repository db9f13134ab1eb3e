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
	n.parent = parent;
	n.first_child = n.next_sibling = TF_DIFF_NONE;
	n.depth = b->nodes.v[parent].depth + 1;
	i = (uint32_t)b->nodes.n;
	tf_vec_push(&b->nodes, n);
	tf_vec_push(&b->name_ids, f->name);
	tf_htab_insert(&b->index, h, i);
	return i;
}

static int by_name(const void *x, const void *y, void *ctx)
{
	const tf_diff_node *nodes = ctx;
	const uint32_t *a = x, *b = y;
	int c = strcmp(nodes[*a].name, nodes[*b].name);
	return c ? c : (*a < *b ? -1 : *a > *b);
}

/* Children lists sorted by name, so renderers draw the same picture for
 * the same data whatever the order of the samples. */
static void link_children(tf_diff_node *nodes, size_t n)
{
	uint32_t *order = tf_xmalloc((n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order + 1, n ? n - 1 : 0, sizeof(uint32_t), by_name, nodes);
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
	TF_VEC(uint32_t) path = { 0 };

	*out = NULL;
	if (test != TF_ALL_TESTS) {
		if (test >= c->ntests)
			return tf_error_set(TF_EINVAL, "no test %zu in the comparison (it has %zu)",
					    test, c->ntests);
		want = pv->test_id[test];
	}
	tf_cmp_prepare_keys(pv);
	memset(&b, 0, sizeof(b));
	b.pv = pv;
	memset(&root, 0, sizeof(root));
	root.name = test == TF_ALL_TESTS ? "all" : c->tests[test].name;
	root.file = "";
	root.parent = root.first_child = root.next_sibling = TF_DIFF_NONE;
	tf_vec_push(&b.nodes, root);
	tf_vec_push(&b.name_ids, NO_ID);
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
			path.n = 0;
			tf_vec_push(&path, 0);
			for (uint32_t k = s->nlocs; k-- > 0;) {
				uint32_t li = p->stack.v[s->locs_off + k];
				const tf_location *l = &p->locations.v[li];
				if (!l->nlines) {
					node = child(&b, node, &pv->funcs.v[run->loc_key[li]]);
					tf_vec_push(&path, node);
					continue;
				}
				for (uint32_t j = l->nlines; j-- > 0;) {
					uint32_t f = run->fn_key[p->lines.v[l->lines_off + j].function];
					node = child(&b, node, &pv->funcs.v[f]);
					tf_vec_push(&path, node);
				}
			}
			for (size_t k = 0; k < path.n; k++) {
				if (side)
					b.nodes.v[path.v[k]].head_total += v;
				else
					b.nodes.v[path.v[k]].base_total += v;
			}
			if (side)
				b.nodes.v[node].head_self += v;
			else
				b.nodes.v[node].base_self += v;
		}
	}
	free(in);
	link_children(b.nodes.v, b.nodes.n);

	tf_diff_tree *t = tf_xcalloc(1, sizeof(*t));
	t->nodes = b.nodes.v;
	t->n = b.nodes.n;
	tf_vec_free(&b.name_ids);
	tf_htab_free(&b.index);
	tf_vec_free(&path);
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
