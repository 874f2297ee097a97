/* SPDX-License-Identifier: MIT */
/*
 * The `leakgate` command: parses the verb and hands over to its
 * cmd_<verb>.c.  Uses the public API only; prints `leakgate: <message>`
 * and picks the exit status (0 pass, 1 a test failed, 2 usage or
 * configuration, 3 the gate could not run).
 */
#include <stdio.h>
#include <string.h>

#include "cmd_compare.h"
#include "cmd_diff.h"
#include "cmd_report.h"
#include "cmd_run.h"
#include "cmd_thresholds.h"
#include "leakgate/leakgate.h"

static const char usage[] =
    "usage: leakgate [--help] [--version]\n"
    "       leakgate diff [options] [BEFORE.heap] AFTER.heap\n"
    "       leakgate run [options] -- PROGRAM [ARGS...]\n"
    "       leakgate thresholds check FILE...\n"
    "       leakgate thresholds merge RESULTS... --into FILE [--tighten]\n"
    "       leakgate report RESULTS... [--junit FILE] [--html DIR]\n"
    "       leakgate compare BASE HEAD [--markdown FILE] [--sarif FILE]\n"
    "\n"
    "A leak-regression gate for C unit tests.  Link your CUnit suite with\n"
    "leakgate::cunit and end main with leakgate_cunit_main(); every test\n"
    "then fails when it leaves memory behind.  Run any test binary with\n"
    "--help for the options it accepts.\n";

int
main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-h") == 0) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("leakgate %s\n", leakgate_version());
        return 0;
    }
    if (strcmp(argv[1], "diff") == 0)
        return leakgate_cmd_diff(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return leakgate_cmd_run(argc - 1, argv + 1);
    if (strcmp(argv[1], "thresholds") == 0)
        return leakgate_cmd_thresholds(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return leakgate_cmd_report(argc - 1, argv + 1);
    if (strcmp(argv[1], "compare") == 0)
        return leakgate_cmd_compare(argc - 1, argv + 1);
    fprintf(stderr, "leakgate: unknown command '%s' (see --help)\n", argv[1]);
    return 2;
}
