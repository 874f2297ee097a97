/* SPDX-License-Identifier: MIT */
/*
 * track: the cheap first pass under the real jemalloc (ctest label
 * needs-jemalloc).  Pins the behaviour of the allocation wrappers
 * (intercept.c) that track.c relies on: every allocation function
 * records, every free removes, in-place resizes record, frees of older
 * objects are ignored, several threads at once.  No CUnit assertion runs inside
 * a window: a failing one would allocate CUnit's failure record there.
 */
#include "track.h"
#include "track_hot.h"

#include <jemalloc/jemalloc.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "error.h"
#include "heap.h"
#include "symbolize.h"
#include "track_every.h"
#include "track_watch.h"
#include "unit.h"
#include "util.h"

#define THREADS 4
#define THREAD_CHURN 50000

static void
must_install(void)
{
    CU_ASSERT_EQUAL_FATAL(leakgate_track__install(), 0);
    CU_ASSERT_TRUE_FATAL(leakgate_track__installed());
}

static void
test_track__install_twice(void)
{
    must_install();
    CU_ASSERT_EQUAL(leakgate_track__install(), 0);
}

static void
test_track__out_of_order_calls(void)
{
    struct leakgate_track_result r;

    must_install();
    CU_ASSERT_EQUAL(leakgate_track__end(&r), LEAKGATE_ESTATE);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    CU_ASSERT_EQUAL(leakgate_track__begin(), LEAKGATE_ESTATE);
    CU_ASSERT_EQUAL(leakgate_track__each(NULL, NULL), LEAKGATE_ESTATE);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 0);
}

/* Every allocation function, every object freed again: nothing left. */
static void
test_track__all_functions_freed(void)
{
    struct leakgate_track_result r;
    void *last = NULL;
    int rc;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    rc = track_every_function(NULL, NULL, &last);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    free(last);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(r.live_objs, 0);
    CU_ASSERT_EQUAL(r.live_bytes, 0);
    CU_ASSERT(r.allocs >= 6);
    CU_ASSERT_EQUAL(r.frees, r.allocs);
}

static int
collect(const void *ptr, size_t usable_bytes, void *payload)
{
    const void **seen = payload;

    seen[0] = ptr;
    seen[1] = (const void *)(uintptr_t)usable_bytes;
    return 0;
}

static void
test_track__one_byte_leak(void)
{
    struct leakgate_track_result r;
    const void *seen[2] = {NULL, NULL};
    char *volatile p;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p = malloc(1);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 1);
    CU_ASSERT_EQUAL(r.live_bytes, 8); /* jemalloc's smallest size class */
    CU_ASSERT_EQUAL(leakgate_track__each(collect, seen), 0);
    CU_ASSERT_PTR_EQUAL(seen[0], p);
    CU_ASSERT_EQUAL((uintptr_t)seen[1], 8);
    free(p);
}

static void
test_track__calloc_and_memalign_leaks(void)
{
    struct leakgate_track_result r;
    void *volatile a;
    void *b = NULL;
    int rc;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    a = calloc(1, 5000);
    rc = posix_memalign(&b, 64, 200);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(r.live_objs, 2);
    CU_ASSERT_EQUAL(r.live_bytes, 5120 + 256); /* aligned class */
    free(a);
    free(b);
}

/* jemalloc's own API and the older aligned allocators go through the
 * wrappers too: allocations recorded, frees and moves removed. */
static void
test_track__jemalloc_api_and_old_aligned(void)
{
    struct leakgate_track_result r;
    void *volatile a, *volatile b, *volatile c, *volatile d;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    a = mallocx(100, 0);
    a = rallocx(a, 50000, 0); /* moves to a large class */
    b = memalign(64, 100);
    c = valloc(100);
    d = mallocx(40, MALLOCX_ZERO);
    sdallocx(a, 50000, 0);
    dallocx(b, 0);
    free(c);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 1);
    CU_ASSERT_EQUAL(r.live_bytes, 48);
    CU_ASSERT(r.allocs >= 5);
    dallocx(d, 0);
}

/* pvalloc (jemalloc has none: before it was wrapped, the C library's
 * object reached jemalloc's free and the process died in sallocx), and
 * the other page-aligned and C-library allocators: each recorded with the
 * usable size malloc_usable_size() reports, each free removes it. */
static void
test_track__pvalloc_and_friends(void)
{
    struct leakgate_track_result r;
    void *volatile p[6];
    void *q = NULL;
    size_t usable = 0;
    bool aligned = true;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p[0] = pvalloc(100);  /* one page */
    p[1] = pvalloc(0);    /* one page too */
    p[2] = pvalloc(5000); /* two pages */
    p[3] = valloc(100);
    p[4] = reallocarray(NULL, 10, 12);
    p[5] = memalign(32, 40);
    (void)posix_memalign(&q, 128, 10);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    for (int i = 0; i < 6; i++) {
        usable += p[i] ? malloc_usable_size(p[i]) : 0;
        aligned = aligned && p[i] && ((uintptr_t)p[i] & 31) == 0;
    }
    usable += q ? malloc_usable_size(q) : 0;
    CU_ASSERT_TRUE(aligned);
    CU_ASSERT_EQUAL((uintptr_t)p[0] & 4095, 0);
    CU_ASSERT_EQUAL((uintptr_t)p[2] & 4095, 0);
    CU_ASSERT_EQUAL(malloc_usable_size(p[0]), 4096);
    CU_ASSERT_EQUAL(malloc_usable_size(p[1]), 4096);
    CU_ASSERT_EQUAL(malloc_usable_size(p[2]), 8192);
    CU_ASSERT_EQUAL(r.live_objs, 7);
    CU_ASSERT_EQUAL(r.live_bytes, usable);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p[4] = reallocarray(p[4], 100, 12); /* moves */
    for (int i = 0; i < 6; i++)
        free(p[i]);
    free(q);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 0);
    CU_ASSERT_EQUAL(r.frees, r.allocs);
}

/* A window whose stacks are the C runtime's allocations for the
 * functions globs name. */
static void
begin_runtime_window(const char *const *globs, size_t n)
{
    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__runtime_functions(globs, n), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks(LEAKGATE_TRACK_STACKS_RUNTIME),
                          0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
}

/* LEAKGATE_TRACK_STACKS_RUNTIME: an allocation the C library makes on
 * behalf of a function the ignore globs name (a stream's first write:
 * _IO_file_doallocate) keeps its stack; the program's own strdup does not
 * (before, every allocation whose immediate caller was the C library was
 * unwound: the strdup had a stack too). */
static void
test_track__runtime_stacks_only_named(void)
{
    static const char *const globs[] = {"*_IO_file_doallocate"};
    struct leakgate_track_result r;
    struct leakgate_diff *d = NULL;
    FILE *f = fopen("/dev/null", "w");
    char *volatile copy;
    int rc;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    begin_runtime_window(globs, 1);
    fputs("first output: the stream's buffer\n", f);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    rc = leakgate_diff__of_track_left(&d);
    CU_ASSERT_EQUAL(r.live_objs, 1);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_TRUE(d && d->nentries == 1);
    leakgate_diff__free(d);
    d = NULL;

    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks(LEAKGATE_TRACK_STACKS_RUNTIME),
                          0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    copy = strdup("the program's own copy");
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    rc = leakgate_diff__of_track_left(&d);
    CU_ASSERT_EQUAL(r.live_objs, 1);
    CU_ASSERT_EQUAL(rc, LEAKGATE_ENOTFOUND);
    leakgate_diff__free(d);
    free(copy);
    fclose(f);
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
}

/* A noted object's free drops its note, also among frees that need no
 * lookup (track_hot.h's filter): an object the program then allocates at
 * the same address has no stack.  A stale note would lend it the stream
 * buffer's stack, which the built-in ignore list drops: a leak hidden. */
static void
test_track__note_dropped_at_free(void)
{
    static const char *const globs[] = {"*_IO_file_doallocate"};
    struct leakgate_track_result r;
    struct leakgate_diff *d = NULL;
    FILE *f = fopen("/dev/null", "w");
    void *buf = NULL, *volatile again = NULL;
    size_t size = 0;
    int rc;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    begin_runtime_window(globs, 1);
    fputs("first output: the stream's buffer\n", f);
    buf = f->_IO_buf_base;
    size = (size_t)(f->_IO_buf_end - f->_IO_buf_base);
    for (int i = 0; i < 100; i++) {
        void *volatile other = malloc(48);

        free(other);
    }
    fclose(f);
    again = malloc(size);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    rc = leakgate_diff__of_track_left(&d);
    /* The same address (jemalloc reuses it at once): else this proves
     * nothing. */
    CU_ASSERT_PTR_EQUAL(again, buf);
    CU_ASSERT_EQUAL(r.live_objs, 1);
    CU_ASSERT_EQUAL(rc, LEAKGATE_ENOTFOUND);
    leakgate_diff__free(d);
    free(again);
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
}

/* Objects from before the window: freeing them changes nothing. */
static void
test_track__older_frees_ignored(void)
{
    struct leakgate_track_result r;
    void *volatile old = malloc(100);
    void *volatile q;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    free(old);
    q = malloc(10);
    free(q);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 0);
    CU_ASSERT_EQUAL(r.frees, 1);
}

/* The wrappers' inlined record and erase (track_hot.h) keep the leaf
 * the last window listed: a new window must list it again (its end finds
 * only listed leaves), and the earlier window's objects, cleared by the
 * new window's start, are not its frees.  Runs before any thread starts:
 * the inlined paths are taken only while the process has one thread. */
static void
test_track__leaf_of_an_earlier_window(void)
{
    struct leakgate_track_result r1, r2;
    const void *seen[2] = {NULL, NULL};
    char *volatile a;
    char *volatile b;
    char *volatile c;

    must_install();
    CU_ASSERT_TRUE_FATAL(leakgate_track__alone());
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    a = malloc(40);
    CU_ASSERT_EQUAL(leakgate_track__end(&r1), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    free(a);
    b = malloc(40);
    c = malloc(40);
    free(c);
    CU_ASSERT_EQUAL(leakgate_track__end(&r2), 0);
    CU_ASSERT_EQUAL(r1.live_objs, 1);
    CU_ASSERT_EQUAL(r2.live_objs, 1);
    CU_ASSERT_EQUAL(r2.live_bytes, 48);
    CU_ASSERT_EQUAL(r2.allocs, 2);
    CU_ASSERT_EQUAL(r2.frees, 1);
    /* the same leaf of the bitmap */
    CU_ASSERT_EQUAL((uintptr_t)a >> LEAKGATE_TRACK__LEAF_SHIFT,
                    (uintptr_t)b >> LEAKGATE_TRACK__LEAF_SHIFT);
    CU_ASSERT_EQUAL(leakgate_track__each(collect, seen), 0);
    CU_ASSERT_PTR_EQUAL(seen[0], b);
    free(b);
}

/* An older object resized in the window is sampled anew by exact
 * profiling (at the realloc stack), so it counts: moved or in place. */
static void
test_track__older_object_resized(void)
{
    struct leakgate_track_result r1, r2;
    char *moved = malloc(100), *inplace = malloc(100);
    char *volatile p;
    char *volatile q;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p = realloc(moved, 100000);
    CU_ASSERT_EQUAL(leakgate_track__end(&r1), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    q = realloc(inplace, 110); /* same 112-byte size class: in place */
    CU_ASSERT_EQUAL(leakgate_track__end(&r2), 0);
    CU_ASSERT_EQUAL(r1.live_objs, 1);
    CU_ASSERT_EQUAL(r1.live_bytes, malloc_usable_size(p));
    CU_ASSERT_PTR_EQUAL(q, inplace);
    CU_ASSERT_EQUAL(r2.live_objs, 1);
    CU_ASSERT_EQUAL(r2.live_bytes, 112);
    free(p);
    free(q);
}

/* A window-allocated object resized in place stays one object. */
static void
test_track__resize_in_window(void)
{
    struct leakgate_track_result r;
    char *volatile p;
    char *volatile q;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p = malloc(100);
    q = realloc(p, 110);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 1);
    free(q);
}

/* Many objects alive at once (the table grows), all freed: no false
 * positive; a later window starts empty. */
static void
test_track__churn_without_false_positive(void)
{
    enum { LIVE = 60000, ROUNDS = 5 };
    struct leakgate_track_result r, r2;
    void **live = calloc(LIVE, sizeof *live);
    uint64_t x = 88172645463325252u;

    must_install();
    CU_ASSERT_PTR_NOT_NULL_FATAL(live);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    for (size_t i = 0; i < (size_t)LIVE * ROUNDS; i++) {
        size_t k = i % LIVE;

        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        free(live[k]);
        live[k] = malloc(1 + (size_t)(x % 200));
    }
    for (size_t k = 0; k < LIVE; k++)
        free(live[k]);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    CU_ASSERT_EQUAL(leakgate_track__end(&r2), 0);
    free(live);
    CU_ASSERT_EQUAL(r.live_objs, 0);
    CU_ASSERT_EQUAL(r.allocs, (uint64_t)LIVE * ROUNDS);
    CU_ASSERT_EQUAL(r.frees, (uint64_t)LIVE * ROUNDS);
    CU_ASSERT_EQUAL(r2.allocs, 0);
}

struct worker {
    pthread_t thread;
    unsigned int leaks; /* objects this thread keeps */
    void *kept[THREADS];
    void *handoff; /* allocated here, freed by the main thread */
};

static void *
work(void *arg)
{
    struct worker *w = arg;

    for (unsigned int i = 0; i < THREAD_CHURN; i++) {
        void *volatile p = i % 3 ? malloc(16 + i % 64) : calloc(2, 24);

        p = realloc(p, 200);
        free(p);
    }
    for (unsigned int i = 0; i < w->leaks; i++)
        w->kept[i] = malloc(16);
    w->handoff = malloc(32);
    return NULL;
}

/* Several threads at once, frees across threads, exact counts. */
static void
test_track__threads(void)
{
    struct worker w[THREADS];
    struct leakgate_track_result r;
    int started = 0;
    uint64_t want = 0;

    must_install();
    memset(w, 0, sizeof w);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i].leaks = (unsigned int)i + 1;
        started += pthread_create(&w[i].thread, NULL, work, &w[i]) == 0;
    }
    for (int i = 0; i < started; i++) {
        pthread_join(w[i].thread, NULL);
        free(w[i].handoff);
        want += w[i].leaks;
    }
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL_FATAL(started, THREADS);
    /* glibc keeps a new thread's DTV (FACTS: 320 B on the first
     * pthread_create) and may keep other per-thread state: count only
     * our 16-byte objects. */
    CU_ASSERT(r.live_objs >= want);
    for (int i = 0; i < THREADS; i++) {
        for (unsigned int k = 0; k < w[i].leaks; k++) {
            CU_ASSERT_TRUE(leakgate_track__forget(w[i].kept[k]));
            free(w[i].kept[k]);
        }
    }
}

/* The peak meter: allocations raise the level, frees (older objects'
 * too) lower it, resizes count their new size; the trigger fires at its
 * level, once at a time, and re-arms where it says. */
static long long fired_at[8];
static int nfired;

static long long
note_fire(long long level, void *payload)
{
    (void)payload;
    if (nfired < 8)
        fired_at[nfired++] = level;
    return level + (1 << 20);
}

static void
test_track__meter(void)
{
    struct leakgate_track_meter m;
    void *volatile older = malloc(1 << 20);
    void *volatile a, *volatile b;

    must_install();
    CU_ASSERT_PTR_NOT_NULL_FATAL(older);
    nfired = 0;
    leakgate_track__meter_start(NULL);
    leakgate_track__meter_arm(3 << 20, note_fire, NULL);
    a = malloc(2 << 20);     /* level 2 MiB */
    b = malloc(1 << 20);     /* 3 MiB: fires, next at 4 MiB */
    free(older);             /* 2 MiB */
    a = realloc(a, 3 << 20); /* 3 MiB */
    free(b);                 /* 2 MiB */
    free(a);                 /* -1 MiB: older was freed */
    leakgate_track__meter_stop(&m);
    CU_ASSERT_EQUAL(m.peak, 3 << 20);
    CU_ASSERT_EQUAL(m.live, -(1 << 20));
    CU_ASSERT_EQUAL(m.allocs, 3);
    CU_ASSERT_EQUAL(nfired, 1);
    CU_ASSERT_EQUAL(fired_at[0], 3 << 20);
    /* stopped: nothing counts; started again from where it stood */
    a = malloc(4 << 20);
    leakgate_track__meter_start(&m);
    free(a); /* an object from before the start: lower still */
    leakgate_track__meter_stop(&m);
    CU_ASSERT_EQUAL(m.peak, 3 << 20);
    CU_ASSERT_EQUAL(m.live, -(5 << 20));
    CU_ASSERT_EQUAL(nfired, 1);
}

/* Allocations are counted in per-thread slots: every thread's count, also
 * of threads that started or ended while the meter ran, and not what they
 * allocated before it started or after it stopped. */
#define METER_ROUNDS 10000

static void *
meter_churn(void *arg)
{
    (void)arg;
    for (int i = 0; i < METER_ROUNDS; i++) {
        void *volatile p = malloc(64);

        free(p);
    }
    return NULL;
}

static void
test_track__meter_threads(void)
{
    struct leakgate_track_meter m;
    pthread_t t[THREADS];
    int started = 0;

    must_install();
    meter_churn(NULL); /* this thread's slot counts from before the start */
    leakgate_track__meter_start(NULL);
    for (int i = 0; i < THREADS; i++)
        started += pthread_create(&t[started], NULL, meter_churn, NULL) == 0;
    meter_churn(NULL);
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    leakgate_track__meter_stop(&m);
    CU_ASSERT_EQUAL(started, THREADS);
    /* each pthread_create may allocate (glibc's DTV) */
    CU_ASSERT(m.allocs >= (uint64_t)(started + 1) * METER_ROUNDS);
    CU_ASSERT(m.allocs <=
              (uint64_t)(started + 1) * METER_ROUNDS + 4 * (uint64_t)started);
    /* every thread freed what it allocated (glibc may keep a DTV) */
    CU_ASSERT(m.live >= 0 && m.live < 64 * 1024);
    meter_churn(NULL); /* stopped: not counted */
    leakgate_track__meter_start(&m);
    leakgate_track__meter_stop(&m);
    CU_ASSERT(m.allocs <=
              (uint64_t)(started + 1) * METER_ROUNDS + 4 * (uint64_t)started);
}

/* A thread other than the meter's owner holds the peak while the owner
 * waits (the corpus's peak/thread): the level counts both parts. */
static void *
meter_hog(void *arg)
{
    void *volatile p = malloc(1 << 20);

    (void)arg;
    free(p);
    return NULL;
}

static void
test_track__meter_other_thread(void)
{
    struct leakgate_track_meter m;
    void *volatile mine;
    pthread_t t;

    must_install();
    leakgate_track__meter_start(NULL);
    mine = malloc(1 << 20); /* the owner holds 1 MiB ... */
    CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, meter_hog, NULL), 0);
    pthread_join(t, NULL); /* ... while another thread adds 1 MiB */
    free(mine);
    leakgate_track__meter_stop(&m);
    CU_ASSERT(m.peak >= 2u << 20);
    CU_ASSERT(m.peak < (2u << 20) + 64 * 1024);
    CU_ASSERT(m.live < 64 * 1024);
}

/* Threads again, now warmed up (glibc's per-thread state exists): the
 * count is exact. */
static void
test_track__threads_exact(void)
{
    struct worker w[THREADS];
    struct leakgate_track_result r;
    uint64_t want = 0;

    must_install();
    memset(w, 0, sizeof w);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    for (int i = 0; i < THREADS; i++) {
        w[i].leaks = (unsigned int)i + 1;
        if (pthread_create(&w[i].thread, NULL, work, &w[i]) != 0)
            w[i].leaks = 0;
    }
    for (int i = 0; i < THREADS; i++) {
        if (w[i].leaks == 0)
            continue;
        pthread_join(w[i].thread, NULL);
        free(w[i].handoff);
        want += w[i].leaks;
    }
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(want, 1 + 2 + 3 + 4);
    CU_ASSERT_EQUAL(r.live_objs, want);
    CU_ASSERT_EQUAL(r.live_bytes, want * 16);
    for (int i = 0; i < THREADS; i++) {
        for (unsigned int k = 0; k < w[i].leaks; k++)
            free(w[i].kept[k]);
    }
}

/* What the CUnit glue does with CUnit's own failure records. */
static void
test_track__forget(void)
{
    struct leakgate_track_result r;
    void *record, *other = malloc(8);
    bool forgot, forgot_other;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    record = malloc(56);
    forgot = leakgate_track__forget(record);
    forgot_other = leakgate_track__forget(other);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_TRUE(forgot);
    CU_ASSERT_FALSE(forgot_other);
    CU_ASSERT_EQUAL(r.live_objs, 0);
    free(record);
    free(other);
}

/* The same work twice, as a replay's logging copy and the replay run one
 * test from one state: 6 allocations, the 2nd and the 5th kept. */
static void *volatile kept[2];

static __attribute__((noinline)) void
ordinal_work(void)
{
    void *a = malloc(24), *c, *e;

    kept[0] = malloc(40); /* ordinal 1 */
    c = calloc(1, 100);
    free(a);
    a = malloc(8);
    kept[1] = realloc(c, 300); /* ordinal 4 (the resize) */
    e = malloc(16);
    free(a);
    free(e);
}

/* Ordinals (track.h): a logging window names the ordinals of what it
 * left; a selecting window given them records a stack for exactly those
 * objects, and groups them as the stacks of ALL mode would. */
static void
test_track__ordinals_select_what_was_left(void)
{
    struct leakgate_track_result r;
    struct leakgate_diff *d = NULL;
    uint64_t *ords = NULL;
    size_t n = 0;
    int rc, grc;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks_log(), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    ordinal_work();
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    rc = leakgate_track__left_ordinals(&ords, &n);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(r.live_objs, 2);
    CU_ASSERT_EQUAL_FATAL(n, 2);
    CU_ASSERT_EQUAL(ords[0], 1);
    CU_ASSERT_EQUAL(ords[1], 4);
    /* A logging window records no stack. */
    CU_ASSERT_EQUAL(leakgate_diff__of_track_left(&d), LEAKGATE_ENOTFOUND);
    leakgate_diff__free(d);
    d = NULL;
    free(kept[0]);
    free(kept[1]);

    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks_select(ords, n), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    ordinal_work();
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    grc = leakgate_diff__of_track_left(&d);
    CU_ASSERT_EQUAL(grc, 0);
    CU_ASSERT_EQUAL(r.live_objs, 2);
    CU_ASSERT_EQUAL(r.live_bytes, 48 + 320); /* jemalloc's classes */
    CU_ASSERT_TRUE(d && d->nentries == 2);
    leakgate_diff__free(d);
    free(kept[0]);
    free(kept[1]);
    leakgate_util__free(ords);
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
}

/* A selecting window whose run left an object it was not told of (the
 * run allocated in another order) says so: no stack for it, ENOTFOUND,
 * never a group that misses it. */
static void
test_track__ordinals_other_order_found_out(void)
{
    static const uint64_t wrong[] = {0, 2};
    struct leakgate_track_result r;
    struct leakgate_diff *d = NULL;
    int grc;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks_select(wrong, 2), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    ordinal_work();
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    grc = leakgate_diff__of_track_left(&d);
    CU_ASSERT_EQUAL(r.live_objs, 2);
    CU_ASSERT_EQUAL(grc, LEAKGATE_ENOTFOUND);
    CU_ASSERT_PTR_NULL(d);
    free(kept[0]);
    free(kept[1]);
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
}

/* Nothing left: no ordinal; and without a logging window, no answer. */
static void
test_track__ordinals_none_left(void)
{
    struct leakgate_track_result r;
    uint64_t *ords = NULL;
    size_t n = 7;
    void *p;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks_log(), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p = malloc(64);
    free(p);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(leakgate_track__left_ordinals(&ords, &n), 0);
    CU_ASSERT_EQUAL(n, 0);
    leakgate_util__free(ords);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE),
                          0);
    CU_ASSERT_EQUAL(leakgate_track__left_ordinals(&ords, &n), LEAKGATE_ESTATE);
}

const char *const unit_suite = "track";
/* The bytes the program asked for, per stack: malloc(1) keeps 8 usable
 * bytes, calloc(3, 100) 320. */
static void
test_track__requested_bytes(void)
{
    struct leakgate_track_result r;
    struct leakgate_diff *d = NULL;
    void *volatile one, *volatile three;
    uint64_t got8 = 0, got320 = 0;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks(LEAKGATE_TRACK_STACKS_ALL), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    one = malloc(1);
    three = calloc(3, 100);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(leakgate_diff__of_track_left(&d), 0);
    for (size_t i = 0; d && i < d->nentries; i++) {
        CU_ASSERT_TRUE(d->entries[i].requested_known);
        if (d->entries[i].delta_bytes == 8)
            got8 = (uint64_t)d->entries[i].delta_requested;
        if (d->entries[i].delta_bytes == 320)
            got320 = (uint64_t)d->entries[i].delta_requested;
    }
    CU_ASSERT_EQUAL(got8, 1);
    CU_ASSERT_EQUAL(got320, 300);
    leakgate_diff__free(d);
    free(one);
    free(three);
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
}

/* An object slot keeps 16 bits of its window's generation: 65,536
 * windows later a slot left from then must not look current.  An object
 * of that window at the same address, allocated without a stack, is an
 * object without a stack (ENOTFOUND), never the old one's stack. */
static void
test_track__generations_wrap(void)
{
    struct leakgate_track_result r;
    struct leakgate_diff *d = NULL;
    void *p, *q;
    int rc;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks(LEAKGATE_TRACK_STACKS_ALL), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p = malloc(40);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    /* 65,535 generations, and the 65,536th: the same low 16 bits. */
    for (unsigned i = 0; i < 65535; i++)
        (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
    free(p); /* its slot stays, of an old generation */
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks(LEAKGATE_TRACK_STACKS_RUNTIME),
                          0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    q = malloc(40); /* the program's own: no stack in this mode */
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_PTR_EQUAL(q, p); /* jemalloc hands the address out again */
    CU_ASSERT_EQUAL(r.live_objs, 1);
    rc = leakgate_diff__of_track_left(&d);
    CU_ASSERT_EQUAL(rc, LEAKGATE_ENOTFOUND);
    CU_ASSERT_PTR_NULL(d);
    leakgate_diff__free(d);
    free(q);
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
}

/* A watch among many frees (track_watch.h). */
static void
test_track__watch_among_frees(void)
{
    must_install();
    track_watch_among_frees();
}

/* The orphans' table (track.h): what is noted and not freed is taken,
 * once, with its owner and sizes; what is freed is not, and a thread that
 * notes and frees far more objects than the table holds never fills it
 * (removal leaves no tombstone). */
struct orphans_seen {
    size_t n;
    uint64_t bytes;
    uint32_t owners; /* bit per owner 1..31 */
    bool bad;        /* an address that was freed */
    bool have_stack; /* every one has its stack */
};

static int
orphan_seen(const struct leakgate_track_orphan *o, void *payload)
{
    struct orphans_seen *seen = payload;

    seen->n++;
    seen->bytes += o->bytes;
    seen->owners |= 1u << o->owner;
    seen->have_stack &= o->pcs != NULL && o->npcs > 0;
    /* Kept: odd multiples of 16 above 0x100000 (see below). */
    seen->bad |= o->pcs == NULL || ((o->bytes & 1) == 0);
    return 0;
}

/* Take the orphans, seen one by one. */
static int
take_seen(struct orphans_seen *seen, uint64_t *lost, uint32_t *lost_owner)
{
    struct leakgate_track_orphan *o;
    size_t n;
    int rc = leakgate_track__orphans_take(&o, &n, lost, lost_owner);

    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = orphan_seen(&o[i], seen);
    leakgate_util__free(o);
    return rc;
}

static void
test_track__orphans_noted_freed_taken(void)
{
    struct orphans_seen seen = {0, 0, 0, false, true};
    uint64_t lost = 1;
    uint32_t lost_owner = 1;
    const uintptr_t base = 0x100000;

    /* 600,000 notes in all, at most 1,000 live at once: far more than the
     * table's 131,072 slots; the odd ones of the last round stay. */
    for (uintptr_t round = 0; round < 600; round++) {
        for (uintptr_t k = 0; k < 1000; k++)
            leakgate_track__orphan_note(base + (round * 1000 + k) * 16,
                                        (uint32_t)(1 + k % 3),
                                        (size_t)(2 * k + 1), 3);
        for (uintptr_t k = 0; k < 1000; k++) {
            if (round < 599 || k % 2 == 0)
                leakgate_track__orphan_free(base + (round * 1000 + k) * 16);
        }
    }
    /* A free of what was never noted changes nothing. */
    leakgate_track__orphan_free(0x42420);
    CU_ASSERT_EQUAL(atomic_load(&leakgate_track__orphans_live), 500);
    CU_ASSERT_EQUAL(take_seen(&seen, &lost, &lost_owner), 0);
    CU_ASSERT_EQUAL(seen.n, 500);
    CU_ASSERT_EQUAL(lost, 0);
    CU_ASSERT_EQUAL(seen.owners, 0xeu); /* owners 1, 2 and 3 */
    CU_ASSERT_FALSE(seen.bad);
    CU_ASSERT_TRUE(seen.have_stack);
    /* Taken once: the table is empty now. */
    memset(&seen, 0, sizeof seen);
    CU_ASSERT_EQUAL(take_seen(&seen, &lost, &lost_owner), 0);
    CU_ASSERT_EQUAL(seen.n, 0);
    CU_ASSERT_EQUAL(atomic_load(&leakgate_track__orphans_live), 0);
}

/* What a diverted thread allocates (heap.h), and all the symbolizer's
 * libdw allocates while it loads and reads a module's line tables, is
 * leakgate's heap's: a window sees none of it, and a later free of it
 * from an undiverted thread finds its way back. */
static void
test_track__diverted_not_the_programs(void)
{
    struct leakgate_track_result r;
    struct leakgate_symbolizer *sym = NULL;
    struct leakgate_frame *frames = NULL;
    size_t nframes = 0;
    /* a return address inside this function */
    uintptr_t pc = (uintptr_t)&test_track__diverted_not_the_programs + 16;
    void *own[4], *plain;
    bool named;
    int rc;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    leakgate_heap__divert(true);
    own[0] = malloc(24);
    own[1] = calloc(3, 8);
    own[2] = realloc(NULL, 40);
    own[3] = strdup("diverted");
    leakgate_heap__divert(false);
    rc = leakgate_symbolize__new_self(&sym);
    if (rc == 0)
        rc = leakgate_symbolize__frames(sym, &frames, &nframes, &pc, 1);
    named = nframes >= 1 && frames[0].function &&
            strcmp(frames[0].function,
                   "test_track__diverted_not_the_programs") == 0;
    leakgate_symbolize__free(sym); /* its frames' strings too */
    plain = malloc(24);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_TRUE(named);
    CU_ASSERT_EQUAL(r.allocs, 1); /* plain's alone */
    CU_ASSERT_EQUAL(r.live_objs, 1);
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        CU_ASSERT_TRUE(own[i] && leakgate_heap__owns(own[i]));
        free(own[i]);
    }
    CU_ASSERT_FALSE(leakgate_heap__owns(plain));
    free(plain);
    leakgate_util__free(frames);
}

/* What the heap's classes cannot hold (over 1 MiB) a diverted thread
 * gets from the program's heap, as without the diversion, whether asked
 * for or grown to by realloc(): the library frees it with free(), so it
 * is never one of the heap's large objects, whose list stays exact. */
static void
test_track__diverted_large_the_programs(void)
{
    const void *list[LEAKGATE_HEAP_LARGE_MAX];
    size_t before, after;
    bool known_before, known_after;
    void *big, *grown;

    must_install();
    before =
        leakgate_heap__large_list(list, LEAKGATE_HEAP_LARGE_MAX, &known_before);
    leakgate_heap__divert(true);
    big = malloc((size_t)2 << 20);
    grown = malloc(64);
    CU_ASSERT_TRUE(grown && leakgate_heap__owns(grown));
    if (grown)
        memset(grown, 0x5a, 64);
    grown = realloc(grown, (size_t)3 << 20);
    leakgate_heap__divert(false);
    CU_ASSERT_TRUE(big && !leakgate_heap__owns(big));
    CU_ASSERT_TRUE(grown && !leakgate_heap__owns(grown));
    CU_ASSERT_TRUE(grown && ((unsigned char *)grown)[63] == 0x5a);
    free(big);
    free(grown);
    after =
        leakgate_heap__large_list(list, LEAKGATE_HEAP_LARGE_MAX, &known_after);
    CU_ASSERT_EQUAL(after, before);
    CU_ASSERT_EQUAL(known_after, known_before);
}

const struct unit_case unit_cases[] = {
    {"diverted_not_the_programs", test_track__diverted_not_the_programs},
    {"diverted_large_the_programs", test_track__diverted_large_the_programs},
    {"orphans_noted_freed_taken", test_track__orphans_noted_freed_taken},
    {"watch_among_frees", test_track__watch_among_frees},
    {"requested_bytes", test_track__requested_bytes},
    {"generations_wrap", test_track__generations_wrap},
    {"install_twice", test_track__install_twice},
    {"out_of_order_calls", test_track__out_of_order_calls},
    {"all_functions_freed", test_track__all_functions_freed},
    {"one_byte_leak", test_track__one_byte_leak},
    {"calloc_and_memalign_leaks", test_track__calloc_and_memalign_leaks},
    {"jemalloc_api_and_old_aligned", test_track__jemalloc_api_and_old_aligned},
    {"pvalloc_and_friends", test_track__pvalloc_and_friends},
    {"runtime_stacks_only_named", test_track__runtime_stacks_only_named},
    {"note_dropped_at_free", test_track__note_dropped_at_free},
    {"older_frees_ignored", test_track__older_frees_ignored},
    {"older_object_resized", test_track__older_object_resized},
    {"leaf_of_an_earlier_window", test_track__leaf_of_an_earlier_window},
    {"resize_in_window", test_track__resize_in_window},
    {"churn_without_false_positive", test_track__churn_without_false_positive},
    {"threads", test_track__threads},
    {"threads_exact", test_track__threads_exact},
    {"forget", test_track__forget},
    {"meter", test_track__meter},
    {"meter_threads", test_track__meter_threads},
    {"meter_other_thread", test_track__meter_other_thread},
    {"ordinals_select_what_was_left",
     test_track__ordinals_select_what_was_left},
    {"ordinals_other_order_found_out",
     test_track__ordinals_other_order_found_out},
    {"ordinals_none_left", test_track__ordinals_none_left},
    {NULL, NULL}};
