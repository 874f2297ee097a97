/* SPDX-License-Identifier: MIT */
/*
 * thresholds_rules: the stack rules leakgate writes, computed once for
 * the failure report's suggestion (report.c) and for the ratchet
 * (--update-thresholds, `thresholds merge`, thresholds.c), so that what
 * is printed and what is written agree to the byte.  Core: in-memory, no
 * I/O, no globals.
 *
 * A stack's rule names are the function names of its shown frames (the
 * user's code, report.c's trimming) without the project's allocation
 * wrappers at the inner end (`allocators:`), without system-library
 * frames (their names differ with the C library's debug information) and
 * frames without a name, consecutive repeats (recursion) folded.  A rule
 * leakgate writes is `exact: true` with every rule name of the stack it
 * accepts: it matches that stack and any stack with the same functions
 * (the same path through other lines), never a stack on another path,
 * and it survives line-number changes and rebuilds.
 */
#ifndef LEAKGATE_THRESHOLDS_RULES_H
#define LEAKGATE_THRESHOLDS_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "policy.h"
#include "util.h"
#include "verdict.h"

/* The rule names of s, innermost first, into out (room for s->nframes
 * names, borrowed from s).  cfg (may be NULL) names the allocation
 * wrappers.  Returns how many; 0 when the stack has no usable name.
 * Cannot fail. */
size_t leakgate_thresholds__rule_names(const char **out,
                                       const struct leakgate_vstack *s,
                                       const struct leakgate_config *cfg);

/* Move s->shown_begin past the allocation wrappers of cfg at the inner
 * end of the shown frames (and the system frames under them), as the
 * allocator's own frames are: never past the last shown frame.  Cannot
 * fail. */
void leakgate_thresholds__trim_allocators(struct leakgate_vstack *s,
                                          const struct leakgate_config *cfg);

/* True when entry e names `name` exactly (its pattern is the name, or
 * has no wildcard): leakgate edits it in place instead of writing a new
 * exact entry.  Cannot fail. */
bool leakgate_thresholds__exclusive(const struct leakgate_config_entry *e,
                                    const char *name);

/* A stacks rule to write. */
struct leakgate_trule {
    const char **names; /* outer to inner, exact function names (owned
                           array; strings borrowed from the verdicts) */
    size_t nnames;
    uint64_t limit; /* bytes: the most one stack it covers retained */
    size_t nstacks; /* stacks it covers in one window (the most seen) */
};

/* What one target entry needs so that the windows gathered into it
 * pass. */
struct leakgate_tneed {
    const struct leakgate_config_entry *entry; /* edited in place, or NULL:
                                                  a new entry */
    struct leakgate_trule *rules;              /* new rules, in order */
    size_t nrules;
    size_t cap;      /* rules allocated */
    uint64_t *raise; /* per rule of entry: new limit, 0 = unchanged */
    bool set_stack, set_total, set_peak;
    uint64_t stack_limit, total_limit; /* bytes, when set_* */
    uint64_t peak_bytes; /* when set_peak: the largest peak over its limit
                            (its limit: peak_allowance() of it) */
};

/* Start a need for `entry` (NULL: a new entry).  Returns false on
 * ENOMEM. */
bool leakgate_thresholds__need_init(struct leakgate_tneed *t,
                                    const struct leakgate_config_entry *entry);

/*
 * Add what window v needs, judged as per (v->nstacks verdicts) and pol:
 * a stack over a rule of t->entry raises it, any other stack over its
 * limit gets an exact rule (or raises stack_limit without names), whose
 * limit covers every counted stack of v with the same names that the
 * new rule will govern; a total over its cap raises total_limit.  cfg
 * names the allocation wrappers.  Returns false on ENOMEM.
 */
bool leakgate_thresholds__need_window(
    struct leakgate_tneed *t,
    const struct leakgate_verdict *v,
    const struct leakgate_policy_stack_verdict *per,
    const struct leakgate_policy_verdict *pol,
    const struct leakgate_config *cfg);

/*
 * The peak_limit leakgate writes for a measured peak (bytes above the
 * window's start): the peak plus headroom, max(4 KiB, peak / 16),
 * rounded up to a whole KiB.  A peak varies more than what a window
 * retains (thread timing, a table's growth): the headroom keeps a limit
 * recorded from one run from failing the next; docs/thresholds.md "Peak
 * limits and the ratchet" gives the measurements behind it.  Monotonic
 * (a larger peak never gets a smaller limit) and always above peak;
 * saturates at the largest whole KiB.  Cannot fail.
 */
uint64_t leakgate_thresholds__peak_allowance(uint64_t peak);

/* Window v's peak is over its peak_limit: the target entry gets
 * peak_limit = the allowance of the largest such peak (monotonic: of the
 * largest peak).  Cannot fail. */
void leakgate_thresholds__need_peak(struct leakgate_tneed *t,
                                    uint64_t peak_bytes);

void leakgate_thresholds__need_dispose(struct leakgate_tneed *t);

/* The key of an entry leakgate writes: the exact name, glob-escaped,
 * always quoted (double quotes unless the name needs escapes). */
void leakgate_thresholds__put_key(struct leakgate_buf *b, const char *name);

/* A glob that matches exactly name, as a YAML scalar (plain when it
 * reads back the same). */
void leakgate_thresholds__put_glob(struct leakgate_buf *b, const char *name);

/* The index of p in the array base[0, n) of elements of `size` bytes, or
 * SIZE_MAX when it is not in it (compared as addresses, so pointers into
 * other arrays, or a NULL base, are fine).  Cannot fail. */
size_t leakgate_thresholds__index(const void *p,
                                  const void *base,
                                  size_t n,
                                  size_t size);

#endif
