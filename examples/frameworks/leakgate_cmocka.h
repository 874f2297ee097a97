/* SPDX-License-Identifier: MIT */
/*
 * leakgate_cmocka.h: gate every cmocka test with leakgate's core API
 * (docs/frameworks.md).  Copy it next to your tests; list each test with
 * leakgate_cmocka_unit_test(f) instead of cmocka_unit_test(f) and run the
 * group with leakgate_cmocka_run(name, tests).  A test's setup opens its
 * window and its teardown closes and judges it: a test that retains
 * memory over its limit fails ("Test teardown failed") with leakgate's
 * report on stderr, and the exit status is leakgate's (0, 1, 3).
 */
#ifndef LEAKGATE_CMOCKA_H
#define LEAKGATE_CMOCKA_H

#include <leakgate/leakgate.h>
#include <stdint.h>
#include <stdio.h>

static leakgate_gate *leakgate_cmocka_gate;
static const char *leakgate_cmocka_group = "cmocka";

static int
leakgate_cmocka_begin(void **state)
{
    return leakgate_gate_begin(leakgate_cmocka_gate, leakgate_cmocka_group,
                               (const char *)*state) < 0;
}

static int
leakgate_cmocka_end(void **state)
{
    const leakgate_verdict *v = NULL;

    (void)state;
    if (leakgate_gate_end(leakgate_cmocka_gate, 1, &v) < 0)
        return 1;
    leakgate_gate_print_verdict(leakgate_cmocka_gate, v, stderr);
    return leakgate_verdict_status(v) == LEAKGATE_STATUS_FAIL;
}

/* The test's name travels as its initial state: the test gets it too. */
/* clang-format off */
#define leakgate_cmocka_unit_test(f)                                           \
    { .name = #f, .test_func = f, .setup_func = leakgate_cmocka_begin,         \
      .teardown_func = leakgate_cmocka_end,                                    \
      .initial_state = (void *)(uintptr_t)#f }
/* clang-format on */

#define leakgate_cmocka_run(group, tests)                                      \
    leakgate_cmocka_main((group), (tests), sizeof(tests) / sizeof((tests)[0]), \
                         NULL, NULL)
/* With the group's own setup and teardown (cmocka_run_group_tests()'s). */
#define leakgate_cmocka_run_fixtures(group, tests, setup, teardown)            \
    leakgate_cmocka_main((group), (tests), sizeof(tests) / sizeof((tests)[0]), \
                         (setup), (teardown))

static int
leakgate_cmocka_main(const char *group,
                     const struct CMUnitTest *tests,
                     size_t n,
                     CMFixtureFunction setup,
                     CMFixtureFunction teardown)
{
    struct leakgate_gate_options opts;
    size_t judged;
    int failed;

    leakgate_cmocka_group = group;
    if (leakgate_gate_options_parse(&opts, 1, NULL) < 0 ||
        leakgate_gate_new(&leakgate_cmocka_gate, &opts) < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        return 3;
    }
    failed = _cmocka_run_group_tests(group, tests, n, setup, teardown);
    if (*leakgate_gate_scope_hints(leakgate_cmocka_gate))
        fprintf(stderr, "leakgate: %s",
                leakgate_gate_scope_hints(leakgate_cmocka_gate));
    judged = leakgate_gate_judged(leakgate_cmocka_gate);
    fprintf(stderr, "leakgate: %zu window%s judged, %zu over the limits\n",
            judged, judged == 1 ? "" : "s",
            leakgate_gate_failures(leakgate_cmocka_gate));
    (void)leakgate_gate_write_results(leakgate_cmocka_gate);
    leakgate_gate_free(leakgate_cmocka_gate);
    return judged == 0 ? 3 : failed > 0 ? 1 : 0;
}

#endif
