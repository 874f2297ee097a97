/* SPDX-License-Identifier: MIT */
/*
 * fuzz_json: libFuzzer harness for the JSON reader of result files
 * (leakgate_json__parse and its accessors).  Seeds: real result files
 * written by the gate (tests/fuzz/corpus/json).
 *
 * Properties checked, beyond "no crash, no leak, no undefined behaviour":
 * - a failure returns EFORMAT, ETOOBIG or ENOMEM, leaves *out NULL and a
 *   detail that names the input;
 * - a parsed tree is well formed: object members have keys, array items
 *   do not, no object has a key twice (leakgate_json__get finds each
 *   member), strings have no NUL inside, nesting is within the limit;
 * - with tighter limits the same text fails with ETOOBIG or parses to a
 *   tree of the same size;
 * - every decoded string, written back with leakgate_buf__put_json (what
 *   report.c writes results with), reads back to the same bytes.
 */
#include "fuzz.h"

#include <string.h>

#include "error.h"
#include "json.h"
#include "util.h"

#define NAME "fuzz.json"

static void
check_failure(int err, const struct leakgate_json *root)
{
    FUZZ_CHECK(err == LEAKGATE_EFORMAT || err == LEAKGATE_ETOOBIG ||
               err == LEAKGATE_ENOMEM);
    FUZZ_CHECK(root == NULL);
    FUZZ_CHECK(strncmp(leakgate_error_last(), NAME, strlen(NAME)) == 0);
}

/* The string s written by put_json reads back as s. */
static void
check_round_trip(const char *s, size_t len)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    struct leakgate_json *v = NULL;

    leakgate_buf__puts(&b, "\"");
    leakgate_buf__put_json(&b, s);
    leakgate_buf__puts(&b, "\"");
    FUZZ_CHECK(!b.failed);
    FUZZ_CHECK(leakgate_json__parse(&v, b.ptr, b.len, "rt", NULL) == 0);
    FUZZ_CHECK(v->type == LEAKGATE_JSON_STRING && v->len == len);
    FUZZ_CHECK(memcmp(v->text, s, len) == 0);
    leakgate_json__free(v);
    leakgate_buf__dispose(&b);
}

static void
check_scalar(const struct leakgate_json *v)
{
    int64_t i;
    double d;

    FUZZ_CHECK(leakgate_json__type_name(v) != NULL);
    if (v->type == LEAKGATE_JSON_STRING) {
        FUZZ_CHECK(v->text && strlen(v->text) == v->len);
        check_round_trip(v->text, v->len);
    } else if (v->type == LEAKGATE_JSON_NUMBER) {
        FUZZ_CHECK(v->text != NULL);
        /* An integer that fits in int64_t is also a finite double. */
        FUZZ_CHECK(!leakgate_json__int(&i, v) || leakgate_json__double(&d, v));
    } else {
        FUZZ_CHECK(!leakgate_json__int(&i, v));
        FUZZ_CHECK(!leakgate_json__double(&d, v));
    }
}

/* Walk the tree below `open` enclosing arrays and objects; returns the
 * number of values in it. */
static size_t
check_tree(const struct leakgate_json *v, size_t open)
{
    size_t count = 1;

    if (v->type != LEAKGATE_JSON_ARRAY && v->type != LEAKGATE_JSON_OBJECT) {
        FUZZ_CHECK(v->n == 0);
        check_scalar(v);
        return count;
    }
    FUZZ_CHECK(open + 1 <= 64); /* the default max_depth */
    for (size_t i = 0; i < v->n; i++) {
        const struct leakgate_json *item = &v->items[i];

        if (v->type == LEAKGATE_JSON_OBJECT) {
            FUZZ_CHECK(item->key != NULL);
            FUZZ_CHECK(leakgate_json__get(v, item->key) == item);
            check_round_trip(item->key, strlen(item->key));
        } else {
            FUZZ_CHECK(item->key == NULL);
        }
        count += check_tree(item, open + 1);
    }
    return count;
}

/* Tighter limits: ETOOBIG or a tree of the same size. */
static void
check_tight(const uint8_t *data, size_t size, size_t count)
{
    static const struct leakgate_json_limits tight = {0, 4, 16, 64};
    struct leakgate_json *t = NULL;
    int err = leakgate_json__parse(&t, (const char *)data, size, NAME, &tight);

    if (err) {
        FUZZ_CHECK(err == LEAKGATE_ETOOBIG);
        FUZZ_CHECK(t == NULL);
        return;
    }
    FUZZ_CHECK(check_tree(t, 0) == count);
    leakgate_json__free(t);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct leakgate_json *root = NULL;
    int err = leakgate_json__parse(&root, (const char *)data, size, NAME, NULL);
    size_t count;

    if (err) {
        check_failure(err, root);
        return 0;
    }
    FUZZ_CHECK(root != NULL);
    count = check_tree(root, 0);
    check_tight(data, size, count);
    leakgate_json__free(root);
    return 0;
}
