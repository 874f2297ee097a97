/* SPDX-License-Identifier: MIT */
/*
 * html: one self-contained index.html for a run, the page a reviewer opens
 * from CI artifacts.  Core (beside report): builds the page in memory from
 * verdicts; no I/O, no clock (the date is given), no globals.
 *
 * The page lists every window with its verdict, retained bytes against
 * its limits, its peak against its peak_limit and its allocations, and the
 * harness's notes; then the measured peaks again, biggest first; then, for
 * each failing window, its offending stacks with file:line, the stacks
 * that held its peak when it went over its peak_limit, the call graph
 * (the SVG text inlined), the exact YAML that accepts the growth, the
 * artifacts and the commands to inspect them; and the environment the
 * numbers depend on (jemalloc version, sampling mode, binary and
 * build-id, thresholds file, date, Graphviz).  No scripts, no network: one
 * inline style sheet, relative links to the artifacts.  Every string is
 * HTML-escaped; an SVG is inlined only when it is plain Graphviz output (an
 * <svg> element without script), else linked.
 */
#ifndef LEAKGATE_HTML_H
#define LEAKGATE_HTML_H

#include <stddef.h>

#include "report.h"
#include "verdict.h"

/* The run as a whole. */
struct leakgate_html_run {
    const char *title;    /* e.g. the test binary's name; NULL: none */
    const char *date;     /* when the page was written, e.g. ISO 8601 UTC */
    const char *graphviz; /* what became of the pictures, e.g. "dot: SVG
                             and PDF drawn"; NULL: not said */
};

/*
 * The index page for n verdicts (in run order).  svgs[i] is the SVG text
 * of v[i]'s call graph or NULL (svgs itself may be NULL).  Links to
 * artifacts under env->report_dir are made relative to it (the page is
 * written there).  Returns the page or NULL on ENOMEM; caller frees.
 */
char *leakgate_html__index(const struct leakgate_verdict *const *v,
                           const char *const *svgs,
                           size_t n,
                           const struct leakgate_report_env *env,
                           const struct leakgate_html_run *run);

#endif
