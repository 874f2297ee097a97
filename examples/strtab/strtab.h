/* SPDX-License-Identifier: MIT */
/*
 * strtab: a small string-interning table (open hashing).  The example
 * library that leakgate's example suite tests.
 */
#ifndef STRTAB_H
#define STRTAB_H

#include <stddef.h>

struct strtab;

/* A new empty table, or NULL when out of memory. */
struct strtab *strtab_new(void);
void strtab_free(struct strtab *tab);

/* The table's copy of s (added when missing); NULL when out of memory. */
const char *strtab_intern(struct strtab *tab, const char *s);
/* The table's copy of s, or NULL when s was never interned. */
const char *strtab_lookup(const struct strtab *tab, const char *s);
/* Remove s; returns 1 when it was there. */
int strtab_remove(struct strtab *tab, const char *s);
/* Replace the entry `from` by `to` (blanks around `to` trimmed); returns
 * the new copy or NULL. */
const char *strtab_rename(struct strtab *tab, const char *from, const char *to);
size_t strtab_count(const struct strtab *tab);

#endif
