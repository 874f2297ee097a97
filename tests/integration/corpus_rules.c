/* SPDX-License-Identifier: MIT */
/*
 * Suites "rules" (per-stack rules under and over their limits, ignore
 * rules, total_limit) and "warmup" (lazy initialisation with and without
 * warm-up runs).  Their limits are in corpus.yaml.
 */
#include <stdlib.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

static NOINLINE void
rule_alloc(size_t n)
{
    corpus_sink[10] = malloc(n); /* MARK:rule_alloc */
}

static NOINLINE void
ignored_alloc(void)
{
    corpus_sink[11] = malloc(128);
}

static NOINLINE void
other_alloc(void)
{
    corpus_sink[12] = malloc(16); /* MARK:other_alloc */
}

static void
test_rules_under(void)
{
    rule_alloc(512);
}

static void
test_rules_over(void)
{
    rule_alloc(512);
}

static void
test_rules_ignored(void)
{
    ignored_alloc();
}

static void
test_rules_rule_does_not_cover_other(void)
{
    rule_alloc(512);
    other_alloc();
}

static void
test_rules_total_over(void)
{
    rule_alloc(512);
    rule_alloc(512);
}

static void *lazy_cache_a;
static void *lazy_cache_b;
static void *lazy_cache_c;

static NOINLINE void
lazy_lookup(void **cache)
{
    if (!*cache)
        *cache = malloc(1024); /* MARK:lazy */
}

static void
test_warmup_lazy_with_warmup(void)
{
    lazy_lookup(&lazy_cache_a);
}

static void
test_warmup_lazy_without_warmup(void)
{
    lazy_lookup(&lazy_cache_b);
}

static void
test_repeat_lazy_is_one_time(void)
{
    lazy_lookup(&lazy_cache_c);
}

static NOINLINE void
repeat_leak(void)
{
    static unsigned int next;

    corpus_sink[30 + next++ % 8] = malloc(72); /* MARK:repeat_leak */
}

static void
test_repeat_leak_every_run(void)
{
    repeat_leak();
}

void
corpus_register_rules(void)
{
    CU_pSuite s = CU_add_suite("rules", NULL, NULL);

    CU_add_test(s, "under_limit", test_rules_under);
    CU_add_test(s, "over_limit", test_rules_over);
    CU_add_test(s, "ignored", test_rules_ignored);
    CU_add_test(s, "rule_does_not_cover_other",
                test_rules_rule_does_not_cover_other);
    CU_add_test(s, "total_over", test_rules_total_over);
    s = CU_add_suite("warmup", NULL, NULL);
    CU_add_test(s, "lazy_with_warmup", test_warmup_lazy_with_warmup);
    CU_add_test(s, "lazy_without_warmup", test_warmup_lazy_without_warmup);
    s = CU_add_suite("repeat", NULL, NULL);
    CU_add_test(s, "lazy_is_one_time", test_repeat_lazy_is_one_time);
    CU_add_test(s, "leak_every_run", test_repeat_leak_every_run);
}
