/* SPDX-License-Identifier: MIT */
/*
 * cunit_windows: the trampolines the CUnit glue puts in a registry
 * (cunit.c wraps it, leakgate_cunit__install()), each around the user's
 * function:
 *
 *   init      begin "<suite>/[suite]", run init, pause it
 *   setUp     warm-up runs, then begin "<suite>/<test>", run setUp
 *   test      run the test; a fatal assertion's longjmp lands here, so
 *             tearDown still runs and the window is closed normally
 *   tearDown  run tearDown, end the window, report a failure to CUnit
 *   cleanup   resume the suite window, run cleanup, end it
 *
 * With `scope: suite` each test's window is held (leakgate_gate_begin_held):
 * what it leaves is judged after the suite's cleanup, on what is still
 * live then.  Without leakgate's allocation wrappers such a suite is one
 * window from init to cleanup instead ("whole"), and its tests are not
 * windows of their own.  Trampolines carry the "leakgate_" prefix
 * although static: the report trims every stack at the first leakgate_
 * frame, so they must be recognisable by name.  Each trampoline that runs
 * with recording off is a checkpoint (cunit_records.h).
 */
#include "cunit_windows.h"

#include <CUnit/CUnit.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "cunit_records.h"
#include "gate.h"
#include "reach.h"
#include "cunit_replay.h"

#define SUITE_WINDOW "[suite]"

/* The trampolines that call the user's code live in one section: the
 * allocation stacks leakgate records end at the first frame in it (what
 * is above it is the same for every allocation of a window). */
#define RUNNER __attribute__((section("leakgate_runner"), noinline))

static struct cunit_run *const run = &leakgate_cunit__run;
static const struct leakgate_cunit_hooks *const hooks = &leakgate_cunit__hooks;

RUNNER static void
leakgate_cunit_run_protected(CU_TestFunc fn)
{
    CU_pTest t = CU_get_current_test();
    jmp_buf *cunit_jmp = t->pJumpBuf;

    t->pJumpBuf = &run->abort_jmp;
    if (setjmp(run->abort_jmp) == 0)
        fn();
    else if (run->test_open)
        leakgate_gate_mark_aborted(run->gate,
                                   "the test stopped at a fatal assertion; "
                                   "memory it would have freed afterwards "
                                   "is expected to remain");
    t->pJumpBuf = cunit_jmp;
}

RUNNER static void
leakgate_cunit_test(void)
{
    struct wtest *wt = leakgate_cunit__current_test();

    if (wt && !leakgate_cunit__repeats(wt))
        leakgate_cunit_run_protected(wt->fn);
}

/* One run of the test: setUp, the test, tearDown. */
RUNNER static void
leakgate_cunit_warmup_once(struct wtest *wt)
{
    if (wt->ws->setup)
        wt->ws->setup();
    leakgate_cunit_run_protected(wt->fn);
    if (wt->ws->teardown)
        wt->ws->teardown();
}

RUNNER static void
leakgate_cunit_warmup(struct wtest *wt)
{
    for (unsigned int i = 0; i < wt->warmup; i++)
        leakgate_cunit_warmup_once(wt);
}

/*
 * `repeat: N` (N >= 2): all N measured runs (setUp, test, tearDown) happen
 * here, separated by next_run, so that every run allocates through the
 * same call path and its stacks compare equal across runs.  CUnit's own
 * calls of the test and of tearDown then only close the window.
 */
RUNNER static void
leakgate_cunit_repeat(struct wtest *wt)
{
    for (unsigned int i = 1; i <= wt->repeat; i++) {
        if (wt->ws->setup)
            wt->ws->setup();
        leakgate_cunit_run_protected(wt->fn);
        if (wt->ws->teardown)
            wt->ws->teardown();
        if (i < wt->repeat && run->test_open)
            leakgate_cunit__gate_error(leakgate_gate_next_run(run->gate),
                                       "starting a run");
    }
}

/* The token of wt's threads (intercept.h): its place in the run, from 1. */
static uint32_t
thread_token(const struct wtest *wt)
{
    return (uint32_t)(wt - run->tests) + 1;
}

RUNNER static void
leakgate_cunit_setup(void)
{
    struct wtest *wt = leakgate_cunit__current_test();
    const char *suite, *test;
    int rc;

    if (!wt)
        return;
    suite = wt->ws->name;
    test = wt->name;
    /* A whole `scope: suite` window records here: no checkpoint. */
    if (!wt->ws->whole)
        leakgate_cunit__checkpoint();
    leakgate_cunit__started(wt->ws, test, "test");
    /* The joinable threads it creates are its own to join or detach. */
    if (!wt->ws->whole)
        leakgate_gate__own_threads(run->gate, thread_token(wt));
    if (!wt->ws->whole) {
        leakgate_cunit_warmup(wt);
        /* A replay measures only the tests it replays. */
        if (leakgate_gate_measures(run->gate, suite, test)) {
            if (wt->ws->suite_scope && !leakgate_gate_in_replay(run->gate))
                rc = leakgate_gate_begin_held(run->gate, suite, test);
            else if (!leakgate_cunit__exact_from_start(wt))
                rc = leakgate_gate_begin_fast(run->gate, suite, test);
            else
                rc = leakgate_gate_begin(run->gate, suite, test);
            /* CUnit calls the test where it called this setUp: the
             * test's frames are below its caller's stack pointer, dead
             * when it returns (reach.h). */
            if (rc == 0)
                leakgate_reach__stack_from(LEAKGATE_REACH_CALLER_SP());
            leakgate_cunit__gate_error(rc, "opening a test window");
            run->test_open = rc == 0;
        }
    }
    if (leakgate_cunit__repeats(wt)) {
        leakgate_cunit_repeat(wt);
        return;
    }
    if (wt->ws->setup)
        wt->ws->setup();
}

/* CUnit's failure records made since the last checkpoint are CUnit's
 * memory: exact windows exclude libcunit's stacks, fast windows must be
 * told.  Returns true when one of them is a failure of test t. */
static bool
exclude_records(CU_pTest t)
{
    CU_pFailureRecord f = run->seen ? run->seen->pNext : CU_get_failure_list();
    bool failed = false;

    for (; f; f = f->pNext) {
        leakgate_gate_exclude_object(run->gate, f);
        leakgate_gate_exclude_object(run->gate, f->strFileName);
        leakgate_gate_exclude_object(run->gate, f->strCondition);
        failed |= f->pTest == t;
    }
    return failed;
}

static void
close_test_window(struct wtest *wt)
{
    const leakgate_verdict *v = NULL;
    bool failed = wt && exclude_records(wt->test);
    int rc = leakgate_gate_end(run->gate, 1, &v);

    if (rc != LEAKGATE_GATE_RERUN) {
        leakgate_cunit__gate_error(rc, "closing a window");
        leakgate_cunit__take_verdict(wt, v);
        /* A replay answers the warm-up probe's question here: a copy of
         * it runs the test once more (leakgate_gate_probe_copy()). */
        if (wt && rc == 0 && leakgate_gate_probe_copy(run->gate, v) == 1) {
            run->test_open = true; /* a fatal assertion is marked */
            leakgate_cunit_warmup_once(wt);
            run->test_open = false;
            (void)exclude_records(wt->test);
            leakgate_gate_probe_copy_end(run->gate);
            _exit(1);
        }
    } else if (wt) {
        /* A test runs once per process, as in a plain run: what its fast
         * first pass left is measured exactly by a replay in a fresh
         * process after the run-> */
        leakgate_cunit__gate_error(
            leakgate_gate_decline_rerun(
                run->gate, failed ? "it failed an assertion; a replay "
                                    "in a fresh process measures it"
                                  : "a replay in a fresh process "
                                    "measures it exactly"),
            "recording a test");
        wt->awaiting = true;
        /* Said at the test's own line, which CUnit ends with "passed":
         * its verdict comes with the replay, after the last test. */
        fputs("\nleakgate: ", stderr);
        leakgate_cunit__put_printed(stderr, wt->ws->name);
        fputc('/', stderr);
        leakgate_cunit__put_printed(stderr, wt->name);
        fputs(": its fast first pass found memory it left (or a peak over "
              "its limit); a replay after the last test measures it exactly "
              "and gives its verdict then\n",
              stderr);
    }
}

RUNNER static void
leakgate_cunit_teardown(void)
{
    struct wtest *wt = leakgate_cunit__current_test();

    if (wt && wt->ws->teardown && !leakgate_cunit__repeats(wt))
        wt->ws->teardown();
    /* Its threads are orphans from now on, before its window closes:
     * what they allocate is never outside both (intercept.c). */
    if (wt && !wt->ws->whole)
        leakgate_gate__own_threads(run->gate, 0);
    if (run->test_open) {
        run->test_open = false;
        close_test_window(wt);
        leakgate_cunit__stop_when_replayed();
    }
    /* A thread it left neither joined nor detached fails it, in CUnit's
     * records too (its window is closed: the note may allocate). */
    if (wt && !wt->ws->whole) {
        const struct leakgate_note *n;

        n = leakgate_gate__note_unjoined(run->gate, wt->ws->name, wt->name,
                                         thread_token(wt));
        if (n)
            leakgate_cunit__note_failed(wt->ws->name, wt->name, n);
    }
    if (wt)
        leakgate_cunit__push_pending(wt->ws, wt);
    leakgate_cunit__phase_over();
}

/* Close a suite's window (cleanup has run); returns true when its verdict
 * failed.  A lean process's suite window whose init or cleanup left
 * memory (LEAKGATE_GATE_RERUN) is measured by a replay now: its verdict
 * decides what CUnit records for the cleanup. */
static bool
end_suite_window(struct wsuite *ws)
{
    const leakgate_verdict *v = NULL;
    int rc = leakgate_gate_end(run->gate, ws->window_selected, &v);

    if (rc == LEAKGATE_GATE_RERUN) {
        leakgate_cunit__gate_error(
            leakgate_gate_decline_rerun(
                run->gate, "its init or cleanup left it; a replay in a "
                           "fresh process measures the suite's window "
                           "exactly"),
            "recording a suite window");
        run->suite_replayed = NULL;
        leakgate_cunit__replay_awaiting(true);
        v = leakgate_gate_verdict(run->gate, ws->name, SUITE_WINDOW);
        leakgate_cunit__report_late(ws);
        /* late_hints() reported it already, with its hint. */
        if (v && v == run->suite_replayed)
            return leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL;
        rc = 0;
    }
    leakgate_cunit__gate_error(rc, "closing a window");
    /* Its tests replayed in its cleanup first: the window's verdict may
     * be their diagnosis (a shared fixture). */
    leakgate_cunit__report_late(ws);
    return leakgate_cunit__take_verdict(NULL, v);
}

RUNNER static int
leakgate_cunit_init(void)
{
    struct wsuite *ws = leakgate_cunit__current_suite();
    int rc, result = 0;

    if (!ws)
        return 0;
    ws->init_called = true;
    leakgate_cunit__checkpoint();
    leakgate_cunit__started(ws, SUITE_WINDOW, "init");
    rc = leakgate_gate_measures(run->gate, ws->name, SUITE_WINDOW)
             ? leakgate_gate_begin(run->gate, ws->name, SUITE_WINDOW)
             : 1;
    leakgate_cunit__gate_error(rc, "opening a suite window");
    ws->window_open = rc == 0;
    if (ws->init)
        result = ws->init();
    ws->init_failed = result != 0;
    if (ws->window_open && (result != 0 || !ws->whole)) {
        if (result != 0) {
            /* CUnit skips the tests and the cleanup of this suite. */
            ws->window_open = false;
            end_suite_window(ws);
            leakgate_cunit__push_pending(ws, NULL);
            leakgate_cunit__stop_when_replayed();
        } else {
            leakgate_cunit__gate_error(leakgate_gate_pause(run->gate),
                                       "pausing a window");
        }
    }
    leakgate_cunit__phase_over();
    return result;
}

/*
 * CUnit's summary counts what --filter left out as "Inactive"; it is not:
 * the summary that follows the last suite's cleanup leaves those tests and
 * suites out (CUnit counts the inactive suites after this one later, so
 * the count is lowered by them ahead, modulo 2^32), and leakgate says how
 * many it filtered out.
 */
static void
uncount_filtered(void)
{
    CU_pRunSummary sum = CU_get_run_summary();

    if (run->filtered_tests == 0 && run->filtered_suites == 0)
        return;
    sum->nTestsInactive -= (unsigned int)run->filtered_tests;
    sum->nSuitesInactive -= (unsigned int)run->filtered_suites;
    fprintf(stderr,
            "\nleakgate: --filter '%s' left out %zu test%s; CUnit's summary "
            "does not count them as inactive\n",
            leakgate_gate_filter(run->gate), run->filtered_total,
            run->filtered_total == 1 ? "" : "s");
}

/* No suite after ws will run in this run: its cleanup is the last point
 * before CUnit's summary. */
static bool
last_suite(const struct wsuite *ws)
{
    for (const struct wsuite *w = ws + 1; w < run->suites + run->nsuites; w++) {
        if (w->suite->fActive && w->suite->uiNumberOfTests > 0)
            return false;
    }
    return true;
}

/* `scope: suite`: the suite is over; its tests that left memory are
 * judged now, on what is still live (a test that is over: CUnit's
 * summary counts a failure as for a replayed one). */
static void
judge_held(struct wsuite *ws)
{
    leakgate_cunit__gate_error(leakgate_gate_suite_over(run->gate, ws->name),
                               "judging a scope: suite suite");
    for (size_t i = 0; i < run->ntests; i++) {
        struct wtest *wt = &run->tests[i];
        const leakgate_verdict *v;

        if (wt->ws != ws || !wt->suite_wait)
            continue;
        wt->suite_wait = false;
        v = leakgate_gate_verdict(run->gate, ws->name, wt->name);
        /* The stacks of its peak come with the replay: reported then. */
        if (leakgate_verdict_waits_for_replay(v)) {
            wt->awaiting = true;
            continue;
        }
        if (leakgate_cunit__report_verdict(v))
            leakgate_cunit__count_replayed_failure(wt);
        if (hooks->revised)
            hooks->revised(ws->name, wt->name, hooks->payload);
    }
}

RUNNER static int
leakgate_cunit_cleanup(void)
{
    struct wsuite *ws = leakgate_cunit__current_suite();
    int result = 0;
    bool last, probe = false;

    if (!ws)
        return 0;
    last = last_suite(ws);
    if (!ws->window_open || !ws->whole) {
        leakgate_cunit__checkpoint(); /* recording is off (the window is paused)
                                       */
        /* Every test has run: what their fast pass left is measured now,
         * in one replay, before CUnit's summary.  (A crash earlier
         * replays what waits first: leakgate_cunit__rescue.) */
        if (last) {
            leakgate_cunit__replay_awaiting(true);
            probe = true;
        }
    }
    leakgate_cunit__started(ws, SUITE_WINDOW, "cleanup");
    if (ws->window_open && !ws->whole)
        leakgate_cunit__gate_error(leakgate_gate_resume(run->gate),
                                   "resuming a window");
    if (ws->cleanup)
        result = ws->cleanup();
    if (ws->window_open) {
        ws->window_open = false;
        if (end_suite_window(ws) && result == 0) {
            result = 1; /* CUnit records "Suite cleanup failed." */
            run->gate_cleanups++;
        }
        leakgate_cunit__push_pending(ws, NULL);
        leakgate_cunit__stop_when_replayed();
    }
    if (ws->suite_scope && !ws->whole)
        judge_held(ws);
    /* The cleanup is over: what follows is leakgate's own work, which the
     * first pass's watchdog (--test-timeout) does not time as the
     * cleanup's. */
    leakgate_cunit__phase_over();
    /* The run's tests are over, and their suites' cleanups: what threads
     * kept after their test ended is that test's. */
    if (last)
        leakgate_cunit__judge_orphans(true);
    /* After the suite's window: a test its shared fixture explains gets
     * that diagnosis, not `warmup:` as well. */
    if (probe)
        leakgate_cunit__probe_warmup();
    if (last)
        uncount_filtered();
    return result;
}

void
leakgate_cunit__install(CU_pSuite s)
{
    s->pInitializeFunc = leakgate_cunit_init;
    s->pCleanupFunc = leakgate_cunit_cleanup;
    s->pSetUpFunc = leakgate_cunit_setup;
    s->pTearDownFunc = leakgate_cunit_teardown;
    for (CU_pTest t = s->pTest; t; t = t->pNext)
        t->pTestFunc = leakgate_cunit_test;
}
