/* SPDX-License-Identifier: MIT */
/*
 * track: the table of the cheap first pass, fed by the allocation
 * wrappers of intercept.c (see track.h for the contract and why an empty
 * table is proof).
 *
 * Hot path (a wrapper, window open): one atomic bit operation in an
 * address-indexed bitmap and one counter (plain stores while the process
 * has one thread; then inlined into the wrappers, track_hot.h, for the
 * leaf this thread listed last).  Nothing here may call malloc: it
 * runs inside malloc.  A leaf of the bitmap is
 * mapped with mmap on first use; when that fails the window's result is
 * reported as unknown (LEAKGATE_ENOMEM), never as clean.
 */
#include "track.h"

#include <malloc.h>
#include <sched.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "error.h"
#include "jesize.h"
#include "track_hot.h"
#include "util.h"

/*
 * The table: one bit per 8 bytes of address space (objects are at least
 * 8-byte aligned), set while the object at that address was allocated in
 * the window and is live.  Bits live in leaves of 256 KiB, each covering
 * 16 MiB of addresses, mapped on first use and found through the class
 * map's top-level entries (jesize.c: a small hashed table, then an array
 * of 2^23 reserved without backing: only the pages touched cost
 * memory).  A bit sits next to the bits of the object's neighbours, so the
 * table's accesses are as local as the heap's own; setting and clearing
 * are single atomic operations, no lock.  Leaves touched in a window are
 * listed, so that the end of a window that grew can find its objects and
 * the next window can clear them.
 *
 * In a lean process the object's bit is the high bit of its class byte
 * (jesize.h, LEAKGATE_JESIZE__MARK), which the wrappers write anyway at
 * each allocation: one byte per object for the class and the window, one
 * cache line per allocation and free instead of two.  The leaves here then
 * only list themselves and mark their used pages (the same addresses: a
 * page of words covers 256 KiB, 16 KiB of class bytes); their words stay
 * untouched (never faulted in).
 */
#define ADDR_BITS 47
#define LEAF_SHIFT LEAKGATE_TRACK__LEAF_SHIFT     /* 16 MiB per leaf */
#define LEAF_BITS ((size_t)1 << (LEAF_SHIFT - 3)) /* one per 8 bytes */
#define LEAF_WORDS (LEAF_BITS / 64)
_Static_assert(LEAF_SHIFT == LEAKGATE_JESIZE__LEAF_SHIFT,
               "a tracker leaf sits beside the class leaf of its addresses");
#define MAX_TOUCHED ((size_t)1 << 16) /* leaves per window (1 TiB) */

/* The leaf's words in pages of 4 KiB: a window clears and scans only the
 * pages it set bits in (a page never written is never faulted in). */
#define PAGE_WORDS LEAKGATE_TRACK__PAGE_WORDS
#define LEAF_PAGES (LEAF_WORDS / PAGE_WORDS)
_Static_assert(LEAF_PAGES <= 64, "a leaf's pages fit struct leaf's mask");

/* The first word at or after w in a page `used` marks; LEAF_WORDS when
 * there is none. */
static size_t
next_word(uint64_t used, size_t w)
{
    while (w < LEAF_WORDS && !(used >> (w / PAGE_WORDS) & 1))
        w = (w / PAGE_WORDS + 1) * PAGE_WORDS;
    return w;
}

struct leaf {
    _Atomic uint64_t word[LEAF_WORDS];
    uintptr_t base;        /* first address covered */
    atomic_bool listed;    /* in touched_list for this window */
    _Atomic uint64_t used; /* pages of word[] with bits set: bit per page */
};

/* The leaves listed in the open window (a table among the large ones:
 * its first page is all most processes touch). */
static _Atomic(struct leaf *) touched_list[MAX_TOUCHED] LEAKGATE_LARGE_TABLE;

static struct {
    /* The leaves are found through the class map's top-level entries
     * (leakgate_jesize__tracker_slot()), one entry per leaf of both. */
    atomic_size_t ntouched; /* of touched_list */
    atomic_uint gen;        /* windows begun: listing is per window */
    atomic_bool failed;     /* a leaf could not be mapped or listed */
    atomic_bool scanning;   /* end() reads the objects left */
    bool installed;
    bool open;
    bool dirty; /* bits may be left from the last window */
    uint64_t sets_at_end;
} track;

/*
 * Bits set and cleared, counted per thread: a thread adds to its own slot
 * with a plain store (no locked instruction, no shared cache line);
 * end() sums the slots.  Threads beyond MAX_SLOTS share the last slot,
 * with atomic adds.
 */
#define MAX_SLOTS 1024

struct slot {
    _Atomic uint64_t sets;
    _Atomic uint64_t clears;
    _Atomic uint64_t allocs; /* the peak meter's allocations: never reset */
} __attribute__((aligned(64)));

static struct slot slots[MAX_SLOTS] LEAKGATE_LARGE_TABLE;
static atomic_uint nslots;

/* The lane's counters (track_hot.h): summed with the slots. */
struct leakgate_track__lane_counts leakgate_track__lane_counts;

static uint64_t
lane_count(const uint64_t *c)
{
    return __atomic_load_n(c, __ATOMIC_RELAXED);
}

/* Per thread: its slot, and the last leaf it looked up and listed. */
static __thread struct {
    struct slot *slot;
    uintptr_t leaf_index;
    struct leaf *leaf;
    struct leaf *listed;
    unsigned int listed_gen;
} tc __attribute__((tls_model("initial-exec")));

static struct slot *
my_slot(void)
{
    unsigned int i;

    if (tc.slot)
        return tc.slot;
    i = atomic_fetch_add(&nslots, 1);
    tc.slot = &slots[i < MAX_SLOTS ? i : MAX_SLOTS - 1];
    return tc.slot;
}

static void
slot_add(_Atomic uint64_t *counter, const struct slot *s)
{
    if (s == &slots[MAX_SLOTS - 1])
        atomic_fetch_add_explicit(counter, 1, memory_order_relaxed);
    else
        atomic_store_explicit(
            counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
            memory_order_relaxed);
}

/* The inlined record and erase (track_hot.h): filled by
 * leakgate_track__record(). */
__thread struct leakgate_track__hot leakgate_track__hot_here
    __attribute__((tls_model("initial-exec"))) = {.index = UINTPTR_MAX};

static unsigned int
used_slots(void)
{
    unsigned int n = atomic_load(&nslots);

    return n < MAX_SLOTS ? n : MAX_SLOTS;
}

/* Read by the wrappers on every allocation and free (track_hot.h). */
atomic_bool leakgate_track__on;     /* a window is open: record */
atomic_uint leakgate_track__window; /* its generation */
/* ... when the threads it starts are its own */
atomic_uint leakgate_track__thread_window;
__thread uint32_t leakgate_track__born
    __attribute__((tls_model("initial-exec")));
atomic_ullong leakgate_track__foreign_allocs;
atomic_uint leakgate_track__foreign_gen;
atomic_bool leakgate_track__erasing;  /* erase (on, and while end counts) */
atomic_bool leakgate_track__metering; /* the peak meter counts */

struct leakgate_track__meter_state leakgate_track__meter = {.trigger =
                                                                LLONG_MAX};

/* This thread's slot's allocation counter, once it has a slot of its own
 * (threads sharing the last slot keep NULL and add atomically). */
__thread _Atomic uint64_t *leakgate_track__allocs_here
    __attribute__((tls_model("initial-exec")));

__thread unsigned long long leakgate_track__meter_mine
    __attribute__((tls_model("initial-exec")));

/* The lane (track_hot.h): its number, the vetoes of the conditions kept
 * above, and each thread's copy. */
atomic_uint leakgate_track__lane;
static atomic_uint lane_seq;
static atomic_uint lane_vetoes;
__thread struct leakgate_track__lane_state leakgate_track__lane_here
    __attribute__((tls_model("initial-exec"))) = {
        .gen = UINT_MAX,
        .leaf = {{.index = UINTPTR_MAX}, {.index = UINTPTR_MAX}}};

void
leakgate_track__lane_refresh(void)
{
    const struct leakgate_track__meter_state *m = &leakgate_track__meter;
    unsigned int n = 0;

    if (leakgate_jesize__lean() && atomic_load(&leakgate_track__on) &&
        atomic_load(&leakgate_track__erasing) &&
        atomic_load(&leakgate_track__metering) &&
        atomic_load(&m->trigger) == LLONG_MAX && !m->own_allocp &&
        atomic_load(&lane_vetoes) == 0) {
        do
            n = atomic_fetch_add(&lane_seq, 1) + 1;
        while (n == 0 || n == UINT_MAX);
    }
    atomic_store(&leakgate_track__lane, n);
}

void
leakgate_track__lane_veto(unsigned int why, bool on)
{
    if (on)
        atomic_fetch_or(&lane_vetoes, why);
    else
        atomic_fetch_and(&lane_vetoes, ~why);
    leakgate_track__lane_refresh();
}

/* The meter's allocations: the slots' sum when it started, and the count
 * it started from. */
static struct {
    uint64_t base;
    uint64_t from;
} meter_allocs;

void
leakgate_track__meter_count_slow(void)
{
    struct slot *sl = my_slot();

    if (sl == &slots[MAX_SLOTS - 1]) {
        atomic_fetch_add_explicit(&sl->allocs, 1, memory_order_relaxed);
        return;
    }
    leakgate_track__allocs_here = &sl->allocs;
    slot_add(&sl->allocs, sl);
}

static uint64_t
sum_allocs(void)
{
    unsigned int n = used_slots();
    uint64_t sum = lane_count(&leakgate_track__lane_counts.allocs);

    for (unsigned int i = 0; i < n; i++)
        sum += atomic_load_explicit(&slots[i].allocs, memory_order_relaxed);
    return sum;
}

/* The meter's trigger: who to call, and a guard against a second thread
 * (or the trigger's own work) calling it again meanwhile. */
static struct {
    leakgate_track_trigger_fn fn;
    void *payload;
    atomic_flag busy;
} trigger = {NULL, NULL, ATOMIC_FLAG_INIT};

/* jemalloc's mallctl, set by the wrappers once they found the next
 * definitions (intercept.c); NULL in a lean process or without them. */
int (*leakgate_track__mallctl)(const char *, void *, size_t *, void *, size_t);

/* jemalloc's counters of the bytes this thread allocated and freed
 * (thread.allocatedp, thread.deallocatedp: usable sizes, written by this
 * thread only, valid while it lives).  False (both NULL) in a lean
 * process, without jemalloc or without the wrappers. */
static bool
meter_counters(const volatile uint64_t **allocated,
               const volatile uint64_t **deallocated)
{
    int (*ctl)(const char *, void *, size_t *, void *, size_t) =
        leakgate_track__mallctl;
    uint64_t *a = NULL, *d = NULL;
    size_t sz = sizeof a;

    *allocated = *deallocated = NULL;
    if (!ctl || leakgate_jesize__lean() ||
        ctl("thread.allocatedp", &a, &sz, NULL, 0) != 0 ||
        ctl("thread.deallocatedp", &d, &sz, NULL, 0) != 0 || !a || !d)
        return false;
    *allocated = a;
    *deallocated = d;
    return true;
}

void
leakgate_track__meter_start(const struct leakgate_track_meter *from)
{
    struct leakgate_track__meter_state *m = &leakgate_track__meter;
    unsigned long long gen = atomic_load(&m->owner) + 1;

    const volatile uint64_t *a, *d;

    /* This thread owns the meter from now on (track_hot.h); in a process
     * with jemalloc its bytes are jemalloc's counters from here. */
    leakgate_track__meter_mine = gen;
    atomic_store(&m->owner, gen);
    if (meter_counters(&a, &d)) {
        m->own_allocp = a;
        m->own_deallocp = d;
        m->own_base = (long long)(*a - *d) - (from ? from->live : 0);
    } else {
        m->own_allocp = m->own_deallocp = NULL;
    }
    atomic_store(&m->own_live, from ? from->live : 0);
    atomic_store(&m->own_peak, from ? (long long)from->peak : 0);
    atomic_store(&m->others_live, 0);
    atomic_store(&m->others_peak, 0);
    meter_allocs.base = sum_allocs();
    meter_allocs.from = from ? from->allocs : 0;
    atomic_store(&leakgate_track__metering, true);
    leakgate_track__lane_refresh();
}

void
leakgate_track__meter_stop(struct leakgate_track_meter *out)
{
    struct leakgate_track__meter_state *m = &leakgate_track__meter;
    long long peak, others_peak;

    atomic_store(&leakgate_track__metering, false);
    atomic_store(&m->trigger, LLONG_MAX);
    leakgate_track__lane_refresh();
    peak = atomic_load(&m->own_peak);
    others_peak = atomic_load(&m->others_peak);
    if (others_peak > peak)
        peak = others_peak;
    out->live = leakgate_track__meter_own(m) + atomic_load(&m->others_live);
    out->peak = peak > 0 ? (uint64_t)peak : 0;
    out->allocs = meter_allocs.from + (sum_allocs() - meter_allocs.base);
}

void
leakgate_track__meter_arm(long long at,
                          leakgate_track_trigger_fn fn,
                          void *payload)
{
    if (fn) {
        trigger.fn = fn;
        trigger.payload = payload;
    }
    atomic_store(&leakgate_track__meter.trigger, at > 0 ? at : LLONG_MAX);
    leakgate_track__lane_refresh();
}

void
leakgate_track__meter_fire(long long live)
{
    long long at;

    if (atomic_flag_test_and_set(&trigger.busy))
        return; /* another thread is at it; or this one, from within */
    at = atomic_load(&leakgate_track__meter.trigger);
    if (live >= at && trigger.fn &&
        atomic_load_explicit(&leakgate_track__metering, memory_order_relaxed))
        leakgate_track__meter_arm(trigger.fn(live, trigger.payload), NULL,
                                  NULL);
    atomic_flag_clear(&trigger.busy);
}

/* The leaf covering address a, mapped on first use (from a wrapper: mmap
 * only, no malloc).  NULL when it cannot be mapped. */
static struct leaf *
leaf_slow(uintptr_t a, bool create)
{
    _Atomic(void *) *slot = leakgate_jesize__tracker_slot(a, create);
    struct leaf *l;
    void *expected = NULL;

    if (!slot)
        return NULL;
    l = atomic_load_explicit(slot, memory_order_acquire);
    if (l) {
        tc.leaf_index = a >> LEAF_SHIFT;
        tc.leaf = l;
    }
    if (l || !create)
        return l;
    l = leakgate_util__map_zeroed(sizeof *l, false);
    if (!l)
        return NULL;
    l->base = a & ~(((uintptr_t)1 << LEAF_SHIFT) - 1);
    if (!atomic_compare_exchange_strong_explicit(slot, &expected, (void *)l,
                                                 memory_order_acq_rel,
                                                 memory_order_acquire)) {
        munmap(l, sizeof *l); /* another thread mapped it first */
        l = expected;
    }
    return l;
}

/* The process has one thread: plain loads and stores (track_hot.h). */
#define alone leakgate_track__alone

/* A lean process: the window's bits are the class bytes' marks. */
#define marks leakgate_jesize__lean
#define MARK LEAKGATE_JESIZE__MARK

/* Mark the class byte b; true when it was not marked.  (Acquire as
 * word_set(), below.) */
static inline bool
mark_set(unsigned char *b)
{
    unsigned char old;

    if (!alone())
        return !(__atomic_fetch_or(b, MARK, __ATOMIC_ACQUIRE) & MARK);
    old = __atomic_load_n(b, __ATOMIC_RELAXED);
    __atomic_store_n(b, (unsigned char)(old | MARK), __ATOMIC_RELAXED);
    return !(old & MARK);
}

/* Unmark the class byte b; true when it was marked. */
static inline bool
mark_clear(unsigned char *b)
{
    unsigned char old;

    if (!alone())
        return (__atomic_fetch_and(b, (unsigned char)~MARK, __ATOMIC_RELEASE) &
                MARK) != 0;
    old = __atomic_load_n(b, __ATOMIC_RELAXED);
    __atomic_store_n(b, (unsigned char)(old & ~MARK), __ATOMIC_RELAXED);
    return (old & MARK) != 0;
}

/* word |= mask (acquire), the old value. */
static inline uint64_t
word_set(_Atomic uint64_t *word, uint64_t mask)
{
    uint64_t old;

    if (!alone())
        return atomic_fetch_or_explicit(word, mask, memory_order_acquire);
    old = atomic_load_explicit(word, memory_order_relaxed);
    atomic_store_explicit(word, old | mask, memory_order_relaxed);
    return old;
}

/* word &= ~mask, the old value. */
static inline uint64_t
word_clear(_Atomic uint64_t *word, uint64_t mask)
{
    uint64_t old;

    if (!alone())
        return atomic_fetch_and(word, ~mask);
    old = atomic_load_explicit(word, memory_order_relaxed);
    atomic_store_explicit(word, old & ~mask, memory_order_relaxed);
    return old;
}

/* The leaf covering address a: the one this thread found last, or
 * leaf_slow(). */
static inline struct leaf *
leaf_for(uintptr_t a, bool create)
{
    if (tc.leaf && tc.leaf_index == a >> LEAF_SHIFT)
        return tc.leaf;
    return leaf_slow(a, create);
}

/* List l as touched in this window (once). */
static bool
list_leaf(struct leaf *l)
{
    unsigned int gen = atomic_load_explicit(&track.gen, memory_order_relaxed);
    bool expected = false;
    size_t i;

    if (tc.listed == l && tc.listed_gen == gen)
        return true;
    if (atomic_load_explicit(&l->listed, memory_order_relaxed) ||
        !atomic_compare_exchange_strong(&l->listed, &expected, true)) {
        tc.listed = l;
        tc.listed_gen = gen;
        return true;
    }
    tc.listed = l;
    tc.listed_gen = gen;
    i = atomic_fetch_add(&track.ntouched, 1);
    if (i >= MAX_TOUCHED)
        return false;
    atomic_store_explicit(&touched_list[i], l, memory_order_release);
    return true;
}

/* Let the inlined record and erase use l (listed in the open window):
 * only while this thread counts in a slot of its own. */
static void
hot_fill(struct leaf *l, uintptr_t a)
{
    struct leakgate_track__hot *h = &leakgate_track__hot_here;
    struct slot *sl = my_slot();
    unsigned int gen = tc.listed_gen; /* list_leaf() listed l in it */
    unsigned char *classes = NULL;

    /* A lean process: the class leaf, whose marks are the bits (looked up
     * after the cheaper checks). */
    if (tc.listed != l || sl == &slots[MAX_SLOTS - 1] ||
        gen != atomic_load_explicit(&leakgate_track__window,
                                    memory_order_relaxed) ||
        (marks() && !(classes = leakgate_jesize__leaf(a)))) {
        h->index = UINTPTR_MAX;
        return;
    }
    h->classes = classes;
    h->index = a >> LEAF_SHIFT;
    h->word = l->word;
    h->used = &l->used;
    h->sets = &sl->sets;
    h->clears = &sl->clears;
    h->gen = gen;
}

void
leakgate_track__record(uintptr_t a)
{
    struct leaf *l = a >> ADDR_BITS ? NULL : leaf_for(a, true);
    uint64_t page = leakgate_track__page_bit(a);
    bool fresh;

    /* The leaf is listed before its bit is set: a set bit is always in a
     * listed leaf, which the next window clears. */
    if (!l || !list_leaf(l)) {
        atomic_store(&track.failed, true);
        return;
    }
    /* Acquire: when begin() cleared this word before, the load of `used`
     * below sees begin()'s exchange (its clears are releases), so a bit
     * set after a begin() (a late recording) is in a marked page. */
    if (marks()) {
        /* The wrapper noted the object's class first: its leaf is mapped,
         * unless that failed. */
        unsigned char *b = leakgate_jesize__byte(a, false);

        if (!b) {
            atomic_store(&track.failed, true);
            return;
        }
        fresh = mark_set(b);
    } else {
        size_t bit = (a >> 3) & (LEAF_BITS - 1);
        uint64_t mask = (uint64_t)1 << (bit & 63);

        fresh = !(word_set(&l->word[bit >> 6], mask) & mask);
    }
    if (!(atomic_load_explicit(&l->used, memory_order_relaxed) & page))
        atomic_fetch_or(&l->used, page);
    if (fresh) {
        struct slot *sl = my_slot();

        slot_add(&sl->sets, sl);
    }
    hot_fill(l, a);
}

/* Clear a's bit; true when it was set (a was allocated in the window). */
bool
leakgate_track__erase(uintptr_t a)
{
    struct slot *sl;

    if (marks()) {
        unsigned char *b =
            a >> ADDR_BITS ? NULL : leakgate_jesize__byte(a, false);

        if (!b || !(__atomic_load_n(b, __ATOMIC_RELAXED) & MARK) ||
            !mark_clear(b))
            return false; /* not from this window: the common case */
    } else {
        struct leaf *l = a >> ADDR_BITS ? NULL : leaf_for(a, false);
        size_t bit = (a >> 3) & (LEAF_BITS - 1);
        uint64_t mask = (uint64_t)1 << (bit & 63);

        if (!l ||
            !(atomic_load_explicit(&l->word[bit >> 6], memory_order_relaxed) &
              mask) ||
            !(word_clear(&l->word[bit >> 6], mask) & mask))
            return false; /* not from this window: the common case */
    }
    sl = my_slot();
    slot_add(&sl->clears, sl);
    /* end() may be reading the objects left: the object must stay
     * allocated until it is done (see count_left). */
    while (atomic_load(&track.scanning))
        sched_yield();
    return true;
}

static void sum_slots(uint64_t *sets, uint64_t *clears);

/* Allocate one object with recording on: the wrapper (intercept.c) must
 * note it.  (Other threads may add objects meanwhile; begin() clears.) */
static bool
probe_wrappers(void)
{
    void *volatile p;
    bool seen;

    atomic_store(&leakgate_track__on, true);
    p = malloc(24);
    atomic_store(&leakgate_track__on, false);
    seen = p != NULL && leakgate_track__erase((uintptr_t)p);
    free(p);
    if (seen) {
        uint64_t sets, clears;

        /* Every bit the probe set is cleared (unless another thread's
         * allocation was recorded meanwhile): the first window need not
         * scan the probe's page of marks, a one-test process's 3 page
         * faults of zeros (docs/internals/performance-record.md "Process
         * start"). */
        sum_slots(&sets, &clears);
        if (sets == clears)
            track.sets_at_end = sets;
    }
    return seen;
}

int
leakgate_track__install(void)
{
    /* No table to map first: the leaves are mapped as the wrappers reach
     * them, through the class map's top-level entries (their large array
     * mapped on first use too); the list of the window's leaves is
     * static. */
    if (track.installed)
        return 0;
    if (!probe_wrappers())
        return leakgate_error__set(LEAKGATE_ENOPROF,
                                   "leakgate's allocation wrappers are not "
                                   "this process's malloc (a sanitizer, or "
                                   "another allocator linked ahead of "
                                   "leakgate)");
    track.installed = true;
    return 0;
}

bool
leakgate_track__installed(void)
{
    return track.installed;
}

/* Sum the threads' slots. */
static void
sum_slots(uint64_t *sets, uint64_t *clears)
{
    unsigned int n = used_slots();

    *sets = lane_count(&leakgate_track__lane_counts.sets);
    *clears = lane_count(&leakgate_track__lane_counts.clears);
    for (unsigned int i = 0; i < n; i++) {
        *sets += atomic_load_explicit(&slots[i].sets, memory_order_relaxed);
        *clears += atomic_load_explicit(&slots[i].clears, memory_order_relaxed);
    }
}

/* The leaves listed in the last window (entries may still be NULL when a
 * wrapper raced with the end of the window). */
static size_t
touched_count(void)
{
    size_t n = atomic_load(&track.ntouched);

    return n < MAX_TOUCHED ? n : MAX_TOUCHED;
}

/* A lean process's leaves: page k of a leaf's words (bit k of `used`)
 * covers 2^PAGE_ADDR_SHIFT bytes of addresses, CLASS_PAGE class bytes,
 * read 8 at a time for their marks. */
#define PAGE_ADDR_SHIFT (LEAF_SHIFT - 6)
#define CLASS_PAGE                                                             \
    ((size_t)1 << (PAGE_ADDR_SHIFT - LEAKGATE_JESIZE__GRAIN_SHIFT))
#define MARKS 0x8080808080808080ull
_Static_assert(LEAF_PAGES == 64 &&
                   PAGE_WORDS * 64 * 8 == (size_t)1 << PAGE_ADDR_SHIFT,
               "a page of words covers 2^PAGE_ADDR_SHIFT bytes of addresses");
_Static_assert(MARK == 0x80u, "MARKS holds the mark of 8 class bytes");
typedef uint64_t __attribute__((may_alias)) class_word;

/* Visit the marked class bytes of page k of the class leaf cls (lean):
 * fn(b, payload) for each, where b is the byte's offset in the leaf;
 * stops at fn's first nonzero return and returns it. */
static int
each_mark(unsigned char *cls,
          unsigned int k,
          int (*fn)(unsigned char *cls, size_t b, void *payload),
          void *payload)
{
    size_t first = (size_t)k * CLASS_PAGE;
    const class_word *w = (const class_word *)(cls + first);

    for (size_t i = 0; i < CLASS_PAGE / 8; i++) {
        uint64_t m = __atomic_load_n(&w[i], __ATOMIC_RELAXED) & MARKS;

        while (m) {
            size_t b = first + i * 8 + ((unsigned int)__builtin_ctzll(m) >> 3);
            int rc;

            m &= m - 1;
            rc = fn(cls, b, payload);
            if (rc != 0)
                return rc;
        }
    }
    return 0;
}

static int
unmark(unsigned char *cls, size_t b, void *payload)
{
    (void)payload;
    __atomic_fetch_and(&cls[b], (unsigned char)~MARK, __ATOMIC_RELEASE);
    return 0;
}

/* Clear the bits of the pages `used` marks in leaf l. */
static void
clear_leaf(struct leaf *l, uint64_t used)
{
    unsigned char *cls;

    if (!marks()) {
        for (size_t w = next_word(used, 0); w < LEAF_WORDS;
             w = next_word(used, w + 1))
            atomic_store_explicit(&l->word[w], 0, memory_order_release);
        return;
    }
    cls = leakgate_jesize__leaf(l->base);
    for (; cls && used; used &= used - 1)
        (void)each_mark(cls, (unsigned int)__builtin_ctzll(used), unmark, NULL);
}

int
leakgate_track__begin(void)
{
    uint64_t sets, clears;
    size_t n;

    if (!track.installed || track.open)
        return leakgate_error__set(
            LEAKGATE_ESTATE, track.open ? "track: a window is open"
                                        : "track: wrappers not installed");
    /* After a clean window every bit it set was cleared by a free; after
     * one that grew, or a wrapper that recorded after the end, clear them. */
    n = touched_count();
    sum_slots(&sets, &clears);
    if (track.dirty || sets != track.sets_at_end) {
        for (size_t i = 0; i < n; i++) {
            struct leaf *l = atomic_load(&touched_list[i]);
            uint64_t used = l ? atomic_exchange(&l->used, 0) : 0;

            if (used)
                clear_leaf(l, used);
        }
    }
    for (size_t i = 0; i < n; i++) {
        struct leaf *l = atomic_load(&touched_list[i]);

        if (l)
            atomic_store(&l->listed, false);
        atomic_store(&touched_list[i], NULL);
    }
    atomic_store(&track.ntouched, 0);
    for (unsigned int i = 0; i < used_slots(); i++) {
        atomic_store(&slots[i].sets, 0);
        atomic_store(&slots[i].clears, 0);
    }
    __atomic_store_n(&leakgate_track__lane_counts.sets, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&leakgate_track__lane_counts.clears, 0, __ATOMIC_RELAXED);
    atomic_store(&leakgate_track__window, atomic_fetch_add(&track.gen, 1) + 1);
    atomic_store(&leakgate_track__thread_window, 0);
    atomic_store(&leakgate_track__foreign_allocs, 0);
    atomic_store(&leakgate_track__foreign_gen, 0);
    atomic_store(&track.failed, false);
    track.dirty = false;
    track.open = true;
    atomic_store(&leakgate_track__erasing, true);
    atomic_store(&leakgate_track__on, true);
    leakgate_track__lane_refresh();
    return 0;
}

struct marked_call {
    uintptr_t base; /* the leaf's first address */
    int (*fn)(uintptr_t a, void *payload);
    void *payload;
};

static int
call_marked(unsigned char *cls, size_t b, void *payload)
{
    const struct marked_call *c = payload;

    (void)cls;
    return c->fn(c->base + (b << LEAKGATE_JESIZE__GRAIN_SHIFT), c->payload);
}

/* each_left() in a lean process: the marked class bytes of the pages
 * used. */
static int
each_marked(const struct leaf *l,
            uint64_t used,
            int (*fn)(uintptr_t a, void *payload),
            void *payload)
{
    struct marked_call c = {l->base, fn, payload};
    unsigned char *cls = leakgate_jesize__leaf(l->base);
    int rc = 0;

    for (; cls && used && rc == 0; used &= used - 1)
        rc = each_mark(cls, (unsigned int)__builtin_ctzll(used), call_marked,
                       &c);
    return rc;
}

/* Visit every object the last window left (bit set in a listed leaf). */
static int
each_left(int (*fn)(uintptr_t a, void *payload), void *payload)
{
    size_t n = touched_count();

    for (size_t i = 0; i < n; i++) {
        struct leaf *l = atomic_load(&touched_list[i]);
        uint64_t used = l ? atomic_load(&l->used) : 0;

        if (used && marks()) {
            int rc = each_marked(l, used, fn, payload);

            if (rc != 0)
                return rc;
            continue;
        }

        for (size_t w = next_word(used, 0); w < LEAF_WORDS;
             w = next_word(used, w + 1)) {
            uint64_t bits =
                atomic_load_explicit(&l->word[w], memory_order_relaxed);

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
    out->live_bytes += leakgate_jesize__usable((void *)a);
    return 0;
}

/* Count what the window left.  A thread freeing one of those objects now
 * waits in the free wrapper (which runs before the free) until the count
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
    uint64_t sets, clears;

    if (!track.open)
        return leakgate_error__set(LEAKGATE_ESTATE, "track: no open window");
    atomic_store(&leakgate_track__on, false);
    leakgate_track__lane_refresh();
    track.open = false;
    memset(out, 0, sizeof *out);
    sum_slots(&sets, &clears);
    out->allocs = sets;
    out->frees = clears;
    out->foreign_allocs = atomic_load(&leakgate_track__foreign_allocs);
    out->foreign_gen = atomic_load(&leakgate_track__foreign_gen);
    if (sets != clears)
        count_left(out);
    atomic_store(&leakgate_track__erasing, false);
    leakgate_track__lane_refresh();
    sum_slots(&track.sets_at_end, &clears);
    track.dirty = out->live_objs > 0 || atomic_load(&track.failed);
    if (atomic_load(&track.failed))
        return leakgate_error__set(LEAKGATE_ENOMEM,
                                   "the allocation tracker's table could "
                                   "not grow (mmap failed): this window "
                                   "needs an exact measurement");
    return 0;
}

uint32_t
leakgate_track__window_gen(void)
{
    return atomic_load(&leakgate_track__window);
}

void
leakgate_track__own_threads(void)
{
    atomic_store(&leakgate_track__thread_window,
                 track.open ? atomic_load(&leakgate_track__window) : 0);
}

struct each_call {
    int (*fn)(const void *ptr, size_t usable_bytes, void *payload);
    void *payload;
};

static int
call_each(uintptr_t a, void *payload)
{
    const struct each_call *c = payload;

    return c->fn((const void *)a, leakgate_jesize__usable((void *)a),
                 c->payload);
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
