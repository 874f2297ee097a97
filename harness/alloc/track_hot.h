/* SPDX-License-Identifier: MIT */
/*
 * track_hot: what the allocation wrappers (intercept.c) call on every
 * allocation and free: two flags read with one relaxed load each, and the
 * tracker's bitmap operations (track.c) while a window is open.
 */
#ifndef LEAKGATE_TRACK_HOT_H
#define LEAKGATE_TRACK_HOT_H

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jesize.h"

/* A window is open: allocations are recorded. */
extern atomic_bool leakgate_track__on;
/* The open window's generation (track.h, leakgate_track__window_gen()). */
extern atomic_uint leakgate_track__window;
/* The open window's generation when the threads it starts are its own
 * (a test's window: leakgate_track__own_threads()), else 0. */
extern atomic_uint leakgate_track__thread_window;

/*
 * Threads a test's window started (intercept.c wraps pthread_create):
 * each thread's `born` is the generation of the test window open when it
 * was created (inherited from a creator that was itself born in one), 0
 * for threads created outside test windows (main, a suite's init or
 * cleanup: their allocations count wherever they happen, as before).  A thread
 * still running after its window closed (detached) belongs to that window's
 * test: what it allocates while a later window is open is not that window's,
 * and is neither recorded nor metered there, only counted (the verdict says so:
 * gate_fast.c).
 */
extern __thread uint32_t leakgate_track__born
    __attribute__((tls_model("initial-exec")));
extern atomic_ullong leakgate_track__foreign_allocs;
extern atomic_uint leakgate_track__foreign_gen;

/* This thread was started by an earlier window than the open one. */
static inline bool
leakgate_track__foreign_here(void)
{
    uint32_t b = leakgate_track__born;

    return b != 0 && b != atomic_load_explicit(&leakgate_track__window,
                                               memory_order_relaxed);
}

/* Count an allocation of a foreign thread (not recorded, not metered). */
static inline void
leakgate_track__foreign(void)
{
    unsigned int none = 0;

    atomic_fetch_add_explicit(&leakgate_track__foreign_allocs, 1,
                              memory_order_relaxed);
    if (atomic_load_explicit(&leakgate_track__foreign_gen,
                             memory_order_relaxed) == 0)
        atomic_compare_exchange_strong(&leakgate_track__foreign_gen, &none,
                                       leakgate_track__born);
}
/* Orphans (track.h): objects a test's threads allocated after the test
 * ended, still live; the wrappers' side.  A free looks them up only while
 * leakgate_track__orphans_live is not 0.  Never allocate. */
extern atomic_size_t leakgate_track__orphans_live;
void leakgate_track__orphan_note(uintptr_t a,
                                 uint32_t owner,
                                 size_t bytes,
                                 size_t req);
void leakgate_track__orphan_free(uintptr_t a);

/* Frees erase (a window is open, or its end is counting). */
extern atomic_bool leakgate_track__erasing;
/* Frees are watched (track.h, Watch). */
extern atomic_bool leakgate_track__watching;

/* The peak meter (track.h, Meter) is on: allocations and frees count. */
extern atomic_bool leakgate_track__metering;

/*
 * Live bytes above the window's start and their highest value, in two
 * parts: the thread that started the meter (its owner: the test's thread)
 * keeps its own with plain stores, no locked instruction, and the other
 * threads share theirs with atomic adds.  Each part's writer adds the
 * other part (a relaxed load) to get the level it compares with its peak
 * and the trigger; the peak is the larger of the two.  The level is exact
 * while one thread allocates at a time; threads that allocate at the same
 * moment may see each other's last bytes late (those peaks race anyway).
 * `owner` is the generation of the start: a thread is the owner when its
 * leakgate_track__meter_mine is it.  Allocations are counted per thread
 * (below).
 */
struct leakgate_track__meter_state {
    _Alignas(64) atomic_ullong owner;
    atomic_llong trigger; /* LLONG_MAX: none */
    /* In a process with jemalloc the owner's live bytes are jemalloc's
     * own per-thread counters (thread.allocatedp, thread.deallocatedp:
     * usable sizes, kept on jemalloc's fast path anyway) minus own_base:
     * no sallocx and no store per allocation or free.  NULL (a lean
     * process, or no counters): own_live counts. */
    const volatile uint64_t *own_allocp;
    const volatile uint64_t *own_deallocp;
    long long own_base;
    _Alignas(64) atomic_llong own_live;
    atomic_llong own_peak;
    _Alignas(64) atomic_llong others_live;
    atomic_llong others_peak;
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

/* jemalloc's mallctl, for the meter's counters (track.c): set by the
 * allocation wrappers (intercept.c) once they resolved the next
 * definitions; NULL in a lean process or without the wrappers. */
extern int (*leakgate_track__mallctl)(
    const char *, void *, size_t *, void *, size_t);

/* The generation of the meter's start this thread made (track.c). */
extern __thread unsigned long long leakgate_track__meter_mine
    __attribute__((tls_model("initial-exec")));

/* Which allocations get a stack (track.h's enum leakgate_track_stacks). */
#define LEAKGATE_TRACK__STACKS_RUNTIME 1
#define LEAKGATE_TRACK__STACKS_ALL 2
/* Every allocation is handed to leakgate_track__stack_note(), which logs
 * it or records the stacks of chosen ordinals (track.h, "Ordinals"). */
#define LEAKGATE_TRACK__STACKS_LOG 3
#define LEAKGATE_TRACK__STACKS_SELECT 4
extern atomic_int leakgate_track__stacks_mode;

/*
 * The C runtime's text, [start, start + len), and which of its call sites
 * of the allocator were found to need no stack (the return addresses
 * inside strdup, asprintf, getline... that a program's own calls go
 * through: track_stacks.c decides once per site, SITE_PLAIN): a bit per
 * 16 bytes of text, in a map of its own (untouched pages cost nothing).
 * len is 0 unless stacks are wanted for the C runtime's allocations
 * (LEAKGATE_TRACK__STACKS_RUNTIME): then only a caller inside it can need
 * one, and a plain site's allocation costs a subtraction, a compare and a
 * bit test, no call.  track_stacks.c clears the bits when it forgets the
 * sites; a bit read stale only leaves an allocation without a stack
 * (the window's replay measures it), never hides one.
 */
struct leakgate_track__sites_map {
    uintptr_t start;
    _Atomic uintptr_t len;
    _Atomic unsigned char *plain;
};
extern struct leakgate_track__sites_map leakgate_track__sites;

/* What the C runtime's text says of caller (the wrapper's return
 * address): -1 it is not in that text (or the text is not looked at), 0
 * a plain site, 1 a site whose allocation may need its stack. */
static inline int
leakgate_track__runtime_site(uintptr_t caller)
{
    const struct leakgate_track__sites_map *s = &leakgate_track__sites;
    uintptr_t off = caller - s->start;

    if (off >= atomic_load_explicit(&s->len, memory_order_acquire))
        return -1;
    off >>= 4;
    return !(atomic_load_explicit(&s->plain[off >> 3], memory_order_relaxed) >>
                 (off & 7) &
             1);
}

/* Whether an allocation from caller may need its stack:
 * leakgate_track__stack_note() is called only then. */
static inline bool
leakgate_track__stack_wanted(uintptr_t caller)
{
    int site = leakgate_track__runtime_site(caller);

    if (site >= 0)
        return site;
    return atomic_load_explicit(&leakgate_track__stacks_mode,
                                memory_order_relaxed) >=
           LEAKGATE_TRACK__STACKS_ALL;
}

/* The same in the lane (below), whose windows never want every stack:
 * a caller inside the C runtime can need one, and a logging or selecting
 * window (a replay's, by ordinals) counts every allocation. */
static inline bool
leakgate_track__stack_wanted_lane(uintptr_t caller)
{
    int site = leakgate_track__runtime_site(caller);

    if (site >= 0)
        return site;
    return atomic_load_explicit(&leakgate_track__stacks_mode,
                                memory_order_relaxed) >=
           LEAKGATE_TRACK__STACKS_LOG;
}

/*
 * Which objects may have a stack note: a bit per hash of the address
 * (leakgate_track__noted_bit()), set by leakgate_track__stack_note() and
 * cleared only when no object has a note (under track_stacks.c's lock).
 * A free calls leakgate_track__stack_drop() only when its object's bit is
 * set: while a stream's stdio buffer (noted for the built-in ignore list)
 * lives, the window's other frees make no call and take no lock.
 */
extern _Atomic uint64_t leakgate_track__noted_filter;

static inline uint64_t
leakgate_track__noted_bit(uintptr_t a)
{
    return (uint64_t)1 << (((uint64_t)a * 0x9e3779b97f4a7c15ull) >> 58);
}

/* The object at a may have a stack note (false: it has none). */
static inline bool
leakgate_track__noted_maybe(uintptr_t a)
{
    return (atomic_load_explicit(&leakgate_track__noted_filter,
                                 memory_order_relaxed) &
            leakgate_track__noted_bit(a)) != 0;
}

/* Note the object at a as allocated in the window.  Never allocates. */
void leakgate_track__record(uintptr_t a);

/* Forget the object at a, before it is freed; true when it was noted.
 * Never allocates. */
bool leakgate_track__erase(uintptr_t a);

/* The bitmap's layout (track.c): a bit per 8 bytes of address space, in
 * leaves of 2^LEAF_SHIFT bytes of addresses, whose words are marked used
 * in pages of PAGE_WORDS. */
#define LEAKGATE_TRACK__LEAF_SHIFT 24
#define LEAKGATE_TRACK__LEAF_BITS                                              \
    ((uintptr_t)1 << (LEAKGATE_TRACK__LEAF_SHIFT - 3))
#define LEAKGATE_TRACK__PAGE_WORDS ((size_t)4096 / sizeof(uint64_t))

/*
 * The process has one thread (glibc's __libc_single_threaded, which it
 * clears before it starts a second one, by any of its thread functions,
 * and which libstdc++ reads for the same reason): the bitmap's words are
 * then set and cleared with plain loads and stores, no locked instruction.
 * Nothing else can touch them meanwhile; a thread started later sees the
 * flag cleared, and from then on every change is atomic (track.c).
 */
#if defined(__has_include)
#if __has_include(<sys/single_threaded.h>)
#include <sys/single_threaded.h>
#define LEAKGATE_TRACK__HAVE_SINGLE_THREADED 1
#endif
#endif
static inline bool
leakgate_track__alone(void)
{
#ifdef LEAKGATE_TRACK__HAVE_SINGLE_THREADED
    return __libc_single_threaded != 0;
#else
    return false;
#endif
}

/* The bit of a's page in its leaf's `used` marks (a leaf has 64 pages of
 * words: 2^(LEAF_SHIFT - 6) bytes of addresses each). */
static inline uint64_t
leakgate_track__page_bit(uintptr_t a)
{
    return (uint64_t)1 << ((a & (((uintptr_t)1 << LEAKGATE_TRACK__LEAF_SHIFT) -
                                 1)) >>
                           (LEAKGATE_TRACK__LEAF_SHIFT - 6));
}

/*
 * The leaf of the bitmap this thread's last leakgate_track__record()
 * listed, for the inlined paths below: its words and page marks, the
 * window it was listed in, and this thread's own counters of bits set and
 * cleared (filled only when the thread has a slot of its own).  index is
 * UINTPTR_MAX until then (no address has it).
 */
struct leakgate_track__hot {
    uintptr_t index; /* address >> LEAKGATE_TRACK__LEAF_SHIFT */
    _Atomic uint64_t *word;
    /* A lean process: the leaf's class bytes, whose marks are the bits
     * (track.c); NULL: the words are. */
    unsigned char *classes;
    _Atomic uint64_t *used;
    _Atomic uint64_t *sets;
    _Atomic uint64_t *clears;
    unsigned int gen; /* leakgate_track__window when it was listed */
};
extern __thread struct leakgate_track__hot leakgate_track__hot_here
    __attribute__((tls_model("initial-exec")));

/* leakgate_track__record(), inlined into the allocation wrappers while
 * the process has one thread and the object is in the leaf this thread
 * listed in the open window: the same stores, no call. */
static inline __attribute__((always_inline)) void
leakgate_track__record_here(uintptr_t a)
{
    const struct leakgate_track__hot *h = &leakgate_track__hot_here;

    if (h->index == a >> LEAKGATE_TRACK__LEAF_SHIFT &&
        h->gen == atomic_load_explicit(&leakgate_track__window,
                                       memory_order_relaxed) &&
        leakgate_track__alone()) {
        uint64_t page = leakgate_track__page_bit(a);
        bool fresh;

        if (h->classes) {
            unsigned char *b = leakgate_jesize__at(h->classes, a);
            unsigned char old = __atomic_load_n(b, __ATOMIC_RELAXED);

            __atomic_store_n(b, (unsigned char)(old | LEAKGATE_JESIZE__MARK),
                             __ATOMIC_RELAXED);
            fresh = !(old & LEAKGATE_JESIZE__MARK);
        } else {
            uintptr_t bit = (a >> 3) & (LEAKGATE_TRACK__LEAF_BITS - 1);
            _Atomic uint64_t *w = &h->word[bit >> 6];
            uint64_t mask = (uint64_t)1 << (bit & 63);
            uint64_t old = atomic_load_explicit(w, memory_order_relaxed);

            atomic_store_explicit(w, old | mask, memory_order_relaxed);
            fresh = !(old & mask);
        }
        if (!(atomic_load_explicit(h->used, memory_order_relaxed) & page))
            atomic_fetch_or(h->used, page);
        if (fresh)
            atomic_store_explicit(
                h->sets,
                atomic_load_explicit(h->sets, memory_order_relaxed) + 1,
                memory_order_relaxed);
        return;
    }
    leakgate_track__record(a);
}

/* leakgate_track__erase(), inlined likewise while the process has one
 * thread and a is in that leaf (of any window: leaves are never
 * unmapped).  (The out-of-line erase waits while the end of a window
 * counts what is left: with one thread, that thread is the one counting,
 * and it frees nothing meanwhile.) */
static inline __attribute__((always_inline)) bool
leakgate_track__erase_here(uintptr_t a)
{
    const struct leakgate_track__hot *h = &leakgate_track__hot_here;

    if (h->index == a >> LEAKGATE_TRACK__LEAF_SHIFT &&
        leakgate_track__alone()) {
        if (h->classes) {
            unsigned char *b = leakgate_jesize__at(h->classes, a);
            unsigned char old = __atomic_load_n(b, __ATOMIC_RELAXED);

            if (!(old & LEAKGATE_JESIZE__MARK))
                return false; /* not from this window: the common case */
            __atomic_store_n(b, (unsigned char)(old & LEAKGATE_JESIZE__CLASS),
                             __ATOMIC_RELAXED);
        } else {
            uintptr_t bit = (a >> 3) & (LEAKGATE_TRACK__LEAF_BITS - 1);
            _Atomic uint64_t *w = &h->word[bit >> 6];
            uint64_t mask = (uint64_t)1 << (bit & 63);
            uint64_t old = atomic_load_explicit(w, memory_order_relaxed);

            if (!(old & mask))
                return false; /* not from this window: the common case */
            atomic_store_explicit(w, old & ~mask, memory_order_relaxed);
        }
        atomic_store_explicit(
            h->clears,
            atomic_load_explicit(h->clears, memory_order_relaxed) + 1,
            memory_order_relaxed);
        return true;
    }
    return leakgate_track__erase(a);
}

/*
 * The lane: the wrappers' short path for the common case of a fast
 * window, where every flag above has the one value a clean test of a
 * lean process gives it: a window is open and erasing, the meter runs
 * with no trigger and counts sizes itself (no jemalloc counters), frees
 * are not watched, stacks are wanted only for the C runtime's
 * allocations or for none; and, for the thread, it owns the meter, is not a
 * foreign one, the process has one thread, and the object lies in the leaf of
 * the bitmap (and of jesize.h's class map) this thread last used in the window.
 * Then an allocation is one check of leakgate_track__lane against the thread's
 * copy, an address compare, and the stores the general path would make (class
 * byte, meter, bit, counters); a free likewise.  Any other case takes the
 * general path.
 *
 * leakgate_track__lane is 0 while the process-wide conditions do not
 * hold, else a number that changes whenever one of them may have
 * (leakgate_track__lane_refresh(), called by every setter: track.c,
 * track_stacks.c); a thread's copy (gen) is the number under which the
 * general path found the thread's conditions to hold
 * (intercept.c's lane_fill()); UINT_MAX (never the lane's) until then.
 */
extern atomic_uint leakgate_track__lane;
void leakgate_track__lane_refresh(void);

/* The conditions of the lane kept above the tracker (track_stacks.c):
 * the window wants every allocation's stack.  (A watch no longer shuts
 * it: the lane's free leaves an object the watch's filter may hold to
 * the general path, leakgate_track__watched_maybe().)
 * leakgate_track__lane_veto(why, true) shuts the lane while it holds,
 * (why, false) lets it open again. */
#define LEAKGATE_TRACK__VETO_ALL_STACKS 2u
#define LEAKGATE_TRACK__VETO_ORPHANS 4u /* orphans live (track.h) */
void leakgate_track__lane_veto(unsigned int why, bool on);

/* One leaf of the lane: the page marks of the tracker's leaf for the
 * addresses index << LEAKGATE_TRACK__LEAF_SHIFT on, and their class bytes
 * (jesize.h's map, whose leaves are the same size), whose marks are the
 * window's bits in a lean process (track.c). */
struct leakgate_track__lane_leaf {
    uintptr_t
        index; /* address >> LEAKGATE_TRACK__LEAF_SHIFT; UINTPTR_MAX: none */
    _Atomic uint64_t *used;
    unsigned char *classes;
};

/* A thread's lane: two leaves (a heap that crosses a leaf's edge has
 * both). */
struct leakgate_track__lane_state {
    unsigned int gen;
    struct leakgate_track__lane_leaf leaf[2];
};
extern __thread struct leakgate_track__lane_state leakgate_track__lane_here
    __attribute__((tls_model("initial-exec")));

/*
 * The lane's counters of bits set and cleared and of allocations, added
 * to track.c's sums of the threads' slots.  One set for the process: the
 * lane runs only while the process has one thread, so a plain add each
 * (one instruction, no pointer to a slot), and no other thread can write
 * them meanwhile; a thread started later never uses the lane and sees
 * them as they were (pthread_create() orders the writes before it).
 * Read by track.c with relaxed atomic loads.
 */
struct leakgate_track__lane_counts {
    uint64_t sets;
    uint64_t clears;
    uint64_t allocs; /* never reset, as a slot's */
};
extern struct leakgate_track__lane_counts leakgate_track__lane_counts;

/*
 * The first pass's allocation log (track.h, "Ordinals"): while a first
 * pass's fast window logs, the address of every allocation it records,
 * in the order a replay's windows count them (where the wrappers hand an
 * allocation to the stack note: the lane's and the general path's), so
 * that the replay can select the ordinals of what the window left
 * without a forked copy that logs them.  cur < end while it logs; cur ==
 * end: not logging, or full (the log is then not used).  Written by the
 * window's thread while the process has one thread (like the lane's
 * counters), so a plain store.
 */
struct leakgate_track__first_log {
    uintptr_t *cur;
    uintptr_t *end;
};
extern struct leakgate_track__first_log leakgate_track__first_log;

static inline __attribute__((always_inline)) void
leakgate_track__first_log_add(uintptr_t a)
{
    uintptr_t *c = leakgate_track__first_log.cur;

    if (c < leakgate_track__first_log.end) {
        *c = a;
        leakgate_track__first_log.cur = c + 1;
    }
}

/* The leaf of this thread's lane that covers the object at a, copied
 * into *f (a copy: the caller's fields are loaded from the thread's lane
 * directly, no address of it computed); false when none does (see
 * above). */
static inline __attribute__((always_inline)) bool
leakgate_track__lane_for(uintptr_t a, struct leakgate_track__lane_leaf *f)
{
    const struct leakgate_track__lane_state *l = &leakgate_track__lane_here;
    uintptr_t index = a >> LEAKGATE_TRACK__LEAF_SHIFT;

    if (l->gen !=
            atomic_load_explicit(&leakgate_track__lane, memory_order_relaxed) ||
        !leakgate_track__alone())
        return false;
    if (l->leaf[0].index == index) {
        *f = l->leaf[0];
        return true;
    }
    if (l->leaf[1].index == index) {
        *f = l->leaf[1];
        return true;
    }
    return false;
}

/* The object at a's class byte in the lane's leaf f. */
static inline unsigned char *
leakgate_track__lane_class(const struct leakgate_track__lane_leaf *f,
                           uintptr_t a)
{
    return leakgate_jesize__at(f->classes, a);
}

/* An allocation at a of class byte c (unmarked) and usize bytes, in the
 * lane's leaf f: its class byte marked, the meter's count, level and peak
 * (the owner's plain stores), the counters.  (The process has one thread:
 * no other thread's bytes count in the level, nor can one add any.) */
static inline __attribute__((always_inline)) void
leakgate_track__lane_record(const struct leakgate_track__lane_leaf *f,
                            uintptr_t a,
                            unsigned char c,
                            size_t usize)
{
    struct leakgate_track__lane_counts *n = &leakgate_track__lane_counts;
    struct leakgate_track__meter_state *m = &leakgate_track__meter;
    unsigned char *b = leakgate_track__lane_class(f, a);
    unsigned char old = __atomic_load_n(b, __ATOMIC_RELAXED);
    long long own = atomic_load_explicit(&m->own_live, memory_order_relaxed) +
                    (long long)usize;
    uint64_t page = leakgate_track__page_bit(a);

    __atomic_store_n(b, (unsigned char)(c | LEAKGATE_JESIZE__MARK),
                     __ATOMIC_RELAXED);
    atomic_store_explicit(&m->own_live, own, memory_order_relaxed);
    if (own > atomic_load_explicit(&m->own_peak, memory_order_relaxed))
        atomic_store_explicit(&m->own_peak, own, memory_order_relaxed);
    n->allocs++;
    if (!(atomic_load_explicit(f->used, memory_order_relaxed) & page))
        atomic_fetch_or(f->used, page);
    if (!(old & LEAKGATE_JESIZE__MARK))
        n->sets++;
}

/* A free of the object at a, whose class byte is c, of usize bytes, in
 * the lane's leaf f: the meter's level and a's mark; true when a was
 * allocated in the window. */
static inline __attribute__((always_inline)) bool
leakgate_track__lane_erase(const struct leakgate_track__lane_leaf *f,
                           uintptr_t a,
                           unsigned char c,
                           size_t usize)
{
    struct leakgate_track__meter_state *m = &leakgate_track__meter;

    atomic_store_explicit(
        &m->own_live,
        atomic_load_explicit(&m->own_live, memory_order_relaxed) -
            (long long)usize,
        memory_order_relaxed);
    if (!(c & LEAKGATE_JESIZE__MARK))
        return false;
    __atomic_store_n(leakgate_track__lane_class(f, a),
                     (unsigned char)(c & LEAKGATE_JESIZE__CLASS),
                     __ATOMIC_RELAXED);
    leakgate_track__lane_counts.clears++;
    return true;
}

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

/* The owner's live bytes above the window's start (read by any thread:
 * the counters are the owner's, written by it alone). */
static inline long long
leakgate_track__meter_own(const struct leakgate_track__meter_state *m)
{
    const volatile uint64_t *a = m->own_allocp;

    if (a)
        return (long long)(*a - *m->own_deallocp) - m->own_base;
    return atomic_load_explicit(&m->own_live, memory_order_relaxed);
}

/* This thread owns the meter and jemalloc counts its bytes: its
 * allocations and frees need no size (leakgate_track__meter_level()). */
static inline bool
leakgate_track__meter_counted_here(void)
{
    const struct leakgate_track__meter_state *m = &leakgate_track__meter;

    return m->own_allocp &&
           leakgate_track__meter_mine ==
               atomic_load_explicit(&m->owner, memory_order_relaxed);
}

/* The owner's part: plain stores (only the owner writes it). */
static inline long long
leakgate_track__meter_add_own(struct leakgate_track__meter_state *m,
                              long long bytes)
{
    long long own, level;

    if (m->own_allocp) {
        own = leakgate_track__meter_own(m);
    } else {
        own = atomic_load_explicit(&m->own_live, memory_order_relaxed) + bytes;
        atomic_store_explicit(&m->own_live, own, memory_order_relaxed);
    }
    if (bytes <= 0)
        return LLONG_MIN;
    level = own + atomic_load_explicit(&m->others_live, memory_order_relaxed);
    if (level > atomic_load_explicit(&m->own_peak, memory_order_relaxed))
        atomic_store_explicit(&m->own_peak, level, memory_order_relaxed);
    return level;
}

/* The other threads' part: shared, atomic. */
static inline long long
leakgate_track__meter_add_others(struct leakgate_track__meter_state *m,
                                 long long bytes)
{
    long long level = atomic_fetch_add_explicit(&m->others_live, bytes,
                                                memory_order_relaxed) +
                      bytes;
    long long peak;

    if (bytes <= 0)
        return LLONG_MIN;
    level += leakgate_track__meter_own(m);
    peak = atomic_load_explicit(&m->others_peak, memory_order_relaxed);
    while (level > peak && !atomic_compare_exchange_weak_explicit(
                               &m->others_peak, &peak, level,
                               memory_order_relaxed, memory_order_relaxed))
        ;
    return level;
}

/* Count bytes (negative: freed) and, for an allocation, one more.  Inlined
 * into each wrapper: a call would cost as much as the count. */
static inline __attribute__((always_inline)) void
leakgate_track__meter_add(long long bytes, bool allocation)
{
    struct leakgate_track__meter_state *m = &leakgate_track__meter;
    long long level;

    if (allocation) {
        _Atomic uint64_t *c = leakgate_track__allocs_here;

        if (c)
            atomic_store_explicit(
                c, atomic_load_explicit(c, memory_order_relaxed) + 1,
                memory_order_relaxed);
        else
            leakgate_track__meter_count_slow();
    }
    if (leakgate_track__meter_mine ==
        atomic_load_explicit(&m->owner, memory_order_relaxed))
        level = leakgate_track__meter_add_own(m, bytes);
    else
        level = leakgate_track__meter_add_others(m, bytes);
    if (level >= atomic_load_explicit(&m->trigger, memory_order_relaxed))
        leakgate_track__meter_fire(level);
}

/* The stacks of earlier windows are carried (track.h, "Carry"): a free
 * may count against one. */
extern atomic_bool leakgate_track__carry_on;

static inline bool
leakgate_track__carrying_now(void)
{
    return atomic_load_explicit(&leakgate_track__carry_on,
                                memory_order_relaxed);
}

static inline bool
leakgate_track__watching_now(void)
{
    return atomic_load_explicit(&leakgate_track__watching,
                                memory_order_relaxed);
}

/*
 * The watch's filter (track_stacks.c): one bit per 16 home slots of its
 * table (the home's top 12 bits), set for every watched object.  A free
 * of an object whose bit is clear is not watched: the lane takes it
 * while objects are watched (a few, nearly always), and the general
 * path's watch_free() reads one word of these 512 bytes instead of taking
 * the lock and a slot of the 2 MiB table.
 */
#define LEAKGATE_TRACK__WATCH_FILTER_BITS 4096
extern _Atomic uint64_t
    leakgate_track__watch_filter[LEAKGATE_TRACK__WATCH_FILTER_BITS / 64];

static inline size_t
leakgate_track__watch_bit(uintptr_t a)
{
    return (size_t)(((uint64_t)(a >> 4) * 0x9e3779b97f4a7c15ull) >> 52);
}

/* The object at a may be watched (false: it is not). */
static inline bool
leakgate_track__watched_maybe(uintptr_t a)
{
    size_t bit = leakgate_track__watch_bit(a);

    return (atomic_load_explicit(&leakgate_track__watch_filter[bit / 64],
                                 memory_order_relaxed) &
            ((uint64_t)1 << (bit % 64))) != 0;
}

static inline bool
leakgate_track__erasing_now(void)
{
    return atomic_load_explicit(&leakgate_track__erasing, memory_order_relaxed);
}

#endif
