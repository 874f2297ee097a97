/* SPDX-License-Identifier: MIT */
/*
 * thresholds_tighten: the other half of the ratchet (see thresholds.h).
 * Every limit of the file is compared with the largest measurement it
 * governed in the run:
 *
 * - a stack rule governs the counted stacks it matched first;
 * - an entry's stack_limit (or defaults') governs the counted stacks of
 *   the windows that took their stack_limit from it and matched no rule;
 * - a total_limit governs the totals of the windows that took it;
 * - a peak_limit governs the peaks of the windows that took it, and is
 *   compared with the peak_limit the ratchet would write for the largest
 *   of them (the peak plus headroom), to which it is lowered.
 *
 * A limit above "largest + slack" is loose; tightening lowers it to the
 * largest measurement.  A stack rule of an entry some window used that
 * matched no stack is stale; tightening removes it (and the `stacks` key,
 * and an entry left with nothing, unless another entry would then apply
 * to its windows: then the last rule's limit goes to 0 instead).  With a
 * complete run, tests and suites entries that no window used and ignore
 * rules that matched no stack are reported as stale, never removed: they
 * may serve tests or systems this run did not cover.
 *
 * Only judged measurements count.  An entry whose windows include one
 * that was measured but never judged (a test stopped by a fatal
 * assertion, a failed assertion) is left alone: the run did not show
 * what it needs.  In a partial run (--filter) only tests entries that
 * name one test exactly are considered.
 */
#include "thresholds.h"

#include <stdio.h>
#include <string.h>

#include "error.h"

struct use {
    bool used;
    uint64_t max; /* bytes */
};

struct estate {
    bool used;         /* some window resolved to the entry */
    bool blocked;      /* one of them has no judged record */
    bool peak_unknown; /* a judged window took its peak_limit without a
                          measured peak (no allocation wrappers, version 1
                          results): its peak_limit is left alone */
    struct use stack, total, peak;
    struct use *rules; /* per stack rule */
};

struct usage {
    struct estate *tests, *suites, defaults;
    bool *ignores; /* per ignore rule: matched a grown stack */
    bool failed;
};

/* ---- measuring use --------------------------------------------------- */

static struct estate *
state_of(struct usage *u,
         const struct leakgate_config *cfg,
         const struct leakgate_config_entry *e)
{
    if (!e)
        return NULL;
    size_t i;

    if (e == &cfg->defaults)
        return &u->defaults;
    i = leakgate_thresholds__index(e, cfg->tests, cfg->ntests, sizeof *e);
    if (i != SIZE_MAX)
        return &u->tests[i];
    i = leakgate_thresholds__index(e, cfg->suites, cfg->nsuites, sizeof *e);
    return i != SIZE_MAX ? &u->suites[i] : NULL;
}

static void
use(struct use *u, uint64_t bytes)
{
    u->used = true;
    if (bytes > u->max)
        u->max = bytes;
}

/* The entry (or defaults) a window's stack_limit / total_limit came from. */
static const struct leakgate_config_entry *
source_of(const struct leakgate_config *cfg,
          const struct leakgate_policy_settings *s,
          bool total)
{
    const struct leakgate_config_entry *chain[3] = {
        s->test_entry, s->suite_entry, &cfg->defaults};

    for (size_t i = 0; i < 3; i++) {
        const struct leakgate_config_entry *e = chain[i];

        if (e && (total ? e->has_total_limit : e->has_stack_limit))
            return e;
    }
    return NULL;
}

static void
use_rule(struct usage *u,
         const struct leakgate_config *cfg,
         const struct leakgate_twin *w,
         const struct leakgate_config_stack_rule *r,
         uint64_t bytes)
{
    const struct leakgate_config_entry *owners[2] = {w->set.test_entry,
                                                     w->set.suite_entry};

    for (size_t i = 0; i < 2; i++) {
        const struct leakgate_config_entry *e = owners[i];
        struct estate *s = state_of(u, cfg, e);
        size_t j =
            e ? leakgate_thresholds__index(r, e->stacks, e->nstacks, sizeof *r)
              : SIZE_MAX;

        if (s && j != SIZE_MAX)
            use(&s->rules[j], bytes);
    }
}

static void
use_ignores(struct usage *u,
            const struct leakgate_config *cfg,
            const struct leakgate_verdict *v)
{
    for (size_t k = 0; k < v->nstacks; k++) {
        const struct leakgate_vstack *s = &v->stacks[k];
        const char *names[256];
        size_t n = 0;

        if (s->bytes <= 0 || !s->frames)
            continue;
        /* Outer frames beyond 256 cannot change which globs match in a
         * way that matters here: take the innermost 256. */
        for (; n < s->nframes && n < 256; n++)
            names[n] = s->frames[n].function;
        for (size_t i = 0; i < cfg->nignores; i++) {
            if (!u->ignores[i] &&
                leakgate_policy__frames_match(
                    cfg->ignores[i].frames, cfg->ignores[i].nframes, names, n))
                u->ignores[i] = true;
        }
    }
}

/* The peak of a judged window, for the entry its peak_limit came from
 * (none: the limit came from --peak-limit, or there is none). */
static void
use_peak(struct usage *u,
         const struct leakgate_config *cfg,
         const struct leakgate_twin *w)
{
    struct estate *ps =
        w->set.peak_limited ? state_of(u, cfg, w->set.peak_entry) : NULL;

    if (!ps)
        return;
    if (w->v->peak_known)
        use(&ps->peak, w->v->peak_bytes);
    else
        ps->peak_unknown = true;
}

static void
use_window(struct usage *u,
           const struct leakgate_tstate *st,
           const struct leakgate_twin *w)
{
    const struct leakgate_config *cfg = st->cfg;
    struct estate *te = state_of(u, cfg, w->set.test_entry);
    struct estate *se = state_of(u, cfg, w->set.suite_entry);
    struct estate *ss = state_of(u, cfg, source_of(cfg, &w->set, false));
    struct estate *ts = state_of(u, cfg, source_of(cfg, &w->set, true));
    bool blocked = !w->name_judged;
    uint64_t plain = 0;

    if (te)
        te->used = true;
    if (se)
        se->used = true;
    u->defaults.used = true;
    if (blocked) {
        if (te)
            te->blocked = true;
        if (se)
            se->blocked = true;
        u->defaults.blocked = true;
    }
    use_ignores(u, cfg, w->v);
    if (!w->judged)
        return;
    for (size_t k = 0; k < w->v->nstacks; k++) {
        const struct leakgate_policy_stack_verdict *j = &w->per[k];
        uint64_t bytes = (uint64_t)w->v->stacks[k].bytes;

        if (!j->judged || j->ignored)
            continue;
        if (j->rule)
            use_rule(u, cfg, w, j->rule, bytes);
        else if (bytes > plain)
            plain = bytes;
    }
    if (ss)
        use(&ss->stack, plain);
    if (ts && !w->set.total_unlimited)
        use(&ts->total, w->pol.total_bytes);
    use_peak(u, cfg, w);
}

static bool
alloc_states(struct estate **out,
             const struct leakgate_config_entry *e,
             size_t n)
{
    *out = leakgate_util__calloc(n ? n : 1, sizeof **out);
    for (size_t i = 0; *out && i < n; i++) {
        (*out)[i].rules = leakgate_util__calloc(e[i].nstacks ? e[i].nstacks : 1,
                                                sizeof *(*out)[i].rules);
        if (!(*out)[i].rules)
            return false;
    }
    return *out != NULL;
}

static void
free_states(struct estate *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        leakgate_util__free(s[i].rules);
    leakgate_util__free(s);
}

static void
usage_dispose(struct usage *u, const struct leakgate_config *cfg)
{
    free_states(u->tests, cfg->ntests);
    free_states(u->suites, cfg->nsuites);
    leakgate_util__free(u->ignores);
}

static bool
measure(struct usage *u, const struct leakgate_tstate *st)
{
    const struct leakgate_config *cfg = st->cfg;

    memset(u, 0, sizeof *u);
    u->ignores = leakgate_util__calloc(cfg->nignores ? cfg->nignores : 1,
                                       sizeof *u->ignores);
    if (!u->ignores || !alloc_states(&u->tests, cfg->tests, cfg->ntests) ||
        !alloc_states(&u->suites, cfg->suites, cfg->nsuites))
        return false;
    for (size_t i = 0; i < st->nw; i++)
        use_window(u, st, &st->w[i]);
    return true;
}

/* ---- deciding
 * ----------------------------------------------------------------- */

/* How much above the largest measurement a limit may stay. */
static bool
loose(const struct leakgate_thresholds_opts *o, uint64_t limit, uint64_t max)
{
    uint64_t slack =
        o->slack_is_bytes
            ? o->slack_bytes
            : max / 100 * o->slack_pct + (max % 100 * o->slack_pct + 99) / 100;

    return limit > (max > UINT64_MAX - slack ? UINT64_MAX : max + slack);
}

/* The context of one entry's decisions. */
struct ctx {
    struct leakgate_yedits *e;
    struct leakgate_treport *rep;
    const struct leakgate_tstate *st;
    const struct leakgate_thresholds_opts *o;
    bool apply;
    bool limits;      /* look at limits and rules (else entries only) */
    bool *drop_tests; /* entries left empty, removed at the end */
    bool *drop_suites;
};

static void
prefix(const struct ctx *c,
       const char *verb,
       const struct leakgate_config_entry *en)
{
    leakgate_thresholds__verb(c->rep, verb);
    leakgate_thresholds__describe(&c->rep->lines, c->st, en);
    leakgate_buf__puts(&c->rep->lines, ": ");
}

/* Lower `what` from limit to max (or report it loose); note says what
 * max is. */
static void
lower_to(const struct ctx *c,
         const struct leakgate_ynode *scalar,
         const struct leakgate_config_entry *en,
         const char *what,
         uint64_t limit,
         uint64_t max,
         const char *note)
{
    struct leakgate_buf src = LEAKGATE_BUF_INIT;
    char a[32], b[32];

    prefix(c, c->apply ? "lowered" : "loose", en);
    leakgate_buf__printf(&c->rep->lines, "%s %s %s %s (%s)\n", what,
                         leakgate_thresholds__bytes(a, 32, limit),
                         c->apply ? "->" : "is far above",
                         leakgate_thresholds__bytes(b, 32, max), note);
    if (!c->apply) {
        c->rep->loose++;
        return;
    }
    c->rep->changes++;
    if (!scalar) {
        c->e->broken = "a limit is not where the file says";
        return;
    }
    leakgate_yamledit__put_size(&src, max);
    leakgate_yamledit__set_scalar(c->e, scalar, src.ptr ? src.ptr : "0");
    c->e->failed |= src.failed;
    leakgate_buf__dispose(&src);
}

static void
lower(const struct ctx *c,
      const struct leakgate_ynode *scalar,
      const struct leakgate_config_entry *en,
      const char *what,
      uint64_t limit,
      uint64_t max)
{
    lower_to(c, scalar, en, what, limit, max, "largest measured");
}

static void
rule_text(const struct ctx *c, const struct leakgate_config_stack_rule *r)
{
    leakgate_buf__puts(&c->rep->lines, "stacks rule ");
    leakgate_thresholds__frames(&c->rep->lines, r->frames, r->nframes);
    leakgate_buf__printf(&c->rep->lines, " (line %u)", r->line);
}

/* Would another entry of the section apply to the entry's windows once
 * it is gone? */
static bool
others_match(const struct leakgate_tstate *st,
             const struct leakgate_config_entry *en)
{
    const struct leakgate_config *cfg = st->cfg;
    bool suite = leakgate_thresholds__index(en, cfg->suites, cfg->nsuites,
                                            sizeof *en) != SIZE_MAX;
    const struct leakgate_config_entry *list = suite ? cfg->suites : cfg->tests;
    size_t n = suite ? cfg->nsuites : cfg->ntests;

    for (size_t i = 0; i < st->nw; i++) {
        const struct leakgate_twin *w = &st->w[i];
        const char *name = suite ? w->v->suite : w->v->name;

        if ((suite ? w->set.suite_entry : w->set.test_entry) != en)
            continue;
        for (size_t k = 0; k < n; k++) {
            if (&list[k] != en &&
                (strcmp(list[k].pattern, name) == 0 ||
                 leakgate_util__glob_match(list[k].pattern, name)))
                return true;
        }
    }
    return false;
}

/* The entry's `key` (limit) lowered to want when it is loose. */
static void
tighten_key(const struct ctx *c,
            const struct leakgate_config_entry *en,
            const struct leakgate_ynode *val,
            const char *key,
            uint64_t limit,
            uint64_t want,
            const char *note)
{
    if (loose(c->o, limit, want))
        lower_to(c, leakgate_yamledit__get(val, key, NULL), en, key, limit,
                 want, note);
}

static void
tighten_limits(const struct ctx *c,
               const struct leakgate_config_entry *en,
               const struct estate *s,
               const struct leakgate_ynode *val)
{
    char note[80], a[32];

    if (en->has_stack_limit && s->stack.used)
        tighten_key(c, en, val, "stack_limit", en->stack_limit, s->stack.max,
                    "largest measured");
    if (en->has_total_limit && !en->total_unlimited && s->total.used)
        tighten_key(c, en, val, "total_limit", en->total_limit, s->total.max,
                    "largest measured");
    /* A peak_limit is compared with what the ratchet would write for the
     * largest peak it governed (the peak plus headroom), not with the
     * peak itself: a limit it just wrote is never loose, and one lowered
     * here keeps the headroom. */
    if (en->has_peak_limit && !en->peak_unlimited && s->peak.used &&
        !s->peak_unknown) {
        snprintf(note, sizeof note, "largest measured peak %s + headroom",
                 leakgate_thresholds__bytes(a, 32, s->peak.max));
        tighten_key(c, en, val, "peak_limit", en->peak_limit,
                    leakgate_thresholds__peak_allowance(s->peak.max), note);
    }
}

/* Stale rules: remove them, their `stacks` key or their entry. */
static void
remove_stale(const struct ctx *c,
             const struct leakgate_config_entry *en,
             const struct estate *s,
             const struct leakgate_ynode *val,
             size_t nstale)
{
    const struct leakgate_ynode *seq =
        leakgate_yamledit__get(val, "stacks", NULL);
    const struct leakgate_ynode *sec = NULL;
    size_t pair = 0, keep = SIZE_MAX;
    bool all = nstale == en->nstacks, alone = val->n == 2;
    bool *drop;

    if (!seq || seq->kind != LEAKGATE_YNODE_SEQ || seq->n != en->nstacks) {
        c->e->broken = "a stacks list is not where the file says";
        return;
    }
    drop = leakgate_util__calloc(en->nstacks, sizeof *drop);
    if (!drop) {
        c->e->failed = true;
        return;
    }
    if (all && alone && others_match(c->st, en))
        keep = en->nstacks - 1; /* the entry must stay: keep one, at 0 */
    for (size_t j = 0; j < en->nstacks; j++) {
        if (s->rules[j].used)
            continue;
        if (j == keep) {
            if (en->stacks[j].limit > 0)
                lower(c, leakgate_yamledit__get(&seq->items[j], "limit", NULL),
                      en, "matched no stack: stacks rule limit",
                      en->stacks[j].limit, 0);
            continue;
        }
        drop[j] = true;
        prefix(c, "removed", en);
        rule_text(c, &en->stacks[j]);
        leakgate_buf__puts(&c->rep->lines, ": matched no stack\n");
        c->rep->changes++;
    }
    if (!all || keep != SIZE_MAX) {
        leakgate_yamledit__remove_many(c->e, seq, drop);
    } else if (!alone) {
        leakgate_yamledit__get(val, "stacks", &pair);
        leakgate_yamledit__remove(c->e, val, pair);
    } else if (leakgate_thresholds__entry_node(c->st, en, &sec, &pair)) {
        if (strcmp(leakgate_thresholds__section(c->st, en), "suites") == 0)
            c->drop_suites[pair] = true;
        else
            c->drop_tests[pair] = true;
        prefix(c, "removed", en);
        leakgate_buf__puts(&c->rep->lines, "the entry, left empty\n");
        c->rep->changes++;
    }
    leakgate_util__free(drop);
}

/* Remove the entries left empty; a section left with none goes too (it
 * was most likely written by an update: `tests:` with nothing under it
 * would only be noise). */
static void
drop_entries(const struct ctx *c, const char *name, const bool *drop, size_t n)
{
    const struct leakgate_ynode *top = leakgate_yamledit__top(&c->st->lay);
    size_t pair = 0, count = 0;
    const struct leakgate_ynode *sec = leakgate_yamledit__get(top, name, &pair);

    for (size_t i = 0; i < n; i++)
        count += drop[i];
    if (count == 0 || !sec || sec->kind != LEAKGATE_YNODE_MAP)
        return;
    if (count == sec->n / 2 && !sec->flow)
        leakgate_yamledit__remove(c->e, top, pair);
    else
        leakgate_yamledit__remove_many(c->e, sec, drop);
}

static void
tighten_rules(const struct ctx *c,
              const struct leakgate_config_entry *en,
              const struct estate *s,
              const struct leakgate_ynode *val)
{
    const struct leakgate_ynode *seq =
        leakgate_yamledit__get(val, "stacks", NULL);
    size_t nstale = 0;

    for (size_t j = 0; j < en->nstacks; j++) {
        const struct leakgate_config_stack_rule *r = &en->stacks[j];
        const struct use *u = &s->rules[j];

        if (!u->used) {
            nstale++;
            if (!c->apply) {
                prefix(c, "stale", en);
                rule_text(c, r);
                leakgate_buf__puts(&c->rep->lines, ": matched no stack\n");
                c->rep->stale++;
            }
        } else if (loose(c->o, r->limit, u->max)) {
            struct leakgate_buf what = LEAKGATE_BUF_INIT;

            leakgate_buf__puts(&what, "stacks rule ");
            leakgate_thresholds__frames(&what, r->frames, r->nframes);
            leakgate_buf__printf(&what, " (line %u) limit", r->line);
            lower(c,
                  seq && j < seq->n
                      ? leakgate_yamledit__get(&seq->items[j], "limit", NULL)
                      : NULL,
                  en, what.ptr ? what.ptr : "stacks rule", r->limit, u->max);
            leakgate_buf__dispose(&what);
        }
    }
    if (c->apply && nstale > 0)
        remove_stale(c, en, s, val, nstale);
}

static void
tighten_entry(const struct ctx *c,
              const struct leakgate_config_entry *en,
              const struct estate *s)
{
    const struct leakgate_ynode *val =
        leakgate_thresholds__entry_node(c->st, en, NULL, NULL);

    if (!c->limits || !s->used || s->blocked)
        return;
    if (!val && en == &c->st->cfg->defaults)
        return; /* no defaults written: nothing to lower */
    if (!val || val->kind != LEAKGATE_YNODE_MAP) {
        c->e->broken = "an entry is not where the file says";
        return;
    }
    tighten_limits(c, en, s, val);
    tighten_rules(c, en, s, val);
}

/* ---- stale entries and ignore rules
 * ------------------------------------------ */

static bool
matches_some_window(const struct leakgate_tstate *st,
                    const struct leakgate_config_entry *en,
                    bool suite)
{
    for (size_t i = 0; i < st->nw; i++) {
        const char *name = suite ? st->w[i].v->suite : st->w[i].v->name;

        if (strcmp(en->pattern, name) == 0 ||
            leakgate_util__glob_match(en->pattern, name))
            return true;
    }
    return false;
}

static void
stale_entries(const struct ctx *c,
              const struct leakgate_config_entry *list,
              const struct estate *s,
              size_t n,
              bool suite)
{
    for (size_t i = 0; i < n; i++) {
        if (s[i].used)
            continue;
        prefix(c, "stale", &list[i]);
        if (matches_some_window(c->st, &list[i], suite))
            leakgate_buf__printf(&c->rep->lines,
                                 "every %s it matches has a more specific "
                                 "entry\n",
                                 suite ? "suite" : "test");
        else
            leakgate_buf__printf(&c->rep->lines, "matches no %s in this run\n",
                                 suite ? "suite" : "test");
        c->rep->stale++;
    }
}

static void
stale_ignores(const struct ctx *c, const struct usage *u)
{
    const struct leakgate_config *cfg = c->st->cfg;

    for (size_t i = 0; i < cfg->nignores; i++) {
        const struct leakgate_config_ignore *ig = &cfg->ignores[i];

        if (u->ignores[i])
            continue;
        leakgate_buf__printf(&c->rep->lines, "  %-9s ignore rule ", "stale");
        leakgate_thresholds__frames(&c->rep->lines, ig->frames, ig->nframes);
        leakgate_buf__printf(&c->rep->lines,
                             " (line %u): matched no stack in this run\n",
                             ig->line);
        c->rep->stale++;
    }
}

/* In a partial run, only tests entries naming one test exactly. */
static bool
eligible(const struct ctx *c,
         const struct leakgate_config_entry *en,
         bool is_test)
{
    return !c->o->partial || (is_test && leakgate_util__glob_specificity(
                                             en->pattern) == SIZE_MAX);
}

void
leakgate_thresholds__tighten(struct leakgate_yedits *e,
                             struct leakgate_treport *rep,
                             const struct leakgate_tstate *st,
                             const struct leakgate_thresholds_opts *o,
                             bool apply,
                             bool limits)
{
    const struct leakgate_config *cfg = st->cfg;
    struct ctx c = {e, rep, st, o, apply, apply || limits, NULL, NULL};
    struct usage u;

    c.drop_tests = leakgate_util__calloc(cfg->ntests + 1, sizeof(bool));
    c.drop_suites = leakgate_util__calloc(cfg->nsuites + 1, sizeof(bool));
    if (!measure(&u, st) || !c.drop_tests || !c.drop_suites) {
        e->failed = true;
        usage_dispose(&u, cfg);
        leakgate_util__free(c.drop_tests);
        leakgate_util__free(c.drop_suites);
        return;
    }
    if (eligible(&c, &cfg->defaults, false))
        tighten_entry(&c, &cfg->defaults, &u.defaults);
    for (size_t i = 0; i < cfg->nsuites; i++) {
        if (eligible(&c, &cfg->suites[i], false))
            tighten_entry(&c, &cfg->suites[i], &u.suites[i]);
    }
    for (size_t i = 0; i < cfg->ntests; i++) {
        if (eligible(&c, &cfg->tests[i], true))
            tighten_entry(&c, &cfg->tests[i], &u.tests[i]);
    }
    if (apply) {
        drop_entries(&c, "suites", c.drop_suites, cfg->nsuites);
        drop_entries(&c, "tests", c.drop_tests, cfg->ntests);
    }
    if (!o->partial && !apply) {
        stale_entries(&c, cfg->suites, u.suites, cfg->nsuites, true);
        stale_entries(&c, cfg->tests, u.tests, cfg->ntests, false);
        stale_ignores(&c, &u);
    }
    usage_dispose(&u, cfg);
    leakgate_util__free(c.drop_tests);
    leakgate_util__free(c.drop_suites);
}
