/* SPDX-License-Identifier: MIT */
/*
 * The "realistic" suite: 300 tests (40 with BENCH_SIZE=small) over the ds
 * library, five CUnit suites of 60, each with a fixture built by setUp
 * and destroyed by tearDown.  Test n works on 100 + (n * 53) % 900
 * elements.  Every test frees what it allocates.  With BENCH_LEAK=1,
 * sbuf/leak forgets one string builder (two objects).
 *
 * With BENCH_ACCEPT=1, the accepted-growth variant: every 20th test
 * (case_0, case_20 and case_40 of each suite: 5 % of the tests) also
 * interns its name in a process-wide table that is never freed, growth
 * that tests/bench/accepted.yaml accepts; and tree/case_1 builds its
 * tree in a thread it starts and joins (glibc keeps the thread's
 * descriptor: growth the built-in ignore list covers).  Every gate must
 * pass it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "ds.h"

static struct {
    struct ds_hash *hash;
    struct ds_tree *tree;
    struct ds_sbuf *sbuf;
} fx;

static size_t
elements(int n)
{
    return 100 + (size_t)((n * 53) % 900);
}

/* ---- the accepted-growth variant ---- */

/* A process-wide table of interned names, never freed (as a program's
 * symbol table or a registry of types): the first use of a name keeps
 * one object. */
struct interned {
    struct interned *next;
    char name[];
};
static struct interned *interned;

__attribute__((noinline)) static const char *
intern(const char *name)
{
    struct interned *p;
    size_t len = strlen(name);

    for (p = interned; p; p = p->next) {
        if (strcmp(p->name, name) == 0)
            return p->name;
    }
    p = malloc(sizeof *p + len + 1); /* BENCH-ACCEPT:intern */
    if (!p)
        return NULL;
    memcpy(p->name, name, len + 1);
    p->next = interned;
    interned = p;
    return p->name;
}

/* Every 20th test of a suite keeps its interned name. */
static void
keep_name(const char *suite, int n)
{
    char name[32];

    if (!bench_cfg.accept || n % 20 != 0)
        return;
    snprintf(name, sizeof name, "%s/case_%d", suite, n);
    CU_ASSERT_PTR_NOT_NULL(intern(name));
}

static void
fx_setup(void)
{
    fx.hash = ds_hash_new(16);
    fx.tree = ds_tree_new();
    fx.sbuf = ds_sbuf_new();
}

static void
fx_teardown(void)
{
    ds_hash_free(fx.hash, free);
    ds_tree_free(fx.tree, free);
    ds_sbuf_free(fx.sbuf);
    memset(&fx, 0, sizeof fx);
}

static int *
boxed(int v)
{
    int *p = malloc(sizeof *p);

    if (p)
        *p = v;
    return p;
}

/* ---- hash: insert, look up, remove half, replace some ---- */
static void
case_hash(int n)
{
    size_t count = elements(n);
    char key[32];
    bool ok;

    keep_name("hash", n);

    for (size_t i = 0; i < count; i++) {
        snprintf(key, sizeof key, "key-%d-%zu", n, i);
        CU_ASSERT_PTR_NULL(ds_hash_put(fx.hash, key, boxed((int)i), &ok));
        CU_ASSERT(ok);
    }
    CU_ASSERT_EQUAL(ds_hash_count(fx.hash), count);
    for (size_t i = 0; i < count; i += 2) {
        snprintf(key, sizeof key, "key-%d-%zu", n, i);
        free(ds_hash_remove(fx.hash, key));
    }
    for (size_t i = 1; i < count; i += 4) {
        int *v;

        snprintf(key, sizeof key, "key-%d-%zu", n, i);
        v = ds_hash_get(fx.hash, key);
        CU_ASSERT(v && *v == (int)i);
        free(ds_hash_put(fx.hash, key, boxed(-(int)i), &ok));
    }
    CU_ASSERT_EQUAL(ds_hash_count(fx.hash), count / 2);
}

/* ---- tree: random keys, remove a third, check order and balance ---- */

/* tree/case_1 of the accepted variant builds a tree in a worker thread
 * too: the first thread the process starts. */
struct tree_job {
    size_t count;  /* keys to insert */
    uint64_t seed; /* of the keys */
    size_t kept;   /* distinct keys: the result */
};

static void *
tree_worker(void *payload)
{
    struct tree_job *job = payload;
    struct ds_tree *t = ds_tree_new();
    uint64_t rng = job->seed;

    for (size_t i = 0; t && i < job->count; i++) {
        int64_t key = (int64_t)(bench_rand(&rng) % 100000);
        int *old = ds_tree_get(t, key);

        if (ds_tree_put(t, key, boxed((int)i)) == 0)
            free(old);
    }
    job->kept = t ? ds_tree_count(t) : 0;
    ds_tree_free(t, free);
    return NULL;
}

static void
tree_in_thread(size_t count, uint64_t seed)
{
    struct tree_job job = {count, seed, 0};
    pthread_t thread;

    if (pthread_create(&thread, NULL, tree_worker, &job) != 0) {
        CU_FAIL("pthread_create failed");
        return;
    }
    CU_ASSERT_EQUAL(pthread_join(thread, NULL), 0);
    CU_ASSERT(job.kept > 0 && job.kept <= count);
}

static int
check_order(int64_t key, void *value, void *payload)
{
    int64_t *last = payload;

    if (key <= *last || !value)
        return 1;
    *last = key;
    return 0;
}

static void
case_tree(int n)
{
    size_t count = elements(n), removed = 0;
    uint64_t rng = 0x9e3779b97f4a7c15u + (uint64_t)n;
    int64_t last = -1;

    keep_name("tree", n);
    if (bench_cfg.accept && n == 1)
        tree_in_thread(count, rng);

    for (size_t i = 0; i < count; i++) {
        int64_t key = (int64_t)(bench_rand(&rng) % 100000);
        int *old = ds_tree_get(fx.tree, key);

        CU_ASSERT(ds_tree_put(fx.tree, key, boxed((int)i)) == 0);
        free(old);
    }
    for (int64_t key = 0; key < 100000; key += 3) {
        void *v = NULL;

        if (ds_tree_remove(fx.tree, key, &v)) {
            free(v);
            removed++;
        }
    }
    CU_ASSERT(removed <= count);
    CU_ASSERT_EQUAL(ds_tree_walk(fx.tree, check_order, &last), 0);
    CU_ASSERT(ds_tree_height(fx.tree) <= 2 * 11);
}

/* ---- sbuf: formatted lines, take, compare ---- */
static void
case_sbuf(int n)
{
    size_t count = elements(n);
    struct ds_sbuf *line = ds_sbuf_new();
    char *text;

    keep_name("sbuf", n);

    for (size_t i = 0; i < count; i++) {
        ds_sbuf_clear(line);
        CU_ASSERT(ds_sbuf_printf(line, "%zu:%d;", i, n) == 0);
        CU_ASSERT(
            ds_sbuf_append(fx.sbuf, ds_sbuf_str(line), ds_sbuf_len(line)) == 0);
    }
    ds_sbuf_free(line);
    text = ds_sbuf_take(fx.sbuf);
    fx.sbuf = ds_sbuf_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT(strncmp(text, "0:", 2) == 0);
    CU_ASSERT(strlen(text) > count * 4);
    free(text);
}

/* ---- json: build a document, parse, serialize, parse again ---- */
static char *
make_document(int n, size_t count)
{
    struct ds_sbuf *b = ds_sbuf_new();

    ds_sbuf_printf(b, "{\"suite\":\"json\",\"n\":%d,\"items\":[", n);
    for (size_t i = 0; i < count / 4; i++)
        ds_sbuf_printf(b,
                       "%s{\"id\":%zu,\"name\":\"item\\t%zu\",\"ok\":%s,"
                       "\"tags\":[1,2.5,null]}",
                       i ? "," : "", i, i, i % 2 ? "true" : "false");
    ds_sbuf_puts(b, "]}");
    return ds_sbuf_take(b);
}

static void
case_json(int n)
{
    char *doc = make_document(n, elements(n));
    struct ds_json *v = ds_json_parse(doc, NULL), *again;
    const struct ds_json *items;

    keep_name("json", n);

    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    items = ds_json_member(v, "items");
    CU_ASSERT(items && items->count == elements(n) / 4);
    CU_ASSERT(ds_json_write(fx.sbuf, v) == 0);
    again = ds_json_parse(ds_sbuf_str(fx.sbuf), NULL);
    CU_ASSERT_PTR_NOT_NULL(again);
    ds_json_free(again);
    ds_json_free(v);
    free(doc);
}

/* ---- store: records parsed from JSON, indexed by name and by id ---- */
static void
case_store(int n)
{
    char *doc = make_document(n, elements(n));
    struct ds_json *v = ds_json_parse(doc, NULL);
    const struct ds_json *items;
    bool ok = true;

    keep_name("store", n);

    CU_ASSERT_PTR_NOT_NULL_FATAL(v);
    items = ds_json_member(v, "items");
    for (size_t i = 0; items && i < items->count; i++) {
        const struct ds_json *id = ds_json_member(items->items[i], "id");
        const struct ds_json *name = ds_json_member(items->items[i], "name");

        CU_ASSERT_FATAL(id && name);
        ds_hash_put(fx.hash, name->string, boxed((int)id->number), &ok);
        CU_ASSERT(ok);
        ds_tree_put(fx.tree, (int64_t)id->number, boxed((int)i));
    }
    for (size_t i = 0; items && i < items->count; i++)
        ds_sbuf_printf(fx.sbuf, "%d\n",
                       *(int *)ds_tree_get(fx.tree, (int64_t)i));
    CU_ASSERT_EQUAL(ds_tree_count(fx.tree), ds_hash_count(fx.hash));
    ds_json_free(v);
    free(doc);
}

#define HASH_FN(n)                                                             \
    static void test_hash_##n(void)                                            \
    {                                                                          \
        case_hash(n);                                                          \
    }
#define TREE_FN(n)                                                             \
    static void test_tree_##n(void)                                            \
    {                                                                          \
        case_tree(n);                                                          \
    }
#define SBUF_FN(n)                                                             \
    static void test_sbuf_##n(void)                                            \
    {                                                                          \
        case_sbuf(n);                                                          \
    }
#define JSON_FN(n)                                                             \
    static void test_json_##n(void)                                            \
    {                                                                          \
        case_json(n);                                                          \
    }
#define STORE_FN(n)                                                            \
    static void test_store_##n(void)                                           \
    {                                                                          \
        case_store(n);                                                         \
    }
BENCH_REP60(HASH_FN)
BENCH_REP60(TREE_FN)
BENCH_REP60(SBUF_FN)
BENCH_REP60(JSON_FN)
BENCH_REP60(STORE_FN)

#define HASH_ENTRY(n) {"case_" #n, test_hash_##n},
#define TREE_ENTRY(n) {"case_" #n, test_tree_##n},
#define SBUF_ENTRY(n) {"case_" #n, test_sbuf_##n},
#define JSON_ENTRY(n) {"case_" #n, test_json_##n},
#define STORE_ENTRY(n) {"case_" #n, test_store_##n},
static const struct bench_test hash_tests[] = {BENCH_REP60(HASH_ENTRY)};
static const struct bench_test tree_tests[] = {BENCH_REP60(TREE_ENTRY)};
static const struct bench_test sbuf_tests[] = {BENCH_REP60(SBUF_ENTRY)};
static const struct bench_test json_tests[] = {BENCH_REP60(JSON_ENTRY)};
static const struct bench_test store_tests[] = {BENCH_REP60(STORE_ENTRY)};

/* The deliberate leak: a string builder that is never freed. */
static void
test_sbuf_leak(void)
{
    struct ds_sbuf *b = ds_sbuf_new();     /* BENCH-LEAK:realistic-new */
    int rc = ds_sbuf_puts(b, "forgotten"); /* BENCH-LEAK:realistic-puts */

    CU_ASSERT(rc == 0);
}

int
bench_register(const struct bench_config *cfg)
{
    size_t n = cfg->small ? 8 : 60;
    CU_pSuite sbuf;

    if (!bench_add_suite("hash", fx_setup, fx_teardown, hash_tests, n) ||
        !bench_add_suite("tree", fx_setup, fx_teardown, tree_tests, n) ||
        !bench_add_suite("json", fx_setup, fx_teardown, json_tests, n) ||
        !bench_add_suite("store", fx_setup, fx_teardown, store_tests, n))
        return -1;
    sbuf = bench_add_suite("sbuf", fx_setup, fx_teardown, sbuf_tests, n);
    if (!sbuf)
        return -1;
    if (cfg->leak && !CU_add_test(sbuf, "leak", test_sbuf_leak))
        return -1;
    return 0;
}
