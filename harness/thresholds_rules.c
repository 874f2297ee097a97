/* SPDX-License-Identifier: MIT */
/*
 * thresholds_rules: the stack rules leakgate writes (see
 * thresholds_rules.h).  The report's suggestion and the ratchet both
 * call leakgate_thresholds__need_window(), so a printed suggestion and
 * a merge of the same results name the same frames and the same limits.
 */
#include "thresholds_rules.h"

#include <string.h>

#include "util.h"
#include "yamledit.h"

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
        else if (!leakgate_verdict__system_frame(f))
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
        if (!f->function || leakgate_verdict__system_frame(f))
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
    size_t at = 0;
    struct leakgate_trule *v;
    const char **copy;

    for (; at < t->nrules; at++) {
        int c = cmp_names(names, n, &t->rules[at]);

        if (c == 0)
            return &t->rules[at];
        if (c < 0)
            break;
    }
    copy = leakgate_util__calloc(n, sizeof *copy);
    v = copy ? leakgate_util__realloc(t->rules, (t->nrules + 1) * sizeof *v)
             : NULL;
    if (!v) {
        leakgate_util__free(copy);
        return NULL;
    }
    t->rules = v;
    for (size_t k = 0; k < n; k++)
        copy[k] = names[n - 1 - k];
    memmove(&v[at + 1], &v[at], (t->nrules - at) * sizeof *v);
    v[at] = (struct leakgate_trule){copy, n, 0, 0};
    t->nrules++;
    return &v[at];
}

/* The index of a judged rule in the target entry, or SIZE_MAX. */
static size_t
entry_rule(const struct leakgate_tneed *t,
           const struct leakgate_config_stack_rule *r)
{
    if (!t->entry || !r || r < t->entry->stacks ||
        r >= t->entry->stacks + t->entry->nstacks)
        return SIZE_MAX;
    return (size_t)(r - t->entry->stacks);
}

/* Every counted stack of v with these names that a new rule would govern
 * (no rule of the target entry took it): the rule's limit and count. */
static void
cover(struct leakgate_trule *r,
      const struct leakgate_tneed *t,
      const struct leakgate_verdict *v,
      const struct leakgate_policy_stack_verdict *per,
      const struct leakgate_config *cfg,
      const char **scratch)
{
    size_t count = 0;

    for (size_t i = 0; i < v->nstacks; i++) {
        size_t n;

        if (!per[i].judged || per[i].ignored || v->stacks[i].bytes <= 0 ||
            entry_rule(t, per[i].rule) != SIZE_MAX)
            continue;
        n = leakgate_thresholds__rule_names(scratch, &v->stacks[i], cfg);
        if (n == 0 || cmp_names(scratch, n, r) != 0)
            continue;
        r->limit = max_u64(r->limit, (uint64_t)v->stacks[i].bytes);
        count++;
    }
    if (count > r->nstacks)
        r->nstacks = count;
}

static size_t
most_frames(const struct leakgate_verdict *v)
{
    size_t most = 1;

    for (size_t i = 0; i < v->nstacks; i++)
        most = v->stacks[i].nframes > most ? v->stacks[i].nframes : most;
    return most;
}

bool
leakgate_thresholds__need_window(
    struct leakgate_tneed *t,
    const struct leakgate_verdict *v,
    const struct leakgate_policy_stack_verdict *per,
    const struct leakgate_policy_verdict *pol,
    const struct leakgate_config *cfg)
{
    const char **names = leakgate_util__calloc(most_frames(v), sizeof *names);
    const char **scratch =
        leakgate_util__calloc(most_frames(v), sizeof *scratch);
    bool ok = names && scratch;

    for (size_t i = 0; ok && i < v->nstacks; i++) {
        uint64_t bytes = (uint64_t)v->stacks[i].bytes;
        size_t j = entry_rule(t, per[i].rule), n;
        struct leakgate_trule *r;

        if (!per[i].over)
            continue;
        if (j != SIZE_MAX) {
            t->raise[j] = max_u64(t->raise[j], bytes);
            continue;
        }
        n = leakgate_thresholds__rule_names(names, &v->stacks[i], cfg);
        if (n == 0) {
            t->set_stack = true;
            t->stack_limit = max_u64(t->stack_limit, bytes);
            continue;
        }
        r = rule_for(t, names, n);
        ok = r != NULL;
        if (ok)
            cover(r, t, v, per, cfg, scratch);
    }
    if (ok && pol->total_over) {
        t->set_total = true;
        t->total_limit = max_u64(t->total_limit, pol->total_bytes);
    }
    leakgate_util__free(names);
    leakgate_util__free(scratch);
    return ok;
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
