/*
 * select.c - picking samples out of a profile: which samples carry a label
 * (one test's samples, one process's), and a new, self-contained profile
 * of just those samples, for `view --test` and for every consumer that
 * handles one test at a time (comparisons, per-test uploads).
 */
#include "profile_int.h"

#include <stdlib.h>
#include <string.h>

uint8_t *tf_profile_string_flags(const tf_profile *p, const char *s)
{
	size_t n = p->strings.strs.n, len = strlen(s);
	uint8_t *flags = tf_xcalloc(n + 1, 1);

	for (size_t i = 0; i < n; i++)
		flags[i] = p->strings.lens.v[i] == len && memcmp(p->strings.strs.v[i], s, len) == 0;
	return flags;
}

uint8_t *tf_profile_label_mask(const tf_profile *p, const char *key, const char *value)
{
	uint8_t *mask = tf_xcalloc(p->samples.n + 1, 1);
	uint8_t *kf = tf_profile_string_flags(p, key), *vf = tf_profile_string_flags(p, value);

	/* the first label with the key decides, as in tf_sample_label_str() */
	for (size_t i = 0; i < p->samples.n; i++) {
		tf_strid v = tf_sample_label_flagged(p, &p->samples.v[i], kf);
		mask[i] = v && vf[v];
	}
	free(kf);
	free(vf);
	return mask;
}

#define UNSET UINT32_MAX
/* The prefix of the per-test metadata lines (attribute/testmeta.c). */
#define TEST_META "testflame.test."


/* Old index -> new index tables, filled as the selected samples use entries. */
typedef struct {
	const tf_profile *src;
	tf_profile *dst;
	uint32_t *str, *fn, *loc, *map;
	TF_VEC(tf_line) lines;
	TF_VEC(uint32_t) locs;   /* scratch of copy_sample() */
	TF_VEC(tf_label) labels;
} copier;

static tf_strid copy_str(copier *c, tf_strid id)
{
	if (id == 0)
		return 0;
	if (c->str[id] == UNSET)
		c->str[id] = tf_profile_intern_len(c->dst, c->src->strings.strs.v[id],
						   c->src->strings.lens.v[id]);
	return c->str[id];
}

static uint32_t copy_fn(copier *c, uint32_t i)
{
	if (c->fn[i] == UNSET) {
		const tf_function *f = &c->src->functions.v[i];
		c->fn[i] = tf_profile_add_function(c->dst, copy_str(c, f->name),
						   copy_str(c, f->system_name),
						   copy_str(c, f->filename), f->start_line);
	}
	return c->fn[i];
}

static uint32_t copy_map(copier *c, uint32_t i)
{
	if (i == TF_NO_MAPPING)
		return TF_NO_MAPPING;
	if (c->map[i] == UNSET) {
		tf_mapping m = c->src->mappings.v[i];
		m.filename = copy_str(c, m.filename);
		m.build_id = copy_str(c, m.build_id);
		c->map[i] = tf_profile_add_mapping(c->dst, &m);
	}
	return c->map[i];
}

static uint32_t copy_loc(copier *c, uint32_t i)
{
	if (c->loc[i] == UNSET) {
		const tf_location *l = &c->src->locations.v[i];
		c->lines.n = 0;
		for (uint32_t j = 0; j < l->nlines; j++) {
			tf_line ln = c->src->lines.v[l->lines_off + j];
			ln.function = copy_fn(c, ln.function);
			tf_vec_push(&c->lines, ln);
		}
		c->loc[i] = tf_profile_add_location(c->dst, copy_map(c, l->mapping), l->address,
						    c->lines.v, l->nlines);
		c->dst->locations.v[c->loc[i]].is_folded = l->is_folded;
	}
	return c->loc[i];
}

static void copier_init(copier *c, const tf_profile *p, tf_profile *q)
{
	memset(c, 0, sizeof(*c));
	c->src = p;
	c->dst = q;
	c->str = tf_xmalloc((p->strings.strs.n + 1) * sizeof(uint32_t));
	c->fn = tf_xmalloc((p->functions.n + 1) * sizeof(uint32_t));
	c->loc = tf_xmalloc((p->locations.n + 1) * sizeof(uint32_t));
	c->map = tf_xmalloc((p->mappings.n + 1) * sizeof(uint32_t));
	memset(c->str, 0xff, (p->strings.strs.n + 1) * sizeof(uint32_t));
	memset(c->fn, 0xff, (p->functions.n + 1) * sizeof(uint32_t));
	memset(c->loc, 0xff, (p->locations.n + 1) * sizeof(uint32_t));
	memset(c->map, 0xff, (p->mappings.n + 1) * sizeof(uint32_t));
}

static void copier_free(copier *c)
{
	tf_vec_free(&c->lines);
	tf_vec_free(&c->locs);
	tf_vec_free(&c->labels);
	free(c->str);
	free(c->fn);
	free(c->loc);
	free(c->map);
}

/* Sample types, period, times and comments of the source. */
static void copy_header(copier *c)
{
	const tf_profile *p = c->src;
	tf_profile *q = c->dst;

	for (size_t i = 0; i < p->sample_types.n; i++) {
		tf_value_type vt = { copy_str(c, p->sample_types.v[i].type),
				     copy_str(c, p->sample_types.v[i].unit) };
		tf_vec_push(&q->sample_types, vt);
	}
	q->period_type.type = copy_str(c, p->period_type.type);
	q->period_type.unit = copy_str(c, p->period_type.unit);
	q->period = p->period;
	q->time_nanos = p->time_nanos;
	q->duration_nanos = p->duration_nanos;
	q->drop_frames = copy_str(c, (tf_strid)p->drop_frames);
	q->keep_frames = copy_str(c, (tf_strid)p->keep_frames);
	q->default_sample_type = copy_str(c, p->default_sample_type);
	q->doc_url = copy_str(c, p->doc_url);
	for (size_t i = 0; i < p->comments.n; i++)
		tf_vec_push(&q->comments, copy_str(c, p->comments.v[i]));
}

/* Sample i of the source, its labels first and then `extra` (if any). */
static void copy_sample(copier *c, size_t i, const tf_label *extra)
{
	const tf_profile *p = c->src;
	const tf_sample *s = &p->samples.v[i];

	c->locs.n = c->labels.n = 0;
	for (uint32_t j = 0; j < s->nlocs; j++)
		tf_vec_push(&c->locs, copy_loc(c, p->stack.v[s->locs_off + j]));
	for (uint32_t j = 0; j < s->nlabels; j++) {
		tf_label l = p->labels.v[s->labels_off + j];
		l.key = copy_str(c, l.key);
		l.str = copy_str(c, l.str);
		l.num_unit = copy_str(c, l.num_unit);
		tf_vec_push(&c->labels, l);
	}
	if (extra)
		tf_vec_push(&c->labels, *extra);
	tf_profile_add_sample(c->dst, c->locs.v, (uint32_t)c->locs.n, tf_sample_values(p, i),
			      c->labels.v, (uint32_t)c->labels.n);
}

int tf_profile_select(tf_profile **out, const tf_profile *p, const uint8_t *mask)
{
	copier c;
	tf_profile *q;

	tf_profile_new(&q);
	copier_init(&c, p, q);
	copy_header(&c);
	/* keep the source's sample boundaries: merging is the reader's choice */
	tf_profile_set_merge(q, false);
	for (size_t i = 0; i < p->samples.n; i++)
		if (!mask || mask[i])
			copy_sample(&c, i, NULL);
	tf_profile_set_merge(q, true);
	copier_free(&c);
	*out = q;
	return 0;
}

/* Whether two profiles have the same sample types, so that samples copy
 * from one to the other value for value. */
static bool same_sample_types(const tf_profile *a, const tf_profile *b)
{
	if (a->sample_types.n != b->sample_types.n)
		return false;
	for (size_t i = 0; i < a->sample_types.n; i++)
		if (strcmp(tf_profile_str(a, a->sample_types.v[i].type),
			   tf_profile_str(b, b->sample_types.v[i].type)) != 0 ||
		    strcmp(tf_profile_str(a, a->sample_types.v[i].unit),
			   tf_profile_str(b, b->sample_types.v[i].unit)) != 0)
			return false;
	return true;
}

/*
 * Every sample of `parts` in one profile with the first part's header and
 * metadata, and the per-test lines of the others: as runs kept apart
 * (`as_runs`: a run label on each sample, each later run's test lines
 * under its own prefix) or as parts of one run (the shards of a suite:
 * samples and test lines as they are).
 */
static int join(tf_profile **out, const tf_profile *const *parts, size_t n, bool as_runs)
{
	tf_profile *q;
	char num[32];

	*out = NULL;
	if (n == 0)
		return tf_error_set(TF_EINVAL, "no runs to join");
	for (size_t r = 1; r < n; r++)
		if (!same_sample_types(parts[0], parts[r]))
			return tf_error_set(TF_EINVAL, "cannot join profiles of different sample "
					    "types (part 1 and part %zu)", r + 1);
	tf_profile_new(&q);
	tf_profile_set_merge(q, false);
	for (size_t r = 0; r < n; r++) {
		copier c;
		copier_init(&c, parts[r], q);
		if (r == 0) {
			copy_header(&c);
		} else {
			q->duration_nanos += parts[r]->duration_nanos;
			/* its per-test lines, under the run's own prefix */
			for (size_t i = 0; i < parts[r]->comments.n; i++) {
				const char *cm = tf_profile_str(parts[r], parts[r]->comments.v[i]);
				if (strncmp(cm, TEST_META, sizeof(TEST_META) - 1) != 0)
					continue;
				if (!as_runs) {
					tf_vec_push(&q->comments, tf_profile_intern(q, cm));
					continue;
				}
				char *line = tf_xasprintf("testflame.run%zu.test.%s", r + 1,
							  cm + sizeof(TEST_META) - 1);
				tf_vec_push(&q->comments, tf_profile_intern(q, line));
				free(line);
			}
		}
		snprintf(num, sizeof(num), "%zu", r + 1);
		tf_label run = { tf_profile_intern(q, TF_RUN_LABEL), tf_profile_intern(q, num), 0, 0 };
		for (size_t i = 0; i < parts[r]->samples.n; i++)
			copy_sample(&c, i, as_runs ? &run : NULL);
		copier_free(&c);
	}
	tf_profile_set_merge(q, true);
	if (as_runs) {
		snprintf(num, sizeof(num), "%zu", n);
		tf_profile_set_meta(q, "runs", num);
	}
	*out = q;
	return 0;
}

int tf_profile_join_runs(tf_profile **out, const tf_profile *const *runs, size_t n)
{
	return join(out, runs, n, true);
}

int tf_profile_join_parts(tf_profile **out, const tf_profile *const *parts, size_t n)
{
	return join(out, parts, n, false);
}

size_t tf_profile_count_runs(const tf_profile *p)
{
	const char *m = tf_profile_meta(p, "runs");
	char *end;
	unsigned long n = m ? strtoul(m, &end, 10) : 0;
	return m && *m && !*end && n >= 1 && n <= TF_MAX_RUNS ? (size_t)n : 1;
}

/* Keep run r's per-test lines (see tf_profile_join_runs) as the part's
 * own "testflame.test." lines, and drop every other run's. */
static void own_test_lines(tf_profile *q, size_t r)
{
	char want[48];
	size_t k = 0;

	snprintf(want, sizeof(want), "testflame.run%zu.test.", r + 1);
	for (size_t i = 0; i < q->comments.n; i++) {
		const char *cm = tf_profile_str(q, q->comments.v[i]);
		bool first = strncmp(cm, TEST_META, sizeof(TEST_META) - 1) == 0;
		bool other = strncmp(cm, "testflame.run", 13) == 0 && cm[13] >= '0' && cm[13] <= '9';
		if (r > 0 && strncmp(cm, want, strlen(want)) == 0) {
			char *line = tf_xasprintf(TEST_META "%s", cm + strlen(want));
			q->comments.v[k++] = tf_profile_intern(q, line);
			free(line);
		} else if ((r == 0 && !other) || (r > 0 && !first && !other)) {
			q->comments.v[k++] = q->comments.v[i];
		}
	}
	q->comments.n = k;
}

int tf_profile_split_runs(tf_profile ***out, size_t *nout, const tf_profile *p)
{
	size_t n = tf_profile_count_runs(p);
	tf_profile **parts = tf_xcalloc(n, sizeof(*parts));
	char num[32];

	for (size_t r = 0; r < n; r++) {
		uint8_t *mask = NULL;
		if (n > 1) {
			snprintf(num, sizeof(num), "%zu", r + 1);
			mask = tf_profile_label_mask(p, TF_RUN_LABEL, num);
		}
		tf_profile_select(&parts[r], p, mask);
		free(mask);
		if (n > 1) {
			tf_profile_set_meta(parts[r], "runs", NULL);
			parts[r]->duration_nanos = p->duration_nanos / (int64_t)n;
			own_test_lines(parts[r], r);
		}
	}
	*out = parts;
	*nout = n;
	return 0;
}
