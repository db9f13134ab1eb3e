/*
 * hook.c - installing and removing the pre-push hook, and reading git's
 * pre-push input. The hook is the last point where a regression can stay
 * on the developer's machine, so it belongs with the other ways results
 * leave it; it must never destroy a hook the user had: a foreign hook is
 * either refused or kept and chained (run first, with the same arguments
 * and input, and its failure stops the push as before).
 */
#include "testflame/hook.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A word for sh: single-quoted, with embedded quotes closed and escaped. */
static void put_sh_quoted(tf_buf *b, const char *s)
{
	tf_buf_putc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			tf_buf_puts(b, "'\\''");
		else
			tf_buf_putc(b, *s);
	}
	tf_buf_putc(b, '\'');
}

void tf_hook_script(tf_buf *out, const char *testflame)
{
	tf_buf_puts(out,
		"#!/bin/sh\n"
		TF_HOOK_MARKER "\n"
		"#\n"
		"# Installed by 'testflame hook install': before a push, profiles the quick\n"
		"# suite against the baseline of the merge-base (or builds the merge-base\n"
		"# beside when none is stored) and refuses the push when a test got slower.\n"
		"# Push anyway with 'git push --no-verify'; remove with 'testflame hook uninstall'.\n"
		"testflame=");
	put_sh_quoted(out, testflame);
	tf_buf_puts(out,
		"\n"
		"[ -x \"$testflame\" ] || testflame=testflame\n"
		"input=$(cat)\n"
		"chained=\"$(dirname \"$0\")/" TF_HOOK_CHAINED_FILE "\"\n"
		"if [ -x \"$chained\" ]; then\n"
		"\tprintf '%s\\n' \"$input\" | \"$chained\" \"$@\" || exit $?\n"
		"fi\n"
		"printf '%s\\n' \"$input\" | \"$testflame\" hook run pre-push \"$@\"\n");
}

bool tf_hook_is_ours(const char *path)
{
	tf_buf b = TF_BUF_INIT;
	bool ours = tf_file_read(&b, path) == 0 && b.ptr && strstr(b.ptr, "\n" TF_HOOK_MARKER "\n");
	tf_buf_free(&b);
	return ours;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

int tf_hook_install(tf_hook_action *out, const char *hooks_dir, const char *testflame, bool chain)
{
	char *hook = tf_xasprintf("%s/pre-push", hooks_dir);
	char *chained = tf_xasprintf("%s/" TF_HOOK_CHAINED_FILE, hooks_dir);
	tf_buf script = TF_BUF_INIT;
	int rc;

	*out = TF_HOOK_INSTALLED;
	if ((rc = tf_mkdir_p(hooks_dir, 0755)))
		goto done;
	if (exists(hook)) {
		if (tf_hook_is_ours(hook)) {
			*out = TF_HOOK_UPDATED;
		} else if (!chain) {
			rc = tf_error_set(TF_EEXISTS, "a pre-push hook is already there ('%s'); "
					  "'testflame hook install --chain' keeps it and runs it before "
					  "testflame's, or move it away first", hook);
			goto done;
		} else if (exists(chained)) {
			rc = tf_error_set(TF_EEXISTS, "'%s' is already there, so '%s' cannot be "
					  "chained; look at both and remove one", chained, hook);
			goto done;
		} else {
			if (rename(hook, chained) != 0) {
				rc = tf_error_set_errno(TF_ERROR, "cannot move '%s' to '%s'", hook, chained);
				goto done;
			}
			*out = TF_HOOK_CHAINED;
		}
	}
	tf_hook_script(&script, testflame);
	rc = tf_file_write_atomic(hook, script.ptr, script.len);
	if (!rc && chmod(hook, 0755) != 0)
		rc = tf_error_set_errno(TF_ERROR, "cannot make '%s' executable", hook);
	if (rc && *out == TF_HOOK_CHAINED && !exists(hook))
		(void)rename(chained, hook); /* put the user's hook back */
done:
	tf_buf_free(&script);
	free(hook);
	free(chained);
	return rc;
}

int tf_hook_uninstall(bool *restored, const char *hooks_dir)
{
	char *hook = tf_xasprintf("%s/pre-push", hooks_dir);
	char *chained = tf_xasprintf("%s/" TF_HOOK_CHAINED_FILE, hooks_dir);
	int rc = 0;

	*restored = false;
	if (!exists(hook)) {
		rc = tf_error_set(TF_ENOTFOUND, "there is no pre-push hook in '%s'", hooks_dir);
	} else if (!tf_hook_is_ours(hook)) {
		rc = tf_error_set(TF_EEXISTS, "the pre-push hook '%s' is not testflame's; left alone",
				  hook);
	} else if (exists(chained)) {
		if (rename(chained, hook) != 0)
			rc = tf_error_set_errno(TF_ERROR, "cannot move '%s' back to '%s'", chained, hook);
		else
			*restored = true;
	} else if (unlink(hook) != 0) {
		rc = tf_error_set_errno(TF_ERROR, "cannot remove '%s'", hook);
	}
	free(hook);
	free(chained);
	return rc;
}

bool tf_hook_null_sha(const char *sha)
{
	if (!sha || !*sha)
		return true;
	for (; *sha; sha++)
		if (*sha != '0')
			return false;
	return true;
}

static bool hex_id(const char *s)
{
	size_t n = strlen(s);
	if (n != 40 && n != 64)
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
			return false;
	return true;
}

int tf_hook_parse_push(tf_push_refs *out, const char *text)
{
	unsigned lineno = 0;
	memset(out, 0, sizeof(*out));
	for (const char *p = text ? text : ""; *p;) {
		size_t n = strcspn(p, "\n");
		char *line = tf_xstrndup(p, n), *f[5] = { 0 }, *save = NULL;
		size_t k = 0;
		p += n + (p[n] == '\n');
		lineno++;
		if (n && line[n - 1] == '\r')
			line[n - 1] = '\0';
		for (char *tok = strtok_r(line, " ", &save); tok && k < 5; tok = strtok_r(NULL, " ", &save))
			f[k++] = tok;
		if (k == 0) {
			free(line);
			continue;
		}
		if (k != 4 || !hex_id(f[1]) || !hex_id(f[3])) {
			free(line);
			tf_push_refs_clear(out);
			return tf_error_set(TF_EINVAL, "pre-push input line %u is not '<local ref> <local sha> "
					    "<remote ref> <remote sha>'", lineno);
		}
		tf_push_ref r = { tf_xstrdup(f[0]), tf_xstrdup(f[1]), tf_xstrdup(f[2]), tf_xstrdup(f[3]) };
		tf_vec_push(&out->items, r);
		free(line);
	}
	return 0;
}

void tf_push_refs_clear(tf_push_refs *r)
{
	for (size_t i = 0; i < r->items.n; i++) {
		free(r->items.v[i].local_ref);
		free(r->items.v[i].local_sha);
		free(r->items.v[i].remote_ref);
		free(r->items.v[i].remote_sha);
	}
	tf_vec_free(&r->items);
}
