/* SPDX-License-Identifier: MIT */
/*
 * The integration corpus: CUnit tests with known verdicts, run under the
 * real gate.  Lines marked with a `MARK:name` comment are looked up by
 * tests/integration/CMakeLists.txt, so expectations can name exact
 * file:line without hard-coding numbers.
 */
#ifndef LEAKGATE_CORPUS_H
#define LEAKGATE_CORPUS_H

#include <CUnit/CUnit.h>

/* Keeps leaked pointers reachable so the compiler cannot drop them. */
extern void *volatile corpus_sink[64];

void corpus_register_leaks(void);
void corpus_register_fixtures(void);
void corpus_register_rules(void);
void corpus_register_clean(void);
void corpus_register_real(void);
void corpus_register_once(void);
void corpus_register_held(void);
void corpus_register_peak(void);

/* corpus_runs.c: count each test function's runs in this process (parity
 * checks).  Wrap before the run; 0 on success, -1 without a registry or
 * with too many tests.  Print after it, on stdout. */
int corpus_runs_wrap(void);
void corpus_runs_print(void);

#ifdef __cplusplus
extern "C" {
#endif
/* corpus_cxx.cpp: leaks through C++ new. */
void corpus_cxx_leak(void);
#ifdef __cplusplus
}
#endif

/* corpus_inline.c (built with -O2): leaks through an inlined helper. */
void corpus_inline_caller(void);
/* corpus_shared.c (a shared library): leaks `bytes` bytes. */
void corpus_shared_leak(unsigned int bytes);

#endif
