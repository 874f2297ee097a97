/* SPDX-License-Identifier: MIT */
/*
 * paths_corpus: the CUnit program of the output-path checks (paths.sh):
 * a test that passes, one that leaks 100 bytes, one that closes every
 * descriptor from 3 to 4095 (as a test of a daemon's close-all helper
 * does), one that changes the working directory, then a pass and a
 * leak after them.  Run under the gate
 * with hostile --junit/--json/--report-dir targets, the gate must write
 * its files where they were named, and never through a link, over a
 * device or into another user's directory.
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *kept;

static void
test_pass(void)
{
    char *p = malloc(32);

    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    memcpy(p, "pass", 5);
    CU_ASSERT_STRING_EQUAL(p, "pass");
    free(p);
}

static void
test_leak(void)
{
    kept = malloc(100);
    CU_ASSERT_PTR_NOT_NULL(kept);
}

/* Every descriptor the gate may hold is closed under it (only with
 * PATHS_CLOSE_FDS set: the other cases run it as a plain test). */
static void
test_close_fds(void)
{
    for (int fd = 3; getenv("PATHS_CLOSE_FDS") && fd < 4096; fd++)
        (void)close(fd);
    CU_PASS("closed 3..4095");
}

/* The working directory moves: $PATHS_CHDIR, else /. */
static void
test_chdir(void)
{
    const char *to = getenv("PATHS_CHDIR");

    CU_ASSERT_EQUAL(chdir(to && *to ? to : "/"), 0);
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("paths", NULL, NULL);
    CU_add_test(s, "pass", test_pass);
    CU_add_test(s, "leak", test_leak);
    CU_add_test(s, "close_fds", test_close_fds);
    CU_add_test(s, "chdir", test_chdir);
    CU_add_test(s, "after", test_pass);
    CU_add_test(s, "leak_after", test_leak);
    return leakgate_cunit_main(argc, argv);
}
