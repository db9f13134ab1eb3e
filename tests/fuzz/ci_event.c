/*
 * ci_event.c - fuzz target: the reader of GitHub's event payload
 * (src/context/ci.c), the JSON file at $GITHUB_EVENT_PATH whose PR number,
 * head SHA, branches and repository a run takes for its context, through
 * tf_ci_detect() as a GitHub Actions job calls it; then the publishing
 * target made of what it read (tf_publish_target_detect()).
 *
 * The payload comes from the event: a branch name or a PR title is the
 * author's text. Beyond not crashing: the warnings a bad payload gives
 * are one line each, as the command prints them.
 */
#include "fuzz.h"
#include "testflame/context.h"
#include "testflame/publish.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path_var[96];
	char *envp[] = {
		"GITHUB_ACTIONS=true", "CI=true", "GITHUB_EVENT_NAME=pull_request",
		"GITHUB_REPOSITORY=octo/repo", "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567",
		"GITHUB_REF=refs/pull/7/merge", "GITHUB_RUN_ID=42", "GITHUB_TOKEN=fuzz-token",
		path_var, NULL,
	};
	tf_ci *ci;
	tf_publish_target t;

	snprintf(path_var, sizeof(path_var), "GITHUB_EVENT_PATH=%s", fuzz_file(data, size));
	FUZZ_CHECK(tf_ci_detect(&ci, envp) == 0, "%s", tf_error_last());
	FUZZ_CHECK(ci->provider == TF_CI_GITHUB, "not GitHub");
	for (size_t i = 0; i < ci->warnings.n; i++)
		FUZZ_CHECK(!strchr(ci->warnings.v[i], '\n'), "a warning of several lines: '%s'",
			   ci->warnings.v[i]);
	if (tf_publish_target_detect(&t, ci, NULL, envp) == 0)
		tf_publish_target_clear(&t);
	tf_ci_free(ci);
	return 0;
}
