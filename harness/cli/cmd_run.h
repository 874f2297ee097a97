/* SPDX-License-Identifier: MIT */
/*
 * cmd_run: the `leakgate run` verb (cmd_run.c), called by main.c.
 */
#ifndef LEAKGATE_CLI_CMD_RUN_H
#define LEAKGATE_CLI_CMD_RUN_H

/* argv[0] is "run".  Returns the exit status (SPEC §5). */
int leakgate_cmd_run(int argc, char **argv);

#endif
