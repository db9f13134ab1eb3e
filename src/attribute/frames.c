/*
 * frames.c - the second source of attribution: a frame on the stack names
 * the test (SPEC §4).
 *
 * Test frameworks leave recognisable frames: Go's testing.tRunner calls the
 * test function, GoogleTest generates Suite_Name_Test::TestBody(), clar
 * names tests test_<suite>__<name>, and cmocka, Check, Criterion and Unity
 * call the test function from their own library. A rule is one of:
 *
 *   REGEX      the function name matches; the test is built from captures
 *   CALLEE_OF  the function called by an anchor frame is the test
 *   FROM_LIB   the first function outside the framework's library, called
 *              from it, is the test (for frameworks whose runner functions
 *              are static and invisible without debug symbols)
 *   GTEST      GoogleTest's generated TestBody(), in any namespace: the
 *              class Suite_Name_Test (TEST, TEST_F, TEST_P), the class
 *              template Suite_Name_Test<T> (TYPED_TEST) or
 *              gtest_suite_Suite_::Name<T> (TYPED_TEST_P).
 *              Suite_Name is split at its first underscore, GoogleTest's
 *              own advice being that suite names have none; what GoogleTest
 *              reported (runner.c) settles it where both have some
 *              (attributor.c).
 *   PYTEST     the Python function pytest's runner (or unittest's) calls,
 *              named by its node id, as the pytest plugin names it
 *              (pyframes.c): the Python frames read from the interpreter,
 *              or 3.12's perf-map trampolines.
 *   CXX        Catch2's and doctest's anonymous test functions, by the
 *              source line their binary's list gives each test, and
 *              Boost.Test's Suite::Case::test_method, by its list
 *              (cxxlist.c).
 *
 * The stack is scanned from the root, so the outermost test frame wins
 * (a helper that calls another test's function stays in its own test).
 * Regex results are cached per function and library matches per mapping,
 * so a sample costs one pass over its frames with array lookups.
 *
 * A Go thread in the scheduler runs no goroutine: runtime.mcall (a
 * goroutine blocks, yields or ends) and runtime.schedule switch to the
 * thread's own stack and look for work, then sleep. Go 1.19's mcall keeps
 * the frame pointer, so such a stack still shows, above the scheduler's
 * frames, the goroutine that left the thread last, which may be running
 * on another thread by now or wait for anything (t.Parallel, a channel,
 * a timer); a new thread's (runtime.mstart) shows its creator's. Where
 * such a thread waits (tf_frame_rules_own), those frames name no test:
 * its time idle, or spinning in runqgrab's usleep (1.08 s of it under
 * go-cmp's TestDiff on a loaded machine, a README-only branch flagged by
 * it), is the runtime's, its process's. A goroutine's own waits are the
 * system calls it blocks in, under its frames. The scheduler's CPU time
 * between two goroutines stays with the one that left: it is the cost of
 * that goroutine's switch, and most often its own test's.
 */
#include "attribute_int.h"

#include <ctype.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef enum { RULE_REGEX, RULE_CALLEE_OF, RULE_FROM_LIB, RULE_GTEST, RULE_PYTEST, RULE_CXX } rule_kind;

typedef struct {
	const char *preset;
	rule_kind kind;
	const char *func_re;  /* REGEX: the test frame; CALLEE_OF: the anchor */
	const char *name_re;  /* CALLEE_OF/FROM_LIB: optional, on the test frame */
	const char *lib_re;   /* FROM_LIB: the framework's module path */
	const char *format;   /* "\1.\2"; NULL = capture 1, or the whole name */
	bool go_name;         /* strip Go's package path: a/b.TestX -> TestX */
} rule_def;

static const rule_def presets[] = {
	{ "go", RULE_CALLEE_OF, "^testing\\.tRunner$", NULL, NULL, NULL, true },
	{ "gtest", RULE_GTEST, NULL, NULL, NULL, NULL, false },
	{ "cmocka", RULE_CALLEE_OF, "^(cmocka_run_one_test_or_fixture|_run_test)$", NULL, NULL,
	  NULL, false },
	{ "cmocka", RULE_FROM_LIB, NULL, NULL, "/libcmocka\\.so", NULL, false },
	/* libcheck's runners are static and get inlined: any of them may be the
	 * visible caller; the _fn suffix START_TEST gives tells the test */
	{ "check", RULE_CALLEE_OF,
	  "^(tcase_run_tfun_(no)?fork|srunner_run(_tagged|_all)?|srunner_iterate_tcase_tfuns)$",
	  "^(.+)_fn$", NULL, NULL, false },
	{ "check", RULE_FROM_LIB, NULL, "^(.+)_fn$", "/libcheck\\.so", NULL, false },
	{ "criterion", RULE_FROM_LIB, NULL, "^(.+)_impl$", "/libcriterion\\.so", NULL, false },
	{ "unity", RULE_CALLEE_OF, "^UnityDefaultTestRun$", NULL, NULL, NULL, false },
	{ "clar", RULE_REGEX, "^test_(.+)__([A-Za-z0-9][A-Za-z0-9_]*)$", NULL, NULL,
	  "\\1::\\2", false },
	{ "pytest", RULE_PYTEST, NULL, NULL, NULL, NULL, false },
	{ "catch2", RULE_CXX, NULL, NULL, NULL, NULL, false },
	{ "doctest", RULE_CXX, NULL, NULL, NULL, NULL, false },
	{ "boost", RULE_CXX, NULL, NULL, NULL, NULL, false },
};

const char *const tf_frame_preset_names[] = {
	"go", "gtest", "cmocka", "check", "criterion", "unity", "clar", "pytest", "catch2", "doctest",
	"boost", NULL,
};

typedef struct {
	rule_def def;
	regex_t func, name, lib;
	bool has_func, has_name, has_lib;
} rule;

#define UNKNOWN UINT32_MAX

struct tf_frame_rules {
	tf_profile *p;
	TF_VEC(rule) rules;
	/* per function: per rule, the test it names (0 none, UNKNOWN not yet) */
	TF_VEC(uint32_t) fn_cache;
	/* per mapping: bitmask of FROM_LIB rules whose library it is, +1 */
	TF_VEC(uint64_t) map_cache;
	/* per function: 1 when no REGEX or CALLEE_OF rule matches it, 2 when
	 * one does, 0 not yet known (most frames of a stack match nothing) */
	TF_VEC(uint8_t) fn_quiet;
	/* per function: 2 when it enters Go's scheduler, 1 not, 0 not yet known */
	TF_VEC(uint8_t) fn_go_sched;
	bool has_from_lib, has_go;
	TF_VEC(uint32_t) fr_fn, fr_map;  /* the current stack, root first */
	/* per location: the first location of the same mapping and the same
	 * functions (inlined ones included), +1; 0 not yet known. Rules see
	 * no more of a frame than that. */
	TF_VEC(uint32_t) loc_class;
	tf_htab class_index;
	TF_VEC(uint32_t) key;            /* the current stack's classes */
	/* the last answer per stack of location classes, direct-mapped: a
	 * suite's samples repeat a few thousand stacks of functions, where
	 * nearly every sample's stack of locations is new (its leaf is at
	 * another instruction) */
	struct memo_slot { uint64_t hash; uint32_t off, n; tf_strid test; } *memo;
	tf_pytest_names *pytest;         /* rootdirs, for PYTEST's node ids */
	const tf_cxx_lists *cxx;         /* the C++ frameworks' lists, for CXX */
	const char *cwd;                 /* the sample's process's */
	TF_VEC(uint32_t) memo_key;       /* the slots' stacks of classes, end to end */
};

#define MEMO_SLOTS 8192
#define MEMO_MAX_KEYS (8u << 20)         /* then start the memo afresh */

static int compile(regex_t *re, const char *src, bool *has, const char *what)
{
	int err;
	if (!src)
		return 0;
	if (tf_regex_cost(src) > TF_REGEX_MAX_COST)
		return tf_error_set(TF_EUSAGE, "invalid %s regex '%s': it repeats too much to "
				    "compile", what, src);
	err = regcomp(re, src, REG_EXTENDED);
	if (err) {
		char msg[256];
		regerror(err, re, msg, sizeof(msg));
		return tf_error_set(TF_EUSAGE, "invalid %s regex '%s': %s", what, src, msg);
	}
	*has = true;
	return 0;
}

static bool preset_enabled(const tf_attribute_opts *o, const char *name)
{
	if (!o->frame_presets)
		return true;
	for (const char *const *p = o->frame_presets; *p; p++)
		if (strcmp(*p, name) == 0)
			return true;
	return false;
}

static int add_rule(tf_frame_rules *r, const rule_def *d)
{
	rule ru;
	int rc;
	memset(&ru, 0, sizeof(ru));
	ru.def = *d;
	rc = compile(&ru.func, d->func_re, &ru.has_func, "frame");
	if (!rc)
		rc = compile(&ru.name, d->name_re, &ru.has_name, "frame");
	if (!rc)
		rc = compile(&ru.lib, d->lib_re, &ru.has_lib, "library");
	if (rc) {
		if (ru.has_func)
			regfree(&ru.func);
		if (ru.has_name)
			regfree(&ru.name);
		return rc;
	}
	if (ru.def.kind == RULE_FROM_LIB)
		r->has_from_lib = true;
	if (ru.def.go_name)
		r->has_go = true;
	tf_vec_push(&r->rules, ru);
	return 0;
}

int tf_frame_rules_new(tf_frame_rules **out, tf_profile *p, const tf_attribute_opts *o)
{
	tf_frame_rules *r = tf_xcalloc(1, sizeof(*r));
	int rc = 0;

	r->p = p;
	*out = NULL;
	for (size_t i = 0; i < o->npatterns && !rc; i++) {
		rule_def d = { "custom", RULE_REGEX, o->patterns[i].regex, NULL, NULL,
			       o->patterns[i].name, false };
		rc = add_rule(r, &d);
	}
	for (size_t i = 0; i < TF_ARRAY_SIZE(presets) && !rc; i++)
		if (preset_enabled(o, presets[i].preset))
			rc = add_rule(r, &presets[i]);
	if (!rc && r->rules.n > 64)
		rc = tf_error_set(TF_EUSAGE, "too many frame patterns (at most 54)");
	if (rc) {
		tf_frame_rules_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void tf_frame_rules_free(tf_frame_rules *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->rules.n; i++) {
		rule *ru = &r->rules.v[i];
		if (ru->has_func)
			regfree(&ru->func);
		if (ru->has_name)
			regfree(&ru->name);
		if (ru->has_lib)
			regfree(&ru->lib);
	}
	tf_vec_free(&r->rules);
	tf_vec_free(&r->fn_cache);
	tf_vec_free(&r->map_cache);
	tf_vec_free(&r->fn_quiet);
	tf_vec_free(&r->fn_go_sched);
	tf_vec_free(&r->fr_fn);
	tf_vec_free(&r->fr_map);
	free(r->memo);
	tf_vec_free(&r->memo_key);
	tf_vec_free(&r->loc_class);
	tf_vec_free(&r->key);
	tf_htab_free(&r->class_index);
	tf_pytest_names_free(r->pytest);
	free(r);
}

/* Go: "example.com/pkg.TestFoo.func1" -> "TestFoo.func1". */
static const char *go_short(const char *name)
{
	const char *slash = strrchr(name, '/');
	const char *s = slash ? slash + 1 : name;
	const char *dot = strchr(s, '.');
	return dot ? dot + 1 : s;
}

/*
 * GoogleTest's test from a demangled TestBody frame: "(anonymous
 * namespace)::ParserTest_CVE_2017_5950_Test::TestBody()" is
 * ParserTest.CVE_2017_5950, "gtest_suite_Typed_::Works<int>::TestBody()"
 * (TYPED_TEST_P) is Typed.Works<int>, "Typed_Sized_Test<int>::TestBody()"
 * (TYPED_TEST) Typed.Sized<int>. Writes the name into `out`; false when the frame is
 * no TestBody of GoogleTest's.
 */
bool tf_gtest_frame_name(const char *fn, char *out, size_t n)
{
	static const char body[] = "::TestBody()";
	size_t len = strlen(fn), bl = sizeof(body) - 1;
	if (len <= bl || strcmp(fn + len - bl, body) != 0 || len - bl >= 1024)
		return false;
	char q[1024];
	memcpy(q, fn, len - bl);
	q[len - bl] = '\0';
	/* template arguments of the class, for typed tests */
	char targ[256] = "";
	size_t ql = strlen(q);
	if (ql && q[ql - 1] == '>') {
		int depth = 0;
		size_t i = ql;
		while (i-- > 0) {
			depth += q[i] == '>' ? 1 : q[i] == '<' ? -1 : 0;
			if (depth == 0)
				break;
		}
		if (depth != 0 || i == (size_t)-1)
			return false;
		snprintf(targ, sizeof(targ), "%.*s", (int)(ql - i - 2), q + i + 1);
		q[i] = '\0';
		ql = i;
	}
	/* the last two components, at the top level of <> and () */
	const char *cls = q, *ns = NULL;
	int depth = 0;
	for (size_t i = 0; i + 1 < ql; i++) {
		depth += (q[i] == '<' || q[i] == '(') ? 1 : (q[i] == '>' || q[i] == ')') ? -1 : 0;
		if (depth == 0 && q[i] == ':' && q[i + 1] == ':') {
			ns = cls;
			cls = q + i + 2;
		}
	}
	for (const char *c = cls; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return false;
	if (ns && (strncmp(ns, "gtest_suite_", 12) == 0 || strncmp(ns, "gtest_case_", 11) == 0)) {
		/* TYPED_TEST: namespace gtest_suite_<Suite>_, class <Name><T> */
		const char *sb = ns + (ns[6] == 's' ? 12 : 11);
		const char *se = cls - 2; /* the "::" */
		if (se <= sb || se[-1] != '_')
			return false;
		if (targ[0])
			snprintf(out, n, "%.*s.%s<%s>", (int)(se - 1 - sb), sb, cls, targ);
		else
			snprintf(out, n, "%.*s.%s", (int)(se - 1 - sb), sb, cls);
		return true;
	}
	/* TEST, TEST_F, TEST_P: class Suite_Name_Test; TYPED_TEST (since
	 * GoogleTest 1.10): the class template Suite_Name_Test<T> */
	size_t cl = strlen(cls);
	if (cl < 8 || strcmp(cls + cl - 5, "_Test") != 0)
		return false;
	const char *us = memchr(cls + 1, '_', cl - 6);
	if (!us || us == cls + cl - 6)
		return false;
	snprintf(out, n, "%.*s.%.*s%s%s%s", (int)(us - cls), cls, (int)(cls + cl - 5 - us - 1), us + 1,
		 targ[0] ? "<" : "", targ, targ[0] ? ">" : "");
	return true;
}

/* Whether a Go function is a test, a benchmark, a fuzz test or an example
 * (or a closure in one): "pkg.TestX", "pkg.TestX.func1". */
static bool go_test_name(const char *fn)
{
	const char *s = go_short(fn);
	static const char *const kinds[] = { "Test", "Benchmark", "Fuzz", "Example" };
	if (strncmp(fn, "testing.", 8) == 0)
		return false;
	for (size_t i = 0; i < TF_ARRAY_SIZE(kinds); i++)
		if (strncmp(s, kinds[i], strlen(kinds[i])) == 0)
			return true;
	return false;
}

/* Build a test name from a match and the rule's format. */
static tf_strid make_name(tf_frame_rules *r, const rule *ru, const char *fn,
			  const regmatch_t *m, size_t nm)
{
	tf_buf b = TF_BUF_INIT;
	tf_strid id;

	if (ru->def.format) {
		for (const char *f = ru->def.format; *f; f++) {
			if (f[0] == '\\' && f[1] >= '0' && f[1] <= '9') {
				size_t g = (size_t)(f[1] - '0');
				if (g < nm && m[g].rm_so >= 0)
					tf_buf_put(&b, fn + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so));
				f++;
			} else {
				tf_buf_putc(&b, *f);
			}
		}
	} else if (nm > 1 && m[1].rm_so >= 0) {
		tf_buf_put(&b, fn + m[1].rm_so, (size_t)(m[1].rm_eo - m[1].rm_so));
	} else {
		tf_buf_puts(&b, ru->def.go_name ? go_short(fn) : fn);
	}
	id = b.len ? tf_profile_intern_len(r->p, b.ptr, b.len) : 0;
	tf_buf_free(&b);
	return id;
}

/*
 * What function `fi` means for rule `ri`: for REGEX, the test it names; for
 * CALLEE_OF, 1 when it is the anchor; for FROM_LIB, the test it would name
 * if called from the library (its name_re, or its own name).
 */
static uint32_t classify(tf_frame_rules *r, uint32_t fi, size_t ri)
{
	size_t nr = r->rules.n;
	size_t need = (fi + 1) * nr;

	if (r->fn_cache.n < need) {
		size_t old = r->fn_cache.n;
		size_t want = (r->p->functions.n + 1) * nr;
		tf_vec_reserve(&r->fn_cache, TF_MAX(need, want));
		for (size_t i = old; i < r->fn_cache.cap; i++)
			r->fn_cache.v[i] = UNKNOWN;
		r->fn_cache.n = r->fn_cache.cap;
	}
	uint32_t *slot = &r->fn_cache.v[fi * nr + ri];
	if (*slot != UNKNOWN)
		return *slot;

	const rule *ru = &r->rules.v[ri];
	const char *fn = tf_profile_str(r->p, r->p->functions.v[fi].name);
	regmatch_t m[10];
	uint32_t v = 0;

	switch (ru->def.kind) {
	case RULE_REGEX:
		if (regexec(&ru->func, fn, 10, m, 0) == 0)
			v = make_name(r, ru, fn, m, 10);
		break;
	case RULE_CALLEE_OF:
		v = regexec(&ru->func, fn, 0, NULL, 0) == 0;
		break;
	case RULE_FROM_LIB:
		if (!ru->has_name)
			v = make_name(r, ru, fn, m, 0);
		else if (regexec(&ru->name, fn, 10, m, 0) == 0)
			v = make_name(r, ru, fn, m, 10);
		break;
	case RULE_GTEST: {
		char name[512];
		if (tf_gtest_frame_name(fn, name, sizeof(name)))
			v = tf_profile_intern(r->p, name);
		break;
	}
	case RULE_PYTEST:
		v = (uint32_t)tf_pytest_anchor(r->p, fi);
		break;
	case RULE_CXX: {
		const tf_function *f = &r->p->functions.v[fi];
		const char *t = tf_cxx_frame_test(r->cxx, ru->def.preset, fn,
						  tf_profile_str(r->p, f->filename), (int)f->start_line);
		v = t ? tf_profile_intern(r->p, t) : 0;
		break;
	}
	}
	*slot = v;
	return v;
}

/* The name a CALLEE_OF rule gives to the test frame `fi`. */
static uint32_t callee_name(tf_frame_rules *r, const rule *ru, uint32_t fi)
{
	const char *fn = tf_profile_str(r->p, r->p->functions.v[fi].name);
	regmatch_t m[10];
	if (ru->has_name)
		return regexec(&ru->name, fn, 10, m, 0) == 0 ? make_name(r, ru, fn, m, 10) : 0;
	return make_name(r, ru, fn, m, 0);
}

static uint64_t lib_mask(tf_frame_rules *r, uint32_t mi)
{
	if (mi == TF_NO_MAPPING)
		return 0;
	while (r->map_cache.n <= mi)
		tf_vec_push(&r->map_cache, 0);
	if (!r->map_cache.v[mi]) {
		const char *path = tf_profile_str(r->p, r->p->mappings.v[mi].filename);
		uint64_t mask = 0;
		for (size_t i = 0; i < r->rules.n; i++) {
			const rule *ru = &r->rules.v[i];
			if (ru->def.kind == RULE_FROM_LIB && regexec(&ru->lib, path, 0, NULL, 0) == 0)
				mask |= 1ULL << i;
		}
		r->map_cache.v[mi] = mask + 1;
	}
	return r->map_cache.v[mi] - 1;
}

/* Whether no REGEX or CALLEE_OF rule can fire on function `fi`. */
static bool quiet(tf_frame_rules *r, uint32_t fi)
{
	while (r->fn_quiet.n <= fi)
		tf_vec_push(&r->fn_quiet, 0);
	if (!r->fn_quiet.v[fi]) {
		bool any = false;
		for (size_t ri = 0; ri < r->rules.n && !any; ri++)
			if (r->rules.v[ri].def.kind != RULE_FROM_LIB)
				any = classify(r, fi, ri) != 0;
		r->fn_quiet.v[fi] = any ? 2 : 1;
	}
	return r->fn_quiet.v[fi] == 1;
}

static tf_strid match(tf_frame_rules *r);

/* Whether function `fi` is where a Go thread leaves its goroutine for the
 * scheduler, or starts (see the head comment). */
static bool go_sched(tf_frame_rules *r, uint32_t fi)
{
	while (r->fn_go_sched.n <= fi)
		tf_vec_push(&r->fn_go_sched, 0);
	if (!r->fn_go_sched.v[fi]) {
		const char *fn = tf_profile_str(r->p, r->p->functions.v[fi].name);
		bool sched = strcmp(fn, "runtime.mcall") == 0 ||
			     strcmp(fn, "runtime.schedule") == 0 || strcmp(fn, "runtime.mstart") == 0;
		r->fn_go_sched.v[fi] = sched ? 2 : 1;
	}
	return r->fn_go_sched.v[fi] == 2;
}

size_t tf_frame_rules_own(tf_frame_rules *r, const uint32_t *locs, size_t n)
{
	const tf_profile *p = r->p;

	if (!r->has_go)
		return n;
	for (size_t k = n; k-- > 0;) {
		const tf_location *l = &p->locations.v[locs[k]];
		for (uint32_t j = 0; j < l->nlines; j++)
			if (go_sched(r, p->lines.v[l->lines_off + j].function))
				return k;
	}
	return n;
}

static bool same_class(const void *ctx, uint32_t idx, const void *key)
{
	const tf_profile *p = ctx;
	const tf_location *a = &p->locations.v[idx], *b = key;
	return a->mapping == b->mapping && tf_location_same_functions(p, a, b);
}

static uint32_t loc_class(tf_frame_rules *r, uint32_t loc)
{
	const tf_profile *p = r->p;

	while (r->loc_class.n <= loc)
		tf_vec_push(&r->loc_class, 0);
	if (r->loc_class.v[loc])
		return r->loc_class.v[loc] - 1;
	const tf_location *l = &p->locations.v[loc];
	uint64_t h = tf_location_functions_hash(p, l, l->mapping);
	uint32_t first = tf_htab_find(&r->class_index, h, same_class, p, l);
	if (first == TF_HTAB_NONE) {
		tf_htab_insert(&r->class_index, h, loc);
		first = loc;
	}
	r->loc_class.v[loc] = first + 1;
	return first;
}

void tf_frame_rules_set_cxx(tf_frame_rules *r, const tf_cxx_lists *l)
{
	r->cxx = l;
}

void tf_frame_rules_set_cwd(tf_frame_rules *r, const char *cwd)
{
	/* PYTEST's names may depend on it: answers for another one are stale */
	if (r->memo && r->pytest && (cwd != r->cwd) &&
	    (!cwd || !r->cwd || strcmp(cwd, r->cwd) != 0)) {
		memset(r->memo, 0, MEMO_SLOTS * sizeof(*r->memo));
		r->memo_key.n = 0;
	}
	r->cwd = cwd;
}

bool tf_frame_rules_python(const tf_frame_rules *r)
{
	for (size_t i = 0; r && i < r->rules.n; i++)
		if (r->rules.v[i].def.kind == RULE_PYTEST)
			return true;
	return false;
}

tf_strid tf_frame_rules_match(tf_frame_rules *r, const uint32_t *locs, size_t n)
{
	const tf_profile *p = r->p;

	if (!r->rules.n)
		return 0;
	tf_vec_reserve(&r->key, n + 1);
	for (size_t k = 0; k < n; k++)
		r->key.v[k] = loc_class(r, locs[k]);
	size_t bytes = n * sizeof(uint32_t);
	if (!r->memo)
		r->memo = tf_xcalloc(MEMO_SLOTS, sizeof(*r->memo));
	uint64_t h = tf_hash_bytes(r->key.v, bytes, n) | 1; /* 0: empty slot */
	struct memo_slot *m = &r->memo[h & (MEMO_SLOTS - 1)];
	if (m->hash == h && m->n == n && memcmp(r->memo_key.v + m->off, r->key.v, bytes) == 0)
		return m->test;

	/* flatten to functions, root first, inlined frames expanded */
	r->fr_fn.n = r->fr_map.n = 0;
	for (size_t k = n; k-- > 0;) {
		const tf_location *l = &p->locations.v[locs[k]];
		for (uint32_t j = l->nlines; j-- > 0;) {
			tf_vec_push(&r->fr_fn, p->lines.v[l->lines_off + j].function);
			tf_vec_push(&r->fr_map, l->mapping);
		}
	}
	tf_strid test = match(r);
	if (r->memo_key.n + n > MEMO_MAX_KEYS) {
		memset(r->memo, 0, MEMO_SLOTS * sizeof(*r->memo));
		r->memo_key.n = 0;
	}
	tf_vec_reserve(&r->memo_key, r->memo_key.n + n);
	if (n)
		memcpy(r->memo_key.v + r->memo_key.n, r->key.v, bytes);
	*m = (struct memo_slot){ h, (uint32_t)r->memo_key.n, (uint32_t)n, test };
	r->memo_key.n += n;
	return test;
}

/* Whether a Python function's file is the interpreter's library or an
 * installed package's, never a test's. */
static bool python_library(const tf_profile *p, uint32_t fn)
{
	const char *file = tf_profile_str(p, p->functions.v[fn].filename);
	const char *lib = strstr(file, "/lib/python");
	return (lib && lib[11] >= '0' && lib[11] <= '9') || strstr(file, "/site-packages/") ||
	       strstr(file, "/dist-packages/");
}

/* Whether a Python function is testflame's own, put into the suite's
 * interpreters (its loader's wrappers of the runner's startTest, its
 * markers, its pytest plugin): the runner calls it, and it is no test. */
static bool testflame_python(const tf_profile *p, uint32_t fn)
{
	static const char *const own[] = { "testflame_loader.", "testflame_markers.",
					   "pytest_testflame." };
	const char *name = tf_profile_str(p, p->functions.v[fn].name);
	for (size_t k = 0; k < TF_ARRAY_SIZE(own); k++)
		if (strncmp(name, own[k], strlen(own[k])) == 0)
			return true;
	return false;
}

/* PYTEST: the test frame `i` of the flattened stack (a runner's) calls:
 * the next Python frame, past the runner's own (unittest's run calls
 * _callTestMethod), the interpreter's C frames between, and the library
 * the runner calls on the way (a sample in contextlib's __exit__ under
 * TestCase.run is in no test). */
static tf_strid pytest_test(tf_frame_rules *r, size_t ri, size_t i)
{
	const tf_profile *p = r->p;
	int kind = (int)classify(r, r->fr_fn.v[i], ri);
	bool under_pytest = kind == TF_PYTEST_ANCHOR_PYTEST;

	for (size_t j = i + 1; j < r->fr_fn.n; j++) {
		uint32_t fj = r->fr_fn.v[j];
		if (!tf_pyframes_is_python(p, fj) || classify(r, fj, ri) || python_library(p, fj) ||
		    testflame_python(p, fj))
			continue;
		for (size_t k = 0; k < i && !under_pytest; k++)
			under_pytest = tf_pytest_runner_frame(p, r->fr_fn.v[k]);
		if (!r->pytest)
			r->pytest = tf_pytest_names_new();
		return tf_pytest_test_name(r->pytest, r->p, fj, under_pytest, r->cwd);
	}
	return 0;
}

/* The test named by the flattened stack in fr_fn and fr_map. */
static tf_strid match(tf_frame_rules *r)
{
	const tf_profile *p = r->p;
	size_t nf = r->fr_fn.n;

	for (size_t i = 0; i < nf; i++) {
		uint32_t fi = r->fr_fn.v[i];
		bool q = quiet(r, fi);
		if (q && !r->has_from_lib)
			continue;
		for (size_t ri = 0; ri < r->rules.n; ri++) {
			const rule *ru = &r->rules.v[ri];
			uint32_t v;
			if (q && ru->def.kind != RULE_FROM_LIB)
				continue;
			switch (ru->def.kind) {
			case RULE_REGEX:
			case RULE_GTEST:
			case RULE_CXX:
				v = classify(r, fi, ri);
				if (v)
					return v;
				break;
			case RULE_CALLEE_OF:
				if (i + 1 < nf && classify(r, fi, ri)) {
					uint32_t callee = r->fr_fn.v[i + 1];
					/* Go: the runner's own closures are not tests, nor
					 * what a signal left between tRunner and a test */
					if (ru->def.go_name &&
					    !go_test_name(tf_profile_str(p, p->functions.v[callee].name)))
						break;
					uint32_t test = callee_name(r, ru, callee);
					if (!test)
						break;
					if (!ru->def.go_name)
						return test;
					/* Go subtests: a deeper tRunner runs t.Run's closure */
					for (size_t j = i + 2; j + 1 < nf; j++) {
						if (classify(r, r->fr_fn.v[j], ri)) {
							const char *outer = go_short(tf_profile_str(p,
								p->functions.v[r->fr_fn.v[i + 1]].name));
							const char *inner = go_short(tf_profile_str(p,
								p->functions.v[r->fr_fn.v[j + 1]].name));
							size_t ol = strlen(outer);
							if (strncmp(inner, outer, ol) == 0 && inner[ol] == '.')
								inner += ol + 1;
							char *name = tf_xasprintf("%s/%s", outer, inner);
							test = tf_profile_intern(r->p, name);
							free(name);
							break;
						}
					}
					return test;
				}
				break;
			case RULE_PYTEST:
				if (classify(r, fi, ri)) {
					v = pytest_test(r, ri, i);
					if (v)
						return v;
				}
				break;
			case RULE_FROM_LIB:
				if (i > 0 && (lib_mask(r, r->fr_map.v[i - 1]) & (1ULL << ri)) &&
				    !(lib_mask(r, r->fr_map.v[i]) & (1ULL << ri))) {
					v = classify(r, fi, ri);
					if (v)
						return v;
				}
				break;
			}
		}
	}
	return 0;
}
