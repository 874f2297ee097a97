/* SPDX-License-Identifier: MIT */
/*
 * A detached thread that outlives the test that started it (issue 26,
 * item 6).  Deterministic: semaphores order every step.
 *   worker/starts   starts a detached worker and returns at once
 *   worker/other    while its window is open the worker allocates 64 B
 *                   and keeps them (it waits); the test itself allocates
 *                   nothing it keeps: before, the worker's object was
 *                   blamed on this test (it failed, or passed, by timing)
 *   worker/stops    lets the worker free its object and exit; waits
 * Every test passes; worker/other's verdict says that a thread
 * worker/starts started allocated during it.
 *   orphan/starts  starts a detached worker and returns at once
 *   orphan/later   while its window is open the worker allocates 48 B,
 *                  drops the pointer and ends: orphan/starts fails (its
 *                  thread's), at the run's end; orphan/later passes
 *                  (issue 39, item 3)
 *   flood/starts, flood/later  (with DETACHED_FLOOD set) the same with
 *                  140,000 objects kept, more than leakgate keeps:
 *                  flood/starts is not judged, never a pass
 * Built three times: linked with leakgate::cunit, with
 * leakgate::cunit_jemalloc, and plain (DETACHED_PLAIN) for leakgate run.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#ifndef DETACHED_PLAIN
#include <leakgate/cunit.h>
#endif

static sem_t go, made, done, gone, go2, made2;
static void *volatile held;

static void *
worker(void *arg)
{
    sem_wait(&go);
    held = malloc(64); /* MARK:detached_worker */
    sem_post(&made);
    sem_wait(&done);
    free(held);
    held = NULL;
    sem_post(&gone);
    return arg;
}

/* orphan/starts' worker: once orphan/later runs (its test is over), it
 * allocates 48 B, drops the pointer and ends. */
static void *
orphan_worker(void *arg)
{
    void *volatile lost;

    sem_wait(&go2);
    lost = malloc(48); /* MARK:orphan_leak */
    lost = NULL;
    sem_post(&made2);
    return lost ? arg : NULL;
}

static void
test_orphan_starts(void)
{
    pthread_t t;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, orphan_worker, NULL) == 0);
    CU_ASSERT(pthread_detach(t) == 0);
}

static void
test_orphan_later(void)
{
    sem_post(&go2);
    sem_wait(&made2);
}

/* flood/starts' worker (DETACHED_FLOOD set): once flood/later runs, it
 * allocates more objects than leakgate keeps for a test's threads and
 * keeps them all. */
#define FLOOD_OBJECTS 140000
static sem_t go3, made3;
static void *flood[FLOOD_OBJECTS];

static void *
flood_worker(void *arg)
{
    sem_wait(&go3);
    for (size_t i = 0; i < FLOOD_OBJECTS; i++)
        flood[i] = malloc(16);
    sem_post(&made3);
    return arg;
}

static void
test_flood_starts(void)
{
    pthread_t t;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, flood_worker, NULL) == 0);
    CU_ASSERT(pthread_detach(t) == 0);
}

static void
test_flood_later(void)
{
    sem_post(&go3);
    sem_wait(&made3);
}

static void
test_starts(void)
{
    pthread_t t;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, worker, NULL) == 0);
    CU_ASSERT(pthread_detach(t) == 0);
}

static void
test_other(void)
{
    sem_post(&go);
    sem_wait(&made);
    CU_ASSERT_PTR_NOT_NULL(held);
}

static void
test_stops(void)
{
    sem_post(&done);
    sem_wait(&gone);
    CU_ASSERT_PTR_NULL(held);
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (sem_init(&go, 0, 0) || sem_init(&made, 0, 0) || sem_init(&done, 0, 0) ||
        sem_init(&gone, 0, 0) || sem_init(&go2, 0, 0) || sem_init(&made2, 0, 0))
        return 3;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("worker", NULL, NULL);
    if (!s || !CU_add_test(s, "starts", test_starts) ||
        !CU_add_test(s, "other", test_other) ||
        !CU_add_test(s, "stops", test_stops)) {
        CU_cleanup_registry();
        return 3;
    }
    if (getenv("DETACHED_FLOOD")) {
        s = CU_add_suite("flood", NULL, NULL);
        if (!s || sem_init(&go3, 0, 0) || sem_init(&made3, 0, 0) ||
            !CU_add_test(s, "starts", test_flood_starts) ||
            !CU_add_test(s, "later", test_flood_later)) {
            CU_cleanup_registry();
            return 3;
        }
    }
    s = CU_add_suite("orphan", NULL, NULL);
    if (!s || !CU_add_test(s, "starts", test_orphan_starts) ||
        !CU_add_test(s, "later", test_orphan_later)) {
        CU_cleanup_registry();
        return 3;
    }
#ifdef DETACHED_PLAIN
    /* The unmodified twin that `leakgate run` gates (detached_cases_plain):
     * CUnit's failures make the exit status, as a plain program's would. */
    (void)argc;
    (void)argv;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    {
        int failed = CU_get_number_of_tests_failed() != 0;

        CU_cleanup_registry();
        return failed;
    }
#else
    return leakgate_cunit_main(argc, argv);
#endif
}
