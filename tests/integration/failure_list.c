/* SPDX-License-Identifier: MIT */
/*
 * failure_list: a program that reads CUnit's failure list itself after
 * its run (as CU_basic_show_failures() callers and exit-status code do):
 * the gate's verdicts must be in it, in every mode, whether CUnit's own
 * list holds a record already (fl/asserts fails an assertion) or is
 * empty (--filter leaves fl/asserts out) (issue 42, item 5).  It never
 * calls leakgate_cunit_main(): linked with leakgate::cunit, or run plain
 * under `leakgate run`.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

static void
clean(void)
{
    CU_ASSERT_TRUE(1);
}

static void
leaks(void)
{
    sink = malloc(40);
    sink = NULL;
    CU_ASSERT_TRUE(1);
}

static void
asserts(void)
{
    CU_ASSERT_EQUAL(1, 2);
}

int
main(void)
{
    CU_pSuite s;
    unsigned int n;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("fl", NULL, NULL);
    CU_add_test(s, "clean", clean);
    CU_add_test(s, "leaks", leaks);
    CU_add_test(s, "asserts", asserts);
    CU_basic_set_mode(CU_BRM_SILENT);
    CU_basic_run_tests();
    n = CU_get_number_of_failure_records();
    printf("records=%u tests_failed=%u\n", n, CU_get_number_of_tests_failed());
    for (CU_pFailureRecord f = CU_get_failure_list(); f; f = f->pNext)
        printf("FAILREC %s/%s %s:%u: %s\n", f->pSuite->pName,
               f->pTest ? f->pTest->pName : "-", f->strFileName,
               f->uiLineNumber, f->strCondition);
    CU_cleanup_registry();
    return n > 0 ? 1 : 0;
}
