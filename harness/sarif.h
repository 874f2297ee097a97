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
 * none) gets a logical location naming the test only.
 */
#ifndef LEAKGATE_SARIF_H
#define LEAKGATE_SARIF_H

#include <stddef.h>

#include "compare.h"
#include "verdict.h"

/* Every window of v[0..n) that failed the gate, as a SARIF log; root: the
 * absolute source root (NULL or "": every path stays absolute).  NULL on
 * ENOMEM.  Caller frees. */
char *leakgate_sarif__results(const struct leakgate_verdict *const *v,
                              size_t n,
                              const char *root);

/* Every regression of c, the same.  NULL on ENOMEM. */
char *leakgate_sarif__compare(const struct leakgate_compare *c,
                              const char *root);

/* The part of path below root ("src/a.c" for "/w/src/a.c" under "/w"),
 * or NULL when path is not under root (or either is NULL).  Cannot
 * fail. */
const char *leakgate_sarif__relative(const char *path, const char *root);

#endif
