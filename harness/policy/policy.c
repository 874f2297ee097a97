/* SPDX-License-Identifier: MIT */
/*
 * policy: thresholds plus measured growth give a verdict.  Core stage 4,
 * between diff/symbolize (which produce the grown stacks) and report
 * (which renders the verdict).  In-memory, no I/O, no globals, and no
 * allocation: every function here cannot fail, so it may run while the
 * gate is recording.
 *
 * Names are matched in two ways: a pattern equal to the name (strcmp)
 * matches and counts as exact, since real names may hold glob
 * metacharacters ("suite/[suite]", "operator[]"); otherwise the pattern
 * is a glob (leakgate_util__glob_match).
 */
#include "policy.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

/* "suite/test" names longer than this are matched without a glob (see
 * match_test): the buffer lives on the stack because policy never
 * allocates. */
#define NAME_MAX_LEN 4096

/* How well pattern matches name: 0 for no match, else 1 + specificity
 * (SIZE_MAX for an exact name). */
static size_t
rank(const char *pattern, const char *name)
{
    size_t spec;

    if (strcmp(pattern, name) == 0)
        return SIZE_MAX;
    if (!leakgate_util__glob_match(pattern, name))
        return 0;
    spec = leakgate_util__glob_specificity(pattern);
    return spec == SIZE_MAX ? SIZE_MAX : spec + 1;
}

/* rank() against "suite/test" without allocating.  A name too long for
 * the buffer can only be matched exactly. */
static size_t
rank_test(const char *pattern, const char *suite, const char *test)
{
    char name[NAME_MAX_LEN];
    size_t ls = strlen(suite), lt = strlen(test);

    /* memcpy, not snprintf: this runs for every entry and every
     * registered test of every process (ctest starts one per test). */
    if (ls + 1 + lt < sizeof name) {
        memcpy(name, suite, ls);
        name[ls] = '/';
        memcpy(name + ls + 1, test, lt + 1);
        return rank(pattern, name);
    }
    return leakgate_util__name_is(pattern, suite, test) ? SIZE_MAX : 0;
}

/* The most specific matching entry; ties go to the first written. */
static const struct leakgate_config_entry *
best_entry(const struct leakgate_config_entry *entries,
           size_t n,
           const char *suite,
           const char *test)
{
    const struct leakgate_config_entry *best = NULL;
    size_t best_rank = 0;

    for (size_t i = 0; i < n; i++) {
        size_t r = test ? rank_test(entries[i].pattern, suite, test)
                        : rank(entries[i].pattern, suite);

        if (r > best_rank) {
            best = &entries[i];
            best_rank = r;
        }
    }
    return best;
}

/* Keys the entry sets override out; the others fall through. */
static void
apply(struct leakgate_policy_settings *out,
      const struct leakgate_config_entry *e)
{
    if (!e)
        return;
    if (e->has_stack_limit)
        out->stack_limit = e->stack_limit;
    if (e->has_total_limit) {
        out->total_unlimited = e->total_unlimited;
        out->total_limit = e->total_unlimited ? 0 : e->total_limit;
    }
    if (e->has_lost_limit) {
        out->lost_limited = !e->lost_unlimited;
        out->lost_limit = e->lost_unlimited ? 0 : e->lost_limit;
    }
    if (e->has_peak_limit) {
        out->peak_limited = !e->peak_unlimited;
        out->peak_limit = e->peak_unlimited ? 0 : e->peak_limit;
        out->peak_entry = e;
    }
    if (e->has_warmup)
        out->warmup = e->warmup;
    if (e->has_repeat)
        out->repeat = e->repeat;
    if (e->has_settle)
        out->settle_ms = e->settle_ms;
    if (e->has_rerun)
        out->rerun = e->rerun;
    if (e->scope != LEAKGATE_CONFIG_SCOPE_UNSET)
        out->suite_scope = e->scope == LEAKGATE_CONFIG_SCOPE_SUITE;
}

bool
leakgate_policy__peak_over(const struct leakgate_policy_settings *s,
                           bool known,
                           uint64_t peak)
{
    return known && s->peak_limited && peak > s->peak_limit;
}

void
leakgate_policy__apply_peak_option(struct leakgate_policy_settings *s,
                                   uint64_t limit)
{
    if (s->peak_entry && s->peak_entry->pattern)
        return;
    s->peak_limited = true;
    s->peak_limit = limit;
    s->peak_entry = NULL;
}

void
leakgate_policy__resolve(struct leakgate_policy_settings *out,
                         const struct leakgate_config *cfg,
                         const char *suite,
                         const char *test)
{
    memset(out, 0, sizeof *out);
    out->total_unlimited = true;
    out->repeat = 1;
    out->rerun = true;
    if (!cfg)
        return;
    apply(out, &cfg->defaults);
    out->suite_entry = best_entry(cfg->suites, cfg->nsuites, suite, NULL);
    apply(out, out->suite_entry);
    if (test) {
        out->test_entry = best_entry(cfg->tests, cfg->ntests, suite, test);
        apply(out, out->test_entry);
    }
}

bool
leakgate_policy__frames_match(char *const *globs,
                              size_t nglobs,
                              const char *const *functions,
                              size_t nfunctions)
{
    size_t g = 0;

    /* An empty rule would match every stack: treat it as matching none. */
    if (nglobs == 0)
        return false;
    /* Greedy is exact for subsequences: taking the outermost function
     * that matches the next glob never loses a later match. */
    for (size_t i = nfunctions; i > 0 && g < nglobs; i--) {
        const char *fn = functions[i - 1];

        if (fn && rank(globs[g], fn) > 0)
            g++;
    }
    return g == nglobs;
}

/*
 * The built-in ignore list: one-time allocations of the C runtime that
 * land in whichever test first needs them (docs/thresholds.md lists each
 * with the test that shows it happens once, tests/integration/
 * runtime_once.c).  Globs name the public entry points, which resolve
 * with or without the C library's debug information.  line 0 marks them.
 */
#define BUILTIN_AT(innermost, name, reason, ...)                               \
    {                                                                          \
        (char *[]){__VA_ARGS__},                                               \
            sizeof((char *[]){__VA_ARGS__}) / sizeof(char *),                  \
            (char[]){reason}, 0, innermost                                     \
    }
#define BUILTIN(name, reason, ...) BUILTIN_AT(false, name, reason, __VA_ARGS__)

static const struct leakgate_config_ignore builtin_ignores[] = {
    BUILTIN(stdio,
            "built-in: glibc stdio buffer, allocated on a stream's "
            "first I/O and kept until fclose",
            (char[]){"*_IO_file_doallocate"}),
    BUILTIN(tz,
            "built-in: glibc time-zone data, loaded once by the first "
            "localtime/mktime/tzset",
            (char[]){"*tzset*"}),
    BUILTIN(localtime,
            "built-in: glibc time-zone data, loaded once by the "
            "first localtime/mktime/tzset",
            (char[]){"*localtime*"}),
    BUILTIN(mktime,
            "built-in: glibc time-zone data, loaded once by the "
            "first localtime/mktime/tzset",
            (char[]){"*mktime"}),
    BUILTIN(dtv,
            "built-in: glibc thread descriptor (DTV) kept with the "
            "cached stack of a joined thread",
            (char[]){"*pthread_create*"}),
    BUILTIN(dtv_tls,
            "built-in: glibc thread descriptor (DTV) kept with the "
            "cached stack of a joined thread",
            (char[]){"*_dl_allocate_tls*"}),
    BUILTIN(locale,
            "built-in: glibc locale data, loaded once by setlocale",
            (char[]){"*setlocale"}),
    BUILTIN(dlerror,
            "built-in: glibc dlerror state, kept per thread until "
            "the next dlerror",
            (char[]){"*dlerror"}),
    BUILTIN(dlerror_versioned,
            "built-in: glibc dlerror state, kept per thread until "
            "the next dlerror",
            (char[]){"dlerror@*"}),
    BUILTIN_AT(true,
               dlerror_run,
               "built-in: glibc dlerror state, kept per thread until "
               "the next dlerror",
               (char[]){"_dlerror_run"}),
    BUILTIN_AT(true,
               dl_find_object,
               "built-in: glibc's table of loaded objects for "
               "_dl_find_object, allocated by the process's first dlopen "
               "and kept",
               (char[]){"_dl_find_object_update"}),
    BUILTIN(nss,
            "built-in: glibc NSS modules and their static results, "
            "loaded once by the first getpw*/getgr* lookup",
            (char[]){"*getp[uw]*"}),
    BUILTIN(nss_gr,
            "built-in: glibc NSS modules and their static results, "
            "loaded once by the first getpw*/getgr* lookup",
            (char[]){"*getgr*"}),
};

#undef BUILTIN
#undef BUILTIN_AT

const struct leakgate_config_ignore *
leakgate_policy__builtin_ignores(size_t *n)
{
    *n = sizeof builtin_ignores / sizeof builtin_ignores[0];
    return builtin_ignores;
}

/* Whether ig matches s.  An innermost entry's last glob names the
 * allocator's caller (the innermost frame); its other globs match
 * outside it. */
static bool
ignore_matches(const struct leakgate_config_ignore *ig,
               const struct leakgate_policy_stack *s)
{
    size_t n = ig->nframes;

    if (!ig->innermost)
        return leakgate_policy__frames_match(ig->frames, n, s->functions,
                                             s->nfunctions);
    if (n == 0 || s->nfunctions == 0 || !s->functions[0] ||
        rank(ig->frames[n - 1], s->functions[0]) == 0)
        return false;
    return n == 1 ||
           leakgate_policy__frames_match(ig->frames, n - 1, s->functions + 1,
                                         s->nfunctions - 1);
}

static const struct leakgate_config_ignore *
match_ignores(const struct leakgate_config_ignore *list,
              size_t n,
              const struct leakgate_policy_stack *s)
{
    for (size_t i = 0; i < n; i++) {
        if (ignore_matches(&list[i], s))
            return &list[i];
    }
    return NULL;
}

bool
leakgate_policy__runtime_module(const char *module)
{
    static const char *const runtime[] = {
        "libc.so.",   "ld-linux",    "libpthread.so.", "libdl.so.",
        "librt.so.",  "libm.so.",    "libresolv.so.",  "libnss_",
        "libnsl.so.", "libutil.so.",
    };
    const char *base;

    if (!module)
        return false;
    base = strrchr(module, '/');
    base = base ? base + 1 : module;
    for (size_t i = 0; i < sizeof runtime / sizeof runtime[0]; i++) {
        if (strncmp(base, runtime[i], strlen(runtime[i])) == 0)
            return true;
    }
    return false;
}

/* How many of s's innermost frames are the C runtime's: the built-in
 * ignores match within these only, so that a stack the runtime merely
 * passes through (a library constructor run by dlopen, a user function
 * named like a runtime entry point) is still the caller's. */
static size_t
runtime_run(const struct leakgate_policy_stack *s)
{
    size_t n = 0;

    while (s->modules && n < s->nfunctions &&
           leakgate_policy__runtime_module(s->modules[n]))
        n++;
    return n;
}

static const struct leakgate_config_ignore *
find_ignore(const struct leakgate_config *cfg,
            const struct leakgate_policy_stack *s)
{
    const struct leakgate_config_ignore *ig = NULL;
    size_t nbuiltin;

    if (cfg)
        ig = match_ignores(cfg->ignores, cfg->nignores, s);
    if (!ig && (!cfg || cfg->builtin_ignore)) {
        const struct leakgate_config_ignore *builtin =
            leakgate_policy__builtin_ignores(&nbuiltin);
        struct leakgate_policy_stack inner = *s;

        inner.nfunctions = runtime_run(s);
        ig = match_ignores(builtin, nbuiltin, &inner);
    }
    return ig;
}

/* An exact rule: one glob per rule name, outer to inner, none left. */
static bool
exact_match(const struct leakgate_config_stack_rule *r,
            const struct leakgate_policy_stack *s)
{
    if (r->nframes != s->nrule_names)
        return false;
    for (size_t k = 0; k < r->nframes; k++) {
        const char *fn = s->rule_names[s->nrule_names - 1 - k];

        if (!fn || rank(r->frames[k], fn) == 0)
            return false;
    }
    return true;
}

static const struct leakgate_config_stack_rule *
find_rule_in(const struct leakgate_config_entry *e,
             const struct leakgate_policy_stack *s)
{
    for (size_t i = 0; e && i < e->nstacks; i++) {
        const struct leakgate_config_stack_rule *r = &e->stacks[i];

        if (r->exact ? exact_match(r, s)
                     : leakgate_policy__frames_match(
                           r->frames, r->nframes, s->functions, s->nfunctions))
            return r;
    }
    return NULL;
}

static void
judge_one(struct leakgate_policy_stack_verdict *v,
          const struct leakgate_config *cfg,
          const struct leakgate_policy_settings *settings,
          const struct leakgate_policy_stack *s)
{
    memset(v, 0, sizeof *v);
    v->judged = s->bytes > 0;
    if (!v->judged)
        return;
    v->ignore = find_ignore(cfg, s);
    v->ignored = v->ignore != NULL;
    if (v->ignored)
        return;
    v->rule = find_rule_in(settings->test_entry, s);
    if (!v->rule)
        v->rule = find_rule_in(settings->suite_entry, s);
    v->limit = v->rule ? v->rule->limit : settings->stack_limit;
    v->over = (uint64_t)s->bytes > v->limit;
}

/* a + b, saturating (totals must not wrap to a small number). */
static uint64_t
add_sat(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void
leakgate_policy__judge(struct leakgate_policy_verdict *out,
                       struct leakgate_policy_stack_verdict *per_stack,
                       const struct leakgate_config *cfg,
                       const struct leakgate_policy_settings *settings,
                       const struct leakgate_policy_stack *stacks,
                       size_t n)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++) {
        struct leakgate_policy_stack_verdict *v = &per_stack[i];

        judge_one(v, cfg, settings, &stacks[i]);
        if (!v->judged || v->ignored)
            continue;
        out->total_bytes = add_sat(out->total_bytes, (uint64_t)stacks[i].bytes);
        if (stacks[i].objs > 0)
            out->total_objs =
                add_sat(out->total_objs, (uint64_t)stacks[i].objs);
        if (!stacks[i].reach_known)
            out->lost_unknown = true;
        else if (stacks[i].lost_bytes > 0)
            out->lost_bytes =
                add_sat(out->lost_bytes, (uint64_t)stacks[i].lost_bytes);
        if (v->over)
            out->nover++;
    }
    out->total_over =
        !settings->total_unlimited && out->total_bytes > settings->total_limit;
    out->lost_over = settings->lost_limited && !out->lost_unknown &&
                     out->lost_bytes > settings->lost_limit;
    out->failed = out->nover > 0 || out->total_over || out->lost_over;
}
