/*
 * speedscope.c - writing speedscope's JSON file format, so that any profile
 * testflame reads opens in speedscope (https://www.speedscope.app), the
 * flame graph viewer most users already have a tab for.
 *
 * The format wants one frame table shared by all profiles and, per profile,
 * the stacks (root first, as indices into the frames) with a weight each.
 * We write one "sampled" profile per test, so speedscope's profile selector
 * becomes a test selector; equal stacks are merged, which keeps the file
 * small (pprof samples differ by labels such as the thread, which speedscope
 * has no use for). Names are JSON-escaped and made valid UTF-8.
 */
#include "testflame/profile.h"
#include "profile_int.h"

#include <stdlib.h>
#include <string.h>

#define UNSET UINT32_MAX

typedef struct {
	const char *name, *file;
	int64_t line;
} frame;

struct stack {
	uint32_t off, len; /* in the group's pool */
	int64_t weight;
};

typedef struct {
	const char *name;         /* NULL: samples without a test label */
	TF_VEC(uint32_t) pool;    /* frame indices of all stacks, root first */
	TF_VEC(struct stack) stacks;
	tf_htab index;
	int64_t total;
} group;

typedef struct {
	const tf_profile *p;
	TF_VEC(frame) frames;
	tf_htab frame_index;
	uint32_t *by_fn, *by_loc;
	TF_VEC(group) groups;
	tf_htab group_index;
} writer;

static uint64_t frame_hash(const frame *f)
{
	uint64_t h = tf_hash_bytes(f->name, strlen(f->name), 1);
	h = tf_hash_combine(h, tf_hash_bytes(f->file, strlen(f->file), 2));
	return tf_hash_combine(h, (uint64_t)f->line);
}

static bool frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const frame *a = &((const frame *)ctx)[idx], *b = key;
	return a->line == b->line && strcmp(a->name, b->name) == 0 && strcmp(a->file, b->file) == 0;
}

static uint32_t frame_for(writer *w, const frame *f)
{
	uint64_t h = frame_hash(f);
	uint32_t idx = tf_htab_find(&w->frame_index, h, frame_eq, w->frames.v, f);
	if (idx == TF_HTAB_NONE) {
		idx = (uint32_t)w->frames.n;
		tf_vec_push(&w->frames, *f);
		tf_htab_insert(&w->frame_index, h, idx);
	}
	return idx;
}

static uint32_t fn_frame(writer *w, uint32_t fi)
{
	if (w->by_fn[fi] == UNSET) {
		const tf_function *fn = &w->p->functions.v[fi];
		frame f = { tf_profile_str(w->p, fn->name), tf_profile_str(w->p, fn->filename),
			    fn->start_line };
		if (!*f.name)
			f.name = tf_profile_str(w->p, fn->system_name);
		if (!*f.name)
			f.name = "??";
		w->by_fn[fi] = frame_for(w, &f);
	}
	return w->by_fn[fi];
}

/* A location without symbols: its address, and its mapping's file. */
static uint32_t addr_frame(writer *w, uint32_t li, char *names, size_t stride)
{
	if (w->by_loc[li] == UNSET) {
		const tf_location *l = &w->p->locations.v[li];
		char *name = names + (size_t)li * stride;
		snprintf(name, stride, "0x%llx", (unsigned long long)l->address);
		frame f = { name, l->mapping == TF_NO_MAPPING ? "" :
			    tf_profile_str(w->p, w->p->mappings.v[l->mapping].filename), 0 };
		w->by_loc[li] = frame_for(w, &f);
	}
	return w->by_loc[li];
}

static bool group_eq(const void *ctx, uint32_t idx, const void *key)
{
	const group *g = &((const group *)ctx)[idx];
	return g->name && strcmp(g->name, key) == 0;
}

static uint32_t group_for(writer *w, const char *name)
{
	uint64_t h = name ? tf_hash_bytes(name, strlen(name), 0) : 0;
	uint32_t idx = TF_HTAB_NONE;

	if (name)
		idx = tf_htab_find(&w->group_index, h, group_eq, w->groups.v, name);
	else
		for (size_t i = 0; i < w->groups.n; i++)
			if (!w->groups.v[i].name)
				idx = (uint32_t)i;
	if (idx == TF_HTAB_NONE) {
		group g;
		memset(&g, 0, sizeof(g));
		g.name = name;
		idx = (uint32_t)w->groups.n;
		tf_vec_push(&w->groups, g);
		if (name)
			tf_htab_insert(&w->group_index, h, idx);
	}
	return idx;
}

struct stack_key {
	const uint32_t *frames;
	uint32_t len;
};

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const group *g = ctx;
	const struct stack_key *k = key;
	const struct stack *s = &g->stacks.v[idx];
	return s->len == k->len &&
	       (!k->len || memcmp(g->pool.v + s->off, k->frames, k->len * sizeof(uint32_t)) == 0);
}

static void add_stack(group *g, const uint32_t *frames, uint32_t len, int64_t weight)
{
	struct stack_key k = { frames, len };
	uint64_t h = tf_hash_bytes(frames, len * sizeof(uint32_t), len);
	uint32_t idx = tf_htab_find(&g->index, h, stack_eq, g, &k);

	g->total += weight;
	if (idx != TF_HTAB_NONE) {
		g->stacks.v[idx].weight += weight;
		return;
	}
	struct stack s = { (uint32_t)g->pool.n, len, weight };
	tf_vec_reserve(&g->pool, g->pool.n + len + 1); /* never NULL, for v + off */
	if (len)
		memcpy(g->pool.v + g->pool.n, frames, len * sizeof(uint32_t));
	g->pool.n += len;
	tf_htab_insert(&g->index, h, (uint32_t)g->stacks.n);
	tf_vec_push(&g->stacks, s);
}

static int cmp_group(const void *a, const void *b)
{
	const group *x = a, *y = b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (!x->name || !y->name)
		return !x->name - !y->name;
	return strcmp(x->name, y->name);
}

static const char *speedscope_unit(const char *unit)
{
	static const char *const known[] = { "nanoseconds", "microseconds", "milliseconds",
					     "seconds", "bytes" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(known); i++)
		if (strcmp(unit, known[i]) == 0)
			return known[i];
	return "none";
}

static void write_json(tf_buf *out, writer *w, const char *unit, const char *name)
{
	tf_buf_puts(out, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n"
		    "\"shared\":{\"frames\":[\n");
	for (size_t i = 0; i < w->frames.n; i++) {
		const frame *f = &w->frames.v[i];
		tf_buf_puts(out, i ? ",\n{\"name\":" : "{\"name\":");
		tf_buf_put_json(out, f->name);
		if (*f->file) {
			tf_buf_puts(out, ",\"file\":");
			tf_buf_put_json(out, f->file);
		}
		if (f->line > 0)
			tf_buf_printf(out, ",\"line\":%lld", (long long)f->line);
		tf_buf_putc(out, '}');
	}
	tf_buf_puts(out, "]},\n\"profiles\":[\n");
	for (size_t gi = 0; gi < w->groups.n; gi++) {
		const group *g = &w->groups.v[gi];
		if (gi)
			tf_buf_puts(out, ",\n");
		tf_buf_puts(out, "{\"type\":\"sampled\",\"name\":");
		tf_buf_put_json(out, g->name ? g->name : w->groups.n == 1 ? name : "(no test)");
		tf_buf_printf(out, ",\"unit\":\"%s\",\"startValue\":0,\"endValue\":%lld,\n\"samples\":[",
			      unit, (long long)g->total);
		for (size_t i = 0; i < g->stacks.n; i++) {
			const struct stack *s = &g->stacks.v[i];
			tf_buf_puts(out, i ? ",\n[" : "\n[");
			for (uint32_t j = 0; j < s->len; j++)
				tf_buf_printf(out, j ? ",%u" : "%u", g->pool.v[s->off + j]);
			tf_buf_putc(out, ']');
		}
		tf_buf_puts(out, "],\n\"weights\":[");
		for (size_t i = 0; i < g->stacks.n; i++)
			tf_buf_printf(out, i ? ",%lld" : "%lld", (long long)g->stacks.v[i].weight);
		tf_buf_puts(out, "]}");
	}
	tf_buf_puts(out, "],\n\"name\":");
	tf_buf_put_json(out, name);
	tf_buf_puts(out, ",\"activeProfileIndex\":0,\"exporter\":\"testflame " TF_VERSION "\"}\n");
}

int tf_speedscope_write(tf_buf *out, const tf_profile *p, size_t value_index,
			const char *test, const char *name)
{
	writer w;
	size_t nv = p->sample_types.n;
	const size_t stride = 24;
	char *addr_names;
	uint8_t *kf, *want = NULL;
	bool labelled = false;
	TF_VEC(uint32_t) stack = { 0 };

	if (value_index >= nv)
		return tf_error_set(TF_EINVAL, "the profile has no value column %zu", value_index);
	memset(&w, 0, sizeof(w));
	w.p = p;
	w.by_fn = tf_xmalloc((p->functions.n + 1) * sizeof(uint32_t));
	w.by_loc = tf_xmalloc((p->locations.n + 1) * sizeof(uint32_t));
	memset(w.by_fn, 0xff, (p->functions.n + 1) * sizeof(uint32_t));
	memset(w.by_loc, 0xff, (p->locations.n + 1) * sizeof(uint32_t));
	addr_names = tf_xmalloc((p->locations.n + 1) * stride);
	kf = tf_profile_string_flags(p, "test");
	if (test)
		want = tf_profile_string_flags(p, test);
	for (size_t i = 0; i < p->samples.n && !labelled; i++)
		labelled = tf_sample_label_flagged(p, &p->samples.v[i], kf) != 0;

	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		int64_t v = p->values.v[i * nv + value_index];
		tf_strid t = tf_sample_label_flagged(p, s, kf);

		if (v <= 0 || (want && (!t || !want[t])))
			continue;
		stack.n = 0;
		for (uint32_t j = s->nlocs; j-- > 0;) {
			uint32_t li = p->stack.v[s->locs_off + j];
			const tf_location *l = &p->locations.v[li];
			if (!l->nlines)
				tf_vec_push(&stack, addr_frame(&w, li, addr_names, stride));
			for (uint32_t k = l->nlines; k-- > 0;)
				tf_vec_push(&stack, fn_frame(&w, p->lines.v[l->lines_off + k].function));
		}
		uint32_t g = group_for(&w, labelled ? (t ? tf_profile_str(p, t) : NULL) : name);
		add_stack(&w.groups.v[g], stack.v, (uint32_t)stack.n, v);
	}
	if (w.groups.n == 0)
		group_for(&w, test ? test : name);
	qsort(w.groups.v, w.groups.n, sizeof(*w.groups.v), cmp_group);
	write_json(out, &w, speedscope_unit(tf_profile_str(p, p->sample_types.v[value_index].unit)),
		   name);

	for (size_t i = 0; i < w.groups.n; i++) {
		tf_vec_free(&w.groups.v[i].pool);
		tf_vec_free(&w.groups.v[i].stacks);
		tf_htab_free(&w.groups.v[i].index);
	}
	tf_vec_free(&w.groups);
	tf_htab_free(&w.group_index);
	tf_vec_free(&w.frames);
	tf_htab_free(&w.frame_index);
	tf_vec_free(&stack);
	free(w.by_fn);
	free(w.by_loc);
	free(addr_names);
	free(kf);
	free(want);
	return 0;
}
