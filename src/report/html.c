/*
 * html.c - index.html: one self-contained page (no network: the
 * Content-Security-Policy allows nothing but the page's own script and
 * style, by hash) holding the comparison as JSON plus a small script that
 * draws it (assets/report.js). This file prepares the data: every test's
 * diff tree in one preorder array, pruned so that a profile of a million
 * samples still makes a page of a few megabytes (frames too small to see
 * merge into "(other)" frames, and the page says so), and per test the
 * functions' self and total costs computed from the full tree, so the
 * function table stays exact whatever was pruned.
 *
 * Strings are emitted once in a table and referenced by index; every
 * string goes through rp_put_json_html(), which makes "</script>" and
 * friends impossible inside the data block.
 */
#include "report/report_int.h"
#include "testflame/attribute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_NAME_MAX 1000 /* code points of a name kept in the page */

/* The page's one string table, which every tree of it shares. */
typedef struct {
	tf_strtab strs;                 /* output string table (raw strings) */
	TF_VEC(uint32_t) file;          /* per output string: its file's string id (functions) */
	TF_VEC(int64_t) line;           /* per output string: the function's first line */
} out_strings;

typedef struct {
	rp_ctx *x;
	const tf_comparison *c;         /* the tree's comparison (x->c, or its waits) */
	const rp_tree *t;
	out_strings *os;
	uint32_t *sid_of;               /* forest name id -> output id + 1 */
} page;

static void put_num(tf_buf *b, double v)
{
	if (!isfinite(v))
		tf_buf_puts(b, "null");
	else if (v == floor(v) && fabs(v) < 1e15)
		rp_put_whole(b, v);
	else
		tf_buf_printf(b, "%.7g", v);
}

/* Exact, for numbers the page shows next to report.json's. */
static void put_exact(tf_buf *b, double v)
{
	if (!isfinite(v))
		tf_buf_puts(b, "null");
	else
		tf_buf_printf(b, "%.17g", v);
}

static uint32_t str_id(page *pg, const char *s)
{
	size_t n = pg->os->strs.strs.n;
	uint32_t id = tf_strtab_intern(&pg->os->strs, s, strlen(s));
	if (pg->os->strs.strs.n != n || id >= pg->os->file.n) {
		while (pg->os->file.n <= id) {
			tf_vec_push(&pg->os->file, 0);
			tf_vec_push(&pg->os->line, 0);
		}
	}
	return id;
}

/* The output id of a tree node's name; functions also get file and line. */
static uint32_t node_sid(page *pg, uint32_t node)
{
	uint32_t fid = pg->t->name_id[node];
	if (pg->sid_of[fid])
		return pg->sid_of[fid] - 1;
	const tf_diff_node *nd = &pg->t->t->nodes[node];
	uint32_t id = str_id(pg, nd->name);
	pg->sid_of[fid] = id + 1;
	if (nd->depth >= 2 && *nd->file && !pg->os->file.v[id]) {
		uint32_t f = str_id(pg, nd->file);
		pg->os->file.v[id] = f;
		pg->os->line.v[id] = nd->line;
	}
	return id;
}

/* ---- pruning ------------------------------------------------------------ */

static double node_value(const tf_diff_node *n)
{
	return fmax(n->base_total, n->head_total);
}

/*
 * Which positions to keep: the root and the tests always; below them the
 * frames of at least `min_share` of their test, and no more frames than the
 * budget allows (the bar rises until the kept frames plus one "(other)" per
 * parent that lost children fit). Changed tests are what a reader opens,
 * so their frames count CHANGED_DETAIL times their share: they keep that
 * much finer detail. A child is never bigger than its parent, so what is
 * kept is always a connected tree.
 */
#define CHANGED_DETAIL 10.0

static size_t choose(uint8_t *keep, const rp_ctx *x, const tf_comparison *c, const rp_tree *t,
		     size_t *nother, double *bar)
{
	size_t n = t->t->n, kept = 0, others = 0;
	double *share = tf_xmalloc((n + 1) * sizeof(double));
	/* per position, its parent's, or TF_DIFF_NONE for the root and the
	 * tests, always kept: the rounds below then read 12 bytes a node,
	 * not the node's 72 */
	uint32_t *up = tf_xmalloc((n + 1) * sizeof(uint32_t));
	double testv = 0, boost = 1, thr = x->o.html_min_share;
	uint8_t *changed = tf_xcalloc(n + 1, 1);

	for (size_t i = 0; i < c->ntests; i++)
		if (t->test_pos[i] != TF_DIFF_NONE && rp_changed(&c->tests[i]))
			changed[t->test_pos[i]] = 1;
	for (size_t p = 0; p < n; p++) {
		const tf_diff_node *nd = &t->t->nodes[t->order[p]];
		if (nd->depth <= 1) {
			share[p] = INFINITY;
			up[p] = TF_DIFF_NONE;
			if (nd->depth == 1) {
				testv = node_value(nd);
				boost = changed[p] ? CHANGED_DETAIL : 1;
			}
		} else {
			share[p] = testv > 0 ? node_value(nd) / testv * boost : 0;
			up[p] = t->pos[nd->parent];
		}
	}
	for (int round = 0; round < 40; round++) {
		kept = others = 0;
		for (size_t p = 0; p < n; p++) {
			keep[p] = up[p] == TF_DIFF_NONE ||
				  (share[p] >= thr && share[p] > 0 && keep[up[p]]);
			kept += keep[p];
		}
		for (size_t p = 0; p < n; p++) {
			if (!keep[p])
				continue;
			for (uint32_t ch = p + 1; ch < t->end[p]; ch = t->end[ch])
				if (!keep[ch]) {
					others++;
					break;
				}
		}
		if (kept + others <= x->o.html_max_nodes || thr >= CHANGED_DETAIL)
			break;
		/* raise the bar by the overshoot, at least by a quarter */
		thr *= fmax(1.25, (double)(kept + others) / (double)x->o.html_max_nodes);
	}
	free(share);
	free(up);
	free(changed);
	*nother = others;
	*bar = thr;
	return kept;
}

/* ---- per-test function table ------------------------------------------- */

typedef struct {
	uint32_t fid;  /* forest name id */
	uint32_t node; /* the first node of that name: its file and line */
	double bs, hs, bt, ht;
	int64_t line;
} fstat;

static int by_size(const void *a, const void *b)
{
	const fstat *x = a, *y = b;
	double vx = fmax(x->bt, x->ht), vy = fmax(y->bt, y->ht);
	if (vx != vy)
		return vx < vy ? 1 : -1;
	return x->fid < y->fid ? -1 : x->fid > y->fid;
}

/*
 * Self and total per function name over the subtree at `root`: total once
 * per stack (a function that recurses is not counted twice), test frames
 * (depth 1) are not functions. `acc`/`stamp`/`active` are scratch arrays of
 * the forest's name count, reused across calls.
 */
static size_t function_stats(fstat **out, const rp_tree *t, uint32_t root, uint32_t *slot,
			     uint32_t *stamp, uint32_t *active, uint32_t round)
{
	TF_VEC(fstat) st = { 0 };
	/* the names of the open frames, by depth: a frame at depth d has its
	 * ancestors at depths 2 to d - 1 open (preorder), so entry i is at
	 * depth i + 2 and a frame closes what is as deep as it or deeper */
	TF_VEC(uint32_t) open = { 0 };

	for (uint32_t p = root; p < t->end[root]; p++) {
		uint32_t node = t->order[p];
		const tf_diff_node *nd = &t->t->nodes[node];
		size_t above = nd->depth >= 2 ? nd->depth - 2 : 0;
		while (open.n > above)
			active[open.v[--open.n]]--;
		if (nd->depth <= 1)
			continue;
		uint32_t f = t->name_id[node];
		if (stamp[f] != round) {
			stamp[f] = round;
			slot[f] = (uint32_t)st.n;
			fstat z = { f, node, 0, 0, 0, 0, nd->line };
			tf_vec_push(&st, z);
		}
		fstat *s = &st.v[slot[f]];
		s->bs += nd->base_self;
		s->hs += nd->head_self;
		if (!active[f]) {
			s->bt += nd->base_total;
			s->ht += nd->head_total;
		}
		active[f]++;
		tf_vec_push(&open, f);
	}
	while (open.n)
		active[open.v[--open.n]]--;
	tf_vec_free(&open);
	qsort(st.v, st.n, sizeof(fstat), by_size);
	*out = st.v;
	return st.n;
}

/*
 * Rows of a test's function table in the page: all of html_max_functions
 * for a changed test (and for all tests together); the unchanged ones share
 * FX_BUDGET rows, so a suite of thousands of tests keeps a page of a few
 * megabytes (10,000 tests: 3.5 MB), each test still showing its FX_MIN
 * biggest functions.
 */
#define FX_BUDGET 25000
#define FX_MIN 3

static size_t function_rows(const rp_ctx *x, const tf_test_delta *td)
{
	size_t max = x->o.html_max_functions;
	if (!td || rp_changed(td) || !x->c->ntests)
		return max;
	return TF_MIN(max, TF_MAX((size_t)FX_MIN, FX_BUDGET / x->c->ntests));
}

static void put_functions(tf_buf *b, page *pg, uint32_t root, const tf_test_delta *td,
			  uint32_t *scratch[3], uint32_t round)
{
	fstat *fs;
	size_t n = function_stats(&fs, pg->t, root, scratch[0], scratch[1], scratch[2], round);
	size_t k = TF_MIN(n, function_rows(pg->x, td));

	tf_buf_putc(b, '[');
	for (size_t i = 0; i < k; i++) {
		uint32_t node_name = fs[i].fid;
		const char *name = pg->t->names.strs.v[node_name];
		int64_t line = fs[i].line;
		/* compare found the line that moved most: better than the first */
		for (size_t j = 0; td && j < td->nfunctions; j++)
			if (strcmp(td->functions[j].name, name) == 0 && td->functions[j].line > 0) {
				line = td->functions[j].line;
				break;
			}
		uint32_t sid = node_sid(pg, fs[i].node);
		tf_buf_puts(b, i ? ",[" : "[");
		tf_buf_put_int(b, sid);
		tf_buf_putc(b, ',');
		put_num(b, fs[i].bs);
		tf_buf_putc(b, ',');
		put_num(b, fs[i].hs);
		tf_buf_putc(b, ',');
		put_num(b, fs[i].bt);
		tf_buf_putc(b, ',');
		put_num(b, fs[i].ht);
		tf_buf_putc(b, ',');
		tf_buf_put_int(b, line);
		tf_buf_putc(b, ']');
	}
	tf_buf_printf(b, "],\"fxn\":%zu", n);
	free(fs);
}

/* ---- the data block ----------------------------------------------------- */

/* How an unchanged test's reason begins when the page can word it itself
 * (stats.c's; report.js writes it from lo and hi). */
#define UNCHANGED_WHY "no significant change (95% CI "


/* The program an unresolved frame is in: its mapping's file (a location
 * without lines), or the "program+0xOFFSET" name the symbolizer gives a
 * frame it could not name; NULL for a resolved frame. Into `out`. */
static const char *unresolved_program(tf_buf *out, const tf_profile *p, const tf_location *l)
{
	tf_buf_clear(out);
	if (!l->nlines) {
		if (l->mapping == TF_NO_MAPPING || l->mapping >= p->mappings.n)
			return NULL;
		tf_buf_puts(out, tf_profile_str(p, p->mappings.v[l->mapping].filename));
	} else {
		const tf_function *f = &p->functions.v[p->lines.v[l->lines_off].function];
		const char *name = tf_profile_str(p, f->name), *plus = strstr(name, "+0x");
		if (*tf_profile_str(p, f->filename) || !plus || plus == name)
			return NULL;
		tf_buf_put(out, name, (size_t)(plus - name));
	}
	const char *base = strrchr(out->ptr, '/');
	return base && base[1] ? base + 1 : out->ptr;
}

/* The programs whose frames have no symbol in the tests' samples, most
 * first (at most 3), as [["name", frames], ...]: what the page's note
 * names with the fix (the harness's own, outside every test, no rebuild
 * of the tests would change). */
static void put_unresolved_in(tf_buf *b, const tf_profile *p)
{
	tf_strtab names;
	TF_VEC(uint64_t) n = { 0 };
	tf_buf prog = TF_BUF_INIT;

	/* frames as the run file counts them: once per sample drawn */
	size_t col = SIZE_MAX;
	for (size_t i = 0; i < p->sample_types.n && col == SIZE_MAX; i++)
		if (strcmp(tf_profile_str(p, p->sample_types.v[i].type), "samples") == 0)
			col = i;
	tf_strtab_init(&names);
	/* each location's program once (UINT32_MAX: resolved), not per frame */
	uint32_t *prog_of = tf_xmalloc((p->locations.n ? p->locations.n : 1) * sizeof(*prog_of));
	for (size_t i = 0; i < p->locations.n; i++) {
		const char *name = unresolved_program(&prog, p, &p->locations.v[i]);
		prog_of[i] = name ? tf_strtab_intern(&names, name, strlen(name)) : UINT32_MAX;
	}
	tf_vec_reserve(&n, names.strs.n + 1);
	memset(n.v, 0, names.strs.n * sizeof(*n.v));
	n.n = names.strs.n;
	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *sm = &p->samples.v[i];
		const char *test = tf_sample_label_str(p, sm, "test");
		if (test && (strcmp(test, TF_OUTSIDE_TEST) == 0 || strcmp(test, TF_BUILD_TEST) == 0))
			continue;
		uint64_t w = col == SIZE_MAX ? 1
			     : (uint64_t)TF_MAX(p->values.v[i * p->sample_types.n + col], (int64_t)0);
		for (uint32_t k = 0; k < sm->nlocs; k++) {
			uint32_t id = prog_of[p->stack.v[sm->locs_off + k]];
			if (id != UINT32_MAX)
				n.v[id] += w;
		}
	}
	free(prog_of);
	tf_buf_putc(b, '[');
	for (int shown = 0; shown < 3; shown++) {
		size_t best = SIZE_MAX;
		for (size_t m = 0; m < n.n; m++)
			if (n.v[m] && (best == SIZE_MAX || n.v[m] > n.v[best]))
				best = m;
		if (best == SIZE_MAX)
			break;
		tf_buf_puts(b, shown ? ",[" : "[");
		rp_put_json_html(b, names.strs.v[best], 120);
		tf_buf_printf(b, ",%llu]", (unsigned long long)n.v[best]);
		n.v[best] = 0;
	}
	tf_buf_putc(b, ']');
	tf_buf_free(&prog);
	tf_vec_free(&n);
	tf_strtab_free(&names);
}

static void put_meta_side(tf_buf *b, const tf_comparison *c, bool head)
{
	static const char *const keys[] = {
		"commit", "branch", "pr", "event", "sampler", "unwinder", "lost", "throttled",
		"unresolved", "truncated", "command",
	};
	const tf_compare_side *s = head ? &c->head : &c->base;
	bool first = true;

	tf_buf_printf(b, "{\"runs\":%zu,\"files\":[", s->n);
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			tf_buf_putc(b, ',');
		rp_put_json_html(b, s->names[i], 300);
	}
	tf_buf_puts(b, "],\"unresolved_in\":");
	put_unresolved_in(b, s->profiles[0]);
	tf_buf_puts(b, ",\"meta\":{");
	for (size_t i = 0; i < TF_ARRAY_SIZE(keys); i++) {
		const char *v = tf_comparison_meta(c, head, keys[i]);
		if (!v)
			continue;
		tf_buf_printf(b, "%s\"%s\":", first ? "" : ",", keys[i]);
		rp_put_json_html(b, v, 300);
		first = false;
	}
	tf_buf_puts(b, "}}");
}

static void put_tree(tf_buf *b, page *pg, const uint8_t *keep, size_t *pos_out)
{
	const rp_tree *t = pg->t;
	size_t n = t->t->n, emitted = 0;
	tf_buf d = TF_BUF_INIT, nm = TF_BUF_INIT, vb = TF_BUF_INIT, vh = TF_BUF_INIT,
	       ot = TF_BUF_INIT, oc = TF_BUF_INIT;
	/* an explicit stack of open kept nodes: (position, merged base, merged
	 * head, merged count) so "(other)" lands after its siblings */
	typedef struct { uint32_t p; double ob, oh; size_t cnt; } open_node;
	TF_VEC(open_node) open = { 0 };
	uint32_t other_sid = str_id(pg, "(other)");

#define EMIT_NODE(depth, sid, bv, hv) \
	do { \
		const char *sep = emitted ? "," : ""; \
		tf_buf_puts(&d, sep); \
		tf_buf_put_int(&d, (depth)); \
		tf_buf_puts(&nm, sep); \
		tf_buf_put_int(&nm, (sid)); \
		tf_buf_puts(&vb, sep); \
		put_num(&vb, (bv)); \
		tf_buf_puts(&vh, sep); \
		put_num(&vh, (hv)); \
		emitted++; \
	} while (0)

	for (size_t p = 0; p <= n;) {
		/* close the nodes whose subtree ends here */
		while (open.n && (p == n || t->end[open.v[open.n - 1].p] <= p)) {
			open_node *o = &open.v[--open.n];
			if (o->cnt) {
				tf_buf_printf(&ot, "%s%zu", ot.len ? "," : "", emitted);
				tf_buf_printf(&oc, "%s%zu", oc.len ? "," : "", o->cnt);
				EMIT_NODE(t->t->nodes[t->order[o->p]].depth + 1, other_sid, o->ob, o->oh);
			}
		}
		if (p == n)
			break;
		const tf_diff_node *nd = &t->t->nodes[t->order[p]];
		if (!keep[p]) {
			open_node *o = &open.v[open.n - 1];
			o->ob += nd->base_total;
			o->oh += nd->head_total;
			o->cnt += t->end[p] - p;
			p = t->end[p];
			continue;
		}
		pos_out[p] = emitted;
		EMIT_NODE(nd->depth, node_sid(pg, t->order[p]), nd->base_total, nd->head_total);
		open_node on = { (uint32_t)p, 0, 0, 0 };
		tf_vec_push(&open, on);
		p++;
	}
#undef EMIT_NODE
	tf_buf_puts(b, "{\"d\":[");
	tf_buf_put(b, d.ptr, d.len);
	tf_buf_puts(b, "],\"n\":[");
	tf_buf_put(b, nm.ptr, nm.len);
	if (!pg->x->single) {
		tf_buf_puts(b, "],\"b\":[");
		tf_buf_put(b, vb.ptr, vb.len);
	}
	tf_buf_puts(b, "],\"h\":[");
	tf_buf_put(b, vh.ptr, vh.len);
	tf_buf_puts(b, "],\"o\":[");
	tf_buf_put(b, ot.ptr, ot.len);
	tf_buf_puts(b, "],\"oc\":[");
	tf_buf_put(b, oc.ptr, oc.len);
	tf_buf_puts(b, "]}");
	tf_buf_free(&d);
	tf_buf_free(&nm);
	tf_buf_free(&vb);
	tf_buf_free(&vh);
	tf_buf_free(&ot);
	tf_buf_free(&oc);
	tf_vec_free(&open);
}

/*
 * The waits (gate.measure both): the comparison of waits' own forest,
 * pruned like the CPU's, in the page's string table, and per test whose
 * waits are shown its node there, its waits and where they grew, which
 * the page draws as its off-CPU diff flame graph.
 */
typedef struct {
	page pg;
	rp_tree forest;
	bool have;
	size_t *pos;
	tf_buf tree;
} waits_page;

static void waits_begin(waits_page *w, rp_ctx *x, out_strings *os)
{
	const tf_comparison *wc = x->c->waits;
	bool any = false;

	memset(w, 0, sizeof(*w));
	for (size_t i = 0; wc && i < x->c->ntests && !any; i++)
		any = rp_waits_shown(&x->c->tests[i]);
	if (!any || rp_tree_build(&w->forest, wc, TF_EACH_TEST) != 0) {
		tf_error_clear();
		return;
	}
	size_t n = w->forest.t->n, nother;
	double bar;
	uint8_t *keep = tf_xcalloc(n + 1, 1);
	w->have = true;
	w->pos = tf_xmalloc((n + 1) * sizeof(size_t));
	w->pg.x = x;
	w->pg.c = wc;
	w->pg.t = &w->forest;
	w->pg.os = os;
	w->pg.sid_of = tf_xcalloc(w->forest.names.strs.n + 1, sizeof(uint32_t));
	choose(keep, x, wc, &w->forest, &nother, &bar);
	put_tree(&w->tree, &w->pg, keep, w->pos);
	free(keep);
}

static void put_test_waits(tf_buf *b, waits_page *w, const tf_test_delta *td)
{
	size_t k = w->have ? rp_wait_index(w->pg.x->c, td) : SIZE_MAX;
	if (k == SIZE_MAX || !rp_waits_shown(td) || w->forest.test_pos[k] == TF_DIFF_NONE)
		return;
	const tf_test_delta *wt = td->wait;
	tf_buf_printf(b, ",\"w\":{\"node\":%zu,\"v\":%d,\"grew\":%u,\"b\":",
		      w->pos[w->forest.test_pos[k]], (int)wt->verdict, td->grew);
	put_exact(b, wt->base.cost);
	tf_buf_puts(b, ",\"h\":");
	put_exact(b, wt->head.cost);
	tf_buf_puts(b, ",\"cpu\":");
	put_exact(b, td->cpu.delta_pct);
	tf_buf_puts(b, ",\"sites\":[");
	for (size_t i = 0; i < wt->nfunctions; i++) {
		const tf_func_delta *f = &wt->functions[i];
		tf_buf_printf(b, "%s[%u,%d,%u,%lld,%u,", i ? "," : "", str_id(&w->pg, f->name),
			      f->caller ? (int)str_id(&w->pg, f->caller) : -1,
			      str_id(&w->pg, f->file), (long long)f->line,
			      str_id(&w->pg, f->reason ? f->reason : ""));
		put_num(b, f->base_self);
		tf_buf_putc(b, ',');
		put_num(b, f->head_self);
		tf_buf_putc(b, ']');
	}
	tf_buf_puts(b, "]}");
}

static void waits_end(waits_page *w)
{
	if (!w->have)
		return;
	free(w->pos);
	free(w->pg.sid_of);
	tf_buf_free(&w->tree);
	rp_tree_free(&w->forest);
}

static void put_data(tf_buf *out, rp_ctx *x, const rp_tree *t)
{
	const tf_comparison *c = x->c;
	const tf_compare_summary *s = &c->summary;
	size_t n = t->t->n, nother = 0, nnames = t->names.strs.n;
	page pg;
	tf_buf tree = TF_BUF_INIT, tests = TF_BUF_INIT, allfx = TF_BUF_INIT;
	uint8_t *keep = tf_xcalloc(n + 1, 1);
	size_t *pos = tf_xmalloc((n + 1) * sizeof(size_t));
	uint32_t *scratch[3];
	double bar;

	out_strings os;
	memset(&os, 0, sizeof(os));
	memset(&pg, 0, sizeof(pg));
	pg.x = x;
	pg.c = c;
	pg.t = t;
	pg.os = &os;
	tf_strtab_init(&os.strs);
	tf_vec_push(&os.file, 0);
	tf_vec_push(&os.line, 0);
	pg.sid_of = tf_xcalloc(nnames + 1, sizeof(uint32_t));
	for (int i = 0; i < 3; i++)
		scratch[i] = tf_xcalloc(nnames + 1, sizeof(uint32_t));

	size_t kept = choose(keep, x, c, t, &nother, &bar);
	put_tree(&tree, &pg, keep, pos);
	waits_page wp;
	waits_begin(&wp, x, &os);

	uint32_t round = 1;
	for (size_t i = 0; i < c->ntests; i++) {
		const tf_test_delta *td = &c->tests[i];
		uint32_t p = t->test_pos[i];
		tf_buf_printf(&tests, "%s{\"n\":%u,\"v\":%d,\"a\":%d,\"b\":", i ? "," : "",
			      str_id(&pg, td->name), (int)td->verdict, (int)td->attention);
		/* a verdict of its waits: the time it waited ("wl") */
		put_exact(&tests, td->waits_lead ? td->wait->base.cost : td->base.cost);
		tf_buf_puts(&tests, ",\"h\":");
		put_exact(&tests, td->waits_lead ? td->wait->head.cost : td->head.cost);
		if (td->outside && !c->summary.gate_outside)
			tf_buf_puts(&tests, ",\"ng\":1"); /* shown, not gated */
		if (td->waits_lead) {
			/* and its CPU, for its function table */
			tf_buf_puts(&tests, ",\"wl\":1,\"cb\":");
			put_exact(&tests, td->base.cost);
			tf_buf_puts(&tests, ",\"ch\":");
			put_exact(&tests, td->head.cost);
		}
		tf_buf_puts(&tests, ",\"d\":");
		put_exact(&tests, td->delta_pct);
		tf_buf_puts(&tests, ",\"lo\":");
		put_exact(&tests, td->ci_low_pct);
		tf_buf_puts(&tests, ",\"hi\":");
		put_exact(&tests, td->ci_high_pct);
		tf_buf_puts(&tests, ",\"p\":");
		put_exact(&tests, td->p_adjusted);
		tf_buf_printf(&tests, ",\"bs\":%lld,\"hs\":%lld,\"why\":", (long long)td->base.samples,
			      (long long)td->head.samples);
		/* the usual reason of an unchanged test, the page words it from
		 * lo and hi: 70 bytes a test in a suite of thousands */
		if (td->verdict == TF_VERDICT_UNCHANGED && td->reason &&
		    strncmp(td->reason, UNCHANGED_WHY, strlen(UNCHANGED_WHY)) == 0)
			tf_buf_puts(&tests, "null");
		else
			rp_put_json_html(&tests, td->reason, 500);
		put_test_waits(&tests, &wp, td);
		if (p == TF_DIFF_NONE) {
			tf_buf_puts(&tests, ",\"node\":-1,\"fx\":[],\"fxn\":0}");
			continue;
		}
		tf_buf_printf(&tests, ",\"node\":%zu,\"fx\":", pos[p]);
		put_functions(&tests, &pg, p, td, scratch, round++);
		tf_buf_putc(&tests, '}');
	}
	if (n)
		put_functions(&allfx, &pg, 0, NULL, scratch, round++);
	else
		tf_buf_puts(&allfx, "[],\"fxn\":0");

	tf_buf_printf(out, "{\"v\":1,\"mode\":\"%s\",\"title\":", x->single ? "single" : "diff");
	rp_put_json_html(out, x->title, 300);
	tf_buf_puts(out, ",\"suite\":");
	rp_put_json_html(out, x->suite, 300);
	tf_buf_puts(out, ",\"event\":");
	rp_put_json_html(out, s->event, 100);
	tf_buf_puts(out, ",\"value_type\":");
	rp_put_json_html(out, s->value_type, 100);
	tf_buf_puts(out, ",\"unit\":");
	rp_put_json_html(out, s->unit, 100);
	tf_buf_printf(out, ",\"threshold\":%g,\"colorblind\":%s,\"version\":\"%s\"", s->threshold,
		      x->o.colorblind ? "true" : "false", TF_VERSION);
	tf_buf_printf(out, ",\"counts\":[");
	for (int v = 0; v < TF_VERDICT_COUNT; v++)
		tf_buf_printf(out, "%s%zu", v ? "," : "", s->count[v]);
	tf_buf_puts(out, "],\"total\":{\"b\":");
	put_exact(out, s->base_cost);
	tf_buf_puts(out, ",\"h\":");
	put_exact(out, s->head_cost);
	tf_buf_printf(out, ",\"bs\":%lld,\"hs\":%lld}", (long long)s->base_samples,
		      (long long)s->head_samples);
	tf_buf_puts(out, ",\"base\":");
	put_meta_side(out, c, false);
	tf_buf_puts(out, ",\"head\":");
	put_meta_side(out, c, true);
	tf_buf_puts(out, ",\"notes\":[");
	{
		tf_comparison_note notes[64];
		size_t n = tf_comparison_notes(c, notes, TF_ARRAY_SIZE(notes));
		for (size_t i = 0; i < n && i < TF_ARRAY_SIZE(notes); i++) {
			tf_buf_printf(out, "%s[\"%s\",", i ? "," : "", notes[i].side);
			rp_put_json_html(out, notes[i].text, 2000);
			tf_buf_putc(out, ']');
		}
	}
	tf_buf_puts(out, "],\"links\":{");
	{
		bool first = true;
		tf_buf u = TF_BUF_INIT;
		if (x->run_url) {
			tf_buf_puts(out, "\"run\":");
			rp_put_json_html(out, x->run_url, 0);
			first = false;
		}
		if (rp_put_commit_url(&u, x, x->base_commit)) {
			tf_buf_printf(out, "%s\"base\":", first ? "" : ",");
			rp_put_json_html(out, u.ptr, 0);
			first = false;
		}
		tf_buf_clear(&u);
		if (rp_put_commit_url(&u, x, x->head_commit)) {
			tf_buf_printf(out, "%s\"head\":", first ? "" : ",");
			rp_put_json_html(out, u.ptr, 0);
		}
		tf_buf_free(&u);
	}
	tf_buf_printf(out, "},\"distance\":%ld", x->o.base_distance);
	if (s->memory) {
		/* a memory comparison: its leaks, peaks and the sampler's notes */
		rp_mem_note *notes;
		size_t nn = rp_memory_notes(&notes, c);
		tf_buf_puts(out, ",\"memory\":{\"gated\":");
		tf_buf_puts(out, x->o.memory_gated ? "true" : "false");
		tf_buf_puts(out, ",\"min_bytes\":");
		put_exact(out, s->min_delta_bytes);
		tf_buf_puts(out, ",\"notes\":[");
		for (size_t i = 0; i < nn; i++) {
			tf_buf_puts(out, i ? ",[" : "[");
			if (notes[i].test)
				rp_put_json_html(out, notes[i].test, PAGE_NAME_MAX);
			else
				tf_buf_puts(out, "null");
			tf_buf_putc(out, ',');
			rp_put_json_html(out, notes[i].text, 1000);
			tf_buf_putc(out, ']');
		}
		tf_buf_puts(out, "]}");
		rp_memory_notes_free(notes, nn);
	}
	tf_buf_printf(out, ",\"pruned\":{\"frames\":%zu,\"kept\":%zu,\"others\":%zu,\"bar\":%.6g,"
			   "\"detail\":%g}", n, kept, nother, bar, CHANGED_DETAIL);
	tf_buf_puts(out, ",\"tree\":");
	tf_buf_put(out, tree.ptr, tree.len);
	if (wp.tree.len) {
		tf_buf_puts(out, ",\"waits\":");
		tf_buf_put(out, wp.tree.ptr, wp.tree.len);
	}
	tf_buf_puts(out, ",\"tests\":[");
	tf_buf_put(out, tests.ptr, tests.len);
	tf_buf_puts(out, "],\"allfx\":");
	tf_buf_put(out, allfx.ptr, allfx.len);
	/* the string table last: everything above has interned its strings */
	tf_buf_puts(out, ",\"strings\":[");
	for (size_t i = 0; i < os.strs.strs.n; i++) {
		if (i)
			tf_buf_putc(out, ',');
		rp_put_json_html(out, os.strs.strs.v[i], PAGE_NAME_MAX);
	}
	tf_buf_puts(out, "],\"file\":[");
	for (size_t i = 0; i < os.strs.strs.n; i++)
		tf_buf_printf(out, "%s%u", i ? "," : "", i < os.file.n ? os.file.v[i] : 0);
	tf_buf_puts(out, "],\"line\":[");
	for (size_t i = 0; i < os.strs.strs.n; i++)
		tf_buf_printf(out, "%s%lld", i ? "," : "",
			      (long long)(i < os.line.n ? os.line.v[i] : 0));
	tf_buf_puts(out, "]}");

	tf_buf_free(&tree);
	tf_buf_free(&tests);
	tf_buf_free(&allfx);
	free(keep);
	free(pos);
	for (int i = 0; i < 3; i++)
		free(scratch[i]);
	free(pg.sid_of);
	waits_end(&wp);
	tf_vec_free(&os.file);
	tf_vec_free(&os.line);
	tf_strtab_free(&os.strs);
}

static void put_hash(tf_buf *b, const char *data, size_t len)
{
	uint8_t h[32];
	rp_sha256(h, data, len);
	tf_buf_puts(b, "'sha256-");
	rp_base64(b, h, sizeof(h));
	tf_buf_putc(b, '\'');
}

int rp_html_render(tf_buf *out, rp_ctx *x, const rp_tree *forest)
{
	tf_buf_puts(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
			 "script-src ");
	put_hash(out, tf_asset_js, tf_asset_js_len);
	tf_buf_puts(out, "; style-src ");
	put_hash(out, tf_asset_css, tf_asset_css_len);
	tf_buf_puts(out, "; base-uri 'none'; form-action 'none'\">\n"
			 "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
			 "<meta name=\"generator\" content=\"testflame " TF_VERSION "\">\n<title>");
	rp_put_html(out, x->title, 300);
	tf_buf_puts(out, "</title>\n<style>");
	tf_buf_put(out, tf_asset_css, tf_asset_css_len);
	tf_buf_puts(out, "</style>\n</head>\n<body>\n");
	tf_buf_put(out, tf_asset_html, tf_asset_html_len);
	tf_buf_puts(out, "<script type=\"application/json\" id=\"tf-data\">");
	put_data(out, x, forest);
	tf_buf_puts(out, "</script>\n");
	if (x->o.memory) {
		/* the allocations' comparison, drawn at index.html#memory */
		rp_ctx mx;
		rp_tree mt;
		int rc = rp_ctx_init(&mx, x->o.memory, &x->o);
		if (!rc && (rc = rp_tree_build(&mt, x->o.memory, TF_EACH_TEST)) == 0) {
			tf_buf_puts(out, "<script type=\"application/json\" id=\"tf-data-memory\">");
			put_data(out, &mx, &mt);
			tf_buf_puts(out, "</script>\n");
			rp_tree_free(&mt);
		}
		rp_ctx_free(&mx);
		if (rc)
			return rc;
	}
	tf_buf_puts(out, "<script>");
	tf_buf_put(out, tf_asset_js, tf_asset_js_len);
	tf_buf_puts(out, "</script>\n</body>\n</html>\n");
	return 0;
}

int tf_report_html(tf_buf *out, const tf_comparison *c, const tf_report_opts *o)
{
	rp_view v;
	int rc = rp_view_begin(&v, c, o, TF_EACH_TEST);

	if (rc == 0)
		rc = rp_html_render(out, &v.x, &v.t);
	rp_view_end(&v);
	return rc;
}

int tf_report_profile_html(tf_buf *out, const tf_profile *p, size_t value, const char *test,
			   const char *name, const tf_report_opts *o)
{
	rp_single s;
	int rc = rp_single_begin(&s, p, value, test, name, o, TF_EACH_TEST);

	if (rc == 0)
		rc = rp_html_render(out, &s.v.x, &s.v.t);
	rp_single_end(&s);
	return rc;
}
