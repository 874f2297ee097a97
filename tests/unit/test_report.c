/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/report.c and harness/verdict.c: verdicts built by
 * hand (fake frames with static strings) rendered as the SPEC §7 text (the
 * whole text of a typical failure, then each rule on its own), the YAML
 * suggestion, JUnit XML and JSON results, with weird names, allocation
 * failures and freeing a fully populated verdict.  External checkers
 * (xmllint, python3) are used when present and skipped otherwise.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"
#include "util.h"
#include "verdict.h"

/* Writable strings for the char * fields of the config and the verdict. */
static char s_parser[] = "parser";
static char s_test[] = "test_cache_insert";
static char s_name[] = "parser/test_cache_insert";
static char s_pattern[] = "parser/*";
static char s_suite_pattern[] = "pars*";
static char s_glob_strdup[] = "strdup";
static char s_reason[] = "libc time-zone cache";
static char s_why[] = "the test aborted on a fatal assertion";

struct fixture {
    struct leakgate_frame f1[5], f2[3], f3[1];
    uintptr_t pcs1[4], pcs2[3], pcs3[1], pcs4[2];
    struct leakgate_diff_thread t2[1];
    char *rule_frames[1];
    struct leakgate_config_stack_rule rule;
    struct leakgate_config_entry test_entry, suite_entry;
    struct leakgate_config_ignore ignore;
    struct leakgate_vstack stacks[4];
    struct leakgate_verdict v;
    struct leakgate_report_env env;
};

static void
fixture_frames(struct fixture *fx)
{
    static const char *const unit = "/build/unit_tests";
    static const char *const libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";

    fx->f1[0] = (struct leakgate_frame){
        0x401010, "cache_insert", "src/cache.c", 42, unit, 0x1010, true};
    fx->f1[1] = (struct leakgate_frame){
        0x401010, "make_node", "src/cache.c", 30, unit, 0x1010, false};
    fx->f1[2] = (struct leakgate_frame){
        0x402020, "parser_feed", "src/parser.c", 118, unit, 0x2020, false};
    fx->f1[3] = (struct leakgate_frame){
        0x403030, "test_cache_insert", "tests/test_parser.c", 55, unit, 0x3030,
        false};
    fx->f1[4] =
        (struct leakgate_frame){0x7f0000001000,
                                NULL,
                                NULL,
                                0,
                                "/usr/lib/x86_64-linux-gnu/libcunit.so.1",
                                0x5a5a,
                                false};
    fx->f2[0] = (struct leakgate_frame){0x7f00009a9aab, "strdup", NULL, 0,
                                        libc,           0x9a9aa,  false};
    fx->f2[1] =
        (struct leakgate_frame){0x404040, NULL, NULL, 0, unit, 0x4040, false};
    fx->f2[2] = (struct leakgate_frame){
        0x403040, "test_cache_insert", "tests/test_parser.c", 60, unit, 0x3040,
        false};
    fx->f3[0] = (struct leakgate_frame){0x7f0000002000, "tzset", NULL, 0,
                                        libc,           0x2000,  false};
}

/* Stack 1: 4,096 B over the default limit; stack 2: 112 B over a stack
 * rule, by thread 2; stack 3: ignored; stack 4: freed older memory. */
static void
fixture_stacks(struct fixture *fx)
{
    struct leakgate_vstack *s = fx->stacks;

    s[0] = (struct leakgate_vstack){fx->pcs1, 4,    fx->f1, 5,   0, 4,     4096,
                                    1,        NULL, 0,      {0}, 0, false, {0}};
    s[0].judgement = (struct leakgate_policy_stack_verdict){true, false, NULL,
                                                            NULL, 0,     true};
    fx->t2[0] = (struct leakgate_diff_thread){2, 1, 112};
    s[1] = (struct leakgate_vstack){fx->pcs2, 3, fx->f2, 3, 0,     3,  112, 1,
                                    fx->t2,   1, {0},    0, false, {0}};
    s[1].judgement = (struct leakgate_policy_stack_verdict){
        true, false, NULL, &fx->rule, 0, true};
    s[2] = (struct leakgate_vstack){fx->pcs3, 1,    fx->f3, 1,   0, 1,     48,
                                    1,        NULL, 0,      {0}, 0, false, {0}};
    s[2].judgement = (struct leakgate_policy_stack_verdict){
        true, true, &fx->ignore, NULL, 0, false};
    s[3] = (struct leakgate_vstack){fx->pcs4, 2,    NULL, 0,   0, 0,     -64,
                                    -1,       NULL, 0,    {0}, 0, false, {0}};
}

static void
fixture_init(struct fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fixture_frames(fx);
    fx->pcs4[0] = 0x405050;
    fx->pcs4[1] = 0x406060;
    fx->rule_frames[0] = s_glob_strdup;
    fx->rule =
        (struct leakgate_config_stack_rule){fx->rule_frames, 1, 0, 12, false};
    fx->test_entry.pattern = s_pattern;
    fx->test_entry.line = 10;
    fx->test_entry.stacks = &fx->rule;
    fx->test_entry.nstacks = 1;
    fx->suite_entry.pattern = s_suite_pattern;
    fx->suite_entry.line = 5;
    fx->ignore = (struct leakgate_config_ignore){NULL, 0, s_reason, 20, false};
    fixture_stacks(fx);
    fx->v.suite = s_parser;
    fx->v.test = s_test;
    fx->v.name = s_name;
    fx->v.status = LEAKGATE_STATUS_FAIL;
    fx->v.measured = true;
    fx->v.settings.total_unlimited = true;
    fx->v.settings.test_entry = &fx->test_entry;
    fx->v.policy = (struct leakgate_policy_verdict){4208,  2,     false, 0,
                                                    false, false, 2,     true};
    fx->v.stacks = fx->stacks;
    fx->v.nstacks = 4;
    fx->v.seconds = 0.0125;
    fx->env = (struct leakgate_report_env){
        "exact (every allocation sampled, lg_prof_sample:0)",
        "5.3.0-0-g54eaed1d",
        "/build/unit_tests",
        "1a2b3c",
        "leakgate.yaml",
        NULL,
        NULL,
        false,
        false};
}

static const char golden_text[] =
    "leakgate: FAIL parser/test_cache_insert: 4,208 B retained in 2 objects "
    "(2 stacks over their limits)\n"
    "  stack 1 of 2: 4,096 B in 1 object, limit 0 B (defaults.stack_limit)\n"
    "      cache_insert (inlined)  src/cache.c:42\n"
    "      make_node               src/cache.c:30\n"
    "      parser_feed             src/parser.c:118\n"
    "      test_cache_insert       tests/test_parser.c:55\n"
    "  stack 2 of 2: 112 B in 1 object, limit 0 B (tests \"parser/*\" stack "
    "rule [strdup], leakgate.yaml:12), allocated by thread 2\n"
    "      strdup             "
    "/usr/lib/x86_64-linux-gnu/libc.so.6+0x9a9aa\n"
    "      ??                 /build/unit_tests+0x4040\n"
    "      test_cache_insert  tests/test_parser.c:60\n"
    "  also changed (not counted): -64 B in 1 object freed from earlier "
    "tests; 1 stack ignored (ignore rule leakgate.yaml:20: libc time-zone "
    "cache)\n"
    "  measured: exact (every allocation sampled, lg_prof_sample:0), "
    "jemalloc 5.3.0-0-g54eaed1d, binary /build/unit_tests (build-id "
    "1a2b3c)\n"
    "  artifacts: none, pass --report-dir DIR to keep the heap profiles\n"
    "  reachable or lost: not known (other threads ran that were not "
    "stopped for the scan: asleep, polling or blocking its signal; or an "
    "exact window of a process that kept no map of its objects from its "
    "start); make sure this growth is not a leak before you accept it\n"
    "  to accept this growth, its entry under `tests:` (the thresholds "
    "document at the end of the run holds it, with every other):\n"
    "      \"parser/test_cache_insert\":\n"
    "        # replaces tests \"parser/*\" (line 10) here: its settings are "
    "repeated\n"
    "        stacks:\n"
    "          - frames: [test_cache_insert]\n"
    "            exact: true\n"
    "            limit: 112\n"
    "          - frames: [test_cache_insert, parser_feed, make_node, "
    "cache_insert]\n"
    "            exact: true\n"
    "            limit: 4 KiB\n"
    "          - frames: [strdup]  # from line 12\n"
    "            limit: 0\n";

static bool
contains(const char *haystack, const char *needle)
{
    bool found = haystack && strstr(haystack, needle) != NULL;

    if (!found)
        fprintf(stderr, "\n  missing: \"%s\"\n  in:\n%s\n", needle,
                haystack ? haystack : "(null)");
    return found;
}

static char *
text_of(const struct fixture *fx, bool color)
{
    char *text = leakgate_report__text(&fx->v, &fx->env, color);

    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    return text;
}

static void
test_report__golden_failure(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    text = text_of(&fx, false);
    CU_ASSERT_STRING_EQUAL(text, golden_text);
    if (strcmp(text, golden_text) != 0)
        fprintf(stderr, "\n--- got:\n%s--- want:\n%s", text, golden_text);
    leakgate_util__free(text);
}

static void
test_report__pass_is_empty(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.v.status = LEAKGATE_STATUS_PASS;
    fx.v.policy.failed = false;
    text = text_of(&fx, true);
    CU_ASSERT_STRING_EQUAL(text, "");
    leakgate_util__free(text);
    /* A failure the gate did not cause (an assertion) is CUnit's to show. */
    fx.v.status = LEAKGATE_STATUS_FAIL;
    text = text_of(&fx, false);
    CU_ASSERT_STRING_EQUAL(text, "");
    leakgate_util__free(text);
}

static void
test_report__color(void)
{
    struct fixture fx;
    char *plain, *color;

    fixture_init(&fx);
    fx.env.report_dir = "/tmp/r";
    fx.v.heap_before = s_name; /* any path will do */
    fx.v.heap_after = s_test;
    plain = text_of(&fx, false);
    color = text_of(&fx, true);
    CU_ASSERT_PTR_NULL(strchr(plain, '\033'));
    CU_ASSERT(contains(color, "leakgate: \033[1;31mFAIL\033[0m parser/"));
    CU_ASSERT(contains(color, "\033[1m4,208 B\033[0m retained"));
    CU_ASSERT(contains(color, "\033[2msrc/cache.c:42\033[0m\n"));
    CU_ASSERT(contains(color, "binary \033[2m/build/unit_tests\033[0m"));
    CU_ASSERT(contains(color, "artifacts: \033[2mparser/test_cache_insert"));
    /* Colour codes do not shift the location column. */
    CU_ASSERT(contains(color, "      make_node               \033[2msrc"));
    leakgate_util__free(plain);
    leakgate_util__free(color);
}

static void
test_report__limit_sources(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.test_entry.has_stack_limit = true;
    fx.v.settings.suite_entry = &fx.suite_entry;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "4,096 B in 1 object, limit 0 B (tests "
                             "\"parser/*\" stack_limit, leakgate.yaml:10)\n"));
    leakgate_util__free(text);

    fx.test_entry.has_stack_limit = false;
    fx.suite_entry.has_stack_limit = true;
    fx.suite_entry.stack_limit = 0;
    fx.stacks[0].judgement.limit = 0;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "limit 0 B (suites \"pars*\" stack_limit, "
                             "leakgate.yaml:5)\n"));
    leakgate_util__free(text);

    /* A rule of the suites entry, and no thresholds file at all. */
    fx.test_entry.nstacks = 0;
    fx.suite_entry.stacks = &fx.rule;
    fx.suite_entry.nstacks = 1;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "(suites \"pars*\" stack rule [strdup], "
                             "leakgate.yaml:12)"));
    leakgate_util__free(text);
    fx.env.thresholds_path = NULL;
    fx.v.settings =
        (struct leakgate_policy_settings){.total_unlimited = true, .repeat = 1};
    fx.stacks[1].judgement.rule = NULL;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "limit 0 B (no thresholds file: every limit "
                             "is 0)\n"));
    /* Its entry only: the run's one document is printed at its end. */
    CU_ASSERT(contains(text, "  to accept this growth, its entry under "
                             "`tests:` (the thresholds document at the end "
                             "of the run holds it, with every other):\n"
                             "      \"parser/test_cache_insert\":\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "version: 1"));
    leakgate_util__free(text);
}

static void
test_report__threads(void)
{
    struct fixture fx;
    struct leakgate_diff_thread many[10];
    char *text;

    fixture_init(&fx);
    fx.t2[0].tid = 0; /* only the first thread: nothing to say */
    text = text_of(&fx, false);
    CU_ASSERT_PTR_NULL(strstr(text, "allocated by"));
    leakgate_util__free(text);
    for (size_t i = 0; i < 10; i++)
        many[i] = (struct leakgate_diff_thread){i, 1, (int64_t)(1000 * i)};
    fx.stacks[1].threads = many;
    fx.stacks[1].nthreads = 2;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "), allocated by threads 0 (0 B), 1 (1,000 B)\n"));
    leakgate_util__free(text);
    fx.stacks[1].nthreads = 10;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, ", 7 (7,000 B) and 2 more\n"));
    leakgate_util__free(text);
}

static void
test_report__total_over(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.stacks[0].judgement.over = false;
    fx.stacks[0].judgement.limit = 1234567;
    fx.stacks[1].judgement.over = false;
    fx.stacks[1].judgement.limit = 4096;
    fx.v.settings.total_unlimited = false;
    fx.v.settings.total_limit = 4000;
    fx.v.policy.total_over = true;
    fx.v.policy.nover = 0;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "retained in 2 objects (total over its limit "
                             "of 4,000 B (defaults.total_limit))\n"));
    CU_ASSERT(contains(text, "  stack 1 of 2: 4,096 B in 1 object, within "
                             "its limit 1,234,567 B (defaults.stack_limit)\n"));
    CU_ASSERT(contains(text, "  stack 2 of 2: 112 B"));
    CU_ASSERT(contains(text, "        total_limit: 4208\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "- frames: [test_cache_insert"));
    leakgate_util__free(text);

    /* Both at once, the total from the test entry. */
    fx.stacks[0].judgement.over = true;
    fx.v.policy.nover = 1;
    fx.test_entry.has_total_limit = true;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "(1 stack over its limit; total over its limit "
                             "of 4,000 B (tests \"parser/*\" total_limit, "
                             "leakgate.yaml:10))\n"));
    leakgate_util__free(text);
}

static void
test_report__within_and_excluded(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.stacks[1].judgement.over = false;
    fx.stacks[1].judgement.limit = 4096;
    fx.v.policy.nover = 1;
    fx.v.excluded_bytes = 1500;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "(1 stack over its limit)\n  stack 1 of 1: "));
    CU_ASSERT(contains(text, "  also grew, within limits: 1 stack, 112 B in "
                             "1 object\n"));
    CU_ASSERT(contains(text, "; 1,500 B of test-framework bookkeeping\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "stack 2 of"));
    CU_ASSERT_PTR_NULL(strstr(text, "[test_cache_insert, strdup]"));
    leakgate_util__free(text);
}

static void
test_report__not_judged(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.v.status = LEAKGATE_STATUS_NOT_JUDGED;
    fx.v.not_judged_why = s_why;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "leakgate: NOTE parser/test_cache_insert: 4,208 "
                             "B retained in 2 objects, not judged: the test "
                             "aborted on a fatal assertion\n  stack 1 of 2: "
                             "4,096 B in 1 object\n      cache_insert"));
    CU_ASSERT(contains(text, "  stack 2 of 2: 112 B in 1 object, allocated "
                             "by thread 2\n"));
    CU_ASSERT_PTR_NULL(strstr(text, "limit"));
    CU_ASSERT_PTR_NULL(strstr(text, "to accept"));
    leakgate_util__free(text);
    text = text_of(&fx, true);
    CU_ASSERT(contains(text, "leakgate: \033[1;33mNOTE\033[0m"));
    leakgate_util__free(text);
    /* No growth (only ignored and freed stacks): nothing to say. */
    fx.v.stacks = fx.stacks + 2;
    fx.v.nstacks = 2;
    text = text_of(&fx, false);
    CU_ASSERT_STRING_EQUAL(text, "");
    leakgate_util__free(text);
}

static void
test_report__raw_pcs(void)
{
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.pcs2[0] = 0x7f00009a9aab;
    fx.pcs2[1] = 0x404040;
    fx.pcs2[2] = 0x403040;
    fx.stacks[1].frames = NULL;
    fx.stacks[1].nframes = 0;
    fx.stacks[1].shown_end = 0;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "thread 2\n      0x7f00009a9aab\n      "
                             "0x404040\n      0x403040\n  also"));
    /* No names: no rule, a stack_limit instead. */
    CU_ASSERT(contains(text, "        # a stack without function names "
                             "cannot have a rule\n        stack_limit: 112\n"));
    leakgate_util__free(text);
    fx.stacks[1].npcs = 0;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "thread 2\n      (no frames outside the "
                             "allocator)\n"));
    leakgate_util__free(text);
}

/* A framework's runner frames, and what is outside them, never reach a
 * report or a suggested rule: CUnit's and cmocka's libraries, Check's and
 * Unity's runners by name, leakgate's adapters; a user's frame named
 * like none of them stays. */
static void
test_report__runner_frames_trimmed(void)
{
    static const char *const unit = "/build/unit_tests";
    struct {
        const char *function, *module;
        bool runner;
    } cases[] = {
        {"srunner_run_tagged", unit, true},
        {"tcase_run_tfun_nofork", unit, true},
        {"UnityDefaultTestRun", unit, true},
        {"leakgate_check_window", unit, true},
        {"cmocka_run_one_test_or_fixture",
         "/usr/lib/x86_64-linux-gnu/libcmocka.so.0", true},
        {NULL, "/usr/lib/x86_64-linux-gnu/libcunit.so.1", true},
        {"suite_setup_tables", unit, false},
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct leakgate_frame f[4] = {
            {0x401000, "strtab_new", "strtab.c", 38, unit, 0x1000, false},
            {0x402000, "removes_body", "test.c", 24, unit, 0x2000, false},
            {0x403000, cases[i].function, NULL, 0, cases[i].module, 0x3000,
             false},
            {0x404000, "main", "test.c", 40, unit, 0x4000, false}};
        uintptr_t pcs[4] = {0x401000, 0x402000, 0x403000, 0x404000};
        struct leakgate_vstack s = {pcs, 4,    f, 4,   0, 4,     64,
                                    1,   NULL, 0, {0}, 0, false, {0}};

        leakgate_verdict__trim(&s);
        CU_ASSERT_EQUAL(s.shown_begin, 0);
        CU_ASSERT_EQUAL(s.shown_end, cases[i].runner ? 2 : 4);
    }
}

static void
test_report__frames_edge_cases(void)
{
    static const char *const long_name =
        "a_function_name_much_longer_than_the_name_column";
    struct fixture fx;
    char *text;

    fixture_init(&fx);
    fx.f1[1].function = long_name;
    fx.f1[2].file = "src/noline.c";
    fx.f1[2].line = 0;
    fx.f1[3].module = NULL;
    fx.f1[3].file = NULL;
    fx.stacks[0].shown_end = 0; /* empty range: show every frame */
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "      cache_insert (inlined)  src/cache.c:42\n"
                             "      a_function_name_much_longer_than_the_"
                             "name_column  src/cache.c:30\n"
                             "      parser_feed             src/noline.c\n"
                             "      test_cache_insert       0x403030\n"
                             "      ??                      /usr/lib/"
                             "x86_64-linux-gnu/libcunit.so.1+0x5a5a\n"));
    leakgate_util__free(text);
}

static void
test_report__artifacts(void)
{
    struct fixture fx;
    static char before[] = "/r/parser/test_cache_insert.before.heap";
    static char after[] = "/r/parser/test_cache_insert.after.heap";
    static char json[] = "/r/parser/test_cache_insert.json";
    char *text;

    fixture_init(&fx);
    fx.env.report_dir = "/r";
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "  artifacts: none written under /r\n"));
    leakgate_util__free(text);
    fx.v.heap_before = before;
    fx.v.heap_after = after;
    fx.v.json_path = json;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text,
                       "  artifacts: /r/parser/test_cache_insert."
                       "before.heap, /r/parser/test_cache_insert."
                       "after.heap, /r/parser/test_cache_insert.json\n"
                       "  inspect: jeprof --text --show_bytes --base=/r/parser/"
                       "test_cache_insert.before.heap /build/unit_tests"
                       " /r/parser/test_cache_insert.after.heap\n"));
    leakgate_util__free(text);
}

/* The call graph's files in the text and JSON, and the note saying why
 * there is no picture. */
static void
test_report__picture_artifacts(void)
{
    struct fixture fx;
    static char before[] = "/r/p/t.before.heap";
    static char after[] = "/r/p/t.after.heap";
    static char svg[] = "/r/p/t.svg";
    static char pdf[] = "/r/p/t.pdf";
    static char dot[] = "/r/p/t.dot";
    static char txt[] = "/r/p/t.txt";
    static char note[] = "Graphviz's dot is not on PATH";
    const struct leakgate_verdict *one[1];
    char *text, *json;

    fixture_init(&fx);
    fx.v.heap_before = before;
    fx.v.heap_after = after;
    fx.v.svg_path = svg;
    fx.v.pdf_path = pdf;
    fx.v.dot_path = dot;
    one[0] = &fx.v;
    text = text_of(&fx, false);
    /* Every file written is listed (issue 14 item 11). */
    CU_ASSERT(contains(text, "  artifacts: /r/p/t.before.heap, "
                             "/r/p/t.after.heap, /r/p/t.svg, /r/p/t.pdf, "
                             "/r/p/t.dot\n"));
    leakgate_util__free(text);
    fx.v.text_path = txt;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "/r/p/t.pdf, /r/p/t.dot, /r/p/t.txt\n"));
    fx.v.text_path = NULL;
    leakgate_util__free(text);
    json = leakgate_report__json(one, 1, &fx.env);
    CU_ASSERT(contains(json, "\"dot\": \"/r/p/t.dot\""));
    CU_ASSERT(contains(json, "\"svg\": \"/r/p/t.svg\""));
    CU_ASSERT(contains(json, "\"pdf\": \"/r/p/t.pdf\""));
    CU_ASSERT(contains(json, "\"text\": null"));
    leakgate_util__free(json);
    /* Without dot: the DOT file is named, and why. */
    fx.v.svg_path = fx.v.pdf_path = NULL;
    fx.v.picture_note = note;
    text = text_of(&fx, false);
    CU_ASSERT(contains(text, "/r/p/t.after.heap, /r/p/t.dot\n  picture: "
                             "Graphviz's dot is not on PATH\n"));
    leakgate_util__free(text);
}

/* ---- YAML -------------------------------------------------------------- */

static void
test_report__yaml_golden(void)
{
    struct fixture fx;
    const char *got;
    char *yaml;

    fixture_init(&fx);
    yaml = leakgate_report__yaml(&fx.v);
    CU_ASSERT_PTR_NOT_NULL_FATAL(yaml);
    /* The golden report holds the same entry, without its `tests:` line,
     * indented by 4. */
    CU_ASSERT_EQUAL_FATAL(strncmp(yaml, "tests:\n", 7), 0);
    got = yaml + 7;
    for (const char *want = strstr(golden_text, "with every other):\n") + 19;
         *want;) {
        size_t len = strcspn(want, "\n") + 1;

        CU_ASSERT_EQUAL_FATAL(strncmp(want, "    ", 4), 0);
        CU_ASSERT_EQUAL_FATAL(strncmp(want + 4, got, len - 4), 0);
        got += len - 4;
        want += len;
    }
    CU_ASSERT_STRING_EQUAL(got, "");
    leakgate_util__free(yaml);
    fx.v.policy.failed = false;
    fx.stacks[0].judgement.over = fx.stacks[1].judgement.over = false;
    yaml = leakgate_report__yaml(&fx.v);
    CU_ASSERT_STRING_EQUAL(yaml, "");
    leakgate_util__free(yaml);
}

/* A new exact entry replaces the glob entry that won, so what that entry
 * set is repeated; an entry that already has the exact name is merged. */
static void
test_report__yaml_carry_over(void)
{
    struct fixture fx;
    static char exact[] = "parser/test_cache_insert";
    static char odd[] = "parser/\n*";
    char *yaml;

    fixture_init(&fx);
    fx.test_entry.has_stack_limit = true;
    fx.test_entry.stack_limit = 2048;
    fx.test_entry.has_total_limit = true;
    fx.test_entry.total_unlimited = true;
    fx.test_entry.has_warmup = true;
    fx.test_entry.warmup = 2;
    fx.test_entry.pattern = odd;
    yaml = leakgate_report__yaml(&fx.v);
    CU_ASSERT_STRING_EQUAL(
        yaml, "tests:\n"
              "  \"parser/test_cache_insert\":\n"
              "    # replaces tests \"parser/?*\" (line 10) here: its "
              "settings are repeated\n"
              "    total_limit: ~\n"
              "    stack_limit: 2 KiB\n"
              "    warmup: 2\n"
              "    stacks:\n"
              "      - frames: [test_cache_insert]\n"
              "        exact: true\n"
              "        limit: 112\n"
              "      - frames: [test_cache_insert, parser_feed, make_node, "
              "cache_insert]\n"
              "        exact: true\n"
              "        limit: 4 KiB\n"
              "      - frames: [strdup]  # from line 12\n"
              "        limit: 0\n");
    leakgate_util__free(yaml);
    fx.test_entry.pattern = exact;
    yaml = leakgate_report__yaml(&fx.v);
    CU_ASSERT(contains(yaml, "  \"parser/test_cache_insert\":\n    # merge "
                             "into the entry at line 10: these values "
                             "replace its own, these rules go after its "
                             "rules\n"
                             "    stacks:\n      - frames: [test_cache_"));
    CU_ASSERT_PTR_NULL(strstr(yaml, "from line 12"));
    CU_ASSERT_PTR_NULL(strstr(yaml, "warmup"));
    leakgate_util__free(yaml);
}

static void
test_report__yaml_suite_window(void)
{
    struct fixture fx;
    static char suite_test[] = "[suite]";
    static char suite_name[] = "parser/[suite]";
    char *yaml;

    fixture_init(&fx);
    fx.v.test = suite_test;
    fx.v.name = suite_name;
    fx.v.settings.test_entry = NULL; /* suite windows match suites only */
    fx.stacks[1].judgement.over = false;
    fx.v.policy.total_over = true;
    yaml = leakgate_report__yaml(&fx.v);
    CU_ASSERT_STRING_EQUAL(yaml,
                           "suites:\n"
                           "  \"parser\":\n"
                           "    total_limit: 4208\n"
                           "    stacks:\n"
                           "      - frames: [test_cache_insert, parser_feed, "
                           "make_node, cache_insert]\n"
                           "        exact: true\n"
                           "        limit: 4 KiB\n");
    leakgate_util__free(yaml);
    /* Replacing "pars*" keeps its scope: suite. */
    fx.v.settings.suite_entry = &fx.suite_entry;
    fx.suite_entry.scope = LEAKGATE_CONFIG_SCOPE_SUITE;
    yaml = leakgate_report__yaml(&fx.v);
    CU_ASSERT(contains(yaml, "  \"parser\":\n    # replaces suites \"pars*\" "
                             "(line 5) here: its settings are repeated\n"
                             "    total_limit: 4208\n"
                             "    scope: suite\n    stacks:\n"));
    leakgate_util__free(yaml);
}

/* One offending stack per function pair below, all from `outer`. */
struct weird {
    struct leakgate_frame frames[4][2];
    struct leakgate_vstack stacks[4];
    struct leakgate_verdict v;
};

static void
weird_init(struct weird *w, char *name)
{
    static const char *const inner[] = {"operator[]", "null", "it's",
                                        "std::vector<int>::push_back"};

    memset(w, 0, sizeof *w);
    for (size_t i = 0; i < 4; i++) {
        w->frames[i][0].function = inner[i];
        w->frames[i][1].function = "test_x";
        w->stacks[i] =
            (struct leakgate_vstack){NULL,
                                     0,
                                     w->frames[i],
                                     2,
                                     0,
                                     2,
                                     (int64_t)(100 - i),
                                     1,
                                     NULL,
                                     0,
                                     {true, false, NULL, NULL, 0, true},
                                     0,
                                     false,
                                     {0}};
    }
    w->v.suite = s_parser;
    w->v.test = name;
    w->v.name = name;
    w->v.status = LEAKGATE_STATUS_FAIL;
    w->v.policy = (struct leakgate_policy_verdict){394,   4,     false, 0,
                                                   false, false, 4,     true};
    w->v.stacks = w->stacks;
    w->v.nstacks = 4;
}

/* Rules in name order (the ratchet writes the same), quoted only where
 * YAML would misread a name. */
static const char weird_yaml[] =
    "tests:\n"
    "  'we\\*rd/te''st\\?\\[1\\]':\n"
    "    stacks:\n"
    "      - frames: [test_x, \"it's\"]\n"
    "        exact: true\n"
    "        limit: 98\n"
    "      - frames: [test_x, \"null\"]\n"
    "        exact: true\n"
    "        limit: 99\n"
    "      - frames: [test_x, 'operator\\[\\]']\n"
    "        exact: true\n"
    "        limit: 100\n"
    "      - frames: [test_x, \"std::vector<int>::push_back\"]\n"
    "        exact: true\n"
    "        limit: 97\n";

static void
test_report__yaml_escaping(void)
{
    struct weird w;
    static char name[] = "we*rd/te'st?[1]";
    static char ctl[] = "a\\*\nb\"";
    char *yaml;

    weird_init(&w, name);
    yaml = leakgate_report__yaml(&w.v);
    CU_ASSERT_STRING_EQUAL(yaml, weird_yaml);
    leakgate_util__free(yaml);
    /* Control characters need double quotes (and then escaped \ and "). */
    w.v.name = ctl;
    yaml = leakgate_report__yaml(&w.v);
    CU_ASSERT(contains(yaml, "tests:\n  \"a\\\\\\\\\\\\*\\x0ab\\\"\":\n"));
    leakgate_util__free(yaml);
}

static void
test_report__yaml_merges_rules(void)
{
    struct weird w;
    static char name[] = "parser/t";
    char *yaml;

    weird_init(&w, name);
    /* Stacks 0 and 1 give the same pair; stack 2 (within its limit) also
     * matches it with more bytes; stack 3 has the names reversed. */
    w.frames[1][0].function = "operator[]";
    w.frames[2][0].function = "operator[]";
    w.stacks[2].bytes = 500;
    w.stacks[2].judgement.over = false;
    w.frames[3][0].function = "test_x";
    w.frames[3][1].function = "operator[]";
    yaml = leakgate_report__yaml(&w.v);
    CU_ASSERT_STRING_EQUAL(yaml, "tests:\n"
                                 "  \"parser/t\":\n"
                                 "    stacks:\n"
                                 "      - frames: ['operator\\[\\]', test_x]\n"
                                 "        exact: true\n"
                                 "        limit: 97\n"
                                 "      - frames: [test_x, 'operator\\[\\]']\n"
                                 "        exact: true\n"
                                 "        limit: 500   # covers 3 stacks: "
                                 "each may retain up to 500 B\n");
    leakgate_util__free(yaml);
    /* One name only when outermost and innermost are the same. */
    w.frames[3][0].function = "operator[]";
    w.stacks[0].judgement.over = w.stacks[1].judgement.over = false;
    w.frames[3][1].function = NULL;
    yaml = leakgate_report__yaml(&w.v);
    CU_ASSERT(contains(yaml, "      - frames: ['operator\\[\\]']\n"
                             "        exact: true\n"
                             "        limit: 97\n"));
    leakgate_util__free(yaml);
}

/* ---- running external checkers ------------------------------------------ */

static bool
have(const char *probe)
{
    char cmd[256];

    snprintf(cmd, sizeof cmd, "%s >/dev/null 2>&1", probe);
    return system(cmd) == 0;
}

/* Write text to a new temporary file; its path goes to path[32]. */
static bool
write_temp(char *path, const char *text)
{
    int fd;
    FILE *f;
    bool ok;

    snprintf(path, 32, "/tmp/lg_report_XXXXXX");
    fd = mkstemp(path);
    if (fd < 0)
        return false;
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return false;
    }
    ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* Run "cmd FILE" on text; returns the exit status and the first line of
 * its output in out (may be NULL). */
static int
run_on(const char *cmd, const char *text, char *out, size_t outsz)
{
    char path[32], line[4096], full[512];
    struct leakgate_buf rest = LEAKGATE_BUF_INIT;
    FILE *p;
    int status;

    if (!write_temp(path, text))
        return -1;
    snprintf(full, sizeof full, "%s %s 2>&1", cmd, path);
    p = popen(full, "r");
    if (!p) {
        unlink(path);
        return -1;
    }
    line[0] = '\0';
    if (fgets(line, sizeof line, p) && out)
        snprintf(out, outsz, "%s", line);
    while (fgets(line, sizeof line, p))
        leakgate_buf__puts(&rest, line);
    status = pclose(p);
    if (status != 0)
        fprintf(stderr, "\n  %s failed:\n%s\n", cmd, rest.ptr ? rest.ptr : "");
    leakgate_buf__dispose(&rest);
    unlink(path);
    return status;
}

static void
test_report__yaml_parses(void)
{
    static const char script[] =
        "import json, sys, yaml\n"
        "print(json.dumps(yaml.safe_load(open(sys.argv[1])), "
        "sort_keys=True))\n";
    char spath[32], got[4096];
    struct weird w;
    static char name[] = "we*rd/te'st?[1]";
    char *yaml;

    if (!have("python3 -c 'import yaml'")) {
        fprintf(stderr, "(skipped: python3 with PyYAML not found) ");
        return;
    }
    weird_init(&w, name);
    yaml = leakgate_report__yaml(&w.v);
    CU_ASSERT_FATAL(write_temp(spath, script));
    {
        char cmd[64];

        snprintf(cmd, sizeof cmd, "python3 %s", spath);
        CU_ASSERT_EQUAL(run_on(cmd, yaml, got, sizeof got), 0);
    }
    CU_ASSERT(contains(
        got, "{\"tests\": {\"we\\\\*rd/te'st\\\\?\\\\[1\\\\]\": {\"stacks\": "
             "[{\"exact\": true, \"frames\": [\"test_x\", \"it's\"], "
             "\"limit\": 98}, {\"exact\": true, \"frames\": [\"test_x\", "
             "\"null\"], \"limit\": 99}, {\"exact\": true, \"frames\": "
             "[\"test_x\", \"operator\\\\[\\\\]\"], \"limit\": 100}, "
             "{\"exact\": true, \"frames\": [\"test_x\", "
             "\"std::vector<int>::push_back\"], \"limit\": 97}]}}}\n"));
    leakgate_util__free(yaml);
    /* A carried-over entry, with comments and `~`. */
    {
        struct fixture fx;
        char cmd[64];

        fixture_init(&fx);
        fx.test_entry.has_total_limit = fx.test_entry.total_unlimited = true;
        yaml = leakgate_report__yaml(&fx.v);
        snprintf(cmd, sizeof cmd, "python3 %s", spath);
        CU_ASSERT_EQUAL(run_on(cmd, yaml, got, sizeof got), 0);
        CU_ASSERT(contains(
            got, "{\"tests\": {\"parser/test_cache_insert\": {\"stacks\": "
                 "[{\"exact\": true, \"frames\": [\"test_cache_insert\"], "
                 "\"limit\": 112}, {\"exact\": true, \"frames\": "
                 "[\"test_cache_insert\", \"parser_feed\", \"make_node\", "
                 "\"cache_insert\"], \"limit\": \"4 KiB\"}, {\"frames\": "
                 "[\"strdup\"], \"limit\": 0}], \"total_limit\": null}}}\n"));
        leakgate_util__free(yaml);
    }
    unlink(spath);
}

/* ---- JUnit ------------------------------------------------------------- */

/* The four kinds of records: a leak with an assertion, a pass, an
 * assertion-only record, a suite window not judged. */
struct run {
    struct fixture fail, window;
    struct leakgate_verdict pass, noted;
    struct leakgate_note notes[2], io_note;
    const struct leakgate_verdict *all[4];
};

static char s_file[] = "src/t.c";
static char s_assert[] = "CU_ASSERT(x)";
static char s_assert2[] = "CU_ASSERT_EQUAL(a, b)";
static char s_ok[] = "test_ok";
static char s_ok_name[] = "parser/test_ok";
static char s_io[] = "io";
static char s_io_test[] = "test_read";
static char s_io_name[] = "io/test_read";
static char s_window[] = "[suite]";
static char s_window_name[] = "parser/[suite]";
static char s_why_filtered[] = LEAKGATE_VERDICT_MEASURED_ONLY;

static void
run_init(struct run *r)
{
    memset(r, 0, sizeof *r);
    fixture_init(&r->fail);
    r->notes[0] = (struct leakgate_note){s_file, 7, s_assert};
    r->notes[1] = (struct leakgate_note){s_file, 9, s_assert2};
    r->fail.v.notes = r->notes;
    r->fail.v.nnotes = 2;
    r->pass = (struct leakgate_verdict){.suite = s_parser,
                                        .test = s_ok,
                                        .name = s_ok_name,
                                        .measured = true,
                                        .seconds = 0.001};
    r->io_note = (struct leakgate_note){s_file, 3, s_assert};
    r->noted = (struct leakgate_verdict){.suite = s_io,
                                         .test = s_io_test,
                                         .name = s_io_name,
                                         .notes = &r->io_note,
                                         .nnotes = 1};
    fixture_init(&r->window);
    r->window.v.test = s_window;
    r->window.v.name = s_window_name;
    r->window.v.status = LEAKGATE_STATUS_NOT_JUDGED;
    r->window.v.not_judged_why = s_why_filtered;
    r->all[0] = &r->fail.v;
    r->all[1] = &r->pass;
    r->all[2] = &r->noted;
    r->all[3] = &r->window.v;
}

static bool
xml_entity_ok(const char *p, size_t *len)
{
    static const char *const ents[] = {"&amp;", "&lt;", "&gt;", "&quot;",
                                       "&apos;"};

    for (size_t i = 0; i < sizeof ents / sizeof ents[0]; i++) {
        *len = strlen(ents[i]);
        if (strncmp(p, ents[i], *len) == 0)
            return true;
    }
    return false;
}

/* The end of the tag at p ('<'), checking its attribute values; NULL when
 * malformed. */
static const char *
xml_tag_end(const char *p)
{
    bool quoted = false;
    size_t len;

    for (p++; *p && (quoted || *p != '>'); p++) {
        if (*p == '"')
            quoted = !quoted;
        else if (*p == '<' || ((unsigned char)*p < 0x20 && *p != '\n'))
            return NULL;
        else if (*p == '&' && !xml_entity_ok(p, &len))
            return NULL;
    }
    return *p ? p : NULL;
}

/* A small well-formedness check: no control characters, entities only
 * from the predefined five, every tag closed in order. */
static bool
xml_well_formed(const char *s)
{
    const char *open[16], *end, *name;
    size_t lens[16], depth = 0, len, n;

    for (const char *p = s; *p;) {
        if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
            return false;
        if (*p == '&' && !xml_entity_ok(p, &len))
            return false;
        if (*p != '<') {
            p++;
            continue;
        }
        end = xml_tag_end(p);
        name = p + 1 + (p[1] == '/');
        n = strcspn(name, " />\n");
        if (!end)
            return false;
        if (p[1] == '/') {
            if (depth == 0 || lens[depth - 1] != n ||
                strncmp(open[depth - 1], name, n) != 0)
                return false;
            depth--;
        } else if (p[1] != '?' && end[-1] != '/') {
            if (depth == 16)
                return false;
            open[depth] = name;
            lens[depth++] = n;
        }
        p = end + 1;
    }
    return depth == 0;
}

static void
check_xml(const char *xml)
{
    CU_ASSERT(xml_well_formed(xml));
    if (!have("command -v xmllint")) {
        fprintf(stderr, "(xmllint not found: own check only) ");
        return;
    }
    CU_ASSERT_EQUAL(run_on("xmllint --noout", xml, NULL, 0), 0);
}

static void
test_report__xml_checker(void)
{
    /* The checker itself must reject what it is there to catch. */
    CU_ASSERT(xml_well_formed("<?xml version=\"1.0\"?>\n<a x=\"&lt;\"><b/>"
                              "&amp;</a>\n"));
    CU_ASSERT(!xml_well_formed("<a><b></a></b>"));
    CU_ASSERT(!xml_well_formed("<a>&</a>"));
    CU_ASSERT(!xml_well_formed("<a>\001</a>"));
    CU_ASSERT(!xml_well_formed("<a x=\"<\"></a>"));
    CU_ASSERT(!xml_well_formed("<a>"));
}

static void
test_report__junit(void)
{
    struct run r;
    char *xml;

    run_init(&r);
    xml = leakgate_report__junit(r.all, 4, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    check_xml(xml);
    CU_ASSERT(contains(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<testsuites name=\"leakgate\" tests=\"4\" "
                            "failures=\"2\" errors=\"0\" skipped=\"1\" "
                            "time=\"0.026000\">\n  <properties>\n"));
    CU_ASSERT(contains(xml, "<property name=\"leakgate.jemalloc_version\" "
                            "value=\"5.3.0-0-g54eaed1d\"/>"));
    CU_ASSERT(contains(xml, "<property name=\"leakgate.build_id\" "
                            "value=\"1a2b3c\"/>"));
    CU_ASSERT(contains(xml, "<property name=\"leakgate.thresholds\" "
                            "value=\"leakgate.yaml\"/>"));
    CU_ASSERT(contains(xml, "  <testsuite name=\"parser\" tests=\"3\" "
                            "failures=\"1\" errors=\"0\" skipped=\"1\" "
                            "time=\"0.026000\">\n    <properties>\n"));
    CU_ASSERT(contains(xml, "  <testsuite name=\"io\" tests=\"1\" "
                            "failures=\"1\""));
    /* Suites in order of appearance, the window grouped with its suite. */
    CU_ASSERT(strstr(xml, "name=\"[suite]\"") < strstr(xml, "\"io\""));
    CU_ASSERT(contains(xml, "    <testcase classname=\"parser\" "
                            "name=\"test_cache_insert\" time=\"0.012500\">\n"
                            "      <properties>\n        <property "
                            "name=\"leakgate.retained_bytes\" "
                            "value=\"4208\"/>\n"));
    CU_ASSERT(contains(xml, "\"leakgate.retained_objects\" value=\"2\""));
    CU_ASSERT(contains(xml, "\"leakgate.stacks\" value=\"2\""));
    CU_ASSERT(contains(xml, "\"leakgate.stack.1.bytes\" value=\"4096\""));
    CU_ASSERT(contains(xml, "\"leakgate.stack.2.objects\" value=\"1\""));
    CU_ASSERT(contains(xml, "\"leakgate.stack.1.frames\" value=\"test_cache_"
                            "insert;parser_feed;make_node;cache_insert\""));
    CU_ASSERT(contains(xml, "\"leakgate.stack.2.frames\" value=\"test_cache_"
                            "insert;??;strdup\""));
    CU_ASSERT_PTR_NULL(strstr(xml, "leakgate.stack.3."));
    leakgate_util__free(xml);
}

static void
test_report__junit_failures(void)
{
    struct run r;
    char *xml;
    const char *window;

    run_init(&r);
    xml = leakgate_report__junit(r.all, 4, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    /* One <failure> holding both the assertions and the leak. */
    CU_ASSERT(contains(xml, "      <failure message=\"src/t.c:7: CU_ASSERT(x)"
                            " (and 1 more assertion failure); FAIL parser/"
                            "test_cache_insert: 4,208 B retained in 2 objects"
                            " (2 stacks over their limits)\" type=\"leak\">"
                            "src/t.c:7: CU_ASSERT(x)\nsrc/t.c:9: "
                            "CU_ASSERT_EQUAL(a, b)\n\nleakgate: FAIL parser/"
                            "test_cache_insert: 4,208 B"));
    CU_ASSERT(contains(xml, "limit: 0\n</failure>\n    </testcase>\n"));
    CU_ASSERT(contains(xml, "    <testcase classname=\"parser\" "
                            "name=\"test_ok\" time=\"0.001000\">\n      "
                            "<properties>"));
    CU_ASSERT(contains(xml, "\"leakgate.retained_bytes\" value=\"0\"/>\n"
                            "        <property name=\"leakgate.retained_"
                            "objects\" value=\"0\"/>\n"));
    CU_ASSERT(contains(xml, "    <testcase classname=\"io\" name=\"test_read\" "
                            "time=\"0.000000\">\n      <failure message="
                            "\"src/t.c:3: CU_ASSERT(x)\" type=\"assertion\">"
                            "src/t.c:3: CU_ASSERT(x)\n</failure>\n"
                            "    </testcase>\n"));
    CU_ASSERT(contains(xml, "<system-out>leakgate: NOTE parser/[suite]: 4,208"
                            " B retained in 2 objects, not judged: measured "
                            "only: this window is not selected for "
                            "judging\n"));
    window = strstr(xml, "name=\"[suite]\"");
    CU_ASSERT_FATAL(window != NULL);
    CU_ASSERT(strstr(window, "<failure") > strstr(window, "</testcase>"));
    leakgate_util__free(xml);
    /* The verdict's own report is used when it has one. */
    r.fail.v.report = s_name;
    xml = leakgate_report__junit(r.all, 1, &r.fail.env);
    CU_ASSERT(contains(xml, "\n\nparser/test_cache_insert</failure>"));
    leakgate_util__free(xml);
}

/* A window leakgate could not judge is a JUnit <error> (never a pass),
 * one left out on purpose a <skipped>; the counts say both. */
static void
test_report__junit_unjudged(void)
{
    static char why[] = "the replay that measures it failed: it timed out";
    struct run r;
    char *xml;
    const char *window;

    run_init(&r);
    xml = leakgate_report__junit(r.all, 4, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    window = strstr(xml, "name=\"[suite]\"");
    CU_ASSERT_FATAL(window != NULL);
    CU_ASSERT(contains(window, "      <skipped message=\"measured only: this "
                               "window is not selected for judging\"/>\n"));
    CU_ASSERT_PTR_NULL(strstr(xml, "<error"));
    leakgate_util__free(xml);
    r.window.v.not_judged_why = why;
    xml = leakgate_report__junit(r.all, 4, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    check_xml(xml);
    window = strstr(xml, "name=\"[suite]\"");
    CU_ASSERT_FATAL(window != NULL);
    CU_ASSERT(contains(window, "      <error message=\"not judged: the replay "
                               "that measures it failed: it timed out\" "
                               "type=\"not_judged\">leakgate: NOTE "
                               "parser/[suite]: 4,208 B"));
    CU_ASSERT_PTR_NULL(strstr(xml, "<skipped"));
    CU_ASSERT(contains(xml, "<testsuites name=\"leakgate\" tests=\"4\" "
                            "failures=\"2\" errors=\"1\" skipped=\"0\""));
    CU_ASSERT(contains(xml, "<testsuite name=\"parser\" tests=\"3\" "
                            "failures=\"1\" errors=\"1\" skipped=\"0\""));
    leakgate_util__free(xml);
}

static size_t
count_of(const char *haystack, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* A window over its peak_limit and nothing else: 2 MiB peak, 1 MiB
 * limit from the test entry; its peak stack is stack 1. */
static void
peak_only(struct fixture *fx)
{
    fx->v.nstacks = 0;
    fx->v.policy =
        (struct leakgate_policy_verdict){0, 0, false, 0, false, false, 0, true};
    fx->v.peak_known = true;
    fx->v.peak_bytes = 2097152;
    fx->v.allocations = 3;
    fx->v.peak_over = true;
    fx->v.settings.peak_limited = true;
    fx->v.settings.peak_limit = 1048576;
    fx->v.settings.peak_entry = &fx->test_entry;
    fx->v.peak_level = 2097152;
    fx->v.peak_stacks = fx->stacks;
    fx->v.npeak_stacks = 1;
}

static void
test_report__junit_peak(void)
{
    struct run r;
    const struct leakgate_verdict *one[1];
    char *xml;

    run_init(&r);
    peak_only(&r.fail);
    r.fail.v.nnotes = 0;
    one[0] = &r.fail.v;
    xml = leakgate_report__junit(one, 1, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    check_xml(xml);
    CU_ASSERT(contains(xml, "\"leakgate.excluded_bytes\" value=\"0\"/>\n"
                            "        <property name=\"leakgate.peak_bytes\" "
                            "value=\"2097152\"/>\n        <property name=\""
                            "leakgate.allocations\" value=\"3\"/>\n        "
                            "<property name=\"leakgate.peak_limit\" value=\""
                            "1048576\"/>\n"));
    /* The message is the report's header: it names the peak. */
    CU_ASSERT(contains(xml, "<failure message=\"FAIL parser/test_cache_"
                            "insert: 0 B retained in 0 objects (peak over its "
                            "limit of 1,048,576 B (tests &quot;parser/*&quot; "
                            "peak_limit, leakgate.yaml:10)); peak 2,097,152 B,"
                            " 3 allocations\" type=\"peak\">"));
    CU_ASSERT(contains(xml, "peak stack 1 of 1: 4,096 B in 1 object"));
    CU_ASSERT_PTR_NULL(strstr(xml, "type=\"leak\""));
    leakgate_util__free(xml);
    /* Over a stack limit too: a leak, and the message says both. */
    r.fail.v.nstacks = 4;
    r.fail.v.policy = (struct leakgate_policy_verdict){
        4208, 2, false, 0, false, false, 2, true};
    xml = leakgate_report__junit(one, 1, &r.fail.env);
    CU_ASSERT(contains(xml, "(2 stacks over their limits; peak over its "
                            "limit of 1,048,576 B"));
    CU_ASSERT(contains(xml, "\" type=\"leak\">"));
    CU_ASSERT_PTR_NULL(strstr(xml, "type=\"peak\""));
    leakgate_util__free(xml);
}

static void
test_report__junit_peak_absent(void)
{
    struct run r;
    char *xml;

    run_init(&r);
    /* Measured without a limit: the figures, no limit. */
    r.pass.peak_known = true;
    r.pass.peak_bytes = 4096;
    r.pass.allocations = 1;
    xml = leakgate_report__junit(r.all, 4, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    CU_ASSERT(contains(xml, "name=\"test_ok\" time=\"0.001000\">\n"
                            "      <properties>\n"));
    CU_ASSERT(contains(xml, "<property name=\"leakgate.peak_bytes\" "
                            "value=\"4096\"/>\n        <property name=\""
                            "leakgate.allocations\" value=\"1\"/>\n      "
                            "</properties>"));
    CU_ASSERT_PTR_NULL(strstr(xml, "leakgate.peak_limit"));
    /* Not measured (the others, and version-1 results): no peak at all. */
    CU_ASSERT_EQUAL(count_of(xml, "leakgate.peak_bytes"), 1);
    CU_ASSERT_EQUAL(count_of(xml, "leakgate.allocations"), 1);
    CU_ASSERT_PTR_NULL(strstr(xml, "type=\"peak\""));
    leakgate_util__free(xml);
}

static void
test_report__junit_escaping(void)
{
    struct run r;
    static char suite[] = "a<b&\"c'";
    static char test[] = "t\001\nx";
    static char msg[] = "bad \xff\xfe, \xef\xbf\xbf, ok \xc3\xa9 ]]> <&>";
    char *xml;

    run_init(&r);
    r.noted.suite = suite;
    r.noted.test = test;
    r.io_note.message = msg;
    xml = leakgate_report__junit(r.all + 2, 1, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(xml);
    check_xml(xml);
    CU_ASSERT(contains(xml, "<testsuite name=\"a&lt;b&amp;&quot;c&apos;\""));
    /* Names as leakgate prints them: a control byte or a newline is an
     * escape, visible (XML 1.0 cannot carry them). */
    CU_ASSERT(contains(xml, "<testcase classname=\"a&lt;b&amp;&quot;c&apos;\""
                            " name=\"t\\x01\\nx\""));
    CU_ASSERT(contains(xml, "message=\"src/t.c:3: bad ??, ?, ok \xc3\xa9 ]]&gt;"
                            " &lt;&amp;&gt;\""));
    leakgate_util__free(xml);
    /* No verdicts at all is still a valid document. */
    xml = leakgate_report__junit(NULL, 0, &r.fail.env);
    CU_ASSERT(contains(xml, "tests=\"0\" failures=\"0\""));
    check_xml(xml);
    leakgate_util__free(xml);
}

/* ---- JSON -------------------------------------------------------------- */

static const char json_script[] =
    "import json, sys\n"
    "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
    "assert d['format'] == 'leakgate-results' and d['version'] == 2\n"
    "e = d['environment']\n"
    "assert e['jemalloc_version'] == '5.3.0-0-g54eaed1d', e\n"
    "assert e['report_dir'] is None and e['build_id'] == '1a2b3c', e\n"
    "assert d['summary'] == {'tests': 4, 'passed': 2, 'failed': 1,\n"
    "                        'not_judged': 1}, d['summary']\n"
    "t = d['tests'][0]\n"
    "assert t['status'] == 'fail' and t['name'] == 'parser/test_cache_insert'\n"
    "assert t['retained_bytes'] == 4208 and t['retained_objects'] == 2\n"
    "assert t['total_limit'] is None and t['stack_limit'] == 0\n"
    "assert t['test_entry'] == {'pattern': 'parser/*', 'line': 10}\n"
    "assert t['notes'][0] == {'file': 'src/t.c', 'line': 7,\n"
    "                         'message': 'CU_ASSERT(x)'}, t['notes']\n"
    "assert t['artifacts']['heap_before'] is None\n"
    "s = t['stacks']\n"
    "assert [x['bytes'] for x in s] == [4096, 112, 48, -64]\n"
    "assert s[0]['limit_source'] == 'defaults' and s[0]['over']\n"
    "assert s[0]['limit'] == 0 and s[0]['counted']\n"
    "assert s[1]['rule_line'] == 12 and s[1]['limit_source'] == 'stack_rule'\n"
    "assert s[1]['threads'] == [{'tid': 2, 'bytes': 112, 'objects': 1}]\n"
    "assert s[2]['ignored'] and s[2]['ignore_line'] == 20\n"
    "assert s[2]['ignore_reason'] == 'libc time-zone cache'\n"
    "assert s[2]['limit'] is None and not s[2]['counted']\n"
    "assert s[3]['frames'] is None and s[3]['pcs'] == ['0x405050', "
    "'0x406060']\n"
    "assert not s[3]['judged'] and s[3]['objects'] == -1\n"
    "f = s[0]['frames']\n"
    "assert f[0]['function'] == 'cache_insert' and f[0]['inlined']\n"
    "assert f[0]['line'] == 42 and f[0]['pc'] == '0x401010'\n"
    "assert f[4]['shown'] is False and f[4]['function'] is None\n"
    "assert f[4]['offset'] == '0x5a5a' and f[4]['line'] is None\n"
    "assert d['tests'][2]['measured'] is False\n"
    "w = d['tests'][3]\n"
    "assert w['status'] == 'not_judged' and w['test'] == '[suite]'\n"
    "assert w['not_judged_why'].startswith('measured only')\n"
    "x = d['tests'][1]\n"
    "assert x['stacks'] == [] and x['notes'] == [] and x['report'] is None\n"
    "print('ok')\n";

static void
test_report__json(void)
{
    struct run r;
    char *json, spath[32], cmd[64], got[4096] = "";

    run_init(&r);
    json = leakgate_report__json(r.all, 4, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    CU_ASSERT(contains(json, "{\n  \"format\": \"leakgate-results\",\n"
                             "  \"version\": 2,\n"));
    CU_ASSERT(contains(json, "\"total_limit\": null,"));
    CU_ASSERT(contains(json, "\"pcs\": [\n"));
    if (!have("command -v python3")) {
        fprintf(stderr, "(skipped: python3 not found) ");
        leakgate_util__free(json);
        return;
    }
    CU_ASSERT_EQUAL(run_on("python3 -m json.tool", json, NULL, 0), 0);
    CU_ASSERT_FATAL(write_temp(spath, json_script));
    snprintf(cmd, sizeof cmd, "python3 %s", spath);
    CU_ASSERT_EQUAL(run_on(cmd, json, got, sizeof got), 0);
    CU_ASSERT_STRING_EQUAL(got, "ok\n");
    unlink(spath);
    leakgate_util__free(json);
}

/* The text, JSON and JUnit of r's failing window. */
struct rendered {
    char *text, *json, *xml;
};

static void
render_all(struct rendered *out, struct run *r)
{
    out->text = leakgate_report__text(&r->fail.v, &r->fail.env, false);
    out->json = leakgate_report__json(r->all, 4, &r->fail.env);
    out->xml = leakgate_report__junit(r->all, 4, &r->fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out->text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out->json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out->xml);
}

static void
rendered_free(struct rendered *out)
{
    leakgate_util__free(out->text);
    leakgate_util__free(out->json);
    leakgate_util__free(out->xml);
}

/* The bytes the program asked for, beside the usable bytes: shown where
 * known (equal ones too), null in JSON where not known. */
static void
test_report__requested(void)
{
    struct run r;
    struct rendered o;

    run_init(&r);
    r.fail.stacks[0].requested = 4000;
    r.fail.stacks[0].requested_known = true;
    r.fail.stacks[1].requested = 112; /* the same: shown all the same */
    r.fail.stacks[1].requested_known = true;
    render_all(&o, &r);
    CU_ASSERT(contains(o.text, "leakgate: FAIL parser/test_cache_insert: "
                               "4,208 B (4,112 B requested) retained in 2 "
                               "objects"));
    CU_ASSERT(contains(o.text, "  stack 1 of 2: 4,096 B (4,000 B requested) "
                               "in 1 object, limit 0 B"));
    CU_ASSERT(contains(o.text, "  stack 2 of 2: 112 B (112 B requested) in 1 "
                               "object"));
    CU_ASSERT(contains(o.json, "\"retained_bytes\": 4208,\n"
                               "      \"requested_bytes\": 4112,"));
    CU_ASSERT(contains(o.json, "\"bytes\": 4096,\n"
                               "          \"requested_bytes\": 4000,"));
    CU_ASSERT(contains(o.json, "\"bytes\": 112,\n"
                               "          \"requested_bytes\": 112,"));
    CU_ASSERT(contains(o.json, "\"bytes\": 48,\n"
                               "          \"requested_bytes\": null,"));
    CU_ASSERT(contains(o.xml, "\"leakgate.requested_bytes\" value=\"4112\""));
    CU_ASSERT(contains(o.xml, "\"leakgate.stack.1.requested_bytes\" "
                              "value=\"4000\""));
    CU_ASSERT(contains(o.xml, "\"leakgate.stack.2.requested_bytes\" "
                              "value=\"112\""));
    rendered_free(&o);

    /* One counted stack unknown: no total, that stack without one. */
    r.fail.stacks[1].requested_known = false;
    render_all(&o, &r);
    CU_ASSERT(contains(o.text, "test_cache_insert: 4,208 B retained in 2 "));
    CU_ASSERT(contains(o.text, "  stack 2 of 2: 112 B in 1 object"));
    CU_ASSERT(contains(o.text, "4,096 B (4,000 B requested) in 1 object"));
    CU_ASSERT(contains(o.json, "\"retained_bytes\": 4208,\n"
                               "      \"requested_bytes\": null,"));
    CU_ASSERT(contains(o.json, "\"bytes\": 112,\n"
                               "          \"requested_bytes\": null,"));
    CU_ASSERT(!strstr(o.xml, "\"leakgate.requested_bytes\""));
    CU_ASSERT(!strstr(o.xml, "\"leakgate.stack.2.requested_bytes\""));
    rendered_free(&o);
}

static void
test_report__json_escaping(void)
{
    static const char script[] =
        "import json, sys\n"
        "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
        "t = d['tests'][0]\n"
        "assert t['suite'] == 'a\"b\\\\c', t['suite']\n"
        "assert t['test'] == 't\\x01\\nx\\ty', t['test']\n"
        "assert t['notes'][0]['message'] == 'bad \\ufffd\\ufffd, ok \\xe9'\n"
        "assert d['environment']['thresholds'] is None\n"
        "print('ok')\n";
    static char suite[] = "a\"b\\c";
    static char test[] = "t\001\nx\ty";
    static char msg[] = "bad \xff\xfe, ok \xc3\xa9";
    struct run r;
    char *json, spath[32], cmd[64], got[256] = "";

    run_init(&r);
    r.noted.suite = suite;
    r.noted.test = test;
    r.noted.seconds = NAN; /* must not reach the document */
    r.io_note.message = msg;
    r.fail.env.thresholds_path = NULL;
    json = leakgate_report__json(r.all + 2, 1, &r.fail.env);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    CU_ASSERT(contains(json, "\"test\": \"t\\u0001\\nx\\ty\""));
    CU_ASSERT(contains(json, "\"seconds\": 0.000000,"));
    CU_ASSERT(contains(json, "\"message\": \"bad \\ufffd\\ufffd, ok "
                             "\xc3\xa9\""));
    if (have("command -v python3")) {
        CU_ASSERT_FATAL(write_temp(spath, script));
        snprintf(cmd, sizeof cmd, "python3 %s", spath);
        CU_ASSERT_EQUAL(run_on(cmd, json, got, sizeof got), 0);
        CU_ASSERT_STRING_EQUAL(got, "ok\n");
        unlink(spath);
    }
    leakgate_util__free(json);
    json = leakgate_report__json(NULL, 0, &r.fail.env);
    CU_ASSERT(contains(json, "\"tests\": []\n}\n"));
    leakgate_util__free(json);
}

/* ---- allocation failures ------------------------------------------------ */

enum render { R_TEXT, R_YAML, R_JUNIT, R_JSON };

static char *
render(enum render what, struct run *r)
{
    switch (what) {
    case R_TEXT: return leakgate_report__text(&r->fail.v, &r->fail.env, true);
    case R_YAML: return leakgate_report__yaml(&r->fail.v);
    case R_JUNIT: return leakgate_report__junit(r->all, 4, &r->fail.env);
    case R_JSON: return leakgate_report__json(r->all, 4, &r->fail.env);
    }
    return NULL;
}

/* Every prefix of successful allocations ends in NULL (and, under ASan,
 * no leak) until the output is complete and identical to the real one. */
static void
check_enomem(enum render what)
{
    struct run r;
    char *want, *got = NULL;
    size_t k;

    run_init(&r);
    want = render(what, &r);
    CU_ASSERT_PTR_NOT_NULL_FATAL(want);
    for (k = 0; k < 100000 && !got; k++) {
        leakgate_util__fail_after(k);
        got = render(what, &r);
        leakgate_util__fail_after(SIZE_MAX);
    }
    CU_ASSERT(k > 1); /* the first attempt had no allocation at all */
    CU_ASSERT_PTR_NOT_NULL_FATAL(got);
    CU_ASSERT_STRING_EQUAL(got, want);
    leakgate_util__free(got);
    leakgate_util__free(want);
}

static void
test_report__enomem(void)
{
    check_enomem(R_TEXT);
    check_enomem(R_YAML);
    check_enomem(R_JUNIT);
    check_enomem(R_JSON);
}

/* ---- verdict ----------------------------------------------------------- */

static void
test_report__verdict_free(void)
{
    struct leakgate_verdict *v = leakgate_util__calloc(1, sizeof *v);

    leakgate_verdict__free(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    v->suite = leakgate_util__strdup("s");
    v->test = leakgate_util__strdup("t");
    v->name = leakgate_util__strdup("s/t");
    v->not_judged_why = leakgate_util__strdup("why");
    v->report = leakgate_util__strdup("");
    v->artifact_dir = leakgate_util__strdup("d");
    v->heap_before = leakgate_util__strdup("b");
    v->heap_after = leakgate_util__strdup("a");
    v->json_path = leakgate_util__strdup("j");
    v->nstacks = 2;
    v->stacks = leakgate_util__calloc(2, sizeof *v->stacks);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v->stacks);
    v->stacks[0].pcs = leakgate_util__calloc(3, sizeof(uintptr_t));
    v->stacks[0].frames =
        leakgate_util__calloc(3, sizeof(struct leakgate_frame));
    v->stacks[0].threads =
        leakgate_util__calloc(1, sizeof(struct leakgate_diff_thread));
    v->nnotes = 1;
    v->notes = leakgate_util__calloc(1, sizeof *v->notes);
    CU_ASSERT_PTR_NOT_NULL_FATAL(v->notes);
    v->notes[0].file = leakgate_util__strdup("f.c");
    v->notes[0].message = leakgate_util__strdup("m");
    /* LeakSanitizer (the sanitizer build) fails the run if anything of
     * this is left behind. */
    leakgate_verdict__free(v);
}

const char *const unit_suite = "report";
const struct unit_case unit_cases[] = {
    {"test_report__runner_frames_trimmed", test_report__runner_frames_trimmed},
    {"test_report__golden_failure", test_report__golden_failure},
    {"test_report__pass_is_empty", test_report__pass_is_empty},
    {"test_report__color", test_report__color},
    {"test_report__limit_sources", test_report__limit_sources},
    {"test_report__threads", test_report__threads},
    {"test_report__total_over", test_report__total_over},
    {"test_report__within_and_excluded", test_report__within_and_excluded},
    {"test_report__not_judged", test_report__not_judged},
    {"test_report__raw_pcs", test_report__raw_pcs},
    {"test_report__frames_edge_cases", test_report__frames_edge_cases},
    {"test_report__artifacts", test_report__artifacts},
    {"test_report__picture_artifacts", test_report__picture_artifacts},
    {"test_report__yaml_golden", test_report__yaml_golden},
    {"test_report__yaml_carry_over", test_report__yaml_carry_over},
    {"test_report__yaml_suite_window", test_report__yaml_suite_window},
    {"test_report__yaml_escaping", test_report__yaml_escaping},
    {"test_report__yaml_merges_rules", test_report__yaml_merges_rules},
    {"test_report__yaml_parses", test_report__yaml_parses},
    {"test_report__xml_checker", test_report__xml_checker},
    {"test_report__junit", test_report__junit},
    {"test_report__junit_failures", test_report__junit_failures},
    {"test_report__junit_unjudged", test_report__junit_unjudged},
    {"test_report__junit_peak", test_report__junit_peak},
    {"test_report__junit_peak_absent", test_report__junit_peak_absent},
    {"test_report__junit_escaping", test_report__junit_escaping},
    {"test_report__json", test_report__json},
    {"test_report__requested", test_report__requested},
    {"test_report__json_escaping", test_report__json_escaping},
    {"test_report__enomem", test_report__enomem},
    {"test_report__verdict_free", test_report__verdict_free},
    {NULL, NULL},
};
