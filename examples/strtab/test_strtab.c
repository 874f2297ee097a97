/* SPDX-License-Identifier: MIT */
/*
 * The example CUnit suite, unchanged CUnit code except the last line of
 * main: `return leakgate_cunit_main(argc, argv);`.
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>
#include <stdio.h>

#include "strtab.h"

static struct strtab *tab;

static void
setup(void)
{
    tab = strtab_new();
}

static void
teardown(void)
{
    strtab_free(tab);
    tab = NULL;
}

static void
test_intern_returns_same_copy(void)
{
    const char *a = strtab_intern(tab, "alpha");

    CU_ASSERT_PTR_NOT_NULL_FATAL(a);
    CU_ASSERT_PTR_EQUAL(strtab_intern(tab, "alpha"), a);
    CU_ASSERT_EQUAL(strtab_count(tab), 1);
}

static void
test_grows_past_many_entries(void)
{
    char name[32];

    for (int i = 0; i < 1000; i++) {
        snprintf(name, sizeof name, "key-%d", i);
        CU_ASSERT_PTR_NOT_NULL(strtab_intern(tab, name));
    }
    CU_ASSERT_EQUAL(strtab_count(tab), 1000);
    CU_ASSERT_STRING_EQUAL(strtab_lookup(tab, "key-777"), "key-777");
}

static void
test_remove(void)
{
    strtab_intern(tab, "gone");
    CU_ASSERT_EQUAL(strtab_remove(tab, "gone"), 1);
    CU_ASSERT_PTR_NULL(strtab_lookup(tab, "gone"));
    CU_ASSERT_EQUAL(strtab_remove(tab, "gone"), 0);
}

static void
test_rename(void)
{
    strtab_intern(tab, "old-name");
    CU_ASSERT_PTR_NOT_NULL(strtab_rename(tab, "old-name", " new-name "));
    CU_ASSERT_PTR_NULL(strtab_lookup(tab, "old-name"));
    CU_ASSERT_STRING_EQUAL(strtab_lookup(tab, "new-name"), "new-name");
}

int
main(int argc, char **argv)
{
    CU_pSuite suite;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    suite = CU_add_suite_with_setup_and_teardown("strtab", NULL, NULL, setup,
                                                 teardown);
    CU_add_test(suite, "intern_returns_same_copy",
                test_intern_returns_same_copy);
    CU_add_test(suite, "grows_past_many_entries", test_grows_past_many_entries);
    CU_add_test(suite, "remove", test_remove);
    CU_add_test(suite, "rename", test_rename);
    return leakgate_cunit_main(argc, argv);
}
