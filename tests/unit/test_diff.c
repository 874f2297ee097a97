/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/diff.c: the recorded before/after dumps of
 * tests/fixtures/heap/ with jemalloc's mapping stripped, hand-made heaps
 * for growth, shrinkage, new and vanished stacks, stripping and merging,
 * exclusion, per-thread deltas, accumulation (A->B + B->C == A->C), and
 * allocation failures.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff.h"
#include "error.h"
#include "heapfile.h"
#include "unit.h"
#include "util.h"

#ifndef LEAKGATE_FIXTURES
#error "LEAKGATE_FIXTURES must name tests/fixtures"
#endif

/* A fatal check that the compiler also sees as leaving the function. */
#define REQUIRE(cond)                                                          \
    do {                                                                       \
        CU_ASSERT_FATAL((cond) ? 1 : 0);                                       \
        if (!(cond))                                                           \
            return;                                                            \
    } while (0)

#define H "heap_v2/1\n  t*: 0: 0 [0: 0]\n"
#define M "\nMAPPED_LIBRARIES:\n"

/* Frames 0x1000-0x1fff are "jemalloc", 0x9000-0x9fff "CUnit". */
static const struct leakgate_range strip[] = {{0x1000, 0x2000}};
static const struct leakgate_range exclude[] = {{0x9000, 0xa000}};
static const struct leakgate_diff_opts opts = {strip, 1, exclude, 1};

static const char text_a[] =
    H "@ 0x1001 0x5001 0x5100\n  t*: 2: 64 [0: 0]\n  t0: 2: 64 [0: 0]\n"
      "@ 0x1001 0x5002 0x5100\n  t*: 3: 96 [0: 0]\n  t0: 3: 96 [0: 0]\n"
      "@ 0x1001 0x5003 0x5100\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n"
      "@ 0x1001 0x5004 0x5100\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n" M;

/* From A: 5001 grows on t0 and t2, 5002 shrinks, 5003 vanishes, 5004 is
 * unchanged, 5005 is new on t1. */
static const char text_b[] =
    H "@ 0x1001 0x5001 0x5100\n  t*: 5: 160 [0: 0]\n  t0: 3: 96 [0: 0]\n"
      "  t2: 2: 64 [0: 0]\n"
      "@ 0x1001 0x5002 0x5100\n  t*: 1: 32 [0: 0]\n  t0: 1: 32 [0: 0]\n"
      "@ 0x1001 0x5004 0x5100\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n"
      "@ 0x1001 0x5005\n  t*: 1: 4096 [0: 0]\n  t1: 1: 4096 [0: 0]\n" M;

/* From B: 5005 is freed, 5003 comes back, an excluded stack appears. */
static const char text_c[] =
    H "@ 0x1001 0x5001 0x5100\n  t*: 5: 160 [0: 0]\n  t0: 3: 96 [0: 0]\n"
      "  t2: 2: 64 [0: 0]\n"
      "@ 0x1001 0x5003 0x5100\n  t*: 2: 32 [0: 0]\n  t0: 2: 32 [0: 0]\n"
      "@ 0x1002 0x9001 0x5100\n  t*: 1: 8 [0: 0]\n  t0: 1: 8 [0: 0]\n" M;

static struct leakgate_heap *
parse(const char *text)
{
    struct leakgate_heap *h = NULL;

    CU_ASSERT_EQUAL_FATAL(
        leakgate_heapfile__parse(&h, text, strlen(text), "t", NULL), 0);
    return h;
}

static struct leakgate_heap *
parse_fixture(const char *name)
{
    char path[1024];
    struct leakgate_heap *h = NULL;
    char *buf;
    long n;
    FILE *f;

    snprintf(path, sizeof path, "%s/heap/%s", LEAKGATE_FIXTURES, name);
    f = fopen(path, "rb");
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
    CU_ASSERT_FATAL(fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    CU_ASSERT_EQUAL_FATAL(
        leakgate_heapfile__parse(&h, buf, (size_t)n, name, NULL), 0);
    free(buf);
    return h;
}

static struct leakgate_diff *
diff_of(const char *before,
        const char *after,
        const struct leakgate_diff_opts *o)
{
    struct leakgate_heap *b = parse(before), *a = parse(after);
    struct leakgate_diff *d = NULL;

    CU_ASSERT_EQUAL_FATAL(leakgate_diff__compute(&d, b, a, o), 0);
    leakgate_heapfile__free(b);
    leakgate_heapfile__free(a);
    return d;
}

/* The entry whose stripped stack starts with pc, or NULL. */
static const struct leakgate_diff_entry *
entry_at(const struct leakgate_diff *d, uintptr_t pc)
{
    for (size_t i = 0; i < d->nentries; i++) {
        if (d->entries[i].npcs > 0 && d->entries[i].pcs[0] == pc)
            return &d->entries[i];
    }
    return NULL;
}

static bool
is_sorted(const struct leakgate_diff *d)
{
    for (size_t i = 1; i < d->nentries; i++) {
        const struct leakgate_diff_entry *x = &d->entries[i - 1];
        const struct leakgate_diff_entry *y = &d->entries[i];

        if (x->delta_bytes < y->delta_bytes)
            return false;
        if (x->delta_bytes == y->delta_bytes &&
            (x->npcs == 0 || (y->npcs > 0 && x->pcs[0] >= y->pcs[0])))
            return false; /* the tests' ties differ in their first pc */
    }
    return true;
}

static bool
diffs_equal(const struct leakgate_diff *x, const struct leakgate_diff *y)
{
    if (x->nentries != y->nentries || x->excluded_bytes != y->excluded_bytes ||
        x->excluded_objs != y->excluded_objs)
        return false;
    for (size_t i = 0; i < x->nentries; i++) {
        const struct leakgate_diff_entry *a = &x->entries[i];
        const struct leakgate_diff_entry *b = &y->entries[i];

        if (a->npcs != b->npcs || a->delta_objs != b->delta_objs ||
            a->delta_bytes != b->delta_bytes || a->nthreads != b->nthreads ||
            (a->npcs && memcmp(a->pcs, b->pcs, a->npcs * sizeof *a->pcs)) ||
            (a->nthreads &&
             memcmp(a->threads, b->threads, a->nthreads * sizeof *a->threads)))
            return false;
    }
    return true;
}

static void
test_diff__growth_shrink_new_vanished(void)
{
    struct leakgate_diff *d = diff_of(text_a, text_b, &opts);
    const struct leakgate_diff_entry *e = d->entries;

    REQUIRE(d->nentries == 4);
    CU_ASSERT(is_sorted(d));
    /* new */
    CU_ASSERT_EQUAL(e[0].pcs[0], 0x5005);
    CU_ASSERT_EQUAL(e[0].npcs, 1);
    CU_ASSERT_EQUAL(e[0].delta_objs, 1);
    CU_ASSERT_EQUAL(e[0].delta_bytes, 4096);
    REQUIRE(e[0].nthreads == 1);
    CU_ASSERT_EQUAL(e[0].threads[0].tid, 1);
    CU_ASSERT_EQUAL(e[0].threads[0].delta_bytes, 4096);
    /* growth, on two threads, sorted by tid */
    CU_ASSERT_EQUAL(e[1].pcs[0], 0x5001);
    CU_ASSERT_EQUAL(e[1].npcs, 2); /* 0x1001 stripped */
    CU_ASSERT_EQUAL(e[1].delta_objs, 3);
    CU_ASSERT_EQUAL(e[1].delta_bytes, 96);
    REQUIRE(e[1].nthreads == 2);
    CU_ASSERT_EQUAL(e[1].threads[0].tid, 0);
    CU_ASSERT_EQUAL(e[1].threads[0].delta_objs, 1);
    CU_ASSERT_EQUAL(e[1].threads[0].delta_bytes, 32);
    CU_ASSERT_EQUAL(e[1].threads[1].tid, 2);
    CU_ASSERT_EQUAL(e[1].threads[1].delta_bytes, 64);
    /* vanished, then shrunk */
    CU_ASSERT_EQUAL(e[2].pcs[0], 0x5003);
    CU_ASSERT_EQUAL(e[2].delta_objs, -1);
    CU_ASSERT_EQUAL(e[2].delta_bytes, -16);
    CU_ASSERT_EQUAL(e[2].threads[0].delta_bytes, -16);
    CU_ASSERT_EQUAL(e[3].pcs[0], 0x5002);
    CU_ASSERT_EQUAL(e[3].delta_objs, -2);
    CU_ASSERT_EQUAL(e[3].delta_bytes, -64);
    CU_ASSERT_PTR_NULL(entry_at(d, 0x5004)); /* unchanged: no entry */
    CU_ASSERT_EQUAL(d->excluded_bytes, 0);
    leakgate_diff__free(d);
}

static void
test_diff__without_opts(void)
{
    struct leakgate_diff *d = diff_of(text_a, text_b, NULL);

    REQUIRE(d->nentries == 4);
    for (size_t i = 0; i < 4; i++)
        CU_ASSERT_EQUAL(d->entries[i].pcs[0], 0x1001); /* not stripped */
    CU_ASSERT_EQUAL(d->entries[0].delta_bytes, 4096);
    leakgate_diff__free(d);
    d = diff_of(text_b, text_c, NULL);
    CU_ASSERT_PTR_NOT_NULL(entry_at(d, 0x1002)); /* not excluded */
    CU_ASSERT_EQUAL(d->excluded_bytes, 0);
    leakgate_diff__free(d);
}

static void
test_diff__identical_heaps(void)
{
    struct leakgate_heap *h = parse_fixture("after.heap");
    struct leakgate_diff *d = NULL;

    CU_ASSERT_EQUAL(leakgate_diff__compute(&d, h, h, NULL), 0);
    REQUIRE(d != NULL);
    CU_ASSERT_EQUAL(d->nentries, 0);
    CU_ASSERT_EQUAL(d->excluded_bytes, 0);
    leakgate_diff__free(d);
    leakgate_heapfile__free(h);
}

/* Raw stacks that differ only in allocator frames are one key. */
static void
test_diff__strip_merges(void)
{
    struct leakgate_diff *d = diff_of(
        H "@ 0x1001 0x1002 0x5001\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n" M,
        H "@ 0x1001 0x1002 0x5001\n  t*: 2: 32 [0: 0]\n  t0: 2: 32 [0: 0]\n"
          "@ 0x1003 0x5001\n  t*: 1: 64 [0: 0]\n  t1: 1: 64 [0: 0]\n"
          "@ 0x5001\n  t*: 1: 8 [0: 0]\n  t0: 1: 8 [0: 0]\n"
          "@ 0x1001 0x1002\n  t*: 1: 48 [0: 0]\n  t0: 1: 48 [0: 0]\n" M,
        &opts);
    const struct leakgate_diff_entry *e;

    REQUIRE(d->nentries == 2);
    e = &d->entries[0];
    CU_ASSERT_EQUAL(e->npcs, 1);
    CU_ASSERT_EQUAL(e->pcs[0], 0x5001);
    CU_ASSERT_EQUAL(e->delta_objs, 3);
    CU_ASSERT_EQUAL(e->delta_bytes, 88);
    REQUIRE(e->nthreads == 2);
    CU_ASSERT_EQUAL(e->threads[0].delta_objs, 2);
    CU_ASSERT_EQUAL(e->threads[0].delta_bytes, 24);
    CU_ASSERT_EQUAL(e->threads[1].tid, 1);
    CU_ASSERT_EQUAL(e->threads[1].delta_bytes, 64);
    /* Every frame an allocator frame: an empty key. */
    e = &d->entries[1];
    CU_ASSERT_EQUAL(e->npcs, 0);
    CU_ASSERT_EQUAL(e->delta_bytes, 48);
    leakgate_diff__free(d);
}

static void
test_diff__exclude(void)
{
    struct leakgate_diff *d = diff_of(
        H "@ 0x9002\n  t*: 1: 50 [0: 0]\n  t0: 1: 50 [0: 0]\n" M,
        H "@ 0x1001 0x9001 0x5001\n  t*: 1: 200 [0: 0]\n  t0: 1: 200 [0: 0]\n"
          "@ 0x1001 0x5001 0x9001\n  t*: 1: 10 [0: 0]\n  t0: 1: 10 [0: 0]\n" M,
        &opts);

    /* Only the first frame after stripping decides. */
    REQUIRE(d->nentries == 1);
    CU_ASSERT_EQUAL(d->entries[0].pcs[0], 0x5001);
    CU_ASSERT_EQUAL(d->entries[0].delta_bytes, 10);
    CU_ASSERT_EQUAL(d->excluded_bytes, 150);
    CU_ASSERT_EQUAL(d->excluded_objs, 0);
    leakgate_diff__free(d);
}

/* Equal totals drop a key even if memory moved between threads; equal
 * objects with different bytes keep it. */
static void
test_diff__zero_deltas(void)
{
    struct leakgate_diff *d =
        diff_of(H "@ 0x5001\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n"
                  "@ 0x5002\n  t*: 1: 16 [0: 0]\n  t0: 1: 16 [0: 0]\n"
                  "@ 0x5003\n  t*: 2: 32 [0: 0]\n  t0: 1: 16 [0: 0]\n"
                  "  t1: 1: 16 [0: 0]\n" M,
                H "@ 0x5001\n  t*: 1: 16 [0: 0]\n  t1: 1: 16 [0: 0]\n"
                  "@ 0x5002\n  t*: 1: 64 [0: 0]\n  t0: 1: 64 [0: 0]\n"
                  "@ 0x5003\n  t*: 3: 48 [0: 0]\n  t0: 1: 16 [0: 0]\n"
                  "  t1: 2: 32 [0: 0]\n" M,
                NULL);

    REQUIRE(d->nentries == 2);
    CU_ASSERT_EQUAL(d->entries[0].pcs[0], 0x5002);
    CU_ASSERT_EQUAL(d->entries[0].delta_objs, 0);
    CU_ASSERT_EQUAL(d->entries[0].delta_bytes, 48);
    /* t0 of 0x5003 did not change: only t1 is listed. */
    REQUIRE(d->entries[1].nthreads == 1);
    CU_ASSERT_EQUAL(d->entries[1].threads[0].tid, 1);
    CU_ASSERT_EQUAL(d->entries[1].threads[0].delta_objs, 1);
    leakgate_diff__free(d);
}

static void
test_diff__ties_sorted_by_pcs(void)
{
    struct leakgate_diff *d = diff_of(H M,
                                      H "@ 0x5003\n  t*: 1: 16 [0: 0]\n"
                                        "@ 0x5001\n  t*: 1: 16 [0: 0]\n"
                                        "@ 0x5002 0x1\n  t*: 1: 16 [0: 0]\n"
                                        "@ 0x5002\n  t*: 1: 16 [0: 0]\n" M,
                                      NULL);

    REQUIRE(d->nentries == 4);
    CU_ASSERT_EQUAL(d->entries[0].pcs[0], 0x5001);
    CU_ASSERT_EQUAL(d->entries[1].npcs, 1); /* a prefix first */
    CU_ASSERT_EQUAL(d->entries[2].npcs, 2);
    CU_ASSERT_EQUAL(d->entries[3].pcs[0], 0x5003);
    CU_ASSERT_EQUAL(d->entries[0].nthreads, 0);
    CU_ASSERT_PTR_NULL(d->entries[0].threads);
    leakgate_diff__free(d);
}

static void
test_diff__saturates(void)
{
    struct leakgate_diff *d =
        diff_of(H M,
                H "@ 0x5001\n  t*: 18446744073709551615: 18446744073709551615 "
                  "[0: 0]\n@ 0x1001 0x5001\n  t*: 1: 1 [0: 0]\n" M,
                &opts);

    REQUIRE(d->nentries == 1);
    CU_ASSERT_EQUAL(d->entries[0].delta_objs, INT64_MAX);
    CU_ASSERT_EQUAL(d->entries[0].delta_bytes, INT64_MAX);
    leakgate_diff__free(d);
    d = diff_of(H "@ 0x5001\n  t*: 18446744073709551615: 1 [0: 0]\n"
                  "@ 0x1001 0x5001\n  t*: 1: 1 [0: 0]\n" M,
                H M, &opts);
    REQUIRE(d->nentries == 1);
    CU_ASSERT_EQUAL(d->entries[0].delta_objs, -INT64_MAX - 1);
    leakgate_diff__free(d);
}

/* The recorded dumps, with jemalloc's mappings stripped and ld.so's
 * frames excluded (the DTV of pthread_create). */
static void
test_diff__recorded(void)
{
    struct leakgate_heap *b = parse_fixture("before.heap");
    struct leakgate_heap *a = parse_fixture("after.heap");
    struct leakgate_range je[8], ld[8];
    struct leakgate_diff_opts o = {je, 0, ld, 0};
    struct leakgate_diff *d = NULL;
    static const int64_t want[] = {4096, 1024, 320, -48, -112};
    size_t nld;

    for (size_t i = 0; i < a->nmaps && o.nstrip < 8 && o.nexclude < 8; i++) {
        struct leakgate_range r = {a->maps[i].start, a->maps[i].end};

        if (strstr(a->maps[i].path, "libjemalloc"))
            je[o.nstrip++] = r;
        if (strstr(a->maps[i].path, "ld-linux"))
            ld[o.nexclude++] = r;
    }
    REQUIRE(o.nstrip > 0 && o.nexclude > 0);
    nld = o.nexclude;
    o.nexclude = 0;
    CU_ASSERT_EQUAL_FATAL(leakgate_diff__compute(&d, b, a, &o), 0);
    REQUIRE(d->nentries == 5);
    for (size_t i = 0; i < 5; i++) {
        CU_ASSERT_EQUAL(d->entries[i].delta_bytes, want[i]);
        CU_ASSERT(
            !leakgate_util__in_ranges(je, o.nstrip, d->entries[i].pcs[0]));
    }
    CU_ASSERT_EQUAL(d->entries[1].threads[0].tid, 1); /* "worker one" */
    CU_ASSERT_EQUAL(d->entries[4].delta_objs, -1);    /* 3 -> 2 objects */
    leakgate_diff__free(d);
    o.nexclude = nld;
    CU_ASSERT_EQUAL_FATAL(leakgate_diff__compute(&d, b, a, &o), 0);
    CU_ASSERT_EQUAL(d->nentries, 4);
    CU_ASSERT_EQUAL(d->excluded_bytes, 320);
    CU_ASSERT_EQUAL(d->excluded_objs, 1);
    leakgate_diff__free(d);
    leakgate_heapfile__free(b);
    leakgate_heapfile__free(a);
}

/* A->B accumulated with B->C is A->C, entries, threads and exclusions. */
static void
test_diff__accumulate(void)
{
    struct leakgate_diff *ab = diff_of(text_a, text_b, &opts);
    struct leakgate_diff *bc = diff_of(text_b, text_c, &opts);
    struct leakgate_diff *ac = diff_of(text_a, text_c, &opts);
    struct leakgate_diff *sum = NULL;

    CU_ASSERT_EQUAL_FATAL(leakgate_diff__new_empty(&sum), 0);
    CU_ASSERT_EQUAL(sum->nentries, 0);
    CU_ASSERT_EQUAL(leakgate_diff__accumulate(sum, ab), 0);
    CU_ASSERT(diffs_equal(sum, ab));
    CU_ASSERT_EQUAL(leakgate_diff__accumulate(sum, bc), 0);
    CU_ASSERT(diffs_equal(sum, ac));
    CU_ASSERT(is_sorted(sum));
    CU_ASSERT_EQUAL(sum->excluded_bytes, 8);
    /* 0x5003 vanished then came back: +16 -16 +32 */
    REQUIRE(entry_at(sum, 0x5003) != NULL);
    CU_ASSERT_EQUAL(entry_at(sum, 0x5003)->delta_bytes, 16);
    /* 0x5005 was new then freed: cancelled and removed. */
    CU_ASSERT_PTR_NULL(entry_at(sum, 0x5005));
    leakgate_diff__free(sum);
    leakgate_diff__free(ab);
    leakgate_diff__free(bc);
    leakgate_diff__free(ac);
}

static void
test_diff__accumulate_cancels_to_empty(void)
{
    struct leakgate_diff *ab = diff_of(text_a, text_b, &opts);
    struct leakgate_diff *ba = diff_of(text_b, text_a, &opts);

    CU_ASSERT_EQUAL(leakgate_diff__accumulate(ab, ba), 0);
    CU_ASSERT_EQUAL(ab->nentries, 0);
    CU_ASSERT_EQUAL(ab->excluded_bytes, 0);
    CU_ASSERT_EQUAL(leakgate_diff__accumulate(ba, ba), 0); /* doubles */
    REQUIRE(ba->nentries == 4);
    CU_ASSERT_EQUAL(ba->entries[0].delta_bytes, 128);
    CU_ASSERT_EQUAL(ba->entries[3].delta_bytes, -8192);
    leakgate_diff__free(ab);
    leakgate_diff__free(ba);
    leakgate_diff__free(NULL);
}

static void
test_diff__alloc_failure_compute(void)
{
    struct leakgate_heap *a = parse(text_a), *b = parse(text_b);
    struct leakgate_diff *want = diff_of(text_a, text_b, &opts), *d;
    size_t k = 0;
    int err;

    do {
        d = (void *)&d;
        leakgate_util__fail_after(k++);
        err = leakgate_diff__compute(&d, a, b, &opts);
        leakgate_util__fail_after(SIZE_MAX);
        CU_ASSERT(err == 0 || (err == LEAKGATE_ENOMEM && d == NULL));
    } while (err && k < 1000);
    CU_ASSERT(k > 4); /* several allocations were each made to fail */
    REQUIRE(err == 0);
    CU_ASSERT(diffs_equal(d, want));
    leakgate_diff__free(d);
    leakgate_diff__free(want);
    leakgate_heapfile__free(a);
    leakgate_heapfile__free(b);
}

static void
test_diff__alloc_failure_accumulate(void)
{
    struct leakgate_diff *ab = diff_of(text_a, text_b, &opts);
    struct leakgate_diff *bc = diff_of(text_b, text_c, &opts);
    struct leakgate_diff *ac = diff_of(text_a, text_c, &opts);
    struct leakgate_diff *copy = diff_of(text_a, text_b, &opts);
    size_t k = 0;
    int err;

    do {
        leakgate_util__fail_after(k++);
        err = leakgate_diff__accumulate(ab, bc);
        leakgate_util__fail_after(SIZE_MAX);
        CU_ASSERT(err == 0 || err == LEAKGATE_ENOMEM);
        if (err) /* into is unchanged */
            CU_ASSERT(diffs_equal(ab, copy));
    } while (err && k < 1000);
    CU_ASSERT(k > 4);
    CU_ASSERT(diffs_equal(ab, ac));
    leakgate_diff__free(copy);
    leakgate_util__fail_after(0);
    CU_ASSERT_EQUAL(leakgate_diff__new_empty(&copy), LEAKGATE_ENOMEM);
    leakgate_util__fail_after(SIZE_MAX);
    CU_ASSERT_PTR_NULL(copy);
    leakgate_diff__free(ab);
    leakgate_diff__free(bc);
    leakgate_diff__free(ac);
}

/* n stacks of 12 frames (4 of them "jemalloc"), half of them grown. */
static struct leakgate_heap *
big_heap(size_t n, size_t grow)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct leakgate_heap *h = NULL;

    leakgate_buf__puts(&b, H);
    for (size_t i = 0; i < n; i++) {
        leakgate_buf__puts(&b, "@ 0x1001 0x1002 0x1003 0x1004");
        for (size_t f = 0; f < 8; f++)
            leakgate_buf__printf(&b, " 0x%zx", 0x500000 + (i * 8 + f) * 16);
        leakgate_buf__printf(&b, "\n  t*: 1: %zu [0: 0]\n  t0: 1: %zu [0: 0]\n",
                             64 + (i % 2) * grow, 64 + (i % 2) * grow);
    }
    leakgate_buf__puts(&b, M);
    CU_ASSERT_FATAL(!b.failed);
    CU_ASSERT_EQUAL(leakgate_heapfile__parse(&h, b.ptr, b.len, "big", NULL), 0);
    leakgate_buf__dispose(&b);
    return h;
}

static void
test_diff__speed(void)
{
    struct leakgate_heap *b = big_heap(10000, 0), *a = big_heap(10000, 16);
    struct leakgate_diff *d = NULL;
    struct timespec t0, t1;
    double best = 1e9;

    for (int rep = 0; rep < 5; rep++) {
        double ms;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        CU_ASSERT_EQUAL_FATAL(leakgate_diff__compute(&d, b, a, &opts), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
             (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        best = ms < best ? ms : best;
        CU_ASSERT_EQUAL(d->nentries, 5000);
        leakgate_diff__free(d);
    }
    printf("\n  diff 2 x 10000 stacks: %.2f ms ", best);
    CU_ASSERT(best < 1000); /* only catches quadratic behaviour */
    leakgate_heapfile__free(b);
    leakgate_heapfile__free(a);
}

const char *const unit_suite = "diff";
const struct unit_case unit_cases[] = {
    {"test_diff__growth_shrink_new_vanished",
     test_diff__growth_shrink_new_vanished},
    {"test_diff__without_opts", test_diff__without_opts},
    {"test_diff__identical_heaps", test_diff__identical_heaps},
    {"test_diff__strip_merges", test_diff__strip_merges},
    {"test_diff__exclude", test_diff__exclude},
    {"test_diff__zero_deltas", test_diff__zero_deltas},
    {"test_diff__ties_sorted_by_pcs", test_diff__ties_sorted_by_pcs},
    {"test_diff__saturates", test_diff__saturates},
    {"test_diff__recorded", test_diff__recorded},
    {"test_diff__accumulate", test_diff__accumulate},
    {"test_diff__accumulate_cancels_to_empty",
     test_diff__accumulate_cancels_to_empty},
    {"test_diff__alloc_failure_compute", test_diff__alloc_failure_compute},
    {"test_diff__alloc_failure_accumulate",
     test_diff__alloc_failure_accumulate},
    {"test_diff__speed", test_diff__speed},
    {NULL, NULL},
};
