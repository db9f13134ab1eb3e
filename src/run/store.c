/*
 * store.c - the store a command uses (see store.h). The
 * config comes before the environment because it is the project's own
 * choice, checked in with it; $TESTFLAME_STORE is for a runner that has
 * nothing in the repository to say.
 */
#include "run/pyroscope.h"
#include "run/store.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

const char *tf_cli_store_spec(const char *flag, const tf_config *cfg)
{
	tf_settings s;
	tf_settings_flags f = { .store = flag };
	tf_settings_resolve(&s, &f, cfg, environ);
	return s.store;
}

int tf_cli_store_open(tf_store **out, const char *flag, const tf_config *cfg,
		      const char *remote)
{
	tf_config *loaded = NULL;
	int rc;

	*out = NULL;
	if (!cfg) {
		if ((rc = tf_config_load(&loaded, NULL, NULL)))
			return rc;
		cfg = loaded;
	}
	rc = tf_store_open(out, tf_cli_store_spec(flag, cfg), NULL);
	if (!rc && remote)
		tf_store_set_remote(*out, remote);
	if (!rc)
		tf_cli_pyroscope_setup(*out, cfg); /* the config's credentials, under the environment's */
	tf_config_free(loaded);
	return rc;
}

char *tf_cli_store_others(tf_store *st, const char *start, const char *suite, const char *kind)
{
	tf_baseline b;
	unsigned dist;
	tf_buf line = TF_BUF_INIT, kinds = TF_BUF_INIT;
	TF_VEC(const char *) suites = { 0 };
	const char *one = NULL;

	if (tf_store_nearest(&b, &dist, st, start)) {
		tf_error_clear();
		return NULL;
	}
	for (size_t i = 0; i < b.files.n; i++) {
		const tf_baseline_file *f = &b.files.v[i];
		bool seen = false;
		if (strcmp(f->suite, suite) == 0) {
			tf_buf_printf(&kinds, "%s%s", kinds.len ? ", " : "", f->kind);
			continue;
		}
		for (size_t k = 0; k < suites.n && !seen; k++)
			seen = strcmp(suites.v[k], f->suite) == 0;
		if (!seen)
			tf_vec_push(&suites, f->suite);
	}
	tf_buf_printf(&line, "the nearest baseline, of %.12s%s%s%s, holds ", b.commit,
		      b.subject ? " (" : "", b.subject ? b.subject : "", b.subject ? ")" : "");
	if (kinds.len) {
		/* the suite is there, measured another way */
		tf_buf_printf(&line, "'%s' recorded as %s, and this run is %s (another event, "
			      "sampler or machine): run with the same --event and --sampler to "
			      "compare with it", suite, kinds.ptr, kind);
	} else {
		tf_buf_puts(&line, suites.n == 1 ? "the suite " : "the suites ");
		for (size_t k = 0; k < suites.n && k < 5; k++)
			tf_buf_printf(&line, "%s'%s'", k ? ", " : "", suites.v[k]);
		if (suites.n > 5)
			tf_buf_printf(&line, " and %zu more", suites.n - 5);
		one = suites.v[0];
		tf_buf_printf(&line, ", not '%s': to compare with %s, run with --suite '%s' or set "
			      "'suite: %s' in .testflame.yml", suite, suites.n == 1 ? "it" : "one",
			      one, one);
	}
	tf_vec_free(&suites);
	tf_buf_free(&kinds);
	tf_baseline_clear(&b);
	return tf_buf_detach(&line);
}
