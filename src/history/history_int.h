/*
 * history_int.h - what the history module's files share and nobody else
 * needs: which suite and kind a walk reads, and which runs it leaves out.
 */
#ifndef TESTFLAME_HISTORY_INT_H
#define TESTFLAME_HISTORY_INT_H

#include "testflame/history.h"

/* The suite and kind to read at `start`: o->suite and o->kind as given,
 * else the nearest stored run's. The caller frees both. */
int tf_history_pick_suite(char **suite, char **kind, tf_store *s, const char *start,
			  const tf_history_load_opts *o);
/* Why a stored run is left out (its suite failed or was interrupted), to
 * free; NULL when it is fine. */
char *tf_history_run_problem(const tf_profile *p);

#endif
