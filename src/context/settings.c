/*
 * settings.c - the settings every judging command shares (config.h): one
 * parser and range check per setting, used by the config reader and by
 * the flags alike, and one resolver, flags over .testflame.yml over the
 * environment over the defaults. Before it, the threshold's range was
 * written in four places that disagreed (0-10000 in the config, below
 * 1000 in the comparison), so `gate.threshold: 2000` loaded and failed
 * only when the comparison was made; and `compare` read no config at all.
 */
#include "context/context_int.h"
#include "testflame/config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

bool tf_context_parse_number(const char *s, const char *suffix, double *out)
{
	char *end;
	double v;
	if (!s || !*s || strchr(s, 'x') || strchr(s, 'X'))
		return false; /* no hex floats */
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return false;
	if (*end && !(suffix && strcmp(end, suffix) == 0))
		return false;
	*out = v;
	return true;
}

bool tf_config_parse_size(const char *s, double *bytes)
{
	static const struct { const char *unit; double bytes; } units[] = {
		{ "", 1 }, { "B", 1 }, { "K", 1024 }, { "KB", 1024 }, { "KiB", 1024 },
		{ "M", 1048576 }, { "MB", 1048576 }, { "MiB", 1048576 },
		{ "G", 1073741824 }, { "GB", 1073741824 }, { "GiB", 1073741824 },
	};
	double v;

	for (size_t i = 0; i < TF_ARRAY_SIZE(units); i++)
		if (tf_context_parse_number(s, *units[i].unit ? units[i].unit : NULL, &v)) {
			if (v < 0 || v * units[i].bytes > 1e15)
				return false;
			*bytes = v * units[i].bytes;
			return true;
		}
	return false;
}

bool tf_config_parse_duration(const char *s, double *ns)
{
	static const struct { const char *unit; double ns; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
	};
	double v;

	/* a number without its unit says nothing, but for 0 */
	if (tf_context_parse_number(s, NULL, &v)) {
		if (v != 0)
			return false;
		*ns = 0;
		return true;
	}
	for (size_t i = 0; i < TF_ARRAY_SIZE(units); i++)
		if (tf_context_parse_number(s, units[i].unit, &v)) {
			if (v < 0 || v * units[i].ns > TF_MIN_DELTA_MAX_NS)
				return false;
			*ns = v * units[i].ns;
			return true;
		}
	return false;
}

bool tf_config_confirm_ok(const char *s)
{
	char *end;
	long v;
	if (!strcmp(s, "alone") || !strcmp(s, "against") || !strcmp(s, "rerun") ||
	    !strcmp(s, "none"))
		return true;
	v = strtol(s, &end, 10);
	return *s && !*end && v >= 0 && v <= 100;
}

/* What each setting must be, said alike for the config and the flags. */
static const char *const expected[] = {
	[TF_SETTING_THRESHOLD] = "a percentage from 0 to below 1000, such as 5 or 2.5%",
	[TF_SETTING_ALPHA] = "a number above 0 and at most 0.5, such as 0.05",
	[TF_SETTING_NOISE] = "a percentage from 0 to below 100",
	[TF_SETTING_MIN_DELTA] = "a duration such as 1ms, 500us or 0",
	[TF_SETTING_CONFIRM] = "alone, against, rerun, none or a number of runs between 0 and 100",
	[TF_SETTING_CONFIRM_BUDGET] = ("a share of the suite's own time above 0% and at most "
				       "1000%, such as 100%, or a time such as 90s"),
};

static bool in_range(tf_setting which, double v)
{
	switch (which) {
	case TF_SETTING_THRESHOLD: return v >= 0 && v < TF_THRESHOLD_MAX;
	case TF_SETTING_ALPHA: return v > 0 && v <= TF_ALPHA_MAX;
	case TF_SETTING_NOISE: return v >= 0 && v < TF_NOISE_MAX;
	case TF_SETTING_MIN_DELTA: return v >= 0 && v <= TF_MIN_DELTA_MAX_NS;
	case TF_SETTING_CONFIRM: return true;
	case TF_SETTING_CONFIRM_BUDGET: return (v > 0 && v <= 1000) || (v < 0 && v >= -TF_MIN_DELTA_MAX_NS);
	}
	return false;
}

int tf_settings_check(tf_setting which, const char *name, double value)
{
	if (in_range(which, value))
		return 0;
	return tf_error_set(TF_EUSAGE, "%s must be %s, not %g", name, expected[which], value);
}

int tf_settings_parse(tf_setting which, const char *name, const char *text, double *out)
{
	double v = 0;
	bool ok;

	switch (which) {
	case TF_SETTING_THRESHOLD:
	case TF_SETTING_NOISE:
		ok = tf_context_parse_number(text, "%", &v);
		break;
	case TF_SETTING_ALPHA:
		ok = tf_context_parse_number(text, NULL, &v);
		break;
	case TF_SETTING_MIN_DELTA:
		ok = text && tf_config_parse_duration(text, &v);
		break;
	case TF_SETTING_CONFIRM_BUDGET:
		/* a share of the suite's time says its '%'; a time its unit */
		if (text && strchr(text, '%'))
			ok = tf_context_parse_number(text, "%", &v);
		else if ((ok = text && tf_config_parse_duration(text, &v)))
			v = -v;
		break;
	default:
		ok = text && tf_config_confirm_ok(text);
		break;
	}
	if (!ok || !in_range(which, v)) {
		tf_buf shown = TF_BUF_INIT;
		tf_buf_put_printable(&shown, text ? text : "");
		tf_error_set(TF_EUSAGE, "%s must be %s, not '%s'", name, expected[which],
			     shown.ptr ? shown.ptr : "");
		tf_buf_free(&shown);
		return TF_EUSAGE;
	}
	if (out)
		*out = v;
	return 0;
}

int tf_settings_check_flags(const tf_settings_flags *f)
{
	static const struct {
		tf_setting which;
		const char *flag;
		size_t off;
	} flags[] = {
		{ TF_SETTING_THRESHOLD, "--threshold", offsetof(tf_settings_flags, threshold) },
		{ TF_SETTING_ALPHA, "--alpha", offsetof(tf_settings_flags, alpha) },
		{ TF_SETTING_NOISE, "--noise", offsetof(tf_settings_flags, noise) },
		{ TF_SETTING_MIN_DELTA, "--min-delta", offsetof(tf_settings_flags, min_delta) },
		{ TF_SETTING_CONFIRM, "--confirm", offsetof(tf_settings_flags, confirm) },
	};
	int rc;

	for (size_t i = 0; i < TF_ARRAY_SIZE(flags); i++) {
		const char *text = *(const char *const *)((const char *)f + flags[i].off);
		if (text && (rc = tf_settings_parse(flags[i].which, flags[i].flag, text, NULL)))
			return rc;
	}
	if (f->report_dir && !*f->report_dir)
		return tf_error_set(TF_EUSAGE, "--report needs a directory");
	return 0;
}

/* A flag's number (checked), else the config's (>= 0 when set), else the default. */
static double pick(tf_setting which, const char *flag, double cfg, double dflt)
{
	double v;
	if (flag && tf_settings_parse(which, "", flag, &v) == 0)
		return v;
	return cfg >= 0 ? cfg : dflt;
}

int tf_settings_resolve(tf_settings *out, const tf_settings_flags *f, const tf_config *cfg,
			char *const *envp)
{
	tf_config *none = NULL;
	const char *env_store;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = tf_settings_check_flags(f)))
		return rc;
	if (!cfg)
		cfg = none = tf_config_new(); /* every field unset: nothing points into it */
	out->threshold = pick(TF_SETTING_THRESHOLD, f->threshold, cfg->gate.threshold,
			      TF_THRESHOLD_DEFAULT);
	out->alpha = pick(TF_SETTING_ALPHA, f->alpha, cfg->gate.alpha, TF_ALPHA_DEFAULT);
	out->noise = pick(TF_SETTING_NOISE, f->noise, -1, -1);
	out->min_delta_ns = pick(TF_SETTING_MIN_DELTA, f->min_delta, cfg->gate.min_delta_ns,
				 TF_MIN_DELTA_NS);
	out->min_samples = cfg->gate.min_samples > 0 ? (double)cfg->gate.min_samples : 0;
	out->fail_on_regression = !f->no_fail && tf_config_bool(cfg->gate.fail_on_regression, true);
	out->outside = tf_config_bool(cfg->gate.outside, false);
	out->history = f->history ? f->history : TF_HISTORY_DEFAULT;
	out->confirm = f->confirm ? f->confirm : cfg->gate.confirm;
	/* checked when read; the suite's own time again by default */
	out->confirm_budget_pct = TF_CONFIRM_BUDGET_PCT;
	out->confirm_budget_ns = 0;
	if (cfg->gate.confirm_budget) {
		double v = 0;
		tf_settings_parse(TF_SETTING_CONFIRM_BUDGET, "", cfg->gate.confirm_budget, &v);
		out->confirm_budget_pct = v > 0 ? v : 0;
		out->confirm_budget_ns = v < 0 ? -v : 0;
	}
	/* the project's own choice, checked in with it, over a runner's */
	env_store = tf_env_get(envp, "TESTFLAME_STORE");
	out->store = f->store ? f->store : cfg->store ? cfg->store : env_store;
	out->report_dir = f->report_dir ? f->report_dir
			  : cfg->report.dir ? cfg->report.dir : TF_REPORT_DIR_DEFAULT;
	/* the flag's choices and the config's are the one list */
	const char *measure = f->measure ? f->measure : cfg->gate.measure;
	out->measure = TF_GATE_BOTH;
	for (int i = 0; measure && tf_gate_measure_names[i]; i++)
		if (strcmp(measure, tf_gate_measure_names[i]) == 0)
			out->measure = (tf_gate_measure)i;
	out->memory_gated = tf_config_bool(cfg->gate.memory, false);
	out->memory_threshold = cfg->gate.memory_threshold >= 0 ? cfg->gate.memory_threshold
							       : TF_MEMORY_THRESHOLD;
	out->memory_min_bytes = cfg->gate.memory_min_bytes >= 0 ? cfg->gate.memory_min_bytes
							       : TF_MEMORY_MIN_BYTES;
	tf_config_free(none);
	return 0;
}
