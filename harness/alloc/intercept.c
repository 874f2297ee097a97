/* SPDX-License-Identifier: MIT */
/*
 * intercept: the process's allocation functions, wrapped for the fast
 * first pass (track.h).  The library that carries leakgate (the test
 * binary's libleakgate, or libleakgate-preload.so under `leakgate run`)
 * comes before libjemalloc in the symbol search order, so malloc, free,
 * the rest of the C and jemalloc allocation API and C++'s operator new and
 * delete resolve here first.  Each wrapper calls the next definition
 * (jemalloc's, found with dlsym(RTLD_NEXT)) and, while a window is open,
 * sets or clears the object's bit in the tracker.  Outside windows a
 * wrapper costs a call and one relaxed load: jemalloc keeps its fast path
 * (its own allocation hooks would take every thread off it).
 *
 * The wrappers live in their own section, "leakgate_alloc": exact windows
 * strip their frames from every stack with jemalloc's
 * (leakgate_intercept__range()).  Until the next definitions are known, a
 * few early allocations (dlsym's own) come from a small static arena.
 *
 * A lean process (the test binary links leakgate without jemalloc) has
 * the C library's malloc as the next definition: no sallocx there.  Its
 * wrappers note each object's jemalloc size class (jesize.h) as they hand
 * it out, so that the tracker and the peak meter count what jemalloc
 * would; C++'s operators allocate with the C library's malloc directly
 * (libstdc++'s do the same), so that no object is counted twice.
 *
 * Not built with sanitizers (LEAKGATE_NO_INTERCEPT): their runtime owns
 * malloc, and the tracker then reports that the fast pass is unavailable
 * (exact windows only); only the two functions of intercept.h are, with
 * nothing to say.
 */
#include "intercept.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap.h"
#include "jesize.h"
#include "stackwalk.h"
#include "track.h"
#include "track_hot.h"
#include "util.h"

#ifndef LEAKGATE_NO_INTERCEPT
/* jemalloc's own API (jemalloc/jemalloc.h declares them with attributes
 * that the definitions below need not repeat). */
void *mallocx(size_t n, int flags);
void *rallocx(void *p, size_t n, int flags);
size_t xallocx(void *p, size_t n, size_t extra, int flags);
void dallocx(void *p, int flags);
void sdallocx(void *p, size_t n, int flags);

#define WRAP                                                                   \
    __attribute__((visibility("default"), section("leakgate_alloc"), used))
#define ALLOC_PATH __attribute__((section("leakgate_alloc")))

/* jemalloc's MALLOCX_* flags are bit fields of an int; not needed here. */
struct next_fns {
    void *(*malloc)(size_t);
    void (*free)(void *);
    void *(*calloc)(size_t, size_t);
    void *(*realloc)(void *, size_t);
    int (*posix_memalign)(void **, size_t, size_t);
    void *(*aligned_alloc)(size_t, size_t);
    void *(*memalign)(size_t, size_t);
    void *(*valloc)(size_t);
    void *(*pvalloc)(size_t);
    void *(*mallocx)(size_t, int);
    void *(*rallocx)(void *, size_t, int);
    size_t (*xallocx)(void *, size_t, size_t, int);
    size_t (*sallocx)(const void *, int);
    int (*mallctl)(const char *, void *, size_t *, void *, size_t);
    void (*dallocx)(void *, int);
    void (*sdallocx)(void *, size_t, int);
    int (*pthread_create)(pthread_t *,
                          const pthread_attr_t *,
                          void *(*)(void *),
                          void *);
    /* C++: new (n), new (n, nothrow), new (n, align), new (n, align,
     * nothrow), for objects and arrays; delete likewise, plus sized. */
    void *(*nw)(size_t);
    void *(*na)(size_t);
    void *(*nw_nt)(size_t, const void *);
    void *(*na_nt)(size_t, const void *);
    void *(*nw_al)(size_t, size_t);
    void *(*na_al)(size_t, size_t);
    void *(*nw_al_nt)(size_t, size_t, const void *);
    void *(*na_al_nt)(size_t, size_t, const void *);
    void (*dl)(void *);
    void (*da)(void *);
    void (*dl_nt)(void *, const void *);
    void (*da_nt)(void *, const void *);
    void (*dl_sz)(void *, size_t);
    void (*da_sz)(void *, size_t);
    void (*dl_al)(void *, size_t);
    void (*da_al)(void *, size_t);
    void (*dl_al_nt)(void *, size_t, const void *);
    void (*da_al_nt)(void *, size_t, const void *);
    void (*dl_sz_al)(void *, size_t, size_t);
    void (*da_sz_al)(void *, size_t, size_t);
};

static struct next_fns next;
static atomic_int state; /* 0 not resolved, 1 resolving, 2 resolved */
static __thread bool resolving __attribute__((tls_model("initial-exec")));

/* The early arena: what dlsym allocates while the next definitions are
 * being looked up.  Never freed. */
#define ARENA_SIZE 65536
static alignas(64) unsigned char arena[ARENA_SIZE] LEAKGATE_LARGE_TABLE;
static atomic_size_t arena_used;

static bool
in_arena(const void *p)
{
    return (uintptr_t)p - (uintptr_t)arena < ARENA_SIZE;
}

static void *
arena_alloc(size_t n, size_t align)
{
    size_t off, size = (n + 15) & ~(size_t)15;

    if (align < 16)
        align = 16;
    for (;;) {
        size_t used = atomic_load(&arena_used);

        off = (used + align - 1) & ~(align - 1);
        if (off + size > ARENA_SIZE || off + size < off)
            return NULL;
        if (atomic_compare_exchange_weak(&arena_used, &used, off + size))
            return arena + off; /* static storage: zeroed, never reused */
    }
}

struct lookup {
    size_t offset;
    const char *name;
};

/* The C library's (every process has them). */
static const struct lookup c_lookups[] = {
    {offsetof(struct next_fns, malloc), "malloc"},
    {offsetof(struct next_fns, free), "free"},
    {offsetof(struct next_fns, calloc), "calloc"},
    {offsetof(struct next_fns, realloc), "realloc"},
    {offsetof(struct next_fns, posix_memalign), "posix_memalign"},
    {offsetof(struct next_fns, aligned_alloc), "aligned_alloc"},
    {offsetof(struct next_fns, memalign), "memalign"},
    {offsetof(struct next_fns, valloc), "valloc"},
    {offsetof(struct next_fns, pvalloc), "pvalloc"},
    {offsetof(struct next_fns, pthread_create), "pthread_create"},
};

/* jemalloc's API: looked up where sallocx is defined. */
static const struct lookup jemalloc_lookups[] = {
    {offsetof(struct next_fns, mallocx), "mallocx"},
    {offsetof(struct next_fns, rallocx), "rallocx"},
    {offsetof(struct next_fns, xallocx), "xallocx"},
    {offsetof(struct next_fns, sallocx), "sallocx"},
    {offsetof(struct next_fns, mallctl), "mallctl"},
    {offsetof(struct next_fns, dallocx), "dallocx"},
    {offsetof(struct next_fns, sdallocx), "sdallocx"},
};

/* C++'s operators: looked up where the first, operator new, is defined. */
static const struct lookup cxx_lookups[] = {
    {offsetof(struct next_fns, nw), "_Znwm"},
    {offsetof(struct next_fns, na), "_Znam"},
    {offsetof(struct next_fns, nw_nt), "_ZnwmRKSt9nothrow_t"},
    {offsetof(struct next_fns, na_nt), "_ZnamRKSt9nothrow_t"},
    {offsetof(struct next_fns, nw_al), "_ZnwmSt11align_val_t"},
    {offsetof(struct next_fns, na_al), "_ZnamSt11align_val_t"},
    {offsetof(struct next_fns, nw_al_nt), "_ZnwmSt11align_val_tRKSt9nothrow_t"},
    {offsetof(struct next_fns, na_al_nt), "_ZnamSt11align_val_tRKSt9nothrow_t"},
    {offsetof(struct next_fns, dl), "_ZdlPv"},
    {offsetof(struct next_fns, da), "_ZdaPv"},
    {offsetof(struct next_fns, dl_nt), "_ZdlPvRKSt9nothrow_t"},
    {offsetof(struct next_fns, da_nt), "_ZdaPvRKSt9nothrow_t"},
    {offsetof(struct next_fns, dl_sz), "_ZdlPvm"},
    {offsetof(struct next_fns, da_sz), "_ZdaPvm"},
    {offsetof(struct next_fns, dl_al), "_ZdlPvSt11align_val_t"},
    {offsetof(struct next_fns, da_al), "_ZdaPvSt11align_val_t"},
    {offsetof(struct next_fns, dl_al_nt),
     "_ZdlPvSt11align_val_tRKSt9nothrow_t"},
    {offsetof(struct next_fns, da_al_nt),
     "_ZdaPvSt11align_val_tRKSt9nothrow_t"},
    {offsetof(struct next_fns, dl_sz_al), "_ZdlPvmSt11align_val_t"},
    {offsetof(struct next_fns, da_sz_al), "_ZdaPvmSt11align_val_t"},
};

/* Look up the next definitions of a table's n functions; none after its
 * first when that one is not defined.  (A lookup that fails costs a search
 * of every object and an error message, ~2,500 instructions: a C program
 * without jemalloc made 27 of them at its first allocation.) */
static void
look_up(const struct lookup *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *sym = dlsym(RTLD_NEXT, t[i].name);

        if (!sym && i == 0)
            return; /* the table's entries stay NULL */
        /* ISO C has no cast between object and function pointers; POSIX
         * makes them the same size. */
        memcpy((char *)&next + t[i].offset, &sym, sizeof sym);
    }
}

#define LOOK_UP(table) look_up((table), sizeof(table) / sizeof(table)[0])

/* Run fn once per process: the first caller runs it, any other waits the
 * moment it takes. */
static inline void
once(atomic_int *flag, void (*fn)(void))
{
    int expected = 0;

    if (atomic_load_explicit(flag, memory_order_acquire) == 2)
        return;
    if (!atomic_compare_exchange_strong(flag, &expected, 1)) {
        while (atomic_load(flag) != 2)
            ;
        return;
    }
    fn();
    atomic_store_explicit(flag, 2, memory_order_release);
}

/* The next malloc is the C library's (glibc's, which also exports it as
 * __libc_malloc). */
static bool
c_library_malloc(void)
{
    void *m = dlsym(RTLD_NEXT, "malloc");

    return m && m == dlsym(RTLD_NEXT, "__libc_malloc");
}

/* An environment flag as the options read it: on unless "" or "0". */
static bool
flag_set(const char *name)
{
    const char *v = getenv(name);

    return v && *v && strcmp(v, "0") != 0;
}

/* "--exact" is one of the program's arguments (/proc/self/cmdline, read
 * in pieces, without an allocation). */
static bool
exact_argument(void)
{
    static const char want[] = "--exact";
    char buf[1024];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    ssize_t n;
    long at = 0; /* bytes of want matched in this argument; -1: none */
    bool found = false;

    if (fd < 0)
        return false;
    while (!found && (n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n && !found; i++) {
            if (buf[i] == '\0') {
                found = at == (long)sizeof want - 1;
                at = 0;
            } else if (at >= 0 && at < (long)sizeof want - 1 &&
                       buf[i] == want[at]) {
                at++;
            } else {
                at = -1;
            }
        }
    }
    close(fd);
    return found;
}

static void
look_up_c(void)
{
    resolving = true;
    /* Before any class byte is noted (a lean process's wrappers): no
     * object of leakgate's heap has one. */
    leakgate_heap__reserve();
    /* Known before any next definition is: a thread that sees one sees
     * which allocator it is.  The C library's malloc is asked first: it
     * has no sallocx, and a lookup that fails costs the dynamic linker's
     * error path (an error message, allocated) in every process. */
    if (c_library_malloc() || !dlsym(RTLD_NEXT, "sallocx")) {
        leakgate_jesize__set_lean();
        atomic_thread_fence(memory_order_seq_cst);
    } else {
        LOOK_UP(jemalloc_lookups);
    }
    LOOK_UP(c_lookups);
    if (!leakgate_jesize__lean())
        leakgate_track__mallctl = next.mallctl;
    /* A process that measures windows exactly classifies what they left
     * (reach.c): the live map, from the first object on.  A replay
     * (gate/replay.h's LEAKGATE_REPLAY), --exact (its twin, which
     * `leakgate run --exact` sets too, or the argument to a program with
     * jemalloc), a lean program started again with jemalloc for its
     * exact windows (gate_lean.c: --exact, rerun: false, repeat:), and
     * one `leakgate run` starts on jemalloc for them (jesize.h). */
    if (getenv("LEAKGATE_REPLAY") || getenv("LEAKGATE_LEAN_EXEC") ||
        getenv(LEAKGATE_JESIZE_LIVE_MAP_ENV) || flag_set("LEAKGATE_EXACT") ||
        (!leakgate_jesize__lean() && exact_argument()))
        atomic_store(&leakgate_jesize__live_map, true);
    resolving = false;
}

static void
resolve(void)
{
    once(&state, look_up_c);
}

/* The C++ operators' next definitions: looked up at the first call of
 * one, so that a C program never makes the lookups, which fail there (a
 * failing lookup costs a search of every object, and the dynamic
 * linker's error message, allocated). */
static atomic_int cxx_state;

static void
look_up_cxx(void)
{
    LOOK_UP(cxx_lookups);
}

static void
resolve_cxx(void)
{
    resolve();
    once(&cxx_state, look_up_cxx);
}

/*
 * Orphans (track.h): a thread a test started belongs to that test
 * (owner_here: its token, inherited by the threads it starts; 0 for
 * threads no test started).  Once the test is over (thread_owner is no
 * longer its token) what the thread allocates is not any window's: each
 * object goes to the tracker's orphans, judged against its test when the
 * run ends, and the thread stops jemalloc's sampling of its own
 * allocations (thread.prof.active), so that no later exact window counts
 * them either.  Decided before each allocation (orphan_pre(), in NEXT and
 * the C++ operators), one thread-local load for a thread no test started.
 */
static atomic_uint thread_owner;
static __thread uint32_t owner_here __attribute__((tls_model("initial-exec")));
/* Its test is over (orphan_check(), never for owner_here 0). */
static __thread bool orphan_here __attribute__((tls_model("initial-exec")));
static __thread bool unsampled_here __attribute__((tls_model("initial-exec")));

static __attribute__((noinline)) void
orphan_check(void)
{
    bool off = false;

    orphan_here =
        owner_here != atomic_load_explicit(&thread_owner, memory_order_relaxed);
    if (!orphan_here || unsampled_here)
        return;
    unsampled_here = true;
    if (leakgate_track__mallctl)
        (void)leakgate_track__mallctl("thread.prof.active", NULL, NULL, &off,
                                      sizeof off);
}

static inline void
orphan_pre(void)
{
    if (__builtin_expect(owner_here != 0, 0))
        orphan_check();
}

/* p, about to be freed or resized, is no orphan any more. */
static inline void
orphan_gone(const void *p)
{
    if (__builtin_expect(atomic_load_explicit(&leakgate_track__orphans_live,
                                              memory_order_relaxed) != 0,
                         0) &&
        p)
        leakgate_track__orphan_free((uintptr_t)p);
}

/* The next definition of a function, looked up on first use (and the
 * orphans' decision made: orphan_pre()). */
#define NEXT(field)                                                            \
    (orphan_pre(), next.field ? next.field : (resolve(), next.field))

/* jemalloc's usable size of the live object p. */
static inline size_t
usable(const void *p)
{
    return leakgate_jesize__lean() ? leakgate_jesize__usable_lean(p)
                                   : next.sallocx(p, 0);
}

/* A lean process: p was handed out for an n-byte request aligned to
 * align (0: malloc's alignment); note its jemalloc size class and return
 * it (0: not lean, no object, or beyond the largest class).  (Read after
 * the allocation: the first one resolves the next definitions.) */
static inline ALLOC_PATH size_t
classed(const void *p, size_t n, size_t align)
{
    size_t usize;

    if (!p || !leakgate_jesize__lean())
        return 0;
    if (!align && n <= LEAKGATE_JESIZE__SMALL) {
        uint32_t c = leakgate_jesize__small_class[(n + 7) >> 3];

        leakgate_jesize__note_here(p, (unsigned char)c);
        return c >> 8;
    }
    usize =
        align ? leakgate_jesize__sa2u(n, align) : leakgate_jesize__class_of(n);
    leakgate_jesize__note_here(p, leakgate_jesize__encode(usize));
    return usize;
}

/* Inlined where it is on a path most of a program's calls take (malloc's,
 * calloc's and free's lane, track_hot.h); the general path is one called
 * copy: a copy in each wrapper adds ~30 KB of code for calls that are
 * rare, and the lane's registers. */
#define HOT inline __attribute__((always_inline))

/* Note p as allocated in the open window for a request of n bytes; usize
 * is its jemalloc usable size when the caller knows it (a lean process's
 * class, just noted; 0: look it up), caller the wrapper's return address
 * (the code that called malloc), for track_stacks.c.  In the wrappers'
 * section: an allocation's stack starts below it. */
static HOT ALLOC_PATH void *
noted_from(void *p, size_t n, size_t usize, uintptr_t caller)
{
    /* The live map of a process with jemalloc (a lean one noted the
     * class: classed()). */
    if (p && !leakgate_jesize__lean() && leakgate_jesize__live())
        leakgate_jesize__note(p, next.sallocx(p, 0));
    /* A thread whose test is over: its test's, judged at the run's end. */
    if (p && orphan_here) {
        leakgate_track__orphan_note((uintptr_t)p, owner_here,
                                    usize ? usize : usable(p), n);
        if (leakgate_track__recording())
            leakgate_track__foreign();
        return p;
    }
    /* A thread an earlier window started: not this window's (track_hot.h). */
    if (p && leakgate_track__born && leakgate_track__foreign_here()) {
        if (leakgate_track__recording())
            leakgate_track__foreign();
        return p;
    }
    /* jemalloc counts the meter owner's bytes itself: no size needed. */
    if (p && leakgate_track__metering_now())
        leakgate_track__meter_add(leakgate_track__meter_counted_here() ? 1
                                  : usize ? (long long)usize
                                          : (long long)usable(p),
                                  true);
    if (p && leakgate_track__recording()) {
        leakgate_track__record_here((uintptr_t)p);
        if (leakgate_track__alone())
            leakgate_track__first_log_add((uintptr_t)p);
        if (leakgate_track__stack_wanted(caller)) {
            struct leakgate_stackwalk_regs r;

            /* The walk starts at the wrapper's frame (stackwalk.h). */
            LEAKGATE_STACKWALK_HERE(r);
            leakgate_track__stack_note((uintptr_t)p, caller, n, &r);
        }
    }
    return p;
}

/* The lane's leaves are the class map's leaves too. */
_Static_assert(LEAKGATE_JESIZE__GRAIN_SHIFT == 4 &&
                   LEAKGATE_JESIZE__LEAF_SHIFT == LEAKGATE_TRACK__LEAF_SHIFT,
               "the lane's class bytes (track_hot.h) match jesize.h's map");

/* After the general path noted the object at a: add a's leaf to this
 * thread's lane (track_hot.h) when every condition of it holds; under a
 * new lane number the lane starts empty. */
static ALLOC_PATH void
lane_fill(uintptr_t a)
{
    struct leakgate_track__lane_state *l = &leakgate_track__lane_here;
    const struct leakgate_track__hot *h = &leakgate_track__hot_here;
    uintptr_t index = a >> LEAKGATE_TRACK__LEAF_SHIFT;
    /* First: a change meanwhile makes this copy stale, never wrong. */
    unsigned int gen =
        atomic_load_explicit(&leakgate_track__lane, memory_order_relaxed);

    if (gen == 0 || index == 0 || !leakgate_track__alone() ||
        h->index != index ||
        h->gen != atomic_load_explicit(&leakgate_track__window,
                                       memory_order_relaxed) ||
        !h->classes ||
        leakgate_track__meter_mine !=
            atomic_load_explicit(&leakgate_track__meter.owner,
                                 memory_order_relaxed) ||
        /* The lane's level is the owner's bytes alone (track_hot.h):
         * no other thread's may count in this meter's window. */
        atomic_load_explicit(&leakgate_track__meter.others_live,
                             memory_order_relaxed) != 0 ||
        (leakgate_track__born && leakgate_track__foreign_here()) || orphan_here)
        return;
    if (l->gen == gen &&
        (l->leaf[0].index == index || l->leaf[1].index == index))
        return;
    if (l->gen != gen)
        l->leaf[1].index = UINTPTR_MAX;
    else
        l->leaf[1] = l->leaf[0];
    l->leaf[0].index = index;
    l->leaf[0].used = h->used;
    l->leaf[0].classes = h->classes;
    l->gen = gen;
}

/* An n-byte allocation (aligned to align; 0: malloc's) handed out: its
 * class noted (a lean process), then the object. */
static HOT ALLOC_PATH void *
handed_out_here(void *p, size_t n, size_t align, uintptr_t caller)
{
    return noted_from(p, n, classed(p, n, align), caller);
}

/* The same, called (from the rarer wrappers, and from malloc and calloc
 * outside their lane), and the lane opened after it. */
static __attribute__((noinline)) ALLOC_PATH void *
handed_out(void *p, size_t n, size_t align, uintptr_t caller)
{
    handed_out_here(p, n, align, caller);
    if (p && atomic_load_explicit(&leakgate_track__lane, memory_order_relaxed))
        lane_fill((uintptr_t)p);
    return p;
}

/* malloc's or calloc's object p of n bytes in this thread's lane
 * (track_hot.h): noted as handed_out() would note it; false when the
 * lane does not cover it (handed_out() then). */
static HOT ALLOC_PATH bool
lane_alloc(void *p, size_t n, uintptr_t caller)
{
    uintptr_t a = (uintptr_t)p;
    struct leakgate_track__lane_leaf f;
    uint32_t c;

    if (n > LEAKGATE_JESIZE__SMALL || !leakgate_track__lane_for(a, &f))
        return false;
    c = leakgate_jesize__small_class[(n + 7) >> 3];
    leakgate_track__lane_record(&f, a, (unsigned char)c, c >> 8);
    leakgate_track__first_log_add(a);
    if (leakgate_track__stack_wanted_lane(caller)) {
        struct leakgate_stackwalk_regs r;

        LEAKGATE_STACKWALK_HERE(r);
        leakgate_track__stack_note(a, caller, n, &r);
    }
    return true;
}

static __attribute__((noinline)) ALLOC_PATH void *
noted_out(void *p, size_t n, uintptr_t caller)
{
    return noted_from(p, n, 0, caller);
}

#define CALLER ((uintptr_t)__builtin_return_address(0))
#define noted(p, n) noted_out((p), (n), CALLER)
#define noted_classed(p, n, align) handed_out((p), (n), (align), CALLER)

/* The usable size of p, for the meter, while it counts and jemalloc's
 * counters do not count it (else 0). */
static inline size_t
metered_size(const void *p)
{
    return p && leakgate_track__metering_now() &&
                   !leakgate_track__meter_counted_here() &&
                   !(leakgate_track__born && leakgate_track__foreign_here())
               ? usable(p)
               : 0;
}

/* Clear p's bit in the open window's table and drop its stack note; true
 * when p was allocated in the window. */
static inline bool
erased(const void *p)
{
    if (!leakgate_track__erase_here((uintptr_t)p))
        return false;
    if (leakgate_track__noted_maybe((uintptr_t)p))
        leakgate_track__stack_drop((uintptr_t)p);
    return true;
}

/* Forget p before it is freed: the meter's count, its bit, its watch
 * (free's general path, and the rarer wrappers). */
static __attribute__((noinline)) void
forget(void *p)
{
    size_t n = metered_size(p);

    orphan_gone(p);
    if (n)
        leakgate_track__meter_add(-(long long)n, false);
    if (p && !(leakgate_track__erasing_now() && erased(p)) &&
        leakgate_track__carrying_now())
        leakgate_track__carry_drop((uintptr_t)p, 0, NULL);
    if (p && leakgate_track__watching_now())
        leakgate_track__watch_free((uintptr_t)p);
    if (p && leakgate_jesize__live())
        leakgate_jesize__unnote(p);
}

/* No next definition (a program without the C++ runtime calling a C++
 * operator it cannot have): fail like an allocation that found no memory. */
static void *
none(void)
{
    errno = ENOMEM;
    return NULL;
}

/* A diverted thread's request (heap.h) comes from leakgate's heap's
 * classes (leakgate_heap__try_zalloc()); one they cannot hold goes on as
 * the program's: an object the library frees with free(), never one of
 * the heap's large ones. */

/* realloc() of the heap's object p to n > 0 bytes by a diverted thread:
 * within the heap's classes, else moved to an object of the program's
 * heap (undiverted), as a request they cannot hold. */
static __attribute__((noinline)) void *
diverted_resize(void *p, size_t n)
{
    size_t have = leakgate_heap__size(p);
    unsigned was = leakgate_heap__diverted;
    void *q = leakgate_heap__try_resize(p, n);

    if (q)
        return q;
    leakgate_heap__diverted = 0;
    q = malloc(n);
    leakgate_heap__diverted = was;
    if (!q)
        return NULL; /* errno: malloc's */
    memcpy(q, p, n < have ? n : have);
    leakgate_heap__free(p);
    return q;
}

static inline bool
diverting(void)
{
    return __builtin_expect(leakgate_heap__diverted != 0, 0);
}

WRAP void *
malloc(size_t n)
{
    void *p;

    if (!next.malloc && resolving)
        return arena_alloc(n, 16);
    if (diverting() && (p = leakgate_heap__try_zalloc(1, n)))
        return p;
    p = NEXT(malloc)(n);
    if (lane_alloc(p, n, CALLER))
        return p;
    return handed_out(p, n, 0, CALLER);
}

/* Forget the object at a, of class byte c, in the lane's leaf f: the
 * meter's count, its bit (c's mark), its stack note. */
static HOT void
lane_forget(const struct leakgate_track__lane_leaf *f,
            uintptr_t a,
            unsigned char c)
{
    if (leakgate_track__lane_erase(f, a, c, leakgate_jesize__byte_size[c]) &&
        leakgate_track__noted_maybe(a))
        leakgate_track__stack_drop(a);
    /* Freed: no class (the live map's, jesize.h; the lane has no other
     * use for a freed object's byte, and a store costs less than asking). */
    __atomic_store_n(leakgate_track__lane_class(f, a), 0, __ATOMIC_RELAXED);
}

/* The object at a may be watched (track.h, "Watch"): its free tells the
 * watch, on the general path. */
static inline bool
unlikely_watched(uintptr_t a)
{
    return __builtin_expect(
        leakgate_track__watching_now() && leakgate_track__watched_maybe(a), 0);
}

/* The lane's free (track_hot.h): the object at p (of a known class) in
 * this thread's lane, forgotten as forget() would; false when the lane
 * does not cover it. */
static HOT bool
lane_free(void *p)
{
    uintptr_t a = (uintptr_t)p;
    struct leakgate_track__lane_leaf f;
    unsigned char c;

    if (!leakgate_track__lane_for(a, &f))
        return false;
    c = __atomic_load_n(leakgate_track__lane_class(&f, a), __ATOMIC_RELAXED);
    if (!(c & LEAKGATE_JESIZE__CLASS)) /* unknown: the general path */
        return false;
    if (unlikely_watched(a)) /* forget() tells the watch */
        return false;
    lane_forget(&f, a, c);
    return true;
}

WRAP void
free(void *p)
{
    /* free(NULL) does nothing, here too: not even look up the C
     * library's free (the dynamic linker frees its NULL error strings
     * while resolve() runs). */
    if (!p)
        return;
    /* The early arena's objects and leakgate's own (a library, or the C
     * library, freeing what leakgate gave it) have no class byte: never
     * in the lane (leakgate's heap is reserved by resolve(), before any
     * class byte is noted, and never unmapped). */
    if (!lane_free(p)) {
        if (in_arena(p))
            return;
        if (leakgate_heap__owns(p)) {
            leakgate_heap__free(p);
            return;
        }
        forget(p);
    }
    NEXT(free)(p);
}

WRAP void *
calloc(size_t k, size_t n)
{
    void *p;

    if (!next.calloc && resolving)
        return n && k > SIZE_MAX / n ? NULL : arena_alloc(k * n, 16);
    if (diverting() && (p = leakgate_heap__try_zalloc(k, n)))
        return p;
    /* On jemalloc a small calloc is a malloc and a memset, as jemalloc's
     * own small calloc is, but for an object its profiler samples (every
     * one in an exact window): that one is promoted to a 16 KiB extent,
     * which calloc zeroes by purging it (madvise, then page faults when
     * it is touched again).  Zeroing what was asked for costs less. */
    if (next.mallctl && n != 0 && k != 0 && k <= LEAKGATE_JESIZE__SMALL / n) {
        p = NEXT(malloc)(k * n);
        if (p)
            memset(p, 0, k * n);
    } else {
        p = NEXT(calloc)(k, n);
    }
    if (lane_alloc(p, k * n, CALLER))
        return p;
    return handed_out(p, k * n, 0, CALLER);
}

/* A resized object is noted anew, even in place: exact profiling samples
 * it again at the resizing stack.  On failure the old one stays live. */
static ALLOC_PATH void *
resized(void *old,
        size_t old_size,
        void *p,
        size_t n,
        bool was_noted,
        uintptr_t caller)
{
    /* Moved or resized: the old size is gone; resized to 0: freed. */
    if (old_size && (p || n == 0))
        leakgate_track__meter_add(-(long long)old_size, false);
    if (old && (p || n == 0) && leakgate_jesize__live())
        leakgate_jesize__unnote(old);
    if (p)
        return noted_from(p, n, classed(p, n, 0), caller);
    if (was_noted && n != 0)
        leakgate_track__record((uintptr_t)old);
    return NULL;
}

/* realloc's lane: p, of a known class in this thread's lane, resized to
 * n bytes by the next realloc (*out); p forgotten as lane_free() forgets
 * it.  LANE_MISS: the lane does not cover p (nothing done); LANE_NOTE:
 * *out is to be noted; LANE_DONE: the resize failed, *out is NULL. */
enum { LANE_MISS, LANE_NOTE, LANE_DONE };

static HOT int
lane_realloc(void *p, size_t n, void **out)
{
    uintptr_t a = (uintptr_t)p;
    struct leakgate_track__lane_leaf f;
    unsigned char c;

    if (!leakgate_track__lane_for(a, &f))
        return LANE_MISS;
    c = __atomic_load_n(leakgate_track__lane_class(&f, a), __ATOMIC_RELAXED);
    if (!(c & LEAKGATE_JESIZE__CLASS) || unlikely_watched(a))
        return LANE_MISS;
    *out = NEXT(realloc)(p, n);
    if (!*out)
        return LANE_DONE;
    lane_forget(&f, a, c);
    return LANE_NOTE;
}

WRAP void *
realloc(void *p, size_t n)
{
    struct leakgate_track_carry_receipt receipt = {0};
    size_t old;
    bool was;
    void *moved;

    if ((!next.realloc && resolving) || in_arena(p)) {
        void *q = arena_alloc(n, 16);

        if (q && p) /* an arena object is never larger than what is left */
            memmove(q, p,
                    (size_t)(arena + ARENA_SIZE - (unsigned char *)p) < n
                        ? (size_t)(arena + ARENA_SIZE - (unsigned char *)p)
                        : n);
        return q;
    }
    if (leakgate_heap__owns(p)) { /* leakgate's own (getline's buffer...) */
        if (n == 0) {
            leakgate_heap__free(p);
            return NULL;
        }
        if (diverting())
            return diverted_resize(p, n);
        return leakgate_heap__resize(p, n);
    }
    if (!p) { /* malloc's */
        void *q;

        if (diverting() && (q = leakgate_heap__try_zalloc(1, n)))
            return q;
        q = NEXT(realloc)(p, n);

        if (lane_alloc(q, n, CALLER))
            return q;
        return handed_out(q, n, 0, CALLER);
    }
    if (n != 0 && n <= LEAKGATE_JESIZE__SMALL) {
        void *q;

        /* In the lane the process has one thread: the old object is
         * forgotten once the next realloc succeeded (on failure it stays
         * live, as it was), then the new one noted. */
        switch (lane_realloc(p, n, &q)) {
        case LANE_MISS: break;
        case LANE_NOTE:
            if (lane_alloc(q, n, CALLER))
                return q;
            return handed_out(q, n, 0, CALLER);
        default: return q;
        }
    }
    old = metered_size(p);
    orphan_gone(p);
    was = p && leakgate_track__erasing_now() && erased(p);
    if (p && !was && leakgate_track__carrying_now())
        leakgate_track__carry_drop((uintptr_t)p, 0, &receipt);
    if (p && leakgate_track__watching_now())
        leakgate_track__watch_free((uintptr_t)p);
    moved = NEXT(realloc)(p, n);
    if (!moved && n != 0) /* failed: p lives on as it was */
        leakgate_track__carry_undo((uintptr_t)p, &receipt);
    return resized(p, old, moved, n, was, CALLER);
}

WRAP int
posix_memalign(void **out, size_t align, size_t n)
{
    int rc;

    if (!next.posix_memalign && resolving) {
        *out = arena_alloc(n, align);
        return *out ? 0 : ENOMEM;
    }
    rc = NEXT(posix_memalign)(out, align, n);
    if (rc == 0)
        /* jemalloc makes a 0-byte request 1 byte here (not in memalign) */
        noted_classed(*out, n ? n : 1, align);
    return rc;
}

WRAP void *
aligned_alloc(size_t align, size_t n)
{
    return noted_classed(NEXT(aligned_alloc)(align, n), n ? n : 1, align);
}

WRAP void *
memalign(size_t align, size_t n)
{
    return noted_classed(NEXT(memalign)(align, n), n, align);
}

WRAP void *
valloc(size_t n)
{
    return noted_classed(NEXT(valloc)(n), n, 4096);
}

/* pvalloc: valloc of n rounded up to whole pages (0: one page).  jemalloc
 * has none: the next definition would be the C library's, whose object
 * jemalloc's free cannot take; in a process with jemalloc it is
 * jemalloc's memalign of the rounded size.  A lean process has the C
 * library's pvalloc. */
WRAP void *
pvalloc(size_t n)
{
    size_t page = 4096, size = n ? (n + page - 1) & ~(page - 1) : page;

    if (size < n) {
        errno = ENOMEM;
        return NULL;
    }
    resolve();
    if (leakgate_jesize__lean() && next.pvalloc)
        return noted_classed(next.pvalloc(n), size, page);
    return noted_classed(NEXT(memalign)(page, size), size, page);
}

/* jemalloc's own API: only a process with jemalloc has it (a lean
 * process's program cannot have called it: it would not link). */
WRAP void *
mallocx(size_t n, int flags)
{
    return NEXT(mallocx) ? noted(next.mallocx(n, flags), n) : none();
}

WRAP void *
rallocx(void *p, size_t n, int flags)
{
    struct leakgate_track_carry_receipt receipt = {0};
    size_t old = metered_size(p);
    bool was;
    void *q;

    orphan_gone(p);
    was = p && leakgate_track__erasing_now() && erased(p);
    if (p && !was && leakgate_track__carrying_now())
        leakgate_track__carry_drop((uintptr_t)p, 0, &receipt);
    if (p && leakgate_track__watching_now())
        leakgate_track__watch_free((uintptr_t)p);
    if (!NEXT(rallocx))
        return none();
    q = next.rallocx(p, n, flags);
    if (!q) /* failed: p lives on as it was */
        leakgate_track__carry_undo((uintptr_t)p, &receipt);
    return resized(p, old, q, n, was, CALLER);
}

WRAP size_t
xallocx(void *p, size_t n, size_t extra, int flags)
{
    size_t before, after;

    if (!NEXT(xallocx))
        return 0;
    before = next.sallocx(p, 0);
    after = next.xallocx(p, n, extra, flags);

    if (after != before) {
        /* In place: noted anew (as exact profiling samples it), its new
         * size counted once. */
        if (leakgate_track__metering_now() &&
            !leakgate_track__meter_counted_here())
            leakgate_track__meter_add(-(long long)before, false);
        orphan_gone(p);
        if (leakgate_track__carrying_now())
            leakgate_track__carry_drop((uintptr_t)p, before, NULL);
        noted(p, n);
    }
    return after;
}

WRAP void
dallocx(void *p, int flags)
{
    forget(p);
    if (NEXT(dallocx))
        next.dallocx(p, flags);
}

WRAP void
sdallocx(void *p, size_t n, int flags)
{
    forget(p);
    if (NEXT(sdallocx))
        next.sdallocx(p, n, flags);
}

/*
 * C++'s operators, by their mangled names.  A throwing new's exception
 * passes through these frames (C has unwind tables on this platform).
 *
 * A lean process allocates as libstdc++ does, with the C library's malloc
 * (aligned: memalign), noted here once; only a failed allocation goes to
 * the next operator new (its new_handler, its exception), whose malloc
 * comes back through the wrapper and is noted there.  Its delete is free.
 */
static ALLOC_PATH void *
lean_new(size_t n, size_t align, uintptr_t caller)
{
    void *p = align ? next.memalign(align, n) : next.malloc(n);

    /* jemalloc's aligned new asks for at least 1 byte */
    return handed_out(p, align && !n ? 1 : n, align, caller);
}

#define NEW_WRAPPER(name, field, params, args, align)                          \
    WRAP void *name params;                                                    \
    WRAP void *name params                                                     \
    {                                                                          \
        void *p;                                                               \
                                                                               \
        resolve_cxx();                                                         \
        orphan_pre();                                                          \
        if (leakgate_jesize__lean() &&                                         \
            (p = lean_new(n, align, CALLER)) != NULL)                          \
            return p;                                                          \
        if (!next.field)                                                       \
            return none();                                                     \
        return leakgate_jesize__lean() ? next.field args                       \
                                       : noted(next.field args, n);            \
    }
#define DELETE_WRAPPER(name, field, params, args)                              \
    WRAP void name params;                                                     \
    WRAP void name params                                                      \
    {                                                                          \
        resolve_cxx();                                                         \
        if (leakgate_jesize__lean()) {                                         \
            free(p);                                                           \
            return;                                                            \
        }                                                                      \
        forget(p);                                                             \
        if (next.field)                                                        \
            next.field args;                                                   \
    }

NEW_WRAPPER(_Znwm, nw, (size_t n), (n), 0)
NEW_WRAPPER(_Znam, na, (size_t n), (n), 0)
NEW_WRAPPER(_ZnwmRKSt9nothrow_t, nw_nt, (size_t n, const void *t), (n, t), 0)
NEW_WRAPPER(_ZnamRKSt9nothrow_t, na_nt, (size_t n, const void *t), (n, t), 0)
NEW_WRAPPER(_ZnwmSt11align_val_t, nw_al, (size_t n, size_t a), (n, a), a)
NEW_WRAPPER(_ZnamSt11align_val_t, na_al, (size_t n, size_t a), (n, a), a)
NEW_WRAPPER(_ZnwmSt11align_val_tRKSt9nothrow_t,
            nw_al_nt,
            (size_t n, size_t a, const void *t),
            (n, a, t),
            a)
NEW_WRAPPER(_ZnamSt11align_val_tRKSt9nothrow_t,
            na_al_nt,
            (size_t n, size_t a, const void *t),
            (n, a, t),
            a)
DELETE_WRAPPER(_ZdlPv, dl, (void *p), (p))
DELETE_WRAPPER(_ZdaPv, da, (void *p), (p))
DELETE_WRAPPER(_ZdlPvRKSt9nothrow_t, dl_nt, (void *p, const void *t), (p, t))
DELETE_WRAPPER(_ZdaPvRKSt9nothrow_t, da_nt, (void *p, const void *t), (p, t))
DELETE_WRAPPER(_ZdlPvm, dl_sz, (void *p, size_t n), (p, n))
DELETE_WRAPPER(_ZdaPvm, da_sz, (void *p, size_t n), (p, n))
DELETE_WRAPPER(_ZdlPvSt11align_val_t, dl_al, (void *p, size_t a), (p, a))
DELETE_WRAPPER(_ZdaPvSt11align_val_t, da_al, (void *p, size_t a), (p, a))
DELETE_WRAPPER(_ZdlPvSt11align_val_tRKSt9nothrow_t,
               dl_al_nt,
               (void *p, size_t a, const void *t),
               (p, a, t))
DELETE_WRAPPER(_ZdaPvSt11align_val_tRKSt9nothrow_t,
               da_al_nt,
               (void *p, size_t a, const void *t),
               (p, a, t))
DELETE_WRAPPER(_ZdlPvmSt11align_val_t,
               dl_sz_al,
               (void *p, size_t n, size_t a),
               (p, n, a))
DELETE_WRAPPER(_ZdaPvmSt11align_val_t,
               da_sz_al,
               (void *p, size_t n, size_t a),
               (p, n, a))

/*
 * pthread_create: a thread created while a test's window is open belongs
 * to that window (track_hot.h, leakgate_track__born); it starts through
 * leakgate_intercept_thread_start(), which notes so.  The start's
 * function and argument wait in a fixed table (no allocation: it would be
 * the window's); with the table full the thread starts as it would, not
 * noted (its allocations count in whichever window is open, as before).
 */
#define START_SLOTS 256

static struct start_slot {
    void *(*fn)(void *);
    void *arg;
    uint32_t born;
    uint32_t token; /* the test's (intercept.h), 0: none */
    atomic_bool used;
} starts[START_SLOTS] LEAKGATE_LARGE_TABLE;

/* Named leakgate_*: reports cut a stack at a leakgate frame, so a
 * thread's stacks end where they would without it. */
static void *
leakgate_intercept_thread_start(void *payload)
{
    struct start_slot *slot = payload;
    void *(*fn)(void *) = slot->fn;
    void *arg = slot->arg;

    /* The table is leakgate's: it keeps no program address once read (a
     * reachability scan would take it for a global's). */
    slot->arg = NULL;
    leakgate_track__born = slot->born;
    owner_here = slot->token;
    atomic_store_explicit(&slot->used, false, memory_order_release);
    return fn(arg);
}

/*
 * Threads a test leaves neither joined nor detached (a forgotten
 * pthread_join): while a test runs (leakgate_intercept__own_threads()),
 * each joinable thread it creates is kept here with its creator's return
 * address, until pthread_join (or tryjoin, timedjoin, clockjoin) or
 * pthread_detach succeeds on it; leakgate_intercept__unjoined() takes
 * those still here when the test ends.  A fixed table, no allocation; a
 * thread beyond it is not followed.
 */
#define JOIN_SLOTS 256
#define JOIN_BUSY UINT32_MAX

static struct join_slot {
    atomic_uint owner; /* the test's token; 0 free; JOIN_BUSY being filled */
    pthread_t tid;
    const void *caller;
} joins[JOIN_SLOTS] LEAKGATE_LARGE_TABLE;

/* Threads followed now: the test's end looks at the table only then. */
static atomic_uint followed;

void
leakgate_intercept__own_threads(uint32_t token)
{
    atomic_store(&thread_owner, token);
}

static void
follow(pthread_t tid,
       const pthread_attr_t *attr,
       const void *caller,
       uint32_t token)
{
    int detach = PTHREAD_CREATE_JOINABLE;

    /* A thread of a test that is over (an orphan's) is not the running
     * test's to join. */
    if (!token || token != atomic_load(&thread_owner) ||
        (attr && pthread_attr_getdetachstate(attr, &detach) == 0 &&
         detach == PTHREAD_CREATE_DETACHED))
        return;
    for (size_t i = 0; i < JOIN_SLOTS; i++) {
        unsigned int expected = 0;

        if (atomic_load_explicit(&joins[i].owner, memory_order_relaxed) ||
            !atomic_compare_exchange_strong(&joins[i].owner, &expected,
                                            JOIN_BUSY))
            continue;
        joins[i].tid = tid;
        joins[i].caller = caller;
        atomic_fetch_add(&followed, 1);
        atomic_store(&joins[i].owner, token);
        return;
    }
}

/* tid was joined or detached: no longer followed. */
static void
settled(pthread_t tid)
{
    for (size_t i = 0; atomic_load(&followed) != 0 && i < JOIN_SLOTS; i++) {
        unsigned int o = atomic_load(&joins[i].owner);

        if (o && o != JOIN_BUSY && pthread_equal(joins[i].tid, tid) &&
            atomic_compare_exchange_strong(&joins[i].owner, &o, 0))
            atomic_fetch_sub(&followed, 1);
    }
}

size_t
leakgate_intercept__unjoined(uint32_t token, const void **callers, size_t max)
{
    size_t n = 0;

    if (atomic_load(&followed) == 0)
        return 0;
    for (size_t i = 0; token && i < JOIN_SLOTS; i++) {
        unsigned int expected = token;

        if (atomic_load(&joins[i].owner) != token)
            continue;
        if (n < max)
            callers[n] = joins[i].caller;
        n++;
        /* Said once: the thread is not followed any more. */
        if (atomic_compare_exchange_strong(&joins[i].owner, &expected, 0))
            atomic_fetch_sub(&followed, 1);
    }
    return n;
}

/* The next definition of name (the C library's), looked up once. */
static void *
next_thread_fn(void *_Atomic *slot, const char *name)
{
    void *fn = atomic_load(slot);

    if (!fn) {
        fn = dlsym(RTLD_NEXT, name);
        atomic_store(slot, fn);
    }
    return fn;
}

#define JOIN_WRAPPER(name, params, args, tid)                                  \
    __attribute__((visibility("default"))) int name params                     \
    {                                                                          \
        static void *_Atomic real;                                             \
        int(*fn) params;                                                       \
        void *p = next_thread_fn(&real, #name);                                \
        int rc;                                                                \
                                                                               \
        if (!p)                                                                \
            return ENOSYS;                                                     \
        memcpy(&fn, &p, sizeof p);                                             \
        rc = fn args;                                                          \
        if (rc == 0)                                                           \
            settled(tid);                                                      \
        return rc;                                                             \
    }

JOIN_WRAPPER(pthread_join, (pthread_t t, void **ret), (t, ret), t)
JOIN_WRAPPER(pthread_detach, (pthread_t t), (t), t)
JOIN_WRAPPER(pthread_tryjoin_np, (pthread_t t, void **ret), (t, ret), t)
JOIN_WRAPPER(pthread_timedjoin_np,
             (pthread_t t, void **ret, const struct timespec *at),
             (t, ret, at),
             t)
JOIN_WRAPPER(pthread_clockjoin_np,
             (pthread_t t, void **ret, clockid_t c, const struct timespec *at),
             (t, ret, c, at),
             t)

__attribute__((visibility("default"))) int
pthread_create(pthread_t *thread,
               const pthread_attr_t *attr,
               void *(*fn)(void *),
               void *arg)
{
    uint32_t born = leakgate_track__born && leakgate_track__foreign_here()
                        ? leakgate_track__born
                    : leakgate_track__recording()
                        ? atomic_load(&leakgate_track__thread_window)
                        : 0;
    /* The test that owns the new thread: the creator's, or the running
     * test's. */
    uint32_t token = owner_here ? owner_here : atomic_load(&thread_owner);

    if (!NEXT(pthread_create))
        return EAGAIN;
    /* Every thread's lane is filled again, and only while no other
     * thread's bytes count in the meter (lane_fill()): the lane's level is
     * the owner's alone, even if the C library called the process single-
     * threaded again once this thread is gone. */
    leakgate_track__lane_refresh();
    for (size_t i = 0; (born || token) && i < START_SLOTS; i++) {
        struct start_slot *slot = &starts[i];
        bool expected = false;
        int rc;

        if (atomic_load_explicit(&slot->used, memory_order_relaxed) ||
            !atomic_compare_exchange_strong(&slot->used, &expected, true))
            continue;
        slot->fn = fn;
        slot->arg = arg;
        slot->born = born;
        slot->token = token;
        rc = next.pthread_create(thread, attr, leakgate_intercept_thread_start,
                                 slot);
        if (rc != 0) {
            slot->arg = NULL;
            atomic_store(&slot->used, false);
        } else {
            follow(*thread, attr, __builtin_return_address(0), token);
        }
        return rc;
    }
    {
        int rc = next.pthread_create(thread, attr, fn, arg);

        if (rc == 0)
            follow(*thread, attr, __builtin_return_address(0), token);
        return rc;
    }
}

/* Exported so that another copy of leakgate (a linked test binary run by
 * `leakgate run`) recognises these wrappers as leakgate's. */
__attribute__((visibility("default"))) const int leakgate_alloc_wrappers = 1;

/* The section's bounds, defined by the linker for this module. */
extern const char __start_leakgate_alloc[] __attribute__((weak));
extern const char __stop_leakgate_alloc[] __attribute__((weak));

void
leakgate_intercept__range(uintptr_t *start, uintptr_t *end)
{
    *start = (uintptr_t)__start_leakgate_alloc;
    *end = (uintptr_t)__stop_leakgate_alloc;
}

const void *
leakgate_intercept__next_malloc(void)
{
    void *p;

    resolve();
    memcpy(&p, &next.malloc, sizeof p);
    return p;
}

#else /* LEAKGATE_NO_INTERCEPT: sanitizer builds, no wrappers */

void
leakgate_intercept__own_threads(uint32_t token)
{
    (void)token;
}

size_t
leakgate_intercept__unjoined(uint32_t token, const void **callers, size_t max)
{
    (void)token;
    (void)callers;
    (void)max;
    return 0;
}

void
leakgate_intercept__range(uintptr_t *start, uintptr_t *end)
{
    *start = *end = 0;
}

const void *
leakgate_intercept__next_malloc(void)
{
    return NULL;
}
#endif
