/* SPDX-License-Identifier: MIT */
/*
 * A test program on the CUnit look-alike runtime (lookalike_cunit.c),
 * not on libcunit: one test that leaks.
 */
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
int CU_initialize_registry(void);
void *CU_add_suite(const char *name, void *init, void *cleanup);
void *CU_add_test(void *suite, const char *name, test_fn fn);
int CU_basic_run_tests(void);
void CU_cleanup_registry(void);

static void *kept;

static void
test_leak(void)
{
    char *p = malloc(100);

    memset(p, 1, 100);
    (void)p;
}

static void
test_clean(void)
{
    kept = NULL;
}

int
main(void)
{
    void *s;

    if (CU_initialize_registry() != 0)
        return 2;
    s = CU_add_suite("lookalike", NULL, NULL);
    CU_add_test(s, "leak", test_leak);
    CU_add_test(s, "clean", test_clean);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
}
