/* SPDX-License-Identifier: MIT */
/*
 * strtab's tests written for Check and gated with leakgate_check.h
 * (docs/frameworks.md).  Built with -DSTRTAB_LEAK, one test forgets to
 * free its table: leakgate must fail it, at its line.  Built with
 * -DSTRTAB_FAIL, the last test fails an assertion: Check fails it, and
 * its window is closed unjudged, never taken for a leak.
 */
#include <check.h>

#include "leakgate_check.h"
#include "strtab.h"

LEAKGATE_START_TEST(interns_once)
{
    struct strtab *tab = strtab_new();

    ck_assert_ptr_eq(strtab_intern(tab, "a"), strtab_intern(tab, "a"));
    ck_assert_uint_eq(strtab_count(tab), 1);
    strtab_free(tab);
}
END_TEST

LEAKGATE_START_TEST(removes)
{
    struct strtab *tab = strtab_new();

    strtab_intern(tab, "gone");
    ck_assert_int_eq(strtab_remove(tab, "gone"), 1);
    ck_assert_ptr_null(strtab_lookup(tab, "gone"));
#ifndef STRTAB_LEAK
    strtab_free(tab);
#endif
}
END_TEST

#ifdef STRTAB_FAIL
LEAKGATE_START_TEST(counts_wrong)
{
    struct strtab *tab = strtab_new();

    strtab_intern(tab, "one");
    strtab_free(tab);
    ck_assert_int_eq(1, 2);
}
END_TEST
#endif

int
main(void)
{
    Suite *s = suite_create("strtab");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, interns_once);
    tcase_add_test(tc, removes);
#ifdef STRTAB_FAIL
    tcase_add_test(tc, counts_wrong);
#endif
    suite_add_tcase(s, tc);
    return leakgate_check_run(s, "strtab");
}
