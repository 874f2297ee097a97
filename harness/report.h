/* SPDX-License-Identifier: MIT */
/*
 * report: render verdicts as text (SPEC §7), JUnit XML and JSON.  Core
 * stage 5: builds strings in memory; writing them is the caller's job.
 */
#ifndef LEAKGATE_REPORT_H
#define LEAKGATE_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"
#include "verdict.h"

/* What a report needs to be trusted: where and how it was measured. */
struct leakgate_report_env {
    const char *sampling;         /* e.g. "exact: every allocation ..." */
    const char *jemalloc_version; /* mallctl "version" */
    const char *binary;           /* path of the executable */
    const char *build_id;         /* hex, "" if none */
    const char *thresholds_path;  /* NULL: none, all limits 0 */
    const char *report_dir;       /* NULL: no artifacts */
    const char *filter;           /* --filter of the run, NULL: none */
};

/*
 * The failure report of SPEC §7 for a failed verdict: a header naming the
 * test and the total retained; per offending stack (largest first) bytes,
 * objects, limit and its shown frames "function  file:line" (inlined
 * frames marked, module+offset when no debug info); then sampling mode,
 * jemalloc version, binary and build-id, artifact paths, and the YAML that
 * would accept the growth.  ANSI colour when `color`.  For a passing
 * verdict returns "".  Returns NULL on ENOMEM.  Caller frees.
 */
char *leakgate_report__text(const struct leakgate_verdict *v,
                            const struct leakgate_report_env *env,
                            bool color);

/*
 * The YAML lines that accept v's offending growth (a `tests:` entry with
 * one `stacks:` rule per offending stack, frames = function names, never
 * addresses; and total_limit when the total was over).  NULL on ENOMEM.
 */
char *leakgate_report__yaml(const struct leakgate_verdict *v);

/*
 * The limits of existing stacks rules to raise to accept v's growth (a
 * stack over a rule of the entry that names v exactly), one line each:
 * "the limit of the stacks rule at line N [frames] to SIZE (now X)".
 * "" when none; NULL on ENOMEM.  The same rules and values as
 * --update-thresholds (thresholds_rules.c).
 */
char *leakgate_report__raises(const struct leakgate_verdict *v);

/*
 * JUnit XML for a run: one <testsuite> per suite, one <testcase
 * classname="SUITE" name="TEST"> per verdict, <failure> holding the report
 * and the harness notes, <properties> with leakgate.retained_bytes,
 * leakgate.retained_objects, leakgate.stacks and per stack
 * leakgate.stack.N.bytes / .objects / .frames.  NULL on ENOMEM.
 */
char *leakgate_report__junit(const struct leakgate_verdict *const *v,
                             size_t n,
                             const struct leakgate_report_env *env);

/*
 * JSON results (docs/results-format.md, "leakgate-results" version 1):
 * environment plus every verdict with its per-stack measurements.  NULL on
 * ENOMEM.
 */
char *leakgate_report__json(const struct leakgate_verdict *const *v,
                            size_t n,
                            const struct leakgate_report_env *env);

/* How leakgate_report__put_escaped() escapes. */
enum leakgate_report_escape {
    LEAKGATE_REPORT_ESC_XML_TEXT, /* & < > (HTML and XML text) */
    LEAKGATE_REPORT_ESC_XML_ATTR, /* also " ' and newlines */
    LEAKGATE_REPORT_ESC_JSON      /* inside a JSON string, no quotes */
};

/*
 * Append s (NULL: nothing) escaped for mode, with malformed UTF-8 replaced
 * ("?" in XML, U+FFFD in JSON): the escaper of this module, shared with
 * the other renderers (html, the profile diff).  Cannot fail (a failed
 * allocation marks b).
 */
void leakgate_report__put_escaped(struct leakgate_buf *b,
                                  const char *s,
                                  enum leakgate_report_escape mode);

#endif
