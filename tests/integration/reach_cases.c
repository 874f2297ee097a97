/* SPDX-License-Identifier: MIT */
/*
 * Reachability (issue 43): what each failing test's objects are when its
 * window ends, as the replay's scan tells them (alloc/reach.h).
 *
 *   reach/dropped       a pointer dropped: lost
 *   reach/list_dropped  a list dropped through its head: the head lost,
 *                       the rest indirectly lost
 *   reach/cycle         two objects pointing to each other, dropped: one
 *                       lost, the other indirectly lost
 *   reach/dead_slot     a pointer left only in a stack slot of a function
 *                       that has returned: lost
 *   reach/own_slot      the same in the test function's own frame: lost
 *   reach/cache         an entry added to a cache a global holds: reachable
 *                       from a global
 *   reach/tls           kept by a thread-local variable: reachable from
 *                       thread-local storage
 *   reach/frame         kept in main()'s frame, live through the run:
 *                       reachable from the stack
 *   reach/threaded      starts and joins a thread, then drops a pointer
 *                       and keeps one in a global: measured in an exact
 *                       window (threads), still lost and reachable
 *   reach/small         a 5-byte object a global holds: reachable (an
 *                       object of 8 usable bytes is not the C library's
 *                       chunk header)
 *   reach/key           a pthread_setspecific() value: reachable from
 *                       thread-local storage (the thread's descriptor)
 *   reach/clean         frees what it allocates: passes
 *   accept/cache_grows  growth a stack_limit accepts, reachable: passes
 *                       under lost_limit: 0 (reach_cases.yaml)
 *   accept/leak_within  a lost object within the same stack_limit: fails
 *                       on lost_limit: 0
 *
 * With REACH_LATER=1, a suite whose growth is reachable when a test ends
 * and lost by the run's end (alloc/reach.h, gate_late.c):
 *
 *   later/kept          a list of two hung on a global: reachable when it
 *                       ends; later/cleared sets the global to NULL and
 *                       frees nothing: the head lost by the end of the
 *                       run, the tail indirectly
 *   later/kept_freed    an object hung on a global, freed by later/freed:
 *                       stays reachable (what was freed is not judged
 *                       again, whatever takes its address next)
 *   later/reuse         allocates what later/freed freed, and drops it:
 *                       lost, its own
 *
 * With REACH_THREADS=1, a suite whose first test ends while a thread it
 * started (detached) still runs, blocked in read(): the scan holds that
 * thread still and reads its stack and TLS too (reach_stop.h):
 *
 *   threads/holds       hands an object to the thread, which keeps it in
 *                       a local: reachable from the stack; the thread's
 *                       own object in a __thread variable: reachable from
 *                       thread-local storage; one it drops: lost
 *   threads/release     lets the thread free both and end: passes
 *
 * With REACH_DEAF=1 too, the thread blocks every signal: it cannot be
 * held still, and the kinds of threads/holds are not known.
 *
 * With REACH_INTERIOR=1, pointers into the middle of objects:
 *
 *   interior/near       a global points 40 KiB into a 64 KiB block:
 *                       reachable from a global
 *   interior/far        one 100 KiB into a 128 KiB block (more than the
 *                       scan follows): lost
 *   interior/small      one 24 bytes into a 32-byte object: reachable
 *
 * With REACH_STALE=1, a last suite takes an object's memory away behind
 * the allocation wrappers' back (its pages made inaccessible: the object
 * stays live to the wrappers, a global keeps its address) and then leaks:
 * the scan faults on that memory, and says nothing of the kinds instead
 * of crashing the replay (both stale tests fail, no kind shown).  (Not
 * the C library's own free: in a replay on jemalloc, what it does with
 * jemalloc's object depends on the word before it.)
 *
 * Built linked (leakgate::cunit and leakgate::cunit_jemalloc) and plain
 * (REACH_PLAIN, for `leakgate run`).
 */
#include <CUnit/Basic.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

struct node {
    struct node *next;
    char pad[24];
};

static struct node *cache;
static __thread struct node *tls_keep;
static void *volatile *frame_slot; /* a slot in main()'s frame */

static NOINLINE struct node *
node_new(struct node *next)
{
    struct node *n = malloc(sizeof *n);

    if (n) {
        memset(n, 0, sizeof *n);
        n->next = next;
    }
    return n;
}

static void
dropped(void)
{
    char *p = malloc(40); /* MARK:reach_dropped */

    if (p)
        memset(p, 1, 40);
    p = NULL;
    CU_ASSERT_PTR_NULL(p);
}

static void
list_dropped(void)
{
    struct node *head = NULL;

    for (int i = 0; i < 4; i++)
        head = node_new(head);
    head = NULL;
    CU_ASSERT_PTR_NULL(head);
}

static void
cycle(void)
{
    struct node *a = node_new(NULL);

    if (a)
        a->next = node_new(a);
    a = NULL;
    CU_ASSERT_PTR_NULL(a);
}

/* The object's address stays in this frame's slots after it returns. */
static NOINLINE void *
dead_slot_helper(void)
{
    void *volatile slot[4];

    slot[2] = malloc(48);
    return slot[0] = NULL;
}

static void
dead_slot(void)
{
    CU_ASSERT_PTR_NULL(dead_slot_helper());
}

/* The test's own frame is dead once it returned, whatever it holds. */
static void
own_slot(void)
{
    void *volatile slot[4];

    slot[1] = malloc(64);
    CU_ASSERT_PTR_NOT_NULL(slot[1]);
}

static void
cache_add(void)
{
    cache = node_new(cache);
    CU_ASSERT_PTR_NOT_NULL(cache);
}

static void
tls(void)
{
    tls_keep = node_new(tls_keep);
    CU_ASSERT_PTR_NOT_NULL(tls_keep);
}

static void
frame(void)
{
    *frame_slot = node_new(NULL);
    CU_ASSERT_PTR_NOT_NULL(*frame_slot);
}

static void *
worker(void *arg)
{
    return arg;
}

static void
threaded(void)
{
    pthread_t t;
    char *p;

    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, worker, NULL), 0);
    CU_ASSERT_EQUAL(pthread_join(t, NULL), 0);
    p = malloc(80); /* MARK:reach_threaded */
    CU_ASSERT_PTR_NOT_NULL(p);
    p = NULL;
    cache = node_new(cache);
}

static char *small_keep;
static pthread_key_t key;

static void
small(void)
{
    small_keep = malloc(5);
    CU_ASSERT_PTR_NOT_NULL(small_keep);
}

static void
key_value(void)
{
    CU_ASSERT_EQUAL_FATAL(pthread_key_create(&key, NULL), 0);
    CU_ASSERT_EQUAL(pthread_setspecific(key, malloc(40)), 0);
}

static void
clean(void)
{
    free(node_new(NULL));
}

static void
cache_grows(void)
{
    cache = node_new(node_new(cache));
    CU_ASSERT_PTR_NOT_NULL(cache);
}

static void
leak_within(void)
{
    CU_ASSERT_PTR_NOT_NULL(node_new(NULL));
}

static struct node *later_keep, *later_freed;

static void
later_kept(void)
{
    later_keep = node_new(node_new(NULL));
    CU_ASSERT_PTR_NOT_NULL(later_keep);
}

static void
later_cleared(void)
{
    later_keep = NULL; /* as a memset of the fixture would */
    CU_ASSERT_PTR_NULL(later_keep);
}

static void
later_kept_freed(void)
{
    later_freed = node_new(NULL);
    CU_ASSERT_PTR_NOT_NULL(later_freed);
}

static void
later_free(void)
{
    free(later_freed);
    later_freed = NULL;
    CU_ASSERT_PTR_NULL(later_freed);
}

static void
later_reuse(void)
{
    CU_ASSERT_PTR_NOT_NULL(node_new(NULL));
}

static int worker_pipe[2];
static atomic_int worker_state; /* 1: holding, 2: done */
static __thread void *worker_own;

static void *
holder(void *arg)
{
    void *volatile held = arg; /* in this thread's frame only */
    char c;

    worker_own = malloc(24); /* MARK:reach_worker_own */
    /* REACH_DEAF=1: a thread that cannot be held still (it blocks every
     * signal): the kinds are not known, and the run goes on. */
    if (getenv("REACH_DEAF")) {
        sigset_t all;

        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, NULL);
    }
    atomic_store(&worker_state, 1);
    while (read(worker_pipe[0], &c, 1) < 0)
        ;
    free(worker_own);
    free(held);
    atomic_store(&worker_state, 2);
    return NULL;
}

static void
thread_holds(void)
{
    pthread_t t;
    char *p;

    CU_ASSERT_EQUAL_FATAL(pipe(worker_pipe), 0);
    p = malloc(56); /* MARK:reach_worker_held */
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, holder, p), 0);
    CU_ASSERT_EQUAL(pthread_detach(t), 0);
    while (atomic_load(&worker_state) != 1)
        sched_yield();
    p = NULL;
    CU_ASSERT_PTR_NOT_NULL(malloc(72)); /* MARK:reach_worker_lost */
}

static void
thread_release(void)
{
    CU_ASSERT_EQUAL(write(worker_pipe[1], "x", 1), 1);
    while (atomic_load(&worker_state) != 2)
        sched_yield();
    close(worker_pipe[0]);
    close(worker_pipe[1]);
}

static char *interior_near, *interior_far, *interior_small;

static void
interior_near_test(void)
{
    char *p = malloc(64 << 10);

    interior_near = p ? p + (40 << 10) : NULL;
    CU_ASSERT_PTR_NOT_NULL(interior_near);
}

static void
interior_far_test(void)
{
    char *p = malloc(128 << 10);

    interior_far = p ? p + (100 << 10) : NULL;
    CU_ASSERT_PTR_NOT_NULL(interior_far);
}

static void
interior_small_test(void)
{
    char *p = malloc(32);

    interior_small = p ? p + 24 : NULL;
    CU_ASSERT_PTR_NOT_NULL(interior_small);
}

static void *volatile dangling;

static void
stale_free(void)
{
    void *p = malloc(1 << 20);

    /* Its first 1 MiB of pages (C library: a mapping of its own, 16
     * bytes in; jemalloc: page aligned) made inaccessible under the
     * object: unmapped, the hole could take a later mapping (a file the
     * symbolizer reads) and the scan would read that instead. */
    if (p)
        (void)mmap((void *)((uintptr_t)p & ~(uintptr_t)4095), 1 << 20,
                   PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    dangling = p;
    CU_ASSERT_PTR_NOT_NULL(dangling);
}

static void
stale_then_leak(void)
{
    CU_ASSERT_PTR_NOT_NULL(node_new(NULL));
}

int
main(void)
{
    void *volatile holder = NULL;
    CU_pSuite s;
    unsigned int failures;

    frame_slot = &holder;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("reach", NULL, NULL);
    CU_add_test(s, "dropped", dropped);
    CU_add_test(s, "list_dropped", list_dropped);
    CU_add_test(s, "cycle", cycle);
    CU_add_test(s, "dead_slot", dead_slot);
    CU_add_test(s, "own_slot", own_slot);
    CU_add_test(s, "cache", cache_add);
    CU_add_test(s, "tls", tls);
    CU_add_test(s, "frame", frame);
    CU_add_test(s, "threaded", threaded);
    CU_add_test(s, "small", small);
    CU_add_test(s, "key", key_value);
    CU_add_test(s, "clean", clean);
    s = CU_add_suite("accept", NULL, NULL);
    CU_add_test(s, "cache_grows", cache_grows);
    CU_add_test(s, "leak_within", leak_within);
    if (getenv("REACH_LATER")) {
        s = CU_add_suite("later", NULL, NULL);
        CU_add_test(s, "kept", later_kept);
        CU_add_test(s, "cleared", later_cleared);
        CU_add_test(s, "kept_freed", later_kept_freed);
        CU_add_test(s, "freed", later_free);
        CU_add_test(s, "reuse", later_reuse);
    }
    if (getenv("REACH_INTERIOR")) {
        s = CU_add_suite("interior", NULL, NULL);
        CU_add_test(s, "near", interior_near_test);
        CU_add_test(s, "far", interior_far_test);
        CU_add_test(s, "small", interior_small_test);
    }
    if (getenv("REACH_THREADS")) {
        s = CU_add_suite("threads", NULL, NULL);
        CU_add_test(s, "holds", thread_holds);
        CU_add_test(s, "release", thread_release);
    }
    if (getenv("REACH_STALE")) {
        s = CU_add_suite("stale", NULL, NULL);
        CU_add_test(s, "free", stale_free);
        CU_add_test(s, "leak", stale_then_leak);
    }
    CU_basic_set_mode(CU_BRM_NORMAL);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
