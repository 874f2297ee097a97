/* SPDX-License-Identifier: MIT */
/*
 * intercept: the allocation wrappers of the fast first pass (intercept.c
 * has the details).  They are this module's only exports, under the C and
 * C++ allocation functions' own names.
 */
#ifndef LEAKGATE_INTERCEPT_H
#define LEAKGATE_INTERCEPT_H

#include <stddef.h>
#include <stdint.h>

/* The addresses of the wrappers' code [*start, *end): exact windows strip
 * these frames from stacks, as they strip jemalloc's.  Both 0 when the
 * wrappers are not built (sanitizer builds).  Cannot fail. */
void leakgate_intercept__range(uintptr_t *start, uintptr_t *end);

/* The malloc the wrappers call (the next definition after them), for
 * messages; NULL when the wrappers are not built.  Cannot fail. */
const void *leakgate_intercept__next_malloc(void);

/* The threads created from now on (joinable ones) belong to the test of
 * token (0: to none), until they are joined or detached (intercept.c
 * wraps pthread_join, its _np variants and pthread_detach).  Cannot
 * fail. */
void leakgate_intercept__own_threads(uint32_t token);

/* How many threads of token's test are neither joined nor detached; the
 * first max of their creators' return addresses into callers.  Each is
 * told once.  Cannot fail. */
size_t
leakgate_intercept__unjoined(uint32_t token, const void **callers, size_t max);

#endif
