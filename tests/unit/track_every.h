/* SPDX-License-Identifier: MIT */
/*
 * track_every: one object from each C allocation function, then each one
 * freed again (the last by realloc(p, 0)), inside an open tracker window:
 * shared by test_track (jemalloc) and test_track_lean (the C library's
 * malloc), where every function must record and every free erase.
 */
#ifndef LEAKGATE_TESTS_TRACK_EVERY_H
#define LEAKGATE_TESTS_TRACK_EVERY_H

#include <stddef.h>
#include <stdlib.h>

/* look(objs, n, payload), when given, sees the n live objects before the
 * frees.  *last is what realloc(p, 0) returned: the caller frees it after
 * the window.  Returns posix_memalign()'s result. */
static int
track_every_function(void (*look)(void *const *objs, size_t n, void *payload),
                     void *payload,
                     void **last)
{
    /* volatile: the compiler may drop a malloc/free pair otherwise */
    void *volatile a, *volatile b, *volatile c, *volatile e;
    void *d = NULL;
    int rc;

    a = malloc(40);
    b = calloc(10, 100);
    c = realloc(NULL, 24);
    c = realloc(c, 100000); /* moves: alloc + dalloc halves */
    rc = posix_memalign(&d, 256, 300);
    e = aligned_alloc(64, 128);
    if (look) {
        void *const objs[] = {a, b, c, d, e};

        look(objs, sizeof objs / sizeof objs[0], payload);
    }
    free(a);
    free(b);
    free(c);
    free(d);
    *last = realloc(e, 0); /* realloc(p, 0) frees */
    return rc;
}

#endif
