/* SPDX-License-Identifier: MIT */
/* compare: two runs' windows compared test by test; what makes a
 * regression (retained growth always, peak and allocations over a
 * percentage and a floor, new retained stacks), the order of the rows,
 * the options, the renderings, and the version check of the public API. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "json.h"
#include "leakgate/compare.h"
#include "results.h"
#include "util.h"

const char *const unit_suite = "compare";

/* A measured passing window with the given figures and no stacks. */
static struct leakgate_verdict *
window(const char *name, uint64_t retained, uint64_t peak, uint64_t allocs)
{
    struct leakgate_verdict *v = calloc(1, sizeof *v);

    v->name = leakgate_util__strdup(name);
    v->measured = true;
    v->status = LEAKGATE_STATUS_PASS;
    v->policy.total_bytes = retained;
    v->peak_known = true;
    v->peak_bytes = peak;
    v->allocations = allocs;
    return v;
}

static struct leakgate_frame frames_a[] = {
    {0x10, "cache_put", "/src/cache.c", 42, "/bin/t", 0x10, false},
    {0x20, "test_cache", "/src/test.c", 7, "/bin/t", 0x20, false},
};
static struct leakgate_frame frames_b[] = {
    {0x30, "cache_grow", "/src/cache.c", 60, "/bin/t", 0x30, false},
    {0x20, "test_cache", "/src/test.c", 7, "/bin/t", 0x20, false},
};

/* Give v one counted stack of bytes with the frames (borrowed). */
static void
add_stack(struct leakgate_verdict *v,
          struct leakgate_frame *frames,
          int64_t bytes)
{
    struct leakgate_vstack *s;

    v->stacks = realloc(v->stacks, (v->nstacks + 1) * sizeof *v->stacks);
    s = &v->stacks[v->nstacks++];
    memset(s, 0, sizeof *s);
    s->bytes = bytes;
    s->objs = 1;
    s->frames = frames;
    s->nframes = 2;
    s->shown_begin = 0;
    s->shown_end = 2;
    s->judgement.judged = true;
}

static void
free_window(struct leakgate_verdict *v)
{
    free(v->origin);
    free(v->name);
    free(v->stacks);
    free(v);
}

static const struct leakgate_compare_row *
row(const struct leakgate_compare *c, const char *name)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->rows[i].name, name) == 0)
            return &c->rows[i];
    return NULL;
}

struct two_runs {
    struct leakgate_verdict *base[6], *head[6];
    size_t nbase, nhead;
};

static void
runs_setup(struct two_runs *r)
{
    memset(r, 0, sizeof *r);
    r->base[r->nbase++] = window("t/leak", 0, 100, 3);
    r->base[r->nbase++] = window("t/peak3x", 0, 32768, 10);
    r->base[r->nbase++] = window("t/peak_small", 0, 1000, 10);
    r->base[r->nbase++] = window("t/allocs", 0, 100, 100);
    r->base[r->nbase++] = window("t/gone", 0, 10, 1);
    r->head[r->nhead++] = window("t/leak", 16, 116, 4);
    add_stack(r->head[0], frames_a, 16);
    r->head[r->nhead++] = window("t/peak3x", 0, 98304, 10);
    r->head[r->nhead++] = window("t/peak_small", 0, 2000, 10);
    r->head[r->nhead++] = window("t/allocs", 0, 100, 130);
    r->head[r->nhead++] = window("t/added", 0, 50, 2);
}

static void
runs_free(struct two_runs *r)
{
    for (size_t i = 0; i < r->nbase; i++)
        free_window(r->base[i]);
    for (size_t i = 0; i < r->nhead; i++)
        free_window(r->head[i]);
}

static int
build(struct leakgate_compare *c,
      const struct two_runs *r,
      const struct leakgate_compare_options *o)
{
    memset(c, 0, sizeof *c);
    if (leakgate_compare__limits(&c->lim, o) < 0)
        return -1;
    c->base_name = leakgate_util__strdup("base.json");
    c->head_name = leakgate_util__strdup("head|1.json");
    return leakgate_compare__build(
        c, (const struct leakgate_verdict *const *)r->base, r->nbase,
        (const struct leakgate_verdict *const *)r->head, r->nhead);
}

static void
test_compare__regressions(void)
{
    struct two_runs r;
    struct leakgate_compare c;

    runs_setup(&r);
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, NULL), 0);
    CU_ASSERT_EQUAL(c.n, 6);
    /* retained growth always; a 3x peak over 10% and 4 KiB; allocations
     * +30% and +30 over 20% and 16 */
    CU_ASSERT_EQUAL(row(&c, "t/leak")->why, LEAKGATE_COMPARE_WHY_RETAINED);
    CU_ASSERT_EQUAL(row(&c, "t/peak3x")->why, LEAKGATE_COMPARE_WHY_PEAK);
    CU_ASSERT_EQUAL(row(&c, "t/allocs")->why, LEAKGATE_COMPARE_WHY_ALLOCS);
    /* +100% but only 1,000 B: under the floor */
    CU_ASSERT_EQUAL(row(&c, "t/peak_small")->why, 0);
    CU_ASSERT_TRUE(row(&c, "t/peak_small")->changed);
    CU_ASSERT_PTR_NULL(row(&c, "t/added")->base);
    CU_ASSERT_EQUAL(row(&c, "t/added")->why, 0);
    CU_ASSERT_PTR_NULL(row(&c, "t/gone")->head);
    CU_ASSERT_EQUAL(c.nregressions, 3);
    CU_ASSERT_EQUAL(c.nchanged, 1);
    CU_ASSERT_EQUAL(c.nnew, 1);
    CU_ASSERT_EQUAL(c.nremoved, 1);
    CU_ASSERT_EQUAL(c.nunchanged, 0);
    /* regressions first, the largest change first */
    CU_ASSERT_STRING_EQUAL(c.rows[0].name, "t/peak3x");
    CU_ASSERT_STRING_EQUAL(c.rows[1].name, "t/leak");
    CU_ASSERT_STRING_EQUAL(c.rows[2].name, "t/allocs");
    CU_ASSERT_STRING_EQUAL(c.rows[3].name, "t/peak_small");
    /* the leak's stack is new: the base retained nothing */
    CU_ASSERT_EQUAL(row(&c, "t/leak")->nnew_stacks, 1);
    leakgate_compare__dispose(&c);
    /* the same run twice: nothing changed */
    CU_ASSERT_EQUAL_FATAL(
        leakgate_compare__build(
            &c, (const struct leakgate_verdict *const *)r.head, r.nhead,
            (const struct leakgate_verdict *const *)r.head, r.nhead),
        0);
    CU_ASSERT_EQUAL(c.nregressions, 0);
    CU_ASSERT_EQUAL(c.nunchanged, r.nhead);
    leakgate_compare__dispose(&c);
    runs_free(&r);
}

static void
test_compare__options(void)
{
    struct two_runs r;
    struct leakgate_compare c;
    struct leakgate_compare_options o = LEAKGATE_COMPARE_OPTIONS_INIT;

    runs_setup(&r);
    o.peak_growth = "off";
    o.alloc_growth = "31%";
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, &o), 0);
    CU_ASSERT_EQUAL(row(&c, "t/peak3x")->why, 0);
    CU_ASSERT_EQUAL(row(&c, "t/allocs")->why, 0);
    CU_ASSERT_EQUAL(c.nregressions, 1);
    leakgate_compare__dispose(&c);
    o = (struct leakgate_compare_options)LEAKGATE_COMPARE_OPTIONS_INIT;
    o.peak_floor = "512";
    o.alloc_floor = "31";
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, &o), 0);
    CU_ASSERT_EQUAL(row(&c, "t/peak_small")->why, LEAKGATE_COMPARE_WHY_PEAK);
    CU_ASSERT_EQUAL(row(&c, "t/allocs")->why, 0);
    leakgate_compare__dispose(&c);
    /* exactly the percentage is no regression: more than it is */
    o = (struct leakgate_compare_options)LEAKGATE_COMPARE_OPTIONS_INIT;
    o.peak_growth = "200";
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, &o), 0);
    CU_ASSERT_EQUAL(row(&c, "t/peak3x")->why, 0);
    leakgate_compare__dispose(&c);
    runs_free(&r);
}

static void
test_compare__bad_options(void)
{
    struct leakgate_compare_limits l;
    struct leakgate_compare_options o = LEAKGATE_COMPARE_OPTIONS_INIT;
    const char *bad[] = {"", "x", "-1", "10%%", "10 %", "1e3", "9999999"};

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        o.peak_growth = bad[i];
        CU_ASSERT_EQUAL(leakgate_compare__limits(&l, &o), LEAKGATE_EUSAGE);
        CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "--peak-growth"));
    }
    o.peak_growth = NULL;
    o.peak_floor = "4 KiBs";
    CU_ASSERT_EQUAL(leakgate_compare__limits(&l, &o), LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "'4 KiBs'"));
    o.peak_floor = "4 KiB";
    o.alloc_floor = "-3";
    CU_ASSERT_EQUAL(leakgate_compare__limits(&l, &o), LEAKGATE_EUSAGE);
    o.alloc_floor = "3";
    CU_ASSERT_EQUAL(leakgate_compare__limits(&l, &o), 0);
    CU_ASSERT_EQUAL(l.peak_floor, 4096);
    CU_ASSERT_EQUAL(l.alloc_floor, 3);
    CU_ASSERT_EQUAL(l.peak_pct, 10);
    CU_ASSERT_EQUAL(l.alloc_pct, 20);
}

static void
test_compare__new_stacks(void)
{
    struct two_runs r;
    struct leakgate_compare c;
    struct leakgate_compare_options o = LEAKGATE_COMPARE_OPTIONS_INIT;

    runs_setup(&r);
    /* Base retained 16 B from cache_put; head the same 16 B from
     * cache_grow: the total did not grow, the stack is new. */
    r.base[0]->policy.total_bytes = 16;
    add_stack(r.base[0], frames_a, 16);
    r.head[0]->stacks[0].frames = frames_b;
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, &o), 0);
    CU_ASSERT_EQUAL(row(&c, "t/leak")->why, 0);
    CU_ASSERT_EQUAL(row(&c, "t/leak")->nnew_stacks, 1);
    leakgate_compare__dispose(&c);
    o.new_stacks = 1;
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, &o), 0);
    CU_ASSERT_EQUAL(row(&c, "t/leak")->why, LEAKGATE_COMPARE_WHY_NEW_STACK);
    leakgate_compare__dispose(&c);
    /* The same stack on both sides is not new. */
    r.head[0]->stacks[0].frames = frames_a;
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, &o), 0);
    CU_ASSERT_EQUAL(row(&c, "t/leak")->why, 0);
    CU_ASSERT_EQUAL(row(&c, "t/leak")->nnew_stacks, 0);
    leakgate_compare__dispose(&c);
    runs_free(&r);
}

static void
test_compare__not_measured(void)
{
    struct two_runs r;
    struct leakgate_compare c;

    runs_setup(&r);
    /* A base record of assertions only: nothing to compare with. */
    r.base[0]->measured = false;
    r.base[1]->peak_known = false;
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, NULL), 0);
    CU_ASSERT_EQUAL(row(&c, "t/leak")->why, 0);
    CU_ASSERT_EQUAL(row(&c, "t/peak3x")->why, 0);
    CU_ASSERT_TRUE(row(&c, "t/peak3x")->changed);
    leakgate_compare__dispose(&c);
    /* A new test that retains regresses. */
    r.head[4]->policy.total_bytes = 8;
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, NULL), 0);
    CU_ASSERT_EQUAL(row(&c, "t/added")->why, LEAKGATE_COMPARE_WHY_RETAINED);
    leakgate_compare__dispose(&c);
    runs_free(&r);
}

/* The text, Markdown and JSON renderings of c (each may be NULL). */
static void
render_all(const struct leakgate_compare *c,
           char **text,
           char **md,
           char **json)
{
    *text = leakgate_compare__text(c);
    *md = leakgate_compare__markdown(c);
    *json = leakgate_compare__json(c);
}

static void
test_compare__renderings(void)
{
    struct two_runs r;
    struct leakgate_compare c;
    struct leakgate_json *root = NULL;
    char *text, *md, *json;

    runs_setup(&r);
    CU_ASSERT_EQUAL_FATAL(build(&c, &r, NULL), 0);
    render_all(&c, &text, &md, &json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "REGRESSION t/peak3x: peak +200.0% (+65,536 B)\n    retained 0 "
              "B -> 0 B; peak 32,768 B -> 98,304 B (+65,536 B, +200.0%)"));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "REGRESSION t/leak: retained +16 B\n    retained 0 B -> 16 B "
              "(+16 B); peak 100 B -> 116 B (+16 B, +16.0%); allocations 3 "
              "-> 4 (+1, +33.3%)\n    new stack 16 B in 1 object: cache_put "
              "cache.c:42 < test_cache test.c:7\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "removed    t/gone\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(
        text, "3 regressions; 1 changed within the limits, 1 new, 1 removed, "
              "0 unchanged"));
    /* Markdown: a '|' in a name is escaped, not a column */
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "### leakgate compare: 3 regressions"));
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "head head\\|1.json"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(md, "| :x: regression | t/leak | 0 B → 16 B (+16 B) |"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(md, "cache\\_put cache.c:42 &lt; test\\_cache"));
    /* JSON: strict-parser valid, every test */
    CU_ASSERT_EQUAL(
        leakgate_json__parse(&root, json, strlen(json), "compare.json", NULL),
        0);
    CU_ASSERT_EQUAL(leakgate_json__get(root, "tests")->n, 6);
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"reasons\": [\"retained\"]"));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"state\": \"removed\""));
    leakgate_json__free(root);
    free(text);
    free(md);
    free(json);
    leakgate_compare__dispose(&c);
    runs_free(&r);
}

#define ONE_TEST                                                               \
    "[{\"suite\": \"s\", \"test\": \"t\", \"status\": \"pass\", "              \
    "\"measured\": true, \"stacks\": []}]"
/* Markdown fits a pull-request comment (65,536 characters) whatever the
 * number of changed tests. */
static void
test_compare__markdown_bounded(void)
{
    enum { N = 3000 };
    struct leakgate_verdict **base = calloc(N, sizeof *base);
    struct leakgate_verdict **head = calloc(N, sizeof *head);
    struct leakgate_compare c;
    char name[64], *md, *text;

    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "suite_%04d/a_rather_long_test_name", i);
        base[i] = window(name, 0, 100, 1);
        head[i] = window(name, 16, 200, 2);
        add_stack(head[i], frames_a, 16);
    }
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(leakgate_compare__limits(&c.lim, NULL), 0);
    c.base_name = leakgate_util__strdup("base");
    c.head_name = leakgate_util__strdup("head");
    CU_ASSERT_EQUAL_FATAL(leakgate_compare__build(
                              &c, (const struct leakgate_verdict *const *)base,
                              N, (const struct leakgate_verdict *const *)head,
                              N),
                          0);
    md = leakgate_compare__markdown(&c);
    text = leakgate_compare__text(&c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_TRUE(strlen(md) < 65536);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(md, "### leakgate compare: 3000 regressions"));
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "And 2950 more changed tests"));
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "- and 2980 more (the text output"));
    /* the text has them all */
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "suite_2999/a_rather_long_test_name"));
    free(md);
    free(text);
    leakgate_compare__dispose(&c);
    for (int i = 0; i < N; i++) {
        free_window(base[i]);
        free_window(head[i]);
    }
    free(base);
    free(head);
}

/* A peak and allocations that grew from 0 have no percentage: the
 * reasons say the growth alone, with one space. */
static void
test_compare__reasons_from_zero(void)
{
    struct leakgate_verdict *base = window("t/z", 0, 0, 0);
    struct leakgate_verdict *head = window("t/z", 0, 8000, 40);
    struct leakgate_compare c;
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(leakgate_compare__limits(&c.lim, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_compare__build(
                              &c, (const struct leakgate_verdict *const *)&base,
                              1, (const struct leakgate_verdict *const *)&head,
                              1),
                          0);
    CU_ASSERT_EQUAL_FATAL(c.n, 1);
    leakgate_compare__reasons(&b, &c.rows[0]);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b.ptr);
    CU_ASSERT_STRING_EQUAL(b.ptr, "peak +8,000 B, allocations +40");
    leakgate_buf__dispose(&b);
    leakgate_compare__dispose(&c);
    free_window(base);
    free_window(head);
}

/* Markdown fits a pull-request comment also when names are long (C++
 * templates, generated test names): 50 rows and 20 stacks of 8 frames,
 * each name 3,000 characters, plus long BASE and HEAD names. */
static void
test_compare__markdown_long_names(void)
{
    enum { N = 60, LONG = 3000 };
    struct leakgate_verdict **base = calloc(N, sizeof *base);
    struct leakgate_verdict **head = calloc(N, sizeof *head);
    struct leakgate_frame frames[8];
    char *fn = malloc(LONG + 1), *name = malloc(LONG + 16), *md;
    struct leakgate_compare c;

    memset(fn, 'f', LONG);
    fn[LONG] = '\0';
    for (int k = 0; k < 8; k++)
        frames[k] = (struct leakgate_frame){0x10,     fn,   "/src/x.c", 1,
                                            "/bin/t", 0x10, false};
    for (int i = 0; i < N; i++) {
        memset(name, '&', LONG);
        snprintf(name + LONG, 16, "%04d", i);
        base[i] = window(name, 0, 100, 1);
        head[i] = window(name, 16, 200, 2);
        add_stack(head[i], frames, 16);
        head[i]->stacks[0].nframes = head[i]->stacks[0].shown_end = 8;
    }
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL(leakgate_compare__limits(&c.lim, NULL), 0);
    memset(name, '_', LONG);
    name[LONG] = '\0';
    c.base_name = leakgate_util__strdup(name);
    c.head_name = leakgate_util__strdup(name);
    c.warning = leakgate_util__strdup(name);
    CU_ASSERT_EQUAL_FATAL(leakgate_compare__build(
                              &c, (const struct leakgate_verdict *const *)base,
                              N, (const struct leakgate_verdict *const *)head,
                              N),
                          0);
    md = leakgate_compare__markdown(&c);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    CU_ASSERT_TRUE(strlen(md) < 65536);
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "### leakgate compare: 60 regressions"));
    /* what is left out is counted, and the footer is still there */
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "more changed tests"));
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "more (the text output"));
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "allocations over +20% and +16.</sub>"));
    /* a cut name ends with an ellipsis, never inside an escape */
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "&amp;…"));
    free(md);
    leakgate_compare__dispose(&c);
    for (int i = 0; i < N; i++) {
        free_window(base[i]);
        free_window(head[i]);
    }
    free(base);
    free(head);
    free(fn);
    free(name);
}

static const char v1[] = "{\"format\": \"leakgate-results\", \"version\": 1, "
                         "\"tests\": " ONE_TEST "}";
static const char v2[] = "{\"format\": \"leakgate-results\", \"version\": 2, "
                         "\"tests\": " ONE_TEST "}";
static const char empty[] = "{\"format\": \"leakgate-results\", "
                            "\"version\": 2, \"tests\": []}";

static void
test_compare__versions(void)
{
    leakgate_results *a, *b;
    leakgate_compare *c = NULL;

    CU_ASSERT_EQUAL_FATAL(leakgate_results_new(&a), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_results_new(&b), 0);
    CU_ASSERT_EQUAL(leakgate_results__load_text(a, v2, strlen(v2), "a.json"),
                    0);
    CU_ASSERT_EQUAL(leakgate_results__load_text(b, v1, strlen(v1), "b.json"),
                    0);
    CU_ASSERT_EQUAL(leakgate_compare_new(&c, a, b, NULL), LEAKGATE_EFORMAT);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(),
                                  "BASE a.json is results version 2, HEAD "
                                  "b.json is version 1"));
    /* one side mixing versions */
    CU_ASSERT_EQUAL(leakgate_results__load_text(b, v2, strlen(v2), "c.json"),
                    0);
    CU_ASSERT_EQUAL(leakgate_compare_new(&c, a, b, NULL), LEAKGATE_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(),
                                  "HEAD: c.json is results version 2 but "
                                  "b.json is version 1"));
    CU_ASSERT_EQUAL(leakgate_compare_new(&c, a, a, NULL), 0);
    CU_ASSERT_EQUAL(leakgate_compare_regressions(c), 0);
    leakgate_compare_free(c);
    c = NULL;
    leakgate_results_free(b);
    /* a run without windows is no run to compare with */
    CU_ASSERT_EQUAL_FATAL(leakgate_results_new(&b), 0);
    CU_ASSERT_EQUAL(
        leakgate_results__load_text(b, empty, strlen(empty), "e.json"), 0);
    CU_ASSERT_EQUAL(leakgate_compare_new(&c, a, b, NULL), LEAKGATE_EFORMAT);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(leakgate_error_last(), "HEAD e.json holds no windows"));
    leakgate_results_free(a);
    leakgate_results_free(b);
}

/* A shared output of two binaries built from the same sources: the same
 * test name twice per run, told apart by origin.  Only binary b's copy
 * leaks in HEAD; the rows pair by origin and name, never across
 * binaries, and every rendering names the binary. */
static void
test_compare__origins(void)
{
    struct leakgate_verdict *base[2], *head[2];
    struct leakgate_compare c;
    char *text, *md, *json;
    size_t regressions = 0;

    base[0] = window("t/x", 0, 100, 1);
    base[1] = window("t/x", 0, 100, 1);
    head[0] = window("t/x", 16, 116, 2);
    head[1] = window("t/x", 0, 100, 1);
    add_stack(head[0], frames_a, 16);
    base[0]->origin = leakgate_util__strdup("a:");
    base[1]->origin = leakgate_util__strdup("b:");
    head[0]->origin = leakgate_util__strdup("b:");
    head[1]->origin = leakgate_util__strdup("a:");
    memset(&c, 0, sizeof c);
    CU_ASSERT_EQUAL_FATAL(leakgate_compare__limits(&c.lim, NULL), 0);
    CU_ASSERT_EQUAL_FATAL(leakgate_compare__build(
                              &c, (const struct leakgate_verdict *const *)base,
                              2, (const struct leakgate_verdict *const *)head,
                              2),
                          0);
    CU_ASSERT_EQUAL(c.n, 2);
    CU_ASSERT_EQUAL(c.nregressions, 1);
    CU_ASSERT_EQUAL(c.nnew + c.nremoved, 0);
    for (size_t i = 0; i < c.n; i++) {
        const struct leakgate_compare_row *r = &c.rows[i];

        CU_ASSERT_PTR_NOT_NULL_FATAL(r->base);
        CU_ASSERT_PTR_NOT_NULL_FATAL(r->head);
        CU_ASSERT_STRING_EQUAL(r->base->origin, r->head->origin);
        if (r->why) {
            regressions++;
            CU_ASSERT_STRING_EQUAL(r->head->origin, "b:");
        }
    }
    CU_ASSERT_EQUAL(regressions, 1);
    render_all(&c, &text, &md, &json);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(md);
    CU_ASSERT_PTR_NOT_NULL_FATAL(json);
    CU_ASSERT_PTR_NOT_NULL(strstr(text, "b:t/x: retained"));
    CU_ASSERT_PTR_NULL(strstr(text, "a:t/x: retained"));
    CU_ASSERT_PTR_NOT_NULL(strstr(md, "b:t/x"));
    CU_ASSERT_PTR_NOT_NULL(strstr(json, "\"origin\": \"b:\""));
    free(text);
    free(md);
    free(json);
    leakgate_compare__dispose(&c);
    for (size_t i = 0; i < 2; i++) {
        free_window(base[i]);
        free_window(head[i]);
    }
}

const struct unit_case unit_cases[] = {
    {"test_compare__regressions", test_compare__regressions},
    {"test_compare__options", test_compare__options},
    {"test_compare__bad_options", test_compare__bad_options},
    {"test_compare__new_stacks", test_compare__new_stacks},
    {"test_compare__not_measured", test_compare__not_measured},
    {"test_compare__renderings", test_compare__renderings},
    {"test_compare__markdown_bounded", test_compare__markdown_bounded},
    {"test_compare__markdown_long_names", test_compare__markdown_long_names},
    {"test_compare__reasons_from_zero", test_compare__reasons_from_zero},
    {"test_compare__versions", test_compare__versions},
    {"test_compare__origins", test_compare__origins},
    {NULL, NULL},
};
