/* SPDX-License-Identifier: MIT */
/*
 * A plain CUnit main with the interactive console interface; argv[2], when
 * given, replaces stdin (the commands typed).  argv[1]: the suites.
 */
#include <CUnit/CUnit.h>
#include <CUnit/Console.h>
#include <stdio.h>

#include "suites.h"

int
main(int argc, char **argv)
{
    if (argc > 2 && !freopen(argv[2], "r", stdin))
        return 2;
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 2;
    if (run_register(argc > 1 ? argv[1] : "leaky,cleanup_leak") < 0)
        return 2;
    CU_console_run_tests();
    CU_cleanup_registry();
    return 0;
}
