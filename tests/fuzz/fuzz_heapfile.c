/* SPDX-License-Identifier: MIT */
/*
 * fuzz_heapfile: libFuzzer harness for the heap_v2 parser
 * (leakgate_heapfile__parse) and the diff built on its result
 * (leakgate_diff__compute, leakgate_diff__accumulate).  Seeds: real dumps
 * (tests/fixtures/heap, tests/fuzz/corpus/heapfile).
 *
 * Properties checked, beyond "no crash, no leak, no undefined behaviour":
 * - a failure returns EFORMAT, ETOOBIG or ENOMEM, leaves *out NULL and a
 *   detail that names the input;
 * - a parsed heap has sorted, unique stacks of 1..max_frames pcs;
 * - with tighter limits the same text fails with ETOOBIG or parses to the
 *   same counts (limits never change a successful result);
 * - diff(h, h) is empty; diff(empty, h) has one entry per stack with a
 *   non-zero count, sorted by bytes descending, summing to the stacks;
 *   adding diff(h, empty) to it cancels every entry;
 * - stripping and excluding by the heap's own mappings keeps the diff's
 *   invariants (unique keys, no all-zero entry).
 */
#include "fuzz.h"

#include <string.h>

#include "diff.h"
#include "error.h"
#include "heapfile.h"
#include "util.h"

#define NAME "fuzz.heap"

static const char empty_text[] = "heap_v2/1\n"
                                 "  t*: 0: 0 [0: 0]\n"
                                 "\n"
                                 "MAPPED_LIBRARIES:\n";

static int
cmp_pcs(const uintptr_t *a, size_t na, const uintptr_t *b, size_t nb)
{
    size_t n = na < nb ? na : nb;

    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    }
    return (na > nb) - (na < nb);
}

static void
check_failure(int err, const struct leakgate_heap *h)
{
    FUZZ_CHECK(err == LEAKGATE_EFORMAT || err == LEAKGATE_ETOOBIG ||
               err == LEAKGATE_ENOMEM);
    FUZZ_CHECK(h == NULL);
    FUZZ_CHECK(strncmp(leakgate_error_last(), NAME, strlen(NAME)) == 0);
}

static void
check_heap(const struct leakgate_heap *h)
{
    for (size_t i = 0; i < h->nstacks; i++) {
        const struct leakgate_heap_stack *s = &h->stacks[i];

        FUZZ_CHECK(s->npcs >= 1 && s->npcs <= 256);
        if (i > 0) {
            const struct leakgate_heap_stack *p = &h->stacks[i - 1];

            FUZZ_CHECK(cmp_pcs(p->pcs, p->npcs, s->pcs, s->npcs) < 0);
        }
    }
    for (size_t i = 0; i < h->nmaps; i++)
        FUZZ_CHECK(h->maps[i].start < h->maps[i].end);
}

/* Tighter limits: ETOOBIG or the very same result. */
static void
check_tight(const uint8_t *data, size_t size, const struct leakgate_heap *h)
{
    static const struct leakgate_heap_limits tight = {0, 200, 8, 16};
    struct leakgate_heap *t = NULL;
    int err =
        leakgate_heapfile__parse(&t, (const char *)data, size, NAME, &tight);

    if (err) {
        FUZZ_CHECK(err == LEAKGATE_ETOOBIG);
        FUZZ_CHECK(t == NULL);
        return;
    }
    FUZZ_CHECK(t->nstacks == h->nstacks && t->nmaps == h->nmaps);
    FUZZ_CHECK(t->total_bytes == h->total_bytes);
    for (size_t i = 0; i < h->nstacks; i++) {
        FUZZ_CHECK(t->stacks[i].live_bytes == h->stacks[i].live_bytes);
        FUZZ_CHECK(cmp_pcs(t->stacks[i].pcs, t->stacks[i].npcs,
                           h->stacks[i].pcs, h->stacks[i].npcs) == 0);
    }
    leakgate_heapfile__free(t);
}

/* Entries have unique keys, are sorted by bytes descending, and none is
 * all zero. */
static void
check_diff(const struct leakgate_diff *d)
{
    for (size_t i = 0; i < d->nentries; i++) {
        const struct leakgate_diff_entry *e = &d->entries[i];

        FUZZ_CHECK(e->delta_objs != 0 || e->delta_bytes != 0);
        for (size_t j = 0; j < i; j++) {
            const struct leakgate_diff_entry *o = &d->entries[j];

            FUZZ_CHECK(o->delta_bytes >= e->delta_bytes);
            FUZZ_CHECK(cmp_pcs(o->pcs, o->npcs, e->pcs, e->npcs) != 0);
        }
        for (size_t t = 1; t < e->nthreads; t++)
            FUZZ_CHECK(e->threads[t - 1].tid < e->threads[t].tid);
    }
}

/* diff(empty, h) + diff(h, empty) must cancel; diff(empty, h) sums to
 * the stacks when nothing saturates. */
static void
check_growth(const struct leakgate_heap *h, const struct leakgate_heap *empty)
{
    struct leakgate_diff *up = NULL, *down = NULL;
    size_t nonzero = 0;
    uint64_t sum = 0;
    int64_t dsum = 0;
    bool small = true;

    FUZZ_CHECK(leakgate_diff__compute(&up, empty, h, NULL) == 0);
    FUZZ_CHECK(leakgate_diff__compute(&down, h, empty, NULL) == 0);
    check_diff(up);
    check_diff(down);
    for (size_t i = 0; i < h->nstacks; i++) {
        const struct leakgate_heap_stack *s = &h->stacks[i];

        nonzero += s->live_objs != 0 || s->live_bytes != 0;
        small = small && s->live_bytes < ((uint64_t)1 << 40);
        sum += s->live_bytes < ((uint64_t)1 << 40) ? s->live_bytes : 0;
    }
    FUZZ_CHECK(up->nentries == nonzero && down->nentries == nonzero);
    for (size_t i = 0; i < up->nentries; i++)
        dsum += up->entries[i].delta_bytes;
    FUZZ_CHECK(!small || (uint64_t)dsum == sum);
    FUZZ_CHECK(leakgate_diff__accumulate(up, down) == 0);
    FUZZ_CHECK(up->nentries == 0);
    leakgate_diff__free(up);
    leakgate_diff__free(down);
}

/* Strip the first executable mapping, exclude the second. */
static void
check_stripped(const struct leakgate_heap *h)
{
    struct leakgate_range r[2] = {{0, 0}, {0, 0}};
    struct leakgate_diff_opts o = {&r[0], 1, &r[1], 1};
    struct leakgate_diff *d = NULL;
    size_t k = 0;

    for (size_t i = 0; i < h->nmaps && k < 2; i++) {
        if (h->maps[i].perms[2] == 'x') {
            r[k].start = h->maps[i].start;
            r[k++].end = h->maps[i].end;
        }
    }
    FUZZ_CHECK(leakgate_diff__compute(&d, h, h, &o) == 0);
    check_diff(d);
    leakgate_diff__free(d);
    FUZZ_CHECK(leakgate_diff__compute(&d, h, h, NULL) == 0);
    FUZZ_CHECK(d->nentries == 0 && d->excluded_bytes == 0);
    leakgate_diff__free(d);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct leakgate_heap *h = NULL, *empty = NULL;
    int err;

    err = leakgate_heapfile__parse(&h, (const char *)data, size, NAME, NULL);
    if (err) {
        check_failure(err, h);
        return 0;
    }
    check_heap(h);
    check_tight(data, size, h);
    FUZZ_CHECK(leakgate_heapfile__parse(&empty, empty_text,
                                        sizeof empty_text - 1, "empty",
                                        NULL) == 0);
    check_growth(h, empty);
    check_stripped(h);
    leakgate_heapfile__free(empty);
    leakgate_heapfile__free(h);
    return 0;
}
