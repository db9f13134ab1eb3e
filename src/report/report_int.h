/*
 * report_int.h - what the report writers share behind report.h: the
 * resolved context of one report (suite, commits, links, taken from the
 * options or else from the run metadata), the escapers every format needs
 * for untrusted names, and the prepared diff tree the flame graphs draw.
 */
#ifndef TESTFLAME_REPORT_INT_H
#define TESTFLAME_REPORT_INT_H

#include "testflame/report.h"

/* Where source links point: the URL layout of the code host. */
typedef enum {
	RP_HOST_NONE = 0,
	RP_HOST_GITHUB,
	RP_HOST_GITLAB,
	RP_HOST_BITBUCKET,
} rp_host;

typedef struct {
	const tf_comparison *c;
	tf_report_opts o;         /* defaults filled in */
	bool single;              /* a single profile viewed (base == head) */
	bool waits;               /* c is a comparison of waits (compare.h) */
	const char *suite, *provider, *head_commit, *base_commit, *run_url, *source_root;
	const char *unit;
	char *repo_url;           /* owned, no trailing slash; NULL when unknown */
	char *title;              /* owned */
	rp_host host;
	size_t nchanged;          /* tests rp_changed() lists */
} rp_ctx;

int rp_ctx_init(rp_ctx *x, const tf_comparison *c, const tf_report_opts *o);
void rp_ctx_free(rp_ctx *x);

/* A test that a report lists for the reader: up to new and gone in the
 * order of attention (regressed, large undecided, moved while running
 * changed code, improved, new, gone), not the small undecided or the
 * unchanged. */
bool rp_changed(const tf_test_delta *t);
/* A test whose waits a report shows (its off-CPU diff flame graph, where
 * it waited more): its waits regressed, or decide its verdict. */
bool rp_waits_shown(const tf_test_delta *t);
/* The index in c->waits of test t of c; SIZE_MAX without. */
size_t rp_wait_index(const tf_comparison *c, const tf_test_delta *t);

/*
 * Untrusted text. rp_clean() returns a malloc'd copy that is valid UTF-8
 * (bad bytes become U+FFFD), holds no control characters (C0, DEL, C1) or
 * bidirectional overrides (each becomes U+FFFD), and has at most `max`
 * code points (0: no limit), shortened in the middle with "…". Every
 * escaper below cleans first.
 */
char *rp_clean(const char *s, size_t max);
/* HTML/XML text and attribute values: & < > " ' as references. */
void rp_put_html(tf_buf *b, const char *s, size_t max);
/* Markdown, for use inside <code>...</code> (in a table cell too): the
 * characters that could act as markup where they stand, as numeric
 * references (& < > | ` [ \ * ~ $ always; _ @ : . only where they could
 * open emphasis, a mention or an autolink), the rest as it is: nothing in
 * the name is markup, a cell border, an autolink, math or a mention. */
void rp_put_md(tf_buf *b, const char *s, size_t max);
/* The same for running text outside <code>, where "@name" also gets a
 * word joiner after the @, so no host mentions anyone. */
void rp_put_md_text(tf_buf *b, const char *s, size_t max);
/* A JSON string literal that is also safe inside an HTML <script> element
 * (< > & and U+2028/2029 as \u escapes). */
void rp_put_json_html(tf_buf *b, const char *s, size_t max);
/* A JSON string literal of cleaned text. */
void rp_put_json(tf_buf *b, const char *s, size_t max);
/* Percent-encoding for a URL path: all but unreserved characters and '/'. */
void rp_put_url_path(tf_buf *b, const char *s);
/* Plain cleaned text (terminal, workflow command data before its escaping). */
void rp_put_text(tf_buf *b, const char *s, size_t max);

/* Number formatting shared by the formats. */
void rp_cost(char *buf, size_t len, double v, const char *unit);        /* "1.23 s" or "-" */
void rp_signed_cost(char *buf, size_t len, double v, const char *unit); /* "+1.23 s" */
void rp_pct(char *buf, size_t len, double pct);                         /* "+12.3%" or "-" */

/* The path of `file` inside the repository (a pointer into `file` or into
 * the source root's remainder), or NULL when it is not known to be in it. */
const char *rp_repo_path(const rp_ctx *x, const char *file);
/* Append the URL of `path` (repository-relative) at `line` (0: none) at the
 * head commit; false (nothing appended) when there is no repository URL or
 * commit. */
bool rp_put_source_url(tf_buf *b, const rp_ctx *x, const char *path, int64_t line);
/* Append the URL of a commit's page; false when unknown. */
bool rp_put_commit_url(tf_buf *b, const rp_ctx *x, const char *commit);

/*
 * A diff tree with what the renderers need on top: per node, the interned
 * (raw) name id, to add up functions by name; nodes keep compare's order.
 */
typedef struct {
	tf_diff_tree *t;
	uint32_t *name_id;   /* per node */
	uint32_t *end;       /* per node: one past its last descendant in preorder */
	uint32_t *order;     /* preorder (children in name order) */
	uint32_t *pos;       /* node -> position in order */
	uint32_t *test_pos;  /* TF_EACH_TEST trees: c->tests[i] -> position of its
			      * node, TF_DIFF_NONE when it has no samples */
	tf_strtab names;
} rp_tree;

int rp_tree_build(rp_tree *out, const tf_comparison *c, size_t test);
void rp_tree_free(rp_tree *t);
/* The tree's preorder (order: position -> node, pos: node -> position) and
 * end[position], one past the subtree's last position; n entries each. */
void rp_tree_order(const tf_diff_tree *t, uint32_t *order, uint32_t *pos, uint32_t *end);

/* The renderers, on a prepared tree (positions are preorder positions). */
int rp_html_render(tf_buf *out, rp_ctx *x, const rp_tree *forest);
int rp_svg_render(tf_buf *out, rp_ctx *x, const rp_tree *t, uint32_t root_pos, size_t test);
/* A whole number |v| < 1e15 as "%.0f" prints it, without printf. */
void rp_put_whole(tf_buf *b, double v);
/* Folded diff lines of the subtree at `root_pos`; `skip_root` leaves the
 * root frame out of the stacks. */
int rp_folded_render(tf_buf *out, const rp_tree *t, uint32_t root_pos, bool skip_root);

/* Diff colour of a frame, as the page computes it (report.js keeps the
 * same formula): neutral below the threshold, red (orange when
 * `colorblind`) for growth, blue for shrinkage, stronger for bigger
 * relative changes. */
void rp_diff_colour(char out[8], double base, double head, double threshold_pct,
		    bool colorblind);
/* Warm flame-graph colour derived from the name (single profiles). */
void rp_name_colour(char out[8], const char *name);

/* `file`:`line` in report.md, in <code>, linked to the source at the head
 * commit where the host is known; "-" without a file (markdown.c). */
void rp_md_location(tf_buf *b, const rp_ctx *x, const char *file, int64_t line, size_t name_max);

/* The memory comparison's notes (memory.c): leaks and peaks of tests
 * (`test` set, `text` without its name) and the head run's notes of what
 * the sampler could not measure (`test` NULL). Free with
 * rp_memory_notes_free(). */
typedef struct {
	const char *test;
	char *text;
} rp_mem_note;
size_t rp_memory_notes(rp_mem_note **out, const tf_comparison *m);
void rp_memory_notes_free(rp_mem_note *v, size_t n);
/* report.md's line on memory under its headline, and its section: the
 * tests whose allocations changed (`rows` at most), the functions that
 * allocate more (`funcs` a test), the notes. Nothing without x->o.memory. */
void rp_memory_headline(tf_buf *b, const rp_ctx *x);
void rp_memory_markdown(tf_buf *b, const rp_ctx *x, size_t rows, size_t funcs, size_t name_max);

/* SHA-256, for the page's Content-Security-Policy script hash. */
void rp_sha256(uint8_t out[32], const void *data, size_t len);
void rp_base64(tf_buf *b, const uint8_t *data, size_t len);

/*
 * What a page or an image renders of a comparison: its context and its
 * tree of `tree` (a test's index, TF_EACH_TEST or TF_ALL_TESTS). Freed by
 * rp_view_end(), whatever the result.
 */
typedef struct {
	rp_ctx x;
	rp_tree t;
	bool have_ctx, have_tree;
} rp_view;

int rp_view_begin(rp_view *v, const tf_comparison *c, const tf_report_opts *o, size_t tree);
void rp_view_end(rp_view *v);

/*
 * A single profile seen through the comparison machinery: the profile
 * compared with itself (value column `value`, only `test` when set), and
 * its view (v) in single mode titled `name`, of `tree`. Freed by
 * rp_single_end(), whatever the result.
 */
typedef struct {
	tf_comparison *c;
	rp_view v;
} rp_single;

int rp_single_begin(rp_single *s, const tf_profile *p, size_t value, const char *test,
		    const char *name, const tf_report_opts *o, size_t tree);
void rp_single_end(rp_single *s);

/* The embedded page assets (build/gen/report_assets.c). */
extern const char tf_asset_js[];
extern const size_t tf_asset_js_len;
extern const char tf_asset_css[];
extern const size_t tf_asset_css_len;
extern const char tf_asset_html[];
extern const size_t tf_asset_html_len;

#endif
