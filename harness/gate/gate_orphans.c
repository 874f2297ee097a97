/* SPDX-License-Identifier: MIT */
/*
 * gate_orphans: what a test's threads allocate after the test ended (a
 * detached worker that outlives it) is that test's.  The allocation
 * wrappers keep such objects out of every window and note them with the
 * test's token (track.h, Orphans); when the run is over, what is still
 * live is added to the test's own growth and its verdict judged again, by
 * its thresholds, as any window is.  Objects the program freed before the
 * run ended (a later test or a suite cleanup stopped the worker) cost
 * nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "error.h"
#include "gate.h"
#include "report.h"
#include "track.h"
#include "util.h"

static int
by_owner(const void *a, const void *b)
{
    const struct leakgate_track_orphan *x = a, *y = b;

    return (x->owner > y->owner) - (x->owner < y->owner);
}

/* v's own stacks and the orphans o[0..n) as one diff (*out). */
static int
combined_diff(struct leakgate_diff **out,
              const struct leakgate_verdict *v,
              const struct leakgate_track_orphan *o,
              size_t n)
{
    struct leakgate_diff_entry *e =
        leakgate_util__calloc(v->nstacks + n + 1, sizeof *e);
    int rc;

    *out = NULL;
    if (!e)
        return leakgate_error__set(LEAKGATE_ENOMEM, "orphan stacks");
    /* Borrowed: the new diff copies them. */
    for (size_t i = 0; i < v->nstacks; i++)
        leakgate_verdict__lend_entry(&e[i], &v->stacks[i]);
    for (size_t i = 0; i < n; i++) {
        struct leakgate_diff_entry *x = &e[v->nstacks + i];

        x->pcs = o[i].pcs;
        x->npcs = o[i].npcs;
        x->delta_bytes = (int64_t)o[i].bytes;
        x->delta_objs = 1;
        x->requested_known = o[i].requested != UINT64_MAX;
        x->delta_requested = x->requested_known ? (int64_t)o[i].requested : 0;
    }
    rc = leakgate_diff__of_entries(out, e, v->nstacks + n);
    leakgate_util__free(e);
    return rc;
}

/* What the new verdict v keeps of the one it replaces (w). */
static void
carry_over(struct leakgate_verdict *v, struct leakgate_verdict *w)
{
    leakgate_verdict__carry_record(v, w);
    v->how = w->how;
    v->rerun_declined = w->rerun_declined;
    v->probe_known = w->probe_known;
    v->made_once = w->made_once;
    v->shared_fixture = w->shared_fixture;
    v->orphans = true;
    /* The peak is its window's, which the threads' later memory is not
     * part of: kept when it failed the test, else not told beside a
     * retained figure it never saw. */
    if (w->peak_over) {
        leakgate_verdict__set_peak(v, w->peak_known, w->peak_bytes,
                                   w->allocations);
        leakgate_verdict__move_peak_stacks(v, w);
    }
}

static int
orphan_hint(struct leakgate_verdict *v,
            const struct leakgate_verdict *w,
            const struct leakgate_track_orphan *o,
            size_t n)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    uint64_t bytes = 0;
    char nb[32], no[32];

    for (size_t i = 0; i < n; i++)
        bytes += o[i].bytes;
    if (w->hint)
        leakgate_buf__printf(&b, "%s; ", w->hint);
    leakgate_buf__printf(
        &b,
        "%s B in %s object%s %s allocated after the test ended by a thread "
        "it started, and still live when the run ended: they are this "
        "test's (join or stop the thread before the test returns)",
        leakgate_util__group_digits(nb, sizeof nb, bytes, false),
        leakgate_util__group_digits(no, sizeof no, n, false), n == 1 ? "" : "s",
        n == 1 ? "was" : "were");
    leakgate_util__free(v->hint);
    v->hint = leakgate_buf__take(&b);
    return v->hint ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
}

/* Judge w (suite/test) again with the orphans o[0..n) added. */
static int
judge_owner(struct leakgate_gate *gate,
            struct leakgate_verdict *w,
            const struct leakgate_track_orphan *o,
            size_t n,
            struct leakgate_verdict **out)
{
    struct leakgate_verdict *v = NULL;
    struct leakgate_diff *acc = NULL;
    int rc;

    *out = NULL;
    rc = combined_diff(&acc, w, o, n);
    if (rc == 0)
        rc = leakgate_gate__judge_again(&v, gate, w, acc);
    if (rc < 0)
        return rc;
    carry_over(v, w);
    rc = orphan_hint(v, w, o, n);
    if (rc == 0)
        rc = leakgate_gate__finish_late(gate, v, true);
    if (rc < 0) {
        leakgate_verdict__free(v);
        return rc;
    }
    *out = v;
    return 0;
}

/* Objects a test's threads allocated after it ended that the tracker
 * could not keep (its table was full): that test cannot be judged (never
 * a pass), and the run says how many there were. */
static int
lost_objects(struct leakgate_gate *gate,
             leakgate_gate_owner_fn name_of,
             leakgate_gate_revised_fn revised,
             void *payload,
             uint64_t lost,
             uint32_t owner)
{
    const char *suite = NULL, *test = NULL;
    struct leakgate_verdict *w = NULL;
    struct leakgate_buf why = LEAKGATE_BUF_INIT;

    fprintf(stderr,
            "leakgate: note: %llu object%s that threads allocated after "
            "their test ended did not fit leakgate's table: not judged\n",
            (unsigned long long)lost, lost == 1 ? "" : "s");
    if (name_of(owner, &suite, &test, payload))
        w = leakgate_gate__find_verdict(gate, suite, test);
    if (!w || w->status == LEAKGATE_STATUS_NOT_JUDGED)
        return 0;
    leakgate_buf__printf(&why,
                         "the threads it started allocated more objects "
                         "after it ended than leakgate can keep (%llu not "
                         "kept): they cannot be judged; join or stop them "
                         "before the test returns",
                         (unsigned long long)lost);
    if (why.failed)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    w->status = LEAKGATE_STATUS_NOT_JUDGED;
    leakgate_util__free(w->not_judged_why);
    w->not_judged_why = leakgate_buf__take(&why);
    leakgate_util__free(w->report);
    w->report = leakgate_report__text(w, &gate->env, false);
    if (!w->report)
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    revised(owner, false, payload);
    return 0;
}

int
leakgate_gate__judge_orphans(struct leakgate_gate *gate,
                             leakgate_gate_owner_fn name_of,
                             leakgate_gate_revised_fn revised,
                             void *payload)
{
    struct leakgate_track_orphan *o = NULL;
    size_t n = 0;
    uint64_t lost = 0;
    uint32_t lost_owner = 0;
    int rc;

    rc = leakgate_track__orphans_take(&o, &n, &lost, &lost_owner);
    if (rc == 0 && n > 1)
        qsort(o, n, sizeof *o, by_owner);
    for (size_t i = 0, j; rc == 0 && i < n; i = j) {
        const char *suite = NULL, *test = NULL;
        struct leakgate_verdict *w, *v;
        bool failed;

        for (j = i + 1; j < n && o[j].owner == o[i].owner; j++)
            ;
        if (!name_of(o[i].owner, &suite, &test, payload))
            continue;
        w = leakgate_gate__find_verdict(gate, suite, test);
        /* A test not judged (left out, or not measurable) stays so. */
        if (!w || w->status == LEAKGATE_STATUS_NOT_JUDGED)
            continue;
        failed = w->status == LEAKGATE_STATUS_FAIL;
        rc = judge_owner(gate, w, &o[i], j - i, &v);
        if (rc < 0)
            break;
        leakgate_gate__replace_verdict(gate, w, v);
        revised(o[i].owner, !failed && v->status == LEAKGATE_STATUS_FAIL,
                payload);
    }
    if (rc == 0 && lost > 0)
        rc = lost_objects(gate, name_of, revised, payload, lost, lost_owner);
    leakgate_util__free(o);
    return rc;
}
