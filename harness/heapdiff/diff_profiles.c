/* SPDX-License-Identifier: MIT */
/*
 * diff_profiles: `leakgate diff` as a library call (include/leakgate/
 * diff.h).  Orchestration, like gate.c but for any program's profiles and
 * offline: read both files, parse them (heapfile), scale sampled counts
 * as jeprof does, diff per stack with jemalloc's own frames stripped
 * (diff; jemalloc is found by its mapping in MAPPED_LIBRARIES), symbolize
 * from MAPPED_LIBRARIES (symbolize), trim each stack to the program's code,
 * keep what --focus matches, and render (profdiff; graph + render for
 * pictures).
 *
 * Two profiles of different processes cannot be diffed (their addresses
 * do not correspond): when both record the executable's mapping and the
 * mappings differ, the call fails rather than print a meaningless diff.
 */
#include "leakgate/diff.h"

#include <regex.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "diff.h"
#include "error.h"
#include "heapfile.h"
#include "profdiff.h"
#include "render.h"
#include "symbolize.h"
#include "util.h"
#include "verdict.h"

/* The largest profile read (heapfile's own default limit). */
#define PROFILE_MAX_BYTES ((size_t)1 << 30)

struct job {
    struct leakgate_diff_options o;
    regex_t focus;
    bool has_focus;
    struct leakgate_heap *heap[2];               /* before (or NULL), after */
    struct leakgate_heap view[2];                /* scaled when sampled */
    struct leakgate_heap_stack *scaled_stack[2]; /* owned by the job */
    struct leakgate_range *strip;                /* jemalloc's mappings */
    size_t nstrip;
    struct leakgate_diff *diff;
    struct leakgate_symbolizer *sym;
    struct leakgate_profdiff *pd;
};

static bool
is_fraction(double f)
{
    /* Negative means "the default"; NaN fails both comparisons. */
    return f < 0 || (f >= 0 && f <= 1);
}

static int
check_options(struct job *j)
{
    const struct leakgate_diff_options *o = &j->o;
    char why[256];
    int rc;

    if (o->version != LEAKGATE_DIFF_OPTIONS_VERSION)
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "leakgate_diff_options version %u, this "
                                   "library knows %u",
                                   o->version, LEAKGATE_DIFF_OPTIONS_VERSION);
    if ((unsigned int)o->format > LEAKGATE_DIFF_FORMAT_PDF)
        return leakgate_error__set(LEAKGATE_EUSAGE, "unknown format %d",
                                   (int)o->format);
    if (!is_fraction(o->nodefraction) || !is_fraction(o->edgefraction))
        return leakgate_error__set(LEAKGATE_EUSAGE,
                                   "a fraction must be a number from 0 to 1");
    if (!o->focus)
        return 0;
    rc = regcomp(&j->focus, o->focus, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        regerror(rc, &j->focus, why, sizeof why);
        return leakgate_error__set(LEAKGATE_EUSAGE, "--focus '%s': %s",
                                   o->focus, why);
    }
    j->has_focus = true;
    return 0;
}

static int
load(struct leakgate_heap **out, const char *path)
{
    char *text = NULL;
    size_t len = 0;
    int rc = leakgate_render__read_file(&text, &len, path, PROFILE_MAX_BYTES);

    if (rc == 0)
        rc = leakgate_heapfile__parse(out, text, len, path, NULL);
    leakgate_util__free(text);
    return rc;
}

/* ---- sampled profiles --------------------------------------------------- */

/* 1 - e^-r for r >= 0, without libm: the series where it converges fast,
 * else e^-r by halving r, a series, and squaring back. */
static double
one_minus_exp_neg(double r)
{
    double term = 1.0, sum = 0.0;
    int halvings = 0;

    if (r < 0.5) {
        for (int k = 1; k < 20; k++) {
            term *= (k == 1 ? r : -r) / k;
            sum += term;
        }
        return sum;
    }
    if (r > 700.0)
        return 1.0;
    while (r > 0.5) {
        r *= 0.5;
        halvings++;
    }
    sum = 1.0;
    for (int k = 1; k < 20; k++) {
        term *= -r / k;
        sum += term;
    }
    while (halvings-- > 0)
        sum *= sum;
    return 1.0 - sum;
}

/* jeprof's un-sampling of a heap_v2/R profile, per stack: both counts
 * times 1 / (1 - e^-(mean size / R)). */
static int
scale(struct leakgate_heap *view,
      struct leakgate_heap_stack **owned,
      const struct leakgate_heap *h)
{
    struct leakgate_heap_stack *s;

    *view = *h;
    *owned = NULL;
    if (h->sample_period <= 1 || h->nstacks == 0)
        return 0;
    s = leakgate_util__calloc(h->nstacks, sizeof *s);
    if (!s)
        return leakgate_error__set(LEAKGATE_ENOMEM, "scaled profile");
    for (size_t i = 0; i < h->nstacks; i++) {
        double r, k;

        s[i] = h->stacks[i];
        if (s[i].live_objs == 0)
            continue;
        r = (double)s[i].live_bytes / (double)s[i].live_objs /
            (double)h->sample_period;
        k = 1.0 / one_minus_exp_neg(r);
        s[i].live_bytes = (uint64_t)((double)s[i].live_bytes * k + 0.5);
        s[i].live_objs = (uint64_t)((double)s[i].live_objs * k + 0.5);
    }
    view->stacks = s;
    *owned = s;
    return 0;
}

/* ---- mappings ----------------------------------------------------------- */

static bool
is_shared_object(const char *path)
{
    const char *so = strstr(leakgate_util__base_name(path), ".so");

    return so && (so[3] == '\0' || so[3] == '.');
}

/* The executable's lowest mapping (as symbolize.c finds it), or NULL. */
static const struct leakgate_heap_mapping *
exe_mapping(const struct leakgate_heap *h)
{
    const struct leakgate_heap_mapping *best = NULL;

    for (size_t i = 0; i < h->nmaps; i++) {
        const struct leakgate_heap_mapping *m = &h->maps[i];

        if (m->path[0] == '/' && strncmp(m->path, "/dev/", 5) != 0 &&
            !is_shared_object(m->path) && (!best || m->start < best->start))
            best = m;
    }
    return best;
}

static int
check_same_process(const struct job *j, const char *before, const char *after)
{
    const struct leakgate_heap_mapping *a, *b;

    if (!j->heap[0])
        return 0;
    a = exe_mapping(j->heap[0]);
    b = exe_mapping(j->heap[1]);
    if (!a || !b || (a->start == b->start && strcmp(a->path, b->path) == 0))
        return 0;
    return leakgate_error__set(
        LEAKGATE_EUSAGE,
        "%s and %s come from different processes (%s at 0x%jx, %s at "
        "0x%jx): a diff needs two profiles of one process",
        before, after, a->path, (uintmax_t)a->start, b->path,
        (uintmax_t)b->start);
}

/* The ranges of every mapping of libjemalloc, whose frames lead every
 * stack. */
static int
allocator_ranges(struct job *j)
{
    const struct leakgate_heap *h = j->heap[1];

    j->strip = leakgate_util__calloc(h->nmaps ? h->nmaps : 1, sizeof *j->strip);
    if (!j->strip)
        return leakgate_error__set(LEAKGATE_ENOMEM, "allocator ranges");
    for (size_t i = 0; i < h->nmaps; i++) {
        if (strncmp(leakgate_util__base_name(h->maps[i].path), "libjemalloc.",
                    12) == 0)
            j->strip[j->nstrip++] =
                (struct leakgate_range){h->maps[i].start, h->maps[i].end};
    }
    return 0;
}

/* ---- symbolized stacks -------------------------------------------------- */

static bool
focused(const struct job *j, const struct leakgate_vstack *s)
{
    if (!j->has_focus)
        return true;
    for (size_t k = 0; k < s->nframes; k++) {
        const struct leakgate_frame *f = &s->frames[k];

        if ((f->function && regexec(&j->focus, f->function, 0, NULL, 0) == 0) ||
            (f->file && regexec(&j->focus, f->file, 0, NULL, 0) == 0))
            return true;
    }
    return false;
}

/* Symbolize diff entry e into the next stack of pd, or count it as left
 * out by the focus. */
static int
add_stack(struct job *j, struct leakgate_diff_entry *e)
{
    struct leakgate_profdiff *pd = j->pd;
    struct leakgate_vstack *s = &pd->stacks[pd->nstacks];
    int rc;

    memset(s, 0, sizeof *s);
    rc = leakgate_symbolize__frames(j->sym, &s->frames, &s->nframes, e->pcs,
                                    e->npcs);
    if (rc < 0)
        return rc;
    leakgate_verdict__trim(s);
    if (!focused(j, s)) {
        leakgate_util__free(s->frames);
        if (e->delta_bytes > 0) {
            pd->unfocused_stacks++;
            pd->unfocused_bytes += e->delta_bytes;
        }
        return 0;
    }
    leakgate_verdict__steal_entry(s, e);
    pd->nstacks++;
    return 0;
}

static int
note_missing_files(struct job *j)
{
    const struct leakgate_heap_mapping *m = exe_mapping(j->heap[1]);
    int rc = 0;

    if (j->o.exe && access(j->o.exe, R_OK) != 0)
        rc = leakgate_profdiff__note(j->pd, "--exe %s is not readable",
                                     j->o.exe);
    else if (!j->o.exe && m && access(m->path, R_OK) != 0)
        rc = leakgate_profdiff__note(j->pd,
                                     "%s (recorded in the profile) is not "
                                     "readable: pass --exe BINARY to name "
                                     "its current copy",
                                     m->path);
    if (rc == 0 && j->nstrip == 0)
        rc = leakgate_profdiff__note(j->pd,
                                     "no libjemalloc mapping in the "
                                     "profile (jemalloc linked statically, "
                                     "or a pair leakgate wrote from a "
                                     "window's stacks, which hold none): "
                                     "allocator frames, if any, are not "
                                     "removed");
    return rc;
}

/* ---- the steps ---------------------------------------------------------- */

static int
measure(struct job *j, const char *before_path, const char *after_path)
{
    struct leakgate_heap empty;
    struct leakgate_diff_opts dopts = {NULL, 0, NULL, 0};
    int rc = 0;

    if (before_path)
        rc = load(&j->heap[0], before_path);
    if (rc == 0)
        rc = load(&j->heap[1], after_path);
    if (rc == 0)
        rc = check_same_process(j, before_path, after_path);
    for (int i = 0; i < 2 && rc == 0; i++) {
        if (j->heap[i])
            rc = scale(&j->view[i], &j->scaled_stack[i], j->heap[i]);
    }
    if (rc == 0)
        rc = allocator_ranges(j);
    if (rc < 0)
        return rc;
    memset(&empty, 0, sizeof empty);
    empty.sample_period = 1;
    dopts.strip = j->strip;
    dopts.nstrip = j->nstrip;
    return leakgate_diff__compute(&j->diff, j->heap[0] ? &j->view[0] : &empty,
                                  &j->view[1], &dopts);
}

static double
default_nodefraction(const struct leakgate_diff_options *o)
{
    if (o->nodefraction >= 0)
        return o->nodefraction;
    return o->format == LEAKGATE_DIFF_FORMAT_TEXT ||
                   o->format == LEAKGATE_DIFF_FORMAT_JSON
               ? 0.0
               : 0.005;
}

static int
symbolize_all(struct job *j, const char *before_path, const char *after_path)
{
    const struct leakgate_heap *h = j->heap[1];
    int rc;

    j->pd = leakgate_util__calloc(1, sizeof *j->pd);
    if (j->pd)
        j->pd->stacks = leakgate_util__calloc(
            j->diff->nentries ? j->diff->nentries : 1, sizeof *j->pd->stacks);
    if (!j->pd || !j->pd->stacks)
        return leakgate_error__set(LEAKGATE_ENOMEM, "profile diff");
    j->pd->before_name = before_path;
    j->pd->after_name = after_path;
    j->pd->sample_period = h->sample_period;
    j->pd->focus = j->o.focus;
    j->pd->nodefraction = default_nodefraction(&j->o);
    j->pd->edgefraction = j->o.edgefraction;
    j->pd->binary = "";
    j->pd->build_id = "";
    rc = leakgate_symbolize__new_maps(&j->sym, h->maps, h->nmaps, j->o.exe);
    if (rc < 0)
        return rc;
    if (leakgate_symbolize__main_module(j->sym, &j->pd->binary,
                                        &j->pd->build_id) < 0) {
        j->pd->binary = "";
        j->pd->build_id = "";
    }
    rc = note_missing_files(j);
    for (size_t i = 0; rc == 0 && i < j->diff->nentries; i++)
        rc = add_stack(j, &j->diff->entries[i]);
    return rc;
}

static int
render(char **out, size_t *len_out, struct job *j)
{
    static const char *const formats[] = {NULL, NULL, NULL, "svg", "pdf"};
    char *dot = NULL;
    int rc = 0;

    switch (j->o.format) {
    case LEAKGATE_DIFF_FORMAT_TEXT:
        *out = leakgate_profdiff__text(j->pd);
        break;
    case LEAKGATE_DIFF_FORMAT_JSON:
        *out = leakgate_profdiff__json(j->pd);
        break;
    default:
        rc = leakgate_profdiff__dot(&dot, j->pd);
        if (rc == 0 && j->o.format == LEAKGATE_DIFF_FORMAT_DOT) {
            *out = dot;
            dot = NULL;
        } else if (rc == 0) {
            rc = leakgate_render__text(out, len_out, dot, strlen(dot),
                                       formats[j->o.format],
                                       LEAKGATE_RENDER_TIMEOUT_MS);
        }
    }
    leakgate_util__free(dot);
    if (rc == 0 && !*out)
        rc = leakgate_error__set(LEAKGATE_ENOMEM, "diff output");
    if (rc == 0 && *out && j->o.format <= LEAKGATE_DIFF_FORMAT_DOT)
        *len_out = strlen(*out);
    return rc;
}

static void
job_dispose(struct job *j)
{
    leakgate_profdiff__free(j->pd);
    leakgate_symbolize__free(j->sym);
    leakgate_diff__free(j->diff);
    leakgate_util__free(j->strip);
    for (int i = 0; i < 2; i++) {
        leakgate_util__free(j->scaled_stack[i]);
        leakgate_heapfile__free(j->heap[i]);
    }
    if (j->has_focus)
        regfree(&j->focus);
}

int
leakgate_diff_profiles(char **out,
                       size_t *len_out,
                       const char *before_path,
                       const char *after_path,
                       const struct leakgate_diff_options *opts)
{
    static const struct leakgate_diff_options defaults =
        LEAKGATE_DIFF_OPTIONS_INIT;
    struct job j;
    int rc;

    *out = NULL;
    *len_out = 0;
    memset(&j, 0, sizeof j);
    j.o = opts ? *opts : defaults;
    rc = check_options(&j);
    if (rc == 0)
        rc = measure(&j, before_path, after_path);
    if (rc == 0)
        rc = symbolize_all(&j, before_path, after_path);
    if (rc == 0)
        rc = render(out, len_out, &j);
    job_dispose(&j);
    return rc;
}

void
leakgate_diff_output_free(char *out)
{
    leakgate_util__free(out);
}
