/* SPDX-License-Identifier: MIT */
/*
 * report_parts: what the renderers of one verdict share (report.c, below
 * report_yaml.c, report_text.c, report_json.c, report_junit.c and
 * report_pieces.c, which all call it): the escapers, which stacks count
 * and which a report shows, what they add up to, where a stack's limit
 * came from.  Private to harness/outputs/report*.c.
 *
 * "Counted" stacks grew (bytes > 0) and are not ignored: they make up the
 * retained total.  "Offending" stacks are printed in full: over their own
 * limit, or every counted stack when the total is over (and every counted
 * stack of a verdict that was not judged).
 */
#ifndef LEAKGATE_REPORT_PARTS_H
#define LEAKGATE_REPORT_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report.h"
#include "util.h"
#include "verdict.h"

/* What a verdict's stacks add up to. */
struct leakgate_report_tally {
    int64_t bytes, objs;  /* counted stacks */
    int64_t requested;    /* ... the bytes asked for, when requested_known */
    bool requested_known; /* (every counted stack's request seen) */
    size_t ncounted;
    size_t nshown;  /* offending stacks */
    size_t nwithin; /* counted but not shown */
    int64_t within_bytes, within_objs;
    size_t nignored;
    size_t nfreed; /* stacks that shrank */
    int64_t freed_bytes, freed_objs;
};

/* Where a stack's limit came from. */
enum leakgate_report_source {
    LEAKGATE_REPORT_SOURCE_NONE, /* not judged or ignored */
    LEAKGATE_REPORT_SOURCE_RULE,
    LEAKGATE_REPORT_SOURCE_TEST_ENTRY,
    LEAKGATE_REPORT_SOURCE_SUITE_ENTRY,
    LEAKGATE_REPORT_SOURCE_DEFAULTS,
};

/* s, or "unknown" when it is NULL or empty.  Cannot fail. */
const char *leakgate_report__or_unknown(const char *s);

/* one when n is 1, else many.  Cannot fail. */
const char *
leakgate_report__plural(uint64_t n, const char *one, const char *many);

/* n with thousands separators ("4,208") into out (>= 32 bytes); returns
 * out.  Cannot fail. */
const char *leakgate_report__group_u(char *out, uint64_t n, bool negative);

/* s grew and is not ignored.  Cannot fail. */
bool leakgate_report__counted(const struct leakgate_vstack *s);

/* v failed the gate (not only its assertions).  Cannot fail. */
bool leakgate_report__gate_failed(const struct leakgate_verdict *v);

/* s of v is printed in full.  Cannot fail. */
bool leakgate_report__offending(const struct leakgate_verdict *v,
                                const struct leakgate_vstack *s);

/* v is a suite's own window ("[suite]").  Cannot fail. */
bool leakgate_report__suite_window(const struct leakgate_verdict *v);

/* What v's stacks add up to, into *out.  Cannot fail. */
void leakgate_report__tally(struct leakgate_report_tally *out,
                            const struct leakgate_verdict *v);

/* Where the limit of s of v came from.  Cannot fail. */
enum leakgate_report_source
leakgate_report__limit_source(const struct leakgate_verdict *v,
                              const struct leakgate_vstack *s);

/* frames[*begin, *end) of s to show; every frame when the range is empty
 * or out of bounds.  Cannot fail. */
void leakgate_report__shown_range(const struct leakgate_vstack *s,
                                  size_t *begin,
                                  size_t *end);

/* Append the first n bytes of s escaped for mode (malformed UTF-8
 * replaced, as leakgate_report__put_escaped() does).  Cannot fail (a
 * failed allocation marks b). */
void leakgate_report__put_escaped_n(struct leakgate_buf *b,
                                    const char *s,
                                    size_t n,
                                    enum leakgate_report_escape mode);

/* v's suite name, "" when it has none.  Cannot fail. */
const char *leakgate_report__suite_of(const struct leakgate_verdict *v);

/* v's wall time in seconds, 0 when it is not a positive finite number.
 * Cannot fail. */
double leakgate_report__seconds_of(const struct leakgate_verdict *v);

#endif
