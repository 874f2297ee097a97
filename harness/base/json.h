/* SPDX-License-Identifier: MIT */
/*
 * json: a small, strict JSON reader (RFC 8259) for leakgate's own result
 * files (docs/results-format.md).  Core: parses text in memory into a
 * tree, no I/O, no globals.
 *
 * Strict: exactly one value with optional white space around it; no
 * comments, trailing commas, single quotes, NaN, leading zeros, byte order
 * mark or duplicate object keys.  Strings must be valid UTF-8 (no
 * overlong forms, no surrogates) without raw control characters; escapes
 * are decoded, surrogate pairs must pair, and \u0000 is refused because
 * strings are handed out NUL-terminated.  Every error names
 * "NAME:LINE:COLUMN: what" (1-based; columns count characters).  Limits
 * (input size, nesting depth, string length, number of values) fail with
 * LEAKGATE_ETOOBIG, so hostile input costs bounded time and memory.
 */
#ifndef LEAKGATE_JSON_H
#define LEAKGATE_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum leakgate_json_type {
    LEAKGATE_JSON_NULL,
    LEAKGATE_JSON_BOOL,
    LEAKGATE_JSON_NUMBER,
    LEAKGATE_JSON_STRING,
    LEAKGATE_JSON_ARRAY,
    LEAKGATE_JSON_OBJECT,
};

/* One value.  Object members are items with a key; array items have
 * key NULL. */
struct leakgate_json {
    enum leakgate_json_type type;
    unsigned int line, col; /* 1-based start of the value */
    bool boolean;           /* BOOL */
    char *text; /* STRING: decoded, NUL-terminated; NUMBER: the literal */
    size_t len; /* STRING: bytes of text */
    char *key;  /* member of an object: its decoded key, else NULL */
    struct leakgate_json *items; /* ARRAY, OBJECT: n children in order */
    size_t n;
    size_t *by_key; /* OBJECT of 2+ members: their indexes sorted by key
                       (leakgate_json__get() searches it), else NULL */
};

/* Limits; 0 = the default in brackets. */
struct leakgate_json_limits {
    size_t max_size;   /* input bytes [64 MiB] */
    size_t max_depth;  /* arrays and objects open at once [64; at most 512] */
    size_t max_string; /* bytes of one decoded string or key [1 MiB] */
    size_t max_values; /* values in the document [4 Mi] */
};

/*
 * Parse len bytes of text (need not be NUL-terminated); `name` names the
 * input in messages.  limits may be NULL.  Returns 0; LEAKGATE_EFORMAT
 * ("NAME:LINE:COL: what"); LEAKGATE_ETOOBIG; LEAKGATE_ENOMEM.  *out is
 * the caller's (leakgate_json__free), NULL on failure.
 */
int leakgate_json__parse(struct leakgate_json **out,
                         const char *text,
                         size_t len,
                         const char *name,
                         const struct leakgate_json_limits *limits);

/* Free a tree from leakgate_json__parse; NULL is a no-op. */
void leakgate_json__free(struct leakgate_json *root);

/* The member `key` of an object, or NULL (absent, or v not an object).
 * Cannot fail. */
const struct leakgate_json *leakgate_json__get(const struct leakgate_json *v,
                                               const char *key);

/* A NUMBER written as an integer (no fraction or exponent) that fits in
 * int64_t.  Returns true and sets *out, else false.  Cannot fail. */
bool leakgate_json__int(int64_t *out, const struct leakgate_json *v);

/* Any NUMBER as a double (locale-independent).  Returns true and sets
 * *out, else false.  Cannot fail. */
bool leakgate_json__double(double *out, const struct leakgate_json *v);

/* "null", "a boolean", "a number", "a string", "an array", "an object"
 * (static storage), for messages.  Cannot fail. */
const char *leakgate_json__type_name(const struct leakgate_json *v);

#endif
