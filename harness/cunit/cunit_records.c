/* SPDX-License-Identifier: MIT */
/*
 * cunit_records: the glue's shared run state and its records (see
 * cunit_records.h): verdicts reported on stderr and to CUnit, CUnit's
 * failure records attached as notes at each checkpoint, finished records
 * handed to the hooks.
 */
#include "cunit_records.h"
#include "cunit_calls.h"
#include "verdict.h"
#include "util.h"

#include <CUnit/CUnit.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SUITE_WINDOW "[suite]"

struct cunit_run leakgate_cunit__run;
struct leakgate_cunit_hooks leakgate_cunit__hooks;
struct cunit_current leakgate_cunit__current;

static struct cunit_run *const run = &leakgate_cunit__run;
static const struct leakgate_cunit_hooks *const hooks = &leakgate_cunit__hooks;
static struct cunit_current *const current = &leakgate_cunit__current;

void
leakgate_cunit__set_hooks(const struct leakgate_cunit_hooks *h)
{
    if (h)
        leakgate_cunit__hooks = *h;
    else
        memset(&leakgate_cunit__hooks, 0, sizeof leakgate_cunit__hooks);
}

void
leakgate_cunit__gate_error(int rc, const char *what)
{
    if (rc >= 0 || run->error)
        return;
    run->error = rc;
    snprintf(run->error_text, sizeof run->error_text, "%s: %s (%s)", what,
             leakgate_strerror(rc), leakgate_error_last());
}

/* Print name as leakgate_name_escape() does: a newline in a name must not
 * split its line. */
void
leakgate_cunit__put_printed(FILE *f, const char *name)
{
    char small[256], *big = NULL;
    size_t n = leakgate_name_escape(small, sizeof small, name);

    if (n >= sizeof small) {
        big = leakgate_util__malloc(n + 1);
        if (big)
            leakgate_name_escape(big, n + 1, name);
    }
    fputs(big ? big : small, f);
    leakgate_util__free(big);
}

struct wsuite *
leakgate_cunit__suite_of(CU_pSuite s)
{
    if (!s)
        return NULL;
    for (size_t k = 0; k < run->nsuites; k++) {
        size_t i = (run->suite_hint + k) % run->nsuites;

        if (run->suites[i].suite == s) {
            run->suite_hint = i;
            return &run->suites[i];
        }
    }
    return NULL;
}

struct wtest *
leakgate_cunit__test_of(CU_pTest t)
{
    if (!t)
        return NULL;
    for (size_t k = 0; k < run->ntests; k++) {
        size_t i = (run->test_hint + k) % run->ntests;

        if (run->tests[i].test == t) {
            run->test_hint = i;
            return &run->tests[i];
        }
    }
    return NULL;
}

struct wsuite *
leakgate_cunit__current_suite(void)
{
    return leakgate_cunit__suite_of(CU_get_current_suite());
}

struct wtest *
leakgate_cunit__current_test(void)
{
    return leakgate_cunit__test_of(CU_get_current_test());
}

/*
 * CUnit's record of a gate failure: one line (the report's first line and
 * where the rest is), at the test's own line; the whole report is on
 * stderr.  A multi-line text would be printed twice on a terminal and
 * break a TAP or JUnit handler's output.
 */
void
leakgate_cunit__failure_text(char *text, size_t size, const leakgate_verdict *v)
{
    const char *report = leakgate_verdict_report(v);
    size_t len = strcspn(report, "\n");

    snprintf(text, size, "%.*s (leakgate's report is on stderr)",
             (int)(len < 400 ? len : 400), report);
}

static void
add_cunit_failure(const leakgate_verdict *v)
{
    const char *file;
    unsigned int line;
    char text[512];

    leakgate_verdict_location(v, &file, &line);
    leakgate_cunit__failure_text(text, sizeof text, v);
    CU_assertImplementation(CU_FALSE, line, text, file ? file : "leakgate", "",
                            CU_FALSE);
}

void
leakgate_cunit__note_failed(const char *suite,
                            const char *test,
                            const struct leakgate_note *n)
{
    const char *said = n->message;

    if (strncmp(said, "leakgate: ", 10) == 0)
        said += 10;
    fputs("\nleakgate: FAIL ", stderr);
    leakgate_cunit__put_printed(stderr, suite);
    fputc('/', stderr);
    leakgate_cunit__put_printed(stderr, test);
    if (n->file && *n->file)
        fprintf(stderr, ": %s:%u", n->file, n->line);
    fprintf(stderr, ": %s\n", said);
    /* Its condition starts "leakgate: ": not made a note again. */
    if (CU_get_current_test())
        CU_assertImplementation(CU_FALSE, n->line, n->message,
                                n->file && *n->file ? n->file : "leakgate", "",
                                CU_FALSE);
}

/* Report a verdict on stderr; for a failed test window also add a CUnit
 * failure record so CUnit's own summary counts it.  Returns true when the
 * verdict failed (a suite window's cleanup then reports failure to CUnit:
 * CUnit cannot record an assertion outside a test). */
bool
leakgate_cunit__report_verdict(const leakgate_verdict *v)
{
    if (!v)
        return false;
    /* leakgate's lines start on a line of their own: CUnit's "  Test: t
     * ..." (or the program's own output) is usually mid-line here. */
    if (*leakgate_verdict_report(v))
        fputc('\n', stderr);
    leakgate_gate_print_verdict(run->gate, v, stderr);
    if (leakgate_verdict_status(v) != LEAKGATE_STATUS_FAIL)
        return false;
    if (CU_get_current_test())
        add_cunit_failure(v);
    return true;
}

/* Report a closed window's verdict; one that waits for the replay is
 * reported after it (wt->awaiting).  Returns true when it failed. */
bool
leakgate_cunit__take_verdict(struct wtest *wt, const leakgate_verdict *v)
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
    return leakgate_cunit__report_verdict(v);
}

/* A replay stops after the last window it measures (a test's, or a lean
 * process's suite window): what runs after it cannot change its verdicts. */
void
leakgate_cunit__stop_when_replayed(void)
{
    if (!leakgate_gate_replay_done(run->gate))
        return;
    leakgate_gate_write_results(run->gate);
    fflush(NULL);
    _exit(0);
}

void
leakgate_cunit__started(const struct wsuite *ws,
                        const char *test,
                        const char *phase)
{
    current->suite = ws->name;
    current->test = test;
    current->phases++;
    leakgate_gate_replay_beat(run->gate);
    if (hooks->started)
        hooks->started(ws->name, test, phase, hooks->payload);
}

const char *
leakgate_cunit__own_work_begin(void)
{
    const char *test = current->test;

    current->test = NULL; /* the watchdog's ticks find no phase */
    return test;
}

void
leakgate_cunit__own_work_end(const char *test)
{
    current->phases++;
    current->test = test;
}

void
leakgate_cunit__phase_over(void)
{
    current->test = NULL;
    leakgate_gate_replay_beat(run->gate);
}

void
leakgate_cunit__push_pending(struct wsuite *ws, struct wtest *wt)
{
    if (run->npending < run->pending_cap) {
        run->pending[run->npending].ws = ws;
        run->pending[run->npending].wt = wt;
        run->npending++;
    }
}

/* Hand one failure record (an assertion, a suite init failure) to the gate
 * as a note of its test, for JUnit/JSON. */
static void
note_failure(CU_pFailureRecord f)
{
    const struct wsuite *ws = leakgate_cunit__suite_of(f->pSuite);
    const struct wtest *wt = leakgate_cunit__test_of(f->pTest);
    const char *suite = ws ? ws->name : f->pSuite ? f->pSuite->pName : "";
    const char *test = wt ? wt->name : SUITE_WINDOW;
    const char *msg = f->strCondition ? f->strCondition : "";

    if (strncmp(msg, "leakgate: ", 10) == 0)
        return; /* the gate's own failure, already in its verdict */
    leakgate_gate_note_failure(run->gate, suite, test, f->strFileName,
                               f->uiLineNumber, msg);
}

/* The record of a test or suite is over: every test that ran has a record
 * (a note-only one when it had no window); tell the hooks-> */
void
leakgate_cunit__finish_record(struct wsuite *ws, struct wtest *wt)
{
    const char *test = wt ? wt->name : SUITE_WINDOW;

    if (!ws)
        return;
    if (wt) {
        wt->reported = true;
        leakgate_gate_note_failure(run->gate, ws->name, test, NULL, 0, NULL);
    }
    if (hooks->finished)
        hooks->finished(ws->name, test, hooks->payload);
}

/* Attach the failure records CUnit added since the last checkpoint, then
 * complete the pending records.  Allocates: only with recording off. */
void
leakgate_cunit__checkpoint(void)
{
    CU_pFailureRecord f = run->seen ? run->seen->pNext : CU_get_failure_list();

    for (; f; f = f->pNext) {
        note_failure(f);
        run->seen = f;
    }
    for (size_t i = 0; i < run->npending; i++)
        leakgate_cunit__finish_record(run->pending[i].ws, run->pending[i].wt);
    run->npending = 0;
}

bool
leakgate_cunit__repeats(const struct wtest *wt)
{
    return wt->repeat >= 2 && !wt->ws->suite_scope;
}

/* A test of a suite without `scope: suite` that is measured in an exact
 * window from the start (`rerun: false`, `repeat:`), not a fast one. */
bool
leakgate_cunit__exact_from_start(const struct wtest *wt)
{
    return !wt->rerun || leakgate_cunit__repeats(wt);
}

int
leakgate_cunit__call_real(void *payload)
{
    struct leakgate_cunit_call *c = payload;
    void *sym = dlsym(RTLD_NEXT, c->name);
    CU_ErrorCode (*run0)(void);
    CU_ErrorCode (*run1)(CU_pSuite);
    CU_ErrorCode (*run2)(CU_pSuite, CU_pTest);
    void (*plain)(void);

    if (!sym)
        return -1;
    /* ISO C has no cast between object and function pointers. */
    if (c->kind == LEAKGATE_CUNIT_CALL_VOID) {
        memcpy(&run0, &sym, sizeof sym);
        c->result = run0();
    } else if (c->kind == LEAKGATE_CUNIT_CALL_VOID_SUITE) {
        memcpy(&run1, &sym, sizeof sym);
        c->result = run1(c->suite);
    } else if (c->kind == LEAKGATE_CUNIT_CALL_VOID_TEST) {
        memcpy(&run2, &sym, sizeof sym);
        c->result = run2(c->suite, c->test);
    } else {
        memcpy(&plain, &sym, sizeof sym);
        plain();
        c->result = CUE_SUCCESS;
    }
    return (int)c->result;
}
