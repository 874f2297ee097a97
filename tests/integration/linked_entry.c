/* SPDX-License-Identifier: MIT */
/*
 * The gate/linked_entry tests' program (tests/integration/CMakeLists.txt):
 * a test binary linked with leakgate::cunit whose main runs what its
 * arguments name through CUnit's own run functions, as pgpointcloud's
 * cu_tester runs `CU_basic_run_suite()` for a suite given on its command
 * line, and otherwise ends with leakgate_cunit_main().  Like cu_tester it
 * returns CU_get_error() (0 whatever the tests did) after such a run: only
 * the gate can make that exit status say a test failed.
 *
 *   linked_entry                          leakgate_cunit_main()
 *   linked_entry basic_suite SUITE        CU_basic_run_suite()
 *   linked_entry basic_test SUITE TEST    CU_basic_run_test()
 *   linked_entry suite SUITE              CU_run_suite()
 *   linked_entry test SUITE TEST          CU_run_test()
 *   linked_entry all                      CU_run_all_tests()
 *   linked_entry automated                CU_automated_run_tests()
 *   linked_entry twice SUITE SUITE        CU_basic_run_suite() twice
 *   linked_entry console                  CU_console_run_tests(), its
 *                                         answers "r" (run all), "q"
 *   linked_entry then_main                CU_basic_run_tests(), then
 *                                         leakgate_cunit_main() last
 *
 * Suites: "clean" (frees what it allocates), "leaky" (its "drops_node"
 * loses one 48 B node; its "frees_node" is clean).
 */
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <CUnit/Automated.h>
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <CUnit/Console.h>
#include <leakgate/cunit.h>

#define NOINLINE __attribute__((noinline))

struct node {
    struct node *next;
    char payload[40];
};

static void *volatile entry_sink;

static NOINLINE struct node *
entry_node(void)
{
    return calloc(1, sizeof(struct node)); /* MARK:linked_entry_leak */
}

static void
test_frees_node(void)
{
    struct node *n = entry_node();

    CU_ASSERT_PTR_NOT_NULL(n);
    free(n);
}

static void
test_drops_node(void)
{
    struct node *n = entry_node();

    CU_ASSERT_PTR_NOT_NULL(n);
    entry_sink = n;
    entry_sink = NULL;
}

static void
register_suites(void)
{
    CU_pSuite s = CU_add_suite("clean", NULL, NULL);

    CU_add_test(s, "frees_node", test_frees_node);
    CU_add_test(s, "frees_again", test_frees_node);
    s = CU_add_suite("leaky", NULL, NULL);
    CU_add_test(s, "frees_node", test_frees_node);
    CU_add_test(s, "drops_node", test_drops_node);
}

/* The console interface, answered as a user would: run all, quit (stdin
 * a pipe holding the answers). */
static void
run_console(void)
{
    static const char answers[] = "r\nq\n";
    int fds[2];

    if (pipe(fds) != 0 ||
        write(fds[1], answers, sizeof answers - 1) !=
            (ssize_t)(sizeof answers - 1) ||
        close(fds[1]) != 0 || dup2(fds[0], STDIN_FILENO) < 0)
        return;
    close(fds[0]);
    CU_console_run_tests();
}

/* The suite and test named by argv[2] and argv[3]. */
static CU_pSuite
suite_arg(int argc, char **argv)
{
    return argc > 2 ? CU_get_suite(argv[2]) : NULL;
}

static CU_pTest
test_arg(CU_pSuite s, int argc, char **argv)
{
    return s && argc > 3 ? CU_get_test(s, argv[3]) : NULL;
}

static void
run_direct(int argc, char **argv)
{
    const char *how = argv[1];
    CU_pSuite s = suite_arg(argc, argv);

    CU_basic_set_mode(CU_BRM_VERBOSE);
    if (strcmp(how, "basic_suite") == 0) {
        CU_basic_run_suite(s);
    } else if (strcmp(how, "basic_test") == 0) {
        CU_basic_run_test(s, test_arg(s, argc, argv));
    } else if (strcmp(how, "suite") == 0) {
        CU_run_suite(s);
    } else if (strcmp(how, "test") == 0) {
        CU_run_test(s, test_arg(s, argc, argv));
    } else if (strcmp(how, "all") == 0) {
        CU_run_all_tests();
    } else if (strcmp(how, "automated") == 0) {
        CU_set_output_filename("linked_entry");
        CU_automated_run_tests();
    } else if (strcmp(how, "console") == 0) {
        run_console();
    } else if (strcmp(how, "twice") == 0) {
        CU_basic_run_suite(s);
        CU_basic_run_suite(argc > 3 ? CU_get_suite(argv[3]) : NULL);
    }
}

int
main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    register_suites();
    /* pgpointcloud's main with README step 3 done literally: it runs
     * every test itself, cleans up, and its last line is
     * leakgate_cunit_main() (which must not run them again). */
    if (argc > 1 && strcmp(argv[1], "then_main") == 0) {
        CU_basic_set_mode(CU_BRM_VERBOSE);
        CU_basic_run_tests();
        CU_cleanup_registry();
        return leakgate_cunit_main(1, argv);
    }
    if (argc > 1) {
        run_direct(argc, argv);
        CU_cleanup_registry();
        return (int)CU_get_error();
    }
    return leakgate_cunit_main(argc, argv);
}
