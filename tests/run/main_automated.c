/* SPDX-License-Identifier: MIT */
/*
 * A plain CUnit main with the automated interface (XML report files named
 * after argv[2]).  argv[1]: the suites to register (suites.c).
 */
#include <CUnit/Automated.h>
#include <CUnit/CUnit.h>

#include "suites.h"

int
main(int argc, char **argv)
{
    unsigned int failures;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    if (run_register(argc > 1 ? argv[1] : "leaky,cleanup_leak") < 0)
        return 2;
    CU_set_output_filename(argc > 2 ? argv[2] : "run_automated");
    CU_automated_run_tests();
    failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
