/* SPDX-License-Identifier: MIT */
/*
 * odd_names: suite and test names with the characters CMake lists, its
 * bracket arguments, the shell and --filter's globs would split or read
 * (issue 39, item 4): ';', '[', ']', '$', '"', '#', '\', spaces, '*',
 * '?', "]==]", and brackets that do not pair ("[" or "]" alone).
 * leakgate_discover_tests() must register each intact, and each ctest test must
 * run exactly its own test: one of them leaks.
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>
#include <stdlib.h>

static void *volatile sink;

static void
clean(void)
{
    CU_ASSERT_TRUE(1);
}

static void
leak(void)
{
    sink = malloc(100);
    sink = NULL;
    CU_ASSERT_TRUE(1);
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("semi;colon", NULL, NULL);
    CU_add_test(s, "a;b", clean);
    CU_add_test(s, "leak;y", leak);
    s = CU_add_suite("br[ack]ets $x \"q\" #h", NULL, NULL);
    CU_add_test(s, "star*q?", clean);
    CU_add_test(s, "back\\slash sp ace", clean);
    CU_add_test(s, "close]==]bracket", clean);
    CU_add_test(s, "open[only", clean);
    CU_add_test(s, "only]shut;x", clean);
    return leakgate_cunit_main(argc, argv);
}
