/* SPDX-License-Identifier: MIT */
/*
 * util: the allocator seam, a growable text buffer, address ranges and
 * globs.  Bottom of the pipeline: every other module may use it, it uses
 * only libc.  All leakgate allocations go through leakgate_util__malloc()
 * and friends so that tests can inject failures (leakgate_util__fail_after).
 */
#ifndef LEAKGATE_UTIL_H
#define LEAKGATE_UTIL_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Allocator seam.  Return NULL on failure (and after the injected count). */
void *leakgate_util__malloc(size_t size);
void *leakgate_util__calloc(size_t n, size_t size);
void *leakgate_util__realloc(void *p, size_t size);
void leakgate_util__free(void *p);
char *leakgate_util__strdup(const char *s);
char *leakgate_util__strndup(const char *s, size_t n);

/* On a large static table that most processes touch a page or two of, or
 * none: GCC on x86-64 places it in .lbss, after every other variable, so
 * the small ones a test process starts with share a few pages instead of
 * sitting between the tables (each page first touched costs a page fault;
 * docs/internals/performance-record.md "Process start").  Elsewhere nothing. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define LEAKGATE_LARGE_TABLE __attribute__((section(".lbss.leakgate")))
#else
#define LEAKGATE_LARGE_TABLE
#endif

/* "a<sep>b" into out[size] (size > 0), cut to fit as snprintf() would;
 * true when it fitted whole.  A window's "suite/test" without printf or
 * an allocation.  Cannot fail. */
bool leakgate_util__join_to(
    char *out, size_t size, const char *a, char sep, const char *b);

/* The open descriptor whose number the environment variable name holds
 * (decimal, nothing else), or -1: unset, empty, malformed or not open.
 * errno is left as it was (the caller may be a test's constructor). */
int leakgate_util__env_fd(const char *name);

/*
 * Test builds only: make the n-th next allocation (0 = the next one) and
 * all later ones fail; pass SIZE_MAX to stop injecting.
 */
void leakgate_util__fail_after(size_t n);

/* Growable NUL-terminated text.  A failed append sets `failed` and makes
 * every later append a no-op, so callers check once at the end. */
struct leakgate_buf {
    char *ptr;   /* NUL-terminated, NULL until the first append */
    size_t len;  /* bytes used, without the NUL */
    size_t cap;  /* bytes allocated */
    bool failed; /* an allocation failed */
};
#define LEAKGATE_BUF_INIT                                                      \
    {                                                                          \
        NULL, 0, 0, false                                                      \
    }

/* Room for extra more bytes and the NUL (b->cap - b->len > extra); false
 * when b failed or fails now. */
bool leakgate_buf__reserve(struct leakgate_buf *b, size_t extra);
void leakgate_buf__put(struct leakgate_buf *b, const char *s, size_t n);
void leakgate_buf__puts(struct leakgate_buf *b, const char *s);
void leakgate_buf__printf(struct leakgate_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void leakgate_buf__vprintf(struct leakgate_buf *b, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
/* Append s with XML escaping (& < > " ') / JSON string escaping (no quotes
 * added). */
void leakgate_buf__put_xml(struct leakgate_buf *b, const char *s);
void leakgate_buf__put_json(struct leakgate_buf *b, const char *s);
/* One byte of a JSON string, escaped as leakgate_buf__put_json() does. */
void leakgate_buf__put_json_char(struct leakgate_buf *b, char c);
/* Hand the text to the caller (NULL-safe, returns "" copy if empty), and
 * reset b.  NULL when b failed or on ENOMEM. */
char *leakgate_buf__take(struct leakgate_buf *b);
void leakgate_buf__dispose(struct leakgate_buf *b);

/* A half-open address range [start, end). */
struct leakgate_range {
    uintptr_t start;
    uintptr_t end;
};

/* bytes of zeroed anonymous memory from mmap, never from malloc (the
 * allocation wrappers' tables use it); reserve_only: MAP_NORESERVE, for
 * large tables of which only the touched pages cost memory.  NULL when it
 * cannot be mapped. */
void *leakgate_util__map_zeroed(size_t bytes, bool reserve_only);
/* Give a map_zeroed() map's pages back: they read as zeros again (NULL
 * or 0 bytes: nothing). */
void leakgate_util__map_reset(void *p, size_t bytes);

/*
 * A lock-free table from code addresses (return addresses, call sites) to
 * 64-bit values, in two parts: a first one of a page or so, then, for an
 * address whose probe sequence there is full, a larger one.  Addresses
 * hash over a whole part, so a single large table touches most of its
 * pages for a few dozen addresses (a page fault each); the first part
 * holds what a small program needs.  Open addressing, PROBES slots per
 * address; slots are never emptied (memset the parts to start again), so
 * an address is in the first part, or in the second when its sequence in
 * the first is full.  Both parts' sizes are powers of two.
 */
#define LEAKGATE_UTIL__ADDR_PROBES 16
struct leakgate_util__addr_slot {
    _Atomic uintptr_t key; /* 0: empty */
    _Atomic uint64_t value;
};
struct leakgate_util__addr_table {
    struct leakgate_util__addr_slot *first;
    size_t first_slots;
    struct leakgate_util__addr_slot *second;
    size_t second_slots;
};
/* Where key is in one part (t, of slots slots): ADDR_THERE found (*at its
 * slot); else, when claim, ADDR_TAKEN: an empty slot taken for it (*at;
 * its value is the caller's to set); else ADDR_ABSENT: it is in no slot
 * and could be put here; ADDR_FULL: its probe sequence holds other keys
 * (it can only be in a later part).  key != 0. */
enum leakgate_util__addr_where {
    LEAKGATE_UTIL__ADDR_THERE,
    LEAKGATE_UTIL__ADDR_TAKEN,
    LEAKGATE_UTIL__ADDR_ABSENT,
    LEAKGATE_UTIL__ADDR_FULL
};
enum leakgate_util__addr_where
leakgate_util__addr_slot(struct leakgate_util__addr_slot *t,
                         size_t slots,
                         uintptr_t key,
                         bool claim,
                         size_t *at);
/* key's value into *value (0: being filled in); false when key is not
 * there. */
bool leakgate_util__addr_get(const struct leakgate_util__addr_table *t,
                             uintptr_t key,
                             uint64_t *value);
/* Keep value for key (key != 0): 1 a new key, 0 its value replaced, -1
 * no room around it in either part (asked again next time). */
int leakgate_util__addr_put(const struct leakgate_util__addr_table *t,
                            uintptr_t key,
                            uint64_t value);

/* True when pc lies in any of the n ranges.  Cannot fail. */
bool leakgate_util__in_ranges(const struct leakgate_range *ranges,
                              size_t n,
                              uintptr_t pc);

/*
 * Glob matching with fnmatch(3) semantics without FNM_PATHNAME ('*' also
 * matches '/'): '*', '?', '[...]' classes with '!' negation, '\' escapes.
 */
bool leakgate_util__glob_match(const char *pattern, const char *s);
/* pattern has no glob character ('*', '?', '[') and no backslash: it
 * matches only the text it spells.  Cannot fail. */
bool leakgate_util__glob_literal(const char *pattern);
/* name spells "suite/test" (compared in place, nothing joined).  Cannot
 * fail. */
bool
leakgate_util__name_is(const char *name, const char *suite, const char *test);
/* True when pattern is a well-formed glob (non-empty, brackets closed, no
 * trailing backslash).  Cannot fail. */
bool leakgate_util__glob_valid(const char *pattern);
/* How specific a glob is: the count of its literal characters; a pattern
 * with no wildcard gets SIZE_MAX (an exact name beats every glob). */
size_t leakgate_util__glob_specificity(const char *pattern);
/* Append s to b with glob metacharacters ('*', '?', '[', ']', '\')
 * backslash-escaped, so that the result matches exactly s. */
void leakgate_util__glob_escape(struct leakgate_buf *b, const char *s);

/*
 * The length of the well-formed UTF-8 sequence at s, its code point in
 * *cp; 0 when s does not start one (overlong, surrogate, truncated).
 * Never reads past a NUL: it is not a continuation byte.
 */
size_t leakgate_util__utf8_seq(const unsigned char *s, uint32_t *cp);

/*
 * Test and suite names as leakgate prints them where a raw byte would cut
 * a line or a record (--list, the replay list, text reports): '\' as
 * "\\", newline, tab and carriage return as "\n", "\t", "\r", other
 * control bytes (below 0x20, 0x7f) and bytes that are not UTF-8 as
 * "\xNN" (two lower-case hex digits); everything else as it is.
 * name_escape appends the printed form of s to b; name_plain is true when
 * it is s itself (cannot fail); name_unescape appends the name printed as
 * s[0..n) and returns false when s is not such a form (a lone or unknown
 * escape), b unchanged then.
 */
/* ordinals[i] = 1 + how many of names[0..i) are the same window name as
 * names[i] (leakgate_names_same()), in O(n log n): a hash of each name's
 * code points, sorted.  0, or LEAKGATE_ENOMEM (ordinals untouched). */
int leakgate_util__name_ordinals(const char *const *names,
                                 size_t n,
                                 unsigned int *ordinals);
void leakgate_util__name_escape(struct leakgate_buf *b, const char *s);
bool leakgate_util__name_plain(const char *s);
bool
leakgate_util__name_unescape(struct leakgate_buf *b, const char *s, size_t n);

/* Turn a file-system-hostile name into one safe path component: bytes
 * outside [A-Za-z0-9._-] become '_', a leading '.' becomes '_', and an
 * empty name becomes "_" ("[suite]" -> "_suite_").  Returns a new string
 * or NULL (ENOMEM). */
char *leakgate_util__sanitize_name(const char *name);

/* A number with thousands separators ("-7,176") into out (at least 32
 * bytes for any value).  Returns out.  Cannot fail. */
char *leakgate_util__group_digits(char *out,
                                  size_t outsz,
                                  uint64_t magnitude,
                                  bool negative);

/* leakgate_util__group_digits() of a signed number, into out (at least 32
 * bytes).  Returns out.  Cannot fail. */
char *leakgate_util__group_signed(char *out, int64_t n);

/* The file name after the last '/' of path (path itself without one; NULL
 * for NULL).  Cannot fail. */
const char *leakgate_util__base_name(const char *path);

/* 64-bit FNV-1a of the bytes of s, continued from h (start from
 * LEAKGATE_UTIL_FNV_BASIS).  Cannot fail. */
#define LEAKGATE_UTIL_FNV_BASIS 14695981039346656037ull
uint64_t leakgate_util__fnv1a(uint64_t h, const char *s);

/* A 64-bit hash of n bytes at p, continued from h, eight bytes a step:
 * for texts of kilobytes (FNV-1a takes a multiply per byte).  Not FNV;
 * in-memory only (never written anywhere).  Cannot fail. */
uint64_t leakgate_util__hash_bytes(uint64_t h, const void *p, size_t n);

/* Format a byte count for humans: "112 B", "4.0 KiB", "1.5 MiB" into out
 * (at least 32 bytes).  Returns out. */
char *leakgate_util__human_bytes(char *out, size_t outsz, uint64_t bytes);

#endif
