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

/* ---- naming a stack -------------------------------------------------- */

/* A function name that exists wherever the program is built: not a
 * system library's internal alias (__GI___strdup), which only resolves
 * where that library's debug information is installed. */
static bool
portable_name(const struct leakgate_frame *f)
{
    return f->function && !(leakgate_verdict__system_frame(f) &&
                            strncmp(f->function, "__", 2) == 0);
}

/* The outermost and innermost portable names of the shown frames (inner
 * NULL when it is the same name, outer NULL when there is none). */
static void
stack_names(const char **outer,
            const char **inner,
            const struct leakgate_vstack *s)
{
    size_t begin = s->shown_begin, end = s->shown_end;

    *outer = *inner = NULL;
    if (!s->frames)
        return;
    if (end > s->nframes || begin >= end) {
        begin = 0;
        end = s->nframes;
    }
    for (size_t k = end; k-- > begin && !*outer;) {
        if (portable_name(&s->frames[k]))
            *outer = s->frames[k].function;
    }
    for (size_t k = begin; k < end && !*inner; k++) {
        if (portable_name(&s->frames[k]))
            *inner = s->frames[k].function;
    }
    if (*outer && strcmp(*outer, *inner) == 0)
        *inner = NULL;
}

/* ---- gathering what each target must allow --------------------------- */

struct nrule {
    const char *outer; /* exact function names (borrowed from a verdict) */
    const char *inner; /* NULL: a one-frame rule */
    uint64_t limit;
};

struct target {
    bool suite;       /* a suites entry (a suite's own window) */
    const char *name; /* "suite/test", or the suite name */
    const struct leakgate_config_entry *entry; /* exact entry, or NULL */
    const struct leakgate_config_entry *carry; /* shadowed glob entry */
    struct nrule *rules;
    size_t nrules;
    uint64_t *raise; /* per rule of entry: new limit, 0 = unchanged */
    bool set_stack, set_total;
    uint64_t stack_limit, total_limit;
};

struct gather {
    struct target *t;
    size_t n, cap;
};

static bool
exclusive(const struct leakgate_config_entry *e, const char *name)
{
    return e && (strcmp(e->pattern, name) == 0 ||
                 leakgate_util__glob_specificity(e->pattern) == SIZE_MAX);
}

static struct target *
target_for(struct gather *g, const struct leakgate_twin *w)
{
    bool suite = w->test == NULL;
    const char *name = suite ? w->v->suite : w->v->name;
    const struct leakgate_config_entry *win =
        suite ? w->set.suite_entry : w->set.test_entry;
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
    t->entry = exclusive(win, name) ? win : NULL;
    t->carry = t->entry ? NULL : win;
    if (t->entry && t->entry->nstacks > 0) {
        t->raise = leakgate_util__calloc(t->entry->nstacks, sizeof *t->raise);
        if (!t->raise)
            return NULL;
    }
    g->n++;
    return t;
}

static uint64_t
max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static bool
add_rule(struct target *t, const char *outer, const char *inner, uint64_t n)
{
    struct nrule *r;

    for (size_t i = 0; i < t->nrules; i++) {
        r = &t->rules[i];
        if (strcmp(r->outer, outer) == 0 &&
            (r->inner == inner ||
             (r->inner && inner && strcmp(r->inner, inner) == 0))) {
            r->limit = max_u64(r->limit, n);
            return true;
        }
    }
    r = leakgate_util__realloc(t->rules, (t->nrules + 1) * sizeof *r);
    if (!r)
        return false;
    t->rules = r;
    t->rules[t->nrules++] = (struct nrule){outer, inner, n};
    return true;
}

/* What one failing window needs from its target. */
static bool
gather_window(struct target *t, const struct leakgate_twin *w)
{
    const struct leakgate_verdict *v = w->v;

    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_config_stack_rule *r = w->per[i].rule;
        uint64_t bytes = (uint64_t)v->stacks[i].bytes;
        const char *outer, *inner;
        size_t j = SIZE_MAX;

        if (!w->per[i].over)
            continue;
        if (t->entry)
            j = leakgate_thresholds__index(r, t->entry->stacks,
                                           t->entry->nstacks, sizeof *r);
        if (j != SIZE_MAX) {
            t->raise[j] = max_u64(t->raise[j], bytes);
            continue;
        }
        stack_names(&outer, &inner, &v->stacks[i]);
        if (outer && !add_rule(t, outer, inner, bytes))
            return false;
        if (!outer) {
            t->set_stack = true;
            t->stack_limit = max_u64(t->stack_limit, bytes);
        }
    }
    if (w->pol.total_over) {
        t->set_total = true;
        t->total_limit = max_u64(t->total_limit, w->pol.total_bytes);
    }
    return true;
}

static void
gather_dispose(struct gather *g)
{
    for (size_t i = 0; i < g->n; i++) {
        leakgate_util__free(g->t[i].rules);
        leakgate_util__free(g->t[i].raise);
    }
    leakgate_util__free(g->t);
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
    struct leakgate_buf g = LEAKGATE_BUF_INIT, b = LEAKGATE_BUF_INIT;

    leakgate_util__glob_escape(&g, name);
    leakgate_yamledit__put_scalar(&b, g.ptr ? g.ptr : "");
    b.failed |= g.failed;
    leakgate_buf__dispose(&g);
    return scalar_of(&b);
}

static struct leakgate_ynode *
rule_frag(char *const *globs,
          const char *outer,
          const char *inner,
          size_t n,
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
    for (size_t k = 0; globs && k < n; k++) {
        struct leakgate_buf b = LEAKGATE_BUF_INIT;

        leakgate_yamledit__put_scalar(&b, globs[k]);
        leakgate_yamledit__frag_push(seq, scalar_of(&b));
    }
    if (!globs) {
        leakgate_yamledit__frag_push(seq, exact_glob_frag(outer));
        if (inner)
            leakgate_yamledit__frag_push(seq, exact_glob_frag(inner));
    }
    leakgate_yamledit__frag_put(map, "frames", seq);
    leakgate_yamledit__frag_put(map, "limit", size_frag(limit));
    return map;
}

static void
put_rule_names(struct leakgate_buf *b, const struct nrule *r)
{
    leakgate_buf__printf(b, "[%s%s%s]", r->outer, r->inner ? ", " : "",
                         r->inner ? r->inner : "");
}

/* A new entry's key: the exact name, glob-escaped, always quoted. */
static void
put_key(struct leakgate_buf *b, const char *name)
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

static void
line_start(struct leakgate_treport *rep,
           const char *verb,
           const struct leakgate_tstate *st,
           const struct leakgate_config_entry *e)
{
    leakgate_buf__printf(&rep->lines, "  %-9s ", verb);
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

    for (size_t j = 0; t->raise && j < t->entry->nstacks; j++) {
        const struct leakgate_config_stack_rule *r = &t->entry->stacks[j];
        const struct leakgate_ynode *lim;
        struct leakgate_buf src = LEAKGATE_BUF_INIT;

        if (t->raise[j] <= r->limit)
            continue;
        lim = seq && j < seq->n
                  ? leakgate_yamledit__get(&seq->items[j], "limit", NULL)
                  : NULL;
        if (!lim) {
            e->broken = "a stacks rule is not where the file says";
            return;
        }
        leakgate_yamledit__put_size(&src, t->raise[j]);
        leakgate_yamledit__set_scalar(e, lim, src.ptr ? src.ptr : "0");
        e->failed |= src.failed;
        leakgate_buf__dispose(&src);
        line_start(rep, "raised", st, t->entry);
        leakgate_buf__puts(&rep->lines, "stacks rule ");
        leakgate_thresholds__frames(&rep->lines, r->frames, r->nframes);
        leakgate_buf__printf(&rep->lines, " (line %u): limit %s -> %s\n",
                             r->line,
                             leakgate_thresholds__bytes(a, 32, r->limit),
                             leakgate_thresholds__bytes(b, 32, t->raise[j]));
        rep->changes++;
    }
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
          uint64_t now)
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
        leakgate_buf__printf(&rep->lines, "%s %s -> %s\n", key,
                             leakgate_thresholds__bytes(a, 32, old),
                             leakgate_thresholds__bytes(b, 32, now));
    else
        leakgate_buf__printf(&rep->lines, "%s %s\n", key,
                             leakgate_thresholds__bytes(b, 32, now));
    rep->changes++;
}

static struct leakgate_ynode *
new_rules_seq(const struct target *t)
{
    struct leakgate_ynode *seq =
        leakgate_yamledit__frag(LEAKGATE_YNODE_SEQ, NULL);

    for (size_t i = 0; seq && i < t->nrules; i++) {
        const struct nrule *r = &t->rules[i];

        leakgate_yamledit__frag_push(
            seq, rule_frag(NULL, r->outer, r->inner, 0, r->limit));
    }
    return seq;
}

static void
report_new_rules(struct leakgate_treport *rep,
                 const struct leakgate_tstate *st,
                 const struct target *t)
{
    char a[32];

    for (size_t i = 0; i < t->nrules; i++) {
        if (t->entry) {
            line_start(rep, "added", st, t->entry);
        } else {
            leakgate_buf__printf(&rep->lines, "  %-9s %s ", "added",
                                 t->suite ? "suites" : "tests");
            put_key(&rep->lines, t->name);
            leakgate_buf__puts(&rep->lines, " (new entry): ");
        }
        leakgate_buf__puts(&rep->lines, "stacks rule ");
        put_rule_names(&rep->lines, &t->rules[i]);
        leakgate_buf__printf(
            &rep->lines, " limit %s\n",
            leakgate_thresholds__bytes(a, 32, t->rules[i].limit));
        rep->changes++;
    }
}

static void
emit_existing(struct leakgate_yedits *e,
              struct leakgate_treport *rep,
              const struct leakgate_tstate *st,
              const struct target *t)
{
    const struct leakgate_config_entry *en = t->entry;
    const struct leakgate_ynode *val =
        leakgate_thresholds__entry_node(st, en, NULL, NULL);
    const struct leakgate_ynode *seq;

    if (!val || val->kind != LEAKGATE_YNODE_MAP) {
        e->broken = "an entry is not where the file says";
        return;
    }
    raise_rules(e, rep, st, t, val);
    if (t->set_stack)
        set_limit(e, rep, st, en, val, "stack_limit", en->has_stack_limit,
                  en->stack_limit, t->stack_limit);
    if (t->set_total)
        set_limit(e, rep, st, en, val, "total_limit",
                  en->has_total_limit && !en->total_unlimited, en->total_limit,
                  t->total_limit);
    if (t->nrules == 0)
        return;
    seq = leakgate_yamledit__get(val, "stacks", NULL);
    if (seq && seq->kind == LEAKGATE_YNODE_SEQ) {
        for (size_t i = 0; i < t->nrules; i++)
            leakgate_yamledit__seq_add(e, seq,
                                       rule_frag(NULL, t->rules[i].outer,
                                                 t->rules[i].inner, 0,
                                                 t->rules[i].limit));
    } else {
        leakgate_yamledit__map_add(e, val, "stacks", new_rules_seq(t));
    }
    report_new_rules(rep, st, t);
}

/* ---- new entries ----------------------------------------------------- */

/* The glob-escaped names of r equal the carried rule's frames. */
static bool
same_rule(const struct nrule *r, const struct leakgate_config_stack_rule *c)
{
    const char *names[2] = {r->outer, r->inner};
    size_t n = r->inner ? 2 : 1;
    bool same = c->nframes == n;

    for (size_t k = 0; same && k < n; k++) {
        struct leakgate_buf g = LEAKGATE_BUF_INIT;

        leakgate_util__glob_escape(&g, names[k]);
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
            (t->set_stack && strcmp(k->text, "stack_limit") == 0) ||
            (t->set_total && strcmp(k->text, "total_limit") == 0))
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

    for (size_t i = 0; seq && i < t->nrules; i++) {
        const struct nrule *r = &t->rules[i];
        uint64_t limit = r->limit;

        for (size_t j = 0; c && j < c->nstacks; j++) {
            if (same_rule(r, &c->stacks[j]))
                limit = max_u64(limit, c->stacks[j].limit);
        }
        leakgate_yamledit__frag_push(
            seq, rule_frag(NULL, r->outer, r->inner, 0, limit));
    }
    for (size_t j = 0; seq && c && j < c->nstacks; j++) {
        const struct leakgate_config_stack_rule *cr = &c->stacks[j];
        bool folded = false;

        for (size_t i = 0; i < t->nrules; i++)
            folded |= same_rule(&t->rules[i], cr);
        if (!folded)
            leakgate_yamledit__frag_push(
                seq, rule_frag(cr->frames, NULL, NULL, cr->nframes, cr->limit));
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
    if (t->set_stack)
        leakgate_yamledit__frag_put(map, "stack_limit",
                                    size_frag(t->stack_limit));
    if (t->set_total)
        leakgate_yamledit__frag_put(map, "total_limit",
                                    size_frag(t->total_limit));
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
    leakgate_buf__printf(&rep->lines, "  %-9s %s ", "added",
                         t->suite ? "suites" : "tests");
    put_key(&rep->lines, t->name);
    leakgate_buf__puts(&rep->lines, " (new entry): ");
}

static void
report_new_entry(struct leakgate_treport *rep,
                 const struct leakgate_tstate *st,
                 const struct target *t)
{
    char a[32];

    if (t->carry) {
        new_entry_line(rep, t);
        leakgate_buf__puts(&rep->lines, "repeats the settings of ");
        leakgate_thresholds__describe(&rep->lines, st, t->carry);
        leakgate_buf__puts(&rep->lines, ", which it replaces for this "
                                        "window\n");
    }
    if (t->set_stack) {
        new_entry_line(rep, t);
        leakgate_buf__printf(&rep->lines, "stack_limit %s\n",
                             leakgate_thresholds__bytes(a, 32, t->stack_limit));
        rep->changes++;
    }
    if (t->set_total) {
        new_entry_line(rep, t);
        leakgate_buf__printf(&rep->lines, "total_limit %s\n",
                             leakgate_thresholds__bytes(a, 32, t->total_limit));
        rep->changes++;
    }
    report_new_rules(rep, st, t);
}

/* Every new entry of one section: added to the section's mapping, or as
 * the section's first entries (`tests:` empty or absent). */
static void
emit_new(struct leakgate_yedits *e,
         struct leakgate_treport *rep,
         const struct leakgate_tstate *st,
         const struct gather *g,
         bool suite)
{
    const char *name = suite ? "suites" : "tests";
    const struct leakgate_ynode *top = leakgate_yamledit__top(&st->lay);
    size_t pair = 0;
    const struct leakgate_ynode *sec = leakgate_yamledit__get(top, name, &pair);
    bool into = sec && sec->kind == LEAKGATE_YNODE_MAP;
    struct leakgate_ynode *holder =
        leakgate_yamledit__frag(LEAKGATE_YNODE_MAP, NULL);

    for (size_t i = 0; holder && i < g->n; i++) {
        const struct target *t = &g->t[i];
        struct leakgate_buf key = LEAKGATE_BUF_INIT;

        if (t->entry || t->suite != suite)
            continue;
        put_key(&key, t->name);
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

/* A one-frame rule [f] matches every stack through f: placed after the
 * two-frame rules [f, g] it cannot take their stacks (the first matching
 * rule applies).  Stable, so stacks keep their order otherwise. */
static void
two_frame_rules_first(struct target *t)
{
    for (size_t i = 1; i < t->nrules; i++) {
        for (size_t k = i; k > 0 && t->rules[k].inner && !t->rules[k - 1].inner;
             k--) {
            struct nrule tmp = t->rules[k];

            t->rules[k] = t->rules[k - 1];
            t->rules[k - 1] = tmp;
        }
    }
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

        if (!w->judged || !w->pol.failed)
            continue;
        t = target_for(&g, w);
        if (!t || !gather_window(t, w))
            e->failed = true;
    }
    if (g.n > 1)
        qsort(g.t, g.n, sizeof *g.t, cmp_target);
    for (size_t i = 0; i < g.n; i++)
        two_frame_rules_first(&g.t[i]);
    for (size_t i = 0; i < g.n; i++) {
        if (g.t[i].entry)
            emit_existing(e, rep, st, &g.t[i]);
    }
    emit_new(e, rep, st, &g, false);
    emit_new(e, rep, st, &g, true);
    gather_dispose(&g);
}
