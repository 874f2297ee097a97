/* SPDX-License-Identifier: MIT */
/*
 * sanitized_suite: one leaking test, built with a sanitizer (issue 39,
 * item 5).  With AddressSanitizer, whose allocator replaces malloc, the
 * gate refuses before the first test (exit 3, naming the sanitizer),
 * linked with leakgate::cunit and under `leakgate run`, in the default
 * mode and with --exact.  With UBSan alone the C library's malloc stays:
 * the leak is measured and fails (exit 1).
 * Built with SANITIZED_PLAIN it is a plain CUnit program.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdlib.h>
#ifndef SANITIZED_PLAIN
#include <leakgate/cunit.h>
#endif

static void *volatile sink;

static void
leak(void)
{
    sink = malloc(100);
    sink = NULL;
    CU_ASSERT_TRUE(1);
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("sanitized", NULL, NULL);
    CU_add_test(s, "leak", leak);
#ifdef SANITIZED_PLAIN
    (void)argc;
    (void)argv;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
#else
    return leakgate_cunit_main(argc, argv);
#endif
}
