/* SPDX-License-Identifier: MIT */
/*
 * ds_json: a recursive-descent JSON parser into a tree of ds_json values
 * (arrays and objects keep growing item arrays) and a compact serializer.
 * Strings support the simple escapes and \u00XX; nesting is limited to 64.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ds.h"

#define MAX_DEPTH 64

struct parser {
    const char *s;
    size_t pos;
    int depth;
    bool failed;
};

static void
skip_ws(struct parser *p)
{
    while (strchr(" \t\r\n", p->s[p->pos]) && p->s[p->pos])
        p->pos++;
}

static struct ds_json *
new_value(enum ds_json_kind kind)
{
    struct ds_json *v = calloc(1, sizeof *v);

    if (v)
        v->kind = kind;
    return v;
}

void
ds_json_free(struct ds_json *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->count; i++) {
        ds_json_free(v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    free(v);
}

static int
hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static bool
unescape(struct parser *p, struct ds_sbuf *b)
{
    const char *map = "\"\"\\\\//b\bf\fn\nr\rt\t";
    char c = p->s[p->pos++];
    int h1, h2;

    if (c == 'u') {
        if (strncmp(p->s + p->pos, "00", 2) != 0)
            return false;
        h1 = hex_digit(p->s[p->pos + 2]);
        h2 = hex_digit(p->s[p->pos + 3]);
        if (h1 < 0 || h2 < 0)
            return false;
        p->pos += 4;
        c = (char)(h1 * 16 + h2);
        return ds_sbuf_append(b, &c, 1) == 0;
    }
    for (size_t i = 0; map[i]; i += 2) {
        if (map[i] == c)
            return ds_sbuf_append(b, &map[i + 1], 1) == 0;
    }
    return false;
}

/* Parse a string literal at p->pos (the opening quote); a malloc'd copy. */
static char *
parse_string(struct parser *p)
{
    struct ds_sbuf *b = ds_sbuf_new();
    bool ok = b != NULL && p->s[p->pos++] == '"';

    while (ok && p->s[p->pos] != '"') {
        char c = p->s[p->pos];

        if (c == '\0' || (unsigned char)c < 0x20) {
            ok = false;
        } else if (c == '\\') {
            p->pos++;
            ok = unescape(p, b);
        } else {
            size_t n = strcspn(p->s + p->pos, "\"\\");

            ok = ds_sbuf_append(b, p->s + p->pos, n) == 0;
            p->pos += n;
        }
    }
    if (!ok) {
        ds_sbuf_free(b);
        p->failed = true;
        return NULL;
    }
    p->pos++;
    return ds_sbuf_take(b);
}

static struct ds_json *parse_value(struct parser *p);

static bool
push(struct ds_json *v, char *key, struct ds_json *item)
{
    if (v->count == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 4;
        struct ds_json **items = realloc(v->items, cap * sizeof *items);

        if (!items)
            return false;
        v->items = items;
        if (v->kind == DS_JSON_OBJECT) {
            char **keys = realloc(v->keys, cap * sizeof *keys);

            if (!keys)
                return false;
            v->keys = keys;
        }
        v->cap = cap;
    }
    if (v->kind == DS_JSON_OBJECT)
        v->keys[v->count] = key;
    v->items[v->count++] = item;
    return true;
}

/* One member (object) or element (array) after the separator. */
static bool
parse_item(struct parser *p, struct ds_json *v)
{
    char *key = NULL;
    struct ds_json *item;

    skip_ws(p);
    if (v->kind == DS_JSON_OBJECT) {
        if (p->s[p->pos] != '"')
            return false;
        key = parse_string(p);
        skip_ws(p);
        if (!key || p->s[p->pos++] != ':') {
            free(key);
            return false;
        }
    }
    item = parse_value(p);
    if (!item || !push(v, key, item)) {
        free(key);
        ds_json_free(item);
        return false;
    }
    return true;
}

static struct ds_json *
parse_container(struct parser *p, enum ds_json_kind kind, char close)
{
    struct ds_json *v = new_value(kind);
    bool ok = v != NULL && ++p->depth <= MAX_DEPTH;

    p->pos++;
    skip_ws(p);
    if (ok && p->s[p->pos] == close) {
        p->pos++;
    } else {
        while (ok) {
            ok = parse_item(p, v);
            skip_ws(p);
            if (ok && p->s[p->pos] == close) {
                p->pos++;
                break;
            }
            ok = ok && p->s[p->pos++] == ',';
        }
    }
    p->depth--;
    if (!ok) {
        ds_json_free(v);
        p->failed = true;
        return NULL;
    }
    return v;
}

static struct ds_json *
parse_literal(struct parser *p)
{
    static const struct {
        const char *word;
        enum ds_json_kind kind;
        bool value;
    } words[] = {{"null", DS_JSON_NULL, false},
                 {"true", DS_JSON_BOOL, true},
                 {"false", DS_JSON_BOOL, false}};
    struct ds_json *v;
    char *end;
    double d;

    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);

        if (strncmp(p->s + p->pos, words[i].word, n) == 0) {
            p->pos += n;
            v = new_value(words[i].kind);
            if (v)
                v->boolean = words[i].value;
            return v;
        }
    }
    d = strtod(p->s + p->pos, &end);
    if (end == p->s + p->pos)
        return NULL;
    p->pos = (size_t)(end - p->s);
    v = new_value(DS_JSON_NUMBER);
    if (v)
        v->number = d;
    return v;
}

static struct ds_json *
parse_value(struct parser *p)
{
    struct ds_json *v;

    skip_ws(p);
    switch (p->s[p->pos]) {
    case '{': return parse_container(p, DS_JSON_OBJECT, '}');
    case '[': return parse_container(p, DS_JSON_ARRAY, ']');
    case '"':
        v = new_value(DS_JSON_STRING);
        if (v)
            v->string = parse_string(p);
        if (v && !v->string) {
            free(v);
            v = NULL;
        }
        return v;
    default: return parse_literal(p);
    }
}

struct ds_json *
ds_json_parse(const char *text, size_t *error_pos)
{
    struct parser p = {text, 0, 0, false};
    struct ds_json *v = parse_value(&p);

    skip_ws(&p);
    if (v && text[p.pos] != '\0') {
        ds_json_free(v);
        v = NULL;
    }
    if (!v && error_pos)
        *error_pos = p.pos;
    return v;
}

static int
write_string(struct ds_sbuf *b, const char *s)
{
    int rc = ds_sbuf_append(b, "\"", 1);

    for (; *s && rc == 0; s++) {
        if (*s == '"' || *s == '\\')
            rc = ds_sbuf_printf(b, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            rc = ds_sbuf_printf(b, "\\u%04x", (unsigned)*s);
        else
            rc = ds_sbuf_append(b, s, 1);
    }
    return rc == 0 ? ds_sbuf_append(b, "\"", 1) : rc;
}

static int
write_container(struct ds_sbuf *b, const struct ds_json *v)
{
    bool obj = v->kind == DS_JSON_OBJECT;
    int rc = ds_sbuf_append(b, obj ? "{" : "[", 1);

    for (size_t i = 0; i < v->count && rc == 0; i++) {
        if (i > 0)
            rc = ds_sbuf_append(b, ",", 1);
        if (rc == 0 && obj)
            rc = write_string(b, v->keys[i]);
        if (rc == 0 && obj)
            rc = ds_sbuf_append(b, ":", 1);
        if (rc == 0)
            rc = ds_json_write(b, v->items[i]);
    }
    return rc == 0 ? ds_sbuf_append(b, obj ? "}" : "]", 1) : rc;
}

int
ds_json_write(struct ds_sbuf *b, const struct ds_json *v)
{
    switch (v->kind) {
    case DS_JSON_NULL: return ds_sbuf_puts(b, "null");
    case DS_JSON_BOOL: return ds_sbuf_puts(b, v->boolean ? "true" : "false");
    case DS_JSON_NUMBER: return ds_sbuf_printf(b, "%.17g", v->number);
    case DS_JSON_STRING: return write_string(b, v->string);
    default: return write_container(b, v);
    }
}

const struct ds_json *
ds_json_member(const struct ds_json *obj, const char *key)
{
    if (obj->kind != DS_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->count; i++) {
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    }
    return NULL;
}
