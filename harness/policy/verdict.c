/* SPDX-License-Identifier: MIT */
/*
 * verdict: releasing the in-memory record of one judged window.  Core data
 * only.  A verdict owns its strings, its stacks (each stack's pcs, frame
 * array and per-thread deltas) and its notes; the frames' strings belong to
 * the symbolizer and the settings/judgement pointers into the thresholds
 * file belong to the configuration, so neither is freed here.
 */
#include "verdict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

static void
free_stack(struct leakgate_vstack *s)
{
    leakgate_util__free(s->pcs);
    leakgate_util__free(s->frames);
    leakgate_util__free(s->threads);
}

static void
free_note(struct leakgate_note *n)
{
    leakgate_util__free(n->file);
    leakgate_util__free(n->message);
}

/* Some window's suite (suites entry) or name (tests entry) matches e. */
static bool
entry_matches(const struct leakgate_config_entry *e,
              bool is_test,
              const struct leakgate_verdict *const *v,
              size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *name = is_test ? v[i]->name : v[i]->suite;

        if (strcmp(e->pattern, name) == 0 ||
            leakgate_util__glob_match(e->pattern, name))
            return true;
    }
    return false;
}

char *
leakgate_verdict__unmatched_entries(const struct leakgate_config *cfg,
                                    const struct leakgate_verdict *const *v,
                                    size_t n,
                                    const char *what)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;

    if (!cfg)
        return NULL;
    leakgate_buf__puts(&b, ""); /* "" rather than NULL when all match */
    for (size_t i = 0; i < cfg->nsuites + cfg->ntests; i++) {
        bool is_test = i >= cfg->nsuites;
        const struct leakgate_config_entry *e =
            is_test ? &cfg->tests[i - cfg->nsuites] : &cfg->suites[i];

        if (!entry_matches(e, is_test, v, n))
            leakgate_buf__printf(
                &b, "%s:%u: %s entry '%s' matches no %s of %s\n", cfg->path,
                e->line, is_test ? "tests" : "suites", e->pattern,
                is_test ? "test" : "suite", what);
    }
    return leakgate_buf__take(&b);
}

void
leakgate_verdict__free(struct leakgate_verdict *v)
{
    if (!v)
        return;
    for (size_t i = 0; v->stacks && i < v->nstacks; i++)
        free_stack(&v->stacks[i]);
    leakgate_util__free(v->stacks);
    for (size_t i = 0; v->peak_stacks && i < v->npeak_stacks; i++)
        free_stack(&v->peak_stacks[i]);
    leakgate_util__free(v->peak_stacks);
    for (size_t i = 0; v->notes && i < v->nnotes; i++)
        free_note(&v->notes[i]);
    leakgate_util__free(v->notes);
    leakgate_diff__free(v->held);
    leakgate_util__free(v->suite);
    leakgate_util__free(v->test);
    leakgate_util__free(v->name);
    leakgate_util__free(v->not_judged_why);
    leakgate_util__free(v->report);
    leakgate_util__free(v->hint);
    leakgate_util__free(v->artifact_dir);
    leakgate_util__free(v->heap_before);
    leakgate_util__free(v->heap_after);
    leakgate_util__free(v->json_path);
    leakgate_util__free(v->text_path);
    leakgate_util__free(v->dot_path);
    leakgate_util__free(v->svg_path);
    leakgate_util__free(v->pdf_path);
    leakgate_util__free(v->picture_note);
    leakgate_util__free(v->artifacts_note);
    leakgate_util__free(v->artifacts_binary);
    leakgate_util__free(v->origin);
    leakgate_util__free(v->ended);
    leakgate_util__free(v);
}

const char *
leakgate_verdict__origin(const struct leakgate_verdict *v)
{
    return v->origin ? v->origin : "";
}

/* The public accessors of the peak meter's figures (leakgate.h); the
 * others are in gate.c. */
int
leakgate_verdict_peak_measured(const leakgate_verdict *v)
{
    return v->peak_known;
}

uint64_t
leakgate_verdict_peak_bytes(const leakgate_verdict *v)
{
    return v->peak_known ? v->peak_bytes : 0;
}

uint64_t
leakgate_verdict_allocations(const leakgate_verdict *v)
{
    return v->peak_known ? v->allocations : 0;
}

bool
leakgate_verdict__peak_only(const struct leakgate_verdict *v)
{
    return v->peak_over && v->policy.nover == 0 && !v->policy.total_over;
}

bool
leakgate_verdict__skipped(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_NOT_JUDGED && v->not_judged_why &&
           (strcmp(v->not_judged_why, LEAKGATE_VERDICT_MEASURED_ONLY) == 0 ||
            strncmp(v->not_judged_why, LEAKGATE_VERDICT_NOT_RUN,
                    strlen(LEAKGATE_VERDICT_NOT_RUN)) == 0);
}

bool
leakgate_verdict__unjudged(const struct leakgate_verdict *v)
{
    return v->status == LEAKGATE_STATUS_NOT_JUDGED && v->nnotes == 0 &&
           !leakgate_verdict__skipped(v);
}

/* A window's peak and index, for sorting. */
struct peak_pick {
    uint64_t peak;
    size_t i;
};

static int
cmp_peak_pick(const void *a, const void *b)
{
    const struct peak_pick *x = a, *y = b;

    if (x->peak != y->peak)
        return x->peak < y->peak ? 1 : -1;
    return (x->i > y->i) - (x->i < y->i);
}

size_t *
leakgate_verdict__peak_order(const struct leakgate_verdict *const *v,
                             size_t n,
                             size_t *m)
{
    struct peak_pick *p = leakgate_util__calloc(n ? n : 1, sizeof *p);
    size_t *out = leakgate_util__calloc(n ? n : 1, sizeof *out);

    *m = 0;
    if (!p || !out) {
        leakgate_util__free(p);
        leakgate_util__free(out);
        leakgate_error__set(LEAKGATE_ENOMEM, "peak order");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (v[i]->peak_known)
            p[(*m)++] = (struct peak_pick){v[i]->peak_bytes, i};
    }
    qsort(p, *m, sizeof *p, cmp_peak_pick);
    for (size_t k = 0; k < *m; k++)
        out[k] = p[k].i;
    leakgate_util__free(p);
    return out;
}

void
leakgate_verdict__set_peak(struct leakgate_verdict *v,
                           bool known,
                           uint64_t bytes,
                           uint64_t allocations)
{
    v->peak_known = known;
    v->peak_bytes = bytes;
    v->allocations = allocations;
    v->peak_over = leakgate_policy__peak_over(&v->settings, known, bytes);
    v->policy.failed = v->policy.nover > 0 || v->policy.total_over ||
                       v->policy.lost_over || v->peak_over;
    if (v->peak_over && v->status == LEAKGATE_STATUS_PASS)
        v->status = LEAKGATE_STATUS_FAIL;
}

void
leakgate_verdict__move_peak_stacks(struct leakgate_verdict *dst,
                                   struct leakgate_verdict *src)
{
    dst->peak_stacks = src->peak_stacks;
    dst->npeak_stacks = src->npeak_stacks;
    dst->peak_level = src->peak_level;
    src->peak_stacks = NULL;
    src->npeak_stacks = 0;
}

void
leakgate_verdict__steal_entry(struct leakgate_vstack *s,
                              struct leakgate_diff_entry *e)
{
    s->pcs = e->pcs;
    s->npcs = e->npcs;
    s->bytes = e->delta_bytes;
    s->objs = e->delta_objs;
    s->requested = e->delta_requested;
    s->requested_known = e->requested_known;
    s->reach = e->reach;
    s->threads = e->threads;
    s->nthreads = e->nthreads;
    e->pcs = NULL;
    e->threads = NULL;
}

void
leakgate_verdict__carry_record(struct leakgate_verdict *v,
                               struct leakgate_verdict *w)
{
    v->notes = w->notes;
    v->nnotes = w->nnotes;
    w->notes = NULL;
    w->nnotes = 0;
    v->seconds = w->seconds;
    v->unjoined = w->unjoined;
    v->first_bytes = w->first_bytes;
    v->first_objs = w->first_objs;
}

void
leakgate_verdict__fail_unjoined(struct leakgate_verdict *v)
{
    if (v->unjoined && v->status == LEAKGATE_STATUS_PASS)
        v->status = LEAKGATE_STATUS_FAIL;
}

void
leakgate_verdict__lend_entry(struct leakgate_diff_entry *e,
                             const struct leakgate_vstack *s)
{
    memset(e, 0, sizeof *e);
    e->pcs = s->pcs;
    e->npcs = s->npcs;
    e->delta_bytes = s->bytes;
    e->delta_objs = s->objs;
    e->delta_requested = s->requested;
    e->requested_known = s->requested_known;
    e->reach = s->reach;
}

const char *
leakgate_verdict__peak_from(const struct leakgate_verdict *v)
{
    const struct leakgate_config_entry *e = v->settings.peak_entry;

    if (!v->settings.peak_limited)
        return NULL;
    if (!e)
        return "option";
    if (!e->pattern)
        return "defaults";
    return e == v->settings.test_entry ? "tests" : "suites";
}

const char *
leakgate_verdict__peak_source(const struct leakgate_verdict *v,
                              const char *thresholds_path,
                              char *buf,
                              size_t size)
{
    const struct leakgate_config_entry *e = v->settings.peak_entry;
    const char *file = thresholds_path ? thresholds_path : "thresholds file";
    const char *from = leakgate_verdict__peak_from(v);

    if (!e)
        snprintf(buf, size, "--peak-limit/LEAKGATE_PEAK_LIMIT");
    else if (!e->pattern)
        snprintf(buf, size, "defaults.peak_limit, %s:%u", file, e->line);
    else
        snprintf(buf, size, "%s \"%s\" peak_limit, %s:%u",
                 from ? from : "tests", e->pattern, file, e->line);
    return buf;
}

bool
leakgate_verdict__grew_loading(const struct leakgate_verdict *v)
{
    for (size_t i = 0; i < v->nstacks; i++) {
        const struct leakgate_vstack *s = &v->stacks[i];

        for (size_t k = 0; s->judgement.over && k < s->nframes; k++) {
            const char *fn = s->frames[k].function;

            /* glibc's loader, under every dlopen (ld.so, not the user's) */
            if (fn && strcmp(fn, "dl_open_worker") == 0 &&
                leakgate_symbolize__system_frame(&s->frames[k]))
                return true;
        }
    }
    return false;
}

static bool
has_prefix(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* A test runner's frame: CUnit, cmocka (their shared libraries), Check's
 * and Unity's runners (linked into the test binary: by name), or
 * leakgate's glue and adapters (docs/frameworks.md).  The frames from
 * the first one out are the framework's, never a suggested rule's. */
const char *const leakgate_verdict__framework_modules[] = {"libcunit.",
                                                           "libcmocka.", NULL};

static bool
is_runner_frame(const struct leakgate_frame *f)
{
    const char *const *modules = leakgate_verdict__framework_modules;
    static const char *const functions[] = {"leakgate_", "srunner_",
                                            "tcase_run_", "UnityDefaultTestRun",
                                            "_cmocka_run_group_tests"};
    const char *slash = f->module ? strrchr(f->module, '/') : NULL;

    for (size_t i = 0; modules[i]; i++) {
        if (has_prefix(slash ? slash + 1 : f->module, modules[i]))
            return true;
    }
    for (size_t i = 0; i < sizeof functions / sizeof functions[0]; i++) {
        if (has_prefix(f->function, functions[i]))
            return true;
    }
    return false;
}

/* The frame starts a process or thread: never the user's code. */
static bool
is_start_frame(const struct leakgate_frame *f)
{
    return leakgate_symbolize__system_frame(f) ||
           (f->function && strcmp(f->function, "_start") == 0);
}

static bool
ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), m = strlen(tail);

    return n >= m && strcmp(s + n - m, tail) == 0;
}

/* leakgate's own allocation wrappers (harness/alloc/intercept.c; before
 * the subsystem folders, harness/intercept.c), which a heap profile of a
 * gated program records above the allocating code: exact windows strip
 * them by address, offline readers (leakgate diff) here. */
static bool
is_own_wrapper(const struct leakgate_frame *f)
{
    return f->function && f->file &&
           (ends_with(f->file, "/harness/alloc/intercept.c") ||
            ends_with(f->file, "/harness/intercept.c"));
}

void
leakgate_verdict__trim(struct leakgate_vstack *s)
{
    size_t begin = 0, end = s->nframes;

    for (size_t i = 0; i < s->nframes; i++) {
        if (is_runner_frame(&s->frames[i])) {
            end = i;
            break;
        }
    }
    while (end > 0 && is_start_frame(&s->frames[end - 1]))
        end--;
    while (begin + 1 < end && is_own_wrapper(&s->frames[begin]))
        begin++;
    while (begin + 1 < end &&
           leakgate_symbolize__system_frame(&s->frames[begin]) &&
           leakgate_symbolize__system_frame(&s->frames[begin + 1]))
        begin++;
    s->shown_begin = end > begin ? begin : 0;
    s->shown_end = end > begin ? end : s->nframes;
}

static const char *const measured_names[] = {"exact",        "fast pass",
                                             "exact re-run", "exact replay",
                                             "suite window", "suite end"};
#define NMEASURED (sizeof measured_names / sizeof measured_names[0])

const char *
leakgate_verdict__measured_by(enum leakgate_measured how)
{
    return (unsigned int)how < NMEASURED ? measured_names[how] : "exact";
}

bool
leakgate_verdict__measured_parse(enum leakgate_measured *out, const char *text)
{
    for (unsigned int i = 0; i < NMEASURED; i++) {
        if (strcmp(text, measured_names[i]) == 0) {
            *out = (enum leakgate_measured)i;
            return true;
        }
    }
    return false;
}
