/*
 * markup.c - untrusted names into the report formats. Test, function and
 * file names come from the code being profiled: they can hold "<script>",
 * quotes, pipes, backticks, "@someone", newlines, "]]>", bytes that are not
 * UTF-8, or ten kilobytes of text. Every writer cleans a name first (one
 * rule for all formats: valid UTF-8, no control or bidi-override
 * characters, shortened in the middle when too long) and then escapes it
 * for its format here, so a name can never become markup, a table border,
 * a mention, a second line of a workflow command or a script.
 */
#include "report/report_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Decode one code point of valid UTF-8 (the caller repaired the text). */
static size_t decode(const unsigned char *s, uint32_t *cp)
{
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] < 0xe0) {
		*cp = ((uint32_t)(s[0] & 0x1f) << 6) | (s[1] & 0x3f);
		return 2;
	}
	if (s[0] < 0xf0) {
		*cp = ((uint32_t)(s[0] & 0x0f) << 12) | ((uint32_t)(s[1] & 0x3f) << 6) | (s[2] & 0x3f);
		return 3;
	}
	*cp = ((uint32_t)(s[0] & 0x07) << 18) | ((uint32_t)(s[1] & 0x3f) << 12) |
	      ((uint32_t)(s[2] & 0x3f) << 6) | (s[3] & 0x3f);
	return 4;
}

/* Characters that steer a terminal or reorder what a reader sees. */
static bool unwanted(uint32_t cp)
{
	return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
	       (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
	       cp == 0xfeff;
}

char *rp_clean(const char *s, size_t max)
{
	tf_buf valid = TF_BUF_INIT, out = TF_BUF_INIT;
	size_t ncp = 0;

	if (!s)
		s = "";
	tf_buf_put_utf8(&valid, s, strlen(s));
	tf_buf_put(&valid, "", 0);
	const unsigned char *p = (const unsigned char *)valid.ptr;
	for (size_t i = 0; i < valid.len; ncp++)
		i += decode(p + i, &(uint32_t){ 0 });

	/* keep a third of the budget from the start, the rest from the end:
	 * the end of a qualified name is the function itself */
	size_t head = ncp, tail = 0;
	if (max && ncp > max) {
		head = max > 2 ? (max - 1) / 3 : max;
		tail = max > 2 ? max - 1 - head : 0;
	}
	size_t k = 0;
	for (size_t i = 0; i < valid.len; k++) {
		uint32_t cp;
		size_t n = decode(p + i, &cp);
		if (k < head || k >= ncp - tail) {
			if (unwanted(cp))
				tf_buf_puts(&out, "\xef\xbf\xbd");
			else
				tf_buf_put(&out, p + i, n);
		} else if (k == head) {
			tf_buf_puts(&out, "\xe2\x80\xa6");
		}
		i += n;
	}
	tf_buf_put(&out, "", 0);
	tf_buf_free(&valid);
	return tf_buf_detach(&out);
}

void rp_put_html(tf_buf *b, const char *s, size_t max)
{
	char *c = rp_clean(s, max);
	for (const char *p = c; *p; p++) {
		switch (*p) {
		case '&': tf_buf_puts(b, "&amp;"); break;
		case '<': tf_buf_puts(b, "&lt;"); break;
		case '>': tf_buf_puts(b, "&gt;"); break;
		case '"': tf_buf_puts(b, "&quot;"); break;
		case '\'': tf_buf_puts(b, "&apos;"); break;
		default: tf_buf_putc(b, *p);
		}
	}
	free(c);
}

static bool word_char(unsigned char c)
{
	return c >= 0x80 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/*
 * Markdown's active characters, escaped where they could act and nowhere
 * else, so `lib.c:30` and `__libc_start_main` read (and grep) as they are:
 *   always    & < > (HTML), | (a table cell), ` (a code span), [ (a link or
 *             image), \ (an escape), * and ~ (emphasis, strikethrough,
 *             even inside a word), $ (math)
 *   _         unless inside a word: intraword _ opens no emphasis
 *   @         before a letter or digit: a mention, or an e-mail autolink
 *   :         before "//": an URL autolink
 *   .         after "www": a www autolink
 * A line never starts with a name, so # + - = and digits (block markup)
 * need nothing. `text`: outside <code>, where a host turns "@name" into a
 * mention whatever its escaping: a word joiner after the @ keeps it text.
 */
static void put_md(tf_buf *b, const char *s, size_t max, bool text)
{
	char *c = rp_clean(s, max);
	const unsigned char *p = (const unsigned char *)c;

	for (size_t i = 0; p[i]; i++) {
		unsigned char ch = p[i], prev = i ? p[i - 1] : 0, next = p[i + 1];
		bool esc;
		switch (ch) {
		case '&': case '<': case '>': case '|': case '`': case '[': case '\\':
		case '*': case '~': case '$':
			esc = true;
			break;
		case '_':
			esc = !(prev && word_char(prev) && word_char(next));
			break;
		case '@':
			esc = word_char(next);
			if (esc && text) {
				tf_buf_puts(b, "@\xe2\x81\xa0"); /* U+2060 */
				continue;
			}
			break;
		case ':':
			esc = next == '/' && p[i + 2] == '/';
			break;
		case '.':
			esc = i >= 3 && (p[i - 1] | 0x20) == 'w' && (p[i - 2] | 0x20) == 'w' &&
			      (p[i - 3] | 0x20) == 'w';
			break;
		default:
			esc = false;
		}
		if (esc)
			tf_buf_printf(b, "&#%d;", ch);
		else
			tf_buf_putc(b, (char)ch);
	}
	free(c);
}

void rp_put_md(tf_buf *b, const char *s, size_t max)
{
	put_md(b, s, max, false);
}

void rp_put_md_text(tf_buf *b, const char *s, size_t max)
{
	put_md(b, s, max, true);
}

void rp_put_json(tf_buf *b, const char *s, size_t max)
{
	char *c = rp_clean(s, max);
	tf_buf_put_json(b, c);
	free(c);
}

void rp_put_json_html(tf_buf *b, const char *s, size_t max)
{
	char *c = rp_clean(s, max);
	tf_buf_putc(b, '"');
	for (const unsigned char *p = (const unsigned char *)c; *p; p++) {
		switch (*p) {
		case '"': tf_buf_puts(b, "\\\""); break;
		case '\\': tf_buf_puts(b, "\\\\"); break;
		case '<': tf_buf_puts(b, "\\u003c"); break;
		case '>': tf_buf_puts(b, "\\u003e"); break;
		case '&': tf_buf_puts(b, "\\u0026"); break;
		default:
			/* U+2028 and U+2029 end a line in older JavaScript */
			if (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xa8 || p[2] == 0xa9)) {
				tf_buf_puts(b, p[2] == 0xa8 ? "\\u2028" : "\\u2029");
				p += 2;
			} else {
				tf_buf_putc(b, (char)*p);
			}
		}
	}
	tf_buf_putc(b, '"');
	free(c);
}

void rp_put_url_path(tf_buf *b, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    *p == '-' || *p == '.' || *p == '_' || *p == '~' || *p == '/') {
			tf_buf_putc(b, (char)*p);
		} else {
			tf_buf_putc(b, '%');
			tf_buf_putc(b, hex[*p >> 4]);
			tf_buf_putc(b, hex[*p & 15]);
		}
	}
}

void rp_put_text(tf_buf *b, const char *s, size_t max)
{
	char *c = rp_clean(s, max);
	tf_buf_puts(b, c);
	free(c);
}

void rp_cost(char *buf, size_t len, double v, const char *unit)
{
	if (v == 0)
		snprintf(buf, len, "0");
	else
		tf_compare_format_cost(buf, len, v, unit);
}

void rp_signed_cost(char *buf, size_t len, double v, const char *unit)
{
	char tmp[48];
	if (!isfinite(v)) {
		snprintf(buf, len, "-");
		return;
	}
	if (v == 0) {
		snprintf(buf, len, "0");
		return;
	}
	tf_compare_format_cost(tmp, sizeof(tmp), fabs(v), unit);
	snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", tmp);
}

void rp_pct(char *buf, size_t len, double pct)
{
	if (!isfinite(pct))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%+.1f%%", pct);
}
