/* SPDX-License-Identifier: MIT */
/*
 * own_runner: a test runner that parses its own arguments, as Cyclone
 * DDS's (`-s SUITE`) and pgpointcloud's (test names) do (issue 42, item
 * 2): it rejects every option it does not know, `--list` and `--filter`
 * included (exit 64), needs its data file as an argument, prints a banner,
 * then calls CUnit's run functions itself; it never calls
 * leakgate_cunit_main().  leakgate_discover_tests() must list and run it
 * unchanged: leakgate's options reach it in the environment.  One test
 * leaks.  Built with OWN_RUNNER_MAIN, it ends main with
 * leakgate_cunit_main(1, argv) instead, as docs/cli.md tells a program
 * with options of its own to.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef OWN_RUNNER_MAIN
#include <leakgate/cunit.h>
#endif

static void *volatile sink;

static void
ok(void)
{
    CU_ASSERT_TRUE(1);
}

static void
grows(void)
{
    sink = malloc(24);
    sink = NULL;
    CU_ASSERT_TRUE(1);
}

static int
usage(const char *why)
{
    fprintf(stderr, "own_runner: %s\nusage: own_runner [-s SUITE] DATA\n", why);
    return 64;
}

int
main(int argc, char **argv)
{
    const char *suite = NULL, *data = NULL;
    unsigned int failures;
    CU_pSuite s;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            suite = argv[++i];
        else if (argv[i][0] == '-')
            return usage(argv[i]);
        else if (!data)
            data = argv[i];
        else
            return usage(argv[i]);
    }
    if (!data || strcmp(data, "fixture.dat") != 0)
        return usage("no data file");
    puts("own runner: starting");
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("parse", NULL, NULL);
    CU_add_test(s, "ok", ok);
    CU_add_test(s, "grows", grows);
    s = CU_add_suite("io", NULL, NULL);
    CU_add_test(s, "ok", ok);
#ifdef OWN_RUNNER_MAIN
    (void)suite;
    return leakgate_cunit_main(1, argv);
#endif
    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (suite)
        CU_basic_run_suite(CU_get_suite(suite));
    else
        CU_basic_run_tests();
    failures = CU_get_number_of_failures();
    CU_cleanup_registry();
    return failures ? 1 : 0;
}
