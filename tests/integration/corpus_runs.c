/* SPDX-License-Identifier: MIT */
/*
 * How many times each test function ran in this process, for the parity
 * checks (parity_check.c).  corpus_runs_wrap() puts a counting trampoline
 * in front of every test function of the CUnit registry before anything
 * runs it, so whoever calls a test (CUnit, leakgate's glue, a re-run in
 * the same process) goes through it; corpus_runs_print() then prints one
 * line per test that ran:
 *
 *     corpus runs<TAB>SUITE<TAB>TEST<TAB>N
 *
 * CUnit's own output cannot show a second run made inside one CUnit test
 * call, this count does.  The trampoline finds its test through
 * CU_get_current_test(), which CUnit sets before it calls setUp and the
 * test; it allocates nothing (fixed tables), so gated windows see no
 * difference but one stack frame.
 */
#include <stdio.h>

#include "corpus.h"

#define RUNS_MAX_TESTS 256
#define RUNS_NAME_MAX 64

struct counted_test {
    CU_pTest test;             /* the registry's test */
    CU_TestFunc fn;            /* its own test function */
    char suite[RUNS_NAME_MAX]; /* copied: the registry may be gone */
    char name[RUNS_NAME_MAX];  /* when the counts are printed */
    unsigned int runs;         /* calls of fn in this process */
};

static struct counted_test counted[RUNS_MAX_TESTS];
static size_t counted_len;
static unsigned int stray_runs; /* calls outside a known current test */

static void
counting_trampoline(void)
{
    CU_pTest t = CU_get_current_test();

    for (size_t i = 0; i < counted_len; i++) {
        if (counted[i].test == t) {
            counted[i].runs++;
            counted[i].fn();
            return;
        }
    }
    /* Not CUnit's current test: cannot tell which function to call. */
    stray_runs++;
}

int
corpus_runs_wrap(void)
{
    CU_pTestRegistry reg = CU_get_registry();

    if (!reg)
        return -1;
    for (CU_pSuite s = reg->pSuite; s; s = s->pNext) {
        for (CU_pTest t = s->pTest; t; t = t->pNext) {
            struct counted_test *c;

            if (counted_len == RUNS_MAX_TESTS)
                return -1;
            c = &counted[counted_len++];
            c->test = t;
            c->fn = t->pTestFunc;
            snprintf(c->suite, sizeof c->suite, "%s", s->pName);
            snprintf(c->name, sizeof c->name, "%s", t->pName);
            t->pTestFunc = counting_trampoline;
        }
    }
    return 0;
}

void
corpus_runs_print(void)
{
    fflush(stdout);
    printf("\n");
    for (size_t i = 0; i < counted_len; i++) {
        if (counted[i].runs > 0)
            printf("corpus runs\t%s\t%s\t%u\n", counted[i].suite,
                   counted[i].name, counted[i].runs);
    }
    if (stray_runs > 0)
        printf("corpus runs\t?\t?\t%u\n", stray_runs);
    fflush(stdout);
}
