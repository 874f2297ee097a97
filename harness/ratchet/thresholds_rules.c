/* SPDX-License-Identifier: MIT */
/*
 * thresholds_rules: the stack rules leakgate writes (see
 * thresholds_rules.h).  The report's suggestion and the ratchet both
 * call leakgate_thresholds__need_window(), so a printed suggestion and
 * a merge of the same results name the same frames and the same limits.
 */
#include "thresholds_rules.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "yamledit.h"

size_t
leakgate_thresholds__index(const void *p,
                           const void *base,
                           size_t n,
                           size_t size)
{
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)base;

    if (!base || !p || a < b || (a - b) / size >= n)
        return SIZE_MAX;
    return (a - b) / size;
}

static bool
is_allocator(const struct leakgate_frame *f, const struct leakgate_config *cfg)
{
    for (size_t i = 0; f->function && cfg && i < cfg->nallocators; i++) {
        if (strcmp(cfg->allocators[i], f->function) == 0 ||
            leakgate_util__glob_match(cfg->allocators[i], f->function))
            return true;
    }
    return false;
}

static void
shown(const struct leakgate_vstack *s, size_t *begin, size_t *end)
{
    *begin = s->shown_begin;
    *end = s->shown_end;
    if (*end > s->nframes || *begin >= *end) {
        *begin = 0;
        *end = s->nframes;
    }
}

/* The first frame above the allocation wrappers at the inner end of
 * [begin, end) (system frames under a wrapper go with it), or begin. */
static size_t
past_allocators(const struct leakgate_vstack *s,
                size_t begin,
                size_t end,
                const struct leakgate_config *cfg)
{
    size_t cut = begin;

    for (size_t k = begin; k < end; k++) {
        const struct leakgate_frame *f = &s->frames[k];

        if (is_allocator(f, cfg))
            cut = k + 1;
        else if (!leakgate_symbolize__system_frame(f))
            break;
    }
    return cut < end ? cut : begin;
}

void
leakgate_thresholds__trim_allocators(struct leakgate_vstack *s,
                                     const struct leakgate_config *cfg)
{
    size_t begin, end;

    if (!s->frames || !cfg || cfg->nallocators == 0)
        return;
    shown(s, &begin, &end);
    s->shown_begin = past_allocators(s, begin, end, cfg);
    s->shown_end = end;
}

size_t
leakgate_thresholds__rule_names(const char **out,
                                const struct leakgate_vstack *s,
                                const struct leakgate_config *cfg)
{
    size_t begin, end, n = 0;

    if (!s->frames)
        return 0;
    shown(s, &begin, &end);
    for (size_t k = past_allocators(s, begin, end, cfg); k < end; k++) {
        const struct leakgate_frame *f = &s->frames[k];

        /* A system library's names depend on its debug information
         * (__GI___strdup or strdup): never part of a rule. */
        if (!f->function || leakgate_symbolize__system_frame(f))
            continue;
        if (n > 0 && strcmp(out[n - 1], f->function) == 0)
            continue;
        out[n++] = f->function;
    }
    return n;
}

bool
leakgate_thresholds__exclusive(const struct leakgate_config_entry *e,
                               const char *name)
{
    return e && (strcmp(e->pattern, name) == 0 ||
                 leakgate_util__glob_specificity(e->pattern) == SIZE_MAX);
}

bool
leakgate_thresholds__need_init(struct leakgate_tneed *t,
                               const struct leakgate_config_entry *entry)
{
    memset(t, 0, sizeof *t);
    t->entry = entry;
    if (entry && entry->nstacks > 0) {
        t->raise = leakgate_util__calloc(entry->nstacks, sizeof *t->raise);
        return t->raise != NULL;
    }
    return true;
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* names (innermost first, n of them) against a rule's (outer to inner):
 * <0, 0, >0 as strcmp, comparing outer to inner. */
static int
cmp_names(const char *const *names, size_t n, const struct leakgate_trule *r)
{
    size_t m = n < r->nnames ? n : r->nnames;

    for (size_t k = 0; k < m; k++) {
        int c = strcmp(names[n - 1 - k], r->names[k]);

        if (c)
            return c;
    }
    return (n > r->nnames) - (n < r->nnames);
}

/* The rule with these names (innermost first), added in name order when
 * new: the same file whatever order windows come in.  NULL on ENOMEM. */
static struct leakgate_trule *
rule_for(struct leakgate_tneed *t, const char *const *names, size_t n)
{
    size_t lo = 0, hi = t->nrules;
    const char **copy;

    while (lo < hi) { /* binary search: windows add up to 10^5 rules */
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_names(names, n, &t->rules[mid]);

        if (c == 0)
            return &t->rules[mid];
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    if (t->nrules == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        struct leakgate_trule *v =
            leakgate_util__realloc(t->rules, cap * sizeof *v);

        if (!v)
            return NULL;
        t->rules = v;
        t->cap = cap;
    }
    copy = leakgate_util__calloc(n, sizeof *copy);
    if (!copy)
        return NULL;
    for (size_t k = 0; k < n; k++)
        copy[k] = names[n - 1 - k];
    memmove(&t->rules[lo + 1], &t->rules[lo],
            (t->nrules - lo) * sizeof *t->rules);
    t->rules[lo] = (struct leakgate_trule){copy, n, 0, 0};
    t->nrules++;
    return &t->rules[lo];
}

/* The index of a judged rule in the target entry, or SIZE_MAX. */
static size_t
entry_rule(const struct leakgate_tneed *t,
           const struct leakgate_config_stack_rule *r)
{
    return t->entry ? leakgate_thresholds__index(r, t->entry->stacks,
                                                 t->entry->nstacks, sizeof *r)
                    : SIZE_MAX;
}

/* A counted stack of a window that a new rule could govern (no rule of the
 * target entry took it), with its rule names. */
struct named {
    const char **names; /* innermost first */
    size_t n;
    uint64_t bytes;
    bool over;
};

/* Outermost name first, as rules are ordered (cmp_names). */
static int
by_names(const void *a, const void *b)
{
    const struct named *x = a, *y = b;
    size_t m = x->n < y->n ? x->n : y->n;

    for (size_t k = 0; k < m; k++) {
        int c = strcmp(x->names[x->n - 1 - k], y->names[y->n - 1 - k]);

        if (c)
            return c;
    }
    return (x->n > y->n) - (x->n < y->n);
}

static size_t
all_frames(const struct leakgate_verdict *v)
{
    size_t n = 1;

    for (size_t i = 0; i < v->nstacks; i++)
        n += v->stacks[i].nframes;
    return n;
}

/* Stacks with the same names make one rule, when one of them is over:
 * its limit is the largest of them, its count how many it covers.  The
 * stacks are sorted by names once (a window may have 10^5 of them). */
static bool
add_rules(struct leakgate_tneed *t, struct named *all, size_t n)
{
    qsort(all, n, sizeof *all, by_names);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        uint64_t most = 0;
        bool over = false;
        struct leakgate_trule *r;

        for (; j < n && by_names(&all[i], &all[j]) == 0; j++) {
            most = max_u64(most, all[j].bytes);
            over |= all[j].over;
        }
        if (over) {
            r = rule_for(t, all[i].names, all[i].n);
            if (!r)
                return false;
            r->limit = max_u64(r->limit, most);
            if (j - i > r->nstacks)
                r->nstacks = j - i;
        }
        i = j;
    }
    return true;
}

bool
leakgate_thresholds__need_window(
    struct leakgate_tneed *t,
    const struct leakgate_verdict *v,
    const struct leakgate_policy_stack_verdict *per,
    const struct leakgate_policy_verdict *pol,
    const struct leakgate_config *cfg)
{
    const char **names = leakgate_util__calloc(all_frames(v), sizeof *names);
    struct named *all = leakgate_util__calloc(v->nstacks + 1, sizeof *all);
    size_t used = 0, nall = 0;
    bool ok = names && all;

    for (size_t i = 0; ok && i < v->nstacks; i++) {
        uint64_t bytes = (uint64_t)v->stacks[i].bytes;
        size_t j = entry_rule(t, per[i].rule), n;

        if (per[i].over && j != SIZE_MAX) {
            t->raise[j] = max_u64(t->raise[j], bytes);
            continue;
        }
        if (!per[i].judged || per[i].ignored || j != SIZE_MAX)
            continue;
        n = leakgate_thresholds__rule_names(names + used, &v->stacks[i], cfg);
        if (n == 0) {
            if (per[i].over) {
                t->set_stack = true;
                t->stack_limit = max_u64(t->stack_limit, bytes);
            }
            continue;
        }
        all[nall++] = (struct named){names + used, n, bytes, per[i].over};
        used += n;
    }
    ok = ok && add_rules(t, all, nall);
    if (ok && pol->total_over) {
        t->set_total = true;
        t->total_limit = max_u64(t->total_limit, pol->total_bytes);
    }
    leakgate_util__free(names);
    leakgate_util__free(all);
    return ok;
}

#define PEAK_FLOOR ((uint64_t)4096)
#define PEAK_SHIFT 4 /* headroom: peak / 16 */
#define KIB ((uint64_t)1024)

uint64_t
leakgate_thresholds__peak_allowance(uint64_t peak)
{
    uint64_t room = max_u64(PEAK_FLOOR, peak >> PEAK_SHIFT);
    uint64_t top = UINT64_MAX - UINT64_MAX % KIB; /* the largest whole KiB */

    if (peak >= top - room)
        return top;
    /* Whole KiB: the file says `peak_limit: 2176 KiB`, not a byte count
     * that looks measured to the byte. */
    return (peak + room + KIB - 1) / KIB * KIB;
}

void
leakgate_thresholds__need_peak(struct leakgate_tneed *t, uint64_t peak_bytes)
{
    t->set_peak = true;
    t->peak_bytes = max_u64(t->peak_bytes, peak_bytes);
}

void
leakgate_thresholds__need_dispose(struct leakgate_tneed *t)
{
    for (size_t i = 0; i < t->nrules; i++)
        leakgate_util__free(t->rules[i].names);
    leakgate_util__free(t->rules);
    leakgate_util__free(t->raise);
    memset(t, 0, sizeof *t);
}

void
leakgate_thresholds__put_key(struct leakgate_buf *b, const char *name)
{
    struct leakgate_buf g = LEAKGATE_BUF_INIT;
    bool plain_quotes = true;

    leakgate_util__glob_escape(&g, name);
    for (const char *p = g.ptr ? g.ptr : ""; *p; p++) {
        unsigned char c = (unsigned char)*p;

        if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f)
            plain_quotes = false;
    }
    if (plain_quotes)
        leakgate_buf__printf(b, "\"%s\"", g.ptr ? g.ptr : "");
    else
        leakgate_yamledit__put_scalar(b, g.ptr ? g.ptr : "");
    b->failed |= g.failed;
    leakgate_buf__dispose(&g);
}

void
leakgate_thresholds__put_glob(struct leakgate_buf *b, const char *name)
{
    struct leakgate_buf g = LEAKGATE_BUF_INIT;

    leakgate_util__glob_escape(&g, name);
    leakgate_yamledit__put_scalar(b, g.ptr ? g.ptr : "");
    b->failed |= g.failed;
    leakgate_buf__dispose(&g);
}
