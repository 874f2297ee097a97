/* SPDX-License-Identifier: MIT */
/* strtab: chained hash table of owned strings; grows at load factor 1. */
#include "strtab.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct entry {
    struct entry *next;
    char *text;
};

struct strtab {
    struct entry **buckets;
    size_t nbuckets;
    size_t count;
};

static size_t
hash(const char *s)
{
    uint64_t h = 1469598103934665603u;

    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return (size_t)h;
}

struct strtab *
strtab_new(void)
{
    struct strtab *tab = calloc(1, sizeof *tab);

    if (!tab)
        return NULL;
    tab->nbuckets = 8;
    tab->buckets = calloc(tab->nbuckets, sizeof *tab->buckets);
    if (!tab->buckets) {
        free(tab);
        return NULL;
    }
    return tab;
}

void
strtab_free(struct strtab *tab)
{
    if (!tab)
        return;
    for (size_t i = 0; i < tab->nbuckets; i++) {
        struct entry *e = tab->buckets[i];

        while (e) {
            struct entry *next = e->next;

            free(e->text);
            free(e);
            e = next;
        }
    }
    free(tab->buckets);
    free(tab);
}

static struct entry **
find(const struct strtab *tab, const char *s)
{
    struct entry **link = &tab->buckets[hash(s) % tab->nbuckets];

    while (*link && strcmp((*link)->text, s) != 0)
        link = &(*link)->next;
    return link;
}

static int
grow(struct strtab *tab)
{
    size_t n = tab->nbuckets * 2;
    struct entry **b = calloc(n, sizeof *b);

    if (!b)
        return -1;
    for (size_t i = 0; i < tab->nbuckets; i++) {
        struct entry *e = tab->buckets[i];

        while (e) {
            struct entry *next = e->next;
            size_t k = hash(e->text) % n;

            e->next = b[k];
            b[k] = e;
            e = next;
        }
    }
    free(tab->buckets);
    tab->buckets = b;
    tab->nbuckets = n;
    return 0;
}

const char *
strtab_intern(struct strtab *tab, const char *s)
{
    struct entry **link = find(tab, s);
    struct entry *e;

    if (*link)
        return (*link)->text;
    if (tab->count >= tab->nbuckets && grow(tab) == 0)
        link = find(tab, s);
    e = malloc(sizeof *e);
    if (!e)
        return NULL;
    e->text = strdup(s);
    if (!e->text) {
        free(e);
        return NULL;
    }
    e->next = NULL;
    *link = e;
    tab->count++;
    return e->text;
}

const char *
strtab_lookup(const struct strtab *tab, const char *s)
{
    struct entry **link = find(tab, s);

    return *link ? (*link)->text : NULL;
}

int
strtab_remove(struct strtab *tab, const char *s)
{
    struct entry **link = find(tab, s);
    struct entry *e = *link;

    if (!e)
        return 0;
    *link = e->next;
    free(e->text);
    free(e);
    tab->count--;
    return 1;
}

/* A copy of s without leading and trailing blanks; NULL on ENOMEM. */
static char *
trimmed_copy(const char *s)
{
    size_t len;
    char *copy;

    while (*s == ' ' || *s == '\t')
        s++;
    len = strlen(s);
    while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
        len--;
    copy = malloc(len + 1);
    if (copy) {
        memcpy(copy, s, len);
        copy[len] = '\0';
    }
    return copy;
}

const char *
strtab_rename(struct strtab *tab, const char *from, const char *to)
{
    char *key = trimmed_copy(to);
    const char *result;

    if (!key)
        return NULL;
    if (strtab_lookup(tab, key) || !strtab_remove(tab, from)) {
        free(key);
        return NULL;
    }
    result = strtab_intern(tab, key);
    /* The deliberate bug of this example: `key` is freed on the error path
     * above but not here.  leakgate's demo catches it; the fix is
     * `free(key);` before the return. */
    return result;
}

size_t
strtab_count(const struct strtab *tab)
{
    return tab->count;
}
