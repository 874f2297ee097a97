/* SPDX-License-Identifier: MIT */
/*
 * track_hot: what the allocation wrappers (intercept.c) call on every
 * allocation and free: two flags read with one relaxed load each, and the
 * tracker's bitmap operations (track.c) while a window is open.
 */
#ifndef LEAKGATE_TRACK_HOT_H
#define LEAKGATE_TRACK_HOT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* A window is open: allocations are recorded. */
extern atomic_bool leakgate_track__on;
/* Frees erase (a window is open, or its end is counting). */
extern atomic_bool leakgate_track__erasing;
/* Frees are watched (track.h, Watch). */
extern atomic_bool leakgate_track__watching;

/* Note the object at a as allocated in the window.  Never allocates. */
void leakgate_track__record(uintptr_t a);

/* Forget the object at a, before it is freed; true when it was noted.
 * Never allocates. */
bool leakgate_track__erase(uintptr_t a);

static inline bool
leakgate_track__recording(void)
{
    return atomic_load_explicit(&leakgate_track__on, memory_order_relaxed);
}

static inline bool
leakgate_track__watching_now(void)
{
    return atomic_load_explicit(&leakgate_track__watching,
                                memory_order_relaxed);
}

static inline bool
leakgate_track__erasing_now(void)
{
    return atomic_load_explicit(&leakgate_track__erasing, memory_order_relaxed);
}

#endif
