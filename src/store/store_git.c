/*
 * store_git.c - the default store: baselines inside the repository itself.
 *
 * The baseline of commit C is the ref refs/testflame/runs/<C>, pointing at a
 * commit whose tree holds <suite>/<kind>.pb.gz and whose parent is the ref's
 * previous value. A save builds the new tree on top of whatever the ref
 * holds now and moves the ref with a compare-and-swap; when another process
 * moved it first, the save starts over from the new value, so concurrent
 * writers of other suites or kinds never lose their files.
 */
#include "store_int.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#define SAVE_ATTEMPTS 100

static int git_save(tf_store *s, const char *commit, const char *suite_enc,
		    const char *file_enc, const void *data, size_t len)
{
	git_oid c, blob, old, old_tree, tree, created;
	const git_oid *parents[1];
	char *refname = NULL, *path = NULL, *what = NULL;
	int rc;

	if (!tf_git_parse_id(&c, commit))
		return tf_error_set(TF_EINVAL, "'%s' is not a commit id", commit);
	rc = git_blob_create_from_buffer(&blob, s->repo, data, len);
	if (rc)
		return tf_git_error(rc, 0, "cannot write the run file into the repository");
	refname = tf_git_ref_name(&c);
	path = tf_xasprintf("%s/%s", suite_enc, file_enc);
	what = tf_xasprintf("save %s", path);
	for (unsigned attempt = 0; attempt < SAVE_ATTEMPTS; attempt++) {
		bool has_old;

		if (attempt)
			tf_store_backoff(attempt);
		rc = tf_git_ref_get(&old, s->repo, refname);
		if (rc && rc != TF_ENOTFOUND)
			goto done;
		has_old = rc == 0;
		if (has_old && (rc = tf_git_commit_tree(&old_tree, s->repo, &old)))
			goto done;
		if ((rc = tf_tree_set(&tree, s->repo, has_old ? &old_tree : NULL, path, &blob)))
			goto done;
		if (has_old && git_oid_equal(&tree, &old_tree))
			goto done; /* the same bytes are already there */
		parents[0] = &old;
		rc = tf_git_commit_baseline(&created, s->repo, &c, &tree, parents, has_old ? 1 : 0,
					    what);
		if (rc)
			goto done;
		rc = tf_git_ref_cas(s->repo, refname, &created, has_old ? &old : NULL,
				    "testflame: save");
		if (rc != TF_ECONFLICT)
			goto done;
	}
	rc = tf_git_gave_up(s->repo, refname, SAVE_ATTEMPTS);
done:
	free(refname);
	free(path);
	free(what);
	return rc;
}

/* The baseline commit's tree, or TF_ENOTFOUND when there is no baseline. */
static int baseline_tree(git_tree **out, git_oid *record, tf_store *s, const char *commit)
{
	git_oid c, tree_id;
	char *refname;
	int rc;

	*out = NULL;
	if (!tf_git_parse_id(&c, commit))
		return tf_error_set(TF_EINVAL, "'%s' is not a commit id", commit);
	refname = tf_git_ref_name(&c);
	rc = tf_git_ref_get(record, s->repo, refname);
	if (!rc)
		rc = tf_git_commit_tree(&tree_id, s->repo, record);
	if (!rc && (rc = git_tree_lookup(out, s->repo, &tree_id)))
		rc = tf_git_error(rc, TF_EINVAL, "cannot read the tree of '%s'", refname);
	free(refname);
	return rc;
}

static int unreadable(int rc, const char *commit)
{
	if (rc && rc != TF_ENOTFOUND)
		tf_error_wrap(rc, "baseline of %.12s is unreadable", commit);
	return rc;
}

static int git_get(tf_buf *out, tf_store *s, const char *commit, const char *suite_enc,
		   const char *file_enc)
{
	git_tree *tree = NULL;
	git_tree_entry *e = NULL;
	git_blob *blob = NULL;
	git_oid record;
	char *path = tf_xasprintf("%s/%s", suite_enc, file_enc);
	int rc = baseline_tree(&tree, &record, s, commit);

	if (rc)
		goto done;
	rc = git_tree_entry_bypath(&e, tree, path);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		rc = tf_error_set(TF_ENOTFOUND, "no '%s' in the baseline", path);
		goto done;
	}
	if (rc) {
		rc = tf_git_error(rc, TF_EINVAL, "cannot read '%s'", path);
		goto done;
	}
	if (!out)
		goto done;
	rc = git_blob_lookup(&blob, s->repo, git_tree_entry_id(e));
	if (rc) {
		rc = tf_git_error(rc, TF_EINVAL, "cannot read '%s'", path);
		goto done;
	}
	tf_buf_clear(out);
	tf_buf_put(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
done:
	git_blob_free(blob);
	git_tree_entry_free(e);
	git_tree_free(tree);
	free(path);
	return unreadable(rc, commit);
}

/* The files of a baseline tree: <suite>/<kind>.pb.gz; anything else in the
 * tree is not ours and is left alone. */
static int read_files(tf_baseline *b, git_repository *repo, git_tree *root)
{
	git_odb *odb = NULL;
	int rc = git_repository_odb(&odb, repo);
	const size_t sfx = strlen(TF_STORE_FILE_SUFFIX);

	if (rc)
		return tf_git_error(rc, 0, "cannot open the object database");
	for (size_t i = 0, n = git_tree_entrycount(root); i < n && !rc; i++) {
		const git_tree_entry *se = git_tree_entry_byindex(root, i);
		git_tree *sub = NULL;
		tf_buf suite = TF_BUF_INIT;

		if (git_tree_entry_type(se) != GIT_OBJECT_TREE ||
		    tf_store_decode_name(&suite, git_tree_entry_name(se),
					 strlen(git_tree_entry_name(se))))
			continue;
		if ((rc = git_tree_lookup(&sub, repo, git_tree_entry_id(se)))) {
			rc = tf_git_error(rc, TF_EINVAL, "cannot read suite '%s'", suite.ptr);
			tf_buf_free(&suite);
			break;
		}
		for (size_t j = 0, m = git_tree_entrycount(sub); j < m; j++) {
			const git_tree_entry *fe = git_tree_entry_byindex(sub, j);
			const char *name = git_tree_entry_name(fe);
			size_t len = strlen(name), size = 0;
			git_object_t type;
			tf_buf kind = TF_BUF_INIT;
			tf_baseline_file f;

			if (git_tree_entry_type(fe) != GIT_OBJECT_BLOB || len <= sfx ||
			    strcmp(name + len - sfx, TF_STORE_FILE_SUFFIX) != 0 ||
			    tf_store_decode_name(&kind, name, len - sfx)) {
				tf_buf_free(&kind);
				continue;
			}
			rc = git_odb_read_header(&size, &type, odb, git_tree_entry_id(fe));
			if (rc) {
				rc = tf_git_error(rc, TF_EINVAL, "cannot read '%s/%s'",
						  git_tree_entry_name(se), name);
				tf_buf_free(&kind);
				break;
			}
			f.suite = tf_xstrdup(suite.ptr);
			f.kind = tf_buf_detach(&kind);
			f.path = tf_xasprintf("%s/%s", git_tree_entry_name(se), name);
			f.size = size;
			tf_vec_push(&b->files, f);
		}
		git_tree_free(sub);
		tf_buf_free(&suite);
	}
	git_odb_free(odb);
	return rc;
}

/* Fill `b` (commit already set) from the ref's value. */
static int fill(tf_baseline *b, tf_store *s)
{
	git_tree *tree = NULL;
	git_commit *rc_commit = NULL;
	git_oid record;
	int rc = baseline_tree(&tree, &record, s, b->commit);

	if (rc)
		return rc;
	tf_git_id_hex(b->record, &record);
	if (git_commit_lookup(&rc_commit, s->repo, &record) == 0)
		b->record_time = (int64_t)git_commit_time(rc_commit);
	git_commit_free(rc_commit);
	rc = read_files(b, s->repo, tree);
	git_tree_free(tree);
	return rc;
}

static int git_show(tf_baseline *out, tf_store *s, const char *commit)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->commit, sizeof(out->commit), "%s", commit);
	int rc = fill(out, s);
	if (rc)
		tf_baseline_clear(out);
	return unreadable(rc, commit);
}

static bool has_commit(const tf_baseline_list *l, const char *hex)
{
	for (size_t i = 0; i < l->items.n; i++)
		if (strcmp(l->items.v[i].commit, hex) == 0)
			return true;
	return false;
}

static void add_problem(tf_baseline_list *out, const char *name, const char *why)
{
	tf_baseline b;
	memset(&b, 0, sizeof(b));
	snprintf(b.commit, sizeof(b.commit), "%s", name);
	b.problem = tf_xstrdup(why);
	tf_vec_push(&out->items, b);
}

/*
 * libgit2's ref iterator skips loose refs it cannot parse, so a corrupt
 * baseline would vanish without a word; the loose directory is read too,
 * and whatever lies there but was not iterated is reported.
 */
static void find_unreadable(tf_baseline_list *out, tf_store *s)
{
	char *dir = tf_xasprintf("%s%s", git_repository_commondir(s->repo), TF_STORE_REF_PREFIX);
	DIR *d = opendir(dir);
	struct dirent *de;

	free(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		git_oid id, target;
		char *refname;
		int rc;

		if (de->d_name[0] == '.' || strstr(de->d_name, ".lock") || has_commit(out, de->d_name))
			continue;
		refname = tf_xasprintf("%s%s", TF_STORE_REF_PREFIX, de->d_name);
		if (!tf_git_parse_id(&id, de->d_name))
			add_problem(out, de->d_name, "not named after a commit id");
		else if ((rc = tf_git_ref_get(&target, s->repo, refname)) != 0)
			add_problem(out, de->d_name, tf_error_last());
		free(refname);
	}
	closedir(d);
}

static int git_list(tf_baseline_list *out, tf_store *s)
{
	git_reference_iterator *it = NULL;
	const char *name;
	int rc = git_reference_iterator_glob_new(&it, s->repo, TF_STORE_REF_PREFIX "*");

	if (rc)
		return tf_git_error(rc, 0, "cannot list the baseline refs");
	while ((rc = git_reference_next_name(&name, it)) == 0) {
		const char *hex = name + strlen(TF_STORE_REF_PREFIX);
		git_oid id;
		tf_baseline b;

		if (!tf_git_parse_id(&id, hex)) {
			add_problem(out, hex, "not named after a commit id");
			continue;
		}
		memset(&b, 0, sizeof(b));
		tf_git_id_hex(b.commit, &id);
		if (fill(&b, s)) {
			tf_baseline_clear(&b);
			tf_git_id_hex(b.commit, &id);
			b.problem = tf_xstrdup(tf_error_last());
		}
		tf_vec_push(&out->items, b);
	}
	git_reference_iterator_free(it);
	if (rc != GIT_ITEROVER)
		return tf_git_error(rc, 0, "cannot list the baseline refs");
	git_error_clear();
	find_unreadable(out, s);
	return 0;
}

static int git_remove(tf_store *s, const tf_baseline *b)
{
	char *refname = tf_xasprintf("%s%s", TF_STORE_REF_PREFIX, b->commit);
	git_reference *ref = NULL;
	git_oid record;
	int rc;

	if (b->problem) {
		/* unreadable: there is no value to compare, remove it by name */
		rc = git_reference_remove(s->repo, refname);
		if (rc)
			rc = tf_git_error(rc, 0, "cannot delete '%s'", refname);
		goto done;
	}
	rc = git_reference_lookup(&ref, s->repo, refname);
	if (rc == GIT_ENOTFOUND) {
		git_error_clear();
		rc = 0; /* someone else pruned it */
		goto done;
	}
	if (rc) {
		rc = tf_git_error(rc, 0, "cannot read '%s'", refname);
		goto done;
	}
	if (!tf_git_parse_id(&record, b->record) || !git_reference_target(ref) ||
	    !git_oid_equal(&record, git_reference_target(ref))) {
		rc = tf_error_set(TF_ECONFLICT, "'%s' was rewritten meanwhile; kept", refname);
		goto done;
	}
	/* git_reference_delete() checks the value it read under the lock */
	rc = git_reference_delete(ref);
	if (rc)
		rc = tf_git_error(rc, 0, "cannot delete '%s'", refname);
done:
	git_reference_free(ref);
	free(refname);
	return rc;
}

const tf_store_backend tf_store_git_backend = {
	.name = "git",
	.git = true,
	.save = git_save,
	.get = git_get,
	.list = git_list,
	.show = git_show,
	.remove = git_remove,
};
