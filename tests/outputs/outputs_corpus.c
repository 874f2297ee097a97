/* SPDX-License-Identifier: MIT */
/*
 * outputs_corpus: a CUnit program of 211 tests for the shared-outputs
 * check (shared_outputs.sh): ctest runs each test in its own process
 * (leakgate_discover_tests), all of them writing one JUnit file and one
 * report directory.  10 suites of 20 tests that allocate and free; two of
 * them leak (the gate must fail them), one fails an assertion, and
 * "killed/self" sends itself SIGKILL, as ctest's TIMEOUT or the OOM
 * killer would (it must appear as an error).
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SUITES 10
#define TESTS 20

static void *kept[4];

static void
work(unsigned int suite, unsigned int test)
{
    char *p = malloc(64 + suite * 8 + test);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    snprintf(p, 64, "s%02u/t%02u", suite, test);
    CU_ASSERT_EQUAL(strlen(p), 7);
    /* The expected failures: two leaks and one assertion. */
    if (suite == 2 && test == 5)
        kept[0] = strdup(p);
    if (suite == 7 && test == 17)
        kept[1] = malloc(100);
    if (suite == 4 && test == 9)
        CU_ASSERT_EQUAL(strlen(p), 8);
    free(p);
}

/* One function per test: CUnit passes no argument. */
#define T(s, t)                                                                \
    static void test_##s##_##t(void)                                           \
    {                                                                          \
        work(s, t);                                                            \
    }
#define ROW(s)                                                                 \
    T(s, 0)                                                                    \
    T(s, 1)                                                                    \
    T(s, 2)                                                                    \
    T(s, 3)                                                                    \
    T(s, 4)                                                                    \
    T(s, 5)                                                                    \
    T(s, 6)                                                                    \
    T(s, 7)                                                                    \
    T(s, 8)                                                                    \
    T(s, 9)                                                                    \
    T(s, 10)                                                                   \
    T(s, 11)                                                                   \
    T(s, 12)                                                                   \
    T(s, 13)                                                                   \
    T(s, 14)                                                                   \
    T(s, 15)                                                                   \
    T(s, 16)                                                                   \
    T(s, 17)                                                                   \
    T(s, 18)                                                                   \
    T(s, 19)
ROW(0)
ROW(1)
ROW(2)
ROW(3)
ROW(4)
ROW(5)
ROW(6)
ROW(7)
ROW(8)
ROW(9)

#define F(s, t) test_##s##_##t
#define FROW(s)                                                                \
    {                                                                          \
        F(s, 0), F(s, 1), F(s, 2), F(s, 3), F(s, 4), F(s, 5), F(s, 6),         \
            F(s, 7), F(s, 8), F(s, 9), F(s, 10), F(s, 11), F(s, 12), F(s, 13), \
            F(s, 14), F(s, 15), F(s, 16), F(s, 17), F(s, 18), F(s, 19)         \
    }

static void (*const tests[SUITES][TESTS])(void) = {
    FROW(0), FROW(1), FROW(2), FROW(3), FROW(4),
    FROW(5), FROW(6), FROW(7), FROW(8), FROW(9)};

static void
killed_self(void)
{
    raise(SIGKILL);
}

int
main(int argc, char **argv)
{
    char name[32];

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    /* First, so that many processes merge after the killed one. */
    CU_add_test(CU_add_suite("killed", NULL, NULL), "self", killed_self);
    for (unsigned int s = 0; s < SUITES; s++) {
        CU_pSuite suite;

        snprintf(name, sizeof name, "s%02u", s);
        suite = CU_add_suite(name, NULL, NULL);
        for (unsigned int t = 0; t < TESTS; t++) {
            snprintf(name, sizeof name, "t%02u", t);
            CU_add_test(suite, name, tests[s][t]);
        }
    }
    return leakgate_cunit_main(argc, argv);
}
