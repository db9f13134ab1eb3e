/*
 * config.c - reading `.testflame.yml` with libyaml.
 *
 * The file is loaded as a YAML document, then walked against one table of
 * known keys (name, type, where it goes in tf_config, bounds). The same
 * table gives every field its "unset" value, frees it and merges command-
 * line flags over it, so adding a key is one line. Every mistake is one
 * message "FILE:LINE:COLUMN: what is wrong" pointing at the offending key
 * or value, returned as TF_EUSAGE: a bad config is the user's to fix, and
 * the cli exits 2 for it.
 */
#include "context/context_int.h"
#include "testflame/attribute.h"
#include "testflame/config.h"
#include "testflame/context.h"
#include "testflame/record.h"

#include <errno.h>
#include <math.h>
#include <regex.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <yaml.h>

const char *const tf_config_report_formats[] = {
	"html", "md", "json", "junit", "codequality", "svg", "speedscope", "folded", NULL,
};


typedef enum {
	K_MAP,        /* a nested mapping: `sub` */
	K_STR,        /* char *, not empty */
	K_CHOICE,     /* char *, one of `choices` */
	K_STORE,      /* char *, a store spec, checked by the store (its place kept) */
	K_URL,        /* char *, http(s)://... */
	K_CMD,        /* command_argv + command_shell */
	K_INT,        /* long in [min, max]; unset is min - 1 */
	K_BOOL,       /* int tri-state */
	K_PERCENT,    /* gate.threshold (settings.c); unset -1 */
	K_ALPHA,      /* gate.alpha (settings.c); unset -1 */
	K_DURATION,   /* gate.min_delta, nanoseconds (settings.c); unset -1 */
	K_CONFIDENCE, /* stored as alpha = 1 - confidence */
	K_CONFIRM,    /* char *: gate.confirm (settings.c) */
	K_BUDGET,     /* char *: gate.confirm_budget (settings.c) */
	K_LIST,       /* char **, NULL-terminated; a scalar is a list of one */
	K_CHOICES,    /* K_LIST whose items are in `choices` */
	K_PATTERNS,   /* attribution.patterns */
	K_SIZE,       /* double bytes >= 0, "64KiB", "1M", "4096"; unset -1 */
	K_SWITCH_MAP, /* int tri-state: a boolean, or a mapping of `sub` (on) */
} kind;

typedef struct key {
	const char *name;
	kind kind;
	size_t off;
	long min, max;
	const char *const *choices;
	const struct key *sub;
} key;

#define OFF(f) offsetof(tf_config, f)

static const key attribution_keys[] = {
	{ "markers", K_BOOL, OFF(attribution.markers), 0, 0, NULL, NULL },
	{ "frames", K_CHOICES, OFF(attribution.frames), 0, 0, tf_frame_preset_names, NULL },
	{ "patterns", K_PATTERNS, OFF(attribution.patterns), 0, 0, NULL, NULL },
	{ "drivers", K_LIST, OFF(attribution.drivers), 0, 0, NULL, NULL },
	{ "build_tools", K_LIST, OFF(attribution.build_tools), 0, 0, NULL, NULL },
	{ "runner_reports", K_LIST, OFF(attribution.runner_reports), 0, 0, NULL, NULL },
	{ "inject", K_BOOL, OFF(attribution.inject), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

const char *const tf_gate_measure_names[] = {
	[TF_GATE_BOTH] = "both",
	[TF_GATE_CPU] = "cpu",
	[TF_GATE_WALL] = "wall",
	NULL,
};

static const key memory_gate_keys[] = {
	{ "threshold", K_PERCENT, OFF(gate.memory_threshold), 0, 0, NULL, NULL },
	{ "min_bytes", K_SIZE, OFF(gate.memory_min_bytes), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

static const key gate_keys[] = {
	{ "threshold", K_PERCENT, OFF(gate.threshold), 0, 0, NULL, NULL },
	{ "fail_on_regression", K_BOOL, OFF(gate.fail_on_regression), 0, 0, NULL, NULL },
	{ "outside", K_BOOL, OFF(gate.outside), 0, 0, NULL, NULL },
	{ "min_samples", K_INT, OFF(gate.min_samples), 0, 1000000000, NULL, NULL },
	{ "min_delta", K_DURATION, OFF(gate.min_delta_ns), 0, 0, NULL, NULL },
	{ "confirm", K_CONFIRM, OFF(gate.confirm), 0, 100, NULL, NULL },
	{ "confirm_budget", K_BUDGET, OFF(gate.confirm_budget), 0, 0, NULL, NULL },
	{ "alpha", K_ALPHA, OFF(gate.alpha), 0, 0, NULL, NULL },
	{ "confidence", K_CONFIDENCE, OFF(gate.alpha), 0, 0, NULL, NULL },
	{ "measure", K_CHOICE, OFF(gate.measure), 0, 0, tf_gate_measure_names, NULL },
	{ "memory", K_SWITCH_MAP, OFF(gate.memory), 0, 0, NULL, memory_gate_keys },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

static const key report_keys[] = {
	{ "dir", K_STR, OFF(report.dir), 0, 0, NULL, NULL },
	{ "formats", K_CHOICES, OFF(report.formats), 0, 0, tf_config_report_formats, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

static const key publish_keys[] = {
	{ "comment", K_BOOL, OFF(publish.comment), 0, 0, NULL, NULL },
	{ "annotations", K_BOOL, OFF(publish.annotations), 0, 0, NULL, NULL },
	{ "step_summary", K_BOOL, OFF(publish.step_summary), 0, 0, NULL, NULL },
	{ "github_api_url", K_URL, OFF(publish.github_api_url), 0, 0, NULL, NULL },
	{ "gitlab_api_url", K_URL, OFF(publish.gitlab_api_url), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

static const key pyroscope_keys[] = {
	{ "grafana_url", K_URL, OFF(pyroscope.grafana_url), 0, 0, NULL, NULL },
	{ "grafana_datasource", K_STR, OFF(pyroscope.grafana_datasource), 0, 0, NULL, NULL },
	{ "tenant", K_STR, OFF(pyroscope.tenant), 0, 0, NULL, NULL },
	{ "user", K_STR, OFF(pyroscope.user), 0, 0, NULL, NULL },
	{ "password", K_STR, OFF(pyroscope.password), 0, 0, NULL, NULL },
	{ "token", K_STR, OFF(pyroscope.token), 0, 0, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

static const key hook_keys[] = {
	{ "command", K_CMD, OFF(hook.command_argv), 0, 0, NULL, NULL },
	{ "suite", K_STR, OFF(hook.suite), 0, 0, NULL, NULL },
	{ "repeat", K_INT, OFF(hook.repeat), 1, 1000, NULL, NULL },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

static const key top_keys[] = {
	{ "suite", K_STR, OFF(suite), 0, 0, NULL, NULL },
	{ "command", K_CMD, OFF(command_argv), 0, 0, NULL, NULL },
	{ "build", K_STR, OFF(build), 0, 0, NULL, NULL },
	{ "event", K_CHOICE, OFF(event), 0, 0, tf_event_names, NULL },
	{ "freq", K_INT, OFF(freq), 1, 10000, NULL, NULL },
	{ "call_graph", K_CHOICE, OFF(call_graph), 0, 0, tf_callgraph_names, NULL },
	{ "sampler", K_CHOICE, OFF(sampler), 0, 0, tf_sampler_names, NULL },
	{ "follow", K_CHOICE, OFF(follow), 0, 0, tf_follow_names, NULL },
	{ "off_cpu", K_CHOICE, OFF(off_cpu), 0, 0, tf_offcpu_names, NULL },
	{ "off_cpu_max", K_INT, OFF(off_cpu_max), 1, 1000000, NULL, NULL },
	{ "test", K_STR, OFF(test), 0, 0, NULL, NULL },
	{ "target_branch", K_STR, OFF(target_branch), 0, 0, NULL, NULL },
	{ "repeat", K_INT, OFF(repeat), 1, 1000, NULL, NULL },
	{ "baseline_repeat", K_INT, OFF(baseline_repeat), 1, 1000, NULL, NULL },
	{ "against", K_STR, OFF(against), 0, 0, NULL, NULL },
	{ "store", K_STORE, OFF(store), 0, 0, NULL, NULL },
	{ "memory", K_BOOL, OFF(memory), 0, 0, NULL, NULL },
	{ "attribution", K_MAP, 0, 0, 0, NULL, attribution_keys },
	{ "gate", K_MAP, 0, 0, 0, NULL, gate_keys },
	{ "report", K_MAP, 0, 0, 0, NULL, report_keys },
	{ "publish", K_MAP, 0, 0, 0, NULL, publish_keys },
	{ "pyroscope", K_MAP, 0, 0, 0, NULL, pyroscope_keys },
	{ "hook", K_MAP, 0, 0, 0, NULL, hook_keys },
	{ NULL, 0, 0, 0, 0, NULL, NULL },
};

typedef TF_VEC(tf_config_pattern) pattern_vec;

#define FIELD(cfg, k, type) ((type *)((char *)(cfg) + (k)->off))
/* A K_CMD's shell flag sits right after its argv (command, hook.command). */
#define CMD_SHELL(cfg, k) ((bool *)((char *)(cfg) + (k)->off + sizeof(char **)))
_Static_assert(offsetof(tf_config, command_shell) == offsetof(tf_config, command_argv) + sizeof(char **),
	       "command_shell follows command_argv");
_Static_assert(offsetof(tf_config, hook.command_shell) ==
	       offsetof(tf_config, hook.command_argv) + sizeof(char **),
	       "hook.command_shell follows hook.command_argv");

/* ---- the table's life cycle: unset values, free, merge ------------------ */

static void table_unset(tf_config *cfg, const key *keys)
{
	for (const key *k = keys; k->name; k++) {
		switch (k->kind) {
		case K_MAP: table_unset(cfg, k->sub); break;
		case K_INT: *FIELD(cfg, k, long) = k->min - 1; break;
		case K_SWITCH_MAP: table_unset(cfg, k->sub); /* fall through */
		case K_BOOL: *FIELD(cfg, k, int) = TF_CONFIG_UNSET; break;
		case K_PERCENT:
		case K_DURATION:
		case K_SIZE:
		case K_ALPHA: *FIELD(cfg, k, double) = -1; break;
		default: break; /* zero from calloc */
		}
	}
}

static void patterns_free(pattern_vec *pv)
{
	for (size_t i = 0; i < pv->n; i++) {
		free(pv->v[i].regex);
		free(pv->v[i].name);
	}
	tf_vec_free(pv);
}

static void table_free(tf_config *cfg, const key *keys)
{
	for (const key *k = keys; k->name; k++) {
		switch (k->kind) {
		case K_MAP: table_free(cfg, k->sub); break;
		case K_STR:
		case K_CHOICE:
		case K_CONFIRM:
		case K_BUDGET:
		case K_STORE:
		case K_URL: free(*FIELD(cfg, k, char *)); *FIELD(cfg, k, char *) = NULL; break;
		case K_CMD:
		case K_LIST:
		case K_CHOICES: tf_strv_free(*FIELD(cfg, k, char **)); *FIELD(cfg, k, char **) = NULL; break;
		case K_PATTERNS: patterns_free(FIELD(cfg, k, pattern_vec)); break;
		default: break;
		}
	}
}

static void table_merge(tf_config *cfg, const tf_config *over, const key *keys)
{
	for (const key *k = keys; k->name; k++) {
		switch (k->kind) {
		case K_MAP:
			table_merge(cfg, over, k->sub);
			break;
		case K_STR:
		case K_CHOICE:
		case K_CONFIRM:
		case K_BUDGET:
		case K_STORE:
		case K_URL: {
			char *v = *FIELD(over, k, char *);
			if (v) {
				free(*FIELD(cfg, k, char *));
				*FIELD(cfg, k, char *) = tf_xstrdup(v);
			}
			break;
		}
		case K_CMD:
			if (*FIELD(over, k, char **)) {
				tf_strv_free(*FIELD(cfg, k, char **));
				*FIELD(cfg, k, char **) = tf_strv_dup(*FIELD(over, k, char **));
				*CMD_SHELL(cfg, k) = *CMD_SHELL(over, k);
			}
			break;
		case K_LIST:
		case K_CHOICES: {
			char **v = *FIELD(over, k, char **);
			if (v) {
				tf_strv_free(*FIELD(cfg, k, char **));
				*FIELD(cfg, k, char **) = tf_strv_dup(v);
			}
			break;
		}
		case K_PATTERNS: {
			const pattern_vec *src = FIELD(over, k, pattern_vec);
			pattern_vec *dst = FIELD(cfg, k, pattern_vec);
			if (src->n) {
				patterns_free(dst);
				for (size_t i = 0; i < src->n; i++) {
					tf_config_pattern p = {
						tf_xstrdup(src->v[i].regex),
						src->v[i].name ? tf_xstrdup(src->v[i].name) : NULL,
					};
					tf_vec_push(dst, p);
				}
			}
			break;
		}
		case K_INT:
			if (*FIELD(over, k, long) != k->min - 1)
				*FIELD(cfg, k, long) = *FIELD(over, k, long);
			break;
		case K_SWITCH_MAP:
			table_merge(cfg, over, k->sub);
			/* fall through */
		case K_BOOL:
			if (*FIELD(over, k, int) != TF_CONFIG_UNSET)
				*FIELD(cfg, k, int) = *FIELD(over, k, int);
			break;
		case K_PERCENT:
		case K_DURATION:
		case K_SIZE:
		case K_ALPHA:
			if (*FIELD(over, k, double) >= 0)
				*FIELD(cfg, k, double) = *FIELD(over, k, double);
			break;
		case K_CONFIDENCE:
			break; /* shares its field with alpha */
		}
	}
}

tf_config *tf_config_new(void)
{
	tf_config *cfg = tf_xcalloc(1, sizeof(*cfg));
	table_unset(cfg, top_keys);
	return cfg;
}

void tf_config_free(tf_config *cfg)
{
	if (!cfg)
		return;
	table_free(cfg, top_keys);
	free(cfg->path);
	free(cfg->store_at);
	free(cfg);
}

void tf_config_merge(tf_config *cfg, const tf_config *over)
{
	if (over->store) {
		free(cfg->store_at);
		cfg->store_at = over->store_at ? tf_xstrdup(over->store_at) : NULL;
	}
	table_merge(cfg, over, top_keys);
}

/* ---- walking the document -------------------------------------------------- */

typedef struct {
	yaml_document_t *doc;
	const char *name;
	tf_config *cfg;
} walker;

static int fail_at(const walker *w, yaml_mark_t m, const char *fmt, ...) TF_PRINTF(3, 4);
static int fail_at(const walker *w, yaml_mark_t m, const char *fmt, ...)
{
	char msg[1536];
	tf_buf line = TF_BUF_INIT;
	va_list ap;
	int rc;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* values quoted may span lines (a quoted scalar with an empty line) */
	tf_buf_put_printable(&line, msg);
	rc = tf_error_set(TF_EUSAGE, "%s:%zu:%zu: %s", w->name, m.line + 1, m.column + 1,
			  line.ptr ? line.ptr : "");
	tf_buf_free(&line);
	return rc;
}

static const char *scalar(const yaml_node_t *n)
{
	return n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* `key:` with nothing, `~` or `null`: the same as leaving the key out. */
static bool is_null(const yaml_node_t *n)
{
	const char *s = scalar(n);
	if (!s || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
		return false;
	return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0 ||
	       strcmp(s, "Null") == 0 || strcmp(s, "NULL") == 0;
}

/* Scalars with a NUL inside would be cut silently: refuse them. */
static bool clean_scalar(const yaml_node_t *n)
{
	return strlen(scalar(n)) == n->data.scalar.length;
}

static const char *node_kind(const yaml_node_t *n)
{
	switch (n->type) {
	case YAML_MAPPING_NODE: return "a mapping";
	case YAML_SEQUENCE_NODE: return "a list";
	default: return "a value";
	}
}

static int want_string(const walker *w, const yaml_node_t *n, const char *path, const char **out)
{
	const char *s = scalar(n);
	if (!s)
		return fail_at(w, n->start_mark, "'%s' must be a string, not %s", path, node_kind(n));
	if (!clean_scalar(n))
		return fail_at(w, n->start_mark, "'%s' contains a NUL character", path);
	if (!*s)
		return fail_at(w, n->start_mark, "'%s' must not be empty", path);
	*out = s;
	return 0;
}

static bool in_list(const char *const *list, const char *s)
{
	for (; *list; list++)
		if (strcmp(*list, s) == 0)
			return true;
	return false;
}

static void join(tf_buf *b, const char *const *list)
{
	for (size_t i = 0; list[i]; i++)
		tf_buf_printf(b, "%s%s", i ? ", " : "", list[i]);
}

static int bad_choice(const walker *w, const yaml_node_t *n, const char *path,
		      const char *what, const char *v, const char *const *choices)
{
	tf_buf b = TF_BUF_INIT;
	int rc;
	join(&b, choices);
	rc = fail_at(w, n->start_mark, "%s '%s' in '%s' (known: %s)", what, v, path, b.ptr);
	tf_buf_free(&b);
	return rc;
}

static int parse_bool(const walker *w, const yaml_node_t *n, const char *path, int *out)
{
	static const char *const yes[] = { "true", "yes", "on", NULL };
	static const char *const no[] = { "false", "no", "off", NULL };
	const char *s = scalar(n);
	for (size_t i = 0; s && yes[i]; i++) {
		if (strcasecmp(s, yes[i]) == 0) { *out = 1; return 0; }
		if (strcasecmp(s, no[i]) == 0) { *out = 0; return 0; }
	}
	return fail_at(w, n->start_mark, "'%s' must be true or false", path);
}

static int parse_int(const walker *w, const yaml_node_t *n, const char *path, const key *k, long *out)
{
	const char *s = scalar(n);
	char *end;
	long v;

	if (s && *s && (*s == '-' || *s == '+' || (*s >= '0' && *s <= '9'))) {
		errno = 0;
		v = strtol(s, &end, 10);
		if (!errno && !*end && v >= k->min && v <= k->max) {
			*out = v;
			return 0;
		}
	}
	return fail_at(w, n->start_mark, "'%s' must be a whole number between %ld and %ld",
		       path, k->min, k->max);
}

static bool is_url(const char *s)
{
	return (strncmp(s, "http://", 7) == 0 && s[7]) || (strncmp(s, "https://", 8) == 0 && s[8]);
}

/* A list of strings (a lone string counts as a list of one). */
static int parse_list(const walker *w, const yaml_node_t *n, const char *path,
		      const char *const *choices, bool allow_empty_items, char ***out)
{
	TF_VEC(char *) v = { 0 };
	const yaml_node_item_t *it;
	int rc = 0;

	if (n->type == YAML_SCALAR_NODE) {
		const char *s;
		if ((rc = want_string(w, n, path, &s)) < 0)
			return rc;
		if (choices && !in_list(choices, s))
			return bad_choice(w, n, path, "unknown value", s, choices);
		*out = tf_xcalloc(2, sizeof(char *));
		(*out)[0] = tf_xstrdup(s);
		return 0;
	}
	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(w, n->start_mark, "'%s' must be a list of strings, not %s", path,
			       node_kind(n));
	for (it = n->data.sequence.items.start; it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(w->doc, *it);
		const char *s = scalar(item);
		if (!s || !clean_scalar(item) || (!*s && !allow_empty_items)) {
			rc = fail_at(w, item->start_mark, "items of '%s' must be %sstrings", path,
				     allow_empty_items ? "" : "non-empty ");
			break;
		}
		if (choices && !in_list(choices, s)) {
			rc = bad_choice(w, item, path, "unknown value", s, choices);
			break;
		}
		tf_vec_push(&v, tf_xstrdup(s));
	}
	if (rc == 0 && v.n == 0)
		rc = fail_at(w, n->start_mark, "'%s' must not be an empty list", path);
	if (rc < 0) {
		for (size_t i = 0; i < v.n; i++)
			free(v.v[i]);
		tf_vec_free(&v);
		return rc;
	}
	tf_vec_push(&v, NULL);
	*out = v.v;
	return 0;
}

/* Largest \N in a name template, or -1 for a lone backslash. */
static int template_max_group(const char *t)
{
	int max = 0;
	for (const char *p = t; *p; p++) {
		if (*p != '\\')
			continue;
		if (p[1] >= '1' && p[1] <= '9')
			max = TF_MAX(max, p[1] - '0');
		else if (p[1] != '\\')
			return -1;
		p++;
	}
	return max;
}

static int check_regex(const walker *w, const yaml_node_t *n, const char *path,
		       const char *re, const char *name)
{
	regex_t rx;
	char err[256];
	int rc;
	size_t groups;

	if (tf_regex_cost(re) > TF_REGEX_MAX_COST)
		return fail_at(w, n->start_mark, "regex '%s' in '%s' repeats too much to compile "
			       "(its repetitions multiply to over %d copies)", re, path,
			       TF_REGEX_MAX_COST);
	rc = regcomp(&rx, re, REG_EXTENDED);

	if (rc != 0) {
		regerror(rc, &rx, err, sizeof(err));
		return fail_at(w, n->start_mark, "bad regex '%s' in '%s': %s", re, path, err);
	}
	groups = rx.re_nsub;
	regfree(&rx);
	if (name) {
		int g = template_max_group(name);
		if (g < 0)
			return fail_at(w, n->start_mark, "name '%s' in '%s': a backslash must be "
				       "followed by a group number 1-9 or another backslash", name, path);
		if ((size_t)g > groups)
			return fail_at(w, n->start_mark, "name '%s' in '%s' uses group \\%d but regex "
				       "'%s' has %zu", name, path, g, re, groups);
	}
	return 0;
}

static int parse_patterns(const walker *w, const yaml_node_t *n, const char *path, pattern_vec *out)
{
	const yaml_node_item_t *it;
	pattern_vec v = { 0 };
	int rc = 0;

	if (n->type != YAML_SEQUENCE_NODE)
		return fail_at(w, n->start_mark, "'%s' must be a list of regexes or {regex, name} "
			       "mappings, not %s", path, node_kind(n));
	for (it = n->data.sequence.items.start; rc == 0 && it < n->data.sequence.items.top; it++) {
		yaml_node_t *item = yaml_document_get_node(w->doc, *it);
		const char *re = NULL, *name = NULL;
		yaml_node_t *re_node = item;

		if (item->type == YAML_SCALAR_NODE) {
			rc = want_string(w, item, path, &re);
		} else if (item->type == YAML_MAPPING_NODE) {
			const yaml_node_pair_t *p;
			for (p = item->data.mapping.pairs.start; rc == 0 && p < item->data.mapping.pairs.top; p++) {
				yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
				yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
				const char *ks = scalar(kn);
				if (ks && strcmp(ks, "regex") == 0) {
					rc = want_string(w, vn, "attribution.patterns.regex", &re);
					re_node = vn;
				} else if (ks && strcmp(ks, "name") == 0) {
					rc = want_string(w, vn, "attribution.patterns.name", &name);
				} else {
					rc = fail_at(w, kn->start_mark, "unknown key '%s' in '%s' "
						     "(known: regex, name)", ks ? ks : "?", path);
				}
			}
			if (rc == 0 && !re)
				rc = fail_at(w, item->start_mark, "a pattern in '%s' needs 'regex'", path);
		} else {
			rc = fail_at(w, item->start_mark, "items of '%s' must be regexes or "
				     "{regex, name} mappings", path);
		}
		if (rc == 0)
			rc = check_regex(w, re_node, path, re, name);
		if (rc == 0) {
			tf_config_pattern p = { tf_xstrdup(re), name ? tf_xstrdup(name) : NULL };
			tf_vec_push(&v, p);
		}
	}
	if (rc < 0) {
		patterns_free(&v);
		return rc;
	}
	patterns_free(out);
	*out = v;
	return 0;
}

static int parse_value(walker *w, const key *k, const yaml_node_t *n, const char *path);

/* Levenshtein distance, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), prev[64], cur[64];
	if (la >= 63 || lb >= 63)
		return 99;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
			cur[j] = TF_MIN(sub, TF_MIN(prev[j] + 1, cur[j - 1] + 1));
		}
		memcpy(prev, cur, sizeof(size_t) * (lb + 1));
	}
	return prev[lb];
}

static int unknown_key(const walker *w, const yaml_node_t *kn, const char *ks,
		       const key *keys, const char *section)
{
	const char *best = NULL;
	size_t bestd = 3;
	char where[128] = "";

	for (const key *k = keys; k->name; k++) {
		size_t d = distance(ks, k->name);
		if (d < bestd) {
			bestd = d;
			best = k->name;
		}
	}
	if (section)
		snprintf(where, sizeof(where), " in '%s'", section);
	if (best)
		return fail_at(w, kn->start_mark, "unknown key '%s'%s (did you mean '%s'?)", ks, where, best);
	return fail_at(w, kn->start_mark, "unknown key '%s'%s", ks, where);
}

static int parse_mapping(walker *w, const yaml_node_t *n, const key *keys, const char *section)
{
	const yaml_node_pair_t *p;
	bool alpha_seen = false;

	if (n->type != YAML_MAPPING_NODE) {
		if (section)
			return fail_at(w, n->start_mark, "'%s' must be a mapping of settings, not %s",
				       section, node_kind(n));
		return fail_at(w, n->start_mark, "the file must be a mapping of settings "
			       "(key: value), not %s", node_kind(n));
	}
	for (p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		yaml_node_t *kn = yaml_document_get_node(w->doc, p->key);
		yaml_node_t *vn = yaml_document_get_node(w->doc, p->value);
		const char *ks = scalar(kn);
		const key *k;
		char path[128];
		int rc;

		if (!ks)
			return fail_at(w, kn->start_mark, "keys must be plain names, not %s", node_kind(kn));
		for (k = keys; k->name && strcmp(k->name, ks) != 0; k++)
			;
		if (!k->name)
			return unknown_key(w, kn, ks, keys, section);
		for (const yaml_node_pair_t *q = n->data.mapping.pairs.start; q < p; q++) {
			const char *qs = scalar(yaml_document_get_node(w->doc, q->key));
			if (qs && strcmp(qs, ks) == 0)
				return fail_at(w, kn->start_mark, "duplicate key '%s' (first at line %zu)",
					       ks, yaml_document_get_node(w->doc, q->key)->start_mark.line + 1);
		}
		snprintf(path, sizeof(path), "%s%s%s", section ? section : "", section ? "." : "", ks);
		if (is_null(vn))
			continue;
		if (k->kind == K_ALPHA || k->kind == K_CONFIDENCE) {
			if (alpha_seen)
				return fail_at(w, kn->start_mark, "give 'gate.alpha' or 'gate.confidence', not both");
			alpha_seen = true;
		}
		rc = k->kind == K_MAP ? parse_mapping(w, vn, k->sub, path) : parse_value(w, k, vn, path);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* A shared setting's value, checked as its flag is (settings.c), at its
 * place in the file. */
static int check_setting(const walker *w, const yaml_node_t *n, tf_setting which,
			 const char *path, double *out)
{
	char *name = tf_xasprintf("'%s'", path);
	int rc = tf_settings_parse(which, name, scalar(n), out);
	free(name);
	return rc ? fail_at(w, n->start_mark, "%s", tf_error_last()) : 0;
}

static int parse_value(walker *w, const key *k, const yaml_node_t *n, const char *path)
{
	tf_config *cfg = w->cfg;
	const char *s = NULL;
	double d;
	int rc;

	switch (k->kind) {
	case K_MAP:
		return parse_mapping(w, n, k->sub, path);
	case K_STR:
	case K_CHOICE:
	case K_CONFIRM:
	case K_BUDGET:
	case K_STORE:
	case K_URL:
		if ((rc = want_string(w, n, path, &s)) < 0)
			return rc;
		if (k->kind == K_CONFIRM && (rc = check_setting(w, n, TF_SETTING_CONFIRM, path, NULL)))
			return rc;
		if (k->kind == K_BUDGET &&
		    (rc = check_setting(w, n, TF_SETTING_CONFIRM_BUDGET, path, NULL)))
			return rc;
		if (k->kind == K_CHOICE && !in_list(k->choices, s)) {
			tf_buf b = TF_BUF_INIT;
			join(&b, k->choices);
			rc = fail_at(w, n->start_mark, "'%s' must be one of %s, not '%s'", path, b.ptr, s);
			tf_buf_free(&b);
			return rc;
		}
		if (k->kind == K_STORE) {
			/* the store checks the spec (tf_store_check_config),
			 * naming this place */
			free(cfg->store_at);
			cfg->store_at = tf_xasprintf("%s:%zu:%zu", w->name, n->start_mark.line + 1,
						     n->start_mark.column + 1);
		}
		if (k->kind == K_URL && !is_url(s))
			return fail_at(w, n->start_mark, "'%s' must be an http:// or https:// URL, not '%s'",
				       path, s);
		free(*FIELD(cfg, k, char *));
		*FIELD(cfg, k, char *) = tf_xstrdup(s);
		return 0;
	case K_CMD: {
		char **argv;
		if (n->type == YAML_SCALAR_NODE) {
			if ((rc = want_string(w, n, path, &s)) < 0)
				return rc;
			argv = tf_xcalloc(2, sizeof(char *));
			argv[0] = tf_xstrdup(s);
			*CMD_SHELL(cfg, k) = true;
		} else if (n->type == YAML_SEQUENCE_NODE) {
			if ((rc = parse_list(w, n, path, NULL, true, &argv)) < 0)
				return rc;
			if (!argv[0][0]) {
				tf_strv_free(argv);
				return fail_at(w, n->start_mark, "'%s': the program name must not be empty", path);
			}
			*CMD_SHELL(cfg, k) = false;
		} else {
			return fail_at(w, n->start_mark, "'%s' must be a string (run by sh -c) or a list "
				       "(program and arguments), not %s", path, node_kind(n));
		}
		tf_strv_free(*FIELD(cfg, k, char **));
		*FIELD(cfg, k, char **) = argv;
		return 0;
	}
	case K_INT:
		return parse_int(w, n, path, k, FIELD(cfg, k, long));
	case K_BOOL:
		return parse_bool(w, n, path, FIELD(cfg, k, int));
	case K_SIZE:
		if (!tf_config_parse_size(scalar(n), &d))
			return fail_at(w, n->start_mark, "'%s' must be a size such as 64KiB, 1MiB or "
				       "4096 (bytes), not '%s'", path, scalar(n) ? scalar(n) : "");
		*FIELD(cfg, k, double) = d;
		return 0;
	case K_SWITCH_MAP:
		if (n->type == YAML_MAPPING_NODE) {
			if ((rc = parse_mapping(w, n, k->sub, path)) < 0)
				return rc;
			*FIELD(cfg, k, int) = 1;
			return 0;
		}
		if (n->type != YAML_SCALAR_NODE) {
			tf_buf b = TF_BUF_INIT;
			for (const key *sk = k->sub; sk->name; sk++)
				tf_buf_printf(&b, "%s%s", sk == k->sub ? "" : ", ", sk->name);
			rc = fail_at(w, n->start_mark, "'%s' must be true, false or a mapping of %s, "
				     "not %s", path, b.ptr, node_kind(n));
			tf_buf_free(&b);
			return rc;
		}
		return parse_bool(w, n, path, FIELD(cfg, k, int));
	case K_PERCENT:
	case K_DURATION:
	case K_ALPHA:
		if ((rc = check_setting(w, n, k->kind == K_PERCENT ? TF_SETTING_THRESHOLD
					 : k->kind == K_ALPHA ? TF_SETTING_ALPHA
					 : TF_SETTING_MIN_DELTA, path, &d)))
			return rc;
		*FIELD(cfg, k, double) = d;
		return 0;
	case K_CONFIDENCE:
		if (tf_context_parse_number(scalar(n), "%", &d) && strchr(scalar(n), '%'))
			d /= 100;
		else if (!tf_context_parse_number(scalar(n), NULL, &d))
			d = -1;
		if (d < 0.5 || d >= 1)
			return fail_at(w, n->start_mark, "'%s' must be a number at least 0.5 and below 1, "
				       "such as 0.95 or 95%%", path);
		*FIELD(cfg, k, double) = 1.0 - d;
		return 0;
	case K_LIST:
	case K_CHOICES: {
		char **v;
		if ((rc = parse_list(w, n, path, k->kind == K_CHOICES ? k->choices : NULL, false, &v)) < 0)
			return rc;
		tf_strv_free(*FIELD(cfg, k, char **));
		*FIELD(cfg, k, char **) = v;
		return 0;
	}
	case K_PATTERNS:
		return parse_patterns(w, n, path, FIELD(cfg, k, pattern_vec));
	}
	return 0;
}

/* ---- parsing and loading ------------------------------------------------- */

/* Line and column of a byte offset (reader errors carry only the offset). */
static yaml_mark_t mark_at(const char *text, size_t len, size_t off)
{
	yaml_mark_t m = { off, 0, 0 };
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			m.line++;
			m.column = 0;
		} else {
			m.column++;
		}
	}
	return m;
}

static int syntax_error(const walker *w, yaml_parser_t *p, const char *text, size_t len)
{
	yaml_mark_t m = p->problem_mark;
	const char *problem = p->problem ? p->problem : "malformed YAML";

	if (p->error == YAML_READER_ERROR) {
		m = mark_at(text, len, p->problem_offset);
		return fail_at(w, m, "%s (the file must be UTF-8 text)", problem);
	}
	if (p->error == YAML_MEMORY_ERROR)
		return tf_error_set(TF_ERROR, "%s: out of memory while parsing", w->name);
	if (p->context)
		return fail_at(w, m, "%s (%s at line %zu, column %zu)", problem, p->context,
			       p->context_mark.line + 1, p->context_mark.column + 1);
	return fail_at(w, m, "%s", problem);
}

int tf_config_parse(tf_config **out, const char *text, size_t len, const char *name)
{
	yaml_parser_t parser;
	yaml_document_t doc, extra;
	yaml_node_t *root;
	walker w = { &doc, name, NULL };
	int rc = 0;

	*out = NULL;
	if (!yaml_parser_initialize(&parser))
		return tf_error_set(TF_ERROR, "%s: cannot start the YAML parser", name);
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	if (!yaml_parser_load(&parser, &doc)) {
		rc = syntax_error(&w, &parser, text, len);
		yaml_parser_delete(&parser);
		return rc;
	}
	w.cfg = tf_config_new();
	root = yaml_document_get_root_node(&doc);
	if (root && !is_null(root))
		rc = parse_mapping(&w, root, top_keys, NULL);
	if (rc == 0 && root) {
		if (!yaml_parser_load(&parser, &extra)) {
			rc = syntax_error(&w, &parser, text, len);
		} else {
			yaml_node_t *r2 = yaml_document_get_root_node(&extra);
			if (r2)
				rc = fail_at(&w, r2->start_mark, "only one YAML document is allowed");
			yaml_document_delete(&extra);
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc < 0) {
		tf_config_free(w.cfg);
		return rc;
	}
	w.cfg->path = tf_xstrdup(name);
	*out = w.cfg;
	return 0;
}

/*
 * The path to show for a file found at the work tree's root: relative to the
 * current directory when that is inside the file's directory, as git shows
 * paths (".testflame.yml" at the root, "../.testflame.yml" from a
 * subdirectory); absolute from anywhere else.
 */
static char *display_name(const char *file)
{
	char *cwd = getcwd(NULL, 0);
	const char *slash = strrchr(file, '/');
	size_t common, i;
	tf_buf b = TF_BUF_INIT;

	if (!cwd || file[0] != '/' || !slash)
		goto absolute;
	/* the file's directory must be the current one or an ancestor of it */
	common = (size_t)(slash - file);
	if (strncmp(cwd, file, common) != 0 || (cwd[common] != '/' && cwd[common] != '\0') ||
	    common == 0)
		goto absolute;
	for (i = common; cwd[i]; i++)
		if (cwd[i] == '/')
			tf_buf_puts(&b, "../");
	tf_buf_puts(&b, file + common + 1);
	free(cwd);
	return tf_buf_detach(&b);
absolute:
	free(cwd);
	return tf_xstrdup(file);
}

int tf_config_load(tf_config **out, const char *path, const char *start_dir)
{
	tf_buf text = TF_BUF_INIT;
	char *file, *name;
	tf_repo *repo;
	int rc;

	*out = NULL;
	if (path) {
		if (tf_file_read(&text, path) < 0) {
			tf_buf_free(&text);
			return TF_EUSAGE; /* the message names the file and the reason */
		}
		rc = tf_config_parse(out, text.ptr ? text.ptr : "", text.len, path);
		tf_buf_free(&text);
		return rc;
	}
	if (!start_dir)
		start_dir = ".";
	if (tf_repo_open(&repo, start_dir) == 0 && tf_repo_workdir(repo)) {
		file = tf_xasprintf("%s%s", tf_repo_workdir(repo), TF_CONFIG_FILE);
		tf_repo_free(repo);
	} else {
		if (repo)
			tf_repo_free(repo);
		file = strcmp(start_dir, ".") == 0 ? tf_xstrdup(TF_CONFIG_FILE)
			: tf_xasprintf("%s/%s", start_dir, TF_CONFIG_FILE);
	}
	tf_error_clear();
	if (access(file, F_OK) != 0) {
		free(file);
		*out = tf_config_new();
		return 0;
	}
	name = file[0] == '/' ? display_name(file) : tf_xstrdup(file);
	rc = tf_file_read(&text, file);
	if (rc == 0)
		rc = tf_config_parse(out, text.ptr ? text.ptr : "", text.len, name);
	tf_buf_free(&text);
	free(name);
	free(file);
	return rc;
}

/* What each kind of value is, in words, for the manual. */
static void describe_key(tf_buf *out, const char *path, const key *k)
{
	static const char *const what[] = {
		[K_MAP] = "a mapping", [K_STR] = "a string", [K_CHOICE] = "one of",
		[K_STORE] = "a store: git, git:REMOTE, dir:PATH or pyroscope:URL",
		[K_URL] = "an http(s) URL", [K_CMD] = "a command: a list run as is, or a string run with sh -c",
		[K_INT] = "a whole number", [K_BOOL] = "true or false",
		[K_PERCENT] = "a percentage, \"5\" or \"5%\"", [K_ALPHA] = "a probability in (0, 0.5]",
		[K_DURATION] = "a time: \"1ms\", \"500us\", \"2s\" or 0",
		[K_CONFIDENCE] = "a probability in [0.5, 1) (instead of alpha)",
		[K_CONFIRM] = "alone, against, rerun, none, or a number of reruns",
		[K_BUDGET] = "a share of the suite's own time, \"100%\", or a time, \"90s\"",
		[K_LIST] = "a list of strings (a string is a list of one)", [K_CHOICES] = "a list of",
		[K_PATTERNS] = "a list of regexes, or of {regex, name} mappings",
		[K_SIZE] = "a size in bytes: \"64KiB\", \"1M\" or \"4096\"",
		[K_SWITCH_MAP] = "true or false, or a mapping of the keys below it (then on)",
	};
	tf_buf_printf(out, "%s\t%s", path, what[k->kind]);
	if (k->kind == K_INT && k->min < k->max)
		tf_buf_printf(out, " from %ld to %ld", k->min, k->max);
	for (const char *const *c = k->choices; c && *c; c++)
		tf_buf_printf(out, "%s%s", c == k->choices ? ": " : ", ", *c);
	tf_buf_putc(out, '\n');
}

static void describe_keys(tf_buf *out, const char *prefix, const key *keys)
{
	for (const key *k = keys; k->name; k++) {
		char *path = tf_xasprintf("%s%s%s", prefix, *prefix ? "." : "", k->name);
		if (k->kind != K_MAP)
			describe_key(out, path, k);
		if (k->kind == K_MAP || k->kind == K_SWITCH_MAP)
			describe_keys(out, path, k->sub);
		free(path);
	}
}

void tf_config_describe(tf_buf *out)
{
	describe_keys(out, "", top_keys);
}
