/*
 * shards.c - a suite split across CI jobs, put back together. Each shard
 * job (`run --shard K/N`) records its part of the suite into a run file
 * tagged testflame.shard=K/N; the fan-in job (`merge`) hands those files
 * here, which checks that they are the parts of one suite at one commit
 * (same suite, commit and runner kind, every shard 1..N exactly once, no
 * test recorded by two of them) and joins them into the runs a comparison
 * takes: run r holds every shard's run r. A test's identity is its name,
 * whichever shard ran it, so a baseline merged from shards split one way
 * compares with shards split another way test for test.
 *
 * Work that belongs to no test of its own ("[outside tests]", the build
 * steps, a suite testflame could not split, named by the command) happens
 * in every shard: it is summed, as one run of the whole suite would have
 * measured it, and never counts as a doubled test.
 *
 * The dir: store keeps shard files apart from baselines, under
 * PATH/shards/<commit>/, so listing, pruning and resolving baselines never
 * see a part of a suite.
 */
#include "store_int.h"

#include "testflame/attribute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int tf_shard_parse(tf_shard *out, const char *spec)
{
	unsigned long k = 0, n = 0;
	const char *p = spec ? spec : "";
	bool ok = *p >= '0' && *p <= '9';

	memset(out, 0, sizeof(*out));
	for (; ok && *p >= '0' && *p <= '9' && k <= TF_SHARD_MAX; p++)
		k = k * 10 + (unsigned long)(*p - '0');
	ok = ok && *p++ == '/' && *p >= '0' && *p <= '9';
	for (; ok && *p >= '0' && *p <= '9' && n <= TF_SHARD_MAX; p++)
		n = n * 10 + (unsigned long)(*p - '0');
	if (!ok || *p || k < 1 || n > TF_SHARD_MAX || k > n)
		return tf_error_set(TF_EUSAGE, "'%s' is not a shard: expected K/N with 1 <= K <= N "
				    "<= %d (2/3: the second of three)", spec ? spec : "",
				    TF_SHARD_MAX);
	out->index = (unsigned)k;
	out->total = (unsigned)n;
	return 0;
}

const char *tf_shard_format(char *buf, size_t size, tf_shard s)
{
	snprintf(buf, size, "%u/%u", s.index, s.total);
	return buf;
}

/* ---- merging ---- */

/* A test one shard recorded, for finding those two shards recorded. */
typedef struct {
	const char *key;   /* parent "\x1f" name, or name */
	size_t shard;      /* index into the sorted shards */
} shard_test;

static int cmp_shard_test(const void *a, const void *b)
{
	const shard_test *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->shard > y->shard) - (x->shard < y->shard);
}

static int cmp_shard_info(const void *a, const void *b)
{
	const tf_shard_info *x = a, *y = b;
	return (x->shard.index > y->shard.index) - (x->shard.index < y->shard.index);
}

/* Work that is no test of its own and happens in every shard. */
static bool shared_bucket(const tf_test_meta *m)
{
	return !strcmp(m->name, TF_OUTSIDE_TEST) || !strcmp(m->name, TF_BUILD_TEST) ||
	       (m->source && !strcmp(m->source, "command"));
}

static double sum_exact(double a, double b)
{
	return isnan(a) || isnan(b) ? NAN : a + b;
}

/*
 * The per-test lines of a joined run where several shards wrote one for
 * the same shared bucket: one line each, its figures summed (a comparison
 * reads one line per test and run; the last would win). Tests' own lines
 * stay as they are.
 */
static void sum_shared_lines(tf_profile *p)
{
	TF_VEC(tf_test_meta) seen = { 0 };
	size_t k = 0;

	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]);
		tf_test_meta m;
		size_t j;
		if (strncmp(c, "testflame.test.", 15) != 0 || tf_test_meta_parse(&m, c) != 0) {
			tf_error_clear();
			p->comments.v[k++] = p->comments.v[i];
			continue;
		}
		if (!shared_bucket(&m)) {
			tf_test_meta_clear(&m);
			p->comments.v[k++] = p->comments.v[i];
			continue;
		}
		for (j = 0; j < seen.n; j++)
			if (!strcmp(seen.v[j].name, m.name) &&
			    !strcmp(seen.v[j].parent ? seen.v[j].parent : "", m.parent ? m.parent : ""))
				break;
		if (j == seen.n) {
			tf_vec_push(&seen, m);
			continue; /* the line is written again below */
		}
		tf_test_meta *s = &seen.v[j];
		s->samples += m.samples;
		s->value += m.value;
		s->wall_ns = isnan(s->wall_ns) ? m.wall_ns : isnan(m.wall_ns) ? s->wall_ns
										 : s->wall_ns + m.wall_ns;
		s->count = sum_exact(s->count, m.count);
		s->cpu_ns = sum_exact(s->cpu_ns, m.cpu_ns);
		s->runner_ns = sum_exact(s->runner_ns, m.runner_ns);
		if (m.nested > s->nested)
			s->nested = m.nested;
		if (m.has_exit && (!s->has_exit || (m.exit_status && !s->exit_status))) {
			s->exit_status = m.exit_status;
			s->has_exit = true;
			s->status = m.status;
		}
		tf_test_meta_clear(&m);
	}
	p->comments.n = k;
	for (size_t j = 0; j < seen.n; j++) {
		tf_test_meta_set(p, &seen.v[j]);
		tf_test_meta_clear(&seen.v[j]);
	}
	tf_vec_free(&seen);
}

/* Drop metadata `key` (tf_profile_set_meta can only empty it). */
static void drop_meta(tf_profile *p, const char *key)
{
	size_t k = 0, len = strlen(key);
	for (size_t i = 0; i < p->comments.n; i++) {
		const char *c = tf_profile_str(p, p->comments.v[i]);
		if (!(strncmp(c, "testflame.", 10) == 0 && strncmp(c + 10, key, len) == 0 &&
		      c[10 + len] == '='))
			p->comments.v[k++] = p->comments.v[i];
	}
	p->comments.n = k;
}

/* Sum a numeric metadata key over the shards into `p`. */
static void sum_meta(tf_profile *p, const tf_shard_info *sh, size_t n, const char *key)
{
	unsigned long long total = 0;
	char buf[32];

	for (size_t i = 0; i < n; i++) {
		const char *v = tf_profile_meta(sh[i].profile, key);
		if (!v)
			return;
		total += strtoull(v, NULL, 10);
	}
	snprintf(buf, sizeof(buf), "%llu", total);
	tf_profile_set_meta(p, key, buf);
}

/* Every shard's keys (metadata, tests) must agree; one line saying which do not. */
static int check_same(const tf_shard_info *sh, size_t n, const char *key, const char *what)
{
	const char *a = tf_profile_meta(sh[0].profile, key);
	for (size_t i = 1; i < n; i++) {
		const char *b = tf_profile_meta(sh[i].profile, key);
		if (strcmp(a ? a : "", b ? b : "") != 0)
			return tf_error_set(TF_EUSAGE, "'%s' and '%s' are not shards of one %s: %s "
					    "'%s' and '%s'", sh[0].name, sh[i].name, what, what,
					    a ? a : "(none)", b ? b : "(none)");
	}
	return 0;
}

/* The missing shards, "2/4, 3/4" (at most 8 named). */
static char *missing_shards(const tf_shard_info *sh, size_t n, unsigned total)
{
	tf_buf b = TF_BUF_INIT;
	size_t i = 0, named = 0, missing = 0;

	for (unsigned k = 1; k <= total; k++) {
		while (i < n && sh[i].shard.index < k)
			i++;
		if (i < n && sh[i].shard.index == k)
			continue;
		if (named++ < 8)
			tf_buf_printf(&b, "%s%u/%u", b.len ? ", " : "", k, total);
		missing++;
	}
	if (named > 8)
		tf_buf_printf(&b, " and %zu more", missing - 8);
	return tf_buf_detach(&b);
}

/* No test in two shards: the first one that is, named with both. */
static int check_tests(const tf_shard_info *sh, size_t n)
{
	TF_VEC(shard_test) all = { 0 };
	TF_VEC(char *) keys = { 0 };
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		const tf_profile *p = sh[i].profile;
		for (size_t c = 0; c < p->comments.n; c++) {
			tf_test_meta m;
			const char *line = tf_profile_str(p, p->comments.v[c]);
			if (strncmp(line, "testflame.test.", 15) != 0 ||
			    tf_test_meta_parse(&m, line) != 0) {
				tf_error_clear();
				continue;
			}
			if (!shared_bucket(&m)) {
				char *key = m.parent ? tf_xasprintf("%s\x1f%s", m.parent, m.name)
						     : tf_xstrdup(m.name);
				shard_test t = { key, i };
				tf_vec_push(&keys, key);
				tf_vec_push(&all, t);
			}
			tf_test_meta_clear(&m);
		}
	}
	if (all.n)
		qsort(all.v, all.n, sizeof(*all.v), cmp_shard_test);
	for (size_t i = 1; i < all.n && !rc; i++) {
		if (strcmp(all.v[i - 1].key, all.v[i].key) != 0 || all.v[i - 1].shard == all.v[i].shard)
			continue;
		const tf_shard_info *a = &sh[all.v[i - 1].shard], *b = &sh[all.v[i].shard];
		const char *name = strchr(all.v[i].key, '\x1f');
		rc = tf_error_set(TF_EUSAGE, "test '%s' was recorded by two shards of one commit: "
				  "%u/%u ('%s') and %u/%u ('%s')", name ? name + 1 : all.v[i].key,
				  a->shard.index, a->shard.total, a->name, b->shard.index,
				  b->shard.total, b->name);
	}
	for (size_t i = 0; i < keys.n; i++)
		free(keys.v[i]);
	tf_vec_free(&keys);
	tf_vec_free(&all);
	return rc;
}

int tf_shards_merge(tf_shards_merged *out, const tf_profile *const *files,
		    const char *const *names, size_t n)
{
	tf_shard_info *sh;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return tf_error_set(TF_EUSAGE, "no shard run files to merge");
	sh = tf_xcalloc(n, sizeof(*sh));
	out->shards = sh;
	out->nshards = n;
	for (size_t i = 0; i < n; i++) {
		const char *spec = tf_profile_meta(files[i], "shard"), *st;
		sh[i].profile = files[i];
		sh[i].name = names[i];
		if (!spec || !*spec)
			return tf_error_set(TF_EUSAGE, "'%s' is not a shard's run file (no "
					    "testflame.shard; record each shard with `testflame run "
					    "--shard K/N`)", names[i]);
		if (tf_shard_parse(&sh[i].shard, spec))
			return tf_error_set(TF_EUSAGE, "'%s': bad testflame.shard '%s'", names[i],
					    spec);
		st = tf_profile_meta(files[i], "exit_status");
		sh[i].exit_status = st ? (int)strtol(st, NULL, 10) : 0;
		sh[i].interrupted = tf_profile_meta(files[i], "interrupted") != NULL;
		sh[i].runs = tf_profile_count_runs(files[i]);
	}
	/* one commit, one suite, one runner kind, one split */
	if ((rc = check_same(sh, n, "commit", "commit")) ||
	    (rc = check_same(sh, n, "suite", "suite")) ||
	    (rc = check_same(sh, n, "event", "event")) ||
	    (rc = check_same(sh, n, "sampler", "sampler")) ||
	    (rc = check_same(sh, n, "arch", "arch")))
		return rc;
	qsort(sh, n, sizeof(*sh), cmp_shard_info);
	out->total = sh[0].shard.total;
	for (size_t i = 1; i < n; i++) {
		if (sh[i].shard.total != out->total)
			return tf_error_set(TF_EUSAGE, "'%s' is shard %u/%u but '%s' is shard %u/%u: "
					    "one suite split two ways", sh[0].name, sh[0].shard.index,
					    sh[0].shard.total, sh[i].name, sh[i].shard.index,
					    sh[i].shard.total);
		if (sh[i].shard.index == sh[i - 1].shard.index)
			return tf_error_set(TF_EUSAGE, "shard %u/%u is doubled: '%s' and '%s' (keep "
					    "one run file per shard)", sh[i].shard.index, out->total,
					    sh[i - 1].name, sh[i].name);
	}
	if (n < out->total) {
		char *miss = missing_shards(sh, n, out->total);
		rc = tf_error_set(TF_EUSAGE, "shard%s %s of '%s' missing: %zu of %u run files given",
				  out->total - n == 1 ? "" : "s", miss,
				  tf_profile_meta(sh[0].profile, "suite") ? tf_profile_meta(sh[0].profile, "suite") : "the suite",
				  n, out->total);
		free(miss);
		return rc;
	}
	if ((rc = check_tests(sh, n)))
		return rc;

	/* run r of the merge: every shard's run r (as many as the fewest has) */
	out->nruns = sh[0].runs;
	for (size_t i = 1; i < n; i++)
		if (sh[i].runs < out->nruns)
			out->nruns = sh[i].runs;
	out->runs = tf_xcalloc(out->nruns, sizeof(*out->runs));
	tf_profile ***split = tf_xcalloc(n, sizeof(*split));
	for (size_t i = 0; i < n && !rc; i++) {
		size_t got;
		rc = tf_profile_split_runs(&split[i], &got, sh[i].profile);
		if (!rc && got != sh[i].runs)
			rc = tf_error_set(TF_EINVAL, "'%s' holds %zu runs, not %zu", sh[i].name, got,
					  sh[i].runs);
	}
	const tf_profile **parts = tf_xcalloc(n, sizeof(*parts));
	for (size_t r = 0; r < out->nruns && !rc; r++) {
		for (size_t i = 0; i < n; i++)
			parts[i] = split[i][r];
		rc = tf_profile_join_parts(&out->runs[r], parts, n);
		if (rc) {
			tf_error_wrap(rc, "cannot merge the shards of '%s'", sh[0].name);
			break;
		}
		tf_profile *p = out->runs[r];
		sum_shared_lines(p);
		drop_meta(p, "shard");
		drop_meta(p, "runs");
		char num[32];
		snprintf(num, sizeof(num), "%u", out->total);
		tf_profile_set_meta(p, "shards", num);
		static const char *const summed[] = { "samples", "lost", "throttled", "frames",
						      "unresolved", "truncated", "processes",
						      "threads", "duration_ns" };
		for (size_t k = 0; k < TF_ARRAY_SIZE(summed); k++)
			sum_meta(p, sh, n, summed[k]);
		for (size_t i = 0; i < n; i++) {
			if (sh[i].exit_status) {
				snprintf(num, sizeof(num), "%d", sh[i].exit_status);
				tf_profile_set_meta(p, "exit_status", num);
				break;
			}
		}
		for (size_t i = 0; i < n; i++)
			if (sh[i].interrupted)
				tf_profile_set_meta(p, "interrupted", "true");
	}
	free(parts);
	for (size_t i = 0; i < n; i++) {
		for (size_t r = 0; split[i] && r < sh[i].runs; r++)
			tf_profile_free(split[i][r]);
		free(split[i]);
	}
	free(split);
	if (rc)
		return rc;
	out->commit = tf_profile_meta(sh[0].profile, "commit");
	out->suite = tf_profile_meta(sh[0].profile, "suite");
	out->kind = tf_store_kind(tf_profile_meta(sh[0].profile, "event"),
				  tf_profile_meta(sh[0].profile, "sampler"),
				  tf_profile_meta(sh[0].profile, "arch"));
	return 0;
}

void tf_shards_merged_clear(tf_shards_merged *m)
{
	if (!m)
		return;
	for (size_t r = 0; r < m->nruns; r++)
		tf_profile_free(m->runs ? m->runs[r] : NULL);
	free(m->runs);
	free(m->shards);
	free(m->kind);
	memset(m, 0, sizeof(*m));
}

/* ---- the dir: store's shard files ---- */

int tf_store_shard_dir(char **out, tf_store *s, const char *rev)
{
	char commit[TF_STORE_ID_HEX + 1];
	int rc;

	*out = NULL;
	if (!s->dir)
		return tf_error_set(TF_EUNSUPPORTED, "the %s keeps no shard files", s->desc);
	if ((rc = tf_store_rev(commit, s, rev)))
		return rc;
	*out = tf_xasprintf("%s/shards/%s", s->dir, commit);
	return 0;
}

int tf_store_save_shard(tf_store *s, const char *rev, const char *suite, const char *kind,
			tf_shard shard, const void *data, size_t len)
{
	tf_buf se = TF_BUF_INIT, ke = TF_BUF_INIT;
	char *dir = NULL, *sdir = NULL, *path = NULL;
	int rc;

	if ((rc = tf_store_shard_dir(&dir, s, rev)))
		return rc;
	if ((rc = tf_store_encode_name(&se, suite)) || (rc = tf_store_encode_name(&ke, kind)))
		goto done;
	sdir = tf_xasprintf("%s/%s", dir, se.ptr);
	path = tf_xasprintf("%s/%s.shard-%u-of-%u%s", sdir, ke.ptr, shard.index, shard.total,
			    TF_STORE_FILE_SUFFIX);
	if (!(rc = tf_mkdir_p(sdir, 0777)))
		rc = tf_file_write_atomic(path, data, len);
done:
	if (rc)
		tf_error_wrap(rc, "cannot keep shard %u/%u in the %s", shard.index, shard.total,
			      s->desc);
	tf_buf_free(&se);
	tf_buf_free(&ke);
	free(dir);
	free(sdir);
	free(path);
	return rc;
}
