/* SPDX-License-Identifier: MIT */
/*
 * jesize: jemalloc's size classes, and the class map of a lean process
 * (jesize.h).
 *
 * The map: one byte per 16 bytes of address space (the C library's
 * objects are 16-byte aligned), in leaves of 1 MiB covering 16 MiB each,
 * mapped without backing on first use and found through top-level
 * entries (a small hashed table, then an array of 2^23: entry_for()).  A
 * byte's low 7 bits hold a class as (m >> 1) << 5 | (d - 2) for usize =
 * m * 2^d (m odd, at most 7; d from 3 to 33: up to 56 GiB); 0 is unknown.
 * Its high bit is the tracker's (LEAKGATE_JESIZE__MARK: allocated in the
 * open window, track.c).  An object's byte is written by the thread that
 * allocated it, before the pointer is handed out, and by the thread that
 * frees it; relaxed atomic byte stores (plain moves), as the tracker's
 * end of a window may read the map meanwhile.  Nothing here calls malloc.
 */
#include "jesize.h"

#include <malloc.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "util.h"

/* jemalloc 5.3 on x86-64 Linux: LG_QUANTUM 4, SC_LG_NGROUP 2, tiny
 * classes down to 8 bytes (leakgate_jesize__class_of(), jesize.h), 4 KiB
 * pages, small classes up to 14 KiB. */
#define PAGE ((size_t)4096)
#define SMALL_MAXCLASS ((size_t)14336)
#define LARGE_MINCLASS ((size_t)16384)
#define LARGE_MAXCLASS ((size_t)7 << 60)

size_t
leakgate_jesize__s2u(size_t n)
{
    return leakgate_jesize__class_of(n);
}

size_t
leakgate_jesize__sa2u(size_t n, size_t align)
{
    size_t usize;

    if (align == 0 || (align & (align - 1)) != 0)
        return 0;
    if (n <= SMALL_MAXCLASS && align <= PAGE) {
        size_t up = (n + align - 1) & ~(align - 1);

        usize = up < n ? 0 : leakgate_jesize__s2u(up);
        if (usize != 0 && usize < LARGE_MINCLASS)
            return usize;
    }
    if (align > LARGE_MAXCLASS)
        return 0;
    if (n <= LARGE_MINCLASS)
        return LARGE_MINCLASS;
    usize = leakgate_jesize__s2u(n);
    return usize < n ? 0 : usize;
}

#define ADDR_BITS 47
#define LEAF_SHIFT LEAKGATE_JESIZE__LEAF_SHIFT
#define GRAIN_SHIFT LEAKGATE_JESIZE__GRAIN_SHIFT
#define LEAF_BYTES ((size_t)1 << (LEAF_SHIFT - GRAIN_SHIFT))
#define NLEAVES ((size_t)1 << (ADDR_BITS - LEAF_SHIFT))

typedef _Atomic(unsigned char *) leaf_slot;
/* A top-level entry: the class leaf of its 2^LEAF_SHIFT bytes of
 * addresses, and the tracker's leaf of the same bytes (track.c, through
 * leakgate_jesize__tracker_slot()): one entry for both, so that a process
 * touches one page of entries for its heap, not two. */
struct top_entry {
    leaf_slot classes;
    _Atomic(void *) tracker;
};

/* The entries: first a small table in static memory, found by a leaf's
 * index through util.c's address slots (a process uses a few dozen
 * leaves: one a 16 MiB of heap, one a region of mmap; the slots' values
 * are unused, the entry at a slot's position is the leaf's); then, for an
 * index whose probe finds no free slot, the large array of 2^23, indexed
 * directly (128 MiB reserved, only touched pages cost memory).  The large
 * array alone costs every process a page of it, and a page-table page,
 * far from everything else it touches.  A slot is never emptied, so an
 * index is in the first table or in the large array, never both. */
#define FIRST_ENTRIES 128 /* a power of two */
static struct leakgate_util__addr_slot first_keys[FIRST_ENTRIES];
static struct top_entry first[FIRST_ENTRIES];
static _Atomic(struct top_entry *) top;

/* The large array, mapped when create (NULL when it is not, or cannot
 * be). */
static struct top_entry *
top_array(bool create)
{
    struct top_entry *t = atomic_load_explicit(&top, memory_order_acquire);
    struct top_entry *none = NULL;

    if (t || !create)
        return t;
    t = leakgate_util__map_zeroed(NLEAVES * sizeof *t, true);
    if (!t)
        return NULL;
    if (!atomic_compare_exchange_strong(&top, &none, t)) {
        munmap(t, NLEAVES * sizeof *t);
        t = none;
    }
    return t;
}

/* The entry of leaf index i, made when create (NULL when it is not, or
 * cannot be). */
static struct top_entry *
entry_for(uintptr_t i, bool create)
{
    struct top_entry *t;
    size_t at;

    switch (leakgate_util__addr_slot(first_keys, FIRST_ENTRIES, i + 1, create,
                                     &at)) {
    case LEAKGATE_UTIL__ADDR_THERE:
    case LEAKGATE_UTIL__ADDR_TAKEN: return &first[at];
    case LEAKGATE_UTIL__ADDR_ABSENT: return NULL;
    default: break; /* full: the large array */
    }
    t = top_array(create);
    return t ? &t[i] : NULL;
}

_Atomic(void *) *
leakgate_jesize__tracker_slot(uintptr_t a, bool create)
{
    struct top_entry *e;

    if (a >> ADDR_BITS || !(e = entry_for(a >> LEAF_SHIFT, create)))
        return NULL;
    return &e->tracker;
}
atomic_bool leakgate_jesize__is_lean;

uint32_t leakgate_jesize__small_class[LEAKGATE_JESIZE__SMALL / 8 + 1];
uint64_t leakgate_jesize__byte_size[256];

void
leakgate_jesize__set_lean(void)
{
    for (size_t i = 0; i <= LEAKGATE_JESIZE__SMALL / 8; i++) {
        size_t usize = leakgate_jesize__class_of(i * 8);

        leakgate_jesize__small_class[i] =
            (uint32_t)usize << 8 | leakgate_jesize__encode(usize);
    }
    /* Marked bytes (the tracker's bit) have their class's size too. */
    for (unsigned int c = 0; c < 256; c++)
        leakgate_jesize__byte_size[c] =
            leakgate_jesize__decode((unsigned char)c);
    atomic_store(&leakgate_jesize__is_lean, true);
}

/* Per thread: the leaf it last found (jesize.h; leaves are never
 * unmapped). */
__thread struct leakgate_jesize__cache leakgate_jesize__here
    __attribute__((tls_model("initial-exec")));
#define jc leakgate_jesize__here

/* byte_for()'s lookup through the top-level entries. */
static unsigned char *
byte_slow(uintptr_t a, bool create)
{
    struct top_entry *e;
    leaf_slot *slot;
    unsigned char *leaf, *expected = NULL;

    if (a >> ADDR_BITS || !(e = entry_for(a >> LEAF_SHIFT, create)))
        return NULL;
    slot = &e->classes;
    leaf = atomic_load_explicit(slot, memory_order_acquire);
    if (!leaf && create) {
        leaf = leakgate_util__map_zeroed(LEAF_BYTES, true);
        if (!leaf)
            return NULL;
        if (!atomic_compare_exchange_strong(slot, &expected, leaf)) {
            munmap(leaf, LEAF_BYTES);
            leaf = expected;
        }
    }
    if (!leaf)
        return NULL;
    jc.index = a >> LEAF_SHIFT;
    jc.leaf = leaf;
    return leakgate_jesize__at(leaf, a);
}

/* The byte of address a, its leaf mapped when create; NULL when it cannot
 * be (or a is outside the map). */
static inline unsigned char *
byte_for(uintptr_t a, bool create)
{
    if (jc.leaf && jc.index == a >> LEAF_SHIFT)
        return leakgate_jesize__at(jc.leaf, a);
    return byte_slow(a, create);
}

#define encode leakgate_jesize__encode
#define decode leakgate_jesize__decode

unsigned char *
leakgate_jesize__byte(uintptr_t a, bool create)
{
    return byte_for(a, create);
}

unsigned char *
leakgate_jesize__leaf(uintptr_t a)
{
    /* byte_for() leaves a's leaf in this thread's cache when it finds it. */
    return byte_for(a, false) ? jc.leaf : NULL;
}

void
leakgate_jesize__note_byte(const void *p, unsigned char c)
{
    unsigned char *b = byte_for((uintptr_t)p, true);

    if (b)
        __atomic_store_n(b, c, __ATOMIC_RELAXED);
}

void
leakgate_jesize__note(const void *p, size_t usize)
{
    leakgate_jesize__note_byte(p, encode(usize));
}

atomic_bool leakgate_jesize__live_map;

void
leakgate_jesize__unnote(const void *p)
{
    unsigned char *b = byte_for((uintptr_t)p, false);

    if (b)
        __atomic_store_n(b, 0, __ATOMIC_RELAXED);
}

size_t
leakgate_jesize__usable(const void *p)
{
    unsigned char *b;
    size_t usize;
    void *q;

    if (!p)
        return 0;
    memcpy(&q, &p, sizeof q); /* malloc_usable_size takes no const */
    if (!leakgate_jesize__lean())
        return malloc_usable_size(q);
    b = byte_for((uintptr_t)p, false);
    usize = b ? decode(__atomic_load_n(b, __ATOMIC_RELAXED)) : 0;
    return usize ? usize : leakgate_jesize__s2u(malloc_usable_size(q));
}
