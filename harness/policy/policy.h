/* SPDX-License-Identifier: MIT */
/*
 * policy: from thresholds and measured growth to a verdict.  Core stage 4:
 * in-memory, no I/O, no globals.
 *
 * Resolution for a window "suite/test": start from `defaults`, apply the
 * most specific matching `suites` entry (by suite name), then the most
 * specific matching `tests` entry (by "suite/test").  Most specific = an
 * exact name beats any glob; among globs the one with more literal
 * characters; ties go to the entry written first.  Keys an entry does not
 * set fall through.  Stack rules come from the winning tests entry, then
 * the winning suites entry.
 *
 * A stack is judged only when it grew (bytes > 0).  Ignored when an
 * `ignore` rule matches; else its limit is that of the first matching
 * stack rule, else stack_limit.  A rule matches when its frame globs match
 * function names of the stack in order from outer to inner (a
 * subsequence, not necessarily adjacent); an `exact: true` rule when its
 * globs match the stack's rule names one for one, none left over.
 */
#ifndef LEAKGATE_POLICY_H
#define LEAKGATE_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"

struct leakgate_policy_settings {
    uint64_t stack_limit; /* bytes */
    bool total_unlimited;
    uint64_t total_limit; /* bytes when !total_unlimited */
    bool lost_limited;    /* a lost_limit applies (else: lost bytes are */
    uint64_t lost_limit;  /* judged as any), bytes of lost objects */
    bool peak_limited;    /* a peak_limit applies (else: measured only) */
    uint64_t peak_limit;  /* bytes above the window's start */
    const struct leakgate_config_entry *peak_entry; /* it came from (NULL:
                                                       the option) */
    unsigned int warmup;
    unsigned int repeat;    /* measured runs (>= 1) */
    unsigned int settle_ms; /* wait for live bytes to stop falling */
    bool suite_scope;       /* suites entry says scope: suite */
    bool rerun;             /* the test may run twice (fast first pass) */
    const struct leakgate_config_entry *test_entry;  /* winner or NULL */
    const struct leakgate_config_entry *suite_entry; /* winner or NULL */
};

/*
 * Resolve the settings of suite/test (test NULL for the suite's own
 * window, which matches only suites entries and defaults).  cfg may be
 * NULL (all limits 0, total unlimited).  Cannot fail.
 */
void leakgate_policy__resolve(struct leakgate_policy_settings *out,
                              const struct leakgate_config *cfg,
                              const char *suite,
                              const char *test);

/* A measured peak (known) over the peak_limit that s resolved. */
bool leakgate_policy__peak_over(const struct leakgate_policy_settings *s,
                                bool known,
                                uint64_t peak);

/*
 * Whether `module` (a frame's object path, NULL = unknown) is the C
 * runtime: the C library, the dynamic linker, glibc's split-out libraries
 * and its NSS modules.  The built-in ignore list matches only allocations
 * made inside it.  Cannot fail.
 */
bool leakgate_policy__runtime_module(const char *module);

/*
 * --peak-limit: `limit` is the defaults' peak_limit of the run; an entry
 * of the file that sets peak_limit (a suites or tests entry) wins.
 * peak_entry NULL afterwards names the option as the source.  Cannot
 * fail.
 */
void leakgate_policy__apply_peak_option(struct leakgate_policy_settings *s,
                                        uint64_t limit);

/* Input: one grown stack, its function names innermost first (NULL
 * entries = unknown function, never matched by a glob), the path of each
 * frame's object (parallel to functions; NULL entries or a NULL array =
 * unknown, never the C runtime), and its rule names (thresholds_rules.h),
 * innermost first, which `exact: true` rules compare. */
struct leakgate_policy_stack {
    const char *const *functions;
    size_t nfunctions;
    int64_t bytes;
    int64_t objs;
    bool reach_known;   /* which of its objects are lost is known: */
    int64_t lost_bytes; /* lost or indirectly lost (alloc/reach.h) */
    const char *const *rule_names;
    size_t nrule_names;
    const char *const *modules;
};

/* Output per stack. */
struct leakgate_policy_stack_verdict {
    bool judged;                                   /* bytes > 0 */
    bool ignored;                                  /* an ignore rule matched */
    const struct leakgate_config_ignore *ignore;   /* when ignored */
    const struct leakgate_config_stack_rule *rule; /* limit source or NULL */
    uint64_t limit;                                /* bytes allowed */
    bool over; /* judged && !ignored && bytes > limit */
};

struct leakgate_policy_verdict {
    uint64_t total_bytes; /* sum of bytes of judged, non-ignored stacks */
    uint64_t total_objs;
    bool total_over;     /* total_bytes > total_limit */
    uint64_t lost_bytes; /* lost bytes of judged, non-ignored stacks */
    bool lost_unknown;   /* some such stack's kinds are not known */
    bool lost_over;      /* lost_limited, known, lost_bytes > lost_limit */
    size_t nover;        /* stacks over their limit */
    bool failed;         /* nover > 0 || total_over || lost_over */
};

/*
 * Judge n stacks.  per_stack has n elements (caller-allocated).
 * cfg may be NULL.  Cannot fail.
 */
void leakgate_policy__judge(struct leakgate_policy_verdict *out,
                            struct leakgate_policy_stack_verdict *per_stack,
                            const struct leakgate_config *cfg,
                            const struct leakgate_policy_settings *settings,
                            const struct leakgate_policy_stack *stacks,
                            size_t n);

/* The built-in ignore list (applied unless `builtin_ignore: false`); its
 * entries have line 0 and a reason starting with "built-in:".  Static
 * storage; cannot fail. */
const struct leakgate_config_ignore *
leakgate_policy__builtin_ignores(size_t *n);

/* True when the frame globs match `functions` (innermost first) as an
 * outer-to-inner subsequence. Cannot fail. */
bool leakgate_policy__frames_match(char *const *globs,
                                   size_t nglobs,
                                   const char *const *functions,
                                   size_t nfunctions);

#endif
