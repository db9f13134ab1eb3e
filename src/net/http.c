/*
 * http.c - the HTTP client (net.h), the one owner of libcurl:
 * one easy handle per session, an authentication header that only ever goes
 * to the API's own origin over https (or http on loopback), retries with
 * exponential backoff on network failures, 5xx and rate limits (Retry-After,
 * X-RateLimit-Remaining/Reset, as GitHub and GitLab document them) inside a
 * bounded number of attempts and a bounded total wait, and messages with
 * the token scrubbed out. Redirects are not followed: an API that moved
 * says so in the error instead of receiving the token elsewhere. Bodies are
 * JSON for the code hosts; the Pyroscope store (store/pyroscope.c) sends
 * binary protobuf and pprof through the same session with
 * tf_http_request_body(), so libcurl keeps one owner.
 *
 * Each request gets a fresh easy handle; the session's connections and TLS
 * sessions are kept in a share handle. (libcurl 7.88, Debian 12's, reads
 * freed memory when a reused handle meets a response whose first header
 * line is folded: curl issue 11101, fixed in 8.1. The fuzzer found it.)
 */
#include "testflame/net.h"

#include <ctype.h>
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define BODY_MAX (64u << 20) /* responses larger than this are cut off */
#define SECRETS_MAX 4        /* token, password, tenant, user:password in base64 */

struct tf_http {
	CURLSH *share;         /* connections, TLS sessions and DNS of the session */
	char *base;            /* API URL without a trailing slash */
	char *origin;          /* scheme://host[:port] of the base */
	const char *name;      /* "GitHub API" */
	char *secrets[SECRETS_MAX]; /* scrubbed from every message */
	bool https, loopback;  /* of the base URL: where credentials may go */
	struct curl_slist *headers;
	tf_http_opts o;        /* the caller's, copied */
	unsigned requests, retries;
	double waited;
	char errbuf[CURL_ERROR_SIZE];
};

/*
 * libcurl is opened on first use rather than linked: it and what it pulls
 * in (two TLS stacks, Kerberos, LDAP, ...) cost every command ~6 ms of
 * start-up, more than `view` takes for a whole run file, and only the
 * publishers use it. The calls below go through this table.
 */
static struct {
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	CURLSH *(*share_init)(void);
	CURLSHcode (*share_setopt)(CURLSH *, CURLSHoption, ...);
	CURLSHcode (*share_cleanup)(CURLSH *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLU *(*url)(void);
	CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
	CURLUcode (*url_get)(const CURLU *, CURLUPart, char **, unsigned int);
	void (*url_cleanup)(CURLU *);
	void (*free)(void *);
} lc;

#define curl_global_init lc.global_init
#define curl_easy_init lc.easy_init
#undef curl_easy_setopt /* curl.h's type-checking wrappers, if any */
#undef curl_easy_getinfo
#define curl_easy_setopt lc.easy_setopt
#define curl_easy_perform lc.easy_perform
#define curl_easy_getinfo lc.easy_getinfo
#define curl_easy_cleanup lc.easy_cleanup
#undef curl_share_setopt
#define curl_share_init lc.share_init
#define curl_share_setopt lc.share_setopt
#define curl_share_cleanup lc.share_cleanup
#define curl_easy_strerror lc.easy_strerror
#define curl_slist_append lc.slist_append
#define curl_slist_free_all lc.slist_free_all
#define curl_url lc.url
#define curl_url_set lc.url_set
#define curl_url_get lc.url_get
#define curl_url_cleanup lc.url_cleanup
#define curl_free lc.free

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static char curl_load_error[512]; /* non-empty: libcurl could not be loaded */
static CURLcode curl_init_rc;

static bool curl_sym(void *so, void *slot, const char *name)
{
	void *p = dlsym(so, name);
	if (!p)
		snprintf(curl_load_error, sizeof(curl_load_error),
			 "libcurl.so.4 has no %s", name);
	memcpy(slot, &p, sizeof(p)); /* object pointer to function pointer */
	return p != NULL;
}

static void curl_init(void)
{
	void *so = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!so) {
		snprintf(curl_load_error, sizeof(curl_load_error),
			 "cannot load libcurl.so.4 (Debian package libcurl4): %s", dlerror());
		return;
	}
	if (!curl_sym(so, &lc.global_init, "curl_global_init") ||
	    !curl_sym(so, &lc.easy_init, "curl_easy_init") ||
	    !curl_sym(so, &lc.easy_setopt, "curl_easy_setopt") ||
	    !curl_sym(so, &lc.easy_perform, "curl_easy_perform") ||
	    !curl_sym(so, &lc.easy_getinfo, "curl_easy_getinfo") ||
	    !curl_sym(so, &lc.easy_cleanup, "curl_easy_cleanup") ||
	    !curl_sym(so, &lc.share_init, "curl_share_init") ||
	    !curl_sym(so, &lc.share_setopt, "curl_share_setopt") ||
	    !curl_sym(so, &lc.share_cleanup, "curl_share_cleanup") ||
	    !curl_sym(so, &lc.easy_strerror, "curl_easy_strerror") ||
	    !curl_sym(so, &lc.slist_append, "curl_slist_append") ||
	    !curl_sym(so, &lc.slist_free_all, "curl_slist_free_all") ||
	    !curl_sym(so, &lc.url, "curl_url") ||
	    !curl_sym(so, &lc.url_set, "curl_url_set") ||
	    !curl_sym(so, &lc.url_get, "curl_url_get") ||
	    !curl_sym(so, &lc.url_cleanup, "curl_url_cleanup") ||
	    !curl_sym(so, &lc.free, "curl_free"))
		return;
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void scrub_all(const tf_http *h, char *s)
{
	for (size_t i = 0; i < SECRETS_MAX; i++)
		tf_http_scrub(s, h->secrets[i]);
}

void tf_http_scrub(char *s, const char *secret)
{
	size_t n;
	char *p;
	if (!s || !secret || (n = strlen(secret)) < 4)
		return;
	while ((p = strstr(s, secret))) {
		memcpy(p, "***", 3);
		memmove(p + 3, p + n, strlen(p + n) + 1);
	}
}

/* ---- URLs --------------------------------------------------------------- */

static bool loopback_host(const char *host)
{
	return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 ||
	       strcmp(host, "[::1]") == 0 || strcmp(host, "::1") == 0;
}

/* scheme://host[:port], lowercased scheme and host; NULL for a bad URL. */
static char *url_origin(const char *url, bool *https, bool *loopback)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL, *out = NULL;

	if (curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
	    curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK) {
		curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
		for (char *p = host; *p; p++)
			*p = (char)tolower((unsigned char)*p);
		out = tf_xasprintf("%s://%s:%s", scheme, host, port ? port : "");
		if (https)
			*https = strcmp(scheme, "https") == 0;
		if (loopback)
			*loopback = loopback_host(host);
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return out;
}

bool tf_http_same_origin(tf_http *h, const char *url)
{
	char *o = url_origin(url, NULL, NULL);
	bool same = o && strcmp(o, h->origin) == 0;
	free(o);
	return same;
}

void tf_http_put_segment(tf_buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p))
			tf_buf_putc(b, (char)*p);
		else
			tf_buf_printf(b, "%%%02X", *p);
	}
}

/* ---- sessions ----------------------------------------------------------- */

void tf_http_opts_init(tf_http_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->name = "HTTP API";
	o->max_attempts = 5;
	o->max_wait = 120;
	o->timeout = 60;
}

int tf_http_open(tf_http **out, const char *api_url, const char *auth_header,
		 const char *secret, const char *accept, const char *extra_header,
		 const tf_http_opts *o)
{
	bool https = false, loopback = false;
	char *origin;
	tf_http *h;
	size_t n;

	*out = NULL;
	pthread_once(&curl_once, curl_init);
	if (curl_load_error[0])
		return tf_error_set(TF_ERROR, "libcurl cannot start: %s", curl_load_error);
	if (curl_init_rc != CURLE_OK)
		return tf_error_set(TF_ERROR, "libcurl cannot start: %s",
				    curl_easy_strerror(curl_init_rc));
	origin = url_origin(api_url, &https, &loopback);
	if (!origin)
		return tf_error_set(TF_EUSAGE, "'%s' is not a URL", api_url);
	if (auth_header && !https && !(loopback && strncmp(origin, "http://", 7) == 0)) {
		free(origin);
		return tf_error_set(TF_EUSAGE,
				    "refusing to send a token to '%s': only https:// URLs "
				    "(or http:// on the loopback interface) are used", api_url);
	}
	h = tf_xcalloc(1, sizeof(*h));
	h->share = curl_share_init();
	if (!h->share) {
		free(origin);
		free(h);
		return tf_error_set(TF_ERROR, "libcurl cannot create a handle");
	}
	curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	curl_share_setopt(h->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	h->origin = origin;
	h->https = https;
	h->loopback = loopback && strncmp(origin, "http://", 7) == 0;
	h->base = tf_xstrdup(api_url);
	n = strlen(h->base);
	while (n > 0 && h->base[n - 1] == '/')
		h->base[--n] = '\0';
	h->o = *o;
	h->name = o->name;
	h->secrets[0] = secret ? tf_xstrdup(secret) : NULL;
	char *ua = tf_xasprintf("User-Agent: testflame/%s", TF_VERSION);
	char *acc = tf_xasprintf("Accept: %s", accept ? accept : "application/json");
	h->headers = curl_slist_append(h->headers, ua);
	h->headers = curl_slist_append(h->headers, acc);
	/* no "Expect: 100-continue" round trip for larger bodies */
	h->headers = curl_slist_append(h->headers, "Expect:");
	if (extra_header)
		h->headers = curl_slist_append(h->headers, extra_header);
	if (auth_header)
		h->headers = curl_slist_append(h->headers, auth_header);
	free(ua);
	free(acc);
	*out = h;
	return 0;
}

void tf_http_free(tf_http *h)
{
	if (!h)
		return;
	curl_share_cleanup(h->share);
	/* the list holds the token: wipe it before it goes back to malloc */
	for (struct curl_slist *l = h->headers; l; l = l->next)
		memset(l->data, 0, strlen(l->data));
	curl_slist_free_all(h->headers);
	for (size_t i = 0; i < SECRETS_MAX; i++) {
		if (h->secrets[i])
			memset(h->secrets[i], 0, strlen(h->secrets[i]));
		free(h->secrets[i]);
	}
	free(h->base);
	free(h->origin);
	free(h);
}

const char *tf_http_name(const tf_http *h)
{
	return h->name;
}

void tf_http_counts(const tf_http *h, unsigned *requests, unsigned *retries)
{
	*requests = h->requests;
	*retries = h->retries;
}

int tf_http_add_header(tf_http *h, const char *header, const char *secret)
{
	if (header && secret && !h->https && !h->loopback)
		return tf_error_set(TF_EUSAGE,
				    "refusing to send credentials to '%s': only https:// URLs "
				    "(or http:// on the loopback interface) are used", h->base);
	if (secret) {
		size_t i = 0;
		while (i < SECRETS_MAX && h->secrets[i])
			i++;
		if (i == SECRETS_MAX)
			return tf_error_set(TF_ERROR, "too many secrets for one session");
		h->secrets[i] = tf_xstrdup(secret);
	}
	if (header)
		h->headers = curl_slist_append(h->headers, header);
	return 0;
}

void tf_http_response_clear(tf_http_response *r)
{
	tf_buf_free(&r->body);
	free(r->link_next);
	free(r->next_page);
	free(r->retry_after);
	free(r->rl_remaining);
	free(r->rl_reset);
	free(r->location);
	memset(r, 0, sizeof(*r));
}

/* ---- one exchange ------------------------------------------------------- */

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *ud)
{
	tf_http_response *r = ud;
	size_t n = size * nmemb;
	if (r->body.len + n > BODY_MAX)
		return 0; /* aborts the transfer: CURLE_WRITE_ERROR */
	tf_buf_put(&r->body, ptr, n);
	return n;
}

static void set_header(char **slot, const char *v, size_t n)
{
	free(*slot);
	*slot = tf_xstrndup(v, n);
}

static size_t on_header(char *buf, size_t size, size_t nitems, void *ud)
{
	tf_http_response *r = ud;
	size_t n = size * nitems, klen;
	const char *colon, *v, *end = buf + n;

	if (n >= 5 && strncmp(buf, "HTTP/", 5) == 0) {
		/* a new response (after a 1xx): forget the previous headers */
		char **slots[] = { &r->link_next, &r->next_page, &r->retry_after,
				   &r->rl_remaining, &r->rl_reset, &r->location };
		for (size_t i = 0; i < TF_ARRAY_SIZE(slots); i++) {
			free(*slots[i]);
			*slots[i] = NULL;
		}
		return n;
	}
	colon = memchr(buf, ':', n);
	if (!colon)
		return n;
	klen = (size_t)(colon - buf);
	v = colon + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
		end--;
#define IS(name) (klen == sizeof(name) - 1 && strncasecmp(buf, name, klen) == 0)
	if (IS("link")) {
		char *all = tf_xstrndup(v, (size_t)(end - v));
		char *next = tf_http_link_next(all);
		free(all);
		if (next) {
			free(r->link_next);
			r->link_next = next;
		}
	} else if (IS("x-next-page")) {
		if (end > v)
			set_header(&r->next_page, v, (size_t)(end - v));
	} else if (IS("retry-after")) {
		set_header(&r->retry_after, v, (size_t)(end - v));
	} else if (IS("x-ratelimit-remaining") || IS("ratelimit-remaining")) {
		set_header(&r->rl_remaining, v, (size_t)(end - v));
	} else if (IS("x-ratelimit-reset") || IS("ratelimit-reset")) {
		set_header(&r->rl_reset, v, (size_t)(end - v));
	} else if (IS("location")) {
		set_header(&r->location, v, (size_t)(end - v));
	}
#undef IS
	return n;
}

static bool transport_retryable(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

/* The request's path for messages: the part after the API base. */
static const char *shown_path(const tf_http *h, const char *url)
{
	size_t n = strlen(h->base);
	return strncmp(url, h->base, n) == 0 && url[n] ? url + n : url;
}

static void logf_(tf_http *h, const char *fmt, ...) TF_PRINTF(2, 3);
static void logf_(tf_http *h, const char *fmt, ...)
{
	va_list ap;
	tf_buf b = TF_BUF_INIT;
	if (!h->o.log)
		return;
	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	scrub_all(h, b.ptr);
	h->o.log(b.ptr, h->o.payload);
	tf_buf_free(&b);
}

static void do_sleep(const tf_http_opts *o, double s)
{
	if (s <= 0)
		return;
	if (o->sleep) {
		o->sleep(s, o->payload);
		return;
	}
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

typedef struct {
	const void *data;  /* NULL: no body */
	size_t len;
	const char *type;  /* its Content-Type */
} req_body;

/*
 * The response from o->exchange, read as libcurl hands one over: each
 * line of each head (a 1xx, then the final one) to on_header, the status
 * of the last head, the body to on_body.
 */
static CURLcode perform_exchange(tf_http *h, tf_http_response *r, const char *method, const char *url,
				 const req_body *body)
{
	tf_buf out = TF_BUF_INIT;
	const char *p, *end;
	CURLcode rc = CURLE_OK;

	h->errbuf[0] = '\0';
	h->o.exchange(method, url, body->data, body->data ? body->len : 0, &out, h->o.payload);
	if (!out.len)
		return CURLE_GOT_NOTHING;
	p = out.ptr;
	end = p + out.len;
	for (;;) {
		long status = -1;
		if (p == end || (size_t)(end - p) < 12 || strncmp(p, "HTTP/", 5) != 0) {
			rc = CURLE_WEIRD_SERVER_REPLY;
			goto done;
		}
		for (;;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t n = nl ? (size_t)(nl + 1 - p) : (size_t)(end - p);
			if (status < 0) {
				const char *sp = memchr(p, ' ', n);
				status = sp && n - (size_t)(sp - p) > 3 ? strtol(sp + 1, NULL, 10) : 0;
			}
			on_header((char *)p, 1, n, r);
			bool blank = n <= 2 && (*p == '\r' || *p == '\n');
			p += n;
			if (blank || !nl)
				break;
		}
		if (status < 100 || status > 999) {
			rc = CURLE_WEIRD_SERVER_REPLY;
			goto done;
		}
		r->status = status;
		if (status >= 200 || p == end)
			break;
	}
	if (p < end && on_body((char *)p, 1, (size_t)(end - p), r) != (size_t)(end - p))
		rc = CURLE_WRITE_ERROR;
done:
	if (rc != CURLE_OK)
		r->status = 0;
	tf_buf_free(&out);
	return rc;
}

static CURLcode perform(tf_http *h, tf_http_response *r, const char *method, const char *url,
			const req_body *body)
{
	if (h->o.exchange)
		return perform_exchange(h, r, method, url, body);
	CURL *c = curl_easy_init();
	struct curl_slist *headers = NULL;
	char *ctype;

	h->errbuf[0] = '\0';
	if (!c)
		return CURLE_OUT_OF_MEMORY;
	/* the session's headers and this body's type */
	ctype = tf_xasprintf("Content-Type: %s", body->type);
	for (struct curl_slist *l = h->headers; l; l = l->next)
		headers = curl_slist_append(headers, l->data);
	headers = curl_slist_append(headers, ctype);
	free(ctype);
	curl_easy_setopt(c, CURLOPT_SHARE, h->share);
	curl_easy_setopt(c, CURLOPT_URL, url);
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85: CURLOPT_PROTOCOLS is deprecated */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "https,http");
#else
	curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTPS | CURLPROTO_HTTP));
#endif
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(h->o.timeout * 1000));
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	if (strcmp(method, "GET") == 0) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	} else {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data ? body->data : "");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)(body->data ? body->len : 0));
	}
	CURLcode rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_cleanup(c);
	/* the copies hold the credentials too */
	for (struct curl_slist *l = headers; l; l = l->next)
		memset(l->data, 0, strlen(l->data));
	curl_slist_free_all(headers);
	return rc;
}

static int request(tf_http_response *out, tf_http *h, const char *method, const char *url,
		   const req_body *body);

int tf_http_request(tf_http_response *out, tf_http *h, const char *method, const char *url,
	       const char *json)
{
	req_body b = { json, json ? strlen(json) : 0, "application/json" };
	return request(out, h, method, url, &b);
}

int tf_http_request_body(tf_http_response *out, tf_http *h, const char *method, const char *url,
		    const void *body, size_t len, const char *content_type)
{
	req_body b = { body, len, content_type };
	return request(out, h, method, url, &b);
}

static int request(tf_http_response *out, tf_http *h, const char *method, const char *url,
		   const req_body *body)
{
	const tf_http_opts *o = &h->o;
	char *full = url[0] == '/' ? tf_xasprintf("%s%s", h->base, url) : tf_xstrdup(url);
	const char *path = shown_path(h, full);
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (url[0] != '/' && !tf_http_same_origin(h, full)) {
		rc = tf_http_error(h, TF_ERROR, "%s: not following '%s' away from '%s'", h->name,
				  full, h->base);
		free(full);
		return rc;
	}
	for (unsigned attempt = 1;; attempt++) {
		uint64_t t0 = tf_now_ns();
		tf_http_response_clear(out);
		CURLcode cc = perform(h, out, method, full, body);
		double ms = (double)(tf_now_ns() - t0) / 1e6;
		double delay;
		h->requests++;
		if (cc != CURLE_OK) {
			const char *why = h->errbuf[0] ? h->errbuf : curl_easy_strerror(cc);
			logf_(h, "%s %s: %s (%.0f ms)", method, path, why, ms);
			delay = transport_retryable(cc)
				? tf_http_retry_delay(0, NULL, NULL, NULL, attempt, (int64_t)time(NULL))
				: -1;
		} else {
			logf_(h, "%s %s -> %ld (%.0f ms)", method, path, out->status, ms);
			delay = tf_http_retry_delay(out->status, out->retry_after, out->rl_remaining,
						       out->rl_reset, attempt, (int64_t)time(NULL));
		}
		if (delay < 0 || attempt >= o->max_attempts || h->waited + delay > o->max_wait) {
			if (delay >= 0 && attempt < o->max_attempts)
				logf_(h, "%s %s: the API asks to wait %.0f s, beyond the %.0f s "
				      "testflame waits in all; giving up", method, path, delay,
				      o->max_wait);
			if (cc != CURLE_OK) {
				rc = tf_error_set(TF_ERROR, "%s: %s %s: %s", h->name, method, path,
						  h->errbuf[0] ? h->errbuf : curl_easy_strerror(cc));
				if (attempt > 1)
					tf_error_wrap(rc, "after %u attempts", attempt);
				char *msg = tf_xstrdup(tf_error_last());
				scrub_all(h, msg);
				tf_error_set(rc, "%s", msg);
				free(msg);
			}
			break;
		}
		logf_(h, "%s %s: retrying in %.1f s (attempt %u of %u)", method, path, delay,
		      attempt + 1, o->max_attempts);
		h->retries++;
		do_sleep(o, delay);
		h->waited += delay;
	}
	free(full);
	return rc;
}

/* ---- the retry policy --------------------------------------------------- */

static bool parse_seconds(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s)
		return false;
	errno = 0;
	v = strtod(s, &end);
	while (*end == ' ')
		end++;
	if (errno || *end || v < 0 || !isfinite(v))
		return false;
	*out = v;
	return true;
}

double tf_http_retry_delay(long status, const char *retry_after, const char *rl_remaining,
			      const char *rl_reset, unsigned attempt, int64_t now)
{
	double ra, reset, backoff;
	bool limited;

	if (attempt < 1)
		attempt = 1;
	/* 1, 2, 4, 8 ... seconds, capped at a minute */
	backoff = attempt > 7 ? 60 : TF_MIN(60.0, (double)(1u << (attempt - 1)));
	if (status == 0)
		return backoff;
	limited = status == 429 ||
		  (status == 403 && (retry_after || (rl_remaining && strcmp(rl_remaining, "0") == 0)));
	if (status >= 500 && status != 501 && status != 505) {
		if (parse_seconds(retry_after, &ra))
			return TF_MAX(ra, 1.0);
		return backoff;
	}
	if (!limited)
		return -1;
	if (parse_seconds(retry_after, &ra))
		return TF_MAX(ra, 1.0);
	/* X-RateLimit-Reset is a time in UTC epoch seconds (GitHub), or
	 * GitLab's RateLimit-Reset, the same; wait until then plus a second */
	if (rl_remaining && strcmp(rl_remaining, "0") == 0 && parse_seconds(rl_reset, &reset)) {
		double d = reset - (double)now + 1;
		return d < 1 ? 1 : d;
	}
	/* GitHub: without either header, wait at least a minute */
	return status == 403 ? 60 : TF_MAX(backoff, 5.0);
}

char *tf_http_link_next(const char *link)
{
	/* <url>; rel="next", <url>; rel="last" */
	const char *p = link;
	while (p && *p) {
		const char *lt = strchr(p, '<'), *gt, *end;
		if (!lt || !(gt = strchr(lt, '>')))
			return NULL;
		end = strchr(gt, ',');
		size_t n = end ? (size_t)(end - gt) : strlen(gt);
		char *params = tf_xstrndup(gt + 1, n - 1);
		bool next = false;
		for (char *tok = params; tok && *tok;) {
			char *semi = strchr(tok, ';');
			if (semi)
				*semi = '\0';
			while (*tok == ' ')
				tok++;
			if (strncasecmp(tok, "rel=", 4) == 0) {
				const char *v = tok + 4;
				if (*v == '"')
					v++;
				/* rel may list several types: rel="next last" */
				for (const char *w = v; *w && *w != '"';) {
					size_t wl = strcspn(w, " \"");
					if (wl == 4 && strncasecmp(w, "next", 4) == 0)
						next = true;
					w += wl;
					while (*w == ' ')
						w++;
				}
			}
			tok = semi ? semi + 1 : NULL;
		}
		free(params);
		if (next)
			return tf_xstrndup(lt + 1, (size_t)(gt - lt - 1));
		p = end ? end + 1 : NULL;
	}
	return NULL;
}

/* ---- errors and JSON ---------------------------------------------------- */

static const char *reason(long status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 422: return "Unprocessable Entity";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return status >= 300 && status < 400 ? "Redirect" : "";
	}
}

/* Append a JSON value's text to a message, cleaned to one printable line. */
static void put_detail(tf_buf *b, json_t *v)
{
	if (json_is_string(v)) {
		tf_buf_put_printable(b, json_string_value(v));
	} else if (v) {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (s)
			tf_buf_put_printable(b, s);
		free(s);
	}
}

int tf_http_fail(tf_http *h, const tf_http_response *r, int code, const char *method, const char *url)
{
	tf_buf m = TF_BUF_INIT;
	json_t *j = r->body.len ? json_loadb(r->body.ptr, r->body.len, 0, NULL) : NULL;

	tf_buf_printf(&m, "%s: %s %s: %ld", h->name, method, shown_path(h, url), r->status);
	if (*reason(r->status))
		tf_buf_printf(&m, " %s", reason(r->status));
	if (json_is_object(j)) {
		json_t *msg = json_object_get(j, "message");
		json_t *err = json_object_get(j, "error");
		json_t *errs = json_object_get(j, "errors");
		if (msg || err) {
			tf_buf_puts(&m, ": ");
			put_detail(&m, msg ? msg : err);
		}
		if (json_is_array(errs) && json_array_size(errs)) {
			size_t i;
			json_t *e;
			tf_buf_puts(&m, " (");
			json_array_foreach(errs, i, e) {
				if (i >= 3)
					break;
				if (i)
					tf_buf_puts(&m, "; ");
				json_t *em = json_is_object(e) ? json_object_get(e, "message") : NULL;
				if (!em && json_is_object(e))
					em = json_object_get(e, "code");
				put_detail(&m, em ? em : e);
			}
			tf_buf_putc(&m, ')');
		}
	} else if (r->body.len && r->body.len < 200) {
		tf_buf_puts(&m, ": ");
		char *t = tf_xstrndup(r->body.ptr, r->body.len);
		tf_buf_put_printable(&m, t);
		free(t);
	}
	if (r->status >= 300 && r->status < 400 && r->location) {
		tf_buf_puts(&m, " (moved to ");
		tf_buf_put_printable(&m, r->location);
		tf_buf_puts(&m, "; set the API URL to the new address)");
	}
	json_decref(j);
	scrub_all(h, m.ptr);
	tf_error_set(code, "%s", m.ptr);
	tf_buf_free(&m);
	return code;
}

int tf_http_error(tf_http *h, int code, const char *fmt, ...)
{
	tf_buf b = TF_BUF_INIT, line = TF_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	tf_buf_vprintf(&b, fmt, ap);
	va_end(ap);
	tf_buf_put_printable(&line, b.ptr);
	tf_buf_puts(&line, "");
	scrub_all(h, line.ptr);
	tf_error_set(code, "%s", line.ptr);
	tf_buf_free(&b);
	tf_buf_free(&line);
	return code;
}

json_t *tf_http_json(tf_http *h, const tf_http_response *r, const char *what)
{
	json_error_t e;
	json_t *j = json_loadb(r->body.ptr ? r->body.ptr : "", r->body.len, 0, &e);
	if (!j)
		tf_http_error(h, TF_ERROR, "%s: %s: the reply is not JSON (%s)", h->name, what, e.text);
	return j;
}

/* ---- listings ----------------------------------------------------------- */

#define MAX_PAGES 200

/* The next page of a listing: the Link header's rel="next" (both hosts
 * send it), else GitLab's X-Next-Page on the first page's URL. *out is
 * NULL on the last page. */
static int next_url(char **out, tf_http *h, const tf_http_response *r, const char *first)
{
	*out = NULL;
	if (r->link_next) {
		if (!tf_http_same_origin(h, r->link_next))
			return tf_http_error(h, TF_ERROR, "%s: the next page '%s' is on another host; "
					    "not following it", tf_http_name(h), r->link_next);
		*out = tf_xstrdup(r->link_next);
	} else if (r->next_page && *r->next_page) {
		long page = strtol(r->next_page, NULL, 10);
		if (page > 1)
			*out = tf_xasprintf("%s%spage=%ld", first, strchr(first, '?') ? "&" : "?", page);
	}
	return 0;
}

int tf_http_list_each(tf_http *h, const char *first, tf_http_item_fn fn, void *payload)
{
	char *url = tf_xstrdup(first);
	int rc = 0;

	for (unsigned page = 0; url && page < MAX_PAGES; page++) {
		tf_http_response r;
		json_t *j;
		size_t i;
		json_t *item;
		int stop = 0;

		rc = tf_http_request(&r, h, "GET", url, NULL);
		if (rc) {
			tf_http_response_clear(&r);
			break;
		}
		if (r.status != 200) {
			rc = tf_http_fail(h, &r, tf_http_status_code(r.status), "GET", url);
			tf_http_response_clear(&r);
			break;
		}
		j = tf_http_json(h, &r, url);
		if (!j || !json_is_array(j)) {
			if (j)
				tf_http_error(h, TF_ERROR, "%s: GET %s: the reply is not a list", tf_http_name(h), url);
			rc = TF_ERROR;
			json_decref(j);
			tf_http_response_clear(&r);
			break;
		}
		json_array_foreach(j, i, item) {
			if (json_is_object(item) && (stop = fn(item, payload)) != 0)
				break;
		}
		json_decref(j);
		free(url);
		url = NULL;
		if (stop < 0)
			rc = stop;
		else if (!stop)
			rc = next_url(&url, h, &r, first);
		tf_http_response_clear(&r);
		if (rc)
			break;
	}
	free(url);
	return rc;
}

int tf_http_status_code(long status)
{
	/* 401 is a bad or expired token: an error to fix; 403 is a token that
	 * may not do this, which a fork's read-only token meets */
	if (status == 403)
		return TF_EPERM;
	if (status == 404 || status == 410)
		return TF_ENOTFOUND;
	return TF_ERROR;
}
