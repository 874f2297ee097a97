/* SPDX-License-Identifier: MIT */
/*
 * config: load the thresholds file (YAML, version 1; docs/thresholds.md)
 * with libyaml.  Adapter; the only module that includes yaml.h.
 *
 * Strict: an unknown key, a wrong type, a bad size or glob, a duplicate
 * key, or a missing `version: 1` is LEAKGATE_ECONFIG with the detail
 * "FILE:LINE:COLUMN: what (did you mean 'KEY'?)", lines and columns
 * 1-based.  Nothing is silently ignored.
 */
#ifndef LEAKGATE_CONFIG_H
#define LEAKGATE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum leakgate_config_scope {
    LEAKGATE_CONFIG_SCOPE_UNSET = 0,
    LEAKGATE_CONFIG_SCOPE_TEST,  /* scope: test (the default) */
    LEAKGATE_CONFIG_SCOPE_SUITE, /* scope: suite */
};

/* `frames: [glob, ...]` plus a limit: one entry of `stacks:`. */
struct leakgate_config_stack_rule {
    char **frames;     /* function globs, outer to inner */
    size_t nframes;    /* >= 1 */
    uint64_t limit;    /* bytes */
    unsigned int line; /* 1-based line of the rule in the file */
    bool exact;        /* `exact: true`: frames are all of the stack's rule
                          names (leakgate_policy_stack.rule_names), not a
                          subsequence of its functions */
};

/* One entry of `ignore:`. */
struct leakgate_config_ignore {
    char **frames; /* function globs, outer to inner */
    size_t nframes;
    char *reason; /* NULL when not given */
    unsigned int line;
    bool innermost; /* built-in only: the last glob names the innermost
                       frame, the function that called the allocator */
};

/* `defaults:`, one entry of `suites:` or one entry of `tests:`. */
struct leakgate_config_entry {
    char *pattern;     /* glob; NULL for defaults */
    unsigned int line; /* 1-based line of the key */
    bool has_stack_limit;
    uint64_t stack_limit; /* bytes */
    bool has_total_limit;
    bool total_unlimited; /* `total_limit: ~` */
    uint64_t total_limit; /* bytes, when !total_unlimited */
    bool has_lost_limit;
    bool lost_unlimited; /* `lost_limit: ~` (the default): not apart */
    uint64_t lost_limit; /* bytes of lost objects, when !lost_unlimited */
    bool has_peak_limit;
    bool peak_unlimited; /* `peak_limit: ~`: measured, not judged */
    uint64_t peak_limit; /* bytes above the window's start, when set */
    bool has_warmup;
    unsigned int warmup; /* runs */
    bool has_repeat;
    unsigned int repeat; /* measured runs, 1..100 */
    bool has_settle;
    unsigned int settle_ms; /* milliseconds, 0..60000 */
    bool has_rerun;
    bool rerun; /* false: measure in an exact window from the start */
    enum leakgate_config_scope scope; /* suites only */
    struct leakgate_config_stack_rule *stacks;
    size_t nstacks;
};

struct leakgate_config {
    char *path;                            /* as given, for messages */
    struct leakgate_config_entry defaults; /* pattern NULL */
    struct leakgate_config_entry *suites;  /* in file order */
    size_t nsuites;
    struct leakgate_config_entry *tests; /* in file order */
    size_t ntests;
    struct leakgate_config_ignore *ignores;
    size_t nignores;
    bool builtin_ignore; /* apply leakgate's built-in ignore list
                            (default true) */
    char **allocators;   /* `allocators:` function globs of the project's
                            allocation wrappers, trimmed like malloc */
    size_t nallocators;
};

/* Limits for the loader; 0 = default in brackets. */
struct leakgate_config_limits {
    size_t max_size;  /* file size [4 MiB] */
    size_t max_depth; /* YAML nesting [32] */
};

/*
 * Parse YAML text; `name` is used as FILE in messages.  limits may be NULL.
 * Returns 0; LEAKGATE_ECONFIG (detail as above); LEAKGATE_ETOOBIG;
 * LEAKGATE_ENOMEM.  *out is NULL on failure.
 */
int leakgate_config__parse(struct leakgate_config **out,
                           const char *text,
                           size_t len,
                           const char *name,
                           const struct leakgate_config_limits *limits);

/*
 * Read and parse a file.  Returns what leakgate_config__parse returns, or
 * LEAKGATE_ENOTFOUND / LEAKGATE_EIO naming the path.
 */
/* The thresholds file a run uses: `given` (--thresholds), else
 * ./leakgate.yaml when it exists, else NULL (every limit 0).  Cannot
 * fail. */
const char *leakgate_config__path(const char *given);

int leakgate_config__load(struct leakgate_config **out,
                          const char *path,
                          const struct leakgate_config_limits *limits);

/* An empty configuration (all limits 0). Returns 0 or LEAKGATE_ENOMEM. */
int leakgate_config__new_default(struct leakgate_config **out);

/*
 * Parse a size: a non-negative integer (bytes) or "<number> <unit>" with
 * unit B, KiB, MiB, GiB (powers of 1024) or KB, MB, GB (powers of 1000);
 * the space is optional; the number may have a fraction when a unit is
 * given if the result is a whole number of bytes.  Returns true on success.
 */
bool leakgate_config__parse_size(uint64_t *out, const char *text);

void leakgate_config__free(struct leakgate_config *cfg);

#endif
