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

/* The peak meter (track.h, Meter) is on: allocations and frees count. */
extern atomic_bool leakgate_track__metering;

/* Live bytes above the window's start, their highest value, allocations;
 * the level at which the meter calls its trigger (INT64_MAX: none). */
struct leakgate_track__meter_state {
    _Alignas(64) atomic_llong live;
    atomic_llong peak;
    atomic_ullong allocs;
    atomic_llong trigger;
};
extern struct leakgate_track__meter_state leakgate_track__meter;

/* The trigger's slow path (track.c).  Never allocates itself. */
void leakgate_track__meter_fire(long long live);

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
leakgate_track__metering_now(void)
{
    return atomic_load_explicit(&leakgate_track__metering,
                                memory_order_relaxed);
}

/* Count bytes (negative: freed) and, for an allocation, one more. */
static inline void
leakgate_track__meter_add(long long bytes, bool allocation)
{
    struct leakgate_track__meter_state *m = &leakgate_track__meter;
    long long live =
        atomic_fetch_add_explicit(&m->live, bytes, memory_order_relaxed) +
        bytes;
    long long peak;

    if (allocation)
        atomic_fetch_add_explicit(&m->allocs, 1, memory_order_relaxed);
    if (bytes <= 0)
        return;
    peak = atomic_load_explicit(&m->peak, memory_order_relaxed);
    while (live > peak && !atomic_compare_exchange_weak_explicit(
                              &m->peak, &peak, live, memory_order_relaxed,
                              memory_order_relaxed))
        ;
    if (live >= atomic_load_explicit(&m->trigger, memory_order_relaxed))
        leakgate_track__meter_fire(live);
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
