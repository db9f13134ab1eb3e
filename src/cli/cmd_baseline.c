/*
 * cmd_baseline.c - `testflame baseline list|show|save|fetch|push|prune`:
 * look after the stored baselines by hand (or from a CI script) with the
 * same store and naming `testflame run` uses. Each subcommand has its own
 * option table, git style; the work is all in the store module.
 */
#include "cli_int.h"
#include "testflame/profile.h"
#include "testflame/store.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
	const char *store, *remote, *suite, *kind, *commit;
	long keep;
	bool keep_seen, remote_seen, quiet;
	int verbose;
} o;

#define OPT_STORE TF_OPT_STRING(0, "store", &o.store, "SPEC", \
	"git, git:REMOTE, dir:PATH or pyroscope:URL (default: store: in .testflame.yml, else $TESTFLAME_STORE, else git)")
#define OPT_REMOTE TF_OPT_STRING(0, "remote", &o.remote, "NAME", \
	"remote name or URL (default: origin, or the one in git:REMOTE)", .seen = &o.remote_seen)
#define OPT_SUITE(h) TF_OPT_STRING(0, "suite", &o.suite, "NAME", h)
#define OPT_KIND(h) TF_OPT_STRING(0, "kind", &o.kind, "KIND", h)
#define OPT_QUIET TF_OPT_QUIET(&o.quiet, "only errors")
#define OPT_VERBOSE TF_OPT_VERBOSE(&o.verbose, "say which store and remote are used")

#define USAGE_LIST "testflame baseline list [--suite NAME] [--kind KIND] [--remote NAME] [--store SPEC]"
#define USAGE_SHOW "testflame baseline show [--store SPEC] [REV]"
#define USAGE_SAVE "testflame baseline save [--commit REV] [--suite NAME] [--kind KIND] [--store SPEC] FILE"
#define USAGE_FETCH "testflame baseline fetch [--remote NAME] [--store SPEC] [REV...]"
#define USAGE_PUSH "testflame baseline push [--remote NAME] [--store SPEC] [REV...]"
#define USAGE_PRUNE "testflame baseline prune --keep N [--store SPEC]"

static const char *const usage_all[] = {
	USAGE_LIST, USAGE_SHOW, USAGE_SAVE, USAGE_FETCH, USAGE_PUSH, USAGE_PRUNE, NULL,
};
static const char *const usage_list[] = { USAGE_LIST, NULL };
static const char *const usage_show[] = { USAGE_SHOW, NULL };
static const char *const usage_save[] = { USAGE_SAVE, NULL };
static const char *const usage_fetch[] = { USAGE_FETCH, NULL };
static const char *const usage_push[] = { USAGE_PUSH, NULL };
static const char *const usage_prune[] = { USAGE_PRUNE, NULL };
/* the current subcommand's, for usage errors */
static const char *const *usage = usage_all;

static const tf_option list_opts[] = {
	OPT_STORE,
	OPT_SUITE("only this suite"),
	OPT_KIND("only this runner kind"),
	TF_OPT_STRING(0, "remote", &o.remote, "NAME", "list the baselines on this remote instead",
		      .seen = &o.remote_seen),
	OPT_QUIET, OPT_VERBOSE, TF_OPTS_END,
};
static const tf_option show_opts[] = { OPT_STORE, OPT_QUIET, OPT_VERBOSE, TF_OPTS_END };
static const tf_option save_opts[] = {
	OPT_STORE,
	TF_OPT_STRING(0, "commit", &o.commit, "REV", "the commit it is the baseline of (default HEAD)"),
	OPT_SUITE("suite name (default: the file's testflame.suite)"),
	OPT_KIND("runner kind EVENT-SAMPLER-ARCH (default: from the file's metadata)"),
	OPT_QUIET, OPT_VERBOSE, TF_OPTS_END,
};
static const tf_option sync_opts[] = { OPT_STORE, OPT_REMOTE, OPT_QUIET, OPT_VERBOSE, TF_OPTS_END };
static const tf_option prune_opts[] = {
	OPT_STORE,
	TF_OPT_INT(0, "keep", &o.keep, "N", "how many of the newest baselines to keep", 0, 1000000000,
		   .seen = &o.keep_seen),
	OPT_QUIET, OPT_VERBOSE, TF_OPTS_END,
};

static void format_time(char *buf, size_t n, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, n, "%-16s", "-");
}

static int open_store(tf_store **st)
{
	int rc = tf_run_store_open(st, o.store, NULL, o.remote_seen ? o.remote : NULL,
				   &tf_cli_notices);

	if (rc)
		return tf_fail(rc);
	tf_verbosef("using the %s", tf_store_describe(*st));
	return 0;
}

static bool wanted(const tf_baseline_file *f)
{
	return (!o.suite || strcmp(o.suite, f->suite) == 0) &&
	       (!o.kind || strcmp(o.kind, f->kind) == 0);
}

static int list_remote(tf_store *st)
{
	tf_remote_baseline_list rl;
	const char *url = tf_store_remote_url(st);
	int rc;

	tf_verbosef("listing the baselines of '%s'", url ? url : o.remote);
	if ((rc = tf_store_remote_list(&rl, st)))
		return tf_fail(rc);
	for (size_t i = 0; i < rl.items.n; i++) {
		tf_baseline b;
		const char *here = "absent here";
		if (tf_store_show(&b, st, rl.items.v[i].commit) == 0) {
			here = strcmp(b.record, rl.items.v[i].oid) == 0 ? "same here" : "differs here";
			tf_baseline_clear(&b);
		}
		printf("%s  %.12s  %s\n", rl.items.v[i].commit, rl.items.v[i].oid, here);
	}
	if (!rl.items.n)
		tf_notef("no baselines on '%s'", url ? url : o.remote);
	tf_vec_free(&rl.items);
	return TF_EXIT_OK;
}

static int sub_list(tf_store *st)
{
	tf_baseline_list l;
	size_t shown = 0, bad = 0;
	int rc;

	if (o.remote_seen)
		return list_remote(st);
	if ((rc = tf_store_list(&l, st)))
		return tf_fail(rc);
	for (size_t i = 0; i < l.items.n; i++) {
		const tf_baseline *b = &l.items.v[i];
		char date[32];

		if (b->problem) {
			tf_errorf("baseline of %.12s is unreadable: %s", b->commit, b->problem);
			bad++;
			continue;
		}
		format_time(date, sizeof(date), b->commit_time ? b->commit_time : b->record_time);
		for (size_t j = 0; j < b->files.n; j++) {
			const tf_baseline_file *f = &b->files.v[j];
			if (!wanted(f))
				continue;
			printf("%.12s  %s  %-12s  %-28s  %10llu\n", b->commit, date, f->suite, f->kind,
			       (unsigned long long)f->size);
			shown++;
		}
	}
	if (!shown && !bad)
		tf_notef("no baselines%s in the %s", o.suite || o.kind ? " of that suite and kind" : "",
			 tf_store_describe(st));
	tf_baseline_list_free(&l);
	return bad ? TF_EXIT_ERROR : TF_EXIT_OK;
}

static int sub_show(tf_store *st, int argc, char **argv)
{
	const char *rev = argc > 1 ? argv[1] : "HEAD";
	tf_baseline b;
	char date[32];
	int rc;

	if ((rc = tf_store_show(&b, st, rev)))
		return tf_fail(rc);
	format_time(date, sizeof(date), b.commit_time);
	printf("commit    %s  %s  %s\n", b.commit, date, b.subject ? b.subject : "(not in this repository)");
	format_time(date, sizeof(date), b.record_time);
	if (b.record[0])
		printf("recorded  %.12s  %s  (%s%s)\n", b.record, date, TF_STORE_REF_PREFIX, b.commit);
	else
		printf("recorded  %s  (%s)\n", date, tf_store_describe(st));
	for (size_t i = 0; i < b.files.n; i++)
		printf("  %-16s  %-28s  %10llu bytes  %s\n", b.files.v[i].suite, b.files.v[i].kind,
		       (unsigned long long)b.files.v[i].size, b.files.v[i].path);
	tf_baseline_clear(&b);
	return TF_EXIT_OK;
}

/* The bytes to store: a gzip pprof as it is, anything else re-encoded. */
static int run_file_bytes(tf_buf *out, const tf_profile *p, const char *path)
{
	tf_buf raw = TF_BUF_INIT, plain = TF_BUF_INIT;
	int rc = tf_file_read(&raw, path);

	if (rc)
		return rc;
	if (tf_is_gzip(raw.ptr, raw.len) && tf_gunzip(&plain, raw.ptr, raw.len, path) == 0 &&
	    tf_profile_sniff(plain.ptr, plain.len) == TF_FORMAT_PPROF) {
		*out = raw;
		tf_buf_free(&plain);
		return 0;
	}
	tf_buf_free(&raw);
	tf_buf_free(&plain);
	return tf_pprof_encode(out, p, 6);
}

static int sub_save(tf_store *st, char **argv)
{
	char commit[TF_STORE_ID_HEX + 1];
	const char *file, *suite, *rec;
	char *kind = NULL;
	tf_profile *p = NULL;
	tf_buf bytes = TF_BUF_INIT;
	int rc, ret = TF_EXIT_ERROR;

	file = argv[1];
	if ((rc = tf_profile_load(&p, file)))
		return tf_fail(rc);
	suite = o.suite ? o.suite : tf_profile_meta(p, "suite");
	if (!suite || !*suite) {
		tf_profile_free(p);
		return tf_usage_error(usage, "'%s' does not name its suite (no testflame.suite): pass --suite",
				      file);
	}
	kind = o.kind ? tf_xstrdup(o.kind)
		      : tf_store_kind(tf_profile_meta(p, "event"), tf_profile_meta(p, "sampler"),
				      tf_profile_meta(p, "arch"));
	if (!kind) {
		tf_profile_free(p);
		return tf_usage_error(usage,
			"cannot tell the runner kind of '%s' (no testflame.event/sampler): pass --kind", file);
	}
	if ((rc = tf_store_rev(commit, st, o.commit ? o.commit : "HEAD"))) {
		ret = tf_fail(rc);
		goto done;
	}
	rec = tf_profile_meta(p, "commit");
	if (!o.commit && rec && *rec && strcmp(rec, commit) != 0)
		tf_warnf("'%s' was recorded at %.12s; saving it as the baseline of HEAD (%.12s)", file,
			 rec, commit);
	if ((rc = run_file_bytes(&bytes, p, file)) ||
	    (rc = tf_store_save(st, commit, suite, kind, bytes.ptr, bytes.len))) {
		ret = tf_fail(rc);
		goto done;
	}
	tf_notef("saved '%s' as the baseline of %.12s (suite '%s', kind '%s') in the %s", file, commit,
		 suite, kind, tf_store_describe(st));
	ret = TF_EXIT_OK;
done:
	free(kind);
	tf_buf_free(&bytes);
	tf_profile_free(p);
	return ret;
}

static int sub_sync(tf_store *st, int argc, char **argv, bool push)
{
	const char *head = "HEAD";
	const char *const *revs = argc > 1 ? (const char *const *)argv + 1 : &head;
	size_t n = argc > 1 ? (size_t)argc - 1 : 1;
	const char *url;
	tf_store_sync_list res;
	int rc, ret = TF_EXIT_OK;

	url = tf_store_remote_url(st);
	if (url)
		tf_verbosef("remote '%s'", url);
	rc = push ? tf_store_push(&res, st, revs, n) : tf_store_fetch(&res, st, revs, n);
	for (size_t i = 0; i < res.items.n; i++) {
		const tf_store_sync *it = &res.items.v[i];
		if (it->status == TF_SYNC_MISSING) {
			if (push)
				tf_errorf("no local baseline for %.12s to push", it->commit);
			else if (!rc)
				tf_errorf("'%s' has no baseline for %.12s", url ? url : "the remote", it->commit);
			ret = TF_EXIT_ERROR;
			continue;
		}
		if (rc)
			continue; /* the error says what happened; nothing is "pushed" */
		char extra[160] = "";
		if (it->conflicts)
			snprintf(extra, sizeof(extra), " (%u file%s of the same suite and kind differed; kept %s)",
				 it->conflicts, it->conflicts == 1 ? "" : "s",
				 push ? "the remote's" : "the local one");
		tf_notef("%s %.12s: %s%s%s", push ? "pushed" : "fetched", it->commit,
			 tf_sync_status_name(it->status), extra,
			 it->attempts > 1 ? " (after retrying: another writer was first)" : "");
	}
	tf_store_sync_list_free(&res);
	if (rc)
		return tf_fail(rc);
	return ret;
}

static int sub_prune(tf_store *st)
{
	tf_baseline_list removed;
	int rc;

	rc = tf_store_prune(&removed, st, (size_t)o.keep);
	for (size_t i = 0; i < removed.items.n; i++) {
		char date[32];
		const tf_baseline *b = &removed.items.v[i];
		format_time(date, sizeof(date), b->commit_time ? b->commit_time : b->record_time);
		tf_notef("pruned %.12s (%s)", b->commit, date);
	}
	tf_notef("removed %zu baseline%s", removed.items.n, removed.items.n == 1 ? "" : "s");
	tf_baseline_list_free(&removed);
	return rc ? tf_fail(rc) : TF_EXIT_OK;
}

int cmd_baseline(int argc, char **argv)
{
	static const struct {
		const char *name;
		const tf_option *opts;
		const char *const *usage;
	} subs[] = {
		{ "list", list_opts, usage_list }, { "show", show_opts, usage_show },
		{ "save", save_opts, usage_save }, { "fetch", sync_opts, usage_fetch },
		{ "push", sync_opts, usage_push }, { "prune", prune_opts, usage_prune },
	};
	const tf_option *opts = NULL;
	const char *sub;
	tf_store *st = NULL;
	int n, ret;

	usage = usage_all;
	if (argc < 2)
		return tf_usage_error(usage, "'baseline' needs a subcommand (list, show, save, fetch, push, prune)");
	sub = argv[1];
	if (strcmp(sub, "-h") == 0 || strcmp(sub, "--help") == 0) {
		tf_usage_print(stdout, usage, NULL);
		fputs("\nA baseline is the run file of a suite and runner kind at a commit, kept in\n"
		      "the repository as refs/testflame/runs/<commit> (or in dir:PATH).\n"
		      "HTTPS remotes authenticate with TESTFLAME_TOKEN, GITHUB_TOKEN or GITLAB_TOKEN.\n"
		      "'testflame baseline SUBCOMMAND --help' lists its options.\n", stdout);
		return TF_EXIT_OK;
	}
	for (size_t i = 0; i < TF_ARRAY_SIZE(subs); i++)
		if (strcmp(subs[i].name, sub) == 0) {
			opts = subs[i].opts;
			usage = subs[i].usage;
		}
	if (!opts)
		return tf_usage_error(usage, "unknown baseline subcommand '%s'", sub);
	memset(&o, 0, sizeof(o));
	n = tf_parse_options(argc - 1, argv + 1, opts, usage, 0, NULL);
	if (n == -2)
		return TF_EXIT_OK;
	if (n < 0)
		return TF_EXIT_USAGE;
	tf_cli_verbosity = o.quiet ? TF_CLI_ERRORS : o.verbose;
	argv++;
	/* usage errors before anything is opened */
	if ((strcmp(sub, "list") == 0 || strcmp(sub, "prune") == 0) && n > 1)
		return tf_usage_error(usage, "'baseline %s' takes no arguments", sub);
	if (strcmp(sub, "show") == 0 && n > 2)
		return tf_usage_error(usage, "'baseline show' takes one revision");
	if (strcmp(sub, "save") == 0 && n != 2)
		return tf_usage_error(usage, n < 2 ? "'baseline save' needs the run file to save"
						   : "'baseline save' takes one run file");
	if (strcmp(sub, "prune") == 0 && !o.keep_seen)
		return tf_usage_error(usage, "'baseline prune' needs --keep N");
	if ((ret = open_store(&st)))
		return ret;
	if (strcmp(sub, "list") == 0)
		ret = sub_list(st);
	else if (strcmp(sub, "show") == 0)
		ret = sub_show(st, n, argv);
	else if (strcmp(sub, "save") == 0)
		ret = sub_save(st, argv);
	else if (strcmp(sub, "fetch") == 0)
		ret = sub_sync(st, n, argv, false);
	else if (strcmp(sub, "push") == 0)
		ret = sub_sync(st, n, argv, true);
	else
		ret = sub_prune(st);
	tf_store_free(st);
	return ret;
}
