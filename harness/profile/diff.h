/* SPDX-License-Identifier: MIT */
/*
 * diff: exact per-stack growth between two parsed heaps.  Core stage 2:
 * works on in-memory data only.
 *
 * A stack's key is its pcs with the leading allocator frames removed
 * (frames whose address lies in one of `strip` ranges, i.e. the mapping of
 * jemalloc).  Stacks whose first remaining frame lies in an `exclude` range
 * (the test framework's own bookkeeping, e.g. CUnit's failure records) are
 * not entries: their bytes are added to excluded_bytes instead.
 *
 * Retained = after - before, per key, in bytes and objects.  Negative
 * growth (freeing older memory) is kept as an entry with negative deltas.
 * Keys whose deltas are both zero are dropped.
 */
#ifndef LEAKGATE_DIFF_H
#define LEAKGATE_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heapfile.h"
#include "util.h"

struct leakgate_diff_thread {
    uint64_t tid;
    int64_t delta_objs;
    int64_t delta_bytes;
};

/* Which of a stack's objects the program can still reach (the replay's
 * scan of a window by allocation order: alloc/reach.h), when known. */
struct leakgate_reach_counts {
    bool known;
    int64_t lost_objs, lost_bytes;         /* nothing points to them */
    int64_t indirect_objs, indirect_bytes; /* only lost objects do */
    /* Of the lost and indirectly lost: those the window's scan found
     * reachable, lost by the run's end (what ran later dropped the last
     * pointer to them without freeing them). */
    int64_t later_objs, later_bytes;
    unsigned int roots; /* the rest is reachable: from these roots (and
                           the later lost were, when the window ended) */
};
/* The roots (alloc/reach.h's LEAKGATE_REACH_ROOT_BIT of its kinds). */
#define LEAKGATE_ROOT_GLOBAL 1u /* writable data of a loaded object */
#define LEAKGATE_ROOT_TLS 2u    /* thread-local storage */
#define LEAKGATE_ROOT_STACK 4u  /* a live stack frame */

/* a's counts plus b's (known when both are).  Cannot fail. */
void leakgate_reach_counts__add(struct leakgate_reach_counts *a,
                                const struct leakgate_reach_counts *b);

struct leakgate_diff_entry {
    uintptr_t *pcs; /* stripped stack, innermost first (owned) */
    size_t npcs;    /* may be 0 if every frame was an allocator frame */
    int64_t delta_objs;
    int64_t delta_bytes;
    /* The bytes the program asked for (calloc's product, realloc's new
     * size), where requested_known: the stacks the allocation wrappers
     * noted (diff_track.c).  A heap profile has only usable bytes. */
    int64_t delta_requested;
    bool requested_known;
    struct leakgate_reach_counts reach;
    struct leakgate_diff_thread *threads; /* per-thread deltas != 0 (owned) */
    size_t nthreads;
};

struct leakgate_diff {
    struct leakgate_diff_entry *entries; /* sorted: delta_bytes descending,
                                            then pcs */
    size_t nentries;
    int64_t excluded_bytes; /* growth dropped by the exclude ranges */
    int64_t excluded_objs;
};

struct leakgate_diff_opts {
    const struct leakgate_range *strip; /* allocator mappings */
    size_t nstrip;
    const struct leakgate_range *exclude; /* framework bookkeeping */
    size_t nexclude;
};

/*
 * Compute after - before.  opts may be NULL (no stripping, no exclusion).
 * Returns 0 or LEAKGATE_ENOMEM; *out is NULL on failure.
 */
int leakgate_diff__compute(struct leakgate_diff **out,
                           const struct leakgate_heap *before,
                           const struct leakgate_heap *after,
                           const struct leakgate_diff_opts *opts);

/*
 * Add `more` into `into` (per key; entries that cancel to zero are
 * removed), keeping the sort order.  Used to sum the pieces of a paused
 * scope.  Returns 0 or LEAKGATE_ENOMEM (into is unchanged on failure).
 */
int leakgate_diff__accumulate(struct leakgate_diff *into,
                              const struct leakgate_diff *more);

/* An empty diff.  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_diff__new_empty(struct leakgate_diff **out);

/* A new diff (*out) of the n entries whose stacks are borrowed (copied,
 * summed per stack and sorted, as leakgate_diff__accumulate() does); the
 * entries are not freed.  Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_diff__of_entries(struct leakgate_diff **out,
                              struct leakgate_diff_entry *entries,
                              size_t n);

/* Free; NULL is a no-op. */
void leakgate_diff__free(struct leakgate_diff *diff);

/*
 * The allocation stacks the tracker noted for what the last fast window
 * left (alloc/track.h, leakgate_track__left_groups()) as a diff the caller
 * owns, sorted.  Returns 0; LEAKGATE_ENOTFOUND when some object left has
 * no recorded stack; LEAKGATE_ENOMEM.
 */
/* Sort diff's entries into a diff's order (see above).  Cannot fail. */
void leakgate_diff__sort(struct leakgate_diff *diff);

/* diff_track.c: */
int leakgate_diff__of_track_left(struct leakgate_diff **out);

/*
 * An exact window's diff d, the tracker having noted every allocation's
 * stack in the same window (LEAKGATE_TRACK_STACKS_ALL): each entry that
 * grew by exactly what the tracker's stacks of it left (objects and
 * bytes) gets their requested bytes (requested_known); the others keep
 * none.  Call right after leakgate_track__end().  Returns 0 or
 * LEAKGATE_ENOMEM (d is then unchanged).
 */
int leakgate_diff__add_requested(struct leakgate_diff *d);

/*
 * leakgate_track__hold_left(owner) (`scope: suite`): watch what the last
 * fast window left, and *out is the diff of its stacks, unsorted: entry k
 * is the tracker's group k, as leakgate_track__held_each() names it.
 * Returns 0; LEAKGATE_ENOTFOUND when some object left has no recorded
 * stack (watched all the same; *out NULL); LEAKGATE_ESTATE (owner out of
 * range); LEAKGATE_ENOMEM.
 */
int leakgate_diff__of_track_hold(uint32_t owner, struct leakgate_diff **out);

/* True when two stacks have the same addresses (na and nb entries).
 * Cannot fail. */
bool leakgate_diff__same_pcs(const uintptr_t *a,
                             size_t na,
                             const uintptr_t *b,
                             size_t nb);

/* The entry of d with e's stack, or NULL.  Linear.  Cannot fail. */
const struct leakgate_diff_entry *
leakgate_diff__find(const struct leakgate_diff *d,
                    const struct leakgate_diff_entry *e);

#endif
