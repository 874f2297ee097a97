/* SPDX-License-Identifier: MIT */
/*
 * Plain CUnit suites for `leakgate run` (tests/run): no leakgate header,
 * no leakgate library, as in a project that has never heard of leakgate.
 */
#ifndef RUN_SUITES_H
#define RUN_SUITES_H

/* Register the suites named in the comma-separated list `which` (leaky,
 * cleanup_leak, asserting, crash, exiting).  Returns 0 or -1. */
int run_register(const char *which);

#endif
