/* SPDX-License-Identifier: MIT */
/*
 * Suite windows a lean process judges from tracker pieces (gate_lean.c),
 * built twice: linked with leakgate::cunit (lean) and with
 * leakgate::cunit_jemalloc
 * (tests/integration/CMakeLists.txt, lean/cases_*).  Suites:
 *   kept       init keeps a table its thresholds accept: passes
 *   kept_leak  init keeps a table nothing accepts: fails, at its line
 *   bad_init   init allocates, forgets it, and fails: the window fails
 *   freed_late init allocates, a test frees it: passes
 *   churn      thousands of allocations and frees a test makes, as the
 *              wrappers' lane takes them (intercept.c: no thread has
 *              started in this program): clean passes; a 1-byte leak
 *              amid them fails at its line, and so does one a realloc
 *              made; a peak of 100 objects held
 *              at once is 4,800 B in both builds, over its 4 KiB limit
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>

#define NOINLINE __attribute__((noinline))

static void *volatile kept_table;
static void *volatile leaked_table;
static void *volatile late;

static NOINLINE void *
keep_table(size_t n)
{
    return malloc(n); /* MARK:keep_table */
}

static int
kept_init(void)
{
    kept_table = keep_table(100);
    return kept_table ? 0 : 1;
}

static NOINLINE int
kept_leak_init(void)
{
    leaked_table = malloc(240); /* MARK:kept_leak */
    return leaked_table ? 0 : 1;
}

static NOINLINE int
bad_init(void)
{
    late = malloc(200); /* MARK:bad_init */
    late = NULL;
    return 1; /* CUnit skips the suite */
}

static int
freed_late_init(void)
{
    late = malloc(64);
    return late ? 0 : 1;
}

static void
test_nothing(void)
{
    CU_ASSERT_TRUE(1);
}

static void
test_free_late(void)
{
    free(late);
    late = NULL;
}

/* Allocations and frees of every small size, with malloc, calloc and
 * strdup (whose caller is the C library). */
static void
churn(void)
{
    char text[64];

    for (int i = 0; i < 3000; i++) {
        char *p = malloc((size_t)(i % 700) + 1);
        char *q = calloc((size_t)(i % 5) + 1, 24);
        char *r, *grown;

        snprintf(text, sizeof text, "entry %d", i);
        r = strdup(text);
        CU_ASSERT_FATAL(p && q && r);
        p[0] = r[0];
        grown = realloc(p, (size_t)(i % 900) + 1);
        CU_ASSERT_FATAL(grown != NULL);
        p = grown;
        free(q);
        free(p);
        free(r);
    }
}

static NOINLINE void
leak_after_churn(void)
{
    leaked_table = malloc(1); /* MARK:churn_leak */
}

static NOINLINE void
leak_resized_after_churn(void)
{
    char *p = malloc(10);

    CU_ASSERT_FATAL(p != NULL);
    leaked_table = realloc(p, 100); /* MARK:churn_realloc */
}

static void
test_churn_realloc_leak(void)
{
    churn();
    leak_resized_after_churn();
    churn();
}

static void
test_churn_clean(void)
{
    churn();
}

static void
test_churn_leak(void)
{
    churn();
    leak_after_churn();
    churn();
}

static void
test_churn_peak(void)
{
    void *held[100];

    churn();
    for (int i = 0; i < 100; i++)
        held[i] = malloc(40); /* jemalloc's 48-byte class */
    for (int i = 0; i < 100; i++)
        free(held[i]);
    churn();
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("kept", kept_init, NULL);
    CU_add_test(s, "uses", test_nothing);
    s = CU_add_suite("kept_leak", kept_leak_init, NULL);
    CU_add_test(s, "uses", test_nothing);
    s = CU_add_suite("bad_init", bad_init, NULL);
    CU_add_test(s, "never_runs", test_nothing);
    s = CU_add_suite("freed_late", freed_late_init, NULL);
    CU_add_test(s, "frees", test_free_late);
    s = CU_add_suite("churn", NULL, NULL);
    CU_add_test(s, "clean", test_churn_clean);
    CU_add_test(s, "leak_in_the_middle", test_churn_leak);
    CU_add_test(s, "peak", test_churn_peak);
    CU_add_test(s, "realloc_leak", test_churn_realloc_leak);
    return leakgate_cunit_main(argc, argv);
}
