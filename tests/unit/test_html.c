/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/html.c: the run's index.html from verdicts built
 * by hand.  Every window is a row with its verdict and numbers; a failure
 * has its stacks with file:line, the inlined picture, the YAML, relative
 * artifact links and the inspect commands; the environment is listed;
 * nothing reaches the network or runs a script; names are escaped; an SVG
 * with a script is not inlined; allocation failures leak nothing.
 */
#include "html.h"

#include <stdio.h>
#include <string.h>

#include "unit.h"
#include "util.h"

static char s_suite[] = "parser";
static char s_fail[] = "test_<cache>&";
static char s_fail_name[] = "parser/test_<cache>&";
static char s_pass[] = "test_ok";
static char s_pass_name[] = "parser/test_ok";
static char s_assert_file[] = "tests/test_parser.c";
static char s_assert_msg[] = "CU_ASSERT(x == 1)";
static char s_before[] = "/r/parser/test__cache__.before.heap";
static char s_after[] = "/r/parser/test__cache__.after.heap";
static char s_svg[] = "/r/parser/test__cache__.svg";
static char s_dot[] = "/r/parser/test__cache__.dot";
static char s_json[] = "/elsewhere/with space#1.json";
static char s_report[] = "leakgate: FAIL parser/test_<cache>&: 4,096 B";

struct fixture {
    struct leakgate_frame frames[3];
    struct leakgate_vstack stacks[2];
    struct leakgate_note note;
    struct leakgate_verdict fail, pass;
    const struct leakgate_verdict *v[2];
    struct leakgate_report_env env;
    struct leakgate_html_run run;
};

static void
fixture_init(struct fixture *fx)
{
    memset(fx, 0, sizeof *fx);
    fx->frames[0] = (struct leakgate_frame){
        0x1010, "cache_insert", "src/cache.c", 42, "/build/t", 0x10, true};
    fx->frames[1] = (struct leakgate_frame){
        0x1020, "parser_feed", "src/parser.c", 118, "/build/t", 0x20, false};
    fx->frames[2] = (struct leakgate_frame){
        0x7f00, NULL, NULL, 0, "/usr/lib/libcunit.so.1", 0x5a5a, false};
    fx->stacks[0].frames = fx->frames;
    fx->stacks[0].nframes = 3;
    fx->stacks[0].shown_end = 2;
    fx->stacks[0].bytes = 4096;
    fx->stacks[0].objs = 1;
    fx->stacks[0].judgement.judged = true;
    fx->stacks[0].judgement.over = true;
    fx->stacks[0].judgement.limit = 1024;
    fx->stacks[1].bytes = -64; /* freed: not shown */
    fx->stacks[1].objs = -1;
    fx->fail.suite = s_suite;
    fx->fail.test = s_fail;
    fx->fail.name = s_fail_name;
    fx->fail.status = LEAKGATE_STATUS_FAIL;
    fx->fail.measured = true;
    fx->fail.settings.stack_limit = 1024;
    fx->fail.settings.total_unlimited = true;
    fx->fail.policy.total_bytes = 4096;
    fx->fail.policy.total_objs = 1;
    fx->fail.policy.nover = 1;
    fx->fail.policy.failed = true;
    fx->fail.stacks = fx->stacks;
    fx->fail.nstacks = 2;
    fx->fail.seconds = 0.0125;
    fx->fail.report = s_report;
    fx->fail.heap_before = s_before;
    fx->fail.heap_after = s_after;
    fx->fail.svg_path = s_svg;
    fx->fail.dot_path = s_dot;
    fx->fail.json_path = s_json;
    fx->note = (struct leakgate_note){s_assert_file, 77, s_assert_msg};
    fx->pass.suite = s_suite;
    fx->pass.test = s_pass;
    fx->pass.name = s_pass_name;
    fx->pass.status = LEAKGATE_STATUS_PASS;
    fx->pass.measured = true;
    fx->pass.settings.total_limit = 8192;
    fx->pass.notes = &fx->note;
    fx->pass.nnotes = 1;
    fx->v[0] = &fx->pass;
    fx->v[1] = &fx->fail;
    fx->env = (struct leakgate_report_env){
        "exact (every allocation sampled, lg_prof_sample:0)",
        "5.3.0-0-g54eaed1d",
        "/build/t",
        "1a2b3c",
        "leakgate.yaml",
        "/r",
        NULL,
        false,
        false};
    fx->run = (struct leakgate_html_run){"t", "2025-12-02T09:00:00Z",
                                         "call graphs drawn by dot"};
}

static bool
contains(const char *haystack, const char *needle)
{
    bool found = haystack && strstr(haystack, needle) != NULL;

    if (!found)
        fprintf(stderr, "\n  missing: \"%s\"\n", needle);
    return found;
}

static const char svg[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
    "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\"\n"
    " \"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
    "<svg width=\"100pt\" height=\"50pt\" viewBox=\"0 0 100 50\" "
    "xmlns=\"http://www.w3.org/2000/svg\"><g id=\"node1\"><title>N0</title>"
    "<text>cache_insert</text></g></svg>\n";

static char *
page(const struct fixture *fx, const char *const *svgs)
{
    char *html = leakgate_html__index(fx->v, svgs, 2, &fx->env, &fx->run);

    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    return html;
}

static void
test_html__page(void)
{
    struct fixture fx;
    const char *svgs[2] = {NULL, svg};
    char *html;

    fixture_init(&fx);
    html = page(&fx, svgs);
    CU_ASSERT(strncmp(html, "<!DOCTYPE html>\n<html lang=\"en\">", 31) == 0);
    CU_ASSERT(contains(html, "<title>leakgate: 1 of 2 windows failed — t"
                             "</title>"));
    CU_ASSERT(contains(html, "<p class=\"banner fail\" id=\"summary\">1 of 2 "
                             "windows over the limits · 1 passed · 0 not "
                             "judged</p>"));
    /* Environment. */
    CU_ASSERT(contains(html, "<tr><th>date</th><td>2025-12-02T09:00:00Z"));
    CU_ASSERT(contains(html, "<tr><th>binary</th><td><code>/build/t</code>"));
    CU_ASSERT(contains(html, "<tr><th>build-id</th><td><code>1a2b3c</code>"));
    CU_ASSERT(contains(html, "<tr><th>jemalloc</th><td>5.3.0-0-g54eaed1d"));
    CU_ASSERT(contains(html, "<tr><th>sampling</th><td>exact (every "));
    CU_ASSERT(contains(html, "<tr><th>thresholds</th><td><code>leakgate.yaml"));
    CU_ASSERT(contains(html, "<tr><th>pictures</th><td>call graphs drawn"));
    /* Rows: the pass with its assertion note, the failure linked. */
    CU_ASSERT(contains(html, "<tr class=\"pass\" id=\"row-0\"><td><code>"
                             "parser/test_ok</code></td><td><span class=\""
                             "badge pass\">PASS</span></td><td class=\"num\">"
                             "0&#160;B</td>"));
    CU_ASSERT(contains(html, "<td class=\"num\">8,192&#160;B</td>"));
    CU_ASSERT(contains(html, "<code>tests/test_parser.c:77</code> "
                             "CU_ASSERT(x == 1)"));
    CU_ASSERT(contains(html, "<tr class=\"fail\" id=\"row-1\"><td><a href=\""
                             "#w-1\"><code>parser/test_&lt;cache&gt;&amp;"
                             "</code></a>"));
    CU_ASSERT(contains(html, "4,096&#160;B in 1</td><td class=\"num\">"
                             "4,096&#160;B / 1,024&#160;B</td><td class=\""
                             "num\">no cap</td><td class=\"num\">1</td>"
                             "<td class=\"num\">12.5&#160;ms</td>"));
    leakgate_util__free(html);
}

static void
test_html__failure_section(void)
{
    struct fixture fx;
    const char *svgs[2] = {NULL, svg};
    char *html;

    fixture_init(&fx);
    html = page(&fx, svgs);
    CU_ASSERT(contains(html, "<section class=\"failure\" id=\"w-1\">"));
    CU_ASSERT(contains(html, "<b>stack 1 of 1</b>: 4,096&#160;B in 1 object, "
                             "limit 1,024&#160;B"));
    CU_ASSERT(contains(html, "<tr><td class=\"fn mono\">cache_insert <span "
                             "class=\"muted\">(inlined)</span></td><td "
                             "class=\"mono\">src/cache.c:42</td></tr>"));
    CU_ASSERT(contains(html, "src/parser.c:118"));
    CU_ASSERT(!strstr(html, "libcunit")); /* trimmed runner frame */
    /* The picture, inlined from <svg on. */
    CU_ASSERT(contains(html, "<figure>\n<svg width=\"100pt\""));
    CU_ASSERT(contains(html, "<g id=\"w1-node1\"><title>N0</title>"));
    CU_ASSERT(!strstr(html, "<?xml"));
    CU_ASSERT(!strstr(html, "<!DOCTYPE svg"));
    /* The YAML. */
    CU_ASSERT(contains(html, "add to <code>leakgate.yaml</code>:</p>\n<pre "
                             "class=\"yaml\">tests:\n  \"parser/test_&lt;"
                             "cache&gt;&amp;\":"));
    CU_ASSERT(contains(html, "frames: [parser_feed, cache_insert]"));
    /* Artifacts relative to the report dir, others %-encoded. */
    CU_ASSERT(contains(html, "<li><a href=\"parser/test__cache__.before.heap\">"
                             "<code>parser/test__cache__.before.heap</code>"));
    CU_ASSERT(contains(html, "<a href=\"parser/test__cache__.svg\">"));
    CU_ASSERT(contains(html, "<a href=\"/elsewhere/with%20space%231.json\">"));
    CU_ASSERT(contains(html, "jeprof --text --base=/r/parser/test__cache__."
                             "before.heap /build/t /r/parser/test__cache__."
                             "after.heap\nleakgate diff "));
    CU_ASSERT(contains(html, "<details><summary>The report as printed</summary>"
                             "\n<pre>leakgate: FAIL parser/test_&lt;cache&gt;"
                             "&amp;: 4,096 B</pre>"));
    leakgate_util__free(html);
}

static void
test_html__self_contained(void)
{
    struct fixture fx;
    const char *svgs[2] = {NULL, svg};
    char *html;

    fixture_init(&fx);
    html = page(&fx, svgs);
    CU_ASSERT(!strstr(html, "<script"));
    CU_ASSERT(!strstr(html, "<link"));
    CU_ASSERT(!strstr(html, " src="));
    CU_ASSERT(!strstr(html, "url("));
    CU_ASSERT(!strstr(html, "@import"));
    CU_ASSERT(contains(html, "<style>"));
    leakgate_util__free(html);
}

static void
test_html__hostile_svg_and_no_picture(void)
{
    static const char evil[] =
        "<svg><script>alert(1)</script><text>x</text></svg>";
    static char note[] = "Graphviz's dot is not on PATH: only the DOT text "
                         "was written";
    struct fixture fx;
    const char *svgs[2] = {NULL, evil};
    char *html;

    fixture_init(&fx);
    html = page(&fx, svgs);
    CU_ASSERT(!strstr(html, "alert"));
    CU_ASSERT(contains(html, "The SVG could not be shown inline"));
    leakgate_util__free(html);
    fx.fail.svg_path = NULL;
    fx.fail.picture_note = note;
    html = page(&fx, NULL);
    CU_ASSERT(contains(html, "Graphviz's dot is not on PATH"));
    CU_ASSERT(contains(html, "DOT text: <code>parser/test__cache__.dot"));
    leakgate_util__free(html);
}

static void
test_html__all_pass(void)
{
    struct fixture fx;
    char *html;

    fixture_init(&fx);
    fx.v[1] = &fx.pass;
    fx.env.thresholds_path = NULL;
    fx.env.build_id = "";
    fx.run = (struct leakgate_html_run){NULL, NULL, NULL};
    html = page(&fx, NULL);
    CU_ASSERT(contains(html, "<p class=\"banner pass\" id=\"summary\">0 of 2 "
                             "windows over the limits"));
    CU_ASSERT(contains(html, "none (every limit 0, no total cap)"));
    CU_ASSERT(contains(html, "<tr><th>build-id</th><td><code>none</code>"));
    CU_ASSERT(contains(html, "<tr><th>date</th><td>unknown"));
    CU_ASSERT(!strstr(html, "id=\"failures\""));
    leakgate_util__free(html);
}

/* Both windows measured: the pass peaked at 4 KiB (no limit), the
 * failure at 2 MiB over a 1 MiB limit, on its peak alone. */
static void
peaks_init(struct fixture *fx)
{
    fx->pass.peak_known = true;
    fx->pass.peak_bytes = 4096;
    fx->pass.allocations = 2;
    fx->fail.peak_known = true;
    fx->fail.peak_bytes = 2097152;
    fx->fail.allocations = 1234;
    fx->fail.peak_over = true;
    fx->fail.settings.peak_limited = true;
    fx->fail.settings.peak_limit = 1048576;
    fx->fail.peak_level = 2097152;
    fx->fail.peak_stacks = fx->stacks;
    fx->fail.npeak_stacks = 1;
    fx->fail.policy.nover = 0;
    fx->stacks[0].judgement.over = false;
}

static void
test_html__peaks(void)
{
    struct fixture fx;
    char *html;
    const char *table, *section;

    fixture_init(&fx);
    peaks_init(&fx);
    html = page(&fx, NULL);
    /* The columns of the windows table. */
    CU_ASSERT(contains(html, "<th class=\"num\">over</th><th class=\"num\">"
                             "peak / its limit</th><th class=\"num\">"
                             "allocations</th><th class=\"num\">time</th>"));
    CU_ASSERT(contains(html, "<td class=\"num\">0</td><td class=\"num\">"
                             "4,096&#160;B</td><td class=\"num\">2</td>"));
    CU_ASSERT(contains(html, "<td class=\"num over\">2,097,152&#160;B / "
                             "1,048,576&#160;B</td><td class=\"num\">1,234"
                             "</td><td class=\"num\">12.5&#160;ms</td>"));
    /* The peaks, biggest first, though the failure ran second. */
    table = strstr(html, "<h2 id=\"peaks\">Peak memory</h2>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(table);
    CU_ASSERT(table > strstr(html, "id=\"windows\""));
    CU_ASSERT(contains(table, "first: 2 measured windows.</p>"));
    CU_ASSERT(contains(table, "<tbody>\n<tr class=\"fail\"><td><a href=\""
                              "#w-1\"><code>parser/test_&lt;cache&gt;&amp;"
                              "</code></a></td><td class=\"num over\">"
                              "2,097,152&#160;B</td><td class=\"num\">"
                              "1,048,576&#160;B</td><td class=\"num\">1,234"
                              "</td><td><b>over its limit</b></td></tr>\n"
                              "<tr class=\"pass\"><td><a href=\"#row-0\">"
                              "<code>parser/test_ok</code></a></td><td class="
                              "\"num\">4,096&#160;B</td><td class=\"num\">"
                              "none</td><td class=\"num\">2</td><td><span "
                              "class=\"muted\">measured, no limit</span>"
                              "</td></tr>\n</tbody>"));
    /* The failure: its peak and the stacks that held it; no leak stacks
     * (nothing was over a stack limit). */
    section = strstr(html, "<section class=\"failure\" id=\"w-1\">");
    CU_ASSERT_PTR_NOT_NULL_FATAL(section);
    CU_ASSERT(contains(section, "<h3>Peak</h3>\n<p class=\"peak\">The heap "
                                "grew 2,097,152&#160;B above its level at the "
                                "window's start, over its limit of "
                                "1,048,576&#160;B (--peak-limit/LEAKGATE_PEAK_"
                                "LIMIT), in 1,234 allocations. At "
                                "2,097,152&#160;B these stacks held the most:"
                                "</p>\n<p class=\"stack\"><b>peak stack 1 of "
                                "1</b>: 4,096&#160;B in 1 object</p>\n<table "
                                "class=\"frames\">\n<tr><td class=\"fn mono\">"
                                "cache_insert"));
    CU_ASSERT_PTR_NULL(strstr(section, "<h3>Stacks</h3>"));
    CU_ASSERT_PTR_NULL(strstr(section, "<b>stack 1 of"));
    CU_ASSERT_PTR_NULL(strstr(section, "Call graph of the growth"));
    leakgate_util__free(html);
    /* Over without stacks (the exact measurement stayed under). */
    fx.fail.npeak_stacks = 0;
    html = page(&fx, NULL);
    CU_ASSERT(contains(html, "in 1,234 allocations. No stacks: the exact "
                             "measurement did not reach the limit again.</p>"));
    CU_ASSERT_PTR_NULL(strstr(html, "peak stack"));
    leakgate_util__free(html);
}

static void
test_html__no_peaks(void)
{
    struct fixture fx;
    char *html;

    /* Not measured (results version 1): no peak columns, no table. */
    fixture_init(&fx);
    html = page(&fx, NULL);
    CU_ASSERT_PTR_NULL(strstr(html, "peak"));
    CU_ASSERT_PTR_NULL(strstr(html, "allocations"));
    CU_ASSERT(contains(html, "<th class=\"num\">over</th><th class=\"num\">"
                             "time</th>"));
    CU_ASSERT(contains(html, "<h3>Stacks</h3>"));
    CU_ASSERT(contains(html, "<h3>Call graph of the growth</h3>"));
    leakgate_util__free(html);
    /* Measured but within: the table, no peak section in the failure. */
    fixture_init(&fx);
    fx.fail.peak_known = true;
    fx.fail.peak_bytes = 8192;
    fx.fail.allocations = 5;
    fx.fail.settings.peak_limited = true;
    fx.fail.settings.peak_limit = 65536;
    html = page(&fx, NULL);
    CU_ASSERT(contains(html, "first: 1 measured window.</p>"));
    CU_ASSERT(contains(html, "<td>within its limit</td>"));
    CU_ASSERT(contains(html, "<td class=\"num\">8,192&#160;B / "
                             "65,536&#160;B</td><td class=\"num\">5</td>"));
    /* The pass was not measured: a dash, and not in the peaks table. */
    CU_ASSERT(contains(html, "<td class=\"num\">—</td><td class=\"num\">"
                             "—</td>"));
    CU_ASSERT_PTR_NULL(strstr(strstr(html, "id=\"peaks\""), "test_ok"));
    CU_ASSERT_PTR_NULL(strstr(html, "<h3>Peak</h3>"));
    CU_ASSERT_PTR_NULL(strstr(html, "<b>over its limit</b>"));
    CU_ASSERT_PTR_NULL(strstr(html, "num over"));
    leakgate_util__free(html);
}

static void
test_html__enomem(void)
{
    struct fixture fx;
    const char *svgs[2] = {NULL, svg};
    size_t failures = 0;

    fixture_init(&fx);
    for (size_t n = 0; n < 100; n++) {
        char *html;

        leakgate_util__fail_after(n);
        html = leakgate_html__index(fx.v, svgs, 2, &fx.env, &fx.run);
        leakgate_util__fail_after(SIZE_MAX);
        if (html) {
            leakgate_util__free(html);
            break;
        }
        failures++;
    }
    CU_ASSERT(failures > 0);
}

const char *const unit_suite = "html";
/* The page reads at a glance: the banner names and links the failing
 * windows, the failures come before the tables, source paths are shown
 * relative to the directory that holds them all, and two windows that
 * retained the same stack get one card listing both (their own sections
 * folded below it); a window with a cause of its own gets none. */
static void
test_html__glance(void)
{
    static char f_abs[] = "/home/ci/proj/src/cache.c";
    static char f_abs2[] = "/home/ci/proj/src/parser.c";
    static char s_twin[] = "test_twin";
    static char s_twin_name[] = "parser/test_twin";
    struct fixture fx;
    struct leakgate_verdict twin;
    const struct leakgate_verdict *v[3];
    char *html;

    fixture_init(&fx);
    html = page(&fx, NULL);
    CU_ASSERT(contains(html, "<ul class=\"failing\">\n<li><a href=\"#w-1\">"
                             "<code>parser/test_&lt;cache&gt;&amp;</code></a> "
                             "4,096&#160;B</li>"));
    CU_ASSERT(strstr(html, "id=\"failures\"") != NULL &&
              strstr(html, "id=\"failures\"") < strstr(html, "id=\"row-0\""));
    CU_ASSERT(!strstr(html, "One cause"));
    CU_ASSERT(!strstr(html, "relative to <code>"));
    leakgate_util__free(html);

    fx.frames[0].file = f_abs;
    fx.frames[1].file = f_abs2;
    twin = fx.fail;
    twin.test = s_twin;
    twin.name = s_twin_name;
    v[0] = &fx.pass;
    v[1] = &fx.fail;
    v[2] = &twin;
    html = leakgate_html__index(v, NULL, 3, &fx.env, &fx.run);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    CU_ASSERT(contains(html, "Source paths are relative to <code>"
                             "/home/ci/proj/src/</code>"));
    CU_ASSERT(contains(html, "<span title=\"/home/ci/proj/src/cache.c\">"
                             "cache.c:42</span>"));
    CU_ASSERT(contains(html, "<section class=\"cause\" id=\"cause-1\">\n"
                             "<h2>One cause, 2 windows: <code>cache_insert"));
    CU_ASSERT(contains(html, "<li><a href=\"#w-2\"><code>parser/test_twin"
                             "</code></a> 4,096&#160;B</li>"));
    CU_ASSERT(contains(html, "<li><a href=\"#cause-1\"><code>"
                             "parser/test_twin</code></a>"));
    CU_ASSERT(contains(html, "<details class=\"grouped\"><summary><code>"
                             "parser/test_twin</code>: its report"));
    leakgate_util__free(html);
}

/* The bytes the program asked for beside the usable bytes, where known. */
static void
test_html__requested(void)
{
    struct fixture fx;
    char *html;

    fixture_init(&fx);
    fx.stacks[0].requested = 4000;
    fx.stacks[0].requested_known = true;
    html = page(&fx, NULL);
    CU_ASSERT(contains(html, "<code>parser/test_&lt;cache&gt;&amp;</code></a>"
                             " 4,096&#160;B (4,000 B requested)</li>"));
    CU_ASSERT(contains(html, "<b>stack 1 of 1</b>: 4,096&#160;B (4,000 B "
                             "requested) in 1 object"));
    leakgate_util__free(html);
    fx.stacks[0].requested_known = false; /* not known: nothing said */
    html = page(&fx, NULL);
    CU_ASSERT(!strstr(html, "requested"));
    leakgate_util__free(html);
}

const struct unit_case unit_cases[] = {
    {"test_html__requested", test_html__requested},
    {"test_html__glance", test_html__glance},
    {"test_html__page", test_html__page},
    {"test_html__failure_section", test_html__failure_section},
    {"test_html__self_contained", test_html__self_contained},
    {"test_html__hostile_svg_and_no_picture",
     test_html__hostile_svg_and_no_picture},
    {"test_html__all_pass", test_html__all_pass},
    {"test_html__peaks", test_html__peaks},
    {"test_html__no_peaks", test_html__no_peaks},
    {"test_html__enomem", test_html__enomem},
    {NULL, NULL},
};
