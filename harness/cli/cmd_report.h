/* SPDX-License-Identifier: MIT */
/* `leakgate report`: see cmd_report.c. */
#ifndef LEAKGATE_CLI_CMD_REPORT_H
#define LEAKGATE_CLI_CMD_REPORT_H

/* Run `leakgate report`; argv[0] is "report".  Returns the exit status. */
int leakgate_cmd_report(int argc, char **argv);

#endif
