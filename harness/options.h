/* SPDX-License-Identifier: MIT */
/*
 * options: internal helpers of the option parser (options.c); the
 * parser itself is public (leakgate/leakgate.h).
 */
#ifndef LEAKGATE_OPTIONS_H
#define LEAKGATE_OPTIONS_H

/* The environment twins of the options (LEAKGATE_THRESHOLDS, ...,
 * LEAKGATE_EXACT), NULL-terminated: what a replay restores as the run
 * began (replay.c).  Static.  Cannot fail. */
const char *const *leakgate_options__env_names(void);

/*
 * The process's own argv (/proc/self/cmdline), read once and kept for the
 * life of the process, NULL-terminated; for a caller that has none (a
 * main(void)) and for a replay of the program.  Returns 0,
 * LEAKGATE_EIO or LEAKGATE_ENOMEM.
 */
int leakgate_options__own_argv(int *argc_out, char *const **argv_out);

#endif
