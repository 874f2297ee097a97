/* SPDX-License-Identifier: MIT */
/* The parser suite: plain CUnit tests, unchanged by leakgate. */
#include <CUnit/CUnit.h>

#include "parser.h"
#include "tests.h"

static void
test_parse_pairs(void)
{
    struct kv *kv = kv_parse("host=example.org;port=5683");

    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(kv_count(kv), 2);
    CU_ASSERT_STRING_EQUAL(kv_get(kv, "port"), "5683");
    kv_free(kv);
}

static void
test_syntax_error(void)
{
    CU_ASSERT_PTR_NULL(kv_parse("host=example.org;=nokey"));
    CU_ASSERT_PTR_NULL(kv_parse("novalue"));
}

static void
test_empty(void)
{
    struct kv *kv = kv_parse("");

    CU_ASSERT_PTR_NOT_NULL_FATAL(kv);
    CU_ASSERT_EQUAL(kv_count(kv), 0);
    kv_free(kv);
}

/* Interned names are kept on purpose: leakgate.yaml accepts this stack. */
static void
test_key_names_interned(void)
{
    const char *a = kv_key_name("timeout");

    CU_ASSERT_PTR_NOT_NULL(a);
    CU_ASSERT_PTR_EQUAL(kv_key_name("timeout"), a);
}

void
add_parser_tests(void)
{
    CU_pSuite suite = CU_add_suite("parser", NULL, NULL);

    CU_add_test(suite, "parse_pairs", test_parse_pairs);
    CU_add_test(suite, "syntax_error", test_syntax_error);
    CU_add_test(suite, "empty", test_empty);
    CU_add_test(suite, "key_names_interned", test_key_names_interned);
}
