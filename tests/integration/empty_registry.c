/* SPDX-License-Identifier: MIT */
/*
 * empty_registry: a linked test binary whose registry holds no test (a
 * main that registers nothing, or registers its tests somewhere the gate
 * never sees).  The gate judges no window: the run measured nothing, and
 * exit 0 would say "measured and within the limits".  It must exit 3.
 */
#include <CUnit/CUnit.h>
#include <leakgate/cunit.h>

int
main(int argc, char **argv)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 3;
    return leakgate_cunit_main(argc, argv);
}
