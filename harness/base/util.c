/* SPDX-License-Identifier: MIT */
/*
 * util: allocator seam with fault injection, growable text buffers,
 * address ranges, globs and byte formatting.  Depends only on libc.
 */
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "heap.h"
#include "leakgate/leakgate.h"

/* Allocations left before injected failures start; SIZE_MAX = never. */
static size_t fail_countdown = SIZE_MAX;

static bool
injected_failure(void)
{
    if (fail_countdown == SIZE_MAX)
        return false;
    if (fail_countdown == 0)
        return true;
    fail_countdown--;
    return false;
}

void
leakgate_util__fail_after(size_t n)
{
    fail_countdown = n;
}

void *
leakgate_util__malloc(size_t size)
{
    return injected_failure() ? NULL : leakgate_heap__alloc(size);
}

void *
leakgate_util__calloc(size_t n, size_t size)
{
    return injected_failure() ? NULL : leakgate_heap__zalloc(n, size);
}

void *
leakgate_util__realloc(void *p, size_t size)
{
    return injected_failure() ? NULL : leakgate_heap__resize(p, size);
}

void
leakgate_util__free(void *p)
{
    leakgate_heap__free(p);
}

char *
leakgate_util__strndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *out = leakgate_util__malloc(len + 1);

    if (out) {
        memcpy(out, s, len);
        out[len] = '\0';
    }
    return out;
}

char *
leakgate_util__strdup(const char *s)
{
    return leakgate_util__strndup(s, SIZE_MAX);
}

bool
leakgate_util__join_to(
    char *out, size_t size, const char *a, char sep, const char *b)
{
    size_t room = size - 1, na = strlen(a), nb = strlen(b);
    bool whole = na < room && nb <= room - na - 1;

    na = na < room ? na : room;
    memcpy(out, a, na);
    if (na < room)
        out[na++] = sep;
    nb = nb < room - na ? nb : room - na;
    memcpy(out + na, b, nb);
    out[na + nb] = '\0';
    return whole;
}

int
leakgate_util__env_fd(const char *name)
{
    const char *env = getenv(name);
    char *end = NULL;
    int saved = errno;
    long fd;
    bool ok;

    if (!env || !*env)
        return -1;
    errno = 0;
    fd = strtol(env, &end, 10);
    ok = !errno && !*end && fd >= 0 && fd <= INT_MAX &&
         fcntl((int)fd, F_GETFD) >= 0;
    errno = saved;
    return ok ? (int)fd : -1;
}

bool
leakgate_buf__reserve(struct leakgate_buf *b, size_t extra)
{
    size_t need, cap;
    char *p;

    if (b->failed)
        return false;
    if (extra > SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return false;
    }
    need = b->len + extra + 1;
    if (need <= b->cap)
        return true;
    cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap *= 2;
    p = leakgate_util__realloc(b->ptr, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->ptr = p;
    b->cap = cap;
    return true;
}

void
leakgate_buf__put(struct leakgate_buf *b, const char *s, size_t n)
{
    if (!leakgate_buf__reserve(b, n))
        return;
    memcpy(b->ptr + b->len, s, n);
    b->len += n;
    b->ptr[b->len] = '\0';
}

void
leakgate_buf__puts(struct leakgate_buf *b, const char *s)
{
    leakgate_buf__put(b, s, strlen(s));
}

void
leakgate_buf__vprintf(struct leakgate_buf *b, const char *fmt, va_list ap)
{
    size_t room = b->ptr && !b->failed ? b->cap - b->len : 0;
    va_list copy;
    int n;

    /* One vsnprintf into the room there is; a second only when the text
     * did not fit (rendering a window is dozens of these). */
    va_copy(copy, ap);
    n = vsnprintf(room ? b->ptr + b->len : NULL, room, fmt, copy);
    va_end(copy);
    if (n >= 0 && (size_t)n < room) {
        b->len += (size_t)n;
        return;
    }
    if (room)
        b->ptr[b->len] = '\0'; /* what did not fit is not kept */
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (!leakgate_buf__reserve(b, (size_t)n))
        return;
    vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
    b->len += (size_t)n;
}

void
leakgate_buf__printf(struct leakgate_buf *b, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    leakgate_buf__vprintf(b, fmt, ap);
    va_end(ap);
}

void
leakgate_buf__put_xml(struct leakgate_buf *b, const char *s)
{
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;

        switch (c) {
        case '&': leakgate_buf__puts(b, "&amp;"); break;
        case '<': leakgate_buf__puts(b, "&lt;"); break;
        case '>': leakgate_buf__puts(b, "&gt;"); break;
        case '"': leakgate_buf__puts(b, "&quot;"); break;
        case '\'': leakgate_buf__puts(b, "&apos;"); break;
        default:
            /* XML 1.0 forbids most control characters, even escaped. */
            if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
                leakgate_buf__puts(b, "?");
            else
                leakgate_buf__put(b, s, 1);
        }
    }
}

void
leakgate_buf__put_json_char(struct leakgate_buf *b, char c)
{
    unsigned char u = (unsigned char)c;

    if (u == '"' || u == '\\')
        leakgate_buf__printf(b, "\\%c", u);
    else if (u == '\n')
        leakgate_buf__puts(b, "\\n");
    else if (u == '\t')
        leakgate_buf__puts(b, "\\t");
    else if (u < 0x20)
        leakgate_buf__printf(b, "\\u%04x", u);
    else
        leakgate_buf__put(b, &c, 1);
}

void
leakgate_buf__put_json(struct leakgate_buf *b, const char *s)
{
    for (; *s; s++)
        leakgate_buf__put_json_char(b, *s);
}

char *
leakgate_buf__take(struct leakgate_buf *b)
{
    char *out;

    if (b->failed) {
        leakgate_buf__dispose(b);
        return NULL;
    }
    /* The text is kept (a verdict's name, a report): no room behind it
     * (a failure to shrink keeps it as it is, and counts for no injected
     * failure). */
    out = b->ptr ? leakgate_heap__resize(b->ptr, b->len + 1)
                 : leakgate_util__strdup("");
    if (!out)
        out = b->ptr;
    b->ptr = NULL;
    b->len = b->cap = 0;
    return out;
}

void
leakgate_buf__dispose(struct leakgate_buf *b)
{
    leakgate_util__free(b->ptr);
    b->ptr = NULL;
    b->len = b->cap = 0;
    b->failed = false;
}

static size_t
addr_home(uintptr_t key, size_t slots)
{
    return (size_t)((uint64_t)key * UINT64_C(0x9e3779b97f4a7c15) >> 32) &
           (slots - 1);
}

enum leakgate_util__addr_where
leakgate_util__addr_slot(struct leakgate_util__addr_slot *t,
                         size_t slots,
                         uintptr_t key,
                         bool claim,
                         size_t *at)
{
    size_t h = addr_home(key, slots);

    for (unsigned i = 0; i < LEAKGATE_UTIL__ADDR_PROBES; i++) {
        struct leakgate_util__addr_slot *s = &t[(h + i) & (slots - 1)];
        uintptr_t k = atomic_load_explicit(&s->key, memory_order_acquire);

        *at = (h + i) & (slots - 1);
        if (k == key)
            return LEAKGATE_UTIL__ADDR_THERE;
        if (k == 0) {
            if (!claim)
                return LEAKGATE_UTIL__ADDR_ABSENT;
            if (atomic_compare_exchange_strong(&s->key, &k, key))
                return LEAKGATE_UTIL__ADDR_TAKEN;
            if (k == key) /* another thread took it for key */
                return LEAKGATE_UTIL__ADDR_THERE;
        }
    }
    return LEAKGATE_UTIL__ADDR_FULL;
}

/* key's value in part t (found: ADDR_THERE). */
static enum leakgate_util__addr_where
addr_find(struct leakgate_util__addr_slot *t,
          size_t slots,
          uintptr_t key,
          uint64_t *value)
{
    size_t at;
    enum leakgate_util__addr_where w =
        leakgate_util__addr_slot(t, slots, key, false, &at);

    if (w == LEAKGATE_UTIL__ADDR_THERE)
        *value = atomic_load_explicit(&t[at].value, memory_order_acquire);
    return w;
}

/* Keep value for key in part t: 1 a new key, 0 replaced, -1 no room. */
static int
addr_keep(struct leakgate_util__addr_slot *t,
          size_t slots,
          uintptr_t key,
          uint64_t value)
{
    size_t at;
    enum leakgate_util__addr_where w =
        leakgate_util__addr_slot(t, slots, key, true, &at);

    if (w == LEAKGATE_UTIL__ADDR_FULL)
        return -1;
    atomic_store_explicit(&t[at].value, value, memory_order_release);
    return w == LEAKGATE_UTIL__ADDR_TAKEN;
}

bool
leakgate_util__addr_get(const struct leakgate_util__addr_table *t,
                        uintptr_t key,
                        uint64_t *value)
{
    switch (addr_find(t->first, t->first_slots, key, value)) {
    case LEAKGATE_UTIL__ADDR_THERE: return true;
    case LEAKGATE_UTIL__ADDR_ABSENT: return false;
    default:
        return addr_find(t->second, t->second_slots, key, value) ==
               LEAKGATE_UTIL__ADDR_THERE;
    }
}

int
leakgate_util__addr_put(const struct leakgate_util__addr_table *t,
                        uintptr_t key,
                        uint64_t value)
{
    int rc = addr_keep(t->first, t->first_slots, key, value);

    return rc >= 0 ? rc : addr_keep(t->second, t->second_slots, key, value);
}

bool
leakgate_util__in_ranges(const struct leakgate_range *ranges,
                         size_t n,
                         uintptr_t pc)
{
    for (size_t i = 0; i < n; i++) {
        if (pc >= ranges[i].start && pc < ranges[i].end)
            return true;
    }
    return false;
}

bool
leakgate_util__glob_match(const char *pattern, const char *s)
{
    /* Without a special character a pattern matches only itself (and
     * fnmatch() costs ~500 instructions a call: every registered test
     * of a one-test process is matched against --filter). */
    if (leakgate_util__glob_literal(pattern))
        return strcmp(pattern, s) == 0;
    return fnmatch(pattern, s, 0) == 0;
}

bool
leakgate_util__glob_literal(const char *pattern)
{
    return !strpbrk(pattern, "*?[\\");
}

bool
leakgate_util__name_is(const char *name, const char *suite, const char *test)
{
    size_t n = strlen(suite);

    return strncmp(name, suite, n) == 0 && name[n] == '/' &&
           strcmp(name + n + 1, test) == 0;
}

bool
leakgate_util__glob_valid(const char *pattern)
{
    const char *p = pattern;

    if (!*p)
        return false;
    while (*p) {
        if (*p == '\\') {
            if (!p[1])
                return false;
            p += 2;
        } else if (*p == '[') {
            /* A class: optional '!', then ']' may be the first member. */
            p++;
            if (*p == '!' || *p == '^')
                p++;
            if (*p == ']')
                p++;
            while (*p && *p != ']')
                p++;
            if (!*p)
                return false;
            p++;
        } else {
            p++;
        }
    }
    return true;
}

size_t
leakgate_util__glob_specificity(const char *pattern)
{
    size_t literal = 0;
    bool wild = false;

    for (const char *p = pattern; *p; p++) {
        if (*p == '\\' && p[1]) {
            literal++;
            p++;
        } else if (*p == '*' || *p == '?') {
            wild = true;
        } else if (*p == '[') {
            wild = true;
            while (*p && *p != ']')
                p++;
            if (!*p)
                break;
        } else {
            literal++;
        }
    }
    return wild ? literal : SIZE_MAX;
}

void
leakgate_util__glob_escape(struct leakgate_buf *b, const char *s)
{
    for (; *s; s++) {
        if (strchr("*?[]\\", *s))
            leakgate_buf__put(b, "\\", 1);
        leakgate_buf__put(b, s, 1);
    }
}

size_t
leakgate_util__utf8_seq(const unsigned char *s, uint32_t *cp)
{
    uint32_t c = s[0], min;
    size_t len;

    *cp = c;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, c &= 0x1f, min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, c &= 0x0f, min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, c &= 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (s[i] & 0x3fu);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

/* The escape of the byte c, or NULL when it prints as it is (c < 0x80). */
static const char *
short_escape(unsigned char c)
{
    switch (c) {
    case '\\': return "\\\\";
    case '\n': return "\\n";
    case '\t': return "\\t";
    case '\r': return "\\r";
    default: return NULL;
    }
}

void
leakgate_util__name_escape(struct leakgate_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        uint32_t cp;
        size_t len = leakgate_util__utf8_seq(p, &cp);
        const char *esc = short_escape(*p);

        if (esc)
            leakgate_buf__puts(b, esc);
        else if (len == 0 || *p < 0x20 || *p == 0x7f)
            leakgate_buf__printf(b, "\\x%02x", (unsigned int)*p);
        else
            leakgate_buf__put(b, (const char *)p, len);
        p += len && !esc ? len : 1;
    }
}

bool
leakgate_util__name_plain(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        uint32_t cp;
        size_t len;

        if (*p >= 0x20 && *p < 0x7f && *p != '\\') {
            p++; /* printable ASCII: the usual name, no decoding */
            continue;
        }
        len = leakgate_util__utf8_seq(p, &cp);
        if (len == 0 || *p < 0x20 || *p == 0x7f || *p == '\\')
            return false;
        p += len;
    }
    return true;
}

size_t
leakgate_name_escape(char *out, size_t size, const char *name)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    size_t n = 0;

    leakgate_util__name_escape(&b, name);
    if (!b.failed && b.ptr)
        n = b.len;
    if (size > 0) {
        size_t k = n < size - 1 ? n : size - 1;

        if (k > 0)
            memcpy(out, b.ptr, k);
        out[k] = '\0';
    }
    leakgate_buf__dispose(&b);
    return n;
}

/* The next code point of *p (U+FFFD for a byte that is not UTF-8), and
 * *p past it; 0 at the end. */
static uint32_t
next_cp(const unsigned char **p)
{
    uint32_t cp;
    size_t len;

    if (!**p)
        return 0;
    len = leakgate_util__utf8_seq(*p, &cp);
    *p += len ? len : 1;
    return len ? cp : 0xfffd;
}

int
leakgate_names_same(const char *a, const char *b)
{
    const unsigned char *p = (const unsigned char *)a;
    const unsigned char *q = (const unsigned char *)b;
    uint32_t x, y;

    do {
        x = next_cp(&p);
        y = next_cp(&q);
    } while (x == y && x != 0);
    return x == y;
}

struct name_key {
    uint64_t hash;
    size_t i;
};

static int
name_key_cmp(const void *a, const void *b)
{
    const struct name_key *x = a, *y = b;

    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* FNV-1a over the code points of a name (next_cp()), bytes below 0x80
 * taken as they are. */
static uint64_t
name_hash(const char *name)
{
    const unsigned char *p = (const unsigned char *)name;
    uint64_t h = 1469598103934665603ull;
    uint32_t cp;

    for (;;) {
        if (*p && *p < 0x80)
            cp = *p++;
        else if ((cp = next_cp(&p)) == 0)
            break;
        h = (h ^ cp) * 1099511628211ull;
    }
    return h;
}

/* The slots of name_ordinals()'s set: a power of two > 2n. */
static size_t
set_slots(size_t n)
{
    size_t slots = 1;

    while (slots <= 2 * n)
        slots <<= 1;
    return slots;
}

/* Every hash of keys[n] differs (the usual registry): true when each goes
 * to a slot of set[] (zeroed, set_slots(n) of them) without meeting its
 * equal; a hash of 0 (0 marks a free slot) also answers false. */
static bool
hashes_differ(const struct name_key *keys, size_t n, uint64_t *set)
{
    size_t mask = set_slots(n) - 1;

    for (size_t i = 0; i < n; i++) {
        uint64_t h = keys[i].hash;
        size_t j = (size_t)(h ^ h >> 29) & mask;

        if (h == 0)
            return false;
        while (set[j] != 0) {
            if (set[j] == h)
                return false;
            j = (j + 1) & mask;
        }
        set[j] = h;
    }
    return true;
}

int
leakgate_util__name_ordinals(const char *const *names,
                             size_t n,
                             unsigned int *ordinals)
{
    struct name_key *keys;
    uint64_t *set;

    if (n == 0)
        return 0; /* qsort() takes no NULL array, even of 0 elements */
    if (n > SIZE_MAX / 64)
        return LEAKGATE_ENOMEM;
    /* The keys, then the set: one block. */
    keys =
        leakgate_util__calloc(1, n * sizeof *keys + set_slots(n) * sizeof *set);
    if (!keys)
        return LEAKGATE_ENOMEM;
    set = (uint64_t *)(keys + n);
    for (size_t i = 0; i < n; i++) {
        keys[i].hash = name_hash(names[i]);
        keys[i].i = i;
    }
    if (hashes_differ(keys, n, set)) {
        /* Names of different hashes differ: each is the first of its. */
        for (size_t i = 0; i < n; i++)
            ordinals[i] = 1;
        leakgate_util__free(keys);
        return 0;
    }
    qsort(keys, n, sizeof *keys, name_key_cmp);
    /* Names of one hash, in registration order: each counts the earlier
     * ones that are really the same. */
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;

        while (b < n && keys[b].hash == keys[a].hash)
            b++;
        for (size_t j = a; j < b; j++) {
            unsigned int ord = 1;

            for (size_t k = a; k < j; k++)
                ord += leakgate_names_same(names[keys[k].i],
                                           names[keys[j].i]) != 0;
            ordinals[keys[j].i] = ord;
        }
        a = b;
    }
    leakgate_util__free(keys);
    return 0;
}

static int
hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

bool
leakgate_util__name_unescape(struct leakgate_buf *b, const char *s, size_t n)
{
    size_t start = b->len;

    for (size_t i = 0; i < n; i++) {
        char c = s[i];

        if (c == '\\' && i + 1 < n && strchr("\\ntr", s[i + 1])) {
            c = s[i + 1] == 'n'   ? '\n'
                : s[i + 1] == 't' ? '\t'
                : s[i + 1] == 'r' ? '\r'
                                  : '\\';
            i++;
        } else if (c == '\\' && i + 3 < n && s[i + 1] == 'x' &&
                   hex_digit(s[i + 2]) >= 0 && hex_digit(s[i + 3]) >= 0) {
            c = (char)(hex_digit(s[i + 2]) * 16 + hex_digit(s[i + 3]));
            i += 3;
        } else if (c == '\\' || c == '\0') {
            b->len = start;
            if (b->ptr)
                b->ptr[start] = '\0';
            return false;
        }
        leakgate_buf__put(b, &c, 1);
    }
    return true;
}

char *
leakgate_util__human_bytes(char *out, size_t outsz, uint64_t bytes)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    double v = (double)bytes;
    size_t u = 0;

    if (bytes < 1024) {
        snprintf(out, outsz, "%llu B", (unsigned long long)bytes);
        return out;
    }
    v /= 1024.0;
    while (v >= 1024.0 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024.0;
        u++;
    }
    snprintf(out, outsz, "%.1f %s", v, units[u]);
    return out;
}

char *
leakgate_util__sanitize_name(const char *name)
{
    size_t n = strlen(name);
    char *out = leakgate_util__malloc(n + 2);

    if (!out)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                  (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';

        out[i] = ok ? c : '_';
    }
    out[n] = '\0';
    if (n == 0)
        memcpy(out, "_", 2);
    else if (out[0] == '.')
        out[0] = '_';
    return out;
}

char *
leakgate_util__group_digits(char *out,
                            size_t outsz,
                            uint64_t magnitude,
                            bool negative)
{
    char digits[24];
    int len =
        snprintf(digits, sizeof digits, "%llu", (unsigned long long)magnitude);
    size_t at = 0;

    if (negative && at + 1 < outsz)
        out[at++] = '-';
    for (int i = 0; i < len && at + 2 < outsz; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            out[at++] = ',';
        out[at++] = digits[i];
    }
    out[at] = '\0';
    return out;
}

char *
leakgate_util__group_signed(char *out, int64_t n)
{
    uint64_t mag = n < 0 ? (uint64_t)0 - (uint64_t)n : (uint64_t)n;

    return leakgate_util__group_digits(out, 32, mag, n < 0);
}

uint64_t
leakgate_util__fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

uint64_t
leakgate_util__hash_bytes(uint64_t h, const void *p, size_t n)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull;
    const unsigned char *s = p;
    uint64_t w = 0;

    h = (h ^ n) * k; /* the length too: a text is not its prefix */
    for (; n >= 8; n -= 8, s += 8) {
        memcpy(&w, s, 8);
        h = (h ^ w) * k;
        h ^= h >> 29;
    }
    w = 0;
    memcpy(&w, s, n);
    h = (h ^ w) * k;
    return h ^ (h >> 32);
}

const char *
leakgate_util__base_name(const char *path)
{
    const char *slash = path ? strrchr(path, '/') : NULL;

    return slash ? slash + 1 : path;
}

void *
leakgate_util__map_zeroed(size_t bytes, bool reserve_only)
{
    void *p = leakgate_heap__map(bytes);

    if (p)
        return p;
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | (reserve_only ? MAP_NORESERVE : 0),
             -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void
leakgate_util__map_reset(void *p, size_t bytes)
{
    if (p && bytes)
        (void)madvise(p, bytes, MADV_DONTNEED);
}
