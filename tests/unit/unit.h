/* SPDX-License-Identifier: MIT */
/*
 * unit: the tiny runner shared by tests/unit/test_<module>.c.  Each file
 * defines `const struct unit_case unit_cases[]` (ended by {NULL, NULL})
 * and `const char *unit_suite`; unit_main.c runs them with CUnit's basic
 * interface and exits non-zero on any failure.
 */
#ifndef LEAKGATE_TESTS_UNIT_H
#define LEAKGATE_TESTS_UNIT_H

#include <CUnit/CUnit.h>

struct unit_case {
    const char *name;
    void (*fn)(void);
};

extern const struct unit_case unit_cases[];
extern const char *const unit_suite;

#endif
