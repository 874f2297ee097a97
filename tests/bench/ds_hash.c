/* SPDX-License-Identifier: MIT */
/*
 * ds_hash: separate chaining with FNV-1a, doubling when the load factor
 * passes 1.  Keys are copied into their entry; values are borrowed.
 */
#include <stdlib.h>
#include <string.h>

#include "ds.h"

struct entry {
    struct entry *next;
    uint64_t hash;
    void *value;
    char *key;
};

struct ds_hash {
    struct entry **buckets;
    size_t nbuckets; /* a power of two */
    size_t count;
};

static uint64_t
fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603u;

    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211u;
    }
    return h;
}

struct ds_hash *
ds_hash_new(size_t initial_buckets)
{
    struct ds_hash *h = malloc(sizeof *h);
    size_t n = 8;

    if (!h)
        return NULL;
    while (n < initial_buckets)
        n *= 2;
    h->buckets = calloc(n, sizeof *h->buckets);
    if (!h->buckets) {
        free(h);
        return NULL;
    }
    h->nbuckets = n;
    h->count = 0;
    return h;
}

void
ds_hash_free(struct ds_hash *h, void (*free_value)(void *))
{
    if (!h)
        return;
    for (size_t i = 0; i < h->nbuckets; i++) {
        struct entry *e = h->buckets[i];

        while (e) {
            struct entry *next = e->next;

            if (free_value)
                free_value(e->value);
            free(e->key);
            free(e);
            e = next;
        }
    }
    free(h->buckets);
    free(h);
}

static int
grow(struct ds_hash *h)
{
    size_t n = h->nbuckets * 2;
    struct entry **b = calloc(n, sizeof *b);

    if (!b)
        return -1;
    for (size_t i = 0; i < h->nbuckets; i++) {
        struct entry *e = h->buckets[i];

        while (e) {
            struct entry *next = e->next;
            size_t j = (size_t)(e->hash & (n - 1));

            e->next = b[j];
            b[j] = e;
            e = next;
        }
    }
    free(h->buckets);
    h->buckets = b;
    h->nbuckets = n;
    return 0;
}

static struct entry **
find_slot(const struct ds_hash *h, const char *key, uint64_t hash)
{
    struct entry **p = &h->buckets[hash & (h->nbuckets - 1)];

    while (*p && ((*p)->hash != hash || strcmp((*p)->key, key) != 0))
        p = &(*p)->next;
    return p;
}

static struct entry *
new_entry(const char *key, uint64_t hash, void *value)
{
    size_t len = strlen(key);
    struct entry *e = malloc(sizeof *e);

    if (!e)
        return NULL;
    e->key = malloc(len + 1);
    if (!e->key) {
        free(e);
        return NULL;
    }
    memcpy(e->key, key, len + 1);
    e->hash = hash;
    e->value = value;
    e->next = NULL;
    return e;
}

void *
ds_hash_put(struct ds_hash *h, const char *key, void *value, bool *ok)
{
    uint64_t hash = fnv1a(key);
    struct entry **slot = find_slot(h, key, hash);
    void *old;

    *ok = true;
    if (*slot) {
        old = (*slot)->value;
        (*slot)->value = value;
        return old;
    }
    if (h->count >= h->nbuckets) {
        if (grow(h) != 0) {
            *ok = false;
            return NULL;
        }
        slot = find_slot(h, key, hash);
    }
    *slot = new_entry(key, hash, value);
    if (!*slot) {
        *ok = false;
        return NULL;
    }
    h->count++;
    return NULL;
}

void *
ds_hash_get(const struct ds_hash *h, const char *key)
{
    struct entry **slot = find_slot(h, key, fnv1a(key));

    return *slot ? (*slot)->value : NULL;
}

void *
ds_hash_remove(struct ds_hash *h, const char *key)
{
    struct entry **slot = find_slot(h, key, fnv1a(key));
    struct entry *e = *slot;
    void *value;

    if (!e)
        return NULL;
    *slot = e->next;
    value = e->value;
    free(e->key);
    free(e);
    h->count--;
    return value;
}

size_t
ds_hash_count(const struct ds_hash *h)
{
    return h->count;
}

int
ds_hash_each(const struct ds_hash *h,
             int (*fn)(const char *key, void *value, void *payload),
             void *payload)
{
    for (size_t i = 0; i < h->nbuckets; i++) {
        for (const struct entry *e = h->buckets[i]; e; e = e->next) {
            int rc = fn(e->key, e->value, payload);

            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
