/* SPDX-License-Identifier: MIT */
/*
 * Force-included (-include) into examples/strtab/test_strtab.c to build
 * the example suite WITHOUT leakgate, its test code unchanged:
 * <leakgate/cunit.h> is skipped (its include guard is defined here) and
 * `return leakgate_cunit_main(argc, argv);` becomes the plain CUnit main
 * a project had before adopting leakgate.
 */
#ifndef RUN_PLAIN_MAIN_H
#define RUN_PLAIN_MAIN_H

#define LEAKGATE_CUNIT_H

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

static int
leakgate_cunit_main(int argc, char **argv)
{
    unsigned int failures;

    (void)argc;
    (void)argv;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}

#endif
