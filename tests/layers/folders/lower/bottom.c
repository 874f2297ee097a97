/* SPDX-License-Identifier: MIT */
/* ci/layers --folders fixture: bottom, in its layer's folder. */
