/*
 * worktree.c - another revision checked out beside this one, for `run
 * --against REV`: both sides are built and run on this machine, in turn,
 * so they meet the same noise. The revision's tree is written into a
 * temporary directory (a plain export: this checkout's HEAD, index and
 * work tree stay as they are), and the suite runs from the directory that
 * corresponds to the current one, as it does here.
 */
#include "testflame/context.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct tf_worktree {
	char *commit, *root, *cwd, *source;
};

/* The current directory relative to the work tree `workdir` ("" at its
 * root or outside it). */
static char *relative_cwd(const char *workdir)
{
	char cwd[4096];
	size_t n = strlen(workdir);
	if (!getcwd(cwd, sizeof(cwd)))
		return tf_xstrdup("");
	while (n && workdir[n - 1] == '/')
		n--;
	if (strncmp(cwd, workdir, n) == 0 && (cwd[n] == '/' || cwd[n] == '\0'))
		return tf_xstrdup(cwd[n] ? cwd + n + 1 : "");
	return tf_xstrdup("");
}

int tf_worktree_create(tf_worktree **out, const char *rev, const char *tmpdir)
{
	tf_repo *repo = NULL;
	tf_worktree *w = tf_xcalloc(1, sizeof(*w));
	char *rel;
	int rc;

	*out = NULL;
	if ((rc = tf_repo_open(&repo, NULL)) || (rc = tf_repo_resolve(&w->commit, repo, rev)))
		goto fail;
	if (!tf_repo_workdir(repo)) {
		rc = tf_error_set(TF_EUNSUPPORTED, "cannot build '%s' beside this checkout: the "
				  "repository is bare (no work tree)", rev);
		goto fail;
	}
	w->source = tf_xstrdup(tf_repo_workdir(repo));
	if (!tmpdir || !*tmpdir)
		tmpdir = getenv("TMPDIR");
	if (!tmpdir || !*tmpdir)
		tmpdir = "/tmp";
	w->root = tf_xasprintf("%s/testflame-against.XXXXXX", tmpdir);
	if (!mkdtemp(w->root)) {
		rc = tf_error_set_errno(TF_ERROR, "cannot create a temporary directory in '%s'", tmpdir);
		free(w->root);
		w->root = NULL;
		goto fail;
	}
	if ((rc = tf_repo_export(repo, w->commit, w->root)))
		goto fail;
	rel = relative_cwd(w->source);
	w->cwd = *rel ? tf_xasprintf("%s/%s", w->root, rel) : tf_xstrdup(w->root);
	free(rel);
	tf_repo_free(repo);
	*out = w;
	return 0;
fail:
	tf_repo_free(repo);
	tf_worktree_free(w);
	return rc;
}

int tf_worktree_remove(tf_worktree *w)
{
	int rc = w->root ? tf_rmtree(w->root) : 0;
	if (!rc) {
		free(w->root);
		w->root = NULL;
	}
	return rc;
}

void tf_worktree_free(tf_worktree *w)
{
	if (!w)
		return;
	/* on the error paths: a leftover temporary directory harms no one */
	if (tf_worktree_remove(w) != 0)
		tf_error_clear();
	free(w->commit);
	free(w->root);
	free(w->cwd);
	free(w->source);
	free(w);
}

const char *tf_worktree_commit(const tf_worktree *w)
{
	return w->commit;
}

const char *tf_worktree_root(const tf_worktree *w)
{
	return w->root;
}

const char *tf_worktree_cwd(const tf_worktree *w)
{
	return w->cwd;
}

const char *tf_worktree_source(const tf_worktree *w)
{
	return w->source;
}

int tf_worktree_run(const tf_worktree *w, const char *cmd, bool here)
{
	return tf_shell_run(here ? w->source : w->root, cmd);
}

int tf_shell_run(const char *dir, const char *cmd)
{
	struct sigaction ign, old_int, old_quit;
	sigset_t chld, old_mask;
	int st = -1;
	pid_t pid;

	/* system(3)'s manners: a ^C reaches the build, which stops, and we
	 * stay to say so and clean up */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old_mask);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (!dir || chdir(dir) == 0)
			execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid < 0) {
		tf_error_set_errno(TF_ERROR, "cannot start '%s'", cmd);
	} else {
		while (waitpid(pid, &st, 0) < 0) {
			if (errno != EINTR) {
				st = -1;
				tf_error_set_errno(TF_ERROR, "cannot wait for '%s'", cmd);
				break;
			}
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	return st;
}
