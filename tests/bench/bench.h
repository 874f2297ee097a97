/* SPDX-License-Identifier: MIT */
/*
 * bench: what the three benchmark suites share.  Each suite file defines
 * bench_register(); main_plain.c and main_gated.c run it without and
 * with the gate.  The environment picks the variant, so the plain and
 * the gated binary run the same tests:
 *   BENCH_SIZE=small  small sizes (CI), otherwise the full sizes
 *   BENCH_LEAK=1      also register the suite's one deliberately leaking
 *                     test (its exact report is checked by ci/bench)
 *   BENCH_ACCEPT=1    the accepted-growth variant (suite_realistic.c):
 *                     some tests keep growth that tests/bench/accepted.yaml
 *                     accepts, one starts and joins a thread
 */
#ifndef BENCH_H
#define BENCH_H

#include <CUnit/CUnit.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bench_config {
    bool small;  /* BENCH_SIZE=small */
    bool leak;   /* BENCH_LEAK=1 */
    bool accept; /* BENCH_ACCEPT=1 */
};

void bench_config_read(struct bench_config *out);

/* Register the suite's CUnit suites and tests.  Returns 0 or -1. */
int bench_register(const struct bench_config *cfg);

/* The configuration bench_register() was called with. */
extern struct bench_config bench_cfg;

/* Call fn(payload) `depth` frames further down (each frame is a real,
 * non-inlined call, so allocation stacks are that much deeper). */
void bench_descend(int depth, void (*fn)(void *payload), void *payload);

/* A deterministic pseudo-random sequence (xorshift64*). */
uint64_t bench_rand(uint64_t *state);

/* A test entry of a table registered with bench_add_tests(). */
struct bench_test {
    const char *name;
    CU_TestFunc fn;
};

/* Add a suite with its fixtures and the first n tests of the table.
 * Returns the suite, or NULL. */
CU_pSuite bench_add_suite(const char *name,
                          CU_SetUpFunc setup,
                          CU_TearDownFunc teardown,
                          const struct bench_test *tests,
                          size_t n);

/* Ten, and sixty, expansions of M(n) with n = p0..p9 / 0..59. */
/* clang-format off */
#define BENCH_REP10(M, p) \
    M(p##0) M(p##1) M(p##2) M(p##3) M(p##4) \
    M(p##5) M(p##6) M(p##7) M(p##8) M(p##9)
#define BENCH_REP60(M) \
    BENCH_REP10(M, ) BENCH_REP10(M, 1) BENCH_REP10(M, 2) \
    BENCH_REP10(M, 3) BENCH_REP10(M, 4) BENCH_REP10(M, 5)
/* clang-format on */

#endif
