/* SPDX-License-Identifier: MIT */
/*
 * The gate/twins tests' program (tests/integration/CMakeLists.txt):
 * two CUnit suites named "twins", as eclipse/wakaama's
 * server tests register two suites named "Suite_list" from two files.
 * CUnit runs both (CU_add_suite() sets CUE_DUP_SUITE but adds the
 * suite); leakgate judges them apart, the second as "twins#2".  Each has
 * the same two tests: "clean_list" (builds and frees a list: passes in
 * both) and "leaks_node" (drops one node: fails in both, 48 B each).
 * The first suite's init and cleanup share a fixture they free; the
 * second's cleanup forgets it, so only "twins#2/[suite]" fails.
 */
#include <stdlib.h>

#include <CUnit/CUnit.h>

#define NOINLINE __attribute__((noinline))

struct node {
    struct node *next;
    char payload[40];
};

static struct node *fixture[2];
static void *volatile twins_sink;

static NOINLINE struct node *
twins_push(struct node *head)
{
    struct node *n = calloc(1, sizeof *n);

    if (n)
        n->next = head;
    return n;
}

static void
twins_free(struct node *head)
{
    while (head) {
        struct node *next = head->next;

        free(head);
        head = next;
    }
}

static void
test_clean_list(void)
{
    struct node *head = NULL;

    for (int i = 0; i < 8; i++)
        head = twins_push(head);
    CU_ASSERT_PTR_NOT_NULL(head);
    twins_free(head);
}

static void
test_leaks_node(void)
{
    struct node *head = twins_push(NULL);

    CU_ASSERT_PTR_NOT_NULL(head);
    twins_sink = head; /* MARK:twins_leak */
    twins_sink = NULL;
}

static int
init_first(void)
{
    fixture[0] = twins_push(NULL);
    return fixture[0] ? 0 : 1;
}

static int
cleanup_first(void)
{
    twins_free(fixture[0]);
    fixture[0] = NULL;
    return 0;
}

static int
init_second(void)
{
    fixture[1] = twins_push(NULL);
    return fixture[1] ? 0 : 1;
}

static int
cleanup_second(void)
{
    fixture[1] = NULL; /* forgets to free what init made */
    return 0;
}

static void
register_twins(void)
{
    CU_pSuite s = CU_add_suite("twins", init_first, cleanup_first);

    CU_add_test(s, "clean_list", test_clean_list);
    CU_add_test(s, "leaks_node", test_leaks_node);
    s = CU_add_suite("twins", init_second, cleanup_second);
    CU_add_test(s, "clean_list", test_clean_list);
    CU_add_test(s, "leaks_node", test_leaks_node);
}

/* twins links leakgate (leakgate_cunit_main), twins_plain is the plain
 * program `leakgate run` gates. */
#include <CUnit/Basic.h>
#ifndef TWINS_PLAIN
#include <leakgate/cunit.h>
#endif

int
main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    register_twins();
#ifdef TWINS_PLAIN
    (void)argc;
    (void)argv;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
#else
    return leakgate_cunit_main(argc, argv);
#endif
}
