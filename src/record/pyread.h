/*
 * pyread.h - the Python stacks of a recording (private to src/record): for
 * every sample of a CPython process, the interpreter's own frames of the
 * sampled thread, read from its memory as the sample is taken and spooled
 * just before it (see pyread.c).
 */
#ifndef TESTFLAME_RECORD_PYREAD_H
#define TESTFLAME_RECORD_PYREAD_H

#include "spool.h"

typedef struct tf_pyread tf_pyread;

/* Counters and notices go to `rec` and `o`'s notice hook. */
int tf_pyread_new(tf_pyread **out, tf_recording *rec, const tf_record_opts *o);
/* Side-band, as the sampler reads it: mappings (interpreters to find),
 * forks (a child keeps its parent's interpreter), execs and exits. */
void tf_pyread_event(tf_pyread *r, const tf_rec_event *ev);
/* The sampler took a sample of `tid` (of process `pid`) at `time`: read its
 * Python stack now and spool it (nothing for a process without Python). */
void tf_pyread_sample(tf_pyread *r, uint32_t pid, uint32_t tid, uint64_t time);
/* The first spool error met (0 if none): samples go on without Python
 * stacks after one, and the recording fails with it. */
int tf_pyread_error(const tf_pyread *r);
/* Whether a process whose Python stacks are read lives now: the
 * recording loop then drains often enough to read them near their
 * samples. */
bool tf_pyread_live(const tf_pyread *r);
void tf_pyread_free(tf_pyread *r);

#endif
