/* SPDX-License-Identifier: MIT */
/*
 * A stand-in for a long-running program that is not a test: it allocates
 * with jemalloc, dumps its heap profile twice with mallctl("prof.dump"),
 * and between the two dumps leaks (3 cache entries of 1 KiB, a 4 KiB
 * session in a shared library, 8 B elsewhere) and frees 256 B it had
 * allocated before the first dump.  The `leakgate diff` tests read the
 * pair.  Built as a PIE so that offline symbolization must apply the load
 * address from MAPPED_LIBRARIES.
 *
 * Run with MALLOC_CONF=prof:true,lg_prof_sample:0,prof_unbias:false.
 * Usage: leaky_service BEFORE.heap AFTER.heap; exit 0, or 3 when jemalloc
 * profiling is off (the dump fails).
 */
#include <jemalloc/jemalloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leaky_service.h"

int main(int argc, char **argv);

static void *kept[2];

static int
dump(const char *path)
{
    int rc = mallctl("prof.dump", NULL, NULL, &path, sizeof path);

    if (rc != 0)
        fprintf(stderr, "leaky_service: prof.dump %s: %s\n", path,
                strerror(rc));
    return rc;
}

static __attribute__((noinline)) void *
cache_store(size_t n)
{
    return malloc(1000 + n); /* MARK:cache_store */
}

static __attribute__((noinline)) void
handle_requests(void **out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        out[i] = cache_store(i);       /* MARK:handle_call */
    out[n] = leaky_lib_open_session(); /* MARK:session_call */
}

static __attribute__((noinline)) void *
tiny_leak(void)
{
    return malloc(8); /* MARK:tiny */
}

int
main(int argc, char **argv)
{
    static void *leaked[4];
    void *warm;

    if (argc != 3) {
        fprintf(stderr, "usage: leaky_service BEFORE.heap AFTER.heap\n");
        return 2;
    }
    kept[0] = malloc(5000); /* live in both dumps: no growth */
    warm = malloc(256);     /* freed between the dumps: -256 B */
    if (dump(argv[1]) != 0)
        return 3;
    handle_requests(leaked, 3);
    kept[1] = tiny_leak();
    free(warm);
    if (dump(argv[2]) != 0)
        return 3;
    return 0;
}
