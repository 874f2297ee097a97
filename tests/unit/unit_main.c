/* SPDX-License-Identifier: MIT */
/* The runner of tests/unit/unit.h: one suite, every case, exit status by
 * CU_get_number_of_failures(). */
#include "unit.h"

#include <CUnit/Basic.h>
#include <stdio.h>

int main(void);

int
main(void)
{
    CU_pSuite suite;
    unsigned int failures;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    suite = CU_add_suite(unit_suite, NULL, NULL);
    if (!suite)
        return 2;
    for (const struct unit_case *c = unit_cases; c->name; c++) {
        if (!CU_add_test(suite, c->name, c->fn))
            return 2;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures() + CU_get_number_of_failure_records();
    printf("%u passed, %u failed\n",
           CU_get_number_of_tests_run() - CU_get_number_of_tests_failed(),
           CU_get_number_of_tests_failed());
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
