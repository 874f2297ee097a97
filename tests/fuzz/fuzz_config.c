/* SPDX-License-Identifier: MIT */
/*
 * fuzz_config: libFuzzer harness for the thresholds loader
 * (leakgate_config__parse) and the policy that consumes its result
 * (leakgate_policy__resolve, leakgate_policy__judge).  Seeds: the YAML
 * fixtures and the example and corpus thresholds files.
 *
 * Properties checked, beyond "no crash, no leak, no undefined behaviour":
 * - a failure returns ECONFIG, ETOOBIG or ENOMEM, leaves *out NULL and a
 *   detail that starts with the file name;
 * - a loaded config has a pattern for every suites/tests entry and at
 *   least one frame glob per stack rule;
 * - with a nesting limit of 4 the same text fails with ETOOBIG or loads;
 * - for every entry's own name (and a name nothing matches) resolve and
 *   judge give a consistent verdict: nover counts the stacks over their
 *   limit, a stack is over only when judged, not ignored and above its
 *   limit, failed == (nover > 0 || total_over).
 */
#include "fuzz.h"

#include <stdbool.h>
#include <string.h>

#include "config.h"
#include "error.h"
#include "policy.h"

#define NAME "fuzz.yaml"
#define MAX_STACKS 64 /* synthetic stacks judged per name */

static void
check_failure(int err, const struct leakgate_config *cfg)
{
    FUZZ_CHECK(err == LEAKGATE_ECONFIG || err == LEAKGATE_ETOOBIG ||
               err == LEAKGATE_ENOMEM);
    FUZZ_CHECK(cfg == NULL);
    FUZZ_CHECK(strncmp(leakgate_error_last(), NAME, strlen(NAME)) == 0);
}

static void
check_entries(const struct leakgate_config_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(e[i].pattern != NULL);
        for (size_t r = 0; r < e[i].nstacks; r++)
            FUZZ_CHECK(e[i].stacks[r].nframes >= 1);
    }
}

/* Function names of the synthetic stacks: a rule's frames reversed
 * (rules are outer to inner, stacks innermost first), at most
 * MAX_FRAMES of them. */
#define MAX_FRAMES 16
static const char *names[MAX_STACKS][MAX_FRAMES];

static void
add_stack(struct leakgate_policy_stack *out,
          size_t n,
          char *const *frames,
          size_t nframes)
{
    size_t k = nframes < MAX_FRAMES ? nframes : MAX_FRAMES;

    for (size_t i = 0; i < k; i++)
        names[n][i] = frames[k - 1 - i];
    out[n].functions = names[n];
    out[n].nfunctions = k;
    out[n].bytes = (int64_t)(n * 4096) - 64; /* the first did not grow */
    out[n].objs = (int64_t)n;
}

/* One stack per ignore and per tests rule, with growing byte counts. */
static size_t
make_stacks(struct leakgate_policy_stack *out,
            const struct leakgate_config *cfg)
{
    size_t n = 0;

    for (size_t i = 0; i < cfg->nignores && n < MAX_STACKS; i++, n++)
        add_stack(out, n, cfg->ignores[i].frames, cfg->ignores[i].nframes);
    for (size_t i = 0; i < cfg->ntests && n < MAX_STACKS; i++) {
        const struct leakgate_config_entry *e = &cfg->tests[i];

        for (size_t r = 0; r < e->nstacks && n < MAX_STACKS; r++, n++)
            add_stack(out, n, e->stacks[r].frames, e->stacks[r].nframes);
    }
    return n;
}

static void
judge(const struct leakgate_config *cfg, const char *suite, const char *test)
{
    static struct leakgate_policy_stack stacks[MAX_STACKS];
    static struct leakgate_policy_stack_verdict per[MAX_STACKS];
    struct leakgate_policy_settings set;
    struct leakgate_policy_verdict v;
    size_t n = make_stacks(stacks, cfg), nover = 0;

    leakgate_policy__resolve(&set, cfg, suite, test);
    leakgate_policy__judge(&v, per, cfg, &set, stacks, n);
    for (size_t i = 0; i < n; i++) {
        const struct leakgate_policy_stack_verdict *p = &per[i];

        FUZZ_CHECK(p->judged == (stacks[i].bytes > 0));
        FUZZ_CHECK(!p->ignored || p->ignore != NULL);
        FUZZ_CHECK(p->over == (p->judged && !p->ignored &&
                               (uint64_t)stacks[i].bytes > p->limit));
        nover += p->over;
    }
    FUZZ_CHECK(v.nover == nover);
    FUZZ_CHECK(v.failed == (v.nover > 0 || v.total_over));
    FUZZ_CHECK(!set.total_unlimited || !v.total_over);
}

/* Judge under the name of every entry, split at its first '/'. */
static void
judge_all(const struct leakgate_config *cfg)
{
    char name[256];

    judge(cfg, "no such suite", "no such test");
    for (size_t i = 0; i < cfg->nsuites; i++)
        judge(cfg, cfg->suites[i].pattern, NULL);
    for (size_t i = 0; i < cfg->ntests; i++) {
        char *slash;

        snprintf(name, sizeof name, "%s", cfg->tests[i].pattern);
        slash = strchr(name, '/');
        if (!slash)
            continue;
        *slash = '\0';
        judge(cfg, name, slash + 1);
    }
}

static void
check_shallow(const uint8_t *data, size_t size)
{
    static const struct leakgate_config_limits shallow = {0, 4};
    struct leakgate_config *cfg = NULL;
    int err =
        leakgate_config__parse(&cfg, (const char *)data, size, NAME, &shallow);

    FUZZ_CHECK(err == 0 || err == LEAKGATE_ETOOBIG);
    FUZZ_CHECK((err == 0) == (cfg != NULL));
    leakgate_config__free(cfg);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct leakgate_config *cfg = NULL;
    int err =
        leakgate_config__parse(&cfg, (const char *)data, size, NAME, NULL);

    if (err) {
        check_failure(err, cfg);
        return 0;
    }
    FUZZ_CHECK(cfg != NULL);
    check_entries(cfg->suites, cfg->nsuites);
    check_entries(cfg->tests, cfg->ntests);
    judge_all(cfg);
    check_shallow(data, size);
    leakgate_config__free(cfg);
    return 0;
}
