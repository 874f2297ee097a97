/* SPDX-License-Identifier: MIT */
/*
 * ds: a small data-structure library that the benchmark's "realistic"
 * and "allocation-heavy" suites test.  A string-keyed hash table, an AVL
 * tree, a string builder and a JSON parser/serializer, with the ordinary
 * allocation patterns of such code (one node per element, growing arrays,
 * copied keys).  It allocates with malloc and knows nothing of leakgate.
 */
#ifndef DS_H
#define DS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- hash table: string keys (copied), opaque values ---- */
struct ds_hash;

struct ds_hash *ds_hash_new(size_t initial_buckets);
void ds_hash_free(struct ds_hash *h, void (*free_value)(void *));
/* Insert or replace; returns the previous value (or NULL). *ok = false on
 * allocation failure. */
void *ds_hash_put(struct ds_hash *h, const char *key, void *value, bool *ok);
void *ds_hash_get(const struct ds_hash *h, const char *key);
/* Remove key; returns its value (or NULL when absent). */
void *ds_hash_remove(struct ds_hash *h, const char *key);
size_t ds_hash_count(const struct ds_hash *h);
/* Call fn for every entry (unspecified order); stops when fn returns
 * non-zero and returns that value. */
int ds_hash_each(const struct ds_hash *h,
                 int (*fn)(const char *key, void *value, void *payload),
                 void *payload);

/* ---- AVL tree: int64 keys, opaque values ---- */
struct ds_tree;

struct ds_tree *ds_tree_new(void);
void ds_tree_free(struct ds_tree *t, void (*free_value)(void *));
/* Insert or replace; returns 0, or -1 on allocation failure. */
int ds_tree_put(struct ds_tree *t, int64_t key, void *value);
void *ds_tree_get(const struct ds_tree *t, int64_t key);
/* Remove key; returns true when it was present (*value_out = its value). */
bool ds_tree_remove(struct ds_tree *t, int64_t key, void **value_out);
size_t ds_tree_count(const struct ds_tree *t);
int ds_tree_height(const struct ds_tree *t);
/* In-order walk; stops when fn returns non-zero and returns that value. */
int ds_tree_walk(const struct ds_tree *t,
                 int (*fn)(int64_t key, void *value, void *payload),
                 void *payload);

/* ---- string builder ---- */
struct ds_sbuf;

struct ds_sbuf *ds_sbuf_new(void);
void ds_sbuf_free(struct ds_sbuf *b);
int ds_sbuf_append(struct ds_sbuf *b, const char *s, size_t n);
int ds_sbuf_puts(struct ds_sbuf *b, const char *s);
int ds_sbuf_printf(struct ds_sbuf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
const char *ds_sbuf_str(const struct ds_sbuf *b);
size_t ds_sbuf_len(const struct ds_sbuf *b);
void ds_sbuf_clear(struct ds_sbuf *b);
/* Detach the text (NUL-terminated, the caller frees it) and free b. */
char *ds_sbuf_take(struct ds_sbuf *b);

/* ---- JSON: parse into a tree of values, serialize back ---- */
enum ds_json_kind {
    DS_JSON_NULL,
    DS_JSON_BOOL,
    DS_JSON_NUMBER,
    DS_JSON_STRING,
    DS_JSON_ARRAY,
    DS_JSON_OBJECT
};

struct ds_json {
    enum ds_json_kind kind;
    bool boolean;
    double number;
    char *string;           /* DS_JSON_STRING */
    struct ds_json **items; /* DS_JSON_ARRAY, or the values of an object */
    char **keys;            /* DS_JSON_OBJECT: keys[i] names items[i] */
    size_t count;
    size_t cap;
};

/* Parse text; NULL on a syntax error (*error_pos = byte offset) or on
 * allocation failure. */
struct ds_json *ds_json_parse(const char *text, size_t *error_pos);
void ds_json_free(struct ds_json *v);
/* Serialize compactly into b; returns 0 or -1. */
int ds_json_write(struct ds_sbuf *b, const struct ds_json *v);
/* Member of an object by key, or NULL. */
const struct ds_json *ds_json_member(const struct ds_json *obj,
                                     const char *key);

#endif
