/*
 * pynames.c - the names a profile gives Python functions (python.h):
 * "toolz.itertoolz.frequencies", "tests.test_x.TestCase.test_y".
 *
 * A code object knows its qualified name (3.11+; before, only its own
 * name) and its file, not its module. The module is found the way the
 * import system made it: the file's name, inside every enclosing directory
 * that holds an __init__.py (a regular package). Before 3.11 the classes
 * and functions around a `def` are found in the source file itself, by
 * indentation, as the compiler's qualname would have it. Both read the
 * filesystem after the run, where the sources still are; what they learn is
 * cached per directory and per file.
 */
#include "testflame/python.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
	char *path;
	int value;           /* directories: has __init__.py; files: index into srcs + 1 */
} cache_entry;

typedef struct {
	tf_buf text;
	TF_VEC(uint32_t) lines; /* offset of each line's start */
} source;

struct tf_pymodcache {
	TF_VEC(cache_entry) dirs;
	tf_htab dir_index;
	TF_VEC(cache_entry) files;
	tf_htab file_index;
	TF_VEC(source *) srcs;
};

tf_pymodcache *tf_pymodcache_new(void)
{
	return tf_xcalloc(1, sizeof(tf_pymodcache));
}

void tf_pymodcache_free(tf_pymodcache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->dirs.n; i++)
		free(c->dirs.v[i].path);
	for (size_t i = 0; i < c->files.n; i++)
		free(c->files.v[i].path);
	for (size_t i = 0; i < c->srcs.n; i++) {
		if (c->srcs.v[i]) {
			tf_buf_free(&c->srcs.v[i]->text);
			tf_vec_free(&c->srcs.v[i]->lines);
			free(c->srcs.v[i]);
		}
	}
	tf_vec_free(&c->dirs);
	tf_vec_free(&c->files);
	tf_vec_free(&c->srcs);
	tf_htab_free(&c->dir_index);
	tf_htab_free(&c->file_index);
	free(c);
}

typedef struct {
	const char *s;
	size_t n;
} strkey;

static bool dir_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_pymodcache *c = ctx;
	const strkey *k = key;
	const char *p = c->dirs.v[idx].path;
	return strncmp(p, k->s, k->n) == 0 && p[k->n] == '\0';
}

static bool file_eq(const void *ctx, uint32_t idx, const void *key)
{
	const tf_pymodcache *c = ctx;
	return strcmp(c->files.v[idx].path, key) == 0;
}

/* Whether directory dir[0..n) is a regular package. */
static bool is_package(tf_pymodcache *c, const char *dir, size_t n)
{
	strkey k = { dir, n };
	uint64_t h = tf_hash_bytes(dir, n, 0);
	uint32_t i = c ? tf_htab_find(&c->dir_index, h, dir_eq, c, &k) : TF_HTAB_NONE;
	struct stat st;
	bool yes;

	if (i != TF_HTAB_NONE)
		return c->dirs.v[i].value != 0;
	char *path = tf_xasprintf("%.*s/__init__.py", (int)n, dir);
	yes = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	free(path);
	if (c) {
		cache_entry e = { tf_xstrndup(dir, n), yes };
		tf_vec_push(&c->dirs, e);
		tf_htab_insert(&c->dir_index, h, (uint32_t)c->dirs.n - 1);
	}
	return yes;
}

static bool ident_ok(const char *s, size_t n)
{
	if (!n || isdigit((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && (unsigned char)s[i] < 0x80)
			return false;
	return true;
}

void tf_py_module_name(tf_buf *out, tf_pymodcache *cache, const char *file)
{
	size_t len = strlen(file);
	const char *parts[64];
	size_t plen[64], np = 0;

	if (strncmp(file, "<frozen ", 8) == 0 && len > 9 && file[len - 1] == '>') {
		tf_buf_put(out, file + 8, len - 9);
		return;
	}
	if (len < 4 || strcmp(file + len - 3, ".py") != 0 || file[0] != '/')
		return;
	const char *slash = strrchr(file, '/');
	const char *stem = slash + 1;
	size_t stem_len = (size_t)(file + len - 3 - stem);
	if (!(stem_len == 8 && strncmp(stem, "__init__", 8) == 0)) {
		if (!ident_ok(stem, stem_len))
			return;
		parts[np] = stem;
		plen[np++] = stem_len;
	}
	/* enclosing regular packages, innermost first */
	size_t dlen = (size_t)(slash - file);
	while (dlen > 0 && np < TF_ARRAY_SIZE(parts) && is_package(cache, file, dlen)) {
		const char *ds = file + dlen;
		while (ds > file && ds[-1] != '/')
			ds--;
		if (!ident_ok(ds, (size_t)(file + dlen - ds)))
			break;
		parts[np] = ds;
		plen[np++] = (size_t)(file + dlen - ds);
		dlen = ds > file ? (size_t)(ds - 1 - file) : 0;
	}
	for (size_t i = np; i-- > 0;) {
		tf_buf_put(out, parts[i], plen[i]);
		if (i)
			tf_buf_putc(out, '.');
	}
}

/* The source of a file, split in lines; NULL when it cannot be read. */
static source *source_of(tf_pymodcache *c, const char *file)
{
	uint64_t h = tf_hash_bytes(file, strlen(file), 1);
	uint32_t i = tf_htab_find(&c->file_index, h, file_eq, c, file);
	source *s = NULL;

	if (i != TF_HTAB_NONE)
		return c->files.v[i].value ? c->srcs.v[c->files.v[i].value - 1] : NULL;
	s = tf_xcalloc(1, sizeof(*s));
	if (tf_file_read(&s->text, file) != 0 || s->text.len > (64u << 20)) {
		tf_error_clear();
		tf_buf_free(&s->text);
		free(s);
		s = NULL;
	} else {
		tf_vec_push(&s->lines, 0);
		for (size_t k = 0; k < s->text.len; k++)
			if (s->text.ptr[k] == '\n')
				tf_vec_push(&s->lines, (uint32_t)(k + 1));
	}
	tf_vec_push(&c->srcs, s);
	cache_entry e = { tf_xstrdup(file), s ? (int)c->srcs.n : 0 };
	tf_vec_push(&c->files, e);
	tf_htab_insert(&c->file_index, h, (uint32_t)c->files.n - 1);
	return s;
}

/* Line `no` (1-based) of a source: its text and length, without the
 * newline; false past the end. */
static bool line_at(const source *s, int no, const char **text, size_t *len)
{
	if (no < 1 || (size_t)no > s->lines.n)
		return false;
	uint32_t a = s->lines.v[no - 1];
	uint32_t b = (size_t)no < s->lines.n ? s->lines.v[no] - 1 : (uint32_t)s->text.len;
	if (b < a)
		b = a;
	*text = s->text.ptr + a;
	*len = b - a;
	if (*len && (*text)[*len - 1] == '\r')
		(*len)--;
	return true;
}

/* Indentation of a line (tabs to multiples of 8, as Python's tokenizer),
 * -1 for a blank or comment line. */
static int indent_of(const char *t, size_t len)
{
	int col = 0;
	for (size_t i = 0; i < len; i++) {
		if (t[i] == ' ')
			col++;
		else if (t[i] == '\t')
			col = (col / 8 + 1) * 8;
		else if (t[i] == '\f')
			col = 0;
		else
			return t[i] == '#' ? -1 : col;
	}
	return -1;
}

/* "def NAME", "async def NAME" or "class NAME" at the start of a line:
 * the keyword's kind ('d' or 'c') and the name. */
static char block_head(const char *t, size_t len, const char **name, size_t *nlen)
{
	size_t i = 0;
	char kind;
	while (i < len && (t[i] == ' ' || t[i] == '\t'))
		i++;
	if (len - i > 6 && strncmp(t + i, "async", 5) == 0 && (t[i + 5] == ' ' || t[i + 5] == '\t')) {
		i += 5;
		while (i < len && (t[i] == ' ' || t[i] == '\t'))
			i++;
	}
	if (len - i > 4 && strncmp(t + i, "def", 3) == 0 && (t[i + 3] == ' ' || t[i + 3] == '\t')) {
		kind = 'd';
		i += 3;
	} else if (len - i > 6 && strncmp(t + i, "class", 5) == 0 &&
		   (t[i + 5] == ' ' || t[i + 5] == '\t')) {
		kind = 'c';
		i += 5;
	} else {
		return 0;
	}
	while (i < len && (t[i] == ' ' || t[i] == '\t'))
		i++;
	size_t s = i;
	while (i < len && (isalnum((unsigned char)t[i]) || t[i] == '_' || (unsigned char)t[i] >= 0x80))
		i++;
	if (i == s)
		return 0;
	*name = t + s;
	*nlen = i - s;
	return kind;
}

typedef struct {
	const char *n;
	size_t l;
	char kind;
} block;

bool tf_py_qualname_from_source(tf_buf *out, tf_pymodcache *cache, const char *file,
				const char *name, int firstlineno)
{
	tf_pymodcache *own = cache ? NULL : tf_pymodcache_new();
	tf_pymodcache *c = cache ? cache : own;
	source *s = source_of(c, file);
	const char *t, *hn;
	size_t len, hl, nl = strlen(name);
	int at = 0, ind = -1;
	bool ok = false;

	if (!s)
		goto done;
	/* the def or class itself: at firstlineno, or below its decorators */
	for (int no = firstlineno; no < firstlineno + 64 && line_at(s, no, &t, &len); no++) {
		if (!block_head(t, len, &hn, &hl))
			continue; /* decorators, their arguments, comments */
		if (hl == nl && memcmp(hn, name, nl) == 0) {
			at = no;
			ind = indent_of(t, len);
		}
		break;
	}
	if (!at) {
		/* a lambda or comprehension: named from where it starts */
		if (!line_at(s, firstlineno, &t, &len) || name[0] != '<')
			goto done;
		at = firstlineno;
		ind = indent_of(t, len);
		if (ind < 0)
			goto done;
		ind++;
	}
	/* the blocks around it, innermost first */
	TF_VEC(block) outer = { 0 };
	for (int no = at - 1; no >= 1 && ind > 0 && line_at(s, no, &t, &len); no--) {
		int i2 = indent_of(t, len);
		char kind;
		if (i2 < 0 || i2 >= ind)
			continue;
		ind = i2;
		kind = block_head(t, len, &hn, &hl);
		if (kind) {
			block o = { hn, hl, kind };
			tf_vec_push(&outer, o);
		}
	}
	for (size_t i = outer.n; i-- > 0;) {
		tf_buf_put(out, outer.v[i].n, outer.v[i].l);
		tf_buf_puts(out, outer.v[i].kind == 'd' ? ".<locals>." : ".");
	}
	tf_buf_puts(out, name);
	tf_vec_free(&outer);
	ok = true;
done:
	tf_pymodcache_free(own);
	return ok;
}
