/* SPDX-License-Identifier: MIT */
/*
 * cunit_run: what cunit.c (a run of a registry: leakgate_cunit_run())
 * offers the glue's file above it, cunit_main.c.
 */
#ifndef LEAKGATE_CUNIT_RUN_H
#define LEAKGATE_CUNIT_RUN_H

#include <stddef.h>

/* Record the window running now as not judged (why), replay what waits,
 * write the results and say so on stderr: the program is about to end in
 * that window.  Best effort: it allocates.  Nothing outside a window. */
void leakgate_cunit__abandon(const char *why);

/* The run's last count on stderr: the windows judged, those over the
 * limits (failures), and those leakgate could not judge (never a pass).
 * Cannot fail. */
struct leakgate_gate;
void leakgate_cunit__summary(struct leakgate_gate *gate, size_t failures);

#endif
