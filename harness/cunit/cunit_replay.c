/* SPDX-License-Identifier: MIT */
/*
 * cunit_replay: the CUnit glue around a replay (see cunit_replay.h).  A
 * test runs once per process, as in a plain run: what a test's fast first
 * pass left is measured by replaying the program in a fresh process, from
 * the last suite's cleanup so that CUnit's summary counts the replayed
 * failures (or after the run, or when the program is about to die).
 */
#include "cunit_replay.h"

#include <CUnit/CUnit.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate.h"
#include "reach.h"

#define SUITE_WINDOW "[suite]"

static struct cunit_run *const run = &leakgate_cunit__run;
static const struct leakgate_cunit_hooks *const hooks = &leakgate_cunit__hooks;

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
    return leakgate_verdict_waits_for_replay(
        leakgate_gate_verdict(run->gate, run->suites[i].name, SUITE_WINDOW));
}

/* The names of the windows waiting for the replay, for its message: at
 * most five, then how many more. */
static void
awaiting_names(char *out, size_t size, size_t n)
{
    size_t shown = 0, used = 0;

    out[0] = '\0';
    for (size_t i = 0; i < run->ntests; i++) {
        const struct wtest *wt = &run->tests[i];

        /* A test of the last `scope: suite` suite waits for its suite's
         * end and may wait for the replay too (its peak's stacks). */
        if (!wt->awaiting &&
            !(wt->suite_wait &&
              leakgate_verdict_waits_for_replay(
                  leakgate_gate_verdict(run->gate, wt->ws->name, wt->name))))
            continue;
        if (!add_awaiting_name(out, size, &used, &shown, n, wt->ws->name,
                               wt->name))
            return;
    }
    /* A lean process's suite window (end_suite_window). */
    for (size_t i = 0; i < run->nsuites; i++) {
        if (suite_window_waits(i) &&
            !add_awaiting_name(out, size, &used, &shown, n, run->suites[i].name,
                               SUITE_WINDOW))
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
void
leakgate_cunit__count_replayed_failure(struct wtest *wt)
{
    CU_pRunSummary sum = CU_get_run_summary();
    CU_pSuite s = wt->ws->suite;
    bool had = false;

    for (CU_pFailureRecord f = CU_get_failure_list(); f; f = f->pNext)
        had |= f->pTest == wt->test;
    sum->nAsserts++;
    sum->nAssertsFailed++;
    wt->record_pending = true;
    if (had)
        return;
    sum->nTestsFailed++;
    s->uiNumberOfTestsFailed++;
    if (s->uiNumberOfTestsSuccess > 0)
        s->uiNumberOfTestsSuccess--;
}

/* The records CUnit's empty list could not take (see cunit_replay.h). */
static CU_pFailureRecord kept;

/* CUnit's CU_get_failure_list() as the glue defines it (exported by the
 * preload library, weak in a linked binary: a CUnit linked statically
 * keeps its own): CUnit's own list, or, when that is empty after a run
 * whose replay failed tests, the records kept for them. */
__attribute__((weak, visibility("default"))) CU_pFailureRecord
CU_get_failure_list(void)
{
    static CU_pFailureRecord (*real)(void);
    CU_pFailureRecord list;
    void *sym;

    if (!real) {
        sym = dlsym(RTLD_NEXT, "CU_get_failure_list");
        if (!sym)
            return kept;
        memcpy(&real, &sym, sizeof sym);
    }
    list = real();
    return list ? list : kept;
}

void
leakgate_cunit__drop_replayed_records(void)
{
    while (kept) {
        CU_pFailureRecord next = kept->pNext;

        free(kept->strFileName);
        free(kept->strCondition);
        free(kept);
        kept = next;
    }
}

/* A CUnit failure record of wt's failing verdict v.  The C library's
 * malloc, not leakgate's heap: CUnit frees the records of its list with
 * free() when the next run starts.  Made after the run, when no window
 * is open: never part of a test's growth. */
static CU_pFailureRecord
new_record(const struct wtest *wt, const leakgate_verdict *v)
{
    CU_pFailureRecord f = malloc(sizeof *f);
    const char *file = NULL;
    unsigned int line = 0;
    char text[512];

    if (!f)
        return NULL;
    leakgate_verdict_location(v, &file, &line);
    leakgate_cunit__failure_text(text, sizeof text, v);
    memset(f, 0, sizeof *f);
    f->type = CUF_AssertFailed;
    f->uiLineNumber = line;
    f->strFileName = strdup(file && *file ? file : "leakgate");
    f->strCondition = strdup(text);
    f->pTest = wt->test;
    f->pSuite = wt->ws->suite;
    if (!f->strFileName || !f->strCondition) {
        free(f->strFileName);
        free(f->strCondition);
        free(f);
        return NULL;
    }
    return f;
}

void
leakgate_cunit__add_replayed_records(void)
{
    CU_pRunSummary sum = CU_get_run_summary();
    CU_pFailureRecord tail = CU_get_failure_list();

    if (tail == kept)
        tail = NULL; /* CUnit's own list is empty */
    while (tail && tail->pNext)
        tail = tail->pNext;
    for (size_t i = 0; i < run->ntests; i++) {
        struct wtest *wt = &run->tests[i];
        const leakgate_verdict *v;
        CU_pFailureRecord f;

        if (!wt->record_pending)
            continue;
        wt->record_pending = false;
        v = leakgate_gate_verdict(run->gate, wt->ws->name, wt->name);
        f = v ? new_record(wt, v) : NULL;
        if (!f)
            continue;
        if (tail) {
            tail->pNext = f;
            f->pPrev = tail;
        } else {
            kept = f;
        }
        tail = f;
        sum->nFailureRecords++;
    }
}

/* Suites whose tests the replay judged after their window closed get the
 * shared-fixture hint now (which marks those tests: their reports point at
 * it), and it is printed and handed to the hooks again after the tests'
 * reports (late_hints_report). */
static void
late_hints(void)
{
    for (size_t i = 0; i < run->nsuites; i++) {
        if (run->suites[i].init_called)
            run->suites[i].late_hint =
                leakgate_gate_late_hint(run->gate, run->suites[i].name);
    }
}

static void
late_hints_report(void)
{
    for (size_t i = 0; i < run->nsuites; i++) {
        const leakgate_verdict *v = run->suites[i].late_hint;

        if (!v)
            continue;
        run->suites[i].late_hint = NULL;
        leakgate_cunit__report_verdict(v);
        run->suite_replayed = v;
        if (hooks->revised)
            hooks->revised(run->suites[i].name, SUITE_WINDOW, hooks->payload);
    }
}

/* The tests of ws (NULL: of every suite) whose report waits for their
 * suite's window (replay_awaiting): CUnit counted them already. */
void
leakgate_cunit__report_late(const struct wsuite *ws)
{
    for (size_t i = 0; i < run->ntests; i++) {
        struct wtest *wt = &run->tests[i];

        if (!wt->report_late || (ws && wt->ws != ws))
            continue;
        wt->report_late = false;
        leakgate_cunit__report_verdict(
            leakgate_gate_verdict(run->gate, wt->ws->name, wt->name));
        if (hooks->revised)
            hooks->revised(wt->ws->name, wt->name, hooks->payload);
    }
}

/*
 * Would `warmup: 1` make a failing test pass (its growth made once)?  A
 * probe in a fresh process tells; the hint is printed as a NOTE and handed
 * to the hooks->  Once per run, after the replay, in every mode.
 */
void
leakgate_cunit__probe_warmup(void)
{
    size_t hinted = 0;
    const char *phase;
    int rc;

    if (run->probed || leakgate_gate_in_replay(run->gate))
        return;
    run->probed = true;
    leakgate_cunit__checkpoint();
    phase = leakgate_cunit__own_work_begin();
    rc = leakgate_gate_probe_warmup(run->gate, hooks->replay_preload, &hinted);
    leakgate_cunit__own_work_end(phase);
    if (rc < 0 || hinted == 0)
        return;
    for (size_t i = 0; i < run->ntests; i++) {
        struct wtest *wt = &run->tests[i];
        const leakgate_verdict *v =
            leakgate_gate_verdict(run->gate, wt->ws->name, wt->name);
        const char *hint = v ? leakgate_verdict_hint(v) : NULL;

        if (!hint || strncmp(hint, "its growth is made once", 23) != 0)
            continue;
        fputs("\nleakgate: NOTE ", stderr);
        leakgate_cunit__put_printed(stderr, wt->ws->name);
        fputc('/', stderr);
        leakgate_cunit__put_printed(stderr, wt->name);
        fprintf(stderr, ": %s", hint);
        if (hooks->revised)
            hooks->revised(wt->ws->name, wt->name, hooks->payload);
    }
}

/* Tests that failed (how: "in the replay") after CUnit's run returned or
 * stopped: its summary, printed before, leaves them out. */
static void
say_late_failures(size_t failed, const char *how)
{
    const char *them = failed == 1 ? "it" : "them";

    if (failed == 0)
        return;
    if (run->rescuing)
        fprintf(stderr,
                "\nleakgate: %zu test%s failed %s after the run stopped: the "
                "results and the exit status count %s\n",
                failed, failed == 1 ? "" : "s", how, them);
    else
        fprintf(stderr,
                "\nleakgate: %zu test%s failed %s after the CUnit run "
                "returned: a summary CUnit printed before leaves %s out; "
                "its counts and failure list, and the exit status, count "
                "%s\n",
                failed, failed == 1 ? "" : "s", how, them, them);
}

/*
 * What a test's fast first pass left is measured by replaying the program
 * in a fresh process (replay.h): a test runs once per process.  Called
 * from the last suite's cleanup, so that CUnit's summary counts the
 * replayed failures (in_cunit); otherwise after the run, or when the
 * program is about to die, when CUnit's summary has been printed already
 * or never will be.
 */
void
leakgate_cunit__replay_awaiting(bool in_cunit)
{
    size_t n = leakgate_gate_replays_pending(run->gate), failed = 0;
    size_t suites = 0;
    const char *phase;
    int rc;
    char names[1024];

    if (n == 0)
        return;
    awaiting_names(names, sizeof names, n);
    for (size_t i = 0; i < run->nsuites; i++)
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
            : hooks->replay_preload
                ? "a suite window, run with `leakgate run --exact` (the "
                  "program then runs on jemalloc and its suite windows are "
                  "measured in the process; without it, every one whose "
                  "init or cleanup leaves memory is replayed)"
                : "a suite window, link the test binary with "
                  "leakgate::cunit_jemalloc instead of leakgate::cunit "
                  "(its suite windows are measured in the process; a lean "
                  "binary replays every one whose init or cleanup leaves "
                  "memory)");
    leakgate_cunit__checkpoint(); /* the waiting records are streamed, not
                                     judged, first */
    phase = leakgate_cunit__own_work_begin();
    rc = leakgate_gate_replay(run->gate, hooks->replay_preload);
    n = leakgate_gate_replays_pending(run->gate);
    if (rc == 0 && n > 0) {
        /* Tests the replay could not measure at a plain run's speed
         * (threads, a peak limit, growth that an earlier replayed test
         * left and this one freed): one more replay, in exact windows. */
        fprintf(stderr,
                "\nleakgate: replaying the run once more to measure %zu "
                "test%s in exact windows (the replay could not measure "
                "%s by allocation order: docs/cli.md, \"The fast first "
                "pass and replays\")\n",
                n, n == 1 ? "" : "s", n == 1 ? "it" : "one of them");
        rc = leakgate_gate_replay(run->gate, hooks->replay_preload);
    }
    leakgate_cunit__own_work_end(phase);
    if (*leakgate_gate_replay_note(run->gate))
        fprintf(stderr, "leakgate: note: %s\n",
                leakgate_gate_replay_note(run->gate));
    /* The replay failing is the gate's failure (exit 3), never a usage
     * error: the first process ran with the same options. */
    leakgate_cunit__gate_error(rc == LEAKGATE_EUSAGE ? LEAKGATE_EIO : rc,
                               "replaying the run");
    late_hints();
    for (size_t i = 0; i < run->ntests; i++) {
        struct wtest *wt = &run->tests[i];
        const leakgate_verdict *v;

        if (!wt->awaiting)
            continue;
        wt->awaiting = false;
        v = leakgate_gate_verdict(run->gate, wt->ws->name, wt->name);
        /* In its suite's cleanup (the last suite's): counted now, for
         * CUnit's summary, reported when the suite's window has closed
         * and said whether it holds a shared fixture. */
        if (in_cunit && wt->ws->window_open && !wt->ws->whole && v) {
            wt->report_late = true;
            if (leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL) {
                failed++;
                leakgate_cunit__count_replayed_failure(wt);
            }
        } else if (leakgate_cunit__report_verdict(v)) {
            failed++;
            leakgate_cunit__count_replayed_failure(wt);
        }
        if (hooks->revised)
            hooks->revised(wt->ws->name, wt->name, hooks->payload);
    }
    late_hints_report();
    if (!in_cunit)
        say_late_failures(failed, "in the replay");
}

/* The test of a thread token (cunit_windows.c: its place in the run). */
static bool
owner_name(uint32_t token, const char **suite, const char **test, void *p)
{
    (void)p;
    if (token == 0 || token > run->ntests)
        return false;
    *suite = run->tests[token - 1].ws->name;
    *test = run->tests[token - 1].name;
    return true;
}

struct orphans_told {
    size_t failed;
};

static void
orphans_revised(uint32_t token, bool failed_now, void *p)
{
    struct orphans_told *told = p;
    struct wtest *wt = &run->tests[token - 1]; /* owner_name() knew it */

    if (leakgate_cunit__report_verdict(
            leakgate_gate_verdict(run->gate, wt->ws->name, wt->name)) &&
        failed_now) {
        told->failed++;
        leakgate_cunit__count_replayed_failure(wt);
    }
    if (hooks->revised)
        hooks->revised(wt->ws->name, wt->name, hooks->payload);
}

void
leakgate_cunit__judge_orphans(bool in_cunit)
{
    struct orphans_told told = {0};

    if (!run->gate || !run->tests || leakgate_gate_in_replay(run->gate))
        return;
    leakgate_cunit__gate_error(
        leakgate_gate__judge_orphans(run->gate, owner_name, orphans_revised,
                                     &told),
        "judging what threads allocated after their test");
    if (!in_cunit)
        say_late_failures(told.failed,
                          "at the run's end (a thread it started kept "
                          "memory after it ended)");
}

/* A replay at the end of the program's tests: what measured windows left
 * reachable is classified again (gate_late.c).  The caller's frames and
 * those above it are live: the scan's stack roots start there. */
void
leakgate_cunit__late_judge(void)
{
    if (!run->gate || !leakgate_gate_in_replay(run->gate))
        return;
    leakgate_cunit__gate_error(
        leakgate_gate__late_judge(run->gate, LEAKGATE_REACH_CALLER_SP()),
        "judging what tests left reachable at the run's end");
}
