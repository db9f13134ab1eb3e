/*
 * gitlab_api.c - fuzz target: GitLab's REST API answers as testflame reads
 * them when it posts a merge request's note (the notes listed page by
 * page, system notes skipped, the note created or edited, errors, retries
 * and rate limits). See api_exchange.h for the input's layout and what is
 * checked.
 */
#include "api_exchange.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_publish_target t;

	memset(&t, 0, sizeof(t));
	t.host = TF_PUBLISH_GITLAB;
	t.repository = "group/sub/project";
	t.project_id = "42";
	t.number = 7;
	t.token_var = "TESTFLAME_GITLAB_TOKEN";
	api_exchange(&t, data, size);
	return 0;
}
