/* SPDX-License-Identifier: MIT */
/*
 * diff: exact per-stack growth between two parsed heaps, and the sum of
 * several diffs.  Core stage 2 (snapshot -> diff -> symbolize -> ...):
 * in-memory data only, no I/O, no globals.
 *
 * Both operations reduce to one sort-merge: every contribution (a heap
 * stack with sign -1 for "before" and +1 for "after", or an entry of a
 * diff) becomes an `item` keyed by its stripped pcs; the items are sorted
 * by key and each run of equal keys becomes one entry, unless its object
 * and byte deltas are both zero.  O(n log n) in the number of stacks.
 *
 * Invariants of a diff: keys are unique; entries are sorted by delta_bytes
 * descending, then by pcs; each entry's threads are sorted by tid and have
 * a non-zero delta.  Sums saturate at INT64_MIN/INT64_MAX instead of
 * wrapping (real dumps are far from it; parsed counts may be anything).
 *
 * A fast window's stacks come from the tracker instead: diff_track.c
 * makes a diff of its groups, above the hot path, which builds no diff.
 */
#include "diff.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

void
leakgate_reach_counts__add(struct leakgate_reach_counts *a,
                           const struct leakgate_reach_counts *b)
{
    if (!a->known || !b->known) {
        memset(a, 0, sizeof *a);
        return;
    }
    a->lost_objs += b->lost_objs;
    a->lost_bytes += b->lost_bytes;
    a->indirect_objs += b->indirect_objs;
    a->indirect_bytes += b->indirect_bytes;
    a->later_objs += b->later_objs;
    a->later_bytes += b->later_bytes;
    a->roots |= b->roots;
}

/* One contribution to a key. */
struct item {
    const uintptr_t *key; /* stripped pcs */
    size_t nkey;
    int64_t objs, bytes; /* signed */
    int64_t requested;   /* where requested_known */
    bool requested_known;
    struct leakgate_reach_counts reach;
    /* Per-thread contributions: heap lines (times sign) or diff deltas. */
    const struct leakgate_heap_thread *hthreads;
    const struct leakgate_diff_thread *dthreads;
    size_t nthreads;
    int sign;
};

/* Growable scratch array for merging the threads of one key. */
struct scratch {
    struct leakgate_diff_thread *v;
    size_t n, cap;
};

static int64_t
sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b)
        return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b)
        return INT64_MIN;
    return a + b;
}

/* sign * v, saturated to int64_t. */
static int64_t
signed_count(uint64_t v, int sign)
{
    int64_t m = v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;

    return sign < 0 ? -m : m;
}

bool
leakgate_diff__same_pcs(const uintptr_t *a,
                        size_t na,
                        const uintptr_t *b,
                        size_t nb)
{
    return leakgate_heapfile__cmp_pcs(a, na, b, nb) == 0;
}

const struct leakgate_diff_entry *
leakgate_diff__find(const struct leakgate_diff *d,
                    const struct leakgate_diff_entry *e)
{
    for (size_t i = 0; i < d->nentries; i++) {
        if (leakgate_diff__same_pcs(d->entries[i].pcs, d->entries[i].npcs,
                                    e->pcs, e->npcs))
            return &d->entries[i];
    }
    return NULL;
}

static int
cmp_items(const void *a, const void *b)
{
    const struct item *x = a, *y = b;

    return leakgate_heapfile__cmp_pcs(x->key, x->nkey, y->key, y->nkey);
}

static int
cmp_threads(const void *a, const void *b)
{
    const struct leakgate_diff_thread *x = a, *y = b;

    return (x->tid > y->tid) - (x->tid < y->tid);
}

/* delta_bytes descending, then pcs. */
static int
cmp_entries(const void *a, const void *b)
{
    const struct leakgate_diff_entry *x = a, *y = b;

    if (x->delta_bytes != y->delta_bytes)
        return x->delta_bytes > y->delta_bytes ? -1 : 1;
    return leakgate_heapfile__cmp_pcs(x->pcs, x->npcs, y->pcs, y->npcs);
}

static void
free_entries(struct leakgate_diff_entry *e, size_t n)
{
    for (size_t i = 0; e && i < n; i++) {
        leakgate_util__free(e[i].pcs);
        leakgate_util__free(e[i].threads);
    }
    leakgate_util__free(e);
}

static int
scratch_push(struct scratch *s, uint64_t tid, int64_t objs, int64_t bytes)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 16;
        void *v = leakgate_util__realloc(s->v, cap * sizeof *s->v);

        if (!v)
            return LEAKGATE_ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n].tid = tid;
    s->v[s->n].delta_objs = objs;
    s->v[s->n].delta_bytes = bytes;
    s->n++;
    return 0;
}

/* Gather the thread contributions of items[0..n) into s. */
static int
gather_threads(struct scratch *s, const struct item *items, size_t n)
{
    int err = 0;

    s->n = 0;
    for (size_t i = 0; i < n && !err; i++) {
        const struct item *it = &items[i];

        for (size_t t = 0; t < it->nthreads && !err; t++) {
            if (it->hthreads) {
                const struct leakgate_heap_thread *h = &it->hthreads[t];

                err = scratch_push(s, h->tid,
                                   signed_count(h->live_objs, it->sign),
                                   signed_count(h->live_bytes, it->sign));
            } else {
                const struct leakgate_diff_thread *d = &it->dthreads[t];

                err = scratch_push(s, d->tid, d->delta_objs, d->delta_bytes);
            }
        }
    }
    return err;
}

/* Sum s per tid, drop zeros, and give e its own copy. */
static int
take_threads(struct leakgate_diff_entry *e, struct scratch *s)
{
    size_t k = 0;

    if (s->n == 0)
        return 0;
    qsort(s->v, s->n, sizeof *s->v, cmp_threads);
    for (size_t i = 0; i < s->n;) {
        struct leakgate_diff_thread sum = s->v[i];

        for (i++; i < s->n && s->v[i].tid == sum.tid; i++) {
            sum.delta_objs = sat_add(sum.delta_objs, s->v[i].delta_objs);
            sum.delta_bytes = sat_add(sum.delta_bytes, s->v[i].delta_bytes);
        }
        if (sum.delta_objs || sum.delta_bytes)
            s->v[k++] = sum; /* k < i: writes behind the reader */
    }
    if (k == 0)
        return 0;
    e->threads = leakgate_util__malloc(k * sizeof *e->threads);
    if (!e->threads)
        return LEAKGATE_ENOMEM;
    memcpy(e->threads, s->v, k * sizeof *e->threads);
    e->nthreads = k;
    return 0;
}

/* Give e its own copy of the key and the per-thread sums of the n items
 * of one key. */
static int
fill_entry(struct leakgate_diff_entry *e,
           const struct item *items,
           size_t n,
           struct scratch *s)
{
    int err;

    if (items->nkey) {
        e->pcs = leakgate_util__malloc(items->nkey * sizeof *e->pcs);
        if (!e->pcs)
            return LEAKGATE_ENOMEM;
        memcpy(e->pcs, items->key, items->nkey * sizeof *e->pcs);
    }
    e->npcs = items->nkey;
    err = gather_threads(s, items, n);
    return err ? err : take_threads(e, s);
}

/* End of the run of items equal to items[i]; *objs, *bytes its sums. */
static size_t
group(
    const struct item *items, size_t i, size_t n, int64_t *objs, int64_t *bytes)
{
    size_t j = i;

    *objs = *bytes = 0;
    for (; j < n && cmp_items(&items[i], &items[j]) == 0; j++) {
        *objs = sat_add(*objs, items[j].objs);
        *bytes = sat_add(*bytes, items[j].bytes);
    }
    return j;
}

/* Turn sorted items into sorted entries (all-zero keys dropped). */
static int
build_entries(struct leakgate_diff_entry **out,
              size_t *nout,
              const struct item *items,
              size_t n)
{
    struct leakgate_diff_entry *e = NULL;
    struct scratch s = {NULL, 0, 0};
    size_t count = 0, k = 0;
    int64_t objs, bytes;
    int err = 0;

    for (size_t i = 0, j; i < n; i = j) {
        j = group(items, i, n, &objs, &bytes);
        count += objs || bytes;
    }
    e = leakgate_util__calloc(count, sizeof *e);
    if (!e) {
        err = LEAKGATE_ENOMEM;
        goto cleanup;
    }
    for (size_t i = 0, j; i < n && !err; i = j) {
        j = group(items, i, n, &objs, &bytes);
        if (!objs && !bytes)
            continue;
        e[k].delta_objs = objs;
        e[k].delta_bytes = bytes;
        e[k].requested_known = true;
        e[k].reach = items[i].reach;
        for (size_t m = i; m < j; m++) {
            if (m > i)
                leakgate_reach_counts__add(&e[k].reach, &items[m].reach);
            e[k].requested_known &= items[m].requested_known;
            e[k].delta_requested =
                sat_add(e[k].delta_requested, items[m].requested);
        }
        if (!e[k].requested_known)
            e[k].delta_requested = 0;
        err = fill_entry(&e[k++], &items[i], j - i, &s);
    }
    if (err)
        goto cleanup;
    qsort(e, count, sizeof *e, cmp_entries);
    *out = e;
    *nout = count;
    e = NULL;
cleanup:
    free_entries(e, k);
    leakgate_util__free(s.v);
    if (err)
        leakgate_error__set(err, "diff: out of memory merging %zu stacks", n);
    return err;
}

/* Append the stacks of h as items (or to the excluded sums). */
static void
add_heap(struct item *items,
         size_t *n,
         struct leakgate_diff *d,
         const struct leakgate_heap *h,
         int sign,
         const struct leakgate_diff_opts *o)
{
    for (size_t i = 0; i < h->nstacks; i++) {
        const struct leakgate_heap_stack *s = &h->stacks[i];
        struct item *it = &items[*n];
        size_t k = 0;

        while (k < s->npcs &&
               leakgate_util__in_ranges(o->strip, o->nstrip, s->pcs[k]))
            k++;
        if (k < s->npcs &&
            leakgate_util__in_ranges(o->exclude, o->nexclude, s->pcs[k])) {
            d->excluded_objs =
                sat_add(d->excluded_objs, signed_count(s->live_objs, sign));
            d->excluded_bytes =
                sat_add(d->excluded_bytes, signed_count(s->live_bytes, sign));
            continue;
        }
        memset(it, 0, sizeof *it);
        it->key = s->pcs + k;
        it->nkey = s->npcs - k;
        it->objs = signed_count(s->live_objs, sign);
        it->bytes = signed_count(s->live_bytes, sign);
        it->hthreads = s->threads;
        it->nthreads = s->nthreads;
        it->sign = sign;
        (*n)++;
    }
}

/* Allocate room for n items (at least one). */
static int
alloc_items(struct item **out, size_t a, size_t b)
{
    *out = NULL;
    if (b > SIZE_MAX / sizeof **out || a > SIZE_MAX / sizeof **out - b)
        return leakgate_error__set(LEAKGATE_ENOMEM, "diff: too many stacks");
    *out = leakgate_util__malloc((a + b) * sizeof **out);
    if (!*out)
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "diff: out of memory for %zu stacks", a + b);
    return 0;
}

int
leakgate_diff__compute(struct leakgate_diff **out,
                       const struct leakgate_heap *before,
                       const struct leakgate_heap *after,
                       const struct leakgate_diff_opts *opts)
{
    static const struct leakgate_diff_opts none = {NULL, 0, NULL, 0};
    struct leakgate_diff *d = NULL;
    struct item *items = NULL;
    size_t n = 0;
    int err;

    assert(out && before && after);
    *out = NULL;
    opts = opts ? opts : &none;
    err = leakgate_diff__new_empty(&d);
    if (!err)
        err = alloc_items(&items, before->nstacks, after->nstacks);
    if (err)
        goto cleanup;
    add_heap(items, &n, d, before, -1, opts);
    add_heap(items, &n, d, after, +1, opts);
    qsort(items, n, sizeof *items, cmp_items);
    err = build_entries(&d->entries, &d->nentries, items, n);
    if (err)
        goto cleanup;
    *out = d;
    d = NULL;
cleanup:
    leakgate_util__free(items);
    leakgate_diff__free(d);
    return err;
}

int
leakgate_diff__accumulate(struct leakgate_diff *into,
                          const struct leakgate_diff *more)
{
    const struct leakgate_diff *src[2] = {into, more};
    struct leakgate_diff_entry *entries = NULL;
    struct item *items = NULL;
    size_t n = 0, nentries = 0;
    int err;

    assert(into && more);
    err = alloc_items(&items, into->nentries, more->nentries);
    if (err)
        goto cleanup;
    for (size_t s = 0; s < 2; s++) {
        for (size_t i = 0; i < src[s]->nentries; i++, n++) {
            const struct leakgate_diff_entry *e = &src[s]->entries[i];

            memset(&items[n], 0, sizeof items[n]);
            items[n].key = e->pcs;
            items[n].nkey = e->npcs;
            items[n].objs = e->delta_objs;
            items[n].bytes = e->delta_bytes;
            items[n].requested = e->delta_requested;
            items[n].requested_known = e->requested_known;
            items[n].reach = e->reach;
            items[n].dthreads = e->threads;
            items[n].nthreads = e->nthreads;
        }
    }
    qsort(items, n, sizeof *items, cmp_items);
    err = build_entries(&entries, &nentries, items, n);
    if (err)
        goto cleanup;
    free_entries(into->entries, into->nentries);
    into->entries = entries;
    into->nentries = nentries;
    into->excluded_bytes = sat_add(into->excluded_bytes, more->excluded_bytes);
    into->excluded_objs = sat_add(into->excluded_objs, more->excluded_objs);
cleanup:
    leakgate_util__free(items);
    return err;
}

int
leakgate_diff__of_entries(struct leakgate_diff **out,
                          struct leakgate_diff_entry *entries,
                          size_t n)
{
    struct leakgate_diff *d = NULL, more;
    int rc = leakgate_diff__new_empty(&d);

    *out = NULL;
    memset(&more, 0, sizeof more);
    more.entries = entries;
    more.nentries = n;
    if (rc == 0)
        rc = leakgate_diff__accumulate(d, &more);
    if (rc < 0) {
        leakgate_diff__free(d);
        return rc;
    }
    *out = d;
    return 0;
}

int
leakgate_diff__new_empty(struct leakgate_diff **out)
{
    *out = leakgate_util__calloc(1, sizeof **out);
    if (!*out)
        return leakgate_error__set(LEAKGATE_ENOMEM, "diff: out of memory");
    return 0;
}

void
leakgate_diff__free(struct leakgate_diff *diff)
{
    if (!diff)
        return;
    free_entries(diff->entries, diff->nentries);
    leakgate_util__free(diff);
}

void
leakgate_diff__sort(struct leakgate_diff *diff)
{
    qsort(diff->entries, diff->nentries, sizeof *diff->entries, cmp_entries);
}
