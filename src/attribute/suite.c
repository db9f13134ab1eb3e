/*
 * suite.c - the default name of a suite: what the command runs, not the
 * exact text that ran it. A suite's name keys its baselines; when it was
 * the whole command line, `make -j4 check` after `make -s check` started a
 * new suite with no baseline, and nothing said so. The name keeps the
 * program (its base name) and the words that say what it runs (targets,
 * test paths, subcommands), and drops what only says how: options,
 * VAR=value assignments, numbers, wrappers such as env and the shell of
 * `sh -c`, and the directories of absolute paths (checkouts move).
 */
#include "attribute_int.h"

#include <ctype.h>
#include <string.h>

/* Words kept after the program, and the name's length at most. */
#define SUITE_WORDS 4
#define SUITE_MAX 80

bool tf_word_is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');
	if (!eq || eq == w || !(isalpha((unsigned char)*w) || *w == '_'))
		return false;
	for (const char *p = w; p < eq; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

static bool is_number(const char *w)
{
	if (!*w)
		return false;
	for (; *w; w++)
		if (!isdigit((unsigned char)*w))
			return false;
	return true;
}

static bool is_shell_operator(const char *w)
{
	static const char *const ops[] = { "&&", "||", ";", "|", "&", "(", ")", "{", "}", NULL };
	for (const char *const *o = ops; *o; o++)
		if (strcmp(w, *o) == 0)
			return true;
	return false;
}

bool tf_word_is_shell(const char *prog)
{
	static const char *const shells[] = { "sh", "bash", "dash", "zsh", "ksh", "mksh", NULL };
	for (const char *const *s = shells; *s; s++)
		if (strcmp(tf_word_base_name(prog), *s) == 0)
			return true;
	return false;
}

const char *tf_word_base_name(const char *w)
{
	const char *s = strrchr(w, '/');
	return s && s[1] ? s + 1 : w;
}

bool tf_word_is_wrapper(const char *w)
{
	static const char *const wrappers[] = { "env", "nice", "timeout", "stdbuf", "taskset",
						"time", "ionice", NULL };
	for (const char *const *p = wrappers; *p; p++)
		if (strcmp(tf_word_base_name(w), *p) == 0)
			return true;
	return false;
}

/* Whether a word only says how the command runs. */
static bool how_only(const char *w)
{
	return !*w || *w == '-' || tf_word_is_assignment(w) || is_number(w) || is_shell_operator(w);
}

struct namer {
	tf_buf out;
	size_t words;   /* after the program */
	bool program;   /* the program is in */
};

static void add_word(struct namer *n, const char *w, size_t len)
{
	char word[256];

	if (len >= sizeof(word))
		len = sizeof(word) - 1;
	memcpy(word, w, len);
	word[len] = '\0';
	/* quotes of a shell string say nothing */
	if (len >= 2 && (word[0] == '\'' || word[0] == '"') && word[len - 1] == word[0]) {
		memmove(word, word + 1, len - 2);
		word[len - 2] = '\0';
	}
	if (how_only(word))
		return;
	if (!n->program) {
		const char *b = tf_word_base_name(word);
		/* wrappers run the program after them */
		if (tf_word_is_wrapper(b))
			return;
		tf_buf_puts(&n->out, b);
		n->program = true;
		return;
	}
	if (n->words >= SUITE_WORDS || n->out.len + 1 + len > SUITE_MAX)
		return;
	tf_buf_putc(&n->out, ' ');
	tf_buf_puts(&n->out, *word == '/' ? tf_word_base_name(word) : word);
	n->words++;
}

/* The words of a shell string, split at blanks (quotes kept whole). */
static void add_shell_string(struct namer *n, const char *s)
{
	while (*s) {
		while (isspace((unsigned char)*s))
			s++;
		const char *start = s;
		char quote = 0;
		for (; *s && (quote || !isspace((unsigned char)*s)); s++) {
			if (quote && *s == quote)
				quote = 0;
			else if (!quote && (*s == '\'' || *s == '"'))
				quote = *s;
		}
		if (s > start)
			add_word(n, start, (size_t)(s - start));
	}
}

char *tf_attribute_suite_name(const char *const *argv)
{
	struct namer n = { TF_BUF_INIT, 0, false };

	if (!argv || !argv[0])
		return tf_xstrdup("tests");
	for (size_t i = 0; argv[i]; i++) {
		/* sh -c 'STRING': the string is the command */
		if (!n.program && tf_word_is_shell(argv[i]) && argv[i + 1] &&
		    strcmp(argv[i + 1], "-c") == 0 && argv[i + 2]) {
			add_shell_string(&n, argv[i + 2]);
			break;
		}
		add_word(&n, argv[i], strlen(argv[i]));
	}
	if (!n.out.len) {
		tf_buf_free(&n.out);
		return tf_xstrdup(tf_word_base_name(argv[0]));
	}
	return tf_buf_detach(&n.out);
}
