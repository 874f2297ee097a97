/* SPDX-License-Identifier: MIT */
/*
 * plugin_cases: a clean test that loads and unloads a plugin, after a
 * test that loaded another library and kept it (issue 39, item 8).
 *
 *   plugin/keep_other   dlopen(CORPUS_EMPTY_LIB), handle kept: retains
 *                       the library's link map (a real retention: fails)
 *   plugin/load_unload  dlopen(CORPUS_PLUGIN_LIB), then dlclose: clean
 *
 * load_unload's dlopen grows the dynamic linker's table of loaded objects
 * for _dl_find_object (a second library loaded at once); the built-in
 * ignore list covers it.  Such an allocation's stack is recorded in the
 * fast pass (the dynamic linker's own allocations always get one), so the
 * test passes there.  Before, it had none and went to the replay, where
 * leakgate's own libdw, loaded meanwhile, had grown the table already: the
 * replay found nothing and the test failed as "not reproduced".
 * Built with PLUGIN_PLAIN it is a plain CUnit program, for `leakgate run`.
 */
#include <CUnit/Basic.h>
#include <CUnit/CUnit.h>
#include <dlfcn.h>
#ifndef PLUGIN_PLAIN
#include <leakgate/cunit.h>
#endif

static void *kept;

static void
keep_other(void)
{
    kept = dlopen(CORPUS_EMPTY_LIB, RTLD_NOW);
    CU_ASSERT_PTR_NOT_NULL(kept);
}

static void
load_unload(void)
{
    void *h = dlopen(CORPUS_PLUGIN_LIB, RTLD_NOW);

    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    CU_ASSERT_PTR_NOT_NULL(dlsym(h, "corpus_empty_value"));
    CU_ASSERT_EQUAL(dlclose(h), 0);
}

int
main(int argc, char **argv)
{
    CU_pSuite s;

    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    s = CU_add_suite("plugin", NULL, NULL);
    CU_add_test(s, "keep_other", keep_other);
    CU_add_test(s, "load_unload", load_unload);
#ifdef PLUGIN_PLAIN
    (void)argc;
    (void)argv;
    CU_basic_set_mode(CU_BRM_VERBOSE);
    CU_basic_run_tests();
    CU_cleanup_registry();
    return 0;
#else
    return leakgate_cunit_main(argc, argv);
#endif
}
