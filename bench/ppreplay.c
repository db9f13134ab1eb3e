/*
 * ppreplay.c - testflame's post-processing of one recording, again and
 * again on the same records: the recording's spool kept in a file, then
 * replayed, unwound, symbolized, attributed and written as `record` does
 * after the suite ends. The same input every time, so that instruction
 * counts (valgrind --tool=callgrind --toggle-collect=pp_build) and the
 * run files of two builds of testflame compare.
 *
 *   ppreplay record FILE [FREQ] -- CMD...   record CMD (frame pointers)
 *                                           into FILE
 *   ppreplay build FILE OUT [N]             post-process FILE N times (1)
 *                                           into the run file OUT, printing
 *                                           the CPU of each
 *
 * The symbol cache is testflame's (TESTFLAME_CACHE_DIR); the files the
 * recording mapped must still be there. The symbolizer meets the
 * recording's mappings first as it meets them while recording (pinned),
 * which `record` counts in the recording's CPU, not here.
 */
#include "record/record_int.h"
#include "testflame/context.h"
#include "testflame/run.h"
#include "testflame/symbolize.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAGIC "TFPPRPL1"

static void die(const char *what)
{
	fprintf(stderr, "ppreplay: %s: %s\n", what, tf_error_last());
	exit(1);
}

static int do_record(const char *path, long freq, char **cmd)
{
	tf_run_suite o;
	tf_recording *rec = NULL;

	tf_run_suite_init(&o, NULL);
	o.freq = freq;
	o.callgraph = "fp";
	if (tf_run_prepare(&o, cmd))
		die("prepare");
	o.ro.argv = o.cmd;
	if (tf_record_run(&rec, &o.ro) || rec->info.exec_failed || rec->info.stopped)
		die("record");
	size_t len = 0;
	const uint8_t *data = tf_spool_data(rec->spool, &len);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(MAGIC, 8, 1, f) != 1 || fwrite(&rec->info, sizeof(rec->info), 1, f) != 1 ||
	    fwrite(&rec->layout, sizeof(rec->layout), 1, f) != 1 ||
	    (len && fwrite(data, len, 1, f) != 1) || fclose(f) != 0) {
		fprintf(stderr, "ppreplay: cannot write %s\n", path);
		return 1;
	}
	fprintf(stderr, "ppreplay: %llu samples, %zu bytes of records\n",
		(unsigned long long)rec->info.samples, len);
	tf_recording_free(rec);
	tf_run_suite_free(&o);
	return 0;
}

static tf_recording *load(const char *path)
{
	tf_buf b = TF_BUF_INIT;
	tf_recording *rec = tf_xcalloc(1, sizeof(*rec));

	if (tf_file_read(&b, path)) {
		fprintf(stderr, "ppreplay: cannot read %s\n", path);
		exit(1);
	}
	const char *buf = b.ptr;
	size_t len = b.len;
	if (
	    len < 8 + sizeof(rec->info) + sizeof(rec->layout) || memcmp(buf, MAGIC, 8) != 0) {
		fprintf(stderr, "ppreplay: %s is not a kept recording\n", path);
		exit(1);
	}
	memcpy(&rec->info, buf + 8, sizeof(rec->info));
	memcpy(&rec->layout, buf + 8 + sizeof(rec->info), sizeof(rec->layout));
	size_t at = 8 + sizeof(rec->info) + sizeof(rec->layout);
	if (tf_spool_open(&rec->spool) || tf_spool_append(rec->spool, buf + at, len - at) ||
	    tf_spool_finish(rec->spool))
		die("spool");
	tf_buf_free(&b);
	return rec;
}

static int on_live(void *ctx, const tf_rec_event *ev)
{
	tf_symbolizer_live(ctx, ev);
	return 0;
}

/* What `record` does once the suite ended: build, keep the symbols, tag,
 * write. Its own function, for callgrind's --toggle-collect. */
__attribute__((noinline)) int pp_build(tf_recording *rec, tf_symbolizer *sym, tf_run_suite *o,
				       const char *out)
{
	tf_profile *p = NULL;
	tf_attribute_stats st;
	int rc = tf_attribute_build(&p, rec, sym, &o->ao, &st);
	tf_symbolizer_save(sym);
	if (rc)
		return rc;
	if (o->ctx)
		tf_context_apply_meta(p, o->ctx);
	rc = tf_pprof_write(p, out);
	tf_profile_free(p);
	return rc;
}

static int do_build(const char *path, const char *out, int n)
{
	tf_recording *rec = load(path);
	char *cmd[] = { (char *)"true", NULL };

	for (int i = 0; i < n; i++) {
		tf_run_suite o;
		tf_symbolizer *sym = NULL;
		tf_symbolizer_opts so;

		tf_run_suite_init(&o, NULL);
		o.callgraph = "fp";
		if (tf_run_prepare(&o, cmd))
			die("prepare");
		o.ao.runner_tests = &o.runner_tests;
		o.ao.no_injection = !o.cfg->attribution.inject;
		tf_symbolizer_opts_init(&so);
		char *persist = tf_user_cache_dir();
		so.persist_dir = persist;
		if (tf_symbolizer_new(&sym, &so))
			die("symbolizer");
		free(persist);
		/* the mappings met while recording */
		if (tf_recording_replay(rec, on_live, sym))
			die("replay");
		struct timespec c0, c1;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
		if (pp_build(rec, sym, &o, out))
			die("build");
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
		printf("%.3f ms of CPU\n", (double)(c1.tv_sec - c0.tv_sec) * 1e3 +
						   (double)(c1.tv_nsec - c0.tv_nsec) / 1e6);
		tf_symbolizer_free(sym);
		tf_run_suite_free(&o);
	}
	tf_recording_free(rec);
	return 0;
}

int main(int argc, char **argv)
{
	tf_heap_huge_pages(); /* as testflame's main() */
	if (argc >= 4 && strcmp(argv[1], "record") == 0) {
		int at = 3;
		long freq = 999;
		if (strcmp(argv[at], "--") != 0)
			freq = atol(argv[at++]);
		if (at >= argc || strcmp(argv[at], "--") != 0 || at + 1 >= argc)
			goto usage;
		return do_record(argv[2], freq, argv + at + 1);
	}
	if (argc >= 4 && strcmp(argv[1], "build") == 0)
		return do_build(argv[2], argv[3], argc > 4 ? atoi(argv[4]) : 1);
usage:
	fprintf(stderr, "usage: ppreplay record FILE [FREQ] -- CMD... | ppreplay build FILE OUT [N]\n");
	return 2;
}
