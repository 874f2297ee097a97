/* SPDX-License-Identifier: MIT */
/* A shared library whose function leaks: frames from a .so must resolve. */
#include <stdlib.h>

#include "corpus.h"

static void *volatile keep[16];
static unsigned int next;

void
corpus_shared_leak(unsigned int bytes)
{
    keep[next++ % 16] = malloc(bytes); /* MARK:shared */
}
