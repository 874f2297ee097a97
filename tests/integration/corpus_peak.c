/* SPDX-License-Identifier: MIT */
/*
 * Peaks (issue 16): tests whose heap rises and falls again inside the
 * window.  None of them leaks; each has a peak_limit in corpus.yaml.
 *
 *   peak/freed_big      builds a 2 MiB table and frees it: over its 1 MiB
 *                       limit, the report names big_table_alloc
 *   peak/under_limit    a 256 KiB scratch buffer: within the limit
 *   peak/thread         a second thread holds 2 MiB while the test waits
 *                       for it: over, named thread_hog, "by thread"
 *   peak_setup/fixture  the suite's setUp allocates 3 MiB that tearDown
 *                       frees: over (setUp is inside the test's window)
 *   peak_stable/...     small, fixed working sets: the same peak every
 *                       run, within their limit
 *
 * Without a peak_limit (e.g. `peak_limit: ~`) every one of them passes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

static NOINLINE char *
big_table_alloc(size_t n)
{
    return malloc(n); /* MARK:peak_big */
}

static NOINLINE size_t
touch(char *p, size_t n)
{
    size_t sum = 0;

    memset(p, 1, n);
    for (size_t i = 0; i < n; i += 4096)
        sum += (unsigned char)p[i];
    return sum;
}

static void
test_freed_big(void)
{
    char *t = big_table_alloc((size_t)2 << 20);

    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(touch(t, (size_t)2 << 20) > 0);
    free(t);
}

static NOINLINE char *
scratch_alloc(size_t n)
{
    return malloc(n); /* MARK:peak_scratch */
}

static void
test_under_limit(void)
{
    char *s = scratch_alloc((size_t)256 << 10);

    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT(touch(s, (size_t)256 << 10) > 0);
    free(s);
}

static NOINLINE void *
thread_hog(void *arg)
{
    char *p = malloc((size_t)2 << 20); /* MARK:peak_thread */

    (void)arg;
    if (p) {
        touch(p, (size_t)2 << 20);
        free(p);
    }
    return NULL;
}

static void
test_thread(void)
{
    pthread_t t;

    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, thread_hog, NULL), 0);
    CU_ASSERT_EQUAL(pthread_join(t, NULL), 0);
}

static char *fixture;

static NOINLINE char *
fixture_alloc(size_t n)
{
    return malloc(n); /* MARK:peak_setup */
}

static void
fixture_setup(void)
{
    fixture = fixture_alloc((size_t)3 << 20);
    if (fixture)
        touch(fixture, (size_t)3 << 20);
}

static void
fixture_teardown(void)
{
    free(fixture);
    fixture = NULL;
}

static void
test_fixture(void)
{
    CU_ASSERT_PTR_NOT_NULL(fixture);
}

/* A working set of n blocks of 1 KiB, freed again. */
static NOINLINE void
working_set(size_t n)
{
    char *blocks[64];

    for (size_t i = 0; i < n; i++)
        blocks[i] = malloc(1024);
    for (size_t i = 0; i < n; i++)
        free(blocks[i]);
}

static void
test_stable_small(void)
{
    working_set(8);
    CU_PASS("eight blocks");
}

static void
test_stable_medium(void)
{
    working_set(64);
    CU_PASS("sixty-four blocks");
}

void
corpus_register_peak(void)
{
    CU_pSuite s = CU_add_suite("peak", NULL, NULL);

    CU_add_test(s, "freed_big", test_freed_big);
    CU_add_test(s, "under_limit", test_under_limit);
    CU_add_test(s, "thread", test_thread);
    s = CU_add_suite_with_setup_and_teardown("peak_setup", NULL, NULL,
                                             fixture_setup, fixture_teardown);
    CU_add_test(s, "fixture", test_fixture);
    s = CU_add_suite("peak_stable", NULL, NULL);
    CU_add_test(s, "small", test_stable_small);
    CU_add_test(s, "medium", test_stable_medium);
}
