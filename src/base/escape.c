/*
 * escape.c - turning untrusted text (function names, test names, paths,
 * command lines) into bytes that are safe in the formats testflame writes.
 *
 * Names come from the profiled code and from other tools' files: they may
 * hold quotes, control characters or bytes that are not UTF-8 at all. A JSON
 * document with one invalid byte is rejected whole by strict readers, and a
 * control character in a terminal table can rewrite the screen, so every
 * writer goes through these instead of copying names verbatim.
 */
#include "testflame/common.h"

#include <string.h>

/*
 * Length of the valid UTF-8 sequence at s (at most `len` bytes), or 0 when
 * the bytes there are not one: overlong forms, surrogates and code points
 * above U+10FFFF count as invalid, as RFC 3629 says.
 */
static size_t utf8_seq(const unsigned char *s, size_t len)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

bool tf_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	for (size_t i = 0; i < len;) {
		size_t n = utf8_seq(p + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

void tf_buf_put_utf8(tf_buf *b, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run = 0;

	while (i < len) {
		size_t n = utf8_seq(p + i, len - i);
		if (n) {
			i += n;
			continue;
		}
		tf_buf_put(b, s + run, i - run);
		tf_buf_puts(b, "\xef\xbf\xbd"); /* U+FFFD */
		run = ++i;
	}
	tf_buf_put(b, s + run, len - run);
}

void tf_buf_put_json(tf_buf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p), i = 0, run = 0;

	tf_buf_putc(b, '"');
	while (i < len) {
		unsigned char c = p[i];
		const char *esc = NULL;
		char u[7];
		size_t n;

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			n = utf8_seq(p + i, len - i);
			if (n) {
				i += n;
				continue;
			}
			esc = "\\ufffd";
		} else if (c == '"') {
			esc = "\\\"";
		} else if (c == '\\') {
			esc = "\\\\";
		} else if (c == '\n') {
			esc = "\\n";
		} else if (c == '\t') {
			esc = "\\t";
		} else if (c == '\r') {
			esc = "\\r";
		} else {
			memcpy(u, "\\u00", 4);
			u[4] = hex[c >> 4];
			u[5] = hex[c & 15];
			u[6] = '\0';
			esc = u;
		}
		tf_buf_put(b, p + run, i - run);
		tf_buf_puts(b, esc);
		run = ++i;
	}
	tf_buf_put(b, p + run, len - run);
	tf_buf_putc(b, '"');
}

void tf_buf_put_printable(tf_buf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t len = strlen((const char *)p), i = 0, run = 0;

	while (i < len) {
		unsigned char c = p[i];
		size_t n;

		if (c >= 0x20 && c < 0x7f) {
			i++;
			continue;
		}
		if (c >= 0x80 && (n = utf8_seq(p + i, len - i)) != 0) {
			/* C1 controls (U+0080..U+009F) steer terminals too */
			if (!(n == 2 && c == 0xc2 && p[i + 1] < 0xa0)) {
				i += n;
				continue;
			}
		}
		tf_buf_put(b, p + run, i - run);
		if (c == '\n')
			tf_buf_puts(b, "\\n");
		else if (c == '\t')
			tf_buf_puts(b, "\\t");
		else
			tf_buf_printf(b, "\\x%02x", c);
		run = ++i;
	}
	tf_buf_put(b, p + run, len - run);
}

int tf_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}
