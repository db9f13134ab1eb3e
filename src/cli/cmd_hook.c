/*
 * cmd_hook.c - `testflame hook install|uninstall` (SPEC §2): the pre-push
 * hook that profiles the quick suite before `git push` and refuses the push
 * when a test got slower.
 *
 *   install [--chain]   write the hook into the repository's hooks
 *                       directory (git's own answer, so core.hooksPath and
 *                       worktrees are honoured); an existing foreign hook
 *                       is refused, or with --chain kept and run first
 *   uninstall           remove it, putting a chained hook back
 *   run pre-push REMOTE [URL]
 *                       what the hook calls, with git's ref lines on stdin:
 *                       when the push includes the checked-out commit,
 *                       `testflame run` on the config's quick suite
 *                       (hook.command, hook.suite; else the suite itself)
 *                       against the baseline of the merge-base (stored
 *                       here, or fetched from the remote pushed to), or
 *                       with the merge-base built beside when there is
 *                       none; nothing is published, saved or pushed
 */
#include "cli_int.h"
#include "testflame/config.h"
#include "testflame/context.h"
#include "testflame/hook.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const hook_usage[] = {
	"testflame hook install [--chain]",
	"testflame hook uninstall",
	"",
	"Installs (or removes) a git pre-push hook that profiles the quick suite",
	"against the baseline of the merge-base and refuses the push when a test",
	"got slower; 'git push --no-verify' pushes anyway.",
	NULL,
};

/* `git rev-parse --git-path hooks`: honours core.hooksPath and worktrees. */
static char *hooks_dir(void)
{
	FILE *p = popen("git rev-parse --git-path hooks 2>/dev/null", "r");
	char line[PATH_MAX];
	char *dir = NULL;
	if (!p)
		return NULL;
	if (fgets(line, sizeof(line), p)) {
		line[strcspn(line, "\n")] = '\0';
		if (*line)
			dir = tf_xstrdup(line);
	}
	if (pclose(p) != 0) {
		free(dir);
		return NULL;
	}
	return dir;
}

static char *self_path(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0)
		return tf_xstrdup("testflame");
	buf[n] = '\0';
	return tf_xstrdup(buf);
}

static int install(bool chain)
{
	char *dir = hooks_dir(), *self;
	tf_hook_action act;
	int rc;

	if (!dir) {
		tf_errorf("not in a git repository (or git is missing): no hooks directory");
		return TF_EXIT_ERROR;
	}
	self = self_path();
	rc = tf_hook_install(&act, dir, self, chain);
	if (rc) {
		tf_errorf("%s", tf_error_last());
	} else {
		const char *what = act == TF_HOOK_UPDATED ? "updated the"
				   : act == TF_HOOK_CHAINED ? "installed the" : "installed the";
		printf("%s pre-push hook in %s/pre-push (it runs %s)\n", what, dir, self);
		if (act == TF_HOOK_CHAINED)
			printf("the hook that was there runs first, as %s/%s\n", dir, TF_HOOK_CHAINED_FILE);
		printf("a push that makes a test slower is refused; 'git push --no-verify' pushes anyway\n");
	}
	free(dir);
	free(self);
	return rc ? TF_EXIT_ERROR : TF_EXIT_OK;
}

static int uninstall(void)
{
	char *dir = hooks_dir();
	bool restored;
	int rc;

	if (!dir) {
		tf_errorf("not in a git repository (or git is missing): no hooks directory");
		return TF_EXIT_ERROR;
	}
	rc = tf_hook_uninstall(&restored, dir);
	if (rc)
		tf_errorf("%s", tf_error_last());
	else
		printf("removed the pre-push hook from %s%s\n", dir,
		       restored ? "; the hook that was chained is the pre-push hook again" : "");
	free(dir);
	return rc ? TF_EXIT_ERROR : TF_EXIT_OK;
}

static int read_all(tf_buf *out, FILE *fp)
{
	char chunk[4096];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		tf_buf_put(out, chunk, n);
	return ferror(fp) ? tf_error_set_errno(TF_ERROR, "cannot read the hook's input") : 0;
}

/* What the hook runs: `testflame run` on the quick suite, in this process. */
static int pre_push(const char *remote)
{
	tf_buf in = TF_BUF_INIT;
	tf_push_refs refs;
	tf_repo *repo = NULL;
	tf_config *cfg = NULL;
	char *head = NULL, *branch = NULL;
	TF_VEC(char *) av = { 0 };
	int status = TF_EXIT_OK, rc;
	bool pushes_head = false;

	memset(&refs, 0, sizeof(refs));
	if ((rc = read_all(&in, stdin)) || (rc = tf_hook_parse_push(&refs, in.ptr))) {
		status = tf_fail(rc);
		goto done;
	}
	if ((rc = tf_repo_open(&repo, NULL)) || (rc = tf_repo_resolve(&head, repo, "HEAD"))) {
		tf_warnf("testflame hook: %s; not profiling", tf_error_last());
		goto done;
	}
	for (size_t i = 0; i < refs.items.n; i++) {
		const tf_push_ref *r = &refs.items.v[i];
		if (tf_hook_null_sha(r->local_sha))
			continue; /* a deletion */
		if (strcmp(r->local_sha, head) != 0) {
			tf_notef("not profiling %s: it is not the checked-out commit", r->local_ref);
			continue;
		}
		pushes_head = true;
		if (!branch && strncmp(r->remote_ref, "refs/heads/", 11) == 0)
			branch = tf_xstrdup(r->remote_ref + 11);
	}
	if (!pushes_head)
		goto done;

	if ((rc = tf_run_config_load(&cfg, NULL))) {
		status = tf_fail(rc);
		goto done;
	}
	/* a hook runs on a developer's machine: nothing leaves it */
	setenv("TESTFLAME_CI", "local", 1);
	if (branch)
		setenv("TESTFLAME_BRANCH", branch, 1);
	tf_vec_push(&av, tf_xstrdup("run"));
	tf_vec_push(&av, tf_xstrdup("--no-publish"));
	tf_vec_push(&av, tf_xstrdup("--no-save"));
	tf_vec_push(&av, tf_xstrdup("--no-push"));
	tf_vec_push(&av, tf_xstrdup("--fetch"));
	tf_vec_push(&av, tf_xasprintf("--remote=%s", remote));
	tf_vec_push(&av, tf_xstrdup("--or-against-merge-base"));
	if (cfg->hook.suite || cfg->hook.command_argv)
		tf_vec_push(&av, tf_xasprintf("--suite=%s", cfg->hook.suite ? cfg->hook.suite : "quick"));
	if (cfg->hook.repeat > 0)
		tf_vec_push(&av, tf_xasprintf("--repeat=%ld", cfg->hook.repeat));
	if (cfg->hook.command_argv) {
		tf_vec_push(&av, tf_xstrdup("--"));
		if (cfg->hook.command_shell) {
			tf_vec_push(&av, tf_xstrdup("sh"));
			tf_vec_push(&av, tf_xstrdup("-c"));
		}
		for (char **a = cfg->hook.command_argv; *a; a++)
			tf_vec_push(&av, tf_xstrdup(*a));
	}
	/* cmd_run() rearranges its argv: hand it a copy of the pointers */
	char **argv = tf_xcalloc(av.n + 1, sizeof(char *));
	memcpy(argv, av.v, av.n * sizeof(char *));
	tf_notef("profiling the quick suite before pushing %.12s to '%s'", head, remote);
	fflush(stderr);
	status = cmd_run((int)av.n, argv);
	free(argv);
	fflush(stdout);
	if (status == TF_EXIT_REGRESSION)
		tf_errorf("push refused: a test got slower (above); push anyway with "
			  "'git push --no-verify'");
	else if (status)
		tf_errorf("push refused: 'testflame run' exited %d (above); push anyway with "
			  "'git push --no-verify'", status);
done:
	for (size_t i = 0; i < av.n; i++)
		free(av.v[i]);
	tf_vec_free(&av);
	tf_push_refs_clear(&refs);
	tf_repo_free(repo);
	tf_config_free(cfg);
	tf_buf_free(&in);
	free(head);
	free(branch);
	return status;
}

int cmd_hook(int argc, char **argv)
{
	bool chain = false;
	const tf_option opts[] = {
		TF_OPT_FLAG(0, "chain", &chain, "install: keep an existing pre-push hook and run it first"),
		TF_OPTS_END,
	};
	int nargs = tf_parse_options(argc, argv, opts, hook_usage, 0, NULL);

	if (nargs == -2)
		return TF_EXIT_OK;
	if (nargs < 0)
		return TF_EXIT_USAGE;
	if (nargs < 2)
		return tf_usage_error(hook_usage, "install or uninstall?");
	if (strcmp(argv[1], "install") == 0 && nargs == 2)
		return install(chain);
	if (strcmp(argv[1], "uninstall") == 0 && nargs == 2 && !chain)
		return uninstall();
	if (strcmp(argv[1], "run") == 0 && nargs >= 3 && nargs <= 5 && strcmp(argv[2], "pre-push") == 0)
		return pre_push(nargs > 3 ? argv[3] : "origin");
	return tf_usage_error(hook_usage, "unknown hook command '%s'", argv[1]);
}
