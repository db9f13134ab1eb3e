/*
 * test_pyroscope.c - the Pyroscope store's decisions that need no server:
 * profile type ids, the series of a run (one per test, labels, Pyroscope's
 * limits of 16,000 samples and 4 MiB a profile, no sample labels, no '-'
 * in sample types, the timestamp), the PushRequest bytes read back with
 * the generated decoder, label selectors, credentials from the environment
 * and the URL, and Grafana's comparison link. Requests themselves are
 * tested end to end against the loopback Pyroscope (t5050, t5051).
 */
#include "unit.h"
#include "store/store_int.h"
#include "pyroscope.pb-c.h"

#include <ctype.h>

#define NOW_NS 1800000000000000000LL

static void test_profile_types(void **state)
{
	(void)state;
	char *name, *vt, *ct;
	assert_int_equal(tf_pyroscope_profile_types(&name, &vt, &ct, "cpu-clock"), 0);
	assert_string_equal(name, "process_cpu");
	assert_string_equal(vt, "process_cpu:cpu:nanoseconds:cpu:nanoseconds");
	assert_string_equal(ct, "process_cpu:samples:count:cpu:nanoseconds");
	free(name);
	free(vt);
	free(ct);
	assert_int_equal(tf_pyroscope_kind_types(&name, &vt, NULL, "instructions-perf-aarch64"), 0);
	assert_string_equal(name, "instructions");
	assert_string_equal(vt, "instructions:instructions:count:instructions:count");
	free(name);
	free(vt);
	assert_int_equal(tf_pyroscope_kind_types(NULL, &vt, NULL, "wall-ptrace-x86_64"), 0);
	assert_string_equal(vt, "wall:wall:nanoseconds:wall:nanoseconds");
	free(vt);
	assert_int_equal(tf_pyroscope_profile_types(&name, NULL, NULL, "bogus"), TF_EINVAL);
}

/* A run: `ntests` tests (the first of `per_test` distinct stacks), every sample
 * with pid and tid labels, plus a few samples without a test. */
static tf_profile *make_run(size_t ntests, size_t per_test, const char *vtype, size_t name_len)
{
	tf_profile *p;
	char name[8192];
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, vtype, "nanoseconds");
	p->period = 10000000;
	p->period_type.type = tf_profile_intern(p, vtype);
	p->period_type.unit = tf_profile_intern(p, "nanoseconds");
	p->time_nanos = 1000; /* long ago: pushes must not keep it */
	tf_profile_set_meta(p, "suite", "unit");
	uint32_t root = tf_profile_function(p, "main", "main.c", 1);
	tf_line rl = { root, 3, 0 };
	uint32_t rloc = tf_profile_add_location(p, TF_NO_MAPPING, 0, &rl, 1);
	for (size_t t = 0; t <= ntests; t++) {
		char test[64];
		snprintf(test, sizeof(test), "test_%zu", t);
		/* test_0 has per_test stacks, the others 10; the last has no test label */
		size_t n = t == ntests ? 3 : t == 0 ? per_test : 10;
		for (size_t i = 0; i < n; i++) {
			memset(name, 'f', name_len);
			snprintf(name + (name_len > 40 ? name_len - 40 : 0), 40, "fn_%zu_%zu", t, i);
			uint32_t f = tf_profile_function(p, name, "lib.c", (int64_t)i);
			tf_line l = { f, (int64_t)i + 1, 0 };
			uint32_t locs[2] = { tf_profile_add_location(p, TF_NO_MAPPING, 0, &l, 1), rloc };
			int64_t v[2] = { 1 + (int64_t)(i % 3), (1 + (int64_t)(i % 3)) * 10000000 };
			tf_label labels[3] = {
				{ tf_profile_intern(p, "pid"), 0, 42, 0 },
				{ tf_profile_intern(p, "tid"), 0, 43 + (int64_t)i % 2, 0 },
				{ tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 },
			};
			tf_profile_add_sample(p, locs, 2, v, labels, t == ntests ? 2 : 3);
		}
	}
	return p;
}

static const char *label(const tf_pyroscope_series *s, const char *name)
{
	for (size_t i = 0; i < s->names.n; i++)
		if (strcmp(s->names.v[i], name) == 0)
			return s->values.v[i];
	return NULL;
}

static bool label_name_ok(const char *n)
{
	if (!isalpha((unsigned char)*n) && *n != '_')
		return false;
	for (; *n; n++)
		if (!isalnum((unsigned char)*n) && *n != '_')
			return false;
	return true;
}

/* Per-test totals of value column `col` of a run, by test name. */
static int64_t run_total(const tf_profile *p, const char *test, size_t col)
{
	int64_t sum = 0;
	for (size_t i = 0; i < p->samples.n; i++) {
		const char *t = tf_sample_label_str(p, &p->samples.v[i], "test");
		if (strcmp(t ? t : "[unattributed]", test) == 0)
			sum += tf_sample_values(p, i)[col];
	}
	return sum;
}

static void test_prepare_limits(void **state)
{
	(void)state;
	/* test_0 has 40,000 distinct stacks: three profiles at most 16,000 each */
	tf_profile *run = make_run(3, 40000, "cpu-clock", 8);
	tf_pyroscope_labels l = { "acme/libmini", "https://github.com/acme/libmini",
				  "0123456789abcdef0123456789abcdef01234567", "main", 0, "github",
				  "unit", "cpu-clock-perf-x86_64", NULL };
	tf_pyroscope_batch b = { { NULL, 0, 0 } };

	assert_int_equal(tf_pyroscope_prepare(&b, &l, run, NOW_NS), 0);
	assert_int_equal(b.items.n, 4); /* three tests and the unattributed */
	for (size_t i = 0; i < b.items.n; i++) {
		const tf_pyroscope_series *s = &b.items.v[i];
		assert_true(s->names.n <= TF_PYROSCOPE_MAX_LABELS);
		for (size_t k = 0; k < s->names.n; k++)
			assert_true(label_name_ok(s->names.v[k]));
		assert_string_equal(label(s, "__name__"), "process_cpu");
		assert_string_equal(label(s, "service_name"), "acme/libmini");
		assert_string_equal(label(s, "service_git_ref"), l.commit);
		assert_string_equal(label(s, "service_repository"), l.repository_url);
		assert_string_equal(label(s, "branch"), "main");
		assert_string_equal(label(s, "ci"), "github");
		assert_string_equal(label(s, "suite"), "unit");
		assert_string_equal(label(s, "runner"), "cpu-clock-perf-x86_64");
		assert_string_equal(label(s, "test"), s->test);
		assert_null(label(s, "pr"));    /* not a PR build */
		assert_null(label(s, "shard")); /* not sharded */
		int64_t samples = 0, cpu = 0;
		for (size_t k = 0; k < s->profiles.n; k++) {
			tf_profile *q = NULL;
			assert_true(s->profiles.v[k].len <= TF_PYROSCOPE_MAX_PROFILE_BYTES);
			assert_int_equal(tf_pprof_decode(&q, s->profiles.v[k].ptr, s->profiles.v[k].len), 0);
			assert_true(q->samples.n <= TF_PYROSCOPE_MAX_SAMPLES);
			assert_int_equal(q->samples.n, s->nsamples.v[k]);
			assert_int_equal(q->labels.n, 0); /* pid, tid, test: gone */
			for (size_t j = 0; j < q->samples.n; j++)
				assert_int_equal(q->samples.v[j].nlabels, 0);
			assert_int_equal(q->time_nanos, NOW_NS);
			assert_int_equal(q->comments.n, 0);
			assert_string_equal(tf_profile_str(q, q->sample_types.v[1].type), "cpu_clock");
			samples += tf_profile_total(q, 0);
			cpu += tf_profile_total(q, 1);
			tf_profile_free(q);
		}
		/* nothing lost, nothing counted twice */
		assert_int_equal(samples, run_total(run, s->test, 0));
		assert_int_equal(cpu, run_total(run, s->test, 1));
		if (strcmp(s->test, "test_0") == 0)
			assert_int_equal(s->profiles.n, 3);
		else
			assert_int_equal(s->profiles.n, 1);
	}
	assert_non_null(label(&b.items.v[3], "test"));
	assert_string_equal(b.items.v[3].test, "[unattributed]");
	tf_pyroscope_batch_clear(&b);

	/* a PR build of a shard */
	l.pr = 17;
	l.shard = "2/4";
	assert_int_equal(tf_pyroscope_prepare(&b, &l, run, NOW_NS), 0);
	assert_string_equal(label(&b.items.v[0], "pr"), "17");
	assert_string_equal(label(&b.items.v[0], "shard"), "2/4");
	tf_pyroscope_batch_clear(&b);

	/* no commit: refused */
	l.commit = NULL;
	assert_int_equal(tf_pyroscope_prepare(&b, &l, run, NOW_NS), TF_EINVAL);
	tf_pyroscope_batch_clear(&b);
	tf_profile_free(run);
}

static void test_prepare_bytes(void **state)
{
	(void)state;
	/* 1,500 samples whose functions have 4 KiB names: over 4 MiB in one
	 * profile, so the test's samples are split by size, not count */
	tf_profile *run = make_run(1, 1500, "cpu", 4096);
	tf_pyroscope_labels l = { "svc", NULL, "c0ffee", NULL, 0, "local", "unit",
				  "cpu-clock-perf-x86_64", NULL };
	tf_pyroscope_batch b = { { NULL, 0, 0 } };
	assert_int_equal(tf_pyroscope_prepare(&b, &l, run, NOW_NS), 0);
	const tf_pyroscope_series *s = &b.items.v[0];
	assert_string_equal(s->test, "test_0");
	assert_true(s->profiles.n >= 2);
	size_t total = 0;
	for (size_t k = 0; k < s->profiles.n; k++) {
		assert_true(s->profiles.v[k].len <= TF_PYROSCOPE_MAX_PROFILE_BYTES);
		total += s->nsamples.v[k];
	}
	assert_int_equal(total, 1500);
	assert_null(label(s, "service_repository"));
	assert_null(label(s, "branch"));
	tf_pyroscope_batch_clear(&b);
	tf_profile_free(run);
}

static void test_label_values(void **state)
{
	(void)state;
	/* a test name over Pyroscope's 2048 bytes keeps a prefix and a hash;
	 * two such names stay apart */
	char *a = malloc(5000), *bname = malloc(5000);
	memset(a, 'x', 4999);
	a[4999] = '\0';
	memcpy(bname, a, 5000);
	bname[4000] = 'y';
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	uint32_t f = tf_profile_function(p, "f", "f.c", 1);
	tf_line ln = { f, 1, 0 };
	uint32_t loc = tf_profile_add_location(p, TF_NO_MAPPING, 0, &ln, 1);
	int64_t v = 5;
	tf_label la = { tf_profile_intern(p, "test"), tf_profile_intern(p, a), 0, 0 };
	tf_label lb = { tf_profile_intern(p, "test"), tf_profile_intern(p, bname), 0, 0 };
	tf_profile_add_sample(p, &loc, 1, &v, &la, 1);
	tf_profile_add_sample(p, &loc, 1, &v, &lb, 1);
	tf_pyroscope_labels l = { "svc", NULL, "c0ffee", NULL, 0, NULL, "unit", "cpu-clock-perf-x86_64", NULL };
	tf_pyroscope_batch b = { { NULL, 0, 0 } };
	assert_int_equal(tf_pyroscope_prepare(&b, &l, p, NOW_NS), 0);
	assert_int_equal(b.items.n, 2);
	const char *va = label(&b.items.v[0], "test"), *vb = label(&b.items.v[1], "test");
	assert_true(strlen(va) <= TF_PYROSCOPE_MAX_LABEL_VALUE);
	assert_true(strlen(vb) <= TF_PYROSCOPE_MAX_LABEL_VALUE);
	assert_string_not_equal(va, vb);
	tf_pyroscope_batch_clear(&b);
	tf_profile_free(p);
	free(a);
	free(bname);
}

static void test_encode_push(void **state)
{
	(void)state;
	tf_profile *run = make_run(2, 10, "cpu", 8);
	tf_pyroscope_labels l = { "svc", NULL, "c0ffee", "feature/x", 3, "gitlab", "unit",
				  "cpu-clock-perf-x86_64", NULL };
	tf_pyroscope_batch b = { { NULL, 0, 0 } };
	tf_buf out = TF_BUF_INIT;

	assert_int_equal(tf_pyroscope_prepare(&b, &l, run, NOW_NS), 0);
	assert_int_equal(tf_pyroscope_encode_push(&out, &b, 1, 2), 0);
	Testflame__Pyroscope__PushRequest *req =
		testflame__pyroscope__push_request__unpack(NULL, out.len, (const uint8_t *)out.ptr);
	assert_non_null(req);
	assert_int_equal(req->n_series, 2);
	for (size_t i = 0; i < req->n_series; i++) {
		const Testflame__Pyroscope__RawProfileSeries *rs = req->series[i];
		const tf_pyroscope_series *s = &b.items.v[1 + i];
		assert_int_equal(rs->n_labels, s->names.n);
		for (size_t k = 0; k < rs->n_labels; k++) {
			assert_string_equal(rs->labels[k]->name, s->names.v[k]);
			assert_string_equal(rs->labels[k]->value, s->values.v[k]);
		}
		assert_int_equal(rs->n_samples, s->profiles.n);
		const Testflame__Pyroscope__RawSample *r = rs->samples[0];
		assert_true(tf_is_gzip(r->raw_profile.data, r->raw_profile.len));
		tf_buf plain = TF_BUF_INIT;
		assert_int_equal(tf_gunzip(&plain, r->raw_profile.data, r->raw_profile.len, "raw"), 0);
		assert_int_equal(plain.len, s->profiles.v[0].len);
		assert_memory_equal(plain.ptr, s->profiles.v[0].ptr, plain.len);
		tf_buf_free(&plain);
		/* a UUID's shape: 8-4-4-4-12 lower-case hex */
		assert_int_equal(strlen(r->id), 36);
		for (size_t k = 0; k < 36; k++)
			assert_true(k == 8 || k == 13 || k == 18 || k == 23 ? r->id[k] == '-'
				    : isxdigit((unsigned char)r->id[k]) && !isupper((unsigned char)r->id[k]));
	}
	assert_string_not_equal(req->series[0]->samples[0]->id, req->series[1]->samples[0]->id);
	testflame__pyroscope__push_request__free_unpacked(req, NULL);
	tf_buf_free(&out);
	tf_pyroscope_batch_clear(&b);
	tf_profile_free(run);
}

static void test_selector(void **state)
{
	(void)state;
	const char *names[3] = { "service_name", "test", "suite" };
	const char *values[3] = { "acme/libmini", "say \"hi\" \\ now", "a\nb" };
	tf_buf b = TF_BUF_INIT;
	tf_pyroscope_selector(&b, names, values, 3);
	assert_string_equal(b.ptr,
		"{service_name=\"acme/libmini\",test=\"say \\\"hi\\\" \\\\ now\",suite=\"a\\nb\"}");
	tf_buf_free(&b);
}

static void test_credentials(void **state)
{
	(void)state;
	tf_pyroscope_opts o;
	tf_pyroscope *py = NULL;
	char *env[] = { "TESTFLAME_PYROSCOPE_TOKEN=tok-123456", "TESTFLAME_PYROSCOPE_TENANT=acme",
			"TESTFLAME_PYROSCOPE_TIMEOUT=2.5", "TESTFLAME_PYROSCOPE_USER=", NULL };

	tf_pyroscope_opts_init(&o);
	assert_int_equal(tf_pyroscope_opts_env(&o, env), 0);
	assert_string_equal(o.token, "tok-123456");
	assert_string_equal(o.tenant, "acme");
	assert_null(o.user); /* empty is unset */
	assert_true(o.timeout == 2.5);
	char *bad[] = { "TESTFLAME_PYROSCOPE_TIMEOUT=soon", NULL };
	assert_int_equal(tf_pyroscope_opts_env(&o, bad), TF_EUSAGE);

	/* user:password in the URL is basic auth; the URL shown keeps neither */
	tf_pyroscope_opts_init(&o);
	o.url = "https://1234:glc_s%40cret@profiles.example.com/prefix/";
	assert_int_equal(tf_pyroscope_open(&py, &o), 0);
	assert_string_equal(tf_pyroscope_url(py), "https://profiles.example.com/prefix");
	tf_pyroscope_free(py);

	o.url = "profiles.example.com";
	assert_int_equal(tf_pyroscope_open(&py, &o), TF_EUSAGE);
	o.url = "http:///x";
	assert_int_equal(tf_pyroscope_open(&py, &o), TF_EUSAGE);
}

static void test_grafana_url(void **state)
{
	(void)state;
	tf_pyroscope_link l = { "https://grafana.example.com/", "pyro-uid", "acme/libmini", "unit",
				"process_cpu:cpu:nanoseconds:cpu:nanoseconds",
				"1111111111111111111111111111111111111111",
				"2222222222222222222222222222222222222222",
				1800000000000, 1800000600000 };
	char *u = tf_pyroscope_grafana_url(&l, "a|b,c (x)");
	assert_non_null(u);
	assert_true(strncmp(u, "https://grafana.example.com/a/grafana-pyroscope-app/explore?"
			       "explorationType=diff-flame-graph&var-dataSource=pyro-uid"
			       "&var-serviceName=acme%2Flibmini"
			       "&var-profileMetricId=process_cpu%3Acpu%3Ananoseconds%3Acpu%3Ananoseconds", 216) == 0);
	assert_non_null(strstr(u, "&var-filtersBaseline=service_git_ref%7C%3D%7C1111111111111111111111111111111111111111"));
	assert_non_null(strstr(u, "&var-filtersComparison=service_git_ref%7C%3D%7C2222222222222222222222222222222222222222"));
	/* the filter's own delimiters escaped as Grafana's variables expect */
	assert_non_null(strstr(u, "&var-filtersBaseline=test%7C%3D%7Ca__gfp__b__gfc__c%20%28x%29"));
	assert_non_null(strstr(u, "&var-filtersComparison=suite%7C%3D%7Cunit"));
	assert_non_null(strstr(u, "&diffFrom=1799996400000&diffTo=1800003600000"));
	assert_non_null(strstr(u, "&diffFrom-2=1799997000000&diffTo-2=1800004200000"));
	assert_null(strchr(u, ' '));
	assert_null(strchr(u, '('));
	free(u);
	l.base_commit = NULL;
	assert_null(tf_pyroscope_grafana_url(&l, "t"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_types),
		cmocka_unit_test(test_prepare_limits),
		cmocka_unit_test(test_prepare_bytes),
		cmocka_unit_test(test_label_values),
		cmocka_unit_test(test_encode_push),
		cmocka_unit_test(test_selector),
		cmocka_unit_test(test_credentials),
		cmocka_unit_test(test_grafana_url),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
