/* SPDX-License-Identifier: MIT */
/*
 * Suite windows a lean process judges from tracker pieces (gate_lean.c),
 * built twice: linked with leakgate::cunit_lean and with leakgate::cunit
 * (tests/integration/CMakeLists.txt, lean/cases_*).  Suites:
 *   kept       init keeps a table its thresholds accept: passes
 *   kept_leak  init keeps a table nothing accepts: fails, at its line
 *   bad_init   init allocates, forgets it, and fails: the window fails
 *   freed_late init allocates, a test frees it: passes
 */
#include <stdlib.h>

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
    return leakgate_cunit_main(argc, argv);
}
