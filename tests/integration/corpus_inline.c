/* SPDX-License-Identifier: MIT */
/* Built with -O2 -g: the helper is inlined, the report must name it. */
#include <stdlib.h>

#include "corpus.h"

static inline __attribute__((always_inline)) void *
inline_make_node(size_t n)
{
    return malloc(n); /* MARK:inline_helper */
}

__attribute__((noinline)) void
corpus_inline_caller(void)
{
    corpus_sink[7] = inline_make_node(64); /* MARK:inline_call */
}
