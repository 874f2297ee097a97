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
 * worker/starts started allocated during it.  Built twice: linked with
 * leakgate::cunit and with leakgate::cunit_jemalloc.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>

static sem_t go, made, done, gone;
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
        sem_init(&gone, 0, 0))
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
    return leakgate_cunit_main(argc, argv);
}
