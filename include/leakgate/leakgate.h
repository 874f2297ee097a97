/* SPDX-License-Identifier: MIT */
/**
 * @file leakgate/leakgate.h
 * @brief leakgate's framework-agnostic core API.
 *
 * A *gate* measures code regions ("scopes") with exact jemalloc heap
 * profiles: leakgate_gate_begin() dumps the heap, leakgate_gate_end() dumps
 * it again, diffs the two per allocation stack, symbolizes what grew and
 * judges it against the thresholds file.  A harness that can run a scope's
 * code twice can open it with leakgate_gate_begin_fast() instead: no
 * dump, no stack unwinding, and an exact scope only when the code left
 * something allocated.  Any harness (CUnit through
 * leakgate/cunit.h, cmocka, Unity, a hand-written main) can gate any region:
 *
 * @code
 * struct leakgate_gate_options opts = LEAKGATE_GATE_OPTIONS_INIT;
 * leakgate_gate *gate;
 * const leakgate_verdict *v = NULL;
 * int failed;
 * if (leakgate_gate_new(&gate, &opts) < 0) return 3;
 * if (leakgate_gate_begin(gate, "parser", "test_feed") < 0) return 3;
 * run_the_test();
 * if (leakgate_gate_end(gate, 1, &v) < 0) return 3;
 * leakgate_gate_print_verdict(gate, v, stderr);
 * if (*leakgate_gate_scope_hints(gate))
 *     fprintf(stderr, "leakgate: %s", leakgate_gate_scope_hints(gate));
 * failed = leakgate_gate_failures(gate) > 0;
 * leakgate_gate_free(gate);
 * return failed;
 * @endcode
 *
 * Thread-safety: a gate is used from one thread at a time; the code under
 * test may use any number of threads.  Error detail is thread-local.
 */
#ifndef LEAKGATE_LEAKGATE_H
#define LEAKGATE_LEAKGATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "leakgate/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(LEAKGATE_BUILDING) && defined(__GNUC__)
#define LEAKGATE_API __attribute__((visibility("default")))
#else
#define LEAKGATE_API
#endif

/**
 * The error codes: 0 is success, every failure is negative.  The list only
 * grows; codes are never renumbered.
 */
#define LEAKGATE_ERROR_CODES(X)                                                \
    X(LEAKGATE_OK, 0, "success")                                               \
    X(LEAKGATE_ERROR, -1, "unexpected error")                                  \
    X(LEAKGATE_ENOMEM, -2, "out of memory")                                    \
    X(LEAKGATE_EIO, -3, "I/O error")                                           \
    X(LEAKGATE_EFORMAT, -4, "malformed input")                                 \
    X(LEAKGATE_ETOOBIG, -5, "input exceeds a limit")                           \
    X(LEAKGATE_ECONFIG, -6, "invalid thresholds file")                         \
    X(LEAKGATE_ENOTFOUND, -7, "not found")                                     \
    X(LEAKGATE_ENOPROF, -8, "jemalloc heap profiling is not active")           \
    X(LEAKGATE_EDUMP, -9, "heap profile dump failed")                          \
    X(LEAKGATE_ESYMBOL, -10, "symbolization failed")                           \
    X(LEAKGATE_EUSAGE, -11, "invalid usage")                                   \
    X(LEAKGATE_ESTATE, -12, "call out of order")

/** One enumerator per row of LEAKGATE_ERROR_CODES. */
typedef enum leakgate_error_code {
#define LEAKGATE_X(name, value, text) name = value,
    LEAKGATE_ERROR_CODES(LEAKGATE_X)
#undef LEAKGATE_X
} leakgate_error_code;

/**
 * @param[in] code a leakgate_error_code
 * @return a static, human-readable text for @p code ("unknown error" for
 *         values not in the table).
 */
LEAKGATE_API const char *leakgate_strerror(int code);

/**
 * @return the one-line detail of the last failure on this thread (file,
 *         line, option, mallctl name...), or "" when there is none.  The
 *         string is thread-local and valid until the next leakgate call on
 *         this thread.
 */
LEAKGATE_API const char *leakgate_error_last(void);

/** @return the library version, e.g. "0.1.0"; static storage. */
LEAKGATE_API const char *leakgate_version(void);

/** A measuring session: one per process (opaque). */
typedef struct leakgate_gate leakgate_gate;

/** The judged result of one scope (opaque, owned by its gate). */
typedef struct leakgate_verdict leakgate_verdict;

/** What a verdict says. */
typedef enum leakgate_status {
    LEAKGATE_STATUS_PASS = 0,       /**< nothing retained over its limit */
    LEAKGATE_STATUS_FAIL = 1,       /**< a stack or the total is over */
    LEAKGATE_STATUS_NOT_JUDGED = 2, /**< measured, deliberately not judged */
} leakgate_status;

/** Version of struct leakgate_gate_options understood by this library. */
#define LEAKGATE_GATE_OPTIONS_VERSION 1

/**
 * Options shared by linked test binaries and `leakgate run` (SPEC §5).
 * Strings are borrowed: they must outlive the gate.  Zero/NULL means "not
 * given"; leakgate_gate_options_parse() fills it from argv and the
 * LEAKGATE_* environment twins (the flag wins).
 */
struct leakgate_gate_options {
    unsigned int version;        /**< LEAKGATE_GATE_OPTIONS_VERSION */
    const char *thresholds_path; /**< NULL: the build's file
                                      (leakgate_thresholds_file), else
                                      ./leakgate.yaml if present */
    const char *filter;          /**< glob over "suite/test"; NULL: all */
    const char *report_dir;      /**< NULL: no artifacts */
    const char *junit_path;      /**< NULL: no JUnit XML */
    const char *json_path;       /**< NULL: no JSON results */
    int list;                    /**< --list: print names, run nothing */
    int update_thresholds;       /**< --update-thresholds */
    int help;                    /**< --help was given */
    int show_version;            /**< --version was given */
    int color;                   /**< 1 always, 0 never, -1 if a tty */
    int tighten;                 /**< --tighten: lower loose limits */
    const char *slack;           /**< --slack: "25%" or a size; NULL: 25% */
    int exact; /**< --exact: every window exact from the start (no fast
                    first pass, see leakgate_gate_begin_fast()) */
    const char *peak_limit;     /**< --peak-limit: a size, the defaults'
                                     peak_limit; NULL: the file's */
    const char *replay_timeout; /**< --replay-timeout: whole seconds one
                                     test may run in a replay before the
                                     replay is stopped; NULL: 300 */
    const char *test_timeout;   /**< --test-timeout: whole seconds one
                                     test may run before the run is
                                     stopped (0: never); NULL: 1800 */
};

/** Static initializer for struct leakgate_gate_options. */
#define LEAKGATE_GATE_OPTIONS_INIT                                             \
    {                                                                          \
        LEAKGATE_GATE_OPTIONS_VERSION, NULL, NULL, NULL, NULL, NULL, 0, 0, 0,  \
            0, -1, 0, NULL, 0, NULL, NULL, NULL                                \
    }

/**
 * Parse leakgate's options out of a test binary's command line.
 *
 * Recognised options (SPEC §5) are consumed; the environment twins
 * (LEAKGATE_THRESHOLDS, LEAKGATE_FILTER, LEAKGATE_REPORT_DIR,
 * LEAKGATE_JUNIT, LEAKGATE_JSON, LEAKGATE_SLACK) fill what the command
 * line left unset; LEAKGATE_UPDATE_THRESHOLDS and LEAKGATE_TIGHTEN set to
 * a value other than "" or "0" turn their flags on.  The thresholds file
 * the build named (CMake's leakgate_thresholds_file()) fills
 * thresholds_path after the environment twins.
 *
 * @param[out] opts    filled in; strings point into argv or environ
 * @param[in]  argc    argument count
 * Options are read up to "--" or the first argument that is not an
 * option, which start the program's own arguments
 * (leakgate_gate_options_parse_args()).
 *
 * @param[in]  argv    arguments; argv[0] is skipped.  NULL: the process's
 *                     own command line (/proc/self/cmdline), kept for the
 *                     life of the process
 * @return 0, or LEAKGATE_EUSAGE for an unknown option or a missing value
 *         (leakgate_error_last() names it).
 */
LEAKGATE_API int leakgate_gate_options_parse(struct leakgate_gate_options *opts,
                                             int argc,
                                             char *const *argv);

/**
 * leakgate_gate_options_parse(), saying where the program's own arguments
 * start.  leakgate's options come first: the first argument that is not
 * an option ("data.txt"; a lone "-" is one) or "--" ends them, and
 * *program_at is its index ("--": the index after it), else argc.  What
 * follows is the program's, never read as leakgate's.
 *
 * @param[out] opts       as for leakgate_gate_options_parse()
 * @param[in]  argc       argument count
 * @param[in]  argv       arguments (NULL: the process's own)
 * @param[out] program_at where the program's arguments start
 * @return as leakgate_gate_options_parse()
 */
LEAKGATE_API int
leakgate_gate_options_parse_args(struct leakgate_gate_options *opts,
                                 int argc,
                                 char *const *argv,
                                 int *program_at);

/** @return the --help text for test binaries (static storage). */
LEAKGATE_API const char *leakgate_gate_options_usage(void);

/**
 * Create the gate: check that jemalloc profiling is active in exact mode,
 * load the thresholds file, prepare the in-memory dump files.
 *
 * @param[out] out  the new gate, the caller's; NULL on failure
 * @param[in]  opts options (copied; its strings are borrowed)
 * @return 0; LEAKGATE_ENOPROF when this process has no jemalloc profiling
 *         (leakgate_error_last() says how to fix it); LEAKGATE_ECONFIG for
 *         a bad thresholds file (detail names file:line:column);
 *         LEAKGATE_EDUMP when a heap dump cannot be taken.
 */
LEAKGATE_API int leakgate_gate_new(leakgate_gate **out,
                                   const struct leakgate_gate_options *opts);

/** Free the gate and every verdict it owns.  NULL is a no-op. */
LEAKGATE_API void leakgate_gate_free(leakgate_gate *gate);

/** Per-window settings resolved from the thresholds file. */
struct leakgate_window_settings {
    unsigned int warmup; /**< unmeasured runs before the measured one */
    int suite_scope;     /**< the suite is judged as one window */
    unsigned int repeat; /**< measured runs (>= 1), see
                              leakgate_gate_next_run() */
    int rerun;           /**< 1 (default): the test may run a second time,
                              so it can take the fast first pass of
                              leakgate_gate_begin_fast(); 0 (YAML
                              `rerun: false`): measure it exactly */
};

/**
 * Resolve the thresholds file's settings for @p suite / @p test.
 * @param[out] out   the settings
 * @param[in]  gate  the gate
 * @param[in]  suite suite name
 * @param[in]  test  test name, or NULL for the suite's own window
 */
LEAKGATE_API void leakgate_gate_settings(struct leakgate_window_settings *out,
                                         const leakgate_gate *gate,
                                         const char *suite,
                                         const char *test);

/**
 * Before the first window, for each window the run will measure: in a
 * lean process (a program linked with leakgate::cunit, without
 * jemalloc) a window whose settings need an exact measurement from the
 * start (`rerun: false`, `repeat:` > 1) cannot run; the program is started
 * again with jemalloc preloaded (its own arguments; this call does not
 * return then).  A process on jemalloc that keeps no map of its objects
 * (whether they are lost or reachable: docs/thresholds.md) is started
 * again with the map on, the same way, or goes on without it when it
 * cannot be.  In any other process, or for any other window: nothing.
 * @param gate  the gate
 * @param suite suite name
 * @param test  test name, or NULL for the suite's own window
 * @return 0; LEAKGATE_ENOPROF (jemalloc could not be preloaded: the
 *         program started again without it); LEAKGATE_EIO (it could not
 *         be started again); LEAKGATE_ENOMEM
 */
LEAKGATE_API int
leakgate_gate_plan(leakgate_gate *gate, const char *suite, const char *test);

/**
 * @return 1 when "suite/test" matches the --filter glob (or there is no
 *         filter), else 0.  Pass test = "[suite]" for a suite's window.
 */
LEAKGATE_API int leakgate_gate_selected(const leakgate_gate *gate,
                                        const char *suite,
                                        const char *test);

/** @return the --filter glob (borrowed from the gate's options), or NULL
 *          when every test runs. */
LEAKGATE_API const char *leakgate_gate_filter(const leakgate_gate *gate);

/**
 * The `suites` and `tests` entries of the thresholds file that match no
 * suite or test the run recorded, one line each ("FILE:LINE: tests entry
 * 'PATTERN' matches no test of this run\n"), for a warning after an
 * unfiltered run (a filtered run cannot tell).
 * @return the text, borrowed from the gate until the next call; "" when
 *         every entry matched (or on ENOMEM).
 */
LEAKGATE_API const char *leakgate_gate_unmatched_entries(leakgate_gate *gate);

/**
 * Open a scope: take the "before" snapshot and start recording.  Scopes do
 * not nest.  leakgate makes no allocation that is recorded between begin
 * and end.
 *
 * @param[in] gate  the gate
 * @param[in] suite the suite (JUnit classname)
 * @param[in] test  the test, "[suite]" for a suite's own window
 * @return 0; LEAKGATE_EDUMP; LEAKGATE_ESTATE if a scope is already open.
 */
LEAKGATE_API int
leakgate_gate_begin(leakgate_gate *gate, const char *suite, const char *test);

/**
 * leakgate_gate_end() of a fast window that grew: the window has no
 * verdict yet; run its code again, exactly as before, between
 * leakgate_gate_begin() and leakgate_gate_end() with the same names.
 */
#define LEAKGATE_GATE_RERUN 1

/**
 * Open a fast scope: no snapshot, no stack unwinding.  jemalloc's
 * allocation hooks note every object allocated in the scope and forget it
 * when it is freed.  When nothing the scope allocated is still live at
 * leakgate_gate_end(), exact mode would have found no growth either and
 * the scope passes without a dump.  Otherwise leakgate_gate_end() returns
 * LEAKGATE_GATE_RERUN and the harness runs the scope's code again in an
 * exact scope (leakgate_gate_begin()), whose verdict is the scope's.  A
 * fast scope cannot pause or repeat.
 *
 * When fast scopes are not available (the gate was created with
 * --exact, or jemalloc's hooks cannot be installed: see
 * leakgate_gate_fast_available()) this is leakgate_gate_begin().
 *
 * @return as leakgate_gate_begin().
 */
LEAKGATE_API int leakgate_gate_begin_fast(leakgate_gate *gate,
                                          const char *suite,
                                          const char *test);

/**
 * Do not re-run the fast scope that leakgate_gate_end() just answered
 * with LEAKGATE_GATE_RERUN (the harness cannot run it again, e.g. it
 * already failed): its verdict becomes NOT_JUDGED with @p why and the
 * bytes and objects it left, and waits for leakgate_gate_replay().
 * @return 0; LEAKGATE_ESTATE when no fast scope is waiting; ENOMEM.
 */
LEAKGATE_API int leakgate_gate_decline_rerun(leakgate_gate *gate,
                                             const char *why);

/**
 * @return the last verdict or record of suite/test (owned by the gate), or
 *         NULL when there is none.
 */
LEAKGATE_API const leakgate_verdict *leakgate_gate_verdict(
    const leakgate_gate *gate, const char *suite, const char *test);

/**
 * @return 1 when @p v is NOT_JUDGED until a replay measures it: its exact
 *         re-run left a different amount than the fast scope (growth that
 *         happens once), or the re-run was declined.
 */
LEAKGATE_API int leakgate_verdict_waits_for_replay(const leakgate_verdict *v);

/**
 * In a replay (a process leakgate_gate_replay() started): 1 once every
 * test it was asked to measure has its verdict, so the process may write
 * its results (leakgate_gate_write_results()) and stop; else 0 (and
 * always 0 outside a replay).  While what a measured test left reachable
 * waits to be scanned again when the program's tests are over (the
 * CUnit glue does so), it stays 0: the replay runs on to that point (its
 * results are written when its last test's window closes all the same).
 */
LEAKGATE_API int leakgate_gate_replay_done(const leakgate_gate *gate);

/** @return 1 in a replay (a process leakgate_gate_replay() started), whose
 *          results belong to the process that started it; else 0. */
LEAKGATE_API int leakgate_gate_in_replay(const leakgate_gate *gate);

/**
 * After a replay judged tests of @p suite that had ended already: the
 * suite's own window gets the shared-fixture hint it would have had if
 * their verdicts had been known when it closed (the suite's later tests
 * or its cleanup freed what they retained).
 * @return the suite window's verdict when it gained the hint (to report
 *         it again), else NULL.
 */
LEAKGATE_API const leakgate_verdict *
leakgate_gate_late_hint(leakgate_gate *gate, const char *suite);

/**
 * `scope: suite` (docs/thresholds.md, "Shared fixtures"): a test of such a
 * suite is judged at the suite's end on what it allocated and the suite's
 * later tests and cleanup did not free.
 * @return 1 when leakgate_gate_begin_held() can open such scopes (this
 *         process allocates through leakgate's wrappers), else 0: measure
 *         the suite as one scope instead.
 */
LEAKGATE_API int leakgate_gate_holds_tests(const leakgate_gate *gate);

/**
 * Open the scope of a test of a `scope: suite` suite: every allocation's
 * stack is recorded; what the test leaves live at leakgate_gate_end() is
 * watched, and its verdict (NOT_JUDGED until then, see
 * leakgate_verdict_waits_for_suite()) is made by
 * leakgate_gate_suite_over().
 * @return as leakgate_gate_begin(); LEAKGATE_ESTATE when
 *         leakgate_gate_holds_tests() is 0.
 */
LEAKGATE_API int leakgate_gate_begin_held(leakgate_gate *gate,
                                          const char *suite,
                                          const char *test);

/** @return 1 when @p v waits for leakgate_gate_suite_over() of its suite. */
LEAKGATE_API int leakgate_verdict_waits_for_suite(const leakgate_verdict *v);

/**
 * The suite (its cleanup included) is over, no scope is open: judge each
 * of its tests that waits (leakgate_verdict_waits_for_suite()) on what it
 * left that is still live, by stack, with its own thresholds; what later
 * tests or the cleanup freed is held by the fixture (a note with its
 * bytes).  Their verdicts replace the waiting ones (leakgate_gate_verdict()).
 * @return 0; LEAKGATE_ESTATE when a scope is open; LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_suite_over(leakgate_gate *gate,
                                          const char *suite);

/**
 * After the run's verdicts are final (replays included): for the failing
 * tests whose thresholds have no `warmup`, start this program again in a
 * fresh process in which those tests run once unmeasured before their
 * exact scope (`warmup: 1`); each that passes there gets a hint with the
 * entry to add (its growth is made once: a lazy initialisation).  The
 * probe's outcome is advice only: no verdict changes.
 * @param[out] hinted_out how many verdicts gained the hint
 * @return 0; LEAKGATE_EIO or LEAKGATE_EFORMAT when the probe failed (no
 *         hint, verdicts unchanged); LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_probe_warmup(leakgate_gate *gate,
                                            const char *preload,
                                            size_t *hinted_out);

/**
 * In a replay (leakgate_gate_in_replay()), right after the scope of a
 * test closed with verdict @p v: when @p v failed and may be growth made
 * once, the warm-up probe's question (would one run first make it pass?)
 * is answered here instead of by leakgate_gate_probe_warmup()'s fresh
 * process: a forked copy of this process runs the test once more in a
 * fast scope.  Returns 1 in that copy, with the scope open: run the
 * test's code again (setUp, the test, tearDown), then call
 * leakgate_gate_probe_copy_end().  Returns 0 in the calling process
 * (after the copy answered, or when no probe is needed or possible).
 * Never fails: without an answer, leakgate_gate_probe_warmup() probes.
 */
LEAKGATE_API int leakgate_gate_probe_copy(leakgate_gate *gate,
                                          const leakgate_verdict *v);

/**
 * In the copy leakgate_gate_probe_copy() returned 1 in: close its scope,
 * hand the answer to the process it was copied from and end the copy.
 * Never returns.
 */
LEAKGATE_API void leakgate_gate_probe_copy_end(leakgate_gate *gate);

/**
 * @return a line to show after a replay ran ("" when there is none): the
 *         replay could not use $TMPDIR for its scratch files and used /tmp
 *         (the line names TMPDIR and why).  Borrowed; cannot fail.
 */
LEAKGATE_API const char *leakgate_gate_replay_note(const leakgate_gate *gate);

/** @return the advice found after judging @p v (a shared fixture, growth
 *          made once), or NULL. */
LEAKGATE_API const char *leakgate_verdict_hint(const leakgate_verdict *v);

/**
 * The test runner's code that calls the tests (a harness's trampolines)
 * is [@p begin, @p end): the allocation stacks leakgate records itself
 * (fast scopes that keep stacks) end at the first frame there, since what
 * is above it is the same for every allocation of a scope.  Reports trim
 * stacks at the runner's frames anyway.  Cannot fail.
 */
LEAKGATE_API void leakgate_gate_set_runner(leakgate_gate *gate,
                                           const void *begin,
                                           const void *end);

/**
 * @return the run's one thresholds document (SPEC section 7), when a
 *         window of the run gave an entry (accepting a failing window's
 *         growth, `warmup: 1`, `scope: suite` for a suite that holds a
 *         shared fixture): every entry in one snippet that applies as a
 *         whole, after the words that say where to put it (owned by the
 *         gate), else "".  A failing window's report gives only its own
 *         entry and says that the document at the end of the run holds
 *         it: print this after the last verdict, prefixed "leakgate: ".
 */
LEAKGATE_API const char *leakgate_gate_scope_hints(leakgate_gate *gate);

/**
 * In a replay (leakgate_gate_in_replay()), tell the process that started
 * it that the run goes on: call when a test's phase (setUp, the test,
 * tearDown) or a suite's init or cleanup starts or ends.  A replay that
 * does not beat for the replay timeout (--replay-timeout,
 * LEAKGATE_REPLAY_TIMEOUT, 300 s by default) is sent
 * leakgate_gate_replay_stop_signal(), then killed.  Elsewhere nothing.
 * Async-signal-safe; allocates nothing.
 */
LEAKGATE_API void leakgate_gate_replay_beat(const leakgate_gate *gate);

/**
 * @return the signal that stops a replay whose test ran longer than the
 *         replay timeout (a real-time signal); its handler should record
 *         the running window as not judged, write the results and exit.
 */
LEAKGATE_API int leakgate_gate_replay_stop_signal(void);

/** @return the test timeout in seconds (--test-timeout; 0: none): how long
 *          one test (its setUp, the test, its tearDown) or a suite's init
 *          or cleanup may run before the CUnit glue stops the run, names
 *          the test and keeps the verdicts reached (exit 3). */
LEAKGATE_API unsigned int leakgate_gate_test_timeout(const leakgate_gate *gate);

/** @return the replay timeout in seconds (--replay-timeout). */
LEAKGATE_API unsigned int
leakgate_gate_replay_timeout(const leakgate_gate *gate);

/** @return how many verdicts wait for a replay. */
LEAKGATE_API size_t leakgate_gate_replays_pending(const leakgate_gate *gate);

/**
 * Measure every verdict that waits for a replay exactly, as exact mode
 * would have: start this program again (/proc/self/exe, same arguments,
 * $LEAKGATE_REPLAY naming the scopes), in which the harness runs every
 * scope once and measures only the listed ones, in exact scopes
 * (leakgate_gate_measures()), and take their verdicts from its results.
 * Call it after the run, with no scope open.
 *
 * @param[in] gate    the gate
 * @param[in] preload LD_PRELOAD for the replay, NULL to keep the
 *                    environment
 * @return 0; LEAKGATE_EIO (the replay could not run or did not measure a
 *         scope: leakgate_error_last() names it; those verdicts stay
 *         NOT_JUDGED); LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_replay(leakgate_gate *gate, const char *preload);

/**
 * @return 1 when the harness should measure suite/test in this process:
 *         always, except in a replay, which measures only the scopes it
 *         replays (the others run unmeasured, once, as before).
 */
LEAKGATE_API int leakgate_gate_measures(const leakgate_gate *gate,
                                        const char *suite,
                                        const char *test);

/**
 * @return 1 when leakgate_gate_begin_fast() opens fast scopes, 0 when it
 *         opens exact ones (then *why_out, if not NULL, says why).
 */
LEAKGATE_API int leakgate_gate_fast_available(const leakgate_gate *gate,
                                              const char **why_out);

/**
 * Leave an object allocated in the open scope out of it: memory the test
 * framework owns (a failure record), which exact scopes exclude by its
 * module.  Call it before leakgate_gate_end().  Cannot fail.
 */
LEAKGATE_API void leakgate_gate_exclude_object(leakgate_gate *gate,
                                               const void *ptr);

/**
 * Exclude a region from the open scope (e.g. a suite's tests between its
 * init and cleanup): what happens between pause and resume is not counted.
 * @return 0; LEAKGATE_EDUMP; LEAKGATE_ESTATE if no scope is open.
 */
LEAKGATE_API int leakgate_gate_pause(leakgate_gate *gate);

/** Resume a paused scope.  @return 0; LEAKGATE_EDUMP; LEAKGATE_ESTATE. */
LEAKGATE_API int leakgate_gate_resume(leakgate_gate *gate);

/**
 * Close the scope: take the "after" snapshot, diff, symbolize what grew,
 * judge it and, for a failure, write the artifacts of --report-dir.
 *
 * @param[in]  gate   the gate
 * @param[in]  judged 0 to measure without judging (the verdict is then
 *                    LEAKGATE_STATUS_NOT_JUDGED), else 1
 * @param[out] out    the verdict, owned by the gate (valid until
 *                    leakgate_gate_free()); may be NULL
 * @return 0; LEAKGATE_GATE_RERUN (a fast scope that grew: no verdict,
 *         see leakgate_gate_begin_fast()); LEAKGATE_EDUMP;
 *         LEAKGATE_ESTATE if no scope is open.
 */
LEAKGATE_API int leakgate_gate_end(leakgate_gate *gate,
                                   int judged,
                                   const leakgate_verdict **out);

/**
 * With `repeat: N`: end the current measured run of the open scope and
 * start the next (the harness runs the test again in between).  At
 * leakgate_gate_end() a stack that grew only in the first run is one-time
 * growth (a note, not counted); one that grew again in a later run is a
 * leak, reported with its largest growth in one run.
 * @return 0; LEAKGATE_EDUMP; LEAKGATE_ESTATE if no scope is running.
 */
LEAKGATE_API int leakgate_gate_next_run(leakgate_gate *gate);

/**
 * Mark the open scope as aborted (the test left through a fatal assertion):
 * its verdict will be NOT_JUDGED with a note, since memory the test would
 * have freed is expected to remain.
 */
LEAKGATE_API void leakgate_gate_mark_aborted(leakgate_gate *gate,
                                             const char *why);

/**
 * Give up the window of suite/test (the test called exit() or crashed):
 * recording stops, the open scope (if any) is dropped unmeasured, and the
 * record of suite/test becomes NOT_JUDGED with @p why as its reason and as
 * a failure note, so JUnit/JSON show it as not passed.
 * @return 0 or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_abandon(leakgate_gate *gate,
                                       const char *suite,
                                       const char *test,
                                       const char *why);

/**
 * Record suite/test as never run: the run stopped before it (@p why says
 * where and why, e.g. "the run stopped at s/t: it called exit()").  Its
 * verdict is NOT_JUDGED with "not run: WHY" as its reason: a JUnit
 * <skipped>, listed in JSON, never a pass.  Does nothing when the test
 * has a record already.
 * @return 0 or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_not_run(leakgate_gate *gate,
                                       const char *suite,
                                       const char *test,
                                       const char *why);

/**
 * Attach a failure the harness saw (an assertion) to the verdict of
 * suite/test, creating the record if the test was not gated.  Counted in
 * JUnit/JSON.  @return 0 or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_note_failure(leakgate_gate *gate,
                                            const char *suite,
                                            const char *test,
                                            const char *file,
                                            unsigned int line,
                                            const char *message);

/**
 * Write the run's results: JUnit XML and JSON where the options asked for
 * them, and index.html under the report directory.  A plain --junit FILE
 * or --json FILE, and the report directory, are shared by the processes
 * of one run (ctest's, one per test): each holds every window of the run
 * once, merged under a lock from the journals the processes keep beside
 * it (docs/cli.md, "Shared outputs").  @return 0, LEAKGATE_EIO (detail
 * names the path) or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_write_results(leakgate_gate *gate);

/**
 * Open this process's journals for the run's shared outputs (see
 * leakgate_gate_write_results()), so that a window still appears in them
 * if the process is killed while it runs.  Call once, before the first
 * window, with no window open; a harness that never calls it gets the
 * same outputs without that guarantee.  Does nothing in a replay or when
 * no output is shared.
 * @param[in] gate  the gate.
 * @return 0, LEAKGATE_EIO (detail names the directory) or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_outputs_open(leakgate_gate *gate);

/**
 * The last step of a ctest run whose tests only journal their windows
 * (the `[outputs]` test leakgate_discover_tests() registers per binary):
 * when this process was started as that step, write the run's shared
 * outputs among those opts names (--junit, --json, --report-dir) from
 * every journal of the run, and run no test.
 * @param[in] opts  the options the process was started with.
 * @return 1 when this process is that step and the outputs were written;
 *         0 when it is not that step (run the tests); LEAKGATE_EIO or
 *         LEAKGATE_ENOMEM (detail names the file) when writing failed.
 */
LEAKGATE_API int
leakgate_gate_outputs_finish(const struct leakgate_gate_options *opts);

/**
 * Journal that a window (a test, or a suite's init or cleanup: test
 * "[suite]") starts, in phase "test", "init" or "cleanup".  Never
 * allocates, so it may be called while a window records; best effort.
 * Does nothing unless leakgate_gate_outputs_open() opened journals.
 */
LEAKGATE_API void leakgate_gate_outputs_started(leakgate_gate *gate,
                                                const char *suite,
                                                const char *test,
                                                const char *phase);

/**
 * Journal the record of suite/test as it is now (its verdict, or a newer
 * one a replay made).  Call with no window recording.
 * @return 0, LEAKGATE_EIO or LEAKGATE_ENOMEM; 0 when there is no journal
 *         or no such record.
 */
LEAKGATE_API int leakgate_gate_outputs_finished(leakgate_gate *gate,
                                                const char *suite,
                                                const char *test);

/** @return the number of verdicts with status LEAKGATE_STATUS_FAIL. */
LEAKGATE_API size_t leakgate_gate_failures(const leakgate_gate *gate);

/** @return the number of windows judged: verdicts with status
 *          LEAKGATE_STATUS_PASS or LEAKGATE_STATUS_FAIL.  A run that
 *          judged none measured nothing: never a pass (the CUnit glue
 *          ends it with exit status 3). */
LEAKGATE_API size_t leakgate_gate_judged(const leakgate_gate *gate);

/**
 * A test or suite name as leakgate prints it (`--list`, reports, the
 * replay's list): '\\' as "\\\\", newline, tab and carriage return as
 * "\\n", "\\t", "\\r", other control bytes and bytes that are not UTF-8
 * as "\\xNN"; the rest as it is.  `--filter` matches this form too.
 * @param[out] out  the printed form, NUL-terminated, cut to @p size - 1
 *                  bytes; may be NULL when @p size is 0.
 * @param[in]  size bytes at @p out.
 * @param[in]  name the name.
 * @return the length of the whole printed form (as snprintf does).
 */
LEAKGATE_API size_t leakgate_name_escape(char *out,
                                         size_t size,
                                         const char *name);

/**
 * @return 1 when @p a and @p b name the same window in leakgate's results:
 *         equal, or equal once every byte that is not UTF-8 reads U+FFFD
 *         (as JSON has them); else 0.  Two such tests of one suite cannot
 *         be told apart, and a run refuses them.
 */
LEAKGATE_API int leakgate_names_same(const char *a, const char *b);

/**
 * The windows leakgate could not judge: LEAKGATE_STATUS_NOT_JUDGED for a
 * reason other than being left out of judging on purpose (a replay that
 * failed or timed out, a process that stopped while they waited).  Such a
 * window is never a pass: the CUnit glue ends the run with exit status 3.
 * @param[in]  gate      the gate.
 * @param[out] first_out the first of them (borrowed from the gate), or
 *                       NULL when there is none; may be NULL.
 * @return how many there are.
 */
LEAKGATE_API size_t leakgate_gate_unjudged(const leakgate_gate *gate,
                                           const leakgate_verdict **first_out);

/**
 * @return why @p v was not judged (borrowed from the verdict), or NULL
 *         when it was judged.
 */
LEAKGATE_API const char *
leakgate_verdict_not_judged_why(const leakgate_verdict *v);

/** @return what the verdict says. */
LEAKGATE_API leakgate_status leakgate_verdict_status(const leakgate_verdict *v);

/** @return "suite/test" (borrowed from the verdict). */
LEAKGATE_API const char *leakgate_verdict_name(const leakgate_verdict *v);

/** @return bytes retained by all counted stacks that grew. */
LEAKGATE_API uint64_t
leakgate_verdict_retained_bytes(const leakgate_verdict *v);

/** @return the number of counted stacks that grew. */
LEAKGATE_API size_t leakgate_verdict_stack_count(const leakgate_verdict *v);

/**
 * Whether the window's peak was measured: leakgate's allocation wrappers
 * (linked with the library, or preloaded by `leakgate run`) saw every
 * allocation and free while it was open.
 * @param[in] v the verdict
 * @return 1 when measured, else 0 (then leakgate_verdict_peak_bytes() and
 *         leakgate_verdict_allocations() return 0).
 */
LEAKGATE_API int leakgate_verdict_peak_measured(const leakgate_verdict *v);

/**
 * The window's peak: the highest total of live heap bytes, all threads,
 * reached while it was open, minus the total when it opened (jemalloc's
 * usable sizes: `malloc(100)` counts 112).  What `peak_limit` is compared
 * with.  Thread-safe as the verdict is: read-only.
 * @param[in] v the verdict
 * @return the bytes; 0 when not measured (leakgate_verdict_peak_measured()).
 */
LEAKGATE_API uint64_t leakgate_verdict_peak_bytes(const leakgate_verdict *v);

/**
 * The allocations the window made, all threads: every call that returned
 * memory (malloc, calloc, each successful realloc even in place, the
 * aligned allocators, and C++ new through them).
 * @param[in] v the verdict
 * @return the count; 0 when not measured (leakgate_verdict_peak_measured()).
 */
LEAKGATE_API uint64_t leakgate_verdict_allocations(const leakgate_verdict *v);

/**
 * @return the failure report of SPEC §7 without colour ("" for a pass),
 *         borrowed from the verdict.
 */
LEAKGATE_API const char *leakgate_verdict_report(const leakgate_verdict *v);

/**
 * @return the outermost user frame (the test's own line) of the largest
 *         failing stack as file and line (borrowed), for frameworks that
 *         attach a location to a failure; *file_out is NULL when unknown.
 */
LEAKGATE_API void leakgate_verdict_location(const leakgate_verdict *v,
                                            const char **file_out,
                                            unsigned int *line_out);

/**
 * Print a verdict's report to @p f, in colour when the gate's options ask
 * for it (or when auto and stderr is a terminal).  Prints nothing for a
 * passing verdict without growth.
 * @return 0 or LEAKGATE_EIO / LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_gate_print_verdict(const leakgate_gate *gate,
                                             const leakgate_verdict *v,
                                             FILE *f);

#ifdef __cplusplus
}
#endif

#endif
