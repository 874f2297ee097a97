/* SPDX-License-Identifier: MIT */
/*
 * compare: the rows of two runs compared test by test, and what makes a
 * row a regression (see compare.h).  Core: verdicts in, rows out; the
 * renderings are in compare_render.c.  No I/O, no globals.
 *
 * A regression is judged on what the two runs measured, never on their
 * verdicts: retained bytes that grew (always), a retained stack the base
 * did not have (new_stacks), a peak or an allocation count above the
 * base's by more than a percentage and a floor.  Windows not measured on
 * one side (a note-only record) are listed, not judged; peaks are
 * compared only where both sides measured them.
 */
#include "compare.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "util.h"

/* Defaults of the options (leakgate/compare.h). */
#define DEFAULT_PEAK_PCT 10u
#define DEFAULT_PEAK_FLOOR ((uint64_t)4096)
#define DEFAULT_ALLOC_PCT 20u
#define DEFAULT_ALLOC_FLOOR ((uint64_t)16)

/* "10%", "10" or "off" into *on and *pct; false when malformed.  Percentages
 * up to 1,000,000 (a 10,000x growth). */
static bool
parse_pct(bool *on, unsigned int *pct, const char *text)
{
    char *end;
    unsigned long v;

    if (strcmp(text, "off") == 0) {
        *on = false;
        return true;
    }
    if (text[0] < '0' || text[0] > '9')
        return false;
    errno = 0;
    v = strtoul(text, &end, 10);
    if (errno != 0 || v > 1000000 || (*end != '\0' && strcmp(end, "%") != 0))
        return false;
    *on = true;
    *pct = (unsigned int)v;
    return true;
}

static bool
parse_count(uint64_t *out, const char *text)
{
    char *end;
    unsigned long long v;

    if (text[0] < '0' || text[0] > '9')
        return false;
    errno = 0;
    v = strtoull(text, &end, 10);
    if (errno != 0 || *end != '\0')
        return false;
    *out = v;
    return true;
}

int
leakgate_compare__limits(struct leakgate_compare_limits *out,
                         const struct leakgate_compare_options *o)
{
    *out = (struct leakgate_compare_limits){
        true, DEFAULT_PEAK_PCT,  DEFAULT_PEAK_FLOOR,
        true, DEFAULT_ALLOC_PCT, DEFAULT_ALLOC_FLOOR,
        false};
    if (!o)
        return 0;
    out->new_stacks = o->new_stacks != 0;
    if (o->peak_growth &&
        !parse_pct(&out->peak_on, &out->peak_pct, o->peak_growth))
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "--peak-growth: '%s' is not a percentage "
                                   "(e.g. 10%%) or 'off'",
                                   o->peak_growth);
    if (o->alloc_growth &&
        !parse_pct(&out->alloc_on, &out->alloc_pct, o->alloc_growth))
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "--alloc-growth: '%s' is not a percentage "
                                   "(e.g. 20%%) or 'off'",
                                   o->alloc_growth);
    if (o->peak_floor &&
        !leakgate_config__parse_size(&out->peak_floor, o->peak_floor))
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "--peak-floor: '%s' is not a size (e.g. "
                                   "4 KiB)",
                                   o->peak_floor);
    if (o->alloc_floor && !parse_count(&out->alloc_floor, o->alloc_floor))
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "--alloc-floor: '%s' is not a number of "
                                   "allocations",
                                   o->alloc_floor);
    return 0;
}

bool
leakgate_compare__stack_key(struct leakgate_buf *b,
                            const struct leakgate_vstack *s)
{
    if (!s->frames || s->shown_end <= s->shown_begin)
        return false;
    for (size_t k = s->shown_begin; k < s->shown_end; k++) {
        const char *fn = s->frames[k].function;

        leakgate_buf__puts(b, k > s->shown_begin ? ";" : "");
        leakgate_buf__puts(b, fn ? fn : "??");
    }
    return true;
}

bool
leakgate_compare__counted(const struct leakgate_vstack *s)
{
    return s->bytes > 0 && s->judgement.judged && !s->judgement.ignored;
}

/* True when base has a counted stack with key (a NUL-terminated text). */
static bool
base_has(const struct leakgate_verdict *base, const char *key)
{
    bool found = false;

    for (size_t i = 0; i < base->nstacks && !found; i++) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        if (leakgate_compare__counted(&base->stacks[i]) &&
            leakgate_compare__stack_key(&b, &base->stacks[i]) && b.ptr)
            found = strcmp(b.ptr, key) == 0;
        leakgate_buf__dispose(&b);
    }
    return found;
}

/* The head's counted stacks (symbolized) that the base did not retain.
 * False on ENOMEM. */
static bool
find_new_stacks(struct leakgate_compare_row *row)
{
    const struct leakgate_verdict *h = row->head;

    row->new_stacks = NULL;
    row->nnew_stacks = 0;
    for (size_t i = 0; i < h->nstacks; i++) {
        struct leakgate_buf key = LEAKGATE_BUF_INIT;
        bool is_new = leakgate_compare__counted(&h->stacks[i]) &&
                      leakgate_compare__stack_key(&key, &h->stacks[i]);

        if (key.failed)
            return false;
        is_new =
            is_new && key.ptr && (!row->base || !base_has(row->base, key.ptr));
        leakgate_buf__dispose(&key);
        if (!is_new)
            continue;
        if (!row->new_stacks) {
            row->new_stacks =
                leakgate_util__calloc(h->nstacks, sizeof *row->new_stacks);
            if (!row->new_stacks)
                return false;
        }
        row->new_stacks[row->nnew_stacks++] = &h->stacks[i];
    }
    return true;
}

static uint64_t
udiff(uint64_t a, uint64_t b)
{
    return a > b ? a - b : b - a;
}

/* head > base by more than pct percent of base and by at least floor. */
static bool
grew(uint64_t base, uint64_t head, unsigned int pct, uint64_t floor)
{
    if (head <= base || head - base < floor)
        return false;
    /* head - base > base * pct / 100; long double holds any uint64_t
     * product of these exactly enough (64-bit mantissa). */
    return (long double)(head - base) * 100.0L > (long double)base * pct;
}

static bool
measured(const struct leakgate_verdict *v)
{
    return v && v->measured;
}

static bool
peaks(const struct leakgate_compare_row *r)
{
    return measured(r->base) && measured(r->head) && r->base->peak_known &&
           r->head->peak_known;
}

/* Judge one row: its why bits, changed, and its sort keys. */
static void
judge_row(struct leakgate_compare_row *r,
          const struct leakgate_compare_limits *l)
{
    const struct leakgate_verdict *b = r->base, *h = r->head;
    uint64_t rb = measured(b) ? b->policy.total_bytes : 0;
    uint64_t rh = measured(h) ? h->policy.total_bytes : 0;

    r->why = 0;
    if (measured(h) && rh > rb && (measured(b) || !b))
        r->why |= LEAKGATE_COMPARE_WHY_RETAINED;
    if (l->new_stacks && r->nnew_stacks > 0 && (measured(b) || !b))
        r->why |= LEAKGATE_COMPARE_WHY_NEW_STACK;
    r->size = udiff(rb, rh);
    r->allocs = 0;
    if (peaks(r)) {
        if (l->peak_on &&
            grew(b->peak_bytes, h->peak_bytes, l->peak_pct, l->peak_floor))
            r->why |= LEAKGATE_COMPARE_WHY_PEAK;
        if (l->alloc_on &&
            grew(b->allocations, h->allocations, l->alloc_pct, l->alloc_floor))
            r->why |= LEAKGATE_COMPARE_WHY_ALLOCS;
        if (udiff(b->peak_bytes, h->peak_bytes) > r->size)
            r->size = udiff(b->peak_bytes, h->peak_bytes);
        r->allocs = udiff(b->allocations, h->allocations);
    } else if (!b && h && h->peak_known) {
        r->size = h->peak_bytes > r->size ? h->peak_bytes : r->size;
        r->allocs = h->allocations;
    }
    r->changed = !b || !h || r->size > 0 || r->allocs > 0 ||
                 r->nnew_stacks > 0 || b->measured != h->measured ||
                 b->peak_known != h->peak_known;
}

/* Windows are one by origin and name: the same test name in two
 * binaries of one shared output is two windows. */
static int
same_window(const struct leakgate_compare_row *a,
            const struct leakgate_compare_row *b)
{
    int c = strcmp(a->origin, b->origin);

    return c != 0 ? c : strcmp(a->name, b->name);
}

static int
cmp_rows(const void *x, const void *y)
{
    const struct leakgate_compare_row *a = x, *b = y;

    if ((a->why != 0) != (b->why != 0))
        return a->why ? -1 : 1;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    if (a->allocs != b->allocs)
        return a->allocs > b->allocs ? -1 : 1;
    return same_window(a, b);
}

static int
cmp_names(const void *x, const void *y)
{
    const struct leakgate_compare_row *a = x, *b = y;
    int c = same_window(a, b);

    /* one window at most once per run: the base's row first */
    return c != 0 ? c : (a->head != NULL) - (b->head != NULL);
}

/* Pair the rows of one name (a base row followed by a head row, sorted
 * by name) into one; returns the rows left.  Cannot fail. */
static size_t
pair_rows(struct leakgate_compare_row *rows, size_t n)
{
    size_t m = 0;

    qsort(rows, n, sizeof *rows, cmp_names);
    for (size_t i = 0; i < n; i++) {
        if (m > 0 && rows[m - 1].base && !rows[m - 1].head && rows[i].head &&
            same_window(&rows[m - 1], &rows[i]) == 0) {
            rows[m - 1].head = rows[i].head;
            rows[m - 1].name = rows[i].head->name;
            continue;
        }
        rows[m++] = rows[i];
    }
    return m;
}

static void
count_rows(struct leakgate_compare *c)
{
    c->nregressions = c->nchanged = c->nnew = c->nremoved = 0;
    c->nunchanged = 0;
    for (size_t i = 0; i < c->n; i++) {
        const struct leakgate_compare_row *r = &c->rows[i];

        c->nregressions += r->why != 0;
        c->nnew += !r->base;
        c->nremoved += !r->head;
        c->nchanged += r->base && r->head && r->changed && !r->why;
        c->nunchanged += !r->changed;
    }
}

int
leakgate_compare__build(struct leakgate_compare *c,
                        const struct leakgate_verdict *const *base,
                        size_t nbase,
                        const struct leakgate_verdict *const *head,
                        size_t nhead)
{
    struct leakgate_compare_row *rows =
        leakgate_util__calloc(nbase + nhead + 1, sizeof *rows);
    size_t n = 0;

    if (!rows)
        return leakgate_error__set(LEAKGATE_ENOMEM, "compare");
    /* Sorted by name and paired: a run of thousands of tests compares in
     * n log n, not n^2 name lookups. */
    for (size_t i = 0; i < nbase; i++)
        rows[n++] = (struct leakgate_compare_row){
            .origin = leakgate_verdict__origin(base[i]),
            .name = base[i]->name,
            .base = base[i]};
    for (size_t i = 0; i < nhead; i++)
        rows[n++] = (struct leakgate_compare_row){
            .origin = leakgate_verdict__origin(head[i]),
            .name = head[i]->name,
            .head = head[i]};
    n = pair_rows(rows, n);
    c->rows = rows;
    c->n = n;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].head && !find_new_stacks(&rows[i])) {
            leakgate_compare__dispose(c);
            return leakgate_error__set(LEAKGATE_ENOMEM, "compare");
        }
        judge_row(&rows[i], &c->lim);
    }
    qsort(rows, n, sizeof *rows, cmp_rows);
    count_rows(c);
    return 0;
}

void
leakgate_compare__dispose(struct leakgate_compare *c)
{
    for (size_t i = 0; i < c->n; i++)
        leakgate_util__free(c->rows[i].new_stacks);
    leakgate_util__free(c->rows);
    leakgate_util__free(c->base_name);
    leakgate_util__free(c->head_name);
    leakgate_util__free(c->head_thresholds);
    leakgate_util__free(c->warning);
    c->head_thresholds = c->warning = NULL;
    c->rows = NULL;
    c->n = 0;
    c->base_name = c->head_name = NULL;
}
