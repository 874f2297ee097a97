/* SPDX-License-Identifier: MIT */
/* sarif: failing windows and compare regressions as SARIF 2.1.0: one
 * result per window, at the innermost frame under the source root, with
 * the stack as related locations; paths relative to SRCROOT; passing
 * windows give none; a window without a stack gets a logical location. */
#include "unit.h"

#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "config.h"
#include "json.h"
#include "sarif.h"
#include "util.h"

const char *const unit_suite = "sarif";

static struct leakgate_frame frames[] = {
    {0x10, "strdup", "string/strdup.c", 40, "/lib/libc.so.6", 0x10, false},
    {0x20, "cache_put", "/w/my src/cache.c", 42, "/bin/t", 0x20, true},
    {0x30, "cache_add", "/w/my src/cache.c", 50, "/bin/t", 0x30, false},
    {0x40, "test_cache", "/w/tests/test.c", 7, "/bin/t", 0x40, false},
};

static struct leakgate_config_entry entry = {.pattern = (char[]){"t/peak"},
                                             .line = 12};

static struct leakgate_verdict *
failing(const char *name, bool peak_only)
{
    struct leakgate_verdict *v = calloc(1, sizeof *v);
    struct leakgate_vstack *s = calloc(1, sizeof *s);

    v->name = leakgate_util__strdup(name);
    v->measured = true;
    v->status = LEAKGATE_STATUS_FAIL;
    s->bytes = 112;
    s->objs = 1;
    s->frames = frames;
    s->nframes = 4;
    s->shown_begin = 0;
    s->shown_end = 4;
    s->judgement.judged = true;
    if (peak_only) {
        v->peak_known = v->peak_over = true;
        v->peak_bytes = 4096;
        v->settings.peak_limited = true;
        v->settings.peak_limit = 1024;
        v->peak_stacks = s;
        v->npeak_stacks = 1;
    } else {
        s->judgement.over = true;
        v->policy.total_bytes = 112;
        v->policy.nover = 1;
        v->policy.failed = true;
        v->stacks = s;
        v->nstacks = 1;
    }
    return v;
}

static void
free_failing(struct leakgate_verdict *v)
{
    free(v->name);
    free(v->stacks);
    free(v->peak_stacks);
    free(v);
}

/* results[i] of the log. */
static const struct leakgate_json *
result(const struct leakgate_json *log, size_t i)
{
    const struct leakgate_json *runs = leakgate_json__get(log, "runs");
    const struct leakgate_json *res =
        leakgate_json__get(&runs->items[0], "results");

    return i < res->n ? &res->items[i] : NULL;
}

static void
test_sarif__relative(void)
{
    CU_ASSERT_STRING_EQUAL(leakgate_sarif__relative("/w/src/a.c", "/w"),
                           "src/a.c");
    CU_ASSERT_STRING_EQUAL(leakgate_sarif__relative("/w/src/a.c", "/w/"),
                           "src/a.c");
    CU_ASSERT_STRING_EQUAL(leakgate_sarif__relative("/w/a.c", "/"), "w/a.c");
    CU_ASSERT_PTR_NULL(leakgate_sarif__relative("/wx/a.c", "/w"));
    CU_ASSERT_PTR_NULL(leakgate_sarif__relative("a.c", "/w"));
    CU_ASSERT_PTR_NULL(leakgate_sarif__relative("/w/a.c", NULL));
    CU_ASSERT_PTR_NULL(leakgate_sarif__relative(NULL, "/w"));
}

static void
test_sarif__results(void)
{
    struct leakgate_verdict *v[3] = {failing("t/leak", false),
                                     failing("t/peak", true),
                                     failing("t/pass", false)};
    struct leakgate_json *log = NULL;
    char *text;

    v[2]->status = LEAKGATE_STATUS_PASS;
    text = leakgate_sarif__results((const struct leakgate_verdict *const *)v, 3,
                                   "/w", NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(
        leakgate_json__parse(&log, text, strlen(text), "x.sarif", NULL), 0);
    CU_ASSERT_STRING_EQUAL(leakgate_json__get(log, "version")->text, "2.1.0");
    CU_ASSERT_PTR_NOT_NULL(result(log, 1));
    CU_ASSERT_PTR_NULL(result(log, 2)); /* the pass has none */
    /* the innermost frame under the root, not libc's; its path relative
     * and percent-encoded */
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "\"locations\": [{\"physicalLocation\": {\"artifactLocation\": "
              "{\"uri\": \"my%20src/cache.c\", \"uriBaseId\": \"SRCROOT\"}, "
              "\"region\": {\"startLine\": 42}}"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "\"SRCROOT\": {\"uri\": \"file:///w/\"}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"ruleId\": \"leakgate/leak\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"ruleId\": \"leakgate/peak\""));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "t/leak: retained over its limit; 112 B in 1 object "
                     "allocated here (in cache_put)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "held at the peak"));
    /* every frame with a file is a related location, libc's too */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"message\": {\"text\": \"frame 4: "
                                        "test_cache\"}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "frame 2 (inlined): cache_put"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"stack_bytes\": 112"));
    leakgate_json__free(log);
    free(text);
    /* the root given through a symbolic link (/l to /w): frames under its
     * real path are under it, SRCROOT keeps the given spelling */
    text = leakgate_sarif__results((const struct leakgate_verdict *const *)v, 1,
                                   "/l", "/w", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "{\"uri\": \"my%20src/cache.c\", \"uriBaseId\": \"SRCROOT\"}"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "\"SRCROOT\": {\"uri\": \"file:///l/\"}"));
    free(text);
    /* No root: absolute file: URIs. */
    text = leakgate_sarif__results((const struct leakgate_verdict *const *)v, 1,
                                   NULL, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"uri\": \"file:///w/my%20src/"
                                        "cache.c\"}"));
    CU_ASSERT_PTR_NULL(strstr(text, "originalUriBaseIds"));
    free(text);
    for (int i = 0; i < 3; i++)
        free_failing(v[i]);
}

static void
test_sarif__compare(void)
{
    struct leakgate_verdict *head = failing("t/leak", false);
    struct leakgate_verdict *peak = failing("t/peak", false);
    const struct leakgate_vstack *new_stacks[1] = {&head->stacks[0]};
    struct leakgate_compare_row rows[3] = {
        {.name = "t/leak",
         .head = head,
         .why = LEAKGATE_COMPARE_WHY_RETAINED,
         .new_stacks = new_stacks,
         .nnew_stacks = 1},
        {.name = "t/peak", .head = peak, .why = LEAKGATE_COMPARE_WHY_PEAK},
        {.name = "t/same", .head = peak},
    };
    struct leakgate_compare c = {.rows = rows, .n = 3};
    struct leakgate_json *log = NULL;
    char *text;

    /* a peak that grew under its limit keeps no stack: without a
     * thresholds file it is left out (code scanning refuses a result
     * without a physical location) */
    peak->nstacks = 0;
    text = leakgate_sarif__compare(&c, "/w", NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(
        leakgate_json__parse(&log, text, strlen(text), "c.sarif", NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(result(log, 0));
    CU_ASSERT_PTR_NULL(result(log, 1));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "\"ruleId\": \"leakgate/retained-growth\""));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "\"uri\": \"my%20src/cache.c\""));
    CU_ASSERT_PTR_NULL(strstr(text, "leakgate/peak-growth\", \"ruleIndex"));
    leakgate_json__free(log);
    log = NULL;
    free(text);
    /* with the head's thresholds file: at the test's entry there */
    peak->settings.test_entry = &entry;
    text = leakgate_sarif__compare(&c, "/w", NULL, "/w/leakgate.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_EQUAL_FATAL(
        leakgate_json__parse(&log, text, strlen(text), "c.sarif", NULL), 0);
    CU_ASSERT_PTR_NOT_NULL(result(log, 1));
    CU_ASSERT_PTR_NULL(result(log, 2));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "\"ruleId\": \"leakgate/peak-growth\", \"ruleIndex\": 4"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "\"uri\": \"leakgate.yaml\", \"uriBaseId\": \"SRCROOT\"}, "
                     "\"region\": {\"startLine\": 12}}"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "no stack was taken"));
    leakgate_json__free(log);
    free(text);
    /* allocations that grew: a peak_limit would not give their stacks */
    rows[1].why = LEAKGATE_COMPARE_WHY_ALLOCS;
    text = leakgate_sarif__compare(&c, "/w", NULL, "/w/leakgate.yaml");
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(text, "; allocation counts keep no stack: this is the "
                     "thresholds entry of the test"));
    CU_ASSERT_PTR_NULL(strstr(text, "peak stacks are taken"));
    free(text);
    free_failing(head);
    free_failing(peak);
}

const struct unit_case unit_cases[] = {
    {"test_sarif__relative", test_sarif__relative},
    {"test_sarif__results", test_sarif__results},
    {"test_sarif__compare", test_sarif__compare},
    {NULL, NULL},
};
