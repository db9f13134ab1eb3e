/*
 * show.c - what a run file holds, at a glance (`testflame show`, report.h):
 * its metadata (sorted), the totals with their units, what was lost on the
 * way (lost, throttled, unresolved, truncated), per-test (with wall
 * time, attribution source and exit status when the run file records them;
 * build steps apart) and per-process tables. Works on any pprof or folded
 * file; what the file does not say (a Go profile has no testflame metadata)
 * is simply left out.
 */
#include "report/report_int.h"
#include "testflame/context.h"
#include "testflame/aggregate.h"
#include "testflame/attribute.h"
#include "testflame/profile.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define META_PREFIX "testflame."
#define TEST_PREFIX "testflame.test."

/* A test's memory, as `show` lists it: the per-test metadata's fields. */
enum { MEM_SHOWN = 6 };
static const char *const mem_keys[MEM_SHOWN] = {
	"allocs", "alloc_bytes", "frees", "heap_peak", "leaked", "rss_peak",
};

/* The counters of what a run lost; absent from foreign profiles. */
static const char *const loss_keys[] = { "lost", "throttled", "unresolved", "truncated" };

typedef struct {
	const char *name;   /* owned by the profile, the groups or the arena */
	int64_t samples, value;
	int64_t wall_ns;    /* -1: not recorded */
	const char *source; /* how it was found (markers, process, ...), or NULL */
	int exit_status;
	bool has_exit, from_samples;
	/* measured, not sampled (NAN when not): the kernel's count of its
	 * processes, its markers' CPU time, its runner's duration */
	double count, cpu_ns, runner_ns;
	const char *parent;
	/* memory (NAN when not measured): counted, then sampled */
	double mem[MEM_SHOWN];
} test_row;

typedef struct {
	const tf_profile *p;
	const char *file;
	int vi, si;               /* default value column; "samples" column or -1 */
	int64_t total_value, total_samples;
	size_t unsymbolized;
	tf_label_groups *tests, *procs;
	TF_VEC(test_row) rows;   /* tests, largest first */
	test_row *build;         /* the build steps, reported apart; or NULL */
	bool any_wall, any_source, any_exit, any_measured, any_memory;
	TF_VEC(const char *) meta; /* "key=value" strings after "testflame.", sorted */
	TF_VEC(const char *) comments; /* other comments */
	tf_arena *arena;
} summary;

static int64_t group_samples(const summary *s, const tf_label_group *g)
{
	return s->si >= 0 ? g->sums[s->si] : (int64_t)g->records;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int cmp_row(const void *a, const void *b)
{
	const test_row *x = a, *y = b;
	if (x->value != y->value)
		return x->value > y->value ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* A per-test metadata line into a row; false if it is none or malformed. */
static bool parse_test_meta(const char *c, test_row *r, tf_arena *arena)
{
	tf_test_meta m;
	if (tf_test_meta_parse(&m, c) != 0) {
		tf_error_clear();
		return false;
	}
	r->name = tf_arena_strdup(arena, m.name);
	r->samples = (int64_t)m.samples;
	r->value = m.value;
	r->wall_ns = isnan(m.wall_ns) ? -1 : (int64_t)m.wall_ns;
	r->source = m.source ? tf_arena_strdup(arena, m.source) : NULL;
	r->exit_status = m.exit_status;
	r->has_exit = m.has_exit;
	r->count = m.count;
	r->cpu_ns = m.cpu_ns;
	r->runner_ns = m.runner_ns;
	r->parent = m.parent ? tf_arena_strdup(arena, m.parent) : NULL;
	double mem[MEM_SHOWN] = { m.allocs, m.alloc_bytes, m.frees, m.heap_peak, m.leaked,
				  m.rss_peak };
	memcpy(r->mem, mem, sizeof(mem));
	tf_test_meta_clear(&m);
	return true;
}

static test_row *find_row(summary *s, const char *name)
{
	for (size_t i = 0; i < s->rows.n; i++)
		if (strcmp(s->rows.v[i].name, name) == 0)
			return &s->rows.v[i];
	return NULL;
}

static bool is_build(const test_row *r)
{
	return (r->source && strcmp(r->source, "build") == 0) || strcmp(r->name, TF_BUILD_TEST) == 0;
}

static int summarize(summary *s, const tf_profile *p, const char *file)
{
	static const char *const proc_counts[] = { "pid", "tid" };
	int rc;

	memset(s, 0, sizeof(*s));
	s->p = p;
	s->file = file;
	s->arena = tf_arena_new();
	s->vi = tf_profile_default_value(p);
	s->si = tf_profile_find_sample_type(p, "samples");
	if (s->vi >= 0)
		s->total_value = tf_profile_total(p, (size_t)s->vi);
	s->total_samples = s->si >= 0 ? tf_profile_total(p, (size_t)s->si) : (int64_t)p->samples.n;
	for (size_t i = 0; i < p->locations.n; i++)
		s->unsymbolized += p->locations.v[i].nlines == 0;

	if ((rc = tf_label_groups_new(&s->tests, p, "test", NULL, 0)) ||
	    (rc = tf_label_groups_new(&s->procs, p, "process", proc_counts, 2)))
		return rc;
	for (size_t i = 0; i < s->tests->n && s->tests->any_labelled; i++) {
		const tf_label_group *g = &s->tests->groups[i];
		test_row r = { g->value ? g->value : "(no test label)", group_samples(s, g),
			       s->vi >= 0 ? g->sums[s->vi] : 0, -1, NULL, 0, false, true,
			       NAN, NAN, NAN, NULL, { NAN, NAN, NAN, NAN, NAN, NAN } };
		tf_vec_push(&s->rows, r);
	}
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]);
		test_row r = { NULL, 0, 0, -1, NULL, 0, false, false, NAN, NAN, NAN, NULL,
			       { NAN, NAN, NAN, NAN, NAN, NAN } }, *have;
		if (strncmp(c, TEST_PREFIX, strlen(TEST_PREFIX)) == 0 &&
		    parse_test_meta(c, &r, s->arena)) {
			/* the samples' numbers win; the rest only the metadata knows */
			have = find_row(s, r.name);
			if (have) {
				have->wall_ns = r.wall_ns;
				have->source = r.source;
				have->exit_status = r.exit_status;
				have->has_exit = r.has_exit;
				have->count = r.count;
				have->cpu_ns = r.cpu_ns;
				have->runner_ns = r.runner_ns;
				have->parent = r.parent;
				memcpy(have->mem, r.mem, sizeof(r.mem));
			} else {
				/* a test that ran without being sampled is still a test */
				tf_vec_push(&s->rows, r);
			}
			continue;
		}
		if (strncmp(c, META_PREFIX, strlen(META_PREFIX)) == 0)
			tf_vec_push(&s->meta, c + strlen(META_PREFIX));
		else
			tf_vec_push(&s->comments, c);
	}
	if (s->rows.n > 1)
		qsort(s->rows.v, s->rows.n, sizeof(*s->rows.v), cmp_row);
	for (size_t i = 0; i < s->rows.n; i++) {
		test_row *r = &s->rows.v[i];
		if (is_build(r) && !s->build) {
			/* out of the test list, kept for its own line */
			s->build = tf_arena_alloc(s->arena, sizeof(*s->build));
			*s->build = *r;
			memmove(r, r + 1, (s->rows.n - i - 1) * sizeof(*r));
			s->rows.n--;
			i--;
			continue;
		}
		s->any_wall |= r->wall_ns >= 0;
		s->any_measured |= !isnan(r->count) || !isnan(r->cpu_ns) || !isnan(r->runner_ns);
		s->any_source |= r->source != NULL;
		s->any_exit |= r->has_exit;
		s->any_memory |= !isnan(r->mem[0]) || !isnan(r->mem[5]);
	}
	if (s->meta.n > 1)
		qsort(s->meta.v, s->meta.n, sizeof(*s->meta.v), cmp_str);
	return 0;
}

static void summary_free(summary *s)
{
	tf_label_groups_free(s->tests);
	tf_label_groups_free(s->procs);
	tf_vec_free(&s->rows);
	tf_vec_free(&s->meta);
	tf_vec_free(&s->comments);
	tf_arena_free(s->arena);
}

static const char *type_of(const tf_profile *p, int i)
{
	return i >= 0 ? tf_profile_str(p, p->sample_types.v[i].type) : "";
}

static const char *unit_of(const tf_profile *p, int i)
{
	return i >= 0 ? tf_profile_str(p, p->sample_types.v[i].unit) : "";
}

static void format_time(char *buf, size_t n, int64_t nanos)
{
	time_t t = (time_t)(nanos / 1000000000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, n, "%lld", (long long)nanos);
}

static double share(int64_t v, int64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

/* text */

static void put_cell(tf_buf *b, const char *s, int width, bool left)
{
	tf_buf cell = TF_BUF_INIT;
	tf_buf_put_printable(&cell, s);
	tf_buf_printf(b, left ? "%-*s" : "%*s", width, cell.ptr ? cell.ptr : "");
	tf_buf_free(&cell);
}

static int name_width(const char *const *names, size_t n, const char *header)
{
	size_t w = strlen(header);
	for (size_t i = 0; i < n; i++) {
		tf_buf cell = TF_BUF_INIT;
		tf_buf_put_printable(&cell, names[i]);
		w = TF_MAX(w, cell.len);
		tf_buf_free(&cell);
	}
	return (int)TF_MIN(w, (size_t)80);
}

static void text_header(tf_buf *b, const summary *s)
{
	const tf_profile *p = s->p;
	char v[64];

	tf_buf_puts(b, "File: ");
	tf_buf_put_printable(b, s->file);
	tf_buf_puts(b, "\nSample types:");
	for (size_t i = 0; i < p->sample_types.n; i++) {
		tf_buf_puts(b, i ? ", " : " ");
		tf_buf_put_printable(b, type_of(p, (int)i));
		tf_buf_putc(b, '/');
		tf_buf_put_printable(b, unit_of(p, (int)i));
		if ((int)i == s->vi && p->sample_types.n > 1)
			tf_buf_puts(b, " (default)");
	}
	tf_buf_putc(b, '\n');
	if (tf_profile_made_by(v, sizeof(v), p)) {
		tf_buf_puts(b, "Made by: ");
		tf_buf_put_printable(b, v);
		tf_buf_printf(b, ", measure %ld\n", tf_profile_measure(p));
	}
	if (p->period) {
		const char *unit = tf_profile_str(p, p->period_type.unit);
		tf_buf_printf(b, "Period: %s", tf_value_format(v, sizeof(v), p->period, unit));
		if (p->period_type.type) {
			tf_buf_puts(b, " of ");
			tf_buf_put_printable(b, tf_profile_str(p, p->period_type.type));
		}
		tf_buf_putc(b, '\n');
	}
	if (p->time_nanos) {
		format_time(v, sizeof(v), p->time_nanos);
		tf_buf_printf(b, "Time: %s\n", v);
	}
	if (p->duration_nanos)
		tf_buf_printf(b, "Duration: %s\n",
			      tf_value_format(v, sizeof(v), p->duration_nanos, "nanoseconds"));
}

static void text_meta(tf_buf *b, const summary *s)
{
	int w = 0;

	if (!s->meta.n && !s->comments.n)
		return;
	tf_buf_puts(b, "\nMetadata:\n");
	for (size_t i = 0; i < s->meta.n; i++) {
		const char *eq = strchr(s->meta.v[i], '=');
		w = TF_MAX(w, (int)(eq - s->meta.v[i]));
	}
	for (size_t i = 0; i < s->meta.n; i++) {
		const char *kv = s->meta.v[i], *eq = strchr(kv, '=');
		char *key = tf_xstrndup(kv, (size_t)(eq - kv));
		tf_buf_puts(b, "  ");
		put_cell(b, key, w, true);
		tf_buf_puts(b, "  ");
		tf_buf_put_printable(b, eq + 1);
		tf_buf_putc(b, '\n');
		free(key);
	}
	for (size_t i = 0; i < s->comments.n; i++) {
		tf_buf_puts(b, "  comment: ");
		tf_buf_put_printable(b, s->comments.v[i]);
		tf_buf_putc(b, '\n');
	}
}

static void text_totals(tf_buf *b, const summary *s)
{
	const tf_profile *p = s->p;
	char v[64];

	tf_buf_puts(b, "\nTotals:\n");
	tf_buf_printf(b, "  %-14s %lld\n", "samples", (long long)s->total_samples);
	for (size_t i = 0; i < p->sample_types.n; i++) {
		if ((int)i == s->si)
			continue;
		tf_buf_puts(b, "  ");
		put_cell(b, type_of(p, (int)i), 14, true);
		tf_buf_printf(b, " %s\n", tf_value_format(v, sizeof(v), tf_profile_total(p, i),
							  unit_of(p, (int)i)));
	}
	for (size_t i = 0; i < TF_ARRAY_SIZE(loss_keys); i++) {
		const char *val = tf_profile_meta(p, loss_keys[i]);
		if (val) {
			tf_buf_printf(b, "  %-14s ", loss_keys[i]);
			tf_buf_put_printable(b, val);
			tf_buf_putc(b, '\n');
		}
	}
	tf_buf_printf(b, "  %-14s %zu of %zu locations\n", "unsymbolized", s->unsymbolized,
		      p->locations.n);
}

/* One line of the tests table; the optional columns only when some test has them. */
static void text_test_row(tf_buf *b, const summary *s, const test_row *r, int w)
{
	char v[64];

	tf_buf_puts(b, "  ");
	put_cell(b, r->name, w, true);
	tf_buf_printf(b, " %10lld %6.2f%% %10s", (long long)r->samples, share(r->value, s->total_value),
		      tf_value_format(v, sizeof(v), r->value, unit_of(s->p, s->vi)));
	if (s->any_measured) {
		/* the best exact measure, as the comparison picks it */
		if (!isnan(r->count))
			tf_value_format(v, sizeof(v), (int64_t)r->count, unit_of(s->p, s->vi));
		else if (!isnan(r->cpu_ns))
			tf_value_format(v, sizeof(v), (int64_t)r->cpu_ns, "nanoseconds");
		else if (!isnan(r->runner_ns))
			tf_value_format(v, sizeof(v), (int64_t)r->runner_ns, "nanoseconds");
		else
			snprintf(v, sizeof(v), "-");
		tf_buf_printf(b, " %10s", v);
	}
	if (s->any_wall)
		tf_buf_printf(b, " %10s", r->wall_ns < 0 ? "-" :
			      tf_value_format(v, sizeof(v), r->wall_ns, "nanoseconds"));
	if (s->any_source) {
		tf_buf_putc(b, ' ');
		put_cell(b, r->source ? r->source : "-", 8, true);
	}
	if (s->any_exit) {
		if (r->has_exit)
			tf_buf_printf(b, " %4d", r->exit_status);
		else
			tf_buf_printf(b, " %4s", "-");
	}
	/* no trailing blanks after a left-aligned last column */
	while (b->len && b->ptr[b->len - 1] == ' ')
		b->ptr[--b->len] = '\0';
	tf_buf_putc(b, '\n');
}

/*
 * The tests that hold tests (a libtest or Go test binary, a ctest test
 * running GoogleTest or cmocka): their samples are their work outside
 * their tests, but their measured cost is the whole program's, their
 * tests' included, and the comparison judges them through their tests.
 * Said under the table, so that the column is not read as the remainder.
 */
static void text_holders(tf_buf *b, const summary *s)
{
	TF_VEC(const char *) parents = { 0 };
	size_t n = 0;

	for (size_t i = 0; i < s->rows.n; i++)
		if (s->rows.v[i].parent)
			tf_vec_push(&parents, s->rows.v[i].parent);
	if (parents.n > 1)
		qsort(parents.v, parents.n, sizeof(*parents.v), cmp_str);
	for (size_t i = 0; i < s->rows.n && parents.n; i++) {
		const test_row *r = &s->rows.v[i];
		if ((isnan(r->count) && isnan(r->cpu_ns)) ||
		    !bsearch(&r->name, parents.v, parents.n, sizeof(*parents.v), cmp_str))
			continue;
		tf_buf_puts(b, n++ ? ", " : "\nHolding tests (measured: the whole program, its tests included; "
					    "compared through its tests): ");
		tf_buf_puts(b, r->name);
	}
	if (n)
		tf_buf_putc(b, '\n');
	tf_vec_free(&parents);
}

static void text_tests(tf_buf *b, const summary *s)
{
	TF_VEC(const char *) names = { 0 };
	int w;

	if (!s->rows.n) {
		tf_buf_puts(b, "\nTests: none (no sample carries a 'test' label)\n");
	} else {
		for (size_t i = 0; i < s->rows.n; i++)
			tf_vec_push(&names, s->rows.v[i].name);
		w = name_width(names.v, names.n, "test");
		tf_buf_printf(b, "\nTests (%zu):\n  ", s->rows.n);
		put_cell(b, "test", w, true);
		tf_buf_printf(b, " %10s %7s %10s", "samples", "share",
			      s->vi >= 0 ? type_of(s->p, s->vi) : "value");
		if (s->any_measured)
			tf_buf_printf(b, " %10s", "measured");
		if (s->any_wall)
			tf_buf_printf(b, " %10s", "wall");
		if (s->any_source)
			tf_buf_printf(b, " %-8s", "source");
		if (s->any_exit)
			tf_buf_printf(b, " %4s", "exit");
		while (b->len && b->ptr[b->len - 1] == ' ')
			b->ptr[--b->len] = '\0';
		tf_buf_putc(b, '\n');
		for (size_t i = 0; i < s->rows.n; i++)
			text_test_row(b, s, &s->rows.v[i], w);
		tf_vec_free(&names);
		if (s->any_measured)
			text_holders(b, s);
	}
	if (s->build) {
		char v[64], wall[64] = "";
		if (s->build->wall_ns >= 0)
			snprintf(wall, sizeof(wall), ", %s wall",
				 tf_value_format(v, sizeof(v), s->build->wall_ns, "nanoseconds"));
		tf_buf_printf(b, "\nBuild steps (not tests): %lld samples, %.2f%%, %s%s\n",
			      (long long)s->build->samples, share(s->build->value, s->total_value),
			      tf_value_format(v, sizeof(v), s->build->value, unit_of(s->p, s->vi)), wall);
	}
}

static void text_processes(tf_buf *b, const summary *s)
{
	TF_VEC(const char *) names = { 0 };
	int w;

	if (!s->procs->any_labelled)
		return;
	for (size_t i = 0; i < s->procs->n; i++) {
		const char *name = s->procs->groups[i].value;
		tf_vec_push(&names, name ? name : "(no process label)");
	}
	w = name_width(names.v, names.n, "process");
	tf_buf_printf(b, "\nProcesses (%zu):\n  ", s->procs->n);
	put_cell(b, "process", w, true);
	tf_buf_printf(b, " %10s %6s %8s\n", "samples", "pids", "threads");
	for (size_t i = 0; i < s->procs->n; i++) {
		const tf_label_group *g = &s->procs->groups[i];
		tf_buf_puts(b, "  ");
		put_cell(b, names.v[i], w, true);
		tf_buf_printf(b, " %10lld %6zu %8zu\n", (long long)group_samples(s, g),
			      g->distinct[0], g->distinct[1]);
	}
	tf_vec_free(&names);
}

/* Each test's memory, when the run measured it: counted allocations and
 * bytes, frees, the sampled live-heap peak and leak, the peak RSS. */
static void text_memory(tf_buf *b, const summary *s)
{
	static const char *const heads[MEM_SHOWN] = {
		"allocs", "allocated", "frees", "heap peak", "leaked", "peak RSS",
	};
	TF_VEC(const char *) names = { 0 };

	if (!s->any_memory)
		return;
	for (size_t i = 0; i < s->rows.n; i++)
		tf_vec_push(&names, s->rows.v[i].name);
	int w = name_width(names.v, names.n, "test");
	tf_buf_puts(b, "\nMemory:\n  ");
	put_cell(b, "test", w, true);
	for (int k = 0; k < MEM_SHOWN; k++)
		tf_buf_printf(b, " %10s", heads[k]);
	tf_buf_putc(b, '\n');
	for (size_t i = 0; i < s->rows.n; i++) {
		const test_row *r = &s->rows.v[i];
		char v[64];
		tf_buf_puts(b, "  ");
		put_cell(b, r->name, w, true);
		for (int k = 0; k < MEM_SHOWN; k++) {
			/* counts as they are; sizes in bytes */
			bool count = k == 0 || k == 2;
			if (isnan(r->mem[k]))
				snprintf(v, sizeof(v), "-");
			else
				tf_value_format(v, sizeof(v), (int64_t)r->mem[k], count ? NULL : "bytes");
			tf_buf_printf(b, " %10s", v);
		}
		tf_buf_putc(b, '\n');
	}
	tf_vec_free(&names);
}

static char *show_text(const summary *s)
{
	tf_buf b = TF_BUF_INIT;
	text_header(&b, s);
	text_meta(&b, s);
	text_totals(&b, s);
	text_tests(&b, s);
	text_memory(&b, s);
	text_processes(&b, s);
	return tf_buf_detach(&b);
}

/* JSON: every string is made valid UTF-8 first; jansson escapes the rest. */

static json_t *jstr(const char *s)
{
	tf_buf b = TF_BUF_INIT;
	json_t *j;
	tf_buf_put_utf8(&b, s ? s : "", s ? strlen(s) : 0);
	j = json_stringn(b.ptr ? b.ptr : "", b.len);
	tf_buf_free(&b);
	return j ? j : json_string("");
}

/* A metadata number as a JSON integer, a string if it is not one, or null. */
static json_t *jmeta_num(const tf_profile *p, const char *key)
{
	const char *v = tf_profile_meta(p, key);
	char *end;
	long long n;

	if (!v)
		return json_null();
	n = strtoll(v, &end, 10);
	return *v && !*end ? json_integer(n) : jstr(v);
}

static json_t *json_value_type(const tf_profile *p, tf_strid type, tf_strid unit)
{
	return json_pack("{s:o,s:o}", "type", jstr(tf_profile_str(p, type)), "unit",
			 jstr(tf_profile_str(p, unit)));
}

static json_t *jmaybe(double v)
{
	return isnan(v) ? json_null() : json_integer((json_int_t)v);
}

static json_t *json_memory(const test_row *r)
{
	json_t *o = json_object();
	bool any = false;
	for (int k = 0; k < MEM_SHOWN; k++) {
		json_object_set_new(o, mem_keys[k], jmaybe(r->mem[k]));
		any |= !isnan(r->mem[k]);
	}
	if (any)
		return o;
	json_decref(o);
	return json_null();
}

static json_t *json_test(const summary *s, const test_row *r)
{
	return json_pack("{s:o,s:I,s:f,s:I,s:o,s:o,s:o,s:b,s:o,s:o,s:o,s:o,s:o}", "name", jstr(r->name),
			 "samples", (json_int_t)r->samples,
			 "share", share(r->value, s->total_value) / 100.0,
			 "value", (json_int_t)r->value,
			 "wall_ns", r->wall_ns >= 0 ? json_integer(r->wall_ns) : json_null(),
			 "source", r->source ? jstr(r->source) : json_null(),
			 "exit", r->has_exit ? json_integer(r->exit_status) : json_null(),
			 "sampled", r->from_samples,
			 "count", jmaybe(r->count),
			 "cpu_ns", jmaybe(r->cpu_ns),
			 "runner_ns", jmaybe(r->runner_ns),
			 "parent", r->parent ? jstr(r->parent) : json_null(),
			 "memory", json_memory(r));
}

static char *show_json(const summary *s)
{
	const tf_profile *p = s->p;
	json_t *root = json_object(), *types = json_array(), *meta = json_object();
	json_t *comments = json_array(), *totals = json_object(), *values = json_object();
	json_t *tests = json_array(), *procs = json_array();
	char buf[64];
	char *text;

	json_object_set_new(root, "file", jstr(s->file));
	for (size_t i = 0; i < p->sample_types.n; i++)
		json_array_append_new(types, json_value_type(p, p->sample_types.v[i].type,
							     p->sample_types.v[i].unit));
	json_object_set_new(root, "sample_types", types);
	json_object_set_new(root, "default_sample_type", s->vi >= 0 ? jstr(type_of(p, s->vi)) : json_null());
	json_object_set_new(root, "period_type", p->period_type.type || p->period_type.unit ?
			    json_value_type(p, p->period_type.type, p->period_type.unit) : json_null());
	json_object_set_new(root, "period", json_integer(p->period));
	if (p->time_nanos)
		format_time(buf, sizeof(buf), p->time_nanos);
	json_object_set_new(root, "time", p->time_nanos ? jstr(buf) : json_null());
	json_object_set_new(root, "duration_ns", json_integer(p->duration_nanos));

	for (size_t i = 0; i < s->meta.n; i++) {
		const char *kv = s->meta.v[i], *eq = strchr(kv, '=');
		char *key = tf_xstrndup(kv, (size_t)(eq - kv));
		tf_buf k = TF_BUF_INIT;
		tf_buf_put_utf8(&k, key, strlen(key));
		json_object_set_new(meta, k.ptr ? k.ptr : "", jstr(eq + 1));
		tf_buf_free(&k);
		free(key);
	}
	json_object_set_new(root, "metadata", meta);
	json_object_set_new(root, "made_by", tf_profile_made_by(buf, sizeof(buf), p) ? jstr(buf) : json_null());
	json_object_set_new(root, "measure", json_integer(tf_profile_measure(p)));
	{
		/* the run's git and CI context, typed (pr a number, dirty a bool) */
		tf_buf ctx = TF_BUF_INIT;
		json_t *cj = NULL;
		if (tf_context_meta_to_json(&ctx, p) == 0 && ctx.ptr)
			cj = json_loads(ctx.ptr, 0, NULL);
		json_object_set_new(root, "context", cj ? cj : json_null());
		tf_buf_free(&ctx);
	}
	for (size_t i = 0; i < s->comments.n; i++)
		json_array_append_new(comments, jstr(s->comments.v[i]));
	json_object_set_new(root, "comments", comments);

	json_object_set_new(totals, "records", json_integer((json_int_t)p->samples.n));
	json_object_set_new(totals, "samples", json_integer(s->total_samples));
	json_object_set_new(totals, "value", json_integer(s->total_value));
	json_object_set_new(totals, "unit", jstr(unit_of(p, s->vi)));
	for (size_t i = 0; i < p->sample_types.n; i++) {
		tf_buf k = TF_BUF_INIT;
		const char *t = type_of(p, (int)i);
		tf_buf_put_utf8(&k, t, strlen(t));
		json_object_set_new(values, k.ptr ? k.ptr : "", json_integer(tf_profile_total(p, i)));
		tf_buf_free(&k);
	}
	json_object_set_new(totals, "values", values);
	for (size_t i = 0; i < TF_ARRAY_SIZE(loss_keys); i++)
		json_object_set_new(totals, loss_keys[i], jmeta_num(p, loss_keys[i]));
	json_object_set_new(totals, "locations", json_integer((json_int_t)p->locations.n));
	json_object_set_new(totals, "unsymbolized_locations", json_integer((json_int_t)s->unsymbolized));
	json_object_set_new(root, "totals", totals);

	for (size_t i = 0; i < s->rows.n; i++)
		json_array_append_new(tests, json_test(s, &s->rows.v[i]));
	json_object_set_new(root, "tests", tests);
	json_object_set_new(root, "build", s->build ? json_test(s, s->build) : json_null());
	for (size_t i = 0; i < s->procs->n && s->procs->any_labelled; i++) {
		const tf_label_group *g = &s->procs->groups[i];
		json_array_append_new(procs, json_pack("{s:o,s:I,s:I,s:I}",
						       "name", g->value ? jstr(g->value) : json_null(),
						       "samples", (json_int_t)group_samples(s, g),
						       "pids", (json_int_t)g->distinct[0],
						       "threads", (json_int_t)g->distinct[1]));
	}
	json_object_set_new(root, "processes", procs);

	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return text;
}

int tf_report_show(tf_buf *out, const tf_profile *p, const char *file, bool json)
{
	summary s;
	char *text;
	int rc = summarize(&s, p, file);

	if (rc == 0) {
		text = json ? show_json(&s) : show_text(&s);
		if (!text) {
			rc = tf_error_set(TF_ERROR, "cannot format the summary of '%s'", file);
		} else {
			tf_buf_puts(out, text);
			if (json)
				tf_buf_putc(out, '\n');
			free(text);
		}
	}
	summary_free(&s);
	return rc;
}
