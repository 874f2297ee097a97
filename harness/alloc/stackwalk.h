/* SPDX-License-Identifier: MIT */
/*
 * stackwalk: the stack of every allocation an exact window records, for
 * jemalloc's profiler (its prof_backtrace hook; profile.c installs it).
 *
 * jemalloc's own backtrace runs libgcc's unwinder, which finds and
 * interprets the call-frame information (.eh_frame) of every frame of
 * every allocation: about 1 µs for a test's 15–20 frames.  The frames of a
 * test repeat (the same loops allocate from the same call sites), so this
 * unwinder keeps, per return address, the rule libgcc would derive there
 * (where the caller's frame, return address and frame pointer are), and
 * walks a stack with a table lookup and two loads per frame.  A rule it
 * cannot express (a signal frame, a register other than rsp and rbp as the
 * frame base, a DWARF expression) sends the whole backtrace to libgcc:
 * the result is always the one libgcc gives.  x86-64 only; elsewhere
 * leakgate_stackwalk__backtrace() is libgcc's.
 */
#ifndef LEAKGATE_STACKWALK_H
#define LEAKGATE_STACKWALK_H

#include <stdbool.h>
#include <stdint.h>

/*
 * The caller's stack: vec[0] is the return address into the function that
 * called this one, vec[1] its caller's, and so on, the way
 * _Unwind_Backtrace reports them (_Unwind_GetIP), at most max_len.  *len
 * is set to the count.  Allocates nothing, takes no lock of its own; safe
 * from any thread.  jemalloc's prof_backtrace_hook_t signature.
 */
void leakgate_stackwalk__backtrace(void **vec, unsigned *len, unsigned max_len);

/* What of a stack a caller wants: the leading return addresses in
 * [skip_begin, skip_end) dropped (its own frames), and none above the
 * first in [stop_begin, stop_end), which is kept (a test runner's frame:
 * above it the stack is the same for every allocation of a window, and
 * the walk need not read it).  Empty ranges: none. */
struct leakgate_stackwalk_bounds {
    uintptr_t skip_begin, skip_end;
    uintptr_t stop_begin, stop_end;
};

/* A frame's registers, for a walk that starts there: the instruction
 * (any in the function's body), the stack and the frame pointer at it. */
struct leakgate_stackwalk_regs {
    uintptr_t ip, sp, bp;
};

/* The registers of the function this expands in, at this point (inlined
 * code: of the function it is inlined into).  x86-64; elsewhere zeros. */
#if defined(__x86_64__)
#define LEAKGATE_STACKWALK_HERE(r)                                             \
    __asm__ volatile("movq %%rbp, %0\n\t"                                      \
                     "movq %%rsp, %1\n\t"                                      \
                     "leaq 0(%%rip), %2"                                       \
                     : "=r"((r).bp), "=r"((r).sp), "=r"((r).ip))
#else
#define LEAKGATE_STACKWALK_HERE(r) ((r).ip = (r).sp = (r).bp = 0)
#endif

/*
 * As leakgate_stackwalk__backtrace(), within b, from the frame at r (a
 * frame of a caller of this function, still live; NULL: this function's
 * caller): vec[0] is that frame's return address.  A walk that starts at
 * the frame of the allocation wrapper reads none of the frames between
 * it and here.
 */
void leakgate_stackwalk__backtrace_in(void **vec,
                                      unsigned *len,
                                      unsigned max_len,
                                      const struct leakgate_stackwalk_bounds *b,
                                      const struct leakgate_stackwalk_regs *r);

/* Whether the fast walk exists on this machine (x86-64). */
bool leakgate_stackwalk__fast_available(void);

enum leakgate_stackwalk_mode {
    LEAKGATE_STACKWALK_FAST,   /* the table walk, libgcc when it cannot */
    LEAKGATE_STACKWALK_LIBGCC, /* libgcc every time (LEAKGATE_UNWIND) */
    LEAKGATE_STACKWALK_CHECK,  /* also libgcc every time; count differences */
    LEAKGATE_STACKWALK_CHECK_ABORT, /* ... and abort at the first, naming it */
};

/* Set the mode (FAST at start).  Not thread-safe against a walk in
 * progress: set it before windows open. */
void leakgate_stackwalk__set_mode(enum leakgate_stackwalk_mode mode);

struct leakgate_stackwalk_stats {
    uint64_t fast;     /* backtraces the table walk gave (CHECK modes) */
    uint64_t fallback; /* backtraces libgcc gave (a frame it cannot do) */
    uint64_t checked;  /* backtraces compared with libgcc (CHECK modes) */
    uint64_t differ;   /* ... that differed (libgcc's result was kept) */
    uint64_t rules;    /* return addresses whose rule is in the table */
};

void leakgate_stackwalk__stats(struct leakgate_stackwalk_stats *out);

/* For tests: make the walk report a wrong return address at frame
 * `frame` (0 = off), so that the check must fire. */
void leakgate_stackwalk__test_skew(unsigned frame);

#endif
