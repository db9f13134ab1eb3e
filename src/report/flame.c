/*
 * flame.c - the diff tree as the flame-graph writers use it: compare's tree
 * put in preorder (so a subtree is a range of positions, which makes
 * pruning, serialising and summing one linear pass), names interned by
 * content so functions add up by name, the colour rules the SVG and the
 * page share, and the folded-diff writer that reads the same tree.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct name_seen {
	const char *p;
	uint32_t id;
};

/*
 * Whether the nodes are in preorder with each node's children in its
 * sibling list's order. Fills end[i] with the position after node i's
 * subtree on the way: sizes summed into parents from the back (a parent
 * comes before its children). Then each node's list must tile its range:
 * the first child right after it, each next sibling where the subtree
 * before it ends, the last one ending where its parent's range does. The
 * sizes count every child, so a tiling leaves none out.
 */
static bool in_preorder(const tf_diff_tree *t, uint32_t *order, uint32_t *pos, uint32_t *end)
{
	const tf_diff_node *nd = t->nodes;
	size_t n = t->n;

	if (n == 0 || nd[0].parent != TF_DIFF_NONE)
		return n == 0;
	memset(end, 0, n * sizeof(*end));
	for (size_t i = n; i-- > 1;) {
		if (nd[i].parent >= i)
			return false;
		end[nd[i].parent] += ++end[i];
	}
	end[0]++;
	/* sizes to ends, checked against the links; the identity on the way */
	for (size_t i = 0; i < n; i++) {
		uint32_t fc = nd[i].first_child, ns = nd[i].next_sibling;
		end[i] += (uint32_t)i;
		order[i] = pos[i] = (uint32_t)i;
		if (fc == TF_DIFF_NONE ? end[i] != i + 1 : fc != i + 1 || fc >= n || nd[fc].parent != i)
			return false;
		if (i == 0)
			continue;
		if (ns == TF_DIFF_NONE ? end[i] != end[nd[i].parent] :
					 ns != end[i] || ns >= n || nd[ns].parent != nd[i].parent)
			return false;
	}
	return true;
}

/*
 * Preorder, children in compare's (name) order. compare makes its nodes in
 * that order (tree.c), which one sequential pass confirms; following the
 * sibling lists instead costs a cache miss a node, a tenth of a large
 * report. Other trees are walked, children pushed reversed.
 */
void rp_tree_order(const tf_diff_tree *t, uint32_t *order, uint32_t *pos, uint32_t *end)
{
	TF_VEC(uint32_t) stack = { 0 };
	size_t n = t->n, k = 0;

	if (in_preorder(t, order, pos, end))
		return;
	if (n)
		tf_vec_push(&stack, 0);
	while (stack.n) {
		uint32_t node = stack.v[--stack.n];
		order[k] = node;
		pos[node] = (uint32_t)k++;
		size_t mark = stack.n;
		for (uint32_t ch = t->nodes[node].first_child; ch != TF_DIFF_NONE;
		     ch = t->nodes[ch].next_sibling)
			tf_vec_push(&stack, ch);
		for (size_t a = mark, b = stack.n; b > a + 1; a++, b--) {
			uint32_t tmp = stack.v[a];
			stack.v[a] = stack.v[b - 1];
			stack.v[b - 1] = tmp;
		}
	}
	tf_vec_free(&stack);
	/* subtree sizes bottom-up: a child comes after its parent in preorder */
	for (size_t p = 0; p < n; p++)
		end[p] = 1;
	for (size_t p = n; p-- > 1;) {
		uint32_t par = t->nodes[order[p]].parent;
		end[pos[par]] += end[p];
	}
	for (size_t p = 0; p < n; p++)
		end[p] += (uint32_t)p;
}

int rp_tree_build(rp_tree *out, const tf_comparison *c, size_t test)
{
	tf_diff_tree *t;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = tf_comparison_diff_tree(&t, c, test)))
		return rc;
	size_t n = t->n;
	out->t = t;
	out->name_id = tf_xmalloc((n + 1) * sizeof(uint32_t));
	out->order = tf_xmalloc((n + 1) * sizeof(uint32_t));
	out->pos = tf_xmalloc((n + 1) * sizeof(uint32_t));
	out->end = tf_xmalloc((n + 1) * sizeof(uint32_t));
	tf_strtab_init(&out->names);
	/* Nodes of one name share the comparison's copy of it, so the strings
	 * are interned once per distinct pointer (a small table that stays in
	 * the cache), not hashed once per node. */
	size_t pcap = 1024;
	struct name_seen *seen = tf_xcalloc(pcap, sizeof(*seen));
	size_t pcount = 0;
	for (size_t i = 0; i < n; i++) {
		const char *nm = t->nodes[i].name;
		size_t j = tf_hash_u64((uint64_t)(uintptr_t)nm) & (pcap - 1);
		while (seen[j].p && seen[j].p != nm)
			j = (j + 1) & (pcap - 1);
		if (!seen[j].p) {
			seen[j].p = nm;
			seen[j].id = tf_strtab_intern(&out->names, nm, strlen(nm));
			if (++pcount * 2 > pcap) {
				size_t ncap = pcap * 2;
				struct name_seen *ns = tf_xcalloc(ncap, sizeof(*ns));
				for (size_t k = 0; k < pcap; k++) {
					if (!seen[k].p)
						continue;
					size_t q = tf_hash_u64((uint64_t)(uintptr_t)seen[k].p) & (ncap - 1);
					while (ns[q].p)
						q = (q + 1) & (ncap - 1);
					ns[q] = seen[k];
				}
				free(seen);
				seen = ns;
				pcap = ncap;
				j = tf_hash_u64((uint64_t)(uintptr_t)nm) & (pcap - 1);
				while (seen[j].p != nm)
					j = (j + 1) & (pcap - 1);
			}
		}
		out->name_id[i] = seen[j].id;
	}
	free(seen);

	rp_tree_order(t, out->order, out->pos, out->end);

	/* where each test's frames start: its node is a child of the root */
	if (test == TF_EACH_TEST) {
		uint32_t *at = tf_xmalloc((out->names.strs.n + 1) * sizeof(uint32_t));
		for (size_t i = 0; i <= out->names.strs.n; i++)
			at[i] = TF_DIFF_NONE;
		for (uint32_t ch = n ? t->nodes[0].first_child : TF_DIFF_NONE; ch != TF_DIFF_NONE;
		     ch = t->nodes[ch].next_sibling)
			at[out->name_id[ch]] = out->pos[ch];
		out->test_pos = tf_xmalloc((c->ntests + 1) * sizeof(uint32_t));
		for (size_t i = 0; i < c->ntests; i++) {
			const char *nm = c->tests[i].name;
			uint32_t id = tf_strtab_lookup(&out->names, nm, strlen(nm));
			out->test_pos[i] = id == TF_HTAB_NONE ? TF_DIFF_NONE : at[id];
		}
		free(at);
	}
	return 0;
}

void rp_tree_free(rp_tree *t)
{
	if (!t)
		return;
	tf_diff_tree_free(t->t);
	free(t->name_id);
	free(t->order);
	free(t->pos);
	free(t->end);
	free(t->test_pos);
	tf_strtab_free(&t->names);
	memset(t, 0, sizeof(*t));
}


/* ---- colours (report.js: diffColour, nameColour) ----------------------- */

static void mix(char out[8], const int from[3], const int to[3], double t)
{
	int c[3];
	for (int i = 0; i < 3; i++)
		c[i] = (int)lround(from[i] + (to[i] - from[i]) * t);
	snprintf(out, 8, "#%02x%02x%02x", c[0], c[1], c[2]);
}

void rp_diff_colour(char out[8], double base, double head, double threshold_pct, bool cb)
{
	static const int neutral[3] = { 224, 224, 224 };
	static const int red[3] = { 236, 64, 52 }, blue[3] = { 64, 120, 228 };
	static const int orange[3] = { 240, 128, 16 }, cbblue[3] = { 40, 104, 200 };
	double m = fmax(base, head);

	if (m <= 0 || (base > 0 && fabs(head - base) / base * 100 < threshold_pct)) {
		mix(out, neutral, neutral, 0);
		return;
	}
	double r = (head - base) / m;
	double t = fmin(1, 0.25 + 0.75 * sqrt(fabs(r) / 0.5));
	if (r > 0)
		mix(out, neutral, cb ? orange : red, t);
	else
		mix(out, neutral, cb ? cbblue : blue, t);
}

/* FNV-1a over the name: the same name gets the same colour everywhere. */
void rp_name_colour(char out[8], const char *name)
{
	uint32_t h = 2166136261u;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	double v1 = (h & 0xff) / 255.0, v2 = ((h >> 8) & 0xff) / 255.0,
	       v3 = ((h >> 16) & 0xff) / 255.0;
	snprintf(out, 8, "#%02x%02x%02x", 205 + (int)(50 * v3), (int)(230 * v1),
		 (int)(55 * v2));
}

/* ---- folded diff ------------------------------------------------------- */

/* A frame keeps the line format: ';' separates frames, a line is a stack. */
static void put_folded_frame(tf_buf *b, const char *name)
{
	char *c = rp_clean(*name ? name : "??", 0);
	for (char *p = c; *p; p++)
		tf_buf_putc(b, *p == ';' ? ':' : *p);
	free(c);
}

void rp_put_whole(tf_buf *b, double v)
{
	if (v == 0 && signbit(v))
		tf_buf_puts(b, "-0");
	else
		tf_buf_put_int(b, (int64_t)v);
}

static void put_value(tf_buf *b, double v)
{
	if (v == floor(v) && fabs(v) < 1e15)
		rp_put_whole(b, v);
	else
		tf_buf_printf(b, "%.3f", v);
}

int rp_folded_render(tf_buf *out, const rp_tree *t, uint32_t root_pos, bool skip_root)
{
	TF_VEC(size_t) at = { 0 }; /* path length at each depth below the root */
	tf_buf path = TF_BUF_INIT, frames = TF_BUF_INIT;

	if (!t->t->n)
		return 0;
	/* each name written as a frame once, where its nodes find it: a
	 * frame a node cleaned anew was 8% of a big report's instructions */
	size_t nnames = t->names.strs.n;
	size_t *frame_at = tf_xcalloc(nnames + 1, sizeof(size_t)); /* offset + 1 */
	uint32_t *frame_len = tf_xmalloc((nnames + 1) * sizeof(uint32_t));
	uint32_t root_depth = t->t->nodes[t->order[root_pos]].depth;
	for (uint32_t p = root_pos; p < t->end[root_pos]; p++) {
		uint32_t node = t->order[p];
		const tf_diff_node *nd = &t->t->nodes[node];
		size_t d = nd->depth - root_depth;
		if (skip_root && d == 0)
			continue;
		size_t level = skip_root ? d - 1 : d;
		while (at.n > level)
			at.n--;
		path.len = at.n ? at.v[at.n - 1] : 0;
		if (path.len)
			tf_buf_putc(&path, ';');
		uint32_t id = t->name_id[node];
		if (!frame_at[id]) {
			frame_at[id] = frames.len + 1;
			put_folded_frame(&frames, nd->name);
			frame_len[id] = (uint32_t)(frames.len + 1 - frame_at[id]);
		}
		tf_buf_put(&path, frames.ptr + frame_at[id] - 1, frame_len[id]);
		tf_vec_push(&at, path.len);
		if (nd->base_self == 0 && nd->head_self == 0)
			continue;
		tf_buf_put(out, path.ptr, path.len);
		tf_buf_putc(out, ' ');
		put_value(out, nd->base_self);
		tf_buf_putc(out, ' ');
		put_value(out, nd->head_self);
		tf_buf_putc(out, '\n');
	}
	tf_vec_free(&at);
	tf_buf_free(&path);
	tf_buf_free(&frames);
	free(frame_at);
	free(frame_len);
	return 0;
}

int tf_report_folded_diff(tf_buf *out, const tf_comparison *c, size_t test)
{
	rp_tree t;
	int rc = rp_tree_build(&t, c, test);
	if (rc)
		return rc;
	/* the root is the test (or "all"); stacks start below it, except that
	 * every test's stacks start with the test's own frame */
	rc = rp_folded_render(out, &t, 0, true);
	rp_tree_free(&t);
	return rc;
}
