/* SPDX-License-Identifier: MIT */
/*
 * outputs_twin: one test source built into three binaries (a project
 * that builds its tests once per configuration), for by_binary.sh: the
 * same suite and test names in each, a leak in twin/work of the binary
 * built with TWIN_LEAKS only.  Shared outputs must keep the three apart.
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>
#include <stdlib.h>

#ifndef TWIN_LEAKS
#define TWIN_LEAKS 0
#endif

static void *kept;

static void
test_work(void)
{
    void *p = malloc(100);

    CU_ASSERT_PTR_NOT_NULL(p);
    if (TWIN_LEAKS)
        kept = p;
    else
        free(p);
}

static void
test_other(void)
{
    CU_PASS("nothing kept");
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("twin", NULL, NULL);
    CU_add_test(s, "work", test_work);
    CU_add_test(s, "other", test_other);
    return leakgate_cunit_main(argc, argv);
}
