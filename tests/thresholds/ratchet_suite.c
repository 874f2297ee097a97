/* SPDX-License-Identifier: MIT */
/*
 * ratchet_suite: a small test program gated with the public core API
 * (leakgate/leakgate.h, leakgate/thresholds.h) the way a hand-written
 * harness would, to exercise the ratchet end to end under the real gate:
 * options, windows, verdicts, --json/--junit, then --update-thresholds /
 * --tighten through leakgate_gate_update_thresholds().
 *
 * Its "code under test" changes with the environment, as a program
 * changes between commits:
 *   RATCHET_EXTRA_LEAK=1  parse/extra leaks 48 B in extra_leak()
 *   RATCHET_GROW=N        parse/grow keeps N*64 bytes instead of 64
 *   RATCHET_PREFIX=P      the suites are named Pstore and Pparse, so that
 *                         concurrent processes measure distinct windows
 * Exit status as SPEC §5; after a successful --update-thresholds the
 * gate's failures count as accepted (assertion failures would not).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "leakgate/leakgate.h"
#include "leakgate/thresholds.h"

static void *kept[64];
static size_t nkept;

void *store_make_entry(size_t n);
void *parse_token_buffer(void);
void *parse_grow_buffer(size_t n);
void extra_leak(void);

static void
keep(void *p)
{
    if (nkept < sizeof kept / sizeof kept[0])
        kept[nkept++] = p;
}

__attribute__((noinline)) void *
store_make_entry(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) void *
parse_token_buffer(void)
{
    return malloc(100);
}

__attribute__((noinline)) void *
parse_grow_buffer(size_t n)
{
    return malloc(n);
}

__attribute__((noinline)) void
extra_leak(void)
{
    keep(malloc(40));
}

static void
test_store_keep(void)
{
    for (int i = 0; i < 3; i++)
        keep(store_make_entry(32));
}

static void
test_store_clean(void)
{
    free(store_make_entry(64));
}

static void
test_parse_tokens(void)
{
    keep(parse_token_buffer());
}

static void
test_parse_extra(void)
{
    const char *e = getenv("RATCHET_EXTRA_LEAK");

    if (e && strcmp(e, "1") == 0)
        extra_leak();
}

static void
test_parse_grow(void)
{
    const char *e = getenv("RATCHET_GROW");
    long n = e ? strtol(e, NULL, 10) : 1;

    keep(parse_grow_buffer((size_t)(n > 0 && n < 1000 ? n : 1) * 64));
}

static const struct {
    const char *suite, *test;
    void (*fn)(void);
} tests[] = {
    {"store", "keep", test_store_keep},
    {"store", "clean", test_store_clean},
    {"parse", "tokens", test_parse_tokens},
    {"parse", "extra", test_parse_extra},
    {"parse", "grow", test_parse_grow},
};

static int
run_all(leakgate_gate *gate)
{
    const char *prefix = getenv("RATCHET_PREFIX");

    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        const leakgate_verdict *v = NULL;
        char suite[64];

        snprintf(suite, sizeof suite, "%s%s", prefix ? prefix : "",
                 tests[i].suite);
        if (!leakgate_gate_selected(gate, suite, tests[i].test))
            continue;
        if (leakgate_gate_begin(gate, suite, tests[i].test) < 0)
            return -1;
        tests[i].fn();
        if (leakgate_gate_end(gate, 1, &v) < 0)
            return -1;
        fprintf(stderr, "%s/%s ... %s\n", suite, tests[i].test,
                leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL ? "FAIL"
                                                                   : "ok");
        leakgate_gate_print_verdict(gate, v, stderr);
    }
    return 0;
}

/* --update-thresholds writes; --tighten alone previews.  Returns the
 * exit status for the update, or -1 when it went through. */
static int
update(leakgate_gate *gate, const struct leakgate_gate_options *o)
{
    struct leakgate_thresholds_options t = LEAKGATE_THRESHOLDS_OPTIONS_INIT;
    leakgate_thresholds_outcome *out = NULL;
    int rc;

    t.accept = 1;
    t.tighten = o->tighten;
    t.write = o->update_thresholds;
    t.slack = o->slack;
    rc = leakgate_gate_update_thresholds(gate, &t, &out);
    if (rc < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        return rc == LEAKGATE_ECONFIG || rc == LEAKGATE_EUSAGE ? 2 : 3;
    }
    fputs(leakgate_thresholds_outcome_text(out), stderr);
    leakgate_thresholds_outcome_free(out);
    return -1;
}

int
main(int argc, char **argv)
{
    struct leakgate_gate_options opts;
    leakgate_gate *gate = NULL;
    size_t failures;
    int rc, status;

    if (leakgate_gate_options_parse(&opts, argc, argv) < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        return 2;
    }
    rc = leakgate_gate_new(&gate, &opts);
    if (rc < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        return rc == LEAKGATE_ECONFIG ? 2 : 3;
    }
    status = run_all(gate) < 0 ? 3 : 0;
    /* The run's one thresholds document, after the last verdict. */
    if (status == 0 && *leakgate_gate_scope_hints(gate))
        fprintf(stderr, "leakgate: %s", leakgate_gate_scope_hints(gate));
    if (status == 0 && leakgate_gate_write_results(gate) < 0)
        status = 3;
    if (status == 3)
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
    failures = leakgate_gate_failures(gate);
    if (status == 0 && failures > 0)
        status = 1;
    if (status != 3 && (opts.update_thresholds || opts.tighten)) {
        rc = update(gate, &opts);
        if (rc >= 0)
            status = rc;
        else if (opts.update_thresholds)
            status = 0; /* the growth is accepted: the file now allows it */
    }
    leakgate_gate_free(gate);
    return status;
}
