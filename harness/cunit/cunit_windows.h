/* SPDX-License-Identifier: MIT */
/*
 * cunit_windows: the CUnit glue's trampolines, which run the user's suite
 * init/cleanup, setUp/tearDown and tests inside their windows.
 */
#ifndef LEAKGATE_CUNIT_WINDOWS_H
#define LEAKGATE_CUNIT_WINDOWS_H

#include <CUnit/CUnit.h>

/* Point s's init/cleanup/setUp/tearDown and its tests' functions at the
 * trampolines (the run keeps the user's, cunit_records.h).  Cannot fail. */
void leakgate_cunit__install(CU_pSuite s);

#endif
