/* SPDX-License-Identifier: MIT */
/*
 * reach: which of the objects a window left can the program still reach?
 *
 * A conservative scan, as a leak checker's: the roots are the writable
 * data of every loaded object, the thread-local storage of the calling
 * thread and the live part of its stack (the frames that were live when
 * the window began: the finished test's own frames are dead, whatever
 * their slots still hold); every aligned word that points into a live
 * heap object (the start or any byte of it) makes that object reachable,
 * and its words are scanned in turn.  The heap's objects come from the
 * live map (jesize.h, leakgate_jesize__live(): a replay keeps it).  What
 * no root reaches is lost; a lost object that another lost object points
 * to is lost through it (indirectly), as valgrind's "indirectly lost":
 * freeing the first would free it.  In a cycle of lost objects that
 * nothing else points to, the first the tracker lists is the lost one.
 *
 * The scan runs after leakgate_track__end(), in the process whose window
 * it classifies, before anything frees what the window left; it reads
 * memory only.  leakgate's own tables that hold program addresses are
 * not roots (leakgate_reach__not_root()), nor is the writable data of
 * leakgate's own shared object (libleakgate-preload.so under `leakgate
 * run`, a shared libleakgate); leakgate's own heap is not in
 * the live map.
 */
#ifndef LEAKGATE_REACH_H
#define LEAKGATE_REACH_H

#include <stddef.h>
#include <stdint.h>

/* What the scan found for one object. */
enum leakgate_reach_kind {
    LEAKGATE_REACH_UNKNOWN = 0, /* not classified */
    LEAKGATE_REACH_LOST,        /* nothing points to it */
    LEAKGATE_REACH_INDIRECT,    /* only other lost objects point to it */
    LEAKGATE_REACH_GLOBAL,      /* reachable, first from a global */
    LEAKGATE_REACH_TLS,         /* ... from thread-local storage */
    LEAKGATE_REACH_STACK        /* ... from a live stack frame */
};

/* The roots a reachable object was found from, as bits of a mask. */
#define LEAKGATE_REACH_ROOT_BIT(kind) (1u << ((kind)-LEAKGATE_REACH_GLOBAL))

/* The stack pointer of the calling function's caller (above its frame's
 * saved frame pointer and return address): the caller's frames stay live
 * while the calling function's callees run.  For
 * leakgate_reach__stack_from(). */
#define LEAKGATE_REACH_CALLER_SP()                                             \
    ((const char *)__builtin_frame_address(0) + 2 * sizeof(void *))

/* The calling thread's stack above frame (a frame address of the code
 * that opens the window) stays live through the window: the stack roots
 * of the next leakgate_reach__classify().  Cannot fail. */
void leakgate_reach__stack_from(const void *frame);

/* The n bytes at p are leakgate's, not the program's: never roots (a
 * table of addresses of the program's objects).  At most 8 ranges.
 * Cannot fail. */
void leakgate_reach__not_root(const void *p, size_t n);

/*
 * Classify every object the last closed window left (track.h,
 * leakgate_track__each()).  Returns 0; LEAKGATE_ESTATE when the process
 * keeps no live map, a window is open, or no stack was noted;
 * LEAKGATE_ENOMEM.  Until the next window begins,
 * leakgate_reach__kind() answers for those objects.
 */
int leakgate_reach__classify(void);

/*
 * Classify the objects kept for the rest of the run (track.h, "Keep"),
 * which each lists (leakgate_track__kept_each()): the roots as
 * leakgate_reach__classify()'s, the live stack from frame (a frame
 * address of the caller) up.  Calls fn for each kept object still live,
 * with its tag, usable bytes and kind now.  Returns 0, fn's first
 * non-zero return, or leakgate_reach__classify()'s errors.  Ends the last
 * window's classification (leakgate_reach__kind()).
 */
typedef int (*leakgate_reach_each_fn)(
    int (*fn)(uintptr_t a, uint32_t tag, uint64_t bytes, void *payload),
    void *payload);
typedef int (*leakgate_reach_kept_fn)(uint32_t tag,
                                      uint64_t bytes,
                                      enum leakgate_reach_kind kind,
                                      void *payload);
int leakgate_reach__classify_kept(const void *frame,
                                  leakgate_reach_each_fn each,
                                  leakgate_reach_kept_fn fn,
                                  void *payload);

/* The kind of the object at a, left by the last classified window
 * (UNKNOWN: not one of them, or no classification of this window).
 * Never allocates.  Cannot fail. */
enum leakgate_reach_kind leakgate_reach__kind(uintptr_t a);

#endif
