/* SPDX-License-Identifier: MIT */
/*
 * An older test main, as many projects have: `int main(void)`.  Adopting
 * leakgate changed its last lines only (README step 3):
 *
 *     CU_basic_set_mode(CU_BRM_VERBOSE);
 *     CU_basic_run_tests();
 *     unsigned int failed = CU_get_number_of_failures();
 *     CU_cleanup_registry();
 *     return failed ? 1 : 0;
 *
 * became `return leakgate_cunit_main(0, NULL);`: with argc 0 and argv
 * NULL, leakgate reads the options from the program's own command line.
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>

#include "tests.h"

int
main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return CU_get_error();
    add_parser_tests();
    return leakgate_cunit_main(0, NULL);
}
