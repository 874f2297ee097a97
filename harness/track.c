/* SPDX-License-Identifier: MIT */
/*
 * track: allocation hooks and the pointer table of the cheap first pass
 * (see track.h for the contract and why an empty table is proof).
 *
 * Hot path (a hook, window open): one atomic bit operation in an
 * address-indexed bitmap and one counter.  Nothing here may call malloc:
 * jemalloc does not guard hooks against hooks.  A leaf of the bitmap is
 * mapped with mmap on first use; when that fails the window's result is
 * reported as unknown (LEAKGATE_ENOMEM), never as clean.
 */
#include "track.h"

#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "error.h"

/*
 * jemalloc 5.3's experimental hook ABI (include/jemalloc/internal/hook.h,
 * not installed by Debian): three callbacks and a payload, installed with
 * mallctl("experimental.hooks.install").  The enumerators' values are not
 * needed: every alloc type records, every dalloc type removes, every
 * expand type records.  tests/unit/test_track.c pins the behaviour.
 */
typedef void (*jemalloc_hook_alloc)(void *extra,
                                    int type,
                                    void *result,
                                    uintptr_t result_raw,
                                    uintptr_t args_raw[3]);
typedef void (*jemalloc_hook_dalloc)(void *extra,
                                     int type,
                                     void *address,
                                     uintptr_t args_raw[3]);
typedef void (*jemalloc_hook_expand)(void *extra,
                                     int type,
                                     void *address,
                                     size_t old_usize,
                                     size_t new_usize,
                                     uintptr_t result_raw,
                                     uintptr_t args_raw[4]);
struct jemalloc_hooks {
    jemalloc_hook_alloc alloc_hook;
    jemalloc_hook_dalloc dalloc_hook;
    jemalloc_hook_expand expand_hook;
    void *extra;
};

/*
 * The table: one bit per 8 bytes of address space (objects are at least
 * 8-byte aligned), set while the object at that address was allocated in
 * the window and is live.  Bits live in leaves of 64 KiB, each covering
 * 4 MiB of addresses, mapped on first use and found through a top-level
 * array of 2^25 pointers (256 MiB of address space reserved without
 * backing: only the pages touched cost memory).  A bit sits next to the
 * bits of the object's neighbours, so the table's accesses are as local as
 * the heap's own; setting and clearing are single atomic operations, no
 * lock.  Leaves touched in a window are listed, so that the end of a window
 * that grew can find its objects and the next window can clear them.
 */
#define ADDR_BITS 47
#define LEAF_SHIFT 22                            /* 4 MiB per leaf */
#define LEAF_BITS ((size_t)1 << (LEAF_SHIFT - 3)) /* one per 8 bytes */
#define LEAF_WORDS (LEAF_BITS / 64)
#define NLEAVES ((size_t)1 << (ADDR_BITS - LEAF_SHIFT))
#define MAX_TOUCHED ((size_t)1 << 16) /* leaves per window (256 GiB) */

struct leaf {
    _Atomic uint64_t word[LEAF_WORDS];
    uintptr_t base;     /* first address covered */
    atomic_bool listed; /* in track.touched for this window */
};

static struct {
    _Atomic(struct leaf *) *top; /* NLEAVES entries, mmap'd */
    _Atomic(struct leaf *) *touched; /* MAX_TOUCHED entries, mmap'd */
    atomic_size_t ntouched;
    atomic_uint_fast64_t sets;   /* bits set in this window */
    atomic_uint_fast64_t clears; /* bits cleared in this window */
    atomic_bool failed;          /* a leaf could not be mapped or listed */
    atomic_bool scanning;        /* end() reads the objects left */
    atomic_bool on;      /* a window is open: alloc/expand hooks record */
    atomic_bool erasing; /* dalloc hook erases (on, and while end counts) */
    bool installed;
    bool open;
    bool dirty;          /* bits may be left from the last window */
    uint_fast64_t sets_at_end;
    void *handle; /* jemalloc's handle of the installed hooks */
} track;

static void *
map_zeroed(size_t bytes, bool reserve_only)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS |
                       (reserve_only ? MAP_NORESERVE : 0),
                   -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

/* The leaf covering address a, mapped on first use (from a hook: mmap
 * only, no malloc).  NULL when it cannot be mapped. */
static struct leaf *
leaf_for(uintptr_t a, bool create)
{
    _Atomic(struct leaf *) *slot = &track.top[a >> LEAF_SHIFT];
    struct leaf *l = atomic_load_explicit(slot, memory_order_acquire);
    struct leaf *expected = NULL;

    if (l || !create)
        return l;
    l = map_zeroed(sizeof *l, false);
    if (!l)
        return NULL;
    l->base = a & ~(((uintptr_t)1 << LEAF_SHIFT) - 1);
    if (!atomic_compare_exchange_strong_explicit(slot, &expected, l,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire)) {
        munmap(l, sizeof *l); /* another thread mapped it first */
        l = expected;
    }
    return l;
}

/* List l as touched in this window (once). */
static bool
list_leaf(struct leaf *l)
{
    bool expected = false;
    size_t i;

    if (atomic_load_explicit(&l->listed, memory_order_relaxed) ||
        !atomic_compare_exchange_strong(&l->listed, &expected, true))
        return true;
    i = atomic_fetch_add(&track.ntouched, 1);
    if (i >= MAX_TOUCHED)
        return false;
    atomic_store_explicit(&track.touched[i], l, memory_order_release);
    return true;
}

static void
record(uintptr_t a)
{
    struct leaf *l = a >> ADDR_BITS ? NULL : leaf_for(a, true);
    size_t bit = (a >> 3) & (LEAF_BITS - 1);
    uint64_t mask = (uint64_t)1 << (bit & 63), old;

    /* The leaf is listed before its bit is set: a set bit is always in a
     * listed leaf, which the next window clears. */
    if (!l || !list_leaf(l)) {
        atomic_store(&track.failed, true);
        return;
    }
    old = atomic_fetch_or_explicit(&l->word[bit >> 6], mask,
                                   memory_order_relaxed);
    if (!(old & mask))
        atomic_fetch_add_explicit(&track.sets, 1, memory_order_relaxed);
}

/* Clear a's bit; true when it was set (a was allocated in the window). */
static bool
erase(uintptr_t a)
{
    struct leaf *l = a >> ADDR_BITS ? NULL : leaf_for(a, false);
    size_t bit = (a >> 3) & (LEAF_BITS - 1);
    uint64_t mask = (uint64_t)1 << (bit & 63), old;

    if (!l || !(atomic_load_explicit(&l->word[bit >> 6],
                                     memory_order_relaxed) &
                mask))
        return false; /* not from this window: the common case */
    old = atomic_fetch_and(&l->word[bit >> 6], ~mask);
    if (!(old & mask))
        return false;
    atomic_fetch_add_explicit(&track.clears, 1, memory_order_relaxed);
    /* end() may be reading the objects left: the object must stay
     * allocated until it is done (see count_left). */
    while (atomic_load(&track.scanning))
        sched_yield();
    return true;
}

static bool
recording(void)
{
    return atomic_load_explicit(&track.on, memory_order_relaxed);
}

static bool
erasing(void)
{
    return atomic_load_explicit(&track.erasing, memory_order_relaxed);
}

static void
hook_alloc(void *extra,
           int type,
           void *result,
           uintptr_t result_raw,
           uintptr_t args_raw[3])
{
    (void)extra, (void)type, (void)result_raw, (void)args_raw;
    if (result && recording())
        record((uintptr_t)result);
}

static void
hook_dalloc(void *extra, int type, void *address, uintptr_t args_raw[3])
{
    (void)extra, (void)type, (void)args_raw;
    if (address && erasing())
        erase((uintptr_t)address);
}

static void
hook_expand(void *extra,
            int type,
            void *address,
            size_t old_usize,
            size_t new_usize,
            uintptr_t result_raw,
            uintptr_t args_raw[4])
{
    (void)extra, (void)type, (void)old_usize, (void)new_usize;
    (void)result_raw, (void)args_raw;
    /* Exact profiling samples a resized object anew at this stack, even in
     * place: count it as allocated in the window. */
    if (address && recording())
        record((uintptr_t)address);
}

static int
map_tables(void)
{
    if (track.top)
        return 0;
    track.top = map_zeroed(NLEAVES * sizeof *track.top, true);
    track.touched = map_zeroed(MAX_TOUCHED * sizeof *track.touched, true);
    if (!track.top || !track.touched)
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "mmap of the allocation tracker's "
                                   "table: %s",
                                   strerror(errno));
    return 0;
}

static void
remove_hooks(void)
{
    void *handle = track.handle;

    mallctl("experimental.hooks.remove", NULL, NULL, &handle, sizeof handle);
    track.handle = NULL;
}

/* Allocate one object with recording on: the alloc hook must record it.
 * (Other threads may add objects meanwhile; begin() empties the table.) */
static bool
probe_hooks(void)
{
    void *volatile p;
    bool seen;

    atomic_store(&track.on, true);
    p = malloc(24);
    atomic_store(&track.on, false);
    seen = p != NULL && erase((uintptr_t)p);
    free(p);
    return seen;
}

int
leakgate_track__install(void)
{
    struct jemalloc_hooks hooks = {hook_alloc, hook_dalloc, hook_expand, NULL};
    size_t sz = sizeof track.handle;
    int rc;

    if (track.installed)
        return 0;
    rc = map_tables();
    if (rc < 0)
        return rc;
    /* jemalloc copies the struct (newlen must be its size) and returns a
     * handle for experimental.hooks.remove. */
    rc = mallctl("experimental.hooks.install", &track.handle, &sz, &hooks,
                 sizeof hooks);
    if (rc != 0)
        return leakgate_error__set(LEAKGATE_ENOPROF,
                                   "mallctl(\"experimental.hooks.install\"): "
                                   "%s (jemalloc 5.3 allocation hooks are "
                                   "needed for the fast first pass)",
                                   strerror(rc));
    if (!probe_hooks()) {
        remove_hooks();
        return leakgate_error__set(LEAKGATE_ENOPROF,
                                   "jemalloc's allocation hooks are not "
                                   "called: malloc in this process is not "
                                   "jemalloc's (a sanitizer or another "
                                   "allocator replaces it)");
    }
    track.installed = true;
    return 0;
}

bool
leakgate_track__installed(void)
{
    return track.installed;
}

/* The leaves listed in the last window (entries may still be NULL when a
 * hook raced with the end of the window). */
static size_t
touched_count(void)
{
    size_t n = atomic_load(&track.ntouched);

    return n < MAX_TOUCHED ? n : MAX_TOUCHED;
}

int
leakgate_track__begin(void)
{
    size_t n;

    if (!track.installed || track.open)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   track.open ? "track: a window is open"
                                              : "track: hooks not installed");
    /* After a clean window every bit it set was cleared by a free; after
     * one that grew, or a hook that recorded after the end, clear them. */
    n = touched_count();
    if (track.dirty || atomic_load(&track.sets) != track.sets_at_end) {
        for (size_t i = 0; i < n; i++) {
            struct leaf *l = atomic_load(&track.touched[i]);

            for (size_t w = 0; l && w < LEAF_WORDS; w++)
                atomic_store_explicit(&l->word[w], 0, memory_order_relaxed);
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct leaf *l = atomic_load(&track.touched[i]);

        if (l)
            atomic_store(&l->listed, false);
        atomic_store(&track.touched[i], NULL);
    }
    atomic_store(&track.ntouched, 0);
    atomic_store(&track.sets, 0);
    atomic_store(&track.clears, 0);
    atomic_store(&track.failed, false);
    track.dirty = false;
    track.open = true;
    atomic_store(&track.erasing, true);
    atomic_store(&track.on, true);
    return 0;
}

/* Visit every object the last window left (bit set in a listed leaf). */
static int
each_left(int (*fn)(uintptr_t a, void *payload), void *payload)
{
    size_t n = touched_count();

    for (size_t i = 0; i < n; i++) {
        struct leaf *l = atomic_load(&track.touched[i]);

        for (size_t w = 0; l && w < LEAF_WORDS; w++) {
            uint64_t bits = atomic_load_explicit(&l->word[w],
                                                 memory_order_relaxed);

            while (bits) {
                unsigned int b = (unsigned int)__builtin_ctzll(bits);
                int rc;

                bits &= bits - 1;
                rc = fn(l->base + ((w * 64 + b) << 3), payload);
                if (rc != 0)
                    return rc;
            }
        }
    }
    return 0;
}

static int
add_left(uintptr_t a, void *payload)
{
    struct leakgate_track_result *out = payload;

    out->live_objs++;
    out->live_bytes += malloc_usable_size((void *)a);
    return 0;
}

/* Count what the window left.  A thread freeing one of those objects now
 * waits in the dalloc hook (which runs before the free) until the count
 * is done, so every pointer asked about is live. */
static void
count_left(struct leakgate_track_result *out)
{
    atomic_store(&track.scanning, true);
    each_left(add_left, out);
    atomic_store(&track.scanning, false);
}

int
leakgate_track__end(struct leakgate_track_result *out)
{
    uint_fast64_t sets, clears;

    if (!track.open)
        return leakgate_error__set(LEAKGATE_ESTATE, "track: no open window");
    atomic_store(&track.on, false);
    track.open = false;
    memset(out, 0, sizeof *out);
    sets = atomic_load(&track.sets);
    clears = atomic_load(&track.clears);
    out->allocs = sets;
    out->frees = clears;
    if (sets != clears)
        count_left(out);
    atomic_store(&track.erasing, false);
    track.sets_at_end = atomic_load(&track.sets);
    track.dirty = out->live_objs > 0 || atomic_load(&track.failed);
    if (atomic_load(&track.failed))
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "the allocation tracker's table could "
                                   "not grow (mmap failed): this window "
                                   "needs an exact measurement");
    return 0;
}

bool
leakgate_track__forget(const void *ptr)
{
    uintptr_t p = (uintptr_t)ptr;

    if (!track.installed || p == 0)
        return false;
    return erase(p);
}

struct each_call {
    int (*fn)(const void *ptr, size_t usable_bytes, void *payload);
    void *payload;
};

static int
call_each(uintptr_t a, void *payload)
{
    const struct each_call *c = payload;

    return c->fn((const void *)a, malloc_usable_size((void *)a), c->payload);
}

int
leakgate_track__each(int (*fn)(const void *ptr,
                               size_t usable_bytes,
                               void *payload),
                     void *payload)
{
    struct each_call c = {fn, payload};

    if (track.open)
        return leakgate_error__set(LEAKGATE_ESTATE, "track: window open");
    return each_left(call_each, &c);
}
