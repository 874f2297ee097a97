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

/* Live bytes above the window's start, their highest value; the level at
 * which the meter calls its trigger (INT64_MAX: none).  Allocations are
 * counted per thread (below): one locked instruction less per allocation,
 * and no shared cache line for them. */
struct leakgate_track__meter_state {
    _Alignas(64) atomic_llong live;
    atomic_llong peak;
    atomic_llong trigger;
};
extern struct leakgate_track__meter_state leakgate_track__meter;

/* The trigger's slow path (track.c).  Never allocates itself. */
void leakgate_track__meter_fire(long long live);

/* This thread's allocation counter in its slot of track.c's per-thread
 * table (NULL until its first metered allocation, or when it shares the
 * last slot), and the slow path that finds it.  Only this thread writes
 * its own slot: a plain add; the meter sums the slots. */
extern __thread _Atomic uint64_t *leakgate_track__allocs_here
    __attribute__((tls_model("initial-exec")));
void leakgate_track__meter_count_slow(void);

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

    if (allocation) {
        _Atomic uint64_t *c = leakgate_track__allocs_here;

        if (c)
            atomic_store_explicit(
                c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                memory_order_relaxed);
        else
            leakgate_track__meter_count_slow();
    }
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
