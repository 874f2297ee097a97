/* SPDX-License-Identifier: MIT */
/*
 * track: allocation hooks and the pointer table of the cheap first pass
 * (see track.h for the contract and why an empty table is proof).
 *
 * Hot path (a hook, window open): hash the pointer, lock its shard, probe,
 * insert or delete, unlock.  Nothing here may call malloc: jemalloc does
 * not guard hooks against hooks.  Growing a shard maps a new array with
 * mmap; when that fails the shard is marked and the window's result is
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

#define SHARD_BITS 6
#define NSHARDS (1u << SHARD_BITS)
#define SHARD_INITIAL_SLOTS 256 /* 2 KiB per shard at start */
#define SPINS_BEFORE_YIELD 64

struct shard {
    atomic_bool lock;
    bool failed;     /* a grow failed during this window */
    uintptr_t *slot; /* mmap'd, cap entries, 0 = empty */
    size_t cap;      /* a power of two */
    size_t count;    /* occupied slots */
    uint64_t allocs; /* this window */
    uint64_t frees;
} __attribute__((aligned(64)));

static struct {
    struct shard shard[NSHARDS];
    atomic_bool on;      /* a window is open: alloc/expand hooks record */
    atomic_bool erasing; /* dalloc hook erases (on, and while end counts) */
    bool installed;
    bool open;
    void *handle; /* jemalloc's handle of the installed hooks */
} track;

static uint64_t
hash_ptr(uintptr_t p)
{
    /* Objects are at least 8-byte aligned: drop the constant low bits. */
    return (uint64_t)(p >> 3) * 0x9e3779b97f4a7c15u;
}

static struct shard *
shard_of(uint64_t h)
{
    return &track.shard[h >> (64 - SHARD_BITS)];
}

static size_t
home_of(uint64_t h, size_t cap)
{
    return (size_t)(h >> 16) & (cap - 1);
}

static void
shard_lock(struct shard *s)
{
    unsigned int spins = 0;

    while (atomic_exchange_explicit(&s->lock, true, memory_order_acquire)) {
        while (atomic_load_explicit(&s->lock, memory_order_relaxed)) {
            if (++spins % SPINS_BEFORE_YIELD == 0)
                sched_yield();
        }
    }
}

static void
shard_unlock(struct shard *s)
{
    atomic_store_explicit(&s->lock, false, memory_order_release);
}

static uintptr_t *
map_slots(size_t cap)
{
    void *p = mmap(NULL, cap * sizeof(uintptr_t), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    return p == MAP_FAILED ? NULL : p;
}

/* Index of p in s, or the empty slot where it would go. */
static size_t
probe(const struct shard *s, uintptr_t p, uint64_t h)
{
    size_t mask = s->cap - 1, i = home_of(h, s->cap);

    while (s->slot[i] != 0 && s->slot[i] != p)
        i = (i + 1) & mask;
    return i;
}

/* Double s (called with its lock held, from a hook: mmap only). */
static bool
grow(struct shard *s)
{
    size_t cap = s->cap * 2;
    uintptr_t *old = s->slot, *slot = map_slots(cap);
    size_t old_cap = s->cap;

    if (!slot)
        return false;
    s->slot = slot;
    s->cap = cap;
    for (size_t i = 0; i < old_cap; i++) {
        if (old[i] != 0)
            slot[probe(s, old[i], hash_ptr(old[i]))] = old[i];
    }
    munmap(old, old_cap * sizeof *old);
    return true;
}

static void
record(uintptr_t p)
{
    uint64_t h = hash_ptr(p);
    struct shard *s = shard_of(h);
    size_t i;

    shard_lock(s);
    s->allocs++;
    /* Keep the load at most 1/2 so that probes stay short. */
    if ((s->count + 1) * 2 > s->cap && !grow(s))
        s->failed = true;
    if (s->count + 1 < s->cap) {
        i = probe(s, p, h);
        if (s->slot[i] == 0) {
            s->slot[i] = p;
            s->count++;
        }
    }
    shard_unlock(s);
}

/* Backward-shift deletion: close the gap so that no tombstones exist and
 * an emptied shard is all zeros.  Returns true when p was present. */
static bool
erase_locked(struct shard *s, uintptr_t p, uint64_t h)
{
    size_t mask = s->cap - 1, i = probe(s, p, h), j = i;

    if (s->slot[i] == 0)
        return false;
    for (;;) {
        size_t home;

        j = (j + 1) & mask;
        if (s->slot[j] == 0)
            break;
        home = home_of(hash_ptr(s->slot[j]), s->cap);
        /* Move slot j into the gap at i unless its home lies cyclically
         * in (i, j]. */
        if (i <= j ? (home <= i || home > j) : (home <= i && home > j)) {
            s->slot[i] = s->slot[j];
            i = j;
        }
    }
    s->slot[i] = 0;
    s->count--;
    return true;
}

static bool
erase(uintptr_t p)
{
    uint64_t h = hash_ptr(p);
    struct shard *s = shard_of(h);
    bool found;

    shard_lock(s);
    found = erase_locked(s, p, h);
    s->frees += found;
    shard_unlock(s);
    return found;
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
    for (unsigned int i = 0; i < NSHARDS; i++) {
        struct shard *s = &track.shard[i];

        if (s->slot)
            continue;
        s->slot = map_slots(SHARD_INITIAL_SLOTS);
        if (!s->slot)
            return leakgate_error__set(LEAKGATE_ENOMEM,
                                       "mmap of the allocation tracker's "
                                       "table: %s",
                                       strerror(errno));
        s->cap = SHARD_INITIAL_SLOTS;
    }
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

int
leakgate_track__begin(void)
{
    if (!track.installed || track.open)
        return leakgate_error__set(LEAKGATE_ESTATE,
                                   track.open ? "track: a window is open"
                                              : "track: hooks not installed");
    for (unsigned int i = 0; i < NSHARDS; i++) {
        struct shard *s = &track.shard[i];

        shard_lock(s);
        if (s->count > 0)
            memset(s->slot, 0, s->cap * sizeof *s->slot);
        s->count = 0;
        s->allocs = s->frees = 0;
        s->failed = false;
        shard_unlock(s);
    }
    track.open = true;
    atomic_store(&track.erasing, true);
    atomic_store(&track.on, true);
    return 0;
}

/* Usable bytes of the objects left in s, called with s locked: a thread
 * freeing one of them waits in the dalloc hook (which runs before the free)
 * for this lock, so every pointer asked about is live. */
static uint64_t
shard_bytes(const struct shard *s)
{
    uint64_t bytes = 0;

    for (size_t i = 0; i < s->cap && s->count > 0; i++) {
        if (s->slot[i] != 0)
            bytes += malloc_usable_size((void *)s->slot[i]);
    }
    return bytes;
}

int
leakgate_track__end(struct leakgate_track_result *out)
{
    bool failed = false;

    if (!track.open)
        return leakgate_error__set(LEAKGATE_ESTATE, "track: no open window");
    atomic_store(&track.on, false);
    track.open = false;
    memset(out, 0, sizeof *out);
    for (unsigned int i = 0; i < NSHARDS; i++) {
        struct shard *s = &track.shard[i];

        shard_lock(s);
        out->live_objs += s->count;
        out->allocs += s->allocs;
        out->frees += s->frees;
        out->live_bytes += shard_bytes(s);
        failed |= s->failed;
        shard_unlock(s);
    }
    atomic_store(&track.erasing, false);
    if (failed)
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

int
leakgate_track__each(int (*fn)(const void *ptr,
                               size_t usable_bytes,
                               void *payload),
                     void *payload)
{
    if (track.open)
        return leakgate_error__set(LEAKGATE_ESTATE, "track: window open");
    for (unsigned int i = 0; i < NSHARDS; i++) {
        const struct shard *s = &track.shard[i];

        for (size_t j = 0; j < s->cap && s->count > 0; j++) {
            const void *p = (const void *)s->slot[j];
            int rc;

            if (!p)
                continue;
            rc = fn(p, malloc_usable_size((void *)s->slot[j]), payload);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}
