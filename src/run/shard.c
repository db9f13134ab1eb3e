/*
 * shard.c - `run --shard K/N` (or the CI's own parallel jobs): which shard
 * a job is, recording it into one run file tagged with its shard (the
 * report directory, and the dir: store's shard files), and the names of
 * shard files that `merge` looks for.
 *
 * A shard job stops after recording. Comparing one part of a suite with
 * a baseline of the whole would call every test the part did not run
 * "gone", one comment per job would bury the PR, and jobs saving
 * baselines of the same commit at once would race on its ref: the fan-in
 * job (`merge`) does all of that once.
 */
#include "run/run_int.h"

#include <stdlib.h>
#include <string.h>

char *tf_run_shard_file_name(tf_shard s)
{
	return tf_xasprintf("shard-%u-of-%u.pb.gz", s.index, s.total);
}

bool tf_run_is_shard_file_name(const char *name)
{
	const char *sh = strstr(name, "shard-");
	size_t len = strlen(name);
	return sh && strstr(sh, "-of-") && len > 6 && strcmp(name + len - 6, ".pb.gz") == 0;
}

void tf_run_shard_from_ci(tf_run_opts *o)
{
	const tf_ci *ci = o->rec.ctx->ci;

	if (!ci || ci->shard_total < 2)
		return;
	o->shard.index = ci->shard_index;
	o->shard.total = ci->shard_total;
	tf_run_note(o->rec.io, "this is job %u of %u that %s runs in parallel: recording shard "
		    "%u/%u (--no-shard for the whole suite)", ci->shard_index, ci->shard_total,
		    tf_ci_provider_name(ci->provider), ci->shard_index, ci->shard_total);
}

/* The dir: store keeps shard files too, where a later job finds them. */
static void keep_in_store(tf_run_opts *o, const tf_profile *p, const char *kind)
{
	const char *spec = o->set.store;
	tf_store_spec sp;
	tf_store *st = NULL;
	tf_buf bytes = TF_BUF_INIT;
	char *dir = NULL;

	if (!spec || tf_store_spec_parse(&sp, spec) || sp.kind != TF_STORE_SPEC_DIR) {
		tf_error_clear();
		return;
	}
	if (!o->rec.ctx->commit)
		tf_run_warn(o->rec.io, "not keeping the shard in the dir store: no commit to file "
			    "it under");
	else if (tf_run_store_open(&st, o->flags.store, o->rec.cfg, o->remote, o->rec.io) ||
		 tf_pprof_encode(&bytes, p, 6) ||
		 tf_store_save_shard(st, o->rec.ctx->commit, o->rec.suite_name, kind, o->shard,
				     bytes.ptr, bytes.len))
		tf_run_warn(o->rec.io, "%s", tf_error_last());
	else if (tf_store_shard_dir(&dir, st, o->rec.ctx->commit) == 0)
		tf_run_note(o->rec.io, "kept shard %u/%u in '%s'", o->shard.index, o->shard.total,
			    dir);
	free(dir);
	tf_buf_free(&bytes);
	tf_store_free(st);
}

int tf_run_shard(tf_run_opts *o)
{
	tf_run_side head = { 0 };
	TF_VEC(const tf_profile *) ps = { 0 };
	tf_profile *joined = NULL;
	char spec[32], num[16], *name = NULL, *path = NULL, *kind = NULL;
	int exit_status = 0, status = TF_EXIT_OK;

	tf_shard_format(spec, sizeof(spec), o->shard);
	snprintf(num, sizeof(num), "%u", o->shard.index);
	setenv("TESTFLAME_SHARD_INDEX", num, 1);
	snprintf(num, sizeof(num), "%u", o->shard.total);
	setenv("TESTFLAME_SHARD_TOTAL", num, 1);
	if (!tf_run_record_head(&head, o, o->repeat, &exit_status, &status))
		goto done;
	for (size_t i = 0; i < head.runs.n; i++) {
		tf_profile_set_meta(head.runs.v[i].profile, "shard", spec);
		tf_vec_push(&ps, head.runs.v[i].profile);
	}
	status = TF_EXIT_ERROR;
	/* --repeat: one file that keeps the runs apart, as a baseline does */
	if (ps.n > 1 && tf_profile_join_runs(&joined, ps.v, ps.n)) {
		tf_run_fail(o->rec.io, TF_ERROR);
		goto done;
	}
	name = tf_run_shard_file_name(o->shard);
	path = tf_xasprintf("%s/%s", o->set.report_dir, name);
	if (tf_mkdir_p(o->set.report_dir, 0777) || tf_pprof_write(joined ? joined : ps.v[0], path)) {
		tf_run_fail(o->rec.io, TF_ERROR);
		goto done;
	}
	kind = tf_run_kind(&head.runs.v[0]);
	tf_run_print(o->rec.io, "shard %s of '%s': %llu samples in %zu run%s, written to %s; "
		     "`testflame merge` compares the whole suite\n", spec, o->rec.suite_name,
		     (unsigned long long)head.runs.v[0].stats.samples, head.runs.n,
		     head.runs.n == 1 ? "" : "s", path);
	keep_in_store(o, joined ? joined : ps.v[0], kind);
	if (exit_status)
		tf_run_warn(o->rec.io, "the suite's shard %s failed (exit status %d): `testflame "
			    "merge` will say so", spec, exit_status);
	status = exit_status;
done:
	tf_run_side_free(&head);
	tf_vec_free(&ps);
	tf_profile_free(joined);
	free(name);
	free(path);
	free(kind);
	return status;
}
