/* SPDX-License-Identifier: MIT */
/*
 * jesize: jemalloc's usable sizes in a process whose allocator is the C
 * library's (a lean process: the test binary links leakgate without
 * jemalloc, docs/architecture.md "Lean processes").  The fast pass, the
 * peak meter and the replay's comparison count bytes as jemalloc would
 * hand them out, so that a verdict does not depend on which allocator ran
 * the test: each allocation's jemalloc size class, computed from its
 * request as jemalloc 5.3 rounds it (size classes of 4 per doubling,
 * 16-byte quantum, 4 KiB pages), is kept in a byte per 16 bytes of
 * address space while the object lives.
 */
#ifndef LEAKGATE_JESIZE_H
#define LEAKGATE_JESIZE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* jemalloc's usable size of malloc(n) (0 when n is beyond its largest
 * class).  Cannot fail. */
size_t leakgate_jesize__s2u(size_t n);

/* leakgate_jesize__s2u(), inlined for the allocation wrappers: jemalloc
 * 5.3 on x86-64 Linux (16-byte quantum, 4 classes per doubling, a tiny
 * class of 8 bytes, the largest 7 << 60). */
static inline size_t
leakgate_jesize__class_of(size_t n)
{
    unsigned int x, lg_delta;
    size_t delta;

    if (n > (size_t)7 << 60)
        return 0;
    if (n <= 8)
        return 8;
    x = (unsigned int)(sizeof(unsigned long long) * 8 - 1) -
        (unsigned int)__builtin_clzll((unsigned long long)((n << 1) - 1));
    lg_delta = x < 2 + 4 + 1 ? 4 : x - 2 - 1;
    delta = (size_t)1 << lg_delta;
    return (n + delta - 1) & ~(delta - 1);
}

/* jemalloc's usable size of an n-byte allocation aligned to align (a
 * power of two), as posix_memalign, aligned_alloc and memalign give it
 * (0 when too large).  Cannot fail. */
size_t leakgate_jesize__sa2u(size_t n, size_t align);

/* This process allocates with the C library's malloc: sizes come from the
 * class map.  Set once by the allocation wrappers (intercept.c), read on
 * every allocation there.  Cannot fail. */
extern atomic_bool leakgate_jesize__is_lean;
void leakgate_jesize__set_lean(void);
static inline bool
leakgate_jesize__lean(void)
{
    return atomic_load_explicit(&leakgate_jesize__is_lean,
                                memory_order_relaxed);
}

/* The tracker's slot for its leaf of a's 2^LEAKGATE_JESIZE__LEAF_SHIFT
 * bytes of addresses (track.c), beside the class leaf's in the map's
 * top-level entry (made first when create); NULL when a is beyond the map
 * or the entry is not (or could not be) made. */
_Atomic(void *) *leakgate_jesize__tracker_slot(uintptr_t a, bool create);

/* The map's layout (jesize.c): a byte per 2^GRAIN_SHIFT bytes of address
 * space, in leaves of 2^LEAF_SHIFT bytes of addresses; each thread keeps
 * the leaf it found last (leaves are never unmapped). */
#define LEAKGATE_JESIZE__LEAF_SHIFT 24
#define LEAKGATE_JESIZE__GRAIN_SHIFT 4
struct leakgate_jesize__cache {
    uintptr_t index; /* address >> LEAF_SHIFT */
    unsigned char *leaf;
};
extern __thread struct leakgate_jesize__cache leakgate_jesize__here
    __attribute__((tls_model("initial-exec")));

/*
 * A class byte: its low 7 bits the class (0: unknown), its high bit the
 * tracker's (track.c: the object was allocated in the open window and is
 * live).  Writers of a class clear the mark; only the tracker sets it.
 */
#define LEAKGATE_JESIZE__MARK 0x80u
#define LEAKGATE_JESIZE__CLASS 0x7fu

/* A class byte's usable size (0: unknown), whatever its mark. */
static inline size_t
leakgate_jesize__decode(unsigned char c)
{
    c &= LEAKGATE_JESIZE__CLASS;
    return c ? (size_t)((c >> 5) << 1 | 1) << ((c & 31) + 2) : 0;
}

/* Note that the object at p has jemalloc usable size usize (from
 * allocation wrappers only; never allocates; a size the map cannot hold
 * is noted as unknown).  Cannot fail. */
void leakgate_jesize__note(const void *p, size_t usize);

/* A usable size's class byte, unmarked (0: one the map cannot hold):
 * usize is m * 2^d, m odd, at most 7, d from 3 to 33; the byte is
 * (m >> 1) << 5 | d - 2, never 0, below LEAKGATE_JESIZE__MARK. */
static inline unsigned char
leakgate_jesize__encode(size_t usize)
{
    unsigned int d;
    size_t m;

    if (usize == 0)
        return 0;
    d = (unsigned int)__builtin_ctzll((unsigned long long)usize);
    m = usize >> d;
    if (d < 3 || d > 33 || m > 7)
        return 0;
    return (unsigned char)((m >> 1) << 5 | (d - 2));
}

/*
 * The classes of malloc(n) for n up to LEAKGATE_JESIZE__SMALL, by
 * (n + 7) / 8 (every class from 8 bytes on is a multiple of 8, so n's
 * class is that of n rounded up to 8): the class byte in the low 8 bits,
 * the usable size above them.  And every class byte's usable size.  The
 * wrappers look both up instead of computing them.  Filled by
 * leakgate_jesize__set_lean(), before any lean allocation is noted.
 */
#define LEAKGATE_JESIZE__SMALL 4096
extern uint32_t leakgate_jesize__small_class[LEAKGATE_JESIZE__SMALL / 8 + 1];
extern uint64_t leakgate_jesize__byte_size[256];

/* The byte of address a in leaf, the class leaf that covers a. */
static inline unsigned char *
leakgate_jesize__at(unsigned char *leaf, uintptr_t a)
{
    return &leaf[(a & (((uintptr_t)1 << LEAKGATE_JESIZE__LEAF_SHIFT) - 1)) >>
                 LEAKGATE_JESIZE__GRAIN_SHIFT];
}

/* The class byte of address a (its leaf mapped first when create), and
 * the first byte of the leaf that holds it; NULL when the leaf is not
 * mapped (or cannot be, or a is outside the map).  Never allocates. */
unsigned char *leakgate_jesize__byte(uintptr_t a, bool create);
unsigned char *leakgate_jesize__leaf(uintptr_t a);

/* Note the class byte c for the object at p (leakgate_jesize__note()
 * with the size encoded), inlined for the allocation wrappers where the
 * thread's last leaf covers p. */
void leakgate_jesize__note_byte(const void *p, unsigned char c);
static inline void
leakgate_jesize__note_here(const void *p, unsigned char c)
{
    const struct leakgate_jesize__cache *cache = &leakgate_jesize__here;
    uintptr_t a = (uintptr_t)p;

    if (cache->leaf && cache->index == a >> LEAKGATE_JESIZE__LEAF_SHIFT)
        __atomic_store_n(leakgate_jesize__at(cache->leaf, a), c,
                         __ATOMIC_RELAXED);
    else
        leakgate_jesize__note_byte(p, c);
}

/*
 * The live map: while it is on (a replay, set once by the allocation
 * wrappers before they note any object), the map holds a class byte for
 * every live object the wrappers handed out, in a process with jemalloc
 * too, and the wrappers clear it when the object is freed: a non-zero
 * byte marks the start of a live object.  A reachability scan (reach.c)
 * reads the heap's objects from it.  Off: a freed object's byte may stay.
 */
extern atomic_bool leakgate_jesize__live_map;
/* Set in a program's environment (to anything): the live map is on from
 * its first object (`leakgate run` sets it for a program it starts on
 * jemalloc for exact windows, `rerun: false` or `repeat:`, and a program
 * on jemalloc that meets them starts again with it: gate_lean.c). */
#define LEAKGATE_JESIZE_LIVE_MAP_ENV "LEAKGATE_LIVE_MAP"
static inline bool
leakgate_jesize__live(void)
{
    return atomic_load_explicit(&leakgate_jesize__live_map,
                                memory_order_relaxed);
}

/* Clear the class byte of p (the live map: p is being freed).  Never
 * allocates.  Cannot fail. */
void leakgate_jesize__unnote(const void *p);

/* The usable size of the live object at p as jemalloc gives it: in a lean
 * process its noted class (or, for an object the wrappers never saw, the
 * class of the C library's usable size), else malloc_usable_size().
 * Never allocates.  Cannot fail. */
size_t leakgate_jesize__usable(const void *p);

/* leakgate_jesize__usable() of a lean process's live object p (not NULL),
 * inlined where the thread's last leaf covers p and its class is noted:
 * the wrappers' free path. */
static inline size_t
leakgate_jesize__usable_lean(const void *p)
{
    const struct leakgate_jesize__cache *c = &leakgate_jesize__here;
    uintptr_t a = (uintptr_t)p;

    if (c->leaf && c->index == a >> LEAKGATE_JESIZE__LEAF_SHIFT) {
        size_t usize = leakgate_jesize__decode(
            __atomic_load_n(leakgate_jesize__at(c->leaf, a), __ATOMIC_RELAXED));

        if (usize)
            return usize;
    }
    return leakgate_jesize__usable(p);
}

#endif
