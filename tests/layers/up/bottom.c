/* SPDX-License-Identifier: MIT */
/* A fixture of ci/layers' must-fail test: bottom calls top, which is
 * listed above it. */
#include "bottom.h"
#include "top.h"

int
layers_bottom(int n)
{
    return n <= 0 ? 1 : layers_top(n - 1);
}
