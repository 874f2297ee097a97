/* SPDX-License-Identifier: MIT */
/*
 * The plain CUnit suites behind tests/run: a leaking test, a clean one, a
 * suite whose cleanup leaks, a failing assertion, a test that dies of
 * SIGSEGV midway through its suite, one that calls exit() and one that
 * is killed (SIGKILL: nothing in the program can catch it).  Lines that
 * reports must name carry a MARK:<name> comment (tests/run/CMakeLists.txt
 * looks them up).
 */
#include "suites.h"

#include <CUnit/CUnit.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

static void *kept; /* the suite-cleanup leak lives here */

static void
test_leak(void)
{
    char *p = malloc(100); /* MARK:leak */

    CU_ASSERT_PTR_NOT_NULL(p);
}

static void
test_clean(void)
{
    char *p = malloc(100);

    CU_ASSERT_PTR_NOT_NULL(p);
    free(p);
}

static int
init_fine(void)
{
    return 0;
}

static int
cleanup_leaks(void)
{
    kept = calloc(1, 300); /* MARK:cleanup */
    return kept ? 0 : 1;
}

static void
test_assertion_fails(void)
{
    CU_ASSERT_EQUAL(1 + 1, 3); /* MARK:assert */
}

static void
test_segfault(void)
{
    char *p = malloc(64);

    CU_ASSERT_PTR_NOT_NULL(p);
    raise(SIGSEGV);
    free(p);
}

static void
test_exit(void)
{
    exit(0);
}

/* As ctest's TIMEOUT or the OOM killer would end the program. */
static void
test_killed(void)
{
    raise(SIGKILL);
}

/* Growth that happens once (a lazily made table) beside a real leak: the
 * fast first pass's re-run leaves less, so a replay measures the test. */
static char *lazy_table;

static void
test_lazy_and_leak(void)
{
    char *p;

    if (!lazy_table)
        lazy_table = malloc(200); /* MARK:lazy */
    p = malloc(40);               /* MARK:lazy_leak */
    CU_ASSERT_PTR_NOT_NULL(p);
}

static void
test_never_runs(void)
{
    CU_FAIL("this test runs after the one that ended the program");
}

struct plain_test {
    const char *name;
    CU_TestFunc fn;
};

struct plain_suite {
    const char *name;
    CU_InitializeFunc init;
    CU_CleanupFunc cleanup;
    struct plain_test tests[4];
};

static const struct plain_suite suites[] = {
    {"leaky", NULL, NULL, {{"leak", test_leak}, {"clean", test_clean}}},
    {"cleanup_leak", init_fine, cleanup_leaks, {{"clean", test_clean}}},
    {"asserting", NULL, NULL, {{"fails", test_assertion_fails}}},
    {"once", NULL, NULL, {{"lazy_and_leak", test_lazy_and_leak}}},
    {"crash",
     NULL,
     NULL,
     {{"before", test_clean},
      {"segv", test_segfault},
      {"after", test_never_runs}}},
    {"exiting",
     NULL,
     NULL,
     {{"before", test_clean},
      {"calls_exit", test_exit},
      {"after", test_never_runs}}},
    /* Killed: the interposer cannot catch it; leakgate run replays the
     * waiting leak itself, and lists the test never reached. */
    {"leak_then_kill",
     NULL,
     NULL,
     {{"leak", test_leak},
      {"killed", test_killed},
      {"after", test_never_runs}}},
    {"clean_then_kill",
     NULL,
     NULL,
     {{"before", test_clean},
      {"killed", test_killed},
      {"after", test_never_runs}}},
    /* A leak waits for its replay when the same suite crashes. */
    {"leak_then_crash",
     NULL,
     NULL,
     {{"leak", test_leak}, {"segv", test_segfault}}},
};

static int
add_suite(const struct plain_suite *s)
{
    CU_pSuite suite = CU_add_suite(s->name, s->init, s->cleanup);

    if (!suite)
        return -1;
    for (size_t i = 0; i < 4 && s->tests[i].name; i++) {
        if (!CU_add_test(suite, s->tests[i].name, s->tests[i].fn))
            return -1;
    }
    return 0;
}

int
run_register(const char *which)
{
    size_t n = strlen(which);

    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        size_t len = strlen(suites[i].name);

        for (const char *p = which; p && p < which + n;) {
            const char *comma = strchr(p, ',');
            size_t plen = comma ? (size_t)(comma - p) : strlen(p);

            if (plen == len && strncmp(p, suites[i].name, len) == 0 &&
                add_suite(&suites[i]) < 0)
                return -1;
            p = comma ? comma + 1 : NULL;
        }
    }
    return 0;
}
