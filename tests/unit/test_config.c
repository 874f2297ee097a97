/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of harness/config.c: every key of the thresholds file, the
 * size units, every error with its exact "FILE:LINE:COLUMN: what" detail,
 * the limits, load() on real files (tests/fixtures/yaml), allocation
 * failures and truncated or damaged input.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "unit.h"
#include "util.h"

#define NAME "t.yaml"
#define YAML_DIR LEAKGATE_FIXTURES "/yaml"
#define KIB ((uint64_t)1024)
#define MIB (KIB * 1024)
#define GIB (MIB * 1024)

/* Where a config pointer starts, to prove that failures reset it. */
static struct leakgate_config sentinel;

struct error_case {
    const char *yaml;
    int code;
    const char *detail;
};

static int
parse(struct leakgate_config **out, const char *yaml)
{
    return leakgate_config__parse(out, yaml, strlen(yaml), NAME, NULL);
}

static struct leakgate_config *
parse_ok(const char *yaml)
{
    struct leakgate_config *cfg = NULL;
    int rc = parse(&cfg, yaml);

    CU_ASSERT_EQUAL(rc, 0);
    if (rc != 0)
        fprintf(stderr, "\n  unexpected error: %s\n", leakgate_error_last());
    return cfg;
}

/* Each case must fail with exactly its code and detail. */
static void
check_errors(const struct error_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct leakgate_config *cfg = &sentinel;
        int rc = parse(&cfg, cases[i].yaml);
        const char *got = leakgate_error_last();

        CU_ASSERT_EQUAL(rc, cases[i].code);
        CU_ASSERT_PTR_NULL_FATAL(cfg);
        CU_ASSERT_STRING_EQUAL(got, cases[i].detail);
        if (rc != cases[i].code || strcmp(got, cases[i].detail) != 0)
            fprintf(stderr, "\n  case %zu: rc %d\n  got:  %s\n  want: %s\n", i,
                    rc, got, cases[i].detail);
    }
}

#define CHECK_ERRORS(cases)                                                    \
    check_errors((cases), sizeof(cases) / sizeof((cases)[0]))

static void
test_config__spec_example(void)
{
    struct leakgate_config *cfg = NULL;
    const struct leakgate_config_entry *t;

    CU_ASSERT_EQUAL_FATAL(
        leakgate_config__load(&cfg, YAML_DIR "/valid/spec.yaml", NULL), 0);
    CU_ASSERT_STRING_EQUAL(cfg->path, YAML_DIR "/valid/spec.yaml");
    CU_ASSERT(cfg->defaults.has_stack_limit);
    CU_ASSERT_EQUAL(cfg->defaults.stack_limit, 0);
    CU_ASSERT(cfg->defaults.has_total_limit);
    CU_ASSERT(cfg->defaults.total_unlimited);
    CU_ASSERT(cfg->defaults.has_warmup);
    CU_ASSERT_EQUAL(cfg->defaults.warmup, 0);
    CU_ASSERT_EQUAL(cfg->defaults.line, 2);
    CU_ASSERT_PTR_NULL(cfg->defaults.pattern);
    CU_ASSERT_EQUAL_FATAL(cfg->nsuites, 1);
    CU_ASSERT_STRING_EQUAL(cfg->suites[0].pattern, "coap_resource");
    CU_ASSERT_EQUAL(cfg->suites[0].scope, LEAKGATE_CONFIG_SCOPE_SUITE);
    CU_ASSERT_EQUAL(cfg->suites[0].line, 7);
    CU_ASSERT_FALSE(cfg->suites[0].has_stack_limit);
    CU_ASSERT_EQUAL_FATAL(cfg->ntests, 1);
    t = &cfg->tests[0];
    CU_ASSERT_STRING_EQUAL(t->pattern, "parser/test_cache_*");
    CU_ASSERT_EQUAL(t->line, 10);
    CU_ASSERT_EQUAL(t->stack_limit, 4 * KIB);
    CU_ASSERT_FALSE(t->has_total_limit);
    CU_ASSERT_EQUAL(t->scope, LEAKGATE_CONFIG_SCOPE_UNSET);
    CU_ASSERT_EQUAL_FATAL(t->nstacks, 1);
    CU_ASSERT_EQUAL_FATAL(t->stacks[0].nframes, 1);
    CU_ASSERT_STRING_EQUAL(t->stacks[0].frames[0], "cache_insert");
    CU_ASSERT_EQUAL(t->stacks[0].limit, MIB);
    CU_ASSERT_EQUAL(t->stacks[0].line, 13);
    CU_ASSERT_EQUAL_FATAL(cfg->nignores, 1);
    CU_ASSERT_STRING_EQUAL(cfg->ignores[0].frames[0], "tzset");
    CU_ASSERT_STRING_EQUAL(cfg->ignores[0].reason,
                           "libc time-zone cache, allocated once");
    CU_ASSERT_EQUAL(cfg->ignores[0].line, 16);
    leakgate_config__free(cfg);
}

static void
check_every_key_suites(const struct leakgate_config *cfg)
{
    const struct leakgate_config_entry *s = &cfg->suites[0];

    CU_ASSERT_STRING_EQUAL(s->pattern, "net_*");
    CU_ASSERT_EQUAL(s->scope, LEAKGATE_CONFIG_SCOPE_SUITE);
    CU_ASSERT_EQUAL(s->stack_limit, 2 * KIB);
    CU_ASSERT(s->has_total_limit && !s->total_unlimited);
    CU_ASSERT_EQUAL(s->total_limit, 3 * MIB / 2);
    CU_ASSERT_EQUAL(s->warmup, 3);
    CU_ASSERT_EQUAL_FATAL(s->nstacks, 1);
    CU_ASSERT_EQUAL_FATAL(s->stacks[0].nframes, 2);
    CU_ASSERT_STRING_EQUAL(s->stacks[0].frames[0], "socket_open");
    CU_ASSERT_STRING_EQUAL(s->stacks[0].frames[1], "buf_*");
    CU_ASSERT_EQUAL(s->stacks[0].limit, 64000);
    CU_ASSERT_STRING_EQUAL(cfg->suites[1].pattern, "storage");
    CU_ASSERT_EQUAL(cfg->suites[1].scope, LEAKGATE_CONFIG_SCOPE_TEST);
    CU_ASSERT_FALSE(cfg->suites[1].has_warmup);
}

static void
test_config__every_key(void)
{
    struct leakgate_config *cfg = NULL;
    const struct leakgate_config_entry *t;

    CU_ASSERT_EQUAL_FATAL(
        leakgate_config__load(&cfg, YAML_DIR "/valid/every_key.yaml", NULL), 0);
    CU_ASSERT_EQUAL(cfg->defaults.stack_limit, 100);
    CU_ASSERT_EQUAL(cfg->defaults.total_limit, 1000000);
    CU_ASSERT_FALSE(cfg->defaults.total_unlimited);
    CU_ASSERT_EQUAL(cfg->defaults.warmup, 2);
    CU_ASSERT_EQUAL_FATAL(cfg->nsuites, 2);
    check_every_key_suites(cfg);
    CU_ASSERT_EQUAL_FATAL(cfg->ntests, 1);
    t = &cfg->tests[0];
    CU_ASSERT_STRING_EQUAL(t->pattern, "net_tcp/test_connect");
    CU_ASSERT_EQUAL(t->stack_limit, GIB);
    CU_ASSERT(t->has_total_limit && t->total_unlimited);
    CU_ASSERT_EQUAL(t->warmup, 1000);
    CU_ASSERT_EQUAL_FATAL(t->nstacks, 2);
    CU_ASSERT_STRING_EQUAL(t->stacks[0].frames[1], "*alloc*");
    CU_ASSERT_EQUAL(t->stacks[0].limit, 1000000000);
    CU_ASSERT_EQUAL(t->stacks[1].limit, 0);
    CU_ASSERT_EQUAL(t->stacks[1].line, 28);
    CU_ASSERT_EQUAL_FATAL(cfg->nignores, 2);
    CU_ASSERT_PTR_NULL(cfg->ignores[1].reason);
    CU_ASSERT_EQUAL_FATAL(cfg->ignores[1].nframes, 2);
    CU_ASSERT_STRING_EQUAL(cfg->ignores[1].frames[1], "_dl_*");
    leakgate_config__free(cfg);
}

/* peak_limit: a size or ~ under defaults, suites and tests. */
static void
test_config__peak_limit(void)
{
    struct leakgate_config *cfg =
        parse_ok("version: 1\ndefaults:\n  peak_limit: 8 MiB\nsuites:\n"
                 "  s:\n    peak_limit: ~\ntests:\n  s/t:\n"
                 "    peak_limit: 100\n");

    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    CU_ASSERT(cfg->defaults.has_peak_limit && !cfg->defaults.peak_unlimited);
    CU_ASSERT_EQUAL(cfg->defaults.peak_limit, 8 * MIB);
    CU_ASSERT_EQUAL_FATAL(cfg->nsuites, 1);
    CU_ASSERT(cfg->suites[0].has_peak_limit && cfg->suites[0].peak_unlimited);
    CU_ASSERT_EQUAL_FATAL(cfg->ntests, 1);
    CU_ASSERT(cfg->tests[0].has_peak_limit);
    CU_ASSERT_EQUAL(cfg->tests[0].peak_limit, 100);
    CU_ASSERT_FALSE(cfg->tests[0].has_stack_limit);
    leakgate_config__free(cfg);
}

static void
test_config__minimal_and_null_sections(void)
{
    struct leakgate_config *cfg = NULL;

    CU_ASSERT_EQUAL_FATAL(
        leakgate_config__load(&cfg, YAML_DIR "/valid/minimal.yaml", NULL), 0);
    CU_ASSERT_EQUAL(cfg->nsuites + cfg->ntests + cfg->nignores, 0);
    CU_ASSERT_FALSE(cfg->defaults.has_stack_limit);
    leakgate_config__free(cfg);
    cfg = parse_ok("version: 1\ndefaults:\nsuites:\ntests: ~\nignore: []\n");

    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    CU_ASSERT_FALSE(cfg->defaults.has_stack_limit);
    CU_ASSERT_FALSE(cfg->defaults.has_total_limit);
    CU_ASSERT_EQUAL(cfg->nsuites + cfg->ntests + cfg->nignores, 0);
    leakgate_config__free(cfg);
    cfg = parse_ok("---\nversion: 1\nsuites: {}\ntests: {}\n...\n");
    CU_ASSERT_PTR_NOT_NULL(cfg);
    leakgate_config__free(cfg);
    cfg = parse_ok("{version: 1, tests: {'a/b': {stacks: []}}}");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    CU_ASSERT_EQUAL(cfg->tests[0].nstacks, 0);
    leakgate_config__free(cfg);
}

static void
test_config__new_default(void)
{
    struct leakgate_config *cfg = NULL;

    CU_ASSERT_EQUAL_FATAL(leakgate_config__new_default(&cfg), 0);
    CU_ASSERT_FALSE(cfg->defaults.has_stack_limit);
    CU_ASSERT_EQUAL(cfg->nsuites + cfg->ntests + cfg->nignores, 0);
    leakgate_config__free(cfg);
    leakgate_config__free(NULL);
    leakgate_util__fail_after(0);
    CU_ASSERT_EQUAL(leakgate_config__new_default(&cfg), LEAKGATE_ENOMEM);
    leakgate_util__fail_after(SIZE_MAX);
    CU_ASSERT_PTR_NULL(cfg);
}

static void
test_config__size_units(void)
{
    static const struct {
        const char *text;
        uint64_t bytes;
    } good[] = {
        {"0", 0},
        {"4096", 4096},
        {"7 B", 7},
        {"4 KiB", 4 * KIB},
        {"4KiB", 4 * KIB},
        {"3 MiB", 3 * MIB},
        {"2 GiB", 2 * GIB},
        {"5 KB", 5000},
        {"5 MB", 5000000},
        {"5 GB", 5000000000},
        {"1.5 KiB", 1536},
        {"0.5 KB", 500},
        {"2.250 MB", 2250000},
        {"0.0009765625 GiB", MIB},
        {"1.000000000000 B", 1},
        {"18446744073709551615", UINT64_MAX},
        {"17179869183 GiB", 17179869183ull * GIB},
    };
    static const char *const bad[] = {
        "",
        "-1",
        "+1",
        "4 KB B",
        "12 parsecs",
        "1.5",
        "1.1 B",
        "KiB",
        "4 kib",
        " 4",
        "4 ",
        "0x10",
        "1.",
        ".5 KiB",
        "1e3",
        "4 KiB ",
        "1,024",
        "0.1 KiB",
        "1.0000000001 GiB",
        "0.00048828125 GiB",
    };
    uint64_t v;

    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        v = 42;
        CU_ASSERT(leakgate_config__parse_size(&v, good[i].text));
        CU_ASSERT_EQUAL(v, good[i].bytes);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 42;
        CU_ASSERT_FALSE(leakgate_config__parse_size(&v, bad[i]));
        CU_ASSERT_EQUAL(v, 42); /* untouched on failure */
    }
    CU_ASSERT_FALSE(leakgate_config__parse_size(&v, "18446744073709551616"));
    CU_ASSERT_FALSE(leakgate_config__parse_size(&v, "17179869184 GiB"));
    CU_ASSERT_FALSE(leakgate_config__parse_size(&v, "99999999999999999999 KB"));
}

static void
test_config__bad_sizes(void)
{
    static const struct error_case cases[] = {
        {"version: 1\ndefaults:\n  stack_limit: 12 parsecs\n", LEAKGATE_ECONFIG,
         NAME ":3:16: invalid size '12 parsecs' for 'stack_limit' (expected "
              "bytes, or a number and one of B, KiB, MiB, GiB, KB, MB, GB)"},
        {"version: 1\ndefaults:\n  stack_limit: 4 KB B\n", LEAKGATE_ECONFIG,
         NAME ":3:16: invalid size '4 KB B' for 'stack_limit' (expected "
              "bytes, or a number and one of B, KiB, MiB, GiB, KB, MB, GB)"},
        {"version: 1\ntests:\n  a/b:\n    peak_limit: 2 parsecs\n",
         LEAKGATE_ECONFIG,
         NAME ":4:17: invalid size '2 parsecs' for 'peak_limit' (expected "
              "bytes, or a number and one of B, KiB, MiB, GiB, KB, MB, GB)"},
        {"version: 1\nsuites:\n  s:\n    peak_limit: [1]\n", LEAKGATE_ECONFIG,
         NAME ":4:17: expected a size for 'peak_limit', got a sequence"},
        {"version: 1\ndefaults:\n  total_limit: -1\n", LEAKGATE_ECONFIG,
         NAME ":3:16: invalid size '-1' for 'total_limit' (expected "
              "bytes, or a number and one of B, KiB, MiB, GiB, KB, MB, GB)"},
        {"version: 1\ntests:\n  a/b: {stacks: [{frames: [f], limit: "
         "18446744073709551616}]}\n",
         LEAKGATE_ECONFIG,
         NAME ":3:39: size '18446744073709551616' for 'limit' is too large"},
        {"version: 1\ndefaults:\n  stack_limit: 17179869184 GiB\n",
         LEAKGATE_ECONFIG,
         NAME ":3:16: size '17179869184 GiB' for 'stack_limit' is too large"},
        {"version: 1\ndefaults:\n  stack_limit: {a: 1}\n", LEAKGATE_ECONFIG,
         NAME ":3:16: expected a size for 'stack_limit', got a mapping"},
        {"version: 1\ndefaults:\n  stack_limit: [1]\n", LEAKGATE_ECONFIG,
         NAME ":3:16: expected a size for 'stack_limit', got a sequence"},
        {"version: 1\ndefaults:\n  stack_limit: ~\n", LEAKGATE_ECONFIG,
         NAME ":3:16: expected a size for 'stack_limit', got null (only "
              "total_limit, lost_limit and peak_limit may be ~)"},
        {"version: 1\ndefaults:\n  total_limit: {}\n", LEAKGATE_ECONFIG,
         NAME ":3:16: expected a size for 'total_limit', got a mapping"},
    };

    CHECK_ERRORS(cases);
}

static void
test_config__quoted_null_is_text(void)
{
    static const struct error_case cases[] = {
        /* Only a plain ~ is null: a quoted one is a (bad) size. */
        {"version: 1\ndefaults:\n  total_limit: '~'\n", LEAKGATE_ECONFIG,
         NAME ":3:16: invalid size '~' for 'total_limit' (expected "
              "bytes, or a number and one of B, KiB, MiB, GiB, KB, MB, GB)"},
    };
    struct leakgate_config *cfg = parse_ok("version: 1\ndefaults:\n"
                                           "  total_limit: null\n"
                                           "  stack_limit: \"4 KiB\"\n");

    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    CU_ASSERT(cfg->defaults.total_unlimited);
    CU_ASSERT_EQUAL(cfg->defaults.stack_limit, 4 * KIB);
    leakgate_config__free(cfg);
    CHECK_ERRORS(cases);
}

static void
test_config__warmup_and_scope(void)
{
    struct leakgate_config *cfg = NULL;
    static const struct error_case cases[] = {
        {"version: 1\ndefaults:\n  warmup: 1001\n", LEAKGATE_ECONFIG,
         NAME ":3:11: warmup 1001 is out of range (0 to 1000)"},
        {"version: 1\ndefaults:\n  warmup: 99999999999999999999999\n",
         LEAKGATE_ECONFIG,
         NAME ":3:11: warmup 99999999999999999999999 is out of range (0 to "
              "1000)"},
        {"version: 1\ndefaults:\n  warmup: -1\n", LEAKGATE_ECONFIG,
         NAME ":3:11: invalid warmup '-1' (expected a whole number of runs "
              "from 0 to 1000)"},
        {"version: 1\ndefaults:\n  warmup: 2 runs\n", LEAKGATE_ECONFIG,
         NAME ":3:11: invalid warmup '2 runs' (expected a whole number of "
              "runs from 0 to 1000)"},
        {"version: 1\ndefaults:\n  warmup: [1]\n", LEAKGATE_ECONFIG,
         NAME ":3:11: expected a number of runs for 'warmup', got a "
              "sequence"},
        {"version: 1\ndefaults:\n  warmup:\n", LEAKGATE_ECONFIG,
         NAME ":3:10: expected a number of runs for 'warmup', got null"},
        {"version: 1\nsuites:\n  s:\n    scope: both\n", LEAKGATE_ECONFIG,
         NAME ":4:12: invalid scope 'both' (expected test or suite)"},
        {"version: 1\nsuites:\n  s:\n    scope: [suite]\n", LEAKGATE_ECONFIG,
         NAME ":4:12: expected test or suite for 'scope', got a sequence"},
        {"version: 1\ntests:\n  s/t:\n    scope: suite\n", LEAKGATE_ECONFIG,
         NAME ":4:5: unknown key 'scope' in a tests entry (it belongs in "
              "defaults or a suites entry)"},
        {"version: 1\ndefaults:\n  scope: suites\n", LEAKGATE_ECONFIG,
         NAME ":3:10: invalid scope 'suites' (expected test or suite)"},
    };

    /* `defaults: scope: suite` applies to every suite. */
    CU_ASSERT_EQUAL_FATAL(
        parse(&cfg, "version: 1\ndefaults:\n  scope: suite\n"), 0);
    CU_ASSERT_EQUAL(cfg->defaults.scope, LEAKGATE_CONFIG_SCOPE_SUITE);
    leakgate_config__free(cfg);
    CHECK_ERRORS(cases);
}

static void
test_config__unknown_keys(void)
{
    static const struct error_case cases[] = {
        {"verison: 1\n", LEAKGATE_ECONFIG,
         NAME ":1:1: unknown key 'verison' in the top level (did you mean "
              "'version'?)"},
        {"version: 1\ntest: {}\n", LEAKGATE_ECONFIG,
         NAME ":2:1: unknown key 'test' in the top level (did you mean "
              "'tests'?)"},
        {"version: 1\ndefaults:\n  stack_limt: 0\n", LEAKGATE_ECONFIG,
         NAME ":3:3: unknown key 'stack_limt' in defaults (did you mean "
              "'stack_limit'?)"},
        {"version: 1\nsuites:\n  s:\n    warm_up: 1\n", LEAKGATE_ECONFIG,
         NAME ":4:5: unknown key 'warm_up' in a suites entry (did you mean "
              "'warmup'?)"},
        {"version: 1\ntests:\n  \"parser/*\":\n    stack_limt: 4 KiB\n",
         LEAKGATE_ECONFIG,
         NAME ":4:5: unknown key 'stack_limt' in a tests entry (did you mean "
              "'stack_limit'?)"},
        {"version: 1\ntests:\n  a/b:\n    stacks:\n      - frames: [f]\n"
         "        limits: 1\n",
         LEAKGATE_ECONFIG,
         NAME ":6:9: unknown key 'limits' in a stacks rule (did you mean "
              "'limit'?)"},
        {"version: 1\nignore:\n  - frame: [f]\n", LEAKGATE_ECONFIG,
         NAME ":3:5: unknown key 'frame' in an ignore rule (did you mean "
              "'frames'?)"},
        {"version: 1\nignore:\n  - frames: [f]\n    limit: 1\n",
         LEAKGATE_ECONFIG,
         NAME ":4:5: unknown key 'limit' in an ignore rule (it belongs in a "
              "stacks rule)"},
        {"version: 1\nstack_limit: 0\n", LEAKGATE_ECONFIG,
         NAME ":2:1: unknown key 'stack_limit' in the top level (it belongs "
              "in defaults, a suites entry or a tests entry)"},
        {"version: 1\ncolour: red\n", LEAKGATE_ECONFIG,
         NAME ":2:1: unknown key 'colour' in the top level (valid keys: "
              "version, defaults, suites, tests, ignore, builtin_ignore, "
              "allocators)"},
        {"version: 1\ndefaults: {x: 1}\n", LEAKGATE_ECONFIG,
         NAME ":2:12: unknown key 'x' in defaults (valid keys: scope, "
              "stack_limit, total_limit, lost_limit, peak_limit, warmup, "
              "repeat, settle, rerun)"},
    };

    CHECK_ERRORS(cases);
}

static void
test_config__wrong_types(void)
{
    static const struct error_case cases[] = {
        {"- version: 1\n", LEAKGATE_ECONFIG,
         NAME ":1:1: expected a mapping at the top level, got a sequence"},
        {"version\n", LEAKGATE_ECONFIG,
         NAME ":1:1: expected a mapping at the top level, got a scalar"},
        {"version: 1\ndefaults: 5\n", LEAKGATE_ECONFIG,
         NAME ":2:11: expected a mapping for defaults, got a scalar"},
        {"version: 1\nsuites: [a]\n", LEAKGATE_ECONFIG,
         NAME ":2:9: expected a mapping of patterns for 'suites', got a "
              "sequence"},
        {"version: 1\ntests: x\n", LEAKGATE_ECONFIG,
         NAME ":2:8: expected a mapping of patterns for 'tests', got a "
              "scalar"},
        {"version: 1\nsuites:\n  s: 1\n", LEAKGATE_ECONFIG,
         NAME ":3:6: expected a mapping for a suites entry, got a scalar"},
        {"version: 1\ntests:\n  s/t:\n", LEAKGATE_ECONFIG,
         NAME ":3:7: expected a mapping for a tests entry, got null"},
        {"version: 1\ntests:\n  s/t: {stacks: {frames: [f]}}\n",
         LEAKGATE_ECONFIG,
         NAME ":3:17: expected a list of rules for 'stacks', got a mapping"},
        {"version: 1\ntests:\n  s/t: {stacks: [f]}\n", LEAKGATE_ECONFIG,
         NAME ":3:18: expected a stacks rule (frames and limit), got a "
              "scalar"},
        {"version: 1\ntests:\n  s/t: {stacks: [{frames: f, limit: 1}]}\n",
         LEAKGATE_ECONFIG,
         NAME ":3:27: expected a list of function globs for 'frames', got "
              "a scalar"},
        {"version: 1\nignore: {frames: [f]}\n", LEAKGATE_ECONFIG,
         NAME ":2:9: expected a list of rules for 'ignore', got a mapping"},
        {"version: 1\nignore: [tzset]\n", LEAKGATE_ECONFIG,
         NAME ":2:10: expected an ignore rule (frames and reason), got a "
              "scalar"},
        {"version: 1\nignore:\n  - frames: [f]\n    reason: {a: b}\n",
         LEAKGATE_ECONFIG,
         NAME ":4:13: expected text for 'reason', got a mapping"},
        {"version: 1\nignore:\n  - frames: [[f]]\n", LEAKGATE_ECONFIG,
         NAME ":3:14: expected a function glob, got a sequence"},
        {"version: 1\nignore:\n  - frames: [~]\n", LEAKGATE_ECONFIG,
         NAME ":3:14: expected a function glob, got null"},
        {"version: 1\n[a]: 1\n", LEAKGATE_ECONFIG,
         NAME ":2:1: expected a key, got a sequence"},
        {"version: 1\n~: 1\n", LEAKGATE_ECONFIG,
         NAME ":2:1: expected a key, got null"},
    };

    CHECK_ERRORS(cases);
}

static void
test_config__required_keys(void)
{
    static const struct error_case cases[] = {
        {"defaults:\n  stack_limit: 0\n", LEAKGATE_ECONFIG,
         NAME ":1:1: missing 'version: 1'"},
        {"version: 2\n", LEAKGATE_ECONFIG,
         NAME ":1:10: unsupported version '2' (this leakgate reads version "
              "1)"},
        {"version: 1.0\n", LEAKGATE_ECONFIG,
         NAME ":1:10: unsupported version '1.0' (this leakgate reads version "
              "1)"},
        {"version:\n", LEAKGATE_ECONFIG,
         NAME ":1:9: expected 'version: 1', got null"},
        {"version: [1]\n", LEAKGATE_ECONFIG,
         NAME ":1:10: expected 'version: 1', got a sequence"},
        {"version: 1\ntests:\n  a/b:\n    stacks:\n      - limit: 1\n",
         LEAKGATE_ECONFIG, NAME ":5:9: a stacks rule needs 'frames'"},
        {"version: 1\ntests:\n  a/b:\n    stacks:\n      - frames: [f]\n",
         LEAKGATE_ECONFIG, NAME ":5:9: a stacks rule needs 'limit'"},
        {"version: 1\nignore:\n  - reason: why\n", LEAKGATE_ECONFIG,
         NAME ":3:5: an ignore rule needs 'frames'"},
    };

    CHECK_ERRORS(cases);
}

static void
test_config__globs_and_frames(void)
{
    static const struct error_case cases[] = {
        {"version: 1\ntests:\n  \"parser/[abc\": {}\n", LEAKGATE_ECONFIG,
         NAME ":3:3: invalid glob 'parser/[abc' (empty, unclosed '[' or "
              "trailing '\\')"},
        {"version: 1\ntests:\n  '{parser,lexer}/*': {}\n", LEAKGATE_ECONFIG,
         NAME ":3:3: '{parser,lexer}/*': braces are not supported in globs "
              "(only '*', '?', '[...]'): write one entry per alternative"},
        {"version: 1\nsuites:\n  \"\": {}\n", LEAKGATE_ECONFIG,
         NAME ":3:3: invalid glob '' (empty, unclosed '[' or trailing "
              "'\\')"},
        {"version: 1\nsuites:\n  'a\\': {}\n", LEAKGATE_ECONFIG,
         NAME ":3:3: invalid glob 'a\\' (empty, unclosed '[' or trailing "
              "'\\')"},
        {"version: 1\nignore:\n  - frames: [ok, 'bad[']\n", LEAKGATE_ECONFIG,
         NAME ":3:18: invalid glob 'bad[' (empty, unclosed '[' or trailing "
              "'\\')"},
        {"version: 1\nignore:\n  - frames: []\n    reason: nothing\n",
         LEAKGATE_ECONFIG,
         NAME ":3:13: empty 'frames' list (a rule needs at least one "
              "function glob)"},
        {"version: 1\ntests:\n  s/t: {stacks: [{frames: [], limit: 0}]}\n",
         LEAKGATE_ECONFIG,
         NAME ":3:27: empty 'frames' list (a rule needs at least one "
              "function glob)"},
        {"version: 1\ntests:\n  parser: {}\n", LEAKGATE_ECONFIG,
         NAME ":3:3: tests pattern 'parser' matches no test: tests are "
              "named 'suite/test' (suite settings go under 'suites')"},
    };
    struct leakgate_config *cfg =
        parse_ok("version: 1\ntests:\n  '*cache*': {}\n  'p/t[1]': {}\n");

    /* A tests glob without '/' may still match "suite/test". */
    CU_ASSERT_PTR_NOT_NULL(cfg);
    leakgate_config__free(cfg);
    CHECK_ERRORS(cases);
}

static void
test_config__duplicates(void)
{
    static const struct error_case cases[] = {
        {"version: 1\nversion: 1\n", LEAKGATE_ECONFIG,
         NAME ":2:1: duplicate key 'version' (first at line 1)"},
        {"version: 1\ndefaults:\n  warmup: 1\n  stack_limit: 0\n  warmup: "
         "2\n",
         LEAKGATE_ECONFIG,
         NAME ":5:3: duplicate key 'warmup' (first at line 3)"},
        {"version: 1\ntests:\n  \"p/*\": {}\n  x/y: {}\n  p/*: {}\n"
         "  x/y: {}\n",
         LEAKGATE_ECONFIG, NAME ":5:3: duplicate key 'p/*' (first at line 3)"},
        {"version: 1\nsuites:\n  b: {}\n  a: {}\n  b: {}\n  a: {}\n",
         LEAKGATE_ECONFIG, NAME ":5:3: duplicate key 'b' (first at line 3)"},
        {"version: 1\ntests:\n  a/b:\n    stacks:\n"
         "      - {frames: [f, g], limit: 1}\n"
         "      - {frames: [f], limit: 2}\n"
         "      - {frames: [f, g], limit: 3}\n",
         LEAKGATE_ECONFIG,
         NAME ":7:9: duplicate stacks rule: same frames as the rule at line "
              "5"},
        {"version: 1\nignore:\n  - frames: [tzset]\n  - frames: [tzset]\n",
         LEAKGATE_ECONFIG,
         NAME ":4:5: duplicate ignore rule: same frames as the rule at line "
              "3"},
    };

    CHECK_ERRORS(cases);
}

static void
test_config__yaml_errors(void)
{
    static const struct error_case cases[] = {
        {"version: 1\ndefaults:\n  stack_limit: [1, 2\n", LEAKGATE_ECONFIG,
         NAME ":4:1: YAML syntax error: did not find expected ',' or ']' "
              "(while parsing a flow sequence at line 3)"},
        {"version: 1\ndefaults:\n\tstack_limit: 0\n", LEAKGATE_ECONFIG,
         NAME ":3:1: YAML syntax error: found character that cannot start "
              "any token (while scanning for the next token at line 3)"},
        {"version: 1\n  tests: {}\n", LEAKGATE_ECONFIG,
         NAME ":2:8: YAML syntax error: mapping values are not allowed in "
              "this context"},
        {"version: 1\ndefaults: &d {stack_limit: 1}\n", LEAKGATE_ECONFIG,
         NAME ":2:11: anchors and aliases are not supported (&d)"},
        {"version: 1\ndefaults: &d\n  stack_limit: 1\n", LEAKGATE_ECONFIG,
         NAME ":2:11: anchors and aliases are not supported (&d)"},
        {"version: &v 1\n", LEAKGATE_ECONFIG,
         NAME ":1:10: anchors and aliases are not supported (&v)"},
        {"version: 1\ntests:\n  a/b: *base\n", LEAKGATE_ECONFIG,
         NAME ":3:8: aliases are not supported (*base)"},
        {"version: !!int 1\n", LEAKGATE_ECONFIG,
         NAME ":1:10: tags are not supported (tag:yaml.org,2002:int)"},
        {"version: 1\nignore: !x []\n", LEAKGATE_ECONFIG,
         NAME ":2:9: tags are not supported (!x)"},
        {"version: 1\n---\nversion: 1\n", LEAKGATE_ECONFIG,
         NAME ":2:1: multiple documents are not supported"},
        {"version: 1\nignore:\n  - frames: [f]\n    reason: \"a\\0b\"\n",
         LEAKGATE_ECONFIG, NAME ":4:13: NUL characters are not allowed"},
        {"version: 1\n# caf\xc3\xa9 \xff\n", LEAKGATE_ECONFIG,
         NAME ":2:8: not valid UTF-8 text: invalid leading UTF-8 octet "
              "(#xFF)"},
        {"version: 1\nignore:\n  - frames: [\xe9t\xe9]\n", LEAKGATE_ECONFIG,
         NAME ":3:15: not valid UTF-8 text: invalid trailing UTF-8 octet "
              "(#x74)"},
        {"version: 1\r\n\x01\n", LEAKGATE_ECONFIG,
         NAME ":2:1: not valid UTF-8 text: control characters are not "
              "allowed (#x1)"},
    };

    CHECK_ERRORS(cases);
}

static void
test_config__empty_files(void)
{
    static const struct error_case cases[] = {
        {"", LEAKGATE_ECONFIG,
         NAME ":1:1: empty thresholds file, expected 'version: 1'"},
        {"\n# only a comment\n\n", LEAKGATE_ECONFIG,
         NAME ":1:1: empty thresholds file, expected 'version: 1'"},
        {"---\n", LEAKGATE_ECONFIG,
         NAME ":1:1: empty thresholds file, expected 'version: 1'"},
        {"~\n", LEAKGATE_ECONFIG,
         NAME ":1:1: expected a mapping at the top level, got null"},
    };
    struct leakgate_config *cfg = &sentinel;

    CU_ASSERT_EQUAL(leakgate_config__parse(&cfg, NULL, 0, NAME, NULL),
                    LEAKGATE_ECONFIG);
    CU_ASSERT_PTR_NULL(cfg);
    CHECK_ERRORS(cases);
}

static void
test_config__limits(void)
{
    static const char deep[] = "version: 1\ntests: {a/b: {stacks: [{frames: "
                               "[[[[[[[[[[f]]]]]]]]]], limit: 0}]}}\n";
    struct leakgate_config_limits small = {16, 0}, shallow = {0, 3};
    struct leakgate_config *cfg = &sentinel;
    const char *ok = "version: 1\n";
    char deeper[128] = "version: ";

    CU_ASSERT_EQUAL(leakgate_config__parse(&cfg, ok, 11, NAME, &small), 0);
    leakgate_config__free(cfg);
    CU_ASSERT_EQUAL(leakgate_config__parse(&cfg, ok, 17, NAME, &small),
                    LEAKGATE_ETOOBIG);
    CU_ASSERT_PTR_NULL(cfg);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           NAME ": 17 bytes, more than the limit of 16");
    CU_ASSERT_EQUAL(
        leakgate_config__parse(&cfg, deep, strlen(deep), NAME, &shallow),
        LEAKGATE_ETOOBIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           NAME ":2:23: nesting deeper than 3 levels");
    /* Depth 15 is within the default limit of 32 ... */
    CU_ASSERT_EQUAL(parse(&cfg, deep), LEAKGATE_ECONFIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           NAME ":2:34: expected a function glob, got a "
                                "sequence");
    /* ... depth 33 is not. */
    memset(deeper + 9, '[', 40);
    CU_ASSERT_EQUAL(parse(&cfg, deeper), LEAKGATE_ETOOBIG);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(),
                           NAME ":1:41: nesting deeper than 32 levels");
    CU_ASSERT_PTR_NULL(cfg);
}

static void
check_load_error(const char *path, int code, const char *detail)
{
    struct leakgate_config *cfg = NULL;
    int rc = leakgate_config__load(&cfg, path, NULL);

    CU_ASSERT_EQUAL(rc, code);
    CU_ASSERT_PTR_NULL(cfg);
    CU_ASSERT_STRING_EQUAL(leakgate_error_last(), detail);
    if (rc != code || strcmp(leakgate_error_last(), detail) != 0)
        fprintf(stderr, "\n  %s: rc %d\n  got:  %s\n  want: %s\n", path, rc,
                leakgate_error_last(), detail);
}

#define INV YAML_DIR "/invalid/"

static void
test_config__load_errors(void)
{
    struct leakgate_config_limits tiny = {8, 0};
    struct leakgate_config *cfg = NULL;

    check_load_error(YAML_DIR "/nope.yaml", LEAKGATE_ENOTFOUND,
                     YAML_DIR "/nope.yaml: no such thresholds file");
    check_load_error(YAML_DIR "/valid/spec.yaml/x", LEAKGATE_ENOTFOUND,
                     YAML_DIR "/valid/spec.yaml/x: no such thresholds file");
    check_load_error(YAML_DIR, LEAKGATE_EIO,
                     YAML_DIR ": is a directory, not a thresholds file");
    CU_ASSERT_EQUAL(
        leakgate_config__load(&cfg, YAML_DIR "/valid/spec.yaml", &tiny),
        LEAKGATE_ETOOBIG);
    CU_ASSERT_PTR_NULL(cfg);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(leakgate_error_last(), " bytes, more than the limit of 8"));
    /* Devices and FIFOs are refused before reading (a FIFO would block,
     * /dev/zero never ends, /dev/null is not a file anyone wrote). */
    check_load_error("/dev/zero", LEAKGATE_EIO,
                     "/dev/zero: is a character device, not a regular file: "
                     "a thresholds file is read only from a regular file");
    check_load_error("/dev/null", LEAKGATE_EIO,
                     "/dev/null: is a character device, not a regular file: "
                     "a thresholds file is read only from a regular file");
    check_load_error(INV "empty.yaml", LEAKGATE_ECONFIG,
                     INV "empty.yaml:1:1: empty thresholds file, expected "
                         "'version: 1'");
    check_load_error(INV "typo.yaml", LEAKGATE_ECONFIG,
                     INV "typo.yaml:4:5: unknown key 'stack_limt' in a tests "
                         "entry (did you mean 'stack_limit'?)");
    check_load_error(INV "bad_size.yaml", LEAKGATE_ECONFIG,
                     INV "bad_size.yaml:3:16: invalid size '12 parsecs' for "
                         "'stack_limit' (expected bytes, or a number and one "
                         "of B, KiB, MiB, GiB, KB, MB, GB)");
    check_load_error(INV "syntax.yaml", LEAKGATE_ECONFIG,
                     INV "syntax.yaml:4:1: YAML syntax error: did not find "
                         "expected ',' or ']' (while parsing a flow sequence "
                         "at line 3)");
    check_load_error(INV "alias.yaml", LEAKGATE_ECONFIG,
                     INV "alias.yaml:2:11: anchors and aliases are not "
                         "supported (&base)");
    check_load_error(INV "latin1.yaml", LEAKGATE_ECONFIG,
                     INV "latin1.yaml:4:16: not valid UTF-8 text: incomplete "
                         "UTF-8 octet sequence");
    check_load_error(INV "no_version.yaml", LEAKGATE_ECONFIG,
                     INV "no_version.yaml:1:1: missing 'version: 1'");
    check_load_error(INV "empty_frames.yaml", LEAKGATE_ECONFIG,
                     INV "empty_frames.yaml:3:13: empty 'frames' list (a rule "
                         "needs at least one function glob)");
}

static void
test_config__load_unreadable(void)
{
    char path[] = "/tmp/leakgate-test-config-XXXXXX";
    int fd = mkstemp(path);

    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, "version: 1\n", 11), 11);
    close(fd);
    CU_ASSERT_EQUAL(chmod(path, 0), 0);
    /* root reads any file: the check only means something for others. */
    if (geteuid() != 0) {
        struct leakgate_config *cfg = NULL;

        CU_ASSERT_EQUAL(leakgate_config__load(&cfg, path, NULL), LEAKGATE_EIO);
        CU_ASSERT_PTR_NOT_NULL(strstr(leakgate_error_last(), path));
        CU_ASSERT_PTR_NULL(cfg);
    }
    unlink(path);
}

/* Every allocation in parse and load may fail: the result is ENOMEM, a
 * NULL config and (under ASan) no leak. */
static void
test_config__allocation_failures(void)
{
    const char *path = YAML_DIR "/valid/every_key.yaml";
    int rc = LEAKGATE_ENOMEM;
    size_t n;

    for (n = 0; rc == LEAKGATE_ENOMEM && n < 100000; n++) {
        struct leakgate_config *cfg = &sentinel;

        leakgate_util__fail_after(n);
        rc = leakgate_config__load(&cfg, path, NULL);
        leakgate_util__fail_after(SIZE_MAX);
        CU_ASSERT(rc == 0 || rc == LEAKGATE_ENOMEM);
        CU_ASSERT_EQUAL(rc == 0, cfg != NULL);
        CU_ASSERT_PTR_NOT_EQUAL_FATAL(cfg, &sentinel);
        leakgate_config__free(cfg);
    }
    CU_ASSERT_EQUAL(rc, 0);
    CU_ASSERT(n > 50); /* the loop did exercise many failure points */
    /* Failures while reporting errors (the key list, duplicate check). */
    for (n = 0; n < 64; n++) {
        struct leakgate_config *cfg = NULL;

        leakgate_util__fail_after(n);
        rc = parse(&cfg, "version: 1\nsuites: {a: {}, b: {}}\ncolour: 1\n");
        leakgate_util__fail_after(SIZE_MAX);
        CU_ASSERT(rc == LEAKGATE_ECONFIG || rc == LEAKGATE_ENOMEM);
        CU_ASSERT_PTR_NULL(cfg);
    }
}

static void
check_robust(const char *text, size_t len)
{
    struct leakgate_config *cfg = NULL;
    int rc = leakgate_config__parse(&cfg, text, len, NAME, NULL);

    CU_ASSERT(rc == 0 || rc == LEAKGATE_ECONFIG);
    CU_ASSERT_EQUAL(rc == 0, cfg != NULL);
    if (rc < 0)
        CU_ASSERT_NSTRING_EQUAL(leakgate_error_last(), NAME ":", 7);
    leakgate_config__free(cfg);
}

/* Truncated prefixes and single-byte damage of a valid file never crash
 * the loader: each gives a config or a located ECONFIG. */
static void
test_config__robustness(void)
{
    static const char damage[] = ":[]{}-&*!#'\"\t\n\xff~,?|>%@`\\ ";
    FILE *f = fopen(YAML_DIR "/valid/every_key.yaml", "rb");
    char text[2048], copy[2048];
    size_t len;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    len = fread(text, 1, sizeof text, f);
    fclose(f);
    CU_ASSERT_FATAL(len > 0 && len < sizeof text);
    for (size_t n = 0; n <= len; n++) {
        memcpy(copy, text, n); /* exact-size copy: ASan sees overreads */
        check_robust(copy, n);
    }
    for (size_t i = 0; i < len; i++) {
        for (size_t d = 0; d < sizeof damage - 1; d++) {
            memcpy(copy, text, len);
            copy[i] = damage[d];
            check_robust(copy, len);
        }
    }
}

const char *const unit_suite = "config";
static void
test_config__repeat_settle_builtin_ignore(void)
{
    static const struct error_case cases[] = {
        {"version: 1\ndefaults:\n  repeat: 0\n", LEAKGATE_ECONFIG,
         NAME ":3:11: repeat 0 is out of range (1 to 100)"},
        {"version: 1\ndefaults:\n  settle: 60001\n", LEAKGATE_ECONFIG,
         NAME ":3:11: settle 60001 is out of range (0 to 60000)"},
        {"version: 1\ndefaults:\n  settle: soon\n", LEAKGATE_ECONFIG,
         NAME ":3:11: invalid settle 'soon' (expected a whole number of "
              "milliseconds from 0 to 60000)"},
        {"version: 1\nbuiltin_ignore: maybe\n", LEAKGATE_ECONFIG,
         NAME ":2:17: expected true or false for 'builtin_ignore', got "
              "maybe"},
        {"version: 1\ntests:\n  \"a/b\":\n    rerun: no\n", LEAKGATE_ECONFIG,
         NAME ":4:12: expected true or false for 'rerun', got no"},
        {"version: 1\nignore:\n  - frames: [x]\n    rerun: false\n",
         LEAKGATE_ECONFIG,
         NAME ":4:5: unknown key 'rerun' in an ignore rule (it belongs in "
              "defaults, a suites entry or a tests entry)"},
    };
    struct leakgate_config *cfg;

    CHECK_ERRORS(cases);
    cfg = parse_ok("version: 1\ndefaults:\n  repeat: 3\n  settle: 50\n"
                   "tests:\n  \"a/b\":\n    repeat: 100\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    CU_ASSERT(cfg->builtin_ignore);
    CU_ASSERT(cfg->defaults.has_repeat);
    CU_ASSERT_EQUAL(cfg->defaults.repeat, 3);
    CU_ASSERT_EQUAL(cfg->defaults.settle_ms, 50);
    CU_ASSERT_EQUAL(cfg->tests[0].repeat, 100);
    CU_ASSERT_FALSE(cfg->tests[0].has_settle);
    CU_ASSERT_FALSE(cfg->tests[0].has_rerun);
    leakgate_config__free(cfg);
    cfg = parse_ok("version: 1\ndefaults:\n  rerun: false\n"
                   "tests:\n  \"a/b\":\n    rerun: true\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    CU_ASSERT(cfg->defaults.has_rerun);
    CU_ASSERT_FALSE(cfg->defaults.rerun);
    CU_ASSERT(cfg->tests[0].has_rerun);
    CU_ASSERT(cfg->tests[0].rerun);
    leakgate_config__free(cfg);
    cfg = parse_ok("version: 1\nbuiltin_ignore: false\n");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cfg);
    CU_ASSERT_FALSE(cfg->builtin_ignore);
    leakgate_config__free(cfg);
}

const struct unit_case unit_cases[] = {
    {"test_config__repeat_settle_builtin_ignore",
     test_config__repeat_settle_builtin_ignore},
    {"test_config__spec_example", test_config__spec_example},
    {"test_config__every_key", test_config__every_key},
    {"test_config__minimal_and_null_sections",
     test_config__minimal_and_null_sections},
    {"test_config__new_default", test_config__new_default},
    {"test_config__size_units", test_config__size_units},
    {"test_config__bad_sizes", test_config__bad_sizes},
    {"test_config__quoted_null_is_text", test_config__quoted_null_is_text},
    {"test_config__warmup_and_scope", test_config__warmup_and_scope},
    {"test_config__peak_limit", test_config__peak_limit},
    {"test_config__unknown_keys", test_config__unknown_keys},
    {"test_config__wrong_types", test_config__wrong_types},
    {"test_config__required_keys", test_config__required_keys},
    {"test_config__globs_and_frames", test_config__globs_and_frames},
    {"test_config__duplicates", test_config__duplicates},
    {"test_config__yaml_errors", test_config__yaml_errors},
    {"test_config__empty_files", test_config__empty_files},
    {"test_config__limits", test_config__limits},
    {"test_config__load_errors", test_config__load_errors},
    {"test_config__load_unreadable", test_config__load_unreadable},
    {"test_config__allocation_failures", test_config__allocation_failures},
    {"test_config__robustness", test_config__robustness},
    {NULL, NULL},
};
