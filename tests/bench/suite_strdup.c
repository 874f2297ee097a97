/* SPDX-License-Identifier: MIT */
/*
 * The "strdup-heavy" suite: 200 tests (40 with BENCH_SIZE=small), five
 * CUnit suites of 40, over a symbol table whose keys and values the C
 * library allocates: every key is a strdup() or strndup() copy, values are
 * asprintf() strings, and the input is read with getline() from an
 * fmemopen() stream.  Most of the program's allocations have the C
 * library as their immediate caller, as in code that leans on strdup and
 * asprintf (the allocations the fast pass must not unwind one by one).
 * Every test frees what it allocates.  With BENCH_LEAK=1, strdup/leak
 * forgets one strdup() copy.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* A chained hash table of C-library strings. */
struct sym {
    struct sym *next;
    char *key;   /* strdup or strndup */
    char *value; /* asprintf */
};

struct symtab {
    struct sym **buckets;
    size_t nbuckets;
    size_t count;
};

static uint64_t
hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static struct symtab *
symtab_new(size_t nbuckets)
{
    struct symtab *t = malloc(sizeof *t);

    if (!t)
        return NULL;
    t->buckets = calloc(nbuckets, sizeof *t->buckets);
    t->nbuckets = nbuckets;
    t->count = 0;
    if (!t->buckets) {
        free(t);
        return NULL;
    }
    return t;
}

static void
symtab_free(struct symtab *t)
{
    for (size_t i = 0; t && i < t->nbuckets; i++) {
        struct sym *s = t->buckets[i], *next;

        for (; s; s = next) {
            next = s->next;
            free(s->key);
            free(s->value);
            free(s);
        }
    }
    if (t)
        free(t->buckets);
    free(t);
}

/* Set key (copied with strndup, n bytes) to a formatted value. */
static int
symtab_set(struct symtab *t, const char *key, size_t n, long v)
{
    char *k = strndup(key, n);
    struct sym **at, *s;

    if (!k)
        return -1;
    at = &t->buckets[hash_str(k) % t->nbuckets];
    for (s = *at; s; s = s->next) {
        if (strcmp(s->key, k) == 0)
            break;
    }
    if (s) {
        free(k);
        free(s->value);
    } else {
        s = malloc(sizeof *s);
        if (!s) {
            free(k);
            return -1;
        }
        s->key = k;
        s->next = *at;
        *at = s;
        t->count++;
    }
    if (asprintf(&s->value, "%s=%ld", s->key, v) < 0) {
        s->value = NULL;
        return -1;
    }
    return 0;
}

static const char *
symtab_get(const struct symtab *t, const char *key)
{
    const struct sym *s = t->buckets[hash_str(key) % t->nbuckets];

    for (; s; s = s->next) {
        if (strcmp(s->key, key) == 0)
            return s->value;
    }
    return NULL;
}

/* The test's input: n lines "name_<i> <i * 7>". */
static char *
make_input(int n, size_t *len)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);

    if (!f)
        return NULL;
    for (int i = 0; i < n; i++)
        fprintf(f, "name_%d %d\n", i, i * 7);
    fclose(f);
    *len = size;
    return text;
}

static size_t
entries(int n)
{
    return 300 + (size_t)((n * 37) % 900);
}

/* Parse the input with getline, fill the table, look every key up through
 * a strdup'd copy, replace every third value, check the count. */
static void
run_case(int n)
{
    size_t len = 0, cap = 0, want = entries(n);
    char *input = make_input((int)want, &len), *line = NULL;
    struct symtab *t = symtab_new(64);
    FILE *in = input ? fmemopen(input, len, "r") : NULL;
    size_t lines = 0, found = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(in);
    while (getline(&line, &cap, in) > 0) {
        char *space = strchr(line, ' ');

        if (!space)
            continue;
        CU_ASSERT(symtab_set(t, line, (size_t)(space - line),
                             strtol(space + 1, NULL, 10)) == 0);
        lines++;
    }
    fclose(in);
    for (size_t i = 0; i < lines; i++) {
        char key[32], *copy;

        snprintf(key, sizeof key, "name_%zu", i);
        copy = strdup(key);
        if (copy && symtab_get(t, copy))
            found++;
        if (copy && i % 3 == 0)
            CU_ASSERT(symtab_set(t, copy, strlen(copy), (long)i) == 0);
        free(copy);
    }
    CU_ASSERT_EQUAL(lines, want);
    CU_ASSERT_EQUAL(found, want);
    CU_ASSERT_EQUAL(t->count, want);
    free(line);
    free(input);
    symtab_free(t);
}

#define CASE(n)                                                                \
    static void test_case_##n(void)                                            \
    {                                                                          \
        run_case(n);                                                           \
    }
BENCH_REP10(CASE, )
BENCH_REP10(CASE, 1)
BENCH_REP10(CASE, 2)
BENCH_REP10(CASE, 3)
#undef CASE

static void
test_leak(void)
{
    char *volatile kept = strdup("strdup/leak"); /* BENCH-LEAK:strdup */

    CU_ASSERT_PTR_NOT_NULL(kept);
}

#define ENTRY(n) {"case_" #n, test_case_##n},
/* clang-format off */
static const struct bench_test tests[] = {
    BENCH_REP10(ENTRY, ) BENCH_REP10(ENTRY, 1)
    BENCH_REP10(ENTRY, 2) BENCH_REP10(ENTRY, 3)
};
/* clang-format on */
#undef ENTRY

int
bench_register(const struct bench_config *cfg)
{
    static const char *const names[] = {"strdup", "symtab", "getline",
                                        "asprintf", "strndup"};
    size_t n = cfg->small ? 8 : sizeof tests / sizeof tests[0];

    for (size_t s = 0; s < sizeof names / sizeof names[0]; s++) {
        CU_pSuite suite = bench_add_suite(names[s], NULL, NULL, tests, n);

        if (!suite)
            return -1;
        if (s == 0 && cfg->leak && !CU_add_test(suite, "leak", test_leak))
            return -1;
    }
    return 0;
}
