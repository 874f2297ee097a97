/* SPDX-License-Identifier: MIT */
/*
 * What real suites do (issue 5): deferred frees by worker threads
 * (`settle`), unbounded caches (growth that stays reachable is growth),
 * a leak in a test that also failed an assertion, C++ `new` from a C++
 * helper, and C runtime calls whose one-time allocations the built-in
 * ignore list covers.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

struct deferred {
    void *p;
    unsigned int delay_ms;
};

static void *
free_later(void *arg)
{
    struct deferred *d = arg;
    struct timespec ts = {0, (long)d->delay_ms * 1000000L};

    nanosleep(&ts, NULL);
    free(d->p);
    free(d);
    return NULL;
}

/* Hand `p` to a detached worker that frees it after delay_ms. */
static NOINLINE void
defer_free(void *p, unsigned int delay_ms)
{
    struct deferred *d = malloc(sizeof *d); /* MARK:deferred */
    pthread_t t;

    if (!d) {
        free(p);
        return;
    }
    d->p = p;
    d->delay_ms = delay_ms;
    if (pthread_create(&t, NULL, free_later, d) == 0)
        pthread_detach(t);
}

static void
test_settle_settled(void)
{
    defer_free(malloc(500), 100);
}

static void
test_settle_unsettled(void)
{
    defer_free(malloc(500), 400);
}

struct cache_entry {
    struct cache_entry *next;
    char key[56];
};

static struct cache_entry *cache;

static NOINLINE void
cache_remember(const char *key)
{
    struct cache_entry *e = malloc(sizeof *e); /* MARK:cache */

    if (e) {
        snprintf(e->key, sizeof e->key, "%s", key);
        e->next = cache;
        cache = e; /* reachable forever: an unbounded cache */
    }
}

static void
test_cache_unbounded(void)
{
    cache_remember("request-1");
}

static NOINLINE void
leak_after_assert(void)
{
    corpus_sink[20] = malloc(40); /* MARK:assert_leak */
}

static void
test_assert_and_leak(void)
{
    CU_ASSERT_EQUAL(1 + 1, 3);
    leak_after_assert();
}

static volatile int detached_done;

static void *
detached_leaker(void *arg)
{
    corpus_sink[21] = malloc(300); /* MARK:detached */
    __atomic_store_n(&detached_done, 1, __ATOMIC_RELEASE);
    return arg;
}

static void
test_detached_thread_leak(void)
{
    const struct timespec ms = {0, 1000000};
    pthread_t t;

    CU_ASSERT_FATAL(pthread_create(&t, NULL, detached_leaker, NULL) == 0);
    pthread_detach(t);
    for (int i = 0;
         i < 5000 && !__atomic_load_n(&detached_done, __ATOMIC_ACQUIRE); i++)
        nanosleep(&ms, NULL);
}

static void
test_cxx_new(void)
{
    corpus_cxx_leak();
}

static void
test_runtime_localtime(void)
{
    time_t t = 0;

    CU_ASSERT_PTR_NOT_NULL(localtime(&t));
}

static void
test_runtime_printf(void)
{
    printf("(printed from a test)\n");
}

static void *
worker(void *arg)
{
    void *p = malloc(1000);

    free(p);
    return arg;
}

static void
test_runtime_threads_joined(void)
{
    pthread_t t[4];

    for (int i = 0; i < 4; i++)
        CU_ASSERT_FATAL(pthread_create(&t[i], NULL, worker, NULL) == 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
}

static void
test_runtime_dlerror(void)
{
    CU_ASSERT_PTR_NULL(dlopen("libleakgate-none.so", RTLD_NOW));
    CU_ASSERT_PTR_NOT_NULL(dlerror());
}

/* The fast first pass re-runs a test that grew: this one counts its
 * runs and must run once only (corpus.yaml: rerun: false). */
static int once_runs;

static void
test_rerun_once_only(void)
{
    once_runs++;
    CU_ASSERT_EQUAL(once_runs, 1);
    corpus_sink[22] = malloc(10); /* MARK:once_only */
}

/* ...and this one may run twice: its report comes from the re-run. */
static NOINLINE void
rerun_leaker(void)
{
    corpus_sink[23] = malloc(10); /* MARK:rerun_twice */
}

static void
test_rerun_twice(void)
{
    rerun_leaker();
}

void
corpus_register_real(void)
{
    CU_pSuite s = CU_add_suite("settle", NULL, NULL);

    CU_add_test(s, "deferred_free_settled", test_settle_settled);
    CU_add_test(s, "deferred_free_unsettled", test_settle_unsettled);
    s = CU_add_suite("growth", NULL, NULL);
    CU_add_test(s, "unbounded_cache", test_cache_unbounded);
    CU_add_test(s, "assert_and_leak", test_assert_and_leak);
    CU_add_test(s, "cxx_new", test_cxx_new);
    CU_add_test(s, "detached_thread_leak", test_detached_thread_leak);
    s = CU_add_suite("runtime", NULL, NULL);
    CU_add_test(s, "localtime", test_runtime_localtime);
    CU_add_test(s, "printf", test_runtime_printf);
    CU_add_test(s, "threads_joined", test_runtime_threads_joined);
    CU_add_test(s, "dlerror", test_runtime_dlerror);
    s = CU_add_suite("rerun", NULL, NULL);
    CU_add_test(s, "once_only", test_rerun_once_only);
    CU_add_test(s, "twice", test_rerun_twice);
}
