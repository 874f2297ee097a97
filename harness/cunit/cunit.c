/* SPDX-License-Identifier: MIT */
/*
 * cunit: the CUnit glue, the only code that includes CUnit, runs a
 * registry under a gate without touching test code (leakgate_cunit_run()):
 * before the run every suite's init/cleanup/setUp/tearDown and every test
 * function in the registry are replaced by trampolines (cunit_windows.c;
 * restored afterwards), each window named by its suite and test (the
 * second suite or test of one name "NAME#2").  This does not depend on
 * CUnit's message handlers, which CU_basic_run_tests() reinstalls on
 * every run, so user handlers keep working too.  A run started while
 * another one is running (CUnit's CU_basic_run_tests() calls
 * CU_run_all_tests()) is not wrapped again.  Also `--list`, and the stop
 * of a replay that ran too long.  The glue's files, top to bottom:
 * cunit_main.c (leakgate_cunit_main()), this one, cunit_windows.c,
 * cunit_replay.c, cunit_records.c.
 */
#include "leakgate/cunit.h"

#include <CUnit/CUnit.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cunit_hooks.h"
#include "report.h"
#include "cunit_records.h"
#include "cunit_replay.h"
#include "cunit_run.h"
#include "cunit_windows.h"
#include "util.h"

#define SUITE_WINDOW "[suite]"

/* The trampolines' section (cunit_windows.c), for the gate. */
extern const char __start_leakgate_runner[];
extern const char __stop_leakgate_runner[];

static struct cunit_run *const run = &leakgate_cunit__run;
static struct cunit_current *const current = &leakgate_cunit__current;
static const struct leakgate_cunit_hooks *const hooks = &leakgate_cunit__hooks;
static unsigned int run_depth; /* > 0 while a leakgate_cunit_run() runs */

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

/*
 * CUnit runs two suites of one name, and two tests of one name in a suite
 * (CU_add_suite() and CU_add_test() set CUE_DUP_SUITE / CUE_DUP_TEST but
 * add them): leakgate names the second "NAME#2", the third "NAME#3" and
 * so on, in registration order, so that each has a window of its own.
 * "The same" is leakgate_names_same(): names its JSON cannot tell apart.
 */
struct names {
    const char **name;
    unsigned int *ordinal;
    size_t n;
};

static void
names_free(struct names *x)
{
    leakgate_util__free(x->name);
    leakgate_util__free(x->ordinal);
    memset(x, 0, sizeof *x);
}

/* x's ordinals, once its n names are in (leakgate_util__name_ordinals()). */
static int
names_rank(struct names *x)
{
    x->ordinal = leakgate_util__malloc((x->n ? x->n : 1) * sizeof *x->ordinal);
    if (!x->ordinal ||
        leakgate_util__name_ordinals(x->name, x->n, x->ordinal) < 0) {
        names_free(x);
        return LEAKGATE_ENOMEM;
    }
    return 0;
}

/* The ordinals of the registry's suites, in order. */
static int
suite_ordinals(CU_pTestRegistry reg, struct names *x)
{
    size_t n = 0;

    memset(x, 0, sizeof *x);
    for (CU_pSuite s = reg->pSuite; s; s = s->pNext)
        n++;
    x->name = leakgate_util__malloc((n ? n : 1) * sizeof *x->name);
    if (!x->name)
        return LEAKGATE_ENOMEM;
    for (CU_pSuite s = reg->pSuite; s; s = s->pNext)
        x->name[x->n++] = s->pName;
    return names_rank(x);
}

/* The ordinals of a suite's tests, in order. */
static int
test_ordinals(CU_pSuite s, struct names *x)
{
    size_t n = 0;

    memset(x, 0, sizeof *x);
    for (CU_pTest t = s->pTest; t; t = t->pNext)
        n++;
    x->name = leakgate_util__malloc((n ? n : 1) * sizeof *x->name);
    if (!x->name)
        return LEAKGATE_ENOMEM;
    for (CU_pTest t = s->pTest; t; t = t->pNext)
        x->name[x->n++] = t->pName;
    return names_rank(x);
}

/* *out: name, or "name#N" (allocated in *owned) for the Nth of a name. */
static int
window_name(const char *name,
            unsigned int ordinal,
            const char **out,
            char **owned)
{
    size_t size = strlen(name) + 16;

    *owned = NULL;
    *out = name;
    if (ordinal <= 1)
        return 0;
    *owned = leakgate_util__malloc(size);
    if (!*owned)
        return LEAKGATE_ENOMEM;
    snprintf(*owned, size, "%s#%u", name, ordinal);
    *out = *owned;
    return 0;
}

/* Print a window's suite or test name as --list and the reports do. */
static void
put_window_name(FILE *f, const char *name, unsigned int ordinal)
{
    leakgate_cunit__put_printed(f, name);
    if (ordinal > 1)
        fprintf(f, "#%u", ordinal);
}

static int
wrap_test(struct wtest *wt, struct wsuite *ws, CU_pTest t, unsigned int ordinal)
{
    struct leakgate_window_settings settings;
    const char *suite = ws->name;

    if (window_name(t->pName, ordinal, &wt->name, &wt->owned) < 0)
        return LEAKGATE_ENOMEM;
    wt->test = t;
    wt->fn = t->pTestFunc;
    wt->active = t->fActive;
    wt->ws = ws;
    wt->selected = leakgate_gate_selected(run->gate, suite, wt->name) ||
                   (ws->suite_scope && ws->window_selected);
    if (!wt->selected) {
        /* It does not run: no settings to resolve (a one-test process of
         * a large registry would rank every thresholds entry for each). */
        wt->repeat = 1;
        wt->rerun = true;
        run->filtered_total += t->fActive != CU_FALSE;
        t->fActive = CU_FALSE;
        return 0;
    }
    leakgate_gate_settings(&settings, run->gate, suite, wt->name);
    wt->warmup = settings.warmup;
    wt->repeat = settings.repeat;
    wt->rerun = settings.rerun != 0;
    return 0;
}

static int
wrap_suite(struct wsuite *ws, CU_pSuite s, unsigned int ordinal, size_t *ti)
{
    struct leakgate_window_settings settings;
    struct names tests;
    bool any = false;
    size_t first = *ti, k = 0;

    if (window_name(s->pName, ordinal, &ws->name, &ws->owned) < 0 ||
        test_ordinals(s, &tests) < 0)
        return LEAKGATE_ENOMEM;
    ws->suite = s;
    ws->init = s->pInitializeFunc;
    ws->cleanup = s->pCleanupFunc;
    ws->setup = s->pSetUpFunc;
    ws->teardown = s->pTearDownFunc;
    ws->active = s->fActive;
    leakgate_gate_settings(&settings, run->gate, ws->name, NULL);
    ws->suite_scope = settings.suite_scope != 0;
    ws->whole = ws->suite_scope && !leakgate_gate_holds_tests(run->gate);
    ws->window_selected =
        leakgate_gate_selected(run->gate, ws->name, SUITE_WINDOW) != 0;
    for (CU_pTest t = s->pTest; t; t = t->pNext) {
        if (wrap_test(&run->tests[*ti], ws, t, tests.ordinal[k++]) < 0) {
            names_free(&tests);
            return LEAKGATE_ENOMEM;
        }
        any |= run->tests[*ti].selected && t->fActive;
        (*ti)++;
    }
    names_free(&tests);
    leakgate_cunit__install(s);
    if (!any && !ws->window_selected && s->fActive) {
        s->fActive = CU_FALSE;
        run->filtered_suites++;
    } else if (s->fActive) {
        /* CUnit counts the inactive tests of an active suite only. */
        for (size_t i = first; i < *ti; i++)
            run->filtered_tests +=
                run->tests[i].active && !run->tests[i].selected;
    }
    return 0;
}

static int
wrap_registry(void)
{
    CU_pTestRegistry reg = CU_get_registry();
    struct names suites;
    size_t si = 0, ti = 0;
    int rc = 0;

    if (!reg)
        return 0;
    run->nsuites = reg->uiNumberOfSuites;
    run->ntests = count_tests(reg);
    run->suites = leakgate_util__calloc(run->nsuites + 1, sizeof *run->suites);
    run->tests = leakgate_util__calloc(run->ntests + 1, sizeof *run->tests);
    run->pending_cap = run->nsuites + run->ntests + 1;
    run->pending =
        leakgate_util__calloc(run->pending_cap, sizeof *run->pending);
    if (!run->suites || !run->tests || !run->pending ||
        suite_ordinals(reg, &suites) < 0)
        return LEAKGATE_ENOMEM;
    for (CU_pSuite s = reg->pSuite; s && si < run->nsuites; s = s->pNext) {
        rc = wrap_suite(&run->suites[si], s, suites.ordinal[si], &ti);
        si++;
        if (rc < 0)
            break;
    }
    names_free(&suites);
    run->nsuites = si;
    return rc < 0 ? LEAKGATE_ENOMEM : 0;
}

static void
unwrap_registry(void)
{
    /* A registry wrapped in part (no memory for a name) is restored as
     * far as it was wrapped. */
    for (size_t i = 0; run->tests && i < run->ntests; i++) {
        leakgate_util__free(run->tests[i].owned);
        if (!run->tests[i].test)
            continue;
        run->tests[i].test->pTestFunc = run->tests[i].fn;
        run->tests[i].test->fActive = run->tests[i].active;
    }
    for (size_t i = 0; run->suites && i < run->nsuites; i++) {
        struct wsuite *ws = &run->suites[i];

        leakgate_util__free(ws->owned);
        if (!ws->suite)
            continue;
        ws->suite->pInitializeFunc = ws->init;
        ws->suite->pCleanupFunc = ws->cleanup;
        ws->suite->pSetUpFunc = ws->setup;
        ws->suite->pTearDownFunc = ws->teardown;
        ws->suite->fActive = ws->active;
    }
    leakgate_util__free(run->suites);
    leakgate_util__free(run->tests);
    leakgate_util__free(run->pending);
    run->suites = NULL;
    run->tests = NULL;
    run->pending = NULL;
    run->nsuites = run->ntests = 0;
    run->npending = run->pending_cap = 0;
}

/* The run is over: complete the last records, and give a record to every
 * selected test CUnit skipped because its suite's init failed.  (Not to
 * the tests of a suite CUnit started for one test, CU_run_test(): they
 * did not run, and a record would say they passed.) */
static void
finish_run(void)
{
    leakgate_cunit__checkpoint();
    for (size_t i = 0; i < run->ntests; i++) {
        struct wtest *wt = &run->tests[i];

        if (!wt->reported && wt->selected && wt->active &&
            wt->ws->suite->fActive && wt->ws->init_failed)
            leakgate_cunit__finish_record(wt->ws, wt);
    }
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

    if (run->error || leakgate_gate_in_replay(run->gate))
        return;
    n = leakgate_gate_unjudged(run->gate, &first);
    if (n == 0 || !first)
        return;
    why = leakgate_verdict_not_judged_why(first);
    leakgate_name_escape(name, sizeof name, leakgate_verdict_name(first));
    run->error = LEAKGATE_EIO;
    snprintf(run->error_text, sizeof run->error_text,
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
    if (!leakgate_gate_filter(run->gate))
        return true;
    for (size_t i = 0; i < run->ntests; i++) {
        if (run->tests[i].selected)
            return true;
    }
    for (size_t i = 0; i < run->nsuites; i++) {
        if (run->suites[i].window_selected)
            return true;
    }
    return false;
}

/* The run's error: two windows leakgate cannot tell apart (what names
 * them both: "suite 'S' has", "the registry has"; kind: "tests",
 * "suites"; a, b: their CUnit names; name: a's window name).  Only a
 * name that looks like an ordinal ("S#2" next to two suites "S") or that
 * differs in bytes that are not UTF-8 from such a name gets here. */
static void
say_same(const char *where,
         const char *kind,
         const char *a,
         const char *b,
         const char *name)
{
    char x[160], y[160], w[160];

    leakgate_name_escape(x, sizeof x, a);
    leakgate_name_escape(y, sizeof y, b);
    leakgate_name_escape(w, sizeof w, name);
    run->error = LEAKGATE_EUSAGE;
    snprintf(run->error_text, sizeof run->error_text,
             "%s %s '%s' and '%s' that leakgate would both name '%s' (the "
             "second %s of one name is NAME#2, the third NAME#3; JSON reads "
             "a byte that is not UTF-8 as U+FFFD) and cannot judge apart; "
             "rename one",
             where, kind, x, y, w, kind[0] == 't' ? "test" : "suite");
}

/* Two selected tests of a suite, or two selected suites, whose window
 * names are the same (leakgate_names_same()) although the ordinals make
 * the names of CUnit's same-named ones unique, or a test named as its
 * suite's own window: refused before any test runs (exit 2), rather than
 * one's verdict lost under the other's. */
/* Of the n windows names[] (of tests, or suites), the first whose name is
 * the same as an earlier one's: *second its index, *first that earlier
 * one's.  false when all differ or on ENOMEM (*nomem). */
static bool
first_same(const char *const *names,
           size_t n,
           size_t *first,
           size_t *second,
           bool *nomem)
{
    unsigned int small[64];
    unsigned int *ord;
    bool found = false;

    if (n < 2)
        return false;
    ord = n <= 64 ? small : leakgate_util__malloc(n * sizeof *ord);
    *nomem = !ord || leakgate_util__name_ordinals(names, n, ord) < 0;
    for (size_t i = 0; !*nomem && !found && i < n; i++) {
        if (ord[i] < 2)
            continue;
        for (size_t k = 0; k < i; k++) {
            if (leakgate_names_same(names[k], names[i])) {
                *first = k;
                *second = i;
                found = true;
                break;
            }
        }
    }
    if (ord != small)
        leakgate_util__free(ord);
    return found;
}

static int
refuse_same_names(void)
{
    char suite[160], where[200];
    /* The windows that run: a few in a one-test process (ctest), whose
     * start should not touch a fresh page of heap for them. */
    const char *names_small[64];
    size_t index_small[64];
    const char **names = names_small;
    size_t *index = index_small;
    size_t first, second, n = run->nsuites + 1;
    bool nomem;
    int rc = 0;

    for (size_t i = 0; i < run->ntests && n <= 64; i++)
        n += run->tests[i].selected && run->tests[i].active;
    if (n > 64) {
        names = leakgate_util__malloc((run->ntests + run->nsuites + 1) *
                                      sizeof *names);
        index = leakgate_util__malloc((run->ntests + run->nsuites + 1) *
                                      sizeof *index);
    }
    nomem = !names || !index;

    for (size_t i = 0; !nomem && rc == 0 && i < run->ntests;) {
        const struct wsuite *ws = run->tests[i].ws;

        /* One suite's tests (contiguous), those that run. */
        for (n = 0; i < run->ntests && run->tests[i].ws == ws; i++) {
            const struct wtest *a = &run->tests[i];

            if (!a->selected || !a->active)
                continue;
            if (strcmp(a->test->pName, SUITE_WINDOW) == 0) {
                leakgate_name_escape(where, sizeof where, ws->name);
                run->error = LEAKGATE_EUSAGE;
                snprintf(run->error_text, sizeof run->error_text,
                         "suite '%s' has a test named '%s', the name of the "
                         "suite's own window: rename it",
                         where, SUITE_WINDOW);
                rc = LEAKGATE_EUSAGE;
                break;
            }
            index[n] = i;
            names[n++] = a->name;
        }
        if (rc == 0 && first_same(names, n, &first, &second, &nomem)) {
            const struct wtest *a = &run->tests[index[first]];
            const struct wtest *b = &run->tests[index[second]];

            leakgate_name_escape(suite, sizeof suite, ws->name);
            snprintf(where, sizeof where, "suite '%s' has", suite);
            say_same(where, "tests", a->test->pName, b->test->pName, a->name);
            rc = LEAKGATE_EUSAGE;
        }
    }
    n = 0;
    for (size_t i = 0; !nomem && rc == 0 && i < run->nsuites; i++) {
        const struct wsuite *ws = &run->suites[i];

        if (ws->active && ws->suite->fActive) {
            index[n] = i;
            names[n++] = ws->name;
        }
    }
    if (!nomem && rc == 0 && first_same(names, n, &first, &second, &nomem)) {
        say_same("the CUnit registry has", "suites",
                 run->suites[index[first]].suite->pName,
                 run->suites[index[second]].suite->pName,
                 run->suites[index[first]].name);
        rc = LEAKGATE_EUSAGE;
    }
    if (names != names_small) {
        leakgate_util__free(names);
        leakgate_util__free(index);
    }
    return nomem ? LEAKGATE_ENOMEM : rc;
}

/* A test the run measures exactly from the start (`rerun: false`,
 * `repeat:`): a lean process starts again with jemalloc first, and one on
 * jemalloc without the map of its objects starts again with it
 * (leakgate_gate_plan()), before any test has run. */
static int
plan_exact(void)
{
    for (size_t i = 0; i < run->ntests; i++) {
        const struct wtest *wt = &run->tests[i];
        int rc;

        /* A `scope: suite` suite's tests are held whatever they say. */
        if (!wt->selected || !wt->active || !wt->ws->active ||
            wt->ws->suite_scope || !leakgate_cunit__exact_from_start(wt))
            continue;
        rc = leakgate_gate_plan(run->gate, wt->ws->name, wt->name);
        if (rc < 0) {
            leakgate_cunit__gate_error(rc, "starting again with jemalloc");
            return rc;
        }
    }
    return 0;
}

/* The run stops in the current test: every selected test it never reached
 * (no record yet; not one of a suite whose init failed, which CUnit
 * skips) is listed as not run, with where the run stopped.  Not in a
 * replay: its first process lists its own. */
static void
list_not_run(const char *why)
{
    struct leakgate_buf where = LEAKGATE_BUF_INIT;

    if (leakgate_gate_in_replay(run->gate))
        return;
    leakgate_buf__puts(&where, "the run stopped at ");
    leakgate_util__name_escape(&where, current->suite);
    leakgate_buf__puts(&where, "/");
    leakgate_util__name_escape(&where, current->test);
    leakgate_buf__printf(&where, " (%s)", why);
    for (size_t i = 0; !where.failed && i < run->ntests; i++) {
        const struct wtest *wt = &run->tests[i];

        if (!wt->selected || !wt->active || wt->ws->init_failed ||
            (wt->ws->name == current->suite && wt->name == current->test) ||
            leakgate_gate_verdict(run->gate, wt->ws->name, wt->name))
            continue;
        /* Told as any finished record (leakgate run lists it too). */
        if (leakgate_gate_not_run(run->gate, wt->ws->name, wt->name,
                                  where.ptr) == 0 &&
            hooks->finished)
            hooks->finished(wt->ws->name, wt->name, hooks->payload);
    }
    leakgate_buf__dispose(&where);
}

/* The hooks learn every test the run will reach (not in a replay: its
 * first process told them). */
static void
tell_planned(void)
{
    if (!hooks->planned || leakgate_gate_in_replay(run->gate))
        return;
    for (size_t i = 0; i < run->ntests; i++) {
        const struct wtest *wt = &run->tests[i];

        if (wt->selected && wt->active)
            hooks->planned(wt->ws->name, wt->name, hooks->payload);
    }
}

void
leakgate_cunit__rescue(void)
{
    if (run->gate && run_depth > 0 && run->tests) {
        run->rescuing = true;
        /* Dying in a test: the tests after it never run (already listed
         * when the guards gave the reason: leakgate_cunit__abandon()). */
        if (current->test)
            list_not_run("the program ended in it: it called exit() or "
                         "died of a signal");
        leakgate_cunit__replay_awaiting(false);
        leakgate_cunit__report_late(NULL);
        /* The run ends here: its one thresholds document, which the
         * reports above say holds their entries. */
        if (*leakgate_gate_scope_hints(run->gate))
            fprintf(stderr, "leakgate: %s",
                    leakgate_gate_scope_hints(run->gate));
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
void
leakgate_cunit__abandon(const char *why)
{
    char line[256];

    if (!run->gate || !current->test)
        return;
    leakgate_gate_abandon(run->gate, current->suite, current->test, why);
    list_not_run(why);
    leakgate_cunit__rescue();
    leakgate_gate_write_results(run->gate);
    fputs("\nleakgate: ", stderr);
    leakgate_cunit__put_printed(stderr, current->suite);
    fputc('/', stderr);
    leakgate_cunit__put_printed(stderr, current->test);
    snprintf(line, sizeof line, ": %s\n", why);
    fputs(line, stderr);
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
             run->gate ? leakgate_gate_replay_timeout(run->gate) : 0u);
    if (current->test)
        leakgate_cunit__abandon(why);
    else if (run->gate)
        leakgate_gate_write_results(run->gate);
    _exit(3);
}

/*
 * The first pass's watchdog (--test-timeout): a periodic timer, every half
 * of the timeout, whose handler checks whether the same phase (a test with
 * its setUp and tearDown, a suite's init or cleanup) is still running
 * since its last two ticks, i.e. for a whole timeout: then the test is
 * named, recorded as not judged, the verdicts reached are written (the
 * tests waiting for a replay replayed first) and the run ends, exit 3.  No
 * call per test: a test that finishes only advances a counter.  The signal
 * is a real-time one (not SIGALRM: the program may use alarm()), with
 * SA_RESTART; it arrives once per half timeout (15 minutes by default).
 */
#define WATCHDOG_SIGNAL (SIGRTMIN + 4)
static struct {
    bool on;
    timer_t timer;
    unsigned int timeout_s;
    unsigned long seen; /* current->phases at the last tick */
    unsigned int ticks; /* ticks the same phase has been running */
} watchdog;

bool
leakgate_cunit__lookalike(const char *name,
                          const void *fn,
                          char *out,
                          size_t size)
{
    CU_pTestRegistry (*get)(void) = CU_get_registry;
    const void *registry;
    Dl_info theirs, ours;

    memcpy(&registry, &get, sizeof registry); /* ISO C: no direct cast */
    if (!fn || !dladdr(fn, &theirs) || !dladdr(registry, &ours) ||
        theirs.dli_fbase == ours.dli_fbase)
        return false;
    snprintf(out, size,
             "the program's %s comes from %s, a CUnit look-alike runtime "
             "(the CUnit API over a registry of its own), not from %s, "
             "the CUnit whose registry leakgate reads: its tests cannot be "
             "gated, and a run of them would measure nothing. Build the "
             "tests against CUnit's libcunit to gate them",
             name, theirs.dli_fname ? theirs.dli_fname : "another library",
             ours.dli_fname ? ours.dli_fname : "libcunit");
    return true;
}

void
leakgate_cunit__summary(leakgate_gate *gate, size_t failures)
{
    char line[LEAKGATE_REPORT_JUDGED_SIZE];

    fprintf(stderr, "leakgate: %s\n",
            leakgate_report__judged(line, leakgate_gate_judged(gate), failures,
                                    leakgate_gate_unjudged(gate, NULL)));
}

static void
watchdog_tick(int sig)
{
    const char *suite = current->suite, *test = current->test;
    char why[256];

    (void)sig;
    if (!current->test || current->phases != watchdog.seen) {
        watchdog.seen = current->phases;
        watchdog.ticks = 0;
        return;
    }
    if (++watchdog.ticks < 2)
        return;
    alarm(10);
    snprintf(why, sizeof why,
             "it ran longer than the test timeout (%u s: --test-timeout, "
             "LEAKGATE_TEST_TIMEOUT), which stopped the run there",
             watchdog.timeout_s);
    leakgate_cunit__abandon(why);
    /* Its record, as any finished one (leakgate run lists it too). */
    if (hooks->finished && suite && test)
        hooks->finished(suite, test, hooks->payload);
    if (hooks->stopped) {
        hooks->stopped("a test ran longer than the test timeout",
                       hooks->payload);
    } else {
        /* What was judged still counts; the reason comes last. */
        leakgate_cunit__summary(run->gate, leakgate_gate_failures(run->gate));
        fputs("leakgate: the gate could not measure: a test ran longer than "
              "the test timeout\n",
              stderr);
    }
    _exit(3);
}

static void
arm_watchdog(void)
{
    struct sigaction sa;
    struct sigevent ev;
    struct itimerspec period;
    unsigned int t = leakgate_gate_test_timeout(run->gate);

    if (watchdog.on || t == 0 || leakgate_gate_in_replay(run->gate))
        return;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = watchdog_tick;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    memset(&ev, 0, sizeof ev);
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = WATCHDOG_SIGNAL;
    if (sigaction(WATCHDOG_SIGNAL, &sa, NULL) != 0 ||
        timer_create(CLOCK_MONOTONIC, &ev, &watchdog.timer) != 0)
        return; /* no watchdog: ctest's TIMEOUT still applies */
    memset(&period, 0, sizeof period);
    period.it_value.tv_sec = t / 2;
    period.it_value.tv_nsec = t % 2 ? 500000000L : 0;
    period.it_interval = period.it_value;
    watchdog.timeout_s = t;
    watchdog.seen = current->phases;
    watchdog.ticks = 0;
    watchdog.on = timer_settime(watchdog.timer, 0, &period, NULL) == 0;
}

static void
disarm_watchdog(void)
{
    if (!watchdog.on)
        return;
    (void)timer_delete(watchdog.timer);
    watchdog.on = false;
}

/* In a replay: the stop signal's handler.  Once per process. */
static void
arm_replay_stop(void)
{
    static bool armed;

    if (armed || !leakgate_gate_in_replay(run->gate))
        return;
    armed = true;
    signal(leakgate_gate_replay_stop_signal(), replay_stop);
}

int
leakgate_cunit_run(leakgate_gate *gate, int (*fn)(void *payload), void *payload)
{
    CU_BOOL fail_on_inactive;
    int result;

    if (run_depth > 0)
        return fn(payload); /* the outer run has wrapped the registry */
    fail_on_inactive = CU_get_fail_on_inactive();
    leakgate_cunit__drop_replayed_records(); /* CUnit clears its list */
    memset(run, 0, sizeof *run);
    run->gate = gate;
    leakgate_gate_set_runner(gate, __start_leakgate_runner,
                             __stop_leakgate_runner);
    if (wrap_registry() < 0) {
        leakgate_cunit__gate_error(LEAKGATE_ENOMEM,
                                   "wrapping the CUnit registry");
        unwrap_registry();
        return -1;
    }
    if (!any_selected()) {
        /* A typo in --filter must not pass as a run of no test. */
        run->error = LEAKGATE_EUSAGE;
        snprintf(run->error_text, sizeof run->error_text,
                 "--filter '%s' matches no test (--list, or "
                 "LEAKGATE_LIST=1 for a program that reads its own "
                 "options, shows the names)",
                 leakgate_gate_filter(gate));
        unwrap_registry();
        return -1;
    }
    if (refuse_same_names() < 0 || plan_exact() < 0) {
        unwrap_registry();
        return -1;
    }
    tell_planned();
    /* Tests left out by --filter are deactivated; they are not failures. */
    CU_set_fail_on_inactive(CU_FALSE);
    arm_replay_stop();
    arm_watchdog();
    run_depth++;
    result = fn(payload);
    run_depth--;
    disarm_watchdog();
    CU_set_fail_on_inactive(fail_on_inactive);
    leakgate_cunit__replay_awaiting(false);
    leakgate_cunit__late_judge();
    /* A replay stops now when that was all it waited for (a program that
     * runs its tests again does so without it). */
    leakgate_cunit__stop_when_replayed();
    leakgate_cunit__judge_orphans(false);
    leakgate_cunit__add_replayed_records();
    leakgate_cunit__probe_warmup();
    finish_run();
    refuse_unjudged();
    unwrap_registry();
    return result;
}

int
leakgate_cunit_run_error(const char **text_out)
{
    *text_out = run->error_text;
    return run->error;
}

int
leakgate_cunit_list(void)
{
    CU_pTestRegistry reg = CU_get_registry();
    struct names suites;
    size_t si = 0;

    if (!reg)
        return 0;
    if (suite_ordinals(reg, &suites) < 0)
        return LEAKGATE_ENOMEM;
    for (CU_pSuite s = reg->pSuite; s; s = s->pNext) {
        unsigned int n = suites.ordinal[si++];
        struct names tests;
        size_t k = 0;

        if (test_ordinals(s, &tests) < 0) {
            names_free(&suites);
            return LEAKGATE_ENOMEM;
        }
        for (CU_pTest t = s->pTest; t; t = t->pNext) {
            put_window_name(stdout, s->pName, n);
            putchar('/');
            put_window_name(stdout, t->pName, tests.ordinal[k++]);
            putchar('\n');
        }
        names_free(&tests);
        put_window_name(stdout, s->pName, n);
        printf("/%s\n", SUITE_WINDOW);
    }
    names_free(&suites);
    return fflush(stdout) == 0 ? 0 : LEAKGATE_EIO;
}
