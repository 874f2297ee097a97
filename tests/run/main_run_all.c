/* SPDX-License-Identifier: MIT */
/*
 * A plain CUnit main that calls CU_run_all_tests() itself (no interface:
 * it prints its own one-line summary).  argv[1]: the suites to register.
 */
#include <CUnit/CUnit.h>
#include <stdio.h>

#include "suites.h"

int
main(int argc, char **argv)
{
    unsigned int failures;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    if (run_register(argc > 1 ? argv[1] : "leaky,cleanup_leak") < 0)
        return 2;
    CU_run_all_tests();
    failures = CU_get_number_of_failures();
    printf("run_all: %u tests run, %u failed assertions\n",
           CU_get_number_of_tests_run(), failures);
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
