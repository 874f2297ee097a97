/* SPDX-License-Identifier: MIT */
/*
 * cunit_records: the state the CUnit glue's files share while a registry
 * runs (cunit.c wraps it, cunit_windows.c runs its trampolines,
 * cunit_replay.c replays, cunit_main.c ends the run), and the records it
 * completes as the run goes: verdicts reported on stderr and to CUnit,
 * CUnit's failure records made notes of their windows, and the finished
 * records handed to the hooks (cunit_hooks.h).  Lowest file of the glue:
 * calls only the gate.
 */
#ifndef LEAKGATE_CUNIT_RECORDS_H
#define LEAKGATE_CUNIT_RECORDS_H

#include <CUnit/CUnit.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "cunit_hooks.h"
#include "leakgate/leakgate.h"

struct wsuite {
    CU_pSuite suite;
    const char *name; /* its window's suite name (window_name()) */
    char *owned;      /* name when it is not the suite's own */
    CU_InitializeFunc init;
    CU_CleanupFunc cleanup;
    CU_SetUpFunc setup;
    CU_TearDownFunc teardown;
    CU_BOOL active;
    bool window_selected; /* "<suite>/[suite]" matches the filter */
    bool suite_scope;
    bool whole; /* scope: suite measured as one window */
    bool window_open;
    bool init_called; /* CUnit started this suite in this run */
    bool init_failed; /* ... and its init failed: CUnit skips its tests */
    /* Its shared-fixture hint, found after the replay: printed after the
     * reports of the replayed tests it is the diagnosis of. */
    const leakgate_verdict *late_hint;
};

struct wtest {
    CU_pTest test;
    const char *name; /* its window's test name (window_name()) */
    char *owned;      /* name when it is not the test's own */
    CU_TestFunc fn;
    CU_BOOL active;
    struct wsuite *ws;
    bool selected;
    bool reported; /* its record was handed to the hooks */
    unsigned int warmup;
    unsigned int repeat; /* measured runs: all but the last run here */
    bool rerun;          /* may run twice: a fast first pass */
    bool awaiting;       /* its verdict waits for the replay */
    bool suite_wait;     /* ... for its suite's end (scope: suite) */
    bool report_late;    /* replayed in its suite's cleanup: reported when
                            the suite's window has closed (its hint) */
    bool record_pending; /* failed after CUnit completed it: its failure
                            record goes into CUnit's list after the run */
};

/* A record that is over but not yet handed to the hooks. */
struct pending {
    struct wsuite *ws;
    struct wtest *wt; /* NULL: the suite's own window */
};

/* The state of the run in progress (leakgate_cunit_run()). */
struct cunit_run {
    leakgate_gate *gate;
    struct wsuite *suites;
    size_t nsuites;
    struct wtest *tests;
    size_t ntests;
    /* Where suite_of() and test_of() found the last one: CUnit runs them
     * in the registry's order, so the next one is there or just after
     * (a lookup per window, not a scan of every test). */
    size_t suite_hint;
    size_t test_hint;
    bool test_open;
    jmp_buf abort_jmp;
    int error; /* first gate error during the run, 0 if none */
    char error_text[1024];
    struct pending *pending; /* room for every test and suite */
    size_t npending;
    size_t pending_cap;
    CU_pFailureRecord seen; /* last failure record made a note */
    size_t gate_cleanups;   /* "Suite cleanup failed." made by the gate */
    size_t filtered_tests;  /* deactivated by --filter in active suites */
    size_t filtered_suites; /* suites --filter deactivated whole */
    size_t filtered_total;  /* tests --filter left out */
    bool probed;   /* the warm-up probe ran (leakgate_cunit__probe_warmup) */
    bool rescuing; /* the run stopped in a test (leakgate_cunit__rescue) */
    const leakgate_verdict
        *suite_replayed; /* reported by the late hints (cunit_replay.c) */
};

/* The test or suite window running now, for the exit and crash guards of
 * linked test binaries (names owned by the run's records). */
struct cunit_current {
    const char *suite;
    const char *test;
    bool armed; /* leakgate_cunit_main installed the guards */
    pid_t pid;  /* ... in this process (a test's forked child is not
                   guarded: its exit() is the test's business) */
    volatile unsigned long phases; /* phases started: the watchdog's clock
                                      (cunit.c) */
};

/* The run, the hooks it tells, the window running now (cunit_records.c). */
extern struct cunit_run leakgate_cunit__run;
extern struct leakgate_cunit_hooks leakgate_cunit__hooks;
extern struct cunit_current leakgate_cunit__current;

/* leakgate's own work inside a phase (a replay, the warm-up probe): the
 * watchdog (--test-timeout) does not time it as the phase's, whose clock
 * starts again after it.  _begin returns what _end takes.  Do not
 * allocate. */
const char *leakgate_cunit__own_work_begin(void);
void leakgate_cunit__own_work_end(const char *test);

/* Keep the run's first gate error (rc < 0), with what failed.  Cannot
 * fail. */
void leakgate_cunit__gate_error(int rc, const char *what);
/* Print name as leakgate_name_escape() does.  Allocates for a long name. */
void leakgate_cunit__put_printed(FILE *f, const char *name);
/* The run's wrapped suite of s, test of t; NULL when not in the run. */
struct wsuite *leakgate_cunit__suite_of(CU_pSuite s);
struct wtest *leakgate_cunit__test_of(CU_pTest t);
/* The wrapped suite and test CUnit runs now; NULL outside them. */
struct wsuite *leakgate_cunit__current_suite(void);
struct wtest *leakgate_cunit__current_test(void);
/* Report a verdict on stderr (a failed test's also to CUnit); true when it
 * failed.  NULL: false. */
struct leakgate_note;
bool leakgate_cunit__report_verdict(const leakgate_verdict *v);
/* The condition of a gate failure's CUnit record into text (size bytes):
 * the report's first line and where the rest is.  Cannot fail. */
void leakgate_cunit__failure_text(char *text,
                                  size_t size,
                                  const leakgate_verdict *v);

/* A failure the gate noted in the running test's record (a thread it left
 * neither joined nor detached): said on stderr, and recorded as a CUnit
 * failure of the test, so that CUnit's line, summary and failure list
 * carry it.  Allocates: only with recording off. */
void leakgate_cunit__note_failed(const char *suite,
                                 const char *test,
                                 const struct leakgate_note *n);
/* Report a closed window's verdict, unless it waits for its suite's end or
 * the replay (then marked on wt); true when reported and failed. */
bool leakgate_cunit__take_verdict(struct wtest *wt, const leakgate_verdict *v);
/* In a replay past its last window: write the results and _exit(0). */
void leakgate_cunit__stop_when_replayed(void);
/* A test or suite phase is about to run (the guards, the replay's beat,
 * the hooks); leakgate_cunit__phase_over() when it is done.  Does not
 * allocate. */
void leakgate_cunit__started(const struct wsuite *ws,
                             const char *test,
                             const char *phase);
void leakgate_cunit__phase_over(void);
/* A record is over (wt NULL: the suite's own); handed to the hooks at
 * the next checkpoint.  Does not allocate. */
void leakgate_cunit__push_pending(struct wsuite *ws, struct wtest *wt);
/* Hand a record to the hooks now (recording off). */
void leakgate_cunit__finish_record(struct wsuite *ws, struct wtest *wt);
/* Attach CUnit's new failure records as notes and hand the pending
 * records to the hooks.  Allocates: only with recording off. */
void leakgate_cunit__checkpoint(void);
/* repeats: `repeat:` of 2 or more applies; exact_from_start: measured
 * exactly from the start (`rerun: false` or repeats), not fast. */
bool leakgate_cunit__repeats(const struct wtest *wt);
bool leakgate_cunit__exact_from_start(const struct wtest *wt);

#endif
