/* SPDX-License-Identifier: MIT */
/*
 * thresholds: accept what failed (see thresholds.h).  One round of
 * acceptance gathers, per target entry, what each failing window needs,
 * then turns that into edits of the file:
 *
 * - The target of a window is the entry that names it exactly (a tests
 *   entry "suite/test", a suites entry "suite" for a suite's own window).
 *   When the entry that applied is a glob shared with other tests, a new
 *   exact entry is written instead, repeating the glob entry's settings
 *   and rules (only the most specific entry applies to a window).
 * - A stack over a rule of the target entry raises that rule's limit in
 *   place; any other stack over its limit gets a new rule naming the
 *   outermost and innermost functions of its shown frames (the same
 *   names the failure report suggests), or, without function names,
 *   raises the entry's stack_limit.  A total over its cap raises the
 *   entry's total_limit.
 * - A peak over its peak_limit sets the target's peak_limit to the peak
 *   plus headroom (leakgate_thresholds__peak_allowance()), the largest
 *   such peak when several processes measured the window.  Only windows
 *   that were over a peak_limit get one: a file without peak limits
 *   stays without them (`peak_limit: 0` in defaults, or --peak-limit 0,
 *   records every window's peak).
 *
 * New rules go after the entry's existing rules, which none of the
 * accepted stacks matched; in a new entry they go before the repeated
 * rules.  A new rule may also capture stacks that used stack_limit
 * before: the next round (thresholds_file.c) raises it if they need more.
 */
#include "thresholds.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

/* ---- gathering what each target must allow --------------------------- */

struct target {
    bool suite;       /* a suites entry (a suite's own window) */
    const char *name; /* "suite/test", or the suite name */
    const struct leakgate_config_entry *carry; /* shadowed glob entry */
    struct leakgate_tneed need; /* need.entry: the exact entry, or NULL */
};

struct gather {
    struct target *t;
    size_t n, cap;
};

static struct target *
target_for(struct gather *g, const struct leakgate_twin *w)
{
    bool suite = w->test == NULL;
    const char *name = suite ? w->v->suite : w->v->name;
    const struct leakgate_config_entry *win =
        suite ? w->set.suite_entry : w->set.test_entry;
    bool own = leakgate_thresholds__exclusive(win, name);
    struct target *t;

    for (size_t i = 0; i < g->n; i++) {
        if (g->t[i].suite == suite && strcmp(g->t[i].name, name) == 0)
            return &g->t[i];
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 8;
        struct target *v = leakgate_util__realloc(g->t, cap * sizeof *v);

        if (!v)
            return NULL;
        g->t = v;
        g->cap = cap;
    }
    t = &g->t[g->n];
    memset(t, 0, sizeof *t);
    t->suite = suite;
    t->name = name;
    t->carry = own ? NULL : win;
    g->n++;
    if (!leakgate_thresholds__need_init(&t->need, own ? win : NULL))
        return NULL;
    return t;
}

static void
gather_dispose(struct gather *g)
{
    for (size_t i = 0; i < g->n; i++)
        leakgate_thresholds__need_dispose(&g->t[i].need);
    leakgate_util__free(g->t);
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* ---- fragments ------------------------------------------------------- */

static struct leakgate_ynode *
scalar_of(struct leakgate_buf *b)
{
    struct leakgate_ynode *nd =
        b->failed ? NULL
                  : leakgate_yamledit__frag(LEAKGATE_YNODE_SCALAR,
                                            b->ptr ? b->ptr : "");

    leakgate_buf__dispose(b);
    return nd;
}

static struct leakgate_ynode *
size_frag(uint64_t bytes)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_yamledit__put_size(&b, bytes);
    return scalar_of(&b);
}

/* A glob that matches exactly name, as YAML. */
static struct leakgate_ynode *
exact_glob_frag(const char *name)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    leakgate_thresholds__put_glob(&b, name);
    return scalar_of(&b);
}

/* A stacks rule: frames (YAML sources, or names glob-escaped here when
 * names is set), `exact: true` when exact, and its limit. */
static struct leakgate_ynode *
rule_frag(char *const *globs,
          const char *const *names,
          size_t n,
          bool exact,
          uint64_t limit)
{
    struct leakgate_ynode *map =
        leakgate_yamledit__frag(LEAKGATE_YNODE_MAP, NULL);
    struct leakgate_ynode *seq =
        leakgate_yamledit__frag(LEAKGATE_YNODE_SEQ, NULL);

    if (!map || !seq) {
        leakgate_yamledit__frag_free(map);
        leakgate_yamledit__frag_free(seq);
        return NULL;
    }
    seq->flow = true;
    for (size_t k = 0; k < n; k++) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        if (names) {
            leakgate_yamledit__frag_push(seq, exact_glob_frag(names[k]));
            continue;
        }
        leakgate_yamledit__put_scalar(&b, globs[k]);
        leakgate_yamledit__frag_push(seq, scalar_of(&b));
    }
    leakgate_yamledit__frag_put(map, "frames", seq);
    if (exact)
        leakgate_yamledit__frag_put(
            map, "exact",
            leakgate_yamledit__frag(LEAKGATE_YNODE_SCALAR, "true"));
    leakgate_yamledit__frag_put(map, "limit", size_frag(limit));
    return map;
}

static struct leakgate_ynode *
new_rule_frag(const struct leakgate_trule *r, uint64_t limit)
{
    return rule_frag(NULL, r->names, r->nnames, true, limit);
}

static void
put_rule_names(struct leakgate_buf *b, const struct leakgate_trule *r)
{
    leakgate_buf__puts(b, "[");
    for (size_t k = 0; k < r->nnames; k++) {
        leakgate_buf__puts(b, k ? ", " : "");
        leakgate_buf__puts(b, r->names[k]);
    }
    leakgate_buf__puts(b, "]");
}

static void
line_start(struct leakgate_treport *rep,
           const char *verb,
           const struct leakgate_tstate *st,
           const struct leakgate_config_entry *e)
{
    leakgate_thresholds__verb(rep, verb);
    leakgate_thresholds__describe(&rep->lines, st, e);
    leakgate_buf__puts(&rep->lines, ": ");
}

/* ---- edits of an existing entry -------------------------------------- */

static void
raise_rules(struct leakgate_yedits *e,
            struct leakgate_treport *rep,
            const struct leakgate_tstate *st,
            const struct target *t,
            const struct leakgate_ynode *val)
{
    const struct leakgate_ynode *seq =
        leakgate_yamledit__get(val, "stacks", NULL);
    char a[32], b[32];

    const struct leakgate_tneed *nd = &t->need;

    for (size_t j = 0; nd->raise && j < nd->entry->nstacks; j++) {
        const struct leakgate_config_stack_rule *r = &nd->entry->stacks[j];
        const struct leakgate_ynode *lim;
        struct leakgate_buf src = LEAKGATE_BUF_INIT;

        if (nd->raise[j] <= r->limit)
            continue;
        lim = seq && j < seq->n
                  ? leakgate_yamledit__get(&seq->items[j], "limit", NULL)
                  : NULL;
        if (!lim) {
            e->broken = "a stacks rule is not where the file says";
            return;
        }
        leakgate_yamledit__put_size(&src, nd->raise[j]);
        leakgate_yamledit__set_scalar(e, lim, src.ptr ? src.ptr : "0");
        e->failed |= src.failed;
        leakgate_buf__dispose(&src);
        line_start(rep, "raised", st, nd->entry);
        leakgate_buf__puts(&rep->lines, "stacks rule ");
        leakgate_thresholds__frames(&rep->lines, r->frames, r->nframes);
        leakgate_buf__printf(&rep->lines, " (line %u): limit %s -> %s\n",
                             r->line,
                             leakgate_thresholds__bytes(a, 32, r->limit),
                             leakgate_thresholds__bytes(b, 32, nd->raise[j]));
        rep->changes++;
    }
}

/* "(peak 2,097,152 B + headroom)": why a peak_limit is what it is. */
static const char *
peak_note(char *out, size_t size, const struct target *t)
{
    char a[32];

    snprintf(out, size, "(peak %s + headroom)",
             leakgate_thresholds__bytes(a, 32, t->need.peak_bytes));
    return out;
}

/* Set `key` (a size) in an entry: replace it when present, else add it. */
static void
set_limit(struct leakgate_yedits *e,
          struct leakgate_treport *rep,
          const struct leakgate_tstate *st,
          const struct leakgate_config_entry *entry,
          const struct leakgate_ynode *val,
          const char *key,
          bool had,
          uint64_t old,
          uint64_t now,
          const char *note)
{
    const struct leakgate_ynode *cur = leakgate_yamledit__get(val, key, NULL);
    struct leakgate_buf src = LEAKGATE_BUF_INIT;
    char a[32], b[32];

    if (had && now <= old)
        return;
    leakgate_yamledit__put_size(&src, now);
    if (cur && !src.failed)
        leakgate_yamledit__set_scalar(e, cur, src.ptr);
    else
        leakgate_yamledit__map_add(e, val, key, scalar_of(&src));
    leakgate_buf__dispose(&src);
    line_start(rep, had ? "raised" : "added", st, entry);
    if (had)
        leakgate_buf__printf(&rep->lines, "%s %s -> %s", key,
                             leakgate_thresholds__bytes(a, 32, old),
                             leakgate_thresholds__bytes(b, 32, now));
    else
        leakgate_buf__printf(&rep->lines, "%s %s", key,
                             leakgate_thresholds__bytes(b, 32, now));
    leakgate_buf__printf(&rep->lines, "%s%s\n", note ? " " : "",
                         note ? note : "");
    rep->changes++;
}

static struct leakgate_ynode *
new_rules_seq(const struct target *t)
{
    struct leakgate_ynode *seq =
        leakgate_yamledit__frag(LEAKGATE_YNODE_SEQ, NULL);

    for (size_t i = 0; seq && i < t->need.nrules; i++)
        leakgate_yamledit__frag_push(
            seq, new_rule_frag(&t->need.rules[i], t->need.rules[i].limit));
    return seq;
}

static void
report_new_rules(struct leakgate_treport *rep,
                 const struct leakgate_tstate *st,
                 const struct target *t)
{
    char a[32];

    for (size_t i = 0; i < t->need.nrules; i++) {
        const struct leakgate_trule *r = &t->need.rules[i];

        if (t->need.entry) {
            line_start(rep, "added", st, t->need.entry);
        } else {
            leakgate_thresholds__verb(rep, "added");
            leakgate_buf__printf(&rep->lines, "%s ",
                                 t->suite ? "suites" : "tests");
            leakgate_thresholds__put_key(&rep->lines, t->name);
            leakgate_buf__puts(&rep->lines, " (new entry): ");
        }
        leakgate_buf__puts(&rep->lines, "stacks rule ");
        put_rule_names(&rep->lines, r);
        leakgate_buf__printf(&rep->lines, " limit %s",
                             leakgate_thresholds__bytes(a, 32, r->limit));
        if (r->nstacks > 1)
            leakgate_buf__printf(&rep->lines,
                                 " (covers %zu stacks, each "
                                 "up to the limit)",
                                 r->nstacks);
        leakgate_buf__puts(&rep->lines, "\n");
        rep->changes++;
    }
}

static void
emit_existing(struct leakgate_yedits *e,
              struct leakgate_treport *rep,
              const struct leakgate_tstate *st,
              const struct target *t)
{
    const struct leakgate_config_entry *en = t->need.entry;
    const struct leakgate_ynode *val =
        leakgate_thresholds__entry_node(st, en, NULL, NULL);
    const struct leakgate_ynode *seq;

    if (!val || val->kind != LEAKGATE_YNODE_MAP) {
        e->broken = "an entry is not where the file says";
        return;
    }
    raise_rules(e, rep, st, t, val);
    if (t->need.set_stack)
        set_limit(e, rep, st, en, val, "stack_limit", en->has_stack_limit,
                  en->stack_limit, t->need.stack_limit, NULL);
    if (t->need.set_total)
        set_limit(e, rep, st, en, val, "total_limit",
                  en->has_total_limit && !en->total_unlimited, en->total_limit,
                  t->need.total_limit, NULL);
    if (t->need.set_peak) {
        char note[64];

        set_limit(e, rep, st, en, val, "peak_limit",
                  en->has_peak_limit && !en->peak_unlimited, en->peak_limit,
                  leakgate_thresholds__peak_allowance(t->need.peak_bytes),
                  peak_note(note, sizeof note, t));
    }
    if (t->need.nrules == 0)
        return;
    seq = leakgate_yamledit__get(val, "stacks", NULL);
    if (seq && seq->kind == LEAKGATE_YNODE_SEQ) {
        for (size_t i = 0; i < t->need.nrules; i++)
            leakgate_yamledit__seq_add(
                e, seq,
                new_rule_frag(&t->need.rules[i], t->need.rules[i].limit));
    } else {
        leakgate_yamledit__map_add(e, val, "stacks", new_rules_seq(t));
    }
    report_new_rules(rep, st, t);
}

/* ---- new entries ----------------------------------------------------- */

/* r, glob-escaped, is the carried rule c (an exact rule with the same
 * frames). */
static bool
same_rule(const struct leakgate_trule *r,
          const struct leakgate_config_stack_rule *c)
{
    bool same = c->exact && c->nframes == r->nnames;

    for (size_t k = 0; same && k < r->nnames; k++) {
        struct leakgate_buf g = LEAKGATE_BUF_INIT;

        leakgate_util__glob_escape(&g, r->names[k]);
        same = g.ptr && strcmp(g.ptr, c->frames[k]) == 0;
        leakgate_buf__dispose(&g);
    }
    return same;
}

/* The scalar settings of the shadowed entry, as written there. */
static void
carry_settings(struct leakgate_ynode *map,
               const struct leakgate_tstate *st,
               const struct target *t)
{
    const struct leakgate_ynode *val =
        leakgate_thresholds__entry_node(st, t->carry, NULL, NULL);

    for (size_t i = 0; val && i + 1 < val->n; i += 2) {
        const struct leakgate_ynode *k = &val->items[i],
                                    *v = &val->items[i + 1];
        struct leakgate_buf src = LEAKGATE_BUF_INIT, key = LEAKGATE_BUF_INIT;

        if (v->kind != LEAKGATE_YNODE_SCALAR ||
            strcmp(k->text, "stacks") == 0 ||
            (t->need.set_stack && strcmp(k->text, "stack_limit") == 0) ||
            (t->need.set_total && strcmp(k->text, "total_limit") == 0) ||
            (t->need.set_peak && strcmp(k->text, "peak_limit") == 0))
            continue;
        if (memchr(st->text + v->start, '\n', v->end - v->start))
            leakgate_yamledit__put_scalar(&src, v->text);
        else
            leakgate_buf__put(&src, st->text + v->start, v->end - v->start);
        leakgate_yamledit__put_scalar(&key, k->text);
        if (key.ptr && !key.failed)
            leakgate_yamledit__frag_put(map, key.ptr, scalar_of(&src));
        else
            map->failed = true;
        leakgate_buf__dispose(&src);
        leakgate_buf__dispose(&key);
    }
}

/* New rules first (a repeated rule with the same frames is folded into
 * its new twin), then the shadowed entry's rules. */
static struct leakgate_ynode *
entry_rules(const struct target *t)
{
    const struct leakgate_config_entry *c = t->carry;
    struct leakgate_ynode *seq =
        leakgate_yamledit__frag(LEAKGATE_YNODE_SEQ, NULL);

    for (size_t i = 0; seq && i < t->need.nrules; i++) {
        const struct leakgate_trule *r = &t->need.rules[i];
        uint64_t limit = r->limit;

        for (size_t j = 0; c && j < c->nstacks; j++) {
            if (same_rule(r, &c->stacks[j]))
                limit = max_u64(limit, c->stacks[j].limit);
        }
        leakgate_yamledit__frag_push(seq, new_rule_frag(r, limit));
    }
    for (size_t j = 0; seq && c && j < c->nstacks; j++) {
        const struct leakgate_config_stack_rule *cr = &c->stacks[j];
        bool folded = false;

        for (size_t i = 0; i < t->need.nrules; i++)
            folded |= same_rule(&t->need.rules[i], cr);
        if (!folded)
            leakgate_yamledit__frag_push(
                seq,
                rule_frag(cr->frames, NULL, cr->nframes, cr->exact, cr->limit));
    }
    return seq;
}

static struct leakgate_ynode *
new_entry_frag(const struct leakgate_tstate *st, const struct target *t)
{
    struct leakgate_ynode *map =
        leakgate_yamledit__frag(LEAKGATE_YNODE_MAP, NULL);
    struct leakgate_ynode *rules;

    if (!map)
        return NULL;
    if (t->carry)
        carry_settings(map, st, t);
    if (t->need.set_stack)
        leakgate_yamledit__frag_put(map, "stack_limit",
                                    size_frag(t->need.stack_limit));
    if (t->need.set_total)
        leakgate_yamledit__frag_put(map, "total_limit",
                                    size_frag(t->need.total_limit));
    if (t->need.set_peak)
        leakgate_yamledit__frag_put(
            map, "peak_limit",
            size_frag(leakgate_thresholds__peak_allowance(t->need.peak_bytes)));
    rules = entry_rules(t);
    if (rules && rules->n == 0)
        leakgate_yamledit__frag_free(rules);
    else
        leakgate_yamledit__frag_put(map, "stacks", rules);
    return map;
}

static void
new_entry_line(struct leakgate_treport *rep, const struct target *t)
{
    leakgate_thresholds__verb(rep, "added");
    leakgate_buf__printf(&rep->lines, "%s ", t->suite ? "suites" : "tests");
    leakgate_thresholds__put_key(&rep->lines, t->name);
    leakgate_buf__puts(&rep->lines, " (new entry): ");
}

/* "added tests 'X' (new entry): KEY SIZE[ NOTE]" */
static void
new_limit_line(struct leakgate_treport *rep,
               const struct target *t,
               const char *key,
               uint64_t bytes,
               const char *note)
{
    char a[32];

    new_entry_line(rep, t);
    leakgate_buf__printf(&rep->lines, "%s %s%s%s\n", key,
                         leakgate_thresholds__bytes(a, sizeof a, bytes),
                         note ? " " : "", note ? note : "");
    rep->changes++;
}

static void
report_new_entry(struct leakgate_treport *rep,
                 const struct leakgate_tstate *st,
                 const struct target *t)
{
    char note[64];

    if (t->carry) {
        new_entry_line(rep, t);
        leakgate_buf__puts(&rep->lines, "repeats the settings of ");
        leakgate_thresholds__describe(&rep->lines, st, t->carry);
        leakgate_buf__puts(&rep->lines, ", which it replaces for this "
                                        "window\n");
    }
    if (t->need.set_stack)
        new_limit_line(rep, t, "stack_limit", t->need.stack_limit, NULL);
    if (t->need.set_total)
        new_limit_line(rep, t, "total_limit", t->need.total_limit, NULL);
    if (t->need.set_peak)
        new_limit_line(rep, t, "peak_limit",
                       leakgate_thresholds__peak_allowance(t->need.peak_bytes),
                       peak_note(note, sizeof note, t));
    report_new_rules(rep, st, t);
}

/* Every new entry of one section: added to the section's mapping (when
 * !create), or as the section's first entries (create: `tests:` empty or
 * absent).  All additions to existing sections come before new sections:
 * both may be at the end of the file, and an entry inserted there after a
 * new section would land in it. */
static void
emit_new(struct leakgate_yedits *e,
         struct leakgate_treport *rep,
         const struct leakgate_tstate *st,
         const struct gather *g,
         bool suite,
         bool create)
{
    const char *name = suite ? "suites" : "tests";
    const struct leakgate_ynode *top = leakgate_yamledit__top(&st->lay);
    size_t pair = 0;
    const struct leakgate_ynode *sec = leakgate_yamledit__get(top, name, &pair);
    bool into = sec && sec->kind == LEAKGATE_YNODE_MAP;
    struct leakgate_ynode *holder;

    if (create == into)
        return;
    holder = leakgate_yamledit__frag(LEAKGATE_YNODE_MAP, NULL);
    for (size_t i = 0; holder && i < g->n; i++) {
        const struct target *t = &g->t[i];
        struct leakgate_buf key = LEAKGATE_BUF_INIT;

        if (t->need.entry || t->suite != suite)
            continue;
        leakgate_thresholds__put_key(&key, t->name);
        if (key.failed || !key.ptr)
            e->failed = true;
        else if (into)
            leakgate_yamledit__map_add(e, sec, key.ptr, new_entry_frag(st, t));
        else
            leakgate_yamledit__frag_put(holder, key.ptr, new_entry_frag(st, t));
        leakgate_buf__dispose(&key);
        report_new_entry(rep, st, t);
    }
    if (!holder)
        e->failed = true;
    else if (holder->n == 0)
        leakgate_yamledit__frag_free(holder);
    else if (sec)
        leakgate_yamledit__set_null(e, top, pair, holder);
    else
        leakgate_yamledit__map_add(e, top, name, holder);
}

/* New entries in name order: the same file whatever order the windows
 * (or the result files of a merge) came in. */
static int
cmp_target(const void *a, const void *b)
{
    const struct target *x = a, *y = b;

    if (x->suite != y->suite)
        return x->suite ? 1 : -1;
    return strcmp(x->name, y->name);
}

void
leakgate_thresholds__accept(struct leakgate_yedits *e,
                            struct leakgate_treport *rep,
                            const struct leakgate_tstate *st)
{
    struct gather g = {NULL, 0, 0};

    for (size_t i = 0; i < st->nw; i++) {
        const struct leakgate_twin *w = &st->w[i];
        struct target *t;

        if (!w->judged || !leakgate_thresholds__failed(w))
            continue;
        t = target_for(&g, w);
        if (!t || !leakgate_thresholds__need_window(&t->need, w->v, w->per,
                                                    &w->pol, st->cfg))
            e->failed = true;
        else if (w->peak_over)
            leakgate_thresholds__need_peak(&t->need, w->v->peak_bytes);
    }
    if (g.n > 1)
        qsort(g.t, g.n, sizeof *g.t, cmp_target);
    for (size_t i = 0; i < g.n; i++) {
        if (g.t[i].need.entry)
            emit_existing(e, rep, st, &g.t[i]);
    }
    emit_new(e, rep, st, &g, false, false);
    emit_new(e, rep, st, &g, true, false);
    emit_new(e, rep, st, &g, false, true);
    emit_new(e, rep, st, &g, true, true);
    gather_dispose(&g);
}
