/* SPDX-License-Identifier: MIT */
/*
 * A plain CUnit main with the basic interface that returns 0 whatever the
 * tests did.  argv[1]: the suites to register (suites.c).
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>

#include "suites.h"

int
main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    if (run_register(argc > 1 ? argv[1] : "leaky,cleanup_leak") < 0)
        return 2;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
}
