/* SPDX-License-Identifier: MIT */
/*
 * sarif: failing windows and compare regressions as a SARIF 2.1.0 log,
 * for code scanning (GitHub, GitLab): one result per window, located at
 * the innermost frame of its stack that lies in the project's sources,
 * the rest of the stack as related locations.  Core: renders in memory,
 * no I/O (compare_api.c writes the file).
 *
 * Paths under the source root become relative URIs against the run's
 * `SRCROOT` base (the root as a file: URI); others stay absolute file:
 * URIs.  A window with no symbolized stack (a peak under its limit keeps
 * none) points at its entry in the thresholds file (its tests entry, else
 * suites entry, else line 1) when that file's absolute path is known;
 * else it is left out (code scanning refuses a log with a result without
 * a physical location).
 */
#ifndef LEAKGATE_SARIF_H
#define LEAKGATE_SARIF_H

#include <stddef.h>

#include "compare.h"
#include "verdict.h"

/* Every window of v[0..n) that failed the gate, as a SARIF log; root: the
 * absolute source root (NULL or "": every path stays absolute), SRCROOT;
 * root_real: the same directory spelled without symbolic links, or NULL
 * (a frame under either is under the root); thresholds: the run's
 * thresholds file, or NULL.  NULL on ENOMEM.  Caller frees. */
char *leakgate_sarif__results(const struct leakgate_verdict *const *v,
                              size_t n,
                              const char *root,
                              const char *root_real,
                              const char *thresholds);

/* Every regression of c, the same (thresholds: the head run's).  NULL on
 * ENOMEM. */
char *leakgate_sarif__compare(const struct leakgate_compare *c,
                              const char *root,
                              const char *root_real,
                              const char *thresholds);

/* The part of path below root ("src/a.c" for "/w/src/a.c" under "/w"),
 * or NULL when path is not under root (or either is NULL).  Cannot
 * fail. */
const char *leakgate_sarif__relative(const char *path, const char *root);

#endif
