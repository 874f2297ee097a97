/* SPDX-License-Identifier: MIT */
/* `leakgate thresholds`: see cmd_thresholds.c. */
#ifndef LEAKGATE_CLI_CMD_THRESHOLDS_H
#define LEAKGATE_CLI_CMD_THRESHOLDS_H

/* Run `leakgate thresholds`; argv[0] is "thresholds".  Returns the exit
 * status. */
int leakgate_cmd_thresholds(int argc, char **argv);

#endif
