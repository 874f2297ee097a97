/* SPDX-License-Identifier: MIT */
#ifndef LAYERS_BOTTOM_H
#define LAYERS_BOTTOM_H
int layers_bottom(int n);
#endif
