/* SPDX-License-Identifier: MIT */
/*
 * options: internal helpers of the option parser (options.c); the
 * parser itself is public (leakgate/leakgate.h).
 */
#ifndef LEAKGATE_OPTIONS_H
#define LEAKGATE_OPTIONS_H

/* --replay-timeout: the default and the largest value, in seconds. */
#define LEAKGATE_REPLAY_TIMEOUT_DEFAULT 300u
#define LEAKGATE_REPLAY_TIMEOUT_MAX 604800u

/* The seconds of a --replay-timeout or $LEAKGATE_REPLAY_TIMEOUT value
 * (whole seconds, an optional "s"; NULL: the default) into *seconds_out.
 * Returns 0 or LEAKGATE_EUSAGE naming the option or the variable. */
int leakgate_options__replay_timeout(unsigned int *seconds_out,
                                     const char *text);

/* --test-timeout: the default (seconds; 0 means no limit). */
#define LEAKGATE_TEST_TIMEOUT_DEFAULT 1800u
/* The same for --test-timeout or $LEAKGATE_TEST_TIMEOUT (0 allowed). */
int leakgate_options__test_timeout(unsigned int *seconds_out, const char *text);

/* The environment twins of the options (LEAKGATE_THRESHOLDS, ...,
 * LEAKGATE_EXACT), NULL-terminated: what a replay restores as the run
 * began (replay.c).  Static.  Cannot fail. */
const char *const *leakgate_options__env_names(void);

/* The thresholds file the build named (CMake's leakgate_thresholds_file():
 * leakgate_options_build_thresholds in the test binary), or NULL.  Cannot
 * fail. */
const char *leakgate_options__build_thresholds(void);

/*
 * The process's own argv (/proc/self/cmdline), read once and kept for the
 * life of the process, NULL-terminated; for a caller that has none (a
 * main(void)) and for a replay of the program.  Returns 0,
 * LEAKGATE_EIO or LEAKGATE_ENOMEM.
 */
int leakgate_options__own_argv(int *argc_out, char *const **argv_out);

#endif
