/* SPDX-License-Identifier: MIT */
/*
 * cunit_hooks: what the CUnit glue (cunit.c) tells an observer while it
 * runs a registry, for `leakgate run`'s interposer (preload.c), which
 * streams each finished record to the `leakgate` process so that verdicts
 * survive a program that crashes or exits in a later test.
 *
 * Order for one suite: started(init), started(test) for each test,
 * started(cleanup); finished() for a test once its window is closed and
 * CUnit's failure records of it are attached, which is at the next
 * trampoline (before the next started()) or at the end of the run; the
 * suite's own record after its cleanup (or its failed init) the same way.
 * A test whose verdict waits for a replay is finished (not judged, "a
 * replay measures it") and revised() once the replay has measured it.
 */
#ifndef LEAKGATE_CUNIT_HOOKS_H
#define LEAKGATE_CUNIT_HOOKS_H

#include "leakgate/leakgate.h"

struct leakgate_cunit_hooks {
    /*
     * A test (phase "test"), or a suite's init or cleanup (phase "init" /
     * "cleanup", test "[suite]"), is about to run.  May be called while a
     * window records (a `scope: suite` suite): must not allocate.
     */
    void (*started)(const char *suite,
                    const char *test,
                    const char *phase,
                    void *payload);
    /*
     * The record of suite/test in the gate is complete: its verdict (or,
     * for a test without a window, its note-only record) will not change
     * during this run.  Called with recording off.
     */
    void (*finished)(const char *suite, const char *test, void *payload);
    /* The record of suite/test, finished before, has a new verdict (a
     * replay measured it).  Called with recording off.  May be NULL. */
    void (*revised)(const char *suite, const char *test, void *payload);
    void *payload;
    /* LD_PRELOAD for a replay of the program (replay.h); NULL: keep the
     * environment as it is. */
    const char *replay_preload;
    /* The run is stopped (a test ran longer than --test-timeout): why, a
     * line; the process ends right after (exit 3).  Called from a signal
     * handler, best effort.  May be NULL. */
    void (*stopped)(const char *why, void *payload);
    /* suite/test will run (selected and active), told for each before the
     * run starts, so that an observer that outlives the program can list
     * the tests it never reached.  Not in a replay.  May be NULL. */
    void (*planned)(const char *suite, const char *test, void *payload);
};

/* Install hooks for later leakgate_cunit_run() calls (copied); NULL
 * removes them.  Cannot fail. */
void leakgate_cunit__set_hooks(const struct leakgate_cunit_hooks *hooks);

/* The program is about to die (a fatal signal, exit() in a test): measure
 * the tests still waiting for a replay now (the replay stops after the
 * last of them, before the fatal point) and tell the hooks.  Best effort:
 * it allocates.  Does nothing outside a run. */
void leakgate_cunit__rescue(void);

#endif
