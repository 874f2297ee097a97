/* SPDX-License-Identifier: MIT */
/* The plain runner: CUnit's basic interface, glibc malloc, no leakgate. */
#include <CUnit/Basic.h>

#include "bench.h"

int
main(void)
{
    unsigned int failures;

    bench_config_read(&bench_cfg);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    if (bench_register(&bench_cfg) != 0) {
        CU_cleanup_registry();
        return 3;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    failures = CU_get_number_of_failures() + CU_get_number_of_failure_records();
    CU_cleanup_registry();
    return failures > 0 ? 1 : 0;
}
