/* SPDX-License-Identifier: MIT */
/**
 * @file leakgate/thresholds.h
 * @brief The ratchet: write measurements into the thresholds file, tighten
 *        it, merge JSON results of many processes, validate a file.
 *
 * A thresholds file (docs/thresholds.md) lives next to the tests and is
 * reviewed like code.  After a run, leakgate_gate_update_thresholds()
 * writes what grew past its limit into it as stable stack rules (function
 * names, never addresses or line numbers); with tighten it also lowers
 * limits far above what was measured and removes stack rules that matched
 * nothing.  Runs split over processes (`ctest -j`) or machines write JSON
 * results (docs/results-format.md) that leakgate_results_load() reads
 * back, so the same update works on all of them at once.
 *
 * Every rewrite keeps the file's comments, order, quoting and unrelated
 * entries byte for byte, is serialised against other leakgate processes
 * updating files in the same directory, and is atomic: the file is
 * replaced by rename(2), so a crash leaves the old file or the new one.
 *
 * Thread-safety: objects are used from one thread at a time; error detail
 * is thread-local (leakgate_error_last()).
 */
#ifndef LEAKGATE_THRESHOLDS_H
#define LEAKGATE_THRESHOLDS_H

#include <stddef.h>

#include "leakgate/leakgate.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version of struct leakgate_thresholds_options understood here. */
#define LEAKGATE_THRESHOLDS_OPTIONS_VERSION 1

/** What an update does. */
struct leakgate_thresholds_options {
    unsigned int version; /**< LEAKGATE_THRESHOLDS_OPTIONS_VERSION */
    int accept;  /**< raise limits and add stack rules so that every judged
                      window passes (--update-thresholds) */
    int tighten; /**< lower limits far above what was measured and remove
                      stack rules that matched nothing (--tighten) */
    int write;   /**< write the file; 0 only reports what would change */
    int partial; /**< the measurements do not cover every test (a
                      --filter run): only tests entries that name one test
                      exactly are tightened and nothing is called stale */
    const char *slack; /**< how far above the measurement a limit may be
                            before it counts as loose: "25%" (a percentage
                            of the measurement) or a size ("4 KiB");
                            NULL means "25%" */
};

/** Static initializer: accept and write, no tightening, complete run. */
#define LEAKGATE_THRESHOLDS_OPTIONS_INIT                                       \
    {                                                                          \
        LEAKGATE_THRESHOLDS_OPTIONS_VERSION, 1, 0, 1, 0, NULL                  \
    }

/** What an update changed and found (opaque). */
typedef struct leakgate_thresholds_outcome leakgate_thresholds_outcome;

/**
 * Update the gate's thresholds file from the run's verdicts.  The file is
 * the one the gate loaded (--thresholds, LEAKGATE_THRESHOLDS or
 * ./leakgate.yaml); without one, ./leakgate.yaml is created.  The file is
 * read again under the lock, so concurrent processes (`ctest -j`) each
 * add their own tests' limits.
 *
 * @param[in]  gate the gate, after its run
 * @param[in]  opts what to do (copied)
 * @param[out] out  what changed, the caller's (free with
 *                  leakgate_thresholds_outcome_free); NULL on failure
 * @return 0; LEAKGATE_EUSAGE for a bad slack; LEAKGATE_ECONFIG when the
 *         file is no longer a valid thresholds file; LEAKGATE_EIO when it
 *         cannot be read or written (detail names the path);
 *         LEAKGATE_ENOMEM.
 */
LEAKGATE_API int
leakgate_gate_update_thresholds(leakgate_gate *gate,
                                const struct leakgate_thresholds_options *opts,
                                leakgate_thresholds_outcome **out);

/**
 * Validate a thresholds file without running anything.
 * @param[in] path the file
 * @return 0; LEAKGATE_ECONFIG, LEAKGATE_ETOOBIG, LEAKGATE_ENOTFOUND or
 *         LEAKGATE_EIO with the SPEC §6 message in leakgate_error_last()
 *         ("FILE:LINE:COLUMN: what").
 */
LEAKGATE_API int leakgate_thresholds_check(const char *path);

/**
 * @return the report of an update: one line per change ("accepted",
 *         "raised", "added", "lowered", "removed"), per loose limit and
 *         per stale entry, then a summary line; borrowed from @p o.
 */
LEAKGATE_API const char *
leakgate_thresholds_outcome_text(const leakgate_thresholds_outcome *o);

/** @return the number of edits made (or, without write, that would be). */
LEAKGATE_API size_t
leakgate_thresholds_outcome_changes(const leakgate_thresholds_outcome *o);

/** @return the number of entries and rules that matched nothing. */
LEAKGATE_API size_t
leakgate_thresholds_outcome_stale(const leakgate_thresholds_outcome *o);

/** @return the number of limits far above what was measured, left as
 *          they are (no tighten). */
LEAKGATE_API size_t
leakgate_thresholds_outcome_loose(const leakgate_thresholds_outcome *o);

/** Free an outcome; NULL is a no-op. */
LEAKGATE_API void
leakgate_thresholds_outcome_free(leakgate_thresholds_outcome *o);

/** JSON results of one or more runs, read back (opaque). */
typedef struct leakgate_results leakgate_results;

/**
 * @param[out] out an empty set of results, the caller's
 * @return 0 or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_results_new(leakgate_results **out);

/** Free results; NULL is a no-op. */
LEAKGATE_API void leakgate_results_free(leakgate_results *r);

/**
 * Add the JSON results in @p path: a file written by --json, or a
 * directory, whose `*.json` files are read in name order.
 *
 * @param[in] r    the results
 * @param[in] path a file or a directory
 * @return 0; LEAKGATE_ENOTFOUND (no such file, or a directory without
 *         JSON files); LEAKGATE_EFORMAT for malformed JSON or a document
 *         that is not leakgate results version 1 (detail
 *         "FILE:LINE:COLUMN: what"); LEAKGATE_ETOOBIG; LEAKGATE_EIO;
 *         LEAKGATE_ENOMEM.  On failure @p r is unchanged.
 */
LEAKGATE_API int leakgate_results_load(leakgate_results *r, const char *path);

/** @return how many result files were loaded. */
LEAKGATE_API size_t leakgate_results_files(const leakgate_results *r);

/**
 * Update (or create) the thresholds file @p path from every loaded
 * window, as leakgate_gate_update_thresholds() does for one run.
 *
 * @param[in]  r    the results
 * @param[in]  path the thresholds file; created with `version: 1` when
 *                  missing
 * @param[in]  opts what to do
 * @param[out] out  what changed, the caller's
 * @return as leakgate_gate_update_thresholds().
 */
LEAKGATE_API int leakgate_results_update_thresholds(
    leakgate_results *r,
    const char *path,
    const struct leakgate_thresholds_options *opts,
    leakgate_thresholds_outcome **out);

/**
 * One summary of every loaded window.  A window that appears in several
 * files (a suite's own window is measured by every process of its suite)
 * is counted once: its judged record wins over a record that was only
 * measured, a failing record over a passing one.  The text ends with the
 * ten largest peaks (name, peak, allocations, limit) when the results
 * carry peaks (version 2).
 *
 * @param[in]  r          the results
 * @param[out] text_out   the text (borrowed from @p r, valid until the
 *                        next call on it)
 * @param[out] failed_out windows that failed (the gate or an assertion)
 * @return 0 or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_results_summary(leakgate_results *r,
                                          const char **text_out,
                                          size_t *failed_out);

/**
 * Write the windows of leakgate_results_summary() as one JUnit XML file
 * (the format of --junit), atomically.
 * @return 0, LEAKGATE_EIO (detail names the path) or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_results_write_junit(leakgate_results *r,
                                              const char *path);

/**
 * Write DIR/index.html for the windows of leakgate_results_summary()
 * (the page --report-dir writes for one run; call graphs are inlined
 * where the results name an SVG that still exists).
 * @return 0, LEAKGATE_EIO (detail names the path) or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_results_write_html(leakgate_results *r,
                                             const char *dir);

#ifdef __cplusplus
}
#endif

#endif
