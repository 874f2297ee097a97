/* SPDX-License-Identifier: MIT */
#include "parser.h"

#include <stdlib.h>
#include <string.h>

struct pair {
    char *key;
    char *value;
    struct pair *next;
};

struct kv {
    struct pair *first;
    size_t count;
};

static char *
copy(const char *s, size_t n)
{
    char *p = malloc(n + 1);

    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

static int
add_pair(struct kv *kv, const char *item, size_t len)
{
    const char *eq = memchr(item, '=', len);
    struct pair *p;

    if (!eq || eq == item)
        return -1;
    p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->key = copy(item, (size_t)(eq - item));
    p->value = copy(eq + 1, len - (size_t)(eq - item) - 1);
    p->next = kv->first;
    kv->first = p;
    kv->count++;
    return p->key && p->value ? 0 : -1;
}

struct kv *
kv_parse(const char *text)
{
    struct kv *kv = calloc(1, sizeof *kv);

    while (kv && *text) {
        size_t len = strcspn(text, ";");

        if (len > 0 && add_pair(kv, text, len) != 0) {
            kv_free(kv);
            return NULL;
        }
        text += len + (text[len] == ';');
    }
    return kv;
}

void
kv_free(struct kv *kv)
{
    if (!kv)
        return;
    while (kv->first) {
        struct pair *next = kv->first->next;

        free(kv->first->key);
        free(kv->first->value);
        free(kv->first);
        kv->first = next;
    }
    free(kv);
}

const char *
kv_get(const struct kv *kv, const char *key)
{
    for (const struct pair *p = kv->first; p; p = p->next)
        if (strcmp(p->key, key) == 0)
            return p->value;
    return NULL;
}

size_t
kv_count(const struct kv *kv)
{
    return kv->count;
}

const char *
kv_key_name(const char *key)
{
    static char *names[64];
    static size_t n;

    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], key) == 0)
            return names[i];
    if (n == sizeof names / sizeof names[0])
        return NULL;
    names[n] = copy(key, strlen(key)); /* kept: the cache lives until exit */
    return names[n] ? names[n++] : NULL;
}
