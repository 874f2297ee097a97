/* SPDX-License-Identifier: MIT */
/*
 * The "shared" suite: the failing path where it matters most.  20 tests
 * (8 with BENCH_SIZE=small) of ordinary work over the ds library (a hash
 * table, a tree, JSON documents), each a few milliseconds long, in four
 * CUnit suites of 5.  Two helpers are shared by 8 of the 20 tests:
 * label_make() (hash and json) and index_key() (tree and store).  With
 * BENCH_LEAK=1 each helper forgets one small object per call, as a
 * change to a common helper does: 40 % of the tests fail, each with one
 * leaked object.  Every test frees everything else it allocates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ds.h"

#define ROUNDS 6

/* A label for a test's work: its text goes into the caller's buffer.
 * The leaking variant forgets the scratch copy it makes. */
__attribute__((noinline)) static void
label_make(char *out, size_t size, const char *what, int n)
{
    char *scratch = malloc(24); /* BENCH-LEAK:shared-label */

    if (!scratch) {
        out[0] = '\0';
        return;
    }
    snprintf(scratch, 24, "%s-%d", what, n);
    snprintf(out, size, "%s", scratch);
    if (!bench_cfg.leak)
        free(scratch);
}

/* A key of an index, boxed; the leaking variant forgets a note of it. */
__attribute__((noinline)) static int64_t
index_key(uint64_t *rng)
{
    int64_t *note = malloc(sizeof *note); /* BENCH-LEAK:shared-key */
    int64_t key = (int64_t)(bench_rand(rng) % 200000);

    if (note)
        *note = key;
    if (!bench_cfg.leak || !note)
        free(note);
    return key;
}

static int *
boxed(int v)
{
    int *p = malloc(sizeof *p);

    if (p)
        *p = v;
    return p;
}

static size_t
elements(int n)
{
    return (bench_cfg.small ? 400 : 3000) + (size_t)((n * 37) % 500);
}

static void
work_hash(int n, bool labelled)
{
    struct ds_hash *h = ds_hash_new(16);
    size_t count = elements(n);
    char key[48], label[32];
    bool ok;

    if (labelled) {
        label_make(label, sizeof label, "hash", n);
        CU_ASSERT(strncmp(label, "hash-", 5) == 0);
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (size_t i = 0; i < count; i++) {
            snprintf(key, sizeof key, "k-%d-%d-%zu", n, round, i);
            free(ds_hash_put(h, key, boxed((int)i), &ok));
            CU_ASSERT(ok);
        }
        for (size_t i = 0; i < count; i += 2) {
            snprintf(key, sizeof key, "k-%d-%d-%zu", n, round, i);
            free(ds_hash_remove(h, key));
        }
    }
    CU_ASSERT(ds_hash_count(h) > 0);
    ds_hash_free(h, free);
}

static void
work_tree(int n, bool keyed)
{
    struct ds_tree *t = ds_tree_new();
    uint64_t rng = 0x9e3779b97f4a7c15u + (uint64_t)n;
    size_t count = elements(n) * ROUNDS;

    for (size_t i = 0; i < count; i++) {
        int64_t key = keyed && i == 0 ? index_key(&rng)
                                      : (int64_t)(bench_rand(&rng) % 200000);
        void *old = NULL;

        if (ds_tree_remove(t, key, &old))
            free(old);
        CU_ASSERT(ds_tree_put(t, key, boxed((int)i)) == 0);
    }
    CU_ASSERT(ds_tree_count(t) > 0);
    ds_tree_free(t, free);
}

static void
work_json(int n, bool labelled)
{
    struct ds_sbuf *b = ds_sbuf_new();
    char label[32] = "json";
    size_t count = elements(n);

    if (labelled)
        label_make(label, sizeof label, "json", n);
    ds_sbuf_printf(b, "{\"label\":\"%s\",\"items\":[", label);
    for (size_t i = 0; i < count; i++)
        ds_sbuf_printf(b, "%s{\"id\":%zu,\"tags\":[1,2.5,null,\"t%zu\"]}",
                       i ? "," : "", i, i);
    ds_sbuf_puts(b, "]}");
    for (int round = 0; round < ROUNDS / 2; round++) {
        struct ds_json *v = ds_json_parse(ds_sbuf_str(b), NULL);
        struct ds_sbuf *out = ds_sbuf_new();

        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        CU_ASSERT(ds_json_write(out, v) == 0);
        ds_sbuf_free(out);
        ds_json_free(v);
    }
    ds_sbuf_free(b);
}

/* Tests 0-1 of each suite use a shared helper (8 of 20), 2-4 do not. */
#define USES_HELPER(n) ((n) < 2)

static void
case_hash(int n)
{
    work_hash(n, USES_HELPER(n));
}
static void
case_tree(int n)
{
    work_tree(n, USES_HELPER(n));
}
static void
case_json(int n)
{
    work_json(n, USES_HELPER(n));
}
static void
case_store(int n)
{
    uint64_t rng = 7u + (uint64_t)n;

    if (USES_HELPER(n))
        CU_ASSERT(index_key(&rng) >= 0);
    work_hash(n + 100, false);
    work_tree(n + 100, false);
}

#define FN(kind, n)                                                            \
    static void test_##kind##_##n(void)                                        \
    {                                                                          \
        case_##kind(n);                                                        \
    }
#define FNS(kind) FN(kind, 0) FN(kind, 1) FN(kind, 2) FN(kind, 3) FN(kind, 4)
FNS(hash)
FNS(tree)
FNS(json)
FNS(store)

#define ENTRY(kind, n) {"case_" #n, test_##kind##_##n},
#define ENTRIES(kind)                                                          \
    {                                                                          \
        ENTRY(kind, 0)                                                         \
        ENTRY(kind, 1) ENTRY(kind, 2) ENTRY(kind, 3) ENTRY(kind, 4)            \
    }
static const struct bench_test hash_tests[] = ENTRIES(hash);
static const struct bench_test tree_tests[] = ENTRIES(tree);
static const struct bench_test json_tests[] = ENTRIES(json);
static const struct bench_test store_tests[] = ENTRIES(store);

int
bench_register(const struct bench_config *cfg)
{
    size_t n = cfg->small ? 2 : 5;

    if (!bench_add_suite("hash", NULL, NULL, hash_tests, n) ||
        !bench_add_suite("tree", NULL, NULL, tree_tests, n) ||
        !bench_add_suite("json", NULL, NULL, json_tests, n) ||
        !bench_add_suite("store", NULL, NULL, store_tests, n))
        return -1;
    return 0;
}
