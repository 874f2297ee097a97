/* SPDX-License-Identifier: MIT */
/*
 * The "many-small" suite: 2,000 near-empty tests (20 CUnit suites of 100;
 * 100 tests in 2 suites with BENCH_SIZE=small), measuring the gate's fixed
 * cost per test.  Four kinds of body, cycled: an assertion, a string
 * comparison, one malloc/free, a formatted string on the stack.  With
 * BENCH_LEAK=1, small_00/leak leaks one byte.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define SUITES 20
#define PER_SUITE 100

static void
test_assert(void)
{
    CU_ASSERT_TRUE(1);
}

static void
test_compare(void)
{
    CU_ASSERT_EQUAL(strcmp("leakgate", "leakgate"), 0);
}

static void
test_malloc(void)
{
    char *volatile p = malloc(32);

    CU_ASSERT_PTR_NOT_NULL(p);
    free(p);
}

static void
test_format(void)
{
    char buf[32];

    CU_ASSERT(snprintf(buf, sizeof buf, "%d-%s", 42, "x") == 4);
}

static void
test_leak(void)
{
    char *volatile p = malloc(1); /* BENCH-LEAK:small */

    CU_ASSERT_PTR_NOT_NULL(p);
}

static char names[SUITES][PER_SUITE][16];
static char suite_names[SUITES][24];

int
bench_register(const struct bench_config *cfg)
{
    static const CU_TestFunc bodies[] = {test_assert, test_compare, test_malloc,
                                         test_format};
    int nsuites = cfg->small ? 2 : SUITES;
    int per_suite = cfg->small ? 50 : PER_SUITE;

    for (int s = 0; s < nsuites; s++) {
        CU_pSuite suite;

        snprintf(suite_names[s], sizeof suite_names[s], "small_%02d", s);
        suite = CU_add_suite(suite_names[s], NULL, NULL);
        if (!suite)
            return -1;
        for (int t = 0; t < per_suite; t++) {
            snprintf(names[s][t], sizeof names[s][t], "t%03d", t);
            if (!CU_add_test(suite, names[s][t], bodies[t % 4]))
                return -1;
        }
        if (s == 0 && cfg->leak && !CU_add_test(suite, "leak", test_leak))
            return -1;
    }
    return 0;
}
