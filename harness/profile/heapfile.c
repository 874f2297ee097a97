/* SPDX-License-Identifier: MIT */
/*
 * heapfile: parse jemalloc's heap_v2 text profile into a struct
 * leakgate_heap.  Core stage 1 (snapshot -> diff -> ...): a pure function
 * of a buffer, no I/O, no globals.  The format, line by line, is in
 * docs/internals/heap-format.md.
 *
 * Two passes over the text keep the result in one allocation:
 * 1. prescan() splits lines, enforces max_size, max_line and max_stacks
 *    and counts upper bounds of stacks, pcs, thread lines, mappings and
 *    string bytes;
 * 2. one block is allocated for the heap and all its arrays, and
 *    parse_line() runs a strict state machine that fills it.
 * Then the stacks are sorted and checked for duplicates.  Every read goes
 * through a cursor bounded by the end of its line, and lines are bounded
 * by `len`, so the text need not be NUL-terminated.
 */
#include "heapfile.h"

#include <assert.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

#define DEFAULT_MAX_SIZE ((size_t)1 << 30)
#define DEFAULT_MAX_LINE ((size_t)64 << 10)
#define DEFAULT_MAX_FRAMES ((size_t)256)
#define DEFAULT_MAX_STACKS ((size_t)4000000)

/* The unread part of one line; err holds the first problem found. */
struct cursor {
    const char *p;
    const char *end;
    const char *start; /* the line, for columns and excerpts */
    char err[96];      /* "" while all is well */
};

/* Upper bounds found by prescan(), to size the one block. */
struct bounds {
    size_t stacks, pcs, threads, maps, strbytes;
};

enum state {
    S_MAGIC,         /* heap_v2/<period> */
    S_TOTALS,        /* the header's t*: line */
    S_HEADER,        /* header tN:, a record, or the blank line */
    S_RECORD_TOTALS, /* the t*: line of the record just opened */
    S_RECORD,        /* record tN:, the next record, or the blank line */
    S_MAPPED,        /* MAPPED_LIBRARIES: */
    S_MAPS,          /* /proc/self/maps lines until the end */
};

struct parser {
    const char *name;
    size_t lineno;
    struct leakgate_heap_limits lim;
    enum state state;
    struct leakgate_heap *heap;
    /* Writable views of the block; counts live in *heap. */
    struct leakgate_heap_stack *stacks;
    uintptr_t *pcs;
    size_t npcs;
    struct leakgate_heap_thread *threads;
    size_t nthreads;
    struct leakgate_heap_mapping *maps;
    char *str;
    size_t nstr;
};

/* Set "NAME:LINE: <fmt>" as the error detail and return code. */
static int __attribute__((format(printf, 3, 4)))
fail(const struct parser *ps, int code, const char *fmt, ...)
{
    char what[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return leakgate_error__set(code, "%s:%zu: %s", ps->name, ps->lineno, what);
}

/* Record the first error of a line; later cursor calls do nothing. */
static void __attribute__((format(printf, 2, 3)))
cfail(struct cursor *c, const char *fmt, ...)
{
    va_list ap;

    if (c->err[0])
        return;
    va_start(ap, fmt);
    vsnprintf(c->err, sizeof c->err, fmt, ap); /* never "" */
    va_end(ap);
}

/* Report a cursor error with its column and an excerpt of the line. */
static int
fail_at(const struct parser *ps, const struct cursor *c)
{
    char shown[41];
    size_t n = (size_t)(c->end - c->start), i;

    if (n > sizeof shown - 1)
        n = sizeof shown - 1;
    for (i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)c->start[i];
        shown[i] = (ch >= 0x20 && ch < 0x7f && ch != '"') ? (char)ch : '?';
    }
    shown[n] = '\0';
    return fail(ps, LEAKGATE_EFORMAT, "%s at column %zu in \"%s%s\"", c->err,
                (size_t)(c->p - c->start) + 1, shown,
                (size_t)(c->end - c->start) > n ? "..." : "");
}

static bool
starts_with(const struct cursor *c, const char *s)
{
    const char *p = c->p;

    /* Literals are short: a loop beats strlen() + memcmp() calls. */
    for (; *s; s++, p++) {
        if (p == c->end || *p != *s)
            return false;
    }
    return true;
}

static void
lit(struct cursor *c, const char *s)
{
    if (c->err[0])
        return;
    if (!starts_with(c, s)) {
        cfail(c, "expected '%s'", s);
        return;
    }
    while (*s++)
        c->p++;
}

static void
eol(struct cursor *c)
{
    if (!c->err[0] && c->p != c->end)
        cfail(c, "unexpected text");
}

static uint64_t
dec(struct cursor *c)
{
    uint64_t v = 0;
    const char *first = c->p;

    if (c->err[0])
        return 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');

        if (v > (UINT64_MAX - d) / 10) {
            c->p = first;
            cfail(c, "number overflows uint64");
            return 0;
        }
        v = v * 10 + d;
        c->p++;
    }
    if (c->p == first)
        cfail(c, "expected a decimal number");
    return v;
}

/* Value + 1 of each hex digit; 0 for other characters. */
static const unsigned char hex_digit[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
    ['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
    ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
    ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/* Hex digits without a prefix, at least one, value <= UINTPTR_MAX. */
static uintptr_t
hex(struct cursor *c)
{
    uintptr_t v = 0;
    const char *first = c->p;

    if (c->err[0])
        return 0;
    for (; c->p < c->end; c->p++) {
        unsigned d = hex_digit[(unsigned char)*c->p];

        if (d == 0)
            break;
        if (v > (UINTPTR_MAX >> 4)) {
            c->p = first;
            cfail(c, "hex number overflows an address");
            return 0;
        }
        v = (v << 4) | (d - 1);
    }
    if (c->p == first)
        cfail(c, "expected a hex number");
    return v;
}

/* `objs: bytes [accobjs: accbytes]`; the accumulated pair is checked and
 * dropped (it stays [0: 0] unless prof_accum is on). */
static void
counts(struct cursor *c, uint64_t *objs, uint64_t *bytes)
{
    *objs = dec(c);
    lit(c, ": ");
    *bytes = dec(c);
    lit(c, " [");
    (void)dec(c);
    lit(c, ": ");
    (void)dec(c);
    lit(c, "]");
}

/* Copy n bytes into the string area; NUL bytes are a format error. */
static const char *
keep_string(struct parser *ps, struct cursor *c, const char *s, size_t n)
{
    char *out = ps->str + ps->nstr;

    if (memchr(s, '\0', n)) {
        cfail(c, "NUL byte");
        return NULL;
    }
    memcpy(out, s, n);
    out[n] = '\0';
    ps->nstr += n + 1;
    return out;
}

static int
parse_magic(struct parser *ps, struct cursor *c)
{
    uint64_t period;

    lit(c, "heap_v2/");
    if (c->err[0])
        return fail(ps, LEAKGATE_EFORMAT,
                    "expected 'heap_v2/<sample period>' (not a jemalloc "
                    "heap_v2 profile)");
    period = dec(c);
    eol(c);
    if (!c->err[0] && (period == 0 || (period & (period - 1)) != 0))
        cfail(c, "sample period %llu is not a power of two",
              (unsigned long long)period);
    if (c->err[0])
        return fail_at(ps, c);
    ps->heap->sample_period = period;
    ps->state = S_TOTALS;
    return 0;
}

/* The `  t*: counts` line of the header or of the record just opened. */
static int
parse_tstar(struct parser *ps, struct cursor *c, bool record)
{
    struct leakgate_heap *h = ps->heap;
    uint64_t *objs = &h->total_objs, *bytes = &h->total_bytes;

    if (!starts_with(c, "  t*: "))
        return fail(ps, LEAKGATE_EFORMAT,
                    "expected %s '  t*: <objs>: <bytes> [<objs>: <bytes>]'",
                    record ? "the record's totals after its '@' line,"
                           : "the header totals");
    if (record) {
        objs = &ps->stacks[h->nstacks - 1].live_objs;
        bytes = &ps->stacks[h->nstacks - 1].live_bytes;
    }
    c->p += 6;
    counts(c, objs, bytes);
    eol(c);
    if (c->err[0])
        return fail_at(ps, c);
    ps->state = record ? S_RECORD : S_HEADER;
    return 0;
}

/* `  tN: counts`, plus ` <name>` on header lines. */
static int
parse_thread(struct parser *ps, struct cursor *c, bool header)
{
    struct leakgate_heap_thread *t = &ps->threads[ps->nthreads];

    c->p += 3; /* "  t" */
    t->tid = dec(c);
    lit(c, ": ");
    counts(c, &t->live_objs, &t->live_bytes);
    t->name = NULL;
    if (header && !c->err[0] && c->p < c->end) {
        lit(c, " "); /* then the name: the rest of the line, maybe "" */
        if (!c->err[0])
            t->name = keep_string(ps, c, c->p, (size_t)(c->end - c->p));
        if (t->name)
            c->p = c->end;
    }
    eol(c);
    if (c->err[0])
        return fail_at(ps, c);
    ps->nthreads++;
    if (header)
        ps->heap->nthreads++;
    else
        ps->stacks[ps->heap->nstacks - 1].nthreads++;
    return 0;
}

/* One return address: "0x<hex>", or "0" (how printf's %#x prints 0). */
static uintptr_t
address(struct cursor *c)
{
    uintptr_t v = 0;

    if (starts_with(c, "0x")) {
        c->p += 2;
        v = hex(c);
    } else if (starts_with(c, "0")) {
        c->p++;
    } else {
        cfail(c, "expected a 0x address");
    }
    if (!c->err[0] && c->p < c->end && *c->p != ' ')
        cfail(c, "bad character in address");
    return v;
}

static int
parse_record(struct parser *ps, struct cursor *c)
{
    struct leakgate_heap_stack *s = &ps->stacks[ps->heap->nstacks];
    uintptr_t *pcs = ps->pcs + ps->npcs, pc;
    size_t n = 0;

    c->p++; /* "@" */
    do {
        lit(c, " ");
        pc = address(c);
        if (c->err[0])
            return fail_at(ps, c);
        if (n == ps->lim.max_frames)
            return fail(ps, LEAKGATE_ETOOBIG,
                        "stack deeper than max_frames (%zu)",
                        ps->lim.max_frames);
        pcs[n++] = pc; /* n <= the spaces prescan() counted */
    } while (c->p < c->end);
    s->pcs = pcs;
    s->npcs = n;
    s->threads = ps->threads + ps->nthreads;
    s->nthreads = 0;
    ps->npcs += n;
    ps->heap->nstacks++;
    ps->state = S_RECORD_TOTALS;
    return 0;
}

/* In the header or a record: a thread line, a record or the blank line. */
static int
parse_body(struct parser *ps, struct cursor *c)
{
    if (c->p == c->end) {
        ps->state = S_MAPPED;
        return 0;
    }
    if (*c->p == '@')
        return parse_record(ps, c);
    if (starts_with(c, "  t") && !starts_with(c, "  t*"))
        return parse_thread(ps, c, ps->state == S_HEADER);
    return fail(ps, LEAKGATE_EFORMAT,
                "expected a thread line '  tN: ...', a record '@ 0x...' or "
                "the blank line before MAPPED_LIBRARIES:");
}

static int
parse_mapped(struct parser *ps, struct cursor *c)
{
    lit(c, "MAPPED_LIBRARIES:");
    eol(c);
    if (c->err[0])
        return fail(ps, LEAKGATE_EFORMAT,
                    "expected 'MAPPED_LIBRARIES:' after the blank line");
    ps->state = S_MAPS;
    return 0;
}

static void
perms(struct cursor *c, char out[5])
{
    static const char allowed[4][3] = {"r-", "w-", "x-", "ps"};

    for (size_t i = 0; i < 4 && !c->err[0]; i++) {
        if (c->p == c->end || *c->p == '\0' || !strchr(allowed[i], *c->p)) {
            cfail(c, "expected permissions like 'r-xp'");
            return;
        }
        out[i] = *c->p++;
    }
    out[4] = '\0';
}

/* start-end perms offset dev inode [path]  (a /proc/self/maps line) */
static int
parse_map(struct parser *ps, struct cursor *c)
{
    struct leakgate_heap_mapping *m = &ps->maps[ps->heap->nmaps];

    m->start = hex(c);
    lit(c, "-");
    m->end = hex(c);
    if (!c->err[0] && m->end <= m->start)
        cfail(c, "mapping ends before it starts");
    lit(c, " ");
    perms(c, m->perms);
    lit(c, " ");
    m->offset = hex(c);
    lit(c, " ");
    (void)hex(c); /* device major:minor */
    lit(c, ":");
    (void)hex(c);
    lit(c, " ");
    (void)dec(c); /* inode */
    if (c->p < c->end)
        lit(c, " ");
    while (c->p < c->end && *c->p == ' ')
        c->p++;
    if (!c->err[0])
        m->path = keep_string(ps, c, c->p, (size_t)(c->end - c->p));
    if (c->err[0])
        return fail_at(ps, c);
    ps->heap->nmaps++;
    return 0;
}

static int
parse_line(struct parser *ps, struct cursor *c)
{
    switch (ps->state) {
    case S_MAGIC: return parse_magic(ps, c);
    case S_TOTALS: return parse_tstar(ps, c, false);
    case S_HEADER:
    case S_RECORD: return parse_body(ps, c);
    case S_RECORD_TOTALS: return parse_tstar(ps, c, true);
    case S_MAPPED: return parse_mapped(ps, c);
    case S_MAPS: return parse_map(ps, c);
    }
    return LEAKGATE_ERROR;
}

/* What end of file interrupted, per state (S_MAPS is a complete file). */
static const char *const truncated_in[] = {
    [S_MAGIC] = "'heap_v2/<sample period>'",
    [S_TOTALS] = "the header totals '  t*: ...'",
    [S_HEADER] = "the records and MAPPED_LIBRARIES:",
    [S_RECORD_TOTALS] = "the record's '  t*: ...' line",
    [S_RECORD] = "the blank line and MAPPED_LIBRARIES:",
    [S_MAPPED] = "'MAPPED_LIBRARIES:'",
    [S_MAPS] = "",
};

static size_t
count_spaces(const char *p, size_t n)
{
    size_t k = 0;

    for (size_t i = 0; i < n; i++)
        k += p[i] == ' ';
    return k;
}

/* Pass 1: split lines, enforce the line and record limits, and bound the
 * sizes of the arrays. */
static int
prescan(struct parser *ps, struct bounds *b, const char *text, size_t len)
{
    const char *p = text, *end = text + len, *nl;
    bool in_records = false;

    memset(b, 0, sizeof *b);
    for (ps->lineno = 1; p < end; ps->lineno++, p = nl + 1) {
        size_t n;

        nl = memchr(p, '\n', (size_t)(end - p));
        n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        if (n > ps->lim.max_line)
            return fail(ps, LEAKGATE_ETOOBIG,
                        "line longer than max_line (%zu bytes)",
                        ps->lim.max_line);
        if (!nl)
            return fail(ps, LEAKGATE_EFORMAT,
                        "truncated: the last line has no newline");
        if (n > 0 && *p == '@') {
            if (++b->stacks > ps->lim.max_stacks)
                return fail(ps, LEAKGATE_ETOOBIG,
                            "more records than max_stacks (%zu)",
                            ps->lim.max_stacks);
            b->pcs += count_spaces(p, n);
            in_records = true;
        } else if (n >= 3 && memcmp(p, "  t", 3) == 0) {
            b->threads++;
            b->strbytes += in_records ? 0 : n + 1;
        } else {
            b->maps++;
            b->strbytes += n + 1;
        }
    }
    return 0;
}

/* Reserve n elements of size elem at the next aligned offset of *total;
 * false on overflow. */
static bool
place(size_t *total, size_t *off, size_t n, size_t elem)
{
    size_t align = _Alignof(max_align_t);
    size_t at = (*total + align - 1) / align * align;

    if (at < *total || n > (SIZE_MAX - at) / elem)
        return false;
    *off = at;
    *total = at + n * elem;
    return true;
}

/* Allocate the heap and all its arrays as one block, sized by b. */
static int
allocate(struct parser *ps, const struct bounds *b)
{
    size_t total = sizeof(struct leakgate_heap);
    size_t o_stacks, o_pcs, o_threads, o_maps, o_str;
    struct leakgate_heap *h;
    char *block;

    if (!place(&total, &o_stacks, b->stacks, sizeof *ps->stacks) ||
        !place(&total, &o_pcs, b->pcs, sizeof *ps->pcs) ||
        !place(&total, &o_threads, b->threads, sizeof *ps->threads) ||
        !place(&total, &o_maps, b->maps, sizeof *ps->maps) ||
        !place(&total, &o_str, b->strbytes, 1))
        return leakgate_error__set(LEAKGATE_ENOMEM, "%s: heap too large",
                                   ps->name);
    /* Not calloc: every array element is written before it is read, and
     * fresh zeroed pages cost more than the parse for large dumps. */
    block = leakgate_util__malloc(total);
    if (!block)
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "%s: out of memory for %zu bytes", ps->name,
                                   total);
    ps->stacks = (void *)(block + o_stacks);
    ps->pcs = (void *)(block + o_pcs);
    ps->threads = (void *)(block + o_threads);
    ps->maps = (void *)(block + o_maps);
    ps->str = block + o_str;
    h = (void *)block;
    memset(h, 0, sizeof *h);
    h->stacks = ps->stacks;
    h->threads = ps->threads;
    h->maps = ps->maps;
    h->priv = block;
    ps->heap = h;
    return 0;
}

/* Pass 2: every line through the state machine. */
static int
parse_all(struct parser *ps, const char *text, size_t len)
{
    const char *p = text, *end = text + len, *nl;
    struct cursor c;
    int err;

    ps->state = S_MAGIC;
    for (ps->lineno = 1; p < end; ps->lineno++, p = nl + 1) {
        /* prescan() saw a newline at the end of every line. */
        nl = memchr(p, '\n', (size_t)(end - p));
        c.p = c.start = p;
        c.end = nl;
        c.err[0] = '\0';
        err = parse_line(ps, &c);
        if (err)
            return err;
    }
    if (ps->state != S_MAPS)
        return fail(ps, LEAKGATE_EFORMAT,
                    "truncated: expected %s before the end of the file",
                    truncated_in[ps->state]);
    return 0;
}

int
leakgate_heapfile__cmp_pcs(const uintptr_t *a,
                           size_t na,
                           const uintptr_t *b,
                           size_t nb)
{
    size_t n = na < nb ? na : nb;

    for (size_t i = 0; i < n; i++) {
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    }
    return (na > nb) - (na < nb);
}

/* By pcs, then file order (pcs are laid out in file order). */
static int
cmp_stacks(const void *a, const void *b)
{
    const struct leakgate_heap_stack *x = a, *y = b;
    int c = leakgate_heapfile__cmp_pcs(x->pcs, x->npcs, y->pcs, y->npcs);

    if (c)
        return c;
    return (x->pcs > y->pcs) - (x->pcs < y->pcs);
}

/* Line number of the record whose pcs are at `pcs` (error path only). */
static size_t
record_line(const struct parser *ps,
            const char *text,
            size_t len,
            const uintptr_t *pcs)
{
    const struct leakgate_heap *h = ps->heap;
    size_t k = 0, line = 1;

    for (size_t i = 0; i < h->nstacks; i++)
        k += h->stacks[i].pcs < pcs;
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '@' && (i == 0 || text[i - 1] == '\n') && k-- == 0)
            break;
        line += text[i] == '\n';
    }
    return line;
}

static int
check_unique(struct parser *ps, const char *text, size_t len)
{
    const struct leakgate_heap_stack *s = ps->heap->stacks;

    for (size_t i = 1; i < ps->heap->nstacks; i++) {
        if (leakgate_heapfile__cmp_pcs(s[i - 1].pcs, s[i - 1].npcs, s[i].pcs,
                                       s[i].npcs) == 0) {
            ps->lineno = record_line(ps, text, len, s[i].pcs);
            return fail(ps, LEAKGATE_EFORMAT,
                        "the same stack is recorded twice");
        }
    }
    return 0;
}

static void
init_limits(struct leakgate_heap_limits *lim,
            const struct leakgate_heap_limits *given)
{
    memset(lim, 0, sizeof *lim);
    if (given)
        *lim = *given;
    lim->max_size = lim->max_size ? lim->max_size : DEFAULT_MAX_SIZE;
    lim->max_line = lim->max_line ? lim->max_line : DEFAULT_MAX_LINE;
    lim->max_frames = lim->max_frames ? lim->max_frames : DEFAULT_MAX_FRAMES;
    lim->max_stacks = lim->max_stacks ? lim->max_stacks : DEFAULT_MAX_STACKS;
}

int
leakgate_heapfile__parse(struct leakgate_heap **out,
                         const char *text,
                         size_t len,
                         const char *name,
                         const struct leakgate_heap_limits *limits)
{
    struct parser ps;
    struct bounds b;
    int err;

    assert(out && (text || len == 0));
    memset(&ps, 0, sizeof ps);
    text = text ? text : ""; /* no arithmetic on NULL */
    ps.name = name ? name : "<heap>";
    init_limits(&ps.lim, limits);
    *out = NULL;
    if (len > ps.lim.max_size) {
        err = leakgate_error__set(LEAKGATE_ETOOBIG,
                                  "%s: %zu bytes exceed max_size (%zu bytes)",
                                  ps.name, len, ps.lim.max_size);
        goto cleanup;
    }
    err = prescan(&ps, &b, text, len);
    if (!err)
        err = allocate(&ps, &b);
    if (!err)
        err = parse_all(&ps, text, len);
    if (err)
        goto cleanup;
    qsort(ps.stacks, ps.heap->nstacks, sizeof *ps.stacks, cmp_stacks);
    err = check_unique(&ps, text, len);
    if (err)
        goto cleanup;
    *out = ps.heap;
    ps.heap = NULL;
cleanup:
    leakgate_heapfile__free(ps.heap);
    return err;
}

void
leakgate_heapfile__free(struct leakgate_heap *heap)
{
    /* The heap is the start of its one block (see allocate()). */
    leakgate_util__free(heap);
}
