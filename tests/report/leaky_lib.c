/* SPDX-License-Identifier: MIT */
/*
 * The shared library of leaky_service: its leak must be resolved from the
 * library's own mapping (a different load address from the executable's)
 * when `leakgate diff` symbolizes offline.
 */
#include "leaky_service.h"

#include <stdlib.h>

void *
leaky_lib_open_session(void)
{
    return calloc(1, 4000); /* MARK:lib_session */
}
