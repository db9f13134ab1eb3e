/*
 * report.c - the report directory in one call, and what every format
 * shares: options and their defaults, the context of a report resolved from
 * the options or else from the run metadata (suite, commits, provider,
 * repository, run URL), source and commit links for the code hosts we know,
 * and safe file names for the per-test SVG files.
 *
 * The report directory changes as a whole: the new report is written into
 * "<dir>.tmp.<pid>" beside it, then swapped in (renameat2 RENAME_EXCHANGE,
 * or a plain rename when there was none) and the old one removed, so a run
 * killed on the way leaves the old report or the new one, never a mix. A
 * directory that holds anything else than a report's files (--report .) is
 * never swapped or removed: the new files are renamed into it one by one.
 * A staging directory a killed run left is removed by the next report.
 */
#include "report/report_int.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void tf_report_opts_init(tf_report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->base_distance = -1;
	o->write_profiles = true;
	o->md_max_bytes = 65000;
	o->md_max_tests = 50;
	o->md_max_functions = 10;
	o->summary_max_bytes = 1000000;
	o->html_max_nodes = 60000;
	o->html_min_share = 0.0001;
	o->html_max_functions = 200;
	o->svg_max_files = 100;
	o->svg_width = 1200;
	o->annotations_max = 10;
	o->name_max = 200;
}

bool rp_changed(const tf_test_delta *t)
{
	return t->attention <= TF_ATTENTION_NEW_GONE;
}

bool rp_waits_shown(const tf_test_delta *t)
{
	return t->wait && ((t->grew & TF_GREW_WAIT) || (t->waits_lead && rp_changed(t)));
}

size_t rp_wait_index(const tf_comparison *c, const tf_test_delta *t)
{
	if (!c->waits || !t->wait || t->wait < c->waits->tests ||
	    t->wait >= c->waits->tests + c->waits->ntests)
		return SIZE_MAX;
	return (size_t)(t->wait - c->waits->tests);
}

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/* Only URLs that cannot break out of a Markdown link or an attribute. */
static bool safe_url(const char *u)
{
	if (strncmp(u, "https://", 8) != 0 && strncmp(u, "http://", 7) != 0)
		return false;
	for (const unsigned char *p = (const unsigned char *)u; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || strchr("<>\"'`()[]{}|\\^", *p))
			return false;
	return true;
}

static bool hex_commit(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!isxdigit((unsigned char)s[n]))
			return false;
	return n >= 4 && n <= 64;
}

static bool safe_repository(const char *r)
{
	if (!*r || *r == '/' || strstr(r, ".."))
		return false;
	for (const char *p = r; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-_./", *p))
			return false;
	return true;
}

int rp_ctx_init(rp_ctx *x, const tf_comparison *c, const tf_report_opts *o)
{
	memset(x, 0, sizeof(*x));
	x->c = c;
	if (o)
		x->o = *o;
	else
		tf_report_opts_init(&x->o);
	if (x->o.annotations_max > 10)
		x->o.annotations_max = 10;
	if (!x->o.name_max)
		x->o.name_max = 200;

	x->suite = nonempty(x->o.suite);
	if (!x->suite)
		x->suite = nonempty(tf_comparison_meta(c, true, "suite"));
	if (!x->suite)
		x->suite = "tests";
	x->provider = nonempty(x->o.provider);
	if (!x->provider)
		x->provider = nonempty(tf_comparison_meta(c, true, "ci"));
	if (!x->provider)
		x->provider = "local";
	x->head_commit = nonempty(x->o.head_commit);
	if (!x->head_commit)
		x->head_commit = nonempty(tf_comparison_meta(c, true, "head_sha"));
	if (!x->head_commit)
		x->head_commit = nonempty(tf_comparison_meta(c, true, "commit"));
	x->base_commit = nonempty(x->o.base_commit);
	if (!x->base_commit)
		x->base_commit = nonempty(tf_comparison_meta(c, false, "commit"));
	x->run_url = nonempty(x->o.run_url);
	if (!x->run_url)
		x->run_url = nonempty(tf_comparison_meta(c, true, "run_url"));
	if (x->run_url && !safe_url(x->run_url))
		x->run_url = NULL;
	if (x->o.artifact_url && !safe_url(x->o.artifact_url))
		x->o.artifact_url = NULL;
	x->source_root = nonempty(x->o.source_root);
	if (!x->source_root)
		x->source_root = nonempty(tf_comparison_meta(c, true, "workdir"));
	x->unit = c->summary.unit ? c->summary.unit : "";

	if (nonempty(x->o.repo_url)) {
		x->repo_url = tf_xstrdup(x->o.repo_url);
	} else {
		const char *repo = nonempty(tf_comparison_meta(c, true, "repository"));
		if (repo && safe_repository(repo)) {
			if (strcmp(x->provider, "github") == 0)
				x->repo_url = tf_xasprintf("https://github.com/%s", repo);
			else if (strcmp(x->provider, "gitlab") == 0)
				x->repo_url = tf_xasprintf("https://gitlab.com/%s", repo);
		}
	}
	if (x->repo_url) {
		size_t n = strlen(x->repo_url);
		while (n && x->repo_url[n - 1] == '/')
			x->repo_url[--n] = '\0';
		if (!safe_url(x->repo_url)) {
			free(x->repo_url);
			x->repo_url = NULL;
		}
	}
	if (x->repo_url) {
		if (strstr(x->repo_url, "github"))
			x->host = RP_HOST_GITHUB;
		else if (strstr(x->repo_url, "gitlab"))
			x->host = RP_HOST_GITLAB;
		else if (strstr(x->repo_url, "bitbucket"))
			x->host = RP_HOST_BITBUCKET;
		else if (strcmp(x->provider, "github") == 0)
			x->host = RP_HOST_GITHUB;
		else if (strcmp(x->provider, "gitlab") == 0)
			x->host = RP_HOST_GITLAB;
	}
	if (nonempty(x->o.title))
		x->title = tf_xstrdup(x->o.title);
	else
		x->title = tf_xasprintf("testflame: %s", x->suite);
	for (size_t i = 0; i < c->ntests; i++)
		if (rp_changed(&c->tests[i]))
			x->nchanged++;
	return 0;
}

void rp_ctx_free(rp_ctx *x)
{
	free(x->repo_url);
	free(x->title);
	x->repo_url = x->title = NULL;
}

const char *rp_repo_path(const rp_ctx *x, const char *file)
{
	if (!file || !*file)
		return NULL;
	if (*file != '/') {
		while (file[0] == '.' && file[1] == '/')
			file += 2;
		return strncmp(file, "../", 3) == 0 || !*file ? NULL : file;
	}
	if (x->source_root) {
		size_t n = strlen(x->source_root);
		while (n > 1 && x->source_root[n - 1] == '/')
			n--;
		if (strncmp(file, x->source_root, n) == 0 && file[n] == '/' && file[n + 1])
			return file + n + 1;
	}
	return NULL;
}

bool rp_put_source_url(tf_buf *b, const rp_ctx *x, const char *path, int64_t line)
{
	if (!x->repo_url || !x->head_commit || !hex_commit(x->head_commit) || !path)
		return false;
	switch (x->host) {
	case RP_HOST_GITHUB:
		tf_buf_printf(b, "%s/blob/%s/", x->repo_url, x->head_commit);
		break;
	case RP_HOST_GITLAB:
		tf_buf_printf(b, "%s/-/blob/%s/", x->repo_url, x->head_commit);
		break;
	case RP_HOST_BITBUCKET:
		tf_buf_printf(b, "%s/src/%s/", x->repo_url, x->head_commit);
		break;
	default:
		return false;
	}
	rp_put_url_path(b, path);
	if (line > 0)
		tf_buf_printf(b, x->host == RP_HOST_BITBUCKET ? "#lines-%lld" : "#L%lld",
			      (long long)line);
	return true;
}

bool rp_put_commit_url(tf_buf *b, const rp_ctx *x, const char *commit)
{
	if (!x->repo_url || !commit || !hex_commit(commit))
		return false;
	switch (x->host) {
	case RP_HOST_GITHUB:
		tf_buf_printf(b, "%s/commit/%s", x->repo_url, commit);
		return true;
	case RP_HOST_GITLAB:
		tf_buf_printf(b, "%s/-/commit/%s", x->repo_url, commit);
		return true;
	case RP_HOST_BITBUCKET:
		tf_buf_printf(b, "%s/commits/%s", x->repo_url, commit);
		return true;
	default:
		return false;
	}
}

char *tf_report_file_name(const char *test, const char *ext)
{
	size_t n = strlen(test);
	bool plain = n > 0 && n <= 100 && test[0] != '.' && test[0] != '-';
	tf_buf b = TF_BUF_INIT;

	for (size_t i = 0; plain && i < n; i++)
		plain = isalnum((unsigned char)test[i]) || strchr("._-", test[i]);
	if (plain)
		return tf_xasprintf("%s%s", test, ext);
	/* a readable prefix, then a hash of the whole name so that two tests
	 * that clean up alike still get two files */
	for (size_t i = 0; i < n && b.len < 60; i++) {
		char ch = test[i];
		bool ok = isalnum((unsigned char)ch) || ch == '.' || ch == '_' || ch == '-';
		if (!ok)
			ch = '_';
		if (b.len == 0 && (ch == '.' || ch == '-'))
			ch = '_';
		if (ch == '_' && b.len && b.ptr[b.len - 1] == '_')
			continue;
		tf_buf_putc(&b, ch);
	}
	tf_buf_printf(&b, "%s%016llx%s", b.len ? "-" : "test-",
		      (unsigned long long)tf_hash_bytes(test, n, 0x7465737466), ext);
	return tf_buf_detach(&b);
}

int rp_single_begin(rp_single *s, const tf_profile *p, size_t value, const char *test,
		    const char *name, const tf_report_opts *o, size_t tree)
{
	tf_compare_opts co;
	tf_report_opts ro;
	const tf_profile *ps[1] = { p };
	const char *names[1] = { name ? name : "profile" };
	tf_compare_side side = { ps, names, 1 };
	char *spec;
	int rc;

	memset(s, 0, sizeof(*s));
	if (value >= p->sample_types.n)
		return tf_error_set(TF_EINVAL, "the profile has no value column %zu", value);
	spec = tf_xasprintf("%s/%s", tf_profile_str(p, p->sample_types.v[value].type),
			    tf_profile_str(p, p->sample_types.v[value].unit));
	tf_compare_opts_init(&co);
	co.value = spec;
	co.test = test;
	co.top_functions = 0;
	rc = tf_compare(&s->c, &side, &side, &co);
	free(spec);
	if (rc)
		return rc;
	if (o)
		ro = *o;
	else
		tf_report_opts_init(&ro);
	if (!ro.title && name)
		ro.title = name;
	rc = rp_view_begin(&s->v, s->c, &ro, tree);
	s->v.x.single = true;
	return rc;
}

void rp_single_end(rp_single *s)
{
	rp_view_end(&s->v);
	tf_comparison_free(s->c);
	s->c = NULL;
}

int rp_view_begin(rp_view *v, const tf_comparison *c, const tf_report_opts *o, size_t tree)
{
	int rc;

	memset(v, 0, sizeof(*v));
	rp_ctx_init(&v->x, c, o);
	v->have_ctx = true;
	if ((rc = rp_tree_build(&v->t, c, tree)))
		return rc;
	v->have_tree = true;
	return 0;
}

void rp_view_end(rp_view *v)
{
	if (v->have_tree)
		rp_tree_free(&v->t);
	if (v->have_ctx)
		rp_ctx_free(&v->x);
	v->have_tree = v->have_ctx = false;
}

/* ---- the directory ----------------------------------------------------- */

static int put_file(const char *dir, const char *name, const tf_buf *b)
{
	char *path = tf_xasprintf("%s/%s", dir, name);
	int rc = tf_file_write_atomic(path, b->ptr ? b->ptr : "", b->len);
	free(path);
	return rc;
}

/* Per changed test: its SVG and its folded diff, most changed first. */
static int write_per_test(rp_ctx *x, const rp_tree *forest)
{
	const tf_comparison *c = x->c;
	tf_buf b = TF_BUF_INIT;
	size_t written = 0;
	int rc = 0;

	/* c->tests is in the order of attention */
	for (size_t i = 0; i < c->ntests && written < x->o.svg_max_files && !rc; i++) {
		if (!rp_changed(&c->tests[i]))
			continue;
		uint32_t pos = forest->test_pos[i];
		if (pos == TF_DIFF_NONE)
			continue;
		char *svg = tf_report_file_name(c->tests[i].name, ".svg");
		char *folded = tf_report_file_name(c->tests[i].name, ".folded");
		tf_buf_clear(&b);
		rc = rp_svg_render(&b, x, forest, pos, i);
		if (!rc)
			rc = put_file(x->o.dir, svg, &b);
		tf_buf_clear(&b);
		if (!rc)
			rc = rp_folded_render(&b, forest, pos, true);
		if (!rc)
			rc = put_file(x->o.dir, folded, &b);
		free(svg);
		free(folded);
		written++;
	}
	tf_buf_free(&b);
	return rc;
}

/*
 * Per test whose waits are shown: where it waited more, as an off-CPU
 * diff flame graph (<test>.offcpu.svg), its folded diff, and the head's
 * off-CPU stacks of the test as speedscope JSON (speedscope draws one
 * profile, not a diff; pprof's -diff_base on base.pb.gz and head.pb.gz
 * with -sample_index=off-cpu is the other view of the same diff).
 */
static int write_waits(rp_ctx *x)
{
	const tf_comparison *c = x->c, *w = c->waits;
	rp_ctx wx;
	rp_tree forest;
	tf_buf b = TF_BUF_INIT;
	size_t written = 0;
	int rc;

	if (!w)
		return 0;
	rp_ctx_init(&wx, w, &x->o);
	wx.waits = true;
	if ((rc = rp_tree_build(&forest, w, TF_EACH_TEST))) {
		rp_ctx_free(&wx);
		return rc;
	}
	for (size_t i = 0; i < c->ntests && written < x->o.svg_max_files && !rc; i++) {
		const tf_test_delta *t = &c->tests[i];
		size_t k = rp_wait_index(c, t);
		if (!rp_waits_shown(t) || k == SIZE_MAX || forest.test_pos[k] == TF_DIFF_NONE)
			continue;
		uint32_t pos = forest.test_pos[k];
		char *svg = tf_report_file_name(t->name, ".offcpu.svg");
		char *folded = tf_report_file_name(t->name, ".offcpu.folded");
		char *ss = tf_report_file_name(t->name, ".offcpu.speedscope.json");
		tf_buf_clear(&b);
		rc = rp_svg_render(&b, &wx, &forest, pos, k);
		if (!rc)
			rc = put_file(x->o.dir, svg, &b);
		tf_buf_clear(&b);
		if (!rc)
			rc = rp_folded_render(&b, &forest, pos, true);
		if (!rc)
			rc = put_file(x->o.dir, folded, &b);
		const tf_profile *hp = c->head.profiles[0];
		int col = tf_profile_find_sample_type(hp, TF_OFFCPU_TYPE);
		tf_buf_clear(&b);
		if (!rc && col >= 0 && !(rc = tf_speedscope_write(&b, hp, (size_t)col, t->name, t->name)))
			rc = put_file(x->o.dir, ss, &b);
		free(svg);
		free(folded);
		free(ss);
		written++;
	}
	tf_buf_free(&b);
	rp_tree_free(&forest);
	rp_ctx_free(&wx);
	return rc;
}

/* The runs as pprof files: the file a run was loaded from when it is a
 * gzip pprof and unchanged (a gzip of the whole run cost a third of a big
 * report's time), else encoded at gzip level 1, as these are copies to
 * download rather than archives, and level 6 costs several times the time. */
static int write_profile(const char *dir, const char *stem, const tf_compare_side *s)
{
	tf_buf b = TF_BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < s->n && !rc; i++) {
		char *name = i ? tf_xasprintf("%s-%zu.pb.gz", stem, i + 1) : tf_xasprintf("%s.pb.gz", stem);
		const tf_buf *src = tf_profile_source(s->profiles[i]);
		tf_buf_clear(&b);
		if (src)
			rc = put_file(dir, name, src);
		else if (!(rc = tf_pprof_encode(&b, s->profiles[i], 1)))
			rc = put_file(dir, name, &b);
		free(name);
	}
	tf_buf_free(&b);
	return rc;
}

/* A name tf_report_write() writes (or its temporary, "<name>.tmp.<pid>"). */
static bool report_file_name(const char *n)
{
	static const char *const fixed[] = { "report.json", "index.html", "report.md", "junit.xml",
					     "codequality.json", NULL };
	const char *t = strstr(n, ".tmp.");
	size_t len = t && t[5] && strspn(t + 5, "0123456789") == strlen(t + 5) ? (size_t)(t - n)
									      : strlen(n);
	for (const char *const *f = fixed; *f; f++)
		if (strlen(*f) == len && strncmp(n, *f, len) == 0)
			return true;
	return (len > 4 && strncmp(n + len - 4, ".svg", 4) == 0) ||
	       (len > 7 && strncmp(n + len - 7, ".folded", 7) == 0) ||
	       (len > 23 && strncmp(n + len - 23, ".offcpu.speedscope.json", 23) == 0) ||
	       (len > 6 && strncmp(n + len - 6, ".pb.gz", 6) == 0);
}

/* Whether `dir` holds nothing but regular files with a report's names. */
static bool only_report_files(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool only = d != NULL;

	while (only && (de = readdir(d))) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		only = report_file_name(de->d_name) &&
		       fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		       S_ISREG(st.st_mode);
	}
	if (d)
		closedir(d);
	return only;
}

/* Remove a directory of report files; nothing if it holds anything else. */
static void remove_report_dir(const char *dir)
{
	DIR *d;
	struct dirent *de;

	if (!only_report_files(dir) || !(d = opendir(dir)))
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	rmdir(dir);
}

static void remove_stage(const char *path, void *payload)
{
	(void)payload;
	remove_report_dir(path);
}

/* "<dir>.tmp.<pid>" directories beside `dir` of processes that are gone. */
static void remove_stale_stages(const char *parent, const char *base)
{
	char *prefix = tf_xasprintf("%s.tmp.", base);
	tf_remove_stale(parent, prefix, remove_stage, NULL);
	free(prefix);
}

/* Put the staged report in place of `dir` (see the top of the file). */
static int publish_stage(const char *stage, const char *dir)
{
	struct stat st;
	DIR *d;
	struct dirent *de;
	int rc = 0;

	if (lstat(dir, &st) != 0 && errno == ENOENT) {
		if (rename(stage, dir) == 0)
			return 0;
	} else if (S_ISDIR(st.st_mode) && only_report_files(dir) &&
		   renameat2(AT_FDCWD, stage, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
		remove_report_dir(stage); /* the old report now */
		return 0;
	}
	/* someone else's directory, or no RENAME_EXCHANGE here: file by file */
	if ((rc = tf_mkdir_p(dir, 0777)))
		return rc;
	if (!(d = opendir(stage)))
		return tf_error_set_errno(TF_ERROR, "cannot read '%s'", stage);
	while (!rc && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char *to = tf_xasprintf("%s/%s", dir, de->d_name);
		if (renameat(dirfd(d), de->d_name, AT_FDCWD, to) != 0)
			rc = tf_error_set_errno(TF_ERROR, "cannot move the report into '%s'", to);
		free(to);
	}
	closedir(d);
	return rc;
}

/* Write the report's files into `dir`. */
static int write_files(const tf_comparison *c, const tf_report_opts *o, const char *dir)
{
	rp_ctx x;
	rp_tree forest;
	tf_buf b = TF_BUF_INIT;
	int rc;

	rp_ctx_init(&x, c, o);
	x.o.dir = dir;
	if ((rc = rp_tree_build(&forest, c, TF_EACH_TEST))) {
		rp_ctx_free(&x);
		return rc;
	}

#define EMIT(name, call) \
	do { \
		tf_buf_clear(&b); \
		if (!rc && !(rc = (call))) \
			rc = put_file(dir, (name), &b); \
	} while (0)

	EMIT("report.json", tf_comparison_to_json_memory(&b, c, o->memory, o->memory_gated));
	EMIT("index.html", rp_html_render(&b, &x, &forest));
	EMIT("report.md", tf_report_markdown(&b, c, o));
	EMIT("junit.xml", tf_report_junit(&b, c, o));
	EMIT("codequality.json", tf_report_codequality(&b, c, o));
#undef EMIT
	if (!rc)
		rc = write_per_test(&x, &forest);
	if (!rc)
		rc = write_waits(&x);
	if (!rc && x.o.write_profiles)
		rc = write_profile(dir, "base", &c->base);
	if (!rc && x.o.write_profiles)
		rc = write_profile(dir, "head", &c->head);
	tf_buf_free(&b);
	rp_tree_free(&forest);
	rp_ctx_free(&x);
	return rc;
}

int tf_report_write(const tf_comparison *c, const tf_report_opts *o)
{
	char *dir, *parent, *stage, *slash;
	struct stat st;
	int rc;

	if (!o || !o->dir || !*o->dir)
		return tf_error_set(TF_EUSAGE, "no report directory given");
	dir = tf_xstrdup(o->dir);
	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/';)
		dir[--n] = '\0';
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		rc = tf_error_set(TF_ERROR, "'%s' is not a directory", dir);
		free(dir);
		return rc;
	}
	slash = strrchr(dir, '/');
	parent = slash ? tf_xstrndup(dir, slash == dir ? 1 : (size_t)(slash - dir)) : tf_xstrdup(".");
	stage = tf_xasprintf("%s.tmp.%ld", dir, (long)getpid());
	rc = tf_mkdir_p(parent, 0777);
	if (!rc) {
		remove_stale_stages(parent, slash ? slash + 1 : dir);
		if (mkdir(stage, 0777) == 0) {
			rc = write_files(c, o, stage);
			if (!rc)
				rc = publish_stage(stage, dir);
			remove_report_dir(stage);
		} else if (!(rc = tf_mkdir_p(dir, 0777))) {
			/* no room beside it (a parent we may not write): in place */
			rc = write_files(c, o, dir);
		}
	}
	if (rc)
		tf_error_wrap(rc, "writing the report into '%s'", dir);
	free(dir);
	free(parent);
	free(stage);
	return rc;
}
