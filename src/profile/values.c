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

const char *tf_value_format(char *buf, size_t size, int64_t value, const char *unit)
{
	static const struct {
		const char *unit;
		double to_base; /* nanoseconds or bytes */
	} units[] = {
		{ "nanoseconds", 1 }, { "ns", 1 },
		{ "microseconds", 1e3 }, { "us", 1e3 },
		{ "milliseconds", 1e6 }, { "ms", 1e6 },
		{ "seconds", 1e9 }, { "s", 1e9 },
		{ "bytes", 1 }, { "B", 1 },
	};
	static const struct {
		const char *suffix;
		double size;
	} time_scale[] = { { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 }, { "ns", 1 } },
	  byte_scale[] = { { "TB", 1099511627776.0 }, { "GB", 1073741824.0 },
			   { "MB", 1048576.0 }, { "kB", 1024.0 }, { "B", 1 } };

	for (size_t i = 0; unit && i < TF_ARRAY_SIZE(units); i++) {
		if (strcmp(unit, units[i].unit) != 0)
			continue;
		double v = (double)value * units[i].to_base, a = v < 0 ? -v : v;
		bool bytes = units[i].unit[0] == 'b' || units[i].unit[0] == 'B';
		size_t n = bytes ? TF_ARRAY_SIZE(byte_scale) : TF_ARRAY_SIZE(time_scale);
		for (size_t j = 0; j < n; j++) {
			const char *suffix = bytes ? byte_scale[j].suffix : time_scale[j].suffix;
			double sz = bytes ? byte_scale[j].size : time_scale[j].size;
			if (a >= sz || j == n - 1)
				return scaled(buf, size, v / sz, suffix);
		}
	}
	snprintf(buf, size, "%lld", (long long)value);
	return buf;
}
