/*
 * test_compare.c - the comparison engine on profiles built in memory with
 * known contents: per-test aggregation (labels, foreign profiles, several
 * runs), refusal of mismatched events, value and test selection, run
 * metadata, function deltas (self, total once per stack, inlined frames,
 * the line that grew), diff trees, report.json and the terminal table.
 */
#include "unit.h"
#include "testflame/compare.h"

#include <jansson.h>
#include <math.h>

#define PERIOD 10000000 /* 10 ms of CPU per sample */

static tf_profile *new_run(const char *event)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period = PERIOD;
	p->period_type.type = tf_profile_intern(p, "cpu");
	p->period_type.unit = tf_profile_intern(p, "nanoseconds");
	if (event)
		tf_profile_set_meta(p, "event", event);
	return p;
}

/*
 * Add `n` samples of `test` (NULL: no label) with stack `stack`, root first:
 * "main:3;work:7;hot:10" - frames "function:line" (file "src/<function>.c",
 * first line 1); "outer:3+inl:7" is one location where inl was inlined
 * into outer; "@0x1234" a location without symbols in mapping "/bin/app".
 */
static void add_at(tf_profile *p, const char *test, int64_t n, const char *stack, int64_t period);

static void add(tf_profile *p, const char *test, int64_t n, const char *stack)
{
	add_at(p, test, n, stack, PERIOD);
}

/* add() at another sampling period. */
static void add_at(tf_profile *p, const char *test, int64_t n, const char *stack, int64_t period)
{
	uint32_t locs[64];
	uint32_t nlocs = 0;
	char buf[512];

	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *save = NULL, *f = strtok_r(buf, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		tf_line lines[4];
		uint32_t nl = 0;
		if (f[0] == '@') {
			tf_mapping m = { 0x400000, 0x500000, 0, tf_profile_intern(p, "/bin/app"), 0, 0 };
			uint32_t mi = tf_profile_add_mapping(p, &m);
			locs[nlocs++] = tf_profile_add_location(p, mi, strtoull(f + 1, NULL, 16), NULL, 0);
			continue;
		}
		/* "outer:3+inl:7": lines are stored innermost first */
		char *parts[4];
		int np = 0;
		for (char *s2 = NULL, *q = strtok_r(f, "+", &s2); q && np < 4; q = strtok_r(NULL, "+", &s2))
			parts[np++] = q;
		for (int k = np; k-- > 0;) {
			char name[256], file[300];
			long line = 0;
			char *colon = strrchr(parts[k], ':');
			snprintf(name, sizeof(name), "%.*s", colon ? (int)(colon - parts[k]) : (int)strlen(parts[k]), parts[k]);
			if (colon)
				line = atol(colon + 1);
			/* a C++ name's file: "src/emitterutils.c" for "YAML::Utils::WriteAlias(...)" */
			if (strchr(name, '('))
				snprintf(file, sizeof(file), "src/emitterutils.c");
			else
				snprintf(file, sizeof(file), "src/%s.c", name);
			lines[nl].function = tf_profile_function(p, name, file, 1);
			lines[nl].line = line;
			lines[nl].column = 0;
			nl++;
		}
		locs[nlocs++] = tf_profile_add_location(p, TF_NO_MAPPING, 0, lines, nl);
	}
	/* leaf first */
	for (uint32_t i = 0; i < nlocs / 2; i++) {
		uint32_t t = locs[i];
		locs[i] = locs[nlocs - 1 - i];
		locs[nlocs - 1 - i] = t;
	}
	int64_t v[5] = { n, n * period }; /* memory's columns too (new_mem_run) */
	tf_label lab = { tf_profile_intern(p, "test"), test ? tf_profile_intern(p, test) : 0, 0, 0 };
	tf_profile_add_sample(p, locs, nlocs, v, &lab, test ? 1 : 0);
}

static tf_comparison *compare_n(tf_profile **b, size_t nb, tf_profile **h, size_t nh,
				const tf_compare_opts *o)
{
	tf_comparison *c = NULL;
	tf_compare_side bs = { (const tf_profile *const *)b, NULL, nb };
	tf_compare_side hs = { (const tf_profile *const *)h, NULL, nh };
	int rc = tf_compare(&c, &bs, &hs, o);
	if (rc)
		fail_msg("tf_compare: %s", tf_error_last());
	return c;
}

static tf_comparison *compare1(tf_profile *b, tf_profile *h, const tf_compare_opts *o)
{
	return compare_n(&b, 1, &h, 1, o);
}

/* A run that measured memory: `n` sampled allocations of `bytes` each in
 * `test` at the stack, and the test's counts in its metadata (allocs < 0:
 * none, a test the sampler could not enter). */
static tf_profile *new_mem_run(void)
{
	tf_profile *p = new_run("cpu-clock");
	tf_profile_add_sample_type(p, "alloc_objects", "count");
	tf_profile_add_sample_type(p, "alloc_space", "bytes");
	tf_profile_add_sample_type(p, "inuse_space", "bytes");
	tf_profile_set_meta(p, "alloc_rate", "524288");
	return p;
}

static void add_alloc(tf_profile *p, const char *test, int64_t n, int64_t bytes, const char *fn,
		      const char *caller)
{
	tf_line a = { tf_profile_function(p, fn, "src/lib.c", 10), 42, 0 };
	tf_line b = { tf_profile_function(p, caller, "src/main.c", 1), 7, 0 };
	uint32_t locs[2] = { tf_profile_add_location(p, TF_NO_MAPPING, 0, &a, 1),
			     tf_profile_add_location(p, TF_NO_MAPPING, 0, &b, 1) };
	int64_t v[5] = { 0, 0, n, n * bytes, 0 };
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	tf_profile_add_sample(p, locs, 2, v, &lab, 1);
}

static void mem_meta(tf_profile *p, const char *test, double allocs, double bytes, double samples)
{
	tf_test_meta m;
	tf_test_meta_init(&m);
	m.name = (char *)test;
	m.source = "process";
	if (allocs >= 0) {
		m.allocs = allocs;
		m.alloc_bytes = bytes;
		m.frees = allocs;
		m.alloc_samples = samples;
	}
	tf_test_meta_set(p, &m);
}

/* A comparison of alloc_space is of memory: each test by its exact bytes,
 * the allocations' noise, gate.memory.min_bytes as the least change, the
 * function's caller; a test the sampler could not enter left out. */
static void test_memory_comparison(void **state)
{
	(void)state;
	tf_profile *b = new_mem_run(), *h = new_mem_run();
	const char *names[] = { "grows", "small", "same1", "same2", "same3" };
	for (int i = 0; i < 5; i++) {
		add(b, names[i], 2, "main:1;work:2");
		add(h, names[i], 2, "main:1;work:2");
	}
	/* grows: 100 KiB to 1 MiB, the growth in grow_cache called from setup */
	add_alloc(b, "grows", 20, 5120, "grow_cache", "setup");
	add_alloc(h, "grows", 200, 5120, "grow_cache", "setup");
	mem_meta(b, "grows", 100, 102400, 20);
	mem_meta(h, "grows", 1000, 1024000, 200);
	/* small: +50%, but 2 KiB: under min_bytes */
	add_alloc(b, "small", 4, 1024, "helper", "setup");
	add_alloc(h, "small", 6, 1024, "helper", "setup");
	mem_meta(b, "small", 4, 4096, 4);
	mem_meta(h, "small", 6, 6144, 6);
	for (int i = 2; i < 5; i++) {
		add_alloc(b, names[i], 10, 1000, "helper", "setup");
		add_alloc(h, names[i], 10, 1000, "helper", "setup");
		mem_meta(b, names[i], 10, 10000, 10);
		mem_meta(h, names[i], 10, 10000, 10);
	}
	mem_meta(b, "static", -1, 0, 0);
	mem_meta(h, "static", -1, 0, 0);

	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.value = "alloc_space";
	o.threshold = 10;
	o.min_delta_bytes = 4096;
	tf_comparison *c = compare1(b, h, &o);
	assert_true(c->summary.memory);
	assert_string_equal(c->summary.event, "alloc_space");
	assert_true(isnan(c->summary.shift_pct));
	assert_int_equal(c->summary.unmeasured, 1);
	assert_null(tf_comparison_find(c, "static"));
	const tf_test_delta *g = tf_comparison_find(c, "grows");
	assert_int_equal(g->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(g->measure, TF_MEASURE_COUNT);
	assert_true(g->base.cost == 102400 && g->head.cost == 1024000);
	assert_true(g->base.allocs == 100 && g->head.allocs == 1000);
	assert_non_null(strstr(g->reason, "allocates more by"));
	assert_true(g->nfunctions >= 1);
	assert_string_equal(g->functions[0].name, "grow_cache");
	assert_int_equal(g->functions[0].line, 42);
	assert_string_equal(g->functions[0].caller, "setup");
	assert_int_equal(g->functions[0].caller_line, 7);
	const tf_test_delta *sm = tf_comparison_find(c, "small");
	assert_int_equal(sm->verdict, TF_VERDICT_UNCHANGED);
	assert_non_null(strstr(sm->reason, "gate.memory.min_bytes"));
	assert_int_equal(tf_comparison_find(c, "same1")->verdict, TF_VERDICT_UNCHANGED);

	tf_buf out = TF_BUF_INIT;
	assert_int_equal(tf_comparison_to_json_memory(&out, c, c, true), 0);
	json_t *root = json_loads(out.ptr, 0, NULL);
	assert_non_null(root);
	json_t *m = json_object_get(root, "memory");
	assert_true(json_is_true(json_object_get(m, "gated")));
	assert_int_equal(json_integer_value(json_object_get(m, "unmeasured")), 1);
	json_decref(root);
	tf_buf_clear(&out);
	assert_int_equal(tf_comparison_render_table(&out, c, NULL), 0);
	assert_non_null(strstr(out.ptr, "MEMORY REGRESSION: 1 test allocates more by at least 10%"));
	assert_non_null(strstr(out.ptr, "from setup  main.c:7"));
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_aggregation_and_verdicts(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	add(b, "A", 1000, "main:1;a:2");
	add(b, "B", 600, "main:1;b:2");
	add(b, "B", 400, "main:1;b:2;c:3");
	add(b, "gone", 300, "main:1;g:2");
	add(b, NULL, 10, "main:1");
	add(h, "A", 1300, "main:1;a:2");
	add(h, "B", 1000, "main:1;b:2");
	add(h, "new", 40, "main:1;n:2");
	add(h, NULL, 10, "main:1");
	tf_comparison *c = compare1(b, h, NULL);

	assert_int_equal(c->ntests, 5);
	const tf_test_delta *a = tf_comparison_find(c, "A");
	assert_non_null(a);
	assert_int_equal(a->verdict, TF_VERDICT_REGRESSED);
	assert_true(fabs(a->delta_pct - 30) < 1e-9);
	assert_true(a->base.cost == 1000.0 * PERIOD && a->head.cost == 1300.0 * PERIOD);
	assert_int_equal(a->base.samples, 1000);
	assert_int_equal(a->method, TF_METHOD_POISSON);
	assert_true(a->ci_low_pct < 30 && a->ci_high_pct > 30);
	assert_true(isnan(a->base.wall_ns));
	/* a test whose samples merge into fewer stacks is the same test */
	assert_int_equal(tf_comparison_find(c, "B")->verdict, TF_VERDICT_UNCHANGED);
	assert_true(fabs(tf_comparison_find(c, "B")->delta_pct) < 1e-9);
	assert_int_equal(tf_comparison_find(c, "gone")->verdict, TF_VERDICT_GONE);
	assert_int_equal(tf_comparison_find(c, "new")->verdict, TF_VERDICT_NEW);
	assert_true(isnan(tf_comparison_find(c, "new")->delta_pct));
	/* unlabelled samples of a labelled run are kept apart, and 10 samples
	 * are too few to call anything unchanged at a 5% threshold */
	assert_int_equal(tf_comparison_find(c, "[unattributed]")->verdict, TF_VERDICT_INCONCLUSIVE);
	/* report order: regressed first, unchanged last */
	assert_string_equal(c->tests[0].name, "A");
	assert_int_equal(c->tests[c->ntests - 1].verdict, TF_VERDICT_UNCHANGED);
	assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], 1);
	assert_int_equal(c->summary.count[TF_VERDICT_NEW], 1);
	assert_true(tf_comparison_regressed(c));
	assert_string_equal(c->summary.event, "cpu-clock");
	assert_string_equal(c->summary.unit, "nanoseconds");
	assert_true(c->summary.noise == 1.5);
	assert_true(c->summary.base_cost == 2310.0 * PERIOD);
	assert_int_equal(c->summary.head_samples, 2350);
	assert_int_equal(c->base_column[0], 1);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_foreign_profile_is_one_test(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	add(b, NULL, 500, "main:1;x:2");
	add(h, NULL, 500, "main:1;x:2");
	tf_comparison *c = compare1(b, h, NULL);
	assert_int_equal(c->ntests, 1);
	assert_string_equal(c->tests[0].name, "all");
	assert_string_equal(c->summary.event, "cpu");
	assert_int_equal(c->tests[0].verdict, TF_VERDICT_UNCHANGED);
	tf_comparison_free(c);

	tf_profile_set_meta(b, "suite", "unit-tests");
	tf_profile_set_meta(h, "suite", "unit-tests");
	c = compare1(b, h, NULL);
	assert_string_equal(c->tests[0].name, "unit-tests");
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_mismatched_events(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h, *i;
	tf_comparison *c = NULL;
	const char *names_b[] = { "base.pb.gz" }, *names_h[] = { "head.pb.gz" };

	add(b, "A", 100, "main");
	/* a different value type */
	tf_profile_new(&h);
	tf_profile_add_sample_type(h, "samples", "count");
	tf_profile_add_sample_type(h, "instructions", "count");
	add(h, "A", 100, "main");
	tf_compare_side bs = { (const tf_profile *const *)&b, names_b, 1 };
	tf_compare_side hs = { (const tf_profile *const *)&h, names_h, 1 };
	assert_int_equal(tf_compare(&c, &bs, &hs, NULL), TF_EINVAL);
	assert_null(c);
	assert_non_null(strstr(tf_error_last(), "cpu/nanoseconds"));
	assert_non_null(strstr(tf_error_last(), "instructions/count"));
	assert_non_null(strstr(tf_error_last(), "base.pb.gz"));
	assert_non_null(strstr(tf_error_last(), "head.pb.gz"));
	/* the same column, different events in the metadata */
	i = new_run("wall");
	add(i, "A", 100, "main");
	hs.profiles = (const tf_profile *const *)&i;
	assert_int_equal(tf_compare(&c, &bs, &hs, NULL), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "'cpu-clock'"));
	assert_non_null(strstr(tf_error_last(), "'wall'"));
	/* no profiles at all */
	hs.n = 0;
	assert_int_equal(tf_compare(&c, &bs, &hs, NULL), TF_EUSAGE);
	tf_profile_free(b);
	tf_profile_free(h);
	tf_profile_free(i);
}

static void test_value_and_test_selection(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	tf_compare_opts o;
	tf_comparison *c = NULL;

	add(b, "A", 100, "main");
	add(b, "B", 100, "main");
	add(h, "A", 100, "main");
	add(h, "B", 100, "main");
	tf_compare_opts_init(&o);
	o.value = "samples";
	c = compare1(b, h, &o);
	assert_string_equal(c->summary.unit, "count");
	assert_true(c->tests[0].base.cost == 100);
	assert_int_equal(c->base_column[0], 0);
	tf_comparison_free(c);
	o.value = "cpu/nanoseconds";
	c = compare1(b, h, &o);
	assert_true(c->tests[0].base.cost == 100.0 * PERIOD);
	tf_comparison_free(c);
	o.value = "cpu/bytes";
	tf_compare_side bs = { (const tf_profile *const *)&b, NULL, 1 };
	tf_compare_side hs = { (const tf_profile *const *)&h, NULL, 1 };
	c = NULL;
	assert_int_equal(tf_compare(&c, &bs, &hs, &o), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "samples/count, cpu/nanoseconds"));
	o.value = NULL;
	o.test = "B";
	c = compare1(b, h, &o);
	assert_int_equal(c->ntests, 1);
	assert_string_equal(c->tests[0].name, "B");
	tf_comparison_free(c);
	o.test = "Z";
	c = NULL;
	assert_int_equal(tf_compare(&c, &bs, &hs, &o), TF_ENOTFOUND);
	assert_non_null(strstr(tf_error_last(), "'Z'"));
	/* default_sample_type picks the column */
	b->default_sample_type = tf_profile_intern(b, "samples");
	h->default_sample_type = tf_profile_intern(h, "samples");
	c = compare1(b, h, NULL);
	assert_string_equal(c->summary.value_type, "samples");
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_several_runs(void **state)
{
	(void)state;
	tf_profile *b[3], *h[3];
	const int base_n[] = { 1000, 1020, 990 }, head_n[] = { 1200, 1190, 1215 };

	for (int i = 0; i < 3; i++) {
		b[i] = new_run("cpu-clock");
		h[i] = new_run("cpu-clock");
		add(b[i], "A", base_n[i], "main:1;a:2");
		add(h[i], "A", head_n[i], "main:1;a:2");
		if (i < 2)
			add(b[i], "B", 100, "main:1;b:2");
	}
	tf_comparison *c = compare_n(b, 3, h, 3, NULL);
	const tf_test_delta *a = tf_comparison_find(c, "A");
	assert_int_equal(a->method, TF_METHOD_WELCH);
	assert_true(fabs(a->base.cost - (3010.0 / 3) * PERIOD) < 1);
	assert_int_equal(a->base.runs, 3);
	assert_int_equal(a->base.samples, 3010);
	assert_int_equal(a->verdict, TF_VERDICT_REGRESSED);
	/* independent runs: Welch, 2-4 degrees of freedom */
	double narrow = a->ci_high_pct - a->ci_low_pct;
	assert_true(a->df > 2 && a->df < 5);
	/* each side a job of its own: the job-to-job part of the floor
	 * (known) comes on top of the runs' own spread */
	tf_compare_opts jo;
	tf_compare_opts_init(&jo);
	jo.separate_jobs = true;
	tf_comparison *jc = compare_n(b, 3, h, 3, &jo);
	const tf_test_delta *ja = tf_comparison_find(jc, "A");
	assert_true(ja->df > 4);
	assert_true(ja->ci_high_pct - ja->ci_low_pct > narrow);
	tf_comparison_free(jc);
	/* B ran in two base runs and no head run: gone, its base cost the
	 * mean over all three base runs */
	const tf_test_delta *bb = tf_comparison_find(c, "B");
	assert_int_equal(bb->verdict, TF_VERDICT_GONE);
	assert_int_equal(bb->base.runs, 2);
	assert_true(fabs(bb->base.cost - 200.0 / 3 * PERIOD) < 1);
	assert_int_equal(c->summary.base_runs, 3);
	tf_comparison_free(c);
	for (int i = 0; i < 3; i++) {
		tf_profile_free(b[i]);
		tf_profile_free(h[i]);
	}
}

static void test_run_metadata(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	add(b, "A", 500, "main");
	add(b, "quick", 3, "main");
	add(h, "A", 500, "main");
	tf_profile_set_meta(b, "test.A", "samples=500 value=5000000000 wall_ns=6000000000 cpu_ns=5.5s");
	tf_profile_set_meta(h, "test.A", "samples=500 value=5000000000 wall=7s");
	tf_profile_set_meta(h, "test.quick", "samples=0 value=0");
	tf_profile_set_meta(b, "commit", "0123456789abcdef");
	tf_comparison *c = compare1(b, h, NULL);
	const tf_test_delta *a = tf_comparison_find(c, "A");
	assert_true(a->base.wall_ns == 6e9);
	assert_true(a->base.cpu_ns == 5.5e9);
	assert_true(a->head.wall_ns == 7e9);
	assert_true(isnan(a->head.cpu_ns));
	/* listed in the head's metadata: it ran, it is not gone; no sample
	 * there means less than a period, not nothing */
	const tf_test_delta *q = tf_comparison_find(c, "quick");
	assert_true(q->head.ran && q->base.ran);
	assert_int_not_equal(q->verdict, TF_VERDICT_GONE);
	assert_true(q->head.cost == PERIOD);
	assert_int_equal(q->measure, TF_MEASURE_SAMPLES);
	assert_string_equal(tf_comparison_meta(c, false, "commit"), "0123456789abcdef");
	assert_null(tf_comparison_meta(c, true, "commit"));
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static const tf_func_delta *func(const tf_test_delta *t, const char *name)
{
	for (size_t i = 0; i < t->nfunctions; i++)
		if (strcmp(t->functions[i].name, name) == 0)
			return &t->functions[i];
	return NULL;
}

/* The culprit leads "where it grew": the function whose lines the change
 * touched first, then self growth; ancestors and a move of a few samples
 * (kernel noise) are left out. */
static void test_function_culprit(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	tf_profile_set_meta(h, "changes", "[{\"path\":\"src/edited.c\",\"status\":\"M\","
					  "\"lines\":[[5,5]]}]");
	add(b, "T", 1000, "_start:1;libc:2;main:3;loop:10");
	add(b, "T", 20, "_start:1;libc:2;main:3;knoise:4");
	add(b, "T", 200, "_start:1;libc:2;main:3;edited:5");
	add(h, "T", 3000, "_start:1;libc:2;main:3;loop:10");
	add(h, "T", 24, "_start:1;libc:2;main:3;knoise:4");
	add(h, "T", 260, "_start:1;libc:2;main:3;edited:5");
	tf_comparison *c = compare1(b, h, NULL);
	const tf_test_delta *t = &c->tests[0];

	assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(t->nfunctions, 2);
	assert_string_equal(t->functions[0].name, "edited");
	assert_true(t->functions[0].changed);
	assert_string_equal(t->functions[1].name, "loop");
	assert_false(t->functions[1].changed);
	assert_true(t->functions[1].delta_total == 2000.0 * PERIOD);
	/* the terminal says which one changed */
	tf_buf out = TF_BUF_INIT;
	assert_int_equal(tf_comparison_render_table(&out, c, NULL), 0);
	assert_non_null(strstr(out.ptr, "   edited  edited.c:5 (changed)\n"));
	assert_non_null(strstr(out.ptr, "   loop  loop.c:10\n"));
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/* A loop the change added around a call spends its time in the callee
 * (semver's VersionReq::matches, its inserted loop all
 * core::hint::black_box's in a debug build): the function that calls from
 * the changed line leads, at that line, though its own cost did not move. */
static void test_function_culprit_calls(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	tf_profile_set_meta(h, "changes", "[{\"path\":\"src/matches.c\",\"status\":\"M\","
					  "\"lines\":[[7,7]]}]");
	add(b, "T", 100, "main:3;matches:9");
	add(h, "T", 100, "main:3;matches:9");
	add(h, "T", 300, "main:3;matches:7;black_box:2");
	tf_comparison *c = compare1(b, h, NULL);
	const tf_test_delta *t = &c->tests[0];

	assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
	assert_true(t->nfunctions >= 2);
	assert_string_equal(t->functions[0].name, "matches");
	assert_true(t->functions[0].changed);
	assert_int_equal(t->functions[0].line, 7);
	assert_string_equal(t->functions[1].name, "black_box");
	assert_null(func(t, "main"));
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/* A long C++ name in the terminal: its argument list elided, its start
 * and its file:line kept; the summary line cut at its end, not its start. */
static void test_table_long_names(void **state)
{
	(void)state;
	const char *name = "YAML::Utils::WriteAlias(YAML::ostream_wrapper&, std::__cxx11::basic_string"
			   "<char, std::char_traits<char>, std::allocator<char> > const&)";
	char stack[512];
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	snprintf(stack, sizeof(stack), "main:1;%s:432", name);
	add(b, "T", 1000, stack);
	add(h, "T", 3000, stack);
	tf_comparison *c = compare1(b, h, NULL);
	tf_table_opts o;
	tf_table_opts_init(&o);
	o.width = 80;
	tf_buf out = TF_BUF_INIT;
	assert_int_equal(tf_comparison_render_table(&out, c, &o), 0);
	const char *row = strstr(out.ptr, "YAML::Utils::WriteAlias(\xe2\x80\xa6)");
	assert_non_null(row);
	const char *eol = strchr(row, '\n');
	assert_non_null(eol);
	assert_true(eol - row > 30 && memcmp(eol - 4, ":432", 4) == 0);
	/* no line of the table starts its text with an elision */
	assert_null(strstr(out.ptr, "\n..."));
	assert_null(strstr(out.ptr, "  ..."));
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_function_deltas(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);

	add(b, "T", 1000, "main:1;work:5;hot:10");
	add(b, "T", 500, "main:1;work:5;hot:12");
	add(b, "T", 500, "main:1;work:6");
	add(b, "T", 200, "main:1;rec:3;rec:4;rec:4");
	add(b, "T", 300, "main:1;outer:3+inl:7");
	add(h, "T", 2000, "main:1;work:5;hot:10");
	add(h, "T", 500, "main:1;work:5;hot:12");
	add(h, "T", 500, "main:1;work:6");
	add(h, "T", 400, "main:1;rec:3;rec:4;rec:4");
	add(h, "T", 600, "main:1;outer:3+inl:7");
	tf_comparison *c = compare1(b, h, NULL);
	const tf_test_delta *t = &c->tests[0];
	assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);

	/* sorted by growth of self cost; hot grew most, at line 10 */
	assert_string_equal(t->functions[0].name, "hot");
	const tf_func_delta *hot = func(t, "hot");
	assert_true(hot->delta_self == 1000.0 * PERIOD);
	assert_true(hot->base_total == 1500.0 * PERIOD);
	assert_int_equal(hot->line, 10);
	assert_string_equal(hot->file, "src/hot.c");
	/* recursion counts once per stack in total */
	const tf_func_delta *rec = func(t, "rec");
	assert_true(rec->base_total == 200.0 * PERIOD);
	assert_true(rec->head_self == 400.0 * PERIOD);
	/* inlined frames: the inlined function has the self cost */
	const tf_func_delta *inl = func(t, "inl");
	assert_true(inl->delta_self == 300.0 * PERIOD);
	assert_int_equal(inl->line, 7);
	/* ancestors whose self did not change (the inlined function's host,
	 * work, main) only pass the growth on: not listed */
	assert_null(func(t, "outer"));
	assert_null(func(t, "work"));
	assert_null(func(t, "main"));
	tf_comparison_free(c);

	/* an improvement lists what shrank, most first */
	c = compare1(h, b, NULL);
	t = &c->tests[0];
	assert_int_equal(t->verdict, TF_VERDICT_IMPROVED);
	assert_string_equal(t->functions[0].name, "hot");
	assert_true(t->functions[0].delta_self == -1000.0 * PERIOD);
	assert_int_equal(t->functions[0].line, 10);
	tf_comparison_free(c);

	/* top_functions limits the list */
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.top_functions = 2;
	c = compare1(b, h, &o);
	assert_int_equal(c->tests[0].nfunctions, 2);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_unsymbolized_frames_match_across_runs(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	add(b, "T", 1000, "main:1;@0x401000");
	add(h, "T", 2000, "main:1;@0x401000");
	tf_comparison *c = compare1(b, h, NULL);
	assert_string_equal(c->tests[0].functions[0].name, "app+0x1000");
	assert_true(c->tests[0].functions[0].delta_self == 1000.0 * PERIOD);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/* The same function built in two checkouts matches; the head's path is
 * shown. Two static functions of one name in different files do not. */
static void test_functions_match_across_checkouts(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	int64_t v1[2] = { 1000, 1000LL * PERIOD }, v2[2] = { 2000, 2000LL * PERIOD };
	tf_line lb = { tf_profile_function(b, "hot", "/ci/build1/src/hot.c", 3), 5, 0 };
	tf_line lh = { tf_profile_function(h, "hot", "/tmp/wt/src/hot.c", 3), 6, 0 };
	tf_line sb = { tf_profile_function(b, "helper", "/ci/build1/src/a.c", 1), 2, 0 };
	tf_line sh = { tf_profile_function(h, "helper", "/tmp/wt/src/b.c", 1), 2, 0 };
	uint32_t l;

	l = tf_profile_add_location(b, TF_NO_MAPPING, 0, &lb, 1);
	tf_profile_add_sample(b, &l, 1, v1, NULL, 0);
	l = tf_profile_add_location(h, TF_NO_MAPPING, 0, &lh, 1);
	tf_profile_add_sample(h, &l, 1, v2, NULL, 0);
	l = tf_profile_add_location(b, TF_NO_MAPPING, 0, &sb, 1);
	tf_profile_add_sample(b, &l, 1, v1, NULL, 0);
	l = tf_profile_add_location(h, TF_NO_MAPPING, 0, &sh, 1);
	tf_profile_add_sample(h, &l, 1, v2, NULL, 0);
	tf_comparison *c = compare1(b, h, NULL);
	const tf_test_delta *t = &c->tests[0];
	assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
	const tf_func_delta *hot = func(t, "hot");
	assert_true(hot->base_self == 1000.0 * PERIOD && hot->head_self == 2000.0 * PERIOD);
	assert_string_equal(hot->file, "/tmp/wt/src/hot.c");
	assert_int_equal(hot->line, 6);
	/* helper in b.c is new code: all of its cost is growth */
	assert_string_equal(t->functions[0].name, "helper");
	assert_string_equal(t->functions[0].file, "/tmp/wt/src/b.c");
	assert_true(t->functions[0].delta_self == 2000.0 * PERIOD);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static const tf_diff_node *child_named(const tf_diff_tree *t, uint32_t parent, const char *name)
{
	for (uint32_t i = t->nodes[parent].first_child; i != TF_DIFF_NONE; i = t->nodes[i].next_sibling)
		if (strcmp(t->nodes[i].name, name) == 0)
			return &t->nodes[i];
	return NULL;
}

/* Two subtrees alike: names, files, values, and children in the same order. */
static void assert_same_subtree(const tf_diff_tree *a, uint32_t x, const tf_diff_tree *b, uint32_t y)
{
	const tf_diff_node *p = &a->nodes[x], *q = &b->nodes[y];
	assert_true(fabs(p->base_total - q->base_total) <= 1e-9 * (1 + fabs(p->base_total)));
	assert_true(fabs(p->head_total - q->head_total) <= 1e-9 * (1 + fabs(p->head_total)));
	assert_true(fabs(p->base_self - q->base_self) <= 1e-9 * (1 + fabs(p->base_self)));
	assert_true(fabs(p->head_self - q->head_self) <= 1e-9 * (1 + fabs(p->head_self)));
	uint32_t i = p->first_child, j = q->first_child;
	for (; i != TF_DIFF_NONE && j != TF_DIFF_NONE;
	     i = a->nodes[i].next_sibling, j = b->nodes[j].next_sibling) {
		assert_string_equal(a->nodes[i].name, b->nodes[j].name);
		assert_string_equal(a->nodes[i].file, b->nodes[j].file);
		assert_int_equal(a->nodes[i].depth - p->depth, b->nodes[j].depth - q->depth);
		assert_int_equal(a->nodes[i].parent, x);
		assert_same_subtree(a, i, b, j);
	}
	assert_int_equal(i, TF_DIFF_NONE);
	assert_int_equal(j, TF_DIFF_NONE);
}

/* The forest (every test under one root, what the page draws) holds each
 * test's own tree, tests and siblings in name order, on random stacks whose
 * names are interned in no particular order. */
static void test_diff_tree_forest(void **state)
{
	(void)state;
	tf_profile *b = new_run(NULL), *h = new_run(NULL);
	const char *fn[] = { "zz", "main", "b", "a", "run", "x1", "x0", "inl", "Q" };
	uint64_t rng = 7;
	char stack[256], test[16];

	for (int i = 0; i < 400; i++) {
		size_t at = 0;
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		int depth = 1 + (int)((rng >> 33) % 6);
		snprintf(test, sizeof(test), "T%d", (int)((rng >> 40) % 7));
		for (int d = 0; d < depth; d++) {
			rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
			const char *f = fn[(rng >> 35) % 9];
			at += (size_t)snprintf(stack + at, sizeof(stack) - at, "%s%s:%d%s", d ? ";" : "", f,
					       (int)((rng >> 50) % 3) + 1, (rng >> 60) % 4 == 0 ? "+inl:2" : "");
		}
		add((rng >> 20) & 1 ? h : b, test, 1 + (int64_t)((rng >> 44) % 50), stack);
	}
	tf_comparison *c = compare1(b, h, NULL);
	tf_diff_tree *forest, *one;
	assert_int_equal(tf_comparison_diff_tree(&forest, c, TF_EACH_TEST), 0);
	assert_string_equal(forest->nodes[0].name, "all");
	const char *prev = "";
	size_t seen = 0;
	for (uint32_t k = forest->nodes[0].first_child; k != TF_DIFF_NONE; k = forest->nodes[k].next_sibling) {
		assert_true(strcmp(prev, forest->nodes[k].name) < 0);
		prev = forest->nodes[k].name;
		const tf_test_delta *t = tf_comparison_find(c, prev);
		assert_non_null(t);
		assert_int_equal(tf_comparison_diff_tree(&one, c, (size_t)(t - c->tests)), 0);
		assert_same_subtree(forest, k, one, 0);
		/* siblings in name order all the way down */
		for (size_t i = 1; i < one->n; i++) {
			uint32_t nx = one->nodes[i].next_sibling;
			if (nx != TF_DIFF_NONE)
				assert_true(strcmp(one->nodes[i].name, one->nodes[nx].name) < 0);
		}
		tf_diff_tree_free(one);
		seen++;
	}
	assert_int_equal(seen, c->ntests);
	tf_diff_tree_free(forest);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_diff_tree(void **state)
{
	(void)state;
	tf_profile *b[2] = { new_run(NULL), new_run(NULL) }, *h = new_run(NULL);
	tf_diff_tree *t;

	add(b[0], "T", 100, "main:1;work:5;hot:10");
	add(b[1], "T", 300, "main:1;work:5;hot:10");
	add(b[0], "T", 50, "main:1;outer:3+inl:7");
	add(b[1], "T", 50, "main:1;outer:3+inl:7");
	add(b[0], "U", 1000, "other");
	add(h, "T", 400, "main:1;work:5;hot:12");
	add(h, "T", 10, "main:1;work:6");
	add(h, "T", 20, "main:1;zeta:1");
	add(h, "U", 1000, "other");
	tf_comparison *c = compare_n(b, 2, &h, 1, NULL);
	size_t ti = (size_t)(tf_comparison_find(c, "T") - c->tests);

	assert_int_equal(tf_comparison_diff_tree(&t, c, ti), 0);
	assert_string_equal(t->nodes[0].name, "T");
	assert_int_equal(t->nodes[0].parent, TF_DIFF_NONE);
	/* base values are means over the two base runs */
	assert_true(t->nodes[0].base_total == 250.0 * PERIOD);
	assert_true(t->nodes[0].head_total == 430.0 * PERIOD);
	const tf_diff_node *main_ = child_named(t, 0, "main");
	assert_non_null(main_);
	assert_int_equal(main_->depth, 1);
	uint32_t mi = (uint32_t)(main_ - t->nodes);
	/* children sorted by name: outer, work, zeta */
	uint32_t k = main_->first_child;
	assert_string_equal(t->nodes[k].name, "outer");
	k = t->nodes[k].next_sibling;
	assert_string_equal(t->nodes[k].name, "work");
	k = t->nodes[k].next_sibling;
	assert_string_equal(t->nodes[k].name, "zeta");
	assert_int_equal(t->nodes[k].next_sibling, TF_DIFF_NONE);
	/* hot merged by name whatever its line; work has head self only */
	const tf_diff_node *work = child_named(t, mi, "work");
	const tf_diff_node *hot = child_named(t, (uint32_t)(work - t->nodes), "hot");
	assert_true(hot->base_self == 200.0 * PERIOD && hot->head_self == 400.0 * PERIOD);
	assert_true(work->base_self == 0 && work->head_self == 10.0 * PERIOD);
	assert_true(work->head_total == 410.0 * PERIOD);
	assert_string_equal(hot->file, "src/hot.c");
	/* the inlined function is a child frame of its host */
	const tf_diff_node *outer = child_named(t, mi, "outer");
	const tf_diff_node *inl = child_named(t, (uint32_t)(outer - t->nodes), "inl");
	assert_non_null(inl);
	assert_true(inl->base_self == 50.0 * PERIOD && outer->base_self == 0);
	assert_int_equal(inl->depth, 3);
	tf_diff_tree_free(t);

	/* all tests */
	assert_int_equal(tf_comparison_diff_tree(&t, c, TF_ALL_TESTS), 0);
	assert_string_equal(t->nodes[0].name, "all");
	assert_true(t->nodes[0].base_total == 750.0 * PERIOD);
	assert_non_null(child_named(t, 0, "other"));
	tf_diff_tree_free(t);
	assert_int_equal(tf_comparison_diff_tree(&t, c, 99), TF_EINVAL);
	tf_comparison_free(c);
	tf_profile_free(b[0]);
	tf_profile_free(b[1]);
	tf_profile_free(h);
}

static void test_json(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	const char *evil = "quote\" back\\slash\nnew\x01line \xff\xfe <b>&";
	add(b, evil, 1000, "main:1;hot:2");
	add(h, evil, 2000, "main:1;hot:2");
	add(h, "fresh", 100, "main:1");
	tf_profile_set_meta(b, "commit", "abc\"def");
	tf_comparison *c = compare1(b, h, NULL);
	tf_buf out = TF_BUF_INIT;
	json_error_t err;

	assert_int_equal(tf_comparison_to_json(&out, c), 0);
	json_t *j = json_loads(out.ptr, 0, &err);
	if (!j)
		fail_msg("report.json does not parse: %s (line %d)", err.text, err.line);
	assert_string_equal(json_string_value(json_object_get(j, "schema")), "testflame-report/1");
	assert_true(json_is_true(json_object_get(j, "regressed")));
	assert_string_equal(json_string_value(json_object_get(j, "event")), "cpu-clock");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "summary"), "regressed")), 1);
	assert_string_equal(json_string_value(json_object_get(json_object_get(json_object_get(j, "base"), "meta"), "commit")), "abc\"def");
	json_t *tests = json_object_get(j, "tests");
	assert_int_equal(json_array_size(tests), 2);
	json_t *t0 = json_array_get(tests, 0);
	assert_string_equal(json_string_value(json_object_get(t0, "name")),
			    "quote\" back\\slash\nnew\x01line \xef\xbf\xbd\xef\xbf\xbd <b>&");
	assert_string_equal(json_string_value(json_object_get(t0, "verdict")), "regressed");
	assert_true(fabs(json_real_value(json_object_get(t0, "delta_pct")) - 100) < 1e-9);
	assert_int_equal(json_array_size(json_object_get(t0, "ci_pct")), 2);
	json_t *f0 = json_array_get(json_object_get(t0, "functions"), 0);
	assert_string_equal(json_string_value(json_object_get(f0, "name")), "hot");
	assert_string_equal(json_string_value(json_object_get(f0, "file")), "src/hot.c");
	assert_int_equal(json_integer_value(json_object_get(f0, "line")), 2);
	/* a new test has no delta: null, not NaN (which is not JSON) */
	json_t *t1 = json_array_get(tests, 1);
	assert_string_equal(json_string_value(json_object_get(t1, "verdict")), "new");
	assert_true(json_is_null(json_object_get(t1, "delta_pct")));
	assert_null(strstr(out.ptr, "NaN"));
	assert_null(strstr(out.ptr, ": nan"));
	json_decref(j);
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static size_t columns(const char *s, size_t len)
{
	size_t w = 0;
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

static void test_table(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	char longname[300];
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	memcpy(longname + sizeof(longname) - 8, "_tail", 6);
	add(b, "pkg/TestSlow", 1000, "main:1;encodeSlow:42");
	add(h, "pkg/TestSlow", 2000, "main:1;encodeSlow:42");
	add(b, "TestSame", 1000, "main:1;x:2");
	add(h, "TestSame", 1000, "main:1;x:2");
	add(b, "esc\033[2Jname", 1000, "main:1");
	add(h, "esc\033[2Jname", 100, "main:1");
	add(b, longname, 500, "main:1");
	add(h, longname, 900, "main:1");
	tf_comparison *c = compare1(b, h, NULL);
	tf_buf out = TF_BUF_INIT;
	tf_table_opts o;

	tf_table_opts_init(&o);
	o.width = 80;
	assert_int_equal(tf_comparison_render_table(&out, c, &o), 0);
	assert_non_null(strstr(out.ptr, "regressed"));
	assert_non_null(strstr(out.ptr, "pkg/TestSlow"));
	assert_non_null(strstr(out.ptr, "+100.0%"));
	assert_non_null(strstr(out.ptr, "encodeSlow  encodeSlow.c:42"));
	assert_non_null(strstr(out.ptr, "+10.0 s"));
	assert_non_null(strstr(out.ptr, "1 unchanged test"));
	assert_non_null(strstr(out.ptr, "_tail"));
	assert_non_null(strstr(out.ptr, "REGRESSION: 2 tests slower by at least 5%"));
	assert_null(strchr(out.ptr, '\033'));
	for (const char *l = out.ptr; *l;) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		if (columns(l, len) > 80)
			fail_msg("line wider than 80 columns: %.*s", (int)len, l);
		l += len + (e != NULL);
	}
	tf_buf_clear(&out);
	o.color = true;
	o.all = true;
	tf_comparison_render_table(&out, c, &o);
	assert_non_null(strstr(out.ptr, "\033[1;31mregressed"));
	assert_non_null(strstr(out.ptr, "TestSame"));
	assert_null(strstr(out.ptr, "\033[2J"));
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

static void test_format_cost(void **state)
{
	(void)state;
	char buf[32];
	tf_compare_format_cost(buf, sizeof(buf), 1.234e9, "nanoseconds");
	assert_string_equal(buf, "1.23 s");
	tf_compare_format_cost(buf, sizeof(buf), 45.6e6, "nanoseconds");
	assert_string_equal(buf, "45.6 ms");
	tf_compare_format_cost(buf, sizeof(buf), 999, "nanoseconds");
	assert_string_equal(buf, "999 ns");
	tf_compare_format_cost(buf, sizeof(buf), 2500, "count");
	assert_string_equal(buf, "2500");
	tf_compare_format_cost(buf, sizeof(buf), 12.5e6, "count");
	assert_string_equal(buf, "12.5 M");
	tf_compare_format_cost(buf, sizeof(buf), 3 * 1048576.0, "bytes");
	assert_string_equal(buf, "3.00 MiB");
	tf_compare_format_cost(buf, sizeof(buf), NAN, "count");
	assert_string_equal(buf, "-");
}

/* A run file of n tests, names[i] at cost[i] (one sample each, exact
 * costs); `changes` (NULL: none) its changes metadata. */
static tf_profile *costs_run(const char *const *names, const double *cost, size_t n,
			     const char *changes)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	p->default_sample_type = tf_profile_intern(p, "cpu");
	tf_line ln = { tf_profile_function(p, "work", "w.c", 1), 2, 0 };
	uint32_t loc = tf_profile_add_location(p, TF_NO_MAPPING, 0, &ln, 1);
	for (size_t i = 0; i < n; i++) {
		tf_label l = { tf_profile_intern(p, "test"), tf_profile_intern(p, names[i]), 0, 0 };
		int64_t v[2] = { 1000, (int64_t)cost[i] };
		tf_profile_add_sample(p, &loc, 1, v, &l, 1);
	}
	tf_profile_set_meta(p, "sampler", "perf");
	tf_profile_set_meta(p, "event", "cpu-clock");
	if (changes)
		tf_profile_set_meta(p, "changes", changes);
	return p;
}

/* A run file with tests "steady" and "wobbly" at the given costs. */
static tf_profile *history_run(double steady, double wobbly)
{
	static const char *const names[2] = { "steady", "wobbly" };
	const double cost[2] = { steady, wobbly };
	return costs_run(names, cost, 2, NULL);
}

static void test_history_noise(void **state)
{
	(void)state;
	tf_profile *runs[6];
	static const double steady[6] = { 1.000e9, 1.010e9, 0.995e9, 1.005e9, 0.990e9, 1.002e9 };
	static const double wobbly[6] = { 1.00e9, 1.25e9, 0.80e9, 1.10e9, 0.92e9, 1.30e9 };
	for (int i = 0; i < 6; i++)
		runs[i] = history_run(steady[i], wobbly[i]);
	tf_test_noise *hn;
	size_t n;
	assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)runs, 6, NULL), 0);
	assert_int_equal(n, 2);
	double s = 0, w = 0;
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(hn[i].test, "steady"))
			s = hn[i].noise_pct;
		else
			w = hn[i].noise_pct;
		assert_int_equal(hn[i].runs, 6);
	}
	assert_true(s > 0.3 && s < 1.5);
	assert_true(w > 10 && w < 40);

	/* +15% on both: the steady test regresses, the wobbly one cannot tell */
	tf_profile *base = history_run(1.0e9, 1.0e9), *head = history_run(1.15e9, 1.15e9);
	const tf_profile *bp[1] = { base }, *hp[1] = { head };
	tf_compare_side bs = { bp, NULL, 1 }, hs = { hp, NULL, 1 };
	tf_compare_opts o;
	tf_comparison *c;
	tf_compare_opts_init(&o);
	o.history = hn;
	o.nhistory = n;
	assert_int_equal(tf_compare(&c, &bs, &hs, &o), 0);
	const tf_test_delta *ts = tf_comparison_find(c, "steady"), *tw = tf_comparison_find(c, "wobbly");
	assert_int_equal(ts->verdict, TF_VERDICT_REGRESSED);
	assert_false(ts->noise_from_history); /* below the 1.5% floor */
	assert_int_not_equal(tw->verdict, TF_VERDICT_REGRESSED);
	assert_true(tw->noise_from_history);
	tf_comparison_free(c);

	/* without a history both assume twice the floor: 3% for cpu-clock */
	o.history = NULL;
	o.nhistory = 0;
	assert_int_equal(tf_compare(&c, &bs, &hs, &o), 0);
	assert_true(tf_comparison_find(c, "wobbly")->noise_pct == 3.0);
	assert_true(tf_comparison_find(c, "steady")->noise_pct == 3.0);
	assert_false(tf_comparison_find(c, "steady")->noise_from_history);
	tf_comparison_free(c);

	tf_test_noise_free(hn, n);

	/* the same six runs saved as two baselines of three runs each: the
	 * spread within each job (pooled, 4 degrees of freedom) is all of it,
	 * as the two jobs' means differ by no more than that spread says */
	tf_profile *joined[2];
	assert_int_equal(tf_profile_join_runs(&joined[0], (const tf_profile *const *)runs, 3), 0);
	assert_int_equal(tf_profile_join_runs(&joined[1], (const tf_profile *const *)runs + 3, 3), 0);
	double s2 = 0, w2 = 0;
	assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)joined, 2, NULL), 0);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		if (!strcmp(hn[i].test, "steady"))
			s2 = hn[i].noise_pct;
		else
			w2 = hn[i].noise_pct;
		assert_int_equal(hn[i].runs, 6);
		assert_true(hn[i].within_df == 4 && hn[i].df == 5);
		assert_true(fabs(hn[i].within_pct - hn[i].noise_pct) < 1e-9);
	}
	/* worked out by hand (numpy): sqrt of the pooled within-job variance
	 * (0.77903, 19.96114), less what rounding to 1000 samples a run puts
	 * into it (1e-6: 0.01 in percent squared) */
	assert_true(fabs(s2 - 0.77259) < 1e-4 && fabs(w2 - 19.96089) < 1e-4);
	tf_test_noise_free(hn, n);

	/* a PR's one run against a baseline of three: the base side is three
	 * runs, and a run that is 15% slower than their mean regresses */
	tf_profile *b3[3] = { history_run(1.0e9, 1.0e9), history_run(1.01e9, 1.0e9),
			      history_run(0.99e9, 1.0e9) };
	tf_profile *j3, **parts;
	size_t nparts;
	assert_int_equal(tf_profile_join_runs(&j3, (const tf_profile *const *)b3, 3), 0);
	assert_int_equal(tf_profile_split_runs(&parts, &nparts, j3), 0);
	assert_int_equal(nparts, 3);
	tf_compare_side b3s = { (const tf_profile *const *)parts, NULL, nparts };
	assert_int_equal(tf_compare(&c, &b3s, &hs, &o), 0);
	assert_int_equal(c->summary.base_runs, 3);
	assert_int_equal(tf_comparison_find(c, "steady")->verdict, TF_VERDICT_REGRESSED);
	tf_comparison_free(c);
	for (size_t i = 0; i < nparts; i++)
		tf_profile_free(parts[i]);
	free(parts);
	tf_profile_free(j3);
	for (int i = 0; i < 3; i++)
		tf_profile_free(b3[i]);
	tf_profile_free(joined[0]);
	tf_profile_free(joined[1]);

	tf_profile_free(base);
	tf_profile_free(head);
	for (int i = 0; i < 6; i++)
		tf_profile_free(runs[i]);
}

/* A run of `ntests` (up to 8) tests "t0".."t7", test i at cost[i]. */
static tf_profile *suite_run(size_t ntests, const double *cost, const char *changes)
{
	static const char *const names[8] = { "t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7" };
	return costs_run(names, cost, ntests, changes);
}

/* The noise of `ntests` tests learned from ten runs, run j moved by
 * shift[j] as a whole, each test by about 1% of its own. */
static void shifted_history(tf_test_noise **hn, size_t *n, size_t ntests, const double *shift)
{
	tf_profile *runs[10];
	double cost[8];
	for (size_t j = 0; j < 10; j++) {
		for (size_t i = 0; i < ntests; i++)
			cost[i] = 1e9 * exp(shift[j] + 0.01 * sin(7.0 * (double)i + 3.0 * (double)j));
		runs[j] = suite_run(ntests, cost, NULL);
	}
	assert_int_equal(tf_compare_history_noise(hn, n, (const tf_profile *const *)runs, 10, NULL), 0);
	assert_int_equal(*n, ntests);
	for (size_t j = 0; j < 10; j++)
		tf_profile_free(runs[j]);
}

/*
 * Ten baselines of eight tests on a runner whose runs came up to 12% apart,
 * every test alike, each test's own noise about 1%. The plain spread says
 * each test wanders by 8%; with each run's shift (its other tests' median
 * move) taken out, about 1%. A comparison with a control group, which
 * takes the runner's shift out itself, judges by the second: t0 at +25%
 * on a runner 8% slower regresses, where by the plain spread it could not
 * tell. Without a control group (a build file changed) the plain spread
 * stays. Five tests a run are too few for a shift of the others.
 */
static void test_history_noise_runner_shift(void **state)
{
	(void)state;
	static const double shift[10] = { 0, .10, -.08, .12, -.05, .09, -.11, .06, -.07, .03 };
	const char *edit = "[{\"path\":\"src/edited.c\",\"status\":\"M\","
			   "\"lines\":[[1,1]]}]";
	const char *build = "[{\"path\":\"Makefile\",\"status\":\"M\","
			    "\"lines\":[[1,1]]}]";
	double cost[8];
	tf_test_noise *hn;
	size_t n;

	shifted_history(&hn, &n, 8, shift);
	for (size_t i = 0; i < n; i++) {
		assert_true(hn[i].shifted);
		assert_true(hn[i].noise_pct > 5 && hn[i].noise_pct < 12);
		assert_true(hn[i].shifted_pct > 0.3 && hn[i].shifted_pct < 2);
	}

	for (size_t i = 0; i < 8; i++)
		cost[i] = 1e9;
	tf_profile *b = suite_run(8, cost, NULL);
	for (size_t i = 0; i < 8; i++)
		cost[i] = 1.08e9;
	cost[0] = 1.25e9;
	for (int with_control = 1; with_control >= 0; with_control--) {
		tf_profile *h = suite_run(8, cost, with_control ? edit : build);
		tf_compare_opts o;
		tf_compare_opts_init(&o);
		o.history = hn;
		o.nhistory = n;
		tf_comparison *c = compare1(b, h, &o);
		assert_true(with_control == !isnan(c->summary.shift_pct));
		const tf_test_delta *t0 = tf_comparison_find(c, "t0");
		if (with_control) {
			assert_int_equal(t0->verdict, TF_VERDICT_REGRESSED);
			assert_true(t0->noise_pct < 2.5);
			assert_int_equal(tf_comparison_find(c, "t1")->verdict, TF_VERDICT_UNCHANGED);
		} else {
			assert_int_not_equal(t0->verdict, TF_VERDICT_REGRESSED);
			assert_true(t0->noise_pct > 5);
		}
		tf_comparison_free(c);
		tf_profile_free(h);
	}
	tf_profile_free(b);
	tf_test_noise_free(hn, n);

	/* no shifts, t0 steady (3%) among tests of 15%: with the shifts out
	 * its spread takes on their noise, so the plain one is kept */
	tf_profile *runs[10];
	for (size_t j = 0; j < 10; j++) {
		for (size_t i = 0; i < 8; i++)
			cost[i] = 1e9 * exp((i ? 0.15 : 0.03) * sin(7.0 * (double)i + 3.0 * (double)j));
		runs[j] = suite_run(8, cost, NULL);
	}
	assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)runs, 10, NULL), 0);
	const tf_test_noise *steady = !strcmp(hn[0].test, "t0") ? &hn[0] : NULL;
	assert_non_null(steady);
	assert_true(steady->noise_pct > 1.5 && steady->noise_pct < 3.5);
	assert_true(steady->shifted_pct > 1.5 * steady->noise_pct);
	for (size_t i = 0; i < 8; i++)
		cost[i] = 1e9;
	b = suite_run(8, cost, NULL);
	tf_profile *h = suite_run(8, cost, edit);
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.history = hn;
	o.nhistory = n;
	tf_comparison *c = compare1(b, h, &o);
	assert_false(isnan(c->summary.shift_pct));
	assert_true(fabs(tf_comparison_find(c, "t0")->noise_pct - steady->noise_pct) < 1e-9);
	tf_comparison_free(c);
	tf_profile_free(h);
	tf_profile_free(b);
	tf_test_noise_free(hn, n);
	for (size_t j = 0; j < 10; j++)
		tf_profile_free(runs[j]);

	/* five tests a run: each test's shift would be of four others */
	shifted_history(&hn, &n, 5, shift);
	for (size_t i = 0; i < n; i++)
		assert_false(hn[i].shifted);
	tf_test_noise_free(hn, n);
}

/* Nine runs saved as three baselines of three: each job ran about 1%
 * apart, the jobs up to 20% apart. One run's noise is the job-to-job
 * spread plus the within-job one, and the within part is kept apart.
 * Worked out by hand (numpy). */
static void test_history_noise_of_jobs(void **state)
{
	(void)state;
	static const double job[3][3] = { { 1.00e9, 1.01e9, 0.99e9 },
					  { 1.20e9, 1.21e9, 1.19e9 },
					  { 1.05e9, 1.06e9, 1.04e9 } };
	tf_profile *runs[9], *joined[3];
	tf_test_noise *hn;
	size_t n;

	for (int j = 0; j < 3; j++) {
		for (int r = 0; r < 3; r++)
			runs[3 * j + r] = history_run(job[j][r], 1e9);
		assert_int_equal(tf_profile_join_runs(&joined[j], (const tf_profile *const *)runs + 3 * j, 3), 0);
	}
	assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)joined, 3, NULL), 0);
	const tf_test_noise *st = !strcmp(hn[0].test, "steady") ? &hn[0] : &hn[1];
	assert_int_equal(st->runs, 9);
	/* numpy's 9.46969 and 0.93124, less 1000 samples' rounding (0.01) */
	assert_true(fabs(st->noise_pct - 9.46916) < 1e-4);
	assert_true(st->df == 8);
	assert_true(fabs(st->within_pct - 0.92586) < 1e-4);
	assert_true(st->within_df == 6);
	tf_test_noise_free(hn, n);
	for (int i = 0; i < 9; i++)
		tf_profile_free(runs[i]);
	for (int j = 0; j < 3; j++)
		tf_profile_free(joined[j]);
}

static uint64_t sim_state = 88172645463325252ULL;
static double sim_uniform(void)
{
	sim_state ^= sim_state << 13;
	sim_state ^= sim_state >> 7;
	sim_state ^= sim_state << 17;
	return ((double)(sim_state >> 11) + 0.5) / 9007199254740992.0;
}
static double sim_gauss(void)
{
	return sqrt(-2 * log(sim_uniform())) * cos(6.283185307179586 * sim_uniform());
}

/*
 * A test of a sample or two a run (rounding, not noise: its cost is under
 * two periods) in six stored runs, beside one of 1000: what its history
 * says of its noise is not the spread of its counts' logs (36% here), and a
 * run of 25 samples against a base of 1 is regressed, one of 2 is not.
 */
static void test_history_noise_tiny(void **state)
{
	(void)state;
	static const int64_t counts[6] = { 1, 2, 1, 1, 2, 1 };
	tf_profile *runs[6];
	for (int i = 0; i < 6; i++) {
		runs[i] = new_run("cpu-clock");
		tf_profile_set_meta(runs[i], "sampler", "perf");
		add(runs[i], "tiny", counts[i], "main:1;t:2");
		add(runs[i], "big", 1000, "main:1;b:2");
	}
	tf_test_noise *hn;
	size_t n;
	assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)runs, 6, NULL), 0);
	const tf_test_noise *tn = !strcmp(hn[0].test, "tiny") ? &hn[0] : &hn[1];
	assert_true(tn->noise_pct < 1.5); /* the floor decides */
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.history = hn;
	o.nhistory = n;
	for (int grown = 0; grown < 2; grown++) {
		tf_profile *h = new_run("cpu-clock");
		tf_profile_set_meta(h, "sampler", "perf");
		add(h, "tiny", grown ? 25 : 2, "main:1;t:2");
		add(h, "big", 1000, "main:1;b:2");
		tf_comparison *c = compare1(runs[5], h, &o);
		const tf_test_delta *t = tf_comparison_find(c, "tiny");
		if (grown)
			assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
		else
			assert_int_not_equal(t->verdict, TF_VERDICT_REGRESSED);
		tf_comparison_free(c);
		tf_profile_free(h);
	}
	tf_test_noise_free(hn, n);
	for (int i = 0; i < 6; i++)
		tf_profile_free(runs[i]);
}

/* One job of `k` runs of the steady test: a job offset, then run noise. */
static tf_profile *sim_job(size_t k, double job_sd, double run_sd, double factor,
			   tf_profile **keep)
{
	double off = log(factor) + job_sd * sim_gauss();
	tf_profile *joined;
	for (size_t r = 0; r < k; r++)
		keep[r] = history_run(1e9 * exp(off + run_sd * sim_gauss()), 1e9);
	if (k == 1)
		return keep[0];
	assert_int_equal(tf_profile_join_runs(&joined, (const tf_profile *const *)keep, k), 0);
	for (size_t r = 0; r < k; r++)
		tf_profile_free(keep[r]);
	return joined;
}

/*
 * Calibration of the shifted noise: single-run baselines of eight tests on
 * a runner whose runs move by 5% together and each test by 2% alone,
 * nothing changed, a PR of one run against the merge-base's one run with
 * a control group. The noise learned with the shifts out (each test's
 * shift of the seven others) keeps t0's false regressions near
 * alpha = 0.001, and a 30% slowdown, six times the runner's spread, is
 * caught nearly always (with the plain spread, 5.4%, hardly ever).
 */
static void test_sim_shifted_noise_calibrated(void **state)
{
	(void)state;
	const char *edit = "[{\"path\":\"src/edited.c\",\"status\":\"M\","
			   "\"lines\":[[1,1]]}]";
	int regressed = 0, caught = 0, trials = 2000;
	double cost[8];
	/* a stream of its own: the simulations after it draw what they drew */
	uint64_t saved = sim_state;
	sim_state = 0x9e3779b97f4a7c15ULL;
	for (int t = 0; t < trials; t++) {
		tf_profile *hist[10];
		for (size_t j = 0; j < 10; j++) {
			double run = 0.05 * sim_gauss();
			for (size_t i = 0; i < 8; i++)
				cost[i] = 1e9 * exp(run + 0.02 * sim_gauss());
			hist[j] = suite_run(8, cost, NULL);
		}
		tf_test_noise *hn;
		size_t n;
		assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)hist, 10, NULL), 0);
		double run = 0.05 * sim_gauss();
		for (size_t i = 0; i < 8; i++)
			cost[i] = 1e9 * exp(run + 0.02 * sim_gauss());
		tf_profile *b = suite_run(8, cost, NULL);
		run = 0.05 * sim_gauss();
		for (size_t i = 0; i < 8; i++)
			cost[i] = 1e9 * exp(run + 0.02 * sim_gauss());
		for (int slowed = 0; slowed < 2; slowed++) {
			double c0 = cost[0];
			if (slowed)
				cost[0] *= 1.3;
			tf_profile *h = suite_run(8, cost, edit);
			cost[0] = c0;
			tf_compare_opts o;
			tf_compare_opts_init(&o);
			o.history = hn;
			o.nhistory = n;
			tf_comparison *c = compare1(b, h, &o);
			bool reg = tf_comparison_find(c, "t0")->verdict == TF_VERDICT_REGRESSED;
			if (slowed)
				caught += reg;
			else
				regressed += reg;
			tf_comparison_free(c);
			tf_profile_free(h);
		}
		tf_profile_free(b);
		tf_test_noise_free(hn, n);
		for (size_t j = 0; j < 10; j++)
			tf_profile_free(hist[j]);
	}
	sim_state = saved;
	print_message("shifted noise: %d false regressions, %d of +30%% caught, of %d\n", regressed,
		      caught, trials);
	/* alpha = 0.001: 2 expected; 7 or more has probability < 0.005 */
	if (regressed > 6)
		fail_msg("%d false regressions in %d trials", regressed, trials);
	if (caught < trials * 0.95)
		fail_msg("a 30%% slowdown caught in %d of %d trials", caught, trials);
}

/*
 * A runner where most of the noise is the job's (5% between jobs, 1%
 * between runs of one job), nothing changed: baselines saved from three
 * runs, five of them in the history, a base of three runs and a PR of one
 * run, or of three (a confirmation). Treating the runs of a job as
 * independent draws halved the modelled variance of the comparison and
 * called regressions at many times alpha; with the job's share modelled
 * they stay near alpha = 0.001. A doubling is still caught: five jobs say
 * little about how jobs differ (about 4 degrees of freedom), which is
 * what an honest gate on such a runner can claim.
 */
static void test_sim_job_noise_calibrated(void **state)
{
	(void)state;
	const size_t heads[] = { 1, 3 };
	for (size_t hi = 0; hi < TF_ARRAY_SIZE(heads); hi++) {
		int regressed = 0, caught = 0, trials = 3000;
		for (int t = 0; t < trials; t++) {
			tf_profile *keep[3], *hist[10], *base, *head;
			for (int j = 0; j < 10; j++)
				hist[j] = sim_job(3, 0.05, 0.01, 1.0, keep);
			base = sim_job(3, 0.05, 0.01, 1.0, keep);
			tf_test_noise *hn;
			size_t n;
			assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)hist, 10, NULL), 0);
			tf_profile **bparts, **hparts;
			size_t nb, nh;
			assert_int_equal(tf_profile_split_runs(&bparts, &nb, base), 0);
			tf_compare_opts o;
			tf_compare_opts_init(&o);
			o.history = hn;
			o.nhistory = n;
			o.separate_jobs = true;
			for (int slowed = 0; slowed < 2; slowed++) {
				head = sim_job(heads[hi], 0.05, 0.01, slowed ? 2.0 : 1.0, keep);
				assert_int_equal(tf_profile_split_runs(&hparts, &nh, head), 0);
				tf_compare_side bs = { (const tf_profile *const *)bparts, NULL, nb };
				tf_compare_side hs = { (const tf_profile *const *)hparts, NULL, nh };
				tf_comparison *c;
				assert_int_equal(tf_compare(&c, &bs, &hs, &o), 0);
				bool reg = tf_comparison_find(c, "steady")->verdict == TF_VERDICT_REGRESSED;
				if (slowed)
					caught += reg;
				else
					regressed += reg;
				tf_comparison_free(c);
				for (size_t i = 0; i < nh; i++)
					tf_profile_free(hparts[i]);
				free(hparts);
				tf_profile_free(head);
			}
			for (size_t i = 0; i < nb; i++)
				tf_profile_free(bparts[i]);
			free(bparts);
			tf_profile_free(base);
			for (int j = 0; j < 10; j++)
				tf_profile_free(hist[j]);
			tf_test_noise_free(hn, n);
		}
		print_message("a PR of %zu run(s): %d false regressions, %d doublings caught, of %d\n",
			      heads[hi], regressed, caught, trials);
		/* alpha = 0.001: 3 expected; 9 or more has probability < 0.005 */
		if (regressed > 8)
			fail_msg("%d false regressions in %d trials, a PR of %zu run(s)", regressed,
				 trials, heads[hi]);
		if (caught < trials * 0.6)
			fail_msg("a doubling caught in %d of %d trials, a PR of %zu run(s)", caught,
				 trials, heads[hi]);
	}
}

/*
 * Ten single-run baselines of a test that wanders by about 5% (the
 * example suite's test_matrix on an idle runner), one of them run beside
 * a neighbour: 80% slower, then also a second 75% slower. Kept, the one
 * made its spread 18% and hid a doubling (p = 0.02); set aside, the spread
 * is the other runs', the verdict says regressed, and the history says
 * what it set aside. A test that wanders by 17% throughout keeps all its
 * runs, however far its farthest.
 */
static void test_history_noise_disturbed(void **state)
{
	(void)state;
	static const double dev[10] = { 5, -8, -4, 4, -3, 1, -1, 4, -5, 0 }; /* percent */
	static const double wobbly[10] = { 0, 25, -20, 10, -8, 30, -15, 5, -30, 12 };
	for (int disturbed = 1; disturbed <= 2; disturbed++) {
		tf_profile *runs[10];
		for (int i = 0; i < 10; i++) {
			double c = 1e9 * (1 + dev[i] / 100);
			if (i == 2)
				c *= 1.8;
			if (i == 6 && disturbed == 2)
				c *= 1.75;
			runs[i] = history_run(c, 1e9 * (1 + wobbly[i] / 100));
		}
		tf_test_noise *hn;
		size_t n;
		assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)runs, 10, NULL), 0);
		const tf_test_noise *st = !strcmp(hn[0].test, "steady") ? &hn[0] : &hn[1];
		const tf_test_noise *wo = st == &hn[0] ? &hn[1] : &hn[0];
		assert_int_equal(st->runs, 10);
		assert_int_equal(st->set_aside, (size_t)disturbed);
		assert_true(st->df == 9 - disturbed);
		assert_true(st->noise_pct > 3.5 && st->noise_pct < 6);
		assert_true(st->aside_pct > 70 && st->aside_pct < 90);
		assert_int_equal(wo->set_aside, 0);
		assert_true(wo->noise_pct > 15);
		tf_compare_opts o;
		tf_compare_opts_init(&o);
		o.history = hn;
		o.nhistory = n;
		for (int slowed = 0; slowed < 2; slowed++) {
			tf_profile *h = history_run(1e9 * (slowed ? 2.0 : 1.03), 1e9);
			tf_comparison *c = compare1(runs[9], h, &o);
			const tf_test_delta *t = tf_comparison_find(c, "steady");
			assert_true(t->noise_from_history);
			assert_int_equal(t->noise_set_aside, (size_t)disturbed);
			if (slowed)
				assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
			else
				assert_int_equal(t->verdict, TF_VERDICT_UNCHANGED);
			tf_comparison_free(c);
			tf_profile_free(h);
		}
		tf_test_noise_free(hn, n);
		for (int i = 0; i < 10; i++)
			tf_profile_free(runs[i]);
	}
}

/*
 * Ten single-run baselines of two tests that wander by 5%, nothing
 * changed, a PR of one run against the newest: clean histories, and
 * histories where one earlier baseline met a neighbour (the test 80%
 * slower in it). Setting such runs aside must not make the gate cry wolf
 * on clean histories (alpha = 0.001: about 3 false regressions in 3000),
 * and one disturbed baseline in ten must not hide a doubling (kept, its
 * square made the spread about 19%, and none was caught).
 */
static void test_sim_disturbed_baseline(void **state)
{
	(void)state;
	int regressed[2] = { 0, 0 }, caught = 0, trials = 3000;
	uint64_t saved = sim_state;
	sim_state = 0x2545f4914f6cdd1dULL;
	for (int t = 0; t < trials; t++) {
		for (int disturbed = 0; disturbed < 2; disturbed++) {
			tf_profile *hist[10];
			int at = (int)(sim_uniform() * 9); /* never the base itself */
			for (int j = 0; j < 10; j++)
				hist[j] = history_run(1e9 * exp(0.05 * sim_gauss()) * (disturbed && j == at ? 1.8 : 1),
						      1e9 * exp(0.05 * sim_gauss()));
			tf_test_noise *hn;
			size_t n;
			assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)hist, 10, NULL), 0);
			tf_compare_opts o;
			tf_compare_opts_init(&o);
			o.history = hn;
			o.nhistory = n;
			for (int slowed = 0; slowed < 1 + disturbed; slowed++) {
				tf_profile *h = history_run(1e9 * exp(0.05 * sim_gauss()) * (slowed ? 2 : 1),
							    1e9 * exp(0.05 * sim_gauss()));
				tf_comparison *c = compare1(hist[9], h, &o);
				bool reg = tf_comparison_find(c, "steady")->verdict == TF_VERDICT_REGRESSED;
				if (slowed)
					caught += reg;
				else
					regressed[disturbed] += reg;
				tf_comparison_free(c);
				tf_profile_free(h);
			}
			tf_test_noise_free(hn, n);
			for (int j = 0; j < 10; j++)
				tf_profile_free(hist[j]);
		}
	}
	sim_state = saved;
	print_message("disturbed baselines: %d false regressions with clean histories, %d with one "
		      "run disturbed, %d of %d doublings caught\n", regressed[0], regressed[1], caught,
		      trials);
	/* alpha = 0.001: 3 expected; 9 or more has probability < 0.005 */
	for (int d = 0; d < 2; d++)
		if (regressed[d] > 8)
			fail_msg("%d false regressions in %d trials (%s)", regressed[d], trials,
				 d ? "one baseline disturbed" : "clean histories");
	if (caught < trials * 0.9)
		fail_msg("a doubling caught in %d of %d trials with one baseline disturbed", caught,
			 trials);
}

/* What run --confirm runs the suite again for: the slowest of the tests
 * whose interval is above zero and reaches the threshold. */
/* The order of attention: a large undecided change comes before new and
 * gone tests, whatever the verdicts' own order, and says what decides it. */
static void test_attention_order(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	add(b, "reg", 1000, "main:1;r:2");
	add(h, "reg", 3000, "main:1;r:2");
	add(b, "big", 3, "main:1;g:2");
	add(h, "big", 6, "main:1;g:2");
	add(b, "fast", 1000, "main:1;f:2");
	add(h, "fast", 300, "main:1;f:2");
	add(h, "fresh", 4000, "main:1;n:2");
	add(b, "same", 1000, "main:1;s:2");
	add(h, "same", 1000, "main:1;s:2");
	tf_comparison *c = compare1(b, h, NULL);
	const char *want[] = { "reg", "big", "fast", "fresh", "same" };

	assert_int_equal(c->ntests, 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(c->tests[i].name, want[i]);
	assert_int_equal(c->tests[1].verdict, TF_VERDICT_INCONCLUSIVE);
	assert_int_equal(c->tests[1].attention, TF_ATTENTION_UNDECIDED);
	assert_non_null(strstr(c->tests[1].reason, "6 samples against 3"));
	assert_non_null(strstr(c->tests[1].reason, "run with --freq 999 or --repeat 3 to decide"));

	/* the terminal table: the same order, the undecided row's reason under it */
	tf_buf out = TF_BUF_INIT;
	assert_int_equal(tf_comparison_render_table(&out, c, NULL), 0);
	const char *reg = strstr(out.ptr, "  reg\n"), *big = strstr(out.ptr, "  big\n");
	const char *fresh = strstr(out.ptr, "  fresh\n");
	assert_true(reg && big && fresh && reg < big && big < fresh);
	assert_non_null(strstr(big, "run with --freq 999"));
	assert_true(strstr(big, "run with --freq 999") < fresh);
	tf_buf_free(&out);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/* A big test that may be as slow as the threshold is a suspect when its
 * slowdown would matter to the whole suite; a small, wildly noisy or
 * surely smaller one is not. */
static void test_suspect_material(void **state)
{
	(void)state;
	tf_comparison c;
	tf_test_delta t;
	struct {
		double base_cost, delta, lo, hi, suite, p;
		tf_verdict verdict;
		bool suspect;
	} cases[] = {
		{ 220e6, 8, -1, 17, 1.5e9, 0.5, TF_VERDICT_INCONCLUSIVE, true },  /* victim under a neighbour */
		{ 220e6, 5.4, -3.5, 13.5, 1.5e9, 0.5, TF_VERDICT_INCONCLUSIVE, true },
		{ 220e6, 4.9, -1.9, 12.2, 1.5e9, 0.5, TF_VERDICT_UNCHANGED, true }, /* half the threshold */
		{ 220e6, 4.3, -0.6, 9.3, 1.5e9, 0.5, TF_VERDICT_UNCHANGED, true },
		{ 220e6, 2.4, -1, 6, 1.5e9, 0.5, TF_VERDICT_UNCHANGED, false },   /* under half */
		{ 220e6, 3, -1, 8, 1.5e9, 0.5, TF_VERDICT_UNCHANGED, false },     /* adds 0.44% */
		{ 220e6, 4, -1, 4.9, 1.5e9, 0.5, TF_VERDICT_UNCHANGED, false },   /* cannot reach 5% */
		{ 220e6, 4, 3, 4.9, 1.5e9, 1e-5, TF_VERDICT_UNCHANGED, false },   /* surely below */
		{ 220e6, 8, -6, 22, 1.5e9, 0.5, TF_VERDICT_INCONCLUSIVE, false },   /* a speed-up not ruled out */
		{ 1e6, 8, -1, 17, 2e8, 0.5, TF_VERDICT_INCONCLUSIVE, false },       /* 1 ms of 200: too small */
		{ 1e6, 200, -60, 500, 2e8, 0.5, TF_VERDICT_INCONCLUSIVE, false },   /* a spike */
		{ 220e6, 8, -1, 17, 1.5e9, 0.5, TF_VERDICT_IMPROVED, false },
		{ 220e6, 8, 1, 15, 1.5e9, 1e-5, TF_VERDICT_REGRESSED, true },
	};
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++) {
		memset(&c, 0, sizeof(c));
		memset(&t, 0, sizeof(t));
		c.summary.base_cost = cases[i].suite;
		c.summary.alpha = 0.001;
		t.name = "x";
		t.verdict = cases[i].verdict;
		t.base.cost = cases[i].base_cost;
		t.delta_pct = cases[i].delta;
		t.ci_low_pct = cases[i].lo;
		t.ci_high_pct = cases[i].hi;
		t.p_adjusted = cases[i].p;
		assert_int_equal(tf_comparison_suspect(&c, &t, 5), cases[i].suspect);
	}
}

/* What more confirming runs would decide: a test still slower that may
 * reach the threshold and stands out of the family. */
static void test_may_reach(void **state)
{
	(void)state;
	tf_comparison c;
	tf_test_delta t;
	struct {
		double delta, lo, hi, p;
		tf_verdict verdict;
		bool outside, may;
	} cases[] = {
		{ 4.9, 2.0, 7.8, 0.01, TF_VERDICT_UNCHANGED, false, true },   /* a true 5% */
		{ 4.1, 1.5, 6.8, 0.15, TF_VERDICT_UNCHANGED, false, true },
		{ 8, 1, 15, 0.05, TF_VERDICT_INCONCLUSIVE, false, true },
		{ 4.1, 1.5, 6.8, 0.3, TF_VERDICT_UNCHANGED, false, false },  /* one of many */
		{ 3.9, -0.5, 8.5, 0.1, TF_VERDICT_UNCHANGED, false, false }, /* may be zero */
		{ 3, 1.2, 4.8, 0.1, TF_VERDICT_UNCHANGED, false, false },    /* cannot reach 5% */
		{ 3, 2, 4.1, 1e-5, TF_VERDICT_UNCHANGED, false, false },     /* surely below */
		{ 8, 5, 11, 1e-5, TF_VERDICT_REGRESSED, false, false },      /* decided */
		{ 8, 1, 15, 0.05, TF_VERDICT_INCONCLUSIVE, true, false },    /* not judged */
	};
	for (size_t i = 0; i < TF_ARRAY_SIZE(cases); i++) {
		memset(&c, 0, sizeof(c));
		memset(&t, 0, sizeof(t));
		c.summary.alpha = 0.001;
		t.name = "x";
		t.verdict = cases[i].verdict;
		t.outside = cases[i].outside;
		t.delta_pct = cases[i].delta;
		t.ci_low_pct = cases[i].lo;
		t.ci_high_pct = cases[i].hi;
		t.p_adjusted = cases[i].p;
		assert_int_equal(tf_comparison_may_reach(&c, &t, 5), cases[i].may);
	}
}

static void test_looks_slower(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	add(b, "A", 1000, "main:1;a:2");
	add(b, "B", 1000, "main:1;b:2");
	add(b, "C", 1000, "main:1;c:2");
	add(h, "A", 1300, "main:1;a:2");
	add(h, "B", 1600, "main:1;b:2");
	add(h, "C", 700, "main:1;c:2");
	add(h, "new", 5000, "main:1;n:2");
	tf_comparison *c = compare1(b, h, NULL);

	const tf_test_delta *t = tf_comparison_looks_slower(c, 5);
	assert_non_null(t);
	assert_string_equal(t->name, "B");
	/* neither may be as much as 100% slower; a faster one never looks slower */
	assert_null(tf_comparison_looks_slower(c, 100));
	assert_true(tf_comparison_looks_slower(c, 40) == tf_comparison_find(c, "B"));
	tf_comparison_free(c);
	c = compare1(h, b, NULL);
	t = tf_comparison_looks_slower(c, 5);
	assert_non_null(t);
	assert_string_equal(t->name, "C");
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/* A run of tests measured exactly: `cost` ns each (count=), `samples`
 * samples each; tests[i] named "t<i>". */
static tf_profile *exact_run(const double *cost, const int64_t *samples, size_t n)
{
	tf_profile *p = new_run("cpu-clock");
	tf_profile_set_meta(p, "sampler", "perf");
	for (size_t i = 0; i < n; i++) {
		char name[32], key[40], val[160];
		snprintf(name, sizeof(name), "t%zu", i);
		if (samples[i])
			add(p, name, samples[i], "main;work");
		snprintf(key, sizeof(key), "test.%s", name);
		snprintf(val, sizeof(val), "samples=%lld value=%lld wall_ns=1 source=process count=%.0f",
			 (long long)samples[i], (long long)(samples[i] * PERIOD), cost[i]);
		tf_profile_set_meta(p, key, val);
	}
	return p;
}

/*
 * A test measured exactly is judged by its measure, however few samples
 * it had: 0.86 ms growing to 26 ms with one sample is a regression, not
 * "within the noise" (toolz's test_frequencies); the same cost is
 * unchanged without a single sample.
 */
static void test_exact_measures(void **state)
{
	(void)state;
	double bc[12], hc[12];
	int64_t bs[12] = { 0 }, hs[12] = { 0 };
	for (int i = 0; i < 12; i++)
		bc[i] = hc[i] = 1e6 * (1 + i % 4);
	bc[0] = 0.86e6;
	hc[0] = 26e6;
	hs[0] = 1;
	hc[1] *= 1.01;
	tf_profile *b = exact_run(bc, bs, 12), *h = exact_run(hc, hs, 12);
	tf_comparison *c = compare1(b, h, NULL);
	const tf_test_delta *t0 = tf_comparison_find(c, "t0"), *t1 = tf_comparison_find(c, "t1");
	assert_int_equal(t0->measure, TF_MEASURE_COUNT);
	assert_int_equal(t0->verdict, TF_VERDICT_REGRESSED);
	assert_true(fabs(t0->delta_pct - (26 / 0.86 - 1) * 100) < 0.01);
	assert_int_equal(t1->verdict, TF_VERDICT_UNCHANGED);
	assert_int_equal(c->summary.measured[TF_MEASURE_COUNT], 12);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/*
 * The noise learned from stored runs is the spread of the measure the gate
 * judges by. jansson's 5 ms ctest tests, one sample or none a run, are
 * judged by their processes' exact CPU, which moved 20-30% between runs
 * at a load of 10; their samples' spread (rounding taken out) was none,
 * the 1.5% floor stood, and a README-only branch had 54 tests "improved"
 * by 20-50% at p < 1e-10. With the exact measure's spread, a test 45%
 * quicker in one run is within its noise, and one 3 times slower is still
 * a suspect to confirm.
 */
static void test_history_noise_exact(void **state)
{
	(void)state;
	enum { RUNS = 10, TESTS = 12 };
	tf_profile *runs[RUNS];
	double cost[TESTS];
	int64_t one[TESTS];
	uint64_t rng = 42;
	for (int r = 0; r < RUNS; r++) {
		for (int i = 0; i < TESTS; i++) {
			/* a spread of about 25%: the sum of 4 uniforms, scaled */
			double z = -2;
			for (int k = 0; k < 4; k++) {
				rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
				z += (double)(rng >> 11) / 9007199254740992.0;
			}
			cost[i] = 5e6 * exp(0.25 * z * sqrt(3.0));
			one[i] = 1;
		}
		runs[r] = exact_run(cost, one, TESTS);
	}
	tf_test_noise *hn;
	size_t n;
	assert_int_equal(tf_compare_history_noise(&hn, &n, (const tf_profile *const *)runs, RUNS, NULL), 0);
	assert_int_equal(n, TESTS);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(hn[i].runs, RUNS);
		assert_true(hn[i].noise_pct > 10 && hn[i].noise_pct < 45);
	}

	double bc[TESTS], hc[TESTS];
	for (int i = 0; i < TESTS; i++)
		bc[i] = hc[i] = 5e6;
	hc[0] = 5e6 * 0.55; /* 45% quicker in one run */
	hc[1] = 5e6 * 3;    /* three times slower */
	tf_profile *b = exact_run(bc, one, TESTS), *h = exact_run(hc, one, TESTS);
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.history = hn;
	o.nhistory = n;
	tf_comparison *c = compare1(b, h, &o);
	const tf_test_delta *t0 = tf_comparison_find(c, "t0"), *t1 = tf_comparison_find(c, "t1");
	assert_int_equal(t0->measure, TF_MEASURE_COUNT);
	assert_true(t0->noise_from_history && t0->noise_pct > 10);
	assert_int_not_equal(t0->verdict, TF_VERDICT_IMPROVED);
	assert_false(tf_comparison_suspect(c, t0, 5));
	/* one run against one at that noise cannot decide it at alpha 0.001
	 * (p=0.006), but it is a suspect the duet runs again */
	assert_true(t1->verdict == TF_VERDICT_REGRESSED || t1->verdict == TF_VERDICT_INCONCLUSIVE);
	assert_true(t1->delta_pct > 150 && tf_comparison_suspect(c, t1, 5));
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
	tf_test_noise_free(hn, n);
	for (int r = 0; r < RUNS; r++)
		tf_profile_free(runs[r]);
}

/*
 * gate.min_delta: a short test must move by that much time a run to count.
 * The pytest test after a slowed one pays a tenth of a millisecond for the
 * state its neighbour left (0.35 ms to 0.55 ms, in every run of the
 * branch): not a regression of its own. A 27-fold one still is, and with
 * no floor the small move fails as before.
 */
static void test_min_delta(void **state)
{
	(void)state;
	double bc[40], hc[40];
	int64_t zero[40] = { 0 };
	for (int i = 0; i < 40; i++)
		bc[i] = hc[i] = 0.35e6 * (1 + 0.01 * (i % 5));
	hc[0] = bc[0] * 1.6;  /* +0.21 ms */
	hc[1] = bc[1] * 27;   /* +9 ms */
	bc[2] = 20e6;
	hc[2] = 26e6;         /* +30%, +6 ms */
	tf_profile *b = exact_run(bc, zero, 40), *h = exact_run(hc, zero, 40);
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	assert_true(o.min_delta_ns == 1e6);
	tf_comparison *c = compare1(b, h, &o);
	const tf_test_delta *t0 = tf_comparison_find(c, "t0"), *t1 = tf_comparison_find(c, "t1");
	const tf_test_delta *t2 = tf_comparison_find(c, "t2");
	assert_true(c->summary.min_delta_ns == 1e6);
	assert_int_equal(t0->verdict, TF_VERDICT_UNCHANGED);
	assert_true(fabs(t0->threshold_pct - 100 * 1e6 / bc[0]) < 0.01);
	assert_non_null(strstr(t0->reason, "gate.min_delta"));
	assert_non_null(strstr(t0->reason, "+0.21 ms a run"));
	assert_false(tf_comparison_suspect(c, t0, 5));
	assert_int_equal(t1->verdict, TF_VERDICT_REGRESSED);
	assert_true(tf_comparison_suspect(c, t1, 5));
	assert_int_equal(t2->verdict, TF_VERDICT_REGRESSED);
	assert_true(t2->threshold_pct == 5);
	assert_true(tf_test_threshold(t2, 5) == 5 && tf_test_threshold(t0, 5) > 280);
	tf_buf js = TF_BUF_INIT;
	assert_int_equal(tf_comparison_to_json(&js, c), 0);
	assert_non_null(strstr(js.ptr, "\"min_delta_ns\": 1000000"));
	tf_buf_free(&js);
	tf_comparison_free(c);

	o.min_delta_ns = 0;
	c = compare1(b, h, &o);
	t0 = tf_comparison_find(c, "t0");
	assert_int_equal(t0->verdict, TF_VERDICT_REGRESSED);
	assert_true(t0->threshold_pct == 5);
	tf_comparison_free(c);

	o.min_delta_ns = -1;
	tf_compare_side bs = { (const tf_profile *const *)&b, NULL, 1 };
	tf_compare_side hs = { (const tf_profile *const *)&h, NULL, 1 };
	assert_int_not_equal(tf_compare(&c, &bs, &hs, &o), 0);
	assert_non_null(strstr(tf_error_last(), "least change"));
	tf_error_clear();
	tf_profile_free(b);
	tf_profile_free(h);
}

/* A run of tests timed by their runner (a GoogleTest XML's milliseconds):
 * `ms` each, tests[i] named "t<i>", with samples[i] samples (NULL: none)
 * of 4 ms, perf's, testflame's default period. */
static tf_profile *runner_run_sampled(const double *ms, const int64_t *samples, size_t n)
{
	tf_profile *p = new_run("cpu-clock");
	const int64_t period = samples ? 4000000 : PERIOD;
	p->period = period;
	if (samples)
		tf_profile_set_meta(p, "sampler", "perf");
	for (size_t i = 0; i < n; i++) {
		char name[32], key[40], val[200];
		int64_t k = samples ? samples[i] : 0;
		snprintf(name, sizeof(name), "t%zu", i);
		if (k)
			add_at(p, name, k, "main;TestBody;work", period);
		snprintf(key, sizeof(key), "test.%s", name);
		snprintf(val, sizeof(val), "samples=%lld value=%lld wall_ns=1 source=frames "
			 "runner_ns=%.0f runner_q_ns=1000000", (long long)k, (long long)(k * period),
			 ms[i] * 1e6);
		tf_profile_set_meta(p, key, val);
	}
	return p;
}

static tf_profile *runner_run(const double *ms, size_t n)
{
	return runner_run_sampled(ms, NULL, n);
}

/*
 * A runner's duration is wall-clock time: with two runs on a side, one
 * descheduled for 69 ms does not make a 5 ms test slower (yaml-cpp under
 * load): the quickest of a side is its cost, and two slow runs stay slow.
 */
static void test_runner_wall_clock_least(void **state)
{
	(void)state;
	double bc[12], h1[12], h2[12];
	for (int i = 0; i < 12; i++)
		bc[i] = h1[i] = h2[i] = 5 + 3 * (i % 4);
	h2[0] = 74;
	h1[1] = h2[1] = 40;
	tf_profile *b = runner_run(bc, 12), *h[2] = { runner_run(h1, 12), runner_run(h2, 12) };
	tf_comparison *c = compare_n(&b, 1, h, 2, NULL);
	const tf_test_delta *t0 = tf_comparison_find(c, "t0"), *t1 = tf_comparison_find(c, "t1");
	assert_int_equal(t0->measure, TF_MEASURE_RUNNER);
	assert_int_not_equal(t0->verdict, TF_VERDICT_REGRESSED);
	assert_true(fabs(t0->delta_pct) < 1);
	assert_true(fabs(t1->delta_pct - 400) < 1);
	assert_int_not_equal(t1->verdict, TF_VERDICT_UNCHANGED);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h[0]);
	tf_profile_free(h[1]);
}

/*
 * A runner's duration is wall-clock time, and a test's samples count its
 * CPU time: a second witness, each at half the alpha. A test of one tick
 * in the base (1 ms, no sample) took 151 and 187 ms in two head runs on a
 * loaded machine whose unchanged tests moved by a tick or two: its clock
 * cannot tell (the tick's jitter swamps the log of a 1 ms base), its
 * samples, 0 against 20 and 20 (80 ms of CPU a run), can (GoogleTest's
 * Rare_Suite.Uses_Rare in t0920 at load 6.8). The samples are judged as
 * a sampled test is, not by the runner's clocks' spread, which a busier
 * machine widens (a make test run's t0920: inconclusive by both). An
 * unchanged test that got one sample on one side is not regressed by it.
 */
static void test_runner_cpu_witness(void **state)
{
	(void)state;
	/* t0920's GoogleTest program at load 6.8, its tests timed by their
	 * runner: t0 and t1 slowed, t2-t8 of a tick or less, moving by up to
	 * one (t8: 5 ms in a base run descheduled); c0-c199 the ctest tests,
	 * of 1 to 3 ms, their counts measured within 3% */
	double bc[9] = { 1, 1, 0, 1, 0, 0, 0, 0, 5 };
	double h1[9] = { 187, 91, 2, 1, 0, 0, 0, 0, 0 };
	double h2[9] = { 151, 482, 1, 3, 0, 0, 0, 1, 1 };
	int64_t bs[9] = { 0 }, hs1[9] = { 20, 20, 1, 1 }, hs2[9] = { 20, 19, 1, 1 };
	/* sampled 2: a busier machine, its runner's clocks wandering by up
	 * to 4 ticks (their spread, 80% a run, is no noise of CPU time) */
	for (int sampled = 0; sampled < 3; sampled++) {
		if (sampled == 2) {
			static const double b2[9] = { 1, 1, 0, 4, 0, 2, 0, 3, 5 };
			static const double h12[9] = { 187, 91, 4, 1, 3, 0, 2, 0, 1 };
			static const double h22[9] = { 151, 482, 1, 3, 0, 4, 0, 1, 4 };
			memcpy(bc, b2, sizeof(bc));
			memcpy(h1, h12, sizeof(h1));
			memcpy(h2, h22, sizeof(h2));
		}
		tf_profile *b = runner_run_sampled(bc, sampled ? bs : NULL, 9);
		tf_profile *h[2] = { runner_run_sampled(h1, sampled ? hs1 : NULL, 9),
				     runner_run_sampled(h2, sampled ? hs2 : NULL, 9) };
		for (int i = 0; i < 200; i++) {
			char key[40], val[160];
			snprintf(key, sizeof(key), "test.c%d", i);
			for (int r = 0; r < 3; r++) {
				double ms = (1 + i % 3) * (1 + 0.03 * ((i + r) % 3 - 1));
				snprintf(val, sizeof(val), "samples=0 value=0 wall_ns=1 source=process "
					 "count=%.0f", ms * 1e6);
				tf_profile_set_meta(r ? h[r - 1] : b, key, val);
			}
		}
		tf_comparison *c = compare_n(&b, 1, h, 2, NULL);
		const tf_test_delta *t0 = tf_comparison_find(c, "t0"), *t1 = tf_comparison_find(c, "t1");
		assert_int_equal(t0->measure, TF_MEASURE_RUNNER);
		assert_true(t0->head.cost > 150e6);
		if (sampled) {
			assert_int_equal(t0->verdict, TF_VERDICT_REGRESSED);
			assert_non_null(strstr(t0->reason, "by its samples (40 against 0)"));
			assert_int_equal(t1->verdict, TF_VERDICT_REGRESSED);
		} else {
			assert_int_equal(t0->verdict, TF_VERDICT_INCONCLUSIVE);
			assert_int_equal(t1->verdict, TF_VERDICT_INCONCLUSIVE);
		}
		/* one sample a head run, none in the base, a tick each */
		assert_int_not_equal(tf_comparison_find(c, "t2")->verdict, TF_VERDICT_REGRESSED);
		assert_int_not_equal(tf_comparison_find(c, "t3")->verdict, TF_VERDICT_REGRESSED);
		assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], sampled ? 2 : 0);
		tf_comparison_free(c);
		tf_profile_free(b);
		tf_profile_free(h[0]);
		tf_profile_free(h[1]);
	}
}

/*
 * A test's noise is learned from its neighbours in size only among tests
 * that ran no changed code, when there are enough of those: semver's 11
 * tests of 35 that ran the slowed function, each 300 to 3,000 times
 * slower, were their own neighbours, and their ratios' spread (a log of
 * 0.6 to 2.3) made one run's noise so wide that the slowest of them was
 * undecided (test_basic, 0.1 ms to 321 ms).
 */
static void test_noise_from_untouched_neighbours(void **state)
{
	(void)state;
	enum { N = 35, SLOWED = 11 };
	double bc[N], hc[N];
	int64_t zero[N] = { 0 };
	/* the slowed: 0.08-0.13 ms, 300 to 3,000 times slower */
	static const double times[SLOWED] = { 300, 3000, 420, 2600, 600, 1900, 850, 1400,
					      1000, 330, 2900 };
	for (int i = 0; i < SLOWED; i++) {
		bc[i] = 8e4 + 5e3 * i;
		hc[i] = bc[i] * times[i];
	}
	/* the untouched: 1 ms to 60 ms, each within 2% */
	for (int i = SLOWED; i < N; i++) {
		bc[i] = 1e6 * pow(60, (double)(i - SLOWED) / (N - SLOWED - 1));
		hc[i] = bc[i] * (1 + 0.02 * sin(7.0 * i));
	}
	tf_profile *b = exact_run(bc, zero, N), *h = exact_run(hc, zero, N);
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "t%d", i);
		const char *stack = i < SLOWED ? "main:1;work:3" : "main:1;other:20";
		add(b, name, 1, stack);
		add(h, name, 1, stack);
	}
	tf_profile_set_meta(h, "changes", "[{\"path\":\"src/work.c\",\"status\":\"M\","
					  "\"lines\":[[3,4]]}]");
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	tf_comparison *c = compare1(b, h, &o);
	for (int i = 0; i < N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "t%d", i);
		const tf_test_delta *t = tf_comparison_find(c, name);
		assert_non_null(t);
		assert_int_equal(t->ran_changed, i < SLOWED);
		assert_int_equal(t->verdict, i < SLOWED ? TF_VERDICT_REGRESSED : TF_VERDICT_UNCHANGED);
	}
	assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], SLOWED);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/*
 * Under the suspects limit the family the gate corrects for is the tests
 * that may come out regressed: the suspects (picked on another run) and
 * the tests that ran changed code. Twelve tests confirmed together, eight
 * alternating runs a side, for the one that looked slower: its p-value
 * would pass alpha alone and not times twelve.
 */
static void test_suspects_family(void **state)
{
	(void)state;
	enum { N = 12, RUNS = 8 };
	tf_profile *b[RUNS], *h[RUNS];
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int r = 0; r < RUNS; r++) {
		double bc[N], hc[N];
		int64_t zs[N] = { 0 };
		for (int i = 0; i < N; i++) {
			double u[2];
			for (int k = 0; k < 2; k++) { /* run-to-run noise, up to 10% */
				x = x * 6364136223846793005ULL + 1442695040888963407ULL;
				u[k] = (double)(x >> 11) / 9007199254740992.0 - 0.5;
			}
			bc[i] = 1e8 * (1 + i % 4) * (1 + 0.2 * u[0]);
			hc[i] = 1e8 * (1 + i % 4) * (1 + 0.2 * u[1]) * (i == 1 ? 1.04 : 1);
		}
		b[r] = exact_run(bc, zs, N);
		h[r] = exact_run(hc, zs, N);
	}
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	tf_comparison *c = compare_n(b, RUNS, h, RUNS, &o);
	const tf_test_delta *t1 = tf_comparison_find(c, "t1");
	double t0_adj = tf_comparison_find(c, "t0")->p_adjusted;
	assert_true(t1->p_value < o.alpha && t1->p_adjusted > o.alpha);
	assert_int_equal(t1->verdict, TF_VERDICT_INCONCLUSIVE);
	tf_comparison_free(c);

	const char *suspects[] = { "t1" };
	o.suspects = suspects;
	o.nsuspects = 1;
	c = compare_n(b, RUNS, h, RUNS, &o);
	t1 = tf_comparison_find(c, "t1");
	assert_true(t1->p_adjusted == t1->p_value);
	assert_int_equal(t1->verdict, TF_VERDICT_REGRESSED);
	/* the others keep the whole suite's correction */
	assert_true(tf_comparison_find(c, "t0")->p_adjusted == t0_adj);
	assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], 1);
	tf_comparison_free(c);
	for (int r = 0; r < RUNS; r++) {
		tf_profile_free(b[r]);
		tf_profile_free(h[r]);
	}
}

/*
 * Sides that alternate in one job (a duet, --against) are moderated with
 * what the history knows of one job's runs among themselves, where
 * baselines of several runs measured it, not with a run's whole noise
 * from one job to the next: three rounds that agree within 1.5% give a
 * narrower interval and a smaller p under a history of 4% between jobs
 * and 1.5% within than under the same history without the within part.
 */
static void test_interleaved_within_prior(void **state)
{
	(void)state;
	static const double bc[3] = { 1.000e8, 1.015e8, 0.985e8 };
	static const double hc[3] = { 1.055e8, 1.040e8, 1.070e8 };
	tf_profile *b[3], *h[3];
	int64_t zs[1] = { 0 };
	for (int r = 0; r < 3; r++) {
		b[r] = exact_run(&bc[r], zs, 1);
		h[r] = exact_run(&hc[r], zs, 1);
	}
	tf_test_noise hn;
	memset(&hn, 0, sizeof(hn));
	hn.test = "t0";
	hn.noise_pct = 4;
	hn.runs = 10;
	hn.df = 9;
	hn.within_pct = 1.5;
	hn.within_df = 8;
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.history = &hn;
	o.nhistory = 1;
	tf_comparison *c = compare_n(b, 3, h, 3, &o);
	const tf_test_delta *t = tf_comparison_find(c, "t0");
	assert_true(t->noise_from_history);
	double width = t->ci_high_pct - t->ci_low_pct, p = t->p_value;
	tf_comparison_free(c);

	hn.within_pct = hn.within_df = 0;
	c = compare_n(b, 3, h, 3, &o);
	t = tf_comparison_find(c, "t0");
	double width_total = t->ci_high_pct - t->ci_low_pct;
	assert_true(width < 0.7 * width_total);
	assert_true(p < t->p_value / 3);
	tf_comparison_free(c);

	/* a within part of fewer than 4 degrees of freedom says too little */
	hn.within_pct = 1.5;
	hn.within_df = 2;
	c = compare_n(b, 3, h, 3, &o);
	t = tf_comparison_find(c, "t0");
	assert_true(fabs(t->ci_high_pct - t->ci_low_pct - width_total) < 1e-9);
	tf_comparison_free(c);
	for (int r = 0; r < 3; r++) {
		tf_profile_free(b[r]);
		tf_profile_free(h[r]);
	}
}

/*
 * After a rerun confirmed a suspicion, only the tests that raised it, and
 * tests that ran changed code, may fail: among 200 tests of a millisecond
 * (jansson's, t0920's), one looks twice as slow by chance in a run, the
 * reruns included, and nothing would confirm that one (a README-only
 * branch failed on case_145); but half of cJSON's tests slowed a
 * thousandfold widen every test's interval in the first run, and those
 * are decided by the reruns.
 */
static void test_only_suspects_after_rerun(void **state)
{
	(void)state;
	double bc[12], hc[12];
	int64_t bs[12] = { 0 }, hs[12] = { 0 };
	for (int i = 0; i < 12; i++)
		bc[i] = hc[i] = 1e6 * (1 + i % 4);
	hc[0] *= 3;
	hc[1] *= 3;
	tf_profile *b = exact_run(bc, bs, 12), *h = exact_run(hc, hs, 12);
	const char *suspects[] = { "t1", "t7" };
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	tf_comparison *c = compare1(b, h, &o);
	assert_int_equal(tf_comparison_find(c, "t0")->verdict, TF_VERDICT_REGRESSED);
	assert_true(tf_comparison_suspect(c, tf_comparison_find(c, "t0"), 5));
	assert_false(tf_comparison_suspect(c, tf_comparison_find(c, "t2"), 5));
	tf_comparison_free(c);

	o.suspects = suspects;
	o.nsuspects = 2;
	c = compare1(b, h, &o);
	const tf_test_delta *t0 = tf_comparison_find(c, "t0"), *t1 = tf_comparison_find(c, "t1");
	assert_int_equal(t1->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(t0->verdict, TF_VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(t0->reason, "+200.0% in the runs that confirmed another test"));
	assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], 1);
	assert_int_equal(tf_comparison_find(c, "t7")->verdict, TF_VERDICT_UNCHANGED);
	tf_comparison_free(c);

	/* t0 ran a changed line (work.c:3): the first run may have been too
	 * noisy to decide it, the reruns decide it */
	add(b, "t0", 5, "main:1;work:3");
	add(h, "t0", 5, "main:1;work:3");
	tf_profile_set_meta(h, "changes", "[{\"path\":\"src/work.c\",\"status\":\"M\","
					  "\"lines\":[[3,4]]}]");
	c = compare1(b, h, &o);
	assert_true(tf_comparison_find(c, "t0")->ran_changed);
	assert_int_equal(tf_comparison_find(c, "t0")->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], 2);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/*
 * A program that holds tests (a ctest test running Unity's or GoogleTest's,
 * a Go package's test binary) is judged through them: its nested tests
 * carry the verdicts, and its own samples (setup, the runtime) are its work
 * outside them, shown and not gated, as "[outside tests]" is (gorilla/mux's
 * mux.test failed a README-only branch by its count, its 68 tests and the
 * runtime's share together). That it holds tests is decided by its nested
 * tests named on both sides, never by their samples: work inside its tests
 * that no listed test's frame names (cmocka's tail calls) is "prog
 * [unnamed tests]", nested and gated, ran wherever prog ran.
 */
static void add_nested(tf_profile *p, double prog_cost, int64_t inner_samples, int64_t own,
		       int64_t unnamed)
{
	char val[200];
	if (unnamed) {
		add(p, "prog [unnamed tests]", unnamed, "main:1;_run_test:2;hot:10");
		snprintf(val, sizeof(val), "samples=%lld value=%lld wall_ns=1 source=frames "
			 "parent=prog", (long long)unnamed, (long long)unnamed * PERIOD);
		tf_profile_set_meta(p, "test.prog [unnamed tests]", val);
	}
	if (inner_samples) {
		add(p, "inner", inner_samples, "main:1;work:5;hot:10");
		add(p, "inner", 100, "main:1;work:6");
	}
	if (own)
		add(p, "prog", own, "main:1;setup:3");
	snprintf(val, sizeof(val), "samples=%lld value=%lld wall_ns=1 source=process count=%.0f nested=1",
		 (long long)own, (long long)own * PERIOD, prog_cost);
	tf_profile_set_meta(p, "test.prog", val);
	snprintf(val, sizeof(val), "samples=%lld value=%lld wall_ns=1 source=frames parent=prog",
		 (long long)(inner_samples ? inner_samples + 100 : 0),
		 (long long)((inner_samples ? inner_samples + 100 : 0) * PERIOD));
	tf_profile_set_meta(p, "test.inner", val);
}

static tf_comparison *compare_nested_unnamed(int64_t base_inner, int64_t head_inner,
					     int64_t base_own, int64_t head_own,
					     int64_t base_unnamed, int64_t head_unnamed)
{
	double bc[12], hc[12];
	int64_t bs[12] = { 0 }, hs[12] = { 0 };
	for (int i = 0; i < 12; i++)
		bc[i] = hc[i] = 1e6 * (1 + i % 4);
	tf_profile *b = exact_run(bc, bs, 12), *h = exact_run(hc, hs, 12);
	add_nested(b, (double)(base_inner + 100 + base_own + base_unnamed) * PERIOD, base_inner,
		   base_own, base_unnamed);
	add_nested(h, (double)(head_inner + 100 + head_own + head_unnamed) * PERIOD, head_inner,
		   head_own, head_unnamed);
	/* hot.c:10 changed: the nested test ran it, so its parent did */
	tf_profile_set_meta(h, "changes", "[{\"path\":\"src/hot.c\",\"status\":\"M\","
					  "\"lines\":[[10,10]]}]");
	tf_comparison *c = compare1(b, h, NULL);
	tf_profile_free(b);
	tf_profile_free(h);
	return c;
}

static tf_comparison *compare_nested(int64_t base_inner, int64_t head_inner, int64_t base_own,
				     int64_t head_own)
{
	return compare_nested_unnamed(base_inner, head_inner, base_own, head_own, 0, 0);
}

static void test_nested_parent_outside(void **state)
{
	(void)state;
	/* the nested test slowed 3x, the program's own work the same */
	tf_comparison *c = compare_nested(1000, 3000, 200, 200);
	const tf_test_delta *prog = tf_comparison_find(c, "prog");
	const tf_test_delta *inner = tf_comparison_find(c, "inner");
	assert_true(inner->ran_changed);
	assert_true(prog->ran_changed);
	assert_false(tf_comparison_find(c, "t1")->ran_changed);
	assert_string_equal(prog->parent ? prog->parent : "", "");
	assert_string_equal(inner->parent, "prog");
	assert_true(prog->outside);
	assert_int_equal(prog->measure, TF_MEASURE_SAMPLES);
	assert_true(prog->base.cost == 200.0 * PERIOD && prog->head.cost == 200.0 * PERIOD);
	assert_int_not_equal(prog->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(inner->verdict, TF_VERDICT_REGRESSED);
	assert_string_equal(inner->functions[0].name, "hot");
	assert_true(tf_comparison_regressed(c));
	assert_int_equal(c->summary.ntests, 13); /* the program is not one */
	tf_comparison_free(c);

	/* the program's own work 4x, its test 3x: the program is shown, not
	 * gated, and what grew in it is its own */
	c = compare_nested(1000, 3000, 200, 800);
	prog = tf_comparison_find(c, "prog");
	assert_true(prog->outside);
	assert_int_equal(prog->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], 1); /* inner */
	assert_true(prog->nfunctions > 0);
	assert_string_equal(prog->functions[0].name, "setup");
	for (size_t i = 0; i < prog->nfunctions; i++)
		assert_string_not_equal(prog->functions[i].name, "hot");
	tf_comparison_free(c);

	/* its listed test never sampled, the work inside it under a tail
	 * call's helper: prog still holds it (its own 1000 samples outside,
	 * not gated), and the unnamed work that grew 3x is gated, whether the
	 * base sampled it (1000) or not (none: ran, one period at most) */
	const int64_t base_unnamed[] = { 1000, 0 };
	for (int k = 0; k < 2; k++) {
		c = compare_nested_unnamed(0, 0, 1000, 1000, base_unnamed[k], 3000);
		prog = tf_comparison_find(c, "prog");
		const tf_test_delta *un = tf_comparison_find(c, "prog [unnamed tests]");
		assert_true(prog->outside);
		assert_int_equal(prog->measure, TF_MEASURE_SAMPLES);
		assert_int_not_equal(prog->verdict, TF_VERDICT_REGRESSED);
		assert_non_null(un);
		assert_false(un->outside);
		assert_string_equal(un->parent, "prog");
		assert_int_equal(un->measure, TF_MEASURE_SAMPLES);
		assert_int_equal(un->verdict, TF_VERDICT_REGRESSED);
		assert_string_equal(un->functions[0].name, "hot");
		assert_true(tf_comparison_regressed(c));
		tf_comparison_free(c);
	}

	/* unchanged, sampled on one side only: ran on both, never new */
	c = compare_nested_unnamed(0, 0, 1000, 1000, 0, 1);
	const tf_test_delta *un = tf_comparison_find(c, "prog [unnamed tests]");
	assert_non_null(un);
	assert_int_not_equal(un->verdict, TF_VERDICT_NEW);
	assert_false(tf_comparison_regressed(c));
	tf_comparison_free(c);
}

/*
 * A test judged by its exact time whose samples are too few for a function
 * to stand out (semver's test_pre: 0 samples against 2, 27 us to 7.7 ms of
 * CPU, regressed with an empty list): where its samples grew is named,
 * marked within_noise; a test with samples enough lists only what stands
 * out, unmarked.
 */
static void test_functions_of_few_samples(void **state)
{
	(void)state;
	double bc[12], hc[12];
	int64_t bs[12] = { 0 }, hs[12] = { 0 };
	for (int i = 0; i < 12; i++)
		bc[i] = hc[i] = 1e6 * (1 + i % 4);
	bc[0] = 27e3;
	hc[0] = 7.7e6;
	tf_profile *b = exact_run(bc, bs, 12), *h = exact_run(hc, hs, 12);
	add(h, "t0", 2, "main:1;req:4;matches:9");
	tf_profile_set_meta(h, "test.t0", "samples=2 value=20000000 wall_ns=1 source=process count=7700000");
	tf_comparison *c = compare1(b, h, NULL);
	const tf_test_delta *t = tf_comparison_find(c, "t0");
	assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
	assert_int_equal(t->measure, TF_MEASURE_COUNT);
	assert_true(t->nfunctions > 0);
	assert_string_equal(t->functions[0].name, "matches");
	assert_true(t->functions[0].within_noise);
	tf_buf out = TF_BUF_INIT;
	assert_int_equal(tf_comparison_to_json(&out, c), 0);
	json_t *j = json_loads(out.ptr, 0, NULL);
	tf_buf_free(&out);
	assert_non_null(j);
	json_t *tests = json_object_get(j, "tests");
	bool seen = false;
	for (size_t i = 0; i < json_array_size(tests); i++) {
		json_t *o = json_array_get(tests, i);
		if (strcmp(json_string_value(json_object_get(o, "name")), "t0") != 0)
			continue;
		json_t *f = json_array_get(json_object_get(o, "functions"), 0);
		assert_true(json_is_true(json_object_get(f, "within_noise")));
		seen = true;
	}
	assert_true(seen);
	json_decref(j);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);

	/* 100 samples against 300: hot stands out on its own */
	b = new_run("cpu-clock");
	h = new_run("cpu-clock");
	add(b, "big", 100, "main:1;hot:2");
	add(h, "big", 300, "main:1;hot:2");
	c = compare1(b, h, NULL);
	t = tf_comparison_find(c, "big");
	assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
	assert_string_equal(t->functions[0].name, "hot");
	assert_false(t->functions[0].within_noise);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/*
 * The runner's shift: a head on a machine 30% slower, one test running
 * changed code 2x slower. The 11 tests that ran no changed code measure
 * the 30% (src/work.c is the changed file; their frames are elsewhere);
 * it is taken out of every test: the changed one regressed by about 54%
 * beyond it, the others unchanged. When a build file changed, nothing is
 * taken out and the summary says why.
 */
static void test_runner_shift(void **state)
{
	(void)state;
	for (int build = 0; build < 2; build++) {
		tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
		tf_profile_set_meta(b, "sampler", "perf");
		tf_profile_set_meta(h, "sampler", "perf");
		tf_profile_set_meta(h, "changes", build
			? "[{\"path\":\"src/work.c\",\"status\":\"M\",\"lines\":[[3,4]]},"
			  "{\"path\":\"CMakeLists.txt\",\"status\":\"M\",\"lines\":[[1,1]]}]"
			: "[{\"path\":\"src/work.c\",\"status\":\"M\",\"lines\":[[3,4]]}]");
		for (int i = 0; i < 12; i++) {
			char name[16], key[32], val[128];
			snprintf(name, sizeof(name), "t%d", i);
			double cb = 1e8 * (1 + i % 3), ch = cb * 1.3 * (i == 0 ? 2 : 1);
			/* t0 runs work() at its changed line; the others main only */
			add(b, name, 10, i == 0 ? "main:1;work:3" : "main:9");
			add(h, name, 10, i == 0 ? "main:1;work:3" : "main:9");
			snprintf(key, sizeof(key), "test.%s", name);
			snprintf(val, sizeof(val), "samples=10 value=1 wall_ns=1 source=process count=%.0f", cb);
			tf_profile_set_meta(b, key, val);
			snprintf(val, sizeof(val), "samples=10 value=1 wall_ns=1 source=process count=%.0f", ch);
			tf_profile_set_meta(h, key, val);
		}
		tf_compare_opts o;
		tf_compare_opts_init(&o);
		o.noise = 3;
		tf_comparison *c = compare1(b, h, &o);
		const tf_test_delta *t0 = tf_comparison_find(c, "t0"), *t5 = tf_comparison_find(c, "t5");
		if (!build) {
			assert_true(fabs(c->summary.shift_pct - 30) < 0.01);
			assert_int_equal(c->summary.control_tests, 11);
			assert_int_equal(c->summary.touching_tests, 1);
			assert_true(fabs(t0->delta_pct - 100) < 0.01);
			assert_true(fabs(t0->raw_delta_pct - 160) < 0.01);
			assert_int_equal(t0->verdict, TF_VERDICT_REGRESSED);
			assert_int_equal(t5->verdict, TF_VERDICT_UNCHANGED);
			assert_false(c->summary.count[TF_VERDICT_REGRESSED] > 1);
		} else {
			assert_true(isnan(c->summary.shift_pct));
			assert_non_null(strstr(c->summary.shift_note, "'CMakeLists.txt' changed"));
			/* the 30% stays in: everything looks slower */
			assert_int_equal(t5->verdict, TF_VERDICT_REGRESSED);
		}
		tf_comparison_free(c);
		tf_profile_free(b);
		tf_profile_free(h);
	}
}

/*
 * A Go module's README-only branch on a machine 30% slower: three package
 * binaries, each holding two tests of which one is too short for a sample
 * (go-cmp's examples), and one test (TB) 50% slower by its CPU. The three
 * sampled tests are too few to measure the runner by; the binaries' own
 * work (the runtime, GC) ran no changed code and measures it too: the
 * 30% is taken out, and TB is not regressed. The same tests run by no
 * binary that holds them (a program each): no shift, TB regressed.
 */
static void test_runner_shift_holders(void **state)
{
	(void)state;
	for (int holders = 0; holders < 2; holders++) {
		tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
		tf_profile_set_meta(b, "sampler", "perf");
		tf_profile_set_meta(h, "sampler", "perf");
		tf_profile_set_meta(h, "changes", "[{\"path\":\"README\",\"status\":\"M\","
						  "\"lines\":[[2,2]]}]");
		static const char *const pkgs[] = { "a.test", "b.test", "c.test" };
		for (int i = 0; i < 3; i++) {
			char t[16], ex[16], key[48], val[160], parent[32] = "";
			snprintf(t, sizeof(t), "T%c", 'A' + i);
			snprintf(ex, sizeof(ex), "Example%c", 'A' + i);
			if (holders)
				snprintf(parent, sizeof(parent), " parent=%s", pkgs[i]);
			int64_t tb = 40, th = i == 1 ? 60 : 52, own_b = 100, own_h = 130;
			add(b, t, tb, "runtime.goexit:1;testing.tRunner:2;work:9");
			add(h, t, th, "runtime.goexit:1;testing.tRunner:2;work:9");
			if (holders) {
				add(b, pkgs[i], own_b, "runtime.main:1;runtime.gcBgMarkWorker:3");
				add(h, pkgs[i], own_h, "runtime.main:1;runtime.gcBgMarkWorker:3");
			}
			for (int side = 0; side < 2; side++) {
				tf_profile *p = side ? h : b;
				int64_t n = side ? th : tb, own = side ? own_h : own_b;
				if (holders) {
					snprintf(key, sizeof(key), "test.%s", pkgs[i]);
					snprintf(val, sizeof(val), "samples=%lld value=%lld wall_ns=1 "
						 "source=process count=%lld nested=2", (long long)own,
						 (long long)(own * PERIOD), (long long)((own + n) * PERIOD));
					tf_profile_set_meta(p, key, val);
				}
				snprintf(key, sizeof(key), "test.%s", t);
				snprintf(val, sizeof(val), "samples=%lld value=%lld wall_ns=1 "
					 "source=frames%s", (long long)n, (long long)(n * PERIOD), parent);
				tf_profile_set_meta(p, key, val);
				snprintf(key, sizeof(key), "test.%s", ex);
				snprintf(val, sizeof(val), "samples=0 value=0 wall_ns=1 source=frames%s",
					 parent);
				tf_profile_set_meta(p, key, val);
			}
		}
		tf_compare_opts o;
		tf_compare_opts_init(&o);
		o.noise = 3;
		tf_comparison *c = compare1(b, h, &o);
		const tf_test_delta *tb = tf_comparison_find(c, "TB");
		assert_non_null(tb);
		if (holders) {
			assert_true(tf_comparison_find(c, "b.test")->outside);
			assert_int_equal(c->summary.control_tests, 6);
			assert_true(fabs(c->summary.shift_pct - 30) < 0.01);
			assert_int_not_equal(tb->verdict, TF_VERDICT_REGRESSED);
			assert_int_equal(c->summary.count[TF_VERDICT_REGRESSED], 0);
		} else {
			assert_int_equal(c->summary.control_tests, 3);
			assert_true(isnan(c->summary.shift_pct));
			assert_int_equal(tb->verdict, TF_VERDICT_REGRESSED);
		}
		tf_comparison_free(c);
		tf_profile_free(b);
		tf_profile_free(h);
	}
}

/*
 * Tests picked for looking slower (a confirmation's suspects run alone,
 * three rounds alternately with the base) are no control group: jansson's
 * json_pack slowed 65-fold made its seven suspects slower by 2 to 65
 * times, the median move of the seven was taken out of each as the
 * runner's, and test_pack came out inconclusive (+321%, 95% CI -42% to
 * +2973%). Here five tests all twice as slow, none with a frame in the
 * changed file: with o.picked, each regressed by its 100%; without it,
 * their median move is the runner's and each is called unchanged. The
 * clock's jitter is not read from them either: five tests timed by their
 * runner, slowed by 10 to 160 ms, each regressed.
 */
static void test_picked_tests(void **state)
{
	(void)state;
	for (int picked = 0; picked < 2; picked++) {
		tf_profile *b[3], *h[3];
		for (int r = 0; r < 3; r++) {
			double bc[5], hc[5];
			int64_t bs[5] = { 0 }, hs[5] = { 0 };
			for (int i = 0; i < 5; i++) {
				/* a run-to-run wobble of about 1% */
				bc[i] = 2e7 * (1 + i) * (1 + 0.01 * ((r + i) % 3 - 1));
				hc[i] = 2 * 2e7 * (1 + i) * (1 + 0.01 * ((r + 2 * i) % 3 - 1));
			}
			b[r] = exact_run(bc, bs, 5);
			h[r] = exact_run(hc, hs, 5);
			tf_profile_set_meta(h[r], "changes", "[{\"path\":\"src/shared.h\",\"status\":"
							     "\"M\",\"lines\":[[1,1]]}]");
		}
		tf_compare_opts o;
		tf_compare_opts_init(&o);
		o.separate_jobs = false;
		o.picked = picked;
		tf_comparison *c = compare_n(b, 3, h, 3, &o);
		for (int i = 0; i < 5; i++) {
			char name[16];
			snprintf(name, sizeof(name), "t%d", i);
			const tf_test_delta *t = tf_comparison_find(c, name);
			assert_false(t->ran_changed);
			if (picked) {
				assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
				assert_true(fabs(t->delta_pct - 100) < 5);
			} else {
				assert_int_not_equal(t->verdict, TF_VERDICT_REGRESSED);
			}
		}
		if (picked)
			assert_true(isnan(c->summary.shift_pct));
		else
			assert_true(fabs(c->summary.shift_pct - 100) < 5);
		tf_comparison_free(c);
		for (int r = 0; r < 3; r++) {
			tf_profile_free(b[r]);
			tf_profile_free(h[r]);
		}
	}
	for (int picked = 0; picked < 2; picked++) {
		tf_profile *b[3], *h[3];
		for (int r = 0; r < 3; r++) {
			double bm[5], hm[5];
			for (int i = 0; i < 5; i++) {
				bm[i] = 10 << i;
				hm[i] = 2 * bm[i] + (r + i) % 3 - 1;
			}
			b[r] = runner_run(bm, 5);
			h[r] = runner_run(hm, 5);
		}
		tf_compare_opts o;
		tf_compare_opts_init(&o);
		o.separate_jobs = false;
		o.picked = picked;
		tf_comparison *c = compare_n(b, 3, h, 3, &o);
		const tf_test_delta *t0 = tf_comparison_find(c, "t0");
		assert_int_equal(t0->measure, TF_MEASURE_RUNNER);
		if (picked)
			for (int i = 0; i < 5; i++) {
				char name[16];
				snprintf(name, sizeof(name), "t%d", i);
				assert_int_equal(tf_comparison_find(c, name)->verdict,
						 TF_VERDICT_REGRESSED);
			}
		else
			assert_int_not_equal(t0->verdict, TF_VERDICT_REGRESSED);
		tf_comparison_free(c);
		for (int r = 0; r < 3; r++) {
			tf_profile_free(b[r]);
			tf_profile_free(h[r]);
		}
	}
}

/* gate.min_samples holds back a test judged by its samples, never one
 * measured exactly. */
/* A run with off-CPU time: six tests of 500 ms of CPU, test_0 waiting
 * `wait_ns` in `nwaits` waits and `pagein_ns` more for the disk to page
 * its files in, the others never. */
static tf_profile *waits_run(double wait_ns, double pagein_ns, int nwaits)
{
	tf_profile *p = new_run("cpu-clock");
	tf_profile_add_sample_type(p, "off-cpu", "nanoseconds");
	tf_profile_add_sample_type(p, "wall", "nanoseconds");
	tf_profile_set_meta(p, "offcpu", "switches");
	for (int t = 0; t < 6; t++) {
		char name[16], key[48], v[160];
		snprintf(name, sizeof(name), "test_%d", t);
		add(p, name, 50, "main:1;work:2");
		snprintf(key, sizeof(key), "test.%s", name);
		snprintf(v, sizeof(v), "samples=50 value=500000000 count=500000000 offcpu_ns=%.0f offcpu_waits=%d",
			 t == 0 ? wait_ns + pagein_ns : 0, t == 0 ? nwaits : 0);
		if (t == 0 && pagein_ns > 0)
			snprintf(v + strlen(v), sizeof(v) - strlen(v), " offcpu_pagein_ns=%.0f",
				 pagein_ns);
		tf_profile_set_meta(p, key, v);
	}
	return p;
}

static tf_profile *pagein_run(double wait_ns, double pagein_ns)
{
	return waits_run(wait_ns, pagein_ns, wait_ns + pagein_ns > 0);
}

static tf_profile *wait_run(double wait_ns)
{
	return pagein_run(wait_ns, 0);
}

/* test_0's verdict, base runs `b` against head runs `h` (each a wait and
 * a page-in, ns), judged by `measure` */
static tf_verdict pagein_verdict(const double (*b)[2], size_t nb, const double (*h)[2], size_t nh,
				 tf_gate_measure measure)
{
	tf_profile *pb[4], *ph[4];
	for (size_t i = 0; i < nb; i++)
		pb[i] = pagein_run(b[i][0], b[i][1]);
	for (size_t i = 0; i < nh; i++)
		ph[i] = pagein_run(h[i][0], h[i][1]);
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.measure = measure;
	tf_comparison *c = compare_n(pb, nb, ph, nh, &o);
	const tf_test_delta *t = tf_comparison_find(c, "test_0");
	assert_non_null(t);
	tf_verdict v = t->verdict;
	tf_comparison_free(c);
	for (size_t i = 0; i < nb; i++)
		tf_profile_free(pb[i]);
	for (size_t i = 0; i < nh; i++)
		tf_profile_free(ph[i]);
	return v;
}

/* A page-in (the disk bringing a page the cache did not hold) decides
 * nothing unless every run of both sides repeats it: a README-only branch
 * of t0920's suite failed when case_036 waited 60 ms in _start for its
 * binary's pages, read once (0 in the base). A wait beside it still counts,
 * and page-ins that every run has (two runs a side or more) count too. */
static void test_waits_pageins(void **state)
{
	(void)state;
	const double none[3][2] = { { 0, 0 }, { 0, 0 }, { 0, 0 } };
	const double cold[3][2] = { { 0, 60e6 }, { 0, 0 }, { 0, 0 } };
	const double sleep_cold[1][2] = { { 50e6, 60e6 } };
	const double every[3][2] = { { 0, 61e6 }, { 0, 60e6 }, { 0, 62e6 } };

	/* one run a side: left out, whatever the measure */
	assert_int_equal(pagein_verdict(none, 1, cold, 1, TF_GATE_BOTH), TF_VERDICT_UNCHANGED);
	assert_int_equal(pagein_verdict(none, 1, cold, 1, TF_GATE_WALL), TF_VERDICT_UNCHANGED);
	assert_int_equal(pagein_verdict(cold, 1, none, 1, TF_GATE_BOTH), TF_VERDICT_UNCHANGED);
	/* a sleep beside it is the test's */
	assert_int_equal(pagein_verdict(none, 1, sleep_cold, 1, TF_GATE_BOTH), TF_VERDICT_REGRESSED);
	/* three runs a side: the first run's cold cache is left out, a
	 * page-in in every run counts */
	assert_int_equal(pagein_verdict(none, 3, cold, 3, TF_GATE_BOTH), TF_VERDICT_UNCHANGED);
	assert_int_equal(pagein_verdict(none, 3, every, 3, TF_GATE_BOTH), TF_VERDICT_REGRESSED);
	/* one base run: nothing says what repeats there, so neither side's */
	assert_int_equal(pagein_verdict(none, 1, every, 3, TF_GATE_BOTH), TF_VERDICT_UNCHANGED);
}

/* A wait the cap left unsampled while a thread went from one test to the
 * next counts for no test (offcpu_unplaced_ns): spdlog's dequeue-empty-wait
 * waited 250 ms in every run, unsampled in the base, sampled in the head.
 * That is as much longer as the base's waits in no test were: undecided,
 * not regressed; with none of them in the base, a new 250 ms wait is. */
static void test_waits_unplaced(void **state)
{
	(void)state;
	for (int unplaced = 0; unplaced < 2; unplaced++) {
		tf_profile *b = waits_run(0, 0, 0), *h = waits_run(250e6, 0, 1);
		tf_profile_set_meta(b, "offcpu_unplaced_ns", unplaced ? "260000000" : "0");
		tf_compare_opts o;
		tf_compare_opts_init(&o);
		tf_comparison *c = compare1(b, h, &o);
		const tf_test_delta *t = tf_comparison_find(c, "test_0");
		assert_non_null(t);
		if (unplaced) {
			assert_int_equal(t->verdict, TF_VERDICT_INCONCLUSIVE);
			assert_non_null(strstr(t->reason, "for no test"));
		} else {
			assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
		}
		tf_comparison_free(c);
		tf_profile_free(b);
		tf_profile_free(h);
	}
}

/* Three runs a side: a test that never waited and now waits 50 ms in each
 * run is regressed by its waits. The base's three runs of no wait agree
 * exactly; their spread is the model's, known, not estimated from three
 * runs (as such, it left a Welch test of 2 degrees of freedom at p=0.002
 * and the sleep undecided under the family's alpha). */
static void test_waits_three_runs_a_side(void **state)
{
	(void)state;
	tf_profile *b[3], *h[3];
	const double head[3] = { 51.2e6, 53.0e6, 55.9e6 };
	for (int i = 0; i < 3; i++) {
		b[i] = wait_run(0);
		h[i] = wait_run(head[i]);
	}
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	tf_comparison *c = compare_n(b, 3, h, 3, &o);
	const tf_test_delta *t = tf_comparison_find(c, "test_0");
	assert_non_null(t);
	assert_true(t->waits_lead);
	assert_int_equal(t->verdict, TF_VERDICT_REGRESSED);
	for (int k = 1; k < 6; k++) {
		char name[24];
		snprintf(name, sizeof(name), "test_%d", k);
		assert_int_not_equal(tf_comparison_find(c, name)->verdict, TF_VERDICT_REGRESSED);
	}
	tf_comparison_free(c);
	for (int i = 0; i < 3; i++) {
		tf_profile_free(b[i]);
		tf_profile_free(h[i]);
	}
}

/* test_0's verdict, one run a side, waiting `b` and `h` ns in `n` waits. */
static tf_verdict waits_verdict(double b, double h, int n)
{
	tf_profile *pb = waits_run(b, 0, n), *ph = waits_run(h, 0, n);
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	tf_comparison *c = compare1(pb, ph, &o);
	tf_verdict v = tf_comparison_find(c, "test_0")->verdict;
	tf_comparison_free(c);
	tf_profile_free(pb);
	tf_profile_free(ph);
	return v;
}

/* A test of many short waits moves with the machine's load: each of its
 * waits ends with a wait for a CPU, alike in a run. 3,000 naps of 20 us
 * waited 98 to 256 us each in nine runs at loads of 6 to 8, 293 to 767 ms
 * in all; 390 against 767 ms was regressed by waiting (p < 1e-10). Four
 * times as long a wait each (1.5 s) is not the load's, nor a new 50 ms
 * sleep in a test of one wait. */
static void test_waits_load(void **state)
{
	(void)state;
	assert_int_not_equal(waits_verdict(390e6, 767e6, 3000), TF_VERDICT_REGRESSED);
	assert_int_not_equal(waits_verdict(767e6, 293e6, 3000), TF_VERDICT_IMPROVED);
	assert_int_equal(waits_verdict(390e6, 1500e6, 3000), TF_VERDICT_REGRESSED);
	assert_int_equal(waits_verdict(0, 50e6, 1), TF_VERDICT_REGRESSED);
}

static void test_min_samples(void **state)
{
	(void)state;
	double bc[2] = { 5e8, 5e8 }, hc[2] = { 5e8, 5e8 };
	int64_t s[2] = { 50, 50 };
	tf_profile *b = exact_run(bc, s, 2), *h = exact_run(hc, s, 2);
	add(b, "sampled", 50, "main");
	add(h, "sampled", 50, "main");
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.min_samples = 1000;
	tf_comparison *c = compare1(b, h, &o);
	const tf_test_delta *sm = tf_comparison_find(c, "sampled"), *ex = tf_comparison_find(c, "t0");
	assert_int_equal(sm->measure, TF_MEASURE_SAMPLES);
	assert_int_equal(sm->verdict, TF_VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(sm->reason, "fewer than gate.min_samples (1000)"));
	assert_int_equal(ex->measure, TF_MEASURE_COUNT);
	assert_int_equal(ex->verdict, TF_VERDICT_UNCHANGED);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/* new and gone mean one thing: the test did not run on the other side. */
static void test_new_gone_ran(void **state)
{
	(void)state;
	tf_profile *b = new_run("cpu-clock"), *h = new_run("cpu-clock");
	add(b, "A", 100, "main");
	add(h, "A", 100, "main");
	add(h, "fresh", 50, "main");
	tf_profile_set_meta(b, "test.quiet", "samples=0 value=0 wall_ns=5 source=process");
	tf_profile_set_meta(h, "test.quiet", "samples=0 value=0 wall_ns=5 source=process");
	tf_profile_set_meta(b, "test.dropped", "samples=0 value=0 wall_ns=5 source=process");
	tf_profile_set_meta(h, "test.[outside tests]", "samples=0 value=0 wall_ns=0 source=outside");
	add(b, "[outside tests]", 100, "main;harness");
	add(h, "[outside tests]", 300, "main;harness");
	tf_comparison *c = compare1(b, h, NULL);
	assert_int_equal(tf_comparison_find(c, "fresh")->verdict, TF_VERDICT_NEW);
	assert_int_equal(tf_comparison_find(c, "dropped")->verdict, TF_VERDICT_GONE);
	/* ran on both sides, never sampled, nothing exact: undecided, not new */
	const tf_test_delta *q = tf_comparison_find(c, "quiet");
	assert_int_equal(q->verdict, TF_VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(q->reason, "--freq"));
	/* the harness tripled: shown, not gated, not counted */
	const tf_test_delta *out = tf_comparison_find(c, "[outside tests]");
	assert_true(out->outside);
	assert_int_equal(out->verdict, TF_VERDICT_REGRESSED);
	assert_false(tf_comparison_regressed(c));
	assert_int_equal(c->summary.ntests, 4);
	tf_comparison_free(c);
	tf_compare_opts o;
	tf_compare_opts_init(&o);
	o.gate_outside = true;
	c = compare1(b, h, &o);
	assert_true(tf_comparison_regressed(c));
	assert_int_equal(c->summary.ntests, 5);
	tf_comparison_free(c);
	tf_profile_free(b);
	tf_profile_free(h);
}

/*
 * A suite of 200 short tests measured exactly, each wandering by 25% from
 * run to run (processes of a millisecond do), no history: the spread of
 * the suite's own tests keeps unchanged PRs from failing, one PR run or
 * three, and a test slowed 27 times is caught every time.
 */
static void test_sim_suite_spread_calibrated(void **state)
{
	(void)state;
	enum { N = 200, TRIALS = 100 };
	double size[N], bc[N], hc[3][N];
	int64_t zero[N] = { 0 };
	for (int i = 0; i < N; i++)
		size[i] = 0.5e6 * exp(3 * sim_uniform());
	for (int nh = 1; nh <= 3; nh += 2) {
		int false_runs = 0, caught = 0;
		for (int t = 0; t < TRIALS; t++) {
			for (int i = 0; i < N; i++)
				bc[i] = size[i] * exp(0.25 * sim_gauss());
			tf_profile *b = exact_run(bc, zero, N), *h[3];
			for (int slowed = 0; slowed < 2; slowed++) {
				for (int r = 0; r < nh; r++) {
					for (int i = 0; i < N; i++)
						hc[r][i] = size[i] * exp(0.25 * sim_gauss()) * (slowed && i == 7 ? 27 : 1);
					h[r] = exact_run(hc[r], zero, N);
				}
				tf_compare_opts o;
				tf_compare_opts_init(&o);
				o.separate_jobs = true;
				tf_comparison *c = compare_n(&b, 1, h, (size_t)nh, &o);
				if (slowed)
					caught += tf_comparison_find(c, "t7")->verdict == TF_VERDICT_REGRESSED;
				else
					false_runs += tf_comparison_regressed(c);
				tf_comparison_free(c);
				for (int r = 0; r < nh; r++)
					tf_profile_free(h[r]);
			}
			tf_profile_free(b);
		}
		print_message("200 tests at 25%% noise, 1 vs %d runs: %d of %d unchanged PRs failed, "
			      "a 27x slowdown caught %d times\n", nh, false_runs, TRIALS, caught);
		if (false_runs > 2)
			fail_msg("%d of %d unchanged PRs failed (1 vs %d runs)", false_runs, TRIALS, nh);
		if (caught < TRIALS)
			fail_msg("a 27x slowdown caught %d of %d times (1 vs %d runs)", caught, TRIALS, nh);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_history_noise),
		cmocka_unit_test(test_history_noise_of_jobs),
		cmocka_unit_test(test_history_noise_tiny),
		cmocka_unit_test(test_history_noise_runner_shift),
		cmocka_unit_test(test_history_noise_exact),
		cmocka_unit_test(test_sim_shifted_noise_calibrated),
		cmocka_unit_test(test_sim_job_noise_calibrated),
		cmocka_unit_test(test_history_noise_disturbed),
		cmocka_unit_test(test_sim_disturbed_baseline),
		cmocka_unit_test(test_aggregation_and_verdicts),
		cmocka_unit_test(test_foreign_profile_is_one_test),
		cmocka_unit_test(test_mismatched_events),
		cmocka_unit_test(test_waits_unplaced),
		cmocka_unit_test(test_function_culprit_calls),
		cmocka_unit_test(test_value_and_test_selection),
		cmocka_unit_test(test_several_runs),
		cmocka_unit_test(test_run_metadata),
		cmocka_unit_test(test_exact_measures),
		cmocka_unit_test(test_min_delta),
		cmocka_unit_test(test_only_suspects_after_rerun),
		cmocka_unit_test(test_suspects_family),
		cmocka_unit_test(test_interleaved_within_prior),
		cmocka_unit_test(test_noise_from_untouched_neighbours),
		cmocka_unit_test(test_runner_wall_clock_least),
		cmocka_unit_test(test_runner_cpu_witness),
		cmocka_unit_test(test_nested_parent_outside),
		cmocka_unit_test(test_new_gone_ran),
		cmocka_unit_test(test_min_samples),
		cmocka_unit_test(test_waits_three_runs_a_side),
		cmocka_unit_test(test_waits_load),
		cmocka_unit_test(test_waits_pageins),
		cmocka_unit_test(test_runner_shift),
		cmocka_unit_test(test_runner_shift_holders),
		cmocka_unit_test(test_picked_tests),
		cmocka_unit_test(test_sim_suite_spread_calibrated),
		cmocka_unit_test(test_function_deltas),
		cmocka_unit_test(test_functions_of_few_samples),
		cmocka_unit_test(test_unsymbolized_frames_match_across_runs),
		cmocka_unit_test(test_functions_match_across_checkouts),
		cmocka_unit_test(test_diff_tree),
		cmocka_unit_test(test_diff_tree_forest),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_format_cost),
		cmocka_unit_test(test_looks_slower),
		cmocka_unit_test(test_suspect_material),
		cmocka_unit_test(test_may_reach),
		cmocka_unit_test(test_attention_order),
		cmocka_unit_test(test_memory_comparison),
		cmocka_unit_test(test_function_culprit),
		cmocka_unit_test(test_table_long_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
