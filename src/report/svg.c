/*
 * svg.c - static diff flame graphs, one file per changed test, for CI
 * artifacts and for embedding in pages and comments: width from the head,
 * colour from the change (the same rule as the page), a <title> tooltip on
 * every frame with base, head and delta. No script at all, so the file is
 * safe wherever it is shown, and every name in it is XML-escaped. Frames
 * narrower than half a pixel are not drawn (their parent's width still
 * counts them); a graph that would hold too many frames raises that bar
 * and says so in its subtitle.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_H 16
#define FONT_PX 12
#define TOP_PAD 48
#define MAX_FRAMES 20000

typedef struct {
	uint32_t pos;
	double x, w;
	uint32_t row;
} placed;

static const char *svg_font = "Verdana, DejaVu Sans, sans-serif";

static void frame(tf_buf *b, rp_ctx *x, const tf_diff_node *nd, const placed *pl,
		  uint32_t maxrow, double root_b, double root_h)
{
	char fill[8], bv[48], hv[48], dv[48], bs[48], hs[48], pc[32];
	double y = TOP_PAD + (double)(maxrow - pl->row) * FRAME_H;

	if (x->single)
		rp_name_colour(fill, nd->name);
	else
		rp_diff_colour(fill, nd->base_total, nd->head_total, x->c->summary.threshold,
			       x->o.colorblind);
	tf_buf_puts(b, "<g><title>");
	rp_put_html(b, nd->name, 500);
	if (*nd->file) {
		tf_buf_puts(b, " (");
		rp_put_html(b, nd->file, 300);
		if (nd->line > 0)
			tf_buf_printf(b, ":%lld", (long long)nd->line);
		tf_buf_putc(b, ')');
	}
	rp_cost(hv, sizeof(hv), nd->head_total, x->unit);
	if (x->single) {
		tf_buf_printf(b, "\n%s, %.2f%%", hv, root_h > 0 ? nd->head_total / root_h * 100 : 0);
	} else {
		rp_cost(bv, sizeof(bv), nd->base_total, x->unit);
		rp_signed_cost(dv, sizeof(dv), nd->head_total - nd->base_total, x->unit);
		if (nd->base_total > 0)
			rp_pct(pc, sizeof(pc), (nd->head_total - nd->base_total) / nd->base_total * 100);
		else
			snprintf(pc, sizeof(pc), "new");
		rp_cost(bs, sizeof(bs), nd->base_self, x->unit);
		rp_cost(hs, sizeof(hs), nd->head_self, x->unit);
		tf_buf_printf(b, "\nhead %s (%.2f%%), base %s (%.2f%%)\ndelta %s (%s)\nself: head %s, base %s",
			      hv, root_h > 0 ? nd->head_total / root_h * 100 : 0, bv,
			      root_b > 0 ? nd->base_total / root_b * 100 : 0, dv, pc, hs, bs);
	}
	tf_buf_printf(b, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" "
			 "fill=\"%s\" rx=\"2\" ry=\"2\"/>",
		      pl->x + 10, y, pl->w, FRAME_H - 1, fill);
	/* the label, clipped to the frame like flamegraph.pl does */
	size_t fit = pl->w > 6 ? (size_t)((pl->w - 6) / (FONT_PX * 0.59)) : 0;
	if (fit >= 3) {
		char *name = rp_clean(nd->name, 0);
		size_t cps = 0, cut = 0;
		for (const unsigned char *p = (const unsigned char *)name; *p; p++)
			if ((*p & 0xc0) != 0x80 && cps++ == fit - 2)
				cut = (size_t)(p - (const unsigned char *)name);
		tf_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\">", pl->x + 13, y + FRAME_H - 4.5);
		if (cps > fit) {
			name[cut] = '\0';
			rp_put_html(b, name, 0);
			tf_buf_puts(b, "..");
		} else {
			rp_put_html(b, name, 0);
		}
		tf_buf_puts(b, "</text>");
		free(name);
	}
	tf_buf_puts(b, "</g>\n");
}

int rp_svg_render(tf_buf *b, rp_ctx *x, const rp_tree *t, uint32_t root_pos, size_t test)
{
	const tf_diff_node *root = &t->t->nodes[t->order[root_pos]];
	double width = x->o.svg_width ? x->o.svg_width : 1200, W = width - 20;
	double tot = root->head_total, minw = 0.5;
	TF_VEC(placed) pl = { 0 };
	TF_VEC(placed) stack = { 0 };
	uint32_t maxrow = 0;
	char hv[48], bv[48], pc[32];

	/* lay out; raise the bar if the graph would be too big to open */
	for (;;) {
		pl.n = stack.n = maxrow = 0;
		if (tot > 0) {
			placed r = { root_pos, 0, W, 0 };
			tf_vec_push(&stack, r);
		}
		while (stack.n && pl.n <= MAX_FRAMES) {
			placed p = stack.v[--stack.n];
			tf_vec_push(&pl, p);
			if (p.row > maxrow)
				maxrow = p.row;
			double cx = p.x;
			for (uint32_t c = p.pos + 1; c < t->end[p.pos]; c = t->end[c]) {
				double w = t->t->nodes[t->order[c]].head_total / tot * W;
				if (w >= minw) {
					placed q = { c, cx, w, p.row + 1 };
					tf_vec_push(&stack, q);
				}
				cx += w;
			}
		}
		if (pl.n <= MAX_FRAMES)
			break;
		minw *= 2;
	}

	double height = TOP_PAD + (double)(maxrow + 1) * FRAME_H + 24;
	tf_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
			 "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
			 "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"%s\" font-size=\"%d\">\n",
		      width, height, width, height, svg_font, FONT_PX);
	tf_buf_printf(b, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n"
			 "<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" font-size=\"16\">",
		      width / 2);
	if (x->single)
		tf_buf_puts(b, "Flame graph: ");
	else if (x->waits)
		tf_buf_puts(b, "Off-CPU diff flame graph, where it waited more: ");
	else
		tf_buf_puts(b, "Diff flame graph: ");
	rp_put_html(b, test < x->c->ntests ? x->c->tests[test].name : root->name, 150);
	tf_buf_puts(b, "</text>\n<text x=\"10\" y=\"38\" fill=\"#555\">");
	rp_cost(hv, sizeof(hv), root->head_total, x->unit);
	if (x->single) {
		tf_buf_printf(b, "%s of ", hv);
		rp_put_html(b, x->c->summary.event, 50);
		tf_buf_puts(b, "; width: cost, colour: by name");
	} else {
		rp_cost(bv, sizeof(bv), root->base_total, x->unit);
		if (root->base_total > 0)
			rp_pct(pc, sizeof(pc), (root->head_total - root->base_total) / root->base_total * 100);
		else
			snprintf(pc, sizeof(pc), "new");
		tf_buf_printf(b, "base %s, head %s (%s); width: head, %s: grew, blue: shrank, grey: within %g%%",
			      bv, hv, pc, x->o.colorblind ? "orange" : "red", x->c->summary.threshold);
	}
	if (minw > 0.5)
		tf_buf_printf(b, "; frames under %.0f px not drawn", minw);
	tf_buf_puts(b, "</text>\n");
	if (!(tot > 0)) {
		tf_buf_puts(b, "<text x=\"10\" y=\"64\">No samples in the head (the test is only in the base).</text>\n");
	}
	for (size_t i = 0; i < pl.n; i++)
		frame(b, x, &t->t->nodes[t->order[pl.v[i].pos]], &pl.v[i], maxrow, root->base_total,
		      root->head_total);
	tf_buf_puts(b, "</svg>\n");
	tf_vec_free(&pl);
	tf_vec_free(&stack);
	return 0;
}

int tf_report_svg(tf_buf *out, const tf_comparison *c, size_t test, const tf_report_opts *o)
{
	rp_view v;
	int rc;

	if (test != TF_ALL_TESTS && test >= c->ntests)
		return tf_error_set(TF_EINVAL, "no test %zu in the comparison (it has %zu)", test,
				    c->ntests);
	if ((rc = rp_view_begin(&v, c, o, test)) == 0)
		rc = rp_svg_render(out, &v.x, &v.t, 0, test);
	rp_view_end(&v);
	return rc;
}

int tf_report_profile_svg(tf_buf *out, const tf_profile *p, size_t value, const char *test,
			  const char *name, const tf_report_opts *o)
{
	rp_single s;
	int rc = rp_single_begin(&s, p, value, test, name, o, TF_ALL_TESTS);

	if (rc == 0) {
		/* the root of an all-tests tree is "all": name it after the file */
		if (name && s.v.t.t->n)
			s.v.t.t->nodes[0].name = name;
		rc = rp_svg_render(out, &s.v.x, &s.v.t, 0,
				   test && s.c->ntests == 1 ? 0 : TF_ALL_TESTS);
	}
	rp_single_end(&s);
	return rc;
}
