/*
 * testmeta.c - the per-test line of a run file's metadata, written and read
 * in one place.
 *
 * Each test that ran has one comment
 *
 *     testflame.test.NAME=samples=N value=V wall_ns=W source=S [field=...]
 *
 * NAME is the test's name as its framework gives it, and may hold spaces
 * and '='; the fields start at the last "=samples=", and every field value
 * that could hold a space or '=' (the parent's name) is percent-encoded, so
 * that boundary is never ambiguous. Unknown fields are skipped, so an older
 * testflame reads a newer run file. Run files of earlier versions wrote
 * "wall=12ms" style values: units ns, us, ms and s are still understood.
 */
#include "testflame/attribute.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PREFIX "testflame.test."

static const char *const status_names[] = { "", "passed", "failed", "skipped" };
static const char *const measure_names[] = { "samples", "count", "cpu", "runner" };

const char *tf_test_measure_name(tf_test_measure m)
{
	return (unsigned)m < TF_ARRAY_SIZE(measure_names) ? measure_names[m] : "?";
}

void tf_test_meta_init(tf_test_meta *m)
{
	memset(m, 0, sizeof(*m));
	m->wall_ns = m->count = m->cpu_ns = m->runner_ns = m->runner_q_ns = NAN;
	m->offcpu_ns = m->offcpu_apart_ns = m->offcpu_waits = m->offcpu_pagein_ns = NAN;
	m->allocs = m->alloc_bytes = m->frees = m->heap_peak = m->leaked = m->rss_peak = NAN;
	m->alloc_samples = NAN;
}

void tf_test_meta_clear(tf_test_meta *m)
{
	free(m->name);
	free(m->parent);
	free(m->source);
	free(m->runner);
	tf_test_meta_init(m);
}

/* A value with an optional time unit; NAN when it is not one, or when it
 * is beyond any run's (10^18 ns, 31 years): what is read must fit the
 * integers show and compare make of it, and the 19 digits the writer
 * gives it. */
static double parse_number(const char *s, size_t len)
{
	char buf[64], *end;
	if (len == 0 || len >= sizeof(buf))
		return NAN;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	double v = strtod(buf, &end);
	if (end == buf || errno || !(v >= 0))
		return NAN;
	if (!*end || !strcmp(end, "ns"))
		;
	else if (!strcmp(end, "us"))
		v *= 1e3;
	else if (!strcmp(end, "ms"))
		v *= 1e6;
	else if (!strcmp(end, "s"))
		v *= 1e9;
	else
		return NAN;
	return v <= 1e18 ? v : NAN;
}

static void put_encoded(tf_buf *b, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '%' || c == '=' || c <= ' ' || c == 0x7f)
			tf_buf_printf(b, "%%%02X", c);
		else
			tf_buf_putc(b, (char)c);
	}
}

static char *decode(const char *s, size_t len)
{
	char *out = tf_xmalloc(len + 1), *o = out;
	for (size_t i = 0; i < len; i++) {
		int h = i + 2 < len ? tf_hex_digit(s[i + 1]) : -1;
		int l = h >= 0 ? tf_hex_digit(s[i + 2]) : -1;
		if (s[i] == '%' && l >= 0 && (h | l)) {
			*o++ = (char)(h * 16 + l);
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

static bool field_is(const char *f, size_t klen, const char *key)
{
	return strlen(key) == klen && memcmp(f, key, klen) == 0;
}

/* "testflame.test." (the first run), or "testflame.run<R>.test." (run R
 * of a file that joins several, R >= 2): the start of the name, and
 * the run's index from 0; NULL when the comment is no per-test line. */
static const char *test_prefix(const char *c, size_t *run)
{
	static const char runp[] = "testflame.run";
	char *end;
	if (strncmp(c, PREFIX, sizeof(PREFIX) - 1) == 0) {
		*run = 0;
		return c + sizeof(PREFIX) - 1;
	}
	if (strncmp(c, runp, sizeof(runp) - 1) != 0)
		return NULL;
	c += sizeof(runp) - 1;
	if (*c < '1' || *c > '9')
		return NULL;
	errno = 0;
	unsigned long r = strtoul(c, &end, 10);
	if (errno || r < 2 || r > 100000 || strncmp(end, ".test.", 6) != 0)
		return NULL;
	*run = r - 1;
	return end + 6;
}

int tf_test_meta_parse_run(tf_test_meta *out, size_t *run, const char *comment)
{
	const char *c, *last = NULL, *at;
	bool have_samples = false, have_value = false;

	tf_test_meta_init(out);
	c = test_prefix(comment, run);
	if (!c)
		return TF_ENOTFOUND;
	for (at = c; (at = strstr(at, "=samples=")) != NULL; at++)
		last = at;
	if (!last || last == c)
		return tf_error_set(TF_EINVAL, "malformed per-test metadata '%.80s'", comment);
	out->name = tf_xstrndup(c, (size_t)(last - c));
	for (const char *f = last + 1; *f;) {
		const char *end = strchr(f, ' ');
		size_t len = end ? (size_t)(end - f) : strlen(f);
		const char *eq = memchr(f, '=', len);
		if (eq) {
			size_t kl = (size_t)(eq - f), vl = len - kl - 1;
			const char *v = eq + 1;
			double num = parse_number(v, vl);
			if (field_is(f, kl, "samples") && !isnan(num)) {
				out->samples = (uint64_t)num;
				have_samples = true;
			} else if (field_is(f, kl, "value")) {
				char *e;
				char buf[32];
				if (vl < sizeof(buf)) {
					memcpy(buf, v, vl);
					buf[vl] = '\0';
					errno = 0;
					out->value = strtoll(buf, &e, 10);
					have_value = e != buf && !*e && !errno;
				}
			} else if (field_is(f, kl, "wall_ns") || field_is(f, kl, "wall")) {
				out->wall_ns = num;
			} else if (field_is(f, kl, "cpu_ns") || field_is(f, kl, "cpu")) {
				out->cpu_ns = num;
			} else if (field_is(f, kl, "count")) {
				out->count = num;
			} else if (field_is(f, kl, "runner_ns")) {
				out->runner_ns = num;
			} else if (field_is(f, kl, "runner_q_ns")) {
				out->runner_q_ns = num;
			} else if (field_is(f, kl, "offcpu_ns")) {
				out->offcpu_ns = num;
			} else if (field_is(f, kl, "offcpu_apart_ns")) {
				out->offcpu_apart_ns = num;
			} else if (field_is(f, kl, "offcpu_waits")) {
				out->offcpu_waits = num;
			} else if (field_is(f, kl, "offcpu_pagein_ns")) {
				out->offcpu_pagein_ns = num;
			} else if (field_is(f, kl, "exit") && !isnan(num) && num < 1e6) {
				out->exit_status = (int)num;
				out->has_exit = true;
			} else if (field_is(f, kl, "source") && !out->source) {
				out->source = tf_xstrndup(v, vl);
			} else if (field_is(f, kl, "runner") && !out->runner) {
				out->runner = tf_xstrndup(v, vl);
			} else if (field_is(f, kl, "parent") && !out->parent && vl) {
				out->parent = decode(v, vl);
			} else if (field_is(f, kl, "allocs")) {
				out->allocs = num;
			} else if (field_is(f, kl, "alloc_bytes")) {
				out->alloc_bytes = num;
			} else if (field_is(f, kl, "frees")) {
				out->frees = num;
			} else if (field_is(f, kl, "heap_peak")) {
				out->heap_peak = num;
			} else if (field_is(f, kl, "leaked")) {
				out->leaked = num;
			} else if (field_is(f, kl, "rss_peak")) {
				out->rss_peak = num;
			} else if (field_is(f, kl, "alloc_samples")) {
				out->alloc_samples = num;
			} else if (field_is(f, kl, "nested") && !isnan(num)) {
				out->nested = (uint32_t)TF_MIN(num, 1e9);
			} else if (field_is(f, kl, "status")) {
				for (size_t i = 1; i < TF_ARRAY_SIZE(status_names); i++)
					if (field_is(v, vl, status_names[i]))
						out->status = (tf_test_status)i;
			}
		}
		f += len;
		while (*f == ' ')
			f++;
	}
	if (!have_samples || !have_value) {
		tf_test_meta_clear(out);
		return tf_error_set(TF_EINVAL, "malformed per-test metadata '%.80s'", comment);
	}
	return 0;
}

int tf_test_meta_parse(tf_test_meta *out, const char *comment)
{
	size_t run;
	int rc = tf_test_meta_parse_run(out, &run, comment);
	if (!rc && run != 0) {
		tf_test_meta_clear(out);
		return TF_ENOTFOUND;
	}
	return rc;
}

/* " key=" and a number, without printf: a suite of thousands of tests
 * formats five numbers each, and printf's %.0f of a double is a
 * multi-precision conversion (a fifth of a warm profile build of
 * yaml-cpp's 990 tests was spent here). */
static void put_key(tf_buf *b, const char *key)
{
	tf_buf_putc(b, ' ');
	tf_buf_puts(b, key);
	tf_buf_putc(b, '=');
}

static void put_u64(tf_buf *b, uint64_t u)
{
	char tmp[24];
	size_t n = sizeof(tmp);
	do
		tmp[--n] = (char)('0' + u % 10);
	while (u /= 10);
	tf_buf_put(b, tmp + n, sizeof(tmp) - n);
}

static void put_i64(tf_buf *b, int64_t v)
{
	if (v < 0) {
		tf_buf_putc(b, '-');
		put_u64(b, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(b, (uint64_t)v);
	}
}

/* %.0f: whole numbers (all the nanoseconds and counts here) by hand */
static void put_whole(tf_buf *b, double v)
{
	if (!signbit(v) && v < 0x1p53 && v == floor(v))
		put_u64(b, (uint64_t)v);
	else
		tf_buf_printf(b, "%.0f", v);
}

static void put_ns(tf_buf *b, const char *key, double v)
{
	if (isnan(v))
		return;
	put_key(b, key);
	put_whole(b, v);
}

void tf_test_meta_format(tf_buf *out, const tf_test_meta *m)
{
	tf_buf_puts(out, "samples=");
	put_u64(out, m->samples);
	put_key(out, "value");
	put_i64(out, m->value);
	put_key(out, "wall_ns");
	put_whole(out, isnan(m->wall_ns) ? 0.0 : m->wall_ns);
	put_key(out, "source");
	tf_buf_puts(out, m->source ? m->source : "markers");
	put_ns(out, "count", m->count);
	put_ns(out, "cpu_ns", m->cpu_ns);
	put_ns(out, "offcpu_ns", m->offcpu_ns);
	put_ns(out, "offcpu_apart_ns", m->offcpu_apart_ns);
	put_ns(out, "offcpu_waits", m->offcpu_waits);
	if (m->offcpu_pagein_ns > 0) /* absent: none */
		put_ns(out, "offcpu_pagein_ns", m->offcpu_pagein_ns);
	if (!isnan(m->runner_ns)) {
		put_ns(out, "runner_ns", m->runner_ns);
		put_ns(out, "runner_q_ns", m->runner_q_ns);
	}
	if (m->runner) {
		put_key(out, "runner");
		tf_buf_puts(out, m->runner);
	}
	if (m->has_exit) {
		put_key(out, "exit");
		put_i64(out, m->exit_status);
	}
	if (m->status) {
		put_key(out, "status");
		tf_buf_puts(out, status_names[m->status]);
	}
	if (m->nested) {
		put_key(out, "nested");
		put_u64(out, m->nested);
	}
	put_ns(out, "allocs", m->allocs);
	put_ns(out, "alloc_bytes", m->alloc_bytes);
	put_ns(out, "frees", m->frees);
	put_ns(out, "heap_peak", m->heap_peak);
	put_ns(out, "leaked", m->leaked);
	put_ns(out, "rss_peak", m->rss_peak);
	put_ns(out, "alloc_samples", m->alloc_samples);
	if (m->parent && *m->parent) {
		put_key(out, "parent");
		put_encoded(out, m->parent);
	}
}

void tf_test_meta_set(tf_profile *p, const tf_test_meta *m)
{
	tf_buf v = TF_BUF_INIT;
	char *key = tf_xasprintf("test.%s", m->name);
	tf_test_meta_format(&v, m);
	tf_profile_set_meta(p, key, v.ptr);
	free(key);
	tf_buf_free(&v);
}

const char *tf_test_status_name(tf_test_status s)
{
	return (unsigned)s < TF_ARRAY_SIZE(status_names) ? status_names[s] : "";
}
