/* SPDX-License-Identifier: MIT */
/* util: buffers, escaping, globs, ranges, byte formatting, fault seam. */
#include "unit.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "leakgate/leakgate.h"
#include "util.h"

const char *const unit_suite = "util";

static void
test_util__buf_grows_and_takes(void)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char *s;

    for (int i = 0; i < 1000; i++)
        leakgate_buf__printf(&b, "%d,", i);
    CU_ASSERT_FALSE(b.failed);
    CU_ASSERT_EQUAL(strncmp(b.ptr, "0,1,2,", 6), 0);
    s = leakgate_buf__take(&b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    CU_ASSERT_PTR_NULL(b.ptr);
    CU_ASSERT_EQUAL(strlen(s), 3890);
    leakgate_util__free(s);
}

static void
test_util__buf_failure_is_sticky(void)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_util__fail_after(0);
    leakgate_buf__puts(&b, "x");
    leakgate_util__fail_after(SIZE_MAX);
    leakgate_buf__puts(&b, "y");
    CU_ASSERT_TRUE(b.failed);
    CU_ASSERT_PTR_NULL(leakgate_buf__take(&b));
}

static void
test_util__escaping(void)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_buf__put_xml(&b, "<a href=\"x\">&'\x01");
    CU_ASSERT_STRING_EQUAL(b.ptr, "&lt;a href=&quot;x&quot;&gt;&amp;&apos;?");
    leakgate_buf__dispose(&b);
    leakgate_buf__put_json(&b, "q\"b\\n\n\x02");
    CU_ASSERT_STRING_EQUAL(b.ptr, "q\\\"b\\\\n\\n\\u0002");
    leakgate_buf__dispose(&b);
}

static void
test_util__globs(void)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    CU_ASSERT_TRUE(leakgate_util__glob_match("parser/test_*", "parser/test_a"));
    CU_ASSERT_TRUE(leakgate_util__glob_match("*/x", "a/b/x"));
    CU_ASSERT_FALSE(leakgate_util__glob_match("parser/?", "parser/ab"));
    CU_ASSERT_TRUE(leakgate_util__glob_valid("a[bc]*"));
    CU_ASSERT_FALSE(leakgate_util__glob_valid("a[bc"));
    CU_ASSERT_FALSE(leakgate_util__glob_valid(""));
    CU_ASSERT_FALSE(leakgate_util__glob_valid("a\\"));
    CU_ASSERT_EQUAL(leakgate_util__glob_specificity("abc"), SIZE_MAX);
    CU_ASSERT_EQUAL(leakgate_util__glob_specificity("ab*"), 2);
    CU_ASSERT_EQUAL(leakgate_util__glob_specificity("a[xy]c?"), 2);
    leakgate_util__glob_escape(&b, "s/[suite]*?");
    CU_ASSERT_STRING_EQUAL(b.ptr, "s/\\[suite\\]\\*\\?");
    CU_ASSERT_TRUE(leakgate_util__glob_match(b.ptr, "s/[suite]*?"));
    CU_ASSERT_FALSE(leakgate_util__glob_match(b.ptr, "s/s*?"));
    leakgate_buf__dispose(&b);
}

static void
test_util__ranges_and_bytes(void)
{
    struct leakgate_range r[2] = {{10, 20}, {30, 40}};
    char out[32];

    CU_ASSERT_TRUE(leakgate_util__in_ranges(r, 2, 10));
    CU_ASSERT_FALSE(leakgate_util__in_ranges(r, 2, 20));
    CU_ASSERT_TRUE(leakgate_util__in_ranges(r, 2, 39));
    CU_ASSERT_FALSE(leakgate_util__in_ranges(r, 0, 15));
    CU_ASSERT_STRING_EQUAL(leakgate_util__human_bytes(out, sizeof out, 112),
                           "112 B");
    CU_ASSERT_STRING_EQUAL(leakgate_util__human_bytes(out, sizeof out, 4096),
                           "4.0 KiB");
    CU_ASSERT_STRING_EQUAL(
        leakgate_util__human_bytes(out, sizeof out, 3u << 20), "3.0 MiB");
}

static void
test_util__sanitize(void)
{
    char *s = leakgate_util__sanitize_name("[suite]");

    CU_ASSERT_STRING_EQUAL(s, "_suite_");
    leakgate_util__free(s);
    s = leakgate_util__sanitize_name("../etc/pass wd");
    CU_ASSERT_STRING_EQUAL(s, "_._etc_pass_wd");
    leakgate_util__free(s);
    s = leakgate_util__sanitize_name("");
    CU_ASSERT_STRING_EQUAL(s, "_");
    leakgate_util__free(s);
}

/* Names as leakgate prints them, read back, and compared as JSON has
 * them. */
static void
test_util__names(void)
{
    static const char *const names[] = {
        "plain",           "new\nline",   "tab\tcr\r",   "back\\slash",
        "ctl\001\033[31m", "bad\xff\xfe", "ok \xc3\xa9", "",
    };
    static const char *const printed[] = {
        "plain",
        "new\\nline",
        "tab\\tcr\\r",
        "back\\\\slash",
        "ctl\\x01\\x1b[31m",
        "bad\\xff\\xfe",
        "ok \xc3\xa9",
        "",
    };

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT, back = LEAKGATE_BUF_INIT;
        char out[8];
        size_t n;

        leakgate_util__name_escape(&b, names[i]);
        CU_ASSERT_STRING_EQUAL(b.ptr ? b.ptr : "", printed[i]);
        CU_ASSERT_EQUAL(leakgate_util__name_plain(names[i]),
                        strcmp(names[i], printed[i]) == 0);
        CU_ASSERT_TRUE(
            leakgate_util__name_unescape(&back, b.ptr ? b.ptr : "", b.len));
        CU_ASSERT_STRING_EQUAL(back.ptr ? back.ptr : "", names[i]);
        n = leakgate_name_escape(out, sizeof out, names[i]);
        CU_ASSERT_EQUAL(n, strlen(printed[i]));
        CU_ASSERT_EQUAL(strncmp(out, printed[i], sizeof out - 1), 0);
        leakgate_buf__dispose(&b);
        leakgate_buf__dispose(&back);
    }
    {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        CU_ASSERT_FALSE(leakgate_util__name_unescape(&b, "a\\q", 3));
        CU_ASSERT_FALSE(leakgate_util__name_unescape(&b, "a\\", 2));
        CU_ASSERT_FALSE(leakgate_util__name_unescape(&b, "\\x4", 3));
        CU_ASSERT_EQUAL(b.len, 0);
        leakgate_buf__dispose(&b);
    }
    CU_ASSERT_TRUE(leakgate_names_same("dup", "dup"));
    CU_ASSERT_FALSE(leakgate_names_same("dup", "dup2"));
    CU_ASSERT_TRUE(leakgate_names_same("a\xff", "a\xfe"));
    CU_ASSERT_TRUE(leakgate_names_same("a\xff", "a\xef\xbf\xbd"));
    CU_ASSERT_FALSE(leakgate_names_same("a\xff", "a?"));
}

/* Ordinals: the second of a name is 2, the third 3, names that read the
 * same in JSON count as one name; the rest stay 1. */
static void
test_util__name_ordinals(void)
{
    const char *names[] = {
        "a", "b", "a", "x\xff", "x\xfe", "a", "b2", "x\xef\xbf\xbd", "c"};
    unsigned int ord[9], want[9] = {1, 1, 2, 1, 2, 3, 1, 3, 1};

    CU_ASSERT_EQUAL_FATAL(leakgate_util__name_ordinals(names, 9, ord), 0);
    for (size_t i = 0; i < 9; i++)
        CU_ASSERT_EQUAL(ord[i], want[i]);
    CU_ASSERT_EQUAL(leakgate_util__name_ordinals(names, 0, ord), 0);
}

/* A large registry: all different (every ordinal 1, the hash set's
 * answer), then the same with one name again at the end (its 2 found,
 * the rest still 1). */
static void
test_util__name_ordinals_many(void)
{
    enum { N = 300 };
    static char text[N + 1][16];
    const char *names[N + 1];
    static unsigned int ord[N + 1];

    for (size_t i = 0; i < N; i++) {
        snprintf(text[i], sizeof text[i], "case_%zu", i);
        names[i] = text[i];
    }
    CU_ASSERT_EQUAL_FATAL(leakgate_util__name_ordinals(names, N, ord), 0);
    for (size_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(ord[i], 1);
    names[N] = "case_17";
    CU_ASSERT_EQUAL_FATAL(leakgate_util__name_ordinals(names, N + 1, ord), 0);
    for (size_t i = 0; i < N; i++)
        CU_ASSERT_EQUAL(ord[i], 1);
    CU_ASSERT_EQUAL(ord[N], 2);
}

/* "suite/test" into a fixed buffer: whole when it fits, else cut as
 * snprintf() cuts. */
static void
test_util__join_to(void)
{
    char out[8];

    CU_ASSERT_TRUE(leakgate_util__join_to(out, sizeof out, "ab", '/', "cd"));
    CU_ASSERT_STRING_EQUAL(out, "ab/cd");
    CU_ASSERT_TRUE(leakgate_util__join_to(out, sizeof out, "abc", '/', "def"));
    CU_ASSERT_STRING_EQUAL(out, "abc/def");
    CU_ASSERT_FALSE(
        leakgate_util__join_to(out, sizeof out, "abc", '/', "defg"));
    CU_ASSERT_STRING_EQUAL(out, "abc/def");
    CU_ASSERT_FALSE(
        leakgate_util__join_to(out, sizeof out, "abcdefgh", '/', "x"));
    CU_ASSERT_STRING_EQUAL(out, "abcdefg");
    CU_ASSERT_FALSE(
        leakgate_util__join_to(out, sizeof out, "abcdef", '/', "x"));
    CU_ASSERT_STRING_EQUAL(out, "abcdef/");
}

const struct unit_case unit_cases[] = {
    {"test_util__names", test_util__names},
    {"test_util__join_to", test_util__join_to},
    {"test_util__name_ordinals", test_util__name_ordinals},
    {"test_util__name_ordinals_many", test_util__name_ordinals_many},
    {"test_util__buf_grows_and_takes", test_util__buf_grows_and_takes},
    {"test_util__buf_failure_is_sticky", test_util__buf_failure_is_sticky},
    {"test_util__escaping", test_util__escaping},
    {"test_util__globs", test_util__globs},
    {"test_util__ranges_and_bytes", test_util__ranges_and_bytes},
    {"test_util__sanitize", test_util__sanitize},
    {NULL, NULL},
};
