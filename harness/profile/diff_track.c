/* SPDX-License-Identifier: MIT */
/*
 * diff_track: a fast window's stacks as a diff.  The tracker (alloc/) hands
 * out plain groups of the objects a window left (stack, objects, bytes);
 * here they become a leakgate_diff's entries, above the hot path, which
 * builds no diff.  Apart from diff.c so that what parses and diffs heap
 * files (the fuzzers' core) needs no tracker.
 */
#include "diff.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "reach.h"
#include "track.h"
#include "util.h"

_Static_assert(
    LEAKGATE_REACH_ROOT_BIT(LEAKGATE_REACH_GLOBAL) == LEAKGATE_ROOT_GLOBAL &&
        LEAKGATE_REACH_ROOT_BIT(LEAKGATE_REACH_TLS) == LEAKGATE_ROOT_TLS &&
        LEAKGATE_REACH_ROOT_BIT(LEAKGATE_REACH_STACK) == LEAKGATE_ROOT_STACK,
    "reach.h's roots are diff.h's");

/* One tracker group (alloc/track.h) appended as an entry: its pcs copied,
 * no threads. */
static int
append_group(const struct leakgate_track_group *g, void *payload)
{
    struct leakgate_diff *d = payload;
    struct leakgate_diff_entry *grown, *e;
    /* Carried (track.h): less what it freed of earlier windows' objects,
     * as an exact window's profile counts it. */
    int64_t objs = (int64_t)g->objs - (int64_t)g->freed_objs;
    int64_t bytes = (int64_t)g->bytes - (int64_t)g->freed_bytes;
    bool whole = g->freed_objs == 0;

    if (objs == 0 && bytes == 0)
        return 0; /* a diff lists changes */
    grown = leakgate_util__realloc(d->entries,
                                   (d->nentries + 1) * sizeof *d->entries);
    if (!grown)
        return leakgate_error__set(LEAKGATE_ENOMEM, "diff: out of memory");
    d->entries = grown;
    e = &d->entries[d->nentries];
    memset(e, 0, sizeof *e);
    e->pcs = leakgate_util__calloc(g->npcs ? g->npcs : 1, sizeof *e->pcs);
    if (!e->pcs)
        return leakgate_error__set(LEAKGATE_ENOMEM, "diff: out of memory");
    memcpy(e->pcs, g->pcs, g->npcs * sizeof *e->pcs);
    e->npcs = g->npcs;
    e->delta_objs = objs;
    e->delta_bytes = bytes;
    /* The bytes asked for and the kinds are those of the objects left:
     * named only when they are the whole change (as
     * leakgate_diff__add_requested() names them). */
    e->delta_requested =
        whole && g->requested_known ? (int64_t)g->requested : 0;
    e->requested_known = whole && g->requested_known;
    if (whole && g->kinds_known) {
        e->reach.known = true;
        e->reach.lost_objs = (int64_t)g->lost_objs;
        e->reach.lost_bytes = (int64_t)g->lost_bytes;
        e->reach.indirect_objs = (int64_t)g->indirect_objs;
        e->reach.indirect_bytes = (int64_t)g->indirect_bytes;
        e->reach.roots = g->roots;
    }
    d->nentries++;
    return 0;
}

int
leakgate_diff__of_track_left(struct leakgate_diff **out)
{
    struct leakgate_diff *d = NULL;
    int err;

    *out = NULL;
    err = leakgate_diff__new_empty(&d);
    if (err < 0)
        return err;
    err = leakgate_track__left_groups_net(append_group, d);
    if (err != 0) {
        leakgate_diff__free(d);
        return err;
    }
    leakgate_diff__sort(d);
    *out = d;
    return 0;
}

int
leakgate_diff__of_track_hold(uint32_t owner, struct leakgate_diff **out)
{
    struct leakgate_diff *d = NULL;
    int err;

    *out = NULL;
    err = leakgate_diff__new_empty(&d);
    if (err < 0)
        return err;
    err = leakgate_track__hold_left(owner, append_group, d);
    if (err != 0) {
        leakgate_diff__free(d);
        return err;
    }
    *out = d;
    return 0;
}

/* The tracker's groups of the last window, borrowed (alloc/track.h). */
struct groups {
    struct leakgate_track_group *g;
    size_t n, cap;
};

static int
collect_group(const struct leakgate_track_group *g, void *payload)
{
    struct groups *c = payload;

    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 16;
        struct leakgate_track_group *grown =
            leakgate_util__realloc(c->g, cap * sizeof *grown);

        if (!grown)
            return leakgate_error__set(LEAKGATE_ENOMEM, "diff: out of memory");
        c->g = grown;
        c->cap = cap;
    }
    c->g[c->n++] = *g;
    return 0;
}

/* a[0, na) begins b[0, nb). */
static bool
begins(const uintptr_t *a, size_t na, const uintptr_t *b, size_t nb)
{
    return na <= nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

/* Groups times entries compared at most: past it, no request is named. */
#define REQUESTED_PAIRS ((size_t)1 << 22)

int
leakgate_diff__add_requested(struct leakgate_diff *d)
{
    struct groups c = {NULL, 0, 0};
    int rc = leakgate_track__left_groups(collect_group, &c);

    if (rc == LEAKGATE_ENOTFOUND) {
        rc = 0; /* some object has no stack: no request is named */
        leakgate_error__clear();
    } else if (rc == 0 && c.n > 0 && d->nentries <= REQUESTED_PAIRS / c.n)
        for (size_t i = 0; i < d->nentries; i++) {
            struct leakgate_diff_entry *e = &d->entries[i];
            uint64_t objs = 0, bytes = 0, req = 0;
            bool known = true, kinds = true;
            struct leakgate_reach_counts r;

            memset(&r, 0, sizeof r);

            if (e->delta_bytes <= 0)
                continue;
            /* The tracker's stacks end at the test runner's code
             * (leakgate_track__runner()), a profile's do not. */
            for (size_t k = 0; k < c.n; k++) {
                if (!begins(c.g[k].pcs, c.g[k].npcs, e->pcs, e->npcs))
                    continue;
                objs += c.g[k].objs;
                bytes += c.g[k].bytes;
                req += c.g[k].requested;
                known &= c.g[k].requested_known;
                kinds &= c.g[k].kinds_known;
                r.lost_objs += (int64_t)c.g[k].lost_objs;
                r.lost_bytes += (int64_t)c.g[k].lost_bytes;
                r.indirect_objs += (int64_t)c.g[k].indirect_objs;
                r.indirect_bytes += (int64_t)c.g[k].indirect_bytes;
                r.roots |= c.g[k].roots;
            }
            if (objs != (uint64_t)e->delta_objs ||
                bytes != (uint64_t)e->delta_bytes)
                continue;
            if (known) {
                e->delta_requested = (int64_t)req;
                e->requested_known = true;
            }
            /* The same objects: what the scan said of them (reach.h). */
            if (kinds) {
                r.known = true;
                e->reach = r;
            }
        }
    leakgate_util__free(c.g);
    return rc;
}
