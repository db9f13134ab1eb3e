/*
 * msglist.h - private to the context module: appending formatted one-line
 * messages to a tf_msglist, and freeing one. CI detection, git collection
 * and the context each keep such a list for the cli to print.
 */
#ifndef TESTFLAME_CONTEXT_MSGLIST_H
#define TESTFLAME_CONTEXT_MSGLIST_H

#include "testflame/context.h"

void tf_msglist_pushf(tf_msglist *l, const char *fmt, ...) TF_PRINTF(2, 3);
void tf_msglist_free(tf_msglist *l);

#endif
