/*
 * changes.c - the files and lines changed between the merge-base and HEAD:
 * their compact JSON form (kept in the run file's metadata, so `publish`
 * can annotate changed lines long after `record` ran) and the lookup of a
 * profile's file:line among them.
 */
#include "testflame/context.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

void tf_changes_free(tf_changes *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->files.n; i++) {
		free(c->files.v[i].path);
		free(c->files.v[i].old_path);
		tf_vec_free(&c->files.v[i].lines);
	}
	tf_vec_free(&c->files);
}

/* Git paths are bytes; JSON strings are UTF-8. An invalid sequence becomes
 * '?' rather than losing the whole file. */
static json_t *path_json(const char *path)
{
	json_t *s = json_string(path);
	if (!s) {
		char *copy = tf_xstrdup(path);
		for (char *c = copy; *c; c++)
			if ((unsigned char)*c >= 0x80)
				*c = '?';
		s = json_string(copy);
		free(copy);
	}
	return s;
}

static json_t *file_json(const tf_changed_file *f)
{
	json_t *o = json_object(), *lines = json_array();
	char st[2] = { f->status ? f->status : 'M', '\0' };

	json_object_set_new(o, "path", path_json(f->path));
	if (f->old_path)
		json_object_set_new(o, "old_path", path_json(f->old_path));
	json_object_set_new(o, "status", json_string(st));
	if (f->binary)
		json_object_set_new(o, "binary", json_true());
	for (size_t i = 0; i < f->lines.n; i++) {
		const tf_line_range *r = &f->lines.v[i];
		json_array_append_new(lines, json_pack("[II]", (json_int_t)r->start,
						       (json_int_t)(r->start + r->count - 1)));
	}
	json_object_set_new(o, "lines", lines);
	return o;
}

int tf_changes_to_json(tf_buf *out, const tf_changes *c, size_t max_bytes, bool *truncated)
{
	size_t start = out->len;

	if (truncated)
		*truncated = false;
	tf_buf_putc(out, '[');
	for (size_t i = 0; i < c->files.n; i++) {
		json_t *o = file_json(&c->files.v[i]);
		char *s = json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII);
		json_decref(o);
		if (!s)
			return tf_error_set(TF_EINVAL, "cannot encode the changed file '%s' as JSON",
					    c->files.v[i].path);
		/* room for this file, its comma and the closing bracket */
		if (max_bytes && out->len - start + strlen(s) + 2 > max_bytes) {
			free(s);
			if (truncated)
				*truncated = true;
			break;
		}
		if (i)
			tf_buf_putc(out, ',');
		tf_buf_puts(out, s);
		free(s);
	}
	tf_buf_putc(out, ']');
	return 0;
}

int tf_changes_from_json(tf_changes *out, const char *text)
{
	json_error_t err;
	json_t *root = json_loads(text, 0, &err), *f;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (!root)
		return tf_error_set(TF_EINVAL, "changed lines: %d:%d: %s", err.line, err.column, err.text);
	if (!json_is_array(root)) {
		json_decref(root);
		return tf_error_set(TF_EINVAL, "changed lines: not a JSON array");
	}
	json_array_foreach(root, i, f) {
		json_t *path = json_object_get(f, "path"), *old = json_object_get(f, "old_path");
		json_t *st = json_object_get(f, "status"), *lines = json_object_get(f, "lines"), *r;
		tf_changed_file cf = { 0 };
		size_t j;

		if (!json_is_string(path) || (lines && !json_is_array(lines))) {
			json_decref(root);
			tf_changes_free(out);
			return tf_error_set(TF_EINVAL, "changed lines: entry %zu has no path", i);
		}
		cf.path = tf_xstrdup(json_string_value(path));
		if (json_is_string(old))
			cf.old_path = tf_xstrdup(json_string_value(old));
		cf.status = json_is_string(st) && json_string_length(st) ? json_string_value(st)[0] : 'M';
		cf.binary = json_is_true(json_object_get(f, "binary"));
		json_array_foreach(lines, j, r) {
			json_int_t a, b;
			if (json_unpack(r, "[II]", &a, &b) < 0 || a < 1 || b < a || b > UINT32_MAX)
				continue;
			tf_line_range lr = { (uint32_t)a, (uint32_t)(b - a + 1) };
			tf_vec_push(&cf.lines, lr);
		}
		tf_vec_push(&out->files, cf);
	}
	json_decref(root);
	return 0;
}

/* `path` names `rel` itself, or ends with "/" + rel (an absolute path from
 * debug info, or one relative to a build directory). */
static bool path_matches(const char *path, const char *rel)
{
	size_t n = strlen(path), m = strlen(rel);
	if (n == m)
		return strcmp(path, rel) == 0;
	return n > m && path[n - m - 1] == '/' && strcmp(path + n - m, rel) == 0;
}

const tf_changed_file *tf_changes_find(const tf_changes *c, const char *path)
{
	const tf_changed_file *best = NULL;
	/* the longest matching path wins: "a/util.c" over "util.c" */
	for (size_t i = 0; i < c->files.n; i++) {
		const tf_changed_file *f = &c->files.v[i];
		if (f->status != 'D' && path_matches(path, f->path) &&
		    (!best || strlen(f->path) > strlen(best->path)))
			best = f;
	}
	return best;
}

bool tf_changes_touch(const tf_changes *c, const char *path, uint32_t line)
{
	const tf_changed_file *f = tf_changes_find(c, path);
	if (!f)
		return false;
	for (size_t i = 0; i < f->lines.n; i++)
		if (line >= f->lines.v[i].start && line < f->lines.v[i].start + f->lines.v[i].count)
			return true;
	return false;
}
