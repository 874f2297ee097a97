/* SPDX-License-Identifier: MIT */
/*
 * Non-idempotent tests (issue 12), in every scope: suite state that the
 * suite init creates, the tests read and grow and the suite cleanup frees,
 * as real suites keep it.  Each test counts its runs and asserts that this
 * is its first (`CU_ASSERT_EQUAL(++runs, 1)`): a plain run passes every
 * assertion, a gate that ran a test twice in one process fails one, adds
 * an entry to the list and leaks the object a second run overwrites.
 *
 *   once           per-test windows; register and replace_latest retain
 *                  what the suite cleanup frees later (gate: fail)
 *   once_accepted  the same growth, accepted by a stack rule (pass)
 *   once_scoped    `scope: suite` (corpus.yaml): the suite's own window
 *                  sees the list freed (pass)
 *   once_fixture   setUp and tearDown count their runs too; the second test
 *                  checks the counts the first one left
 *
 * Expected gate verdicts: expected_verdicts.txt.  The parity checks
 * (parity_check.c) compare their CUnit results with a plain run.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

struct entry {
    struct entry *next;
    char name[24];
};

/* One suite's state: what init creates, tests grow and cleanup frees. */
struct suite_state {
    void *header;       /* made by init, freed by cleanup */
    struct entry *seen; /* pushed by tests, freed by cleanup */
    char *latest;       /* set once by replace_latest, freed by cleanup */
    int runs;           /* test runs in this process */
    int setups;         /* setUp runs in this process */
    int teardowns;      /* tearDown runs in this process */
    char *scratch;      /* setUp allocates, tearDown frees */
};

static struct suite_state plain_state;
static struct suite_state accepted_state;
static struct suite_state scoped_state;
static struct suite_state fixture_state;

static NOINLINE void
once_push(struct suite_state *st, const char *name)
{
    struct entry *e = malloc(sizeof *e); /* MARK:once_push */

    if (!e) {
        CU_FAIL("out of memory");
        return;
    }
    snprintf(e->name, sizeof e->name, "%s", name);
    e->next = st->seen;
    st->seen = e;
}

static int
state_init(struct suite_state *st)
{
    memset(st, 0, sizeof *st);
    st->header = malloc(32);
    return st->header ? 0 : 1;
}

static int
state_cleanup(struct suite_state *st)
{
    while (st->seen) {
        struct entry *next = st->seen->next;

        free(st->seen);
        st->seen = next;
    }
    free(st->latest);
    free(st->header);
    st->latest = NULL;
    st->header = NULL;
    return 0;
}

/* once: a plain suite. */
static int
once_init(void)
{
    return state_init(&plain_state);
}

static int
once_cleanup(void)
{
    return state_cleanup(&plain_state);
}

static void
test_once_register(void)
{
    CU_ASSERT_EQUAL(++plain_state.runs, 1);
    once_push(&plain_state, "register");
}

static void
test_once_count_only(void)
{
    static int count_only_runs;

    CU_ASSERT_EQUAL(++count_only_runs, 1);
}

static void
test_once_replace_latest(void)
{
    /* A second run in this process would overwrite (leak) the first. */
    CU_ASSERT_PTR_NULL(plain_state.latest);
    plain_state.latest = malloc(48); /* MARK:once_latest */
}

/* once_accepted: corpus.yaml accepts once_push's growth. */
static int
accepted_init(void)
{
    return state_init(&accepted_state);
}

static int
accepted_cleanup(void)
{
    return state_cleanup(&accepted_state);
}

static void
test_once_accepted_register(void)
{
    CU_ASSERT_EQUAL(++accepted_state.runs, 1);
    once_push(&accepted_state, "accepted");
}

/* once_scoped: scope: suite. */
static int
scoped_init(void)
{
    return state_init(&scoped_state);
}

static int
scoped_cleanup(void)
{
    return state_cleanup(&scoped_state);
}

static void
test_once_scoped_first(void)
{
    CU_ASSERT_EQUAL(++scoped_state.runs, 1);
    once_push(&scoped_state, "first");
}

static void
test_once_scoped_second(void)
{
    CU_ASSERT_EQUAL(++scoped_state.runs, 2);
    once_push(&scoped_state, "second");
}

/* once_fixture: setUp and tearDown count their runs. */
static int
fixture_init(void)
{
    return state_init(&fixture_state);
}

static int
fixture_cleanup(void)
{
    return state_cleanup(&fixture_state);
}

static void
fixture_setup(void)
{
    fixture_state.setups++;
    fixture_state.scratch = malloc(64);
}

static void
fixture_teardown(void)
{
    fixture_state.teardowns++;
    free(fixture_state.scratch);
    fixture_state.scratch = NULL;
}

static void
test_once_fixture_first(void)
{
    CU_ASSERT_EQUAL(++fixture_state.runs, 1);
    CU_ASSERT_EQUAL(fixture_state.setups, 1);
    CU_ASSERT_EQUAL(fixture_state.teardowns, 0);
    once_push(&fixture_state, "first");
}

static void
test_once_fixture_second(void)
{
    CU_ASSERT_EQUAL(++fixture_state.runs, 2);
    CU_ASSERT_EQUAL(fixture_state.setups, 2);
    CU_ASSERT_EQUAL(fixture_state.teardowns, 1);
    once_push(&fixture_state, "second");
}

void
corpus_register_once(void)
{
    CU_pSuite s = CU_add_suite("once", once_init, once_cleanup);

    CU_add_test(s, "register", test_once_register);
    CU_add_test(s, "count_only", test_once_count_only);
    CU_add_test(s, "replace_latest", test_once_replace_latest);
    s = CU_add_suite("once_accepted", accepted_init, accepted_cleanup);
    CU_add_test(s, "register", test_once_accepted_register);
    s = CU_add_suite("once_scoped", scoped_init, scoped_cleanup);
    CU_add_test(s, "first", test_once_scoped_first);
    CU_add_test(s, "second", test_once_scoped_second);
    s = CU_add_suite_with_setup_and_teardown("once_fixture", fixture_init,
                                             fixture_cleanup, fixture_setup,
                                             fixture_teardown);
    CU_add_test(s, "first", test_once_fixture_first);
    CU_add_test(s, "second", test_once_fixture_second);
}
