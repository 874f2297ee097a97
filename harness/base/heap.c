/* SPDX-License-Identifier: MIT */
/*
 * heap: leakgate's own heap (heap.h says why).
 */
#include "heap.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct leakgate_heap__span leakgate_heap__span;
__thread unsigned leakgate_heap__diverted
    __attribute__((tls_model("initial-exec")));

#define HEADER ((size_t)16) /* keeps objects aligned to 16 */
#define SMALL_STEP_MAX 256  /* 16-byte steps up to here */
#define CLASSES 65          /* 1..64; 0 unused */
#define LARGEST ((size_t)1 << 20)
#define MAGIC UINT32_C(0x4c4b4748) /* "LKGH" */

struct header {
    uint32_t cls;
    uint32_t magic;
    uint64_t unused;
};
_Static_assert(sizeof(struct header) == HEADER, "a header keeps alignment");

/* The reservation is leakgate_heap__span (size 0: none). */
static struct {
    atomic_flag lock;
    atomic_bool tried;
    size_t top; /* bytes carved */
    void *free_list[CLASSES];
} h = {.lock = ATOMIC_FLAG_INIT};

/* The class of an n-byte request, 1 <= n <= LARGEST. */
static unsigned
class_of(size_t n)
{
    unsigned lg;

    if (n <= SMALL_STEP_MAX)
        return (unsigned)((n + 15) >> 4);
    lg = 63u - (unsigned)__builtin_clzll((unsigned long long)(n - 1));
    return 17u + (lg - 8u) * 4u + (unsigned)((n - 1) >> (lg - 2) & 3);
}

/* The bytes an object of class c has. */
static size_t
class_size(unsigned c)
{
    unsigned lg, q;

    if (c <= 16)
        return (size_t)c << 4;
    lg = 8u + (c - 17u) / 4u;
    q = (c - 17u) % 4u;
    return (size_t)(5u + q) << (lg - 2u);
}

static void
lock(void)
{
    while (atomic_flag_test_and_set_explicit(&h.lock, memory_order_acquire))
        ;
}

static void
unlock(void)
{
    atomic_flag_clear_explicit(&h.lock, memory_order_release);
}

/* The reservation's layout: the tables' part below the heap, the two
 * meeting at a point 1.5 MiB into a 2 MiB-aligned range.  The tables are
 * carved downward from there and the heap upward, so that a process's
 * first table pages (the class map's and the tracker's first leaves, 1.25
 * MiB) and its heap's first objects share one range of addresses that one
 * page-table page maps: each range more costs a process a page-table page
 * and, where page tables are shadowed (a virtual machine), ~30-60 us at
 * its first touch, as much as a dozen ordinary page faults. */
#define RANGE ((size_t)2 << 20)
#define MEET ((size_t)3 << 19) /* 1.5 MiB */

static struct {
    uintptr_t start; /* the tables' part: [start, end) */
    uintptr_t end;
    atomic_size_t used; /* carved, downward from end */
} maps;

/* Address space only (MAP_NORESERVE): a page costs memory once written.
 * The smaller one where the larger cannot be had (an address-space limit,
 * strict overcommit); with neither, the C library's heap and mmap.  None
 * under the sanitizers (heap.h): every function below then passes on to
 * the C library. */
void
leakgate_heap__reserve(void)
{
    bool expected = false;

    if (!atomic_compare_exchange_strong(&h.tried, &expected, true))
        return;
#ifndef LEAKGATE_NO_INTERCEPT
    /* {heap, tables} */
    static const size_t sizes[][2] = {{(size_t)1 << 30, (size_t)512 << 20},
                                      {(size_t)64 << 20, (size_t)64 << 20}};

    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t all = sizes[i][1] + 2 * RANGE + sizes[i][0];
        void *p = mmap(NULL, all, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        uintptr_t meet;

        if (p == MAP_FAILED)
            continue;
        /* A fork made while another thread held the lock would leave the
         * child's copy held by nobody: it is taken before the fork and
         * released on both sides. */
        if (pthread_atfork(lock, unlock, unlock) != 0) {
            (void)munmap(p, all);
            return;
        }
        meet = (((uintptr_t)p + sizes[i][1] + RANGE - 1) & ~(RANGE - 1)) + MEET;
        maps.start = (uintptr_t)p;
        maps.end = meet;
        leakgate_heap__span.start = meet;
        atomic_thread_fence(memory_order_release);
        leakgate_heap__span.size = sizes[i][0];
        return;
    }
#endif
}

/* The reservation is made (reserved now if it was not tried yet). */
static bool
reserved(void)
{
    if (!atomic_load_explicit(&h.tried, memory_order_acquire))
        leakgate_heap__reserve();
    return leakgate_heap__span.size != 0;
}

void *
leakgate_heap__map(size_t bytes)
{
    size_t used, n = (bytes + 4095) & ~(size_t)4095;

    if (n < bytes || !reserved())
        return NULL;
    used = atomic_load_explicit(&maps.used, memory_order_relaxed);
    do {
        if (n > maps.end - maps.start - used)
            return NULL;
    } while (!atomic_compare_exchange_weak(&maps.used, &used, used + n));
    return (void *)(maps.end - used - n); /* never written: zeros */
}

/* An object of class c from its list or carved anew (*fresh: never used,
 * zero); NULL when the reservation is used up.  With the lock held. */
static void *
take(unsigned c, bool *fresh)
{
    struct header *o;
    size_t need = HEADER + class_size(c);

    if (h.free_list[c]) {
        void *p = h.free_list[c];

        memcpy(&h.free_list[c], p, sizeof(void *));
        *fresh = false;
        return p;
    }
    if (need > leakgate_heap__span.size - h.top)
        return NULL;
    o = (struct header *)(void *)(leakgate_heap__span.start + h.top);
    h.top += need;
    o->cls = c;
    o->magic = MAGIC;
    *fresh = true;
    return (char *)o + HEADER;
}

/* leakgate's live objects that the C library holds: a small set (under
 * the lock), for the reachability scan; more than it holds and it says
 * so (large.overflow, until none is live). */
#define LARGE_SLOTS LEAKGATE_HEAP_LARGE_MAX
static struct {
    void *p[LARGE_SLOTS];
    size_t n;
    size_t overflow; /* live ones not in p[] */
} large;

static void
large_add(void *p)
{
    lock();
    if (large.n < LARGE_SLOTS)
        large.p[large.n++] = p;
    else
        large.overflow++;
    unlock();
}

static void
large_remove(void *p)
{
    size_t i;

    lock();
    for (i = 0; i < large.n && large.p[i] != p; i++)
        ;
    if (i < large.n)
        large.p[i] = large.p[--large.n];
    else if (large.overflow > 0)
        large.overflow--;
    unlock();
}

size_t
leakgate_heap__large_list(const void **out, size_t max, bool *known)
{
    size_t n;

    lock();
    n = large.n < max ? large.n : max;
    for (size_t i = 0; i < n; i++)
        out[i] = large.p[i];
    *known = large.overflow == 0 && large.n <= max;
    unlock();
    return n;
}

/* n bytes from the classes, else (fall_back) the C library's. */
static void *
alloc(size_t n, bool *fresh, bool fall_back)
{
    void *p = NULL;

    *fresh = false;
    if (n == 0)
        n = 1;
    if (n <= LARGEST && reserved()) {
        lock();
        p = take(class_of(n), fresh);
        unlock();
    }
    if (!p && fall_back) {
        p = malloc(n);
        if (p)
            large_add(p);
    }
    return p;
}

/* k * n zeroed bytes (alloc()); NULL also when k * n overflows. */
static void *
zalloc(size_t k, size_t n, bool fall_back)
{
    bool fresh;
    void *p;

    if (n && k > SIZE_MAX / n)
        return NULL;
    p = alloc(k * n, &fresh, fall_back);
    if (p && !fresh)
        memset(p, 0, k * n);
    return p;
}

static const struct header *
header_of(const void *p)
{
    return (const struct header *)(const void *)((const char *)p - HEADER);
}

void *
leakgate_heap__alloc(size_t n)
{
    bool fresh;

    return alloc(n, &fresh, true);
}

void *
leakgate_heap__zalloc(size_t k, size_t n)
{
    return zalloc(k, n, true);
}

void *
leakgate_heap__try_zalloc(size_t k, size_t n)
{
    return zalloc(k, n, false);
}

void
leakgate_heap__free(void *p)
{
    unsigned c;

    if (!p)
        return;
    if (!leakgate_heap__owns(p)) {
        large_remove(p);
        free(p);
        return;
    }
    c = header_of(p)->cls;
    if (header_of(p)->magic != MAGIC || c == 0 || c >= CLASSES)
        abort(); /* not an object of this heap: memory is corrupt */
    lock();
    memcpy(p, &h.free_list[c], sizeof(void *));
    h.free_list[c] = p;
    unlock();
}

/* Resize p, an object of the classes, to n bytes (resize()). */
static void *
resize_owned(void *p, size_t n, bool fall_back)
{
    size_t have = class_size(header_of(p)->cls);
    bool fresh;
    void *q;

    if (n == 0)
        n = 1;
    /* Grown past its class, or shrunk to half of it or less (a buffer's
     * text that is kept): another object; else the same one. */
    if (n <= have && n > have / 2)
        return p;
    if (!(q = alloc(n, &fresh, fall_back)))
        return n <= have ? p : NULL;
    memcpy(q, p, n < have ? n : have);
    leakgate_heap__free(p);
    return q;
}

void *
leakgate_heap__resize(void *p, size_t n)
{
    void *q;

    if (!p)
        return leakgate_heap__alloc(n);
    if (!leakgate_heap__owns(p)) {
        /* Out of the set first: once realloc() returned, p may be the
         * program's (back in on failure, when it is still ours). */
        large_remove(p);
        q = realloc(p, n ? n : 1);
        large_add(q ? q : p);
        return q;
    }
    return resize_owned(p, n, true);
}

void *
leakgate_heap__try_resize(void *p, size_t n)
{
    return resize_owned(p, n, false);
}

size_t
leakgate_heap__size(const void *p)
{
    return class_size(header_of(p)->cls);
}
