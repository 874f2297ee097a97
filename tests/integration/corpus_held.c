/* SPDX-License-Identifier: MIT */
/*
 * Shared fixtures, judged with `scope: suite` (corpus.yaml): what a test
 * leaves that a later test or the suite cleanup frees is held by the
 * fixture and passes; what outlives the cleanup is lost and fails the test
 * that made it.  Patterns seen in real CUnit suites:
 *
 *   held_result  a static result buffer each test refills (freeing the
 *                previous one); the suite cleanup frees the last
 *   held_pdu     the suite init makes a PDU whose payload the tests grow
 *                (realloc); the cleanup frees it
 *   held_table   one test fills a table, the cleanup empties it
 *   held_lazy    a library context created on first use by a test, and
 *                freed by the library's shutdown in the suite cleanup
 *
 * With CORPUS_LEAK_BACK set, one test of each suite also loses memory (a
 * fix reverted): held_result/second, held_pdu/grow_twice, held_table/fill
 * and held_lazy/second_use, and those tests alone must fail.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "corpus.h"

#define NOINLINE __attribute__((noinline))

static bool
leak_back(void)
{
    const char *e = getenv("CORPUS_LEAK_BACK");

    return e && *e && strcmp(e, "0") != 0;
}

/* ---- held_result ---- */

static char *result;

static NOINLINE void
result_set(const char *text)
{
    char *r = malloc(strlen(text) + 1); /* MARK:held_result */

    if (r)
        strcpy(r, text);
    free(result);
    result = r;
}

static int
result_cleanup(void)
{
    free(result);
    result = NULL;
    return 0;
}

static void
test_result_first(void)
{
    result_set("first result");
    CU_ASSERT_STRING_EQUAL(result, "first result");
}

static void
test_result_second(void)
{
    result_set("the second result");
    if (leak_back())
        corpus_sink[40] = strdup(result); /* MARK:held_result_leak */
    CU_ASSERT_STRING_EQUAL(result, "the second result");
}

static void
test_result_third(void)
{
    result_set("third");
    CU_ASSERT_PTR_NOT_NULL(result);
}

/* ---- held_pdu ---- */

struct pdu {
    unsigned char *payload;
    size_t len;
};

static struct pdu *pdu;

static NOINLINE int
pdu_init(void)
{
    pdu = calloc(1, sizeof *pdu); /* MARK:held_pdu_init */
    return pdu ? 0 : 1;
}

static int
pdu_cleanup(void)
{
    if (pdu)
        free(pdu->payload);
    free(pdu);
    pdu = NULL;
    return 0;
}

static NOINLINE void
pdu_append(size_t n)
{
    unsigned char *p = realloc(pdu->payload, pdu->len + n); /* MARK:pdu */

    if (!p)
        return;
    memset(p + pdu->len, 0xab, n);
    pdu->payload = p;
    pdu->len += n;
}

static void
test_pdu_grow(void)
{
    pdu_append(100);
    CU_ASSERT_EQUAL(pdu->len, 100);
}

static void
test_pdu_grow_twice(void)
{
    pdu_append(200);
    pdu_append(300);
    if (leak_back())
        corpus_sink[41] = malloc(48); /* MARK:held_pdu_leak */
    CU_ASSERT_EQUAL(pdu->len, 600);
}

/* ---- held_table ---- */

static char *table[32];

static NOINLINE void
table_put(size_t i, const char *s)
{
    table[i] = strdup(s); /* MARK:held_table */
}

static int
table_cleanup(void)
{
    for (size_t i = 0; i < 32; i++) {
        free(table[i]);
        table[i] = NULL;
    }
    return 0;
}

static void
test_table_fill(void)
{
    for (size_t i = 0; i < 32; i++)
        table_put(i, "an entry of the shared table");
    if (leak_back())
        corpus_sink[42] = malloc(24); /* MARK:held_table_leak */
    CU_ASSERT_PTR_NOT_NULL(table[31]);
}

static void
test_table_read(void)
{
    CU_ASSERT_STRING_EQUAL(table[0], "an entry of the shared table");
}

/* ---- held_lazy ---- */

struct lib_context {
    char name[64];
    void *cache;
};

static struct lib_context *lib;

/* The library's context: made on first use, freed by lib_shutdown(). */
static NOINLINE struct lib_context *
lib_get(void)
{
    if (!lib) {
        lib = calloc(1, sizeof *lib); /* MARK:held_lazy */
        if (lib)
            lib->cache = malloc(128);
    }
    return lib;
}

static void
lib_shutdown(void)
{
    if (lib)
        free(lib->cache);
    free(lib);
    lib = NULL;
}

static int
lazy_cleanup(void)
{
    lib_shutdown();
    return 0;
}

static void
test_lazy_first_use(void)
{
    CU_ASSERT_PTR_NOT_NULL(lib_get());
}

static void
test_lazy_second_use(void)
{
    struct lib_context *c = lib_get();

    if (leak_back())
        corpus_sink[43] = malloc(sizeof *c); /* MARK:held_lazy_leak */
    CU_ASSERT_PTR_NOT_NULL(c);
}

void
corpus_register_held(void)
{
    CU_pSuite s = CU_add_suite("held_result", NULL, result_cleanup);

    CU_add_test(s, "first", test_result_first);
    CU_add_test(s, "second", test_result_second);
    CU_add_test(s, "third", test_result_third);
    s = CU_add_suite("held_pdu", pdu_init, pdu_cleanup);
    CU_add_test(s, "grow", test_pdu_grow);
    CU_add_test(s, "grow_twice", test_pdu_grow_twice);
    s = CU_add_suite("held_table", NULL, table_cleanup);
    CU_add_test(s, "fill", test_table_fill);
    CU_add_test(s, "read", test_table_read);
    s = CU_add_suite("held_lazy", NULL, lazy_cleanup);
    CU_add_test(s, "first_use", test_lazy_first_use);
    CU_add_test(s, "second_use", test_lazy_second_use);
}
