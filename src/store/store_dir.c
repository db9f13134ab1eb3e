/*
 * store_dir.c - the "dir:PATH" store: plain files PATH/<commit>/<suite>/
 * <kind>.pb.gz, for CI caches and artifacts that a job restores and saves
 * as a directory. Each file is written to a temporary name and renamed, so
 * a reader (or a cache upload) never sees half of one, and two jobs writing
 * different suites or kinds of one commit touch different files.
 */
#include "store_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int dir_save(tf_store *s, const char *commit, const char *suite_enc,
		    const char *file_enc, const void *data, size_t len)
{
	char *dir = tf_xasprintf("%s/%s/%s", s->dir, commit, suite_enc);
	char *path = tf_xasprintf("%s/%s", dir, file_enc);
	int rc = tf_mkdir_p(dir, 0777);

	if (!rc)
		rc = tf_file_write_atomic(path, data, len);
	free(dir);
	free(path);
	return rc;
}

static int dir_get(tf_buf *out, tf_store *s, const char *commit, const char *suite_enc,
		   const char *file_enc)
{
	char *path = tf_xasprintf("%s/%s/%s/%s", s->dir, commit, suite_enc, file_enc);
	struct stat st;
	int rc = 0;

	if (!out) {
		if (stat(path, &st) != 0)
			rc = tf_error_set_errno(errno == ENOENT || errno == ENOTDIR ? TF_ENOTFOUND
										    : TF_ERROR,
						"cannot read '%s'", path);
	} else {
		tf_buf_clear(out);
		rc = tf_file_read(out, path);
	}
	free(path);
	return rc;
}

static bool is_run_file(const char *name, size_t *stem)
{
	size_t len = strlen(name), sfx = strlen(TF_STORE_FILE_SUFFIX);
	if (name[0] == '.' || len <= sfx || strcmp(name + len - sfx, TF_STORE_FILE_SUFFIX) != 0)
		return false;
	*stem = len - sfx;
	return true;
}

/* Read PATH/<commit>/ into `b` (commit already set). */
static int fill(tf_baseline *b, tf_store *s)
{
	char *cdir = tf_xasprintf("%s/%s", s->dir, b->commit);
	DIR *d = opendir(cdir);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		rc = tf_error_set_errno(errno == ENOENT ? TF_ENOTFOUND : TF_ERROR,
					"cannot read '%s'", cdir);
		free(cdir);
		return rc;
	}
	while ((de = readdir(d))) {
		tf_buf suite = TF_BUF_INIT;
		char *sdir;
		DIR *sd;
		struct dirent *fe;

		if (de->d_name[0] == '.' ||
		    tf_store_decode_name(&suite, de->d_name, strlen(de->d_name))) {
			tf_buf_free(&suite);
			continue;
		}
		sdir = tf_xasprintf("%s/%s", cdir, de->d_name);
		sd = opendir(sdir);
		while (sd && (fe = readdir(sd))) {
			tf_buf kind = TF_BUF_INIT;
			char *fpath;
			struct stat st;
			size_t stem;
			tf_baseline_file f;

			if (!is_run_file(fe->d_name, &stem) ||
			    tf_store_decode_name(&kind, fe->d_name, stem)) {
				tf_buf_free(&kind);
				continue;
			}
			fpath = tf_xasprintf("%s/%s", sdir, fe->d_name);
			if (stat(fpath, &st) != 0 || !S_ISREG(st.st_mode)) {
				free(fpath);
				tf_buf_free(&kind);
				continue;
			}
			f.suite = tf_xstrdup(suite.ptr);
			f.kind = tf_buf_detach(&kind);
			f.path = fpath;
			f.size = (uint64_t)st.st_size;
			if ((int64_t)st.st_mtime > b->record_time)
				b->record_time = (int64_t)st.st_mtime;
			tf_vec_push(&b->files, f);
		}
		if (sd)
			closedir(sd);
		free(sdir);
		tf_buf_free(&suite);
	}
	closedir(d);
	free(cdir);
	return rc;
}

static int dir_show(tf_baseline *out, tf_store *s, const char *commit)
{
	int rc;
	memset(out, 0, sizeof(*out));
	snprintf(out->commit, sizeof(out->commit), "%s", commit);
	rc = fill(out, s);
	if (!rc && out->files.n == 0)
		rc = tf_error_set(TF_ENOTFOUND, "no run files in '%s/%s'", s->dir, commit);
	if (rc)
		tf_baseline_clear(out);
	return rc;
}

static int dir_list(tf_baseline_list *out, tf_store *s)
{
	DIR *d = opendir(s->dir);
	struct dirent *de;

	if (!d) {
		if (errno == ENOENT)
			return 0; /* nothing saved yet */
		return tf_error_set_errno(TF_ERROR, "cannot read '%s'", s->dir);
	}
	while ((de = readdir(d))) {
		git_oid id;
		tf_baseline b;

		if (!tf_git_parse_id(&id, de->d_name))
			continue;
		memset(&b, 0, sizeof(b));
		tf_git_id_hex(b.commit, &id);
		if (strcmp(b.commit, de->d_name) != 0)
			continue; /* upper-case duplicate: not ours */
		if (fill(&b, s)) {
			tf_baseline_clear(&b);
			tf_git_id_hex(b.commit, &id);
			b.problem = tf_xstrdup(tf_error_last());
		} else if (b.files.n == 0) {
			tf_baseline_clear(&b);
			continue;
		}
		tf_vec_push(&out->items, b);
	}
	closedir(d);
	return 0;
}

static void remove_tree(const char *path, void *payload)
{
	(void)payload;
	tf_rmtree(path);
}

static int dir_remove(tf_store *s, const tf_baseline *b)
{
	char *path = tf_xasprintf("%s/%s", s->dir, b->commit);
	/* renamed away first, so nobody sees a half-deleted baseline */
	char *gone = tf_xasprintf("%s/.pruned.%s.%ld", s->dir, b->commit, (long)getpid());
	int rc = 0;

	if (rename(path, gone) != 0) {
		if (errno != ENOENT)
			rc = tf_error_set_errno(TF_ERROR, "cannot remove '%s'", path);
	} else {
		rc = tf_rmtree(gone);
	}
	/* and what a prune that was killed left behind */
	tf_remove_stale(s->dir, ".pruned.", remove_tree, NULL);
	free(path);
	free(gone);
	return rc;
}

const tf_store_backend tf_store_dir_backend = {
	.name = "dir",
	.save = dir_save,
	.get = dir_get,
	.list = dir_list,
	.show = dir_show,
	.remove = dir_remove,
};
