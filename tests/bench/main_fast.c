/* SPDX-License-Identifier: MIT */
/*
 * main_fast: a PROTOTYPE of the two-pass gate, to measure it on the
 * benchmark suites before the product glue (harness/cunit.c) adopts it.
 * Not the product: no suite windows (the bench suites have no init or
 * cleanup), no warm-up, no --filter, no result files.
 *
 * Every test runs once in a tracker window (harness/track.h: profiling
 * stays inactive, allocation hooks record what the window allocates and
 * does not free).  CUnit's own failure records are forgotten (exact mode
 * excludes them too).  An empty table passes the test with no dump.  A
 * test that grew is run again, setUp + test + tearDown, in an exact gate
 * window (leakgate_gate_begin/end), whose verdict and report are the
 * product's.  When the exact re-run finds no growth, the growth happened
 * once only: it is reported as a failure without stacks (exact mode would
 * have charged it to this test).  The trampolines carry the "leakgate_"
 * prefix because reports trim every stack at the first leakgate_ frame.
 * BENCH_FAST_IDLE=1 installs the hooks but opens no window (to split the
 * cost between jemalloc's hooked path and the tracker's table).
 */
#include <CUnit/Basic.h>
#include <leakgate/leakgate.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "track.h"

struct ftest {
    CU_pTest test;
    CU_TestFunc fn;
    CU_SetUpFunc setup;
    CU_TearDownFunc teardown;
};

static struct {
    leakgate_gate *gate;
    struct ftest *tests;
    size_t ntests;
    size_t cursor;
    unsigned int records_before;
    size_t windows, grew, failed, errors;
    bool idle; /* BENCH_FAST_IDLE=1: hooks installed, no window (a cost
                  breakdown: jemalloc's hooked path without the table) */
} fast;

static struct ftest *
current(void)
{
    CU_pTest t = CU_get_current_test();

    /* Tests run in registration order: try the next one first. */
    if (fast.cursor < fast.ntests && fast.tests[fast.cursor].test == t)
        return &fast.tests[fast.cursor];
    for (size_t i = 0; i < fast.ntests; i++) {
        if (fast.tests[i].test == t) {
            fast.cursor = i;
            return &fast.tests[i];
        }
    }
    return NULL;
}

static void
leakgate_fast_setup(void)
{
    struct ftest *ft = current();

    fast.records_before = CU_get_number_of_failure_records();
    if (!fast.idle && leakgate_track__begin() != 0)
        fast.errors++;
    if (ft && ft->setup)
        ft->setup();
}

static void
leakgate_fast_test(void)
{
    struct ftest *ft = current();

    if (ft)
        ft->fn();
}

/* CUnit's failure records of this window are CUnit's memory. */
static void
forget_cunit_records(void)
{
    unsigned int i = 0;

    for (CU_pFailureRecord f = CU_get_failure_list(); f; f = f->pNext) {
        if (i++ < fast.records_before)
            continue;
        leakgate_track__forget(f);
        leakgate_track__forget(f->strFileName);
        leakgate_track__forget(f->strCondition);
    }
}

static void
report(const leakgate_verdict *v)
{
    const char *file;
    unsigned int line;

    leakgate_gate_print_verdict(fast.gate, v, stderr);
    if (leakgate_verdict_status(v) != LEAKGATE_STATUS_FAIL)
        return;
    fast.failed++;
    leakgate_verdict_location(v, &file, &line);
    CU_assertImplementation(CU_FALSE, line, leakgate_verdict_report(v),
                            file ? file : "leakgate", "", CU_FALSE);
}

static void
leakgate_fast_rerun(const struct ftest *ft,
                    const struct leakgate_track_result *r)
{
    const char *suite = CU_get_current_suite()->pName;
    const leakgate_verdict *v = NULL;

    if (leakgate_gate_begin(fast.gate, suite, ft->test->pName) != 0) {
        fast.errors++;
        return;
    }
    if (ft->setup)
        ft->setup();
    ft->fn();
    if (ft->teardown)
        ft->teardown();
    if (leakgate_gate_end(fast.gate, 1, &v) != 0 || !v) {
        fast.errors++;
        return;
    }
    if (leakgate_verdict_retained_bytes(v) > 0 ||
        leakgate_verdict_stack_count(v) > 0) {
        report(v);
        return;
    }
    fast.failed++;
    fprintf(stderr,
            "leakgate: FAIL %s/%s: %llu B retained in %llu objects by the "
            "first run only (not by an exact re-run): one-time growth\n",
            suite, ft->test->pName, (unsigned long long)r->live_bytes,
            (unsigned long long)r->live_objs);
}

static void
leakgate_fast_teardown(void)
{
    struct ftest *ft = current();
    struct leakgate_track_result r;

    if (ft && ft->teardown)
        ft->teardown();
    forget_cunit_records();
    fast.windows++;
    if (fast.idle)
        return;
    if (leakgate_track__end(&r) != 0) {
        fast.errors++;
        return;
    }
    if (r.live_objs == 0 || !ft)
        return;
    fast.grew++;
    leakgate_fast_rerun(ft, &r);
}

static int
wrap_registry(void)
{
    CU_pTestRegistry reg = CU_get_registry();
    size_t n = 0;

    for (CU_pSuite s = reg->pSuite; s; s = s->pNext)
        for (CU_pTest t = s->pTest; t; t = t->pNext)
            n++;
    fast.tests = calloc(n + 1, sizeof *fast.tests);
    if (!fast.tests)
        return -1;
    for (CU_pSuite s = reg->pSuite; s; s = s->pNext) {
        for (CU_pTest t = s->pTest; t; t = t->pNext) {
            struct ftest *ft = &fast.tests[fast.ntests++];

            ft->test = t;
            ft->fn = t->pTestFunc;
            ft->setup = s->pSetUpFunc;
            ft->teardown = s->pTearDownFunc;
            t->pTestFunc = leakgate_fast_test;
        }
        s->pSetUpFunc = leakgate_fast_setup;
        s->pTearDownFunc = leakgate_fast_teardown;
    }
    return 0;
}

static int
start(int argc, char **argv)
{
    struct leakgate_gate_options opts;

    if (leakgate_gate_options_parse(&opts, argc, argv) != 0)
        return 2;
    if (leakgate_gate_new(&fast.gate, &opts) != 0)
        return 3;
    if (leakgate_track__install() != 0 || wrap_registry() != 0)
        return 3;
    return 0;
}

int
main(int argc, char **argv)
{
    int status;

    bench_config_read(&bench_cfg);
    fast.idle = getenv("BENCH_FAST_IDLE") != NULL;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    status = bench_register(&bench_cfg) == 0 ? start(argc, argv) : 3;
    if (status != 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        CU_cleanup_registry();
        return status;
    }
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    fprintf(stderr,
            "leakgate: fast pass: %zu windows, %zu grew and ran again in "
            "exact mode, %zu over the limits\n",
            fast.windows, fast.grew, fast.failed);
    status = fast.errors ? 3 : CU_get_number_of_failures() > 0 ? 1 : 0;
    leakgate_gate_free(fast.gate);
    free(fast.tests);
    CU_cleanup_registry();
    return status;
}
