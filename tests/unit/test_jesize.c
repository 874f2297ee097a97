/* SPDX-License-Identifier: MIT */
/*
 * jesize: jemalloc's size classes as a lean process computes them must be
 * jemalloc's own (nallocx, from the linked library), and the class map
 * must give back what was noted.
 */
#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "jesize.h"
#include "unit.h"

/* Every size up to 80 KiB, then each power of two and its neighbours up
 * to 2^40: leakgate_jesize__s2u() is nallocx(n, 0). */
static void
test_jesize__s2u_is_jemallocs(void)
{
    size_t wrong = 0;

    for (size_t n = 0; n <= 81920; n++)
        wrong += leakgate_jesize__s2u(n) != nallocx(n ? n : 1, 0);
    for (unsigned int k = 17; k <= 40; k++) {
        size_t p = (size_t)1 << k;

        for (size_t d = 0; d < 9; d++) {
            size_t n = p - 4 + d * (p / 8 + 1) / 4;

            wrong += leakgate_jesize__s2u(n) != nallocx(n, 0);
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
}

/* Aligned: leakgate_jesize__sa2u() is nallocx(n, MALLOCX_ALIGN(a)). */
static void
test_jesize__sa2u_is_jemallocs(void)
{
    size_t wrong = 0, tried = 0;

    for (unsigned int lg = 0; lg <= 16; lg++) {
        size_t a = (size_t)1 << lg;

        for (size_t n = 1; n <= 40000; n += (n < 600 ? 1 : 97)) {
            wrong +=
                leakgate_jesize__sa2u(n, a) != nallocx(n, MALLOCX_ALIGN(a));
            tried++;
        }
    }
    CU_ASSERT_EQUAL(wrong, 0);
    CU_ASSERT_TRUE(tried > 10000);
    /* Not a power of two: no class. */
    CU_ASSERT_EQUAL(leakgate_jesize__sa2u(64, 48), 0);
}

/* The map keeps each noted class; a size no class has (or 0) is unknown
 * and falls back to the class of the C library's usable size, never
 * below the object's usable size. */
static void
test_jesize__map_round_trip(void)
{
    static const size_t classes[] = {8,   16,    32,    48,    80,
                                     160, 14336, 16384, 20480, (size_t)7 << 33};
    void *p = malloc(100), *q = malloc(40);
    size_t usable;

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(q);
    leakgate_jesize__set_lean();
    CU_ASSERT_TRUE(leakgate_jesize__lean());
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        leakgate_jesize__note(p, classes[i]);
        CU_ASSERT_EQUAL(leakgate_jesize__usable(p), classes[i]);
    }
    /* The tracker's mark (the high bit) changes no size, and every
     * class byte is below it. */
    for (size_t i = 0; i < sizeof classes / sizeof classes[0]; i++) {
        unsigned char c = leakgate_jesize__encode(classes[i]);

        CU_ASSERT_TRUE(c != 0 && c < LEAKGATE_JESIZE__MARK);
        leakgate_jesize__note_byte(p,
                                   (unsigned char)(c | LEAKGATE_JESIZE__MARK));
        CU_ASSERT_EQUAL(leakgate_jesize__usable(p), classes[i]);
        CU_ASSERT_EQUAL(leakgate_jesize__byte_size[c | LEAKGATE_JESIZE__MARK],
                        classes[i]);
    }
    CU_ASSERT_EQUAL(leakgate_jesize__encode((size_t)7 << 34), 0);
    /* Neighbours in the map are independent: q's byte is its own. */
    leakgate_jesize__note(p, 112);
    leakgate_jesize__note(q, 48);
    CU_ASSERT_EQUAL(leakgate_jesize__usable(p), 112);
    CU_ASSERT_EQUAL(leakgate_jesize__usable(q), 48);
    /* 72 = 9 * 8 is no class: unknown, the fallback. */
    leakgate_jesize__note(p, 72);
    usable = leakgate_jesize__usable(p);
    CU_ASSERT_EQUAL(usable, leakgate_jesize__s2u(malloc_usable_size(p)));
    CU_ASSERT_TRUE(usable >= 100);
    CU_ASSERT_EQUAL(leakgate_jesize__usable(NULL), 0);
    free(q);
    free(p);
}

/* More leaves than the top level's first table holds (jesize.c): the
 * entries past it go to the large array, and every leaf keeps its own
 * classes and tracker slot, whichever part holds its entry. */
static void
test_jesize__many_leaves(void)
{
    enum { LEAVES = 400 };
    const size_t leaf = (size_t)1 << LEAKGATE_JESIZE__LEAF_SHIFT;
    static const size_t classes[] = {16, 48, 160, 14336};
    /* addresses only: the map never reads or writes them */
    unsigned char *base =
        mmap(NULL, LEAVES * leaf, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    _Atomic(void *) *slots[LEAVES];

    CU_ASSERT_FATAL(base != MAP_FAILED);
    leakgate_jesize__set_lean();
    for (size_t i = 0; i < LEAVES; i++) {
        unsigned char *a = base + i * leaf + (i % 7) * 64;

        leakgate_jesize__note(a, classes[i % 4]);
        slots[i] = leakgate_jesize__tracker_slot((uintptr_t)a, true);
        CU_ASSERT_PTR_NOT_NULL_FATAL(slots[i]);
    }
    for (size_t i = 0; i < LEAVES; i++) {
        unsigned char *a = base + i * leaf + (i % 7) * 64;

        CU_ASSERT_EQUAL(leakgate_jesize__usable(a), classes[i % 4]);
        CU_ASSERT_PTR_EQUAL(
            leakgate_jesize__tracker_slot((uintptr_t)a + 16, false), slots[i]);
        if (i > 0)
            CU_ASSERT_PTR_NOT_EQUAL(slots[i], slots[i - 1]);
    }
    CU_ASSERT_EQUAL(munmap(base, LEAVES * leaf), 0);
}

const char *const unit_suite = "jesize";
const struct unit_case unit_cases[] = {
    {"s2u_is_jemallocs", test_jesize__s2u_is_jemallocs},
    {"sa2u_is_jemallocs", test_jesize__sa2u_is_jemallocs},
    {"map_round_trip", test_jesize__map_round_trip},
    {"many_leaves", test_jesize__many_leaves},
    {NULL, NULL}};
