/*
 * manual.c - the manual pages and the shell completions, generated from the
 * same option tables that parse argv and print --help (as git's completion
 * asks `git CMD --git-completion-helper`), so that neither can drift from
 * the commands: `testflame help --man CMD` writes testflame-CMD(1) in roff,
 * `testflame help --man` testflame(1), `testflame help --man testflame.yml`
 * testflame.yml(5) from the config's table of keys, `testflame help --completion` the
 * table the bash and zsh scripts of packaging/completion/ are built
 * around. The build runs them (Makefile: man, completion); nothing here
 * runs when testflame is used.
 *
 * A command's --help is run with tf_usage_print() collecting instead of
 * printing: its usage lines give the synopsis and the description, its
 * table the options; other text the command prints after them (baseline's
 * notes) joins the description. A usage line "testflame CMD SUB ..." names
 * a subcommand whose own --help is collected too, when its table is
 * another (baseline list, save, ...). This file collects a command's page
 * (tf_cli_page); man_roff.c writes it as a manual page, man_completion.c
 * as lines of the completion table.
 */
#include "cli_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static TF_VEC(tf_cli_collected) got;

static void collect(const char *const *usage, const tf_option *opts)
{
	tf_cli_collected c = { usage, NULL, NULL };
	if (opts && opts->type != TF_OPT_END) {
		tf_buf r = TF_BUF_INIT, k = TF_BUF_INIT;
		tf_cli_roff_options(&r, opts);
		tf_cli_complete_options(&k, opts);
		c.roff = tf_buf_detach(&r);
		c.complete = tf_buf_detach(&k);
	}
	tf_vec_push(&got, c);
}

static void got_clear(void)
{
	for (size_t i = 0; i < got.n; i++) {
		free(got.v[i].roff);
		free(got.v[i].complete);
	}
	got.n = 0;
}

/* Take the first collected --help (the one of the command asked). */
static tf_cli_collected got_take(void)
{
	tf_cli_collected c = { NULL, NULL, NULL };
	if (got.n) {
		c = got.v[0];
		got.v[0].roff = got.v[0].complete = NULL;
	}
	got_clear();
	return c;
}

/* Run `CMD [SUB] --help` collecting; its other output into *text. */
static void run_help(const tf_cli_command *c, const char *sub, char **text)
{
	char *argv[4];
	int argc = 0, saved;
	FILE *tmp = tmpfile();

	argv[argc++] = (char *)c->name;
	if (sub)
		argv[argc++] = (char *)sub;
	argv[argc++] = (char *)"--help";
	argv[argc] = NULL;
	got_clear();
	fflush(stdout);
	saved = dup(STDOUT_FILENO);
	if (tmp)
		dup2(fileno(tmp), STDOUT_FILENO);
	tf_usage_hook = collect;
	c->fn(argc, argv);
	tf_usage_hook = NULL;
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	*text = NULL;
	if (tmp) {
		tf_buf b = TF_BUF_INIT;
		char chunk[4096];
		size_t n;
		rewind(tmp);
		while ((n = fread(chunk, 1, sizeof(chunk), tmp)) > 0)
			tf_buf_put(&b, chunk, n);
		fclose(tmp);
		*text = b.len ? tf_buf_detach(&b) : NULL;
		tf_buf_free(&b);
	}
}

/* The subcommand a usage line names: "testflame baseline list [...]". */
char *tf_cli_usage_sub(const char *line, const char *cmd)
{
	size_t cl = strlen(cmd), n = 0;
	const char *p;

	if (strncmp(line, "testflame ", 10) != 0 || strncmp(line + 10, cmd, cl) != 0 ||
	    line[10 + cl] != ' ')
		return NULL;
	p = line + 11 + cl;
	while (p[n] >= 'a' && p[n] <= 'z')
		n++;
	return n && (p[n] == ' ' || !p[n]) ? tf_xstrndup(p, n) : NULL;
}

void tf_cli_page_load(tf_cli_page *pg, const tf_cli_command *c)
{
	memset(pg, 0, sizeof(*pg));
	pg->name = c->name;
	pg->summary = c->summary;
	/* `version` and `help` print no --help of their own */
	if (c->fn == cmd_version || c->fn == cmd_help)
		return;
	run_help(c, NULL, &pg->text);
	tf_cli_section top = { NULL, got_take() };
	if (!top.c.usage)
		return;
	tf_vec_push(&pg->sections, top);
	for (const char *const *u = top.c.usage; *u && **u; u++) {
		char *sub = tf_cli_usage_sub(*u, c->name), *text = NULL;
		bool dup = false;
		if (!sub)
			continue;
		for (size_t i = 1; i < pg->sections.n; i++)
			dup |= strcmp(pg->sections.v[i].sub, sub) == 0;
		tf_cli_section s = { sub, { NULL, NULL, NULL } };
		if (!dup) {
			run_help(c, sub, &text);
			s.c = got_take();
		}
		free(text);
		/* a subcommand parsed by the command's own table (hook install)
		 * has no section of its own */
		if (dup || !s.c.roff || (top.c.roff && strcmp(s.c.roff, top.c.roff) == 0)) {
			free(s.c.roff);
			free(s.c.complete);
			free(sub);
			continue;
		}
		tf_vec_push(&pg->sections, s);
	}
}

void tf_cli_page_free(tf_cli_page *pg)
{
	for (size_t i = 0; i < pg->sections.n; i++) {
		free(pg->sections.v[i].sub);
		free(pg->sections.v[i].c.roff);
		free(pg->sections.v[i].c.complete);
	}
	tf_vec_free(&pg->sections);
	free(pg->text);
}

static int emit(tf_buf *b)
{
	bool ok = fwrite(b->ptr ? b->ptr : "", 1, b->len, stdout) == b->len && fflush(stdout) == 0;
	tf_buf_free(b);
	if (!ok)
		tf_errorf("could not write the page");
	return ok ? TF_EXIT_OK : TF_EXIT_ERROR;
}

int tf_cli_manual(int argc, char **argv, const tf_cli_command *cmds, size_t n)
{
	tf_buf b = TF_BUF_INIT;

	/* argv: "--man" [CMD] | "--completion" */
	if (strcmp(argv[0], "--completion") == 0) {
		tf_cli_completion(&b, cmds, n);
		return emit(&b);
	}
	if (argc == 1) {
		tf_cli_man_overview(&b, cmds, n);
		return emit(&b);
	}
	if (strcmp(argv[1], "testflame.yml") == 0) {
		tf_cli_man_config(&b);
		return emit(&b);
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(cmds[i].name, argv[1]) == 0) {
			tf_cli_page pg;
			tf_cli_page_load(&pg, &cmds[i]);
			tf_cli_man_command(&b, &pg);
			tf_cli_page_free(&pg);
			return emit(&b);
		}
	tf_errorf("no such command '%s' (see 'testflame help')", argv[1]);
	return TF_EXIT_USAGE;
}
