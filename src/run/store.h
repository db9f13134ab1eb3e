/*
 * store.h - the config a command reads and the store it opens, one rule
 * for every command that touches baselines (run, merge, baseline,
 * compare): --store, else `store:` in .testflame.yml, else
 * $TESTFLAME_STORE, else the git store.
 */
#ifndef TESTFLAME_RUN_STORE_H
#define TESTFLAME_RUN_STORE_H

#include "testflame/config.h"
#include "testflame/store.h"

/* .testflame.yml (`path`, else the repository's; tf_config_load), with its
 * `store:` checked by the store: TF_EUSAGE naming FILE:LINE:COLUMN. */
int tf_run_config_load(tf_config **out, const char *path);

/*
 * Open the store by that rule, with `remote` (NULL: the spec's, else
 * origin) for fetch and push, the config's Pyroscope credentials where the
 * environment has none, and the store's notices through `notice`. `cfg`
 * NULL loads .testflame.yml here first, for the commands that read nothing
 * else of it. Returns 0 or the engine's error (a broken config is
 * TF_EUSAGE, its message naming the file and line).
 */
int tf_run_store_open(tf_store **out, const char *flag, const tf_config *cfg,
		      const char *remote, tf_notice_fn notice, void *notice_ctx);

#endif
