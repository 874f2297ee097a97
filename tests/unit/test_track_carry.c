/* SPDX-License-Identifier: MIT */
/*
 * The tracker's carried stacks (track.h, "Carry"): --exact measured on
 * leakgate's own records.  A window that frees an object an earlier window
 * left, on the stack it allocates again, grew by nothing, as an exact
 * window's profile says; one that only frees shrinks that stack.  Its own
 * process: carrying is for the rest of it.
 */
#include "track.h"

#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "diff.h"
#include "error.h"
#include "unit.h"
#include "util.h"

/* One allocation site: every object of these tests has its stack. */
static __attribute__((noinline)) void *
at_site(size_t n)
{
    void *p = malloc(n);

    __asm__ volatile("" : : "r"(p) : "memory"); /* no tail call */
    return p;
}

static void
open_window(void)
{
    CU_ASSERT_EQUAL_FATAL(leakgate_track__stacks(LEAKGATE_TRACK_STACKS_ALL), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
}

/* Close the window; its diff (NULL: none). */
static struct leakgate_diff *
close_window(void)
{
    struct leakgate_track_result r;
    struct leakgate_diff *d = NULL;

    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(leakgate_diff__of_track_left(&d), 0);
    return d;
}

static void
must_carry(void)
{
    CU_ASSERT_EQUAL_FATAL(leakgate_track__install(), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_track__carry(), 0);
}

/* The objects the windows of a test keep, by slot. */
static void *slot[4];

/* One window's work, from one call site (a stack is its call sites): free
 * slot[free_at] (-1: none), then allocate n bytes into slots[from, to). */
struct ops {
    int free_at;
    int from, to;
    size_t n;
};

static __attribute__((noinline)) void
run_ops(const struct ops *o)
{
    if (o->free_at >= 0) {
        free(slot[o->free_at]);
        slot[o->free_at] = NULL;
    }
    for (int i = o->from; i < o->to; i++)
        slot[i] = at_site(o->n);
}

/* Run the n windows of w, each ops from the same call site; d[k] is the
 * k-th window's diff. */
static void
run_windows(const struct ops *w, size_t n, struct leakgate_diff **d)
{
    for (size_t k = 0; k < n; k++) {
        open_window();
        run_ops(&w[k]);
        d[k] = close_window();
        CU_ASSERT_PTR_NOT_NULL_FATAL(d[k]);
    }
}

static void
free_all(struct leakgate_diff **d, size_t n)
{
    for (size_t k = 0; k < n; k++)
        leakgate_diff__free(d[k]);
    for (size_t i = 0; i < 4; i++) {
        free(slot[i]);
        slot[i] = NULL;
    }
}

/* A cache replaced: the second window frees the first one's object and
 * allocates another at the same stack.  Not carried, the second window
 * would show it as grown (test_track's older_frees_ignored). */
static void
test_track_carry__replaced_object_nets_out(void)
{
    const struct ops w[] = {{-1, 0, 1, 40}, {0, 1, 2, 40}};
    struct leakgate_diff *d[2];

    must_carry();
    run_windows(w, 2, d);
    CU_ASSERT_EQUAL(d[0]->nentries, 1);
    if (d[0]->nentries == 1) {
        CU_ASSERT_EQUAL(d[0]->entries[0].delta_objs, 1);
        CU_ASSERT_EQUAL(d[0]->entries[0].delta_bytes, 48);
        CU_ASSERT_TRUE(d[0]->entries[0].requested_known);
    }
    CU_ASSERT_EQUAL(d[1]->nentries, 0); /* a diff lists changes */
    free_all(d, 2);
}

/* A window that only frees what an earlier one left: that stack shrank;
 * one that frees one and leaves two grew by one, and what it left on
 * that stack is not named (not the whole change). */
static void
test_track_carry__freed_alone_shrinks_its_stack(void)
{
    const struct ops w[] = {{-1, 0, 2, 100}, {0, 0, 0, 100}, {1, 2, 4, 100}};
    struct leakgate_diff *d[3];

    must_carry();
    run_windows(w, 3, d);
    CU_ASSERT_EQUAL(d[1]->nentries, 1);
    if (d[1]->nentries == 1) {
        CU_ASSERT_EQUAL(d[1]->entries[0].delta_objs, -1);
        CU_ASSERT_EQUAL(d[1]->entries[0].delta_bytes, -112);
        CU_ASSERT_FALSE(d[1]->entries[0].requested_known);
        CU_ASSERT_FALSE(d[1]->entries[0].reach.known);
    }
    CU_ASSERT_EQUAL(d[2]->nentries, 1);
    if (d[2]->nentries == 1) {
        CU_ASSERT_EQUAL(d[2]->entries[0].delta_objs, 1);
        CU_ASSERT_EQUAL(d[2]->entries[0].delta_bytes, 112);
        CU_ASSERT_FALSE(d[2]->entries[0].requested_known);
    }
    free_all(d, 3);
}

/* Freed between windows: no window's profile sees it go. */
static void
test_track_carry__free_between_windows_counts_nowhere(void)
{
    const struct ops w[] = {{-1, 0, 1, 24}, {-1, 1, 2, 24}};
    struct leakgate_diff *d[2];

    must_carry();
    run_windows(w, 1, d);
    free(slot[0]);
    slot[0] = NULL;
    run_windows(&w[1], 1, &d[1]);
    CU_ASSERT_EQUAL(d[1]->nentries, 1);
    if (d[1]->nentries == 1)
        CU_ASSERT_EQUAL(d[1]->entries[0].delta_objs, 1);
    free_all(d, 2);
}

/* 2^13 distinct stacks: a path of left and right calls per bit. */
static void *step(unsigned bits, int depth);

static __attribute__((noinline)) void *
go_left(unsigned bits, int depth)
{
    void *p = step(bits, depth);

    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

static __attribute__((noinline)) void *
go_right(unsigned bits, int depth)
{
    void *p = step(bits, depth);

    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

static __attribute__((noinline)) void *
step(unsigned bits, int depth)
{
    void *p;

    if (depth == 0)
        p = malloc(8);
    else if (bits & 1)
        p = go_left(bits >> 1, depth - 1);
    else
        p = go_right(bits >> 1, depth - 1);
    __asm__ volatile("" : : "r"(p) : "memory");
    return p;
}

/* The table of stacks fills with windows' stacks whose objects are gone:
 * compacted, it keeps the stack of an object still carried, which a
 * later window's free counts against. */
static void
test_track_carry__compaction_keeps_live_stacks(void)
{
    const struct ops w[] = {{-1, 0, 1, 200}, {0, 0, 0, 200}};
    struct leakgate_diff *d[2];
    uintptr_t *pcs;
    size_t npcs;

    must_carry();
    run_windows(w, 1, d);
    CU_ASSERT_EQUAL_FATAL(d[0]->nentries, 1);
    npcs = d[0]->entries[0].npcs;
    pcs = d[0]->entries[0].pcs;
    d[0]->entries[0].pcs = NULL; /* kept to compare */

    open_window();
    for (unsigned bits = 0; bits < 1u << 13; bits++)
        free(step(bits, 13));
    leakgate_diff__free(close_window());

    run_windows(&w[1], 1, &d[1]); /* compacts first */
    CU_ASSERT_EQUAL(d[1]->nentries, 1);
    if (d[1]->nentries == 1) {
        CU_ASSERT_EQUAL(d[1]->entries[0].delta_objs, -1);
        CU_ASSERT_TRUE(leakgate_diff__same_pcs(
            d[1]->entries[0].pcs, d[1]->entries[0].npcs, pcs, npcs));
    }
    free_all(d, 2);
    leakgate_util__free(pcs);
}

/* One window with more distinct stacks than the carried table's first
 * size holds (2^14 paths, freed at once): the table is compacted to the
 * stacks still needed, or grown, and the object the window keeps has its
 * stack.  Without room made, its stack would not fit: ENOTFOUND. */
static void
test_track_carry__full_table_makes_room(void)
{
    const struct ops w[] = {{-1, 0, 1, 40}};
    struct leakgate_diff *d;

    must_carry();
    open_window();
    for (unsigned bits = 0; bits < 1u << 14; bits++)
        free(step(bits, 14));
    run_ops(&w[0]);
    d = close_window();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_EQUAL(d->nentries, 1);
    leakgate_diff__free(d);
    free_all(NULL, 0);
}

/* A realloc of an earlier window's object that fails: the object lives
 * on, its free was not one, and the window's leak on its stack shows. */
static void
test_track_carry__failed_realloc_frees_nothing(void)
{
    const struct ops w[] = {{-1, 0, 1, 56}, {-1, 1, 2, 56}};
    struct leakgate_diff *d[2];
    void *volatile huge;

    must_carry();
    run_windows(w, 1, d);
    open_window();
    huge = realloc(slot[0], (size_t)1 << 62);
    CU_ASSERT_PTR_NULL(huge);
    run_ops(&w[1]);
    d[1] = close_window();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d[1]);
    CU_ASSERT_EQUAL(d[1]->nentries, 1);
    if (d[1]->nentries == 1)
        CU_ASSERT_EQUAL(d[1]->entries[0].delta_objs, 1);
    free_all(d, 2);
}

/* An earlier window's object grown in place (xallocx): its stack shrinks
 * by its size before, not after. */
static void
test_track_carry__resized_in_place_counts_its_old_size(void)
{
    const struct ops w[] = {{-1, 0, 1, 20480}};
    struct leakgate_diff *d[2];
    size_t before, after;

    must_carry();
    run_windows(w, 1, d);
    before = sallocx(slot[0], 0);
    open_window();
    after = xallocx(slot[0], 65536, 0, 0);
    d[1] = close_window();
    CU_ASSERT_PTR_NOT_NULL_FATAL(d[1]);
    for (size_t i = 0; after != before && i < d[1]->nentries; i++)
        if (d[1]->entries[i].delta_objs < 0)
            CU_ASSERT_EQUAL(d[1]->entries[i].delta_bytes, -(int64_t)before);
    free_all(d, 2);
}

/* 65,535 windows later a window has an old window's number: what that
 * window freed must not count in it. */
static void
test_track_carry__window_numbers_wrap(void)
{
    const struct ops w[] = {{-1, 0, 1, 72}, {0, 0, 0, 72}, {-1, 1, 2, 72}};
    struct leakgate_diff *d[3];

    must_carry();
    for (size_t k = 0; k < 3; k++) { /* one call site: one stack */
        if (k == 2) /* the third window gets the second's number again */
            for (unsigned i = 0; i < 65534; i++)
                CU_ASSERT_EQUAL_FATAL(
                    leakgate_track__stacks(LEAKGATE_TRACK_STACKS_ALL), 0);
        open_window();
        run_ops(&w[k]);
        d[k] = close_window();
        CU_ASSERT_PTR_NOT_NULL_FATAL(d[k]);
    }
    CU_ASSERT_EQUAL(d[2]->nentries, 1);
    if (d[2]->nentries == 1)
        CU_ASSERT_EQUAL(d[2]->entries[0].delta_objs, 1);
    free_all(d, 3);
}

const char *const unit_suite = "track_carry";
const struct unit_case unit_cases[] = {
    /* First: a compaction (a later case fills the table) would move the
     * counts it checks out of sight. */
    {"window_numbers_wrap", test_track_carry__window_numbers_wrap},
    {"replaced_object_nets_out", test_track_carry__replaced_object_nets_out},
    {"freed_alone_shrinks_its_stack",
     test_track_carry__freed_alone_shrinks_its_stack},
    {"free_between_windows_counts_nowhere",
     test_track_carry__free_between_windows_counts_nowhere},
    {"compaction_keeps_live_stacks",
     test_track_carry__compaction_keeps_live_stacks},
    {"full_table_makes_room", test_track_carry__full_table_makes_room},
    {"failed_realloc_frees_nothing",
     test_track_carry__failed_realloc_frees_nothing},
    {"resized_in_place_counts_its_old_size",
     test_track_carry__resized_in_place_counts_its_old_size},
    {NULL, NULL},
};
