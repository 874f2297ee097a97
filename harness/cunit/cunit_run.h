/* SPDX-License-Identifier: MIT */
/*
 * cunit_run: what cunit.c (a run of a registry: leakgate_cunit_run())
 * offers the glue's file above it, cunit_main.c.
 */
#ifndef LEAKGATE_CUNIT_RUN_H
#define LEAKGATE_CUNIT_RUN_H

#include <stdbool.h>
#include <stddef.h>

/* Record the window running now as not judged (why), replay what waits,
 * write the results and say so on stderr: the program is about to end in
 * that window.  Best effort: it allocates.  Nothing outside a window. */
void leakgate_cunit__abandon(const char *why);

/*
 * A CUnit look-alike runtime (a project's own library with the CUnit API
 * over a registry of its own, as Cyclone DDS's libucunit): fn, the
 * program's definition of CUnit function name, is not in the library
 * whose registry the glue reads (CU_get_registry as the glue sees it), so
 * the glue would see no test, or another runtime's.  Then the refusal,
 * naming the library, goes into out (size bytes) and the result is true;
 * false when fn is that library's (or is not known).  Cannot fail.
 */
bool leakgate_cunit__lookalike(const char *name,
                               const void *fn,
                               char *out,
                               size_t size);

/* The run's last count on stderr: the windows judged, those over the
 * limits (failures), and those leakgate could not judge (never a pass).
 * Cannot fail. */
struct leakgate_gate;
void leakgate_cunit__summary(struct leakgate_gate *gate, size_t failures);

#endif
