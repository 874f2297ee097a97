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

/* jemalloc's usable size of malloc(n) (0 when n is beyond its largest
 * class).  Cannot fail. */
size_t leakgate_jesize__s2u(size_t n);

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

/* Note that the object at p has jemalloc usable size usize (from
 * allocation wrappers only; never allocates; a size the map cannot hold
 * is noted as unknown).  Cannot fail. */
void leakgate_jesize__note(const void *p, size_t usize);

/* The usable size of the live object at p as jemalloc gives it: in a lean
 * process its noted class (or, for an object the wrappers never saw, the
 * class of the C library's usable size), else malloc_usable_size().
 * Never allocates.  Cannot fail. */
size_t leakgate_jesize__usable(const void *p);

#endif
