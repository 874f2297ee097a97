/* SPDX-License-Identifier: MIT */
/*
 * gate_late: growth a test left reachable, lost by the run's end.
 *
 * A window's scan (alloc/reach.h) tells what the test's objects are when
 * it ends.  A test that hangs its objects on a global the next test
 * clears without freeing them (`memset(&db, 0, sizeof db)`) leaves growth
 * that is reachable then and lost a moment later, which a leak checker
 * that looks at the program's exit calls definitely lost.  So a replay
 * keeps the reachable objects of the stacks it measured (track.h,
 * "Keep"), runs on to the end of the program's tests instead of stopping
 * after its last window (its results are written at that window all the
 * same, in case the program never gets there), and classifies the kept
 * objects once more when the tests are over: those no root reaches now
 * are added to their stack's lost (or indirectly lost) counts as lost
 * later, and the verdict is judged again for them (lost_limit, the
 * advice: lost stacks get no accept rule).  Objects freed since are not
 * kept; what stays reachable keeps its kind.
 */
#include <string.h>

#include "diff.h"
#include "error.h"
#include "gate.h"
#include "reach.h"
#include "track.h"
#include "util.h"

/* A stack some of whose objects are kept, by its verdict's names and its
 * pcs: verdicts are replaced (a revised judgement), stacks re-sorted. */
struct gate_late {
    char *suite, *test;
    uintptr_t *pcs;
    size_t npcs;
    bool partial; /* some of its reachable objects could not be kept */
    /* What the run's end found. */
    int64_t lost_objs, lost_bytes, indirect_objs, indirect_bytes;
};

void
leakgate_gate__late_free(struct leakgate_gate *gate)
{
    /* Tags name entries of this list: none outlives it. */
    if (gate->replay.nlate > 0)
        leakgate_track__kept_clear();
    for (size_t i = 0; i < gate->replay.nlate; i++) {
        leakgate_util__free(gate->replay.late[i].suite);
        leakgate_util__free(gate->replay.late[i].test);
        leakgate_util__free(gate->replay.late[i].pcs);
    }
    leakgate_util__free(gate->replay.late);
    gate->replay.late = NULL;
    gate->replay.nlate = gate->replay.late_cap = 0;
}

/* Reachable objects in s, as the window's scan found them. */
static bool
some_reachable(const struct leakgate_vstack *s)
{
    return s->reach.known && s->objs > 0 &&
           s->objs - s->reach.lost_objs - s->reach.indirect_objs > 0;
}

struct keeping {
    struct leakgate_gate *gate;
    const struct leakgate_verdict *v;
};

/* The tag of group g's reachable objects: a new entry for its stack. */
static uint32_t
tag_of(const struct leakgate_track_group *g, void *payload)
{
    struct keeping *k = payload;
    struct leakgate_gate *gate = k->gate;
    const struct leakgate_verdict *v = k->v;
    struct gate_late *e;
    size_t i = 0;

    while (i < v->nstacks &&
           !(some_reachable(&v->stacks[i]) &&
             leakgate_diff__same_pcs(v->stacks[i].pcs, v->stacks[i].npcs,
                                     g->pcs, g->npcs)))
        i++;
    if (i == v->nstacks || gate->replay.nlate >= UINT32_MAX - 1)
        return UINT32_MAX;
    if (gate->replay.nlate == gate->replay.late_cap) {
        size_t cap = gate->replay.late_cap ? gate->replay.late_cap * 2 : 16;
        struct gate_late *grown =
            leakgate_util__realloc(gate->replay.late, cap * sizeof *grown);

        if (!grown)
            return UINT32_MAX;
        gate->replay.late = grown;
        gate->replay.late_cap = cap;
    }
    e = &gate->replay.late[gate->replay.nlate];
    memset(e, 0, sizeof *e);
    e->suite = leakgate_util__strdup(v->suite);
    e->test = leakgate_util__strdup(v->test);
    e->pcs = leakgate_util__calloc(g->npcs ? g->npcs : 1, sizeof *e->pcs);
    if (!e->suite || !e->test || !e->pcs) {
        leakgate_util__free(e->suite);
        leakgate_util__free(e->test);
        leakgate_util__free(e->pcs);
        return UINT32_MAX;
    }
    memcpy(e->pcs, g->pcs, g->npcs * sizeof *e->pcs);
    e->npcs = g->npcs;
    return (uint32_t)gate->replay.nlate++;
}

/* An object of tag's stack did not fit the table: its stack is not
 * judged again (what the run's end found would be part of the story). */
static void
dropped(uint32_t tag, void *payload)
{
    struct keeping *k = payload;

    if (tag < k->gate->replay.nlate)
        k->gate->replay.late[tag].partial = true;
}

void
leakgate_gate__late_keep(struct leakgate_gate *gate,
                         const struct leakgate_verdict *v)
{
    struct keeping k = {gate, v};
    bool any = false;

    /* Growth judged for what is lost: a failure's advice, a lost_limit. */
    if (!gate->replay.child || !v ||
        (v->status != LEAKGATE_STATUS_FAIL && !v->settings.lost_limited))
        return;
    for (size_t i = 0; i < v->nstacks && !any; i++)
        any = some_reachable(&v->stacks[i]);
    /* A window whose kinds are not known, or an exact one (it keeps no
     * stacks in the tracker): nothing is kept. */
    if (any)
        (void)leakgate_track__keep_left(tag_of, dropped, &k);
}

static int
count_kept(uint32_t tag,
           uint64_t bytes,
           enum leakgate_reach_kind kind,
           void *payload)
{
    struct leakgate_gate *gate = payload;
    struct gate_late *e;

    if (tag >= gate->replay.nlate)
        return 0;
    e = &gate->replay.late[tag];
    if (kind == LEAKGATE_REACH_LOST) {
        e->lost_objs++;
        e->lost_bytes += (int64_t)bytes;
    } else if (kind == LEAKGATE_REACH_INDIRECT) {
        e->indirect_objs++;
        e->indirect_bytes += (int64_t)bytes;
    }
    return 0;
}

/* Add e's late counts to its stack in v; true when there were some. */
static bool
add_late(struct leakgate_verdict *v, const struct gate_late *e)
{
    for (size_t i = 0; i < v->nstacks; i++) {
        struct leakgate_reach_counts *r = &v->stacks[i].reach;

        if (!r->known ||
            !leakgate_diff__same_pcs(v->stacks[i].pcs, v->stacks[i].npcs,
                                     e->pcs, e->npcs))
            continue;
        r->lost_objs += e->lost_objs;
        r->lost_bytes += e->lost_bytes;
        r->indirect_objs += e->indirect_objs;
        r->indirect_bytes += e->indirect_bytes;
        r->later_objs += e->lost_objs + e->indirect_objs;
        r->later_bytes += e->lost_bytes + e->indirect_bytes;
        return true;
    }
    return false;
}

int
leakgate_gate__late_judge(struct leakgate_gate *gate, const void *frame)
{
    int rc;

    if (!gate || !gate->replay.child || gate->replay.nlate == 0 ||
        leakgate_track__kept_live() == 0)
        return 0;
    rc = leakgate_reach__classify_kept(frame, leakgate_track__kept_each,
                                       count_kept, gate);
    /* A scan that cannot run (other threads that cannot be held still, a
     * fault) leaves the kinds the windows found. */
    if (rc < 0 && rc != LEAKGATE_ENOMEM) {
        leakgate_error__clear();
        rc = 0;
    }
    for (size_t i = 0; rc == 0 && i < gate->replay.nlate; i++) {
        const struct gate_late *e = &gate->replay.late[i];
        struct leakgate_verdict *v;

        if (e->partial || e->lost_objs + e->indirect_objs == 0)
            continue;
        v = leakgate_gate__find_verdict(gate, e->suite, e->test);
        if (v && v->status != LEAKGATE_STATUS_NOT_JUDGED && add_late(v, e))
            rc = leakgate_gate__judge_lost_again(gate, v);
    }
    leakgate_gate__late_free(gate);
    return rc < 0 ? rc : 0;
}

bool
leakgate_gate__late_pending(const struct leakgate_gate *gate)
{
    return gate->replay.nlate > 0 && leakgate_track__kept_live() > 0;
}
