/* SPDX-License-Identifier: MIT */
/*
 * cunit: the CUnit glue, the only module that includes CUnit.  Runs a
 * registry under a gate without touching test code: before the run every
 * suite's init/cleanup/setUp/tearDown and every test function in the
 * registry are replaced by trampolines (restored afterwards).  This does
 * not depend on CUnit's message handlers, which CU_basic_run_tests()
 * reinstalls on every run, so user handlers keep working too.
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
 * windows of their own.  Trampolines carry the
 * "leakgate_" prefix although static: the report trims every stack at the
 * first leakgate_ frame, so they must be recognisable by name.
 *
 * Records are completed as the run goes: at each trampoline that runs with
 * recording off (a checkpoint), CUnit's failure records added since the
 * last checkpoint become notes of their tests' verdicts, and the records
 * of the tests and suites that are over are handed to the hooks
 * (cunit_hooks.h).  A run started while another one is running (CUnit's
 * CU_basic_run_tests() calls CU_run_all_tests()) is not wrapped again.
 */
#include "leakgate/cunit.h"

#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cunit_hooks.h"
#include "leakgate/thresholds.h"

#define SUITE_WINDOW "[suite]"

/* The trampolines that call the user's code live in one section: the
 * allocation stacks leakgate records end at the first frame in it (what
 * is above it is the same for every allocation of a window). */
#define RUNNER __attribute__((section("leakgate_runner"), noinline))
extern const char __start_leakgate_runner[];
extern const char __stop_leakgate_runner[];

struct wsuite {
    CU_pSuite suite;
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
    /* Its shared-fixture hint, found after the replay: printed after the
     * reports of the replayed tests it is the diagnosis of. */
    const leakgate_verdict *late_hint;
};

struct wtest {
    CU_pTest test;
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
};

/* A record that is over but not yet handed to the hooks. */
struct pending {
    struct wsuite *ws;
    struct wtest *wt; /* NULL: the suite's own window */
};

static struct {
    leakgate_gate *gate;
    struct wsuite *suites;
    size_t nsuites;
    struct wtest *tests;
    size_t ntests;
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
    bool probed;            /* the warm-up probe ran (probe_warmup) */
    const leakgate_verdict *suite_replayed; /* reported by late_hints() */
} run;

static struct leakgate_cunit_hooks hooks;
static void replay_awaiting(bool in_cunit);
static void probe_warmup(void);
static unsigned int run_depth; /* > 0 while a leakgate_cunit_run() runs */

void
leakgate_cunit__set_hooks(const struct leakgate_cunit_hooks *h)
{
    if (h)
        hooks = *h;
    else
        memset(&hooks, 0, sizeof hooks);
}

static void
gate_error(int rc, const char *what)
{
    if (rc >= 0 || run.error)
        return;
    run.error = rc;
    snprintf(run.error_text, sizeof run.error_text, "%s: %s (%s)", what,
             leakgate_strerror(rc), leakgate_error_last());
}

/* Print name as leakgate_name_escape() does: a newline in a name must not
 * split its line. */
static void
put_printed(FILE *f, const char *name)
{
    char small[256], *big = NULL;
    size_t n = leakgate_name_escape(small, sizeof small, name);

    if (n >= sizeof small) {
        big = malloc(n + 1);
        if (big)
            leakgate_name_escape(big, n + 1, name);
    }
    fputs(big ? big : small, f);
    free(big);
}

static struct wsuite *
current_suite(void)
{
    CU_pSuite s = CU_get_current_suite();

    for (size_t i = 0; i < run.nsuites; i++) {
        if (run.suites[i].suite == s)
            return &run.suites[i];
    }
    return NULL;
}

static struct wtest *
current_test(void)
{
    CU_pTest t = CU_get_current_test();

    for (size_t i = 0; i < run.ntests; i++) {
        if (run.tests[i].test == t)
            return &run.tests[i];
    }
    return NULL;
}

/*
 * CUnit's record of a gate failure: one line (the report's first line and
 * where the rest is), at the test's own line; the whole report is on
 * stderr.  A multi-line text would be printed twice on a terminal and
 * break a TAP or JUnit handler's output.
 */
static void
add_cunit_failure(const leakgate_verdict *v)
{
    const char *report = leakgate_verdict_report(v), *file;
    size_t len = strcspn(report, "\n");
    unsigned int line;
    char text[512];

    leakgate_verdict_location(v, &file, &line);
    snprintf(text, sizeof text, "%.*s (leakgate's report is on stderr)",
             (int)(len < 400 ? len : 400), report);
    CU_assertImplementation(CU_FALSE, line, text, file ? file : "leakgate", "",
                            CU_FALSE);
}

/* Report a verdict on stderr; for a failed test window also add a CUnit
 * failure record so CUnit's own summary counts it.  Returns true when the
 * verdict failed (a suite window's cleanup then reports failure to CUnit:
 * CUnit cannot record an assertion outside a test). */
static bool
report_verdict(const leakgate_verdict *v)
{
    if (!v)
        return false;
    /* leakgate's lines start on a line of their own: CUnit's "  Test: t
     * ..." (or the program's own output) is usually mid-line here. */
    if (*leakgate_verdict_report(v))
        fputc('\n', stderr);
    leakgate_gate_print_verdict(run.gate, v, stderr);
    if (leakgate_verdict_status(v) != LEAKGATE_STATUS_FAIL)
        return false;
    if (CU_get_current_test())
        add_cunit_failure(v);
    return true;
}

/* Report a closed window's verdict; one that waits for the replay is
 * reported after it (wt->awaiting).  Returns true when it failed. */
static bool
take_verdict(struct wtest *wt, const leakgate_verdict *v)
{
    /* Its suite's end first: a held test over its peak limit waits for
     * both, and its suite's end says whether the replay comes first. */
    if (wt && v && leakgate_verdict_waits_for_suite(v)) {
        wt->suite_wait = true;
        return false;
    }
    if (wt && v && leakgate_verdict_waits_for_replay(v)) {
        wt->awaiting = true;
        return false;
    }
    return report_verdict(v);
}

/* A replay stops after the last window it measures (a test's, or a lean
 * process's suite window): what runs after it cannot change its verdicts. */
static void
stop_when_replayed(void)
{
    if (!leakgate_gate_replay_done(run.gate))
        return;
    leakgate_gate_write_results(run.gate);
    fflush(NULL);
    _exit(0);
}

static void report_late(const struct wsuite *ws);

/* Close a suite's window (cleanup has run); returns true when its verdict
 * failed.  A lean process's suite window whose init or cleanup left
 * memory (LEAKGATE_GATE_RERUN) is measured by a replay now: its verdict
 * decides what CUnit records for the cleanup. */
static bool
end_suite_window(struct wsuite *ws)
{
    const leakgate_verdict *v = NULL;
    int rc = leakgate_gate_end(run.gate, ws->window_selected, &v);

    if (rc == LEAKGATE_GATE_RERUN) {
        gate_error(leakgate_gate_decline_rerun(
                       run.gate, "its init or cleanup left it; a replay in a "
                                 "fresh process measures the suite's window "
                                 "exactly"),
                   "recording a suite window");
        run.suite_replayed = NULL;
        replay_awaiting(true);
        v = leakgate_gate_verdict(run.gate, ws->suite->pName, SUITE_WINDOW);
        report_late(ws);
        /* late_hints() reported it already, with its hint. */
        if (v && v == run.suite_replayed)
            return leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL;
        rc = 0;
    }
    gate_error(rc, "closing a window");
    /* Its tests replayed in its cleanup first: the window's verdict may
     * be their diagnosis (a shared fixture). */
    report_late(ws);
    return take_verdict(NULL, v);
}

/* A test's or a suite's phase is over: no window runs (a replay tells its
 * first process the run goes on). */
static void phase_over(void);

/* In a replay: stop on the first process's signal (below). */
static void arm_replay_stop(void);

/* The test or suite window running now, for the exit and crash guards of
 * linked test binaries (names owned by CUnit's registry). */
static struct {
    const char *suite;
    const char *test;
    bool armed; /* leakgate_cunit_main installed the guards */
    pid_t pid;  /* ... in this process (a test's forked child is not
                   guarded: its exit() is the test's business) */
} current;

static void
started(const struct wsuite *ws, const char *test, const char *phase)
{
    current.suite = ws->suite->pName;
    current.test = test;
    leakgate_gate_replay_beat(run.gate);
    if (hooks.started)
        hooks.started(ws->suite->pName, test, phase, hooks.payload);
}

static void
phase_over(void)
{
    current.test = NULL;
    leakgate_gate_replay_beat(run.gate);
}

static void
push_pending(struct wsuite *ws, struct wtest *wt)
{
    if (run.npending < run.pending_cap) {
        run.pending[run.npending].ws = ws;
        run.pending[run.npending].wt = wt;
        run.npending++;
    }
}

/* Hand one failure record (an assertion, a suite init failure) to the gate
 * as a note of its test, for JUnit/JSON. */
static void
note_failure(CU_pFailureRecord f)
{
    const char *suite = f->pSuite ? f->pSuite->pName : "";
    const char *test = f->pTest ? f->pTest->pName : SUITE_WINDOW;
    const char *msg = f->strCondition ? f->strCondition : "";

    if (strncmp(msg, "leakgate: ", 10) == 0)
        return; /* the gate's own failure, already in its verdict */
    leakgate_gate_note_failure(run.gate, suite, test, f->strFileName,
                               f->uiLineNumber, msg);
}

/* The record of a test or suite is over: every test that ran has a record
 * (a note-only one when it had no window); tell the hooks. */
static void
finish_record(struct wsuite *ws, struct wtest *wt)
{
    const char *test = wt ? wt->test->pName : SUITE_WINDOW;

    if (!ws)
        return;
    if (wt) {
        wt->reported = true;
        leakgate_gate_note_failure(run.gate, ws->suite->pName, test, NULL, 0,
                                   NULL);
    }
    if (hooks.finished)
        hooks.finished(ws->suite->pName, test, hooks.payload);
}

/* Attach the failure records CUnit added since the last checkpoint, then
 * complete the pending records.  Allocates: only with recording off. */
static void
checkpoint(void)
{
    CU_pFailureRecord f = run.seen ? run.seen->pNext : CU_get_failure_list();

    for (; f; f = f->pNext) {
        note_failure(f);
        run.seen = f;
    }
    for (size_t i = 0; i < run.npending; i++)
        finish_record(run.pending[i].ws, run.pending[i].wt);
    run.npending = 0;
}

static bool
repeats(const struct wtest *wt)
{
    return wt->repeat >= 2 && !wt->ws->suite_scope;
}

/* A test of a suite without `scope: suite` that is measured in an exact
 * window from the start (`rerun: false`, `repeat:`), not a fast one. */
static bool
exact_from_start(const struct wtest *wt)
{
    return !wt->rerun || repeats(wt);
}

RUNNER static void
leakgate_cunit_run_protected(CU_TestFunc fn)
{
    CU_pTest t = CU_get_current_test();
    jmp_buf *cunit_jmp = t->pJumpBuf;

    t->pJumpBuf = &run.abort_jmp;
    if (setjmp(run.abort_jmp) == 0)
        fn();
    else if (run.test_open)
        leakgate_gate_mark_aborted(run.gate,
                                   "the test stopped at a fatal assertion; "
                                   "memory it would have freed afterwards "
                                   "is expected to remain");
    t->pJumpBuf = cunit_jmp;
}

RUNNER static void
leakgate_cunit_test(void)
{
    struct wtest *wt = current_test();

    if (wt && !repeats(wt))
        leakgate_cunit_run_protected(wt->fn);
}

RUNNER static void
leakgate_cunit_warmup(struct wtest *wt)
{
    for (unsigned int i = 0; i < wt->warmup; i++) {
        if (wt->ws->setup)
            wt->ws->setup();
        leakgate_cunit_run_protected(wt->fn);
        if (wt->ws->teardown)
            wt->ws->teardown();
    }
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
        if (i < wt->repeat && run.test_open)
            gate_error(leakgate_gate_next_run(run.gate), "starting a run");
    }
}

RUNNER static void
leakgate_cunit_setup(void)
{
    struct wtest *wt = current_test();
    const char *suite, *test;
    int rc;

    if (!wt)
        return;
    suite = wt->ws->suite->pName;
    test = wt->test->pName;
    /* A whole `scope: suite` window records here: no checkpoint. */
    if (!wt->ws->whole)
        checkpoint();
    started(wt->ws, test, "test");
    if (!wt->ws->whole) {
        leakgate_cunit_warmup(wt);
        /* A replay measures only the tests it replays. */
        if (leakgate_gate_measures(run.gate, suite, test)) {
            if (wt->ws->suite_scope && !leakgate_gate_in_replay(run.gate))
                rc = leakgate_gate_begin_held(run.gate, suite, test);
            else if (!exact_from_start(wt))
                rc = leakgate_gate_begin_fast(run.gate, suite, test);
            else
                rc = leakgate_gate_begin(run.gate, suite, test);
            gate_error(rc, "opening a test window");
            run.test_open = rc == 0;
        }
    }
    if (repeats(wt)) {
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
    CU_pFailureRecord f = run.seen ? run.seen->pNext : CU_get_failure_list();
    bool failed = false;

    for (; f; f = f->pNext) {
        leakgate_gate_exclude_object(run.gate, f);
        leakgate_gate_exclude_object(run.gate, f->strFileName);
        leakgate_gate_exclude_object(run.gate, f->strCondition);
        failed |= f->pTest == t;
    }
    return failed;
}

static void
close_test_window(struct wtest *wt)
{
    const leakgate_verdict *v = NULL;
    bool failed = wt && exclude_records(wt->test);
    int rc = leakgate_gate_end(run.gate, 1, &v);

    if (rc != LEAKGATE_GATE_RERUN) {
        gate_error(rc, "closing a window");
        take_verdict(wt, v);
    } else if (wt) {
        /* A test runs once per process, as in a plain run: what its fast
         * first pass left is measured exactly by a replay in a fresh
         * process after the run. */
        gate_error(leakgate_gate_decline_rerun(
                       run.gate, failed ? "it failed an assertion; a replay "
                                          "in a fresh process measures it"
                                        : "a replay in a fresh process "
                                          "measures it exactly"),
                   "recording a test");
        wt->awaiting = true;
    }
}

RUNNER static void
leakgate_cunit_teardown(void)
{
    struct wtest *wt = current_test();

    if (wt && wt->ws->teardown && !repeats(wt))
        wt->ws->teardown();
    if (run.test_open) {
        run.test_open = false;
        close_test_window(wt);
        stop_when_replayed();
    }
    if (wt)
        push_pending(wt->ws, wt);
    phase_over();
}

RUNNER static int
leakgate_cunit_init(void)
{
    struct wsuite *ws = current_suite();
    int rc, result = 0;

    if (!ws)
        return 0;
    ws->init_called = true;
    checkpoint();
    started(ws, SUITE_WINDOW, "init");
    rc = leakgate_gate_measures(run.gate, ws->suite->pName, SUITE_WINDOW)
             ? leakgate_gate_begin(run.gate, ws->suite->pName, SUITE_WINDOW)
             : 1;
    gate_error(rc, "opening a suite window");
    ws->window_open = rc == 0;
    if (ws->init)
        result = ws->init();
    if (ws->window_open && (result != 0 || !ws->whole)) {
        if (result != 0) {
            /* CUnit skips the tests and the cleanup of this suite. */
            ws->window_open = false;
            end_suite_window(ws);
            push_pending(ws, NULL);
            stop_when_replayed();
        } else {
            gate_error(leakgate_gate_pause(run.gate), "pausing a window");
        }
    }
    phase_over();
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

    if (run.filtered_tests == 0 && run.filtered_suites == 0)
        return;
    sum->nTestsInactive -= (unsigned int)run.filtered_tests;
    sum->nSuitesInactive -= (unsigned int)run.filtered_suites;
    fprintf(stderr,
            "\nleakgate: --filter '%s' left out %zu test%s; CUnit's summary "
            "does not count them as inactive\n",
            leakgate_gate_filter(run.gate), run.filtered_total,
            run.filtered_total == 1 ? "" : "s");
}

/* No suite after ws will run in this run: its cleanup is the last point
 * before CUnit's summary. */
static bool
last_suite(const struct wsuite *ws)
{
    for (const struct wsuite *w = ws + 1; w < run.suites + run.nsuites; w++) {
        if (w->suite->fActive && w->suite->uiNumberOfTests > 0)
            return false;
    }
    return true;
}

static void count_replayed_failure(const struct wtest *wt);

/* `scope: suite`: the suite is over; its tests that left memory are
 * judged now, on what is still live (a test that is over: CUnit's
 * summary counts a failure as for a replayed one). */
static void
judge_held(struct wsuite *ws)
{
    gate_error(leakgate_gate_suite_over(run.gate, ws->suite->pName),
               "judging a scope: suite suite");
    for (size_t i = 0; i < run.ntests; i++) {
        struct wtest *wt = &run.tests[i];
        const leakgate_verdict *v;

        if (wt->ws != ws || !wt->suite_wait)
            continue;
        wt->suite_wait = false;
        v = leakgate_gate_verdict(run.gate, ws->suite->pName, wt->test->pName);
        /* The stacks of its peak come with the replay: reported then. */
        if (leakgate_verdict_waits_for_replay(v)) {
            wt->awaiting = true;
            continue;
        }
        if (report_verdict(v))
            count_replayed_failure(wt);
        if (hooks.revised)
            hooks.revised(ws->suite->pName, wt->test->pName, hooks.payload);
    }
}

RUNNER static int
leakgate_cunit_cleanup(void)
{
    struct wsuite *ws = current_suite();
    int result = 0;
    bool last, probe = false;

    if (!ws)
        return 0;
    last = last_suite(ws);
    if (!ws->window_open || !ws->whole) {
        checkpoint(); /* recording is off (the window is paused) */
        /* Every test has run: what their fast pass left is measured now,
         * in one replay, before CUnit's summary.  (A crash earlier
         * replays what waits first: leakgate_cunit__rescue.) */
        if (last) {
            replay_awaiting(true);
            probe = true;
        }
    }
    started(ws, SUITE_WINDOW, "cleanup");
    if (ws->window_open && !ws->whole)
        gate_error(leakgate_gate_resume(run.gate), "resuming a window");
    if (ws->cleanup)
        result = ws->cleanup();
    if (ws->window_open) {
        ws->window_open = false;
        if (end_suite_window(ws) && result == 0) {
            result = 1; /* CUnit records "Suite cleanup failed." */
            run.gate_cleanups++;
        }
        push_pending(ws, NULL);
        stop_when_replayed();
    }
    if (ws->suite_scope && !ws->whole)
        judge_held(ws);
    /* After the suite's window: a test its shared fixture explains gets
     * that diagnosis, not `warmup:` as well. */
    if (probe)
        probe_warmup();
    phase_over();
    if (last)
        uncount_filtered();
    return result;
}

static size_t
count_tests(CU_pTestRegistry reg)
{
    size_t n = 0;

    for (CU_pSuite s = reg->pSuite; s; s = s->pNext) {
        for (CU_pTest t = s->pTest; t; t = t->pNext)
            n++;
    }
    return n;
}

static void
wrap_test(struct wtest *wt, struct wsuite *ws, CU_pTest t)
{
    struct leakgate_window_settings settings;
    const char *suite = ws->suite->pName;

    wt->test = t;
    wt->fn = t->pTestFunc;
    wt->active = t->fActive;
    wt->ws = ws;
    wt->selected = leakgate_gate_selected(run.gate, suite, t->pName) ||
                   (ws->suite_scope && ws->window_selected);
    t->pTestFunc = leakgate_cunit_test;
    if (!wt->selected) {
        /* It does not run: no settings to resolve (a one-test process of
         * a large registry would rank every thresholds entry for each). */
        wt->repeat = 1;
        wt->rerun = true;
        run.filtered_total += t->fActive != CU_FALSE;
        t->fActive = CU_FALSE;
        return;
    }
    leakgate_gate_settings(&settings, run.gate, suite, t->pName);
    wt->warmup = settings.warmup;
    wt->repeat = settings.repeat;
    wt->rerun = settings.rerun != 0;
}

static void
wrap_suite(struct wsuite *ws, CU_pSuite s, size_t *ti)
{
    struct leakgate_window_settings settings;
    bool any = false;
    size_t first = *ti;

    ws->suite = s;
    ws->init = s->pInitializeFunc;
    ws->cleanup = s->pCleanupFunc;
    ws->setup = s->pSetUpFunc;
    ws->teardown = s->pTearDownFunc;
    ws->active = s->fActive;
    leakgate_gate_settings(&settings, run.gate, s->pName, NULL);
    ws->suite_scope = settings.suite_scope != 0;
    ws->whole = ws->suite_scope && !leakgate_gate_holds_tests(run.gate);
    ws->window_selected =
        leakgate_gate_selected(run.gate, s->pName, SUITE_WINDOW) != 0;
    for (CU_pTest t = s->pTest; t; t = t->pNext) {
        wrap_test(&run.tests[*ti], ws, t);
        any |= run.tests[*ti].selected && t->fActive;
        (*ti)++;
    }
    s->pInitializeFunc = leakgate_cunit_init;
    s->pCleanupFunc = leakgate_cunit_cleanup;
    s->pSetUpFunc = leakgate_cunit_setup;
    s->pTearDownFunc = leakgate_cunit_teardown;
    if (!any && !ws->window_selected && s->fActive) {
        s->fActive = CU_FALSE;
        run.filtered_suites++;
    } else if (s->fActive) {
        /* CUnit counts the inactive tests of an active suite only. */
        for (size_t i = first; i < *ti; i++)
            run.filtered_tests += run.tests[i].active && !run.tests[i].selected;
    }
}

static int
wrap_registry(void)
{
    CU_pTestRegistry reg = CU_get_registry();
    size_t si = 0, ti = 0;

    if (!reg)
        return 0;
    run.nsuites = reg->uiNumberOfSuites;
    run.ntests = count_tests(reg);
    run.suites = calloc(run.nsuites + 1, sizeof *run.suites);
    run.tests = calloc(run.ntests + 1, sizeof *run.tests);
    run.pending_cap = run.nsuites + run.ntests + 1;
    run.pending = calloc(run.pending_cap, sizeof *run.pending);
    if (!run.suites || !run.tests || !run.pending)
        return LEAKGATE_ENOMEM;
    for (CU_pSuite s = reg->pSuite; s && si < run.nsuites; s = s->pNext)
        wrap_suite(&run.suites[si++], s, &ti);
    run.nsuites = si;
    return 0;
}

static void
unwrap_registry(void)
{
    for (size_t i = 0; i < run.ntests; i++) {
        run.tests[i].test->pTestFunc = run.tests[i].fn;
        run.tests[i].test->fActive = run.tests[i].active;
    }
    for (size_t i = 0; i < run.nsuites; i++) {
        struct wsuite *ws = &run.suites[i];

        ws->suite->pInitializeFunc = ws->init;
        ws->suite->pCleanupFunc = ws->cleanup;
        ws->suite->pSetUpFunc = ws->setup;
        ws->suite->pTearDownFunc = ws->teardown;
        ws->suite->fActive = ws->active;
    }
    free(run.suites);
    free(run.tests);
    free(run.pending);
    run.suites = NULL;
    run.tests = NULL;
    run.pending = NULL;
    run.nsuites = run.ntests = 0;
    run.npending = run.pending_cap = 0;
}

/* The run is over: complete the last records, and give a record to every
 * selected test of the suites CUnit started, including the tests it
 * skipped because their suite's init failed. */
static void
finish_run(void)
{
    checkpoint();
    for (size_t i = 0; i < run.ntests; i++) {
        struct wtest *wt = &run.tests[i];

        if (!wt->reported && wt->selected && wt->active &&
            wt->ws->suite->fActive && wt->ws->init_called)
            finish_record(wt->ws, wt);
    }
}

/* Add "suite/test" to the list in out; false once it is full (five names
 * and "and N more"). */
static bool
add_awaiting_name(char *out,
                  size_t size,
                  size_t *used,
                  size_t *shown,
                  size_t n,
                  const char *suite,
                  const char *test)
{
    char ps[128], pt[128];
    int k;

    if (*used >= size)
        return false;
    if (*shown == 5) {
        snprintf(out + *used, size - *used, " and %zu more", n - *shown);
        return false;
    }
    leakgate_name_escape(ps, sizeof ps, suite);
    leakgate_name_escape(pt, sizeof pt, test);
    k = snprintf(out + *used, size - *used, "%s%s/%s", *shown ? ", " : "", ps,
                 pt);
    *used += k > 0 ? (size_t)k : 0;
    (*shown)++;
    return true;
}

/* Suite i's own window waits for the replay (a lean process's,
 * end_suite_window()). */
static bool
suite_window_waits(size_t i)
{
    return leakgate_verdict_waits_for_replay(leakgate_gate_verdict(
        run.gate, run.suites[i].suite->pName, SUITE_WINDOW));
}

/* The names of the windows waiting for the replay, for its message: at
 * most five, then how many more. */
static void
awaiting_names(char *out, size_t size, size_t n)
{
    size_t shown = 0, used = 0;

    out[0] = '\0';
    for (size_t i = 0; i < run.ntests; i++) {
        const struct wtest *wt = &run.tests[i];

        /* A test of the last `scope: suite` suite waits for its suite's
         * end and may wait for the replay too (its peak's stacks). */
        if (!wt->awaiting &&
            !(wt->suite_wait &&
              leakgate_verdict_waits_for_replay(leakgate_gate_verdict(
                  run.gate, wt->ws->suite->pName, wt->test->pName))))
            continue;
        if (!add_awaiting_name(out, size, &used, &shown, n,
                               wt->ws->suite->pName, wt->test->pName))
            return;
    }
    /* A lean process's suite window (end_suite_window). */
    for (size_t i = 0; i < run.nsuites; i++) {
        if (suite_window_waits(i) &&
            !add_awaiting_name(out, size, &used, &shown, n,
                               run.suites[i].suite->pName, SUITE_WINDOW))
            return;
    }
}

/*
 * A failing verdict the replay (or its suite's end) gave a test that CUnit
 * has completed:
 * CUnit's run summary, printed after the last suite's cleanup, counts the
 * test as failed and the gate's assertion as failed.  No failure record
 * can be added outside a running test (Debian's CUnit asserts a current
 * test), so the record is leakgate's report on stderr.
 */
static void
count_replayed_failure(const struct wtest *wt)
{
    CU_pRunSummary sum = CU_get_run_summary();
    CU_pSuite s = wt->ws->suite;
    bool had = false;

    for (CU_pFailureRecord f = CU_get_failure_list(); f; f = f->pNext)
        had |= f->pTest == wt->test;
    sum->nAsserts++;
    sum->nAssertsFailed++;
    if (had)
        return;
    sum->nTestsFailed++;
    s->uiNumberOfTestsFailed++;
    if (s->uiNumberOfTestsSuccess > 0)
        s->uiNumberOfTestsSuccess--;
}

/* Suites whose tests the replay judged after their window closed get the
 * shared-fixture hint now (which marks those tests: their reports point at
 * it), and it is printed and handed to the hooks again after the tests'
 * reports (late_hints_report). */
static void
late_hints(void)
{
    for (size_t i = 0; i < run.nsuites; i++) {
        if (run.suites[i].init_called)
            run.suites[i].late_hint =
                leakgate_gate_late_hint(run.gate, run.suites[i].suite->pName);
    }
}

static void
late_hints_report(void)
{
    for (size_t i = 0; i < run.nsuites; i++) {
        const leakgate_verdict *v = run.suites[i].late_hint;

        if (!v)
            continue;
        run.suites[i].late_hint = NULL;
        report_verdict(v);
        run.suite_replayed = v;
        if (hooks.revised)
            hooks.revised(run.suites[i].suite->pName, SUITE_WINDOW,
                          hooks.payload);
    }
}

/* The tests of ws (NULL: of every suite) whose report waits for their
 * suite's window (replay_awaiting): CUnit counted them already. */
static void
report_late(const struct wsuite *ws)
{
    for (size_t i = 0; i < run.ntests; i++) {
        struct wtest *wt = &run.tests[i];

        if (!wt->report_late || (ws && wt->ws != ws))
            continue;
        wt->report_late = false;
        report_verdict(leakgate_gate_verdict(run.gate, wt->ws->suite->pName,
                                             wt->test->pName));
        if (hooks.revised)
            hooks.revised(wt->ws->suite->pName, wt->test->pName, hooks.payload);
    }
}

/*
 * Would `warmup: 1` make a failing test pass (its growth made once)?  A
 * probe in a fresh process tells; the hint is printed as a NOTE and handed
 * to the hooks.  Once per run, after the replay, in every mode.
 */
static void
probe_warmup(void)
{
    size_t hinted = 0;

    if (run.probed || leakgate_gate_in_replay(run.gate))
        return;
    run.probed = true;
    checkpoint();
    if (leakgate_gate_probe_warmup(run.gate, hooks.replay_preload, &hinted) <
            0 ||
        hinted == 0)
        return;
    for (size_t i = 0; i < run.ntests; i++) {
        struct wtest *wt = &run.tests[i];
        const leakgate_verdict *v = leakgate_gate_verdict(
            run.gate, wt->ws->suite->pName, wt->test->pName);
        const char *hint = v ? leakgate_verdict_hint(v) : NULL;

        if (!hint || strncmp(hint, "its growth is made once", 23) != 0)
            continue;
        fputs("\nleakgate: NOTE ", stderr);
        put_printed(stderr, wt->ws->suite->pName);
        fputc('/', stderr);
        put_printed(stderr, wt->test->pName);
        fprintf(stderr, ": %s", hint);
        if (hooks.revised)
            hooks.revised(wt->ws->suite->pName, wt->test->pName, hooks.payload);
    }
}

/*
 * What a test's fast first pass left is measured by replaying the program
 * in a fresh process (replay.h): a test runs once per process.  Called
 * from the last suite's cleanup, so that CUnit's summary counts the
 * replayed failures (in_cunit); otherwise after the run, or when the
 * program is about to die, when CUnit's summary has been printed already
 * or never will be.
 */
static void
replay_awaiting(bool in_cunit)
{
    size_t n = leakgate_gate_replays_pending(run.gate), failed = 0;
    size_t suites = 0;
    int rc;
    char names[1024];

    if (n == 0)
        return;
    awaiting_names(names, sizeof names, n);
    for (size_t i = 0; i < run.nsuites; i++)
        suites += suite_window_waits(i);
    fprintf(stderr,
            "\nleakgate: replaying the run in a fresh process to measure "
            "%zu test%s exactly: %s (the fast first pass found memory %s "
            "left, or a peak over its limit; a test runs once per process).  "
            "To skip this replay: %s%s%s\n",
            n, n == 1 ? "" : "s", names, n == 1 ? "it" : "they",
            n > suites ? "accept growth a test is meant to keep in the "
                         "thresholds file, or give the test `rerun: false` "
                         "(measured exactly from the start)"
                       : "",
            n > suites && suites > 0 ? "; for " : "",
            suites == 0 ? ""
            : hooks.replay_preload
                ? "a suite window, run with `leakgate run --exact` (the "
                  "program then runs on jemalloc and its suite windows are "
                  "measured in the process; without it, every one whose "
                  "init or cleanup leaves memory is replayed)"
                : "a suite window, link the test binary with "
                  "leakgate::cunit_jemalloc instead of leakgate::cunit "
                  "(its suite windows are measured in the process; a lean "
                  "binary replays every one whose init or cleanup leaves "
                  "memory)");
    checkpoint(); /* the waiting records are streamed, not judged, first */
    rc = leakgate_gate_replay(run.gate, hooks.replay_preload);
    /* The replay failing is the gate's failure (exit 3), never a usage
     * error: the first process ran with the same options. */
    gate_error(rc == LEAKGATE_EUSAGE ? LEAKGATE_EIO : rc, "replaying the run");
    late_hints();
    for (size_t i = 0; i < run.ntests; i++) {
        struct wtest *wt = &run.tests[i];
        const leakgate_verdict *v;

        if (!wt->awaiting)
            continue;
        wt->awaiting = false;
        v = leakgate_gate_verdict(run.gate, wt->ws->suite->pName,
                                  wt->test->pName);
        /* In its suite's cleanup (the last suite's): counted now, for
         * CUnit's summary, reported when the suite's window has closed
         * and said whether it holds a shared fixture. */
        if (in_cunit && wt->ws->window_open && !wt->ws->whole && v) {
            wt->report_late = true;
            if (leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL) {
                failed++;
                count_replayed_failure(wt);
            }
        } else if (report_verdict(v)) {
            failed++;
            if (in_cunit)
                count_replayed_failure(wt);
        }
        if (hooks.revised)
            hooks.revised(wt->ws->suite->pName, wt->test->pName, hooks.payload);
    }
    late_hints_report();
    if (failed > 0 && !in_cunit)
        fprintf(stderr,
                "\nleakgate: %zu test%s failed in the replay after CUnit's "
                "summary above; the exit status counts %s\n",
                failed, failed == 1 ? "" : "s", failed == 1 ? "it" : "them");
}

/* A window leakgate could not judge is never a pass: the run ends with
 * the gate's error (exit 3), naming the first and why.  A replay's own
 * windows are the first process's to judge. */
static void
refuse_unjudged(void)
{
    const leakgate_verdict *first;
    const char *why;
    char name[256];
    size_t n;

    if (run.error || leakgate_gate_in_replay(run.gate))
        return;
    n = leakgate_gate_unjudged(run.gate, &first);
    if (n == 0 || !first)
        return;
    why = leakgate_verdict_not_judged_why(first);
    leakgate_name_escape(name, sizeof name, leakgate_verdict_name(first));
    run.error = LEAKGATE_EIO;
    snprintf(run.error_text, sizeof run.error_text,
             "%zu window%s could not be judged, so the run is not a pass: "
             "%s%s (%s)",
             n, n == 1 ? "" : "s", name, n > 1 ? " and others" : "",
             why ? why : "no reason recorded");
}

/* Some test or suite window of the registry matches --filter (always
 * true without a filter, unless the registry is empty). */
static bool
any_selected(void)
{
    if (!leakgate_gate_filter(run.gate))
        return true;
    for (size_t i = 0; i < run.ntests; i++) {
        if (run.tests[i].selected)
            return true;
    }
    for (size_t i = 0; i < run.nsuites; i++) {
        if (run.suites[i].window_selected)
            return true;
    }
    return false;
}

/* The run's error: two windows leakgate cannot tell apart (what names
 * them both: "suite 'S' has", "the registry has"; kind: "tests",
 * "suites"). */
static void
say_same(const char *where, const char *kind, const char *a, const char *b)
{
    char x[160], y[160];

    leakgate_name_escape(x, sizeof x, a);
    leakgate_name_escape(y, sizeof y, b);
    run.error = LEAKGATE_EUSAGE;
    if (strcmp(a, b) == 0)
        snprintf(run.error_text, sizeof run.error_text,
                 "%s two %s named '%s': leakgate names each window by its "
                 "suite/test name (--filter, the thresholds file, JUnit, "
                 "JSON) and cannot judge them apart; rename one",
                 where, kind, x);
    else
        snprintf(run.error_text, sizeof run.error_text,
                 "%s %s '%s' and '%s', which leakgate's JSON results cannot "
                 "tell apart (a byte that is not UTF-8 reads U+FFFD there); "
                 "rename one",
                 where, kind, x, y);
}

/* Two selected tests of a suite, or two selected suites, with one name
 * (or names the results cannot tell apart, leakgate_names_same()), or a
 * test named as its suite's own window: refused before any test runs
 * (exit 2), rather than one's verdict lost under the other's. */
static int
refuse_same_names(void)
{
    char suite[160], where[200];

    for (size_t i = 0; i < run.ntests; i++) {
        const struct wtest *a = &run.tests[i];

        if (!a->selected || !a->active)
            continue;
        if (strcmp(a->test->pName, SUITE_WINDOW) == 0) {
            leakgate_name_escape(where, sizeof where, a->ws->suite->pName);
            run.error = LEAKGATE_EUSAGE;
            snprintf(run.error_text, sizeof run.error_text,
                     "suite '%s' has a test named '%s', the name of the "
                     "suite's own window: rename it",
                     where, SUITE_WINDOW);
            return LEAKGATE_EUSAGE;
        }
        for (size_t k = i + 1; k < run.ntests; k++) {
            const struct wtest *b = &run.tests[k];

            if (b->ws != a->ws || !b->selected || !b->active ||
                !leakgate_names_same(a->test->pName, b->test->pName))
                continue;
            leakgate_name_escape(suite, sizeof suite, a->ws->suite->pName);
            snprintf(where, sizeof where, "suite '%s' has", suite);
            say_same(where, "tests", a->test->pName, b->test->pName);
            return LEAKGATE_EUSAGE;
        }
    }
    for (size_t i = 0; i < run.nsuites; i++) {
        for (size_t k = i + 1; k < run.nsuites; k++) {
            const struct wsuite *a = &run.suites[i], *b = &run.suites[k];

            if (!a->active || !b->active || !a->suite->fActive ||
                !b->suite->fActive ||
                !leakgate_names_same(a->suite->pName, b->suite->pName))
                continue;
            say_same("the CUnit registry has", "suites", a->suite->pName,
                     b->suite->pName);
            return LEAKGATE_EUSAGE;
        }
    }
    return 0;
}

/* A test the run measures exactly from the start (`rerun: false`,
 * `repeat:`): a lean process starts again with jemalloc first
 * (leakgate_gate_plan()), before any test has run. */
static int
plan_exact(void)
{
    for (size_t i = 0; i < run.ntests; i++) {
        const struct wtest *wt = &run.tests[i];
        int rc;

        /* A `scope: suite` suite's tests are held whatever they say. */
        if (!wt->selected || !wt->active || !wt->ws->active ||
            wt->ws->suite_scope || !exact_from_start(wt))
            continue;
        rc =
            leakgate_gate_plan(run.gate, wt->ws->suite->pName, wt->test->pName);
        if (rc < 0) {
            gate_error(rc, "starting again with jemalloc");
            return rc;
        }
    }
    return 0;
}

int
leakgate_cunit_run(leakgate_gate *gate, int (*fn)(void *payload), void *payload)
{
    CU_BOOL fail_on_inactive;
    int result;

    if (run_depth > 0)
        return fn(payload); /* the outer run has wrapped the registry */
    fail_on_inactive = CU_get_fail_on_inactive();
    memset(&run, 0, sizeof run);
    run.gate = gate;
    leakgate_gate_set_runner(gate, __start_leakgate_runner,
                             __stop_leakgate_runner);
    if (wrap_registry() < 0) {
        gate_error(LEAKGATE_ENOMEM, "wrapping the CUnit registry");
        unwrap_registry();
        return -1;
    }
    if (!any_selected()) {
        /* A typo in --filter must not pass as a run of no test. */
        run.error = LEAKGATE_EUSAGE;
        snprintf(run.error_text, sizeof run.error_text,
                 "--filter '%s' matches no test (--list shows the names)",
                 leakgate_gate_filter(gate));
        unwrap_registry();
        return -1;
    }
    if (refuse_same_names() < 0 || plan_exact() < 0) {
        unwrap_registry();
        return -1;
    }
    /* Tests left out by --filter are deactivated; they are not failures. */
    CU_set_fail_on_inactive(CU_FALSE);
    arm_replay_stop();
    run_depth++;
    result = fn(payload);
    run_depth--;
    CU_set_fail_on_inactive(fail_on_inactive);
    replay_awaiting(false);
    probe_warmup();
    finish_run();
    refuse_unjudged();
    unwrap_registry();
    return result;
}

int
leakgate_cunit_run_error(const char **text_out)
{
    *text_out = run.error_text;
    return run.error;
}

int
leakgate_cunit_list(void)
{
    CU_pTestRegistry reg = CU_get_registry();

    if (!reg)
        return 0;
    for (CU_pSuite s = reg->pSuite; s; s = s->pNext) {
        for (CU_pTest t = s->pTest; t; t = t->pNext) {
            put_printed(stdout, s->pName);
            putchar('/');
            put_printed(stdout, t->pName);
            putchar('\n');
        }
        put_printed(stdout, s->pName);
        printf("/%s\n", SUITE_WINDOW);
    }
    return fflush(stdout) == 0 ? 0 : LEAKGATE_EIO;
}

static int
run_basic(void *payload)
{
    (void)payload;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    return (int)CU_basic_run_tests();
}

static int
exit_code_for(int rc)
{
    return rc == LEAKGATE_ECONFIG || rc == LEAKGATE_EUSAGE ? 2 : 3;
}

/* --help, --version and --list need no gate. */
static int
early_exit(const struct leakgate_gate_options *opts)
{
    if (opts->help) {
        fputs(leakgate_gate_options_usage(), stdout);
        return 0;
    }
    if (opts->show_version) {
        printf("leakgate %s\n", leakgate_version());
        return 0;
    }
    if (opts->list)
        return leakgate_cunit_list() == 0 ? 0 : 3;
    /* A run's [outputs] test (leakgate_discover_tests()): no test runs;
     * the run's shared outputs are written from its journals. */
    switch (leakgate_gate_outputs_finish(opts)) {
    case 0: break;
    case 1: return 0;
    default: fprintf(stderr, "leakgate: %s\n", leakgate_error_last()); return 3;
    }
    return -1;
}

void
leakgate_cunit__rescue(void)
{
    if (run.gate && run_depth > 0 && run.tests) {
        replay_awaiting(false);
        report_late(NULL);
    }
}

/*
 * Guards of linked test binaries: a test that calls exit() or dies of a
 * signal must not end the run as if it had passed, nor lose the results
 * of the tests before it.  Both record the running window as not judged,
 * write JUnit/JSON and end the process with a failure.  The signal path
 * is best effort (it allocates); an alarm bounds it if the allocator's
 * state is what crashed.
 */
static void
abandon_current(const char *why)
{
    char line[256];

    if (!run.gate || !current.test)
        return;
    leakgate_gate_abandon(run.gate, current.suite, current.test, why);
    leakgate_cunit__rescue();
    leakgate_gate_write_results(run.gate);
    fputs("\nleakgate: ", stderr);
    put_printed(stderr, current.suite);
    fputc('/', stderr);
    put_printed(stderr, current.test);
    snprintf(line, sizeof line, ": %s\n", why);
    fputs(line, stderr);
}

static bool
guarded(void)
{
    return current.armed && current.test && getpid() == current.pid;
}

static void
guard_exit(void)
{
    if (!guarded())
        return;
    abandon_current("the test called exit() before it returned; the run "
                    "stopped here");
    _exit(1);
}

static void
guard_signal(int sig)
{
    static volatile sig_atomic_t once;
    char why[128];

    if (once++ == 0 && guarded()) {
        alarm(10);
        snprintf(why, sizeof why, "the test died of signal %d (%s)", sig,
                 strsignal(sig));
        abandon_current(why);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/*
 * A replay whose test ran longer than the replay timeout is sent the stop
 * signal by its first process (replay.c): the running test is recorded as
 * not judged, with why, and the results of every window measured so far
 * are written before the replay ends.  Best effort, as guard_signal().
 */
static void
replay_stop(int sig)
{
    char why[256];

    (void)sig;
    alarm(10);
    snprintf(why, sizeof why,
             "in the replay it ran longer than the replay timeout (%u s: "
             "--replay-timeout, LEAKGATE_REPLAY_TIMEOUT), which stopped "
             "the replay there",
             run.gate ? leakgate_gate_replay_timeout(run.gate) : 0u);
    if (current.test)
        abandon_current(why);
    else if (run.gate)
        leakgate_gate_write_results(run.gate);
    _exit(3);
}

/* In a replay: the stop signal's handler.  Once per process. */
static void
arm_replay_stop(void)
{
    static bool armed;

    if (armed || !leakgate_gate_in_replay(run.gate))
        return;
    armed = true;
    signal(leakgate_gate_replay_stop_signal(), replay_stop);
}

static void
arm_guards(void)
{
    static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

    if (current.armed)
        return;
    current.armed = true;
    current.pid = getpid();
    atexit(guard_exit);
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++)
        signal(signals[i], guard_signal);
}

/* CUnit failures that are not the gate's: assertions, suite init and
 * cleanup failures of the user's code. */
static bool
harness_failures(void)
{
    size_t other = 0;

    for (CU_pFailureRecord f = CU_get_failure_list(); f; f = f->pNext) {
        if (!f->strCondition || strncmp(f->strCondition, "leakgate: ", 10) != 0)
            other++;
    }
    return other > run.gate_cleanups;
}

/* --update-thresholds writes what the run measured into the thresholds
 * file; --tighten alone shows what --update-thresholds --tighten would
 * change.  Returns the exit status: once the file accepts what the gate
 * failed, only the harness's own failures remain. */
static int
update_thresholds(leakgate_gate *gate,
                  const struct leakgate_gate_options *opts,
                  int status)
{
    struct leakgate_thresholds_options t = LEAKGATE_THRESHOLDS_OPTIONS_INIT;
    leakgate_thresholds_outcome *out = NULL;
    int rc;

    /* A replay measures for the process that started it, which updates
     * the file from every verdict. */
    if ((!opts->update_thresholds && !opts->tighten) || status == 3 ||
        leakgate_gate_in_replay(gate))
        return status;
    t.tighten = opts->tighten;
    t.write = opts->update_thresholds;
    t.slack = opts->slack;
    rc = leakgate_gate_update_thresholds(gate, &t, &out);
    if (rc < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        return exit_code_for(rc);
    }
    fputs(leakgate_thresholds_outcome_text(out), stderr);
    leakgate_thresholds_outcome_free(out);
    if (opts->update_thresholds && status == 1 && !harness_failures())
        status = 0;
    return status;
}

/* The run's last count: windows over the limits, and those leakgate could
 * not judge (never a pass). */
static void
summary(leakgate_gate *gate, size_t failures)
{
    size_t unjudged = leakgate_gate_unjudged(gate, NULL);

    fprintf(stderr, "leakgate: %zu window%s over the limits", failures,
            failures == 1 ? "" : "s");
    if (unjudged > 0)
        fprintf(stderr, ", %zu not judged (not a pass)", unjudged);
    fputs("\n", stderr);
}

static int
finish(leakgate_gate *gate)
{
    const char *err;
    size_t failures = leakgate_gate_failures(gate);
    int status = 0, rc;

    rc = leakgate_gate_write_results(gate);
    if (rc < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        status = exit_code_for(rc); /* 2: an output refused (a link...) */
    }
    rc = leakgate_cunit_run_error(&err);
    if (rc == LEAKGATE_EUSAGE) {
        fprintf(stderr, "leakgate: %s\n", err);
        return 2;
    }
    if (rc < 0) {
        /* What was judged still counts; the reason comes last. */
        if (failures > 0 || leakgate_gate_unjudged(gate, NULL) > 0)
            summary(gate, failures);
        fprintf(stderr, "leakgate: the gate could not measure: %s\n", err);
        return 3;
    }
    /* A key that matches nothing is a typo or a test that is gone. */
    if (!leakgate_gate_filter(gate) && !leakgate_gate_in_replay(gate)) {
        const char *unmatched = leakgate_gate_unmatched_entries(gate);

        for (const char *p = unmatched; *p; p += strcspn(p, "\n") + 1)
            fprintf(stderr, "leakgate: warning: %.*s\n", (int)strcspn(p, "\n"),
                    p);
    }
    if (*leakgate_gate_scope_hints(gate))
        fprintf(stderr, "leakgate: %s", leakgate_gate_scope_hints(gate));
    summary(gate, failures);
    if (status == 0 && (CU_get_number_of_failures() > 0 ||
                        CU_get_number_of_failure_records() > 0 || failures > 0))
        status = 1;
    return status;
}

/* Hooks of a linked run: journal each window for the shared outputs, so
 * that a process killed in a test still leaves that test in them. */
static void
journal_started(const char *suite,
                const char *test,
                const char *phase,
                void *gate)
{
    leakgate_gate_outputs_started(gate, suite, test, phase);
}

static void
journal_finished(const char *suite, const char *test, void *gate)
{
    if (leakgate_gate_outputs_finished(gate, suite, test) < 0)
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
}

/* Without journals (their store cannot be created) the run goes on; its
 * end says why its files could not be written. */
static void
open_journals(leakgate_gate *gate)
{
    struct leakgate_cunit_hooks h = {journal_started, journal_finished,
                                     journal_finished, gate, NULL};

    if (leakgate_gate_outputs_open(gate) == 0)
        leakgate_cunit__set_hooks(&h);
}

int
leakgate_cunit_main(int argc, char **argv)
{
    struct leakgate_gate_options opts;
    leakgate_gate *gate = NULL;
    int rc, status;

    rc = leakgate_gate_options_parse(&opts, argc, argv);
    if (rc < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        CU_cleanup_registry();
        return 2;
    }
    status = early_exit(&opts);
    if (status >= 0) {
        CU_cleanup_registry();
        return status;
    }
    rc = leakgate_gate_new(&gate, &opts);
    if (rc < 0) {
        fprintf(stderr, "leakgate: %s: %s\n", leakgate_strerror(rc),
                leakgate_error_last());
        CU_cleanup_registry();
        return exit_code_for(rc);
    }
    open_journals(gate);
    arm_guards();
    leakgate_cunit_run(gate, run_basic, NULL);
    leakgate_cunit__set_hooks(NULL); /* they name this gate */
    current.test = NULL;
    status = finish(gate);
    status = update_thresholds(gate, &opts, status);
    run.gate = NULL;
    leakgate_gate_free(gate);
    CU_cleanup_registry();
    return status;
}
