/* SPDX-License-Identifier: MIT */
/*
 * A plain CUnit program of MANY tests (3000 unless the build sets
 * -DLEAKGATE_RUN_MANY: tests/run/CMakeLists.txt), many more records than
 * `leakgate run`'s channel holds at once: the program fills it again and
 * again and rings the doorbell (run_proto.h).  The last test leaks 8
 * bytes; with argv[1] "crash" it then dies of SIGABRT.  Every record must
 * still reach leakgate run.  With argv[1] "long" it has one test instead,
 * named by 3000 letters (longer than a record built on the stack: its
 * record takes the long way, run_proto.h), which leaks 8 bytes.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef MANY
#define MANY 3000
#endif
#define LONG_NAME 3000

static void *kept;
static unsigned int ran;
static int crash;

static void
test_each(void)
{
    char *s = malloc(32);

    CU_ASSERT_PTR_NOT_NULL_FATAL(s);
    snprintf(s, 32, "test %u", ran);
    CU_ASSERT(strlen(s) > 5);
    free(s);
    if (++ran < MANY)
        return;
    kept = malloc(8); /* the one leak */
    if (crash)
        abort();
}

int
main(int argc, char **argv)
{
    static char names[MANY][12];
    CU_pSuite s;

    static char long_name[LONG_NAME + 1];
    int is_long = argc > 1 && strcmp(argv[1], "long") == 0;

    crash = argc > 1 && strcmp(argv[1], "crash") == 0;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    s = CU_add_suite("many", NULL, NULL);
    if (s && is_long) {
        memset(long_name, 'L', LONG_NAME);
        ran = MANY - 1; /* its one test is the last: it leaks */
        if (!CU_add_test(s, long_name, test_each))
            return 2;
    }
    for (unsigned int i = 0; s && !is_long && i < MANY; i++) {
        snprintf(names[i], sizeof names[i], "t%04u", i);
        if (!CU_add_test(s, names[i], test_each))
            return 2;
    }
    if (!s)
        return 2;
    CU_basic_set_mode(CU_BRM_SILENT);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
}
