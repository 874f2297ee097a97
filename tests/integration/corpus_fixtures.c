/* SPDX-License-Identifier: MIT */
/*
 * Suites "fixture" (setUp allocates, tearDown forgets), "suite_leak"
 * (init allocates, cleanup forgets), "fatal" (a fatal assertion, then a
 * clean test) and "scoped" (tests add to a context the suite cleanup
 * frees; judged with scope: suite).
 */
#include <stdlib.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

struct node {
    struct node *next;
    char payload[40];
};

static char *fixture_buffer;

static NOINLINE void
fixture_setup(void)
{
    fixture_buffer = malloc(300); /* MARK:fixture */
}

static void
fixture_teardown(void)
{
    fixture_buffer = NULL; /* forgets to free */
}

static void
test_fixture_uses(void)
{
    CU_ASSERT_PTR_NOT_NULL(fixture_buffer);
}

static void *suite_state;

static NOINLINE int
suite_leak_init(void)
{
    suite_state = malloc(700); /* MARK:suite_init */
    return suite_state ? 0 : 1;
}

static int
suite_leak_cleanup(void)
{
    suite_state = NULL; /* forgets to free */
    return 0;
}

static void
test_suite_leak_clean(void)
{
    CU_ASSERT_PTR_NOT_NULL(suite_state);
}

static int teardown_runs;
static int setup_runs;
static char *fatal_scratch;

static void
fatal_setup(void)
{
    setup_runs++;
    fatal_scratch = NULL;
}

static void
fatal_teardown(void)
{
    teardown_runs++;
}

static void
test_fatal_stops(void)
{
    char *scratch = malloc(64);

    fatal_scratch = scratch;
    CU_ASSERT_FATAL(scratch == NULL); /* fails: the test stops here */
    free(scratch);
}

static void
test_fatal_next_is_clean(void)
{
    char *p = malloc(32);

    /* Every earlier test's teardown ran, the fatal one's included. */
    CU_ASSERT_EQUAL(teardown_runs, setup_runs - 1);
    free(p);
}

static struct node *context;

static NOINLINE void
context_add(void)
{
    struct node *n = malloc(sizeof *n); /* MARK:context */

    if (n) {
        n->next = context;
        context = n;
    }
}

static int
scoped_cleanup(void)
{
    while (context) {
        struct node *next = context->next;

        free(context);
        context = next;
    }
    return 0;
}

static void
test_scoped_add_one(void)
{
    context_add();
}

static void
test_scoped_add_two(void)
{
    context_add();
    context_add();
}

static int
shared_cleanup(void)
{
    return scoped_cleanup();
}

/* A session made by the suite's init and closed by a test; the cleanup
 * closes it only if it is still open.  Nothing is lost: the suite window
 * must not count the init's allocation (valgrind finds nothing). */
static void *session;

static NOINLINE int
session_init(void)
{
    session = malloc(200); /* MARK:session_open */
    return session ? 0 : 1;
}

static int
session_cleanup(void)
{
    free(session);
    session = NULL;
    return 0;
}

static void
test_session_close(void)
{
    CU_ASSERT_PTR_NOT_NULL(session);
    free(session);
    session = NULL;
}

void
corpus_register_fixtures(void)
{
    CU_pSuite s;

    s = CU_add_suite_with_setup_and_teardown("fixture", NULL, NULL,
                                             fixture_setup, fixture_teardown);
    CU_add_test(s, "uses_fixture", test_fixture_uses);
    s = CU_add_suite("suite_leak", suite_leak_init, suite_leak_cleanup);
    CU_add_test(s, "clean", test_suite_leak_clean);
    s = CU_add_suite_with_setup_and_teardown("fatal", NULL, NULL, fatal_setup,
                                             fatal_teardown);
    CU_add_test(s, "stops", test_fatal_stops);
    CU_add_test(s, "next_is_clean", test_fatal_next_is_clean);
    s = CU_add_suite("scoped", NULL, scoped_cleanup);
    CU_add_test(s, "add_one", test_scoped_add_one);
    CU_add_test(s, "add_two", test_scoped_add_two);
    /* The same pattern without scope: suite: each test fails. */
    s = CU_add_suite("unscoped", NULL, shared_cleanup);
    CU_add_test(s, "add_one", test_scoped_add_one);
    s = CU_add_suite("session", session_init, session_cleanup);
    CU_add_test(s, "close", test_session_close);
}
