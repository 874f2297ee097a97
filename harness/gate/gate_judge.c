/* SPDX-License-Identifier: MIT */
/*
 * gate_judge: from a closed window's diff to a verdict.  Symbolizes the
 * stacks that grew, trims each to the user's code (allocator frames were
 * stripped by the diff; here the runner and thread/process start frames
 * are cut), asks the policy, and renders the report.  Runs with recording
 * inactive.
 */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "gate.h"
#include "policy.h"
#include "report.h"
#include "thresholds_rules.h"
#include "util.h"

int
leakgate_gate__symbolizer(struct leakgate_symbolizer **out,
                          struct leakgate_gate *gate)
{
    int rc;

    if (!gate->sym) {
        rc = leakgate_symbolize__new_self(&gate->sym);
        if (rc < 0)
            return rc;
        /* Without libdw every report says so where it says how it was
         * measured (its frames are module+offset). */
        if (leakgate_symbolize__no_libdw(gate->sym)) {
            size_t len = strlen(gate->sampling);

            snprintf(gate->sampling + len, sizeof gate->sampling - len,
                     "; no symbols: %s",
                     leakgate_symbolize__no_libdw(gate->sym));
        }
        if (leakgate_symbolize__main_module(gate->sym, &gate->env.binary,
                                            &gate->env.build_id) < 0) {
            gate->env.binary = "";
            gate->env.build_id = "";
        }
    }
    *out = gate->sym;
    return 0;
}

/* Move the diff's entries into v->stacks (they are stolen from acc). */
static int
take_stacks(struct leakgate_verdict *v, struct leakgate_diff *acc)
{
    if (acc->nentries == 0)
        return 0;
    v->stacks = leakgate_util__calloc(acc->nentries, sizeof *v->stacks);
    if (!v->stacks)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict stacks");
    for (size_t i = 0; i < acc->nentries; i++)
        leakgate_verdict__steal_entry(&v->stacks[i], &acc->entries[i]);
    v->nstacks = acc->nentries;
    v->excluded_bytes = acc->excluded_bytes;
    return 0;
}

/* Symbolize and trim each stack that grew (the leak's and the peak's). */
static int
symbolize_grown(struct leakgate_gate *gate,
                struct leakgate_vstack *stacks,
                size_t n)
{
    struct leakgate_symbolizer *sym = NULL;
    int rc;

    for (size_t i = 0; i < n; i++) {
        struct leakgate_vstack *s = &stacks[i];

        if (s->bytes <= 0)
            continue;
        if (!sym) {
            rc = leakgate_gate__symbolizer(&sym, gate);
            if (rc < 0)
                return rc;
        }
        rc = leakgate_symbolize__frames(sym, &s->frames, &s->nframes, s->pcs,
                                        s->npcs);
        if (rc < 0)
            return rc;
        leakgate_verdict__trim(s);
        leakgate_thresholds__trim_allocators(s, gate->config);
    }
    return 0;
}

/* Function names of each stack, innermost first, for the policy. */
static int
judge_stacks(struct leakgate_gate *gate, struct leakgate_verdict *v)
{
    struct leakgate_policy_stack *in;
    struct leakgate_policy_stack_verdict *per;
    const char **names = NULL;
    size_t total = 0, at = 0;
    int rc = 0;

    if (v->nstacks == 0) {
        /* A window that left nothing (most): no stack to name. */
        leakgate_policy__judge(&v->policy, NULL, gate->config, &v->settings,
                               NULL, 0);
        return 0;
    }
    for (size_t i = 0; i < v->nstacks; i++)
        total += v->stacks[i].nframes;
    in = leakgate_util__calloc(v->nstacks, sizeof *in);
    per = leakgate_util__calloc(v->nstacks, sizeof *per);
    /* every function name, its module, then every rule name */
    names = leakgate_util__calloc(total * 3 + 1, sizeof *names);
    if (!in || !per || !names) {
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "policy input");
        goto cleanup;
    }
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        in[i].functions = names + at;
        in[i].nfunctions = s->nframes;
        in[i].bytes = s->bytes;
        in[i].objs = s->objs;
        in[i].reach_known = s->reach.known;
        in[i].lost_bytes = s->reach.lost_bytes + s->reach.indirect_bytes;
        for (size_t k = 0; k < s->nframes; k++)
            names[at++] = s->frames[k].function;
        in[i].modules = names + at;
        for (size_t k = 0; k < s->nframes; k++)
            names[at++] = s->frames[k].module;
        in[i].rule_names = names + at;
        in[i].nrule_names =
            leakgate_thresholds__rule_names(names + at, s, gate->config);
        at += in[i].nrule_names;
    }
    leakgate_policy__judge(&v->policy, per, gate->config, &v->settings, in,
                           v->nstacks);
    for (size_t i = 0; i < v->nstacks; i++)
        v->stacks[i].judgement = per[i];
cleanup:
    leakgate_util__free(names);
    leakgate_util__free(per);
    leakgate_util__free(in);
    return rc;
}

/* The largest growth of e's stack in runs 1..n-1 (NULL: none grew). */
static const struct leakgate_diff_entry *
largest_later(const struct gate_scope *s, const struct leakgate_diff_entry *e)
{
    const struct leakgate_diff_entry *best = NULL;

    for (size_t k = 1; k < s->nruns; k++) {
        const struct leakgate_diff_entry *x =
            leakgate_diff__find(s->runs[k], e);

        if (x && x->delta_bytes > 0 &&
            (!best || x->delta_bytes > best->delta_bytes))
            best = x;
    }
    return best;
}

static void
pick_recurring(struct leakgate_diff *view,
               size_t cap,
               const struct gate_scope *s)
{
    for (size_t k = 1; k < s->nruns; k++) {
        for (size_t i = 0; i < s->runs[k]->nentries; i++) {
            const struct leakgate_diff_entry *e = &s->runs[k]->entries[i];
            const struct leakgate_diff_entry *best;

            if (e->delta_bytes <= 0 || leakgate_diff__find(view, e) ||
                view->nentries == cap)
                continue;
            /* e itself grew in run k, so a largest growth exists. */
            best = largest_later(s, e);
            view->entries[view->nentries++] = best ? *best : *e;
        }
    }
}

/* "repeat: N runs; ..." describing per-run and one-time growth. */
static char *
runs_note(const struct gate_scope *s, const struct leakgate_diff *view)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    int64_t bytes = 0;
    size_t n = 0;

    for (size_t i = 0; i < s->runs[0]->nentries; i++) {
        const struct leakgate_diff_entry *e = &s->runs[0]->entries[i];

        if (e->delta_bytes > 0 && !leakgate_diff__find(view, e)) {
            n++;
            bytes += e->delta_bytes;
        }
    }
    if (n == 0 && view->nentries == 0)
        return NULL;
    leakgate_buf__printf(&b, "repeat: %zu runs", s->nruns);
    if (view->nentries > 0)
        leakgate_buf__printf(&b,
                             "; %zu stack%s grew again after the first run "
                             "(per-run growth: a leak; bytes shown are its "
                             "largest growth in one run)",
                             view->nentries, view->nentries == 1 ? "" : "s");
    if (n > 0) {
        char num[32];

        leakgate_buf__printf(&b,
                             "; %s B in %zu stack%s grew in the first run "
                             "only (one-time growth, e.g. lazy "
                             "initialisation: not counted)",
                             leakgate_util__group_signed(num, bytes), n,
                             n == 1 ? "" : "s");
    }
    return leakgate_buf__take(&b);
}

int
leakgate_gate__classify_runs(struct leakgate_gate *gate, char **note_out)
{
    struct gate_scope *s = &gate->cur;
    struct leakgate_diff view = {0};
    struct leakgate_diff *recurring = NULL;
    size_t cap = 0;
    int rc;

    *note_out = NULL;
    for (size_t k = 1; k < s->nruns; k++)
        cap += s->runs[k]->nentries;
    view.entries = leakgate_util__calloc(cap, sizeof *view.entries);
    if (!view.entries)
        return leakgate_error__set(LEAKGATE_ENOMEM, "runs");
    pick_recurring(&view, cap, s);
    rc = leakgate_diff__new_empty(&recurring);
    if (rc == 0)
        rc = leakgate_diff__accumulate(recurring, &view);
    if (rc == 0) {
        *note_out = runs_note(s, &view);
        leakgate_diff__free(s->acc);
        s->acc = recurring;
        recurring = NULL;
    }
    leakgate_diff__free(recurring);
    leakgate_util__free(view.entries);
    return rc;
}

/* The largest stacks that grew up to the peak, into v->peak_stacks,
 * symbolized and trimmed like the leak's. */
static int
take_peak(struct leakgate_gate *gate,
          struct leakgate_verdict *v,
          const struct gate_scope *s)
{
    struct leakgate_diff *d = s->peak_diff;
    size_t n = 0;

    leakgate_verdict__set_peak(v, s->metered, s->meter.peak, s->meter.allocs);
    if (!v->peak_over || !d)
        return 0;
    for (size_t i = 0; i < d->nentries && n < LEAKGATE_PEAK_STACKS_MAX; i++)
        n += d->entries[i].delta_bytes > 0;
    if (n == 0)
        return 0;
    v->peak_stacks = leakgate_util__calloc(n, sizeof *v->peak_stacks);
    if (!v->peak_stacks)
        return leakgate_error__set(LEAKGATE_ENOMEM, "peak stacks");
    v->peak_level = s->peak_level;
    for (size_t i = 0; i < d->nentries && v->npeak_stacks < n; i++) {
        if (d->entries[i].delta_bytes > 0)
            leakgate_verdict__steal_entry(&v->peak_stacks[v->npeak_stacks++],
                                          &d->entries[i]);
    }
    return symbolize_grown(gate, v->peak_stacks, v->npeak_stacks);
}

static int
name_verdict(struct leakgate_verdict *v, const struct gate_scope *s)
{
    size_t size = strlen(s->suite) + strlen(s->test) + 2;

    /* Once per window, kept with the verdict: no format, no room left. */
    v->name = leakgate_util__malloc(size);
    if (v->name)
        (void)leakgate_util__join_to(v->name, size, s->suite, '/', s->test);
    v->suite = leakgate_util__strdup(s->suite);
    v->test = leakgate_util__strdup(s->test);
    if (!v->name || !v->suite || !v->test)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict names");
    return 0;
}

static int
decide(struct leakgate_gate *gate, struct leakgate_verdict *v, bool judged)
{
    const char *why = NULL;
    bool grew = false;

    for (size_t i = 0; i < v->nstacks; i++)
        grew |= v->stacks[i].bytes > 0;
    if (gate->cur.aborted)
        why = gate->cur.aborted_why;
    else if (!judged)
        why = LEAKGATE_VERDICT_MEASURED_ONLY;
    else if (v->settings.lost_limited && v->policy.lost_unknown &&
             !v->policy.failed)
        why = LEAKGATE_VERDICT_LOST_UNKNOWN;
    if (why) {
        v->status = LEAKGATE_STATUS_NOT_JUDGED;
        v->not_judged_why = leakgate_util__strdup(why);
        if (!v->not_judged_why)
            return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    } else {
        v->status =
            v->policy.failed ? LEAKGATE_STATUS_FAIL : LEAKGATE_STATUS_PASS;
    }
    if (v->status == LEAKGATE_STATUS_FAIL || v->hint ||
        (v->status == LEAKGATE_STATUS_NOT_JUDGED && grew))
        v->report = leakgate_report__text(v, &gate->env, false);
    else
        v->report = leakgate_util__strdup("");
    if (!v->report)
        return leakgate_error__set(LEAKGATE_ENOMEM, "report");
    return 0;
}

int
leakgate_gate__judge_lost_again(struct leakgate_gate *gate,
                                struct leakgate_verdict *v)
{
    /* The policy again from the stacks (only their lost counts changed):
     * a pass that now fails its lost_limit fails; nothing passes again. */
    int rc = judge_stacks(gate, v);

    if (rc < 0)
        return rc;
    if (v->status == LEAKGATE_STATUS_PASS && v->policy.failed)
        v->status = LEAKGATE_STATUS_FAIL;
    leakgate_util__free(v->report);
    v->report = v->status == LEAKGATE_STATUS_FAIL || v->hint
                    ? leakgate_report__text(v, &gate->env, false)
                    : leakgate_util__strdup("");
    return v->report ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "report");
}

int
leakgate_gate__judge(struct leakgate_verdict **out,
                     struct leakgate_gate *gate,
                     bool judged)
{
    struct gate_scope *s = &gate->cur;
    struct leakgate_verdict *v = leakgate_util__calloc(1, sizeof *v);
    int rc;

    *out = NULL;
    if (!v)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    v->measured = true;
    v->seconds = s->seconds;
    v->settings = s->settings; /* resolved when the window opened */
    rc = name_verdict(v, s);
    if (rc == 0 && s->nruns >= 2)
        rc = leakgate_gate__classify_runs(gate, &v->hint);
    if (rc == 0)
        rc = take_stacks(v, s->acc);
    if (rc == 0)
        rc = symbolize_grown(gate, v->stacks, v->nstacks);
    if (rc == 0)
        rc = judge_stacks(gate, v);
    if (rc == 0)
        rc = take_peak(gate, v, s);
    if (rc == 0)
        rc = decide(gate, v, judged);
    if (rc < 0) {
        leakgate_verdict__free(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* The outermost frame of s with a source file in the user's code (the
 * test's own line, not the allocation site or an allocation wrapper),
 * else the innermost frame with a source file. */
static const struct leakgate_frame *
located_frame(const struct leakgate_vstack *s)
{
    const struct leakgate_frame *any = NULL, *user = NULL;

    for (size_t k = s->shown_begin; k < s->shown_end; k++) {
        const struct leakgate_frame *f = &s->frames[k];

        if (!f->file)
            continue;
        if (!leakgate_symbolize__system_frame(f))
            user = f;
        else if (!any)
            any = f;
    }
    return user ? user : any;
}

void
leakgate_verdict_location(const leakgate_verdict *v,
                          const char **file_out,
                          unsigned int *line_out)
{
    const struct leakgate_frame *f = NULL;

    *file_out = NULL;
    *line_out = 0;
    for (size_t i = 0; !f && i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        if (s->frames &&
            (s->judgement.over || (v->policy.total_over && s->bytes > 0)))
            f = located_frame(s);
    }
    /* A failure on the peak alone: where the largest peak stack is. */
    for (size_t i = 0; !f && v->peak_over && i < v->npeak_stacks; i++) {
        if (v->peak_stacks[i].frames)
            f = located_frame(&v->peak_stacks[i]);
    }
    if (f) {
        *file_out = f->file;
        *line_out = f->line;
    }
}

int
leakgate_gate__judge_again(struct leakgate_verdict **out,
                           struct leakgate_gate *gate,
                           const struct leakgate_verdict *w,
                           struct leakgate_diff *acc)
{
    int rc = leakgate_gate__scope_open(gate, w->suite, w->test);

    *out = NULL;
    if (rc < 0) {
        leakgate_diff__free(acc);
        return rc;
    }
    leakgate_diff__free(gate->cur.acc);
    gate->cur.acc = acc;
    rc = leakgate_gate__judge(out, gate, true);
    leakgate_gate__scope_close(gate);
    return rc;
}
