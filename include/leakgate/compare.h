/* SPDX-License-Identifier: MIT */
/**
 * @file leakgate/compare.h
 * @brief Gate a merge: compare the JSON results of two runs per test, and
 *        write SARIF for code scanning.
 *
 * A pull request is judged on what it changes: which tests now retain
 * more, peak higher or allocate more than on the target branch.  Load the
 * base branch's results and the head's (leakgate/thresholds.h,
 * leakgate_results_load(): files or directories, shards merged), compare
 * them, render the comparison as text, Markdown or JSON, and write the
 * regressions as SARIF 2.1.0:
 *
 * @code
 * leakgate_results *base, *head;
 * leakgate_compare *c;
 * struct leakgate_compare_options opts = LEAKGATE_COMPARE_OPTIONS_INIT;
 * char *text;
 * leakgate_results_new(&base);
 * leakgate_results_new(&head);
 * leakgate_results_load(base, "base-results/");
 * leakgate_results_load(head, "results/");
 * opts.peak_growth = "10%";
 * if (leakgate_compare_new(&c, base, head, &opts) == 0 &&
 *     leakgate_compare_render(&text, c, LEAKGATE_COMPARE_TEXT) == 0) {
 *     fputs(text, stdout);
 *     leakgate_compare_output_free(text);
 * }
 * @endcode
 *
 * Thread-safety: objects are used from one thread at a time; error detail
 * is thread-local (leakgate_error_last()).
 */
#ifndef LEAKGATE_COMPARE_H
#define LEAKGATE_COMPARE_H

#include <stddef.h>

#include "leakgate/leakgate.h"
#include "leakgate/thresholds.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Version of struct leakgate_compare_options understood here. */
#define LEAKGATE_COMPARE_OPTIONS_VERSION 1

/**
 * What counts as a regression.  Growth of a test's retained bytes always
 * counts.  Strings are borrowed; NULL means the default.
 */
struct leakgate_compare_options {
    unsigned int version;     /**< LEAKGATE_COMPARE_OPTIONS_VERSION */
    const char *peak_growth;  /**< a peak above base by more than this
                                   percentage ("10%"), or "off"; NULL: 10% */
    const char *peak_floor;   /**< a peak growth smaller than this size
                                   never counts ("4 KiB"); NULL: 4 KiB */
    const char *alloc_growth; /**< allocations above base by more than
                                   this percentage, or "off"; NULL: 20% */
    const char *alloc_floor;  /**< fewer additional allocations than this
                                   never count; NULL: 16 */
    int new_stacks;           /**< a retained stack the base test did not
                                   have counts (compared by function names) */
    const char *base_name;    /**< how BASE is named in the output */
    const char *head_name;    /**< how HEAD is named in the output */
};

/** Static initializer: the defaults. */
#define LEAKGATE_COMPARE_OPTIONS_INIT                                          \
    {                                                                          \
        LEAKGATE_COMPARE_OPTIONS_VERSION, NULL, NULL, NULL, NULL, 0, NULL,     \
            NULL                                                               \
    }

/** What leakgate_compare_render() renders. */
typedef enum leakgate_compare_format {
    LEAKGATE_COMPARE_TEXT = 0,     /**< for a terminal or a log */
    LEAKGATE_COMPARE_MARKDOWN = 1, /**< a job summary or a PR comment */
    LEAKGATE_COMPARE_JSON = 2,     /**< "leakgate-compare" version 1 */
} leakgate_compare_format;

/** The comparison of two runs, test by test (opaque). */
typedef struct leakgate_compare leakgate_compare;

/**
 * Compare the windows of @p head with those of @p base (one record per
 * window, as leakgate_results_summary() counts them).
 *
 * @param[out] out  the comparison, the caller's; NULL on failure
 * @param[in]  base the target branch's results (borrowed: keep it until
 *                  the comparison is freed)
 * @param[in]  head the change's results (borrowed, the same)
 * @param[in]  opts what counts as a regression; NULL: the defaults
 * @return 0; LEAKGATE_EUSAGE for a bad option value (detail names it);
 *         LEAKGATE_EFORMAT when the two sides hold results of different
 *         format versions, or one side mixes versions (detail names the
 *         files); LEAKGATE_ENOMEM.
 */
LEAKGATE_API int
leakgate_compare_new(leakgate_compare **out,
                     leakgate_results *base,
                     leakgate_results *head,
                     const struct leakgate_compare_options *opts);

/** Free a comparison; NULL is a no-op. */
LEAKGATE_API void leakgate_compare_free(leakgate_compare *c);

/** @return the number of tests that regressed. */
LEAKGATE_API size_t leakgate_compare_regressions(const leakgate_compare *c);

/**
 * Render the comparison: changed tests first (regressions, then the
 * largest change), new and removed tests, counts.
 *
 * @param[out] out the text, the caller's (leakgate_compare_output_free())
 * @param[in]  c   the comparison
 * @param[in]  fmt what to render
 * @return 0 or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_compare_render(char **out,
                                         const leakgate_compare *c,
                                         leakgate_compare_format fmt);

/** Free what leakgate_compare_render() returned; NULL is a no-op. */
LEAKGATE_API void leakgate_compare_output_free(char *out);

/**
 * Write leakgate_compare_render()'s text to @p path, atomically (missing
 * parent directories are created).
 * @return 0, LEAKGATE_EIO (detail names the path) or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_compare_write(const leakgate_compare *c,
                                        leakgate_compare_format fmt,
                                        const char *path);

/**
 * Write the regressions as a SARIF 2.1.0 log, atomically: one result per
 * regressed test, at the first frame of its largest new or grown stack
 * that lies under @p source_root, the stack as related locations.
 *
 * @param[in] c           the comparison
 * @param[in] path        the file to write
 * @param[in] source_root absolute directory the paths are made relative
 *                        to (SARIF `SRCROOT`)
 * @return 0, LEAKGATE_EIO (detail names the path) or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_compare_write_sarif(const leakgate_compare *c,
                                              const char *path,
                                              const char *source_root);

/**
 * Write every failing window of @p r as a SARIF 2.1.0 log, atomically:
 * one result per failing window, as leakgate_compare_write_sarif().
 *
 * @return 0, LEAKGATE_EIO (detail names the path) or LEAKGATE_ENOMEM.
 */
LEAKGATE_API int leakgate_results_write_sarif(leakgate_results *r,
                                              const char *path,
                                              const char *source_root);

#ifdef __cplusplus
}
#endif

#endif
