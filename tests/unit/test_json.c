/* SPDX-License-Identifier: MIT */
/* json: the strict reader -- values, escapes, every error with its
 * line:column, the limits, and allocation failures. */
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "leakgate/leakgate.h"
#include "util.h"

const char *const unit_suite = "json";

static int
parse(struct leakgate_json **out, const char *text)
{
    return leakgate_json__parse(out, text, strlen(text), "r.json", NULL);
}

/* Parse must fail with code and exactly this detail. */
static void
expect_error(const char *text, int code, const char *detail)
{
    struct leakgate_json *j = (struct leakgate_json *)1;
    int rc = parse(&j, text);

    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_PTR_NULL(j);
    if (strcmp(leakgate_error_last(), detail) != 0) {
        fprintf(stderr, "\n  input:    %s\n  expected: %s\n  got:      %s\n",
                text, detail, leakgate_error_last());
        CU_FAIL("error detail differs");
    }
}

static void
test_json__values(void)
{
    struct leakgate_json *j = NULL;
    const struct leakgate_json *a;
    int64_t i = 0;
    double d = 0;

    CU_ASSERT_EQUAL_FATAL(
        parse(&j, " {\"a\": [true, false, null, -12, 0.5e1, \"x\"],\n"
                  "  \"b\": {}, \"c\": []} "),
        0);
    CU_ASSERT_EQUAL(j->type, LEAKGATE_JSON_OBJECT);
    CU_ASSERT_EQUAL(j->n, 3);
    a = leakgate_json__get(j, "a");
    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_EQUAL(a->line, 1);
    CU_ASSERT_EQUAL(a->col, 3);
    CU_ASSERT_EQUAL(a->n, 6);
    CU_ASSERT_TRUE(a->items[0].boolean);
    CU_ASSERT_EQUAL(a->items[1].type, LEAKGATE_JSON_BOOL);
    CU_ASSERT_FALSE(a->items[1].boolean);
    CU_ASSERT_EQUAL(a->items[2].type, LEAKGATE_JSON_NULL);
    CU_ASSERT_TRUE(leakgate_json__int(&i, &a->items[3]));
    CU_ASSERT_EQUAL(i, -12);
    CU_ASSERT_FALSE(leakgate_json__int(&i, &a->items[4]));
    CU_ASSERT_TRUE(leakgate_json__double(&d, &a->items[4]));
    CU_ASSERT_DOUBLE_EQUAL(d, 5.0, 1e-12);
    CU_ASSERT_STRING_EQUAL(a->items[5].text, "x");
    CU_ASSERT_EQUAL(leakgate_json__get(j, "c")->line, 2);
    CU_ASSERT_PTR_NULL(leakgate_json__get(j, "zz"));
    CU_ASSERT_PTR_NULL(leakgate_json__get(a, "a")); /* not an object */
    CU_ASSERT_STRING_EQUAL(leakgate_json__type_name(a), "an array");
    leakgate_json__free(j);
    leakgate_json__free(NULL);
}

static void
test_json__strings_and_escapes(void)
{
    struct leakgate_json *j = NULL;

    CU_ASSERT_EQUAL_FATAL(
        parse(&j, "\"q\\\" b\\\\ s\\/ \\b\\f\\n\\r\\t \\u00e9 \\ud83d\\ude00 "
                  "\xc3\xa9\""),
        0);
    CU_ASSERT_STRING_EQUAL(j->text, "q\" b\\ s/ \b\f\n\r\t \xc3\xa9 "
                                    "\xf0\x9f\x98\x80 \xc3\xa9");
    CU_ASSERT_EQUAL(j->len, strlen(j->text));
    leakgate_json__free(j);
}

static void
test_json__numbers(void)
{
    struct leakgate_json *j = NULL;
    int64_t i = 0;
    double d = 0;

    CU_ASSERT_EQUAL_FATAL(parse(&j, "[9223372036854775807, "
                                    "-9223372036854775808, "
                                    "9223372036854775808, 1e400, -0, 0.125]"),
                          0);
    CU_ASSERT_TRUE(leakgate_json__int(&i, &j->items[0]));
    CU_ASSERT_EQUAL(i, INT64_MAX);
    CU_ASSERT_TRUE(leakgate_json__int(&i, &j->items[1]));
    CU_ASSERT_EQUAL(i, INT64_MIN);
    CU_ASSERT_FALSE(leakgate_json__int(&i, &j->items[2]));
    CU_ASSERT_FALSE(leakgate_json__double(&d, &j->items[3]));
    CU_ASSERT_TRUE(leakgate_json__int(&i, &j->items[4]));
    CU_ASSERT_EQUAL(i, 0);
    CU_ASSERT_TRUE(leakgate_json__double(&d, &j->items[5]));
    CU_ASSERT_DOUBLE_EQUAL(d, 0.125, 1e-15);
    CU_ASSERT_FALSE(leakgate_json__int(&i, NULL));
    leakgate_json__free(j);
}

static void
test_json__syntax_errors_name_line_and_column(void)
{
    expect_error("", LEAKGATE_EFORMAT,
                 "r.json:1:1: empty input, expected a JSON value");
    expect_error("{\"a\": 1,\n \"b\": }", LEAKGATE_EFORMAT,
                 "r.json:2:7: unexpected '}' (expected a value)");
    expect_error("[1, 2,]", LEAKGATE_EFORMAT,
                 "r.json:1:7: unexpected ']' (expected a value)");
    expect_error("{\"a\" 1}", LEAKGATE_EFORMAT,
                 "r.json:1:6: unexpected '1' (expected ':' after the key)");
    expect_error("{a: 1}", LEAKGATE_EFORMAT,
                 "r.json:1:2: unexpected 'a' (expected a string key)");
    expect_error("[1 2]", LEAKGATE_EFORMAT,
                 "r.json:1:4: unexpected '2' (expected ',' or ']' after an "
                 "array item)");
    expect_error("{\"a\": 1", LEAKGATE_EFORMAT,
                 "r.json:1:8: unexpected end of input (expected ',' or '}' "
                 "after an object member)");
    expect_error("[01]", LEAKGATE_EFORMAT, "r.json:1:2: invalid number '01'");
    expect_error("[1.]", LEAKGATE_EFORMAT, "r.json:1:2: invalid number '1.'");
    expect_error("-", LEAKGATE_EFORMAT, "r.json:1:1: invalid number '-'");
    expect_error("[tru]", LEAKGATE_EFORMAT,
                 "r.json:1:2: invalid literal 'tru' (expected true, false or "
                 "null; strings need double quotes)");
    expect_error("{} x", LEAKGATE_EFORMAT,
                 "r.json:1:4: unexpected 'x' after the JSON value");
    expect_error("\xef\xbb\xbf{}", LEAKGATE_EFORMAT,
                 "r.json:1:1: byte order mark is not allowed");
    expect_error("{\"a\": 1, \"b\": 2,\n \"a\": 3}", LEAKGATE_EFORMAT,
                 "r.json:2:2: duplicate key 'a' (first at line 1)");
}

/* Members are found by key in objects of any size, also in objects of
 * the same keys in the same order (they share one sorted order), and a
 * duplicate is still found after such objects. */
static void
test_json__members_by_key(void)
{
    static const char *const keys[] = {"m", "b", "z", "a", "q", "c"};
    struct leakgate_json *j = NULL;

    CU_ASSERT_EQUAL_FATAL(
        parse(&j, "[{\"m\": 0, \"b\": 1, \"z\": 2, \"a\": 3, \"q\": 4, "
                  "\"c\": 5},\n {\"m\": 10, \"b\": 11, \"z\": 12, \"a\": 13, "
                  "\"q\": 14, \"c\": 15}, {\"x\": {\"k\": 1}}]"),
        0);
    for (size_t t = 0; t < 2; t++) {
        for (size_t i = 0; i < 6; i++) {
            const struct leakgate_json *m =
                leakgate_json__get(&j->items[t], keys[i]);
            int64_t n = -1;

            CU_ASSERT_PTR_EQUAL(m, &j->items[t].items[i]);
            CU_ASSERT_TRUE(leakgate_json__int(&n, m));
            CU_ASSERT_EQUAL(n, (int64_t)(10 * t + i));
        }
        CU_ASSERT_PTR_NULL(leakgate_json__get(&j->items[t], "d"));
        CU_ASSERT_PTR_NULL(leakgate_json__get(&j->items[t], ""));
        CU_ASSERT_PTR_NULL(leakgate_json__get(&j->items[t], "zz"));
    }
    CU_ASSERT_PTR_NOT_NULL(
        leakgate_json__get(leakgate_json__get(&j->items[2], "x"), "k"));
    leakgate_json__free(j);
    expect_error("[{\"a\": 1, \"b\": 2}, {\"a\": 1, \"b\": 2}, "
                 "{\"a\": 1, \"a\": 2}]",
                 LEAKGATE_EFORMAT,
                 "r.json:1:47: duplicate key 'a' (first at line 1)");
}

static void
test_json__string_errors(void)
{
    expect_error("\"abc", LEAKGATE_EFORMAT, "r.json:1:1: unterminated string");
    expect_error("[\"a\nb\"]", LEAKGATE_EFORMAT,
                 "r.json:1:4: control character U+000A in a string (escape "
                 "it)");
    expect_error("\"\\x\"", LEAKGATE_EFORMAT,
                 "r.json:1:2: invalid escape \\ followed by 'x'");
    expect_error("\"\\u12G4\"", LEAKGATE_EFORMAT,
                 "r.json:1:2: invalid \\u escape (expected 4 hex digits)");
    expect_error("\"\\u0000\"", LEAKGATE_EFORMAT,
                 "r.json:1:2: \\u0000 in a string is not supported");
    expect_error("\"\\ud800\"", LEAKGATE_EFORMAT,
                 "r.json:1:2: unpaired surrogate \\uD800");
    expect_error("\"\\udc00\"", LEAKGATE_EFORMAT,
                 "r.json:1:2: unpaired surrogate \\uDC00");
    expect_error("\"\xc3\xa9\xff\"", LEAKGATE_EFORMAT,
                 "r.json:1:3: invalid UTF-8 (byte 0xFF) in a string");
    expect_error("\"\xc0\xaf\"", LEAKGATE_EFORMAT,
                 "r.json:1:2: invalid UTF-8 (byte 0xC0) in a string");
    expect_error("\"\xed\xa0\x80\"", LEAKGATE_EFORMAT,
                 "r.json:1:2: invalid UTF-8 (byte 0xED) in a string");
}

static void
test_json__limits(void)
{
    struct leakgate_json_limits lim = {0, 3, 4, 5};
    struct leakgate_json *j = NULL;
    char big[600];

    CU_ASSERT_EQUAL(leakgate_json__parse(&j, "[[[1]]]", 7, "r.json", &lim), 0);
    leakgate_json__free(j);
    CU_ASSERT_EQUAL(leakgate_json__parse(&j, "[[[[1]]]]", 9, "r.json", &lim),
                    LEAKGATE_ETOOBIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "r.json:1:4: nesting deeper than 3 levels");
    CU_ASSERT_EQUAL(leakgate_json__parse(&j, "\"abcde\"", 7, "r.json", &lim),
                    LEAKGATE_ETOOBIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "r.json:1:1: string longer than 4 bytes");
    CU_ASSERT_EQUAL(leakgate_json__parse(&j, "[1,2,3,4,5]", 11, "r.json", &lim),
                    LEAKGATE_ETOOBIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "r.json:1:10: more than 5 values");
    lim = (struct leakgate_json_limits){10, 0, 0, 0};
    CU_ASSERT_EQUAL(leakgate_json__parse(&j, "[1,2,3,4,5]", 11, "r.json", &lim),
                    LEAKGATE_ETOOBIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           "r.json: 11 bytes, more than the limit of 10");
    /* The depth limit is clamped: deep input never exhausts the stack. */
    lim = (struct leakgate_json_limits){0, 1000000, 0, 0};
    memset(big, '[', sizeof big);
    CU_ASSERT_EQUAL(leakgate_json__parse(&j, big, sizeof big, "r.json", &lim),
                    LEAKGATE_ETOOBIG);
    CU_ASSERT_PTR_NULL(j);
}

static void
test_json__allocation_failures_leak_nothing(void)
{
    const char *text =
        "{\"a\": [1, \"xyz\", {\"b\": null}], \"c\": \"\\u00e9\"}";
    int rc = LEAKGATE_ENOMEM;

    for (size_t n = 0; rc == LEAKGATE_ENOMEM && n < 100; n++) {
        struct leakgate_json *j = NULL;

        leakgate_util__fail_after(n);
        rc = parse(&j, text);
        leakgate_util__fail_after(SIZE_MAX);
        CU_ASSERT(rc == 0 || rc == LEAKGATE_ENOMEM);
        CU_ASSERT((rc == 0) == (j != NULL));
        leakgate_json__free(j);
    }
    CU_ASSERT_EQUAL(rc, 0);
}

const struct unit_case unit_cases[] = {
    {"test_json__values", test_json__values},
    {"test_json__strings_and_escapes", test_json__strings_and_escapes},
    {"test_json__numbers", test_json__numbers},
    {"test_json__syntax_errors_name_line_and_column",
     test_json__syntax_errors_name_line_and_column},
    {"test_json__members_by_key", test_json__members_by_key},
    {"test_json__string_errors", test_json__string_errors},
    {"test_json__limits", test_json__limits},
    {"test_json__allocation_failures_leak_nothing",
     test_json__allocation_failures_leak_nothing},
    {NULL, NULL},
};
