/* SPDX-License-Identifier: MIT */
/*
 * ds_sbuf: a growing, always NUL-terminated string buffer (capacity
 * doubles with realloc).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds.h"

struct ds_sbuf {
    char *ptr;
    size_t len;
    size_t cap; /* bytes allocated for ptr, NUL included */
};

struct ds_sbuf *
ds_sbuf_new(void)
{
    return calloc(1, sizeof(struct ds_sbuf));
}

void
ds_sbuf_free(struct ds_sbuf *b)
{
    if (!b)
        return;
    free(b->ptr);
    free(b);
}

static int
reserve(struct ds_sbuf *b, size_t extra)
{
    size_t need = b->len + extra + 1, cap = b->cap ? b->cap : 32;
    char *p;

    if (need <= b->cap)
        return 0;
    while (cap < need)
        cap *= 2;
    p = realloc(b->ptr, cap);
    if (!p)
        return -1;
    b->ptr = p;
    b->cap = cap;
    return 0;
}

int
ds_sbuf_append(struct ds_sbuf *b, const char *s, size_t n)
{
    if (reserve(b, n) != 0)
        return -1;
    memcpy(b->ptr + b->len, s, n);
    b->len += n;
    b->ptr[b->len] = '\0';
    return 0;
}

int
ds_sbuf_puts(struct ds_sbuf *b, const char *s)
{
    return ds_sbuf_append(b, s, strlen(s));
}

int
ds_sbuf_printf(struct ds_sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0 || reserve(b, (size_t)n) != 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

const char *
ds_sbuf_str(const struct ds_sbuf *b)
{
    return b->ptr ? b->ptr : "";
}

size_t
ds_sbuf_len(const struct ds_sbuf *b)
{
    return b->len;
}

void
ds_sbuf_clear(struct ds_sbuf *b)
{
    b->len = 0;
    if (b->ptr)
        b->ptr[0] = '\0';
}

char *
ds_sbuf_take(struct ds_sbuf *b)
{
    char *p;

    if (reserve(b, 0) != 0) {
        ds_sbuf_free(b);
        return NULL;
    }
    p = b->ptr;
    free(b);
    return p;
}
