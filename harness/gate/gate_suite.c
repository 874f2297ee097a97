/* SPDX-License-Identifier: MIT */
/*
 * gate_suite: `scope: suite`, a shared fixture judged per test at the end
 * of its suite (docs/thresholds.md, "Shared fixtures").
 *
 *   test window   a fast window (track.h) that records the stack of every
 *                 allocation, in every mode; nothing left -> PASS now
 *   it left some  its objects are watched (track.h, Hold) with their
 *                 stacks; the verdict waits for the suite's end
 *   suite over    (after the suite cleanup) objects a later test or the
 *                 cleanup freed were held by the fixture: their bytes are
 *                 a note, never a failure; what is still live is what the
 *                 test lost, judged per stack by its thresholds as any
 *                 window is
 *
 * The suite's own window is an ordinary one: init and cleanup, capped by
 * the growth over the whole suite (gate.c).  The verdict is per object, so
 * it is the same with --exact: an exact window cannot tell which objects
 * of a stack a later test freed.  Without leakgate's allocation wrappers
 * (leakgate_gate_holds_tests() is 0) the glue measures such a suite as one
 * window instead.
 */
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "error.h"
#include "gate.h"
#include "report.h"
#include "track.h"
#include "util.h"

int
leakgate_gate_holds_tests(const leakgate_gate *gate)
{
    /* In a replay too: a listed test of such a suite gets an exact window
     * of its own (the CUnit glue), for the stacks of its peak. */
    return gate && leakgate_track__installed() ? 1 : 0;
}

int
leakgate_verdict_waits_for_suite(const leakgate_verdict *v)
{
    return v && v->suite_wait ? 1 : 0;
}

int
leakgate_gate__hold(struct leakgate_gate *gate,
                    struct leakgate_verdict **out,
                    bool judged)
{
    struct gate_scope *s = &gate->cur;
    struct leakgate_diff *held = NULL;
    struct leakgate_verdict *v = NULL;
    struct leakgate_buf why = LEAKGATE_BUF_INIT;
    char nb[32], no[32];
    uint32_t owner;
    int rc;

    *out = NULL;
    owner = ++gate->watch_next % 4096;
    if (owner == 0)
        owner = ++gate->watch_next % 4096;
    rc = leakgate_diff__of_track_hold(owner, &held);
    if (rc < 0 && rc != LEAKGATE_ENOTFOUND)
        return rc;
    /* The verdict of an empty window, not judged until the suite ends. */
    rc = leakgate_gate__judge(&v, gate, judged);
    if (rc < 0) {
        leakgate_diff__free(held);
        return rc;
    }
    leakgate_buf__printf(
        &why,
        "left %s B in %s objects; judged when suite "
        "'%s' ends (scope: suite), or not at all if the "
        "program stops before",
        leakgate_util__group_digits(nb, sizeof nb, s->first.live_bytes, false),
        leakgate_util__group_digits(no, sizeof no, s->first.live_objs, false),
        s->suite);
    leakgate_util__free(v->not_judged_why);
    v->not_judged_why = leakgate_buf__take(&why);
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    v->how = LEAKGATE_MEASURED_SUITE_END;
    v->first_bytes = s->first.live_bytes;
    v->first_objs = s->first.live_objs;
    v->watch_id = owner;
    v->held = held;
    v->suite_wait = judged;
    v->needs_replay = v->peak_replay = s->peak_stacks_wanted && judged;
    if (!v->not_judged_why) {
        leakgate_verdict__free(v);
        return leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
    }
    *out = v;
    return 0;
}

bool
leakgate_gate__suite_waits(const struct leakgate_gate *gate, const char *suite)
{
    for (size_t i = 0; i < gate->nverdicts; i++) {
        if (gate->verdicts[i]->suite_wait &&
            strcmp(gate->verdicts[i]->suite, suite) == 0)
            return true;
    }
    return false;
}

/* What the watched objects of one suite's waiting tests became. */
struct survivors {
    struct leakgate_verdict **v; /* waiting verdicts, by index */
    size_t n;
    uint64_t **bytes; /* [verdict][entry] still live */
    uint64_t **req;   /* ... the bytes asked for */
    uint64_t **objs;
    uint64_t *lost_bytes; /* [verdict] live, without a stack */
    uint64_t *lost_objs;
};

static int
count_survivor(
    uint32_t owner, uint32_t entry, uint64_t bytes, uint64_t req, void *payload)
{
    struct survivors *sv = payload;

    for (size_t i = 0; i < sv->n; i++) {
        const struct leakgate_verdict *v = sv->v[i];

        if (v->watch_id != owner)
            continue;
        if (v->held && entry < v->held->nentries) {
            sv->bytes[i][entry] += bytes;
            /* UINT64_MAX: not known for the whole stack */
            sv->req[i][entry] =
                req == UINT64_MAX || sv->req[i][entry] == UINT64_MAX
                    ? UINT64_MAX
                    : sv->req[i][entry] + req;
            sv->objs[i][entry]++;
        } else {
            sv->lost_bytes[i] += bytes;
            sv->lost_objs[i]++;
        }
        break;
    }
    return 0;
}

/* The held diff's entries that are still live, as a diff of their own. */
static int
survivors_diff(struct leakgate_diff **out,
               const struct leakgate_diff *held,
               const uint64_t *bytes,
               const uint64_t *req,
               const uint64_t *objs)
{
    size_t n = held ? held->nentries : 0, m = 0;
    struct leakgate_diff_entry *live =
        leakgate_util__calloc(n ? n : 1, sizeof *live);
    int rc;

    *out = NULL;
    if (!live)
        return leakgate_error__set(LEAKGATE_ENOMEM, "held stacks");
    for (size_t i = 0; i < n; i++) {
        struct leakgate_diff_entry *e = &live[m];

        if (objs[i] == 0)
            continue;
        /* The stack is borrowed: the new diff copies it. */
        e->pcs = held->entries[i].pcs;
        e->npcs = held->entries[i].npcs;
        e->delta_bytes = (int64_t)bytes[i];
        e->requested_known =
            held->entries[i].requested_known && req[i] != UINT64_MAX;
        e->delta_requested = e->requested_known ? (int64_t)req[i] : 0;
        e->delta_objs = (int64_t)objs[i];
        m++;
    }
    rc = leakgate_diff__of_entries(out, live, m);
    leakgate_util__free(live);
    return rc;
}

static int
hold_note(struct leakgate_verdict *v, uint64_t bytes, uint64_t objs)
{
    struct leakgate_buf b = LEAKGATE_BUF_INIT;
    char nb[32], no[32];

    v->held_bytes = bytes;
    v->held_objs = objs;
    if (objs == 0)
        return 0;
    leakgate_buf__printf(
        &b,
        "%s B in %s object%s this test left %s freed "
        "by later tests or the suite cleanup: held by the "
        "suite's fixture, not lost (scope: suite)",
        leakgate_util__group_digits(nb, sizeof nb, bytes, false),
        leakgate_util__group_digits(no, sizeof no, objs, false),
        objs == 1 ? "" : "s", objs == 1 ? "was" : "were");
    leakgate_util__free(v->hint);
    v->hint = leakgate_buf__take(&b);
    return v->hint ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
}

/* Move what the waiting record w carries (notes, time, first pass) into
 * its final verdict v. */
static void
carry_over(struct leakgate_verdict *v, struct leakgate_verdict *w)
{
    leakgate_verdict__carry_record(v, w);
    v->how = LEAKGATE_MEASURED_SUITE_END;
    v->watch_id = w->watch_id;
    /* The peak is its own window's (the suite's end measures no peak). */
    leakgate_verdict__set_peak(v, w->peak_known, w->peak_bytes, w->allocations);
    leakgate_verdict__move_peak_stacks(v, w);
    v->needs_replay = w->needs_replay;
    v->peak_replay = w->peak_replay;
}

static int
not_judged(struct leakgate_gate *gate,
           struct leakgate_verdict *v,
           uint64_t bytes,
           uint64_t objs,
           bool unwatched)
{
    struct leakgate_buf why = LEAKGATE_BUF_INIT;
    char nb[32], no[32];

    if (unwatched)
        leakgate_buf__printf(&why, "left more objects than leakgate can "
                                   "watch until its suite ends (scope: "
                                   "suite); give it a suite of its own");
    else
        leakgate_buf__printf(
            &why,
            "%s B in %s objects it left outlived the "
            "suite cleanup, but their stacks could not be "
            "recorded (too many stacks in one test)",
            leakgate_util__group_digits(nb, sizeof nb, bytes, false),
            leakgate_util__group_digits(no, sizeof no, objs, false));
    v->status = LEAKGATE_STATUS_NOT_JUDGED;
    leakgate_util__free(v->not_judged_why);
    v->not_judged_why = leakgate_buf__take(&why);
    leakgate_util__free(v->report);
    v->report =
        v->not_judged_why ? leakgate_report__text(v, &gate->env, false) : NULL;
    return v->report ? 0 : leakgate_error__set(LEAKGATE_ENOMEM, "verdict");
}

/* The final verdict of waiting record sv->v[i]. */
static int
judge_one(struct leakgate_gate *gate, struct survivors *sv, size_t i)
{
    struct leakgate_verdict *w = sv->v[i], *v = NULL;
    struct leakgate_diff *acc = NULL;
    uint64_t freed_bytes, freed_objs;
    bool unwatched;
    int rc;

    leakgate_track__watch_freed(w->watch_id, &freed_bytes, &freed_objs,
                                &unwatched);
    rc = survivors_diff(&acc, w->held, sv->bytes[i], sv->req[i], sv->objs[i]);
    if (rc == 0)
        rc = leakgate_gate__judge_again(&v, gate, w, acc);
    if (rc < 0)
        return rc;
    carry_over(v, w);
    rc = hold_note(v, freed_bytes, freed_objs);
    if (rc == 0 && (unwatched || sv->lost_objs[i] > 0))
        rc =
            not_judged(gate, v, sv->lost_bytes[i], sv->lost_objs[i], unwatched);
    if (rc == 0)
        rc = leakgate_gate__finish_late(gate, v,
                                        !unwatched && sv->lost_objs[i] == 0);
    if (rc < 0) {
        leakgate_verdict__free(v);
        return rc;
    }
    sv->v[i] = v;
    leakgate_gate__replace_verdict(gate, w, v);
    return 0;
}

static void
survivors_free(struct survivors *sv)
{
    for (size_t i = 0; i < sv->n; i++) {
        leakgate_util__free(sv->bytes ? sv->bytes[i] : NULL);
        leakgate_util__free(sv->req ? sv->req[i] : NULL);
        leakgate_util__free(sv->objs ? sv->objs[i] : NULL);
    }
    leakgate_util__free(sv->v);
    leakgate_util__free(sv->bytes);
    leakgate_util__free(sv->req);
    leakgate_util__free(sv->objs);
    leakgate_util__free(sv->lost_bytes);
    leakgate_util__free(sv->lost_objs);
}

static int
survivors_alloc(struct survivors *sv,
                const struct leakgate_gate *gate,
                const char *suite)
{
    size_t cap = 0;

    for (size_t i = 0; i < gate->nverdicts; i++)
        cap += gate->verdicts[i]->suite_wait &&
               strcmp(gate->verdicts[i]->suite, suite) == 0;
    if (cap == 0)
        return 0;
    sv->v = leakgate_util__calloc(cap, sizeof *sv->v);
    sv->bytes = leakgate_util__calloc(cap, sizeof *sv->bytes);
    sv->req = leakgate_util__calloc(cap, sizeof *sv->req);
    sv->objs = leakgate_util__calloc(cap, sizeof *sv->objs);
    sv->lost_bytes = leakgate_util__calloc(cap, sizeof *sv->lost_bytes);
    sv->lost_objs = leakgate_util__calloc(cap, sizeof *sv->lost_objs);
    if (!sv->v || !sv->bytes || !sv->req || !sv->objs || !sv->lost_bytes ||
        !sv->lost_objs)
        return leakgate_error__set(LEAKGATE_ENOMEM, "held tests");
    for (size_t i = 0; i < gate->nverdicts; i++) {
        struct leakgate_verdict *v = gate->verdicts[i];
        size_t n = v->held ? v->held->nentries : 0;

        if (!v->suite_wait || strcmp(v->suite, suite) != 0)
            continue;
        sv->bytes[sv->n] = leakgate_util__calloc(n ? n : 1, sizeof(uint64_t));
        sv->req[sv->n] = leakgate_util__calloc(n ? n : 1, sizeof(uint64_t));
        sv->objs[sv->n] = leakgate_util__calloc(n ? n : 1, sizeof(uint64_t));
        sv->v[sv->n++] = v;
        if (!sv->bytes[sv->n - 1] || !sv->req[sv->n - 1] ||
            !sv->objs[sv->n - 1])
            return leakgate_error__set(LEAKGATE_ENOMEM, "held tests");
    }
    return 0;
}

int
leakgate_gate_suite_over(leakgate_gate *gate, const char *suite)
{
    struct survivors sv;
    int rc;

    memset(&sv, 0, sizeof sv);
    if (gate->cur.open)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   "suite %s is over but %s/%s is open", suite,
                                   gate->cur.suite, gate->cur.test);
    rc = survivors_alloc(&sv, gate, suite);
    if (rc == 0 && sv.n > 0)
        rc = leakgate_track__held_each(count_survivor, &sv);
    for (size_t i = 0; rc == 0 && i < sv.n; i++)
        rc = judge_one(gate, &sv, i);
    survivors_free(&sv);
    leakgate_track__watch_clear(); /* the suite is over */
    return rc;
}
