/*
 * folded.c - folded stacks ("root;child;leaf 42"), the text format of
 * FlameGraph's stackcollapse scripts and of most flame graph tools, and the
 * format sniffing loader that opens any profile a user hands us.
 *
 * The two-column form ("stack 10 12", FlameGraph's difffolded.pl) is read as
 * a profile with two sample types, "base" and "head".
 */
#include "profile/profile_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static bool parse_count(const char *s, size_t len, int64_t *out)
{
	int64_t v = 0;
	size_t i = 0;

	if (len == 0)
		return false;
	for (; i < len; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		if (v > (INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

/* Split off the last space-separated token of [s, s+*len). */
static bool last_token(const char *s, size_t *len, const char **tok, size_t *toklen)
{
	size_t e = *len;
	while (e > 0 && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	size_t b = e;
	while (b > 0 && s[b - 1] != ' ' && s[b - 1] != '\t')
		b--;
	if (b == e || b == 0)
		return false;
	*tok = s + b;
	*toklen = e - b;
	while (b > 0 && (s[b - 1] == ' ' || s[b - 1] == '\t'))
		b--;
	*len = b;
	return true;
}

int tf_folded_decode(tf_profile **out, const char *text, size_t len, const char *name)
{
	tf_profile *p;
	TF_VEC(uint32_t) locs = { 0 };
	int columns = 0, rc = 0;
	size_t lineno = 0;
	int64_t total[2] = { 0, 0 };
	const char *s = text, *end = text + len;

	*out = NULL;
	tf_profile_new(&p);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		size_t l = nl ? (size_t)(nl - s) : (size_t)(end - s);
		const char *tok;
		size_t toklen, stacklen = l;
		int64_t v[2] = { 0, 0 };
		int ncol = 1;

		lineno++;
		if (l && s[l - 1] == '\r')
			stacklen = --l;
		if (l == 0 || s[0] == '#')
			goto next;
		if (!last_token(s, &stacklen, &tok, &toklen) || !parse_count(tok, toklen, &v[0])) {
			rc = tf_error_set(TF_EINVAL, "%s:%zu: expected 'frame;frame;... COUNT'",
					  name, lineno);
			goto done;
		}
		{
			size_t l2 = stacklen;
			const char *tok2;
			size_t tok2len;
			int64_t v0;
			if (columns != 1 && last_token(s, &l2, &tok2, &tok2len) &&
			    parse_count(tok2, tok2len, &v0)) {
				v[1] = v[0];
				v[0] = v0;
				stacklen = l2;
				ncol = 2;
			}
		}
		if (!columns) {
			columns = ncol;
			if (columns == 1) {
				tf_profile_add_sample_type(p, "samples", "count");
			} else {
				tf_profile_add_sample_type(p, "base", "count");
				tf_profile_add_sample_type(p, "head", "count");
			}
		} else if (columns != ncol) {
			rc = tf_error_set(TF_EINVAL, "%s:%zu: expected %d count column%s", name,
					  lineno, columns, columns == 1 ? "" : "s");
			goto done;
		}
		/* merging equal stacks sums their counts: bounded, never overflowing */
		for (int c = 0; c < columns; c++) {
			if (v[c] > TF_PROFILE_TOTAL_MAX - total[c]) {
				rc = tf_error_set(TF_EINVAL, "%s:%zu: the counts add up to more than "
						  "2^52", name, lineno);
				goto done;
			}
			total[c] += v[c];
		}
		/* frames, root first in the file; samples are leaf first */
		locs.n = 0;
		for (size_t b = 0; b < stacklen;) {
			size_t e = b;
			while (e < stacklen && s[e] != ';')
				e++;
			if (e > b) {
				tf_strid nm = tf_profile_intern_len(p, s + b, e - b);
				tf_line ln = { tf_profile_add_function(p, nm, nm, 0, 0), 0, 0 };
				tf_vec_push(&locs, tf_profile_add_location(p, TF_NO_MAPPING, 0, &ln, 1));
			}
			b = e + 1;
		}
		for (size_t i = 0; i < locs.n / 2; i++) {
			uint32_t t = locs.v[i];
			locs.v[i] = locs.v[locs.n - 1 - i];
			locs.v[locs.n - 1 - i] = t;
		}
		tf_profile_add_sample(p, locs.v, (uint32_t)locs.n, v, NULL, 0);
next:
		s = nl ? nl + 1 : end;
	}
	if (!columns) {
		rc = tf_error_set(TF_EINVAL, "%s: no stacks found", name);
		goto done;
	}
	tf_profile_set_meta(p, "format", "folded");
done:
	tf_vec_free(&locs);
	if (rc) {
		tf_profile_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

/* A frame name as it may appear in a line: no ';' (the separator), no line
 * breaks or tabs. */
static char *frame_text(const char *name)
{
	char *t = tf_xstrdup(*name ? name : "??");
	for (char *c = t; *c; c++) {
		if (*c == ';')
			*c = ':';
		else if (*c == '\n' || *c == '\r' || *c == '\t')
			*c = ' ';
	}
	return t;
}

struct stack_key {
	const uint32_t *locs;
	uint32_t n;
};

struct stack_sum {
	uint32_t off, n; /* into the pool */
	int64_t sum;
};

struct stack_table {
	const struct stack_sum *stacks;
	const uint32_t *pool;
};

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct stack_table *t = ctx;
	const struct stack_sum *s = &t->stacks[idx];
	const struct stack_key *k = key;
	return s->n == k->n && (!k->n || memcmp(t->pool + s->off, k->locs, k->n * sizeof(uint32_t)) == 0);
}

static bool same_functions(const void *ctx, uint32_t idx, const void *key)
{
	const tf_profile *p = ctx;
	return tf_location_same_functions(p, &p->locations.v[idx], key);
}

/* For each location, the first location that renders alike: the same
 * functions, inlined ones included (a location without lines renders as
 * its address, alike only to itself). */
static uint32_t *render_ids(const tf_profile *p)
{
	uint32_t *id = tf_xmalloc((p->locations.n + 1) * sizeof(*id));
	tf_htab index = { 0 };

	for (size_t i = 0; i < p->locations.n; i++) {
		const tf_location *l = &p->locations.v[i];
		id[i] = (uint32_t)i;
		if (!l->nlines)
			continue;
		uint64_t h = tf_location_functions_hash(p, l, 0);
		uint32_t first = tf_htab_find(&index, h, same_functions, p, l);
		if (first == TF_HTAB_NONE)
			tf_htab_insert(&index, h, (uint32_t)i);
		else
			id[i] = first;
	}
	tf_htab_free(&index);
	return id;
}

/*
 * Samples are first summed per distinct stack of what they render as
 * (cheap: arrays of integers; stacks whose leaves are at different
 * instructions of one function are one), then each distinct stack is
 * rendered once; stacks that still render alike (two call sites of one
 * function) meet again in the table of lines. Rendering per sample instead
 * would build and hash a line for each of a million samples.
 */
int tf_folded_write(tf_buf *out, const tf_profile *p, size_t value_index,
		    const char *label_key, const char *label_value)
{
	TF_VEC(struct stack_sum) stacks = { 0 };
	TF_VEC(uint32_t) pool = { 0 };
	TF_VEC(int64_t) sums = { 0 };
	tf_htab index = { 0 };
	tf_strtab lines;
	tf_buf line = TF_BUF_INIT;
	char **names;
	uint8_t *mask = NULL;
	size_t nv = p->sample_types.n;
	uint32_t *rid;
	TF_VEC(uint32_t) key = { 0 };

	if (value_index >= nv)
		return tf_error_set(TF_EINVAL, "the profile has no value column %zu", value_index);
	if (label_key)
		mask = tf_profile_label_mask(p, label_key, label_value);
	rid = render_ids(p);
	for (size_t i = 0; i < p->samples.n; i++) {
		const tf_sample *s = &p->samples.v[i];
		int64_t v = p->values.v[i * nv + value_index];
		if (v == 0 || (mask && !mask[i]))
			continue;
		const uint32_t *locs = p->stack.v + s->locs_off;
		tf_vec_reserve(&key, (size_t)s->nlocs + 1);
		for (uint32_t j = 0; j < s->nlocs; j++)
			key.v[j] = rid[locs[j]];
		struct stack_key k = { key.v, s->nlocs };
		uint64_t h = tf_hash_bytes(k.locs, k.n * sizeof(uint32_t), k.n);
		struct stack_table t = { stacks.v, pool.v };
		uint32_t idx = tf_htab_find(&index, h, stack_eq, &t, &k);
		if (idx == TF_HTAB_NONE) {
			struct stack_sum ss = { (uint32_t)pool.n, k.n, 0 };
			tf_vec_reserve(&pool, pool.n + k.n + 1); /* never NULL, for v + off */
			if (k.n)
				memcpy(pool.v + pool.n, k.locs, k.n * sizeof(uint32_t));
			pool.n += k.n;
			idx = (uint32_t)stacks.n;
			tf_vec_push(&stacks, ss);
			tf_htab_insert(&index, h, idx);
		}
		stacks.v[idx].sum += v;
	}

	names = tf_xcalloc(p->functions.n + 1, sizeof(*names));
	tf_strtab_init(&lines);
	tf_vec_push(&sums, 0);
	for (size_t i = 0; i < stacks.n; i++) {
		const struct stack_sum *ss = &stacks.v[i];
		bool first = true;
		tf_buf_clear(&line);
		for (uint32_t k = ss->n; k-- > 0;) {
			const tf_location *l = &p->locations.v[pool.v[ss->off + k]];
			if (l->nlines == 0) {
				tf_buf_printf(&line, "%s0x%llx", first ? "" : ";",
					      (unsigned long long)l->address);
				first = false;
			}
			for (uint32_t j = l->nlines; j-- > 0;) {
				uint32_t fi = p->lines.v[l->lines_off + j].function;
				if (!names[fi])
					names[fi] = frame_text(tf_profile_str(p, p->functions.v[fi].name));
				if (!first)
					tf_buf_putc(&line, ';');
				tf_buf_puts(&line, names[fi]);
				first = false;
			}
		}
		if (first)
			tf_buf_puts(&line, "[unknown]");
		uint32_t id = tf_strtab_intern(&lines, line.ptr, line.len);
		if (id >= sums.n)
			tf_vec_push(&sums, 0);
		sums.v[id] += ss->sum;
	}
	for (size_t i = 1; i < lines.strs.n; i++)
		tf_buf_printf(out, "%s %lld\n", lines.strs.v[i], (long long)sums.v[i]);

	for (size_t i = 0; i < p->functions.n; i++)
		free(names[i]);
	free(names);
	free(mask);
	free(rid);
	tf_vec_free(&key);
	tf_buf_free(&line);
	tf_vec_free(&sums);
	tf_vec_free(&stacks);
	tf_vec_free(&pool);
	tf_htab_free(&index);
	tf_strtab_free(&lines);
	return 0;
}

/* Control bytes other than tab, CR and LF among the first `n`; NULs apart. */
static size_t control_bytes(const unsigned char *p, size_t n, size_t *nuls)
{
	size_t c = 0;
	*nuls = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == 0)
			(*nuls)++;
		if (p[i] < 0x09 || (p[i] > 0x0d && p[i] < 0x20) || p[i] == 0x7f)
			c++;
	}
	return c;
}

tf_profile_format tf_profile_sniff(const void *data, size_t len)
{
	size_t nuls;

	if (len == 0)
		return TF_FORMAT_UNKNOWN;
	return control_bytes(data, TF_MIN(len, (size_t)4096), &nuls) ? TF_FORMAT_PPROF
								      : TF_FORMAT_FOLDED;
}

/*
 * Text with a stray control character (a name holding \x01) sniffs as
 * binary; if it has no NUL byte and few control bytes, it was meant as text.
 */
static bool mostly_text(const void *data, size_t len)
{
	size_t n = TF_MIN(len, (size_t)4096), nuls;
	size_t c = control_bytes(data, n, &nuls);
	return nuls == 0 && (c <= 16 || c * 100 <= n) && memchr(data, '\n', n) != NULL;
}

int tf_profile_load(tf_profile **out, const char *path)
{
	tf_buf file = TF_BUF_INIT, raw = TF_BUF_INIT;
	const char *data;
	size_t len;
	int rc;

	*out = NULL;
	rc = tf_file_read(&file, path);
	if (rc)
		goto done;
	data = file.ptr;
	len = file.len;
	if (len == 0) {
		rc = tf_error_set(TF_EINVAL, "'%s' is empty", path);
		goto done;
	}
	if (tf_is_gzip(data, len)) {
		char *what = tf_xasprintf("'%s'", path);
		rc = tf_gunzip(&raw, data, len, what);
		free(what);
		if (rc)
			goto done;
		data = raw.ptr;
		len = raw.len;
		if (len == 0) {
			rc = tf_error_set(TF_EINVAL, "'%s' is empty once decompressed", path);
			goto done;
		}
	}
	bool gz = raw.ptr != NULL;
	if (gz && len > 262 && memcmp(data + 257, "ustar", 5) == 0) {
		rc = tf_error_set(TF_EINVAL, "'%s': a gzip-compressed tar archive, not a profile "
				  "(give one of the files in it)", path);
		goto done;
	}
	switch (tf_profile_sniff(data, len)) {
	case TF_FORMAT_FOLDED:
		rc = tf_folded_decode(out, data, len, path);
		break;
	case TF_FORMAT_PPROF:
		rc = tf_pprof_decode(out, data, len);
		if (!rc && data != file.ptr)
			tf_profile_keep_source(*out, &file);
		if (rc && mostly_text(data, len))
			rc = tf_folded_decode(out, data, len, path);
		else if (rc && gz) {
			/* what the file is, then why the pprof reader refused it */
			const char *why = tf_error_last();
			const char *pre = "not a valid pprof profile";
			char *w = tf_xstrdup(strncmp(why, pre, strlen(pre)) == 0 ? why + strlen(pre)
										  : why);
			rc = tf_error_set(rc, "'%s': gzip data that is not a pprof profile%s%s", path,
					  *w == ' ' || !*w ? "" : ": ", w);
			free(w);
		}
		else if (rc)
			tf_error_wrap(rc, "'%s'", path);
		break;
	default:
		rc = tf_error_set(TF_EINVAL, "'%s': not a profile", path);
	}
	if (rc && !*out) {
		/* text that fails on its first line was never folded stacks */
		char *first = tf_xasprintf("%s:1: ", path);
		const char *msg = tf_error_last();
		if (strncmp(msg, first, strlen(first)) == 0) {
			char *why = tf_xstrdup(msg + strlen(first));
			rc = gz ? tf_error_set(rc, "'%s': gzip data that is not a pprof profile, nor "
					       "folded stacks (line 1: %s)", path, why)
				: tf_error_set(rc, "'%s' is not a pprof profile, nor folded stacks (line "
					       "1: %s)", path, why);
			free(why);
		}
		free(first);
	}
done:
	tf_buf_free(&file);
	tf_buf_free(&raw);
	return rc;
}
