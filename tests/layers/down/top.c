/* SPDX-License-Identifier: MIT */
/* A fixture of ci/layers' must-fail test: top calls bottom, and bottom
 * calls top back (tests/layers/CMakeLists.txt). */
#include "bottom.h"
#include "top.h"

int
layers_top(int n)
{
    return n <= 0 ? 0 : layers_bottom(n - 1);
}
