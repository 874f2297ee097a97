/* SPDX-License-Identifier: MIT */
/*
 * gate_exact: the pieces of an exact window, below the gate's state
 * machine (gate.c) and its strategies, which call it and which it never
 * calls.  A piece starts with a "before" heap dump and recording on
 * (leakgate_gate__piece_start()) and stops with recording off, an
 * "after" dump and their diff added to the window
 * (leakgate_gate__piece_stop()); the peak meter's trigger dumps the heap
 * where the window's peak is (the peak stacks); `settle` waits for
 * deferred frees before any window, exact or fast, stops; a suite's own
 * window is capped by its growth over the whole suite.  Owns no state:
 * everything is in struct leakgate_gate (gate.h).
 */
#include "gate.h"
#include "reach.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#include "diff.h"
#include "error.h"
#include "heapfile.h"
#include "profile.h"
#include "track.h"
#include "util.h"

/*
 * The peak meter (track.h).  Exact windows with a peak_limit arm its
 * trigger at the limit: the allocation that takes the window over it
 * dumps the heap profile (a third dump target, from inside the wrapper,
 * where nothing of jemalloc's is held), and so does every allocation
 * that takes it another sixteenth (at least 256 B) higher; the last dump
 * of a piece, diffed with the piece's "before" dump, says which stacks
 * held the bytes at (within 1/16 or 256 B of) the window's peak.
 */
static long long
peak_trigger(long long level, void *payload)
{
    struct leakgate_gate *gate = payload;
    long long step = level / 16 > 256 ? level / 16 : 256;

    if (leakgate_profile__dump(&gate->peak) == 0)
        gate->peak_dumped = level;
    return level + step;
}

static int
meter_piece_start(struct leakgate_gate *gate)
{
    struct gate_scope *s = &gate->cur;
    const struct leakgate_policy_settings *st = &s->settings;
    long long at;

    if (!leakgate_track__installed())
        return 0;
    if (st->peak_limited && gate->peak.fd < 0) {
        int rc = leakgate_profile__dumpfile_open(&gate->peak);

        if (rc < 0)
            return rc;
    }
    gate->peak_dumped = 0;
    leakgate_track__meter_start(s->metered ? &s->meter : NULL);
    s->metered = true;
    if (st->peak_limited) {
        /* Past the level this window's dumps have reached already. */
        at = (long long)(st->peak_limit < (uint64_t)LLONG_MAX
                             ? st->peak_limit + 1
                             : (uint64_t)LLONG_MAX);
        if (s->peak_level > 0 && (long long)s->peak_level + 256 > at)
            at = (long long)s->peak_level + 256;
        leakgate_track__meter_arm(at, peak_trigger, gate);
    }
    return 0;
}

/* The piece's last trigger dump against its "before" (parsed by
 * piece_add()): the peak stacks. */
static int
peak_piece_add(struct leakgate_gate *gate,
               const struct leakgate_heap *before,
               const struct leakgate_diff_opts *dopts)
{
    struct leakgate_heap *at = NULL;
    struct leakgate_diff *d = NULL;
    int rc = leakgate_profile__dumpfile_read(&gate->peak);

    if (rc == 0)
        rc = leakgate_heapfile__parse(&at, gate->peak.text, gate->peak.len,
                                      "<peak dump>", NULL);
    if (rc == 0)
        rc = leakgate_diff__compute(&d, before, at, dopts);
    if (rc == 0) {
        leakgate_diff__free(gate->cur.peak_diff);
        gate->cur.peak_diff = d;
        gate->cur.peak_level = (uint64_t)gate->peak_dumped;
        d = NULL;
    }
    gate->peak_dumped = 0;
    leakgate_diff__free(d);
    leakgate_heapfile__free(at);
    return rc;
}

/* Start recording a piece: dump "before", then activate. */
int
leakgate_gate__piece_start(struct leakgate_gate *gate)
{
    int rc = leakgate_profile__dump(&gate->before);

    if (rc < 0)
        return rc;
    leakgate_gate__clock_start(gate);
    rc = leakgate_profile__set_active(true);
    if (rc == 0)
        rc = meter_piece_start(gate);
    /* An exact window is watched by the tracker too: the stacks it notes
     * give the bytes the program asked for (piece_add()), and in a replay
     * what it left is compared with what the first run's fast pass left.
     * A suite window is not: its pieces are tracker windows of their own
     * in a lean first run, which judges no replay by them. */
    if (rc == 0 &&
        (gate->cur.rerun || strcmp(gate->cur.test, "[suite]") != 0) &&
        !gate->cur.tracking && gate->cur.nruns == 0 &&
        leakgate_track__installed() &&
        (leakgate_track__stacks(LEAKGATE_TRACK_STACKS_ALL) == 0 ||
         leakgate_track__stacks(LEAKGATE_TRACK_STACKS_NONE) == 0))
        gate->cur.tracking = leakgate_track__begin() == 0;
    return rc;
}

static int
keep_first_before(struct leakgate_gate *gate)
{
    struct gate_scope *s = &gate->cur;

    /* Kept for the artifacts, and for a suite's own window, which is
     * capped by the growth over the whole suite
     * (leakgate_gate__cap_suite_window). */
    if ((!gate->opts.report_dir && strcmp(s->test, "[suite]") != 0) ||
        s->first_before)
        return 0;
    s->first_before = leakgate_util__malloc(gate->before.len);
    if (!s->first_before)
        return leakgate_error__set(LEAKGATE_ENOMEM, "heap copy");
    memcpy(s->first_before, gate->before.text, gate->before.len);
    s->first_before_len = gate->before.len;
    return 0;
}

/* Diff the "before" and "after" dumps of a piece into cur.acc; noted:
 * the tracker's window was this piece (the bytes asked for). */
static int
piece_add(struct leakgate_gate *gate, bool noted)
{
    struct leakgate_heap *before = NULL, *after = NULL;
    struct leakgate_diff *piece = NULL;
    struct leakgate_diff_opts dopts = {gate->strip, gate->nstrip, gate->exclude,
                                       gate->nexclude};
    int rc;

    rc = leakgate_profile__dumpfile_read(&gate->before);
    if (rc == 0)
        rc = leakgate_profile__dumpfile_read(&gate->after);
    if (rc == 0)
        rc = keep_first_before(gate);
    if (rc == 0)
        rc = leakgate_heapfile__parse(&before, gate->before.text,
                                      gate->before.len, "<before dump>", NULL);
    if (rc == 0)
        rc = leakgate_heapfile__parse(&after, gate->after.text, gate->after.len,
                                      "<after dump>", NULL);
    if (rc == 0)
        rc = leakgate_diff__compute(&piece, before, after, &dopts);
    if (rc == 0 && noted)
        rc = leakgate_diff__add_requested(piece);
    if (rc == 0)
        rc = leakgate_diff__accumulate(gate->cur.acc, piece);
    if (rc == 0)
        rc = leakgate_diff__accumulate(gate->cur.run_acc, piece);
    if (rc == 0 && gate->peak_dumped > 0)
        rc = peak_piece_add(gate, before, &dopts);
    leakgate_diff__free(piece);
    leakgate_heapfile__free(after);
    leakgate_heapfile__free(before);
    return rc;
}

/*
 * `settle`: give threads that free after the test returns (a pool, a
 * deferred free) up to settle_ms to do so, still recording.  Stops early
 * once live bytes are back at the window's starting level, or once they
 * have fallen and then held still for a tenth of settle_ms (at least 5 ms).
 */
void
leakgate_gate__settle(const struct leakgate_gate *gate)
{
    const struct timespec step = {0, 1000000}; /* 1 ms */
    unsigned int quiet_needed = gate->cur.settings.settle_ms / 10, quiet = 0;
    uint64_t live, last = UINT64_MAX;
    bool fell = false;

    if (quiet_needed < 5)
        quiet_needed = 5;
    for (unsigned int ms = 0; ms < gate->cur.settings.settle_ms; ms++) {
        if (leakgate_profile__live_bytes(&live) < 0)
            return;
        if (live <= gate->cur.start_live)
            return;
        if (live < last && last != UINT64_MAX) {
            fell = true;
            quiet = 0;
        } else if (fell && ++quiet >= quiet_needed) {
            return;
        }
        last = live;
        nanosleep(&step, NULL);
    }
}

/* Stop recording a piece: deactivate, dump "after", diff. */
int
leakgate_gate__piece_stop(struct leakgate_gate *gate)
{
    bool noted = false;
    int rc;

    leakgate_gate__settle(gate);
    leakgate_gate__meter_stop(gate);
    if (gate->cur.tracking) {
        /* The exact re-run of a fast window: what did it leave? */
        if (leakgate_track__end(&gate->cur.second) != 0)
            gate->cur.first_unknown = true;
        else
            gate->cur.watched = noted = true;
        gate->cur.tracking = false;
    }
    rc = leakgate_profile__set_active(false);
    leakgate_gate__clock_stop(gate);
    if (rc == 0)
        rc = leakgate_profile__dump(&gate->after);
    /* A replay's exact window: which of what it left is lost, matched to
     * the profile's stacks with the bytes asked for (piece_add); scanned
     * once "after" is dumped, so that holding other threads still can
     * change nothing that was measured. */
    if (rc == 0 && noted && gate->cur.second.live_objs > 0 &&
        leakgate_reach__classify() != 0)
        leakgate_error__clear();
    if (rc == 0)
        rc = piece_add(gate, noted);
    return rc;
}

/* Drop the entries a cap left with no change: a diff lists changes. */
static void
drop_unchanged(struct leakgate_diff *d)
{
    size_t k = 0;

    for (size_t i = 0; i < d->nentries; i++) {
        struct leakgate_diff_entry *e = &d->entries[i];

        if (e->delta_bytes == 0 && e->delta_objs == 0) {
            leakgate_util__free(e->pcs);
            leakgate_util__free(e->threads);
            continue;
        }
        d->entries[k++] = *e;
    }
    d->nentries = k;
}

/*
 * A suite's own window counts what its init and cleanup allocated and is
 * still live after its cleanup: its pieces (init, cleanup) miss what the
 * suite's tests freed in between (a session made by init and closed by a
 * test).  Each stack that grew in the pieces is capped by its growth over
 * the whole suite, from the first "before" dump to the last "after" one
 * (jemalloc subtracts a recorded object whenever it is freed); a cap never
 * adds growth, so the tests' own objects are never counted here.
 */
int
leakgate_gate__cap_suite_window(struct leakgate_gate *gate)
{
    struct gate_scope *s = &gate->cur;
    struct leakgate_heap *before = NULL, *after = NULL;
    struct leakgate_diff *whole = NULL;
    struct leakgate_diff_opts dopts = {gate->strip, gate->nstrip, gate->exclude,
                                       gate->nexclude};
    bool grew = false;
    int rc;

    for (size_t i = 0; i < s->acc->nentries; i++)
        grew |= s->acc->entries[i].delta_bytes > 0;
    /* Nothing grew: nothing to cap, no dump to parse again. */
    if (!grew || !s->first_before || strcmp(s->test, "[suite]") != 0 ||
        !gate->after.text)
        return 0;
    rc = leakgate_heapfile__parse(&before, s->first_before, s->first_before_len,
                                  "<suite before dump>", NULL);
    if (rc == 0)
        rc = leakgate_heapfile__parse(&after, gate->after.text, gate->after.len,
                                      "<after dump>", NULL);
    if (rc == 0)
        rc = leakgate_diff__compute(&whole, before, after, &dopts);
    for (size_t i = 0; rc == 0 && i < s->acc->nentries; i++) {
        struct leakgate_diff_entry *e = &s->acc->entries[i];
        const struct leakgate_diff_entry *w;

        if (e->delta_bytes <= 0)
            continue;
        w = leakgate_diff__find(whole, e);
        if (!w || w->delta_bytes < e->delta_bytes) {
            e->delta_bytes = w && w->delta_bytes > 0 ? w->delta_bytes : 0;
            e->delta_objs =
                w && w->delta_objs > 0 && w->delta_objs < e->delta_objs
                    ? w->delta_objs
                    : (e->delta_bytes > 0 ? e->delta_objs : 0);
            /* The per-thread split of the pieces no longer adds up. */
            leakgate_util__free(e->threads);
            e->threads = NULL;
            e->nthreads = 0;
        }
    }
    drop_unchanged(s->acc);
    leakgate_diff__free(whole);
    leakgate_heapfile__free(after);
    leakgate_heapfile__free(before);
    return rc;
}
