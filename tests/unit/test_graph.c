/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/graph.c: the DOT call graph of a growth, from
 * stacks built by hand.  Node and edge weights (recursion counted once),
 * folding by nodefraction, edgefraction and max_nodes (with dashed edges
 * through folded nodes), labels and escaping, unknown functions, empty
 * input and allocation failures.  When Graphviz's dot is on PATH, every
 * graph built here must also be accepted by it.
 */
#include "graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"
#include "unit.h"
#include "util.h"

static const char *const exe = "/build/app";

static struct leakgate_frame
fr(const char *function, const char *file, unsigned int line)
{
    struct leakgate_frame f = {0x1000 + line, function,     file, line,
                               exe,           0x100 + line, false};

    return f;
}

static bool
contains(const char *haystack, const char *needle)
{
    bool found = haystack && strstr(haystack, needle) != NULL;

    if (!found)
        fprintf(stderr, "\n  missing: \"%s\"\n  in:\n%s\n", needle,
                haystack ? haystack : "(null)");
    return found;
}

static size_t
count(const char *haystack, const char *needle)
{
    size_t n = 0;

    for (const char *p = strstr(haystack, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* dot must accept the text, when it is installed. */
static void
dot_accepts(const char *dot)
{
    char *svg = NULL;
    size_t len = 0;
    int rc = leakgate_render__text(&svg, &len, dot, strlen(dot), "svg", 20000);

    if (rc == LEAKGATE_ENOTFOUND) {
        fprintf(stderr, "(dot not installed: rendering not checked) ");
        return;
    }
    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0)
        fprintf(stderr, "\n%s\n%s\n", leakgate_error_last(), dot);
    CU_ASSERT(svg && strstr(svg, "<svg") != NULL);
    leakgate_util__free(svg);
}

static char *
dot_of(struct leakgate_graph_stats *st,
       const struct leakgate_graph_stack *s,
       size_t n,
       const struct leakgate_graph_opts *o)
{
    char *out = NULL;

    CU_ASSERT_EQUAL(leakgate_graph__dot(&out, st, s, n, o), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    dot_accepts(out);
    return out;
}

/* main -> parse -> cache_insert (4,096 B), main -> parse -> strdup (112 B
 * from line 30 and 31 of parse). */
static void
test_graph__weights_and_labels(void)
{
    struct leakgate_frame a[3] = {fr("cache_insert", "src/cache.c", 42),
                                  fr("parse", "src/parse.c", 30),
                                  fr("main", "src/main.c", 7)};
    struct leakgate_frame b[3] = {fr("make_copy", "src/parse.c", 12),
                                  fr("parse", "src/parse.c", 31),
                                  fr("main", "src/main.c", 7)};
    struct leakgate_graph_stack s[3] = {
        {a, 3, 4096, 1}, {b, 3, 112, 1}, {b, 3, -64, -1}};
    struct leakgate_graph_opts o = LEAKGATE_GRAPH_OPTS_INIT;
    const char *notes[] = {"binary /build/app"};
    struct leakgate_graph_stats st;
    char *dot;

    o.title = "leakgate: FAIL parser/test";
    o.notes = notes;
    o.nnotes = 1;
    dot = dot_of(&st, s, 3, &o);
    CU_ASSERT_EQUAL(st.total_bytes, 4208);
    CU_ASSERT_EQUAL(st.total_objs, 2);
    CU_ASSERT_EQUAL(st.nodes, 4);
    CU_ASSERT_EQUAL(st.nodes_shown, 4);
    CU_ASSERT_EQUAL(st.edges, 3);
    CU_ASSERT_EQUAL(st.edges_shown, 3);
    CU_ASSERT(contains(dot, "digraph \"leakgate\" {\n"));
    CU_ASSERT(contains(dot, "label=\"leakgate: FAIL parser/test\\l"
                            "growth: 4,208 B in 2 objects\\l"
                            "binary /build/app\\l"
                            "showing all 4 functions and 3 calls\\l"));
    /* Nodes in order of retained bytes: main, parse, cache_insert, ... */
    CU_ASSERT(contains(dot, "N0 [label=\"main\\nmain.c:7\\n0 B (0.0%)\\n"
                            "of 4,208 B (100.0%)\""));
    CU_ASSERT(contains(dot, "N1 [label=\"parse\\nparse.c:30, :31\\n0 B "
                            "(0.0%)\\nof 4,208 B (100.0%)\""));
    CU_ASSERT(contains(dot, "N2 [label=\"cache_insert\\ncache.c:42\\n"
                            "4,096 B (97.3%)\""));
    CU_ASSERT(contains(dot, "N3 [label=\"make_copy\\nparse.c:12\\n112 B "
                            "(2.7%)\""));
    CU_ASSERT(contains(dot, "tooltip=\"parse at src/parse.c:30, :31 in "
                            "/build/app\""));
    CU_ASSERT(contains(dot, "N0 -> N1 [label=\" 4,208 B\", penwidth=6.00, "
                            "weight=101"));
    CU_ASSERT(contains(dot, "N1 -> N2 [label=\" 4,096 B\""));
    CU_ASSERT(contains(dot, "N1 -> N3 [label=\" 112 B\""));
    CU_ASSERT_EQUAL(count(dot, " B\", penwidth="), 3);
    CU_ASSERT_EQUAL(count(dot, "dashed\""), 0);
    leakgate_util__free(dot);
}

/* A recursive function counts once per stack, in nodes and in edges. */
static void
test_graph__recursion_counts_once(void)
{
    struct leakgate_frame a[5] = {fr("alloc_node", "t.c", 1),
                                  fr("walk", "t.c", 10), fr("visit", "t.c", 20),
                                  fr("walk", "t.c", 11), fr("main", "t.c", 30)};
    struct leakgate_graph_stack s[1] = {{a, 5, 1000, 10}};
    struct leakgate_graph_stats st;
    char *dot = dot_of(&st, s, 1, NULL);

    CU_ASSERT_EQUAL(st.nodes, 4);
    CU_ASSERT_EQUAL(st.edges, 4); /* main->walk, walk->visit, visit->walk,
                                     walk->alloc_node */
    CU_ASSERT(contains(dot, "walk\\nt.c:10, :11\\n0 B (0.0%)\\nof 1,000 B "
                            "(100.0%)"));
    CU_ASSERT_EQUAL(count(dot, "label=\" 1,000 B\""), 4);
    leakgate_util__free(dot);
}

/* A small branch is folded; the edge through it is dashed. */
static void
test_graph__fractions(void)
{
    struct leakgate_frame big[3] = {fr("leaf", "l.c", 5), fr("big", "b.c", 9),
                                    fr("main", "m.c", 1)};
    struct leakgate_frame tiny[3] = {fr("leaf", "l.c", 5), fr("tiny", "t.c", 3),
                                     fr("main", "m.c", 1)};
    struct leakgate_graph_stack s[2] = {{big, 3, 10000, 1}, {tiny, 3, 20, 1}};
    struct leakgate_graph_opts o = LEAKGATE_GRAPH_OPTS_INIT;
    struct leakgate_graph_stats st;
    char *dot;

    /* Defaults: tiny (20 B < 0.5% of 10,020 B) folded, main -> leaf via
     * tiny is 20 B (>= 0.1%): dashed. */
    dot = dot_of(&st, s, 2, NULL);
    CU_ASSERT_EQUAL(st.nodes, 4);
    CU_ASSERT_EQUAL(st.nodes_shown, 3);
    CU_ASSERT(!strstr(dot, "tiny\\n"));
    CU_ASSERT(contains(dot, "[label=\" 20 B\", penwidth=1.01, weight=1, "
                            "style=dashed"));
    CU_ASSERT(contains(dot, "showing 3 of 4 functions (folded: under 51 B), "
                            "3 of 3 calls\\l"));
    leakgate_util__free(dot);
    /* edgefraction 0.01: the 20 B edge goes too. */
    o.edgefraction = 0.01;
    dot = dot_of(&st, s, 2, &o);
    CU_ASSERT_EQUAL(st.edges_shown, 2);
    CU_ASSERT_EQUAL(count(dot, "dashed\""), 0);
    CU_ASSERT(contains(dot, "2 of 3 calls (folded: under 101 B)"));
    leakgate_util__free(dot);
    /* nodefraction 0: everything. */
    o = (struct leakgate_graph_opts)LEAKGATE_GRAPH_OPTS_INIT;
    o.nodefraction = 0;
    dot = dot_of(&st, s, 2, &o);
    CU_ASSERT_EQUAL(st.nodes_shown, 4);
    CU_ASSERT(contains(dot, "tiny\\nt.c:3\\n0 B (0.0%)\\nof 20 B (0.2%)"));
    leakgate_util__free(dot);
    /* max_nodes 2: main and leaf, joined through both folded callers. */
    o.max_nodes = 2;
    dot = dot_of(&st, s, 2, &o);
    CU_ASSERT_EQUAL(st.nodes_shown, 2);
    CU_ASSERT(contains(dot, "showing 2 of 4 functions (folded: 2 beyond the "
                            "largest 2), 1 of 1 call\\l"));
    CU_ASSERT(contains(dot, "[label=\" 10,020 B\", penwidth=6.00, "
                            "weight=101, style=dashed"));
    leakgate_util__free(dot);
}

static void
test_graph__unknown_frames(void)
{
    struct leakgate_frame a[3] = {
        {0x7f0000001234, NULL, NULL, 0, "/usr/lib/libfoo.so.1", 0x1234, false},
        {0x555500000042, NULL, NULL, 0, NULL, 0x555500000042, false},
        {0x555500000100, "main", NULL, 0, exe, 0x100, false}};
    struct leakgate_graph_stack s[1] = {{a, 3, 48, 1}};
    char *dot = dot_of(NULL, s, 1, NULL);

    CU_ASSERT(contains(dot, "[label=\"libfoo.so.1+0x1234\\n48 B (100.0%)\""));
    CU_ASSERT(contains(dot, "[label=\"0x555500000042\\n0 B (0.0%)\\nof 48 B"));
    /* A known function without a line shows its module. */
    CU_ASSERT(contains(dot, "[label=\"main\\napp\\n0 B (0.0%)"));
    leakgate_util__free(dot);
}

static void
test_graph__inlined_and_lines(void)
{
    struct leakgate_frame a[3] = {fr("make_node", "n.h", 3),
                                  fr("insert", "n.c", 20),
                                  fr("main", "m.c", 1)};
    struct leakgate_graph_stack s[40];
    struct leakgate_frame many[40][2];
    struct leakgate_graph_opts o = LEAKGATE_GRAPH_OPTS_INIT;
    char *dot;

    a[0].inlined = true;
    s[0] = (struct leakgate_graph_stack){a, 3, 100, 1};
    for (unsigned int i = 1; i < 40; i++) {
        many[i][0] = fr("spread", "s.c", 100 + i);
        many[i][1] = fr("main", "m.c", 2);
        s[i] = (struct leakgate_graph_stack){many[i], 2, 1000 + i, 1};
    }
    o.nodefraction = 0;
    dot = dot_of(NULL, s, 40, &o);
    CU_ASSERT(contains(dot, "make_node (inlined)\\nn.h:3"));
    /* 39 distinct lines, of which the first 32 are remembered: the
     * busiest three of those, then "+many more". */
    CU_ASSERT(contains(dot, "spread\\ns.c:132, :131, :130 +many more\\n"));
    leakgate_util__free(dot);
}

static void
test_graph__escaping(void)
{
    char longname[200];
    struct leakgate_frame a[2] = {fr("op\"quote\\back", "we\"ird.c", 1),
                                  fr("ctl\x01"
                                     "bad\xff",
                                     "m.c", 2)};
    struct leakgate_frame b[1];
    struct leakgate_graph_stack s[2] = {{a, 2, 10, 1}, {b, 1, 10, 1}};
    struct leakgate_graph_opts o = LEAKGATE_GRAPH_OPTS_INIT;
    char *dot;

    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    memcpy(longname, "caf\xc3\xa9_", 6);
    b[0] = fr(longname, "l.c", 3);
    o.title = "title \"q\"";
    dot = dot_of(NULL, s, 2, &o);
    CU_ASSERT(contains(dot, "op\\\"quote\\\\back\\nwe\\\"ird.c:1"));
    CU_ASSERT(contains(dot, "ctl?bad?\\n"));
    CU_ASSERT(contains(dot, "title \\\"q\\\"\\l"));
    /* Long names are cut (on a character boundary) in the label only. */
    CU_ASSERT(contains(dot, "caf\xc3\xa9_xxxx"));
    CU_ASSERT(contains(dot, "xxx...\\nl.c:3"));
    CU_ASSERT(contains(dot, longname + 6));
    leakgate_util__free(dot);
}

static void
test_graph__empty(void)
{
    struct leakgate_frame a[1] = {fr("gone", "g.c", 1)};
    struct leakgate_graph_stack s[2] = {{a, 1, -100, -1}, {NULL, 0, 50, 1}};
    struct leakgate_graph_stats st;
    char *dot = dot_of(&st, NULL, 0, NULL);

    CU_ASSERT(contains(dot, "no growth\\l"));
    CU_ASSERT_EQUAL(st.nodes, 0);
    leakgate_util__free(dot);
    /* Freed stacks are not drawn; a stack without frames counts. */
    dot = dot_of(&st, s, 2, NULL);
    CU_ASSERT_EQUAL(st.nodes, 0);
    CU_ASSERT_EQUAL(st.total_bytes, 50);
    CU_ASSERT(!strstr(dot, "gone"));
    leakgate_util__free(dot);
}

static void
test_graph__enomem(void)
{
    struct leakgate_frame a[3] = {fr("c", "c.c", 1), fr("b", "b.c", 2),
                                  fr("a", "a.c", 3)};
    struct leakgate_frame b[3] = {fr("d", "d.c", 1), fr("b", "b.c", 4),
                                  fr("a", "a.c", 3)};
    struct leakgate_graph_stack s[2] = {{a, 3, 100, 1}, {b, 3, 1, 1}};
    size_t failures = 0;

    for (size_t n = 0; n < 200; n++) {
        char *dot = (char *)1;
        int rc;

        leakgate_util__fail_after(n);
        rc = leakgate_graph__dot(&dot, NULL, s, 2, NULL);
        leakgate_util__fail_after(SIZE_MAX);
        if (rc == 0) {
            CU_ASSERT_PTR_NOT_NULL(dot);
            leakgate_util__free(dot);
            break;
        }
        CU_ASSERT_EQUAL(rc, LEAKGATE_ENOMEM);
        CU_ASSERT_PTR_NULL(dot);
        failures++;
    }
    CU_ASSERT(failures > 3);
}

const char *const unit_suite = "graph";
const struct unit_case unit_cases[] = {
    {"test_graph__weights_and_labels", test_graph__weights_and_labels},
    {"test_graph__recursion_counts_once", test_graph__recursion_counts_once},
    {"test_graph__fractions", test_graph__fractions},
    {"test_graph__unknown_frames", test_graph__unknown_frames},
    {"test_graph__inlined_and_lines", test_graph__inlined_and_lines},
    {"test_graph__escaping", test_graph__escaping},
    {"test_graph__empty", test_graph__empty},
    {"test_graph__enomem", test_graph__enomem},
    {NULL, NULL},
};
