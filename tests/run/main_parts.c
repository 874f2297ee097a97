/* SPDX-License-Identifier: MIT */
/*
 * A plain CUnit main that runs its registry piece by piece: the first suite
 * with CU_run_suite(), every test of the other suites with CU_run_test(),
 * one call each.  argv[1]: the suites to register; argv[2], when given:
 * only that test ("suite/test"), with CU_run_test(), and nothing else.
 */
#include <CUnit/CUnit.h>
#include <CUnit/TestDB.h>
#include <stdio.h>
#include <string.h>

#include "suites.h"

int
main(int argc, char **argv)
{
    CU_pSuite first;
    unsigned int failures = 0;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    if (run_register(argc > 1 ? argv[1] : "leaky,cleanup_leak") < 0)
        return 2;
    first = CU_get_registry()->pSuite;
    if (argc > 2) {
        char name[256];

        for (CU_pSuite s = first; s; s = s->pNext) {
            for (CU_pTest t = s->pTest; t; t = t->pNext) {
                snprintf(name, sizeof name, "%s/%s", s->pName, t->pName);
                if (strcmp(name, argv[2]) == 0)
                    CU_run_test(s, t);
            }
        }
        printf("parts: %s run\n", argv[2]);
        CU_cleanup_registry();
        return 0;
    }
    if (first) {
        CU_run_suite(first);
        failures += CU_get_number_of_failures();
    }
    for (CU_pSuite s = first ? first->pNext : NULL; s; s = s->pNext) {
        for (CU_pTest t = s->pTest; t; t = t->pNext) {
            CU_run_test(s, t);
            failures += CU_get_number_of_failures();
        }
    }
    printf("parts: %u failed assertions\n", failures);
    CU_cleanup_registry();
    return 0;
}
