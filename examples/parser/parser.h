/* SPDX-License-Identifier: MIT */
/* parser: parse "key=value;key=value" strings (the library under test). */
#ifndef PARSER_H
#define PARSER_H

#include <stddef.h>

struct kv;

/* Parse text; NULL on a syntax error or out of memory.  Free with kv_free. */
struct kv *kv_parse(const char *text);
void kv_free(struct kv *kv);
/* The value of key (borrowed until kv_free), NULL when absent. */
const char *kv_get(const struct kv *kv, const char *key);
size_t kv_count(const struct kv *kv);
/* The interned, process-wide copy of a key name: kept until exit, by
 * design (a cache that fills once). */
const char *kv_key_name(const char *key);

#endif
