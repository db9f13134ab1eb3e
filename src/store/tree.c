/*
 * tree.c - the git objects of a baseline: its tree (<suite>/<kind>.pb.gz),
 * the commit that records it, and the merge of two writers' trees.
 *
 * Baselines only ever gain files (a run replaces its own suite and kind,
 * prune drops whole refs), so merging two versions is a union and needs no
 * common ancestor: whatever either writer stored stays. Only when both
 * stored the same path with different bytes must one win, and the caller
 * says which.
 */
#include "store_int.h"

#include <git2/sys/commit.h>
#include <string.h>

static int empty_tree(git_oid *out, git_repository *repo)
{
	git_treebuilder *tb = NULL;
	int rc = git_treebuilder_new(&tb, repo, NULL);
	if (!rc)
		rc = git_treebuilder_write(out, tb);
	git_treebuilder_free(tb);
	return rc ? tf_git_error(rc, 0, "cannot write an empty tree") : 0;
}

int tf_tree_set(git_oid *out, git_repository *repo, const git_oid *base,
		const char *path, const git_oid *blob)
{
	git_tree *tree = NULL;
	git_tree_update up;
	git_oid empty;
	int rc;

	if (!base) {
		if ((rc = empty_tree(&empty, repo)))
			return rc;
		base = &empty;
	}
	rc = git_tree_lookup(&tree, repo, base);
	if (rc)
		return tf_git_error(rc, TF_EINVAL, "cannot read baseline tree");
	memset(&up, 0, sizeof(up));
	up.action = GIT_TREE_UPDATE_UPSERT;
	up.id = *blob;
	up.filemode = GIT_FILEMODE_BLOB;
	up.path = path;
	rc = git_tree_create_updated(out, repo, tree, 1, &up);
	git_tree_free(tree);
	return rc ? tf_git_error(rc, 0, "cannot write the baseline tree for '%s'", path) : 0;
}

static int merge_rec(git_oid *out, git_repository *repo, const git_oid *ours,
		     const git_oid *theirs, bool prefer_theirs, unsigned *conflicts,
		     unsigned depth)
{
	git_tree *a = NULL, *b = NULL;
	git_treebuilder *tb = NULL;
	int rc;

	if (git_oid_equal(ours, theirs)) {
		*out = *ours;
		return 0;
	}
	if (depth > 16)
		return tf_error_set(TF_EINVAL, "baseline tree nested too deeply");
	if ((rc = git_tree_lookup(&a, repo, ours)) || (rc = git_tree_lookup(&b, repo, theirs))) {
		rc = tf_git_error(rc, TF_EINVAL, "cannot read a baseline tree to merge");
		goto done;
	}
	if ((rc = git_treebuilder_new(&tb, repo, a))) {
		rc = tf_git_error(rc, 0, "cannot merge baseline trees");
		goto done;
	}
	for (size_t i = 0, n = git_tree_entrycount(b); i < n; i++) {
		const git_tree_entry *te = git_tree_entry_byindex(b, i);
		const char *name = git_tree_entry_name(te);
		const git_tree_entry *oe = git_tree_entry_byname(a, name);
		git_filemode_t tmode = git_tree_entry_filemode(te);
		const git_oid *tid = git_tree_entry_id(te);
		git_oid merged;

		if (oe && git_oid_equal(git_tree_entry_id(oe), tid) &&
		    git_tree_entry_filemode(oe) == tmode)
			continue;
		if (oe && tmode == GIT_FILEMODE_TREE &&
		    git_tree_entry_filemode(oe) == GIT_FILEMODE_TREE) {
			rc = merge_rec(&merged, repo, git_tree_entry_id(oe), tid, prefer_theirs,
				       conflicts, depth + 1);
			if (rc)
				goto done;
			tid = &merged;
		} else if (oe) {
			if (conflicts)
				(*conflicts)++;
			if (!prefer_theirs)
				continue;
		}
		rc = git_treebuilder_insert(NULL, tb, name, tid, tmode);
		if (rc) {
			rc = tf_git_error(rc, 0, "cannot merge baseline entry '%s'", name);
			goto done;
		}
	}
	rc = git_treebuilder_write(out, tb);
	if (rc)
		rc = tf_git_error(rc, 0, "cannot write a merged baseline tree");
done:
	git_treebuilder_free(tb);
	git_tree_free(a);
	git_tree_free(b);
	return rc;
}

int tf_tree_merge(git_oid *out, git_repository *repo, const git_oid *ours,
		  const git_oid *theirs, bool prefer_theirs, unsigned *conflicts)
{
	return merge_rec(out, repo, ours, theirs, prefer_theirs, conflicts, 0);
}

int tf_git_commit_baseline(git_oid *out, git_repository *repo, const git_oid *commit,
			   const git_oid *tree, const git_oid *const *parents,
			   size_t nparents, const char *what)
{
	git_signature *sig = NULL;
	char hex[TF_STORE_ID_HEX + 1];
	char *msg;
	int rc;

	if ((rc = tf_git_signature(&sig)))
		return rc;
	tf_git_id_hex(hex, commit);
	msg = tf_xasprintf("testflame baseline for %s\n\n%s\n", hex, what);
	rc = git_commit_create_from_ids(out, repo, NULL, sig, sig, NULL, msg, tree, nparents,
					(const git_oid **)parents);
	free(msg);
	git_signature_free(sig);
	return rc ? tf_git_error(rc, 0, "cannot write the baseline commit for %.12s", hex) : 0;
}

/* The tree id of baseline commit `id`. */
int tf_git_commit_tree(git_oid *out, git_repository *repo, const git_oid *id)
{
	git_commit *c = NULL;
	char hex[TF_STORE_ID_HEX + 1];
	int rc = git_commit_lookup(&c, repo, id);

	if (rc) {
		tf_git_id_hex(hex, id);
		return tf_git_error(rc, TF_EINVAL, "cannot read baseline commit %s", hex);
	}
	*out = *git_commit_tree_id(c);
	git_commit_free(c);
	return 0;
}

/* 1 when `anc` is an ancestor of (or equal to) `desc`. */
static int is_ancestor(git_repository *repo, const git_oid *anc, const git_oid *desc)
{
	int rc;
	if (git_oid_equal(anc, desc))
		return 1;
	rc = git_graph_descendant_of(repo, desc, anc);
	if (rc < 0)
		return tf_git_error(rc, TF_EINVAL, "cannot compare baseline histories");
	return rc;
}

int tf_git_integrate(tf_sync_status *status, unsigned *conflicts, git_repository *repo,
		     const git_oid *commit, const git_oid *theirs, bool prefer_theirs)
{
	char *refname = tf_git_ref_name(commit);
	int rc = 0;

	for (unsigned attempt = 0;; attempt++) {
		git_oid local, lt, tt, mt, merged;
		const git_oid *parents[2];
		unsigned n = 0;

		if (attempt > 0)
			tf_store_backoff(attempt);
		if (attempt >= 100) {
			rc = tf_git_gave_up(repo, refname, attempt);
			break;
		}
		rc = tf_git_ref_get(&local, repo, refname);
		if (rc == TF_ENOTFOUND) {
			rc = tf_git_ref_cas(repo, refname, theirs, NULL, "testflame: fetch");
			*status = TF_SYNC_CREATED;
		} else if (rc) {
			break;
		} else if ((rc = is_ancestor(repo, theirs, &local)) != 0) {
			if (rc > 0)
				rc = 0;
			*status = TF_SYNC_UP_TO_DATE;
			break;
		} else if ((rc = is_ancestor(repo, &local, theirs)) != 0) {
			if (rc < 0)
				break;
			rc = tf_git_ref_cas(repo, refname, theirs, &local, "testflame: fast-forward");
			*status = TF_SYNC_FAST_FORWARD;
		} else {
			if ((rc = tf_git_commit_tree(&lt, repo, &local)) || (rc = tf_git_commit_tree(&tt, repo, theirs)))
				break;
			if ((rc = tf_tree_merge(&mt, repo, &lt, &tt, prefer_theirs, &n)))
				break;
			parents[0] = &local;
			parents[1] = theirs;
			rc = tf_git_commit_baseline(&merged, repo, commit, &mt, parents, 2,
						    "merge baselines written concurrently");
			if (rc)
				break;
			rc = tf_git_ref_cas(repo, refname, &merged, &local, "testflame: merge");
			*status = TF_SYNC_MERGED;
			if (!rc && conflicts)
				*conflicts += n;
		}
		if (rc != TF_ECONFLICT)
			break;
	}
	free(refname);
	return rc;
}
