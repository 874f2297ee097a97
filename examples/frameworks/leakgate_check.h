/* SPDX-License-Identifier: MIT */
/*
 * leakgate_check.h: gate every Check test with leakgate's core API
 * (docs/frameworks.md).  Copy it next to your tests; write each test as
 * LEAKGATE_START_TEST(name) { ... } END_TEST (START_TEST's body, unchanged)
 * and run the suite with leakgate_check_run(suite, its name).  The test's
 * window is its body: a test that retains memory over its limit fails with
 * leakgate's report on stderr, and the exit status is leakgate's (0, 1,
 * 3).  Tests run in the process (CK_NOFORK): a forked test's verdict
 * would stay in the child.
 */
#ifndef LEAKGATE_CHECK_H
#define LEAKGATE_CHECK_H

#include <check.h>
#include <leakgate/leakgate.h>
#include <stdio.h>

static leakgate_gate *leakgate_check_gate;
static const char *leakgate_check_suite = "check";

static void
leakgate_check_window(const char *name, void (*body)(int), int i)
{
    const leakgate_verdict *v = NULL;

    /* A test that failed an assertion left its window open: unjudged. */
    if (leakgate_gate_begin(leakgate_check_gate, leakgate_check_suite, name) ==
        LEAKGATE_ESTATE) {
        leakgate_gate_mark_aborted(leakgate_check_gate, "an assertion failed");
        (void)leakgate_gate_end(leakgate_check_gate, 0, NULL);
        (void)leakgate_gate_begin(leakgate_check_gate, leakgate_check_suite,
                                  name);
    }
    body(i);
    if (leakgate_gate_end(leakgate_check_gate, 1, &v) < 0)
        ck_abort_msg("leakgate: %s", leakgate_error_last());
    leakgate_gate_print_verdict(leakgate_check_gate, v, stderr);
    ck_assert_msg(leakgate_verdict_status(v) != LEAKGATE_STATUS_FAIL,
                  "leakgate: %s retained memory over its limit (report on "
                  "stderr)",
                  name);
}

#define LEAKGATE_START_TEST(name)                                              \
    static void name##_body(int _i);                                           \
    START_TEST(name)                                                           \
    {                                                                          \
        leakgate_check_window(#name, name##_body, _i);                         \
    }                                                                          \
    static void name##_body(int _i CK_ATTRIBUTE_UNUSED)

static int
leakgate_check_run(Suite *s, const char *name)
{
    struct leakgate_gate_options opts;
    SRunner *sr = srunner_create(s);
    size_t judged;
    int failed;

    if (leakgate_gate_options_parse(&opts, 1, NULL) < 0 ||
        leakgate_gate_new(&leakgate_check_gate, &opts) < 0) {
        fprintf(stderr, "leakgate: %s\n", leakgate_error_last());
        srunner_free(sr);
        return 3;
    }
    leakgate_check_suite = name;
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    /* The last test failed an assertion: its window is still open. */
    leakgate_gate_mark_aborted(leakgate_check_gate, "an assertion failed");
    (void)leakgate_gate_end(leakgate_check_gate, 0, NULL);
    srunner_free(sr);
    if (*leakgate_gate_scope_hints(leakgate_check_gate))
        fprintf(stderr, "leakgate: %s",
                leakgate_gate_scope_hints(leakgate_check_gate));
    judged = leakgate_gate_judged(leakgate_check_gate);
    fprintf(stderr, "leakgate: %zu window%s judged, %zu over the limits\n",
            judged, judged == 1 ? "" : "s",
            leakgate_gate_failures(leakgate_check_gate));
    (void)leakgate_gate_write_results(leakgate_check_gate);
    leakgate_gate_free(leakgate_check_gate);
    return judged == 0 ? 3 : failed > 0 ? 1 : 0;
}

#endif
