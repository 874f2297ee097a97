/* SPDX-License-Identifier: MIT */
/* yamledit: byte offsets of the layout, each edit in block and flow
 * style, CRLF files, a last line without a line break, overlaps, and the
 * scalar and size writers. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakgate/leakgate.h"
#include "yamledit.h"

const char *const unit_suite = "yamledit";

struct fixture {
    struct leakgate_ylayout lay;
    struct leakgate_yedits e;
};

static void
open_text(struct fixture *f, const char *text)
{
    CU_ASSERT_EQUAL_FATAL(
        leakgate_yamledit__layout(&f->lay, text, strlen(text), "t.yaml"), 0);
    leakgate_yamledit__edits_init(&f->e, &f->lay);
}

/* Apply and compare with the expected text, then clean up. */
static void
expect_text(struct fixture *f, const char *expected)
{
    char *out = NULL;
    size_t len = 0;

    CU_ASSERT_EQUAL(leakgate_yamledit__apply(&out, &len, &f->e), 0);
    if (!out || strcmp(out, expected) != 0) {
        fprintf(stderr, "\n--- expected\n%s--- got\n%s---\n", expected,
                out ? out : "(null)");
        CU_FAIL("edited text differs");
    }
    CU_ASSERT_EQUAL(len, out ? strlen(out) : 0);
    free(out);
    leakgate_yamledit__edits_dispose(&f->e);
    leakgate_yamledit__layout_free(&f->lay);
}

static const struct leakgate_ynode *
path(const struct fixture *f, const char *k1, const char *k2)
{
    const struct leakgate_ynode *n =
        leakgate_yamledit__get(leakgate_yamledit__top(&f->lay), k1, NULL);

    return k2 ? leakgate_yamledit__get(n, k2, NULL) : n;
}

static struct leakgate_ynode *
scalar(const char *source)
{
    return leakgate_yamledit__frag(LEAKGATE_YNODE_SCALAR, source);
}

/* {frames: [a], limit: N} */
static struct leakgate_ynode *
rule(const char *fn, const char *limit)
{
    struct leakgate_ynode *m =
        leakgate_yamledit__frag(LEAKGATE_YNODE_MAP, NULL);
    struct leakgate_ynode *s =
        leakgate_yamledit__frag(LEAKGATE_YNODE_SEQ, NULL);

    s->flow = true;
    leakgate_yamledit__frag_push(s, scalar(fn));
    leakgate_yamledit__frag_put(m, "frames", s);
    leakgate_yamledit__frag_put(m, "limit", scalar(limit));
    return m;
}

static void
test_yamledit__layout_offsets_count_bytes(void)
{
    struct fixture f;
    const char *text = "a: 1   # \xc3\xa9\xc3\xa9\nb:\n  c: \"\xc3\xa9x\"\n";
    const struct leakgate_ynode *c;

    open_text(&f, text);
    c = path(&f, "b", "c");
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->start, (size_t)(strstr(text, "\"\xc3\xa9") - text));
    CU_ASSERT_EQUAL(c->end, c->start + 5);
    CU_ASSERT_EQUAL(c->col, 5);
    CU_ASSERT_STRING_EQUAL(c->text, "\xc3\xa9x");
    CU_ASSERT_EQUAL(path(&f, "b", NULL)->col, 2);
    CU_ASSERT_EQUAL(f.lay.step, 2);
    CU_ASSERT_FALSE(f.lay.crlf);
    leakgate_yamledit__set_scalar(&f.e, c, "y");
    expect_text(&f, "a: 1   # \xc3\xa9\xc3\xa9\nb:\n  c: y\n");
}

static void
test_yamledit__block_additions_keep_everything_else(void)
{
    struct fixture f;
    const struct leakgate_ynode *tests, *entry;

    open_text(&f, "tests:\n"
                  "    # first\n"
                  "    \"a/b\":   # the a/b test\n"
                  "        stacks:\n"
                  "          - frames: [x]\n"
                  "            limit: 5   # why\n"
                  "    # trailing comment for what follows\n"
                  "ignore: []\n");
    tests = path(&f, "tests", NULL);
    entry = &tests->items[1];
    CU_ASSERT_EQUAL(f.lay.step, 4);
    leakgate_yamledit__seq_add(
        &f.e, leakgate_yamledit__get(entry, "stacks", NULL), rule("y", "16"));
    leakgate_yamledit__map_add(&f.e, entry, "total_limit", scalar("1 KiB"));
    leakgate_yamledit__map_add(&f.e, tests, "\"c/d\"", rule("z", "8"));
    expect_text(&f, "tests:\n"
                    "    # first\n"
                    "    \"a/b\":   # the a/b test\n"
                    "        stacks:\n"
                    "          - frames: [x]\n"
                    "            limit: 5   # why\n"
                    "          - frames: [y]\n"
                    "            limit: 16\n"
                    "        total_limit: 1 KiB\n"
                    "    \"c/d\":\n"
                    "        frames: [z]\n"
                    "        limit: 8\n"
                    "    # trailing comment for what follows\n"
                    "ignore: []\n");
}

static void
test_yamledit__flow_additions(void)
{
    struct fixture f;
    const struct leakgate_ynode *tests;

    open_text(&f, "tests: {\"a/b\": {stack_limit: 1}, \"e/f\": {}}\n"
                  "ignore: []\n");
    tests = path(&f, "tests", NULL);
    leakgate_yamledit__map_add(
        &f.e, &tests->items[1], "stacks",
        leakgate_yamledit__frag(LEAKGATE_YNODE_SEQ, NULL));
    leakgate_yamledit__map_add(&f.e, &tests->items[3], "warmup", scalar("1"));
    leakgate_yamledit__seq_add(&f.e, path(&f, "ignore", NULL), rule("t", "0"));
    expect_text(&f, "tests: {\"a/b\": {stack_limit: 1, stacks: []}, \"e/f\": "
                    "{warmup: 1}}\n"
                    "ignore: [{frames: [t], limit: 0}]\n");
}

static void
test_yamledit__null_sections_become_blocks(void)
{
    struct fixture f;
    const struct leakgate_ynode *top;
    struct leakgate_ynode *m;
    size_t pair = 0;

    open_text(&f, "version: 1\ntests: ~   # none yet\nignore:\n");
    top = leakgate_yamledit__top(&f.lay);
    leakgate_yamledit__get(top, "tests", &pair);
    m = leakgate_yamledit__frag(LEAKGATE_YNODE_MAP, NULL);
    leakgate_yamledit__frag_put(m, "\"a/b\"", rule("x", "1"));
    leakgate_yamledit__set_null(&f.e, top, pair, m);
    leakgate_yamledit__get(top, "ignore", &pair);
    m = leakgate_yamledit__frag(LEAKGATE_YNODE_SEQ, NULL);
    leakgate_yamledit__frag_push(m, rule("y", "2"));
    leakgate_yamledit__set_null(&f.e, top, pair, m);
    expect_text(&f, "version: 1\ntests:   # none yet\n"
                    "  \"a/b\":\n    frames: [x]\n    limit: 1\n"
                    "ignore:\n  - frames: [y]\n    limit: 2\n");
}

static void
test_yamledit__crlf_and_missing_last_line_break(void)
{
    struct fixture f;

    open_text(&f, "version: 1\r\ndefaults:\r\n  stack_limit: 0");
    CU_ASSERT_TRUE(f.lay.crlf);
    leakgate_yamledit__map_add(&f.e, path(&f, "defaults", NULL), "warmup",
                               scalar("2"));
    leakgate_yamledit__map_add(
        &f.e, leakgate_yamledit__top(&f.lay), "tests",
        leakgate_yamledit__frag(LEAKGATE_YNODE_MAP, NULL));
    expect_text(&f, "version: 1\r\ndefaults:\r\n  stack_limit: 0\r\n"
                    "  warmup: 2\r\ntests: {}\r\n");
}

static void
test_yamledit__removals(void)
{
    struct fixture f;
    const struct leakgate_ynode *tests, *seq;

    open_text(&f, "tests:\n"
                  "  # keep me\n"
                  "  \"a\":\n"
                  "    stacks:\n"
                  "      - frames: [x]   # x\n"
                  "        limit: 1\n"
                  "      # between\n"
                  "      -   frames: [y]\n"
                  "          limit: 2\n"
                  "  \"b\": {stacks: [{frames: [p], limit: 1}, "
                  "{frames: [q], limit: 2}], stack_limit: 3}\n");
    tests = path(&f, "tests", NULL);
    seq = leakgate_yamledit__get(&tests->items[1], "stacks", NULL);
    leakgate_yamledit__remove(&f.e, seq, 1);
    seq = leakgate_yamledit__get(&tests->items[3], "stacks", NULL);
    leakgate_yamledit__remove(&f.e, seq, 0);
    leakgate_yamledit__remove(&f.e, &tests->items[3], 1);
    expect_text(&f, "tests:\n"
                    "  # keep me\n"
                    "  \"a\":\n"
                    "    stacks:\n"
                    "      - frames: [x]   # x\n"
                    "        limit: 1\n"
                    "      # between\n"
                    "  \"b\": {stacks: [{frames: [q], limit: 2}]}\n");
    open_text(&f, "a: 1\nb:\n  - x\n  - y\nc: 3\n");
    leakgate_yamledit__remove(&f.e, leakgate_yamledit__top(&f.lay), 1);
    expect_text(&f, "a: 1\nc: 3\n");
}

static void
test_yamledit__remove_many_in_flow_keeps_edited_items(void)
{
    struct fixture f;
    const struct leakgate_ynode *seq;
    bool drop[5] = {true, false, true, true, false};
    bool all[2] = {true, true};

    open_text(&f, "a: [x, y, z, w, v]\nb: {k: 1, l: 2}\n");
    seq = path(&f, "a", NULL);
    leakgate_yamledit__remove_many(&f.e, seq, drop);
    leakgate_yamledit__set_scalar(&f.e, &seq->items[1], "Y");
    leakgate_yamledit__remove_many(&f.e, path(&f, "b", NULL), all);
    expect_text(&f, "a: [Y, v]\nb: {}\n");
}

static void
test_yamledit__overlapping_edits_are_refused(void)
{
    struct fixture f;
    const struct leakgate_ynode *a;
    char *out = (char *)1;
    size_t len;

    open_text(&f, "a:\n  b: 1\n");
    a = path(&f, "a", NULL);
    leakgate_yamledit__remove(&f.e, leakgate_yamledit__top(&f.lay), 0);
    leakgate_yamledit__set_scalar(&f.e, leakgate_yamledit__get(a, "b", NULL),
                                  "2");
    CU_ASSERT_EQUAL(leakgate_yamledit__apply(&out, &len, &f.e), LEAKGATE_ERROR);
    CU_ASSERT_PTR_NULL(out);
    leakgate_yamledit__edits_dispose(&f.e);
    leakgate_yamledit__layout_free(&f.lay);
}

static void
test_yamledit__syntax_error(void)
{
    struct leakgate_ylayout lay;

    CU_ASSERT_EQUAL(leakgate_yamledit__layout(&lay, "a: [1\n", 6, "t.yaml"),
                    LEAKGATE_ECONFIG);
    CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), "t.yaml:2:1:"));
    leakgate_yamledit__layout_free(&lay);
}

static void
test_yamledit__scalars_and_sizes(void)
{
    static const struct {
        const char *in, *out;
    } scalars[] = {
        {"cache_insert", "cache_insert"},
        {"a/b", "a/b"},
        {"yes", "\"yes\""},
        {"Null", "\"Null\""},
        {"1abc", "\"1abc\""},
        {"p/test\\[1\\]", "'p/test\\[1\\]'"},
        {"it's \"x\"", "'it''s \"x\"'"},
        {"tab\there", "\"tab\\x09here\""},
        {"operator new(unsigned long)", "\"operator new(unsigned long)\""},
        {"", "\"\""},
    };
    static const struct {
        uint64_t in;
        const char *out;
    } sizes[] = {{0, "0"},           {112, "112"},
                 {4096, "4 KiB"},    {4100, "4100"},
                 {3145728, "3 MiB"}, {(uint64_t)5 << 30, "5 GiB"}};

    for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        leakgate_yamledit__put_scalar(&b, scalars[i].in);
        CU_ASSERT_STRING_EQUAL(b.ptr, scalars[i].out);
        leakgate_buf__dispose(&b);
    }
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        leakgate_yamledit__put_size(&b, sizes[i].in);
        CU_ASSERT_STRING_EQUAL(b.ptr, sizes[i].out);
        leakgate_buf__dispose(&b);
    }
}

const struct unit_case unit_cases[] = {
    {"test_yamledit__layout_offsets_count_bytes",
     test_yamledit__layout_offsets_count_bytes},
    {"test_yamledit__block_additions_keep_everything_else",
     test_yamledit__block_additions_keep_everything_else},
    {"test_yamledit__flow_additions", test_yamledit__flow_additions},
    {"test_yamledit__null_sections_become_blocks",
     test_yamledit__null_sections_become_blocks},
    {"test_yamledit__crlf_and_missing_last_line_break",
     test_yamledit__crlf_and_missing_last_line_break},
    {"test_yamledit__removals", test_yamledit__removals},
    {"test_yamledit__remove_many_in_flow_keeps_edited_items",
     test_yamledit__remove_many_in_flow_keeps_edited_items},
    {"test_yamledit__overlapping_edits_are_refused",
     test_yamledit__overlapping_edits_are_refused},
    {"test_yamledit__syntax_error", test_yamledit__syntax_error},
    {"test_yamledit__scalars_and_sizes", test_yamledit__scalars_and_sizes},
    {NULL, NULL},
};
