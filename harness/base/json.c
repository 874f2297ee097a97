/* SPDX-License-Identifier: MIT */
/*
 * json: a strict JSON reader with explicit limits (see json.h).  Core:
 * recursive descent over an in-memory buffer into a tree of struct
 * leakgate_json; no I/O, no globals.
 *
 * The parser tracks the line and column of the byte it is looking at, so
 * every error names where the offending text starts.  Recursion is bounded
 * by max_depth (clamped to HARD_MAX_DEPTH whatever the caller asks), every
 * string by max_string and the whole tree by max_values, so memory is
 * bounded by a small multiple of the input size.  A partly built tree is
 * always safe to free: children are counted only once initialised.
 */
#include "json.h"

#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

#define DEFAULT_MAX_SIZE ((size_t)64 << 20)
#define DEFAULT_MAX_DEPTH ((size_t)64)
#define HARD_MAX_DEPTH ((size_t)512)
#define DEFAULT_MAX_STRING ((size_t)1 << 20)
#define DEFAULT_MAX_VALUES ((size_t)4 << 20)
#define SORTED_DEPTHS ((size_t)8)

struct parser {
    const char *name;
    const unsigned char *p;   /* next byte */
    const unsigned char *end; /* one past the input */
    unsigned int line, col;   /* of p, 1-based */
    size_t depth, max_depth;
    size_t max_string;
    size_t nvalues, max_values;
    /* Per depth, the last object's members sorted by key
     * (check_duplicates()): the next object there with the same keys in
     * the same order (a results file's every test) takes the same order. */
    struct {
        const struct leakgate_json *items;
        const size_t *by_key;
        size_t n;
    } last[SORTED_DEPTHS];
};

static int parse_value(struct parser *ps, struct leakgate_json *out);

static int fail_at(const struct parser *ps,
                   int code,
                   unsigned int line,
                   unsigned int col,
                   const char *fmt,
                   ...) __attribute__((format(printf, 5, 6)));

static int
fail_at(const struct parser *ps,
        int code,
        unsigned int line,
        unsigned int col,
        const char *fmt,
        ...)
{
    va_list ap;
    int rc;

    va_start(ap, fmt);
    rc = leakgate_error__set_at(code, ps->name, line, col, fmt, ap);
    va_end(ap);
    return rc;
}

static int
no_memory(const struct parser *ps)
{
    return leakgate_error__set(LEAKGATE_ENOMEM, "%s: out of memory", ps->name);
}

/* The byte at p for a message: 'x' when printable, else its hex. */
static const char *
show_byte(char *buf, size_t size, const unsigned char *p)
{
    if (*p >= 0x20 && *p < 0x7f)
        snprintf(buf, size, "'%c'", *p);
    else
        snprintf(buf, size, "byte 0x%02X", (unsigned int)*p);
    return buf;
}

/* Move past one byte, counting lines and characters. */
static void
advance(struct parser *ps)
{
    if (*ps->p == '\n') {
        ps->line++;
        ps->col = 1;
    } else if ((*ps->p & 0xC0) != 0x80) {
        ps->col++;
    }
    ps->p++;
}

static void
skip_ws(struct parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' ||
                               *ps->p == '\n' || *ps->p == '\r'))
        advance(ps);
}

static int
unexpected(const struct parser *ps, const char *expected)
{
    char b[32];

    if (ps->p >= ps->end)
        return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col,
                       "unexpected end of input (expected %s)", expected);
    return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col,
                   "unexpected %s (expected %s)", show_byte(b, sizeof b, ps->p),
                   expected);
}

/* ---- strings --------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (lead byte >= 0x80), or 0:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static size_t
utf8_len(const unsigned char *p, const unsigned char *end)
{
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;

    if (*p >= 0xC2 && *p <= 0xDF)
        n = 2;
    else if (*p >= 0xE0 && *p <= 0xEF)
        n = 3;
    else if (*p >= 0xF0 && *p <= 0xF4)
        n = 4;
    else
        return 0;
    if (*p == 0xE0)
        lo = 0xA0;
    else if (*p == 0xED)
        hi = 0x9F;
    else if (*p == 0xF0)
        lo = 0x90;
    else if (*p == 0xF4)
        hi = 0x8F;
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    }
    return n;
}

static void
put_utf8(struct leakgate_buf *b, uint32_t cp)
{
    char out[4];
    size_t n;

    if (cp < 0x80) {
        out[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        out[0] = (char)(0xC0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        out[0] = (char)(0xE0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        out[0] = (char)(0xF0 | (cp >> 18));
        out[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    leakgate_buf__put(b, out, n);
}

/* Four hex digits after "\u" (p at the 'u'); -1 when malformed. */
static long
hex4(const struct parser *ps)
{
    long v = 0;

    if (ps->end - ps->p < 5)
        return -1;
    for (int i = 1; i <= 4; i++) {
        unsigned char c = ps->p[i];
        int d;

        if (c >= '0' && c <= '9')
            d = c - '0';
        else if (c >= 'a' && c <= 'f')
            d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            d = c - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* "\uXXXX" (and its low surrogate), p at the 'u'. */
static int
unicode_escape(struct parser *ps, struct leakgate_buf *b)
{
    unsigned int line = ps->line, col = ps->col - 1;
    long hi = hex4(ps), lo;

    if (hi < 0)
        return fail_at(ps, LEAKGATE_EFORMAT, line, col,
                       "invalid \\u escape (expected 4 hex digits)");
    for (int i = 0; i < 5; i++)
        advance(ps);
    if (hi == 0)
        return fail_at(ps, LEAKGATE_EFORMAT, line, col,
                       "\\u0000 in a string is not supported");
    if (hi >= 0xDC00 && hi <= 0xDFFF)
        return fail_at(ps, LEAKGATE_EFORMAT, line, col,
                       "unpaired surrogate \\u%04lX", (unsigned long)hi);
    if (hi < 0xD800 || hi > 0xDBFF) {
        put_utf8(b, (uint32_t)hi);
        return 0;
    }
    if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u')
        return fail_at(ps, LEAKGATE_EFORMAT, line, col,
                       "unpaired surrogate \\u%04lX", (unsigned long)hi);
    advance(ps);
    lo = hex4(ps);
    if (lo < 0xDC00 || lo > 0xDFFF)
        return fail_at(ps, LEAKGATE_EFORMAT, line, col,
                       "unpaired surrogate \\u%04lX", (unsigned long)hi);
    for (int i = 0; i < 5; i++)
        advance(ps);
    put_utf8(b, (uint32_t)(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)));
    return 0;
}

/* One escape, p at the backslash. */
static int
escape(struct parser *ps, struct leakgate_buf *b)
{
    static const char from[] = "\"\\/bfnrt";
    static const char to[] = "\"\\/\b\f\n\r\t";
    const char *hit;
    char shown[32];

    advance(ps);
    if (ps->p >= ps->end)
        return unexpected(ps, "an escape");
    if (*ps->p == 'u')
        return unicode_escape(ps, b);
    hit = *ps->p ? strchr(from, *ps->p) : NULL;
    if (!hit)
        return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col - 1,
                       "invalid escape \\ followed by %s",
                       show_byte(shown, sizeof shown, ps->p));
    leakgate_buf__put(b, &to[hit - from], 1);
    advance(ps);
    return 0;
}

/* A raw byte of a string: printable ASCII or a valid UTF-8 sequence. */
static int
raw_char(struct parser *ps, struct leakgate_buf *b)
{
    size_t n = 1;

    if (*ps->p < 0x20)
        return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col,
                       "control character U+%04X in a string (escape it)",
                       (unsigned int)*ps->p);
    if (*ps->p >= 0x80) {
        n = utf8_len(ps->p, ps->end);
        if (n == 0)
            return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col,
                           "invalid UTF-8 (byte 0x%02X) in a string",
                           (unsigned int)*ps->p);
    }
    leakgate_buf__put(b, (const char *)ps->p, n);
    for (size_t i = 0; i < n; i++)
        advance(ps);
    return 0;
}

/* A string of plain ASCII to its closing quote, p at the opening quote
 * (most strings): copied once, at its size (a buffer grown and shrunk
 * cost a reallocation each).  1 when it was (*out is the caller's), 0
 * when the string needs any_string(), or an error code. */
static int
plain_string(struct parser *ps, char **out, size_t *len_out)
{
    const unsigned char *q = ps->p + 1;

    while (q < ps->end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
        q++;
    if (q >= ps->end || *q != '"' || (size_t)(q - ps->p - 1) > ps->max_string)
        return 0;
    *len_out = (size_t)(q - ps->p - 1);
    *out = leakgate_util__strndup((const char *)ps->p + 1, *len_out);
    if (!*out)
        return no_memory(ps);
    ps->col += (unsigned int)(q + 1 - ps->p);
    ps->p = q + 1;
    return 1;
}

/* A string, p at the opening quote, byte by byte (escapes, UTF-8).  *out
 * is the caller's. */
static int
any_string(struct parser *ps, char **out, size_t *len_out)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    unsigned int line = ps->line, col = ps->col;
    int rc = 0;

    advance(ps);
    while (rc == 0) {
        if (ps->p >= ps->end) {
            rc =
                fail_at(ps, LEAKGATE_EFORMAT, line, col, "unterminated string");
            break;
        }
        if (*ps->p == '"')
            break;
        if (*ps->p >= 0x20 && *ps->p < 0x80 && *ps->p != '\\') {
            /* A run of plain ASCII: one copy (strings hold whole
             * reports; byte by byte, parsing a run's results was mostly
             * copying). */
            const unsigned char *from = ps->p;

            while (ps->p < ps->end && *ps->p >= 0x20 && *ps->p < 0x80 &&
                   *ps->p != '"' && *ps->p != '\\')
                ps->p++;
            ps->col += (unsigned int)(ps->p - from);
            leakgate_buf__put(&b, (const char *)from, (size_t)(ps->p - from));
        } else {
            rc = *ps->p == '\\' ? escape(ps, &b) : raw_char(ps, &b);
        }
        if (rc == 0 && b.len > ps->max_string)
            rc = fail_at(ps, LEAKGATE_ETOOBIG, line, col,
                         "string longer than %zu bytes", ps->max_string);
    }
    if (rc == 0 && b.failed)
        rc = no_memory(ps);
    if (rc < 0) {
        leakgate_buf__dispose(&b);
        return rc;
    }
    advance(ps);
    *len_out = b.len;
    *out = leakgate_buf__take(&b);
    return *out ? 0 : no_memory(ps);
}

/* A string, p at the opening quote.  *out is the caller's. */
static int
parse_string(struct parser *ps, char **out, size_t *len_out)
{
    int rc = plain_string(ps, out, len_out);

    if (rc == 0)
        return any_string(ps, out, len_out);
    return rc < 0 ? rc : 0;
}

/* ---- numbers and literals -------------------------------------------- */

static bool
is_digit(const struct parser *ps, const unsigned char *q)
{
    return q < ps->end && *q >= '0' && *q <= '9';
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at p: returns the end
 * of the number, or NULL when it is malformed. */
static const unsigned char *
scan_number(const struct parser *ps)
{
    const unsigned char *q = ps->p;

    if (*q == '-')
        q++;
    if (!is_digit(ps, q))
        return NULL;
    if (*q == '0' && is_digit(ps, q + 1))
        return NULL; /* leading zero */
    while (is_digit(ps, q))
        q++;
    if (q < ps->end && *q == '.') {
        if (!is_digit(ps, ++q))
            return NULL;
        while (is_digit(ps, q))
            q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            q++;
        if (!is_digit(ps, q))
            return NULL;
        while (is_digit(ps, q))
            q++;
    }
    return q;
}

static int
parse_number(struct parser *ps, struct leakgate_json *out)
{
    const unsigned char *end = scan_number(ps);
    const unsigned char *q = ps->p;

    if (!end) {
        while (q < ps->end && strchr("+-.eE0123456789", *q) && *q)
            q++;
        return fail_at(
            ps, LEAKGATE_EFORMAT, ps->line, ps->col, "invalid number '%.*s'",
            (int)(q - ps->p > 40 ? 40 : q - ps->p), (const char *)ps->p);
    }
    if ((size_t)(end - ps->p) > ps->max_string)
        return fail_at(ps, LEAKGATE_ETOOBIG, ps->line, ps->col,
                       "number longer than %zu characters", ps->max_string);
    out->type = LEAKGATE_JSON_NUMBER;
    out->text =
        leakgate_util__strndup((const char *)ps->p, (size_t)(end - ps->p));
    if (!out->text)
        return no_memory(ps);
    while (ps->p < end)
        advance(ps);
    return 0;
}

static bool
starts_with(const struct parser *ps, const char *word)
{
    size_t n = strlen(word);

    return (size_t)(ps->end - ps->p) >= n && memcmp(ps->p, word, n) == 0;
}

static int
parse_literal(struct parser *ps, struct leakgate_json *out)
{
    static const struct {
        const char *word;
        enum leakgate_json_type type;
        bool value;
    } words[] = {{"true", LEAKGATE_JSON_BOOL, true},
                 {"false", LEAKGATE_JSON_BOOL, false},
                 {"null", LEAKGATE_JSON_NULL, false}};

    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        if (!starts_with(ps, words[i].word))
            continue;
        out->type = words[i].type;
        out->boolean = words[i].value;
        for (size_t k = strlen(words[i].word); k > 0; k--)
            advance(ps);
        return 0;
    }
    if ((*ps->p >= 'a' && *ps->p <= 'z') || (*ps->p >= 'A' && *ps->p <= 'Z')) {
        const unsigned char *q = ps->p;

        while (q < ps->end && q - ps->p < 20 &&
               ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z')))
            q++;
        return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col,
                       "invalid literal '%.*s' (expected true, false or "
                       "null; strings need double quotes)",
                       (int)(q - ps->p), (const char *)ps->p);
    }
    return unexpected(ps, "a value");
}

/* ---- arrays and objects ---------------------------------------------- */

/* Room for one more child; NULL on ENOMEM.  The child is zeroed but not
 * counted: the caller counts it once it is initialised. */
static struct leakgate_json *
grow(struct leakgate_json *v, size_t *cap)
{
    if (v->n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        struct leakgate_json *items;

        if (ncap > SIZE_MAX / sizeof *items)
            return NULL;
        items = leakgate_util__realloc(v->items, ncap * sizeof *items);
        if (!items)
            return NULL;
        v->items = items;
        *cap = ncap;
    }
    memset(&v->items[v->n], 0, sizeof v->items[v->n]);
    return &v->items[v->n];
}

/* After an item: ',' (more follow) or the closing bracket. */
static int
separator(struct parser *ps, char close, bool *more, const char *what)
{
    char expected[64];

    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
        advance(ps);
        skip_ws(ps);
        *more = true;
        return 0;
    }
    if (ps->p < ps->end && *ps->p == close) {
        advance(ps);
        *more = false;
        return 0;
    }
    snprintf(expected, sizeof expected, "',' or '%c' after %s", close, what);
    return unexpected(ps, expected);
}

static int
parse_member(struct parser *ps, struct leakgate_json *item)
{
    unsigned int line = ps->line, col = ps->col;
    char *key = NULL;
    size_t len;
    int rc;

    if (ps->p >= ps->end || *ps->p != '"')
        return unexpected(ps, "a string key");
    rc = parse_string(ps, &key, &len);
    if (rc < 0)
        return rc;
    skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') {
        leakgate_util__free(key);
        return unexpected(ps, "':' after the key");
    }
    advance(ps);
    rc = parse_value(ps, item);
    /* The key names the member: where it starts is where it is. */
    item->key = key;
    item->line = line;
    item->col = col;
    return rc;
}

static int
cmp_key(const void *a, const void *b, void *items)
{
    const struct leakgate_json *x =
        (const struct leakgate_json *)items + *(const size_t *)a;
    const struct leakgate_json *y =
        (const struct leakgate_json *)items + *(const size_t *)b;
    int c = strcmp(x->key, y->key);

    if (c != 0)
        return c;
    return (x > y) - (x < y);
}

/* Whether obj's keys are the last sorted object's, in the same order. */
static bool
same_keys(const struct parser *ps, const struct leakgate_json *obj)
{
    size_t d = ps->depth;

    if (d >= SORTED_DEPTHS || !ps->last[d].by_key || ps->last[d].n != obj->n)
        return false;
    for (size_t i = 0; i < obj->n; i++) {
        if (strcmp(ps->last[d].items[i].key, obj->items[i].key) != 0)
            return false;
    }
    return true;
}

/* Duplicate keys in O(n log n); reports the earliest second occurrence.
 * The members sorted by key stay, as obj->by_key. */
static int
check_duplicates(struct parser *ps, struct leakgate_json *obj)
{
    const struct leakgate_json *dup = NULL, *first = NULL;
    size_t *order;

    if (obj->n < 2)
        return 0;
    order = leakgate_util__calloc(obj->n, sizeof *order);
    if (!order)
        return no_memory(ps);
    if (same_keys(ps, obj)) {
        memcpy(order, ps->last[ps->depth].by_key, obj->n * sizeof *order);
        obj->by_key = order;
        return 0; /* the last object's had no duplicate */
    }
    for (size_t i = 0; i < obj->n; i++)
        order[i] = i;
    qsort_r(order, obj->n, sizeof *order, cmp_key, obj->items);
    for (size_t i = 1; i < obj->n; i++) {
        const struct leakgate_json *x = &obj->items[order[i - 1]],
                                   *y = &obj->items[order[i]];

        if (strcmp(x->key, y->key) == 0 && (!dup || y < dup)) {
            dup = y;
            first = x;
        }
    }
    obj->by_key = order;
    if (!dup && ps->depth < SORTED_DEPTHS) {
        ps->last[ps->depth].items = obj->items;
        ps->last[ps->depth].by_key = order;
        ps->last[ps->depth].n = obj->n;
    }
    if (!dup)
        return 0;
    return fail_at(ps, LEAKGATE_EFORMAT, dup->line, dup->col,
                   "duplicate key '%.100s' (first at line %u)", dup->key,
                   first->line);
}

/* The items of an array or the members of an object, after its opening
 * bracket: parse_item for each, separated by ',' until `close`. */
static int
parse_items(struct parser *ps,
            struct leakgate_json *out,
            char close,
            int (*parse_item)(struct parser *, struct leakgate_json *),
            const char *what)
{
    size_t cap = 0;
    bool more = true;
    int rc = 0;

    advance(ps);
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        advance(ps);
        return 0;
    }
    while (rc == 0 && more) {
        struct leakgate_json *item = grow(out, &cap);

        if (!item)
            return no_memory(ps);
        out->n++;
        rc = parse_item(ps, item);
        if (rc == 0)
            rc = separator(ps, close, &more, what);
    }
    return rc;
}

static int
parse_array(struct parser *ps, struct leakgate_json *out)
{
    out->type = LEAKGATE_JSON_ARRAY;
    return parse_items(ps, out, ']', parse_value, "an array item");
}

static int
parse_object(struct parser *ps, struct leakgate_json *out)
{
    int rc;

    out->type = LEAKGATE_JSON_OBJECT;
    rc = parse_items(ps, out, '}', parse_member, "an object member");
    return rc == 0 ? check_duplicates(ps, out) : rc;
}

static int
parse_nested(struct parser *ps, struct leakgate_json *out)
{
    int rc;

    if (ps->depth >= ps->max_depth)
        return fail_at(ps, LEAKGATE_ETOOBIG, ps->line, ps->col,
                       "nesting deeper than %zu levels", ps->max_depth);
    ps->depth++;
    rc = *ps->p == '[' ? parse_array(ps, out) : parse_object(ps, out);
    ps->depth--;
    return rc;
}

static int
parse_value(struct parser *ps, struct leakgate_json *out)
{
    skip_ws(ps);
    out->line = ps->line;
    out->col = ps->col;
    if (ps->p >= ps->end)
        return unexpected(ps, "a value");
    if (++ps->nvalues > ps->max_values)
        return fail_at(ps, LEAKGATE_ETOOBIG, ps->line, ps->col,
                       "more than %zu values", ps->max_values);
    switch (*ps->p) {
    case '[':
    case '{': return parse_nested(ps, out);
    case '"':
        out->type = LEAKGATE_JSON_STRING;
        return parse_string(ps, &out->text, &out->len);
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9': return parse_number(ps, out);
    default: return parse_literal(ps, out);
    }
}

/* ---- API ------------------------------------------------------------- */

static void
dispose(struct leakgate_json *v)
{
    for (size_t i = 0; i < v->n; i++)
        dispose(&v->items[i]);
    leakgate_util__free(v->items);
    leakgate_util__free(v->by_key);
    leakgate_util__free(v->text);
    leakgate_util__free(v->key);
}

void
leakgate_json__free(struct leakgate_json *root)
{
    if (!root)
        return;
    dispose(root);
    leakgate_util__free(root);
}

static void
init_parser(struct parser *ps,
            const char *text,
            size_t len,
            const char *name,
            const struct leakgate_json_limits *limits)
{
    memset(ps, 0, sizeof *ps);
    ps->name = name;
    ps->p = (const unsigned char *)text;
    ps->end = ps->p + len;
    ps->line = ps->col = 1;
    ps->max_depth = DEFAULT_MAX_DEPTH;
    ps->max_string = DEFAULT_MAX_STRING;
    ps->max_values = DEFAULT_MAX_VALUES;
    if (limits && limits->max_depth)
        ps->max_depth = limits->max_depth;
    if (ps->max_depth > HARD_MAX_DEPTH)
        ps->max_depth = HARD_MAX_DEPTH;
    if (limits && limits->max_string)
        ps->max_string = limits->max_string;
    if (limits && limits->max_values)
        ps->max_values = limits->max_values;
}

static int
parse_document(struct parser *ps, struct leakgate_json *root)
{
    char b[32];
    int rc;

    if (starts_with(ps, "\xEF\xBB\xBF"))
        return fail_at(ps, LEAKGATE_EFORMAT, 1, 1,
                       "byte order mark is not allowed");
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col,
                       "empty input, expected a JSON value");
    rc = parse_value(ps, root);
    if (rc < 0)
        return rc;
    skip_ws(ps);
    if (ps->p < ps->end)
        return fail_at(ps, LEAKGATE_EFORMAT, ps->line, ps->col,
                       "unexpected %s after the JSON value",
                       show_byte(b, sizeof b, ps->p));
    return 0;
}

int
leakgate_json__parse(struct leakgate_json **out,
                     const char *text,
                     size_t len,
                     const char *name,
                     const struct leakgate_json_limits *limits)
{
    struct leakgate_json *root;
    struct parser ps;
    size_t max_size = DEFAULT_MAX_SIZE;
    int rc;

    assert(out && name && (text || len == 0));
    *out = NULL;
    if (limits && limits->max_size)
        max_size = limits->max_size;
    if (len > max_size)
        return leakgate_error__set(LEAKGATE_ETOOBIG,
                                   "%s: %zu bytes, more than the limit of %zu",
                                   name, len, max_size);
    init_parser(&ps, text ? text : "", len, name, limits);
    root = leakgate_util__calloc(1, sizeof *root);
    if (!root)
        return no_memory(&ps);
    rc = parse_document(&ps, root);
    if (rc < 0) {
        leakgate_json__free(root);
        return rc;
    }
    *out = root;
    return 0;
}

const struct leakgate_json *
leakgate_json__get(const struct leakgate_json *v, const char *key)
{
    size_t lo = 0, hi;

    if (!v || v->type != LEAKGATE_JSON_OBJECT)
        return NULL;
    /* Keys are unique (the parser fails on a duplicate): a binary search
     * of the sorted index finds what the scan below would (a run's
     * results read back asks a test object for 50 members). */
    for (hi = v->by_key ? v->n : 0; lo < hi;) {
        size_t mid = lo + (hi - lo) / 2;
        const struct leakgate_json *m = &v->items[v->by_key[mid]];
        int c = strcmp(m->key, key);

        if (c == 0)
            return m;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (v->by_key)
        return NULL;
    for (size_t i = 0; i < v->n; i++) {
        if (strcmp(v->items[i].key, key) == 0)
            return &v->items[i];
    }
    return NULL;
}

bool
leakgate_json__int(int64_t *out, const struct leakgate_json *v)
{
    const char *p;
    bool negative;
    uint64_t mag = 0;

    if (!v || v->type != LEAKGATE_JSON_NUMBER || strpbrk(v->text, ".eE"))
        return false;
    p = v->text;
    negative = *p == '-';
    p += negative;
    for (; *p; p++) {
        unsigned int d = (unsigned int)(*p - '0');

        if (mag > (UINT64_MAX - d) / 10)
            return false;
        mag = mag * 10 + d;
    }
    if (mag > (uint64_t)INT64_MAX + negative)
        return false;
    if (negative)
        *out = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    else
        *out = (int64_t)mag;
    return true;
}

/* Decimal exponent of a literal, clamped far beyond double's range. */
static long
exponent_of(const char *p)
{
    long e = 0;
    bool negative = *p == '-';

    p += *p == '-' || *p == '+';
    for (; *p >= '0' && *p <= '9'; p++) {
        if (e < 100000)
            e = e * 10 + (*p - '0');
    }
    return negative ? -e : e;
}

bool
leakgate_json__double(double *out, const struct leakgate_json *v)
{
    const char *p;
    double mant = 0;
    long exp10 = 0;
    bool negative, frac = false;

    if (!v || v->type != LEAKGATE_JSON_NUMBER)
        return false;
    p = v->text;
    negative = *p == '-';
    p += negative;
    for (; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
        if (*p == '.') {
            frac = true;
            continue;
        }
        mant = mant * 10 + (*p - '0');
        exp10 -= frac;
    }
    if (*p == 'e' || *p == 'E')
        exp10 += exponent_of(p + 1);
    /* Beyond +-400 the result is 0 or infinite whatever the digits. */
    for (; exp10 > 0 && exp10 < 400 && isfinite(mant); exp10--)
        mant *= 10;
    for (; exp10 < 0 && exp10 > -400 && mant != 0; exp10++)
        mant /= 10;
    if (exp10 >= 400 && mant != 0)
        mant = HUGE_VAL;
    if (exp10 <= -400)
        mant = 0;
    *out = negative ? -mant : mant;
    return isfinite(*out);
}

const char *
leakgate_json__type_name(const struct leakgate_json *v)
{
    switch (v ? v->type : LEAKGATE_JSON_NULL) {
    case LEAKGATE_JSON_BOOL: return "a boolean";
    case LEAKGATE_JSON_NUMBER: return "a number";
    case LEAKGATE_JSON_STRING: return "a string";
    case LEAKGATE_JSON_ARRAY: return "an array";
    case LEAKGATE_JSON_OBJECT: return "an object";
    default: return "null";
    }
}
