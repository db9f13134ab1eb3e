/*
 * tf-pyroscope.c - a test driver for the Pyroscope store: pushes any run
 * file through tf_pyroscope_push() with the labels given, so that the
 * end-to-end tests can hold profiles no quick suite records (40,000
 * stacks in one test, names of kilobytes) to Pyroscope's limits against
 * the loopback server. Credentials come from TESTFLAME_PYROSCOPE_* as for
 * `run`. Prints what was pushed; errors as the cli prints them.
 *
 *   tf-pyroscope push URL RUN.pb.gz SERVICE COMMIT SUITE KIND
 */
#include "testflame/profile.h"
#include "store/store_int.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

static int fail(int rc)
{
	fprintf(stderr, "testflame: %s\n", tf_error_last());
	return rc == TF_EUSAGE ? 2 : 1;
}

int main(int argc, char **argv)
{
	tf_pyroscope_opts o;
	tf_pyroscope *py = NULL;
	tf_profile *p = NULL;
	tf_pyroscope_push_result res;
	int rc;

	if (argc != 8 || strcmp(argv[1], "push") != 0) {
		fprintf(stderr, "usage: tf-pyroscope push URL RUN.pb.gz SERVICE COMMIT SUITE KIND\n");
		return 2;
	}
	tf_pyroscope_opts_init(&o);
	o.url = argv[2];
	if ((rc = tf_pyroscope_opts_env(&o, environ)) || (rc = tf_pyroscope_open(&py, &o)) ||
	    (rc = tf_profile_load(&p, argv[3])))
		return fail(rc);
	tf_pyroscope_labels l = { argv[4], NULL, argv[5], "main", 0, "local", argv[6], argv[7], NULL };
	const tf_profile *runs[1] = { p };
	rc = tf_pyroscope_push(&res, py, &l, runs, 1, 0);
	printf("tests=%zu series=%zu profiles=%zu samples=%zu requests=%zu refused=%zu ingest=%d\n",
	       res.tests, res.series, res.profiles, res.samples, res.requests, res.refused,
	       res.ingest);
	tf_profile_free(p);
	tf_pyroscope_free(py);
	return rc ? fail(rc) : 0;
}
