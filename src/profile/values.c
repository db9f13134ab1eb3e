/*
 * values.c - choosing and printing a profile's value column: which sample
 * type a viewer shows by default (pprof's rule), resolving a user's --value,
 * and formatting values with units the way `go tool pprof` does, so that
 * our tables read like the tool our users already know.
 */
#include "testflame/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int tf_profile_default_value(const tf_profile *p)
{
	if (p->sample_types.n == 0)
		return -1;
	if (p->default_sample_type) {
		const char *want = tf_profile_str(p, p->default_sample_type);
		int i = tf_profile_find_sample_type(p, want);
		if (i >= 0)
			return i;
	}
	return (int)p->sample_types.n - 1;
}

int tf_profile_value_index(size_t *out, const tf_profile *p, const char *spec)
{
	tf_buf names = TF_BUF_INIT;
	int rc;

	if (!spec || !*spec) {
		int d = tf_profile_default_value(p);
		if (d < 0)
			return tf_error_set(TF_EINVAL, "the profile has no sample types");
		*out = (size_t)d;
		return 0;
	}
	for (size_t i = 0; i < p->sample_types.n; i++) {
		const char *type = tf_profile_str(p, p->sample_types.v[i].type);
		const char *unit = tf_profile_str(p, p->sample_types.v[i].unit);
		size_t tl = strlen(type);
		if (strcmp(spec, type) == 0 ||
		    (strncmp(spec, type, tl) == 0 && spec[tl] == '/' && strcmp(spec + tl + 1, unit) == 0)) {
			*out = i;
			return 0;
		}
	}
	{
		char *end;
		errno = 0;
		unsigned long n = strtoul(spec, &end, 10);
		if (!errno && end != spec && !*end && n < p->sample_types.n) {
			*out = (size_t)n;
			return 0;
		}
	}
	for (size_t i = 0; i < p->sample_types.n; i++)
		tf_buf_printf(&names, "%s%s", i ? ", " : "",
			      tf_profile_str(p, p->sample_types.v[i].type));
	rc = tf_error_set(TF_EINVAL, "no sample type '%s' in the profile (it has: %s)", spec,
			  names.ptr ? names.ptr : "none");
	tf_buf_free(&names);
	return rc;
}

/* %.2f without a trailing ".00", as pprof's measurement.ScaledLabel. */
static const char *scaled(char *buf, size_t size, double v, const char *suffix)
{
	char num[64];
	size_t n;

	snprintf(num, sizeof(num), "%.2f", v);
	n = strlen(num);
	if (n > 3 && strcmp(num + n - 3, ".00") == 0)
		num[n - 3] = '\0';
	if (strcmp(num, "0") == 0 || strcmp(num, "-0") == 0)
		snprintf(buf, size, "0");
	else
		snprintf(buf, size, "%s%s", num, suffix);
	return buf;
}

typedef struct {
	const char *suffix;
	double size; /* in nanoseconds or bytes */
} scale;

/* Largest first: the first that fits a value is its natural scale. */
static const scale time_scales[] = { { "hrs", 3600e9 }, { "s", 1e9 }, { "ms", 1e6 },
				     { "us", 1e3 }, { "ns", 1 } };
static const scale byte_scales[] = { { "TB", 1099511627776.0 }, { "GB", 1073741824.0 },
				     { "MB", 1048576.0 }, { "kB", 1024.0 }, { "B", 1 } };

/* The scales of `unit` and its size in base units; NULL for counts. */
static const scale *scales_of(const char *unit, size_t *n, double *to_base)
{
	static const struct {
		const char *unit;
		double to_base;
		bool bytes;
	} units[] = {
		{ "nanoseconds", 1, false }, { "ns", 1, false },
		{ "microseconds", 1e3, false }, { "us", 1e3, false },
		{ "milliseconds", 1e6, false }, { "ms", 1e6, false },
		{ "seconds", 1e9, false }, { "s", 1e9, false },
		{ "bytes", 1, true }, { "B", 1, true },
	};
	for (size_t i = 0; unit && i < TF_ARRAY_SIZE(units); i++) {
		if (strcmp(unit, units[i].unit) != 0)
			continue;
		*to_base = units[i].to_base;
		*n = units[i].bytes ? TF_ARRAY_SIZE(byte_scales) : TF_ARRAY_SIZE(time_scales);
		return units[i].bytes ? byte_scales : time_scales;
	}
	return NULL;
}

const char *tf_value_scale(int64_t value, const char *unit)
{
	size_t n;
	double to_base, a;
	const scale *sc = scales_of(unit, &n, &to_base);

	if (!sc)
		return NULL;
	a = (double)value * to_base;
	if (a < 0)
		a = -a;
	for (size_t j = 0; j < n; j++)
		if (a >= sc[j].size)
			return sc[j].suffix;
	return sc[n - 1].suffix;
}

const char *tf_value_format_in(char *buf, size_t size, int64_t value, const char *unit,
			       const char *suffix)
{
	size_t n;
	double to_base;
	const scale *sc = scales_of(unit, &n, &to_base);

	for (size_t j = 0; sc && suffix && j < n; j++)
		if (strcmp(sc[j].suffix, suffix) == 0)
			return scaled(buf, size, (double)value * to_base / sc[j].size, suffix);
	snprintf(buf, size, "%lld", (long long)value);
	return buf;
}

const char *tf_value_format(char *buf, size_t size, int64_t value, const char *unit)
{
	return tf_value_format_in(buf, size, value, unit, tf_value_scale(value, unit));
}
