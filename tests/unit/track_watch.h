/* SPDX-License-Identifier: MIT */
/*
 * track_watch: a watch (track.h, "Watch") among many frees, shared by
 * test_track (jemalloc) and test_track_lean (the C library's malloc and
 * the wrappers' lane): the objects it watches are seen freed (free, and
 * realloc's free half), whatever path the free takes and whatever the
 * filter in front of its table lets pass; after a clear, a free at a
 * once-watched address counts for nobody.  The caller installed the
 * tracker.
 */
#ifndef LEAKGATE_TESTS_TRACK_WATCH_H
#define LEAKGATE_TESTS_TRACK_WATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "track.h"
#include "unit.h"

static void
track_watch_among_frees(void)
{
    enum { OWNER = 7, CHURN = 20000 };
    struct leakgate_track_result r;
    struct leakgate_track_meter m;
    uint64_t bytes, objs;
    bool unwatched;
    void *w[3];
    size_t each;

    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    for (int i = 0; i < 3; i++)
        w[i] = malloc(32);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(r.live_objs, 3);
    each = (size_t)(r.live_bytes / 3); /* as the tracker counts them */
    CU_ASSERT_EQUAL_FATAL(leakgate_track__watch_left(OWNER), 0);
    /* The next window, as the next test's: metered, so that a lean
     * process's frees take the lane (track_hot.h). */
    CU_ASSERT_EQUAL_FATAL(leakgate_track__begin(), 0);
    leakgate_track__meter_start(NULL);
    for (int i = 0; i < CHURN; i++)
        free(malloc((size_t)(16 + i % 200)));
    leakgate_track__watch_freed(OWNER, &bytes, &objs, &unwatched);
    free(w[0]);
    w[2] = realloc(w[2], 40); /* resized (in place or moved): released */
    leakgate_track__meter_stop(&m);
    CU_ASSERT_EQUAL(leakgate_track__end(&r), 0);
    CU_ASSERT_EQUAL(objs, 0);        /* before w[0]'s free */
    CU_ASSERT_EQUAL(r.live_objs, 1); /* w[2], resized in the window */
    leakgate_track__watch_freed(OWNER, &bytes, &objs, &unwatched);
    CU_ASSERT_EQUAL(objs, 2);
    CU_ASSERT_EQUAL(bytes, 2 * each);
    CU_ASSERT_TRUE(leakgate_track__watch_released(OWNER));
    CU_ASSERT_FALSE(unwatched);
    leakgate_track__watch_clear();
    free(w[1]);
    leakgate_track__watch_freed(OWNER, &bytes, &objs, &unwatched);
    CU_ASSERT_EQUAL(objs, 2);
    free(w[2]);
}

#endif
