/*
 * select.c - the command that runs only some tests of a suite: what a
 * confirmation re-runs when a few tests look slower, instead of the whole
 * suite (SPEC §9b).
 *
 * Each test is asked for the way its own runner narrows a run, read from
 * what the run file says of it (its runner, the test it ran inside):
 *
 *   ctest       the command is ctest (after env, nice, timeout; or the
 *               last command of `sh -c STRING`): -R '^(a|b)$', each name
 *               escaped; a test run inside a ctest test (a GoogleTest,
 *               cmocka, Catch2 or TAP program's) by its ctest test
 *   GoogleTest  GTEST_FILTER=Suite.Name:... in the environment, which
 *               every GoogleTest program reads however it is started
 *   pytest      node ids ("file.py::name") in TESTFLAME_PYTEST_SELECT,
 *               which testflame's own plugin (loaded into every pytest it
 *               runs) keeps, deselecting the rest
 *   go test     GOFLAGS=-run=^(TestA|TestB)$ -count=1 added to the
 *               user's: go test reads it, other go commands ignore it
 *   cargo test  the command is `cargo test`: -- --exact NAME...
 *   meson       the command is `meson test` (or the last command of `sh -c
 *               STRING`): PROJECT:NAME of each, from "SUITE / NAME"
 *   Catch2      the command runs the test's program (itself, or as the
 *               last command of `sh -c STRING`): its names as arguments,
 *               Catch2's specials escaped
 *   doctest     the same: -tc=NAME,NAME (',', '*' and '?' as '?')
 *   Boost.Test  BOOST_TEST_RUN_FILTERS=PATH:PATH in the environment, which
 *               every Boost.Test program reads
 *   unittest    ids ("pkg.tests.Case.test_x") in TESTFLAME_UNITTEST_SELECT,
 *               which testflame's Python loader keeps in any unittest
 *               runner (python -m unittest, discover, a script's own),
 *               skipping the rest; a test is one when the loader wrote
 *               its markers (runner=unittest)
 *
 * Where any test has no way known, the answer is the whole suite and the
 * reason, for the run's notes. Filters only narrow: a filter a runner
 * ignores (a --gtest_filter on the command line wins) runs more tests,
 * never fewer, and the caller checks that every test asked for ran.
 */
#include "attribute_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

typedef TF_VEC(char *) strvec;

struct sel {
	strvec ctest, gtest, pytest, go, cargo, unittest, catch2, doctest, boost, meson;
	const char *prog;    /* the command's program, its base name */
	char word[256];      /* where prog is, when the shell's string holds it */
	/* placing the tests of a program or ctest test asked for whole; and
	 * whether a test of each environment's filter was asked for itself
	 * (else that filter is left out: the whole runs) */
	int depth;
	bool asked_gtest, asked_go, asked_pytest, asked_unittest, asked_boost;
};

static void strvec_free(strvec *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	tf_vec_free(v);
}

static void add_unique(strvec *v, const char *s, size_t len)
{
	for (size_t i = 0; i < v->n; i++)
		if (strlen(v->v[i]) == len && memcmp(v->v[i], s, len) == 0)
			return;
	char *c = tf_xmalloc(len + 1);
	memcpy(c, s, len);
	c[len] = '\0';
	tf_vec_push(v, c);
}

/* The index of the program in argv past wrappers, their options and
 * VAR=value words (`timeout 60 ctest`, `nice -n 10 ctest`). */
static size_t program_index(const char *const *argv)
{
	size_t i = 0;
	while (argv[i]) {
		if (tf_word_is_assignment(argv[i]) || argv[i][0] == '-') {
			i++;
			continue;
		}
		if (tf_word_is_wrapper(argv[i])) {
			i++;
			/* a wrapper's own argument (nice -n 10, timeout 60) */
			while (argv[i] && (argv[i][0] == '-' || isdigit((unsigned char)argv[i][0]) ||
					   tf_word_is_assignment(argv[i])))
				i++;
			continue;
		}
		break;
	}
	return i;
}

/* Where the last simple command of a shell string starts, when it is one
 * plain command (words, quotes; no redirection, substitution or
 * background) that can take more arguments at its end; NULL when not. */
static const char *last_command(const char *s)
{
	const char *start = s;
	char quote = 0;
	for (const char *p = s; *p; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
			continue;
		}
		if (*p == '\'' || *p == '"')
			quote = *p;
		else if (*p == ';' || *p == '\n' || (*p == '&' && p[1] == '&') ||
			 (*p == '|' && p[1] == '|')) {
			if (p[1] == '&' || p[1] == '|')
				p++;
			start = p + 1;
		} else if (strchr("|&<>`$(){}\\", *p))
			return NULL;
	}
	return quote ? NULL : start;
}

/* The base name of the first word of a shell command past VAR=value
 * words and wrappers, in `word`; NULL when there is none that fits. */
static const char *shell_program(const char *cmd, char *word, size_t size)
{
	while (*cmd) {
		while (isspace((unsigned char)*cmd))
			cmd++;
		size_t n = 0;
		while (cmd[n] && !isspace((unsigned char)cmd[n]))
			n++;
		if (!n || n >= size)
			return NULL;
		memcpy(word, cmd, n);
		word[n] = '\0';
		cmd += n;
		if (tf_word_is_assignment(word) || tf_word_is_wrapper(word) || word[0] == '-' ||
		    isdigit((unsigned char)word[0]))
			continue;
		return tf_word_base_name(word);
	}
	return NULL;
}

static bool shell_program_is(const char *cmd, const char *want)
{
	char word[256];
	const char *p = shell_program(cmd, word, sizeof(word));
	return p && strcmp(p, want) == 0;
}

/* `s` quoted for a POSIX shell, where it needs it. */
static void shell_quote(tf_buf *b, const char *s)
{
	if (*s && !s[strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_@%+=:,./-")]) {
		tf_buf_puts(b, s);
		return;
	}
	tf_buf_putc(b, '\'');
	for (; *s; s++)
		if (*s == '\'')
			tf_buf_puts(b, "'\\''");
		else
			tf_buf_putc(b, *s);
	tf_buf_putc(b, '\'');
}

/* "^(a|b)$" with every ASCII character but letters, digits and '_'
 * escaped, which CMake's regular expressions and Go's (RE2) both take as
 * the character itself; `top`: each name up to its first '/'. */
static char *anchored(const char *const *names, size_t n, bool top)
{
	tf_buf b = TF_BUF_INIT;
	tf_buf_puts(&b, "^(");
	for (size_t i = 0; i < n; i++) {
		if (i)
			tf_buf_putc(&b, '|');
		for (const char *p = names[i]; *p && !(top && *p == '/'); p++) {
			if (!isalnum((unsigned char)*p) && *p != '_' && (unsigned char)*p < 0x80)
				tf_buf_putc(&b, '\\');
			tf_buf_putc(&b, *p);
		}
	}
	tf_buf_puts(&b, ")$");
	return tf_buf_detach(&b);
}

char *tf_select_ctest_regex(const char *const *names, size_t n)
{
	return anchored(names, n, false);
}

char *tf_select_gtest_filter(const char *const *names, size_t n)
{
	tf_buf b = TF_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		if (i)
			tf_buf_putc(&b, ':');
		/* ':' separates patterns, '*' and '?' are wildcards, a leading
		 * '-' starts the negative part: any one character ('?') there
		 * matches a superset, never less */
		for (const char *p = names[i]; *p; p++)
			tf_buf_putc(&b, strchr(":*?", *p) || (*p == '-' && p == names[i]) ? '?' : *p);
	}
	return tf_buf_detach(&b);
}

char *tf_select_go_run(const char *const *names, size_t n)
{
	return anchored(names, n, true);
}

/* The test's line in the run's metadata, or false. */
static bool find_meta(tf_test_meta *m, const tf_profile *run, const char *name)
{
	char *key = tf_xasprintf("test.%s", name);
	const char *v = tf_profile_meta(run, key);
	bool ok = false;
	if (v) {
		char *line = tf_xasprintf("testflame.test.%s=%s", name, v);
		ok = tf_test_meta_parse(m, line) == 0;
		free(line);
		tf_error_clear();
	}
	free(key);
	return ok;
}

/* Whether `name` is how a Go test binary names a top-level test (or its
 * subtest): Test, Fuzz or Example and no lower-case letter after it. */
static bool go_name(const char *name)
{
	static const char *const kinds[] = { "Test", "Fuzz", "Example" };
	for (size_t i = 0; i < TF_ARRAY_SIZE(kinds); i++) {
		size_t n = strlen(kinds[i]);
		if (strncmp(name, kinds[i], n) == 0 && !(name[n] >= 'a' && name[n] <= 'z'))
			return !strchr(name, ' ') && !strstr(name, "::");
	}
	return false;
}

/* The tests the run says ran inside `parent`. */
static void children(strvec *out, const tf_profile *run, const char *parent)
{
	for (size_t i = 0; i < run->comments.n; i++) {
		const char *c = tf_profile_str(run, run->comments.v[i]);
		tf_test_meta m;
		if (strncmp(c, "testflame.test.", 15) != 0 || tf_test_meta_parse(&m, c) != 0) {
			tf_error_clear();
			continue;
		}
		if (m.parent && !strcmp(m.parent, parent) && strcmp(m.name, parent) != 0)
			add_unique(out, m.name, strlen(m.name));
		tf_test_meta_clear(&m);
	}
}

static bool place(struct sel *s, const tf_profile *run, const char *name, bool cargo, char **why);

static bool has_children(const tf_profile *run, const char *parent)
{
	strvec kids = { 0 };
	children(&kids, run, parent);
	bool any = kids.n > 0;
	strvec_free(&kids);
	return any;
}

/* Every test that ran inside `parent`, placed. */
static bool all_of(struct sel *s, const tf_profile *run, const char *parent, bool cargo,
		   char **why)
{
	strvec kids = { 0 };
	bool ok = true;
	children(&kids, run, parent);
	s->depth++;
	for (size_t i = 0; i < kids.n && ok; i++)
		ok = place(s, run, kids.v[i], cargo, why);
	s->depth--;
	strvec_free(&kids);
	return ok;
}

/* meson's "SUITE / NAME" as `meson test` takes it, PROJECT:NAME (the
 * suite's project part), added to `v`; false for a name it would read
 * otherwise. */
static bool meson_name(strvec *v, const char *name)
{
	const char *sep = strstr(name, " / ");
	if (!sep || strchr(sep + 3, ':') || !sep[3])
		return false;
	size_t plen = strcspn(name, ":");
	if (plen > (size_t)(sep - name))
		plen = (size_t)(sep - name);
	char *arg = tf_xasprintf("%.*s:%s", (int)plen, name, sep + 3);
	add_unique(v, arg, strlen(arg));
	free(arg);
	return true;
}

/* Sort one test into the runner that can run it alone; false (and *why)
 * when none can. `cargo`: the command is cargo test. */
static bool place(struct sel *s, const tf_profile *run, const char *name, bool cargo, char **why)
{
	tf_test_meta m, pm;
	bool ok = false, own = true;

	if (!find_meta(&m, run, name)) {
		*why = tf_xasprintf("the run does not list '%s'", name);
		return false;
	}
	const char *runner = m.runner ? m.runner : "";
	/* its own runner's filter, which reaches it however it is started */
	if (!strcmp(runner, "gtest")) {
		add_unique(&s->gtest, name, strlen(name));
		s->asked_gtest |= !s->depth;
	} else if (!strcmp(runner, "go") || (!*runner && go_name(name))) {
		const char *slash = strchr(name, '/');
		add_unique(&s->go, name, slash ? (size_t)(slash - name) : strlen(name));
		s->asked_go |= !s->depth;
	} else if ((!*runner || !strcmp(runner, "junit")) && strstr(name, ".py::")) {
		add_unique(&s->pytest, name, strlen(name));
		s->asked_pytest |= !s->depth;
	} else if (!strcmp(runner, "meson") && !m.parent && meson_name(&s->meson, name)) {
		/* kept as meson takes it */
	} else if (!strcmp(runner, "boost") && !strpbrk(name, ":,@!*")) {
		add_unique(&s->boost, name, strlen(name));
		s->asked_boost |= !s->depth;
	} else if ((!strcmp(runner, "catch2") || !strcmp(runner, "doctest")) && m.parent &&
		   s->prog && !strcmp(tf_word_base_name(m.parent), s->prog) && name[0] != '-') {
		/* its program is the command's: the names go on its line */
		add_unique(runner[0] == 'c' ? &s->catch2 : &s->doctest, name, strlen(name));
	} else if (!strcmp(runner, "unittest")) {
		add_unique(&s->unittest, name, strlen(name));
		s->asked_unittest |= !s->depth;
	} else if (!*runner && cargo && !m.nested) {
		add_unique(&s->cargo, name, strlen(name));
	} else {
		own = false;
	}
	if (!strcmp(runner, "ctest") && !m.parent) {
		/* the whole ctest test: its own tests pass every filter too (a
		 * GTEST_FILTER set for another test's would hold them back) */
		add_unique(&s->ctest, name, strlen(name));
		ok = all_of(s, run, name, cargo, why);
	} else if (m.parent) {
		/* inside another test: a ctest test runs it (with its own
		 * filter where it has one); else the program the command runs,
		 * which its own filter reaches */
		if (!find_meta(&pm, run, m.parent)) {
			*why = tf_xasprintf("'%s' ran inside '%s', which the run does not list", name,
					    m.parent);
			goto done;
		}
		bool parent_ctest = pm.runner && !strcmp(pm.runner, "ctest") && !pm.parent;
		tf_test_meta_clear(&pm);
		if (parent_ctest)
			add_unique(&s->ctest, m.parent, strlen(m.parent));
		else if (!own) {
			*why = tf_xasprintf("'%s' ran inside '%s', which no ctest lists", name,
					    m.parent);
			goto done;
		}
		ok = true;
	} else if (own) {
		ok = true;
	} else if (m.nested && has_children(run, name)) {
		/* a program whose tests have rows of their own: all of them */
		ok = all_of(s, run, name, cargo, why);
	} else {
		*why = tf_xasprintf("no way is known to run only '%s'%s%s%s", name,
				    *runner ? " (a " : "", runner, *runner ? " test)" : "");
	}
done:
	tf_test_meta_clear(&m);
	return ok;
}

/* The base name of the program the command runs, in `word`: itself past
 * wrappers, or the last command of `sh -c STRING`; NULL when neither is
 * plain. */
static const char *command_program(const char *const *argv, char *word, size_t size)
{
	size_t p = program_index(argv);
	const char *tail;
	if (!argv[p])
		return NULL;
	if (!(tf_word_is_shell(argv[p]) && argv[p + 1] && !strcmp(argv[p + 1], "-c") && argv[p + 2]))
		return tf_word_base_name(argv[p]);
	tail = last_command(argv[p + 2]);
	return tail ? shell_program(tail, word, size) : NULL;
}

/* Whether argv is `cargo [options] test ...`; *at the index of "test". */
static bool is_cargo_test(const char *const *argv, size_t *at)
{
	size_t p = program_index(argv);
	if (!argv[p] || strcmp(tf_word_base_name(argv[p]), "cargo") != 0)
		return false;
	for (size_t i = p + 1; argv[i]; i++) {
		if (argv[i][0] == '+' || argv[i][0] == '-')
			continue;
		*at = i;
		return strcmp(argv[i], "test") == 0;
	}
	return false;
}

void tf_selection_free(tf_selection *s)
{
	if (!s)
		return;
	tf_strv_free(s->argv);
	tf_strv_free(s->env);
	free(s->how);
	free(s);
}

/* Add KEY=VALUE to the selection's environment and `what` to its line. */
static void put_env(strvec *env, tf_buf *how, const char *key, const char *value)
{
	tf_vec_push(env, tf_xasprintf("%s=%s", key, value));
	if (how->len)
		tf_buf_puts(how, "; ");
	tf_buf_printf(how, "%s=%s", key, value);
}

/* Append `args` to the command's line, where its program (past wrappers)
 * is `prog`, or is the last command of `sh -c STRING` (quoted for the
 * shell there); false when neither. */
static bool add_args(strvec *av, const char *const *argv, const char *prog,
		     const char *const *args, size_t n)
{
	size_t p = program_index(argv);
	const char *tail;
	if (argv[p] && !strcmp(tf_word_base_name(argv[p]), prog)) {
		for (size_t i = 0; i < n; i++)
			tf_vec_push(av, tf_xstrdup(args[i]));
		return true;
	}
	if (argv[p] && tf_word_is_shell(argv[p]) && argv[p + 1] && !strcmp(argv[p + 1], "-c") &&
	    argv[p + 2] && (tail = last_command(argv[p + 2])) && shell_program_is(tail, prog)) {
		tf_buf b = TF_BUF_INIT;
		tf_buf_puts(&b, argv[p + 2]);
		for (size_t i = 0; i < n; i++) {
			tf_buf_putc(&b, ' ');
			shell_quote(&b, args[i]);
		}
		free(av->v[p + 2]);
		av->v[p + 2] = tf_buf_detach(&b);
		return true;
	}
	return false;
}

/* Catch2's test spec of one name: ',', '[', ']', '*', '\\' and a leading
 * '~' escaped with '\\'. */
static char *catch2_name(const char *name)
{
	tf_buf b = TF_BUF_INIT;
	for (const char *p = name; *p; p++) {
		if (strchr(",[]*\\", *p) || (*p == '~' && p == name))
			tf_buf_putc(&b, '\\');
		tf_buf_putc(&b, *p);
	}
	return tf_buf_detach(&b);
}

/* KEY=the ids, one a line, for testflame's own Python code to keep; "WHOSE
 * N WHATs" on the selection's line. */
static void put_ids(strvec *env, tf_buf *how, const char *key, const strvec *ids,
		    const char *whose, const char *what)
{
	tf_buf b = TF_BUF_INIT;
	for (size_t i = 0; i < ids->n; i++) {
		if (i)
			tf_buf_putc(&b, '\n');
		tf_buf_puts(&b, ids->v[i]);
	}
	tf_vec_push(env, tf_xasprintf("%s=%s", key, b.ptr));
	if (how->len)
		tf_buf_puts(how, "; ");
	tf_buf_printf(how, "%s %zu %s%s", whose, ids->n, what, ids->n == 1 ? "" : "s");
	tf_buf_free(&b);
}

int tf_attribute_select(tf_selection **out, const char *const *argv, char *const *envp,
			const tf_profile *run, const char *const *tests, size_t n)
{
	struct sel s;
	strvec av = { 0 }, env = { 0 };
	tf_buf how = TF_BUF_INIT;
	char *why = NULL;
	size_t cargo_at = 0;
	bool cargo, ok = true;
	int rc = 0;

	*out = NULL;
	memset(&s, 0, sizeof(s));
	if (!argv || !argv[0] || !n)
		return tf_error_set(TF_EINVAL, "no command or no test to select");
	cargo = is_cargo_test(argv, &cargo_at);
	s.prog = command_program(argv, s.word, sizeof(s.word));
	for (size_t i = 0; i < n && ok; i++)
		ok = place(&s, run, tests[i], cargo, &why);
	if (!ok) {
		rc = tf_error_set(TF_ENOTFOUND, "%s", why);
		goto done;
	}
	for (size_t i = 0; argv[i]; i++)
		tf_vec_push(&av, tf_xstrdup(argv[i]));
	if (s.ctest.n) {
		char *re = tf_select_ctest_regex((const char *const *)s.ctest.v, s.ctest.n);
		if (!add_args(&av, argv, "ctest", (const char *const[]){ "-R", re }, 2)) {
			rc = tf_error_set(TF_ENOTFOUND, "'%s' is a ctest test and the command does not "
					  "run ctest itself", s.ctest.v[0]);
			free(re);
			goto done;
		}
		tf_buf_printf(&how, "ctest -R '%s'", re);
		free(re);
	}
	if (s.meson.n) {
		if (!add_args(&av, argv, "meson", (const char *const *)s.meson.v, s.meson.n)) {
			rc = tf_error_set(TF_ENOTFOUND, "'%s' is a meson test and the command does not "
					  "run meson test itself", s.meson.v[0]);
			goto done;
		}
		if (how.len)
			tf_buf_puts(&how, "; ");
		tf_buf_puts(&how, "meson test");
		for (size_t i = 0; i < s.meson.n; i++) {
			tf_buf_putc(&how, ' ');
			shell_quote(&how, s.meson.v[i]);
		}
	}
	if (s.catch2.n || s.doctest.n) {
		/* one program's tests: place() kept those of the command's */
		strvec args = { 0 };
		tf_buf tc = TF_BUF_INIT;
		for (size_t i = 0; i < s.catch2.n; i++)
			tf_vec_push(&args, catch2_name(s.catch2.v[i]));
		for (size_t i = 0; i < s.doctest.n; i++) {
			tf_buf_puts(&tc, i ? "," : "-tc=");
			for (const char *q = s.doctest.v[i]; *q; q++)
				tf_buf_putc(&tc, strchr(",*?", *q) ? '?' : *q);
		}
		if (tc.len)
			tf_vec_push(&args, tf_buf_detach(&tc));
		bool added = add_args(&av, argv, s.prog, (const char *const *)args.v, args.n);
		if (added) {
			if (how.len)
				tf_buf_puts(&how, "; ");
			tf_buf_printf(&how, "%s", s.prog);
			for (size_t i = 0; i < args.n; i++) {
				tf_buf_putc(&how, ' ');
				shell_quote(&how, args.v[i]);
			}
		}
		strvec_free(&args);
		tf_buf_free(&tc);
		if (!added) {
			rc = tf_error_set(TF_ENOTFOUND, "'%s' is a test of %s, which the command does "
					  "not run itself", s.catch2.n ? s.catch2.v[0] : s.doctest.v[0],
					  s.prog);
			goto done;
		}
	}
	if (s.cargo.n) {
		/* libtest's filters after the command's own `--`, else after one */
		bool dashes = false;
		for (size_t i = cargo_at; argv[i] && !dashes; i++)
			dashes = !strcmp(argv[i], "--");
		if (!dashes)
			tf_vec_push(&av, tf_xstrdup("--"));
		tf_vec_push(&av, tf_xstrdup("--exact"));
		if (how.len)
			tf_buf_puts(&how, "; ");
		tf_buf_puts(&how, "cargo test -- --exact");
		for (size_t i = 0; i < s.cargo.n; i++) {
			tf_vec_push(&av, tf_xstrdup(s.cargo.v[i]));
			tf_buf_putc(&how, ' ');
			shell_quote(&how, s.cargo.v[i]);
		}
	}
	tf_vec_push(&av, NULL);
	if (s.gtest.n && s.asked_gtest) {
		char *f = tf_select_gtest_filter((const char *const *)s.gtest.v, s.gtest.n);
		put_env(&env, &how, "GTEST_FILTER", f);
		free(f);
	}
	if (s.go.n && s.asked_go) {
		char *re = tf_select_go_run((const char *const *)s.go.v, s.go.n);
		const char *user = tf_env_get(envp, "GOFLAGS");
		char *v = tf_xasprintf("%s%s-run=%s -count=1", user ? user : "",
				       user && *user ? " " : "", re);
		put_env(&env, &how, "GOFLAGS", v);
		free(v);
		free(re);
	}
	if (s.pytest.n && s.asked_pytest)
		put_ids(&env, &how, "TESTFLAME_PYTEST_SELECT", &s.pytest, "pytest's", "node id");
	if (s.boost.n && s.asked_boost) {
		tf_buf f = TF_BUF_INIT;
		for (size_t i = 0; i < s.boost.n; i++) {
			if (i)
				tf_buf_putc(&f, ':');
			tf_buf_puts(&f, s.boost.v[i]);
		}
		put_env(&env, &how, "BOOST_TEST_RUN_FILTERS", f.ptr);
		tf_buf_free(&f);
	}
	if (s.unittest.n && s.asked_unittest)
		put_ids(&env, &how, "TESTFLAME_UNITTEST_SELECT", &s.unittest, "unittest's", "id");
	tf_vec_push(&env, NULL);
	tf_selection *r = tf_xcalloc(1, sizeof(*r));
	r->argv = av.v;
	r->env = env.v;
	r->how = tf_buf_detach(&how);
	memset(&av, 0, sizeof(av));
	memset(&env, 0, sizeof(env));
	*out = r;
done:
	for (size_t i = 0; i < av.n; i++)
		free(av.v[i]);
	tf_vec_free(&av);
	for (size_t i = 0; i < env.n; i++)
		free(env.v[i]);
	tf_vec_free(&env);
	tf_buf_free(&how);
	strvec_free(&s.ctest);
	strvec_free(&s.gtest);
	strvec_free(&s.pytest);
	strvec_free(&s.go);
	strvec_free(&s.cargo);
	strvec_free(&s.unittest);
	strvec_free(&s.catch2);
	strvec_free(&s.doctest);
	strvec_free(&s.boost);
	strvec_free(&s.meson);
	free(why);
	return rc;
}
