/* SPDX-License-Identifier: MIT */
/*
 * strtab's tests written for cmocka and gated with leakgate_cmocka.h
 * (docs/frameworks.md).  Built with -DSTRTAB_LEAK, one test forgets to
 * free its table: leakgate must fail it, at its line.  Built with
 * -DSTRTAB_FAIL, a test fails an assertion: cmocka fails it, and the
 * message cmocka allocates for it is not taken for a leak.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "leakgate_cmocka.h"
#include "strtab.h"

static void
interns_once(void **state)
{
    struct strtab *tab = strtab_new();

    (void)state;
    assert_ptr_equal(strtab_intern(tab, "a"), strtab_intern(tab, "a"));
    assert_int_equal(strtab_count(tab), 1);
    strtab_free(tab);
}

static void
removes(void **state)
{
    struct strtab *tab = strtab_new();

    (void)state;
    strtab_intern(tab, "gone");
    assert_int_equal(strtab_remove(tab, "gone"), 1);
    assert_null(strtab_lookup(tab, "gone"));
#ifndef STRTAB_LEAK
    strtab_free(tab);
#endif
}

#ifdef STRTAB_FAIL
static void
counts_wrong(void **state)
{
    struct strtab *tab = strtab_new();

    (void)state;
    strtab_intern(tab, "one");
    strtab_free(tab);
    assert_int_equal(1, 2);
}
#endif

int
main(void)
{
    const struct CMUnitTest tests[] = {
        leakgate_cmocka_unit_test(interns_once),
        leakgate_cmocka_unit_test(removes),
#ifdef STRTAB_FAIL
        leakgate_cmocka_unit_test(counts_wrong),
#endif
    };

    return leakgate_cmocka_run("strtab", tests);
}
