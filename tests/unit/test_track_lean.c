/* SPDX-License-Identifier: MIT */
/*
 * track in a lean process (linked with libleakgate-lean.a: the C library's
 * malloc under leakgate's wrappers, no jemalloc), where a window's bit of
 * an object is the mark in its class byte (jesize.h): every allocation
 * function marks, every free unmarks, the marks a window left are counted,
 * visited and cleared before the next window, the wrappers' lane
 * (track_hot.h) keeps the same books, and several threads at once.  No
 * CUnit assertion runs inside a window (its failure record would be
 * allocated there).
 */
#include "track.h"
#include "track_hot.h"

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "jesize.h"
#include "track_every.h"
#include "track_watch.h"
#include "unit.h"
#include "util.h"

static void
must_install(void)
{
    CU_ASSERT_EQUAL_FATAL(leakgate_track__install(), 0);
    CU_ASSERT_TRUE_FATAL(leakgate_jesize__lean());
}

/* The class byte of the live object p, as the wrappers left it. */
static unsigned char
class_byte(const void *p)
{
    const unsigned char *b = leakgate_jesize__byte((uintptr_t)p, false);

    return b ? *b : 0;
}

/* The marks of the objects (all must be set). */
static void
look_marked(void *const *objs, size_t n, void *payload)
{
    bool *all = payload;

    for (size_t i = 0; i < n; i++)
        *all = *all && (class_byte(objs[i]) & LEAKGATE_JESIZE__MARK);
}

/* Every allocation function, every object freed again: nothing left, no
 * mark left. */
static void
test_track_lean__all_functions_freed(void)
{
    struct leakgate_track_result r;
    void *last = NULL;
    bool all_marked = true;
    int rc;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    rc = track_every_function(look_marked, &all_marked, &last);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    free(last);
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT_EQUAL(r.live_objs, 0);
    CU_ASSERT_EQUAL(r.frees, r.allocs);
    CU_ASSERT_TRUE(all_marked);
}

static int
visit(const void *ptr, size_t usable, void *payload)
{
    const void **seen = payload;

    if (ptr == seen[0] && usable == 112)
        seen[1] = ptr;
    return 0;
}

/* A leak is counted and visited with jemalloc's size; its mark is cleared
 * before the next window, so that freeing it there is an older object's
 * free (not a clear of the new window's). */
static void
test_track_lean__leak_then_older_free(void)
{
    struct leakgate_track_result r1, r2;
    void *volatile p;
    const void *seen[2] = {NULL, NULL};
    unsigned char after_end, after_begin;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    p = malloc(100);
    CU_ASSERT_EQUAL(leakgate_track__end(&r1), 0);
    seen[0] = p;
    CU_ASSERT_EQUAL(leakgate_track__each(visit, seen), 0);
    after_end = class_byte(p);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    after_begin = class_byte(p);
    free(p);
    CU_ASSERT_EQUAL(leakgate_track__end(&r2), 0);
    CU_ASSERT_EQUAL(r1.live_objs, 1);
    CU_ASSERT_EQUAL(r1.live_bytes, 112);
    CU_ASSERT_PTR_EQUAL(seen[1], p);
    CU_ASSERT_TRUE(after_end & LEAKGATE_JESIZE__MARK);
    CU_ASSERT_EQUAL(after_begin, leakgate_jesize__encode(112));
    CU_ASSERT_EQUAL(r2.frees, 0);
    CU_ASSERT_EQUAL(r2.live_objs, 0);
}

/* The lane (a window with the meter on, one thread): thousands of objects
 * kept and freed, one leaked; the same books as the general path, the
 * meter's peak and level included, and the lane in use. */
static void
test_track_lean__lane_books(void)
{
    enum { N = 4000 };
    static void *kept[N];
    struct leakgate_track_result r;
    struct leakgate_track_meter m;
    void *volatile leak;
    unsigned int lane, mine;

    must_install();
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    leakgate_track__meter_start(NULL);
    for (int i = 0; i < N; i++)
        kept[i] = malloc(24); /* 32 B each in jemalloc's classes */
    for (int i = 0; i < N; i++)
        kept[i] = realloc(kept[i], 40); /* 48 B */
    leak = malloc(1);
    for (int i = 0; i < N; i++)
        free(kept[i]);
    lane = atomic_load(&leakgate_track__lane);
    mine = leakgate_track__lane_here.gen;
    leakgate_track__meter_stop(&m);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_NOT_EQUAL(lane, 0);
    CU_ASSERT_EQUAL(mine, lane);
    CU_ASSERT_EQUAL(r.live_objs, 1);
    CU_ASSERT_EQUAL(r.live_bytes, 8);
    CU_ASSERT_EQUAL(r.allocs, 2 * N + 1);
    CU_ASSERT_EQUAL(r.frees, 2 * N);
    CU_ASSERT_EQUAL(m.live, 8);
    CU_ASSERT_EQUAL(m.peak, (uint64_t)N * 48 + 8);
    free(leak);
}

#define THREADS 4
#define KEPT 3

struct work {
    void *kept[KEPT];
};

static void *
churn(void *arg)
{
    struct work *w = arg;

    for (int i = 0; i < 20000; i++) {
        void *volatile p = malloc((size_t)(i % 200) + 1);

        free(p);
    }
    for (int k = 0; k < KEPT; k++)
        w->kept[k] = malloc(64);
    return NULL;
}

/* Threads mark and unmark their own objects at once (atomic byte
 * operations): each one's kept objects are counted, nothing else. */
static void
test_track_lean__threads(void)
{
    struct leakgate_track_result r;
    pthread_t t[THREADS];
    struct work w[THREADS];
    int started = 0;

    must_install();
    memset(w, 0, sizeof w);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, churn, &w[i]) == 0)
            started++;
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL_FATAL(started, THREADS);
    /* The threads' descriptors (glibc's DTV, kept with their cached
     * stacks) may be left too: at least the kept objects. */
    CU_ASSERT_TRUE(r.live_objs >= THREADS * KEPT);
    for (int i = 0; i < THREADS; i++)
        for (int k = 0; k < KEPT; k++) {
            CU_ASSERT_TRUE(class_byte(w[i].kept[k]) & LEAKGATE_JESIZE__MARK);
            free(w[i].kept[k]);
        }
}

const char *const unit_suite = "track_lean";
/* A watch among many frees (track_watch.h): the lane's frees (small
 * objects, one thread) leave a watched object to the general path. */
static void
test_track_lean__watch_among_frees(void)
{
    must_install();
    track_watch_among_frees();
}

/* The same work three times, as a replay's logging copy and selecting
 * run do it, then in a window that wants every stack: 6 allocations, the
 * 2nd and the 5th kept. */
static void *volatile okept[2];

static __attribute__((noinline)) void
ordinal_work(void)
{
    void *a = malloc(24), *c, *e;

    okept[0] = malloc(40); /* ordinal 1 */
    c = calloc(1, 100);
    free(a);
    a = malloc(8);
    okept[1] = realloc(c, 300); /* ordinal 4 (the resize) */
    e = malloc(16);
    free(a);
    free(e);
}

/* One metered window of ordinal_work() (in the lane: *lane_out is the
 * lane's number then, 0 when shut); its stacks in *d (NULL: none). */
static void
ordinal_window(struct leakgate_diff **d, unsigned int *lane_out)
{
    struct leakgate_track_result r;
    struct leakgate_track_meter m;

    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    leakgate_track__meter_start(NULL);
    ordinal_work();
    *lane_out = atomic_load(&leakgate_track__lane);
    leakgate_track__meter_stop(&m);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 2);
    *d = NULL;
    (void)leakgate_diff__of_track_left(d);
}

/* Logging and selecting windows take the lane (track_hot.h): the same
 * ordinals, and the same stacks as a window that wants every stack (off
 * the lane) records.  One call site for the three windows: their stacks
 * compare whole. */
static void
test_track_lean__ordinals_in_the_lane(void)
{
    struct leakgate_diff *d[3] = {NULL, NULL, NULL};
    unsigned int lane[3];
    uint64_t *ords = NULL;
    size_t n = 0;

    must_install();
    for (int round = 0; round < 3; round++) {
        if (round == 0) {
            CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks_log(), 0);
        } else if (round == 1) {
            CU_ASSERT_EQUAL_FATAL(leakgate_track__left_ordinals(&ords, &n), 0);
            CU_ASSERT_EQUAL_FATAL(n, 2);
            CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks_select(ords, n), 0);
        } else {
            CU_ASSERT_EQUAL_FATAL(
                leakgate_track__stacks(LEAKGATE_TRACK_STACKS_ALL), 0);
        }
        ordinal_window(&d[round], &lane[round]);
        free(okept[0]);
        free(okept[1]);
    }
    CU_ASSERT_NOT_EQUAL(lane[0], 0); /* logging: in the lane */
    CU_ASSERT_PTR_NULL(d[0]);        /* and no stack */
    CU_ASSERT_EQUAL(ords[0], 1);
    CU_ASSERT_EQUAL(ords[1], 4);
    CU_ASSERT_NOT_EQUAL(lane[1], 0); /* selecting: in the lane */
    CU_ASSERT_EQUAL(lane[2], 0);     /* every stack: off the lane */
    CU_ASSERT_TRUE_FATAL(d[1] && d[2] && d[1]->nentries == 2 &&
                         d[2]->nentries == 2);
    for (size_t i = 0; i < 2; i++) {
        const struct leakgate_diff_entry *x = &d[1]->entries[i];
        const struct leakgate_diff_entry *y = &d[2]->entries[i];

        CU_ASSERT_EQUAL(x->delta_bytes, y->delta_bytes);
        CU_ASSERT_EQUAL(x->delta_requested, y->delta_requested);
        CU_ASSERT_EQUAL_FATAL(x->npcs, y->npcs);
        CU_ASSERT_TRUE(x->npcs > 0 &&
                       memcmp(x->pcs, y->pcs, x->npcs * sizeof *x->pcs) == 0);
    }
    for (int round = 0; round < 3; round++)
        leakgate_diff__free(d[round]);
    leakgate_util__free(ords);
    (void)leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE);
}

const struct unit_case unit_cases[] = {
    {"ordinals_in_the_lane", test_track_lean__ordinals_in_the_lane},
    {"watch_among_frees", test_track_lean__watch_among_frees},
    {"all_functions_freed", test_track_lean__all_functions_freed},
    {"leak_then_older_free", test_track_lean__leak_then_older_free},
    {"lane_books", test_track_lean__lane_books},
    {"threads", test_track_lean__threads},
    {NULL, NULL}};
