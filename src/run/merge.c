/*
 * merge.c - `testflame merge`, the fan-in job of a suite split across
 * parallel CI jobs (SPEC §2, §13). Each shard job ran `testflame run
 * --shard K/N` and left a run file tagged with its shard (the report
 * directory, which CI passes on as an artifact, or the dir: store); this
 * job takes them all, checks that they are every shard of one suite at one
 * commit exactly once and merges them test by test (store/shards.c), then
 * does what `run` does after recording: the merge-base's baseline, one
 * comparison, one report directory, one comment and set of annotations,
 * the gate, and on the default branch the merged run kept as the baseline
 * (one push, from one job).
 *
 * A test that looks slower is confirmed here as `run` confirms it
 * (gate.confirm, --confirm) when this job can run the suite: the config
 * names its `command` and the `build` that makes it runnable (or
 * gate.confirm asks for reruns of a tree the job built itself). This tree
 * is built, then the merge-base is built beside it and both are run whole,
 * alternately, on this runner (or this tree is run again); one run per
 * shard is the noisiest of verdicts, and this is what decides it. Without
 * them, the shards' runs are judged as recorded (with the runs a shard
 * repeated, --repeat), and the report says so. A shard whose suite failed
 * is merged, named, and fails the merge with its exit status, as a failing
 * suite fails `run`; no baseline is kept of it.
 */
#include "run/run_int.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

extern char **environ;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Shard files under `dir` (CI artifacts unpack one directory per job). */
static void find_shard_files(tf_run_paths *out, const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	tf_run_paths here = { 0 };

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		if (de->d_name[0] == '.')
			continue;
		char *path = tf_xasprintf("%s/%s", dir, de->d_name);
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < 4)
			find_shard_files(&here, path, depth + 1);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
		    tf_run_is_shard_file_name(de->d_name)) {
			tf_vec_push(&here, path);
			path = NULL;
		}
		free(path);
	}
	closedir(d);
	if (here.n)
		qsort(here.v, here.n, sizeof(*here.v), cmp_str);
	for (size_t i = 0; i < here.n; i++)
		tf_vec_push(out, here.v[i]);
	tf_vec_free(&here);
}

int tf_run_merge_files(tf_run_paths *out, tf_run_opts *o, char *const *args, size_t nargs)
{
	struct stat st;

	for (size_t i = 0; i < nargs; i++) {
		size_t before = out->n;
		if (stat(args[i], &st) != 0)
			return tf_error_set(TF_EUSAGE, "cannot read '%s': no such file or directory",
					    args[i]);
		if (!S_ISDIR(st.st_mode)) {
			tf_vec_push(out, tf_xstrdup(args[i]));
			continue;
		}
		find_shard_files(out, args[i], 0);
		if (out->n == before)
			return tf_error_set(TF_EUSAGE, "no shard run files (shard-K-of-N.pb.gz) in '%s'",
					    args[i]);
	}
	if (nargs > 0)
		return 0;
	find_shard_files(out, o->set.report_dir, 0);
	if (out->n)
		return 0;
	/* the dir: store keeps the shards of HEAD apart */
	tf_store *store = NULL;
	char *dir = NULL;
	if (o->rec.ctx->commit &&
	    tf_run_store_open(&store, o->flags.store, o->rec.cfg, o->remote, o->rec.io) == 0 &&
	    tf_store_shard_dir(&dir, store, o->rec.ctx->commit) == 0)
		find_shard_files(out, dir, 0);
	tf_error_clear();
	tf_store_free(store);
	if (!out->n)
		tf_error_set(TF_EUSAGE, "no shard run files in '%s'%s%s%s: give the shards' files "
			     "or the directories their artifacts were unpacked in",
			     o->set.report_dir, dir ? " nor in '" : "", dir ? dir : "",
			     dir ? "'" : "");
	free(dir);
	return out->n ? 0 : TF_EUSAGE;
}

int tf_run_prepare_merge(tf_run_opts *o)
{
	tf_config *cfg = NULL;
	int rc;

	if ((rc = tf_run_config_load(&cfg, o->rec.config)))
		return rc;
	/* a suite to run: this job can confirm what looks slower */
	if (cfg->command_argv && cfg->command_argv[0]) {
		tf_config_free(cfg);
		o->rec.needs_git = true;
		return tf_run_prepare(&o->rec, NULL);
	}
	o->rec.cfg = cfg;
	if (o->rec.target_branch)
		setenv("TESTFLAME_BASE_BRANCH", o->rec.target_branch, 1);
	if ((rc = tf_context_detect(&o->rec.ctx, NULL, environ, cfg)))
		return rc;
	for (size_t i = 0; i < o->rec.ctx->warnings.n; i++)
		tf_run_warn(o->rec.io, "%s", o->rec.ctx->warnings.v[i]);
	return 0;
}

/*
 * Confirm what looks slower in the merged shards, as `run` does, when this
 * job can run the suite (see the top); o->origin says how the head's runs
 * were judged. False when a run could not be recorded (*status says why).
 */
static bool confirm(tf_run_opts *o, const tf_shards_merged *m, const char *start,
		    tf_run_side *base, tf_run_side *head, char commit[TF_STORE_ID_HEX + 1],
		    int *exit_status, int *status)
{
	const tf_config *cfg = o->rec.cfg;
	const char *each = m->nruns > 1 ? "several runs each" : "one run each";
	char *why = NULL;
	int rc;

	*status = TF_EXIT_OK;
	if (o->confirm == TF_CONFIRM_NONE) {
		o->origin = tf_xasprintf("merged from %u shards (%s), judged on their runs as "
					 "recorded (gate.confirm: none)", m->total, each);
		return true;
	}
	if (!o->rec.cmd || (!cfg->build && !o->confirm_asked)) {
		o->origin = tf_xasprintf("merged from %u shards (%s), judged on their runs as "
					 "recorded: with `command:` and `build:` in .testflame.yml "
					 "the merge job would confirm a slowdown on its runner",
					 m->total, each);
		return true;
	}
	if (!(why = tf_run_looks_slower(o, base, head))) {
		o->origin = tf_xasprintf("merged from %u shards (%s); no test looked slower, so "
					 "nothing was run here to confirm", m->total, each);
		return true;
	}
	free(why);
	if (cfg->build) {
		tf_run_note(o->rec.io, "building this tree to confirm in the merge job: %s",
			    cfg->build);
		if ((rc = tf_shell_run(NULL, cfg->build)) != 0) {
			tf_run_warn(o->rec.io, "cannot confirm in the merge job: this tree did not "
				    "build (`%s` exited %d); judging the shards' runs "
				    "as recorded", cfg->build,
				    WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc));
			o->origin = tf_xasprintf("merged from %u shards (%s), judged on their "
						 "runs as recorded: this tree did not build in "
						 "the merge job", m->total, each);
			return true;
		}
	}
	if (!tf_run_confirm(o, start, base, head, commit, exit_status, status))
		return false;
	o->origin = tf_xasprintf("merged from %u shards (%s); a test looked slower, so the "
				 "merge job ran the whole suite on its runner to confirm", m->total,
				 each);
	return true;
}

/* The merged shards against the stored baseline of the merge-base. */
static int judge(tf_run_opts *o, tf_shards_merged *m)
{
	const tf_context *ctx = o->rec.ctx;
	tf_run_side base = { 0 }, head = { 0 };
	tf_store *st = NULL;
	char *start = NULL, *note = NULL, *why = NULL;
	char base_commit[TF_STORE_ID_HEX + 1] = "";
	bool have_base = false;
	int exit_status = 0, status;

	for (size_t i = 0; i < m->nshards; i++) {
		const tf_shard_info *s = &m->shards[i];
		if (s->exit_status && !exit_status)
			exit_status = s->exit_status;
		if (s->exit_status)
			tf_run_error(o->rec.io, "shard %u/%u ('%s'): the suite failed (exit status "
				     "%d); its tests are merged, the merge fails", s->shard.index,
				     s->shard.total, s->name, s->exit_status);
		else if (s->interrupted)
			tf_run_warn(o->rec.io, "shard %u/%u ('%s') was interrupted: its tests "
				    "stopped early", s->shard.index, s->shard.total, s->name);
		if (s->runs != m->nruns)
			tf_run_warn(o->rec.io, "shard %u/%u ('%s') holds %zu runs, the merge the "
				    "%zu every shard has", s->shard.index, s->shard.total, s->name,
				    s->runs, m->nruns);
	}
	for (size_t r = 0; r < m->nruns; r++) {
		tf_run_side_add(&head, m->runs[r],
				m->nruns > 1 ? tf_xasprintf("%u shards, run %zu", m->total, r + 1)
					     : tf_xasprintf("%u shards", m->total));
		m->runs[r] = NULL;
	}
	if (tf_run_store_open(&st, o->flags.store, o->rec.cfg, o->remote, o->rec.io)) {
		tf_run_warn(o->rec.io, "no baselines: %s", tf_error_last());
		why = tf_xstrdup(tf_error_last());
	} else {
		o->store = st;
		o->kind = m->kind;
		start = tf_context_baseline_start(ctx);
		if (!start) {
			tf_run_note(o->rec.io,
				    "no baseline to compare with: no commit history here");
			why = tf_xstrdup("no commit history here");
		} else {
			have_base = tf_run_find_baseline(o, st, start, m->kind, &base, base_commit,
							 &note, &why);
		}
	}
	/* a failing shard fails the merge whatever its times: nothing to confirm */
	if (have_base && !exit_status && !confirm(o, m, start, &base, &head, base_commit,
						  &exit_status, &status))
		goto done;
	status = tf_run_finish(o, st, have_base ? &base : NULL, &head, note, why, base_commit,
			       m->kind, exit_status);
done:
	tf_run_side_free(&base);
	tf_run_side_free(&head);
	tf_store_free(st);
	free(start);
	free(note);
	free(why);
	tf_run_flow_clear(o);
	return status;
}

int tf_run_merge(tf_run_opts *o, char *const *files, size_t n)
{
	TF_VEC(tf_profile *) profiles = { 0 };
	tf_shards_merged m;
	int status, rc;

	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < n; i++) {
		tf_profile *p = NULL;
		if ((rc = tf_profile_load(&p, files[i]))) {
			status = tf_run_fail(o->rec.io, rc);
			goto done;
		}
		tf_vec_push(&profiles, p);
		tf_run_verbose(o->rec.io, "'%s': shard %s", files[i],
			    tf_profile_meta(p, "shard") ? tf_profile_meta(p, "shard") : "(none)");
	}
	if ((rc = tf_shards_merge(&m, (const tf_profile *const *)profiles.v,
				  (const char *const *)files, n))) {
		status = tf_run_fail(o->rec.io, rc);
		goto done;
	}
	if (!m.suite || !m.commit || !m.kind) {
		tf_run_error(o->rec.io, "'%s' names no %s: not a run file of `testflame run "
			     "--shard`", files[0],
			     !m.suite ? "suite" : !m.commit ? "commit" : "event or sampler");
		status = TF_EXIT_USAGE;
		goto done;
	}
	/* the shards' commit is the one this job compares and saves */
	if (o->rec.ctx->commit && strcmp(o->rec.ctx->commit, m.commit) != 0) {
		tf_run_error(o->rec.io, "the shards were recorded at %.12s, but this checkout is "
			     "%.12s: merge them in a job of the same pipeline", m.commit,
			     o->rec.ctx->commit);
		status = TF_EXIT_USAGE;
		goto done;
	}
	o->rec.suite_name = m.suite;
	tf_run_note(o->rec.io, "merged %u shards of '%s' at %.12s", m.total, m.suite, m.commit);
	status = judge(o, &m);
done:
	tf_shards_merged_clear(&m);
	for (size_t i = 0; i < profiles.n; i++)
		tf_profile_free(profiles.v[i]);
	tf_vec_free(&profiles);
	return status;
}
