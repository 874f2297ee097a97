/* SPDX-License-Identifier: MIT */
/*
 * test_stackwalk's module: f() calls back from a frame of FRAME bytes.
 * Built twice (two frame sizes, so two different frame rules at the same
 * offsets) and loaded one after the other at the same address.
 */
#ifndef FRAME
#define FRAME 300
#endif

typedef void (*callback)(void);

void stackwalk_fixture_f(callback cb);

__attribute__((noinline, visibility("default"))) void
stackwalk_fixture_f(callback cb)
{
    volatile char buf[FRAME];

    buf[0] = 1;
    cb();
    buf[1] = (char)(buf[0] + 1);
}
