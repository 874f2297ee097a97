/* SPDX-License-Identifier: MIT */
/* A fixture of ci/layers' must-pass test: bottom calls nothing above it. */
#include "bottom.h"

int
layers_bottom(int n)
{
    return n;
}
