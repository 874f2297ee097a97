/* SPDX-License-Identifier: MIT */
/*
 * A run that runs no test: suite "empty" has none, or (NO_TEST_INACTIVE
 * set) its only test, which leaks, is inactive.  Only the suite's init
 * and cleanup are measured: not a pass (issue 39 item 1).  Built linked
 * with leakgate::cunit, and plain (NO_TEST_PLAIN) for leakgate run.
 */
#include <stdlib.h>
#include <string.h>

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#ifndef NO_TEST_PLAIN
#include <leakgate/cunit.h>
#endif

static void
test_leak(void)
{
    char *p = malloc(100);

    memset(p, 1, 100);
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    (void)argc;
    (void)argv;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("empty", NULL, NULL);
    if (!s)
        return 2;
    if (getenv("NO_TEST_INACTIVE"))
        CU_set_test_active(CU_add_test(s, "off", test_leak), CU_FALSE);
#ifdef NO_TEST_PLAIN
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
#else
    return leakgate_cunit_main(argc, argv);
#endif
}
