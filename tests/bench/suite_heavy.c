/* SPDX-License-Identifier: MIT */
/*
 * The "allocation-heavy" suite: six tests doing 10^5 to 10^6 allocations
 * each (1/50 of that with BENCH_SIZE=small) from 10 to 30 frames below
 * the test, each leaving 20,000 to 100,000 small objects alive when its
 * work is done; tearDown frees them.  With BENCH_LEAK=1, heavy/leak
 * churns like heavy/churn and loses one 20-byte object 20 frames down.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ds.h"

static struct {
    void **kept; /* raw objects freed by tearDown */
    size_t nkept;
    size_t cap;
    struct ds_tree *tree;
    struct ds_hash *hash;
    struct ds_json *doc;
    struct ds_sbuf **bufs;
    size_t nbufs;
} fx;

static size_t
scaled(size_t full)
{
    return bench_cfg.small ? full / 50 : full;
}

static void
keep(void *p)
{
    if (fx.nkept == fx.cap) {
        size_t cap = fx.cap ? fx.cap * 2 : 1024;
        void **k = realloc(fx.kept, cap * sizeof *k);

        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        fx.kept = k;
        fx.cap = cap;
    }
    fx.kept[fx.nkept++] = p;
}

static void
heavy_setup(void)
{
    memset(&fx, 0, sizeof fx);
}

static void
heavy_teardown(void)
{
    for (size_t i = 0; i < fx.nkept; i++)
        free(fx.kept[i]);
    free(fx.kept);
    ds_tree_free(fx.tree, free);
    ds_hash_free(fx.hash, free);
    ds_json_free(fx.doc);
    for (size_t i = 0; i < fx.nbufs; i++)
        ds_sbuf_free(fx.bufs[i]);
    free(fx.bufs);
    memset(&fx, 0, sizeof fx);
}

/* ---- churn: malloc/free of 16..64 bytes, every 40th kept ---- */
static void
churn(void *payload)
{
    size_t n = *(size_t *)payload;
    uint64_t rng = 42;

    for (size_t i = 0; i < n; i++) {
        size_t size = 16 + (size_t)(bench_rand(&rng) % 49);
        char *p = malloc(size);

        CU_ASSERT_PTR_NOT_NULL_FATAL(p);
        memset(p, (int)i, size);
        if (i % 40 == 0)
            keep(p);
        else
            free(p);
    }
}

static void
test_churn(void)
{
    size_t n = scaled(1000000);

    bench_descend(20, churn, &n);
    CU_ASSERT_EQUAL(fx.nkept, (n + 39) / 40);
}

/* ---- tree: 100,000 inserts, 80,000 removals ---- */
static void
tree_bulk(void *payload)
{
    size_t n = *(size_t *)payload;

    fx.tree = ds_tree_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(fx.tree);
    for (size_t i = 0; i < n; i++) {
        int64_t *v = malloc(sizeof *v);

        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        *v = (int64_t)i;
        CU_ASSERT(ds_tree_put(fx.tree, (int64_t)(i * 7919 % n), v) == 0);
    }
    for (size_t i = 0; i < n; i++) {
        void *v;

        if (i % 5 != 0 && ds_tree_remove(fx.tree, (int64_t)i, &v))
            free(v);
    }
}

static void
test_tree_bulk(void)
{
    size_t n = scaled(100000);

    bench_descend(12, tree_bulk, &n);
    CU_ASSERT_EQUAL(ds_tree_count(fx.tree), (n + 4) / 5);
}

/* ---- hash: 300,000 put/remove cycles over 20,000 live keys ---- */
static void
hash_churn(void *payload)
{
    size_t n = *(size_t *)payload, live = n / 15;
    char key[32];
    bool ok;

    fx.hash = ds_hash_new(16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fx.hash);
    for (size_t i = 0; i < n; i++) {
        int *v = malloc(sizeof *v);

        CU_ASSERT_PTR_NOT_NULL_FATAL(v);
        *v = (int)i;
        snprintf(key, sizeof key, "k%zu", i);
        free(ds_hash_put(fx.hash, key, v, &ok));
        if (i >= live) {
            snprintf(key, sizeof key, "k%zu", i - live);
            free(ds_hash_remove(fx.hash, key));
        }
    }
}

static void
test_hash_churn(void)
{
    size_t n = scaled(300000);

    bench_descend(15, hash_churn, &n);
    CU_ASSERT_EQUAL(ds_hash_count(fx.hash), n / 15);
}

/* ---- json: a document of 8,000 records parsed and kept ---- */
static void
json_doc(void *payload)
{
    size_t n = *(size_t *)payload;
    struct ds_sbuf *b = ds_sbuf_new();
    char *text;

    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    ds_sbuf_puts(b, "[");
    for (size_t i = 0; i < n; i++)
        ds_sbuf_printf(b, "%s{\"id\":%zu,\"name\":\"rec%zu\",\"v\":[%zu,true]}",
                       i ? "," : "", i, i, i * 3);
    ds_sbuf_puts(b, "]");
    text = ds_sbuf_take(b);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    fx.doc = ds_json_parse(text, NULL);
    free(text);
}

static void
test_json_doc(void)
{
    size_t n = scaled(8000);

    bench_descend(25, json_doc, &n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fx.doc);
    CU_ASSERT_EQUAL(fx.doc->count, n);
}

/* ---- realloc: 20,000 string builders grown by appends, half kept ---- */
static void
realloc_grow(void *payload)
{
    size_t n = *(size_t *)payload;

    fx.bufs = calloc(n, sizeof *fx.bufs);
    CU_ASSERT_PTR_NOT_NULL_FATAL(fx.bufs);
    for (size_t i = 0; i < n; i++) {
        struct ds_sbuf *b = ds_sbuf_new();

        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        for (size_t j = 0; j < 20; j++)
            ds_sbuf_printf(b, "%zu-%zu,", i, j);
        if (i % 2 == 0)
            fx.bufs[fx.nbufs++] = b;
        else
            ds_sbuf_free(b);
    }
}

static void
test_realloc_grow(void)
{
    size_t n = scaled(20000);

    bench_descend(30, realloc_grow, &n);
    CU_ASSERT_EQUAL(fx.nbufs, n / 2);
}

/* ---- mix: calloc/realloc/free at depths 10..30 ---- */
static void
mix_step(void *payload)
{
    uint64_t *rng = payload;
    size_t size = 8 + (size_t)(bench_rand(rng) % 120);
    char *p = calloc(1, size);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p = realloc(p, size * 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    if (bench_rand(rng) % 25 == 0)
        keep(p);
    else
        free(p);
}

static void
test_calloc_mix(void)
{
    size_t n = scaled(500000);
    uint64_t rng = 7;

    for (size_t i = 0; i < n; i++)
        bench_descend(10 + (int)(i % 21), mix_step, &rng);
    CU_ASSERT(fx.nkept > 0);
}

/* ---- the deliberate leak: one object lost in a churn ---- */
static void
lose_one(void *payload)
{
    char *volatile p = malloc(20); /* BENCH-LEAK:heavy */

    (void)payload;
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    p[0] = 'x';
}

static void
test_leak(void)
{
    size_t n = scaled(100000);

    bench_descend(20, churn, &n);
    bench_descend(20, lose_one, NULL); /* BENCH-LEAK:heavy-call */
}

static const struct bench_test tests[] = {
    {"churn", test_churn},
    {"tree_bulk", test_tree_bulk},
    {"hash_churn", test_hash_churn},
    {"json_doc", test_json_doc},
    {"realloc_grow", test_realloc_grow},
    {"calloc_mix", test_calloc_mix},
};

int
bench_register(const struct bench_config *cfg)
{
    CU_pSuite s = bench_add_suite("heavy", heavy_setup, heavy_teardown, tests,
                                  sizeof tests / sizeof tests[0]);

    if (!s)
        return -1;
    if (cfg->leak && !CU_add_test(s, "leak", test_leak))
        return -1;
    return 0;
}
