/*
 * store.h - which store a command uses, one rule for every command
 * that touches baselines (run, baseline, compare): --store, else `store:`
 * in .testflame.yml, else $TESTFLAME_STORE, else the git store.
 */
#ifndef TESTFLAME_RUN_STORE_H
#define TESTFLAME_RUN_STORE_H

#include "cli/cli.h"
#include "testflame/config.h"
#include "testflame/store.h"

/* The spec by that rule; NULL means the git store. */
const char *tf_cli_store_spec(const char *flag, const tf_config *cfg);

/*
 * Open the store by that rule, with `remote` (NULL: the spec's, else
 * origin) for fetch and push, and a Pyroscope store with the config's
 * credentials where the environment has none. `cfg` NULL loads
 * .testflame.yml from the repository here first, for the commands that
 * read nothing else of it. Prints nothing; returns 0 or the engine's error
 * (a broken config is TF_EUSAGE, its message naming the file and line).
 */
int tf_cli_store_open(tf_store **out, const char *flag, const tf_config *cfg,
		      const char *remote);

/*
 * When no baseline of `suite` and `kind` was found from `start`: what the
 * nearest stored baseline holds instead, and how to pick it (--suite,
 * `suite:` in .testflame.yml, or the same event and sampler), as one line
 * to print; NULL when nothing is stored near. The caller frees.
 */
char *tf_cli_store_others(tf_store *st, const char *start, const char *suite, const char *kind);

#endif
