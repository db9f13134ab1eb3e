/*
 * json.c - report.json, the machine-readable comparison that CI steps,
 * scripts and the other report formats read (schema: docs/report-json.md).
 * Built with jansson so every string is escaped; names from the profiled
 * code are not trusted to be UTF-8 and are repaired (U+FFFD) rather than
 * dropped, and numbers that do not exist (the delta of a new test) are null.
 */
#include "compare/compare_int.h"

#include <jansson.h>
#include <math.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s (0 if invalid), per RFC 3629:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t utf8_seq(const unsigned char *s)
{
	unsigned c = s[0];
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

static json_t *jstr(const char *s)
{
	json_t *j;
	tf_buf b = TF_BUF_INIT;

	if (!s)
		return json_null();
	j = json_string(s);
	if (j)
		return j;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_seq(p);
		if (n) {
			tf_buf_put(&b, p, n);
			p += n;
		} else {
			tf_buf_puts(&b, "\xef\xbf\xbd");
			p++;
		}
	}
	j = json_string(b.ptr ? b.ptr : "");
	tf_buf_free(&b);
	return j;
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static json_t *side_json(const tf_comparison *c, bool head)
{
	const tf_compare_side *s = head ? &c->head : &c->base;
	const tf_compare_summary *sm = &c->summary;
	json_t *o = json_object(), *files = json_array(), *meta = json_object();

	json_object_set_new(o, "runs", json_integer((json_int_t)s->n));
	for (size_t i = 0; i < s->n; i++)
		json_array_append_new(files, jstr(c->priv->runs[(head ? c->priv->nbase : 0) + i].name));
	json_object_set_new(o, "files", files);
	json_object_set_new(o, "cost", jnum(head ? sm->head_cost : sm->base_cost));
	json_object_set_new(o, "samples", json_integer(head ? sm->head_samples : sm->base_samples));
	/* the first run's metadata, without the per-test lines */
	if (s->n) {
		const tf_profile *p = s->profiles[0];
		for (size_t i = 0; i < p->comments.n; i++) {
			const char *cm = tf_profile_str(p, p->comments.v[i]);
			const char *eq;
			if (strncmp(cm, "testflame.", 10) != 0 || strncmp(cm + 10, "test.", 5) == 0)
				continue;
			cm += 10;
			eq = strchr(cm, '=');
			if (!eq || eq == cm)
				continue;
			char *key = tf_xstrndup(cm, (size_t)(eq - cm));
			json_t *k = jstr(key);
			json_object_set_new(meta, json_string_value(k), jstr(eq + 1));
			json_decref(k);
			free(key);
		}
	}
	json_object_set_new(o, "meta", meta);
	return o;
}

static json_t *test_side_json(const tf_test_side *s, bool memory)
{
	json_t *o = json_object();
	if (memory) {
		json_object_set_new(o, "allocs", jnum(s->allocs));
		json_object_set_new(o, "frees", jnum(s->frees));
		json_object_set_new(o, "heap_peak", jnum(s->heap_peak));
		json_object_set_new(o, "leaked", jnum(s->leaked));
		json_object_set_new(o, "rss_peak", jnum(s->rss_peak));
	}
	json_object_set_new(o, "cost", jnum(s->cost));
	json_object_set_new(o, "sampled", jnum(s->sampled));
	json_object_set_new(o, "samples", json_integer(s->samples));
	json_object_set_new(o, "runs", json_integer((json_int_t)s->runs));
	json_object_set_new(o, "ran", json_boolean(s->ran));
	json_object_set_new(o, "wall_ns", jnum(s->wall_ns));
	json_object_set_new(o, "cpu_ns", jnum(s->cpu_ns));
	json_object_set_new(o, "runner_ns", jnum(s->runner_ns));
	json_object_set_new(o, "offcpu_ns", jnum(s->offcpu_ns));
	json_object_set_new(o, "offcpu_apart_ns", jnum(s->offcpu_apart_ns));
	return o;
}

/* A test's waits (gate.measure both): their verdict, their numbers (in
 * percent of the base's wall time), and where they grew. */
static json_t *waits_json(const tf_test_delta *t)
{
	const tf_test_delta *w = t->wait;
	json_t *o = json_object(), *ci = json_array(), *sites = json_array();

	json_object_set_new(o, "verdict", json_string(tf_verdict_name(w->verdict)));
	json_object_set_new(o, "reason", jstr(w->reason));
	json_object_set_new(o, "base_ns", jnum(w->base.cost));
	json_object_set_new(o, "head_ns", jnum(w->head.cost));
	json_object_set_new(o, "delta_ns", jnum(w->head.cost - w->base.cost));
	json_object_set_new(o, "delta_pct", jnum(w->delta_pct));
	json_array_append_new(ci, jnum(w->ci_low_pct));
	json_array_append_new(ci, jnum(w->ci_high_pct));
	json_object_set_new(o, "ci_pct", ci);
	json_object_set_new(o, "p_adjusted", jnum(w->p_adjusted));
	for (size_t i = 0; i < w->nfunctions; i++) {
		const tf_func_delta *f = &w->functions[i];
		json_t *s = json_object();
		json_object_set_new(s, "call", jstr(f->name));
		json_object_set_new(s, "caller", f->caller ? jstr(f->caller) : json_null());
		json_object_set_new(s, "file", jstr(f->file));
		json_object_set_new(s, "line", json_integer(f->line));
		json_object_set_new(s, "reason", jstr(f->reason));
		json_object_set_new(s, "base_ns", jnum(f->base_self));
		json_object_set_new(s, "head_ns", jnum(f->head_self));
		json_object_set_new(s, "delta_ns", jnum(f->delta_self));
		json_array_append_new(sites, s);
	}
	json_object_set_new(o, "sites", sites);
	return o;
}

static json_t *test_json(const tf_test_delta *t, bool memory)
{
	json_t *o = json_object(), *ci = json_array(), *fns = json_array();

	json_object_set_new(o, "name", jstr(t->name));
	json_object_set_new(o, "verdict", json_string(tf_verdict_name(t->verdict)));
	json_object_set_new(o, "reason", jstr(t->reason));
	json_object_set_new(o, "method", json_string(tf_compare_method_name(t->method)));
	json_object_set_new(o, "measure", json_string(tf_test_measure_name(t->measure)));
	json_object_set_new(o, "parent", t->parent ? jstr(t->parent) : json_null());
	json_object_set_new(o, "nested", json_integer(t->nested));
	json_object_set_new(o, "outside", json_boolean(t->outside));
	json_object_set_new(o, "gated", json_boolean(!t->outside));
	json_object_set_new(o, "attention", json_integer(t->attention));
	json_object_set_new(o, "ran_changed", json_boolean(t->ran_changed));
	json_object_set_new(o, "delta_pct", jnum(t->delta_pct));
	json_object_set_new(o, "raw_delta_pct", jnum(t->raw_delta_pct));
	json_object_set_new(o, "threshold_pct", jnum(t->threshold_pct));
	json_array_append_new(ci, jnum(t->ci_low_pct));
	json_array_append_new(ci, jnum(t->ci_high_pct));
	json_object_set_new(o, "ci_pct", ci);
	json_object_set_new(o, "p_value", jnum(t->p_value));
	json_object_set_new(o, "p_adjusted", jnum(t->p_adjusted));
	json_object_set_new(o, "df", jnum(t->df));
	/* the alternating runs per side that decided it alone, 0: not run alone */
	json_object_set_new(o, "confirm_runs", json_integer((json_int_t)t->confirm_runs));
	if (t->method == TF_METHOD_POISSON) {
		json_object_set_new(o, "noise_pct", jnum(t->noise_pct));
		json_object_set_new(o, "noise_from_history", json_boolean(t->noise_from_history));
		json_object_set_new(o, "noise_from_suite", json_boolean(t->noise_from_suite));
		json_object_set_new(o, "noise_set_aside", json_integer((json_int_t)t->noise_set_aside));
	}
	json_object_set_new(o, "base", test_side_json(&t->base, memory));
	json_object_set_new(o, "head", test_side_json(&t->head, memory));
	for (size_t i = 0; i < t->nfunctions; i++) {
		const tf_func_delta *f = &t->functions[i];
		json_t *fo = json_object();
		json_object_set_new(fo, "name", jstr(f->name));
		json_object_set_new(fo, "file", jstr(f->file));
		json_object_set_new(fo, "line", json_integer(f->line));
		json_object_set_new(fo, "changed", json_boolean(f->changed));
		json_object_set_new(fo, "base_self", jnum(f->base_self));
		json_object_set_new(fo, "head_self", jnum(f->head_self));
		json_object_set_new(fo, "base_total", jnum(f->base_total));
		json_object_set_new(fo, "head_total", jnum(f->head_total));
		json_object_set_new(fo, "delta_self", jnum(f->delta_self));
		json_object_set_new(fo, "delta_total", jnum(f->delta_total));
		if (f->within_noise)
			json_object_set_new(fo, "within_noise", json_true());
		if (f->caller) {
			json_t *co = json_object();
			json_object_set_new(co, "name", jstr(f->caller));
			json_object_set_new(co, "file", jstr(f->caller_file));
			json_object_set_new(co, "line", json_integer(f->caller_line));
			json_object_set_new(fo, "caller", co);
		}
		json_array_append_new(fns, fo);
	}
	json_object_set_new(o, "functions", fns);
	/* gate.measure both: what grew, and the waits' own judgement */
	if (t->wait) {
		json_t *grew = json_array();
		if (t->grew & TF_GREW_CPU)
			json_array_append_new(grew, json_string("cpu"));
		if (t->grew & TF_GREW_WAIT)
			json_array_append_new(grew, json_string("waiting"));
		json_object_set_new(o, "grew", grew);
		json_object_set_new(o, "decided_by", json_string(t->waits_lead ? "waiting" : "cpu"));
		json_object_set_new(o, "cpu_verdict", json_string(tf_verdict_name(t->cpu.verdict)));
		json_object_set_new(o, "cpu_delta_pct", jnum(t->cpu.delta_pct));
		json_object_set_new(o, "waits", waits_json(t));
	}
	return o;
}

static json_t *comparison_json(const tf_comparison *c, bool regressed)
{
	const tf_compare_summary *s = &c->summary;
	json_t *root = json_object(), *sum = json_object(), *tests = json_array();

	json_object_set_new(root, "schema", json_string("testflame-report/1"));
	json_object_set_new(root, "testflame", json_string(TF_VERSION));
	json_object_set_new(root, "regressed", json_boolean(regressed));
	json_object_set_new(root, "event", jstr(s->event));
	json_object_set_new(root, "value_type", jstr(s->value_type));
	json_object_set_new(root, "unit", jstr(s->unit));
	json_object_set_new(root, "threshold_pct", jnum(s->threshold));
	json_object_set_new(root, "alpha", jnum(s->alpha));
	json_object_set_new(root, "min_delta_ns", jnum(s->min_delta_ns));
	if (s->memory) {
		json_object_set_new(root, "min_delta_bytes", jnum(s->min_delta_bytes));
		json_object_set_new(root, "unmeasured", json_integer((json_int_t)s->unmeasured));
	}
	if (s->min_samples > 0)
		json_object_set_new(root, "min_samples", jnum(s->min_samples));
	json_object_set_new(root, "noise_pct", jnum(s->noise));
	json_object_set_new(root, "prior_noise_pct", jnum(s->prior_noise));
	json_object_set_new(root, "correction", json_string(tf_correction_name(s->correction)));
	json_object_set_new(root, "separate_jobs", json_boolean(s->separate_jobs));
	json_object_set_new(sum, "tests", json_integer((json_int_t)s->ntests));
	json_object_set_new(root, "gate_outside", json_boolean(s->gate_outside));
	json_object_set_new(root, "environments_differ", s->env_diff ? jstr(s->env_diff) : json_null());
	json_object_set_new(root, "base_made_by", s->base_made_by ? jstr(s->base_made_by) : json_null());
	json_object_set_new(root, "head_made_by", s->head_made_by ? jstr(s->head_made_by) : json_null());
	json_object_set_new(root, "versions_differ", s->version_diff ? jstr(s->version_diff) : json_null());
	json_object_set_new(root, "confirmation", s->confirmation ? jstr(s->confirmation) : json_null());
	json_object_set_new(root, "head_origin", s->origin ? jstr(s->origin) : json_null());
	if (!s->memory) {
		/* gate.measure: allocations are one measure of their own */
		json_object_set_new(root, "measure", json_string(tf_gate_measure_name(s->measure)));
		json_object_set_new(root, "measure_note",
				    s->measure_note ? jstr(s->measure_note) : json_null());
	}
	{
		json_t *sh = json_object();
		json_object_set_new(sh, "pct", jnum(s->shift_pct));
		json_object_set_new(sh, "ci_pct", jnum(s->shift_ci_pct));
		json_object_set_new(sh, "control_tests", json_integer((json_int_t)s->control_tests));
		json_object_set_new(sh, "touching_tests", json_integer((json_int_t)s->touching_tests));
		json_object_set_new(sh, "note", s->shift_note ? jstr(s->shift_note) : json_null());
		json_object_set_new(root, "runner_shift", sh);
	}
	{
		json_t *m = json_object();
		for (int k = 0; k < 4; k++)
			json_object_set_new(m, tf_test_measure_name((tf_test_measure)k),
					    json_integer((json_int_t)s->measured[k]));
		json_object_set_new(sum, "measured_by", m);
	}
	for (int v = 0; v < TF_VERDICT_COUNT; v++)
		json_object_set_new(sum, tf_verdict_name((tf_verdict)v),
				    json_integer((json_int_t)s->count[v]));
	json_object_set_new(root, "summary", sum);
	{
		tf_comparison_note notes[64];
		size_t n = tf_comparison_notes(c, notes, TF_ARRAY_SIZE(notes));
		json_t *arr = json_array();
		for (size_t i = 0; i < n && i < TF_ARRAY_SIZE(notes); i++) {
			json_t *o = json_object();
			json_object_set_new(o, "side", json_string(notes[i].side));
			json_object_set_new(o, "text", jstr(notes[i].text));
			json_array_append_new(arr, o);
		}
		json_object_set_new(root, "notes", arr);
	}
	json_object_set_new(root, "base", side_json(c, false));
	json_object_set_new(root, "head", side_json(c, true));
	for (size_t i = 0; i < c->ntests; i++)
		json_array_append_new(tests, test_json(&c->tests[i], s->memory));
	json_object_set_new(root, "tests", tests);
	return root;
}

int tf_comparison_to_json(tf_buf *out, const tf_comparison *c)
{
	return tf_comparison_to_json_memory(out, c, NULL, false);
}

int tf_comparison_to_json_memory(tf_buf *out, const tf_comparison *c, const tf_comparison *memory,
				 bool memory_gated)
{
	bool mem_regressed = memory && memory_gated && tf_comparison_regressed(memory);
	json_t *root = comparison_json(c, tf_comparison_regressed(c) || mem_regressed);
	char *text;

	if (memory) {
		json_t *m = comparison_json(memory, tf_comparison_regressed(memory));
		/* the document's own, not repeated */
		json_object_del(m, "schema");
		json_object_del(m, "testflame");
		json_object_del(m, "base");
		json_object_del(m, "head");
		json_object_set_new(m, "gated", json_boolean(memory_gated));
		json_object_set_new(root, "memory", m);
	}
	text = json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	json_decref(root);
	if (!text)
		return tf_error_set(TF_ERROR, "cannot encode the report as JSON");
	tf_buf_puts(out, text);
	tf_buf_putc(out, '\n');
	free(text);
	return 0;
}
