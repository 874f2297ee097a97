/* SPDX-License-Identifier: MIT */
#ifndef LAYERS_TOP_H
#define LAYERS_TOP_H
int layers_top(int n);
#endif
