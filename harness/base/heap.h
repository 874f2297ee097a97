/* SPDX-License-Identifier: MIT */
/*
 * heap: leakgate's own heap.  What leakgate allocates for itself (its
 * settings, names, verdicts, records, reports: util.c's allocator seam)
 * comes from memory of its own, so that the program's heap holds the
 * program's objects only: its layout, its growth and trimming, the pages
 * it touches are those of a plain run (a test's allocations land where
 * they would land without leakgate), and the allocation wrappers
 * (intercept.c) never see leakgate's own objects.
 *
 * One reservation of address space, carved in size classes (16-byte
 * steps up to 256 bytes, then four per power of two up to 1 MiB), each
 * object after a 16-byte header that holds its class; a freed object
 * goes on its class's list.  A request larger than the largest class, or
 * made when the reservation is used up or could not be made, is the C
 * library's (malloc): leakgate_heap__owns() tells which is which, and
 * leakgate_heap__free()/__resize() pass the C library's objects on to
 * free()/realloc().  One spin lock; fork() leaves it usable in the child.
 *
 * Not in builds with sanitizers (LEAKGATE_NO_INTERCEPT): their runtimes
 * own malloc and check leakgate's objects there.
 */
#ifndef LEAKGATE_HEAP_H
#define LEAKGATE_HEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The reservation: [start, start + size); size 0 until the first
 * allocation made it (or when it could not be made). */
struct leakgate_heap__span {
    uintptr_t start;
    uintptr_t size;
};
extern struct leakgate_heap__span leakgate_heap__span;

/* p is an object of leakgate's own heap (not the C library's). */
static inline bool
leakgate_heap__owns(const void *p)
{
    return (uintptr_t)p - leakgate_heap__span.start < leakgate_heap__span.size;
}

/* Reserve the heap's address space now (else the first allocation
 * does); once per process, later calls do nothing.  The allocation
 * wrappers call it before their first object, so that no address of the
 * heap ever held one of the program's objects. */
void leakgate_heap__reserve(void);

/* n bytes (aligned to 16), or NULL.  n == 0 is one byte. */
void *leakgate_heap__alloc(size_t n);

/* Like leakgate_heap__alloc(), zeroed; NULL also when k * n overflows. */
void *leakgate_heap__zalloc(size_t k, size_t n);

/* Resize p (NULL: allocate) to n bytes, as realloc() does; on failure p
 * is left as it was and NULL returned. */
void *leakgate_heap__resize(void *p, size_t n);

/* Free p (NULL: nothing). */
void leakgate_heap__free(void *p);

/* leakgate's own objects the C library holds (requests larger than the
 * heap's largest class, or made when the reservation was full): the
 * program's heap holds them, but they are not the program's (a
 * reachability scan skips them: alloc/reach.h).  Copies up to max of
 * their addresses to out and returns how many; *known is false when more
 * are live than the heap keeps track of or than max.  Cannot fail. */
#define LEAKGATE_HEAP_LARGE_MAX 256
size_t leakgate_heap__large_list(const void **out, size_t max, bool *known);

/*
 * Diverted: while a thread is (leakgate_heap__divert(true), nested as
 * often as needed), what a library leakgate calls allocates through
 * malloc(), calloc() or realloc(NULL, n) comes from this heap instead of
 * the program's (intercept.c): the symbolizer's libdw keeps its line
 * tables and lists across the run, and in the program's heap they would
 * be the program's objects to a reachability scan (alloc/reach.h), their
 * stale words pointing at what the program freed and allocated again.
 * free() and realloc() know this heap's objects whoever frees them.
 * Aligned requests, and requests the heap's classes cannot hold (larger
 * than 1 MiB, or the reservation used up), are the program's heap's, as
 * without the diversion: such an object is freed with free(), so it is
 * never one of the heap's large objects (leakgate_heap__large_list()).
 */
extern __thread unsigned leakgate_heap__diverted
    __attribute__((tls_model("initial-exec")));

/* k * n zeroed bytes from the heap's classes only, or NULL (too large,
 * the reservation used up, k * n overflows): never the C library's. */
void *leakgate_heap__try_zalloc(size_t k, size_t n);

/* Resize p, an object of the heap's classes (leakgate_heap__owns(p)), to
 * n bytes within them, as leakgate_heap__resize() does, or NULL with p
 * left as it was when they cannot hold n: never the C library's. */
void *leakgate_heap__try_resize(void *p, size_t n);

/* The usable bytes of p, an object of the heap's classes. */
size_t leakgate_heap__size(const void *p);

static inline void
leakgate_heap__divert(bool on)
{
    if (on)
        leakgate_heap__diverted++;
    else if (leakgate_heap__diverted > 0)
        leakgate_heap__diverted--;
}

/* bytes (rounded up to pages) of zeroed memory for a table, carved from
 * the reservation beside the heap (heap.c says why there), or NULL when
 * there is none or no room left (then mmap).  munmap() may give a carved
 * table back; its addresses are not carved again. */
void *leakgate_heap__map(size_t bytes);

#endif
