/*
 * pyframes.h - Python frames in the profile (private to src/attribute): the
 * stacks the recorder read from CPython processes (record/pyread.c),
 * spliced into each sample's native stack at the evaluation loop's frames.
 */
#ifndef TESTFLAME_ATTRIBUTE_PYFRAMES_H
#define TESTFLAME_ATTRIBUTE_PYFRAMES_H

#include "testflame/attribute.h"

typedef struct tf_pyframes tf_pyframes;

tf_pyframes *tf_pyframes_new(tf_profile *p);
void tf_pyframes_free(tf_pyframes *f);
/* TF_REC_PYCODE and TF_REC_PYSTACK, in replay order. */
void tf_pyframes_event(tf_pyframes *f, const tf_rec_event *ev);
/* A sample's stack, for tf_pyframes_splice(). */
typedef struct {
	uint32_t *locs;           /* profile locations, leaf first (rewritten) */
	const bool *unresolved;   /* per native location: it had no symbol */
	size_t user;              /* where the user frames start in locs */
	size_t n, max;            /* its length (updated), the room in locs */
	bool truncated;           /* cut short (updated) */
	uint32_t dropped, dropped_unresolved; /* native frames taken out */
} tf_pysplice;

/*
 * Put the Python frames of sample `ev`, read when it was taken, into its
 * stack, and take out what they stand for (the evaluation loop's frames,
 * the interpreter's own C functions, the perf-map trampolines of 3.12+).
 * A native stack cut short that the Python frames carry to the
 * interpreter's outermost frame is no longer truncated. False when the
 * sample has no Python frames (`s` untouched).
 */
bool tf_pyframes_splice(tf_pyframes *f, const tf_rec_event *ev, tf_pysplice *s);
/* testflame.python_* metadata: what was read and spliced. */
void tf_pyframes_write_meta(tf_pyframes *f, const tf_record_info *ri);
/* Whether function `fn` of the profile is a Python function (for the
 * frame rules: pytest's runner and the tests it calls). */
bool tf_pyframes_is_python(const tf_profile *p, uint32_t fn);

/*
 * pytest's tests from Python frames (frames.c's "pytest" preset): the
 * function a runner calls is the test. Anchors: pytest's
 * pytest_pyfunc_call, unittest's TestCase._callTestMethod (TestCase.run
 * before 3.8), which pytest also goes through for TestCase classes.
 */
enum { TF_PYTEST_ANCHOR_PYTEST = 1, TF_PYTEST_ANCHOR_UNITTEST = 2 };
int tf_pytest_anchor(const tf_profile *p, uint32_t fn);
/* A frame of pytest itself (a unittest test under pytest gets its node id). */
bool tf_pytest_runner_frame(const tf_profile *p, uint32_t fn);
typedef struct tf_pytest_names tf_pytest_names;
tf_pytest_names *tf_pytest_names_new(void);
void tf_pytest_names_free(tf_pytest_names *c);
/* The test's name: pytest's node id ("toolz/tests/test_itertoolz.py::
 * test_frequencies", "tests/test_x.py::TestA::test_b"), the same the
 * pytest plugin's markers give; with node_id false, unittest's own
 * ("tests.test_x.TestA.test_b"). `cwd` (may be NULL): the process's
 * working directory, pytest's rootdir when no configuration file says. */
tf_strid tf_pytest_test_name(tf_pytest_names *c, tf_profile *p, uint32_t fn, bool node_id,
			     const char *cwd);

#endif
