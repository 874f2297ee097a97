/* SPDX-License-Identifier: MIT */
/*
 * The corpus's plain twin: the same suites, run by CUnit's basic
 * interface (verbose) with glibc malloc and without leakgate.  The parity
 * checks compare its CUnit results with the gated runs', and run it under
 * `leakgate run` (an unmodified CUnit program).  Counts each test's runs
 * in this process and prints them after the run (corpus_runs.c).
 */
#include <CUnit/Basic.h>

#include "corpus.h"

void *volatile corpus_sink[64];

int
main(void)
{
    unsigned int failures;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    corpus_register_leaks();
    corpus_register_fixtures();
    corpus_register_rules();
    corpus_register_real();
    corpus_register_once();
    corpus_register_held();
    corpus_register_peak();
    corpus_register_clean();
    if (corpus_runs_wrap() != 0) {
        CU_cleanup_registry();
        return 3;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    corpus_runs_print();
    failures = CU_get_number_of_failures() + CU_get_number_of_failure_records();
    CU_cleanup_registry();
    return failures > 0 ? 1 : 0;
}
