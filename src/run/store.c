/*
 * store.c - the config a command reads and the store it opens (run.h),
 * one rule for every command that touches baselines (run,
 * merge, baseline, compare): the spec from --store over `store:` in
 * .testflame.yml over $TESTFLAME_STORE (tf_settings), Pyroscope's
 * credentials from the config under the environment's, and the store's
 * notices through the caller's callback.
 */
#include "run/run_int.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

int tf_run_config_load(tf_config **out, const char *path)
{
	int rc = tf_config_load(out, path, NULL);

	/* the store's spec is the store's to check, at its place in the file */
	if (!rc && (rc = tf_store_check_config(*out))) {
		tf_config_free(*out);
		*out = NULL;
	}
	return rc;
}

int tf_run_store_open(tf_store **out, const char *flag, const tf_config *cfg,
		      const char *remote, const tf_run_io *io)
{
	tf_config *loaded = NULL;
	tf_settings set;
	tf_settings_flags f = { .store = flag };
	tf_store_open_opts so = { .remote = remote };
	int rc;

	*out = NULL;
	if (io) {
		so.notice = io->notice;
		so.notice_ctx = io->ctx;
	}
	if (!cfg) {
		if ((rc = tf_run_config_load(&loaded, NULL)))
			return rc;
		cfg = loaded;
	}
	so.cfg = cfg;
	if (!(rc = tf_settings_resolve(&set, &f, cfg, environ)))
		rc = tf_store_open_with(out, set.store, &so);
	tf_config_free(loaded);
	return rc;
}
