/*
 * runs.c - the store's run files as profiles, for a run that compares with
 * its baseline: the nearest baseline found and split into the runs it
 * holds (a baseline saved from `run --repeat N` keeps its N runs apart),
 * the baselines before it (each test's noise is learned from them), and a
 * run, or several, saved as a commit's baseline.
 */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

/* Gzip level of the run files saved here: smaller than a recording's own
 * level 1, since a baseline is written once and fetched many times. */
#define SAVE_GZIP_LEVEL 6

static void drop_profiles(tf_store_found *f)
{
	for (size_t i = 0; i < f->nruns; i++)
		tf_profile_free(f->runs[i]);
	free(f->runs);
	tf_profile_free(f->stored);
	f->runs = NULL;
	f->nruns = 0;
	f->stored = NULL;
}

void tf_store_found_clear(tf_store_found *f)
{
	if (!f)
		return;
	drop_profiles(f);
	free(f->subject);
	memset(f, 0, sizeof(*f));
}

/* The run file of (commit, suite, kind), decoded. */
static int read_run_file(tf_profile **out, tf_store *s, const char *commit, const char *suite,
			 const char *kind)
{
	tf_buf bytes = TF_BUF_INIT;
	int rc = tf_store_get(&bytes, s, commit, suite, kind);

	*out = NULL;
	if (!rc)
		rc = tf_pprof_decode(out, bytes.ptr, bytes.len);
	tf_buf_free(&bytes);
	return rc;
}

int tf_store_read_runs(tf_store_found *out, tf_store *s, const tf_store_match *m,
		       const char *suite, const char *kind)
{
	tf_baseline b;
	int rc;

	memset(out, 0, sizeof(*out));
	out->match = *m;
	rc = read_run_file(&out->stored, s, m->commit, suite, kind);
	if (!rc)
		rc = tf_profile_split_runs(&out->runs, &out->nruns, out->stored);
	if (rc) {
		/* found by the walk, gone or corrupt when read: not "no baseline" */
		drop_profiles(out);
		return tf_error_wrap(rc == TF_ENOTFOUND ? TF_EINVAL : rc,
				     "the baseline of %.12s cannot be read", m->commit);
	}
	if (tf_store_show(&b, s, m->commit) == 0 && b.subject) {
		out->subject = b.subject;
		b.subject = NULL;
	}
	tf_baseline_clear(&b);
	tf_error_clear();
	return 0;
}

int tf_store_find_runs(tf_store_found *out, tf_store *s, const char *start_rev, const char *suite,
		       const char *kind, const tf_store_resolve_opts *opts)
{
	tf_store_match m;
	int rc = tf_store_resolve(&m, s, start_rev, suite, kind, opts);

	if (rc) {
		memset(out, 0, sizeof(*out));
		out->match = m;
		return rc;
	}
	return tf_store_read_runs(out, s, &m, suite, kind);
}

size_t tf_store_history(tf_profile ***out, tf_store *s, const char *before, const char *suite,
			const char *kind, size_t max, const tf_store_resolve_opts *opts)
{
	TF_VEC(tf_profile *) runs = { 0 };
	tf_store_resolve_opts ro = { 0, false };
	char *next = tf_xasprintf("%s^", before);

	if (opts)
		ro = *opts;
	/* a baseline per commit is usual; a gap of 50 commits ends the history */
	ro.max_depth = 50;
	while (runs.n < max) {
		tf_store_match m;
		tf_profile *p;
		if (tf_store_resolve(&m, s, next, suite, kind, &ro) != 0 ||
		    read_run_file(&p, s, m.commit, suite, kind) != 0)
			break;
		tf_vec_push(&runs, p);
		free(next);
		next = tf_xasprintf("%s^", m.commit);
	}
	free(next);
	tf_error_clear();
	*out = runs.v;
	return runs.n;
}

int tf_store_save_runs(tf_store *s, const char *rev, const char *suite, const char *kind,
		       const tf_profile *const *runs, size_t n)
{
	tf_buf bytes = TF_BUF_INIT;
	tf_profile *joined = NULL;
	int rc;

	if (!n)
		return tf_error_set(TF_EUSAGE, "no run to save as the baseline of '%s'", rev);
	/* several runs of one commit: one run file that keeps them apart */
	rc = n > 1 ? tf_profile_join_runs(&joined, runs, n) : 0;
	if (!rc)
		rc = tf_pprof_encode(&bytes, joined ? joined : runs[0], SAVE_GZIP_LEVEL);
	if (!rc)
		rc = tf_store_save(s, rev, suite, kind, bytes.ptr, bytes.len);
	tf_profile_free(joined);
	tf_buf_free(&bytes);
	return rc;
}
