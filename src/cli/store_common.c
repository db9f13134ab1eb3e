/*
 * store_common.c - the store a command uses (see store_common.h). The
 * config comes before the environment because it is the project's own
 * choice, checked in with it; $TESTFLAME_STORE is for a runner that has
 * nothing in the repository to say.
 */
#include "pyroscope_common.h"
#include "store_common.h"

#include <stdlib.h>

const char *tf_cli_store_spec(const char *flag, const tf_config *cfg)
{
	if (flag)
		return flag;
	if (cfg && cfg->store)
		return cfg->store;
	return getenv("TESTFLAME_STORE");
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
