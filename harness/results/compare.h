/* SPDX-License-Identifier: MIT */
/*
 * compare: two runs' windows side by side, test by test (`leakgate
 * compare`).  Core: works on verdicts already loaded (results.c) and
 * renders text, Markdown and JSON in memory; no I/O, no globals.  The
 * public handle leakgate_compare (leakgate/compare.h) is this struct;
 * compare_api.c loads, checks and writes.
 *
 * Invariants: one row per window name of either side; rows are sorted
 * regressions first, then by the size of the change (bytes of retained
 * or peak, then allocations), then by name; a row's verdicts are borrowed
 * from the results the comparison was built from.
 */
#ifndef LEAKGATE_COMPARE_INTERNAL_H
#define LEAKGATE_COMPARE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "leakgate/compare.h"
#include "verdict.h"

/* What made a row a regression (bits). */
#define LEAKGATE_COMPARE_WHY_RETAINED 1u  /* retained bytes grew */
#define LEAKGATE_COMPARE_WHY_NEW_STACK 2u /* a retained stack is new */
#define LEAKGATE_COMPARE_WHY_PEAK 4u      /* the peak grew past the limit */
#define LEAKGATE_COMPARE_WHY_ALLOCS 8u    /* allocations grew past it */

/* What counts as a regression, parsed. */
struct leakgate_compare_limits {
    bool peak_on;
    unsigned int peak_pct; /* percent of the base peak */
    uint64_t peak_floor;   /* bytes: smaller peak growth never counts */
    bool alloc_on;
    unsigned int alloc_pct; /* percent of the base allocations */
    uint64_t alloc_floor;   /* fewer more allocations never count */
    bool new_stacks;
};

/* One window of either run: its origin (a shared output's ctest prefix
 * and "BINARY:", "" for none) and its name. */
struct leakgate_compare_row {
    const char *origin;                  /* borrowed from a verdict, or "" */
    const char *name;                    /* borrowed from a verdict */
    const struct leakgate_verdict *base; /* NULL: a new test */
    const struct leakgate_verdict *head; /* NULL: a removed test */
    unsigned int why;                    /* LEAKGATE_COMPARE_WHY_* */
    bool changed; /* any figure differs, or new, or removed */
    const struct leakgate_vstack **new_stacks; /* head's counted stacks the
                                                  base did not retain
                                                  (owned array) */
    size_t nnew_stacks;
    uint64_t size;   /* sort key: the larger change in bytes */
    uint64_t allocs; /* sort key: the change in allocations */
};

struct leakgate_compare {
    struct leakgate_compare_row *rows; /* sorted, see above */
    size_t n;
    size_t nregressions;   /* rows with why bits */
    size_t nchanged;       /* in both runs, changed, not a regression */
    size_t nnew, nremoved; /* in one run only (regressions included) */
    size_t nunchanged;     /* in both runs, every figure the same */
    struct leakgate_compare_limits lim;
    char *base_name, *head_name; /* owned; "BASE", "HEAD" by default */
    size_t base_windows, head_windows;
    size_t base_files, head_files;
    char *warning;         /* the runs were measured differently (the
                              sampling modes differ), or NULL (owned) */
    char *head_thresholds; /* the head run's thresholds file (owned), or
                              NULL: where SARIF points a stackless
                              regression */
};

/*
 * Parse the options into *out.  Returns 0 or LEAKGATE_EUSAGE naming the
 * option and value ("--peak-growth: '1x' is not a percentage ...").
 */
int leakgate_compare__limits(struct leakgate_compare_limits *out,
                             const struct leakgate_compare_options *opts);

/*
 * Fill c's rows from the windows of both runs (one verdict per name each,
 * as leakgate_results__view() gives them); c->lim must be set.  Returns 0
 * or LEAKGATE_ENOMEM (c keeps no rows).
 */
int leakgate_compare__build(struct leakgate_compare *c,
                            const struct leakgate_verdict *const *base,
                            size_t nbase,
                            const struct leakgate_verdict *const *head,
                            size_t nhead);

/* The renderings of leakgate_compare_render(); NULL on ENOMEM.  Caller
 * frees. */
char *leakgate_compare__text(const struct leakgate_compare *c);
char *leakgate_compare__markdown(const struct leakgate_compare *c);
char *leakgate_compare__json(const struct leakgate_compare *c);

/* What made r a regression, into b: "retained +16 B, 1 new retained
 * stack, peak +200.0% (+24,576 B), allocations +50.0% (+8)"; nothing
 * for a row that did not regress.  Cannot fail (b marks it). */
void leakgate_compare__reasons(struct leakgate_buf *b,
                               const struct leakgate_compare_row *r);

/* The stack's identity across builds: the functions of its shown frames,
 * innermost first, joined by ';' ("??" for an unknown one), into b; false
 * (b untouched) when it was not symbolized.  Cannot fail (b marks it). */
bool leakgate_compare__stack_key(struct leakgate_buf *b,
                                 const struct leakgate_vstack *s);

/* Whether s counts toward its window's retained bytes: bytes, judged,
 * not ignored.  Cannot fail. */
bool leakgate_compare__counted(const struct leakgate_vstack *s);

/* Free c's rows and names (not c).  Cannot fail. */
void leakgate_compare__dispose(struct leakgate_compare *c);

#endif
