/* SPDX-License-Identifier: MIT */
/*
 * The warm-up probe's answers in a replay (harness/gate/gate_fork.c),
 * built twice: linked with leakgate::cunit (lean) and with
 * leakgate::cunit_jemalloc (tests/integration/CMakeLists.txt, probe/...).
 * Suite "probe", no thresholds (every limit 0):
 *   every  leaves a note through a shared helper on each run (made
 *          again: no hint)
 *   keyed  fills a cache entry of its own through the same helper, on
 *          its first run only (made once), with the same bytes: its
 *          stack differs from every's only in the test's own function,
 *          so it takes every's answer, and gets no hint either
 *   alone  made once at a stack of its own: asked itself, it gets the
 *          `warmup: 1` hint
 * Suite "inlined": every and keyed again, through a helper inlined into
 * each test (their stacks differ in the test's frame, which holds the
 * helper's inlined frame): keyed takes every's answer.  Suite "direct":
 * every and keyed call the allocating function themselves (as tests call
 * a project's allocation wrapper): one frame in common is not a shared
 * path, so keyed is asked and gets its hint.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>

#define NOINLINE __attribute__((noinline))

static void *volatile sink;
static void *volatile keyed_cache;
static void *volatile alone_cache;

static NOINLINE void *
make_note(void)
{
    return malloc(40); /* MARK:probe_note */
}

/* The shared helper: one call site, one path below the tests. */
static NOINLINE void
note_via(bool every)
{
    void *note = every || !keyed_cache ? make_note() : NULL;

    if (every)
        sink = note; /* the last run's note is lost */
    else if (note)
        keyed_cache = note;
}

static void
test_every(void)
{
    note_via(true);
    CU_ASSERT_PTR_NOT_NULL(sink);
}

static void
test_keyed(void)
{
    note_via(false);
    CU_ASSERT_PTR_NOT_NULL(keyed_cache);
}

static NOINLINE void *
make_alone(void)
{
    return malloc(72); /* MARK:probe_alone */
}

static void
test_alone(void)
{
    if (!alone_cache)
        alone_cache = make_alone();
    CU_ASSERT_PTR_NOT_NULL(alone_cache);
}

static void *volatile inlined_sink;
static void *volatile inlined_cache;
static void *volatile direct_sink;
static void *volatile direct_cache;

static inline __attribute__((always_inline)) void
note_inline(bool every)
{
    void *note = every || !inlined_cache ? make_note() : NULL;

    if (every)
        inlined_sink = note;
    else if (note)
        inlined_cache = note;
}

static void
test_inlined_every(void)
{
    note_inline(true);
    CU_ASSERT_PTR_NOT_NULL(inlined_sink);
}

static void
test_inlined_keyed(void)
{
    note_inline(false);
    CU_ASSERT_PTR_NOT_NULL(inlined_cache);
}

static void
test_direct_every(void)
{
    direct_sink = make_note();
    CU_ASSERT_PTR_NOT_NULL(direct_sink);
}

static void
test_direct_keyed(void)
{
    if (!direct_cache)
        direct_cache = make_note();
    CU_ASSERT_PTR_NOT_NULL(direct_cache);
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("probe", NULL, NULL);
    if (!s || !CU_add_test(s, "every", test_every) ||
        !CU_add_test(s, "keyed", test_keyed) ||
        !CU_add_test(s, "alone", test_alone))
        return 2;
    s = CU_add_suite("inlined", NULL, NULL);
    if (!s || !CU_add_test(s, "every", test_inlined_every) ||
        !CU_add_test(s, "keyed", test_inlined_keyed))
        return 2;
    s = CU_add_suite("direct", NULL, NULL);
    if (!s || !CU_add_test(s, "every", test_direct_every) ||
        !CU_add_test(s, "keyed", test_direct_keyed))
        return 2;
    return leakgate_cunit_main(argc, argv);
}
