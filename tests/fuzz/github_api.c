/*
 * github_api.c - fuzz target: GitHub's REST API answers as testflame reads
 * them when it posts a pull request's comment and review comments (the
 * listing of comments page by page, the comment created or edited, review
 * comments, errors, retries and rate limits). See api_exchange.h for the
 * input's layout and what is checked.
 */
#include "api_exchange.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tf_publish_target t;

	memset(&t, 0, sizeof(t));
	t.host = TF_PUBLISH_GITHUB;
	t.repository = "octo/repo";
	t.number = 7;
	t.commit = "0123456789abcdef0123456789abcdef01234567";
	t.token_var = "GITHUB_TOKEN";
	api_exchange(&t, data, size);
	return 0;
}
