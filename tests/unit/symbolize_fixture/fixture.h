/* SPDX-License-Identifier: MIT */
/*
 * symbolize fixture: functions whose return addresses the symbolize tests
 * resolve.  fixture.c is compiled with -O2 -g whatever the build type (so
 * that the always_inline helpers really are inlined and have DWARF), into
 * test_symbolize itself and, stripped, into a shared library the test
 * dlopens.  Each function records the return address of one call and the
 * source lines the symbolizer must report for it.
 */
#ifndef LEAKGATE_TESTS_SYMBOLIZE_FIXTURE_H
#define LEAKGATE_TESTS_SYMBOLIZE_FIXTURE_H

#include <stdint.h>

struct lg_fixture_site {
    uintptr_t pc;             /* return address of the recording call */
    unsigned int line;        /* line of the recording call */
    unsigned int inner_call;  /* line where fixture_inner is called */
    unsigned int middle_call; /* line where fixture_middle is called */
};

/* Records a call made directly from lg_fixture_plain. */
void lg_fixture_plain(struct lg_fixture_site *site);

/* Records a call made from fixture_inner, inlined into fixture_middle,
 * inlined into lg_fixture_inlined. */
void lg_fixture_inlined(struct lg_fixture_site *site);

#endif
