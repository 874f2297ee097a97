/* SPDX-License-Identifier: MIT */
/* thresholds: the ratchet on hand-made windows -- what is accepted and
 * how it is written, that every other byte of the file survives, what
 * tightening lowers and removes, what is reported stale or loose, and
 * that the result is stable. */
#include "unit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakgate/leakgate.h"
#include "thresholds.h"
#include "thresholds_rules.h"
#include "util.h"

const char *const unit_suite = "thresholds";

#define MAX_WINDOWS 8

struct run {
    struct leakgate_verdict *v[MAX_WINDOWS];
    size_t n;
    struct leakgate_thresholds_opts o;
    struct leakgate_treport rep;
    char *out;
};

static void
run_init(struct run *r)
{
    memset(r, 0, sizeof *r);
    r->o.accept = true;
    r->o.write = true;
    r->o.slack_pct = 25;
}

static struct leakgate_verdict *
window(struct run *r, const char *suite, const char *test)
{
    struct leakgate_verdict *v = calloc(1, sizeof *v);
    struct leakgate_buf name = LEAKGATE_BUF_INIT;

    leakgate_buf__printf(&name, "%s/%s", suite, test);
    v->suite = leakgate_util__strdup(suite);
    v->test = leakgate_util__strdup(test);
    v->name = leakgate_buf__take(&name);
    v->measured = true;
    v->status = LEAKGATE_STATUS_FAIL;
    r->v[r->n++] = v;
    return v;
}

/* A stack of `bytes` through functions listed outer to inner (NULL: a
 * frame without a name). */
static void
stack(struct leakgate_verdict *v, int64_t bytes, size_t n, ...)
{
    struct leakgate_vstack *s;
    va_list ap;

    v->stacks = realloc(v->stacks, (v->nstacks + 1) * sizeof *v->stacks);
    s = &v->stacks[v->nstacks++];
    memset(s, 0, sizeof *s);
    s->bytes = bytes;
    s->objs = 1;
    s->frames = calloc(n, sizeof *s->frames);
    s->nframes = n;
    s->shown_end = n;
    va_start(ap, n);
    for (size_t k = n; k-- > 0;) {
        s->frames[k].function = va_arg(ap, const char *);
        s->frames[k].module = "/src/build/app";
        s->frames[k].pc = 0x1000 + k;
    }
    va_end(ap);
}

/* Rewrite and compare; rc must be 0. */
static void
expect(struct run *r, const char *yaml, const char *expected)
{
    size_t len = 0;
    int rc = leakgate_thresholds__rewrite(
        &r->out, &len, &r->rep, yaml, yaml ? strlen(yaml) : 0, "t.yaml",
        (const struct leakgate_verdict *const *)r->v, r->n, &r->o);

    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0)
        fprintf(stderr, "\n  %s\n", leakgate_error_last());
    if (rc == 0 && strcmp(r->out, expected) != 0) {
        fprintf(stderr, "\n--- expected\n%s--- got\n%s--- report\n%s---\n",
                expected, r->out, r->rep.lines.ptr ? r->rep.lines.ptr : "");
        CU_FAIL("rewritten file differs");
    }
    CU_ASSERT_EQUAL(len, r->out ? strlen(r->out) : 0);
}

static void
rewrite_only(struct run *r, const char *yaml)
{
    size_t len = 0;

    CU_ASSERT_EQUAL(leakgate_thresholds__rewrite(
                        &r->out, &len, &r->rep, yaml, strlen(yaml), "t.yaml",
                        (const struct leakgate_verdict *const *)r->v, r->n,
                        &r->o),
                    0);
}

static bool
reported(const struct run *r, const char *text)
{
    bool found = r->rep.lines.ptr && strstr(r->rep.lines.ptr, text);

    if (!found)
        fprintf(stderr, "\n  not in the report: %s\n--- report\n%s---\n", text,
                r->rep.lines.ptr ? r->rep.lines.ptr : "");
    return found;
}

static void
run_dispose(struct run *r)
{
    for (size_t i = 0; i < r->n; i++)
        leakgate_verdict__free(r->v[i]);
    leakgate_util__free(r->out);
    leakgate_buf__dispose(&r->rep.lines);
}

/* A file with comments, blank lines, quoting styles and entries the run
 * never touches: everything but the added lines must survive.  Entries a
 * test adds to `tests:` go between COMMENTED_HEAD and COMMENTED_TAIL. */
#define COMMENTED_HEAD                                                         \
    "# leakgate thresholds for the parser.\n"                                  \
    "#   owner: parser team\n"                                                 \
    "\n"                                                                       \
    "version: 1   # the format\n"                                              \
    "defaults:\n"                                                              \
    "  stack_limit: 0          # strict\n"                                     \
    "  total_limit: ~\n"                                                       \
    "\n"                                                                       \
    "suites:\n"                                                                \
    "  'net':   {scope: suite}   # sockets live for the whole suite\n"         \
    "\n"                                                                       \
    "tests:\n"                                                                 \
    "  # The cache fills once.\n"                                              \
    "  \"parser/cache_fill\":\n"                                               \
    "    warmup: 1\n"                                                          \
    "\n"                                                                       \
    "  other/unrelated: {stack_limit: 64}\n"
#define COMMENTED_TAIL                                                         \
    "  # a comment that belongs to the end of tests\n"                         \
    "\n"                                                                       \
    "ignore:\n"                                                                \
    "  - frames: [tzset]\n"                                                    \
    "    reason: \"libc time-zone cache\"   # once per process\n"
static const char commented[] = COMMENTED_HEAD COMMENTED_TAIL;

static void
test_thresholds__accept_keeps_every_other_byte(void)
{
    struct run r;
    struct leakgate_verdict *v;

    run_init(&r);
    v = window(&r, "parser", "leak");
    stack(v, 112, 3, "main", "test_leak", "make_node");
    stack(v, 16, 2, "test_leak", "strdup_name");
    expect(&r, commented,
           COMMENTED_HEAD "  \"parser/leak\":\n"
                          "    stacks:\n"
                          "      - frames: [main, test_leak, make_node]\n"
                          "        exact: true\n"
                          "        limit: 112\n"
                          "      - frames: [test_leak, strdup_name]\n"
                          "        exact: true\n"
                          "        limit: 16\n" COMMENTED_TAIL);
    CU_ASSERT_EQUAL(r.rep.changes, 2);
    CU_ASSERT(
        reported(&r, "added     tests \"parser/leak\" (new entry): "
                     "stacks rule [main, test_leak, make_node] limit 112 B\n"));
    CU_ASSERT(reported(&r, "stale     tests \"parser/cache_fill\" (line 14): "
                           "matches no test in this run\n"));
    CU_ASSERT(reported(&r, "stale     ignore rule [tzset] (line 29): matched "
                           "no stack in this run\n"));
    CU_ASSERT(reported(&r, "stale     suites \"net\" (line 10): matches no "
                           "suite in this run\n"));
    run_dispose(&r);
}

static void
test_thresholds__second_update_changes_nothing(void)
{
    struct run r, again;
    struct leakgate_verdict *v;

    run_init(&r);
    v = window(&r, "parser", "leak");
    stack(v, 112, 2, "test_leak", "make_node");
    rewrite_only(&r, commented);
    CU_ASSERT_EQUAL(r.rep.changes, 1);
    run_init(&again);
    again.v[0] = r.v[0];
    again.n = 1;
    expect(&again, r.out, r.out);
    CU_ASSERT_EQUAL(again.rep.changes, 0);
    again.n = 0;
    run_dispose(&again);
    run_dispose(&r);
}

static void
test_thresholds__raises_a_rule_in_place(void)
{
    struct run r;

    run_init(&r);
    stack(window(&r, "p", "x"), 160, 3, "test_x", "cache_insert", "xmalloc");
    expect(&r,
           "version: 1\n"
           "tests:\n"
           "  p/x:\n"
           "    stacks:\n"
           "      - frames: [cache_insert]\n"
           "        limit: 100   # grew in 1.2\n",
           "version: 1\n"
           "tests:\n"
           "  p/x:\n"
           "    stacks:\n"
           "      - frames: [cache_insert]\n"
           "        limit: 160   # grew in 1.2\n");
    CU_ASSERT(reported(&r, "raised    tests \"p/x\" (line 3): stacks rule "
                           "[cache_insert] (line 5): limit 100 B -> 160 B\n"));
    run_dispose(&r);
}

static void
test_thresholds__adds_stacks_and_limits_to_an_entry(void)
{
    struct run r;
    struct leakgate_verdict *v;

    run_init(&r);
    v = window(&r, "p", "x");
    stack(v, 300, 2, "test_x", "grow_table");
    stack(v, 48, 2, NULL, NULL); /* no function names: stack_limit */
    expect(&r,
           "version: 1\n"
           "defaults: {total_limit: 100}\n"
           "tests:\n"
           "  p/x:\n"
           "    stack_limit: 32\n",
           "version: 1\n"
           "defaults: {total_limit: 100}\n"
           "tests:\n"
           "  p/x:\n"
           "    stack_limit: 48\n"
           "    total_limit: 348\n"
           "    stacks:\n"
           "      - frames: [test_x, grow_table]\n"
           "        exact: true\n"
           "        limit: 300\n");
    CU_ASSERT(reported(&r, "raised    tests \"p/x\" (line 4): stack_limit "
                           "32 B -> 48 B\n"));
    CU_ASSERT(reported(&r, "added     tests \"p/x\" (line 4): total_limit "
                           "348 B\n"));
    run_dispose(&r);
}

static void
test_thresholds__rules_are_exact_and_in_name_order(void)
{
    struct run r;
    struct leakgate_verdict *v;

    run_init(&r);
    v = window(&r, "p", "x");
    stack(v, 512, 1, "test_x");              /* malloc in the test itself */
    stack(v, 16, 2, "test_x", "defer_free"); /* and through a helper */
    expect(&r, "version: 1\n",
           "version: 1\n"
           "tests:\n"
           "  \"p/x\":\n"
           "    stacks:\n"
           "      - frames: [test_x]\n"
           "        exact: true\n"
           "        limit: 512\n"
           "      - frames: [test_x, defer_free]\n"
           "        exact: true\n"
           "        limit: 16\n");
    CU_ASSERT_EQUAL(r.rep.stale, 0);
    run_dispose(&r);
}

static void
test_thresholds__suite_cleanup_records_do_not_block(void)
{
    struct run r;
    struct leakgate_verdict *v;

    run_init(&r);
    v = window(&r, "s", "[suite]");
    stack(v, 768, 2, "suite_init", "make_table");
    v->notes = calloc(1, sizeof *v->notes);
    v->notes[0].file = leakgate_util__strdup("CUnit System");
    v->notes[0].message = leakgate_util__strdup("Suite cleanup failed.");
    v->nnotes = 1;
    v = window(&r, "s", "t");
    stack(v, 32, 1, "test_t");
    v->notes = calloc(1, sizeof *v->notes);
    v->notes[0].message = leakgate_util__strdup("CU_ASSERT_EQUAL(a, b)");
    v->nnotes = 1;
    expect(&r, "version: 1\n",
           "version: 1\n"
           "suites:\n"
           "  \"s\":\n"
           "    stacks:\n"
           "      - frames: [suite_init, make_table]\n"
           "        exact: true\n"
           "        limit: 768\n");
    CU_ASSERT(reported(&r, "skipped   s/t: it failed an assertion"));
    run_dispose(&r);
}

static void
test_thresholds__a_glob_entry_is_repeated_not_widened(void)
{
    struct run r;

    run_init(&r);
    stack(window(&r, "parser", "feed"), 2048, 2, "test_feed", "buffer_grow");
    expect(&r,
           "version: 1\n"
           "tests:\n"
           "  \"parser/*\":\n"
           "    stack_limit: 1 KiB   # shared by every parser test\n"
           "    warmup: 2\n"
           "    stacks:\n"
           "      - frames: [buffer_grow]\n"
           "        limit: 1 KiB\n"
           "      - frames: [\"cache_*\"]\n"
           "        limit: 4 KiB\n",
           "version: 1\n"
           "tests:\n"
           "  \"parser/*\":\n"
           "    stack_limit: 1 KiB   # shared by every parser test\n"
           "    warmup: 2\n"
           "    stacks:\n"
           "      - frames: [buffer_grow]\n"
           "        limit: 1 KiB\n"
           "      - frames: [\"cache_*\"]\n"
           "        limit: 4 KiB\n"
           "  \"parser/feed\":\n"
           "    stack_limit: 1 KiB\n"
           "    warmup: 2\n"
           "    stacks:\n"
           "      - frames: [test_feed, buffer_grow]\n"
           "        exact: true\n"
           "        limit: 2 KiB\n"
           "      - frames: [buffer_grow]\n"
           "        limit: 1 KiB\n"
           "      - frames: [\"cache_*\"]\n"
           "        limit: 4 KiB\n");
    CU_ASSERT(reported(&r, "repeats the settings of tests \"parser/*\" "
                           "(line 3)"));
    run_dispose(&r);
}

static void
test_thresholds__suite_windows_go_under_suites(void)
{
    struct run r;

    run_init(&r);
    stack(window(&r, "net", "[suite]"), 64, 2, "net_init", "socket_table");
    expect(&r, "version: 1\nsuites: {}\n",
           "version: 1\n"
           "suites: {\"net\": {stacks: [{frames: [net_init, socket_table], "
           "exact: true, limit: 64}]}}\n");
    run_dispose(&r);
}

static void
test_thresholds__names_with_glob_characters(void)
{
    struct run r;

    run_init(&r);
    stack(window(&r, "vec", "at[1]"), 24, 2, "test_at", "operator[]");
    expect(&r, "version: 1\n",
           "version: 1\n"
           "tests:\n"
           "  'vec/at\\[1\\]':\n"
           "    stacks:\n"
           "      - frames: [test_at, 'operator\\[\\]']\n"
           "        exact: true\n"
           "        limit: 24\n");
    run_dispose(&r);
}

static void
test_thresholds__new_file(void)
{
    struct run r;

    run_init(&r);
    stack(window(&r, "s", "t"), 8, 1, "leak_one");
    expect(&r, NULL,
           "# leakgate thresholds (docs/thresholds.md), created by "
           "leakgate.\n"
           "# Edit freely: updates keep comments, order and quoting.\n"
           "version: 1\n"
           "tests:\n"
           "  \"s/t\":\n"
           "    stacks:\n"
           "      - frames: [leak_one]\n"
           "        exact: true\n"
           "        limit: 8\n");
    run_dispose(&r);
}

static void
test_thresholds__crlf_file(void)
{
    struct run r;

    run_init(&r);
    stack(window(&r, "s", "t"), 8, 1, "leak_one");
    expect(&r, "version: 1\r\ntests:\r\n  \"a/b\": {warmup: 1}\r\n",
           "version: 1\r\ntests:\r\n  \"a/b\": {warmup: 1}\r\n"
           "  \"s/t\":\r\n    stacks:\r\n      - frames: [leak_one]\r\n"
           "        exact: true\r\n        limit: 8\r\n");
    run_dispose(&r);
}

/* ---- tightening --------------------------------------------------------- */

static const char loose_file[] = "version: 1\n"
                                 "defaults:\n"
                                 "  stack_limit: 4 KiB   # generous\n"
                                 "tests:\n"
                                 "  p/a:\n"
                                 "    total_limit: 10000\n"
                                 "    stacks:\n"
                                 "      - frames: [make_a]\n"
                                 "        limit: 1 KiB\n"
                                 "      - frames: [gone_fn]   # fixed in 2.0\n"
                                 "        limit: 64\n"
                                 "  p/b:\n"
                                 "    stacks:\n"
                                 "      - frames: [old_b]\n"
                                 "        limit: 32\n"
                                 "  p/c:\n"
                                 "    warmup: 1\n"
                                 "    stacks:\n"
                                 "      - frames: [old_c]\n"
                                 "        limit: 32\n";

static void
loose_windows(struct run *r)
{
    struct leakgate_verdict *v = window(r, "p", "a");

    v->status = LEAKGATE_STATUS_PASS;
    stack(v, 100, 2, "test_a", "make_a");
    stack(v, 10, 2, "test_a", "small");
    window(r, "p", "b")->status = LEAKGATE_STATUS_PASS;
    window(r, "p", "c")->status = LEAKGATE_STATUS_PASS;
}

static void
test_thresholds__tighten_lowers_and_removes(void)
{
    struct run r;

    run_init(&r);
    r.o.tighten = true;
    loose_windows(&r);
    expect(&r, loose_file,
           "version: 1\n"
           "defaults:\n"
           "  stack_limit: 10   # generous\n"
           "tests:\n"
           "  p/a:\n"
           "    total_limit: 110\n"
           "    stacks:\n"
           "      - frames: [make_a]\n"
           "        limit: 100\n"
           "  p/c:\n"
           "    warmup: 1\n");
    CU_ASSERT(reported(&r, "lowered   defaults (line 2): stack_limit "
                           "4,096 B -> 10 B (largest measured)\n"));
    CU_ASSERT(reported(&r, "removed   tests \"p/a\" (line 5): stacks rule "
                           "[gone_fn] (line 10): matched no stack\n"));
    CU_ASSERT(reported(&r, "removed   tests \"p/b\" (line 12): the entry, "
                           "left empty\n"));
    CU_ASSERT_EQUAL(r.rep.changes, 7);
    run_dispose(&r);
}

static void
test_thresholds__without_tighten_it_only_reports(void)
{
    struct run r;

    run_init(&r);
    loose_windows(&r);
    expect(&r, loose_file, loose_file);
    CU_ASSERT_EQUAL(r.rep.changes, 0);
    CU_ASSERT_EQUAL(r.rep.loose, 3);
    CU_ASSERT_EQUAL(r.rep.stale, 3);
    CU_ASSERT(reported(&r, "loose     tests \"p/a\" (line 5): stacks rule "
                           "[make_a] (line 8) limit 1,024 B is far above "
                           "100 B (largest measured)\n"));
    CU_ASSERT(reported(&r, "stale     tests \"p/b\" (line 12): stacks rule "
                           "[old_b] (line 14): matched no stack\n"));
    run_dispose(&r);
}

static void
test_thresholds__slack_keeps_near_limits(void)
{
    struct run r;

    run_init(&r);
    r.o.tighten = true;
    CU_ASSERT_EQUAL(leakgate_thresholds__parse_slack(&r.o, "2 KiB"), 0);
    CU_ASSERT_TRUE(r.o.slack_is_bytes);
    loose_windows(&r);
    expect(&r, loose_file,
           "version: 1\n"
           "defaults:\n"
           "  stack_limit: 10   # generous\n"
           "tests:\n"
           "  p/a:\n"
           "    total_limit: 110\n"
           "    stacks:\n"
           "      - frames: [make_a]\n"
           "        limit: 1 KiB\n"
           "  p/c:\n"
           "    warmup: 1\n");
    run_dispose(&r);
}

static void
test_thresholds__an_entry_shadowing_a_glob_stays(void)
{
    struct run r;

    run_init(&r);
    r.o.tighten = true;
    window(&r, "p", "x")->status = LEAKGATE_STATUS_PASS;
    expect(&r,
           "version: 1\n"
           "tests:\n"
           "  \"p/*\": {stack_limit: 1 MiB}\n"
           "  p/x:\n"
           "    stacks:\n"
           "      - frames: [old]\n"
           "        limit: 32\n",
           "version: 1\n"
           "tests:\n"
           "  \"p/*\": {stack_limit: 1 MiB}\n"
           "  p/x:\n"
           "    stacks:\n"
           "      - frames: [old]\n"
           "        limit: 0\n");
    run_dispose(&r);
}

static void
test_thresholds__a_section_left_empty_goes(void)
{
    struct run r;

    run_init(&r);
    r.o.tighten = true;
    window(&r, "p", "b")->status = LEAKGATE_STATUS_PASS;
    expect(&r,
           "version: 1\n"
           "tests:\n"
           "  \"p/b\":\n"
           "    stacks:\n"
           "      - frames: [old_b]\n"
           "        limit: 32\n"
           "# the end\n",
           "version: 1\n"
           "# the end\n");
    run_dispose(&r);
}

static void
test_thresholds__flow_style_tightening(void)
{
    struct run r;
    struct leakgate_verdict *v;

    run_init(&r);
    r.o.tighten = true;
    v = window(&r, "p", "a");
    v->status = LEAKGATE_STATUS_PASS;
    stack(v, 100, 2, "test_a", "make_a");
    window(&r, "q", "gone")->status = LEAKGATE_STATUS_PASS;
    expect(&r,
           "version: 1\n"
           "tests: {p/a: {stacks: [{frames: [old1], limit: 8}, "
           "{frames: [old2], limit: 8}, {frames: [make_a], limit: 1 KiB}, "
           "{frames: [old3], limit: 8}]}, q/gone: {stacks: [{frames: [x], "
           "limit: 1}]}}\n",
           "version: 1\n"
           "tests: {p/a: {stacks: [{frames: [make_a], limit: 100}]}}\n");
    run_dispose(&r);
}

static void
test_thresholds__partial_runs_touch_only_exact_entries(void)
{
    struct run r;

    run_init(&r);
    r.o.tighten = true;
    r.o.partial = true;
    loose_windows(&r);
    expect(&r, loose_file,
           "version: 1\n"
           "defaults:\n"
           "  stack_limit: 4 KiB   # generous\n"
           "tests:\n"
           "  p/a:\n"
           "    total_limit: 110\n"
           "    stacks:\n"
           "      - frames: [make_a]\n"
           "        limit: 100\n"
           "  p/c:\n"
           "    warmup: 1\n");
    CU_ASSERT_EQUAL(r.rep.stale, 0);
    run_dispose(&r);
}

static void
test_thresholds__unjudged_windows_block_tightening(void)
{
    struct run r;
    struct leakgate_verdict *v;

    run_init(&r);
    r.o.tighten = true;
    loose_windows(&r);
    r.v[1]->status = LEAKGATE_STATUS_NOT_JUDGED; /* p/b: fatal assertion */
    v = r.v[2];
    v->notes = calloc(1, sizeof *v->notes);
    v->notes[0].message = leakgate_util__strdup("CU_ASSERT(x)");
    v->nnotes = 1; /* p/c failed an assertion */
    expect(&r, loose_file,
           "version: 1\n"
           "defaults:\n"
           "  stack_limit: 4 KiB   # generous\n"
           "tests:\n"
           "  p/a:\n"
           "    total_limit: 110\n"
           "    stacks:\n"
           "      - frames: [make_a]\n"
           "        limit: 100\n"
           "  p/b:\n"
           "    stacks:\n"
           "      - frames: [old_b]\n"
           "        limit: 32\n"
           "  p/c:\n"
           "    warmup: 1\n"
           "    stacks:\n"
           "      - frames: [old_c]\n"
           "        limit: 32\n");
    run_dispose(&r);
}

static void
test_thresholds__accepts_nothing_from_unjudged_windows(void)
{
    struct run r;
    struct leakgate_verdict *v;

    run_init(&r);
    v = window(&r, "p", "stops");
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    stack(v, 64, 1, "half_done");
    expect(&r, "version: 1\n", "version: 1\n");
    CU_ASSERT(reported(&r, "skipped   p/stops: it was measured but not "
                           "judged"));
    run_dispose(&r);
}

static void
test_thresholds__slack_values(void)
{
    struct leakgate_thresholds_opts o;

    CU_ASSERT_EQUAL(leakgate_thresholds__parse_slack(&o, NULL), 0);
    CU_ASSERT_EQUAL(o.slack_pct, 25);
    CU_ASSERT_EQUAL(leakgate_thresholds__parse_slack(&o, "0%"), 0);
    CU_ASSERT_EQUAL(o.slack_pct, 0);
    CU_ASSERT_EQUAL(leakgate_thresholds__parse_slack(&o, "1.5 KiB"), 0);
    CU_ASSERT_EQUAL(o.slack_bytes, 1536);
    CU_ASSERT_EQUAL(leakgate_thresholds__parse_slack(&o, "lots"),
                    LEAKGATE_EUSAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "'lots'"));
    CU_ASSERT_EQUAL(leakgate_thresholds__parse_slack(&o, "20000%"),
                    LEAKGATE_EUSAGE);
    CU_ASSERT_EQUAL(leakgate_thresholds__parse_slack(&o, "-5%"),
                    LEAKGATE_EUSAGE);
}

static void
test_thresholds__invalid_file_is_refused(void)
{
    struct run r;
    size_t len;

    run_init(&r);
    stack(window(&r, "s", "t"), 8, 1, "leak_one");
    CU_ASSERT_EQUAL(leakgate_thresholds__rewrite(
                        &r.out, &len, &r.rep, "version: 2\n", 11, "t.yaml",
                        (const struct leakgate_verdict *const *)r.v, r.n, &r.o),
                    LEAKGATE_ECONFIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "t.yaml:1:10: unsupported version '2' (this "
                           "leakgate reads version 1)");
    CU_ASSERT_PTR_NULL(r.out);
    run_dispose(&r);
}

static void
test_thresholds__allocation_failures_leak_nothing(void)
{
    int rc = LEAKGATE_ENOMEM;

    for (size_t n = 0; rc == LEAKGATE_ENOMEM && n < 5000; n++) {
        struct run r;
        size_t len;

        run_init(&r);
        r.o.tighten = true;
        loose_windows(&r);
        stack(window(&r, "p", "new"), 64, 2, "test_new", "grow");
        leakgate_util__fail_after(n);
        rc = leakgate_thresholds__rewrite(
            &r.out, &len, &r.rep, loose_file, strlen(loose_file), "t.yaml",
            (const struct leakgate_verdict *const *)r.v, r.n, &r.o);
        leakgate_util__fail_after(SIZE_MAX);
        CU_ASSERT(rc == 0 || rc == LEAKGATE_ENOMEM);
        run_dispose(&r);
    }
    CU_ASSERT_EQUAL(rc, 0);
}

/* The headroom a recorded peak gets: max(4 KiB, peak/16), whole KiB. */
static void
test_thresholds__peak_allowance(void)
{
    CU_ASSERT_EQUAL(leakgate_thresholds__peak_allowance(0), 4096);
    CU_ASSERT_EQUAL(leakgate_thresholds__peak_allowance(1), 5120);
    CU_ASSERT_EQUAL(leakgate_thresholds__peak_allowance(8192), 12288);
    CU_ASSERT_EQUAL(leakgate_thresholds__peak_allowance(2u << 20), 2176u << 10);
    CU_ASSERT_EQUAL(leakgate_thresholds__peak_allowance(UINT64_MAX - 10) % 1024,
                    0);
    CU_ASSERT(leakgate_thresholds__peak_allowance(UINT64_MAX - 10) >
              ((uint64_t)1 << 63));
}

const struct unit_case unit_cases[] = {
    {"test_thresholds__peak_allowance", test_thresholds__peak_allowance},
    {"test_thresholds__accept_keeps_every_other_byte",
     test_thresholds__accept_keeps_every_other_byte},
    {"test_thresholds__second_update_changes_nothing",
     test_thresholds__second_update_changes_nothing},
    {"test_thresholds__raises_a_rule_in_place",
     test_thresholds__raises_a_rule_in_place},
    {"test_thresholds__adds_stacks_and_limits_to_an_entry",
     test_thresholds__adds_stacks_and_limits_to_an_entry},
    {"test_thresholds__rules_are_exact_and_in_name_order",
     test_thresholds__rules_are_exact_and_in_name_order},
    {"test_thresholds__suite_cleanup_records_do_not_block",
     test_thresholds__suite_cleanup_records_do_not_block},
    {"test_thresholds__a_glob_entry_is_repeated_not_widened",
     test_thresholds__a_glob_entry_is_repeated_not_widened},
    {"test_thresholds__suite_windows_go_under_suites",
     test_thresholds__suite_windows_go_under_suites},
    {"test_thresholds__names_with_glob_characters",
     test_thresholds__names_with_glob_characters},
    {"test_thresholds__new_file", test_thresholds__new_file},
    {"test_thresholds__crlf_file", test_thresholds__crlf_file},
    {"test_thresholds__tighten_lowers_and_removes",
     test_thresholds__tighten_lowers_and_removes},
    {"test_thresholds__without_tighten_it_only_reports",
     test_thresholds__without_tighten_it_only_reports},
    {"test_thresholds__slack_keeps_near_limits",
     test_thresholds__slack_keeps_near_limits},
    {"test_thresholds__an_entry_shadowing_a_glob_stays",
     test_thresholds__an_entry_shadowing_a_glob_stays},
    {"test_thresholds__a_section_left_empty_goes",
     test_thresholds__a_section_left_empty_goes},
    {"test_thresholds__flow_style_tightening",
     test_thresholds__flow_style_tightening},
    {"test_thresholds__partial_runs_touch_only_exact_entries",
     test_thresholds__partial_runs_touch_only_exact_entries},
    {"test_thresholds__unjudged_windows_block_tightening",
     test_thresholds__unjudged_windows_block_tightening},
    {"test_thresholds__accepts_nothing_from_unjudged_windows",
     test_thresholds__accepts_nothing_from_unjudged_windows},
    {"test_thresholds__slack_values", test_thresholds__slack_values},
    {"test_thresholds__invalid_file_is_refused",
     test_thresholds__invalid_file_is_refused},
    {"test_thresholds__allocation_failures_leak_nothing",
     test_thresholds__allocation_failures_leak_nothing},
    {NULL, NULL},
};
