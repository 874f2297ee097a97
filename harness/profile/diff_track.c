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
#include "track.h"
#include "util.h"

/* One tracker group (alloc/track.h) appended as an entry: its pcs copied,
 * no threads. */
static int
append_group(const struct leakgate_track_group *g, void *payload)
{
    struct leakgate_diff *d = payload;
    struct leakgate_diff_entry *grown, *e;

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
    e->delta_objs = (int64_t)g->objs;
    e->delta_bytes = (int64_t)g->bytes;
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
    err = leakgate_track__left_groups(append_group, d);
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
