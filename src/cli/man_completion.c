/*
 * man_completion.c - the table the bash and zsh completions of
 * packaging/completion/ are built around (`testflame help --completion`):
 * the commands, their subcommands and, from each collected --help
 * (manual.c), every option's words, how its argument is completed and its
 * help with the characters the shells would read stripped.
 */
#include "cli_int.h"

#include <stdio.h>
#include <string.h>

/* How an option's argument is completed, by its placeholder. */
static const char *arg_kind(const tf_option *o)
{
	static const struct { const char *argh, *kind; } kinds[] = {
		{ "FILE", "file" }, { "OUT", "file" }, { "PATH", "file" }, { "DIR", "dir" },
		{ "REV", "rev" }, { "BRANCH", "branch" }, { "SPEC", "store" },
	};
	if (o->choices)
		return "choices";
	if (o->long_name && strcmp(o->long_name, "suite") == 0)
		return "suite";
	if (o->long_name && strcmp(o->long_name, "remote") == 0)
		return "remote";
	for (size_t i = 0; o->argh && i < TF_ARRAY_SIZE(kinds); i++)
		if (strcmp(o->argh, kinds[i].argh) == 0)
			return kinds[i].kind;
	return "none";
}

/* One line per option: the words that name it, its kind, its choices. */
void tf_cli_complete_options(tf_buf *fp, const tf_option *opts)
{
	for (const tf_option *o = opts; o && o->type != TF_OPT_END; o++) {
		if (o->type == TF_OPT_INCLUDE) {
			tf_cli_complete_options(fp, o->include);
			continue;
		}
		if (o->type == TF_OPT_GROUP)
			continue;
		if (o->short_name)
			tf_buf_printf(fp, "-%c", o->short_name);
		if (o->long_name)
			tf_buf_printf(fp, "%s--%s", o->short_name ? " " : "", o->long_name);
		tf_buf_printf(fp, "|%s|", tf_cli_takes_arg(o) ? arg_kind(o) : "flag");
		for (const char *const *c = o->choices; c && *c; c++)
			tf_buf_printf(fp, "%s%s", c == o->choices ? "" : " ", *c);
		tf_buf_putc(fp, '|');
		/* the help, for zsh's descriptions: no quotes or brackets */
		for (const char *h = o->help; h && *h; h++)
			tf_buf_putc(fp, strchr("'\"[]:|\\`$\n", *h) ? ' ' : *h);
		tf_buf_putc(fp, '\n');
	}
}

/* The completion table the scripts in packaging/completion/ are built
 * around: "CMD||cmd||summary" per command, "CMD|SUB|sub||" per
 * subcommand, "CMD[ SUB]|WORDS|KIND|CHOICES|help" per option. */
void tf_cli_completion(tf_buf *fp, const tf_cli_command *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		tf_buf_printf(fp, "%s||cmd||", cmds[i].name);
		for (const char *h = cmds[i].summary; *h; h++)
			tf_buf_putc(fp, strchr("'\"[]:|\\`$", *h) ? ' ' : *h);
		tf_buf_putc(fp, '\n');
	}
	for (size_t i = 0; i < n; i++) {
		tf_cli_page pg;
		if (strcmp(cmds[i].name, "help") == 0 || strcmp(cmds[i].name, "version") == 0)
			continue;
		tf_cli_page_load(&pg, &cmds[i]);
		for (size_t s = 0; s < pg.sections.n; s++) {
			const tf_cli_section *sec = &pg.sections.v[s];
			char key[96];
			snprintf(key, sizeof(key), "%s%s%s", cmds[i].name, sec->sub ? " " : "",
				 sec->sub ? sec->sub : "");
			if (sec->sub)
				tf_buf_printf(fp, "%s|%s|sub||\n", cmds[i].name, sec->sub);
			for (const char *l = sec->c.complete; l && *l; ) {
				const char *e = strchr(l, '\n');
				size_t len = e ? (size_t)(e - l) : strlen(l);
				tf_buf_printf(fp, "%s|%.*s\n", key, (int)len, l);
				l += len + (e != NULL);
			}
		}
		/* subcommands without a table of their own (hook install) */
		for (const char *const *u = pg.sections.n ? pg.sections.v[0].c.usage : NULL; u && *u && **u; u++) {
			char *sub = tf_cli_usage_sub(*u, cmds[i].name);
			bool have = false;
			for (size_t s = 1; sub && s < pg.sections.n; s++)
				have |= strcmp(pg.sections.v[s].sub, sub) == 0;
			if (sub && !have)
				tf_buf_printf(fp, "%s|%s|sub||\n", cmds[i].name, sub);
			free(sub);
		}
		tf_cli_page_free(&pg);
	}
}
