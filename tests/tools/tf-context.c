/*
 * tf-context.c - a test driver for the context module, used by the end-to-
 * end tests until `record`, `run` and `show` carry the context themselves:
 * it runs the same calls those commands make (tf_config_load,
 * tf_context_detect under the real environment, tf_context_apply_meta into
 * a run file that is written, read back and shown as JSON) and reports
 * errors the way the cli does ("testflame: MESSAGE", exit 2 for usage).
 *
 *   tf-context context [-C DIR] [--config FILE] [-o RUN.pb.gz]
 *   tf-context config  [-C DIR] [--config FILE] [--freq N] [--target-branch B]
 *                      [--threshold P] [--store S] [--command CMD]
 *   tf-context walk    [-C DIR] REV [MAX]
 */
#include "testflame/config.h"
#include "testflame/context.h"
#include "testflame/profile.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static int fail(int rc)
{
	fprintf(stderr, "testflame: %s\n", tf_error_last());
	return rc == TF_EUSAGE ? 2 : 1;
}

static void print_list(const char *key, char **v)
{
	if (!v)
		return;
	printf("%s=", key);
	for (size_t i = 0; v[i]; i++)
		printf("%s%s", i ? "," : "", v[i]);
	printf("\n");
}

static void dump_config(const tf_config *c)
{
	if (c->path)
		printf("path=%s\n", c->path);
#define S(k, v) do { if (v) printf("%s=%s\n", k, v); } while (0)
#define B(k, v) do { if ((v) != TF_CONFIG_UNSET) printf("%s=%s\n", k, (v) ? "true" : "false"); } while (0)
	S("suite", c->suite);
	if (c->command_argv) {
		printf("command.shell=%s\n", c->command_shell ? "true" : "false");
		print_list("command", c->command_argv);
	}
	S("build", c->build);
	S("event", c->event);
	if (c->freq)
		printf("freq=%ld\n", c->freq);
	S("call_graph", c->call_graph);
	S("sampler", c->sampler);
	S("test", c->test);
	S("target_branch", c->target_branch);
	if (c->repeat)
		printf("repeat=%ld\n", c->repeat);
	S("against", c->against);
	S("store", c->store);
	B("attribution.markers", c->attribution.markers);
	print_list("attribution.frames", c->attribution.frames);
	for (size_t i = 0; i < c->attribution.patterns.n; i++)
		printf("attribution.patterns=%s -> %s\n", c->attribution.patterns.v[i].regex,
		       c->attribution.patterns.v[i].name ? c->attribution.patterns.v[i].name : "\\1");
	print_list("attribution.drivers", c->attribution.drivers);
	print_list("attribution.build_tools", c->attribution.build_tools);
	if (c->gate.threshold >= 0)
		printf("gate.threshold=%g\n", c->gate.threshold);
	B("gate.fail_on_regression", c->gate.fail_on_regression);
	if (c->gate.min_samples >= 0)
		printf("gate.min_samples=%ld\n", c->gate.min_samples);
	if (c->gate.alpha >= 0)
		printf("gate.alpha=%g\n", c->gate.alpha);
	S("report.dir", c->report.dir);
	print_list("report.formats", c->report.formats);
	B("publish.comment", c->publish.comment);
	B("publish.annotations", c->publish.annotations);
	B("publish.step_summary", c->publish.step_summary);
	S("publish.github_api_url", c->publish.github_api_url);
	S("publish.gitlab_api_url", c->publish.gitlab_api_url);
#undef S
#undef B
}

static int walk_print(const char *commit, unsigned distance, void *payload)
{
	(void)payload;
	printf("%u %s\n", distance, commit);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *config = NULL, *out = NULL, *mode;
	tf_config *cfg = NULL, *flags;
	tf_context *ctx = NULL;
	int rc, i, status = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: tf-context context|config|walk [options]\n");
		return 2;
	}
	mode = argv[1];
	flags = tf_config_new();
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-')
			break;
		if (!v) {
			fprintf(stderr, "testflame: option '%s' needs a value\n", a);
			tf_config_free(flags);
			return 2;
		}
		i++;
		if (strcmp(a, "-C") == 0)
			dir = v;
		else if (strcmp(a, "--config") == 0)
			config = v;
		else if (strcmp(a, "-o") == 0)
			out = v;
		else if (strcmp(a, "--freq") == 0)
			flags->freq = atol(v);
		else if (strcmp(a, "--target-branch") == 0)
			flags->target_branch = strdup(v);
		else if (strcmp(a, "--threshold") == 0)
			flags->gate.threshold = atof(v);
		else if (strcmp(a, "--store") == 0)
			flags->store = strdup(v);
		else if (strcmp(a, "--command") == 0) {
			flags->command_argv = calloc(2, sizeof(char *));
			flags->command_argv[0] = strdup(v);
			flags->command_shell = true;
		} else {
			fprintf(stderr, "testflame: unknown option '%s'\n", a);
			tf_config_free(flags);
			return 2;
		}
	}

	if (strcmp(mode, "walk") == 0) {
		tf_repo *r;
		bool truncated;
		tf_config_free(flags);
		if (i >= argc)
			return 2;
		if ((rc = tf_repo_open(&r, dir)) < 0)
			return fail(rc);
		rc = tf_repo_walk_first_parent(r, argv[i], i + 1 < argc ? (unsigned)atoi(argv[i + 1]) : 0,
					       walk_print, NULL, &truncated);
		if (rc == 0 && truncated)
			printf("truncated\n");
		tf_repo_free(r);
		return rc < 0 ? fail(rc) : 0;
	}

	if ((rc = tf_config_load(&cfg, config, dir)) < 0) {
		tf_config_free(flags);
		return fail(rc);
	}
	tf_config_merge(cfg, flags);
	tf_config_free(flags);

	if (strcmp(mode, "config") == 0) {
		dump_config(cfg);
		tf_config_free(cfg);
		return 0;
	}
	if (strcmp(mode, "context") != 0) {
		fprintf(stderr, "testflame: unknown mode '%s'\n", mode);
		tf_config_free(cfg);
		return 2;
	}
	if ((rc = tf_context_detect(&ctx, dir, environ, cfg)) < 0) {
		tf_config_free(cfg);
		return fail(rc);
	}
	for (size_t w = 0; w < ctx->warnings.n; w++)
		fprintf(stderr, "testflame: warning: %s\n", ctx->warnings.v[w]);

	tf_buf json = TF_BUF_INIT;
	if (out) {
		tf_profile *p, *back;
		tf_profile_new(&p);
		tf_profile_add_sample_type(p, "samples", "count");
		tf_context_apply_meta(p, ctx);
		if ((rc = tf_pprof_write(p, out)) < 0 || (rc = tf_profile_load(&back, out)) < 0) {
			status = fail(rc);
		} else {
			tf_context_meta_to_json(&json, back);
			tf_profile_free(back);
		}
		tf_profile_free(p);
	} else {
		tf_context_to_json(&json, ctx);
	}
	if (json.ptr)
		printf("%s\n", json.ptr);
	fprintf(stderr, "on_default_branch=%s\n", ctx->on_default_branch ? "true" : "false");
	tf_buf_free(&json);
	tf_context_free(ctx);
	tf_config_free(cfg);
	return status;
}
