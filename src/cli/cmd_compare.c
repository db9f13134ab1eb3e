/*
 * cmd_compare.c - `testflame compare BASE HEAD`: compare any two profiles
 * (run files, any pprof, folded stacks), or several runs per side with
 * --base/--head, print the per-test table, write the report directory
 * (index.html, report.md, report.json, junit.xml, ...; SPEC §6), and exit 3
 * when a test regressed so scripts can gate on it. It judges with the
 * settings `run` judges with: flags over `gate:` in .testflame.yml over the
 * defaults (config.h's tf_settings), so that `compare REV REV` says what
 * the gate said.
 */
#include "cli_int.h"
#include "testflame/compare.h"
#include "testflame/report.h"
#include "testflame/store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

extern char **environ;

static const char *const usage[] = {
	"testflame compare [options] BASE HEAD   (files, or git revisions with a stored baseline)",
	"testflame compare [options] --base FILE... --head FILE...",
	NULL,
};

/*
 * How an operand becomes a profile. Each resolver returns 0, or
 * TF_ENOTFOUND to let the next one try, or another error to stop. A file
 * comes first; SPEC §2's git revisions with a stored baseline belong in a
 * resolver after it (the store module's lookup of refs/testflame/runs/<C>).
 */
typedef int (*operand_resolver)(tf_profile **out, const char *operand);

static int resolve_file(tf_profile **out, const char *operand)
{
	return tf_profile_load(out, operand);
}

/* Which stored run file a revision means: the store (--store, else the
 * config's, else $TESTFLAME_STORE), --suite, --kind. */
static const char *rev_store, *rev_suite, *rev_kind;
static const tf_config *rev_cfg;

/*
 * A git revision whose baseline is in the store (SPEC §2). When the
 * baseline holds several run files (suites, runner kinds), --suite and
 * --kind choose; an ambiguous choice is an error listing them.
 */
static int resolve_revision(tf_profile **out, const char *operand)
{
	tf_store *st = NULL;
	tf_baseline b;
	tf_buf bytes = TF_BUF_INIT;
	const tf_baseline_file *pick = NULL;
	size_t matches = 0;
	int rc;

	memset(&b, 0, sizeof(b));
	rc = tf_run_store_open(&st, rev_store, rev_cfg, NULL, &tf_cli_notices);
	if (rc == TF_EUSAGE)
		return rc; /* a broken config or spec: say so, whatever the operand */
	if (rc)
		return TF_ENOTFOUND; /* no store here: the operand is not a revision */
	rc = tf_store_show(&b, st, operand);
	if (rc) {
		if (rc != TF_ENOTFOUND)
			tf_error_wrap(rc, "'%s'", operand);
		goto done;
	}
	if (b.problem) {
		rc = tf_error_set(TF_EINVAL, "the baseline of '%s' cannot be read: %s", operand,
				  b.problem);
		goto done;
	}
	for (size_t i = 0; i < b.files.n; i++) {
		const tf_baseline_file *f = &b.files.v[i];
		if ((rev_suite && strcmp(f->suite, rev_suite) != 0) ||
		    (rev_kind && strcmp(f->kind, rev_kind) != 0))
			continue;
		pick = f;
		matches++;
	}
	if (matches != 1) {
		tf_buf list = TF_BUF_INIT;
		for (size_t i = 0; i < b.files.n; i++)
			tf_buf_printf(&list, "%s%s/%s", i ? ", " : "", b.files.v[i].suite,
				      b.files.v[i].kind);
		rc = tf_error_set(TF_EUSAGE, "the baseline of '%s' has %s run file%s (%s); "
				  "choose with --suite and --kind", operand,
				  matches ? "several matching" : "no matching",
				  matches == 1 ? "" : "s", list.ptr ? list.ptr : "none");
		tf_buf_free(&list);
		goto done;
	}
	rc = tf_store_get(&bytes, st, b.commit, pick->suite, pick->kind);
	if (!rc)
		rc = tf_pprof_decode(out, bytes.ptr, bytes.len);
	if (rc)
		tf_error_wrap(rc, "the baseline of '%s'", operand);
done:
	tf_baseline_clear(&b);
	tf_buf_free(&bytes);
	tf_store_free(st);
	return rc;
}

static const operand_resolver resolvers[] = {
	resolve_file,
	resolve_revision,
};

static int load_operand(tf_profile **out, const char *operand)
{
	char *first_error = NULL;
	int rc = TF_ENOTFOUND;

	for (size_t i = 0; i < TF_ARRAY_SIZE(resolvers); i++) {
		rc = resolvers[i](out, operand);
		if (rc != TF_ENOTFOUND)
			break;
		if (!first_error)
			first_error = tf_xstrdup(tf_error_last());
	}
	/* a revision git knows: its missing baseline is the news, not the file */
	if (rc == TF_ENOTFOUND && first_error && strncmp(tf_error_last(), "no baseline for ", 16) == 0) {
		char *why = tf_xstrdup(tf_error_last());
		tf_error_set(rc, "%s, and no file of that name: 'testflame baseline list' shows the "
			     "stored ones", why);
		free(why);
	} else if (rc == TF_ENOTFOUND && first_error)
		tf_error_set(rc, "%s (and no baseline is stored for a revision of that name)",
			     first_error);
	free(first_error);
	return rc;
}

/* Load every run of a side into `out` (n slots, freed by the caller). */
static int load_all(tf_profile **out, const char *const *names, size_t n, const char *side)
{
	for (size_t i = 0; i < n; i++) {
		int rc = load_operand(&out[i], names[i]);
		if (rc)
			return rc;
		tf_verbosef("%s run %zu: '%s', %zu samples", side, i + 1, names[i],
			    out[i]->samples.n);
	}
	return 0;
}

/*
 * A run file saved from `run --repeat N` (a baseline) holds N runs: each
 * becomes a run of its side, named "FILE run I". Replaces *pp and *names
 * (n entries) with the expanded arrays; the new names go to `owned`.
 */
static void expand_runs(tf_profile ***pp, const char ***names, size_t *n, size_t *cap,
			char ***owned, size_t *nowned)
{
	size_t total = 0, k = 0;
	for (size_t i = 0; i < *n; i++)
		total += tf_profile_count_runs((*pp)[i]);
	if (total == *n)
		return;
	tf_profile **np = tf_xcalloc(total, sizeof(*np));
	const char **nn = tf_xcalloc(total, sizeof(*nn));
	*owned = tf_xrealloc(*owned, (*nowned + total) * sizeof(char *));
	for (size_t i = 0; i < *n; i++) {
		tf_profile **parts;
		size_t nparts;
		if (tf_profile_count_runs((*pp)[i]) == 1) {
			np[k] = (*pp)[i];
			nn[k++] = (*names)[i];
			continue;
		}
		tf_profile_split_runs(&parts, &nparts, (*pp)[i]);
		tf_verbosef("'%s' holds %zu runs", (*names)[i], nparts);
		for (size_t j = 0; j < nparts; j++) {
			char *nm = tf_xasprintf("%s run %zu", (*names)[i], j + 1);
			(*owned)[(*nowned)++] = nm;
			np[k] = parts[j];
			nn[k++] = nm;
		}
		free(parts);
		tf_profile_free((*pp)[i]);
	}
	free(*pp);
	free(*names);
	*pp = np;
	*names = nn;
	*n = *cap = total;
}

static int write_report(const tf_comparison *c, const char *dir, const char *suite,
			bool colorblind)
{
	tf_report_opts ro;
	struct timespec c0, c1;
	uint64_t t0 = tf_now_ns();
	int rc;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	tf_report_opts_init(&ro);
	ro.dir = dir;
	ro.suite = suite;
	ro.colorblind = colorblind;
	rc = tf_report_write(c, &ro);
	if (!rc) {
		tf_notef("wrote %s/report.json and the report (index.html, report.md, junit.xml, ...)", dir);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		tf_verbosef("report written in %.1f ms (%.1f ms of CPU)", (double)(tf_now_ns() - t0) / 1e6,
			    (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6);
	}
	return rc;
}

int cmd_compare(int argc, char **argv)
{
	struct tf_strlist bases = { { 0 } }, heads = { { 0 } };
	const char *value = NULL, *test = NULL, *colour = "auto", *config = NULL;
	tf_settings_flags flags = { 0 };
	tf_settings set;
	tf_config *cfg = NULL;
	bool json = false, all = false, quiet = false, colorblind = false;
	int verbose = 0, npos, rc, exit_code = TF_EXIT_ERROR;
	tf_profile **base_p = NULL, **head_p = NULL;
	TF_VEC(const char *) base_n = { 0 }, head_n = { 0 };
	char **owned = NULL;
	size_t nowned = 0;
	tf_comparison *c = NULL;
	tf_buf js = TF_BUF_INIT;

	const tf_option opts[] = {
		TF_OPT_GROUP("What to compare"),
		TF_OPT_LIST(0, "base", &bases, "FILE", "another base run (repeat for more runs)"),
		TF_OPT_LIST(0, "head", &heads, "FILE", "another head run (repeat for more runs)"),
		TF_OPT_STRING(0, "value", &value, "TYPE", "sample type to compare (default: the event column)"),
		TF_OPT_STRING(0, "test", &test, "NAME", "compare only this test"),
		TF_OPT_STRING(0, "store", &flags.store, "SPEC", "where revisions' baselines are (default: store: in .testflame.yml, else $TESTFLAME_STORE, else git)"),
		TF_OPT_STRING(0, "suite", &rev_suite, "NAME", "the suite: a revision's run file of it, and the report's name (default: from the run files)"),
		TF_OPT_STRING(0, "kind", &rev_kind, "KIND", "for a revision: its run file of this runner kind"),
		TF_OPT_GROUP("The gate (default: gate: in .testflame.yml)"),
		TF_OPT_STRING(0, "threshold", &flags.threshold, "PCT", "minimum change that counts, percent (default 5)"),
		TF_OPT_STRING(0, "alpha", &flags.alpha, "P", "false-alarm rate across all tests (default 0.001)"),
		TF_OPT_STRING(0, "noise", &flags.noise, "PCT", "run-to-run noise of one run, percent (default: by event)"),
		TF_OPT_STRING(0, "min-delta", &flags.min_delta, "TIME", "least change of a test's time a run that counts (default 1ms; 0: none)"),
		TF_OPT_STRING(0, "measure", &flags.measure, "WHAT", "judge tests by their CPU time and their waits apart (both, the default), by CPU alone, or by wall time", .choices = tf_gate_measure_names),
		TF_OPT_STRING(0, "config", &config, "FILE", "the config file (default: .testflame.yml at the repository root)"),
		TF_OPT_GROUP("Output"),
		TF_OPT_STRING(0, "report", &flags.report_dir, "DIR", "write the report into DIR (default testflame-report)"),
		TF_OPT_FLAG(0, "colorblind", &colorblind, "orange/blue instead of red/blue in the flame graphs"),
		TF_OPT_FLAG(0, "json", &json, "print report.json instead of the table"),
		TF_OPT_FLAG(0, "all", &all, "list unchanged tests too"),
		TF_OPT_STRING(0, "color", &colour, "WHEN", "colour the table", .choices = tf_cli_colour_choices),
		TF_OPT_QUIET(&quiet, "only errors on stderr"),
		TF_OPT_VERBOSE(&verbose, "say more"),
		TF_OPTS_END,
	};

	npos = tf_parse_options(argc, argv, opts, usage, 0, NULL);
	if (npos == -2)
		return TF_EXIT_OK;
	if (npos < 0)
		return TF_EXIT_USAGE;
	tf_cli_verbosity = quiet ? TF_CLI_ERRORS : verbose;
	if (npos != 1 && npos != 3) {
		exit_code = tf_usage_error(usage, npos == 2 ? "missing HEAD (compare needs BASE and HEAD)"
						    : "too many arguments: '%s'", npos > 3 ? argv[3] : "");
		goto done;
	}
	if (npos == 1 && (!bases.items.n || !heads.items.n)) {
		exit_code = tf_usage_error(usage, "nothing to compare: give BASE and HEAD, or --base and --head");
		goto done;
	}
	if (tf_settings_check_flags(&flags)) {
		exit_code = tf_usage_error(usage, "%s", tf_error_last());
		goto done;
	}
	/* the gate `run` judges with: flags over .testflame.yml over defaults */
	if ((rc = tf_run_config_load(&cfg, config)) ||
	    (rc = tf_settings_resolve(&set, &flags, cfg, environ))) {
		exit_code = tf_fail(rc);
		goto done;
	}
	rev_store = set.store;
	rev_cfg = cfg;

	if (npos == 3) {
		tf_vec_push(&base_n, argv[1]);
		tf_vec_push(&head_n, argv[2]);
	}
	for (size_t i = 0; i < bases.items.n; i++)
		tf_vec_push(&base_n, bases.items.v[i]);
	for (size_t i = 0; i < heads.items.n; i++)
		tf_vec_push(&head_n, heads.items.v[i]);
	base_p = tf_xcalloc(base_n.n, sizeof(tf_profile *));
	head_p = tf_xcalloc(head_n.n, sizeof(tf_profile *));
	if ((rc = load_all(base_p, base_n.v, base_n.n, "base")) ||
	    (rc = load_all(head_p, head_n.v, head_n.n, "head"))) {
		exit_code = tf_fail(rc);
		goto done;
	}
	expand_runs(&base_p, &base_n.v, &base_n.n, &base_n.cap, &owned, &nowned);
	expand_runs(&head_p, &head_n.v, &head_n.n, &head_n.cap, &owned, &nowned);

	{
		tf_compare_opts co;
		tf_compare_side bs = { (const tf_profile *const *)base_p, base_n.v, base_n.n };
		tf_compare_side hs = { (const tf_profile *const *)head_p, head_n.v, head_n.n };
		tf_compare_opts_init(&co);
		tf_compare_opts_set(&co, &set);
		co.value = value;
		co.test = test;
		if ((rc = tf_compare(&c, &bs, &hs, &co))) {
			exit_code = tf_fail(rc);
			goto done;
		}
	}

	if ((rc = tf_comparison_to_json(&js, c)) ||
	    (rc = write_report(c, set.report_dir, rev_suite, colorblind))) {
		exit_code = tf_fail(rc);
		goto done;
	}
	if (json)
		fwrite(js.ptr, 1, js.len, stdout);
	else if ((rc = tf_cli_print_table(c, set.report_dir, colour, all))) {
		exit_code = tf_fail(rc);
		goto done;
	}
	if (fflush(stdout) != 0) {
		tf_errorf("cannot write the output");
		goto done;
	}
	exit_code = tf_comparison_regressed(c) && set.fail_on_regression ? TF_EXIT_REGRESSION
									 : TF_EXIT_OK;

done:
	tf_comparison_free(c);
	for (size_t i = 0; base_p && i < base_n.n; i++)
		tf_profile_free(base_p[i]);
	for (size_t i = 0; head_p && i < head_n.n; i++)
		tf_profile_free(head_p[i]);
	free(base_p);
	free(head_p);
	tf_vec_free(&base_n);
	tf_vec_free(&head_n);
	for (size_t i = 0; i < nowned; i++)
		free(owned[i]);
	free(owned);
	tf_vec_free(&bases.items);
	tf_vec_free(&heads.items);
	tf_buf_free(&js);
	tf_config_free(cfg);
	return exit_code;
}
