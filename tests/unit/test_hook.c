/*
 * test_hook.c - the pre-push hook's files and input: the script (valid sh,
 * the binary's path quoted safely, the chained hook run first), install on
 * an empty directory, update of our own hook, refusal and chaining of a
 * foreign one, uninstall restoring it, and git's pre-push input lines.
 * The hook in a real `git push` is t7030.
 */
#include "unit.h"
#include "testflame/hook.h"

#include <sys/stat.h>

static void write_file(const char *path, const char *text, int mode)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	assert_int_equal(chmod(path, mode), 0);
}

static char *read_text(const char *path)
{
	tf_buf b = TF_BUF_INIT;
	assert_int_equal(tf_file_read(&b, path), 0);
	return tf_buf_detach(&b);
}

static void test_script(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), path[512], cmd[600];
	tf_buf b = TF_BUF_INIT;
	tf_hook_script(&b, "/opt/it's here/testflame");
	assert_true(strncmp(b.ptr, "#!/bin/sh\n" TF_HOOK_MARKER "\n", 10 + strlen(TF_HOOK_MARKER) + 1) == 0);
	assert_non_null(strstr(b.ptr, "testflame='/opt/it'\\''s here/testflame'\n"));
	assert_non_null(strstr(b.ptr, "git push --no-verify"));
	assert_non_null(strstr(b.ptr, TF_HOOK_CHAINED_FILE));
	assert_non_null(strstr(b.ptr, "hook run pre-push \"$@\""));
	snprintf(path, sizeof(path), "%s/pre-push", dir);
	write_file(path, b.ptr, 0755);
	snprintf(cmd, sizeof(cmd), "sh -n '%s'", path);
	assert_int_equal(system(cmd), 0);
	assert_true(tf_hook_is_ours(path));
	tf_buf_free(&b);
	unit_rmtree(dir);
}

static void test_install_update_uninstall(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), hooks[512], hook[600];
	tf_hook_action act;
	struct stat st;
	bool restored = true;

	snprintf(hooks, sizeof(hooks), "%s/git/hooks", dir); /* created */
	snprintf(hook, sizeof(hook), "%s/pre-push", hooks);
	assert_int_equal(tf_hook_install(&act, hooks, "/usr/bin/testflame", false), 0);
	assert_int_equal(act, TF_HOOK_INSTALLED);
	assert_int_equal(stat(hook, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0755);
	assert_int_equal(tf_hook_install(&act, hooks, "/usr/local/bin/testflame", false), 0);
	assert_int_equal(act, TF_HOOK_UPDATED);
	char *text = read_text(hook);
	assert_non_null(strstr(text, "/usr/local/bin/testflame"));
	free(text);
	assert_int_equal(tf_hook_uninstall(&restored, hooks), 0);
	assert_false(restored);
	assert_int_not_equal(access(hook, F_OK), 0);
	assert_int_equal(tf_hook_uninstall(&restored, hooks), TF_ENOTFOUND);
	unit_rmtree(dir);
}

static void test_foreign_hook(void **state)
{
	(void)state;
	char *dir = unit_tmpdir(), hook[512], chained[512];
	const char *mine = "#!/bin/sh\nexit 0\n";
	tf_hook_action act;
	bool restored = false;

	snprintf(hook, sizeof(hook), "%s/pre-push", dir);
	snprintf(chained, sizeof(chained), "%s/" TF_HOOK_CHAINED_FILE, dir);
	write_file(hook, mine, 0755);
	assert_false(tf_hook_is_ours(hook));

	/* refused, untouched, and the message says how to chain */
	assert_int_equal(tf_hook_install(&act, dir, "testflame", false), TF_EEXISTS);
	assert_non_null(strstr(tf_error_last(), "--chain"));
	char *text = read_text(hook);
	assert_string_equal(text, mine);
	free(text);
	assert_int_equal(tf_hook_uninstall(&restored, dir), TF_EEXISTS);

	/* chained: kept beside, ours in front; again: ours updated, theirs kept */
	assert_int_equal(tf_hook_install(&act, dir, "testflame", true), 0);
	assert_int_equal(act, TF_HOOK_CHAINED);
	assert_true(tf_hook_is_ours(hook));
	text = read_text(chained);
	assert_string_equal(text, mine);
	free(text);
	assert_int_equal(tf_hook_install(&act, dir, "testflame", true), 0);
	assert_int_equal(act, TF_HOOK_UPDATED);

	/* a chained file in the way of another foreign hook: refused */
	assert_int_equal(unlink(hook), 0);
	write_file(hook, "#!/bin/sh\necho other\n", 0755);
	assert_int_equal(tf_hook_install(&act, dir, "testflame", true), TF_EEXISTS);
	text = read_text(hook);
	assert_string_equal(text, "#!/bin/sh\necho other\n");
	free(text);

	/* uninstall puts the chained hook back */
	assert_int_equal(unlink(hook), 0);
	assert_int_equal(tf_hook_install(&act, dir, "testflame", false), 0);
	assert_int_equal(tf_hook_uninstall(&restored, dir), 0);
	assert_true(restored);
	text = read_text(hook);
	assert_string_equal(text, mine);
	free(text);
	assert_int_not_equal(access(chained, F_OK), 0);
	unit_rmtree(dir);
}

static void test_parse_push(void **state)
{
	(void)state;
	tf_push_refs r;
	const char *a = "1111111111111111111111111111111111111111";
	char text[600];
	snprintf(text, sizeof(text),
		 "refs/heads/topic %s refs/heads/topic 0000000000000000000000000000000000000000\n"
		 "(delete) 0000000000000000000000000000000000000000 refs/heads/old %s\r\n\n", a, a);
	assert_int_equal(tf_hook_parse_push(&r, text), 0);
	assert_int_equal(r.items.n, 2);
	assert_string_equal(r.items.v[0].local_ref, "refs/heads/topic");
	assert_string_equal(r.items.v[0].local_sha, a);
	assert_true(tf_hook_null_sha(r.items.v[0].remote_sha));
	assert_true(tf_hook_null_sha(r.items.v[1].local_sha));
	assert_false(tf_hook_null_sha(r.items.v[1].remote_sha));
	assert_string_equal(r.items.v[1].remote_ref, "refs/heads/old");
	tf_push_refs_clear(&r);

	assert_int_equal(tf_hook_parse_push(&r, ""), 0);
	assert_int_equal(r.items.n, 0);
	assert_int_equal(tf_hook_parse_push(&r, "\n"), 0);
	assert_int_equal(r.items.n, 0);

	snprintf(text, sizeof(text), "refs/heads/a %s refs/heads/a %s\nrefs/heads/b nothex refs/heads/b %s\n", a, a, a);
	assert_int_equal(tf_hook_parse_push(&r, text), TF_EINVAL);
	assert_non_null(strstr(tf_error_last(), "line 2"));
	assert_int_equal(r.items.n, 0);
	assert_int_equal(tf_hook_parse_push(&r, "too few fields\n"), TF_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_script),
		cmocka_unit_test(test_install_update_uninstall),
		cmocka_unit_test(test_foreign_hook),
		cmocka_unit_test(test_parse_push),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
