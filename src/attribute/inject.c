/*
 * inject.c - asking the test runners testflame recognises to say which
 * tests ran, without touching the command.
 *
 * Through the environment only, which every runner below reads and every
 * other program ignores:
 *
 *   GoogleTest  GTEST_OUTPUT=xml:DIR/gtest/ : each test program writes
 *               DIR/gtest/<program>.xml (names, times, statuses), and
 *               prints nothing more
 *   Python      DIR/py first on PYTHONPATH, and the same directory as
 *               the user's site-packages (PYTHONUSERBASE=DIR/ub, whose
 *               lib/pythonX.Y/site-packages lead there), which a command
 *               that replaces PYTHONPATH keeps: its sitecustomize.py runs
 *               the one it hides, its testflame.pth what site.py would
 *               have added from the user's own, and both the loader
 *               (testflame_loader.py here), which loads the pytest plugin
 *               of contrib/ when pytest reads its PYTEST_PLUGINS, and
 *               marks the tests a unittest runner starts and stops (with
 *               contrib/testflame_markers.py)
 *
 *   Node        NODE_OPTIONS=--perf-basic-prof (added to the user's): its
 *               JavaScript functions in /tmp/perf-PID.map, which the
 *               symbolizer reads and removes as each process exits; not
 *               when the user's NODE_OPTIONS already asks for perf maps
 *
 * Nothing injected can fail the suite: no variable names a module that
 * must be importable (PYTEST_PLUGINS would, in a command that replaces
 * PYTHONPATH or a virtualenv without the plugin), and a Python that does
 * not find the loader runs as it would have. What steps aside says why in
 * DIR/notes, one "PID TEXT" line each, read back as the run's notes.
 *
 * What the user set stays: an existing GTEST_OUTPUT is left alone and read
 * back when it names XML; PYTHONPATH is extended, not replaced. ctest
 * needs nothing: its log is read by the attribution (ctest.c). After the
 * run, tf_runner_session_collect() reads what was written, and any report
 * the user named (--runner-report), into one list.
 */
#include "attribute_int.h"

#include <errno.h>
#include <glob.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const char tf_runner_asset_pytest_testflame[];
extern const size_t tf_runner_asset_pytest_testflame_len;
extern const char tf_runner_asset_testflame_markers[];
extern const size_t tf_runner_asset_testflame_markers_len;
extern const char tf_runner_asset_sitecustomize[];
extern const size_t tf_runner_asset_sitecustomize_len;
extern const char tf_runner_asset_testflame_loader[];
extern const size_t tf_runner_asset_testflame_loader_len;

struct tf_runner_session {
	char *dir;
	char *gtest_dir;        /* ours, or the user's GTEST_OUTPUT directory */
	char *gtest_file;       /* the user's GTEST_OUTPUT file */
	bool node_maps;         /* Node's perf maps are ours */
	TF_VEC(char *) env;     /* NULL-terminated */
};

static const char *env_get(const char *const *env, const char *key)
{
	size_t n = strlen(key);
	for (; env && *env; env++)
		if (strncmp(*env, key, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

static int write_file(const char *path, const char *data, size_t len)
{
	tf_buf b = TF_BUF_INIT;
	tf_buf_put(&b, data, len);
	int rc = tf_file_write_atomic(path, b.ptr, b.len);
	tf_buf_free(&b);
	return rc;
}

/* The Python versions whose user site-packages lead to the loader. */
#define PY_MINOR_FIRST 5
#define PY_MINOR_LAST 30

/* DIR/py: the loader, the plugin, a sitecustomize and a .pth; DIR/ub/lib/
 * pythonX.Y/site-packages -> DIR/py; PYTHONPATH and PYTHONUSERBASE. */
static int python_loader(tf_runner_session *s, const char *const *environ_in)
{
	static const struct {
		const char *name;
		const char *data;
		const size_t *len;
	} files[] = {
		{ "pytest_testflame.py", tf_runner_asset_pytest_testflame,
		  &tf_runner_asset_pytest_testflame_len },
		{ "testflame_markers.py", tf_runner_asset_testflame_markers,
		  &tf_runner_asset_testflame_markers_len },
		{ "sitecustomize.py", tf_runner_asset_sitecustomize,
		  &tf_runner_asset_sitecustomize_len },
		{ "testflame_loader.py", tf_runner_asset_testflame_loader,
		  &tf_runner_asset_testflame_loader_len },
		{ "testflame.pth", "import testflame_loader\n", NULL },
	};
	const char *pp = env_get(environ_in, "PYTHONPATH");
	const char *ub = env_get(environ_in, "PYTHONUSERBASE");
	char *py = tf_xasprintf("%s/py", s->dir);
	char *path = NULL;
	int rc = 0;

	if (mkdir(py, 0777) != 0)
		rc = tf_error_set_errno(TF_ERROR, "cannot create '%s'", py);
	for (size_t i = 0; !rc && i < TF_ARRAY_SIZE(files); i++) {
		free(path);
		path = tf_xasprintf("%s/%s", py, files[i].name);
		rc = write_file(path, files[i].data,
				files[i].len ? *files[i].len : strlen(files[i].data));
	}
	if (!rc) { /* the user's own base, for the loader to add its site */
		free(path);
		path = tf_xasprintf("%s/userbase", py);
		rc = write_file(path, ub ? ub : "", ub ? strlen(ub) : 0);
	}
	for (int minor = PY_MINOR_FIRST; !rc && minor <= PY_MINOR_LAST; minor++) {
		free(path);
		path = tf_xasprintf("%s/ub/lib/python3.%d", s->dir, minor);
		rc = tf_mkdir_p(path, 0777);
		free(path);
		path = tf_xasprintf("%s/ub/lib/python3.%d/site-packages", s->dir, minor);
		if (!rc && symlink(py, path) != 0)
			rc = tf_error_set_errno(TF_ERROR, "cannot create '%s'", path);
	}
	if (!rc) {
		tf_vec_push(&s->env, pp && *pp ? tf_xasprintf("PYTHONPATH=%s:%s", py, pp)
					       : tf_xasprintf("PYTHONPATH=%s", py));
		tf_vec_push(&s->env, tf_xasprintf("PYTHONUSERBASE=%s/ub", s->dir));
	}
	free(path);
	free(py);
	return rc;
}

int tf_runner_session_new(tf_runner_session **out, const char *const *environ_in, bool inject)
{
	const char *tmp = getenv("TMPDIR");
	tf_runner_session *s = tf_xcalloc(1, sizeof(*s));
	const char *gt = env_get(environ_in, "GTEST_OUTPUT");
	int rc = 0;

	*out = NULL;
	s->dir = tf_xasprintf("%s/testflame-runners.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->dir)) {
		rc = tf_error_set_errno(TF_ERROR, "cannot create a directory for the runners' reports");
		free(s->dir);
		free(s);
		return rc;
	}
	if (gt && strncmp(gt, "xml", 3) == 0) {
		/* the user's own: xml, xml:FILE or xml:DIR/ */
		const char *path = gt[3] == ':' ? gt + 4 : "test_detail.xml";
		size_t n = strlen(path);
		if (n && path[n - 1] == '/')
			s->gtest_dir = tf_xstrdup(path);
		else if (n)
			s->gtest_file = tf_xstrdup(path);
	} else if (!gt && inject) {
		s->gtest_dir = tf_xasprintf("%s/gtest/", s->dir);
		if (mkdir(s->gtest_dir, 0777) != 0)
			rc = tf_error_set_errno(TF_ERROR, "cannot create '%s'", s->gtest_dir);
		else
			tf_vec_push(&s->env, tf_xasprintf("GTEST_OUTPUT=xml:%s", s->gtest_dir));
	}
	if (!rc && inject)
		rc = python_loader(s, environ_in);
	if (!rc && inject) {
		const char *no = env_get(environ_in, "NODE_OPTIONS");
		if (!no || !strstr(no, "--perf-")) {
			tf_vec_push(&s->env, no && *no ? tf_xasprintf("NODE_OPTIONS=%s --perf-basic-prof", no)
						       : tf_xstrdup("NODE_OPTIONS=--perf-basic-prof"));
			s->node_maps = true;
		}
	}
	tf_vec_push(&s->env, NULL);
	if (rc) {
		tf_runner_session_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

char *const *tf_runner_session_env(const tf_runner_session *s)
{
	return s ? s->env.v : NULL;
}

/* A file written before the run is not this run's report. */
static bool fresh(const char *path, uint64_t not_before)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	return (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + (uint64_t)st.st_mtim.tv_nsec >=
	       not_before;
}

/* DIR/notes: "PID TEXT" lines, each text once (every worker of a pytest
 * -n may say the same). */
static void read_notes(const tf_runner_session *s, tf_runner_tests *out)
{
	char *path = tf_xasprintf("%s/notes", s->dir);
	tf_buf text = TF_BUF_INIT;

	if (tf_file_read(&text, path) == 0) {
		for (char *line = text.ptr, *nl; line && *line; line = nl ? nl + 1 : NULL) {
			nl = strchr(line, '\n');
			if (nl)
				*nl = '\0';
			char *msg = strchr(line, ' ');
			if (!msg || !*++msg)
				continue;
			bool seen = false;
			for (size_t i = 0; i < out->notes.n && !seen; i++)
				seen = strcmp(out->notes.v[i], msg) == 0;
			if (!seen && out->notes.n < 32)
				tf_vec_push(&out->notes, tf_xstrdup(msg));
		}
	}
	tf_error_clear();
	tf_buf_free(&text);
	free(path);
}

int tf_runner_session_collect(tf_runner_session *s, tf_runner_tests *out,
			      const char *const *reports, uint64_t not_before_realtime_ns)
{
	int rc = 0;

	if (s)
		read_notes(s, out);

	if (s && s->gtest_dir)
		rc = tf_runner_read_gtest_dir(out, s->gtest_dir, not_before_realtime_ns);
	if (!rc && s && s->gtest_file && fresh(s->gtest_file, not_before_realtime_ns)) {
		size_t before = out->v.n;
		rc = tf_runner_read_file(out, s->gtest_file, NULL);
		for (size_t i = before; i < out->v.n; i++)
			out->v.v[i].runner = "gtest";
	}
	/* the user's reports: files or glob patterns; one that matches
	 * nothing, or was not written by this run, is an error to report */
	for (const char *const *r = reports; !rc && r && *r; r++) {
		glob_t g;
		int gr = glob(*r, GLOB_NOSORT, NULL, &g);
		if (gr == GLOB_NOMATCH) {
			rc = tf_error_set(TF_ENOTFOUND, "--runner-report '%s': no such file", *r);
		} else if (gr != 0) {
			rc = tf_error_set(TF_ERROR, "--runner-report '%s': cannot list it", *r);
		} else {
			for (size_t i = 0; !rc && i < g.gl_pathc; i++) {
				if (!fresh(g.gl_pathv[i], not_before_realtime_ns))
					rc = tf_error_set(TF_EINVAL,
						"--runner-report '%s' was not written by this run",
						g.gl_pathv[i]);
				else
					rc = tf_runner_read_file(out, g.gl_pathv[i], NULL);
			}
		}
		if (gr == 0)
			globfree(&g);
	}
	return rc;
}

bool tf_runner_session_node_maps(const tf_runner_session *s)
{
	return s && s->node_maps;
}

const char *tf_runner_session_dir(const tf_runner_session *s)
{
	return s ? s->dir : NULL;
}

void tf_runner_session_free(tf_runner_session *s)
{
	if (!s)
		return;
	if (s->dir)
		tf_rmtree(s->dir);
	for (size_t i = 0; i < s->env.n; i++)
		free(s->env.v[i]);
	tf_vec_free(&s->env);
	free(s->dir);
	free(s->gtest_dir);
	free(s->gtest_file);
	free(s);
}
