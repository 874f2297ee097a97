/* SPDX-License-Identifier: MIT */
/*
 * The plain runner: CUnit's basic interface, glibc malloc, no leakgate.
 *
 *   bench_<suite>_plain [--list] [--filter GLOB]
 *
 * --list (or LEAKGATE_LIST=1) prints "suite/test" lines and each suite's
 * "suite/[suite]" line, as a gated binary lists; --filter (or
 * LEAKGATE_FILTER) runs only the tests whose "suite/test" matches GLOB
 * (fnmatch, backslash escapes), each with its suite's init and cleanup:
 * what a project that runs one ctest test per CUnit test without leakgate
 * does (ci/bench's ctest suite registers them with the same script as
 * leakgate_discover_tests(), which passes both in the environment).
 */
#include <CUnit/Basic.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Print every "suite/test", or run the ones that match filter (with
 * filter NULL: every test, in one CUnit run).  Returns the failures. */
static unsigned int
list_or_run(const char *filter, int list)
{
    unsigned int failures = 0;
    char name[512];

    if (!list && !filter) {
        CU_basic_run_tests();
        return CU_get_number_of_failures() + CU_get_number_of_failure_records();
    }
    for (CU_pSuite s = CU_get_registry()->pSuite; s; s = s->pNext) {
        for (CU_pTest t = s->pTest; t; t = t->pNext) {
            snprintf(name, sizeof name, "%s/%s", s->pName, t->pName);
            if (list) {
                puts(name);
                if (!t->pNext)
                    printf("%s/[suite]\n", s->pName);
                continue;
            }
            if (fnmatch(filter, name, 0) != 0)
                continue;
            CU_basic_run_test(s, t);
            failures += CU_get_number_of_failures() +
                        CU_get_number_of_failure_records();
        }
    }
    return failures;
}

int
main(int argc, char **argv)
{
    const char *filter = getenv("LEAKGATE_FILTER");
    const char *list_env = getenv("LEAKGATE_LIST");
    int list = list_env && *list_env && strcmp(list_env, "0") != 0;
    unsigned int failures;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--list") == 0) {
            list = 1;
        } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            filter = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--list] [--filter GLOB]\n", argv[0]);
            return 2;
        }
    }
    bench_config_read(&bench_cfg);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    if (bench_register(&bench_cfg) != 0) {
        CU_cleanup_registry();
        return 3;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    failures = list_or_run(filter, list);
    CU_cleanup_registry();
    return failures > 0 ? 1 : 0;
}
