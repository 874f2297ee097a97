/* SPDX-License-Identifier: MIT */
/*
 * outputs_many: one test source built into three binaries (a project that
 * builds its tests once per configuration), MANY_SUITES suites of
 * MANY_TESTS tests each, for many.sh: ctest -j8 runs every discovered
 * test in its own process, all writing one JUnit file, one JSON file and
 * one report directory.  Every test allocates and frees; only the binary
 * built with MANY_LEAKS leaks, in s01/t03.  Every test is the same
 * function: it knows itself from CUnit's current suite and test.
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MANY_LEAKS
#define MANY_LEAKS 0
#endif

static void *kept;

static void
test_any(void)
{
    const char *suite = CU_get_current_suite()->pName;
    const char *test = CU_get_current_test()->pName;
    size_t n = strlen(suite) + strlen(test) + 2;
    char *p = malloc(n);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    snprintf(p, n, "%s/%s", suite, test);
    CU_ASSERT_EQUAL(strlen(p), n - 1);
    if (MANY_LEAKS && strcmp(p, "s01/t03") == 0)
        kept = p;
    else
        free(p);
}

int
main(int argc, char **argv)
{
    char name[32];

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    for (unsigned int s = 0; s < MANY_SUITES; s++) {
        CU_pSuite suite;

        snprintf(name, sizeof name, "s%02u", s);
        suite = CU_add_suite(name, NULL, NULL);
        for (unsigned int t = 0; t < MANY_TESTS; t++) {
            snprintf(name, sizeof name, "t%02u", t);
            CU_add_test(suite, name, test_any);
        }
    }
    return leakgate_cunit_main(argc, argv);
}
