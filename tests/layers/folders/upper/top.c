/* SPDX-License-Identifier: MIT */
/* ci/layers --folders fixture: the source tree of down/ laid out in its
 * layers' folders (never built: the objects are layers_down's). */
#include "bottom.h"
