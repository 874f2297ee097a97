/* SPDX-License-Identifier: MIT */
/* `leakgate compare`: see cmd_compare.c. */
#ifndef LEAKGATE_CLI_CMD_COMPARE_H
#define LEAKGATE_CLI_CMD_COMPARE_H

/* Run `leakgate compare`; argv[0] is "compare".  Returns the exit status. */
int leakgate_cmd_compare(int argc, char **argv);

#endif
