/* SPDX-License-Identifier: MIT */
/*
 * cunit_run: what cunit.c (a run of a registry: leakgate_cunit_run())
 * offers the glue's file above it, cunit_main.c.
 */
#ifndef LEAKGATE_CUNIT_RUN_H
#define LEAKGATE_CUNIT_RUN_H

/* Record the window running now as not judged (why), replay what waits,
 * write the results and say so on stderr: the program is about to end in
 * that window.  Best effort: it allocates.  Nothing outside a window. */
void leakgate_cunit__abandon(const char *why);

#endif
