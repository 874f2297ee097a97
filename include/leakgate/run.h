/* SPDX-License-Identifier: MIT */
/**
 * @file leakgate/run.h
 * @brief Gate an unmodified CUnit program (`leakgate run`).
 *
 * leakgate_run_program() starts a CUnit test program that knows nothing
 * of leakgate (dynamically linked to libcunit, not to jemalloc) with
 * jemalloc and leakgate's CUnit interposer preloaded, so that every test
 * it runs is gated as in a linked test binary.  The program prints the
 * same reports on stderr; its stdout and stderr are passed through.  The
 * interposer streams one record per finished test over an inherited
 * socket, so a program that crashes or calls exit() in a test loses
 * nothing that finished before; the outcome (exit status, diagnosis,
 * JUnit/JSON) is decided from those records, never from the program's
 * own exit status.
 *
 * @code
 * struct leakgate_gate_options opts;
 * leakgate_run *run;
 * int status;
 * // argv: "tool", the program and its arguments
 * if (leakgate_gate_options_parse(&opts, 1, argv) < 0) return 2;
 * if (leakgate_run_program(&run, &opts, argv + 1) < 0) return 3;
 * for (size_t k = 0; k < leakgate_run_message_count(run); k++)
 *     fprintf(stderr, "leakgate: %s\n", leakgate_run_message(run, k));
 * status = leakgate_run_status(run);
 * leakgate_run_free(run);
 * return status;
 * @endcode
 *
 * Thread-safety: call from one thread; leakgate_run_program() waits for
 * the program and ignores SIGINT and SIGQUIT meanwhile (as system(3)
 * does: the program receives them and its death is reported).
 */
#ifndef LEAKGATE_RUN_H
#define LEAKGATE_RUN_H

#include <stddef.h>

#include "leakgate/leakgate.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The outcome of one gated program run (opaque). */
typedef struct leakgate_run leakgate_run;

/**
 * Run a program under the gate and collect what it reported.
 *
 * Checks first that the program exists and is executable, and finds the
 * interposer (`libleakgate-preload.so`: $LEAKGATE_PRELOAD, else next to
 * the `leakgate` executable in ../lib, else the build tree) and
 * libjemalloc (the one this process uses, or $LEAKGATE_JEMALLOC).
 *
 * @param[out] out   the outcome, the caller's; NULL on failure
 * @param[in]  opts  the gate options (SPEC §5) handed to the program
 *                   through their LEAKGATE_* environment twins; the
 *                   program writes the reports and --report-dir artifacts,
 *                   leakgate_run_write_results() the --junit/--json files
 * @param[in]  argv  the program and its arguments, NULL-terminated
 * @return 0 when the program ran (whatever it did: see
 *         leakgate_run_status()); LEAKGATE_ENOTFOUND when the program,
 *         the interposer or libjemalloc cannot be found or executed;
 *         LEAKGATE_EIO when it cannot be started.  leakgate_error_last()
 *         says which and why.
 */
LEAKGATE_API int leakgate_run_program(leakgate_run **out,
                                      const struct leakgate_gate_options *opts,
                                      char *const *argv);

/**
 * @return the exit status of SPEC §5 for the run: 0 every test passed;
 *         1 a test failed (the gate, an assertion, or the program died or
 *         exited in a test); 2 the program reported a usage or
 *         configuration error (bad thresholds file); 3 the gate could not
 *         run (no CUnit test ever ran, profiling unavailable in the
 *         program, a dump failed, the results could not be written).
 */
LEAKGATE_API int leakgate_run_status(const leakgate_run *run);

/** @return how many diagnostic messages the run produced. */
LEAKGATE_API size_t leakgate_run_message_count(const leakgate_run *run);

/**
 * @param[in] run the outcome
 * @param[in] i   0 to leakgate_run_message_count() - 1
 * @return one diagnostic line without the "leakgate: " prefix (the
 *         program died, exited early, was no CUnit program, ...),
 *         borrowed until leakgate_run_free().
 */
LEAKGATE_API const char *leakgate_run_message(const leakgate_run *run,
                                              size_t i);

/** @return the number of windows the gate failed (over their limits). */
LEAKGATE_API size_t leakgate_run_failures(const leakgate_run *run);

/**
 * Write --junit and --json from the records the program sent, plus a
 * failed testcase for the test it died or exited in.
 * @return 0, or LEAKGATE_EIO / LEAKGATE_ENOMEM (detail names the path).
 */
LEAKGATE_API int leakgate_run_write_results(const leakgate_run *run);

/** Free the outcome.  NULL is a no-op. */
LEAKGATE_API void leakgate_run_free(leakgate_run *run);

/**
 * @return the --help text of `leakgate run`, listing the same options as
 *         leakgate_gate_options_usage() (static storage, built on the
 *         first call).
 */
LEAKGATE_API const char *leakgate_run_usage(void);

#ifdef __cplusplus
}
#endif

#endif
