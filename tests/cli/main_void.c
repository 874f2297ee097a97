/* SPDX-License-Identifier: MIT */
/*
 * A CUnit suite with the old-style `int main(void)`: no argc/argv to hand
 * over, so it ends with leakgate_cunit_main(0, NULL), and leakgate reads
 * the options from the process's own command line (and the environment).
 * One test leaks on purpose.
 */
#include <CUnit/CUnit.h>
#include <stdlib.h>
#include <string.h>

#include <leakgate/cunit.h>

static char *kept;

static void
test_clean(void)
{
    char *p = malloc(32);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memset(p, 0, 32);
    free(p);
}

static void
test_leak(void)
{
    kept = malloc(100); /* MARK:void_leak */
    CU_ASSERT_PTR_NOT_NULL(kept);
}

int
main(void)
{
    CU_pSuite suite;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    suite = CU_add_suite("old", NULL, NULL);
    CU_add_test(suite, "clean", test_clean);
    CU_add_test(suite, "leak", test_leak);
    return leakgate_cunit_main(0, NULL);
}
