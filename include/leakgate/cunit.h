/* SPDX-License-Identifier: MIT */
/**
 * @file leakgate/cunit.h
 * @brief Run a CUnit registry under the leakgate gate.
 *
 * Link `leakgate::cunit`, register suites and tests as usual, and end
 * `main` with `return leakgate_cunit_main(argc, argv);`.  Every test is
 * then wrapped in exact before/after heap snapshots (its suite's setup and
 * teardown included); each suite's init and cleanup are measured as
 * `<suite>/[suite]`.  No test code changes and no MALLOC_CONF is needed.
 */
#ifndef LEAKGATE_CUNIT_H
#define LEAKGATE_CUNIT_H

#include "leakgate/leakgate.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parse leakgate's options (SPEC §5), run every registered CUnit test under
 * the gate with CUnit's basic interface (in CU_BRM_VERBOSE mode, whatever
 * mode the program set), write JUnit/JSON/artifacts, clean up the registry
 * and return the exit status.  A `main(void)` passes 0 and NULL: the
 * options are then read from the process's own command line
 * (/proc/self/cmdline) and the environment.
 *
 * @param[in] argc the program's argc, or 0
 * @param[in] argv the program's argv, or NULL for the process's own
 * @return 0 all tests passed; 1 a test failed (an assertion or the gate);
 *         2 usage or configuration error; 3 the gate could not run.
 */
LEAKGATE_API int leakgate_cunit_main(int argc, char **argv);

/**
 * Run the current registry under an existing gate (the engine behind
 * leakgate_cunit_main() and `leakgate run`).  @p run is called once, with
 * every test wrapped, to start CUnit's run (e.g. CU_basic_run_tests).
 * Records are completed test by test: CUnit's failure records of a test
 * become notes of its verdict as soon as the test is over.  A call made
 * while another leakgate_cunit_run() is running (say from inside @p run)
 * only calls @p run: the registry is wrapped once.
 *
 * @param[in] gate    the gate
 * @param[in] run     starts the run; its return value is passed back
 * @param[in] payload passed to @p run
 * @return what @p run returned
 */
LEAKGATE_API int leakgate_cunit_run(leakgate_gate *gate,
                                    int (*run)(void *payload),
                                    void *payload);

/**
 * The first error that stopped the gate from measuring during the last
 * leakgate_cunit_run() (a dump that failed, say), or LEAKGATE_EUSAGE when
 * the run did not start: --filter matched no test.
 * @param[out] text_out a description (static storage), "" when none
 * @return 0 when the gate measured every window, else the error code.
 */
LEAKGATE_API int leakgate_cunit_run_error(const char **text_out);

/**
 * Print "suite/test" for every registered test and "suite/[suite]" for
 * every suite to stdout.  @return 0.
 */
LEAKGATE_API int leakgate_cunit_list(void);

#ifdef __cplusplus
}
#endif

#endif
