/* SPDX-License-Identifier: MIT */
/* A program that is not a CUnit test program at all. */
#include <stdio.h>

int
main(void)
{
    puts("not_cunit: hello, no tests here");
    return 0;
}
