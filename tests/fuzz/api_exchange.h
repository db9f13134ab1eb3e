/*
 * api_exchange.h - the GitHub and GitLab API response fuzz targets'
 * shared part: a real HTTP server on the loopback interface, in a thread
 * of the fuzzer, that answers testflame's requests with the responses the
 * input describes; and the publisher (tf_publish_post(), the real libcurl
 * client) posting a PR comment and review comments to it. Everything
 * testflame reads of an API answer goes through here: the status, the
 * headers its callback keeps (Link, X-Next-Page, Retry-After, rate
 * limits, Location), the JSON bodies of listings, of errors and of what
 * it created.
 *
 * The input is the responses in order, separated by FUZZ_SEP; each is
 *
 *     STATUS                 (a number; else 200; 1xx: a 100 Continue first)
 *     Header: value          (any number of lines)
 *                            (an empty line)
 *     body
 *
 * sent with its Content-Length and "Connection: close" (the server frames
 * the response, so no input can make the client wait for bytes that never
 * come). Requests beyond the input get no answer (the connection closes).
 *
 * Two ways to deliver them. FUZZ_API_HTTP=1 in the environment: the server
 * on loopback and libcurl, as in a real job. Else (the long runs: a TCP
 * connection per request would take most of the time, 1,300 inputs a
 * second against 10,000 and more) the same responses handed over in the
 * process through tf_publish_opts.http.exchange, read by the same code of
 * testflame's after libcurl. make test replays the seeds and the crash
 * inputs over HTTP.
 * In headers and bodies {ORIGIN} becomes the server's http://127.0.0.1:PORT
 * (for pagination links), {MARKER} the sticky comment's marker line,
 * {BODY} the comment testflame posts (JSON-escaped), {REVIEW} the marker of
 * its first review comment and {REVIEW_BODY} that comment, so that the
 * fuzzer reaches the paths of comments found again.
 *
 * Beyond not crashing: the token never appears in an error, a note or a
 * log line, and an error is one line.
 *
 * FUZZ_API_LOG=1 in the environment prints the requests and the outcome,
 * to see what an input (a new seed) does.
 */
#ifndef TESTFLAME_FUZZ_API_EXCHANGE_H
#define TESTFLAME_FUZZ_API_EXCHANGE_H

#include "fuzz.h"
#include "testflame/compare.h"
#include "testflame/publish.h"
#include "testflame/report.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <pthread.h>
#include <strings.h>
#include <sys/socket.h>

#define API_TOKEN "fz-TOKEN-5ecret-0123456789"
#define API_SUITE "unit"
#define API_PERIOD 10000000

static struct {
	bool http;                 /* FUZZ_API_HTTP: the loopback server */
	bool ready;
	int fd;
	char origin[64];
	pthread_mutex_t mu;
	fuzz_parts parts;          /* the current input's responses */
	tf_buf subst[5][2];        /* {NAME} -> text */
	tf_comparison *c;
	tf_profile *base, *head;
	tf_changes changes;
	tf_report_opts report;
	char *body;
} api = { .fd = -1, .mu = PTHREAD_MUTEX_INITIALIZER };

static void api_send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Append `s` (n bytes) with the {NAME}s replaced. */
static void api_expand(tf_buf *out, const char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		bool done = false;
		for (size_t k = 0; k < TF_ARRAY_SIZE(api.subst) && s[i] == '{'; k++) {
			const tf_buf *name = &api.subst[k][0];
			if (name->len && name->len <= n - i && memcmp(s + i, name->ptr, name->len) == 0) {
				tf_buf_put(out, api.subst[k][1].ptr, api.subst[k][1].len);
				i += name->len;
				done = true;
				break;
			}
		}
		if (!done)
			tf_buf_putc(out, s[i++]);
	}
}

static bool api_is_header(const char *line, size_t len, const char *name)
{
	size_t n = strlen(name);
	return len >= n && strncasecmp(line, name, n) == 0;
}

/* The HTTP response for one part of the input. */
static void api_response(tf_buf *out, const uint8_t *part, size_t len)
{
	const char *p = (const char *)part, *end = p + len, *nl;
	tf_buf body = TF_BUF_INIT, heads = TF_BUF_INIT;
	long status = 0;

	nl = memchr(p, '\n', len);
	for (const char *d = p; d < (nl ? nl : end) && isdigit((unsigned char)*d) && status < 1000; d++)
		status = status * 10 + (*d - '0');
	if (status < 100 || status > 599)
		status = 200;
	p = nl ? nl + 1 : end;
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t l = (size_t)((e ? e : end) - p);
		if (l && p[l - 1] == '\r')
			l--;
		if (!l) {
			p = e ? e + 1 : end;
			break;
		}
		/* the server frames the message itself */
		if (!api_is_header(p, l, "content-length:") &&
		    !api_is_header(p, l, "transfer-encoding:") &&
		    !api_is_header(p, l, "connection:") && memchr(p, ':', l)) {
			for (size_t i = 0; i < l; i++)
				if (p[i] == '\0' || p[i] == '\r')
					goto skip;
			api_expand(&heads, p, l);
			tf_buf_puts(&heads, "\r\n");
		}
skip:
		p = e ? e + 1 : end;
	}
	if (p < end)
		api_expand(&body, p, (size_t)(end - p));
	if (status < 200) {
		tf_buf_puts(out, "HTTP/1.1 100 Continue\r\n\r\n");
		status = 200;
	}
	tf_buf_printf(out, "HTTP/1.1 %ld Fuzz\r\n%sContent-Length: %zu\r\nConnection: close\r\n\r\n",
		      status, heads.ptr ? heads.ptr : "", body.len);
	if (body.len)
		tf_buf_put(out, body.ptr, body.len);
	tf_buf_free(&body);
	tf_buf_free(&heads);
}

/* Read one request: its head, then the body its Content-Length says. */
static bool api_read_request(int fd)
{
	char buf[65536];
	size_t n = 0, need = 0;
	char *head_end = NULL;

	for (;;) {
		if (n == sizeof(buf) - 1)
			return false;
		ssize_t r = recv(fd, buf + n, sizeof(buf) - 1 - n, 0);
		if (r <= 0)
			return false;
		n += (size_t)r;
		buf[n] = '\0';
		if (!head_end && (head_end = strstr(buf, "\r\n\r\n"))) {
			for (char *l = buf; l < head_end; l = strstr(l, "\r\n") + 2)
				if (strncasecmp(l, "content-length:", 15) == 0)
					need = strtoul(l + 15, NULL, 10);
			need += (size_t)(head_end + 4 - buf);
		}
		if (head_end && n >= need)
			return true;
	}
}

static void *api_serve(void *arg)
{
	(void)arg;
	for (;;) {
		int c = accept(api.fd, NULL, NULL);
		if (c < 0)
			continue;
		if (api_read_request(c)) {
			const uint8_t *part;
			size_t len;
			tf_buf out = TF_BUF_INIT;
			pthread_mutex_lock(&api.mu);
			if (fuzz_part_next(&api.parts, &part, &len))
				api_response(&out, part, len);
			pthread_mutex_unlock(&api.mu);
			if (out.len)
				api_send_all(c, out.ptr, out.len);
			tf_buf_free(&out);
		}
		close(c);
	}
	return NULL;
}

static void api_set(size_t k, const char *name, const char *text)
{
	tf_buf_puts(&api.subst[k][0], name);
	tf_buf_puts(&api.subst[k][1], text);
}

/* ---- what is posted: a comparison where one test regressed ---- */

static tf_profile *api_run(void)
{
	tf_profile *p;
	tf_profile_new(&p);
	tf_profile_add_sample_type(p, "samples", "count");
	tf_profile_add_sample_type(p, "cpu", "nanoseconds");
	p->period = API_PERIOD;
	tf_profile_set_meta(p, "event", "cpu-clock");
	return p;
}

static void api_sample(tf_profile *p, const char *test, int64_t n, const char *fn,
		       const char *file, int64_t start, int64_t line)
{
	tf_line lm = { tf_profile_function(p, "main", "/work/repo/src/main.c", 1), 3, 0 };
	tf_line lf = { tf_profile_function(p, fn, file, start), line, 0 };
	uint32_t locs[2] = { tf_profile_add_location(p, TF_NO_MAPPING, 0, &lf, 1),
			     tf_profile_add_location(p, TF_NO_MAPPING, 0, &lm, 1) };
	int64_t v[2] = { n, n * API_PERIOD };
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	tf_profile_add_sample(p, locs, 2, v, &lab, 1);
}

static void api_init(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);
	pthread_t th;
	tf_compare_opts co;
	tf_review_targets tg;
	tf_buf b = TF_BUF_INIT;

	api.ready = true;
	api.http = getenv("FUZZ_API_HTTP") && strcmp(getenv("FUZZ_API_HTTP"), "0") != 0;
	if (api.http) {
		api.fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		FUZZ_CHECK(api.fd >= 0 && bind(api.fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
				   listen(api.fd, 64) == 0 &&
				   getsockname(api.fd, (struct sockaddr *)&a, &al) == 0,
			   "cannot listen on the loopback interface");
		snprintf(api.origin, sizeof(api.origin), "http://127.0.0.1:%u", ntohs(a.sin_port));
		FUZZ_CHECK(pthread_create(&th, NULL, api_serve, NULL) == 0, "no server thread");
		pthread_detach(th);
	} else {
		snprintf(api.origin, sizeof(api.origin), "http://127.0.0.1:9");
	}

	api.base = api_run();
	api.head = api_run();
	api_sample(api.base, "t_hot", 1000, "hot", "/work/repo/src/hot.c", 4, 5);
	api_sample(api.base, "t_cold", 1000, "cold", "/work/repo/src/cold.c", 2, 3);
	api_sample(api.head, "t_hot", 1000, "hot", "/work/repo/src/hot.c", 4, 5);
	api_sample(api.head, "t_hot", 1500, "hot", "/work/repo/src/hot.c", 4, 12);
	api_sample(api.head, "t_cold", 1000, "cold", "/work/repo/src/cold.c", 2, 3);
	tf_compare_side bs = { (const tf_profile *const *)&api.base, NULL, 1 };
	tf_compare_side hs = { (const tf_profile *const *)&api.head, NULL, 1 };
	tf_compare_opts_init(&co);
	FUZZ_CHECK(tf_compare(&api.c, &bs, &hs, &co) == 0, "%s", tf_error_last());
	FUZZ_CHECK(tf_changes_from_json(&api.changes, "[{\"path\":\"src/hot.c\",\"status\":\"M\","
				       "\"lines\":[[11,12]]}]") == 0, "%s", tf_error_last());
	tf_report_opts_init(&api.report);
	api.report.suite = API_SUITE;

	/* the sticky comment, and the first review comment as github.c makes it */
	tf_report_marker(&b, API_SUITE);
	b.ptr[b.len = strcspn(b.ptr, "\n")] = '\0';
	api_set(0, "{MARKER}", b.ptr);
	tf_buf_puts(&b, "\n## testflame: `t_hot` got slower\n\n| test | base | head |\n");
	api.body = tf_buf_detach(&b);
	tf_buf_put_json(&b, api.body);
	api_set(1, "{BODY}", "");
	tf_buf_put(&api.subst[1][1], b.ptr + 1, b.len - 2);
	tf_buf_clear(&b);
	api_set(2, "{ORIGIN}", api.origin);
	FUZZ_CHECK(tf_publish_review_targets(&tg, api.c, &api.changes, API_SUITE, 10) == 0 &&
		   tg.items.n == 1, "no review target");
	size_t test = tg.items.v[0].refs.v[0].test, func = tg.items.v[0].refs.v[0].func;
	tf_publish_review_marker(&b, API_SUITE, tg.items.v[0].key);
	api_set(3, "{REVIEW}", b.ptr);
	tf_buf_putc(&b, '\n');
	FUZZ_CHECK(tf_report_review_note(&b, api.c, &test, &func, 1, &api.report) == 0, "%s",
		   tf_error_last());
	tf_buf t = TF_BUF_INIT;
	tf_buf_put_json(&t, b.ptr);
	api_set(4, "{REVIEW_BODY}", "");
	tf_buf_put(&api.subst[4][1], t.ptr + 1, t.len - 2);
	tf_buf_free(&t);
	tf_buf_free(&b);
	tf_review_targets_clear(&tg);
}

static void api_no_sleep(double seconds, void *payload)
{
	(void)seconds;
	(void)payload;
}

/* In the process: the next response of the input, as the server sends it. */
static void api_in_process(const char *method, const char *url, const void *body, size_t len,
			   tf_buf *out, void *payload)
{
	const uint8_t *part;
	size_t n;

	(void)method;
	(void)url;
	(void)body;
	(void)len;
	(void)payload;
	if (fuzz_part_next(&api.parts, &part, &n))
		api_response(out, part, n);
}

static void api_log(const char *line, void *payload)
{
	(void)payload;
	FUZZ_CHECK(!strstr(line, API_TOKEN), "the token in a log line: '%s'", line);
	FUZZ_CHECK(!strchr(line, '\n'), "a log line of several lines: '%s'", line);
	if (getenv("FUZZ_API_LOG"))
		fprintf(stderr, "  %s\n", line);
}

/* Post to `t` (its api_url and token set here) with the input's responses. */
static void api_exchange(tf_publish_target *t, const uint8_t *data, size_t size)
{
	tf_publish_opts o;
	tf_publish_result res;
	int rc;

	if (!api.ready)
		api_init();
	t->api_url = api.origin;
	t->token = API_TOKEN;
	pthread_mutex_lock(&api.mu);
	fuzz_parts_init(&api.parts, data, size);
	pthread_mutex_unlock(&api.mu);

	tf_publish_opts_init(&o);
	o.target = t;
	o.suite = API_SUITE;
	o.body = api.body;
	o.comment = true;
	o.review = t->host == TF_PUBLISH_GITHUB;
	o.c = api.c;
	o.report = &api.report;
	o.changes = &api.changes;
	o.http.max_attempts = 3;
	o.http.timeout = 5;
	o.http.sleep = api_no_sleep;
	o.http.log = api_log;
	o.http.exchange = api.http ? NULL : api_in_process;
	memset(&res, 0, sizeof(res));
	rc = tf_publish_post(&res, &o);
	if (rc) {
		const char *m = tf_error_last();
		FUZZ_CHECK(!strstr(m, API_TOKEN), "the token in an error: '%s'", m);
		FUZZ_CHECK(!strchr(m, '\n'), "an error of several lines: '%s'", m);
	}
	if (getenv("FUZZ_API_LOG"))
		fprintf(stderr, "  -> %d%s%s: comment created %d updated %d unchanged %d, review "
			"created %zu updated %zu unchanged %zu refused %zu\n", rc, rc ? " " : "",
			rc ? tf_error_last() : "", res.comment_created, res.comment_updated,
			res.comment_unchanged, res.review_created, res.review_updated,
			res.review_unchanged, res.review_refused);
	for (size_t i = 0; i < res.notes.n; i++)
		FUZZ_CHECK(!strstr(res.notes.v[i], API_TOKEN) && !strchr(res.notes.v[i], '\n'),
			   "note: '%s'", res.notes.v[i]);
	tf_publish_result_clear(&res);
	/* requests the input had no answer for used none of it */
	pthread_mutex_lock(&api.mu);
	api.parts.done = true;
	pthread_mutex_unlock(&api.mu);
}

#endif
