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
 * another (baseline list, save, ...).
 */
#include "cli_int.h"
#include "testflame/config.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A --help, rendered while its table lives (commands keep their tables
 * on the stack): the options as roff and as completion lines. */
typedef struct {
	const char *const *usage;
	char *roff;              /* NULL: no options */
	char *complete;          /* "WORDS|KIND|CHOICES|help" lines */
} collected;

typedef struct {
	char *sub;               /* NULL: the command itself */
	collected c;
} section;

typedef struct {
	const char *name, *summary;
	TF_VEC(section) sections;
	char *text;              /* what --help printed besides the usage */
} page;

static TF_VEC(collected) got;

static void roff_options(tf_buf *b, const tf_option *opts);
static void complete_options(tf_buf *b, const tf_option *opts);

static void collect(const char *const *usage, const tf_option *opts)
{
	collected c = { usage, NULL, NULL };
	if (opts && opts->type != TF_OPT_END) {
		tf_buf r = TF_BUF_INIT, k = TF_BUF_INIT;
		roff_options(&r, opts);
		complete_options(&k, opts);
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
static collected got_take(void)
{
	collected c = { NULL, NULL, NULL };
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
static char *usage_sub(const char *line, const char *cmd)
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

static void page_load(page *pg, const tf_cli_command *c)
{
	memset(pg, 0, sizeof(*pg));
	pg->name = c->name;
	pg->summary = c->summary;
	/* `version` and `help` print no --help of their own */
	if (c->fn == cmd_version || c->fn == cmd_help)
		return;
	run_help(c, NULL, &pg->text);
	section top = { NULL, got_take() };
	if (!top.c.usage)
		return;
	tf_vec_push(&pg->sections, top);
	for (const char *const *u = top.c.usage; *u && **u; u++) {
		char *sub = usage_sub(*u, c->name), *text = NULL;
		bool dup = false;
		if (!sub)
			continue;
		for (size_t i = 1; i < pg->sections.n; i++)
			dup |= strcmp(pg->sections.v[i].sub, sub) == 0;
		section s = { sub, { NULL, NULL, NULL } };
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

static void page_free(page *pg)
{
	for (size_t i = 0; i < pg->sections.n; i++) {
		free(pg->sections.v[i].sub);
		free(pg->sections.v[i].c.roff);
		free(pg->sections.v[i].c.complete);
	}
	tf_vec_free(&pg->sections);
	free(pg->text);
}

/* ---- roff ---------------------------------------------------------------- */

/* Text for roff: backslashes, dashes (ASCII in every locale) and a leading
 * dot or quote made literal. */
static void roff(tf_buf *fp, const char *s)
{
	if (*s == '.' || *s == '\'')
		tf_buf_puts(fp, "\\&");
	for (; *s; s++) {
		if (*s == '\\')
			tf_buf_puts(fp, "\\e");
		else if (*s == '-')
			tf_buf_puts(fp, "\\-");
		else
			tf_buf_putc(fp, *s);
		if (*s == '\n' && (s[1] == '.' || s[1] == '\''))
			tf_buf_puts(fp, "\\&");
	}
}

static void roff_line(tf_buf *fp, const char *s)
{
	roff(fp, s);
	tf_buf_putc(fp, '\n');
}

static bool takes_arg(const tf_option *o)
{
	return o->type == TF_OPT_STRING || o->type == TF_OPT_INT ||
	       o->type == TF_OPT_DOUBLE || o->type == TF_OPT_LIST;
}

static void roff_options(tf_buf *fp, const tf_option *opts)
{
	for (const tf_option *o = opts; o && o->type != TF_OPT_END; o++) {
		if (o->type == TF_OPT_INCLUDE) {
			roff_options(fp, o->include);
			continue;
		}
		if (o->type == TF_OPT_GROUP) {
			size_t n = strlen(o->help);
			char *h = tf_xstrndup(o->help, n && o->help[n - 1] == ':' ? n - 1 : n);
			tf_buf_puts(fp, ".PP\n.I ");
			roff_line(fp, h);
			free(h);
			continue;
		}
		tf_buf_puts(fp, ".TP\n");
		if (o->short_name)
			tf_buf_printf(fp, "\\fB\\-%c\\fR%s", o->short_name, o->long_name ? ", " : "");
		if (o->long_name) {
			tf_buf_puts(fp, "\\fB\\-\\-");
			roff(fp, o->long_name);
			tf_buf_puts(fp, "\\fR");
		}
		if (takes_arg(o)) {
			tf_buf_puts(fp, " \\fI");
			roff(fp, o->argh ? o->argh : "VALUE");
			tf_buf_puts(fp, "\\fR");
		}
		tf_buf_putc(fp, '\n');
		roff(fp, o->help ? o->help : "");
		if (o->choices) {
			tf_buf_puts(fp, " (one of: ");
			for (const char *const *c = o->choices; *c; c++) {
				tf_buf_puts(fp, c == o->choices ? "" : ", ");
				roff(fp, *c);
			}
			tf_buf_putc(fp, ')');
		}
		if (o->type == TF_OPT_LIST && !(o->help && strstr(o->help, "repeat")))
			tf_buf_puts(fp, "; may be given more than once");
		tf_buf_putc(fp, '\n');
	}
}

static void roff_head(tf_buf *fp, int section, const char *name, const char *what)
{
	char date[16] = "", title[64];
	const char *epoch = getenv("SOURCE_DATE_EPOCH");
	time_t t = epoch ? (time_t)strtoll(epoch, NULL, 10) : time(NULL);
	struct tm tm;

	if (gmtime_r(&t, &tm))
		strftime(date, sizeof(date), "%Y-%m-%d", &tm);
	/* .TH's title in capitals, as man pages have it */
	snprintf(title, sizeof(title), "%s", name);
	for (char *c = title; *c; c++)
		if (*c >= 'a' && *c <= 'z')
			*c = (char)(*c - 'a' + 'A');
	tf_buf_printf(fp, ".\\\" generated by 'testflame help --man' from the option tables; do not edit\n");
	tf_buf_printf(fp, ".TH \"%s\" \"%d\" \"%s\" \"testflame %s\" \"testflame manual\"\n", title, section,
		date, TF_VERSION);
	tf_buf_puts(fp, ".SH NAME\n");
	roff(fp, name);
	tf_buf_puts(fp, " \\- ");
	roff_line(fp, what);
}

static const char see_also[] =
	".SH SEE ALSO\n\\fBtestflame\\fR(1), \\fBtestflame.yml\\fR(5), \\fBperf\\fR(1), \\fBgit\\fR(1)\n";

static const char exit_status[] =
	".SH EXIT STATUS\n"
	".TP\n0\nfine: no test regressed\n"
	".TP\n1\ntestflame itself failed (a message says why)\n"
	".TP\n2\na usage error: a bad flag, value or config file\n"
	".TP\n3\na test got slower beyond noise (the gate; \\fB\\-\\-no\\-fail\\fR turns it off)\n"
	".PP\n\\fBrun\\fR and \\fBrecord\\fR exit with the test command's own status when it failed "
	"(128+N when a signal N ended it), before any verdict.\n";

static void man_command(tf_buf *fp, const page *pg)
{
	char title[64];
	const section *top = pg->sections.n ? &pg->sections.v[0] : NULL;
	bool described = false;

	snprintf(title, sizeof(title), "testflame-%s", pg->name);
	roff_head(fp, 1, title, pg->summary);
	tf_buf_puts(fp, ".SH SYNOPSIS\n");
	for (const char *const *u = top ? top->c.usage : NULL; u && *u && **u; u++) {
		tf_buf_puts(fp, ".nf\n");
		roff_line(fp, *u);
		tf_buf_puts(fp, ".fi\n");
	}
	if (!top)
		tf_buf_printf(fp, ".nf\ntestflame %s%s\n.fi\n", pg->name,
			      strcmp(pg->name, "help") == 0 ? " [\\fIcommand\\fR]" : "");
	tf_buf_puts(fp, ".SH DESCRIPTION\n");
	for (const char *const *u = top ? top->c.usage : NULL; u && *u; u++) {
		if (!**u) {
			described = true;
			tf_buf_puts(fp, ".PP\n");
			continue;
		}
		if (described)
			roff_line(fp, *u);
	}
	if (!described) {
		tf_buf_puts(fp, ".PP\n");
		roff(fp, pg->summary);
		tf_buf_puts(fp, ".\n");
	}
	if (pg->text) {
		tf_buf_puts(fp, ".PP\n");
		for (char *l = pg->text; *l; ) {
			char *e = strchr(l, '\n');
			size_t n = e ? (size_t)(e - l) : strlen(l);
			char *line = tf_xstrndup(l, n);
			if (*line)
				roff_line(fp, line);
			else
				tf_buf_puts(fp, ".PP\n");
			free(line);
			l += n + (e != NULL);
		}
	}
	if ((top && top->c.roff) || pg->sections.n > 1) {
		tf_buf_puts(fp, ".SH OPTIONS\n");
		if (top && top->c.roff)
			tf_buf_puts(fp, top->c.roff);
		for (size_t i = 1; i < pg->sections.n; i++) {
			const section *s = &pg->sections.v[i];
			tf_buf_puts(fp, ".SS \"");
			roff(fp, s->c.usage && s->c.usage[0] ? s->c.usage[0] : s->sub);
			tf_buf_puts(fp, "\"\n");
			tf_buf_puts(fp, s->c.roff);
		}
	}
	if (strcmp(pg->name, "run") == 0 || strcmp(pg->name, "merge") == 0 ||
	    strcmp(pg->name, "record") == 0 || strcmp(pg->name, "compare") == 0)
		tf_buf_puts(fp, exit_status);
	tf_buf_puts(fp, see_also);
}

/* testflame(1): the commands, each with its page. */
static void man_overview(tf_buf *fp, const tf_cli_command *cmds, size_t n)
{
	roff_head(fp, 1, "testflame", "per-test performance regressions of a test suite, "
		  "from a sampling profiler");
	tf_buf_puts(fp, ".SH SYNOPSIS\n.nf\n\\fBtestflame\\fR \\fIcommand\\fR [\\fIoptions\\fR] "
	      "[\\fB\\-\\-\\fR \\fICMD\\fR [\\fIARGS\\fR...]]\n"
	      "\\fBtestflame \\-\\-version\\fR\n\\fBtestflame help\\fR [\\fIcommand\\fR]\n.fi\n");
	tf_buf_puts(fp, ".SH DESCRIPTION\n"
	      "testflame runs a project's test suite under a sampling profiler (perf_event, "
	      "or ptrace where perf_event_open is refused), splits the samples by test, "
	      "compares each test with the baseline of the same suite at the merge\\-base, and "
	      "reports which tests got slower and where in the code: diff flame graphs, a "
	      "PR/MR comment, annotations on changed lines, JUnit and Code Quality files. "
	      "It fails the build (exit status 3) when a test got slower beyond noise.\n"
	      ".PP\nBaselines are kept in the git repository itself "
	      "(refs/testflame/runs/\\fIcommit\\fR), so no server is needed.\n");
	tf_buf_puts(fp, ".SH COMMANDS\n");
	for (size_t i = 0; i < n; i++) {
		tf_buf_puts(fp, ".TP\n\\fBtestflame\\-");
		roff(fp, cmds[i].name);
		tf_buf_puts(fp, "\\fR(1)\n");
		roff_line(fp, cmds[i].summary);
	}
	tf_buf_puts(fp, exit_status);
	tf_buf_puts(fp, ".SH ENVIRONMENT\n"
	      ".TP\n.B TESTFLAME_STORE\nwhere baselines live when neither \\fB\\-\\-store\\fR nor the config says\n"
	      ".TP\n.B TESTFLAME_TOKEN\\fR, \\fBGITHUB_TOKEN\\fR, \\fBGITLAB_TOKEN\n"
	      "tokens for HTTPS remotes and for publishing; never written to a log\n"
	      ".TP\n.B TESTFLAME_NO_PROGRESS\nno progress line on a terminal\n"
	      ".TP\n.B TESTFLAME_MARKERS\nset for the suite: the file a test writes \\fBbegin\\fR "
	      "\\fIname\\fR and \\fBend\\fR \\fIname\\fR lines to (see /usr/share/testflame/contrib)\n");
	tf_buf_puts(fp, ".SH FILES\n"
	      ".TP\n.I .testflame.yml\nthe configuration, at the root of the repository: "
	      "\\fBtestflame.yml\\fR(5)\n"
	      ".TP\n.I testflame\\-report/\nthe report directory: index.html, report.md, "
	      "report.json, junit.xml, codequality.json, a diff flame graph per changed test\n"
	      ".TP\n.I /usr/share/testflame/\nthe GitHub Action, the GitLab template, the CircleCI "
	      "orb and the marker helpers (C, shell, pytest, Go)\n");
	tf_buf_puts(fp, ".SH SEE ALSO\n\\fBtestflame.yml\\fR(5), \\fBperf\\fR(1), \\fBgit\\fR(1)\n");
}

/* testflame.yml(5): the keys from the config's own table. The build adds
 * the annotated example of docs/config.md as EXAMPLE. */
static void man_config(tf_buf *fp)
{
	tf_buf keys = TF_BUF_INIT;

	roff_head(fp, 5, "testflame.yml", "testflame's configuration file");
	tf_buf_puts(fp, ".SH SYNOPSIS\n.I .testflame.yml\nat the root of the git work tree, or "
		    "\\fB\\-\\-config\\fR \\fIFILE\\fR\n");
	tf_buf_puts(fp, ".SH DESCRIPTION\n"
		    "testflame reads \\fI.testflame.yml\\fR at the root of the git work tree (from any "
		    "subdirectory), or the file given with \\fB\\-\\-config\\fR. Every key is optional; "
		    "command\\-line flags win over the file, and the file over the environment. A "
		    "mistake (an unknown key, a bad value) is one line naming the file, line and "
		    "column, and testflame exits 2.\n");
	tf_buf_puts(fp, ".SH KEYS\nA nested key is written as a mapping: \\fBgate.threshold\\fR is "
		    "\\fBthreshold\\fR under \\fBgate:\\fR.\n");
	tf_config_describe(&keys);
	for (const char *l = keys.ptr; l && *l; ) {
		const char *tab = strchr(l, '\t'), *e = strchr(l, '\n');
		char *name = tf_xstrndup(l, (size_t)(tab - l));
		char *what = tf_xstrndup(tab + 1, (size_t)(e - tab - 1));
		tf_buf_puts(fp, ".TP\n.B ");
		roff_line(fp, name);
		roff_line(fp, what);
		free(name);
		free(what);
		l = e + 1;
	}
	tf_buf_free(&keys);
}

/* ---- completion ------------------------------------------------------------ */

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
static void complete_options(tf_buf *fp, const tf_option *opts)
{
	for (const tf_option *o = opts; o && o->type != TF_OPT_END; o++) {
		if (o->type == TF_OPT_INCLUDE) {
			complete_options(fp, o->include);
			continue;
		}
		if (o->type == TF_OPT_GROUP)
			continue;
		if (o->short_name)
			tf_buf_printf(fp, "-%c", o->short_name);
		if (o->long_name)
			tf_buf_printf(fp, "%s--%s", o->short_name ? " " : "", o->long_name);
		tf_buf_printf(fp, "|%s|", takes_arg(o) ? arg_kind(o) : "flag");
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
static void completion(tf_buf *fp, const tf_cli_command *cmds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		tf_buf_printf(fp, "%s||cmd||", cmds[i].name);
		for (const char *h = cmds[i].summary; *h; h++)
			tf_buf_putc(fp, strchr("'\"[]:|\\`$", *h) ? ' ' : *h);
		tf_buf_putc(fp, '\n');
	}
	for (size_t i = 0; i < n; i++) {
		page pg;
		if (strcmp(cmds[i].name, "help") == 0 || strcmp(cmds[i].name, "version") == 0)
			continue;
		page_load(&pg, &cmds[i]);
		for (size_t s = 0; s < pg.sections.n; s++) {
			const section *sec = &pg.sections.v[s];
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
			char *sub = usage_sub(*u, cmds[i].name);
			bool have = false;
			for (size_t s = 1; sub && s < pg.sections.n; s++)
				have |= strcmp(pg.sections.v[s].sub, sub) == 0;
			if (sub && !have)
				tf_buf_printf(fp, "%s|%s|sub||\n", cmds[i].name, sub);
			free(sub);
		}
		page_free(&pg);
	}
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
		completion(&b, cmds, n);
		return emit(&b);
	}
	if (argc == 1) {
		man_overview(&b, cmds, n);
		return emit(&b);
	}
	if (strcmp(argv[1], "testflame.yml") == 0) {
		man_config(&b);
		return emit(&b);
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(cmds[i].name, argv[1]) == 0) {
			page pg;
			page_load(&pg, &cmds[i]);
			man_command(&b, &pg);
			page_free(&pg);
			return emit(&b);
		}
	tf_errorf("no such command '%s' (see 'testflame help')", argv[1]);
	return TF_EXIT_USAGE;
}
