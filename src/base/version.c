/*
 * version.c - which testflame this is: the release and the commit it was
 * built from, as `--version`, the run files and the reports say it. The
 * commit comes from build/gen/version.c (packaging/version.sh), so that a
 * new commit recompiles that one file, not the tree.
 */
#include "testflame/common.h"

const char *tf_version_describe(char *buf, size_t n)
{
	if (tf_build_commit[0])
		snprintf(buf, n, "%s (commit %.12s%s)", TF_VERSION, tf_build_commit,
			 tf_build_dirty ? ", dirty" : "");
	else
		snprintf(buf, n, "%s", TF_VERSION);
	return buf;
}
