/* SPDX-License-Identifier: MIT */
/*
 * reach_stop: the process's other threads held still while a
 * reachability scan reads memory (reach.h), their registers and stacks
 * its roots.
 *
 * Each other thread is sent a real-time signal (SIGRTMAX - 4, queued with
 * a value that says it is leakgate's) whose handler saves the thread's
 * registers, its stack pointer and its thread pointer, and waits on a
 * futex until the scan is over.  A thread that cannot be stopped (it
 * blocks the signal, it does not answer within a second) or one started
 * meanwhile makes the stop fail: every thread goes on, and the scan says
 * nothing.  A program with a handler of its own for that signal is never
 * sent it.  Nothing here allocates or takes a lock that a stopped thread
 * may hold: the scan runs with the other threads stopped anywhere, in
 * malloc too.  x86-64 Linux only (elsewhere the stop fails).
 */
#ifndef LEAKGATE_REACH_STOP_H
#define LEAKGATE_REACH_STOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One range of a stopped thread's roots: its saved registers, its stack
 * (from its stack pointer, less the red zone, to the top of the mapping
 * that holds it, or to its static TLS), its static TLS and descriptor. */
struct leakgate_reach_stop_range {
    uintptr_t lo, hi;
    int tls;  /* 0: stack or registers; 1: thread-local storage */
    int regs; /* the saved registers, in leakgate's own table (never
                 excluded from the roots as the rest of it is) */
};

/*
 * Stop every other thread of the process; fill out[0..*n) (at most max)
 * with their root ranges.  tls_below: how far below a thread pointer the
 * static TLS begins (the calling thread's).  Returns 0 (threads stopped
 * until leakgate_reach__resume_others()), or -1 when they could not all
 * be stopped or described (none is stopped then).
 */
int leakgate_reach__stop_others(struct leakgate_reach_stop_range *out,
                                size_t max,
                                size_t *n,
                                uintptr_t tls_below);

/* The process runs no thread but the caller (its tasks counted; false
 * when they cannot be).  Only system calls.  Cannot fail. */
bool leakgate_reach__no_other_thread(void);

/* Let the stopped threads go on, and wait until they have.  Cannot
 * fail. */
void leakgate_reach__resume_others(void);

/* Where the stopped threads' saved registers are kept (*p, *n bytes):
 * leakgate's, never a root of the globals' kind. */
void leakgate_reach__stop_table(const void **p, size_t *n);

#endif
