/* SPDX-License-Identifier: MIT */
/*
 * A test program on the CUnit look-alike runtime (lookalike_cunit.c),
 * not on libcunit: one test that leaks.  Built with LOOKALIKE_LINKED it
 * also links leakgate::cunit (and so libcunit, after the look-alike) and
 * ends as README step 3 says, with leakgate_cunit_main(); with
 * LOOKALIKE_OWN_RUN it calls the look-alike's CU_basic_run_tests() itself.
 */
#include <stdlib.h>
#include <string.h>

typedef void (*test_fn)(void);
int CU_initialize_registry(void);
void *CU_add_suite(const char *name, void *init, void *cleanup);
void *CU_add_test(void *suite, const char *name, test_fn fn);
int CU_basic_run_tests(void);
void CU_cleanup_registry(void);
#ifdef LOOKALIKE_LINKED
int leakgate_cunit_main(int argc, char **argv);
#endif

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
main(int argc, char **argv)
{
    void *s;

    (void)argc;
    (void)argv;
    if (CU_initialize_registry() != 0)
        return 2;
    s = CU_add_suite("lookalike", NULL, NULL);
    CU_add_test(s, "leak", test_leak);
    CU_add_test(s, "clean", test_clean);
#if defined(LOOKALIKE_LINKED) && !defined(LOOKALIKE_OWN_RUN)
    return leakgate_cunit_main(argc, argv);
#else
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
#endif
}
