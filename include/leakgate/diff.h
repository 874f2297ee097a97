/* SPDX-License-Identifier: MIT */
/**
 * @file leakgate/diff.h
 * @brief Diff two jemalloc heap profiles of any program, offline.
 *
 * What `leakgate diff` does, for programs that are not tests (a
 * long-running service dumped twice with `mallctl("prof.dump")`, say):
 * parse both heap_v2 profiles, take the growth per allocation stack
 * (after minus before; the after profile alone when there is no before),
 * symbolize it from the MAPPED_LIBRARIES section of the profile (PIE
 * executables and shared libraries at their recorded load addresses;
 * function, file:line and inlined frames from their DWARF) and render it
 * as text, JSON, Graphviz DOT, SVG or PDF.
 *
 * @code
 * struct leakgate_diff_options opts = LEAKGATE_DIFF_OPTIONS_INIT;
 * char *out;
 * size_t len;
 * opts.focus = "cache_";
 * if (leakgate_diff_profiles(&out, &len, "before.heap", "after.heap",
 *                            &opts) == 0) {
 *     fwrite(out, 1, len, stdout);
 *     leakgate_diff_output_free(out);
 * }
 * @endcode
 *
 * Thread-safety: calls are independent; error detail is thread-local.
 */
#ifndef LEAKGATE_LEAKGATE_DIFF_H
#define LEAKGATE_LEAKGATE_DIFF_H

#include <stddef.h>

#include "leakgate/leakgate.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What leakgate_diff_profiles() renders. */
typedef enum leakgate_diff_format {
    LEAKGATE_DIFF_FORMAT_TEXT = 0, /**< stacks with function file:line */
    LEAKGATE_DIFF_FORMAT_JSON = 1, /**< "leakgate-diff" version 1 */
    LEAKGATE_DIFF_FORMAT_DOT = 2,  /**< Graphviz call graph of the growth */
    LEAKGATE_DIFF_FORMAT_SVG = 3,  /**< that graph drawn by `dot` */
    LEAKGATE_DIFF_FORMAT_PDF = 4,  /**< the same as PDF (binary) */
} leakgate_diff_format;

/** Version of struct leakgate_diff_options understood by this library. */
#define LEAKGATE_DIFF_OPTIONS_VERSION 1

/** Options of leakgate_diff_profiles(); strings are borrowed. */
struct leakgate_diff_options {
    unsigned int version; /**< LEAKGATE_DIFF_OPTIONS_VERSION */
    const char *exe;      /**< the program's binary, when the path recorded
                               in the profile is gone or moved; NULL: the
                               recorded one */
    const char *focus;    /**< POSIX extended regex: keep only stacks with
                               a frame whose function or source file
                               matches; NULL: every stack */
    double nodefraction;  /**< fold what retains less than this share of
                               the growth: graph nodes (dot, svg, pdf;
                               default 0.005) or whole stacks (text, json;
                               default 0); negative: the default */
    double edgefraction;  /**< fold graph edges below this share; negative:
                               0.001 */
    leakgate_diff_format format; /**< what to render */
};

/** Static initializer for struct leakgate_diff_options. */
#define LEAKGATE_DIFF_OPTIONS_INIT                                             \
    {                                                                          \
        LEAKGATE_DIFF_OPTIONS_VERSION, NULL, NULL, -1.0, -1.0,                 \
            LEAKGATE_DIFF_FORMAT_TEXT                                          \
    }

/**
 * Diff two heap profiles (or show one) and render the growth.
 *
 * @param[out] out         the rendering, the caller's (free it with
 *                         leakgate_diff_output_free()); NUL-terminated, but
 *                         a PDF is binary: use @p len_out
 * @param[out] len_out     bytes in *out
 * @param[in]  before_path the earlier profile; NULL to show @p after_path
 *                         alone (every live stack counts as growth)
 * @param[in]  after_path  the later profile
 * @param[in]  opts        options; NULL for the defaults
 * @return 0; LEAKGATE_EIO when a file cannot be read (detail names it);
 *         LEAKGATE_EFORMAT for a malformed or truncated profile (detail
 *         "PATH:LINE: what"); LEAKGATE_ETOOBIG when a profile exceeds the
 *         parser's limits; LEAKGATE_EUSAGE for a bad option (regex,
 *         fraction) or two profiles of different processes;
 *         LEAKGATE_ENOTFOUND when SVG or PDF needs Graphviz's `dot` and it
 *         is not on PATH; LEAKGATE_ERROR when `dot` failed;
 *         LEAKGATE_ESYMBOL; LEAKGATE_ENOMEM.  *out is NULL on failure.
 */
LEAKGATE_API int
leakgate_diff_profiles(char **out,
                       size_t *len_out,
                       const char *before_path,
                       const char *after_path,
                       const struct leakgate_diff_options *opts);

/** Free what leakgate_diff_profiles() returned; NULL is a no-op. */
LEAKGATE_API void leakgate_diff_output_free(char *out);

#ifdef __cplusplus
}
#endif

#endif
