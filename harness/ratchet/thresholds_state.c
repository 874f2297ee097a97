/* SPDX-License-Identifier: MIT */
/*
 * thresholds_state: the file as it is now (see thresholds.h).  Parses the
 * text twice -- config.c for what it means, yamledit.c for where it is
 * written -- and judges every window against it with policy.c, as the
 * gate judged it during the run, so that the ratchet works from the
 * current file whatever file the run was measured with.  Also the small
 * helpers the other thresholds_*.c files share: byte counts, entry
 * descriptions, finding an entry's node in the layout.
 */
#include "thresholds.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"

#define SUITE_WINDOW "[suite]"

/* ---- helpers --------------------------------------------------------- */

const char *
leakgate_thresholds__bytes(char *out, size_t size, uint64_t n)
{
    size_t len;

    leakgate_util__group_digits(out, size > 3 ? size - 2 : size, n, false);
    len = strlen(out);
    snprintf(out + len, size - len, " B");
    return out;
}

static const char *
section_of(const struct leakgate_tstate *st,
           const struct leakgate_config_entry *e,
           size_t *index_out)
{
    const struct leakgate_config *cfg = st->cfg;

    *index_out =
        leakgate_thresholds__index(e, cfg->tests, cfg->ntests, sizeof *e);
    if (*index_out != SIZE_MAX)
        return "tests";
    *index_out =
        leakgate_thresholds__index(e, cfg->suites, cfg->nsuites, sizeof *e);
    return *index_out != SIZE_MAX ? "suites" : NULL;
}

const struct leakgate_ynode *
leakgate_thresholds__entry_node(const struct leakgate_tstate *st,
                                const struct leakgate_config_entry *e,
                                const struct leakgate_ynode **section_out,
                                size_t *pair_out)
{
    const struct leakgate_ynode *top = leakgate_yamledit__top(&st->lay);
    const struct leakgate_ynode *sec;
    size_t i = 0;
    const char *name = section_of(st, e, &i);

    if (e == &st->cfg->defaults)
        return leakgate_yamledit__get(top, "defaults", pair_out);
    sec = name ? leakgate_yamledit__get(top, name, NULL) : NULL;
    if (!sec || sec->kind != LEAKGATE_YNODE_MAP || 2 * i + 1 >= sec->n ||
        strcmp(sec->items[2 * i].text, e->pattern) != 0)
        return NULL;
    if (section_out)
        *section_out = sec;
    if (pair_out)
        *pair_out = i;
    return &sec->items[2 * i + 1];
}

const char *
leakgate_thresholds__section(const struct leakgate_tstate *st,
                             const struct leakgate_config_entry *e)
{
    size_t i;

    return section_of(st, e, &i);
}

void
leakgate_thresholds__describe(struct leakgate_buf *b,
                              const struct leakgate_tstate *st,
                              const struct leakgate_config_entry *e)
{
    size_t i;
    const char *sec = section_of(st, e, &i);

    if (!sec) {
        leakgate_buf__printf(b, "defaults (line %u)", e->line);
        return;
    }
    leakgate_buf__printf(b, "%s \"%s\" (line %u)", sec, e->pattern, e->line);
}

void
leakgate_thresholds__frames(struct leakgate_buf *b,
                            char *const *frames,
                            size_t n)
{
    leakgate_buf__puts(b, "[");
    for (size_t k = 0; k < n; k++) {
        leakgate_buf__puts(b, k ? ", " : "");
        leakgate_buf__puts(b, frames[k]);
    }
    leakgate_buf__puts(b, "]");
}

void
leakgate_thresholds__verb(struct leakgate_treport *rep, const char *verb)
{
    static const char *const dry[][2] = {{"added", "would add"},
                                         {"raised", "would raise"},
                                         {"lowered", "would lower"},
                                         {"removed", "would remove"}};

    for (size_t i = 0; rep->dry && i < sizeof dry / sizeof dry[0]; i++) {
        if (strcmp(verb, dry[i][0]) == 0)
            verb = dry[i][1];
    }
    leakgate_buf__printf(&rep->lines, "  %-9s ", verb);
}

/* ---- judging every window -------------------------------------------- */

/* Failed assertions make a window's memory unrepresentative (the test
 * took a path it should not have).  CUnit's "Suite cleanup failed." does
 * not: the cleanup ran to its end, and it is how the CUnit glue reports a
 * suite window the gate failed. */
static bool
judged_window(const struct leakgate_verdict *v)
{
    if (!v->measured || v->status == LEAKGATE_STATUS_NOT_JUDGED)
        return false;
    for (size_t i = 0; i < v->nnotes; i++) {
        if (!v->notes[i].message ||
            strcmp(v->notes[i].message, "Suite cleanup failed.") != 0)
            return false;
    }
    return true;
}

/* The peak_limit of a window under the current file.  A run with
 * --peak-limit (its verdict's limit came from no entry) had that limit
 * as the defaults' one, as gate.c resolves it: an entry of the file that
 * sets peak_limit wins. */
static void
judge_peak(struct leakgate_twin *w, const struct leakgate_verdict *v)
{
    struct leakgate_policy_settings *s = &w->set;

    if (v->settings.peak_limited && !v->settings.peak_entry)
        leakgate_policy__apply_peak_option(s, v->settings.peak_limit);
    w->peak_over = w->judged &&
                   leakgate_policy__peak_over(s, v->peak_known, v->peak_bytes);
}

bool
leakgate_thresholds__failed(const struct leakgate_twin *w)
{
    return w->pol.failed || w->peak_over;
}

/* Judge one window against st->cfg (what gate_judge.c does in a run). */
static int
judge_window(struct leakgate_twin *w,
             const struct leakgate_tstate *st,
             const struct leakgate_verdict *v)
{
    struct leakgate_policy_stack *in = NULL;
    const char **names = NULL;
    size_t total = 0, at = 0;

    w->v = v;
    w->test = strcmp(v->test, SUITE_WINDOW) == 0 ? NULL : v->test;
    w->judged = judged_window(v);
    leakgate_policy__resolve(&w->set, st->cfg, v->suite, w->test);
    judge_peak(w, v);
    for (size_t i = 0; i < v->nstacks; i++)
        total += v->stacks[i].nframes;
    in = leakgate_util__calloc(v->nstacks, sizeof *in);
    /* every function name, its module, then every rule name */
    names = leakgate_util__calloc(total * 3 + 1, sizeof *names);
    w->per = leakgate_util__calloc(v->nstacks, sizeof *w->per);
    if (!in || !names || !w->per) {
        leakgate_util__free(in);
        leakgate_util__free(names);
        return leakgate_error__set(LEAKGATE_ENOMEM, "thresholds");
    }
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        in[i].functions = names + at;
        in[i].nfunctions = s->frames ? s->nframes : 0;
        in[i].bytes = s->bytes;
        in[i].objs = s->objs;
        for (size_t k = 0; s->frames && k < s->nframes; k++)
            names[at++] = s->frames[k].function;
        in[i].modules = names + at;
        for (size_t k = 0; s->frames && k < s->nframes; k++)
            names[at++] = s->frames[k].module;
        in[i].rule_names = names + at;
        in[i].nrule_names =
            leakgate_thresholds__rule_names(names + at, s, st->cfg);
        at += in[i].nrule_names;
    }
    leakgate_policy__judge(&w->pol, w->per, st->cfg, &w->set, in, v->nstacks);
    leakgate_util__free(names);
    leakgate_util__free(in);
    return 0;
}

static int
cmp_twin_name(const void *a, const void *b)
{
    const struct leakgate_twin *const *x = a, *const *y = b;

    return strcmp((*x)->v->name, (*y)->v->name);
}

/* name_judged of every window, in O(n log n): a merge may hold the same
 * window from hundreds of processes. */
static int
mark_judged_names(struct leakgate_tstate *st)
{
    struct leakgate_twin **by =
        leakgate_util__calloc(st->nw ? st->nw : 1, sizeof *by);
    size_t a = 0;

    if (!by)
        return leakgate_error__set(LEAKGATE_ENOMEM, "thresholds");
    for (size_t i = 0; i < st->nw; i++)
        by[i] = &st->w[i];
    if (st->nw > 1)
        qsort(by, st->nw, sizeof *by, cmp_twin_name);
    while (a < st->nw) {
        size_t b = a;
        bool any = false;

        while (b < st->nw && strcmp(by[a]->v->name, by[b]->v->name) == 0)
            any |= by[b++]->judged;
        for (size_t k = a; k < b; k++)
            by[k]->name_judged = any;
        a = b;
    }
    leakgate_util__free(by);
    return 0;
}

int
leakgate_thresholds__state(struct leakgate_tstate *st,
                           const char *text,
                           size_t len,
                           const char *name,
                           const struct leakgate_verdict *const *v,
                           size_t n)
{
    int rc;

    memset(st, 0, sizeof *st);
    st->text = text;
    rc = leakgate_config__parse(&st->cfg, text, len, name, NULL);
    if (rc == 0)
        rc = leakgate_yamledit__layout(&st->lay, text, len, name);
    if (rc == 0) {
        st->w = leakgate_util__calloc(n ? n : 1, sizeof *st->w);
        if (!st->w)
            rc = leakgate_error__set(LEAKGATE_ENOMEM, "thresholds");
    }
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (!v[i]->measured)
            continue;
        rc = judge_window(&st->w[st->nw], st, v[i]);
        st->nw++;
    }
    return rc == 0 ? mark_judged_names(st) : rc;
}

void
leakgate_thresholds__state_dispose(struct leakgate_tstate *st)
{
    for (size_t i = 0; st->w && i < st->nw; i++)
        leakgate_util__free(st->w[i].per);
    leakgate_util__free(st->w);
    leakgate_yamledit__layout_free(&st->lay);
    leakgate_config__free(st->cfg);
    memset(st, 0, sizeof *st);
}
