/* SPDX-License-Identifier: MIT */
/*
 * cunit_main: leakgate_cunit_main(), a linked test binary's whole run:
 * the options, --help/--version/--list and a ctest run's [outputs] test,
 * the gate, the journals of shared outputs, the guards that keep a test
 * calling exit() or dying of a signal from ending the run as a pass, the
 * registry's run (cunit.c), the last counts and the exit status, and
 * --update-thresholds.  Top file of the CUnit glue.
 *
 * A linked binary's other ways into CUnit are gated too: CUnit's run
 * functions (CU_basic_run_tests, CU_basic_run_suite, CU_basic_run_test,
 * CU_run_all_tests, CU_run_suite, CU_run_test, CU_automated_run_tests)
 * are defined here, weak, so that a program's own call of one (a runner
 * that takes a suite name: `./unit_tests SUITE` -> CU_basic_run_suite())
 * runs the real one (dlsym(RTLD_NEXT)) under a gate made from the
 * environment's LEAKGATE_* options (argv is the program's), prints the
 * same last line, and makes the process's exit status the gate's when the
 * program would exit 0 (atexit).  Calls inside a gated run, and
 * leakgate_cunit_main()'s own, go straight to CUnit.  Not in the preload
 * library (LEAKGATE_PRELOAD_BUILD), which has its own interposers.
 */
#include "leakgate/cunit.h"

#include <CUnit/Automated.h>
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gate.h"

#include "cunit_calls.h"
#include "cunit_hooks.h"
#include "cunit_records.h"
#include "cunit_run.h"
#include "leakgate/thresholds.h"

static struct cunit_run *const run = &leakgate_cunit__run;
static struct cunit_current *const current = &leakgate_cunit__current;

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

static bool
guarded(void)
{
    return current->armed && current->test && getpid() == current->pid;
}

static void
guard_exit(void)
{
    if (!guarded())
        return;
    leakgate_cunit__abandon(
        "the test called exit() before it returned; the run "
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
        leakgate_cunit__abandon(why);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

static void
arm_guards(void)
{
    static const int signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

    if (current->armed)
        return;
    current->armed = true;
    current->pid = getpid();
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
    return other > run->gate_cleanups;
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
            leakgate_cunit__summary(gate, failures);
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
    leakgate_cunit__summary(gate, failures);
    if (status == 0 && (CU_get_number_of_failures() > 0 ||
                        CU_get_number_of_failure_records() > 0 || failures > 0))
        status = 1;
    /* Exit 0 means measured and within the limits: a run that judged no
     * window measured nothing (no test ran, or none was measured). */
    if (status == 0 && leakgate_gate_judged(gate) == 0 &&
        !leakgate_gate_in_replay(gate)) {
        fprintf(stderr, "leakgate: the gate could not measure: no window "
                        "was judged (the program's CUnit run ran no test "
                        "under the gate): not a pass\n");
        status = 3;
    }
    /* Only suites' init and cleanup were judged, no --filter chose them:
     * no test ran (suites without tests, or tests all inactive). */
    if (status == 0 && leakgate_gate__tests_judged(gate) == 0 &&
        !leakgate_gate_filter(gate) && !leakgate_gate_in_replay(gate)) {
        fprintf(stderr, "leakgate: the gate could not measure: no test ran "
                        "(only suites' init and cleanup were judged: suites "
                        "without tests, or every test inactive): not a "
                        "pass\n");
        status = 3;
    }
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
    struct leakgate_cunit_hooks h = {journal_started,
                                     journal_finished,
                                     journal_finished,
                                     gate,
                                     NULL,
                                     NULL,
                                     NULL};

    if (leakgate_gate_outputs_open(gate) == 0)
        leakgate_cunit__set_hooks(&h);
}

/* A CUnit look-alike runtime linked ahead of libcunit (cunit_run.h): the
 * program registers its tests there, and the glue's registry stays empty.
 * Refused before the first test (and before a listing), naming the
 * library, as `leakgate run` refuses it: never a run that measured
 * nothing.  Returns 3 after saying so, or -1. */
static int
refuse_lookalike(void)
{
    char message[1400];

    if (!leakgate_cunit__lookalike("CU_add_suite",
                                   dlsym(RTLD_DEFAULT, "CU_add_suite"), message,
                                   sizeof message))
        return -1;
    fprintf(stderr, "leakgate: %s\n", message);
    return 3;
}

/* leakgate_cunit_main() is running its registry (its own call of
 * CU_basic_run_tests goes to CUnit); it was called. */
static bool main_running, main_called;

/* The worst exit status of the runs the program started itself (0: none
 * failed), and whether one was gated (cunit_main.c's linked runs, below;
 * never in the preload library). */
static int linked_status;
static bool linked_gated;

int
leakgate_cunit_main(int argc, char **argv)
{
    struct leakgate_gate_options opts;
    leakgate_gate *gate = NULL;
    int rc, status;

    main_called = true;
    /* The program ran its tests already, gated (its own
     * CU_basic_run_tests() before this last line): a test runs once per
     * process, so this is the verdict. */
    if (linked_gated) {
        CU_cleanup_registry();
        return linked_status;
    }
    rc = leakgate_gate_options_parse(&opts, argc, argv);
    if (rc < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        CU_cleanup_registry();
        return 2;
    }
    status = refuse_lookalike();
    if (status < 0)
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
    main_running = true;
    leakgate_cunit_run(gate, run_basic, NULL);
    main_running = false;
    leakgate_cunit__set_hooks(NULL); /* they name this gate */
    current->test = NULL;
    status = finish(gate);
    status = update_thresholds(gate, &opts, status);
    run->gate = NULL;
    leakgate_gate_free(gate);
    CU_cleanup_registry();
    return status;
}

#ifndef LEAKGATE_PRELOAD_BUILD
/* ---- CUnit's run functions, called by the program itself --------------- */

/* Nesting of the program's own run calls. */
static unsigned int linked_depth;

/* CUnit's own definition, or say why there is none. */
static int
call_real(void *payload)
{
    struct leakgate_cunit_call *c = payload;
    int rc = leakgate_cunit__call_real(c);

    if (rc == -1) {
        fprintf(stderr,
                "leakgate: %s: CUnit's own definition was not found (CUnit "
                "is linked statically, or before leakgate)\n",
                c->name);
        c->result = CUE_NOREGISTRY;
    }
    return (int)c->result;
}

/* The process that made the gate of its own runs. */
static pid_t linked_pid;

/* The run functions defined below, in a section of their own: a CUnit
 * linked statically (or loaded ahead of leakgate) replaces them. */
#define LINKED_RUN_SECTION "leakgate_cunit_runfns"
extern const char __start_leakgate_cunit_runfns[] __attribute__((weak));
extern const char __stop_leakgate_cunit_runfns[] __attribute__((weak));

static bool
run_functions_ours(void)
{
    CU_ErrorCode (*f)(CU_pSuite) = CU_basic_run_suite;
    const char *p;

    memcpy(&p, &f, sizeof p);
    return __start_leakgate_cunit_runfns &&
           p >= __start_leakgate_cunit_runfns &&
           p < __stop_leakgate_cunit_runfns;
}

/* The program ends (on_exit(), registered before main: it runs after the
 * program's own handlers): an exit status of 0 cannot stand when its
 * gated runs failed or judged nothing; another status is the program's.
 * Not in a child the program forked. */
static void
linked_exit(int exit_status, void *arg)
{
    (void)arg;
    if (exit_status != 0 || getpid() != linked_pid)
        return;
    /* Its own calls of CUnit's run functions went to CUnit's: none was
     * gated, and leakgate_cunit_main() never ran. */
    if (!main_called && !linked_gated && !run_functions_ours()) {
        fprintf(stderr,
                "leakgate: the program ran without leakgate_cunit_main() and "
                "CUnit is linked statically (or ahead of leakgate): its own "
                "run functions win over leakgate's, so no test was gated; "
                "link the shared libcunit after leakgate (as leakgate::cunit "
                "does), or end main with leakgate_cunit_main(): not a pass\n");
        linked_status = 3;
    }
    if (linked_status != 0) {
        fflush(NULL);
        _exit(linked_status);
    }
}

__attribute__((constructor)) static void
linked_arm(void)
{
    linked_pid = getpid();
    (void)on_exit(linked_exit, NULL);
}

/*
 * A run the program started itself, gated as leakgate_cunit_main()'s with
 * the options of the environment.  One gate for the process, kept across
 * its runs (a second run of one process adds to the first's verdicts; a
 * replay started by one measures the tests of all of them), made at the
 * first.
 */
static CU_ErrorCode
linked_run(struct leakgate_cunit_call *c)
{
    static char name[] = "leakgate-linked";
    static leakgate_gate *gate;
    static struct leakgate_gate_options opts;
    static int failed_to_start;
    char *argv[] = {name, NULL};
    int rc, status;

    if (main_running || linked_depth > 0 || run->gate) {
        call_real(c);
        return c->result;
    }
    if (!gate && !failed_to_start) {
        rc = leakgate_gate_options_parse(&opts, 1, argv);
        /* LEAKGATE_LIST (leakgate_discover_tests() lists a runner that
         * parses its own arguments so) or a run's [outputs] test: what
         * leakgate_cunit_main() would do, then the process ends. */
        status = refuse_lookalike();
        if (status < 0 && rc == 0)
            status = early_exit(&opts);
        if (status >= 0) {
            CU_cleanup_registry();
            exit(status);
        }
        if (rc == 0)
            rc = leakgate_gate_new(&gate, &opts);
        if (rc < 0) {
            fprintf(stderr, "leakgate: %s: %s\n", leakgate_strerror(rc),
                    leakgate_error_last());
            failed_to_start = exit_code_for(rc);
            gate = NULL;
        } else {
            open_journals(gate);
            arm_guards();
        }
    }
    if (!gate) {
        linked_status = failed_to_start;
        call_real(c); /* as the program asked, unmeasured: it fails */
        return c->result;
    }
    linked_gated = true;
    linked_depth++;
    leakgate_cunit_run(gate, call_real, c);
    linked_depth--;
    current->test = NULL;
    status = finish(gate);
    status = update_thresholds(gate, &opts, status);
    run->gate = NULL;
    linked_status = status; /* the whole process's verdicts so far */
    return c->result;
}

LEAKGATE_CUNIT_RUN_FUNCTIONS(
    __attribute__((weak, visibility("default"), section(LINKED_RUN_SECTION))),
    linked_run)
#endif /* LEAKGATE_PRELOAD_BUILD */
