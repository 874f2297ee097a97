/* SPDX-License-Identifier: MIT */
/*
 * intercept: the allocation wrappers of the fast first pass (intercept.c
 * has the details).  They are this module's only exports, under the C and
 * C++ allocation functions' own names.
 */
#ifndef LEAKGATE_INTERCEPT_H
#define LEAKGATE_INTERCEPT_H

#include <stdint.h>

/* The addresses of the wrappers' code [*start, *end): exact windows strip
 * these frames from stacks, as they strip jemalloc's.  Both 0 when the
 * wrappers are not built (sanitizer builds).  Cannot fail. */
void leakgate_intercept__range(uintptr_t *start, uintptr_t *end);

/* The malloc the wrappers call (the next definition after them), for
 * messages; NULL when the wrappers are not built.  Cannot fail. */
const void *leakgate_intercept__next_malloc(void);

#endif
