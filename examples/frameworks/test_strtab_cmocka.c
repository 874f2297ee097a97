/* SPDX-License-Identifier: MIT */
/*
 * strtab's tests written for cmocka and gated with leakgate_cmocka.h
 * (docs/frameworks.md).  Built with -DSTRTAB_LEAK, one test forgets to
 * free its table: leakgate must fail it, at its line.  Built with
 * -DSTRTAB_FAIL, a test fails an assertion: cmocka fails it, and the
 * message cmocka allocates for it is not taken for a leak.  Built with
 * -DSTRTAB_FIXTURES, the group has a setup and teardown of its own
 * (a shared table) and a test has its own teardown, chained before the
 * window closes (docs/frameworks.md).
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

#ifdef STRTAB_FIXTURES
static struct strtab *shared;

static int
group_setup(void **state)
{
    (void)state;
    shared = strtab_new();
    return shared ? 0 : -1;
}

static int
group_teardown(void **state)
{
    (void)state;
    strtab_free(shared);
    return 0;
}

/* Its own teardown frees what it interned into the shared table. */
static void
uses_shared(void **state)
{
    (void)state;
    assert_non_null(strtab_intern(shared, "for now"));
}

static int
forget_interned(void **state)
{
    (void)state;
    return strtab_remove(shared, "for now") == 1 ? 0 : -1;
}

static int
uses_shared_teardown(void **state)
{
    void *name = *state;
    int rc;

    *state = NULL;
    rc = forget_interned(state); /* the test's own teardown */
    *state = name;
    return leakgate_cmocka_end(state) || rc;
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
#ifdef STRTAB_FIXTURES
        {"uses_shared", uses_shared, leakgate_cmocka_begin,
         uses_shared_teardown, (void *)(uintptr_t) "uses_shared"},
#endif
    };

#ifdef STRTAB_FIXTURES
    return leakgate_cmocka_run_fixtures("strtab", tests, group_setup,
                                        group_teardown);
#else
    return leakgate_cmocka_run("strtab", tests);
#endif
}
