/* SPDX-License-Identifier: MIT */
/*
 * Suite "clean": tests that must pass.  Runs after the leaking suites, so
 * it also proves that reporting earlier failures left nothing behind.
 */
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

static void *kept_for_later;

static NOINLINE void
keeper_alloc(void)
{
    kept_for_later = malloc(4000);
}

static void
test_empty(void)
{
}

static void
test_churn(void)
{
    void *slots[64] = {0};

    for (unsigned int i = 0; i < 100000; i++) {
        unsigned int k = (i * 7u) % 64u;

        free(slots[k]);
        slots[k] = malloc(16 + (i % 200));
    }
    for (unsigned int k = 0; k < 64; k++)
        free(slots[k]);
}

static void
test_keeps_for_later(void)
{
    keeper_alloc();
}

static void
test_frees_earlier(void)
{
    free(kept_for_later);
    kept_for_later = NULL;
}

static void
test_realloc_balanced(void)
{
    char *p = malloc(8);

    for (size_t n = 16; n < 100000 && p; n *= 2) {
        char *q = realloc(p, n);

        if (!q)
            break;
        p = q;
        memset(p, 0, n);
    }
    free(p);
}

void
corpus_register_clean(void)
{
    CU_pSuite s = CU_add_suite("clean", NULL, NULL);

    CU_add_test(s, "empty", test_empty);
    CU_add_test(s, "churn", test_churn);
    CU_add_test(s, "keeps_for_later", test_keeps_for_later);
    CU_add_test(s, "frees_earlier", test_frees_earlier);
    CU_add_test(s, "realloc_balanced", test_realloc_balanced);
}
