/*
 * pyroscope.c - Grafana Pyroscope as the organisation-wide mirror of the
 * baselines git keeps: every run's profiles go there, one series per test,
 * labelled so that a team finds them by repository, commit, branch, PR and
 * test beside its production profiles; and a fresh clone whose git holds
 * no baseline gets the merge-base's from there.
 *
 * Pyroscope speaks the Connect protocol: a unary call is an HTTP POST of
 * one binary protobuf message (application/proto) to /PACKAGE.SERVICE/
 * METHOD, answered by 200 and the reply message, or by another status and
 * a JSON error {"code", "message"}. The messages are pyroscope.proto's,
 * encoded by protobuf-c; the HTTP session is the net module's (libcurl has
 * one owner), which retries 429 and 5xx with backoff inside bounds and keeps
 * credentials out of every message.
 *
 * Pushes respect the limits Pyroscope documents, because a profile over
 * one is refused whole: at most 30 label names per series, 16,000 samples
 * and 4 MiB (uncompressed) per profile, no '-' in sample type names, and
 * timestamps inside the ingestion window (an hour back, ten minutes
 * ahead). A test over a limit is split into several profiles of the same
 * series, which Pyroscope adds up. Sample labels are dropped: Pyroscope
 * makes series of them, and pid and tid would make thousands.
 *
 * Pyroscope queries a bounded time window (max_query_length, a day by
 * default), so baselines are looked for a day at a time, newest first,
 * with SelectSeries grouped by commit and test: one call says which
 * commits were pushed, when, and each test's sample count. The nearest
 * commit on the first-parent history wins; its tests' profiles come back
 * with SelectMergeProfile (pprof, files and lines included), each test's
 * newest run only, since a commit built twice was pushed twice.
 */
#include "store_int.h"
#include "testflame/net.h"
#include "pyroscope.pb-c.h"
#include "testflame/record.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REQUEST_MAX (4u << 20)        /* bytes of profiles in one push request */
#define UNATTRIBUTED "[unattributed]" /* samples without a test: compare's name */
#define SKEW_MS (3600LL * 1000)       /* clocks and CI queues: pushes may predate commits by this */
#define SCAN_STEP_MS (60LL * 1000)    /* SelectSeries' step when scanning a day */
#define PUSH_PATH "/push.v1.PusherService/Push"
#define SERIES_PATH "/querier.v1.QuerierService/SelectSeries"
#define MERGE_PATH "/querier.v1.QuerierService/SelectMergeProfile"

typedef Testflame__Pyroscope__LabelPair PbLabelPair;
typedef Testflame__Pyroscope__PushRequest PbPushRequest;
typedef Testflame__Pyroscope__RawProfileSeries PbRawSeries;
typedef Testflame__Pyroscope__RawSample PbRawSample;
typedef Testflame__Pyroscope__SelectSeriesRequest PbSeriesRequest;
typedef Testflame__Pyroscope__SelectSeriesResponse PbSeriesResponse;
typedef Testflame__Pyroscope__SelectMergeProfileRequest PbMergeRequest;

struct tf_pyroscope {
	char *url;       /* without user-info */
	char *user, *password, *token, *tenant;
	tf_pyroscope_opts o;
	tf_http *http;   /* opened on first use */
};

/* ---- options, credentials, the session -------------------------------- */

void tf_pyroscope_opts_init(tf_pyroscope_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->timeout = 30;
	o->max_attempts = 3;
	o->max_wait = 30;
}

/* A variable set to nothing is not set. */
static const char *env_set(char *const *envp, const char *name)
{
	const char *v = tf_env_get(envp, name);
	return v && *v ? v : NULL;
}

int tf_pyroscope_opts_env(tf_pyroscope_opts *o, char *const *envp)
{
	const char *t = env_set(envp, "TESTFLAME_PYROSCOPE_TIMEOUT");

	if (!o->user)
		o->user = env_set(envp, "TESTFLAME_PYROSCOPE_USER");
	if (!o->password)
		o->password = env_set(envp, "TESTFLAME_PYROSCOPE_PASSWORD");
	if (!o->token)
		o->token = env_set(envp, "TESTFLAME_PYROSCOPE_TOKEN");
	if (!o->tenant)
		o->tenant = env_set(envp, "TESTFLAME_PYROSCOPE_TENANT");
	if (t) {
		char *end;
		errno = 0;
		double v = strtod(t, &end);
		if (errno || *end || !(v > 0) || v > 3600)
			return tf_error_set(TF_EUSAGE,
				"TESTFLAME_PYROSCOPE_TIMEOUT must be a number of seconds in (0, 3600], not '%s'", t);
		o->timeout = v;
	}
	return 0;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? tf_xstrdup(s) : NULL;
}

static char *pct_decode(const char *s, size_t n)
{
	tf_buf b = TF_BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		if (s[i] == '%' && i + 2 < n && isxdigit((unsigned char)s[i + 1]) &&
		    isxdigit((unsigned char)s[i + 2]) && sscanf(s + i + 1, "%2x", &v) == 1) {
			tf_buf_putc(&b, (char)v);
			i += 2;
		} else {
			tf_buf_putc(&b, s[i]);
		}
	}
	tf_buf_puts(&b, "");
	return tf_buf_detach(&b);
}

int tf_pyroscope_open(tf_pyroscope **out, const tf_pyroscope_opts *o)
{
	const char *url = o->url, *auth, *at = NULL;
	size_t alen, n;
	tf_pyroscope *py;

	*out = NULL;
	if (!url || (strncmp(url, "http://", 7) != 0 && strncmp(url, "https://", 8) != 0))
		return tf_error_set(TF_EUSAGE, "the Pyroscope URL must start with http:// or https://");
	auth = strstr(url, "://") + 3;
	alen = strcspn(auth, "/?#");
	if (alen == 0)
		return tf_error_set(TF_EUSAGE, "the Pyroscope URL has no host");
	for (const char *q = auth; q < auth + alen; q++)
		if (*q == '@')
			at = q;
	py = tf_xcalloc(1, sizeof(*py));
	py->o = *o;
	/* user:password@ in the URL is basic auth; the URL keeps neither */
	py->url = tf_xasprintf("%.*s%s", (int)(auth - url), url, at ? at + 1 : auth);
	n = strlen(py->url);
	while (n > 0 && py->url[n - 1] == '/')
		py->url[--n] = '\0';
	if (at) {
		const char *colon = memchr(auth, ':', (size_t)(at - auth));
		py->user = pct_decode(auth, (size_t)((colon ? colon : at) - auth));
		if (colon)
			py->password = pct_decode(colon + 1, (size_t)(at - colon - 1));
	}
	if (o->user && !py->user)
		py->user = dup_or_null(o->user);
	if (o->password && !py->password)
		py->password = dup_or_null(o->password);
	py->token = dup_or_null(o->token);
	py->tenant = dup_or_null(o->tenant);
	py->o.url = py->url;
	*out = py;
	return 0;
}

static void wipe(char *s)
{
	if (s) {
		memset(s, 0, strlen(s));
		free(s);
	}
}

void tf_pyroscope_free(tf_pyroscope *py)
{
	if (!py)
		return;
	tf_http_free(py->http);
	free(py->url);
	wipe(py->user);
	wipe(py->password);
	wipe(py->token);
	wipe(py->tenant);
	free(py);
}

const char *tf_pyroscope_url(const tf_pyroscope *py)
{
	return py->url;
}

void tf_pyroscope_default_credentials(tf_pyroscope *py, const char *user, const char *password,
				      const char *token, const char *tenant)
{
	if (!py->user && !py->password && !py->token) {
		py->user = dup_or_null(user);
		py->password = dup_or_null(password);
		py->token = dup_or_null(token);
	}
	if (!py->tenant)
		py->tenant = dup_or_null(tenant);
}

static void base64(tf_buf *b, const char *s)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) |
			     (i + 2 < n ? p[i + 2] : 0);
		tf_buf_putc(b, tab[v >> 18 & 63]);
		tf_buf_putc(b, tab[v >> 12 & 63]);
		tf_buf_putc(b, i + 1 < n ? tab[v >> 6 & 63] : '=');
		tf_buf_putc(b, i + 2 < n ? tab[v & 63] : '=');
	}
	tf_buf_puts(b, "");
}

static void log_line(const char *line, void *payload)
{
	tf_pyroscope *py = payload;
	if (py->o.log)
		py->o.log(line, py->o.payload);
}

static int session(tf_pyroscope *py)
{
	tf_buf h = TF_BUF_INIT, cred = TF_BUF_INIT;
	int rc;

	if (py->http)
		return 0;
	tf_http_opts ho;
	tf_http_opts_init(&ho);
	ho.name = "Pyroscope";
	ho.timeout = py->o.timeout;
	ho.max_attempts = py->o.max_attempts ? py->o.max_attempts : 1;
	ho.max_wait = py->o.max_wait;
	ho.log = py->o.log ? log_line : NULL;
	ho.payload = py;
	rc = tf_http_open(&py->http, py->url, NULL, NULL, "application/proto", NULL, &ho);
	if (rc)
		return rc;
	rc = tf_http_add_header(py->http, "Connect-Protocol-Version: 1", NULL);
	if (!rc && py->token) {
		tf_buf_printf(&h, "Authorization: Bearer %s", py->token);
		rc = tf_http_add_header(py->http, h.ptr, py->token);
	} else if (!rc && (py->user || py->password)) {
		tf_buf_printf(&cred, "%s:%s", py->user ? py->user : "", py->password ? py->password : "");
		tf_buf_puts(&h, "Authorization: Basic ");
		base64(&h, cred.ptr);
		rc = tf_http_add_header(py->http, h.ptr, h.ptr + strlen("Authorization: Basic "));
		/* the parts are secrets too, wherever a message might quote them */
		if (!rc && py->password)
			rc = tf_http_add_header(py->http, NULL, py->password);
		if (!rc && py->user)
			rc = tf_http_add_header(py->http, NULL, py->user);
	}
	if (!rc && py->tenant) {
		/* not a credential (in-cluster servers take it over http), but
		 * never printed */
		tf_buf_clear(&h);
		tf_buf_printf(&h, "X-Scope-OrgID: %s", py->tenant);
		rc = tf_http_add_header(py->http, h.ptr, NULL);
		if (!rc)
			rc = tf_http_add_header(py->http, NULL, py->tenant);
	}
	if (h.ptr)
		memset(h.ptr, 0, h.len);
	if (cred.ptr)
		memset(cred.ptr, 0, cred.len);
	tf_buf_free(&h);
	tf_buf_free(&cred);
	if (rc) {
		tf_http_free(py->http);
		py->http = NULL;
	}
	return rc;
}

/*
 * One Connect unary call. 0 with the reply in `out` for 200; otherwise the
 * error ("Pyroscope: POST PATH: 401 Unauthorized: message") and out->status
 * tells the caller what happened (0: no answer).
 */
static int call(tf_http_response *out, tf_pyroscope *py, const char *path, const void *body,
		size_t len, const char *type)
{
	int rc = session(py);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	rc = tf_http_request_body(out, py->http, "POST", path, body, len, type);
	if (rc)
		return rc;
	if (out->status == 200)
		return 0;
	return tf_http_fail(py->http, out, out->status == 401 || out->status == 403 ? TF_EPERM
				       : out->status == 404 ? TF_ENOTFOUND : TF_ERROR,
		       "POST", path);
}

/* ---- profile types and labels ------------------------------------------ */

int tf_pyroscope_profile_types(char **name, char **value_type, char **count_type,
			       const char *event)
{
	tf_event e;
	const char *vt, *vu;
	char *nm;

	if (!event || tf_event_parse(&e, event) != 0)
		return tf_error_set(TF_EINVAL, "no Pyroscope profile type for event '%s'",
				    event ? event : "");
	tf_event_value_type(e, &vt, &vu);
	/* CPU time is Pyroscope's process_cpu, the type Grafana shows first;
	 * other events keep their name, in label-name spelling */
	if (strcmp(vt, "cpu") == 0) {
		nm = tf_xstrdup("process_cpu");
	} else {
		nm = tf_xstrdup(tf_event_name(e));
		for (char *p = nm; *p; p++)
			if (!isalnum((unsigned char)*p))
				*p = '_';
	}
	if (value_type)
		*value_type = tf_xasprintf("%s:%s:%s:%s:%s", nm, vt, vu, vt, vu);
	if (count_type)
		*count_type = tf_xasprintf("%s:samples:count:%s:%s", nm, vt, vu);
	if (name)
		*name = nm;
	else
		free(nm);
	return 0;
}

/* A label value Pyroscope takes: valid UTF-8 of at most 2048 bytes. A
 * longer one keeps a prefix and a hash of the whole, so that two long test
 * names never meet in one series. */
static char *label_value(const char *v)
{
	tf_buf b = TF_BUF_INIT;
	size_t n = strlen(v);

	tf_buf_put_utf8(&b, v, n);
	if (b.len > TF_PYROSCOPE_MAX_LABEL_VALUE) {
		size_t cut = TF_PYROSCOPE_MAX_LABEL_VALUE - 20;
		while (cut > 0 && ((unsigned char)b.ptr[cut] & 0xc0) == 0x80)
			cut--;
		b.len = cut;
		tf_buf_printf(&b, "~%016llx", (unsigned long long)tf_hash_bytes(v, n, 0));
	}
	tf_buf_puts(&b, "");
	return tf_buf_detach(&b);
}

static void add_label(tf_pyroscope_series *s, const char *name, const char *value)
{
	if (!value || !*value || s->names.n >= TF_PYROSCOPE_MAX_LABELS)
		return;
	tf_vec_push(&s->names, tf_xstrdup(name));
	tf_vec_push(&s->values, label_value(value));
}

/* The kind's parts: "<event>-<sampler>-<arch>", events may hold '-'. */
static void split_kind(const char *kind, char **event, char **sampler, char **arch)
{
	const char *last = strrchr(kind, '-'), *mid = NULL;
	for (const char *c = kind; last && c < last; c++)
		if (*c == '-')
			mid = c;
	*event = mid ? tf_xstrndup(kind, (size_t)(mid - kind)) : tf_xstrdup(kind);
	*sampler = mid ? tf_xstrndup(mid + 1, (size_t)(last - mid - 1)) : tf_xstrdup("");
	*arch = last ? tf_xstrdup(last + 1) : tf_xstrdup("");
}

int tf_pyroscope_kind_types(char **name, char **value_type, char **count_type,
			    const char *kind)
{
	char *event, *sampler, *arch;
	int rc;

	split_kind(kind ? kind : "", &event, &sampler, &arch);
	rc = tf_pyroscope_profile_types(name, value_type, count_type, event);
	free(event);
	free(sampler);
	free(arch);
	return rc;
}

/* The series' labels, most important first: past the limit, the last go. */
static int series_labels(tf_pyroscope_series *s, const tf_pyroscope_labels *l, const char *test)
{
	char *name = NULL, pr[32];
	int rc;

	if (!l->service || !*l->service || !l->commit || !*l->commit || !l->suite || !l->kind)
		return tf_error_set(TF_EINVAL, "a Pyroscope series needs a service, a commit, a suite and a runner kind");
	rc = tf_pyroscope_kind_types(&name, NULL, NULL, l->kind);
	if (rc)
		return rc;
	add_label(s, "__name__", name);
	add_label(s, "service_name", l->service);
	add_label(s, "service_git_ref", l->commit);
	add_label(s, "suite", l->suite);
	add_label(s, "test", test);
	add_label(s, "runner", l->kind);
	add_label(s, "branch", l->branch);
	if (l->pr > 0) {
		snprintf(pr, sizeof(pr), "%ld", l->pr);
		add_label(s, "pr", pr);
	}
	add_label(s, "ci", l->ci);
	add_label(s, "shard", l->shard);
	add_label(s, "service_repository", l->repository_url);
	free(name);
	return 0;
}

void tf_pyroscope_batch_clear(tf_pyroscope_batch *b)
{
	for (size_t i = 0; i < b->items.n; i++) {
		tf_pyroscope_series *s = &b->items.v[i];
		for (size_t k = 0; k < s->names.n; k++) {
			free(s->names.v[k]);
			free(s->values.v[k]);
		}
		for (size_t k = 0; k < s->profiles.n; k++)
			tf_buf_free(&s->profiles.v[k]);
		tf_vec_free(&s->names);
		tf_vec_free(&s->values);
		tf_vec_free(&s->profiles);
		tf_vec_free(&s->nsamples);
		free(s->test);
	}
	tf_vec_free(&b->items);
}

/* ---- preparing a run's profiles ---------------------------------------- */

/* What Pyroscope takes of one test's samples: no sample labels, no
 * comments, '-' nowhere in a sample type's name, the run's time. */
static void scrub_profile(tf_profile *p, int64_t time_ns)
{
	for (size_t i = 0; i < p->samples.n; i++)
		p->samples.v[i].nlabels = 0;
	p->labels.n = 0;
	p->comments.n = 0;
	for (size_t i = 0; i < p->sample_types.n; i++) {
		const char *t = tf_profile_str(p, p->sample_types.v[i].type);
		if (strchr(t, '-')) {
			char *u = tf_xstrdup(t);
			for (char *c = u; *c; c++)
				if (*c == '-')
					*c = '_';
			p->sample_types.v[i].type = tf_profile_intern(p, u);
			free(u);
		}
	}
	if (p->period_type.type && strchr(tf_profile_str(p, p->period_type.type), '-')) {
		char *u = tf_xstrdup(tf_profile_str(p, p->period_type.type));
		for (char *c = u; *c; c++)
			if (*c == '-')
				*c = '_';
		p->period_type.type = tf_profile_intern(p, u);
		free(u);
	}
	p->time_nanos = time_ns;
}

/*
 * Samples [from, to) of `p` as profiles within the limits, appended to `s`:
 * at most TF_PYROSCOPE_MAX_SAMPLES samples each, halved again while one
 * encodes larger than TF_PYROSCOPE_MAX_PROFILE_BYTES.
 */
static int add_chunks(tf_pyroscope_series *s, const tf_profile *p, size_t from, size_t to)
{
	uint8_t *mask;
	tf_profile *q = NULL;
	tf_buf raw = TF_BUF_INIT;
	int rc;

	if (to - from > TF_PYROSCOPE_MAX_SAMPLES) {
		/* as few profiles as the limit allows, of even size */
		size_t k = (to - from + TF_PYROSCOPE_MAX_SAMPLES - 1) / TF_PYROSCOPE_MAX_SAMPLES;
		size_t each = (to - from + k - 1) / k;
		for (size_t at = from; at < to; at += each)
			if ((rc = add_chunks(s, p, at, TF_MIN(at + each, to))))
				return rc;
		return 0;
	}
	mask = tf_xcalloc(p->samples.n + 1, 1);
	memset(mask + from, 1, to - from);
	rc = tf_profile_select(&q, p, mask);
	free(mask);
	if (!rc)
		rc = tf_pprof_encode(&raw, q, 0);
	tf_profile_free(q);
	if (rc) {
		tf_buf_free(&raw);
		return rc;
	}
	if (raw.len > TF_PYROSCOPE_MAX_PROFILE_BYTES) {
		tf_buf_free(&raw);
		if (to - from < 2)
			return tf_error_set(TF_EINVAL,
				"test '%s': one sample encodes larger than Pyroscope's %u bytes a profile",
				s->test, TF_PYROSCOPE_MAX_PROFILE_BYTES);
		size_t mid = from + (to - from) / 2;
		if ((rc = add_chunks(s, p, from, mid)))
			return rc;
		return add_chunks(s, p, mid, to);
	}
	tf_vec_push(&s->profiles, raw);
	tf_vec_push(&s->nsamples, to - from);
	return 0;
}

int tf_pyroscope_prepare(tf_pyroscope_batch *out, const tf_pyroscope_labels *l,
			 const tf_profile *run, int64_t time_ns)
{
	tf_strtab names;
	uint32_t *test_of;
	int rc = 0;

	tf_strtab_init(&names);
	test_of = tf_xmalloc((run->samples.n + 1) * sizeof(*test_of));
	for (size_t i = 0; i < run->samples.n; i++) {
		const char *t = tf_sample_label_str(run, &run->samples.v[i], "test");
		if (!t || !*t)
			t = UNATTRIBUTED;
		test_of[i] = tf_strtab_intern(&names, t, strlen(t));
	}
	for (uint32_t t = 0; t < names.strs.n && !rc; t++) {
		tf_pyroscope_series s;
		uint8_t *mask = tf_xcalloc(run->samples.n + 1, 1);
		tf_profile *sel = NULL;
		bool any = false;

		for (size_t i = 0; i < run->samples.n; i++)
			if (test_of[i] == t)
				mask[i] = any = 1;
		if (!any) {
			free(mask);
			continue;
		}
		memset(&s, 0, sizeof(s));
		s.test = tf_xstrdup(names.strs.v[t]);
		rc = series_labels(&s, l, s.test);
		if (!rc)
			rc = tf_profile_select(&sel, run, mask);
		free(mask);
		if (!rc) {
			scrub_profile(sel, time_ns);
			rc = add_chunks(&s, sel, 0, sel->samples.n);
		}
		tf_profile_free(sel);
		tf_vec_push(&out->items, s);
	}
	free(test_of);
	tf_strtab_free(&names);
	return rc;
}

/* A profile's id: UUID-shaped (Pyroscope parses it as one), from its bytes. */
static void profile_id(char out[37], const tf_buf *raw, size_t salt)
{
	uint64_t a = tf_hash_bytes(raw->ptr, raw->len, 0x70797230 + salt);
	uint64_t b = tf_hash_u64(a ^ (uint64_t)tf_now_ns() ^ salt);
	snprintf(out, 37, "%08x-%04x-4%03x-%04x-%012llx", (unsigned)(a >> 32),
		 (unsigned)(a >> 16) & 0xffff, (unsigned)a & 0xfff,
		 (unsigned)(0x8000 | ((b >> 48) & 0x3fff)),
		 (unsigned long long)(b & 0xffffffffffffULL));
}

int tf_pyroscope_encode_push(tf_buf *out, const tf_pyroscope_batch *b, size_t from, size_t n)
{
	PbPushRequest req = TESTFLAME__PYROSCOPE__PUSH_REQUEST__INIT;
	TF_VEC(tf_buf) gz = { 0 };
	TF_VEC(char *) ids = { 0 };
	size_t nl = 0, np = 0;
	int rc = 0;

	for (size_t i = from; i < from + n; i++) {
		nl += b->items.v[i].names.n;
		np += b->items.v[i].profiles.n;
	}
	PbRawSeries *series = tf_xcalloc(n + 1, sizeof(*series));
	PbRawSeries **seriesp = tf_xcalloc(n + 1, sizeof(*seriesp));
	PbLabelPair *labels = tf_xcalloc(nl + 1, sizeof(*labels));
	PbLabelPair **labelp = tf_xcalloc(nl + 1, sizeof(*labelp));
	PbRawSample *samples = tf_xcalloc(np + 1, sizeof(*samples));
	PbRawSample **samplep = tf_xcalloc(np + 1, sizeof(*samplep));
	size_t li = 0, pi = 0;

	for (size_t i = 0; i < n && !rc; i++) {
		const tf_pyroscope_series *s = &b->items.v[from + i];
		PbRawSeries *rs = &series[i];
		testflame__pyroscope__raw_profile_series__init(rs);
		seriesp[i] = rs;
		rs->labels = labelp + li;
		rs->n_labels = s->names.n;
		for (size_t k = 0; k < s->names.n; k++, li++) {
			testflame__pyroscope__label_pair__init(&labels[li]);
			labels[li].name = s->names.v[k];
			labels[li].value = s->values.v[k];
			labelp[li] = &labels[li];
		}
		rs->samples = samplep + pi;
		rs->n_samples = s->profiles.n;
		for (size_t k = 0; k < s->profiles.n && !rc; k++, pi++) {
			tf_buf z = TF_BUF_INIT;
			char id[37];
			rc = tf_gzip(&z, s->profiles.v[k].ptr, s->profiles.v[k].len, 1);
			tf_vec_push(&gz, z);
			profile_id(id, &s->profiles.v[k], pi);
			tf_vec_push(&ids, tf_xstrdup(id));
			testflame__pyroscope__raw_sample__init(&samples[pi]);
			samples[pi].raw_profile.data = (uint8_t *)z.ptr;
			samples[pi].raw_profile.len = z.len;
			samples[pi].id = ids.v[ids.n - 1];
			samplep[pi] = &samples[pi];
		}
	}
	if (!rc) {
		req.series = seriesp;
		req.n_series = n;
		size_t len = testflame__pyroscope__push_request__get_packed_size(&req);
		tf_buf_grow(out, len + 1);
		testflame__pyroscope__push_request__pack(&req, (uint8_t *)out->ptr + out->len);
		out->len += len;
	}
	for (size_t i = 0; i < gz.n; i++)
		tf_buf_free(&gz.v[i]);
	for (size_t i = 0; i < ids.n; i++)
		free(ids.v[i]);
	tf_vec_free(&gz);
	tf_vec_free(&ids);
	free(series);
	free(seriesp);
	free(labels);
	free(labelp);
	free(samples);
	free(samplep);
	return rc;
}

/* ---- pushing ----------------------------------------------------------- */

/* /ingest's name: "<service>{k=v,...}", where values cannot hold the
 * characters that delimit it. */
static void ingest_name(tf_buf *out, const tf_pyroscope_series *s)
{
	const char *service = "";
	for (size_t k = 0; k < s->names.n; k++)
		if (strcmp(s->names.v[k], "service_name") == 0)
			service = s->values.v[k];
	tf_buf_puts(out, service);
	tf_buf_putc(out, '{');
	bool first = true;
	for (size_t k = 0; k < s->names.n; k++) {
		if (strcmp(s->names.v[k], "service_name") == 0 || strcmp(s->names.v[k], "__name__") == 0)
			continue;
		tf_buf_printf(out, "%s%s=", first ? "" : ",", s->names.v[k]);
		for (const char *c = s->values.v[k]; *c; c++)
			tf_buf_putc(out, strchr(",{}=", *c) ? '_' : *c);
		first = false;
	}
	tf_buf_putc(out, '}');
}

static void put_query_value(tf_buf *b, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (isalnum(*p) || strchr("-._~", *p))
			tf_buf_putc(b, (char)*p);
		else
			tf_buf_printf(b, "%%%02X", *p);
	}
}

/* The older API: one POST /ingest?format=pprof per profile. */
static int push_ingest(tf_pyroscope_push_result *res, tf_pyroscope *py, const tf_pyroscope_batch *b,
		       size_t from, size_t n, int64_t time_ns)
{
	int rc = 0;
	for (size_t i = from; i < from + n && !rc; i++) {
		const tf_pyroscope_series *s = &b->items.v[i];
		for (size_t k = 0; k < s->profiles.n && !rc; k++) {
			tf_buf url = TF_BUF_INIT, name = TF_BUF_INIT;
			tf_http_response r;
			ingest_name(&name, s);
			tf_buf_puts(&url, "/ingest?name=");
			put_query_value(&url, name.ptr);
			tf_buf_printf(&url, "&from=%lld&until=%lld&format=pprof&spyName=testflame",
				      (long long)(time_ns / 1000000000 - 1),
				      (long long)(time_ns / 1000000000));
			rc = call(&r, py, url.ptr, s->profiles.v[k].ptr, s->profiles.v[k].len,
				  "application/octet-stream");
			res->requests++;
			if (rc && (r.status == 400 || r.status == 413 || r.status == 422)) {
				res->refused++; /* this one only: the next may pass */
				snprintf(res->refusal, sizeof(res->refusal), "%s", tf_error_last());
				tf_error_clear();
				rc = 0;
			} else if (!rc) {
				res->profiles++;
			}
			tf_http_response_clear(&r);
			tf_buf_free(&url);
			tf_buf_free(&name);
		}
	}
	return rc;
}

/* The profiles in series [from, from + n). */
static size_t count_profiles(const tf_pyroscope_batch *b, size_t from, size_t n)
{
	size_t c = 0;
	for (size_t i = from; i < from + n; i++)
		c += b->items.v[i].profiles.n;
	return c;
}

/*
 * Push series [from, from + n): one request, split in two when the server
 * says it is too large. Once the server turns out to have no Push (404,
 * 415, 501), /ingest takes the rest.
 */
static int push_range(tf_pyroscope_push_result *res, tf_pyroscope *py, const tf_pyroscope_batch *b,
		      size_t from, size_t n, int64_t time_ns)
{
	tf_buf body = TF_BUF_INIT;
	tf_http_response r;
	int rc;

	if (n == 0)
		return 0;
	if (res->ingest)
		return push_ingest(res, py, b, from, n, time_ns);
	rc = tf_pyroscope_encode_push(&body, b, from, n);
	if (!rc) {
		rc = call(&r, py, PUSH_PATH, body.ptr, body.len, "application/proto");
		res->requests++;
	} else {
		memset(&r, 0, sizeof(r));
	}
	tf_buf_free(&body);
	if (rc && (r.status == 404 || r.status == 405 || r.status == 415 || r.status == 501)) {
		tf_http_response_clear(&r);
		res->ingest = true;
		tf_error_clear();
		return push_ingest(res, py, b, from, n, time_ns);
	}
	if (rc && (r.status == 413 || r.status == 400)) {
		/* too large for this server, or a series it will not take (a
		 * limit lower than the documented one): halve until only what
		 * it refuses is left, and push the rest */
		bool too_large = r.status == 413;
		tf_http_response_clear(&r);
		snprintf(res->refusal, sizeof(res->refusal), "%s", tf_error_last());
		tf_error_clear();
		if (n > 1) {
			size_t half = n / 2;
			rc = push_range(res, py, b, from, half, time_ns);
			return rc ? rc : push_range(res, py, b, from + half, n - half, time_ns);
		}
		if (too_large && b->items.v[from].profiles.n > 1) {
			/* one series with several profiles: one request each */
			tf_pyroscope_batch one = { { NULL, 0, 0 } };
			const tf_pyroscope_series *s = &b->items.v[from];
			for (size_t k = 0; k < s->profiles.n && !rc; k++) {
				tf_pyroscope_series part = *s;
				part.profiles.v = &s->profiles.v[k];
				part.profiles.n = 1;
				part.nsamples.v = &s->nsamples.v[k];
				part.nsamples.n = 1;
				one.items.v = &part;
				one.items.n = 1;
				rc = push_range(res, py, &one, 0, 1, time_ns);
			}
			return rc;
		}
		res->refused += count_profiles(b, from, n);
		return 0;
	}
	tf_http_response_clear(&r);
	if (!rc)
		res->profiles += count_profiles(b, from, n);
	return rc;
}

static int64_t realtime_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int tf_pyroscope_push(tf_pyroscope_push_result *out, tf_pyroscope *py,
		      const tf_pyroscope_labels *l, const tf_profile *const *runs, size_t n,
		      int64_t now_ns)
{
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!now_ns)
		now_ns = realtime_ms() * 1000000;
	for (size_t r = 0; r < n && !rc; r++) {
		tf_pyroscope_batch b = { { NULL, 0, 0 } };
		/* runs a second apart, the newest last: each is told apart */
		int64_t t = now_ns - (int64_t)(n - 1 - r) * 1000000000LL;
		size_t start = 0, bytes = 0;

		rc = tf_pyroscope_prepare(&b, l, runs[r], t);
		for (size_t i = 0; i < b.items.n; i++) {
			out->series++;
			for (size_t k = 0; k < b.items.v[i].profiles.n; k++)
				out->samples += b.items.v[i].nsamples.v[k];
		}
		if (r == 0)
			out->tests = b.items.n;
		/* requests of up to REQUEST_MAX bytes of (uncompressed) profiles */
		for (size_t i = 0; i < b.items.n && !rc; i++) {
			size_t sz = 0;
			for (size_t k = 0; k < b.items.v[i].profiles.n; k++)
				sz += b.items.v[i].profiles.v[k].len;
			if (i > start && bytes + sz > REQUEST_MAX) {
				rc = push_range(out, py, &b, start, i - start, t);
				start = i;
				bytes = 0;
			}
			bytes += sz;
		}
		if (!rc)
			rc = push_range(out, py, &b, start, b.items.n - start, t);
		tf_pyroscope_batch_clear(&b);
	}
	if (!rc && out->refused)
		rc = tf_error_set(TF_ERROR, "Pyroscope refused %zu of %zu profiles (the last: %s)",
				  out->refused, out->refused + out->profiles, out->refusal);
	return rc;
}

/* ---- querying ---------------------------------------------------------- */

void tf_pyroscope_selector(tf_buf *out, const char *const *names, const char *const *values,
			   size_t n)
{
	tf_buf_putc(out, '{');
	for (size_t i = 0; i < n; i++) {
		tf_buf_printf(out, "%s%s=\"", i ? "," : "", names[i]);
		for (const char *c = values[i]; *c; c++) {
			if (*c == '\\' || *c == '"')
				tf_buf_putc(out, '\\');
			if (*c == '\n')
				tf_buf_puts(out, "\\n");
			else
				tf_buf_putc(out, *c);
		}
		tf_buf_putc(out, '"');
	}
	tf_buf_putc(out, '}');
}

typedef struct {
	char *commit, *test;
	int64_t newest_ms;  /* the newest point: when its newest run was pushed */
	double samples;     /* that run's samples */
} seen_series;

typedef struct {
	tf_pyroscope *py;
	const tf_pyroscope_query *q;
	char *value_type, *count_type, *selector;
	TF_VEC(seen_series) seen;
	int64_t scanned_to; /* everything pushed after this is in `seen` */
	int64_t oldest;     /* where the lookback ends */
} scan;

static void scan_free(scan *sc)
{
	for (size_t i = 0; i < sc->seen.n; i++) {
		free(sc->seen.v[i].commit);
		free(sc->seen.v[i].test);
	}
	tf_vec_free(&sc->seen);
	free(sc->value_type);
	free(sc->count_type);
	free(sc->selector);
}

static const char *pb_label(PbLabelPair **l, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (l[i]->name && strcmp(l[i]->name, name) == 0)
			return l[i]->value;
	return NULL;
}

/*
 * SelectSeries of the samples pushed in [start, end] that `selector`
 * picks, grouped by `group`, at `step` seconds, merged into sc->seen: per
 * commit and test, the newest point and its value. Series without a
 * service_git_ref label are `commit`'s.
 */
static int series_query(scan *sc, char *selector, int64_t start, int64_t end, double step,
			char **group, size_t ngroup, const char *commit)
{
	PbSeriesRequest req = TESTFLAME__PYROSCOPE__SELECT_SERIES_REQUEST__INIT;
	PbSeriesResponse *resp;
	tf_buf body = TF_BUF_INIT;
	tf_http_response r;
	int rc;

	req.profile_typeid = sc->count_type;
	req.label_selector = selector;
	req.start = start;
	req.end = end;
	req.group_by = group;
	req.n_group_by = ngroup;
	req.step = step;
	tf_buf_grow(&body, testflame__pyroscope__select_series_request__get_packed_size(&req) + 1);
	body.len = testflame__pyroscope__select_series_request__pack(&req, (uint8_t *)body.ptr);
	rc = call(&r, sc->py, SERIES_PATH, body.ptr, body.len, "application/proto");
	tf_buf_free(&body);
	if (rc) {
		tf_http_response_clear(&r);
		return rc;
	}
	resp = testflame__pyroscope__select_series_response__unpack(NULL, r.body.len,
								    (const uint8_t *)r.body.ptr);
	if (!resp) {
		tf_http_response_clear(&r);
		return tf_error_set(TF_ERROR, "Pyroscope: %s: the reply is not a SelectSeriesResponse",
				    SERIES_PATH);
	}
	for (size_t i = 0; i < resp->n_series; i++) {
		const Testflame__Pyroscope__Series *s = resp->series[i];
		const char *c = pb_label(s->labels, s->n_labels, "service_git_ref");
		const char *test = pb_label(s->labels, s->n_labels, "test");
		seen_series *hit = NULL;
		if (!c)
			c = commit;
		if (!c || !test || !s->n_points)
			continue;
		for (size_t k = 0; k < sc->seen.n && !hit; k++)
			if (strcmp(sc->seen.v[k].commit, c) == 0 && strcmp(sc->seen.v[k].test, test) == 0)
				hit = &sc->seen.v[k];
		if (!hit) {
			seen_series ns = { tf_xstrdup(c), tf_xstrdup(test), INT64_MIN, 0 };
			tf_vec_push(&sc->seen, ns);
			hit = &sc->seen.v[sc->seen.n - 1];
		}
		for (size_t k = 0; k < s->n_points; k++) {
			if (s->points[k]->timestamp > hit->newest_ms) {
				hit->newest_ms = s->points[k]->timestamp;
				hit->samples = s->points[k]->value;
			}
		}
	}
	testflame__pyroscope__select_series_response__free_unpacked(resp, NULL);
	tf_http_response_clear(&r);
	return 0;
}

/*
 * One more day back: which commits and tests were pushed in it. A minute
 * a point keeps a day's answer small (servers cap points per series);
 * refine() then finds each test's newest second.
 */
static int scan_window(scan *sc)
{
	char *group[2] = { "service_git_ref", "test" };
	int64_t start = TF_MAX(sc->scanned_to - TF_PYROSCOPE_WINDOW_MS + 1, sc->oldest);
	int rc = series_query(sc, sc->selector, start, sc->scanned_to, SCAN_STEP_MS / 1000.0,
			      group, 2, NULL);
	if (!rc)
		sc->scanned_to = start - 1;
	return rc;
}

/*
 * Narrow each of `commit`'s tests' newest point to a finer step: a
 * SelectSeries at `step_ms` around each distinct newest point found at
 * the coarser `coarse_ms` (one call for all the tests a job pushed
 * together). A point stands for the step after it or the step before it,
 * as servers count, so both are looked at.
 */
static int refine(scan *sc, const char *commit, int64_t coarse_ms, int64_t step_ms)
{
	const tf_pyroscope_query *q = sc->q;
	const char *names[4] = { "service_name", "suite", "runner", "service_git_ref" };
	const char *values[4] = { q->service, q->suite, q->kind, commit };
	char *group[1] = { "test" };
	TF_VEC(int64_t) centers = { 0 };
	tf_buf sel = TF_BUF_INIT;
	int rc = 0;

	for (size_t k = 0; k < sc->seen.n; k++) {
		seen_series *s = &sc->seen.v[k];
		bool known = false;
		if (strcmp(s->commit, commit) != 0 || s->newest_ms == INT64_MIN)
			continue;
		for (size_t i = 0; i < centers.n && !known; i++)
			known = centers.v[i] == s->newest_ms;
		if (!known)
			tf_vec_push(&centers, s->newest_ms);
		s->newest_ms = INT64_MIN;
		s->samples = 0;
	}
	tf_pyroscope_selector(&sel, names, values, 4);
	for (size_t i = 0; i < centers.n && !rc; i++)
		rc = series_query(sc, sel.ptr, centers.v[i] - coarse_ms, centers.v[i] + coarse_ms,
				  (double)step_ms / 1000, group, 1, commit);
	tf_buf_free(&sel);
	tf_vec_free(&centers);
	return rc;
}

static bool scan_has(const scan *sc, const char *commit)
{
	for (size_t k = 0; k < sc->seen.n; k++)
		if (strcmp(sc->seen.v[k].commit, commit) == 0)
			return true;
	return false;
}

/* The baseline under construction: a run file of the tests' profiles. */
typedef struct {
	tf_profile *p;
	uint32_t *fn, *map, *loc; /* source index -> ours, per source profile */
} builder;

static void add_test_profile(builder *bl, const tf_profile *src, const char *test)
{
	tf_profile *p = bl->p;
	tf_label lab = { tf_profile_intern(p, "test"), tf_profile_intern(p, test), 0, 0 };
	TF_VEC(uint32_t) locs = { 0 };
	TF_VEC(tf_line) lines = { 0 };
	int col = tf_profile_default_value(src);

	if (col < 0)
		return;
	bl->fn = tf_xrealloc(bl->fn, (src->functions.n + 1) * sizeof(uint32_t));
	bl->map = tf_xrealloc(bl->map, (src->mappings.n + 1) * sizeof(uint32_t));
	bl->loc = tf_xrealloc(bl->loc, (src->locations.n + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < src->functions.n; i++) {
		const tf_function *f = &src->functions.v[i];
		bl->fn[i] = tf_profile_add_function(p, tf_profile_intern(p, tf_profile_str(src, f->name)),
						    tf_profile_intern(p, tf_profile_str(src, f->system_name)),
						    tf_profile_intern(p, tf_profile_str(src, f->filename)),
						    f->start_line);
	}
	for (size_t i = 0; i < src->mappings.n; i++) {
		tf_mapping m = src->mappings.v[i];
		m.filename = tf_profile_intern(p, tf_profile_str(src, m.filename));
		m.build_id = tf_profile_intern(p, tf_profile_str(src, m.build_id));
		bl->map[i] = tf_profile_add_mapping(p, &m);
	}
	for (size_t i = 0; i < src->locations.n; i++) {
		const tf_location *l = &src->locations.v[i];
		lines.n = 0;
		for (uint32_t k = 0; k < l->nlines; k++) {
			tf_line ln = src->lines.v[l->lines_off + k];
			ln.function = bl->fn[ln.function];
			tf_vec_push(&lines, ln);
		}
		bl->loc[i] = tf_profile_add_location(p, l->mapping == TF_NO_MAPPING ? TF_NO_MAPPING
							: bl->map[l->mapping],
						     l->address, lines.v, l->nlines);
	}
	for (size_t i = 0; i < src->samples.n; i++) {
		const tf_sample *s = &src->samples.v[i];
		int64_t v = tf_sample_values(src, i)[col];
		locs.n = 0;
		for (uint32_t k = 0; k < s->nlocs; k++)
			tf_vec_push(&locs, bl->loc[src->stack.v[s->locs_off + k]]);
		tf_profile_add_sample(p, locs.v, (uint32_t)locs.n, &v, &lab, 1);
	}
	tf_vec_free(&locs);
	tf_vec_free(&lines);
}

/* Fetch `commit`'s tests (each test's newest run) into a run file. */
static int fetch_baseline(tf_buf *out, scan *sc, const char *commit, int64_t *pushed_ms)
{
	const tf_pyroscope_query *q = sc->q;
	builder bl = { NULL, NULL, NULL, NULL };
	char *event, *sampler, *arch;
	double total_samples = 0, total_value = 0;
	tf_buf meta = TF_BUF_INIT;
	int rc = 0;
	const char *vtype = NULL, *vunit = NULL;

	split_kind(q->kind, &event, &sampler, &arch);
	tf_profile_new(&bl.p);
	*pushed_ms = INT64_MIN;
	for (size_t i = 0; i < sc->seen.n && !rc; i++) {
		seen_series *s = &sc->seen.v[i];
		PbMergeRequest req = TESTFLAME__PYROSCOPE__SELECT_MERGE_PROFILE_REQUEST__INIT;
		const char *names[5] = { "service_name", "suite", "runner", "service_git_ref", "test" };
		const char *values[5] = { q->service, q->suite, q->kind, commit, s->test };
		tf_buf sel = TF_BUF_INIT, body = TF_BUF_INIT;
		tf_profile *tp = NULL;
		tf_http_response r;

		if (strcmp(s->commit, commit) != 0 || s->newest_ms == INT64_MIN)
			continue;
		tf_pyroscope_selector(&sel, names, values, 5);
		req.profile_typeid = sc->value_type;
		req.label_selector = sel.ptr;
		/* the newest run only: its millisecond (either side of it, as
		 * the point may stand for either) */
		req.start = s->newest_ms - 1;
		req.end = s->newest_ms + 1;
		req.max_nodes = -1;
		tf_buf_grow(&body, testflame__pyroscope__select_merge_profile_request__get_packed_size(&req) + 1);
		body.len = testflame__pyroscope__select_merge_profile_request__pack(&req, (uint8_t *)body.ptr);
		rc = call(&r, sc->py, MERGE_PATH, body.ptr, body.len, "application/proto");
		if (!rc && (rc = tf_pprof_decode(&tp, r.body.ptr ? r.body.ptr : "", r.body.len)))
			tf_error_wrap(rc, "Pyroscope: %s: test '%s'", MERGE_PATH, s->test);
		if (!rc && tp->sample_types.n) {
			int col = tf_profile_default_value(tp);
			if (!vtype) {
				tf_profile_add_sample_type(bl.p, tf_profile_str(tp, tp->sample_types.v[col].type),
							   tf_profile_str(tp, tp->sample_types.v[col].unit));
				vtype = tf_profile_str(bl.p, bl.p->sample_types.v[0].type);
				vunit = tf_profile_str(bl.p, bl.p->sample_types.v[0].unit);
			}
			add_test_profile(&bl, tp, s->test);
			int64_t v = tf_profile_total(tp, (size_t)col);
			total_value += (double)v;
			total_samples += s->samples;
			tf_buf_clear(&meta);
			tf_buf_printf(&meta, "test.%s", s->test);
			char *val = tf_xasprintf("samples=%.0f value=%lld", s->samples, (long long)v);
			tf_profile_set_meta(bl.p, meta.ptr, val);
			free(val);
		}
		if (s->newest_ms > *pushed_ms)
			*pushed_ms = s->newest_ms;
		tf_profile_free(tp);
		tf_http_response_clear(&r);
		tf_buf_free(&sel);
		tf_buf_free(&body);
	}
	if (!rc && !bl.p->sample_types.n)
		rc = tf_error_set(TF_ENOTFOUND, "Pyroscope returned no profiles for %.12s", commit);
	if (!rc) {
		char when[32];
		time_t t = (time_t)(*pushed_ms / 1000);
		struct tm tm;
		/* the period makes sample counts of values: value per sample */
		bl.p->period_type.type = tf_profile_intern(bl.p, vtype);
		bl.p->period_type.unit = tf_profile_intern(bl.p, vunit);
		bl.p->period = total_samples > 0 ? llround(total_value / total_samples) : 0;
		bl.p->time_nanos = *pushed_ms * 1000000;
		tf_profile_set_meta(bl.p, "suite", q->suite);
		tf_profile_set_meta(bl.p, "commit", commit);
		tf_profile_set_meta(bl.p, "event", event);
		tf_profile_set_meta(bl.p, "sampler", sampler);
		tf_profile_set_meta(bl.p, "arch", arch);
		tf_profile_set_meta(bl.p, "source", "pyroscope");
		tf_profile_set_meta(bl.p, "pyroscope_url", tf_pyroscope_url(sc->py));
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
		tf_profile_set_meta(bl.p, "start", when);
		rc = tf_pprof_encode(out, bl.p, 1);
	}
	tf_profile_free(bl.p);
	free(bl.fn);
	free(bl.map);
	free(bl.loc);
	free(event);
	free(sampler);
	free(arch);
	tf_buf_free(&meta);
	return rc;
}

static void age(char *out, size_t size, int64_t ms)
{
	int64_t s = TF_MAX(ms / 1000, 0), n;
	const char *unit;
	if (s < 90)
		n = s, unit = "second";
	else if (s < 90 * 60)
		n = (s + 30) / 60, unit = "minute";
	else if (s < 36 * 3600)
		n = (s + 1800) / 3600, unit = "hour";
	else
		n = (s + 43200) / 86400, unit = "day";
	snprintf(out, size, "%lld %s%s", (long long)n, unit, n == 1 ? "" : "s");
}

/* The first-parent walk of tf_store_resolve_pyroscope(), one commit at a
 * time (the walk itself is git.h's, the store's and the context's). */
struct pyro_walk {
	tf_store *s;
	const tf_pyroscope_query *q;
	scan *sc;
	tf_store_match *out;
	int64_t now;
	bool too_old;        /* the scan went back past what Pyroscope keeps */
};

static int pyro_step(const git_oid *commit, unsigned distance, void *payload)
{
	struct pyro_walk *w = payload;
	scan *sc = w->sc;
	char hex[TF_STORE_ID_HEX + 1];
	git_commit *c = NULL;
	int64_t ctime;
	int rc;

	tf_git_id_hex(hex, commit);
	w->out->walked++;
	w->out->distance = distance;
	if ((rc = git_commit_lookup(&c, w->s->repo, commit)))
		return tf_git_error(rc, 0, "cannot read commit %.12s", hex);
	ctime = (int64_t)git_commit_time(c) * 1000;
	git_commit_free(c);
	/* scan back until this commit's pushes would be in what was seen */
	while (!scan_has(sc, hex) && sc->scanned_to >= sc->oldest &&
	       sc->scanned_to > ctime - SKEW_MS) {
		if ((rc = scan_window(sc)))
			return rc;
	}
	if (scan_has(sc, hex)) {
		char ago[32];
		tf_buf bytes = TF_BUF_INIT;
		/* each test's newest push to the second, then to the
		 * millisecond: the runs of one job are a second apart, and
		 * two jobs of one commit are told apart by their instants */
		if (!(rc = refine(sc, hex, SCAN_STEP_MS, 1000)) &&
		    !(rc = refine(sc, hex, 1000, 1)))
			rc = fetch_baseline(&bytes, sc, hex, &w->out->pushed_ms);
		if (rc) {
			tf_buf_free(&bytes);
			return rc;
		}
		free(w->s->pyro_key);
		tf_buf_free(&w->s->pyro_bytes);
		w->s->pyro_key = tf_store_pyroscope_key(hex, w->q->suite, w->q->kind);
		w->s->pyro_bytes = bytes;
		memcpy(w->out->commit, hex, sizeof(w->out->commit));
		w->out->fetched = true;
		age(ago, sizeof(ago), w->now - w->out->pushed_ms);
		snprintf(w->out->source, sizeof(w->out->source), ", from Pyroscope, pushed %s ago", ago);
		return 1;
	}
	w->too_old = sc->scanned_to < sc->oldest;
	return w->too_old;
}

int tf_store_resolve_pyroscope(tf_store_match *out, tf_store *s, const char *start_rev,
			       const tf_pyroscope_query *q)
{
	unsigned max = q->max_depth ? q->max_depth : TF_STORE_DEFAULT_DEPTH;
	int64_t now = q->now_ms ? q->now_ms : realtime_ms();
	const char *names[3] = { "service_name", "suite", "runner" };
	const char *values[3] = { q->service, q->suite, q->kind };
	struct pyro_walk w;
	tf_git_walk_end end;
	git_oid start;
	tf_buf sel = TF_BUF_INIT;
	scan sc;
	int rc;

	memset(out, 0, sizeof(*out));
	memset(&sc, 0, sizeof(sc));
	if (!s->pyro)
		return tf_error_set(TF_EUNSUPPORTED, "the %s has no Pyroscope", s->desc);
	if (!s->repo)
		return tf_error_set(TF_EUSAGE, "finding a baseline walks git history");
	if (!q->service || !*q->service)
		return tf_error_set(TF_EUSAGE, "no repository name to look for in Pyroscope (service_name)");
	sc.py = s->pyro;
	sc.q = q;
	sc.scanned_to = now + 10 * 60 * 1000; /* Pyroscope takes pushes ten minutes ahead */
	sc.oldest = now - TF_PYROSCOPE_LOOKBACK_MS;
	tf_pyroscope_selector(&sel, names, values, 3);
	sc.selector = tf_buf_detach(&sel);
	rc = tf_pyroscope_kind_types(NULL, &sc.value_type, &sc.count_type, q->kind);
	if (rc || (rc = tf_git_rev(&start, s->repo, start_rev)))
		goto done;
	w = (struct pyro_walk){ s, q, &sc, out, now, false };
	rc = tf_git_walk_first_parent(s->repo, &start, max, pyro_step, &w, &end);
	if (rc == TF_ENOTFOUND && !out->walked)
		rc = tf_git_error(0, TF_ENOTFOUND, "commit '%s' is not in this repository", start_rev);
	if (rc || out->commit[0])
		goto done;
	if (w.too_old || end == TF_GIT_WALK_MAX) {
		rc = tf_error_set(TF_ENOTFOUND,
			"no profiles of suite '%s', kind '%s' in Pyroscope for the %u first-parent commit%s from %.12s (pushed in the last %lld days)",
			q->suite, q->kind, out->walked, out->walked == 1 ? "" : "s",
			git_oid_tostr_s(&start), (long long)(TF_PYROSCOPE_LOOKBACK_MS / 86400000));
	} else {
		out->history_ended = true;
		rc = tf_error_set(TF_ENOTFOUND,
			"no profiles of suite '%s', kind '%s' in Pyroscope for the %u first-parent commit%s from %.12s",
			q->suite, q->kind, out->walked, out->walked == 1 ? "" : "s",
			git_oid_tostr_s(&start));
	}
done:
	scan_free(&sc);
	return rc;
}

/* ---- Grafana ----------------------------------------------------------- */

/* A filter of Grafana's ad hoc filter variables: key|=|value, with the
 * variable's own escapes for its delimiters, then percent-encoded. */
static void put_filter(tf_buf *b, const char *var, const char *key, const char *value)
{
	tf_buf f = TF_BUF_INIT;
	tf_buf_printf(&f, "%s|=|", key);
	for (const char *c = value; *c; c++) {
		if (*c == '|')
			tf_buf_puts(&f, "__gfp__");
		else if (*c == ',')
			tf_buf_puts(&f, "__gfc__");
		else
			tf_buf_putc(&f, *c);
	}
	tf_buf_printf(b, "&%s=", var);
	put_query_value(b, f.ptr);
	tf_buf_free(&f);
}

char *tf_pyroscope_grafana_url(const tf_pyroscope_link *l, const char *test)
{
	tf_buf b = TF_BUF_INIT;
	const int64_t margin = 3600 * 1000;
	size_t n = strlen(l->grafana_url);
	int64_t from, to;

	if (!l->grafana_url || !l->service || !l->profile_type || !l->base_commit || !l->head_commit)
		return NULL;
	while (n > 0 && l->grafana_url[n - 1] == '/')
		n--;
	tf_buf_put(&b, l->grafana_url, n);
	tf_buf_puts(&b, "/a/grafana-pyroscope-app/explore?explorationType=diff-flame-graph");
	if (l->datasource) {
		tf_buf_puts(&b, "&var-dataSource=");
		put_query_value(&b, l->datasource);
	}
	tf_buf_puts(&b, "&var-serviceName=");
	put_query_value(&b, l->service);
	tf_buf_puts(&b, "&var-profileMetricId=");
	put_query_value(&b, l->profile_type);
	put_filter(&b, "var-filtersBaseline", "service_git_ref", l->base_commit);
	if (l->suite)
		put_filter(&b, "var-filtersBaseline", "suite", l->suite);
	put_filter(&b, "var-filtersBaseline", "test", test);
	put_filter(&b, "var-filtersComparison", "service_git_ref", l->head_commit);
	if (l->suite)
		put_filter(&b, "var-filtersComparison", "suite", l->suite);
	put_filter(&b, "var-filtersComparison", "test", test);
	from = TF_MIN(l->base_ms, l->head_ms) - margin;
	to = TF_MAX(l->base_ms, l->head_ms) + margin;
	tf_buf_printf(&b, "&from=%lld&to=%lld&diffFrom=%lld&diffTo=%lld&diffFrom-2=%lld&diffTo-2=%lld",
		      (long long)from, (long long)to, (long long)(l->base_ms - margin),
		      (long long)(l->base_ms + margin), (long long)(l->head_ms - margin),
		      (long long)(l->head_ms + margin));
	return tf_buf_detach(&b);
}
