/* SPDX-License-Identifier: MIT */
/* `leakgate diff`: see cmd_diff.c. */
#ifndef LEAKGATE_CLI_CMD_DIFF_H
#define LEAKGATE_CLI_CMD_DIFF_H

/* Run `leakgate diff`; argv[0] is "diff".  Returns the exit status. */
int leakgate_cmd_diff(int argc, char **argv);

#endif
