/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/policy.c: resolution of a window's settings
 * (defaults, suites by suite name, tests by "suite/test", most specific
 * wins, first written breaks ties, fall-through), names holding glob
 * metacharacters, frame matching as an outer-to-inner subsequence, and
 * judging (ignore, stack rules, stack_limit, total_limit).
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#include "error.h"
#include "unit.h"
#include "util.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static struct leakgate_config *
load(const char *yaml)
{
    struct leakgate_config *cfg = NULL;

    if (leakgate_config__parse(&cfg, yaml, strlen(yaml), "p.yaml", NULL) < 0)
        fprintf(stderr, "\n  bad test config: %s\n", leakgate_error_last());
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    return cfg;
}

static struct leakgate_policy_settings
resolve(const struct leakgate_config *cfg, const char *suite, const char *test)
{
    struct leakgate_policy_settings s;

    memset(&s, 0xA5, sizeof s); /* resolve must set every field */
    leakgate_policy__resolve(&s, cfg, suite, test);
    return s;
}

static void
test_policy__resolve_without_config(void)
{
    struct leakgate_config *empty = NULL;
    struct leakgate_policy_settings s = resolve(NULL, "s", "t");

    CU_ASSERT_EQUAL(s.stack_limit, 0);
    CU_ASSERT(s.total_unlimited);
    CU_ASSERT_EQUAL(s.warmup, 0);
    CU_ASSERT(s.rerun);
    CU_ASSERT_FALSE(s.suite_scope);
    CU_ASSERT_PTR_NULL(s.test_entry);
    CU_ASSERT_PTR_NULL(s.suite_entry);
    CU_ASSERT_EQUAL_FATAL(leakgate_config__new_default(&empty), 0);
    s = resolve(empty, "s", NULL);
    CU_ASSERT_EQUAL(s.stack_limit, 0);
    CU_ASSERT(s.total_unlimited);
    CU_ASSERT_PTR_NULL(s.suite_entry);
    leakgate_config__free(empty);
}

/* peak_limit: most specific wins; ~ turns it off; none: not limited. */
static void
test_policy__resolve_peak_limit(void)
{
    struct leakgate_config *cfg = load("version: 1\ndefaults:\n"
                                       "  peak_limit: 1 MiB\n"
                                       "suites:\n"
                                       "  big: {peak_limit: 64 MiB}\n"
                                       "  free: {peak_limit: ~}\n"
                                       "tests:\n"
                                       "  'big/huge': {peak_limit: 1 GiB}\n");
    struct leakgate_policy_settings s = resolve(cfg, "s", "t");

    CU_ASSERT(s.peak_limited);
    CU_ASSERT_EQUAL(s.peak_limit, 1 << 20);
    CU_ASSERT_PTR_EQUAL(s.peak_entry, &cfg->defaults);
    s = resolve(cfg, "big", "t");
    CU_ASSERT_EQUAL(s.peak_limit, 64 << 20);
    CU_ASSERT_PTR_EQUAL(s.peak_entry, s.suite_entry);
    s = resolve(cfg, "big", "huge");
    CU_ASSERT_EQUAL(s.peak_limit, 1 << 30);
    CU_ASSERT_PTR_EQUAL(s.peak_entry, s.test_entry);
    s = resolve(cfg, "free", "t");
    CU_ASSERT_FALSE(s.peak_limited);
    CU_ASSERT_FALSE(resolve(NULL, "s", "t").peak_limited);
    leakgate_config__free(cfg);
}

static void
test_policy__resolve_defaults(void)
{
    struct leakgate_config *cfg = load("version: 1\ndefaults:\n"
                                       "  stack_limit: 10\n"
                                       "  total_limit: 20\n"
                                       "  warmup: 2\n"
                                       "  rerun: false\n"
                                       "tests:\n"
                                       "  's/again': {rerun: true}\n");
    struct leakgate_policy_settings s = resolve(cfg, "s", "t");

    CU_ASSERT_FALSE(s.rerun);
    CU_ASSERT(resolve(cfg, "s", "again").rerun);
    CU_ASSERT_EQUAL(s.stack_limit, 10);
    CU_ASSERT_FALSE(s.total_unlimited);
    CU_ASSERT_EQUAL(s.total_limit, 20);
    CU_ASSERT_EQUAL(s.warmup, 2);
    CU_ASSERT_PTR_NULL(s.test_entry);
    leakgate_config__free(cfg);
}

static void
test_policy__suites_match_suite_name(void)
{
    struct leakgate_config *cfg = load("version: 1\n"
                                       "suites:\n"
                                       "  parser/*: {stack_limit: 1}\n"
                                       "  parser: {stack_limit: 2}\n"
                                       "tests:\n"
                                       "  '*': {stack_limit: 3}\n");
    struct leakgate_policy_settings s = resolve(cfg, "parser", "t");

    /* The glob parser/STAR would match "parser/t", but suites entries see
     * the suite name only. */
    CU_ASSERT_PTR_EQUAL(s.suite_entry, &cfg->suites[1]);
    CU_ASSERT_PTR_EQUAL(s.test_entry, &cfg->tests[0]);
    CU_ASSERT_EQUAL(s.stack_limit, 3);
    /* The suite's own window sees suites entries and defaults only. */
    s = resolve(cfg, "parser", NULL);
    CU_ASSERT_PTR_NULL(s.test_entry);
    CU_ASSERT_EQUAL(s.stack_limit, 2);
    s = resolve(cfg, "parser/x", NULL);
    CU_ASSERT_PTR_EQUAL(s.suite_entry, &cfg->suites[0]);
    s = resolve(cfg, "lexer", NULL);
    CU_ASSERT_PTR_NULL(s.suite_entry);
    CU_ASSERT_EQUAL(s.stack_limit, 0);
    leakgate_config__free(cfg);
}

static void
test_policy__most_specific_wins(void)
{
    struct leakgate_config *cfg = load("version: 1\n"
                                       "tests:\n"
                                       "  '*': {stack_limit: 1}\n"
                                       "  p/*: {stack_limit: 2}\n"
                                       "  p/test_*: {stack_limit: 3}\n"
                                       "  p/test_a: {stack_limit: 4}\n"
                                       "  p/test_?: {stack_limit: 5}\n");

    CU_ASSERT_EQUAL(resolve(cfg, "p", "test_a").stack_limit, 4);
    /* "p/test_?" (7 literals) beats "p/test_*" (7) only by order: the
     * first written wins the tie. */
    CU_ASSERT_EQUAL(resolve(cfg, "p", "test_b").stack_limit, 3);
    CU_ASSERT_EQUAL(resolve(cfg, "p", "test_bb").stack_limit, 3);
    CU_ASSERT_EQUAL(resolve(cfg, "p", "other").stack_limit, 2);
    CU_ASSERT_EQUAL(resolve(cfg, "q", "x").stack_limit, 1);
    leakgate_config__free(cfg);
    cfg = load("version: 1\ntests:\n"
               "  p/*b: {stack_limit: 1}\n"
               "  p/a*: {stack_limit: 2}\n"
               "  p/a: {stack_limit: 3}\n"
               "  p/ab: {stack_limit: 4}\n");
    CU_ASSERT_EQUAL(resolve(cfg, "p", "axb").stack_limit, 1);
    CU_ASSERT_EQUAL(resolve(cfg, "p", "ax").stack_limit, 2);
    CU_ASSERT_EQUAL(resolve(cfg, "p", "ab").stack_limit, 4);
    CU_ASSERT_EQUAL(resolve(cfg, "p", "a").stack_limit, 3);
    leakgate_config__free(cfg);
}

static void
test_policy__keys_fall_through(void)
{
    struct leakgate_config *cfg = load("version: 1\n"
                                       "defaults:\n"
                                       "  stack_limit: 10\n"
                                       "  total_limit: 100\n"
                                       "  warmup: 1\n"
                                       "suites:\n"
                                       "  s: {total_limit: 50, scope: suite}\n"
                                       "  '*': {scope: suite, warmup: 7}\n"
                                       "  u: {scope: test}\n"
                                       "tests:\n"
                                       "  s/t: {stack_limit: 5}\n"
                                       "  s/n: {total_limit: ~, warmup: 0}\n");
    struct leakgate_policy_settings s = resolve(cfg, "s", "t");

    CU_ASSERT_EQUAL(s.stack_limit, 5);  /* tests entry */
    CU_ASSERT_FALSE(s.total_unlimited); /* suites entry */
    CU_ASSERT_EQUAL(s.total_limit, 50);
    CU_ASSERT_EQUAL(s.warmup, 1); /* defaults */
    CU_ASSERT(s.suite_scope);
    CU_ASSERT_PTR_EQUAL(s.test_entry, &cfg->tests[0]);
    CU_ASSERT_PTR_EQUAL(s.suite_entry, &cfg->suites[0]);
    s = resolve(cfg, "s", "n");
    CU_ASSERT(s.total_unlimited);
    CU_ASSERT_EQUAL(s.warmup, 0);
    CU_ASSERT_EQUAL(s.stack_limit, 10);
    s = resolve(cfg, "v", "t");
    CU_ASSERT(s.suite_scope);
    CU_ASSERT_EQUAL(s.warmup, 7);
    CU_ASSERT_EQUAL(s.total_limit, 100);
    s = resolve(cfg, "u", NULL);
    CU_ASSERT_FALSE(s.suite_scope);
    CU_ASSERT_EQUAL(s.warmup, 1);
    leakgate_config__free(cfg);
}

static void
test_policy__names_with_glob_characters(void)
{
    struct leakgate_config *cfg = load("version: 1\n"
                                       "suites:\n"
                                       "  'a[1]': {stack_limit: 9}\n"
                                       "tests:\n"
                                       "  's/t[1]': {stack_limit: 1}\n"
                                       "  's/*': {stack_limit: 2}\n"
                                       "  's/t[12]': {stack_limit: 3}\n"
                                       "  's/op\\*': {stack_limit: 4}\n");

    /* Equal strings match and count as exact, whatever they contain. */
    CU_ASSERT_EQUAL(resolve(cfg, "s", "t[1]").stack_limit, 1);
    CU_ASSERT_EQUAL(resolve(cfg, "a[1]", NULL).stack_limit, 9);
    CU_ASSERT_EQUAL(resolve(cfg, "a1", NULL).stack_limit, 9);
    /* Otherwise the pattern is a glob. */
    CU_ASSERT_EQUAL(resolve(cfg, "s", "t1").stack_limit, 1);
    CU_ASSERT_EQUAL(resolve(cfg, "s", "t2").stack_limit, 3);
    CU_ASSERT_EQUAL(resolve(cfg, "s", "t3").stack_limit, 2);
    CU_ASSERT_EQUAL(resolve(cfg, "s", "op*").stack_limit, 4);
    CU_ASSERT_EQUAL(resolve(cfg, "s", "opx").stack_limit, 2);
    leakgate_config__free(cfg);
}

static void
test_policy__long_names(void)
{
    static char suite[5001], yaml[5200];
    struct leakgate_config *cfg;

    memset(suite, 'x', sizeof suite - 1);
    snprintf(yaml, sizeof yaml,
             "version: 1\ntests:\n  '*': {stack_limit: 1}\n"
             "  ? '%s/t'\n  : {stack_limit: 2}\n",
             suite);
    cfg = load(yaml);
    /* Too long for the stack buffer: exact names still match... */
    CU_ASSERT_EQUAL(resolve(cfg, suite, "t").stack_limit, 2);
    /* ... globs do not (documented), and nothing overflows. */
    CU_ASSERT_EQUAL(resolve(cfg, suite, "u").stack_limit, 0);
    CU_ASSERT_EQUAL(resolve(cfg, "s", "t").stack_limit, 1);
    /* The boundary: "suite/u" plus its NUL in 4096 bytes still globs. */
    suite[4093] = '\0';
    CU_ASSERT_EQUAL(resolve(cfg, suite, "u").stack_limit, 1);
    suite[4093] = 'x';
    suite[4094] = '\0';
    CU_ASSERT_EQUAL(resolve(cfg, suite, "u").stack_limit, 0);
    leakgate_config__free(cfg);
}

static void
test_policy__frames_match(void)
{
    /* innermost first: main calls parse calls cache_insert calls wrap */
    static const char *const fns[] = {"wrap", "cache_insert", "parse", "main"};
    static const char *const rec[] = {"f", "main", "g", "main"};
    static const char *const unknown[] = {NULL, "f", NULL};
    static char s_main[] = "main", s_ins[] = "cache_insert";
    static char s_parse[] = "parse", s_glob[] = "*_insert", s_nope[] = "nope";
    static char s_star[] = "*", s_op[] = "operator[]";
    char *const g_main_ins[] = {s_main, s_ins};
    char *const g_ins_main[] = {s_ins, s_main};
    char *const g_three[] = {s_main, s_parse, s_ins};
    char *const g_glob[] = {s_glob};
    char *const g_nope[] = {s_nope};
    char *const g_main2[] = {s_main, s_main};
    char *const g_star[] = {s_star};
    char *const g_star2[] = {s_star, s_star};
    char *const g_op[] = {s_op};
    static const char *const op[] = {"operator[]"};

    CU_ASSERT(leakgate_policy__frames_match(g_main_ins, 2, fns, 4));
    CU_ASSERT_FALSE(leakgate_policy__frames_match(g_ins_main, 2, fns, 4));
    CU_ASSERT(leakgate_policy__frames_match(g_three, 3, fns, 4));
    CU_ASSERT(leakgate_policy__frames_match(g_glob, 1, fns, 4));
    CU_ASSERT_FALSE(leakgate_policy__frames_match(g_nope, 1, fns, 4));
    CU_ASSERT_FALSE(leakgate_policy__frames_match(g_main2, 2, fns, 4));
    CU_ASSERT(leakgate_policy__frames_match(g_main2, 2, rec, 4));
    CU_ASSERT(leakgate_policy__frames_match(g_star, 1, unknown, 3));
    CU_ASSERT_FALSE(leakgate_policy__frames_match(g_star2, 2, unknown, 3));
    CU_ASSERT_FALSE(leakgate_policy__frames_match(g_star, 1, unknown, 0));
    CU_ASSERT_FALSE(leakgate_policy__frames_match(g_star, 0, fns, 4));
    CU_ASSERT(leakgate_policy__frames_match(g_op, 1, op, 1));
}

static const char judge_yaml[] =
    "version: 1\n"
    "defaults: {stack_limit: 100, total_limit: 1000}\n"
    "suites:\n"
    "  s:\n"
    "    stacks:\n"
    "      - {frames: [suite_fn], limit: 500}\n"
    "      - {frames: [shared], limit: 600}\n"
    "tests:\n"
    "  s/t:\n"
    "    stack_limit: 50\n"
    "    stacks:\n"
    "      - {frames: [test_fn], limit: 300}\n"
    "      - {frames: [shared], limit: 700}\n"
    "      - {frames: [shared, test_fn], limit: 1}\n"
    "ignore:\n"
    "  - frames: [main, tzset]\n";

#define FNS(...) ((const char *const[]){__VA_ARGS__})
#define STACK(bytes, objs, ...)                                                \
    {                                                                          \
        FNS(__VA_ARGS__), N(FNS(__VA_ARGS__)), bytes, objs, false, 0,          \
            FNS(__VA_ARGS__), N(FNS(__VA_ARGS__)), NULL                        \
    }

static void
test_policy__judge_stacks(void)
{
    struct leakgate_config *cfg = load(judge_yaml);
    const struct leakgate_policy_stack in[] = {
        STACK(200, 2, "test_fn", "shared"), /* 0: first rule, 300 */
        STACK(650, 1, "shared"),            /* 1: tests rule beats suites */
        STACK(501, 1, "suite_fn"),          /* 2: suites rule 500: over */
        STACK(50, 1, "other"),              /* 3: stack_limit 50 */
        STACK(51, -3, "other2"),            /* 4: over by one */
        STACK(9999, 9, "tzset", "main"),    /* 5: ignored */
        STACK(0, 0, "x"),                   /* 6: not judged */
        STACK(-100, -1, "y"),               /* 7: not judged */
    };
    struct leakgate_policy_stack_verdict per[N(in)];
    struct leakgate_policy_settings s = resolve(cfg, "s", "t");
    struct leakgate_policy_verdict v;

    leakgate_util__fail_after(0); /* judging never allocates */
    leakgate_policy__judge(&v, per, cfg, &s, in, N(in));
    leakgate_util__fail_after(SIZE_MAX);
    CU_ASSERT_PTR_EQUAL(per[0].rule, &cfg->tests[0].stacks[0]);
    CU_ASSERT_EQUAL(per[0].limit, 300);
    CU_ASSERT_PTR_EQUAL(per[1].rule, &cfg->tests[0].stacks[1]);
    CU_ASSERT_FALSE(per[1].over);
    CU_ASSERT_PTR_EQUAL(per[2].rule, &cfg->suites[0].stacks[0]);
    CU_ASSERT(per[2].over);
    CU_ASSERT_PTR_NULL(per[3].rule);
    CU_ASSERT_EQUAL(per[3].limit, 50);
    CU_ASSERT(per[3].judged && !per[3].over);
    CU_ASSERT(per[4].over);
    CU_ASSERT(per[5].judged && per[5].ignored && !per[5].over);
    CU_ASSERT_PTR_EQUAL(per[5].ignore, &cfg->ignores[0]);
    CU_ASSERT_FALSE(per[6].judged || per[6].over || per[6].ignored);
    CU_ASSERT_FALSE(per[7].judged || per[7].over);
    CU_ASSERT_EQUAL(v.total_bytes, 200 + 650 + 501 + 50 + 51);
    CU_ASSERT_EQUAL(v.total_objs, 2 + 1 + 1 + 1);
    CU_ASSERT_EQUAL(v.nover, 2);
    CU_ASSERT(v.total_over); /* 1452 > 1000 */
    CU_ASSERT(v.failed);
    leakgate_config__free(cfg);
}

static void
test_policy__judge_other_windows(void)
{
    struct leakgate_config *cfg = load(judge_yaml);
    const struct leakgate_policy_stack in[] = {
        STACK(650, 1, "shared"),
        STACK(400, 1, "test_fn"),
    };
    struct leakgate_policy_stack_verdict per[N(in)];
    struct leakgate_policy_settings s = resolve(cfg, "s", "u");
    struct leakgate_policy_verdict v;

    /* s/u: only the suites rules and the defaults apply. */
    leakgate_policy__judge(&v, per, cfg, &s, in, N(in));
    CU_ASSERT_PTR_EQUAL(per[0].rule, &cfg->suites[0].stacks[1]);
    CU_ASSERT(per[0].over);
    CU_ASSERT_EQUAL(per[1].limit, 100);
    CU_ASSERT(per[1].over);
    CU_ASSERT_EQUAL(v.nover, 2);
    CU_ASSERT(v.total_over); /* 1050 > 1000 */
    /* The suite's own window likewise. */
    s = resolve(cfg, "s", NULL);
    leakgate_policy__judge(&v, per, cfg, &s, in, 1);
    CU_ASSERT_EQUAL(per[0].limit, 600);
    CU_ASSERT_FALSE(v.total_over);
    leakgate_config__free(cfg);
}

/* lost_limit judges the lost bytes apart: reachable growth within
 * stack_limit passes, a lost byte over the limit fails, and unknown kinds
 * are reported as such; `~` (the default) keeps the version 1 meaning. */
static void
test_policy__judge_lost_limit(void)
{
    struct leakgate_config *cfg = load("version: 1\n"
                                       "defaults: {stack_limit: 1 KiB, "
                                       "lost_limit: 0}\n"
                                       "tests:\n"
                                       "  s/any: {lost_limit: ~}\n"
                                       "  s/some: {lost_limit: 64}\n");
    struct leakgate_policy_stack in[] = {
        STACK(512, 4, "cache_put"),
        STACK(48, 1, "leaky"),
    };
    struct leakgate_policy_stack_verdict per[N(in)];
    struct leakgate_policy_settings s = resolve(cfg, "s", "t");
    struct leakgate_policy_verdict v;

    CU_ASSERT(s.lost_limited && s.lost_limit == 0);
    in[0].reach_known = in[1].reach_known = true;
    leakgate_policy__judge(&v, per, cfg, &s, in, 1); /* reachable */
    CU_ASSERT_FALSE(v.failed);
    CU_ASSERT_FALSE(v.lost_unknown);
    leakgate_policy__judge(&v, per, cfg, &s, in, 2); /* 48 B, reachable */
    CU_ASSERT_FALSE(v.failed);
    in[1].lost_bytes = 48; /* now lost */
    leakgate_policy__judge(&v, per, cfg, &s, in, 2);
    CU_ASSERT_EQUAL(v.lost_bytes, 48);
    CU_ASSERT(v.lost_over && v.failed && v.nover == 0);
    s = resolve(cfg, "s", "some");
    leakgate_policy__judge(&v, per, cfg, &s, in, 2);
    CU_ASSERT_FALSE(v.failed); /* 48 <= 64 */
    s = resolve(cfg, "s", "any");
    CU_ASSERT_FALSE(s.lost_limited);
    leakgate_policy__judge(&v, per, cfg, &s, in, 2);
    CU_ASSERT_FALSE(v.failed);
    s = resolve(cfg, "s", "t");
    in[1].reach_known = false;
    leakgate_policy__judge(&v, per, cfg, &s, in, 2);
    CU_ASSERT(v.lost_unknown && !v.lost_over && !v.failed);
    leakgate_config__free(cfg);
}

static void
test_policy__judge_total_limit(void)
{
    struct leakgate_config *cfg = load("version: 1\n"
                                       "defaults: {stack_limit: 1 KiB, "
                                       "total_limit: 1 KiB}\n"
                                       "tests:\n"
                                       "  s/free: {total_limit: ~}\n");
    const struct leakgate_policy_stack in[] = {
        STACK(512, 1, "a"),
        STACK(512, 1, "b"),
        STACK(1, 1, "c"),
    };
    struct leakgate_policy_stack_verdict per[N(in)];
    struct leakgate_policy_settings s = resolve(cfg, "s", "t");
    struct leakgate_policy_verdict v;

    leakgate_policy__judge(&v, per, cfg, &s, in, 2);
    CU_ASSERT_EQUAL(v.total_bytes, 1024);
    CU_ASSERT_FALSE(v.total_over); /* equal is allowed */
    CU_ASSERT_FALSE(v.failed);
    leakgate_policy__judge(&v, per, cfg, &s, in, 3);
    CU_ASSERT_EQUAL(v.nover, 0);
    CU_ASSERT(v.total_over);
    CU_ASSERT(v.failed);
    s = resolve(cfg, "s", "free");
    leakgate_policy__judge(&v, per, cfg, &s, in, 3);
    CU_ASSERT_FALSE(v.failed);
    leakgate_config__free(cfg);
}

static void
test_policy__judge_without_config(void)
{
    const struct leakgate_policy_stack in[] = {
        STACK(1, 1, "a"),         STACK(0, 0, "b"),
        STACK(INT64_MAX, 1, "c"), STACK(INT64_MAX, 1, "d"),
        STACK(INT64_MAX, 1, "e"),
    };
    struct leakgate_policy_stack_verdict per[N(in)];
    struct leakgate_policy_settings s = resolve(NULL, "s", "t");
    struct leakgate_policy_verdict v;

    leakgate_policy__judge(&v, per, NULL, &s, in, 2);
    CU_ASSERT(per[0].over);
    CU_ASSERT_EQUAL(per[0].limit, 0);
    CU_ASSERT_FALSE(per[1].judged);
    CU_ASSERT_EQUAL(v.nover, 1);
    CU_ASSERT_FALSE(v.total_over); /* no total cap without a config */
    CU_ASSERT(v.failed);
    leakgate_policy__judge(&v, per, NULL, &s, in, 0);
    CU_ASSERT_FALSE(v.failed);
    CU_ASSERT_EQUAL(v.total_bytes, 0);
    /* Totals saturate instead of wrapping round. */
    leakgate_policy__judge(&v, per, NULL, &s, in, N(in));
    CU_ASSERT_EQUAL(v.total_bytes, UINT64_MAX);
    CU_ASSERT_EQUAL(v.nover, 4);
}

/* Frames' objects for STACK_IN: the C library's, the dynamic linker's,
 * the test program's. */
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
#define LDSO "/lib64/ld-linux-x86-64.so.2"
#define EXE "/work/tests/unit_tests"
#define STACK_IN(mods, bytes, ...)                                             \
    {                                                                          \
        FNS(__VA_ARGS__), N(FNS(__VA_ARGS__)), bytes, 1, false, 0,             \
            FNS(__VA_ARGS__), N(FNS(__VA_ARGS__)), mods                        \
    }

static const char *const in_libc[] = {LIBC, LIBC, LIBC, EXE, EXE};

static void
test_policy__builtin_ignores(void)
{
    const struct leakgate_policy_stack in[] = {
        STACK_IN(in_libc, 4096, "_IO_file_doallocate"),
        STACK_IN(in_libc, 320, "__pthread_create_2_1"),
        STACK_IN(in_libc, 64, "tzset_internal"),
        STACK(8, 1, "my_leak"),
    };
    struct leakgate_policy_stack_verdict per[N(in)];
    struct leakgate_config *on = load("version: 1\n");
    struct leakgate_config *off = load("version: 1\nbuiltin_ignore: false\n");
    struct leakgate_policy_settings s = resolve(on, "s", "t");
    struct leakgate_policy_verdict v;
    size_t n;
    const struct leakgate_config_ignore *list =
        leakgate_policy__builtin_ignores(&n);

    CU_ASSERT(n >= 8);
    for (size_t i = 0; i < n; i++) {
        CU_ASSERT_EQUAL(list[i].line, 0);
        CU_ASSERT_EQUAL(strncmp(list[i].reason, "built-in:", 9), 0);
    }
    leakgate_policy__judge(&v, per, on, &s, in, N(in));
    CU_ASSERT(per[0].ignored && per[1].ignored && per[2].ignored);
    CU_ASSERT_FALSE(per[3].ignored);
    CU_ASSERT_EQUAL(v.total_bytes, 8);
    leakgate_policy__judge(&v, per, NULL, &s, in, 3);
    CU_ASSERT_FALSE(v.failed); /* no config: built-ins apply */
    leakgate_policy__judge(&v, per, off, &s, in, N(in));
    CU_ASSERT_FALSE(per[0].ignored || per[1].ignored || per[2].ignored);
    CU_ASSERT_EQUAL(v.nover, 4);
    leakgate_config__free(on);
    leakgate_config__free(off);
}

/* The built-in list matches only what the C runtime allocates itself:
 * its entry point and every frame inside it are the runtime's. */
static void
test_policy__builtin_runtime_only(void)
{
    static const char *const ctor_mods[] = {EXE,  LDSO, LDSO, LDSO,
                                            LIBC, LIBC, EXE,  EXE};
    static const char *const dl_mods[] = {LDSO, LDSO, LIBC, LIBC, EXE};
    static const char *const user_mods[] = {EXE, EXE, EXE};
    static const char *const dlerror_mods[] = {LIBC, LIBC, EXE, EXE};
    const struct leakgate_policy_stack in[] = {
        /* 0: a library constructor run by dlopen: the caller's */
        STACK_IN(ctor_mods, 5120, "leak_ctor", "call_init", "_dl_init",
                 "dl_open_worker", "_dlerror_run", "dlopen@GLIBC_2.2.5",
                 "test_fn", "main"),
        /* 1: dlopen without dlclose: the caller's */
        STACK_IN(dl_mods, 1280, "_dl_new_object", "_dl_open", "_dlerror_run",
                 "dlopen@GLIBC_2.2.5", "test_fn"),
        /* 2: a user function named like an entry point */
        STACK_IN(user_mods, 64, "format_localtime", "test_fn", "main"),
        /* 3, 4: dlerror's message and state, the runtime's own */
        STACK_IN(dlerror_mods, 96, "__asprintf", "dlerror@@GLIBC_2.34",
                 "test_fn", "main"),
        STACK_IN(dlerror_mods, 32, "_dlerror_run", "dlopen@GLIBC_2.2.5",
                 "test_fn", "main"),
        /* 5: the same stack as 4 with unknown objects: not the runtime's */
        STACK(32, 1, "_dlerror_run", "dlopen@GLIBC_2.2.5", "test_fn"),
    };
    struct leakgate_policy_stack_verdict per[N(in)];
    struct leakgate_config *on = load("version: 1\n");
    struct leakgate_policy_settings s = resolve(on, "s", "t");
    struct leakgate_policy_verdict v;

    leakgate_policy__judge(&v, per, on, &s, in, N(in));
    CU_ASSERT(per[0].over && !per[0].ignored);
    CU_ASSERT(per[1].over && !per[1].ignored);
    CU_ASSERT(per[2].over && !per[2].ignored);
    CU_ASSERT(per[3].ignored);
    CU_ASSERT(per[4].ignored);
    CU_ASSERT(per[5].over && !per[5].ignored);
    CU_ASSERT(leakgate_policy__runtime_module(LIBC));
    CU_ASSERT(leakgate_policy__runtime_module("libnss_files.so.2"));
    CU_ASSERT_FALSE(leakgate_policy__runtime_module(EXE));
    CU_ASSERT_FALSE(leakgate_policy__runtime_module("/opt/libcunit.so.1"));
    CU_ASSERT_FALSE(leakgate_policy__runtime_module(NULL));
    leakgate_config__free(on);
}

const char *const unit_suite = "policy";
const struct unit_case unit_cases[] = {
    {"test_policy__builtin_ignores", test_policy__builtin_ignores},
    {"test_policy__builtin_runtime_only", test_policy__builtin_runtime_only},
    {"test_policy__resolve_without_config",
     test_policy__resolve_without_config},
    {"test_policy__resolve_defaults", test_policy__resolve_defaults},
    {"test_policy__resolve_peak_limit", test_policy__resolve_peak_limit},
    {"test_policy__suites_match_suite_name",
     test_policy__suites_match_suite_name},
    {"test_policy__most_specific_wins", test_policy__most_specific_wins},
    {"test_policy__keys_fall_through", test_policy__keys_fall_through},
    {"test_policy__names_with_glob_characters",
     test_policy__names_with_glob_characters},
    {"test_policy__long_names", test_policy__long_names},
    {"test_policy__frames_match", test_policy__frames_match},
    {"test_policy__judge_stacks", test_policy__judge_stacks},
    {"test_policy__judge_other_windows", test_policy__judge_other_windows},
    {"test_policy__judge_total_limit", test_policy__judge_total_limit},
    {"test_policy__judge_lost_limit", test_policy__judge_lost_limit},
    {"test_policy__judge_without_config", test_policy__judge_without_config},
    {NULL, NULL},
};
