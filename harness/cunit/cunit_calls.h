/* SPDX-License-Identifier: MIT */
/*
 * cunit_calls: CUnit's run functions as leakgate defines them, in the
 * preload library (preload.c) and in a linked binary (cunit_main.c): a
 * call of one is a struct leakgate_cunit_call handed to the file's own
 * dispatcher, which runs CUnit's own definition
 * (leakgate_cunit__call_real(), cunit_records.c) under a gate or
 * straight.  CUnit headers: the glue's only.
 */
#ifndef LEAKGATE_CUNIT_CALLS_H
#define LEAKGATE_CUNIT_CALLS_H

#include <CUnit/CUnit.h>

enum leakgate_cunit_call_kind {
    LEAKGATE_CUNIT_CALL_VOID,       /* CU_ErrorCode f(void) */
    LEAKGATE_CUNIT_CALL_VOID_SUITE, /* CU_ErrorCode f(CU_pSuite) */
    LEAKGATE_CUNIT_CALL_VOID_TEST,  /* CU_ErrorCode f(CU_pSuite, CU_pTest) */
    LEAKGATE_CUNIT_CALL_PLAIN       /* void f(void) */
};

struct leakgate_cunit_call {
    const char *name;
    enum leakgate_cunit_call_kind kind;
    CU_pSuite suite;
    CU_pTest test;
    CU_ErrorCode result;
};

/*
 * Call CUnit's own definition of c->name (the next one after the caller's
 * object: dlsym(RTLD_NEXT)), its result in c->result (payload: the call,
 * as leakgate_cunit_run() passes it).  Returns c->result, or -1 when there
 * is none (CUnit linked statically, or loaded before leakgate): the
 * caller says so.
 */
int leakgate_cunit__call_real(void *payload);

/*
 * Define CUnit's seven run functions with attributes ATTR, each handing
 * its call to CU_ErrorCode DISPATCH(struct leakgate_cunit_call *).
 */
#define LEAKGATE_CUNIT_RUN_FUNCTIONS(ATTR, DISPATCH)                           \
    ATTR CU_ErrorCode CU_basic_run_tests(void)                                 \
    {                                                                          \
        struct leakgate_cunit_call c = {"CU_basic_run_tests",                  \
                                        LEAKGATE_CUNIT_CALL_VOID, NULL, NULL,  \
                                        CUE_SUCCESS};                          \
        return DISPATCH(&c);                                                   \
    }                                                                          \
    ATTR CU_ErrorCode CU_basic_run_suite(CU_pSuite suite)                      \
    {                                                                          \
        struct leakgate_cunit_call c = {"CU_basic_run_suite",                  \
                                        LEAKGATE_CUNIT_CALL_VOID_SUITE, suite, \
                                        NULL, CUE_SUCCESS};                    \
        return DISPATCH(&c);                                                   \
    }                                                                          \
    ATTR CU_ErrorCode CU_basic_run_test(CU_pSuite suite, CU_pTest test)        \
    {                                                                          \
        struct leakgate_cunit_call c = {"CU_basic_run_test",                   \
                                        LEAKGATE_CUNIT_CALL_VOID_TEST, suite,  \
                                        test, CUE_SUCCESS};                    \
        return DISPATCH(&c);                                                   \
    }                                                                          \
    ATTR void CU_automated_run_tests(void)                                     \
    {                                                                          \
        struct leakgate_cunit_call c = {"CU_automated_run_tests",              \
                                        LEAKGATE_CUNIT_CALL_PLAIN, NULL, NULL, \
                                        CUE_SUCCESS};                          \
        (void)DISPATCH(&c);                                                    \
    }                                                                          \
    ATTR CU_ErrorCode CU_run_all_tests(void)                                   \
    {                                                                          \
        struct leakgate_cunit_call c = {"CU_run_all_tests",                    \
                                        LEAKGATE_CUNIT_CALL_VOID, NULL, NULL,  \
                                        CUE_SUCCESS};                          \
        return DISPATCH(&c);                                                   \
    }                                                                          \
    ATTR CU_ErrorCode CU_run_suite(CU_pSuite suite)                            \
    {                                                                          \
        struct leakgate_cunit_call c = {"CU_run_suite",                        \
                                        LEAKGATE_CUNIT_CALL_VOID_SUITE, suite, \
                                        NULL, CUE_SUCCESS};                    \
        return DISPATCH(&c);                                                   \
    }                                                                          \
    ATTR CU_ErrorCode CU_run_test(CU_pSuite suite, CU_pTest test)              \
    {                                                                          \
        struct leakgate_cunit_call c = {"CU_run_test",                         \
                                        LEAKGATE_CUNIT_CALL_VOID_TEST, suite,  \
                                        test, CUE_SUCCESS};                    \
        return DISPATCH(&c);                                                   \
    }

#endif
